/* wick-live-stream.c — ring records to JSONL lines (see the header). */
#include "config.h"

#include "wick-live-stream.h"
#include "wick-live-stream-private.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wick-document.h"
#include "wick-json-scanner.h"
#include "wick-live-client.h"
#include "wick-record.h"
#include "common/wick-json.h"
#include "common/wick-utf8.h"

static guint64 wick_live_stream_get_missing (WickLiveStream *self);

static char *wick_live_stream_describe_partial (WickLiveStream *self);

/* A snapshot larger than this is refused (a million live storages is ~250 MiB). */
#define SNAPSHOT_MAX_BYTES (G_GUINT64_CONSTANT (512) << 20)
/* ... and one of more lines: its lines are kept as text (24 bytes of index
 * each) and decoded again one at a time when emitted, so a snapshot costs its
 * size plus this index, never a parsed object per line. */
#define SNAPSHOT_MAX_LINES 2000000
/* Reading the snapshot file takes at most this long. */
#define SNAPSHOT_READ_TIMEOUT_US (10 * G_USEC_PER_SEC)

typedef struct
{
  gsize offset;
  guint32 length;
  guint32 rank; /* 0 header, 1 allocation, 2 the rest */
  guint64 timestamp_ns;
  guint64 index; /* order in the file: the sort keeps it among equals */
} SnapshotLine;

typedef struct
{
  guint64 alloc_ns;
  gboolean from_snapshot;
} LiveStorage;

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
  gboolean strict;
  gboolean opened; /* the reader delivered its meta line */
  GHashTable *live_storages; /* "device\x1fstorage" -> LiveStorage, live since the attach */
  guint64 skipped_frees;
  /* the attach snapshot (wick_live_stream_apply_snapshot) */
  gboolean has_snapshot;
  gboolean snapshot_emitted;
  guint64 snapshot_ns;
  guint64 snapshot_bytes;
  guint64 snapshot_duplicates;
  GByteArray *snapshot_text; /* the snapshot file */
  GArray *snapshot_lines;    /* SnapshotLine, header first */
  char *snapshot_header;     /* its header as a JSON object, for the meta line */
  gboolean header_on_meta;   /* the meta line carried it */
  gboolean decorate_line;      /* append the snapshot flag to the next memory line */
  WickRingReaderStart start;   /* where the reader began: a late one's file is partial */
  guint64 snapshot_storages, snapshot_modules, snapshot_stages;
  guint64 decorate_alloc_ns;
  /* the callback of the drain in progress */
  WickLiveLineFunc emit;
  gpointer emit_data;
  /* wick_live_stream_set_record_func: records as values */
  WickLiveRecordFunc record_func;
  struct _RingValues *values;
};

static bool on_record (const WickRingRecord *record, void *user_data);
static void ring_values_free (struct _RingValues *values);

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
  self->live_storages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->strict = strict;
  wick_ring_reader_get_start (reader, &self->start);
  return self;
}

/* A stream without a ring: the records come from wick_live_stream_feed
 * (the remote client, which decodes them from the node's frames). */
WickLiveStream *
wick_live_stream_new_fed (gboolean strict)
{
  WickLiveStream *self = g_new0 (WickLiveStream, 1);
  self->formatter = wick_jsonl_formatter_new (strict);
  self->live_storages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->strict = strict;
  return self;
}

void
wick_live_stream_feed (WickLiveStream *self, const WickRingRecord *record, WickLiveLineFunc emit,
                       gpointer user_data)
{
  if (self->finished)
    return;
  self->emit = emit;
  self->emit_data = user_data;
  on_record (record, self);
  self->records++;
  self->emit = NULL;
  self->emit_data = NULL;
}

void
wick_live_stream_free (WickLiveStream *self)
{
  if (self == NULL)
    return;
  wick_ring_reader_free (self->reader);
  wick_jsonl_formatter_free (self->formatter);
  g_hash_table_unref (self->live_storages);
  g_clear_pointer (&self->snapshot_text, g_byte_array_unref);
  g_clear_pointer (&self->snapshot_lines, g_array_unref);
  g_free (self->snapshot_header);
  ring_values_free (self->values);
  g_free (self);
}

const WickRingInfo *
wick_live_stream_get_info (WickLiveStream *self)
{
  return self->reader != NULL ? wick_ring_reader_get_info (self->reader) : NULL;
}

/* ---- ring records as values (wick_live_stream_set_record_func) -----------
 *
 * The ring decoder of wick-record.h: each record the formatter writes a line
 * of, as the values the JSONL decoder would read from that line, so that a
 * document fed these and one fed the lines are the same (the live-window
 * test compares them). The formatter decides the stream (what is written,
 * in which order, with which Wick keys); this only says each of its lines as
 * values. A line it cannot say exactly so (the meta, whose text is in the
 * ring; a snapshot allocation, whose Wick keys are the stream's own text; a
 * value the line could not hold, such as a non-finite double or a variant
 * the spec does not name) is given as its text, to be decoded as the file's
 * line will be. */

typedef struct _RingValues
{
  WickRecordBuilder builder;
  char ids[4][32];       /* "sN" span ids, gradient event ids */
  GPtrArray *repaired;   /* strings made valid UTF-8, for this record */
  GString *records_json; /* the facts' "[...]" */
  /* variant indices of libwick's enums in the schema (-1: none) */
  gint8 span_kind[8], step[8], category[16], action[8], state[8];
} RingValues;

static void
ring_values_free (RingValues *values)
{
  if (values == NULL)
    return;
  wick_record_builder_clear (&values->builder);
  g_ptr_array_unref (values->repaired);
  g_string_free (values->records_json, TRUE);
  g_free (values);
}

static gint8
variant_of (WickRecordKind kind, guint slot, const char *name)
{
  const WickFieldSchema *field = &wick_trace_record_schema (kind, 0)->fields[slot];
  for (guint i = 0; name != NULL && field->variants != NULL && field->variants[i] != NULL; i++)
    if (strcmp (field->variants[i], name) == 0)
      return (gint8)i;
  return -1;
}

static RingValues *
ring_values_new (void)
{
  RingValues *v = g_new0 (RingValues, 1);
  wick_record_builder_init (&v->builder);
  v->repaired = g_ptr_array_new_with_free_func (g_free);
  v->records_json = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (v->span_kind); i++)
    v->span_kind[i]
      = variant_of (WICK_KIND_SPAN_START, SS_SPAN_KIND, wick_span_kind_to_string ((WickSpanKind)i));
  for (guint i = 0; i < G_N_ELEMENTS (v->step); i++)
    v->step[i] = variant_of (WICK_KIND_SPAN_START, SS_STEP, wick_step_to_string ((WickStep)i));
  for (guint i = 0; i < G_N_ELEMENTS (v->category); i++)
    v->category[i] = variant_of (WICK_KIND_MEMORY, MEM_CATEGORY,
                                 wick_memory_category_to_string ((WickMemoryCategory)i));
  for (guint i = 0; i < G_N_ELEMENTS (v->action); i++)
    v->action[i] = variant_of (WICK_KIND_MEMORY, MEM_ACTION,
                               wick_memory_action_to_string ((WickMemoryAction)i));
  for (guint i = 0; i < G_N_ELEMENTS (v->state); i++)
    v->state[i] = variant_of (WICK_KIND_GRADIENT, GR_STATE,
                              wick_gradient_state_to_string ((WickGradientState)i));
  return v;
}

/* @s as the formatter writes it: NULL as "", each byte of invalid UTF-8 as
 * U+FFFD (wick_json_escape). */
static void
put_str (RingValues *v, guint32 at, const char *s)
{
  gsize len = s != NULL ? strlen (s) : 0;
  if (s == NULL)
    s = "";
  if (!wick_utf8_validate (s, len))
    {
      GString *fixed = g_string_sized_new (len + 16);
      for (gsize i = 0; i < len;)
        {
          gsize n = wick_utf8_sequence_length ((const unsigned char *)s + i, len - i);
          if (n == 0)
            {
              g_string_append (fixed, "\xef\xbf\xbd");
              i++;
            }
          else
            {
              g_string_append_len (fixed, s + i, (gssize)n);
              i += n;
            }
        }
      len = fixed->len;
      s = g_string_free (fixed, FALSE);
      g_ptr_array_add (v->repaired, (gpointer)s);
    }
  wick_record_builder_str (&v->builder, at, s, (gssize)len);
}

static void
put_span_id (RingValues *v, guint which, guint32 at, guint64 id)
{
  char *text = v->ids[which];
  text[0] = 's';
  gsize n = 1 + wick_format_u64 (id, text + 1);
  text[n] = '\0';
  wick_record_builder_str (&v->builder, at, text, (gssize)n);
}

static void
put_shape (RingValues *v, guint32 at, const guint64 *shape, gsize rank)
{
  guint32 first = wick_record_builder_list (&v->builder, at, (guint32)rank);
  for (gsize i = 0; i < rank; i++)
    wick_record_builder_u64 (&v->builder, first + (guint32)i, shape[i]);
}

static gboolean
put_variant (RingValues *v, guint32 at, const gint8 *table, gsize n_table, guint value)
{
  if (value >= n_table || table[value] < 0)
    return FALSE;
  wick_record_builder_enum (&v->builder, at, (guint)table[value]);
  return TRUE;
}

/* FALSE when the line holds what values cannot say the same way. */
static gboolean
ring_record_values (RingValues *v, const WickFormattedRecord *formatted)
{
  const WickRingRecord *r = formatted->record;
  WickRecordBuilder *b = &v->builder;

  g_ptr_array_set_size (v->repaired, 0);
  switch (r->kind)
    {
      case WICK_RING_RECORD_SPAN_START:
        wick_record_builder_begin (b, WICK_KIND_SPAN_START, 0);
        put_span_id (v, 0, SS_ID, r->span.id);
        if (r->span.parent != 0)
          put_span_id (v, 1, SS_PARENT_ID, r->span.parent);
        put_str (v, SS_NAME, r->span.name);
        wick_record_builder_u64 (b, SS_START_NS, r->span.start_ns);
        if (!put_variant (v, SS_SPAN_KIND, v->span_kind, G_N_ELEMENTS (v->span_kind),
                          r->span.span_kind))
          return FALSE;
        wick_record_builder_bool (b, SS_MEASURED, r->span.measured);
        if (r->span.step != WICK_STEP_NONE
            && !put_variant (v, SS_STEP, v->step, G_N_ELEMENTS (v->step), r->span.step))
          return FALSE;
        /* the decoder reads a small "wick_thread" (extension mode) */
        if (r->span.thread != 0 && r->span.thread <= G_MAXUINT16)
          wick_record_builder_u64 (b, SS_WICK_THREAD, r->span.thread);
        break;
      case WICK_RING_RECORD_SPAN_END:
        wick_record_builder_begin (b, WICK_KIND_SPAN_END, 0);
        put_span_id (v, 0, SE_ID, r->span.id);
        wick_record_builder_u64 (b, SE_DURATION_NS, r->span.duration_ns);
        break;
      case WICK_RING_RECORD_OP:
        {
          const WickOpRecord *op = &r->op;
          wick_record_builder_begin (b, WICK_KIND_OP, 0);
          put_span_id (v, 0, OP_SPAN_ID, op->span);
          put_str (v, OP_OP_NAME, op->op_name);
          guint32 inputs = wick_record_builder_list (b, OP_INPUTS, (guint32)op->n_inputs);
          for (gsize i = 0; i < op->n_inputs; i++)
            put_str (v, inputs + (guint32)i, op->inputs[i]);
          if (op->output != NULL)
            put_str (v, OP_OUTPUT, op->output);
          put_shape (v, OP_SHAPE, op->shape, op->rank);
          put_str (v, OP_DTYPE, op->dtype);
          put_str (v, OP_DEVICE, op->device);
          wick_record_builder_u64 (b, OP_DURATION_NS, op->duration_ns);
          wick_record_builder_u64 (b, OP_TIMESTAMP_NS, op->timestamp_ns);
          if (op->has_output_dense_bytes)
            wick_record_builder_u64 (b, OP_OUTPUT_DENSE_BYTES, op->output_dense_bytes);
          wick_record_builder_u64 (b, OP_INPUT_DENSE_BYTES, op->input_dense_bytes);
          break;
        }
      case WICK_RING_RECORD_TENSOR:
        {
          const WickTensorRecord *t = &r->tensor;
          wick_record_builder_begin (b, WICK_KIND_TENSOR, 0);
          put_span_id (v, 0, T_SPAN_ID, t->span);
          put_str (v, T_TENSOR_ID, t->tensor_id);
          if (t->label != NULL)
            put_str (v, T_LABEL, t->label);
          put_shape (v, T_SHAPE, t->shape, t->rank);
          put_str (v, T_DTYPE, t->dtype);
          put_str (v, T_DEVICE, t->device);
          wick_record_builder_bool (b, T_REQUIRES_GRAD, t->requires_grad);
          if (t->has_dense_bytes)
            wick_record_builder_u64 (b, T_DENSE_BYTES, t->dense_bytes);
          if (!put_variant (v, T_CATEGORY, v->category, G_N_ELEMENTS (v->category), t->category))
            return FALSE;
          break;
        }
      case WICK_RING_RECORD_TENSOR_STATS:
        {
          const WickTensorStatsRecord *ts = &r->tensor_stats;
          /* a non-finite double is written null, which the field refuses */
          if (!isfinite (ts->rms) || !isfinite (ts->abs_max) || !isfinite (ts->mean))
            return FALSE;
          wick_record_builder_begin (b, WICK_KIND_TENSOR_STATS, 0);
          put_span_id (v, 0, TS_SPAN_ID, ts->span);
          put_str (v, TS_LABEL, ts->label);
          put_shape (v, TS_SHAPE, ts->shape, ts->rank);
          put_str (v, TS_DTYPE, ts->dtype);
          wick_record_builder_u64 (b, TS_ELEMENTS, ts->elements);
          wick_record_builder_u64 (b, TS_NON_FINITE, ts->non_finite);
          wick_record_builder_f64 (b, TS_RMS, ts->rms);
          wick_record_builder_f64 (b, TS_ABS_MAX, ts->abs_max);
          wick_record_builder_f64 (b, TS_MEAN, ts->mean);
          break;
        }
      case WICK_RING_RECORD_MEMORY:
        {
          const WickMemoryRecord *m = &r->memory;
          wick_record_builder_begin (b, WICK_KIND_MEMORY, 0);
          wick_record_builder_u64 (b, MEM_TIMESTAMP_NS, m->timestamp_ns);
          put_str (v, MEM_STORAGE_ID, m->storage_id);
          put_str (v, MEM_TENSOR_ID, m->tensor_id);
          put_span_id (v, 0, MEM_SPAN_ID, m->span);
          if (m->op_name != NULL)
            put_str (v, MEM_OP_NAME, m->op_name);
          put_str (v, MEM_DEVICE, m->device);
          wick_record_builder_u64 (b, MEM_BYTES, m->bytes);
          if (!put_variant (v, MEM_ACTION, v->action, G_N_ELEMENTS (v->action), m->action))
            return FALSE;
          put_shape (v, MEM_SHAPE, m->shape, m->rank);
          put_str (v, MEM_DTYPE, m->dtype);
          if (!put_variant (v, MEM_CATEGORY, v->category, G_N_ELEMENTS (v->category), m->category))
            return FALSE;
          /* the formatter's "wick_address" (a document in extension mode
           * keeps it, as from the line) */
          if (m->address != 0)
            wick_record_builder_u64 (b, MEM_WICK_ADDRESS, m->address);
          break;
        }
      case WICK_RING_RECORD_DEVICE_MEMORY:
        {
          const WickDeviceMemoryRecord *d = &r->device_memory;
          wick_record_builder_begin (b, WICK_KIND_DEVICE_MEMORY, 0);
          wick_record_builder_u64 (b, DM_TIMESTAMP_NS, d->timestamp_ns);
          put_str (v, DM_DEVICE, d->device);
          if (d->has_used_bytes)
            wick_record_builder_u64 (b, DM_USED_BYTES, d->used_bytes);
          if (d->has_free_bytes)
            wick_record_builder_u64 (b, DM_FREE_BYTES, d->free_bytes);
          if (d->has_reserved_bytes)
            wick_record_builder_u64 (b, DM_RESERVED_BYTES, d->reserved_bytes);
          if (d->has_capacity_bytes)
            wick_record_builder_u64 (b, DM_CAPACITY_BYTES, d->capacity_bytes);
          break;
        }
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        {
          const WickDeviceIntervalRecord *d = &r->device_interval;
          wick_record_builder_begin (b, WICK_KIND_DEVICE_INTERVAL, 0);
          put_span_id (v, 0, DI_SPAN_ID, d->span);
          put_str (v, DI_DEVICE, d->device);
          put_str (v, DI_STREAM_ID, d->stream_id);
          put_str (v, DI_CLOCK_ID, d->clock_id);
          put_str (v, DI_BACKEND, d->backend);
          wick_record_builder_u64 (b, DI_START_NS, d->start_ns);
          wick_record_builder_u64 (b, DI_DURATION_NS, d->duration_ns);
          break;
        }
      case WICK_RING_RECORD_GRADIENT:
        {
          wick_record_builder_begin (b, WICK_KIND_GRADIENT, 0);
          char *text = v->ids[0];
          memcpy (text, "gradient-", 9);
          gsize n = 9 + wick_format_u64 (r->gradient.event_number, text + 9);
          text[n] = '\0';
          wick_record_builder_str (b, GR_EVENT_ID, text, (gssize)n);
          put_str (v, GR_ROOT, r->gradient.root);
          put_str (v, GR_KEY, r->gradient.key);
          if (!put_variant (v, GR_STATE, v->state, G_N_ELEMENTS (v->state), r->gradient.state))
            return FALSE;
          /* a non-finite norm is written null: absent */
          if (r->gradient.has_norm && isfinite (r->gradient.norm))
            wick_record_builder_f64 (b, GR_NORM, r->gradient.norm);
          break;
        }
      case WICK_RING_RECORD_CALL_EDGE:
        wick_record_builder_begin (b, WICK_KIND_EDGE, WICK_EDGE_CALL);
        put_span_id (v, 0, CALL_FROM_SPAN, r->call_edge.from);
        put_span_id (v, 1, CALL_TO_SPAN, r->call_edge.to);
        wick_record_builder_u64 (b, CALL_HOST_DURATION_NS, r->call_edge.host_duration_ns);
        break;
      case WICK_RING_RECORD_DATA_EDGE:
        wick_record_builder_begin (b, WICK_KIND_EDGE, WICK_EDGE_DATA);
        put_str (v, DATA_FROM_TENSOR, r->data_edge.from_tensor);
        put_str (v, DATA_TO_TENSOR, r->data_edge.to_tensor);
        break;
      case WICK_RING_RECORD_TERMINAL:
        wick_record_builder_begin (b, WICK_KIND_TERMINAL, 0);
        wick_record_builder_enum (b, TERM_OUTCOME,
                                  r->terminal.outcome == WICK_OUTCOME_COMPLETE ? 0 : 1);
        wick_record_builder_u64 (b, TERM_TIMESTAMP_NS, r->terminal.timestamp_ns);
        if (r->terminal.reason != NULL)
          put_str (v, TERM_REASON, r->terminal.reason);
        break;
      default:
        return FALSE; /* meta, and what never has a line of its own */
    }
  /* the Wick keys the formatter gave the line, decoded */
  WickRecordFacts *facts = &b->facts;
  if (formatted->thread_name != NULL && r->kind == WICK_RING_RECORD_SPAN_START)
    {
      guint32 at = b->values->len;
      /* the name as written (made valid), kept beside the values */
      g_array_set_size (b->values, at + 1);
      g_array_set_size (b->fields, at + 1);
      g_array_index (b->fields, const WickFieldSchema *, at) = NULL;
      memset (&g_array_index (b->values, WickValue, at), 0, sizeof (WickValue));
      put_str (v, at, formatted->thread_name);
      const WickValue *name = &g_array_index (b->values, WickValue, at);
      facts->thread_name = name->str;
      facts->thread_name_len = name->len;
      facts->os_tid = formatted->os_tid;
      facts->present |= WICK_FACT_THREAD_NAME | WICK_FACT_OS_TID;
      g_array_set_size (b->values, at);
      g_array_set_size (b->fields, at);
    }
  if (formatted->wick_records != NULL)
    {
      g_string_truncate (v->records_json, 0);
      g_string_append_c (v->records_json, '[');
      g_string_append_len (v->records_json, formatted->wick_records,
                           (gssize)formatted->wick_records_length);
      g_string_append_c (v->records_json, ']');
      facts->records_json = v->records_json->str;
      facts->records_json_len = v->records_json->len;
      facts->present |= WICK_FACT_RECORDS;
    }
  if (formatted->has_loss_keys && r->kind == WICK_RING_RECORD_TERMINAL)
    {
      facts->losses.dropped = formatted->dropped;
      facts->losses.lost = formatted->lost;
      facts->present |= WICK_FACT_DROPPED | WICK_FACT_LOST;
      if (formatted->detached > 0)
        facts->losses.detached = formatted->detached, facts->present |= WICK_FACT_DETACHED;
      if (formatted->records_dropped > 0)
        facts->losses.records_dropped = formatted->records_dropped,
        facts->present |= WICK_FACT_RECORDS_DROPPED;
    }
  return TRUE;
}

/* One line of the stream: to the line callback (the spool, wick-trace
 * attach) as text, with this stream's own Wick keys (the meta's attach and
 * snapshot header, a snapshot allocation's flag), and to the record callback
 * as values when it can be said so (@formatted: what the formatter made it
 * of), else as that text. */
static void
deliver_line (WickLiveStream *self, const WickFormattedRecord *formatted, const char *line,
              size_t length)
{
  g_autofree char *decorated = NULL;
  gboolean as_text = FALSE;

  self->lines++;
  if (self->emit == NULL && self->record_func == NULL)
    return;
  if (self->lines == 1 && !self->strict && length > 0 && line[length - 1] == '}')
    {
      /* the meta line says where this file begins and carries the attach
       * snapshot's header (docs/format.md, "Wick keys") */
      self->header_on_meta = self->has_snapshot && self->snapshot_header != NULL;
      decorated = g_strdup_printf (
        "%.*s,\"wick_attach\":{\"attached_ns\":%" G_GUINT64_FORMAT ",\"missing\":%" G_GUINT64_FORMAT
        ",\"exact\":%s,\"snapshot\":%s}%s%s%s}",
        (int)(length - 1), line, wick_live_stream_get_attached_ns (self),
        wick_live_stream_get_missing (self), self->start.exact ? "true" : "false",
        self->has_snapshot ? "true" : "false", self->header_on_meta ? ",\"wick_records\":[" : "",
        self->header_on_meta ? self->snapshot_header : "", self->header_on_meta ? "]" : "");
    }
  else if (self->decorate_line && length > 0 && line[length - 1] == '}')
    {
      /* A snapshot allocation in extension mode says what it is. */
      decorated = g_strdup_printf (
        "%.*s,\"wick_snapshot\":true,\"wick_allocated_ns\":%" G_GUINT64_FORMAT "}",
        (int)(length - 1), line, self->decorate_alloc_ns);
    }
  if (decorated != NULL)
    {
      line = decorated;
      length = strlen (decorated);
      as_text = TRUE;
    }
  if (self->emit != NULL)
    self->emit (line, length, self->emit_data);
  if (self->record_func == NULL || formatted == NULL)
    return;
  if (formatted->record->kind == WICK_RING_RECORD_META)
    as_text = TRUE;
  if (!as_text && ring_record_values (self->values, formatted))
    self->record_func (&self->values->builder, line, length, self->emit_data);
  else
    self->record_func (NULL, line, length, self->emit_data);
}

static void
on_line (const char *line, size_t length, void *user_data)
{
  deliver_line (user_data, NULL, line, length);
}

static void
on_formatted (const WickFormattedRecord *formatted, const char *line, size_t length,
              void *user_data)
{
  deliver_line (user_data, formatted, line, length);
}

void
wick_live_stream_set_record_func (WickLiveStream *self, WickLiveRecordFunc func)
{
  self->record_func = func;
  if (func != NULL && self->values == NULL)
    self->values = ring_values_new ();
  wick_jsonl_formatter_set_formatted_func (self->formatter, func != NULL ? on_formatted : NULL);
}

/* A reader starts at "now": storages allocated before it attached are freed
 * later without an allocation in the stream, which the spec's memory pairing
 * reports as unpaired_free. Such frees are left out (and counted), unless the
 * attach snapshot announced the storage. Memory records of a snapshot storage
 * stamped at or before the snapshot are already in it (the reader began
 * before the snapshot was taken) and are left out too. */
/* A storage's key in live_storages, "DEVICE\x1fSTORAGE_ID", in @stack when
 * it fits (one record a storage's allocation and free: no allocation to look
 * it up), else in *@heap. */
static const char *
storage_key (const char *device, const char *storage_id, char *stack, gsize size, char **heap)
{
  device = device != NULL ? device : "(null)";
  storage_id = storage_id != NULL ? storage_id : "(null)";
  gsize a = strlen (device), b = strlen (storage_id);
  char *key = a + b + 2 <= size ? stack : (*heap = g_malloc (a + b + 2));
  memcpy (key, device, a);
  key[a] = '\x1f';
  memcpy (key + a + 1, storage_id, b + 1);
  return key;
}

static gboolean
keep_memory_record (WickLiveStream *self, const WickMemoryRecord *memory)
{
  char stack[256];
  g_autofree char *heap = NULL;
  const char *key = storage_key (memory->device, memory->storage_id, stack, sizeof stack, &heap);
  LiveStorage *live = g_hash_table_lookup (self->live_storages, key);
  if (live != NULL && live->from_snapshot && memory->timestamp_ns <= self->snapshot_ns)
    {
      self->snapshot_duplicates++;
      return FALSE;
    }
  if (memory->action == WICK_MEMORY_ALLOC)
    {
      if (live == NULL)
        {
          live = g_new0 (LiveStorage, 1);
          live->alloc_ns = memory->timestamp_ns;
          g_hash_table_insert (self->live_storages, g_strdup (key), live);
        }
      return TRUE;
    }
  if (g_hash_table_remove (self->live_storages, key))
    return TRUE;
  self->skipped_frees++;
  return FALSE;
}

static gboolean
parse_category (const char *name, WickMemoryCategory *category)
{
  for (int i = 0; i < WICK_N_CATEGORIES; i++)
    if (g_strcmp0 (name, wick_memory_category_to_string ((WickMemoryCategory)i)) == 0)
      {
        *category = (WickMemoryCategory)i;
        return TRUE;
      }
  return FALSE;
}

/* ---- the attach snapshot's lines, decoded ---------------------------------
 *
 * Each line is one JSON object written by libwick's control server
 * (backend/control/wick-control-snapshot.c); it comes from another process, so it
 * is checked in full (valid UTF-8, strict JSON by the model's scanner, no key
 * twice, bounded members and shape) and only the fields the stream uses are
 * read, into typed values. The other members of a module or stage line are
 * kept as their JSON text, which the extension record carries. */

/* A snapshot line with more members than this, or a shape of more
 * dimensions, is refused. */
#define SNAPSHOT_MAX_MEMBERS 256
#define SNAPSHOT_MAX_RANK 64

typedef struct
{
  char *kind;
  guint64 timestamp_ns;
  guint64 allocated_bytes;
  /* an allocation's */
  char *storage_id, *tensor_id, *device, *dtype, *op_name, *category;
  guint64 bytes;
  /* "address" (optional): the allocation's device address, 0 when absent;
   * address_problem says why a value that is there is not one */
  guint64 address;
  const char *address_problem;
  gboolean has_address;
  gboolean has_shape, shape_is_array;
  guint rank;
  guint64 shape[SNAPSHOT_MAX_RANK];
  /* the members other than "kind" and "timestamp_ns", as "KEY":VALUE,...
   * (when asked for) */
  GString *fields;
} SnapshotFields;

typedef struct
{
  GString *error;
  char *unescape;
  gsize unescape_size;
  GHashTable *keys; /* the keys of the line being read */
} SnapshotDecoder;

static void
snapshot_decoder_init (SnapshotDecoder *decoder)
{
  decoder->error = g_string_new (NULL);
  decoder->unescape = NULL;
  decoder->unescape_size = 0;
  decoder->keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
snapshot_decoder_clear (SnapshotDecoder *decoder)
{
  g_string_free (decoder->error, TRUE);
  g_free (decoder->unescape);
  g_hash_table_unref (decoder->keys);
}

static void
snapshot_fields_clear (SnapshotFields *fields)
{
  g_free (fields->kind);
  g_free (fields->storage_id);
  g_free (fields->tensor_id);
  g_free (fields->device);
  g_free (fields->dtype);
  g_free (fields->op_name);
  g_free (fields->category);
  GString *text = fields->fields;
  memset (fields, 0, sizeof *fields);
  if (text != NULL)
    g_string_truncate (text, 0);
  fields->fields = text;
}

/* The string at the cursor into *@out (NULL when the value is not a string). */
static gboolean
read_member_string (WickJsonScanner *scanner, char **out)
{
  WickJsonType type;
  if (!wick_json_peek_type (scanner, &type))
    return FALSE;
  g_clear_pointer (out, g_free);
  if (type != WICK_JSON_STRING)
    return wick_json_skip_value (scanner);
  const char *str;
  gsize len;
  if (!wick_json_read_string (scanner, &str, &len))
    return FALSE;
  *out = g_strndup (str, len);
  return TRUE;
}

/* A non-negative integer at the cursor into *@out (0 for any other value). */
static gboolean
read_member_uint (WickJsonScanner *scanner, guint64 *out)
{
  WickJsonType type;
  if (!wick_json_peek_type (scanner, &type))
    return FALSE;
  *out = 0;
  if (type != WICK_JSON_NUMBER)
    return wick_json_skip_value (scanner);
  WickJsonNumber number;
  if (!wick_json_read_number (scanner, &number))
    return FALSE;
  if (number.kind == WICK_JSON_U64)
    *out = number.u64;
  return TRUE;
}

/* An allocation's "address" (docs/protocol.md, "snapshot"), checked as the
 * trace's "wick_address" is (docs/format.md): the raw value must be a string
 * of "0x" and 1 to 16 hex digits, not zero; an escape is not a hex digit. Any
 * other value leaves the problem in @fields (check_allocation refuses it). */
static gboolean
read_address (WickJsonScanner *scanner, SnapshotFields *fields)
{
  wick_json_skip_whitespace (scanner);
  const char *value = scanner->p;
  if (!wick_json_skip_value (scanner))
    return FALSE;
  gsize length = (gsize)(scanner->p - value);
  fields->has_address = TRUE;
  fields->address = 0;
  if (length < 2 || value[0] != '"' || value[length - 1] != '"')
    {
      fields->address_problem = "not a string";
      return TRUE;
    }
  const char *digits = value + 1, *end = value + length - 1;
  if (end - digits < 3 || digits[0] != '0' || digits[1] != 'x')
    {
      fields->address_problem = "not \"0x\" and hex digits";
      return TRUE;
    }
  digits += 2;
  if (end - digits > 16)
    {
      fields->address_problem = "more than 16 hex digits";
      return TRUE;
    }
  guint64 address = 0;
  for (const char *p = digits; p < end; p++)
    {
      int v = g_ascii_xdigit_value (*p);
      if (v < 0)
        {
          fields->address_problem = "not \"0x\" and hex digits";
          return TRUE;
        }
      address = address << 4 | (guint64)v;
    }
  if (address == 0)
    {
      fields->address_problem = "zero";
      return TRUE;
    }
  fields->address = address;
  return TRUE;
}

static gboolean
read_shape (WickJsonScanner *scanner, SnapshotFields *fields)
{
  WickJsonType type;
  if (!wick_json_peek_type (scanner, &type))
    return FALSE;
  fields->has_shape = TRUE;
  fields->shape_is_array = type == WICK_JSON_ARRAY;
  fields->rank = 0;
  if (!fields->shape_is_array)
    return wick_json_skip_value (scanner);
  if (!wick_json_array_begin (scanner))
    return FALSE;
  gboolean first = TRUE;
  while (wick_json_array_next (scanner, &first))
    {
      if (fields->rank == SNAPSHOT_MAX_RANK)
        return wick_json_fail (scanner, "\"shape\" has more than %d dimensions",
                               SNAPSHOT_MAX_RANK);
      if (!read_member_uint (scanner, &fields->shape[fields->rank++]))
        return FALSE;
    }
  return !wick_json_failed (scanner);
}

/* Decodes one line into @fields (cleared first); with @keep_fields, the
 * members other than "kind" and "timestamp_ns" are kept as text too. On
 * failure the reason is in decoder->error. */
static gboolean
snapshot_line_decode (SnapshotDecoder *decoder, const char *line, gsize length,
                      gboolean keep_fields, SnapshotFields *fields)
{
  snapshot_fields_clear (fields);
  g_hash_table_remove_all (decoder->keys);
  if (!wick_utf8_validate (line, length))
    {
      g_string_assign (decoder->error, "not valid UTF-8");
      return FALSE;
    }
  if (decoder->unescape_size < length + 1)
    {
      decoder->unescape_size = MAX (length + 1, 2 * decoder->unescape_size);
      decoder->unescape = g_realloc (decoder->unescape, decoder->unescape_size);
    }
  WickJsonScanner scanner;
  wick_json_scanner_init (&scanner, line, line + length, decoder->error, decoder->unescape);
  WickJsonType type;
  if (!wick_json_peek_type (&scanner, &type))
    return FALSE;
  if (type != WICK_JSON_OBJECT)
    {
      g_string_assign (decoder->error, "not a JSON object");
      return FALSE;
    }
  if (keep_fields && fields->fields == NULL)
    fields->fields = g_string_new (NULL);
  if (!wick_json_object_begin (&scanner))
    return FALSE;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint members = 0;
  while (wick_json_object_next (&scanner, &first, &key, &key_len))
    {
      if (++members > SNAPSHOT_MAX_MEMBERS)
        return wick_json_fail (&scanner, "more than %d members", SNAPSHOT_MAX_MEMBERS);
      char *name = g_strndup (key, key_len);
      if (!g_hash_table_add (decoder->keys, name))
        return wick_json_fail (&scanner, "the key \"%s\" twice", name);
      gboolean ok;
      if (strcmp (name, "kind") == 0)
        ok = read_member_string (&scanner, &fields->kind);
      else if (strcmp (name, "timestamp_ns") == 0)
        ok = read_member_uint (&scanner, &fields->timestamp_ns);
      else
        {
          wick_json_skip_whitespace (&scanner);
          const char *value = scanner.p;
          if (strcmp (name, "allocated_bytes") == 0)
            ok = read_member_uint (&scanner, &fields->allocated_bytes);
          else if (strcmp (name, "bytes") == 0)
            ok = read_member_uint (&scanner, &fields->bytes);
          else if (strcmp (name, "storage_id") == 0)
            ok = read_member_string (&scanner, &fields->storage_id);
          else if (strcmp (name, "tensor_id") == 0)
            ok = read_member_string (&scanner, &fields->tensor_id);
          else if (strcmp (name, "device") == 0)
            ok = read_member_string (&scanner, &fields->device);
          else if (strcmp (name, "dtype") == 0)
            ok = read_member_string (&scanner, &fields->dtype);
          else if (strcmp (name, "op_name") == 0)
            ok = read_member_string (&scanner, &fields->op_name);
          else if (strcmp (name, "category") == 0)
            ok = read_member_string (&scanner, &fields->category);
          else if (strcmp (name, "shape") == 0)
            ok = read_shape (&scanner, fields);
          else if (strcmp (name, "address") == 0)
            ok = read_address (&scanner, fields);
          else
            ok = wick_json_skip_value (&scanner);
          if (ok && keep_fields)
            {
              if (fields->fields->len > 0)
                g_string_append_c (fields->fields, ',');
              wick_json_append_string (fields->fields, key, key_len);
              g_string_append_c (fields->fields, ':');
              g_string_append_len (fields->fields, value, scanner.p - value);
            }
        }
      if (!ok)
        return FALSE;
    }
  if (wick_json_failed (&scanner))
    return FALSE;
  wick_json_skip_whitespace (&scanner);
  if (scanner.p != scanner.end)
    return wick_json_fail (&scanner, "trailing characters");
  return TRUE;
}

static void
emit_snapshot_allocation (WickLiveStream *self, const SnapshotFields *fields)
{
  WickMemoryRecord memory = { 0 };
  memory.timestamp_ns = self->snapshot_ns;
  memory.storage_id = fields->storage_id;
  memory.tensor_id = fields->tensor_id;
  memory.device = fields->device;
  memory.dtype = fields->dtype;
  memory.op_name = fields->op_name;
  memory.bytes = fields->bytes;
  memory.span = 1; /* the root: the allocating span may have closed before the attach */
  memory.action = WICK_MEMORY_ALLOC;
  parse_category (fields->category, &memory.category);
  memory.shape = fields->shape;
  memory.rank = fields->shape_is_array ? fields->rank : 0;
  memory.address = fields->address; /* 0: none sent (an older libwick) */
  WickRingRecord record = { .kind = WICK_RING_RECORD_MEMORY };
  record.memory = memory;
  g_autofree char *key = g_strdup_printf ("%s\x1f%s", memory.device, memory.storage_id);
  LiveStorage *live = g_new0 (LiveStorage, 1);
  live->alloc_ns = fields->timestamp_ns;
  live->from_snapshot = TRUE;
  g_hash_table_replace (self->live_storages, g_steal_pointer (&key), live);
  self->decorate_line = !self->strict;
  self->decorate_alloc_ns = live->alloc_ns;
  wick_jsonl_formatter_feed (self->formatter, &record, on_line, self);
  self->decorate_line = FALSE;
}

/* After the reader's opening records (meta, root, open spans): the snapshot,
 * stamped at its own time on the root span. */
static void
emit_snapshot (WickLiveStream *self)
{
  if (!self->has_snapshot || self->snapshot_emitted || !self->opened)
    return;
  self->snapshot_emitted = TRUE;
  SnapshotDecoder decoder;
  SnapshotFields fields = { 0 };
  snapshot_decoder_init (&decoder);
  for (guint i = 0; i < self->snapshot_lines->len; i++)
    {
      const SnapshotLine *line = &g_array_index (self->snapshot_lines, SnapshotLine, i);
      if (line->rank == 0 && self->header_on_meta)
        continue; /* on the meta line already */
      /* checked when applied: decodes, an object, not too deep */
      if (!snapshot_line_decode (&decoder, (const char *)self->snapshot_text->data + line->offset,
                                 line->length, line->rank != 1, &fields))
        continue;
      if (line->rank == 1)
        {
          emit_snapshot_allocation (self, &fields);
          self->snapshot_storages++;
          continue;
        }
      self->snapshot_modules += g_strcmp0 (fields.kind, "wick_snapshot_module") == 0;
      self->snapshot_stages += g_strcmp0 (fields.kind, "wick_snapshot_stage") == 0;
      WickRingRecord record = { .kind = WICK_RING_RECORD_EXTENSION };
      record.extension.kind = fields.kind;
      record.extension.timestamp_ns = self->snapshot_ns;
      record.extension.json_fields = fields.fields->str;
      wick_jsonl_formatter_feed (self->formatter, &record, on_line, self);
    }
  snapshot_fields_clear (&fields);
  if (fields.fields != NULL)
    g_string_free (fields.fields, TRUE);
  snapshot_decoder_clear (&decoder);
  g_clear_pointer (&self->snapshot_text, g_byte_array_unref);
  g_clear_pointer (&self->snapshot_lines, g_array_unref);
}

static bool
on_record (const WickRingRecord *record, void *user_data)
{
  WickLiveStream *self = user_data;
  if (record->kind == WICK_RING_RECORD_META)
    self->opened = TRUE;
  else if (!self->snapshot_emitted
           && !(record->kind == WICK_RING_RECORD_SPAN_START
                && (record->span.id == 1 || record->span.synthesized)))
    emit_snapshot (self);
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
  if (self->finished || self->reader == NULL)
    return 0;
  WickError error;
  self->emit = emit;
  self->emit_data = user_data;
  /* Span records straight from the ring to lines (libwick's fast path), once
   * the snapshot is out (it goes before the first live record); the others
   * through on_record. */
  long n = self->snapshot_emitted
             ? wick_ring_reader_drain_jsonl (self->reader, max_records, self->formatter, on_line,
                                             self, on_record, self, &error)
             : wick_ring_reader_drain (self->reader, max_records, on_record, self, &error);
  if (n > 0)
    self->records += (guint64)n;
  if (wick_ring_reader_is_drained (self->reader))
    emit_snapshot (self);
  self->emit = NULL;
  self->emit_data = NULL;
  return n > 0 ? (guint64)n : 0;
}

WickProducerState
wick_live_stream_get_producer_state (WickLiveStream *self)
{
  return self->reader != NULL ? wick_ring_reader_get_producer_state (self->reader)
                              : WICK_PRODUCER_RUNNING;
}

gboolean
wick_live_stream_is_drained (WickLiveStream *self)
{
  return self->reader == NULL || wick_ring_reader_is_drained (self->reader);
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

guint64
wick_live_stream_get_names_cut (WickLiveStream *self)
{
  return wick_ring_reader_get_names_cut (self->reader);
}

void
wick_live_stream_get_reader_stats (WickLiveStream *self, WickRingReaderStats *stats)
{
  if (self->reader == NULL)
    memset (stats, 0, sizeof *stats);
  else
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
  emit_snapshot (self);
  g_autofree char *partial = wick_live_stream_describe_partial (self);
  wick_jsonl_formatter_set_partial (self->formatter, partial);
  wick_jsonl_formatter_finish (self->formatter, reason, on_line, self);
  self->emit = NULL;
  self->emit_data = NULL;
}

/* The snapshot's bytes. Only a regular file (a memfd) is read: an eventfd,
 * a FIFO or a socket from a hostile peer could block a read forever; and the
 * reading stops at SNAPSHOT_READ_TIMEOUT_US whatever the file is. */
static gboolean
read_all (int fd, GByteArray *bytes, GError **error)
{
  struct stat st = { 0 };
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the attach snapshot is not a regular file (%s), so it is not read",
                   st.st_mode == 0 ? g_strerror (errno)
                   : S_ISFIFO (st.st_mode) ? "a FIFO"
                   : S_ISSOCK (st.st_mode) ? "a socket"
                   : S_ISCHR (st.st_mode) ? "a character device"
                                          : "an eventfd or other special file");
      return FALSE;
    }
  if ((guint64)st.st_size > SNAPSHOT_MAX_BYTES)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the attach snapshot is larger than %" G_GUINT64_FORMAT " MiB",
                   SNAPSHOT_MAX_BYTES >> 20);
      return FALSE;
    }
  gint64 deadline = g_get_monotonic_time () + SNAPSHOT_READ_TIMEOUT_US;
  g_byte_array_set_size (bytes, (guint)st.st_size); /* one allocation of the right size */
  g_byte_array_set_size (bytes, 0);
  guint8 chunk[65536];
  off_t offset = 0;
  for (;;)
    {
      if (g_get_monotonic_time () > deadline)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "reading the attach snapshot took more than %d s",
                       (int)(SNAPSHOT_READ_TIMEOUT_US / G_USEC_PER_SEC));
          return FALSE;
        }
      ssize_t n = pread (fd, chunk, sizeof chunk, offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "cannot read the attach snapshot: %s", g_strerror (errno));
          return FALSE;
        }
      if (n == 0)
        return TRUE;
      if (bytes->len + (guint64)n > SNAPSHOT_MAX_BYTES)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "the attach snapshot is larger than %" G_GUINT64_FORMAT " MiB",
                       SNAPSHOT_MAX_BYTES >> 20);
          return FALSE;
        }
      g_byte_array_append (bytes, chunk, (guint)n);
      offset += n;
    }
}

static gboolean
check_allocation (const SnapshotFields *fields, guint line, GError **error)
{
  const struct
  {
    const char *name;
    const char *value;
  } required[] = { { "storage_id", fields->storage_id },
                   { "tensor_id", fields->tensor_id },
                   { "device", fields->device },
                   { "dtype", fields->dtype } };
  for (gsize i = 0; i < G_N_ELEMENTS (required); i++)
    if (required[i].value == NULL)
      {
        g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                     "attach snapshot line %u: an allocation lacks the string \"%s\"", line,
                     required[i].name);
        return FALSE;
      }
  WickMemoryCategory category;
  if (!parse_category (fields->category, &category))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: unknown memory category \"%s\"", line,
                   fields->category ?: "(none)");
      return FALSE;
    }
  if (fields->has_shape && !fields->shape_is_array)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: \"shape\" is not an array", line);
      return FALSE;
    }
  if (fields->has_address && fields->address_problem != NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: \"address\" is not an address (%s)", line,
                   fields->address_problem);
      return FALSE;
    }
  return TRUE;
}

static guint32
snapshot_rank (const char *kind)
{
  if (g_strcmp0 (kind, "wick_attach_snapshot") == 0)
    return 0;
  if (g_strcmp0 (kind, "wick_snapshot_allocation") == 0)
    return 1;
  return 2;
}

/* The header, then allocations oldest first, then the rest as sent. */
static gint
compare_snapshot_lines (gconstpointer a, gconstpointer b)
{
  const SnapshotLine *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  if (x->rank == 1 && x->timestamp_ns != y->timestamp_ns)
    return x->timestamp_ns < y->timestamp_ns ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Checks the line at *@data (number @line_number), steps over it and indexes it
 * in @lines; the header's time into *@timestamp_ns. */
static gboolean
apply_snapshot_line (WickLiveStream *self, SnapshotDecoder *decoder, SnapshotFields *fields,
                     const char *text, const char **data, const char *end, guint line_number,
                     GArray *lines, guint64 *timestamp_ns, GError **error)
{
  const char *start = *data;
  const char *newline = memchr (start, '\n', (gsize)(end - start));
  if (newline == NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: no newline at the end", line_number);
      return FALSE;
    }
  if (line_number > SNAPSHOT_MAX_LINES)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the attach snapshot has more than %d lines", SNAPSHOT_MAX_LINES);
      return FALSE;
    }
  gsize length = (gsize)(newline - start);
  if (wick_live_json_too_deep (start, length, WICK_LIVE_MAX_JSON_DEPTH))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: nested deeper than %d levels", line_number,
                   WICK_LIVE_MAX_JSON_DEPTH);
      return FALSE;
    }
  if (!snapshot_line_decode (decoder, start, length, FALSE, fields))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: %s", line_number, decoder->error->str);
      return FALSE;
    }
  const char *kind = fields->kind;
  if (line_number == 1)
    {
      if (g_strcmp0 (kind, "wick_attach_snapshot") != 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "attach snapshot line 1: expected kind \"wick_attach_snapshot\", "
                       "found \"%s\"", kind ?: "(none)");
          return FALSE;
        }
      *timestamp_ns = fields->timestamp_ns;
      self->snapshot_bytes = fields->allocated_bytes;
      /* the line as the other process wrote it, checked above: one JSON
       * object, kind first as it came */
      g_free (self->snapshot_header);
      self->snapshot_header = g_strndup (start, length);
    }
  else if (kind == NULL || !g_str_has_prefix (kind, "wick_snapshot_"))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "attach snapshot line %u: unknown kind \"%s\"", line_number, kind ?: "(none)");
      return FALSE;
    }
  else if (strcmp (kind, "wick_snapshot_allocation") == 0
           && !check_allocation (fields, line_number, error))
    return FALSE;
  SnapshotLine line = { (gsize)(start - text), (guint32)length, snapshot_rank (kind),
                        fields->timestamp_ns, line_number };
  g_array_append_val (lines, line);
  *data = newline + 1;
  return TRUE;
}

gboolean
wick_live_stream_apply_snapshot (WickLiveStream *self, int fd, GError **error)
{
  g_return_val_if_fail (!self->has_snapshot && self->records == 0, FALSE);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  if (!read_all (fd, bytes, error))
    return FALSE;
  g_autoptr (GArray) lines = g_array_new (FALSE, FALSE, sizeof (SnapshotLine));
  const char *data = (const char *)bytes->data, *end = data + bytes->len;
  guint line_number = 0;
  guint64 timestamp_ns = 0;
  SnapshotDecoder decoder;
  SnapshotFields fields = { 0 };
  gboolean ok = TRUE;
  snapshot_decoder_init (&decoder);
  while (ok && data < end)
    ok = apply_snapshot_line (self, &decoder, &fields, (const char *)bytes->data, &data, end,
                              ++line_number, lines, &timestamp_ns, error);
  snapshot_fields_clear (&fields);
  snapshot_decoder_clear (&decoder);
  if (!ok)
    return FALSE;
  if (line_number == 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL, "the attach snapshot is empty");
      return FALSE;
    }
  g_array_sort (lines, compare_snapshot_lines);
  self->has_snapshot = TRUE;
  self->snapshot_ns = timestamp_ns;
  self->snapshot_text = g_steal_pointer (&bytes);
  self->snapshot_lines = g_steal_pointer (&lines);
  return TRUE;
}

gboolean
wick_live_stream_request_snapshot (WickLiveStream *self, WickLiveConnection *connection,
                                   GError **error)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("snapshot");
  int fd = -1;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, request, WICK_LIVE_REQUEST_TIMEOUT_MS, &fd, error);
  if (reply == NULL || !wick_live_reply_check (reply, error))
    {
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  if (fd < 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the session at %s sent no snapshot file with its reply",
                   wick_live_connection_get_path (connection));
      return FALSE;
    }
  gboolean ok = wick_live_stream_apply_snapshot (self, fd, error);
  close (fd);
  return ok;
}

gboolean
wick_live_stream_has_snapshot (WickLiveStream *self)
{
  return self->has_snapshot;
}

guint64
wick_live_stream_get_snapshot_allocated_bytes (WickLiveStream *self)
{
  return self->snapshot_bytes;
}

guint64
wick_live_stream_get_snapshot_duplicates (WickLiveStream *self)
{
  return self->snapshot_duplicates;
}

WickLiveStream *
wick_live_stream_attach (WickLiveConnection *connection, gboolean strict,
                         WickLiveSessionInfo **info_out, GError **snapshot_error, GError **error)
{
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, error);
  if (info == NULL)
    return NULL;
  if (ring_fd < 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the session of %s (pid %" G_GINT64_FORMAT ") sent no ring with its hello",
                   info->program, info->pid);
      return NULL;
    }
  WickLiveStream *stream = wick_live_stream_new (ring_fd, strict, error);
  close (ring_fd);
  if (stream == NULL)
    return NULL;
  wick_live_stream_request_snapshot (stream, connection, snapshot_error);
  *info_out = g_steal_pointer (&info);
  return stream;
}

guint64
wick_live_stream_get_attached_ns (WickLiveStream *self)
{
  return self->has_snapshot ? self->snapshot_ns : self->start.opened_ns;
}

static guint64
wick_live_stream_get_missing (WickLiveStream *self)
{
  return self->start.records_before > self->start.redelivered
           ? self->start.records_before - self->start.redelivered
           : 0;
}

gboolean
wick_live_stream_is_partial (WickLiveStream *self)
{
  return wick_live_stream_get_missing (self) > 0 || !self->start.exact;
}

static char *
wick_live_stream_describe_partial (WickLiveStream *self)
{
  if (!wick_live_stream_is_partial (self))
    return NULL;
  GString *why = g_string_new (NULL);
  g_string_printf (why, "attached at %.1f s: records before that are missing (",
                   (double)wick_live_stream_get_attached_ns (self) / 1e9);
  if (self->start.exact)
    g_string_append_printf (why,
                            "%" G_GUINT64_FORMAT " record%s: ", wick_live_stream_get_missing (self),
                            wick_live_stream_get_missing (self) == 1 ? "" : "s");
  g_string_append (why, "spans that ended before it, their ops, tensors, gradients, memory events "
                        "and Wick records)");
  if (self->has_snapshot)
    g_string_append_printf (why,
                            "; the attach snapshot gave the %" G_GUINT64_FORMAT
                            " storage%s live then, %" G_GUINT64_FORMAT
                            " weight module%s and %" G_GUINT64_FORMAT " stage%s",
                            self->snapshot_storages, self->snapshot_storages == 1 ? "" : "s",
                            self->snapshot_modules, self->snapshot_modules == 1 ? "" : "s",
                            self->snapshot_stages, self->snapshot_stages == 1 ? "" : "s");
  else
    g_string_append (why, "; no attach snapshot: storages allocated before it are missing too");
  return g_string_free (why, FALSE);
}
