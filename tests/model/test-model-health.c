/* test-model-health.c — structural health (spec §6): every code with its
 * severity, message and place in the order. */
#include "config.h"

#include "model-test-util.h"

#define SPAN(id, parent, name, start, extra)                                                       \
  "{\"kind\":\"span_start\",\"id\":\"" id "\"" parent ",\"name\":\"" name "\",\"start_ns\":" start \
  ",\"span_kind\":\"function\"" extra "}"
#define PARENT(p) ",\"parent_id\":\"" p "\""
#define END(id, dur) "{\"kind\":\"span_end\",\"id\":\"" id "\",\"duration_ns\":" dur "}"
#define OP(span, name, ts, dur)                                                                    \
  "{\"kind\":\"op\",\"span_id\":\"" span "\",\"op_name\":\"" name "\",\"inputs\":[\"in\"],"        \
  "\"output\":\"out\",\"shape\":[2],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":" dur     \
  ",\"timestamp_ns\":" ts ",\"input_dense_bytes\":8}"
#define TENSOR(span, id)                                                                           \
  "{\"kind\":\"tensor\",\"span_id\":\"" span "\",\"tensor_id\":\"" id "\",\"shape\":[2],"          \
  "\"dtype\":\"f32\",\"device\":\"cpu\",\"category\":\"activation\"}"
#define MEM(ts, storage, tensor, span, bytes, action)                                              \
  "{\"kind\":\"memory\",\"timestamp_ns\":" ts ",\"storage_id\":\"" storage                         \
  "\",\"tensor_id\":\"" tensor "\",\"span_id\":\"" span "\",\"device\":\"cpu\",\"bytes\":" bytes   \
  ",\"action\":\"" action "\",\"dtype\":\"f32\",\"category\":\"activation\"}"
#define INTERVAL(span, dur)                                                                        \
  "{\"kind\":\"device_interval\",\"span_id\":\"" span "\",\"device\":\"cuda:0\",\"stream_id\":"    \
  "\"7\",\"clock_id\":\"cuda\",\"backend\":\"cuda\",\"start_ns\":1,\"duration_ns\":" dur "}"
#define STATS(span)                                                                                \
  "{\"kind\":\"tensor_stats\",\"span_id\":\"" span "\",\"label\":\"x\",\"shape\":[1],\"dtype\":"   \
  "\"f32\",\"elements\":1,\"non_finite\":0,\"rms\":1,\"abs_max\":1,\"mean\":1}"
#define SAMPLE(fields)                                                                             \
  "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:0\"" fields "}"
#define CALL(from, to, dur)                                                                        \
  "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"from_span\":\"" from "\",\"to_span\":\"" to         \
  "\",\"host_duration_ns\":" dur "}"
#define DATA(from, to)                                                                             \
  "{\"kind\":\"edge\",\"edge_kind\":\"data\",\"from_tensor\":\"" from "\",\"to_tensor\":\"" to "\"}"

static void
assert_codes (WickDocument *doc, const char *expected)
{
  g_autofree char *codes = issue_codes (doc, FALSE);

  g_assert_false (wick_document_get_parse_error (doc)->failed);
  g_assert_cmpstr (codes, ==, expected);
}

static void
assert_message (WickDocument *doc, const char *code, const char *message)
{
  const WickHealthIssue *issue = find_issue (doc, code);

  g_assert_nonnull (issue);
  g_assert_cmpstr (issue->message, ==, message);
}

static void
test_health_clean (void)
{
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autofree char *all = issue_codes (doc, TRUE);

  g_assert_cmpstr (all, ==,
                   "W operations_absent W tensors_absent W logical_memory_absent "
                   "W physical_memory_absent W device_timing_absent");
  g_assert_true (wick_document_get_structurally_valid (doc));
  assert_message (doc, "operations_absent", "no operation evidence was captured");
  assert_message (doc, "tensors_absent", "no tensor checkpoints were captured");
  assert_message (doc, "logical_memory_absent", "no logical storage events were captured");
  assert_message (doc, "physical_memory_absent", "no physical device-memory samples were captured");
  assert_message (doc, "device_timing_absent", "no device timing intervals were captured");
}

static void
test_health_train_absent (void)
{
  g_autofree char *train = meta_with ("\"phase\":\"infer\"", "\"phase\":\"train\"");
  g_autoptr (WickDocument) doc = parse_lines (
    train, ROOT_START, SPAN ("s2", PARENT ("s1"), "fwd", "1", ",\"step\":\"forward\""),
    END ("s2", "1"), ROOT_END, TERMINAL, NULL);
  g_autofree char *all = issue_codes (doc, TRUE);

  g_assert_cmpstr (all, ==,
                   "W operations_absent W tensors_absent W logical_memory_absent "
                   "W physical_memory_absent W device_timing_absent W gradients_absent "
                   "W backward_absent W optimizer_absent");
  assert_message (doc, "gradients_absent", "no gradient facts were captured for this training run");
  assert_message (doc, "backward_absent", "no backward span was tagged");
  assert_message (doc, "optimizer_absent", "no optimizer span was tagged");
}

static void
test_health_provenance (void)
{
  static const struct
  {
    const char *from, *to, *message;
  } cases[] = {
    { "\"run_id\":\"run\"", "\"run_id\":\" \"", "run metadata run_id must not be empty" },
    { "\"device\":\"cpu\"", "\"device\":\"\"", "run metadata device must not be empty" },
    { "\"capture_step\":1", "\"capture_step\":0", "run metadata capture_step must be one-based" },
    { "\"warmup_steps\":0", "\"warmup_steps\":1",
      "run metadata warmup_steps 1 must be less than capture_step 1" },
    { "\"tags\":{}",
      "\"tags\":{},\"comparison_identity\":{\"workload_id\":\"w\",\"model_id\":\"m\","
      "\"config_id\":\"c\",\"data_id\":\"d\",\"seed_policy\":\"s\",\"physical_batch\":0,"
      "\"accumulation_steps\":1,\"precision\":\"p\",\"device_state\":\"x\"}",
      "comparison identity physical_batch must be positive" },
    { "\"tags\":{}",
      "\"tags\":{},\"comparison_identity\":{\"workload_id\":\"w\",\"model_id\":\"m\","
      "\"config_id\":\"c\",\"data_id\":\"d\",\"seed_policy\":\"s\",\"physical_batch\":1,"
      "\"accumulation_steps\":1,\"precision\":\"p\",\"device_state\":\"x\",\"pair_id\":\"\"}",
      "comparison identity pair_id must not be empty when present" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *meta = meta_with (cases[i].from, cases[i].to);
      g_autoptr (WickDocument) doc = parse_lines (meta, ROOT_START, ROOT_END, TERMINAL, NULL);
      g_test_message ("case %zu", i);
      assert_codes (doc, "E run_provenance_invalid");
      assert_message (doc, "run_provenance_invalid", cases[i].message);
      g_assert_false (wick_document_get_structurally_valid (doc));
    }
}

static void
test_health_failed_capture (void)
{
  g_autoptr (WickDocument) doc
    = parse_lines (META_INFER, SPAN ("root", "", "demo", "0", ""), TERMINAL_FAILED, NULL);

  /* capture_failed, no measurement_count when failed, open span is a warning */
  assert_codes (doc, "W capture_failed W open_span");
  assert_message (doc, "capture_failed", "boom");
  assert_message (doc, "open_span", "span `root` was interrupted");
  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_false (wick_document_get_capture_complete (doc));
}

static void
test_health_root_and_measurement (void)
{
  g_autoptr (WickDocument) none = parse_lines (META_INFER, TERMINAL, NULL);
  g_autoptr (WickDocument) two
    = parse_lines (META_INFER, SPAN ("a", "", "x", "0", ""), SPAN ("b", "", "y", "0", ""),
                   END ("a", "1"), END ("b", "1"), TERMINAL, NULL);

  assert_codes (none, "E root_count E measurement_count");
  assert_message (none, "root_count", "expected exactly one root span, found 0");
  assert_message (none, "measurement_count", "expected exactly one measured region, found 0");
  assert_codes (two, "E root_count E measurement_count");
  assert_message (two, "root_count", "expected exactly one root span, found 2");
}

static void
test_health_span_rules_in_id_order (void)
{
  /* spans are judged in id byte order: "s10" < "s2" < "s3" < "s4" */
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START, SPAN ("s4", PARENT ("s1"), "late", "90", ""),
    SPAN ("s3", PARENT ("s1"), "early", "5", ""), SPAN ("s2", PARENT ("nope"), "orphan", "1", ""),
    SPAN ("s10", PARENT ("s1"), "open", "1", ""), END ("s4", "20"), END ("s3", "1"),
    END ("s2", "1"), ROOT_END,
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":200}", NULL);

  assert_codes (doc, "E open_span E unknown_parent E child_outside_parent");
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==, "span `s10` was not closed");
  g_assert_cmpstr (nth_issue (doc, 0)->record_id, ==, "s10");
  g_assert_cmpint (nth_issue (doc, 0)->record_type, ==, WICK_RECORD_SPAN);
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==, "span `s2` refers to missing parent `nope`");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==, "span `s4` lies outside parent `s1`");
}

static void
test_health_span_cycle (void)
{
  g_autoptr (WickDocument) doc
    = parse_lines (META_INFER, ROOT_START, SPAN ("a", PARENT ("b"), "a", "1", ""),
                   SPAN ("b", PARENT ("a"), "b", "1", ""), SPAN ("c", PARENT ("a"), "c", "1", ""),
                   END ("a", "1"), END ("b", "1"), END ("c", "1"), ROOT_END, TERMINAL, NULL);
  const WickSpan *spans = wick_document_get_spans (doc, NULL);

  /* a and b form a cycle, c hangs below it; a/b each lie... both closed and
   * inside each other: no child_outside_parent */
  assert_codes (doc, "E span_cycle E span_cycle E span_cycle");
  assert_message (doc, "span_cycle", "span `a` participates in a parent cycle");
  g_assert_cmpint (spans[1].parent, ==, -1);
}

static void
test_health_unknown_span_group_order (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START, INTERVAL ("x5", "1"), MEM ("1", "st", "t", "x4", "4", "alloc"),
    STATS ("x3"), TENSOR ("x2", "t"), OP ("x1", "mm", "1", "1"),
    MEM ("2", "st", "t", "x4", "4", "free"), ROOT_END, TERMINAL, NULL);

  assert_codes (doc, "E unknown_span E unknown_span E unknown_span E unknown_span E unknown_span "
                     "E unknown_span");
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "operation evidence refers to missing span `x1`");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==, "tensor evidence refers to missing span `x2`");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==,
                   "tensor statistics evidence refers to missing span `x3`");
  g_assert_cmpstr (nth_issue (doc, 3)->message, ==, "memory evidence refers to missing span `x4`");
  g_assert_cmpstr (nth_issue (doc, 5)->message, ==,
                   "device interval evidence refers to missing span `x5`");
}

static void
test_health_timing (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START, INTERVAL ("s1", "0"), OP ("s1", "late", "90", "20"),
    OP ("s1", "inside", "0", "100"), MEM ("101", "a", "t", "s1", "4", "alloc"),
    MEM ("100", "a", "t", "s1", "4", "free"), SAMPLE (""), SAMPLE (",\"free_bytes\":0"),
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}",
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":200}", NULL);

  /* memory sorted by time: the free at 100 comes before the alloc at 101 */
  assert_codes (doc, "E empty_device_interval E operation_outside_span E memory_outside_span "
                     "E empty_device_memory_sample E unpaired_free W retained_allocations");
  assert_message (doc, "empty_device_interval", "device interval for `s1` has zero duration");
  assert_message (doc, "operation_outside_span", "operation `late` lies outside span `s1`");
  assert_message (doc, "empty_device_memory_sample",
                  "device-memory sample for `cuda:0` contains no measurements");
  assert_message (doc, "unpaired_free", "storage `a` on `cpu` was freed while not live");
  assert_message (doc, "retained_allocations", "1 storage remained live at capture end");
}

static void
test_health_edges (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START, SPAN ("s2", PARENT ("s1"), "child", "1", ""), END ("s2", "10"),
    OP ("s2", "mm", "1", "1"), TENSOR ("s2", "t9"), CALL ("s1", "nope", "1"),
    CALL ("s2", "s1", "100"), CALL ("s1", "s2", "11"), CALL ("s1", "s2", "10"), DATA ("", "t9"),
    DATA ("in", "zzz"), DATA ("out", "t9"), ROOT_END, TERMINAL, NULL);

  assert_codes (doc, "E unknown_call_edge_span E call_edge_hierarchy_mismatch "
                     "E call_edge_duration_mismatch E empty_data_edge_endpoint "
                     "E unknown_data_edge_tensor");
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "call edge `s1` -> `nope` refers to a missing span");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==,
                   "call edge `s2` -> `s1` does not match the span hierarchy");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==,
                   "call edge `s1` -> `s2` reports 11 ns but the span reports 10 ns");
  g_assert_cmpstr (nth_issue (doc, 3)->message, ==, "data-edge tensor IDs cannot be empty");
  g_assert_cmpstr (nth_issue (doc, 4)->message, ==,
                   "data edge `in` -> `zzz` refers to unknown tensor evidence");
}

static void
test_health_memory_pairing (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START, MEM ("1", "a", "t1", "s1", "64", "alloc"),
    MEM ("2", "a", "view", "s1", "64", "alloc"), MEM ("3", "a", "view", "s1", "64", "alloc"),
    MEM ("4", "a", "t2", "s1", "32", "alloc"), MEM ("5", "a", "other", "s1", "16", "free"),
    MEM ("6", "b", "t", "s1", "8", "alloc"), MEM ("7", "c", "t", "s1", "8", "alloc"), ROOT_END,
    TERMINAL, NULL);

  assert_codes (doc, "E duplicate_allocation E allocation_size_mismatch E allocation_size_mismatch "
                     "W retained_allocations");
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "tensor `view` repeated an allocation for storage `a` on `cpu`");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==,
                   "storage `a` on `cpu` has conflicting allocation sizes");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==, "storage `a` allocated 64 bytes but freed 16");
  g_assert_cmpstr (nth_issue (doc, 3)->message, ==, "2 storages remained live at capture end");
}

/* A lapped reader (or a full ring) loses records: a free lost makes the
 * storage's next allocation look repeated, an allocation lost makes its free
 * unpaired. With the loss in the trace (a strict trace's terminal sentence,
 * or wick_lost records) those are counted as lost, one warning, not errors;
 * the terminal stays failed with its reason. Without a loss they stay errors. */
static WickDocument *
parse_lines_ext (const char *first, ...)
{
  va_list args;
  va_start (args, first);
  WickDocument *doc = parse_lines_v (TRUE, first, args);
  va_end (args);
  return doc;
}

static void
test_health_memory_pairing_after_loss (void)
{
#define LOST_TERMINAL                                                                              \
  "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":100,\"reason\":\"capture cut: "     \
  "the remote link failed; records were lost: 0 dropped by the recorder, 7 lost by the reader\"}"
#define LOSSY_MEMORY                                                                               \
  MEM ("1", "a", "t1", "s1", "64", "alloc"), MEM ("5", "a", "t1", "s1", "64", "alloc"),           \
    MEM ("6", "b", "t2", "s1", "8", "free"), MEM ("7", "a", "t3", "s1", "32", "alloc"),           \
    MEM ("8", "a", "t3", "s1", "32", "free")
  g_autoptr (WickDocument) strict
    = parse_lines (META_INFER, ROOT_START, LOSSY_MEMORY, ROOT_END, LOST_TERMINAL, NULL);
  assert_codes (strict, "W capture_failed W memory_unpaired_after_loss");
  assert_message (strict, "memory_unpaired_after_loss",
                  "3 memory events could not be paired: 7 records were lost (allocations or "
                  "frees among them), so they are counted as lost");
  g_assert_true (wick_document_get_structurally_valid (strict));
  g_assert_false (wick_document_get_capture_complete (strict));

  g_autoptr (WickDocument) extended = parse_lines_ext (
    META_INFER, ROOT_START, MEM ("1", "a", "t1", "s1", "64", "alloc"),
    "{\"kind\":\"wick_lost\",\"timestamp_ns\":2,\"ring\":0,\"count\":12}",
    MEM ("5", "a", "t1", "s1", "64", "alloc"), MEM ("9", "a", "t1", "s1", "64", "free"), ROOT_END,
    TERMINAL_FAILED, NULL);
  assert_codes (extended, "W capture_failed W memory_unpaired_after_loss");
  assert_message (extended, "memory_unpaired_after_loss",
                  "1 memory event could not be paired: 12 records were lost (allocations or frees "
                  "among them), so it is counted as lost");

  /* the same events without a loss are the errors they are */
  g_autoptr (WickDocument) whole
    = parse_lines (META_INFER, ROOT_START, LOSSY_MEMORY, ROOT_END, TERMINAL, NULL);
  assert_codes (whole, "E duplicate_allocation E unpaired_free E allocation_size_mismatch "
                       "E allocation_size_mismatch");
#undef LOST_TERMINAL
#undef LOSSY_MEMORY
}

/* The retained_allocations message for @n storages left live, in a finished
 * trace or (@live) one still being written. */
static char *
retained_message (guint n, gboolean live)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  const char *lines[] = { META_INFER, ROOT_START };
  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    g_assert_true (wick_document_feed_line (doc, lines[i], strlen (lines[i]), NULL));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *storage = g_strdup_printf ("st%u", i);
      g_autofree char *tensor = g_strdup_printf ("t%u", i);
      g_autofree char *line = g_strdup_printf (
        "{\"kind\":\"memory\",\"timestamp_ns\":%u,\"storage_id\":\"%s\",\"tensor_id\":"
        "\"%s\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":8,\"category\":"
        "\"activation\",\"action\":\"alloc\",\"dtype\":\"f32\"}",
        i + 1, storage, tensor);
      g_assert_true (wick_document_feed_line (doc, line, strlen (line), NULL));
    }
  if (live)
    wick_document_analyze (doc);
  else
    {
      const char *end[] = { ROOT_END, TERMINAL };
      for (guint i = 0; i < G_N_ELEMENTS (end); i++)
        g_assert_true (wick_document_feed_line (doc, end[i], strlen (end[i]), NULL));
      wick_document_finish (doc, NULL);
    }
  guint n_issues;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n_issues);
  for (guint i = 0; i < n_issues; i++)
    if (g_strcmp0 (issues[i].code, "retained_allocations") == 0)
      {
        g_assert_cmpint (issues[i].severity, ==,
                         live ? WICK_SEVERITY_PENDING : WICK_SEVERITY_WARNING);
        return g_strdup (issues[i].message);
      }
  g_error ("no retained_allocations issue for %u storages", n);
}

/* A count in a sentence through ngettext (C locale here; the
 * German forms are checked in the app suite): "1 storage is", "2 storages are". */
static void
test_health_retained_plural (void)
{
  struct
  {
    guint n;
    gboolean live;
    const char *message;
  } cases[] = {
    { 1, TRUE, "1 storage is live now" },
    { 2, TRUE, "2 storages are live now" },
    { 1, FALSE, "1 storage remained live at capture end" },
    { 2, FALSE, "2 storages remained live at capture end" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *message = retained_message (cases[i].n, cases[i].live);
      g_assert_cmpstr (message, ==, cases[i].message);
    }
}

static void
test_health_memory_same_time_keeps_file_order (void)
{
  /* stable sort: alloc then free at the same timestamp pair up */
  g_autoptr (WickDocument) doc
    = parse_lines (META_INFER, ROOT_START, MEM ("5", "a", "t", "s1", "8", "alloc"),
                   MEM ("5", "a", "t", "s1", "8", "free"), ROOT_END, TERMINAL, NULL);

  assert_codes (doc, "");
}

static void
test_health_required_labels (void)
{
  g_autofree char *meta = meta_with ("\"device_timing\":\"none\"",
                                     "\"device_timing\":\"none\",\"required_semantic_labels\":"
                                     "[\"demo\",\"missing\",\" \",\"demo\"]");
  g_autoptr (WickDocument) doc = parse_lines (meta, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) failed = parse_lines (meta, ROOT_START, TERMINAL_FAILED, NULL);

  assert_codes (doc, "E required_semantic_label_cardinality E empty_required_semantic_label "
                     "E required_semantic_label_cardinality E duplicate_required_semantic_label");
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "required semantic label `missing` must occur exactly once; observed 0");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==, "required semantic labels must not be empty");
  g_assert_cmpstr (nth_issue (doc, 3)->message, ==,
                   "required semantic label `demo` is declared more than once");
  assert_codes (failed, "W capture_failed W open_span W required_semantic_label_cardinality "
                        "W empty_required_semantic_label W required_semantic_label_cardinality "
                        "W duplicate_required_semantic_label");
  g_assert_true (wick_document_get_structurally_valid (failed));
}

static void
test_health_label_classification (void)
{
  g_autofree char *meta = meta_with (
    "\"device_timing\":\"none\"",
    "\"device_timing\":\"none\",\"required_semantic_labels\":[\"demo\",\"fwd\"],"
    "\"gpu_expected_semantic_labels\":[\"demo\",\"demo\",\"\"],\"cpu_only_semantic_labels\":"
    "[\"demo\",\"extra\"]");
  g_autofree char *good_meta
    = meta_with ("\"device_timing\":\"none\"",
                 "\"device_timing\":\"none\",\"required_semantic_labels\":[\"demo\"],"
                 "\"cpu_only_semantic_labels\":[\"demo\"]");
  g_autoptr (WickDocument) doc = parse_lines (meta, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) good = parse_lines (good_meta, ROOT_START, ROOT_END, TERMINAL, NULL);

  assert_codes (doc, "E required_semantic_label_cardinality "
                     "E duplicate_semantic_label_classification "
                     "E overlapping_semantic_label_classification "
                     "E empty_semantic_label_classification "
                     "E unrequired_semantic_label_classification "
                     "E overlapping_semantic_label_classification "
                     "E unrequired_semantic_label_classification "
                     "E incomplete_semantic_label_partition");
  assert_codes (good, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/health/clean", test_health_clean);
  g_test_add_func ("/model/health/train-absent", test_health_train_absent);
  g_test_add_func ("/model/health/provenance", test_health_provenance);
  g_test_add_func ("/model/health/failed-capture", test_health_failed_capture);
  g_test_add_func ("/model/health/memory-pairing-after-loss", test_health_memory_pairing_after_loss);
  g_test_add_func ("/model/health/root-and-measurement", test_health_root_and_measurement);
  g_test_add_func ("/model/health/span-rules-in-id-order", test_health_span_rules_in_id_order);
  g_test_add_func ("/model/health/span-cycle", test_health_span_cycle);
  g_test_add_func ("/model/health/unknown-span-group-order", test_health_unknown_span_group_order);
  g_test_add_func ("/model/health/timing", test_health_timing);
  g_test_add_func ("/model/health/edges", test_health_edges);
  g_test_add_func ("/model/health/memory-pairing", test_health_memory_pairing);
  g_test_add_func ("/model/health/retained-plural", test_health_retained_plural);
  g_test_add_func ("/model/health/memory-same-time", test_health_memory_same_time_keeps_file_order);
  g_test_add_func ("/model/health/required-labels", test_health_required_labels);
  g_test_add_func ("/model/health/label-classification", test_health_label_classification);
  return g_test_run ();
}
