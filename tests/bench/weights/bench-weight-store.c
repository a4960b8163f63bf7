/* bench-weight-store.c — the weight store's throughput on a CUDA device
 * against baselines measured in the same run:
 *   evict (RAM tier)    vs cudaMemcpy device → pinned host
 *   restore (RAM tier)  vs cudaMemcpy pinned host → device
 *   restore (disk tier) vs PyTorch safetensors.torch.load_file(device="cuda")
 *                          on the same file (bench-safetensors-load.py)
 * Each figure is the median of --reps runs after one cold run (reported
 * apart: the first RAM-tier eviction pins its spill buffers). Timing never
 * decides a pass; the run fails only if a restore is not bit-exact.
 *
 * usage: bench-weight-store [--gib N] [--params K] [--reps R] [--dir D]
 *                           [--script bench-safetensors-load.py]
 * Exits 77 (skipped) without a CUDA device. */
#include "wick-session-private.h"
#include "weights/wick-weight-digest-device-private.h"
#include "weights/wick-weight-disk-reader-private.h"
#include "weights/wick-weight-hash-private.h"
#include "weights/wick-weight-store-private.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct
{
  double gib;
  int params;
  int reps;
  const char *dir;
  const char *script;
} Options;

static void
die (const char *what, const char *message)
{
  fprintf (stderr, "bench-weight-store: %s: %s\n", what, message);
  exit (1);
}

static void
check_cuda (cudaError_t result, const char *what)
{
  if (result != cudaSuccess)
    die (what, cudaGetErrorString (result));
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median (double *values, int n)
{
  qsort (values, (size_t)n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* Seconds for copying every parameter once in one direction, with events. */
static double
time_pinned_copy (void **device, void *pinned, size_t each, int n, bool to_device)
{
  cudaEvent_t start, stop;
  float ms;
  check_cuda (cudaEventCreate (&start), "cudaEventCreate");
  check_cuda (cudaEventCreate (&stop), "cudaEventCreate");
  check_cuda (cudaEventRecord (start, 0), "cudaEventRecord");
  for (int i = 0; i < n; i++)
    check_cuda (cudaMemcpyAsync (to_device ? device[i] : pinned, to_device ? pinned : device[i],
                                 each, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                 0),
                "cudaMemcpyAsync");
  check_cuda (cudaEventRecord (stop, 0), "cudaEventRecord");
  check_cuda (cudaEventSynchronize (stop), "cudaEventSynchronize");
  check_cuda (cudaEventElapsedTime (&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return ms / 1e3;
}

static void
baseline (void **params, size_t each, int n, int reps, double *h2d, double *d2h)
{
  void *pinned;
  void **device = calloc ((size_t)n, sizeof *device);
  check_cuda (cudaHostAlloc (&pinned, each, cudaHostAllocDefault), "cudaHostAlloc");
  for (int i = 0; i < n; i++)
    check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
  memset (pinned, 1, each);
  double *up = calloc ((size_t)reps, sizeof *up), *down = calloc ((size_t)reps, sizeof *down);
  time_pinned_copy (device, pinned, each, n, true); /* warm-up */
  for (int r = 0; r < reps; r++)
    {
      up[r] = time_pinned_copy (device, pinned, each, n, true);
      down[r] = time_pinned_copy (device, pinned, each, n, false);
    }
  *h2d = median (up, reps);
  *d2h = median (down, reps);
  for (int i = 0; i < n; i++)
    cudaFree (device[i]);
  cudaFreeHost (pinned);
  free (device), free (up), free (down);
}

/* Diagnostics of the RAM-tier restore's gap to the baseline, which copies
 * from one pinned buffer into cudaMalloc memory: the same copies from n
 * distinct pinned buffers (as a restore reads n spills), and into n fresh
 * VMM mappings made just before (as a restore writes), the copies alone
 * timed. Medians of reps. */
static void
restore_diagnostics (size_t each, int n, int reps, double *distinct, double *fresh)
{
  WickError error;
  void **pinned = calloc ((size_t)n, sizeof *pinned);
  void **device = calloc ((size_t)n, sizeof *device);
  double *a = calloc ((size_t)reps, sizeof *a), *b = calloc ((size_t)reps, sizeof *b);
  for (int i = 0; i < n; i++)
    {
      check_cuda (cudaHostAlloc (&pinned[i], each, cudaHostAllocDefault), "cudaHostAlloc");
      memset (pinned[i], 3, each);
      check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
    }
  cudaEvent_t start, stop;
  float ms;
  check_cuda (cudaEventCreate (&start), "cudaEventCreate");
  check_cuda (cudaEventCreate (&stop), "cudaEventCreate");
  for (int r = -1; r < reps; r++)
    {
      check_cuda (cudaEventRecord (start, 0), "cudaEventRecord");
      for (int i = 0; i < n; i++)
        check_cuda (cudaMemcpyAsync (device[i], pinned[i], each, cudaMemcpyHostToDevice, 0),
                    "cudaMemcpyAsync");
      check_cuda (cudaEventRecord (stop, 0), "cudaEventRecord");
      check_cuda (cudaEventSynchronize (stop), "cudaEventSynchronize");
      check_cuda (cudaEventElapsedTime (&ms, start, stop), "cudaEventElapsedTime");
      if (r >= 0)
        a[r] = ms / 1e3;
    }
  for (int i = 0; i < n; i++)
    cudaFree (device[i]);
  for (int r = -1; r < reps; r++)
    {
      for (int i = 0; i < n; i++)
        if ((device[i] = wick_weight_alloc_device (each, &error)) == NULL)
          die ("wick_weight_alloc_device", error.message);
      check_cuda (cudaDeviceSynchronize (), "cudaDeviceSynchronize");
      check_cuda (cudaEventRecord (start, 0), "cudaEventRecord");
      for (int i = 0; i < n; i++)
        check_cuda (cudaMemcpyAsync (device[i], pinned[i], each, cudaMemcpyHostToDevice, 0),
                    "cudaMemcpyAsync");
      check_cuda (cudaEventRecord (stop, 0), "cudaEventRecord");
      check_cuda (cudaEventSynchronize (stop), "cudaEventSynchronize");
      check_cuda (cudaEventElapsedTime (&ms, start, stop), "cudaEventElapsedTime");
      if (r >= 0)
        b[r] = ms / 1e3;
      for (int i = 0; i < n; i++)
        wick_weight_free_device (device[i], &error);
    }
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  *distinct = median (a, reps);
  *fresh = median (b, reps);
  for (int i = 0; i < n; i++)
    cudaFreeHost (pinned[i]);
  free (pinned), free (device), free (a), free (b);
}

/* Seconds to reserve, create and map n allocations (what a restore pays
 * before its copies), and to free them. */
static double
time_vmm_allocations (size_t each, int n)
{
  WickError error;
  void **blocks = calloc ((size_t)n, sizeof *blocks);
  struct timespec start, stop;
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (int i = 0; i < n; i++)
    if ((blocks[i] = wick_weight_alloc_device (each, &error)) == NULL)
      die ("wick_weight_alloc_device", error.message);
  clock_gettime (CLOCK_MONOTONIC, &stop);
  for (int i = 0; i < n; i++)
    wick_weight_free_device (blocks[i], &error);
  free (blocks);
  return (double)(stop.tv_sec - start.tv_sec) + (double)(stop.tv_nsec - start.tv_nsec) * 1e-9;
}

/* ---- diagnostics of the restore's gaps -------------------
 * Each prints its median GB/s and its share of the one-buffer H2D baseline. */

static double
seconds_between (cudaEvent_t start, cudaEvent_t stop)
{
  float ms;
  check_cuda (cudaEventSynchronize (stop), "cudaEventSynchronize");
  check_cuda (cudaEventElapsedTime (&ms, start, stop), "cudaEventElapsedTime");
  return ms / 1e3;
}

/* n copies pinned[i] -> device[i], split over n_streams streams, timed with
 * events on the first (the others joined to it). */
static double
time_copies (void **device, void **pinned, size_t each, int n, cudaStream_t *streams,
             int n_streams)
{
  cudaEvent_t start, stop, joined[4];
  check_cuda (cudaEventCreate (&start), "cudaEventCreate");
  check_cuda (cudaEventCreate (&stop), "cudaEventCreate");
  check_cuda (cudaEventRecord (start, streams[0]), "cudaEventRecord");
  for (int s = 1; s < n_streams; s++)
    check_cuda (cudaStreamWaitEvent (streams[s], start, 0), "cudaStreamWaitEvent");
  for (int i = 0; i < n; i++)
    check_cuda (cudaMemcpyAsync (device[i], pinned[i], each, cudaMemcpyHostToDevice,
                                 streams[i % n_streams]),
                "cudaMemcpyAsync");
  for (int s = 1; s < n_streams; s++)
    {
      check_cuda (cudaEventCreateWithFlags (&joined[s], cudaEventDisableTiming), "cudaEventCreate");
      check_cuda (cudaEventRecord (joined[s], streams[s]), "cudaEventRecord");
      check_cuda (cudaStreamWaitEvent (streams[0], joined[s], 0), "cudaStreamWaitEvent");
    }
  check_cuda (cudaEventRecord (stop, streams[0]), "cudaEventRecord");
  double seconds = seconds_between (start, stop);
  for (int s = 1; s < n_streams; s++)
    cudaEventDestroy (joined[s]);
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return seconds;
}

typedef CUresult (*BenchReserveFn) (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*BenchCreateFn) (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                   unsigned long long);
typedef CUresult (*BenchMapFn) (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                                unsigned long long);
typedef CUresult (*BenchSetAccessFn) (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*BenchUnmapFn) (CUdeviceptr, size_t);
typedef CUresult (*BenchReleaseFn) (CUmemGenericAllocationHandle);
typedef CUresult (*BenchFreeAddressFn) (CUdeviceptr, size_t);
typedef CUresult (*BenchGranularityFn) (size_t *, const CUmemAllocationProp *,
                                        CUmemAllocationGranularity_flags);

static struct
{
  BenchReserveFn reserve;
  BenchCreateFn create;
  BenchMapFn map;
  BenchSetAccessFn set_access;
  BenchUnmapFn unmap;
  BenchReleaseFn release;
  BenchFreeAddressFn free_address;
  BenchGranularityFn granularity;
} vmm_fn;

static bool
vmm_load (void)
{
  enum cudaDriverEntryPointQueryResult status;
  struct
  {
    const char *name;
    void **out;
  } entries[] = { { "cuMemAddressReserve", (void **)&vmm_fn.reserve },
                  { "cuMemCreate", (void **)&vmm_fn.create },
                  { "cuMemMap", (void **)&vmm_fn.map },
                  { "cuMemSetAccess", (void **)&vmm_fn.set_access },
                  { "cuMemUnmap", (void **)&vmm_fn.unmap },
                  { "cuMemRelease", (void **)&vmm_fn.release },
                  { "cuMemAddressFree", (void **)&vmm_fn.free_address },
                  { "cuMemGetAllocationGranularity", (void **)&vmm_fn.granularity } };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (cudaGetDriverEntryPointByVersion (entries[i].name, entries[i].out, 12000, cudaEnableDefault,
                                          &status)
          != cudaSuccess
        || *entries[i].out == NULL)
      return false;
  return true;
}

typedef struct
{
  CUdeviceptr base;
  size_t size, reserved;
  CUmemGenericAllocationHandle handle;
} BenchMapping;

/* A VMM mapping of @each bytes, its address aligned to @alignment. */
static BenchMapping
vmm_map (size_t each, size_t alignment, size_t granularity)
{
  BenchMapping m = { 0 };
  CUmemAllocationProp prop;
  memset (&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  m.size = (each + granularity - 1) / granularity * granularity;
  m.reserved = (m.size + alignment - 1) / alignment * alignment;
  CUmemAccessDesc access;
  memset (&access, 0, sizeof access);
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (vmm_fn.reserve (&m.base, m.reserved, alignment, 0, 0) != CUDA_SUCCESS
      || vmm_fn.create (&m.handle, m.size, &prop, 0) != CUDA_SUCCESS
      || vmm_fn.map (m.base, m.size, 0, m.handle, 0) != CUDA_SUCCESS
      || vmm_fn.set_access (m.base, m.size, &access, 1) != CUDA_SUCCESS)
    die ("vmm_map", "a VMM call failed");
  return m;
}

static void
vmm_unmap (BenchMapping *m)
{
  vmm_fn.unmap (m->base, m->size);
  vmm_fn.release (m->handle);
  vmm_fn.free_address (m->base, m->reserved);
}

typedef enum
{
  FRESH_AT_ONCE,     /* mapped, then copied (what a restore does) */
  FRESH_AFTER_SLEEP, /* mapped, 50 ms of host sleep, copied */
  FRESH_FREED_EARLIER, /* the last memory freed 50 ms before mapping, copied at once */
  FRESH_SECOND_COPY, /* mapped, copied once untimed, the second copy timed */
  FRESH_MEMSET,      /* mapped, cudaMemsetAsync over it (timed apart), then copied */
  FRESH_ALIGN_1G,    /* mapped at 1 GiB-aligned addresses, copied at once */
  FRESH_RECOMMENDED, /* sized and aligned to the recommended granularity */
  MALLOC_FRESH,      /* cudaMalloc'd just before, copied */
  WARM_TWO_STREAMS,  /* warm cudaMalloc memory, the copies over 2 streams */
  N_FRESH
} FreshKind;

static void
fresh_diagnostics (size_t each, int n, int reps, double h2d, double gb)
{
  static const char *names[N_FRESH] = {
    "fresh VMM, copied at once",        "fresh VMM, copied 50 ms later",
    "fresh VMM, freed 50 ms before",
    "fresh VMM, second copy",           "fresh VMM, cudaMemset first",
    "fresh VMM at 1 GiB alignment",     "fresh VMM, recommended granularity",
    "cudaMalloc just before",           "warm cudaMalloc, 2 streams",
  };
  if (!vmm_load ())
    {
      printf ("  fresh-mapping diagnostics: no VMM entry points\n");
      return;
    }
  CUmemAllocationProp prop;
  memset (&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t minimum = 0, recommended = 0;
  vmm_fn.granularity (&minimum, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  vmm_fn.granularity (&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  printf ("  VMM granularity: minimum %zu, recommended %zu\n", minimum, recommended);
  void **pinned = calloc ((size_t)n, sizeof *pinned);
  void **device = calloc ((size_t)n, sizeof *device);
  BenchMapping *maps = calloc ((size_t)n, sizeof *maps);
  double *t = calloc ((size_t)reps, sizeof *t), *extra = calloc ((size_t)reps, sizeof *extra);
  cudaStream_t streams[2];
  check_cuda (cudaStreamCreateWithFlags (&streams[0], cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda (cudaStreamCreateWithFlags (&streams[1], cudaStreamNonBlocking), "cudaStreamCreate");
  for (int i = 0; i < n; i++)
    {
      check_cuda (cudaHostAlloc (&pinned[i], each, cudaHostAllocDefault), "cudaHostAlloc");
      memset (pinned[i], 5, each);
    }
  for (int kind = 0; kind < N_FRESH; kind++)
    {
      if (kind == WARM_TWO_STREAMS)
        for (int i = 0; i < n; i++)
          check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
      for (int r = -1; r < reps; r++)
        {
          double memset_seconds = 0;
          if (kind == FRESH_FREED_EARLIER)
            usleep (50000);
          if (kind == MALLOC_FRESH)
            for (int i = 0; i < n; i++)
              check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
          else if (kind != WARM_TWO_STREAMS)
            for (int i = 0; i < n; i++)
              {
                size_t align = kind == FRESH_ALIGN_1G      ? ((size_t)1 << 30)
                               : kind == FRESH_RECOMMENDED ? recommended
                                                           : minimum;
                maps[i] = vmm_map (each, align, kind == FRESH_RECOMMENDED ? recommended : minimum);
                device[i] = (void *)(uintptr_t)maps[i].base;
              }
          check_cuda (cudaDeviceSynchronize (), "cudaDeviceSynchronize");
          if (kind == FRESH_AFTER_SLEEP)
            usleep (50000);
          if (kind == FRESH_SECOND_COPY)
            time_copies (device, pinned, each, n, streams, 1);
          if (kind == FRESH_MEMSET)
            {
              struct timespec a, b;
              clock_gettime (CLOCK_MONOTONIC, &a);
              for (int i = 0; i < n; i++)
                check_cuda (cudaMemsetAsync (device[i], 0, each, streams[0]), "cudaMemsetAsync");
              check_cuda (cudaStreamSynchronize (streams[0]), "cudaStreamSynchronize");
              clock_gettime (CLOCK_MONOTONIC, &b);
              memset_seconds
                = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
            }
          double s = time_copies (device, pinned, each, n, streams, kind == WARM_TWO_STREAMS ? 2 : 1);
          if (r >= 0)
            t[r] = s, extra[r] = memset_seconds;
          if (kind == MALLOC_FRESH)
            for (int i = 0; i < n; i++)
              cudaFree (device[i]);
          else if (kind != WARM_TWO_STREAMS)
            for (int i = 0; i < n; i++)
              vmm_unmap (&maps[i]);
        }
      if (kind == WARM_TWO_STREAMS)
        for (int i = 0; i < n; i++)
          cudaFree (device[i]);
      double med = median (t, reps);
      printf ("  %-34s %8.2f GB/s  %5.1f%% of H2D", names[kind], gb / med, 100 * h2d / med);
      if (kind == FRESH_MEMSET)
        printf ("  (the memset %.2f ms)", median (extra, reps) * 1e3);
      printf ("\n");
    }
  for (int i = 0; i < n; i++)
    cudaFreeHost (pinned[i]);
  cudaStreamDestroy (streams[0]);
  cudaStreamDestroy (streams[1]);
  free (pinned), free (device), free (maps), free (t), free (extra);
}

/* The GPU digest's own speed: every parameter hashed in 8 MiB kernels one
 * after the other (as the disk restore queues them), and whole (as a RAM
 * restore does). */
static void
digest_diagnostics (void **params, size_t each, int n, int reps, double gb)
{
  WickError error;
  WickDeviceDigests *digests = wick_device_digests_new (&error);
  if (digests == NULL)
    {
      printf ("  GPU digest diagnostics: %s\n", error.message);
      return;
    }
  uint64_t *out = calloc ((size_t)n + 1, sizeof *out);
  double *t = calloc ((size_t)reps, sizeof *t);
  for (int whole = 0; whole < 2; whole++)
    {
      for (int r = -1; r < reps; r++)
        {
          struct timespec a, b;
          wick_device_digests_reset (digests, NULL);
          wick_device_digests_wait (digests, NULL, 0, NULL);
          clock_gettime (CLOCK_MONOTONIC, &a);
          for (int i = 0; i < n; i++)
            {
              size_t piece = whole ? each : WICK_DISK_SLOT_BYTES;
              for (size_t at = 0; at < each; at += piece)
                if (!wick_device_digests_queue (digests, (size_t)i, (char *)params[i] + at,
                                                each - at < piece ? each - at : piece,
                                                at / WICK_WEIGHT_HASH_CHUNK, NULL, &error))
                  die ("digest", error.message);
            }
          if (!wick_device_digests_wait (digests, out, (size_t)n, &error))
            die ("digest", error.message);
          clock_gettime (CLOCK_MONOTONIC, &b);
          if (r >= 0)
            t[r] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        }
      printf ("  %-34s %8.2f GB/s\n", whole ? "GPU digest, a kernel a parameter" : "GPU digest, a kernel per 8 MiB",
              gb / median (t, reps));
    }
  wick_device_digests_free (digests);
  free (out), free (t);
}

typedef struct
{
  int fd;
  uint64_t from, to;
  void *buffer;
} PreadPart;

static void *
pread_part (void *data)
{
  PreadPart *part = data;
  WickError error;
  for (uint64_t at = part->from; at < part->to; at += WICK_DISK_SLOT_BYTES)
    {
      size_t n = part->to - at < WICK_DISK_SLOT_BYTES ? (size_t)(part->to - at) : WICK_DISK_SLOT_BYTES;
      if (!wick_read_exact (part->fd, part->buffer, n, at, "bench", &error))
        die ("pread", error.message);
    }
  return NULL;
}

/* The disk restore's parts: the readers' pread into pinned staging alone
 * (8 threads, the file warm), and wick_disk_read of the same jobs without
 * digests, with the GPU's and with the CPU readers' (same staging). */
static void
disk_diagnostics (const char *path, void **params, size_t each, int n, int reps, double gb)
{
  WickError error;
  WickCheckpoint checkpoint;
  if (!wick_checkpoint_open (path, &checkpoint, &error))
    die ("wick_checkpoint_open", error.message);
  const WickSafetensorsShard *shard = &checkpoint.shards[0];
  WickDiskJob *jobs = calloc ((size_t)n, sizeof *jobs);
  for (int i = 0; i < n; i++)
    {
      char key[32];
      snprintf (key, sizeof key, "layers.%d.weight", i);
      const WickSafetensorsTensor *tensor = wick_safetensors_header_find (&shard->header, key);
      if (tensor == NULL)
        die ("disk diagnostics", "a tensor is missing from the file");
      jobs[i] = (WickDiskJob){ params[i], shard->fd, shard->path,
                               shard->header.data_offset + tensor->begin, each / 4,
                               WICK_DTYPE_F32, WICK_DTYPE_F32 };
    }
  double *t = calloc ((size_t)reps, sizeof *t);
  /* pread alone */
  enum { THREADS = 8 };
  PreadPart parts[THREADS];
  pthread_t threads[THREADS];
  uint64_t first = jobs[0].file_offset, last = jobs[n - 1].file_offset + each;
  for (int k = 0; k < THREADS; k++)
    check_cuda (cudaHostAlloc (&parts[k].buffer, WICK_DISK_SLOT_BYTES, cudaHostAllocDefault),
                "cudaHostAlloc");
  for (int r = -1; r < reps; r++)
    {
      struct timespec a, b;
      clock_gettime (CLOCK_MONOTONIC, &a);
      uint64_t span = (last - first) / THREADS / WICK_DISK_SLOT_BYTES * WICK_DISK_SLOT_BYTES;
      for (int k = 0; k < THREADS; k++)
        {
          parts[k].fd = shard->fd;
          parts[k].from = first + (uint64_t)k * span;
          parts[k].to = k == THREADS - 1 ? last : first + (uint64_t)(k + 1) * span;
          pthread_create (&threads[k], NULL, pread_part, &parts[k]);
        }
      for (int k = 0; k < THREADS; k++)
        pthread_join (threads[k], NULL);
      clock_gettime (CLOCK_MONOTONIC, &b);
      if (r >= 0)
        t[r] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    }
  for (int k = 0; k < THREADS; k++)
    cudaFreeHost (parts[k].buffer);
  printf ("  %-34s %8.2f GB/s\n", "pread into pinned, 8 threads", gb / median (t, reps));
  static const char *modes[3] = { "disk pipeline, no digests", "disk pipeline, GPU digests",
                                  "disk pipeline, CPU digests" };
  uint64_t *digests = calloc ((size_t)n + 1, sizeof *digests);
  WickDiskStaging staging;
  memset (&staging, 0, sizeof staging);
  const WickWeightBacking *backing = wick_weight_backing_for (WICK_WEIGHT_MEMORY_CUDA);
  for (int mode = 0; mode < 3; mode++)
    {
      if (mode == 2)
        setenv ("WICK_WEIGHT_GPU_DIGESTS", "0", 1);
      for (int r = -1; r < reps; r++)
        {
          struct timespec a, b;
          clock_gettime (CLOCK_MONOTONIC, &a);
          if (!wick_disk_staging_reserve (&staging, backing, WICK_DISK_SLOT_BYTES, &error)
              || !wick_disk_read (&staging, jobs, (size_t)n, mode ? digests : NULL, &error))
            die ("wick_disk_read", error.message);
          clock_gettime (CLOCK_MONOTONIC, &b);
          if (r >= 0)
            t[r] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        }
      printf ("  %-34s %8.2f GB/s\n", modes[mode], gb / median (t, reps));
    }
  unsetenv ("WICK_WEIGHT_GPU_DIGESTS");
  wick_disk_staging_free (&staging);
  wick_checkpoint_close (&checkpoint);
  free (jobs), free (t), free (digests);
}

/* Runs the PyTorch baseline on the same file; negative if unavailable. */
static double
torch_load_seconds (const char *script, const char *path, int reps)
{
  char command[8300];
  snprintf (command, sizeof command, "python3 '%.4000s' '%.4000s' %d 2>&1", script, path, reps);
  FILE *pipe = popen (command, "r");
  char line[512];
  double seconds = -1;
  while (pipe != NULL && fgets (line, sizeof line, pipe) != NULL)
    if (sscanf (line, "safetensors_load_seconds %lf", &seconds) != 1)
      fprintf (stderr, "  python: %s", line);
  if (pipe != NULL)
    pclose (pipe);
  return seconds;
}

static void
parse_options (int argc, char **argv, Options *options)
{
  *options = (Options){ 2.0, 8, 5, "/tmp", "tests/bench/weights/bench-safetensors-load.py" };
  for (int i = 1; i + 1 < argc; i += 2)
    {
      if (strcmp (argv[i], "--gib") == 0)
        options->gib = atof (argv[i + 1]);
      else if (strcmp (argv[i], "--params") == 0)
        options->params = atoi (argv[i + 1]);
      else if (strcmp (argv[i], "--reps") == 0)
        options->reps = atoi (argv[i + 1]);
      else if (strcmp (argv[i], "--dir") == 0)
        options->dir = argv[i + 1];
      else if (strcmp (argv[i], "--script") == 0)
        options->script = argv[i + 1];
    }
  if (options->params < 1 || options->reps < 1 || options->gib <= 0)
    die ("options", "--params, --reps and --gib must be positive");
}

typedef struct
{
  double cold, warm;
} Timing;

/* Medians of the phases (wick_weight_phase_times) over a cycle's warm runs. */
typedef struct
{
  double spill, release, map, queue, wait, disk;
} Phases;

static void
print_phases (const char *what, const Phases *p)
{
  printf ("  %-34s evict: copies %.2f + release %.2f ms; restore: map %.2f + queue %.2f + wait "
          "%.2f + disk %.2f ms\n",
          what, p->spill * 1e3, p->release * 1e3, p->map * 1e3, p->queue * 1e3, p->wait * 1e3,
          p->disk * 1e3);
}

/* Evicts and restores reps+1 times; the first run is the cold one. With
 * settle_ms, the host sleeps that long after each eviction and each restore
 * (outside the timed calls): the driver's work on memory just released or
 * mapped (a copy into a mapping made 50 ms before runs at full speed, one
 * made just before does not) is then over before the next call. */
static void
cycle (WickWeightStore *store, WickTier tier, int reps, int settle_ms, Timing *evict,
       Timing *restore, Phases *phases)
{
  WickWeightStats stats;
  WickError error;
  double *e = calloc ((size_t)reps, sizeof *e), *r = calloc ((size_t)reps, sizeof *r);
  double *ph[6];
  for (int k = 0; k < 6; k++)
    ph[k] = calloc ((size_t)reps, sizeof *ph[k]);
  for (int i = 0; i <= reps; i++)
    {
      if (!wick_weight_store_evict (store, "bench", tier, &stats, &error))
        die ("evict", error.message);
      if ((tier == WICK_TIER_DISK && stats.ram != 0) || (tier == WICK_TIER_RAM && stats.disk != 0))
        die ("evict", "a parameter went to the other tier");
      double evict_seconds = stats.evict_seconds;
      if (settle_ms > 0)
        usleep ((useconds_t)settle_ms * 1000);
      if (!wick_weight_store_restore (store, "bench", &stats, &error))
        die ("restore", error.message);
      if (settle_ms > 0)
        usleep ((useconds_t)settle_ms * 1000);
      if (i == 0)
        evict->cold = evict_seconds, restore->cold = stats.restore_seconds;
      else
        {
          e[i - 1] = evict_seconds, r[i - 1] = stats.restore_seconds;
          const WickWeightPhaseTimes *t = &wick_weight_phase_times;
          double values[6] = { t->evict_spill, t->evict_release, t->restore_map,
                               t->restore_queue, t->restore_wait, t->restore_disk };
          for (int k = 0; k < 6; k++)
            ph[k][i - 1] = values[k];
        }
    }
  evict->warm = median (e, reps);
  restore->warm = median (r, reps);
  double *out[6] = { &phases->spill, &phases->release, &phases->map,
                     &phases->queue, &phases->wait,  &phases->disk };
  for (int k = 0; k < 6; k++)
    {
      *out[k] = median (ph[k], reps);
      free (ph[k]);
    }
  free (e), free (r);
}

/* ---- contenders (issue 22 item 1) ---------------------------------------
 * Ways of ordering an eviction's and a restore's work
 * (wick_weight_move_options), each timed as a RAM-tier evict + restore at
 * once, in rounds that rotate their order, each round with its own pinned
 * copies (one pinned buffer <-> cudaMalloc memory) as the baseline. */

typedef struct
{
  const char *name;
  bool release_early;
} Contender;

/* The mapping orders (a worker thread making a restore's mappings ahead,
 * or one made between the copies) and a digest stream kept between calls
 * were contenders too: three H200 rounds (2026-12-03 and -04) measured them
 * as their base order, and they are gone. */
static const Contender contenders[] = {
  { "release-late", false },
  { "release-early", true }, /* the default */
};
enum
{
  N_CONTENDERS = sizeof contenders / sizeof contenders[0]
};

static double
min_of (const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] < m ? v[i] : m;
  return m;
}

static double
max_of (const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] > m ? v[i] : m;
  return m;
}

/* median (min-max) of a copy, so the caller's order is kept */
static void
summary (const double *v, int n, double out[3])
{
  double *copy = malloc ((size_t)n * sizeof *copy);
  memcpy (copy, v, (size_t)n * sizeof *copy);
  out[0] = median (copy, n);
  out[1] = min_of (v, n);
  out[2] = max_of (v, n);
  free (copy);
}

static void
run_contenders (WickWeightStore *store, size_t each, int n, int rounds)
{
  void *pinned;
  void **device = calloc ((size_t)n, sizeof *device);
  check_cuda (cudaHostAlloc (&pinned, each, cudaHostAllocDefault), "cudaHostAlloc");
  memset (pinned, 7, each);
  for (int i = 0; i < n; i++)
    check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
  double (*evict)[64] = calloc (N_CONTENDERS, sizeof *evict);
  double (*restore)[64] = calloc (N_CONTENDERS, sizeof *restore);
  double (*phase)[5][64] = calloc (N_CONTENDERS, sizeof *phase);
  double h2d_rounds[64], d2h_rounds[64];
  if (rounds > 64)
    rounds = 64;
  WickWeightMoveOptions saved = wick_weight_move_options;
  for (int r = -1; r < rounds; r++)
    {
      double h2d = time_pinned_copy (device, pinned, each, n, true);
      double d2h = time_pinned_copy (device, pinned, each, n, false);
      for (int k = 0; k < N_CONTENDERS; k++)
        {
          int c = (k + (r < 0 ? 0 : r)) % N_CONTENDERS;
          wick_weight_move_options.release_early = contenders[c].release_early;
          WickWeightStats stats;
          WickError error;
          if (!wick_weight_store_evict (store, "bench", WICK_TIER_RAM, &stats, &error))
            die ("evict (contender)", error.message);
          double e = stats.evict_seconds;
          double spill = wick_weight_phase_times.evict_spill;
          double release = wick_weight_phase_times.evict_release;
          if (!wick_weight_store_restore (store, "bench", &stats, &error))
            die ("restore (contender)", error.message);
          if (r < 0)
            continue;
          evict[c][r] = 100 * d2h / e;
          restore[c][r] = 100 * h2d / stats.restore_seconds;
          phase[c][0][r] = spill * 1e3;
          phase[c][1][r] = release * 1e3;
          phase[c][2][r] = wick_weight_phase_times.restore_map * 1e3;
          phase[c][3][r] = wick_weight_phase_times.restore_queue * 1e3;
          phase[c][4][r] = wick_weight_phase_times.restore_wait * 1e3;
        }
      if (r >= 0)
        h2d_rounds[r] = h2d, d2h_rounds[r] = d2h;
    }
  wick_weight_move_options = saved;
  double gb = (double)each * n / 1e9, h[3], d[3];
  summary (h2d_rounds, rounds, h);
  summary (d2h_rounds, rounds, d);
  printf (
    "contenders: RAM-tier evict + restore at once, %d rounds, order rotated, each round's own "
    "pinned copies as the baseline (H2D %.2f GB/s, D2H %.2f GB/s, medians)\n",
    rounds, gb / h[0], gb / d[0]);
  for (int c = 0; c < N_CONTENDERS; c++)
    {
      double ev[3], re[3], ph[5][3];
      summary (evict[c], rounds, ev);
      summary (restore[c], rounds, re);
      for (int k = 0; k < 5; k++)
        summary (phase[c][k], rounds, ph[k]);
      printf ("RESULT weights contender=%s evict_pct_d2h=%.1f evict_min=%.1f evict_max=%.1f "
              "restore_pct_h2d=%.1f restore_min=%.1f restore_max=%.1f target=97 %s\n",
              contenders[c].name, ev[0], ev[1], ev[2], re[0], re[1], re[2],
              ev[0] >= 97 && re[0] >= 97 ? "met" : "NOT-met");
      printf ("  %-40s evict: copies %.2f + release %.2f ms; restore: map %.2f + queue %.2f + wait "
              "%.2f ms (medians)\n",
              contenders[c].name, ph[0][0], ph[1][0], ph[2][0], ph[3][0], ph[4][0]);
    }
  for (int i = 0; i < n; i++)
    cudaFree (device[i]);
  cudaFreeHost (pinned);
  free (device), free (evict), free (restore), free (phase);
}

/* The spills' pinning: cudaHostAlloc against anonymous huge pages pinned by
 * cudaHostRegister (wick_weight_pin_registered), n buffers of @each as a
 * module's spills: the time to allocate them, the copies into and out of
 * them against cudaMalloc memory (share of the round's copies with one
 * cudaHostAlloc'd buffer), the time to free them. Then the first RAM-tier
 * eviction after a trim (spills freed), with each pinning, cold (it pins)
 * and with its spills prepared ahead (wick_weight_module_prepare_spills,
 * timed apart). */
static void
run_pinning (WickWeightStore *store, void **params, size_t each, int n, int rounds)
{
  const WickWeightBacking *backing = wick_weight_backing_for (WICK_WEIGHT_MEMORY_CUDA);
  void **spills = calloc ((size_t)n, sizeof *spills);
  void **device = calloc ((size_t)n, sizeof *device);
  void *one;
  check_cuda (cudaHostAlloc (&one, each, cudaHostAllocDefault), "cudaHostAlloc");
  memset (one, 9, each);
  for (int i = 0; i < n; i++)
    check_cuda (cudaMalloc (&device[i], each), "cudaMalloc");
  double gb = (double)each * n / 1e9;
  bool saved = wick_weight_pin_registered;
  if (rounds > 16)
    rounds = 16;
  double alloc[2][16], up[2][16], down[2][16], freeing[2][16];
  /* registered huge pages where the host allows them (else that half is skipped) */
  int methods = 2;
  wick_weight_pin_registered = true;
  void *probe = backing->host_alloc (each);
  if (probe == NULL)
    {
      printf ("RESULT weights pin=hugepages+cudaHostRegister unavailable (cudaHostRegister "
              "failed)\n");
      methods = 1;
    }
  else
    backing->host_free (probe, each);
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < methods; k++)
      {
        int m = methods == 2 ? (k + r) % 2 : 0;
        wick_weight_pin_registered = m == 1;
        struct timespec a, b;
        clock_gettime (CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++)
          if ((spills[i] = backing->host_alloc (each)) == NULL)
            die ("pinning", "host_alloc failed");
        clock_gettime (CLOCK_MONOTONIC, &b);
        alloc[m][r] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        double base_down = time_pinned_copy (device, one, each, n, false);
        double base_up = time_pinned_copy (device, one, each, n, true);
        cudaEvent_t start, stop;
        check_cuda (cudaEventCreate (&start), "cudaEventCreate");
        check_cuda (cudaEventCreate (&stop), "cudaEventCreate");
        for (int dir = 0; dir < 2; dir++)
          {
            check_cuda (cudaEventRecord (start, 0), "cudaEventRecord");
            for (int i = 0; i < n; i++)
              check_cuda (
                cudaMemcpyAsync (dir ? device[i] : spills[i], dir ? spills[i] : device[i], each,
                                 dir ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, 0),
                "cudaMemcpyAsync");
            check_cuda (cudaEventRecord (stop, 0), "cudaEventRecord");
            double t = seconds_between (start, stop);
            if (dir)
              up[m][r] = 100 * base_up / t;
            else
              down[m][r] = 100 * base_down / t;
          }
        cudaEventDestroy (start);
        cudaEventDestroy (stop);
        clock_gettime (CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++)
          backing->host_free (spills[i], each);
        clock_gettime (CLOCK_MONOTONIC, &b);
        freeing[m][r] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
      }
  static const char *names[2] = { "cudaHostAlloc", "hugepages+cudaHostRegister" };
  printf ("spill pinning: %d buffers of %zu bytes, %d rounds alternating\n", n, each, rounds);
  for (int m = 0; m < methods; m++)
    {
      double al[3], u[3], dn[3], fr[3];
      summary (alloc[m], rounds, al);
      summary (up[m], rounds, u);
      summary (down[m], rounds, dn);
      summary (freeing[m], rounds, fr);
      printf (
        "RESULT weights pin=%s alloc_s=%.3f alloc_gbps=%.2f alloc_min_s=%.3f alloc_max_s=%.3f "
        "d2h_pct=%.1f h2d_pct=%.1f free_s=%.3f\n",
        names[m], al[0], gb / al[0], al[1], al[2], dn[0], u[0], fr[0]);
    }
  /* the first eviction after a trim: cold (pins its spills), prepared
   * (before the eviction, on the caller's thread), and racing (the
   * preparing thread started just before the eviction, which takes over) */
  WickWeightModule *module = store->modules[0];
  static const char *prepared_names[3] = { "no", "yes", "racing" };
  for (int m = 0; m < methods; m++)
    for (int prepared = 0; prepared < 3; prepared++)
      {
        wick_weight_pin_registered = m == 1;
        wick_weight_store_trim (store);
        double prepare_s = 0;
        WickError error;
        bool saved_prepare = wick_weight_move_options.prepare_spills;
        wick_weight_move_options.prepare_spills = true;
        if (prepared == 2)
          wick_weight_module_start_preparing (module);
        wick_weight_move_options.prepare_spills = saved_prepare;
        if (prepared == 1)
          {
            struct timespec a, b;
            clock_gettime (CLOCK_MONOTONIC, &a);
            if (!wick_weight_module_prepare_spills (module, &error))
              die ("prepare spills", error.message);
            clock_gettime (CLOCK_MONOTONIC, &b);
            prepare_s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
          }
        WickWeightStats stats;
        double d2h = prepared == 2 ? 0 : time_pinned_copy (device, one, each, n, false);
        if (!wick_weight_store_evict (store, "bench", WICK_TIER_RAM, &stats, &error))
          die ("evict (first)", error.message);
        double evict_s = stats.evict_seconds;
        if (!wick_weight_store_restore (store, "bench", &stats, &error))
          die ("restore (first)", error.message);
        if (prepared == 2) /* its pinned copy after: the eviction raced the thread */
          d2h = time_pinned_copy (device, one, each, n, false);
        printf ("RESULT weights first-eviction pin=%s prepared=%s evict_s=%.4f evict_gbps=%.2f "
                "evict_pct_d2h=%.1f prepare_s=%.3f\n",
                names[m], prepared_names[prepared], evict_s, gb / evict_s, 100 * d2h / evict_s,
                prepare_s);
      }
  wick_weight_pin_registered = saved;
  wick_weight_store_trim (store); /* the next spills pinned the default way */
  (void)params;
  for (int i = 0; i < n; i++)
    cudaFree (device[i]);
  cudaFreeHost (one);
  free (spills), free (device);
}

static void
verify (void **params, const unsigned char *expected, size_t each, int n)
{
  unsigned char *host = malloc (each);
  for (int i = 0; i < n; i++)
    {
      check_cuda (cudaMemcpy (host, params[i], each, cudaMemcpyDeviceToHost), "cudaMemcpy");
      for (size_t j = 0; j < each; j++)
        if (host[j] != (unsigned char)(expected[j] + i))
          die ("verify", "restored bytes differ from the original");
    }
  free (host);
}

int
main (int argc, char **argv)
{
  Options options;
  parse_options (argc, argv, &options);
  WickError error;
  void *probe = wick_weight_alloc_device (1, &error);
  if (probe == NULL)
    {
      printf ("bench-weight-store: skipped: %s\n", error.message);
      return 77;
    }
  wick_weight_free_device (probe, &error);
  int n = options.params;
  size_t each = (size_t)(options.gib * (double)(1u << 30) / n) / 4 * 4;
  double gb = (double)each * n / 1e9;

  void **params = calloc ((size_t)n, sizeof *params);
  unsigned char *source = malloc (each);
  for (size_t j = 0; j < each; j++)
    source[j] = (unsigned char)(j * 2654435761u >> 13);
  WickWeightParam *list = calloc ((size_t)n, sizeof *list);
  char (*names)[32] = calloc ((size_t)n, sizeof *names);
  uint64_t shape[1] = { each / 4 };
  for (int i = 0; i < n; i++)
    {
      if ((params[i] = wick_weight_alloc_device (each, &error)) == NULL)
        die ("wick_weight_alloc_device", error.message);
      for (size_t j = 0; j < each; j++)
        source[j]++;
      check_cuda (cudaMemcpy (params[i], source, each, cudaMemcpyHostToDevice), "cudaMemcpy");
      snprintf (names[i], sizeof names[i], "layers.%d.weight", i);
      list[i] = (WickWeightParam){ names[i], params[i], WICK_DTYPE_F32, shape, 1 };
    }
  for (size_t j = 0; j < each; j++)
    source[j] = (unsigned char)(source[j] - n + 1); /* parameter i holds source + i */

  double h2d, d2h;
  baseline (params, each, n, options.reps, &h2d, &d2h);
  double vmm = time_vmm_allocations (each, n);
  double h2d_distinct, h2d_fresh;
  restore_diagnostics (each, n, options.reps, &h2d_distinct, &h2d_fresh);

  char path[4096];
  snprintf (path, sizeof path, "%s/bench-weights-%d.safetensors", options.dir, (int)getpid ());
  if (!wick_safetensors_write (path, list, (size_t)n, WICK_WEIGHT_MEMORY_CUDA, NULL, 0, &error))
    die ("wick_safetensors_write", error.message);
  WickWeightStore *store = wick_weight_store_new (NULL, &error);
  WickWeightModuleInfo info = { "bench", list, (size_t)n, WICK_WEIGHT_MEMORY_CUDA, path };
  struct timespec registered, prepared;
  clock_gettime (CLOCK_MONOTONIC, &registered);
  if (!wick_weight_store_register_module (store, &info, &error))
    die ("register", error.message);
  /* the spills pinned ahead (the default) finish before anything is timed */
  wick_weight_module_wait_prepared (store->modules[0]);
  clock_gettime (CLOCK_MONOTONIC, &prepared);
  WickWeightStats after_register;
  wick_weight_store_find_stats (store, "bench", &after_register);
  printf ("RESULT weights prepared-ahead register_to_prepared_s=%.3f spill_bytes=%" PRIu64
          " bytes=%" PRIu64 " pin=%s\n",
          (double)(prepared.tv_sec - registered.tv_sec)
            + (double)(prepared.tv_nsec - registered.tv_nsec) * 1e-9,
          after_register.spill_bytes, after_register.bytes,
          wick_weight_pin_registered ? "hugepages+cudaHostRegister" : "cudaHostAlloc");

  Timing ram_evict, ram_restore, disk_evict, disk_restore;
  Phases ram_phases, disk_phases;
  cycle (store, WICK_TIER_RAM, options.reps, 0, &ram_evict, &ram_restore, &ram_phases);
  verify (params, source, each, n);
  cycle (store, WICK_TIER_DISK, options.reps, 0, &disk_evict, &disk_restore, &disk_phases);
  verify (params, source, each, n);
  /* the same cycles with 200 ms between the calls */
  Timing s_ram_evict, s_ram_restore, s_disk_evict, s_disk_restore;
  Phases s_ram_phases, s_disk_phases;
  cycle (store, WICK_TIER_RAM, options.reps, 200, &s_ram_evict, &s_ram_restore, &s_ram_phases);
  verify (params, source, each, n);
  cycle (store, WICK_TIER_DISK, options.reps, 200, &s_disk_evict, &s_disk_restore, &s_disk_phases);
  verify (params, source, each, n);
  double torch = torch_load_seconds (options.script, path, options.reps);

  printf ("weight store on CUDA: %d parameters, %.2f GB, median of %d (cold run apart)\n", n, gb,
          options.reps);
  printf ("  %-34s %8.2f GB/s\n", "baseline pinned host -> device", gb / h2d);
  printf ("  %-34s %8.2f GB/s\n", "baseline device -> pinned host", gb / d2h);
  printf ("  %-34s %8.2f GB/s  %5.1f%% of H2D\n", "H2D from n distinct pinned buffers",
          gb / h2d_distinct, 100 * h2d / h2d_distinct);
  printf ("  %-34s %8.2f GB/s  %5.1f%% of H2D\n", "H2D into n fresh VMM mappings",
          gb / h2d_fresh, 100 * h2d / h2d_fresh);
  printf ("  %-34s %8.2f GB/s  %5.1f%% of D2H  (cold %.2f GB/s)\n", "evict, RAM tier",
          gb / ram_evict.warm, 100 * d2h / ram_evict.warm, gb / ram_evict.cold);
  printf ("  %-34s %8.2f GB/s  (%.1f ms)\n", "VMM reserve+create+map, no copy", gb / vmm,
          vmm * 1e3);
  printf ("  %-34s %8.2f GB/s  %5.1f%% of H2D  (cold %.2f GB/s)\n", "restore, RAM tier",
          gb / ram_restore.warm, 100 * h2d / ram_restore.warm, gb / ram_restore.cold);
  printf ("  %-34s %8.2f GB/s  (%.1f ms)\n", "evict, disk tier", gb / disk_evict.warm,
          disk_evict.warm * 1e3);
  printf ("  %-34s %8.2f GB/s  (cold %.2f GB/s)\n", "restore, disk tier", gb / disk_restore.warm,
          gb / disk_restore.cold);
  if (torch > 0)
    printf ("  %-34s %8.2f GB/s  disk restore is %.2fx\n", "torch safetensors load_file(cuda)",
            gb / torch, torch / disk_restore.warm);
  else
    printf ("  %-34s unavailable (python3 with torch and safetensors)\n",
            "torch safetensors load_file(cuda)");
  print_phases ("phases, RAM tier", &ram_phases);
  print_phases ("phases, disk tier", &disk_phases);
  printf ("settled: 200 ms of host sleep after each eviction and restore (not timed)\n");
  printf ("  %-34s %8.2f GB/s  %5.1f%% of D2H\n", "evict, RAM tier, settled", gb / s_ram_evict.warm,
          100 * d2h / s_ram_evict.warm);
  printf ("  %-34s %8.2f GB/s  %5.1f%% of H2D\n", "restore, RAM tier, settled",
          gb / s_ram_restore.warm, 100 * h2d / s_ram_restore.warm);
  printf ("  %-34s %8.2f GB/s", "restore, disk tier, settled", gb / s_disk_restore.warm);
  if (torch > 0)
    printf ("  disk restore is %.2fx torch", torch / s_disk_restore.warm);
  printf ("\n");
  print_phases ("phases, RAM tier, settled", &s_ram_phases);
  print_phases ("phases, disk tier, settled", &s_disk_phases);
  /* the contenders last: a failure there (die) leaves the figures above */
  fflush (stdout);
  if (getenv ("WICK_BENCH_WEIGHT_CONTENDERS") == NULL
      || strcmp (getenv ("WICK_BENCH_WEIGHT_CONTENDERS"), "0") != 0)
    {
      run_contenders (store, each, n, options.reps < 7 ? 7 : options.reps);
      verify (params, source, each, n);
      run_pinning (store, params, each, n, 3);
      verify (params, source, each, n);
    }
  if (getenv ("WICK_BENCH_WEIGHT_DIAGNOSTICS") != NULL)
    {
      printf ("diagnostics (WICK_BENCH_WEIGHT_DIAGNOSTICS):\n");
      fresh_diagnostics (each, n, options.reps, h2d, gb);
      digest_diagnostics (params, each, n, options.reps, gb);
      disk_diagnostics (path, params, each, n, options.reps, gb);
      verify (params, source, each, n);
    }
  wick_weight_store_free (store);
  for (int i = 0; i < n; i++)
    wick_weight_free_device (params[i], &error);
  unlink (path);
  free (params), free (source), free (list), free (names);
  return 0;
}
