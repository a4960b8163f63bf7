/* test-ring-broken-attach.c — `wick-trace attach` (a real second process) on
 * a session whose ring breaks: it must print the ring's
 * error and its real losses, never "0 lost by this reader" or "stopped after
 * 0 s while the process was still running", and its file's terminal must
 * name the break. The break is a zero-length record committed through the
 * producer's own mapping (the memfd is sealed for everyone else), which is
 * why this test links the internal library. Every wait has a deadline. */
#include "wick-session-internal.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-test-wait.h"

static const WickRunInfo run = {
  .entrypoint = "ring::broken",
  .phase = WICK_PHASE_INFER,
  .capture_step = 1,
  .device = "cpu",
};

static void
test_attach_reports_broken_ring (void)
{
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace == NULL)
    {
      g_test_skip ("WICK_TRACE is not set");
      return;
    }
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = 256 * 1024, .max_threads = 2 };
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  g_assert_nonnull (session);
  g_assert_true (wick_session_enable_control (session, &error));

  g_autofree char *dir = g_dir_make_tmp ("wick-broken-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "attach.jsonl", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int)getpid ());
  const char *argv[] = { wick_trace, "attach", "--output", out, pid, NULL };
  /* The session's own sockets (its listener): the attach's connection adds
   * one here while it lasts. */
  guint sockets = wick_test_count_fds (0, "socket:");
  GPid child;
  int err_fd;
  GError *gerror = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           wick_test_die_with_parent, NULL, &child, NULL, NULL,
                                           &err_fd, &gerror));
  g_assert_no_error (gerror);
  /* Attached: its reader has begun (from then on it reads every record
   * committed, the bad one included). The reader maps the ring after hello
   * and takes its start there; it then asks for the attach snapshot and
   * closes its control connection. So once the ring is mapped in the child
   * and the session holds no connection, the reader has begun. */
  WICK_TEST_WAIT_UNTIL (wick_test_child_exited (child)
                          || (wick_test_maps_contain (child, "/memfd:wick-ring (deleted)")
                              && wick_test_count_fds (0, "socket:") == sockets),
                        60,
                        "wick-trace attach did not attach (ring mapped: %s; %u control "
                        "connections open)",
                        wick_test_maps_contain (child, "/memfd:wick-ring (deleted)") ? "yes" : "no",
                        wick_test_count_fds (0, "socket:") - sockets);
  g_assert_false (wick_test_child_exited (child));
  for (guint i = 0; i < 10; i++)
    g_assert_true (wick_session_record_call_edge (session, 1, 1, i, NULL));
  WickProducer *producer = wick_producer_get (session);
  WickRecordHeader *bad = wick_producer_reserve (producer, 8);
  g_assert_nonnull (bad);
  wick_producer_commit (producer, bad, 8, WICK_KIND_CALL_EDGE);
  bad->words = 0;
  /* 160 KiB after the break: past its chunk (so the loss can be counted)
   * and less than the ring (so the follower cannot be lapped past it) */
  guint after = 5000;
  for (guint i = 0; i < after; i++)
    g_assert_true (wick_session_record_call_edge (session, 1, 1, 10 + i, NULL));
  g_assert_true (wick_session_finish (session, &error));

  /* attach ends once the process has finished and it read everything */
  int status = wick_test_wait_child (child, 60, "wick-trace attach (after the session finished)");
  g_spawn_close_pid (child);
  GString *stderr_text = g_string_new (NULL);
  char buffer[4096];
  ssize_t n;
  while ((n = read (err_fd, buffer, sizeof buffer)) > 0)
    g_string_append_len (stderr_text, buffer, n);
  close (err_fd);
  g_test_message ("wick-trace said: %s", stderr_text->str);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_nonnull (strstr (stderr_text->str, "1 ring(s) broke: ring 0 at position "));
  g_assert_nonnull (strstr (stderr_text->str, "zero record length"));
  g_assert_null (strstr (stderr_text->str, " 0 lost by this reader"));
  g_autofree char *lost = g_strdup_printf (" %u lost by this reader", after + 3);
  g_assert_nonnull (strstr (stderr_text->str, lost));

  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (out, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint count = g_strv_length (lines) - 1;
  g_assert_cmpuint (count, >, 2);
  const char *terminal = lines[count - 1];
  g_assert_true (g_str_has_prefix (terminal, "{\"kind\":\"terminal\",\"outcome\":\"failed\""));
  g_assert_nonnull (strstr (terminal, "the process finished, but its terminal record was not "
                                      "read; the ring broke: ring 0 at position "));
  g_assert_null (strstr (terminal, "stopped after"));
  gboolean broken_line = FALSE;
  for (guint i = 0; i < count; i++)
    {
      /* the record rides in a standard line's "wick_records" */
      g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
      broken_line |= strstr (lines[i], "{\"kind\":\"wick_ring_broken\"") != NULL;
    }
  g_assert_true (broken_line);
  g_string_free (stderr_text, TRUE);
  wick_session_close (session);
  g_unlink (out);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *runtime_dir = g_dir_make_tmp ("wick-ring-test-XXXXXX", NULL);
  g_assert_nonnull (runtime_dir);
  g_chmod (runtime_dir, 0700);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  g_test_add_func ("/integration/ring/attach-reports-broken-ring", test_attach_reports_broken_ring);
  int status = g_test_run ();
  g_rmdir (runtime_dir);
  return status;
}
