/* wick-live-session.h — a window attached to a live process.
 *
 * WickLiveSession owns the ring stream of one attached session and feeds the
 * window's growing document from it. A worker thread per session drains the
 * ring, formats and decodes the lines into batches (a bounded queue of
 * IN_FLIGHT batches: a worker without room waits, and records the ring then
 * overwrites are counted as lost and shown) and writes the lines to an
 * anonymous spool file for Save As… (no copy in memory). The main thread only
 * commits ready batches, from a source below input and drawing, for at most
 * WICK_LIVE_COMMIT_BUDGET_US at a time (the rest after the next events and
 * frame), then tells the window. Closing the window stops and joins the
 * worker. The session shows dropped and lost records in a banner the moment
 * they arrive, shows the end of the process, and adds the Weights and Stages
 * pages, which talk to the process over its control socket.
 */
#pragma once

#include <adwaita.h>

#include "client/wick-live-client.h"
#include "wick-window.h"

G_BEGIN_DECLS

#define WICK_LIVE_COMMIT_BUDGET_US 4000

/* The history limit: a view takes at most this many lines (about a record
 * each) and then starts over on the newest records of the run, from a second
 * attach (its spans still open and live allocations come with it), with a
 * banner saying so; the spool keeps the whole run for Save As…. 0: no limit.
 * WICK_LIVE_HISTORY (a count) overrides the setting live-history-records. */
#define WICK_LIVE_HISTORY_DEFAULT G_GUINT64_CONSTANT (1000000)

#define WICK_TYPE_LIVE_SESSION (wick_live_session_get_type ())
G_DECLARE_FINAL_TYPE (WickLiveSession, wick_live_session, WICK, LIVE_SESSION, GObject)

/* Connects to @socket_path, says hello, maps the ring, takes the attach
 * snapshot (a banner says so when there is none) and shows it in @window
 * (a window on its welcome page or a new one). The window keeps the session
 * alive (as object data) until it is destroyed. */
WickLiveSession *wick_live_session_attach (WickWindow *window, const char *socket_path,
                                           GError **error);

/* The same in a worker thread (connect, hello, the ring and the snapshot
 * never block the main thread; with @socket_path NULL the session of @pid is
 * looked up there too): shows an "Attaching to @label…" banner at
 * once, and on failure a banner naming @label (e.g. "wick-demo (pid 42)")
 * and the reason. @callback runs on the main thread; call
 * wick_live_session_attach_finish there with the same window. */
void wick_live_session_attach_async (WickWindow *window, const char *socket_path, gint64 pid,
                                     const char *label, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data);
WickLiveSession *wick_live_session_attach_finish (WickWindow *window, GAsyncResult *result,
                                                  GError **error);

/* Shows @message as a toast on @window (wick-live-toasts.c): messages of
 * one @kind within a second become one toast with a count, one toast is on
 * screen at a time (3 s of frames each, the rest wait), and toasts are
 * dismissed only from the frame clock, never by libadwaita 1.2's timer (which
 * crashes its toast overlay when it fires during the show animation). */
void wick_live_window_toast_kind (WickWindow *window, const char *kind, const char *message);
/* The "run in progress" banner (wick-live-progress.c): while @document's
 * health is provisional, says the run is in progress and how many health
 * rules are pending until it ends (button: Health); hidden once the health is
 * final (or @document is NULL). Returns the banner's text, NULL when hidden;
 * wick_live_window_get_progress says the same without updating. */
const char *wick_live_window_update_progress (WickWindow *window, WickDocument *document);

G_END_DECLS
