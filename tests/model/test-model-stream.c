/* test-model-stream.c — the stream rules of spec §4 and the schema versions of
 * §5, each with candle-graph's exact message and record index. */
#include "config.h"

#include "model-test-util.h"
#include "wick-document-private.h"

#define STATS(fields) "{\"kind\":\"tensor_stats\",\"span_id\":\"s1\"," fields "}"
#define STATS_OK(label, shape, elements, non_finite, rms, abs_max, mean)                           \
  STATS ("\"label\":\"" label "\",\"shape\":" shape ",\"dtype\":\"f32\",\"elements\":" elements    \
         ",\"non_finite\":" non_finite ",\"rms\":" rms ",\"abs_max\":" abs_max ",\"mean\":" mean)

static void
assert_stream_error (WickDocument *doc, const char *message, gint64 index)
{
  const WickParseError *pe = wick_document_get_parse_error (doc);

  g_assert_true (pe->failed);
  g_assert_cmpstr (pe->message, ==, message);
  g_assert_null (pe->cause);
  g_assert_cmpint (pe->record_index, ==, index);
  g_assert_cmpuint (pe->line, ==, 0);
}

static void
test_stream_valid (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);

  g_assert_false (wick_document_get_parse_error (doc)->failed);
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_true (wick_document_get_capture_complete (doc));
}

static void
test_stream_after_terminal (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL,
                                              "{\"kind\":\"span_end\",\"id\":\"nope\"}", NULL);
  g_autoptr (WickDocument) twice
    = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL, TERMINAL, NULL);

  /* the terminal rule comes before the span_end rule for the same record */
  assert_stream_error (
    doc, "terminal event must be the final trace record; found another event at index 4", 4);
  assert_stream_error (
    twice, "terminal event must be the final trace record; found another event at index 4", 4);
  /* everything decoded stays */
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 5);
}

static void
test_stream_meta_not_first (void)
{
  g_autoptr (WickDocument) doc = parse_lines (ROOT_START, META_INFER, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) twice
    = parse_lines (META_INFER, META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) blank_first
    = parse_lines ("", "   ", META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);

  assert_stream_error (doc, "meta event must be the first non-empty trace record, found at index 1",
                       1);
  assert_stream_error (twice,
                       "meta event must be the first non-empty trace record, found at index 1", 1);
  g_assert_false (wick_document_get_parse_error (blank_first)->failed);
}

static void
test_stream_duplicate_span_start (void)
{
  g_autoptr (WickDocument) doc
    = parse_lines (META_INFER, ROOT_START, ROOT_START, ROOT_END, TERMINAL, NULL);

  assert_stream_error (doc, "duplicate span_start id `s1` at index 2", 2);
}

static void
test_stream_span_end (void)
{
  g_autoptr (WickDocument) unknown = parse_lines (
    META_INFER, ROOT_START, "{\"kind\":\"span_end\",\"id\":\"s2\"}", ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) early = parse_lines (META_INFER, ROOT_END, ROOT_START, TERMINAL, NULL);
  g_autoptr (WickDocument) twice
    = parse_lines (META_INFER, ROOT_START, ROOT_END, ROOT_END, TERMINAL, NULL);

  assert_stream_error (unknown, "span_end for unknown span `s2` at index 2", 2);
  assert_stream_error (early, "span_end for unknown span `s1` at index 1", 1);
  assert_stream_error (twice, "duplicate span_end for `s1` at index 3", 3);
}

static void
test_stream_tensor_stats (void)
{
  static const struct
  {
    const char *line;
    gboolean valid;
  } cases[] = {
    { STATS_OK ("x", "[2,3]", "6", "0", "1.5", "2.0", "-0.5"), TRUE },
    { STATS_OK ("x", "[]", "1", "1", "0.0", "0.0", "0.0"), TRUE },
    { STATS_OK ("x", "[0]", "0", "0", "0.0", "0.0", "0.0"), TRUE },
    { STATS_OK ("x", "[2]", "2", "0", "-0.0", "-0.0", "-0.0"), TRUE },
    { STATS_OK (" \\t", "[2]", "2", "0", "1", "1", "1"), FALSE },
    { STATS_OK ("x", "[2,3]", "5", "0", "1", "1", "1"), FALSE },
    { STATS_OK ("x", "[4294967296,4294967296]", "0", "0", "1", "1", "1"), FALSE },
    { STATS_OK ("x", "[2]", "2", "3", "1", "1", "1"), FALSE },
    { STATS_OK ("x", "[2]", "2", "0", "-1", "1", "1"), FALSE },
    { STATS_OK ("x", "[2]", "2", "0", "1", "-0.5", "1"), FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (WickDocument) doc
        = parse_lines (META_INFER, ROOT_START, cases[i].line, ROOT_END, TERMINAL, NULL);
      g_test_message ("case %zu", i);
      if (cases[i].valid)
        g_assert_false (wick_document_get_parse_error (doc)->failed);
      else
        assert_stream_error (doc, "invalid tensor_stats event at index 2", 2);
    }
}

static void
test_stream_missing_meta (void)
{
  g_autoptr (WickDocument) empty = parse_lines (NULL, NULL);
  g_autoptr (WickDocument) blank = parse_lines ("", " ", NULL);
  g_autoptr (WickDocument) no_meta = parse_lines (ROOT_START, ROOT_END, TERMINAL, NULL);

  assert_stream_error (empty, "trace stream is missing a meta event with run metadata", -1);
  assert_stream_error (blank, "trace stream is missing a meta event with run metadata", -1);
  assert_stream_error (no_meta, "trace stream is missing a meta event with run metadata", -1);
}

static void
test_stream_missing_terminal (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, ROOT_END, NULL);

  assert_stream_error (doc, "trace stream is missing its terminal event", -1);
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 3);
}

static void
test_stream_schema (void)
{
  g_autofree char *v8 = meta_with ("trace/10", "trace/8");
  g_autofree char *other = meta_with ("candle-graph/trace/10", "not-candle-graph");
  g_autofree char *upper = meta_with ("candle-graph/trace/10", "Candle-Graph/trace/10");
  g_autofree char *v9 = meta_with ("trace/10", "trace/9");
  g_autoptr (WickDocument) d8 = parse_lines (v8, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) dother = parse_lines (other, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) dupper = parse_lines (upper, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) d9 = parse_lines (v9, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) d9_stats = parse_lines (
    v9, ROOT_START, STATS_OK ("x", "[1]", "1", "0", "1", "1", "1"), ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) d8_no_terminal = parse_lines (v8, ROOT_START, NULL);

  assert_stream_error (d8,
                       "unsupported trace schema \"candle-graph/trace/8\"; expected "
                       "\"candle-graph/trace/10\" or \"candle-graph/trace/9\"",
                       -1);
  assert_stream_error (dother,
                       "unsupported trace schema \"not-candle-graph\"; expected "
                       "\"candle-graph/trace/10\" or \"candle-graph/trace/9\"",
                       -1);
  assert_stream_error (dupper,
                       "unsupported trace schema \"Candle-Graph/trace/10\"; expected "
                       "\"candle-graph/trace/10\" or \"candle-graph/trace/9\"",
                       -1);
  g_assert_false (wick_document_get_parse_error (d9)->failed);
  assert_stream_error (d9_stats,
                       "trace schema \"candle-graph/trace/9\" does not define "
                       "tensor_stats events; producers emitting tensor statistics must "
                       "declare \"candle-graph/trace/10\"",
                       -1);
  /* the presence checks come before the schema check */
  assert_stream_error (d8_no_terminal, "trace stream is missing its terminal event", -1);
}

static void
test_stream_terminal_reason (void)
{
  g_autoptr (WickDocument) complete_reason = parse_lines (
    META_INFER, ROOT_START, ROOT_END,
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100,\"reason\":\"\"}", NULL);
  g_autoptr (WickDocument) complete_null = parse_lines (
    META_INFER, ROOT_START, ROOT_END,
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":100,\"reason\":null}", NULL);
  g_autoptr (WickDocument) failed_blank = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":100,\"reason\":\" \\n\"}",
    NULL);
  g_autoptr (WickDocument) failed_absent
    = parse_lines (META_INFER, ROOT_START,
                   "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":100}", NULL);
  g_autoptr (WickDocument) failed_ok = parse_lines (META_INFER, ROOT_START, TERMINAL_FAILED, NULL);

  assert_stream_error (complete_reason, "complete terminal event cannot contain a failure reason",
                       -1);
  g_assert_false (wick_document_get_parse_error (complete_null)->failed);
  assert_stream_error (failed_blank, "failed terminal event requires a non-empty reason", -1);
  assert_stream_error (failed_absent, "failed terminal event requires a non-empty reason", -1);
  g_assert_false (wick_document_get_parse_error (failed_ok)->failed);
  g_assert_false (wick_document_get_capture_complete (failed_ok));
}

static void
test_stream_terminal_precedes_evidence (void)
{
  static const struct
  {
    const char *record;
    const char *message;
  } cases[] = {
    { "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":150}",
      "terminal timestamp 100 precedes host evidence ending at 150" },
    { "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"x\",\"shape\":[],\"dtype\":\"f32\","
      "\"device\":\"cpu\",\"duration_ns\":30,\"timestamp_ns\":90,\"input_dense_bytes\":0}",
      "terminal timestamp 100 precedes host evidence ending at 120" },
    { "{\"kind\":\"memory\",\"timestamp_ns\":101,\"storage_id\":\"a\",\"tensor_id\":\"t\","
      "\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":4,\"action\":\"alloc\",\"dtype\":\"f32\"}",
      "terminal timestamp 100 precedes host evidence ending at 101" },
    { "{\"kind\":\"device_memory\",\"timestamp_ns\":18446744073709551615,\"device\":\"cpu\"}",
      "terminal timestamp 100 precedes host evidence ending at 18446744073709551615" },
    { "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"late\","
      "\"start_ns\":18446744073709551615,\"span_kind\":\"op\"}",
      "terminal timestamp 100 precedes host evidence ending at 18446744073709551615" },
    /* device time, tensors, gradients do not count */
    { "{\"kind\":\"device_interval\",\"span_id\":\"s1\",\"device\":\"cuda:0\",\"stream_id\":\"7\","
      "\"clock_id\":\"c\",\"backend\":\"cuda\",\"start_ns\":999999,\"duration_ns\":5}",
      NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (WickDocument) doc
        = parse_lines (META_INFER, ROOT_START, cases[i].record, i == 0 ? NULL : ROOT_END,
                       i == 0 ? NULL : TERMINAL, NULL);
      g_autoptr (WickDocument) first_case = NULL;
      if (i == 0)
        {
          first_case = parse_lines (META_INFER, ROOT_START, cases[0].record, TERMINAL, NULL);
          assert_stream_error (first_case, cases[0].message, -1);
          continue;
        }
      g_test_message ("case %zu", i);
      if (cases[i].message == NULL)
        g_assert_false (wick_document_get_parse_error (doc)->failed);
      else
        assert_stream_error (doc, cases[i].message, -1);
    }
}

static void
test_stream_decode_error_wins (void)
{
  /* the stream rules run after every line decoded: a later decode error is
   * the error, with its line */
  g_autoptr (WickDocument) doc = parse_lines (ROOT_START, META_INFER, "", "{\"kind\":1.5}", NULL);

  g_assert_cmpstr (parse_message (doc), ==, "parse trace JSONL line 4 from <stream>");
  g_assert_cmpstr (parse_cause (doc), ==,
                   "invalid type: floating point `1.5`, expected variant identifier");
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 2);
}

static void
test_stream_parent_order_free (void)
{
  /* parent_id may name a later span; kinds interleave freely */
  g_autoptr (WickDocument) doc
    = parse_lines (META_INFER,
                   "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"c\","
                   "\"start_ns\":5,\"span_kind\":\"op\"}",
                   ROOT_START, "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":5}", ROOT_END,
                   TERMINAL, NULL);

  g_assert_false (wick_document_get_parse_error (doc)->failed);
  g_assert_true (wick_document_get_structurally_valid (doc));
}

/* Lines decoded into batches on a worker thread, committed here. */
typedef struct
{
  const char *const *lines;
  guint n_lines;
  guint per_batch;
  GAsyncQueue *out;
  /* batches committed, emptied (wick_line_batch_reset) and given back; NULL:
   * a new batch each time. With it one batch goes round at a time, so every
   * batch after the first is a reused one. */
  GAsyncQueue *back;
} BatchJob;

static WickLineBatch *
next_batch (BatchJob *job, gboolean first)
{
  return job->back != NULL && !first ? g_async_queue_pop (job->back) : wick_line_batch_new ();
}

static gpointer
decode_batches (gpointer data)
{
  BatchJob *job = data;
  g_autoptr (WickLineDecoder) decoder = wick_line_decoder_new (TRUE);
  WickLineBatch *batch = next_batch (job, TRUE);
  for (guint i = 0; i < job->n_lines; i++)
    {
      char *copy = g_strdup (job->lines[i]);
      gboolean ok = wick_line_batch_add (batch, decoder, copy, strlen (copy));
      /* the batch keeps its own copy: the line is gone before the commit */
      memset (copy, 'x', strlen (copy));
      g_free (copy);
      if (!ok || wick_line_batch_get_n_lines (batch) == job->per_batch)
        {
          g_async_queue_push (job->out, batch);
          batch = next_batch (job, FALSE);
        }
      if (!ok)
        {
          /* a failed decoder takes nothing more */
          g_assert_false (wick_line_batch_add (batch, decoder, "{}", 2));
          break;
        }
    }
  g_async_queue_push (job->out, batch);
  g_async_queue_push (job->out, GINT_TO_POINTER (1)); /* the end */
  return NULL;
}

static WickDocument *
parse_in_batches_with (const char *const *lines, guint n_lines, guint per_batch, gboolean recycle,
                       GError **error)
{
  BatchJob job = { lines, n_lines, per_batch, g_async_queue_new (),
                   recycle ? g_async_queue_new_full ((GDestroyNotify)wick_line_batch_free) : NULL };
  GThread *thread = g_thread_new ("decode", decode_batches, &job);
  WickDocument *doc = wick_document_new_with_extensions (TRUE);
  gboolean ok = TRUE;
  for (;;)
    {
      gpointer item = g_async_queue_pop (job.out);
      if (item == GINT_TO_POINTER (1))
        break;
      g_autoptr (WickLineBatch) batch = item;
      if (ok)
        ok = wick_document_commit_batch (doc, batch, error);
      if (job.back != NULL)
        {
          wick_line_batch_reset (batch);
          g_async_queue_push (job.back, g_steal_pointer (&batch));
        }
    }
  g_thread_join (thread);
  g_async_queue_unref (job.out);
  g_clear_pointer (&job.back, g_async_queue_unref);
  if (ok)
    wick_document_finish (doc, error);
  return doc;
}

static WickDocument *
parse_fed (const char *const *lines, guint n_lines)
{
  WickDocument *doc = wick_document_new_with_extensions (TRUE);
  for (guint i = 0; i < n_lines; i++)
    if (!wick_document_feed_line (doc, lines[i], strlen (lines[i]), NULL))
      return doc;
  wick_document_finish (doc, NULL);
  return doc;
}

static void
assert_same_document (WickDocument *a, WickDocument *b)
{
  guint na, nb;
  g_assert_cmpuint (wick_document_get_n_lines (a), ==, wick_document_get_n_lines (b));
  g_assert_cmpuint (wick_document_get_n_records (a), ==, wick_document_get_n_records (b));
  const WickSpan *sa = wick_document_get_spans (a, &na);
  const WickSpan *sb = wick_document_get_spans (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpstr (wick_document_str (a, sa[i].name), ==, wick_document_str (b, sb[i].name));
      g_assert_cmpuint (sa[i].start_ns, ==, sb[i].start_ns);
    }
  wick_document_get_extensions (a, &na);
  wick_document_get_extensions (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  g_assert_cmpuint (wick_document_get_first_extension_line (a), ==,
                    wick_document_get_first_extension_line (b));
  const WickParseError *pa = wick_document_get_parse_error (a);
  const WickParseError *pb = wick_document_get_parse_error (b);
  g_assert_cmpint (pa->failed, ==, pb->failed);
  g_assert_cmpstr (pa->message, ==, pb->message);
  g_assert_cmpstr (pa->cause, ==, pb->cause);
  g_assert_cmpuint (pa->line, ==, pb->line);
  g_assert_cmpint (wick_document_get_structurally_valid (a), ==,
                   wick_document_get_structurally_valid (b));
  wick_document_get_health (a, &na);
  wick_document_get_health (b, &nb);
  g_assert_cmpuint (na, ==, nb);
}

static void
test_stream_batches (void)
{
  /* escaped names are unescaped into the batch, not the decoder's scratch */
  const char *const lines[] = {
    META_INFER,
    ROOT_START,
    "",
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"caf\\u00e9 \\\"x\\\"\","
    "\"start_ns\":5,\"span_kind\":\"op\"}\r",
    "{\"kind\":\"wick_weights\",\"timestamp_ns\":7,\"module\":\"m\"}",
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":5}",
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"tab\\there\","
    "\"start_ns\":11,\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":2}",
    ROOT_END,
    TERMINAL,
  };
  g_autoptr (WickDocument) fed = parse_fed (lines, G_N_ELEMENTS (lines));
  g_assert_false (wick_document_get_parse_error (fed)->failed);
  for (guint i = 0; i < 2 * G_N_ELEMENTS (lines); i++)
    {
      /* each batch size with new batches, then with batches reused */
      guint per = i % G_N_ELEMENTS (lines) + 1;
      g_autoptr (GError) error = NULL;
      g_autoptr (WickDocument) doc = parse_in_batches_with (lines, G_N_ELEMENTS (lines), per,
                                                            i >= G_N_ELEMENTS (lines), &error);
      g_assert_no_error (error);
      assert_same_document (doc, fed);
      guint n;
      const WickSpan *spans = wick_document_get_spans (doc, &n);
      g_assert_cmpstr (wick_document_str (doc, spans[1].name), ==, "caf\xc3\xa9 \"x\"");
      g_assert_cmpstr (wick_document_str (doc, spans[2].name), ==, "tab\there");
    }
}

static void
test_stream_batch_error (void)
{
  /* a bad line in any batch: the same line, message and cause as feeding */
  const char *const lines[] = {
    META_INFER, ROOT_START, "", "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":\"x\"}",
    ROOT_END,   TERMINAL,
  };
  g_autoptr (WickDocument) fed = parse_fed (lines, G_N_ELEMENTS (lines));
  g_assert_true (wick_document_get_parse_error (fed)->failed);
  g_assert_cmpuint (wick_document_get_parse_error (fed)->line, ==, 4);
  for (guint i = 0; i < 2 * G_N_ELEMENTS (lines); i++)
    {
      /* each batch size with new batches, then with batches reused */
      guint per = i % G_N_ELEMENTS (lines) + 1;
      g_autoptr (GError) error = NULL;
      g_autoptr (WickDocument) doc = parse_in_batches_with (lines, G_N_ELEMENTS (lines), per,
                                                            i >= G_N_ELEMENTS (lines), &error);
      g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
      assert_same_document (doc, fed);
    }
  const char *const bad_utf8[] = { META_INFER, "{\"kind\":\"span_start\",\"id\":\"\xff\"}" };
  g_autoptr (WickDocument) fed2 = parse_fed (bad_utf8, 2);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = parse_in_batches_with (bad_utf8, 2, 1, TRUE, &error);
  g_assert_nonnull (error);
  assert_same_document (doc, fed2);
  g_assert_cmpstr (wick_document_get_parse_error (doc)->cause, ==,
                   "stream did not contain valid UTF-8");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/stream/valid", test_stream_valid);
  g_test_add_func ("/model/stream/after-terminal", test_stream_after_terminal);
  g_test_add_func ("/model/stream/meta-not-first", test_stream_meta_not_first);
  g_test_add_func ("/model/stream/duplicate-span-start", test_stream_duplicate_span_start);
  g_test_add_func ("/model/stream/span-end", test_stream_span_end);
  g_test_add_func ("/model/stream/tensor-stats", test_stream_tensor_stats);
  g_test_add_func ("/model/stream/missing-meta", test_stream_missing_meta);
  g_test_add_func ("/model/stream/missing-terminal", test_stream_missing_terminal);
  g_test_add_func ("/model/stream/schema", test_stream_schema);
  g_test_add_func ("/model/stream/terminal-reason", test_stream_terminal_reason);
  g_test_add_func ("/model/stream/terminal-precedes-evidence",
                   test_stream_terminal_precedes_evidence);
  g_test_add_func ("/model/stream/decode-error-wins", test_stream_decode_error_wins);
  g_test_add_func ("/model/stream/parent-order-free", test_stream_parent_order_free);
  g_test_add_func ("/model/stream/batches", test_stream_batches);
  g_test_add_func ("/model/stream/batch-error", test_stream_batch_error);
  return g_test_run ();
}
