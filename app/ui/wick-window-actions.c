/* wick-window-actions.c — see wick-window-actions.h. */
#include "config.h"

#include "wick-window-actions.h"

#include <glib/gi18n.h>

#include "model/wick-chrome-export.h"
#include "wick-render.h"
#include "wick-timeline-view.h"

/* Where the window's WickWindowActions sits in its instance (one class). */
static gsize actions_offset;

static WickWindowActions *
actions_of (GtkWidget *window)
{
  return G_STRUCT_MEMBER_P (window, actions_offset);
}

static void
add_toast (GtkWidget *window, const char *message)
{
  adw_toast_overlay_add_toast (actions_of (window)->toasts, adw_toast_new (message));
}

static WickRenderView
current_render_view (WickWindowActions *actions, gboolean *supported)
{
  const char *name = adw_view_stack_get_visible_child_name (actions->views);
  WickRenderView view = WICK_RENDER_TIMELINE;
  *supported = wick_render_view_from_string (name, &view);
  if (g_strcmp0 (name, "costs") == 0)
    *supported = FALSE;
  return view;
}

gboolean
wick_window_actions_export_view (GtkWidget *window, const char *path, GError **error)
{
  WickWindowActions *actions = actions_of (window);
  WickDocument *document = actions->get_document (window);
  gboolean supported;
  WickRenderView view = current_render_view (actions, &supported);
  if (!supported || document == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _ ("This view cannot be exported; switch to the timeline, memory, "
                              "coverage or health view"));
      return FALSE;
    }
  /* The view as it is on screen: its size, its time range, its style. */
  GtkWidget *visible = adw_view_stack_get_visible_child (actions->views);
  WickRenderOptions options = { view,
                                MAX (gtk_widget_get_width (visible), 400),
                                MAX (gtk_widget_get_height (visible), 300),
                                0,
                                0,
                                adw_style_manager_get_dark (adw_style_manager_get_default ()) };
  if (view == WICK_RENDER_TIMELINE || view == WICK_RENDER_MEMORY)
    wick_selection_get_visible (actions->selection, &options.start_ns, &options.end_ns);
  return wick_render_to_file (document, &options, path, error);
}

/* A native save dialog for the export actions: its title, a suggested name,
 * one filter per (name, pattern) and the response handler. */
static void
show_export_dialog (GtkWidget *window, const char *title, const char *current_name,
                    const char *const (*patterns)[2], guint n_patterns, GCallback on_response)
{
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
    title, GTK_WINDOW (window), GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Export"), _ ("_Cancel"));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), current_name);
  for (guint i = 0; i < n_patterns; i++)
    {
      GtkFileFilter *filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _ (patterns[i][0]));
      gtk_file_filter_add_pattern (filter, patterns[i][1]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
      g_object_unref (filter);
    }
  g_signal_connect (dialog, "response", on_response, window);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
on_export_response (GtkNativeDialog *dialog, int response, GtkWidget *window)
{
  if (response == GTK_RESPONSE_ACCEPT && actions_of (window)->get_document (window))
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      g_autoptr (GError) error = NULL;
      g_autofree char *message = NULL;
      if (wick_window_actions_export_view (window, path, &error))
        message = g_strdup_printf (_ ("Exported to %s"), path);
      else
        message = g_strdup (error->message);
      add_toast (window, message);
    }
  g_object_unref (dialog);
}

static void
action_export (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  gboolean supported;
  WickRenderView view = current_render_view (actions_of (widget), &supported);
  if (!supported)
    {
      add_toast (widget, _ ("This view cannot be exported; switch to the "
                            "timeline, memory, coverage or health view"));
      return;
    }
  g_autofree char *name = g_strdup_printf ("%s.png", wick_render_view_to_string (view));
  static const char *const patterns[][2] = { { N_ ("PNG image"), "*.png" },
                                             { N_ ("SVG image"), "*.svg" },
                                             { N_ ("PDF document"), "*.pdf" } };
  show_export_dialog (widget, _ ("Export View"), name, patterns, G_N_ELEMENTS (patterns),
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
wick_window_actions_export_trace (GtkWidget *window, GFile *file, GError **error)
{
  WickDocument *document = actions_of (window)->get_document (window);
  if (document == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _ ("No trace is open"));
      return FALSE;
    }
  return export_document (document, file, NULL, error);
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
wick_window_actions_export_trace_async (GtkWidget *window, GFile *file,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data)
{
  WickDocument *document = actions_of (window)->get_document (window);
  g_autoptr (GTask) task = g_task_new (window, cancellable, callback, user_data);
  g_task_set_source_tag (task, wick_window_actions_export_trace_async);
  if (document == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s",
                               _ ("No trace is open"));
      return;
    }
  ExportJob *job = g_new0 (ExportJob, 1);
  job->document = g_object_ref (document);
  job->file = g_object_ref (file);
  g_task_set_task_data (task, job, export_job_free);
  /* The track model is built (or brought up to date) here, so the worker
   * only reads the document. */
  wick_document_get_tracks (job->document);
  if (wick_document_is_finished (job->document))
    g_task_run_in_thread (task, export_thread);
  else
    export_thread (task, window, job, cancellable);
}

gboolean
wick_window_actions_export_trace_finish (GtkWidget *window, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, window), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gboolean
wick_window_actions_get_exporting (GtkWidget *window)
{
  return actions_of (window)->export_cancellable != NULL;
}

static void
on_export_trace_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GFile) file = user_data;
  g_autoptr (GError) error = NULL;
  GtkWidget *window = GTK_WIDGET (source);
  gboolean ok = wick_window_actions_export_trace_finish (window, result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the window went meanwhile */
  g_clear_object (&actions_of (window)->export_cancellable);
  wick_window_actions_update (window);
  g_autofree char *name = g_file_get_parse_name (file);
  g_autofree char *message
    = ok ? g_strdup_printf (_ ("Exported the trace to %s"), name)
         : g_strdup_printf (_ ("Cannot export the trace to %s: %s"), name, error->message);
  add_toast (window, message);
}

static void
on_export_trace_response (GtkNativeDialog *dialog, int response, GtkWidget *window)
{
  WickWindowActions *actions = actions_of (window);
  if (response == GTK_RESPONSE_ACCEPT && actions->get_document (window)
      && actions->export_cancellable == NULL)
    {
      GFile *file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      actions->export_cancellable = g_cancellable_new ();
      wick_window_actions_update (window);
      wick_window_actions_export_trace_async (window, file, actions->export_cancellable,
                                              on_export_trace_done, file);
    }
  g_object_unref (dialog);
}

static void
action_export_trace (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  static const char *const patterns[][2]
    = { { N_ ("Chrome JSON (.json)"), "*.json" },
        { N_ ("Chrome JSON, gzip-compressed (.json.gz)"), "*.json.gz" } };
  show_export_dialog (widget, _ ("Export Trace"), "trace.json", patterns, G_N_ELEMENTS (patterns),
                      G_CALLBACK (on_export_trace_response));
}

static void
action_search (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindowActions *actions = actions_of (widget);
  gtk_search_bar_set_search_mode (actions->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (actions->search_entry));
}

static void
action_find_next (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  actions_of (widget)->step_match (widget, 1);
}

static void
action_find_previous (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  actions_of (widget)->step_match (widget, -1);
}

/* Zooms the timeline by @factor about the middle of its plot. */
static void
zoom_timeline (GtkWidget *timeline, double factor)
{
  wick_timeline_view_zoom (
    WICK_TIMELINE_VIEW (timeline), factor,
    WICK_TIMELINE_GUTTER + (gtk_widget_get_width (timeline) - WICK_TIMELINE_GUTTER) / 2.0);
}

static void
action_zoom_in (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  zoom_timeline (actions_of (widget)->timeline, 0.7);
}

static void
action_zoom_out (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  zoom_timeline (actions_of (widget)->timeline, 1 / 0.7);
}

static void
action_zoom_fit (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (actions_of (widget)->timeline);
  wick_timeline_view_set_follow (timeline, FALSE);
  wick_timeline_view_zoom_to_fit (timeline);
}

static void
action_zoom_selection (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindowActions *actions = actions_of (widget);
  guint64 start, end;
  wick_selection_get_range (actions->selection, &start, &end);
  if (end > start)
    {
      wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (actions->timeline), FALSE);
      wick_selection_set_visible (actions->selection, start, end);
    }
}

static void
action_collapse_all (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_timeline_view_set_all_collapsed (WICK_TIMELINE_VIEW (actions_of (widget)->timeline),
                                        g_strcmp0 (action_name, "win.collapse-all") == 0);
}

static void
action_show_page (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  adw_view_stack_set_visible_child_name (actions_of (widget)->views,
                                         g_variant_get_string (parameter, NULL));
}

/* The follow button's visibility follows the timeline's "follow". */
static void
action_follow (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (actions_of (widget)->timeline), TRUE);
}

static void
action_save_as (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  WickWindowActions *actions = actions_of (widget);
  if (actions->can_save (widget))
    actions->save_as (widget);
}

static void
action_toggle_details (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  GtkToggleButton *button = GTK_TOGGLE_BUTTON (actions_of (widget)->details_button);
  gtk_toggle_button_set_active (button, !gtk_toggle_button_get_active (button));
}

/* Actions that need a document. */
static const char *const document_actions[]
  = { "win.export",   "win.export-trace", "win.search",   "win.find-next",      "win.find-previous", "win.zoom-in",
      "win.zoom-out", "win.zoom-fit", "win.zoom-selection", "win.show-page",
      "win.collapse-all", "win.expand-all" };

void
wick_window_actions_install (GtkWidgetClass *widget_class, gsize offset)
{
  actions_offset = offset;
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
wick_window_actions_update (GtkWidget *window)
{
  WickWindowActions *actions = actions_of (window);
  gboolean has_doc = actions->get_document (window) != NULL;
  for (guint i = 0; i < G_N_ELEMENTS (document_actions); i++)
    gtk_widget_action_set_enabled (window, document_actions[i], has_doc);
  gtk_widget_action_set_enabled (window, "win.follow", has_doc && actions->get_live (window));
  gtk_widget_action_set_enabled (window, "win.save-as", actions->can_save (window));
  gtk_widget_action_set_enabled (window, "win.export-trace",
                                 has_doc && actions->export_cancellable == NULL);
  gtk_widget_set_visible (actions->search_button, has_doc);
  gtk_widget_set_visible (actions->details_button, has_doc);
}

void
wick_window_actions_dispose (WickWindowActions *actions)
{
  if (actions->export_cancellable)
    g_cancellable_cancel (actions->export_cancellable);
  g_clear_object (&actions->export_cancellable);
}
