/* test-app-window.c — the app's window under Xvfb: loading, widget state,
 * pixels of the painted widgets, zoom and pan, selection across views,
 * loader progress and cancel. Suite: app. */
#include "config.h"

#include <adwaita.h>
#include <dlfcn.h>
#include <glib/gstdio.h>
#include <string.h>
#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#endif

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "model/wick-chrome-import.h"
#include "model/wick-tracks.h"
#include "ui/wick-costs-page.h"
#include "ui/wick-costs-page-private.h"
#include "model/wick-steps.h"
#include "ui/wick-format.h"
#include "ui/wick-coverage-page.h"
#include "ui/wick-coverage-page-private.h"
#include "ui/wick-details-pane.h"
#include "ui/wick-details-pane-private.h"
#include "ui/wick-health-page.h"
#include "ui/wick-health-page-private.h"
#include "ui/wick-memory-view.h"
#include "ui/wick-palette.h"
#include "ui/wick-ranks-page.h"
#include "ui/wick-timeline-overview.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-timeline-view-private.h"
#include "model/wick-gradient-report.h"
#include "ui/wick-settings.h"
#include "ui/wick-window-private.h"
#include "ui/wick-page.h"
#include "ui/wick-page-private.h"
#include "ui/session/wick-stages-panel.h"
#include "ui/session/wick-weights-panel.h"
#include "ui/wick-table-private.h"
#include "ui/wick-timeline-scene-private.h"

static WickApplication *app;

static WickWindow *
open_window (const char *path)
{
  return app_test_window_open (app, path, 1400, 900);
}

static WickWindow *
open_example (void)
{
  return app_test_window_open_example (app);
}

static void
test_widget_state (void)
{
  WickWindow *window = open_example ();
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  /* The host thread, five counters (memory, device memory used, reserved,
   * capacity, free), two device streams; the Wick events are the marker row,
   * not also a track. */
  g_assert_cmpuint (wick_timeline_scene_get_n_tracks (scene), ==, 8);

  /* Coverage: three families, expanded into their nine entries. */
  WickCoveragePage *coverage = WICK_COVERAGE_PAGE (wick_window_get_view (window, "coverage"));
  WickTable *table = wick_coverage_page_get_table (coverage);
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, 3 + 9);
  guint kind, index;
  g_assert_true (wick_table_get_shown (table, 0, &kind, &index));
  g_assert_cmpuint (kind, ==, 0);
  g_assert_true (wick_table_get_shown (table, 1, &kind, &index));
  g_assert_cmpuint (kind, ==, 1);
  g_assert_cmpstr (wick_coverage_page_get_verdict_text (coverage), ==,
                   "Gradient coverage: complete");

  /* Remembered as the most recent trace (GSettings), once. */
  g_auto (GStrv) recent = wick_settings_get_recent ();
  g_autofree char *example = app_test_example_path ();
  g_assert_nonnull (recent);
  g_assert_cmpstr (recent[0], ==, example);
  for (guint i = 1; recent[i]; i++)
    g_assert_cmpstr (recent[i], !=, example);
  /* ...and listed on the welcome page of the next window. */
  WickWindow *next = wick_window_new (GTK_APPLICATION (app));
  g_assert_cmpuint (wick_window_get_n_recent (next), >=, 1);
  gtk_window_destroy (GTK_WINDOW (next));

  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 0);
  g_assert_cmpuint (wick_health_page_get_n_warnings (health), ==, 0);
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 0);

  /* Costs: every span name once, sorted by total: the root first. */
  WickCostsPage *costs = WICK_COSTS_PAGE (wick_window_get_view (window, "costs"));
  WickTable *spans = wick_costs_page_get_table (costs, "spans");
  g_assert_cmpuint (wick_table_get_n_shown (spans), >, 10);
  {
    /* the declared columns: name, count, total, self, mean, max, share */
    WickDocument *doc = wick_window_get_document (window);
    const WickSpan *root = &wick_document_get_spans (doc, NULL)[0];
    g_autofree char *name = wick_table_get_text (spans, 0, 0);
    g_autofree char *count = wick_table_get_text (spans, 0, 1);
    g_autofree char *total = wick_table_get_text (spans, 0, 2);
    g_autofree char *share = wick_table_get_text (spans, 0, 6);
    g_autofree char *root_total = wick_format_duration (root->duration_ns);
    g_assert_cmpstr (name, ==, wick_document_str (doc, root->name));
    g_assert_cmpstr (count, ==, "1");
    g_assert_cmpstr (total, ==, root_total);
    g_assert_cmpstr (share, ==, "100.0 %");
    /* sorting by count, ascending: a name seen once first */
    wick_table_sort_by (spans, 1, FALSE);
    g_autofree char *fewest = wick_table_get_text (spans, 0, 1);
    g_assert_cmpstr (fewest, ==, "1");
    wick_table_sort_by (spans, 1, TRUE);
    g_autofree char *most = wick_table_get_text (spans, 0, 1);
    g_assert_cmpuint (g_ascii_strtoull (most, NULL, 10), >, 1);
    wick_table_sort_by (spans, 2, TRUE);
  }
  /* Steps: the example's eight train steps, one row each, in order, each
   * with its index, the measured one marked: the step that is or
   * holds the measured region, and no other. */
  WickTable *steps = wick_costs_page_get_table (costs, "steps");
  g_assert_cmpuint (wick_table_get_n_shown (steps), ==, 8);
  g_autofree char *first_step = wick_table_get_text (steps, 0, 3);
  g_assert_cmpstr (first_step, ==, "0 ns");
  {
    WickDocument *doc = wick_window_get_document (window);
    guint n_spans, measured_rows = 0;
    const WickSpan *all = wick_document_get_spans (doc, &n_spans);
    for (guint row = 0; row < 8; row++)
      {
        g_autofree char *position = wick_table_get_text (steps, row, 0);
        g_autofree char *expected = g_strdup_printf ("%u", row + 1);
        g_assert_cmpstr (position, ==, expected);
        g_autofree char *mark = wick_table_get_text (steps, row, 2);
        guint row_kind, record;
        g_assert_true (wick_table_get_shown (steps, row, &row_kind, &record));
        (void)row_kind;
        if (g_strcmp0 (mark, "measured") != 0)
          {
            g_assert_cmpstr (mark, ==, "");
            continue;
          }
        measured_rows++;
        /* the measured span lies in this row's step */
        gboolean holds = FALSE;
        g_autoptr (WickSteps) found = wick_steps_find (doc);
        guint32 step_span = g_array_index (found->spans, guint32, record);
        for (guint i = 0; i < n_spans; i++)
          holds |= (all[i].flags & WICK_SPAN_FLAG_MEASURED)
                   && (i == step_span || found->step_of[i] == (gint32)record);
        g_assert_true (holds);
      }
    g_assert_cmpuint (measured_rows, ==, 1);
  }
  /* Filtering ops by text. */
  WickTable *ops = wick_costs_page_get_table (costs, "ops");
  guint all_ops = wick_table_get_n_shown (ops);
  guint n_ops;
  wick_document_get_ops (wick_window_get_document (window), &n_ops);
  g_assert_cmpuint (all_ops, ==, n_ops);
  wick_costs_page_set_filter (costs, "adamw_update");
  guint filtered = wick_table_get_n_shown (ops);
  g_assert_cmpuint (filtered, ==, 8 * 8); /* eight parameters, eight steps */
  wick_costs_page_set_filter (costs, NULL);
  g_assert_cmpuint (wick_table_get_n_shown (ops), ==, n_ops);
  app_test_window_close (window);
}

static void
test_timeline_pixels (void)
{
  WickWindow *window = open_example ();
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  WickDocument *document = wick_window_get_document (window);
  cairo_surface_t *surface = app_test_render_widget (widget);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  gboolean dark = view.dark;
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  guint checked = 0;
  for (guint i = 0; i < n; i++)
    {
      const char *name = wick_document_str (document, spans[i].name);
      if (g_strcmp0 (name, "forward") != 0 && g_strcmp0 (name, "backward") != 0)
        continue;
      cairo_rectangle_t r;
      g_assert_true (
        wick_timeline_scene_span_rect (wick_timeline_view_get_scene (timeline), &view, i, &r));
      WickRgb rgb = wick_palette_span (wick_palette_span_colour_id (spans[i].step, name), dark);
      guint32 pixel = app_test_pixel (surface, (int)(r.x + r.width - 3), (int)(r.y + r.height - 2));
      g_assert_cmphex (pixel, ==, app_test_rgb (rgb.r, rgb.g, rgb.b));
      checked++;
    }
  g_assert_cmpuint (checked, ==, 16);
  cairo_surface_destroy (surface);

  /* The memory chart widget paints all five categories. */
  wick_window_show_page (window, "memory");
  GtkWidget *memory = wick_window_get_view (window, "memory");
  app_test_wait_drawn (memory, 10000, "the memory chart to be drawn");
  surface = app_test_render_widget (memory);
  WickRgb bg = wick_palette_background (dark);
  for (guint c = 0; c < WICK_N_CATEGORIES; c++)
    {
      WickRgb rgb = wick_palette_category (c, dark);
      guint32 blended = app_test_rgb (rgb.r * 0.78 + bg.r * 0.22, rgb.g * 0.78 + bg.g * 0.22,
                                      rgb.b * 0.78 + bg.b * 0.22);
      g_assert_cmpuint (app_test_count_colour (surface, blended, 2), >, 40);
    }
  cairo_surface_destroy (surface);
  app_test_window_close (window);
}

static void
test_zoom_pan (void)
{
  WickWindow *window = open_example ();
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  WickSelection *selection = wick_window_get_selection (window);
  int width = gtk_widget_get_width (GTK_WIDGET (timeline));
  guint64 s0, e0, s1, e1;
  wick_selection_get_visible (selection, &s0, &e0);
  /* Zoom in by half around the middle of the plot: the middle time stays. */
  double mid_x = WICK_TIMELINE_GUTTER + (width - WICK_TIMELINE_GUTTER) / 2.0;
  guint64 mid_t = s0 + (e0 - s0) / 2;
  wick_timeline_view_zoom (timeline, 0.5, mid_x);
  wick_selection_get_visible (selection, &s1, &e1);
  g_assert_cmpuint (e1 - s1, ==, (e0 - s0) / 2);
  g_assert_cmpint (ABS ((gint64)(s1 + (e1 - s1) / 2) - (gint64)mid_t), <=, 2);
  /* Pan right by 100 px: 100 px worth of time later. */
  double ns_per_px = (double)(e1 - s1) / (width - WICK_TIMELINE_GUTTER);
  wick_timeline_view_pan (timeline, 100);
  guint64 s2, e2;
  wick_selection_get_visible (selection, &s2, &e2);
  g_assert_cmpint (ABS ((gint64)(s2 - s1) - (gint64)(100 * ns_per_px)), <=, 1);
  g_assert_cmpuint (e2 - s2, ==, e1 - s1);
  /* The keyboard: + zooms in, 0 fits everything again. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-in", NULL);
  guint64 s3, e3;
  wick_selection_get_visible (selection, &s3, &e3);
  g_assert_cmpuint (e3 - s3, <, e2 - s2);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-fit", NULL);
  wick_selection_get_visible (selection, &s3, &e3);
  g_assert_cmpuint (s3, ==, s0);
  g_assert_cmpuint (e3, ==, e0);
  /* Double-click on a span: it fills the view with a tenth of margin each side. */
  WickDocument *doc = wick_window_get_document (window);
  gint32 fwd = wick_document_find_span (doc, "s105");
  const WickSpan *span = &wick_document_get_spans (doc, NULL)[fwd];
  wick_timeline_view_zoom_to_span (timeline, fwd);
  guint64 s4, e4;
  wick_selection_get_visible (selection, &s4, &e4);
  g_assert_cmpuint (s4, ==, span->start_ns - span->duration_ns / 10);
  g_assert_cmpuint (e4, ==, span->start_ns + span->duration_ns + span->duration_ns / 10);
  gint64 picked;
  g_assert_cmpint (wick_selection_get_record (selection, &picked), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (picked, ==, fwd);
  /* Export… writes the view as shown: the timeline at the window's size. */
  g_autofree char *dir = g_dir_make_tmp ("wick-export-XXXXXX", NULL);
  g_autofree char *png = g_build_filename (dir, "timeline.png", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_window_export_view (window, png, &error));
  g_assert_no_error (error);
  cairo_surface_t *exported = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_image_surface_get_width (exported), ==, width);
  cairo_surface_destroy (exported);
  g_unlink (png);
  wick_window_show_page (window, "costs");
  g_assert_false (wick_window_export_view (window, png, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  wick_window_show_page (window, "timeline");
  g_rmdir (dir);
  /* Search highlights and steps through matches. */
  wick_window_search (window, "zero_grad");
  g_assert_cmpstr (wick_window_get_match_text (window), ==, "8 matches");
  gtk_widget_activate_action (GTK_WIDGET (window), "win.find-next", NULL);
  g_assert_cmpstr (wick_window_get_match_text (window), ==, "1 of 8");
  gint64 selected;
  g_assert_cmpint (wick_selection_get_record (selection, &selected), ==, WICK_RECORD_SPAN);
  WickDocument *document = wick_window_get_document (window);
  g_assert_cmpstr (
    wick_document_str (document, wick_document_get_spans (document, NULL)[selected].name), ==,
    "zero_grad");
  app_test_window_close (window);
}

typedef struct
{
  WickDetailsPane *details;
  guint rows;
} RangeRows;

static gboolean
range_rows_are (gpointer data)
{
  RangeRows *want = data;
  return wick_details_pane_get_range_rows (want->details) == want->rows;
}

static void
wait_range_rows (WickDetailsPane *details, guint rows)
{
  RangeRows want = { details, rows };
  APP_TEST_WAIT (range_rows_are, &want, 10000);
}

static void
test_selection_propagates (void)
{
  WickWindow *window = open_example ();
  WickSelection *selection = wick_window_get_selection (window);
  WickDocument *document = wick_window_get_document (window);
  WickDetailsPane *details = WICK_DETAILS_PANE (wick_window_get_view (window, "details"));
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  g_assert_cmpstr (wick_details_pane_get_title (details), ==, "Nothing selected");

  /* Click a span on the timeline: the details pane shows it. */
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  gint32 root = wick_document_find_span (document, "s1");
  cairo_rectangle_t r;
  wick_timeline_scene_span_rect (wick_timeline_view_get_scene (timeline), &view, root, &r);
  gint64 index;
  WickRecordType type = wick_timeline_scene_hit (wick_timeline_view_get_scene (timeline), &view,
                                                 700, r.y + 4, &index);
  g_assert_cmpint (type, ==, WICK_RECORD_SPAN);
  wick_selection_set_record (selection, type, index);
  g_assert_cmpstr (wick_details_pane_get_title (details), ==, "train_mlp");

  /* A range box-selected over one training step is summarised by name. */
  g_assert_cmpuint (wick_details_pane_get_range_rows (details), ==, 0);
  gint32 step = wick_document_find_span (document, "s3"); /* the first train_step */
  const WickSpan *s4 = &wick_document_get_spans (document, NULL)[step];
  wick_selection_set_range (selection, s4->start_ns, s4->start_ns + s4->duration_ns);
  /* The summary follows once the range rests: wait for it, not a fixed time. */
  wait_range_rows (details, 8);
  wick_selection_set_range (selection, 0, 0);
  wait_range_rows (details, 0);

  /* Selecting an op row in the costs page selects the op everywhere. */
  WickCostsPage *costs = WICK_COSTS_PAGE (wick_window_get_view (window, "costs"));
  WickTable *ops = wick_costs_page_get_table (costs, "ops");
  GtkSelectionModel *model = wick_table_get_model (ops);
  guint position = 0, k, i;
  for (guint p = 0; p < wick_table_get_n_shown (ops); p++)
    if (wick_table_get_shown (ops, p, &k, &i) && i == 7)
      position = p;
  gtk_selection_model_select_item (model, position, TRUE);
  g_assert_cmpint (wick_selection_get_record (selection, &index), ==, WICK_RECORD_OP);
  g_assert_cmpint (index, ==, 7);
  const WickOp *op = &wick_document_get_ops (document, NULL)[7];
  g_assert_cmpstr (wick_details_pane_get_title (details), ==,
                   wick_document_str (document, op->op_name));
  /* Activating a span-cost row finds those spans on the timeline; the first
   * row (sorted by total) is the root, a single span. */
  WickTable *span_costs = wick_costs_page_get_table (costs, "spans");
  wick_table_activate (span_costs, 0);
  g_assert_cmpstr (wick_window_get_match_text (window), ==, "1 of 1"); /* the root: one span */
  /* ...and the timeline shows the op's time. */
  guint64 start, end;
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (op->timestamp_ns + op->duration_ns, >=, start);
  g_assert_cmpuint (op->timestamp_ns, <=, end);
  app_test_window_close (window);
}

/* The first node of @type in @node's tree (depth first), NULL when none. */
static GskRenderNode *
find_node (GskRenderNode *node, GskRenderNodeType type)
{
  if (node == NULL || gsk_render_node_get_node_type (node) == type)
    return node;
  switch (gsk_render_node_get_node_type (node))
    {
    case GSK_CONTAINER_NODE:
      for (guint i = 0; i < gsk_container_node_get_n_children (node); i++)
        {
          GskRenderNode *found = find_node (gsk_container_node_get_child (node, i), type);
          if (found != NULL)
            return found;
        }
      return NULL;
    case GSK_TRANSFORM_NODE:
      return find_node (gsk_transform_node_get_child (node), type);
    case GSK_CLIP_NODE:
      return find_node (gsk_clip_node_get_child (node), type);
    case GSK_OPACITY_NODE:
      return find_node (gsk_opacity_node_get_child (node), type);
    case GSK_DEBUG_NODE:
      return find_node (gsk_debug_node_get_child (node), type);
    default:
      return NULL;
    }
}

/* Pixels of @a and @b that differ by more than @tolerance in a channel. */
static guint
count_different (cairo_surface_t *a, cairo_surface_t *b, int tolerance)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  g_assert_cmpint (cairo_image_surface_get_width (b), ==, w);
  g_assert_cmpint (cairo_image_surface_get_height (b), ==, h);
  guint n = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint32 p = app_test_pixel (a, x, y), q = app_test_pixel (b, x, y);
        for (int shift = 0; shift < 24; shift += 8)
          if (abs ((int)((p >> shift) & 0xff) - (int)((q >> shift) & 0xff)) > tolerance)
            {
              n++;
              break;
            }
      }
  return n;
}

/* The render node of @widget's frame once one is drawn; the caller's. */
static GskRenderNode *
widget_frame_node (GtkWidget *widget, const char *what)
{
  app_test_wait_drawn (widget, 10000, what);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, gtk_widget_get_width (widget),
                          gtk_widget_get_height (widget));
  return gtk_snapshot_free_to_node (snapshot);
}

/* Pixels of the timeline @widget as shown that differ from its scene drawn
 * straight onto an image, with the time line where the view has it when the
 * widget is rendered: the test's, or Xvfb's pointer's where it lies over the
 * window (its motion may reach the view after set_hover, even with no hover
 * set). */
static guint
pixels_off_scene (GtkWidget *widget)
{
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  app_test_wait_drawn (widget, 10000, "the timeline");
  cairo_surface_t *shown = app_test_render_widget (widget);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  double shown_hover = view.hover_x;
  view.hover_x = -1;
  cairo_surface_t *drawn = cairo_image_surface_create (
    CAIRO_FORMAT_ARGB32, gtk_widget_get_width (widget), gtk_widget_get_height (widget));
  cairo_t *cr = cairo_create (drawn);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  wick_timeline_scene_draw (scene, cr, &view);
  if (shown_hover >= WICK_TIMELINE_GUTTER)
    {
      view.hover_x = shown_hover;
      wick_timeline_scene_draw_hover (scene, cr, &view);
    }
  cairo_destroy (cr);
  guint n = count_different (shown, drawn, 2);
  cairo_surface_destroy (shown);
  cairo_surface_destroy (drawn);
  return n;
}

/* The timeline shows the scene as drawn onto an image, pixel for pixel;
 * the pointer's time line is a node of its own, as narrow as what it draws,
 * over the same plot node (a pointer move redraws that column alone). */
static void
test_timeline_texture (void)
{
  WickWindow *window = open_example ();
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GskRenderNode *last_plot = NULL;
  for (int hover = 0; hover < 2; hover++)
    {
      wick_timeline_view_set_hover (timeline, hover ? width / 2.0 : -1);
      g_autoptr (GskRenderNode) node = widget_frame_node (widget, "the timeline");
      GskRenderNode *plot = find_node (node, GSK_CAIRO_NODE);
      g_assert_nonnull (plot);
      graphene_rect_t bounds;
      gsk_render_node_get_bounds (plot, &bounds);
      g_assert_cmpfloat (bounds.size.width, ==, width);
      g_assert_cmpfloat (bounds.size.height, ==, height);
      if (hover)
        {
          /* the plot's node is the one kept from the frame before */
          g_assert_true (plot == last_plot);
          GskRenderNode *parent = find_node (node, GSK_CONTAINER_NODE);
          g_assert_nonnull (parent);
          GskRenderNode *line = NULL;
          for (guint i = 0; i < gsk_container_node_get_n_children (parent); i++)
            if (gsk_container_node_get_child (parent, i) != plot
                && gsk_render_node_get_node_type (gsk_container_node_get_child (parent, i))
                     == GSK_CAIRO_NODE)
              line = gsk_container_node_get_child (parent, i);
          g_assert_nonnull (line);
          /* at the view's hover: the test's, or the pointer's where Xvfb's
           * pointer lies over the window and moved after it was set */
          WickTimelineViewport hovered;
          wick_timeline_view_get_viewport (timeline, &hovered);
          g_assert_cmpfloat (hovered.hover_x, >=, 0);
          gsk_render_node_get_bounds (line, &bounds);
          g_assert_cmpfloat (bounds.size.width, <, width / 4.0);
          g_assert_cmpfloat (bounds.origin.x, <=, hovered.hover_x);
          g_assert_cmpfloat (bounds.origin.x + bounds.size.width, >, hovered.hover_x);
        }
      last_plot = plot;

      /* the same pixels as the scene drawn straight onto an image */
      g_assert_cmpuint (pixels_off_scene (widget), ==, 0);
    }
  wick_timeline_view_set_hover (timeline, -1);
  app_test_window_close (window);
}

/* The label column's node of the widget's last frame: a cairo node at x 0
 * as wide as the column. */
static GskRenderNode *
gutter_node (GtkWidget *widget)
{
  g_autoptr (GskRenderNode) node = widget_frame_node (widget, "the timeline");
  GskRenderNode *parent = find_node (node, GSK_CONTAINER_NODE);
  g_assert_nonnull (parent);
  GskRenderNode *found = NULL;
  for (guint i = 0; i < gsk_container_node_get_n_children (parent); i++)
    {
      GskRenderNode *child = gsk_container_node_get_child (parent, i);
      graphene_rect_t bounds;
      gsk_render_node_get_bounds (child, &bounds);
      if (gsk_render_node_get_node_type (child) == GSK_CAIRO_NODE && bounds.origin.x == 0
          && bounds.size.width == WICK_TIMELINE_GUTTER)
        found = child;
    }
  g_assert_nonnull (found);
  return found; /* the widget's own reference keeps it while it is shown */
}

/* The label column is a node kept across frames of other time ranges (a new
 * range does not draw the labels again) and drawn afresh when it changes:
 * the tracks scrolled, collapsed, the style; each frame's pixels equal the
 * scene drawn whole onto an image. */
static void
test_timeline_gutter_node (void)
{
  g_autofree char *path = app_test_example_path ();
  /* short: the example's tracks scroll */
  WickWindow *window = app_test_window_open (app, path, 1400, 360);
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  WickSelection *selection = wick_window_get_selection (window);
  app_test_wait_drawn (widget, 10000, "the timeline");
  g_assert_cmpint (wick_timeline_scene_get_content_height (scene), >,
                   gtk_widget_get_height (widget) + 40);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);
  GskRenderNode *first = gutter_node (widget);

  /* a new time range: the same labels' node */
  guint64 start, end;
  wick_selection_get_visible (selection, &start, &end);
  wick_selection_set_visible (selection, start + (end - start) / 4, end - (end - start) / 4);
  app_test_wait_drawn (widget, 10000, "the timeline zoomed");
  g_assert_true (gutter_node (widget) == first);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);

  /* scrolled by the wheel: the labels move */
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  GtkEventController *scroll = NULL;
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (GTK_IS_EVENT_CONTROLLER_SCROLL (c))
        scroll = GTK_EVENT_CONTROLLER (c);
    }
  g_assert_nonnull (scroll);
  gboolean handled;
  g_signal_emit_by_name (scroll, "scroll", 0.0, 2.0, &handled);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  g_assert_cmpfloat (view.scroll_y, >, 0);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);

  /* every process collapsed and expanded again: the layout changed */
  wick_timeline_view_set_all_collapsed (timeline, TRUE);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);
  wick_timeline_view_set_all_collapsed (timeline, FALSE);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);

  /* the dark style */
  AdwStyleManager *style = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
  g_assert_cmpuint (pixels_off_scene (widget), ==, 0);
  app_test_window_close (window);
}

static const char *broken_trace
  = "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/"
    "10\",\"run_id\":\"r\",\"correlation_id\":\"c\","
    "\"entrypoint\":\"main\",\"phase\":\"infer\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"capture_"
    "step\":1,"
    "\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{"
    "\"measurement_scope\":\"profiled_work\",\"operations\":\"none\",\"logical_memory\":\"none\","
    "\"physical_memory\":\"none\",\"device_timing\":\"none\"},\"tags\":{}}\n"
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,\"span_kind\":"
    "\"function\",\"measured\":true}\n"
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"child\",\"start_ns\":"
    "10,\"span_kind\":\"function\"}\n"
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":5000}\n"
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":1000}\n"
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":6000}\n";

static void
test_health_errors_shown (void)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("wick-health-XXXXXX.jsonl", &path, NULL);
  g_assert_true (fd >= 0);
  close (fd);
  g_assert_true (g_file_set_contents (path, broken_trace, -1, NULL));
  WickWindow *window = open_window (path);
  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  /* s2 ends after its parent: child_outside_parent, shown and banner-raised. */
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 1);
  /* operations, tensors, logical and physical memory, device timing absent. */
  g_assert_cmpuint (wick_health_page_get_n_warnings (health), ==, 5);
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 1);
  WickTable *table = wick_health_page_get_table (health);
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, 6);
  const WickHealthIssue *first = wick_document_get_health (wick_window_get_document (window), NULL);
  g_assert_cmpstr (first->code, ==, "child_outside_parent");
  /* Activating the issue selects its span. */
  GtkSelectionModel *model = gtk_column_view_get_model (wick_table_get_column_view (table));
  gtk_selection_model_select_item (model, 0, TRUE);
  gint64 index;
  WickSelection *selection = wick_window_get_selection (window);
  g_assert_cmpint (wick_selection_get_record (selection, &index), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (index, ==, wick_document_find_span (wick_window_get_document (window), "s2"));
  app_test_window_close (window);

  /* A parse error on line 4: the meta and the two spans before it stay viewable. */
  g_auto (GStrv) lines = g_strsplit (broken_trace, "\n", -1);
  g_autofree char *truncated
    = g_strdup_printf ("%s\n%s\n%s\n{oops\n", lines[0], lines[1], lines[2]);
  g_assert_true (g_file_set_contents (path, truncated, -1, NULL));
  window = open_window (path);
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 1);
  const WickParseError *parse = wick_document_get_parse_error (wick_window_get_document (window));
  g_assert_true (parse->failed);
  g_assert_cmpuint (parse->line, ==, 4);
  guint n_spans;
  wick_document_get_spans (wick_window_get_document (window), &n_spans);
  g_assert_cmpuint (n_spans, ==, 2);
  app_test_window_close (window);
  g_unlink (path);
}

static void
test_faulty_trace (void)
{
  /* tools/make-example-trace.py --faults: five errors, coverage invalid. */
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "faulty-trace.jsonl", NULL);
  WickWindow *window = open_window (path);
  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 5);
  g_assert_cmpuint (wick_health_page_get_n_warnings (health), ==, 0);
  WickCoveragePage *coverage = WICK_COVERAGE_PAGE (wick_window_get_view (window, "coverage"));
  g_assert_cmpstr (wick_coverage_page_get_verdict_text (coverage), ==,
                   "Gradient coverage: invalid");
  /* The missing entry shows as not recorded under its family. */
  WickTable *table = wick_coverage_page_get_table (coverage);
  g_autoptr (WickGradientReport) report
    = wick_gradient_report_new (wick_window_get_document (window));
  guint not_recorded = 0, entries = 0;
  for (guint p = 0; p < wick_table_get_n_shown (table); p++)
    {
      guint kind, index;
      wick_table_get_shown (table, p, &kind, &index);
      if (kind == 1)
        {
          entries++;
          not_recorded += !g_array_index (report->entries, WickGradientEntryRow, index).observed;
        }
    }
  g_assert_cmpuint (entries, ==, 9);
  g_assert_cmpuint (not_recorded, ==, 1);
  /* Tensor stats: the overflowing layer sorts first. */
  WickCostsPage *costs = WICK_COSTS_PAGE (wick_window_get_view (window, "costs"));
  WickTable *stats = wick_costs_page_get_table (costs, "stats");
  g_assert_cmpuint (wick_table_get_n_shown (stats), ==, 4);
  guint kind, first;
  g_assert_true (wick_table_get_shown (stats, 0, &kind, &first));
  const WickTensorStats *worst
    = &wick_document_get_tensor_stats (wick_window_get_document (window), NULL)[first];
  g_assert_cmpuint (worst->non_finite, ==, 37);
  g_assert_cmpstr (wick_document_str (wick_window_get_document (window), worst->label), ==,
                   "fc3.out");
  app_test_window_close (window);
}

static gboolean
has_progress (gpointer window)
{
  double p = wick_window_get_progress (window);
  return p > 0.0 && p < 1.0;
}

static gboolean
not_loading (gpointer window)
{
  return g_strcmp0 (wick_window_get_state (window), "loading") != 0;
}

/* A trace of @n spans under one root, in a temporary file (the caller
 * unlinks it): large enough that reading it takes many batches. */
/* Reading has begun (some batch was committed), or it is over already. */
static gboolean
has_begun (gpointer window)
{
  return wick_window_get_progress (window) > 0.0 || !g_str_equal (wick_window_get_state (window), "loading");
}

static char *
write_large_trace (guint n)
{
  char *path = NULL;
  int fd = g_file_open_tmp ("wick-large-XXXXXX.jsonl", &path, NULL);
  FILE *out = fdopen (fd, "w");
  fputs (
    "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/"
    "10\",\"run_id\":\"r\",\"correlation_id\":\"c\","
    "\"entrypoint\":\"main\",\"phase\":\"infer\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"capture_"
    "step\":1,"
    "\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{"
    "\"measurement_scope\":\"profiled_work\",\"operations\":\"none\",\"logical_memory\":\"none\","
    "\"physical_memory\":\"none\",\"device_timing\":\"none\"},\"tags\":{}}\n"
    "{\"kind\":\"span_start\",\"id\":\"s\",\"name\":\"root\",\"start_ns\":0,\"span_kind\":"
    "\"function\",\"measured\":true}\n",
    out);
  for (guint i = 0; i < n; i++)
    fprintf (out,
             "{\"kind\":\"span_start\",\"id\":\"c%u\",\"parent_id\":\"s\",\"name\":\"work_item\","
             "\"start_ns\":%u,\"span_kind\":\"function\"}\n"
             "{\"kind\":\"span_end\",\"id\":\"c%u\",\"duration_ns\":90}\n",
             i, i * 100, i);
  fprintf (out, "{\"kind\":\"span_end\",\"id\":\"s\",\"duration_ns\":40000000}\n"
                "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":40000000}\n");
  fclose (out);
  return path;
}

static void
test_loader_cancel (void)
{
  /* A large trace: 400 000 spans. */
  g_autofree char *path = write_large_trace (400000);

  WickWindow *window = app_test_window_start_load (app, path, 0, 0);
  g_assert_cmpstr (wick_window_get_state (window), ==, "loading");
  APP_TEST_WAIT (has_progress, window, 20000);
  wick_window_cancel_load (window);
  APP_TEST_WAIT (not_loading, window, 20000);
  /* Cancelled: back to the welcome page, nothing shown. */
  g_assert_cmpstr (wick_window_get_state (window), ==, "welcome");
  g_assert_null (wick_window_get_document (window));

  /* Loaded to the end, the same file opens with all its spans. */
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (window, file);
  APP_TEST_WAIT (app_test_window_is_document, window, 60000);
  guint n;
  wick_document_get_spans (wick_window_get_document (window), &n);
  g_assert_cmpuint (n, ==, 400001);
  app_test_window_close (window);
  g_unlink (path);
}

/* A weak pointer cleared: its object was finalized. */
static gboolean
is_null (gpointer pointer)
{
  return *(gpointer *)pointer == NULL;
}

typedef struct
{
  WickWindow *window;
  const char *want_path;
  gboolean saw_welcome;
} OpenWatch;

/* The window shows @want_path and every load has ended; notes whether the
 * welcome page was ever shown on the way. */
static gboolean
shows_path_and_settled (gpointer data)
{
  OpenWatch *watch = data;
  WickDocument *document = wick_window_get_document (watch->window);
  if (g_strcmp0 (wick_window_get_state (watch->window), "welcome") == 0)
    watch->saw_welcome = TRUE;
  return wick_window_get_n_loads_in_flight () == 0 && document != NULL
         && g_strcmp0 (wick_document_get_path (document), watch->want_path) == 0
         && app_test_window_is_document (watch->window);
}

/* Opening a file while another loads: the second load is the one shown (the
 * loading page, then its document), the first is cancelled and its end
 * changes nothing — no welcome page in between, no stray timer after the
 * window closes (a GTK-CRITICAL would fail the test). */
static void
test_open_while_loading (void)
{
  g_autofree char *large = write_large_trace (400000);
  g_autofree char *example = app_test_example_path ();
  WickWindow *window = app_test_window_start_load (app, large, 0, 0);
  g_autoptr (GFile) second = g_file_new_for_path (example);

  APP_TEST_WAIT (has_begun, window, 20000);
  wick_window_load_file (window, second);
  g_assert_cmpstr (wick_window_get_state (window), ==, "loading");
  OpenWatch watch = { window, example, FALSE };
  APP_TEST_WAIT (shows_path_and_settled, &watch, 60000);
  g_assert_false (watch.saw_welcome);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, "example-trace.jsonl");
  g_assert_false (wick_window_is_empty (window));
  /* No timer or idle of the destroyed window is left (app_test_window_close
   * checks) and nothing holds it (no load): it is finalized. */
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&window);
  app_test_window_close (window);
  APP_TEST_WAIT (is_null, &window, 10000);
  g_unlink (large);
}

static gboolean
no_loads_in_flight (gpointer data)
{
  return wick_window_get_n_loads_in_flight () == 0;
}

/* Closing a window while it loads: the load is cancelled, its thread ends,
 * and its end touches nothing of the destroyed window. */
static void
test_close_while_loading (void)
{
  g_autofree char *large = write_large_trace (400000);
  WickWindow *window = app_test_window_start_load (app, large, 0, 0);
  APP_TEST_WAIT (has_begun, window, 20000);
  g_assert_cmpuint (wick_window_get_n_loads_in_flight (), ==, 1);
  gpointer destroyed = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&window);
  gtk_window_destroy (GTK_WINDOW (window));
  app_test_window_assert_no_sources (destroyed);
  APP_TEST_WAIT (no_loads_in_flight, NULL, 20000);
  /* ...and nothing holds the window any more: it is finalized. */
  APP_TEST_WAIT (is_null, &window, 10000);
  g_unlink (large);
}

static void
feed (WickDocument *document, const char *line)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_feed_line (document, line, strlen (line), &error));
}

/* The slices on the timeline's scene (rebuilt when due, as a frame does). */
static guint
scene_n_slices (WickTimelineView *timeline)
{
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  guint n_tracks, n_slices = 0;
  const WickTrack *tracks
    = wick_tracks_get_tracks (wick_timeline_scene_get_tracks (scene), &n_tracks);
  for (guint t = 0; t < n_tracks; t++)
    if (tracks[t].kind == WICK_TRACK_SLICES)
      n_slices += tracks[t].n_events;
  return n_slices;
}

static gboolean
scene_has_51_slices (gpointer timeline)
{
  return scene_n_slices (timeline) == 51;
}

/* The first widget of @type under @widget (itself included), NULL when none. */
static GtkWidget *
find_widget (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
count_call (guint *count)
{
  (*count)++;
}

/* The overview's pixels against wick_timeline_scene_draw_overview() onto an
 * image, the window's visible range outlined. */
static guint
overview_off_scene (WickWindow *window, GtkWidget *overview)
{
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  /* a frame in which the timeline's scene did not change after the
   * overview drew (when it does, the overview draws again in the next) */
  guint changes = 1;
  gulong handler
    = g_signal_connect_swapped (timeline, "scene-changed", G_CALLBACK (count_call), &changes);
  for (guint frames = 0; changes > 0; frames++)
    {
      g_assert_cmpuint (frames, <, 10);
      changes = 0;
      app_test_wait_drawn (overview, 10000, "the overview");
    }
  g_signal_handler_disconnect (timeline, handler);
  cairo_surface_t *shown = app_test_render_widget (overview);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  WickTimelineViewport view = { 0 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  view.width = gtk_widget_get_width (overview);
  view.height = gtk_widget_get_height (overview);
  view.dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  view.selected_type = WICK_RECORD_NONE;
  view.selected_index = -1;
  view.hover_x = -1;
  view.no_labels = TRUE;
  guint64 start, end;
  wick_selection_get_visible (wick_window_get_selection (window), &start, &end);
  cairo_surface_t *drawn = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
  cairo_t *cr = cairo_create (drawn);
  wick_timeline_scene_draw_overview (scene, cr, &view, start, end);
  cairo_destroy (cr);
  guint n = count_different (shown, drawn, 2);
  cairo_surface_destroy (shown);
  cairo_surface_destroy (drawn);
  return n;
}

/* The overview's rows node of its last frame (its first cairo node). */
static GskRenderNode *
overview_rows_node (GtkWidget *overview)
{
  g_autoptr (GskRenderNode) node = widget_frame_node (overview, "the overview");
  GskRenderNode *rows = find_node (node, GSK_CAIRO_NODE);
  g_assert_nonnull (rows);
  return rows; /* the overview's own reference keeps it while it is shown */
}

/* The overview keeps its rows across changes of the visible range (only the
 * veil is drawn again) and draws them afresh when they change: the style,
 * a document that grew; its pixels always equal the overview drawn whole. */
static void
test_overview_rows_node (void)
{
  WickWindow *window = open_example ();
  GtkWidget *overview = find_widget (GTK_WIDGET (window), WICK_TYPE_TIMELINE_OVERVIEW);
  g_assert_nonnull (overview);
  g_assert_cmpuint (overview_off_scene (window, overview), ==, 0);
  GskRenderNode *first = overview_rows_node (overview);
  WickSelection *selection = wick_window_get_selection (window);
  guint64 start, end;
  wick_selection_get_visible (selection, &start, &end);
  wick_selection_set_visible (selection, start + (end - start) / 3, end - (end - start) / 3);
  g_assert_cmpuint (overview_off_scene (window, overview), ==, 0);
  g_assert_true (overview_rows_node (overview) == first);
  AdwStyleManager *style = adw_style_manager_get_default ();
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
  g_assert_cmpuint (overview_off_scene (window, overview), ==, 0);
  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
  g_assert_cmpuint (overview_off_scene (window, overview), ==, 0);
  app_test_window_close (window);

  /* a document that grows while shown */
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_auto (GStrv) lines = g_strsplit (broken_trace, "\n", -1);
  window = app_test_window_new (app, 1200, 700);
  wick_window_set_document (window, document);
  overview = find_widget (GTK_WIDGET (window), WICK_TYPE_TIMELINE_OVERVIEW);
  g_assert_nonnull (overview);
  for (guint i = 0; i < 5; i++)
    {
      feed (document, lines[i]);
      if (i < 2)
        continue;
      wick_window_document_changed (window);
      wick_selection_get_visible (wick_window_get_selection (window), &start, &end);
      g_assert_cmpuint (overview_off_scene (window, overview), ==, 0);
    }
  app_test_window_close (window);
}

static void
test_live_follow (void)
{
  /* A document that grows while shown, as the live area feeds it. */
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_auto (GStrv) lines = g_strsplit (broken_trace, "\n", -1);
  WickWindow *window = app_test_window_new (app, 1200, 700);
  /* Shown while still empty, as a live window is before the first record. */
  wick_window_set_document (window, document);
  g_assert_cmpstr (wick_window_get_state (window), ==, "document");
  feed (document, lines[0]);
  feed (document, lines[1]);
  wick_window_document_changed (window);
  wick_window_set_live (window, TRUE);
  g_assert_true (wick_window_get_follow_newest (window));
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  app_test_wait_drawn (GTK_WIDGET (timeline), 10000, "the live timeline to be drawn");
  WickSelection *selection = wick_window_get_selection (window);
  char line[256];
  for (guint i = 0; i < 50; i++)
    {
      snprintf (line, sizeof line,
                "{\"kind\":\"span_start\",\"id\":\"k%u\",\"parent_id\":\"s1\",\"name\":\"tick\","
                "\"start_ns\":%u,\"span_kind\":\"function\"}",
                i, 1000 + i * 1000000);
      feed (document, line);
      snprintf (line, sizeof line, "{\"kind\":\"span_end\",\"id\":\"k%u\",\"duration_ns\":500000}",
                i);
      feed (document, line);
      wick_window_document_changed (window);
      /* A frame between records, as a live window draws while it grows. */
      app_test_wait_drawn (GTK_WIDGET (timeline), 10000, "a frame of the growing timeline");
      guint64 start, end;
      wick_selection_get_visible (selection, &start, &end);
      g_assert_cmpuint (end, ==, MAX (wick_document_get_end_ns (document), end - start));
    }
  /* The newest span is drawn once the scene caught up (its rebuilds are
   * throttled to a quarter of the time: wait for it, not for a time). */
  guint n;
  wick_document_get_spans (document, &n);
  g_assert_cmpuint (n, ==, 51);
  APP_TEST_WAIT (scene_has_51_slices, timeline, 10000);
  g_assert_cmpuint (scene_n_slices (timeline), ==, 51);
  /* Panning leaves follow mode; the Follow action returns to it. */
  wick_timeline_view_pan (timeline, -200);
  g_assert_false (wick_window_get_follow_newest (window));
  gtk_widget_activate_action (GTK_WIDGET (window), "win.follow", NULL);
  g_assert_true (wick_window_get_follow_newest (window));
  /* Banners come and go by id. */
  wick_window_show_banner (window, "dropped", "12 records dropped", NULL, NULL);
  wick_window_show_banner (window, "dropped", "15 records dropped", NULL, NULL);
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 1);
  wick_window_hide_banner (window, "dropped");
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 0);
  /* Pages added by the live area join the switcher. */
  wick_window_add_page (window, "weights", "Weights", "drive-harddisk-symbolic",
                        gtk_label_new ("w"));
  wick_window_show_page (window, "weights");
  app_test_window_close (window);
}

static GtkWidget *
find_switcher_button (GtkWidget *root, const char *label)
{
  for (GtkWidget *child = gtk_widget_get_first_child (root); child;
       child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_TOGGLE_BUTTON (child) && gtk_widget_get_mapped (child))
        {
          /* AdwViewSwitcherButton: a toggle button whose labels name the page. */
          for (GtkWidget *w = gtk_widget_get_first_child (child); w;)
            {
              if (GTK_IS_LABEL (w) && g_strcmp0 (gtk_label_get_label (GTK_LABEL (w)), label) == 0)
                return child;
              GtkWidget *next = gtk_widget_get_first_child (w);
              while (next == NULL && w != child)
                {
                  next = gtk_widget_get_next_sibling (w);
                  if (next == NULL)
                    w = gtk_widget_get_parent (w);
                }
              w = next;
              if (w == child)
                break;
            }
        }
      GtkWidget *found = find_switcher_button (child, label);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
timeline_has_focus (gpointer timeline)
{
  return gtk_widget_has_focus (timeline);
}

static gboolean
window_at_most_700_wide (gpointer window)
{
  return gtk_widget_get_mapped (window) && gtk_widget_get_width (window) > 0
         && gtk_widget_get_width (window) <= 700;
}

/* Timeline keys work right after clicking a view tab; a 700 px
 * window keeps the track labels and the hint bar; the details pane narrows. */
static void
test_tabs_and_narrow (void)
{
  WickWindow *window = open_example ();
  GtkWidget *timeline = wick_window_get_view (window, "timeline");
  wick_window_show_page (window, "memory");
  app_test_wait_drawn (wick_window_get_view (window, "memory"), 10000,
                       "the memory page to be drawn");
  GtkWidget *tab = find_switcher_button (GTK_WIDGET (window), "Timeline");
  if (tab == NULL)
    g_error ("no Timeline tab in the view switcher");
  /* A click: the button takes the focus, then switches the page. */
  gtk_widget_grab_focus (tab);
  g_signal_emit_by_name (tab, "clicked");
  APP_TEST_WAIT (timeline_has_focus, timeline, 10000);
  g_assert_true (gtk_widget_get_mapped (timeline));
  /* So a key press goes to the timeline's key controller. */
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));
  g_assert_true (focus == timeline);

  /* 700 px wide. */
  gtk_window_set_default_size (GTK_WINDOW (window), 700, 700);
  APP_TEST_WAIT (window_at_most_700_wide, window, 10000);
  /* ...and laid out and drawn at that width. */
  app_test_wait_drawn (timeline, 10000, "the timeline at 700 px");
  int min_width;
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL,
                      NULL);
  g_assert_cmpint (min_width, <=, 700);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 700);
  /* The track labels (the gutter) and some plot stay. */
  g_assert_cmpint (gtk_widget_get_width (timeline), >=, WICK_TIMELINE_GUTTER + 100);
  /* The hint bar is shown, whole inside the timeline (shortened, not cut). */
  GtkWidget *hint = wick_window_get_view (window, "hint");
  g_assert_true (gtk_widget_get_mapped (hint));
  /* what the keys do now: f and double-click fit any slice */
  g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (hint)),
                            "Double-click or F fits any slice, GPU ones too"));
  graphene_rect_t bounds;
  g_assert_true (gtk_widget_compute_bounds (hint, timeline, &bounds));
  g_assert_cmpfloat (bounds.size.width, >, 40);
  g_assert_cmpfloat (bounds.origin.x + bounds.size.width, <=, gtk_widget_get_width (timeline) + 1);
  /* The details pane can be narrowed below 300 px. */
  GtkWidget *details = wick_window_get_view (window, "details");
  int details_min;
  gtk_widget_measure (details, GTK_ORIENTATION_HORIZONTAL, -1, &details_min, NULL, NULL, NULL);
  g_assert_cmpint (details_min, <=, 200);
  app_test_window_close (window);
}

static gboolean
has_range_track_rows (gpointer details)
{
  return wick_details_pane_get_range_track_rows (details) > 0;
}

/* The track label column shows a full name on hover (its
 * tooltip), and can be made wider (dragging its right edge): the plot and
 * every track start after it, labels cut less. */
static void
test_label_column (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "tracks.json", NULL);
  WickWindow *window = open_window (path);
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  app_test_wait_drawn (widget, 10000, "the timeline to be drawn");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  g_assert_cmpint (wick_timeline_view_get_gutter_width (timeline), ==, WICK_TIMELINE_GUTTER_DEFAULT);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  guint32 device = G_MAXUINT32;
  for (guint i = 0; i < wick_timeline_scene_get_n_tracks (scene); i++)
    if (g_strcmp0 (wick_timeline_scene_get_track_name (scene, wick_timeline_scene_get_track (scene, i)),
                   "cuda:0 stream 7") == 0)
      device = wick_timeline_scene_get_track (scene, i);
  g_assert_cmpuint (device, !=, G_MAXUINT32);
  cairo_rectangle_t r;
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, device, &r));
  g_autofree char *label = wick_timeline_view_label_at (timeline, 20, r.y + 4);
  g_assert_cmpstr (label, ==, "cuda:0 stream 7");
  g_assert_null (wick_timeline_view_label_at (timeline, WICK_TIMELINE_GUTTER + 20, r.y + 4));
  g_assert_cmpfloat (r.x, ==, WICK_TIMELINE_GUTTER);

  wick_timeline_view_set_gutter_width (timeline, 320);
  g_assert_cmpint (wick_timeline_view_get_gutter_width (timeline), ==, 320);
  wick_timeline_view_get_viewport (timeline, &view);
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, device, &r));
  g_assert_cmpfloat (r.x, ==, 320);
  g_autofree char *wide = wick_timeline_view_label_at (timeline, 300, r.y + 4);
  g_assert_cmpstr (wide, ==, "cuda:0 stream 7");
  const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
  if (shots != NULL)
    {
      app_test_iterate_pending (300);
      g_autofree char *png = g_build_filename (shots, "label-column.png", NULL);
      app_test_save_png (GTK_WIDGET (window), png);
    }
  /* bounded both ways */
  wick_timeline_view_set_gutter_width (timeline, 10);
  g_assert_cmpint (wick_timeline_view_get_gutter_width (timeline), ==, WICK_TIMELINE_GUTTER_MIN);
  wick_timeline_view_set_gutter_width (timeline, 5000);
  g_assert_cmpint (wick_timeline_view_get_gutter_width (timeline), ==, WICK_TIMELINE_GUTTER_MAX);
  wick_timeline_view_set_gutter_width (timeline, WICK_TIMELINE_GUTTER_DEFAULT);
  app_test_window_close (window);
}

/* `f` and a double-click fit GPU kernels and async slices too, not
 * only spans: the view becomes the slice's extent with a tenth either side. */
static void
test_fit_any_slice (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "tracks.json", NULL);
  WickWindow *window = open_window (path);
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  app_test_wait_drawn (widget, 10000, "the timeline to be drawn");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  WickSelection *selection = wick_window_get_selection (window);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  WickTracks *tracks = wick_timeline_scene_get_tracks (scene);
  static const struct
  {
    guint kind;
    const char *name;
  } kinds[] = { { WICK_EVENT_DEVICE, "sgemm" }, { WICK_EVENT_ASYNC, "load" } };
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (int how = 0; how < 2; how++)
      {
        wick_timeline_view_zoom_to_fit (timeline);
        WickTimelineViewport view;
        wick_timeline_view_get_viewport (timeline, &view);
        WickEventRef ref = { kinds[k].kind, 0 };
        while (g_strcmp0 (wick_tracks_event_name (tracks, ref), kinds[k].name) != 0)
          ref.index++;
        cairo_rectangle_t r;
        g_assert_true (wick_timeline_scene_event_rect (scene, &view, ref, &r));
        double x = r.x + r.width / 2, y = r.y + 5;
        if (how == 0)
          wick_timeline_view_double_click (timeline, x, y);
        else
          {
            g_assert_true (wick_timeline_view_click (timeline, x, y));
            g_assert_true (wick_timeline_view_fit_selected (timeline));
          }
        gint64 index;
        g_assert_cmpuint (wick_selection_get_event (selection, &index), ==, kinds[k].kind);
        g_assert_cmpint (index, ==, ref.index);
        guint64 start, end, vs, ve;
        wick_timeline_scene_event_extent (scene, ref, &start, &end);
        wick_selection_get_visible (selection, &vs, &ve);
        guint64 margin = (end - start) / 10;
        g_test_message ("%s %s: [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "] shown as [%"
                        G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                        kinds[k].name, how ? "f" : "double-click", start, end, vs, ve);
        g_assert_cmpuint (vs, ==, start - margin);
        g_assert_cmpuint (ve, ==, end + margin);
        const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
        if (shots != NULL && k == 0 && how == 0)
          {
            app_test_iterate_pending (300);
            g_autofree char *png = g_build_filename (shots, "fit-kernel.png", NULL);
            app_test_save_png (GTK_WIDGET (window), png);
          }
      }
  app_test_window_close (window);
}

/* Clicking any event shows its fields in the details pane;
 * a range is summarised per track; ] follows a flow. */
static void
test_track_events (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "tracks.json", NULL);
  WickWindow *window = open_window (path);
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  app_test_wait_drawn (widget, 10000, "the timeline to be drawn");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  WickDetailsPane *details = WICK_DETAILS_PANE (wick_window_get_view (window, "details"));
  WickSelection *selection = wick_window_get_selection (window);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  WickTracks *tracks = wick_timeline_scene_get_tracks (scene);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  struct
  {
    guint kind;
    const char *name;
  } kinds[] = {
    { WICK_EVENT_ASYNC, "load" },     { WICK_EVENT_COUNTER, "memory bytes" },
    { WICK_EVENT_INSTANT, "tick" },   { WICK_EVENT_DEVICE, "sgemm" },
    { WICK_EVENT_SLICE, "backward" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      /* The first event of that kind and name, clicked in its middle. */
      gboolean found = FALSE;
      for (guint i = 0; i < 64 && !found; i++)
        {
          WickEventRef ref = { kinds[k].kind, i };
          if (kinds[k].kind == WICK_EVENT_COUNTER)
            {
              guint n;
              wick_tracks_get_counter_samples (tracks, &n);
              if (i >= n)
                break;
            }
          const char *name = wick_tracks_event_name (tracks, ref);
          if (g_strcmp0 (name, kinds[k].name) != 0)
            continue;
          cairo_rectangle_t r;
          if (!wick_timeline_scene_event_rect (scene, &view, ref, &r))
            continue;
          g_assert_true (
            wick_timeline_view_click (timeline, r.x + MIN (r.width / 2, 3) + 1, r.y + 5));
          gint64 index;
          g_assert_cmpuint (wick_selection_get_event (selection, &index), ==, kinds[k].kind);
          g_assert_cmpstr (wick_details_pane_get_title (details), ==, kinds[k].name);
          found = TRUE;
        }
      if (!found)
        g_error ("no %s to click", kinds[k].name);
    }
  /* A flow: select the launch, ] reaches its kernel. */
  guint n_spans;
  const WickSpan *spans = wick_document_get_spans (wick_window_get_document (window), &n_spans);
  for (guint i = 0; i < n_spans; i++)
    if (g_strcmp0 (wick_document_str (wick_window_get_document (window), spans[i].name),
                   "cudaLaunchKernel")
        == 0)
      wick_selection_set_record (selection, WICK_RECORD_SPAN, i);
  g_assert_true (wick_timeline_view_follow_flow (timeline, 1));
  g_assert_cmpstr (wick_details_pane_get_title (details), ==, "sgemm");
  /* A Chrome span's parent by its name: imported spans have no id (not "(null)"). */
  for (guint i = 0; i < n_spans; i++)
    if (g_strcmp0 (wick_document_str (wick_window_get_document (window), spans[i].name), "matmul")
        == 0)
      wick_selection_set_record (selection, WICK_RECORD_SPAN, i);
  g_assert_cmpstr (wick_details_pane_get_title (details), ==, "matmul");
  g_assert_cmpstr (wick_details_pane_get_field (details, "Parent"), ==, "forward");
  /* The range: one row per track holding something in it. */
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  wick_selection_set_range (selection, start, end);
  APP_TEST_WAIT (has_range_track_rows, details, 10000);
  g_assert_cmpuint (wick_details_pane_get_range_track_rows (details), ==, 7);
  app_test_window_close (window);
}

/* The window's size through GSettings: a new window opens at the size kept,
 * and a resized one keeps its own for the next (not the others'). */
static void
test_size_remembered (void)
{
  GSettings *settings = wick_settings_get ();
  g_assert_nonnull (settings);
  g_settings_set_int (settings, "window-width", 1111);
  g_settings_set_int (settings, "window-height", 777);
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  WickWindow *other = wick_window_new (GTK_APPLICATION (app));
  int width, height;
  gtk_window_get_default_size (GTK_WINDOW (window), &width, &height);
  g_assert_cmpint (width, ==, 1111);
  g_assert_cmpint (height, ==, 777);
  gtk_window_set_default_size (GTK_WINDOW (window), 1234, 800);
  g_assert_cmpint (g_settings_get_int (settings, "window-width"), ==, 1234);
  g_assert_cmpint (g_settings_get_int (settings, "window-height"), ==, 800);
  /* the other window keeps its size */
  gtk_window_get_default_size (GTK_WINDOW (other), &width, &height);
  g_assert_cmpint (width, ==, 1111);
  gtk_window_destroy (GTK_WINDOW (other));
  gtk_window_destroy (GTK_WINDOW (window));
  WickWindow *next = wick_window_new (GTK_APPLICATION (app));
  gtk_window_get_default_size (GTK_WINDOW (next), &width, &height);
  g_assert_cmpint (width, ==, 1234);
  gtk_window_destroy (GTK_WINDOW (next));
}

/* The details of a Wick record: its JSON members as fields, a boolean as a
 * word ("yes"/"no", as Measured is), not GLib's TRUE. */
static void
test_details_booleans (void)
{
  g_autoptr (WickDocument) document = app_test_document_from_text (
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\",\"kept\":true,"
    "\"dropped\":false,\"count\":3}");
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *pane = wick_details_pane_new (selection);
  g_object_ref_sink (pane);
  wick_details_pane_set_document (WICK_DETAILS_PANE (pane), document);
  guint n;
  wick_document_get_extensions (document, &n);
  g_assert_cmpuint (n, ==, 1);
  wick_selection_set_record (selection, WICK_RECORD_EXTENSION, 0);
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "kept"), ==, "yes");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "dropped"), ==, "no");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "count"), ==, "3");
  g_object_unref (pane);
}

/* File → Export Trace writes Chrome JSON (.json, .json.gz)
 * that imports again with the same counts by phase. */
static char *
imported_counts (WickDocument *doc)
{
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  g_assert_nonnull (info);
  GString *out = g_string_new (NULL);
  guint n_flows;
  wick_tracks_get_flows (wick_document_get_tracks (doc), &n_flows);
  /* flows as arrows, each written as an s/f pair */
  g_string_append_printf (out, "flows=%u ", n_flows);
  for (guint i = 0; i + 1 < info->imported->len; i += 2)
    {
      const char *phase = g_ptr_array_index (info->imported, i);
      if (strchr ("BEMstf", phase[0]) != NULL && phase[1] == '\0')
        continue; /* B/E come back as X, metadata as the names the model keeps, flows below */
      g_string_append_printf (out, "%s=%s ", phase, (const char *)g_ptr_array_index (info->imported, i + 1));
    }
  return g_string_free (out, FALSE);
}

static void
test_export_trace (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "chrome", "hta-event-sync.json.gz", NULL);
  WickWindow *window = open_window (path);
  g_autofree char *before = imported_counts (wick_window_get_document (window));
  g_autofree char *dir = g_dir_make_tmp ("wick-export-XXXXXX", NULL);
  const char *names[] = { "again.json", "again.json.gz" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *out = g_build_filename (dir, names[i], NULL);
      g_autoptr (GFile) file = g_file_new_for_path (out);
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_window_export_trace (window, file, &error));
      g_assert_no_error (error);
      g_autoptr (WickDocument) again = wick_document_new ();
      g_assert_true (wick_document_load_file_auto (again, out, NULL, NULL, NULL, &error));
      g_autofree char *after = imported_counts (again);
      g_assert_cmpstr (after, ==, before);
      g_unlink (out);
    }
  g_assert_nonnull (strstr (before, "X="));
  g_rmdir (dir);
  app_test_window_close (window);
}

/* The widget to blame when @widget will not fit: down from @widget, the
 * child whose minimum width is (nearly) its parent's, as deep as that goes. */
static GtkWidget *
widest_culprit (GtkWidget *widget, int *min)
{
  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, min, NULL, NULL, NULL);
  for (;;)
    {
      GtkWidget *widest = NULL;
      int widest_min = 0;
      for (GtkWidget *c = gtk_widget_get_first_child (widget); c;
           c = gtk_widget_get_next_sibling (c))
        {
          int m = 0;
          if (gtk_widget_get_visible (c))
            gtk_widget_measure (c, GTK_ORIENTATION_HORIZONTAL, -1, &m, NULL, NULL, NULL);
          if (m > widest_min)
            widest = c, widest_min = m;
        }
      int here;
      gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &here, NULL, NULL, NULL);
      if (widest == NULL || widest_min < here - 40)
        return widget;
      widget = widest;
    }
}

static gboolean
details_shown (gpointer details)
{
  return gtk_widget_get_visible (details) && gtk_widget_get_mapped (details);
}

static gboolean
window_narrowed (gpointer window)
{
  return gtk_widget_get_mapped (window) && gtk_widget_get_width (window) > 0
         && gtk_widget_get_width (window) <= 700
         && wick_window_get_details_folded (window);
}

/* At 700 px the window really is 700 px wide on every page
 * (no page's minimum width widens it), the details pane folds away and the
 * timeline keeps its track labels; wide again, the pane comes back as the
 * user left it, and folding never wrote the user's choice. */
static void
check_narrow (WickWindow *window, guint min_pages)
{
  GtkWidget *timeline = wick_window_get_view (window, "timeline");
  GtkWidget *details = wick_window_get_view (window, "details");
  app_test_wait_drawn (timeline, 10000, "the timeline to be drawn");
  g_assert_true (gtk_widget_get_visible (details));
  g_assert_false (wick_window_get_details_folded (window));
  int gutter = wick_timeline_view_get_gutter_width (WICK_TIMELINE_VIEW (timeline));

  gtk_window_set_default_size (GTK_WINDOW (window), 700, 700);
  APP_TEST_WAIT (window_narrowed, window, 10000);
  GListModel *pages = G_LIST_MODEL (
    adw_view_stack_get_pages (ADW_VIEW_STACK (gtk_widget_get_ancestor (timeline, ADW_TYPE_VIEW_STACK))));
  guint n_pages = 0;
  g_autoptr (GString) too_wide = g_string_new (NULL);
  for (guint i = 0; i < g_list_model_get_n_items (pages); i++)
    {
      g_autoptr (AdwViewStackPage) page = g_list_model_get_item (pages, i);
      if (!adw_view_stack_page_get_visible (page))
        continue;
      const char *name = adw_view_stack_page_get_name (page);
      GtkWidget *child = adw_view_stack_page_get_child (page);
      wick_window_show_page (window, name);
      app_test_wait_drawn (child, 10000, name);
      app_test_iterate_pending (100);
      n_pages++;
      int page_min;
      GtkWidget *culprit = widest_culprit (child, &page_min);
      int culprit_min;
      gtk_widget_measure (culprit, GTK_ORIENTATION_HORIZONTAL, -1, &culprit_min, NULL, NULL,
                          NULL);
      if (page_min > 700)
        {
          g_autoptr (GString) chain = g_string_new (NULL);
          for (GtkWidget *w = culprit; w != child; w = gtk_widget_get_parent (w))
            {
              int m;
              gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &m, NULL, NULL, NULL);
              g_string_append_printf (chain, " < %s %d px", G_OBJECT_TYPE_NAME (w), m);
            }
          g_string_append_printf (too_wide, "the %s page is %d px wide at least: %s (%s) is %d px%s\n", name, page_min,
                   G_OBJECT_TYPE_NAME (culprit), gtk_widget_get_css_name (culprit), culprit_min,
                   chain->str);
          continue;
        }
      int window_min;
      gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &window_min, NULL,
                          NULL, NULL);
      g_test_message ("%s: page min %d px, window min %d px, window %d px", name, page_min,
                      window_min, gtk_widget_get_width (GTK_WIDGET (window)));
      g_assert_cmpint (window_min, <=, 700);
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 700);
      /* the details pane is folded away, the page has the window's width */
      g_assert_true (wick_window_get_details_folded (window));
      g_assert_false (gtk_widget_get_visible (details));
      g_assert_cmpint (gtk_widget_get_width (child), >=, 600);
      if (child == timeline || gtk_widget_is_ancestor (timeline, child))
        {
          /* the track labels stay, at their width, with room to plot */
          g_assert_true (gtk_widget_get_mapped (timeline));
          g_assert_cmpint (wick_timeline_view_get_gutter_width (WICK_TIMELINE_VIEW (timeline)),
                           ==, gutter);
          g_assert_cmpint (gtk_widget_get_width (timeline), >=, gutter + 300);
          g_autofree char *label = NULL;
          for (int y = 0; label == NULL && y < gtk_widget_get_height (timeline); y += 4)
            label = wick_timeline_view_label_at (WICK_TIMELINE_VIEW (timeline), 10, y);
          g_assert_nonnull (label);
        }
      const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
      if (shots != NULL
          && (g_str_equal (name, "timeline") || g_str_equal (name, "costs")
              || g_str_equal (name, "ranks")))
        {
          g_autofree char *base = g_strdup_printf ("narrow-%s.png", name);
          g_autofree char *png = g_build_filename (shots, base, NULL);
          app_test_save_png (GTK_WIDGET (window), png);
        }
    }
  if (too_wide->len > 0)
    g_error ("%s", too_wide->str);
  g_assert_cmpuint (n_pages, >=, min_pages);

  /* Folded, the details button still shows the pane: over the window's width. */
  wick_window_show_page (window, "timeline");
  GSettings *settings = wick_settings_get ();
  gboolean wanted = settings ? g_settings_get_boolean (settings, "show-details") : TRUE;
  g_assert_true (wanted);
  /* a record selected while the pane is folded is there when it shows:
   * the pane is a page of the window's session */
  wick_selection_set_record (wick_window_get_selection (window), WICK_RECORD_SPAN, 0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-details", NULL));
  app_test_iterate_pending (200);
  g_assert_true (gtk_widget_get_visible (details));
  g_assert_true (wick_page_get_document (WICK_PAGE (details)) == wick_window_get_document (window));
  g_assert_cmpstr (wick_details_pane_get_title (WICK_DETAILS_PANE (details)), !=,
                   "Nothing selected");
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), <=, 700);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.toggle-details", NULL));
  app_test_iterate_pending (200);
  g_assert_false (gtk_widget_get_visible (details));
  /* ...and the user's choice was never written by folding. */
  if (settings)
    g_assert_true (g_settings_get_boolean (settings, "show-details"));

  /* Wide again: the pane is back. */
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  APP_TEST_WAIT (details_shown, details, 10000);
  g_assert_false (wick_window_get_details_folded (window));
}

static void
check_narrow_every_page (void)
{
  /* A torch.compile trace: Timeline, Memory, Coverage, Health, Costs, the
   * three GPU pages, and the live pages (on a session that is not there). */
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "gpu", "torch-compile.json.gz", NULL);
  WickWindow *window = open_window (path);
  const char *socket = "/nonexistent/wick-narrow.sock";
  wick_window_add_page (window, "weights", "Weights", NULL, wick_weights_panel_new (window, socket));
  wick_window_add_page (window, "stages", "Stages", NULL, wick_stages_panel_new (window, socket));
  check_narrow (window, 10);
  app_test_window_close (window);

  /* A job of two ranks (the H200 gloo run): the Ranks page too. */
  GFile *files[2];
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *name = g_strdup_printf ("h200-gloo-rank%u.json.gz", i);
      g_autofree char *p = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "ranks", name, NULL);
      files[i] = g_file_new_for_path (p);
    }
  WickWindow *job = app_test_window_new (app, 1400, 900);
  wick_window_open_job (job, files, 2);
  APP_TEST_WAIT (app_test_window_is_document, job, 60000);
  g_assert_nonnull (wick_window_get_view (job, "ranks"));
  check_narrow (job, 6);
  for (guint i = 0; i < 2; i++)
    g_object_unref (files[i]);
  app_test_window_close (job);
}

static void
test_narrow_every_page (void)
{
  check_narrow_every_page ();
}

/* ...and in German, whose titles are longer (the Costs tabs). */
static void
test_narrow_every_page_german (void)
{
  if (g_test_subprocess ())
    {
      if (!app_test_bind_build_catalogs ())
        g_error ("no C.UTF-8 locale: gettext would ignore LANGUAGE");
      g_assert_cmpstr (dgettext (GETTEXT_PACKAGE, "Span costs"), ==, "Abschnittskosten");
      check_narrow_every_page ();
      return;
    }
  g_setenv ("LANGUAGE", "de", TRUE);
  g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("LANGUAGE");
  g_test_trap_assert_passed ();
}

#ifdef GDK_WINDOWING_X11
/* Real pointer events under Xvfb: XTest's fake motion and button events go
 * through the X server to GTK like a mouse's (the XTEST pointer device),
 * then through the widget's gestures. libX11 and libXtst are opened at run
 * time, so the test needs no build dependency of its own. */
typedef struct
{
  Display *display;
  Window xid;
  GtkWidget *native;
  int (*fake_motion) (Display *, int, int, int, unsigned long);
  int (*fake_button) (Display *, unsigned int, Bool, unsigned long);
  Bool (*translate) (Display *, Window, Window, int, int, int *, int *, Window *);
  Window (*root) (Display *);
  int (*sync) (Display *, Bool);
  int (*raise) (Display *, Window);
  /* what GTK has dispatched of them so far, seen in the capture phase of
   * the window: an XTest event is sent, then waited for until GTK has
   * handled it, since the X server may deliver it late on a loaded machine */
  GtkEventController *seen;
  guint motions, presses, releases;
} FakePointer;

static gboolean
xpointer_count (GtkEventControllerLegacy *controller, GdkEvent *event, gpointer data)
{
  FakePointer *p = data;
  switch (gdk_event_get_event_type (event))
    {
    case GDK_MOTION_NOTIFY:
      p->motions++;
      break;
    case GDK_BUTTON_PRESS:
      p->presses++;
      break;
    case GDK_BUTTON_RELEASE:
      p->releases++;
      break;
    default:
      break;
    }
  return GDK_EVENT_PROPAGATE;
}

typedef struct
{
  const guint *count;
  guint wanted;
} CountWait;

static gboolean
count_reached (gpointer data)
{
  CountWait *wait = data;
  return *wait->count >= wait->wanted;
}

/* Runs the main context until @done (data) or @timeout_ms, polling (an X
 * event in flight wakes no source); what it answers, no failure. */
static gboolean
poll_until (gboolean (*done) (gpointer data), gpointer data, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  while (!done (data) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  return done (data);
}

/* Waits up to @timeout_ms until GTK has dispatched the event that moved
 * *count past @before, through the gestures of its target and back. */
static gboolean
xpointer_wait_for (const guint *count, guint before, guint timeout_ms)
{
  CountWait wait = { count, before + 1 };
  poll_until (count_reached, &wait, timeout_ms);
  app_test_iterate_pending (30);
  return count_reached (&wait);
}

/* A button event is sent once (sending it again would be a second click):
 * after 15 s the test goes on and its assertions judge what arrived. */
static void
xpointer_wait (const guint *count, guint before, const char *what)
{
  if (!xpointer_wait_for (count, before, 15000))
    g_test_message ("no event after 15 s waiting for %s", what);
}

static gboolean
xpointer_init (FakePointer *p, GtkWidget *widget, char **why)
{
  GdkDisplay *display = gtk_widget_get_display (widget);
  if (!GDK_IS_X11_DISPLAY (display))
    return *why = g_strdup ("not an X11 display"), FALSE;
  void *x11 = dlopen ("libX11.so.6", RTLD_NOW | RTLD_GLOBAL);
  void *xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_GLOBAL);
  if (x11 == NULL || xtst == NULL)
    return *why = g_strdup_printf ("no libX11/libXtst: %s", dlerror ()), FALSE;
  Bool (*query) (Display *, int *, int *, int *, int *) = dlsym (xtst, "XTestQueryExtension");
  p->fake_motion = dlsym (xtst, "XTestFakeMotionEvent");
  p->fake_button = dlsym (xtst, "XTestFakeButtonEvent");
  p->translate = dlsym (x11, "XTranslateCoordinates");
  p->root = dlsym (x11, "XDefaultRootWindow");
  p->sync = dlsym (x11, "XSync");
  p->raise = dlsym (x11, "XRaiseWindow");
  p->display = gdk_x11_display_get_xdisplay (display);
  int a, b, c, d;
  if (query == NULL || p->fake_motion == NULL || p->fake_button == NULL || p->translate == NULL
      || p->root == NULL || p->sync == NULL || p->raise == NULL || !query (p->display, &a, &b, &c, &d))
    return *why = g_strdup ("the X server has no XTEST extension"), FALSE;
  p->native = GTK_WIDGET (gtk_widget_get_native (widget));
  p->xid = gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (p->native)));
  p->motions = p->presses = p->releases = 0;
  p->seen = gtk_event_controller_legacy_new ();
  gtk_event_controller_set_propagation_phase (p->seen, GTK_PHASE_CAPTURE);
  g_signal_connect (p->seen, "event", G_CALLBACK (xpointer_count), p);
  gtk_widget_add_controller (p->native, p->seen);
  return TRUE;
}

static void
xpointer_fini (FakePointer *p)
{
  gtk_widget_remove_controller (p->native, p->seen);
}

/* The root coordinates of (x, y) of @widget, and the top-level window
 * that holds that point on the screen. */
static void
xpointer_root_point (FakePointer *p, GtkWidget *widget, double x, double y, int *rx, int *ry,
                     Window *top)
{
  graphene_point_t in = GRAPHENE_POINT_INIT ((float)x, (float)y), out;
  g_assert_true (gtk_widget_compute_point (widget, p->native, &in, &out));
  double sx, sy;
  gtk_native_get_surface_transform (GTK_NATIVE (p->native), &sx, &sy);
  g_assert_true (p->translate (p->display, p->xid, p->root (p->display), (int)round (out.x + sx),
                               (int)round (out.y + sy), rx, ry, top));
}

/* Moves the pointer to (x, y) of @widget, as a mouse would. An event the
 * window does not get is looked into rather than waited out: a window of
 * an earlier test (or its tooltip) still on top of the point is put under
 * this one, and a motion the X server folded away (the pointer already
 * there, or the event lost on a loaded machine) is sent again by way of
 * the next pixel. */
static void
xpointer_move (FakePointer *p, GtkWidget *widget, double x, double y)
{
  int rx, ry;
  Window top;
  xpointer_root_point (p, widget, x, y, &rx, &ry, &top);
  gboolean inside = x >= 0 && y >= 0 && x < gtk_widget_get_width (widget)
                    && y < gtk_widget_get_height (widget);
  if (!inside)
    {
      /* a point outside the window reaches no handler of it */
      p->fake_motion (p->display, -1, rx, ry, 0);
      p->sync (p->display, False);
      app_test_iterate_pending (30);
      return;
    }
  for (int attempt = 0; attempt < 5; attempt++)
    {
      if (top != p->xid)
        {
          g_test_message ("another window (0x%lx) is on top of the point: raising the test's",
                          (unsigned long)top);
          p->raise (p->display, p->xid);
          p->sync (p->display, False);
          app_test_iterate_pending (100);
          xpointer_root_point (p, widget, x, y, &rx, &ry, &top);
        }
      guint before = p->motions;
      if (attempt > 0)
        p->fake_motion (p->display, -1, rx + 1, ry, 0);
      p->fake_motion (p->display, -1, rx, ry, 0);
      p->sync (p->display, False);
      if (xpointer_wait_for (&p->motions, before, 3000))
        return;
      g_test_message ("no motion after 3 s (attempt %d of 5): sending it again", attempt + 1);
    }
  g_test_message ("the pointer's motion to (%.0f, %.0f) never reached the window", x, y);
}

static void
xpointer_button (FakePointer *p, gboolean press)
{
  guint *count = press ? &p->presses : &p->releases;
  guint before = *count;
  p->fake_button (p->display, 1, press, 0);
  p->sync (p->display, False);
  xpointer_wait (count, before, press ? "the button press to reach the window"
                                      : "the button release to reach the window");
}

/* The text of the tooltip @native shows now, NULL when none. */
static char *
shown_tooltip (GtkWidget *native)
{
  for (GtkWidget *c = gtk_widget_get_first_child (native); c; c = gtk_widget_get_next_sibling (c))
    if (g_str_equal (G_OBJECT_TYPE_NAME (c), "GtkTooltipWindow") && gtk_widget_get_mapped (c))
      {
        GtkWidget *w = c;
        while (w != NULL && !GTK_IS_LABEL (w))
          w = gtk_widget_get_first_child (w) ? gtk_widget_get_first_child (w)
                                             : gtk_widget_get_next_sibling (w);
        for (GtkWidget *l = w; l; l = gtk_widget_get_next_sibling (l))
          if (GTK_IS_LABEL (l) && gtk_widget_get_visible (l)
              && *gtk_label_get_text (GTK_LABEL (l)) != '\0')
            return g_strdup (gtk_label_get_text (GTK_LABEL (l)));
      }
  return NULL;
}

typedef struct
{
  GtkWidget *native;
  char *text;
} TooltipWait;

static gboolean
tooltip_shown (gpointer data)
{
  TooltipWait *wait = data;
  g_free (wait->text);
  wait->text = shown_tooltip (wait->native);
  return wait->text != NULL;
}

/* The label column's width follows a real drag of its right edge
 * (pointer events through the timeline's drag gesture), both ways and
 * clamped; a label cut by a narrow column shows its full name in the
 * tooltip when the pointer rests on it. */
static void
test_label_column_drag (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "tracks.json", NULL);
  WickWindow *window = open_window (path);
  GtkWidget *widget = wick_window_get_view (window, "timeline");
  app_test_wait_drawn (widget, 10000, "the timeline to be drawn");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (widget);
  FakePointer p;
  g_autofree char *why = NULL;
  if (!xpointer_init (&p, widget, &why))
    {
      g_test_skip (why);
      app_test_window_close (window);
      return;
    }
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  guint32 device = G_MAXUINT32;
  for (guint i = 0; i < wick_timeline_scene_get_n_tracks (scene); i++)
    if (g_strcmp0 (wick_timeline_scene_get_track_name (scene, wick_timeline_scene_get_track (scene, i)),
                   "cuda:0 stream 7") == 0)
      device = wick_timeline_scene_get_track (scene, i);
  g_assert_cmpuint (device, !=, G_MAXUINT32);
  cairo_rectangle_t r;
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, device, &r));
  double y = r.y + 4;
  int before = wick_timeline_view_get_gutter_width (timeline);
  g_assert_cmpint (before, ==, WICK_TIMELINE_GUTTER_DEFAULT);

  /* drag the edge left by 60 px, in steps as a hand does; a drag whose
   * press or release the window never got (the X server's, not Wick's
   * doing) is made again once */
  for (int attempt = 0; attempt < 2; attempt++)
    {
      guint presses = p.presses, releases = p.releases, motions = p.motions;
      wick_timeline_view_set_gutter_width (timeline, before);
      xpointer_move (&p, widget, before, y);
      xpointer_button (&p, TRUE);
      for (int dx = -10; dx >= -60; dx -= 10)
        xpointer_move (&p, widget, before + dx, y);
      xpointer_button (&p, FALSE);
      g_test_message ("the window got %u presses, %u releases, %u motions of the drag",
                      p.presses - presses, p.releases - releases, p.motions - motions);
      if (p.presses > presses && p.releases > releases)
        break;
    }
  int narrowed = wick_timeline_view_get_gutter_width (timeline);
  g_test_message ("label column %d px, dragged 60 px left: %d px", before, narrowed);
  g_assert_cmpint (ABS (narrowed - (before - 60)), <=, 1);
  /* the drag moved no time: it was the column's, not a pan */
  WickTimelineViewport after;
  wick_timeline_view_get_viewport (timeline, &after);
  g_assert_cmpuint (after.start_ns, ==, view.start_ns);

  /* the pointer rests on the cut label: the tooltip has the full name; a
   * rest whose motions the window never got (CI at 214483e: two cores
   * busy, no tooltip in 5 s) is made again, at most three times */
  TooltipWait wait = { p.native, NULL };
  for (int attempt = 0; attempt < 3 && wait.text == NULL; attempt++)
    {
      guint motions = p.motions;
      xpointer_move (&p, widget, 30 + 2 * attempt, y);
      xpointer_move (&p, widget, 31 + 2 * attempt, y);
      poll_until (tooltip_shown, &wait, 5000);
      g_test_message ("tooltip rest %d: the window got %u motions, tooltip %s", attempt + 1,
                      p.motions - motions, wait.text ? "shown" : "not shown");
    }
  g_assert_nonnull (wait.text);
  g_assert_cmpstr (wait.text, ==, "cuda:0 stream 7");
  g_free (wait.text);

  /* and right, past the maximum: clamped */
  xpointer_move (&p, widget, narrowed, y);
  xpointer_button (&p, TRUE);
  int width = gtk_widget_get_width (widget);
  for (int x = narrowed + 40; x < width - 4; x += 40)
    xpointer_move (&p, widget, x, y);
  xpointer_button (&p, FALSE);
  int widened = wick_timeline_view_get_gutter_width (timeline);
  g_test_message ("dragged right to %d px of the widget: %d px", width - 4, widened);
  g_assert_cmpint (widened, ==, MIN (WICK_TIMELINE_GUTTER_MAX, width - 4));
  /* the plot starts after it */
  wick_timeline_view_get_viewport (timeline, &view);
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, device, &r));
  g_assert_cmpfloat (r.x, ==, widened);
  xpointer_move (&p, widget, width / 2, gtk_widget_get_height (widget) + 40);
  xpointer_fini (&p);
  wick_timeline_view_set_gutter_width (timeline, WICK_TIMELINE_GUTTER_DEFAULT);
  app_test_window_close (window);
}
#endif

typedef struct
{
  GAsyncResult *result;
} AsyncDone;

static void
on_async_done (GObject *source, GAsyncResult *result, gpointer data)
{
  ((AsyncDone *)data)->result = g_object_ref (result);
}

static gboolean
async_done (gpointer data)
{
  return ((AsyncDone *)data)->result != NULL;
}

/* File → Export Trace's way: a finished document is written on a worker
 * thread (the callback comes later, from the main loop), the same output as
 * the synchronous export; a cancelled export leaves no file. */
static void
test_export_trace_async (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "chrome", "hta-event-sync.json.gz", NULL);
  WickWindow *window = open_window (path);
  g_autofree char *before = imported_counts (wick_window_get_document (window));
  g_autofree char *dir = g_dir_make_tmp ("wick-export-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "async.json.gz", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (out);
  AsyncDone done = { NULL };
  g_assert_false (wick_window_get_exporting (window));
  wick_window_export_trace_async (window, file, NULL, on_async_done, &done);
  g_assert_null (done.result);
  APP_TEST_WAIT (async_done, &done, 60000);
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_window_export_trace_finish (window, done.result, &error));
  g_assert_no_error (error);
  g_clear_object (&done.result);
  g_autoptr (WickDocument) again = wick_document_new ();
  g_assert_true (wick_document_load_file_auto (again, out, NULL, NULL, NULL, &error));
  g_autofree char *after = imported_counts (again);
  g_assert_cmpstr (after, ==, before);

  g_autofree char *cancelled_out = g_build_filename (dir, "cancelled.json", NULL);
  g_autoptr (GFile) cancelled_file = g_file_new_for_path (cancelled_out);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  wick_window_export_trace_async (window, cancelled_file, cancellable, on_async_done, &done);
  APP_TEST_WAIT (async_done, &done, 60000);
  g_assert_false (wick_window_export_trace_finish (window, done.result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_object (&done.result);
  g_assert_false (g_file_test (cancelled_out, G_FILE_TEST_EXISTS));
  g_unlink (out);
  g_rmdir (dir);
  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/window/widget-state", test_widget_state);
  g_test_add_func ("/window/pixels", test_timeline_pixels);
  g_test_add_func ("/window/timeline-texture", test_timeline_texture);
  g_test_add_func ("/window/timeline-gutter-node", test_timeline_gutter_node);
  g_test_add_func ("/window/overview-rows-node", test_overview_rows_node);
  g_test_add_func ("/window/zoom-pan-search", test_zoom_pan);
  g_test_add_func ("/window/selection-propagates", test_selection_propagates);
  g_test_add_func ("/window/health-errors-shown", test_health_errors_shown);
  g_test_add_func ("/window/faulty-trace", test_faulty_trace);
  g_test_add_func ("/window/loader-cancel", test_loader_cancel);
  g_test_add_func ("/window/open-while-loading", test_open_while_loading);
  g_test_add_func ("/window/close-while-loading", test_close_while_loading);
  g_test_add_func ("/window/live-follow", test_live_follow);
  g_test_add_func ("/window/tabs-and-narrow", test_tabs_and_narrow);
  g_test_add_func ("/app/window/narrow-every-page", test_narrow_every_page);
  g_test_add_func ("/app/window/narrow-every-page-german", test_narrow_every_page_german);
  g_test_add_func ("/window/track-events", test_track_events);
  g_test_add_func ("/app/window/fit-any-slice", test_fit_any_slice);
  g_test_add_func ("/app/window/label-column", test_label_column);
#ifdef GDK_WINDOWING_X11
  g_test_add_func ("/app/window/label-column-drag", test_label_column_drag);
#endif
  g_test_add_func ("/window/export-trace", test_export_trace);
  g_test_add_func ("/window/export-trace-async", test_export_trace_async);
  g_test_add_func ("/window/size-remembered", test_size_remembered);
  g_test_add_func ("/window/details-booleans", test_details_booleans);
  return app_test_ui_run (app);
}
