/* wick-application.c — see wick-application.h for the contract. */
#include "config.h"

#include "wick-application.h"
#include "wick-application-private.h"

#include <glib/gi18n.h>
#include <stdlib.h>

#include "wick-trace-format.h"
#include "wick-compare-window.h"
#include "wick-snapshot-window.h"
#include "wick-archive.h"
#include "wick-ranks-page.h"
#include "wick-window.h"
#include "session/wick-attach-dialog.h"
#include "session/wick-follow-session.h"
#include "session/wick-remote-dialog.h"

struct _WickApplication
{
  AdwApplication parent_instance;
  /* Command-line options (option_entries below). */
  gboolean compare;  /* --compare A B */
  gboolean follow;   /* --follow TRACE.jsonl */
  gint64 attach_pid; /* --attach PID, 0 when not given */
  char *attach_url;  /* --attach ssh://host/PID, NULL when not given */
  int exit_status;   /* a command line refused after startup (--compare A): main returns it */
};

G_DEFINE_FINAL_TYPE (WickApplication, wick_application, ADW_TYPE_APPLICATION)

char *
wick_application_get_example_path (void)
{
  const char *env = g_getenv ("WICK_EXAMPLE_TRACE");
  if (env && *env)
    return g_strdup (env);
  char *installed = g_build_filename (WICK_PKGDATADIR, "example-trace.jsonl", NULL);
  if (g_file_test (installed, G_FILE_TEST_IS_REGULAR))
    return installed;
  g_free (installed);
  return g_build_filename (WICK_SOURCE_DIR, "data", "example-trace.jsonl", NULL);
}

static GtkWindow *
active_window (WickApplication *self)
{
  return gtk_application_get_active_window (GTK_APPLICATION (self));
}

/* Opens @file in a window: reuses @reuse when it shows the welcome page, else a new one. */
static void
wick_application_open_file (WickApplication *self, GFile *file, GtkWindow *reuse)
{
  WickWindow *window = NULL;
  if (reuse && WICK_IS_WINDOW (reuse) && wick_window_is_empty (WICK_WINDOW (reuse)))
    window = WICK_WINDOW (reuse);
  else
    window = wick_window_new (GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (window));
  wick_window_load_file (window, file);
}

/* Several trace-event JSON files (PyTorch profiler traces, one a rank), or
 * one directory or .zip/.tar(.gz) of them, open as one job in one window;
 * anything else opens a window a file. */
static gboolean
open_as_job (WickApplication *self, GFile **files, guint n, GtkWindow *reuse)
{
  WickWindow *window;
  if (n == 1)
    {
      g_autofree char *path = g_file_get_path (files[0]);
      if (path == NULL || !wick_job_is_container (path))
        return FALSE;
      n = 0; /* the checks below pass: one container */
    }
  else if (n < 2)
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *path = g_file_get_path (files[i]);
      if (path == NULL || wick_file_sniff (path, NULL) != WICK_FILE_FORMAT_CHROME)
        return FALSE;
    }
  if (reuse && WICK_IS_WINDOW (reuse) && wick_window_is_empty (WICK_WINDOW (reuse)))
    window = WICK_WINDOW (reuse);
  else
    window = wick_window_new (GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (window));
  wick_window_open_job (window, files, MAX (n, 1));
  return TRUE;
}

static void
on_open_response (GtkNativeDialog *dialog, int response, WickApplication *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      GtkWindow *parent = gtk_native_dialog_get_transient_for (dialog);
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      guint n = g_list_model_get_n_items (files);
      g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint i = 0; i < n; i++)
        g_ptr_array_add (list, g_list_model_get_item (files, i));
      wick_application_open_files (self, (GFile **)list->pdata, n, parent);
    }
  g_object_unref (dialog);
}

void
wick_application_open_files (WickApplication *self, GFile **files, guint n_files, GtkWindow *reuse)
{
  if (open_as_job (self, files, n_files, reuse))
    return;
  for (guint i = 0; i < n_files; i++)
    wick_application_open_file (self, files[i], reuse);
}

static void
action_open (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  GtkFileChooserNative *dialog
    = gtk_file_chooser_native_new (_ ("Open Trace"), active_window (self),
                                   GTK_FILE_CHOOSER_ACTION_OPEN, _ ("_Open"), _ ("_Cancel"));
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _ ("Traces (JSONL, JSON, gzip, zstd)"));
  /* compressed traces are read by their magic bytes, whatever the name */
  static const char *const patterns[]
    = { "*.jsonl",   "*.json",      "*.gz",       "*.zst",           "*.jsonl.gz",
        "*.json.gz", "*.jsonl.zst", "*.json.zst", "*.pt.trace.json", "*.trace",
        "*.zip",     "*.tar",       "*.tgz" };
  for (gsize i = 0; i < G_N_ELEMENTS (patterns); i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  g_object_unref (filter);
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _ ("All files"));
  gtk_file_filter_add_pattern (filter, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  g_object_unref (filter);
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
wick_application_compare_files (WickApplication *self, GFile *a, GFile *b)
{
  g_autofree char *pa = g_file_get_path (a), *pb = g_file_get_path (b);
  if (pa != NULL && pb != NULL && wick_snapshot_window_sniff (pa) && wick_snapshot_window_sniff (pb))
    {
      /* two CUDA memory snapshots: compared by stack */
      gtk_window_present (
        GTK_WINDOW (wick_snapshot_window_new_compare (GTK_APPLICATION (self), pa, pb)));
      return;
    }
  WickCompareWindow *window = wick_compare_window_new (GTK_APPLICATION (self), a, b);
  gtk_window_present (GTK_WINDOW (window));
}

static void
on_compare_with_response (GtkNativeDialog *dialog, int response, WickApplication *self)
{
  GFile *a = g_object_get_data (G_OBJECT (dialog), "wick-compare-a");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) b = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (b)
        wick_application_compare_files (self, a, b);
    }
  g_object_unref (dialog);
}

/* Compare With…: the active window's trace against one chosen here. */
static void
action_compare_with (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  GtkWindow *window = active_window (self);
  WickDocument *doc
    = WICK_IS_WINDOW (window) ? wick_window_get_document (WICK_WINDOW (window)) : NULL;
  const char *path = doc ? wick_document_get_path (doc) : NULL;
  GtkFileChooserNative *dialog;

  if (path == NULL)
    {
      action_open (NULL, NULL, self);
      return;
    }
  dialog = gtk_file_chooser_native_new (_ ("Compare With"), window, GTK_FILE_CHOOSER_ACTION_OPEN,
                                        _ ("_Compare"), _ ("_Cancel"));
  g_object_set_data_full (G_OBJECT (dialog), "wick-compare-a", g_file_new_for_path (path),
                          g_object_unref);
  g_signal_connect (dialog, "response", G_CALLBACK (on_compare_with_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
action_open_example (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  g_autofree char *path = wick_application_get_example_path ();
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_application_open_file (self, file, active_window (self));
}

static void
action_new_window (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  gtk_window_present (GTK_WINDOW (wick_window_new (GTK_APPLICATION (user_data))));
}

/* File → Attach to Process… */
static void
action_attach (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  gtk_window_present (GTK_WINDOW (wick_attach_dialog_new (self, active_window (self))));
}

/* File → Attach to Remote Process… */
static void
action_attach_remote (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  gtk_window_present (GTK_WINDOW (wick_remote_dialog_new (self, active_window (self))));
}

/* File → Follow File… and wick --follow: shows @file, a trace still being
 * written, in @parent when it shows the welcome page, else in a new window. */
static void
follow_file (WickApplication *self, GtkWindow *parent, GFile *file)
{
  WickWindow *window
    = parent != NULL && WICK_IS_WINDOW (parent) && wick_window_is_empty (WICK_WINDOW (parent))
        ? WICK_WINDOW (parent)
        : wick_window_new (GTK_APPLICATION (self));
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

static void
on_follow_response (GtkNativeDialog *dialog, int response, WickApplication *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      follow_file (self, gtk_native_dialog_get_transient_for (dialog), file);
    }
  g_object_unref (dialog);
}

static void
action_follow (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  GtkFileChooserNative *dialog
    = gtk_file_chooser_native_new (_ ("Follow a Growing Trace"), active_window (self),
                                   GTK_FILE_CHOOSER_ACTION_OPEN, _ ("_Follow"), _ ("_Cancel"));
  g_signal_connect (dialog, "response", G_CALLBACK (on_follow_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
action_about (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickApplication *self = user_data;
  const char *developers[] = { "The Wick developers", NULL };
  GtkWidget *about = adw_about_window_new ();
  g_object_set (about, "application-name", "Wick", "application-icon", WICK_APPLICATION_ID,
                "version", WICK_VERSION, "developers", developers, "license-type",
                GTK_LICENSE_MIT_X11, "website", "https://github.com/wickprofiler/wick", "comments",
                _ ("Trace explorer for GPU and ML workloads: span timelines, memory by category, "
                   "gradient coverage and live capture."),
                "translator-credits", _ ("translator-credits"), NULL);
  gtk_window_set_transient_for (GTK_WINDOW (about), active_window (self));
  gtk_window_present (GTK_WINDOW (about));
}

static void
action_quit (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (user_data));
  for (GList *l = g_list_copy (windows), *it = l; it; it = it->next)
    {
      gtk_window_close (it->data);
      if (it->next == NULL)
        g_list_free (l);
    }
}

/* Files dropped on a window open as File → Open opens them: several rank
 * traces as one job, else the first in that window when it shows the welcome
 * page, the others (and all of them over a document) in new windows. */
static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, WickWindow *window)
{
  GSList *files = g_value_get_boxed (value);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (window));
  if (app == NULL)
    return FALSE;
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  for (GSList *l = files; l; l = l->next)
    g_ptr_array_add (list, l->data);
  wick_application_open_files (WICK_APPLICATION (app), (GFile **)list->pdata, list->len,
                               GTK_WINDOW (window));
  return files != NULL;
}

static void
accept_drops (GtkApplication *application, GtkWindow *window, gpointer user_data)
{
  if (!WICK_IS_WINDOW (window))
    return;
  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), window);
  gtk_widget_add_controller (GTK_WIDGET (window), GTK_EVENT_CONTROLLER (drop));
}

typedef struct
{
  WickApplication *app;
  GtkWindow *window;
} PendingAttach;

static gboolean
attach_from_command_line (gpointer user_data)
{
  PendingAttach *pending = user_data;
  WickApplication *self = pending->app;
  /* Asynchronous: a failure is a banner on the window naming the pid and why. */
  if (self->attach_url != NULL)
    wick_live_ui_attach_url (self, pending->window, self->attach_url);
  else
    wick_live_ui_attach_pid (self, pending->window, self->attach_pid, NULL);
  g_object_unref (pending->window);
  g_free (pending);
  return G_SOURCE_REMOVE;
}

/* wick --attach PID (tools/run-demo.sh runs it): the first window that opens
 * attaches to that process, so a script starts a workload and the app on it
 * in one command. */
static void
attach_first_window (GtkApplication *application, GtkWindow *window, gpointer user_data)
{
  if (!WICK_IS_WINDOW (window))
    return;
  g_signal_handlers_disconnect_by_func (application, attach_first_window, user_data);
  PendingAttach *pending = g_new0 (PendingAttach, 1);
  pending->app = WICK_APPLICATION (application);
  pending->window = g_object_ref (window);
  /* after the window finished opening (files given on the command line load first) */
  g_idle_add (attach_from_command_line, pending);
}

static const GActionEntry app_actions[] = {
  { "open", action_open },
  { "open-example", action_open_example },
  { "compare-with", action_compare_with },
  { "new-window", action_new_window },
  { "attach", action_attach },
  { "attach-remote", action_attach_remote },
  { "follow", action_follow },
  { "about", action_about },
  { "quit", action_quit },
};

static void
wick_application_startup (GApplication *app)
{
  G_APPLICATION_CLASS (wick_application_parent_class)->startup (app);
  WickApplication *self = WICK_APPLICATION (app);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  wick_remote_dialog_use_askpass ();
  g_signal_connect (app, "window-added", G_CALLBACK (accept_drops), NULL);
  /* --attach PID was parsed before startup (handle_local_options) */
  if (self->attach_pid > 0 || self->attach_url != NULL)
    g_signal_connect (app, "window-added", G_CALLBACK (attach_first_window), NULL);
  struct
  {
    const char *action;
    const char *accels[3];
  } accels[] = {
    { "app.open", { "<Control>o", NULL } },
    { "app.new-window", { "<Control>n", NULL } },
    { "app.quit", { "<Control>q", NULL } },
    { "window.close", { "<Control>w", NULL } },
    { "win.export", { "<Control>e", NULL } },
    { "win.search", { "<Control>f", NULL } },
    { "win.find-next", { "<Control>g", NULL } },
    { "win.find-previous", { "<Control><Shift>g", NULL } },
    { "win.zoom-fit", { "<Control>0", NULL } },
    { "win.zoom-selection", { "<Control>r", NULL } },
    { "win.toggle-details", { "F9", NULL } },
    { "win.show-page::timeline", { "<Alt>1", NULL } },
    { "win.show-page::memory", { "<Alt>2", NULL } },
    { "win.show-page::coverage", { "<Alt>3", NULL } },
    { "win.show-page::health", { "<Alt>4", NULL } },
    { "win.show-page::costs", { "<Alt>5", NULL } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action,
                                           accels[i].accels);
}

int
wick_application_get_exit_status (WickApplication *self)
{
  g_return_val_if_fail (WICK_IS_APPLICATION (self), EXIT_FAILURE);
  return self->exit_status;
}

static void
refuse_compare (WickApplication *self)
{
  g_printerr (_ ("wick: --compare needs exactly two traces, A and B\n"));
  self->exit_status = EXIT_FAILURE; /* no window opens, so the application ends at once */
}

static void
wick_application_activate (GApplication *app)
{
  if (WICK_APPLICATION (app)->compare)
    {
      refuse_compare (WICK_APPLICATION (app)); /* `wick --compare` with no trace */
      return;
    }
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
}

/* The options `wick` takes, parsed by GApplication (`wick --help` lists
 * them). Each lands in the GVariantDict of handle_local_options under its
 * long name; what it means is decided there, once, before a window opens.
 * New options go here and into handle_local_options. */
static const GOptionEntry option_entries[] = {
  { "compare", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, NULL,
    N_ ("Compare two traces: wick --compare A B"), NULL },
  /* the files are the remaining arguments; the live area follows them */
  { "follow", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, NULL,
    N_ ("Follow traces that are still written: wick --follow TRACE.jsonl"), NULL },
  /* a string, parsed below: GApplication leaves an INT64 option of 0 out of
   * the dict, so --attach 0 would read as no option at all */
  { "attach", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_STRING, NULL,
    N_ ("Attach to the process PID live (wick-demo, or a program using libwick); "
        "ssh://[USER@]HOST[:PORT]/PID attaches to one on another machine through ssh"),
    N_ ("PID") },
  { NULL },
};

static int
wick_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  WickApplication *self = WICK_APPLICATION (app);
  const char *text;

  if (g_variant_dict_contains (options, "compare"))
    self->compare = TRUE;
  if (g_variant_dict_contains (options, "follow"))
    self->follow = TRUE;
  if (g_variant_dict_lookup (options, "attach", "&s", &text))
    {
      guint64 pid = 0;
      if (g_str_has_prefix (text, "ssh://") && !self->compare)
        {
          /* checked when the attach starts (its banner names what is wrong) */
          g_free (self->attach_url);
          self->attach_url = g_strdup (text);
          return -1;
        }
      if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT32, &pid, NULL))
        {
          g_printerr (_ ("wick: --attach needs a process id above 0, not “%s”\n"), text);
          return EXIT_FAILURE;
        }
      if (self->compare)
        {
          g_printerr (_ ("wick: --attach and --compare cannot be used together\n"));
          return EXIT_FAILURE;
        }
      self->attach_pid = (gint64)pid;
    }
  return -1;
}

static void
wick_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  WickApplication *self = WICK_APPLICATION (app);

  if (self->compare)
    {
      if (n_files == 2)
        wick_application_compare_files (self, files[0], files[1]);
      else
        refuse_compare (self);
      return;
    }
  if (self->follow)
    {
      for (int i = 0; i < n_files; i++)
        follow_file (self, NULL, files[i]);
      return;
    }
  if (open_as_job (self, files, (guint)n_files, NULL))
    return;
  for (int i = 0; i < n_files; i++)
    wick_application_open_file (WICK_APPLICATION (app), files[i], NULL);
}

static void
wick_application_dispose (GObject *object)
{
  WickApplication *self = WICK_APPLICATION (object);
  g_clear_pointer (&self->attach_url, g_free);
  G_OBJECT_CLASS (wick_application_parent_class)->dispose (object);
}

static void
wick_application_class_init (WickApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = wick_application_dispose;
  G_APPLICATION_CLASS (klass)->startup = wick_application_startup;
  G_APPLICATION_CLASS (klass)->activate = wick_application_activate;
  G_APPLICATION_CLASS (klass)->open = wick_application_open;
  G_APPLICATION_CLASS (klass)->handle_local_options = wick_application_handle_local_options;
}

static void
wick_application_init (WickApplication *self)
{
  g_application_add_main_option_entries (G_APPLICATION (self), option_entries);
}

WickApplication *
wick_application_new (void)
{
  return g_object_new (WICK_TYPE_APPLICATION, "application-id", WICK_APPLICATION_ID, "flags",
                       G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE, "resource-base-path",
                       "/io/github/wickprofiler/Wick", NULL);
}
