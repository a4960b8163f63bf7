/* wick-demo-stage-kernels.h — the demo stage's computation, a denoise loop
 * of small dependent kernels, on the device (wick-demo-stage-kernels.cu) and
 * on the CPU (wick-demo-stage.c, the eager path where no GPU exists).
 *
 *   x = noise
 *   for s in 0 .. steps-1:
 *     h = x · weight                      (batch × dim by dim × dim matmul)
 *     x = x - rate_s · tanh (h + cond)    (+ 0.5 · gauss (seed, s, i) when seed != 0)
 *
 * 1 + 2·steps kernels. With seed != 0 the loop draws fresh noise from a
 * counter-based generator keyed by a host counter: eager calls see a new
 * seed each time, a graph replays the one frozen at capture. That is the
 * graph-unsafe variant the parity gate must refuse.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

  typedef struct
  {
    const float *noise;  /* window [batch, dim] */
    const float *cond;   /* window [dim] */
    const float *weight; /* [dim, dim] */
    float *scratch;      /* [batch, dim]: h */
    int batch, dim, steps;
  } WickDemoDenoise;

  /* The step rate of step s of `steps`. */
  float wick_demo_denoise_rate (int step, int steps);

  /* Device side; absent from builds without CUDA. */
  void wick_demo_denoise_launch (const WickDemoDenoise *d, float *x, uint64_t seed, void *stream);
  void *wick_demo_cuda_alloc (size_t bytes);
  bool wick_demo_cuda_upload (void *dst, const void *src, size_t bytes);
  void wick_demo_cuda_free (void *pointer);

#ifdef __cplusplus
}
#endif
