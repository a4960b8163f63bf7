/* wick-timeline-scene.c — see wick-timeline-scene.h for the contract. */
#include "wick-timeline-scene.h"

#include <math.h>
#include <json-glib/json-glib.h>
#include <pango/pangocairo.h>
#include <string.h>
#include <glib/gi18n.h>

#include "wick-format.h"
#include "wick-palette.h"
#include "wick-timeline-axis.h"

typedef struct
{
  char *name;
  GArray *intervals; /* guint32, sorted by aligned start */
  GArray *max_end;   /* guint64 running maximum of aligned ends */
} DeviceTrack;

struct _WickTimelineScene
{
  WickDocument *document;
  WickTimelineIndex *index;
  const WickSpan *spans;
  guint n_spans;
  guint64 *interval_start; /* aligned start per device interval */
  GPtrArray *tracks;       /* DeviceTrack */
  guint32 *ops_by_time;
  guint n_ops;
  guint64 extent_start, extent_end;
  guint8 *colour_ids; /* per span */
  GArray *batches[2 * WICK_SPAN_COLOURS];
  PangoLayout *layout;
  double row_height;        /* of the span rectangles being drawn */
  GPtrArray *marker_labels; /* char *, per extension record */
};

static void
device_track_free (gpointer data)
{
  DeviceTrack *track = data;
  g_free (track->name);
  g_array_unref (track->intervals);
  g_array_unref (track->max_end);
  g_free (track);
}

static gint64
clock_offset (WickTimelineScene *self, const WickDeviceInterval *intervals, guint n, WickStr clock)
{
  /* The earliest interval of the clock with a known span lines up with that
   * span; a clock with no known span starts with the trace. */
  gint64 offset = 0;
  guint64 earliest = G_MAXUINT64, earliest_any = G_MAXUINT64;
  gboolean linked = FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (intervals[i].clock_id != clock)
        continue;
      earliest_any = MIN (earliest_any, intervals[i].start_ns);
      if (intervals[i].span >= 0 && (guint)intervals[i].span < self->n_spans
          && intervals[i].start_ns < earliest)
        {
          earliest = intervals[i].start_ns;
          offset = (gint64)self->spans[intervals[i].span].start_ns - (gint64)intervals[i].start_ns;
          linked = TRUE;
        }
    }
  if (!linked && earliest_any != G_MAXUINT64)
    offset = (gint64)self->extent_start - (gint64)earliest_any;
  return offset;
}

static int
compare_intervals (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const guint64 *start = user_data;
  guint64 sa = start[*(const guint32 *)a], sb = start[*(const guint32 *)b];
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

static void
build_device_tracks (WickTimelineScene *self)
{
  guint n;
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (self->document, &n);
  g_autoptr (GHashTable) offsets = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr (GHashTable) by_key = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  self->interval_start = g_new0 (guint64, MAX (n, 1));
  self->tracks = g_ptr_array_new_with_free_func (device_track_free);
  for (guint i = 0; i < n; i++)
    {
      gint64 *offset = g_hash_table_lookup (offsets, GUINT_TO_POINTER (intervals[i].clock_id));
      if (offset == NULL)
        {
          offset = g_new (gint64, 1);
          *offset = clock_offset (self, intervals, n, intervals[i].clock_id);
          g_hash_table_insert (offsets, GUINT_TO_POINTER (intervals[i].clock_id), offset);
        }
      gint64 aligned = (gint64)intervals[i].start_ns + *offset;
      self->interval_start[i] = aligned > 0 ? (guint64)aligned : 0;

      g_autofree char *key = g_strdup_printf (
        "%s · stream %s", wick_document_str (self->document, intervals[i].device),
        wick_document_str (self->document, intervals[i].stream_id));
      DeviceTrack *track = g_hash_table_lookup (by_key, key);
      if (track == NULL)
        {
          track = g_new0 (DeviceTrack, 1);
          track->name = g_strdup (key);
          track->intervals = g_array_new (FALSE, FALSE, sizeof (guint32));
          track->max_end = g_array_new (FALSE, FALSE, sizeof (guint64));
          g_hash_table_insert (by_key, g_strdup (key), track);
          g_ptr_array_add (self->tracks, track);
        }
      guint32 index = i;
      g_array_append_val (track->intervals, index);
    }
  for (guint t = 0; t < self->tracks->len; t++)
    {
      DeviceTrack *track = g_ptr_array_index (self->tracks, t);
      g_qsort_with_data (track->intervals->data, track->intervals->len, sizeof (guint32),
                         compare_intervals, self->interval_start);
      guint64 running = 0;
      for (guint i = 0; i < track->intervals->len; i++)
        {
          guint32 k = g_array_index (track->intervals, guint32, i);
          running
            = MAX (running, wick_time_add (self->interval_start[k], intervals[k].duration_ns));
          g_array_append_val (track->max_end, running);
          self->extent_end = MAX (self->extent_end, running);
        }
    }
}

static int
compare_ops (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const WickOp *ops = user_data;
  guint64 ta = ops[*(const guint32 *)a].timestamp_ns, tb = ops[*(const guint32 *)b].timestamp_ns;
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

static void
build_ops (WickTimelineScene *self)
{
  const WickOp *ops = wick_document_get_ops (self->document, &self->n_ops);
  self->ops_by_time = g_new (guint32, MAX (self->n_ops, 1));
  for (guint i = 0; i < self->n_ops; i++)
    self->ops_by_time[i] = i;
  g_qsort_with_data (self->ops_by_time, self->n_ops, sizeof (guint32), compare_ops, (gpointer)ops);
}

static char *
marker_label (const char *kind, const char *json)
{
  const char *shown = kind && g_str_has_prefix (kind, "wick_") ? kind + 5 : kind ? kind : "?";
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (json == NULL || !json_parser_load_from_data (parser, json, -1, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return g_strdup (shown);
  JsonObject *object = json_node_get_object (json_parser_get_root (parser));
  const char *label = json_object_get_string_member_with_default (object, "label", NULL);
  const char *module = json_object_get_string_member_with_default (object, "module", NULL);
  const char *stage = json_object_get_string_member_with_default (object, "stage", NULL);
  const char *verdict = json_object_get_string_member_with_default (object, "verdict", NULL);
  if (g_strcmp0 (kind, "wick_mark") == 0 && label)
    return g_strdup (label);
  if (g_str_has_prefix (shown, "weight_") && module)
    return g_strdup_printf ("%s %s", shown + 7, module);
  if (stage && verdict)
    return g_strdup_printf ("%s %s", stage, verdict);
  if (stage)
    return g_strdup_printf ("%s %s", shown, stage);
  return g_strdup (shown);
}

static void
build_marker_labels (WickTimelineScene *self)
{
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
  self->marker_labels = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (self->marker_labels,
                     marker_label (wick_document_str (self->document, ext[i].kind),
                                   wick_document_str (self->document, ext[i].json)));
}

const char *
wick_timeline_scene_get_marker_label (WickTimelineScene *self, guint extension)
{
  g_return_val_if_fail (extension < self->marker_labels->len, NULL);
  return g_ptr_array_index (self->marker_labels, extension);
}

WickTimelineScene *
wick_timeline_scene_new (WickDocument *document)
{
  WickTimelineScene *self = g_new0 (WickTimelineScene, 1);
  self->document = g_object_ref (document);
  self->index = wick_timeline_index_new (document);
  self->spans = wick_document_get_spans (document, &self->n_spans);
  self->extent_start = wick_timeline_index_get_start_ns (self->index);
  self->extent_end
    = MAX (wick_timeline_index_get_end_ns (self->index), wick_document_get_end_ns (document));
  if (wick_document_has_terminal (document))
    self->extent_end = MAX (self->extent_end, wick_document_get_terminal_ns (document));
  build_device_tracks (self);
  build_ops (self);
  build_marker_labels (self);
  self->colour_ids = g_new (guint8, MAX (self->n_spans, 1));
  for (guint i = 0; i < self->n_spans; i++)
    self->colour_ids[i] = wick_palette_span_colour_id (
      self->spans[i].step, wick_document_str (document, self->spans[i].name));
  for (guint i = 0; i < G_N_ELEMENTS (self->batches); i++)
    self->batches[i] = g_array_new (FALSE, FALSE, sizeof (cairo_rectangle_t));
  /* An empty or instantaneous trace still gets a microsecond of axis. */
  if (self->extent_end < wick_time_add (self->extent_start, 1000))
    self->extent_end = wick_time_add (self->extent_start, 1000);
  if (self->extent_end - self->extent_start < 1000)
    self->extent_start = self->extent_end - 1000;
  return self;
}

void
wick_timeline_scene_free (WickTimelineScene *self)
{
  if (self == NULL)
    return;
  wick_timeline_index_free (self->index);
  g_ptr_array_unref (self->tracks);
  g_free (self->interval_start);
  g_free (self->ops_by_time);
  g_free (self->colour_ids);
  for (guint i = 0; i < G_N_ELEMENTS (self->batches); i++)
    g_array_unref (self->batches[i]);
  g_clear_object (&self->layout);
  g_ptr_array_unref (self->marker_labels);
  g_object_unref (self->document);
  g_free (self);
}

WickTimelineIndex *
wick_timeline_scene_get_index (WickTimelineScene *self)
{
  return self->index;
}

WickDocument *
wick_timeline_scene_get_document (WickTimelineScene *self)
{
  return self->document;
}

void
wick_timeline_scene_get_extent (WickTimelineScene *self, guint64 *start_ns, guint64 *end_ns)
{
  *start_ns = self->extent_start;
  *end_ns = self->extent_end;
}

static int
flame_top (void)
{
  return WICK_TIMELINE_RULER + WICK_TIMELINE_MARKER_ROW;
}

static int
device_top (WickTimelineScene *self)
{
  return flame_top () + (int)wick_timeline_index_get_n_depths (self->index) * WICK_TIMELINE_ROW
         + WICK_TIMELINE_SECTION_GAP;
}

int
wick_timeline_scene_get_content_height (WickTimelineScene *self)
{
  return device_top (self) + (int)self->tracks->len * WICK_TIMELINE_ROW + WICK_TIMELINE_ROW;
}

guint
wick_timeline_scene_get_n_tracks (WickTimelineScene *self)
{
  return 1 + self->tracks->len;
}

const char *
wick_timeline_scene_get_track_name (WickTimelineScene *self, guint track)
{
  if (track == 0)
    return "spans";
  g_return_val_if_fail (track - 1 < self->tracks->len, NULL);
  return ((DeviceTrack *)g_ptr_array_index (self->tracks, track - 1))->name;
}

guint64
wick_timeline_scene_interval_start (WickTimelineScene *self, guint interval)
{
  return self->interval_start[interval];
}

double
wick_timeline_viewport_time_to_x (const WickTimelineViewport *view, guint64 t)
{
  double span = MAX ((double)wick_time_sub (view->end_ns, view->start_ns), 1);
  double plot = MAX (view->width - WICK_TIMELINE_GUTTER, 1);
  return WICK_TIMELINE_GUTTER + ((double)t - (double)view->start_ns) / span * plot;
}

guint64
wick_timeline_viewport_x_to_time (const WickTimelineViewport *view, double x)
{
  double plot = MAX (view->width - WICK_TIMELINE_GUTTER, 1);
  double t
    = (double)view->start_ns
      + (x - WICK_TIMELINE_GUTTER) / plot * (double)wick_time_sub (view->end_ns, view->start_ns);
  return wick_time_from_double (t);
}

static double view_ns_per_px (const WickTimelineViewport *view);

static void
batch_rect (WickTimelineScene *self, guint batch, double x0, double x1, double y, double h)
{
  cairo_rectangle_t rect = { x0, y, x1 - x0, h };
  g_array_append_val (self->batches[batch], rect);
}

static void
flush_batches (WickTimelineScene *self, cairo_t *cr, gboolean dark)
{
  for (guint b = 0; b < G_N_ELEMENTS (self->batches); b++)
    {
      GArray *rects = self->batches[b];
      if (rects->len == 0)
        continue;
      for (guint i = 0; i < rects->len; i++)
        {
          cairo_rectangle_t *r = &g_array_index (rects, cairo_rectangle_t, i);
          cairo_rectangle (cr, r->x, r->y, r->width, r->height);
        }
      gboolean dim = b >= WICK_SPAN_COLOURS;
      wick_palette_set (cr, wick_palette_span (b % WICK_SPAN_COLOURS, dark), dim ? 0.22 : 1.0);
      cairo_fill (cr);
      g_array_set_size (rects, 0);
    }
}

typedef struct
{
  guint span;
  double x0, x1, y;
} Label;

static void
emit_span (WickTimelineScene *self, const WickTimelineViewport *view, guint span, double y,
           double *last_x1, GArray *labels)
{
  double x0 = wick_timeline_viewport_time_to_x (view, self->spans[span].start_ns);
  double x1
    = wick_timeline_viewport_time_to_x (view, wick_timeline_index_span_end (self->index, span));
  double left = WICK_TIMELINE_GUTTER, right = view->width;
  x0 = MAX (x0, left - 1);
  x1 = MIN (x1, right + 1);
  /* Snap to whole pixels (cairo's box fast path) with a one-pixel minimum. */
  x0 = floor (x0);
  x1 = MAX (floor (x1), x0 + 1);
  if (x1 <= *last_x1)
    return;
  if (x0 < *last_x1)
    x0 = *last_x1;
  *last_x1 = x1;
  gboolean dim = view->matches != NULL && !view->matches[span];
  guint batch = self->colour_ids[span] + (dim ? WICK_SPAN_COLOURS : 0);
  double gap = x1 - x0 > 3 ? 1 : 0;
  batch_rect (self, batch, x0, x1 - gap, y, self->row_height);
  if (labels && x1 - x0 > 36)
    {
      Label label = { span, x0, x1 - gap, y };
      g_array_append_val (labels, label);
    }
}

static void
draw_depth (WickTimelineScene *self, const WickTimelineViewport *view, guint d, double y,
            GArray *labels)
{
  const WickTimelineDepth *depth = wick_timeline_index_get_depth (self->index, d);
  double ns_per_px = view_ns_per_px (view);
  int level = wick_timeline_index_pick_level (self->index, ns_per_px);
  double last_x1 = -1;

  if (level < 0 || (guint)level >= depth->n_levels)
    {
      if (level >= 0)
        level = depth->n_levels - 1;
      else
        {
          for (guint i = wick_timeline_depth_first_overlapping (depth, view->start_ns);
               i < depth->n_spans && self->spans[depth->spans[i]].start_ns < view->end_ns; i++)
            emit_span (self, view, depth->spans[i], y, &last_x1, labels);
          return;
        }
    }

  /* Mipmap: buckets from the one before the view's start to its end. The
   * longest span in the bucket just before may reach into the view. */
  guint shift = 0;
  guint64 base = wick_timeline_index_get_base_ns (self->index);
  while ((G_GUINT64_CONSTANT (1) << shift) < base)
    shift++;
  shift += level;
  guint64 origin = wick_timeline_index_get_start_ns (self->index);
  guint64 rel_start = view->start_ns > origin ? view->start_ns - origin : 0;
  guint64 first_bucket = rel_start >> shift;
  const WickMipEntry *entries = depth->levels[level];
  guint count = depth->level_counts[level];
  guint lo = 0, hi = count;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (entries[mid].bucket < first_bucket)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* Long spans that started far before the view: the raw index finds the
   * one covering the view's start. */
  guint raw = wick_timeline_depth_first_overlapping (depth, view->start_ns);
  if (raw < depth->n_spans
      && self->spans[depth->spans[raw]].start_ns < origin + (first_bucket << shift))
    emit_span (self, view, depth->spans[raw], y, &last_x1, labels);
  if (lo > 0)
    lo--;
  for (guint i = lo; i < count; i++)
    {
      guint32 span = entries[i].span;
      if (self->spans[span].start_ns >= view->end_ns)
        break;
      if (wick_timeline_index_span_end (self->index, span) < view->start_ns)
        continue;
      emit_span (self, view, span, y, &last_x1, labels);
    }
}

static PangoLayout *
scene_layout (WickTimelineScene *self, cairo_t *cr)
{
  if (self->layout == NULL)
    {
      self->layout = pango_cairo_create_layout (cr);
      PangoFontDescription *font = pango_font_description_from_string ("Sans 8");
      pango_layout_set_font_description (self->layout, font);
      pango_font_description_free (font);
      pango_layout_set_ellipsize (self->layout, PANGO_ELLIPSIZE_END);
    }
  else
    pango_cairo_update_layout (cr, self->layout);
  return self->layout;
}

static void
draw_labels (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view, GArray *labels)
{
  PangoLayout *layout = scene_layout (self, cr);
  cairo_set_source_rgb (cr, view->dark ? 0.95 : 0.1, view->dark ? 0.95 : 0.1,
                        view->dark ? 0.95 : 0.12);
  /* Text is the costly part of a frame: with very many candidates, only the
   * wider spans get their names. */
  double min_width = labels->len > 600 ? 96 : labels->len > 300 ? 60 : 24;
  for (guint i = 0; i < labels->len; i++)
    {
      Label *label = &g_array_index (labels, Label, i);
      double x0 = MAX (label->x0, WICK_TIMELINE_GUTTER) + 4;
      double w = label->x1 - x0 - 3;
      if (w < min_width)
        continue;
      pango_layout_set_width (layout, (int)(w * PANGO_SCALE));
      const char *name = wick_document_str (self->document, self->spans[label->span].name);
      /* The measured region (one per trace) is marked, as candle-graph's
       * verdicts are about it. */
      if (self->spans[label->span].flags & WICK_SPAN_FLAG_MEASURED)
        {
          g_autofree char *marked = g_strdup_printf ("◆ %s", name ? name : "");
          pango_layout_set_text (layout, marked, -1);
        }
      else
        pango_layout_set_text (layout, name ? name : "", -1);
      cairo_move_to (cr, x0, label->y + 3);
      pango_cairo_show_layout (cr, layout);
    }
}

static void
draw_text (WickTimelineScene *self, cairo_t *cr, const char *text, double x, double y,
           double max_width)
{
  PangoLayout *layout = scene_layout (self, cr);
  pango_layout_set_width (layout, max_width > 0 ? (int)(max_width * PANGO_SCALE) : -1);
  pango_layout_set_text (layout, text, -1);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, layout);
}

static double
view_ns_per_px (const WickTimelineViewport *view)
{
  return (double)wick_time_sub (view->end_ns, view->start_ns)
         / MAX (view->width - WICK_TIMELINE_GUTTER, 1);
}

static guint64
ruler_step (const WickTimelineViewport *view)
{
  return wick_time_axis_step (view_ns_per_px (view), 90);
}

static void
draw_ruler (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  WickRgb fg = wick_palette_foreground (view->dark);
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_rectangle (cr, 0, 0, view->width, WICK_TIMELINE_RULER);
  cairo_fill (cr);

  guint64 step = ruler_step (view);
  guint64 origin = self->extent_start;
  /* One unit for every label: the one of the latest time shown. */
  guint64 unit = wick_time_sub (view->end_ns, origin);
  WickTimeTicks ticks;
  guint64 rel;
  wick_time_ticks_init (&ticks, origin, view->start_ns, view->end_ns, step,
                        (guint)(view->width / 8) + 2);
  while (wick_time_ticks_next (&ticks, &rel))
    {
      double x = floor (wick_timeline_viewport_time_to_x (view, wick_time_add (origin, rel))) + 0.5;
      if (x < WICK_TIMELINE_GUTTER)
        continue;
      wick_palette_set (cr, wick_palette_grid (view->dark), 1);
      cairo_move_to (cr, x, WICK_TIMELINE_RULER);
      cairo_line_to (cr, x, view->height);
      cairo_stroke (cr);
      wick_palette_set (cr, fg, 0.6);
      cairo_move_to (cr, x, WICK_TIMELINE_RULER - 8);
      cairo_line_to (cr, x, WICK_TIMELINE_RULER);
      cairo_stroke (cr);
      g_autofree char *label = wick_format_time_label_in (rel, step, unit);
      PangoLayout *layout = scene_layout (self, cr);
      pango_layout_set_width (layout, -1);
      pango_layout_set_text (layout, label, -1);
      int label_width, label_height;
      pango_layout_get_pixel_size (layout, &label_width, &label_height);
      if (x + 3 + label_width > view->width)
        continue; /* no half labels at the right edge */
      wick_palette_set (cr, fg, 0.8);
      draw_text (self, cr, label, x + 3, 3, -1);
    }
  wick_palette_set (cr, fg, 0.25);
  cairo_move_to (cr, 0, WICK_TIMELINE_RULER - 0.5);
  cairo_line_to (cr, view->width, WICK_TIMELINE_RULER - 0.5);
  cairo_stroke (cr);
}

static void
draw_markers (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
  double y = WICK_TIMELINE_RULER + 2;
  double last_label_x = -1e9, last_x = -1e9;
  /* Dense markers (more than one per 24 px) are drawn as bare ticks, one per
   * 3 px, without labels or lines across the tracks. */
  guint visible = 0;
  for (guint i = 0; i < n; i++)
    visible += ext[i].timestamp_ns >= view->start_ns && ext[i].timestamp_ns <= view->end_ns;
  gboolean dense = visible * 24.0 > view->width - WICK_TIMELINE_GUTTER;
  for (guint i = 0; i < n; i++)
    {
      if (ext[i].timestamp_ns < view->start_ns || ext[i].timestamp_ns > view->end_ns)
        continue;
      double x = floor (wick_timeline_viewport_time_to_x (view, ext[i].timestamp_ns)) + 0.5;
      gboolean is_selected
        = view->selected_type == WICK_RECORD_EXTENSION && view->selected_index == i;
      if (dense && !is_selected && fabs (x - last_x) < 3)
        continue;
      last_x = x;
      const char *kind = wick_document_str (self->document, ext[i].kind);
      guint hue = g_str_hash (kind ? kind : "") % 4;
      static const WickRgb hues[]
        = { { 0.75, 0.11, 0.16 }, { 0.57, 0.25, 0.67 }, { 0.90, 0.38, 0.0 }, { 0.15, 0.64, 0.41 } };
      gboolean selected = view->selected_type == WICK_RECORD_EXTENSION && view->selected_index == i;
      if (!dense || selected)
        {
          wick_palette_set (cr, hues[hue], 0.35);
          cairo_move_to (cr, x, y + 14);
          cairo_line_to (cr, x, view->height);
          cairo_stroke (cr);
        }
      wick_palette_set (cr, hues[hue], 1);
      cairo_move_to (cr, x, y + 14);
      cairo_line_to (cr, x - 5, y + 4);
      cairo_line_to (cr, x + 5, y + 4);
      cairo_close_path (cr);
      cairo_fill (cr);
      if (selected)
        {
          wick_palette_set (cr, wick_palette_foreground (view->dark), 1);
          cairo_arc (cr, x, y + 8, 8, 0, 2 * G_PI);
          cairo_stroke (cr);
        }
      if (!dense && x - last_label_x > 120 && kind)
        {
          wick_palette_set (cr, wick_palette_foreground (view->dark), 0.85);
          draw_text (self, cr, g_ptr_array_index (self->marker_labels, i), x + 7, y, 110);
          last_label_x = x;
        }
    }
  if (wick_document_has_terminal (self->document))
    {
      guint64 t = wick_document_get_terminal_ns (self->document);
      if (t >= view->start_ns && t <= view->end_ns)
        {
          double x = floor (wick_timeline_viewport_time_to_x (view, t)) + 0.5;
          gboolean ok = wick_document_get_capture_complete (self->document);
          cairo_set_source_rgba (cr, ok ? 0.2 : 0.85, ok ? 0.6 : 0.1, ok ? 0.3 : 0.15, 1);
          cairo_rectangle (cr, x - 1, y, 3, 16);
          cairo_fill (cr);
        }
    }
}

static void
draw_ops (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  const WickOp *ops = wick_document_get_ops (self->document, NULL);
  /* ops are short: start from the first op at or after start - 1 px. */
  guint lo = 0, hi = self->n_ops;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (ops[self->ops_by_time[mid]].timestamp_ns < view->start_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  guint end = lo;
  while (end < self->n_ops && ops[self->ops_by_time[end]].timestamp_ns < view->end_ns
         && end - lo < 20001)
    end++;
  if (end - lo > 20000)
    return; /* too dense to read: the spans say enough at this zoom */
  double last_x = -1;
  for (guint i = lo; i < end; i++)
    {
      const WickOp *op = &ops[self->ops_by_time[i]];
      if (op->span < 0 || (guint)op->span >= self->n_spans)
        continue;
      double x0 = floor (wick_timeline_viewport_time_to_x (view, op->timestamp_ns));
      double x1
        = MAX (floor (wick_timeline_viewport_time_to_x (view, op->timestamp_ns + op->duration_ns)),
               x0 + 1);
      if (x1 <= last_x)
        continue;
      last_x = x1;
      double y = flame_top () + self->spans[op->span].depth * WICK_TIMELINE_ROW - view->scroll_y
                 + WICK_TIMELINE_ROW - 4;
      cairo_rectangle (cr, x0, y, MAX (x1 - x0 - 1, 1), 3);
    }
  cairo_set_source_rgba (cr, 0, 0, 0, view->dark ? 0.55 : 0.4);
  cairo_fill (cr);
}

static void
draw_device_tracks (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (self->document, NULL);
  double top = device_top (self) - view->scroll_y;
  for (guint t = 0; t < self->tracks->len; t++)
    {
      DeviceTrack *track = g_ptr_array_index (self->tracks, t);
      double y = top + t * WICK_TIMELINE_ROW;
      if (y > view->height || y + WICK_TIMELINE_ROW < WICK_TIMELINE_RULER)
        continue;
      wick_palette_set (cr, wick_palette_grid (view->dark), t % 2 ? 0.25 : 0.5);
      cairo_rectangle (cr, WICK_TIMELINE_GUTTER, y, view->width - WICK_TIMELINE_GUTTER,
                       WICK_TIMELINE_ROW);
      cairo_fill (cr);
      guint lo = 0, hi = track->intervals->len;
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;
          if (g_array_index (track->max_end, guint64, mid) > view->start_ns)
            hi = mid;
          else
            lo = mid + 1;
        }
      double last_x1 = -1;
      for (guint i = lo; i < track->intervals->len; i++)
        {
          guint32 k = g_array_index (track->intervals, guint32, i);
          guint64 start = self->interval_start[k];
          if (start >= view->end_ns)
            break;
          double x0 = floor (
            MAX (wick_timeline_viewport_time_to_x (view, start), WICK_TIMELINE_GUTTER - 1));
          double x1 = MAX (floor (MIN (wick_timeline_viewport_time_to_x (
                                         view, wick_time_add (start, intervals[k].duration_ns)),
                                       view->width + 1)),
                           x0 + 1);
          if (x1 <= last_x1)
            continue;
          x0 = MAX (x0, last_x1);
          last_x1 = x1;
          gboolean dim = view->matches != NULL
                         && !(intervals[k].span >= 0 && view->matches[intervals[k].span]);
          guint colour = intervals[k].span >= 0 ? self->colour_ids[intervals[k].span] : 0;
          batch_rect (self, colour + (dim ? WICK_SPAN_COLOURS : 0), x0, x1 - (x1 - x0 > 3 ? 1 : 0),
                      y + 2, WICK_TIMELINE_ROW - 4);
        }
    }
  flush_batches (self, cr, view->dark);
}

static void
draw_gutter (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  WickRgb fg = wick_palette_foreground (view->dark);
  cairo_rectangle (cr, 0, 0, WICK_TIMELINE_GUTTER, view->height);
  cairo_set_source_rgba (cr, view->dark ? 0.16 : 0.96, view->dark ? 0.16 : 0.96,
                         view->dark ? 0.17 : 0.97, 1);
  cairo_fill (cr);
  wick_palette_set (cr, fg, 0.25);
  cairo_move_to (cr, WICK_TIMELINE_GUTTER - 0.5, 0);
  cairo_line_to (cr, WICK_TIMELINE_GUTTER - 0.5, view->height);
  cairo_stroke (cr);

  cairo_save (cr);
  cairo_rectangle (cr, 0, WICK_TIMELINE_RULER, WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
  wick_palette_set (cr, fg, 0.7);
  draw_text (self, cr, _ ("Wick events"), 10, WICK_TIMELINE_RULER + 3, WICK_TIMELINE_GUTTER - 16);
  guint n_depths = wick_timeline_index_get_n_depths (self->index);
  wick_palette_set (cr, fg, 0.9);
  const char *entry = wick_document_get_entrypoint (self->document);
  g_autofree char *host = g_strdup_printf (_ ("Host · %s"), entry ? entry : _ ("spans"));
  draw_text (self, cr, host, 10, flame_top () + 3 - view->scroll_y, WICK_TIMELINE_GUTTER - 16);
  wick_palette_set (cr, fg, 0.45);
  for (guint d = 1; d < n_depths; d++)
    {
      g_autofree char *label = g_strdup_printf (_ ("depth %u"), d);
      draw_text (self, cr, label, 22, flame_top () + d * WICK_TIMELINE_ROW + 3 - view->scroll_y,
                 -1);
    }
  wick_palette_set (cr, fg, 0.9);
  for (guint t = 0; t < self->tracks->len; t++)
    {
      DeviceTrack *track = g_ptr_array_index (self->tracks, t);
      draw_text (self, cr, track->name, 10,
                 device_top (self) + t * WICK_TIMELINE_ROW + 3 - view->scroll_y,
                 WICK_TIMELINE_GUTTER - 16);
    }
  cairo_restore (cr);
}

static void
draw_selection (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  WickRgb accent = wick_palette_accent (view->dark);
  if (view->range_end > view->range_start)
    {
      double x0
        = MAX (wick_timeline_viewport_time_to_x (view, view->range_start), WICK_TIMELINE_GUTTER);
      double x1 = MIN (wick_timeline_viewport_time_to_x (view, view->range_end), view->width);
      if (x1 > x0)
        {
          wick_palette_set (cr, accent, 0.15);
          cairo_rectangle (cr, x0, WICK_TIMELINE_RULER, x1 - x0, view->height);
          cairo_fill (cr);
          wick_palette_set (cr, accent, 0.9);
          cairo_rectangle (cr, x0, 0, x1 - x0, 4);
          cairo_fill (cr);
          g_autofree char *dur = wick_format_duration (view->range_end - view->range_start);
          draw_text (self, cr, dur, x0 + 4, WICK_TIMELINE_RULER + 3, MAX (x1 - x0 - 6, 30));
        }
    }
  if (view->selected_type == WICK_RECORD_SPAN && view->selected_index >= 0
      && (guint64)view->selected_index < self->n_spans)
    {
      cairo_rectangle_t r;
      if (wick_timeline_scene_span_rect (self, view, view->selected_index, &r))
        {
          cairo_set_line_width (cr, 2);
          wick_palette_set (cr, wick_palette_foreground (view->dark), 1);
          cairo_rectangle (cr, MAX (r.x, WICK_TIMELINE_GUTTER) + 1, r.y + 1,
                           MAX (MIN (r.width, view->width - r.x) - 2, 2), r.height - 2);
          cairo_stroke (cr);
          cairo_set_line_width (cr, 1);
        }
    }
}

static void
draw_hover_line (const WickTimelineViewport *view, cairo_t *cr)
{
  if (view->hover_x < WICK_TIMELINE_GUTTER)
    return;
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.35);
  cairo_move_to (cr, floor (view->hover_x) + 0.5, WICK_TIMELINE_RULER);
  cairo_line_to (cr, floor (view->hover_x) + 0.5, view->height);
  cairo_stroke (cr);
}

char *
wick_timeline_scene_cursor_label (WickTimelineScene *self, const WickTimelineViewport *view,
                                  double x)
{
  guint64 t = wick_timeline_viewport_x_to_time (view, x);
  guint64 rel = wick_time_sub (t, self->extent_start);
  /* The pointer's time to the finest digit a pixel resolves, rounded to
   * nearest, in the ruler's unit. */
  guint64 res = wick_time_axis_resolution (view_ns_per_px (view));
  guint64 rounded = wick_time_add (rel, res / 2) / res * res;
  return wick_format_time_label_in (rounded, res, wick_time_sub (view->end_ns, self->extent_start));
}

/* The pointer's time, in the ruler. */
static void
draw_hover_time (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  if (view->hover_x < WICK_TIMELINE_GUTTER || view->hover_x > view->width)
    return;
  g_autofree char *label = wick_timeline_scene_cursor_label (self, view, view->hover_x);
  PangoLayout *layout = scene_layout (self, cr);
  pango_layout_set_width (layout, -1);
  pango_layout_set_text (layout, label, -1);
  int w, h;
  pango_layout_get_pixel_size (layout, &w, &h);
  double x = CLAMP (view->hover_x - w / 2.0 - 4, WICK_TIMELINE_GUTTER, view->width - w - 8);
  wick_palette_set (cr, wick_palette_accent (view->dark), 1);
  cairo_rectangle (cr, x, 2, w + 8, WICK_TIMELINE_RULER - 6);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, x + 4, 2 + (WICK_TIMELINE_RULER - 6 - h) / 2.0);
  pango_cairo_show_layout (cr, layout);
}

void
wick_timeline_scene_draw (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_rectangle (cr, 0, 0, view->width, view->height);
  cairo_fill (cr);

  draw_ruler (self, cr, view);

  cairo_save (cr);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, WICK_TIMELINE_RULER,
                   view->width - WICK_TIMELINE_GUTTER, view->height - WICK_TIMELINE_RULER);
  cairo_clip (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  self->row_height = WICK_TIMELINE_ROW - 1;
  g_autoptr (GArray) labels = view->no_labels ? NULL : g_array_new (FALSE, FALSE, sizeof (Label));
  guint n_depths = wick_timeline_index_get_n_depths (self->index);
  for (guint d = 0; d < n_depths; d++)
    {
      double y = flame_top () + d * WICK_TIMELINE_ROW - view->scroll_y;
      if (y + WICK_TIMELINE_ROW < WICK_TIMELINE_RULER + WICK_TIMELINE_MARKER_ROW
          || y > view->height)
        continue;
      draw_depth (self, view, d, y, labels);
    }
  flush_batches (self, cr, view->dark);
  if (!view->hide_ops)
    draw_ops (self, cr, view);
  draw_device_tracks (self, cr, view);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
  if (labels)
    draw_labels (self, cr, view, labels);
  /* The marker row stays put while tracks scroll. */
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, WICK_TIMELINE_RULER, view->width,
                   WICK_TIMELINE_MARKER_ROW);
  cairo_fill (cr);
  draw_markers (self, cr, view);
  draw_selection (self, cr, view);
  draw_hover_line (view, cr);
  cairo_restore (cr);

  draw_hover_time (self, cr, view);
  if (self->n_spans == 0 && self->tracks->len == 0)
    {
      wick_palette_set (cr, wick_palette_foreground (view->dark), 0.55);
      PangoLayout *layout = scene_layout (self, cr);
      pango_layout_set_width (layout, -1);
      pango_layout_set_text (layout, _ ("No spans in this trace (yet)"), -1);
      int w, h;
      pango_layout_get_pixel_size (layout, &w, &h);
      cairo_move_to (cr, WICK_TIMELINE_GUTTER + (view->width - WICK_TIMELINE_GUTTER - w) / 2.0,
                     view->height / 3.0);
      pango_cairo_show_layout (cr, layout);
    }
  draw_gutter (self, cr, view);
  cairo_restore (cr);
}

void
wick_timeline_scene_draw_hover (WickTimelineScene *self, cairo_t *cr,
                                const WickTimelineViewport *view)
{
  if (view->hover_x < WICK_TIMELINE_GUTTER || view->end_ns <= view->start_ns)
    return;
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  draw_hover_line (view, cr);
  draw_hover_time (self, cr, view);
  cairo_restore (cr);
}

gboolean
wick_timeline_scene_span_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                               guint span, cairo_rectangle_t *rect)
{
  g_return_val_if_fail (span < self->n_spans, FALSE);
  double x0 = wick_timeline_viewport_time_to_x (view, self->spans[span].start_ns);
  double x1
    = wick_timeline_viewport_time_to_x (view, wick_timeline_index_span_end (self->index, span));
  rect->x = x0;
  rect->width = MAX (x1 - x0, 1);
  rect->y = flame_top () + self->spans[span].depth * WICK_TIMELINE_ROW - view->scroll_y;
  rect->height = WICK_TIMELINE_ROW - 1;
  return x1 >= WICK_TIMELINE_GUTTER && x0 <= view->width && rect->y < view->height
         && rect->y + rect->height > WICK_TIMELINE_RULER;
}

static gint64
hit_interval (WickTimelineScene *self, const WickTimelineViewport *view, guint t, guint64 time,
              guint64 slop)
{
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (self->document, NULL);
  DeviceTrack *track = g_ptr_array_index (self->tracks, t);
  guint64 lo_t = wick_time_sub (time, slop);
  guint lo = 0, hi = track->intervals->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (track->max_end, guint64, mid) >= lo_t)
        hi = mid;
      else
        lo = mid + 1;
    }
  for (guint i = lo; i < track->intervals->len; i++)
    {
      guint32 k = g_array_index (track->intervals, guint32, i);
      guint64 start = self->interval_start[k];
      if (start > wick_time_add (time, slop))
        break;
      if (wick_time_add (wick_time_add (start, intervals[k].duration_ns), slop) >= time)
        return k;
    }
  return -1;
}

WickRecordType
wick_timeline_scene_hit (WickTimelineScene *self, const WickTimelineViewport *view, double x,
                         double y, gint64 *index)
{
  *index = -1;
  if (x < WICK_TIMELINE_GUTTER || y < WICK_TIMELINE_RULER)
    return WICK_RECORD_NONE;
  guint64 time = wick_timeline_viewport_x_to_time (view, x);
  guint64 slop = wick_time_from_double (view_ns_per_px (view) * 2);

  if (y < WICK_TIMELINE_RULER + WICK_TIMELINE_MARKER_ROW)
    {
      guint n;
      const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
      guint64 best = G_MAXUINT64;
      for (guint i = 0; i < n; i++)
        {
          guint64 d
            = ext[i].timestamp_ns > time ? ext[i].timestamp_ns - time : time - ext[i].timestamp_ns;
          if (d / 3 <= slop && d < best)
            {
              best = d;
              *index = i;
            }
        }
      return *index >= 0 ? WICK_RECORD_EXTENSION : WICK_RECORD_NONE;
    }
  double content_y = y + view->scroll_y;
  int row = (int)floor ((content_y - flame_top ()) / WICK_TIMELINE_ROW);
  guint n_depths = wick_timeline_index_get_n_depths (self->index);
  if (row >= 0 && (guint)row < n_depths)
    {
      *index = wick_timeline_index_span_at (self->index, row, time, slop);
      return *index >= 0 ? WICK_RECORD_SPAN : WICK_RECORD_NONE;
    }
  int device_row = (int)floor ((content_y - device_top (self)) / WICK_TIMELINE_ROW);
  if (device_row >= 0 && (guint)device_row < self->tracks->len)
    {
      *index = hit_interval (self, view, device_row, time, slop);
      return *index >= 0 ? WICK_RECORD_DEVICE_INTERVAL : WICK_RECORD_NONE;
    }
  return WICK_RECORD_NONE;
}

void
wick_timeline_scene_draw_overview (WickTimelineScene *self, cairo_t *cr,
                                   const WickTimelineViewport *view, guint64 visible_start,
                                   guint64 visible_end)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, view->dark ? 0.16 : 0.96, view->dark ? 0.16 : 0.96,
                         view->dark ? 0.17 : 0.97, 1);
  cairo_paint (cr);
  guint n_depths = wick_timeline_index_get_n_depths (self->index);
  double top = 3, height = view->height - 6;
  double row = n_depths ? MAX (floor (height / n_depths), 1) : height;
  cairo_save (cr);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, 0, view->width - WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  self->row_height = MAX (row - (row > 3 ? 1 : 0), 1);
  for (guint d = 0; d < n_depths && top + d * row < view->height; d++)
    draw_depth (self, view, d, top + d * row, NULL);
  flush_batches (self, cr, view->dark);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
  /* The visible range: the rest is veiled. */
  double x0 = CLAMP (wick_timeline_viewport_time_to_x (view, visible_start), WICK_TIMELINE_GUTTER,
                     view->width);
  double x1 = CLAMP (wick_timeline_viewport_time_to_x (view, visible_end), WICK_TIMELINE_GUTTER,
                     view->width);
  x1 = MAX (x1, x0 + 2);
  cairo_set_source_rgba (cr, view->dark ? 0 : 1, view->dark ? 0 : 1, view->dark ? 0 : 1, 0.6);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, 0, x0 - WICK_TIMELINE_GUTTER, view->height);
  cairo_rectangle (cr, x1, 0, view->width - x1, view->height);
  cairo_fill (cr);
  wick_palette_set (cr, wick_palette_accent (view->dark), 1);
  cairo_rectangle (cr, floor (x0) + 0.5, 0.5, floor (x1 - x0), view->height - 1);
  cairo_stroke (cr);
  cairo_restore (cr);
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.7);
  draw_text (self, cr, _ ("Overview"), 10, view->height / 2.0 - 7, WICK_TIMELINE_GUTTER - 16);
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.25);
  cairo_move_to (cr, 0, view->height - 0.5);
  cairo_line_to (cr, view->width, view->height - 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}
