/* wick-record-codec.c — encoding and checked decoding of ring record payloads. */
#include "wick-record-codec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ABSENT_STRING 0xffffffffu

static size_t
round8 (size_t n)
{
  return (n + 7) & ~(size_t)7;
}

/* The encoder's cells. Inlined into encode_payload, which wick_encode_payload
 * instantiates twice: measuring (base NULL, only the position moves) and
 * writing; a record is measured and then written (wick-session-records.c), so
 * neither pass calls out for a cell. */
#define ENCODE_INLINE static inline __attribute__ ((always_inline))

ENCODE_INLINE void
encode_u64 (WickEncoder *encoder, uint64_t value)
{
  if (encoder->base != NULL)
    memcpy (encoder->base + encoder->pos, &value, 8);
  encoder->pos += 8;
}

ENCODE_INLINE void
encode_double (WickEncoder *encoder, double value)
{
  uint64_t bits;
  memcpy (&bits, &value, 8);
  encode_u64 (encoder, bits);
}

ENCODE_INLINE void
encode_string_len (WickEncoder *encoder, const char *string, uint32_t length)
{
  size_t size = round8 (4 + (size_t)length + 1);
  if (encoder->base != NULL)
    {
      uint8_t *p = encoder->base + encoder->pos;
      /* the NUL and the padding lie in the cell's last word (size >= 8):
       * zeroed first, then the length and the bytes over it */
      uint64_t zero = 0;
      memcpy (p + size - 8, &zero, 8);
      memcpy (p, &length, 4);
      memcpy (p + 4, string, length);
    }
  encoder->pos += size;
}

ENCODE_INLINE void
encode_string (WickEncoder *encoder, const char *string)
{
  if (string == NULL)
    string = "";
  size_t length = strlen (string);
  if (length > WICK_RING_MAX_RECORD)
    length = WICK_RING_MAX_RECORD; /* the record is refused as too large anyway */
  encode_string_len (encoder, string, (uint32_t)length);
}

ENCODE_INLINE void
encode_optional_string (WickEncoder *encoder, const char *string)
{
  if (string != NULL)
    {
      encode_string (encoder, string);
      return;
    }
  if (encoder->base != NULL)
    {
      uint32_t absent = ABSENT_STRING, zero = 0;
      memcpy (encoder->base + encoder->pos, &absent, 4);
      memcpy (encoder->base + encoder->pos + 4, &zero, 4);
    }
  encoder->pos += 8;
}

ENCODE_INLINE void
encode_u64_array (WickEncoder *encoder, const uint64_t *values, size_t n)
{
  encode_u64 (encoder, n);
  if (encoder->base != NULL && n > 0)
    memcpy (encoder->base + encoder->pos, values, n * 8);
  encoder->pos += n * 8;
}

ENCODE_INLINE void
encode_string_array (WickEncoder *encoder, const char *const *values, size_t n)
{
  encode_u64 (encoder, n);
  for (size_t i = 0; i < n; i++)
    encode_string (encoder, values[i]);
}

ENCODE_INLINE void
encode_payload (WickEncoder *e, uint8_t kind, const WickRingRecord *r)
{
  switch (kind)
    {
      case WICK_KIND_OP:
        encode_u64 (e, r->op.span);
        encode_string (e, r->op.op_name);
        encode_string_array (e, r->op.inputs, r->op.n_inputs);
        encode_optional_string (e, r->op.output);
        encode_u64_array (e, r->op.shape, r->op.rank);
        encode_string (e, r->op.dtype);
        encode_string (e, r->op.device);
        encode_u64 (e, r->op.duration_ns);
        encode_u64 (e, r->op.timestamp_ns);
        encode_u64 (e, r->op.has_output_dense_bytes);
        encode_u64 (e, r->op.output_dense_bytes);
        encode_u64 (e, r->op.input_dense_bytes);
        break;
      case WICK_KIND_TENSOR:
        encode_u64 (e, r->tensor.span);
        encode_string (e, r->tensor.tensor_id);
        encode_optional_string (e, r->tensor.label);
        encode_u64_array (e, r->tensor.shape, r->tensor.rank);
        encode_string (e, r->tensor.dtype);
        encode_string (e, r->tensor.device);
        encode_u64 (e, (r->tensor.requires_grad ? 1u : 0u)
                              | (r->tensor.has_dense_bytes ? 2u : 0u));
        encode_u64 (e, r->tensor.dense_bytes);
        encode_u64 (e, (uint64_t)r->tensor.category);
        break;
      case WICK_KIND_TENSOR_STATS:
        encode_u64 (e, r->tensor_stats.span);
        encode_string (e, r->tensor_stats.label);
        encode_u64_array (e, r->tensor_stats.shape, r->tensor_stats.rank);
        encode_string (e, r->tensor_stats.dtype);
        encode_u64 (e, r->tensor_stats.elements);
        encode_u64 (e, r->tensor_stats.non_finite);
        encode_double (e, r->tensor_stats.rms);
        encode_double (e, r->tensor_stats.abs_max);
        encode_double (e, r->tensor_stats.mean);
        break;
      case WICK_KIND_MEMORY:
        encode_u64 (e, r->memory.timestamp_ns);
        encode_string (e, r->memory.storage_id);
        encode_string (e, r->memory.tensor_id);
        encode_u64 (e, r->memory.span);
        encode_optional_string (e, r->memory.op_name);
        encode_string (e, r->memory.device);
        encode_u64 (e, r->memory.bytes);
        encode_u64 (e, (uint64_t)r->memory.action);
        encode_u64_array (e, r->memory.shape, r->memory.rank);
        encode_string (e, r->memory.dtype);
        encode_u64 (e, (uint64_t)r->memory.category);
        encode_u64 (e, r->memory.address); /* appended: readers of the prefix skip it */
        break;
      case WICK_KIND_DEVICE_MEMORY:
        encode_u64 (e, r->device_memory.timestamp_ns);
        encode_string (e, r->device_memory.device);
        encode_u64 (e, (r->device_memory.has_used_bytes ? 1u : 0u)
                              | (r->device_memory.has_free_bytes ? 2u : 0u)
                              | (r->device_memory.has_reserved_bytes ? 4u : 0u)
                              | (r->device_memory.has_capacity_bytes ? 8u : 0u));
        encode_u64 (e, r->device_memory.used_bytes);
        encode_u64 (e, r->device_memory.free_bytes);
        encode_u64 (e, r->device_memory.reserved_bytes);
        encode_u64 (e, r->device_memory.capacity_bytes);
        break;
      case WICK_KIND_DEVICE_INTERVAL:
        encode_u64 (e, r->device_interval.span);
        encode_string (e, r->device_interval.device);
        encode_string (e, r->device_interval.stream_id);
        encode_string (e, r->device_interval.clock_id);
        encode_string (e, r->device_interval.backend);
        encode_u64 (e, r->device_interval.start_ns);
        encode_u64 (e, r->device_interval.duration_ns);
        break;
      case WICK_KIND_GRADIENT:
        encode_u64 (e, r->gradient.event_number);
        encode_string (e, r->gradient.root);
        encode_string (e, r->gradient.key);
        encode_u64 (e, (uint64_t)r->gradient.state);
        encode_u64 (e, r->gradient.has_norm);
        encode_double (e, r->gradient.norm);
        break;
      case WICK_KIND_CALL_EDGE:
        encode_u64 (e, r->call_edge.from);
        encode_u64 (e, r->call_edge.to);
        encode_u64 (e, r->call_edge.host_duration_ns);
        break;
      case WICK_KIND_DATA_EDGE:
        encode_string (e, r->data_edge.from_tensor);
        encode_string (e, r->data_edge.to_tensor);
        break;
      case WICK_KIND_TERMINAL:
        encode_u64 (e, (uint64_t)r->terminal.outcome);
        encode_u64 (e, r->terminal.timestamp_ns);
        encode_optional_string (e, r->terminal.reason);
        break;
      case WICK_KIND_EXTENSION:
        encode_string (e, r->extension.kind);
        encode_u64 (e, r->extension.timestamp_ns);
        encode_string (e, r->extension.json_fields);
        break;
      case WICK_KIND_DROPPED:
        encode_u64 (e, r->dropped.count);
        encode_u64 (e, r->dropped.first_ns);
        encode_u64 (e, r->dropped.last_ns);
        encode_u64 (e, r->dropped.total);
        break;
      case WICK_KIND_THREAD:
        encode_u64 (e, r->thread.number);
        encode_u64 (e, (uint64_t)(uint32_t)r->thread.os_tid);
        encode_u64 (e, r->thread.timestamp_ns);
        encode_string (e, r->thread.name);
        break;
      default:
        break;
    }
}

void
wick_encode_payload (WickEncoder *encoder, uint8_t kind, const WickRingRecord *record)
{
  /* a local copy: its base is known NULL or not through the whole pass */
  WickEncoder e = *encoder;
  if (e.base == NULL)
    encode_payload (&e, kind, record);
  else
    encode_payload (&e, kind, record);
  encoder->pos = e.pos;
}

/* ---------------------------------------------------------------------------
 * Decoding: every read goes through a cursor that knows the record's end.
 */

typedef struct
{
  const uint8_t *p;
  size_t pos;
  size_t size;
  WickDecodeScratch *scratch;
  size_t n_strings;
  const char *error; /* static description of the first failure */
} Cursor;

static uint64_t
read_u64 (Cursor *c)
{
  uint64_t value = 0;
  if (c->error != NULL)
    return 0;
  if (c->size - c->pos < 8)
    {
      c->error = "a field runs past the end of the record";
      return 0;
    }
  memcpy (&value, c->p + c->pos, 8);
  c->pos += 8;
  return value;
}

static double
read_double (Cursor *c)
{
  uint64_t bits = read_u64 (c);
  double value;
  memcpy (&value, &bits, 8);
  return value;
}

static const char *
read_string_or_absent (Cursor *c, bool optional)
{
  uint32_t length;
  if (c->error != NULL)
    return NULL;
  if (c->size - c->pos < 8)
    {
      c->error = "a string runs past the end of the record";
      return NULL;
    }
  memcpy (&length, c->p + c->pos, 4);
  if (length == ABSENT_STRING)
    {
      if (!optional)
        c->error = "a required string is marked absent";
      c->pos += 8;
      return NULL;
    }
  size_t size = round8 (4 + (size_t)length + 1);
  if (length > c->size || size > c->size - c->pos)
    {
      c->error = "a string length runs past the end of the record";
      return NULL;
    }
  const char *string = (const char *)c->p + c->pos + 4;
  if (string[length] != '\0' || memchr (string, '\0', length) != NULL)
    {
      c->error = "a string is not NUL-terminated at its length";
      return NULL;
    }
  c->pos += size;
  return string;
}

static const char *
read_string (Cursor *c)
{
  return read_string_or_absent (c, false);
}

static const char *
read_optional_string (Cursor *c)
{
  return read_string_or_absent (c, true);
}

static const uint64_t *
read_u64_array (Cursor *c, size_t *n)
{
  uint64_t count = read_u64 (c);
  *n = 0;
  if (c->error != NULL)
    return NULL;
  if (count > (c->size - c->pos) / 8)
    {
      c->error = "an array count runs past the end of the record";
      return NULL;
    }
  const uint64_t *values = (const uint64_t *)(const void *)(c->p + c->pos);
  c->pos += (size_t)count * 8;
  *n = (size_t)count;
  return values;
}

static const char *const *
read_string_array (Cursor *c, size_t *n)
{
  uint64_t count = read_u64 (c);
  *n = 0;
  if (c->error != NULL)
    return NULL;
  if (count > (c->size - c->pos) / 8 || c->n_strings + count > WICK_DECODE_MAX_STRINGS)
    {
      c->error = "a string array count runs past the end of the record";
      return NULL;
    }
  const char **strings = c->scratch->strings + c->n_strings;
  for (uint64_t i = 0; i < count; i++)
    {
      strings[i] = read_string (c);
      if (c->error != NULL)
        return NULL;
    }
  c->n_strings += (size_t)count;
  *n = (size_t)count;
  return strings;
}

static uint64_t
read_enum (Cursor *c, uint64_t limit, const char *what)
{
  uint64_t value = read_u64 (c);
  if (c->error == NULL && value >= limit)
    c->error = what;
  return value;
}

void
wick_arena_cache_clear (WickArenaCache *cache)
{
  for (size_t i = 0; i < WICK_ARENA_CACHE; i++)
    {
      free (cache->strings[i]);
      cache->strings[i] = NULL;
      cache->handles[i] = 0;
    }
}

const char *
wick_arena_resolve (const WickArenaView *arena, uint32_t handle)
{
  WickArenaCache *cache = arena != NULL ? arena->cache : NULL;
  size_t slot = (handle >> 3) % WICK_ARENA_CACHE;
  if (cache != NULL && handle != 0 && cache->handles[slot] == handle)
    return cache->strings[slot];
  uint32_t length;
  if (arena == NULL || arena->base == NULL || handle < 8 || (handle & 7) != 0
      || (uint64_t)handle + 8 > arena->used)
    return NULL;
  memcpy (&length, arena->base + handle, 4);
  if ((uint64_t)handle + 8 + length + 1 > arena->used)
    return NULL;
  const char *string = (const char *)arena->base + handle + 8;
  if (string[length] != '\0' || memchr (string, '\0', length) != NULL)
    return NULL;
  if (cache != NULL)
    {
      /* the copy is made once per handle: a cut name is counted each time it
       * is copied out of shared memory, not each time it is delivered */
      uint32_t keep = length;
      bool cut = arena->max_length > 0 && length > arena->max_length;
      if (cut)
        {
          keep = arena->max_length;
          while (keep > 0 && ((uint8_t)string[keep] & 0xc0) == 0x80)
            keep--; /* string[keep] is the first byte left out: not a continuation */
          if (arena->cut != NULL)
            (*arena->cut)++;
        }
      char *copy = malloc ((size_t)keep + (cut ? sizeof "\u2026" : 1));
      if (copy == NULL)
        return NULL;
      memcpy (copy, string, keep);
      if (cut)
        memcpy (copy + keep, "\u2026", sizeof "\u2026");
      else
        copy[length] = '\0';
      free (cache->strings[slot]);
      cache->handles[slot] = handle;
      cache->strings[slot] = copy;
      return copy;
    }
  return string;
}

static void
decode_span (Cursor *c, const WickArenaView *arena, WickRingRecord *out, bool end)
{
  WickSpanPayload span;
  if (c->size - c->pos < sizeof span + (end ? 8 : 0))
    {
      c->error = "a span record is shorter than its fields";
      return;
    }
  memcpy (&span, c->p + c->pos, sizeof span);
  c->pos += sizeof span;
  out->span.id = span.id;
  out->span.parent = span.parent;
  out->span.name = wick_arena_resolve (arena, span.name);
  out->span.span_kind = (WickSpanKind)span.span_kind;
  out->span.step = (WickStep)span.step;
  out->span.measured = span.measured != 0;
  out->span.synthesized = false;
  out->span.start_ns = span.start_ns;
  out->span.duration_ns = end ? read_u64 (c) : 0;
  if (out->span.name == NULL)
    c->error = "a span names a string outside the arena";
  else if (span.id == 0 || span.span_kind > WICK_SPAN_MODULE || span.step > WICK_STEP_OPTIMIZER)
    c->error = "a span has an invalid id, kind or step";
}

static void
decode_variable (Cursor *c, uint8_t kind, WickRingRecord *r)
{
  switch (kind)
    {
      case WICK_KIND_OP:
        r->kind = WICK_RING_RECORD_OP;
        r->op.span = read_u64 (c);
        r->op.op_name = read_string (c);
        r->op.inputs = read_string_array (c, &r->op.n_inputs);
        r->op.output = read_optional_string (c);
        r->op.shape = read_u64_array (c, &r->op.rank);
        r->op.dtype = read_string (c);
        r->op.device = read_string (c);
        r->op.duration_ns = read_u64 (c);
        r->op.timestamp_ns = read_u64 (c);
        r->op.has_output_dense_bytes = read_enum (c, 2, "a flag is not 0 or 1") != 0;
        r->op.output_dense_bytes = read_u64 (c);
        r->op.input_dense_bytes = read_u64 (c);
        break;
      case WICK_KIND_TENSOR:
        {
          r->kind = WICK_RING_RECORD_TENSOR;
          r->tensor.span = read_u64 (c);
          r->tensor.tensor_id = read_string (c);
          r->tensor.label = read_optional_string (c);
          r->tensor.shape = read_u64_array (c, &r->tensor.rank);
          r->tensor.dtype = read_string (c);
          r->tensor.device = read_string (c);
          uint64_t flags = read_enum (c, 4, "tensor flags are invalid");
          r->tensor.requires_grad = (flags & 1) != 0;
          r->tensor.has_dense_bytes = (flags & 2) != 0;
          r->tensor.dense_bytes = read_u64 (c);
          r->tensor.category
            = (WickMemoryCategory)read_enum (c, WICK_N_CATEGORIES, "a memory category is invalid");
          break;
        }
      case WICK_KIND_TENSOR_STATS:
        r->kind = WICK_RING_RECORD_TENSOR_STATS;
        r->tensor_stats.span = read_u64 (c);
        r->tensor_stats.label = read_string (c);
        r->tensor_stats.shape = read_u64_array (c, &r->tensor_stats.rank);
        r->tensor_stats.dtype = read_string (c);
        r->tensor_stats.elements = read_u64 (c);
        r->tensor_stats.non_finite = read_u64 (c);
        r->tensor_stats.rms = read_double (c);
        r->tensor_stats.abs_max = read_double (c);
        r->tensor_stats.mean = read_double (c);
        break;
      case WICK_KIND_MEMORY:
        r->kind = WICK_RING_RECORD_MEMORY;
        r->memory.timestamp_ns = read_u64 (c);
        r->memory.storage_id = read_string (c);
        r->memory.tensor_id = read_string (c);
        r->memory.span = read_u64 (c);
        r->memory.op_name = read_optional_string (c);
        r->memory.device = read_string (c);
        r->memory.bytes = read_u64 (c);
        r->memory.action = (WickMemoryAction)read_enum (c, 2, "a memory action is invalid");
        r->memory.shape = read_u64_array (c, &r->memory.rank);
        r->memory.dtype = read_string (c);
        r->memory.category
          = (WickMemoryCategory)read_enum (c, WICK_N_CATEGORIES, "a memory category is invalid");
        /* Appended after the category: a record written without it ends here. */
        r->memory.address = c->size - c->pos >= 8 ? read_u64 (c) : 0;
        break;
      case WICK_KIND_DEVICE_MEMORY:
        {
          r->kind = WICK_RING_RECORD_DEVICE_MEMORY;
          r->device_memory.timestamp_ns = read_u64 (c);
          r->device_memory.device = read_string (c);
          uint64_t present = read_enum (c, 16, "device memory flags are invalid");
          r->device_memory.has_used_bytes = (present & 1) != 0;
          r->device_memory.has_free_bytes = (present & 2) != 0;
          r->device_memory.has_reserved_bytes = (present & 4) != 0;
          r->device_memory.has_capacity_bytes = (present & 8) != 0;
          r->device_memory.used_bytes = read_u64 (c);
          r->device_memory.free_bytes = read_u64 (c);
          r->device_memory.reserved_bytes = read_u64 (c);
          r->device_memory.capacity_bytes = read_u64 (c);
          break;
        }
      case WICK_KIND_DEVICE_INTERVAL:
        r->kind = WICK_RING_RECORD_DEVICE_INTERVAL;
        r->device_interval.span = read_u64 (c);
        r->device_interval.device = read_string (c);
        r->device_interval.stream_id = read_string (c);
        r->device_interval.clock_id = read_string (c);
        r->device_interval.backend = read_string (c);
        r->device_interval.start_ns = read_u64 (c);
        r->device_interval.duration_ns = read_u64 (c);
        break;
      case WICK_KIND_GRADIENT:
        r->kind = WICK_RING_RECORD_GRADIENT;
        r->gradient.event_number = read_u64 (c);
        r->gradient.root = read_string (c);
        r->gradient.key = read_string (c);
        r->gradient.state = (WickGradientState)read_enum (c, 4, "a gradient state is invalid");
        r->gradient.has_norm = read_enum (c, 2, "a flag is not 0 or 1") != 0;
        r->gradient.norm = read_double (c);
        break;
      case WICK_KIND_CALL_EDGE:
        r->kind = WICK_RING_RECORD_CALL_EDGE;
        r->call_edge.from = read_u64 (c);
        r->call_edge.to = read_u64 (c);
        r->call_edge.host_duration_ns = read_u64 (c);
        break;
      case WICK_KIND_DATA_EDGE:
        r->kind = WICK_RING_RECORD_DATA_EDGE;
        r->data_edge.from_tensor = read_string (c);
        r->data_edge.to_tensor = read_string (c);
        break;
      case WICK_KIND_TERMINAL:
        r->kind = WICK_RING_RECORD_TERMINAL;
        r->terminal.outcome = (WickOutcome)read_enum (c, 2, "a terminal outcome is invalid");
        r->terminal.timestamp_ns = read_u64 (c);
        r->terminal.reason = read_optional_string (c);
        break;
      case WICK_KIND_EXTENSION:
        r->kind = WICK_RING_RECORD_EXTENSION;
        r->extension.kind = read_string (c);
        r->extension.timestamp_ns = read_u64 (c);
        r->extension.json_fields = read_string (c);
        if (c->error == NULL && strncmp (r->extension.kind, "wick_", 5) != 0)
          c->error = "an extension kind does not start with wick_";
        break;
      case WICK_KIND_DROPPED:
        r->kind = WICK_RING_RECORD_DROPPED;
        r->dropped.count = read_u64 (c);
        r->dropped.first_ns = read_u64 (c);
        r->dropped.last_ns = read_u64 (c);
        r->dropped.total = read_u64 (c);
        break;
      case WICK_KIND_THREAD:
        {
          r->kind = WICK_RING_RECORD_THREAD;
          uint64_t number = read_u64 (c);
          uint64_t tid = read_u64 (c);
          r->thread.timestamp_ns = read_u64 (c);
          r->thread.name = read_string (c);
          if (c->error == NULL && (number == 0 || number > UINT32_MAX || tid > UINT32_MAX))
            c->error = "a thread number or os tid is out of range";
          r->thread.number = (uint32_t)number;
          r->thread.os_tid = (int32_t)(uint32_t)tid;
          break;
        }
      default:
        break;
    }
}

WickDecodeResult
wick_record_decode (const uint8_t *record, size_t size, const WickArenaView *arena,
                    WickDecodeScratch *scratch, WickRingRecord *out, char *error, size_t error_size)
{
  WickRecordHeader header;
  if (size < sizeof header)
    {
      snprintf (error, error_size, "record of %zu bytes is shorter than its header", size);
      return WICK_DECODE_MALFORMED;
    }
  memcpy (&header, record, sizeof header);
  if (header.kind == WICK_KIND_PAD)
    return WICK_DECODE_PAD;
  if (header.kind > WICK_KIND_LAST)
    return WICK_DECODE_UNKNOWN_KIND;
  Cursor c = { record, sizeof header, size, scratch, 0, NULL };
  if (header.kind == WICK_KIND_SPAN_START || header.kind == WICK_KIND_SPAN_END)
    {
      out->ring = 0; /* every span field is set below: no need to clear the union */
      out->kind = header.kind == WICK_KIND_SPAN_START ? WICK_RING_RECORD_SPAN_START
                                                      : WICK_RING_RECORD_SPAN_END;
      decode_span (&c, arena, out, header.kind == WICK_KIND_SPAN_END);
    }
  else
    {
      memset (out, 0, sizeof *out);
      decode_variable (&c, header.kind, out);
    }
  if (c.error != NULL)
    {
      snprintf (error, error_size, "record kind %u seq %u: %s", header.kind, header.seq, c.error);
      return WICK_DECODE_MALFORMED;
    }
  return WICK_DECODE_OK;
}
