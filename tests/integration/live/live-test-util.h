/* live-test-util.h — what the live integration tests share: a private runtime
 * directory for the control sockets, in-process sessions, children that die
 * with the test (wick_test_die_with_parent), and waits (with deadlines, wick-test-wait.h) on a live
 * session: its socket answering, its weight modules registered, records
 * arriving in its ring.
 */
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "client/wick-live-client.h"
#include "client/wick-live-stream.h"
#include "client/wick-live-stream-private.h"
#include "wick-test-wait.h"

/* How long a live wait may take before it fails: generous, since a sanitizer
 * build on a loaded machine starts wick-demo slowly. */
#define LIVE_TEST_WAIT_S 60

/* A new private (0700) directory, set as XDG_RUNTIME_DIR: the control
 * sockets of the sessions this test starts go there. */
static inline char *
live_test_runtime_dir_new (const char *template_name)
{
  char *dir = g_dir_make_tmp (template_name, NULL);
  g_assert_nonnull (dir);
  g_assert_cmpint (g_chmod (dir, 0700), ==, 0);
  g_setenv ("XDG_RUNTIME_DIR", dir, TRUE);
  return dir;
}

/* Removes @dir and everything in it, and frees it. */
static inline void
live_test_runtime_dir_remove (char *dir)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", dir);
  g_free (dir);
}

/* An in-process session (inference on the CPU, drop policy) named
 * @entrypoint, with its control socket when @control. */
static inline WickSession *
live_test_open_session (const char *entrypoint, gboolean control)
{
  WickRunInfo run = {
    .entrypoint = entrypoint,
    .phase = WICK_PHASE_INFER,
    .capture_step = 1,
    .warmup_steps = 0,
    .device = "cpu",
    .timing_mode = WICK_TIMING_HOST,
  };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_UNKNOWN };
  WickSessionOptions options = { .policy = WICK_RING_DROP, .enable_control = control };
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &contract, &options, &error);
  if (session == NULL)
    g_error ("opening a session: %s", error.message);
  if (control && !wick_session_enable_control (session, &error))
    g_error ("enabling control: %s", error.message);
  return session;
}

/* The control socket of process @pid once it answers; fails when @pid exits
 * first or no socket answers within LIVE_TEST_WAIT_S. */
static inline char *
live_test_wait_for_socket (GPid pid)
{
  char *path = NULL;
  WICK_TEST_WAIT_UNTIL (wick_test_child_exited (pid)
                          || (path = wick_live_find_socket (pid, NULL)) != NULL,
                        LIVE_TEST_WAIT_S, "no control socket of pid %d answered", (int)pid);
  if (path == NULL)
    g_error ("pid %d exited before its control socket answered", (int)pid);
  return path;
}

/* The number of weight modules the session at @socket_path lists (0 while it
 * has none or does not answer). */
static inline guint
live_test_count_modules (const char *socket_path)
{
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, NULL);
  if (connection == NULL)
    return 0;
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, request, 10000, NULL, NULL);
  if (reply == NULL || !wick_live_reply_check (reply, NULL)
      || !json_object_has_member (reply, "modules"))
    return 0;
  return json_array_get_length (json_object_get_array_member (reply, "modules"));
}

/* Waits until the session at @socket_path has registered @n weight modules
 * (wick-demo registers its three after writing its checkpoint, a while after
 * its socket appears). */
static inline void
live_test_wait_for_modules (const char *socket_path, guint n)
{
  guint listed = 0;
  WICK_TEST_WAIT_UNTIL ((listed = live_test_count_modules (socket_path)) >= n, LIVE_TEST_WAIT_S,
                        "the session at %s listed %u weight modules, not %u", socket_path, listed,
                        n);
}

/* A reader of the ring of the session at @socket_path (hello, no snapshot):
 * it sees what the session records from now on. */
static inline WickLiveStream *
live_test_watch (const char *socket_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, &error);
  g_assert_no_error (error);
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ring_fd, >=, 0);
  WickLiveStream *stream = wick_live_stream_new (ring_fd, FALSE, &error);
  close (ring_fd);
  g_assert_no_error (error);
  return stream;
}

typedef struct
{
  const char *needle;
  guint seen;
} LiveTestLineCount;

static inline void
live_test_count_line (const char *line, gsize length, gpointer user_data)
{
  LiveTestLineCount *count = user_data;
  count->seen += g_strstr_len (line, (gssize)length, count->needle) != NULL;
}

/* Drains @stream until @n more lines containing @needle have come out
 * (e.g. "\"name\":\"train_step\"": steps begun), failing with @what after
 * LIVE_TEST_WAIT_S or when the session ends first. */
static inline void
live_test_wait_for_lines (WickLiveStream *stream, const char *needle, guint n, const char *what)
{
  LiveTestLineCount count = { needle, 0 };
  WICK_TEST_WAIT_UNTIL ((wick_live_stream_drain (stream, 0, live_test_count_line, &count),
                         count.seen >= n || wick_live_stream_has_terminal (stream)),
                        LIVE_TEST_WAIT_S, "%s: %u of %u lines with %s arrived", what, count.seen, n,
                        needle);
  if (count.seen < n)
    g_error ("%s: the session ended after %u of %u lines with %s", what, count.seen, n, needle);
}

/* Watches the session at @socket_path until it has begun @n steps named
 * @span_name since the call. */
static inline void
live_test_wait_for_spans (const char *socket_path, const char *span_name, guint n)
{
  g_autoptr (WickLiveStream) stream = live_test_watch (socket_path);
  g_autofree char *needle = g_strdup_printf ("\"name\":\"%s\"", span_name);
  g_autofree char *what = g_strdup_printf ("waiting for %u %s spans", n, span_name);
  live_test_wait_for_lines (stream, needle, n, what);
}
