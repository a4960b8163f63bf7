/* wick-record.h — the one door into a document: a record committed as a struct.
 *
 * Every producer commits the same way: the JSONL decoder (wick-trace-record),
 * the live worker (ring records), the Chrome importer and every importer to
 * come fill a WickRecord and call wick_document_commit(). No producer writes
 * candle-graph text for the document to parse again; text is only for files
 * (a trace, the live Save-As spool, `wick-trace attach`).
 *
 * A record is its kind plus its field values in the schema slots of
 * wick-trace-record.h (WickValue, one per field in the spec's order; lists,
 * maps and nested objects as blocks after them, their offsets relative to
 * the record's first value), not one C struct per kind, because:
 *  - the JSONL decoder already produces exactly that array, so reading a file
 *    commits each record without a copy or a conversion;
 *  - the schema table says each field's type, whether it is required, optional
 *    or defaulted, and its default: a WickRecordBuilder fills the defaults and
 *    names the first required field left unset, so an importer cannot commit a
 *    half record unnoticed, and the document's code per kind exists once;
 *  - a field the spec adds is one slot in one table, not a change to a struct
 *    and to every producer of it.
 * Strings are pointer + length (not NUL-terminated) and need to live only until
 * wick_document_commit() returns: the document interns them.
 *
 * Wick's own facts (the `wick_` keys candle-graph ignores, docs/format.md)
 * come decoded in WickRecordFacts: a producer that has them as values (the
 * ring) fills the struct; the JSONL reader decodes them from the line once,
 * before the commit. Wick records of their own (kind "wick_…", as
 * wick_document_commit_extension() takes them) keep their JSON as their
 * arguments, and the facts Wick reads from them (label, module, stage,
 * verdict, thread identity) are decoded once at commit into the typed fields
 * of WickExtensionRecord: no view parses them again.
 */
#pragma once

#include "wick-capture-facts.h"
#include "wick-trace-record.h"

G_BEGIN_DECLS

/* The document takes records (wick-document.h); a record knows it only as
 * the door's destination. */
typedef struct _WickDocument WickDocument;
typedef struct _WickLineDecoder WickLineDecoder;
typedef struct _WickLineBatch WickLineBatch;

typedef enum
{
  WICK_FACT_THREAD_NAME = 1 << 0,     /* span_start "wick_thread_name" */
  WICK_FACT_OS_TID = 1 << 1,          /* span_start "wick_os_tid" */
  WICK_FACT_ATTACH = 1 << 2,          /* meta "wick_attach" */
  WICK_FACT_RECORDS = 1 << 3,         /* "wick_records": Wick records riding on this one */
  WICK_FACT_DROPPED = 1 << 4,         /* terminal "wick_dropped" */
  WICK_FACT_LOST = 1 << 5,            /* terminal "wick_lost" */
  WICK_FACT_DETACHED = 1 << 6,        /* terminal "wick_detached" */
  WICK_FACT_RECORDS_DROPPED = 1 << 7, /* terminal "wick_records_dropped" */
} WickFactFlags;

/* The Wick keys of a standard record, decoded. Only the facts named in
 * @present are read. */
typedef struct
{
  guint32 present; /* WickFactFlags */
  /* span_start: the thread that recorded it (the span's "wick_thread"
   * number is the SS_WICK_THREAD slot of its values) */
  const char *thread_name;
  gsize thread_name_len;
  guint64 os_tid;
  /* meta */
  WickAttachFacts attach;
  /* "wick_records": a JSON array of Wick record objects, each committed as
   * wick_document_commit_extension() would (entries that are not one are
   * counted, wick_document_get_wick_records_skipped) */
  const char *records_json;
  gsize records_json_len;
  /* terminal */
  WickLossFacts losses;
} WickRecordFacts;

typedef struct
{
  WickRecordKind kind;          /* a standard kind (< WICK_N_KINDS) */
  guint8 edge_kind;             /* WICK_EDGE_CALL or WICK_EDGE_DATA for an edge */
  guint64 line;                 /* 1-based physical line; 0: the next one */
  const WickValue *values;      /* schema slots, nested blocks after them */
  const WickRecordFacts *facts; /* NULL: none */
  const char *text;             /* the record's JSONL text when it came as text */
  gsize text_len;               /* (meta keeps it; NULL: written from @values) */
} WickRecord;

/* Commits one record: interning, the arrays, the stream rules of spec §4
 * (checked now, reported at finish as candle-graph does). The document must
 * still accept records (not finished, no decode error). */
void wick_document_commit (WickDocument *self, const WickRecord *record);

/* ---- building a record from values ------------------------------------- */

/* A record's values in the making, for producers that do not decode text.
 * Slots are addressed by index: a top-level field's slot is its enum value of
 * wick-trace-record.h (SS_NAME, MEM_BYTES, …); a nested block's slots start at
 * the index wick_record_builder_object()/_list() returned. Reuse one builder
 * for many records (begin resets it). */
typedef struct _WickRecordBuilder
{
  GArray *values; /* WickValue */
  GArray *fields; /* const WickFieldSchema *, per value (NULL: a list element) */
  WickRecordKind kind;
  guint8 edge_kind;
  WickRecordFacts facts;
} WickRecordBuilder;

void wick_record_builder_init (WickRecordBuilder *builder);
void wick_record_builder_clear (WickRecordBuilder *builder);
/* Starts a record: defaulted fields hold their default (set), optional and
 * required ones are unset. */
void wick_record_builder_begin (WickRecordBuilder *builder, WickRecordKind kind, guint edge_kind);
void wick_record_builder_str (WickRecordBuilder *builder, guint32 at, const char *str, gssize len);
void wick_record_builder_u64 (WickRecordBuilder *builder, guint32 at, guint64 value);
void wick_record_builder_f64 (WickRecordBuilder *builder, guint32 at, double value);
void wick_record_builder_bool (WickRecordBuilder *builder, guint32 at, gboolean value);
void wick_record_builder_enum (WickRecordBuilder *builder, guint32 at, guint variant);
/* By the variant's spelling in the spec ("alloc", "function", …); FALSE (and a
 * critical: a producer's bug) when the field has no such variant. */
gboolean wick_record_builder_enum_name (WickRecordBuilder *builder, guint32 at, const char *name);
/* An OBJECT field: sets it and returns the index of its block's first slot
 * (its fields defaulted as in begin). */
guint32 wick_record_builder_object (WickRecordBuilder *builder, guint32 at);
/* A list or map field with @n elements (a map: @n key/value pairs); returns
 * the index of the first element's slot (an OBJECT_LIST's elements are
 * blocks of the object's fields, defaulted as in begin). */
guint32 wick_record_builder_list (WickRecordBuilder *builder, guint32 at, guint32 n);
/* The first required field left unset, as "field `x` of kind", or NULL. */
char *wick_record_builder_missing (WickRecordBuilder *builder);
/* The record as built, valid until the builder's next begin. */
void wick_record_builder_get (WickRecordBuilder *builder, WickRecord *out);
/* Commits the record as built. A required field left unset is a producer's
 * bug: the document then fails as for a bad line ("commit record N: missing
 * field `x` of kind") and FALSE is returned. */
gboolean wick_document_commit_built (WickDocument *self, WickRecordBuilder *builder,
                                     GError **error);

/* A live reader's record, added as values to a batch (wick-document.h's
 * WickLineBatch) on its worker thread, in line order with the lines added by
 * wick_line_batch_add() (it counts as one line); the strings and facts are
 * copied. FALSE, as for a bad line, when a required field is unset. */
gboolean wick_line_batch_add_built (WickLineBatch *batch, WickLineDecoder *decoder,
                                    WickRecordBuilder *builder);

G_END_DECLS
