/* wick-timeline-view.c — see wick-timeline-view.h for the contract. */
#include "wick-timeline-view.h"
#include "wick-timeline-view-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "wick-format.h"
#include "wick-rebuild-throttle.h"
#include "wick-timeline-axis.h"

#define MIN_VISIBLE_NS 200

struct _WickTimelineView
{
  WickPage parent_instance;
  WickSelection *selection; /* the page's (wick_page_get_selection()) */
  WickDocument *document;   /* the one the scene is of */
  WickTimelineScene *scene;
  gboolean scene_dirty;
  double scroll_y;
  double pointer_x, pointer_y;
  double hover_x;
  guint8 *matches;
  guint8 *device_matches; /* per device slice (kernels, copies, annotations) */
  GArray *event_matches;  /* WickEventRef of every match, spans and device slices, by start */
  GArray *match_list; /* guint32 span indices by start */
  gint current_match;
  /* one collective of a job on every rank: the events carrying the args
   * member "wick_collective" (wick-ranks.h's merged trace), by its value;
   * built on the first selection of one */
  GHashTable *collectives;
  GArray *related; /* WickEventRef: the selected one's collective, itself left out */
  WickEventRef related_for;
  WickRebuildThrottle throttle;
  gboolean hide_ops;
  /* Render cache: bumped whenever what is drawn changes besides the viewport. */
  guint generation, cached_generation;
  GskRenderNode *cached;
  WickTimelineViewport cached_view;
  /* The label column: a node of its own, kept while the layout, the tracks'
   * events, the height, the scroll and the style stay, so a frame of a new
   * time range neither draws nor renders it again. */
  GskRenderNode *gutter_node;
  guint gutter_generation;
  guint64 gutter_stamp;
  int gutter_width, gutter_height;
  double gutter_scroll;
  gboolean gutter_dark;
  guint finish_tick; /* a progressive frame left rows to finish */
  gboolean follow;
  gboolean selecting; /* a selection made on the timeline itself is being set */
  gboolean follow_fit; /* following: fit all the data, not the newest width */
  /* A cap on a following view's updates (wick_timeline_view_set_follow_interval):
   * the last applied, and the source that applies the next. */
  gint64 follow_interval_us, follow_applied_us;
  guint follow_source;
  guint64 follow_applied_lines; /* the document's lines and finished state then */
  gboolean follow_applied_finished;
  /* drag */
  guint64 drag_start_ns, drag_end_ns;
  double drag_scroll_y;
  gboolean drag_box;
  gboolean drag_gutter; /* the drag resizes the label column */
  int drag_gutter_width;
  double zoom_begin_width;
  guint64 zoom_begin_start, zoom_begin_end;
};

G_DEFINE_FINAL_TYPE (WickTimelineView, wick_timeline_view, WICK_TYPE_PAGE)

enum
{
  PROP_0,
  PROP_FOLLOW,
  PROP_GUTTER_WIDTH,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

/* "process-toggled" (guint process): a process header was clicked (it was
 * collapsed or expanded), for a page that acts on it (a job's summary row
 * loads its rank). */
static guint process_toggled_signal;

/* "document-applied": a document change was applied (the visible range
 * followed it and the plot was queued for redrawing), at once or, with a
 * follow interval, after coalescing; the window redraws the overview then. */
static guint document_applied_signal;
/* "scene-changed": the scene was updated or made anew (in a frame, after the
 * widgets above the timeline drew theirs from the scene as it was); the
 * window redraws the overview then. */
static guint scene_changed_signal;

static gboolean
is_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

/* A growing document updates the scene in place (the track model appended
 * the new records: wick_timeline_scene_update()) or, when it cannot,
 * rebuilds it; either at most once per four update times
 * (wick-rebuild-throttle.h), so a live session with a large trace keeps its
 * frame rate: the view keeps scrolling (follow mode) and the new spans
 * appear at the next update. */
static void
ensure_scene_throttled (WickTimelineView *self, gboolean force)
{
  if (self->document == NULL || (self->scene != NULL && !self->scene_dirty))
    return;
  if (!wick_rebuild_throttle_begin (&self->throttle, force || self->scene == NULL))
    return;
  if (self->scene == NULL || wick_timeline_scene_get_document (self->scene) != self->document
      || !wick_timeline_scene_update (self->scene))
    {
      WickTimelineScene *scene = wick_timeline_scene_new (self->document);
      wick_timeline_scene_copy_state (scene, self->scene);
      g_clear_pointer (&self->scene, wick_timeline_scene_free);
      self->scene = scene;
    }
  self->scene_dirty = FALSE;
  self->generation++;
  g_clear_pointer (&self->collectives, g_hash_table_unref);
  g_clear_pointer (&self->related, g_array_unref);
  wick_rebuild_throttle_end (&self->throttle);
  g_signal_emit (self, scene_changed_signal, 0);
}

static void
ensure_scene (WickTimelineView *self)
{
  ensure_scene_throttled (self, TRUE);
}

/* The job's collective @event is part of (its args begin with
 * {"wick_collective":N}), else -1. */
static gint64
collective_of (WickTracks *tracks, WickEventRef event)
{
  static const char prefix[] = "{\"wick_collective\":";
  const char *args = wick_tracks_event_args (tracks, event);
  char *end = NULL;
  guint64 v;
  if (args == NULL || strncmp (args, prefix, sizeof prefix - 1) != 0)
    return -1;
  v = g_ascii_strtoull (args + sizeof prefix - 1, &end, 10);
  if (end == args + sizeof prefix - 1 || v > G_MAXUINT32)
    return -1;
  return (gint64)v;
}

static void
add_collective_event (GHashTable *table, gint64 c, WickEventRef ref)
{
  GArray *list = g_hash_table_lookup (table, GSIZE_TO_POINTER ((gsize)c));
  if (list == NULL)
    {
      list = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
      g_hash_table_insert (table, GSIZE_TO_POINTER ((gsize)c), list);
    }
  g_array_append_val (list, ref);
}

/* self->related for the selection in @view: when it is a kernel (or gloo
 * annotation) of a job's collective, that collective's parts on every rank. */
static void
update_related (WickTimelineView *self, const WickTimelineViewport *view)
{
  WickEventRef sel = { WICK_EVENT_NONE, 0 };
  WickTracks *tracks;
  gint64 c;
  GArray *list;

  if (view->selected_event_kind == WICK_EVENT_DEVICE && view->selected_event_index >= 0)
    sel = (WickEventRef){ WICK_EVENT_DEVICE, (guint32)view->selected_event_index };
  else if (view->selected_event_kind == WICK_EVENT_SLICE && view->selected_event_index >= 0)
    sel = (WickEventRef){ WICK_EVENT_SLICE, (guint32)view->selected_event_index };
  else if (view->selected_event_kind == WICK_EVENT_NONE && view->selected_type == WICK_RECORD_SPAN
           && view->selected_index >= 0)
    sel = (WickEventRef){ WICK_EVENT_SLICE, (guint32)view->selected_index };
  if (self->related != NULL && sel.kind == self->related_for.kind
      && sel.index == self->related_for.index)
    return;
  g_clear_pointer (&self->related, g_array_unref);
  self->related_for = sel;
  if (sel.kind == WICK_EVENT_NONE || self->scene == NULL)
    return;
  tracks = wick_timeline_scene_get_tracks (self->scene);
  self->related = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
  if ((c = collective_of (tracks, sel)) < 0)
    return;
  if (self->collectives == NULL)
    {
      guint nd, ns;
      wick_tracks_get_device_slices (tracks, &nd);
      wick_document_get_spans (self->document, &ns);
      self->collectives
        = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify)g_array_unref);
      for (guint i = 0; i < nd; i++)
        {
          WickEventRef ref = { WICK_EVENT_DEVICE, i };
          gint64 k = collective_of (tracks, ref);
          if (k >= 0)
            add_collective_event (self->collectives, k, ref);
        }
      for (guint i = 0; i < ns; i++)
        {
          WickEventRef ref = { WICK_EVENT_SLICE, i };
          gint64 k = collective_of (tracks, ref);
          if (k >= 0)
            add_collective_event (self->collectives, k, ref);
        }
    }
  list = g_hash_table_lookup (self->collectives, GSIZE_TO_POINTER ((gsize)c));
  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      WickEventRef ref = g_array_index (list, WickEventRef, i);
      if (ref.kind != sel.kind || ref.index != sel.index)
        g_array_append_val (self->related, ref);
    }
}

void
wick_timeline_view_get_viewport (WickTimelineView *self, WickTimelineViewport *out)
{
  memset (out, 0, sizeof *out);
  wick_selection_get_visible (self->selection, &out->start_ns, &out->end_ns);
  wick_selection_get_range (self->selection, &out->range_start, &out->range_end);
  out->selected_type = wick_selection_get_record (self->selection, &out->selected_index);
  out->selected_event_kind = wick_selection_get_event (self->selection, &out->selected_event_index);
  out->width = MAX (gtk_widget_get_width (GTK_WIDGET (self)), WICK_TIMELINE_GUTTER + 10);
  out->height = MAX (gtk_widget_get_height (GTK_WIDGET (self)), 50);
  out->scroll_y = self->scroll_y;
  out->dark = is_dark ();
  out->matches = self->matches;
  out->device_matches = self->device_matches;
  out->match_list
    = self->match_list ? (const guint32 *)(gconstpointer)self->match_list->data : NULL;
  out->n_match_list = self->match_list ? self->match_list->len : 0;
  out->legend = TRUE;
  out->hover_x = self->hover_x;
  out->hide_ops = self->hide_ops;
  update_related (self, out);
  if (self->related != NULL && self->related->len > 0)
    {
      out->related = (const WickEventRef *)(void *)self->related->data;
      out->n_related = self->related->len;
    }
}

WickTimelineScene *
wick_timeline_view_get_scene (WickTimelineView *self)
{
  ensure_scene_throttled (self, self->scene == NULL);
  return self->scene;
}

/* Times as doubles here: a view may reach past either end of the trace by a
 * margin, and the trace itself may lie anywhere in [0, 2^64) ns. */
static void
set_visible_clamped (WickTimelineView *self, double start, double end)
{
  guint64 extent_start, extent_end;
  if (self->scene == NULL)
    return;
  wick_timeline_scene_get_extent (self->scene, &extent_start, &extent_end);
  double full = (double)(extent_end - extent_start);
  double margin = full / 20 + 1;
  double width = MAX (end - start, MIN_VISIBLE_NS);
  width = MIN (width, full + 2 * margin);
  double lo = (double)extent_start - margin, hi = (double)extent_end + margin;
  if (start < lo)
    start = lo;
  if (start + width > hi)
    start = hi - width;
  start = MAX (start, 0);
  guint64 first = wick_time_from_double (start);
  wick_selection_set_visible (
    self->selection, first, MAX (wick_time_from_double (start + width), wick_time_add (first, 1)));
}

void
wick_timeline_view_zoom_to_fit (WickTimelineView *self)
{
  ensure_scene (self);
  if (self->scene == NULL)
    return;
  guint64 start, end;
  wick_timeline_scene_get_extent (self->scene, &start, &end);
  guint64 pad = (end - start) / 50;
  wick_selection_set_visible (self->selection, wick_time_sub (start, pad),
                              wick_time_add (end, pad));
}

static void
leave_follow (WickTimelineView *self)
{
  if (self->follow)
    wick_timeline_view_set_follow (self, FALSE);
}

static double
plot_width (WickTimelineView *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - WICK_TIMELINE_GUTTER, 1);
}

void
wick_timeline_view_zoom (WickTimelineView *self, double factor, double anchor_x)
{
  guint64 start, end;
  ensure_scene (self);
  wick_selection_get_visible (self->selection, &start, &end);
  double frac = CLAMP ((anchor_x - WICK_TIMELINE_GUTTER) / plot_width (self), 0, 1);
  double width = (double)wick_time_sub (end, start);
  double anchor = (double)start + frac * width;
  double new_width = MAX (width * factor, MIN_VISIBLE_NS);
  leave_follow (self);
  set_visible_clamped (self, anchor - frac * new_width, anchor - frac * new_width + new_width);
}

void
wick_timeline_view_pan (WickTimelineView *self, double dx)
{
  guint64 start, end;
  ensure_scene (self);
  wick_selection_get_visible (self->selection, &start, &end);
  double ns = dx * (double)wick_time_sub (end, start) / plot_width (self);
  leave_follow (self);
  set_visible_clamped (self, (double)start + ns, (double)end + ns);
}

static void
scroll_tracks (WickTimelineView *self, double dy)
{
  int content = self->scene ? wick_timeline_scene_get_content_height (self->scene) : 0;
  double max = MAX (content - gtk_widget_get_height (GTK_WIDGET (self)), 0);
  self->scroll_y = CLAMP (self->scroll_y + dy, 0, max);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
same_view (const WickTimelineViewport *a, const WickTimelineViewport *b)
{
  return a->start_ns == b->start_ns && a->end_ns == b->end_ns && a->width == b->width
         && a->height == b->height && a->scroll_y == b->scroll_y && a->dark == b->dark
         && a->selected_type == b->selected_type && a->selected_index == b->selected_index
         && a->range_start == b->range_start && a->range_end == b->range_end
         && a->matches == b->matches && a->hide_ops == b->hide_ops
         && a->selected_event_kind == b->selected_event_kind
         && a->selected_event_index == b->selected_event_index && a->n_match_list == b->n_match_list
         && a->device_matches == b->device_matches && a->match_list == b->match_list
         && a->related == b->related && a->n_related == b->n_related;
}

static gboolean
finish_rows (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  WICK_TIMELINE_VIEW (widget)->finish_tick = 0;
  gtk_widget_queue_draw (widget);
  return G_SOURCE_REMOVE;
}

/* The scene as GTK's cairo node (a recording its renderer replays). Drawn
 * into an image of the widget's own and painted into the node, the hover
 * frames were cheaper but scrolled and new-range frames 1.5-6 ms dearer on
 * GTK 4.8's cairo renderer (one more full composite a frame), and a
 * GdkMemoryTexture of that image 5-7 ms dearer still (docs/performance.md,
 * "frame22c"). */
static GskRenderNode *
scene_node (WickTimelineView *self, const WickTimelineViewport *view)
{
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (0, 0, view->width, view->height);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);
  wick_timeline_scene_draw (self->scene, cr, view);
  cairo_destroy (cr);
  return gtk_snapshot_free_to_node (snapshot);
}

/* The pointer's time line and labels as a node of their own extent: a
 * pointer move damages those columns, not the whole plot. */
static void
append_hover (WickTimelineView *self, GtkSnapshot *snapshot, const WickTimelineViewport *view)
{
  cairo_surface_t *recording = cairo_recording_surface_create (CAIRO_CONTENT_COLOR_ALPHA, NULL);
  cairo_t *rc = cairo_create (recording);
  wick_timeline_scene_draw_hover (self->scene, rc, view);
  cairo_destroy (rc);
  double x, y, w, h;
  cairo_recording_surface_ink_extents (recording, &x, &y, &w, &h);
  /* whole pixels around the ink, within the widget */
  double x0 = MAX (floor (x) - 1, 0), y0 = MAX (floor (y) - 1, 0);
  double x1 = MIN (ceil (x + w) + 1, view->width), y1 = MIN (ceil (y + h) + 1, view->height);
  if (w > 0 && h > 0 && x1 > x0 && y1 > y0)
    {
      graphene_rect_t bounds = GRAPHENE_RECT_INIT (x0, y0, x1 - x0, y1 - y0);
      cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);
      cairo_set_source_surface (cr, recording, 0, 0);
      cairo_paint (cr);
      cairo_destroy (cr);
    }
  cairo_surface_destroy (recording);
}

/* The label column as its own node (bounds: the column), drawn afresh only
 * when what it shows may have changed. */
static void
ensure_gutter_node (WickTimelineView *self, const WickTimelineViewport *view)
{
  guint64 stamp = wick_timeline_scene_get_gutter_stamp (self->scene);
  if (self->gutter_node != NULL && self->gutter_generation == self->generation
      && self->gutter_stamp == stamp && self->gutter_width == WICK_TIMELINE_GUTTER
      && self->gutter_height == view->height && self->gutter_scroll == view->scroll_y
      && self->gutter_dark == view->dark)
    return;
  g_clear_pointer (&self->gutter_node, gsk_render_node_unref);
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (0, 0, WICK_TIMELINE_GUTTER, view->height);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);
  wick_timeline_scene_draw_gutter (self->scene, cr, view);
  cairo_destroy (cr);
  self->gutter_node = gtk_snapshot_free_to_node (snapshot);
  self->gutter_generation = self->generation;
  self->gutter_stamp = stamp;
  self->gutter_width = WICK_TIMELINE_GUTTER;
  self->gutter_height = view->height;
  self->gutter_scroll = view->scroll_y;
  self->gutter_dark = view->dark;
}

/* The scene without the hover line is cached as a render node, so moving the
 * pointer repaints only the line and the time in the ruler: their node is
 * as wide as they are, so GTK redraws those columns alone (a node as large
 * as the widget made every pointer move replay the whole plot). The label
 * column is a node of its own over the plot's, which is clipped to the
 * right of it: a new time range damages the plot alone, and GTK neither
 * replays nor redraws the labels. */
static void
wick_timeline_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  ensure_scene_throttled (self, FALSE);
  if (self->scene == NULL || self->selection == NULL || width <= WICK_TIMELINE_GUTTER
      || height <= 0)
    return;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  if (view.end_ns <= wick_time_add (view.start_ns, 1))
    return;
  if (self->cached == NULL || self->cached_generation != self->generation
      || !same_view (&view, &self->cached_view))
    {
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      WickTimelineViewport without_hover = view;
      without_hover.hover_x = -1;
      without_hover.progressive = TRUE;
      without_hover.no_gutter = TRUE;
      self->cached = scene_node (self, &without_hover);
      self->cached_view = view;
      self->cached_generation = self->generation;
      if (!wick_timeline_scene_get_complete (self->scene))
        {
          /* rows were sketched to keep the frame short: the next frame
           * finishes them */
          self->cached_generation = self->generation - 1;
          if (self->finish_tick == 0)
            self->finish_tick = gtk_widget_add_tick_callback (widget, finish_rows, NULL, NULL);
        }
    }
  ensure_gutter_node (self, &view);
  if (self->cached)
    {
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (WICK_TIMELINE_GUTTER, 0,
                                                             width - WICK_TIMELINE_GUTTER, height));
      gtk_snapshot_append_node (snapshot, self->cached);
      gtk_snapshot_pop (snapshot);
    }
  if (self->gutter_node)
    gtk_snapshot_append_node (snapshot, self->gutter_node);
  if (view.hover_x >= WICK_TIMELINE_GUTTER)
    append_hover (self, snapshot, &view);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller, double dx, double dy, WickTimelineView *self)
{
  GdkModifierType state
    = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  if (state & GDK_CONTROL_MASK)
    {
      wick_timeline_view_zoom (self, pow (1.15, dy), self->pointer_x);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK)
    {
      wick_timeline_view_pan (self, (dy + dx) * 40);
      return TRUE;
    }
  if (dx != 0)
    wick_timeline_view_pan (self, dx * 40);
  if (dy != 0)
    {
      int content = self->scene ? wick_timeline_scene_get_content_height (self->scene) : 0;
      if (content > gtk_widget_get_height (GTK_WIDGET (self)))
        scroll_tracks (self, dy * 30);
      else
        wick_timeline_view_pan (self, dy * 40);
    }
  return TRUE;
}

/* Within a few pixels of the label column's right edge: a drag there
 * resizes it. */
static gboolean
near_gutter_edge (double x)
{
  return fabs (x - WICK_TIMELINE_GUTTER) <= 4;
}

void
wick_timeline_view_set_gutter_width (WickTimelineView *self, int width)
{
  width = CLAMP (width, WICK_TIMELINE_GUTTER_MIN, WICK_TIMELINE_GUTTER_MAX);
  if (width == wick_timeline_gutter_width)
    return;
  wick_timeline_gutter_width = width;
  self->generation++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GUTTER_WIDTH]);
}

int
wick_timeline_view_get_gutter_width (WickTimelineView *self)
{
  return wick_timeline_gutter_width;
}

static void
on_motion (GtkEventControllerMotion *controller, double x, double y, WickTimelineView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->hover_x = x;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self),
                                   near_gutter_edge (x) || self->drag_gutter ? "col-resize" : NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *controller, WickTimelineView *self)
{
  self->hover_x = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, WickTimelineView *self)
{
  GdkModifierType state
    = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  wick_selection_get_visible (self->selection, &self->drag_start_ns, &self->drag_end_ns);
  self->drag_scroll_y = self->scroll_y;
  self->drag_box = (state & GDK_SHIFT_MASK) != 0;
  self->drag_gutter = !self->drag_box && near_gutter_edge (x);
  self->drag_gutter_width = WICK_TIMELINE_GUTTER;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static guint64
time_at (WickTimelineView *self, guint64 start, guint64 end, double x)
{
  WickTimelineViewport view
    = { .start_ns = start, .end_ns = end, .width = gtk_widget_get_width (GTK_WIDGET (self)) };
  return wick_timeline_viewport_x_to_time (&view, x);
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, WickTimelineView *self)
{
  double x0, y0;
  gtk_gesture_drag_get_start_point (gesture, &x0, &y0);
  if (self->drag_gutter)
    {
      wick_timeline_view_set_gutter_width (self, self->drag_gutter_width + (int)round (dx));
      return;
    }
  if (self->drag_box)
    {
      guint64 a
        = time_at (self, self->drag_start_ns, self->drag_end_ns, MAX (x0, WICK_TIMELINE_GUTTER));
      guint64 b = time_at (self, self->drag_start_ns, self->drag_end_ns,
                           MAX (x0 + dx, WICK_TIMELINE_GUTTER));
      wick_selection_set_range (self->selection, MIN (a, b), MAX (a, b));
      return;
    }
  if (fabs (dx) < 3 && fabs (dy) < 3)
    return;
  double ns
    = dx * (double)wick_time_sub (self->drag_end_ns, self->drag_start_ns) / plot_width (self);
  leave_follow (self);
  set_visible_clamped (self, (double)self->drag_start_ns - ns, (double)self->drag_end_ns - ns);
  int content = self->scene ? wick_timeline_scene_get_content_height (self->scene) : 0;
  double max = MAX (content - gtk_widget_get_height (GTK_WIDGET (self)), 0);
  self->scroll_y = CLAMP (self->drag_scroll_y - dy, 0, max);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, WickTimelineView *self)
{
  if (self->drag_gutter)
    {
      self->drag_gutter = FALSE;
      return;
    }
  if (fabs (dx) >= 3 || fabs (dy) >= 3 || self->scene == NULL)
    return;
  double x0, y0;
  gtk_gesture_drag_get_start_point (gesture, &x0, &y0);
  wick_timeline_view_click (self, x0, y0);
}

static void
select_event (WickTimelineView *self, WickEventRef event)
{
  WickTracks *tracks = wick_timeline_scene_get_tracks (self->scene);
  WickRecordType type = WICK_RECORD_NONE;
  gint64 index = -1;
  if (event.kind == WICK_EVENT_SLICE)
    {
      type = WICK_RECORD_SPAN;
      index = event.index;
    }
  else if (event.kind == WICK_EVENT_DEVICE)
    {
      const WickDeviceSlice *d = &wick_tracks_get_device_slices (tracks, NULL)[event.index];
      if (d->source >= 0)
        {
          type = WICK_RECORD_DEVICE_INTERVAL;
          index = d->source;
        }
    }
  self->selecting = TRUE;
  wick_selection_set_record_event (self->selection, type, index, event.kind,
                                   event.kind == WICK_EVENT_NONE ? -1 : (gint64)event.index);
  self->selecting = FALSE;
}

gboolean
wick_timeline_view_is_selecting (WickTimelineView *self)
{
  return self->selecting;
}

gboolean
wick_timeline_view_click (WickTimelineView *self, double x, double y)
{
  if (self->scene == NULL)
    return FALSE;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  guint32 what;
  switch (wick_timeline_scene_hit_gutter (self->scene, &view, x, y, &what))
    {
      case WICK_TIMELINE_GUTTER_PROCESS:
        wick_timeline_scene_set_collapsed (self->scene, what,
                                           !wick_timeline_scene_get_collapsed (self->scene, what));
        self->generation++;
        scroll_tracks (self, 0);
        g_signal_emit (self, process_toggled_signal, 0, what);
        return TRUE;
      case WICK_TIMELINE_GUTTER_PIN:
        wick_timeline_scene_set_pinned (self->scene, what,
                                        !wick_timeline_scene_get_pinned (self->scene, what));
        self->generation++;
        scroll_tracks (self, 0);
        return TRUE;
      case WICK_TIMELINE_GUTTER_EXPANDER:
        wick_timeline_scene_set_track_collapsed (
          self->scene, what, !wick_timeline_scene_get_track_collapsed (self->scene, what));
        self->generation++;
        scroll_tracks (self, 0);
        return TRUE;
      default:
        break;
    }
  gint64 index;
  WickRecordType type = wick_timeline_scene_hit (self->scene, &view, x, y, &index);
  if (type == WICK_RECORD_EXTENSION)
    {
      self->selecting = TRUE;
      wick_selection_set_record (self->selection, type, index);
      self->selecting = FALSE;
      return TRUE;
    }
  WickEventRef event;
  if (wick_timeline_scene_hit_event (self->scene, &view, x, y, &event))
    {
      select_event (self, event);
      return TRUE;
    }
  wick_selection_set_record (self->selection, WICK_RECORD_NONE, -1);
  if (!self->drag_box)
    wick_selection_set_range (self->selection, 0, 0);
  return FALSE;
}

/* Makes @event visible: its process expanded, its track scrolled into view
 * and its time inside the visible range. */
static void
reveal_event (WickTimelineView *self, WickEventRef event)
{
  WickTracks *tracks = wick_timeline_scene_get_tracks (self->scene);
  guint32 track = wick_tracks_event_track (tracks, event);
  const WickTrack *tr = &wick_tracks_get_tracks (tracks, NULL)[track];
  if (tr->process >= 0 && wick_timeline_scene_get_collapsed (self->scene, tr->process))
    {
      wick_timeline_scene_set_collapsed (self->scene, tr->process, FALSE);
      self->generation++;
    }
  if (wick_timeline_scene_get_track_collapsed (self->scene, track))
    {
      wick_timeline_scene_set_track_collapsed (self->scene, track, FALSE);
      self->generation++;
    }
  guint64 start, end, vs, ve;
  wick_timeline_scene_event_extent (self->scene, event, &start, &end);
  wick_selection_get_visible (self->selection, &vs, &ve);
  if (end < vs || start > ve)
    {
      double width = (double)wick_time_sub (ve, vs);
      double centre = (double)start + (double)wick_time_sub (end, start) / 2;
      leave_follow (self);
      set_visible_clamped (self, centre - width / 2, centre + width / 2);
    }
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  cairo_rectangle_t r;
  view.scroll_y = 0;
  if (!wick_timeline_scene_get_pinned (self->scene, track)
      && wick_timeline_scene_event_rect (self->scene, &view, event, &r))
    {
      double height = gtk_widget_get_height (GTK_WIDGET (self));
      double y = r.y; /* content y with no scroll */
      if (y - self->scroll_y > height - WICK_TIMELINE_ROW || y - self->scroll_y < 80)
        scroll_tracks (self, y - self->scroll_y - height / 2);
    }
}

gboolean
wick_timeline_view_follow_flow (WickTimelineView *self, int direction)
{
  if (self->scene == NULL)
    return FALSE;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  WickEventRef event = { view.selected_event_kind, (guint32)MAX (view.selected_event_index, 0) };
  if (view.selected_event_kind == WICK_EVENT_NONE
      || view.selected_event_kind == WICK_TIMELINE_EVENT_FLOW)
    return FALSE;
  WickEventRef next;
  if (!wick_timeline_scene_follow_flow (self->scene, event, direction, &next))
    return FALSE;
  select_event (self, next);
  reveal_event (self, next);
  return TRUE;
}

/* Zooms to a slice of any kind (a span, an async slice, a GPU kernel or
 * other device interval), a tenth of its width either side. */
static gboolean
fit_event (WickTimelineView *self, WickEventRef event)
{
  if (event.kind != WICK_EVENT_SLICE && event.kind != WICK_EVENT_ASYNC
      && event.kind != WICK_EVENT_DEVICE)
    return FALSE;
  guint64 start, end;
  wick_timeline_scene_event_extent (self->scene, event, &start, &end);
  double width = MAX ((double)wick_time_sub (end, start), MIN_VISIBLE_NS);
  double margin = floor (width / 10);
  leave_follow (self);
  set_visible_clamped (self, (double)start - margin, (double)start + width + margin);
  return TRUE;
}

static gboolean focus_selected_span (WickTimelineView *self, gboolean mark);

gboolean
wick_timeline_view_fit_selected (WickTimelineView *self)
{
  return focus_selected_span (self, FALSE);
}

void
wick_timeline_view_double_click (WickTimelineView *self, double x, double y)
{
  if (self->scene == NULL)
    return;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  WickEventRef event;
  if (!wick_timeline_scene_hit_event (self->scene, &view, x, y, &event))
    return;
  if (event.kind == WICK_EVENT_SLICE)
    {
      wick_timeline_view_zoom_to_span (self, event.index);
      return;
    }
  if (fit_event (self, event))
    select_event (self, event);
}

static void
on_click_pressed (GtkGestureClick *gesture, int n_press, double x, double y, WickTimelineView *self)
{
  if (n_press == 2)
    wick_timeline_view_double_click (self, x, y);
}

static void
on_zoom_begin (GtkGesture *gesture, GdkEventSequence *sequence, WickTimelineView *self)
{
  wick_selection_get_visible (self->selection, &self->zoom_begin_start, &self->zoom_begin_end);
}

static void
on_zoom_scale (GtkGestureZoom *gesture, double scale, WickTimelineView *self)
{
  double cx, cy;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &cx, &cy))
    cx = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
  wick_selection_set_visible (self->selection, self->zoom_begin_start, self->zoom_begin_end);
  wick_timeline_view_zoom (self, 1.0 / MAX (scale, 0.01), cx);
}

static gboolean
focus_selected_span (WickTimelineView *self, gboolean mark)
{
  gint64 index;
  if (self->document == NULL)
    return FALSE;
  if (wick_selection_get_record (self->selection, &index) != WICK_RECORD_SPAN)
    {
      /* an async slice or a device interval selected on the timeline */
      guint kind = wick_selection_get_event (self->selection, &index);
      ensure_scene (self);
      WickEventRef event = { kind, (guint32)MAX (index, 0) };
      if (self->scene == NULL || index < 0
          || (kind != WICK_EVENT_ASYNC && kind != WICK_EVENT_DEVICE))
        return FALSE;
      if (!mark)
        return fit_event (self, event);
      guint64 start, end;
      wick_timeline_scene_event_extent (self->scene, event, &start, &end);
      wick_selection_set_range (self->selection, start, end);
      return TRUE;
    }
  if (!mark)
    {
      wick_timeline_view_zoom_to_span (self, index);
      return TRUE;
    }
  ensure_scene (self);
  const WickSpan *span = &wick_document_get_spans (self->document, NULL)[index];
  WickEventRef ref = { WICK_EVENT_SLICE, (guint32)index };
  wick_selection_set_range (
    self->selection, span->start_ns,
    wick_tracks_event_end (wick_timeline_scene_get_tracks (self->scene), ref));
  return TRUE;
}

static gboolean
pin_selected_track (WickTimelineView *self)
{
  gint64 index;
  guint kind = wick_selection_get_event (self->selection, &index);
  if (self->scene == NULL || kind == WICK_EVENT_NONE || kind == WICK_TIMELINE_EVENT_FLOW)
    return FALSE;
  WickEventRef event = { kind, (guint32)index };
  guint32 track = wick_tracks_event_track (wick_timeline_scene_get_tracks (self->scene), event);
  wick_timeline_scene_set_pinned (self->scene, track,
                                  !wick_timeline_scene_get_pinned (self->scene, track));
  self->generation++;
  scroll_tracks (self, 0);
  return TRUE;
}

void
wick_timeline_view_set_all_collapsed (WickTimelineView *self, gboolean collapsed)
{
  if (self->scene == NULL)
    return;
  wick_timeline_scene_set_all_collapsed (self->scene, collapsed);
  self->generation++;
  scroll_tracks (self, 0);
}

/* Collapses or expands the group at widget y @y (a collapsible track, else
 * its process; a process header), else the selected event's track (or its
 * process): the `c` key. FALSE when there is none. */
static gboolean
wick_timeline_view_toggle_collapsed (WickTimelineView *self, double x, double y)
{
  if (self->scene == NULL)
    return FALSE;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  WickTracks *tracks = wick_timeline_scene_get_tracks (self->scene);
  guint32 what;
  WickTimelineGutterHit hit = wick_timeline_scene_hit_gutter (self->scene, &view,
                                                              WICK_TIMELINE_GUTTER / 2.0, y, &what);
  gint64 index;
  guint kind = wick_selection_get_event (self->selection, &index);
  if (hit == WICK_TIMELINE_GUTTER_NONE && kind != WICK_EVENT_NONE
      && kind != WICK_TIMELINE_EVENT_FLOW)
    {
      /* not over a track: the selected event's track, else its process */
      WickEventRef event = { kind, (guint32)index };
      what = wick_tracks_event_track (tracks, event);
      hit = WICK_TIMELINE_GUTTER_TRACK;
    }
  if (hit == WICK_TIMELINE_GUTTER_PIN || hit == WICK_TIMELINE_GUTTER_EXPANDER)
    hit = WICK_TIMELINE_GUTTER_TRACK;
  if (hit == WICK_TIMELINE_GUTTER_TRACK && !wick_timeline_scene_get_track_collapsible (self->scene, what))
    {
      gint32 process = wick_tracks_get_tracks (tracks, NULL)[what].process;
      if (process < 0)
        return FALSE;
      what = (guint32)process;
      hit = WICK_TIMELINE_GUTTER_PROCESS;
    }
  if (hit == WICK_TIMELINE_GUTTER_PROCESS)
    wick_timeline_scene_set_collapsed (self->scene, what,
                                       !wick_timeline_scene_get_collapsed (self->scene, what));
  else if (hit == WICK_TIMELINE_GUTTER_TRACK)
    wick_timeline_scene_set_track_collapsed (
      self->scene, what, !wick_timeline_scene_get_track_collapsed (self->scene, what));
  else
    return FALSE;
  self->generation++;
  scroll_tracks (self, 0);
  return TRUE;
}

static gboolean
on_key (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state,
        WickTimelineView *self)
{
  double center = WICK_TIMELINE_GUTTER + plot_width (self) / 2;
  double anchor = self->hover_x >= WICK_TIMELINE_GUTTER ? self->hover_x : center;
  if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE;
  switch (keyval)
    {
      case GDK_KEY_plus:
      case GDK_KEY_equal:
      case GDK_KEY_KP_Add:
      case GDK_KEY_w:
        wick_timeline_view_zoom (self, 0.7, anchor);
        return TRUE;
      case GDK_KEY_minus:
      case GDK_KEY_KP_Subtract:
      case GDK_KEY_s:
        wick_timeline_view_zoom (self, 1 / 0.7, anchor);
        return TRUE;
      case GDK_KEY_0:
      case GDK_KEY_KP_0:
        leave_follow (self);
        wick_timeline_view_zoom_to_fit (self);
        return TRUE;
      case GDK_KEY_a:
      case GDK_KEY_Left:
        wick_timeline_view_pan (self, -plot_width (self) / 8);
        return TRUE;
      case GDK_KEY_d:
      case GDK_KEY_Right:
        wick_timeline_view_pan (self, plot_width (self) / 8);
        return TRUE;
      case GDK_KEY_Up:
        scroll_tracks (self, -WICK_TIMELINE_ROW);
        return TRUE;
      case GDK_KEY_Down:
        scroll_tracks (self, WICK_TIMELINE_ROW);
        return TRUE;
      case GDK_KEY_Escape:
        wick_selection_set_range (self->selection, 0, 0);
        return TRUE;
      case GDK_KEY_f:
        /* Perfetto's keys: f fits the selected span, m marks its extent. */
        return focus_selected_span (self, FALSE);
      case GDK_KEY_m:
        return focus_selected_span (self, TRUE);
      case GDK_KEY_bracketright:
        /* Along the selected event's flows: ] to where it leads, [ back. */
        return wick_timeline_view_follow_flow (self, 1);
      case GDK_KEY_bracketleft:
        return wick_timeline_view_follow_flow (self, -1);
      case GDK_KEY_p:
        return pin_selected_track (self);
      case GDK_KEY_C:
        wick_timeline_view_set_all_collapsed (self, TRUE);
        return self->scene != NULL;
      case GDK_KEY_E:
        wick_timeline_view_set_all_collapsed (self, FALSE);
        return self->scene != NULL;
      case GDK_KEY_c:
        /* the group under the pointer, else the selected event's */
        return wick_timeline_view_toggle_collapsed (self, self->hover_x,
                                                    self->hover_x >= 0 ? self->pointer_y : -1);
      default:
        return FALSE;
    }
}

/* A profiler trace's kernel, copy, fill or annotation: what it is, where,
 * how long, its launch, and for a graph kernel its graph, replay, node and
 * Wick stage. */
static char *
device_tooltip (WickTimelineView *self, const WickTimelineViewport *view, double x, double y)
{
  WickEventRef event;
  if (!wick_timeline_scene_hit_event (self->scene, view, x, y, &event)
      || event.kind != WICK_EVENT_DEVICE)
    return NULL;
  WickTracks *tracks = wick_timeline_scene_get_tracks (self->scene);
  const WickDeviceSlice *d = &wick_tracks_get_device_slices (tracks, NULL)[event.index];
  WickDocument *doc = self->document;
  const char *raw = wick_document_str (doc, d->name);
  g_autofree char *name = g_markup_escape_text (raw ? raw : "", MIN (strlen (raw ? raw : ""), 300));
  g_autofree char *dur = wick_format_duration (d->duration_ns);
  const char *kind = d->kind == WICK_DEVICE_KERNEL    ? (wick_gpu_is_triton_kernel (raw) ? _ ("Triton kernel") : _ ("kernel"))
                     : d->kind == WICK_DEVICE_MEMCPY  ? _ ("memcpy")
                     : d->kind == WICK_DEVICE_MEMSET  ? _ ("memset")
                     : d->kind == WICK_DEVICE_ANNOTATION ? _ ("annotation")
                                                      : _ ("device interval");
  GString *text = g_string_new (NULL);
  g_string_append_printf (text, "<b>%s</b>\n%s · %s · %s", name, kind,
                          wick_timeline_scene_get_track_name (self->scene, d->track), dur);
  if (wick_gpu_compiled_kind (raw) != WICK_COMPILED_NONE)
    g_string_append_printf (text, " · %s", _ ("compiled region"));
  if (d->launcher != G_MAXUINT32)
    {
      const WickSpan *span = &wick_document_get_spans (doc, NULL)[d->launcher];
      g_autofree char *launch = g_markup_escape_text (wick_document_str (doc, span->name), -1);
      g_string_append_printf (text, "\n%s %s", _ ("launched by"), launch);
    }
  WickGpuGraphNode node;
  if (wick_gpu_graphs_node (wick_timeline_scene_get_graphs (self->scene), event.index, &node))
    {
      const WickGpuGraph *graph
        = &wick_gpu_graphs_get (wick_timeline_scene_get_graphs (self->scene), NULL)[node.graph];
      /* Translators: a CUDA graph's kernel: "graph 1 · replay 3 of 10 · node 5 of 33" */
      g_string_append_printf (text, "\n%s %u · %s %u/%u · %s %u/%u", _ ("graph"), node.graph + 1,
                              _ ("replay"), node.replay + 1, graph->n_replays, _ ("node"),
                              node.node + 1, graph->n_nodes);
      if (graph->stage)
        {
          g_autofree char *stage = g_markup_escape_text (graph->stage, -1);
          g_string_append_printf (text, " · %s %s", _ ("Wick stage"), stage);
        }
    }
  return g_string_free (text, FALSE);
}

char *
wick_timeline_view_label_at (WickTimelineView *self, double x, double y)
{
  if (self->scene == NULL || x < 0 || x >= WICK_TIMELINE_GUTTER)
    return NULL;
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  for (guint i = 0; i < wick_timeline_scene_get_n_tracks (self->scene); i++)
    {
      guint32 track = wick_timeline_scene_get_track (self->scene, i);
      cairo_rectangle_t r;
      if (wick_timeline_scene_track_rect (self->scene, &view, track, &r) && y >= r.y
          && y < r.y + r.height)
        return g_strdup (wick_timeline_scene_get_track_name (self->scene, track));
    }
  return NULL;
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  WickTimelineView *self)
{
  if (self->scene == NULL || keyboard)
    return FALSE;
  /* a track's label, cut to the gutter, in full */
  g_autofree char *label = wick_timeline_view_label_at (self, x, y);
  if (label != NULL)
    {
      gtk_tooltip_set_text (tooltip, label);
      return TRUE;
    }
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (self, &view);
  gint64 index;
  WickRecordType type = wick_timeline_scene_hit (self->scene, &view, x, y, &index);
  WickDocument *doc = self->document;
  g_autofree char *markup = NULL;
  static const char *kinds[] = { "function", "op", "module" };
  static const char *steps[] = { "—", "forward", "backward", "optimizer" };
  if (type == WICK_RECORD_SPAN)
    {
      const WickSpan *span = &wick_document_get_spans (doc, NULL)[index];
      g_autofree char *dur = (span->flags & WICK_SPAN_FLAG_CLOSED)
                               ? wick_format_duration (span->duration_ns)
                               : g_strdup (_ ("open"));
      g_autofree char *name = g_markup_escape_text (wick_document_str (doc, span->name), -1);
      guint64 origin;
      guint64 extent_end;
      wick_timeline_scene_get_extent (self->scene, &origin, &extent_end);
      g_autofree char *at
        = wick_format_duration (span->start_ns > origin ? span->start_ns - origin : 0);
      g_autofree char *measured = (span->flags & WICK_SPAN_FLAG_MEASURED)
                                    ? g_strdup_printf (" · %s", _ ("measured region"))
                                    : g_strdup ("");
      if (wick_gpu_compiled_kind (wick_document_str (doc, span->name)) != WICK_COMPILED_NONE)
        {
          char *with = g_strdup_printf ("%s · %s", measured, _ ("compiled region"));
          g_free (measured);
          measured = with;
        }
      markup = g_strdup_printf ("<b>%s</b>\n%s · %s %s · %s %s · %s +%s%s", name,
                                kinds[MIN (span->kind, 2)], _ ("step"), steps[MIN (span->step, 3)],
                                _ ("duration"), dur, _ ("at"), at, measured);
    }
  else if (type == WICK_RECORD_DEVICE_INTERVAL)
    {
      const WickDeviceInterval *iv = &wick_document_get_device_intervals (doc, NULL)[index];
      g_autofree char *dur = wick_format_duration (iv->duration_ns);
      const char *span_name
        = iv->span >= 0
            ? wick_document_str (doc, wick_document_get_spans (doc, NULL)[iv->span].name)
            : "?";
      g_autofree char *name = g_markup_escape_text (span_name, -1);
      markup
        = g_strdup_printf ("<b>%s</b>\n%s · %s %s · %s", name, wick_document_str (doc, iv->device),
                           _ ("stream"), wick_document_str (doc, iv->stream_id), dur);
    }
  else if (type == WICK_RECORD_EXTENSION)
    {
      const WickExtensionRecord *ext = &wick_document_get_extensions (doc, NULL)[index];
      g_autofree char *json = g_markup_escape_text (
        wick_document_str (doc, ext->json), MIN (wick_document_str_len (doc, ext->json), 300));
      markup = g_strdup_printf ("<b>%s</b>\n<tt>%s</tt>", wick_document_str (doc, ext->kind), json);
    }
  else if (type == WICK_RECORD_NONE)
    markup = device_tooltip (self, &view, x, y);
  if (markup == NULL)
    return FALSE;
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

/* The selection shown; set once, by wick_timeline_view_new (), a
 * template's binding or the session, before the view is drawn. */
static void
wick_timeline_view_selection_changed (WickPage *page, guint what)
{
  WICK_TIMELINE_VIEW (page)->selection = wick_page_get_selection (page);
  gtk_widget_queue_draw (GTK_WIDGET (page));
}

static void show_document (WickTimelineView *self, WickDocument *document,
                           WickTimelineScene *scene);

/* Shown again with a scene older than the document: the switch's frame
 * draws the old scene, the rebuild waits for the frame after it. */
static void
wick_timeline_view_map (GtkWidget *widget)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (widget);
  GTK_WIDGET_CLASS (wick_timeline_view_parent_class)->map (widget);
  if (self->scene != NULL && self->scene_dirty)
    wick_rebuild_throttle_defer (&self->throttle);
}

/* Another document: the loading's scene for it, if any, else one built on
 * the next frame; the same document grown: rebuilt on the next frame. */
static void
wick_timeline_view_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (page);
  WickTraceSession *session = wick_page_get_session (page);
  if (flags & WICK_PAGE_REFRESH_REPLACED)
    show_document (self, document,
                   document && session ? wick_trace_session_take_scene (session) : NULL);
  else
    wick_timeline_view_document_changed (self);
}

static void
wick_timeline_view_dispose (GObject *object)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (object);
  self->selection = NULL;
  g_clear_object (&self->document);
  g_clear_pointer (&self->scene, wick_timeline_scene_free);
  g_clear_pointer (&self->matches, g_free);
  g_clear_pointer (&self->match_list, g_array_unref);
  g_clear_pointer (&self->device_matches, g_free);
  g_clear_pointer (&self->event_matches, g_array_unref);
  g_clear_pointer (&self->collectives, g_hash_table_unref);
  g_clear_pointer (&self->related, g_array_unref);
  wick_rebuild_throttle_clear (&self->throttle);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  g_clear_pointer (&self->gutter_node, gsk_render_node_unref);
  g_clear_handle_id (&self->follow_source, g_source_remove);
  if (self->finish_tick != 0)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->finish_tick);
  self->finish_tick = 0;
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_TIMELINE_VIEW);
  G_OBJECT_CLASS (wick_timeline_view_parent_class)->dispose (object);
}

static void
wick_timeline_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (object);
  if (prop_id == PROP_FOLLOW)
    g_value_set_boolean (value, self->follow);
  else if (prop_id == PROP_GUTTER_WIDTH)
    g_value_set_int (value, wick_timeline_gutter_width);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_timeline_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                 GParamSpec *pspec)
{
  WickTimelineView *self = WICK_TIMELINE_VIEW (object);
  if (prop_id == PROP_FOLLOW)
    wick_timeline_view_set_follow (self, g_value_get_boolean (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_timeline_view_class_init (WickTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_timeline_view_dispose;
  object_class->get_property = wick_timeline_view_get_property;
  object_class->set_property = wick_timeline_view_set_property;
  widget_class->snapshot = wick_timeline_view_snapshot;
  widget_class->map = wick_timeline_view_map;
  WICK_PAGE_CLASS (klass)->refresh = wick_timeline_view_refresh;
  WICK_PAGE_CLASS (klass)->selection_changed = wick_timeline_view_selection_changed;
  /* every change redraws on the next frame, the scene's rebuild throttled */
  WICK_PAGE_CLASS (klass)->document_grew = wick_page_ensure_current;
  properties[PROP_FOLLOW]
    = g_param_spec_boolean ("follow", NULL, NULL, FALSE,
                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* the label column's width; the overview beside it follows */
  properties[PROP_GUTTER_WIDTH]
    = g_param_spec_int ("gutter-width", NULL, NULL, WICK_TIMELINE_GUTTER_MIN,
                        WICK_TIMELINE_GUTTER_MAX, WICK_TIMELINE_GUTTER_DEFAULT,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  process_toggled_signal = g_signal_new ("process-toggled", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1,
                                         G_TYPE_UINT);
  document_applied_signal = g_signal_new ("document-applied", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  scene_changed_signal = g_signal_new ("scene-changed", G_TYPE_FROM_CLASS (klass),
                                       G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  gtk_widget_class_set_css_name (widget_class, "wicktimeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/wick-timeline-view.ui");
  gtk_widget_class_bind_template_callback (widget_class, on_query_tooltip);
  gtk_widget_class_bind_template_callback (widget_class, on_scroll);
  gtk_widget_class_bind_template_callback (widget_class, on_motion);
  gtk_widget_class_bind_template_callback (widget_class, on_leave);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_begin);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_update);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_end);
  gtk_widget_class_bind_template_callback (widget_class, on_click_pressed);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_begin);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom_scale);
  gtk_widget_class_bind_template_callback (widget_class, on_key);
}

static void
wick_timeline_view_init (WickTimelineView *self)
{
  self->hover_x = -1;
  self->current_match = -1;
  wick_rebuild_throttle_init (&self->throttle, GTK_WIDGET (self));
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Timeline"));
  wick_page_set_icon_name (WICK_PAGE (self), "view-paged-symbolic");
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);
}

GtkWidget *
wick_timeline_view_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_TIMELINE_VIEW, "selection", selection, NULL);
}

void
wick_timeline_view_set_document (WickTimelineView *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_TIMELINE_VIEW (self));
  wick_page_set_document (WICK_PAGE (self), document);
}

static void
show_document (WickTimelineView *self, WickDocument *document, WickTimelineScene *scene)
{
  g_return_if_fail (scene == NULL || wick_timeline_scene_get_document (scene) == document);
  g_set_object (&self->document, document);
  g_clear_pointer (&self->scene, wick_timeline_scene_free);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  self->generation++;
  self->scene = scene;
  self->scene_dirty = FALSE;
  g_clear_pointer (&self->matches, g_free);
  g_clear_pointer (&self->match_list, g_array_unref);
  g_clear_pointer (&self->device_matches, g_free);
  g_clear_pointer (&self->event_matches, g_array_unref);
  g_clear_pointer (&self->collectives, g_hash_table_unref);
  g_clear_pointer (&self->related, g_array_unref);
  self->scroll_y = 0;
  if (document)
    wick_timeline_view_zoom_to_fit (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void apply_document_change (WickTimelineView *self);

static gboolean
follow_due (gpointer user_data)
{
  WickTimelineView *self = user_data;
  self->follow_source = 0;
  apply_document_change (self);
  return G_SOURCE_REMOVE;
}

/* A following view with an interval set applies a change at most once per
 * interval: the changes in between are coalesced into the next, which a
 * timeout applies (the visible range moved to the newest records, the
 * scene updated and the plot redrawn once for all of them). */
void
wick_timeline_view_document_changed (WickTimelineView *self)
{
  g_return_if_fail (WICK_IS_TIMELINE_VIEW (self));
  self->scene_dirty = TRUE;
  if (self->follow && self->document && self->follow_interval_us > 0)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 wait = self->follow_applied_us + self->follow_interval_us - now;
      if (self->follow_source != 0)
        return;
      if (wait > 0 && wick_document_get_n_lines (self->document) == self->follow_applied_lines
          && wick_document_is_finished (self->document) == self->follow_applied_finished)
        return; /* told again of the change just applied */
      if (wait > 0)
        {
          self->follow_source
            = g_timeout_add_full (G_PRIORITY_DEFAULT, (guint)((wait + 999) / 1000), follow_due,
                                  self, NULL);
          return;
        }
    }
  apply_document_change (self);
}

static void
apply_document_change (WickTimelineView *self)
{
  self->follow_applied_us = g_get_monotonic_time ();
  self->follow_applied_lines = self->document ? wick_document_get_n_lines (self->document) : 0;
  self->follow_applied_finished = self->document && wick_document_is_finished (self->document);
  self->scene_dirty = TRUE;
  if (self->follow && self->document && self->follow_fit)
    {
      /* a followed file: its view fits its data as it grows, until the user
       * zooms or pans (which leaves follow mode) */
      wick_timeline_view_zoom_to_fit (self);
    }
  else if (self->follow && self->document)
    {
      guint64 start, end;
      wick_selection_get_visible (self->selection, &start, &end);
      guint64 width = end > start ? end - start : 1000000000;
      guint64 newest = wick_document_get_end_ns (self->document);
      wick_selection_set_visible (self->selection, wick_time_sub (newest, width),
                                  MAX (newest, width));
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, document_applied_signal, 0);
}

void
wick_timeline_view_set_follow_interval (WickTimelineView *self, gint64 interval_us)
{
  g_return_if_fail (WICK_IS_TIMELINE_VIEW (self));
  self->follow_interval_us = MAX (interval_us, 0);
  if (self->follow_interval_us == 0 && self->follow_source != 0)
    {
      g_clear_handle_id (&self->follow_source, g_source_remove);
      apply_document_change (self);
    }
}

gint64
wick_timeline_view_get_follow_interval (WickTimelineView *self)
{
  g_return_val_if_fail (WICK_IS_TIMELINE_VIEW (self), 0);
  return self->follow_interval_us;
}

gboolean
wick_timeline_view_get_change_pending (WickTimelineView *self)
{
  g_return_val_if_fail (WICK_IS_TIMELINE_VIEW (self), FALSE);
  return self->follow_source != 0;
}

void
wick_timeline_view_set_follow (WickTimelineView *self, gboolean follow)
{
  if (self->follow == follow)
    return;
  self->follow = follow;
  if (follow)
    apply_document_change (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FOLLOW]);
}

gboolean
wick_timeline_view_get_follow (WickTimelineView *self)
{
  return self->follow;
}

void
wick_timeline_view_set_follow_fit (WickTimelineView *self, gboolean fit)
{
  self->follow_fit = fit;
  if (fit && self->follow)
    apply_document_change (self);
}

static int
compare_span_start (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const WickSpan *spans = user_data;
  guint64 sa = spans[*(const guint32 *)a].start_ns, sb = spans[*(const guint32 *)b].start_ns;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

static int
compare_event_start (gconstpointer a, gconstpointer b, gpointer user_data)
{
  WickTracks *tracks = user_data;
  const WickEventRef *x = a, *y = b;
  guint64 sa = wick_tracks_event_start (tracks, *x), sb = wick_tracks_event_start (tracks, *y);
  if (sa != sb)
    return sa < sb ? -1 : 1;
  return x->kind != y->kind ? (x->kind < y->kind ? -1 : 1)
                            : (x->index < y->index ? -1 : x->index > y->index);
}

guint
wick_timeline_view_set_search (WickTimelineView *self, const char *text)
{
  self->generation++;
  g_clear_pointer (&self->matches, g_free);
  g_clear_pointer (&self->match_list, g_array_unref);
  g_clear_pointer (&self->device_matches, g_free);
  g_clear_pointer (&self->event_matches, g_array_unref);
  self->current_match = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (text == NULL || *text == '\0' || self->document == NULL)
    return 0;
  guint n;
  const WickSpan *spans = wick_document_get_spans (self->document, &n);
  g_autofree char *needle = g_utf8_casefold (text, -1);
  g_autoptr (GHashTable) by_name = g_hash_table_new (NULL, NULL);
  self->matches = g_new0 (guint8, MAX (n, 1));
  self->match_list = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = 0; i < n; i++)
    {
      gpointer cached;
      gboolean match;
      if (g_hash_table_lookup_extended (by_name, GUINT_TO_POINTER (spans[i].name), NULL, &cached))
        match = GPOINTER_TO_INT (cached);
      else
        {
          g_autofree char *name
            = g_utf8_casefold (wick_document_str (self->document, spans[i].name), -1);
          match = strstr (name, needle) != NULL;
          g_hash_table_insert (by_name, GUINT_TO_POINTER (spans[i].name), GINT_TO_POINTER (match));
        }
      if (match)
        {
          guint32 index = i;
          self->matches[i] = 1;
          g_array_append_val (self->match_list, index);
        }
    }
  g_qsort_with_data (self->match_list->data, self->match_list->len, sizeof (guint32),
                     compare_span_start, (gpointer)spans);

  /* device slices too: a kernel, memcpy or annotation is found by its name */
  ensure_scene (self);
  WickTracks *tracks = self->scene ? wick_timeline_scene_get_tracks (self->scene) : NULL;
  guint nd = 0;
  const WickDeviceSlice *d = tracks ? wick_tracks_get_device_slices (tracks, &nd) : NULL;
  self->device_matches = g_new0 (guint8, MAX (nd, 1));
  self->event_matches = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
  for (guint i = 0; i < self->match_list->len; i++)
    {
      WickEventRef ref = { WICK_EVENT_SLICE, g_array_index (self->match_list, guint32, i) };
      g_array_append_val (self->event_matches, ref);
    }
  guint n_device = 0;
  for (guint i = 0; i < nd; i++)
    {
      gpointer cached;
      gboolean match;
      if (d[i].name == 0)
        continue;
      if (g_hash_table_lookup_extended (by_name, GUINT_TO_POINTER (d[i].name), NULL, &cached))
        match = GPOINTER_TO_INT (cached);
      else
        {
          g_autofree char *name
            = g_utf8_casefold (wick_document_str (self->document, d[i].name), -1);
          match = strstr (name, needle) != NULL;
          g_hash_table_insert (by_name, GUINT_TO_POINTER (d[i].name), GINT_TO_POINTER (match));
        }
      if (match)
        {
          WickEventRef ref = { WICK_EVENT_DEVICE, i };
          self->device_matches[i] = 1;
          g_array_append_val (self->event_matches, ref);
          n_device++;
        }
    }
  if (n_device > 0)
    g_qsort_with_data (self->event_matches->data, self->event_matches->len, sizeof (WickEventRef),
                       compare_event_start, tracks);
  return self->event_matches->len;
}

gint
wick_timeline_view_step_match (WickTimelineView *self, int direction)
{
  if (self->event_matches == NULL || self->event_matches->len == 0)
    return -1;
  gint n = self->event_matches->len;
  self->current_match = self->current_match < 0 ? (direction > 0 ? 0 : n - 1)
                                                : ((self->current_match + direction) % n + n) % n;
  WickEventRef ref = g_array_index (self->event_matches, WickEventRef, self->current_match);
  ensure_scene (self);
  WickTracks *tracks = wick_timeline_scene_get_tracks (self->scene);
  guint64 event_start = wick_tracks_event_start (tracks, ref);
  guint64 event_end = wick_tracks_event_end (tracks, ref);
  if (ref.kind == WICK_EVENT_SLICE)
    wick_selection_set_record (self->selection, WICK_RECORD_SPAN, ref.index);
  else
    select_event (self, ref);
  guint64 start, end;
  wick_selection_get_visible (self->selection, &start, &end);
  double width = (double)wick_time_sub (end, start);
  double dur = MAX ((double)wick_time_sub (event_end, event_start), 1);
  if (dur > width * 0.8 || dur * 200 < width)
    width = dur * 2.5 + 1000;
  double center = (double)event_start + dur / 2;
  leave_follow (self);
  set_visible_clamped (self, center - width / 2, center + width / 2);
  /* Bring its row into view. */
  reveal_event (self, ref);
  return self->current_match;
}

guint
wick_timeline_view_set_matches (WickTimelineView *self, const WickEventRef *refs, guint n)
{
  wick_timeline_view_set_search (self, NULL);
  if (self->document == NULL)
    return 0;
  guint n_spans, nd = 0;
  wick_document_get_spans (self->document, &n_spans);
  ensure_scene (self);
  WickTracks *tracks = self->scene ? wick_timeline_scene_get_tracks (self->scene) : NULL;
  if (tracks)
    wick_tracks_get_device_slices (tracks, &nd);
  self->matches = g_new0 (guint8, MAX (n_spans, 1));
  self->match_list = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->device_matches = g_new0 (guint8, MAX (nd, 1));
  self->event_matches = g_array_sized_new (FALSE, FALSE, sizeof (WickEventRef), n);
  for (guint i = 0; i < n; i++)
    {
      if (refs[i].kind == WICK_EVENT_SLICE && refs[i].index < n_spans)
        {
          self->matches[refs[i].index] = 1;
          g_array_append_val (self->match_list, refs[i].index);
        }
      else if (refs[i].kind == WICK_EVENT_DEVICE && refs[i].index < nd)
        self->device_matches[refs[i].index] = 1;
      else
        continue;
      g_array_append_val (self->event_matches, refs[i]);
    }
  return self->event_matches->len;
}

void
wick_timeline_view_set_hover (WickTimelineView *self, double x)
{
  self->hover_x = x;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
wick_timeline_view_set_show_ops (WickTimelineView *self, gboolean show)
{
  self->generation++;
  self->hide_ops = !show;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
wick_timeline_view_zoom_to_span (WickTimelineView *self, guint span)
{
  g_return_if_fail (self->document != NULL);
  const WickSpan *s = &wick_document_get_spans (self->document, NULL)[span];
  ensure_scene (self);
  WickEventRef ref = { WICK_EVENT_SLICE, span };
  guint64 end = wick_tracks_event_end (wick_timeline_scene_get_tracks (self->scene), ref);
  double width = MAX ((double)wick_time_sub (end, s->start_ns), MIN_VISIBLE_NS);
  double margin = floor (width / 10);
  leave_follow (self);
  wick_selection_set_record (self->selection, WICK_RECORD_SPAN, span);
  set_visible_clamped (self, (double)s->start_ns - margin, (double)s->start_ns + width + margin);
}
