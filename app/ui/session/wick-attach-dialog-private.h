/* wick-attach-dialog-private.h — what only the tests call of wick-attach-dialog.h (the app
 * includes wick-attach-dialog.h alone). It declares no types: include it after
 * wick-attach-dialog.h. */
#pragma once

G_BEGIN_DECLS

/* Sessions listed (tests wait for the listing with wick_attach_dialog_is_listing). */
guint wick_attach_dialog_get_n_sessions (WickAttachDialog *self);

G_END_DECLS
