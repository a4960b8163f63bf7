/* wick-input.h — a trace file's bytes, decompressed as a stream when needed.
 *
 * Every reader of trace files (candle-graph JSONL, Chrome JSON, the torch
 * memory timeline) reads through this, so compressed files open everywhere:
 * the compression is judged by the file's magic bytes, never by its name —
 *   1f 8b        gzip (zlib; concatenated members are read one after another)
 *   28 b5 2f fd  zstd (libzstd; concatenated frames too)
 *   anything else is read as it is.
 *   fd 37 7a 58 (xz), "BZh1".."BZh9" (bzip2), 04 22 4d 18 (lz4): refused, every
 *                read fails with WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION.
 * A compressed stream that ends early (a cut-off download) gives the bytes
 * decoded so far and then WICK_DOCUMENT_ERROR_TRUNCATED naming the file;
 * corrupt data gives WICK_DOCUMENT_ERROR_CORRUPT_COMPRESSION with zlib's or
 * zstd's reason (wick-document-error.h). Reads are sequential; nothing is
 * mapped or held beyond one compressed chunk.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum
{
  WICK_COMPRESSION_NONE,
  WICK_COMPRESSION_GZIP,
  WICK_COMPRESSION_ZSTD,
} WickCompression;

typedef struct _WickInput WickInput;

/* Opens @path; @error says "open PATH: reason" when it cannot. */
WickInput *wick_input_open (const char *path, GError **error);
/* Reads from memory (borrowed; must outlive the input), for tests and fuzzing. */
WickInput *wick_input_new_for_data (const void *data, gsize len, const char *name);
void wick_input_free (WickInput *input);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickInput, wick_input_free)

/* Fills @buffer with up to @len decoded bytes; fewer only at the end. Returns
 * the count (0 at the end), -1 with @error on failure (bytes decoded before
 * the failure were returned by earlier calls). */
gssize wick_input_read (WickInput *input, void *buffer, gsize len, GError **error);

WickCompression wick_input_get_compression (WickInput *input);
/* File bytes consumed so far and the file's size (0 when unknown), for progress. */
guint64 wick_input_get_consumed (WickInput *input);
guint64 wick_input_get_size (WickInput *input);

/* The longest JSONL line (without its newline) a reader accepts: a longer one
 * is the error "line is longer than the maximum of N bytes", reported as soon
 * as that many bytes were read without a newline. The default is
 * WICK_DEFAULT_MAX_LINE_LENGTH (256 MiB), or the environment variable
 * WICK_MAX_LINE_BYTES when set; `wick-trace --max-line-bytes N` sets it. */
#define WICK_DEFAULT_MAX_LINE_LENGTH ((gsize)256 << 20)
gsize wick_max_line_length (void);
void wick_set_max_line_length (gsize bytes);
/* Reads WICK_MAX_LINE_BYTES, WICK_MAX_DECOMPRESSED_BYTES and
 * WICK_MAX_COMPRESSION_RATIO (unset: TRUE, the defaults stay). A value that is
 * not a size or a ratio ("abc", "-1", "0") is an error with a sentence, not
 * ignored: wick-trace and the app call this first and refuse to start. */
gboolean wick_max_line_length_from_environment (GError **error);
/* Parses "N", "NK", "NM" or "NG" (binary multiples); FALSE when not a size. */
gboolean wick_parse_byte_size (const char *text, gsize *bytes);
/* Parses "N" or "N:1", N from 1 to G_MAXUINT; FALSE otherwise. */
gboolean wick_parse_ratio (const char *text, guint *ratio);

/* Decompression bombs. A compressed file is read only up to
 * wick_max_decompressed_bytes() decoded bytes (WICK_DEFAULT_MAX_DECOMPRESSED,
 * 32 GiB; WICK_MAX_DECOMPRESSED_BYTES or `--max-decompressed-bytes`), and,
 * once WICK_COMPRESSION_RATIO_FLOOR (64 MiB) were decoded, only while the
 * decoded bytes are fewer than wick_max_compression_ratio() times the
 * compressed bytes used (WICK_DEFAULT_MAX_COMPRESSION_RATIO, 200:1;
 * WICK_MAX_COMPRESSION_RATIO or `--max-compression-ratio`). Real traces
 * compress 12:1 to 50:1 (gzip and zstd -19, tests/data); gzip can reach
 * 1032:1, zstd far more. Past a limit a read fails with
 * WICK_DOCUMENT_ERROR_TOO_LARGE and a sentence naming the file, the sizes and
 * the limit: readers keep what was decoded before, as they do for a cut-off
 * file (wick_input_error_is_cut()). */
#define WICK_DEFAULT_MAX_DECOMPRESSED ((guint64)32 << 30)
#define WICK_DEFAULT_MAX_COMPRESSION_RATIO 200u
#define WICK_COMPRESSION_RATIO_FLOOR ((guint64)64 << 20)
void wick_set_max_decompressed_bytes (guint64 bytes); /* 0: the default */
void wick_set_max_compression_ratio (guint ratio);    /* 0: the default */

/* TRUE when an error of wick_input_read() says the input stopped early (cut
 * off, or a decompression limit reached) and the bytes decoded before stand. */
gboolean wick_input_error_is_cut (const GError *error);

G_END_DECLS
