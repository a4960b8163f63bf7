/* test-app-options.c — `wick`'s command line, parsed by GApplication's option
 * entries: --help lists the options, --attach takes a process id above 0 and
 * refuses anything else (0, negative, not a number) (exit status 1, a sentence naming the option),
 * and not together with --compare; run from the build tree it speaks German
 * under LANGUAGE=de (the build's catalogs). Runs the built binary; needs no display (the options are decided
 * before a window could open). Suite: app. */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <string.h>
#include <sys/wait.h>

static const char *app_path;
static const char *language = "C"; /* LANGUAGE for the runs: English unless a test says */

typedef struct
{
  int status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_free (run->out);
  g_free (run->err);
}

static void
run_wick (Run *run, const char *first, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  va_list args;
  g_autoptr (GError) error = NULL;
  int wait_status;

  g_ptr_array_add (argv, (char *)app_path);
  va_start (args, first);
  for (const char *a = first; a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (char *)a);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  /* No display: an option that were not refused would fail to open a window
   * instead of hanging the test. */
  g_auto (GStrv) envp = g_get_environ ();
  envp = g_environ_unsetenv (envp, "DISPLAY");
  envp = g_environ_unsetenv (envp, "WAYLAND_DISPLAY");
  envp = g_environ_setenv (envp, "LANGUAGE", language, TRUE);
  envp = g_environ_setenv (envp, "LC_ALL", "C.UTF-8", TRUE);
  g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &run->out, &run->err, &wait_status, &error));
  g_assert_no_error (error);
  run->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static void
test_help (void)
{
  Run run = { 0 };
  run_wick (&run, "--help", NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "--compare"));
  g_assert_nonnull (strstr (run.out, "--attach=PID"));
  g_assert_nonnull (strstr (run.out, "--follow"));
  run_clear (&run);
}

static void
test_attach_refused (void)
{
  if (!g_str_equal (g_getenv ("WICK_LIVE_UI"), "1"))
    {
      Run run = { 0 };
      run_wick (&run, "--attach=42", NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_nonnull (strstr (run.err, "no live capture"));
      run_clear (&run);
      return;
    }
  const char *bad[] = { "--attach=0", "--attach=-3", "--attach=abc", "--attach=12x" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      Run run = { 0 };
      run_wick (&run, bad[i], NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_nonnull (strstr (run.err, "--attach needs a process id above 0"));
      run_clear (&run);
    }
  /* the value is named */
  Run run = { 0 };
  run_wick (&run, "--attach=abc", NULL);
  g_assert_nonnull (strstr (run.err, "“abc”"));
  run_clear (&run);

  Run both = { 0 };
  run_wick (&both, "--attach=42", "--compare", "a.jsonl", "b.jsonl", NULL);
  g_assert_cmpint (both.status, ==, 1);
  g_assert_nonnull (strstr (both.err, "cannot be used together"));
  run_clear (&both);
}

/* `wick --compare A` (and `wick --compare` alone) is refused with exit status
 * 1 (a script cannot tell a refusal that exits 0 from success). Needs a
 * display: without one GTK's startup fails first, which says nothing about
 * --compare. */
static void
test_compare_needs_two (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display (run the app suite under xvfb-run)");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("wick-app-compare-XXXXXX", NULL);
  g_autofree char *a = g_build_filename (dir, "a.jsonl", NULL);
  g_assert_true (g_file_set_contents (a, "{}\n", -1, NULL));
  const char *const forms[][3] = { { "--compare", a, NULL }, { "--compare", NULL, NULL } };
  for (guint f = 0; f < G_N_ELEMENTS (forms); f++)
    {
      g_autoptr (GPtrArray) argv = g_ptr_array_new ();
      g_autoptr (GError) error = NULL;
      g_autofree char *err = NULL;
      int wait_status = 0;
      g_ptr_array_add (argv, "timeout");
      g_ptr_array_add (argv, "20");
      g_ptr_array_add (argv, (char *)app_path);
      for (int i = 0; forms[f][i] != NULL; i++)
        g_ptr_array_add (argv, (char *)forms[f][i]);
      g_ptr_array_add (argv, NULL);
      g_auto (GStrv) envp = g_get_environ ();
      envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
      envp = g_environ_setenv (envp, "LC_ALL", "C.UTF-8", TRUE);
      g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, envp, G_SPAWN_SEARCH_PATH, NULL,
                                   NULL, NULL, &err, &wait_status, &error));
      g_assert_no_error (error);
      g_assert_true (WIFEXITED (wait_status));
      g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1); /* 124: a window opened */
      g_assert_nonnull (strstr (err, "--compare needs exactly two traces"));
    }
  g_unlink (a);
  g_rmdir (dir);
}

/* Run from the build tree, wick reads the catalogs the build compiled
 * (<build>/po, as it reads the schema there): German under LANGUAGE=de
 * without `meson install`. */
static void
test_german_from_build_tree (void)
{
  Run help = { 0 }, refused = { 0 };

  if (setlocale (LC_ALL, "C.UTF-8") == NULL)
    {
      g_test_skip ("no C.UTF-8 locale: gettext ignores LANGUAGE in \"C\"");
      return;
    }
  setlocale (LC_ALL, "C");
  language = "de";
  run_wick (&help, "--help", NULL);
  run_wick (&refused, "--attach=0", NULL);
  language = "C";
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "--compare"));
  if (strstr (help.out, "Compare two traces") != NULL)
    g_error ("wick --help is English under LANGUAGE=de:\n%s", help.out);
  g_assert_cmpint (refused.status, ==, 1);
  if (g_str_equal (g_getenv ("WICK_LIVE_UI"), "1"))
    {
      g_assert_null (strstr (refused.err, "needs a process id"));
      g_assert_nonnull (strstr (refused.err, "„0“"));
    }
  run_clear (&help);
  run_clear (&refused);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  app_path = g_getenv ("WICK_APP");
  g_assert_nonnull (app_path);
  g_test_add_func ("/app/options/help", test_help);
  g_test_add_func ("/app/options/attach-refused", test_attach_refused);
  g_test_add_func ("/app/options/compare-needs-two", test_compare_needs_two);
  g_test_add_func ("/app/options/german-from-build-tree", test_german_from_build_tree);
  return g_test_run ();
}
