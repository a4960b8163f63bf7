/* wick-remote-dialog.c — "Attach to Remote Process…" (see the header). */
#include "config.h"

#include "wick-remote-dialog.h"
#include "wick-remote-dialog-private.h"

#include <glib/gi18n.h>

#include "client/wick-remote-link.h"
#include "client/wick-remote-session.h"
#include "client/wick-ssh-config.h"
#include "wick-attach-dialog.h"
#include "wick-settings.h"

struct _WickRemoteDialog
{
  AdwWindow parent_instance;
  WickApplication *app;
  GtkWindow *parent; /* weak */
  GPtrArray *hosts;  /* char*: the config's names */
  GtkWidget *entry;
  GtkWidget *sessions_group;
  GtkStack *stack;
  GtkWidget *spinner;
  GtkWidget *listing_label;
  GtkWidget *status_label;
  GtkListBox *list;
  char *url;           /* ssh://[user@]host[:port] of the sessions shown */
  GPtrArray *sessions; /* WickLiveSessionInfo */
  char *error;
  guint generation; /* a listing whose answer came after another began is dropped */
  gboolean listing;
  GCancellable *cancellable;
};

G_DEFINE_FINAL_TYPE (WickRemoteDialog, wick_remote_dialog, ADW_TYPE_WINDOW)

typedef struct
{
  char *url;
  guint generation;
  GPtrArray *sessions;
  char *host; /* the link's name: ssh://[user@]host[:port] */
  GError *error;
} Listing;

static void
listing_free (Listing *listing)
{
  g_free (listing->url);
  g_clear_pointer (&listing->sessions, g_ptr_array_unref);
  g_free (listing->host);
  g_clear_error (&listing->error);
  g_free (listing);
}

static void
list_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Listing *listing = data;
  listing->sessions = wick_remote_list_sessions (
    listing->url, g_getenv ("WICK_REMOTE_COMMAND"), WICK_REMOTE_DIALOG_LIST_TIMEOUT_MS,
    &listing->host, &listing->error);
  g_task_return_boolean (task, TRUE);
}

static void
show_state (WickRemoteDialog *self, const char *page, const char *text)
{
  gtk_stack_set_visible_child_name (self->stack, page);
  gtk_spinner_set_spinning (GTK_SPINNER (self->spinner), g_str_equal (page, "listing"));
  if (g_str_equal (page, "listing"))
    gtk_label_set_text (GTK_LABEL (self->listing_label), text);
  else if (text != NULL)
    gtk_label_set_text (GTK_LABEL (self->status_label), text);
}

static void
on_listed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  WickRemoteDialog *self = WICK_REMOTE_DIALOG (source);
  Listing *listing = g_task_get_task_data (G_TASK (result));
  if (g_cancellable_is_cancelled (self->cancellable) || listing->generation != self->generation)
    return;
  self->listing = FALSE;
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))) != NULL)
    gtk_list_box_remove (self->list, child);
  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  g_clear_pointer (&self->error, g_free);
  g_clear_pointer (&self->url, g_free);
  self->url = g_strdup (listing->host != NULL ? listing->host : listing->url);
  g_autofree char *title = g_strdup_printf (_ ("Sessions on %s"), self->url);
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->sessions_group), title);
  if (listing->sessions == NULL)
    {
      self->error = g_strdup (listing->error != NULL ? listing->error->message : "?");
      g_autofree char *text = g_strdup_printf (_ ("Could not list the sessions: %s"), self->error);
      show_state (self, "status", text);
      return;
    }
  self->sessions = g_ptr_array_ref (listing->sessions);
  for (guint i = 0; i < self->sessions->len; i++)
    gtk_list_box_append (self->list,
                         wick_attach_dialog_session_row (g_ptr_array_index (self->sessions, i)));
  if (self->sessions->len == 0)
    {
      g_autofree char *text = g_strdup_printf (
        _ ("No live sessions on %s: start a program that links libwick with control enabled "
           "(WICK_CONTROL=1) there, or run wick-demo."),
        self->url);
      show_state (self, "status", text);
    }
  else
    show_state (self, "list", NULL);
}

void
wick_remote_dialog_list (WickRemoteDialog *self, const char *host)
{
  g_return_if_fail (WICK_IS_REMOTE_DIALOG (self));
  g_autofree char *text = g_strstrip (g_strdup (host));
  g_autofree char *url
    = g_str_has_prefix (text, "ssh://") ? g_strdup (text) : g_strconcat ("ssh://", text, NULL);
  WickRemoteTarget target;
  g_autoptr (GError) error = NULL;
  self->generation++;
  g_clear_pointer (&self->error, g_free);
  if (!wick_remote_target_parse (url, &target, &error))
    {
      self->listing = FALSE;
      self->error = g_strdup (error->message);
      show_state (self, "status", error->message);
      return;
    }
  wick_remote_target_clear (&target);
  gtk_editable_set_text (GTK_EDITABLE (self->entry), text);
  self->listing = TRUE;
  g_autofree char *message = g_strdup_printf (
    _ ("Asking %s for its sessions through ssh (at most %d s once connected). What ssh asks "
       "(a host key to accept, a passphrase) opens a window of its own…"),
    url,
    WICK_REMOTE_DIALOG_LIST_TIMEOUT_MS / 1000);
  show_state (self, "listing", message);
  Listing *listing = g_new0 (Listing, 1);
  listing->url = g_steal_pointer (&url);
  listing->generation = self->generation;
  g_autoptr (GTask) task = g_task_new (self, NULL, on_listed, NULL);
  g_task_set_task_data (task, listing, (GDestroyNotify)listing_free);
  g_task_run_in_thread (task, list_thread);
}

void
wick_remote_dialog_use_askpass (void)
{
  wick_remote_link_use_askpass (wick_running_from_build_tree () ? WICK_ASKPASS_BUILT
                                                                : WICK_ASKPASS_INSTALLED);
}

GtkWindow *
wick_remote_dialog_attach (WickRemoteDialog *self, guint index)
{
  g_return_val_if_fail (self->sessions != NULL && index < self->sessions->len, NULL);
  const WickLiveSessionInfo *info = g_ptr_array_index (self->sessions, index);
  g_autofree char *url = g_strdup_printf ("%s/%" G_GINT64_FORMAT, self->url, info->pid);
  GtkWindow *window = wick_live_ui_attach_url (self->app, self->parent, url);
  gtk_window_destroy (GTK_WINDOW (self));
  return window;
}

static void
on_session_activated (GtkListBox *list, GtkListBoxRow *row, gpointer user_data)
{
  wick_remote_dialog_attach (user_data, (guint)gtk_list_box_row_get_index (row));
}

static void
on_host_activated (AdwActionRow *row, gpointer user_data)
{
  wick_remote_dialog_list (user_data, adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)));
}

static void
on_entry_apply (AdwEntryRow *row, gpointer user_data)
{
  wick_remote_dialog_list (user_data, gtk_editable_get_text (GTK_EDITABLE (row)));
}

guint
wick_remote_dialog_get_n_hosts (WickRemoteDialog *self)
{
  return self->hosts->len;
}

const char *
wick_remote_dialog_get_host (WickRemoteDialog *self, guint index)
{
  g_return_val_if_fail (index < self->hosts->len, NULL);
  return g_ptr_array_index (self->hosts, index);
}

gboolean
wick_remote_dialog_is_listing (WickRemoteDialog *self)
{
  return self->listing;
}

guint
wick_remote_dialog_get_n_sessions (WickRemoteDialog *self)
{
  return self->sessions != NULL ? self->sessions->len : 0;
}

gint64
wick_remote_dialog_get_session_pid (WickRemoteDialog *self, guint index)
{
  g_return_val_if_fail (self->sessions != NULL && index < self->sessions->len, 0);
  return ((WickLiveSessionInfo *)g_ptr_array_index (self->sessions, index))->pid;
}

const char *
wick_remote_dialog_get_error (WickRemoteDialog *self)
{
  return self->error;
}

static void
wick_remote_dialog_dispose (GObject *object)
{
  WickRemoteDialog *self = WICK_REMOTE_DIALOG (object);
  g_cancellable_cancel (self->cancellable);
  if (self->parent != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->parent), (gpointer *)&self->parent);
  self->parent = NULL;
  G_OBJECT_CLASS (wick_remote_dialog_parent_class)->dispose (object);
}

static void
wick_remote_dialog_finalize (GObject *object)
{
  WickRemoteDialog *self = WICK_REMOTE_DIALOG (object);
  g_clear_pointer (&self->hosts, g_ptr_array_unref);
  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  g_free (self->url);
  g_free (self->error);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (wick_remote_dialog_parent_class)->finalize (object);
}

static void
wick_remote_dialog_class_init (WickRemoteDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = wick_remote_dialog_dispose;
  object_class->finalize = wick_remote_dialog_finalize;
}

static GtkWidget *
host_rows (WickRemoteDialog *self, const char *config_error)
{
  GtkWidget *group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _ ("Hosts in ~/.ssh/config"));
  if (config_error != NULL)
    adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), config_error);
  else if (self->hosts->len == 0)
    adw_preferences_group_set_description (
      ADW_PREFERENCES_GROUP (group),
      _ ("No host names there (patterns such as * are left out): type one above."));
  for (guint i = 0; i < self->hosts->len; i++)
    {
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), g_ptr_array_index (self->hosts, i));
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      adw_action_row_add_prefix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name ("network-server-symbolic"));
      adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name ("go-next-symbolic"));
      g_signal_connect (row, "activated", G_CALLBACK (on_host_activated), self);
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
    }
  return group;
}

static void
wick_remote_dialog_init (WickRemoteDialog *self)
{
  self->cancellable = g_cancellable_new ();
  g_autoptr (GError) config_error = NULL;
  self->hosts = wick_ssh_config_hosts (NULL, &config_error);
  if (self->hosts == NULL)
    self->hosts = g_ptr_array_new_with_free_func (g_free);

  gtk_window_set_title (GTK_WINDOW (self), _ ("Attach to Remote Process"));
  gtk_window_set_default_size (GTK_WINDOW (self), 600, 640);
  gtk_window_set_modal (GTK_WINDOW (self), TRUE);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  adw_header_bar_set_show_end_title_buttons (ADW_HEADER_BAR (header), FALSE);
  GtkWidget *cancel = gtk_button_new_with_mnemonic (_ ("_Cancel"));
  g_signal_connect_swapped (cancel, "clicked", G_CALLBACK (gtk_window_destroy), self);
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), cancel);
  gtk_box_append (GTK_BOX (box), header);

  GtkWidget *page = adw_preferences_page_new ();
  gtk_widget_set_vexpand (page, TRUE);
  GtkWidget *typed = adw_preferences_group_new ();
  adw_preferences_group_set_description (
    ADW_PREFERENCES_GROUP (typed),
    _ ("Wick runs the system's ssh (your ~/.ssh/config, keys, agent and ProxyJump apply) and "
       "“wick-trace serve --stdio” on the host; nothing listens on a port."));
  self->entry = adw_entry_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->entry), _ ("[user@]host[:port]"));
  adw_entry_row_set_show_apply_button (ADW_ENTRY_ROW (self->entry), TRUE);
  g_signal_connect (self->entry, "apply", G_CALLBACK (on_entry_apply), self);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (typed), self->entry);
  adw_preferences_page_add (ADW_PREFERENCES_PAGE (page), ADW_PREFERENCES_GROUP (typed));
  adw_preferences_page_add (ADW_PREFERENCES_PAGE (page),
                            ADW_PREFERENCES_GROUP (host_rows (
                              self, config_error != NULL ? config_error->message : NULL)));

  self->sessions_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->sessions_group), _ ("Sessions"));
  self->stack = GTK_STACK (gtk_stack_new ());
  GtkWidget *idle = gtk_label_new (_ ("Pick a host to list its live sessions."));
  gtk_widget_add_css_class (idle, "dim-label");
  gtk_stack_add_named (self->stack, idle, "idle");
  GtkWidget *listing = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  self->spinner = gtk_spinner_new ();
  self->listing_label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->listing_label), TRUE);
  /* a wrapping label's natural width is its whole text: bounded, or a long
   * error would widen the dialog */
  gtk_label_set_max_width_chars (GTK_LABEL (self->listing_label), 60);
  gtk_label_set_xalign (GTK_LABEL (self->listing_label), 0);
  gtk_box_append (GTK_BOX (listing), self->spinner);
  gtk_box_append (GTK_BOX (listing), self->listing_label);
  gtk_stack_add_named (self->stack, listing, "listing");
  self->status_label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->status_label), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (self->status_label), 60);
  gtk_label_set_selectable (GTK_LABEL (self->status_label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->status_label), 0);
  gtk_stack_add_named (self->stack, self->status_label, "status");
  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "boxed-list");
  g_signal_connect (self->list, "row-activated", G_CALLBACK (on_session_activated), self);
  gtk_stack_add_named (self->stack, GTK_WIDGET (self->list), "list");
  gtk_stack_set_visible_child_name (self->stack, "idle");
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->sessions_group),
                             GTK_WIDGET (self->stack));
  adw_preferences_page_add (ADW_PREFERENCES_PAGE (page),
                            ADW_PREFERENCES_GROUP (self->sessions_group));
  gtk_box_append (GTK_BOX (box), page);
  adw_window_set_content (ADW_WINDOW (self), box);
}

WickRemoteDialog *
wick_remote_dialog_new (WickApplication *app, GtkWindow *parent)
{
  WickRemoteDialog *self = g_object_new (WICK_TYPE_REMOTE_DIALOG, "application", app, NULL);
  self->app = app;
  if (parent != NULL)
    {
      self->parent = parent;
      g_object_add_weak_pointer (G_OBJECT (parent), (gpointer *)&self->parent);
      gtk_window_set_transient_for (GTK_WINDOW (self), parent);
    }
  return self;
}
