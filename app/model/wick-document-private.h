/* wick-document-private.h — the document's storage, shared by the model's
 * files (reader, health, derived views). Not for the app or the CLI. */
#pragma once

#include "wick-document.h"
#include "common/wick-utf8.h" /* wick_utf8_validate: Rust's str::from_utf8 */
#include "wick-huge-pages.h"
#include "wick-string-pool.h"
#include "wick-json-scanner.h"
#include "wick-trace-record.h"

G_BEGIN_DECLS

/* WickStr -> index, open addressing. */
typedef struct
{
  guint32 *keys; /* 0 = empty */
  guint32 *values;
  gsize n_slots;
  gsize n_items;
} WickIdMap;

void wick_id_map_init (WickIdMap *map);
void wick_id_map_clear (WickIdMap *map);
/* Inserts when absent; returns the index stored for @key (the old one if any). */
guint32 wick_id_map_insert (WickIdMap *map, guint32 key, guint32 value);
gint64 wick_id_map_lookup (const WickIdMap *map, guint32 key);

enum
{
  WICK_N_RECORD_TYPES = WICK_RECORD_EXTENSION + 1
};

struct _WickDocument
{
  GObject parent_instance;

  gboolean extensions;
  char *path;
  WickStringPool *pool;

  GArray *spans, *ops, *tensors, *tensor_stats, *memory, *device_memory, *device_intervals,
    *gradients, *edges, *extension_records;
  GArray *u64_pool; /* guint64: shapes */
  GArray *str_list; /* WickStr: op inputs, labels, tags */
  /* those arrays, on huge pages once big (wick-huge-pages.h; advised after
   * each batch of records) */
  WickHugePagesAdvised huge_pages[12];

  WickTraceMeta meta;
  char *meta_json;
  gboolean has_terminal;
  guint8 outcome; /* WICK_OUTCOME_* */
  guint64 terminal_ns;
  WickStr terminal_reason;

  guint64 n_lines;
  guint64 n_records;
  guint64 first_extension_line;
  /* Wick keys of standard records (extension mode, docs/format.md) */
  WickTraceDecoder *wick_decoder; /* the objects of "wick_records", on first use */
  GString *wick_scratch;
  char *facts_unescape; /* the scanner's scratch of scan_facts() */
  gsize facts_unescape_size;
  guint64 wick_records_skipped; /* entries that are not wick_ objects */
  WickAttachFacts attach;        /* meta's wick_attach */
  WickLossFacts losses;          /* the terminal's loss keys */
  /* memory records' "wick_address" values that are not an address: how
   * many, and the first (its line, memory index and problem) */
  guint64 bad_addresses;
  guint64 bad_address_line;
  guint32 bad_address_index;
  guint8 bad_address_problem; /* WickAddressProblem */
  guint64 end_ns;
  guint64 counts[WICK_N_RECORD_TYPES];
  WickIdMap span_ids;

  gint32 synthetic_span; /* the span an importer made, not read (-1: none) */
  char *stream_error;    /* first §4 violation, applied at finish */
  gint64 stream_error_index;
  WickParseError parse_error;
  gboolean decode_failed;
  gboolean finished;
  WickTraceDecoder *decoder;
  GString *cause;
  const WickValue *values_base; /* values of the record being committed */
  guint edge_kind;
  const WickValue *record_values; /* the record being committed */
  guint n_record_values;
  guint64 record_hashes[32]; /* string hashes of its top-level fields */

  struct _WickTracks *tracks; /* wick_document_get_tracks(), NULL until asked */
  GDestroyNotify tracks_free; /* set with @tracks by the track model */
  guint64 resolved_records;   /* n_records + 1 when parents were last resolved */

  /* analysis */
  GArray *health; /* WickHealthIssue */
  guint32 *spans_by_id;
  guint n_spans_by_id;
  gboolean analysed;
  gboolean structurally_valid;
  gboolean health_provisional;
  WickCoverageVerdict coverage;
  char *coverage_reason;
};

/* One decoded record of a WickLineBatch. */
typedef struct
{
  guint8 kind; /* WickRecordKind */
  guint8 edge_kind;
  guint64 line;     /* 1-based physical line */
  const char *text; /* the trimmed line, in the batch's buffer or text chunk */
  gsize len;
  guint32 values;       /* index of its first value in the batch's values */
  const char *ext_kind; /* extension records */
  gsize ext_kind_len;
  guint64 ext_timestamp;
  guint32 facts; /* a record added as values (text NULL): 1 + its index in the
                    batch's facts, 0 when it has none */
} WickBatchRecord;

/* Lines decoded on one thread for another to commit (wick-document-batch.c). */
struct _WickLineBatch
{
  char *buffer;       /* the file loader's chunk the records point into (owned) */
  GStringChunk *text; /* copies of lines added by wick_line_batch_add() */
  GArray *records;    /* WickBatchRecord */
  GArray *values;     /* WickValue */
  GStringChunk *strings;
  GArray *facts;      /* WickRecordFacts of records added as values, NULL until one */
  guint n_lines;      /* lines added by wick_line_batch_add() or _add_built() */
  guint64 last_line;  /* physical lines read through this batch */
  char *decode_verb;  /* "parse"/"read" on a decode error */
  WickDocumentError decode_code;
  char *decode_cause;
  guint64 error_line;
};

void wick_line_batch_init (WickLineBatch *batch, guint reserve);
void wick_line_batch_clear (WickLineBatch *batch);
/* Decodes one physical line (@line must outlive the batch's commit); FALSE
 * when it failed (the batch then says where and why). */
gboolean wick_line_batch_decode (WickLineBatch *batch, WickTraceDecoder *decoder, GString *cause,
                                 guint64 line_number, const char *line, gsize length);
/* Commits the batch's records (not its error). */
void wick_document_commit_batch_records (WickDocument *self, const WickLineBatch *batch);

/* The reader's steps, shared by feed_line and the file loader. */
void wick_document_commit_record (WickDocument *self, WickRecordKind kind, const char *line,
                                  gsize len);
void wick_document_commit_extension (WickDocument *self, const char *line, gsize len,
                                     const char *kind, gsize kind_len, guint64 timestamp_ns);
/* Fails the document at its current line: "VERB trace JSONL line N from
 * PATH" with @cause. Returns FALSE. */
gboolean wick_document_set_decode_error (WickDocument *self, WickDocumentError code,
                                         const char *verb, const char *cause, GError **error);
/* The one way a document fails: its parse error says what (@code), where
 * (@line, 1-based, 0 when unknown; @record_index, -1 when none) and why
 * (@message, and @cause, which may be NULL), and @error (may be NULL) gets the
 * same: WICK_DOCUMENT_ERROR @code, "MESSAGE: CAUSE" (or MESSAGE). What was
 * read before stays. Returns FALSE. */
gboolean wick_document_fail (WickDocument *self, WickDocumentError code, guint64 line,
                             gint64 record_index, const char *message, const char *cause,
                             GError **error);
/* Marks @span as made by the importer rather than read from the file
 * (wick_document_is_synthetic_span()). */
void wick_document_mark_synthetic_span (WickDocument *self, guint span);
/* The end of the stream (spec §4 rule 6) for a document not yet finished:
 * marks it finished; FALSE with @error (and the document failed) when the
 * stream broke a rule. Storage alone: no analysis (wick-document-finish.c
 * runs it). */
gboolean wick_document_end_stream (WickDocument *self, GError **error);
/* Drops the intern tables of a finished, analysed document whose track model
 * is built. */
void wick_document_compact (WickDocument *self);
void wick_document_emit_changed (WickDocument *self);
/* wick_document_finish() without the "changed" signal: the end of the stream,
 * the health verdicts, the track model, compaction (wick-document-finish.c). */
gboolean wick_document_finish_quietly (WickDocument *self, GError **error);

static inline gboolean
wick_document_str_is_blank (WickDocument *self, WickStr str)
{
  return wick_rust_is_blank (wick_string_pool_get (self->pool, str),
                             wick_string_pool_get_len (self->pool, str));
}

/* What only the tests call. */
gboolean wick_document_get_extensions_enabled (WickDocument *self);
/* SHA-256 (hex) over everything the reader stored: every array with its
 * strings by their bytes, the meta, the terminal, the Wick facts, the stream
 * rules' verdict. Two documents of the same records, however they were
 * committed (a file, lines fed one by one, a live ring), have the same
 * digest; derived models (health, tracks) are not in it. */
char *wick_document_digest (WickDocument *self);
guint64 wick_document_get_n_records (WickDocument *self);
const WickEdge *wick_document_get_edges (WickDocument *self, guint *n);
const char *wick_document_get_schema (WickDocument *self);
const char *wick_document_get_run_id (WickDocument *self);
WickPhase wick_document_get_phase (WickDocument *self);

/* Entries of "wick_records" keys that were not Wick records (not an object,
 * no wick_ kind): counted, not kept (extension mode). */
guint64 wick_document_get_wick_records_skipped (WickDocument *self);

G_END_DECLS
