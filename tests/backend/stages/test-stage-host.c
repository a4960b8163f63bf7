/* test-stage-host.c — stages captured by their host (the Python layer's
 * torch.cuda.graph stages): registration without an enqueue, the refusal of
 * wick_stage_run, capture asked from another thread refused at once without
 * CUDA, the gates judged by libwick from the host's figures, the window
 * check, and the certification records in the trace. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "stage-test-fixture.h"

static float window_data[8], output_data[8];
static const int64_t shape8[1] = { 8 };

static WickStage *
register_host_stage (WickSession *session)
{
  WickStageInfo info = {
    .name = "torch-block",
    .windows = &(WickStageBuffer){ "x", window_data, WICK_STAGE_DTYPE_F32, shape8, 1 },
    .n_windows = 1,
    .output = { NULL, output_data, WICK_STAGE_DTYPE_F32, shape8, 1 },
  };
  WickError error = { "" };
  WickStage *stage = wick_session_register_host_stage (session, &info, &error);
  g_assert_cmpstr (error.message, ==, "");
  g_assert_nonnull (stage);
  return stage;
}

typedef struct
{
  WickStage *stage;
  WickCertification cert;
  bool ok;
  WickError error;
} CaptureCall;

static void *
capture_thread (void *data)
{
  CaptureCall *call = data;
  call->ok = wick_stage_capture (call->stage, NULL, &call->cert, &call->error);
  return NULL;
}

static void
test_registration (void)
{
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-host");
  WickSession *session = fixture.session;
  WickStage *stage = register_host_stage (session);
  g_assert_true (wick_stage_is_host_captured (stage));
  g_assert_true (wick_session_find_stage (session, "torch-block") == stage);
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_EAGER);
  g_assert_false (wick_stage_capture_requested (stage));

  WickError error = { "" };
  g_assert_false (wick_stage_run (stage, NULL, &error));
  g_assert_cmpstr (error.message, ==, "stage 'torch-block' is run by its host, not by "
                                      "wick_stage_run");

  /* an ordinary stage still needs its enqueue */
  WickStageInfo plain = {
    .name = "plain",
    .output = { NULL, output_data, WICK_STAGE_DTYPE_F32, shape8, 1 },
  };
  g_assert_null (wick_session_register_stage (session, &plain, &error));
  g_assert_cmpstr (error.message, ==, "stage 'plain': the enqueue callback is required");
  g_assert_false (wick_stage_is_host_captured (NULL));

  /* the window check of wick_stage_write_window, without a copy */
  g_assert_true (wick_stage_check_window (stage, "x", 32, WICK_STAGE_DTYPE_F32, shape8, 1, &error));
  g_assert_false (
    wick_stage_check_window (stage, "x", 64, WICK_STAGE_DTYPE_F64, shape8, 1, &error));
  g_assert_nonnull (strstr (error.message, "window 'x' of stage 'torch-block' refused a dtype "
                                           "mismatch: expected f32 [8] (32 bytes), got f64 [8]"));
  g_assert_false (wick_stage_check_window (stage, "y", 32, WICK_STAGE_DTYPE_F32, shape8, 1, &error));
  g_assert_cmpstr (error.message, ==, "stage 'torch-block' has no window 'y'; its windows are x");

  stage_fixture_finish (&fixture);
  stage_fixture_clear (&fixture);
}

static void
test_capture_without_cuda (void)
{
  WickError why = { "" };
  if (wick_cuda_available (&why))
    {
      g_test_skip ("a CUDA device is available: the refusal without one cannot be seen here");
      return;
    }
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-host");
  WickSession *session = fixture.session;
  WickStage *stage = register_host_stage (session);
  /* from another thread, as the control socket asks: refused at once, no
   * request left for the host */
  CaptureCall call = { .stage = stage };
  pthread_t thread;
  g_assert_cmpint (pthread_create (&thread, NULL, capture_thread, &call), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  g_assert_true (call.ok);
  g_assert_false (call.cert.accepted);
  g_assert_cmpstr (call.cert.verdict, ==, "refused");
  g_assert_cmpstr (call.cert.reason, ==, why.message);
  g_assert_false (wick_stage_capture_requested (stage));
  WickCaptureOptions options;
  g_assert_false (wick_stage_take_capture_request (stage, &options));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);

  stage_fixture_finish (&fixture);
  g_autofree char *text = stage_fixture_read_trace (&fixture);
  g_assert_nonnull (strstr (text, "\"kind\":\"wick_stage_certification\""));
  g_assert_nonnull (strstr (text, "\"verdict\":\"refused\""));
  /* on the capturing thread's span */
  g_assert_cmpuint (stage_fixture_assert_on_spans (text, "torch-block"), ==, 1);
  stage_fixture_clear (&fixture);
}

static void
test_complete_capture (void)
{
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-host");
  WickSession *session = fixture.session;
  WickStage *stage = register_host_stage (session);
  WickError error = { "" };
  WickCertification cert;

  /* identical output and reference, replay twice as fast: accepted */
  double eager[3] = { 2.0, 2.2, 1.8 }, replay[3] = { 1.0, 1.0, 1.0 };
  WickStageFigures figures = {
    .dot = 4.0, .out_squared = 4.0, .ref_squared = 4.0,
    .max_abs = 0.0, .p99_abs = 0.0,
    .eager_ms = eager, .replay_ms = replay, .n_rounds = 3,
  };
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_true (cert.accepted);
  g_assert_cmpstr (cert.verdict, ==, "accepted");
  g_assert_cmpfloat (cert.parity_cos, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (cert.speedup_median, 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (cert.speedup_min, 1.8, 1e-12);
  g_assert_cmpfloat_with_epsilon (cert.speedup_max, 2.2, 1e-12);
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_CAPTURED);
  WickCertification stored;
  g_assert_true (wick_stage_get_certification (stage, &stored));
  g_assert_cmpstr (stored.verdict, ==, "accepted");

  /* orthogonal output: the parity gate refuses with libwick's sentence */
  figures.dot = 0.0;
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_nonnull (strstr (cert.reason, "parity"));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_REFUSED);

  /* slower replay: the speedup gate refuses */
  figures.dot = 4.0;
  double slow[3] = { 3.0, 3.0, 3.0 };
  figures.replay_ms = slow;
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_nonnull (strstr (cert.reason, "not a net win"));

  /* a capture that failed: refused with the host's sentence */
  g_assert_true (wick_stage_complete_capture (stage, NULL, NULL, "operation not permitted when "
                                              "stream is capturing", &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_cmpstr (cert.reason, ==, "operation not permitted when stream is capturing");

  /* malformed completions */
  g_assert_false (wick_stage_complete_capture (stage, NULL, NULL, NULL, &cert, &error));
  g_assert_cmpstr (error.message, ==,
                   "stage 'torch-block': a completed capture needs its figures or a failure");
  WickCaptureOptions bad;
  wick_capture_options_init (&bad);
  bad.gate_cos = 2.0;
  g_assert_false (wick_stage_complete_capture (stage, &bad, &figures, NULL, &cert, &error));
  g_assert_cmpstr (error.message, ==, "capture options: gate_cos must be between 0 and 1, got 2");
  WickCaptureOptions no_speedup;
  wick_capture_options_init (&no_speedup);
  no_speedup.min_speedup = 0.0;
  figures.n_rounds = 0;
  g_assert_true (wick_stage_complete_capture (stage, &no_speedup, &figures, NULL, &cert, &error));
  g_assert_true (cert.accepted);
  g_assert_false (cert.speedup_checked);

  g_assert_true (wick_stage_release (stage, &error));
  g_assert_cmpint (wick_stage_get_state (stage), ==, WICK_STAGE_EAGER);

  /* a capture the host took as a request: its span runs from the take on
   * this thread to the completion, with a span of the host's inside */
  WickCaptureOptions asked;
  wick_capture_options_init (&asked);
  g_assert_true (wick_capture_options_validate (&asked, &asked, &error));
  wick_stage_set_capture_request (stage, &asked);
  WickCaptureOptions taken;
  g_assert_true (wick_stage_take_capture_request (stage, &taken));
  WickSpanId inner = wick_span_begin (session, "host capture work", WICK_SPAN_FUNCTION);
  g_assert_cmpuint (inner, !=, 0);
  g_assert_true (wick_span_end (session, inner));
  figures.n_rounds = 3;
  figures.replay_ms = replay;
  g_assert_true (wick_stage_complete_capture (stage, &taken, &figures, NULL, &cert, &error));
  g_assert_true (cert.accepted);

  /* a capture the host begins unasked (wick.torch's Stage.capture(), issue
   * 20): its span runs from the begin, not from the completion; one at a time */
  g_assert_true (wick_stage_begin_capture (stage, NULL, &error));
  g_assert_false (wick_stage_begin_capture (stage, NULL, &error));
  g_assert_cmpstr (error.message, ==, "stage 'torch-block': a capture has begun and not "
                                      "completed yet (wick_stage_complete_capture ends it)");
  error.message[0] = '\0';
  WickSpanId unasked = wick_span_begin (session, "unasked capture work", WICK_SPAN_FUNCTION);
  g_assert_true (wick_span_end (session, unasked));
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_false (wick_stage_begin_capture (NULL, NULL, &error));
  error.message[0] = '\0';

  stage_fixture_finish (&fixture);
  g_autofree char *text = stage_fixture_read_trace (&fixture);
  g_assert_nonnull (strstr (text, "\"verdict\":\"accepted\""));
  g_assert_nonnull (strstr (text, "\"kind\":\"wick_stage_release\""));
  g_assert_cmpuint (stage_fixture_assert_on_spans (text, "torch-block"), ==, 7);
  /* the taken capture's span holds the host's span */
  g_autofree char *inner_start
    = g_strdup_printf ("{\"kind\":\"span_start\",\"id\":\"s%llu\",\"parent_id\":\"s",
                       (unsigned long long)inner);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint found = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], inner_start))
      {
        found++;
        g_assert_false (g_str_has_prefix (lines[i] + strlen (inner_start), "1\""));
      }
  g_assert_cmpuint (found, ==, 1);
  /* ...and so does the unasked capture's */
  g_autofree char *unasked_start
    = g_strdup_printf ("{\"kind\":\"span_start\",\"id\":\"s%llu\",\"parent_id\":\"s",
                       (unsigned long long)unasked);
  found = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], unasked_start))
      {
        found++;
        g_assert_false (g_str_has_prefix (lines[i] + strlen (unasked_start), "1\""));
      }
  g_assert_cmpuint (found, ==, 1);
  stage_fixture_clear (&fixture);
}

/* How the eager rounds were timed rides on the certificate: a host that
 * suspended its recording says so and hands the instrumented times too; the
 * next capture without a note is "active" again; bad notes are refused. */
static void
test_eager_timing_note (void)
{
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-host");
  WickStage *stage = register_host_stage (fixture.session);
  WickError error = { "" };
  WickCertification cert;
  double eager[3] = { 2.0, 2.2, 1.8 }, replay[3] = { 1.0, 1.0, 1.0 };
  double instrumented[3] = { 9.0, 7.0, 8.0 };
  WickStageFigures figures = {
    .dot = 4.0, .out_squared = 4.0, .ref_squared = 4.0,
    .eager_ms = eager, .replay_ms = replay, .n_rounds = 3, .kernel_nodes = 12,
  };

  g_assert_true (wick_stage_note_eager_timing (stage, WICK_EAGER_RECORDING_SUSPENDED, instrumented,
                                               3, &error));
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_true (cert.accepted);
  g_assert_cmpuint (cert.eager_recording, ==, WICK_EAGER_RECORDING_SUSPENDED);
  g_assert_cmpfloat (cert.eager_instrumented_ms, ==, 8.0);
  g_assert_cmpfloat_with_epsilon (cert.eager_ms, 2.0, 1e-12);
  g_assert_cmpuint (cert.kernel_nodes, ==, 12);
  for (size_t i = 0; i < G_N_ELEMENTS (cert._wick_reserved); i++)
    g_assert_cmpuint (cert._wick_reserved[i], ==, 0);

  /* the note is for one capture */
  g_assert_true (wick_stage_complete_capture (stage, NULL, &figures, NULL, &cert, &error));
  g_assert_cmpuint (cert.eager_recording, ==, WICK_EAGER_RECORDING_ACTIVE);
  g_assert_true (isnan (cert.eager_instrumented_ms));

  g_assert_false (wick_stage_note_eager_timing (stage, WICK_EAGER_RECORDING_NONE, NULL, 0, &error));
  g_assert_cmpstr (error.message, ==,
                   "stage 'torch-block': eager recording 0 is not suspended (1) or active (2)");
  g_assert_false (wick_stage_note_eager_timing (stage, WICK_EAGER_RECORDING_SUSPENDED, NULL, 2,
                                                &error));
  g_assert_cmpstr (error.message, ==,
                   "stage 'torch-block': 2 instrumented eager rounds without their times");
  g_assert_false (wick_stage_note_eager_timing (stage, WICK_EAGER_RECORDING_SUSPENDED,
                                                instrumented, 5000, &error));
  g_assert_cmpstr (error.message, ==,
                   "stage 'torch-block': 5000 instrumented eager rounds (at most 1024)");
  g_assert_false (wick_stage_note_eager_timing (NULL, WICK_EAGER_RECORDING_SUSPENDED, NULL, 0,
                                                &error));
  g_assert_cmpstr (wick_eager_recording_name (WICK_EAGER_RECORDING_SUSPENDED), ==, "suspended");
  g_assert_null (wick_eager_recording_name ((WickEagerRecording)7));

  stage_fixture_finish (&fixture);
  g_autofree char *text = stage_fixture_read_trace (&fixture);
  g_assert_nonnull (strstr (text, "\"kernel_nodes\":12,\"eager_recording\":\"suspended\","
                                  "\"eager_instrumented_ms\":8,"));
  g_assert_nonnull (strstr (text, "\"eager_recording\":\"active\",\"eager_instrumented_ms\":null"));
  stage_fixture_clear (&fixture);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stages/host/registration", test_registration);
  g_test_add_func ("/stages/host/capture-without-cuda", test_capture_without_cuda);
  g_test_add_func ("/stages/host/complete-capture", test_complete_capture);
  g_test_add_func ("/stages/host/eager-timing-note", test_eager_timing_note);
  return g_test_run ();
}
