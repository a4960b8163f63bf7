/* test-common.c — backend/common, the code libwick shares with the model:
 * wick-json-reader, wick-json, wick-utf8, wick-dtype-table, wick-spellings: every reader error
 * has its code and offsets, strict UTF-8 is strict, the writer's bound holds,
 * and the number formatting reads back. The control protocol's and the weight
 * store's own sentences are pinned in test-control-message and
 * test-safetensors; the model's use of the same code in test-model-decode. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wick-dtype-table.h"
#include "common/wick-spellings.h"
#include "common/wick-json-reader.h"
#include "common/wick-json.h"
#include "common/wick-utf8.h"
#include "wick/wick.h"

typedef struct
{
  const char *text;
  WickJsonReadError error;
  size_t start, at;
} ReadCase;

/* Reads one value of any kind the lexer knows at the cursor. */
static bool
read_token (WickJsonReader *reader, char *scratch, size_t *out_length)
{
  int c = wick_json_reader_peek (reader);
  if (c == '"')
    return wick_json_reader_string (reader, scratch, out_length, WICK_JSON_READ_NO_NUL);
  if (c == 't')
    return wick_json_reader_literal (reader, "true");
  if (c == 'f')
    return wick_json_reader_literal (reader, "false");
  if (c == 'n')
    return wick_json_reader_literal (reader, "null");
  WickJsonNumberText number;
  return wick_json_reader_number (reader, &number);
}

static void
test_reader_errors (void)
{
  static const ReadCase cases[] = {
    { "\"abc", WICK_JSON_READ_UNTERMINATED_STRING, 0, 4 },
    { "\"a\x01\"", WICK_JSON_READ_CONTROL_CHARACTER, 0, 2 },
    { "\"a\xc0\x80\"", WICK_JSON_READ_INVALID_UTF8, 0, 2 },
    { "\"\xed\xa0\x80\"", WICK_JSON_READ_INVALID_UTF8, 0, 1 },     /* encoded surrogate */
    { "\"\xf4\x90\x80\x80\"", WICK_JSON_READ_INVALID_UTF8, 0, 1 }, /* above U+10FFFF */
    { "\"\xe2\x82\"", WICK_JSON_READ_INVALID_UTF8, 0, 1 },         /* cut short */
    { "\"ab\\", WICK_JSON_READ_TRUNCATED_ESCAPE, 3, 4 },
    { "\"\\x\"", WICK_JSON_READ_INVALID_ESCAPE, 1, 2 },
    { "\"\\u12", WICK_JSON_READ_TRUNCATED_HEX, 1, 3 },
    { "\"\\u12g4\"", WICK_JSON_READ_INVALID_HEX, 1, 5 },
    { "\"\\udc00\"", WICK_JSON_READ_LONE_LOW_SURROGATE, 1, 7 },
    { "\"\\ud800\"", WICK_JSON_READ_LONE_HIGH_SURROGATE, 1, 7 },
    { "\"\\ud800\\u0041\"", WICK_JSON_READ_LONE_HIGH_SURROGATE, 1, 13 },
    { "\"a\\u0000\"", WICK_JSON_READ_NUL_CHARACTER, 2, 8 },
    { "-", WICK_JSON_READ_NO_DIGITS, 0, 1 },
    { "-x", WICK_JSON_READ_NO_DIGITS, 0, 1 },
    { "-01", WICK_JSON_READ_LEADING_ZERO, 0, 0 },
    { "1.", WICK_JSON_READ_NO_FRACTION_DIGITS, 0, 2 },
    { "1.5e+", WICK_JSON_READ_NO_EXPONENT_DIGITS, 0, 5 },
    { "nul", WICK_JSON_READ_INVALID_LITERAL, 0, 0 },
    { "fals", WICK_JSON_READ_INVALID_LITERAL, 0, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ReadCase *c = &cases[i];
      size_t length = strlen (c->text);
      /* The input is copied into a buffer of exactly its size, so a read past
       * the end is caught by ASan in the sanitizer build. */
      char *copy = g_memdup2 (c->text, length);
      char scratch[64];
      size_t out_length;
      WickJsonReader reader;
      wick_json_reader_init (&reader, copy, length);
      g_test_message ("case %zu", i);
      g_assert_false (read_token (&reader, scratch, &out_length));
      g_assert_cmpint (reader.error, ==, c->error);
      g_assert_cmpuint (reader.error_start, ==, c->start);
      g_assert_cmpuint (reader.error_at, ==, c->at);
      g_free (copy);
    }
}

static void
test_reader_values (void)
{
  const char *text = "\"d\\u00e9\\ud83d\\ude00\\/\\n\" 18446744073709551615 18446744073709551616 "
                     "-0 -2.5e-3 true \"\\u0000\"";
  WickJsonReader reader;
  char scratch[128];
  size_t length;
  wick_json_reader_init (&reader, text, strlen (text));
  g_assert_true (wick_json_reader_string (&reader, scratch, &length, WICK_JSON_READ_NO_NUL));
  g_assert_cmpstr (scratch, ==, "d\xc3\xa9\xf0\x9f\x98\x80/\n");
  g_assert_cmpuint (length, ==, 9);

  WickJsonNumberText number;
  uint64_t value = 0;
  wick_json_reader_skip_whitespace (&reader);
  g_assert_true (wick_json_reader_number (&reader, &number));
  g_assert_true (wick_json_number_u64 (&reader, &number, &value));
  g_assert_cmpuint (value, ==, G_MAXUINT64);
  wick_json_reader_skip_whitespace (&reader);
  g_assert_true (wick_json_reader_number (&reader, &number));
  g_assert_true (number.integer);
  g_assert_false (wick_json_number_u64 (&reader, &number, &value)); /* 2^64 */
  wick_json_reader_skip_whitespace (&reader);
  g_assert_true (wick_json_reader_number (&reader, &number));
  g_assert_true (number.negative);
  g_assert_false (wick_json_number_u64 (&reader, &number, &value));
  wick_json_reader_skip_whitespace (&reader);
  g_assert_true (wick_json_reader_number (&reader, &number));
  g_assert_false (number.integer);
  g_assert_cmpuint (number.length, ==, 7);
  g_assert_cmpfloat (g_ascii_strtod (text + number.start, NULL), ==, -2.5e-3);
  wick_json_reader_skip_whitespace (&reader);
  g_assert_true (wick_json_reader_literal (&reader, "true"));
  wick_json_reader_skip_whitespace (&reader);
  /* "\u0000" is kept when NO_NUL is not asked for; the length counts it. */
  g_assert_true (wick_json_reader_string (&reader, scratch, &length, 0));
  g_assert_cmpuint (length, ==, 1);
  g_assert_cmpint (scratch[0], ==, 0);
  g_assert_true (wick_json_reader_at_end (&reader));
}

static void
test_utf8 (void)
{
  g_assert_true (wick_utf8_validate ("", 0));
  g_assert_true (wick_utf8_validate ("plain ascii text, longer than eight", 35));
  g_assert_true (wick_utf8_validate ("a\0b", 3));
  g_assert_true (wick_utf8_validate ("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", 13));
  static const char *const bad[] = {
    "\x80",
    "\xc1\xbf",
    "\xe0\x9f\xbf",
    "\xed\xa0\x80",
    "\xf0\x8f\xbf\xbf",
    "\xf4\x90\x80\x80",
    "\xf5\x80\x80\x80",
    "\xe2\x82",
    "abcdefgh\xff",
  };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (wick_utf8_validate (bad[i], strlen (bad[i])));
      g_assert_cmpuint (wick_utf8_sequence_length ((const unsigned char *)bad[i] + (i == 8 ? 8 : 0),
                                                   strlen (bad[i]) - (i == 8 ? 8 : 0)),
                        ==, 0);
    }
  /* The same verdicts as GLib's validator on every two-byte sequence and
   * every three-byte sequence starting E0, ED or EF. */
  for (unsigned a = 0x80; a < 0x100; a++)
    for (unsigned b = 0; b < 0x100; b++)
      {
        char two[2] = { (char)a, (char)b };
        g_assert_cmpint (wick_utf8_validate (two, 2), ==, g_utf8_validate_len (two, 2, NULL));
        if (a == 0xe0 || a == 0xed || a == 0xef || a == 0xf0 || a == 0xf4)
          {
            char four[4] = { (char)a, (char)b, (char)0x80, (char)0x80 };
            size_t n = a >= 0xf0 ? 4 : 3;
            g_assert_cmpint (wick_utf8_validate (four, n), ==, g_utf8_validate_len (four, n, NULL));
          }
      }
  char out[4];
  g_assert_cmpuint (wick_utf8_encode (0x41, out), ==, 1);
  g_assert_cmpuint (wick_utf8_encode (0xe9, out), ==, 2);
  g_assert_cmpmem (out, 2, "\xc3\xa9", 2);
  g_assert_cmpuint (wick_utf8_encode (0x20ac, out), ==, 3);
  g_assert_cmpmem (out, 3, "\xe2\x82\xac", 3);
  g_assert_cmpuint (wick_utf8_encode (0x1f600, out), ==, 4);
  g_assert_cmpmem (out, 4, "\xf0\x9f\x98\x80", 4);
}

static void
test_writer (void)
{
  WickJson json;
  wick_json_init (&json);
  wick_json_raw (&json, "[");
  wick_json_string (&json, "q\"b\\\b\f\n\r\t\x01\x7f \xe2\x82\xac \xe2\x82 \xff");
  wick_json_raw (&json, ",");
  wick_json_i64 (&json, G_MININT64);
  wick_json_raw (&json, ",");
  wick_json_i64 (&json, 42);
  wick_json_raw (&json, ",");
  wick_json_double (&json, NAN);
  wick_json_raw (&json, "]");
  g_assert_false (json.failed);
  /* serde_json's escapes; each byte of invalid UTF-8 becomes U+FFFD. */
  g_assert_cmpstr (json.data, ==,
                   "[\"q\\\"b\\\\\\b\\f\\n\\r\\t\\u0001\x7f \xe2\x82\xac \xef\xbf\xbd\xef\xbf\xbd "
                   "\xef\xbf\xbd\",-9223372036854775808,42,null]");
  g_assert_true (g_utf8_validate (json.data, -1, NULL));
  wick_json_clear (&json);

  /* A bound: what fits is written whole, the first thing that does not fit
   * sets failed and nothing more is written. */
  wick_json_init (&json);
  json.limit = 10;
  wick_json_string (&json, "12345678"); /* 10 bytes with its quotes */
  g_assert_false (json.failed);
  g_assert_cmpuint (json.length, ==, 10);
  wick_json_raw (&json, ",");
  g_assert_true (json.failed);
  g_assert_cmpuint (json.length, ==, 10);
  wick_json_reset (&json);
  wick_json_string (&json, "\n\n\n"); /* 8 bytes escaped: fits although 6n+2 does not */
  g_assert_false (json.failed);
  g_assert_cmpstr (json.data, ==, "\"\\n\\n\\n\"");
  wick_json_reset (&json);
  wick_json_string (&json, "\x01\x01"); /* 14 bytes escaped */
  g_assert_true (json.failed);
  g_assert_cmpuint (json.length, ==, 0);
  wick_json_clear (&json);
}

static void
test_numbers (void)
{
  static const struct
  {
    double value;
    const char *text;
  } cases[] = {
    { 0.0, "0.0" },
    { -0.0, "-0.0" },
    { 2.0, "2.0" },
    { 0.42, "0.42" },
    { 1e16, "1e16" },
    { 1e15, "1000000000000000.0" },
    { 1.5e-7, "1.5e-7" },
    { 0.0001, "0.0001" },
    { 0.1 + 0.2, "0.30000000000000004" },
    { 5e-324, "5e-324" },
    { 1.7976931348623157e308, "1.7976931348623157e308" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char buffer[40];
      size_t n = wick_format_double (cases[i].value, buffer);
      g_assert_cmpstr (buffer, ==, cases[i].text);
      g_assert_cmpuint (n, ==, strlen (cases[i].text));
      g_assert_cmpfloat (strtod (buffer, NULL), ==, cases[i].value);
    }
  char digits[24];
  int n_digits = 0;
  g_assert_cmpint (wick_format_shortest_digits (1234.5, digits, &n_digits), ==, 3);
  g_assert_cmpstr (digits, ==, "12345");
  g_assert_cmpint (n_digits, ==, 5);
  char u64[24];
  g_assert_cmpuint (wick_format_u64 (G_MAXUINT64, u64), ==, 20);
  g_assert_cmpmem (u64, 20, "18446744073709551615", 20);
  /* hex as printf's PRIx64 writes it, for every length */
  guint64 hex_cases[] = { 0, 1, 0xf, 0x10, 0xabc, 0x7f00dead0000, G_MAXUINT64 };
  for (guint i = 0; i < G_N_ELEMENTS (hex_cases); i++)
    for (guint shift = 0; shift < 64; shift += 4)
      {
        guint64 value = hex_cases[i] >> shift;
        char hex[17] = { 0 }, expected[24];
        gsize n = wick_format_hex_u64 (value, hex);
        g_snprintf (expected, sizeof expected, "%" G_GINT64_MODIFIER "x", value);
        g_assert_cmpuint (n, ==, strlen (expected));
        g_assert_cmpmem (hex, n, expected, strlen (expected));
      }
}

/* The fewest digits, found one precision at a time: what the binary search
 * must give. */
static int
shortest_digits_linear (double value, char digits[24], int *n_digits)
{
  char buffer[40];
  for (int precision = 0; precision <= 16; precision++)
    {
      snprintf (buffer, sizeof buffer, "%.*e", precision, value);
      if (strtod (buffer, NULL) == value || precision == 16)
        break;
    }
  int n = 0;
  const char *p = buffer;
  for (; *p != '\0' && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9' && n < 23)
      digits[n++] = *p;
  int exponent = *p == 'e' ? atoi (p + 1) : 0;
  while (n > 1 && digits[n - 1] == '0')
    n--;
  digits[n] = '\0';
  *n_digits = n;
  return exponent;
}

static void
check_shortest (double value)
{
  char expected[24], digits[24];
  int expected_n = 0, n = 0;
  int expected_e = shortest_digits_linear (value, expected, &expected_n);
  g_assert_cmpint (wick_format_shortest_digits (value, digits, &n), ==, expected_e);
  g_assert_cmpstr (digits, ==, expected);
  g_assert_cmpint (n, ==, expected_n);
}

/* Random bit patterns, short decimals, powers of two and their neighbours,
 * subnormals: the same digits as a search one precision at a time. */
static void
test_shortest_digits (void)
{
  GRand *rand = g_rand_new_with_seed (21);
  for (int i = 0; i < 100000; i++)
    {
      guint64 bits
        = ((guint64)g_rand_int (rand) << 32 | g_rand_int (rand)) & ~(G_GUINT64_CONSTANT (1) << 63);
      double value;
      memcpy (&value, &bits, sizeof value);
      if (isfinite (value) && value != 0)
        check_shortest (value);
      check_shortest ((double)g_rand_int_range (rand, 1, 1000000)
                      / pow (10, g_rand_int_range (rand, 0, 12)));
      check_shortest (g_rand_double (rand));
    }
  for (int e = -1074; e <= 1023; e++)
    {
      double power = ldexp (1, e);
      check_shortest (power);
      check_shortest (nextafter (power, 0));
      if (e < 1023)
        check_shortest (nextafter (power, INFINITY));
    }
  check_shortest (5e-324);
  check_shortest (1.7976931348623157e308);
  g_rand_free (rand);
}

/* Every control byte: the five short escapes serde_json writes, \u00XX for
 * the rest; DEL and everything above stand for themselves. */
static void
test_escape_controls (void)
{
  static const char *const short_forms[32] = {
    [0x08] = "\\b", [0x09] = "\\t", [0x0a] = "\\n", [0x0c] = "\\f", [0x0d] = "\\r",
  };
  for (unsigned c = 0; c < 0x80; c++)
    {
      char in[1] = { (char)c };
      char out[WICK_JSON_ESCAPED_MAX (1) + 1];
      size_t n = wick_json_escape (in, 1, out);
      out[n] = '\0';
      char expected[16];
      if (c < 0x20 && short_forms[c] != NULL)
        g_snprintf (expected, sizeof expected, "\"%s\"", short_forms[c]);
      else if (c < 0x20)
        g_snprintf (expected, sizeof expected, "\"\\u%04x\"", c);
      else if (c == '"' || c == '\\')
        g_snprintf (expected, sizeof expected, "\"\\%c\"", c);
      else
        g_snprintf (expected, sizeof expected, "\"%c\"", c);
      g_test_message ("byte 0x%02x", c);
      g_assert_cmpstr (out, ==, expected);
      g_assert_cmpuint (n, <=, WICK_JSON_ESCAPED_MAX (1));
    }
  /* a NUL inside the text is written, not taken for the end */
  char out[64];
  size_t n = wick_json_escape ("a\0b", 3, out);
  g_assert_cmpmem (out, n, "\"a\\u0000b\"", 10);
}

/* Invalid UTF-8 becomes one U+FFFD a byte, never passed through: encoded
 * surrogates (what CESU-8 writes for a character above U+FFFF), overlong
 * forms, bytes above U+10FFFF, a sequence cut short by the end or by an
 * ASCII byte. Valid text around them is kept whole. */
static void
test_escape_invalid_utf8 (void)
{
  static const struct
  {
    const char *in;
    const char *out;
  } cases[] = {
    { "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },  /* U+D800 */
    { "\xed\xbf\xbf", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },  /* U+DFFF */
    { "\xed\x9f\xbf", "\"\xed\x9f\xbf\"" },                          /* U+D7FF: valid */
    { "\xee\x80\x80", "\"\xee\x80\x80\"" },                          /* U+E000: valid */
    { "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },                  /* overlong '/' */
    { "\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
    { "\xe2\x82", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },                  /* cut by the end */
    { "\xe2\x82x", "\"\xef\xbf\xbd\xef\xbf\xbdx\"" },                /* cut by ASCII */
    { "a\xff\xe2\x82\xac", "\"a\xef\xbf\xbd\xe2\x82\xac\"" },        /* one bad byte */
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      size_t length = strlen (cases[i].in);
      char *out = g_malloc (WICK_JSON_ESCAPED_MAX (length) + 1);
      size_t n = wick_json_escape (cases[i].in, length, out);
      g_assert_cmpuint (n, <=, WICK_JSON_ESCAPED_MAX (length));
      out[n] = '\0';
      g_test_message ("case %zu", i);
      g_assert_cmpstr (out, ==, cases[i].out);
      g_assert_true (g_utf8_validate (out, -1, NULL));
      g_free (out);
    }
  /* The writer takes the same path: what it writes is always valid UTF-8. */
  WickJson json;
  wick_json_init (&json);
  wick_json_string (&json, "\xed\xa0\x80\xed\xb0\x80");
  g_assert_cmpstr (json.data, ==,
                   "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  wick_json_clear (&json);
  /* The worst case the bound allows for: every byte a control byte. */
  char worst[8];
  memset (worst, 0x01, sizeof worst);
  char out[WICK_JSON_ESCAPED_MAX (8)];
  g_assert_cmpuint (wick_json_escape (worst, 8, out), ==, WICK_JSON_ESCAPED_MAX (8));
}

/* The lexer on numbers at the edges of the grammar: what it reads, where it
 * stops (the rest is the caller's: "1.5x" is a number followed by x), and
 * the u64 boundary. */
static void
test_reader_number_edges (void)
{
  static const struct
  {
    const char *text;
    gboolean ok;
    size_t length; /* of the number read, when ok */
    gboolean integer;
    gboolean negative;
    WickJsonReadError error;
  } cases[] = {
    { "0", TRUE, 1, TRUE, FALSE, 0 },
    { "-0", TRUE, 2, TRUE, TRUE, 0 },
    { "0.0e0", TRUE, 5, FALSE, FALSE, 0 },
    { "1E+2", TRUE, 4, FALSE, FALSE, 0 },
    { "1e-0", TRUE, 4, FALSE, FALSE, 0 },
    { "-1.25E-300", TRUE, 10, FALSE, TRUE, 0 },
    { "1e999", TRUE, 5, FALSE, FALSE, 0 }, /* the range is the caller's */
    { "12,", TRUE, 2, TRUE, FALSE, 0 },
    { "1.5x", TRUE, 3, FALSE, FALSE, 0 },
    { "0x10", TRUE, 1, TRUE, FALSE, 0 },
    { "00", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_LEADING_ZERO },
    { "01.5", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_LEADING_ZERO },
    { "-00", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_LEADING_ZERO },
    { "+1", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_DIGITS },
    { ".5", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_DIGITS },
    { "-.5", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_DIGITS },
    { "1.e3", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_FRACTION_DIGITS },
    { "1e", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_EXPONENT_DIGITS },
    { "1e-", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_EXPONENT_DIGITS },
    { "1e+-2", FALSE, 0, FALSE, FALSE, WICK_JSON_READ_NO_EXPONENT_DIGITS },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      size_t length = strlen (cases[i].text);
      char *copy = g_memdup2 (cases[i].text, length); /* exactly its size, for ASan */
      WickJsonReader reader;
      WickJsonNumberText number;
      wick_json_reader_init (&reader, copy, length);
      g_test_message ("case %zu: %s", i, cases[i].text);
      g_assert_cmpint (wick_json_reader_number (&reader, &number), ==, cases[i].ok);
      if (cases[i].ok)
        {
          g_assert_cmpuint (number.length, ==, cases[i].length);
          g_assert_cmpuint (reader.pos, ==, cases[i].length);
          g_assert_cmpint (number.integer, ==, cases[i].integer);
          g_assert_cmpint (number.negative, ==, cases[i].negative);
        }
      else
        g_assert_cmpint (reader.error, ==, cases[i].error);
      g_free (copy);
    }

  static const struct
  {
    const char *digits;
    gboolean fits;
    guint64 value;
  } u64[] = {
    { "0", TRUE, 0 },
    { "18446744073709551615", TRUE, G_MAXUINT64 },
    { "18446744073709551616", FALSE, 0 },
    { "18446744073709551620", FALSE, 0 }, /* the last digit alone overflows */
    { "99999999999999999999", FALSE, 0 },
    { "000000000000000000000001", TRUE, 1 }, /* raw digits: zeros are not the grammar's */
    { "", FALSE, 0 },
    { "12a", FALSE, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (u64); i++)
    {
      uint64_t value = 7;
      g_test_message ("digits %s", u64[i].digits);
      g_assert_cmpint (wick_json_digits_u64 (u64[i].digits, strlen (u64[i].digits), &value), ==,
                       u64[i].fits);
      g_assert_cmpuint (value, ==, u64[i].fits ? u64[i].value : 7);
    }
}

/* wick_json_number: wick_json_double's digits, integral values without ".0". */
static void
test_writer_number (void)
{
  static const struct
  {
    double value;
    const char *text;
  } cases[] = {
    { 2.0, "2" },        { -3.0, "-3" },  { 0.0, "0" },         { -0.0, "-0" },
    { 0.999, "0.999" },  { 1.02, "1.02" }, { 1e15, "1000000000000000" },
    { 1e16, "1e16" },    { 1.5e-7, "1.5e-7" }, { 0.1 + 0.2, "0.30000000000000004" },
    { NAN, "null" },     { -INFINITY, "null" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      WickJson json;
      wick_json_init (&json);
      wick_json_number (&json, cases[i].value);
      g_assert_cmpstr (json.data, ==, cases[i].text);
      if (isfinite (cases[i].value))
        g_assert_cmpfloat (strtod (json.data, NULL), ==, cases[i].value);
      wick_json_clear (&json);
    }
}

static void
test_dtype_table (void)
{
  g_assert_cmpuint (wick_dtype_table_size ("bf16", 4), ==, 2);
  g_assert_cmpuint (wick_dtype_table_size ("BF16", 4), ==, 2);
  g_assert_cmpuint (wick_dtype_table_size ("f64x", 3), ==, 8); /* the length decides */
  g_assert_cmpuint (wick_dtype_table_size ("bool", 4), ==, 1);
  g_assert_cmpuint (wick_dtype_table_size (" f32", 4), ==, 0); /* no trimming here */
  g_assert_cmpuint (wick_dtype_table_size ("F8_E4M3", 7), ==, 0);
  g_assert_cmpuint (wick_dtype_table_size (NULL, 0), ==, 0);

  /* Every safetensors dtype has one row, its name leads back to it, and a
   * name with a trace spelling has the trace's size. */
  for (int d = 0; d < WICK_N_DTYPES; d++)
    {
      const WickDtypeRow *row = wick_dtype_row_for_weight (d);
      g_assert_nonnull (row);
      g_assert_nonnull (row->safetensors);
      g_assert_true (wick_dtype_row_for_safetensors (row->safetensors) == row);
      if (row->trace != NULL)
        {
          g_assert_cmpuint (wick_dtype_table_size (row->trace, strlen (row->trace)), ==, row->size);
          g_autofree char *upper = g_ascii_strup (row->trace, -1);
          g_assert_cmpstr (upper, ==, row->safetensors);
        }
    }
  g_assert_null (wick_dtype_row_for_weight (WICK_N_DTYPES));
  g_assert_null (wick_dtype_row_for_weight (-1));
  g_assert_null (wick_dtype_row_for_safetensors ("f32")); /* safetensors is case-sensitive */
  g_assert_null (wick_dtype_row_for_safetensors (NULL));
  g_assert_cmpuint (wick_dtype_row_for_safetensors ("F8_E5M2")->size, ==, 1);
  /* The stage windows' dtypes, all seven, spelled as the trace spells them. */
  static const struct
  {
    WickStageDType dtype;
    const char *name;
    unsigned size;
  } stages[] = {
    { WICK_STAGE_DTYPE_F32, "f32", 4 }, { WICK_STAGE_DTYPE_F16, "f16", 2 },
    { WICK_STAGE_DTYPE_BF16, "bf16", 2 }, { WICK_STAGE_DTYPE_F64, "f64", 8 },
    { WICK_STAGE_DTYPE_I32, "i32", 4 }, { WICK_STAGE_DTYPE_I64, "i64", 8 },
    { WICK_STAGE_DTYPE_U8, "u8", 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (stages); i++)
    {
      const WickDtypeRow *row = wick_dtype_row_for_stage (stages[i].dtype);
      g_assert_nonnull (row);
      g_assert_cmpstr (row->trace, ==, stages[i].name);
      g_assert_cmpuint (row->size, ==, stages[i].size);
    }
  g_assert_null (wick_dtype_row_for_stage (WICK_STAGE_DTYPE_U8 + 1));
}

/* The spellings tables and libwick's public functions over them agree, and
 * each table has exactly one word a value. */
static void
test_spellings (void)
{
  g_assert_cmpstr (wick_phase_to_string (WICK_PHASE_INFER), ==, "infer");
  g_assert_cmpstr (wick_timing_mode_to_string (WICK_TIMING_DEVICE_SYNCHRONIZED), ==,
                   "device_synchronized");
  g_assert_cmpstr (wick_step_to_string (WICK_STEP_BACKWARD), ==, wick_step_spellings[1]);
  g_assert_null (wick_step_to_string (WICK_STEP_NONE));
  g_assert_cmpstr (wick_step_to_string ((WickStep)4), ==, "unknown");
  g_assert_cmpstr (wick_gradient_state_to_string (WICK_GRADIENT_NON_FINITE), ==, "non_finite");
  g_assert_cmpstr (wick_gradient_state_to_string ((WickGradientState)4), ==, "unknown");
  g_assert_cmpstr (wick_ring_policy_to_string (WICK_RING_OVERWRITE), ==, "overwrite");
  static const struct
  {
    const char *const *table;
    guint n;
  } tables[] = {
    { wick_phase_spellings, 2 },          { wick_timing_mode_spellings, 2 },
    { wick_coverage_spellings, 3 },       { wick_measurement_scope_spellings, 3 },
    { wick_span_kind_spellings, 3 },      { wick_step_spellings, 3 },
    { wick_memory_category_spellings, 5 }, { wick_memory_action_spellings, 2 },
    { wick_gradient_state_spellings, 4 }, { wick_gradient_expectation_spellings, 3 },
    { wick_ring_policy_spellings, 3 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      guint n = 0;
      while (tables[i].table[n] != NULL)
        n++;
      g_assert_cmpuint (n, ==, tables[i].n);
    }
  for (guint v = 0; v < 5; v++)
    g_assert_cmpstr (wick_memory_category_to_string ((WickMemoryCategory)v), ==,
                     wick_memory_category_spellings[v]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/common/json/reader-errors", test_reader_errors);
  g_test_add_func ("/common/json/reader-values", test_reader_values);
  g_test_add_func ("/common/json/utf8", test_utf8);
  g_test_add_func ("/common/json/writer", test_writer);
  g_test_add_func ("/common/json/numbers", test_numbers);
  g_test_add_func ("/common/json/shortest-digits", test_shortest_digits);
  g_test_add_func ("/common/json/escape-controls", test_escape_controls);
  g_test_add_func ("/common/json/escape-invalid-utf8", test_escape_invalid_utf8);
  g_test_add_func ("/common/json/reader-number-edges", test_reader_number_edges);
  g_test_add_func ("/common/json/writer-number", test_writer_number);
  g_test_add_func ("/common/dtype-table", test_dtype_table);
  g_test_add_func ("/common/spellings", test_spellings);
  return g_test_run ();
}
