/* wick-live-stream.c — ring records to JSONL lines (see the header). */
#include "config.h"

#include "wick-live-stream.h"

#include "wick-live-client.h"

#define DRAIN_CHUNK 4096

struct _WickLiveStream
{
  WickRingReader *reader;
  WickJsonlFormatter *formatter;
  guint64 records;
  guint64 lines;
  guint64 dropped;
  guint64 lost;
  guint64 last_drop_ns;
  gboolean terminal;
  gboolean finished;
  GHashTable *live_storages; /* "device\x1fstorage" allocated since the attach */
  guint64 skipped_frees;
  /* the callback of the drain in progress */
  WickLiveLineFunc emit;
  gpointer emit_data;
};

WickLiveStream *
wick_live_stream_new (int ring_fd, gboolean strict, GError **error)
{
  WickError wick_error;
  WickRingReader *reader = wick_ring_reader_new (ring_fd, &wick_error);
  if (reader == NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "cannot read the session's ring: %s", wick_error.message);
      return NULL;
    }
  WickLiveStream *self = g_new0 (WickLiveStream, 1);
  self->reader = reader;
  self->formatter = wick_jsonl_formatter_new (strict);
  self->live_storages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return self;
}

void
wick_live_stream_free (WickLiveStream *self)
{
  if (self == NULL)
    return;
  wick_ring_reader_free (self->reader);
  wick_jsonl_formatter_free (self->formatter);
  g_hash_table_unref (self->live_storages);
  g_free (self);
}

const WickRingInfo *
wick_live_stream_get_info (WickLiveStream *self)
{
  return wick_ring_reader_get_info (self->reader);
}

static void
on_line (const char *line, size_t length, void *user_data)
{
  WickLiveStream *self = user_data;
  self->lines++;
  if (self->emit != NULL)
    self->emit (line, length, self->emit_data);
}

/* A reader starts at "now": storages allocated before it attached are freed
 * later without an allocation in the stream, which the spec's memory pairing
 * reports as unpaired_free. Such frees are left out (and counted). */
static gboolean
keep_memory_record (WickLiveStream *self, const WickMemoryRecord *memory)
{
  g_autofree char *key = g_strdup_printf ("%s\x1f%s", memory->device, memory->storage_id);
  if (memory->action == WICK_MEMORY_ALLOC)
    {
      g_hash_table_add (self->live_storages, g_steal_pointer (&key));
      return TRUE;
    }
  if (g_hash_table_remove (self->live_storages, key))
    return TRUE;
  self->skipped_frees++;
  return FALSE;
}

static bool
on_record (const WickRingRecord *record, void *user_data)
{
  WickLiveStream *self = user_data;
  self->records++;
  switch (record->kind)
    {
      case WICK_RING_RECORD_MEMORY:
        if (!keep_memory_record (self, &record->memory))
          return true;
        break;
      case WICK_RING_RECORD_DROPPED:
        self->dropped += record->dropped.count;
        self->last_drop_ns = MAX (self->last_drop_ns, record->dropped.last_ns);
        break;
      case WICK_RING_RECORD_LOST:
        self->lost += record->lost.count;
        break;
      case WICK_RING_RECORD_TERMINAL:
        self->terminal = TRUE;
        break;
      default:
        break;
    }
  wick_jsonl_formatter_feed (self->formatter, record, on_line, self);
  return true;
}

guint64
wick_live_stream_drain (WickLiveStream *self, gsize max_records, WickLiveLineFunc emit,
                        gpointer user_data)
{
  if (self->finished)
    return 0;
  WickError error;
  self->emit = emit;
  self->emit_data = user_data;
  long n = wick_ring_reader_drain (self->reader, max_records, on_record, self, &error);
  self->emit = NULL;
  self->emit_data = NULL;
  return n > 0 ? (guint64)n : 0;
}

guint64
wick_live_stream_drain_for (WickLiveStream *self, gint64 budget_us, WickLiveLineFunc emit,
                            gpointer user_data)
{
  gint64 deadline = g_get_monotonic_time () + budget_us;
  guint64 total = 0;
  for (;;)
    {
      guint64 n = wick_live_stream_drain (self, DRAIN_CHUNK, emit, user_data);
      total += n;
      if (n < DRAIN_CHUNK || g_get_monotonic_time () >= deadline)
        return total;
    }
}

WickProducerState
wick_live_stream_get_producer_state (WickLiveStream *self)
{
  return wick_ring_reader_get_producer_state (self->reader);
}

gboolean
wick_live_stream_is_drained (WickLiveStream *self)
{
  return wick_ring_reader_is_drained (self->reader);
}

gboolean
wick_live_stream_has_terminal (WickLiveStream *self)
{
  return self->terminal;
}

guint64
wick_live_stream_get_dropped (WickLiveStream *self)
{
  return self->dropped;
}

guint64
wick_live_stream_get_lost (WickLiveStream *self)
{
  return self->lost;
}

guint64
wick_live_stream_get_last_drop_ns (WickLiveStream *self)
{
  return self->last_drop_ns;
}

guint64
wick_live_stream_get_skipped_frees (WickLiveStream *self)
{
  return self->skipped_frees;
}

guint64
wick_live_stream_get_records (WickLiveStream *self)
{
  return self->records;
}

guint64
wick_live_stream_get_lines (WickLiveStream *self)
{
  return self->lines;
}

void
wick_live_stream_get_reader_stats (WickLiveStream *self, WickRingReaderStats *stats)
{
  wick_ring_reader_get_stats (self->reader, stats);
}

void
wick_live_stream_finish (WickLiveStream *self, const char *reason, WickLiveLineFunc emit,
                         gpointer user_data)
{
  if (self->finished)
    return;
  self->finished = TRUE;
  self->emit = emit;
  self->emit_data = user_data;
  wick_jsonl_formatter_finish (self->formatter, reason, on_line, self);
  self->emit = NULL;
  self->emit_data = NULL;
}
