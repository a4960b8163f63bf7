/* wick-demo-stage-kernels.cu — the demo denoise loop on the device. See
 * wick-demo-stage-kernels.h. The generator is the twin of wick_demo_gauss()
 * in wick-demo-stage.c. */
#include "wick-demo-stage-kernels.h"

#include <cuda_runtime.h>

namespace
{

__host__ __device__ inline uint64_t
mix (uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Irwin–Hall: the sum of four uniforms, centred and scaled to unit variance. */
__device__ inline float
gauss (uint64_t seed, int step, uint32_t index)
{
  uint64_t bits = mix (seed ^ mix (((uint64_t) (uint32_t) step << 32) | index));
  float sum = 0.0f;
  for (int k = 0; k < 4; k++)
    sum += (float) ((bits >> (16 * k)) & 0xffffu) * (1.0f / 65536.0f);
  return (sum - 2.0f) * 1.7320508f;
}

__global__ void
copy_kernel (const float *from, float *to, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    to[i] = from[i];
}

__global__ void
matmul_kernel (const float *x, const float *weight, float *h, int batch, int dim)
{
  int row = blockIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= batch || col >= dim)
    return;
  float sum = 0.0f;
  for (int k = 0; k < dim; k++)
    sum += x[row * dim + k] * weight[k * dim + col];
  h[row * dim + col] = sum;
}

__global__ void
update_kernel (float *x, const float *h, const float *cond, float rate, uint64_t seed, int step,
               int batch, int dim)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch * dim)
    return;
  float value = x[i] - rate * tanhf (h[i] + cond[i % dim]);
  if (seed != 0)
    value += 0.5f * gauss (seed, step, (uint32_t) i);
  x[i] = value;
}

} // namespace

extern "C" void
wick_demo_denoise_launch (const WickDemoDenoise *d, float *x, uint64_t seed, void *stream)
{
  cudaStream_t s = (cudaStream_t) stream;
  int n = d->batch * d->dim;
  int threads = 128;
  float *h = d->scratch;
  copy_kernel<<<(n + threads - 1) / threads, threads, 0, s>>> (d->noise, x, n);
  dim3 grid ((d->dim + threads - 1) / threads, d->batch);
  for (int step = 0; step < d->steps; step++)
    {
      matmul_kernel<<<grid, threads, 0, s>>> (x, d->weight, h, d->batch, d->dim);
      update_kernel<<<(n + threads - 1) / threads, threads, 0, s>>> (
        x, h, d->cond, wick_demo_denoise_rate (step, d->steps), seed, step, d->batch, d->dim);
    }
}

extern "C" void *
wick_demo_cuda_alloc (size_t bytes)
{
  void *pointer = NULL;
  if (cudaMalloc (&pointer, bytes) != cudaSuccess)
    {
      cudaGetLastError ();
      return NULL;
    }
  return pointer;
}

extern "C" bool
wick_demo_cuda_upload (void *dst, const void *src, size_t bytes)
{
  if (cudaMemcpy (dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    {
      cudaGetLastError ();
      return false;
    }
  return true;
}

extern "C" void
wick_demo_cuda_free (void *pointer)
{
  if (pointer != NULL)
    cudaFree (pointer);
}
