/* wick-live-ui.c — hooks the live UI into the application.
 *
 * wick_live_ui_register() (called once at startup) enables "Attach to
 * Process…", "Attach to Remote Process…" (app.attach-remote) and "Follow File…" (also `wick --follow TRACE.jsonl`). With
 * `wick --attach PID` (tools/run-demo.sh runs it) the first window that opens
 * attaches to that process, so a script can start a workload and the app on
 * it in one command.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "wick-application.h"
#include "wick-attach-dialog.h"
#include "wick-follow-session.h"
#include "wick-remote-dialog.h"
#include "wick-window.h"

static void
on_attach (WickApplication *app, GtkWindow *parent, gpointer user_data)
{
  WickAttachDialog *dialog = wick_attach_dialog_new (app, parent);
  gtk_window_present (GTK_WINDOW (dialog));
}

/* File → Attach to Remote Process… (app.attach-remote) */
static void
on_attach_remote (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *app = user_data;
  WickRemoteDialog *dialog
    = wick_remote_dialog_new (app, gtk_application_get_active_window (GTK_APPLICATION (app)));
  gtk_window_present (GTK_WINDOW (dialog));
}

typedef struct
{
  WickApplication *app;
  GtkWindow *window;
  gint64 pid;
  char *url;
} PendingAttach;

static gboolean
attach_from_command_line (gpointer user_data)
{
  PendingAttach *pending = user_data;
  /* Asynchronous: a failure is a banner on the window naming the pid and why. */
  if (pending->url != NULL)
    wick_live_ui_attach_url (pending->app, pending->window, pending->url);
  else
    wick_live_ui_attach_pid (pending->app, pending->window, pending->pid, NULL);
  g_free (pending->url);
  g_object_unref (pending->window);
  g_free (pending);
  return G_SOURCE_REMOVE;
}

static void
on_window_added (GtkApplication *application, GtkWindow *window, gpointer user_data)
{
  gint64 pid = wick_application_get_attach_pid (WICK_APPLICATION (application));
  if (!WICK_IS_WINDOW (window))
    return;
  g_signal_handlers_disconnect_by_func (application, on_window_added, user_data);
  const char *url = wick_application_get_attach_url (WICK_APPLICATION (application));
  if (pid <= 0 && url == NULL)
    return;
  PendingAttach *pending = g_new0 (PendingAttach, 1);
  pending->url = g_strdup (url);
  pending->app = WICK_APPLICATION (application);
  pending->window = g_object_ref (window);
  pending->pid = pid;
  /* After the window finished opening (files given on the command line load first). */
  g_idle_add (attach_from_command_line, pending);
}

/* File → Follow File… and wick --follow: the welcome window, else a new one. */
static void
on_follow (WickApplication *app, GtkWindow *parent, GFile *file, gpointer user_data)
{
  WickWindow *window
    = parent != NULL && WICK_IS_WINDOW (parent) && wick_window_is_empty (WICK_WINDOW (parent))
        ? WICK_WINDOW (parent)
        : wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  g_autofree char *path = g_file_get_path (file);
  g_autoptr (GError) error = NULL;
  if (path == NULL || wick_follow_session_start (window, path, &error) == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_autofree char *message
        = g_strdup_printf (_ ("Could not follow %s: %s"), path != NULL ? path : uri,
                           error != NULL ? error->message : _ ("not a local file"));
      wick_window_show_banner (window, "follow-error", message, NULL, NULL);
    }
}

void
wick_live_ui_register (WickApplication *app)
{
  wick_application_set_attach_handler (app, on_attach, NULL, NULL);
  wick_application_set_follow_handler (app, on_follow, NULL, NULL);
  wick_remote_dialog_use_askpass ();
  g_autoptr (GSimpleAction) remote = g_simple_action_new ("attach-remote", NULL);
  g_signal_connect (remote, "activate", G_CALLBACK (on_attach_remote), app);
  g_action_map_add_action (G_ACTION_MAP (app), G_ACTION (remote));
  /* --attach PID was parsed before startup (handle_local_options). */
  if (wick_application_get_attach_pid (app) > 0 || wick_application_get_attach_url (app) != NULL)
    g_signal_connect (app, "window-added", G_CALLBACK (on_window_added), NULL);
}
