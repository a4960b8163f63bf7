/* wick-line-spool.h — the JSONL lines of a live session, kept on disk.
 *
 * A live window writes every line it receives here instead of keeping a copy
 * in memory: the spool is an anonymous file (memfd, else an unlinked file in
 * the temporary directory), so its pages can be written back and dropped by
 * the kernel and nothing is left behind when the app exits. Save As… copies
 * it. Appends are buffered (whole lines only reach the file) and may come
 * from one thread while another saves: what was flushed is never rewritten.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _WickLineSpool WickLineSpool;

WickLineSpool *wick_line_spool_new (GError **error);
void wick_line_spool_free (WickLineSpool *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLineSpool, wick_line_spool_free)

/* Appends @line (without its newline) and a newline. A write error is kept
 * and reported by flush and save; lines after it are counted as not kept. */
void wick_line_spool_append (WickLineSpool *self, const char *line, gsize length);
/* Writes the buffered lines to the file; FALSE with the first write error. */
gboolean wick_line_spool_flush (WickLineSpool *self, GError **error);

/* Lines and bytes flushed so far; lines lost to a write error. */
guint64 wick_line_spool_get_lines (WickLineSpool *self);
guint64 wick_line_spool_get_bytes (WickLineSpool *self);

/* Writes the first @length flushed bytes (a value get_bytes returned, so
 * whole lines) to @path, followed by @trailer when it is not NULL. @path is
 * replaced atomically (a temporary file next to it, renamed) and never left
 * half written. */
gboolean wick_line_spool_save (WickLineSpool *self, const char *path, guint64 length,
                               const char *trailer, GError **error);
/* The first write error, or NULL (a copy). */
char *wick_line_spool_get_error (WickLineSpool *self);

G_END_DECLS
