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
 */
#include "config.h"

#include "wick-document-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (4 << 20)
#define IN_FLIGHT 3

typedef struct
{
  guint8 kind; /* WickRecordKind */
  guint8 edge_kind;
  guint64 line;     /* 1-based physical line */
  const char *text; /* the trimmed line, in the batch's buffer */
  gsize len;
  guint32 values;       /* index of its first value in the batch's values */
  const char *ext_kind; /* extension records */
  gsize ext_kind_len;
  guint64 ext_timestamp;
} LoadedRecord;

typedef struct
{
  char *buffer;
  GArray *records; /* LoadedRecord */
  GArray *values;  /* WickValue */
  GStringChunk *strings;
  guint64 last_line; /* physical lines read through this batch */
  guint64 bytes;     /* file bytes consumed through this batch */
  gboolean end;      /* no batch follows */
  char *decode_verb; /* "parse"/"read" on a decode error */
  char *decode_cause;
  guint64 error_line;
  GError *io_error;
} LoadBatch;

typedef struct
{
  int fd;
  gboolean extensions;
  GAsyncQueue *batches; /* reader -> committer */
  GAsyncQueue *tokens;  /* committer -> reader: permission to make a batch */
  gint stop;
} Loader;

static void
load_batch_free (LoadBatch *batch)
{
  g_free (batch->buffer);
  g_array_unref (batch->records);
  g_array_unref (batch->values);
  g_string_chunk_free (batch->strings);
  g_free (batch->decode_verb);
  g_free (batch->decode_cause);
  g_clear_error (&batch->io_error);
  g_free (batch);
}

static LoadBatch *
load_batch_new (void)
{
  LoadBatch *batch = g_new0 (LoadBatch, 1);

  batch->records = g_array_sized_new (FALSE, FALSE, sizeof (LoadedRecord), 32768);
  batch->values = g_array_sized_new (FALSE, FALSE, sizeof (WickValue), 32768 * 12);
  batch->strings = g_string_chunk_new (4096);
  return batch;
}

/* Decodes one physical line into @batch; FALSE when reading must stop. */
static gboolean
decode_line (WickTraceDecoder *decoder, GString *cause, LoadBatch *batch, guint64 line_number,
             const char *line, gsize length)
{
  LoadedRecord record = { 0 };
  WickRecordKind kind;

  if (length > 0 && line[length - 1] == '\r')
    length--;
  if (!wick_utf8_valid (line, length))
    {
      batch->decode_verb = g_strdup ("read");
      batch->decode_cause = g_strdup ("stream did not contain valid UTF-8");
      batch->error_line = line_number;
      return FALSE;
    }
  wick_rust_trim (&line, &length);
  if (length == 0)
    return TRUE;
  if (!wick_trace_decoder_decode (decoder, line, length, &kind, cause))
    {
      batch->decode_verb = g_strdup ("parse");
      batch->decode_cause = g_strdup (cause->str);
      batch->error_line = line_number;
      return FALSE;
    }
  record.kind = (guint8)kind;
  record.line = line_number;
  record.text = line;
  record.len = length;
  if (kind == WICK_KIND_EXTENSION)
    {
      gsize ext_len;
      const char *ext = wick_trace_decoder_extension_kind (decoder, &ext_len);
      record.ext_kind = g_string_chunk_insert_len (batch->strings, ext, (gssize)ext_len);
      record.ext_kind_len = ext_len;
      record.ext_timestamp = wick_trace_decoder_extension_timestamp (decoder);
    }
  else
    {
      record.edge_kind = (guint8)wick_trace_decoder_edge_kind (decoder);
      record.values = wick_trace_decoder_export (decoder, batch->values, batch->strings);
    }
  g_array_append_val (batch->records, record);
  return TRUE;
}

/* Reads up to CHUNK bytes after @carry into a new buffer. */
static gssize
read_chunk (int fd, char **buffer, const char *carry, gsize carry_len, GError **error)
{
  gsize filled = carry_len;

  *buffer = g_malloc (carry_len + CHUNK);
  if (carry_len > 0)
    memcpy (*buffer, carry, carry_len);
  while (filled < carry_len + CHUNK)
    {
      gssize n = read (fd, *buffer + filled, carry_len + CHUNK - filled);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "read: %s",
                       g_strerror (saved));
          return -1;
        }
      if (n == 0)
        break;
      filled += (gsize)n;
    }
  return (gssize)filled;
}

static gpointer
reader_thread (gpointer data)
{
  Loader *loader = data;
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (loader->extensions);
  g_autoptr (GString) cause = g_string_new (NULL);
  g_autofree char *carry = NULL;
  gsize carry_len = 0;
  guint64 line_number = 0, bytes = 0;
  gboolean done = FALSE;

  while (!done)
    {
      LoadBatch *batch;
      gssize filled;
      const char *p, *end, *nl;
      gboolean at_eof;

      g_async_queue_pop (loader->tokens);
      if (g_atomic_int_get (&loader->stop))
        break;
      batch = load_batch_new ();
      filled = read_chunk (loader->fd, &batch->buffer, carry, carry_len, &batch->io_error);
      if (filled < 0)
        {
          batch->end = done = TRUE;
          g_async_queue_push (loader->batches, batch);
          break;
        }
      at_eof = (gsize)filled < carry_len + CHUNK;
      p = batch->buffer;
      end = batch->buffer + filled;
      while (!done && (nl = memchr (p, '\n', (gsize)(end - p))) != NULL)
        {
          done = !decode_line (decoder, cause, batch, ++line_number, p, (gsize)(nl - p));
          bytes += (gsize)(nl + 1 - p);
          p = nl + 1;
        }
      if (!done && at_eof && p < end)
        {
          done = !decode_line (decoder, cause, batch, ++line_number, p, (gsize)(end - p));
          bytes += (gsize)(end - p);
          p = end;
        }
      g_free (carry);
      carry_len = done ? 0 : (gsize)(end - p);
      carry = g_memdup2 (p, carry_len);
      done |= at_eof;
      batch->last_line = line_number;
      batch->bytes = bytes;
      batch->end = done;
      g_async_queue_push (loader->batches, batch);
    }
  return NULL;
}

static void
commit_batch (WickDocument *self, LoadBatch *batch)
{
  const LoadedRecord *records = (const LoadedRecord *)(gpointer)batch->records->data;
  const WickValue *values = (const WickValue *)(gpointer)batch->values->data;

  for (guint i = 0; i < batch->records->len; i++)
    {
      const LoadedRecord *r = &records[i];
      self->n_lines = r->line;
      if (r->kind == WICK_KIND_EXTENSION)
        wick_document_commit_extension (self, r->text, r->len, r->ext_kind, r->ext_kind_len,
                                        r->ext_timestamp);
      else
        {
          self->values_base = values + r->values;
          self->edge_kind = r->edge_kind;
          wick_document_commit_record (self, r->kind, r->text, r->len);
        }
    }
  self->n_lines = batch->last_line;
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
  Loader loader = { -1, self->extensions, NULL, NULL, 0 };
  GThread *thread;
  struct stat st;
  guint64 total = 0;
  gboolean ok = TRUE;
  gboolean end = FALSE;

  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (self->n_lines == 0 && !self->finished, FALSE);

  g_free (self->path);
  self->path = g_strdup (path);
  loader.fd = open (path, O_RDONLY | O_CLOEXEC);
  if (loader.fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "open %s: %s", path,
                   g_strerror (saved));
      return FALSE;
    }
  if (fstat (loader.fd, &st) == 0)
    total = (guint64)st.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
  posix_fadvise (loader.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
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
      commit_batch (self, batch);
      end = batch->end;
      if (batch->io_error != NULL)
        {
          g_set_error (error, batch->io_error->domain, batch->io_error->code, "%s: %s", path,
                       batch->io_error->message);
          ok = FALSE;
        }
      else if (batch->decode_verb != NULL)
        {
          self->n_lines = batch->error_line;
          ok
            = wick_document_set_decode_error (self, batch->decode_verb, batch->decode_cause, error);
        }
      if (ok && progress != NULL && total > 0)
        progress (MIN (1.0, (double)batch->bytes / (double)total), user_data);
      load_batch_free (batch);
      g_async_queue_push (loader.tokens, GINT_TO_POINTER (1));
      if (ok && !end && g_cancellable_set_error_if_cancelled (cancellable, error))
        ok = FALSE;
    }
  stop_reader (&loader, thread);
  g_async_queue_unref (loader.batches);
  g_async_queue_unref (loader.tokens);
  close (loader.fd);
  if (!ok)
    {
      self->finished = TRUE;
      return FALSE;
    }
  return wick_document_finish_quietly (self, error);
}
