/* wick-demo — a real instrumented workload for Wick's live mode.
 *
 * Trains the model of wick-demo-model.h on the CPU until stopped (SIGINT or
 * SIGTERM finish the trace cleanly) or for --steps N steps, recording spans
 * (train_step > data, forward, backward, optimizer, denoise_stage), ops,
 * on two threads — the main thread trains, a "data_loader" thread
 * (wick-demo-loader.h) prepares the next batch under its own spans —
 * tensors, memory, host memory samples and, at the capture step, one gradient
 * per manifest entry under an exact contract in which the frozen embedding is
 * the inactive family. It enables control, writes a safetensors checkpoint of
 * its weights at start and registers three weight modules (embedding, trunk,
 * head) with the weight store and the demo stages (CUDA where a GPU exists).
 *
 * Evicted weights: by default the demo waits — a step that needs an evicted
 * module is not run; the demo records "waiting_for_weights" spans and host
 * memory samples until the module is restored, then continues bit-exact.
 * With --restore-on-demand it restores the module itself at the next step.
 * Every step holds its modules with wick_weight_store_use_begin(), so an
 * eviction never lands in the middle of a step.
 *
 * Options: --steps N (0: until stopped), --rate STEPS_PER_SECOND (0: as fast
 * as possible; default 20), --trace FILE (also write the trace as JSONL),
 * --strict (no wick_ records in that file), --checkpoint FILE, --quiet,
 * --ring-bytes N (each thread's live ring; a small one makes a slow reader
 * lose records sooner: the remote slow-link test).
 *
 * --flood RECORDS_PER_SECOND (0: as fast as it can) records what a training
 * step records — the spans, ops, tensors, memory, tensor stats, host memory
 * samples, the loader thread's spans and the capture step's gradients —
 * without the model's arithmetic (but at the capture step, whose gradients
 * are real) or the demo stage's run, paced to that many
 * records a second: a producer for measuring a reader's cost a record. At
 * the end it prints the records it asked libwick for from its first step on
 * (the session's closing records among them) and those the ring dropped.
 * --start-on-signal waits after setup for SIGUSR1
 * before the first step, so that a reader attached first sees every record
 * of the steps.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wick/wick.h>

#include "wick-demo-stage.h"
#include "wick-demo-model.h"
#include "wick-demo-recording.h"

#define CAPTURE_STEP 3
#define WARMUP_STEPS 2
#define WAIT_SLICE_NS 50000000L

static const char *const module_names[] = { "embedding", "trunk", "head" };
#define N_MODULES (sizeof module_names / sizeof module_names[0])

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t start_requested;

typedef struct
{
  uint64_t steps;
  double rate;
  const char *trace;
  const char *checkpoint;
  bool strict;
  bool restore_on_demand;
  bool quiet;
  uint64_t ring_bytes;
  bool flood;
  double flood_rate; /* records a second; 0: as fast as it can */
  bool start_on_signal;
} DemoOptions;

typedef struct
{
  DemoOptions options;
  WickSession *session;
  WickWeightStore *store;
  WickGradientPlan *plan;
  WickDemoModel model;
  char checkpoint[4096];
  bool own_checkpoint;
  bool have_stages;
  WickDemoLoader *loader; /* the data-loader thread */
  bool refused; /* a module's restore was refused: the run cannot go on */
  uint64_t dropped; /* the ring's drops, read at the end */
} Demo;

static void
on_stop_signal (int signal_number)
{
  stop_requested = 1;
}

static void
on_start_signal (int signal_number)
{
  start_requested = 1;
}

static int
usage (void)
{
  fprintf (stderr, "Usage: wick-demo [--steps N] [--rate STEPS_PER_SECOND] [--trace FILE] "
                   "[--strict] [--checkpoint FILE] [--restore-on-demand] [--quiet] "
                   "[--ring-bytes N] [--flood RECORDS_PER_SECOND] [--start-on-signal]\n");
  return 2;
}

static bool
parse_options (int argc, char **argv, DemoOptions *options)
{
  *options = (DemoOptions){ .rate = 20.0 };
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      char *end = NULL;
      if (strcmp (arg, "--steps") == 0 && i + 1 < argc)
        options->steps = strtoull (argv[++i], &end, 10);
      else if (strcmp (arg, "--rate") == 0 && i + 1 < argc)
        {
          options->rate = strtod (argv[++i], &end);
          if (options->rate < 0)
            return false;
        }
      else if (strcmp (arg, "--trace") == 0 && i + 1 < argc)
        options->trace = argv[++i];
      else if (strcmp (arg, "--checkpoint") == 0 && i + 1 < argc)
        options->checkpoint = argv[++i];
      else if (strcmp (arg, "--strict") == 0)
        options->strict = true;
      else if (strcmp (arg, "--restore-on-demand") == 0)
        options->restore_on_demand = true;
      else if (strcmp (arg, "--quiet") == 0)
        options->quiet = true;
      else if (strcmp (arg, "--ring-bytes") == 0 && i + 1 < argc)
        options->ring_bytes = strtoull (argv[++i], &end, 10);
      else if (strcmp (arg, "--flood") == 0 && i + 1 < argc)
        {
          options->flood = true;
          options->flood_rate = strtod (argv[++i], &end);
          if (!(options->flood_rate >= 0))
            return false;
        }
      else if (strcmp (arg, "--start-on-signal") == 0)
        options->start_on_signal = true;
      else
        return false;
      if (end != NULL && *end != '\0')
        return false;
    }
  return true;
}

static const char *
family_of (const char *key, void *user_data)
{
  if (strncmp (key, "embedding.", 10) == 0)
    return "embedding";
  if (strncmp (key, "head.", 5) == 0)
    return "head";
  return "trunk";
}

static bool
build_gradient_plan (Demo *demo, WickError *error)
{
  const char *keys[WICK_DEMO_N_PARAMS];
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    keys[p] = wick_demo_param_name (p);
  static const WickGradientFamily families[] = {
    { "embedding", WICK_EXPECT_INACTIVE, 0 },
    { "head", WICK_EXPECT_ACTIVE, 1 },
    { "trunk", WICK_EXPECT_ACTIVE, 3 },
  };
  demo->plan = wick_gradient_plan_new ("parameters", keys, WICK_DEMO_N_PARAMS, family_of, NULL,
                                       families, 3, error);
  return demo->plan != NULL;
}

static bool
open_session (Demo *demo, WickError *error)
{
  static const WickTag tags[] = {
    { "workload", "wick-demo: bag-of-tokens regressor, SGD with momentum, CPU" },
    { "device_memory", "host resident set size (/proc/self/statm), not GPU memory" },
  };
  WickRunInfo run = {
    .entrypoint = "wick_demo.train",
    .phase = WICK_PHASE_TRAIN,
    .capture_step = CAPTURE_STEP,
    .warmup_steps = WARMUP_STEPS,
    .device = "cpu",
    .timing_mode = WICK_TIMING_HOST,
    .tags = tags,
    .n_tags = 2,
  };
  WickCaptureContract contract = {
    .measurement_scope = WICK_SCOPE_PROFILED_WORK,
    .operations = WICK_COVERAGE_COMPLETE,
    .tensors = WICK_COVERAGE_COMPLETE,
    .gradients = WICK_COVERAGE_COMPLETE,
    .logical_memory = WICK_COVERAGE_COMPLETE,
    .physical_memory = WICK_COVERAGE_PARTIAL,
    .device_timing = WICK_COVERAGE_NONE,
    .gradient_contract = wick_gradient_plan_get_contract (demo->plan),
  };
  WickSessionOptions options = {
    .jsonl_path = demo->options.trace,
    .strict = demo->options.strict,
    .policy = WICK_RING_DROP,
    .ring_bytes = (size_t)demo->options.ring_bytes,
    .enable_control = true,
  };
  demo->session = wick_session_open (&run, &contract, &options, error);
  return demo->session != NULL && wick_session_enable_control (demo->session, error);
}

static void *
alloc_weight (size_t bytes, void *user_data)
{
  WickError error;
  void *data = wick_weight_alloc_host (bytes, &error);
  if (data == NULL)
    fprintf (stderr, "wick-demo: %s\n", error.message);
  return data;
}

static void
free_weight (void *data, void *user_data)
{
  WickError error;
  if (!wick_weight_free_host (data, &error))
    fprintf (stderr, "wick-demo: %s\n", error.message);
}

static void
param_tensor (Demo *demo, WickDemoParam p, bool local_name, uint64_t dims[2], WickWeightParam *out)
{
  uint32_t rank = wick_demo_param_shape (&demo->model, p, dims);
  *out = (WickWeightParam){
    .name = local_name ? wick_demo_param_local_name (p) : wick_demo_param_name (p),
    .data = demo->model.params[p],
    .dtype = WICK_DTYPE_F32,
    .shape = dims,
    .n_dims = rank,
  };
}

static bool
write_checkpoint (Demo *demo, WickError *error)
{
  if (demo->options.checkpoint != NULL)
    snprintf (demo->checkpoint, sizeof demo->checkpoint, "%s", demo->options.checkpoint);
  else
    {
      const char *tmp = getenv ("TMPDIR");
      snprintf (demo->checkpoint, sizeof demo->checkpoint, "%s/wick-demo-%ld.safetensors",
                tmp != NULL && tmp[0] == '/' ? tmp : "/tmp", (long)getpid ());
      demo->own_checkpoint = true;
    }
  WickWeightParam tensors[WICK_DEMO_N_PARAMS];
  uint64_t dims[WICK_DEMO_N_PARAMS][2];
  for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
    param_tensor (demo, p, false, dims[p], &tensors[p]);
  static const WickTag metadata[] = { { "format", "pt" }, { "producer", "wick-demo" } };
  return wick_safetensors_write (demo->checkpoint, tensors, WICK_DEMO_N_PARAMS,
                                 WICK_WEIGHT_MEMORY_HOST, metadata, 2, error);
}

static bool
register_modules (Demo *demo, WickError *error)
{
  demo->store = wick_weight_store_new (demo->session, error);
  if (demo->store == NULL)
    return false;
  for (size_t m = 0; m < N_MODULES; m++)
    {
      WickWeightParam params[WICK_DEMO_N_PARAMS];
      uint64_t dims[WICK_DEMO_N_PARAMS][2];
      size_t n = 0;
      for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
        if (strcmp (wick_demo_param_module (p), module_names[m]) == 0)
          {
            param_tensor (demo, p, true, dims[n], &params[n]);
            n++;
          }
      WickWeightModuleInfo info = {
        .name = module_names[m],
        .params = params,
        .n_params = n,
        .memory = WICK_WEIGHT_MEMORY_HOST,
        .checkpoint = demo->checkpoint,
      };
      if (!wick_weight_store_register_module (demo->store, &info, error))
        return false;
    }
  return true;
}

static bool
setup (Demo *demo, WickError *error)
{
  static const WickDemoShape shape = {
    .vocab = 8192,
    .width = 128,
    .hidden = 256,
    .outputs = 8,
    .batch = 64,
    .bag = 4,
  };
  if (!build_gradient_plan (demo, error) || !open_session (demo, error))
    return false;
  if (!wick_demo_model_init (&demo->model, &shape, 42, alloc_weight, free_weight, NULL))
    {
      snprintf (error->message, sizeof error->message, "cannot allocate the model");
      return false;
    }
  if (!write_checkpoint (demo, error) || !register_modules (demo, error))
    return false;
  WickDemoRecorder recorder = { demo->session, &demo->model, 0, NULL };
  wick_demo_record_setup (&recorder);
  demo->loader = wick_demo_loader_start (demo->session, &demo->model, error);
  if (demo->loader == NULL)
    return false;
  WickError stage_error;
  demo->have_stages = wick_demo_stage_register (demo->session, &stage_error);
  if (!demo->have_stages)
    fprintf (stderr, "wick-demo: no demo stage: %s\n", stage_error.message);
  return true;
}

/* True when every module is resident (restoring on demand when asked to). */
static bool
weights_ready (Demo *demo)
{
  for (size_t m = 0; m < N_MODULES; m++)
    {
      if (wick_weight_store_is_resident (demo->store, module_names[m]))
        continue;
      WickError error;
      if (!demo->options.restore_on_demand
          || !wick_weight_store_ensure_resident (demo->store, module_names[m], &error))
        return false;
    }
  return true;
}

static void
wait_for_weights (Demo *demo)
{
  WickSpanId span = wick_demo_span_begin (demo->session, "waiting_for_weights", WICK_SPAN_FUNCTION,
                                          WICK_STEP_NONE);
  struct timespec slice = { 0, WAIT_SLICE_NS };
  for (int i = 0; i < 4 && !stop_requested && !weights_ready (demo); i++)
    nanosleep (&slice, NULL);
  wick_demo_record_host_memory (demo->session);
  wick_demo_span_end (demo->session, span);
}

/* Holds every module resident for one step; false if one cannot be held. */
static bool
use_modules (Demo *demo, bool begin)
{
  for (size_t m = 0; m < N_MODULES; m++)
    {
      WickError error;
      if (!begin)
        wick_weight_store_use_end (demo->store, module_names[m]);
      else if (!wick_weight_store_use_begin (demo->store, module_names[m], &error))
        {
          while (m-- > 0)
            wick_weight_store_use_end (demo->store, module_names[m]);
          return false;
        }
    }
  return true;
}

static void
record_gradients (Demo *demo, const WickParameterGradient by_param[WICK_DEMO_N_PARAMS])
{
  size_t n = wick_gradient_plan_get_n_keys (demo->plan);
  WickParameterGradient in_manifest_order[WICK_DEMO_N_PARAMS];
  for (size_t i = 0; i < n && i < WICK_DEMO_N_PARAMS; i++)
    for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
      if (strcmp (wick_gradient_plan_get_key (demo->plan, i), wick_demo_param_name (p)) == 0)
        in_manifest_order[i] = by_param[p];
  WickError error;
  wick_demo_count_records (n);
  if (!wick_gradient_plan_record (demo->plan, demo->session, in_manifest_order, n, &error))
    fprintf (stderr, "wick-demo: recording gradients: %s\n", error.message);
}

static double
train_step (Demo *demo, uint64_t step)
{
  WickError error;
  WickSpanId span;
  if (step == CAPTURE_STEP)
    {
      wick_demo_count_records (1);
      span = wick_measurement_begin (demo->session, "train_step", &error);
    }
  else
    span = wick_demo_span_begin (demo->session, "train_step", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  bool flood = demo->options.flood;
  /* a flood computes only the capture step, so that the gradients it records
   * are real (present, not zero): its trace passes the gradient contract */
  WickDemoRecorder recorder
    = { demo->session, &demo->model, step, demo->loader, flood && step != CAPTURE_STEP };
  WickParameterGradient gradients[WICK_DEMO_N_PARAMS];
  /* a flood reads the gradients' norms only where it records them */
  double loss
    = wick_demo_record_step (&recorder, !flood || step == CAPTURE_STEP ? gradients : NULL);
  if (step == CAPTURE_STEP)
    record_gradients (demo, gradients);
  if (demo->have_stages && !flood)
    {
      WickSpanId stage
        = wick_demo_span_begin (demo->session, "denoise_stage", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      if (!wick_demo_stage_step (demo->session, step, &error))
        fprintf (stderr, "wick-demo: stage step: %s\n", error.message);
      wick_demo_span_end (demo->session, stage);
    }
  wick_demo_record_host_memory (demo->session);
  wick_demo_span_end (demo->session, span);
  return loss;
}

static void
pace (const DemoOptions *options, struct timespec *next)
{
  if (options->rate <= 0)
    return;
  long period_ns = (long)(1e9 / options->rate);
  next->tv_nsec += period_ns % 1000000000L;
  next->tv_sec += period_ns / 1000000000L + next->tv_nsec / 1000000000L;
  next->tv_nsec %= 1000000000L;
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  if (now.tv_sec > next->tv_sec + 1)
    *next = now; /* far behind (e.g. after waiting): do not race to catch up */
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR && !stop_requested)
    ;
}

/* --flood: sleeps until @records records since @start are due at the rate. */
static void
pace_records (const DemoOptions *options, const struct timespec *start, uint64_t records)
{
  if (options->flood_rate <= 0)
    return;
  double due = records / options->flood_rate;
  struct timespec next = *start;
  next.tv_sec += (time_t)due;
  next.tv_nsec += (long)((due - (double)(time_t)due) * 1e9);
  next.tv_sec += next.tv_nsec / 1000000000L;
  next.tv_nsec %= 1000000000L;
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR && !stop_requested)
    ;
}

static void
wait_for_start (void)
{
  struct timespec slice = { 0, 10000000L };
  while (!start_requested && !stop_requested)
    nanosleep (&slice, NULL);
}

static void
run (Demo *demo)
{
  struct timespec next;
  clock_gettime (CLOCK_MONOTONIC, &next);
  struct timespec flood_start = next;
  uint64_t first_record = wick_demo_get_records ();
  uint64_t step = 1;
  while (!stop_requested && (demo->options.steps == 0 || step <= demo->options.steps))
    {
      /* Residency check and use_begin as one step for the weight commands, so
       * an eviction between them cannot be undone by use_begin's on-demand
       * restore (the demo waits for Restore instead). */
      wick_session_lock_control (demo->session);
      bool ready = weights_ready (demo) && use_modules (demo, true);
      wick_session_unlock_control (demo->session);
      if (!ready)
        {
          /* A restore that refused damaged bytes will not be followed by a
           * good one by itself: say why and stop instead of waiting forever. */
          WickError refusal;
          for (size_t m = 0; m < N_MODULES && !demo->refused; m++)
            if (wick_weight_store_get_refusal (demo->store, module_names[m], &refusal))
              {
                fprintf (stderr, "wick-demo: stopping at step %llu: %s\n",
                         (unsigned long long)step, refusal.message);
                demo->refused = true;
              }
          if (demo->refused)
            break;
          wait_for_weights (demo);
          continue;
        }
      double loss = train_step (demo, step);
      use_modules (demo, false);
      if (!demo->options.quiet && (step % 100 == 0 || step == 1))
        printf ("step %llu loss %.6f\n", (unsigned long long)step, loss);
      fflush (stdout);
      step++;
      if (demo->options.flood)
        pace_records (&demo->options, &flood_start, wick_demo_get_records () - first_record);
      else
        pace (&demo->options, &next);
    }
}

/* What wick_session_finish writes for the demo: the weight store's frees of
 * the resident modules' parameters, the root span's end and the terminal. */
static void
count_finish_records (Demo *demo)
{
  for (size_t m = 0; demo->store != NULL && m < N_MODULES; m++)
    if (wick_weight_store_is_resident (demo->store, module_names[m]))
      for (int p = 0; p < WICK_DEMO_N_PARAMS; p++)
        if (strcmp (wick_demo_param_module (p), module_names[m]) == 0)
          wick_demo_count_records (1);
  wick_demo_count_records (2);
}

static int
finish (Demo *demo)
{
  int status = 0;
  WickError error;
  if (demo->session != NULL)
    {
      wick_session_disable_control (demo->session);
      wick_demo_loader_stop (demo->loader); /* ends its spans before the trace finishes */
      demo->loader = NULL;
      WickDemoRecorder recorder = { demo->session, &demo->model, 0, NULL };
      if (demo->model.params[0] != NULL)
        wick_demo_record_teardown (&recorder);
      count_finish_records (demo);
      if (!wick_session_finish (demo->session, &error))
        {
          fprintf (stderr, "wick-demo: finishing the trace: %s\n", error.message);
          status = 1;
        }
      demo->dropped = wick_session_get_dropped (demo->session);
      wick_session_close (demo->session); /* frees the weight store */
    }
  wick_demo_model_clear (&demo->model);
  wick_gradient_plan_free (demo->plan);
  if (demo->own_checkpoint)
    unlink (demo->checkpoint);
  return status;
}

int
main (int argc, char **argv)
{
  Demo demo;
  memset (&demo, 0, sizeof demo);
  if (!parse_options (argc, argv, &demo.options))
    return usage ();
  struct sigaction action = { .sa_handler = on_stop_signal };
  sigaction (SIGINT, &action, NULL);
  sigaction (SIGTERM, &action, NULL);
  signal (SIGPIPE, SIG_IGN);

  struct sigaction start_action = { .sa_handler = on_start_signal };
  sigaction (SIGUSR1, &start_action, NULL);

  WickError error;
  if (!setup (&demo, &error))
    {
      fprintf (stderr, "wick-demo: %s\n", error.message);
      finish (&demo);
      return 1;
    }
  if (!demo.options.quiet)
    printf ("wick-demo: pid %ld, control socket %s\n", (long)getpid (),
            wick_session_get_control_socket_path (demo.session));
  fflush (stdout);
  if (demo.options.start_on_signal)
    wait_for_start ();
  uint64_t first_record = wick_demo_get_records ();
  struct timespec begun, ended;
  clock_gettime (CLOCK_MONOTONIC, &begun);
  run (&demo);
  int status = finish (&demo);
  clock_gettime (CLOCK_MONOTONIC, &ended);
  if (demo.options.flood)
    {
      uint64_t records = wick_demo_get_records () - first_record;
      double seconds = (ended.tv_sec - begun.tv_sec) + (ended.tv_nsec - begun.tv_nsec) / 1e9;
      printf ("wick-demo: flood: %" PRIu64 " records from the first step to the end, %" PRIu64
              " dropped by the ring, in %.3f s (%.0f records/s)\n",
              records, demo.dropped, seconds, seconds > 0 ? records / seconds : 0.0);
      fflush (stdout);
    }
  return demo.refused ? 1 : status;
}
