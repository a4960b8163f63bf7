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

#include "live-test-util.h"
#include "client/wick-follow-file.h"
#include "wick-document.h"

static char *dir;

static void
collect (const char *line, gsize length, gpointer user_data)
{
  g_ptr_array_add (user_data, g_strndup (line, length));
}

/* A separate writer process: sh running @script with $F set to @path, its
 * stdin and stdout pipes to this test. */
typedef struct
{
  GPid pid;
  int to_writer;   /* a newline lets it go on */
  int from_writer; /* it says each step it has written */
} Writer;

static Writer
spawn_writer (const char *path, const char *script)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "F", path, TRUE);
  Writer writer = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                           wick_test_die_with_parent, NULL, &writer.pid,
                                           &writer.to_writer, &writer.from_writer, NULL, &error));
  g_assert_no_error (error);
  return writer;
}

/* Waits until the writer says it has written step @step. */
static void
writer_wrote (Writer *writer, const char *step)
{
  g_autofree char *said = wick_test_read_line (writer->from_writer, 30, "the writer");
  g_assert_cmpstr (said, ==, step);
}

/* Lets the writer go on to its next step. */
static void
writer_go_on (Writer *writer)
{
  g_assert_cmpint (write (writer->to_writer, "\n", 1), ==, 1);
}

static void
writer_finish (Writer *writer)
{
  close (writer->to_writer);
  close (writer->from_writer);
  int status = wick_test_wait_child (writer->pid, 30, "the writer");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_spawn_close_pid (writer->pid);
}

/* Polls @file once; returns how many lines it has delivered in all. */
static guint
poll_once (WickFollowFile *file, GPtrArray *lines, char **reason)
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
  return lines->len;
}

static void
poll_until (WickFollowFile *file, GPtrArray *lines, guint want, char **reason)
{
  WICK_TEST_WAIT_UNTIL (poll_once (file, lines, reason) >= want, 30,
                        "the follower delivered %u lines, not %u", lines->len, want);
}

/* Each step of the writer waits for the test, so every poll sees exactly the
 * file the step left: a half line, its end, a truncation, an append. */
static void
test_partial_and_truncation (void)
{
  g_autofree char *path = g_build_filename (dir, "growing.jsonl", NULL);
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (WickFollowFile) file = wick_follow_file_new (path, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  Writer writer = spawn_writer (path, "printf '{\"a\":1}\\n{\"b\":' >> \"$F\"; echo 1; read go; "
                                      "printf '2}\\n' >> \"$F\"; echo 2; read go; "
                                      "printf '{\"new\":1}\\n' > \"$F\"; echo 3; read go; "
                                      "printf '{\"new\":2}\\n' >> \"$F\"; echo 4");
  char *reason = NULL;
  writer_wrote (&writer, "1");
  g_assert_cmpuint (poll_once (file, lines, &reason), ==, 1);
  g_assert_cmpstr (g_ptr_array_index (lines, 0), ==, "{\"a\":1}");
  /* the half line waits, however often the file is polled */
  g_assert_cmpuint (poll_once (file, lines, &reason), ==, 1);
  g_assert_cmpuint (wick_follow_file_get_pending (file), ==, 5);
  writer_go_on (&writer);
  writer_wrote (&writer, "2");
  poll_until (file, lines, 2, &reason);
  g_assert_cmpuint (lines->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (lines, 1), ==, "{\"b\":2}");
  g_assert_null (reason);
  /* `>` truncates: started over, with the reason */
  writer_go_on (&writer);
  writer_wrote (&writer, "3");
  poll_until (file, lines, 3, &reason);
  g_assert_nonnull (reason);
  g_assert_nonnull (strstr (reason, "truncated"));
  g_assert_cmpstr (g_ptr_array_index (lines, 2), ==, "{\"new\":1}");
  writer_go_on (&writer);
  writer_wrote (&writer, "4");
  poll_until (file, lines, 4, &reason);
  g_assert_cmpuint (lines->len, ==, 4);
  g_assert_cmpstr (g_ptr_array_index (lines, 3), ==, "{\"new\":2}");
  g_assert_cmpuint (wick_follow_file_get_restarts (file), ==, 1);
  g_free (reason);
  writer_finish (&writer);
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
                                wick_test_die_with_parent, NULL, &pid, &error));
  WICK_TEST_WAIT_UNTIL (g_file_test (trace, G_FILE_TEST_EXISTS) || wick_test_child_exited (pid),
                        LIVE_TEST_WAIT_S, "wick-demo did not create its trace %s", trace);
  g_assert_true (g_file_test (trace, G_FILE_TEST_EXISTS));
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
  status = wick_test_wait_child (pid, LIVE_TEST_WAIT_S, "wick-demo");
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_spawn_close_pid (pid);
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
