/* wick-live-session.h — a window attached to a live process.
 *
 * WickLiveSession owns the ring stream of one attached session and feeds the
 * window's growing document from it: a frame-clock tick on the window drains
 * the ring for at most WICK_LIVE_FRAME_BUDGET_US per frame (the rest waits for
 * the next frame, so the UI stays responsive at the producer's full rate),
 * feeds each line to the document, and tells the window once per frame. It
 * keeps the lines for Save As…, shows dropped and lost records in a banner the
 * moment they happen, shows the end of the process, and adds the Weights and
 * Stages pages, which talk to the process over its control socket.
 */
#pragma once

#include <adwaita.h>

#include "live/wick-live-client.h"
#include "wick-window.h"

G_BEGIN_DECLS

#define WICK_LIVE_FRAME_BUDGET_US 4000

#define WICK_TYPE_LIVE_SESSION (wick_live_session_get_type ())
G_DECLARE_FINAL_TYPE (WickLiveSession, wick_live_session, WICK, LIVE_SESSION, GObject)

/* Connects to @socket_path, says hello, maps the ring and shows it in @window
 * (a window on its welcome page or a new one). The window keeps the session
 * alive (as object data) until it is destroyed. */
WickLiveSession *wick_live_session_attach (WickWindow *window, const char *socket_path,
                                           GError **error);

const WickLiveSessionInfo *wick_live_session_get_info (WickLiveSession *self);
const char *wick_live_session_get_socket_path (WickLiveSession *self);
WickWindow *wick_live_session_get_window (WickLiveSession *self);
/* TRUE once the process finished or died and the ring is drained. */
gboolean wick_live_session_is_ended (WickLiveSession *self);
guint64 wick_live_session_get_dropped (WickLiveSession *self);
/* Drains what is there now and writes the session as JSONL (with a failed
 * terminal saying the capture was cut when the process still runs). */
gboolean wick_live_session_save (WickLiveSession *self, const char *path, GError **error);
/* The Weights and Stages pages (WickWeightsPanel, WickStagesPanel). */
GtkWidget *wick_live_session_get_weights_panel (WickLiveSession *self);
GtkWidget *wick_live_session_get_stages_panel (WickLiveSession *self);
/* The session shown in @window, or NULL. */
WickLiveSession *wick_live_session_from_window (WickWindow *window);
/* Shows @message as a short (3 s) toast on @window: results of the Weights
 * and Stages pages come in quick succession. (Dismissing the previous toast
 * instead crashes libadwaita 1.2's toast overlay during its animation.) */
void wick_live_window_toast (WickWindow *window, const char *message);
/* Drains until the ring is empty or @budget_us passed (tests, screenshots). */
void wick_live_session_pump (WickLiveSession *self, gint64 budget_us);

G_END_DECLS
