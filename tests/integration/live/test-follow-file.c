/* test-follow-file.c — following a JSONL file appended by another process:
 * a partial last line waits for its newline, truncation and replacement start
 * over and say why, and `wick-trace attach --follow` saves wick-demo's own
 * trace file, written by the demo while it runs, as a trace the model reads. */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live/wick-follow-file.h"
#include "wick-document.h"

static char *dir;

static void
collect (const char *line, gsize length, gpointer user_data)
{
  g_ptr_array_add (user_data, g_strndup (line, length));
}

static void
die_with_parent (gpointer user_data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* A separate writer process: sh printing a line in two halves, then more. */
static GPid
spawn_writer (const char *path, const char *script)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "F", path, TRUE);
  GPid pid = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async (NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                die_with_parent, NULL, &pid, &error));
  g_assert_no_error (error);
  return pid;
}

static void
poll_until (WickFollowFile *file, GPtrArray *lines, guint want, char **reason)
{
  for (int i = 0; i < 1000 && lines->len < want; i++)
    {
      g_autoptr (GError) error = NULL;
      char *restarted = NULL;
      g_assert_cmpint (wick_follow_file_poll (file, 0, collect, lines, &restarted, &error), >=, 0);
      g_assert_no_error (error);
      if (restarted != NULL)
        {
          g_assert_nonnull (reason);
          g_free (*reason);
          *reason = restarted;
        }
      if (lines->len < want)
        g_usleep (10000);
    }
}

static void
test_partial_and_truncation (void)
{
  g_autofree char *path = g_build_filename (dir, "growing.jsonl", NULL);
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (WickFollowFile) file = wick_follow_file_new (path, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GPid writer = spawn_writer (path, "printf '{\"a\":1}\\n{\"b\":' >> \"$F\"; sleep 0.4; "
                                    "printf '2}\\n' >> \"$F\"; sleep 0.3; "
                                    "printf '{\"new\":1}\\n' > \"$F\"; sleep 0.3; "
                                    "printf '{\"new\":2}\\n' >> \"$F\"");
  char *reason = NULL;
  poll_until (file, lines, 1, &reason);
  g_assert_cmpuint (lines->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (lines, 0), ==, "{\"a\":1}");
  /* the half line waits */
  g_usleep (100000);
  wick_follow_file_poll (file, 0, collect, lines, NULL, &error);
  g_assert_cmpuint (lines->len, ==, 1);
  g_assert_cmpuint (wick_follow_file_get_pending (file), ==, 5);
  poll_until (file, lines, 2, &reason);
  g_assert_cmpstr (g_ptr_array_index (lines, 1), ==, "{\"b\":2}");
  /* `>` truncates: started over, with the reason */
  poll_until (file, lines, 4, &reason);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "truncated"));
  g_assert_cmpstr (g_ptr_array_index (lines, 2), ==, "{\"new\":1}");
  g_assert_cmpstr (g_ptr_array_index (lines, 3), ==, "{\"new\":2}");
  g_assert_cmpuint (wick_follow_file_get_restarts (file), ==, 1);
  g_free (reason);
  int status;
  waitpid (writer, &status, 0);
}

static void
test_replacement (void)
{
  g_autofree char *path = g_build_filename (dir, "replaced.jsonl", NULL);
  g_autofree char *other = g_build_filename (dir, "replaced.jsonl.new", NULL);
  g_assert_true (g_file_set_contents (path, "{\"old\":1}\n", -1, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (WickFollowFile) file = wick_follow_file_new (path, &error);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  char *reason = NULL;
  poll_until (file, lines, 1, &reason);
  g_assert_true (g_file_set_contents (other, "{\"other\":1}\n{\"other\":2}\n", -1, NULL));
  g_assert_cmpint (g_rename (other, path), ==, 0);
  poll_until (file, lines, 3, &reason);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "replaced"));
  g_assert_cmpstr (g_ptr_array_index (lines, 1), ==, "{\"other\":1}");
  g_free (reason);
}

static void
test_attach_follow_demo (void)
{
  g_autofree char *trace = g_build_filename (dir, "demo.jsonl", NULL);
  g_autofree char *out = g_build_filename (dir, "followed.jsonl", NULL);
  const char *demo[] = { g_getenv ("WICK_DEMO"), "--quiet", "--rate", "50", "--steps", "40",
                         "--trace", trace, NULL };
  GPid pid = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async (NULL, (char **)demo, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                die_with_parent, NULL, &pid, &error));
  for (int i = 0; i < 500 && !g_file_test (trace, G_FILE_TEST_EXISTS); i++)
    g_usleep (10000);
  const char *attach[]
    = { g_getenv ("WICK_TRACE"), "attach", "--follow", trace, "--duration", "60", "--output",
        out, NULL };
  int status = 0;
  g_autofree char *err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **)attach, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, &err, &status, &error));
  g_test_message ("%s", err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err, "the trace ended"));
  waitpid (pid, &status, 0);
  g_autofree char *a = NULL, *b = NULL;
  g_assert_true (g_file_get_contents (trace, &a, NULL, NULL));
  g_assert_true (g_file_get_contents (out, &b, NULL, NULL));
  g_assert_cmpstr (a, ==, b); /* every line, in order, while it was being written */
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (document, out, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (wick_document_get_capture_complete (document));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("wick-follow-XXXXXX", NULL);
  g_test_add_func ("/live/follow/partial-line-and-truncation", test_partial_and_truncation);
  g_test_add_func ("/live/follow/replacement", test_replacement);
  g_test_add_func ("/live/follow/attach-follow-demo", test_attach_follow_demo);
  int status = g_test_run ();
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", dir);
  return status;
}
