/* test-model-roundtrip.c — write with libwick, read with the document model:
 * a complete, consistent recording (every record kind, an exact gradient
 * contract, several threads) parses, has no health error by candle-graph's
 * rules, a complete gradient verdict, and reads back the values written. */
#include <wick/wick.h>

#include "wick-document.h"
#include "wick-document-private.h"

#include <glib.h>
#include <unistd.h>
#include <glib/gstdio.h>

static const char *
family_of (const char *key, void *user_data)
{
  return g_str_has_prefix (key, "frozen.") ? "frozen" : "trunk";
}

static void
ok (gboolean result, WickError *error)
{
  if (!result)
    g_error ("%s", error->message);
}

/* One training step: forward, backward, optimizer, each with an op, a
 * tensor and a memory pair inside its span. */
static void
train_step (WickSession *session, int index)
{
  WickError error;
  uint64_t shape[] = { 4, 8 };
  const char *names[] = { "forward", "backward", "optimizer" };
  const WickStep steps[] = { WICK_STEP_FORWARD, WICK_STEP_BACKWARD, WICK_STEP_OPTIMIZER };
  const WickMemoryCategory categories[]
    = { WICK_CATEGORY_ACTIVATION, WICK_CATEGORY_GRADIENT, WICK_CATEGORY_OPTIMIZER };
  for (int s = 0; s < 3; s++)
    {
      char tensor_id[64], storage_id[64];
      g_snprintf (tensor_id, sizeof tensor_id, "t-%d-%d", index, s);
      g_snprintf (storage_id, sizeof storage_id, "storage:%d-%d", index, s);
      char label[64];
      g_snprintf (label, sizeof label, "%s-%d", names[s], index);
      WickSpanId span
        = wick_span_begin_step (session, index == 0 ? names[s] : label, WICK_SPAN_MODULE, steps[s]);
      g_assert_cmpuint (span, !=, 0);
      uint64_t t0 = wick_session_now_ns (session);
      WickMemoryRecord alloc = { .timestamp_ns = WICK_NOW,
                                 .storage_id = storage_id,
                                 .tensor_id = tensor_id,
                                 .span = span,
                                 .op_name = "matmul",
                                 .device = "cpu",
                                 .bytes = 128,
                                 .action = WICK_MEMORY_ALLOC,
                                 .shape = shape,
                                 .rank = 2,
                                 .dtype = "f32",
                                 .category = categories[s] };
      ok (wick_session_record_memory (session, &alloc, &error), &error);
      const char *inputs[] = { "x" };
      uint64_t t1 = wick_session_now_ns (session);
      WickOpRecord op = { .span = span,
                          .op_name = "matmul",
                          .inputs = inputs,
                          .n_inputs = 1,
                          .output = tensor_id,
                          .shape = shape,
                          .rank = 2,
                          .dtype = "f32",
                          .device = "cpu",
                          .duration_ns = t1 - t0,
                          .timestamp_ns = t0,
                          .input_dense_bytes = 128 };
      ok (wick_session_record_op (session, &op, &error), &error);
      WickTensorRecord tensor = { .span = span,
                                  .tensor_id = tensor_id,
                                  .label = label,
                                  .shape = shape,
                                  .rank = 2,
                                  .dtype = "f32",
                                  .device = "cpu",
                                  .category = categories[s] };
      ok (wick_session_record_tensor (session, &tensor, &error), &error);
      float data[32];
      for (int i = 0; i < 32; i++)
        data[i] = (float)(i - 16) / 8.0f;
      WickTensorStatsRecord stats
        = { .span = span, .label = label, .shape = shape, .rank = 2, .dtype = "f32" };
      wick_tensor_stats_compute_f32 (data, 32, &stats);
      ok (wick_session_record_tensor_stats (session, &stats, &error), &error);
      WickMemoryRecord release = alloc;
      release.action = WICK_MEMORY_FREE;
      ok (wick_session_record_memory (session, &release, &error), &error);
      g_assert_true (wick_span_end (session, span));
    }
}

static gpointer
worker (gpointer data)
{
  WickSession *session = data;
  WickSpanId span = wick_span_begin (session, "loader", WICK_SPAN_FUNCTION);
  for (int i = 0; i < 100; i++)
    wick_span_end (session, wick_span_begin (session, "decode", WICK_SPAN_FUNCTION));
  wick_span_end (session, span);
  return NULL;
}

static void
record_session (const char *path, gboolean strict)
{
  WickError error;
  const char *keys[] = { "trunk.weight", "frozen.weight", "trunk.bias" };
  WickGradientFamily families[]
    = { { "trunk", WICK_EXPECT_ACTIVE, 1 }, { "frozen", WICK_EXPECT_INACTIVE, 0 } };
  WickGradientPlan *plan
    = wick_gradient_plan_new ("parameters", keys, 3, family_of, NULL, families, 2, &error);
  g_assert_nonnull (plan);
  const char *labels[] = { "forward", "backward", "optimizer" };
  WickRunInfo run = { .entrypoint = "mlp::train_step",
                      .phase = WICK_PHASE_TRAIN,
                      .capture_step = 3,
                      .warmup_steps = 2,
                      .device = "cpu" };
  WickCaptureContract contract = {
    .measurement_scope = WICK_SCOPE_PROFILED_WORK,
    .operations = WICK_COVERAGE_COMPLETE,
    .tensors = WICK_COVERAGE_COMPLETE,
    .gradients = WICK_COVERAGE_COMPLETE,
    .gradient_contract = wick_gradient_plan_get_contract (plan),
    .logical_memory = WICK_COVERAGE_COMPLETE,
    .physical_memory = WICK_COVERAGE_PARTIAL,
    .device_timing = WICK_COVERAGE_PARTIAL,
    .required_semantic_labels = labels,
    .n_required_semantic_labels = 3,
  };
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK, .strict = strict };
  WickSession *session = wick_session_open (&run, &contract, &options, &error);
  g_assert_nonnull (session);

  WickSpanId measured = wick_measurement_begin (session, "step", &error);
  GThread *thread = g_thread_new ("worker", worker, session);
  for (int i = 0; i < 3; i++)
    train_step (session, i);
  g_thread_join (thread);
  WickSpanId callee = wick_span_begin (session, "callee", WICK_SPAN_FUNCTION);
  WickDeviceIntervalRecord interval = { .span = callee,
                                        .device = "cpu",
                                        .stream_id = "0",
                                        .clock_id = "host",
                                        .backend = "cpu",
                                        .start_ns = 10,
                                        .duration_ns = 5 };
  ok (wick_session_record_device_interval (session, &interval, &error), &error);
  uint64_t callee_ns = 0;
  g_assert_true (wick_span_end_timed (session, callee, &callee_ns));
  ok (wick_session_record_call_edge (session, measured, callee, callee_ns, &error), &error);
  ok (wick_session_record_data_edge (session, "t-0-0", "t-0-1", &error), &error);
  WickDeviceMemoryRecord sample
    = { .timestamp_ns = WICK_NOW, .device = "cpu", .has_used_bytes = true, .used_bytes = 4096 };
  ok (wick_session_record_device_memory (session, &sample, &error), &error);
  WickParameterGradient gradients[] = { { false, 0 }, { true, 0.25 }, { true, 1.5 } };
  ok (wick_gradient_plan_record (plan, session, gradients, 3, &error), &error);
  ok (wick_session_mark (session, "done", &error), &error);
  g_assert_true (wick_span_end (session, measured));
  ok (wick_session_finish (session, &error), &error);
  wick_session_close (session);
  wick_gradient_plan_free (plan);
}

static void
check_document (WickDocument *document, const char *path)
{
  GError *load_error = NULL;
  gboolean loaded = wick_document_load_file (document, path, NULL, NULL, NULL, &load_error);
  if (!loaded)
    g_error ("%s", load_error->message);
  guint n_issues;
  const WickHealthIssue *issues = wick_document_get_health (document, &n_issues);
  for (guint i = 0; i < n_issues; i++)
    g_test_message ("%s %s: %s", issues[i].severity == WICK_SEVERITY_ERROR ? "E" : "W",
                    issues[i].code, issues[i].message);
  g_assert_true (wick_document_get_structurally_valid (document));
  g_assert_true (wick_document_get_capture_complete (document));
  g_assert_cmpint (wick_document_get_gradient_coverage (document), ==,
                   WICK_COVERAGE_VERDICT_COMPLETE);
  g_assert_cmpstr (wick_document_get_entrypoint (document), ==, "mlp::train_step");
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  g_assert_cmpuint (n, ==, 1 + 1 + 9 + 1 + 100 + 1);
  for (guint i = 0; i < n; i++)
    g_assert_true (spans[i].flags & WICK_SPAN_FLAG_CLOSED);
  const WickOp *ops = wick_document_get_ops (document, &n);
  g_assert_cmpuint (n, ==, 9);
  g_assert_cmpuint (ops[0].output_dense_bytes, ==, 128);
  g_assert_cmpuint (ops[0].input_dense_bytes, ==, 128);
  g_assert_cmpstr (wick_document_str (document, ops[0].op_name), ==, "matmul");
  const WickTensorStats *stats = wick_document_get_tensor_stats (document, &n);
  g_assert_cmpuint (n, ==, 9);
  g_assert_cmpuint (stats[0].elements, ==, 32);
  g_assert_cmpfloat (stats[0].abs_max, ==, 2.0);
  g_assert_cmpfloat (stats[0].mean, ==, -0.0625);
  wick_document_get_memory (document, &n);
  g_assert_cmpuint (n, ==, 18);
  const WickGradient *grads = wick_document_get_gradients (document, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpstr (wick_document_str (document, grads[0].key), ==, "frozen.weight");
  g_assert_cmpint (grads[0].state, ==, WICK_GRADIENT_MISSING);
  g_assert_cmpfloat (grads[2].norm, ==, 1.5);
  wick_document_get_edges (document, &n);
  g_assert_cmpuint (n, ==, 2);
}

/* Strict: pure trace/10, what candle-graph itself accepts. */
static void
test_strict_recording_is_healthy (void)
{
  /* the run's own file: two runs at once must not share a path */
  g_autofree char *name = g_strdup_printf ("wick-model-strict-%d.jsonl", (int)getpid ());
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  record_session (path, TRUE);
  g_autoptr (WickDocument) document = wick_document_new ();
  check_document (document, path);
  g_unlink (path);
}

/* Not strict: the same plus the Wick facts (here a mark and the threads), in
 * wick_ keys of standard records: candle-graph's reader takes the
 * file as it takes the strict one, and Wick's reader with extensions enabled
 * finds every fact again. */
static void
test_extended_recording_is_healthy (void)
{
  /* the run's own file: two runs at once must not share a path */
  g_autofree char *name = g_strdup_printf ("wick-model-extended-%d.jsonl", (int)getpid ());
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  record_session (path, FALSE);
  g_autoptr (WickDocument) strict = wick_document_new ();
  check_document (strict, path);
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  check_document (document, path);
  g_assert_cmpuint (wick_document_get_first_extension_line (document), ==, 0);
  g_assert_cmpuint (wick_document_get_wick_records_skipped (document), ==, 0);
  guint n;
  const WickExtensionRecord *extensions = wick_document_get_extensions (document, &n);
  guint marks = 0, threads = 0;
  for (guint i = 0; i < n; i++)
    {
      const char *kind = wick_document_str (document, extensions[i].kind);
      marks += g_strcmp0 (kind, "wick_mark") == 0;
      threads += g_strcmp0 (kind, "wick_thread") == 0;
    }
  g_assert_cmpuint (marks, ==, 1);
  g_assert_cmpuint (threads, ==, 2); /* the opening thread and the worker, once each */
  g_assert_cmpuint (marks + threads, ==, n);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/model/strict-recording-is-healthy", test_strict_recording_is_healthy);
  g_test_add_func ("/core/model/extended-recording-is-healthy", test_extended_recording_is_healthy);
  return g_test_run ();
}
