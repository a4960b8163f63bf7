/* stage-test-fixture.h — what the stage tests share: a trace file in a
 * scratch directory and a CPU session recording into it (host timing, the
 * inference phase, capture step 1), and the trace read back. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "stages/wick-stage-private.h"

typedef struct
{
  char *dir;
  char *path; /* dir/trace.jsonl */
  WickSession *session;
} StageFixture;

/* Opens a session named @entrypoint recording into a new scratch trace. */
static inline void
stage_fixture_open (StageFixture *fixture, const char *entrypoint)
{
  GError *local = NULL;
  fixture->dir = g_dir_make_tmp ("wick-stage-XXXXXX", &local);
  g_assert_no_error (local);
  fixture->path = g_build_filename (fixture->dir, "trace.jsonl", NULL);
  WickRunInfo run = {
    .entrypoint = entrypoint,
    .phase = WICK_PHASE_INFER,
    .capture_step = 1,
    .device = "cpu",
    .timing_mode = WICK_TIMING_HOST,
  };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_PROFILED_WORK };
  WickSessionOptions options = { .jsonl_path = fixture->path };
  WickError error = { "" };
  fixture->session = wick_session_open (&run, &contract, &options, &error);
  g_assert_cmpstr (error.message, ==, "");
  g_assert_nonnull (fixture->session);
}

/* Finishes and closes the session; the trace stays until stage_fixture_clear. */
static inline void
stage_fixture_finish (StageFixture *fixture)
{
  WickError error = { "" };
  g_assert_true (wick_session_finish (fixture->session, &error));
  g_assert_cmpstr (error.message, ==, "");
  wick_session_close (fixture->session);
  fixture->session = NULL;
}

/* The trace's text (after stage_fixture_finish); g_free it. */
static inline char *
stage_fixture_read_trace (const StageFixture *fixture)
{
  char *text = NULL;
  g_assert_true (g_file_get_contents (fixture->path, &text, NULL, NULL));
  return text;
}

/* Where a stage's records ride (docs/format.md "Wick keys"):
 * every "stage capture: NAME" span's span_start carries its
 * wick_stage_capture record and its span_end (found by id) its
 * wick_stage_certification; every "stage release: NAME" span_end its
 * wick_stage_release; no other line carries any of this stage's. Returns the number
 * of capture spans. */
static inline guint
stage_fixture_assert_on_spans (const char *trace, const char *stage)
{
  g_auto (GStrv) lines = g_strsplit (trace, "\n", -1);
  g_autofree char *capture = g_strdup_printf ("\"name\":\"stage capture: %s\"", stage);
  g_autofree char *release = g_strdup_printf ("\"name\":\"stage release: %s\"", stage);
  guint n_lines = g_strv_length (lines);
  g_autofree gboolean *expected = g_new0 (gboolean, n_lines + 1);
  guint captures = 0;
  for (guint i = 0; i < n_lines; i++)
    {
      gboolean is_capture = strstr (lines[i], capture) != NULL;
      if (!g_str_has_prefix (lines[i], "{\"kind\":\"span_start\"")
          || (!is_capture && strstr (lines[i], release) == NULL))
        continue;
      /* {"kind":"span_start","id":"sN",... */
      const char *id = lines[i] + strlen ("{\"kind\":\"span_start\",\"id\":");
      gsize id_length = strcspn (id + 1, "\"") + 2;
      g_autofree char *id_text = g_strndup (id, id_length);
      if (is_capture)
        {
          g_assert_nonnull (strstr (lines[i], "{\"kind\":\"wick_stage_capture\""));
          expected[i] = TRUE;
          captures++;
        }
      g_autofree char *end = g_strdup_printf ("{\"kind\":\"span_end\",\"id\":%s,", id_text);
      guint j = i + 1;
      while (j < n_lines && !g_str_has_prefix (lines[j], end))
        j++;
      g_assert_cmpuint (j, <, n_lines);
      g_assert_nonnull (strstr (lines[j], is_capture ? "{\"kind\":\"wick_stage_certification\""
                                                     : "{\"kind\":\"wick_stage_release\""));
      expected[j] = TRUE;
    }
  g_autofree char *named = g_strdup_printf ("\"stage\":\"%s\"", stage);
  for (guint i = 0; i < n_lines; i++)
    if (!expected[i] && strstr (lines[i], named) != NULL)
      {
        g_assert_null (strstr (lines[i], "{\"kind\":\"wick_stage_capture\""));
        g_assert_null (strstr (lines[i], "{\"kind\":\"wick_stage_certification\""));
        g_assert_null (strstr (lines[i], "{\"kind\":\"wick_stage_release\""));
      }
  return captures;
}

/* Removes the trace and its directory (closing a session left open). */
static inline void
stage_fixture_clear (StageFixture *fixture)
{
  if (fixture->session != NULL)
    wick_session_close (fixture->session);
  g_unlink (fixture->path);
  g_rmdir (fixture->dir);
  g_free (fixture->path);
  g_free (fixture->dir);
  *fixture = (StageFixture){ 0 };
}
