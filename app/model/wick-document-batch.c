/* wick-document-batch.c — lines decoded on one thread, committed on another.
 *
 * Shared by the file loader (wick-document-loader.c) and live sessions: a
 * WickLineBatch holds decoded records (their values; strings point into the
 * lines, unescaped ones into the batch's string chunk) and, when a line
 * failed, where and why. Committing a batch is what feeding its lines would
 * have done, in the same order, with the same line numbers and errors.
 */
#include "config.h"

#include "wick-document-private.h"
#include "wick-record.h"

#include <string.h>

struct _WickLineDecoder
{
  WickTraceDecoder *decoder;
  GString *cause;
  guint64 n_lines;
  gboolean failed;
};

void
wick_line_batch_init (WickLineBatch *batch, guint reserve)
{
  memset (batch, 0, sizeof *batch);
  batch->records = g_array_sized_new (FALSE, FALSE, sizeof (WickBatchRecord), reserve);
  batch->values = g_array_sized_new (FALSE, FALSE, sizeof (WickValue), reserve * 12);
  batch->strings = g_string_chunk_new (4096);
}

void
wick_line_batch_clear (WickLineBatch *batch)
{
  g_free (batch->buffer);
  if (batch->text != NULL)
    g_string_chunk_free (batch->text);
  g_array_unref (batch->records);
  g_array_unref (batch->values);
  g_string_chunk_free (batch->strings);
  if (batch->facts != NULL)
    g_array_unref (batch->facts);
  g_free (batch->decode_verb);
  g_free (batch->decode_cause);
}

gboolean
wick_line_batch_decode (WickLineBatch *batch, WickTraceDecoder *decoder, GString *cause,
                        guint64 line_number, const char *line, gsize length)
{
  WickBatchRecord record = { 0 };
  WickRecordKind kind;

  batch->last_line = line_number;
  if (length > 0 && line[length - 1] == '\r')
    length--;
  if (!wick_utf8_validate (line, length)) /* Rust's str::from_utf8 */
    {
      batch->decode_verb = g_strdup ("read");
      batch->decode_code = WICK_DOCUMENT_ERROR_INVALID;
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
      batch->decode_code = WICK_DOCUMENT_ERROR_INVALID;
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

/* The arrays a batch grew, on huge pages once big: a live document or a
 * load fills hundreds of MB, and each 4 KiB of it is a page fault otherwise
 * (10-15 % of a live session's CPU on a VM whose faults are dear). */
static void
advise_huge_pages (WickDocument *self)
{
  GArray *arrays[]
    = { self->spans,  self->ops,           self->tensors,          self->tensor_stats,
        self->memory, self->device_memory, self->device_intervals, self->gradients,
        self->edges,  self->u64_pool,      self->str_list };
  G_STATIC_ASSERT (G_N_ELEMENTS (arrays) <= G_N_ELEMENTS (self->huge_pages));
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    wick_huge_pages_advise_array (arrays[i], &self->huge_pages[i]);
}

void
wick_document_commit_batch_records (WickDocument *self, const WickLineBatch *batch)
{
  const WickBatchRecord *records = (const WickBatchRecord *)(gpointer)batch->records->data;
  const WickValue *values = (const WickValue *)(gpointer)batch->values->data;

  for (guint i = 0; i < batch->records->len; i++)
    {
      const WickBatchRecord *r = &records[i];
      self->n_lines = r->line;
      if (r->kind == WICK_KIND_EXTENSION)
        wick_document_commit_extension (self, r->text, r->len, r->ext_kind, r->ext_kind_len,
                                        r->ext_timestamp);
      else if (r->text == NULL)
        {
          /* added as values: through the door as they are */
          WickRecord record = {
            .kind = r->kind,
            .edge_kind = r->edge_kind,
            .line = r->line,
            .values = values + r->values,
            .facts
            = r->facts > 0 ? &g_array_index (batch->facts, WickRecordFacts, r->facts - 1) : NULL,
          };
          wick_document_commit (self, &record);
        }
      else
        {
          self->values_base = values + r->values;
          self->edge_kind = r->edge_kind;
          wick_document_commit_record (self, r->kind, r->text, r->len);
        }
    }
  self->n_lines = MAX (self->n_lines, batch->last_line);
  advise_huge_pages (self);
}

/* ---- the public side (live sessions) -------------------------------------- */

WickLineDecoder *
wick_line_decoder_new (gboolean extensions)
{
  WickLineDecoder *self = g_new0 (WickLineDecoder, 1);
  self->decoder = wick_trace_decoder_new (extensions);
  self->cause = g_string_new (NULL);
  return self;
}

void
wick_line_decoder_free (WickLineDecoder *self)
{
  if (self == NULL)
    return;
  wick_trace_decoder_free (self->decoder);
  g_string_free (self->cause, TRUE);
  g_free (self);
}

WickLineBatch *
wick_line_batch_new (void)
{
  WickLineBatch *batch = g_new (WickLineBatch, 1);
  /* small: a live worker makes one every few milliseconds, most of them with
   * a few lines (the arrays grow as needed) */
  wick_line_batch_init (batch, 64);
  batch->text = g_string_chunk_new (16 << 10);
  return batch;
}

void
wick_line_batch_free (WickLineBatch *batch)
{
  if (batch == NULL)
    return;
  wick_line_batch_clear (batch);
  g_free (batch);
}

void
wick_line_batch_reset (WickLineBatch *batch)
{
  g_return_if_fail (batch != NULL && batch->text != NULL);
  g_clear_pointer (&batch->buffer, g_free);
  g_string_chunk_clear (batch->text);
  g_array_set_size (batch->records, 0);
  g_array_set_size (batch->values, 0);
  g_string_chunk_clear (batch->strings);
  if (batch->facts != NULL)
    g_array_set_size (batch->facts, 0);
  batch->n_lines = 0;
  batch->last_line = 0;
  g_clear_pointer (&batch->decode_verb, g_free);
  g_clear_pointer (&batch->decode_cause, g_free);
  batch->decode_code = 0;
  batch->error_line = 0;
}

gboolean
wick_line_batch_add (WickLineBatch *batch, WickLineDecoder *decoder, const char *line,
                     gsize length)
{
  g_return_val_if_fail (batch->text != NULL, FALSE);
  if (decoder->failed)
    return FALSE;
  /* the chunk never moves what it holds: the records may point into it */
  const char *copy = g_string_chunk_insert_len (batch->text, line, (gssize)length);
  batch->n_lines++;
  if (!wick_line_batch_decode (batch, decoder->decoder, decoder->cause, ++decoder->n_lines, copy,
                               length))
    decoder->failed = TRUE;
  return !decoder->failed;
}

static const char *
keep_string (WickLineBatch *batch, const char *str, gsize len)
{
  return len == 0 ? "" : g_string_chunk_insert_len (batch->strings, str, (gssize)len);
}

gboolean
wick_line_batch_add_built (WickLineBatch *batch, WickLineDecoder *decoder,
                           WickRecordBuilder *builder)
{
  WickBatchRecord record = { 0 };
  g_autofree char *missing = NULL;
  WickValue *copy;
  guint n;

  if (decoder->failed)
    return FALSE;
  batch->n_lines++;
  batch->last_line = ++decoder->n_lines;
  if ((missing = wick_record_builder_missing (builder)) != NULL)
    {
      /* a producer's bug, failed as a bad line would be */
      batch->decode_verb = g_strdup ("commit");
      batch->decode_code = WICK_DOCUMENT_ERROR_INVALID;
      batch->decode_cause = g_steal_pointer (&missing);
      batch->error_line = decoder->n_lines;
      decoder->failed = TRUE;
      return FALSE;
    }
  record.kind = (guint8)builder->kind;
  record.edge_kind = builder->edge_kind;
  record.line = decoder->n_lines;
  record.values = batch->values->len;
  n = builder->values->len;
  g_array_append_vals (batch->values, builder->values->data, n);
  /* the strings live in the producer's memory only during the call */
  copy = &g_array_index (batch->values, WickValue, record.values);
  for (guint i = 0; i < n; i++)
    if (copy[i].is_str && copy[i].set)
      copy[i].str = keep_string (batch, copy[i].str, copy[i].len);
  if (builder->facts.present != 0)
    {
      WickRecordFacts facts = builder->facts;
      if (batch->facts == NULL)
        batch->facts = g_array_new (FALSE, FALSE, sizeof (WickRecordFacts));
      if (facts.present & WICK_FACT_THREAD_NAME)
        facts.thread_name = keep_string (batch, facts.thread_name, facts.thread_name_len);
      if (facts.present & WICK_FACT_RECORDS)
        facts.records_json = keep_string (batch, facts.records_json, facts.records_json_len);
      g_array_append_val (batch->facts, facts);
      record.facts = batch->facts->len;
    }
  g_array_append_val (batch->records, record);
  return TRUE;
}

guint
wick_line_batch_get_n_lines (const WickLineBatch *batch)
{
  return batch->n_lines;
}

gboolean
wick_document_commit_batch (WickDocument *self, WickLineBatch *batch, GError **error)
{
  g_return_val_if_fail (WICK_IS_DOCUMENT (self), FALSE);
  if (self->decode_failed || self->finished)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the document no longer accepts lines");
      return FALSE;
    }
  wick_document_commit_batch_records (self, batch);
  if (batch->decode_verb != NULL)
    {
      self->n_lines = batch->error_line;
      return wick_document_set_decode_error (self, batch->decode_code, batch->decode_verb,
                                             batch->decode_cause, error);
    }
  return TRUE;
}
