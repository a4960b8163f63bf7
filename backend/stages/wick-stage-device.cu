/* wick-stage-device.cu — capture a stage into a CUDA graph and certify it.
 * See wick-stage-device.h for the contract; docs/stages.md for the why.
 *
 * Parity is computed on the device: one grid-stride pass per block sums
 * out·ref, out² and ref² in float64 and the max |out - ref|, writing every
 * |diff| (as float64, NaN turned into +inf) to a scratch buffer; a second,
 * single-thread kernel adds the block partials in block order, so the figures
 * are the same on every run. The p99 is the nearest-rank order statistic of
 * the |diff| buffer, selected on the host after one copy.
 */
#ifndef WICK_COMPILATION
#define WICK_COMPILATION
#endif
#include "wick-stage-device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace
{

constexpr int kParityThreads = 256;
constexpr int kParityMaxBlocks = 1024;

struct ParitySums
{
  double dot, out_squared, ref_squared, max_abs;
};

struct Failure
{
  char text[512];
  bool set;
};

bool
check (cudaError_t err, const char *what, Failure *failure)
{
  if (err == cudaSuccess)
    return true;
  if (!failure->set)
    snprintf (failure->text, sizeof failure->text, "capture failed, the stage stays eager: %s: %s (%s)",
              what, cudaGetErrorString (err), cudaGetErrorName (err));
  failure->set = true;
  cudaGetLastError ();
  return false;
}

void
fail (Failure *failure, const char *text)
{
  if (!failure->set)
    snprintf (failure->text, sizeof failure->text, "%s", text);
  failure->set = true;
}

__device__ double to_double (float v) { return (double) v; }
__device__ double to_double (double v) { return v; }
__device__ double to_double (__half v) { return (double) __half2float (v); }
__device__ double to_double (__nv_bfloat16 v) { return (double) __bfloat162float (v); }

template <typename T>
__global__ void
parity_partials (const T *out, const T *ref, size_t n, double *diffs, ParitySums *partials)
{
  __shared__ ParitySums shared[kParityThreads];
  ParitySums sums = { 0.0, 0.0, 0.0, 0.0 };
  size_t stride = (size_t) gridDim.x * blockDim.x;
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    {
      double a = to_double (out[i]);
      double b = to_double (ref[i]);
      sums.dot += a * b;
      sums.out_squared += a * a;
      sums.ref_squared += b * b;
      double d = fabs (a - b);
      if (isnan (d))
        d = INFINITY;
      diffs[i] = d;
      sums.max_abs = fmax (sums.max_abs, d);
    }
  shared[threadIdx.x] = sums;
  __syncthreads ();
  for (int half = kParityThreads / 2; half > 0; half /= 2)
    {
      if ((int) threadIdx.x < half)
        {
          ParitySums *mine = &shared[threadIdx.x];
          const ParitySums *other = &shared[threadIdx.x + half];
          mine->dot += other->dot;
          mine->out_squared += other->out_squared;
          mine->ref_squared += other->ref_squared;
          mine->max_abs = fmax (mine->max_abs, other->max_abs);
        }
      __syncthreads ();
    }
  if (threadIdx.x == 0)
    partials[blockIdx.x] = shared[0];
}

__global__ void
parity_finish (const ParitySums *partials, int n_blocks, ParitySums *total)
{
  ParitySums sums = { 0.0, 0.0, 0.0, 0.0 };
  for (int i = 0; i < n_blocks; i++)
    {
      sums.dot += partials[i].dot;
      sums.out_squared += partials[i].out_squared;
      sums.ref_squared += partials[i].ref_squared;
      sums.max_abs = fmax (sums.max_abs, partials[i].max_abs);
    }
  *total = sums;
}

template <typename T>
void
launch_parity (const void *out, const void *ref, size_t n, double *diffs, ParitySums *partials,
               int blocks, cudaStream_t stream)
{
  parity_partials<T><<<blocks, kParityThreads, 0, stream>>> ((const T *) out, (const T *) ref, n,
                                                              diffs, partials);
}

/* Everything one certification allocates, so that one function frees it. */
struct Capture
{
  const WickStageWork *work;
  const WickCaptureOptions *options;
  WickCertification *cert;
  size_t bytes;
  cudaStream_t side;
  cudaGraphExec_t exec;
  void *reference;
  double *diffs;
  ParitySums *partials;
  cudaEvent_t start, stop;
  Failure failure;
};

bool
run_eager (Capture *c)
{
  c->work->enqueue (c->side, c->work->user_data);
  return check (cudaGetLastError (), "the enqueue callback", &c->failure);
}

bool
warm_up (Capture *c)
{
  uint32_t runs = c->options->warmup > 0 ? c->options->warmup : 1;
  for (uint32_t i = 0; i < runs; i++)
    if (!run_eager (c))
      return false;
  return check (cudaStreamSynchronize (c->side), "warm-up", &c->failure);
}

bool
compute_reference (Capture *c)
{
  if (!check (cudaMalloc (&c->reference, c->bytes), "cudaMalloc (reference)", &c->failure))
    return false;
  if (c->work->reference != NULL)
    {
      c->work->reference (c->side, c->reference, c->work->user_data);
      if (!check (cudaGetLastError (), "the reference callback", &c->failure))
        return false;
    }
  else
    {
      if (!run_eager (c))
        return false;
      if (!check (cudaMemcpyAsync (c->reference, c->work->output, c->bytes,
                                   cudaMemcpyDeviceToDevice, c->side),
                  "copying the eager output", &c->failure))
        return false;
    }
  return check (cudaStreamSynchronize (c->side), "the reference run", &c->failure);
}

uint64_t
count_kernel_nodes (cudaGraph_t graph, size_t *n_nodes)
{
  size_t n = 0;
  *n_nodes = 0;
  if (cudaGraphGetNodes (graph, NULL, &n) != cudaSuccess || n == 0)
    return 0;
  cudaGraphNode_t *nodes = (cudaGraphNode_t *) malloc (n * sizeof *nodes);
  uint64_t kernels = 0;
  if (nodes != NULL && cudaGraphGetNodes (graph, nodes, &n) == cudaSuccess)
    for (size_t i = 0; i < n; i++)
      {
        cudaGraphNodeType type;
        if (cudaGraphNodeGetType (nodes[i], &type) == cudaSuccess
            && type == cudaGraphNodeTypeKernel)
          kernels++;
      }
  free (nodes);
  *n_nodes = n;
  return kernels;
}

/* Records the enqueue callback on the side stream. Whatever the callback does,
 * the capture is ended here, and a partial graph destroyed. */
bool
record_graph (Capture *c, cudaGraph_t *graph_out)
{
  *graph_out = NULL;
  cudaGetLastError ();
  if (!check (cudaStreamBeginCapture (c->side, cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture", &c->failure))
    return false;
  c->work->enqueue (c->side, c->work->user_data);
  cudaError_t launch_error = cudaGetLastError ();
  cudaGraph_t graph = NULL;
  cudaError_t end_error = cudaStreamEndCapture (c->side, &graph);
  if (launch_error == cudaSuccess && end_error == cudaSuccess && graph != NULL)
    {
      *graph_out = graph;
      return true;
    }
  if (graph != NULL)
    cudaGraphDestroy (graph);
  cudaError_t err = launch_error != cudaSuccess ? launch_error : end_error;
  char text[512];
  snprintf (text, sizeof text,
            "capture failed, the stage stays eager: %s (%s) while recording; the enqueue callback "
            "must put all its work on the stream it is given, without synchronising or "
            "allocating",
            cudaGetErrorString (err), cudaGetErrorName (err));
  fail (&c->failure, text);
  cudaGetLastError ();
  return false;
}

bool
instantiate (Capture *c)
{
  cudaGraph_t graph = NULL;
  if (!record_graph (c, &graph))
    return false;
  size_t n_nodes = 0;
  c->cert->kernel_nodes = count_kernel_nodes (graph, &n_nodes);
  bool ok = true;
  if (n_nodes == 0)
    {
      fail (&c->failure, "capture refused: the captured graph is empty, so the enqueue callback "
                         "put its work on another stream than the one it is given");
      ok = false;
    }
  else
    {
      /* WICK_STAGE_GRAPH=torch: instantiated as torch.cuda.CUDAGraph does
       * (AutoFreeOnLaunch | UseNodePriority, no upload before the first
       * launch), a contender bench-stage-replay times beside the default */
      const char *how = getenv ("WICK_STAGE_GRAPH");
      bool torch = how != NULL && strcmp (how, "torch") == 0;
      unsigned long long flags
        = torch ? cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUseNodePriority
                : 0;
      ok = check (cudaGraphInstantiateWithFlags (&c->exec, graph, flags), "cudaGraphInstantiate",
                  &c->failure)
           && (torch || check (cudaGraphUpload (c->exec, c->side), "cudaGraphUpload", &c->failure));
    }
  cudaGraphDestroy (graph);
  return ok;
}

/* One replay over an output poisoned with NaN bytes, so that an element the
 * graph does not write fails parity instead of passing on stale data. */
bool
replay_poisoned (Capture *c)
{
  return check (cudaMemsetAsync (c->work->output, 0xff, c->bytes, c->side), "poisoning the output",
                &c->failure)
         && check (cudaGraphLaunch (c->exec, c->side), "cudaGraphLaunch", &c->failure)
         && check (cudaStreamSynchronize (c->side), "the first replay", &c->failure);
}

bool
measure_parity (Capture *c)
{
  size_t n = c->work->output_elements;
  size_t wanted = (n + kParityThreads - 1) / kParityThreads;
  int blocks = (int) (wanted < 1 ? 1 : wanted > kParityMaxBlocks ? kParityMaxBlocks : wanted);
  if (!check (cudaMalloc ((void **) &c->diffs, (n > 0 ? n : 1) * sizeof (double)),
              "cudaMalloc (parity)", &c->failure)
      || !check (cudaMalloc ((void **) &c->partials, (blocks + 1) * sizeof (ParitySums)),
                 "cudaMalloc (parity)", &c->failure))
    return false;
  const void *out = c->work->output;
  switch (c->work->output_dtype)
    {
    case WICK_STAGE_DTYPE_F32:
      launch_parity<float> (out, c->reference, n, c->diffs, c->partials, blocks, c->side);
      break;
    case WICK_STAGE_DTYPE_F64:
      launch_parity<double> (out, c->reference, n, c->diffs, c->partials, blocks, c->side);
      break;
    case WICK_STAGE_DTYPE_F16:
      launch_parity<__half> (out, c->reference, n, c->diffs, c->partials, blocks, c->side);
      break;
    case WICK_STAGE_DTYPE_BF16:
      launch_parity<__nv_bfloat16> (out, c->reference, n, c->diffs, c->partials, blocks, c->side);
      break;
    default:
      fail (&c->failure, "capture refused: parity needs an f32, f16, bf16 or f64 output");
      return false;
    }
  parity_finish<<<1, 1, 0, c->side>>> (c->partials, blocks, c->partials + blocks);
  ParitySums total;
  double *host_diffs = (double *) malloc ((n > 0 ? n : 1) * sizeof (double));
  if (host_diffs == NULL)
    {
      fail (&c->failure, "capture failed, the stage stays eager: out of host memory for parity");
      return false;
    }
  bool ok = check (cudaGetLastError (), "the parity kernels", &c->failure)
            && check (cudaMemcpyAsync (&total, c->partials + blocks, sizeof total,
                                       cudaMemcpyDeviceToHost, c->side),
                      "reading parity", &c->failure)
            && check (cudaMemcpyAsync (host_diffs, c->diffs, n * sizeof (double),
                                       cudaMemcpyDeviceToHost, c->side),
                      "reading parity", &c->failure)
            && check (cudaStreamSynchronize (c->side), "the parity kernels", &c->failure);
  if (ok)
    {
      c->cert->parity_cos = wick_gate_cosine (total.dot, total.out_squared, total.ref_squared);
      c->cert->max_abs = n > 0 ? total.max_abs : 0.0;
      c->cert->p99_abs = n > 0 ? wick_gate_p99 (host_diffs, n) : 0.0;
    }
  free (host_diffs);
  return ok;
}

bool
time_block (Capture *c, bool replay, uint32_t iterations, double *ms_per_run)
{
  if (!check (cudaEventRecord (c->start, c->side), "cudaEventRecord", &c->failure))
    return false;
  for (uint32_t i = 0; i < iterations; i++)
    {
      if (replay)
        {
          if (!check (cudaGraphLaunch (c->exec, c->side), "cudaGraphLaunch", &c->failure))
            return false;
        }
      else if (!run_eager (c))
        return false;
    }
  float ms = 0.0f;
  if (!check (cudaEventRecord (c->stop, c->side), "cudaEventRecord", &c->failure)
      || !check (cudaEventSynchronize (c->stop), "cudaEventSynchronize", &c->failure)
      || !check (cudaEventElapsedTime (&ms, c->start, c->stop), "cudaEventElapsedTime",
                 &c->failure))
    return false;
  *ms_per_run = (double) ms / iterations;
  return true;
}

/* Warm-up, then rounds of eager and replay blocks, alternating which goes
 * first so that a clock or thermal drift cannot favour one side. */
bool
measure_speedup (Capture *c)
{
  uint32_t rounds = c->options->timing_rounds > 0 ? c->options->timing_rounds : 1;
  uint32_t iterations = c->options->timing_iterations > 0 ? c->options->timing_iterations : 1;
  if (!check (cudaEventCreate (&c->start), "cudaEventCreate", &c->failure)
      || !check (cudaEventCreate (&c->stop), "cudaEventCreate", &c->failure))
    return false;
  double scratch;
  uint32_t warm = c->options->warmup > 0 ? c->options->warmup : 1;
  if (!time_block (c, false, warm, &scratch) || !time_block (c, true, warm, &scratch))
    return false;
  double *eager = (double *) calloc (2 * rounds, sizeof (double));
  if (eager == NULL)
    {
      fail (&c->failure, "capture failed, the stage stays eager: out of host memory for timing");
      return false;
    }
  double *replay = eager + rounds;
  bool ok = true;
  for (uint32_t r = 0; ok && r < rounds; r++)
    {
      bool replay_first = r % 2 == 1;
      ok = time_block (c, replay_first, iterations, replay_first ? &replay[r] : &eager[r])
           && time_block (c, !replay_first, iterations, replay_first ? &eager[r] : &replay[r]);
    }
  if (ok)
    wick_gate_speedup_summary (eager, replay, rounds, &c->cert->speedup_median,
                               &c->cert->speedup_min, &c->cert->speedup_max, &c->cert->eager_ms,
                               &c->cert->replay_ms);
  free (eager);
  return ok;
}

void
release_capture (Capture *c, bool keep_exec)
{
  if (c->side != NULL)
    cudaStreamSynchronize (c->side);
  if (c->exec != NULL && !keep_exec)
    cudaGraphExecDestroy (c->exec);
  if (c->reference != NULL)
    cudaFree (c->reference);
  if (c->diffs != NULL)
    cudaFree (c->diffs);
  if (c->partials != NULL)
    cudaFree (c->partials);
  if (c->start != NULL)
    cudaEventDestroy (c->start);
  if (c->stop != NULL)
    cudaEventDestroy (c->stop);
  if (c->side != NULL)
    cudaStreamDestroy (c->side);
  cudaGetLastError ();
}

size_t
dtype_size (WickStageDType dtype)
{
  return wick_stage_dtype_size (dtype);
}

/* The static runtime says "driver version is insufficient" when there is no
 * driver at all; tell the two apart for the refusal. */
bool
driver_installed (void)
{
  void *driver = dlopen ("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == NULL)
    return false;
  dlclose (driver);
  return true;
}

} // namespace

extern "C" bool
wick_stage_device_available (char *why, size_t why_size)
{
  static int count = -1;
  static cudaError_t err = cudaSuccess;
  static bool probed = false;
  /* C++ guarantees one initialisation of a local static, across threads */
  static const bool once = [] {
    err = cudaGetDeviceCount (&count);
    cudaGetLastError ();
    probed = true;
    return true;
  }();
  (void) once;
  if (probed && err == cudaSuccess && count > 0)
    return true;
  if (why != NULL && why_size > 0)
    {
      if (err == cudaErrorInsufficientDriver && !driver_installed ())
        snprintf (why, why_size,
                  "no CUDA device is available: no NVIDIA driver is installed (libcuda.so.1 "
                  "cannot be loaded)");
      else if (err != cudaSuccess)
        snprintf (why, why_size, "no CUDA device is available: %s (%s)", cudaGetErrorString (err),
                  cudaGetErrorName (err));
      else
        snprintf (why, why_size, "no CUDA device is available: the CUDA runtime found none");
    }
  return false;
}

extern "C" int
wick_stage_device_current (void)
{
  int device = -1;
  if (cudaGetDevice (&device) != cudaSuccess)
    {
      cudaGetLastError ();
      return -1;
    }
  return device;
}

extern "C" void *
wick_stage_device_capture (const WickStageWork *work, const WickCaptureOptions *options,
                           WickCertification *cert)
{
  Capture c;
  memset (&c, 0, sizeof c);
  c.work = work;
  c.options = options;
  c.cert = cert;
  c.bytes = work->output_elements * dtype_size (work->output_dtype);

  bool ok = check (cudaSetDevice (work->device), "cudaSetDevice", &c.failure)
            && check (cudaDeviceSynchronize (), "waiting for the work in flight", &c.failure)
            && check (cudaStreamCreateWithFlags (&c.side, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags", &c.failure)
            && warm_up (&c) && compute_reference (&c) && instantiate (&c)
            && replay_poisoned (&c) && measure_parity (&c);
  if (ok && cert->speedup_checked)
    ok = measure_speedup (&c);
  wick_gate_judge (cert, c.failure.set ? c.failure.text : NULL);
  bool keep = ok && cert->accepted;
  release_capture (&c, keep);
  return keep ? (void *) c.exec : NULL;
}

extern "C" bool
wick_stage_device_launch (void *exec, void *stream, char *why, size_t why_size)
{
  cudaError_t err = cudaGraphLaunch ((cudaGraphExec_t) exec, (cudaStream_t) stream);
  if (err == cudaSuccess)
    return true;
  cudaGetLastError ();
  snprintf (why, why_size, "cudaGraphLaunch: %s (%s)", cudaGetErrorString (err),
            cudaGetErrorName (err));
  return false;
}

extern "C" void
wick_stage_device_destroy (void *exec)
{
  if (exec != NULL)
    cudaGraphExecDestroy ((cudaGraphExec_t) exec);
}

extern "C" bool
wick_stage_device_copy (void *dst, const void *src, size_t n, void *stream, char *why,
                        size_t why_size)
{
  cudaStream_t s = (cudaStream_t) stream;
  cudaError_t err = cudaMemcpyAsync (dst, src, n, cudaMemcpyDefault, s);
  if (err == cudaSuccess)
    err = cudaStreamSynchronize (s);
  if (err == cudaSuccess)
    return true;
  cudaGetLastError ();
  snprintf (why, why_size, "copying into the window failed: %s (%s)", cudaGetErrorString (err),
            cudaGetErrorName (err));
  return false;
}
