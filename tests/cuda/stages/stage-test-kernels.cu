/* stage-test-kernels.cu — see stage-test-kernels.h. */
#include "stage-test-kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <time.h>

namespace
{

constexpr int kThreads = 256;

int
blocks_for (int n)
{
  return (n + kThreads - 1) / kThreads;
}

__host__ __device__ inline float
chain_a (int k)
{
  return 0.999f - 0.0001f * (float) (k % 5);
}

__host__ __device__ inline float
chain_b (int k)
{
  return 0.001f * (float) (k % 7);
}

__global__ void
chain_first (const float *input, float *output, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = fmaf (input[i], chain_a (0), chain_b (0));
}

__global__ void
chain_next (float *output, int n, float a, float b)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = fmaf (output[i], a, b);
}

__global__ void
long_kernel (const float *input, float *output, int n, int iterations)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = input[i];
  for (int k = 0; k < iterations; k++)
    x = fmaf (x, 0.9999f, 0.0001f);
  output[i] = x;
}

__device__ inline uint64_t
mix (uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void
noise_kernel (const float *input, float *output, int n, uint64_t seed)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uint64_t bits = mix (seed ^ mix ((uint64_t) i));
  output[i] = input[i] + ((float) (bits & 0xffffff) / 16777216.0f - 0.5f) * 3.4641016f;
}

__device__ inline float
perturbed (const float *input, int i, float scale)
{
  return input[i] * (1.0f + scale * (float) ((i % 3) - 1));
}

__global__ void
to_half_kernel (const float *input, __half *output, int n, float scale)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = __float2half_rn (perturbed (input, i, scale));
}

__global__ void
to_bfloat_kernel (const float *input, __nv_bfloat16 *output, int n, float scale)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = __float2bfloat16_rn (perturbed (input, i, scale));
}

__global__ void
scale_kernel (const float *input, float *output, int n, float scale)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = perturbed (input, i, scale);
}

} // namespace

extern "C" void
stage_test_chain_threads (const float *input, float *output, int n, int kernels, int threads,
                          void *stream)
{
  cudaStream_t s = (cudaStream_t) stream;
  int blocks = (n + threads - 1) / threads;
  chain_first<<<blocks, threads, 0, s>>> (input, output, n);
  for (int k = 1; k < kernels; k++)
    chain_next<<<blocks, threads, 0, s>>> (output, n, chain_a (k), chain_b (k));
}

extern "C" void
stage_test_chain_uniform (const float *input, float *output, int n, int kernels, int threads,
                          void *stream)
{
  cudaStream_t s = (cudaStream_t) stream;
  int blocks = (n + threads - 1) / threads;
  chain_first<<<blocks, threads, 0, s>>> (input, output, n);
  for (int k = 1; k < kernels; k++)
    chain_next<<<blocks, threads, 0, s>>> (output, n, 0.999f, 0.0f);
}

extern "C" void
stage_test_chain (const float *input, float *output, int n, int kernels, void *stream)
{
  stage_test_chain_threads (input, output, n, kernels, kThreads, stream);
}

extern "C" void
stage_test_chain_cpu (const float *input, float *output, int n, int kernels)
{
  for (int i = 0; i < n; i++)
    {
      float x = fmaf (input[i], chain_a (0), chain_b (0));
      for (int k = 1; k < kernels; k++)
        x = fmaf (x, chain_a (k), chain_b (k));
      output[i] = x;
    }
}

extern "C" void
stage_test_long_kernel (const float *input, float *output, int n, int iterations, void *stream)
{
  long_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (input, output, n,
                                                                       iterations);
}

extern "C" void
stage_test_noise (const float *input, float *output, int n, uint64_t seed, void *stream)
{
  noise_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (input, output, n, seed);
}

extern "C" void
stage_test_to_half (const float *input, void *output, int n, float scale, void *stream)
{
  to_half_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (
    input, (__half *) output, n, scale);
}

extern "C" void
stage_test_to_bfloat (const float *input, void *output, int n, float scale, void *stream)
{
  to_bfloat_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (
    input, (__nv_bfloat16 *) output, n, scale);
}

extern "C" void
stage_test_scale (const float *input, float *output, int n, float scale, void *stream)
{
  scale_kernel<<<blocks_for (n), kThreads, 0, (cudaStream_t) stream>>> (input, output, n, scale);
}

extern "C" void *
stage_test_alloc (size_t bytes)
{
  void *pointer = NULL;
  return cudaMalloc (&pointer, bytes) == cudaSuccess ? pointer : NULL;
}

extern "C" void
stage_test_free (void *pointer)
{
  cudaFree (pointer);
}

extern "C" bool
stage_test_upload (void *dst, const void *src, size_t bytes)
{
  return cudaMemcpy (dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
}

extern "C" bool
stage_test_download (void *dst, const void *src, size_t bytes)
{
  return cudaMemcpy (dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
}

extern "C" void *
stage_test_stream_new (void)
{
  cudaStream_t stream = NULL;
  cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking);
  return stream;
}

extern "C" void
stage_test_stream_free (void *stream)
{
  cudaStreamDestroy ((cudaStream_t) stream);
}

extern "C" int
stage_test_stream_synchronize (void *stream)
{
  return (int) cudaStreamSynchronize ((cudaStream_t) stream);
}

extern "C" int
stage_test_last_error (void)
{
  return (int) cudaGetLastError ();
}

extern "C" void *
stage_test_bare_graph_variant (const float *input, float *output, int n, int kernels,
                               int threads, int variant, void *stream)
{
  cudaStream_t s = (cudaStream_t) stream;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  bool global = variant == STAGE_TEST_VARIANT_GLOBAL || variant == STAGE_TEST_VARIANT_TORCH_LIKE;
  unsigned long long flags = 0;
  if (variant == STAGE_TEST_VARIANT_AUTO_FREE || variant == STAGE_TEST_VARIANT_TORCH_LIKE)
    flags = cudaGraphInstantiateFlagAutoFreeOnLaunch;
  else if (variant == STAGE_TEST_VARIANT_PRIORITY)
    flags = cudaGraphInstantiateFlagUseNodePriority;
  if (cudaStreamBeginCapture (s, global ? cudaStreamCaptureModeGlobal
                                        : cudaStreamCaptureModeThreadLocal)
      != cudaSuccess)
    return NULL;
  if (variant == STAGE_TEST_VARIANT_UNIFORM)
    stage_test_chain_uniform (input, output, n, kernels, threads, stream);
  else if (variant == STAGE_TEST_VARIANT_SAME_KERNEL)
    for (int k = 0; k < kernels; k++)
      chain_next<<<(n + threads - 1) / threads, threads, 0, s>>> (output, n, chain_a (k),
                                                                  chain_b (k));
  else
    stage_test_chain_threads (input, output, n, kernels, threads, stream);
  if (cudaStreamEndCapture (s, &graph) != cudaSuccess)
    return NULL;
  cudaError_t err = cudaGraphInstantiateWithFlags (&exec, graph, flags);
  cudaGraphDestroy (graph);
  if (err != cudaSuccess)
    return NULL;
  cudaGraphUpload (exec, s);
  return exec;
}

extern "C" bool
stage_test_graph_launch (void *exec, void *stream)
{
  return cudaGraphLaunch ((cudaGraphExec_t) exec, (cudaStream_t) stream) == cudaSuccess;
}

extern "C" void
stage_test_graph_free (void *exec)
{
  cudaGraphExecDestroy ((cudaGraphExec_t) exec);
}

extern "C" void *
stage_test_event_new (void)
{
  cudaEvent_t event = NULL;
  cudaEventCreate (&event);
  return event;
}

extern "C" void
stage_test_event_free (void *event)
{
  cudaEventDestroy ((cudaEvent_t) event);
}

extern "C" void
stage_test_event_record (void *event, void *stream)
{
  cudaEventRecord ((cudaEvent_t) event, (cudaStream_t) stream);
}

extern "C" double
stage_test_event_ms (void *start, void *stop)
{
  float ms = 0.0f;
  cudaEventSynchronize ((cudaEvent_t) stop);
  cudaEventElapsedTime (&ms, (cudaEvent_t) start, (cudaEvent_t) stop);
  return (double) ms;
}

/* One timed block of `launches` launches of @exec on @stream, `gap_us`
 * microseconds of host spinning between two launches: the same loop from a
 * C process and from a torch process (bench-graph-probe.py calls it through
 * ctypes), to tell whether the replay's cost a kernel follows the process or
 * how fast the host submits. Milliseconds, from events. */
extern "C" double
stage_test_time_launches (void *exec, void *stream, int launches, double gap_us)
{
  cudaStream_t s = (cudaStream_t) stream;
  cudaEvent_t start, stop;
  cudaEventCreate (&start);
  cudaEventCreate (&stop);
  cudaEventRecord (start, s);
  for (int i = 0; i < launches; i++)
    {
      if (i > 0 && gap_us > 0)
        {
          struct timespec a, b;
          clock_gettime (CLOCK_MONOTONIC, &a);
          do
            clock_gettime (CLOCK_MONOTONIC, &b);
          while ((double) (b.tv_sec - a.tv_sec) * 1e6 + (double) (b.tv_nsec - a.tv_nsec) / 1e3
                 < gap_us);
        }
      cudaGraphLaunch ((cudaGraphExec_t) exec, s);
    }
  cudaEventRecord (stop, s);
  float ms = 0.0f;
  cudaEventSynchronize (stop);
  cudaEventElapsedTime (&ms, start, stop);
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return (double) ms;
}
