/* test-model-document.c — reading files: partial documents after errors,
 * extension mode, live feeding and analysis, progress and cancellation. */
#include "config.h"

#include <glib/gstdio.h>

#include "model-test-util.h"
#include "wick-tracks.h"
#include "wick-document-private.h"

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");

  return g_build_filename (dir ? dir : "tests/data", "model", name, NULL);
}

static WickDocument *
load (const char *name, gboolean extensions, GError **error)
{
  g_autofree char *path = data_path (name);
  WickDocument *doc = wick_document_new_with_extensions (extensions);

  wick_document_load_file (doc, path, NULL, NULL, NULL, error);
  return doc;
}

static void
test_document_valid_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("valid-infer.jsonl", FALSE, &error);
  guint n;
  const WickOp *ops = wick_document_get_ops (doc, &n);
  const WickSpan *spans;
  const WickStr *inputs;

  g_assert_no_error (error);
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpstr (wick_document_get_schema (doc), ==, "candle-graph/trace/10");
  g_assert_cmpstr (wick_document_get_entrypoint (doc), ==, "demo");
  g_assert_cmpint (wick_document_get_phase (doc), ==, WICK_PHASE_INFER);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (wick_document_str (doc, ops[0].op_name), ==, "matmul");
  g_assert_cmpuint (ops[0].rank, ==, 2);
  g_assert_cmpuint (wick_document_get_shape (doc, ops[0].shape_offset)[1], ==, 3);
  /* output_dense_bytes is absent: derived as 2*3*4 */
  g_assert_false (ops[0].has_output_dense_bytes);
  g_assert_cmpuint (ops[0].output_dense_bytes, ==, 24);
  inputs = wick_document_get_op_inputs (doc, &ops[0]);
  g_assert_cmpuint (ops[0].n_inputs, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, inputs[1]), ==, "t1");
  spans = wick_document_get_spans (doc, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (spans[1].parent, ==, 0);
  g_assert_cmpuint (spans[1].depth, ==, 1);
  g_assert_cmpint (ops[0].span, ==, 1);
  g_assert_cmpint (wick_document_find_span (doc, "s2"), ==, 1);
  g_assert_cmpuint (wick_document_get_end_ns (doc), ==, 100);
  g_assert_cmpuint (wick_document_get_record_count (doc, WICK_RECORD_MEMORY), ==, 2);
  g_assert_cmpuint (wick_document_get_record_count (doc, WICK_RECORD_SPAN), ==, 2);
}

static void
test_document_truncated_crash (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("truncated.jsonl", FALSE, &error);
  g_autofree char *path = data_path ("truncated.jsonl");
  g_autofree char *message = g_strdup_printf ("parse trace JSONL line 6 from %s", path);
  guint n;

  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  g_assert_cmpstr (parse_message (doc), ==, message);
  g_assert_cmpstr (parse_cause (doc), ==, "EOF while parsing a string");
  g_assert_cmpuint (wick_document_get_parse_error (doc)->line, ==, 6);
  /* the five records before the cut line are kept */
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 5);
  wick_document_get_ops (doc, &n);
  g_assert_cmpuint (n, ==, 1);
  wick_document_get_spans (doc, &n);
  g_assert_cmpuint (n, ==, 2);
  /* analysing what is there works */
  wick_document_analyze (doc);
  g_assert_null (find_issue (doc, "root_count"));
  g_assert_true (wick_document_get_structurally_valid (doc));
}

static void
test_document_crlf_and_blank_lines (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("crlf-blank.jsonl", FALSE, &error);

  g_assert_no_error (error);
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpuint (wick_document_get_n_lines (doc), ==, 16);
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 14);
}

static void
test_document_invalid_utf8_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("invalid-utf8.jsonl", FALSE, &error);
  g_autofree char *path = data_path ("invalid-utf8.jsonl");
  g_autofree char *message = g_strdup_printf ("read trace JSONL line 4 from %s", path);

  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  g_assert_cmpstr (parse_message (doc), ==, message);
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 3);
}

static void
test_document_missing_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("no-such-file.jsonl", FALSE, &error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_false (wick_document_get_parse_error (doc)->failed);
}

static void
test_document_extensions_rejected_by_default (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("with-extensions.jsonl", FALSE, &error);

  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
  g_assert_true (
    g_str_has_prefix (parse_cause (doc), "unknown variant `wick_mark`, expected one of"));
  g_assert_cmpuint (wick_document_get_parse_error (doc)->line, ==, 4);
  g_assert_cmpuint (wick_document_get_first_extension_line (doc), ==, 0);
}

static void
test_document_extension_mode (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) doc = load ("with-extensions.jsonl", TRUE, &error);
  guint n;
  const WickExtensionRecord *records = wick_document_get_extensions (doc, &n);

  g_assert_no_error (error);
  g_assert_true (wick_document_get_extensions_enabled (doc));
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpuint (wick_document_get_first_extension_line (doc), ==, 4);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, records[0].kind), ==, "wick_mark");
  g_assert_cmpuint (records[0].timestamp_ns, ==, 11);
  g_assert_cmpuint (records[0].line, ==, 4);
  g_assert_cmpstr (wick_document_str (doc, records[1].kind), ==, "wick_drops");
  g_assert_cmpuint (records[1].line, ==, 9);
  g_assert_true (
    g_str_has_prefix (wick_document_str (doc, records[1].json), "{\"kind\":\"wick_drops\""));
  /* extension lines are not candle-graph records */
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 14);
  g_assert_cmpuint (wick_document_get_record_count (doc, WICK_RECORD_EXTENSION), ==, 2);
}

/* The same facts in wick_ keys of standard records. candle-graph's
 * rules take the file (unknown keys are ignored), and extension mode finds
 * every fact again: the mark and the others of "wick_records" in file order,
 * the threads' identities as wick_thread records; entries that are not Wick
 * records are counted, not kept; no line is one candle-graph would reject. */
static void
test_document_wick_keys (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickDocument) candle = load ("with-wick-keys.jsonl", FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (wick_document_get_structurally_valid (candle));
  g_assert_cmpuint (wick_document_get_n_records (candle), ==, 14);
  g_assert_cmpuint (wick_document_get_record_count (candle, WICK_RECORD_EXTENSION), ==, 0);

  g_autoptr (WickDocument) doc = load ("with-wick-keys.jsonl", TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 14);
  g_assert_cmpuint (wick_document_get_first_extension_line (doc), ==, 0);
  guint n;
  const WickExtensionRecord *records = wick_document_get_extensions (doc, &n);
  static const struct
  {
    const char *kind;
    guint64 timestamp_ns;
    guint32 line;
  } expected[] = {
    { "wick_attach_snapshot", 0, 1 },
    { "wick_thread", 0, 2 }, { "wick_thread", 10, 3 },       { "wick_mark", 11, 4 },
    { "wick_drops", 31, 8 }, { "wick_weight_evict", 19, 8 }, { "wick_thread", 5, 14 },
  };
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (wick_document_str (doc, records[i].kind), ==, expected[i].kind);
      g_assert_cmpuint (records[i].timestamp_ns, ==, expected[i].timestamp_ns);
      g_assert_cmpuint (records[i].line, ==, expected[i].line);
    }
  /* the meta line's Wick records too (an attach snapshot's header) */
  g_assert_cmpstr (wick_document_str (doc, records[0].json), ==,
                   "{\"kind\":\"wick_attach_snapshot\",\"timestamp_ns\":0,\"allocations\":0,"
                   "\"allocated_bytes\":0}");
  records++;
  n--;
  g_assert_cmpstr (wick_document_str (doc, records[0].json), ==,
                   "{\"kind\":\"wick_thread\",\"thread\":1,\"os_tid\":4001,\"name\":"
                   "\"main \\\"thread\\\"\",\"timestamp_ns\":0}");
  g_assert_cmpstr (wick_document_str (doc, records[2].json), ==,
                   "{\"kind\":\"wick_mark\",\"timestamp_ns\":11,\"label\":\"step 1\"}");
  g_assert_cmpuint (wick_document_get_wick_records_skipped (doc), ==, 2);
  g_assert_cmpuint (wick_document_get_record_count (doc, WICK_RECORD_EXTENSION), ==, 7);

  /* the track model names the threads from the span_start keys */
  WickTracks *tracks = wick_document_get_tracks (doc);
  guint n_threads, found = 0;
  const WickThread *threads = wick_tracks_get_threads (tracks, &n_threads);
  for (guint t = 0; t < n_threads; t++)
    {
      const char *name = threads[t].name ? wick_document_str (doc, threads[t].name) : "";
      found += (g_strcmp0 (name, "main \"thread\"") == 0 && threads[t].tid == 4001)
               || (g_strcmp0 (name, "loader") == 0 && threads[t].tid == 4002);
    }
  g_assert_cmpuint (found, ==, 2);
}

static void
test_document_extension_still_strict_json (void)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  const char *bad = "{\"kind\":\"wick_mark\",\"x\":[1,]}";
  const char *dup = "{\"kind\":\"wick_mark\",\"kind\":\"wick_mark\"}";
  g_autoptr (WickDocument) doc2 = wick_document_new_with_extensions (TRUE);

  g_assert_false (wick_document_feed_line (doc, bad, strlen (bad), NULL));
  g_assert_cmpstr (parse_cause (doc), ==, "trailing comma");
  g_assert_false (wick_document_feed_line (doc2, dup, strlen (dup), NULL));
  g_assert_cmpstr (parse_cause (doc2), ==, "duplicate field `kind`");
}

static void
on_changed (WickDocument *doc, int *count)
{
  (*count)++;
}

static void
test_document_live_feeding (void)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  const char *lines[] = {
    META_INFER,
    ROOT_START,
    ("{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"fwd\",\"start_ns\":5,"
     "\"span_kind\":\"op\"}"),
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":6}",
  };
  int changed = 0;
  g_autofree char *codes = NULL;

  g_signal_connect (doc, "changed", G_CALLBACK (on_changed), &changed);
  for (gsize i = 0; i < G_N_ELEMENTS (lines); i++)
    g_assert_true (wick_document_feed_line (doc, lines[i], strlen (lines[i]), NULL));
  g_assert_cmpint (changed, ==, 0);
  wick_document_analyze (doc);
  g_assert_cmpint (changed, ==, 1);
  g_assert_false (wick_document_is_finished (doc));
  /* running spans are pending open_span issues while the capture runs, as is
   * the terminal; neither makes the trace invalid */
  codes = issue_codes (doc, FALSE);
  g_assert_cmpstr (codes, ==, "P missing_terminal P open_span P open_span");
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_true (wick_document_get_health_provisional (doc));
  g_assert_false (wick_document_get_capture_complete (doc));
  g_assert_cmpint (wick_document_get_spans (doc, NULL)[1].parent, ==, 0);

  {
    const char *end = "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":5}";
    g_assert_true (wick_document_feed_line (doc, end, strlen (end), NULL));
  }
  g_assert_true (wick_document_feed_line (doc, ROOT_END, strlen (ROOT_END), NULL));
  g_assert_true (wick_document_feed_line (doc, TERMINAL, strlen (TERMINAL), NULL));
  g_assert_true (wick_document_finish (doc, NULL));
  g_assert_cmpint (changed, ==, 2);
  g_assert_true (wick_document_is_finished (doc));
  g_assert_true (wick_document_get_capture_complete (doc));
  g_assert_false (wick_document_get_health_provisional (doc));
  g_clear_pointer (&codes, g_free);
  codes = issue_codes (doc, FALSE);
  g_assert_cmpstr (codes, ==, "");
  g_assert_false (wick_document_feed_line (doc, TERMINAL, strlen (TERMINAL), NULL));
}

/* The health of a document with every line fed and finished. */
static char *
health_text (WickDocument *doc)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);
  GString *out = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "%s %s %s %s\n", wick_severity_to_string (issues[i].severity),
                            issues[i].code, issues[i].message,
                            issues[i].record_id ? issues[i].record_id : "-");
  g_string_append_printf (
    out, "valid %d coverage %s (%s)\n", wick_document_get_structurally_valid (doc),
    wick_coverage_verdict_to_string (wick_document_get_gradient_coverage (doc)),
    wick_document_get_gradient_coverage_reason (doc));
  return g_string_free (out, FALSE);
}

/* Provisional health: a training trace fed up to its first gradient record
 * (spans s1 and s2 open, the parameter storage live, two of three manifest
 * gradients still to come) has the end-only rules pending, stays valid and
 * has a pending gradient verdict; fed to the end, its health is exactly that
 * of the file loaded at once; cut there by a failed terminal, the pending
 * rules get their final (interrupted) verdicts. */
static void
test_document_live_provisional (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  const guint first_gradient = 19; /* 0-based: gradient-1 */
  g_assert_true (g_str_has_prefix (lines[first_gradient], "{\"kind\":\"gradient\""));

  g_autoptr (WickDocument) live = wick_document_new ();
  g_autoptr (WickDocument) cut = wick_document_new ();
  for (guint i = 0; i <= first_gradient; i++)
    {
      g_assert_true (wick_document_feed_line (live, lines[i], strlen (lines[i]), NULL));
      g_assert_true (wick_document_feed_line (cut, lines[i], strlen (lines[i]), NULL));
    }
  wick_document_analyze (live);
  g_assert_true (wick_document_get_health_provisional (live));
  g_autofree char *codes = issue_codes (live, FALSE);
  g_assert_cmpstr (codes, ==,
                   "P missing_terminal P open_span P open_span P retained_allocations "
                   "P gradient_manifest_missing_key P gradient_active_family_below_minimum");
  g_assert_cmpuint (wick_document_count_health (live, WICK_SEVERITY_PENDING), ==, 6);
  g_assert_cmpuint (wick_document_count_health (live, WICK_SEVERITY_ERROR), ==, 0);
  g_assert_true (wick_document_get_structurally_valid (live));
  g_assert_cmpstr (find_issue (live, "gradient_manifest_missing_key")->message, ==,
                   "2 of 3 manifest gradients not captured yet");
  g_assert_cmpstr (find_issue (live, "retained_allocations")->message, ==,
                   "1 storage is live now");
  g_assert_cmpstr (find_issue (live, "open_span")->record_id, ==, "s1");
  g_assert_cmpstr (find_issue (live, "gradient_active_family_below_minimum")->message, ==,
                   "active gradient family \"trunk\" has 0 present gradients so far; requires "
                   "at least 1");
  g_assert_cmpint (wick_document_get_gradient_coverage (live), ==, WICK_COVERAGE_VERDICT_PENDING);
  g_assert_cmpstr (wick_coverage_verdict_to_string (WICK_COVERAGE_VERDICT_PENDING), ==, "pending");

  /* An error that is decided at once is an error while live too. */
  const char *leak = "{\"kind\":\"gradient\",\"event_id\":\"gradient-x\",\"root\":"
                     "\"parameters\",\"key\":\"frozen.weight\",\"state\":\"present\","
                     "\"norm\":0.5}";
  g_autoptr (WickDocument) leaky = wick_document_new ();
  for (guint i = 0; i < first_gradient; i++)
    g_assert_true (wick_document_feed_line (leaky, lines[i], strlen (lines[i]), NULL));
  g_assert_true (wick_document_feed_line (leaky, leak, strlen (leak), NULL));
  wick_document_analyze (leaky);
  g_assert_nonnull (find_issue (leaky, "gradient_inactive_family_leakage"));
  g_assert_cmpint (find_issue (leaky, "gradient_inactive_family_leakage")->severity, ==,
                   WICK_SEVERITY_ERROR);
  g_assert_false (wick_document_get_structurally_valid (leaky));
  g_assert_cmpint (wick_document_get_gradient_coverage (leaky), ==, WICK_COVERAGE_VERDICT_INVALID);

  /* Fed to the end: the same health as the file read at once. */
  for (guint i = first_gradient + 1; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      g_assert_true (wick_document_feed_line (live, lines[i], strlen (lines[i]), NULL));
  g_assert_true (wick_document_finish (live, NULL));
  g_assert_false (wick_document_get_health_provisional (live));
  g_assert_cmpuint (wick_document_count_health (live, WICK_SEVERITY_PENDING), ==, 0);
  g_autoptr (WickDocument) whole = load ("train-contract.jsonl", FALSE, NULL);
  g_assert_false (wick_document_get_health_provisional (whole));
  g_autofree char *fed_health = health_text (live);
  g_autofree char *whole_health = health_text (whole);
  g_assert_cmpstr (fed_health, ==, whole_health);
  g_assert_cmpint (wick_document_get_gradient_coverage (live), ==, WICK_COVERAGE_VERDICT_COMPLETE);

  /* Cut by a failed terminal: the final verdicts of an interrupted capture. */
  const char *failed = "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":100,"
                       "\"reason\":\"capture cut: the process exited\"}";
  g_assert_true (wick_document_feed_line (cut, failed, strlen (failed), NULL));
  g_assert_true (wick_document_finish (cut, NULL));
  g_assert_false (wick_document_get_health_provisional (cut));
  g_autofree char *cut_codes = issue_codes (cut, FALSE);
  g_assert_cmpstr (cut_codes, ==,
                   "W capture_failed W open_span W open_span W retained_allocations "
                   "W gradient_manifest_missing_key W gradient_manifest_missing_key");
  g_assert_cmpstr (find_issue (cut, "open_span")->message, ==, "span `s1` was interrupted");
  g_assert_cmpint (wick_document_get_gradient_coverage (cut), ==, WICK_COVERAGE_VERDICT_PARTIAL);
}

static void
test_document_live_unterminated_finish (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, NULL);

  g_assert_cmpstr (parse_message (doc), ==, "trace stream is missing its terminal event");
  wick_document_analyze (doc);
  g_assert_true (wick_document_get_structurally_valid (doc));
}

static void
write_big_trace (const char *path, guint n_spans)
{
  g_autoptr (GString) text = g_string_new (META_INFER "\n" ROOT_START "\n");

  for (guint i = 2; i < n_spans + 2; i++)
    g_string_append_printf (text,
                            "{\"kind\":\"span_start\",\"id\":\"s%u\",\"parent_id\":\"s1\",\"name\":"
                            "\"work\",\"start_ns\":%u,\"span_kind\":\"function\"}\n"
                            "{\"kind\":\"span_end\",\"id\":\"s%u\",\"duration_ns\":1}\n",
                            i, i, i);
  g_string_append_printf (text,
                          "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%u}\n"
                          "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%u}\n",
                          n_spans + 10, n_spans + 10);
  g_assert_true (g_file_set_contents (path, text->str, (gssize)text->len, NULL));
}

typedef struct
{
  double last;
  int calls;
  GCancellable *cancel_at_first;
} Progress;

static void
on_progress (double fraction, gpointer user_data)
{
  Progress *p = user_data;

  g_assert_cmpfloat (fraction, >=, p->last);
  g_assert_cmpfloat (fraction, <=, 1.0);
  p->last = fraction;
  p->calls++;
  if (p->cancel_at_first != NULL)
    g_cancellable_cancel (p->cancel_at_first);
}

static void
test_document_progress_and_cancel (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-model-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "big.jsonl", NULL);
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (WickDocument) cancelled = wick_document_new ();
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  Progress progress = { 0 };
  Progress cancel = { 0, 0, cancellable };
  guint n;

  write_big_trace (path, 120000); /* ~15 MB: several read chunks */
  g_assert_true (wick_document_load_file (doc, path, NULL, on_progress, &progress, &error));
  g_assert_no_error (error);
  g_assert_cmpint (progress.calls, >, 1);
  g_assert_cmpfloat (progress.last, ==, 1.0);
  wick_document_get_spans (doc, &n);
  g_assert_cmpuint (n, ==, 120001);
  g_assert_true (wick_document_get_structurally_valid (doc));

  g_assert_false (
    wick_document_load_file (cancelled, path, cancellable, on_progress, &cancel, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (cancel.calls, ==, 1);
  wick_document_get_spans (cancelled, &n);
  g_assert_cmpuint (n, <, 120001);
  g_unlink (path);
  g_rmdir (dir);
}

static WickDocument *
feed_file (const char *path, gboolean extensions)
{
  g_autofree char *text = NULL;
  gsize size;
  WickDocument *doc = wick_document_new_with_extensions (extensions);
  const char *p, *end;

  g_assert_true (g_file_get_contents (path, &text, &size, NULL));
  for (p = text, end = text + size; p < end;)
    {
      const char *nl = memchr (p, '\n', (gsize)(end - p));
      const char *line_end = nl ? nl : end;
      if (!wick_document_feed_line (doc, p, (gsize)(line_end - p), NULL))
        break;
      p = nl ? nl + 1 : end;
    }
  wick_document_finish (doc, NULL);
  return doc;
}

static void
assert_same_outcome (WickDocument *a, WickDocument *b)
{
  const WickParseError *ea = wick_document_get_parse_error (a);
  const WickParseError *eb = wick_document_get_parse_error (b);
  g_autofree char *ca = issue_codes (a, TRUE);
  g_autofree char *cb = issue_codes (b, TRUE);

  g_assert_cmpint (ea->failed, ==, eb->failed);
  g_assert_cmpstr (ea->cause, ==, eb->cause);
  g_assert_cmpuint (ea->line, ==, eb->line);
  g_assert_cmpint (ea->record_index, ==, eb->record_index);
  g_assert_cmpuint (wick_document_get_n_records (a), ==, wick_document_get_n_records (b));
  g_assert_cmpuint (wick_document_get_n_lines (a), ==, wick_document_get_n_lines (b));
  g_assert_cmpstr (ca, ==, cb);
  g_assert_cmpint (wick_document_get_gradient_coverage (a), ==,
                   wick_document_get_gradient_coverage (b));
}

static void
test_document_loader_matches_feeding (void)
{
  static const char *const names[] = {
    "valid-infer.jsonl",     "truncated.jsonl",      "crlf-blank.jsonl",     "invalid-utf8.jsonl",
    "with-extensions.jsonl", "train-contract.jsonl", "with-wick-keys.jsonl",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    for (int extensions = 0; extensions < 2; extensions++)
      {
        g_autofree char *path = data_path (names[i]);
        g_autoptr (WickDocument) loaded = wick_document_new_with_extensions (extensions);
        g_autoptr (WickDocument) fed = feed_file (path, extensions);
        g_test_message ("%s extensions=%d", names[i], extensions);
        wick_document_load_file (loaded, path, NULL, NULL, NULL, NULL);
        assert_same_outcome (loaded, fed);
      }
}

static void
test_document_loader_error_in_late_chunk (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-model-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "late.jsonl", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GString) broken = NULL;
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (WickDocument) fed = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *message = NULL;
  guint64 lines;

  write_big_trace (path, 60000);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  broken = g_string_new (text);
  /* cut the file in the middle of the second-to-last line, as a crash does */
  g_string_truncate (broken, broken->len - 80);
  g_assert_true (g_file_set_contents (path, broken->str, (gssize)broken->len, NULL));
  lines = 0;
  for (gsize i = 0; i < broken->len; i++)
    lines += broken->str[i] == '\n';

  g_assert_false (wick_document_load_file (doc, path, NULL, NULL, NULL, &error));
  message
    = g_strdup_printf ("parse trace JSONL line %" G_GUINT64_FORMAT " from %s", lines + 1, path);
  g_assert_cmpstr (parse_message (doc), ==, message);
  g_assert_cmpstr (parse_cause (doc), ==, "EOF while parsing a string");
  fed = feed_file (path, FALSE);
  assert_same_outcome (doc, fed);
  g_unlink (path);
  g_rmdir (dir);
}

/* A late attach's document read live (no terminal yet) is judged
 * as the partial capture its file will be, not as a complete run: the
 * measured region that ended before the attach is no error. Without the
 * attach (or with nothing missing) the same lines are judged as before. */
static void
test_document_partial_live (void)
{
  g_autofree char *path = data_path ("with-wick-keys.jsonl");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  static const char *const attach[] = {
    NULL,
    ",\"wick_attach\":{\"attached_ns\":2100000000,\"missing\":0,\"exact\":true,\"snapshot\":false}",
    ",\"wick_attach\":{\"attached_ns\":2100000000,\"missing\":42,\"exact\":true,\"snapshot\":false}",
    ",\"wick_attach\":{\"attached_ns\":2100000000,\"missing\":0,\"exact\":false,\"snapshot\":true}",
  };
  for (guint a = 0; a < G_N_ELEMENTS (attach); a++)
    {
      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
      g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
      g_autoptr (GError) error = NULL;
      for (guint i = 0; lines[i] != NULL; i++)
        {
          if (strstr (lines[i], "\"kind\":\"terminal\"") != NULL)
            break;
          g_autoptr (GString) line = g_string_new (lines[i]);
          /* the measured region ended before the attach */
          char *measured = strstr (line->str, "\"measured\":true");
          if (measured != NULL)
            {
              gsize offset = (gsize)(measured - line->str);
              g_string_erase (line, (gssize)offset, (gssize)strlen ("\"measured\":true"));
              g_string_insert (line, (gssize)offset, "\"measured\":false");
            }
          if (i == 0)
            {
              /* the fixture's own attach (nothing missing), replaced */
              const char *own = ",\"wick_attach\":{\"attached_ns\":0,\"missing\":0,\"exact\":true,"
                                "\"snapshot\":true}";
              char *at = strstr (line->str, own);
              g_assert_nonnull (at);
              gsize offset = (gsize)(at - line->str);
              g_string_erase (line, (gssize)offset, (gssize)strlen (own));
              if (attach[a] != NULL)
                g_string_insert (line, (gssize)offset, attach[a]);
            }
          g_assert_true (wick_document_feed_line (doc, line->str, line->len, &error));
        }
      wick_document_analyze (doc);
      gboolean partial = a >= 2;
      g_assert_cmpint (wick_document_is_partial (doc), ==, partial);
      WickAttachFacts facts;
      g_assert_cmpint (wick_document_get_attach (doc, &facts), ==, a >= 1);
      guint n, errors = 0, partial_warnings = 0;
      const WickHealthIssue *issues = wick_document_get_health (doc, &n);
      for (guint i = 0; i < n; i++)
        {
          errors += issues[i].severity == WICK_SEVERITY_ERROR;
          if (g_strcmp0 (issues[i].code, "capture_failed") == 0)
            {
              partial_warnings++;
              g_assert_cmpstr (issues[i].message, ==,
                               a == 2 ? "attached at 2.1 s: records before that are missing (42 "
                                        "records); the capture is partial"
                                      : "attached at 2.1 s: records before that are missing (an "
                                        "unknown number of records); the capture is partial");
            }
        }
      g_assert_cmpuint (partial_warnings, ==, partial ? 1 : 0);
      /* measurement_count: no measured region, an error unless partial */
      g_assert_cmpuint (errors, ==, partial ? 0 : 1);
      g_assert_cmpint (wick_document_get_structurally_valid (doc), ==, partial);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/document/valid-file", test_document_valid_file);
  g_test_add_func ("/model/document/truncated-crash", test_document_truncated_crash);
  g_test_add_func ("/model/document/crlf-and-blank-lines", test_document_crlf_and_blank_lines);
  g_test_add_func ("/model/document/invalid-utf8-file", test_document_invalid_utf8_file);
  g_test_add_func ("/model/document/missing-file", test_document_missing_file);
  g_test_add_func ("/model/document/extensions-rejected-by-default",
                   test_document_extensions_rejected_by_default);
  g_test_add_func ("/model/document/extension-mode", test_document_extension_mode);
  g_test_add_func ("/model/document/wick-keys", test_document_wick_keys);
  g_test_add_func ("/model/document/partial-live", test_document_partial_live);
  g_test_add_func ("/model/document/extension-still-strict-json",
                   test_document_extension_still_strict_json);
  g_test_add_func ("/model/document/live-feeding", test_document_live_feeding);
  g_test_add_func ("/model/document/live-provisional", test_document_live_provisional);
  g_test_add_func ("/model/document/live-unterminated-finish",
                   test_document_live_unterminated_finish);
  g_test_add_func ("/model/document/progress-and-cancel", test_document_progress_and_cancel);
  g_test_add_func ("/model/document/loader-matches-feeding", test_document_loader_matches_feeding);
  g_test_add_func ("/model/document/loader-error-in-late-chunk",
                   test_document_loader_error_in_late_chunk);
  return g_test_run ();
}
