/* wick-remote-dialog.h — "Attach to Remote Process…": a live session on
 * another machine, reached through the system's ssh.
 *
 * The host is one of the `Host` names of the user's ~/.ssh/config
 * (wick-ssh-config.h: patterns left out) or typed ([ssh://][user@]host[:port]).
 * Picking one lists that host's sessions (`wick-trace serve --stdio` on the
 * node, as `wick-trace --remote … sessions` does) off the main thread with a
 * spinner and ssh's deadlines; a session's row attaches it as
 * `wick --attach ssh://host/PID` does. ssh runs without a terminal; what it
 * asks (a host key to accept, a passphrase, a password) it asks through
 * wick-askpass, a dialog of its own (see wick_remote_dialog_use_askpass).
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/* The application that owns the windows (wick-application.h): opaque here,
 * the live area only opens windows of it. */
typedef struct _WickApplication WickApplication;

#define WICK_TYPE_REMOTE_DIALOG (wick_remote_dialog_get_type ())
G_DECLARE_FINAL_TYPE (WickRemoteDialog, wick_remote_dialog, WICK, REMOTE_DIALOG, AdwWindow)

/* How long the node's answer to the listing may take once ssh connected
 * (ssh's connect and the node's hello have their own deadlines). */
#define WICK_REMOTE_DIALOG_LIST_TIMEOUT_MS 20000

/* Makes every ssh the app runs ask its questions through wick-askpass (the
 * build tree's when the app runs from there, else the installed one in
 * libexecdir): called once at the application's startup. */
void wick_remote_dialog_use_askpass (void);

WickRemoteDialog *wick_remote_dialog_new (WickApplication *app, GtkWindow *parent);

G_END_DECLS
