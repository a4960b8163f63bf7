/* stage-test-fixture.h — what the stage tests share: a trace file in a
 * scratch directory and a CPU session recording into it (host timing, the
 * inference phase, capture step 1), and the trace read back. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

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
