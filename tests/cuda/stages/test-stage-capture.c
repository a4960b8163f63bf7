/* test-stage-capture.c — stage capture on a real GPU (suite cuda; every test
 * skips with a message where no device is available).
 *
 * A certified capture replays bit-exact against eager while the window
 * contents change; in-graph RNG is refused by parity; one long kernel is
 * refused by the speedup gate; window mismatches are refused; an error during
 * capture leaves the stage eager and working; the device's parity figures
 * equal the CPU reference's for f32, f16 and bf16; a capture from another
 * thread while the host runs the stage is safe; the demo's stages are
 * accepted and refused as they should be and both certificates reach the
 * trace. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "stage-test-kernels.h"
#include "demo/wick-demo-stage.h"
#include "stages/wick-stage-private.h"
#include "stages/wick-stage-gates.h"
#include "stages/wick-stage-gates-private.h"

#define CHAIN_N 4096
#define CHAIN_KERNELS 64

static bool
need_gpu (void)
{
  WickError why = { "" };
  if (wick_cuda_available (&why))
    return true;
  g_autofree char *message = g_strdup_printf ("needs a CUDA device: %s", why.message);
  g_test_skip (message);
  return false;
}

/* --- a chain stage -------------------------------------------------------- */

typedef struct
{
  float *input; /* window */
  float *output;
  int kernels;
  bool sync_inside; /* synchronises mid-way: legal eagerly, illegal in a capture */
  bool own_stream;  /* enqueues on a stream of its own, not the one given */
  void *private_stream;
  uint64_t seed; /* > 0: adds noise keyed by a counter (in-graph RNG) */
  int runs;
  int sync_errors; /* refusals of the mid-way synchronisation */
} Chain;

static void
chain_enqueue_into (Chain *chain, float *output, void *stream)
{
  chain->runs++;
  if (chain->own_stream)
    stream = chain->private_stream;
  if (chain->sync_inside)
    {
      stage_test_chain (chain->input, output, CHAIN_N, chain->kernels / 2, stream);
      if (stage_test_stream_synchronize (stream) != 0)
        chain->sync_errors++;
      stage_test_chain (output, output, CHAIN_N, chain->kernels / 2, stream);
      /* the host checks its own launches: a test that links its own CUDA
       * runtime keeps its own last error, which libwick cannot see or clear */
      stage_test_last_error ();
      return;
    }
  stage_test_chain (chain->input, output, CHAIN_N, chain->kernels, stream);
  if (chain->seed > 0)
    stage_test_noise (output, output, CHAIN_N, chain->seed++, stream);
}

static void
chain_enqueue (void *stream, void *user_data)
{
  Chain *chain = user_data;
  chain_enqueue_into (chain, chain->output, stream);
}

static void
chain_reference (void *stream, void *output, void *user_data)
{
  chain_enqueue_into (user_data, output, stream);
}

static const int64_t chain_shape[1] = { CHAIN_N };

static WickStage *
chain_stage_new (Chain *chain, const char *name, int kernels)
{
  memset (chain, 0, sizeof *chain);
  chain->kernels = kernels;
  chain->input = stage_test_alloc (CHAIN_N * sizeof (float));
  chain->output = stage_test_alloc (CHAIN_N * sizeof (float));
  g_assert_nonnull (chain->input);
  g_assert_nonnull (chain->output);
  float host[CHAIN_N];
  for (int i = 0; i < CHAIN_N; i++)
    host[i] = sinf ((float)i);
  g_assert_true (stage_test_upload (chain->input, host, sizeof host));
  WickStageBuffer window = { "input", chain->input, WICK_STAGE_DTYPE_F32, chain_shape, 1 };
  WickStageInfo info = {
    .name = name,
    .enqueue = chain_enqueue,
    .reference = chain_reference,
    .user_data = chain,
    .windows = &window,
    .n_windows = 1,
    .output = { NULL, chain->output, WICK_STAGE_DTYPE_F32, chain_shape, 1 },
  };
  WickError error = { "" };
  WickStage *stage = wick_stage_new (NULL, &info, &error);
  g_assert_cmpstr (error.message, ==, "");
  return stage;
}

static void
chain_free (Chain *chain)
{
  stage_test_free (chain->input);
  stage_test_free (chain->output);
}

static void
random_input (float *values, uint32_t seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  for (int i = 0; i < CHAIN_N; i++)
    values[i] = (float)g_rand_double_range (rand, -2.0, 2.0);
  g_rand_free (rand);
}

static void
test_certified_bit_exact (void)
{
  if (!need_gpu ())
    return;
  Chain chain;
  WickStage *stage = chain_stage_new (&chain, "chain", CHAIN_KERNELS);
  WickCertification cert;
  WickError error = { "" };
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  g_test_message ("certificate: %s", cert.reason);
  g_assert_true (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "accepted");
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_CAPTURED);
  g_assert_cmpuint (cert.kernel_nodes, ==, CHAIN_KERNELS);
  g_assert_cmpfloat (cert.parity_cos, ==, 1.0);
  g_assert_cmpfloat (cert.max_abs, ==, 0.0);
  g_assert_cmpfloat (cert.p99_abs, ==, 0.0);
  g_assert_true (cert.speedup_checked && cert.speedup_median >= 1.02);
  g_assert_true (cert.speedup_min <= cert.speedup_median
                 && cert.speedup_median <= cert.speedup_max);
  g_assert_true (cert.eager_ms > cert.replay_ms);

  void *stream = stage_test_stream_new ();
  float *eager = stage_test_alloc (CHAIN_N * sizeof (float));
  static float input[CHAIN_N], replayed[CHAIN_N], expected[CHAIN_N], previous[CHAIN_N];
  for (uint32_t round = 0; round < 6; round++)
    {
      random_input (input, round + 1);
      g_assert_true (wick_stage_write_window (stage, "input", input, sizeof input,
                                              WICK_STAGE_DTYPE_F32, chain_shape, 1, &error));
      int runs = chain.runs;
      g_assert_true (wick_stage_run (stage, stream, &error));
      g_assert_cmpint (chain.runs, ==, runs); /* a replay, not the callback */
      g_assert_cmpint (stage_test_stream_synchronize (stream), ==, 0);
      g_assert_true (stage_test_download (replayed, chain.output, sizeof replayed));
      stage_test_chain (chain.input, eager, CHAIN_N, CHAIN_KERNELS, stream);
      g_assert_cmpint (stage_test_stream_synchronize (stream), ==, 0);
      g_assert_true (stage_test_download (expected, eager, sizeof expected));
      g_assert_cmpmem (replayed, sizeof replayed, expected, sizeof expected);
      /* and the CPU agrees: the replay read the new window */
      stage_test_chain_cpu (input, expected, CHAIN_N, CHAIN_KERNELS);
      g_assert_cmpmem (replayed, sizeof replayed, expected, sizeof expected);
      if (round > 0)
        g_assert_true (memcmp (replayed, previous, sizeof previous) != 0);
      memcpy (previous, replayed, sizeof previous);
    }

  g_assert_true (wick_stage_release (stage, &error));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_EAGER);
  int runs = chain.runs;
  g_assert_true (wick_stage_run (stage, stream, &error));
  g_assert_cmpint (chain.runs, ==, runs + 1);
  stage_test_free (eager);
  stage_test_stream_free (stream);
  wick_stage_free (stage);
  chain_free (&chain);
}

static void
test_parity_refusal (void)
{
  if (!need_gpu ())
    return;
  Chain chain;
  WickStage *stage = chain_stage_new (&chain, "chain-rng", 8);
  chain.seed = 1;
  WickCertification cert;
  WickError error = { "" };
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  g_test_message ("certificate: %s", cert.reason);
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "refused");
  g_assert_true (g_str_has_prefix (cert.reason, "parity cos "));
  g_assert_true (strstr (cert.reason, " < 0.999 against the eager reference: every input that "
                                      "varies between calls must be a declared window "
                                      "(in-graph RNG never matches eager)")
                 != NULL);
  g_assert_true (cert.parity_cos < 0.999);
  g_assert_true (cert.max_abs > 0.0 && cert.p99_abs > 0.0 && cert.p99_abs <= cert.max_abs);
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);
  /* eager, so a fresh seed on every call */
  int runs = chain.runs;
  g_assert_true (wick_stage_run (stage, NULL, &error));
  g_assert_cmpint (chain.runs, ==, runs + 1);
  g_assert_cmpint (stage_test_stream_synchronize (NULL), ==, 0);
  wick_stage_free (stage);
  chain_free (&chain);
}

/* --- one long kernel: not a net win ---------------------------------------- */

#define LONG_N (1 << 20)

typedef struct
{
  float *input, *output;
} Long;

static void
long_enqueue (void *stream, void *user_data)
{
  Long *work = user_data;
  stage_test_long_kernel (work->input, work->output, LONG_N, 20000, stream);
}

static void
test_speedup_refusal (void)
{
  if (!need_gpu ())
    return;
  Long work
    = { stage_test_alloc (LONG_N * sizeof (float)), stage_test_alloc (LONG_N * sizeof (float)) };
  static const int64_t shape[1] = { LONG_N };
  WickStageInfo info = {
    .name = "long",
    .enqueue = long_enqueue,
    .user_data = &work,
    .windows = &(WickStageBuffer){ "input", work.input, WICK_STAGE_DTYPE_F32, shape, 1 },
    .n_windows = 1,
    .output = { NULL, work.output, WICK_STAGE_DTYPE_F32, shape, 1 },
  };
  WickError error = { "" };
  WickStage *stage = wick_stage_new (NULL, &info, &error);
  g_assert_nonnull (stage);
  WickCaptureOptions options;
  wick_capture_options_init (&options);
  options.timing_rounds = 5;
  options.timing_iterations = 10;
  WickCertification cert;
  g_assert_true (wick_stage_capture (stage, &options, &cert, &error));
  g_test_message ("certificate: %s (eager %.4f ms, replay %.4f ms)", cert.reason, cert.eager_ms,
                  cert.replay_ms);
  g_assert_false (cert.accepted);
  g_assert_true (g_str_has_prefix (cert.reason, "not a net win: "));
  g_assert_true (g_str_has_suffix (cert.reason, "\xc3\x97 against eager, needs 1.02\xc3\x97"));
  g_assert_cmpfloat (cert.parity_cos, ==, 1.0);
  g_assert_cmpuint (cert.kernel_nodes, ==, 1);
  g_assert_true (cert.speedup_median < 1.02);
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);
  wick_stage_free (stage);
  stage_test_free (work.input);
  stage_test_free (work.output);
}

static void
test_window_mismatch_on_device (void)
{
  if (!need_gpu ())
    return;
  Chain chain;
  WickStage *stage = chain_stage_new (&chain, "chain", 4);
  WickError error = { "" };
  static float data[CHAIN_N + 1], back[CHAIN_N];
  const int64_t longer[1] = { CHAIN_N + 1 };
  const int64_t square[2] = { 64, 64 };
  g_assert_false (wick_stage_write_window (stage, "input", data, sizeof data, WICK_STAGE_DTYPE_F32,
                                           longer, 1, &error));
  g_assert_cmpstr (error.message, ==,
                   "window 'input' of stage 'chain' refused a shape mismatch: expected f32 [4096] "
                   "(16384 bytes), got f32 [4097] (16388 bytes); a replay over a coerced write "
                   "would be silently wrong");
  g_assert_false (wick_stage_write_window (stage, "input", data, CHAIN_N * 4, WICK_STAGE_DTYPE_F32,
                                           square, 2, &error));
  g_assert_true (strstr (error.message, "shape mismatch: expected f32 [4096] (16384 bytes), got "
                                        "f32 [64, 64] (16384 bytes)")
                 != NULL);
  g_assert_false (wick_stage_write_window (stage, "input", data, CHAIN_N * 2, WICK_STAGE_DTYPE_BF16,
                                           chain_shape, 1, &error));
  g_assert_true (strstr (error.message, "dtype mismatch: expected f32 [4096] (16384 bytes), got "
                                        "bf16 [4096] (8192 bytes)")
                 != NULL);
  g_assert_false (wick_stage_write_window (stage, "noise", data, CHAIN_N * 4, WICK_STAGE_DTYPE_F32,
                                           chain_shape, 1, &error));
  g_assert_cmpstr (error.message, ==, "stage 'chain' has no window 'noise'; its windows are input");

  for (int i = 0; i < CHAIN_N; i++)
    data[i] = (float)i;
  g_assert_true (wick_stage_write_window (stage, "input", data, CHAIN_N * 4, WICK_STAGE_DTYPE_F32,
                                          chain_shape, 1, &error));
  g_assert_true (stage_test_download (back, chain.input, sizeof back));
  g_assert_cmpmem (back, sizeof back, data, sizeof back);
  wick_stage_free (stage);
  chain_free (&chain);
}

static void
check_eager_output (Chain *chain, WickStage *stage)
{
  WickError error = { "" };
  static float input[CHAIN_N], output[CHAIN_N], expected[CHAIN_N];
  random_input (input, 99);
  g_assert_true (wick_stage_write_window (stage, "input", input, sizeof input, WICK_STAGE_DTYPE_F32,
                                          chain_shape, 1, &error));
  g_assert_true (wick_stage_run (stage, NULL, &error));
  g_assert_cmpint (stage_test_stream_synchronize (NULL), ==, 0);
  g_assert_true (stage_test_download (output, chain->output, sizeof output));
  stage_test_chain_cpu (input, expected, CHAIN_N, chain->kernels / 2);
  stage_test_chain_cpu (expected, expected, CHAIN_N, chain->kernels / 2);
  g_assert_cmpmem (output, sizeof output, expected, sizeof expected);
}

static void
test_error_during_capture (void)
{
  if (!need_gpu ())
    return;
  Chain chain;
  WickStage *stage = chain_stage_new (&chain, "syncs", 8);
  chain.sync_inside = true;
  WickCertification cert;
  WickError error = { "" };
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  g_test_message ("certificate: %s", cert.reason);
  g_assert_false (cert.accepted);
  g_assert_true (g_str_has_prefix (cert.reason, "capture failed, the stage stays eager: "));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);
  g_assert_cmpint (chain.sync_errors, ==, 1); /* only inside the capture */
  g_assert_cmpint (stage_test_last_error (), ==, 0);
  check_eager_output (&chain, stage);
  g_assert_cmpint (chain.sync_errors, ==, 1);

  /* the process can still capture a good stage */
  Chain good;
  WickStage *good_stage = chain_stage_new (&good, "good", CHAIN_KERNELS);
  g_assert_true (wick_stage_capture (good_stage, NULL, &cert, &error));
  g_assert_true (cert.accepted);
  wick_stage_free (good_stage);
  chain_free (&good);

  /* work put on another stream leaves an empty graph: refused */
  Chain stray;
  WickStage *stray_stage = chain_stage_new (&stray, "stray", 8);
  stray.own_stream = true;
  stray.private_stream = stage_test_stream_new ();
  g_assert_true (wick_stage_capture (stray_stage, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.reason, ==,
                   "capture refused: the captured graph is empty, so the enqueue callback put its "
                   "work on another stream than the one it is given");
  stage_test_stream_free (stray.private_stream);
  wick_stage_free (stray_stage);
  chain_free (&stray);
  wick_stage_free (stage);
  chain_free (&chain);
}

/* --- parity figures on the device against the CPU reference --------------- */

typedef struct
{
  float *input;
  void *output;
  WickStageDType dtype;
} Convert;

static void
convert_into (Convert *convert, void *output, float scale, void *stream)
{
  if (convert->dtype == WICK_STAGE_DTYPE_F16)
    stage_test_to_half (convert->input, output, CHAIN_N, scale, stream);
  else if (convert->dtype == WICK_STAGE_DTYPE_BF16)
    stage_test_to_bfloat (convert->input, output, CHAIN_N, scale, stream);
  else
    stage_test_scale (convert->input, output, CHAIN_N, scale, stream);
}

static void
convert_enqueue (void *stream, void *user_data)
{
  Convert *convert = user_data;
  convert_into (convert, convert->output, 0.0f, stream);
}

static void
convert_reference (void *stream, void *output, void *user_data)
{
  convert_into (user_data, output, 0.01f, stream);
}

static void
check_parity_figures (WickStageDType dtype)
{
  size_t element = wick_stage_dtype_size (dtype);
  Convert convert = { stage_test_alloc (CHAIN_N * 4), stage_test_alloc (CHAIN_N * element), dtype };
  static float input[CHAIN_N];
  random_input (input, 7);
  g_assert_true (stage_test_upload (convert.input, input, sizeof input));
  WickStageInfo info = {
    .name = "convert",
    .enqueue = convert_enqueue,
    .reference = convert_reference,
    .user_data = &convert,
    .windows = &(WickStageBuffer){ "input", convert.input, WICK_STAGE_DTYPE_F32, chain_shape, 1 },
    .n_windows = 1,
    .output = { NULL, convert.output, dtype, chain_shape, 1 },
  };
  WickError error = { "" };
  WickStage *stage = wick_stage_new (NULL, &info, &error);
  g_assert_nonnull (stage);
  WickCaptureOptions options;
  wick_capture_options_init (&options);
  options.min_speedup = 0.0;
  WickCertification cert;
  g_assert_true (wick_stage_capture (stage, &options, &cert, &error));
  g_test_message ("%s: %s", wick_stage_dtype_name (dtype), cert.reason);
  g_assert_true (cert.accepted);
  g_assert_false (cert.speedup_checked);
  g_assert_true (isnan (cert.eager_ms));
  g_assert_true (g_str_has_suffix (cert.reason, "; speedup gate skipped (min_speedup 0)"));

  void *reference = stage_test_alloc (CHAIN_N * element);
  convert_into (&convert, reference, 0.01f, NULL);
  static uint8_t out_host[CHAIN_N * 8], ref_host[CHAIN_N * 8];
  g_assert_cmpint (stage_test_stream_synchronize (NULL), ==, 0);
  g_assert_true (stage_test_download (out_host, convert.output, CHAIN_N * element));
  g_assert_true (stage_test_download (ref_host, reference, CHAIN_N * element));
  WickParity parity;
  g_assert_true (wick_gate_parity_host (dtype, out_host, ref_host, CHAIN_N, &parity));
  g_assert_cmpfloat_with_epsilon (cert.parity_cos, parity.cosine, 1e-12);
  g_assert_cmpfloat (cert.max_abs, ==, parity.max_abs);
  g_assert_cmpfloat (cert.p99_abs, ==, parity.p99_abs);
  g_assert_true (cert.parity_cos < 1.0 && cert.parity_cos > 0.999);
  g_assert_true (cert.p99_abs > 0.0 && cert.p99_abs <= cert.max_abs);
  stage_test_free (reference);
  wick_stage_free (stage);
  stage_test_free (convert.input);
  stage_test_free (convert.output);
}

static void
test_parity_figures (void)
{
  if (!need_gpu ())
    return;
  check_parity_figures (WICK_STAGE_DTYPE_F32);
  check_parity_figures (WICK_STAGE_DTYPE_F16);
  check_parity_figures (WICK_STAGE_DTYPE_BF16);
}

/* --- capture from another thread while the host runs the stage ------------ */

typedef struct
{
  WickStage *stage;
  volatile int stop;
  int runs;
  int failures;
} Runner;

static void *
runner_main (void *data)
{
  Runner *runner = data;
  void *stream = stage_test_stream_new ();
  WickError error;
  while (!__atomic_load_n (&runner->stop, __ATOMIC_ACQUIRE))
    {
      if (!wick_stage_run (runner->stage, stream, &error)
          || stage_test_stream_synchronize (stream) != 0)
        __atomic_add_fetch (&runner->failures, 1, __ATOMIC_RELEASE);
      __atomic_add_fetch (&runner->runs, 1, __ATOMIC_RELEASE);
    }
  stage_test_stream_free (stream);
  return NULL;
}

/* Waits (deadline 20 s) until the runner thread has run the stage @more
 * times more than it had when called: each phase of the test (eager, captured,
 * released, captured again) then really has runs beside it, however loaded
 * the machine is. */
static void
wait_for_runs (Runner *runner, int more, const char *phase)
{
  int target = __atomic_load_n (&runner->runs, __ATOMIC_ACQUIRE) + more;
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (__atomic_load_n (&runner->runs, __ATOMIC_ACQUIRE) < target
         && g_get_monotonic_time () < deadline)
    g_usleep (200);
  if (__atomic_load_n (&runner->runs, __ATOMIC_ACQUIRE) < target)
    g_error ("the stage ran %d times in 20 s, not %d more, %s",
             __atomic_load_n (&runner->runs, __ATOMIC_ACQUIRE), more, phase);
}

static void
test_capture_while_running (void)
{
  if (!need_gpu ())
    return;
  Chain chain;
  WickStage *stage = chain_stage_new (&chain, "busy", CHAIN_KERNELS);
  Runner runner = { stage, 0, 0, 0 };
  pthread_t thread;
  pthread_create (&thread, NULL, runner_main, &runner);
  wait_for_runs (&runner, 3, "eager, before the first capture");
  WickCertification cert;
  WickError error = { "" };
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  g_assert_true (cert.accepted);
  wait_for_runs (&runner, 3, "after the first capture");
  g_assert_true (wick_stage_release (stage, &error));
  wait_for_runs (&runner, 3, "after the release");
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  wait_for_runs (&runner, 3, "after the second capture");
  __atomic_store_n (&runner.stop, 1, __ATOMIC_RELEASE);
  pthread_join (thread, NULL);
  g_test_message ("%d runs beside two captures and a release", runner.runs);
  g_assert_cmpint (runner.failures, ==, 0);
  g_assert_cmpint (runner.runs, >=, 12);
  g_assert_true (cert.accepted);
  wick_stage_free (stage);
  chain_free (&chain);
}

/* --- the demo's stages on a session --------------------------------------- */

static void
test_demo_stages (void)
{
  if (!need_gpu ())
    return;
  g_autofree char *dir = g_dir_make_tmp ("wick-stage-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "trace.jsonl", NULL);
  WickRunInfo run = {
    .entrypoint = "test-stage-capture",
    .phase = WICK_PHASE_INFER,
    .capture_step = 1,
    .device = "cuda:0",
    .timing_mode = WICK_TIMING_HOST,
  };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_PROFILED_WORK };
  WickSessionOptions session_options = { .jsonl_path = path };
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &contract, &session_options, &error);
  g_assert_cmpstr (error.message, ==, "");
  g_assert_true (wick_demo_stage_register (session, &error));
  g_assert_true (wick_demo_stage_step (session, 0, &error));

  WickCertification safe, unsafe;
  g_assert_true (wick_stage_capture (wick_session_find_stage (session, WICK_DEMO_STAGE_NAME), NULL,
                                     &safe, &error));
  g_assert_true (wick_stage_capture (wick_session_find_stage (session, WICK_DEMO_UNSAFE_STAGE_NAME),
                                     NULL, &unsafe, &error));
  g_test_message ("denoise: %s; %" G_GUINT64_FORMAT " kernel nodes", safe.reason,
                  safe.kernel_nodes);
  g_test_message ("denoise-rng: %s", unsafe.reason);
  g_assert_true (safe.accepted);
  g_assert_cmpuint (safe.kernel_nodes, ==, 33);
  g_assert_false (unsafe.accepted);
  g_assert_true (g_str_has_prefix (unsafe.reason, "parity cos "));
  for (uint64_t step = 1; step < 4; step++)
    g_assert_true (wick_demo_stage_step (session, step, &error));

  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);
  g_autofree char *contents = NULL;
  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_true (strstr (contents, "\"kind\":\"wick_stage_certification\"") != NULL);
  g_assert_true (strstr (contents, "\"stage\":\"denoise\",") != NULL);
  g_assert_true (strstr (contents, "\"stage\":\"denoise-rng\",") != NULL);
  g_assert_true (strstr (contents, "\"verdict\":\"accepted\"") != NULL);
  g_assert_true (strstr (contents, "\"verdict\":\"refused\"") != NULL);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/stages/certified-bit-exact", test_certified_bit_exact);
  g_test_add_func ("/cuda/stages/parity-refusal", test_parity_refusal);
  g_test_add_func ("/cuda/stages/speedup-refusal", test_speedup_refusal);
  g_test_add_func ("/cuda/stages/window-mismatch", test_window_mismatch_on_device);
  g_test_add_func ("/cuda/stages/error-during-capture", test_error_during_capture);
  g_test_add_func ("/cuda/stages/parity-figures", test_parity_figures);
  g_test_add_func ("/cuda/stages/capture-while-running", test_capture_while_running);
  g_test_add_func ("/cuda/stages/demo-stages", test_demo_stages);
  return g_test_run ();
}
