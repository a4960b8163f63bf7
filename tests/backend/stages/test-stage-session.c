/* test-stage-session.c — stages registered on a session: the registry, the
 * demo's two stages on a machine without a GPU, and the certification record
 * a refused capture leaves in the JSONL trace. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "demo/wick-demo-stage.h"
#include "stage-test-fixture.h"

static float host_input[4], host_output[4];
static const int64_t host_shape[1] = { 4 };

static void
host_enqueue (void *stream, void *user_data)
{
  for (int i = 0; i < 4; i++)
    host_output[i] = host_input[i] + 1.0f;
}

static void
test_registry (void)
{
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-session");
  WickSession *session = fixture.session;
  WickError error = { "" };
  WickStageInfo info = {
    .name = "plus-one",
    .enqueue = host_enqueue,
    .windows = &(WickStageBuffer){ "input", host_input, WICK_STAGE_DTYPE_F32, host_shape, 1 },
    .n_windows = 1,
    .output = { NULL, host_output, WICK_STAGE_DTYPE_F32, host_shape, 1 },
  };
  g_assert_cmpuint (wick_session_get_n_stages (session), ==, 0);
  WickStage *stage = wick_session_register_stage (session, &info, &error);
  g_assert_nonnull (stage);
  g_assert_null (wick_session_register_stage (session, &info, &error));
  g_assert_cmpstr (error.message, ==, "stage 'plus-one' is already registered on this session");
  g_assert_cmpuint (wick_session_get_n_stages (session), ==, 1);
  g_assert_true (wick_session_get_stage (session, 0) == stage);
  g_assert_null (wick_session_get_stage (session, 1));
  g_assert_true (wick_session_find_stage (session, "plus-one") == stage);
  g_assert_null (wick_session_find_stage (session, "plus-two"));
  g_assert_cmpstr (wick_stage_get_name (stage), ==, "plus-one");
  g_assert_cmpuint (wick_stage_get_n_windows (stage), ==, 1);
  WickStageBuffer window;
  g_assert_true (wick_stage_get_window (stage, 0, &window));
  g_assert_cmpstr (window.name, ==, "input");
  g_assert_cmpint (window.shape[0], ==, 4);
  g_assert_false (wick_stage_get_window (stage, 1, &window));

  stage_fixture_finish (&fixture);
  stage_fixture_clear (&fixture);
}

static void
test_demo_without_gpu (void)
{
  WickError why = { "" };
  if (wick_cuda_available (&why))
    {
      g_test_skip ("a CUDA device is available here: the CUDA suite captures the demo stages");
      return;
    }
  StageFixture fixture;
  stage_fixture_open (&fixture, "test-stage-session");
  WickSession *session = fixture.session;
  WickError error = { "" };
  g_assert_true (wick_demo_stage_register (session, &error));
  g_assert_cmpuint (wick_session_get_n_stages (session), ==, 2);
  WickStage *safe = wick_session_find_stage (session, WICK_DEMO_STAGE_NAME);
  WickStage *unsafe = wick_session_find_stage (session, WICK_DEMO_UNSAFE_STAGE_NAME);
  g_assert_nonnull (safe);
  g_assert_nonnull (unsafe);

  /* the eager CPU path runs and denoises: finite, and not the noise itself */
  g_assert_true (wick_demo_stage_step (session, 0, &error));
  WickStageBuffer output, noise;
  g_assert_true (wick_stage_get_output (safe, &output));
  g_assert_true (wick_stage_get_window (safe, 0, &noise));
  const float *x = output.data;
  bool moved = false;
  for (int i = 0; i < 64 * 64; i++)
    {
      g_assert_true (isfinite (x[i]));
      moved = moved || x[i] != ((const float *)noise.data)[i];
    }
  g_assert_true (moved);

  WickCertification cert;
  g_assert_true (wick_stage_capture (safe, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_true (g_str_has_prefix (cert.reason, "no CUDA device is available: "));
  g_assert_cmpstr (cert.reason, ==, why.message);
  g_assert_true (wick_stage_capture (unsafe, NULL, &cert, &error));
  g_assert_false (cert.accepted);
  g_assert_true (wick_demo_stage_step (session, 1, &error));

  stage_fixture_finish (&fixture);

  g_autofree char *contents = stage_fixture_read_trace (&fixture);
  g_auto (GStrv) lines = g_strsplit (contents, "\n", -1);
  guint certifications = 0;
  /* certifications ride in "wick_records" of standard lines */
  for (guint i = 0; lines[i] != NULL; i++)
    for (const char *p = strstr (lines[i], "{\"kind\":\"wick_stage_certification\""); p != NULL;
         p = strstr (p + 1, "{\"kind\":\"wick_stage_certification\""))
      {
        certifications++;
        g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
        g_assert_true (strstr (p, "\"verdict\":\"refused\"") != NULL);
        g_assert_true (strstr (p, "\"reason\":\"no CUDA device is available") != NULL);
        g_assert_true (strstr (p, "\"windows\":[{\"name\":\"noise\",\"dtype\":\"f32\","
                                  "\"shape\":[64,64]},{\"name\":\"cond\",\"dtype\":"
                                  "\"f32\",\"shape\":[64]}]")
                       != NULL);
      }
  g_assert_cmpuint (certifications, ==, 2);
  /* each on the span_end of its capture's span */
  g_assert_cmpuint (stage_fixture_assert_on_spans (contents, WICK_DEMO_STAGE_NAME), ==, 1);
  g_assert_cmpuint (stage_fixture_assert_on_spans (contents, WICK_DEMO_UNSAFE_STAGE_NAME), ==, 1);
  stage_fixture_clear (&fixture);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stages/session/registry", test_registry);
  g_test_add_func ("/stages/session/demo-without-gpu", test_demo_without_gpu);
  return g_test_run ();
}
