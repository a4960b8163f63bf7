/* wick-timeline-scene.c — see wick-timeline-scene.h for the contract. */
#include "wick-timeline-scene.h"
#include "wick-timeline-scene-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "model/wick-device-clock.h"
#include "model/wick-gpu-graphs.h"
#include "model/wick-steps.h"
#include "wick-format.h"
#include "wick-palette.h"
#include "wick-record-text.h"
#include "wick-timeline-axis.h"

int wick_timeline_gutter_width = WICK_TIMELINE_GUTTER_DEFAULT;

enum
{
  ITEM_PROCESS,
  ITEM_TRACK,
};

typedef struct
{
  guint8 type;   /* ITEM_* */
  guint8 pinned; /* in the pinned area (not scrolled) */
  guint32 index; /* process or track */
  int y;         /* top: in the pinned area from its top, else content y */
  int height;
} LayoutItem;

/* Batches: span colours, dimmed span colours, then the search-hit colour. */
#define N_BATCHES (2 * WICK_SPAN_COLOURS + 1)
#define BATCH_HIT (2 * WICK_SPAN_COLOURS)

typedef struct
{
  double x0, x1, y, h;
} Rect;

/* A name's drawn width in the frame (the legend's measure of visible time). */
typedef struct
{
  WickStr name; /* 0: free */
  guint8 colour;
  double px;
} LegendSlot;

#define LEGEND_SLOTS 4096 /* a power of two */

/* The busy time of a collapsed group: the union of its events' intervals,
 * merged and sorted, with the busy time before each (so the busy time in any
 * [t0, t1) is two binary searches, whatever the number of events). */
typedef struct
{
  guint n;
  guint64 *start, *end;
  guint64 *before; /* busy time of the intervals before the i-th */
} Coverage;

/* The scrolled band's pixels (below the pinned tracks), with what they were
 * drawn for: a frame of the same horizontal view, layout and content blits
 * them, moved by a vertical scroll of whole pixels with only the exposed
 * strip drawn (the same pixels as a full draw: every box is snapped to whole
 * pixels and nothing in the band depends on the scroll but its offset). */
typedef struct
{
  cairo_surface_t *surface; /* ARGB32, the frame's size; NULL: none yet */
  guint64 start_ns, end_ns;
  int width, height, gutter;
  double top; /* the band's top */
  gboolean dark, hide_ops, labels;
  guint layout_generation;
  guint64 stamp; /* content_stamp() */
  double scroll_y;
  double min_width;         /* the label threshold its text was drawn with */
  gboolean complete;        /* no row of it was sketched (a progressive frame's) */
  GHashTable *label_counts; /* track << 32 | row: label candidates (TracksPass) */
  /* the last frame drawn straight onto its target: a frame of a new range
   * (zooming, panning) does not pay for the layer; the layer is made by the
   * next frame of the same range */
  guint64 direct_start, direct_end;
  int direct_width;
  gboolean direct_complete; /* an unfinished range goes on without the layer */
} PlotLayer;

struct _WickTimelineScene
{
  WickDocument *document;
  WickTracks *tracks;
  const WickSpan *spans;
  guint n_spans;
  guint32 *ops_by_time;
  guint n_ops;
  guint64 extent_start, extent_end;
  guint8 *colour_ids;      /* per span */
  guint8 *device_colour_ids; /* per device slice of a Chrome trace */
  guint n_device_colours;
  GHashTable *device_name_colours; /* WickStr -> colour id, kept for updates */
  guint n_renames_seen, renames_all_seen; /* wick_tracks_get_device_renames() read */
  guint device_colours_renewed;           /* by updates, for the tests */
  gint64 *track_offset;    /* per track: device clock shift (candle-graph) */
  /* The device clocks (candle-graph), folded in by updates, and each track's
   * clock: its first interval's (-1: none yet), from the device slices seen. */
  WickDeviceClocks *clocks;
  gint64 *track_clock;
  guint n_offset_slices;
  char **track_names;      /* per track, as the gutter shows it */
  guint8 *collapsed;       /* per process */
  guint8 *pinned;          /* per track */
  guint8 *track_collapsed; /* per track: drawn as its summary row */
  guint8 *track_user;      /* per track: TRACK_USER_* (the user's choice beats the default) */
  Coverage **track_cover;  /* per track, built when first drawn collapsed */
  Coverage **process_cover; /* per process, the same */
  WickGpuGraphs *graphs;    /* built on first use */
  /* The legend of a Chrome trace: drawn width per name this frame (an
   * open-addressed table), then its top entries. */
  LegendSlot *legend_slots;
  gboolean legend_on;
  GArray *legend_capture; /* LegendSlot: the row being cached's share, or NULL */
  gboolean legend_capture_full;
  guint legend_capture_last; /* where the last name was found in it */
  LegendSlot legend[WICK_TIMELINE_LEGEND_MAX];
  guint64 legend_ns[WICK_TIMELINE_LEGEND_MAX];
  guint n_legend;
  gboolean legend_compiled; /* a compiled region was outlined this frame */
  GArray *compiled;         /* WickEventRef of torch.compile's regions (wick-gpu-graphs.h) */
  guint n_processes, n_tracks;
  const guint32 *order;
  guint32 *own_order; /* order less the tracks the marker row already shows */
  guint n_order;
  GArray *items; /* LayoutItem: pinned ones first, then the scrolled list */
  int pinned_height, scrolled_height;
  int *track_item; /* per track: index in items, -1 when hidden */
  GArray *batches[N_BATCHES];
  PangoLayout *layout;
  GPtrArray *marker_labels; /* char *, per extension record */
  gboolean has_markers;
  GArray *steps; /* guint32: span index of each ProfilerStep#N, by start (model/wick-steps.h) */
  /* The gutter's text is a frame's fixed cost: kept as an image while the
   * layout, scroll, height and theme stay. */
  cairo_surface_t *gutter;
  guint layout_generation, gutter_generation;
  double gutter_scroll;
  int gutter_height;
  gboolean gutter_dark;
  /* Zoomed out, a dense row's rectangles depend on the horizontal view
   * alone: kept per row (RowCache, by track << 32 | row) so that a frame
   * with the same time range and width (scrolling the track list, a new
   * selection, the range box) draws them again without reading the events. */
  GHashTable *row_cache;
  gboolean row_cache_off; /* wick_timeline_scene_set_row_cache (the benchmark's baseline) */
  /* What wick_timeline_scene_update() starts from: the model's serials, the
   * counts of what was seen, the spans open then, the extent before the
   * document's end, the terminal and the device tracks joined it. */
  guint64 build_serial, append_serial;
  guint n_counters_seen, n_instants_seen, n_ext_seen, n_device_seen;
  GArray *open_spans;
  guint64 host_start, host_end; /* host_start G_MAXUINT64: nothing yet */
  guint64 device_start, device_end;
  gboolean any_device;
  PlotLayer layer;
  /* progressive frames: past this time (µs, 0: never) an uncached summary
   * row is drawn from a coarser level and the frame is not complete */
  gint64 row_deadline;
  gint64 row_budget_us; /* ROW_BUDGET_US unless a test sets it */
  guint rows_walked;    /* summary walks this frame: at least one, whatever the time */
  gboolean incomplete;
  /* process-unique: a scene made where a freed one was (the same address)
   * never shares a stamp with it; bumped by each update in place */
  guint64 serial;
};

/* A progressive frame's time for the summary walks of its rows (µs): with
 * the rest of a frame it stays within 8 ms. */
#define ROW_BUDGET_US 3000
/* An unfinished row is drawn this many levels coarser (1/16 the entries). */
#define PLACEHOLDER_LEVELS 4

typedef struct
{
  guint8 batch;
  double x0, x1;
} CachedRect;

typedef struct
{
  guint64 start_ns, end_ns, q0;
  int width;
  int level;
  gint64 offset;
  guint n_events, level_count; /* a row that grew (live) is drawn afresh */
  double h;
  gboolean labels;
  GArray *rects;  /* CachedRect, in the order they were batched */
  GArray *labels_x; /* Label with y unset */
  gboolean measured;    /* drawn with the legend on: its share of it is in legend */
  gboolean legend_full; /* more names than ROW_LEGEND_MAX: not replayable */
  GArray *legend;       /* LegendSlot, in the order the names first came */
} RowCache;

static void
row_cache_free (gpointer data)
{
  RowCache *c = data;
  g_array_unref (c->rects);
  g_array_unref (c->labels_x);
  g_array_unref (c->legend);
  g_free (c);
}

/* @rgb at @alpha over the background, as one opaque colour: opaque fills
 * are pixman's fast path, and a frame fills every track's band. */
static void
set_blended (cairo_t *cr, WickRgb rgb, double alpha, gboolean dark)
{
  WickRgb bg = wick_palette_background (dark);
  cairo_set_source_rgb (cr, rgb.r * alpha + bg.r * (1 - alpha), rgb.g * alpha + bg.g * (1 - alpha),
                        rgb.b * alpha + bg.b * (1 - alpha));
}

/* Top of the step row (under the marker row). */
static int
step_row_top (const WickTimelineScene *self)
{
  return WICK_TIMELINE_RULER + (self->has_markers ? WICK_TIMELINE_MARKER_ROW : 0);
}

static int
top_of_tracks (const WickTimelineScene *self)
{
  return step_row_top (self) + (self->steps->len ? WICK_TIMELINE_STEP_ROW : 0);
}

/* ---- building ------------------------------------------------------------ */

static guint64
shift (guint64 t, gint64 offset)
{
  if (offset >= 0)
    return wick_time_add (t, (guint64)offset);
  return wick_time_sub (t, (guint64)(-offset));
}

/* Device tracks of a candle-graph trace: one clock offset per track (its
 * first interval's clock's, wick-device-clock.h), so the model's per-row index still answers
 * "what overlaps [t0, t1)" for the shifted range. Called again by an update:
 * the clocks fold in what the document gained, and only the device slices
 * added since are looked at for a track's clock (a slice's interval is
 * there when the slice is: the model makes it from it). */
static void
build_offsets (WickTimelineScene *self)
{
  guint n_intervals, n_device;
  const WickDeviceInterval *intervals
    = wick_document_get_device_intervals (self->document, &n_intervals);
  const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, &n_device);
  if (self->clocks != NULL)
    wick_device_clocks_update (self->clocks, self->document);
  else if (n_intervals > 0)
    self->clocks = wick_device_clocks_new (self->document);
  for (guint i = self->n_offset_slices; i < n_device; i++)
    {
      if (device[i].source < 0 || (guint)device[i].source >= n_intervals
          || device[i].track >= self->n_tracks || self->track_clock[device[i].track] >= 0)
        continue;
      self->track_clock[device[i].track] = intervals[device[i].source].clock_id;
    }
  self->n_offset_slices = n_device;
  for (guint t = 0; t < self->n_tracks; t++)
    self->track_offset[t]
      = self->track_clock[t] >= 0
          ? wick_device_clocks_get_offset (self->clocks, (WickStr)self->track_clock[t])
          : 0;
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
marker_label (WickDocument *doc, const WickExtensionRecord *ext)
{
  /* the record's label, module, stage and verdict were decoded when it was
   * committed (a string member each, NULL when absent) */
  const char *kind = wick_document_str (doc, ext->kind);
  const char *shown = kind && g_str_has_prefix (kind, "wick_") ? kind + 5 : kind ? kind : "?";
  const char *label = ext->label ? wick_document_str (doc, ext->label) : NULL;
  const char *module = ext->module ? wick_document_str (doc, ext->module) : NULL;
  const char *stage = ext->stage ? wick_document_str (doc, ext->stage) : NULL;
  const char *verdict = ext->verdict ? wick_document_str (doc, ext->verdict) : NULL;
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

/* Labels for the extension records the document holds now: a live
 * document grows after the scene was built, so drawing and lookups first add
 * the labels of records appended since (they indexed past the array and
 * crashed the live window in pango_layout_set_text). */
static void
extend_marker_labels (WickTimelineScene *self)
{
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
  for (guint i = self->marker_labels->len; i < n; i++)
    g_ptr_array_add (self->marker_labels, marker_label (self->document, &ext[i]));
}

static void
build_marker_labels (WickTimelineScene *self)
{
  guint n;
  wick_document_get_extensions (self->document, &n);
  self->marker_labels = g_ptr_array_new_with_free_func (g_free);
  extend_marker_labels (self);
  self->has_markers = n > 0
                      || (wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CANDLE_GRAPH
                          && wick_document_has_terminal (self->document));
}

guint
wick_timeline_scene_get_n_steps (WickTimelineScene *self)
{
  return self->steps->len;
}

int
wick_timeline_scene_get_step_row_top (WickTimelineScene *self)
{
  return self->steps->len ? step_row_top (self) : -1;
}

const char *
wick_timeline_scene_get_marker_label (WickTimelineScene *self, guint extension)
{
  extend_marker_labels (self);
  g_return_val_if_fail (extension < self->marker_labels->len, NULL);
  return g_ptr_array_index (self->marker_labels, extension);
}

static char *
track_label (WickTimelineScene *self, guint32 t)
{
  guint n;
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, &n)[t];
  const WickThread *threads = wick_tracks_get_threads (self->tracks, NULL);
  const char *name = wick_document_str (self->document, track->name);
  switch (track->kind)
    {
      case WICK_TRACK_SLICES:
        {
          const WickThread *thread = track->thread >= 0 ? &threads[track->thread] : NULL;
          const char *tname = thread ? wick_document_str (self->document, thread->name) : NULL;
          if (tname && *tname)
            {
              g_autofree char *tid = g_strdup_printf ("%" G_GINT64_FORMAT, thread->tid);
              return thread->tid > 0 && strstr (tname, tid) == NULL
                       ? g_strdup_printf ("%s %s", tname, tid)
                       : g_strdup (tname);
            }
          if (thread)
            {
              g_autofree char *tid = g_strdup_printf ("%" G_GINT64_FORMAT, thread->tid);
              return g_strdup_printf (_ ("thread %s"), tid);
            }
          return g_strdup (name && *name ? name : _ ("slices"));
        }
      case WICK_TRACK_INSTANTS:
        if (track->scope == WICK_INSTANT_SCOPE_GLOBAL)
          return g_strdup (_ ("global instants"));
        if (track->thread >= 0)
          {
            const char *tname = wick_document_str (self->document, threads[track->thread].name);
            return g_strdup_printf (_ ("%s · instants"), tname && *tname ? tname : "thread");
          }
        return g_strdup (_ ("instants"));
      case WICK_TRACK_DEVICE:
        {
          /* a stream the file wrote as a named thread ("Stream 101" of an
           * MTIA queue): the thread's name, unless the track's says it already */
          const char *tname = track->thread >= 0
                                ? wick_document_str (self->document, threads[track->thread].name)
                                : NULL;
          g_autofree char *folded_name = g_utf8_casefold (name ? name : "", -1);
          g_autofree char *folded_thread = g_utf8_casefold (tname ? tname : "", -1);
          g_strstrip (folded_thread); /* Kineto's "stream 7 " */
          if (tname && *tname && strstr (folded_name, folded_thread) == NULL)
            return g_strdup_printf ("%s · %s", name && *name ? name : C_ ("track kind", "device"),
                                    tname);
          return g_strdup (name && *name ? name : wick_track_kind_name (track->kind));
        }
      case WICK_TRACK_COUNTER:
        {
          char *shown = wick_track_display_name (self->tracks, t);
          return shown ? shown : g_strdup (wick_track_kind_name (track->kind));
        }
      default:
        return g_strdup (name && *name ? name : wick_track_kind_name (track->kind));
    }
}

static void relayout (WickTimelineScene *self);
static gboolean track_collapsible (WickTimelineScene *self, guint32 t);
static gboolean track_collapsed_by_default (WickTimelineScene *self, guint32 t);
static void coverage_free (Coverage *c);

/* A colour of the whole palette for @name: its text's hash (cached per interned string). */
static guint8
name_colour_id (GHashTable *cache, WickDocument *document, WickStr name)
{
  gpointer found;
  if (g_hash_table_lookup_extended (cache, GUINT_TO_POINTER (name), NULL, &found))
    return (guint8)GPOINTER_TO_UINT (found);
  const char *text = name ? wick_document_str (document, name) : "";
  guint8 id = (guint8)(g_str_hash (text) % WICK_SPAN_COLOURS);
  g_hash_table_insert (cache, GUINT_TO_POINTER (name), GUINT_TO_POINTER (id));
  return id;
}

gboolean
wick_timeline_scene_process_is_gpu (WickTimelineScene *self, guint32 process)
{
  guint n_processes, n_tracks;
  const WickProcess *processes = wick_tracks_get_processes (self->tracks, &n_processes);
  g_return_val_if_fail (process < n_processes, FALSE);
  const WickProcess *p = &processes[process];
  const char *labels = p->labels ? wick_document_str (self->document, p->labels) : NULL;
  if (labels && (g_str_has_prefix (labels, "GPU") || g_str_has_prefix (labels, "MTIA")))
    return TRUE;
  /* unlabelled: a process of device streams alone */
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, &n_tracks);
  gboolean any = FALSE;
  for (guint t = 0; t < n_tracks; t++)
    if (tracks[t].process == (gint32)process && tracks[t].n_events > 0)
      {
        if (tracks[t].kind != WICK_TRACK_DEVICE)
          return FALSE;
        any = TRUE;
      }
  return any;
}

/* A profiler trace's GPU streams are what its reader came for, and a few rows
 * against the host's deep stacks: each run of GPU processes in the model's
 * order (Kineto sorts them after the host: sort index 5000000 + device)
 * moves ahead of the run of host processes before it. One trace: the GPUs,
 * then the host; a job of ranks (sorted by rank): each rank's GPUs, then its
 * host, rank by rank. Tracks of no process stay last. */
static void
gpu_processes_first (WickTimelineScene *self)
{
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, NULL);
  g_autofree guint32 *sequence = g_new (guint32, MAX (self->n_processes, 1));
  g_autofree guint8 *seen = g_new0 (guint8, MAX (self->n_processes, 1));
  guint n_seq = 0;
  for (guint i = 0; i < self->n_order; i++)
    {
      gint32 p = tracks[self->order[i]].process;
      if (p >= 0 && !seen[p])
        {
          seen[p] = 1;
          sequence[n_seq++] = (guint32)p;
        }
    }
  g_autofree guint32 *moved = g_new (guint32, MAX (n_seq, 1));
  guint n_moved = 0;
  gboolean changed = FALSE;
  for (guint i = 0; i < n_seq;)
    {
      guint host_start = i;
      while (i < n_seq && !wick_timeline_scene_process_is_gpu (self, sequence[i]))
        i++;
      guint gpu_start = i;
      while (i < n_seq && wick_timeline_scene_process_is_gpu (self, sequence[i]))
        i++;
      for (guint k = gpu_start; k < i; k++)
        moved[n_moved++] = sequence[k];
      for (guint k = host_start; k < gpu_start; k++)
        moved[n_moved++] = sequence[k];
      changed |= gpu_start > host_start && i > gpu_start;
    }
  if (!changed)
    return;
  /* tracks by the new process order, each process's in the model's order */
  g_autofree guint *rank = g_new (guint, MAX (self->n_processes, 1));
  for (guint k = 0; k < n_moved; k++)
    rank[moved[k]] = k;
  g_autofree guint *count = g_new0 (guint, n_moved + 2);
  for (guint i = 0; i < self->n_order; i++)
    {
      gint32 p = tracks[self->order[i]].process;
      count[(p >= 0 ? rank[p] : n_moved) + 1]++;
    }
  for (guint k = 0; k <= n_moved; k++)
    count[k + 1] += count[k];
  guint32 *order = g_new (guint32, MAX (self->n_order, 1));
  for (guint i = 0; i < self->n_order; i++)
    {
      gint32 p = tracks[self->order[i]].process;
      order[count[p >= 0 ? rank[p] : n_moved]++] = self->order[i];
    }
  g_free (self->own_order);
  self->own_order = order;
  self->order = order;
}

WickTimelineScene *
wick_timeline_scene_new (WickDocument *document)
{
  static gint next_serial; /* loading workers make scenes too */
  WickTimelineScene *self = g_new0 (WickTimelineScene, 1);
  self->serial = (guint64)(guint)g_atomic_int_add (&next_serial, 1) << 32;
  self->document = g_object_ref (document);
  self->tracks = wick_document_get_tracks (document);
  self->spans = wick_document_get_spans (document, &self->n_spans);
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, &self->n_tracks);
  wick_tracks_get_processes (self->tracks, &self->n_processes);
  self->order = wick_tracks_get_display_order (self->tracks, &self->n_order);
  if (wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CANDLE_GRAPH)
    {
      /* A candle-graph trace's instants are its Wick extension records, which
       * the marker row under the ruler draws and labels already: not again as
       * a track (the model and `wick-trace tracks` keep them). */
      self->own_order = g_new (guint32, MAX (self->n_order, 1));
      guint n = 0;
      for (guint i = 0; i < self->n_order; i++)
        if (tracks[self->order[i]].kind != WICK_TRACK_INSTANTS)
          self->own_order[n++] = self->order[i];
      self->order = self->own_order;
      self->n_order = n;
    }

  if (wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CHROME)
    gpu_processes_first (self);

  /* Extent: every event of the model, the document's end, the markers. */
  guint64 start = G_MAXUINT64, end = 0;
  gboolean any = FALSE;
  for (guint i = 0; i < self->n_tracks; i++)
    if (tracks[i].n_events > 0)
      any = TRUE;
  gboolean candle = wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CANDLE_GRAPH;
  if (any && !candle)
    {
      start = wick_tracks_get_start_ns (self->tracks);
      end = wick_tracks_get_end_ns (self->tracks);
    }
  else if (any)
    {
      /* Device intervals are on their own clocks: they join below, shifted. */
      for (guint i = 0; i < self->n_spans; i++)
        {
          WickEventRef ref = { WICK_EVENT_SLICE, i };
          start = MIN (start, self->spans[i].start_ns);
          end = MAX (end, wick_tracks_event_end (self->tracks, ref));
        }
      guint n;
      const WickCounterSample *samples = wick_tracks_get_counter_samples (self->tracks, &n);
      for (guint i = 0; i < n; i++)
        {
          start = MIN (start, samples[i].timestamp_ns);
          end = MAX (end, samples[i].timestamp_ns);
        }
      const WickInstant *instants = wick_tracks_get_instants (self->tracks, &n);
      for (guint i = 0; i < n; i++)
        {
          start = MIN (start, instants[i].timestamp_ns);
          end = MAX (end, instants[i].timestamp_ns);
        }
    }
  guint n_ext;
  const WickExtensionRecord *ext = wick_document_get_extensions (document, &n_ext);
  for (guint i = 0; i < n_ext; i++)
    {
      start = MIN (start, ext[i].timestamp_ns);
      end = MAX (end, ext[i].timestamp_ns);
    }
  self->host_start = start;
  if (start == G_MAXUINT64)
    start = 0;
  if (candle)
    {
      end = MAX (end, wick_document_get_end_ns (document));
      if (wick_document_has_terminal (document))
        end = MAX (end, wick_document_get_terminal_ns (document));
    }
  self->extent_start = start;
  self->extent_end = MAX (end, start);

  self->track_offset = g_new (gint64, MAX (self->n_tracks, 1));
  self->track_clock = g_new (gint64, MAX (self->n_tracks, 1));
  for (guint t = 0; t < self->n_tracks; t++)
    self->track_clock[t] = -1;
  build_offsets (self);
  /* Device clocks that start before the host: the extent covers them. */
  guint n_device;
  const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, &n_device);
  self->device_start = G_MAXUINT64;
  for (guint i = 0; i < n_device; i++)
    if (candle)
      {
        guint64 s = shift (device[i].start_ns, self->track_offset[device[i].track]);
        self->device_start = MIN (self->device_start, s);
        self->device_end = MAX (self->device_end, wick_time_add (s, device[i].duration_ns));
        self->any_device = TRUE;
      }
  if (self->any_device)
    {
      self->extent_start = MIN (self->extent_start, self->device_start);
      self->extent_end = MAX (self->extent_end, self->device_end);
    }
  self->build_serial = wick_tracks_get_build_serial (self->tracks);
  self->append_serial = wick_tracks_get_append_serial (self->tracks);
  wick_tracks_get_counter_samples (self->tracks, &self->n_counters_seen);
  wick_tracks_get_instants (self->tracks, &self->n_instants_seen);
  self->n_ext_seen = n_ext;
  self->n_device_seen = n_device;
  /* the host extent's end less the open spans (an open span's drawn end
   * moves, and falls back when it closes) */
  self->open_spans = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->host_end = 0;
  for (guint i = 0; i < self->n_spans; i++)
    if (!(self->spans[i].flags & WICK_SPAN_FLAG_CLOSED))
      g_array_append_val (self->open_spans, i);
    else
      self->host_end = MAX (self->host_end, self->spans[i].start_ns + self->spans[i].duration_ns);
  {
    guint n;
    const WickCounterSample *samples = wick_tracks_get_counter_samples (self->tracks, &n);
    for (guint i = 0; i < n; i++)
      self->host_end = MAX (self->host_end, samples[i].timestamp_ns);
    const WickInstant *instants = wick_tracks_get_instants (self->tracks, &n);
    for (guint i = 0; i < n; i++)
      self->host_end = MAX (self->host_end, instants[i].timestamp_ns);
    for (guint i = 0; i < n_ext; i++)
      self->host_end = MAX (self->host_end, ext[i].timestamp_ns);
  }

  self->track_names = g_new0 (char *, self->n_tracks + 1);
  for (guint t = 0; t < self->n_tracks; t++)
    self->track_names[t] = track_label (self, t);

  build_ops (self);
  build_marker_labels (self);
  {
    /* The step row: torch.profiler's steps (a repeated child of the root is
     * a step for compare's statistics, not a marker worth a row) */
    g_autoptr (WickSteps) steps = wick_steps_find (document);
    self->steps = steps->source == WICK_STEPS_PROFILER ? g_array_ref (steps->spans)
                                                       : g_array_new (FALSE, FALSE, sizeof (guint32));
  }
  self->colour_ids = g_new (guint8, MAX (self->n_spans, 1));
  {
    /* A Chrome trace has no candle-graph steps: every colour of the palette
     * goes by name, a stable hue per name from one file to the next (the
     * string's hash, not where it was interned). */
    gboolean by_name = wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CHROME;
    GHashTable *cache = g_hash_table_new (NULL, NULL);
    guint nd;
    const WickDeviceSlice *d = wick_tracks_get_device_slices (self->tracks, &nd);
    for (guint i = 0; i < self->n_spans; i++)
      self->colour_ids[i]
        = by_name ? name_colour_id (cache, document, self->spans[i].name)
                  : wick_palette_span_colour_id (self->spans[i].step,
                                                 wick_document_str (document, self->spans[i].name));
    self->device_colour_ids = g_new (guint8, MAX (nd, 1));
    self->n_device_colours = nd;
    for (guint i = 0; i < nd; i++)
      self->device_colour_ids[i] = name_colour_id (cache, document, d[i].name);
    self->device_name_colours = cache;
    wick_tracks_get_device_renames (self->tracks, &self->n_renames_seen, &self->renames_all_seen);
  }
  for (guint i = 0; i < N_BATCHES; i++)
    self->batches[i] = g_array_new (FALSE, FALSE, sizeof (Rect));
  self->row_cache = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, row_cache_free);
  self->layer.label_counts = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->row_budget_us = ROW_BUDGET_US;
  self->compiled = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
  if (wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CHROME)
    {
      /* torch.compile's regions, outlined (names compare once per distinct string) */
      g_autoptr (GHashTable) kinds = g_hash_table_new (NULL, NULL);
      for (int pass = 0; pass < 2; pass++)
        {
          guint n;
          const WickDeviceSlice *d = wick_tracks_get_device_slices (self->tracks, &n);
          if (pass == 0)
            n = self->n_spans;
          for (guint i = 0; i < n; i++)
            {
              WickStr name = pass == 0 ? self->spans[i].name : d[i].name;
              gpointer found;
              if (!g_hash_table_lookup_extended (kinds, GUINT_TO_POINTER (name), NULL, &found))
                {
                  found = GUINT_TO_POINTER (
                    wick_gpu_compiled_kind (wick_document_str (document, name)));
                  g_hash_table_insert (kinds, GUINT_TO_POINTER (name), found);
                }
              if (GPOINTER_TO_UINT (found) != WICK_COMPILED_NONE)
                {
                  WickEventRef ref = { pass == 0 ? WICK_EVENT_SLICE : WICK_EVENT_DEVICE, i };
                  g_array_append_val (self->compiled, ref);
                }
            }
        }
    }
  self->collapsed = g_new0 (guint8, MAX (self->n_processes, 1));
  self->pinned = g_new0 (guint8, MAX (self->n_tracks, 1));
  self->track_collapsed = g_new0 (guint8, MAX (self->n_tracks, 1));
  self->track_user = g_new0 (guint8, MAX (self->n_tracks, 1));
  self->track_cover = g_new0 (Coverage *, MAX (self->n_tracks, 1));
  self->process_cover = g_new0 (Coverage *, MAX (self->n_processes, 1));
  for (guint t = 0; t < self->n_tracks; t++)
    self->track_collapsed[t] = track_collapsible (self, t) && track_collapsed_by_default (self, t);
  self->track_item = g_new (int, MAX (self->n_tracks, 1));
  self->items = g_array_new (FALSE, FALSE, sizeof (LayoutItem));
  relayout (self);
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
  g_free (self->own_order);
  g_free (self->ops_by_time);
  g_free (self->colour_ids);
  g_free (self->device_colour_ids);
  g_clear_pointer (&self->device_name_colours, g_hash_table_unref);
  g_free (self->track_offset);
  g_free (self->track_clock);
  wick_device_clocks_free (self->clocks);
  g_strfreev (self->track_names);
  g_free (self->collapsed);
  g_free (self->pinned);
  g_free (self->track_collapsed);
  g_free (self->track_user);
  for (guint t = 0; t < self->n_tracks; t++)
    coverage_free (self->track_cover[t]);
  g_free (self->track_cover);
  for (guint p = 0; p < self->n_processes; p++)
    coverage_free (self->process_cover[p]);
  g_free (self->process_cover);
  g_clear_pointer (&self->graphs, wick_gpu_graphs_free);
  g_free (self->legend_slots);
  g_array_unref (self->compiled);
  g_free (self->track_item);
  g_array_unref (self->items);
  for (guint i = 0; i < N_BATCHES; i++)
    g_array_unref (self->batches[i]);
  g_hash_table_unref (self->row_cache);
  g_clear_pointer (&self->layer.surface, cairo_surface_destroy);
  g_hash_table_unref (self->layer.label_counts);
  g_clear_object (&self->layout);
  g_clear_pointer (&self->gutter, cairo_surface_destroy);
  g_ptr_array_unref (self->marker_labels);
  g_array_unref (self->steps);
  g_array_unref (self->open_spans);
  g_object_unref (self->document);
  g_free (self);
}

/* ---- layout -------------------------------------------------------------- */

/* A track of several rows (a thread's nested slices, async lanes, a
 * stream's annotations over its kernels) can collapse to one summary row. */
static gboolean
track_collapsible (WickTimelineScene *self, guint32 t)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[t];
  if (track->kind != WICK_TRACK_SLICES && track->kind != WICK_TRACK_ASYNC
      && track->kind != WICK_TRACK_DEVICE)
    return FALSE;
  return wick_tracks_track_n_rows (self->tracks, t) > 1;
}

/* Collapsed until the user says otherwise: a thread deeper than
 * WICK_TIMELINE_DEEP_ROWS (torch's with_stack puts a 60-deep Python stack
 * on the main thread, which would push every GPU stream off the screen). */
static gboolean
track_collapsed_by_default (WickTimelineScene *self, guint32 t)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[t];
  return track->kind == WICK_TRACK_SLICES
         && wick_tracks_track_n_rows (self->tracks, t) > WICK_TIMELINE_DEEP_ROWS;
}

enum
{
  TRACK_USER_DEFAULT,
  TRACK_USER_COLLAPSED,
  TRACK_USER_EXPANDED,
};

static void
coverage_free (Coverage *c)
{
  if (c == NULL)
    return;
  g_free (c->start);
  g_free (c->end);
  g_free (c->before);
  g_free (c);
}

static int
compare_intervals (gconstpointer pa, gconstpointer pb)
{
  const guint64 *a = pa, *b = pb;
  if (a[0] != b[0])
    return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* A slice that holds work rather than doing it: a Python frame (torch's
 * with_stack) or a record_function range (ProfilerStep#N). */
static gboolean
is_python_frame (WickTimelineScene *self, guint32 span)
{
  const char *category = wick_tracks_span_category (self->tracks, span);
  return g_strcmp0 (category, "python_function") == 0
         || g_strcmp0 (category, "user_annotation") == 0;
}

/* A thread's busy time: its outermost row (deeper rows nest inside it);
 * when that row holds Python frames or record_function ranges (torch's
 * with_stack: one `<module>` frame spans the whole run; ProfilerStep#N spans
 * each step), the union of the other slices (operators, runtime calls), at
 * any depth. */
static void
collect_busy_slices (WickTimelineScene *self, guint32 t, GArray *out)
{
  guint rows = wick_tracks_track_n_rows (self->tracks, t);
  const WickTrackRow *row0 = wick_tracks_track_row (self->tracks, t, 0);
  gboolean frames = FALSE;
  for (guint i = 0; row0 != NULL && i < row0->n_events && !frames; i++)
    frames = is_python_frame (self, row0->events[i]);
  guint before = out->len;
  for (guint r = 0; r < (frames ? rows : MIN (rows, 1)); r++)
    {
      const WickTrackRow *row = wick_tracks_track_row (self->tracks, t, r);
      for (guint i = 0; row != NULL && i < row->n_events; i++)
        {
          if (frames && is_python_frame (self, row->events[i]))
            continue;
          WickEventRef ref = { WICK_EVENT_SLICE, row->events[i] };
          guint64 iv[2];
          wick_timeline_scene_event_extent (self, ref, &iv[0], &iv[1]);
          iv[1] = MAX (iv[1], iv[0] + 1);
          g_array_append_vals (out, iv, 2);
        }
    }
  if (frames && out->len == before)
    {
      /* frames and nothing else: the outermost row, as any thread */
      for (guint i = 0; i < row0->n_events; i++)
        {
          WickEventRef ref = { WICK_EVENT_SLICE, row0->events[i] };
          guint64 iv[2];
          wick_timeline_scene_event_extent (self, ref, &iv[0], &iv[1]);
          iv[1] = MAX (iv[1], iv[0] + 1);
          g_array_append_vals (out, iv, 2);
        }
    }
}

/* Appends (start, end) of every event of @t that keeps it busy: a slices
 * track's outermost row (its deeper rows nest inside it), every lane of an
 * async track, a device track's kernels, copies and fills (its annotations
 * too with @annotations: a group of annotations and nothing else). Counters
 * and instants are not busy time. */
static void
collect_busy (WickTimelineScene *self, guint32 t, gboolean annotations, GArray *out)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[t];
  guint rows = wick_tracks_track_n_rows (self->tracks, t);
  const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, NULL);
  if (track->kind == WICK_TRACK_SLICES)
    {
      collect_busy_slices (self, t, out);
      return;
    }
  if (track->kind != WICK_TRACK_ASYNC && track->kind != WICK_TRACK_DEVICE)
    return;
  for (guint r = 0; r < rows; r++)
    {
      const WickTrackRow *row = wick_tracks_track_row (self->tracks, t, r);
      for (guint i = 0; row != NULL && i < row->n_events; i++)
        {
          WickEventRef ref = { row->event_kind, row->events[i] };
          if (!annotations && ref.kind == WICK_EVENT_DEVICE
              && device[ref.index].kind == WICK_DEVICE_ANNOTATION)
            continue;
          guint64 iv[2];
          wick_timeline_scene_event_extent (self, ref, &iv[0], &iv[1]);
          iv[1] = MAX (iv[1], iv[0] + 1); /* an instant is busy for a nanosecond */
          g_array_append_vals (out, iv, 2);
        }
    }
}

static Coverage *
coverage_new (GArray *pairs)
{
  guint n = pairs->len / 2;
  guint64 *iv = (guint64 *)(gpointer)pairs->data;
  gboolean sorted = TRUE;
  for (guint i = 1; i < n && sorted; i++)
    sorted = compare_intervals (&iv[2 * (i - 1)], &iv[2 * i]) <= 0;
  if (!sorted)
    qsort (iv, n, 2 * sizeof (guint64), compare_intervals);
  Coverage *c = g_new0 (Coverage, 1);
  c->start = g_new (guint64, MAX (n, 1));
  c->end = g_new (guint64, MAX (n, 1));
  c->before = g_new (guint64, MAX (n, 1));
  guint64 busy = 0;
  for (guint i = 0; i < n; i++)
    {
      guint64 s = iv[2 * i], e = iv[2 * i + 1];
      if (c->n > 0 && s <= c->end[c->n - 1])
        {
          if (e > c->end[c->n - 1])
            {
              busy += e - c->end[c->n - 1];
              c->end[c->n - 1] = e;
            }
          continue;
        }
      c->start[c->n] = s;
      c->end[c->n] = e;
      c->before[c->n] = busy;
      busy += e - s;
      c->n++;
    }
  return c;
}

/* Busy time of @c in [0, t). */
static guint64
coverage_until (const Coverage *c, guint64 t)
{
  guint lo = 0, hi = c->n; /* first interval starting at or after t */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (c->start[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return 0;
  guint i = lo - 1;
  return c->before[i] + MIN (t, c->end[i]) - c->start[i];
}

static const Coverage *
track_coverage (WickTimelineScene *self, guint32 t)
{
  if (self->track_cover[t] == NULL)
    {
      g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (guint64));
      collect_busy (self, t, FALSE, pairs);
      if (pairs->len == 0)
        collect_busy (self, t, TRUE, pairs);
      self->track_cover[t] = coverage_new (pairs);
    }
  return self->track_cover[t];
}

static const Coverage *
process_coverage (WickTimelineScene *self, guint32 p)
{
  if (self->process_cover[p] == NULL)
    {
      g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (guint64));
      const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, NULL);
      for (int annotations = 0; annotations < 2 && pairs->len == 0; annotations++)
        for (guint i = 0; i < self->n_order; i++)
          if (tracks[self->order[i]].process == (gint32)p)
            collect_busy (self, self->order[i], annotations, pairs);
      self->process_cover[p] = coverage_new (pairs);
    }
  return self->process_cover[p];
}

double
wick_timeline_scene_busy_fraction (WickTimelineScene *self, gint32 process, guint32 track,
                                   guint64 t0, guint64 t1)
{
  if (t1 <= t0)
    return 0;
  const Coverage *c;
  if (process >= 0)
    {
      g_return_val_if_fail ((guint)process < self->n_processes, 0);
      c = process_coverage (self, (guint32)process);
    }
  else
    {
      g_return_val_if_fail (track < self->n_tracks, 0);
      c = track_coverage (self, track);
    }
  return (double)(coverage_until (c, t1) - coverage_until (c, t0)) / (double)(t1 - t0);
}

static int
track_height (WickTimelineScene *self, guint32 t)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[t];
  if (self->track_collapsed[t])
    return WICK_TIMELINE_ROW;
  switch (track->kind)
    {
      case WICK_TRACK_COUNTER:
        return WICK_TIMELINE_COUNTER_HEIGHT;
      case WICK_TRACK_INSTANTS:
        return WICK_TIMELINE_INSTANTS_HEIGHT;
      default:
        return (int)MAX (wick_tracks_track_n_rows (self->tracks, t), 1) * WICK_TIMELINE_ROW;
    }
}

static gint32
track_process (WickTimelineScene *self, guint32 t)
{
  return wick_tracks_get_tracks (self->tracks, NULL)[t].process;
}

static void
relayout (WickTimelineScene *self)
{
  self->layout_generation++;
  g_array_set_size (self->items, 0);
  for (guint t = 0; t < self->n_tracks; t++)
    self->track_item[t] = -1;
  int y = 0;
  for (guint i = 0; i < self->n_order; i++)
    {
      guint32 t = self->order[i];
      if (!self->pinned[t])
        continue;
      LayoutItem item = { ITEM_TRACK, 1, t, y, track_height (self, t) };
      self->track_item[t] = (int)self->items->len;
      g_array_append_val (self->items, item);
      y += item.height;
    }
  self->pinned_height = y > 0 ? y + 2 : 0;
  y = 0;
  gint32 current = G_MININT32;
  for (guint i = 0; i < self->n_order; i++)
    {
      guint32 t = self->order[i];
      gint32 p = track_process (self, t);
      if (p != current)
        {
          current = p;
          if (p >= 0)
            {
              LayoutItem header = { ITEM_PROCESS, 0, (guint32)p, y, WICK_TIMELINE_PROCESS_ROW };
              g_array_append_val (self->items, header);
              y += header.height;
            }
        }
      if (self->pinned[t] || (p >= 0 && self->collapsed[p]))
        continue;
      LayoutItem item = { ITEM_TRACK, 0, t, y, track_height (self, t) };
      self->track_item[t] = (int)self->items->len;
      g_array_append_val (self->items, item);
      y += item.height;
    }
  self->scrolled_height = y;
}

/* Top of @item in widget coordinates. */
static double
item_top (const WickTimelineScene *self, const WickTimelineViewport *view, const LayoutItem *item)
{
  if (item->pinned)
    return top_of_tracks (self) + item->y;
  return top_of_tracks (self) + self->pinned_height + item->y - view->scroll_y;
}

/* The visible band of the scrolled list (below the pinned area). */
static double
scrolled_top (const WickTimelineScene *self)
{
  return top_of_tracks (self) + self->pinned_height;
}

int
wick_timeline_scene_get_content_height (WickTimelineScene *self)
{
  return top_of_tracks (self) + self->pinned_height + self->scrolled_height + WICK_TIMELINE_ROW;
}

guint
wick_timeline_scene_get_n_tracks (WickTimelineScene *self)
{
  return self->n_order;
}

guint32
wick_timeline_scene_get_track (WickTimelineScene *self, guint i)
{
  g_return_val_if_fail (i < self->n_order, G_MAXUINT32);
  return self->order[i];
}

const char *
wick_timeline_scene_get_track_name (WickTimelineScene *self, guint32 track)
{
  g_return_val_if_fail (track < self->n_tracks, NULL);
  return self->track_names[track];
}

int
wick_timeline_scene_get_track_height (WickTimelineScene *self, guint32 track)
{
  g_return_val_if_fail (track < self->n_tracks, 0);
  return track_height (self, track);
}

gboolean
wick_timeline_scene_track_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                guint32 track, cairo_rectangle_t *rect)
{
  if (track >= self->n_tracks || self->track_item[track] < 0)
    return FALSE;
  const LayoutItem *item = &g_array_index (self->items, LayoutItem, self->track_item[track]);
  rect->x = WICK_TIMELINE_GUTTER;
  rect->width = MAX (view->width - WICK_TIMELINE_GUTTER, 1);
  rect->y = item_top (self, view, item);
  rect->height = item->height;
  if (!item->pinned && rect->y + rect->height <= scrolled_top (self))
    return FALSE;
  return rect->y < view->height;
}

void
wick_timeline_scene_set_collapsed (WickTimelineScene *self, guint32 process, gboolean collapsed)
{
  g_return_if_fail (process < self->n_processes);
  self->collapsed[process] = collapsed != 0;
  relayout (self);
}

gboolean
wick_timeline_scene_get_collapsed (WickTimelineScene *self, guint32 process)
{
  return process < self->n_processes && self->collapsed[process];
}

void
wick_timeline_scene_set_pinned (WickTimelineScene *self, guint32 track, gboolean pinned)
{
  g_return_if_fail (track < self->n_tracks);
  self->pinned[track] = pinned != 0;
  relayout (self);
}

gboolean
wick_timeline_scene_get_pinned (WickTimelineScene *self, guint32 track)
{
  return track < self->n_tracks && self->pinned[track];
}

gboolean
wick_timeline_scene_get_track_collapsible (WickTimelineScene *self, guint32 track)
{
  return track < self->n_tracks && track_collapsible (self, track);
}

void
wick_timeline_scene_set_track_collapsed (WickTimelineScene *self, guint32 track,
                                         gboolean collapsed)
{
  g_return_if_fail (track < self->n_tracks);
  if (!track_collapsible (self, track))
    return;
  self->track_collapsed[track] = collapsed != 0;
  self->track_user[track] = collapsed ? TRACK_USER_COLLAPSED : TRACK_USER_EXPANDED;
  relayout (self);
}

gboolean
wick_timeline_scene_get_track_collapsed (WickTimelineScene *self, guint32 track)
{
  return track < self->n_tracks && self->track_collapsed[track];
}

void
wick_timeline_scene_set_all_collapsed (WickTimelineScene *self, gboolean collapsed)
{
  for (guint p = 0; p < self->n_processes; p++)
    self->collapsed[p] = collapsed != 0;
  for (guint32 t = 0; t < self->n_tracks; t++)
    if (track_collapsible (self, t))
      {
        self->track_collapsed[t] = collapsed != 0;
        self->track_user[t] = collapsed ? TRACK_USER_COLLAPSED : TRACK_USER_EXPANDED;
      }
  relayout (self);
}

/* What identifies a process or track from one version of a document to the
 * next (a live trace's rebuild may number them differently): the pid; the
 * pid, tid, kind and name. */
static char *
process_key (WickTimelineScene *self, guint32 p)
{
  const WickProcess *process = &wick_tracks_get_processes (self->tracks, NULL)[p];
  return g_strdup_printf ("%" G_GINT64_FORMAT, process->pid);
}

static char *
track_key (WickTimelineScene *self, guint32 t)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[t];
  const WickProcess *processes = wick_tracks_get_processes (self->tracks, NULL);
  const WickThread *threads = wick_tracks_get_threads (self->tracks, NULL);
  const char *name = track->name ? wick_document_str (self->document, track->name) : "";
  return g_strdup_printf ("%" G_GINT64_FORMAT "/%s%" G_GINT64_FORMAT "/%u/%u/%s",
                          track->process >= 0 ? processes[track->process].pid : -1,
                          track->thread >= 0 ? "" : "-",
                          track->thread >= 0 ? threads[track->thread].tid : 0,
                          (guint)track->kind, (guint)track->scope, name ? name : "");
}

void
wick_timeline_scene_copy_state (WickTimelineScene *self, WickTimelineScene *from)
{
  if (from == NULL)
    return;
  g_autoptr (GHashTable) processes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint p = 0; p < self->n_processes; p++)
    g_hash_table_insert (processes, process_key (self, p), GUINT_TO_POINTER (p + 1));
  for (guint p = 0; p < from->n_processes; p++)
    {
      g_autofree char *key = process_key (from, p);
      guint found = GPOINTER_TO_UINT (g_hash_table_lookup (processes, key));
      if (found)
        self->collapsed[found - 1] = from->collapsed[p];
    }
  g_autoptr (GHashTable) tracks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint t = 0; t < self->n_tracks; t++)
    g_hash_table_insert (tracks, track_key (self, t), GUINT_TO_POINTER (t + 1));
  for (guint t = 0; t < from->n_tracks; t++)
    {
      if (!from->pinned[t] && from->track_user[t] == TRACK_USER_DEFAULT)
        continue;
      g_autofree char *key = track_key (from, t);
      guint found = GPOINTER_TO_UINT (g_hash_table_lookup (tracks, key));
      if (!found)
        continue;
      self->pinned[found - 1] = from->pinned[t];
      self->track_user[found - 1] = from->track_user[t];
      if (from->track_user[t] != TRACK_USER_DEFAULT && track_collapsible (self, found - 1))
        self->track_collapsed[found - 1] = from->track_user[t] == TRACK_USER_COLLAPSED;
    }
  relayout (self);
}

/* ---- a grown document ------------------------------------------------------ */

/* The ops committed since, merged into the time order (a stable sort of
 * all of them gives the same: ties keep the index order). */
static void
update_ops (WickTimelineScene *self)
{
  guint n;
  const WickOp *ops = wick_document_get_ops (self->document, &n);
  guint old = self->n_ops;
  if (n == old)
    return;
  guint32 *fresh = g_new (guint32, n - old);
  for (guint i = old; i < n; i++)
    fresh[i - old] = i;
  g_qsort_with_data (fresh, (gint)(n - old), sizeof (guint32), compare_ops, (gpointer)ops);
  guint32 *merged = g_new (guint32, n);
  guint a = 0, b = 0, k = 0;
  while (a < old && b < n - old)
    merged[k++] = ops[fresh[b]].timestamp_ns < ops[self->ops_by_time[a]].timestamp_ns
                    ? fresh[b++]
                    : self->ops_by_time[a++];
  while (a < old)
    merged[k++] = self->ops_by_time[a++];
  while (b < n - old)
    merged[k++] = fresh[b++];
  g_free (fresh);
  g_free (self->ops_by_time);
  self->ops_by_time = merged;
  self->n_ops = n;
}

/* The extent with what was added since, as wick_timeline_scene_new() finds
 * it; FALSE when a device clock moved (the device tracks' placement). */
static gboolean
update_extent (WickTimelineScene *self, guint old_spans)
{
  guint64 start = self->host_start, end = self->host_end;
  for (guint i = old_spans; i < self->n_spans; i++)
    start = MIN (start, self->spans[i].start_ns);
  /* the spans that closed join the fixed part; the open ones run to the model's end */
  guint kept = 0;
  for (guint k = 0; k < self->open_spans->len; k++)
    {
      guint32 i = g_array_index (self->open_spans, guint32, k);
      if (!(self->spans[i].flags & WICK_SPAN_FLAG_CLOSED))
        g_array_index (self->open_spans, guint32, kept++) = i;
      else
        end = MAX (end, self->spans[i].start_ns + self->spans[i].duration_ns);
    }
  g_array_set_size (self->open_spans, kept);
  for (guint i = old_spans; i < self->n_spans; i++)
    if (!(self->spans[i].flags & WICK_SPAN_FLAG_CLOSED))
      g_array_append_val (self->open_spans, i);
    else
      end = MAX (end, self->spans[i].start_ns + self->spans[i].duration_ns);
  guint n;
  const WickCounterSample *samples = wick_tracks_get_counter_samples (self->tracks, &n);
  for (guint i = self->n_counters_seen; i < n; i++)
    {
      start = MIN (start, samples[i].timestamp_ns);
      end = MAX (end, samples[i].timestamp_ns);
    }
  self->n_counters_seen = n;
  const WickInstant *instants = wick_tracks_get_instants (self->tracks, &n);
  for (guint i = self->n_instants_seen; i < n; i++)
    {
      start = MIN (start, instants[i].timestamp_ns);
      end = MAX (end, instants[i].timestamp_ns);
    }
  self->n_instants_seen = n;
  const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
  for (guint i = self->n_ext_seen; i < n; i++)
    {
      start = MIN (start, ext[i].timestamp_ns);
      end = MAX (end, ext[i].timestamp_ns);
    }
  self->n_ext_seen = n;
  self->host_start = start;
  self->host_end = end;
  for (guint k = 0; k < self->open_spans->len; k++)
    {
      WickEventRef ref = { WICK_EVENT_SLICE, g_array_index (self->open_spans, guint32, k) };
      end = MAX (end, wick_tracks_event_end (self->tracks, ref));
    }
  if (start == G_MAXUINT64)
    start = 0;
  end = MAX (end, wick_document_get_end_ns (self->document));
  if (wick_document_has_terminal (self->document))
    end = MAX (end, wick_document_get_terminal_ns (self->document));
  self->extent_start = start;
  self->extent_end = MAX (end, start);

  const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, &n);
  if (n > 0)
    {
      g_autofree gint64 *before = g_memdup2 (self->track_offset, self->n_tracks * sizeof (gint64));
      build_offsets (self);
      if (memcmp (before, self->track_offset, self->n_tracks * sizeof (gint64)) != 0)
        return FALSE;
    }
  for (guint i = self->n_device_seen; i < n; i++)
    {
      guint64 s = shift (device[i].start_ns, self->track_offset[device[i].track]);
      self->device_start = MIN (self->device_start, s);
      self->device_end = MAX (self->device_end, wick_time_add (s, device[i].duration_ns));
      self->any_device = TRUE;
    }
  self->n_device_seen = n;
  if (self->any_device)
    {
      self->extent_start = MIN (self->extent_start, self->device_start);
      self->extent_end = MAX (self->extent_end, self->device_end);
    }
  if (self->extent_end < wick_time_add (self->extent_start, 1000))
    self->extent_end = wick_time_add (self->extent_start, 1000);
  if (self->extent_end - self->extent_start < 1000)
    self->extent_start = self->extent_end - 1000;
  return TRUE;
}

/* Cached pixels of the rows that changed since the scene last looked. */
static void
drop_changed_rows (WickTimelineScene *self)
{
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, self->row_cache);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      guint64 k = *(const guint64 *)key;
      const WickTrackRow *row
        = wick_tracks_track_row (self->tracks, (guint32)(k >> 32), (guint)(k & G_MAXUINT32));
      if (row == NULL || row->changed > self->append_serial)
        g_hash_table_iter_remove (&iter);
    }
}

gboolean
wick_timeline_scene_update (WickTimelineScene *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  WickTracks *tracks = wick_document_get_tracks (self->document);
  guint n_tracks, n_processes, n_spans;
  wick_tracks_get_tracks (tracks, &n_tracks);
  wick_tracks_get_processes (tracks, &n_processes);
  const WickSpan *spans = wick_document_get_spans (self->document, &n_spans);
  if (tracks != self->tracks || wick_tracks_get_format (tracks) != WICK_TRACE_FORMAT_CANDLE_GRAPH
      || wick_tracks_get_build_serial (tracks) != self->build_serial || n_tracks != self->n_tracks
      || n_processes != self->n_processes || n_spans < self->n_spans || self->steps->len > 0)
    return FALSE;
  for (guint i = self->n_spans; i < n_spans; i++)
    if (wick_is_profiler_step (wick_document_str (self->document, spans[i].name)))
      return FALSE; /* a step row now: a new scene lays it out */
  guint old_spans = self->n_spans;
  self->spans = spans;
  self->n_spans = n_spans;
  self->serial++;
  if (!update_extent (self, old_spans))
    return FALSE;

  /* the model's display order (its array may have moved), less the instants */
  const WickTrack *track_list = wick_tracks_get_tracks (tracks, NULL);
  guint n_order;
  const guint32 *order = wick_tracks_get_display_order (tracks, &n_order);
  guint k = 0;
  for (guint i = 0; i < n_order; i++)
    if (track_list[order[i]].kind != WICK_TRACK_INSTANTS)
      self->own_order[k++] = order[i];
  self->order = self->own_order;
  self->n_order = k;

  update_ops (self);
  extend_marker_labels (self);
  self->has_markers = self->marker_labels->len > 0 || wick_document_has_terminal (self->document);
  self->colour_ids = g_renew (guint8, self->colour_ids, MAX (n_spans, 1));
  for (guint i = old_spans; i < n_spans; i++)
    self->colour_ids[i] = wick_palette_span_colour_id (
      spans[i].step, wick_document_str (self->document, spans[i].name));
  {
    /* the new intervals' colours, and the ones of the intervals the model
     * renamed since (their spans resolved), all of them when it renamed all */
    guint nd, n_renamed, renamed_all;
    const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &nd);
    const guint32 *renamed = wick_tracks_get_device_renames (tracks, &n_renamed, &renamed_all);
    guint from = MIN (self->n_device_colours, nd);
    self->device_colour_ids = g_renew (guint8, self->device_colour_ids, MAX (nd, 1));
    if (renamed_all != self->renames_all_seen)
      from = 0;
    else
      for (guint r = self->n_renames_seen; r < n_renamed; r++)
        if (renamed[r] < from)
          {
            self->device_colour_ids[renamed[r]]
              = name_colour_id (self->device_name_colours, self->document, d[renamed[r]].name);
            self->device_colours_renewed++;
          }
    for (guint i = from; i < nd; i++)
      self->device_colour_ids[i]
        = name_colour_id (self->device_name_colours, self->document, d[i].name);
    self->device_colours_renewed += nd - from;
    self->n_device_colours = nd;
    self->n_renames_seen = n_renamed;
    self->renames_all_seen = renamed_all;
  }
  for (guint t = 0; t < self->n_tracks; t++)
    {
      g_clear_pointer (&self->track_cover[t], coverage_free);
      if (self->track_user[t] == TRACK_USER_DEFAULT)
        self->track_collapsed[t]
          = track_collapsible (self, t) && track_collapsed_by_default (self, t);
    }
  for (guint p = 0; p < self->n_processes; p++)
    g_clear_pointer (&self->process_cover[p], coverage_free);
  g_clear_pointer (&self->graphs, wick_gpu_graphs_free);
  drop_changed_rows (self);
  self->append_serial = wick_tracks_get_append_serial (tracks);
  relayout (self);
  return TRUE;
}

WickDocument *
wick_timeline_scene_get_document (WickTimelineScene *self)
{
  return self->document;
}

WickTracks *
wick_timeline_scene_get_tracks (WickTimelineScene *self)
{
  return self->tracks;
}

void
wick_timeline_scene_get_extent (WickTimelineScene *self, guint64 *start_ns, guint64 *end_ns)
{
  *start_ns = self->extent_start;
  *end_ns = self->extent_end;
}

guint
wick_timeline_scene_get_device_colour (WickTimelineScene *self, guint slice)
{
  g_return_val_if_fail (slice < self->n_device_colours, G_MAXUINT);
  return self->device_colour_ids[slice];
}

guint
wick_timeline_scene_get_device_colours_renewed (WickTimelineScene *self)
{
  return self->device_colours_renewed;
}

guint64
wick_timeline_scene_interval_start (WickTimelineScene *self, guint interval)
{
  guint n_device;
  const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, &n_device);
  for (guint i = 0; i < n_device; i++)
    if (device[i].source == (gint32)interval)
      return shift (device[i].start_ns, self->track_offset[device[i].track]);
  guint n;
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (self->document, &n);
  g_return_val_if_fail (interval < n, 0);
  return intervals[interval].start_ns;
}

/* Raw start and end of event @e of kind @kind (model time, no clock shift). */
static inline void
raw_extent (WickTimelineScene *self, guint kind, guint32 e, guint64 *start, guint64 *end)
{
  WickEventRef ref = { kind, e };
  *start = wick_tracks_event_start (self->tracks, ref);
  *end = wick_tracks_event_end (self->tracks, ref);
}

void
wick_timeline_scene_event_extent (WickTimelineScene *self, WickEventRef event, guint64 *start_ns,
                                  guint64 *end_ns)
{
  raw_extent (self, event.kind, event.index, start_ns, end_ns);
  guint32 track = wick_tracks_event_track (self->tracks, event);
  if (track < self->n_tracks && self->track_offset[track] != 0)
    {
      *start_ns = shift (*start_ns, self->track_offset[track]);
      *end_ns = shift (*end_ns, self->track_offset[track]);
    }
}

/* ---- coordinates --------------------------------------------------------- */

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

static double
view_ns_per_px (const WickTimelineViewport *view)
{
  return (double)wick_time_sub (view->end_ns, view->start_ns)
         / MAX (view->width - WICK_TIMELINE_GUTTER, 1);
}

/* ---- batched rectangles -------------------------------------------------- */

static void
batch_rect (WickTimelineScene *self, guint batch, double x0, double x1, double y, double h)
{
  GArray *rects = self->batches[batch];
  /* Runs of adjacent rectangles of one colour on one row become one. */
  if (rects->len > 0)
    {
      Rect *last = &g_array_index (rects, Rect, rects->len - 1);
      if (last->y == y && last->h == h && last->x1 >= x0 - 0.01 && last->x0 <= x0)
        {
          last->x1 = MAX (last->x1, x1);
          return;
        }
    }
  Rect rect = { x0, x1, y, h };
  g_array_append_val (rects, rect);
}

/* Opaque boxes straight into an image surface's pixels, as cairo would
 * sample them without antialiasing (a pixel whose centre is inside), when
 * nothing stands between user space and the pixels: at tens of thousands of
 * boxes a frame, cairo's path and box machinery costs more than the fill. */
/* @cr draws 1:1 onto the pixels of a 32-bit image surface. */
static gboolean
draws_on_pixels (cairo_t *cr)
{
  cairo_surface_t *target = cairo_get_target (cr);
  if (cairo_surface_get_type (target) != CAIRO_SURFACE_TYPE_IMAGE
      || (cairo_image_surface_get_format (target) != CAIRO_FORMAT_ARGB32
          && cairo_image_surface_get_format (target) != CAIRO_FORMAT_RGB24))
    return FALSE;
  cairo_matrix_t m;
  cairo_get_matrix (cr, &m);
  double sx, sy, ox, oy;
  cairo_surface_get_device_scale (target, &sx, &sy);
  cairo_surface_get_device_offset (target, &ox, &oy);
  return m.xx == 1 && m.yy == 1 && m.xy == 0 && m.yx == 0 && m.x0 == 0 && m.y0 == 0 && sx == 1
         && sy == 1 && ox == 0 && oy == 0;
}

/* Moves the pixels of columns [x0, x1) in rows [y0, y1) of @surface up by
 * @dy rows (down when negative); the rows left behind keep what they had. */
static void
scroll_pixels (cairo_surface_t *surface, int x0, int x1, int y0, int y1, int dy)
{
  cairo_surface_flush (surface);
  guint8 *data = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  gsize bytes = (gsize)(x1 - x0) * 4;
  if (dy > 0)
    for (int y = y0; y + dy < y1; y++)
      memcpy (data + (gsize)y * stride + (gsize)x0 * 4,
              data + (gsize)(y + dy) * stride + (gsize)x0 * 4, bytes);
  else
    for (int y = y1 - 1; y + dy >= y0; y--)
      memcpy (data + (gsize)y * stride + (gsize)x0 * 4,
              data + (gsize)(y + dy) * stride + (gsize)x0 * 4, bytes);
  cairo_surface_mark_dirty (surface);
}

/* Columns [x0, x1) of rows [y0, y1) of @from into the same place of @to
 * (both 32-bit images; @from opaque there). */
static void
copy_pixels (cairo_surface_t *to, cairo_surface_t *from, int x0, int x1, int y0, int y1)
{
  cairo_surface_flush (to);
  cairo_surface_flush (from);
  x1 = MIN (x1, MIN (cairo_image_surface_get_width (to), cairo_image_surface_get_width (from)));
  y1 = MIN (y1, MIN (cairo_image_surface_get_height (to), cairo_image_surface_get_height (from)));
  guint8 *dst = cairo_image_surface_get_data (to);
  const guint8 *src = cairo_image_surface_get_data (from);
  int dst_stride = cairo_image_surface_get_stride (to),
      src_stride = cairo_image_surface_get_stride (from);
  for (int y = MAX (y0, 0); y < y1 && x0 < x1; y++)
    memcpy (dst + (gsize)y * dst_stride + (gsize)x0 * 4,
            src + (gsize)y * src_stride + (gsize)x0 * 4, (gsize)(x1 - x0) * 4);
  cairo_surface_mark_dirty (to);
}

static gboolean
fill_direct (cairo_t *cr, GArray *rects, WickRgb rgb)
{
  cairo_surface_t *target = cairo_get_target (cr);
  if (!draws_on_pixels (cr))
    return FALSE;
  cairo_rectangle_list_t *clips = cairo_copy_clip_rectangle_list (cr);
  if (clips->status != CAIRO_STATUS_SUCCESS || clips->num_rectangles != 1)
    {
      cairo_rectangle_list_destroy (clips);
      return FALSE;
    }
  cairo_rectangle_t clip = clips->rectangles[0];
  cairo_rectangle_list_destroy (clips);
  cairo_surface_flush (target);
  guint8 *data = cairo_image_surface_get_data (target);
  int stride = cairo_image_surface_get_stride (target);
  int width = cairo_image_surface_get_width (target);
  int height = cairo_image_surface_get_height (target);
  guint32 pixel = 0xff000000u | ((guint32)(rgb.r * 65535.99) >> 8) << 16
                  | ((guint32)(rgb.g * 65535.99) >> 8) << 8 | ((guint32)(rgb.b * 65535.99) >> 8);
  int cx0 = MAX ((int)ceil (clip.x - 0.5), 0), cy0 = MAX ((int)ceil (clip.y - 0.5), 0);
  int cx1 = MIN ((int)ceil (clip.x + clip.width - 0.5), width);
  int cy1 = MIN ((int)ceil (clip.y + clip.height - 0.5), height);
  for (guint i = 0; i < rects->len; i++)
    {
      const Rect *r = &g_array_index (rects, Rect, i);
      int x0 = MAX ((int)ceil (r->x0 - 0.5), cx0), x1 = MIN ((int)ceil (r->x1 - 0.5), cx1);
      int y0 = MAX ((int)ceil (r->y - 0.5), cy0), y1 = MIN ((int)ceil (r->y + r->h - 0.5), cy1);
      for (int y = y0; y < y1; y++)
        {
          guint32 *row = (guint32 *)(gpointer)(data + (gsize)y * stride);
          for (int x = x0; x < x1; x++)
            row[x] = pixel;
        }
    }
  cairo_surface_mark_dirty (target);
  return TRUE;
}

static void
flush_batches (WickTimelineScene *self, cairo_t *cr, gboolean dark)
{
  for (guint b = 0; b < N_BATCHES; b++)
    {
      GArray *rects = self->batches[b];
      if (rects->len == 0)
        continue;
      if (b < WICK_SPAN_COLOURS || b == BATCH_HIT)
        {
          WickRgb rgb = b == BATCH_HIT ? wick_palette_accent (dark)
                                       : wick_palette_span (b % WICK_SPAN_COLOURS, dark);
          if (fill_direct (cr, rects, rgb))
            {
              g_array_set_size (rects, 0);
              continue;
            }
        }
      for (guint i = 0; i < rects->len; i++)
        {
          Rect *r = &g_array_index (rects, Rect, i);
          cairo_rectangle (cr, r->x0, r->y, r->x1 - r->x0, r->h);
        }
      if (b == BATCH_HIT)
        wick_palette_set (cr, wick_palette_accent (dark), 1.0);
      else
        wick_palette_set (cr, wick_palette_span (b % WICK_SPAN_COLOURS, dark),
                          b >= WICK_SPAN_COLOURS ? 0.22 : 1.0);
      cairo_fill (cr);
      g_array_set_size (rects, 0);
    }
}

/* A growing document's span array moves as it grows: the scene, drawn until
 * its rebuild, reads it where it is now (its colours cover the spans it was
 * built with). */
static void
follow_spans (WickTimelineScene *self)
{
  self->spans = wick_document_get_spans (self->document, NULL);
}

static guint
name_colour (WickStr name)
{
  /* Equal names are one interned string: equal colours, no hashing per frame. */
  return (guint)(((guint64)name * 2654435761u) >> 7) % WICK_SPAN_SHADES;
}

static guint
event_batch (WickTimelineScene *self, const WickTimelineViewport *view, guint kind, guint32 e)
{
  gint64 span = -1;
  guint colour = 0;
  switch (kind)
    {
      case WICK_EVENT_SLICE:
        span = e;
        break;
      case WICK_EVENT_DEVICE:
        {
          const WickDeviceSlice *d = &wick_tracks_get_device_slices (self->tracks, NULL)[e];
          guint n;
          const WickDeviceInterval *iv = wick_document_get_device_intervals (self->document, &n);
          if (d->source >= 0 && (guint)d->source < n && iv[d->source].span >= 0
              && (guint)iv[d->source].span < self->n_spans)
            span = iv[d->source].span;
          else if (e < self->n_device_colours)
            colour = self->device_colour_ids[e];
          break;
        }
      case WICK_EVENT_ASYNC:
        colour = name_colour (wick_tracks_get_async (self->tracks, NULL)[e].name);
        break;
      default:
        break;
    }
  if (span >= 0)
    {
      /* a span the document gained after the scene was built (a live
       * document's old scene, drawn until its rebuild): no colour of its own */
      colour = (guint)span < self->n_spans ? self->colour_ids[span] : 0;
      return colour + (view->matches && !view->matches[span] ? WICK_SPAN_COLOURS : 0);
    }
  if (kind == WICK_EVENT_DEVICE && view->device_matches != NULL && view->device_matches[e])
    return colour; /* a kernel found by the search keeps its colour */
  return colour + (view->matches ? WICK_SPAN_COLOURS : 0);
}

typedef struct
{
  WickEventRef event;
  double x0, x1, y;
} Label;

typedef struct
{
  WickTimelineScene *self;
  const WickTimelineViewport *view;
  guint kind;
  gint64 offset;
  double y, h;
  double last_x1;
  GArray *labels;
  gint run_batch; /* batch of the last tiny rectangle, -1 when none */
  guint run_index;
} RowDraw;

static WickStr
event_name_str (WickTimelineScene *self, guint kind, guint32 e)
{
  switch (kind)
    {
      case WICK_EVENT_SLICE:
        return self->spans[e].name;
      case WICK_EVENT_DEVICE:
        return wick_tracks_get_device_slices (self->tracks, NULL)[e].name;
      case WICK_EVENT_ASYNC:
        return wick_tracks_get_async (self->tracks, NULL)[e].name;
      default:
        return 0;
    }
}

/* The slot of @name, or the free one it goes into (linear probing, 8
 * probes: a frame with more names than the table holds drops the rarest late
 * comers); NULL when none. */
static LegendSlot *
legend_slot (WickTimelineScene *self, WickStr name)
{
  guint h = (guint)(((guint64)name * 2654435761u) >> 4) & (LEGEND_SLOTS - 1);
  for (guint probe = 0; probe < 8; probe++)
    {
      LegendSlot *slot = &self->legend_slots[(h + probe) & (LEGEND_SLOTS - 1)];
      if (slot->name == name || slot->name == 0)
        return slot;
    }
  return NULL;
}

/* @px more of drawn width for @name, drawn in @colour where it is new. */
static void
legend_slot_add (WickTimelineScene *self, WickStr name, guint8 colour, double px)
{
  LegendSlot *slot = legend_slot (self, name);
  if (slot == NULL)
    return;
  if (slot->name == 0)
    {
      slot->name = name;
      slot->colour = colour;
      slot->px = 0;
    }
  slot->px += px;
}

/* A row's share of the legend, kept with its cached rectangles (at most
 * this many names; a row of more is not cached while the legend is on). */
#define ROW_LEGEND_MAX 64

static void
legend_capture (WickTimelineScene *self, const WickTimelineViewport *view, guint kind, guint32 e,
                WickStr name, double px)
{
  GArray *row = self->legend_capture;
  LegendSlot *slots = (LegendSlot *)(gpointer)row->data;
  /* neighbours often share a name: the last one found first */
  guint last = self->legend_capture_last;
  if (last < row->len && slots[last].name == name)
    {
      slots[last].px += px;
      return;
    }
  for (guint i = 0; i < row->len; i++)
    if (slots[i].name == name)
      {
        slots[i].px += px;
        self->legend_capture_last = i;
        return;
      }
  if (row->len >= ROW_LEGEND_MAX)
    {
      self->legend_capture_full = TRUE;
      return;
    }
  LegendSlot slot = { name, (guint8)(event_batch (self, view, kind, e) % WICK_SPAN_COLOURS), px };
  g_array_append_val (row, slot);
  self->legend_capture_last = row->len - 1;
}

/* Counts @px of drawn width for @e's name. */
static void
legend_add (WickTimelineScene *self, const WickTimelineViewport *view, guint kind, guint32 e,
            double px)
{
  WickStr name = event_name_str (self, kind, e);
  if (name == 0)
    return;
  LegendSlot *slot = legend_slot (self, name);
  guint8 colour = slot != NULL && slot->name == name
                    ? slot->colour
                    : (guint8)(event_batch (self, view, kind, e) % WICK_SPAN_COLOURS);
  if (slot != NULL)
    legend_slot_add (self, name, colour, px);
  if (self->legend_capture != NULL && !self->legend_capture_full)
    legend_capture (self, view, kind, e, name, px);
}

static int
compare_legend (gconstpointer pa, gconstpointer pb)
{
  const LegendSlot *a = pa, *b = pb;
  if (a->px != b->px)
    return a->px > b->px ? -1 : 1;
  return a->name < b->name ? -1 : a->name > b->name;
}

/* The frame's top names by drawn width, into self->legend. */
static void
legend_finish (WickTimelineScene *self)
{
  self->n_legend = 0;
  for (guint i = 0; i < LEGEND_SLOTS; i++)
    {
      LegendSlot *slot = &self->legend_slots[i];
      if (slot->name == 0)
        continue;
      if (self->n_legend < WICK_TIMELINE_LEGEND_MAX)
        self->legend[self->n_legend++] = *slot;
      else if (compare_legend (slot, &self->legend[WICK_TIMELINE_LEGEND_MAX - 1]) < 0)
        self->legend[WICK_TIMELINE_LEGEND_MAX - 1] = *slot;
      else
        continue;
      qsort (self->legend, self->n_legend, sizeof (LegendSlot), compare_legend);
    }
}

static void
emit_event (RowDraw *d, guint32 e, guint64 start, guint64 end)
{
  const WickTimelineViewport *view = d->view;
  if (d->offset)
    {
      start = shift (start, d->offset);
      end = shift (end, d->offset);
    }
  double x0 = wick_timeline_viewport_time_to_x (view, start);
  double x1 = wick_timeline_viewport_time_to_x (view, end);
  x0 = MAX (x0, WICK_TIMELINE_GUTTER - 1);
  x1 = MIN (x1, view->width + 1);
  /* Snap to whole pixels (cairo's box fast path) with a one-pixel minimum:
   * zero-length records stay visible. */
  x0 = floor (x0);
  x1 = MAX (floor (x1), x0 + 1);
  if (x1 <= d->last_x1)
    return;
  if (x0 < d->last_x1)
    x0 = d->last_x1;
  d->last_x1 = x1;
  if (d->self->legend_on)
    legend_add (d->self, d->view, d->kind, e, x1 - x0);
  double gap = x1 - x0 > 3 ? 1 : 0;
  /* Runs of events a pixel or two wide (dense rows zoomed out) extend the
   * run's first rectangle: one box per run instead of one per pixel. */
  if (x1 - x0 <= 2)
    {
      if (d->run_batch >= 0)
        {
          Rect *run = &g_array_index (d->self->batches[d->run_batch], Rect, d->run_index);
          if (run->x1 >= x0 && run->y == d->y)
            {
              run->x1 = x1;
              return;
            }
        }
      guint batch = event_batch (d->self, view, d->kind, e);
      batch_rect (d->self, batch, x0, x1, d->y, d->h);
      d->run_batch = (gint)batch;
      d->run_index = d->self->batches[batch]->len - 1;
      return;
    }
  d->run_batch = -1;
  batch_rect (d->self, event_batch (d->self, view, d->kind, e), x0, x1 - gap, d->y, d->h);
  if (d->labels && x1 - x0 > 36)
    {
      Label label = { { d->kind, e }, x0, x1 - gap, d->y };
      g_array_append_val (d->labels, label);
    }
}

static void draw_row_summary (WickTimelineScene *self, const WickTrackRow *r, RowDraw *dp,
                              int level, guint64 q0, guint64 q1, guint first);

void
wick_timeline_scene_set_row_cache (WickTimelineScene *self, gboolean on)
{
  self->row_cache_off = !on;
  if (!on)
    {
      g_hash_table_remove_all (self->row_cache);
      g_clear_pointer (&self->layer.surface, cairo_surface_destroy);
      g_clear_pointer (&self->gutter, cairo_surface_destroy);
    }
}

/* One row of a slices, async or device track: raw events when they are few
 * or the zoom is fine, else the model's summary level for this zoom (at
 * most two entries per pixel, whatever the number of events). */
static void
draw_row (WickTimelineScene *self, const WickTimelineViewport *view, guint32 track, guint row,
          double y, double h, GArray *labels)
{
  const WickTrackRow *r = wick_tracks_track_row (self->tracks, track, row);
  if (r == NULL || r->n_events == 0)
    return;
  RowDraw d = { self, view, r->event_kind, self->track_offset[track], y, h, -1, labels, -1, 0 };
  guint64 q0 = shift (view->start_ns, -d.offset), q1 = shift (view->end_ns, -d.offset);
  double plot = MAX (view->width - WICK_TIMELINE_GUTTER, 1);
  int level = wick_tracks_pick_level (self->tracks, view_ns_per_px (view));
  guint first = wick_tracks_row_first_overlapping (self->tracks, track, row, q0);
  /* Events starting before the view's end: a binary search. */
  guint lo_i = first, hi_i = r->n_events;
  while (lo_i < hi_i)
    {
      guint mid = lo_i + (hi_i - lo_i) / 2;
      guint64 s, e;
      raw_extent (self, d.kind, r->events[mid], &s, &e);
      if (s < q1)
        lo_i = mid + 1;
      else
        hi_i = mid;
    }
  guint in_view = lo_i - MIN (first, lo_i);
  if (r->n_levels == 0 || in_view <= 2 * plot)
    {
      for (guint i = first; i < r->n_events; i++)
        {
          guint64 s, e;
          raw_extent (self, d.kind, r->events[i], &s, &e);
          if (s >= q1)
            break;
          emit_event (&d, r->events[i], s, e);
        }
      return;
    }
  /* More events than pixels: the summary, at least its finest level. */
  level = MIN ((guint)MAX (level, 0), r->n_levels - 1);
  /* The row's rectangles and labels of the last frame with this time range
   * and width, when nothing else they depend on changed (a search dims
   * them: not cached), with its share of the legend. */
  RowCache *cache = NULL;
  guint before[N_BATCHES], labels_before = labels != NULL ? labels->len : 0;
  if (!self->row_cache_off && view->matches == NULL && view->device_matches == NULL)
    {
      gint64 key = (gint64)((guint64)track << 32 | row);
      cache = g_hash_table_lookup (self->row_cache, &key);
      gboolean hit = cache != NULL && cache->start_ns == view->start_ns
                     && cache->end_ns == view->end_ns && cache->width == view->width
                     && cache->level == level && cache->n_events == r->n_events
                     && cache->level_count == r->level_counts[level]
                     && (!self->legend_on || (cache->measured && !cache->legend_full));
      if (!hit && self->row_deadline != 0 && level + PLACEHOLDER_LEVELS < (int)r->n_levels
          && self->rows_walked > 0 && g_get_monotonic_time () >= self->row_deadline)
        {
          /* over the frame's budget: a coarse sketch now, the row next frame */
          self->incomplete = TRUE;
          draw_row_summary (self, r, &d, level + PLACEHOLDER_LEVELS, q0, q1, first);
          return;
        }
      if (cache != NULL && cache->start_ns == view->start_ns && cache->end_ns == view->end_ns
          && cache->width == view->width && cache->level == level && cache->offset == d.offset
          && cache->n_events == r->n_events && cache->level_count == r->level_counts[level]
          && cache->h == h && cache->labels == (labels != NULL)
          && (!self->legend_on || (cache->measured && !cache->legend_full)))
        {
          for (guint i = 0; self->legend_on && i < cache->legend->len; i++)
            {
              const LegendSlot *slot = &g_array_index (cache->legend, LegendSlot, i);
              legend_slot_add (self, slot->name, slot->colour, slot->px);
            }
          for (guint i = 0; i < cache->rects->len; i++)
            {
              const CachedRect *c = &g_array_index (cache->rects, CachedRect, i);
              batch_rect (self, c->batch, c->x0, c->x1, y, h);
            }
          for (guint i = 0; labels != NULL && i < cache->labels_x->len; i++)
            {
              Label label = g_array_index (cache->labels_x, Label, i);
              label.y = y;
              g_array_append_val (labels, label);
            }
          return;
        }
      if (cache == NULL)
        {
          cache = g_new0 (RowCache, 1);
          cache->rects = g_array_new (FALSE, FALSE, sizeof (CachedRect));
          cache->labels_x = g_array_new (FALSE, FALSE, sizeof (Label));
          cache->legend = g_array_new (FALSE, FALSE, sizeof (LegendSlot));
          g_hash_table_insert (self->row_cache, g_memdup2 (&key, sizeof key), cache);
        }
      cache->start_ns = view->start_ns;
      cache->end_ns = view->end_ns;
      cache->width = view->width;
      cache->level = level;
      cache->offset = d.offset;
      cache->n_events = r->n_events;
      cache->level_count = r->level_counts[level];
      cache->h = h;
      cache->labels = labels != NULL;
      g_array_set_size (cache->rects, 0);
      g_array_set_size (cache->labels_x, 0);
      g_array_set_size (cache->legend, 0);
      cache->measured = self->legend_on;
      if (self->legend_on)
        {
          self->legend_capture = cache->legend;
          self->legend_capture_full = FALSE;
        }
      for (guint b = 0; b < N_BATCHES; b++)
        before[b] = self->batches[b]->len;
    }
  self->rows_walked++;
  draw_row_summary (self, r, &d, level, q0, q1, first);
  if (cache == NULL)
    return;
  cache->legend_full = self->legend_capture_full;
  self->legend_capture = NULL;
  /* Rows are at distinct y: none of this row's rectangles merged into an
   * earlier one, so they are the ones after before[]. */
  for (guint b = 0; b < N_BATCHES; b++)
    for (guint i = before[b]; i < self->batches[b]->len; i++)
      {
        const Rect *rect = &g_array_index (self->batches[b], Rect, i);
        CachedRect c = { (guint8)b, rect->x0, rect->x1 };
        g_array_append_val (cache->rects, c);
      }
  if (labels != NULL)
    g_array_append_vals (cache->labels_x, &g_array_index (labels, Label, labels_before),
                         labels->len - labels_before);
}

/* How many summary entries ahead of the one drawn its event is fetched. */
#define SUMMARY_PREFETCH 12

/* draw_row's summary walk: the entries of @level overlapping [q0, q1). */
static void
draw_row_summary (WickTimelineScene *self, const WickTrackRow *r, RowDraw *dp, int level,
                  guint64 q0, guint64 q1, guint first)
{
  RowDraw d = *dp;
  guint shift_bits = 0;
  guint64 base = wick_tracks_get_base_ns (self->tracks);
  while (shift_bits < 63 && (G_GUINT64_CONSTANT (1) << shift_bits) < base)
    shift_bits++;
  shift_bits += level;
  guint64 origin = wick_tracks_get_start_ns (self->tracks);
  guint64 first_bucket = shift_bits < 64 ? wick_time_sub (q0, origin) >> shift_bits : 0;
  const WickTrackMip *entries = r->levels[level];
  guint count = r->level_counts[level];
  guint lo = 0, hi = count;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (entries[mid].bucket < first_bucket)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* A long event that started far before the view: the raw index finds it. */
  if (first < r->n_events)
    {
      guint64 s, e;
      raw_extent (self, d.kind, r->events[first], &s, &e);
      if (s < wick_time_add (origin, first_bucket << shift_bits))
        emit_event (&d, r->events[first], s, e);
    }
  if (lo > 0)
    lo--;
  /* Zoomed out, consecutive entries are far apart in the event table: their
   * reads are cache misses, fetched ahead so that they overlap. */
  const WickSpan *spans = d.kind == WICK_EVENT_SLICE ? self->spans : NULL;
  for (guint i = lo; i < count; i++)
    {
      if (spans != NULL && i + SUMMARY_PREFETCH < count)
        {
          guint32 ahead = entries[i + SUMMARY_PREFETCH].event;
          if (ahead < self->n_spans)
            {
              __builtin_prefetch (&spans[ahead]);
              __builtin_prefetch (&self->colour_ids[ahead]);
            }
        }
      guint64 s, e;
      raw_extent (self, d.kind, entries[i].event, &s, &e);
      if (s >= q1)
        break;
      if (e < q0)
        continue;
      emit_event (&d, entries[i].event, s, e);
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

/* At most as many characters as can show in @max_width pixels (no glyph of
 * the 8 pt face is narrower than 2 px) and never more than 4096: a span named
 * by an 8 MiB string is shaped as a few hundred characters, not 8 Mi of them
 * (12 s and 815 MB of RSS for one frame before). A cut text ends in "…", so
 * the elision shows even where Pango would not ellipsize. */
#define LABEL_MAX_CHARS 4096

static void
set_label_text (PangoLayout *layout, const char *prefix, const char *text, double max_width)
{
  gsize max_chars = max_width > 0 ? MIN ((gsize)(max_width / 2) + 2, LABEL_MAX_CHARS)
                                  : LABEL_MAX_CHARS;
  const char *p = text;
  gsize n = 0;

  /* counts characters by their first bytes, never stepping past the end (a
   * name's bytes are not trusted to be whole UTF-8 sequences) */
  for (; *p != '\0'; p++)
    if (((guchar)*p & 0xC0) != 0x80 && n++ == max_chars)
      break;
  if (*p == '\0' && prefix == NULL)
    {
      pango_layout_set_text (layout, text, -1);
      return;
    }
  g_autoptr (GString) cut = g_string_new (prefix);
  g_string_append_len (cut, text, p - text);
  if (*p != '\0')
    g_string_append (cut, "…");
  pango_layout_set_text (layout, cut->str, (int)cut->len);
}

static void
draw_text (WickTimelineScene *self, cairo_t *cr, const char *text, double x, double y,
           double max_width)
{
  PangoLayout *layout = scene_layout (self, cr);
  pango_layout_set_width (layout, max_width > 0 ? (int)(max_width * PANGO_SCALE) : -1);
  set_label_text (layout, NULL, text, max_width);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, layout);
}

/* Text is the costly part of a frame: with very many candidates (@n in the
 * band drawn), only the wider events get their names. */
static double
label_min_width (guint n)
{
  return n > 600 ? 96 : n > 300 ? 60 : 24;
}

static void
draw_labels (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view, GArray *labels,
             double min_width)
{
  PangoLayout *layout = scene_layout (self, cr);
  cairo_set_source_rgb (cr, view->dark ? 0.95 : 0.1, view->dark ? 0.95 : 0.1,
                        view->dark ? 0.95 : 0.12);
  for (guint i = 0; i < labels->len; i++)
    {
      Label *label = &g_array_index (labels, Label, i);
      double x0 = MAX (label->x0, WICK_TIMELINE_GUTTER) + 4;
      double w = label->x1 - x0 - 3;
      if (w < min_width)
        continue;
      pango_layout_set_width (layout, (int)(w * PANGO_SCALE));
      const char *name = wick_tracks_event_name (self->tracks, label->event);
      /* The measured region (one per trace) is marked, as candle-graph's
       * verdicts are about it. */
      if (label->event.kind == WICK_EVENT_SLICE
          && (self->spans[label->event.index].flags & WICK_SPAN_FLAG_MEASURED))
        set_label_text (layout, "◆ ", name ? name : "", w);
      else
        set_label_text (layout, NULL, name ? name : "", w);
      cairo_move_to (cr, x0, label->y + 3);
      pango_cairo_show_layout (cr, layout);
    }
}

/* ---- counters and instants ----------------------------------------------- */

/* A counter's value in its track's unit (the importer set it), @digits
 * significant digits for a plain number. */
static char *
counter_value_label (const WickTrack *track, double value, int digits)
{
  switch ((WickCounterUnit)track->unit)
    {
      case WICK_COUNTER_UNIT_BYTES:
        if (value >= 0)
          return wick_format_bytes ((guint64)value);
        break;
      case WICK_COUNTER_UNIT_NS:
        if (value >= 0)
          return wick_format_duration ((guint64)value);
        break;
      case WICK_COUNTER_UNIT_PERCENT:
        return g_strdup_printf ("%.*g%%", digits, value);
      case WICK_COUNTER_UNIT_COUNT:
      default:
        break;
    }
  return g_strdup_printf ("%.*g", digits, value);
}

static double
counter_y (WickTimelineScene *self, guint32 track, double value, double top, double height)
{
  const WickTrack *t = &wick_tracks_get_tracks (self->tracks, NULL)[track];
  double lo = MIN (t->min, 0), hi = t->max;
  if (hi <= lo)
    return top + height - 3;
  return top + 3 + (height - 6) * (1 - (value - lo) / (hi - lo));
}

static guint
counter_index_at (const WickCounterSample *samples, const WickTrackRow *r, guint64 t)
{
  /* Position of the last sample at or before t, or 0. */
  guint lo = 0, hi = r->n_events;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (samples[r->events[mid]].timestamp_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo > 0 ? lo - 1 : 0;
}

/* A step chart: each sample holds until the next; samples that fall in one
 * pixel column become one vertical stroke from their lowest to their highest
 * value. Zoomed out over many samples, the model's summary (the sample of
 * largest |value| per bucket) stands for the raw samples. */
static void
draw_counter (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view, guint32 track,
              double top, double height)
{
  const WickTrackRow *r = wick_tracks_track_row (self->tracks, track, 0);
  if (r == NULL || r->n_events == 0)
    return;
  const WickCounterSample *samples = wick_tracks_get_counter_samples (self->tracks, NULL);
  double plot = MAX (view->width - WICK_TIMELINE_GUTTER, 1);
  int level = wick_tracks_pick_level (self->tracks, view_ns_per_px (view));
  guint first = counter_index_at (samples, r, view->start_ns);
  const WickTrackMip *entries = NULL;
  guint count = r->n_events, pos = first;
  if (r->n_levels > 0 && r->n_events - first > 4 * plot)
    {
      level = MIN ((guint)MAX (level, 0), r->n_levels - 1);
      entries = r->levels[level];
      count = r->level_counts[level];
      guint lo = 0, hi = count;
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;
          if (samples[entries[mid].event].timestamp_ns < samples[r->events[first]].timestamp_ns)
            lo = mid + 1;
          else
            hi = mid;
        }
      pos = lo;
    }
  double bottom = top + height - 1;
  double prev_y = counter_y (self, track, samples[r->events[first]].value, top, height);
  double column = WICK_TIMELINE_GUTTER, low = prev_y, high = prev_y;
  cairo_move_to (cr, WICK_TIMELINE_GUTTER, bottom);
  cairo_line_to (cr, WICK_TIMELINE_GUTTER, prev_y);
  for (guint i = pos; i < count; i++)
    {
      const WickCounterSample *s = &samples[entries ? entries[i].event : r->events[i]];
      if (s->timestamp_ns > view->end_ns)
        break;
      double x = floor (CLAMP (wick_timeline_viewport_time_to_x (view, s->timestamp_ns),
                               WICK_TIMELINE_GUTTER, view->width));
      double y = counter_y (self, track, s->value, top, height);
      if (x == column)
        {
          low = MIN (low, y);
          high = MAX (high, y);
        }
      else
        {
          if (high != low)
            {
              cairo_line_to (cr, column, high);
              cairo_line_to (cr, column, low);
            }
          cairo_line_to (cr, column, prev_y);
          cairo_line_to (cr, x, prev_y);
          cairo_line_to (cr, x, y);
          column = x;
          low = high = y;
        }
      prev_y = y;
    }
  if (high != low)
    {
      cairo_line_to (cr, column, high);
      cairo_line_to (cr, column, low);
    }
  cairo_line_to (cr, column, prev_y);
  cairo_line_to (cr, view->width, prev_y);
  cairo_line_to (cr, view->width, bottom);
  cairo_close_path (cr);
  WickRgb colour = wick_palette_span (WICK_SPAN_SHADES * 0 + name_colour (track + 1), view->dark);
  set_blended (cr, colour, 0.35, view->dark);
  cairo_fill_preserve (cr);
  wick_palette_set (cr, colour, 1);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
}

static void
draw_instants (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view,
               guint32 track, double top, double height)
{
  const WickTrackRow *r = wick_tracks_track_row (self->tracks, track, 0);
  if (r == NULL || r->n_events == 0)
    return;
  const WickInstant *instants = wick_tracks_get_instants (self->tracks, NULL);
  guint64 q0 = wick_time_sub (view->start_ns, (guint64)(view_ns_per_px (view) * 4));
  guint lo = 0, hi = r->n_events;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (instants[r->events[mid]].timestamp_ns < q0)
        lo = mid + 1;
      else
        hi = mid;
    }
  double last_x = -1e9;
  for (guint i = lo; i < r->n_events; i++)
    {
      guint64 t = instants[r->events[i]].timestamp_ns;
      if (t > view->end_ns)
        break;
      double x = floor (wick_timeline_viewport_time_to_x (view, t)) + 0.5;
      if (x - last_x < 2)
        {
          /* Dense: skip to the first instant past the next pixel. */
          guint64 next = wick_timeline_viewport_x_to_time (view, last_x + 2);
          guint a = i, b = r->n_events;
          while (a < b)
            {
              guint mid = a + (b - a) / 2;
              if (instants[r->events[mid]].timestamp_ns < next)
                a = mid + 1;
              else
                b = mid;
            }
          if (a > i)
            i = a - 1;
          continue;
        }
      last_x = x;
      /* A tick with a small head, as Perfetto draws instants. */
      cairo_move_to (cr, x, top + 2);
      cairo_line_to (cr, x + 3.5, top + 6);
      cairo_line_to (cr, x, top + 10);
      cairo_line_to (cr, x - 3.5, top + 6);
      cairo_close_path (cr);
      cairo_rectangle (cr, x - 0.5, top + 9, 1, height - 11);
    }
  wick_palette_set (cr, wick_palette_device (0, view->dark), 0.9);
  cairo_fill (cr);
}

/* ---- ruler, markers, ops ------------------------------------------------- */

static guint64
ruler_step (const WickTimelineViewport *view)
{
  return wick_time_axis_step (view_ns_per_px (view), 90);
}

/* The ruler's grid lines alone, as draw_ruler() draws them under the tracks. */
static void
draw_grid (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  guint64 step = ruler_step (view);
  guint64 origin = self->extent_start;
  WickTimeTicks ticks;
  guint64 rel;
  wick_time_ticks_init (&ticks, origin, view->start_ns, view->end_ns, step,
                        (guint)(view->width / 8) + 2);
  wick_palette_set (cr, wick_palette_grid (view->dark), 1);
  while (wick_time_ticks_next (&ticks, &rel))
    {
      double x = floor (wick_timeline_viewport_time_to_x (view, wick_time_add (origin, rel))) + 0.5;
      if (x < WICK_TIMELINE_GUTTER)
        continue;
      cairo_move_to (cr, x, WICK_TIMELINE_RULER);
      cairo_line_to (cr, x, view->height);
      cairo_stroke (cr);
    }
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
/* First step (index into self->steps) that may overlap [t, ...): steps are
 * sorted by start and do not overlap, so the one before the first starting
 * after @t. */
static guint
first_step_from (WickTimelineScene *self, guint64 t)
{
  guint lo = 0, hi = self->steps->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (self->spans[g_array_index (self->steps, guint32, mid)].start_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo > 0 ? lo - 1 : 0;
}

/* The step row: each ProfilerStep#N as a band over its time, two alternating
 * tones, labelled with its number where it is wide enough; the selected step
 * outlined. Steps narrower than a pixel merge into the band before them. */
static void
draw_steps (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  if (self->steps->len == 0)
    return;
  double y = step_row_top (self) + 2, h = WICK_TIMELINE_STEP_ROW - 4;
  WickRgb accent = wick_palette_accent (view->dark), fg = wick_palette_foreground (view->dark);
  double last_x1 = -1e9;
  for (guint k = first_step_from (self, view->start_ns); k < self->steps->len; k++)
    {
      guint32 span = g_array_index (self->steps, guint32, k);
      const WickSpan *s = &self->spans[span];
      if (s->start_ns > view->end_ns)
        break;
      guint64 end = wick_time_add (s->start_ns, s->duration_ns);
      if (end < view->start_ns)
        continue;
      double x0 = MAX (wick_timeline_viewport_time_to_x (view, s->start_ns), WICK_TIMELINE_GUTTER);
      double x1 = MIN (wick_timeline_viewport_time_to_x (view, end), view->width);
      if (x1 < last_x1 + 1)
        continue;
      x0 = MAX (x0, last_x1);
      last_x1 = MAX (x1, x0 + 1);
      set_blended (cr, accent, k % 2 ? 0.30 : 0.50, view->dark);
      cairo_rectangle (cr, x0, y, last_x1 - x0, h);
      cairo_fill (cr);
      if (view->selected_type == WICK_RECORD_SPAN && view->selected_index == (gint64)span)
        {
          wick_palette_set (cr, fg, 1);
          cairo_rectangle (cr, x0 + 0.5, y + 0.5, last_x1 - x0 - 1, h - 1);
          cairo_stroke (cr);
        }
      if (!view->no_labels && x1 - x0 > 24)
        {
          const char *name = wick_document_str (self->document, s->name);
          const char *number = name ? strchr (name, '#') : NULL;
          wick_palette_set (cr, fg, 0.9);
          draw_text (self, cr, x1 - x0 > 110 || number == NULL ? name : number, x0 + 3, y - 1,
                     x1 - x0 - 5);
        }
    }
}

static void
draw_markers (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (self->document, &n);
  double y = WICK_TIMELINE_RULER + 2;
  if (!self->has_markers)
    return;
  extend_marker_labels (self);
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

/* Op ticks at the bottom of their span's row. */
static void
draw_ops (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  const WickOp *ops = wick_document_get_ops (self->document, NULL);
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
      cairo_rectangle_t r;
      WickEventRef ref = { WICK_EVENT_SLICE, (guint32)op->span };
      guint32 track = wick_tracks_event_track (self->tracks, ref);
      if (!wick_timeline_scene_track_rect (self, view, track, &r))
        continue;
      double x0 = floor (wick_timeline_viewport_time_to_x (view, op->timestamp_ns));
      double x1 = MAX (floor (wick_timeline_viewport_time_to_x (
                         view, wick_time_add (op->timestamp_ns, op->duration_ns))),
                       x0 + 1);
      if (x1 <= last_x)
        continue;
      last_x = x1;
      double y = r.y + wick_tracks_event_row (self->tracks, ref) * WICK_TIMELINE_ROW
                 + WICK_TIMELINE_ROW - 4;
      cairo_rectangle (cr, x0, y, MAX (x1 - x0 - 1, 1), 3);
    }
  cairo_set_source_rgba (cr, 0, 0, 0, view->dark ? 0.55 : 0.4);
  cairo_fill (cr);
}

/* ---- tracks -------------------------------------------------------------- */

WickGpuGraphs *
wick_timeline_scene_get_graphs (WickTimelineScene *self)
{
  if (self->graphs == NULL)
    self->graphs = wick_gpu_graphs_new (self->document);
  return self->graphs;
}

/* torch.compile's regions: a dashed outline in the compiled colour over
 * their slices (at most a few per step: Dynamo frames, AOT functions,
 * Inductor graph calls). */
static void
draw_compiled (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  if (self->compiled->len == 0)
    return;
  static const double dash[] = { 3, 2 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, 1.5);
  gboolean any = FALSE;
  for (guint i = 0; i < self->compiled->len; i++)
    {
      WickEventRef ref = g_array_index (self->compiled, WickEventRef, i);
      cairo_rectangle_t r;
      if (!wick_timeline_scene_event_rect (self, view, ref, &r) || r.width < 3)
        continue;
      double x0 = MAX (r.x, WICK_TIMELINE_GUTTER - 2), x1 = MIN (r.x + r.width, view->width + 2);
      cairo_rectangle (cr, floor (x0) + 0.75, floor (r.y) + 0.75, MAX (floor (x1 - x0) - 2.5, 1),
                       r.height - 1.5);
      any = TRUE;
    }
  if (any)
    {
      wick_palette_set (cr, wick_palette_compiled (view->dark), 1);
      cairo_stroke (cr);
      self->legend_compiled = TRUE;
    }
  cairo_restore (cr);
}

/* A collapsed group's summary: per pixel column, the share of its time the
 * group is busy (the union of its events), as a bar from the row's foot. */
static void
draw_busy_strip (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view,
                 gint32 process, guint32 track, double top, double height)
{
  const Coverage *c = process >= 0 ? process_coverage (self, (guint32)process)
                                   : track_coverage (self, track);
  if (c->n == 0)
    return;
  double x_end = view->width;
  double inner = height - 4;
  double run_x = -1, run_h = 0;
  guint64 prev = wick_timeline_viewport_x_to_time (view, WICK_TIMELINE_GUTTER);
  guint64 prev_busy = coverage_until (c, prev);
  for (double x = WICK_TIMELINE_GUTTER; x < x_end; x += 1)
    {
      guint64 t1 = wick_timeline_viewport_x_to_time (view, x + 1);
      guint64 busy1 = coverage_until (c, t1);
      double frac = t1 > prev ? (double)(busy1 - prev_busy) / (double)(t1 - prev) : 0;
      prev = t1;
      prev_busy = busy1;
      /* whole pixels, and any busy time at all shows as at least one */
      double h = frac > 0 ? MAX (round (frac * inner), 1) : 0;
      if (run_x >= 0 && h == run_h)
        continue;
      if (run_x >= 0 && run_h > 0)
        cairo_rectangle (cr, run_x, top + 2 + inner - run_h, x - run_x, run_h);
      run_x = x;
      run_h = h;
    }
  if (run_x >= 0 && run_h > 0)
    cairo_rectangle (cr, run_x, top + 2 + inner - run_h, x_end - run_x, run_h);
  set_blended (cr, wick_palette_accent (view->dark), 0.75, view->dark);
  cairo_fill (cr);
}

/* What one pass over the tracks draws: its band of the screen, and in it the
 * strip to draw (the whole band, or the rows a scroll exposed; the caller
 * clips to it). @label_counts, when set, keeps each row's label candidates
 * (by track << 32 | row): a row outside the strip is drawn only when its
 * count is not known yet, so that the pass knows every visible row's. */
typedef struct
{
  double clip_top, clip_bottom;
  double strip_top, strip_bottom;
  GHashTable *label_counts;
} TracksPass;

static gboolean
pass_row_known (const TracksPass *tp, guint32 track, guint row)
{
  gint64 key = (gint64)((guint64)track << 32 | row);
  return tp->label_counts != NULL && g_hash_table_contains (tp->label_counts, &key);
}

static void
pass_row_count (const TracksPass *tp, guint32 track, guint row, guint n)
{
  if (tp->label_counts == NULL)
    return;
  gint64 key = (gint64)((guint64)track << 32 | row);
  g_hash_table_insert (tp->label_counts, g_memdup2 (&key, sizeof key), GUINT_TO_POINTER (n));
}

static void
draw_track (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view,
            const LayoutItem *item, double top, GArray *labels, guint zebra, const TracksPass *tp)
{
  const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[item->index];
  gboolean in_strip = top + item->height >= tp->strip_top && top <= tp->strip_bottom;
  if (zebra % 2 && in_strip)
    {
      set_blended (cr, wick_palette_grid (view->dark), 0.3, view->dark);
      cairo_rectangle (cr, WICK_TIMELINE_GUTTER, top, view->width - WICK_TIMELINE_GUTTER,
                       item->height);
      cairo_fill (cr);
    }
  if (self->track_collapsed[item->index])
    {
      if (in_strip)
        draw_busy_strip (self, cr, view, -1, item->index, top, item->height);
      return;
    }
  switch (track->kind)
    {
      case WICK_TRACK_COUNTER:
        /* Steps are axis-aligned: no antialiasing needed, and much cheaper. */
        if (in_strip)
          draw_counter (self, cr, view, item->index, top, item->height);
        break;
      case WICK_TRACK_INSTANTS:
        if (!in_strip)
          break;
        cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
        draw_instants (self, cr, view, item->index, top, item->height);
        cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
        break;
      default:
        {
          guint rows = wick_tracks_track_n_rows (self->tracks, item->index);
          gboolean device = track->kind == WICK_TRACK_DEVICE;
          for (guint r = 0; r < rows; r++)
            {
              double y = top + r * WICK_TIMELINE_ROW;
              if (y + WICK_TIMELINE_ROW < WICK_TIMELINE_RULER || y > view->height)
                continue;
              if ((y + WICK_TIMELINE_ROW < tp->strip_top || y > tp->strip_bottom)
                  && pass_row_known (tp, item->index, r))
                continue;
              guint before = labels != NULL ? labels->len : 0;
              draw_row (self, view, item->index, r, device ? y + 2 : y,
                        device ? WICK_TIMELINE_ROW - 4 : WICK_TIMELINE_ROW - 1, labels);
              pass_row_count (tp, item->index, r, labels != NULL ? labels->len - before : 0);
            }
          break;
        }
    }
}

/* Search hits over the tracks: each pixel column shows the first match
 * starting in it, on its row, in the accent colour, however far zoomed out
 * (the summary level may have drawn a longer neighbour in its place). */
static void
draw_search_hits (WickTimelineScene *self, const WickTimelineViewport *view)
{
  if (view->match_list == NULL || view->n_match_list == 0)
    return;
  guint lo = 0, hi = view->n_match_list;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (self->spans[view->match_list[mid]].start_ns < view->start_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  double ns_per_px = view_ns_per_px (view);
  for (guint i = lo; i < view->n_match_list;)
    {
      guint32 span = view->match_list[i];
      guint64 start = self->spans[span].start_ns;
      if (start >= view->end_ns)
        break;
      WickEventRef ref = { WICK_EVENT_SLICE, span };
      cairo_rectangle_t r;
      if (wick_timeline_scene_event_rect (self, view, ref, &r))
        {
          double x0 = floor (MAX (r.x, WICK_TIMELINE_GUTTER));
          double x1 = MAX (floor (MIN (r.x + r.width, view->width)), x0 + 2);
          /* Narrow hits are drawn full; wide ones keep their own colour. */
          if (x1 - x0 < 6)
            batch_rect (self, BATCH_HIT, x0, x1, r.y, r.height);
        }
      /* Next: the first match starting after this pixel column. */
      guint64 next = wick_time_add (start, (guint64)MAX (ns_per_px, 1));
      guint a = i + 1, b = view->n_match_list;
      while (a < b)
        {
          guint mid = a + (b - a) / 2;
          if (self->spans[view->match_list[mid]].start_ns < next)
            a = mid + 1;
          else
            b = mid;
        }
      i = MAX (a, i + 1);
      if (a > i + 1)
        i = a;
    }
}

static void
draw_pin (cairo_t *cr, double x, double y, gboolean pinned, WickRgb fg)
{
  wick_palette_set (cr, fg, pinned ? 0.9 : 0.25);
  cairo_new_sub_path (cr);
  cairo_arc (cr, x, y + 4, 3, 0, 2 * G_PI);
  if (pinned)
    cairo_fill (cr);
  else
    cairo_stroke (cr);
  cairo_move_to (cr, x, y + 7);
  cairo_line_to (cr, x, y + 12);
  cairo_stroke (cr);
}

/* A small triangle centred on (x, y): pointing right when collapsed, down when expanded. */
static void
draw_disclosure (cairo_t *cr, double x, double y, gboolean collapsed)
{
  if (collapsed)
    {
      cairo_move_to (cr, x - 2, y - 4);
      cairo_line_to (cr, x + 3, y);
      cairo_line_to (cr, x - 2, y + 4);
    }
  else
    {
      cairo_move_to (cr, x - 4, y - 2);
      cairo_line_to (cr, x + 4, y - 2);
      cairo_line_to (cr, x, y + 3);
    }
  cairo_close_path (cr);
  cairo_fill (cr);
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
  if (self->has_markers)
    {
      wick_palette_set (cr, fg, 0.7);
      draw_text (self, cr, _ ("Wick events"), 10, WICK_TIMELINE_RULER + 3,
                 WICK_TIMELINE_GUTTER - 16);
    }
  if (self->steps->len)
    {
      wick_palette_set (cr, fg, 0.7);
      draw_text (self, cr, _ ("Steps"), 10, step_row_top (self) + 2, WICK_TIMELINE_GUTTER - 16);
    }
  const WickProcess *processes = wick_tracks_get_processes (self->tracks, NULL);
  double clip_x0, clip_y0, clip_x1, clip_y1;
  cairo_clip_extents (cr, &clip_x0, &clip_y0, &clip_x1, &clip_y1);
  for (int pass = 0; pass < 2; pass++)
    {
      /* Scrolled items first, then the pinned ones over them. */
      cairo_save (cr);
      if (pass == 0)
        {
          cairo_rectangle (cr, 0, scrolled_top (self), WICK_TIMELINE_GUTTER, view->height);
          cairo_clip (cr);
        }
      for (guint i = 0; i < self->items->len; i++)
        {
          const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
          if (item->pinned != pass)
            continue;
          double top = item_top (self, view, item);
          if (top > view->height || top + item->height < WICK_TIMELINE_RULER || top > clip_y1
              || top + item->height < clip_y0)
            continue;
          if (item->type == ITEM_PROCESS)
            {
              const WickProcess *p = &processes[item->index];
              const char *name = p->name ? wick_document_str (self->document, p->name) : NULL;
              g_autofree char *pid_text = g_strdup_printf ("%" G_GINT64_FORMAT, p->pid);
              g_autofree char *title = wick_tracks_process_title (self->tracks, item->index);
              /* a GPU process by its labels (GPU 0), others by name and pid */
              g_autofree char *label
                = (name && *name) || p->labels
                    ? g_strdup_printf ("%s %s", self->collapsed[item->index] ? "▸" : "▾", title)
                    : g_strdup_printf (_ ("%s process %s"),
                                       self->collapsed[item->index] ? "▸" : "▾", pid_text);
              wick_palette_set (cr, fg, 0.08);
              cairo_rectangle (cr, 0, top, view->width, item->height);
              cairo_fill (cr);
              wick_palette_set (cr, fg, 0.95);
              PangoLayout *layout = scene_layout (self, cr);
              PangoFontDescription *bold = pango_font_description_from_string ("Sans Bold 8");
              pango_layout_set_font_description (layout, bold);
              draw_text (self, cr, label, 6, top + 4, WICK_TIMELINE_GUTTER - 10);
              PangoFontDescription *font = pango_font_description_from_string ("Sans 8");
              pango_layout_set_font_description (layout, font);
              pango_font_description_free (bold);
              pango_font_description_free (font);
              continue;
            }
          wick_palette_set (cr, fg, 0.12);
          cairo_move_to (cr, 0, floor (top + item->height) - 0.5);
          cairo_line_to (cr, WICK_TIMELINE_GUTTER, floor (top + item->height) - 0.5);
          cairo_stroke (cr);
          wick_palette_set (cr, fg, 0.9);
          draw_text (self, cr, self->track_names[item->index], 14, top + 3,
                     WICK_TIMELINE_GUTTER - 34);
          if (track_collapsible (self, item->index))
            {
              /* the disclosure: ▸ collapsed to its summary row, ▾ expanded */
              wick_palette_set (cr, fg, 0.6);
              draw_disclosure (cr, 7, top + 10, self->track_collapsed[item->index]);
            }
          const WickTrack *track = &wick_tracks_get_tracks (self->tracks, NULL)[item->index];
          if (track->kind == WICK_TRACK_COUNTER && item->height >= 32)
            {
              g_autofree char *top_label = counter_value_label (track, track->max, 4);
              wick_palette_set (cr, fg, 0.5);
              draw_text (self, cr, top_label, 14, top + 18, WICK_TIMELINE_GUTTER - 34);
            }
          draw_pin (cr, WICK_TIMELINE_GUTTER - 12, top + 3, self->pinned[item->index], fg);
        }
      cairo_restore (cr);
    }
  if (self->pinned_height > 0)
    {
      wick_palette_set (cr, fg, 0.35);
      cairo_rectangle (cr, 0, scrolled_top (self) - 2, view->width, 2);
      cairo_fill (cr);
    }
  cairo_restore (cr);
}

static void
draw_gutter_cached (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  cairo_surface_t *target = cairo_get_target (cr);
  if (cairo_surface_get_type (target) != CAIRO_SURFACE_TYPE_IMAGE)
    {
      draw_gutter (self, cr, view);
      return;
    }
  double dy = view->scroll_y - self->gutter_scroll;
  int band_top = (int)scrolled_top (self), band_bottom = view->height;
  if (self->gutter != NULL && !self->row_cache_off
      && self->gutter_generation == self->layout_generation && self->gutter_height == view->height
      && self->gutter_dark == view->dark
      && cairo_image_surface_get_width (self->gutter) == WICK_TIMELINE_GUTTER
      && cairo_image_surface_get_height (self->gutter) == view->height && dy != 0
      && dy == floor (dy) && fabs (dy) < band_bottom - band_top)
    {
      /* scrolled by whole pixels: the labels still shown move, the exposed
       * strip is drawn */
      scroll_pixels (self->gutter, 0, WICK_TIMELINE_GUTTER, band_top, band_bottom, (int)dy);
      cairo_t *gcr = cairo_create (self->gutter);
      cairo_set_line_width (gcr, 1);
      if (dy > 0)
        cairo_rectangle (gcr, 0, band_bottom - dy, WICK_TIMELINE_GUTTER, dy);
      else
        cairo_rectangle (gcr, 0, band_top, WICK_TIMELINE_GUTTER, -dy);
      cairo_clip (gcr);
      draw_gutter (self, gcr, view);
      cairo_destroy (gcr);
      g_clear_object (&self->layout);
      self->gutter_scroll = view->scroll_y;
    }
  double sx, sy;
  cairo_surface_get_device_scale (target, &sx, &sy);
  if (self->gutter == NULL || self->row_cache_off
      || self->gutter_generation != self->layout_generation || self->gutter_scroll != view->scroll_y
      || self->gutter_height != view->height || self->gutter_dark != view->dark
      || cairo_image_surface_get_width (self->gutter) != (int)ceil (WICK_TIMELINE_GUTTER * sx))
    {
      g_clear_pointer (&self->gutter, cairo_surface_destroy);
      self->gutter = cairo_image_surface_create (
        CAIRO_FORMAT_RGB24, (int)ceil (WICK_TIMELINE_GUTTER * sx), (int)ceil (view->height * sy));
      cairo_surface_set_device_scale (self->gutter, sx, sy);
      cairo_t *gcr = cairo_create (self->gutter);
      cairo_set_line_width (gcr, 1);
      WickTimelineViewport narrow = *view;
      draw_gutter (self, gcr, &narrow);
      cairo_destroy (gcr);
      g_clear_object (&self->layout); /* made for the other context */
      self->gutter_generation = self->layout_generation;
      self->gutter_scroll = view->scroll_y;
      self->gutter_height = view->height;
      self->gutter_dark = view->dark;
    }
  cairo_save (cr);
  cairo_rectangle (cr, 0, 0, WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
  cairo_set_source_surface (cr, self->gutter, 0, 0);
  cairo_paint (cr);
  cairo_restore (cr);
}

/* ---- selection, flows ---------------------------------------------------- */

static void
flow_end_point (WickTimelineScene *self, const WickTimelineViewport *view, const WickFlowEnd *end,
                double *x, double *y)
{
  gint64 off = end->track < self->n_tracks ? self->track_offset[end->track] : 0;
  *x = wick_timeline_viewport_time_to_x (view, shift (end->timestamp_ns, off));
  cairo_rectangle_t r;
  if (end->event.kind != WICK_EVENT_NONE
      && wick_timeline_scene_event_rect (self, view, end->event, &r))
    {
      *y = r.y + r.height / 2;
      return;
    }
  if (wick_timeline_scene_track_rect (self, view, end->track, &r))
    {
      *y = r.y + MIN (r.height, WICK_TIMELINE_ROW) / 2;
      return;
    }
  /* Hidden (collapsed): its process header. */
  gint32 p = end->track < self->n_tracks ? track_process (self, end->track) : -1;
  for (guint i = 0; i < self->items->len; i++)
    {
      const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
      if (item->type == ITEM_PROCESS && (gint32)item->index == p)
        {
          *y = item_top (self, view, item) + item->height / 2.0;
          return;
        }
    }
  *y = view->height - 4;
}

guint
wick_timeline_scene_flow_chain (WickTimelineScene *self, WickEventRef event, guint32 *flows,
                                guint max, guint *n_direct)
{
  guint n = 0;
  *n_direct = 0;
  if (event.kind == WICK_EVENT_NONE || max == 0)
    return 0;
  guint n_flows;
  const WickFlow *all = wick_tracks_get_flows (self->tracks, &n_flows);
  if (n_flows == 0)
    return 0;
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  /* Breadth first from @event; the first wave is its own flows. */
  g_autoptr (GArray) queue = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
  g_array_append_val (queue, event);
  guint32 buf[64];
  for (guint q = 0; q < queue->len && n < max; q++)
    {
      WickEventRef e = g_array_index (queue, WickEventRef, q);
      guint k = wick_tracks_event_flows (self->tracks, e, buf, G_N_ELEMENTS (buf));
      for (guint i = 0; i < MIN (k, G_N_ELEMENTS (buf)) && n < max; i++)
        {
          if (g_hash_table_contains (seen, GUINT_TO_POINTER (buf[i] + 1)))
            continue;
          g_hash_table_add (seen, GUINT_TO_POINTER (buf[i] + 1));
          flows[n++] = buf[i];
          const WickFlow *f = &all[buf[i]];
          WickEventRef other = f->from.event.kind == e.kind && f->from.event.index == e.index
                                 ? f->to.event
                                 : f->from.event;
          if (other.kind != WICK_EVENT_NONE)
            g_array_append_val (queue, other);
        }
      if (q == 0)
        *n_direct = n;
    }
  return n;
}

gboolean
wick_timeline_scene_follow_flow (WickTimelineScene *self, WickEventRef event, int direction,
                                 WickEventRef *next)
{
  guint32 buf[64];
  guint k = wick_tracks_event_flows (self->tracks, event, buf, G_N_ELEMENTS (buf));
  const WickFlow *all = wick_tracks_get_flows (self->tracks, NULL);
  for (guint i = 0; i < MIN (k, G_N_ELEMENTS (buf)); i++)
    {
      const WickFlow *f = &all[buf[i]];
      gboolean outgoing = f->from.event.kind == event.kind && f->from.event.index == event.index;
      if ((direction > 0) == outgoing)
        {
          WickEventRef other = outgoing ? f->to.event : f->from.event;
          if (other.kind == WICK_EVENT_NONE)
            continue;
          *next = other;
          return TRUE;
        }
    }
  return FALSE;
}

static WickEventRef
selected_event (const WickTimelineViewport *view)
{
  if (view->selected_event_kind != WICK_EVENT_NONE && view->selected_event_index >= 0)
    return (WickEventRef){ view->selected_event_kind, (guint32)view->selected_event_index };
  if (view->selected_type == WICK_RECORD_SPAN && view->selected_index >= 0)
    return (WickEventRef){ WICK_EVENT_SLICE, (guint32)view->selected_index };
  return (WickEventRef){ WICK_EVENT_NONE, 0 };
}

static void
draw_arrow (cairo_t *cr, double x0, double y0, double x1, double y1)
{
  double dx = MAX (fabs (x1 - x0) / 2, 12);
  cairo_move_to (cr, x0, y0);
  cairo_curve_to (cr, x0 + dx, y0, x1 - dx, y1, x1, y1);
  cairo_stroke (cr);
  cairo_move_to (cr, x1, y1);
  cairo_line_to (cr, x1 - 7, y1 - 4);
  cairo_line_to (cr, x1 - 7, y1 + 4);
  cairo_close_path (cr);
  cairo_fill (cr);
  cairo_arc (cr, x0, y0, 2.5, 0, 2 * G_PI);
  cairo_fill (cr);
}

static void
draw_flows (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  guint32 flows[256];
  guint n_direct = 0, n = 0;
  const WickFlow *all = wick_tracks_get_flows (self->tracks, NULL);
  if (view->selected_event_kind == WICK_TIMELINE_EVENT_FLOW && view->selected_event_index >= 0)
    {
      flows[0] = (guint32)view->selected_event_index;
      n = n_direct = 1;
    }
  else
    n = wick_timeline_scene_flow_chain (self, selected_event (view), flows, G_N_ELEMENTS (flows),
                                        &n_direct);
  WickRgb accent = wick_palette_accent (view->dark);
  WickRgb fg = wick_palette_foreground (view->dark);
  for (guint i = n; i-- > 0;)
    {
      const WickFlow *f = &all[flows[i]];
      double x0, y0, x1, y1;
      flow_end_point (self, view, &f->from, &x0, &y0);
      flow_end_point (self, view, &f->to, &x1, &y1);
      gboolean direct = i < n_direct;
      cairo_set_line_width (cr, direct ? 2 : 1.2);
      wick_palette_set (cr, direct ? accent : fg, direct ? 1 : 0.55);
      draw_arrow (cr, x0, y0, x1, y1);
    }
  cairo_set_line_width (cr, 1);
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
  WickEventRef event = selected_event (view);
  if (view->selected_type == WICK_RECORD_DEVICE_INTERVAL && event.kind == WICK_EVENT_NONE)
    {
      guint n;
      const WickDeviceSlice *device = wick_tracks_get_device_slices (self->tracks, &n);
      for (guint i = 0; i < n; i++)
        if (device[i].source == view->selected_index)
          event = (WickEventRef){ WICK_EVENT_DEVICE, i };
    }
  cairo_rectangle_t r;
  for (guint i = 0; i < view->n_related; i++)
    if (wick_timeline_scene_event_rect (self, view, view->related[i], &r))
      {
        /* a wash and an accent box, a caret above when narrow */
        double x = MAX (r.x, WICK_TIMELINE_GUTTER), w = MIN (r.width, view->width - x);
        double cx = r.x + r.width / 2;
        if (w <= 0 && cx < WICK_TIMELINE_GUTTER)
          continue;
        wick_palette_set (cr, accent, 0.3);
        cairo_rectangle (cr, x, r.y, MAX (w, 1), r.height);
        cairo_fill (cr);
        wick_palette_set (cr, accent, 1);
        cairo_set_line_width (cr, 2);
        cairo_rectangle (cr, w < 6 ? floor (cx) - 3 : x + 1, r.y + 1, w < 6 ? 7 : w - 2,
                         r.height - 2);
        cairo_stroke (cr);
        if (w < 6)
          {
            cairo_move_to (cr, cx, r.y - 1);
            cairo_line_to (cr, cx - 4, r.y - 6);
            cairo_line_to (cr, cx + 4, r.y - 6);
            cairo_close_path (cr);
            cairo_fill (cr);
          }
        cairo_set_line_width (cr, 1);
      }
  if (event.kind != WICK_EVENT_NONE && event.kind != WICK_TIMELINE_EVENT_FLOW
      && wick_timeline_scene_event_rect (self, view, event, &r))
    {
      WickRgb fg = wick_palette_foreground (view->dark);
      double x = MAX (r.x, WICK_TIMELINE_GUTTER), w = MIN (r.width, view->width - x);
      cairo_set_line_width (cr, 2);
      if (w < 6)
        {
          /* A zero-length or very short record: a box around its mark and a
           * caret above it, so the selection shows at any zoom. */
          double cx = r.x + r.width / 2;
          wick_palette_set (cr, accent, 1);
          cairo_rectangle (cr, floor (cx) - 3, r.y, 7, r.height);
          cairo_stroke (cr);
          cairo_move_to (cr, cx, r.y - 1);
          cairo_line_to (cr, cx - 5, r.y - 7);
          cairo_line_to (cr, cx + 5, r.y - 7);
          cairo_close_path (cr);
          cairo_fill (cr);
        }
      else
        {
          wick_palette_set (cr, fg, 1);
          cairo_rectangle (cr, x + 1, r.y + 1, MAX (w - 2, 2), r.height - 2);
          cairo_stroke (cr);
        }
      cairo_set_line_width (cr, 1);
    }
}

guint
wick_timeline_scene_get_legend (WickTimelineScene *self, guint i, const char **name,
                                guint64 *visible_ns)
{
  if (i < self->n_legend)
    {
      if (name)
        *name = wick_document_str (self->document, self->legend[i].name);
      if (visible_ns)
        *visible_ns = self->legend_ns[i];
    }
  return self->n_legend;
}

/* A Chrome trace's legend, bottom right: the names that take the most of
 * the screen (their drawn width in all rows, as time), each with its hue,
 * and the compiled-region outline when one is on screen. */
static void
draw_name_legend (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  double ns_per_px = view_ns_per_px (view);
  guint rows = self->n_legend + (self->legend_compiled ? 1 : 0);
  for (guint i = 0; i < self->n_legend; i++)
    self->legend_ns[i] = (guint64)MAX (self->legend[i].px * ns_per_px, 0);
  if (rows == 0)
    return;
  PangoLayout *layout = scene_layout (self, cr);
  pango_layout_set_width (layout, -1);
  const double row_h = 16, name_w = 220, time_w = 64;
  double w = 8 + 14 + name_w + 6 + time_w + 8, h = rows * row_h + 8;
  double x = view->width - w - 8, y = view->height - 44 - h; /* above the hint bar */
  if (x < WICK_TIMELINE_GUTTER + 8 || y < top_of_tracks (self))
    return;
  cairo_rectangle (cr, x, y, w, h);
  cairo_set_source_rgba (cr, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1,
                         0.92);
  cairo_fill_preserve (cr);
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.25);
  cairo_stroke (cr);
  WickRgb fg = wick_palette_foreground (view->dark);
  for (guint i = 0; i < rows; i++)
    {
      double ry = y + 4 + i * row_h;
      gboolean compiled = i == self->n_legend;
      if (compiled)
        {
          static const double dash[] = { 3, 2 };
          cairo_save (cr);
          cairo_set_dash (cr, dash, 2, 0);
          cairo_set_line_width (cr, 1.5);
          wick_palette_set (cr, wick_palette_compiled (view->dark), 1);
          cairo_rectangle (cr, x + 8.75, ry + 3.75, 9.5, 8.5);
          cairo_stroke (cr);
          cairo_restore (cr);
        }
      else
        {
          wick_palette_set (cr, wick_palette_span (self->legend[i].colour, view->dark), 1);
          cairo_rectangle (cr, x + 8, ry + 3, 11, 10);
          cairo_fill (cr);
        }
      const char *name = compiled ? _ ("compiled region (torch.compile)")
                                  : wick_document_str (self->document, self->legend[i].name);
      wick_palette_set (cr, fg, 0.9);
      draw_text (self, cr, name ? name : "", x + 8 + 14, ry, name_w);
      if (!compiled)
        {
          g_autofree char *t = wick_format_duration (self->legend_ns[i]);
          wick_palette_set (cr, fg, 0.6);
          draw_text (self, cr, t, x + 8 + 14 + name_w + 6, ry, time_w);
        }
    }
}

/* The colour legend, bottom right: step hues and the measured-region mark. */
static void
draw_legend (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  static const char *steps[]
    = { N_ ("no step"), N_ ("forward"), N_ ("backward"), N_ ("optimizer") };
  PangoLayout *layout = scene_layout (self, cr);
  pango_layout_set_width (layout, -1);
  double widths[5], total = 8;
  for (guint i = 0; i < 5; i++)
    {
      pango_layout_set_text (layout, i < 4 ? _ (steps[i]) : _ ("◆ measured region"), -1);
      int w, h;
      pango_layout_get_pixel_size (layout, &w, &h);
      widths[i] = w + (i < 4 ? 16 : 0) + 10;
      total += widths[i];
    }
  double x = view->width - total - 8, y = view->height - 52; /* above the hint bar */
  if (x < WICK_TIMELINE_GUTTER + 8)
    return;
  cairo_rectangle (cr, x, y, total, 18);
  cairo_set_source_rgba (cr, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1,
                         0.9);
  cairo_fill_preserve (cr);
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.25);
  cairo_stroke (cr);
  x += 8;
  for (guint i = 0; i < 5; i++)
    {
      if (i < 4)
        {
          wick_palette_set (cr, wick_palette_span (i * WICK_SPAN_SHADES, view->dark), 1);
          cairo_rectangle (cr, x, y + 4, 11, 10);
          cairo_fill (cr);
        }
      wick_palette_set (cr, wick_palette_foreground (view->dark), 0.85);
      draw_text (self, cr, i < 4 ? _ (steps[i]) : _ ("◆ measured region"), x + (i < 4 ? 15 : 0),
                 y + 2, -1);
      x += widths[i];
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

char *
wick_timeline_scene_counter_label (WickTimelineScene *self, const WickTimelineViewport *view,
                                   guint32 track, double x)
{
  double value;
  guint64 t = wick_timeline_viewport_x_to_time (view, x);
  if (track >= self->n_tracks || !wick_tracks_counter_value_at (self->tracks, track, t, &value))
    return NULL;
  return counter_value_label (&wick_tracks_get_tracks (self->tracks, NULL)[track], value, 6);
}

/* The pointer's time in the ruler, and each visible counter's value at it. */
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

  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, NULL);
  for (guint i = 0; i < self->items->len; i++)
    {
      const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
      if (item->type != ITEM_TRACK || tracks[item->index].kind != WICK_TRACK_COUNTER)
        continue;
      double top = item_top (self, view, item);
      if ((!item->pinned && top < scrolled_top (self)) || top > view->height)
        continue;
      g_autofree char *value
        = wick_timeline_scene_counter_label (self, view, item->index, view->hover_x);
      if (value == NULL)
        continue;
      pango_layout_set_text (layout, value, -1);
      pango_layout_get_pixel_size (layout, &w, &h);
      double lx = view->hover_x + 6;
      if (lx + w + 8 > view->width)
        lx = view->hover_x - w - 14;
      cairo_rectangle (cr, lx, top + 2, w + 8, h + 2);
      cairo_set_source_rgba (cr, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1,
                             view->dark ? 0.12 : 1, 0.9);
      cairo_fill (cr);
      wick_palette_set (cr, wick_palette_foreground (view->dark), 1);
      cairo_move_to (cr, lx + 4, top + 3);
      pango_cairo_show_layout (cr, layout);
    }
}

/* The items of @pass in @tp's strip: process headers and tracks, their
 * boxes, the ops, torch.compile's regions and the search hits; their labels
 * into @labels (drawn by the caller, which knows how many the band has). */
static void
draw_tracks_pass (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view, int pass,
                  const TracksPass *tp, GArray *labels)
{
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  guint zebra = 0;
  for (guint i = 0; i < self->items->len; i++)
    {
      const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
      if (item->pinned != pass)
        continue;
      double top = item_top (self, view, item);
      if (item->type == ITEM_PROCESS)
        {
          /* a process's stripes count from its header, shown or scrolled
           * out: they stay put while the list scrolls */
          zebra = 0;
          if (top + item->height < tp->strip_top || top > tp->strip_bottom)
            continue;
          set_blended (cr, wick_palette_foreground (view->dark), 0.05, view->dark);
          cairo_rectangle (cr, WICK_TIMELINE_GUTTER, top, view->width, item->height);
          cairo_fill (cr);
          if (self->collapsed[item->index])
            draw_busy_strip (self, cr, view, (gint32)item->index, 0, top, item->height);
          continue;
        }
      if (top + item->height < tp->clip_top || top > tp->clip_bottom)
        {
          zebra++;
          continue;
        }
      draw_track (self, cr, view, item, top, labels, zebra++, tp);
    }
  flush_batches (self, cr, view->dark);
  if (!view->hide_ops && pass == 0)
    draw_ops (self, cr, view);
  draw_compiled (self, cr, view);
  draw_search_hits (self, view);
  flush_batches (self, cr, view->dark);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
}

/* The label candidates of every row the band of @tp shows, from the counts a
 * pass kept; FALSE when a row's is not known. */
static gboolean
band_label_total (WickTimelineScene *self, const WickTimelineViewport *view, const TracksPass *tp,
                  guint *total)
{
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, NULL);
  *total = 0;
  for (guint i = 0; i < self->items->len; i++)
    {
      const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
      if (item->pinned || item->type != ITEM_TRACK || self->track_collapsed[item->index])
        continue;
      WickTrackKind kind = tracks[item->index].kind;
      if (kind == WICK_TRACK_COUNTER || kind == WICK_TRACK_INSTANTS)
        continue;
      double top = item_top (self, view, item);
      if (top + item->height < tp->clip_top || top > tp->clip_bottom)
        continue;
      guint rows = wick_tracks_track_n_rows (self->tracks, item->index);
      for (guint r = 0; r < rows; r++)
        {
          double y = top + r * WICK_TIMELINE_ROW;
          if (y + WICK_TIMELINE_ROW < WICK_TIMELINE_RULER || y > view->height)
            continue;
          gint64 key = (gint64)((guint64)item->index << 32 | r);
          gpointer count;
          if (!g_hash_table_lookup_extended (tp->label_counts, &key, NULL, &count))
            return FALSE;
          *total += GPOINTER_TO_UINT (count);
        }
    }
  return TRUE;
}

/* Changes when the model's tracks gain events (a live document's scene may
 * outlive a change of its tracks). */
static guint64
content_stamp (WickTimelineScene *self)
{
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, &n);
  guint64 stamp = n;
  for (guint i = 0; i < n; i++)
    stamp = stamp * 31 + tracks[i].n_events;
  return stamp;
}

/* The scrolled band is drawn through the layer when the frame lands on an
 * image's pixels 1:1 and nothing in it is measured or dimmed per frame (the
 * legend, a search). */
static gboolean
layer_usable (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  return !self->row_cache_off && !self->legend_on && view->matches == NULL
         && view->device_matches == NULL && view->match_list == NULL && draws_on_pixels (cr);
}

/* What the scrolled band's pixels depend on besides the vertical scroll. */
static gboolean
layer_matches (WickTimelineScene *self, const WickTimelineViewport *view, double top)
{
  const PlotLayer *l = &self->layer;
  return l->surface != NULL && l->complete && l->start_ns == view->start_ns
         && l->end_ns == view->end_ns && l->width == view->width && l->height == view->height
         && l->top == top && l->gutter == WICK_TIMELINE_GUTTER && l->dark == view->dark
         && l->hide_ops == view->hide_ops && l->labels == !view->no_labels
         && l->layout_generation == self->layout_generation && l->stamp == content_stamp (self);
}

/* The band's background and the ruler's grid lines, in the clip of @cr. */
static void
layer_clear (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_paint (cr);
  draw_grid (self, cr, view);
}

/* Draws the whole band into the layer. */
static void
layer_redraw (WickTimelineScene *self, const WickTimelineViewport *view, double top, double bottom,
              GArray *labels)
{
  PlotLayer *l = &self->layer;
  if (l->surface == NULL || cairo_image_surface_get_width (l->surface) != view->width
      || cairo_image_surface_get_height (l->surface) != view->height)
    {
      g_clear_pointer (&l->surface, cairo_surface_destroy);
      l->surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view->width, view->height);
    }
  g_hash_table_remove_all (l->label_counts);
  cairo_t *cr = cairo_create (l->surface);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, top, view->width - WICK_TIMELINE_GUTTER, bottom - top);
  cairo_clip (cr);
  layer_clear (self, cr, view);
  TracksPass tp = { top, bottom, top, bottom, l->label_counts };
  draw_tracks_pass (self, cr, view, 0, &tp, labels);
  l->min_width = label_min_width (labels != NULL ? labels->len : 0);
  if (labels != NULL)
    draw_labels (self, cr, view, labels, l->min_width);
  cairo_destroy (cr);
  l->start_ns = view->start_ns;
  l->end_ns = view->end_ns;
  l->width = view->width;
  l->height = view->height;
  l->top = top;
  l->gutter = WICK_TIMELINE_GUTTER;
  l->dark = view->dark;
  l->hide_ops = view->hide_ops;
  l->labels = !view->no_labels;
  l->layout_generation = self->layout_generation;
  l->stamp = content_stamp (self);
  l->scroll_y = view->scroll_y;
  l->complete = !self->incomplete;
}

/* The layer scrolled by whole pixels: the rows still shown move, the strip
 * the scroll exposed is drawn. FALSE when the frame's labels would need
 * another width threshold than the layer's (then it is drawn afresh). */
static gboolean
layer_scroll (WickTimelineScene *self, const WickTimelineViewport *view, double top, double bottom,
              int dy, GArray *labels)
{
  PlotLayer *l = &self->layer;
  int x0 = WICK_TIMELINE_GUTTER, x1 = view->width, y0 = (int)top, y1 = (int)bottom;
  scroll_pixels (l->surface, x0, x1, y0, y1, dy);
  double strip_top = dy > 0 ? y1 - dy : y0, strip_bottom = dy > 0 ? y1 : y0 - dy;
  cairo_t *cr = cairo_create (l->surface);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, x0, strip_top, x1 - x0, strip_bottom - strip_top);
  cairo_clip (cr);
  layer_clear (self, cr, view);
  TracksPass tp = { top, bottom, strip_top, strip_bottom, l->label_counts };
  draw_tracks_pass (self, cr, view, 0, &tp, labels);
  guint total;
  gboolean same = band_label_total (self, view, &tp, &total)
                  && label_min_width (total) == l->min_width && !self->incomplete;
  if (same && labels != NULL)
    draw_labels (self, cr, view, labels, l->min_width);
  cairo_destroy (cr);
  l->scroll_y = view->scroll_y;
  return same;
}

/* The scrolled band through the layer: kept while the horizontal view and
 * the layout stay, moved by a scroll of whole pixels, and painted onto @cr. */
static void
draw_scrolled_layer (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view,
                     double top, double bottom, GArray *labels)
{
  PlotLayer *l = &self->layer;
  double dy = view->scroll_y - l->scroll_y;
  if (!layer_matches (self, view, top) || dy != floor (dy) || fabs (dy) >= bottom - top
      || (dy != 0 && !layer_scroll (self, view, top, bottom, (int)dy, labels)))
    {
      if (labels != NULL)
        g_array_set_size (labels, 0);
      layer_redraw (self, view, top, bottom, labels);
    }
  if (labels != NULL)
    g_array_set_size (labels, 0);
  copy_pixels (cairo_get_target (cr), l->surface, WICK_TIMELINE_GUTTER, view->width, (int)top,
               (int)bottom);
}

void
wick_timeline_scene_draw (WickTimelineScene *self, cairo_t *cr, const WickTimelineViewport *view)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  follow_spans (self);
  self->row_deadline = view->progressive ? g_get_monotonic_time () + self->row_budget_us : 0;
  self->rows_walked = 0;
  self->incomplete = FALSE;
  self->legend_on = view->legend && !view->no_labels
                    && wick_tracks_get_format (self->tracks) == WICK_TRACE_FORMAT_CHROME;
  self->legend_compiled = FALSE;
  /* the scrolled band comes whole from the layer: no background under it */
  gboolean use_layer
    = layer_usable (self, cr, view) && scrolled_top (self) < view->height
      && (layer_matches (self, view, scrolled_top (self))
          || (self->layer.direct_start == view->start_ns && self->layer.direct_end == view->end_ns
              && self->layer.direct_width == view->width && self->layer.direct_complete));
  if (!use_layer)
    {
      self->layer.direct_start = view->start_ns;
      self->layer.direct_end = view->end_ns;
      self->layer.direct_width = view->width;
    }
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_rectangle (cr, 0, 0, view->width, use_layer ? scrolled_top (self) : view->height);
  if (use_layer)
    cairo_rectangle (cr, 0, scrolled_top (self), WICK_TIMELINE_GUTTER,
                     view->height - scrolled_top (self));
  cairo_fill (cr);

  draw_ruler (self, cr, view);

  cairo_save (cr);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, WICK_TIMELINE_RULER,
                   view->width - WICK_TIMELINE_GUTTER, view->height - WICK_TIMELINE_RULER);
  cairo_clip (cr);
  g_autoptr (GArray) labels = view->no_labels ? NULL : g_array_new (FALSE, FALSE, sizeof (Label));
  if (self->legend_on)
    {
      if (self->legend_slots == NULL)
        self->legend_slots = g_new0 (LegendSlot, LEGEND_SLOTS);
      else
        memset (self->legend_slots, 0, LEGEND_SLOTS * sizeof (LegendSlot));
    }
  /* Scrolled tracks under the pinned ones. */
  for (int pass = 0; pass < 2; pass++)
    {
      double clip_top = pass == 0 ? scrolled_top (self) : top_of_tracks (self);
      double clip_bottom = pass == 0 ? view->height : scrolled_top (self);
      if (clip_bottom <= clip_top)
        continue;
      if (pass == 0 && use_layer)
        {
          draw_scrolled_layer (self, cr, view, clip_top, clip_bottom, labels);
          continue;
        }
      cairo_save (cr);
      cairo_rectangle (cr, WICK_TIMELINE_GUTTER, clip_top, view->width, clip_bottom - clip_top);
      cairo_clip (cr);
      if (pass == 1)
        {
          wick_palette_set (cr, wick_palette_background (view->dark), 1);
          cairo_paint (cr);
        }
      TracksPass tp = { clip_top, clip_bottom, clip_top, clip_bottom, NULL };
      draw_tracks_pass (self, cr, view, pass, &tp, labels);
      if (labels)
        {
          draw_labels (self, cr, view, labels, label_min_width (labels->len));
          g_array_set_size (labels, 0);
        }
      cairo_restore (cr);
    }
  /* The marker and step rows stay put while tracks scroll. */
  if (self->has_markers || self->steps->len)
    {
      wick_palette_set (cr, wick_palette_background (view->dark), 1);
      cairo_rectangle (cr, WICK_TIMELINE_GUTTER, WICK_TIMELINE_RULER, view->width,
                       top_of_tracks (self) - WICK_TIMELINE_RULER);
      cairo_fill (cr);
      draw_steps (self, cr, view);
      draw_markers (self, cr, view);
    }
  draw_selection (self, cr, view);
  draw_flows (self, cr, view);
  draw_hover_line (view, cr);
  if (self->legend_on)
    {
      legend_finish (self);
      draw_name_legend (self, cr, view);
    }
  else if (view->legend && wick_tracks_get_format (self->tracks) != WICK_TRACE_FORMAT_CHROME)
    draw_legend (self, cr, view);
  cairo_restore (cr);

  draw_hover_time (self, cr, view);
  if (self->n_order == 0)
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
  if (!view->no_gutter)
    draw_gutter_cached (self, cr, view);
  cairo_restore (cr);
  if (!use_layer)
    self->layer.direct_complete = !self->incomplete;
}

void
wick_timeline_scene_draw_gutter (WickTimelineScene *self, cairo_t *cr,
                                 const WickTimelineViewport *view)
{
  follow_spans (self);
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, 0, 0, WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
  draw_gutter (self, cr, view);
  cairo_restore (cr);
}

guint64
wick_timeline_scene_get_gutter_stamp (WickTimelineScene *self)
{
  guint64 stamp = self->serial;
  stamp = stamp * 1000003u ^ self->layout_generation;
  stamp = stamp * 1000003u ^ content_stamp (self);
  stamp = stamp * 1000003u ^ wick_tracks_get_build_serial (self->tracks);
  return stamp * 1000003u ^ wick_tracks_get_append_serial (self->tracks);
}

gboolean
wick_timeline_scene_get_complete (WickTimelineScene *self)
{
  return !self->incomplete;
}

void
wick_timeline_scene_set_row_budget (WickTimelineScene *self, gint64 budget_us)
{
  self->row_budget_us = budget_us;
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

/* ---- geometry and hits --------------------------------------------------- */

gboolean
wick_timeline_scene_event_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                WickEventRef event, cairo_rectangle_t *rect)
{
  guint32 track = wick_tracks_event_track (self->tracks, event);
  cairo_rectangle_t t;
  if (!wick_timeline_scene_track_rect (self, view, track, &t))
    return FALSE;
  if (self->track_collapsed[track])
    return FALSE; /* drawn only as its track's summary */
  guint64 start, end;
  wick_timeline_scene_event_extent (self, event, &start, &end);
  double x0 = wick_timeline_viewport_time_to_x (view, start);
  double x1 = wick_timeline_viewport_time_to_x (view, end);
  const WickTrack *tr = &wick_tracks_get_tracks (self->tracks, NULL)[track];
  rect->x = x0;
  rect->width = MAX (x1 - x0, 1);
  switch (tr->kind)
    {
      case WICK_TRACK_COUNTER:
      case WICK_TRACK_INSTANTS:
        rect->x = x0 - 3;
        rect->width = 7;
        rect->y = t.y;
        rect->height = t.height;
        break;
      case WICK_TRACK_DEVICE:
        rect->y = t.y + wick_tracks_event_row (self->tracks, event) * WICK_TIMELINE_ROW + 2;
        rect->height = WICK_TIMELINE_ROW - 4;
        break;
      default:
        rect->y = t.y + wick_tracks_event_row (self->tracks, event) * WICK_TIMELINE_ROW;
        rect->height = WICK_TIMELINE_ROW - 1;
        break;
    }
  return x1 >= WICK_TIMELINE_GUTTER - 4 && x0 <= view->width + 4 && rect->y < view->height
         && rect->y + rect->height > WICK_TIMELINE_RULER;
}

gboolean
wick_timeline_scene_span_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                               guint span, cairo_rectangle_t *rect)
{
  g_return_val_if_fail (span < self->n_spans, FALSE);
  WickEventRef ref = { WICK_EVENT_SLICE, span };
  return wick_timeline_scene_event_rect (self, view, ref, rect);
}

/* The layout item under widget y, or NULL. */
static const LayoutItem *
item_at (WickTimelineScene *self, const WickTimelineViewport *view, double y)
{
  gboolean in_pinned = y >= top_of_tracks (self) && y < scrolled_top (self);
  if (y < top_of_tracks (self))
    return NULL;
  for (guint i = 0; i < self->items->len; i++)
    {
      const LayoutItem *item = &g_array_index (self->items, LayoutItem, i);
      if ((gboolean)item->pinned != in_pinned)
        continue;
      double top = item_top (self, view, item);
      if (y >= top && y < top + item->height)
        return item;
    }
  return NULL;
}

gboolean
wick_timeline_scene_hit_event (WickTimelineScene *self, const WickTimelineViewport *view, double x,
                               double y, WickEventRef *event)
{
  follow_spans (self);
  event->kind = WICK_EVENT_NONE;
  event->index = 0;
  if (x < WICK_TIMELINE_GUTTER || y < top_of_tracks (self))
    return FALSE;
  /* The ends of the arrows drawn first: they lie over the tracks. */
  guint32 flows[256];
  guint n_direct = 0;
  guint n = 0;
  const WickFlow *all = wick_tracks_get_flows (self->tracks, NULL);
  if (view->selected_event_kind == WICK_TIMELINE_EVENT_FLOW && view->selected_event_index >= 0)
    {
      flows[0] = (guint32)view->selected_event_index;
      n = 1;
    }
  else
    n = wick_timeline_scene_flow_chain (self, selected_event (view), flows, G_N_ELEMENTS (flows),
                                        &n_direct);
  for (guint i = 0; i < n; i++)
    {
      const WickFlow *f = &all[flows[i]];
      double x0, y0, x1, y1;
      flow_end_point (self, view, &f->from, &x0, &y0);
      flow_end_point (self, view, &f->to, &x1, &y1);
      if (hypot (x - x0, y - y0) <= 5 || hypot (x - x1, y - y1) <= 6)
        {
          event->kind = WICK_TIMELINE_EVENT_FLOW;
          event->index = flows[i];
          return TRUE;
        }
    }
  const LayoutItem *item = item_at (self, view, y);
  if (item == NULL || item->type != ITEM_TRACK)
    return FALSE;
  guint32 track = item->index;
  if (self->track_collapsed[track])
    return FALSE;
  const WickTrack *tr = &wick_tracks_get_tracks (self->tracks, NULL)[track];
  guint64 time = shift (wick_timeline_viewport_x_to_time (view, x), -self->track_offset[track]);
  guint64 slop = wick_time_from_double (view_ns_per_px (view) * 2);
  if (tr->kind == WICK_TRACK_COUNTER)
    {
      /* The sample in effect at the pointer. */
      const WickTrackRow *r = wick_tracks_track_row (self->tracks, track, 0);
      const WickCounterSample *samples = wick_tracks_get_counter_samples (self->tracks, NULL);
      if (r == NULL || r->n_events == 0 || samples[r->events[0]].timestamp_ns > time + slop)
        return FALSE;
      event->kind = WICK_EVENT_COUNTER;
      event->index = r->events[counter_index_at (samples, r, wick_time_add (time, slop))];
      return TRUE;
    }
  guint row = 0;
  if (tr->kind != WICK_TRACK_INSTANTS)
    row = (guint)MAX ((y - item_top (self, view, item)) / WICK_TIMELINE_ROW, 0);
  else
    slop *= 2;
  return wick_tracks_event_at (self->tracks, track, row, time, slop, event);
}

WickRecordType
wick_timeline_scene_hit (WickTimelineScene *self, const WickTimelineViewport *view, double x,
                         double y, gint64 *index)
{
  follow_spans (self);
  *index = -1;
  if (x < WICK_TIMELINE_GUTTER || y < WICK_TIMELINE_RULER)
    return WICK_RECORD_NONE;
  if (self->has_markers && y < WICK_TIMELINE_RULER + WICK_TIMELINE_MARKER_ROW)
    {
      guint64 time = wick_timeline_viewport_x_to_time (view, x);
      guint64 slop = wick_time_from_double (view_ns_per_px (view) * 2);
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
  if (self->steps->len && y >= step_row_top (self) && y < top_of_tracks (self))
    {
      /* the step under the pointer, as its span */
      guint64 time = wick_timeline_viewport_x_to_time (view, x);
      guint k = first_step_from (self, time);
      const WickSpan *s = &self->spans[g_array_index (self->steps, guint32, k)];
      if (time < s->start_ns || time >= wick_time_add (s->start_ns, MAX (s->duration_ns, 1)))
        return WICK_RECORD_NONE;
      *index = g_array_index (self->steps, guint32, k);
      return WICK_RECORD_SPAN;
    }
  WickEventRef event;
  if (!wick_timeline_scene_hit_event (self, view, x, y, &event))
    return WICK_RECORD_NONE;
  if (event.kind == WICK_EVENT_SLICE)
    {
      *index = event.index;
      return WICK_RECORD_SPAN;
    }
  if (event.kind == WICK_EVENT_DEVICE)
    {
      const WickDeviceSlice *d = &wick_tracks_get_device_slices (self->tracks, NULL)[event.index];
      if (d->source >= 0)
        {
          *index = d->source;
          return WICK_RECORD_DEVICE_INTERVAL;
        }
    }
  return WICK_RECORD_NONE;
}

WickTimelineGutterHit
wick_timeline_scene_hit_gutter (WickTimelineScene *self, const WickTimelineViewport *view, double x,
                                double y, guint32 *index)
{
  if (x >= WICK_TIMELINE_GUTTER || x < 0)
    return WICK_TIMELINE_GUTTER_NONE;
  const LayoutItem *item = item_at (self, view, y);
  if (item == NULL)
    return WICK_TIMELINE_GUTTER_NONE;
  *index = item->index;
  if (item->type == ITEM_PROCESS)
    return WICK_TIMELINE_GUTTER_PROCESS;
  double top = item_top (self, view, item);
  if (x >= WICK_TIMELINE_GUTTER - 22 && y < top + 18)
    return WICK_TIMELINE_GUTTER_PIN;
  if (y < top + 18 && track_collapsible (self, item->index))
    return WICK_TIMELINE_GUTTER_EXPANDER;
  return WICK_TIMELINE_GUTTER_TRACK;
}

/* ---- overview ------------------------------------------------------------ */

void
wick_timeline_scene_draw_overview_rows (WickTimelineScene *self, cairo_t *cr,
                                        const WickTimelineViewport *view)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  follow_spans (self);
  /* Every row in full, whatever is left of the main frame's budget (its
   * widget keeps these pixels), and the main frame's completeness as it was. */
  gint64 deadline = self->row_deadline;
  gboolean incomplete = self->incomplete;
  self->row_deadline = 0;
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, view->dark ? 0.16 : 0.96, view->dark ? 0.16 : 0.96,
                         view->dark ? 0.17 : 0.97, 1);
  cairo_paint (cr);
  /* Every row of the slices, async and device tracks, thin. */
  const WickTrack *tracks = wick_tracks_get_tracks (self->tracks, NULL);
  guint total_rows = 0;
  for (guint i = 0; i < self->n_order; i++)
    if (tracks[self->order[i]].kind != WICK_TRACK_COUNTER
        && tracks[self->order[i]].kind != WICK_TRACK_INSTANTS)
      total_rows += wick_tracks_track_n_rows (self->tracks, self->order[i]);
  double top = 3, height = view->height - 10;
  double row = total_rows ? MAX (floor (height / total_rows), 1) : height;
  cairo_save (cr);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, 0, view->width - WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_NONE);
  double y = top;
  for (guint i = 0; i < self->n_order && y < top + height; i++)
    {
      guint32 t = self->order[i];
      if (tracks[t].kind == WICK_TRACK_COUNTER || tracks[t].kind == WICK_TRACK_INSTANTS)
        continue;
      guint rows = wick_tracks_track_n_rows (self->tracks, t);
      for (guint r = 0; r < rows && y < top + height; r++, y += row)
        draw_row (self, view, t, r, y, MAX (row - (row > 3 ? 1 : 0), 1), NULL);
    }
  flush_batches (self, cr, view->dark);
  /* Search hits: a tick per pixel column holding one, along the bottom. */
  if (view->match_list && view->n_match_list > 0)
    {
      double last_x = -1;
      for (guint i = 0; i < view->n_match_list; i++)
        {
          double x = floor (
            wick_timeline_viewport_time_to_x (view, self->spans[view->match_list[i]].start_ns));
          if (x <= last_x)
            continue;
          last_x = x;
          cairo_rectangle (cr, x, view->height - 7, 2, 6);
        }
      wick_palette_set (cr, wick_palette_accent (view->dark), 1);
      cairo_fill (cr);
    }
  cairo_restore (cr);
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.7);
  draw_text (self, cr, _ ("Overview"), 10, view->height / 2.0 - 7, WICK_TIMELINE_GUTTER - 16);
  if (view->match_list && view->n_match_list > 0)
    {
      g_autofree char *hits = g_strdup_printf (
        g_dngettext (NULL, "%u hit", "%u hits", view->n_match_list), view->n_match_list);
      wick_palette_set (cr, wick_palette_accent (view->dark), 1);
      draw_text (self, cr, hits, 10, view->height / 2.0 + 5, WICK_TIMELINE_GUTTER - 16);
    }
  cairo_restore (cr);
  self->row_deadline = deadline;
  self->incomplete = incomplete;
}

void
wick_timeline_scene_draw_overview_band (WickTimelineScene *self, cairo_t *cr,
                                        const WickTimelineViewport *view, guint64 visible_start,
                                        guint64 visible_end)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  cairo_save (cr);
  cairo_rectangle (cr, WICK_TIMELINE_GUTTER, 0, view->width - WICK_TIMELINE_GUTTER, view->height);
  cairo_clip (cr);
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
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.25);
  cairo_move_to (cr, 0, view->height - 0.5);
  cairo_line_to (cr, view->width, view->height - 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
wick_timeline_scene_draw_overview (WickTimelineScene *self, cairo_t *cr,
                                   const WickTimelineViewport *view, guint64 visible_start,
                                   guint64 visible_end)
{
  wick_timeline_scene_draw_overview_rows (self, cr, view);
  wick_timeline_scene_draw_overview_band (self, cr, view, visible_start, visible_end);
}
