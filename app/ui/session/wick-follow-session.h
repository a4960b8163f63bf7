/* wick-follow-session.h — a window following a growing JSONL file.
 *
 * `wick --follow TRACE.jsonl` and File → Follow File… show a candle-graph
 * trace while any writer appends to it (candle-graph's TraceSession, a libwick
 * session's jsonl_path, a script), through app/client/wick-follow-file.c: every
 * POLL_MS the lines appended since are fed to the window's document (a
 * partial last line waits for its newline), its live analysis is refreshed
 * (provisional health, the "run in progress" banner) and every view updates.
 * A file truncated or replaced by another starts over in a new document, with
 * a banner saying which. The follow ends when the trace's terminal record
 * arrives, or when a writer was seen (the file grew, or a process had it open
 * for writing) and now the file has not grown for a second and no process has
 * it open for writing: the capture was then cut, and a failed terminal saying
 * so is added (as wick-trace attach --follow does) so that the final verdicts
 * appear. A file nothing writes (yet) is followed on, with a banner saying so. A line that does not
 * parse stops the follow with a banner naming its line. The window keeps the session (as object
 * data).
 */
#pragma once

#include <adwaita.h>

#include "wick-window.h"

G_BEGIN_DECLS

#define WICK_TYPE_FOLLOW_SESSION (wick_follow_session_get_type ())
G_DECLARE_FINAL_TYPE (WickFollowSession, wick_follow_session, WICK, FOLLOW_SESSION, GObject)

/* Follows @path in @window (one on its welcome page, or a new one). NULL with
 * @error when the file cannot be opened. */
WickFollowSession *wick_follow_session_start (WickWindow *window, const char *path, GError **error);

G_END_DECLS
