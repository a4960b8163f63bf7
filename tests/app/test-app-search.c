/* test-app-search.c — the window's search bar (Xvfb, suite app): Escape
 * closes it and clears the matches, typing a query never switches views
 * (Enter does, to the timeline's next match), and the entry captures no keys
 * typed into other views. */
#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-window-private.h"

static WickApplication *app;

static void
test_search_bar (void)
{
  WickWindow *window = app_test_window_open_example (app);
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

  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/app/search/bar", test_search_bar);
  return app_test_ui_run (app);
}
