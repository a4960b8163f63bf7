/* wick-document.h — a candle-graph trace read into compact arrays.
 *
 * The document model is shared by the app's views, wick-trace and the live
 * window. Records are stored struct-of-arrays style: one GArray of small plain
 * structs per record kind, strings interned in one pool (WickStr offsets), so a
 * trace of millions of spans costs tens of bytes a span and no GObject each.
 *
 * Reading follows spec/candle-graph-trace-10.md exactly: the same accept and
 * reject decisions, the same messages, the same health codes and gradient
 * verdicts. A document that failed to parse still holds every record decoded
 * before the failing line, so the app can show a truncated trace.
 *
 * Owned by the model area. The layout of the structs below is a contract with
 * the views: fields may be added, not renamed or removed.
 */
#pragma once

#include <gio/gio.h>
#include <wick/wick.h>

#include "wick-capture-facts.h"
#include "wick-document-error.h"

G_BEGIN_DECLS

/* Offset into the document's string pool; 0 means absent. */
typedef guint32 WickStr;

typedef enum
{
  WICK_SPAN_FLAG_CLOSED = 1 << 0,
  WICK_SPAN_FLAG_MEASURED = 1 << 1,
  WICK_SPAN_FLAG_HAS_PARENT_ID = 1 << 2,
} WickSpanFlags;

typedef struct
{
  WickStr id;
  WickStr name;
  WickStr parent_id;    /* as written; 0 when absent */
  gint32 parent;        /* index into spans, -1 when absent or unknown */
  guint64 start_ns;
  guint64 duration_ns; /* 0 while open: an open span runs to the end of what was read */
  guint16 depth;       /* 0 for roots and spans whose parent is unknown */
  guint8 kind;         /* WickSpanKind */
  guint8 step;         /* WickStep */
  guint8 flags;        /* WickSpanFlags */
  guint16 thread;      /* its thread: libwick's "wick_thread" number (0 when absent);
                        * for imported traces a key the track model assigns.
                        * Its track: wick_tracks_span_track(). */
} WickSpan;             /* 40 bytes */

typedef struct
{
  WickStr span_id;
  gint32 span; /* span index, -1 when unknown */
  WickStr op_name;
  guint32 inputs_offset; /* into shape_pool/str lists: see wick_document_op_inputs() */
  guint32 n_inputs;
  WickStr output;       /* 0 when absent */
  guint32 shape_offset; /* into the u64 pool */
  guint32 rank;
  WickStr dtype;
  WickStr device;
  guint64 duration_ns;
  guint64 timestamp_ns;
  guint64 output_dense_bytes; /* derived when absent and the dtype is known */
  guint64 input_dense_bytes;
  gboolean has_output_dense_bytes;
} WickOp;

typedef struct
{
  WickStr span_id;
  gint32 span;
  WickStr tensor_id;
  WickStr label;
  guint32 shape_offset;
  guint32 rank;
  WickStr dtype;
  WickStr device;
  guint64 dense_bytes;
  gboolean has_dense_bytes;
  gboolean requires_grad;
  guint8 category; /* WickMemoryCategory */
} WickTensor;

typedef struct
{
  WickStr span_id;
  gint32 span;
  WickStr label;
  guint32 shape_offset;
  guint32 rank;
  WickStr dtype;
  guint64 elements;
  guint64 non_finite;
  double rms, abs_max, mean;
} WickTensorStats;

typedef struct
{
  guint64 timestamp_ns;
  WickStr storage_id;
  WickStr tensor_id;
  WickStr span_id;
  gint32 span;
  WickStr op_name;
  WickStr device;
  guint64 bytes;
  guint8 action;   /* WickMemoryAction */
  guint8 category; /* WickMemoryCategory */
  guint32 shape_offset;
  guint32 rank;
  WickStr dtype;
  guint64 address; /* Wick's "wick_address": the allocation's device address
                    * (extension mode), 0 when absent or not an address
                    * (wick_document_get_bad_addresses) */
} WickMemoryEvent;

typedef enum
{
  WICK_DEVICE_MEMORY_USED = 1 << 0,
  WICK_DEVICE_MEMORY_FREE = 1 << 1,
  WICK_DEVICE_MEMORY_RESERVED = 1 << 2,
  WICK_DEVICE_MEMORY_CAPACITY = 1 << 3,
} WickDeviceMemoryFields;

typedef struct
{
  guint64 timestamp_ns;
  WickStr device;
  guint8 present; /* WickDeviceMemoryFields */
  guint64 used_bytes, free_bytes, reserved_bytes, capacity_bytes;
} WickDeviceMemorySample;

typedef struct
{
  WickStr span_id;
  gint32 span;
  WickStr device;
  WickStr stream_id;
  WickStr clock_id;
  WickStr backend;
  guint64 start_ns;
  guint64 duration_ns;
} WickDeviceInterval;

typedef struct
{
  WickStr event_id;
  WickStr root;
  WickStr key;
  guint8 state; /* WickGradientState */
  gboolean has_norm;
  double norm;
} WickGradient;

typedef enum
{
  WICK_EDGE_CALL,
  WICK_EDGE_DATA
} WickEdgeKind;

typedef struct
{
  guint8 edge_kind; /* WickEdgeKind */
  WickStr from;     /* from_span or from_tensor */
  WickStr to;       /* to_span or to_tensor */
  guint64 host_duration_ns;
} WickEdge;

/* A Wick-only record (kind "wick_..."), kept as its JSON text (its arguments,
 * as the details pane lists them). candle-graph rejects these kinds; see
 * wick_document_get_extension_line(). What Wick itself reads of one is
 * decoded once, when it is committed, into the fields below: nothing reads
 * them from the JSON again. */
typedef struct
{
  WickStr kind;
  WickStr json;         /* the whole line */
  guint64 timestamp_ns; /* its "timestamp_ns" field, 0 when absent */
  guint32 line;         /* 1-based physical line */
  guint32 flags;        /* WICK_EXTENSION_* */
  /* string members (0 when absent or not a string): a mark's "label", a
   * weight move's "module", a stage certification's "stage" and "verdict",
   * a wick_thread record's "name" */
  WickStr label, module, stage, verdict, name;
  /* wick_thread: "thread" (1..65535, else 0) and "os_tid" (HAS_OS_TID) */
  guint32 thread;
  gint64 os_tid;
} WickExtensionRecord;

enum
{
  WICK_EXTENSION_OBJECT = 1 << 0,     /* the JSON is an object (else nothing was read) */
  WICK_EXTENSION_HAS_OS_TID = 1 << 1, /* os_tid is an integer member */
};

typedef enum
{
  WICK_SEVERITY_ERROR,
  WICK_SEVERITY_WARNING,
  WICK_SEVERITY_INFO, /* information only (importers); never affects validity */
  /* A rule that only the end of the capture decides (the terminal, open spans,
   * gradient counts, retained allocations), on a document still being fed:
   * what it says now, judged when the run ends. Never affects validity; never
   * in the health of a finished document. */
  WICK_SEVERITY_PENDING,
} WickSeverity;

typedef enum
{
  WICK_RECORD_NONE,
  WICK_RECORD_META,
  WICK_RECORD_SPAN,
  WICK_RECORD_OP,
  WICK_RECORD_TENSOR,
  WICK_RECORD_TENSOR_STATS,
  WICK_RECORD_MEMORY,
  WICK_RECORD_DEVICE_MEMORY,
  WICK_RECORD_DEVICE_INTERVAL,
  WICK_RECORD_GRADIENT,
  WICK_RECORD_EDGE,
  WICK_RECORD_TERMINAL,
  WICK_RECORD_EXTENSION,
} WickRecordType;

typedef struct
{
  const char *code; /* static string, e.g. "root_count" */
  WickSeverity severity;
  char *message;
  WickRecordType record_type;
  gint64 record_index; /* index into the array of that type, -1 when none */
  char *record_id;     /* span id or gradient event id, NULL when none */
} WickHealthIssue;

typedef enum
{
  WICK_COVERAGE_VERDICT_COMPLETE,
  WICK_COVERAGE_VERDICT_PARTIAL,
  WICK_COVERAGE_VERDICT_INVALID,
  WICK_COVERAGE_VERDICT_UNAVAILABLE,
  /* The run is in progress and no error decides the verdict yet: the counts
   * the verdict needs are judged when it ends (provisional health only). */
  WICK_COVERAGE_VERDICT_PENDING,
} WickCoverageVerdict;

typedef struct
{
  gboolean failed;        /* FALSE: the whole file parsed */
  WickDocumentError code; /* why, when failed (wick-document-error.h) */
  guint64 line;        /* 1-based physical line for decode errors, 0 otherwise */
  gint64 record_index; /* 0-based record index for stream-rule errors, -1 otherwise */
  char *message;       /* the spec's message, e.g. "parse trace JSONL line 3 from t.jsonl" */
  char *cause;         /* the decoder's cause, e.g. "missing field `key`"; may be NULL */
} WickParseError;

/* The meta record as read (spec §3.1). Strings are pool offsets (0 = absent);
 * lists are offsets into the document's WickStr list pool. */
typedef struct
{
  WickStr root, key, family;
} WickExpectedGradientEntry;

typedef struct
{
  WickStr family;
  guint8 expectation; /* WickGradientExpectation */
  guint64 min_present;
} WickGradientFamilyContract;

typedef struct
{
  gboolean present;
  WickStr implementation_id; /* optional */
  WickStr workload_id, model_id, config_id, data_id, seed_policy;
  guint64 physical_batch, accumulation_steps;
  WickStr precision, device_state;
  WickStr pair_id; /* optional */
} WickComparisonIdentityMeta;

typedef struct
{
  gboolean present; /* FALSE until a meta record was read */
  WickStr schema;
  WickStr run_id, correlation_id, entrypoint, timestamp, device, candle_version;
  guint8 phase;       /* WickPhase */
  guint8 timing_mode; /* WickTimingMode */
  gboolean measured_region_device_synchronized;
  guint64 capture_step, warmup_steps;
  WickComparisonIdentityMeta comparison_identity;
  guint32 tags_offset, n_tags; /* pairs (key, value) in the WickStr list pool */
  /* capture_contract */
  guint8 measurement_scope; /* WickMeasurementScope */
  guint8 operations, tensors, gradients, logical_memory, physical_memory,
    device_timing; /* WickCoverage */
  guint32 required_labels_offset, n_required_labels;
  guint32 gpu_labels_offset, n_gpu_labels;
  guint32 cpu_labels_offset, n_cpu_labels;
  gboolean has_gradient_contract;
  WickStr manifest_sha256;
  GArray *expected; /* WickExpectedGradientEntry, NULL without a contract */
  GArray *families; /* WickGradientFamilyContract, NULL without a contract */
} WickTraceMeta;

#define WICK_TYPE_DOCUMENT (wick_document_get_type ())
G_DECLARE_FINAL_TYPE (WickDocument, wick_document, WICK, DOCUMENT, GObject)

typedef void (*WickProgressFunc) (double fraction, gpointer user_data);

WickDocument *wick_document_new (void);

/* With @extensions TRUE (construct property "extensions", default FALSE), lines
 * whose kind starts with "wick_" are kept as WickExtensionRecord and left out of
 * the candle-graph stream; the document remembers the first one so the app can
 * say "candle-graph would reject line N". With FALSE they are decode errors, as
 * candle-graph has them (unknown variant). */
WickDocument *wick_document_new_with_extensions (gboolean extensions);
/* Memory records whose "wick_address" is not an address (not a string, not
 * "0x" and 1-16 hex digits, zero, the key twice): their address is 0 and
 * the health says so ("wick_address_invalid"). @first_line: the first's
 * line (NULL: not wanted). */
guint64 wick_document_get_bad_addresses (WickDocument *self, guint64 *first_line);
/* 1-based physical line of the first wick_ record, 0 when none. */
guint64 wick_document_get_first_extension_line (WickDocument *self);

/* FALSE (and *out zeroed) when the file says nothing of an attach
 * (WickAttachFacts: wick-capture-facts.h). */
gboolean wick_document_get_attach (WickDocument *self, WickAttachFacts *out);
/* A late attach: records before it are missing (missing > 0 or not exact).
 * Health then judges it as the partial capture it is: as though its
 * terminal were failed, which the writer makes it (docs/format.md). */
gboolean wick_document_is_partial (WickDocument *self);

/* What the writer says was lost (WickLossFacts: wick-capture-facts.h). */
void wick_document_get_losses (WickDocument *self, WickLossFacts *out);

/* Signal "changed" (no arguments) is emitted on the calling thread by
 * wick_document_analyze() and wick_document_finish(): a live reader feeds a
 * batch of lines, then calls analyze once, so views redraw once per batch.
 * wick_document_load_file() never emits it (it runs on a worker thread; its
 * progress callback is called on that thread too). Pointers returned by the
 * getters (arrays, strings) are valid until the next feed_line. */

/* Reads a trace file into a new document (once). Returns FALSE with @error on
 * I/O errors, cancellation and parse errors; in the last case (WICK_DOCUMENT_ERROR) the
 * document keeps what was read and wick_document_get_parse_error() says what, where and why. Safe
 * to call from a worker thread; the document must not be shared until it returns. */
gboolean wick_document_load_file (WickDocument *self, const char *path, GCancellable *cancellable,
                                  WickProgressFunc progress, gpointer user_data, GError **error);
/* Reads any format Wick reads, plain or compressed: trace-event JSON and the
 * torch memory timeline by their structure, candle-graph JSONL
 * (wick_document_load_file) otherwise (wick-trace-format.c decides). A JSON
 * object that is none of these fails the document with
 * WICK_DOCUMENT_ERROR_NOT_A_TRACE (wick-trace-format.h), naming what was
 * expected. For the app's File → Open and the CLI. */
gboolean wick_document_load_file_auto (WickDocument *self, const char *path,
                                       GCancellable *cancellable, WickProgressFunc progress,
                                       gpointer user_data, GError **error);

/* Incremental reading (live sessions, tests): feed physical lines without their
 * terminator, then finish. */
gboolean wick_document_feed_line (WickDocument *self, const char *line, gsize length,
                                  GError **error);
gboolean wick_document_finish (WickDocument *self, GError **error);

/* Decoding off the document's thread (live sessions): a worker thread adds
 * lines (without their terminator; copied) to a batch with its own decoder,
 * which numbers the lines across batches; the thread that owns the document
 * commits the batches in order. The outcome is that of feeding the same lines
 * to wick_document_feed_line(): same records, line numbers and first error.
 * A decoder and its batches belong to one thread until a batch is handed on. */
typedef struct _WickLineDecoder WickLineDecoder;
typedef struct _WickLineBatch WickLineBatch;
WickLineDecoder *wick_line_decoder_new (gboolean extensions);
void wick_line_decoder_free (WickLineDecoder *decoder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLineDecoder, wick_line_decoder_free)
WickLineBatch *wick_line_batch_new (void);
void wick_line_batch_free (WickLineBatch *batch);
/* Empties @batch for reuse, keeping what its arrays and chunks allocated (a
 * live worker's batches go round between the two threads: no allocation, no
 * fresh pages a batch). */
void wick_line_batch_reset (WickLineBatch *batch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLineBatch, wick_line_batch_free)
/* FALSE once a line of @decoder failed to decode: that line ends the batch
 * (its error is the document's at commit) and no later line is taken. */
gboolean wick_line_batch_add (WickLineBatch *batch, WickLineDecoder *decoder, const char *line,
                              gsize length);
guint wick_line_batch_get_n_lines (const WickLineBatch *batch);
/* Commits @batch; FALSE with @error at its decode error (as feed_line). */
gboolean wick_document_commit_batch (WickDocument *self, WickLineBatch *batch, GError **error);

/* Live analysis of a document still being fed: the health is provisional
 * (wick_document_get_health_provisional). The rules that can be judged on
 * what is there are, by candle-graph's rules, with their final severities;
 * the rules that only the end of the capture decides are issues of severity
 * WICK_SEVERITY_PENDING: the terminal not yet read (missing_terminal), each
 * span still open (open_span), the manifest gradients not captured yet (one
 * gradient_manifest_missing_key with the count), gradient families below
 * their minimum so far, and storages live now (retained_allocations).
 * Pending issues never make the document invalid, and a gradient verdict
 * that they would decide is WICK_COVERAGE_VERDICT_PENDING. Emits "changed".
 * After a successful finish, the final analysis stands and this only emits
 * "changed"; after a parse error it analyses what was read, final (nothing
 * pending) except that open spans are not reported. */
void wick_document_analyze (WickDocument *self);
/* TRUE once wick_document_finish() or load_file() ran. */
gboolean wick_document_is_finished (WickDocument *self);
/* Physical lines and records (non-empty lines of the candle-graph stream) read. */
guint64 wick_document_get_n_lines (WickDocument *self);

const char *wick_document_str (WickDocument *self, WickStr str);
const char *wick_document_get_path (WickDocument *self);
/* Names the file in messages of a document fed line by line (else "<stream>"). */
void wick_document_set_path (WickDocument *self, const char *path);
const WickParseError *wick_document_get_parse_error (WickDocument *self);

const WickSpan *wick_document_get_spans (WickDocument *self, guint *n_spans);
const WickOp *wick_document_get_ops (WickDocument *self, guint *n_ops);
const WickTensor *wick_document_get_tensors (WickDocument *self, guint *n_tensors);
const WickTensorStats *wick_document_get_tensor_stats (WickDocument *self, guint *n);
const WickMemoryEvent *wick_document_get_memory (WickDocument *self, guint *n);
const WickDeviceMemorySample *wick_document_get_device_memory (WickDocument *self, guint *n);
const WickDeviceInterval *wick_document_get_device_intervals (WickDocument *self, guint *n);
const WickGradient *wick_document_get_gradients (WickDocument *self, guint *n);
const WickExtensionRecord *wick_document_get_extensions (WickDocument *self, guint *n);
const guint64 *wick_document_get_shape (WickDocument *self, guint32 offset);
const WickStr *wick_document_get_op_inputs (WickDocument *self, const WickOp *op);
/* The WickStr list pool (op inputs, meta label lists, tags). */
const WickStr *wick_document_get_str_list (WickDocument *self, guint32 offset);
/* Byte length of a pooled string (strings may hold NUL bytes). */
gsize wick_document_str_len (WickDocument *self, WickStr str);
/* Span index for an id, -1 when none. */
gint32 wick_document_find_span (WickDocument *self, const char *id);
/* TRUE for the span an importer made rather than read: the root over an
 * imported Chrome trace, named after the file (WICK_CHROME_ROOT_SPAN_ID). It is
 * not in the file and named differently in every file, so it is in no table of
 * spans (span costs, compare) and no slice of any track. */
gboolean wick_document_is_synthetic_span (WickDocument *self, guint span);
/* Per record kind counts (WickRecordType), for summaries. */
guint64 wick_document_get_record_count (WickDocument *self, WickRecordType type);

/* Meta as read (NULL strings when absent); JSON text of the whole meta line. */
const char *wick_document_get_meta_json (WickDocument *self);
const WickTraceMeta *wick_document_get_meta (WickDocument *self);
const char *wick_document_get_entrypoint (WickDocument *self);
gboolean wick_document_has_terminal (WickDocument *self);
gboolean wick_document_get_capture_complete (WickDocument *self);
const char *wick_document_get_terminal_reason (WickDocument *self);
guint64 wick_document_get_terminal_ns (WickDocument *self);
/* The end of the latest host evidence (spec §4 rule 6.7), for time axes. */
guint64 wick_document_get_end_ns (WickDocument *self);

/* Health (spec §6–7), in the spec's order. Valid after a successful load or finish. */
const WickHealthIssue *wick_document_get_health (WickDocument *self, guint *n_issues);
/* TRUE when the health is that of a document still being fed
 * (wick_document_analyze before finish): it may hold pending issues and
 * its verdicts stand only when the run ends. FALSE once finished. */
gboolean wick_document_get_health_provisional (WickDocument *self);
/* Issues of @severity in the health (e.g. WICK_SEVERITY_PENDING). */
guint wick_document_count_health (WickDocument *self, WickSeverity severity);
gboolean wick_document_get_structurally_valid (WickDocument *self);
WickCoverageVerdict wick_document_get_gradient_coverage (WickDocument *self);
const char *wick_coverage_verdict_to_string (WickCoverageVerdict verdict);
/* Human reason for the gradient coverage verdict, e.g. "declared gradient
 * coverage is none and no gradient was recorded". */
const char *wick_document_get_gradient_coverage_reason (WickDocument *self);
const char *wick_severity_to_string (WickSeverity severity);

G_END_DECLS
