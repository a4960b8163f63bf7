/* wick-window-loading.c — opening a file in a window: a WickDocumentLoader
 * reads it (its fraction and message drive the loading page), then a worker
 * thread derives what the views draw from (scene, memory chart, span costs),
 * then the window shows it. One load at a time: opening another file, or
 * closing the window, cancels the load shown and forgets it, so its end
 * (cancelled, failed or read) touches nothing. No timer polls anything. */
#include "config.h"

#include <string.h>

#include "wick-window-internal.h"
#include "wick-window-private.h"

#include <glib/gi18n.h>

#include "model/wick-gpu-analysis.h"
#include "model/wick-span-costs.h"
#include "wick-settings.h"
#include "wick-snapshot-window.h"

/* Loads whose end has not arrived yet, every window's (tests wait on it). */
static guint n_loads_in_flight;

typedef struct
{
  GWeakRef window;
  WickDocumentLoader *loader;
  GCancellable *cancellable;
  WickDocument *document;
  WickWindowDerived derived;
} LoadRequest;

static void
derived_clear (WickWindowDerived *derived)
{
  g_clear_pointer (&derived->scene, wick_timeline_scene_free);
  g_clear_pointer (&derived->chart, wick_memory_chart_free);
  g_clear_pointer (&derived->costs, g_array_unref);
}

static void
load_request_free (LoadRequest *request)
{
  g_weak_ref_clear (&request->window);
  g_clear_object (&request->loader);
  g_clear_object (&request->cancellable);
  g_clear_object (&request->document);
  derived_clear (&request->derived);
  g_free (request);
  n_loads_in_flight--;
}

/* The window @request belongs to, when it still shows that load (a new
 * reference), else NULL. */
static WickWindow *
request_window (LoadRequest *request)
{
  WickWindow *window = g_weak_ref_get (&request->window);
  if (window != NULL && window->loader != request->loader)
    g_clear_object (&window);
  return window;
}

static void
on_loader_progress (WickDocumentLoader *loader, GParamSpec *pspec, WickWindow *self)
{
  double fraction = wick_document_loader_get_fraction (loader);
  const char *message = wick_document_loader_get_message (loader);
  g_autofree char *text
    = g_strdup_printf ("%s · %.1f %%", message ? message : "", fraction * 100.0);
  gtk_progress_bar_set_fraction (self->progress, fraction);
  gtk_progress_bar_set_text (self->progress, text);
}

static void
add_recent (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentData data = {
    NULL, NULL, (char *)"application/x-ndjson", (char *)"Wick", (char *)"wick %f", NULL, FALSE
  };
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
  wick_settings_add_recent (path);
}

/* The load ended: the window leaves the loading page. */
static void
loading_done (WickWindow *self)
{
  g_signal_handlers_disconnect_by_func (self->loader, on_loader_progress, self);
  g_clear_object (&self->loader);
  g_clear_object (&self->load_cancellable);
}

static void
load_failed (WickWindow *self, const char *path, const GError *error)
{
  loading_done (self);
  gtk_stack_set_visible_child_name (self->main_stack, self->document ? "document" : "welcome");
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    wick_window_add_toast (self, adw_toast_new (_ ("Loading cancelled")));
  else
    {
      g_autofree char *message
        = g_strdup_printf (_ ("Could not open %s: %s"), path, error->message);
      AdwToast *toast = adw_toast_new (message);
      adw_toast_set_timeout (toast, 0);
      wick_window_add_toast (self, toast);
    }
  wick_window_update_actions (self);
}

static void
derive_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadRequest *request = task_data;
  WickWindowDerived *derived = &request->derived;
  WickDocument *document = request->document;

  /* First: the GPU pages' analysis (kept on the document,
   * wick_gpu_analysis_get) interns its grid/block/shape texts, which may
   * move the string pool under anything that read it before. */
  if (!g_cancellable_is_cancelled (cancellable))
    wick_gpu_analysis_get (document);
  if (!g_cancellable_is_cancelled (cancellable))
    derived->scene = wick_timeline_scene_new (document);
  if (!g_cancellable_is_cancelled (cancellable))
    derived->chart = wick_memory_chart_new (document);
  if (!g_cancellable_is_cancelled (cancellable))
    {
      g_autoptr (WickSpanIndex) index = wick_span_index_new (document);
      derived->costs = wick_span_costs_by_name (document, index);
    }
  g_task_return_boolean (task, TRUE);
}

static void
on_derived (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadRequest *request = g_task_get_task_data (G_TASK (result));
  g_autoptr (WickWindow) self = request_window (request);
  g_autoptr (GError) error = NULL;
  const char *path = wick_document_loader_get_path (request->loader);

  if (self == NULL)
    return;
  if (g_cancellable_set_error_if_cancelled (request->cancellable, &error))
    {
      load_failed (self, path, error);
      return;
    }
  loading_done (self);
  add_recent (path);
  wick_window_show_document (self, request->document, &request->derived);
}

static void
on_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadRequest *request = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (WickWindow) self = NULL;
  g_autoptr (GTask) task = NULL;

  request->document
    = wick_document_loader_load_finish (WICK_DOCUMENT_LOADER (source), result, &error);
  self = request_window (request);
  if (self == NULL)
    {
      load_request_free (request);
      return;
    }
  if (request->document == NULL)
    {
      load_failed (self, wick_document_loader_get_path (request->loader), error);
      load_request_free (request);
      return;
    }
  gtk_progress_bar_set_text (self->progress, _ ("Building the views"));
  task = g_task_new (NULL, request->cancellable, on_derived, NULL);
  g_task_set_source_tag (task, on_read);
  g_task_set_task_data (task, request, (GDestroyNotify)load_request_free);
  g_task_run_in_thread (task, derive_thread);
}

void
wick_window_loading_abandon (WickWindow *self)
{
  if (self->loader == NULL)
    return;
  g_cancellable_cancel (self->load_cancellable);
  loading_done (self);
}

/* A CUDA memory snapshot as the trace window's "Memory Snapshot" page (the
 * snapshot window's body, docs/memory-snapshots.md), in place of the one it
 * had; NULL only removes that. */
static void
set_snapshot_page (WickWindow *self, const char *snapshot)
{
  GtkWidget *old = adw_view_stack_get_child_by_name (self->views, "memory-snapshot");
  if (old != NULL)
    adw_view_stack_remove (self->views, old);
  if (snapshot != NULL)
    wick_window_add_page (self, "memory-snapshot", _ ("Memory Snapshot"),
                          "drive-multidisk-symbolic", wick_snapshot_window_new_page (snapshot));
}

/* wick.torch's memory_history=True writes run.memory.pickle beside
 * run.jsonl: a trace opened with one beside it shows it too, as a page of
 * its window (docs/memory-snapshots.md). */
static void
open_memory_history (WickWindow *self, const char *path)
{
  static const char *const exts[] = { ".jsonl.gz", ".jsonl.zst", ".jsonl" };
  for (gsize i = 0; i < G_N_ELEMENTS (exts); i++)
    if (g_str_has_suffix (path, exts[i]))
      {
        g_autofree char *stem = g_strndup (path, strlen (path) - strlen (exts[i]));
        g_autofree char *snapshot = g_strconcat (stem, ".memory.pickle", NULL);
        if (g_file_test (snapshot, G_FILE_TEST_IS_REGULAR) && wick_snapshot_window_sniff (snapshot))
          set_snapshot_page (self, snapshot);
        return;
      }
}

void
wick_window_load_file (WickWindow *self, GFile *file)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  g_autofree char *path = g_file_get_path (file);
  if (path == NULL)
    {
      wick_window_add_toast (self, adw_toast_new (_ ("Only local files can be opened")));
      return;
    }
  /* A PyTorch CUDA memory snapshot (a pickle: its first byte is the PROTO
   * opcode) opened into a window showing a trace becomes its Memory
   * Snapshot page, the trace staying; else it opens in a window of its own. */
  if (wick_snapshot_window_sniff (path))
    {
      if (self->document != NULL)
        {
          set_snapshot_page (self, path);
          wick_window_show_page (self, "memory-snapshot");
          add_recent (path);
          return;
        }
      GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
      WickSnapshotWindow *snapshot = wick_snapshot_window_new (application, path);
      gtk_window_present (GTK_WINDOW (snapshot));
      add_recent (path);
      return;
    }
  /* The load shown before (if any) is cancelled and forgotten. */
  wick_window_loading_abandon (self);
  set_snapshot_page (self, NULL); /* the last trace's */

  LoadRequest *request = g_new0 (LoadRequest, 1);
  n_loads_in_flight++;
  g_weak_ref_init (&request->window, self);
  request->loader = wick_document_loader_new (path);
  request->cancellable = g_cancellable_new ();
  self->loader = g_object_ref (request->loader);
  self->load_cancellable = g_object_ref (request->cancellable);
  g_signal_connect (self->loader, "notify::fraction", G_CALLBACK (on_loader_progress), self);
  g_signal_connect (self->loader, "notify::message", G_CALLBACK (on_loader_progress), self);

  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *title = g_strdup_printf (_ ("Loading %s…"), base);
  adw_status_page_set_title (self->loading_page, title);
  adw_status_page_set_description (self->loading_page, path);
  on_loader_progress (self->loader, NULL, self);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  wick_document_loader_load_async (request->loader, request->cancellable, on_read, request);
  wick_window_update_actions (self);
  open_memory_history (self, path);
}

static void on_recent_activated (GtkListBox *list, GtkListBoxRow *row, WickWindow *self);

static void
on_cancel_clicked (GtkButton *button, WickWindow *self)
{
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
}

void
wick_window_loading_init (WickWindow *self)
{
  g_signal_connect (self->cancel_button, "clicked", G_CALLBACK (on_cancel_clicked), self);
  g_signal_connect (self->recent_list, "row-activated", G_CALLBACK (on_recent_activated), self);
}

void
wick_window_loading_dispose (WickWindow *self)
{
  wick_window_loading_abandon (self);
}

gboolean
wick_window_is_empty (WickWindow *self)
{
  return self->document == NULL && self->loader == NULL;
}

/* ---- for tests (wick-window-private.h) ---- */

double
wick_window_get_progress (WickWindow *self)
{
  return self->loader ? wick_document_loader_get_fraction (self->loader) : 0.0;
}

void
wick_window_cancel_load (WickWindow *self)
{
  on_cancel_clicked (NULL, self);
}

guint
wick_window_get_n_loads_in_flight (void)
{
  return n_loads_in_flight;
}

/* ---- recent files on the welcome page ---- */

static void
on_recent_activated (GtkListBox *list, GtkListBoxRow *row, WickWindow *self)
{
  const char *path = g_object_get_data (G_OBJECT (row), "wick-path");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (self, file);
}

void
wick_window_fill_recent (WickWindow *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->recent_list)))
    gtk_list_box_remove (GTK_LIST_BOX (self->recent_list), child);
  g_auto (GStrv) recent = wick_settings_get_recent ();
  guint shown = 0;
  for (guint i = 0; recent && recent[i] && shown < 5; i++)
    {
      if (!g_file_test (recent[i], G_FILE_TEST_IS_REGULAR))
        continue;
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_autofree char *dir = g_path_get_dirname (recent[i]);
      g_autofree char *escaped_base = g_markup_escape_text (base, -1);
      g_autofree char *escaped_dir = g_markup_escape_text (dir, -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), escaped_base);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped_dir);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name ("go-next-symbolic"));
      g_object_set_data_full (G_OBJECT (row), "wick-path", g_strdup (recent[i]), g_free);
      gtk_list_box_append (GTK_LIST_BOX (self->recent_list), row);
      shown++;
    }
  gtk_widget_set_visible (self->recent_list, shown > 0);
  gtk_widget_set_visible (self->recent_label, shown > 0);
}
