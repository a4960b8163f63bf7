/* wick-live-ui.c — hooks the live UI into the application.
 *
 * wick_live_ui_register() (called once at startup) enables "Attach to
 * Process…". When the environment has WICK_ATTACH=PID (tools/run-demo.sh sets
 * it) the first window that opens attaches to that process, so a script can
 * start a workload and the app on it in one command.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "wick-application.h"
#include "wick-attach-dialog.h"
#include "wick-window.h"

static void
on_attach (WickApplication *app, GtkWindow *parent, gpointer user_data)
{
  WickAttachDialog *dialog = wick_attach_dialog_new (app, parent);
  gtk_window_present (GTK_WINDOW (dialog));
}

typedef struct
{
  WickApplication *app;
  GtkWindow *window;
  gint64 pid;
} PendingAttach;

static gboolean
attach_from_environment (gpointer user_data)
{
  PendingAttach *pending = user_data;
  /* Asynchronous: a failure is a banner on the window naming the pid and why. */
  wick_live_ui_attach_pid (pending->app, pending->window, pending->pid, NULL);
  g_object_unref (pending->window);
  g_free (pending);
  return G_SOURCE_REMOVE;
}

static void
on_window_added (GtkApplication *application, GtkWindow *window, gpointer user_data)
{
  const char *value = g_getenv ("WICK_ATTACH");
  char *end = NULL;
  gint64 pid = value != NULL ? g_ascii_strtoll (value, &end, 10) : 0;
  if (!WICK_IS_WINDOW (window))
    return;
  g_signal_handlers_disconnect_by_func (application, on_window_added, user_data);
  if (pid <= 0 || end == NULL || *end != '\0')
    return;
  PendingAttach *pending = g_new0 (PendingAttach, 1);
  pending->app = WICK_APPLICATION (application);
  pending->window = g_object_ref (window);
  pending->pid = pid;
  /* After the window finished opening (files given on the command line load first). */
  g_idle_add (attach_from_environment, pending);
}

void
wick_live_ui_register (WickApplication *app)
{
  wick_application_set_attach_handler (app, on_attach, NULL, NULL);
  if (g_getenv ("WICK_ATTACH") != NULL)
    g_signal_connect (app, "window-added", G_CALLBACK (on_window_added), NULL);
}
