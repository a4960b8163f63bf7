/* wick-attach-dialog.c — "Attach to Process…" (see the header). */
#include "config.h"

#include "wick-attach-dialog.h"
#include "wick-attach-dialog-private.h"

#include <glib/gi18n.h>

#include "client/wick-live-client.h"
#include "wick-live-session.h"
#include "wick-window.h"

struct _WickAttachDialog
{
  AdwWindow parent_instance;
  WickApplication *app;
  GtkWindow *parent; /* weak */
  GtkStack *stack;
  GtkListBox *list;
  AdwStatusPage *empty;
  GtkWidget *attach_button;
  GPtrArray *sessions; /* WickLiveSessionInfo */
  GCancellable *cancellable;
  gboolean listing;
};

G_DEFINE_FINAL_TYPE (WickAttachDialog, wick_attach_dialog, ADW_TYPE_WINDOW)

static void
on_attached (GObject *source, GAsyncResult *result, gpointer user_data)
{
  /* A failure is shown by a banner on the window (naming the process). */
  g_autoptr (GError) error = NULL;
  wick_live_session_attach_finish (WICK_WINDOW (source), result, &error);
}

/* The window that will show the session (@window when it is empty, else a
 * new one), presented at once; the attach itself runs in a worker thread. */
static GtkWindow *
attach_socket (WickApplication *app, GtkWindow *window, const char *socket_path, gint64 pid,
               const char *label)
{
  WickWindow *target = NULL;
  if (window != NULL && WICK_IS_WINDOW (window) && wick_window_is_empty (WICK_WINDOW (window)))
    target = WICK_WINDOW (window);
  if (target == NULL)
    target = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (target));
  wick_live_session_attach_async (target, socket_path, pid, label, NULL, on_attached, NULL);
  return GTK_WINDOW (target);
}

GtkWindow *
wick_live_ui_attach_pid (WickApplication *app, GtkWindow *window, gint64 pid, GError **error)
{
  g_autofree char *label = g_strdup_printf (_ ("pid %lld"), (long long)pid);
  return attach_socket (app, window, NULL, pid, label);
}

GtkWindow *
wick_live_ui_attach_url (WickApplication *app, GtkWindow *window, const char *url)
{
  return attach_socket (app, window, url, 0, url);
}

GtkWidget *
wick_attach_dialog_session_row (const WickLiveSessionInfo *info)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *title
    = g_markup_printf_escaped ("%s — pid %" G_GINT64_FORMAT, info->program, info->pid);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  g_autofree char *started = NULL;
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (
    (gint64)(info->started_unix_ns / G_GUINT64_CONSTANT (1000000000)));
  if (utc != NULL)
    {
      g_autoptr (GDateTime) local = g_date_time_to_local (utc);
      started = g_date_time_format (local, "%X");
    }
  g_autofree char *subtitle = g_markup_printf_escaped (
    _ ("%s · started %s · %s ring · %llu dropped%s"), info->entrypoint,
    started != NULL ? started : info->started, info->policy, (unsigned long long)info->dropped,
    info->finished ? _ (" · finished") : "");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  GtkWidget *icon = gtk_image_new_from_icon_name ("media-record-symbolic");
  gtk_widget_add_css_class (icon, "accent");
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                             gtk_image_new_from_icon_name ("go-next-symbolic"));
  return row;
}

static void
show_sessions (WickAttachDialog *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))) != NULL)
    gtk_list_box_remove (self->list, child);
  for (guint i = 0; i < self->sessions->len; i++)
    gtk_list_box_append (self->list, wick_attach_dialog_session_row (g_ptr_array_index (self->sessions, i)));
  gboolean any = self->sessions->len > 0;
  gtk_stack_set_visible_child_name (self->stack, any ? "list" : "empty");
  gtk_widget_set_sensitive (self->attach_button, any);
  if (any)
    gtk_list_box_select_row (self->list, gtk_list_box_get_row_at_index (self->list, 0));
}

static void
list_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  GPtrArray *sessions = wick_live_list_sessions (&error);
  if (sessions == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, sessions, (GDestroyNotify)g_ptr_array_unref);
}

static void
on_listed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  WickAttachDialog *self = WICK_ATTACH_DIALOG (source);
  g_autoptr (GError) error = NULL;
  GPtrArray *sessions = g_task_propagate_pointer (G_TASK (result), &error);
  self->listing = FALSE;
  if (sessions == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      adw_status_page_set_description (self->empty, error->message);
      sessions = g_ptr_array_new ();
    }
  g_ptr_array_unref (self->sessions);
  self->sessions = sessions;
  show_sessions (self);
}

static void
wick_attach_dialog_refresh (WickAttachDialog *self)
{
  g_return_if_fail (WICK_IS_ATTACH_DIALOG (self));
  if (self->listing)
    return;
  self->listing = TRUE;
  g_autoptr (GTask) task = g_task_new (self, self->cancellable, on_listed, NULL);
  g_task_run_in_thread (task, list_thread);
}

GtkWindow *
wick_attach_dialog_attach (WickAttachDialog *self, guint index, GError **error)
{
  g_return_val_if_fail (index < self->sessions->len, NULL);
  const WickLiveSessionInfo *info = g_ptr_array_index (self->sessions, index);
  g_autofree char *label
    = g_strdup_printf (_ ("%s (pid %lld)"), info->program, (long long)info->pid);
  GtkWindow *window
    = attach_socket (self->app, self->parent, info->socket_path, info->pid, label);
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (self));
  return window;
}

static void
attach_row (WickAttachDialog *self, GtkListBoxRow *row)
{
  if (row == NULL)
    return;
  g_autoptr (GError) error = NULL;
  if (wick_attach_dialog_attach (self, (guint)gtk_list_box_row_get_index (row), &error) == NULL)
    {
      adw_status_page_set_description (self->empty, error->message);
      GtkWidget *dialog
        = adw_message_dialog_new (GTK_WINDOW (self), _ ("Could Not Attach"), error->message);
      adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _ ("_Close"));
      gtk_window_present (GTK_WINDOW (dialog));
      wick_attach_dialog_refresh (self);
    }
}

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *row, gpointer user_data)
{
  attach_row (user_data, row);
}

static void
on_attach_clicked (GtkButton *button, gpointer user_data)
{
  WickAttachDialog *self = user_data;
  attach_row (self, gtk_list_box_get_selected_row (self->list));
}

static void
on_refresh_clicked (GtkButton *button, gpointer user_data)
{
  wick_attach_dialog_refresh (user_data);
}

guint
wick_attach_dialog_get_n_sessions (WickAttachDialog *self)
{
  return self->sessions->len;
}

gboolean
wick_attach_dialog_is_listing (WickAttachDialog *self)
{
  return self->listing;
}

static void
wick_attach_dialog_dispose (GObject *object)
{
  WickAttachDialog *self = WICK_ATTACH_DIALOG (object);
  g_cancellable_cancel (self->cancellable);
  if (self->parent != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->parent), (gpointer *)&self->parent);
  self->parent = NULL;
  G_OBJECT_CLASS (wick_attach_dialog_parent_class)->dispose (object);
}

static void
wick_attach_dialog_finalize (GObject *object)
{
  WickAttachDialog *self = WICK_ATTACH_DIALOG (object);
  g_ptr_array_unref (self->sessions);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (wick_attach_dialog_parent_class)->finalize (object);
}

static void
wick_attach_dialog_class_init (WickAttachDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_attach_dialog_dispose;
  object_class->finalize = wick_attach_dialog_finalize;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/session/wick-attach-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, WickAttachDialog, stack);
  gtk_widget_class_bind_template_child (widget_class, WickAttachDialog, list);
  gtk_widget_class_bind_template_child (widget_class, WickAttachDialog, empty);
  gtk_widget_class_bind_template_child (widget_class, WickAttachDialog, attach_button);
  gtk_widget_class_bind_template_callback (widget_class, on_attach_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_refresh_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_row_activated);
  gtk_widget_class_bind_template_callback (widget_class, gtk_window_destroy);
}

static void
wick_attach_dialog_init (WickAttachDialog *self)
{
  self->sessions = g_ptr_array_new ();
  self->cancellable = g_cancellable_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
}

WickAttachDialog *
wick_attach_dialog_new (WickApplication *app, GtkWindow *parent)
{
  WickAttachDialog *self = g_object_new (WICK_TYPE_ATTACH_DIALOG, "application", app, NULL);
  self->app = app;
  if (parent != NULL)
    {
      self->parent = parent;
      g_object_add_weak_pointer (G_OBJECT (parent), (gpointer *)&self->parent);
      gtk_window_set_transient_for (GTK_WINDOW (self), parent);
    }
  wick_attach_dialog_refresh (self);
  return self;
}
