/* stage-test-kernels.h — kernels and CUDA helpers for the stage tests and
 * benchmarks, behind C functions so that the tests need no CUDA headers.
 *
 * Chain: `kernels` dependent launches over n floats; the first reads
 * `input`, every later one updates `output` in place (x = x·a_k + b_k).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

  void stage_test_chain (const float *input, float *output, int n, int kernels, void *stream);
  /* The first launch as stage_test_chain's, then kernels - 1 identical launches
   * x = x·0.999 over output, as torch's x.mul_(0.999). */
  void stage_test_chain_uniform (const float *input, float *output, int n, int kernels, int threads,
                                 void *stream);
  /* The same with `threads` per block (stage_test_chain uses 256). */
  void stage_test_chain_threads (const float *input, float *output, int n, int kernels, int threads,
                                 void *stream);
  /* The chain on the CPU, with the device's arithmetic (fmaf). */
  void stage_test_chain_cpu (const float *input, float *output, int n, int kernels);

  /* One long kernel: each of n threads runs `iterations` dependent FMAs. */
  void stage_test_long_kernel (const float *input, float *output, int n, int iterations,
                               void *stream);

  /* output = input + gauss (seed, i): seed is a kernel argument. */
  void stage_test_noise (const float *input, float *output, int n, uint64_t seed, void *stream);

  /* output = convert (input · (1 + scale · ((i % 3) - 1))) to f16 or bf16. */
  void stage_test_to_half (const float *input, void *output, int n, float scale, void *stream);
  void stage_test_to_bfloat (const float *input, void *output, int n, float scale, void *stream);
  void stage_test_scale (const float *input, float *output, int n, float scale, void *stream);

  void *stage_test_alloc (size_t bytes);
  void stage_test_free (void *pointer);
  bool stage_test_upload (void *dst, const void *src, size_t bytes);
  bool stage_test_download (void *dst, const void *src, size_t bytes);
  void *stage_test_stream_new (void);
  void stage_test_stream_free (void *stream);
  /* cudaStreamSynchronize; returns the error code (0 success). */
  int stage_test_stream_synchronize (void *stream);
  int stage_test_last_error (void);

  /* A bare graph of the chain (stream capture, instantiate, upload) in
   * variants, to find what the replay cost depends on. */
  enum
  {
    STAGE_TEST_VARIANT_DEFAULT,     /* thread-local capture, no flags (as stages do) */
    STAGE_TEST_VARIANT_AUTO_FREE,   /* cudaGraphInstantiateFlagAutoFreeOnLaunch */
    STAGE_TEST_VARIANT_PRIORITY,    /* cudaGraphInstantiateFlagUseNodePriority */
    STAGE_TEST_VARIANT_GLOBAL,      /* global capture mode */
    STAGE_TEST_VARIANT_TORCH_LIKE,  /* global mode + auto-free, as torch.cuda.CUDAGraph */
    STAGE_TEST_VARIANT_SAME_KERNEL, /* every node the same kernel function */
    STAGE_TEST_VARIANT_UNIFORM,     /* every node the same kernel and arguments */
    STAGE_TEST_N_VARIANTS,
  };
  void *stage_test_bare_graph_variant (const float *input, float *output, int n, int kernels,
                                       int threads, int variant, void *stream);
  bool stage_test_graph_launch (void *exec, void *stream);
  void stage_test_graph_free (void *exec);

  /* Events: milliseconds between two records on stream. */
  void *stage_test_event_new (void);
  void stage_test_event_free (void *event);
  void stage_test_event_record (void *event, void *stream);
  double stage_test_event_ms (void *start, void *stop);
  /* ms of one block of `launches` launches of exec on stream, gap_us of
   * host spinning between two (events around the block). */
  double stage_test_time_launches (void *exec, void *stream, int launches, double gap_us);

  /* Replay contenders: the varying chain of @kernels kernels (@threads a
   * block) as a graph built, uploaded and launched in one of the ways
   * torch.cuda.CUDAGraph and the C benchmark differ in (names from
   * stage_test_contender_name: bare, auto-free, ..., created-context,
   * offset-00 .. offset-15). NULL with why filled where one cannot be made
   * on this device. time returns milliseconds of a block of @launches
   * launches, negative on an error. */
  typedef struct StageTestContender StageTestContender;
  int stage_test_contender_count (void);
  void stage_test_contender_name (int which, char *out, size_t size);
  StageTestContender *stage_test_contender_new (int which, int kernels, int threads, char *why,
                                                size_t why_size);
  double stage_test_contender_time (StageTestContender *contender, int launches);
  void stage_test_contender_free (StageTestContender *contender);

#ifdef __cplusplus
}
#endif
