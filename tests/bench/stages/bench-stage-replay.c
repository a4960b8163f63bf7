/* bench-stage-replay.c — replay cost per kernel of a certified stage against
 * a bare stream capture + cudaGraphLaunch of the same chain, in the same run.
 *
 * For chains of 128, 512 and 2048 small dependent kernels over 128 floats
 * (one block of 128 threads each; the 128 chain also at 32 and 256), with
 * per-node arguments (x = x·a_k + b_k, "varying") and with identical nodes
 * (x = x·0.999, "uniform", as the torch chain), it times, with CUDA events on one stream:
 *   eager  the chain launched kernel by kernel (the stage's eager path)
 *   bare   cudaStreamBeginCapture … cudaGraphLaunch of the same kernels
 *   wick   wick_stage_run() of the stage certified by wick_stage_capture()
 * in rounds that alternate bare and wick (median of rounds, and the median of
 * the per-round ratio wick/bare), and the wall time of wick_stage_capture()
 * (warm-up, capture, parity, speedup timing). Target: wick/bare <= 1.05.
 * tools/device/bench-stages.sh runs it beside bench-torch-graph.py.
 * Last, the replay contenders (bench_contenders: what torch.cuda.CUDAGraph
 * and this process do differently, one RESULT contender=... line each);
 * WICK_BENCH_CONTENDERS=0 skips them, =only runs nothing else;
 * WICK_BENCH_CONTENDER_NAMES=bare,wick,torch-like times only those named.
 *
 * Exits 77 (skipped) where no CUDA device is available. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stage-test-kernels.h"
#include "stages/wick-stage-private.h"

#define BENCH_N 128
#define BENCH_ROUNDS 11

typedef struct
{
  float *input, *output;
  int kernels;
  int threads;
  bool uniform; /* identical nodes x = x·0.999, as the torch chain */
} BenchChain;

/* WICK_BENCH_POOL=1: the chains' buffers are carved from one 64 MiB
 * allocation, as torch's caching allocator places tensors in large segments
 * (a probe found the same graph 0.81 µs a kernel at 128 kernels in a torch
 * process against 0.98 here); WICK_BENCH_PREALLOC_MIB=N: N MiB allocated and
 * written before anything else. Diagnostics of that gap. */
static unsigned char *bench_pool;
static size_t bench_pool_used;
#define BENCH_POOL_BYTES ((size_t)64 << 20)

static void *
bench_alloc (size_t bytes)
{
  if (bench_pool != NULL && bench_pool_used + bytes <= BENCH_POOL_BYTES)
    {
      void *p = bench_pool + bench_pool_used;
      bench_pool_used += (bytes + 511) / 512 * 512;
      return p;
    }
  return stage_test_alloc (bytes);
}

static void
bench_free (void *p)
{
  if (bench_pool == NULL || (unsigned char *)p < bench_pool
      || (unsigned char *)p >= bench_pool + BENCH_POOL_BYTES)
    stage_test_free (p);
}

static void
bench_enqueue (void *stream, void *user_data)
{
  BenchChain *chain = user_data;
  if (chain->uniform)
    {
      stage_test_chain_uniform (chain->input, chain->output, BENCH_N, chain->kernels,
                                chain->threads, stream);
      return;
    }
  stage_test_chain_threads (chain->input, chain->output, BENCH_N, chain->kernels, chain->threads,
                            stream);
}

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef enum
{
  RUN_EAGER,
  RUN_BARE,
  RUN_WICK
} RunKind;

typedef struct
{
  BenchChain chain;
  void *stream, *bare, *start, *stop;
  WickStage *stage;
  int launches; /* per timed block */
} Bench;

/* Microseconds per kernel of one timed block of launches. */
static double
time_block (Bench *bench, RunKind kind)
{
  stage_test_event_record (bench->start, bench->stream);
  for (int i = 0; i < bench->launches; i++)
    switch (kind)
      {
        case RUN_EAGER:
          bench_enqueue (bench->stream, &bench->chain);
          break;
        case RUN_BARE:
          stage_test_graph_launch (bench->bare, bench->stream);
          break;
        case RUN_WICK:
          wick_stage_run (bench->stage, bench->stream, NULL);
          break;
      }
  stage_test_event_record (bench->stop, bench->stream);
  double ms = stage_test_event_ms (bench->start, bench->stop);
  return ms * 1e3 / ((double)bench->launches * bench->chain.kernels);
}

static bool
bench_setup (Bench *bench, int kernels, int threads, bool uniform, WickCertification *cert,
             double *capture_ms)
{
  memset (bench, 0, sizeof *bench);
  bench->chain.uniform = uniform;
  bench->chain.kernels = kernels;
  bench->chain.threads = threads;
  bench->chain.input = bench_alloc (BENCH_N * sizeof (float));
  bench->chain.output = bench_alloc (BENCH_N * sizeof (float));
  float host[BENCH_N];
  for (int i = 0; i < BENCH_N; i++)
    host[i] = sinf ((float)i);
  stage_test_upload (bench->chain.input, host, sizeof host);
  bench->stream = stage_test_stream_new ();
  bench->start = stage_test_event_new ();
  bench->stop = stage_test_event_new ();
  bench->launches = kernels >= 2048 ? 10 : kernels >= 512 ? 20 : 50;

  static const int64_t shape[1] = { BENCH_N };
  WickStageInfo info = {
    .name = "chain",
    .enqueue = bench_enqueue,
    .user_data = &bench->chain,
    .windows = &(WickStageBuffer){ "input", bench->chain.input, WICK_STAGE_DTYPE_F32, shape, 1 },
    .n_windows = 1,
    .output = { NULL, bench->chain.output, WICK_STAGE_DTYPE_F32, shape, 1 },
  };
  WickError error = { "" };
  bench->stage = wick_stage_new (NULL, &info, &error);
  if (bench->stage == NULL)
    {
      fprintf (stderr, "bench-stage-replay: %s\n", error.message);
      return false;
    }
  double begin = now_ms ();
  wick_stage_capture (bench->stage, NULL, cert, &error);
  *capture_ms = now_ms () - begin;
  if (!cert->accepted)
    {
      fprintf (stderr, "bench-stage-replay: chain of %d refused: %s\n", kernels, cert->reason);
      return false;
    }
  bench->bare = stage_test_bare_graph_variant (
    bench->chain.input, bench->chain.output, BENCH_N, kernels, threads,
    uniform ? STAGE_TEST_VARIANT_UNIFORM : STAGE_TEST_VARIANT_DEFAULT, bench->stream);
  return bench->bare != NULL;
}

static void
bench_teardown (Bench *bench)
{
  wick_stage_free (bench->stage);
  if (bench->bare != NULL)
    stage_test_graph_free (bench->bare);
  stage_test_event_free (bench->start);
  stage_test_event_free (bench->stop);
  stage_test_stream_free (bench->stream);
  bench_free (bench->chain.input);
  bench_free (bench->chain.output);
}

static int
bench_chain (int kernels, int threads, bool uniform)
{
  Bench bench;
  WickCertification cert;
  double capture_ms = 0.0;
  if (!bench_setup (&bench, kernels, threads, uniform, &cert, &capture_ms))
    {
      bench_teardown (&bench);
      return 1;
    }
  /* warm-up of every path */
  time_block (&bench, RUN_EAGER);
  time_block (&bench, RUN_BARE);
  time_block (&bench, RUN_WICK);

  double eager[BENCH_ROUNDS], bare[BENCH_ROUNDS], wick[BENCH_ROUNDS], ratio[BENCH_ROUNDS];
  for (int r = 0; r < BENCH_ROUNDS; r++)
    {
      eager[r] = time_block (&bench, RUN_EAGER);
      if (r % 2 == 0)
        {
          bare[r] = time_block (&bench, RUN_BARE);
          wick[r] = time_block (&bench, RUN_WICK);
        }
      else
        {
          wick[r] = time_block (&bench, RUN_WICK);
          bare[r] = time_block (&bench, RUN_BARE);
        }
      ratio[r] = wick[r] / bare[r];
    }
  double ratio_min = ratio[0], ratio_max = ratio[0];
  for (int r = 1; r < BENCH_ROUNDS; r++)
    {
      ratio_min = fmin (ratio_min, ratio[r]);
      ratio_max = fmax (ratio_max, ratio[r]);
    }
  double ratio_median = wick_gate_median (ratio, BENCH_ROUNDS);
  printf (
    "RESULT kernels=%d threads=%d chain=%s eager_us_per_kernel=%.4f bare_us_per_kernel=%.4f "
    "wick_us_per_kernel=%.4f wick_over_bare=%.4f wick_over_bare_min=%.4f "
    "wick_over_bare_max=%.4f capture_gating_ms=%.2f cert_speedup=%.3f cert_kernel_nodes=%llu\n",
    kernels, threads, uniform ? "uniform" : "varying", wick_gate_median (eager, BENCH_ROUNDS),
    wick_gate_median (bare, BENCH_ROUNDS), wick_gate_median (wick, BENCH_ROUNDS), ratio_median,
    ratio_min, ratio_max, capture_ms, cert.speedup_median, (unsigned long long)cert.kernel_nodes);
  bench_teardown (&bench);
  return 0;
}

/* The bare graph built in other ways, each against the default in the same
 * rounds: what the replay cost per kernel depends on. */
static void
bench_variants (int kernels)
{
  static const char *names[STAGE_TEST_N_VARIANTS] = {
    "default", "auto-free", "node-priority", "global-mode", "torch-like", "same-kernel", "uniform",
  };
  Bench bench;
  WickCertification cert;
  double capture_ms;
  if (!bench_setup (&bench, kernels, 128, false, &cert, &capture_ms))
    {
      bench_teardown (&bench);
      return;
    }
  void *execs[STAGE_TEST_N_VARIANTS];
  for (int v = 0; v < STAGE_TEST_N_VARIANTS; v++)
    execs[v] = stage_test_bare_graph_variant (bench.chain.input, bench.chain.output, BENCH_N,
                                              kernels, 128, v, bench.stream);
  double cost[STAGE_TEST_N_VARIANTS][BENCH_ROUNDS];
  void *saved = bench.bare;
  for (int r = -1; r < BENCH_ROUNDS; r++)
    for (int v = 0; v < STAGE_TEST_N_VARIANTS; v++)
      {
        int index = r % 2 == 0 ? v : STAGE_TEST_N_VARIANTS - 1 - v;
        if (execs[index] == NULL)
          continue;
        bench.bare = execs[index];
        double us = time_block (&bench, RUN_BARE);
        if (r >= 0)
          cost[index][r] = us;
      }
  bench.bare = saved;
  for (int v = 0; v < STAGE_TEST_N_VARIANTS; v++)
    {
      if (execs[v] == NULL)
        {
          printf ("VARIANT kernels=%d variant=%s failed\n", kernels, names[v]);
          continue;
        }
      printf ("VARIANT kernels=%d variant=%s us_per_kernel=%.4f\n", kernels, names[v],
              wick_gate_median (cost[v], BENCH_ROUNDS));
      stage_test_graph_free (execs[v]);
    }
  bench_teardown (&bench);
}

/* The bare graph launched with the host spinning gap_us between two launches
 * (as a Python loop's overhead spaces torch's replays): whether the cost a
 * kernel depends on how far ahead the host is. The same
 * cells run in a torch process in bench-graph-probe.py. */
static void
bench_gaps (int kernels)
{
  static const double gaps[] = { 0.0, 2.0, 5.0, 10.0, 20.0, 50.0 };
  enum { N_GAPS = sizeof gaps / sizeof gaps[0] };
  Bench bench;
  WickCertification cert;
  double capture_ms;
  if (!bench_setup (&bench, kernels, 128, false, &cert, &capture_ms))
    {
      bench_teardown (&bench);
      return;
    }
  double cost[N_GAPS][BENCH_ROUNDS];
  for (int r = -1; r < BENCH_ROUNDS; r++)
    for (int g = 0; g < N_GAPS; g++)
      {
        int index = r % 2 == 0 ? g : N_GAPS - 1 - g;
        double ms = stage_test_time_launches (bench.bare, bench.stream, bench.launches, gaps[index]);
        if (r >= 0)
          cost[index][r] = ms * 1e3 / ((double)bench.launches * kernels);
      }
  for (int g = 0; g < N_GAPS; g++)
    printf ("GAP process=c kernels=%d gap_us=%.0f us_per_kernel=%.4f\n", kernels, gaps[g],
            wick_gate_median (cost[g], BENCH_ROUNDS));
  bench_teardown (&bench);
}

/* The contender functions of stage-test-kernels.cu, from this binary or
 * from libstage-replay-bench.so dlopen()ed beside it (its own copy of the
 * kernels and of the static CUDA runtime, as a Python process that loads
 * it with ctypes has them: a probe found the same graph 0.83 µs a kernel
 * there against 1.01 in this process). */
typedef struct
{
  int (*count) (void);
  void (*name) (int, char *, size_t);
  StageTestContender *(*make) (int, int, int, char *, size_t);
  double (*time) (StageTestContender *, int);
  void (*destroy) (StageTestContender *);
} ContenderOps;

static const ContenderOps here
  = { stage_test_contender_count, stage_test_contender_name, stage_test_contender_new,
      stage_test_contender_time, stage_test_contender_free };

/* NULL where the library is not beside the binary (WICK_BENCH_LIB names another). */
static const ContenderOps *
library_ops (void)
{
  static ContenderOps ops;
  static int loaded = -1;
  if (loaded >= 0)
    return loaded ? &ops : NULL;
  loaded = 0;
  char path[4096];
  const char *named = getenv ("WICK_BENCH_LIB");
  if (named != NULL)
    snprintf (path, sizeof path, "%s", named);
  else
    {
      ssize_t n = readlink ("/proc/self/exe", path, sizeof path - 64);
      if (n <= 0)
        return NULL;
      path[n] = '\0';
      char *slash = strrchr (path, '/');
      if (slash == NULL)
        return NULL;
      snprintf (slash + 1, 64, "libstage-replay-bench.so");
    }
  void *lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    {
      printf ("CONTENDER dlopen of %s failed: %s\n", path, dlerror ());
      return NULL;
    }
  ops.count = (int (*) (void))dlsym (lib, "stage_test_contender_count");
  ops.name = (void (*) (int, char *, size_t))dlsym (lib, "stage_test_contender_name");
  ops.make = (StageTestContender * (*)(int, int, int, char *, size_t))
    dlsym (lib, "stage_test_contender_new");
  ops.time = (double (*) (StageTestContender *, int))dlsym (lib, "stage_test_contender_time");
  ops.destroy = (void (*) (StageTestContender *))dlsym (lib, "stage_test_contender_free");
  loaded = ops.count && ops.name && ops.make && ops.time && ops.destroy;
  if (!loaded)
    printf ("CONTENDER %s lacks the contender functions\n", path);
  return loaded ? &ops : NULL;
}

typedef struct
{
  const ContenderOps *ops;
  StageTestContender *c;
  char name[64];
  bool failed;
} Entry;

/* The replay contenders (stage_test_contender_name), each timed in the
 * same rounds as wick_stage_run() ("wick"), the same stage instantiated as
 * torch does ("wick-torch-flags", WICK_STAGE_GRAPH=torch) and the bench's
 * own bare graph ("bench-bare"), the order rotated each round; plus "dlopen:bare" and
 * "dlopen:torch-like", made by the library's copy. A line a contender: its
 * median µs a kernel and the median (min-max) of its per-round ratio to the
 * contender "bare" (tools/device/bench-stages.sh adds the ratio to torch's
 * figure of the same call). */
/* WICK_BENCH_CONTENDER_NAMES=bare,wick,torch-like: only the contenders named
 * (comma-separated) are made and timed; unset, all of them. The ratios are
 * to "bare", so a list without it gives none. */
static bool
contender_wanted (const char *name)
{
  const char *list = getenv ("WICK_BENCH_CONTENDER_NAMES");
  if (list == NULL || list[0] == '\0')
    return true;
  size_t n = strlen (name);
  for (const char *at = list; *at != '\0';)
    {
      const char *end = strchr (at, ',');
      size_t len = end != NULL ? (size_t)(end - at) : strlen (at);
      if (len == n && strncmp (at, name, n) == 0)
        return true;
      if (end == NULL)
        break;
      at = end + 1;
    }
  return false;
}

static void
bench_contenders (int kernels)
{
  Bench bench;
  WickCertification cert;
  double capture_ms;
  if (!bench_setup (&bench, kernels, 128, false, &cert, &capture_ms))
    {
      bench_teardown (&bench);
      return;
    }
  /* the same chain as a stage instantiated as torch does (WICK_STAGE_GRAPH=torch) */
  Bench torch_flags;
  WickCertification torch_cert;
  bool want_torch_flags = contender_wanted ("wick-torch-flags");
  memset (&torch_flags, 0, sizeof torch_flags);
  setenv ("WICK_STAGE_GRAPH", "torch", 1);
  bool have_torch_flags
    = want_torch_flags && bench_setup (&torch_flags, kernels, 128, false, &torch_cert, &capture_ms);
  unsetenv ("WICK_STAGE_GRAPH");
  int n = stage_test_contender_count ();
  const ContenderOps *lib = library_ops ();
  static const char *const from_lib[] = { "bare", "torch-like" };
  int total = n + 3 + (lib != NULL ? 2 : 0);
  Entry *e = calloc ((size_t)total, sizeof *e);
  double (*cost)[BENCH_ROUNDS] = calloc ((size_t)total, sizeof *cost);
  double (*ratio)[BENCH_ROUNDS] = calloc ((size_t)total, sizeof *ratio);
  for (int i = 0; i < n; i++)
    {
      e[i].ops = &here;
      here.name (i, e[i].name, sizeof e[i].name);
      char why[256] = "";
      if (!contender_wanted (e[i].name))
        e[i].failed = true;
      else if ((e[i].c = here.make (i, kernels, 128, why, sizeof why)) == NULL)
        {
          printf ("CONTENDER kernels=%d contender=%s unavailable: %s\n", kernels, e[i].name, why);
          e[i].failed = true;
        }
    }
  snprintf (e[n].name, sizeof e[n].name, "wick");
  snprintf (e[n + 1].name, sizeof e[n + 1].name, "bench-bare");
  snprintf (e[n + 2].name, sizeof e[n + 2].name, "wick-torch-flags");
  e[n].failed = !contender_wanted ("wick");
  e[n + 1].failed = !contender_wanted ("bench-bare");
  e[n + 2].failed = !have_torch_flags;
  if (!have_torch_flags && want_torch_flags)
    printf ("CONTENDER kernels=%d contender=wick-torch-flags unavailable\n", kernels);
  for (int j = 0; lib != NULL && j < 2; j++)
    {
      Entry *x = &e[n + 3 + j];
      x->ops = lib;
      snprintf (x->name, sizeof x->name, "dlopen:%s", from_lib[j]);
      int which = -1;
      for (int i = 0; i < lib->count () && which < 0; i++)
        {
          char name[64];
          lib->name (i, name, sizeof name);
          if (strcmp (name, from_lib[j]) == 0)
            which = i;
        }
      char why[256] = "not in the library";
      if (!contender_wanted (x->name))
        x->failed = true;
      else if (which < 0 || (x->c = lib->make (which, kernels, 128, why, sizeof why)) == NULL)
        {
          printf ("CONTENDER kernels=%d contender=%s unavailable: %s\n", kernels, x->name, why);
          x->failed = true;
        }
    }
  for (int r = -1; r < BENCH_ROUNDS; r++)
    {
      for (int k = 0; k < total; k++)
        {
          int i = (k + (r < 0 ? 0 : r * 5)) % total;
          double us;
          if (e[i].failed)
            continue;
          if (e[i].ops != NULL)
            {
              double ms = e[i].ops->time (e[i].c, bench.launches);
              if (ms < 0)
                {
                  printf ("CONTENDER kernels=%d contender=%s failed while timed\n", kernels,
                          e[i].name);
                  e[i].failed = true;
                  continue;
                }
              us = ms * 1e3 / ((double)bench.launches * kernels);
            }
          else if (i == n + 2)
            us = time_block (&torch_flags, RUN_WICK);
          else
            us = time_block (&bench, i == n ? RUN_WICK : RUN_BARE);
          if (r >= 0)
            cost[i][r] = us;
        }
      if (r >= 0 && !e[0].failed)
        for (int i = 0; i < total; i++)
          ratio[i][r] = cost[i][r] / cost[0][r];
    }
  for (int i = 0; i < total; i++)
    {
      if (e[i].failed)
        continue;
      double lo = cost[i][0], hi = cost[i][0], rlo = ratio[i][0], rhi = ratio[i][0];
      for (int r = 1; r < BENCH_ROUNDS; r++)
        {
          lo = fmin (lo, cost[i][r]), hi = fmax (hi, cost[i][r]);
          rlo = fmin (rlo, ratio[i][r]), rhi = fmax (rhi, ratio[i][r]);
        }
      bool base = !e[0].failed;
      printf ("RESULT contender=%s kernels=%d us_per_kernel=%.4f min=%.4f max=%.4f "
              "over_bare=%.4f over_bare_min=%.4f over_bare_max=%.4f\n",
              e[i].name, kernels, wick_gate_median (cost[i], BENCH_ROUNDS), lo, hi,
              base ? wick_gate_median (ratio[i], BENCH_ROUNDS) : 0.0, base ? rlo : 0.0,
              base ? rhi : 0.0);
    }
  for (int i = 0; i < total; i++)
    if (e[i].c != NULL)
      e[i].ops->destroy (e[i].c);
  free (e), free (cost), free (ratio);
  if (want_torch_flags) /* set up (or tried): a teardown of what was made */
    bench_teardown (&torch_flags);
  bench_teardown (&bench);
}

int
main (void)
{
  WickError why = { "" };
  if (!wick_cuda_available (&why))
    {
      printf ("bench-stage-replay: skipped, %s\n", why.message);
      return 77;
    }
  const char *prealloc = getenv ("WICK_BENCH_PREALLOC_MIB");
  if (prealloc != NULL && atoi (prealloc) > 0)
    {
      size_t bytes = (size_t)atoi (prealloc) << 20;
      void *big = stage_test_alloc (bytes);
      void *zeros = calloc (1, bytes);
      if (big == NULL || zeros == NULL || !stage_test_upload (big, zeros, bytes))
        fprintf (stderr, "bench-stage-replay: prealloc of %zu bytes failed\n", bytes);
      free (zeros);
    }
  if (getenv ("WICK_BENCH_POOL") != NULL)
    bench_pool = stage_test_alloc (BENCH_POOL_BYTES);
  const char *loading = getenv ("CUDA_MODULE_LOADING");
  printf ("BENCH prealloc_mib=%s pool=%s module_loading=%s\n", prealloc ? prealloc : "0",
          bench_pool ? "yes" : "no", loading ? loading : "default");
  int status = 0;
  /* WICK_BENCH_CONTENDERS=only: the contenders alone; =0: none. They run
   * last, so that one that breaks the process leaves the figures above. */
  const char *which = getenv ("WICK_BENCH_CONTENDERS");
  bool contenders = which == NULL || strcmp (which, "0") != 0;
  if (which != NULL && strcmp (which, "only") == 0)
    {
      for (int i = 0; i < 3; i++)
        bench_contenders (i == 0 ? 128 : i == 1 ? 512 : 2048);
      return status;
    }
  /* 128 threads a block, as torch's elementwise kernels on 128 floats; then
   * the 128-kernel chain at 32 and 256 threads, to show the launch shape's
   * share of the per-kernel cost */
  const int chains[5][2] = { { 128, 128 }, { 512, 128 }, { 2048, 128 }, { 128, 32 }, { 128, 256 } };
  for (int i = 0; i < 5; i++)
    status |= bench_chain (chains[i][0], chains[i][1], false);
  /* identical nodes, the closest equivalent of the torch chain */
  for (int i = 0; i < 3; i++)
    status |= bench_chain (chains[i][0], 128, true);
  bench_variants (128);
  bench_variants (512);
  bench_gaps (128);
  bench_gaps (512);
  fflush (stdout);
  for (int i = 0; contenders && i < 3; i++)
    bench_contenders (i == 0 ? 128 : i == 1 ? 512 : 2048);
  return status;
}
