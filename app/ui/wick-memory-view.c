/* wick-memory-view.c — see wick-memory-view.h for the contract. */
#include "wick-memory-view.h"
#include "wick-memory-view-private.h"
#include "wick-rebuild-throttle.h"
#include "wick-timeline-axis.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

static void wick_memory_view_toggle_series (WickMemoryView *self, guint bit);

static void wick_memory_view_set_log_scale (WickMemoryView *self, gboolean log_scale);

struct _WickMemoryView
{
  WickPage parent_instance;
  WickSelection *selection; /* the page's (wick_page_get_selection()) */
  WickDocument *document;   /* the one the chart is of */
  WickMemoryChart *chart;
  gboolean dirty;
  double hover_x, pointer_x;
  guint64 drag_start, drag_end;
  gboolean drag_box;
  /* The chart without the readout, kept while only the pointer moves. */
  GskRenderNode *cached;
  WickMemoryViewport cached_view;
  WickRebuildThrottle throttle;
  guint hidden; /* legend items switched off */
  gboolean log_scale;
};

G_DEFINE_FINAL_TYPE (WickMemoryView, wick_memory_view, WICK_TYPE_PAGE)

/* Like the timeline: a growing document rebuilds the series at most once per
 * four build times (the last chart is drawn meanwhile). */
static void
ensure_chart_throttled (WickMemoryView *self, gboolean force)
{
  if (self->document == NULL || (self->chart != NULL && !self->dirty))
    return;
  if (!wick_rebuild_throttle_begin (&self->throttle, force || self->chart == NULL))
    return;
  g_clear_pointer (&self->chart, wick_memory_chart_free);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  self->chart = wick_memory_chart_new (self->document);
  self->dirty = FALSE;
  wick_rebuild_throttle_end (&self->throttle);
}

void
wick_memory_view_get_params (WickMemoryView *self, WickMemoryViewport *out)
{
  memset (out, 0, sizeof *out);
  if (self->selection)
    {
      wick_selection_get_visible (self->selection, &out->start_ns, &out->end_ns);
      wick_selection_get_range (self->selection, &out->range_start, &out->range_end);
    }
  out->width = MAX (gtk_widget_get_width (GTK_WIDGET (self)), WICK_MEMORY_AXIS + 40);
  out->height = MAX (gtk_widget_get_height (GTK_WIDGET (self)), 120);
  out->dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  out->hover_x = self->hover_x;
  out->hidden = self->hidden;
  out->log_scale = self->log_scale;
  /* Times read from the first span, as on the timeline's ruler. */
  guint n;
  const WickSpan *spans = self->document ? wick_document_get_spans (self->document, &n) : NULL;
  out->origin_ns = G_MAXUINT64;
  for (guint i = 0; spans && i < n; i++)
    out->origin_ns = MIN (out->origin_ns, spans[i].start_ns);
  if (out->origin_ns == G_MAXUINT64)
    out->origin_ns = 0;
}

static gboolean
same_view (const WickMemoryViewport *a, const WickMemoryViewport *b)
{
  return a->hidden == b->hidden && a->log_scale == b->log_scale && a->start_ns == b->start_ns
         && a->end_ns == b->end_ns && a->origin_ns == b->origin_ns && a->width == b->width
         && a->height == b->height && a->dark == b->dark && a->range_start == b->range_start
         && a->range_end == b->range_end;
}

static void
wick_memory_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  WickMemoryView *self = WICK_MEMORY_VIEW (widget);
  ensure_chart_throttled (self, FALSE);
  if (self->chart == NULL || self->selection == NULL)
    return;
  WickMemoryViewport view;
  wick_memory_view_get_params (self, &view);
  if (view.end_ns <= wick_time_add (view.start_ns, 1))
    return;
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (0, 0, view.width, view.height);
  if (self->cached == NULL || !same_view (&view, &self->cached_view))
    {
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      GtkSnapshot *base = gtk_snapshot_new ();
      cairo_t *cr = gtk_snapshot_append_cairo (base, &bounds);
      WickMemoryViewport without_hover = view;
      without_hover.hover_x = -1;
      wick_memory_chart_draw (self->chart, cr, &without_hover);
      cairo_destroy (cr);
      self->cached = gtk_snapshot_free_to_node (base);
      self->cached_view = view;
    }
  if (self->cached)
    gtk_snapshot_append_node (snapshot, self->cached);
  if (view.hover_x >= 0)
    {
      cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);
      wick_memory_chart_draw_readout (self->chart, cr, &view);
      cairo_destroy (cr);
    }
}

static void
zoom (WickMemoryView *self, double factor, double anchor_x)
{
  guint64 start, end;
  wick_selection_get_visible (self->selection, &start, &end);
  double plot = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - WICK_MEMORY_AXIS - 16, 1);
  double frac = CLAMP ((anchor_x - WICK_MEMORY_AXIS) / plot, 0, 1);
  double width = (double)wick_time_sub (end, start), anchor = (double)start + frac * width;
  double new_width = MAX (width * factor, 200);
  double new_start = MAX (anchor - frac * new_width, 0);
  wick_selection_set_visible (self->selection, wick_time_from_double (new_start),
                              wick_time_from_double (new_start + new_width));
}

static void
pan (WickMemoryView *self, guint64 start, guint64 end, double dx)
{
  double plot = MAX (gtk_widget_get_width (GTK_WIDGET (self)) - WICK_MEMORY_AXIS - 16, 1);
  double ns = dx * (double)wick_time_sub (end, start) / plot;
  guint64 new_start = wick_time_from_double ((double)start + ns);
  wick_selection_set_visible (self->selection, new_start,
                              wick_time_add (new_start, wick_time_sub (end, start)));
}

static gboolean
on_scroll (GtkEventControllerScroll *controller, double dx, double dy, WickMemoryView *self)
{
  GdkModifierType state
    = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  guint64 start, end;
  wick_selection_get_visible (self->selection, &start, &end);
  if (state & GDK_CONTROL_MASK)
    zoom (self, pow (1.15, dy), self->pointer_x);
  else
    pan (self, start, end, (dx + dy) * 40);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller, double x, double y, WickMemoryView *self)
{
  self->hover_x = self->pointer_x = x;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *controller, WickMemoryView *self)
{
  self->hover_x = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, WickMemoryView *self)
{
  GdkModifierType state
    = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  wick_selection_get_visible (self->selection, &self->drag_start, &self->drag_end);
  self->drag_box = (state & GDK_SHIFT_MASK) != 0;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, WickMemoryView *self)
{
  double x0, y0;
  gtk_gesture_drag_get_start_point (gesture, &x0, &y0);
  if (self->drag_box)
    {
      WickMemoryViewport view;
      wick_memory_view_get_params (self, &view);
      view.start_ns = self->drag_start;
      view.end_ns = self->drag_end;
      guint64 a = wick_memory_viewport_x_to_time (&view, x0),
              b = wick_memory_viewport_x_to_time (&view, x0 + dx);
      wick_selection_set_range (self->selection, MIN (a, b), MAX (a, b));
    }
  else
    pan (self, self->drag_start, self->drag_end, -dx);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, WickMemoryView *self)
{
  if (self->drag_box || ABS (dx) >= 3 || ABS (dy) >= 3 || self->chart == NULL)
    return;
  double x0, y0;
  gtk_gesture_drag_get_start_point (gesture, &x0, &y0);
  WickMemoryViewport view;
  wick_memory_view_get_params (self, &view);
  int item = wick_memory_chart_legend_hit (&view, x0, y0);
  if (item >= 0)
    {
      /* Clicking a legend item shows or hides that series, or switches the
       * log scale. */
      if (item == 8)
        wick_memory_view_set_log_scale (self, !self->log_scale);
      else
        wick_memory_view_toggle_series (self, item);
      return;
    }
  gint64 event = wick_memory_chart_event_at (self->chart, &view, x0, y0);
  if (event >= 0)
    wick_selection_set_record (self->selection, WICK_RECORD_MEMORY, event);
}

static void
wick_memory_view_selection_changed (WickPage *page, guint what)
{
  WickMemoryView *self = WICK_MEMORY_VIEW (page);
  self->selection = wick_page_get_selection (page);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Shown again with a chart older than the document: the switch's frame
 * draws the old chart, the rebuild waits for the frame after it. */
static void
wick_memory_view_map (GtkWidget *widget)
{
  WickMemoryView *self = WICK_MEMORY_VIEW (widget);
  GTK_WIDGET_CLASS (wick_memory_view_parent_class)->map (widget);
  if (self->chart != NULL && self->dirty)
    wick_rebuild_throttle_defer (&self->throttle);
}

/* Another document: its chart from the loading, else built on the next
 * frame; the same document grown: rebuilt on the next frame (throttled). */
static void
wick_memory_view_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickMemoryView *self = WICK_MEMORY_VIEW (page);
  if (flags & WICK_PAGE_REFRESH_REPLACED)
    {
      g_set_object (&self->document, document);
      g_clear_pointer (&self->chart, wick_memory_chart_free);
      g_clear_pointer (&self->cached, gsk_render_node_unref);
      WickTraceSession *session = wick_page_get_session (page);
      self->chart = document && session ? wick_trace_session_take_chart (session) : NULL;
    }
  self->dirty = self->chart == NULL || !(flags & WICK_PAGE_REFRESH_REPLACED);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
wick_memory_view_dispose (GObject *object)
{
  WickMemoryView *self = WICK_MEMORY_VIEW (object);
  self->selection = NULL;
  g_clear_object (&self->document);
  g_clear_pointer (&self->chart, wick_memory_chart_free);
  g_clear_pointer (&self->cached, gsk_render_node_unref);
  wick_rebuild_throttle_clear (&self->throttle);
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_MEMORY_VIEW);
  G_OBJECT_CLASS (wick_memory_view_parent_class)->dispose (object);
}

static void
wick_memory_view_class_init (WickMemoryViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_memory_view_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_memory_view_refresh;
  WICK_PAGE_CLASS (klass)->document_grew = wick_page_ensure_current;
  WICK_PAGE_CLASS (klass)->selection_changed = wick_memory_view_selection_changed;
  widget_class->snapshot = wick_memory_view_snapshot;
  widget_class->map = wick_memory_view_map;
  gtk_widget_class_set_css_name (widget_class, "wickmemorychart");
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/wickprofiler/Wick/wick-memory-view.ui");
  gtk_widget_class_bind_template_callback (widget_class, on_scroll);
  gtk_widget_class_bind_template_callback (widget_class, on_motion);
  gtk_widget_class_bind_template_callback (widget_class, on_leave);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_begin);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_update);
  gtk_widget_class_bind_template_callback (widget_class, on_drag_end);
}

static void
wick_memory_view_init (WickMemoryView *self)
{
  self->hover_x = -1;
  wick_rebuild_throttle_init (&self->throttle, GTK_WIDGET (self));
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Memory"));
  wick_page_set_icon_name (WICK_PAGE (self), "drive-harddisk-symbolic");
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);
}

GtkWidget *
wick_memory_view_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_MEMORY_VIEW, "selection", selection, NULL);
}

void
wick_memory_view_set_hover (WickMemoryView *self, double x)
{
  self->hover_x = x;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Shows or hides a series, as clicking its legend item does (bits of
 * WickMemoryViewport.hidden). */
static void
wick_memory_view_toggle_series (WickMemoryView *self, guint bit)
{
  g_return_if_fail (bit < 8);
  self->hidden ^= 1u << bit;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The y-axis as log10(1 + bytes), as the legend's "log scale" box switches it. */
static void
wick_memory_view_set_log_scale (WickMemoryView *self, gboolean log_scale)
{
  self->log_scale = log_scale;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

