/* wick-session-records.c — the records other than spans: checked against what
 * candle-graph's reader and writer demand, encoded into the calling thread's
 * ring (wick-record-codec.c), no lock.
 */
#include "wick-session-internal.h"

#include "common/wick-json.h"
#include "wick-record-codec.h"

#include <ctype.h>
#include <stdio.h>

#define MUST_WRITE_TIMEOUT_NS (UINT64_C (10) * 1000 * 1000 * 1000)
#include <math.h>

static bool
is_blank (const char *string)
{
  if (string == NULL)
    return true;
  for (; *string != '\0'; string++)
    if (!isspace ((unsigned char)*string))
      return false;
  return true;
}

static bool
write_record_full (WickSession *session, uint8_t kind, const WickRingRecord *record,
                   bool must_write, WickError *error)
{
  WickEncoder encoder = { NULL, sizeof (WickRecordHeader) };
  wick_encode_payload (&encoder, kind, record);
  uint64_t size = encoder.pos;
  if (size > WICK_RING_MAX_RECORD)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "the record is %llu bytes encoded, more than the ring's %d",
                      (unsigned long long)size, WICK_RING_MAX_RECORD);
      return false;
    }
  WickProducer *producer = wick_producer_get (session);
  if (producer == &wick_producer_none && session->forked)
    return true; /* a forked child records nothing, counted (wick_session_note_forked_record) */
  if (producer == &wick_producer_none)
    {
      atomic_fetch_add (&session->header->unclaimed_dropped, 1);
      wick_set_error (error, WICK_ERROR_DROPPED, "dropped: all %u thread rings are in use", session->n_rings);
      return false;
    }
  uint8_t *space = must_write ? wick_producer_reserve_wait (producer, size, MUST_WRITE_TIMEOUT_NS)
                              : wick_producer_reserve (producer, size);
  if (space == NULL)
    {
      if (must_write)
        wick_set_error (error, WICK_ERROR_TIMED_OUT, "the ring stayed full for 10 s: no reader took the final records");
      else
        wick_set_error (error, WICK_ERROR_DROPPED, "dropped: the ring is full (drop policy)");
      return false;
    }
  encoder.base = space;
  encoder.pos = sizeof (WickRecordHeader);
  wick_encode_payload (&encoder, kind, record);
  wick_producer_commit (producer, space, size, kind);
  return true;
}

static bool
write_record (WickSession *session, uint8_t kind, const WickRingRecord *record, WickError *error)
{
  return write_record_full (session, kind, record, false, error);
}

static bool
check_session (WickSession *session, const void *record, WickError *error)
{
  if (session == NULL || record == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "a session and a record are required");
      return false;
    }
  if (atomic_load_explicit (&session->finished, memory_order_relaxed))
    {
      wick_set_error (error, WICK_ERROR_STATE, "the session is finished; nothing can be recorded after its "
                             "terminal");
      return false;
    }
  return true;
}

static bool
check_required (const char *value, const char *record, const char *field, WickError *error)
{
  if (value == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "%s: %s is required", record, field);
      return false;
    }
  return true;
}

static bool
check_shape (const uint64_t *shape, size_t rank, const char *record, WickError *error)
{
  if (rank > 0 && shape == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "%s: shape is NULL with rank %zu", record, rank);
      return false;
    }
  return true;
}

bool
wick_session_record_op (WickSession *session, const WickOpRecord *op, WickError *error)
{
  if (!check_session (session, op, error)
      || !WICK_CHECK_RESERVED (op, "WickOpRecord", error) || !check_required (op->op_name, "op", "op_name", error)
      || !check_required (op->dtype, "op", "dtype", error)
      || !check_required (op->device, "op", "device", error)
      || !check_shape (op->shape, op->rank, "op", error))
    return false;
  if (op->n_inputs > 0 && op->inputs == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "op: inputs is NULL with n_inputs %zu", op->n_inputs);
      return false;
    }
  for (size_t i = 0; i < op->n_inputs; i++)
    if (!check_required (op->inputs[i], "op", "every input", error))
      return false;
  WickRingRecord record = { .kind = WICK_RING_RECORD_OP };
  record.op = *op;
  if (!op->has_output_dense_bytes)
    record.op.has_output_dense_bytes
      = wick_dense_bytes (op->shape, op->rank, op->dtype, &record.op.output_dense_bytes);
  if (op->timestamp_ns == 0)
    {
      uint64_t now = wick_session_clock (session);
      record.op.timestamp_ns = now > op->duration_ns ? now - op->duration_ns : 0;
    }
  return write_record (session, WICK_KIND_OP, &record, error);
}

bool
wick_session_record_tensor (WickSession *session, const WickTensorRecord *tensor, WickError *error)
{
  if (!check_session (session, tensor, error)
      || !WICK_CHECK_RESERVED (tensor, "WickTensorRecord", error)
      || !check_required (tensor->tensor_id, "tensor", "tensor_id", error)
      || !check_required (tensor->dtype, "tensor", "dtype", error)
      || !check_required (tensor->device, "tensor", "device", error)
      || !check_shape (tensor->shape, tensor->rank, "tensor", error))
    return false;
  if ((unsigned)tensor->category >= WICK_N_CATEGORIES)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "tensor: category %d is not a memory category", tensor->category);
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_TENSOR };
  record.tensor = *tensor;
  if (!tensor->has_dense_bytes)
    record.tensor.has_dense_bytes
      = wick_dense_bytes (tensor->shape, tensor->rank, tensor->dtype, &record.tensor.dense_bytes);
  return write_record (session, WICK_KIND_TENSOR, &record, error);
}

/* candle-graph's streaming check of tensor_stats (spec §3.6). */
static bool
check_tensor_stats (const WickTensorStatsRecord *stats, WickError *error)
{
  if (is_blank (stats->label))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "invalid tensor_stats: label must not be blank");
      return false;
    }
  uint64_t product = 1;
  for (size_t i = 0; i < stats->rank; i++)
    if (__builtin_mul_overflow (product, stats->shape[i], &product))
      {
        wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                        "invalid tensor_stats \"%s\": the element count of its shape "
                        "overflows u64",
                        stats->label);
        return false;
      }
  if (product != stats->elements)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "invalid tensor_stats \"%s\": elements %llu differs from the "
                      "shape's %llu",
                      stats->label, (unsigned long long)stats->elements,
                      (unsigned long long)product);
      return false;
    }
  if (stats->non_finite > stats->elements)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "invalid tensor_stats \"%s\": non_finite %llu exceeds elements %llu",
                      stats->label, (unsigned long long)stats->non_finite,
                      (unsigned long long)stats->elements);
      return false;
    }
  if (!isfinite (stats->rms) || stats->rms < 0.0 || !isfinite (stats->abs_max)
      || stats->abs_max < 0.0 || !isfinite (stats->mean))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "invalid tensor_stats \"%s\": rms and abs_max must be finite and "
                      ">= 0, mean finite",
                      stats->label);
      return false;
    }
  return true;
}

bool
wick_session_record_tensor_stats (WickSession *session, const WickTensorStatsRecord *stats,
                                  WickError *error)
{
  if (!check_session (session, stats, error)
      || !WICK_CHECK_RESERVED (stats, "WickTensorStatsRecord", error)
      || !check_required (stats->dtype, "tensor_stats", "dtype", error)
      || !check_shape (stats->shape, stats->rank, "tensor_stats", error)
      || !check_tensor_stats (stats, error))
    return false;
  WickRingRecord record = { .kind = WICK_RING_RECORD_TENSOR_STATS };
  record.tensor_stats = *stats;
  return write_record (session, WICK_KIND_TENSOR_STATS, &record, error);
}

bool
wick_session_record_memory (WickSession *session, const WickMemoryRecord *memory, WickError *error)
{
  if (!check_session (session, memory, error)
      || !WICK_CHECK_RESERVED (memory, "WickMemoryRecord", error)
      || !check_required (memory->storage_id, "memory", "storage_id", error)
      || !check_required (memory->tensor_id, "memory", "tensor_id", error)
      || !check_required (memory->device, "memory", "device", error)
      || !check_required (memory->dtype, "memory", "dtype", error)
      || !check_shape (memory->shape, memory->rank, "memory", error))
    return false;
  if ((unsigned)memory->action > WICK_MEMORY_FREE
      || (unsigned)memory->category >= WICK_N_CATEGORIES)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "memory: action or category out of range");
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_MEMORY };
  record.memory = *memory;
  if (session->forked)
    return write_record (session, WICK_KIND_MEMORY, &record, error); /* not noted: the parent's table */
  wick_live_state_note_memory (session, &record.memory); /* resolves WICK_NOW */
  return write_record (session, WICK_KIND_MEMORY, &record, error);
}

bool
wick_session_record_device_memory (WickSession *session, const WickDeviceMemoryRecord *sample,
                                   WickError *error)
{
  if (!check_session (session, sample, error)
      || !WICK_CHECK_RESERVED (sample, "WickDeviceMemoryRecord", error)
      || !check_required (sample->device, "device_memory", "device", error))
    return false;
  if (!sample->has_used_bytes && !sample->has_free_bytes && !sample->has_reserved_bytes
      && !sample->has_capacity_bytes)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "device-memory checkpoint must contain at least one observation");
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_DEVICE_MEMORY };
  record.device_memory = *sample;
  if (sample->timestamp_ns == WICK_NOW)
    record.device_memory.timestamp_ns = wick_session_clock (session);
  return write_record (session, WICK_KIND_DEVICE_MEMORY, &record, error);
}

bool
wick_session_record_device_interval (WickSession *session, const WickDeviceIntervalRecord *interval,
                                     WickError *error)
{
  if (!check_session (session, interval, error)
      || !WICK_CHECK_RESERVED (interval, "WickDeviceIntervalRecord", error)
      || !check_required (interval->device, "device_interval", "device", error)
      || !check_required (interval->stream_id, "device_interval", "stream_id", error)
      || !check_required (interval->clock_id, "device_interval", "clock_id", error)
      || !check_required (interval->backend, "device_interval", "backend", error))
    return false;
  if (interval->duration_ns == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "device interval duration must be positive");
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_DEVICE_INTERVAL };
  record.device_interval = *interval;
  return write_record (session, WICK_KIND_DEVICE_INTERVAL, &record, error);
}

bool
wick_session_record_call_edge (WickSession *session, WickSpanId from, WickSpanId to,
                               uint64_t host_duration_ns, WickError *error)
{
  if (!check_session (session, session, error))
    return false;
  if (from == 0 || to == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "call edge: from and to must be span ids (not 0)");
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_CALL_EDGE };
  record.call_edge.from = from;
  record.call_edge.to = to;
  record.call_edge.host_duration_ns = host_duration_ns;
  return write_record (session, WICK_KIND_CALL_EDGE, &record, error);
}

bool
wick_session_record_data_edge (WickSession *session, const char *from_tensor, const char *to_tensor,
                               WickError *error)
{
  if (!check_session (session, session, error))
    return false;
  if (from_tensor == NULL || to_tensor == NULL || from_tensor[0] == '\0' || to_tensor[0] == '\0')
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "data-edge tensor IDs cannot be empty");
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_DATA_EDGE };
  record.data_edge.from_tensor = from_tensor;
  record.data_edge.to_tensor = to_tensor;
  return write_record (session, WICK_KIND_DATA_EDGE, &record, error);
}

static bool
gradient_norm_is_valid (WickGradientState state, bool has_norm, double norm)
{
  switch (state)
    {
      case WICK_GRADIENT_PRESENT:
        return has_norm && isfinite (norm) && norm > 0.0;
      case WICK_GRADIENT_ZERO:
        return has_norm && norm == 0.0 && !signbit (norm);
      case WICK_GRADIENT_MISSING:
      case WICK_GRADIENT_NON_FINITE:
        return !has_norm;
      default:
        return false;
    }
}

bool
wick_session_record_gradient (WickSession *session, const char *root, const char *key,
                              WickGradientState state, bool has_norm, double norm, WickError *error)
{
  if (!check_session (session, session, error))
    return false;
  if (is_blank (root) || is_blank (key))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient roots and parameter keys must not be empty");
      return false;
    }
  if ((unsigned)state > WICK_GRADIENT_NON_FINITE)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient state %d is not a gradient state", state);
      return false;
    }
  if (!gradient_norm_is_valid (state, has_norm, norm))
    {
      char text[40] = "None";
      if (has_norm)
        snprintf (text, sizeof text, "Some(%g)", norm);
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "gradient state `%s` is inconsistent with norm %s",
                      wick_gradient_state_to_string (state), text);
      return false;
    }
  WickRingRecord record = { .kind = WICK_RING_RECORD_GRADIENT };
  record.gradient.event_number = atomic_fetch_add (&session->next_gradient, 1) + 1;
  record.gradient.root = root;
  record.gradient.key = key;
  record.gradient.state = state;
  record.gradient.has_norm = has_norm;
  record.gradient.norm = has_norm ? norm : 0.0;
  return write_record (session, WICK_KIND_GRADIENT, &record, error);
}

static bool
write_extension (WickSession *session, const char *kind, uint64_t timestamp_ns,
                 const char *json_fields, WickError *error)
{
  WickRingRecord record = { .kind = WICK_RING_RECORD_EXTENSION };
  record.extension.kind = kind;
  record.extension.timestamp_ns = timestamp_ns;
  record.extension.json_fields = json_fields;
  return write_record (session, WICK_KIND_EXTENSION, &record, error);
}

bool
wick_session_record_extension (WickSession *session, const char *kind, const char *json_fields,
                               WickError *error)
{
  if (!check_session (session, session, error))
    return false;
  if (kind == NULL || strncmp (kind, "wick_", 5) != 0 || kind[5] == '\0')
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "extension kind \"%s\" must start with \"wick_\"",
                      kind ? kind : "(null)");
      return false;
    }
  for (const char *p = kind; *p != '\0'; p++)
    if (!(islower ((unsigned char)*p) || isdigit ((unsigned char)*p) || *p == '_'))
      {
        wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "extension kind \"%s\" may hold only a-z, 0-9 and _", kind);
        return false;
      }
  return write_extension (session, kind, wick_session_clock (session),
                          json_fields ? json_fields : "", error);
}

bool
wick_session_mark (WickSession *session, const char *label, WickError *error)
{
  if (!check_session (session, session, error))
    return false;
  if (label == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "a mark needs a label");
      return false;
    }
  WickJson fields;
  wick_json_init (&fields);
  wick_json_raw (&fields, "\"label\":");
  wick_json_string (&fields, label);
  if (fields.failed)
    {
      wick_json_clear (&fields);
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory formatting a mark");
      return false;
    }
  bool ok
    = write_extension (session, "wick_mark", wick_session_clock (session), fields.data, error);
  wick_json_clear (&fields);
  return ok;
}

void
wick_session_write_foreign_end (WickSession *session, WickSpanId span, uint32_t owner,
                                uint32_t thread, uint64_t count)
{
  char fields[160];
  snprintf (fields, sizeof fields,
            "\"span\":\"s%llu\",\"began_on_thread\":%u,\"ended_on_thread\":%u,\"count\":%llu",
            (unsigned long long)span, owner, thread, (unsigned long long)count);
  /* under the drop policy a full ring drops it (counted there); the count
   * reaches the terminal through the next one or finish's */
  write_extension (session, "wick_span_end_foreign", wick_session_clock (session), fields, NULL);
}

bool
wick_session_write_terminal (WickSession *session, bool complete, uint64_t timestamp_ns,
                             const char *reason, WickError *error)
{
  /* past the records of each foreign end, one with the total: the
   * terminal's count is the largest one seen */
  uint64_t foreign = atomic_load (&session->foreign_ends);
  if (foreign > WICK_FOREIGN_END_RECORDS)
    wick_session_write_foreign_end (session, 0, 0, 0, foreign);
  WickRingRecord record = { .kind = WICK_RING_RECORD_TERMINAL };
  record.terminal.outcome = complete ? WICK_OUTCOME_COMPLETE : WICK_OUTCOME_FAILED;
  record.terminal.timestamp_ns = timestamp_ns;
  record.terminal.reason = complete ? NULL : reason;
  return write_record_full (session, WICK_KIND_TERMINAL, &record, true, error);
}

bool
wick_session_write_span_end_root (WickSession *session, uint64_t duration_ns, WickError *error)
{
  WickProducer *producer = wick_producer_get (session);
  if (producer == &wick_producer_none)
    {
      wick_set_error (error, WICK_ERROR_NO_SPACE, "all %u thread rings are in use; the root span cannot end",
                      session->n_rings);
      return false;
    }
  WickSpanEndRecord *record
    = wick_producer_reserve_wait (producer, sizeof *record, MUST_WRITE_TIMEOUT_NS);
  if (record == NULL)
    {
      wick_set_error (error, WICK_ERROR_TIMED_OUT, "the ring stayed full for 10 s: no reader took the final records");
      return false;
    }
  memset (&record->span, 0, sizeof record->span);
  record->span.id = 1;
  record->span.name = session->header->root_name;
  record->span.span_kind = WICK_SPAN_FUNCTION;
  record->duration_ns = duration_ns;
  wick_producer_commit (producer, record, sizeof *record, WICK_KIND_SPAN_END);
  return true;
}
