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

#include <cuda_runtime_api.h>
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

/* Evicts and restores reps+1 times; the first run is the cold one. */
static void
cycle (WickWeightStore *store, WickTier tier, int reps, Timing *evict, Timing *restore)
{
  WickWeightStats stats;
  WickError error;
  double *e = calloc ((size_t)reps, sizeof *e), *r = calloc ((size_t)reps, sizeof *r);
  for (int i = 0; i <= reps; i++)
    {
      if (!wick_weight_store_evict (store, "bench", tier, &stats, &error))
        die ("evict", error.message);
      if ((tier == WICK_TIER_DISK && stats.ram != 0) || (tier == WICK_TIER_RAM && stats.disk != 0))
        die ("evict", "a parameter went to the other tier");
      double evict_seconds = stats.evict_seconds;
      if (!wick_weight_store_restore (store, "bench", &stats, &error))
        die ("restore", error.message);
      if (i == 0)
        evict->cold = evict_seconds, restore->cold = stats.restore_seconds;
      else
        e[i - 1] = evict_seconds, r[i - 1] = stats.restore_seconds;
    }
  evict->warm = median (e, reps);
  restore->warm = median (r, reps);
  free (e), free (r);
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
  if (!wick_weight_store_register_module (store, &info, &error))
    die ("register", error.message);

  Timing ram_evict, ram_restore, disk_evict, disk_restore;
  cycle (store, WICK_TIER_RAM, options.reps, &ram_evict, &ram_restore);
  verify (params, source, each, n);
  cycle (store, WICK_TIER_DISK, options.reps, &disk_evict, &disk_restore);
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
  wick_weight_store_free (store);
  for (int i = 0; i < n; i++)
    wick_weight_free_device (params[i], &error);
  unlink (path);
  free (params), free (source), free (list), free (names);
  return 0;
}
