/* test-app-search.c — the window's search bar (Xvfb, suite app): Escape
 * closes it and clears the matches, typing a query never switches views
 * (Enter does, to the timeline's next match), and the entry captures no keys
 * typed into other views. */
#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "app-test-util.h"
#include "ui/wick-application.h"
#include "ui/wick-window-private.h"

static WickApplication *app;

static gboolean
is_document (gpointer window)
{
  return g_strcmp0 (wick_window_get_state (window), "document") == 0;
}

static gboolean
is_timeline_sized (gpointer window)
{
  GtkWidget *timeline = wick_window_get_view (window, "timeline");
  return gtk_widget_get_mapped (timeline) && gtk_widget_get_width (timeline) > 200;
}

static WickWindow *
open_example (void)
{
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_autofree char *path = app_test_example_path ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (window, file);
  app_test_iterate_until (is_document, window, 20000, "the example trace to load");
  app_test_iterate_until (is_timeline_sized, window, 10000, "the timeline to be shown");
  return window;
}

static void
test_search_bar (void)
{
  WickWindow *window = open_example ();
  GtkSearchBar *bar = wick_window_get_search_bar (window);
  GtkSearchEntry *entry = wick_window_get_search_entry (window);

  /* The entry takes no keys typed elsewhere (the timeline's own keys). */
  g_assert_null (gtk_search_bar_get_key_capture_widget (bar));

  /* Editing the query on another view keeps that view. */
  GtkWidget *memory = wick_window_get_view (window, "memory");
  g_assert_nonnull (memory);
  GtkWidget *stack = gtk_widget_get_ancestor (memory, ADW_TYPE_VIEW_STACK);
  g_assert_nonnull (stack);
  adw_view_stack_set_visible_child_name (ADW_VIEW_STACK (stack), "memory");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.search", NULL));
  g_assert_true (gtk_search_bar_get_search_mode (bar));
  wick_window_search (window, "train");
  app_test_iterate_pending (500);
  g_assert_cmpstr (wick_window_get_visible_view (window), ==, "memory");
  g_assert_true (g_str_has_suffix (wick_window_get_match_text (window), "match")
                 || g_str_has_suffix (wick_window_get_match_text (window), "matches"));

  /* Enter goes to the timeline and its first match. */
  g_signal_emit_by_name (entry, "activate");
  g_assert_cmpstr (wick_window_get_visible_view (window), ==, "timeline");
  g_assert_true (strstr (wick_window_get_match_text (window), "1 of ") != NULL);

  /* Escape (GtkSearchEntry's stop-search binding) closes the bar and clears
   * the matches. */
  g_signal_emit_by_name (entry, "stop-search");
  app_test_iterate_pending (500);
  g_assert_false (gtk_search_bar_get_search_mode (bar));
  g_assert_cmpstr (wick_window_get_match_text (window), ==, "");

  gtk_window_destroy (GTK_WINDOW (window));
  app_test_iterate_pending (500);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (!gtk_init_check ())
    {
      /* A TAP plan of no tests with SKIP: meson reports the test skipped. */
      g_print ("1..0 # SKIP no display; the app's window tests run under Xvfb\n");
      return 0;
    }
  adw_init ();
  app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  g_test_add_func ("/app/search/bar", test_search_bar);
  int status = g_test_run ();
  g_object_unref (app);
  return status;
}
