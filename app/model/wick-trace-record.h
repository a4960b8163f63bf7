/* wick-trace-record.h — one JSONL line decoded as one trace record (spec §1–3).
 *
 * The decoder reproduces serde's derive semantics for candle-graph's
 * internally tagged `TraceEvent`:
 *   1. the whole line is parsed as JSON first (syntax errors win); while doing
 *      so the `kind` tag is decoded where it appears: a second `kind` is
 *      "duplicate field `kind`", an unknown one "unknown variant `x`, expected
 *      one of `meta`, ...", none "missing field `kind`";
 *   2. then the variant's fields are decoded in key order: a repeated known
 *      field is "duplicate field `f`", a value of the wrong type "invalid type:
 *      ..., expected ..." (serde's wording), unknown keys are ignored;
 *   3. then missing fields in declaration order ("missing field `f`"). Optional
 *      fields take null as absent; defaulted fields reject null.
 * `edge` records carry a second tag, `edge_kind`, decoded the same way.
 *
 * With extensions enabled, a `kind` starting with "wick_" makes the line a
 * WICK_KIND_EXTENSION (valid JSON, not decoded further).
 *
 * Decoded values live in the decoder's scratch until the next line: strings
 * point into the line or into an unescape buffer. Field order in the schemas
 * below is the order of the spec's tables, which is also the writer's order.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  WICK_KIND_META,
  WICK_KIND_SPAN_START,
  WICK_KIND_SPAN_END,
  WICK_KIND_OP,
  WICK_KIND_TENSOR,
  WICK_KIND_TENSOR_STATS,
  WICK_KIND_MEMORY,
  WICK_KIND_DEVICE_MEMORY,
  WICK_KIND_DEVICE_INTERVAL,
  WICK_KIND_GRADIENT,
  WICK_KIND_EDGE,
  WICK_KIND_TERMINAL,
  WICK_N_KINDS,
  WICK_KIND_EXTENSION = WICK_N_KINDS,
} WickRecordKind;

typedef enum
{
  WICK_FIELD_STR,
  WICK_FIELD_U64,
  WICK_FIELD_F64,
  WICK_FIELD_BOOL,
  WICK_FIELD_ENUM,
  WICK_FIELD_STR_LIST,
  WICK_FIELD_U64_LIST,
  WICK_FIELD_STR_MAP,
  WICK_FIELD_OBJECT,
  WICK_FIELD_OBJECT_LIST,
} WickFieldType;

typedef enum
{
  WICK_FIELD_REQUIRED,
  WICK_FIELD_DEFAULT,
  WICK_FIELD_OPTIONAL,
} WickFieldMode;

typedef struct _WickRecordSchema WickRecordSchema;

typedef struct
{
  const char *name;
  guint8 name_len;
  guint8 type;                     /* WickFieldType */
  guint8 mode;                     /* WickFieldMode */
  guint8 default_variant;          /* ENUM with DEFAULT */
  guint8 write_only_when_nonempty; /* writer: omit an empty list */
  const char *const *variants;     /* ENUM: NULL-terminated */
  const WickRecordSchema *object;  /* OBJECT, OBJECT_LIST */
} WickFieldSchema;

struct _WickRecordSchema
{
  const char *type_name; /* for "expected struct X" */
  const WickFieldSchema *fields;
  guint n_fields;
};

/* One decoded value. set is FALSE for an absent (or null) optional field;
 * defaulted fields are filled with their default and set TRUE. */
typedef struct
{
  guint8 set;
  guint8 is_str; /* str is a string (for relocation) */
  guint32 len;   /* string bytes; element count of lists */
  union
  {
    const char *str;
    guint64 u64;
    double f64;
    gboolean boolean;
    guint32 variant;
    guint32 offset; /* lists/maps/objects: index of the first
                       element value in the decoder's values */
  };
} WickValue;

/* Field slots (indices into a record's values), in schema order. */
enum
{
  META_SCHEMA,
  META_RUN_ID,
  META_CORRELATION_ID,
  META_ENTRYPOINT,
  META_PHASE,
  META_TIMESTAMP,
  META_CAPTURE_STEP,
  META_WARMUP_STEPS,
  META_DEVICE,
  META_MEASURED_REGION_DEVICE_SYNCHRONIZED,
  META_TIMING_MODE,
  META_CAPTURE_CONTRACT,
  META_COMPARISON_IDENTITY,
  META_TAGS,
  META_CANDLE_VERSION
};
enum
{
  CC_MEASUREMENT_SCOPE,
  CC_OPERATIONS,
  CC_TENSORS,
  CC_GRADIENTS,
  CC_GRADIENT_CONTRACT,
  CC_LOGICAL_MEMORY,
  CC_PHYSICAL_MEMORY,
  CC_DEVICE_TIMING,
  CC_REQUIRED_LABELS,
  CC_GPU_LABELS,
  CC_CPU_LABELS
};
enum
{
  GC_MANIFEST_SHA256,
  GC_EXPECTED,
  GC_FAMILIES
};
enum
{
  EXP_ROOT,
  EXP_KEY,
  EXP_FAMILY
};
enum
{
  FAM_FAMILY,
  FAM_EXPECTATION,
  FAM_MIN_PRESENT
};
enum
{
  CI_IMPLEMENTATION_ID,
  CI_WORKLOAD_ID,
  CI_MODEL_ID,
  CI_CONFIG_ID,
  CI_DATA_ID,
  CI_SEED_POLICY,
  CI_PHYSICAL_BATCH,
  CI_ACCUMULATION_STEPS,
  CI_PRECISION,
  CI_DEVICE_STATE,
  CI_PAIR_ID
};
enum
{
  SS_ID,
  SS_PARENT_ID,
  SS_NAME,
  SS_START_NS,
  SS_SPAN_KIND,
  SS_MEASURED,
  SS_STEP,
  SS_WICK_THREAD /* not a field: libwick's "wick_thread", read on the side */
};
enum
{
  SE_ID,
  SE_DURATION_NS
};
enum
{
  OP_SPAN_ID,
  OP_OP_NAME,
  OP_INPUTS,
  OP_OUTPUT,
  OP_SHAPE,
  OP_DTYPE,
  OP_DEVICE,
  OP_DURATION_NS,
  OP_TIMESTAMP_NS,
  OP_OUTPUT_DENSE_BYTES,
  OP_INPUT_DENSE_BYTES
};
enum
{
  T_SPAN_ID,
  T_TENSOR_ID,
  T_LABEL,
  T_SHAPE,
  T_DTYPE,
  T_DEVICE,
  T_REQUIRES_GRAD,
  T_DENSE_BYTES,
  T_CATEGORY
};
enum
{
  TS_SPAN_ID,
  TS_LABEL,
  TS_SHAPE,
  TS_DTYPE,
  TS_ELEMENTS,
  TS_NON_FINITE,
  TS_RMS,
  TS_ABS_MAX,
  TS_MEAN
};
enum
{
  MEM_TIMESTAMP_NS,
  MEM_STORAGE_ID,
  MEM_TENSOR_ID,
  MEM_SPAN_ID,
  MEM_OP_NAME,
  MEM_DEVICE,
  MEM_BYTES,
  MEM_ACTION,
  MEM_SHAPE,
  MEM_DTYPE,
  MEM_CATEGORY,
  MEM_WICK_ADDRESS /* not a field: Wick's "wick_address", read on the side (below) */
};

/* The MEM_WICK_ADDRESS slot of a memory record: set when the line has a
 * "wick_address" key (docs/format.md); u64 is the address, or 0 when the
 * value is not one, and then len says why. */
typedef enum
{
  WICK_ADDRESS_OK,
  WICK_ADDRESS_NOT_STRING, /* not a JSON string */
  WICK_ADDRESS_NOT_HEX,    /* not "0x" and hex digits */
  WICK_ADDRESS_TOO_LONG,   /* more than 16 hex digits */
  WICK_ADDRESS_ZERO,       /* 0x0: no address (the writer never writes it) */
  WICK_ADDRESS_REPEATED,   /* the key twice on one line */
} WickAddressProblem;

const char *wick_address_problem_to_string (WickAddressProblem problem);
enum
{
  DM_TIMESTAMP_NS,
  DM_DEVICE,
  DM_USED_BYTES,
  DM_FREE_BYTES,
  DM_RESERVED_BYTES,
  DM_CAPACITY_BYTES
};
enum
{
  DI_SPAN_ID,
  DI_DEVICE,
  DI_STREAM_ID,
  DI_CLOCK_ID,
  DI_BACKEND,
  DI_START_NS,
  DI_DURATION_NS
};
enum
{
  GR_EVENT_ID,
  GR_ROOT,
  GR_KEY,
  GR_STATE,
  GR_NORM
};
enum
{
  CALL_FROM_SPAN,
  CALL_TO_SPAN,
  CALL_HOST_DURATION_NS
};
enum
{
  DATA_FROM_TENSOR,
  DATA_TO_TENSOR
};
enum
{
  TERM_OUTCOME,
  TERM_TIMESTAMP_NS,
  TERM_REASON
};

/* outcomes: WickOutcome of wick-ring.h (complete, failed) */

typedef struct _WickTraceDecoder WickTraceDecoder;

WickTraceDecoder *wick_trace_decoder_new (gboolean extensions);
void wick_trace_decoder_free (WickTraceDecoder *decoder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickTraceDecoder, wick_trace_decoder_free)

/* Decodes one trimmed, non-empty, valid UTF-8 line. On FALSE, @cause holds the
 * serde-like reason. */
gboolean wick_trace_decoder_decode (WickTraceDecoder *decoder, const char *line, gsize len,
                                    WickRecordKind *kind, GString *cause);
/* Values of the last decoded record (offset 0) or of a nested object/list. */
const WickValue *wick_trace_decoder_values (WickTraceDecoder *decoder, guint32 offset);
/* Appends the last record's values to @values (a GArray of WickValue) and
 * returns the index of the first: nested offsets stay valid relative to it.
 * Strings the decoder unescaped into its scratch are copied into @strings;
 * the others keep pointing into the line, which must outlive the copy. */
guint32 wick_trace_decoder_export (WickTraceDecoder *decoder, GArray *values,
                                   GStringChunk *strings);
/* The edge variant of the last edge record: WICK_EDGE_CALL or WICK_EDGE_DATA. */
guint wick_trace_decoder_edge_kind (WickTraceDecoder *decoder);
/* The kind string and timestamp_ns of the last extension record. */
const char *wick_trace_decoder_extension_kind (WickTraceDecoder *decoder, gsize *len);
guint64 wick_trace_decoder_extension_timestamp (WickTraceDecoder *decoder);

const WickRecordSchema *wick_trace_record_schema (WickRecordKind kind, guint edge_kind);
const char *wick_trace_record_kind_name (WickRecordKind kind);

/* Writes the last decoded record in candle-graph's writer layout (spec §2),
 * without a newline. */
void wick_trace_decoder_write (WickTraceDecoder *decoder, WickRecordKind kind, GString *out);
/* The same for any record's values (schema slots, nested blocks after them). */
void wick_trace_record_write (WickRecordKind kind, guint edge_kind, const WickValue *values,
                              GString *out);

G_END_DECLS
