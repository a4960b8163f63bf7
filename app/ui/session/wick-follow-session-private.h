/* wick-follow-session-private.h — what only the tests call of wick-follow-session.h (the app
 * includes wick-follow-session.h alone). It declares no types: include it after
 * wick-follow-session.h. */
#pragma once

G_BEGIN_DECLS

WickFollowSession *wick_follow_session_from_window (WickWindow *window);
WickDocument *wick_follow_session_get_document (WickFollowSession *self);

/* TRUE once the terminal arrived, the writer went away, or a line failed. */
gboolean wick_follow_session_is_ended (WickFollowSession *self);

/* Times the file was truncated or replaced and read again from the start. */
guint wick_follow_session_get_restarts (WickFollowSession *self);

/* The last restart or end message shown in a banner, NULL before any. */
const char *wick_follow_session_get_message (WickFollowSession *self);

/* How many times the session looked for the file's writer after the file had
 * not grown for a second (when a writer gone is decided; tests wait on it). */
guint wick_follow_session_get_idle_checks (WickFollowSession *self);

/* Polls now (tests; the window polls by itself). */
void wick_follow_session_poll (WickFollowSession *self);

G_END_DECLS
