/* wick-window-loading.c — see wick-window-loading.h. */
#include "config.h"

#include "wick-window-loading.h"

#include <string.h>

#include <glib/gi18n.h>

#include "model/wick-document-loader.h"
#include "model/wick-gpu-analysis.h"
#include "model/wick-span-costs.h"
#include "wick-snapshot-window.h"

struct _WickWindowLoading
{
  GObject parent_instance;

  AdwStatusPage *page;
  GtkProgressBar *progress;
  /* The load shown (NULL when none): a load that another replaced or that
   * was abandoned finds itself no longer here and ends without a signal. */
  WickDocumentLoader *loader;
  GCancellable *cancellable;
};

G_DEFINE_FINAL_TYPE (WickWindowLoading, wick_window_loading, G_TYPE_OBJECT)

enum
{
  SIGNAL_LOADED,
  SIGNAL_FAILED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

/* Loads whose end has not arrived yet, every window's (tests wait on it). */
static guint n_loads_in_flight;

typedef struct
{
  GWeakRef loading;
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
  g_weak_ref_clear (&request->loading);
  g_clear_object (&request->loader);
  g_clear_object (&request->cancellable);
  g_clear_object (&request->document);
  derived_clear (&request->derived);
  g_free (request);
  n_loads_in_flight--;
}

/* The WickWindowLoading @request belongs to, when it still shows that load
 * (a new reference), else NULL. */
static WickWindowLoading *
request_owner (LoadRequest *request)
{
  WickWindowLoading *self = g_weak_ref_get (&request->loading);
  if (self != NULL && self->loader != request->loader)
    g_clear_object (&self);
  return self;
}

static void
on_loader_progress (WickDocumentLoader *loader, GParamSpec *pspec, WickWindowLoading *self)
{
  double fraction = wick_document_loader_get_fraction (loader);
  const char *message = wick_document_loader_get_message (loader);
  g_autofree char *text
    = g_strdup_printf ("%s · %.1f %%", message ? message : "", fraction * 100.0);
  gtk_progress_bar_set_fraction (self->progress, fraction);
  gtk_progress_bar_set_text (self->progress, text);
}

/* The load shown ended, or was abandoned: it is forgotten. */
static void
forget_load (WickWindowLoading *self)
{
  if (self->loader == NULL)
    return;
  g_signal_handlers_disconnect_by_func (self->loader, on_loader_progress, self);
  g_clear_object (&self->loader);
  g_clear_object (&self->cancellable);
}

static void
load_failed (WickWindowLoading *self, const char *path, const GError *error)
{
  forget_load (self);
  g_signal_emit (self, signals[SIGNAL_FAILED], 0, path, error);
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
  g_autoptr (WickWindowLoading) self = request_owner (request);
  g_autoptr (GError) error = NULL;
  const char *path = wick_document_loader_get_path (request->loader);

  if (self == NULL)
    return;
  if (g_cancellable_set_error_if_cancelled (request->cancellable, &error))
    {
      load_failed (self, path, error);
      return;
    }
  forget_load (self);
  g_signal_emit (self, signals[SIGNAL_LOADED], 0, path, request->document, &request->derived);
}

static void
on_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadRequest *request = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (WickWindowLoading) self = NULL;
  g_autoptr (GTask) task = NULL;

  request->document
    = wick_document_loader_load_finish (WICK_DOCUMENT_LOADER (source), result, &error);
  self = request_owner (request);
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
wick_window_loading_start (WickWindowLoading *self, const char *path)
{
  g_return_if_fail (WICK_IS_WINDOW_LOADING (self));
  wick_window_loading_abandon (self);

  LoadRequest *request = g_new0 (LoadRequest, 1);
  n_loads_in_flight++;
  g_weak_ref_init (&request->loading, self);
  request->loader = wick_document_loader_new (path);
  request->cancellable = g_cancellable_new ();
  self->loader = g_object_ref (request->loader);
  self->cancellable = g_object_ref (request->cancellable);
  g_signal_connect (self->loader, "notify::fraction", G_CALLBACK (on_loader_progress), self);
  g_signal_connect (self->loader, "notify::message", G_CALLBACK (on_loader_progress), self);

  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *title = g_strdup_printf (_ ("Loading %s…"), base);
  adw_status_page_set_title (self->page, title);
  adw_status_page_set_description (self->page, path);
  on_loader_progress (self->loader, NULL, self);
  wick_document_loader_load_async (request->loader, request->cancellable, on_read, request);
}

void
wick_window_loading_cancel (WickWindowLoading *self)
{
  g_return_if_fail (WICK_IS_WINDOW_LOADING (self));
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
}

void
wick_window_loading_abandon (WickWindowLoading *self)
{
  g_return_if_fail (WICK_IS_WINDOW_LOADING (self));
  if (self->loader == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  forget_load (self);
}

gboolean
wick_window_loading_is_busy (WickWindowLoading *self)
{
  g_return_val_if_fail (WICK_IS_WINDOW_LOADING (self), FALSE);
  return self->loader != NULL;
}

double
wick_window_loading_get_fraction (WickWindowLoading *self)
{
  g_return_val_if_fail (WICK_IS_WINDOW_LOADING (self), 0.0);
  return self->loader ? wick_document_loader_get_fraction (self->loader) : 0.0;
}

guint
wick_window_loading_get_n_in_flight (void)
{
  return n_loads_in_flight;
}

char *
wick_window_loading_find_memory_history (const char *path)
{
  static const char *const exts[] = { ".jsonl.gz", ".jsonl.zst", ".jsonl" };
  for (gsize i = 0; i < G_N_ELEMENTS (exts); i++)
    if (g_str_has_suffix (path, exts[i]))
      {
        g_autofree char *stem = g_strndup (path, strlen (path) - strlen (exts[i]));
        g_autofree char *snapshot = g_strconcat (stem, ".memory.pickle", NULL);
        if (g_file_test (snapshot, G_FILE_TEST_IS_REGULAR) && wick_snapshot_window_sniff (snapshot))
          return g_steal_pointer (&snapshot);
        return NULL;
      }
  return NULL;
}

static void
wick_window_loading_dispose (GObject *object)
{
  WickWindowLoading *self = WICK_WINDOW_LOADING (object);
  wick_window_loading_abandon (self);
  g_clear_object (&self->page);
  g_clear_object (&self->progress);
  G_OBJECT_CLASS (wick_window_loading_parent_class)->dispose (object);
}

static void
wick_window_loading_class_init (WickWindowLoadingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = wick_window_loading_dispose;
  signals[SIGNAL_LOADED]
    = g_signal_new ("loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 3, G_TYPE_STRING, WICK_TYPE_DOCUMENT, G_TYPE_POINTER);
  signals[SIGNAL_FAILED]
    = g_signal_new ("failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_POINTER);
}

static void
wick_window_loading_init (WickWindowLoading *self)
{
}

WickWindowLoading *
wick_window_loading_new (AdwStatusPage *page, GtkProgressBar *progress)
{
  g_return_val_if_fail (ADW_IS_STATUS_PAGE (page) && GTK_IS_PROGRESS_BAR (progress), NULL);
  WickWindowLoading *self = g_object_new (WICK_TYPE_WINDOW_LOADING, NULL);
  self->page = g_object_ref (page);
  self->progress = g_object_ref (progress);
  return self;
}
