/* wick-timeline-overview.c — see wick-timeline-overview.h for the contract. */
#include "wick-timeline-overview.h"
#include "wick-timeline-axis.h"

#include <adwaita.h>
#include <glib/gi18n.h>

struct _WickTimelineOverview
{
  GtkWidget parent_instance;
  WickTimelineView *timeline; /* not owned: a sibling in the same page */
  WickSelection *selection;
  /* The rows, kept while the scene, its tracks, the document's records (the
   * scene draws the document's spans as they are now, a span's end included,
   * before the scene itself is updated), the extent, the size and the style
   * stay: a new visible range draws the veil alone. */
  GskRenderNode *rows;
  WickTimelineScene *rows_scene;
  guint64 rows_stamp, rows_lines, rows_start, rows_end;
  int rows_width, rows_height, rows_gutter;
  gboolean rows_dark;
  gboolean drawing; /* in its snapshot: a scene change there is drawn already */
};

G_DEFINE_FINAL_TYPE (WickTimelineOverview, wick_timeline_overview, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_TIMELINE,
  PROP_SELECTION,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

static gboolean
full_view (WickTimelineOverview *self, WickTimelineViewport *view)
{
  if (self->timeline == NULL || self->selection == NULL)
    return FALSE;
  WickTimelineScene *scene = wick_timeline_view_get_scene (self->timeline);
  if (scene == NULL)
    return FALSE;
  memset (view, 0, sizeof *view);
  wick_timeline_scene_get_extent (scene, &view->start_ns, &view->end_ns);
  view->width = gtk_widget_get_width (GTK_WIDGET (self));
  view->height = gtk_widget_get_height (GTK_WIDGET (self));
  view->dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  view->selected_type = WICK_RECORD_NONE;
  view->selected_index = -1;
  view->hover_x = -1;
  view->no_labels = TRUE;
  return view->width > WICK_TIMELINE_GUTTER && view->height > 4;
}

static void
ensure_rows (WickTimelineOverview *self, WickTimelineScene *scene, const WickTimelineViewport *view)
{
  guint64 stamp = wick_timeline_scene_get_gutter_stamp (scene);
  guint64 lines = wick_document_get_n_lines (wick_timeline_scene_get_document (scene));
  if (self->rows != NULL && self->rows_scene == scene && self->rows_stamp == stamp
      && self->rows_lines == lines && self->rows_start == view->start_ns
      && self->rows_end == view->end_ns && self->rows_width == view->width
      && self->rows_height == view->height && self->rows_gutter == WICK_TIMELINE_GUTTER
      && self->rows_dark == view->dark)
    return;
  g_clear_pointer (&self->rows, gsk_render_node_unref);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cairo_t *cr
    = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, view->width, view->height));
  wick_timeline_scene_draw_overview_rows (scene, cr, view);
  cairo_destroy (cr);
  self->rows = gtk_snapshot_free_to_node (snapshot);
  self->rows_scene = scene;
  self->rows_stamp = stamp;
  self->rows_lines = lines;
  self->rows_start = view->start_ns;
  self->rows_end = view->end_ns;
  self->rows_width = view->width;
  self->rows_height = view->height;
  self->rows_gutter = WICK_TIMELINE_GUTTER;
  self->rows_dark = view->dark;
}

static void
wick_timeline_overview_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  WickTimelineOverview *self = WICK_TIMELINE_OVERVIEW (widget);
  WickTimelineViewport view;
  /* full_view brings the timeline's scene up to date (throttled): this
   * frame draws that, and the scene-changed it gives is not a reason to
   * draw again */
  self->drawing = TRUE;
  gboolean shown = full_view (self, &view);
  self->drawing = FALSE;
  if (!shown)
    return;
  WickTimelineScene *scene = wick_timeline_view_get_scene (self->timeline);
  ensure_rows (self, scene, &view);
  gtk_snapshot_append_node (snapshot, self->rows);
  guint64 start, end;
  wick_selection_get_visible (self->selection, &start, &end);
  cairo_t *cr
    = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, view.width, view.height));
  wick_timeline_scene_draw_overview_band (scene, cr, &view, start, end);
  cairo_destroy (cr);
}

static void
move_to (WickTimelineOverview *self, double x)
{
  WickTimelineViewport view;
  if (!full_view (self, &view))
    return;
  guint64 start, end;
  wick_selection_get_visible (self->selection, &start, &end);
  guint64 width = wick_time_sub (end, start);
  guint64 center = wick_timeline_viewport_x_to_time (&view, MAX (x, WICK_TIMELINE_GUTTER));
  wick_timeline_view_set_follow (self->timeline, FALSE);
  guint64 new_start = wick_time_sub (center, width / 2);
  wick_selection_set_visible (self->selection, new_start, wick_time_add (new_start, width));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, WickTimelineOverview *self)
{
  move_to (self, x);
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, WickTimelineOverview *self)
{
  double x0, y0;
  gtk_gesture_drag_get_start_point (gesture, &x0, &y0);
  move_to (self, x0 + dx);
}

static void
on_selection_changed (WickSelection *selection, guint what, WickTimelineOverview *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_selection (WickTimelineOverview *self, WickSelection *selection)
{
  if (wick_selection_attach (&self->selection, selection, G_CALLBACK (on_selection_changed), self))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION]);
}

static void
wick_timeline_overview_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  WickTimelineOverview *self = WICK_TIMELINE_OVERVIEW (object);
  if (prop_id == PROP_TIMELINE)
    g_value_set_object (value, self->timeline);
  else if (prop_id == PROP_SELECTION)
    g_value_set_object (value, self->selection);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_timeline_overview_set_property (GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  WickTimelineOverview *self = WICK_TIMELINE_OVERVIEW (object);
  if (prop_id == PROP_TIMELINE)
    {
      self->timeline = g_value_get_object (value);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (prop_id == PROP_SELECTION)
    set_selection (self, g_value_get_object (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_timeline_overview_dispose (GObject *object)
{
  WickTimelineOverview *self = WICK_TIMELINE_OVERVIEW (object);
  wick_selection_attach (&self->selection, NULL, NULL, self);
  self->timeline = NULL;
  g_clear_pointer (&self->rows, gsk_render_node_unref);
  self->rows_scene = NULL;
  G_OBJECT_CLASS (wick_timeline_overview_parent_class)->dispose (object);
}

static void
wick_timeline_overview_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                                int *minimum, int *natural, int *minimum_baseline,
                                int *natural_baseline)
{
  *minimum = *natural = orientation == GTK_ORIENTATION_VERTICAL ? 44 : 200;
}

static void
wick_timeline_overview_class_init (WickTimelineOverviewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = wick_timeline_overview_dispose;
  object_class->get_property = wick_timeline_overview_get_property;
  object_class->set_property = wick_timeline_overview_set_property;
  /* Not owned: the timeline is a sibling in the same page. */
  properties[PROP_TIMELINE] = g_param_spec_object ("timeline", NULL, NULL, WICK_TYPE_TIMELINE_VIEW,
                                                   G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTION] = wick_selection_param_spec ();
  g_object_class_install_properties (object_class, N_PROPS, properties);
  GTK_WIDGET_CLASS (klass)->snapshot = wick_timeline_overview_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = wick_timeline_overview_measure;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "wickoverview");
}

static void
wick_timeline_overview_init (WickTimelineOverview *self)
{
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _ ("Overview of the whole trace"), -1);
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), NULL);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);
}

void
wick_timeline_overview_scene_changed (WickTimelineOverview *self)
{
  g_return_if_fail (WICK_IS_TIMELINE_OVERVIEW (self));
  if (!self->drawing)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}
