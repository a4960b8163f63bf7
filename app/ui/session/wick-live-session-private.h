/* wick-live-session-private.h — what only the tests call of wick-live-session.h (the app
 * includes wick-live-session.h alone). It declares no types: include it after
 * wick-live-session.h. */
#pragma once

G_BEGIN_DECLS

const char *wick_live_session_get_socket_path (WickLiveSession *self);

/* TRUE once the process finished or died and the ring is drained. */
gboolean wick_live_session_is_ended (WickLiveSession *self);

/* A remote session whose link was lost: the reason its banner gives (NULL
 * while the link is up or after a clean end). */
const char *wick_live_session_get_link_lost (WickLiveSession *self);

/* A remote session's ssh (the attach link's), 0 for a local one. */
int wick_live_session_get_ssh_pid (WickLiveSession *self);

/* Tests: while @hold, no batch is committed, as when the main thread is
 * busy (a long analysis, a loaded machine); the worker's queue fills. */
void wick_live_session_hold_commits (WickLiveSession *self, gboolean hold);
guint64 wick_live_session_get_dropped (WickLiveSession *self);
/* Records the window's reader lost (the ring overwrote them before it read them). */
guint64 wick_live_session_get_lost (WickLiveSession *self);

/* How often the view started over at its history limit. */
guint wick_live_session_get_restarts (WickLiveSession *self);

/* The Weights and Stages pages (WickWeightsPanel, WickStagesPanel). */
GtkWidget *wick_live_session_get_weights_panel (WickLiveSession *self);
GtkWidget *wick_live_session_get_stages_panel (WickLiveSession *self);

/* Toasts put on screen, messages merged into another, and toasts waiting. */
void wick_live_window_get_toast_counts (WickWindow *window, guint *raised, guint *coalesced,
                                        guint *waiting);

guint64 wick_live_history_limit (void);

/* Commits what is ready and writes the lines the document holds as JSONL
 * (with a failed terminal saying the capture was cut when the process still
 * runs), copied from the spool. */
gboolean wick_live_session_save (WickLiveSession *self, const char *path, GError **error);

/* The session shown in @window, or NULL. */
WickLiveSession *wick_live_session_from_window (WickWindow *window);

const char *wick_live_window_get_progress (WickWindow *window);

/* Commits batches until one made when the ring was empty or @budget_us
 * passed, waiting for the worker meanwhile (tests, screenshots). */
void wick_live_session_pump (WickLiveSession *self, gint64 budget_us);

G_END_DECLS
