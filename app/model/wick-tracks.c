/* wick-tracks.c — the track model (see wick-tracks.h for the contract).
 *
 * Builder state lives in "pending" arrays until finish: slices per thread
 * (B/E/X), async begin/end/instant, flow points and flow v2 bindings, since
 * their matching needs timestamp order and a file need not be sorted. Counter
 * samples, instants and device intervals are stored directly. Finish rebases
 * times, matches, appends slices to the document's spans and indexes.
 *
 * The index of a row: its events sorted by start (a linear check first: rows
 * built from a trace are almost always in order already; otherwise a stable
 * LSD radix sort on start, linear in the row size, and ties ordered longer
 * first), a prefix maximum of ends kept per block of 64 events (1/8 byte an
 * event instead of 8), and the mipmap levels.
 */
#include "config.h"

#include "wick-tracks-private.h"

#include "wick-huge-pages.h"

#include <math.h>
#include <string.h>

#define BLOCK_SHIFT 6
#define BLOCK (1u << BLOCK_SHIFT)

typedef struct
{
  gint64 ts;
  gint64 dur; /* >= 0 for X, PENDING_B, PENDING_E */
  guint32 thread;
  guint32 seq;
  WickStr name, category, args;
} PendingSlice;

#define PENDING_B (-1)
#define PENDING_E (-2)

typedef struct
{
  gint64 ts;
  gint32 process;
  guint32 seq;
  WickStr category, id, scope, name, args;
  guint8 phase; /* 0 begin, 1 end, 2 instant */
} PendingAsync;

typedef struct
{
  gint64 ts;
  guint32 thread;
  guint32 seq;
  WickStr category, name, id;
  guint8 phase; /* WickFlowPhase */
  gboolean bind_enclosing;
} FlowPoint;

typedef struct
{
  WickPendingSlice slice;
  WickStr id;
  gboolean flow_in, flow_out;
} FlowBind;

typedef struct
{
  guint32 kind;
  gint32 a;
  guint32 b, c;
} TrackKey;

typedef struct
{
  WickTrackRow pub;
  guint64 *block_max; /* prefix max of ends at the end of each block */
  WickTrackMip **levels;
  guint *level_counts;
  /* room for appends (wick_tracks_append_end): events (and their blocks),
   * entries per level, level slots */
  guint capacity;
  guint *level_caps;
  guint level_slots;
  /* levels[] holds n_all levels, the first `hidden` of them finer than the
   * zoom base (kept by appends when the base grew coarser, so that a base
   * that turns finer again needs no new summary): pub shows the others */
  guint n_all, hidden;
} Row;

typedef struct
{
  guint n_rows;
  Row *rows;
} TrackIndex;

typedef struct
{
  guint64 key; /* kind << 32 | index */
  guint32 flow;
  guint32 outgoing; /* 1: the flow starts at this event */
} FlowOfEvent;

struct _WickTracks
{
  WickDocument *doc;
  WickTraceFormat format;
  gboolean finished;
  gint64 origin;
  guint64 start_ns, end_ns;
  guint64 built_records; /* candle-graph: doc records when built, +1 */
  gboolean built_finished;

  GArray *processes, *threads, *tracks;
  GArray *thread_slices, *thread_instants; /* guint32 per thread, G_MAXUINT32 none */
  GArray *thread_device; /* guint32 per thread: device track its flows bind to, or none */
  GArray *process_instants;                /* guint32 per process */
  guint32 global_instants;
  GHashTable *process_by_pid; /* gint64* -> index+1 */
  GHashTable *thread_by_key;  /* TrackKey{0, process, tid lo, tid hi} -> index+1 */
  GHashTable *track_by_key;   /* TrackKey -> index+1 */

  GArray *pending, *pending_async, *flow_points, *flow_binds;
  GArray *async, *counters, *instants, *device, *flows;
  guint32 *pending_span; /* pending slice -> span index */
  guint n_pending_span;

  guint32 span_base;   /* first span added by the builder */
  GArray *key_track;     /* guint32 per WickSpan.thread key: its slices track */
  gboolean rows_are_depths; /* a span's row is its depth (no cross-track parents) */
  guint16 *build_rows;   /* candle-graph build: each span's row, until indexed */
  GArray *span_args;   /* WickStr per span; NULL when none */
  GArray *span_category;

  GArray *pending_corr; /* PendingCorrelation, until finish */
  GArray *pending_ext_slice; /* PendingCorrelation: a runtime call's External id, until finish */
  GArray *pending_ext_op;    /* PendingCorrelation: an operator's External id, until finish */
  GArray *pending_ext_device; /* ExternalOfDevice: a work interval's, until finish */
  GArray *span_corr;    /* SpanLink {span, correlation} by span */
  GArray *launched;     /* SpanLink {span, device index} by span, then start */
  guint n_launch_flows; /* flows added from correlation ids (after the file's) */

  GArray *skipped;      /* SkipEntry */
  GHashTable *skip_map; /* name -> index+1 */

  TrackIndex *index; /* per track */
  guint n_indexed_tracks; /* tracks the index has */
  guint n_indexed_spans;  /* spans the index has placed */
  gboolean extent_any;    /* an event set the extent (else it is the empty one) */
  guint64 raw_end;        /* the latest end, before the start + 1 floor */
  /* appending (wick_tracks_append_begin .. _end): the first new entry of each kind */
  guint append_async, append_counters, append_instants, append_device;
  GArray *append_dirty; /* guint32: indexed spans whose end may have moved */
  /* device slices renamed since the build: one by one (guint32 indices, in
   * the order of the renames) and every one at once (how many times) */
  GArray *device_renamed;
  guint device_renamed_all;
  gpointer live;        /* the candle builder's state for its next append */
  GDestroyNotify live_free;
  /* kept across rebuilds */
  guint64 build_serial, append_serial;
  WickTracksUpdateStats stats;
  WickHugePagesAdvised huge_pages[8]; /* the arrays of advise_huge_pages() */
  gboolean incremental_off;
  guint64 base_ns;
  guint base_shift;
  GArray *display_order;
  GArray *flows_by_event; /* FlowOfEvent sorted by key */
};

typedef struct
{
  char *name;
  guint64 count;
} SkipEntry;

typedef struct
{
  WickPendingSlice slice;
  gint64 correlation;
} PendingCorrelation;

typedef struct
{
  guint32 device;
  gint64 external;
} ExternalOfDevice;

typedef struct
{
  guint32 span;
  guint32 device; /* launched: its device index; span_corr: unused */
  gint64 value;   /* span_corr: the correlation; launched: the device start */
} SpanLink;

/* ---- keys ----------------------------------------------------------------- */

static guint
key_hash (gconstpointer p)
{
  const TrackKey *k = p;
  guint64 h = ((guint64)k->kind * 0x9E3779B97F4A7C15ull) ^ ((guint64)(guint32)k->a << 1);
  h = (h ^ k->b) * 0xff51afd7ed558ccdull;
  h = (h ^ k->c) * 0xc4ceb9fe1a85ec53ull;
  return (guint)(h ^ (h >> 32));
}

static gboolean
key_equal (gconstpointer a, gconstpointer b)
{
  return memcmp (a, b, sizeof (TrackKey)) == 0;
}

static guint32
key_lookup (GHashTable *table, guint32 kind, gint32 a, guint32 b, guint32 c)
{
  TrackKey key = { kind, a, b, c };
  return GPOINTER_TO_UINT (g_hash_table_lookup (table, &key));
}

static void
key_insert (GHashTable *table, guint32 kind, gint32 a, guint32 b, guint32 c, guint32 value)
{
  TrackKey *key = g_new (TrackKey, 1);
  *key = (TrackKey){ kind, a, b, c };
  g_hash_table_insert (table, key, GUINT_TO_POINTER (value + 1));
}

/* ---- lifetime ------------------------------------------------------------- */

static void
index_free (WickTracks *self)
{
  if (self->index == NULL)
    return;
  for (guint t = 0; t < self->n_indexed_tracks; t++)
    {
      TrackIndex *ti = &self->index[t];
      for (guint r = 0; r < ti->n_rows; r++)
        {
          Row *row = &ti->rows[r];
          g_free ((gpointer)row->pub.events);
          g_free (row->block_max);
          for (guint l = 0; l < row->n_all; l++)
            g_free (row->levels[l]);
          g_free (row->levels);
          g_free (row->level_counts);
          g_free (row->level_caps);
        }
      g_free (ti->rows);
    }
  g_clear_pointer (&self->index, g_free);
}

static void
clear_arrays (WickTracks *self)
{
  index_free (self);
  if (self->live != NULL && self->live_free != NULL)
    self->live_free (self->live);
  self->live = NULL;
  self->live_free = NULL;
  g_clear_pointer (&self->append_dirty, g_array_unref);
  g_clear_pointer (&self->device_renamed, g_array_unref);
  g_clear_pointer (&self->processes, g_array_unref);
  g_clear_pointer (&self->threads, g_array_unref);
  g_clear_pointer (&self->tracks, g_array_unref);
  g_clear_pointer (&self->thread_slices, g_array_unref);
  g_clear_pointer (&self->thread_instants, g_array_unref);
  g_clear_pointer (&self->thread_device, g_array_unref);
  g_clear_pointer (&self->process_instants, g_array_unref);
  g_clear_pointer (&self->process_by_pid, g_hash_table_unref);
  g_clear_pointer (&self->thread_by_key, g_hash_table_unref);
  g_clear_pointer (&self->track_by_key, g_hash_table_unref);
  g_clear_pointer (&self->pending, g_array_unref);
  g_clear_pointer (&self->pending_async, g_array_unref);
  g_clear_pointer (&self->flow_points, g_array_unref);
  g_clear_pointer (&self->flow_binds, g_array_unref);
  g_clear_pointer (&self->async, g_array_unref);
  g_clear_pointer (&self->counters, g_array_unref);
  g_clear_pointer (&self->instants, g_array_unref);
  g_clear_pointer (&self->device, g_array_unref);
  g_clear_pointer (&self->flows, g_array_unref);
  g_clear_pointer (&self->pending_span, g_free);
  g_clear_pointer (&self->key_track, g_array_unref);
  g_clear_pointer (&self->build_rows, g_free);
  g_clear_pointer (&self->span_args, g_array_unref);
  g_clear_pointer (&self->span_category, g_array_unref);
  g_clear_pointer (&self->pending_corr, g_array_unref);
  g_clear_pointer (&self->pending_ext_slice, g_array_unref);
  g_clear_pointer (&self->pending_ext_op, g_array_unref);
  g_clear_pointer (&self->pending_ext_device, g_array_unref);
  g_clear_pointer (&self->span_corr, g_array_unref);
  g_clear_pointer (&self->launched, g_array_unref);
  if (self->skipped != NULL)
    for (guint i = 0; i < self->skipped->len; i++)
      g_free (g_array_index (self->skipped, SkipEntry, i).name);
  g_clear_pointer (&self->skipped, g_array_unref);
  g_clear_pointer (&self->skip_map, g_hash_table_unref);
  g_clear_pointer (&self->display_order, g_array_unref);
  g_clear_pointer (&self->flows_by_event, g_array_unref);
}

static void
init_arrays (WickTracks *self)
{
  self->processes = g_array_new (FALSE, TRUE, sizeof (WickProcess));
  self->threads = g_array_new (FALSE, TRUE, sizeof (WickThread));
  self->tracks = g_array_new (FALSE, TRUE, sizeof (WickTrack));
  self->thread_slices = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->thread_instants = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->thread_device = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->process_instants = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->global_instants = G_MAXUINT32;
  self->process_by_pid = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->thread_by_key = g_hash_table_new_full (key_hash, key_equal, g_free, NULL);
  self->track_by_key = g_hash_table_new_full (key_hash, key_equal, g_free, NULL);
  self->pending = g_array_new (FALSE, FALSE, sizeof (PendingSlice));
  self->pending_async = g_array_new (FALSE, FALSE, sizeof (PendingAsync));
  self->flow_points = g_array_new (FALSE, FALSE, sizeof (FlowPoint));
  self->flow_binds = g_array_new (FALSE, FALSE, sizeof (FlowBind));
  self->async = g_array_new (FALSE, FALSE, sizeof (WickAsyncSlice));
  self->counters = g_array_new (FALSE, FALSE, sizeof (WickCounterSample));
  self->instants = g_array_new (FALSE, FALSE, sizeof (WickInstant));
  self->device = g_array_new (FALSE, FALSE, sizeof (WickDeviceSlice));
  self->flows = g_array_new (FALSE, FALSE, sizeof (WickFlow));
  self->key_track = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->pending_corr = g_array_new (FALSE, FALSE, sizeof (PendingCorrelation));
  self->pending_ext_slice = g_array_new (FALSE, FALSE, sizeof (PendingCorrelation));
  self->pending_ext_op = g_array_new (FALSE, FALSE, sizeof (PendingCorrelation));
  self->pending_ext_device = g_array_new (FALSE, FALSE, sizeof (ExternalOfDevice));
  self->span_corr = g_array_new (FALSE, FALSE, sizeof (SpanLink));
  self->launched = g_array_new (FALSE, FALSE, sizeof (SpanLink));
  self->rows_are_depths = TRUE;
  self->skipped = g_array_new (FALSE, FALSE, sizeof (SkipEntry));
  self->skip_map = g_hash_table_new (g_str_hash, g_str_equal);
  self->display_order = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->flows_by_event = g_array_new (FALSE, FALSE, sizeof (FlowOfEvent));
  self->finished = FALSE;
  self->origin = 0;
  self->start_ns = self->end_ns = 0;
  self->span_base = self->doc ? self->doc->spans->len : 0;
  self->n_pending_span = 0;
  self->append_dirty = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->device_renamed = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->device_renamed_all = 0;
  self->n_indexed_tracks = self->n_indexed_spans = 0;
  self->extent_any = FALSE;
  self->raw_end = 0;
  self->build_serial++;
}

WickTracks *
wick_tracks_new (WickDocument *document)
{
  WickTracks *self = g_new0 (WickTracks, 1);
  self->doc = document;
  self->format = WICK_TRACE_FORMAT_CANDLE_GRAPH;
  init_arrays (self);
  return self;
}

void
wick_tracks_free (WickTracks *self)
{
  if (self == NULL)
    return;
  clear_arrays (self);
  g_free (self);
}

static void
tracks_reset (WickTracks *self, WickTraceFormat format)
{
  clear_arrays (self);
  self->format = format;
  init_arrays (self);
}

/* The document's model, made (candle-graph, empty) on first use. */
static WickTracks *
tracks_of (WickDocument *document)
{
  if (document->tracks == NULL)
    {
      document->tracks = wick_tracks_new (document);
      document->tracks_free = (GDestroyNotify)wick_tracks_free;
    }
  return document->tracks;
}

WickTracks *
wick_document_begin_tracks (WickDocument *document, WickTraceFormat format)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (document), NULL);
  WickTracks *self = tracks_of (document);
  tracks_reset (self, format);
  self->built_records = G_MAXUINT64; /* never rebuilt from records */
  return self;
}

WickTracks *
wick_tracks_begin_rebuild (WickDocument *document)
{
  WickTracks *self = tracks_of (document);
  if (self->format != WICK_TRACE_FORMAT_CANDLE_GRAPH
      || (self->built_records == document->n_records + 1
          && self->built_finished == document->finished))
    return NULL;
  tracks_reset (self, WICK_TRACE_FORMAT_CANDLE_GRAPH);
  self->built_records = document->n_records + 1;
  self->built_finished = document->finished;
  return self;
}

WickTracks *
wick_tracks_peek (WickDocument *document)
{
  return tracks_of (document);
}

WickDocument *
wick_tracks_get_document (WickTracks *self)
{
  return self->doc;
}

WickTraceFormat
wick_tracks_get_format (WickTracks *self)
{
  return self->format;
}

/* ---- builder: processes, threads, tracks ---------------------------------- */

WickStr
wick_tracks_intern (WickTracks *self, const char *str, gsize len)
{
  return wick_string_pool_intern (self->doc->pool, str, len);
}

guint32
wick_tracks_add_process (WickTracks *self, gint64 pid)
{
  guint32 found = GPOINTER_TO_UINT (g_hash_table_lookup (self->process_by_pid, &pid));
  if (found)
    return found - 1;
  WickProcess process = { .pid = pid };
  guint32 index = self->processes->len;
  g_array_append_val (self->processes, process);
  guint32 none = G_MAXUINT32;
  g_array_append_val (self->process_instants, none);
  gint64 *key = g_new (gint64, 1);
  *key = pid;
  g_hash_table_insert (self->process_by_pid, key, GUINT_TO_POINTER (index + 1));
  return index;
}

void
wick_tracks_set_process_name (WickTracks *self, guint32 process, WickStr name)
{
  g_return_if_fail (process < self->processes->len);
  g_array_index (self->processes, WickProcess, process).name = name;
}

void
wick_tracks_add_process_label (WickTracks *self, guint32 process, WickStr label)
{
  g_return_if_fail (process < self->processes->len);
  WickProcess *p = &g_array_index (self->processes, WickProcess, process);
  if (p->labels == 0)
    {
      p->labels = label;
      return;
    }
  g_autoptr (GString) joined = g_string_new (wick_document_str (self->doc, p->labels));
  g_string_append (joined, ", ");
  g_string_append_len (joined, wick_document_str (self->doc, label),
                       (gssize)wick_document_str_len (self->doc, label));
  p->labels = wick_tracks_intern (self, joined->str, joined->len);
}

void
wick_tracks_set_process_sort_index (WickTracks *self, guint32 process, gint32 sort_index)
{
  g_return_if_fail (process < self->processes->len);
  WickProcess *p = &g_array_index (self->processes, WickProcess, process);
  p->sort_index = sort_index;
  p->flags |= WICK_TRACK_FLAG_HAS_SORT_INDEX;
}

guint32
wick_tracks_add_thread (WickTracks *self, guint32 process, gint64 tid)
{
  g_return_val_if_fail (process < self->processes->len, 0);
  guint32 found = key_lookup (self->thread_by_key, 0, (gint32)process, (guint32)tid,
                              (guint32)((guint64)tid >> 32));
  if (found)
    return found - 1;
  WickThread thread = { .tid = tid, .process = process };
  guint32 index = self->threads->len;
  g_array_append_val (self->threads, thread);
  guint32 none = G_MAXUINT32;
  g_array_append_val (self->thread_slices, none);
  g_array_append_val (self->thread_instants, none);
  g_array_append_val (self->thread_device, none);
  key_insert (self->thread_by_key, 0, (gint32)process, (guint32)tid, (guint32)((guint64)tid >> 32),
              index);
  return index;
}

void
wick_tracks_set_thread_name (WickTracks *self, guint32 thread, WickStr name)
{
  g_return_if_fail (thread < self->threads->len);
  g_array_index (self->threads, WickThread, thread).name = name;
  guint32 t = g_array_index (self->thread_slices, guint32, thread);
  if (t != G_MAXUINT32)
    g_array_index (self->tracks, WickTrack, t).name = name;
  t = g_array_index (self->thread_instants, guint32, thread);
  if (t != G_MAXUINT32)
    g_array_index (self->tracks, WickTrack, t).name = name;
}

void
wick_tracks_set_thread_sort_index (WickTracks *self, guint32 thread, gint32 sort_index)
{
  g_return_if_fail (thread < self->threads->len);
  WickThread *t = &g_array_index (self->threads, WickThread, thread);
  t->sort_index = sort_index;
  t->flags |= WICK_TRACK_FLAG_HAS_SORT_INDEX;
}

static guint32
new_track (WickTracks *self, WickTrackKind kind, gint32 process, gint32 thread, WickStr name)
{
  WickTrack track = { 0 };
  track.kind = (guint8)kind;
  track.process = process;
  track.thread = thread;
  track.name = name;
  g_array_append_val (self->tracks, track);
  return self->tracks->len - 1;
}

guint32
wick_tracks_thread_slices_track (WickTracks *self, guint32 thread)
{
  guint32 *slot = &g_array_index (self->thread_slices, guint32, thread);
  if (*slot == G_MAXUINT32)
    {
      const WickThread *t = &g_array_index (self->threads, WickThread, thread);
      *slot = new_track (self, WICK_TRACK_SLICES, (gint32)t->process, (gint32)thread, t->name);
    }
  return *slot;
}

static guint32
instants_track (WickTracks *self, WickInstantScope scope, gint32 process, gint32 thread)
{
  guint32 *slot;
  if (scope == WICK_INSTANT_SCOPE_THREAD && thread >= 0 && (guint)thread < self->threads->len)
    {
      slot = &g_array_index (self->thread_instants, guint32, thread);
      if (*slot == G_MAXUINT32)
        {
          const WickThread *t = &g_array_index (self->threads, WickThread, thread);
          *slot = new_track (self, WICK_TRACK_INSTANTS, (gint32)t->process, thread, t->name);
        }
    }
  else if (scope != WICK_INSTANT_SCOPE_GLOBAL && process >= 0
           && (guint)process < self->processes->len)
    {
      slot = &g_array_index (self->process_instants, guint32, process);
      if (*slot == G_MAXUINT32)
        *slot = new_track (self, WICK_TRACK_INSTANTS, process, -1,
                           g_array_index (self->processes, WickProcess, process).name);
      scope = WICK_INSTANT_SCOPE_PROCESS;
    }
  else
    {
      slot = &self->global_instants;
      if (*slot == G_MAXUINT32)
        *slot = new_track (self, WICK_TRACK_INSTANTS, -1, -1, wick_tracks_intern (self, "Global", 6));
      scope = WICK_INSTANT_SCOPE_GLOBAL;
    }
  g_array_index (self->tracks, WickTrack, *slot).scope = (guint8)scope;
  return *slot;
}

/* The objects track of @process (-1: global) or the samples track of @thread,
 * created on first use; keyed apart from the other tracks by their role. */
static guint32
role_track (WickTracks *self, WickInstantsRole role, gint32 process, gint32 thread)
{
  guint32 key_kind = 0x100u | role;
  gint32 owner = role == WICK_INSTANTS_SAMPLES ? thread : process;
  guint32 found = key_lookup (self->track_by_key, key_kind, owner, 0, 0);
  if (found)
    return found - 1;
  const char *label = role == WICK_INSTANTS_SAMPLES ? "Samples" : "Objects";
  guint32 t = new_track (self, WICK_TRACK_INSTANTS, process, role == WICK_INSTANTS_SAMPLES ? thread : -1,
                         wick_tracks_intern (self, label, strlen (label)));
  WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
  track->role = (guint8)role;
  track->scope = role == WICK_INSTANTS_SAMPLES ? WICK_INSTANT_SCOPE_THREAD
                 : process >= 0                ? WICK_INSTANT_SCOPE_PROCESS
                                               : WICK_INSTANT_SCOPE_GLOBAL;
  key_insert (self->track_by_key, key_kind, owner, 0, 0, t);
  return t;
}

/* ---- builder: events ------------------------------------------------------ */

static WickPendingSlice
add_pending (WickTracks *self, guint32 thread, gint64 ts, gint64 dur, WickStr name, WickStr cat,
             WickStr args)
{
  g_return_val_if_fail (!self->finished && thread < self->threads->len, WICK_PENDING_SLICE_NONE);
  PendingSlice p = { ts, dur, thread, self->pending->len, name, cat, args };
  g_array_append_val (self->pending, p);
  return p.seq;
}

WickPendingSlice
wick_tracks_slice_begin (WickTracks *self, guint32 thread, gint64 ts_ns, WickStr name,
                         WickStr category, WickStr args)
{
  return add_pending (self, thread, ts_ns, PENDING_B, name, category, args);
}

void
wick_tracks_slice_end (WickTracks *self, guint32 thread, gint64 ts_ns, WickStr args)
{
  add_pending (self, thread, ts_ns, PENDING_E, 0, 0, args);
}

WickPendingSlice
wick_tracks_slice_complete (WickTracks *self, guint32 thread, gint64 ts_ns, gint64 duration_ns,
                            WickStr name, WickStr category, WickStr args)
{
  return add_pending (self, thread, ts_ns, MAX (duration_ns, 0), name, category, args);
}

static void
add_async (WickTracks *self, guint8 phase, gint32 process, WickStr category, WickStr id,
           WickStr scope, gint64 ts, WickStr name, WickStr args)
{
  g_return_if_fail (!self->finished);
  PendingAsync p = { ts, process, self->pending_async->len, category, id, scope, name, args, phase };
  g_array_append_val (self->pending_async, p);
}

void
wick_tracks_async_begin (WickTracks *self, gint32 process, WickStr category, WickStr id,
                         WickStr scope, gint64 ts_ns, WickStr name, WickStr args)
{
  add_async (self, 0, process, category, id, scope, ts_ns, name, args);
}

void
wick_tracks_async_end (WickTracks *self, gint32 process, WickStr category, WickStr id,
                       WickStr scope, gint64 ts_ns, WickStr args)
{
  add_async (self, 1, process, category, id, scope, ts_ns, 0, args);
}

void
wick_tracks_async_instant (WickTracks *self, gint32 process, WickStr category, WickStr id,
                           WickStr scope, gint64 ts_ns, WickStr name, WickStr args)
{
  add_async (self, 2, process, category, id, scope, ts_ns, name, args);
}

guint32
wick_tracks_counter_track (WickTracks *self, gint32 process, WickStr name)
{
  guint32 found = key_lookup (self->track_by_key, WICK_TRACK_COUNTER, process, name, 0);
  if (found)
    return found - 1;
  guint32 t = new_track (self, WICK_TRACK_COUNTER, process, -1, name);
  key_insert (self->track_by_key, WICK_TRACK_COUNTER, process, name, 0, t);
  return t;
}

void
wick_tracks_counter_add (WickTracks *self, guint32 track, gint64 ts_ns, double value)
{
  g_return_if_fail (!self->finished && track < self->tracks->len);
  WickCounterSample s = { track, (guint64)ts_ns, value };
  g_array_append_val (self->counters, s);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

void
wick_tracks_counter_set_unit (WickTracks *self, guint32 track, WickCounterUnit unit)
{
  g_return_if_fail (!self->finished && track < self->tracks->len);
  WickTrack *t = &g_array_index (self->tracks, WickTrack, track);
  g_return_if_fail (t->kind == WICK_TRACK_COUNTER);
  t->unit = (guint8)unit;
}

const char *
wick_counter_unit_to_string (WickCounterUnit unit)
{
  static const char *const names[] = { "count", "bytes", "percent", "ns" };
  return (guint)unit < G_N_ELEMENTS (names) ? names[unit] : "count";
}

void
wick_tracks_instant_add (WickTracks *self, WickInstantScope scope, gint32 process, gint32 thread,
                         gint64 ts_ns, WickStr name, WickStr category, WickStr args)
{
  g_return_if_fail (!self->finished);
  guint32 track = instants_track (self, scope, process, thread);
  WickInstant i = { track, g_array_index (self->tracks, WickTrack, track).scope, 0, (guint64)ts_ns,
                    name, category, 0, args };
  g_array_append_val (self->instants, i);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

void
wick_tracks_object_add (WickTracks *self, gint32 process, char phase, gint64 ts_ns, WickStr name,
                        WickStr category, WickStr id, WickStr args)
{
  g_return_if_fail (!self->finished && (phase == 'N' || phase == 'O' || phase == 'D'));
  if (process >= 0 && (guint)process >= self->processes->len)
    process = -1;
  guint32 track = role_track (self, WICK_INSTANTS_OBJECTS, process, -1);
  WickInstant i = { track, g_array_index (self->tracks, WickTrack, track).scope, phase,
                    (guint64)ts_ns, name, category, id, args };
  g_array_append_val (self->instants, i);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

void
wick_tracks_sample_add (WickTracks *self, guint32 thread, gint64 ts_ns, WickStr name,
                        WickStr category, WickStr args)
{
  g_return_if_fail (!self->finished && thread < self->threads->len);
  const WickThread *t = &g_array_index (self->threads, WickThread, thread);
  guint32 track = role_track (self, WICK_INSTANTS_SAMPLES, (gint32)t->process, (gint32)thread);
  WickInstant i = { track, WICK_INSTANT_SCOPE_THREAD, 'P', (guint64)ts_ns, name, category, 0, args };
  g_array_append_val (self->instants, i);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

guint32
wick_tracks_device_track (WickTracks *self, gint32 process, WickStr device, WickStr stream,
                          WickStr name)
{
  guint32 found = key_lookup (self->track_by_key, WICK_TRACK_DEVICE, process, device, stream);
  if (found)
    return found - 1;
  if (name == 0)
    {
      g_autoptr (GString) s = g_string_new (device ? wick_document_str (self->doc, device) : "device");
      if (stream)
        g_string_append_printf (s, " stream %s", wick_document_str (self->doc, stream));
      name = wick_tracks_intern (self, s->str, s->len);
    }
  guint32 t = new_track (self, WICK_TRACK_DEVICE, process, -1, name);
  WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
  track->category = device;
  track->stream = stream;
  key_insert (self->track_by_key, WICK_TRACK_DEVICE, process, device, stream, t);
  return t;
}

/* Key kind of the device tracks of a thread: apart from the tracks that
 * belong to a process alone (candle-graph's devices). */
#define DEVICE_OF_THREAD_KEY (0x100u | WICK_TRACK_DEVICE)

/* The thread's device track whose stream is its tid (Kineto writes stream N
 * of device D as thread N of pid D), and the track of its events that name
 * no stream while none has (wick_tracks_thread_implied_device_track). */
#define TID_STREAM_KEY (0x200u | WICK_TRACK_DEVICE)
#define IMPLIED_STREAM_KEY (0x300u | WICK_TRACK_DEVICE)

/* TRUE when @stream's text is @thread's tid in decimal. */
static gboolean
stream_is_tid (WickTracks *self, guint32 thread, WickStr stream)
{
  if (stream == 0)
    return FALSE;
  char tid[24];
  g_snprintf (tid, sizeof tid, "%" G_GINT64_FORMAT,
              g_array_index (self->threads, WickThread, thread).tid);
  return strcmp (wick_document_str (self->doc, stream), tid) == 0;
}

guint32
wick_tracks_thread_device_track (WickTracks *self, guint32 thread, WickStr device, WickStr stream,
                                 WickStr name)
{
  g_return_val_if_fail (thread < self->threads->len, 0);
  guint32 found
    = key_lookup (self->track_by_key, DEVICE_OF_THREAD_KEY, (gint32)thread, device, stream);
  if (found)
    return found - 1;
  gboolean is_tid = stream_is_tid (self, thread, stream)
                    && key_lookup (self->track_by_key, TID_STREAM_KEY, (gint32)thread, 0, 0) == 0;
  guint32 implied
    = is_tid ? key_lookup (self->track_by_key, IMPLIED_STREAM_KEY, (gint32)thread, 0, 0) : 0;
  guint32 t;
  if (implied)
    {
      /* the thread's events without a stream came first (torch 2.x's
       * annotations): their track becomes this stream's */
      t = implied - 1;
      TrackKey key = { IMPLIED_STREAM_KEY, (gint32)thread, 0, 0 };
      g_hash_table_remove (self->track_by_key, &key);
      g_array_index (self->tracks, WickTrack, t).name = name;
    }
  else
    {
      const WickThread *th = &g_array_index (self->threads, WickThread, thread);
      t = new_track (self, WICK_TRACK_DEVICE, (gint32)th->process, (gint32)thread, name);
    }
  WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
  track->category = device;
  track->stream = stream;
  key_insert (self->track_by_key, DEVICE_OF_THREAD_KEY, (gint32)thread, device, stream, t);
  if (is_tid)
    key_insert (self->track_by_key, TID_STREAM_KEY, (gint32)thread, 0, 0, t);
  return t;
}

guint32
wick_tracks_thread_implied_device_track (WickTracks *self, guint32 thread, WickStr device,
                                         WickStr stream, WickStr name)
{
  g_return_val_if_fail (thread < self->threads->len, 0);
  guint32 found = key_lookup (self->track_by_key, TID_STREAM_KEY, (gint32)thread, 0, 0);
  if (found)
    return found - 1;
  found = key_lookup (self->track_by_key, IMPLIED_STREAM_KEY, (gint32)thread, 0, 0);
  if (found)
    return found - 1;
  const WickThread *th = &g_array_index (self->threads, WickThread, thread);
  guint32 t = new_track (self, WICK_TRACK_DEVICE, (gint32)th->process, (gint32)thread, name);
  WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
  track->category = device;
  track->stream = stream;
  key_insert (self->track_by_key, IMPLIED_STREAM_KEY, (gint32)thread, 0, 0, t);
  return t;
}

static WickDeviceKind
wick_device_kind_of_category (const char *c, gsize n)
{
#define IS(lit) (n == sizeof (lit) - 1 && memcmp (c, lit, n) == 0)
  if (c == NULL)
    return WICK_DEVICE_OTHER;
  if (IS ("kernel") || IS ("Kernel") || IS ("hip_kernel"))
    return WICK_DEVICE_KERNEL;
  if (IS ("gpu_memcpy") || IS ("Memcpy"))
    return WICK_DEVICE_MEMCPY;
  if (IS ("gpu_memset") || IS ("Memset"))
    return WICK_DEVICE_MEMSET;
  if (IS ("gpu_user_annotation"))
    return WICK_DEVICE_ANNOTATION;
  return WICK_DEVICE_OTHER;
#undef IS
}

const char *
wick_device_kind_to_string (WickDeviceKind kind)
{
  static const char *const names[] = { "other", "kernel", "memcpy", "memset", "annotation" };
  return (guint)kind < G_N_ELEMENTS (names) ? names[kind] : "other";
}

void
wick_tracks_device_add_correlated (WickTracks *self, guint32 track, gint64 ts_ns,
                                   gint64 duration_ns, WickStr name, WickStr category, WickStr args,
                                   gint64 correlation)
{
  wick_tracks_device_add_linked (self, track, ts_ns, duration_ns, name, category, args,
                                 correlation, 0);
}

void
wick_tracks_device_add_linked (WickTracks *self, guint32 track, gint64 ts_ns, gint64 duration_ns,
                               WickStr name, WickStr category, WickStr args, gint64 correlation,
                               gint64 external_id)
{
  g_return_if_fail (!self->finished && track < self->tracks->len);
  /* kept with a correlation id too: a cut trace may lack its runtime call */
  if (external_id != 0)
    {
      ExternalOfDevice e = { self->device->len, external_id };
      g_array_append_val (self->pending_ext_device, e);
    }
  WickDeviceSlice d = { track, -1, (guint64)ts_ns, (guint64)MAX (duration_ns, 0), name, category,
                        args };
  const char *cat = category ? wick_document_str (self->doc, category) : NULL;
  d.correlation = correlation;
  d.launcher = G_MAXUINT32;
  d.kind = (guint8)wick_device_kind_of_category (cat, cat ? strlen (cat) : 0);
  g_array_append_val (self->device, d);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

void
wick_tracks_slice_set_external_id (WickTracks *self, WickPendingSlice slice, gint64 external_id)
{
  g_return_if_fail (!self->finished && slice < self->pending->len);
  if (external_id == 0)
    return;
  PendingCorrelation c = { slice, external_id };
  g_array_append_val (self->pending_ext_slice, c);
}

void
wick_tracks_slice_set_operator_external_id (WickTracks *self, WickPendingSlice slice,
                                            gint64 external_id)
{
  g_return_if_fail (!self->finished && slice < self->pending->len);
  if (external_id == 0)
    return;
  PendingCorrelation c = { slice, external_id };
  g_array_append_val (self->pending_ext_op, c);
}

void
wick_tracks_slice_set_correlation (WickTracks *self, WickPendingSlice slice, gint64 correlation)
{
  g_return_if_fail (!self->finished && slice < self->pending->len);
  if (correlation == 0)
    return;
  PendingCorrelation c = { slice, correlation };
  g_array_append_val (self->pending_corr, c);
}

void
wick_tracks_flow_add (WickTracks *self, WickFlowPhase phase, guint32 thread, gint64 ts_ns,
                      WickStr category, WickStr name, WickStr id, gboolean bind_enclosing)
{
  g_return_if_fail (!self->finished && thread < self->threads->len);
  FlowPoint p = { ts_ns, thread, self->flow_points->len, category, name, id, (guint8)phase,
                  bind_enclosing };
  g_array_append_val (self->flow_points, p);
}

void
wick_tracks_flow_bind (WickTracks *self, WickPendingSlice slice, WickStr id, gboolean flow_in,
                       gboolean flow_out)
{
  g_return_if_fail (!self->finished && slice < self->pending->len);
  FlowBind b = { slice, id, flow_in, flow_out };
  g_array_append_val (self->flow_binds, b);
}

void
wick_tracks_skip (WickTracks *self, const char *construct, guint64 n)
{
  guint found = GPOINTER_TO_UINT (g_hash_table_lookup (self->skip_map, construct));
  if (!found)
    {
      SkipEntry e = { g_strdup (construct), 0 };
      g_array_append_val (self->skipped, e);
      found = self->skipped->len;
      g_hash_table_insert (self->skip_map, e.name, GUINT_TO_POINTER (found));
    }
  g_array_index (self->skipped, SkipEntry, found - 1).count += n;
}

/* ---- sorting -------------------------------------------------------------- */

typedef struct
{
  guint64 key;
  guint32 item;
} KeyItem;

/* Stable LSD radix sort by key, 16 bits a pass, skipping the passes where
 * every key has the same digit; linear in @n. */
static void
sort_key_items (KeyItem *a, guint n)
{
  /* Check first: already-sorted input (the common case) costs one pass. */
  gboolean sorted = TRUE;
  for (guint i = 1; i < n && sorted; i++)
    sorted = a[i - 1].key <= a[i].key;
  if (sorted)
    return;
  KeyItem *tmp = g_new (KeyItem, n);
  guint64 all_or = 0, all_and = G_MAXUINT64;
  for (guint i = 0; i < n; i++)
    {
      all_or |= a[i].key;
      all_and &= a[i].key;
    }
  guint64 varying = all_or ^ all_and;
  guint *count = g_new (guint, 65536);
  KeyItem *src = a, *dst = tmp;
  for (guint shift = 0; shift < 64; shift += 16)
    {
      if (((varying >> shift) & 0xffff) == 0)
        continue;
      memset (count, 0, 65536 * sizeof (guint));
      for (guint i = 0; i < n; i++)
        count[(src[i].key >> shift) & 0xffff]++;
      guint sum = 0;
      for (guint d = 0; d < 65536; d++)
        {
          guint c = count[d];
          count[d] = sum;
          sum += c;
        }
      for (guint i = 0; i < n; i++)
        dst[count[(src[i].key >> shift) & 0xffff]++] = src[i];
      KeyItem *swap = src;
      src = dst;
      dst = swap;
    }
  if (src != a)
    memcpy (a, src, n * sizeof (KeyItem));
  g_free (count);
  g_free (tmp);
}

/* ---- event accessors ------------------------------------------------------ */

static inline const WickSpan *
spans_of (WickTracks *self)
{
  return (const WickSpan *)(gconstpointer)self->doc->spans->data;
}

static inline guint64
span_end (WickTracks *self, const WickSpan *s)
{
  if (s->flags & WICK_SPAN_FLAG_CLOSED)
    return s->start_ns + s->duration_ns;
  return MAX (s->start_ns, self->end_ns);
}

static inline guint64
event_start (WickTracks *self, guint kind, guint32 i)
{
  switch (kind)
    {
      case WICK_EVENT_SLICE:
        return spans_of (self)[i].start_ns;
      case WICK_EVENT_ASYNC:
        return g_array_index (self->async, WickAsyncSlice, i).start_ns;
      case WICK_EVENT_COUNTER:
        return g_array_index (self->counters, WickCounterSample, i).timestamp_ns;
      case WICK_EVENT_INSTANT:
        return g_array_index (self->instants, WickInstant, i).timestamp_ns;
      case WICK_EVENT_DEVICE:
        return g_array_index (self->device, WickDeviceSlice, i).start_ns;
      default:
        return 0;
    }
}

static inline guint64
event_end (WickTracks *self, guint kind, guint32 i)
{
  switch (kind)
    {
      case WICK_EVENT_SLICE:
        return span_end (self, &spans_of (self)[i]);
      case WICK_EVENT_ASYNC:
        {
          const WickAsyncSlice *a = &g_array_index (self->async, WickAsyncSlice, i);
          if (a->instant || (a->flags & WICK_SPAN_FLAG_CLOSED))
            return a->start_ns + a->duration_ns;
          return MAX (a->start_ns, self->end_ns);
        }
      case WICK_EVENT_COUNTER:
        return g_array_index (self->counters, WickCounterSample, i).timestamp_ns;
      case WICK_EVENT_INSTANT:
        return g_array_index (self->instants, WickInstant, i).timestamp_ns;
      case WICK_EVENT_DEVICE:
        {
          const WickDeviceSlice *d = &g_array_index (self->device, WickDeviceSlice, i);
          return d->start_ns + d->duration_ns;
        }
      default:
        return 0;
    }
}

/* Weight for the mipmap: duration, or |value| for counter samples. */
static inline double
event_weight (WickTracks *self, guint kind, guint32 i)
{
  if (kind == WICK_EVENT_COUNTER)
    return fabs (g_array_index (self->counters, WickCounterSample, i).value);
  return (double)(event_end (self, kind, i) - event_start (self, kind, i));
}

guint64
wick_tracks_event_start (WickTracks *self, WickEventRef event)
{
  return event_start (self, event.kind, event.index);
}

guint64
wick_tracks_event_end (WickTracks *self, WickEventRef event)
{
  return event_end (self, event.kind, event.index);
}

guint32
wick_tracks_span_track (WickTracks *self, guint32 span)
{
  if (span >= self->doc->spans->len)
    return G_MAXUINT32;
  guint key = spans_of (self)[span].thread;
  if (key >= self->key_track->len)
    return G_MAXUINT32;
  return g_array_index (self->key_track, guint32, key);
}

void
wick_tracks_map_thread_key (WickTracks *self, guint16 key, guint32 track)
{
  if (self->key_track->len <= key)
    {
      guint old = self->key_track->len;
      g_array_set_size (self->key_track, (guint)key + 1);
      for (guint i = old; i <= key; i++)
        g_array_index (self->key_track, guint32, i) = G_MAXUINT32;
    }
  g_array_index (self->key_track, guint32, key) = track;
}

guint32
wick_tracks_event_track (WickTracks *self, WickEventRef event)
{
  switch (event.kind)
    {
      case WICK_EVENT_SLICE:
        return wick_tracks_span_track (self, event.index);
      case WICK_EVENT_ASYNC:
        return g_array_index (self->async, WickAsyncSlice, event.index).track;
      case WICK_EVENT_COUNTER:
        return g_array_index (self->counters, WickCounterSample, event.index).track;
      case WICK_EVENT_INSTANT:
        return g_array_index (self->instants, WickInstant, event.index).track;
      case WICK_EVENT_DEVICE:
        return g_array_index (self->device, WickDeviceSlice, event.index).track;
      default:
        return G_MAXUINT32;
    }
}

guint
wick_tracks_event_row (WickTracks *self, WickEventRef event)
{
  switch (event.kind)
    {
      case WICK_EVENT_SLICE:
        {
          const WickSpan *spans = spans_of (self);
          if (self->rows_are_depths)
            return spans[event.index].depth;
          /* depth below the nearest ancestor on another track */
          guint32 track = wick_tracks_span_track (self, event.index);
          guint row = 0;
          for (gint32 p = spans[event.index].parent;
               p >= 0 && wick_tracks_span_track (self, (guint32)p) == track && row < G_MAXUINT16;
               p = spans[p].parent)
            row++;
          return row;
        }
      case WICK_EVENT_ASYNC:
        return g_array_index (self->async, WickAsyncSlice, event.index).lane;
      case WICK_EVENT_DEVICE:
        return g_array_index (self->device, WickDeviceSlice, event.index).row;
      default:
        return 0;
    }
}

const char *
wick_tracks_event_name (WickTracks *self, WickEventRef event)
{
  WickStr name = 0;
  switch (event.kind)
    {
      case WICK_EVENT_SLICE:
        name = spans_of (self)[event.index].name;
        break;
      case WICK_EVENT_ASYNC:
        name = g_array_index (self->async, WickAsyncSlice, event.index).name;
        break;
      case WICK_EVENT_COUNTER:
        name = g_array_index (self->tracks, WickTrack,
                              g_array_index (self->counters, WickCounterSample, event.index).track)
                 .name;
        break;
      case WICK_EVENT_INSTANT:
        name = g_array_index (self->instants, WickInstant, event.index).name;
        break;
      case WICK_EVENT_DEVICE:
        name = g_array_index (self->device, WickDeviceSlice, event.index).name;
        break;
      default:
        break;
    }
  return name ? wick_document_str (self->doc, name) : NULL;
}

const char *
wick_tracks_event_args (WickTracks *self, WickEventRef event)
{
  WickStr args = 0;
  switch (event.kind)
    {
      case WICK_EVENT_SLICE:
        if (self->span_args != NULL && event.index < self->span_args->len)
          args = g_array_index (self->span_args, WickStr, event.index);
        break;
      case WICK_EVENT_ASYNC:
        args = g_array_index (self->async, WickAsyncSlice, event.index).args;
        break;
      case WICK_EVENT_INSTANT:
        args = g_array_index (self->instants, WickInstant, event.index).args;
        break;
      case WICK_EVENT_DEVICE:
        args = g_array_index (self->device, WickDeviceSlice, event.index).args;
        break;
      default:
        break;
    }
  return args ? wick_document_str (self->doc, args) : NULL;
}

gboolean
wick_tracks_event_is_open (WickTracks *self, WickEventRef event)
{
  if (event.kind == WICK_EVENT_SLICE)
    return !(spans_of (self)[event.index].flags & WICK_SPAN_FLAG_CLOSED);
  if (event.kind == WICK_EVENT_ASYNC)
    {
      const WickAsyncSlice *a = &g_array_index (self->async, WickAsyncSlice, event.index);
      return !a->instant && !(a->flags & WICK_SPAN_FLAG_CLOSED);
    }
  return FALSE;
}

/* ---- finish: slices ------------------------------------------------------- */

static int
compare_pending (gconstpointer pa, gconstpointer pb)
{
  const PendingSlice *a = pa, *b = pb;
  if (a->thread != b->thread)
    return a->thread < b->thread ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  /* At one time: B and E in file order, then X longest first. */
  int ra = a->dur >= 0, rb = b->dur >= 0;
  if (ra != rb)
    return ra - rb;
  if (ra && a->dur != b->dur)
    return a->dur > b->dur ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void
set_span_column (GArray **column, guint n, guint32 span, WickStr value)
{
  if (value == 0 && *column == NULL)
    return;
  if (*column == NULL)
    *column = g_array_new (FALSE, TRUE, sizeof (WickStr));
  if ((*column)->len < n)
    g_array_set_size (*column, n);
  g_array_index (*column, WickStr, span) = value;
}

typedef struct
{
  guint32 span;
  gboolean open_b; /* a B waiting for its E */
  guint64 end;     /* X: its end */
} StackEntry;

static void
finish_slices (WickTracks *self)
{
  GArray *spans = self->doc->spans;
  guint n = self->pending->len;
  PendingSlice *p = (PendingSlice *)(gpointer)self->pending->data;

  self->pending_span = g_new (guint32, MAX (n, 1));
  self->n_pending_span = n;
  for (guint i = 0; i < n; i++)
    self->pending_span[i] = G_MAXUINT32;
  if (n == 0)
    return;

  gboolean sorted = TRUE;
  for (guint i = 1; i < n && sorted; i++)
    sorted = compare_pending (&p[i - 1], &p[i]) < 0;
  if (!sorted)
    qsort (p, n, sizeof (PendingSlice), compare_pending); /* n > 1 when unsorted */

  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (StackEntry));
  guint32 thread = G_MAXUINT32, track = 0;
  guint64 e_without_b = 0;
  guint64 too_many_threads = 0;

  for (guint i = 0; i < n; i++)
    {
      const PendingSlice *e = &p[i];
      guint64 ts = (guint64)(e->ts - self->origin);
      if (e->thread != thread)
        {
          thread = e->thread;
          g_array_set_size (stack, 0);
          track = wick_tracks_thread_slices_track (self, thread);
          if (thread + 1 <= G_MAXUINT16)
            wick_tracks_map_thread_key (self, (guint16)(thread + 1), track);
        }
      if (thread + 1 > G_MAXUINT16)
        {
          /* WickSpan names its thread in 16 bits */
          too_many_threads++;
          continue;
        }
      /* Complete slices that ended by now leave the stack. */
      while (stack->len > 0)
        {
          StackEntry *top = &g_array_index (stack, StackEntry, stack->len - 1);
          if (top->open_b || top->end > ts)
            break;
          g_array_set_size (stack, stack->len - 1);
        }
      if (e->dur == PENDING_E)
        {
          gint k = (gint)stack->len - 1;
          while (k >= 0 && !g_array_index (stack, StackEntry, k).open_b)
            k--;
          if (k < 0)
            {
              e_without_b++;
              continue;
            }
          StackEntry *b = &g_array_index (stack, StackEntry, k);
          WickSpan *span = &g_array_index (spans, WickSpan, b->span);
          span->flags |= WICK_SPAN_FLAG_CLOSED;
          span->duration_ns = ts - span->start_ns;
          if (e->args != 0 && (self->span_args == NULL || b->span >= self->span_args->len
                               || g_array_index (self->span_args, WickStr, b->span) == 0))
            set_span_column (&self->span_args, spans->len, b->span, e->args);
          g_array_set_size (stack, (guint)k);
          continue;
        }
      WickSpan span = { 0 };
      span.name = e->name;
      span.parent = stack->len ? (gint32)g_array_index (stack, StackEntry, stack->len - 1).span : -1;
      span.start_ns = ts;
      span.duration_ns = e->dur >= 0 ? (guint64)e->dur : 0;
      span.depth = (guint16)MIN (stack->len, G_MAXUINT16);
      span.flags = e->dur >= 0 ? WICK_SPAN_FLAG_CLOSED : 0;
      span.thread = (guint16)(thread + 1);
      guint32 index = spans->len;
      g_array_append_val (spans, span);
      self->pending_span[e->seq] = index;
      set_span_column (&self->span_args, spans->len, index, e->args);
      set_span_column (&self->span_category, spans->len, index, e->category);
      StackEntry entry = { index, e->dur < 0, ts + span.duration_ns };
      g_array_append_val (stack, entry);
      WickTrack *t = &g_array_index (self->tracks, WickTrack, track);
      t->n_events++;
      t->max_depth = MAX (t->max_depth, span.depth);
    }
  if (e_without_b)
    wick_tracks_skip (self, "E without B", e_without_b);
  if (too_many_threads)
    wick_tracks_skip (self, "slice of a thread beyond the 65535th", too_many_threads);
  if (self->span_args && self->span_args->len < spans->len)
    g_array_set_size (self->span_args, spans->len);
  if (self->span_category && self->span_category->len < spans->len)
    g_array_set_size (self->span_category, spans->len);
  g_clear_pointer (&self->pending, g_array_unref);
  self->pending = g_array_new (FALSE, FALSE, sizeof (PendingSlice));
}

/* ---- finish: async -------------------------------------------------------- */

typedef struct
{
  gint32 process;
  WickStr category, id, scope;
} AsyncKey;

static guint
async_key_hash (gconstpointer p)
{
  const AsyncKey *k = p;
  guint64 h = ((guint64)(guint32)k->process * 0x9E3779B97F4A7C15ull) ^ k->category;
  h = (h ^ k->id) * 0xff51afd7ed558ccdull;
  h = (h ^ k->scope) * 0xc4ceb9fe1a85ec53ull;
  return (guint)(h ^ (h >> 32));
}

static gboolean
async_key_equal (gconstpointer a, gconstpointer b)
{
  return memcmp (a, b, sizeof (AsyncKey)) == 0;
}

static int
compare_async (gconstpointer pa, gconstpointer pb)
{
  const PendingAsync *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef struct
{
  guint32 root;   /* async index of the tree's root */
  guint16 height; /* rows of the tree */
} AsyncTree;

static int
compare_roots (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const WickAsyncSlice *async = data;
  guint32 a = *(const guint32 *)pa, b = *(const guint32 *)pb;
  if (async[a].track != async[b].track)
    return async[a].track < async[b].track ? -1 : 1;
  if (async[a].start_ns != async[b].start_ns)
    return async[a].start_ns < async[b].start_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

static void
finish_async (WickTracks *self)
{
  guint n = self->pending_async->len;
  if (n == 0)
    return;
  PendingAsync *p = (PendingAsync *)(gpointer)self->pending_async->data;
  qsort (p, n, sizeof (PendingAsync), compare_async);

  /* key -> GArray of open async indices (a stack) */
  g_autoptr (GHashTable) open
    = g_hash_table_new_full (async_key_hash, async_key_equal, g_free, (GDestroyNotify)g_array_unref);
  g_autoptr (GArray) root_of = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) depth_of = g_array_new (FALSE, FALSE, sizeof (guint16));
  guint64 unmatched = 0;

  for (guint i = 0; i < n; i++)
    {
      const PendingAsync *e = &p[i];
      AsyncKey key = { e->process, e->category, e->id, e->scope };
      GArray *stack = g_hash_table_lookup (open, &key);
      guint64 ts = (guint64)(e->ts - self->origin);
      if (e->phase == 1)
        {
          if (stack == NULL || stack->len == 0)
            {
              unmatched++;
              continue;
            }
          guint32 a = g_array_index (stack, guint32, stack->len - 1);
          g_array_set_size (stack, stack->len - 1);
          WickAsyncSlice *s = &g_array_index (self->async, WickAsyncSlice, a);
          s->flags |= WICK_SPAN_FLAG_CLOSED;
          s->duration_ns = ts >= s->start_ns ? ts - s->start_ns : 0;
          if (s->args == 0)
            s->args = e->args;
          continue;
        }
      if (stack == NULL)
        {
          AsyncKey *k = g_new (AsyncKey, 1);
          *k = key;
          stack = g_array_new (FALSE, FALSE, sizeof (guint32));
          g_hash_table_insert (open, k, stack);
        }
      WickAsyncSlice s = { 0 };
      s.start_ns = ts;
      s.name = e->name;
      s.category = e->category;
      s.id = e->id;
      s.args = e->args;
      s.instant = e->phase == 2;
      guint32 index = self->async->len;
      guint32 root = stack->len ? g_array_index (root_of, guint32,
                                                 g_array_index (stack, guint32, 0))
                                : index;
      guint16 depth = (guint16)MIN (stack->len, G_MAXUINT16);
      if (root == index)
        {
          gint32 process = e->process;
          guint32 found = key_lookup (self->track_by_key, WICK_TRACK_ASYNC, process, e->name, 0);
          if (found)
            s.track = found - 1;
          else
            {
              s.track = new_track (self, WICK_TRACK_ASYNC, process, -1, e->name);
              g_array_index (self->tracks, WickTrack, s.track).category = e->category;
              key_insert (self->track_by_key, WICK_TRACK_ASYNC, process, e->name, 0, s.track);
            }
        }
      else
        s.track = g_array_index (self->async, WickAsyncSlice, root).track;
      g_array_append_val (self->async, s);
      g_array_append_val (root_of, root);
      g_array_append_val (depth_of, depth);
      WickTrack *t = &g_array_index (self->tracks, WickTrack, s.track);
      if (s.instant)
        t->n_instants++;
      else
        {
          t->n_events++;
          g_array_append_val (stack, index);
        }
    }
  if (unmatched)
    wick_tracks_skip (self, "async end without begin", unmatched);

  /* Lanes: each tree takes rows [lane, lane + height) from its root's start
   * to its latest end; trees are placed greedily in start order. */
  guint na = self->async->len;
  WickAsyncSlice *async = (WickAsyncSlice *)(gpointer)self->async->data;
  guint16 *height = g_new0 (guint16, MAX (na, 1));
  guint64 *tree_end = g_new0 (guint64, MAX (na, 1));
  g_autoptr (GArray) roots = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = 0; i < na; i++)
    {
      guint32 r = g_array_index (root_of, guint32, i);
      guint16 d = g_array_index (depth_of, guint16, i);
      height[r] = MAX (height[r], (guint16)(d + 1));
      tree_end[r] = MAX (tree_end[r], event_end (self, WICK_EVENT_ASYNC, i));
      if (r == i)
        g_array_append_val (roots, r);
    }
  g_qsort_with_data (roots->data, (gint)roots->len, sizeof (guint32), compare_roots, async);
  g_autoptr (GArray) free_at = g_array_new (FALSE, TRUE, sizeof (guint64));
  guint32 current = G_MAXUINT32;
  guint16 *lane = g_new0 (guint16, MAX (na, 1));
  for (guint k = 0; k < roots->len; k++)
    {
      guint32 r = g_array_index (roots, guint32, k);
      if (async[r].track != current)
        {
          current = async[r].track;
          g_array_set_size (free_at, 0);
        }
      guint l = 0;
      for (;; l++)
        {
          gboolean fits = TRUE;
          for (guint h = 0; h < height[r] && fits; h++)
            fits = l + h >= free_at->len
                   || g_array_index (free_at, guint64, l + h) <= async[r].start_ns;
          if (fits)
            break;
        }
      if (free_at->len < l + height[r])
        g_array_set_size (free_at, l + height[r]);
      /* A zero-length tree still holds its row at that instant. */
      guint64 end = MAX (tree_end[r], async[r].start_ns + 1);
      for (guint h = 0; h < height[r]; h++)
        g_array_index (free_at, guint64, l + h) = end;
      lane[r] = (guint16)MIN (l, G_MAXUINT16);
      WickTrack *t = &g_array_index (self->tracks, WickTrack, current);
      t->max_depth = MAX (t->max_depth, (guint16)MIN (l + height[r] - 1, G_MAXUINT16));
    }
  for (guint i = 0; i < na; i++)
    {
      guint32 r = g_array_index (root_of, guint32, i);
      async[i].lane = (guint16)MIN ((guint)lane[r] + g_array_index (depth_of, guint16, i),
                                    G_MAXUINT16);
    }
  g_free (lane);
  g_free (height);
  g_free (tree_end);
  g_array_set_size (self->pending_async, 0);
}

/* ---- index ---------------------------------------------------------------- */

static void
choose_base (WickTracks *self, guint widest)
{
  guint64 extent = MAX (self->end_ns - self->start_ns, 1);
  /* About 32 events of the widest row a level-0 bucket: the summary costs
   * about a byte an event, and drawing raw events below level 0 touches at
   * most about that many events a pixel in the densest row. */
  guint64 target = MAX (extent / MAX (widest / 32, 1), 1);
  self->base_shift = 0;
  while ((G_GUINT64_CONSTANT (1) << (self->base_shift + 1)) <= target && self->base_shift < 62)
    self->base_shift++;
  while ((extent >> self->base_shift) > G_MAXINT32)
    self->base_shift++;
  self->base_ns = G_GUINT64_CONSTANT (1) << self->base_shift;
}

static void
build_row (WickTracks *self, Row *row)
{
  guint n = row->pub.n_events;
  guint kind = row->pub.event_kind;
  guint32 *events = (guint32 *)row->pub.events;
  /* Starts and ends read once into arrays: every pass below is then a plain
   * loop (temporary, 16 bytes an event of this row). */
  guint64 *st = g_new (guint64, MAX (n, 1)), *en = g_new (guint64, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      st[i] = event_start (self, kind, events[i]);
      en[i] = event_end (self, kind, events[i]);
    }

  /* Sort by start; ties longer first (checked and fixed in runs). */
  gboolean sorted = TRUE;
  for (guint i = 1; i < n && sorted; i++)
    sorted = st[i - 1] < st[i] || (st[i - 1] == st[i] && en[i - 1] >= en[i]);
  if (!sorted)
    {
      KeyItem *items = g_new (KeyItem, MAX (n, 1));
      for (guint i = 0; i < n; i++)
        items[i] = (KeyItem){ st[i], i };
      sort_key_items (items, n);
      for (guint i = 0; i < n;)
        {
          guint j = i + 1;
          while (j < n && items[j].key == items[i].key)
            j++;
          /* insertion sort of the tie run by end, descending */
          for (guint a = i + 1; a < j; a++)
            {
              KeyItem x = items[a];
              guint b = a;
              while (b > i && en[items[b - 1].item] < en[x.item])
                {
                  items[b] = items[b - 1];
                  b--;
                }
              items[b] = x;
            }
          i = j;
        }
      guint32 *sorted_events = g_new (guint32, MAX (n, 1));
      guint64 *sorted_en = g_new (guint64, MAX (n, 1));
      for (guint i = 0; i < n; i++)
        {
          sorted_events[i] = events[items[i].item];
          sorted_en[i] = en[items[i].item];
          st[i] = items[i].key;
        }
      memcpy (events, sorted_events, n * sizeof (guint32));
      g_free (sorted_events);
      g_free (en);
      en = sorted_en;
      g_free (items);
    }

  row->capacity = MAX (n, 1);
  row->block_max = g_new (guint64, (row->capacity + BLOCK - 1) / BLOCK);
  guint64 running = 0;
  for (guint i = 0; i < n; i++)
    {
      running = MAX (running, en[i]);
      if ((i & (BLOCK - 1)) == BLOCK - 1 || i == n - 1)
        row->block_max[i >> BLOCK_SHIFT] = running;
    }

  GPtrArray *levels = g_ptr_array_new ();
  GArray *counts = g_array_new (FALSE, FALSE, sizeof (guint));
  WickTrackMip *prev = NULL;
  double *prev_w = NULL;
  guint prev_count = 0;
  for (guint level = 0; level < 64; level++)
    {
      guint shift = self->base_shift + level;
      guint cap = level == 0 ? n : prev_count;
      WickTrackMip *entries = g_new (WickTrackMip, MAX (cap, 1));
      double *w = g_new (double, MAX (cap, 1));
      guint count = 0;
      for (guint i = 0; i < cap; i++)
        {
          guint32 ev, bucket;
          double weight;
          if (level == 0)
            {
              ev = events[i];
              bucket = (guint32)((st[i] - self->start_ns) >> shift);
              weight = kind == WICK_EVENT_COUNTER ? event_weight (self, kind, ev)
                                                  : (double)(en[i] - st[i]);
            }
          else
            {
              ev = prev[i].event;
              bucket = prev[i].bucket >> 1;
              weight = prev_w[i];
            }
          if (count > 0 && entries[count - 1].bucket == bucket)
            {
              if (weight > w[count - 1])
                {
                  entries[count - 1].event = ev;
                  w[count - 1] = weight;
                }
              continue;
            }
          w[count] = weight;
          entries[count++] = (WickTrackMip){ bucket, ev };
        }
      entries = g_renew (WickTrackMip, entries, MAX (count, 1));
      g_ptr_array_add (levels, entries);
      g_array_append_val (counts, count);
      g_free (prev_w);
      prev = entries;
      prev_w = w;
      prev_count = count;
      if (count <= 1 || ((self->end_ns - self->start_ns) >> shift) == 0)
        break;
    }
  g_free (prev_w);
  g_free (st);
  g_free (en);
  row->pub.n_levels = levels->len;
  row->n_all = levels->len;
  row->hidden = 0;
  row->level_slots = levels->len;
  row->level_caps = g_new (guint, MAX (levels->len, 1));
  for (guint l = 0; l < levels->len; l++)
    row->level_caps[l] = MAX (g_array_index (counts, guint, l), 1);
  row->levels = (WickTrackMip **)g_ptr_array_free (levels, FALSE);
  row->level_counts = (guint *)g_array_free (counts, FALSE);
  row->pub.levels = (const WickTrackMip *const *)row->levels;
  row->pub.level_counts = row->level_counts;
}

static guint
track_event_kind (const WickTrack *t)
{
  switch (t->kind)
    {
      case WICK_TRACK_SLICES:
        return WICK_EVENT_SLICE;
      case WICK_TRACK_ASYNC:
        return WICK_EVENT_ASYNC;
      case WICK_TRACK_COUNTER:
        return WICK_EVENT_COUNTER;
      case WICK_TRACK_INSTANTS:
        return WICK_EVENT_INSTANT;
      default:
        return WICK_EVENT_DEVICE;
    }
}

/* Distributes the events of one kind over the rows of their tracks. */
static void
fill_rows (WickTracks *self, guint kind, guint n, guint32 (*track_of) (WickTracks *, guint32),
           guint (*row_of) (WickTracks *, guint32))
{
  for (guint pass = 0; pass < 2; pass++)
    {
      for (guint i = 0; i < n; i++)
        {
          guint32 t = track_of (self, i);
          if (t == G_MAXUINT32)
            continue;
          TrackIndex *ti = &self->index[t];
          guint r = row_of (self, i);
          if (r >= ti->n_rows)
            continue;
          Row *row = &ti->rows[r];
          if (pass == 0)
            row->pub.n_events++;
          else
            ((guint32 *)row->pub.events)[row->pub.n_events++] = i;
        }
      if (pass == 0)
        for (guint t = 0; t < self->tracks->len; t++)
          if (track_event_kind (&g_array_index (self->tracks, WickTrack, t)) == kind)
            for (guint r = 0; r < self->index[t].n_rows; r++)
              {
                Row *row = &self->index[t].rows[r];
                row->pub.events = g_new (guint32, MAX (row->pub.n_events, 1));
                row->pub.n_events = 0;
              }
    }
}

static guint32
slice_track_of (WickTracks *self, guint32 i)
{
  return wick_tracks_span_track (self, i);
}
static guint
slice_row_of (WickTracks *self, guint32 i)
{
  if (self->build_rows != NULL)
    return self->build_rows[i];
  return spans_of (self)[i].depth; /* builder slices: their depth on their thread */
}
static guint32
async_track_of (WickTracks *self, guint32 i)
{
  const WickAsyncSlice *a = &g_array_index (self->async, WickAsyncSlice, i);
  return a->instant ? G_MAXUINT32 : a->track;
}
static guint
async_row_of (WickTracks *self, guint32 i)
{
  return g_array_index (self->async, WickAsyncSlice, i).lane;
}
static guint32
counter_track_of (WickTracks *self, guint32 i)
{
  return g_array_index (self->counters, WickCounterSample, i).track;
}
static guint32
instant_track_of (WickTracks *self, guint32 i)
{
  return g_array_index (self->instants, WickInstant, i).track;
}
static guint32
device_track_of (WickTracks *self, guint32 i)
{
  return g_array_index (self->device, WickDeviceSlice, i).track;
}
static guint
device_row_of (WickTracks *self, guint32 i)
{
  return g_array_index (self->device, WickDeviceSlice, i).row;
}
static guint
row_zero (WickTracks *self, guint32 i)
{
  (void)self;
  (void)i;
  return 0;
}

static void
build_index (WickTracks *self)
{
  index_free (self);
  guint nt = self->tracks->len;
  self->index = g_new0 (TrackIndex, MAX (nt, 1));
  self->n_indexed_tracks = nt;
  for (guint t = 0; t < nt; t++)
    {
      const WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
      TrackIndex *ti = &self->index[t];
      ti->n_rows = (track->kind == WICK_TRACK_SLICES || track->kind == WICK_TRACK_ASYNC
                    || track->kind == WICK_TRACK_DEVICE)
                     ? (guint)track->max_depth + 1
                     : 1;
      ti->rows = g_new0 (Row, ti->n_rows);
      for (guint r = 0; r < ti->n_rows; r++)
        ti->rows[r].pub.event_kind = track_event_kind (track);
    }
  fill_rows (self, WICK_EVENT_SLICE, self->doc->spans->len, slice_track_of, slice_row_of);
  fill_rows (self, WICK_EVENT_ASYNC, self->async->len, async_track_of, async_row_of);
  fill_rows (self, WICK_EVENT_COUNTER, self->counters->len, counter_track_of, row_zero);
  fill_rows (self, WICK_EVENT_INSTANT, self->instants->len, instant_track_of, row_zero);
  fill_rows (self, WICK_EVENT_DEVICE, self->device->len, device_track_of, device_row_of);

  guint widest = 1;
  for (guint t = 0; t < nt; t++)
    for (guint r = 0; r < self->index[t].n_rows; r++)
      widest = MAX (widest, self->index[t].rows[r].pub.n_events);
  choose_base (self, widest);
  for (guint t = 0; t < nt; t++)
    for (guint r = 0; r < self->index[t].n_rows; r++)
      build_row (self, &self->index[t].rows[r]);
  self->n_indexed_spans = self->doc->spans->len;
}

/* ---- finish: flows -------------------------------------------------------- */

/* Deepest slice of @track enclosing @t, or (@next) the first slice starting
 * at or after @t, outermost first. */
static WickEventRef
bind_point (WickTracks *self, guint32 track, guint64 t, gboolean next)
{
  WickEventRef none = { WICK_EVENT_NONE, 0 };
  if (track == G_MAXUINT32)
    return none;
  TrackIndex *ti = &self->index[track];
  if (next)
    {
      WickEventRef best = none;
      guint64 best_start = G_MAXUINT64;
      for (guint r = 0; r < ti->n_rows; r++)
        {
          const Row *row = &ti->rows[r];
          guint lo = 0, hi = row->pub.n_events;
          while (lo < hi)
            {
              guint mid = lo + (hi - lo) / 2;
              if (event_start (self, row->pub.event_kind, row->pub.events[mid]) < t)
                lo = mid + 1;
              else
                hi = mid;
            }
          if (lo < row->pub.n_events)
            {
              guint64 s = event_start (self, row->pub.event_kind, row->pub.events[lo]);
              if (s < best_start)
                {
                  best_start = s;
                  best = (WickEventRef){ row->pub.event_kind, row->pub.events[lo] };
                }
            }
        }
      return best;
    }
  for (gint r = (gint)ti->n_rows - 1; r >= 0; r--)
    {
      const Row *row = &ti->rows[r];
      for (guint i = wick_tracks_row_first_overlapping (self, track, (guint)r, t);
           i < row->pub.n_events; i++)
        {
          guint32 ev = row->pub.events[i];
          guint64 s = event_start (self, row->pub.event_kind, ev);
          if (s > t)
            break;
          if (event_end (self, row->pub.event_kind, ev) >= t)
            return (WickEventRef){ row->pub.event_kind, ev };
        }
    }
  return none;
}

static int
compare_flow_points (gconstpointer pa, gconstpointer pb)
{
  const FlowPoint *a = pa, *b = pb;
  if (a->category != b->category)
    return a->category < b->category ? -1 : 1;
  if (a->name != b->name)
    return a->name < b->name ? -1 : 1;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  /* Kineto writes a launch and its kernel's end at one time, the end first */
  if (a->phase != b->phase)
    return a->phase < b->phase ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The track a flow point on @thread binds to: its slices, else the device
 * track its events went to (Kineto's GPU "threads"). */
static guint32
bind_track (WickTracks *self, guint32 thread)
{
  guint32 t = g_array_index (self->thread_slices, guint32, thread);
  if (t == G_MAXUINT32)
    t = g_array_index (self->thread_device, guint32, thread);
  return t;
}

static guint32
thread_track (WickTracks *self, guint32 thread)
{
  guint32 t = bind_track (self, thread);
  if (t == G_MAXUINT32)
    t = g_array_index (self->thread_instants, guint32, thread);
  return t;
}

void
wick_tracks_set_thread_device_track (WickTracks *self, guint32 thread, guint32 track)
{
  g_return_if_fail (thread < self->thread_device->len && track < self->tracks->len);
  g_array_index (self->thread_device, guint32, thread) = track;
}

typedef struct
{
  WickStr id;
  guint64 ts;
  guint32 span;
  gboolean in, out;
} BoundSlice;

static int
compare_bound (gconstpointer pa, gconstpointer pb)
{
  const BoundSlice *a = pa, *b = pb;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->span < b->span ? -1 : a->span > b->span;
}

static WickFlow
flow_between (WickTracks *self, const FlowPoint *a, const FlowPoint *b)
{
  WickFlow flow = { a->id, a->category, a->name };
  flow.from.track = thread_track (self, a->thread);
  flow.from.timestamp_ns = (guint64)(a->ts - self->origin);
  flow.from.event = bind_point (self, bind_track (self, a->thread), flow.from.timestamp_ns, FALSE);
  flow.to.track = thread_track (self, b->thread);
  flow.to.timestamp_ns = (guint64)(b->ts - self->origin);
  flow.to.event = bind_point (self, bind_track (self, b->thread), flow.to.timestamp_ns,
                              b->phase == WICK_FLOW_END && !b->bind_enclosing);
  return flow;
}

/* Flow v1, per (category, name, id) in time order: a start opens the flow; a
 * step or an end draws an arrow from the flow's last start or step (several
 * ends of one start fan out from it: a launch that ran several kernels) and a
 * step becomes the next source. A step or an end before any start of its id
 * draws nothing and is counted (Kineto writes ends whose launch fell outside
 * the trace: joining them to each other would draw kernel-to-kernel arrows),
 * so is a start that no step or end follows. */
static void
finish_flow_points (WickTracks *self)
{
  guint n = self->flow_points->len;
  FlowPoint *p = (FlowPoint *)(gpointer)self->flow_points->data;
  guint64 no_start[3] = { 0 }, no_end = 0;

  if (n > 1) /* data is NULL when empty: qsort's argument must not be */
    qsort (p, n, sizeof (FlowPoint), compare_flow_points);
  for (guint i = 0; i < n;)
    {
      guint j = i;
      const FlowPoint *source = NULL;
      gboolean source_used = FALSE;
      for (;
           j < n && p[j].category == p[i].category && p[j].name == p[i].name && p[j].id == p[i].id;
           j++)
        {
          const FlowPoint *q = &p[j];
          if (q->phase == WICK_FLOW_START)
            {
              no_end += source != NULL && !source_used;
              source = q;
              source_used = FALSE;
              continue;
            }
          if (source == NULL)
            {
              no_start[q->phase]++;
              continue;
            }
          WickFlow flow = flow_between (self, source, q);
          g_array_append_val (self->flows, flow);
          source_used = TRUE;
          if (q->phase == WICK_FLOW_STEP)
            source = q, source_used = FALSE;
        }
      no_end += source != NULL && !source_used && source->phase == WICK_FLOW_START;
      i = j;
    }
  if (no_start[WICK_FLOW_END] > 0)
    wick_tracks_skip (self, "flow end (f) without a start", no_start[WICK_FLOW_END]);
  if (no_start[WICK_FLOW_STEP] > 0)
    wick_tracks_skip (self, "flow step (t) without a start", no_start[WICK_FLOW_STEP]);
  if (no_end > 0)
    wick_tracks_skip (self, "flow start (s) without a step or end", no_end);
}

static void
finish_flows (WickTracks *self)
{
  finish_flow_points (self);
  g_array_set_size (self->flow_points, 0);

  guint nb = self->flow_binds->len;
  if (nb > 0)
    {
      BoundSlice *bound = g_new (BoundSlice, nb);
      guint m = 0;
      for (guint i = 0; i < nb; i++)
        {
          const FlowBind *b = &g_array_index (self->flow_binds, FlowBind, i);
          guint32 span = b->slice < self->n_pending_span ? self->pending_span[b->slice] : G_MAXUINT32;
          if (span == G_MAXUINT32)
            continue;
          bound[m++] = (BoundSlice){ b->id, spans_of (self)[span].start_ns, span, b->flow_in,
                                     b->flow_out };
        }
      if (m > 1)
        qsort (bound, m, sizeof (BoundSlice), compare_bound);
      guint64 dangling = 0;
      for (guint i = 0; i < m;)
        {
          guint j = i;
          gint64 out = -1;
          for (; j < m && bound[j].id == bound[i].id; j++)
            {
              if (bound[j].in && out >= 0)
                {
                  WickFlow flow = { bound[j].id, 0, 0 };
                  guint32 a = bound[out].span, b = bound[j].span;
                  flow.from = (WickFlowEnd){ wick_tracks_span_track (self, a),
                                             spans_of (self)[a].start_ns,
                                             { WICK_EVENT_SLICE, a } };
                  flow.to = (WickFlowEnd){ wick_tracks_span_track (self, b),
                                           spans_of (self)[b].start_ns,
                                           { WICK_EVENT_SLICE, b } };
                  g_array_append_val (self->flows, flow);
                  out = -1;
                }
              else if (bound[j].in)
                dangling++;
              if (bound[j].out)
                out = j;
            }
          if (out >= 0)
            dangling++;
          i = j;
        }
      if (dangling)
        wick_tracks_skip (self, "flow v2 end without its other end", dangling);
      g_free (bound);
    }
  g_array_set_size (self->flow_binds, 0);
}

/* flows_by_event: both ends of every flow, by event. */
static void
index_flows (WickTracks *self)
{
  g_array_set_size (self->flows_by_event, 0);
  for (guint f = 0; f < self->flows->len; f++)
    {
      const WickFlow *flow = &g_array_index (self->flows, WickFlow, f);
      if (flow->from.event.kind != WICK_EVENT_NONE)
        {
          FlowOfEvent e = { ((guint64)flow->from.event.kind << 32) | flow->from.event.index, f, 1 };
          g_array_append_val (self->flows_by_event, e);
        }
      if (flow->to.event.kind != WICK_EVENT_NONE)
        {
          FlowOfEvent e = { ((guint64)flow->to.event.kind << 32) | flow->to.event.index, f, 0 };
          g_array_append_val (self->flows_by_event, e);
        }
    }
  KeyItem *items = g_new (KeyItem, MAX (self->flows_by_event->len, 1));
  guint nf = self->flows_by_event->len;
  for (guint i = 0; i < nf; i++)
    items[i] = (KeyItem){ g_array_index (self->flows_by_event, FlowOfEvent, i).key, i };
  sort_key_items (items, nf);
  GArray *sorted = g_array_sized_new (FALSE, FALSE, sizeof (FlowOfEvent), nf);
  for (guint i = 0; i < nf; i++)
    g_array_append_val (sorted, g_array_index (self->flows_by_event, FlowOfEvent, items[i].item));
  g_free (items);
  g_array_unref (self->flows_by_event);
  self->flows_by_event = sorted;
}

/* ---- finish: device rows and launches -------------------------------------- */

typedef struct
{
  guint64 start, end;
  guint32 index;
} DeviceItem;

static int
compare_device_items (gconstpointer pa, gconstpointer pb)
{
  const DeviceItem *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->end != b->end)
    return a->end > b->end ? -1 : 1; /* longer first: an enclosing annotation before */
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Rows of the intervals of each device track: annotations nest from row 0
 * as slices do (an annotation starting inside an open one is its child),
 * the other intervals take the first row below every annotation row whose
 * last interval has ended (one row per stream unless two overlap). */
static void
layout_device_rows (WickTracks *self)
{
  guint n = self->device->len, nt = self->tracks->len;
  if (n == 0)
    return;
  WickDeviceSlice *d = (WickDeviceSlice *)(gpointer)self->device->data;
  guint *first = g_new0 (guint, nt + 1);
  for (guint i = 0; i < n; i++)
    first[d[i].track + 1]++;
  for (guint t = 0; t < nt; t++)
    first[t + 1] += first[t];
  guint *fill = g_memdup2 (first, (nt + 1) * sizeof (guint));
  DeviceItem *items = g_new (DeviceItem, n);
  for (guint i = 0; i < n; i++)
    items[fill[d[i].track]++] = (DeviceItem){ d[i].start_ns, d[i].start_ns + d[i].duration_ns, i };
  g_free (fill);
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr (GArray) lanes = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint t = 0; t < nt; t++)
    {
      DeviceItem *it = items + first[t];
      guint m = first[t + 1] - first[t];
      WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
      if (m == 0 || track->kind != WICK_TRACK_DEVICE)
        continue;
      gboolean sorted = TRUE;
      for (guint i = 1; i < m && sorted; i++)
        sorted = compare_device_items (&it[i - 1], &it[i]) < 0;
      if (!sorted)
        qsort (it, m, sizeof (DeviceItem), compare_device_items);
      guint annotation_rows = 0;
      g_array_set_size (stack, 0);
      for (guint i = 0; i < m; i++)
        {
          WickDeviceSlice *x = &d[it[i].index];
          if (x->kind != WICK_DEVICE_ANNOTATION)
            continue;
          while (stack->len > 0 && g_array_index (stack, guint64, stack->len - 1) <= it[i].start)
            g_array_set_size (stack, stack->len - 1);
          x->row = (guint16)MIN (stack->len, G_MAXUINT16 - 1);
          annotation_rows = MAX (annotation_rows, (guint)x->row + 1);
          g_array_append_val (stack, it[i].end);
        }
      guint max_row = annotation_rows > 0 ? annotation_rows - 1 : 0;
      g_array_set_size (lanes, 0);
      for (guint i = 0; i < m; i++)
        {
          WickDeviceSlice *x = &d[it[i].index];
          if (x->kind == WICK_DEVICE_ANNOTATION)
            continue;
          guint lane = 0;
          while (lane < lanes->len && g_array_index (lanes, guint64, lane) > it[i].start)
            lane++;
          if (lane == lanes->len)
            g_array_append_val (lanes, it[i].end);
          else
            g_array_index (lanes, guint64, lane) = it[i].end;
          x->row = (guint16)MIN (annotation_rows + lane, G_MAXUINT16);
          max_row = MAX (max_row, x->row);
        }
      track->max_depth = (guint16)max_row;
    }
  g_free (items);
  g_free (first);
}

static int
compare_span_links (gconstpointer pa, gconstpointer pb)
{
  const SpanLink *a = pa, *b = pb;
  if (a->span != b->span)
    return a->span < b->span ? -1 : 1;
  if (a->value != b->value)
    return a->value < b->value ? -1 : 1;
  return a->device < b->device ? -1 : a->device > b->device;
}

typedef struct
{
  gint64 correlation;
  guint64 start;
  guint32 span;
} CorrelationItem;

static int
compare_correlation_items (gconstpointer pa, gconstpointer pb)
{
  const CorrelationItem *a = pa, *b = pb;
  if (a->correlation != b->correlation)
    return a->correlation < b->correlation ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->span < b->span ? -1 : a->span > b->span;
}

static gboolean
is_graph_launch (const char *name)
{
  return name != NULL
         && (g_str_has_prefix (name, "cudaGraphLaunch") || g_str_has_prefix (name, "hipGraphLaunch")
             || g_str_has_prefix (name, "cuGraphLaunch"));
}

/* Index of the first link of @span in @links (sorted by span), links->len when none. */
static guint
first_link (GArray *links, guint32 span)
{
  guint lo = 0, hi = links->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (links, SpanLink, mid).span < span)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* What a runtime call launches, from its name: 'k' a kernel (cudaLaunchKernel,
 * cuLaunchKernelEx, hipLaunchKernel, ...), 'c' a copy, 's' a fill; 0 for the
 * rest, graph launches included (one call, many kernels). */
static char
launch_class_of_call (const char *name)
{
  if (name == NULL)
    return 0;
  if (strstr (name, "Memcpy") || strstr (name, "memcpy"))
    return 'c';
  if (strstr (name, "Memset") || strstr (name, "memset"))
    return 's';
  if (strstr (name, "Launch") && !strstr (name, "Graph"))
    return 'k';
  return 0;
}

static char
launch_class_of_work (guint8 kind)
{
  return kind == WICK_DEVICE_KERNEL ? 'k' : kind == WICK_DEVICE_MEMCPY ? 'c' : 's';
}

typedef struct
{
  gint64 external;
  guint64 start;
  guint32 index; /* span, or device slice */
  char klass;
} ExternalItem;

static int
compare_external_items (gconstpointer pa, gconstpointer pb)
{
  const ExternalItem *a = pa, *b = pb;
  if (a->external != b->external)
    return a->external < b->external ? -1 : 1;
  if (a->klass != b->klass)
    return a->klass < b->klass ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* The External id fallback, for a kernel, copy or fill that no correlation
 * id or flow linked (a trace without them): Kineto gives it the External id
 * of the operator that launched it, and every runtime call of that operator
 * the same. Within one (External id, kind) group — kernels with the calls
 * that launch kernels, copies with copy calls, fills with fill calls — the
 * unlinked intervals by start pair with the calls that launched nothing yet,
 * by start: the i-th with the i-th, as a stream runs what it is given in
 * order. A group whose counts differ (a launch cut off, a call that is not a
 * launch) is left unlinked and counted as skipped. */
static void
link_by_external_id (WickTracks *self)
{
  WickDeviceSlice *d = (WickDeviceSlice *)(gpointer)self->device->data;
  const WickSpan *spans = spans_of (self);
  g_autoptr (GArray) work = g_array_new (FALSE, FALSE, sizeof (ExternalItem));
  for (guint i = 0; i < self->pending_ext_device->len; i++)
    {
      const ExternalOfDevice *e = &g_array_index (self->pending_ext_device, ExternalOfDevice, i);
      const WickDeviceSlice *x = &d[e->device];
      if (WICK_DEVICE_KIND_IS_WORK (x->kind) && x->launcher == G_MAXUINT32)
        {
          ExternalItem item = { e->external, x->start_ns, e->device, launch_class_of_work (x->kind) };
          g_array_append_val (work, item);
        }
    }
  g_array_set_size (self->pending_ext_device, 0);
  if (work->len == 0)
    {
      g_array_set_size (self->pending_ext_slice, 0);
      g_array_set_size (self->pending_ext_op, 0);
      return;
    }
  /* calls that launched nothing yet */
  g_autoptr (GHashTable) launchers = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < self->device->len; i++)
    if (d[i].launcher != G_MAXUINT32)
      g_hash_table_add (launchers, GUINT_TO_POINTER (d[i].launcher + 1));
  g_autoptr (GArray) calls = g_array_new (FALSE, FALSE, sizeof (ExternalItem));
  for (guint i = 0; i < self->pending_ext_slice->len; i++)
    {
      const PendingCorrelation *c = &g_array_index (self->pending_ext_slice, PendingCorrelation, i);
      guint32 span = c->slice < self->n_pending_span ? self->pending_span[c->slice] : G_MAXUINT32;
      if (span == G_MAXUINT32 || g_hash_table_contains (launchers, GUINT_TO_POINTER (span + 1)))
        continue;
      char klass = launch_class_of_call (wick_document_str (self->doc, spans[span].name));
      if (klass == 0)
        continue;
      ExternalItem item = { c->correlation, spans[span].start_ns, span, klass };
      g_array_append_val (calls, item);
    }
  g_array_set_size (self->pending_ext_slice, 0);
  /* operators by External id: the launch of a group no runtime call has */
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (ExternalItem));
  for (guint i = 0; i < self->pending_ext_op->len; i++)
    {
      const PendingCorrelation *c = &g_array_index (self->pending_ext_op, PendingCorrelation, i);
      guint32 span = c->slice < self->n_pending_span ? self->pending_span[c->slice] : G_MAXUINT32;
      if (span == G_MAXUINT32)
        continue;
      ExternalItem item = { c->correlation, spans[span].start_ns, span, 0 };
      g_array_append_val (ops, item);
    }
  g_array_set_size (self->pending_ext_op, 0);
  g_array_sort (ops, compare_external_items);
  g_array_sort (work, compare_external_items);
  g_array_sort (calls, compare_external_items);
  const ExternalItem *w = (const ExternalItem *)(gconstpointer)work->data;
  const ExternalItem *c = (const ExternalItem *)(gconstpointer)calls->data;
  guint64 ambiguous = 0;
  guint j = 0;
  for (guint i = 0; i < work->len;)
    {
      guint end = i;
      while (end < work->len && w[end].external == w[i].external && w[end].klass == w[i].klass)
        end++;
      while (j < calls->len
             && (c[j].external < w[i].external
                 || (c[j].external == w[i].external && c[j].klass < w[i].klass)))
        j++;
      guint cend = j;
      while (cend < calls->len && c[cend].external == w[i].external && c[cend].klass == w[i].klass)
        cend++;
      if (cend - j == end - i)
        for (guint k = 0; k < end - i; k++)
          d[w[i + k].index].launcher = c[j + k].index;
      else if (cend == j)
        {
          /* no runtime call of this External id in the trace (cut, or its
           * runtime events filtered out): the operator carrying it, when
           * exactly one does, launched the group */
          const ExternalItem *o = (const ExternalItem *)(gconstpointer)ops->data;
          guint lo = 0, hi = ops->len;
          while (lo < hi)
            {
              guint mid = lo + (hi - lo) / 2;
              if (o[mid].external < w[i].external)
                lo = mid + 1;
              else
                hi = mid;
            }
          guint n_ops = 0;
          while (lo + n_ops < ops->len && o[lo + n_ops].external == w[i].external)
            n_ops++;
          if (n_ops == 1)
            {
              for (guint k = i; k < end; k++)
                d[w[k].index].launcher = o[lo].index;
            }
          else
            ambiguous += end - i;
        }
      else
        ambiguous += end - i;
      i = end;
      j = cend;
    }
  if (ambiguous)
    wick_tracks_skip (self, "External id with unequal kernels and launches (not linked)", ambiguous);
}

/* Every kernel, copy and fill to its launch: by correlation id (the runtime
 * call carrying the same id), else by a flow of the file ending on it; the
 * flows of the file that start at a launch end on the interval it launched
 * (not on an annotation enclosing it), and a launch without a flow to one
 * of its intervals gets one (category "correlation"), so that every launch
 * has its arrow. */
static void
link_launches (WickTracks *self)
{
  guint nd = self->device->len;
  WickDeviceSlice *d = (WickDeviceSlice *)(gpointer)self->device->data;
  const WickSpan *spans = spans_of (self);

  /* span -> correlation */
  g_array_set_size (self->span_corr, 0);
  for (guint i = 0; i < self->pending_corr->len; i++)
    {
      const PendingCorrelation *c = &g_array_index (self->pending_corr, PendingCorrelation, i);
      guint32 span = c->slice < self->n_pending_span ? self->pending_span[c->slice] : G_MAXUINT32;
      if (span == G_MAXUINT32)
        continue;
      SpanLink link = { span, 0, c->correlation };
      g_array_append_val (self->span_corr, link);
    }
  g_array_set_size (self->pending_corr, 0);
  if (self->span_corr->len > 1)
    qsort (self->span_corr->data, self->span_corr->len, sizeof (SpanLink), compare_span_links);

  guint nc = self->span_corr->len;
  CorrelationItem *by_corr = g_new (CorrelationItem, MAX (nc, 1));
  for (guint i = 0; i < nc; i++)
    {
      const SpanLink *l = &g_array_index (self->span_corr, SpanLink, i);
      by_corr[i] = (CorrelationItem){ l->value, spans[l->span].start_ns, l->span };
    }
  if (nc > 1)
    qsort (by_corr, nc, sizeof (CorrelationItem), compare_correlation_items);
  guint64 duplicates = 0;
  for (guint i = 1; i < nc; i++)
    duplicates += by_corr[i].correlation == by_corr[i - 1].correlation;
  if (duplicates)
    wick_tracks_skip (self, "correlation id on more than one runtime call", duplicates);

  for (guint i = 0; i < nd; i++)
    {
      WickDeviceSlice *x = &d[i];
      if (!WICK_DEVICE_KIND_IS_WORK (x->kind) || x->correlation == 0 || nc == 0)
        continue;
      guint lo = 0, hi = nc;
      while (lo < hi)
        {
          guint mid = lo + (hi - lo) / 2;
          if (by_corr[mid].correlation < x->correlation)
            lo = mid + 1;
          else
            hi = mid;
        }
      if (lo < nc && by_corr[lo].correlation == x->correlation)
        x->launcher = by_corr[lo].span;
    }
  g_free (by_corr);

  /* no correlation: the slice a flow of the file ending on it starts at */
  for (guint f = 0; f < self->flows->len; f++)
    {
      const WickFlow *flow = &g_array_index (self->flows, WickFlow, f);
      if (flow->to.event.kind == WICK_EVENT_DEVICE && flow->from.event.kind == WICK_EVENT_SLICE
          && flow->to.event.index < nd)
        {
          WickDeviceSlice *x = &d[flow->to.event.index];
          if (WICK_DEVICE_KIND_IS_WORK (x->kind) && x->launcher == G_MAXUINT32
              && x->correlation == 0)
            x->launcher = flow->from.event.index;
        }
    }

  link_by_external_id (self);

  g_array_set_size (self->launched, 0);
  self->n_launch_flows = 0;
  for (guint i = 0; i < nd; i++)
    if (d[i].launcher != G_MAXUINT32)
      {
        SpanLink link = { d[i].launcher, i, (gint64)d[i].start_ns };
        g_array_append_val (self->launched, link);
        if (is_graph_launch (wick_document_str (self->doc, spans[d[i].launcher].name)))
          d[i].flags |= WICK_DEVICE_FLAG_GRAPH;
      }
  if (self->launched->len > 1)
    qsort (self->launched->data, self->launched->len, sizeof (SpanLink), compare_span_links);
  if (self->launched->len == 0)
    return;

  /* the file's flows from a launch end on what it launched */
  guint8 *has_flow = g_new0 (guint8, nd);
  guint n_file_flows = self->flows->len;
  for (guint f = 0; f < n_file_flows; f++)
    {
      WickFlow *flow = &g_array_index (self->flows, WickFlow, f);
      if (flow->from.event.kind != WICK_EVENT_SLICE)
        continue;
      guint k = first_link (self->launched, flow->from.event.index);
      guint32 best = G_MAXUINT32;
      guint64 best_gap = G_MAXUINT64;
      for (; k < self->launched->len
             && g_array_index (self->launched, SpanLink, k).span == flow->from.event.index;
           k++)
        {
          guint32 dev = g_array_index (self->launched, SpanLink, k).device;
          guint64 s = d[dev].start_ns, t = flow->to.timestamp_ns;
          guint64 gap = s > t ? s - t : t - s;
          if (gap < best_gap || (gap == best_gap && !has_flow[dev] && has_flow[best]))
            best = dev, best_gap = gap;
        }
      if (best == G_MAXUINT32)
        continue;
      flow->to.event = (WickEventRef){ WICK_EVENT_DEVICE, best };
      flow->to.track = d[best].track;
      has_flow[best] = 1;
    }
  WickStr category = wick_tracks_intern (self, "correlation", strlen ("correlation"));
  WickStr name = wick_tracks_intern (self, "launch", strlen ("launch"));
  for (guint k = 0; k < self->launched->len; k++)
    {
      const SpanLink *l = &g_array_index (self->launched, SpanLink, k);
      if (has_flow[l->device])
        continue;
      char id[24];
      int len = g_snprintf (id, sizeof id, "%" G_GINT64_FORMAT, d[l->device].correlation);
      WickFlow flow = { wick_tracks_intern (self, id, (gsize)len), category, name };
      flow.from = (WickFlowEnd){ wick_tracks_span_track (self, l->span),
                                 spans[l->span].start_ns,
                                 { WICK_EVENT_SLICE, l->span } };
      flow.to = (WickFlowEnd){ d[l->device].track,
                               d[l->device].start_ns,
                               { WICK_EVENT_DEVICE, l->device } };
      g_array_append_val (self->flows, flow);
      self->n_launch_flows++;
    }
  g_free (has_flow);
}

const char *
wick_tracks_span_category (WickTracks *self, guint32 span)
{
  if (self->span_category == NULL || span >= self->span_category->len)
    return NULL;
  WickStr c = g_array_index (self->span_category, WickStr, span);
  return c ? wick_document_str (self->doc, c) : NULL;
}

guint
wick_tracks_get_n_launch_flows (WickTracks *self)
{
  return self->n_launch_flows;
}

gint64
wick_tracks_span_correlation (WickTracks *self, guint32 span)
{
  guint k = first_link (self->span_corr, span);
  if (k < self->span_corr->len && g_array_index (self->span_corr, SpanLink, k).span == span)
    return g_array_index (self->span_corr, SpanLink, k).value;
  return 0;
}

guint
wick_tracks_span_launched (WickTracks *self, guint32 span, guint32 *out, guint max)
{
  guint count = 0;
  for (guint k = first_link (self->launched, span);
       k < self->launched->len && g_array_index (self->launched, SpanLink, k).span == span; k++)
    {
      if (out != NULL && count < max)
        out[count] = g_array_index (self->launched, SpanLink, k).device;
      count++;
    }
  return count;
}

char *
wick_tracks_process_title (WickTracks *self, guint32 process)
{
  g_return_val_if_fail (process < self->processes->len, NULL);
  const WickProcess *p = &g_array_index (self->processes, WickProcess, process);
  const char *name = p->name ? wick_document_str (self->doc, p->name) : NULL;
  const char *labels = p->labels ? wick_document_str (self->doc, p->labels) : NULL;
  if (name != NULL && *name == '\0')
    name = NULL;
  if (labels != NULL && *labels == '\0')
    labels = NULL;
  if (labels != NULL && (g_str_has_prefix (labels, "GPU") || g_str_has_prefix (labels, "MTIA")))
    return name ? g_strdup_printf ("%s · %s", labels, name) : g_strdup (labels);
  GString *s = g_string_new (NULL);
  if (name != NULL)
    g_string_append_printf (s, "%s · %" G_GINT64_FORMAT, name, p->pid);
  else
    g_string_append_printf (s, "process %" G_GINT64_FORMAT, p->pid);
  if (labels != NULL)
    g_string_append_printf (s, " (%s)", labels);
  return g_string_free (s, FALSE);
}

/* ---- finish --------------------------------------------------------------- */

static int
compare_order (gconstpointer pa, gconstpointer pb, gpointer data)
{
  WickTracks *self = data;
  const WickTrack *a = &g_array_index (self->tracks, WickTrack, *(const guint32 *)pa);
  const WickTrack *b = &g_array_index (self->tracks, WickTrack, *(const guint32 *)pb);
  /* Processes by (sort index, pid); no process last. */
  if ((a->process < 0) != (b->process < 0))
    return a->process < 0 ? 1 : -1;
  if (a->process >= 0 && a->process != b->process)
    {
      const WickProcess *pa_ = &g_array_index (self->processes, WickProcess, a->process);
      const WickProcess *pb_ = &g_array_index (self->processes, WickProcess, b->process);
      gint32 sa = pa_->sort_index, sb = pb_->sort_index;
      if (sa != sb)
        return sa < sb ? -1 : 1;
      if (pa_->pid != pb_->pid)
        return pa_->pid < pb_->pid ? -1 : 1;
      return a->process < b->process ? -1 : 1;
    }
  /* Threads first (by sort index, tid), then process tracks. */
  if ((a->thread < 0) != (b->thread < 0))
    return a->thread < 0 ? 1 : -1;
  if (a->thread >= 0 && a->thread != b->thread)
    {
      const WickThread *ta = &g_array_index (self->threads, WickThread, a->thread);
      const WickThread *tb = &g_array_index (self->threads, WickThread, b->thread);
      if (ta->sort_index != tb->sort_index)
        return ta->sort_index < tb->sort_index ? -1 : 1;
      if (ta->tid != tb->tid)
        return ta->tid < tb->tid ? -1 : 1;
      return a->thread < b->thread ? -1 : 1;
    }
  /* Within a thread: slices, then instants. Process tracks: async, counter,
   * instants, device; tracks of no process: the global instants first. */
  static const int rank_thread[] = { [WICK_TRACK_SLICES] = 0, [WICK_TRACK_INSTANTS] = 1,
                                     [WICK_TRACK_ASYNC] = 2,  [WICK_TRACK_COUNTER] = 3,
                                     [WICK_TRACK_DEVICE] = 4 };
  static const int rank_process[] = { [WICK_TRACK_SLICES] = 0, [WICK_TRACK_ASYNC] = 1,
                                      [WICK_TRACK_COUNTER] = 2, [WICK_TRACK_INSTANTS] = 3,
                                      [WICK_TRACK_DEVICE] = 4 };
  static const int rank_none[] = { [WICK_TRACK_INSTANTS] = 0, [WICK_TRACK_SLICES] = 1,
                                   [WICK_TRACK_ASYNC] = 2,    [WICK_TRACK_COUNTER] = 3,
                                   [WICK_TRACK_DEVICE] = 4 };
  const int *rank = a->thread >= 0 ? rank_thread : a->process >= 0 ? rank_process : rank_none;
  if (rank[a->kind] != rank[b->kind])
    return rank[a->kind] - rank[b->kind];
  guint32 ia = *(const guint32 *)pa, ib = *(const guint32 *)pb;
  return ia < ib ? -1 : ia > ib;
}

static void
compute_extent (WickTracks *self)
{
  guint64 start = G_MAXUINT64, end = 0;
  const WickSpan *spans = spans_of (self);
  for (guint i = 0; i < self->doc->spans->len; i++)
    {
      start = MIN (start, spans[i].start_ns);
      end = MAX (end, spans[i].start_ns
                        + ((spans[i].flags & WICK_SPAN_FLAG_CLOSED) ? spans[i].duration_ns : 0));
    }
  for (guint i = 0; i < self->async->len; i++)
    {
      const WickAsyncSlice *a = &g_array_index (self->async, WickAsyncSlice, i);
      start = MIN (start, a->start_ns);
      end = MAX (end, a->start_ns + a->duration_ns);
    }
  for (guint i = 0; i < self->counters->len; i++)
    {
      guint64 t = g_array_index (self->counters, WickCounterSample, i).timestamp_ns;
      start = MIN (start, t);
      end = MAX (end, t);
    }
  for (guint i = 0; i < self->instants->len; i++)
    {
      guint64 t = g_array_index (self->instants, WickInstant, i).timestamp_ns;
      start = MIN (start, t);
      end = MAX (end, t);
    }
  for (guint i = 0; i < self->device->len; i++)
    {
      const WickDeviceSlice *d = &g_array_index (self->device, WickDeviceSlice, i);
      start = MIN (start, d->start_ns);
      end = MAX (end, d->start_ns + d->duration_ns);
    }
  if (self->format == WICK_TRACE_FORMAT_CANDLE_GRAPH)
    end = MAX (end, wick_document_get_end_ns (self->doc));
  self->extent_any = start != G_MAXUINT64;
  if (start == G_MAXUINT64)
    start = 0;
  self->start_ns = start;
  self->raw_end = end;
  self->end_ns = MAX (end, start + 1);
}

static gint64
min_raw_time (WickTracks *self)
{
  gint64 m = G_MAXINT64;
  for (guint i = 0; i < self->pending->len; i++)
    m = MIN (m, g_array_index (self->pending, PendingSlice, i).ts);
  for (guint i = 0; i < self->pending_async->len; i++)
    m = MIN (m, g_array_index (self->pending_async, PendingAsync, i).ts);
  for (guint i = 0; i < self->flow_points->len; i++)
    m = MIN (m, g_array_index (self->flow_points, FlowPoint, i).ts);
  for (guint i = 0; i < self->counters->len; i++)
    m = MIN (m, (gint64)g_array_index (self->counters, WickCounterSample, i).timestamp_ns);
  for (guint i = 0; i < self->instants->len; i++)
    m = MIN (m, (gint64)g_array_index (self->instants, WickInstant, i).timestamp_ns);
  for (guint i = 0; i < self->device->len; i++)
    m = MIN (m, (gint64)g_array_index (self->device, WickDeviceSlice, i).start_ns);
  return m == G_MAXINT64 ? 0 : m;
}

/* Each counter track's min and max, once, for the views' scales. */
static void
counter_extents (WickTracks *self)
{
  WickTrack *tracks = (WickTrack *)(gpointer)self->tracks->data;
  for (guint t = 0; t < self->tracks->len; t++)
    if (tracks[t].kind == WICK_TRACK_COUNTER)
      {
        tracks[t].min = G_MAXDOUBLE;
        tracks[t].max = -G_MAXDOUBLE;
      }
  for (guint i = 0; i < self->counters->len; i++)
    {
      const WickCounterSample *s = &g_array_index (self->counters, WickCounterSample, i);
      tracks[s->track].min = MIN (tracks[s->track].min, s->value);
      tracks[s->track].max = MAX (tracks[s->track].max, s->value);
    }
  for (guint t = 0; t < self->tracks->len; t++)
    if (tracks[t].kind == WICK_TRACK_COUNTER && tracks[t].min > tracks[t].max)
      tracks[t].min = tracks[t].max = 0;
}

/* The event arrays that grow with a live document, on huge pages once big
 * (wick-huge-pages.h): after a build and after each append. */
static void
advise_huge_pages (WickTracks *self)
{
  GArray *arrays[] = { self->counters, self->async,     self->instants,      self->device,
                       self->flows,    self->span_args, self->span_category, self->key_track };
  G_STATIC_ASSERT (G_N_ELEMENTS (arrays) == G_N_ELEMENTS (self->huge_pages));
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    wick_huge_pages_advise_array (arrays[i], &self->huge_pages[i]);
}

void
wick_tracks_finish (WickTracks *self)
{
  g_return_if_fail (!self->finished);
  advise_huge_pages (self);
  if (self->format == WICK_TRACE_FORMAT_CHROME)
    {
      self->origin = min_raw_time (self);
      for (guint i = 0; i < self->counters->len; i++)
        g_array_index (self->counters, WickCounterSample, i).timestamp_ns -= (guint64)self->origin;
      for (guint i = 0; i < self->instants->len; i++)
        g_array_index (self->instants, WickInstant, i).timestamp_ns -= (guint64)self->origin;
      for (guint i = 0; i < self->device->len; i++)
        g_array_index (self->device, WickDeviceSlice, i).start_ns -= (guint64)self->origin;
    }
  finish_slices (self);
  finish_async (self);
  compute_extent (self);
  counter_extents (self);
  if (self->format == WICK_TRACE_FORMAT_CHROME)
    layout_device_rows (self); /* candle-graph intervals keep row 0 */
  build_index (self);
  g_clear_pointer (&self->build_rows, g_free);
  finish_flows (self);
  link_launches (self);
  index_flows (self);

  g_array_set_size (self->display_order, self->tracks->len);
  for (guint t = 0; t < self->tracks->len; t++)
    g_array_index (self->display_order, guint32, t) = t;
  g_qsort_with_data (self->display_order->data, (gint)self->display_order->len, sizeof (guint32),
                     compare_order, self);
  self->finished = TRUE;
}

/* ---- query ---------------------------------------------------------------- */

gint64
wick_tracks_get_origin_ns (WickTracks *self)
{
  return self->origin;
}

guint64
wick_tracks_get_start_ns (WickTracks *self)
{
  return self->start_ns;
}

guint64
wick_tracks_get_end_ns (WickTracks *self)
{
  return self->end_ns;
}

#define GETTER(fn, type, field)                                                                     \
  const type *fn (WickTracks *self, guint *n)                                                       \
  {                                                                                                 \
    if (n)                                                                                          \
      *n = self->field->len;                                                                        \
    return (const type *)(gconstpointer)self->field->data;                                          \
  }

GETTER (wick_tracks_get_processes, WickProcess, processes)
GETTER (wick_tracks_get_threads, WickThread, threads)
GETTER (wick_tracks_get_tracks, WickTrack, tracks)
GETTER (wick_tracks_get_display_order, guint32, display_order)
GETTER (wick_tracks_get_async, WickAsyncSlice, async)
GETTER (wick_tracks_get_counter_samples, WickCounterSample, counters)
GETTER (wick_tracks_get_instants, WickInstant, instants)
GETTER (wick_tracks_get_device_slices, WickDeviceSlice, device)
GETTER (wick_tracks_get_flows, WickFlow, flows)

guint
wick_tracks_event_flows (WickTracks *self, WickEventRef event, guint32 *out, guint max)
{
  guint64 key = ((guint64)event.kind << 32) | event.index;
  const FlowOfEvent *f = (const FlowOfEvent *)(gconstpointer)self->flows_by_event->data;
  guint n = self->flows_by_event->len, lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (f[mid].key < key)
        lo = mid + 1;
      else
        hi = mid;
    }
  guint count = 0;
  for (int outgoing = 1; outgoing >= 0; outgoing--)
    for (guint i = lo; i < n && f[i].key == key; i++)
      if ((int)f[i].outgoing == outgoing)
        {
          if (count < max && out != NULL)
            out[count] = f[i].flow;
          count++;
        }
  return count;
}

guint
wick_tracks_track_n_rows (WickTracks *self, guint32 track)
{
  if (self->index == NULL || track >= self->tracks->len)
    return 0;
  return self->index[track].n_rows;
}

const WickTrackRow *
wick_tracks_track_row (WickTracks *self, guint32 track, guint row)
{
  if (self->index == NULL || track >= self->tracks->len || row >= self->index[track].n_rows)
    return NULL;
  return &self->index[track].rows[row].pub;
}

guint64
wick_tracks_get_base_ns (WickTracks *self)
{
  return self->base_ns;
}

int
wick_tracks_pick_level (WickTracks *self, double ns_per_px)
{
  if (ns_per_px < (double)self->base_ns)
    return -1;
  int level = 0;
  while (level < 62 && (double)(self->base_ns << (level + 1)) <= ns_per_px)
    level++;
  return level;
}

guint
wick_tracks_row_first_overlapping (WickTracks *self, guint32 track, guint row_index, guint64 t)
{
  if (self->index == NULL || track >= self->tracks->len
      || row_index >= self->index[track].n_rows)
    return 0;
  const Row *row = &self->index[track].rows[row_index];
  guint n = row->pub.n_events;
  guint n_blocks = (n + BLOCK - 1) / BLOCK;
  guint lo = 0, hi = n_blocks;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (row->block_max[mid] > t)
        hi = mid;
      else
        lo = mid + 1;
    }
  if (lo >= n_blocks)
    return n;
  guint64 running = lo > 0 ? row->block_max[lo - 1] : 0;
  guint i = lo * BLOCK, end = MIN (n, i + BLOCK);
  for (; i < end; i++)
    {
      running = MAX (running, event_end (self, row->pub.event_kind, row->pub.events[i]));
      if (running > t)
        return i;
    }
  return n;
}

gboolean
wick_tracks_event_at (WickTracks *self, guint32 track, guint row_index, guint64 t,
                      guint64 slop_ns, WickEventRef *event)
{
  if (self->index == NULL || track >= self->tracks->len
      || row_index >= self->index[track].n_rows)
    return FALSE;
  const Row *row = &self->index[track].rows[row_index];
  guint kind = row->pub.event_kind;
  guint64 lo_t = t > slop_ns ? t - slop_ns : 0;
  gint64 best = -1;
  guint64 best_distance = G_MAXUINT64;
  /* An instant or counter sample "ends" where it starts: find from lo_t - 1. */
  for (guint i = wick_tracks_row_first_overlapping (self, track, row_index, lo_t ? lo_t - 1 : 0);
       i < row->pub.n_events; i++)
    {
      guint32 ev = row->pub.events[i];
      guint64 start = event_start (self, kind, ev);
      if (start > t + slop_ns)
        break;
      guint64 end = event_end (self, kind, ev);
      if (end < lo_t)
        continue;
      guint64 distance = (t >= start && t <= end) ? 0 : (t < start ? start - t : t - end);
      if (distance < best_distance)
        {
          best = ev;
          best_distance = distance;
        }
    }
  if (best < 0)
    return FALSE;
  if (event)
    *event = (WickEventRef){ kind, (guint32)best };
  return TRUE;
}

gboolean
wick_tracks_counter_value_at (WickTracks *self, guint32 track, guint64 t, double *value)
{
  const WickTrackRow *row = wick_tracks_track_row (self, track, 0);
  if (row == NULL || row->event_kind != WICK_EVENT_COUNTER || row->n_events == 0)
    return FALSE;
  guint lo = 0, hi = row->n_events;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (event_start (self, WICK_EVENT_COUNTER, row->events[mid]) <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return FALSE;
  if (value)
    *value = g_array_index (self->counters, WickCounterSample, row->events[lo - 1]).value;
  return TRUE;
}

guint
wick_tracks_get_n_skipped (WickTracks *self)
{
  return self->skipped->len;
}

const char *
wick_tracks_get_skipped (WickTracks *self, guint i, guint64 *count)
{
  g_return_val_if_fail (i < self->skipped->len, NULL);
  const SkipEntry *e = &g_array_index (self->skipped, SkipEntry, i);
  if (count)
    *count = e->count;
  return e->name;
}

static const char *
wick_track_kind_to_string (WickTrackKind kind)
{
  static const char *const names[] = { "slices", "async", "counter", "instants", "device" };
  return (guint)kind < G_N_ELEMENTS (names) ? names[kind] : "unknown";
}

const char *
wick_track_describe_kind (const WickTrack *track)
{
  if (track->kind == WICK_TRACK_INSTANTS && track->role == WICK_INSTANTS_OBJECTS)
    return "objects";
  if (track->kind == WICK_TRACK_INSTANTS && track->role == WICK_INSTANTS_SAMPLES)
    return "samples";
  return wick_track_kind_to_string ((WickTrackKind)track->kind);
}

const char *
wick_trace_format_to_string (WickTraceFormat format)
{
  return format == WICK_TRACE_FORMAT_CHROME ? "chrome" : "candle-graph";
}

gsize
wick_tracks_get_size (WickTracks *self)
{
  gsize size = 0;
  GArray *arrays[] = { self->processes, self->threads,  self->tracks,       self->async,
                       self->counters,  self->instants, self->device,       self->flows,
                       self->key_track, self->span_args, self->span_category,
                       self->flows_by_event, self->display_order };
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    if (arrays[i] != NULL)
      size += (gsize)arrays[i]->len * g_array_get_element_size (arrays[i]);
  if (self->index != NULL)
    for (guint t = 0; t < self->tracks->len; t++)
      for (guint r = 0; r < self->index[t].n_rows; r++)
        {
          const Row *row = &self->index[t].rows[r];
          size += row->pub.n_events * sizeof (guint32)
                  + ((row->pub.n_events + BLOCK - 1) / BLOCK) * sizeof (guint64);
          for (guint l = 0; l < row->n_all; l++)
            size += row->level_counts[l] * sizeof (WickTrackMip);
        }
  return size;
}

/* ---- candle-graph --------------------------------------------------------- */

void
wick_tracks_set_build_rows (WickTracks *self, guint16 *rows)
{
  g_free (self->build_rows);
  self->build_rows = rows;
  self->rows_are_depths = rows == NULL;
}

void
wick_tracks_set_rows_are_depths (WickTracks *self, gboolean depths)
{
  self->rows_are_depths = depths;
}

void
wick_tracks_note_slice (WickTracks *self, guint32 track, guint row)
{
  WickTrack *t = &g_array_index (self->tracks, WickTrack, track);
  t->n_events++;
  t->max_depth = (guint16)MAX (t->max_depth, MIN (row, G_MAXUINT16));
}

void
wick_tracks_add_device_slice (WickTracks *self, guint32 track, gint32 source, guint64 start,
                              guint64 duration, WickStr name, WickStr category)
{
  WickDeviceSlice d = { track, source, start, duration, name, category, 0 };
  d.launcher = G_MAXUINT32;
  g_array_append_val (self->device, d);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

void
wick_tracks_add_counter_sample (WickTracks *self, guint32 track, guint64 t, double value)
{
  WickCounterSample s = { track, t, value };
  g_array_append_val (self->counters, s);
  g_array_index (self->tracks, WickTrack, track).n_events++;
}

/* ---- incremental growth (a live candle-graph document) --------------------
 *
 * A whole build sorts each row by (start, longer first, index) and
 * summarises it level by level; an append keeps that exact state. New
 * events go at the end of their rows and must sort there; an event indexed
 * before whose end moved (an open span, closed or running on) is "dirty"
 * from its position. From the first dirty position p of a row: the order
 * is checked, the blocks' maxima recomputed from p's block, and each
 * level's entries recomputed from the bucket of p (level 0 from the raw
 * events of that bucket on, level L+1 from level L's entries of its
 * bucket's halves), since the entries before it summarise events that did
 * not change. A coarser zoom base (the extent grew) is the old levels less
 * the finer ones: level L at base b is level L+1 at base b/2; the finest
 * one dropped is kept hidden and updated like the others, so that a base
 * that turns finer again (the widest row grew faster than the extent) shows
 * it again (a row without one is summarised again from its events). Top
 * levels are added while the whole build's stop rule (one entry, or one
 * bucket over the extent) does not hold. */

void
wick_tracks_get_update_stats (WickTracks *self, WickTracksUpdateStats *stats)
{
  g_return_if_fail (self != NULL && stats != NULL);
  *stats = self->stats;
}

guint64
wick_tracks_get_build_serial (WickTracks *self)
{
  return self->build_serial;
}

guint64
wick_tracks_get_append_serial (WickTracks *self)
{
  return self->append_serial;
}

void
wick_tracks_note_device_renamed (WickTracks *self, guint32 slice)
{
  g_array_append_val (self->device_renamed, slice);
}

void
wick_tracks_note_device_renamed_all (WickTracks *self)
{
  self->device_renamed_all++;
}

const guint32 *
wick_tracks_get_device_renames (WickTracks *self, guint *n, guint *all)
{
  g_return_val_if_fail (self != NULL, NULL);
  if (n != NULL)
    *n = self->device_renamed->len;
  if (all != NULL)
    *all = self->device_renamed_all;
  return (const guint32 *)(void *)self->device_renamed->data;
}

gpointer
wick_tracks_get_live (WickTracks *self)
{
  return self->live;
}

void
wick_tracks_set_live (WickTracks *self, gpointer live, GDestroyNotify free_func)
{
  if (self->live != NULL && self->live_free != NULL)
    self->live_free (self->live);
  self->live = live;
  self->live_free = free_func;
}

gboolean
wick_tracks_is_stale (WickTracks *self)
{
  return self->format == WICK_TRACE_FORMAT_CANDLE_GRAPH
         && (self->built_records != self->doc->n_records + 1
             || self->built_finished != self->doc->finished);
}

void
wick_tracks_mark_current (WickTracks *self)
{
  self->built_records = self->doc->n_records + 1;
  self->built_finished = self->doc->finished;
}

void
wick_tracks_count_build (WickTracks *self)
{
  self->stats.builds++;
}

void
wick_tracks_count_append (WickTracks *self)
{
  self->stats.appends++;
}

void
wick_tracks_count_fallback (WickTracks *self, const char *why)
{
  self->stats.fallbacks++;
  self->stats.last_fallback = why;
}

void
wick_document_set_incremental_tracks (WickDocument *document, gboolean on)
{
  tracks_of (document)->incremental_off = !on;
}

gboolean
wick_document_get_incremental_tracks (WickDocument *document)
{
  return !tracks_of (document)->incremental_off;
}

const guint64 *
wick_tracks_row_block_max (WickTracks *self, guint32 track, guint row, guint *n)
{
  if (self->index == NULL || track >= self->tracks->len || row >= self->index[track].n_rows)
    {
      *n = 0;
      return NULL;
    }
  const Row *r = &self->index[track].rows[row];
  *n = (r->pub.n_events + BLOCK - 1) / BLOCK;
  return r->block_max;
}

void
wick_tracks_append_begin (WickTracks *self)
{
  g_return_if_fail (self->finished && self->index != NULL);
  self->finished = FALSE;
  self->append_async = self->async->len;
  self->append_counters = self->counters->len;
  self->append_instants = self->instants->len;
  self->append_device = self->device->len;
  g_array_set_size (self->append_dirty, 0);
}

void
wick_tracks_append_dirty_span (WickTracks *self, guint32 span)
{
  g_array_append_val (self->append_dirty, span);
}

/* What one append does to one row. */
typedef struct
{
  guint first_dirty; /* position of its first dirty event, G_MAXUINT when none */
  GArray *added;     /* guint32: its new events, in index order */
} RowChange;

static void
row_change_free (gpointer p)
{
  RowChange *c = p;
  if (c->added != NULL)
    g_array_unref (c->added);
  g_free (c);
}

static RowChange *
row_change (GHashTable *changes, guint32 track, guint row)
{
  guint64 key = ((guint64)track << 32) | row;
  RowChange *c = g_hash_table_lookup (changes, &key);
  if (c == NULL)
    {
      c = g_new0 (RowChange, 1);
      c->first_dirty = G_MAXUINT;
      g_hash_table_insert (changes, g_memdup2 (&key, sizeof key), c);
    }
  return c;
}

static void
row_change_add (GHashTable *changes, guint32 track, guint row, guint32 event)
{
  RowChange *c = row_change (changes, track, row);
  if (c->added == NULL)
    c->added = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_append_val (c->added, event);
}

/* Grows @*p (elements of @size, room for @*cap) to hold @need. */
static void
ensure_room (gpointer *p, guint *cap, guint need, gsize size)
{
  if (need <= *cap)
    return;
  guint n = MAX (*cap, 1);
  while (n < need)
    n = n > G_MAXUINT / 2 ? need : n * 2;
  *p = g_realloc_n (*p, n, size);
  *cap = n;
}

/* (start, end, index) of @a sorts before that of @b as a whole build sorts a row. */
static gboolean
sorts_before (WickTracks *self, guint kind, guint32 a, guint32 b)
{
  guint64 sa = event_start (self, kind, a), sb = event_start (self, kind, b);
  if (sa != sb)
    return sa < sb;
  guint64 ea = event_end (self, kind, a), eb = event_end (self, kind, b);
  if (ea != eb)
    return ea > eb;
  return a < b;
}

/* Position of @event in @row (sorted by start), G_MAXUINT when absent. */
static guint
row_position (WickTracks *self, const Row *row, guint32 event)
{
  guint kind = row->pub.event_kind;
  guint64 s = event_start (self, kind, event);
  guint lo = 0, hi = row->pub.n_events;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (event_start (self, kind, row->pub.events[mid]) < s)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (guint i = lo; i < row->pub.n_events && event_start (self, kind, row->pub.events[i]) == s;
       i++)
    if (row->pub.events[i] == event)
      return i;
  return G_MAXUINT;
}

static inline double
mip_weight (WickTracks *self, guint kind, guint32 event)
{
  if (kind == WICK_EVENT_COUNTER)
    return event_weight (self, kind, event);
  return (double)(event_end (self, kind, event) - event_start (self, kind, event));
}

/* Frees the @k finest levels. */
static void
row_drop_levels (Row *row, guint k)
{
  k = MIN (k, row->n_all);
  for (guint l = 0; l < k; l++)
    g_free (row->levels[l]);
  guint left = row->n_all - k;
  memmove (row->levels, row->levels + k, left * sizeof (WickTrackMip *));
  memmove (row->level_counts, row->level_counts + k, left * sizeof (guint));
  memmove (row->level_caps, row->level_caps + k, left * sizeof (guint));
  row->n_all = left;
}

static void
row_add_level (Row *row)
{
  if (row->n_all == row->level_slots)
    {
      guint slots = MAX (row->level_slots * 2, 4);
      row->levels = g_renew (WickTrackMip *, row->levels, slots);
      row->level_counts = g_renew (guint, row->level_counts, slots);
      row->level_caps = g_renew (guint, row->level_caps, slots);
      row->level_slots = slots;
    }
  guint l = row->n_all++;
  row->levels[l] = g_new (WickTrackMip, 1);
  row->level_counts[l] = 0;
  row->level_caps[l] = 1;
}

/* Recomputes @row's levels (the hidden ones too) from its event at
 * position @from (n_events: none changed) and adds or drops top levels by
 * the whole build's stop rule. */
static void
row_update_levels (WickTracks *self, Row *row, guint from)
{
  guint n = row->pub.n_events, kind = row->pub.event_kind;
  const guint32 *events = row->pub.events;
  guint finest = self->base_shift - row->hidden;
  /* the first bucket (at the current level) whose entries are recomputed */
  guint64 bucket_from = G_MAXUINT64;
  if (from < n)
    bucket_from = (event_start (self, kind, events[from]) - self->start_ns) >> finest;
  for (guint level = 0; level < 64; level++)
    {
      guint shift = finest + level;
      if (level >= row->n_all)
        {
          row_add_level (row);
          bucket_from = 0; /* a new level: all of it */
        }
      else if (level > 0 && bucket_from != G_MAXUINT64)
        bucket_from >>= 1;
      if (bucket_from != G_MAXUINT64)
        {
          WickTrackMip *entries = row->levels[level];
          guint count = row->level_counts[level];
          while (count > 0 && entries[count - 1].bucket >= bucket_from)
            count--;
          guint cap = level == 0 ? n : row->level_counts[level - 1];
          guint first = 0;
          if (level == 0)
            {
              /* the raw events of bucket_from on */
              first = MIN (from, n);
              while (first > 0
                     && ((event_start (self, kind, events[first - 1]) - self->start_ns) >> shift)
                          >= bucket_from)
                first--;
            }
          else
            {
              const WickTrackMip *below = row->levels[level - 1];
              first = cap;
              while (first > 0 && (below[first - 1].bucket >> 1) >= bucket_from)
                first--;
            }
          ensure_room ((gpointer *)&row->levels[level], &row->level_caps[level],
                       count + (cap - first), sizeof (WickTrackMip));
          entries = row->levels[level];
          double last_w = 0;
          guint fresh = count; /* entries from here on were made in this pass */
          for (guint i = first; i < cap; i++)
            {
              guint32 ev, bucket;
              if (level == 0)
                {
                  ev = events[i];
                  bucket = (guint32)((event_start (self, kind, ev) - self->start_ns) >> shift);
                }
              else
                {
                  ev = row->levels[level - 1][i].event;
                  bucket = row->levels[level - 1][i].bucket >> 1;
                }
              double weight = mip_weight (self, kind, ev);
              if (count > fresh && entries[count - 1].bucket == bucket)
                {
                  if (weight > last_w)
                    {
                      entries[count - 1].event = ev;
                      last_w = weight;
                    }
                  continue;
                }
              last_w = weight;
              entries[count++] = (WickTrackMip){ bucket, ev };
            }
          row->level_counts[level] = count;
        }
      if (level >= row->hidden
          && (row->level_counts[level] <= 1 || ((self->end_ns - self->start_ns) >> shift) == 0))
        {
          for (guint l = level + 1; l < row->n_all; l++)
            g_free (row->levels[l]);
          row->n_all = level + 1;
          break;
        }
    }
}

typedef struct
{
  WickTracks *self;
  guint kind;
} SortContext;

static int
compare_canonical (gconstpointer a, gconstpointer b, gpointer data)
{
  const SortContext *c = data;
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  if (x == y)
    return 0;
  return sorts_before (c->self, c->kind, x, y) ? -1 : 1;
}

/* Puts the @n_added events after the row's first @old_n in their places
 * (the whole build's order: samples of two threads may come out of time
 * order) and returns the first position that moved. */
static guint
merge_added (WickTracks *self, Row *row, guint old_n, guint n_added)
{
  guint kind = row->pub.event_kind;
  guint32 *events = (guint32 *)row->pub.events;
  SortContext context = { self, kind };
  g_qsort_with_data (events + old_n, (gint)n_added, sizeof (guint32), compare_canonical, &context);
  if (old_n == 0 || sorts_before (self, kind, events[old_n - 1], events[old_n]))
    return old_n;
  guint lo = 0, hi = old_n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (sorts_before (self, kind, events[old_n], events[mid]))
        hi = mid;
      else
        lo = mid + 1;
    }
  guint n_tail = old_n - lo;
  g_autofree guint32 *tail = g_memdup2 (events + lo, n_tail * sizeof (guint32));
  g_autofree guint32 *fresh = g_memdup2 (events + old_n, n_added * sizeof (guint32));
  guint a = 0, b = 0, k = lo;
  while (a < n_tail && b < n_added)
    events[k++] = sorts_before (self, kind, fresh[b], tail[a]) ? fresh[b++] : tail[a++];
  while (a < n_tail)
    events[k++] = tail[a++];
  while (b < n_added)
    events[k++] = fresh[b++];
  return lo;
}

/* Adds @added to @row in their places and brings its order check, blocks
 * and levels up to date from @first_dirty or the first position that moved.
 * FALSE when the result would not sort as a whole build sorts it (an
 * indexed event whose end moved past a neighbour of the same start). */
#define HIDDEN_LEVELS_MAX 1

static gboolean
row_append (WickTracks *self, Row *row, GArray *added, guint first_dirty, int base_change)
{
  guint old_n = row->pub.n_events, kind = row->pub.event_kind;
  guint n_added = added ? added->len : 0;
  guint n = old_n + n_added;
  if (n_added > 0)
    {
      guint cap = row->capacity;
      ensure_room ((gpointer *)&row->pub.events, &row->capacity, n, sizeof (guint32));
      if (row->capacity != cap)
        row->block_max = g_renew (guint64, row->block_max, (row->capacity + BLOCK - 1) / BLOCK);
      memcpy ((guint32 *)row->pub.events + old_n, added->data, n_added * sizeof (guint32));
      row->pub.n_events = n;
    }
  guint from = MIN (first_dirty, old_n);
  if (n_added > 0)
    {
      guint moved = merge_added (self, row, old_n, n_added); /* once: MIN evaluates twice */
      from = MIN (from, moved);
    }
  const guint32 *events = row->pub.events;
  for (guint i = MAX (from, 1); i < n; i++)
    if (!sorts_before (self, kind, events[i - 1], events[i]))
      return FALSE;
  if (from < n)
    {
      guint b = from >> BLOCK_SHIFT;
      guint64 running = b > 0 ? row->block_max[b - 1] : 0;
      for (guint i = b << BLOCK_SHIFT; i < n; i++)
        {
          running = MAX (running, event_end (self, kind, events[i]));
          if ((i & (BLOCK - 1)) == BLOCK - 1 || i == n - 1)
            row->block_max[i >> BLOCK_SHIFT] = running;
        }
    }
  /* the levels keep their bucket widths: a coarser base hides the finer
   * ones (at most HIDDEN_LEVELS_MAX kept), a finer one shows them again */
  if (base_change > 0)
    {
      row->hidden += (guint)base_change;
      if (row->hidden > HIDDEN_LEVELS_MAX)
        {
          row_drop_levels (row, row->hidden - HIDDEN_LEVELS_MAX);
          row->hidden = HIDDEN_LEVELS_MAX;
        }
    }
  else if (base_change < 0)
    {
      if (row->hidden >= (guint)-base_change)
        row->hidden -= (guint)-base_change;
      else
        {
          /* finer than kept: this row's summary again, from its events */
          row_drop_levels (row, row->n_all);
          row->hidden = 0;
          from = 0;
        }
    }
  row_update_levels (self, row, from);
  row->pub.levels = (const WickTrackMip *const *)(row->levels + row->hidden);
  row->pub.level_counts = row->level_counts + row->hidden;
  row->pub.n_levels = row->n_all - row->hidden;
  return TRUE;
}

static guint
track_rows_wanted (const WickTrack *track)
{
  return (track->kind == WICK_TRACK_SLICES || track->kind == WICK_TRACK_ASYNC
          || track->kind == WICK_TRACK_DEVICE)
           ? (guint)track->max_depth + 1
           : 1;
}

/* New tracks and rows get empty rows, summarised as a whole build
 * summarises an empty row (their events come as appends). */
static void
grow_index (WickTracks *self)
{
  guint nt = self->tracks->len;
  if (nt > self->n_indexed_tracks)
    {
      self->index = g_renew (TrackIndex, self->index, MAX (nt, 1));
      memset (self->index + self->n_indexed_tracks, 0,
              (nt - self->n_indexed_tracks) * sizeof (TrackIndex));
    }
  for (guint t = 0; t < nt; t++)
    {
      const WickTrack *track = &g_array_index (self->tracks, WickTrack, t);
      TrackIndex *ti = &self->index[t];
      guint want = track_rows_wanted (track);
      if (want <= ti->n_rows)
        continue;
      ti->rows = g_renew (Row, ti->rows, want);
      memset (ti->rows + ti->n_rows, 0, (want - ti->n_rows) * sizeof (Row));
      for (guint r = ti->n_rows; r < want; r++)
        {
          Row *row = &ti->rows[r];
          row->pub.event_kind = track_event_kind (track);
          row->pub.events = g_new (guint32, 1);
          row->capacity = 1;
          row->block_max = g_new (guint64, 1);
          row->levels = g_new (WickTrackMip *, 1);
          row->level_counts = g_new (guint, 1);
          row->level_caps = g_new (guint, 1);
          row->level_slots = 1;
          row->pub.changed = self->append_serial + 1;
        }
      ti->n_rows = want;
    }
  self->n_indexed_tracks = nt;
}

static void
extent_add (guint64 *start, guint64 *end, guint64 s, guint64 e)
{
  *start = MIN (*start, s);
  *end = MAX (*end, e);
}

/* The extent with what was added and what moved, as compute_extent()
 * would find it now; FALSE when its start moved (every bucket would). */
static gboolean
append_extent (WickTracks *self, const char **why)
{
  guint64 start = G_MAXUINT64, end = self->raw_end;
  const WickSpan *spans = spans_of (self);
  for (guint i = self->n_indexed_spans; i < self->doc->spans->len; i++)
    extent_add (&start, &end, spans[i].start_ns,
                spans[i].start_ns
                  + ((spans[i].flags & WICK_SPAN_FLAG_CLOSED) ? spans[i].duration_ns : 0));
  for (guint k = 0; k < self->append_dirty->len; k++)
    {
      const WickSpan *s = &spans[g_array_index (self->append_dirty, guint32, k)];
      if (s->flags & WICK_SPAN_FLAG_CLOSED)
        end = MAX (end, s->start_ns + s->duration_ns);
    }
  for (guint i = self->append_async; i < self->async->len; i++)
    {
      const WickAsyncSlice *a = &g_array_index (self->async, WickAsyncSlice, i);
      extent_add (&start, &end, a->start_ns, a->start_ns + a->duration_ns);
    }
  for (guint i = self->append_counters; i < self->counters->len; i++)
    {
      guint64 t = g_array_index (self->counters, WickCounterSample, i).timestamp_ns;
      extent_add (&start, &end, t, t);
    }
  for (guint i = self->append_instants; i < self->instants->len; i++)
    {
      guint64 t = g_array_index (self->instants, WickInstant, i).timestamp_ns;
      extent_add (&start, &end, t, t);
    }
  for (guint i = self->append_device; i < self->device->len; i++)
    {
      const WickDeviceSlice *d = &g_array_index (self->device, WickDeviceSlice, i);
      extent_add (&start, &end, d->start_ns, d->start_ns + d->duration_ns);
    }
  if (self->format == WICK_TRACE_FORMAT_CANDLE_GRAPH)
    end = MAX (end, wick_document_get_end_ns (self->doc));
  if (self->extent_any && start < self->start_ns)
    {
      *why = "an event starts before the model's start";
      return FALSE;
    }
  if (!self->extent_any && start != G_MAXUINT64)
    {
      /* the first events: every row was empty, nothing is summarised yet */
      self->start_ns = start;
      self->extent_any = TRUE;
    }
  self->raw_end = end;
  self->end_ns = MAX (end, self->start_ns + 1);
  return TRUE;
}

static void
collect_changes (WickTracks *self, GHashTable *changes, const guint16 *span_rows)
{
  const WickSpan *spans = spans_of (self);
  for (guint i = self->n_indexed_spans; i < self->doc->spans->len; i++)
    {
      guint32 t = wick_tracks_span_track (self, i);
      guint r = span_rows ? span_rows[i] : spans[i].depth;
      if (t != G_MAXUINT32 && r < self->index[t].n_rows)
        row_change_add (changes, t, r, i);
    }
  for (guint i = self->append_async; i < self->async->len; i++)
    {
      guint32 t = async_track_of (self, i);
      if (t != G_MAXUINT32 && async_row_of (self, i) < self->index[t].n_rows)
        row_change_add (changes, t, async_row_of (self, i), i);
    }
  for (guint i = self->append_counters; i < self->counters->len; i++)
    row_change_add (changes, counter_track_of (self, i), 0, i);
  for (guint i = self->append_instants; i < self->instants->len; i++)
    row_change_add (changes, instant_track_of (self, i), 0, i);
  for (guint i = self->append_device; i < self->device->len; i++)
    {
      guint32 t = device_track_of (self, i);
      if (device_row_of (self, i) < self->index[t].n_rows)
        row_change_add (changes, t, device_row_of (self, i), i);
    }
}

static gboolean
mark_dirty (WickTracks *self, GHashTable *changes, const guint16 *span_rows, const char **why)
{
  const WickSpan *spans = spans_of (self);
  for (guint k = 0; k < self->append_dirty->len; k++)
    {
      guint32 span = g_array_index (self->append_dirty, guint32, k);
      guint32 t = wick_tracks_span_track (self, span);
      guint r = span_rows ? span_rows[span] : spans[span].depth;
      if (t == G_MAXUINT32 || r >= self->index[t].n_rows)
        continue;
      guint at = row_position (self, &self->index[t].rows[r], span);
      if (at == G_MAXUINT)
        {
          *why = "an open span is not in its row";
          return FALSE;
        }
      RowChange *c = row_change (changes, t, r);
      c->first_dirty = MIN (c->first_dirty, at);
    }
  return TRUE;
}

/* Counter tracks' extents with their new samples (@old_n: the row's samples before). */
static void
counter_extent_add (WickTracks *self, guint32 track, guint old_n, GArray *added)
{
  WickTrack *t = &g_array_index (self->tracks, WickTrack, track);
  for (guint k = 0; k < added->len; k++)
    {
      double v
        = g_array_index (self->counters, WickCounterSample, g_array_index (added, guint32, k))
            .value;
      if (old_n == 0 && k == 0)
        t->min = t->max = v;
      t->min = MIN (t->min, v);
      t->max = MAX (t->max, v);
    }
}

gboolean
wick_tracks_append_end (WickTracks *self, const guint16 *span_rows, const char **why)
{
  g_return_val_if_fail (!self->finished && self->index != NULL, FALSE);
  self->finished = TRUE;
  advise_huge_pages (self);
  if (!append_extent (self, why))
    return FALSE;
  grow_index (self);
  g_autoptr (GHashTable) changes
    = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, row_change_free);
  collect_changes (self, changes, span_rows);
  if (!mark_dirty (self, changes, span_rows, why))
    return FALSE;

  guint nt = self->tracks->len, widest = 1;
  for (guint t = 0; t < nt; t++)
    for (guint r = 0; r < self->index[t].n_rows; r++)
      {
        guint64 key = ((guint64)t << 32) | r;
        RowChange *c = g_hash_table_lookup (changes, &key);
        widest
          = MAX (widest, self->index[t].rows[r].pub.n_events + (c && c->added ? c->added->len : 0));
      }
  guint old_shift = self->base_shift;
  choose_base (self, widest);
  int base_change = (int)self->base_shift - (int)old_shift;
  guint64 serial = self->append_serial + 1;
  for (guint t = 0; t < nt; t++)
    for (guint r = 0; r < self->index[t].n_rows; r++)
      {
        Row *row = &self->index[t].rows[r];
        guint64 key = ((guint64)t << 32) | r;
        RowChange *c = g_hash_table_lookup (changes, &key);
        guint old_n = row->pub.n_events;
        if (!row_append (self, row, c ? c->added : NULL, c ? c->first_dirty : G_MAXUINT,
                         base_change))
          {
            static const char *const kinds[] = {
              [WICK_EVENT_NONE] = "an event would not sort last in its row",
              [WICK_EVENT_SLICE] = "a span would not sort last in its row",
              [WICK_EVENT_ASYNC] = "an async slice would not sort last in its row",
              [WICK_EVENT_COUNTER] = "a counter sample would not sort last in its row",
              [WICK_EVENT_INSTANT] = "an instant would not sort last in its row",
              [WICK_EVENT_DEVICE] = "a device interval would not sort last in its row",
            };
            *why = kinds[row->pub.event_kind <= WICK_EVENT_DEVICE ? row->pub.event_kind : 0];
            return FALSE;
          }
        if (c != NULL || base_change != 0)
          row->pub.changed = serial;
        if (c != NULL && c->added != NULL && row->pub.event_kind == WICK_EVENT_COUNTER)
          counter_extent_add (self, t, old_n, c->added);
      }
  self->n_indexed_spans = self->doc->spans->len;
  self->append_serial = serial;

  g_array_set_size (self->display_order, nt);
  for (guint t = 0; t < nt; t++)
    g_array_index (self->display_order, guint32, t) = t;
  g_qsort_with_data (self->display_order->data, (gint)nt, sizeof (guint32), compare_order, self);
  return TRUE;
}
