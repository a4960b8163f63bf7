/* test-control-message.c — the control protocol's codec: every malformed
 * request gets the exact error sentence, frames outside 1..64 KiB are refused,
 * and what the reply writer writes reads back. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "common/wick-utf8.h"
#include "control/wick-control-message.h"
#include "control/wick-control-message-private.h"

static void
assert_parse_error (const char *body, const char *expected)
{
  WickControlRequest request;
  WickError error = { "" };
  gboolean ok = wick_control_request_parse (&request, body, strlen (body), &error);
  g_assert_false (ok);
  g_assert_cmpstr (error.message, ==, expected);
  g_assert_cmpuint (request.n_fields, ==, 0);
  g_assert_null (request.storage);
}

static void
test_parse_valid (void)
{
  const char *body
    = " {\"v\": 1, \"command\" : \"capture\", \"stage\":\"den\\u00e9\\ud83d\\ude00\","
      "\"gate_cos\":0.999,\"warmup\":3,\"big\":18446744073709551615,"
      "\"neg\":-2.5e-1,\"flag\":true,\"none\":null} ";
  WickControlRequest request;
  WickError error = { "" };
  g_assert_true (wick_control_request_parse (&request, body, strlen (body), &error));
  g_assert_cmpstr (request.command, ==, "capture");
  g_assert_cmpuint (request.n_fields, ==, 9);
  g_assert_cmpstr (wick_control_request_get_string (&request, "stage", TRUE, &error), ==,
                   "den\xc3\xa9\xf0\x9f\x98\x80");
  double gate = 0;
  g_assert_true (wick_control_request_get_number (&request, "gate_cos", &gate, &error));
  g_assert_cmpfloat (gate, ==, 0.999);
  guint64 warmup = 0;
  g_assert_true (wick_control_request_get_uint (&request, "warmup", 1000, &warmup, &error));
  g_assert_cmpuint (warmup, ==, 3);
  const WickControlField *big = wick_control_request_get (&request, "big");
  g_assert_true (big->is_integer);
  g_assert_cmpuint (big->integer, ==, G_MAXUINT64);
  const WickControlField *neg = wick_control_request_get (&request, "neg");
  g_assert_false (neg->is_integer);
  g_assert_cmpfloat (neg->number, ==, -0.25);
  g_assert_true (wick_control_request_get (&request, "flag")->boolean);
  g_assert_cmpint (wick_control_request_get (&request, "none")->type, ==, WICK_CONTROL_VALUE_NULL);
  /* Type errors name the member and the command. */
  g_assert_false (wick_control_request_get_uint (&request, "gate_cos", 10, &warmup, &error));
  g_assert_cmpstr (error.message, ==,
                   "member \"gate_cos\" of command \"capture\" must be an integer from 0 to 10");
  g_assert_null (wick_control_request_get_string (&request, "warmup", TRUE, &error));
  g_assert_cmpstr (error.message, ==, "member \"warmup\" of command \"capture\" must be a string");
  g_assert_null (wick_control_request_get_string (&request, "module", TRUE, &error));
  g_assert_cmpstr (error.message, ==, "command \"capture\" needs the string member \"module\"");
  wick_control_request_clear (&request);
}

static void
test_parse_malformed (void)
{
  assert_parse_error ("[1]",
                      "malformed control message at byte 0: a request must be a JSON object");
  assert_parse_error ("{\"v\":1,\"command\":\"list\"", "malformed control message at byte 23: "
                                                       "unterminated object");
  assert_parse_error ("{\"v\":1,\"command\":\"list\"} x",
                      "malformed control message at byte 25: trailing characters after the object");
  assert_parse_error ("{\"v\":1,\"v\":1,\"command\":\"list\"}",
                      "malformed control message at byte 7: duplicate member \"v\"");
  assert_parse_error ("{\"v\":1,\"command\":\"list\",\"x\":{\"y\":1}}",
                      "malformed control message at byte 28: nested objects and arrays are not "
                      "allowed in requests");
  assert_parse_error ("{\"v\":1,\"command\":\"list\",\"x\":01}",
                      "malformed control message at byte 28: number with a leading zero");
  assert_parse_error ("{\"v\":1,\"command\":\"list\",\"x\":1e999}",
                      "malformed control message at byte 28: number out of range");
  assert_parse_error ("{\"v\":1,\"command\":\"list\",\"x\":NaN}",
                      "malformed control message at byte 28: expected a string, number, true, "
                      "false or null");
  assert_parse_error ("{\"v\":1,\"command\":\"l\xc3\x28st\"}",
                      "malformed control message at byte 19: invalid UTF-8 in string");
  assert_parse_error (
    "{\"v\":1,\"command\":\"\\ud800\"}",
    "malformed control message at byte 24: unpaired high surrogate in \\u escape");
  assert_parse_error ("{\"v\":1,\"command\":\"a\\u0000\"}",
                      "malformed control message at byte 25: NUL character in string");
  assert_parse_error ("{\"v\":1,\"command\":\"a\tb\"}",
                      "malformed control message at byte 19: control character 0x09 in string");
  assert_parse_error ("{\"v\":1,\"command\":\"list\",}",
                      "malformed control message at byte 24: expected a member name in double "
                      "quotes");
}

static void
test_parse_envelope (void)
{
  assert_parse_error ("{\"command\":\"list\"}", "control message lacks the protocol version \"v\"");
  assert_parse_error ("{\"v\":2,\"command\":\"list\"}",
                      "unsupported control protocol version: this session speaks \"v\": 1");
  assert_parse_error ("{\"v\":1}", "control message lacks a \"command\" string");
  assert_parse_error ("{\"v\":1,\"command\":7}", "control message lacks a \"command\" string");
}

static void
test_parse_limits (void)
{
  WickControlRequest request;
  WickError error = { "" };
  g_assert_false (wick_control_request_parse (&request, "", 0, &error));
  g_assert_cmpstr (error.message, ==, "control message of 0 bytes: the limit is 1 to 65536 bytes");
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_DATA);
  GString *many = g_string_new ("{\"v\":1,\"command\":\"list\"");
  for (int i = 0; i < 40; i++)
    g_string_append_printf (many, ",\"m%d\":%d", i, i);
  g_string_append_c (many, '}');
  g_assert_false (wick_control_request_parse (&request, many->str, many->len, &error));
  g_assert_cmpstr (error.message, ==,
                   "malformed control message at byte 274: more than 32 members");
  g_string_free (many, TRUE);

  unsigned char header[4];
  guint32 length = 0;
  wick_control_frame_header (65537, header);
  g_assert_false (wick_control_frame_length (header, &length, &error));
  g_assert_cmpstr (error.message, ==,
                   "control frame announces 65537 bytes: the limit is 1 to 65536 bytes");
  wick_control_frame_header (0, header);
  g_assert_false (wick_control_frame_length (header, &length, &error));
  g_assert_cmpstr (error.message, ==,
                   "control frame announces 0 bytes: the limit is 1 to 65536 bytes");
  wick_control_frame_header (65536, header);
  g_assert_true (wick_control_frame_length (header, &length, &error));
  g_assert_cmpuint (length, ==, 65536);
  g_assert_cmpuint (header[2], ==, 1);
}

static void
test_writer (void)
{
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_int (&writer, "v", 1);
  wick_control_writer_bool (&writer, "ok", TRUE);
  wick_control_writer_string (&writer, "s", "a\"b\\c\n\x01");
  wick_control_writer_double (&writer, "x", 0.1);
  wick_control_writer_double (&writer, "inf", 1.0 / 0.0);
  wick_control_writer_begin_array (&writer, "list");
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_uint (&writer, "n", G_MAXUINT64);
  wick_control_writer_end_object (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_end_object (&writer);
  wick_control_writer_end_array (&writer);
  wick_control_writer_end_object (&writer);
  g_assert_false (writer.overflow);
  g_assert_cmpstr (writer.data, ==,
                   "{\"v\":1,\"ok\":true,\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"x\":0.1,\"inf\":null,"
                   "\"list\":[{\"n\":18446744073709551615},{}]}");
  wick_control_writer_clear (&writer);

  /* A reply never grows past the protocol's limit: the overflow is flagged. */
  wick_control_writer_init (&writer);
  wick_control_writer_begin_array (&writer, NULL);
  for (int i = 0; i < 20000; i++)
    wick_control_writer_string (&writer, NULL, "0123456789");
  g_assert_true (writer.overflow);
  g_assert_cmpuint (writer.length, <=, 65536);
  wick_control_writer_clear (&writer);
}

/* Cuts of error text land between characters. */
static void
test_utf8_cut (void)
{
  /* "a" then é (2 bytes), € (3 bytes), 😀 (4 bytes). */
  const char *text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
  g_assert_cmpuint (wick_utf8_cut (text, 1), ==, 1);
  g_assert_cmpuint (wick_utf8_cut (text, 2), ==, 1);
  g_assert_cmpuint (wick_utf8_cut (text, 3), ==, 3);
  g_assert_cmpuint (wick_utf8_cut (text, 4), ==, 3);
  g_assert_cmpuint (wick_utf8_cut (text, 5), ==, 3);
  g_assert_cmpuint (wick_utf8_cut (text, 6), ==, 6);
  for (size_t max = 7; max <= 9; max++)
    g_assert_cmpuint (wick_utf8_cut (text, max), ==, 6);
  g_assert_cmpuint (wick_utf8_cut (text, 10), ==, 10);
  g_assert_cmpuint (wick_utf8_cut (text, 100), ==, 11);
  for (size_t max = 0; max <= 12; max++)
    {
      char cut[32];
      snprintf (cut, sizeof cut, "%.*s", WICK_UTF8_CUT (text, max));
      g_assert_true (g_utf8_validate (cut, -1, NULL));
      /* What snprintf cuts at the end of a buffer, trim_end repairs. */
      char small[32];
      snprintf (small, max + 1, "%s", text);
      wick_utf8_trim_end (small);
      g_assert_true (g_utf8_validate (small, -1, NULL));
      g_assert_cmpuint (strlen (small), ==, wick_utf8_cut (text, max));
    }
  /* The writer never lets invalid UTF-8 through: U+FFFD instead. */
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_string (&writer, "error", "cut \xe2\x82 here \xff");
  wick_control_writer_end_object (&writer);
  g_assert_cmpstr (writer.data, ==,
                   "{\"error\":\"cut \xef\xbf\xbd\xef\xbf\xbd here \xef\xbf\xbd\"}");
  wick_control_writer_clear (&writer);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/control/message/valid", test_parse_valid);
  g_test_add_func ("/control/message/malformed", test_parse_malformed);
  g_test_add_func ("/control/message/envelope", test_parse_envelope);
  g_test_add_func ("/control/message/limits", test_parse_limits);
  g_test_add_func ("/control/message/writer", test_writer);
  g_test_add_func ("/control/message/utf8-cut", test_utf8_cut);
  return g_test_run ();
}
