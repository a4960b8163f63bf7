/* wick-follow-file.h — following a JSONL file that another process appends
 * to (candle-graph's TraceSession, a libwick session's writer, anything).
 *
 * Each poll reads what was appended since the last one (up to a byte budget)
 * and delivers the complete lines; a partial last line waits for its newline.
 * A file that shrinks below what was read (truncated) or whose path now names
 * another file (replaced: a new inode, as an editor or a restarted writer
 * does) is read again from the start: the poll says so, with the reason, and
 * the lines that follow are the new file's. Never blocks: only a regular
 * file is followed (the path is checked before a non-blocking open, the
 * descriptor after it); a FIFO, socket or device at the path, at the start
 * or renamed over the followed file, is an error with a sentence. A line
 * longer than the JSONL line limit (wick_max_line_length, WICK_MAX_LINE_BYTES)
 * is skipped up to its newline and counted, so memory stays within it.
 */
#pragma once

#include <glib.h>

#include "wick-live-stream.h"

G_BEGIN_DECLS

typedef struct _WickFollowFile WickFollowFile;

WickFollowFile *wick_follow_file_new (const char *path, GError **error);
void wick_follow_file_free (WickFollowFile *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickFollowFile, wick_follow_file_free)

/* Delivers the complete lines appended since the last poll, reading at most
 * @max_bytes (0: no limit). When the file was truncated or replaced,
 * @restarted_reason (if not NULL) receives a sentence saying which (free it)
 * before any line of the new content is delivered. Returns the bytes read, or
 * -1 with @error when the file cannot be read. */
gssize wick_follow_file_poll (WickFollowFile *self, gsize max_bytes, WickLiveLineFunc emit,
                              gpointer user_data, char **restarted_reason, GError **error);

const char *wick_follow_file_get_path (WickFollowFile *self);
/* Bytes of a partial last line waiting. */
gsize wick_follow_file_get_pending (WickFollowFile *self);
guint wick_follow_file_get_restarts (WickFollowFile *self);
/* Lines longer than the limit, skipped (a partial one being skipped counts). */
guint64 wick_follow_file_get_skipped_lines (WickFollowFile *self);

/* Whether a process that this user may inspect has the file open for
 * writing now (its /proc/PID/fd entries, with the access mode from
 * /proc/PID/fdinfo); this process's own read is not a writer. A writer of
 * another user cannot be seen; when /proc cannot be read at all the answer
 * is TRUE (unknown: keep following). */
gboolean wick_follow_file_has_writer (WickFollowFile *self);

G_END_DECLS
