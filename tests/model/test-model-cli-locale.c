/* test-model-cli-locale.c — wick-trace's health sentences stay candle-graph's
 * English in a German locale with the wick catalog reachable: the
 * model translates its messages for the app, and installed under /usr glibc
 * finds the catalog for wick-trace too, whose `check --json` output scripts
 * read. Each case runs in a subprocess with LANGUAGE=de and LC_ALL set to
 * de_DE.UTF-8 where that locale is installed, else C.UTF-8 (gettext honours
 * LANGUAGE there, not in "C"), the build tree's compiled catalog
 * (<build>/po/de/LC_MESSAGES/wick.mo) bound as an installed one would be
 * found. The control case, the user's locale as the app sets it, must come out
 * German, so the English of the wick-trace case is the locale setup's doing,
 * not a catalog that was never read. Suite: model.
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <locale.h>

#include "model-test-util.h"
#include "wick-trace-locale.h"

#define ENGLISH "no operation evidence was captured"
#define GERMAN "keine Operationsbelege aufgezeichnet"

static const char *locale_name;

/* The operations_absent sentence of a clean trace without operations. */
static char *
operations_absent_message (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);
  const WickHealthIssue *issue = find_issue (doc, "operations_absent");

  g_assert_nonnull (issue);
  return g_strdup (issue->message);
}

static void
run_child (void)
{
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* The app's setup (main.c): the user's locale, messages included. */
static void
test_user_locale_translates (void)
{
  if (g_test_subprocess ())
    {
      g_assert_nonnull (setlocale (LC_ALL, ""));
      g_autofree char *message = operations_absent_message ();
      g_assert_cmpstr (message, ==, GERMAN);
      return;
    }
  run_child ();
}

/* wick-trace's setup: the same environment, English sentences. */
static void
test_wick_trace_stays_english (void)
{
  if (g_test_subprocess ())
    {
      wick_trace_setup_locale ();
      g_assert_cmpstr (setlocale (LC_CTYPE, NULL), ==, locale_name);
      g_autofree char *message = operations_absent_message ();
      g_assert_cmpstr (message, ==, ENGLISH);
      return;
    }
  run_child ();
}

int
main (int argc, char **argv)
{
  g_autofree char *catalogs = g_build_filename (WICK_BUILD_DIR, "po", NULL);
  g_autofree char *mo = g_build_filename (catalogs, "de", "LC_MESSAGES", "wick.mo", NULL);

  if (setlocale (LC_ALL, "de_DE.UTF-8") != NULL)
    locale_name = "de_DE.UTF-8";
  else if (setlocale (LC_ALL, "C.UTF-8") != NULL)
    locale_name = "C.UTF-8";
  else
    {
      g_print ("1..0 # SKIP neither de_DE.UTF-8 nor C.UTF-8 is installed (gettext ignores "
               "LANGUAGE in the C locale)\n");
      return 0;
    }
  g_test_init (&argc, &argv, NULL);
  setlocale (LC_ALL, "C"); /* each case sets it up as its program does */
  if (!g_file_test (mo, G_FILE_TEST_EXISTS))
    g_error ("%s is missing: the build compiles po/de.po there", mo);
  g_setenv ("LC_ALL", locale_name, TRUE);
  g_setenv ("LANGUAGE", "de", TRUE);
  /* Where an installed wick's catalog would be found; wick-trace calls no
   * textdomain (), so the default domain stays "messages" as in the binary. */
  bindtextdomain (GETTEXT_PACKAGE, catalogs);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  g_test_add_func ("/cli-locale/user-locale-translates", test_user_locale_translates);
  g_test_add_func ("/cli-locale/wick-trace-stays-english", test_wick_trace_stays_english);
  return g_test_run ();
}
