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
#include "wick-document-error.h"
#include "wick-document.h"

G_BEGIN_DECLS

/* The format of a file by its top-level structure (reads as far as needed).
 * WICK_FILE_FORMAT_UNKNOWN with @error when none: WICK_DOCUMENT_ERROR (EMPTY,
 * NOT_JSON, NOT_A_TRACE, UNSUPPORTED_COMPRESSION, or TOO_LARGE when its first
 * value passes the limit; wick-document-error.h), or G_IO_ERROR when it
 * cannot be opened or read. A damaged file whose
 * structure says Chrome is CHROME: its importer words the damage. */
WickFileFormat wick_file_sniff (const char *path, GError **error);

G_END_DECLS
