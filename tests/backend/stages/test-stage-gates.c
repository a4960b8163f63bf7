/* test-stage-gates.c — the certification arithmetic on the CPU with known
 * vectors (cosine, p99 by order statistic, median of ratios, thresholds and
 * the refusal sentences), and the parts of stages that need no GPU: capture
 * refused naming CUDA, window mismatches, options validation, the record. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stages/wick-stage-private.h"
#include "stages/wick-stage-gates.h"
#include "stages/wick-stage-gates-private.h"

static void
test_cosine_known_vectors (void)
{
  float same[3] = { 1, 2, 3 };
  float doubled[3] = { 2, 4, 6 };
  float a[3] = { 1, 2, 2 }, b[3] = { 2, 1, 2 };
  float x[2] = { 1, 0 }, y[2] = { 0, 1 };
  float zero[3] = { 0, 0, 0 };
  WickParity parity;

  g_assert_true (wick_gate_parity_host (WICK_STAGE_DTYPE_F32, same, same, 3, &parity));
  g_assert_cmpfloat (parity.cosine, ==, 1.0);
  g_assert_cmpfloat (parity.max_abs, ==, 0.0);
  g_assert_cmpfloat (parity.p99_abs, ==, 0.0);

  wick_gate_parity_host (WICK_STAGE_DTYPE_F32, doubled, same, 3, &parity);
  g_assert_cmpfloat_with_epsilon (parity.cosine, 1.0, 1e-15);
  g_assert_cmpfloat (parity.max_abs, ==, 3.0);

  /* dot 8, norms 3 and 3 */
  wick_gate_parity_host (WICK_STAGE_DTYPE_F32, a, b, 3, &parity);
  g_assert_cmpfloat_with_epsilon (parity.cosine, 8.0 / 9.0, 1e-15);
  g_assert_cmpfloat (parity.max_abs, ==, 1.0);

  wick_gate_parity_host (WICK_STAGE_DTYPE_F32, x, y, 2, &parity);
  g_assert_cmpfloat (parity.cosine, ==, 0.0);

  g_assert_cmpfloat (wick_gate_cosine (0.0, 0.0, 0.0), ==, 1.0);
  wick_gate_parity_host (WICK_STAGE_DTYPE_F32, zero, same, 3, &parity);
  g_assert_cmpfloat (parity.cosine, ==, 0.0);
  g_assert_cmpfloat (parity.max_abs, ==, 3.0);
}

static void
test_half_and_bfloat (void)
{
  /* f16: 1.0 0x3c00, 2.0 0x4000, 0.5 0x3800, -2.0 0xc000, 65504 0x7bff */
  uint16_t half_out[3] = { 0x3c00, 0x4000, 0x3800 };
  uint16_t half_ref[3] = { 0x3c00, 0xc000, 0x3800 };
  WickParity parity;
  wick_gate_parity_host (WICK_STAGE_DTYPE_F16, half_out, half_ref, 3, &parity);
  /* dot 1 - 4 + 0.25 = -2.75, norms² 5.25 */
  g_assert_cmpfloat_with_epsilon (parity.cosine, -2.75 / 5.25, 1e-15);
  g_assert_cmpfloat (parity.max_abs, ==, 4.0);
  g_assert_cmpfloat (wick_gate_element_to_double (WICK_STAGE_DTYPE_F16, (uint16_t[]){ 0x7bff }, 0),
                     ==, 65504.0);
  /* smallest subnormal */
  g_assert_cmpfloat (wick_gate_element_to_double (WICK_STAGE_DTYPE_F16, (uint16_t[]){ 0x0001 }, 0),
                     ==, ldexp (1.0, -24));

  /* bf16: 1.0 0x3f80, 3.0 0x4040, -0.5 0xbf00 */
  uint16_t bf_out[2] = { 0x3f80, 0x4040 };
  uint16_t bf_ref[2] = { 0x3f80, 0xbf00 };
  wick_gate_parity_host (WICK_STAGE_DTYPE_BF16, bf_out, bf_ref, 2, &parity);
  /* dot 1 - 1.5 = -0.5; |out|² 10, |ref|² 1.25 */
  g_assert_cmpfloat_with_epsilon (parity.cosine, -0.5 / sqrt (12.5), 1e-15);
  g_assert_cmpfloat (parity.max_abs, ==, 3.5);
}

static void
test_p99_order_statistic (void)
{
  double v[1000];
  /* 1..100 in a scrambled order: nearest rank ceil(99) = 99 */
  for (size_t i = 0; i < 100; i++)
    v[i] = (double)((i * 37) % 100 + 1);
  g_assert_cmpfloat (wick_gate_p99 (v, 100), ==, 99.0);
  /* 1..1000: rank 990 */
  for (size_t i = 0; i < 1000; i++)
    v[i] = (double)((i * 617) % 1000 + 1);
  g_assert_cmpfloat (wick_gate_p99 (v, 1000), ==, 990.0);
  /* 10 values: ceil(9.9) = 10, the maximum */
  for (size_t i = 0; i < 10; i++)
    v[i] = (double)(10 - i);
  g_assert_cmpfloat (wick_gate_p99 (v, 10), ==, 10.0);
  /* 200 values: rank 198 */
  for (size_t i = 0; i < 200; i++)
    v[i] = (double)((i * 13) % 200);
  g_assert_cmpfloat (wick_gate_p99 (v, 200), ==, 197.0);
  /* one value */
  v[0] = 4.5;
  g_assert_cmpfloat (wick_gate_p99 (v, 1), ==, 4.5);
  /* many ties */
  for (size_t i = 0; i < 1000; i++)
    v[i] = i < 995 ? 0.0 : 1.0;
  g_assert_cmpfloat (wick_gate_p99 (v, 1000), ==, 0.0);
  for (size_t i = 0; i < 1000; i++)
    v[i] = i < 989 ? 0.0 : 1.0;
  g_assert_cmpfloat (wick_gate_p99 (v, 1000), ==, 1.0);
  /* an exact replay: a million equal values select in linear time */
  static double zeros[1000000];
  g_assert_cmpfloat (wick_gate_p99 (zeros, G_N_ELEMENTS (zeros)), ==, 0.0);
  g_assert_cmpfloat (wick_gate_median (zeros, G_N_ELEMENTS (zeros)), ==, 0.0);
  /* NaN sorts above +inf: one NaN in 3 is the p99 */
  double with_nan[3] = { NAN, 1.0, INFINITY };
  g_assert_true (isnan (wick_gate_p99 (with_nan, 3)));
  double k_th[5] = { 5, 3, 1, 4, 2 };
  g_assert_cmpfloat (wick_gate_order_statistic (k_th, 5, 1), ==, 2.0);
  g_assert_true (isnan (wick_gate_p99 (v, 0)));
}

static void
test_median_of_ratios (void)
{
  double odd[3] = { 3, 1, 2 };
  g_assert_cmpfloat (wick_gate_median (odd, 3), ==, 2.0);
  double even[4] = { 4, 1, 3, 2 };
  g_assert_cmpfloat (wick_gate_median (even, 4), ==, 2.5);

  const double eager[5] = { 2, 2, 2, 2, 2 };
  const double replay[5] = { 1, 2, 0.5, 1, 1 };
  double median, min, max, eager_ms, replay_ms;
  wick_gate_speedup_summary (eager, replay, 5, &median, &min, &max, &eager_ms, &replay_ms);
  /* ratios 2, 1, 4, 2, 2 */
  g_assert_cmpfloat (median, ==, 2.0);
  g_assert_cmpfloat (min, ==, 1.0);
  g_assert_cmpfloat (max, ==, 4.0);
  g_assert_cmpfloat (eager_ms, ==, 2.0);
  g_assert_cmpfloat (replay_ms, ==, 1.0);

  /* one round of drift (a slow eager round) cannot carry the median */
  const double drift_eager[4] = { 1.0, 1.0, 5.0, 1.0 };
  const double drift_replay[4] = { 1.0, 1.0, 1.0, 1.0 };
  wick_gate_speedup_summary (drift_eager, drift_replay, 4, &median, &min, &max, &eager_ms,
                             &replay_ms);
  g_assert_cmpfloat (median, ==, 1.0);
  g_assert_cmpfloat (max, ==, 5.0);
}

static void
cert_init (WickCertification *cert, double cos, double speedup)
{
  memset (cert, 0, sizeof *cert);
  cert->gate_cos = 0.999;
  cert->min_speedup = 1.02;
  cert->parity_checked = cert->speedup_checked = true;
  cert->parity_cos = cos;
  cert->max_abs = 0.25;
  cert->p99_abs = 0.125;
  cert->speedup_median = speedup;
  cert->eager_ms = 2.0;
  cert->replay_ms = 2.0 / speedup;
}

static void
test_judge_sentences (void)
{
  WickCertification cert;
  cert_init (&cert, 0.9871, 3.0);
  wick_gate_judge (&cert, NULL);
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "refused");
  g_assert_cmpstr (cert.reason, ==,
                   "parity cos 0.9871 < 0.999 against the eager reference: every input that "
                   "varies between calls must be a declared window (in-graph RNG never matches "
                   "eager)");

  cert_init (&cert, 1.0, 0.97);
  wick_gate_judge (&cert, NULL);
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.reason, ==,
                   "not a net win: 0.97\xc3\x97 against eager, needs 1.02\xc3\x97");

  /* both gates fail: both sentences */
  cert_init (&cert, 0.5, 0.97);
  wick_gate_judge (&cert, NULL);
  g_assert_true (g_str_has_prefix (cert.reason, "parity cos 0.5000 < 0.999"));
  g_assert_true (g_str_has_suffix (cert.reason, "; not a net win: 0.97\xc3\x97 against eager, "
                                                "needs 1.02\xc3\x97"));

  /* rounding never puts a figure on the wrong side of its threshold */
  cert_init (&cert, 0.99896, 1.019);
  wick_gate_judge (&cert, NULL);
  g_assert_true (g_str_has_prefix (cert.reason, "parity cos 0.99896 < 0.999"));
  g_assert_true (strstr (cert.reason, "not a net win: 1.019\xc3\x97") != NULL);

  /* NaN fails */
  cert_init (&cert, NAN, 2.0);
  wick_gate_judge (&cert, NULL);
  g_assert_false (cert.accepted);
  g_assert_true (g_str_has_prefix (cert.reason, "parity cos nan < 0.999"));

  /* exactly at the thresholds passes */
  cert_init (&cert, 0.999, 1.02);
  wick_gate_judge (&cert, NULL);
  g_assert_true (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "accepted");
  g_assert_cmpstr (cert.reason, ==,
                   "parity cos 0.9990 >= 0.999 (max abs 0.25, p99 abs 0.125); 1.02\xc3\x97 "
                   "against eager >= 1.02\xc3\x97 (2 ms eager, 1.961 ms replay)");

  /* skipped gates pass and say so */
  cert_init (&cert, 0.5, 0.5);
  cert.gate_cos = 0.0;
  cert.min_speedup = 0.0;
  cert.parity_checked = cert.speedup_checked = false;
  wick_gate_judge (&cert, NULL);
  g_assert_true (cert.accepted);
  g_assert_cmpstr (cert.reason, ==,
                   "parity gate skipped (gate_cos 0), cos 0.5000; speedup gate "
                   "skipped (min_speedup 0)");

  /* a failed capture is refused with its own sentence */
  cert_init (&cert, 1.0, 3.0);
  wick_gate_judge (&cert, "capture failed, the stage stays eager: x");
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.reason, ==, "capture failed, the stage stays eager: x");
}

/* --- stages without a GPU ------------------------------------------------- */

typedef struct
{
  float input[8];
  float output[8];
  int runs;
} HostStage;

static void
host_enqueue (void *stream, void *user_data)
{
  HostStage *host = user_data;
  g_assert_null (stream);
  for (int i = 0; i < 8; i++)
    host->output[i] = 2.0f * host->input[i];
  host->runs++;
}

static const int64_t host_shape[2] = { 2, 4 };

static WickStage *
host_stage_new (HostStage *host, const char *name)
{
  WickStageBuffer window = { "input", host->input, WICK_STAGE_DTYPE_F32, host_shape, 2 };
  WickStageInfo info = {
    .name = name,
    .enqueue = host_enqueue,
    .user_data = host,
    .windows = &window,
    .n_windows = 1,
    .output = { NULL, host->output, WICK_STAGE_DTYPE_F32, host_shape, 2 },
  };
  WickError error = { "" };
  WickStage *stage = wick_stage_new (NULL, &info, &error);
  g_assert_cmpstr (error.message, ==, "");
  g_assert_nonnull (stage);
  return stage;
}

static void
test_capture_without_cuda (void)
{
  WickError error = { "" };
  if (wick_cuda_available (&error))
    {
      g_test_skip ("a CUDA device is available here: the CUDA suite tests capture");
      return;
    }
  g_assert_true (g_str_has_prefix (error.message, "no CUDA device is available"));

  HostStage host = { { 1, 2, 3, 4, 5, 6, 7, 8 }, { 0 }, 0 };
  WickStage *stage = host_stage_new (&host, "host");
  WickCertification cert;
  g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "refused");
  g_assert_cmpstr (cert.reason, ==, error.message);
  g_assert_cmpstr (cert.stage, ==, "host");
  g_assert_cmpfloat (cert.gate_cos, ==, 0.999);
  g_assert_cmpfloat (cert.min_speedup, ==, 1.02);
  g_assert_cmpuint (cert.warmup, ==, 3);
  g_assert_true (isnan (cert.parity_cos));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);
  g_assert_cmpint (host.runs, ==, 0);

  /* the host keeps its eager path */
  g_assert_true (wick_stage_run (stage, NULL, &error));
  g_assert_cmpint (host.runs, ==, 1);
  g_assert_cmpfloat (host.output[7], ==, 16.0f);

  WickCertification again;
  g_assert_true (wick_stage_get_certification (stage, &again));
  g_assert_cmpstr (again.reason, ==, cert.reason);
  g_assert_true (wick_stage_release (stage, &error));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_EAGER);
  wick_stage_free (stage);
}

static void
test_capture_options_refused (void)
{
  HostStage host = { { 0 }, { 0 }, 0 };
  WickStage *stage = host_stage_new (&host, "host");
  WickCaptureOptions options;
  WickCertification cert;
  WickError error = { "" };

  wick_capture_options_init (&options);
  options.gate_cos = 1.5;
  g_assert_false (wick_stage_capture (stage, &options, &cert, &error));
  g_assert_cmpstr (error.message, ==, "capture options: gate_cos must be between 0 and 1, got 1.5");

  wick_capture_options_init (&options);
  options.min_speedup = NAN;
  g_assert_false (wick_stage_capture (stage, &options, &cert, &error));
  g_assert_cmpstr (error.message, ==,
                   "capture options: min_speedup must be between 0 and 1000, got nan");

  wick_capture_options_init (&options);
  options.timing_rounds = 5000;
  g_assert_false (wick_stage_capture (stage, &options, &cert, &error));
  g_assert_cmpstr (error.message, ==,
                   "capture options: at most 1000 timing rounds of 100000 "
                   "iterations, got 5000 rounds of 20");
  /* nothing was attempted */
  g_assert_false (wick_stage_get_certification (stage, &cert));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_EAGER);
  wick_stage_free (stage);
}

static void
test_window_mismatches (void)
{
  HostStage host = { { 0 }, { 0 }, 0 };
  WickStage *stage = host_stage_new (&host, "host");
  WickError error = { "" };
  float data[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
  const int64_t flat[1] = { 8 };
  const int64_t wide[2] = { 2, 5 };

  g_assert_false (wick_stage_write_window (stage, "inptu", data, sizeof data, WICK_STAGE_DTYPE_F32,
                                           host_shape, 2, &error));
  g_assert_cmpstr (error.message, ==, "stage 'host' has no window 'inptu'; its windows are input");

  g_assert_false (wick_stage_write_window (stage, "input", data, 16, WICK_STAGE_DTYPE_F16,
                                           host_shape, 2, &error));
  g_assert_cmpstr (error.message, ==,
                   "window 'input' of stage 'host' refused a dtype mismatch: expected f32 [2, 4] "
                   "(32 bytes), got f16 [2, 4] (16 bytes); a replay over a coerced write would "
                   "be silently wrong");

  g_assert_false (wick_stage_write_window (stage, "input", data, sizeof data, WICK_STAGE_DTYPE_F32,
                                           flat, 1, &error));
  g_assert_cmpstr (error.message, ==,
                   "window 'input' of stage 'host' refused a shape mismatch: expected f32 [2, 4] "
                   "(32 bytes), got f32 [8] (32 bytes); a replay over a coerced write would be "
                   "silently wrong");

  g_assert_false (
    wick_stage_write_window (stage, "input", data, 40, WICK_STAGE_DTYPE_F32, wide, 2, &error));
  g_assert_true (strstr (error.message, "refused a shape mismatch: expected f32 [2, 4] (32 "
                                        "bytes), got f32 [2, 5] (40 bytes)")
                 != NULL);

  g_assert_false (wick_stage_write_window (stage, "input", data, 28, WICK_STAGE_DTYPE_F32,
                                           host_shape, 2, &error));
  g_assert_cmpstr (error.message, ==,
                   "window 'input' of stage 'host' refused a size mismatch: expected f32 [2, 4] "
                   "(32 bytes), got f32 [2, 4] (28 bytes); a replay over a coerced write would "
                   "be silently wrong");
  /* nothing was written by a refused write */
  g_assert_cmpfloat (host.input[0], ==, 0.0f);

  if (!wick_cuda_available (NULL))
    {
      g_assert_true (wick_stage_write_window (stage, "input", data, sizeof data,
                                              WICK_STAGE_DTYPE_F32, host_shape, 2, &error));
      g_assert_cmpmem (host.input, sizeof host.input, data, sizeof data);
    }
  wick_stage_free (stage);
}

static void
test_registration_refused (void)
{
  HostStage host = { { 0 }, { 0 }, 0 };
  WickError error = { "" };
  const int64_t bad_shape[2] = { 2, 0 };
  WickStageBuffer windows[2] = {
    { "input", host.input, WICK_STAGE_DTYPE_F32, host_shape, 2 },
    { "input", host.input, WICK_STAGE_DTYPE_F32, host_shape, 2 },
  };
  WickStageInfo info = {
    .name = "bad",
    .enqueue = host_enqueue,
    .user_data = &host,
    .windows = windows,
    .n_windows = 2,
    .output = { NULL, host.output, WICK_STAGE_DTYPE_F32, host_shape, 2 },
  };
  g_assert_null (wick_stage_new (NULL, &info, &error));
  g_assert_cmpstr (error.message, ==, "stage 'bad': window 'input' is declared twice");

  info.n_windows = 1;
  info.output.shape = bad_shape;
  g_assert_null (wick_stage_new (NULL, &info, &error));
  g_assert_cmpstr (error.message, ==, "stage 'bad': the output has shape[1] = 0, must be >= 1");

  info.output.shape = host_shape;
  info.output.dtype = WICK_STAGE_DTYPE_I32;
  g_assert_null (wick_stage_new (NULL, &info, &error));
  g_assert_cmpstr (error.message, ==,
                   "stage 'bad': the output must be f32, f16, bf16 or f64, got i32");

  info.output.dtype = WICK_STAGE_DTYPE_F32;
  info.enqueue = NULL;
  g_assert_null (wick_stage_new (NULL, &info, &error));
  g_assert_cmpstr (error.message, ==, "stage 'bad': the enqueue callback is required");
}

typedef struct
{
  WickStage *stage;
  HostStage *host;
  gint stop;
  gint runs; /* atomic: the main thread waits for the first */
  int failures;
} Runner;

static gpointer
runner_main (gpointer data)
{
  Runner *runner = data;
  WickError error;
  float input[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  while (!g_atomic_int_get (&runner->stop))
    {
      if (!wick_stage_run (runner->stage, NULL, &error))
        runner->failures++;
      if (g_atomic_int_get (&runner->runs) % 16 == 0
          && !wick_stage_write_window (runner->stage, "input", input, sizeof input,
                                       WICK_STAGE_DTYPE_F32, host_shape, 2, &error))
        runner->failures++;
      g_atomic_int_inc (&runner->runs);
    }
  return NULL;
}

/* Captures and releases from one thread while another runs the stage and
 * writes its window: every call returns, none fails, and the callback never
 * runs on two threads at once (ASan/TSan builds see the rest). */
static void
test_capture_while_running (void)
{
  if (wick_cuda_available (NULL))
    {
      g_test_skip ("a CUDA device is available here: the CUDA suite runs this on the device");
      return;
    }
  HostStage host = { { 0 }, { 0 }, 0 };
  WickStage *stage = host_stage_new (&host, "busy");
  Runner runner = { stage, &host, 0, 0, 0 };
  GThread *thread = g_thread_new ("runner", runner_main, &runner);
  WickError error = { "" };
  WickCertification cert;
  /* The captures must overlap the runs: wait (with a deadline) until the
   * runner thread is running, which a loaded machine can delay past the
   * whole capture loop. */
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (g_atomic_int_get (&runner.runs) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (100);
  g_assert_cmpint (g_atomic_int_get (&runner.runs), >, 0);
  for (int i = 0; i < 200; i++)
    {
      g_assert_true (wick_stage_capture (stage, NULL, &cert, &error));
      g_assert_true (wick_stage_release (stage, &error));
    }
  g_atomic_int_set (&runner.stop, 1);
  g_thread_join (thread);
  g_assert_cmpint (runner.failures, ==, 0);
  g_assert_cmpint (runner.runs, >, 0);
  g_assert_cmpint (host.runs, ==, runner.runs);
  wick_stage_free (stage);
}

static void
test_certification_record (void)
{
  HostStage host = { { 0 }, { 0 }, 0 };
  WickStage *stage = host_stage_new (&host, "host \"q\"");
  WickCertification cert;
  cert_init (&cert, 0.5, 2.0);
  snprintf (cert.stage, sizeof cert.stage, "host \"q\"");
  cert.warmup = 3;
  cert.kernel_nodes = 33;
  cert.speedup_min = 1.5;
  cert.speedup_max = NAN;
  cert.eager_recording = WICK_EAGER_RECORDING_SUSPENDED;
  cert.eager_instrumented_ms = 2.5;
  wick_gate_judge (&cert, NULL);
  char json[4096];
  g_assert_true (wick_stage_certification_json (stage, &cert, json, sizeof json));
  g_assert_cmpstr (json, ==,
                   "\"stage\":\"host \\\"q\\\"\",\"windows\":[{\"name\":\"input\",\"dtype\":"
                   "\"f32\",\"shape\":[2,4]}],\"output\":{\"dtype\":\"f32\",\"shape\":[2,4]},"
                   "\"gate_cos\":0.999,\"min_speedup\":1.02,\"warmup\":3,\"parity_checked\":true,"
                   "\"speedup_checked\":true,\"parity_cos\":0.5,\"max_abs\":0.25,\"p99_abs\":0.125,"
                   "\"eager_ms\":2,\"replay_ms\":1,\"speedup_median\":2,\"speedup_min\":1.5,"
                   "\"speedup_max\":null,\"kernel_nodes\":33,\"eager_recording\":\"suspended\","
                   "\"eager_instrumented_ms\":2.5,\"accepted\":false,\"verdict\":"
                   "\"refused\",\"reason\":\"parity cos 0.5000 < 0.999 against the eager "
                   "reference: every input that varies between calls must be a declared window "
                   "(in-graph RNG never matches eager)\"");
  /* too small a buffer is refused, never cut silently */
  g_assert_false (wick_stage_certification_json (stage, &cert, json, 64));
  wick_stage_free (stage);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stages/gates/cosine", test_cosine_known_vectors);
  g_test_add_func ("/stages/gates/half-and-bfloat", test_half_and_bfloat);
  g_test_add_func ("/stages/gates/p99-order-statistic", test_p99_order_statistic);
  g_test_add_func ("/stages/gates/median-of-ratios", test_median_of_ratios);
  g_test_add_func ("/stages/gates/judge-sentences", test_judge_sentences);
  g_test_add_func ("/stages/capture/without-cuda", test_capture_without_cuda);
  g_test_add_func ("/stages/capture/options-refused", test_capture_options_refused);
  g_test_add_func ("/stages/windows/mismatches", test_window_mismatches);
  g_test_add_func ("/stages/registration/refused", test_registration_refused);
  g_test_add_func ("/stages/record/certification", test_certification_record);
  g_test_add_func ("/stages/run/capture-while-running", test_capture_while_running);
  return g_test_run ();
}
