/* wick-document-error.h — why a trace file did not read, as a code.
 *
 * Every reader of trace files (wick-input for the bytes, the JSONL reader, the
 * Chrome reader and its memory timeline, the allocator-snapshot pickle reader,
 * the rank archives) and the format sniff (wick-trace-format.c) report a
 * failure of the file's content in WICK_DOCUMENT_ERROR with one of these
 * codes; the message is for people and names the file, the line or byte
 * offset and the field. A decision about an error is made on its code, never
 * on its text. What stays in other domains: the file cannot be opened or read
 * (G_IO_ERROR / G_FILE_ERROR with errno's code), the caller cancelled
 * (G_IO_ERROR_CANCELLED, as GIO cancels everywhere), a wrong argument
 * (G_IO_ERROR_INVALID_ARGUMENT). A document that failed keeps the code in its
 * parse error (WickParseError.code) beside where and why.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define WICK_DOCUMENT_ERROR (wick_document_error_quark ())
GQuark wick_document_error_quark (void);

typedef enum
{
  WICK_DOCUMENT_ERROR_EMPTY,       /* no byte, or only a byte-order mark */
  WICK_DOCUMENT_ERROR_NOT_JSON,    /* its first value is not JSON: JSONL's reader words why */
  WICK_DOCUMENT_ERROR_NOT_A_TRACE, /* a JSON object with none of the members of a trace */
  WICK_DOCUMENT_ERROR_INVALID,     /* a line, an event, a field or a stream rule is broken */
  WICK_DOCUMENT_ERROR_TRUNCATED,   /* the file, or its compressed stream, ends inside the trace */
  WICK_DOCUMENT_ERROR_TOO_LARGE,   /* a line, a value or the decompressed bytes pass a limit */
  WICK_DOCUMENT_ERROR_CORRUPT_COMPRESSION,     /* gzip or zstd data that does not decode */
  WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION, /* xz, bzip2 or lz4 (by magic bytes) */
} WickDocumentError;

G_END_DECLS
