/* wick-attach-dialog-private.h — what only the tests call of wick-attach-dialog.h (the app
 * includes wick-attach-dialog.h alone). It declares no types: include it after
 * wick-attach-dialog.h. */
#pragma once

G_BEGIN_DECLS

/* Sessions listed (tests wait for the listing with wick_attach_dialog_is_listing). */
guint wick_attach_dialog_get_n_sessions (WickAttachDialog *self);

gboolean wick_attach_dialog_is_listing (WickAttachDialog *self);

/* Attaches to the @index-th session listed; returns the window that will
 * show it (the attach runs in a worker thread; wick_live_session_from_window
 * is set once it is done, a banner names the process and reason if it fails). */
GtkWindow *wick_attach_dialog_attach (WickAttachDialog *self, guint index, GError **error);

G_END_DECLS
