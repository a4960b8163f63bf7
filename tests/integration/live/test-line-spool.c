/* test-line-spool.c — a live session's lines kept on disk for Save As…
 * (app/client/wick-line-spool.c): saves are whole lines in order while another
 * thread appends, the trailer follows them, the file is anonymous, and a
 * write error keeps the whole lines written before it and counts the rest.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "wick-line-spool.h"
#include "wick-line-spool-private.h"

static char *directory;

#define N_LINES 200000

static gpointer
append_lines (gpointer data)
{
  WickLineSpool *spool = data;
  for (guint i = 0; i < N_LINES; i++)
    {
      char line[64];
      int n = g_snprintf (line, sizeof line, "{\"n\":%u}", i);
      wick_line_spool_append (spool, line, (gsize)n);
      if (i % 997 == 0)
        g_assert_true (wick_line_spool_flush (spool, NULL));
    }
  g_assert_true (wick_line_spool_flush (spool, NULL));
  return NULL;
}

/* Checks that @path holds lines {"n":0}... in order, whole, then @trailer;
 * returns the count. */
static guint
check_saved (const char *path, const char *trailer)
{
  g_autofree char *text = NULL;
  gsize length;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &text, &length, &error));
  g_assert_no_error (error);
  gsize body = length - strlen (trailer);
  g_assert_cmpstr (text + body, ==, trailer);
  guint n = 0;
  for (const char *p = text; p < text + body; n++)
    {
      char expected[64];
      int len = g_snprintf (expected, sizeof expected, "{\"n\":%u}\n", n);
      g_assert_cmpint (strncmp (p, expected, (gsize)len), ==, 0);
      p += len;
    }
  return n;
}

static void
test_spool_save_while_appending (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickLineSpool) spool = wick_line_spool_new (&error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (directory, "saved.jsonl", NULL);
  GThread *thread = g_thread_new ("append", append_lines, spool);
  guint saves = 0, last = 0;
  const char *trailer = "{\"kind\":\"terminal\"}\n";
  while (wick_line_spool_get_lines (spool) < N_LINES)
    {
      guint64 bytes = wick_line_spool_get_bytes (spool);
      g_assert_true (wick_line_spool_save (spool, path, bytes, trailer, &error));
      g_assert_no_error (error);
      guint n = check_saved (path, trailer);
      g_assert_cmpuint (n, >=, last);
      last = n;
      saves++;
    }
  g_thread_join (thread);
  g_assert_true (wick_line_spool_save (spool, path, wick_line_spool_get_bytes (spool), NULL,
                                       &error));
  g_assert_cmpuint (check_saved (path, ""), ==, N_LINES);
  g_assert_cmpuint (wick_line_spool_get_lost_lines (spool), ==, 0);
  g_assert_null (wick_line_spool_get_error (spool));
  g_test_message ("%u saves while appending", saves);
  /* only whole files are left: no temporary next to the saved one */
  g_autoptr (GDir) dir = g_dir_open (directory, 0, NULL);
  guint entries = 0;
  while (g_dir_read_name (dir) != NULL)
    entries++;
  g_assert_cmpuint (entries, ==, 1);
}

static void
test_spool_anonymous (void)
{
  g_autoptr (WickLineSpool) spool = wick_line_spool_new (NULL);
  g_assert_nonnull (spool);
  /* the lines are not in this process's heap: a fd on a memfd or an
   * unlinked file */
  gboolean found = FALSE;
  g_autoptr (GDir) fds = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  while (fds != NULL && (name = g_dir_read_name (fds)) != NULL)
    {
      g_autofree char *link = g_strdup_printf ("/proc/self/fd/%s", name);
      g_autofree char *target = g_file_read_link (link, NULL);
      if (target != NULL
          && (g_str_has_prefix (target, "/memfd:wick-live-lines")
              || (strstr (target, "wick-live-lines") != NULL
                  && g_str_has_suffix (target, "(deleted)"))))
        found = TRUE;
    }
  g_assert_true (found);
}

static void
test_spool_write_error (void)
{
  g_autoptr (WickLineSpool) spool = wick_line_spool_new (NULL);
  struct rlimit old, small = { 0 };
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  small.rlim_cur = 4096;
  small.rlim_max = old.rlim_max;
  signal (SIGXFSZ, SIG_IGN);
  char line[100];
  memset (line, 'a', sizeof line);
  /* 30 lines of 101 bytes fit the limit; the next flush does not */
  for (guint i = 0; i < 30; i++)
    wick_line_spool_append (spool, line, sizeof line);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &small), ==, 0);
  g_assert_true (wick_line_spool_flush (spool, NULL));
  for (guint i = 0; i < 20; i++)
    wick_line_spool_append (spool, line, sizeof line);
  g_autoptr (GError) error = NULL;
  gboolean ok = wick_line_spool_flush (spool, &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  g_assert_false (ok);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Save As"));
  g_assert_cmpuint (wick_line_spool_get_lines (spool), ==, 30);
  g_assert_cmpuint (wick_line_spool_get_lost_lines (spool), ==, 20);
  /* later lines are counted too, never half kept */
  wick_line_spool_append (spool, line, sizeof line);
  g_assert_false (wick_line_spool_flush (spool, NULL));
  g_assert_cmpuint (wick_line_spool_get_lost_lines (spool), ==, 21);
  g_autofree char *message = wick_line_spool_get_error (spool);
  g_assert_nonnull (message);
  g_autofree char *path = g_build_filename (directory, "cut.jsonl", NULL);
  g_assert_true (wick_line_spool_save (spool, path, wick_line_spool_get_bytes (spool), NULL,
                                       NULL));
  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_assert_cmpuint (length, ==, 30 * (sizeof line + 1));
}

static void
test_spool_save_error (void)
{
  g_autoptr (WickLineSpool) spool = wick_line_spool_new (NULL);
  wick_line_spool_append (spool, "{}", 2);
  wick_line_spool_flush (spool, NULL);
  g_autofree char *path = g_build_filename (directory, "no-such-dir", "x.jsonl", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_false (wick_line_spool_save (spool, path, 3, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, path));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  directory = g_dir_make_tmp ("wick-spool-XXXXXX", NULL);
  g_test_add_func ("/live/spool/save-while-appending", test_spool_save_while_appending);
  g_test_add_func ("/live/spool/anonymous", test_spool_anonymous);
  g_test_add_func ("/live/spool/write-error", test_spool_write_error);
  g_test_add_func ("/live/spool/save-error", test_spool_save_error);
  int status = g_test_run ();
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", directory);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", directory);
  g_free (directory);
  return status;
}
