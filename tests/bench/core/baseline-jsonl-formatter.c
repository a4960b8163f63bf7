/* baseline-jsonl-formatter.c — the JSONL formatter as it was before the
 * two-digit/name-cache rewrite (main at 977f9ff, with wick_thread), kept verbatim under other
 * names so that bench-jsonl-formatter compares the two in the same run.
 * Not part of libwick. */
/* wick-jsonl-formatter.c — ring records as candle-graph/trace/10 JSONL lines.
 *
 * baseline_ring_record_format lays one record out exactly as candle-graph's
 * writer does (spec §2 and §3: kind first, fields in table order, optional
 * fields omitted). The BaselineJsonlFormatter keeps a stream of records a
 * parseable trace (spec §4): meta first, a span_start before every span_end
 * (synthesized from the span_end's copy of the span when the start was lost
 * or happened before a late reader attached), no duplicate span_start, the
 * terminal last and not before the latest host evidence.
 */
#include "baseline-jsonl-formatter.h"

#include "common/wick-json.h"
#include "wick-record-codec.h"

#include <stdio.h>
#include <stdlib.h>

static void
json_span_id (WickJson *json, const char *key, uint64_t id)
{
  char text[24];
  text[0] = 's';
  size_t length = 1 + wick_format_u64 (id, text + 1);
  wick_json_key (json, key);
  wick_json_string_len (json, text, length);
}

static void
json_kind (WickJson *json, const char *kind)
{
  wick_json_raw (json, "{\"kind\":");
  wick_json_string (json, kind);
}

static void
json_field_string (WickJson *json, const char *key, const char *value)
{
  wick_json_key (json, key);
  wick_json_string (json, value);
}

static void
json_field_u64 (WickJson *json, const char *key, uint64_t value)
{
  wick_json_key (json, key);
  wick_json_u64 (json, value);
}

static void
json_field_double (WickJson *json, const char *key, double value)
{
  wick_json_key (json, key);
  wick_json_double (json, value);
}

static void
json_field_shape (WickJson *json, const char *key, const uint64_t *shape, size_t rank)
{
  wick_json_key (json, key);
  wick_json_u64_array (json, shape, rank);
}

/* Span records are most of a trace: written straight into the buffer. */
static char *
put (char *out, const char *text, size_t length)
{
  memcpy (out, text, length);
  return out + length;
}

#define PUT(out, literal) put ((out), (literal), sizeof (literal) - 1)

static char *
put_span_id (char *out, uint64_t id)
{
  *out++ = '"';
  *out++ = 's';
  out += wick_format_u64 (id, out);
  *out++ = '"';
  return out;
}

static void
format_span_fast (WickJson *json, const WickRingRecord *record, bool with_thread)
{
  const WickRingSpan *span = &record->span;
  if (!wick_json_reserve (json, 256))
    return;
  char *start = json->data + json->length, *out = start;
  if (record->kind == WICK_RING_RECORD_SPAN_END)
    {
      out = PUT (out, "{\"kind\":\"span_end\",\"id\":");
      out = put_span_id (out, span->id);
      out = PUT (out, ",\"duration_ns\":");
      out += wick_format_u64 (span->duration_ns, out);
      *out++ = '}';
      json->length += (size_t)(out - start);
      json->data[json->length] = '\0';
      return;
    }
  out = PUT (out, "{\"kind\":\"span_start\",\"id\":");
  out = put_span_id (out, span->id);
  if (span->parent != 0)
    {
      out = PUT (out, ",\"parent_id\":");
      out = put_span_id (out, span->parent);
    }
  out = PUT (out, ",\"name\":");
  json->length += (size_t)(out - start);
  wick_json_string (json, span->name);
  if (!wick_json_reserve (json, 128))
    return;
  start = out = json->data + json->length;
  out = PUT (out, ",\"start_ns\":");
  out += wick_format_u64 (span->start_ns, out);
  out = PUT (out, ",\"span_kind\":\"");
  const char *kind = wick_span_kind_to_string (span->span_kind);
  out = put (out, kind, strlen (kind));
  out = span->measured ? PUT (out, "\",\"measured\":true") : PUT (out, "\",\"measured\":false");
  const char *step = wick_step_to_string (span->step);
  if (step != NULL)
    {
      out = PUT (out, ",\"step\":\"");
      out = put (out, step, strlen (step));
      *out++ = '"';
    }
  if (with_thread && span->thread != 0)
    {
      out = PUT (out, ",\"wick_thread\":");
      out += wick_format_u64 (span->thread, out);
    }
  *out++ = '}';
  json->length += (size_t)(out - start);
  json->data[json->length] = '\0';
}

static void
format_op (WickJson *json, const WickOpRecord *op)
{
  json_kind (json, "op");
  json_span_id (json, "span_id", op->span);
  json_field_string (json, "op_name", op->op_name);
  wick_json_key (json, "inputs");
  wick_json_string_array (json, op->inputs, op->n_inputs);
  if (op->output != NULL)
    json_field_string (json, "output", op->output);
  json_field_shape (json, "shape", op->shape, op->rank);
  json_field_string (json, "dtype", op->dtype);
  json_field_string (json, "device", op->device);
  json_field_u64 (json, "duration_ns", op->duration_ns);
  json_field_u64 (json, "timestamp_ns", op->timestamp_ns);
  if (op->has_output_dense_bytes)
    json_field_u64 (json, "output_dense_bytes", op->output_dense_bytes);
  json_field_u64 (json, "input_dense_bytes", op->input_dense_bytes);
  wick_json_raw (json, "}");
}

static void
format_tensor (WickJson *json, const WickTensorRecord *t)
{
  json_kind (json, "tensor");
  json_span_id (json, "span_id", t->span);
  json_field_string (json, "tensor_id", t->tensor_id);
  if (t->label != NULL)
    json_field_string (json, "label", t->label);
  json_field_shape (json, "shape", t->shape, t->rank);
  json_field_string (json, "dtype", t->dtype);
  json_field_string (json, "device", t->device);
  wick_json_key (json, "requires_grad");
  wick_json_bool (json, t->requires_grad);
  if (t->has_dense_bytes)
    json_field_u64 (json, "dense_bytes", t->dense_bytes);
  json_field_string (json, "category", wick_memory_category_to_string (t->category));
  wick_json_raw (json, "}");
}

static void
format_tensor_stats (WickJson *json, const WickTensorStatsRecord *s)
{
  json_kind (json, "tensor_stats");
  json_span_id (json, "span_id", s->span);
  json_field_string (json, "label", s->label);
  json_field_shape (json, "shape", s->shape, s->rank);
  json_field_string (json, "dtype", s->dtype);
  json_field_u64 (json, "elements", s->elements);
  json_field_u64 (json, "non_finite", s->non_finite);
  json_field_double (json, "rms", s->rms);
  json_field_double (json, "abs_max", s->abs_max);
  json_field_double (json, "mean", s->mean);
  wick_json_raw (json, "}");
}

static void
format_memory (WickJson *json, const WickMemoryRecord *m)
{
  json_kind (json, "memory");
  json_field_u64 (json, "timestamp_ns", m->timestamp_ns);
  json_field_string (json, "storage_id", m->storage_id);
  json_field_string (json, "tensor_id", m->tensor_id);
  json_span_id (json, "span_id", m->span);
  if (m->op_name != NULL)
    json_field_string (json, "op_name", m->op_name);
  json_field_string (json, "device", m->device);
  json_field_u64 (json, "bytes", m->bytes);
  json_field_string (json, "action", wick_memory_action_to_string (m->action));
  json_field_shape (json, "shape", m->shape, m->rank);
  json_field_string (json, "dtype", m->dtype);
  json_field_string (json, "category", wick_memory_category_to_string (m->category));
  wick_json_raw (json, "}");
}

static void
format_device_memory (WickJson *json, const WickDeviceMemoryRecord *s)
{
  json_kind (json, "device_memory");
  json_field_u64 (json, "timestamp_ns", s->timestamp_ns);
  json_field_string (json, "device", s->device);
  if (s->has_used_bytes)
    json_field_u64 (json, "used_bytes", s->used_bytes);
  if (s->has_free_bytes)
    json_field_u64 (json, "free_bytes", s->free_bytes);
  if (s->has_reserved_bytes)
    json_field_u64 (json, "reserved_bytes", s->reserved_bytes);
  if (s->has_capacity_bytes)
    json_field_u64 (json, "capacity_bytes", s->capacity_bytes);
  wick_json_raw (json, "}");
}

static void
format_device_interval (WickJson *json, const WickDeviceIntervalRecord *d)
{
  json_kind (json, "device_interval");
  json_span_id (json, "span_id", d->span);
  json_field_string (json, "device", d->device);
  json_field_string (json, "stream_id", d->stream_id);
  json_field_string (json, "clock_id", d->clock_id);
  json_field_string (json, "backend", d->backend);
  json_field_u64 (json, "start_ns", d->start_ns);
  json_field_u64 (json, "duration_ns", d->duration_ns);
  wick_json_raw (json, "}");
}

static void
format_gradient (WickJson *json, const WickRingRecord *r)
{
  char event_id[40];
  snprintf (event_id, sizeof event_id, "gradient-%llu",
            (unsigned long long)r->gradient.event_number);
  json_kind (json, "gradient");
  json_field_string (json, "event_id", event_id);
  json_field_string (json, "root", r->gradient.root);
  json_field_string (json, "key", r->gradient.key);
  json_field_string (json, "state", wick_gradient_state_to_string (r->gradient.state));
  if (r->gradient.has_norm)
    json_field_double (json, "norm", r->gradient.norm);
  wick_json_raw (json, "}");
}

static void
format_extension (WickJson *json, const char *kind, uint64_t timestamp_ns, const char *fields)
{
  json_kind (json, kind);
  json_field_u64 (json, "timestamp_ns", timestamp_ns);
  if (fields != NULL && fields[0] != '\0')
    {
      wick_json_raw (json, ",");
      wick_json_raw (json, fields);
    }
  wick_json_raw (json, "}");
}

static void
format_counted (WickJson *json, const WickRingRecord *r)
{
  bool dropped = r->kind == WICK_RING_RECORD_DROPPED;
  json_kind (json, dropped ? "wick_dropped" : "wick_lost");
  json_field_u64 (json, "timestamp_ns", dropped ? r->dropped.last_ns : r->lost.after_ns);
  json_field_u64 (json, "ring", r->ring);
  json_field_u64 (json, "count", dropped ? r->dropped.count : r->lost.count);
  if (dropped)
    {
      json_field_u64 (json, "first_ns", r->dropped.first_ns);
      json_field_u64 (json, "last_ns", r->dropped.last_ns);
      json_field_u64 (json, "total", r->dropped.total);
    }
  wick_json_raw (json, "}");
}

/* The agreed shape (docs/format.md): kind, thread, os_tid, name, timestamp_ns. */
static void
format_thread (WickJson *json, const WickRingRecord *r)
{
  json_kind (json, "wick_thread");
  json_field_u64 (json, "thread", r->thread.number);
  json_field_u64 (json, "os_tid", r->thread.os_tid > 0 ? (uint64_t)r->thread.os_tid : 0);
  json_field_string (json, "name", r->thread.name != NULL ? r->thread.name : "");
  json_field_u64 (json, "timestamp_ns", r->thread.timestamp_ns);
  wick_json_raw (json, "}");
}

/* strict: pure trace/10, spans without wick_thread. */
static void
record_to_json (const WickRingRecord *r, WickJson *json, bool strict)
{
  switch (r->kind)
    {
      case WICK_RING_RECORD_META:
        wick_json_raw (json, r->meta.line ? r->meta.line : "");
        break;
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        format_span_fast (json, r, !strict);
        break;
      case WICK_RING_RECORD_OP:
        format_op (json, &r->op);
        break;
      case WICK_RING_RECORD_THREAD:
        format_thread (json, r);
        break;
      case WICK_RING_RECORD_TENSOR:
        format_tensor (json, &r->tensor);
        break;
      case WICK_RING_RECORD_TENSOR_STATS:
        format_tensor_stats (json, &r->tensor_stats);
        break;
      case WICK_RING_RECORD_MEMORY:
        format_memory (json, &r->memory);
        break;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        format_device_memory (json, &r->device_memory);
        break;
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        format_device_interval (json, &r->device_interval);
        break;
      case WICK_RING_RECORD_GRADIENT:
        format_gradient (json, r);
        break;
      case WICK_RING_RECORD_CALL_EDGE:
        json_kind (json, "edge");
        json_field_string (json, "edge_kind", "call");
        json_span_id (json, "from_span", r->call_edge.from);
        json_span_id (json, "to_span", r->call_edge.to);
        json_field_u64 (json, "host_duration_ns", r->call_edge.host_duration_ns);
        wick_json_raw (json, "}");
        break;
      case WICK_RING_RECORD_DATA_EDGE:
        json_kind (json, "edge");
        json_field_string (json, "edge_kind", "data");
        json_field_string (json, "from_tensor", r->data_edge.from_tensor);
        json_field_string (json, "to_tensor", r->data_edge.to_tensor);
        wick_json_raw (json, "}");
        break;
      case WICK_RING_RECORD_TERMINAL:
        json_kind (json, "terminal");
        json_field_string (json, "outcome",
                           r->terminal.outcome == WICK_OUTCOME_COMPLETE ? "complete" : "failed");
        json_field_u64 (json, "timestamp_ns", r->terminal.timestamp_ns);
        if (r->terminal.reason != NULL)
          json_field_string (json, "reason", r->terminal.reason);
        wick_json_raw (json, "}");
        break;
      case WICK_RING_RECORD_EXTENSION:
        format_extension (json, r->extension.kind, r->extension.timestamp_ns,
                          r->extension.json_fields);
        break;
      case WICK_RING_RECORD_DROPPED:
      case WICK_RING_RECORD_LOST:
        format_counted (json, r);
        break;
    }
}

size_t
baseline_ring_record_format (const WickRingRecord *record, char *buffer, size_t size)
{
  WickJson json;
  wick_json_init (&json);
  record_to_json (record, &json, false);
  size_t length = json.length;
  if (size > 0 && buffer != NULL)
    {
      size_t copy = length < size - 1 ? length : size - 1;
      if (json.data != NULL)
        memcpy (buffer, json.data, copy);
      buffer[copy] = '\0';
    }
  wick_json_clear (&json);
  return length;
}

/* ---------------------------------------------------------------------------
 * The stateful formatter
 */

/* Open span ids: linear probing with backward-shift deletion; 0 is empty. */
typedef struct
{
  uint64_t *slots;
  size_t mask;
  size_t count;
} SpanSet;

static size_t
span_slot (uint64_t id, size_t mask)
{
  return (size_t)((id * UINT64_C (0x9e3779b97f4a7c15)) >> 20) & mask;
}

static bool
span_set_grow (SpanSet *set)
{
  size_t n = set->slots ? (set->mask + 1) * 2 : 256;
  uint64_t *slots = calloc (n, sizeof *slots);
  if (slots == NULL)
    return false;
  for (size_t i = 0; set->slots && i <= set->mask; i++)
    if (set->slots[i] != 0)
      {
        size_t j = span_slot (set->slots[i], n - 1);
        while (slots[j] != 0)
          j = (j + 1) & (n - 1);
        slots[j] = set->slots[i];
      }
  free (set->slots);
  set->slots = slots;
  set->mask = n - 1;
  return true;
}

static bool
span_set_contains (const SpanSet *set, uint64_t id)
{
  if (set->slots == NULL)
    return false;
  for (size_t i = span_slot (id, set->mask);; i = (i + 1) & set->mask)
    {
      if (set->slots[i] == id)
        return true;
      if (set->slots[i] == 0)
        return false;
    }
}

static void
span_set_add (SpanSet *set, uint64_t id)
{
  if ((set->count + 1) * 2 > (set->slots ? set->mask + 1 : 0) && !span_set_grow (set))
    return;
  size_t i = span_slot (id, set->mask);
  while (set->slots[i] != 0 && set->slots[i] != id)
    i = (i + 1) & set->mask;
  if (set->slots[i] == 0)
    set->count++;
  set->slots[i] = id;
}

static void
span_set_remove (SpanSet *set, uint64_t id)
{
  if (set->slots == NULL)
    return;
  size_t i = span_slot (id, set->mask);
  while (set->slots[i] != id)
    {
      if (set->slots[i] == 0)
        return;
      i = (i + 1) & set->mask;
    }
  set->slots[i] = 0;
  set->count--;
  for (size_t j = (i + 1) & set->mask; set->slots[j] != 0; j = (j + 1) & set->mask)
    {
      uint64_t moved = set->slots[j];
      set->slots[j] = 0;
      size_t k = span_slot (moved, set->mask);
      while (set->slots[k] != 0)
        k = (k + 1) & set->mask;
      set->slots[k] = moved;
    }
}

struct BaselineJsonlFormatter
{
  bool strict;
  bool meta_emitted;
  bool has_terminal;
  bool finished;
  WickOutcome terminal_outcome;
  uint64_t terminal_ns;
  char *terminal_reason;
  uint64_t evidence_ns;
  SpanSet open;
  /* wick_thread records emitted: number -> hash of os tid and name, so that
   * the snapshot's and the stream's copies of one identity give one line */
  uint64_t *thread_seen;
  size_t n_thread_seen;
  WickJson json;
  uint64_t lines;
  uint64_t skipped;
};

BaselineJsonlFormatter *
baseline_jsonl_formatter_new (bool strict)
{
  BaselineJsonlFormatter *formatter = calloc (1, sizeof *formatter);
  if (formatter == NULL)
    return NULL;
  formatter->strict = strict;
  wick_json_init (&formatter->json);
  return formatter;
}

void
baseline_jsonl_formatter_free (BaselineJsonlFormatter *formatter)
{
  if (formatter == NULL)
    return;
  free (formatter->open.slots);
  free (formatter->thread_seen);
  free (formatter->terminal_reason);
  wick_json_clear (&formatter->json);
  free (formatter);
}

static void
emit_record (BaselineJsonlFormatter *formatter, const WickRingRecord *record, WickLineFunc emit,
             void *user_data)
{
  wick_json_reset (&formatter->json);
  record_to_json (record, &formatter->json, formatter->strict);
  if (formatter->json.failed)
    {
      formatter->skipped++;
      return;
    }
  formatter->lines++;
  emit (formatter->json.data, formatter->json.length, user_data);
}

static uint64_t
saturating_add (uint64_t a, uint64_t b)
{
  return a + b < a ? UINT64_MAX : a + b;
}

static void
note_evidence (BaselineJsonlFormatter *formatter, uint64_t end_ns)
{
  if (end_ns > formatter->evidence_ns)
    formatter->evidence_ns = end_ns;
}

static void
feed_span (BaselineJsonlFormatter *formatter, const WickRingRecord *record, WickLineFunc emit,
           void *user_data)
{
  const WickRingSpan *span = &record->span;
  bool open = span_set_contains (&formatter->open, span->id);
  if (record->kind == WICK_RING_RECORD_SPAN_START)
    {
      if (open)
        {
          formatter->skipped++; /* the snapshot already announced it */
          return;
        }
      span_set_add (&formatter->open, span->id);
      note_evidence (formatter, span->start_ns);
      emit_record (formatter, record, emit, user_data);
      return;
    }
  if (!open)
    {
      WickRingRecord start = *record;
      start.kind = WICK_RING_RECORD_SPAN_START;
      emit_record (formatter, &start, emit, user_data);
    }
  span_set_remove (&formatter->open, span->id);
  note_evidence (formatter, saturating_add (span->start_ns, span->duration_ns));
  emit_record (formatter, record, emit, user_data);
}

static uint64_t
thread_identity_hash (const WickRingRecord *record)
{
  uint64_t hash = UINT64_C (0xcbf29ce484222325) ^ (uint32_t)record->thread.os_tid;
  for (const char *p = record->thread.name ? record->thread.name : ""; *p != '\0'; p++)
    hash = (hash ^ (unsigned char)*p) * UINT64_C (0x100000001b3);
  return hash | 1;
}

/* False when this thread number was already announced with this identity. */
static bool
thread_is_new (BaselineJsonlFormatter *formatter, const WickRingRecord *record)
{
  uint32_t number = record->thread.number;
  uint64_t hash = thread_identity_hash (record);
  if (number >= formatter->n_thread_seen)
    {
      size_t n = formatter->n_thread_seen ? formatter->n_thread_seen : 16;
      while (n <= number)
        n *= 2;
      uint64_t *seen = realloc (formatter->thread_seen, n * sizeof *seen);
      if (seen == NULL)
        return true;
      memset (seen + formatter->n_thread_seen, 0, (n - formatter->n_thread_seen) * sizeof *seen);
      formatter->thread_seen = seen;
      formatter->n_thread_seen = n;
    }
  if (formatter->thread_seen[number] == hash)
    return false;
  formatter->thread_seen[number] = hash;
  return true;
}

static void
keep_terminal (BaselineJsonlFormatter *formatter, const WickRingRecord *record)
{
  if (formatter->has_terminal)
    {
      formatter->skipped++;
      return;
    }
  formatter->has_terminal = true;
  formatter->terminal_outcome = record->terminal.outcome;
  formatter->terminal_ns = record->terminal.timestamp_ns;
  if (record->terminal.reason != NULL)
    formatter->terminal_reason = strdup (record->terminal.reason);
}

void
baseline_jsonl_formatter_feed (BaselineJsonlFormatter *formatter, const WickRingRecord *record,
                           WickLineFunc emit, void *user_data)
{
  if (formatter->finished)
    {
      formatter->skipped++;
      return;
    }
  if (record->kind == WICK_RING_RECORD_META)
    {
      if (formatter->meta_emitted)
        formatter->skipped++;
      else
        {
          formatter->meta_emitted = true;
          emit_record (formatter, record, emit, user_data);
        }
      return;
    }
  if (!formatter->meta_emitted)
    {
      formatter->skipped++;
      return;
    }
  switch (record->kind)
    {
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        feed_span (formatter, record, emit, user_data);
        return;
      case WICK_RING_RECORD_TERMINAL:
        keep_terminal (formatter, record);
        return;
      case WICK_RING_RECORD_THREAD:
        if (formatter->strict || !thread_is_new (formatter, record))
          {
            formatter->skipped++;
            return;
          }
        break;
      case WICK_RING_RECORD_EXTENSION:
      case WICK_RING_RECORD_DROPPED:
      case WICK_RING_RECORD_LOST:
        if (formatter->strict)
          {
            formatter->skipped++;
            return;
          }
        break;
      case WICK_RING_RECORD_OP:
        note_evidence (formatter, saturating_add (record->op.timestamp_ns, record->op.duration_ns));
        break;
      case WICK_RING_RECORD_MEMORY:
        note_evidence (formatter, record->memory.timestamp_ns);
        break;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        note_evidence (formatter, record->device_memory.timestamp_ns);
        break;
      default:
        break;
    }
  emit_record (formatter, record, emit, user_data);
}

void
baseline_jsonl_formatter_finish (BaselineJsonlFormatter *formatter, const char *reason_if_none,
                             WickLineFunc emit, void *user_data)
{
  if (formatter->finished || !formatter->meta_emitted)
    return;
  formatter->finished = true;
  WickRingRecord terminal = { .kind = WICK_RING_RECORD_TERMINAL };
  if (formatter->has_terminal)
    {
      terminal.terminal.outcome = formatter->terminal_outcome;
      terminal.terminal.timestamp_ns = formatter->terminal_ns;
      terminal.terminal.reason = formatter->terminal_reason;
    }
  else
    {
      terminal.terminal.outcome = WICK_OUTCOME_FAILED;
      terminal.terminal.reason = reason_if_none && reason_if_none[0]
                                   ? reason_if_none
                                   : "the capture ended without a terminal record";
    }
  if (terminal.terminal.timestamp_ns < formatter->evidence_ns)
    terminal.terminal.timestamp_ns = formatter->evidence_ns;
  emit_record (formatter, &terminal, emit, user_data);
}
