/* wick-json-scanner.c — strict JSON with serde_json's rules (see the header). */
#include "config.h"

#include "wick-json-scanner.h"
#include "wick-json-scanner-private.h"
#include "common/wick-json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERDE_RECURSION_LIMIT 128

void
wick_json_scanner_init (WickJsonScanner *scanner, const char *start, const char *end,
                        GString *error, char *unescape_buffer)
{
  scanner->start = start;
  scanner->p = start;
  scanner->end = end;
  scanner->remaining_depth = SERDE_RECURSION_LIMIT;
  scanner->error = error;
  scanner->unescape = unescape_buffer;
  scanner->unescape_len = 0;
  scanner->ran_out = FALSE;
  g_string_truncate (error, 0);
}

gboolean
wick_json_failed (const WickJsonScanner *scanner)
{
  return scanner->error->len > 0;
}

gboolean
wick_json_fail (WickJsonScanner *scanner, const char *format, ...)
{
  va_list args;

  if (scanner->error->len > 0)
    return FALSE;
  va_start (args, format);
  g_string_append_vprintf (scanner->error, format, args);
  va_end (args);
  return FALSE;
}

gboolean
wick_json_fail_eof (WickJsonScanner *scanner, const char *message)
{
  if (scanner->error->len > 0)
    return FALSE;
  scanner->ran_out = TRUE;
  g_string_append (scanner->error, message);
  return FALSE;
}

/* ---- strings ---------------------------------------------------------- */

/* serde_json's words for a string's fault, with the cursor where it stops:
 * it reads \u digits one at a time and a surrogate pair's "\u" byte by byte,
 * and steps over a control character or a bad escape once the string has had
 * an escape (its unescaping loop reads a byte before looking at it). */
static gboolean
string_failed (WickJsonScanner *scanner, const char *literal, const WickJsonLexFailure *failure)
{
  const char *at = failure->at, *end = scanner->end;

  switch (failure->code)
    {
      case WICK_JSON_READ_CONTROL_CHARACTER:
        scanner->p = at + (memchr (literal, '\\', (gsize)(at - literal)) != NULL);
        return wick_json_fail (scanner,
                               "control character (\\u0000-\\u001F) found while parsing a string");
      case WICK_JSON_READ_INVALID_ESCAPE:
        scanner->p = at + 1;
        return wick_json_fail (scanner, "invalid escape");
      case WICK_JSON_READ_TRUNCATED_HEX:
        for (; at < end; at++)
          if (!g_ascii_isxdigit (*at))
            {
              scanner->p = at;
              return wick_json_fail (scanner, "invalid escape");
            }
        break;
      case WICK_JSON_READ_INVALID_HEX:
        scanner->p = at;
        return wick_json_fail (scanner, "invalid escape");
      case WICK_JSON_READ_LONE_LOW_SURROGATE:
        scanner->p = at;
        return wick_json_fail (scanner, "lone leading surrogate in hex escape");
      case WICK_JSON_READ_LONE_HIGH_SURROGATE:
        if (at - failure->start == 12) /* the second escape is not a low surrogate */
          {
            scanner->p = at;
            return wick_json_fail (scanner, "lone leading surrogate in hex escape");
          }
        /* no "\u" after the high escape: serde_json looks at '\\', then 'u' */
        if (at < end && *at == '\\')
          at++;
        if (at < end)
          {
            scanner->p = at;
            return wick_json_fail (scanner, "unexpected end of hex escape");
          }
        break;
      case WICK_JSON_READ_UNTERMINATED_STRING:
      case WICK_JSON_READ_TRUNCATED_ESCAPE:
      default: /* the others (UTF-8, NUL) are not asked for */
        break;
    }
  scanner->p = end;
  return wick_json_fail_eof (scanner, "EOF while parsing a string");
}

gboolean
wick_json_read_string_from (WickJsonScanner *scanner, const char *literal, const char *p,
                            const char **str, gsize *len)
{
  char *out = scanner->unescape + scanner->unescape_len;
  WickJsonLexFailure failure;
  const char *next
    = wick_json_lex_string_rest (literal, p, scanner->end, out, 0, str, len, &failure);

  if (next == NULL)
    return string_failed (scanner, literal, &failure);
  if (*str == out)
    scanner->unescape_len += *len;
  scanner->p = next;
  return TRUE;
}

/* ---- numbers ---------------------------------------------------------- */

/* serde_json's words for a number's fault: the cursor at the byte where a
 * digit was due, or the end. */
static gboolean
number_failed (WickJsonScanner *scanner, const WickJsonLexFailure *failure)
{
  scanner->p = failure->at;
  if (failure->at >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing a value");
  return wick_json_fail (scanner, "invalid number");
}

static gboolean
parse_float_token (WickJsonScanner *scanner, const char *token, gsize len, double *out)
{
  char small[64];
  g_autofree char *large = NULL;
  char *buffer = small;
  double value;

  if (len >= sizeof small)
    buffer = large = g_malloc (len + 1);
  memcpy (buffer, token, len);
  buffer[len] = '\0';
  value = g_ascii_strtod (buffer, NULL);
  if (isinf (value))
    return wick_json_fail (scanner, "number out of range");
  *out = value;
  return TRUE;
}

gboolean
wick_json_read_number (WickJsonScanner *scanner, WickJsonNumber *number)
{
  WickJsonLexNumber lexed;
  WickJsonLexFailure failure;
  const char *next = wick_json_lex_number (scanner->p, scanner->end, true, &lexed, &failure);
  guint64 significand = lexed.significand;

  if (next == NULL)
    return number_failed (scanner, &failure);
  scanner->p = next;
  if (!lexed.integer || lexed.overflow)
    {
      number->kind = WICK_JSON_F64;
      return parse_float_token (scanner, lexed.start, (gsize)(next - lexed.start), &number->f64);
    }
  if (!lexed.negative)
    {
      number->kind = WICK_JSON_U64;
      number->u64 = significand;
      number->f64 = (double)significand;
      return TRUE;
    }
  if (significand == 0 || significand > (guint64)G_MAXINT64 + 1)
    {
      number->kind = WICK_JSON_F64;
      number->f64 = -(double)significand;
      return TRUE;
    }
  number->kind = WICK_JSON_I64;
  number->i64 = significand == (guint64)G_MAXINT64 + 1 ? G_MININT64 : -(gint64)significand;
  number->f64 = (double)number->i64;
  return TRUE;
}

/* ---- containers ------------------------------------------------------- */

gboolean
wick_json_object_begin (WickJsonScanner *scanner)
{
  g_assert (*scanner->p == '{');
  if (--scanner->remaining_depth == 0)
    return wick_json_fail (scanner, "recursion limit exceeded");
  scanner->p++;
  return TRUE;
}

gboolean
wick_json_array_begin (WickJsonScanner *scanner)
{
  g_assert (*scanner->p == '[');
  if (--scanner->remaining_depth == 0)
    return wick_json_fail (scanner, "recursion limit exceeded");
  scanner->p++;
  return TRUE;
}

/* A number's syntax only, as serde_json's ignore_value checks it: no value,
 * so no "number out of range" for a skipped 1e999. */
gboolean
wick_json_skip_number (WickJsonScanner *scanner)
{
  WickJsonLexNumber lexed;
  WickJsonLexFailure failure;
  const char *next = wick_json_lex_number (scanner->p, scanner->end, false, &lexed, &failure);

  if (next == NULL)
    return number_failed (scanner, &failure);
  scanner->p = next;
  return TRUE;
}

/* A literal's fault: serde_json says "expected ident" at the first byte that
 * differs, "EOF while parsing a value" when the buffer ends first, with the
 * cursor left at the literal's start. */
gboolean
wick_json_literal_failed (WickJsonScanner *scanner, const WickJsonLexFailure *failure)
{
  if (failure->at >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing a value");
  return wick_json_fail (scanner, "expected ident");
}

/* The common members of args objects, in place: a number or a string
 * without a fault; FALSE (cursor unchanged) for anything else, which the
 * general path then reads or words. */
static inline __attribute__ ((always_inline)) gboolean
skip_simple_scalar (WickJsonScanner *scanner)
{
  const char *p = scanner->p, *end = scanner->end;

  if (p >= end)
    return FALSE;
  if (*p == '-' || WICK_JSON_LEX_IS_DIGIT (*p))
    {
      WickJsonLexNumber lexed;
      WickJsonLexFailure failure;
      const char *next = wick_json_lex_number (p, end, false, &lexed, &failure);
      if (next == NULL)
        return FALSE;
      scanner->p = next;
      return TRUE;
    }
  if (*p == '"')
    {
      const char *str;
      gsize len, mark = scanner->unescape_len;
      gboolean ok = wick_json_read_string (scanner, &str, &len);
      scanner->unescape_len = mark;
      return ok || (scanner->p = p, FALSE); /* an error: the general path words it */
    }
  return FALSE;
}

gboolean
wick_json_skip_value (WickJsonScanner *scanner)
{
  wick_json_skip_whitespace (scanner);
  if (scanner->p >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing a value");
  switch (*scanner->p)
    {
      case 'n':
        return wick_json_skip_literal (scanner, WICK_JSON_NULL);
      case 't':
        return wick_json_skip_literal (scanner, WICK_JSON_TRUE);
      case 'f':
        return wick_json_skip_literal (scanner, WICK_JSON_FALSE);
      case '-':
      case '0' ... '9':
        return wick_json_skip_number (scanner);
      case '"':
        {
          const char *s;
          gsize len;
          gsize mark = scanner->unescape_len;
          gboolean ok = wick_json_read_string (scanner, &s, &len);
          scanner->unescape_len = mark;
          return ok;
        }
      case '[':
        {
          gboolean first = TRUE;
          if (!wick_json_array_begin (scanner))
            return FALSE;
          while (wick_json_array_next (scanner, &first))
            if (!skip_simple_scalar (scanner) && !wick_json_skip_value (scanner))
              return FALSE;
          return !wick_json_failed (scanner);
        }
      case '{':
        {
          gboolean first = TRUE;
          const char *key;
          gsize key_len;
          gsize mark = scanner->unescape_len;
          if (!wick_json_object_begin (scanner))
            return FALSE;
          while (wick_json_object_next (scanner, &first, &key, &key_len))
            {
              scanner->unescape_len = mark;
              wick_json_skip_whitespace (scanner);
              if (!skip_simple_scalar (scanner) && !wick_json_skip_value (scanner))
                return FALSE;
            }
          scanner->unescape_len = mark;
          return !wick_json_failed (scanner);
        }
      default:
        return wick_json_fail (scanner, "expected value");
    }
}

/* ---- descriptions and formatting -------------------------------------- */

void
wick_json_describe_value (WickJsonScanner *scanner, GString *out)
{
  WickJsonScanner probe = *scanner;
  GString *scratch_error = g_string_new (NULL);
  WickJsonType type;

  probe.error = scratch_error;
  if (!wick_json_peek_type (&probe, &type))
    g_string_append (out, "value");
  else
    switch (type)
      {
        case WICK_JSON_NULL:
          g_string_append (out, "null");
          break;
        case WICK_JSON_TRUE:
          g_string_append (out, "boolean `true`");
          break;
        case WICK_JSON_FALSE:
          g_string_append (out, "boolean `false`");
          break;
        case WICK_JSON_ARRAY:
          g_string_append (out, "sequence");
          break;
        case WICK_JSON_OBJECT:
          g_string_append (out, "map");
          break;
        case WICK_JSON_STRING:
          {
            const char *s;
            gsize len;
            if (wick_json_read_string (&probe, &s, &len))
              {
                g_string_append (out, "string ");
                wick_rust_debug_str (out, s, len);
              }
            break;
          }
        case WICK_JSON_NUMBER:
          {
            WickJsonNumber n;
            if (!wick_json_read_number (&probe, &n))
              break;
            if (n.kind == WICK_JSON_U64)
              g_string_append_printf (out, "integer `%" G_GUINT64_FORMAT "`", n.u64);
            else if (n.kind == WICK_JSON_I64)
              g_string_append_printf (out, "integer `%" G_GINT64_FORMAT "`", n.i64);
            else
              {
                g_string_append (out, "floating point `");
                wick_json_format_f64 (out, n.f64); /* serde_json formats it with ryu */
                g_string_append_c (out, '`');
              }
            break;
          }
        default:
          break;
      }
  g_string_free (scratch_error, TRUE);
}

void
wick_json_format_f64 (GString *out, double value)
{
  char buffer[40];
  if (!isfinite (value))
    g_string_append (out, "null"); /* as serde_json writes a non-finite f64 */
  else
    g_string_append_len (out, buffer, (gssize)wick_format_double (value, buffer));
}

void
wick_rust_debug_f64 (GString *out, double value)
{
  char digits[32];
  int n, e10;
  double magnitude = fabs (value);

  if (isnan (value))
    {
      g_string_append (out, "NaN");
      return;
    }
  if (isinf (value))
    {
      g_string_append (out, value > 0 ? "inf" : "-inf");
      return;
    }
  if (signbit (value))
    g_string_append_c (out, '-');
  if (magnitude == 0.0)
    {
      g_string_append (out, "0.0");
      return;
    }
  e10 = wick_format_shortest_digits (magnitude, digits, &n);
  if (magnitude >= 1e-4 && magnitude < 1e16)
    {
      int int_digits = e10 + 1;
      if (int_digits <= 0)
        {
          g_string_append (out, "0.");
          for (int i = 0; i < -int_digits; i++)
            g_string_append_c (out, '0');
          g_string_append (out, digits);
        }
      else if (int_digits >= n)
        {
          g_string_append (out, digits);
          for (int i = n; i < int_digits; i++)
            g_string_append_c (out, '0');
          g_string_append (out, ".0");
        }
      else
        {
          g_string_append_len (out, digits, int_digits);
          g_string_append_c (out, '.');
          g_string_append (out, digits + int_digits);
        }
      return;
    }
  if (n == 1)
    g_string_append_printf (out, "%ce%d", digits[0], e10);
  else
    g_string_append_printf (out, "%c.%se%d", digits[0], digits + 1, e10);
}

void
wick_json_append_string (GString *out, const char *str, gsize len)
{
  gsize old = out->len;
  g_string_set_size (out, old + WICK_JSON_ESCAPED_MAX (len));
  g_string_truncate (out, old + wick_json_escape (str, len, out->str + old));
}

void
wick_rust_debug_str (GString *out, const char *str, gsize len)
{
  g_string_append_c (out, '"');
  for (gsize i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char)str[i];
      switch (c)
        {
          case '"':
            g_string_append (out, "\\\"");
            break;
          case '\\':
            g_string_append (out, "\\\\");
            break;
          case '\n':
            g_string_append (out, "\\n");
            break;
          case '\r':
            g_string_append (out, "\\r");
            break;
          case '\t':
            g_string_append (out, "\\t");
            break;
          case '\0':
            g_string_append (out, "\\0");
            break;
          default:
            if (c < 0x20 || c == 0x7f)
              g_string_append_printf (out, "\\u{%x}", c);
            else
              g_string_append_c (out, (char)c);
        }
    }
  g_string_append_c (out, '"');
}

/* Length of a Unicode White_Space character at @p (UTF-8), 0 when none. */
static gsize
white_space_at (const unsigned char *p, gsize avail)
{
  if (avail >= 1 && ((p[0] >= 0x09 && p[0] <= 0x0D) || p[0] == 0x20))
    return 1;
  if (avail >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0))
    return 2;
  if (avail >= 3 && p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80)
    return 3;
  if (avail >= 3 && p[0] == 0xE2 && p[1] == 0x80
      && ((p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF))
    return 3;
  if (avail >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F)
    return 3;
  if (avail >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80)
    return 3;
  return 0;
}

/* Length of a trailing White_Space character ending at @end, 0 when none. */
static gsize
white_space_before (const unsigned char *start, const unsigned char *end)
{
  gsize avail = (gsize)(end - start);

  for (gsize len = 1; len <= 3 && len <= avail; len++)
    {
      const unsigned char *p = end - len;
      if ((len == 1 || (*p & 0xC0) != 0x80) && white_space_at (p, len) == len)
        return len;
      if ((*p & 0xC0) != 0x80)
        break;
    }
  return 0;
}

void
wick_rust_trim (const char **str, gsize *len)
{
  const unsigned char *p = (const unsigned char *)*str;
  const unsigned char *end = p + *len;
  gsize n;

  while (p < end && (n = white_space_at (p, (gsize)(end - p))) > 0)
    p += n;
  while (end > p && (n = white_space_before (p, end)) > 0)
    end -= n;
  *str = (const char *)p;
  *len = (gsize)(end - p);
}

gboolean
wick_rust_is_blank (const char *str, gsize len)
{
  wick_rust_trim (&str, &len);
  return len == 0;
}

/* Rust's {} of an f64 (never an exponent), with serde's ".0" for integers. */
void
wick_rust_display_f64 (GString *out, double value)
{
  char digits[32];
  int n, e10, int_digits;

  if (signbit (value))
    g_string_append_c (out, '-');
  value = fabs (value);
  if (value == 0.0)
    {
      g_string_append (out, "0.0");
      return;
    }
  e10 = wick_format_shortest_digits (value, digits, &n);
  int_digits = e10 + 1;
  if (int_digits <= 0)
    {
      g_string_append (out, "0.");
      for (int i = 0; i < -int_digits; i++)
        g_string_append_c (out, '0');
      g_string_append (out, digits);
    }
  else if (int_digits >= n)
    {
      g_string_append (out, digits);
      for (int i = n; i < int_digits; i++)
        g_string_append_c (out, '0');
      g_string_append (out, ".0");
    }
  else
    {
      g_string_append_len (out, digits, int_digits);
      g_string_append_c (out, '.');
      g_string_append (out, digits + int_digits);
    }
}
