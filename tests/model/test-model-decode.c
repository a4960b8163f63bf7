/* test-model-decode.c — one JSONL line, decoded with serde_json's rules (spec
 * §1–3): every malformed input gets its exact error. */
#include "config.h"

#include "model-test-util.h"

#include <json-glib/json-glib.h>
#include <math.h>

#include "wick-json-scanner.h"
#include "wick-json-scanner-private.h"
#include "wick-document-private.h"

typedef struct
{
  const char *line;
  const char *cause; /* NULL: the line decodes */
} DecodeCase;

#define OP_PREFIX                                                                                  \
  "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"x\",\"dtype\":\"f32\",\"device\":\"cpu\","    \
  "\"duration_ns\":1,\"input_dense_bytes\":0,"
#define GRAD_PREFIX "{\"kind\":\"gradient\",\"event_id\":\"g\",\"root\":\"r\",\"key\":\"k\","
#define TENSOR_PREFIX                                                                              \
  "{\"kind\":\"tensor\",\"span_id\":\"s1\",\"tensor_id\":\"t\",\"shape\":[],\"dtype\":\"f32\","    \
  "\"device\":\"cpu\","

static const DecodeCase cases[] = {
  /* numbers */
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":1e999}", "number out of range" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":-1e999}", "number out of range" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":1e-999}", NULL },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":NaN}", "expected value" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":Infinity}", "expected value" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":-Infinity}", "invalid number" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":01}", "invalid number" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":1.}", "invalid number" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":3}", NULL },
  { OP_PREFIX "\"shape\":[-1]}", "invalid value: integer `-1`, expected u64" },
  { OP_PREFIX "\"shape\":[1.0]}", "invalid type: floating point `1.0`, expected u64" },
  { OP_PREFIX "\"shape\":[1e2]}", "invalid type: floating point `100.0`, expected u64" },
  { OP_PREFIX "\"shape\":[-0]}", "invalid type: floating point `-0.0`, expected u64" },
  { OP_PREFIX "\"shape\":[18446744073709551616]}",
    "invalid type: floating point `1.8446744073709552e19`, expected u64" },
  { OP_PREFIX "\"shape\":[18446744073709551615,0]}", NULL },
  { OP_PREFIX "\"shape\":[\"2\"]}", "invalid type: string \"2\", expected u64" },
  /* syntax */
  { OP_PREFIX "\"shape\":[1],}", "trailing comma" },
  { OP_PREFIX "\"shape\":[1,]}", "trailing comma" },
  { OP_PREFIX "\"shape\":[1] /* c */}", "expected `,` or `}`" },
  { "// comment", "expected value" },
  { OP_PREFIX "\"shape\":[1]} x", "trailing characters" },
  { OP_PREFIX "\"shape\":[1]", "EOF while parsing an object" },
  { "{\"kind\":\"op\",\"span_id\":\"s", "EOF while parsing a string" },
  { "{\"kind\":\"op\",\"span_id\":\"a\tb\"}",
    "control character (\\u0000-\\u001F) found while parsing a string" },
  { "{\"kind\":\"op\",\"span_id\":\"\\x\"}", "invalid escape" },
  { GRAD_PREFIX "\"state\":\"missing\",\"x\":\"\\ud800\"}", "unexpected end of hex escape" },
  { GRAD_PREFIX "\"state\":\"missing\",\"x\":\"\\udc00\"}",
    "lone leading surrogate in hex escape" },
  { GRAD_PREFIX "\"state\":\"missing\",\"x\":\"\\ud83d\\ude00\"}", NULL },
  { "{\"kind\":\"op\" \"span_id\":1}", "expected `,` or `}`" },
  { "{\"kind\" \"op\"}", "expected `:`" },
  { "{1:2}", "key must be a string" },
  { "{\"kind\":tru}", "expected ident" },
  { "5", "invalid type: integer `5`, expected internally tagged enum TraceEvent" },
  { "[]", "invalid type: sequence, expected internally tagged enum TraceEvent" },
  /* the kind tag */
  { "{\"span_id\":\"s1\"}", "missing field `kind`" },
  { "{\"kind\":\"bogus\"}",
    "unknown variant `bogus`, expected one of `meta`, `span_start`, `span_end`, `op`, `tensor`, "
    "`tensor_stats`, `memory`, `device_memory`, `device_interval`, `gradient`, `edge`, "
    "`terminal`" },
  { "{\"kind\":\"Op\"}",
    "unknown variant `Op`, expected one of `meta`, `span_start`, `span_end`, `op`, `tensor`, "
    "`tensor_stats`, `memory`, `device_memory`, `device_interval`, `gradient`, `edge`, "
    "`terminal`" },
  { "{\"kind\":\"wick_mark\",\"timestamp_ns\":3}",
    "unknown variant `wick_mark`, expected one of `meta`, `span_start`, `span_end`, `op`, "
    "`tensor`, `tensor_stats`, `memory`, `device_memory`, `device_interval`, `gradient`, `edge`, "
    "`terminal`" },
  { "{\"kind\":\"op\",\"kind\":\"op\"}", "duplicate field `kind`" },
  { "{\"kind\":7}", "invalid type: integer `7`, expected variant identifier" },
  { "{\"span_id\":\"s1\",\"op_name\":\"x\",\"dtype\":\"f32\",\"device\":\"cpu\",\"duration_ns\":1,"
    "\"input_dense_bytes\":0,\"shape\":[],\"kind\":\"op\"}",
    NULL },
  /* fields */
  { OP_PREFIX "\"shape\":[],\"op_name\":\"y\"}", "duplicate field `op_name`" },
  { OP_PREFIX "\"shape\":[],\"extra\":1,\"extra\":[2]}", NULL },
  { "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"x\",\"dtype\":\"f32\",\"device\":\"cpu\","
    "\"duration_ns\":1,\"shape\":[]}",
    "missing field `input_dense_bytes`" },
  { GRAD_PREFIX "\"state\":\"present\",\"norm\":null}", NULL },
  { "{\"kind\":\"gradient\",\"event_id\":\"g\",\"root\":\"r\",\"param_key\":\"k\",\"state\":"
    "\"missing\"}",
    "missing field `key`" },
  { GRAD_PREFIX "\"state\":\"Present\"}",
    "unknown variant `Present`, expected one of `present`, `missing`, `zero`, `non_finite`" },
  { GRAD_PREFIX "\"state\":null}", "invalid type: null, expected string or map" },
  { GRAD_PREFIX "\"state\":{\"zero\":null}}", NULL },
  { TENSOR_PREFIX "\"category\":null}", "invalid type: null, expected string or map" },
  { TENSOR_PREFIX "\"requires_grad\":null}", "invalid type: null, expected a boolean" },
  { TENSOR_PREFIX "\"label\":null}", NULL },
  /* a literal is read whole, also where only its first byte tells the type */
  { TENSOR_PREFIX "\"requires_grad\":trux}", "expected ident" },
  { TENSOR_PREFIX "\"requires_grad\":falsy}", "expected ident" },
  { TENSOR_PREFIX "\"requires_grad\":tru}", "expected ident" },
  { TENSOR_PREFIX "\"label\":nulx}", "expected ident" },
  { TENSOR_PREFIX "\"label\":nul}", "expected ident" },
  { TENSOR_PREFIX "\"device\":null}", "duplicate field `device`" },
  { "{\"kind\":\"span_end\",\"id\":null}", "invalid type: null, expected a string" },
  { "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":null}",
    "invalid type: null, expected u64" },
  { "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"x\",\"inputs\":null}",
    "invalid type: null, expected a sequence" },
  { "{\"kind\":\"op\",\"span_id\":\"s1\",\"op_name\":\"x\",\"inputs\":[1]}",
    "invalid type: integer `1`, expected a string" },
  /* edges */
  { "{\"kind\":\"edge\",\"from_span\":\"s1\",\"to_span\":\"s1\",\"host_duration_ns\":1}",
    "missing field `edge_kind`" },
  { "{\"kind\":\"edge\",\"edge_kind\":\"cal\"}",
    "unknown variant `cal`, expected `call` or `data`" },
  { "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"edge_kind\":\"data\"}",
    "duplicate field `edge_kind`" },
  { "{\"kind\":\"edge\",\"edge_kind\":\"data\",\"from_tensor\":\"a\"}",
    "missing field `to_tensor`" },
  { "{\"to_tensor\":\"b\",\"edge_kind\":\"data\",\"from_tensor\":\"a\",\"kind\":\"edge\"}", NULL },
  /* nesting */
  { "{\"kind\":\"op\",\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "recursion limit exceeded" },
};

static void
test_decode_cases (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      gboolean ok;

      g_test_message ("case %zu: %s", i, cases[i].line);
      g_assert_true (wick_document_feed_line (doc, META_INFER, strlen (META_INFER), NULL));
      g_assert_true (wick_document_feed_line (doc, "", 0, NULL));
      ok = wick_document_feed_line (doc, cases[i].line, strlen (cases[i].line), &error);
      if (cases[i].cause == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          continue;
        }
      g_assert_false (ok);
      g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID);
      g_assert_cmpstr (parse_message (doc), ==, "parse trace JSONL line 3 from <stream>");
      g_assert_cmpstr (parse_cause (doc), ==, cases[i].cause);
      g_assert_cmpuint (wick_document_get_parse_error (doc)->line, ==, 3);
      g_assert_cmpint (wick_document_get_parse_error (doc)->record_index, ==, -1);
    }
}

static void
test_decode_invalid_utf8 (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  const char bad[] = "{\"kind\":\"span_end\",\"id\":\"\xff\"}";
  const char surrogate[] = "{\"kind\":\"span_end\",\"id\":\"\xed\xa0\x80\"}";
  g_autoptr (WickDocument) doc2 = wick_document_new ();

  g_assert_true (wick_document_feed_line (doc, META_INFER, strlen (META_INFER), NULL));
  g_assert_false (wick_document_feed_line (doc, bad, strlen (bad), NULL));
  g_assert_cmpstr (parse_message (doc), ==, "read trace JSONL line 2 from <stream>");
  g_assert_cmpstr (parse_cause (doc), ==, "stream did not contain valid UTF-8");
  /* nothing after the error is read, the meta before it is kept */
  g_assert_false (wick_document_feed_line (doc, TERMINAL, strlen (TERMINAL), NULL));
  g_assert_cmpstr (wick_document_get_run_id (doc), ==, "run");

  g_assert_false (wick_document_feed_line (doc2, surrogate, strlen (surrogate), NULL));
  g_assert_cmpstr (parse_message (doc2), ==, "read trace JSONL line 1 from <stream>");
}

static void
test_decode_whitespace (void)
{
  /* lines are trimmed with Rust's str::trim (Unicode White_Space), inside JSON
   * only JSON whitespace is allowed; a trailing \r is dropped */
  const char *nbsp = "\xc2\xa0\v" ROOT_START "\xe3\x80\x80\r";
  const char *inner_ff = "{\"kind\":\f\"op\"}";
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (WickDocument) doc2 = wick_document_new ();

  g_assert_true (wick_document_feed_line (doc, META_INFER, strlen (META_INFER), NULL));
  g_assert_true (wick_document_feed_line (doc, nbsp, strlen (nbsp), NULL));
  g_assert_true (wick_document_feed_line (doc, "  \t\r", 4, NULL));
  g_assert_cmpuint (wick_document_get_n_records (doc), ==, 2);
  g_assert_cmpuint (wick_document_get_n_lines (doc), ==, 3);

  g_assert_false (wick_document_feed_line (doc2, inner_ff, strlen (inner_ff), NULL));
  g_assert_cmpstr (parse_cause (doc2), ==, "expected value");
}

static void
test_decode_escaped_strings (void)
{
  const char *line
    = "{\"kind\":\"span_start\",\"id\":\"s\\u0031\",\"name\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\","
      "\"start_ns\":0,\"span_kind\":\"function\",\"measured\":true}";
  g_autoptr (WickDocument) doc = parse_lines (META_INFER, line, ROOT_END, TERMINAL, NULL);
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);

  g_assert_null (parse_message (doc));
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (wick_document_str (doc, spans[0].id), ==, "s1");
  g_assert_cmpstr (wick_document_str (doc, spans[0].name), ==, "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80");
}

static void
test_decode_meta_fields (void)
{
  g_autofree char *with_identity = meta_with (
    "\"tags\":{}",
    "\"tags\":{\"b\":\"2\",\"a\":\"1\"},\"comparison_identity\":{\"workload_id\":\"w\","
    "\"model_id\":\"m\",\"config_id\":\"c\",\"data_id\":\"d\",\"seed_policy\":\"s\","
    "\"physical_batch\":8,\"accumulation_steps\":1,\"precision\":\"f32\",\"device_state\":\"x\"}");
  g_autofree char *no_tags = meta_with (",\"tags\":{}", "");
  g_autofree char *null_tags = meta_with ("\"tags\":{}", "\"tags\":null");
  g_autofree char *bad_scope
    = meta_with ("\"measurement_scope\":\"unknown\"", "\"measurement_scope\":\"everything\"");
  g_autofree char *no_operations = meta_with ("\"operations\":\"none\",", "");
  g_autoptr (WickDocument) doc = parse_lines (with_identity, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickDocument) d2 = parse_lines (no_tags, NULL);
  g_autoptr (WickDocument) d3 = parse_lines (null_tags, NULL);
  g_autoptr (WickDocument) d4 = parse_lines (bad_scope, NULL);
  g_autoptr (WickDocument) d5 = parse_lines (no_operations, NULL);
  const WickTraceMeta *meta = wick_document_get_meta (doc);

  g_assert_null (parse_message (doc));
  g_assert_true (meta->comparison_identity.present);
  g_assert_cmpuint (meta->comparison_identity.physical_batch, ==, 8);
  g_assert_cmpuint (meta->n_tags, ==, 2);
  g_assert_cmpstr (parse_cause (d2), ==, "missing field `tags`");
  g_assert_cmpstr (parse_cause (d3), ==, "invalid type: null, expected a map");
  g_assert_cmpstr (parse_cause (d4), ==,
                   "unknown variant `everything`, expected one of `unknown`, `profiled_work`, "
                   "`production_equivalent`");
  g_assert_cmpstr (parse_cause (d5), ==, "missing field `operations`");
}

/* The model writes JSON with libwick's formatting (core/wick-json.h compiled
 * into both): serde_json's escapes, U+FFFD for a byte of invalid UTF-8 (the
 * output is valid JSON whatever it quotes), ryu's float layout, null for a
 * float that is not finite (as serde_json writes one). */
static void
test_shared_formatting (void)
{
  g_autoptr (GString) out = g_string_new ("[");
  const char *text = "a\"\\\b\f\n\x01\x7f\xc3\xa9 \xc3 \xff";
  wick_json_append_string (out, text, strlen (text));
  g_string_append_c (out, ',');
  wick_json_format_f64 (out, 1e16);
  g_string_append_c (out, ',');
  wick_json_format_f64 (out, 1.5e-7);
  g_string_append_c (out, ',');
  wick_json_format_f64 (out, -0.0);
  g_string_append_c (out, ',');
  wick_json_format_f64 (out, INFINITY);
  g_string_append_c (out, ',');
  wick_json_format_f64 (out, NAN);
  g_string_append_c (out, ']');
  g_assert_cmpstr (out->str, ==,
                   "[\"a\\\"\\\\\\b\\f\\n\\u0001\x7f\xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\","
                   "1e16,1.5e-7,-0.0,null,null]");
  g_assert_true (g_utf8_validate (out->str, -1, NULL));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out->str, -1, NULL));

  g_string_truncate (out, 0);
  wick_rust_debug_f64 (out, 1e16);
  g_string_append_c (out, ' ');
  wick_rust_display_f64 (out, 1.5e-7);
  g_assert_cmpstr (out->str, ==, "1e16 0.00000015");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/decode/cases", test_decode_cases);
  g_test_add_func ("/model/decode/invalid-utf8", test_decode_invalid_utf8);
  g_test_add_func ("/model/decode/whitespace", test_decode_whitespace);
  g_test_add_func ("/model/decode/escaped-strings", test_decode_escaped_strings);
  g_test_add_func ("/model/decode/meta-fields", test_decode_meta_fields);
  g_test_add_func ("/model/decode/shared-formatting", test_shared_formatting);
  return g_test_run ();
}
