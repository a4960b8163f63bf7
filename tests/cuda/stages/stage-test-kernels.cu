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

/* ---- replay contenders (bench-stage-replay's CONTENDER lines) -------------
 * The same varying chain as the bare graph, its graph built, uploaded and
 * launched in the ways torch.cuda.CUDAGraph and the C benchmark differ in:
 * aten/src/ATen/cuda/CUDAGraph.cpp captures in global mode on a pool stream
 * (non-blocking, priority 0), instantiates with AutoFreeOnLaunch |
 * UseNodePriority, does not upload, and replays on the current stream (the
 * legacy default stream unless one was set). */

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace
{

enum Contender
{
  C_BARE,            /* as stage_test_bare_graph_variant's default */
  C_AUTO_FREE,       /* + cudaGraphInstantiateFlagAutoFreeOnLaunch */
  C_NODE_PRIORITY,   /* + cudaGraphInstantiateFlagUseNodePriority */
  C_TORCH_FLAGS,     /* both, as torch instantiates */
  C_NO_UPLOAD,       /* no cudaGraphUpload before the first launch */
  C_OTHER_STREAM,    /* captured on one stream, launched on another (as stages do) */
  C_BLOCKING,        /* launched on a blocking stream (cudaStreamCreate) */
  C_LEGACY,          /* launched on the legacy default stream */
  C_PER_THREAD,      /* launched on cudaStreamPerThread */
  C_HIGH_PRIORITY,   /* launched on a non-blocking stream of the highest priority */
  C_TORCH_LIKE,      /* all of torch's: global capture on a priority-0 non-blocking
                      * stream, torch's flags, no upload, launched on the legacy stream */
  C_SCHED_SPIN,      /* the context's CU_CTX_SCHED_SPIN while timed (cuCtxSetFlags) */
  C_SCHED_YIELD,     /* CU_CTX_SCHED_YIELD */
  C_SCHED_BLOCKING,  /* CU_CTX_SCHED_BLOCKING_SYNC */
  C_WALL_SYNC,       /* timed by the host clock to a cudaStreamSynchronize, not events */
  C_SYNC_EACH,       /* host clock, a cudaStreamSynchronize after every launch */
  C_CREATED_CONTEXT, /* everything in a context of its own (cuCtxCreate), not the primary */
  C_OFFSET_FIRST,    /* the bare graph with its buffers at 16 places in one 64 MiB
                      * allocation (k x (2 MiB + 4 KiB + 256 B)): whether the cost
                      * a kernel follows where its 512 bytes lie */
  C_COUNT = C_OFFSET_FIRST + 16,
};

const char *const kNames[C_OFFSET_FIRST] = {
  "bare",         "auto-free",       "node-priority", "torch-flags",       "no-upload",
  "other-stream", "blocking-stream", "legacy-stream", "per-thread-stream", "high-priority",
  "torch-like",   "sched-spin",      "sched-yield",   "sched-blocking",    "wall-sync",
  "sync-each",    "created-context",
};

typedef CUresult (*CtxCreateFn) (CUcontext *, unsigned int, CUdevice);
typedef CUresult (*CtxPushFn) (CUcontext);
typedef CUresult (*CtxPopFn) (CUcontext *);
typedef CUresult (*CtxDestroyFn) (CUcontext);
typedef CUresult (*CtxFlagsFn) (unsigned int *);
typedef CUresult (*CtxSetFlagsFn) (unsigned int);

struct Driver
{
  CtxCreateFn create;
  CtxPushFn push;
  CtxPopFn pop;
  CtxDestroyFn destroy;
  CtxFlagsFn get_flags;
  CtxSetFlagsFn set_flags;
};

void *
entry (const char *name, int version)
{
  void *fn = NULL;
  cudaDriverEntryPointQueryResult status;
  if (cudaGetDriverEntryPointByVersion (name, &fn, version, cudaEnableDefault, &status)
        != cudaSuccess
      || status != cudaDriverEntryPointSuccess)
    return NULL;
  return fn;
}

const Driver *
driver (void)
{
  static Driver d;
  static bool loaded = false;
  if (!loaded)
    {
      d.create = (CtxCreateFn)entry ("cuCtxCreate", 12000);
      d.push = (CtxPushFn)entry ("cuCtxPushCurrent", 12000);
      d.pop = (CtxPopFn)entry ("cuCtxPopCurrent", 12000);
      d.destroy = (CtxDestroyFn)entry ("cuCtxDestroy", 12000);
      d.get_flags = (CtxFlagsFn)entry ("cuCtxGetFlags", 12010);
      d.set_flags = (CtxSetFlagsFn)entry ("cuCtxSetFlags", 12010);
      loaded = true;
    }
  return &d;
}

unsigned char *offset_pool; /* 64 MiB, for the offset contenders */

} // namespace

struct StageTestContender
{
  int which;
  int kernels;
  float *input, *output;
  bool own_buffers;
  cudaStream_t capture, launch;
  bool own_launch;
  cudaGraphExec_t exec;
  cudaEvent_t start, stop;
  CUcontext context; /* C_CREATED_CONTEXT: pushed while it works */
};

extern "C" int
stage_test_contender_count (void)
{
  return C_COUNT;
}

extern "C" void
stage_test_contender_name (int which, char *out, size_t size)
{
  if (which < C_OFFSET_FIRST)
    snprintf (out, size, "%s", kNames[which]);
  else
    snprintf (out, size, "offset-%02d", which - C_OFFSET_FIRST);
}

static bool
contender_fail (char *why, size_t size, const char *what, cudaError_t err)
{
  snprintf (why, size, "%s: %s", what, cudaGetErrorString (err));
  cudaGetLastError ();
  return false;
}

extern "C" void stage_test_contender_free (StageTestContender *c);

extern "C" StageTestContender *
stage_test_contender_new (int which, int kernels, int threads, char *why, size_t why_size)
{
  StageTestContender *c = (StageTestContender *)calloc (1, sizeof *c);
  c->which = which;
  c->kernels = kernels;
  const Driver *d = driver ();
  if (which == C_CREATED_CONTEXT)
    {
      int device = 0;
      cudaGetDevice (&device);
      if (d->create == NULL || d->push == NULL || d->pop == NULL || d->destroy == NULL
          || d->create (&c->context, 0, (CUdevice)device) != CUDA_SUCCESS)
        {
          snprintf (why, why_size, "cuCtxCreate failed or is missing");
          free (c);
          return NULL;
        }
      /* cuCtxCreate made it current: the runtime works in it until popped */
    }
  if ((which == C_SCHED_SPIN || which == C_SCHED_YIELD || which == C_SCHED_BLOCKING)
      && (d->get_flags == NULL || d->set_flags == NULL))
    {
      snprintf (why, why_size, "cuCtxSetFlags is missing (a driver before CUDA 12.1)");
      free (c);
      return NULL;
    }
  cudaError_t err;
  bool ok = true;
  size_t bytes = (size_t)128 * sizeof (float);
  if (which >= C_OFFSET_FIRST)
    {
      if (offset_pool == NULL
          && (err = cudaMalloc ((void **)&offset_pool, (size_t)64 << 20)) != cudaSuccess)
        ok = contender_fail (why, why_size, "cudaMalloc (pool)", err);
      size_t k = (size_t)(which - C_OFFSET_FIRST);
      size_t at = k * (((size_t)2 << 20) + 4096 + 256);
      if (ok)
        {
          c->input = (float *)(offset_pool + at);
          c->output = (float *)(offset_pool + at + 1024);
        }
    }
  else
    {
      c->own_buffers = true;
      if ((err = cudaMalloc ((void **)&c->input, bytes)) != cudaSuccess
          || (err = cudaMalloc ((void **)&c->output, bytes)) != cudaSuccess)
        ok = contender_fail (why, why_size, "cudaMalloc", err);
    }
  float host[128];
  for (int i = 0; i < 128; i++)
    host[i] = sinf ((float)i);
  if (ok && (err = cudaMemcpy (c->input, host, sizeof host, cudaMemcpyHostToDevice)) != cudaSuccess)
    ok = contender_fail (why, why_size, "cudaMemcpy", err);
  if (ok)
    {
      if (which == C_TORCH_LIKE)
        err = cudaStreamCreateWithPriority (&c->capture, cudaStreamNonBlocking, 0);
      else
        err = cudaStreamCreateWithFlags (&c->capture, cudaStreamNonBlocking);
      if (err != cudaSuccess)
        ok = contender_fail (why, why_size, "cudaStreamCreate", err);
    }
  c->launch = c->capture;
  if (ok)
    {
      int least = 0, greatest = 0;
      err = cudaSuccess;
      switch (which)
        {
          case C_OTHER_STREAM:
            err = cudaStreamCreateWithFlags (&c->launch, cudaStreamNonBlocking);
            c->own_launch = true;
            break;
          case C_BLOCKING:
            err = cudaStreamCreate (&c->launch);
            c->own_launch = true;
            break;
          case C_LEGACY:
          case C_TORCH_LIKE:
            c->launch = cudaStreamLegacy;
            break;
          case C_PER_THREAD:
            c->launch = cudaStreamPerThread;
            break;
          case C_HIGH_PRIORITY:
            cudaDeviceGetStreamPriorityRange (&least, &greatest);
            err = cudaStreamCreateWithPriority (&c->launch, cudaStreamNonBlocking, greatest);
            c->own_launch = true;
            break;
          default:
            break;
        }
      if (err != cudaSuccess)
        ok = contender_fail (why, why_size, "the launch stream", err);
    }
  cudaGraph_t graph = NULL;
  bool global = which == C_TORCH_LIKE;
  if (ok
      && (err = cudaStreamBeginCapture (c->capture, global ? cudaStreamCaptureModeGlobal
                                                           : cudaStreamCaptureModeThreadLocal))
           != cudaSuccess)
    ok = contender_fail (why, why_size, "cudaStreamBeginCapture", err);
  if (ok)
    {
      stage_test_chain_threads (c->input, c->output, 128, kernels, threads, c->capture);
      if ((err = cudaStreamEndCapture (c->capture, &graph)) != cudaSuccess)
        ok = contender_fail (why, why_size, "cudaStreamEndCapture", err);
    }
  unsigned long long flags = 0;
  if (which == C_AUTO_FREE || which == C_TORCH_FLAGS || which == C_TORCH_LIKE)
    flags |= cudaGraphInstantiateFlagAutoFreeOnLaunch;
  if (which == C_NODE_PRIORITY || which == C_TORCH_FLAGS || which == C_TORCH_LIKE)
    flags |= cudaGraphInstantiateFlagUseNodePriority;
  if (ok && (err = cudaGraphInstantiateWithFlags (&c->exec, graph, flags)) != cudaSuccess)
    ok = contender_fail (why, why_size, "cudaGraphInstantiateWithFlags", err);
  if (graph != NULL)
    cudaGraphDestroy (graph);
  bool upload = which != C_NO_UPLOAD && which != C_TORCH_LIKE;
  if (ok && upload && (err = cudaGraphUpload (c->exec, c->capture)) != cudaSuccess)
    ok = contender_fail (why, why_size, "cudaGraphUpload", err);
  if (ok
      && ((err = cudaEventCreate (&c->start)) != cudaSuccess
          || (err = cudaEventCreate (&c->stop)) != cudaSuccess))
    ok = contender_fail (why, why_size, "cudaEventCreate", err);
  if (ok && (err = cudaDeviceSynchronize ()) != cudaSuccess)
    ok = contender_fail (why, why_size, "cudaDeviceSynchronize", err);
  if (c->context != NULL)
    {
      CUcontext popped;
      d->pop (&popped);
    }
  if (!ok)
    {
      stage_test_contender_free (c);
      return NULL;
    }
  return c;
}

static double
host_ms (const struct timespec *a, const struct timespec *b)
{
  return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Milliseconds of one block of @launches launches (negative on an error). */
extern "C" double
stage_test_contender_time (StageTestContender *c, int launches)
{
  const Driver *d = driver ();
  if (c->context != NULL)
    d->push (c->context);
  unsigned int saved = 0;
  bool sched
    = c->which == C_SCHED_SPIN || c->which == C_SCHED_YIELD || c->which == C_SCHED_BLOCKING;
  if (sched)
    {
      d->get_flags (&saved);
      unsigned int mode = c->which == C_SCHED_SPIN    ? CU_CTX_SCHED_SPIN
                          : c->which == C_SCHED_YIELD ? CU_CTX_SCHED_YIELD
                                                      : CU_CTX_SCHED_BLOCKING_SYNC;
      if (d->set_flags ((saved & ~(unsigned int)CU_CTX_SCHED_MASK) | mode) != CUDA_SUCCESS)
        {
          if (c->context != NULL)
            {
              CUcontext popped;
              d->pop (&popped);
            }
          return -1.0; /* reported as failed: the flags were not changed */
        }
    }
  double ms = -1.0;
  bool ok = true;
  if (c->which == C_WALL_SYNC || c->which == C_SYNC_EACH)
    {
      struct timespec a, b;
      ok = cudaStreamSynchronize (c->launch) == cudaSuccess;
      clock_gettime (CLOCK_MONOTONIC, &a);
      for (int i = 0; ok && i < launches; i++)
        {
          ok = cudaGraphLaunch (c->exec, c->launch) == cudaSuccess;
          if (ok && c->which == C_SYNC_EACH)
            ok = cudaStreamSynchronize (c->launch) == cudaSuccess;
        }
      ok = ok && cudaStreamSynchronize (c->launch) == cudaSuccess;
      clock_gettime (CLOCK_MONOTONIC, &b);
      if (ok)
        ms = host_ms (&a, &b);
    }
  else
    {
      ok = cudaEventRecord (c->start, c->launch) == cudaSuccess;
      for (int i = 0; ok && i < launches; i++)
        ok = cudaGraphLaunch (c->exec, c->launch) == cudaSuccess;
      float elapsed = 0.0f;
      ok = ok && cudaEventRecord (c->stop, c->launch) == cudaSuccess
           && cudaEventSynchronize (c->stop) == cudaSuccess
           && cudaEventElapsedTime (&elapsed, c->start, c->stop) == cudaSuccess;
      if (ok)
        ms = (double)elapsed;
    }
  if (!ok)
    cudaGetLastError ();
  if (sched)
    d->set_flags (saved);
  if (c->context != NULL)
    {
      CUcontext popped;
      d->pop (&popped);
    }
  return ms;
}

extern "C" void
stage_test_contender_free (StageTestContender *c)
{
  if (c == NULL)
    return;
  const Driver *d = driver ();
  if (c->context != NULL)
    d->push (c->context);
  if (c->exec != NULL)
    cudaGraphExecDestroy (c->exec);
  if (c->start != NULL)
    cudaEventDestroy (c->start);
  if (c->stop != NULL)
    cudaEventDestroy (c->stop);
  if (c->own_launch)
    cudaStreamDestroy (c->launch);
  if (c->capture != NULL)
    cudaStreamDestroy (c->capture);
  if (c->own_buffers)
    {
      cudaFree (c->input);
      cudaFree (c->output);
    }
  if (c->context != NULL)
    {
      CUcontext popped;
      d->pop (&popped);
      d->destroy (c->context);
    }
  free (c);
}
