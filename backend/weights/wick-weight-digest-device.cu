/* wick-weight-digest-device.cu — the parameter digest on the GPU
 * (wick-weight-digest-device-private.h). The arithmetic is that of
 * wick-weight-hash.c, lane for lane: a test of the CUDA suite checks that
 * both give the same digest of the same bytes. */
#ifndef WICK_COMPILATION
#define WICK_COMPILATION
#endif
#include "wick-weight-digest-device-private.h"

#include "wick-weight-hash-private.h"

#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace
{

constexpr unsigned long long K1 = 0x9e3779b185ebca87ull;
constexpr unsigned long long K2 = 0xc2b2ae3d27d4eb4full;
constexpr unsigned long long K3 = 0x165667b19e3779f9ull;
constexpr int kThreads = 128; /* 32 chunks a block, 4 lanes each */
constexpr size_t kMaxSlots = size_t (1) << 20;

__device__ __forceinline__ unsigned long long
rotl (unsigned long long x, unsigned r)
{
  return (x << r) | (x >> (64 - r));
}

__device__ __forceinline__ unsigned long long
lane_step (unsigned long long acc, unsigned long long word)
{
  return rotl (acc + word * K2, 31) * K1;
}

__device__ __forceinline__ unsigned long long
avalanche (unsigned long long h)
{
  h ^= h >> 33;
  h *= K2;
  h ^= h >> 29;
  h *= K3;
  h ^= h >> 32;
  return h;
}

/* Little-endian 8 bytes at any alignment (as memcpy on the host). */
__device__ __forceinline__ unsigned long long
load_bytes (const unsigned char *p)
{
  unsigned long long v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* Words of a lane loaded ahead of the chain that consumes them: the chain is
 * serial (a 64-bit multiply-rotate a word), so the loads of the next group
 * are issued before the current group is hashed. A disk restore hashes each
 * 8 MiB slot in a kernel of its own (128 chunks, 512 threads, 4 blocks):
 * with the loads only 8 ahead its lanes waited on memory most of the time
 * (a slot took longer to hash than to copy). */
constexpr int kAhead = 32;

/* Four threads a chunk: thread `lane` runs lane `lane` of wick_weight_hash
 * over the chunk's whole 32-byte blocks; lane 0 then folds the four, the
 * tail and the length; the chunks' parts of a warp are summed there and
 * added to the digest with one atomic a warp. */
__global__ void
digest_kernel (const unsigned char *data, unsigned long long bytes, unsigned long long n_chunks,
               unsigned long long first_chunk, bool aligned, unsigned long long *slot)
{
  unsigned long long t = (unsigned long long) blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long chunk = t >> 2;
  unsigned lane = (unsigned) (t & 3);
  bool active = chunk < n_chunks;
  unsigned long long start = active ? chunk * WICK_WEIGHT_HASH_CHUNK : 0;
  unsigned long long n = active ? (bytes - start < WICK_WEIGHT_HASH_CHUNK
                                     ? bytes - start
                                     : (unsigned long long) WICK_WEIGHT_HASH_CHUNK)
                                : 0;
  unsigned long long whole = n / 32 * 32;
  /* wick_weight_hash_begin with seed 0 */
  unsigned long long acc = lane == 0 ? K1 + K2 : lane == 1 ? K2 : lane == 2 ? 0ull : 0ull - K1;
  const unsigned char *p = data + start + lane * 8;
  if (aligned)
    {
      const unsigned long long *w = (const unsigned long long *) p;
      unsigned long long steps = whole / 32;
      unsigned long long groups = steps / kAhead;
      unsigned long long next[kAhead];
      if (groups > 0)
        {
#pragma unroll
          for (int k = 0; k < kAhead; k++)
            next[k] = __ldg (w + k * 4);
        }
      for (unsigned long long g = 0; g < groups; g++)
        {
          unsigned long long now[kAhead];
#pragma unroll
          for (int k = 0; k < kAhead; k++)
            now[k] = next[k];
          if (g + 1 < groups)
            {
              const unsigned long long *q = w + (g + 1) * kAhead * 4;
#pragma unroll
              for (int k = 0; k < kAhead; k++)
                next[k] = __ldg (q + k * 4);
            }
#pragma unroll
          for (int k = 0; k < kAhead; k++)
            acc = lane_step (acc, now[k]);
        }
      for (unsigned long long i = groups * kAhead; i < steps; i++)
        acc = lane_step (acc, __ldg (w + i * 4));
    }
  else
    for (unsigned long long i = 0; i < whole; i += 32)
      acc = lane_step (acc, load_bytes (p + i));
  /* the chunk's four lanes are four neighbouring threads of one warp */
  unsigned base = threadIdx.x & ~3u & 31u;
  unsigned long long a = __shfl_sync (0xffffffffu, acc, base + 0);
  unsigned long long b = __shfl_sync (0xffffffffu, acc, base + 1);
  unsigned long long c = __shfl_sync (0xffffffffu, acc, base + 2);
  unsigned long long d = __shfl_sync (0xffffffffu, acc, base + 3);
  unsigned long long part = 0;
  if (active && lane == 0)
    {
      unsigned long long h = rotl (a, 1) + rotl (b, 7) + rotl (c, 12) + rotl (d, 18) + n;
      const unsigned char *tail = data + start + whole;
      unsigned long long tail_bytes = n - whole, i = 0;
      for (; i + 8 <= tail_bytes; i += 8)
        h = rotl (h ^ lane_step (0, load_bytes (tail + i)), 27) * K1 + K3;
      for (; i < tail_bytes; i++)
        h = rotl (h ^ (tail[i] * K3), 11) * K1;
      unsigned long long hash = avalanche (h);
      part = avalanche (hash ^ ((first_chunk + chunk) * K3 + K2));
    }
  /* every thread of the warp is here (none returned): sum the parts */
  for (int offset = 16; offset > 0; offset /= 2)
    part += __shfl_down_sync (0xffffffffu, part, offset);
  if ((threadIdx.x & 31u) == 0 && part != 0)
    atomicAdd (slot, part);
}

bool
fail (WickError *error, WickErrorCode code, const char *format, ...)
{
  if (error != NULL)
    {
      va_list args;
      va_start (args, format);
      vsnprintf (error->message, sizeof error->message, format, args);
      va_end (args);
      error->code = code;
    }
  return false;
}

bool
check (cudaError_t err, const char *what, WickError *error)
{
  if (err == cudaSuccess)
    return true;
  return fail (error, WICK_ERROR_FAILED, "GPU digest: %s failed: %s (%s)", what,
               cudaGetErrorString (err), cudaGetErrorName (err));
}

} // namespace

struct WickDeviceDigests
{
  int device; /* whose stream */
  cudaStream_t stream;
  unsigned long long *slots; /* device, capacity entries, zeroed */
  size_t capacity;
  size_t used; /* the highest slot queued + 1 */
};

extern "C" bool
wick_device_digests_enabled (void)
{
  const char *gpu = getenv ("WICK_WEIGHT_GPU_DIGESTS");
  return gpu == NULL || strcmp (gpu, "0") != 0;
}

extern "C" WickDeviceDigests *
wick_device_digests_new (WickError *error)
{
  WickDeviceDigests *digests = (WickDeviceDigests *) calloc (1, sizeof *digests);
  if (digests == NULL)
    {
      fail (error, WICK_ERROR_NO_MEMORY, "GPU digest: out of memory");
      return NULL;
    }
  if (!check (cudaGetDevice (&digests->device), "cudaGetDevice", error)
      || !check (cudaStreamCreateWithFlags (&digests->stream, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags", error))
    {
      free (digests);
      return NULL;
    }
  return digests;
}

extern "C" void
wick_device_digests_free (WickDeviceDigests *digests)
{
  if (digests == NULL)
    return;
  cudaStreamSynchronize (digests->stream);
  if (digests->slots != NULL)
    cudaFreeAsync (digests->slots, digests->stream);
  cudaStreamSynchronize (digests->stream);
  cudaStreamDestroy (digests->stream);
  free (digests);
}

/* Slots for @need entries, stream-ordered: a larger array takes the old
 * one's sums before the kernels queued after it run. */
static bool
reserve_slots (WickDeviceDigests *digests, size_t need, WickError *error)
{
  if (need <= digests->capacity)
    return true;
  size_t capacity = digests->capacity ? digests->capacity : 256;
  while (capacity < need)
    capacity *= 2;
  unsigned long long *grown = NULL;
  cudaStream_t s = digests->stream;
  if (!check (cudaMallocAsync ((void **) &grown, capacity * sizeof *grown, s), "cudaMallocAsync",
              error)
      || !check (cudaMemsetAsync (grown, 0, capacity * sizeof *grown, s), "cudaMemsetAsync",
                 error))
    return false;
  if (digests->slots != NULL)
    {
      if (!check (cudaMemcpyAsync (grown, digests->slots, digests->capacity * sizeof *grown,
                                   cudaMemcpyDeviceToDevice, s),
                  "cudaMemcpyAsync", error))
        return false;
      cudaFreeAsync (digests->slots, s);
    }
  digests->slots = grown;
  digests->capacity = capacity;
  return true;
}

extern "C" bool
wick_device_digests_queue (WickDeviceDigests *digests, size_t slot, const void *data,
                           uint64_t bytes, uint64_t first_chunk, void *after_event,
                           WickError *error)
{
  if (slot >= kMaxSlots)
    return fail (error, WICK_ERROR_NO_SPACE, "GPU digest: more than %zu digests at once",
                 kMaxSlots);
  if (!reserve_slots (digests, slot + 1, error))
    return false;
  if (slot + 1 > digests->used)
    digests->used = slot + 1;
  if (bytes == 0)
    return true;
  if (after_event != NULL
      && !check (cudaStreamWaitEvent (digests->stream, (cudaEvent_t) after_event, 0),
                 "cudaStreamWaitEvent", error))
    return false;
  unsigned long long n_chunks = (bytes + WICK_WEIGHT_HASH_CHUNK - 1) / WICK_WEIGHT_HASH_CHUNK;
  unsigned long long threads = n_chunks * 4;
  unsigned long long blocks = (threads + kThreads - 1) / kThreads;
  bool aligned = ((uintptr_t) data & 7u) == 0;
  digest_kernel<<<(unsigned) blocks, kThreads, 0, digests->stream>>> (
    (const unsigned char *) data, bytes, n_chunks, first_chunk, aligned, digests->slots + slot);
  return check (cudaGetLastError (), "the digest kernel's launch", error);
}

extern "C" bool
wick_device_digests_reset (WickDeviceDigests *digests, WickError *error)
{
  digests->used = 0;
  if (digests->slots == NULL)
    return true;
  return check (cudaMemsetAsync (digests->slots, 0, digests->capacity * sizeof *digests->slots,
                                 digests->stream),
                "cudaMemsetAsync (digest slots)", error);
}

extern "C" bool
wick_device_digests_fence (WickDeviceDigests *digests, void *event, WickError *error)
{
  return check (cudaEventRecord ((cudaEvent_t)event, digests->stream), "cudaEventRecord", error);
}

extern "C" bool
wick_device_digests_wait (WickDeviceDigests *digests, uint64_t *out, size_t n, WickError *error)
{
  if (n > digests->used)
    return fail (error, WICK_ERROR_INVALID_ARGUMENT, "GPU digest: %zu slots asked, %zu queued", n,
                 digests->used);
  if (n > 0
      && !check (cudaMemcpyAsync (out, digests->slots, n * sizeof *out, cudaMemcpyDeviceToHost,
                                  digests->stream),
                 "cudaMemcpyAsync (digests)", error))
    return false;
  return check (cudaStreamSynchronize (digests->stream), "the digest kernels", error);
}
