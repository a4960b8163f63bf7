/* wick-trace-record.c — schemas of the trace records and their strict decoder
 * and writer (see the header for the serde semantics reproduced). */
#include "config.h"

#include "wick-trace-record.h"

#include <string.h>

#include "common/wick-spellings.h"
#include "wick-json-scanner.h"

/* ---- schemas ---------------------------------------------------------- */

/* The trace format's own words; libwick's enums are spelled in backend/common
 * (wick-spellings.h). */
static const char *const kind_variants[] = {
  "meta",          "span_start",      "span_end", "op",   "tensor",   "tensor_stats", "memory",
  "device_memory", "device_interval", "gradient", "edge", "terminal", NULL,
};
static const char *const outcome_variants[] = { "complete", "failed", NULL };
static const char *const edge_kind_variants[] = { "call", "data", NULL };

#define F(n) n, sizeof n - 1
#define REQ(n, t)                                                                                  \
  {                                                                                                \
    F (n), WICK_FIELD_##t, WICK_FIELD_REQUIRED, 0, 0, NULL, NULL                                   \
  }
#define OPT(n, t)                                                                                  \
  {                                                                                                \
    F (n), WICK_FIELD_##t, WICK_FIELD_OPTIONAL, 0, 0, NULL, NULL                                   \
  }
#define DEF(n, t)                                                                                  \
  {                                                                                                \
    F (n), WICK_FIELD_##t, WICK_FIELD_DEFAULT, 0, 0, NULL, NULL                                    \
  }
#define REQ_ENUM(n, v)                                                                             \
  {                                                                                                \
    F (n), WICK_FIELD_ENUM, WICK_FIELD_REQUIRED, 0, 0, v, NULL                                     \
  }
#define OPT_ENUM(n, v)                                                                             \
  {                                                                                                \
    F (n), WICK_FIELD_ENUM, WICK_FIELD_OPTIONAL, 0, 0, v, NULL                                     \
  }
#define DEF_ENUM(n, v, d)                                                                          \
  {                                                                                                \
    F (n), WICK_FIELD_ENUM, WICK_FIELD_DEFAULT, d, 0, v, NULL                                      \
  }
#define SCHEMA(name, type_name, fields)                                                            \
  static const WickRecordSchema name = { type_name, fields, G_N_ELEMENTS (fields) }

static const WickFieldSchema expected_fields[] = {
  REQ ("root", STR),
  REQ ("key", STR),
  REQ ("family", STR),
};
SCHEMA (expected_schema, "struct ExpectedGradient", expected_fields);

static const WickFieldSchema family_fields[] = {
  REQ ("family", STR),
  REQ_ENUM ("expectation", wick_gradient_expectation_spellings),
  REQ ("min_present", U64),
};
SCHEMA (family_schema, "struct GradientFamilyContract", family_fields);

static const WickFieldSchema gradient_contract_fields[] = {
  REQ ("manifest_sha256", STR),
  { F ("expected"), WICK_FIELD_OBJECT_LIST, WICK_FIELD_REQUIRED, 0, 0, NULL, &expected_schema },
  { F ("families"), WICK_FIELD_OBJECT_LIST, WICK_FIELD_REQUIRED, 0, 0, NULL, &family_schema },
};
SCHEMA (gradient_contract_schema, "struct GradientContract", gradient_contract_fields);

static const WickFieldSchema capture_contract_fields[] = {
  REQ_ENUM ("measurement_scope", wick_measurement_scope_spellings),
  REQ_ENUM ("operations", wick_coverage_spellings),
  DEF_ENUM ("tensors", wick_coverage_spellings, 0),
  DEF_ENUM ("gradients", wick_coverage_spellings, 0),
  { F ("gradient_contract"), WICK_FIELD_OBJECT, WICK_FIELD_OPTIONAL, 0, 0, NULL,
    &gradient_contract_schema },
  REQ_ENUM ("logical_memory", wick_coverage_spellings),
  REQ_ENUM ("physical_memory", wick_coverage_spellings),
  REQ_ENUM ("device_timing", wick_coverage_spellings),
  DEF ("required_semantic_labels", STR_LIST),
  { F ("gpu_expected_semantic_labels"), WICK_FIELD_STR_LIST, WICK_FIELD_DEFAULT, 0, 1, NULL, NULL },
  { F ("cpu_only_semantic_labels"), WICK_FIELD_STR_LIST, WICK_FIELD_DEFAULT, 0, 1, NULL, NULL },
};
SCHEMA (capture_contract_schema, "struct CaptureContract", capture_contract_fields);

static const WickFieldSchema comparison_identity_fields[] = {
  OPT ("implementation_id", STR), REQ ("workload_id", STR),
  REQ ("model_id", STR),          REQ ("config_id", STR),
  REQ ("data_id", STR),           REQ ("seed_policy", STR),
  REQ ("physical_batch", U64),    REQ ("accumulation_steps", U64),
  REQ ("precision", STR),         REQ ("device_state", STR),
  OPT ("pair_id", STR),
};
SCHEMA (comparison_identity_schema, "struct ComparisonIdentity", comparison_identity_fields);

static const WickFieldSchema meta_fields[] = {
  REQ ("schema", STR),
  REQ ("run_id", STR),
  REQ ("correlation_id", STR),
  REQ ("entrypoint", STR),
  REQ_ENUM ("phase", wick_phase_spellings),
  REQ ("timestamp", STR),
  REQ ("capture_step", U64),
  REQ ("warmup_steps", U64),
  REQ ("device", STR),
  DEF ("measured_region_device_synchronized", BOOL),
  REQ_ENUM ("timing_mode", wick_timing_mode_spellings),
  { F ("capture_contract"), WICK_FIELD_OBJECT, WICK_FIELD_REQUIRED, 0, 0, NULL,
    &capture_contract_schema },
  { F ("comparison_identity"), WICK_FIELD_OBJECT, WICK_FIELD_OPTIONAL, 0, 0, NULL,
    &comparison_identity_schema },
  REQ ("tags", STR_MAP),
  OPT ("candle_version", STR),
};
SCHEMA (meta_schema, "struct TraceRunMeta", meta_fields);

static const WickFieldSchema span_start_fields[] = {
  REQ ("id", STR),
  OPT ("parent_id", STR),
  REQ ("name", STR),
  REQ ("start_ns", U64),
  REQ_ENUM ("span_kind", wick_span_kind_spellings),
  DEF ("measured", BOOL),
  OPT_ENUM ("step", wick_step_spellings),
};
SCHEMA (span_start_schema, "struct SpanStartEvent", span_start_fields);

static const WickFieldSchema span_end_fields[] = { REQ ("id", STR), DEF ("duration_ns", U64) };
SCHEMA (span_end_schema, "struct SpanEndEvent", span_end_fields);

static const WickFieldSchema op_fields[] = {
  REQ ("span_id", STR),
  REQ ("op_name", STR),
  DEF ("inputs", STR_LIST),
  OPT ("output", STR),
  REQ ("shape", U64_LIST),
  REQ ("dtype", STR),
  REQ ("device", STR),
  REQ ("duration_ns", U64),
  DEF ("timestamp_ns", U64),
  OPT ("output_dense_bytes", U64),
  REQ ("input_dense_bytes", U64),
};
SCHEMA (op_schema, "struct OpEvent", op_fields);

static const WickFieldSchema tensor_fields[] = {
  REQ ("span_id", STR),
  REQ ("tensor_id", STR),
  OPT ("label", STR),
  REQ ("shape", U64_LIST),
  REQ ("dtype", STR),
  REQ ("device", STR),
  DEF ("requires_grad", BOOL),
  OPT ("dense_bytes", U64),
  DEF_ENUM ("category", wick_memory_category_spellings, 4),
};
SCHEMA (tensor_schema, "struct TensorEvent", tensor_fields);

static const WickFieldSchema tensor_stats_fields[] = {
  REQ ("span_id", STR), REQ ("label", STR),    REQ ("shape", U64_LIST),
  REQ ("dtype", STR),   REQ ("elements", U64), REQ ("non_finite", U64),
  REQ ("rms", F64),     REQ ("abs_max", F64),  REQ ("mean", F64),
};
SCHEMA (tensor_stats_schema, "struct TensorStatsEvent", tensor_stats_fields);

static const WickFieldSchema memory_fields[] = {
  REQ ("timestamp_ns", U64),
  REQ ("storage_id", STR),
  REQ ("tensor_id", STR),
  REQ ("span_id", STR),
  OPT ("op_name", STR),
  REQ ("device", STR),
  REQ ("bytes", U64),
  REQ_ENUM ("action", wick_memory_action_spellings),
  DEF ("shape", U64_LIST),
  REQ ("dtype", STR),
  DEF_ENUM ("category", wick_memory_category_spellings, 4),
};
SCHEMA (memory_schema, "struct MemoryEvent", memory_fields);

static const WickFieldSchema device_memory_fields[] = {
  REQ ("timestamp_ns", U64), REQ ("device", STR),         OPT ("used_bytes", U64),
  OPT ("free_bytes", U64),   OPT ("reserved_bytes", U64), OPT ("capacity_bytes", U64),
};
SCHEMA (device_memory_schema, "struct DeviceMemoryEvent", device_memory_fields);

static const WickFieldSchema device_interval_fields[] = {
  REQ ("span_id", STR), REQ ("device", STR),   REQ ("stream_id", STR),   REQ ("clock_id", STR),
  REQ ("backend", STR), REQ ("start_ns", U64), REQ ("duration_ns", U64),
};
SCHEMA (device_interval_schema, "struct DeviceIntervalEvent", device_interval_fields);

static const WickFieldSchema gradient_fields[] = {
  REQ ("event_id", STR), REQ ("root", STR), REQ ("key", STR), REQ_ENUM ("state", wick_gradient_state_spellings),
  OPT ("norm", F64),
};
SCHEMA (gradient_schema, "struct GradientEvent", gradient_fields);

static const WickFieldSchema call_fields[] = {
  REQ ("from_span", STR),
  REQ ("to_span", STR),
  REQ ("host_duration_ns", U64),
};
SCHEMA (call_schema, "struct variant EdgeEvent::Call", call_fields);

static const WickFieldSchema data_fields[] = { REQ ("from_tensor", STR), REQ ("to_tensor", STR) };
SCHEMA (data_schema, "struct variant EdgeEvent::Data", data_fields);

static const WickFieldSchema terminal_fields[] = {
  REQ_ENUM ("outcome", outcome_variants),
  REQ ("timestamp_ns", U64),
  OPT ("reason", STR),
};
SCHEMA (terminal_schema, "struct TerminalEvent", terminal_fields);

static const WickRecordSchema *const record_schemas[WICK_N_KINDS] = {
  &meta_schema,
  &span_start_schema,
  &span_end_schema,
  &op_schema,
  &tensor_schema,
  &tensor_stats_schema,
  &memory_schema,
  &device_memory_schema,
  &device_interval_schema,
  &gradient_schema,
  NULL,
  &terminal_schema,
};

const WickRecordSchema *
wick_trace_record_schema (WickRecordKind kind, guint edge_kind)
{
  if (kind == WICK_KIND_EDGE)
    return edge_kind == 0 ? &call_schema : &data_schema;
  g_return_val_if_fail (kind < WICK_N_KINDS, NULL);
  return record_schemas[kind];
}

const char *
wick_trace_record_kind_name (WickRecordKind kind)
{
  if (kind >= WICK_N_KINDS)
    return "wick_extension";
  return kind_variants[kind];
}

/* ---- decoder ---------------------------------------------------------- */

struct _WickTraceDecoder
{
  gboolean extensions;
  WickJsonScanner scanner;
  GString *error;
  GString *scratch;
  char *unescape;
  gsize unescape_size;
  WickValue *values;
  guint32 n_values;
  guint32 values_size;
  guint edge_kind;
  const char *extension_kind;
  gsize extension_kind_len;
  guint64 extension_timestamp;
};

WickTraceDecoder *
wick_trace_decoder_new (gboolean extensions)
{
  WickTraceDecoder *decoder = g_new0 (WickTraceDecoder, 1);

  decoder->extensions = extensions;
  decoder->error = g_string_new (NULL);
  decoder->scratch = g_string_new (NULL);
  decoder->values_size = 64;
  decoder->values = g_new0 (WickValue, decoder->values_size);
  return decoder;
}

void
wick_trace_decoder_free (WickTraceDecoder *decoder)
{
  if (decoder == NULL)
    return;
  g_string_free (decoder->error, TRUE);
  g_string_free (decoder->scratch, TRUE);
  g_free (decoder->unescape);
  g_free (decoder->values);
  g_free (decoder);
}

const WickValue *
wick_trace_decoder_values (WickTraceDecoder *decoder, guint32 offset)
{
  return decoder->values + offset;
}

guint32
wick_trace_decoder_export (WickTraceDecoder *decoder, GArray *values, GStringChunk *strings)
{
  guint32 base = values->len;
  const char *scratch = decoder->unescape;
  const char *scratch_end = scratch + decoder->unescape_size;
  WickValue *copy;

  g_array_append_vals (values, decoder->values, decoder->n_values);
  copy = &g_array_index (values, WickValue, base);
  for (guint32 i = 0; i < decoder->n_values; i++)
    if (copy[i].is_str && copy[i].set && copy[i].str >= scratch && copy[i].str < scratch_end)
      copy[i].str = g_string_chunk_insert_len (strings, copy[i].str, copy[i].len);
  return base;
}

guint
wick_trace_decoder_edge_kind (WickTraceDecoder *decoder)
{
  return decoder->edge_kind;
}

const char *
wick_trace_decoder_extension_kind (WickTraceDecoder *decoder, gsize *len)
{
  *len = decoder->extension_kind_len;
  return decoder->extension_kind;
}

guint64
wick_trace_decoder_extension_timestamp (WickTraceDecoder *decoder)
{
  return decoder->extension_timestamp;
}

static guint32
alloc_values (WickTraceDecoder *decoder, guint32 n)
{
  guint32 offset = decoder->n_values;

  if (decoder->n_values + n > decoder->values_size)
    {
      while (decoder->n_values + n > decoder->values_size)
        decoder->values_size *= 2;
      decoder->values = g_renew (WickValue, decoder->values, decoder->values_size);
    }
  memset (decoder->values + offset, 0, n * sizeof (WickValue));
  decoder->n_values += n;
  return offset;
}

static gboolean
fail_invalid_type (WickTraceDecoder *decoder, const char *expected)
{
  GString *what = g_string_new (NULL);

  wick_json_describe_value (&decoder->scanner, what);
  wick_json_fail (&decoder->scanner, "invalid type: %s, expected %s", what->str, expected);
  g_string_free (what, TRUE);
  return FALSE;
}

static gboolean
fail_unknown_variant (WickTraceDecoder *decoder, const char *value, gsize len,
                      const char *const *variants)
{
  GString *message = g_string_new ("unknown variant `");
  guint n = 0;

  while (variants[n] != NULL)
    n++;
  g_string_append_len (message, value, (gssize)len);
  g_string_append (message, "`, ");
  if (n == 0)
    g_string_append (message, "there are no variants");
  else if (n == 1)
    g_string_append_printf (message, "expected `%s`", variants[0]);
  else if (n == 2)
    g_string_append_printf (message, "expected `%s` or `%s`", variants[0], variants[1]);
  else
    {
      g_string_append (message, "expected one of ");
      for (guint i = 0; i < n; i++)
        g_string_append_printf (message, "%s`%s`", i ? ", " : "", variants[i]);
    }
  wick_json_fail (&decoder->scanner, "%s", message->str);
  g_string_free (message, TRUE);
  return FALSE;
}

static inline gboolean name_is (const char *name, const char *key, gsize len);

static gboolean
match_variant (const char *const *variants, const char *value, gsize len, guint *index)
{
  for (guint i = 0; variants[i] != NULL; i++)
    if (name_is (variants[i], value, len))
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

static gboolean decode_value (WickTraceDecoder *decoder, const WickFieldSchema *field,
                              guint32 slot);

static gboolean
decode_string (WickTraceDecoder *decoder, guint32 slot, const char *expected)
{
  WickJsonType type;
  const char *str;
  gsize len;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_STRING)
    return fail_invalid_type (decoder, expected);
  if (!wick_json_read_string (&decoder->scanner, &str, &len))
    return FALSE;
  decoder->values[slot].str = str;
  decoder->values[slot].len = (guint32)len;
  decoder->values[slot].set = TRUE;
  decoder->values[slot].is_str = TRUE;
  return TRUE;
}

static gboolean
decode_u64 (WickTraceDecoder *decoder, guint32 slot)
{
  WickJsonType type;
  WickJsonNumber number;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_NUMBER)
    return fail_invalid_type (decoder, "u64");
  if (decoder->scanner.p[0] != '-')
    {
      /* fast path: an unsigned integer that fits, read by the lexer in place;
       * anything else is classified and worded below */
      WickJsonLexNumber lexed;
      WickJsonLexFailure failure;
      const char *next = wick_json_lex_number (decoder->scanner.p, decoder->scanner.end, TRUE,
                                               &lexed, &failure);
      if (next != NULL && lexed.integer && !lexed.overflow)
        {
          decoder->scanner.p = next;
          decoder->values[slot].u64 = lexed.significand;
          decoder->values[slot].set = TRUE;
          return TRUE;
        }
    }
  {
    WickJsonScanner probe = decoder->scanner;
    if (!wick_json_read_number (&decoder->scanner, &number))
      return FALSE;
    if (number.kind == WICK_JSON_I64)
      {
        decoder->scanner = probe;
        return wick_json_fail (&decoder->scanner,
                               "invalid value: integer `%" G_GINT64_FORMAT "`, expected u64",
                               number.i64);
      }
    if (number.kind == WICK_JSON_F64)
      {
        decoder->scanner = probe;
        return fail_invalid_type (decoder, "u64");
      }
  }
  decoder->values[slot].u64 = number.u64;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean
decode_f64 (WickTraceDecoder *decoder, guint32 slot)
{
  WickJsonType type;
  WickJsonNumber number;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_NUMBER)
    return fail_invalid_type (decoder, "f64");
  if (!wick_json_read_number (&decoder->scanner, &number))
    return FALSE;
  decoder->values[slot].f64 = number.f64;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean
decode_bool (WickTraceDecoder *decoder, guint32 slot)
{
  WickJsonType type;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_TRUE && type != WICK_JSON_FALSE)
    return fail_invalid_type (decoder, "a boolean");
  if (!wick_json_skip_literal (&decoder->scanner, type))
    return FALSE;
  decoder->values[slot].boolean = type == WICK_JSON_TRUE;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

/* serde's ContentDeserializer::deserialize_enum: a string, or a map with one
 * key whose value is a unit (null). */
static gboolean
decode_enum (WickTraceDecoder *decoder, const WickFieldSchema *field, guint32 slot)
{
  WickJsonType type;
  const char *str;
  gsize len;
  guint index;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type == WICK_JSON_STRING)
    {
      if (!wick_json_read_string (&decoder->scanner, &str, &len))
        return FALSE;
      if (!match_variant (field->variants, str, len, &index))
        return fail_unknown_variant (decoder, str, len, field->variants);
    }
  else if (type == WICK_JSON_OBJECT)
    {
      WickJsonScanner probe = decoder->scanner;
      gboolean first = TRUE;
      guint n = 0;
      WickJsonType value_type;

      wick_json_object_begin (&probe);
      while (wick_json_object_next (&probe, &first, &str, &len))
        {
          n++;
          wick_json_skip_value (&probe);
        }
      if (n != 1)
        return wick_json_fail (&decoder->scanner,
                               "invalid value: map, expected map with a single key");
      first = TRUE;
      wick_json_object_begin (&decoder->scanner);
      wick_json_object_next (&decoder->scanner, &first, &str, &len);
      if (!match_variant (field->variants, str, len, &index))
        return fail_unknown_variant (decoder, str, len, field->variants);
      if (!wick_json_peek_type (&decoder->scanner, &value_type))
        return FALSE;
      if (value_type != WICK_JSON_NULL)
        return fail_invalid_type (decoder, "unit variant");
      decoder->scanner = probe;
    }
  else
    return fail_invalid_type (decoder, "string or map");
  decoder->values[slot].variant = index;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean
decode_object_list (WickTraceDecoder *decoder, const WickFieldSchema *field, guint32 slot)
{
  WickFieldSchema object_field
    = { field->name, field->name_len, WICK_FIELD_OBJECT, 0, 0, 0, NULL, field->object };
  guint32 width = field->object->n_fields;
  g_autoptr (GArray) blocks = g_array_new (FALSE, FALSE, sizeof (guint32));
  gboolean first = TRUE;
  guint32 offset;

  wick_json_array_begin (&decoder->scanner);
  while (wick_json_array_next (&decoder->scanner, &first))
    {
      guint32 holder = alloc_values (decoder, 1);
      if (!decode_value (decoder, &object_field, holder))
        return FALSE;
      g_array_append_val (blocks, decoder->values[holder].offset);
    }
  if (wick_json_failed (&decoder->scanner))
    return FALSE;
  /* pack the elements contiguously: element i is values[offset + i * width] */
  offset = alloc_values (decoder, width * blocks->len);
  for (guint i = 0; i < blocks->len; i++)
    memcpy (decoder->values + offset + i * width,
            decoder->values + g_array_index (blocks, guint32, i), width * sizeof (WickValue));
  decoder->values[slot].offset = offset;
  decoder->values[slot].len = blocks->len;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean
decode_list (WickTraceDecoder *decoder, const WickFieldSchema *field, guint32 slot)
{
  WickJsonType type;
  gboolean first = TRUE;
  guint32 count = 0;
  guint32 offset = decoder->n_values;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_ARRAY)
    return fail_invalid_type (decoder, "a sequence");
  if (field->type == WICK_FIELD_OBJECT_LIST)
    return decode_object_list (decoder, field, slot);
  wick_json_array_begin (&decoder->scanner);
  while (wick_json_array_next (&decoder->scanner, &first))
    {
      guint32 element = alloc_values (decoder, 1);
      gboolean ok;
      if (field->type == WICK_FIELD_STR_LIST)
        ok = decode_string (decoder, element, "a string");
      else
        ok = decode_u64 (decoder, element);
      if (!ok)
        return FALSE;
      count++;
    }
  if (wick_json_failed (&decoder->scanner))
    return FALSE;
  decoder->values[slot].offset = offset;
  decoder->values[slot].len = count;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean
decode_map (WickTraceDecoder *decoder, guint32 slot)
{
  WickJsonType type;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint32 count = 0;
  guint32 offset = 0;

  if (!wick_json_peek_type (&decoder->scanner, &type))
    return FALSE;
  if (type != WICK_JSON_OBJECT)
    return fail_invalid_type (decoder, "a map");
  wick_json_object_begin (&decoder->scanner);
  while (wick_json_object_next (&decoder->scanner, &first, &key, &key_len))
    {
      guint32 pair = alloc_values (decoder, 2);
      if (count == 0)
        offset = pair;
      decoder->values[pair].str = key;
      decoder->values[pair].len = (guint32)key_len;
      decoder->values[pair].set = TRUE;
      decoder->values[pair].is_str = TRUE;
      if (!decode_string (decoder, pair + 1, "a string"))
        return FALSE;
      count++;
    }
  if (wick_json_failed (&decoder->scanner))
    return FALSE;
  decoder->values[slot].offset = offset;
  decoder->values[slot].len = count;
  decoder->values[slot].set = TRUE;
  return TRUE;
}

static gboolean decode_object_fields (WickTraceDecoder *decoder, const WickRecordSchema *schema,
                                      guint32 block, guint *kind_keys);

static gboolean
decode_value (WickTraceDecoder *decoder, const WickFieldSchema *field, guint32 slot)
{
  switch (field->type)
    {
      case WICK_FIELD_STR:
        return decode_string (decoder, slot, "a string");
      case WICK_FIELD_U64:
        return decode_u64 (decoder, slot);
      case WICK_FIELD_F64:
        return decode_f64 (decoder, slot);
      case WICK_FIELD_BOOL:
        return decode_bool (decoder, slot);
      case WICK_FIELD_ENUM:
        return decode_enum (decoder, field, slot);
      case WICK_FIELD_STR_LIST:
      case WICK_FIELD_U64_LIST:
      case WICK_FIELD_OBJECT_LIST:
        return decode_list (decoder, field, slot);
      case WICK_FIELD_STR_MAP:
        return decode_map (decoder, slot);
      case WICK_FIELD_OBJECT:
        {
          WickJsonType type;
          guint32 block;
          g_autofree char *expected = NULL;
          if (!wick_json_peek_type (&decoder->scanner, &type))
            return FALSE;
          if (type != WICK_JSON_OBJECT)
            {
              expected = g_strdup (field->object->type_name);
              return fail_invalid_type (decoder, expected);
            }
          block = alloc_values (decoder, field->object->n_fields);
          if (!decode_object_fields (decoder, field->object, block, NULL))
            return FALSE;
          decoder->values[slot].offset = block;
          decoder->values[slot].len = field->object->n_fields;
          decoder->values[slot].set = TRUE;
          return TRUE;
        }
      default:
        g_assert_not_reached ();
    }
}

static inline gboolean
name_is (const char *name, const char *key, gsize len)
{
  for (gsize i = 0; i < len; i++)
    if (name[i] != key[i] || name[i] == '\0')
      return FALSE;
  return name[len] == '\0';
}

/* Writers emit fields in schema order, so the field after the previous match
 * is tried first. */
static inline gboolean
field_is (const WickFieldSchema *field, const char *key, gsize len)
{
  const char *name = field->name;

  if (field->name_len != len)
    return FALSE;
  /* words, not bytes: keys are 2-20 bytes; the last word overlaps the one
   * before it, every load stays within the key */
  if (len >= 8)
    {
      guint64 a, b;
      for (gsize i = 0; i + 8 < len; i += 8)
        {
          memcpy (&a, name + i, 8);
          memcpy (&b, key + i, 8);
          if (a != b)
            return FALSE;
        }
      memcpy (&a, name + len - 8, 8);
      memcpy (&b, key + len - 8, 8);
      return a == b;
    }
  if (len >= 4)
    {
      guint32 a, b, c, d;
      memcpy (&a, name, 4);
      memcpy (&b, key, 4);
      memcpy (&c, name + len - 4, 4);
      memcpy (&d, key + len - 4, 4);
      return a == b && c == d;
    }
  for (gsize i = 0; i < len; i++)
    if (name[i] != key[i])
      return FALSE;
  return TRUE;
}

static gint
find_field (const WickRecordSchema *schema, const char *key, gsize len, guint *cursor)
{
  if (*cursor < schema->n_fields && field_is (&schema->fields[*cursor], key, len))
    return (gint)(*cursor)++;
  for (guint i = 0; i < schema->n_fields; i++)
    if (field_is (&schema->fields[i], key, len))
      {
        *cursor = i + 1;
        return (gint)i;
      }
  return -1;
}

static void
apply_default (WickTraceDecoder *decoder, const WickFieldSchema *field, guint32 slot)
{
  WickValue *value = &decoder->values[slot];

  value->set = TRUE;
  value->len = 0;
  value->u64 = 0;
  if (field->type == WICK_FIELD_ENUM)
    value->variant = field->default_variant;
  else if (field->type == WICK_FIELD_BOOL)
    value->boolean = FALSE;
}

/* A span_start and a memory record have one slot after their fields for a
 * Wick key read on the side (SS_WICK_THREAD, MEM_WICK_ADDRESS). */
static guint
has_side_slot (const WickRecordSchema *schema)
{
  return schema == &span_start_schema || schema == &memory_schema;
}

const char *
wick_address_problem_to_string (WickAddressProblem problem)
{
  switch (problem)
    {
      case WICK_ADDRESS_OK:
        return "an address";
      case WICK_ADDRESS_NOT_STRING:
        return "not a string";
      case WICK_ADDRESS_NOT_HEX:
        return "not \"0x\" and hex digits";
      case WICK_ADDRESS_TOO_LONG:
        return "more than 16 hex digits";
      case WICK_ADDRESS_ZERO:
        return "zero";
      case WICK_ADDRESS_REPEATED:
        return "the key twice";
    }
  return "not an address";
}

/* A memory record's "wick_address" (docs/format.md): "0x" and 1 to 16 hex
 * digits, into its MEM_WICK_ADDRESS slot. Any other value is kept as the
 * problem it has (the document counts them), never a decode error: to
 * candle-graph it is an unknown key. The value is checked raw, before it is
 * passed over as any unknown key (an escape in it is not a hex digit). */
static void
read_address (WickTraceDecoder *decoder, WickValue *slot)
{
  WickJsonScanner *scanner = &decoder->scanner;
  WickAddressProblem problem = WICK_ADDRESS_OK;
  WickJsonType type;
  guint64 address = 0;

  if (slot->set)
    problem = WICK_ADDRESS_REPEATED;
  else if (!wick_json_peek_type (scanner, &type))
    return; /* passing it over fails the line */
  else if (type != WICK_JSON_STRING)
    problem = WICK_ADDRESS_NOT_STRING;
  else
    {
      const char *p = scanner->p + 1, *end = scanner->end;
      guint digits = 0;

      if (end - p < 3 || p[0] != '0' || p[1] != 'x')
        problem = WICK_ADDRESS_NOT_HEX;
      for (p += 2; problem == WICK_ADDRESS_OK && p < end && *p != '"'; p++, digits++)
        {
          int value = g_ascii_xdigit_value (*p);
          if (value < 0)
            problem = WICK_ADDRESS_NOT_HEX;
          else if (digits == 16)
            problem = WICK_ADDRESS_TOO_LONG;
          else
            address = address << 4 | (guint64)value;
        }
      if (problem == WICK_ADDRESS_OK && (p >= end || digits == 0))
        problem = WICK_ADDRESS_NOT_HEX;
      else if (problem == WICK_ADDRESS_OK && address == 0)
        problem = WICK_ADDRESS_ZERO;
    }
  slot->set = TRUE;
  slot->u64 = problem == WICK_ADDRESS_OK ? address : 0;
  slot->len = problem;
}

/* Decodes the object at the cursor into values[block + field index]. Keys named
 * "kind" (the tag, consumed before) are passed over and counted in @kind_keys. */
static gboolean
decode_object_fields (WickTraceDecoder *decoder, const WickRecordSchema *schema, guint32 block,
                      guint *kind_keys)
{
  WickJsonScanner *scanner = &decoder->scanner;
  guint64 seen = 0;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;
  guint cursor = 0;

  g_assert (schema->n_fields <= 64);
  wick_json_object_begin (scanner);
  while (wick_json_object_next (scanner, &first, &key, &key_len))
    {
      gint index = key_len > 0 ? find_field (schema, key, key_len, &cursor) : -1;
      const WickFieldSchema *field;
      WickJsonType type;

      if (index < 0)
        {
          if (kind_keys != NULL && key_len == 4 && memcmp (key, "kind", 4) == 0)
            (*kind_keys)++;
          /* libwick's thread number: an unknown key to candle-graph, so it is
           * read on the side, never rejected (a value that is not a small
           * unsigned integer is passed over like any unknown key). */
          if (schema == &span_start_schema && key_len == 11 && memcmp (key, "wick_thread", 11) == 0
              && wick_json_peek_type (scanner, &type) && type == WICK_JSON_NUMBER)
            {
              WickJsonScanner probe = *scanner;
              WickJsonNumber number;
              if (wick_json_read_number (&probe, &number) && number.kind == WICK_JSON_U64
                  && number.u64 <= G_MAXUINT16)
                {
                  WickValue *extra = &decoder->values[block + schema->n_fields];
                  extra->set = TRUE;
                  extra->u64 = number.u64;
                }
              g_string_truncate (scanner->error, 0);
            }
          else if (schema == &memory_schema && key_len == 12
                   && memcmp (key, "wick_address", 12) == 0)
            read_address (decoder, &decoder->values[block + schema->n_fields]);
          if (!wick_json_skip_value (scanner))
            return FALSE;
          continue;
        }
      field = &schema->fields[index];
      if (seen & (G_GUINT64_CONSTANT (1) << index))
        return wick_json_fail (scanner, "duplicate field `%s`", field->name);
      seen |= G_GUINT64_CONSTANT (1) << index;
      if (!wick_json_peek_type (scanner, &type))
        return FALSE;
      if (type == WICK_JSON_NULL && field->mode == WICK_FIELD_OPTIONAL)
        {
          if (!wick_json_skip_literal (scanner, type))
            return FALSE;
          continue;
        }
      if (!decode_value (decoder, field, block + (guint32)index))
        return FALSE;
    }
  if (wick_json_failed (scanner))
    return FALSE;
  for (guint i = 0; i < schema->n_fields; i++)
    {
      const WickFieldSchema *field = &schema->fields[i];
      if (seen & (G_GUINT64_CONSTANT (1) << i))
        continue;
      if (field->mode == WICK_FIELD_REQUIRED)
        return wick_json_fail (scanner, "missing field `%s`", field->name);
      if (field->mode == WICK_FIELD_DEFAULT)
        apply_default (decoder, field, block + i);
    }
  return TRUE;
}

typedef struct
{
  gboolean found;
  guint kind;
  const char *second_edge_kind; /* value position of a repeated edge_kind */
  const char *edge_kind_value;  /* value position of the first edge_kind */
  const char *timestamp_value;
  gboolean trailing; /* non-whitespace after the value */
} TagScan;

static gboolean
key_is (const char *key, gsize len, const char *name)
{
  return strlen (name) == len && memcmp (key, name, len) == 0;
}

/* Pass one: the whole line's syntax, and the `kind` tag where it appears. */
static gboolean
scan_tags (WickTraceDecoder *decoder, TagScan *scan)
{
  WickJsonScanner *scanner = &decoder->scanner;
  WickJsonType type;
  gboolean first = TRUE;
  const char *key;
  gsize key_len;

  if (!wick_json_peek_type (scanner, &type))
    return FALSE;
  if (type != WICK_JSON_OBJECT)
    {
      if (!wick_json_skip_value (scanner))
        return FALSE;
      wick_json_skip_whitespace (scanner);
      scan->trailing = scanner->p < scanner->end;
      scanner->p = scanner->start;
      wick_json_skip_whitespace (scanner);
      return fail_invalid_type (decoder, "internally tagged enum TraceEvent");
    }
  wick_json_object_begin (scanner);
  while (wick_json_object_next (scanner, &first, &key, &key_len))
    {
      if (key_is (key, key_len, "kind"))
        {
          const char *str;
          gsize len;
          if (scan->found)
            return wick_json_fail (scanner, "duplicate field `kind`");
          if (!wick_json_peek_type (scanner, &type))
            return FALSE;
          if (type != WICK_JSON_STRING)
            {
              WickJsonScanner probe = *scanner;
              if (!wick_json_skip_value (scanner))
                return FALSE;
              *scanner = probe;
              return fail_invalid_type (decoder, "variant identifier");
            }
          if (!wick_json_read_string (scanner, &str, &len))
            return FALSE;
          if (decoder->extensions && len >= 5 && memcmp (str, "wick_", 5) == 0)
            {
              scan->kind = WICK_KIND_EXTENSION;
              decoder->extension_kind = str;
              decoder->extension_kind_len = len;
            }
          else if (!match_variant (kind_variants, str, len, &scan->kind))
            return fail_unknown_variant (decoder, str, len, kind_variants);
          scan->found = TRUE;
          continue;
        }
      if (key_is (key, key_len, "edge_kind"))
        {
          if (scan->edge_kind_value == NULL)
            scan->edge_kind_value = scanner->p;
          else if (scan->second_edge_kind == NULL)
            scan->second_edge_kind = scanner->p;
        }
      else if (key_is (key, key_len, "timestamp_ns") && scan->timestamp_value == NULL)
        scan->timestamp_value = scanner->p;
      if (!wick_json_skip_value (scanner))
        return FALSE;
    }
  if (wick_json_failed (scanner))
    return FALSE;
  wick_json_skip_whitespace (scanner);
  scan->trailing = scanner->p < scanner->end;
  if (!scan->found)
    return wick_json_fail (scanner, "missing field `kind`");
  return TRUE;
}

static gboolean
decode_edge_tag (WickTraceDecoder *decoder, const TagScan *scan)
{
  static const WickFieldSchema edge_kind_field = REQ_ENUM ("edge_kind", edge_kind_variants);
  guint32 slot;

  if (scan->edge_kind_value == NULL)
    return wick_json_fail (&decoder->scanner, "missing field `edge_kind`");
  decoder->scanner.p = scan->edge_kind_value;
  slot = alloc_values (decoder, 1);
  if (!wick_json_peek_type (&decoder->scanner, (WickJsonType[]){ 0 }))
    return FALSE;
  if (*decoder->scanner.p != '"')
    return fail_invalid_type (decoder, "variant identifier");
  if (!decode_enum (decoder, &edge_kind_field, slot))
    return FALSE;
  if (scan->second_edge_kind != NULL)
    return wick_json_fail (&decoder->scanner, "duplicate field `edge_kind`");
  decoder->edge_kind = decoder->values[slot].variant;
  decoder->n_values = 0;
  return TRUE;
}

static void
reset (WickTraceDecoder *decoder, const char *line, gsize len)
{
  decoder->n_values = 0;
  decoder->extension_kind = NULL;
  decoder->extension_timestamp = 0;
  wick_json_scanner_init (&decoder->scanner, line, line + len, decoder->error, decoder->unescape);
}

static gboolean
match_kind (const char *name, gsize len, guint *index)
{
  static const guint8 lengths[] = { 4, 10, 8, 2, 6, 12, 6, 13, 15, 8, 4, 8 };

  for (guint i = 0; i < G_N_ELEMENTS (lengths); i++)
    if (lengths[i] == len && name[0] == kind_variants[i][0]
        && memcmp (kind_variants[i], name, len) == 0)
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

/* One pass for the common case, a line that starts with {"kind":"<variant>"
 * of a plain record: decoding the fields validates the syntax too. It gives
 * up (FALSE, no verdict) on anything unusual or wrong, and the exact two-pass
 * decoding then finds the error candle-graph reports. */
static gboolean
decode_fast (WickTraceDecoder *decoder, const char *line, gsize len, WickRecordKind *kind)
{
  static const char prefix[] = "{\"kind\":\"";
  WickJsonScanner *scanner = &decoder->scanner;
  const char *name = line + sizeof prefix - 1;
  const char *end = line + len;
  const char *quote;
  guint index, kind_keys = 0;
  const WickRecordSchema *schema;

  if (len < sizeof prefix || memcmp (line, prefix, sizeof prefix - 1) != 0)
    return FALSE;
  for (quote = name; quote < end && *quote != '"' && *quote != '\\'; quote++)
    ;
  if (quote == end || *quote != '"' || !match_kind (name, (gsize)(quote - name), &index)
      || index == WICK_KIND_EDGE || index == WICK_KIND_META)
    return FALSE;
  reset (decoder, line, len);
  scanner->unescape_len = 0;
  schema = record_schemas[index];
  alloc_values (decoder, schema->n_fields + has_side_slot (schema));
  if (!decode_object_fields (decoder, schema, 0, &kind_keys) || kind_keys != 1)
    return FALSE;
  wick_json_skip_whitespace (scanner);
  if (scanner->p != scanner->end)
    return FALSE;
  *kind = index;
  return TRUE;
}

gboolean
wick_trace_decoder_decode (WickTraceDecoder *decoder, const char *line, gsize len,
                           WickRecordKind *kind, GString *cause)
{
  WickJsonScanner *scanner = &decoder->scanner;
  TagScan scan = { 0 };
  const WickRecordSchema *schema;
  gboolean ok = FALSE;

  if (decoder->unescape_size < 2 * len + 16)
    {
      decoder->unescape_size = 2 * len + 16;
      g_free (decoder->unescape);
      decoder->unescape = g_malloc (decoder->unescape_size);
    }
  if (decode_fast (decoder, line, len, kind))
    return TRUE;
  reset (decoder, line, len);

  if (!scan_tags (decoder, &scan))
    goto out;
  *kind = scan.kind;
  if (scan.kind == WICK_KIND_EXTENSION)
    {
      if (scan.timestamp_value != NULL)
        {
          WickJsonNumber number;
          scanner->p = scan.timestamp_value;
          if (wick_json_read_number (scanner, &number) && number.kind == WICK_JSON_U64)
            decoder->extension_timestamp = number.u64;
          g_string_truncate (decoder->error, 0);
        }
      ok = TRUE;
      goto trailing;
    }

  /* pass two: the variant's fields (unescaped strings go after pass one's) */
  scanner->unescape_len = len + 8;
  if (scan.kind == WICK_KIND_EDGE && !decode_edge_tag (decoder, &scan))
    goto out;
  schema = wick_trace_record_schema (scan.kind, decoder->edge_kind);
  scanner->p = line;
  wick_json_skip_whitespace (scanner);
  scanner->remaining_depth = 128;
  alloc_values (decoder, schema->n_fields + has_side_slot (schema));
  if (!decode_object_fields (decoder, schema, 0, NULL))
    goto out;
  ok = TRUE;

trailing:
  /* serde_json::from_str checks for trailing characters after decoding */
  if (scan.trailing)
    {
      ok = FALSE;
      wick_json_fail (scanner, "trailing characters");
    }

out:
  if (!ok)
    {
      g_string_assign (cause, decoder->error->str);
      return FALSE;
    }
  return TRUE;
}

/* ---- writer ----------------------------------------------------------- */

static void write_object (const WickValue *values, const WickRecordSchema *schema, guint32 block,
                          GString *out, gboolean first);

static int
compare_map_keys (gconstpointer a, gconstpointer b)
{
  const WickValue *x = *(const WickValue *const *)a;
  const WickValue *y = *(const WickValue *const *)b;
  int c = memcmp (x->str, y->str, MIN (x->len, y->len));

  if (c != 0)
    return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

/* Maps are written with sorted keys (BTreeMap), the last duplicate winning. */
static void
write_map (const WickValue *values, const WickValue *value, GString *out)
{
  g_autoptr (GPtrArray) pairs = g_ptr_array_new ();
  gboolean first = TRUE;

  for (guint32 i = 0; i < value->len; i++)
    g_ptr_array_add (pairs, (gpointer)(values + value->offset + 2 * i));
  /* stable sort keeps file order among equal keys: the last one wins */
  g_ptr_array_sort (pairs, compare_map_keys);
  g_string_append_c (out, '{');
  for (guint i = 0; i < pairs->len; i++)
    {
      const WickValue *key = g_ptr_array_index (pairs, i);
      if (i + 1 < pairs->len && compare_map_keys (&pairs->pdata[i], &pairs->pdata[i + 1]) == 0)
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      wick_json_append_string (out, key->str, key->len);
      g_string_append_c (out, ':');
      wick_json_append_string (out, key[1].str, key[1].len);
    }
  g_string_append_c (out, '}');
}

static void
write_value (const WickValue *values, const WickFieldSchema *field, const WickValue *value,
             GString *out)
{
  switch (field->type)
    {
      case WICK_FIELD_STR:
        wick_json_append_string (out, value->str, value->len);
        break;
      case WICK_FIELD_U64:
        g_string_append_printf (out, "%" G_GUINT64_FORMAT, value->u64);
        break;
      case WICK_FIELD_F64:
        wick_json_format_f64 (out, value->f64);
        break;
      case WICK_FIELD_BOOL:
        g_string_append (out, value->boolean ? "true" : "false");
        break;
      case WICK_FIELD_ENUM:
        g_string_append_c (out, '"');
        g_string_append (out, field->variants[value->variant]);
        g_string_append_c (out, '"');
        break;
      case WICK_FIELD_STR_LIST:
      case WICK_FIELD_U64_LIST:
      case WICK_FIELD_OBJECT_LIST:
        g_string_append_c (out, '[');
        for (guint32 i = 0; i < value->len; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            if (field->type == WICK_FIELD_STR_LIST)
              {
                const WickValue *element = values + value->offset + i;
                wick_json_append_string (out, element->str, element->len);
              }
            else if (field->type == WICK_FIELD_U64_LIST)
              g_string_append_printf (out, "%" G_GUINT64_FORMAT, values[value->offset + i].u64);
            else
              {
                g_string_append_c (out, '{');
                write_object (values, field->object, value->offset + i * field->object->n_fields,
                              out, TRUE);
                g_string_append_c (out, '}');
              }
          }
        g_string_append_c (out, ']');
        break;
      case WICK_FIELD_STR_MAP:
        write_map (values, value, out);
        break;
      case WICK_FIELD_OBJECT:
        g_string_append_c (out, '{');
        write_object (values, field->object, value->offset, out, TRUE);
        g_string_append_c (out, '}');
        break;
      default:
        g_assert_not_reached ();
    }
}

static void
write_object (const WickValue *values, const WickRecordSchema *schema, guint32 block, GString *out,
              gboolean first)
{
  for (guint i = 0; i < schema->n_fields; i++)
    {
      const WickFieldSchema *field = &schema->fields[i];
      const WickValue *value = values + block + i;
      if (!value->set)
        continue;
      if (field->write_only_when_nonempty && value->len == 0)
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      g_string_append_c (out, '"');
      g_string_append (out, field->name);
      g_string_append (out, "\":");
      write_value (values, field, value, out);
    }
}

void
wick_trace_record_write (WickRecordKind kind, guint edge_kind, const WickValue *values,
                         GString *out)
{
  g_return_if_fail (kind < WICK_N_KINDS);
  g_string_append_printf (out, "{\"kind\":\"%s\"", kind_variants[kind]);
  if (kind == WICK_KIND_EDGE)
    g_string_append_printf (out, ",\"edge_kind\":\"%s\"", edge_kind_variants[edge_kind]);
  write_object (values, wick_trace_record_schema (kind, edge_kind), 0, out, FALSE);
  g_string_append_c (out, '}');
}

void
wick_trace_decoder_write (WickTraceDecoder *decoder, WickRecordKind kind, GString *out)
{
  wick_trace_record_write (kind, decoder->edge_kind, decoder->values, out);
}
