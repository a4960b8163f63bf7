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

static GArray *
read_thread_records (WickDocument *doc, WickTracks *self)
{
  GArray *records = g_array_new (FALSE, TRUE, sizeof (ThreadRecord));
  g_array_set_clear_func (records, thread_record_clear);
  guint n;
  const WickExtensionRecord *ext = wick_document_get_extensions (doc, &n);
  for (guint i = 0; i < n; i++)
    {
      /* the record's facts were decoded when it was committed */
      const char *kind = wick_document_str (doc, ext[i].kind);
      if (!(ext[i].flags & WICK_EXTENSION_OBJECT))
        {
          g_autofree char *construct = g_strdup_printf ("%s record not JSON", kind);
          wick_tracks_skip (self, construct, 1);
          continue;
        }
      if (strcmp (kind, "wick_thread") != 0)
        {
          /* Other Wick records (marks, weight moves, stage verdicts): an
           * instant of the process, named by its label or kind, the whole
           * record as its args. */
          WickStr name = ext[i].label != 0
                           ? wick_tracks_intern (self, wick_document_str (doc, ext[i].label),
                                                 wick_document_str_len (doc, ext[i].label))
                           : ext[i].kind;
          wick_tracks_instant_add (self, WICK_INSTANT_SCOPE_PROCESS, 0, -1,
                                   (gint64)ext[i].timestamp_ns, name, ext[i].kind, ext[i].json);
          continue;
        }
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

WickTracks *
wick_document_get_tracks (WickDocument *document)
{
  WickTracks *self;

  g_return_val_if_fail (WICK_IS_DOCUMENT (document), NULL);
  self = wick_tracks_begin_rebuild (document);
  if (self == NULL)
    return wick_tracks_peek (document);
  wick_tracks_build_candle_graph (self);
  return self;
}
