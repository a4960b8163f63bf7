/* wick-attach-dialog.h — "Attach to Process…": the live sessions of this user.
 *
 * A modal window listing every session that answers on the control directory
 * (program, pid, entrypoint, start time, ring policy, drops), refreshed on
 * open and with a Refresh button; the listing runs off the main thread.
 * Activating a row (or Attach) attaches: the parent window is reused when it
 * shows the welcome page, otherwise a new window opens.
 */
#pragma once

#include <adwaita.h>

#include "client/wick-live-client.h"

G_BEGIN_DECLS

/* The application that owns the windows (wick-application.h): opaque here,
 * the live area only opens windows of it. */
typedef struct _WickApplication WickApplication;

#define WICK_TYPE_ATTACH_DIALOG (wick_attach_dialog_get_type ())
G_DECLARE_FINAL_TYPE (WickAttachDialog, wick_attach_dialog, WICK, ATTACH_DIALOG, AdwWindow)

WickAttachDialog *wick_attach_dialog_new (WickApplication *app, GtkWindow *parent);

/* A session's row (program, pid, entrypoint, start, ring, drops), activatable;
 * the remote dialog shows the same rows. */
GtkWidget *wick_attach_dialog_session_row (const WickLiveSessionInfo *info);

/* Attaches the session of @pid in @window when it is empty, else in a new
 * window, asynchronously as above (@error is not set: failures are banners). */
/* The same for a process on another machine: @url is ssh://[user@]host[:port]/PID,
 * reached through the system's ssh (WICK_REMOTE_COMMAND: the node's wick-trace). */
GtkWindow *wick_live_ui_attach_url (WickApplication *app, GtkWindow *window, const char *url);
GtkWindow *wick_live_ui_attach_pid (WickApplication *app, GtkWindow *window, gint64 pid,
                                    GError **error);

G_END_DECLS
