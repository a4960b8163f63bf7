/* wick-remote-dialog-private.h — what only the tests call of wick-remote-dialog.h (the app
 * includes wick-remote-dialog.h alone). It declares no types: include it after
 * wick-remote-dialog.h. */
#pragma once

G_BEGIN_DECLS

/* The hosts offered from ~/.ssh/config. */
guint wick_remote_dialog_get_n_hosts (WickRemoteDialog *self);
const char *wick_remote_dialog_get_host (WickRemoteDialog *self, guint index);
gboolean wick_remote_dialog_is_listing (WickRemoteDialog *self);
guint wick_remote_dialog_get_n_sessions (WickRemoteDialog *self);
gint64 wick_remote_dialog_get_session_pid (WickRemoteDialog *self, guint index);

/* Why the last listing failed (NULL: it did not). */
const char *wick_remote_dialog_get_error (WickRemoteDialog *self);

/* Lists the sessions of @host (a config name or [ssh://][user@]host[:port]),
 * as picking its row or typing it does. */
void wick_remote_dialog_list (WickRemoteDialog *self, const char *host);

/* Attaches the @index-th session listed (ssh://host/PID) and closes the
 * dialog; the window that will show it. */
GtkWindow *wick_remote_dialog_attach (WickRemoteDialog *self, guint index);

G_END_DECLS
