/* wick-jsonl-import.c — wick_document_load_file(): a candle-graph JSONL file
 * into a document, read in a two-stage pipeline.
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
 * same first error. Cancellation and progress are checked per batch. The
 * reader beside it for trace-event JSON is wick-chrome-import.c; which of the
 * two reads a file is decided in wick-trace-format.c.
 */
#include "config.h"

#include "wick-document-private.h"
#include "wick-input.h"

#include <string.h>

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
  batch->lines.decode_code = WICK_DOCUMENT_ERROR_TOO_LARGE;
  batch->lines.decode_cause
    = g_strdup_printf ("line is longer than the maximum of %" G_GSIZE_FORMAT
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
      if (batch->io_error != NULL && batch->io_error->domain == WICK_DOCUMENT_ERROR)
        {
          /* a cut-off, corrupt or refused .gz/.zst is what a cut-off plain
           * file is: the records before the cut stay, the cut is the decode
           * error of the line it fell in, so that what was read is shown */
          self->n_lines = batch->lines.last_line + 1;
          ok = wick_document_set_decode_error (self, (WickDocumentError)batch->io_error->code,
                                               "read", batch->io_error->message, error);
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
          ok = wick_document_set_decode_error (self, batch->lines.decode_code,
                                               batch->lines.decode_verb, batch->lines.decode_cause,
                                               error);
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
