/* test-app-follow.c — a window whose document is still being fed (under
 * Xvfb): provisional health (the Health page says the run is in progress and
 * counts the pending rules, the window's banner says so, and both give way to
 * the final verdicts when the document finishes). Skips without a display.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ui/live/wick-live-session.h"
#include "ui/wick-application.h"
#include "ui/wick-health-page.h"
#include "ui/wick-window-private.h"
#include "ui/wick-window.h"

static WickApplication *app;

/* Iterates until @done says so; fails after @timeout_ms (the machine may be loaded). */
static void
iterate_until (gboolean (*done) (gpointer), gpointer data, guint timeout_ms, const char *what)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("timed out after %u ms waiting for %s", timeout_ms, what);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

static void
close_window (WickWindow *window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  for (int i = 0; i < 50; i++)
    g_main_context_iteration (NULL, FALSE);
}

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  return g_build_filename (dir ? dir : "tests/data", "model", name, NULL);
}

static GStrv
fixture_lines (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strsplit (text, "\n", -1);
}

static gboolean
health_pending (gpointer page)
{
  return wick_health_page_get_n_pending (page) > 0;
}

static gboolean
health_final (gpointer page)
{
  return wick_health_page_get_n_pending (page) == 0
         && !g_str_has_prefix (wick_health_page_get_title (page), "Run in progress");
}

/* A training trace fed up to its first gradient: the Health page and the
 * banner say the run is in progress with its six pending rules, the window
 * shows no health-error banner; fed to the end and finished, the final
 * health (0 errors) and no banner. */
static void
test_provisional_health (void)
{
  g_auto (GStrv) lines = fixture_lines ();
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 700);
  gtk_window_present (GTK_WINDOW (window));
  wick_window_set_document (window, document);
  wick_window_set_live (window, TRUE);
  guint i = 0;
  for (; i < 20; i++)
    g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
  wick_document_analyze (document);
  wick_window_document_changed (window);
  const char *banner = wick_live_window_update_progress (window, document);
  g_assert_cmpstr (banner, ==, "The run is in progress: 6 health rules are pending until it ends.");
  g_assert_cmpstr (wick_live_window_get_progress (window), ==, banner);
  /* Shown once: the same text again does not re-add it. */
  g_assert_true (wick_live_window_update_progress (window, document) == banner);

  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  wick_window_show_page (window, "health");
  iterate_until (health_pending, health, 10000, "the pending rules on the Health page");
  g_assert_cmpuint (wick_health_page_get_n_pending (health), ==, 6);
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 0);
  g_assert_cmpstr (wick_health_page_get_title (health), ==,
                   "Run in progress: 0 errors, 0 warnings so far, 6 pending");
  /* Pending rules are not health errors: the only banner is the progress one. */
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 1);

  for (; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
  g_assert_true (wick_document_finish (document, NULL));
  wick_window_document_changed (window);
  g_assert_null (wick_live_window_update_progress (window, document));
  g_assert_null (wick_live_window_get_progress (window));
  iterate_until (health_final, health, 10000, "the final health");
  g_assert_cmpstr (wick_health_page_get_title (health), ==, "0 errors, 0 warnings");
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 0);
  close_window (window);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (!gtk_init_check ())
    {
      g_print ("1..0 # SKIP no display; the app's window tests run under Xvfb (tools/test.sh)\n");
      return 0;
    }
  adw_init ();
  app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  g_test_add_func ("/follow/provisional-health", test_provisional_health);
  int status = g_test_run ();
  g_object_unref (app);
  return status;
}
