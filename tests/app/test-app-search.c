/* test-app-search.c — the window's search bar (Xvfb, suite app): Escape
 * closes it and clears the matches, typing a query never switches views
 * (Enter does, to the timeline's next match), and the entry captures no keys
 * typed into other views. */
#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-window-private.h"
#include "model/wick-chrome-import.h"

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

/* Search finds kernels (device slices), not only host slices: a torch 2.11
 * trace's 72 xmma gemm kernels, and stepping selects one. */
static void
test_timeline_search_kernels (void)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path
    = g_build_filename (dir ? dir : "tests/data", "gpu", "torch-cudagraph.json.gz", NULL);
  g_autoptr (WickDocument) document = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (document, path, NULL, NULL, NULL, &error));
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *view = g_object_ref_sink (wick_timeline_view_new (selection));
  wick_timeline_view_set_document (WICK_TIMELINE_VIEW (view), document);
  g_assert_cmpuint (wick_timeline_view_set_search (WICK_TIMELINE_VIEW (view), "XMMA_GEMM"), ==, 72);
  g_assert_cmpint (wick_timeline_view_step_match (WICK_TIMELINE_VIEW (view), 1), ==, 0);
  gint64 index;
  g_assert_cmpuint (wick_selection_get_event (selection, &index), ==, WICK_EVENT_DEVICE);
  WickEventRef ref = { WICK_EVENT_DEVICE, (guint32)index };
  g_assert_nonnull (
    strstr (wick_tracks_event_name (wick_document_get_tracks (document), ref), "xmma_gemm"));
  g_object_unref (view);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/app/search/bar", test_search_bar);
  g_test_add_func ("/app/search/kernels", test_timeline_search_kernels);
  return app_test_ui_run (app);
}
