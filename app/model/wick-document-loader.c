/* wick-document-loader.c — wick_document_load_file(): a two-stage pipeline.
 *
 * A reader thread reads the file in chunks of CHUNK bytes, splits lines, checks
 * UTF-8, trims and decodes each line (wick-trace-record.c) into a batch: the
 * chunk's bytes, the decoded values of each record (strings point into the
 * chunk, unescaped ones into the batch's string chunk) and, when a line fails,
 * where and why. The calling thread commits batches in order (interning,
 * arrays, stream rules), so decoding and committing run on two cores. At most
 * IN_FLIGHT batches exist at once, which bounds memory to a few chunks.
 *
 * The outcome is exactly that of feeding the lines to wick_document_feed_line()
 * and finishing (tests/model compares both): same records, same line numbers,
 * same first error. Cancellation and progress are checked per batch.
 *
 * WickDocumentLoader (wick-document-loader.h) runs wick_document_load_file_auto()
 * in a GTask thread and carries its progress back to the caller's main context.
 */
#include "config.h"

#include "wick-document-loader.h"

#include <glib/gi18n.h>

#include "wick-chrome-import.h"
#include "wick-document-private.h"
#include "wick-input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (4 << 20)
#define IN_FLIGHT 3

typedef struct
{
  WickLineBatch lines; /* lines.buffer: the chunk its records point into */
  guint64 bytes;       /* file bytes consumed through this batch */
  gboolean end;        /* no batch follows */
  GError *io_error;
} LoadBatch;

typedef struct
{
  WickInput *input;
  gboolean extensions;
  GAsyncQueue *batches; /* reader -> committer */
  GAsyncQueue *tokens;  /* committer -> reader: permission to make a batch */
  gint stop;
} Loader;

static void
load_batch_free (LoadBatch *batch)
{
  wick_line_batch_clear (&batch->lines);
  g_clear_error (&batch->io_error);
  g_free (batch);
}

static LoadBatch *
load_batch_new (void)
{
  LoadBatch *batch = g_new0 (LoadBatch, 1);

  wick_line_batch_init (&batch->lines, 32768);
  return batch;
}

/* Decodes one physical line into @batch; FALSE when reading must stop. */
static gboolean
decode_line (WickTraceDecoder *decoder, GString *cause, LoadBatch *batch, guint64 line_number,
             const char *line, gsize length)
{
  return wick_line_batch_decode (&batch->lines, decoder, cause, line_number, line, length);
}

/* Appends up to CHUNK decoded bytes to @pending (growing it geometrically, so
 * a long line costs linear time); returns the count, 0 at the end. */
static gssize
read_more (WickInput *input, char **pending, gsize *len, gsize *cap, GError **error)
{
  gssize n;

  if (*cap - *len < CHUNK)
    {
      *cap = MAX (*cap * 2, *len + CHUNK);
      *pending = g_realloc (*pending, *cap);
    }
  n = wick_input_read (input, *pending + *len, CHUNK, error);
  if (n > 0)
    *len += (gsize)n;
  return n;
}

static void
line_too_long (LoadBatch *batch, guint64 line_number, gsize limit)
{
  batch->lines.decode_verb = g_strdup ("read");
  batch->lines.decode_cause = g_strdup_printf (
    "line is longer than the maximum of %" G_GSIZE_FORMAT
    " bytes (raise it with --max-line-bytes or WICK_MAX_LINE_BYTES)",
    limit);
  batch->lines.error_line = line_number;
}

static gpointer
reader_thread (gpointer data)
{
  Loader *loader = data;
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (loader->extensions);
  g_autoptr (GString) cause = g_string_new (NULL);
  gsize limit = wick_max_line_length ();
  char *pending = NULL;
  gsize len = 0, cap = 0, scanned = 0;
  guint64 line_number = 0, bytes = 0;
  gboolean done = FALSE;

  while (!done)
    {
      LoadBatch *batch;
      const char *p, *end, *nl;
      gboolean at_eof = FALSE;
      GError *io_error = NULL;
      char *last_nl = NULL;

      g_async_queue_pop (loader->tokens);
      if (g_atomic_int_get (&loader->stop))
        break;
      batch = load_batch_new ();
      /* read until the buffer holds a whole line (or the end): only the new
       * bytes are searched, so a line of any length is scanned once */
      while (last_nl == NULL)
        {
          gssize n = read_more (loader->input, &pending, &len, &cap, &io_error);
          if (n < 0)
            break;
          if (n == 0)
            {
              at_eof = TRUE;
              break;
            }
          for (char *q = pending + len - 1; q >= pending + scanned; q--)
            if (*q == '\n')
              {
                last_nl = q;
                break;
              }
          if (last_nl == NULL && len > limit)
            break;
          scanned = len;
        }
      if (io_error != NULL && last_nl == NULL)
        {
          /* decode the whole lines read before the failure, then report it */
          at_eof = TRUE;
        }
      batch->lines.buffer = pending;
      p = pending;
      end = last_nl != NULL ? last_nl + 1 : pending + len;
      while (!done && (nl = memchr (p, '\n', (gsize)(end - p))) != NULL)
        {
          if ((gsize)(nl - p) > limit)
            {
              line_too_long (batch, ++line_number, limit);
              done = TRUE;
              break;
            }
          done = !decode_line (decoder, cause, batch, ++line_number, p, (gsize)(nl - p));
          bytes += (gsize)(nl + 1 - p);
          p = nl + 1;
        }
      if (!done && last_nl == NULL && io_error == NULL && !at_eof && len > limit)
        {
          line_too_long (batch, ++line_number, limit);
          done = TRUE;
        }
      if (!done && at_eof && io_error == NULL && p < end && (gsize)(end - p) > limit)
        {
          line_too_long (batch, ++line_number, limit);
          done = TRUE;
        }
      if (!done && at_eof && io_error == NULL && p < end)
        {
          done = !decode_line (decoder, cause, batch, ++line_number, p, (gsize)(end - p));
          bytes += (gsize)(end - p);
          p = end;
        }
      if (!done && io_error != NULL)
        {
          batch->io_error = io_error;
          io_error = NULL;
          done = TRUE;
        }
      g_clear_error (&io_error);
      /* the bytes after the last whole line start the next buffer */
      {
        gsize tail = done ? 0 : (gsize)(pending + len - end);
        char *next = NULL;
        if (!done && !at_eof)
          {
            cap = MAX ((gsize)CHUNK, tail) + CHUNK;
            next = g_malloc (cap);
            memcpy (next, end, tail);
          }
        else
          cap = 0;
        pending = next;
        len = tail;
        scanned = tail;
      }
      done |= at_eof;
      batch->lines.last_line = line_number;
      batch->bytes = wick_input_get_consumed (loader->input);
      (void)bytes;
      batch->end = done;
      g_async_queue_push (loader->batches, batch);
    }
  g_free (pending);
  return NULL;
}

static void
stop_reader (Loader *loader, GThread *thread)
{
  LoadBatch *batch;

  g_atomic_int_set (&loader->stop, 1);
  g_async_queue_push (loader->tokens, GINT_TO_POINTER (1));
  g_thread_join (thread);
  while ((batch = g_async_queue_try_pop (loader->batches)) != NULL)
    load_batch_free (batch);
}

gboolean
wick_document_load_file (WickDocument *self, const char *path, GCancellable *cancellable,
                         WickProgressFunc progress, gpointer user_data, GError **error)
{
  Loader loader = { NULL, self->extensions, NULL, NULL, 0 };
  GThread *thread;
  guint64 total = 0;
  gboolean ok = TRUE;
  gboolean end = FALSE;

  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (self->n_lines == 0 && !self->finished, FALSE);

  g_free (self->path);
  self->path = g_strdup (path);
  loader.input = wick_input_open (path, error);
  if (loader.input == NULL)
    return FALSE;
  total = wick_input_get_size (loader.input);
  if (wick_input_get_compression (loader.input) != WICK_COMPRESSION_NONE)
    total *= 8; /* a guess at the decoded size, for the string pool */
  /* a few distinct strings per kilobyte in realistic traces: sizing the table
   * up front saves most rehashing while it grows, without costing much
   * memory when the guess is high */
  wick_string_pool_reserve (self->pool, total / 256, total / 32);

  loader.batches = g_async_queue_new ();
  loader.tokens = g_async_queue_new ();
  for (int i = 0; i < IN_FLIGHT; i++)
    g_async_queue_push (loader.tokens, GINT_TO_POINTER (1));
  thread = g_thread_new ("wick-load", reader_thread, &loader);

  while (ok && !end)
    {
      LoadBatch *batch = g_async_queue_pop (loader.batches);
      wick_document_commit_batch_records (self, &batch->lines);
      self->n_lines = batch->lines.last_line;
      end = batch->end;
      if (batch->io_error != NULL
          && g_error_matches (batch->io_error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
        {
          /* a cut-off .gz/.zst is what a cut-off plain file is: the records
           * before the cut stay, the cut is the decode error of the line it
           * fell in (issue 27: nothing was shown) */
          self->n_lines = batch->lines.last_line + 1;
          ok = wick_document_set_decode_error (self, "read", batch->io_error->message, error);
        }
      else if (batch->io_error != NULL)
        {
          g_set_error (error, batch->io_error->domain, batch->io_error->code, "%s: %s", path,
                       batch->io_error->message);
          ok = FALSE;
        }
      else if (batch->lines.decode_verb != NULL)
        {
          self->n_lines = batch->lines.error_line;
          ok = wick_document_set_decode_error (self, batch->lines.decode_verb,
                                               batch->lines.decode_cause, error);
        }
      if (ok && progress != NULL && wick_input_get_size (loader.input) > 0)
        progress (MIN (1.0, (double)batch->bytes / (double)wick_input_get_size (loader.input)),
                  user_data);
      load_batch_free (batch);
      g_async_queue_push (loader.tokens, GINT_TO_POINTER (1));
      if (ok && !end && g_cancellable_set_error_if_cancelled (cancellable, error))
        ok = FALSE;
    }
  stop_reader (&loader, thread);
  g_async_queue_unref (loader.batches);
  g_async_queue_unref (loader.tokens);
  wick_input_free (loader.input);
  if (!ok)
    {
      self->finished = TRUE;
      return FALSE;
    }
  return wick_document_finish_quietly (self, error);
}

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
