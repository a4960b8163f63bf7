/* wick-document-loader.c — WickDocumentLoader (wick-document-loader.h):
 * wick_document_load_file_auto() in a GTask thread, its progress carried back
 * to the caller's main context.
 */
#include "config.h"

#include "wick-document-loader.h"

#include <glib/gi18n.h>

#include "wick-trace-format.h"

/* ---- WickDocumentLoader ---- */

struct _WickDocumentLoader
{
  GObject parent_instance;
  char *path;
  double fraction; /* as last notified, main context */
  char *message;   /* as last notified, main context */
  gboolean started;

  /* written by the worker, read by the main context's idle */
  GMutex lock;
  double worker_fraction;
  const char *worker_message; /* static, untranslated: N_() */
  GSource *update_source;     /* pending idle, under @lock */
  GMainContext *context;
};

enum
{
  PROP_0,
  PROP_PATH,
  PROP_FRACTION,
  PROP_MESSAGE,
  N_LOADER_PROPS
};

static GParamSpec *loader_properties[N_LOADER_PROPS];

G_DEFINE_FINAL_TYPE (WickDocumentLoader, wick_document_loader, G_TYPE_OBJECT)

static void
loader_set_message (WickDocumentLoader *self, const char *message)
{
  if (g_strcmp0 (self->message, message) == 0)
    return;
  g_free (self->message);
  self->message = g_strdup (message);
  g_object_notify_by_pspec (G_OBJECT (self), loader_properties[PROP_MESSAGE]);
}

static void
loader_set_fraction (WickDocumentLoader *self, double fraction)
{
  fraction = CLAMP (fraction, 0.0, 1.0);
  if (fraction == self->fraction)
    return;
  self->fraction = fraction;
  g_object_notify_by_pspec (G_OBJECT (self), loader_properties[PROP_FRACTION]);
}

/* Main context: publishes what the worker last reported. */
static gboolean
loader_flush_update (gpointer user_data)
{
  WickDocumentLoader *self = user_data;
  double fraction;
  const char *message;

  g_mutex_lock (&self->lock);
  fraction = self->worker_fraction;
  message = self->worker_message;
  if (self->update_source != NULL)
    {
      /* also when called from load_finish before the idle ran */
      g_source_destroy (self->update_source);
      g_clear_pointer (&self->update_source, g_source_unref);
    }
  g_mutex_unlock (&self->lock);
  g_object_freeze_notify (G_OBJECT (self));
  loader_set_fraction (self, fraction);
  if (message != NULL)
    loader_set_message (self, _ (message));
  g_object_thaw_notify (G_OBJECT (self));
  return G_SOURCE_REMOVE;
}

/* Worker: records the progress and schedules one idle on the caller's context
 * unless one is pending (so a burst of batches costs one notification). */
static void
loader_report (WickDocumentLoader *self, double fraction, const char *message)
{
  g_mutex_lock (&self->lock);
  self->worker_fraction = fraction;
  if (message != NULL)
    self->worker_message = message;
  if (self->update_source == NULL)
    {
      self->update_source = g_idle_source_new ();
      g_source_set_priority (self->update_source, G_PRIORITY_DEFAULT);
      g_source_set_callback (self->update_source, loader_flush_update, g_object_ref (self),
                             g_object_unref);
      g_source_set_static_name (self->update_source, "[wick] document loader progress");
      g_source_attach (self->update_source, self->context);
    }
  g_mutex_unlock (&self->lock);
}

static void
loader_progress (double fraction, gpointer user_data)
{
  loader_report (user_data, fraction, NULL);
}

static void
loader_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  WickDocumentLoader *self = source;
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  gboolean ok;

  loader_report (self, 0.0, N_ ("Reading the trace"));
  ok = wick_document_load_file_auto (document, self->path, cancellable, loader_progress, self,
                                     &error);
  /* Cancelled after the whole file was read: still a cancellation, the user
   * asked for nothing. */
  if (g_cancellable_is_cancelled (cancellable))
    {
      g_clear_error (&error);
      g_cancellable_set_error_if_cancelled (cancellable, &error);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* A parse error keeps the records read before it: the document is the
   * result and says where it failed; anything else is the error. */
  if (!ok)
    {
      const WickParseError *parse = wick_document_get_parse_error (document);
      if (parse == NULL || !parse->failed)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
    }
  loader_report (self, 1.0, N_ ("Trace read"));
  g_task_return_pointer (task, g_steal_pointer (&document), g_object_unref);
}

void
wick_document_loader_load_async (WickDocumentLoader *self, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (WICK_IS_DOCUMENT_LOADER (self));
  g_return_if_fail (!cancellable || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, wick_document_loader_load_async);
  if (self->started)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               "%s: this loader was started already", self->path);
      return;
    }
  self->started = TRUE;
  g_clear_pointer (&self->context, g_main_context_unref);
  self->context = g_main_context_ref_thread_default ();
  g_task_run_in_thread (task, loader_thread);
}

WickDocument *
wick_document_loader_load_finish (WickDocumentLoader *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT_LOADER (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  /* The last progress the worker reported is published before the caller
   * sees the outcome. */
  loader_flush_update (self);
  return g_task_propagate_pointer (G_TASK (result), error);
}

WickDocumentLoader *
wick_document_loader_new (const char *path)
{
  g_return_val_if_fail (path != NULL, NULL);
  return g_object_new (WICK_TYPE_DOCUMENT_LOADER, "path", path, NULL);
}

const char *
wick_document_loader_get_path (WickDocumentLoader *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT_LOADER (self), NULL);
  return self->path;
}

double
wick_document_loader_get_fraction (WickDocumentLoader *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT_LOADER (self), 0);
  return self->fraction;
}

const char *
wick_document_loader_get_message (WickDocumentLoader *self)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT_LOADER (self), NULL);
  return self->message;
}

static void
wick_document_loader_finalize (GObject *object)
{
  WickDocumentLoader *self = WICK_DOCUMENT_LOADER (object);

  /* a pending idle holds a reference: none is left here */
  g_free (self->path);
  g_free (self->message);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (wick_document_loader_parent_class)->finalize (object);
}

static void
wick_document_loader_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickDocumentLoader *self = WICK_DOCUMENT_LOADER (object);

  switch (prop_id)
    {
      case PROP_PATH:
        g_value_set_string (value, self->path);
        break;
      case PROP_FRACTION:
        g_value_set_double (value, self->fraction);
        break;
      case PROP_MESSAGE:
        g_value_set_string (value, self->message);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_document_loader_set_property (GObject *object, guint prop_id, const GValue *value,
                                   GParamSpec *pspec)
{
  WickDocumentLoader *self = WICK_DOCUMENT_LOADER (object);

  switch (prop_id)
    {
      case PROP_PATH:
        g_free (self->path);
        self->path = g_value_dup_string (value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
wick_document_loader_class_init (WickDocumentLoaderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = wick_document_loader_finalize;
  object_class->get_property = wick_document_loader_get_property;
  object_class->set_property = wick_document_loader_set_property;
  loader_properties[PROP_PATH] = g_param_spec_string (
    "path", NULL, NULL, NULL, G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  loader_properties[PROP_FRACTION]
    = g_param_spec_double ("fraction", NULL, NULL, 0.0, 1.0, 0.0,
                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  loader_properties[PROP_MESSAGE]
    = g_param_spec_string ("message", NULL, NULL, NULL,
                           G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_LOADER_PROPS, loader_properties);
}

static void
wick_document_loader_init (WickDocumentLoader *self)
{
  g_mutex_init (&self->lock);
}
