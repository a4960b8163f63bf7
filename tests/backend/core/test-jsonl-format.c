/* test-jsonl-format.c — trace/10 lines exactly as candle-graph writes them:
 * one golden line per record kind, float and string formatting, and the
 * stateful formatter's rules (synthesized starts, terminal last). */
#include "common/wick-json.h"
#include "wick-session-internal.h"

#include <glib.h>
#include <math.h>

static char *
format_record (const WickRingRecord *record)
{
  size_t length = wick_ring_record_format (record, NULL, 0);
  char *line = g_malloc (length + 1);
  g_assert_cmpuint (wick_ring_record_format (record, line, length + 1), ==, length);
  return line;
}

static void
assert_line (const WickRingRecord *record, const char *expected)
{
  g_autofree char *line = format_record (record);
  g_assert_cmpstr (line, ==, expected);
}

static void
assert_double (double value, const char *expected)
{
  char buffer[64];
  wick_format_double (value, buffer);
  g_assert_cmpstr (buffer, ==, expected);
}

static void
test_floats (void)
{
  assert_double (2.0, "2.0");
  assert_double (0.42, "0.42");
  assert_double (-0.0, "-0.0");
  assert_double (0.0, "0.0");
  assert_double (1.5, "1.5");
  assert_double (-3.25, "-3.25");
  assert_double (0.1 + 0.2, "0.30000000000000004");
  assert_double (1e15, "1000000000000000.0");
  assert_double (1e16, "1e16");
  assert_double (1.2345e20, "1.2345e20");
  assert_double (0.0001, "0.0001");
  assert_double (1e-5, "0.00001");
  assert_double (1e-6, "1e-6");
  assert_double (1.5e-7, "1.5e-7");
  assert_double (123456.789, "123456.789");
  assert_double (5e-324, "5e-324");
  assert_double (1.7976931348623157e308, "1.7976931348623157e308");
  assert_double (1.0 / 3.0, "0.3333333333333333");
  assert_double (100.0, "100.0");

  WickJson json;
  wick_json_init (&json);
  wick_json_double (&json, NAN);
  wick_json_raw (&json, ",");
  wick_json_double (&json, -INFINITY);
  g_assert_cmpstr (json.data, ==, "null,null");
  wick_json_clear (&json);
}

static void
test_strings (void)
{
  WickJson json;
  wick_json_init (&json);
  wick_json_string (&json, "a\"b\\c\n\t\r\b\f\x01\x1f\x7f/é€😀");
  g_assert_cmpstr (json.data, ==, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\x7f/é€😀\"");
  wick_json_reset (&json);
  /* invalid UTF-8: a lone continuation, a truncated sequence, an overlong
   * encoding and a surrogate each become U+FFFD */
  wick_json_string (&json, "x\x80y\xe2\x82z\xc0\xafw\xed\xa0\x80");
  g_assert_cmpstr (json.data, ==,
                   "\"x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbdw"
                   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  g_assert_true (g_utf8_validate (json.data, -1, NULL));
  wick_json_clear (&json);
}

static const uint64_t shape[] = { 2, 3 };

static void
test_golden_spans (void)
{
  WickRingRecord r = { .kind = WICK_RING_RECORD_SPAN_START };
  r.span = (WickRingSpan){ .id = 1, .name = "train::update", .span_kind = WICK_SPAN_FUNCTION };
  assert_line (&r, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"train::update\","
                   "\"start_ns\":0,\"span_kind\":\"function\",\"measured\":false}");
  r.span = (WickRingSpan){ .id = 7,
                           .parent = 2,
                           .name = "fc1",
                           .span_kind = WICK_SPAN_MODULE,
                           .step = WICK_STEP_BACKWARD,
                           .measured = true,
                           .start_ns = 1500 };
  assert_line (&r, "{\"kind\":\"span_start\",\"id\":\"s7\",\"parent_id\":\"s2\",\"name\":\"fc1\","
                   "\"start_ns\":1500,\"span_kind\":\"module\",\"measured\":true,"
                   "\"step\":\"backward\"}");
  r.kind = WICK_RING_RECORD_SPAN_END;
  r.span.duration_ns = 250;
  assert_line (&r, "{\"kind\":\"span_end\",\"id\":\"s7\",\"duration_ns\":250}");
}

static void
test_golden_op_tensor (void)
{
  const char *inputs[] = { "a", "b" };
  WickRingRecord r = { .kind = WICK_RING_RECORD_OP };
  r.op = (WickOpRecord){ .span = 3,
                         .op_name = "matmul",
                         .inputs = inputs,
                         .n_inputs = 2,
                         .output = "c",
                         .shape = shape,
                         .rank = 2,
                         .dtype = "f32",
                         .device = "cpu",
                         .duration_ns = 1200,
                         .timestamp_ns = 40,
                         .has_output_dense_bytes = true,
                         .output_dense_bytes = 24,
                         .input_dense_bytes = 48 };
  assert_line (&r, "{\"kind\":\"op\",\"span_id\":\"s3\",\"op_name\":\"matmul\",\"inputs\":[\"a\","
                   "\"b\"],\"output\":\"c\",\"shape\":[2,3],\"dtype\":\"f32\",\"device\":\"cpu\","
                   "\"duration_ns\":1200,\"timestamp_ns\":40,\"output_dense_bytes\":24,"
                   "\"input_dense_bytes\":48}");
  r.op.output = NULL;
  r.op.n_inputs = 0;
  r.op.rank = 0;
  r.op.has_output_dense_bytes = false;
  assert_line (&r, "{\"kind\":\"op\",\"span_id\":\"s3\",\"op_name\":\"matmul\",\"inputs\":[],"
                   "\"shape\":[],\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1200,"
                   "\"timestamp_ns\":40,\"input_dense_bytes\":48}");

  r.kind = WICK_RING_RECORD_TENSOR;
  r.tensor = (WickTensorRecord){ .span = 3,
                                 .tensor_id = "t1",
                                 .label = "fc1.weight",
                                 .shape = shape,
                                 .rank = 2,
                                 .dtype = "bf16",
                                 .device = "cuda:0",
                                 .requires_grad = true,
                                 .has_dense_bytes = true,
                                 .dense_bytes = 12,
                                 .category = WICK_CATEGORY_PARAMETER };
  assert_line (&r, "{\"kind\":\"tensor\",\"span_id\":\"s3\",\"tensor_id\":\"t1\",\"label\":"
                   "\"fc1.weight\",\"shape\":[2,3],\"dtype\":\"bf16\",\"device\":\"cuda:0\","
                   "\"requires_grad\":true,\"dense_bytes\":12,\"category\":\"parameter\"}");
  r.tensor.label = NULL;
  r.tensor.has_dense_bytes = false;
  r.tensor.requires_grad = false;
  r.tensor.category = WICK_CATEGORY_OTHER;
  assert_line (&r, "{\"kind\":\"tensor\",\"span_id\":\"s3\",\"tensor_id\":\"t1\",\"shape\":[2,3],"
                   "\"dtype\":\"bf16\",\"device\":\"cuda:0\",\"requires_grad\":false,"
                   "\"category\":\"other\"}");

  r.kind = WICK_RING_RECORD_TENSOR_STATS;
  r.tensor_stats = (WickTensorStatsRecord){ .span = 3,
                                            .label = "logits",
                                            .shape = shape,
                                            .rank = 2,
                                            .dtype = "f32",
                                            .elements = 6,
                                            .non_finite = 0,
                                            .rms = 2.0,
                                            .abs_max = 3.5,
                                            .mean = -0.0 };
  assert_line (&r, "{\"kind\":\"tensor_stats\",\"span_id\":\"s3\",\"label\":\"logits\","
                   "\"shape\":[2,3],\"dtype\":\"f32\",\"elements\":6,\"non_finite\":0,"
                   "\"rms\":2.0,\"abs_max\":3.5,\"mean\":-0.0}");
}

static void
test_golden_memory (void)
{
  WickRingRecord r = { .kind = WICK_RING_RECORD_MEMORY };
  r.memory = (WickMemoryRecord){ .timestamp_ns = 90,
                                 .storage_id = "storage:0x1",
                                 .tensor_id = "t1",
                                 .span = 4,
                                 .op_name = "relu",
                                 .device = "cpu",
                                 .bytes = 24,
                                 .action = WICK_MEMORY_ALLOC,
                                 .shape = shape,
                                 .rank = 2,
                                 .dtype = "f32",
                                 .category = WICK_CATEGORY_ACTIVATION };
  assert_line (&r, "{\"kind\":\"memory\",\"timestamp_ns\":90,\"storage_id\":\"storage:0x1\","
                   "\"tensor_id\":\"t1\",\"span_id\":\"s4\",\"op_name\":\"relu\",\"device\":"
                   "\"cpu\",\"bytes\":24,\"action\":\"alloc\",\"shape\":[2,3],\"dtype\":\"f32\","
                   "\"category\":\"activation\"}");
  r.memory.op_name = NULL;
  r.memory.action = WICK_MEMORY_FREE;
  r.memory.rank = 0;
  r.memory.category = WICK_CATEGORY_GRADIENT;
  assert_line (&r, "{\"kind\":\"memory\",\"timestamp_ns\":90,\"storage_id\":\"storage:0x1\","
                   "\"tensor_id\":\"t1\",\"span_id\":\"s4\",\"device\":\"cpu\",\"bytes\":24,"
                   "\"action\":\"free\",\"shape\":[],\"dtype\":\"f32\",\"category\":\"gradient\"}");

  r.kind = WICK_RING_RECORD_DEVICE_MEMORY;
  r.device_memory = (WickDeviceMemoryRecord){ .timestamp_ns = 5,
                                              .device = "cuda:0",
                                              .has_used_bytes = true,
                                              .used_bytes = 10,
                                              .has_capacity_bytes = true,
                                              .capacity_bytes = 80 };
  assert_line (&r, "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:0\","
                   "\"used_bytes\":10,\"capacity_bytes\":80}");
  r.device_memory.has_free_bytes = r.device_memory.has_reserved_bytes = true;
  r.device_memory.free_bytes = 70;
  r.device_memory.reserved_bytes = 12;
  assert_line (&r, "{\"kind\":\"device_memory\",\"timestamp_ns\":5,\"device\":\"cuda:0\","
                   "\"used_bytes\":10,\"free_bytes\":70,\"reserved_bytes\":12,"
                   "\"capacity_bytes\":80}");

  r.kind = WICK_RING_RECORD_DEVICE_INTERVAL;
  r.device_interval = (WickDeviceIntervalRecord){ .span = 2,
                                                  .device = "cuda:0",
                                                  .stream_id = "7",
                                                  .clock_id = "cuda-event",
                                                  .backend = "cuda",
                                                  .start_ns = 100,
                                                  .duration_ns = 30 };
  assert_line (&r, "{\"kind\":\"device_interval\",\"span_id\":\"s2\",\"device\":\"cuda:0\","
                   "\"stream_id\":\"7\",\"clock_id\":\"cuda-event\",\"backend\":\"cuda\","
                   "\"start_ns\":100,\"duration_ns\":30}");
}

static void
test_golden_gradient_edge_terminal (void)
{
  WickRingRecord r = { .kind = WICK_RING_RECORD_GRADIENT };
  r.gradient.event_number = 3;
  r.gradient.root = "parameters";
  r.gradient.key = "trunk.weight";
  r.gradient.state = WICK_GRADIENT_PRESENT;
  r.gradient.has_norm = true;
  r.gradient.norm = 0.42;
  assert_line (&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-3\",\"root\":\"parameters\","
                   "\"key\":\"trunk.weight\",\"state\":\"present\",\"norm\":0.42}");
  r.gradient.state = WICK_GRADIENT_ZERO;
  r.gradient.norm = 0.0;
  assert_line (&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-3\",\"root\":\"parameters\","
                   "\"key\":\"trunk.weight\",\"state\":\"zero\",\"norm\":0.0}");
  r.gradient.norm = INFINITY;
  assert_line (&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-3\",\"root\":\"parameters\","
                   "\"key\":\"trunk.weight\",\"state\":\"zero\",\"norm\":null}");
  r.gradient.state = WICK_GRADIENT_MISSING;
  r.gradient.has_norm = false;
  assert_line (&r, "{\"kind\":\"gradient\",\"event_id\":\"gradient-3\",\"root\":\"parameters\","
                   "\"key\":\"trunk.weight\",\"state\":\"missing\"}");

  r.kind = WICK_RING_RECORD_CALL_EDGE;
  r.call_edge.from = 2;
  r.call_edge.to = 3;
  r.call_edge.host_duration_ns = 77;
  assert_line (&r, "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"from_span\":\"s2\","
                   "\"to_span\":\"s3\",\"host_duration_ns\":77}");
  r.kind = WICK_RING_RECORD_DATA_EDGE;
  r.data_edge.from_tensor = "t1";
  r.data_edge.to_tensor = "t2";
  assert_line (&r, "{\"kind\":\"edge\",\"edge_kind\":\"data\",\"from_tensor\":\"t1\","
                   "\"to_tensor\":\"t2\"}");

  r.kind = WICK_RING_RECORD_TERMINAL;
  r.terminal.outcome = WICK_OUTCOME_COMPLETE;
  r.terminal.timestamp_ns = 900;
  r.terminal.reason = NULL;
  assert_line (&r, "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":900}");
  r.terminal.outcome = WICK_OUTCOME_FAILED;
  r.terminal.reason = "out of memory";
  assert_line (&r, "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":900,"
                   "\"reason\":\"out of memory\"}");
}

/* Integers as printf writes them at every digit count and around every
 * boundary of the 8-digits-at-a-time writer (10^8, 10^16, UINT64_MAX). */
static void
test_integers (void)
{
  guint64 values[200];
  guint n = 0;
  guint64 power = 1;
  for (int digits = 1; digits <= 20; digits++)
    {
      values[n++] = power;
      values[n++] = power - 1;
      values[n++] = power + 1;
      values[n++] = power * 3 + 7;
      if (digits < 20)
        power *= 10;
    }
  values[n++] = G_MAXUINT64;
  values[n++] = G_MAXUINT64 - 1;
  values[n++] = G_GUINT64_CONSTANT (12345678901234567890);
  values[n++] = G_GUINT64_CONSTANT (10000000000000000) * 1844;
  for (guint i = 0; i < n; i++)
    {
      WickRingRecord r = { .kind = WICK_RING_RECORD_CALL_EDGE };
      r.call_edge.from = values[i] | 1;
      r.call_edge.to = 2;
      r.call_edge.host_duration_ns = values[i];
      g_autofree char *expected = g_strdup_printf (
        "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"from_span\":\"s%" G_GUINT64_FORMAT
        "\",\"to_span\":\"s2\",\"host_duration_ns\":%" G_GUINT64_FORMAT "}",
        values[i] | 1, values[i]);
      assert_line (&r, expected);
    }
}

static void
test_golden_extensions (void)
{
  WickRingRecord r = { .kind = WICK_RING_RECORD_EXTENSION };
  r.extension.kind = "wick_mark";
  r.extension.timestamp_ns = 12;
  r.extension.json_fields = "\"label\":\"epoch 2\"";
  assert_line (&r, "{\"kind\":\"wick_mark\",\"timestamp_ns\":12,\"label\":\"epoch 2\"}");
  r.extension.json_fields = "";
  assert_line (&r, "{\"kind\":\"wick_mark\",\"timestamp_ns\":12}");

  r.kind = WICK_RING_RECORD_DROPPED;
  r.ring = 1;
  r.dropped.count = 5;
  r.dropped.first_ns = 100;
  r.dropped.last_ns = 180;
  r.dropped.total = 9;
  assert_line (&r, "{\"kind\":\"wick_dropped\",\"timestamp_ns\":180,\"ring\":1,\"count\":5,"
                   "\"first_ns\":100,\"last_ns\":180,\"total\":9}");
  r.kind = WICK_RING_RECORD_LOST;
  r.lost.count = 4;
  r.lost.after_ns = 77;
  assert_line (&r, "{\"kind\":\"wick_lost\",\"timestamp_ns\":77,\"ring\":1,\"count\":4}");

  char small[8];
  size_t needed = wick_ring_record_format (&r, small, sizeof small);
  g_assert_cmpuint (needed, ==,
                    strlen ("{\"kind\":\"wick_lost\",\"timestamp_ns\":77,\"ring\":1,"
                            "\"count\":4}"));
  g_assert_cmpstr (small, ==, "{\"kind\"");
}

/* ---------------------------------------------------------------------------
 * The stateful formatter
 */

static void
collect_line (const char *line, size_t length, void *user_data)
{
  GString *out = user_data;
  g_string_append_len (out, line, (gssize)length);
  g_string_append_c (out, '\n');
}

static void
test_formatter_keeps_stream_parseable (void)
{
  WickJsonlFormatter *f = wick_jsonl_formatter_new (false);
  GString *out = g_string_new (NULL);
  WickRingRecord r = { .kind = WICK_RING_RECORD_SPAN_START };
  r.span = (WickRingSpan){ .id = 2, .parent = 1, .name = "x" };
  wick_jsonl_formatter_feed (f, &r, collect_line, out); /* before meta: left out */
  WickRingRecord meta = { .kind = WICK_RING_RECORD_META };
  meta.meta.line = "{\"kind\":\"meta\"}";
  wick_jsonl_formatter_feed (f, &meta, collect_line, out);
  wick_jsonl_formatter_feed (f, &meta, collect_line, out); /* second meta: left out */
  r.span = (WickRingSpan){ .id = 1, .name = "root" };
  wick_jsonl_formatter_feed (f, &r, collect_line, out);
  wick_jsonl_formatter_feed (f, &r, collect_line, out); /* duplicate start: left out */
  WickRingRecord end = { .kind = WICK_RING_RECORD_SPAN_END };
  end.span = (WickRingSpan){ .id = 5,
                             .parent = 1,
                             .name = "lost-start",
                             .start_ns = 10,
                             .duration_ns = 20,
                             .step = WICK_STEP_FORWARD };
  wick_jsonl_formatter_feed (f, &end, collect_line, out); /* start synthesized */
  WickRingRecord terminal = { .kind = WICK_RING_RECORD_TERMINAL };
  terminal.terminal.outcome = WICK_OUTCOME_FAILED;
  terminal.terminal.timestamp_ns = 15;
  terminal.terminal.reason = "stopped";
  wick_jsonl_formatter_feed (f, &terminal, collect_line, out); /* held back */
  WickRingRecord mark = { .kind = WICK_RING_RECORD_EXTENSION };
  mark.extension.kind = "wick_mark";
  mark.extension.timestamp_ns = 40;
  mark.extension.json_fields = "";
  wick_jsonl_formatter_feed (f, &mark, collect_line, out);
  g_assert_true (wick_jsonl_formatter_has_terminal (f));
  wick_jsonl_formatter_finish (f, "unused", collect_line, out);
  g_assert_cmpstr (out->str, ==,
                   "{\"kind\":\"meta\"}\n"
                   "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,"
                   "\"span_kind\":\"function\",\"measured\":false}\n"
                   "{\"kind\":\"span_start\",\"id\":\"s5\",\"parent_id\":\"s1\",\"name\":"
                   "\"lost-start\",\"start_ns\":10,\"span_kind\":\"function\",\"measured\":false,"
                   "\"step\":\"forward\"}\n"
                   "{\"kind\":\"span_end\",\"id\":\"s5\",\"duration_ns\":20}\n"
                   /* the mark has no line of its own (candle-graph rejects
                    * unknown kinds): the next record, here the terminal,
                    * carries it */
                   "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":30,"
                   "\"reason\":\"stopped\",\"wick_records\":[{\"kind\":\"wick_mark\","
                   "\"timestamp_ns\":40}]}\n");
  g_assert_cmpuint (wick_jsonl_formatter_get_lines (f), ==, 5);
  g_assert_cmpuint (wick_jsonl_formatter_get_skipped (f), ==, 3);
  wick_jsonl_formatter_free (f);
  g_string_free (out, TRUE);
}

static void
test_formatter_strict_and_missing_terminal (void)
{
  WickJsonlFormatter *f = wick_jsonl_formatter_new (true);
  GString *out = g_string_new (NULL);
  WickRingRecord meta = { .kind = WICK_RING_RECORD_META };
  meta.meta.line = "{\"kind\":\"meta\"}";
  wick_jsonl_formatter_feed (f, &meta, collect_line, out);
  WickRingRecord mark = { .kind = WICK_RING_RECORD_EXTENSION };
  mark.extension.kind = "wick_mark";
  mark.extension.json_fields = "";
  wick_jsonl_formatter_feed (f, &mark, collect_line, out);
  WickRingRecord memory = { .kind = WICK_RING_RECORD_MEMORY };
  memory.memory = (WickMemoryRecord){ .timestamp_ns = 500,
                                      .storage_id = "s",
                                      .tensor_id = "t",
                                      .span = 1,
                                      .device = "cpu",
                                      .dtype = "u8" };
  wick_jsonl_formatter_feed (f, &memory, collect_line, out);
  wick_jsonl_formatter_finish (f, "capture detached before the process finished", collect_line,
                               out);
  wick_jsonl_formatter_finish (f, "twice", collect_line, out);
  g_assert_cmpstr (out->str, ==,
                   "{\"kind\":\"meta\"}\n"
                   "{\"kind\":\"memory\",\"timestamp_ns\":500,\"storage_id\":\"s\",\"tensor_id\":"
                   "\"t\",\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":0,\"action\":\"alloc\","
                   "\"shape\":[],\"dtype\":\"u8\",\"category\":\"parameter\"}\n"
                   "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":500,\"reason\":"
                   "\"capture detached before the process finished\"}\n");
  wick_jsonl_formatter_free (f);
  g_string_free (out, TRUE);
}

/* No line of a default trace has a wick_ kind (candle-graph
 * rejects unknown kinds); the Wick facts ride in wick_ keys of standard
 * records, and a loss makes the terminal failed with the reason. */
static void
test_formatter_wick_keys (void)
{
  for (int strict = 0; strict <= 1; strict++)
    {
      WickJsonlFormatter *f = wick_jsonl_formatter_new (strict);
      GString *out = g_string_new (NULL);
      WickRingRecord meta = { .kind = WICK_RING_RECORD_META };
      meta.meta.line = "{\"kind\":\"meta\"}";
      wick_jsonl_formatter_feed (f, &meta, collect_line, out);
      WickRingRecord thread = { .kind = WICK_RING_RECORD_THREAD };
      thread.thread.number = 2;
      thread.thread.os_tid = 4242;
      thread.thread.name = "loader \"q\"";
      thread.thread.timestamp_ns = 5;
      wick_jsonl_formatter_feed (f, &thread, collect_line, out);
      thread.thread.number = 3; /* records no span: named at the end */
      thread.thread.os_tid = 4343;
      thread.thread.name = "idle";
      wick_jsonl_formatter_feed (f, &thread, collect_line, out);
      WickRingRecord mark = { .kind = WICK_RING_RECORD_EXTENSION };
      mark.extension.kind = "wick_mark";
      mark.extension.timestamp_ns = 7;
      mark.extension.json_fields = "\"label\":\"go\"";
      wick_jsonl_formatter_feed (f, &mark, collect_line, out);
      WickRingRecord start = { .kind = WICK_RING_RECORD_SPAN_START };
      start.span = (WickRingSpan){ .id = 1, .name = "root", .start_ns = 10, .thread = 2 };
      wick_jsonl_formatter_feed (f, &start, collect_line, out);
      WickRingRecord dropped = { .kind = WICK_RING_RECORD_DROPPED };
      dropped.dropped
        = (typeof (dropped.dropped)){ .count = 4, .first_ns = 11, .last_ns = 12, .total = 4 };
      wick_jsonl_formatter_feed (f, &dropped, collect_line, out);
      WickRingRecord end = start;
      end.kind = WICK_RING_RECORD_SPAN_END;
      end.span.duration_ns = 10;
      wick_jsonl_formatter_feed (f, &end, collect_line, out);
      WickRingRecord terminal = { .kind = WICK_RING_RECORD_TERMINAL };
      terminal.terminal.outcome = WICK_OUTCOME_COMPLETE;
      terminal.terminal.timestamp_ns = 30;
      wick_jsonl_formatter_feed (f, &terminal, collect_line, out);
      wick_jsonl_formatter_finish (f, "unused", collect_line, out);
      /* every line starts with its kind (candle-graph's layout) */
      g_assert_null (strstr (out->str, "\n{\"kind\":\"wick_"));
      if (strict)
        g_assert_cmpstr (out->str, ==,
                         "{\"kind\":\"meta\"}\n"
                         "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":10,"
                         "\"span_kind\":\"function\",\"measured\":false}\n"
                         "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":10}\n"
                         "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":30,"
                         "\"reason\":\"the session completed, but records were lost: 4 dropped by "
                         "the recorder, 0 lost by the reader\"}\n");
      else
        g_assert_cmpstr (
          out->str, ==,
          "{\"kind\":\"meta\"}\n"
          "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":10,"
          "\"span_kind\":\"function\",\"measured\":false,\"wick_thread\":2,"
          "\"wick_thread_name\":\"loader \\\"q\\\"\",\"wick_os_tid\":4242,"
          "\"wick_records\":[{\"kind\":\"wick_mark\",\"timestamp_ns\":7,\"label\":\"go\"}]}\n"
          "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":10,\"wick_records\":["
          "{\"kind\":\"wick_dropped\",\"timestamp_ns\":12,\"ring\":0,\"count\":4,"
          "\"first_ns\":11,\"last_ns\":12,\"total\":4}]}\n"
          "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":30,"
          "\"reason\":\"the session completed, but records were lost: 4 dropped by the "
          "recorder, 0 lost by the reader\",\"wick_dropped\":4,\"wick_lost\":0,"
          "\"wick_records\":[{\"kind\":\"wick_thread\",\"thread\":3,\"os_tid\":4343,"
          "\"name\":\"idle\",\"timestamp_ns\":5}]}\n");
      wick_jsonl_formatter_free (f);
      g_string_free (out, TRUE);
    }
}

/* Records bound to a record of their own thread: a capture's
 * records ride on its span's span_start and span_end and a weight move on the
 * memory record after it, whatever the other rings write in between; an
 * unbound mark still takes the next record; what is still waiting at the end
 * goes on the terminal. */
static void
test_formatter_bound_records (void)
{
  WickJsonlFormatter *f = wick_jsonl_formatter_new (false);
  GString *out = g_string_new (NULL);
  WickRingRecord meta = { .kind = WICK_RING_RECORD_META };
  meta.meta.line = "{\"kind\":\"meta\"}";
  wick_jsonl_formatter_feed (f, &meta, collect_line, out);
  WickRingRecord root = { .kind = WICK_RING_RECORD_SPAN_START, .ring = 0 };
  root.span = (WickRingSpan){ .id = 1, .name = "root", .start_ns = 1 };
  wick_jsonl_formatter_feed (f, &root, collect_line, out);

  WickRingRecord capture = { .kind = WICK_RING_RECORD_EXTENSION, .ring = 1 };
  capture.extension.kind = "wick_stage_capture";
  capture.extension.timestamp_ns = 2;
  capture.extension.json_fields = "\"on\":\"span_start\",\"stage\":\"x\"";
  wick_jsonl_formatter_feed (f, &capture, collect_line, out);
  /* ring 0 records first: it does not take ring 1's record */
  WickRingRecord other = { .kind = WICK_RING_RECORD_SPAN_START, .ring = 0 };
  other.span = (WickRingSpan){ .id = 2, .parent = 1, .name = "other", .start_ns = 3 };
  wick_jsonl_formatter_feed (f, &other, collect_line, out);
  WickRingRecord span = { .kind = WICK_RING_RECORD_SPAN_START, .ring = 1 };
  span.span = (WickRingSpan){ .id = 3, .parent = 1, .name = "stage capture: x", .start_ns = 4 };
  wick_jsonl_formatter_feed (f, &span, collect_line, out);
  WickRingRecord cert = { .kind = WICK_RING_RECORD_EXTENSION, .ring = 1 };
  cert.extension.kind = "wick_stage_certification";
  cert.extension.timestamp_ns = 5;
  cert.extension.json_fields = "\"on\":\"span_end\",\"span\":\"s3\",\"stage\":\"x\"";
  wick_jsonl_formatter_feed (f, &cert, collect_line, out);
  WickRingRecord mark = { .kind = WICK_RING_RECORD_EXTENSION, .ring = 1 };
  mark.extension.kind = "wick_mark";
  mark.extension.timestamp_ns = 5;
  mark.extension.json_fields = "\"label\":\"m\"";
  wick_jsonl_formatter_feed (f, &mark, collect_line, out);
  WickRingRecord other_end = other;
  other_end.kind = WICK_RING_RECORD_SPAN_END;
  other_end.span.duration_ns = 4;
  wick_jsonl_formatter_feed (f, &other_end, collect_line, out);
  WickRingRecord span_end = span;
  span_end.kind = WICK_RING_RECORD_SPAN_END;
  span_end.span.duration_ns = 2;
  wick_jsonl_formatter_feed (f, &span_end, collect_line, out);

  WickRingRecord evict = { .kind = WICK_RING_RECORD_EXTENSION, .ring = 2 };
  evict.extension.kind = "wick_weight_evict";
  evict.extension.timestamp_ns = 8;
  evict.extension.json_fields = "\"on\":\"memory\",\"module\":\"net\"";
  wick_jsonl_formatter_feed (f, &evict, collect_line, out);
  WickRingRecord sample = { .kind = WICK_RING_RECORD_DEVICE_MEMORY, .ring = 0 };
  sample.device_memory = (WickDeviceMemoryRecord){ .timestamp_ns = 9, .device = "cpu",
                                                   .has_used_bytes = true, .used_bytes = 1 };
  wick_jsonl_formatter_feed (f, &sample, collect_line, out);
  WickRingRecord memory = { .kind = WICK_RING_RECORD_MEMORY, .ring = 2 };
  memory.memory = (WickMemoryRecord){ .timestamp_ns = 9, .storage_id = "w", .tensor_id = "t",
                                      .span = 1, .device = "cpu", .bytes = 4,
                                      .action = WICK_MEMORY_FREE, .dtype = "f32",
                                      .category = WICK_CATEGORY_PARAMETER };
  wick_jsonl_formatter_feed (f, &memory, collect_line, out);
  /* bound to a ring that records nothing more: the terminal carries it */
  WickRingRecord restore = evict;
  restore.ring = 3;
  restore.extension.kind = "wick_weight_restore";
  wick_jsonl_formatter_feed (f, &restore, collect_line, out);
  WickRingRecord root_end = root;
  root_end.kind = WICK_RING_RECORD_SPAN_END;
  root_end.span.duration_ns = 20;
  wick_jsonl_formatter_feed (f, &root_end, collect_line, out);
  WickRingRecord terminal = { .kind = WICK_RING_RECORD_TERMINAL };
  terminal.terminal.outcome = WICK_OUTCOME_COMPLETE;
  terminal.terminal.timestamp_ns = 30;
  wick_jsonl_formatter_feed (f, &terminal, collect_line, out);
  wick_jsonl_formatter_finish (f, "unused", collect_line, out);
  g_assert_cmpstr (
    out->str, ==,
    "{\"kind\":\"meta\"}\n"
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":1,"
    "\"span_kind\":\"function\",\"measured\":false}\n"
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"other\","
    "\"start_ns\":3,\"span_kind\":\"function\",\"measured\":false}\n"
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"stage capture: x\","
    "\"start_ns\":4,\"span_kind\":\"function\",\"measured\":false,\"wick_records\":["
    "{\"kind\":\"wick_stage_capture\",\"timestamp_ns\":2,\"on\":\"span_start\",\"stage\":\"x\"}]}\n"
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":4,\"wick_records\":["
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\"}]}\n"
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":2,\"wick_records\":["
    "{\"kind\":\"wick_stage_certification\",\"timestamp_ns\":5,\"on\":\"span_end\","
    "\"span\":\"s3\",\"stage\":\"x\"}]}\n"
    "{\"kind\":\"device_memory\",\"timestamp_ns\":9,\"device\":\"cpu\",\"used_bytes\":1}\n"
    "{\"kind\":\"memory\",\"timestamp_ns\":9,\"storage_id\":\"w\",\"tensor_id\":\"t\","
    "\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":4,\"action\":\"free\",\"shape\":[],\"dtype\":\"f32\","
    "\"category\":\"parameter\",\"wick_records\":[{\"kind\":\"wick_weight_evict\","
    "\"timestamp_ns\":8,\"on\":\"memory\",\"module\":\"net\"}]}\n"
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":20}\n"
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":30,\"wick_records\":["
    "{\"kind\":\"wick_weight_restore\",\"timestamp_ns\":8,\"on\":\"memory\","
    "\"module\":\"net\"}]}\n");
  wick_jsonl_formatter_free (f);
  g_string_free (out, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/json/floats", test_floats);
  g_test_add_func ("/core/json/strings", test_strings);
  g_test_add_func ("/core/jsonl/spans", test_golden_spans);
  g_test_add_func ("/core/jsonl/op-tensor-stats", test_golden_op_tensor);
  g_test_add_func ("/core/jsonl/memory-device", test_golden_memory);
  g_test_add_func ("/core/jsonl/gradient-edge-terminal", test_golden_gradient_edge_terminal);
  g_test_add_func ("/core/jsonl/extensions", test_golden_extensions);
  g_test_add_func ("/core/jsonl/integers", test_integers);
  g_test_add_func ("/core/formatter/parseable-stream", test_formatter_keeps_stream_parseable);
  g_test_add_func ("/core/formatter/strict-missing-terminal",
                   test_formatter_strict_and_missing_terminal);
  g_test_add_func ("/core/formatter/wick-keys", test_formatter_wick_keys);
  g_test_add_func ("/core/formatter/bound-records", test_formatter_bound_records);
  return g_test_run ();
}
