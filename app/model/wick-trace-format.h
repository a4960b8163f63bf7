/* wick-trace-format.h — which reader reads a file, and the errors of a file
 * that no reader reads.
 *
 * The format is judged from the file's top-level structure (plain, gzip or
 * zstd; wick-chrome-stream.h says how), never from its name or by the text of
 * a reader's error: trace-event JSON and the torch memory timeline go to the
 * Chrome importer (wick-chrome-import.c), candle-graph JSONL and anything
 * that is not JSON at all to the JSONL reader (wick-jsonl-import.c), which
 * words its own errors. wick_document_load_file_auto() (wick-document.h) is
 * the one dispatch.
 */
#pragma once

#include "wick-chrome-stream.h"
#include "wick-document.h"

G_BEGIN_DECLS

/* Why a file is no trace Wick reads, as wick_file_sniff() and
 * wick_document_load_file_auto() report it (I/O errors stay G_IO_ERROR,
 * a reader's parse errors G_IO_ERROR_INVALID_DATA with the document's
 * parse error). */
#define WICK_DOCUMENT_ERROR (wick_document_error_quark ())
GQuark wick_document_error_quark (void);

typedef enum
{
  WICK_DOCUMENT_ERROR_EMPTY,       /* no byte, or only a byte-order mark */
  WICK_DOCUMENT_ERROR_NOT_JSON,    /* its first value is not JSON: JSONL's reader words why */
  WICK_DOCUMENT_ERROR_NOT_A_TRACE, /* a JSON object with none of the members of a trace */
} WickDocumentError;

/* The format of a file by its top-level structure (reads as far as needed).
 * WICK_FILE_FORMAT_UNKNOWN with @error when none: WICK_DOCUMENT_ERROR, or
 * G_IO_ERROR when it cannot be opened or read. A damaged file whose structure
 * says Chrome is CHROME: its importer words the damage. */
WickFileFormat wick_file_sniff (const char *path, GError **error);

G_END_DECLS
