/* wick-window-actions.c — the window's win.* actions.
 *
 * Installed on the class (gtk_widget_class_install_action), so every window
 * has them from its construction and the muxer resolves them before the
 * window's GActionMap (which keeps win.show-ops, a GSettings action, and
 * GtkApplicationWindow's win.show-help-overlay). wick_window_update_actions()
 * enables them for what the window shows (gtk_widget_action_set_enabled):
 * the document actions only with a document, win.follow only in a live
 * window, win.save-as only with a save handler. */
#include "config.h"

#include "wick-window-internal.h"
#include "wick-window-private.h"

#include <glib/gi18n.h>

#include "model/wick-chrome-export.h"
#include "wick-render.h"
#include "wick-timeline-view.h"

static WickRenderView
current_render_view (WickWindow *self, gboolean *supported)
{
  const char *name = adw_view_stack_get_visible_child_name (self->views);
  WickRenderView view = WICK_RENDER_TIMELINE;
  *supported = wick_render_view_from_string (name, &view);
  if (g_strcmp0 (name, "costs") == 0)
    *supported = FALSE;
  return view;
}

gboolean
wick_window_export_view (WickWindow *self, const char *path, GError **error)
{
  gboolean supported;
  WickRenderView view = current_render_view (self, &supported);
  if (!supported || self->document == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _ ("This view cannot be exported; switch to the timeline, memory, "
                              "coverage or health view"));
      return FALSE;
    }
  /* The view as it is on screen: its size, its time range, its style. */
  GtkWidget *visible = adw_view_stack_get_visible_child (self->views);
  WickRenderOptions options = { view,
                                MAX (gtk_widget_get_width (visible), 400),
                                MAX (gtk_widget_get_height (visible), 300),
                                0,
                                0,
                                adw_style_manager_get_dark (adw_style_manager_get_default ()) };
  if (view == WICK_RENDER_TIMELINE || view == WICK_RENDER_MEMORY)
    wick_selection_get_visible (self->selection, &options.start_ns, &options.end_ns);
  return wick_render_to_file (self->document, &options, path, error);
}

/* A native save dialog for the export actions: its title, a suggested name,
 * one filter per (name, pattern) and the response handler. */
static void
show_export_dialog (WickWindow *self, const char *title, const char *current_name,
                    const char *const (*patterns)[2], guint n_patterns, GCallback on_response)
{
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
    title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Export"), _ ("_Cancel"));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), current_name);
  for (guint i = 0; i < n_patterns; i++)
    {
      GtkFileFilter *filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _ (patterns[i][0]));
      gtk_file_filter_add_pattern (filter, patterns[i][1]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
      g_object_unref (filter);
    }
  g_signal_connect (dialog, "response", on_response, self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
on_export_response (GtkNativeDialog *dialog, int response, WickWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT && self->document)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      g_autoptr (GError) error = NULL;
      g_autofree char *message = NULL;
      if (wick_window_export_view (self, path, &error))
        message = g_strdup_printf (_ ("Exported to %s"), path);
      else
        message = g_strdup (error->message);
      wick_window_add_toast (self, adw_toast_new (message));
    }
  g_object_unref (dialog);
}

static void
action_export (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  gboolean supported;
  WickRenderView view = current_render_view (self, &supported);
  if (!supported)
    {
      wick_window_add_toast (self, adw_toast_new (_ ("This view cannot be exported; switch to the "
                                                     "timeline, memory, coverage or health view")));
      return;
    }
  g_autofree char *name = g_strdup_printf ("%s.png", wick_render_view_to_string (view));
  static const char *const patterns[][2] = { { N_ ("PNG image"), "*.png" },
                                             { N_ ("SVG image"), "*.svg" },
                                             { N_ ("PDF document"), "*.pdf" } };
  show_export_dialog (self, _ ("Export View"), name, patterns, G_N_ELEMENTS (patterns),
                      G_CALLBACK (on_export_response));
}
/* Chrome JSON, gzip-compressed when the file's name ends in .gz. */
static gboolean
export_document (WickDocument *document, GFile *file, GCancellable *cancellable, GError **error)
{
  g_autofree char *name = g_file_get_basename (file);
  return wick_chrome_export_to_file (document, file, g_str_has_suffix (name, ".gz"), cancellable,
                                     error);
}

gboolean
wick_window_export_trace (WickWindow *self, GFile *file, GError **error)
{
  if (self->document == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _ ("No trace is open"));
      return FALSE;
    }
  return export_document (self->document, file, NULL, error);
}

typedef struct
{
  WickDocument *document;
  GFile *file;
} ExportJob;

static void
export_job_free (gpointer data)
{
  ExportJob *job = data;
  g_object_unref (job->document);
  g_object_unref (job->file);
  g_free (job);
}

static void
export_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ExportJob *job = data;
  GError *error = NULL;
  if (export_document (job->document, job->file, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
wick_window_export_trace_async (WickWindow *self, GFile *file, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, wick_window_export_trace_async);
  if (self->document == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s",
                               _ ("No trace is open"));
      return;
    }
  ExportJob *job = g_new0 (ExportJob, 1);
  job->document = g_object_ref (self->document);
  job->file = g_object_ref (file);
  g_task_set_task_data (task, job, export_job_free);
  /* The track model is built (or brought up to date) here, so the worker
   * only reads the document. */
  wick_document_get_tracks (job->document);
  if (wick_document_is_finished (job->document))
    g_task_run_in_thread (task, export_thread);
  else
    export_thread (task, self, job, cancellable);
}

gboolean
wick_window_export_trace_finish (WickWindow *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gboolean
wick_window_get_exporting (WickWindow *self)
{
  return self->export_cancellable != NULL;
}

static void
on_export_trace_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GFile) file = user_data;
  g_autoptr (GError) error = NULL;
  gboolean ok = wick_window_export_trace_finish (WICK_WINDOW (source), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the window went meanwhile */
  WickWindow *self = WICK_WINDOW (source);
  g_clear_object (&self->export_cancellable);
  wick_window_update_actions (self);
  g_autofree char *name = g_file_get_parse_name (file);
  g_autofree char *message
    = ok ? g_strdup_printf (_ ("Exported the trace to %s"), name)
         : g_strdup_printf (_ ("Cannot export the trace to %s: %s"), name, error->message);
  wick_window_add_toast (self, adw_toast_new (message));
}

static void
on_export_trace_response (GtkNativeDialog *dialog, int response, WickWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT && self->document && self->export_cancellable == NULL)
    {
      GFile *file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      self->export_cancellable = g_cancellable_new ();
      wick_window_update_actions (self);
      wick_window_export_trace_async (self, file, self->export_cancellable, on_export_trace_done,
                                      file);
    }
  g_object_unref (dialog);
}

static void
action_export_trace (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  static const char *const patterns[][2]
    = { { N_ ("Chrome JSON (.json)"), "*.json" },
        { N_ ("Chrome JSON, gzip-compressed (.json.gz)"), "*.json.gz" } };
  show_export_dialog (self, _ ("Export Trace"), "trace.json", patterns, G_N_ELEMENTS (patterns),
                      G_CALLBACK (on_export_trace_response));
}

static void
action_search (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
action_find_next (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_window_step_match (WICK_WINDOW (widget), 1);
}

static void
action_find_previous (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_window_step_match (WICK_WINDOW (widget), -1);
}

static void
action_zoom_in (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  wick_timeline_view_zoom (
    WICK_TIMELINE_VIEW (self->timeline), 0.7,
    WICK_TIMELINE_GUTTER + (gtk_widget_get_width (self->timeline) - WICK_TIMELINE_GUTTER) / 2.0);
}

static void
action_zoom_out (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  wick_timeline_view_zoom (
    WICK_TIMELINE_VIEW (self->timeline), 1 / 0.7,
    WICK_TIMELINE_GUTTER + (gtk_widget_get_width (self->timeline) - WICK_TIMELINE_GUTTER) / 2.0);
}

static void
action_zoom_fit (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), FALSE);
  wick_timeline_view_zoom_to_fit (WICK_TIMELINE_VIEW (self->timeline));
}

static void
action_zoom_selection (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  guint64 start, end;
  wick_selection_get_range (self->selection, &start, &end);
  if (end > start)
    {
      wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), FALSE);
      wick_selection_set_visible (self->selection, start, end);
    }
}

static void
action_collapse_all (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  wick_timeline_view_set_all_collapsed (WICK_TIMELINE_VIEW (self->timeline),
                                        g_strcmp0 (action_name, "win.collapse-all") == 0);
}

static void
action_show_page (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_window_show_page (WICK_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
action_follow (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_window_set_follow_newest (WICK_WINDOW (widget), TRUE);
}

static void
action_save_as (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  if (self->save_handler)
    self->save_handler (self, self->save_data);
}

static void
action_toggle_details (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindow *self = WICK_WINDOW (widget);
  gtk_toggle_button_set_active (
    GTK_TOGGLE_BUTTON (self->details_button),
    !gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->details_button)));
}

/* Actions that need a document. */
static const char *const document_actions[]
  = { "win.export",   "win.export-trace", "win.search",   "win.find-next",      "win.find-previous", "win.zoom-in",
      "win.zoom-out", "win.zoom-fit", "win.zoom-selection", "win.show-page",
      "win.collapse-all", "win.expand-all" };

void
wick_window_class_install_actions (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.export", NULL, action_export);
  gtk_widget_class_install_action (widget_class, "win.export-trace", NULL, action_export_trace);
  gtk_widget_class_install_action (widget_class, "win.search", NULL, action_search);
  gtk_widget_class_install_action (widget_class, "win.find-next", NULL, action_find_next);
  gtk_widget_class_install_action (widget_class, "win.find-previous", NULL, action_find_previous);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, action_zoom_in);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, action_zoom_out);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, action_zoom_fit);
  gtk_widget_class_install_action (widget_class, "win.zoom-selection", NULL, action_zoom_selection);
  gtk_widget_class_install_action (widget_class, "win.show-page", "s", action_show_page);
  gtk_widget_class_install_action (widget_class, "win.collapse-all", NULL, action_collapse_all);
  gtk_widget_class_install_action (widget_class, "win.expand-all", NULL, action_collapse_all);
  gtk_widget_class_install_action (widget_class, "win.follow", NULL, action_follow);
  gtk_widget_class_install_action (widget_class, "win.save-as", NULL, action_save_as);
  gtk_widget_class_install_action (widget_class, "win.toggle-details", NULL, action_toggle_details);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "win.toggle-details", NULL);
}

void
wick_window_update_actions (WickWindow *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gboolean has_doc = self->document != NULL;
  for (guint i = 0; i < G_N_ELEMENTS (document_actions); i++)
    gtk_widget_action_set_enabled (widget, document_actions[i], has_doc);
  gtk_widget_action_set_enabled (widget, "win.follow", has_doc && self->live);
  gtk_widget_action_set_enabled (widget, "win.save-as", self->save_handler != NULL);
  gtk_widget_action_set_enabled (widget, "win.export-trace",
                                 has_doc && self->export_cancellable == NULL);
  gtk_widget_set_visible (self->search_button, has_doc);
  gtk_widget_set_visible (self->details_button, has_doc);
}
