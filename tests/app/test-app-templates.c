/* test-app-templates.c — the widgets built from GtkBuilder templates (the
 * .ui files in data/ui/) get their template: every bound child present with
 * its type, the translated strings of the .ui shown, each controller
 * connected to its callback, and nothing left behind after dispose. A .ui
 * that does not parse, names a missing callback or an unknown type fails
 * here (GtkBuilder's criticals are fatal in tests).
 */
#include "config.h"

#include <adwaita.h>

#include "app-test-ui.h"
#include "ui/wick-compare-window.h"
#include "ui/wick-compare-window-private.h"
#include "ui/wick-costs-page.h"
#include "ui/wick-coverage-page.h"
#include "ui/wick-details-pane.h"
#include "ui/wick-details-pane-private.h"
#include "ui/wick-health-page.h"
#include "ui/wick-memory-view.h"
#include "ui/wick-memory-view-private.h"
#include "ui/wick-timeline-overview.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-window-private.h"

static WickApplication *app;

static GObject *
template_child (gpointer widget, GType type, const char *name)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (widget), type, name);
  if (child == NULL)
    g_error ("%s: template child \"%s\" is not bound", g_type_name (type), name);
  return child;
}

static void
assert_child_type (gpointer widget, GType type, const char *name, GType expected)
{
  GObject *child = template_child (widget, type, name);
  if (!g_type_is_a (G_OBJECT_TYPE (child), expected))
    g_error ("%s: template child \"%s\" is a %s, not a %s", g_type_name (type), name,
             G_OBJECT_TYPE_NAME (child), g_type_name (expected));
}

static void
test_details_pane (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *pane = g_object_ref_sink (wick_details_pane_new (selection));
  GType type = WICK_TYPE_DETAILS_PANE;
  assert_child_type (pane, type, "scrolled", GTK_TYPE_SCROLLED_WINDOW);
  assert_child_type (pane, type, "range_box", GTK_TYPE_BOX);
  assert_child_type (pane, type, "title", GTK_TYPE_LABEL);
  assert_child_type (pane, type, "grid", GTK_TYPE_GRID);
  assert_child_type (pane, type, "hint", GTK_TYPE_LABEL);
  assert_child_type (pane, type, "contents", GTK_TYPE_BOX);
  g_assert_true (gtk_widget_get_first_child (pane)
                 == (GtkWidget *)template_child (pane, type, "scrolled"));
  /* Nothing selected: the title and the hint of the .ui. */
  g_assert_cmpstr (wick_details_pane_get_title (WICK_DETAILS_PANE (pane)), ==, "Nothing selected");
  GtkWidget *hint = GTK_WIDGET (template_child (pane, type, "hint"));
  g_assert_true (gtk_widget_get_visible (hint));
  g_assert_true (
    g_str_has_prefix (gtk_label_get_text (GTK_LABEL (hint)), "Click any event on the timeline"));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (template_child (pane, type, "range_box"))));
  g_assert_true (
    gtk_widget_has_css_class (GTK_WIDGET (template_child (pane, type, "title")), "title-3"));

  /* A record: its fields in the grid, the hint hidden; then nothing again. */
  g_autoptr (WickDocument) document = app_test_document_from_text (
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\",\"count\":3}");
  wick_details_pane_set_document (WICK_DETAILS_PANE (pane), document);
  wick_selection_set_record (selection, WICK_RECORD_EXTENSION, 0);
  g_assert_false (gtk_widget_get_visible (hint));
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "count"), ==, "3");
  wick_selection_set_record (selection, WICK_RECORD_NONE, -1);
  g_assert_true (gtk_widget_get_visible (hint));
  g_assert_null (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "count"));

  /* Dispose takes the template's tree down with it. */
  g_object_run_dispose (G_OBJECT (pane));
  g_assert_null (gtk_widget_get_first_child (pane));
  g_object_unref (pane);
}

/* The widget has a controller of @type with a handler on each of @signals. */
static GtkEventController *
assert_controller (GtkWidget *widget, GType type, const char *const *signals)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) controller = g_list_model_get_item (controllers, i);
      if (G_OBJECT_TYPE (controller) != type)
        continue;
      for (guint s = 0; signals[s]; s++)
        if (!g_signal_has_handler_pending (controller, g_signal_lookup (signals[s], type), 0,
                                           FALSE))
          g_error ("%s: its %s has no handler for \"%s\"", G_OBJECT_TYPE_NAME (widget),
                   g_type_name (type), signals[s]);
      return controller; /* owned by the widget */
    }
  g_error ("%s has no %s", G_OBJECT_TYPE_NAME (widget), g_type_name (type));
}

/* The drawing views' templates: their properties and their controllers,
 * each connected to its callback. */
static void
assert_view_template (GtkWidget *view)
{
  g_assert_true (gtk_widget_get_hexpand (view));
  g_assert_true (gtk_widget_get_vexpand (view));
  g_assert_true (gtk_widget_get_focusable (view));
  assert_controller (view, GTK_TYPE_EVENT_CONTROLLER_SCROLL, (const char *[]){ "scroll", NULL });
  assert_controller (view, GTK_TYPE_EVENT_CONTROLLER_MOTION,
                     (const char *[]){ "motion", "leave", NULL });
  assert_controller (view, GTK_TYPE_GESTURE_DRAG,
                     (const char *[]){ "drag-begin", "drag-update", "drag-end", NULL });
  GtkEventControllerScroll *scroll = GTK_EVENT_CONTROLLER_SCROLL (
    assert_controller (view, GTK_TYPE_EVENT_CONTROLLER_SCROLL, (const char *[]){ NULL }));
  g_assert_cmpint (gtk_event_controller_scroll_get_flags (scroll), ==,
                   GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
}

static void
test_memory_view (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *view = g_object_ref_sink (wick_memory_view_new (selection));
  assert_view_template (view);
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (view);
  g_assert_cmpuint (g_list_model_get_n_items (controllers), ==, 3);
  g_object_run_dispose (G_OBJECT (view));
  g_object_unref (view);
}

static void
test_timeline_view (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *view = g_object_ref_sink (wick_timeline_view_new (selection));
  assert_view_template (view);
  g_assert_true (gtk_widget_get_has_tooltip (view));
  g_assert_true (g_signal_has_handler_pending (
    view, g_signal_lookup ("query-tooltip", GTK_TYPE_WIDGET), 0, FALSE));
  assert_controller (view, GTK_TYPE_GESTURE_CLICK, (const char *[]){ "pressed", NULL });
  assert_controller (view, GTK_TYPE_GESTURE_ZOOM,
                     (const char *[]){ "begin", "scale-changed", NULL });
  GtkEventController *keys = assert_controller (view, GTK_TYPE_EVENT_CONTROLLER_KEY,
                                                (const char *[]){ "key-pressed", NULL });

  /* The key handler is the timeline's: "+" zooms in, "0" shows the whole trace. */
  g_autoptr (WickDocument) document = app_test_load_example ();
  wick_timeline_view_set_document (WICK_TIMELINE_VIEW (view), document);
  guint64 fit_start, fit_end, start, end;
  wick_selection_get_visible (selection, &fit_start, &fit_end);
  gboolean handled = FALSE;
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_plus, 0, 0, &handled);
  g_assert_true (handled);
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (end - start, <, fit_end - fit_start);
  handled = FALSE;
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_0, 0, 0, &handled);
  g_assert_true (handled);
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (start, ==, fit_start);
  g_assert_cmpuint (end, ==, fit_end);

  g_object_run_dispose (G_OBJECT (view));
  g_object_unref (view);
}

/* The window's timeline page (data/ui/wick-window.ui): the overview drawing
 * the timeline's scene, both on the window's selection, under the page's
 * name and title; the follow button and the zoom bar's hint over it. */
static void
test_window_timeline_page (void)
{
  WickWindow *window = app_test_window_new (app, 1400, 900);
  GType type = WICK_TYPE_WINDOW;
  assert_child_type (window, type, "timeline", WICK_TYPE_TIMELINE_VIEW);
  assert_child_type (window, type, "overview", WICK_TYPE_TIMELINE_OVERVIEW);
  assert_child_type (window, type, "follow_button", GTK_TYPE_BUTTON);
  assert_child_type (window, type, "hint", GTK_TYPE_LABEL);
  assert_child_type (window, type, "views", ADW_TYPE_VIEW_STACK);
  GtkWidget *timeline = GTK_WIDGET (template_child (window, type, "timeline"));
  GObject *overview = template_child (window, type, "overview");
  g_assert_true (wick_window_get_view (window, "timeline") == timeline);

  g_autoptr (WickSelection) timeline_selection = NULL;
  g_autoptr (WickSelection) overview_selection = NULL;
  g_autoptr (WickTimelineView) overview_timeline = NULL;
  g_object_get (timeline, "selection", &timeline_selection, NULL);
  g_object_get (overview, "selection", &overview_selection, "timeline", &overview_timeline, NULL);
  g_assert_true (timeline_selection == wick_window_get_selection (window));
  g_assert_true (overview_selection == wick_window_get_selection (window));
  g_assert_true (GTK_WIDGET (overview_timeline) == timeline);

  AdwViewStack *views = ADW_VIEW_STACK (template_child (window, type, "views"));
  GtkWidget *page_child = adw_view_stack_get_child_by_name (views, "timeline");
  g_assert_nonnull (page_child);
  g_assert_true (gtk_widget_is_ancestor (timeline, page_child));
  g_assert_true (gtk_widget_is_ancestor (GTK_WIDGET (overview), page_child));
  AdwViewStackPage *page = adw_view_stack_get_page (views, page_child);
  g_assert_cmpstr (adw_view_stack_page_get_title (page), ==, "Timeline");
  g_assert_cmpstr (adw_view_stack_page_get_icon_name (page), ==, "view-paged-symbolic");
  g_assert_true (adw_view_stack_get_visible_child (views) == page_child);

  GtkWidget *follow = GTK_WIDGET (template_child (window, type, "follow_button"));
  g_assert_false (gtk_widget_get_visible (follow));
  g_assert_cmpstr (gtk_actionable_get_action_name (GTK_ACTIONABLE (follow)), ==, "win.follow");
  g_assert_cmpstr (gtk_button_get_label (GTK_BUTTON (follow)), ==, "_Follow Newest");
  g_assert_true (gtk_button_get_use_underline (GTK_BUTTON (follow)));
  GtkLabel *hint = GTK_LABEL (template_child (window, type, "hint"));
  g_assert_true (g_str_has_prefix (gtk_label_get_text (hint), "Drag to pan"));
  g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (hint)), ==, gtk_label_get_text (hint));
  g_assert_cmpint (gtk_label_get_ellipsize (hint), ==, PANGO_ELLIPSIZE_END);
  app_test_window_close (window);
}

/* @widget's "selection" property. */
static WickSelection *
selection_of (gpointer widget)
{
  WickSelection *selection = NULL;
  g_object_get (widget, "selection", &selection, NULL);
  if (selection)
    g_object_unref (selection); /* the owner keeps it */
  return selection;
}

/* The window's other views (data/ui/wick-window.ui): the stack's pages in
 * order with their names, titles, icons and widget types, each widget the
 * window's view of that name, all on the window's one selection; the
 * details pane the paned's end child, shown with the details button; the
 * handlers the template connects (Find on Timeline from the costs page,
 * the focus follows the visible view). wick-window.c adds only the GPU
 * pages after them. */
static void
test_window_pages (void)
{
  static const struct
  {
    const char *name, *title, *icon;
    GType (*get_type) (void);
  } expected[] = {
    { "timeline", "Timeline", "view-paged-symbolic", NULL },
    { "memory", "Memory", "drive-harddisk-symbolic", wick_memory_view_get_type },
    { "coverage", "Coverage", "emblem-ok-symbolic", wick_coverage_page_get_type },
    { "health", "Health", "dialog-warning-symbolic", wick_health_page_get_type },
    { "costs", "Costs", "view-list-symbolic", wick_costs_page_get_type },
  };
  WickWindow *window = app_test_window_new (app, 1400, 900);
  GType type = WICK_TYPE_WINDOW;
  WickSelection *selection = wick_window_get_selection (window);
  g_assert_true (WICK_IS_SELECTION (selection));
  AdwViewStack *views = ADW_VIEW_STACK (template_child (window, type, "views"));
  g_autoptr (GtkSelectionModel) pages = adw_view_stack_get_pages (views);
  /* after the template's: the GPU pages wick-window.c adds, hidden until a
   * document with GPU work (wick-gpu-pages.h) */
  static const char *const gpu_pages[] = { "gpu-overview", "kernels", "operators" };
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (pages)), ==,
                    G_N_ELEMENTS (expected) + G_N_ELEMENTS (gpu_pages));
  for (guint i = 0; i < G_N_ELEMENTS (gpu_pages); i++)
    {
      g_autoptr (AdwViewStackPage) page
        = g_list_model_get_item (G_LIST_MODEL (pages), G_N_ELEMENTS (expected) + i);
      g_assert_cmpstr (adw_view_stack_page_get_name (page), ==, gpu_pages[i]);
      g_assert_false (adw_view_stack_page_get_visible (page));
      g_assert_true (wick_window_get_view (window, gpu_pages[i])
                     == adw_view_stack_page_get_child (page));
      g_assert_true (selection_of (adw_view_stack_page_get_child (page)) == selection);
    }
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr (AdwViewStackPage) page = g_list_model_get_item (G_LIST_MODEL (pages), i);
      g_assert_cmpstr (adw_view_stack_page_get_name (page), ==, expected[i].name);
      g_assert_cmpstr (adw_view_stack_page_get_title (page), ==, expected[i].title);
      g_assert_cmpstr (adw_view_stack_page_get_icon_name (page), ==, expected[i].icon);
      if (expected[i].get_type == NULL)
        continue; /* the timeline page: test_window_timeline_page */
      GtkWidget *child = adw_view_stack_page_get_child (page);
      GType view_type = expected[i].get_type ();
      if (G_OBJECT_TYPE (child) != view_type)
        g_error ("page %s holds a %s, not a %s", expected[i].name, G_OBJECT_TYPE_NAME (child),
                 g_type_name (view_type));
      g_assert_true (GTK_WIDGET (template_child (window, type, expected[i].name)) == child);
      g_assert_true (wick_window_get_view (window, expected[i].name) == child);
      g_assert_true (selection_of (child) == selection);
    }
  g_assert_true (selection_of (wick_window_get_view (window, "timeline")) == selection);

  /* The details pane: the paned's end child, on the same selection,
   * narrow enough for a 700 px window, shown with the details button. */
  assert_child_type (window, type, "details", WICK_TYPE_DETAILS_PANE);
  GtkWidget *details = GTK_WIDGET (template_child (window, type, "details"));
  g_assert_true (wick_window_get_view (window, "details") == details);
  GtkPaned *paned = GTK_PANED (template_child (window, type, "paned"));
  g_assert_true (gtk_paned_get_end_child (paned) == details);
  g_assert_true (adw_view_stack_get_child_by_name (views, "memory") != NULL);
  g_assert_true (gtk_paned_get_start_child (paned) == GTK_WIDGET (views));
  g_assert_true (selection_of (details) == selection);
  int min_width;
  gtk_widget_get_size_request (details, &min_width, NULL);
  g_assert_cmpint (min_width, ==, 180);
  GtkToggleButton *details_button
    = GTK_TOGGLE_BUTTON (template_child (window, type, "details_button"));
  gboolean shown = gtk_toggle_button_get_active (details_button);
  g_assert_cmpint (gtk_widget_get_visible (details), ==, shown);
  gtk_toggle_button_set_active (details_button, !shown);
  g_assert_cmpint (gtk_widget_get_visible (details), ==, !shown);
  gtk_toggle_button_set_active (details_button, shown);
  g_assert_cmpint (gtk_widget_get_visible (details), ==, shown);

  /* One selection: a record selected through it reaches the pane, and a
   * range set by one view is what the memory view draws. */
  g_autoptr (WickDocument) document = app_test_load_example ();
  wick_window_set_document (window, document);
  wick_selection_set_record (selection, WICK_RECORD_SPAN, 0);
  g_assert_cmpstr (wick_details_pane_get_title (WICK_DETAILS_PANE (details)), !=,
                   "Nothing selected");
  wick_selection_set_range (selection, 10, 20);
  WickMemoryViewport viewport;
  wick_memory_view_get_params (WICK_MEMORY_VIEW (wick_window_get_view (window, "memory")),
                               &viewport);
  g_assert_cmpuint (viewport.range_start, ==, 10);
  g_assert_cmpuint (viewport.range_end, ==, 20);

  /* The template's handlers: a span name from the costs page opens the
   * search on the timeline; a view shown takes the focus handler. */
  wick_window_show_page (window, "costs");
  g_signal_emit_by_name (wick_window_get_view (window, "costs"), "search-name", "forward");
  g_assert_cmpstr (wick_window_get_visible_view (window), ==, "timeline");
  g_assert_true (gtk_search_bar_get_search_mode (wick_window_get_search_bar (window)));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (wick_window_get_search_entry (window))), ==,
                   "forward");
  g_assert_true (g_signal_has_handler_pending (views, g_signal_lookup ("notify", G_TYPE_OBJECT),
                                               g_quark_from_static_string ("visible-child"),
                                               FALSE));
  app_test_window_close (window);
}

/* The "selection" property of a view built without one (as a template
 * builds it): set later, it is the view's and notified; the details pane
 * follows the new one, not the old one. */
static void
test_selection_property (void)
{
  g_autoptr (WickSelection) first = wick_selection_new ();
  g_autoptr (WickSelection) second = wick_selection_new ();
  g_autoptr (WickDocument) document = app_test_document_from_text (
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\",\"count\":3}");
  GType types[] = {
    WICK_TYPE_MEMORY_VIEW, WICK_TYPE_COVERAGE_PAGE, WICK_TYPE_HEALTH_PAGE,
    WICK_TYPE_COSTS_PAGE,  WICK_TYPE_DETAILS_PANE,  WICK_TYPE_TIMELINE_VIEW,
  };
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      GtkWidget *view = g_object_ref_sink (g_object_new (types[i], NULL));
      g_assert_null (selection_of (view));
      guint notified = 0;
      g_signal_connect_swapped (view, "notify::selection", G_CALLBACK (g_atomic_int_inc),
                                &notified);
      g_object_set (view, "selection", first, NULL);
      g_object_set (view, "selection", first, NULL); /* the same: no notify */
      g_assert_true (selection_of (view) == first);
      g_object_set (view, "selection", second, NULL);
      g_assert_true (selection_of (view) == second);
      g_assert_cmpuint (notified, ==, 2);
      if (types[i] == WICK_TYPE_DETAILS_PANE)
        {
          WickDetailsPane *pane = WICK_DETAILS_PANE (view);
          wick_details_pane_set_document (pane, document);
          wick_selection_set_record (first, WICK_RECORD_EXTENSION, 0);
          g_assert_null (wick_details_pane_get_field (pane, "count"));
          wick_selection_set_record (second, WICK_RECORD_EXTENSION, 0);
          g_assert_cmpstr (wick_details_pane_get_field (pane, "count"), ==, "3");
        }
      g_object_run_dispose (G_OBJECT (view));
      g_assert_null (selection_of (view));
      g_object_unref (view);
    }
  /* Dropped by every view: nobody else holds them or listens to them. */
  guint changed = g_signal_lookup ("changed", WICK_TYPE_SELECTION);
  g_assert_false (g_signal_has_handler_pending (first, changed, 0, FALSE));
  g_assert_false (g_signal_has_handler_pending (second, changed, 0, FALSE));
  g_assert_cmpuint (G_OBJECT (first)->ref_count, ==, 1);
  g_assert_cmpuint (G_OBJECT (second)->ref_count, ==, 1);
}

static gboolean
compare_ready (gpointer window)
{
  return wick_compare_window_is_ready (window);
}

static guint
n_controllers_of_type (GtkWidget *widget, GType type)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  guint n = 0;
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
      n += G_OBJECT_TYPE (controller) == type;
    }
  return n;
}

/* The compare window (data/ui/wick-compare-window.ui): its tree from the
 * template while it loads (the loading page, the hidden banner and its
 * button, the two timelines each on its own side's selection with the
 * window's hover controller beside its own, the memory overlay, the table's
 * columns on the row selection), then the result page with the sides'
 * labels filled in. */
static void
test_compare_window (void)
{
  g_autofree char *path = app_test_example_path ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  WickCompareWindow *window = wick_compare_window_new (GTK_APPLICATION (app), file, file);
  GType type = WICK_TYPE_COMPARE_WINDOW;
  assert_child_type (window, type, "stack", GTK_TYPE_STACK);
  assert_child_type (window, type, "banner", GTK_TYPE_INFO_BAR);
  assert_child_type (window, type, "banner_label", GTK_TYPE_LABEL);
  assert_child_type (window, type, "banner_button", GTK_TYPE_BUTTON);
  assert_child_type (window, type, "spinner", GTK_TYPE_SPINNER);
  assert_child_type (window, type, "status", ADW_TYPE_STATUS_PAGE);
  assert_child_type (window, type, "paned", GTK_TYPE_PANED);
  assert_child_type (window, type, "label_a", GTK_TYPE_LABEL);
  assert_child_type (window, type, "label_b", GTK_TYPE_LABEL);
  assert_child_type (window, type, "timeline_a", WICK_TYPE_TIMELINE_VIEW);
  assert_child_type (window, type, "timeline_b", WICK_TYPE_TIMELINE_VIEW);
  assert_child_type (window, type, "memory", GTK_TYPE_DRAWING_AREA);
  assert_child_type (window, type, "summary", GTK_TYPE_LABEL);
  assert_child_type (window, type, "table", GTK_TYPE_COLUMN_VIEW);

  /* Loading: the spinner turns, the banner waits hidden with its button. */
  GtkStack *stack = GTK_STACK (template_child (window, type, "stack"));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "loading");
  g_assert_true (gtk_spinner_get_spinning (GTK_SPINNER (template_child (window, type, "spinner"))));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (template_child (window, type, "banner"))));
  GtkButton *anyway = GTK_BUTTON (template_child (window, type, "banner_button"));
  g_assert_cmpstr (gtk_button_get_label (anyway), ==, "Compare _Anyway");
  g_assert_true (gtk_button_get_use_underline (anyway));
  g_assert_true (
    g_signal_has_handler_pending (anyway, g_signal_lookup ("clicked", GTK_TYPE_BUTTON), 0, FALSE));
  g_assert_cmpstr (
    adw_status_page_get_icon_name (ADW_STATUS_PAGE (template_child (window, type, "status"))), ==,
    "dialog-warning-symbolic");

  /* The timelines: A over B, each on its side's selection, each with the
   * window's motion controller (the hover line on the other side) beside
   * its own. */
  g_autoptr (WickSelection) selection_a = NULL;
  g_autoptr (WickSelection) selection_b = NULL;
  g_object_get (window, "selection-a", &selection_a, "selection-b", &selection_b, NULL);
  g_assert_true (WICK_IS_SELECTION (selection_a));
  g_assert_true (WICK_IS_SELECTION (selection_b));
  g_assert_true (selection_a != selection_b);
  const char *names[2] = { "timeline_a", "timeline_b" };
  WickSelection *selections[2] = { selection_a, selection_b };
  for (guint side = 0; side < 2; side++)
    {
      GtkWidget *timeline = GTK_WIDGET (template_child (window, type, names[side]));
      g_assert_true (wick_compare_window_get_timeline (window, side) == timeline);
      g_assert_true (selection_of (timeline) == selections[side]);
      g_assert_cmpuint (n_controllers_of_type (timeline, GTK_TYPE_EVENT_CONTROLLER_MOTION), ==, 2);
      g_assert_true (gtk_widget_get_vexpand (timeline));
      int height;
      gtk_widget_get_size_request (timeline, NULL, &height);
      g_assert_cmpint (height, ==, 160);
    }
  GtkPaned *paned = GTK_PANED (template_child (window, type, "paned"));
  g_assert_cmpint (gtk_orientable_get_orientation (GTK_ORIENTABLE (paned)), ==,
                   GTK_ORIENTATION_VERTICAL);
  g_assert_cmpint (gtk_paned_get_position (paned), ==, 560);
  GtkWidget *memory = GTK_WIDGET (template_child (window, type, "memory"));
  g_assert_true (gtk_widget_is_ancestor (memory, gtk_paned_get_start_child (paned)));

  /* The table: its eight columns on the window's row selection. */
  GtkColumnView *table = GTK_COLUMN_VIEW (template_child (window, type, "table"));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (table), "data-table"));
  g_assert_true (gtk_widget_is_ancestor (GTK_WIDGET (table), gtk_paned_get_end_child (paned)));
  g_assert_true (GTK_IS_SINGLE_SELECTION (gtk_column_view_get_model (table)));
  GListModel *columns = gtk_column_view_get_columns (table);
  static const char *const titles[]
    = { "Change", "Kind", "Name", "Count A / B", "Mean A", "Mean B", "B / A", "95% interval" };
  g_assert_cmpuint (g_list_model_get_n_items (columns), ==, G_N_ELEMENTS (titles));
  for (guint c = 0; c < G_N_ELEMENTS (titles); c++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, c);
      g_assert_cmpstr (gtk_column_view_column_get_title (column), ==, titles[c]);
      g_assert_cmpint (gtk_column_view_column_get_expand (column), ==, c == 2);
    }

  /* The same trace twice: the result page, its labels filled in. */
  gtk_window_present (GTK_WINDOW (window));
  APP_TEST_WAIT (compare_ready, window, 30000);
  g_assert_nonnull (wick_compare_window_get_comparison (window));
  g_assert_false (wick_compare_window_is_refused (window));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "result");
  g_assert_true (g_str_has_prefix (
    gtk_label_get_text (GTK_LABEL (template_child (window, type, "label_a"))), "A  "));
  g_assert_true (g_str_has_prefix (
    gtk_label_get_text (GTK_LABEL (template_child (window, type, "label_b"))), "B  "));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (gtk_column_view_get_model (table))), ==,
                    wick_compare_window_get_comparison (window)->entries->len);
  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/templates/details-pane", test_details_pane);
  g_test_add_func ("/templates/memory-view", test_memory_view);
  g_test_add_func ("/templates/timeline-view", test_timeline_view);
  g_test_add_func ("/templates/window-timeline-page", test_window_timeline_page);
  g_test_add_func ("/templates/window-pages", test_window_pages);
  g_test_add_func ("/templates/selection-property", test_selection_property);
  g_test_add_func ("/templates/compare-window", test_compare_window);
  return app_test_ui_run (app);
}
