/* wick-tracks-candle.c — a candle-graph document on the track model.
 *
 * One process (pid 0, named after the meta's entrypoint). Host spans go on
 * the slices track of the thread that recorded them: a span_start carrying
 * "wick_thread": N (libwick's extension mode) goes on thread N, named from
 * its {"kind":"wick_thread",...} record; a span without it goes on one
 * "host" thread track, as a strict trace/10 file has no thread identity. A
 * span's row on its track is its depth counted from its nearest ancestor on
 * another track (its depth when all are on one thread), so open spans of a
 * cut-off trace keep their depths: parents are resolved whether or not the
 * document finished.
 *
 * Device intervals go on one device track per (device, stream_id), named
 * after their span's first op (the span's name when it has no op). Memory:
 * one counter per device with the live bytes of all categories after each
 * memory event (the Memory view's total), and one per device_memory field
 * present (used, reserved, capacity, free), as the Memory view reads them.
 * Other wick_ extension records (wick_mark, weight evict/restore, stage
 * certifications) are instants of the process named by their label or kind,
 * with the whole record as args; a record that is not a JSON object is counted
 * skipped. What is read of a Wick record was decoded when it was committed
 * (WickExtensionRecord's typed fields).
 *
 * A live document (not finished) keeps a CandleLive beside its model after
 * a whole build, and the next wick_document_get_tracks() appends what was
 * committed since (live_append): the same builder calls in the same order
 * as a whole build makes them for those records, so the model comes out
 * the same, but for the index of a track made after tracks a whole build
 * makes later (a new thread, stream or the first Wick record's track: it
 * is appended, and shown where a whole build shows it). Where the order of
 * a whole build cannot be kept by appending (a thread record after a
 * thread made from spans; a memory device or device memory series that a
 * whole build would place before counters already made; a memory event
 * earlier than the last; a parent that arrives after children already
 * appended, or a parent cycle among the new spans; a repeated span id), the
 * append gives up with a reason and the model is rebuilt whole, counted
 * (wick_tracks_get_update_stats()); the appends go on after that build. A
 * parent after its child, in a build or inside one append (a reader that
 * lost a span's start writes it at the span's end), is appended. An op or
 * device interval gets its span when the live analysis resolves it: the
 * intervals named before that are renamed then.
 */
#include "config.h"

#include "wick-tracks-private.h"
#include "wick-health.h"
#include "wick-memory-series.h"

#include <string.h>

typedef struct
{
  guint32 number; /* wick_thread N */
  gint64 os_tid;
  char *name;
} ThreadRecord;

static void
thread_record_clear (gpointer p)
{
  g_free (((ThreadRecord *)p)->name);
}

/* A Wick record other than a thread name (a mark, a weight move, a stage
 * verdict) as an instant of @process, named by its label or kind, the whole
 * record as its args; a record that is not a JSON object is counted
 * skipped. The record's facts were decoded when it was committed. FALSE for
 * a wick_thread record: the caller's, which the whole build and the live
 * append read differently. */
static gboolean
add_record_instant (WickDocument *doc, WickTracks *self, const WickExtensionRecord *ext,
                    guint32 process)
{
  const char *kind = wick_document_str (doc, ext->kind);
  if (!(ext->flags & WICK_EXTENSION_OBJECT))
    {
      g_autofree char *construct = g_strdup_printf ("%s record not JSON", kind);
      wick_tracks_skip (self, construct, 1);
      return TRUE;
    }
  if (strcmp (kind, "wick_thread") == 0)
    return FALSE;
  WickStr name = ext->label != 0 ? wick_tracks_intern (self, wick_document_str (doc, ext->label),
                                                       wick_document_str_len (doc, ext->label))
                                 : ext->kind;
  wick_tracks_instant_add (self, WICK_INSTANT_SCOPE_PROCESS, (gint32)process, -1,
                           (gint64)ext->timestamp_ns, name, ext->kind, ext->json);
  return TRUE;
}

static GArray *
read_thread_records (WickDocument *doc, WickTracks *self)
{
  GArray *records = g_array_new (FALSE, TRUE, sizeof (ThreadRecord));
  g_array_set_clear_func (records, thread_record_clear);
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (doc, &n);
  for (guint i = 0; i < n; i++)
    {
      if (add_record_instant (doc, self, &ext[i], 0))
        continue;
      if (ext[i].thread == 0)
        {
          wick_tracks_skip (self, "wick_thread record without a thread number", 1);
          continue;
        }
      ThreadRecord r = { ext[i].thread, 0, NULL };
      r.os_tid = (ext[i].flags & WICK_EXTENSION_HAS_OS_TID) ? ext[i].os_tid : r.number;
      if (ext[i].name != 0)
        r.name = g_strndup (wick_document_str (doc, ext[i].name),
                            wick_document_str_len (doc, ext[i].name));
      g_array_append_val (records, r);
    }
  return records;
}

static WickStr
intern (WickTracks *self, const char *s)
{
  return wick_tracks_intern (self, s, strlen (s));
}

void
wick_tracks_build_candle_graph (WickTracks *self)
{
  WickDocument *doc = wick_tracks_get_document (self);
  guint n_spans;
  wick_document_resolve_hierarchy (doc);
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);

  guint32 process = wick_tracks_add_process (self, 0); /* index 0 */
  const char *entrypoint = wick_document_get_entrypoint (doc);
  wick_tracks_set_process_name (self, process,
                                intern (self, entrypoint && *entrypoint ? entrypoint : "host"));

  /* Threads: numbered by wick_thread records; 0 is the host thread. */
  g_autoptr (GArray) records = read_thread_records (doc, self);
  g_autoptr (GHashTable) by_number = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < records->len; i++)
    {
      const ThreadRecord *r = &g_array_index (records, ThreadRecord, i);
      if (g_hash_table_contains (by_number, GUINT_TO_POINTER (r->number)))
        continue;
      guint32 thread = wick_tracks_add_thread (self, process, r->os_tid);
      g_autofree char *fallback = g_strdup_printf ("thread %u", r->number);
      wick_tracks_set_thread_name (self, thread, intern (self, r->name ? r->name : fallback));
      wick_tracks_set_thread_sort_index (self, thread, (gint32)r->number);
      g_hash_table_insert (by_number, GUINT_TO_POINTER (r->number), GUINT_TO_POINTER (thread + 1));
    }

  /* Each thread number seen on a span gets its track; 0 is the host. The
   * per-key table is small (thread numbers are 16-bit). */
  guint32 *key_track = g_new (guint32, G_MAXUINT16 + 1);
  for (guint k = 0; k <= G_MAXUINT16; k++)
    key_track[k] = G_MAXUINT32;
  guint n_keys = 0;
  for (guint i = 0; i < n_spans; i++)
    {
      guint16 number = spans[i].thread;
      if (key_track[number] != G_MAXUINT32)
        continue;
      guint32 thread_plus_1
        = number ? GPOINTER_TO_UINT (g_hash_table_lookup (by_number, GUINT_TO_POINTER (number))) : 0;
      if (number != 0 && thread_plus_1 == 0)
        {
          /* A thread number without its record: still its own thread. */
          guint32 thread = wick_tracks_add_thread (self, process, number);
          g_autofree char *name = g_strdup_printf ("thread %u", number);
          wick_tracks_set_thread_name (self, thread, intern (self, name));
          wick_tracks_set_thread_sort_index (self, thread, (gint32)number);
          thread_plus_1 = thread + 1;
        }
      if (number == 0)
        {
          guint32 thread = wick_tracks_add_thread (self, process, 0);
          wick_tracks_set_thread_name (self, thread, intern (self, "host"));
          thread_plus_1 = thread + 1;
        }
      key_track[number] = wick_tracks_thread_slices_track (self, thread_plus_1 - 1);
      wick_tracks_map_thread_key (self, number, key_track[number]);
      n_keys++;
    }

  /* Rows: depth below the nearest ancestor on another track; with one track
   * the depths themselves. Parents are resolved (acyclic), so each walk
   * ends; rows are memoised. */
  if (n_keys <= 1)
    {
      for (guint i = 0; i < n_spans; i++)
        wick_tracks_note_slice (self, key_track[spans[i].thread], spans[i].depth);
    }
  else
    {
      guint16 *row = g_new (guint16, MAX (n_spans, 1));
      guint8 *done = g_new0 (guint8, MAX (n_spans, 1));
      g_autoptr (GArray) walk = g_array_new (FALSE, FALSE, sizeof (guint32));
      for (guint i = 0; i < n_spans; i++)
        {
          guint32 j = i;
          g_array_set_size (walk, 0);
          while (!done[j])
            {
              gint32 p = spans[j].parent;
              if (p < 0 || spans[p].thread != spans[j].thread)
                {
                  row[j] = 0;
                  done[j] = 1;
                  break;
                }
              g_array_append_val (walk, j);
              j = (guint32)p;
            }
          for (gint k = (gint)walk->len - 1; k >= 0; k--)
            {
              guint32 s = g_array_index (walk, guint32, k);
              row[s] = (guint16)MIN (row[spans[s].parent] + 1u, G_MAXUINT16);
              done[s] = 1;
            }
        }
      g_free (done);
      for (guint i = 0; i < n_spans; i++)
        wick_tracks_note_slice (self, key_track[spans[i].thread], row[i]);
      wick_tracks_set_build_rows (self, row);
    }
  g_free (key_track);

  /* Device intervals, named after their span's first op. */
  guint n_ops, n_intervals;
  const WickOp *ops = wick_document_get_ops (doc, &n_ops);
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (doc, &n_intervals);
  if (n_intervals > 0)
    {
      WickStr *op_of = g_new0 (WickStr, MAX (n_spans, 1));
      for (guint i = 0; i < n_ops; i++)
        if (ops[i].span >= 0 && op_of[ops[i].span] == 0)
          op_of[ops[i].span] = ops[i].op_name;
      for (guint i = 0; i < n_intervals; i++)
        {
          const WickDeviceInterval *d = &intervals[i];
          guint32 track = wick_tracks_device_track (self, (gint32)process, d->device, d->stream_id, 0);
          WickStr name = 0;
          if (d->span >= 0)
            name = op_of[d->span] ? op_of[d->span] : spans[d->span].name;
          if (name == 0)
            name = d->span_id;
          wick_tracks_add_device_slice (self, track, (gint32)i, d->start_ns, d->duration_ns, name,
                                        d->backend);
        }
      g_free (op_of);
    }

  /* Memory totals and device memory as counters. */
  g_autoptr (GPtrArray) memory = wick_memory_series_build (doc);
  for (guint s = 0; s < memory->len; s++)
    {
      const WickMemorySeries *series = g_ptr_array_index (memory, s);
      g_autofree char *name
        = g_strdup_printf ("memory %s", wick_document_str (doc, series->device));
      guint32 track = wick_tracks_counter_track (self, (gint32)process, intern (self, name));
      wick_tracks_counter_set_unit (self, track, WICK_COUNTER_UNIT_BYTES);
      for (guint p = 0; p < series->points->len; p++)
        {
          const WickMemoryPoint *point = &g_array_index (series->points, WickMemoryPoint, p);
          guint64 total = 0;
          for (guint c = 0; c < WICK_N_CATEGORIES; c++)
            total += point->live[c];
          wick_tracks_add_counter_sample (self, track, point->t_ns, (double)total);
        }
    }
  g_autoptr (GPtrArray) device_memory = wick_device_memory_series_build (doc);
  for (guint s = 0; s < device_memory->len; s++)
    {
      const WickDeviceMemorySeries *series = g_ptr_array_index (device_memory, s);
      for (guint k = 0; k < WICK_N_DEVICE_SERIES; k++)
        {
          if (series->series[k]->len == 0)
            continue;
          g_autofree char *name
            = g_strdup_printf ("device memory %s %s", wick_document_str (doc, series->device),
                               wick_device_series_to_string ((WickDeviceSeriesKind)k));
          guint32 track = wick_tracks_counter_track (self, (gint32)process, intern (self, name));
          wick_tracks_counter_set_unit (self, track, WICK_COUNTER_UNIT_BYTES);
          for (guint p = 0; p < series->series[k]->len; p++)
            {
              const WickSamplePoint *point = &g_array_index (series->series[k], WickSamplePoint, p);
              wick_tracks_add_counter_sample (self, track, point->t_ns, (double)point->value);
            }
        }
    }

  wick_tracks_finish (self);
}

/* ---- live: appending what a growing document committed ------------------- */

/* A whole build makes the memory counters before the device memory ones;
 * counters of a process are shown in the order they were made. (A new
 * thread, stream or Wick-record track is appended after the others: it
 * may then have another index than in a whole build, but it is shown in
 * the same place, since threads, streams and instants are shown by their
 * own order, not by index.) */
enum
{
  PHASE_NONE,
  PHASE_MEMORY,
  PHASE_DEVICE_MEMORY,
};

#define NO_OP G_MAXUINT32

typedef struct
{
  guint64 bytes;
  guint8 category;
} LiveAllocation;

typedef struct
{
  guint n_spans, n_ext, n_ops, n_intervals, n_memory, n_device_memory;
  guint32 process;
  GArray *rows;         /* guint16 per span: its row on its track */
  GArray *op_first;     /* guint32 per span: its first named op, NO_OP when none */
  GArray *has_interval; /* guint8 per span: an interval was named after it */
  GArray *open;         /* guint32: spans open at the last build */
  GArray *unresolved_ops, *unresolved_intervals; /* guint32: span_id set, span not yet resolved */
  GHashTable *missing_parents;                   /* WickStr: parent ids no span had */
  GHashTable *by_number;                         /* wick_thread number -> thread + 1 */
  guint32 *key_track; /* per thread number: its slices track, G_MAXUINT32 none */
  guint n_keys;
  guint n_record_threads;   /* threads made from wick_thread records (the first ones) */
  guint8 phase;             /* the latest phase a track was made in */
  gint64 device_memory_key; /* device order * 4 + series of the last device memory track */
  GHashTable *allocations;  /* (device << 32 | storage) -> LiveAllocation */
  GHashTable *totals;       /* device -> guint64[WICK_N_CATEGORIES] */
  GHashTable *memory_track; /* device -> track + 1 */
  gboolean any_memory;
  guint64 memory_last_ns;
  GHashTable *device_memory_order; /* device -> order + 1 */
  GHashTable *device_memory_track; /* order * 4 + series + 1 -> track + 1 */
} CandleLive;

static void
candle_live_free (gpointer p)
{
  CandleLive *live = p;
  g_array_unref (live->rows);
  g_array_unref (live->op_first);
  g_array_unref (live->has_interval);
  g_array_unref (live->open);
  g_array_unref (live->unresolved_ops);
  g_array_unref (live->unresolved_intervals);
  g_hash_table_unref (live->missing_parents);
  g_hash_table_unref (live->by_number);
  g_free (live->key_track);
  g_hash_table_unref (live->allocations);
  g_hash_table_unref (live->totals);
  g_hash_table_unref (live->memory_track);
  g_hash_table_unref (live->device_memory_order);
  g_hash_table_unref (live->device_memory_track);
  g_free (live);
}

static guint
track_phase (WickTracks *self, const WickTrack *t)
{
  if (t->kind != WICK_TRACK_COUNTER)
    return PHASE_NONE;
  return g_str_has_prefix (wick_document_str (wick_tracks_get_document (self), t->name),
                           "device memory ")
           ? PHASE_DEVICE_MEMORY
           : PHASE_MEMORY;
}

/* A counter track made now, in @phase: FALSE when a whole build would have
 * made it before counters that exist. */
static gboolean
note_new_track (CandleLive *live, guint phase)
{
  if (phase < live->phase)
    return FALSE;
  live->phase = (guint8)phase;
  return TRUE;
}

/* The rows of spans @from..@n as the whole build finds them (the rows before
 * @from kept): a parent may come after its child (a reader that lost a
 * span's start writes it at the span's end, after its children), so each
 * row is found by walking up to the nearest ancestor on another thread or
 * before @from, memoised. Parents are resolved (acyclic), so each walk ends. */
static void
span_rows (CandleLive *live, const WickSpan *spans, guint from, guint n)
{
  g_array_set_size (live->rows, n);
  guint16 *rows = (guint16 *)(gpointer)live->rows->data;
  g_autofree guint8 *done = g_new0 (guint8, MAX (n - from, 1));
  g_autoptr (GArray) walk = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = from; i < n; i++)
    {
      guint32 j = i;
      g_array_set_size (walk, 0);
      while (j >= from && !done[j - from])
        {
          gint32 p = spans[j].parent;
          if (p < 0 || spans[p].thread != spans[j].thread)
            {
              rows[j] = 0;
              done[j - from] = 1;
              break;
            }
          g_array_append_val (walk, j);
          j = (guint32)p;
        }
      for (gint k = (gint)walk->len - 1; k >= 0; k--)
        {
          guint32 s = g_array_index (walk, guint32, k);
          rows[s] = (guint16)MIN (rows[spans[s].parent] + 1u, G_MAXUINT16);
          done[s - from] = 1;
        }
    }
}

static void
grow_span_columns (CandleLive *live, guint n)
{
  guint old = live->op_first->len;
  g_array_set_size (live->op_first, n);
  g_array_set_size (live->has_interval, n);
  for (guint i = old; i < n; i++)
    {
      g_array_index (live->op_first, guint32, i) = NO_OP;
      g_array_index (live->has_interval, guint8, i) = 0;
    }
}

/* Op @i with its span resolved: is it that span's first named op now?
 * TRUE when a name changed for a span that named intervals already. */
static gboolean
note_op (CandleLive *live, const WickOp *ops, guint32 i)
{
  gint32 s = ops[i].span;
  if (s < 0 || (guint)s >= live->op_first->len || ops[i].op_name == 0)
    return FALSE;
  guint32 *first = &g_array_index (live->op_first, guint32, s);
  if (*first != NO_OP && *first < i)
    return FALSE;
  *first = i;
  return g_array_index (live->has_interval, guint8, s) != 0;
}

static WickStr
interval_name (CandleLive *live, const WickOp *ops, const WickSpan *spans,
               const WickDeviceInterval *d)
{
  WickStr name = 0;
  if (d->span >= 0 && (guint)d->span < live->op_first->len)
    {
      guint32 first = g_array_index (live->op_first, guint32, d->span);
      name = first != NO_OP ? ops[first].op_name : spans[d->span].name;
    }
  return name ? name : d->span_id;
}

static void
memory_replay (CandleLive *live, WickTracks *self, const WickMemoryEvent *m, guint32 track)
{
  gint64 key = (gint64)(((guint64)m->device << 32) | m->storage_id);
  LiveAllocation *allocation = g_hash_table_lookup (live->allocations, &key);
  guint64 *current = g_hash_table_lookup (live->totals, GUINT_TO_POINTER (m->device));
  if (current == NULL)
    {
      current = g_new0 (guint64, WICK_N_CATEGORIES);
      g_hash_table_insert (live->totals, GUINT_TO_POINTER (m->device), current);
    }
  if (m->action == WICK_MEMORY_ALLOC && allocation == NULL)
    {
      allocation = g_new (LiveAllocation, 1);
      allocation->bytes = m->bytes;
      allocation->category = m->category;
      g_hash_table_insert (live->allocations, g_memdup2 (&key, sizeof key), allocation);
      current[m->category] += m->bytes;
    }
  else if (m->action == WICK_MEMORY_FREE && allocation != NULL)
    {
      current[allocation->category] -= MIN (current[allocation->category], allocation->bytes);
      g_hash_table_remove (live->allocations, &key);
    }
  if (track != G_MAXUINT32)
    {
      guint64 total = 0;
      for (guint c = 0; c < WICK_N_CATEGORIES; c++)
        total += current[c];
      wick_tracks_add_counter_sample (self, track, m->timestamp_ns, (double)total);
    }
}

static int
compare_memory_time (gconstpointer a, gconstpointer b, gpointer events)
{
  guint64 x = ((const WickMemoryEvent *)events)[*(const guint32 *)a].timestamp_ns;
  guint64 y = ((const WickMemoryEvent *)events)[*(const guint32 *)b].timestamp_ns;
  if (x != y)
    return x < y ? -1 : 1;
  return *(const guint32 *)a < *(const guint32 *)b ? -1 : *(const guint32 *)a > *(const guint32 *)b;
}

/* Memory events @from.. in the (stable) time order of a whole build. */
static guint32 *
memory_order (const WickMemoryEvent *events, guint from, guint n)
{
  guint32 *order = g_new (guint32, MAX (n - from, 1));
  for (guint i = from; i < n; i++)
    order[i - from] = i;
  g_qsort_with_data (order, (gint)(n - from), sizeof (guint32), compare_memory_time,
                     (gpointer)events);
  return order;
}

static guint
device_memory_order (CandleLive *live, WickStr device)
{
  guint order
    = GPOINTER_TO_UINT (g_hash_table_lookup (live->device_memory_order, GUINT_TO_POINTER (device)));
  if (order == 0)
    {
      order = g_hash_table_size (live->device_memory_order) + 1;
      g_hash_table_insert (live->device_memory_order, GUINT_TO_POINTER (device),
                           GUINT_TO_POINTER (order));
    }
  return order - 1;
}

/* The present bit and the value of device memory series @k (WickDeviceSeriesKind). */
static const guint8 series_bit[WICK_N_DEVICE_SERIES]
  = { WICK_DEVICE_MEMORY_USED, WICK_DEVICE_MEMORY_RESERVED, WICK_DEVICE_MEMORY_CAPACITY,
      WICK_DEVICE_MEMORY_FREE };

static guint64
series_value (const WickDeviceMemorySample *s, guint k)
{
  const guint64 values[WICK_N_DEVICE_SERIES]
    = { s->used_bytes, s->reserved_bytes, s->capacity_bytes, s->free_bytes };
  return values[k];
}

/* The state a whole build leaves, for the appends after it. */
static CandleLive *
candle_live_new (WickTracks *self)
{
  WickDocument *doc = wick_tracks_get_document (self);
  CandleLive *live = g_new0 (CandleLive, 1);
  guint n_spans, n_ext, n_ops, n_intervals, n_memory, n_device_memory;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  const WickExtensionRecord *ext = wick_document_get_extensions (doc, &n_ext);
  const WickOp *ops = wick_document_get_ops (doc, &n_ops);
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (doc, &n_intervals);
  const WickMemoryEvent *memory = wick_document_get_memory (doc, &n_memory);
  const WickDeviceMemorySample *samples = wick_document_get_device_memory (doc, &n_device_memory);

  live->rows = g_array_new (FALSE, FALSE, sizeof (guint16));
  live->op_first = g_array_new (FALSE, FALSE, sizeof (guint32));
  live->has_interval = g_array_new (FALSE, FALSE, sizeof (guint8));
  live->open = g_array_new (FALSE, FALSE, sizeof (guint32));
  live->unresolved_ops = g_array_new (FALSE, FALSE, sizeof (guint32));
  live->unresolved_intervals = g_array_new (FALSE, FALSE, sizeof (guint32));
  live->missing_parents = g_hash_table_new (NULL, NULL);
  live->by_number = g_hash_table_new (NULL, NULL);
  live->key_track = g_new (guint32, G_MAXUINT16 + 1);
  for (guint k = 0; k <= G_MAXUINT16; k++)
    live->key_track[k] = G_MAXUINT32;
  live->allocations = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  live->totals = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  live->memory_track = g_hash_table_new (NULL, NULL);
  live->device_memory_order = g_hash_table_new (NULL, NULL);
  live->device_memory_track = g_hash_table_new (NULL, NULL);
  live->device_memory_key = -1;
  live->n_spans = n_spans;
  live->n_ext = n_ext;
  live->n_ops = n_ops;
  live->n_intervals = n_intervals;
  live->n_memory = n_memory;
  live->n_device_memory = n_device_memory;
  live->process = 0;

  for (guint i = 0; i < n_spans; i++)
    {
      if (spans[i].parent_id != 0 && wick_id_map_lookup (&doc->span_ids, spans[i].parent_id) < 0)
        g_hash_table_add (live->missing_parents, GUINT_TO_POINTER (spans[i].parent_id));
      if (!(spans[i].flags & WICK_SPAN_FLAG_CLOSED))
        g_array_append_val (live->open, i);
    }
  span_rows (live, spans, 0, n_spans);

  /* threads, as read_thread_records and the span loop made them */
  g_autoptr (GHashTable) record_threads = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < n_ext; i++)
    if ((ext[i].flags & WICK_EXTENSION_OBJECT) && ext[i].thread != 0
        && strcmp (wick_document_str (doc, ext[i].kind), "wick_thread") == 0
        && !g_hash_table_contains (live->by_number, GUINT_TO_POINTER (ext[i].thread)))
      {
        gint64 os_tid = (ext[i].flags & WICK_EXTENSION_HAS_OS_TID) ? ext[i].os_tid : ext[i].thread;
        guint32 thread = wick_tracks_add_thread (self, live->process, os_tid);
        g_hash_table_insert (live->by_number, GUINT_TO_POINTER (ext[i].thread),
                             GUINT_TO_POINTER (thread + 1));
        g_hash_table_add (record_threads, GUINT_TO_POINTER (thread));
      }
  live->n_record_threads = g_hash_table_size (record_threads);
  for (guint i = 0; i < n_spans; i++)
    if (live->key_track[spans[i].thread] == G_MAXUINT32)
      {
        live->key_track[spans[i].thread] = wick_tracks_span_track (self, i);
        live->n_keys++;
      }

  grow_span_columns (live, n_spans);
  for (guint i = 0; i < n_ops; i++)
    {
      if (ops[i].span < 0 && ops[i].span_id != 0)
        g_array_append_val (live->unresolved_ops, i);
      note_op (live, ops, i);
    }
  for (guint i = 0; i < n_intervals; i++)
    {
      if (intervals[i].span >= 0 && (guint)intervals[i].span < n_spans)
        g_array_index (live->has_interval, guint8, intervals[i].span) = 1;
      else if (intervals[i].span_id != 0)
        g_array_append_val (live->unresolved_intervals, i);
    }

  guint n_tracks;
  const WickTrack *tracks = wick_tracks_get_tracks (self, &n_tracks);
  for (guint t = 0; t < n_tracks; t++)
    live->phase = (guint8)MAX (live->phase, track_phase (self, &tracks[t]));

  g_autofree guint32 *order = memory_order (memory, 0, n_memory);
  for (guint k = 0; k < n_memory; k++)
    {
      const WickMemoryEvent *m = &memory[order[k]];
      memory_replay (live, self, m, G_MAXUINT32);
      live->any_memory = TRUE;
      live->memory_last_ns = MAX (live->memory_last_ns, m->timestamp_ns);
      if (!g_hash_table_contains (live->memory_track, GUINT_TO_POINTER (m->device)))
        {
          g_autofree char *name = g_strdup_printf ("memory %s", wick_document_str (doc, m->device));
          guint32 track
            = wick_tracks_counter_track (self, (gint32)live->process, intern (self, name));
          g_hash_table_insert (live->memory_track, GUINT_TO_POINTER (m->device),
                               GUINT_TO_POINTER (track + 1));
        }
    }
  for (guint i = 0; i < n_device_memory; i++)
    {
      guint order_of = device_memory_order (live, samples[i].device);
      for (guint k = 0; k < WICK_N_DEVICE_SERIES; k++)
        {
          if (!(samples[i].present & series_bit[k]))
            continue;
          gint64 key = (gint64)order_of * 4 + k;
          if (g_hash_table_contains (live->device_memory_track, GSIZE_TO_POINTER ((gsize)key + 1)))
            continue;
          g_autofree char *name
            = g_strdup_printf ("device memory %s %s", wick_document_str (doc, samples[i].device),
                               wick_device_series_to_string ((WickDeviceSeriesKind)k));
          guint32 track
            = wick_tracks_counter_track (self, (gint32)live->process, intern (self, name));
          g_hash_table_insert (live->device_memory_track, GSIZE_TO_POINTER ((gsize)key + 1),
                               GUINT_TO_POINTER (track + 1));
          live->device_memory_key = MAX (live->device_memory_key, key);
        }
    }
  return live;
}

/* The wick_ records committed since: thread names and the process's instants. */
static gboolean
append_extensions (CandleLive *live, WickTracks *self, const char **why)
{
  WickDocument *doc = wick_tracks_get_document (self);
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (doc, &n);
  for (guint i = live->n_ext; i < n; i++)
    {
      if (add_record_instant (doc, self, &ext[i], live->process))
        continue;
      if (ext[i].thread == 0)
        {
          wick_tracks_skip (self, "wick_thread record without a thread number", 1);
          continue;
        }
      if (g_hash_table_contains (live->by_number, GUINT_TO_POINTER (ext[i].thread)))
        continue;
      guint n_threads;
      wick_tracks_get_threads (self, &n_threads);
      if (n_threads != live->n_record_threads)
        {
          *why = "a thread record came after a thread of spans";
          return FALSE;
        }
      gint64 os_tid = (ext[i].flags & WICK_EXTENSION_HAS_OS_TID) ? ext[i].os_tid : ext[i].thread;
      guint32 thread = wick_tracks_add_thread (self, live->process, os_tid);
      if (thread < n_threads)
        {
          *why = "a thread record names a thread already known";
          return FALSE;
        }
      g_autofree char *fallback = g_strdup_printf ("thread %u", ext[i].thread);
      g_autofree char *named = ext[i].name != 0
                                 ? g_strndup (wick_document_str (doc, ext[i].name),
                                              wick_document_str_len (doc, ext[i].name))
                                 : NULL;
      wick_tracks_set_thread_name (self, thread, intern (self, named ? named : fallback));
      wick_tracks_set_thread_sort_index (self, thread, (gint32)ext[i].thread);
      g_hash_table_insert (live->by_number, GUINT_TO_POINTER (ext[i].thread),
                           GUINT_TO_POINTER (thread + 1));
      live->n_record_threads++;
    }
  return TRUE;
}

/* Parents and depths of the spans committed since, as
 * wick_document_resolve_hierarchy() would find them with the spans before
 * unchanged. A parent among them may come after its child (its depth is
 * found first); a parent cycle among them is left to a whole build. */
static gboolean
resolve_new_spans (CandleLive *live, WickDocument *doc, const char **why)
{
  WickSpan *spans = (WickSpan *)(gpointer)doc->spans->data;
  guint from = live->n_spans, n = doc->spans->len;
  for (guint i = from; i < n; i++)
    {
      if (wick_id_map_lookup (&doc->span_ids, spans[i].id) != (gint64)i)
        {
          *why = "a span id repeats";
          return FALSE;
        }
      if (g_hash_table_contains (live->missing_parents, GUINT_TO_POINTER (spans[i].id)))
        {
          *why = "a parent came after its children";
          return FALSE;
        }
      gint64 p = spans[i].parent_id ? wick_id_map_lookup (&doc->span_ids, spans[i].parent_id) : -1;
      if (p < 0 && spans[i].parent_id != 0)
        g_hash_table_add (live->missing_parents, GUINT_TO_POINTER (spans[i].parent_id));
      spans[i].parent = (gint32)p;
    }
  /* depths: 0 unknown, 1 on the walk, 2 known */
  g_autofree guint8 *state = g_new0 (guint8, MAX (n - from, 1));
  g_autoptr (GArray) walk = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = from; i < n; i++)
    {
      gint32 j = (gint32)i;
      g_array_set_size (walk, 0);
      while (j >= (gint32)from && state[j - from] == 0)
        {
          state[j - from] = 1;
          g_array_append_val (walk, j);
          j = spans[j].parent;
        }
      if (j >= (gint32)from && state[j - from] == 1)
        {
          *why = "a parent cycle";
          return FALSE;
        }
      for (gint k = (gint)walk->len - 1; k >= 0; k--)
        {
          guint32 s = g_array_index (walk, guint32, k);
          gint32 p = spans[s].parent;
          spans[s].depth = p < 0 ? 0 : (guint16)MIN (spans[p].depth + 1u, G_MAXUINT16);
          state[s - from] = 2;
        }
    }
  return TRUE;
}

/* The slices track of thread number @number, made as the whole build's span loop makes it. */
static gboolean
key_track (CandleLive *live, WickTracks *self, guint16 number, const char **why)
{
  if (live->key_track[number] != G_MAXUINT32)
    return TRUE;
  guint32 thread_plus_1
    = number ? GPOINTER_TO_UINT (g_hash_table_lookup (live->by_number, GUINT_TO_POINTER (number)))
             : 0;
  if (number != 0 && thread_plus_1 == 0)
    {
      guint32 thread = wick_tracks_add_thread (self, live->process, number);
      g_autofree char *name = g_strdup_printf ("thread %u", number);
      wick_tracks_set_thread_name (self, thread, intern (self, name));
      wick_tracks_set_thread_sort_index (self, thread, (gint32)number);
      thread_plus_1 = thread + 1;
    }
  if (number == 0)
    {
      guint32 thread = wick_tracks_add_thread (self, live->process, 0);
      wick_tracks_set_thread_name (self, thread, intern (self, "host"));
      thread_plus_1 = thread + 1;
    }
  live->key_track[number] = wick_tracks_thread_slices_track (self, thread_plus_1 - 1);
  wick_tracks_map_thread_key (self, number, live->key_track[number]);
  if (++live->n_keys > 1)
    wick_tracks_set_rows_are_depths (self, FALSE);
  return TRUE;
}

static gboolean
append_spans (CandleLive *live, WickTracks *self, const char **why)
{
  WickDocument *doc = wick_tracks_get_document (self);
  if (!resolve_new_spans (live, doc, why))
    return FALSE;
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  span_rows (live, spans, live->n_spans, n);
  const guint16 *rows = (const guint16 *)(gconstpointer)live->rows->data;
  for (guint i = live->n_spans; i < n; i++)
    {
      if (!key_track (live, self, spans[i].thread, why))
        return FALSE;
      wick_tracks_note_slice (self, live->key_track[spans[i].thread], rows[i]);
    }
  /* the spans open before: their ends moved (closed, or running on to the new end) */
  guint kept = 0;
  for (guint k = 0; k < live->open->len; k++)
    {
      guint32 s = g_array_index (live->open, guint32, k);
      wick_tracks_append_dirty_span (self, s);
      if (!(spans[s].flags & WICK_SPAN_FLAG_CLOSED))
        g_array_index (live->open, guint32, kept++) = s;
    }
  g_array_set_size (live->open, kept);
  for (guint i = live->n_spans; i < n; i++)
    if (!(spans[i].flags & WICK_SPAN_FLAG_CLOSED))
      g_array_append_val (live->open, i);
  grow_span_columns (live, n);
  return TRUE;
}

/* Ops and intervals: the new ones, and the ones the live analysis resolved
 * to their spans since (which renames intervals). */
static gboolean
append_intervals (CandleLive *live, WickTracks *self, const char **why)
{
  WickDocument *doc = wick_tracks_get_document (self);
  guint n_spans, n_ops, n;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  const WickOp *ops = wick_document_get_ops (doc, &n_ops);
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (doc, &n);
  gboolean rename_all = FALSE;
  guint kept = 0;
  for (guint k = 0; k < live->unresolved_ops->len; k++)
    {
      guint32 i = g_array_index (live->unresolved_ops, guint32, k);
      if (ops[i].span < 0)
        g_array_index (live->unresolved_ops, guint32, kept++) = i;
      else
        rename_all |= note_op (live, ops, i);
    }
  g_array_set_size (live->unresolved_ops, kept);
  for (guint i = live->n_ops; i < n_ops; i++)
    {
      if (ops[i].span < 0 && ops[i].span_id != 0)
        g_array_append_val (live->unresolved_ops, i);
      rename_all |= note_op (live, ops, i);
    }

  guint n_slices;
  WickDeviceSlice *slices = (WickDeviceSlice *)wick_tracks_get_device_slices (self, &n_slices);
  kept = 0;
  for (guint k = 0; k < live->unresolved_intervals->len; k++)
    {
      guint32 i = g_array_index (live->unresolved_intervals, guint32, k);
      if (intervals[i].span < 0 || (guint)intervals[i].span >= n_spans)
        {
          g_array_index (live->unresolved_intervals, guint32, kept++) = i;
          continue;
        }
      g_array_index (live->has_interval, guint8, intervals[i].span) = 1;
      slices[i].name = interval_name (live, ops, spans, &intervals[i]);
      wick_tracks_note_device_renamed (self, i);
    }
  g_array_set_size (live->unresolved_intervals, kept);
  if (rename_all)
    {
      for (guint i = 0; i < live->n_intervals; i++)
        slices[i].name = interval_name (live, ops, spans, &intervals[i]);
      wick_tracks_note_device_renamed_all (self);
    }

  for (guint i = live->n_intervals; i < n; i++)
    {
      const WickDeviceInterval *d = &intervals[i];
      guint32 track
        = wick_tracks_device_track (self, (gint32)live->process, d->device, d->stream_id, 0);
      if (d->span >= 0 && (guint)d->span < n_spans)
        g_array_index (live->has_interval, guint8, d->span) = 1;
      else if (d->span_id != 0)
        g_array_append_val (live->unresolved_intervals, i);
      wick_tracks_add_device_slice (self, track, (gint32)i, d->start_ns, d->duration_ns,
                                    interval_name (live, ops, spans, d), d->backend);
    }
  return TRUE;
}

static gboolean
append_memory (CandleLive *live, WickTracks *self, const char **why)
{
  WickDocument *doc = wick_tracks_get_document (self);
  guint n;
  const WickMemoryEvent *memory = wick_document_get_memory (doc, &n);
  for (guint i = live->n_memory; i < n; i++)
    if (live->any_memory && memory[i].timestamp_ns < live->memory_last_ns)
      {
        *why = "a memory event is earlier than the last one";
        return FALSE;
      }
  g_autofree guint32 *order = memory_order (memory, live->n_memory, n);
  /* the series' tracks in the devices' order of first appearance */
  for (guint i = live->n_memory; i < n; i++)
    {
      WickStr device = memory[i].device;
      if (g_hash_table_contains (live->memory_track, GUINT_TO_POINTER (device)))
        continue;
      if (!note_new_track (live, PHASE_MEMORY))
        {
          *why = "a new memory device came after device memory tracks";
          return FALSE;
        }
      g_autofree char *name = g_strdup_printf ("memory %s", wick_document_str (doc, device));
      guint32 track = wick_tracks_counter_track (self, (gint32)live->process, intern (self, name));
      wick_tracks_counter_set_unit (self, track, WICK_COUNTER_UNIT_BYTES);
      g_hash_table_insert (live->memory_track, GUINT_TO_POINTER (device),
                           GUINT_TO_POINTER (track + 1));
    }
  for (guint k = 0; k < n - live->n_memory; k++)
    {
      const WickMemoryEvent *m = &memory[order[k]];
      guint32 track
        = GPOINTER_TO_UINT (g_hash_table_lookup (live->memory_track, GUINT_TO_POINTER (m->device)))
          - 1;
      memory_replay (live, self, m, track);
      live->any_memory = TRUE;
      live->memory_last_ns = MAX (live->memory_last_ns, m->timestamp_ns);
    }

  guint n_samples;
  const WickDeviceMemorySample *samples = wick_document_get_device_memory (doc, &n_samples);
  for (guint i = live->n_device_memory; i < n_samples; i++)
    {
      guint order_of = device_memory_order (live, samples[i].device);
      for (guint k = 0; k < WICK_N_DEVICE_SERIES; k++)
        {
          if (!(samples[i].present & series_bit[k]))
            continue;
          gint64 key = (gint64)order_of * 4 + k;
          guint32 track = GPOINTER_TO_UINT (g_hash_table_lookup (live->device_memory_track,
                                                                 GSIZE_TO_POINTER ((gsize)key + 1)))
                          - 1;
          if (track == G_MAXUINT32)
            {
              if (key < live->device_memory_key || !note_new_track (live, PHASE_DEVICE_MEMORY))
                {
                  *why = "a device memory series came after later ones";
                  return FALSE;
                }
              g_autofree char *name = g_strdup_printf (
                "device memory %s %s", wick_document_str (doc, samples[i].device),
                wick_device_series_to_string ((WickDeviceSeriesKind)k));
              track = wick_tracks_counter_track (self, (gint32)live->process, intern (self, name));
              wick_tracks_counter_set_unit (self, track, WICK_COUNTER_UNIT_BYTES);
              g_hash_table_insert (live->device_memory_track, GSIZE_TO_POINTER ((gsize)key + 1),
                                   GUINT_TO_POINTER (track + 1));
              live->device_memory_key = key;
            }
          wick_tracks_add_counter_sample (self, track, samples[i].timestamp_ns,
                                          (double)series_value (&samples[i], k));
        }
    }
  return TRUE;
}

/* Appends what @self's document committed since the last build or append;
 * FALSE (with @why) when a whole build is needed. */
static gboolean
live_append (CandleLive *live, WickTracks *self, const char **why)
{
  WickDocument *doc = wick_tracks_get_document (self);
  if (doc->spans->len < live->n_spans)
    {
      *why = "the document has fewer spans";
      return FALSE;
    }
  wick_tracks_append_begin (self);
  if (!append_extensions (live, self, why) || !append_spans (live, self, why)
      || !append_intervals (live, self, why) || !append_memory (live, self, why))
    return FALSE;
  if (!wick_tracks_append_end (self, (const guint16 *)(gconstpointer)live->rows->data, why))
    return FALSE;
  live->n_spans = doc->spans->len;
  wick_document_get_extensions (doc, &live->n_ext);
  wick_document_get_ops (doc, &live->n_ops);
  wick_document_get_device_intervals (doc, &live->n_intervals);
  wick_document_get_memory (doc, &live->n_memory);
  wick_document_get_device_memory (doc, &live->n_device_memory);
  doc->resolved_records = doc->n_records + 1; /* resolve_new_spans did it */
  return TRUE;
}

WickTracks *
wick_document_get_tracks (WickDocument *document)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (document), NULL);
  WickTracks *self = wick_tracks_peek (document);
  if (!wick_tracks_is_stale (self))
    return self;
  CandleLive *live = wick_tracks_get_live (self);
  if (live != NULL && !document->finished)
    {
      const char *why = NULL;
      if (live_append (live, self, &why))
        {
          wick_tracks_mark_current (self);
          wick_tracks_count_append (self);
          return self;
        }
      wick_tracks_count_fallback (self, why);
    }
  self = wick_tracks_begin_rebuild (document);
  wick_tracks_build_candle_graph (self);
  wick_tracks_count_build (self);
  if (!document->finished && wick_document_get_incremental_tracks (document))
    {
      CandleLive *fresh = candle_live_new (self);
      if (fresh != NULL)
        wick_tracks_set_live (self, fresh, candle_live_free);
    }
  return self;
}
