/* wick-json-scanner.h — strict JSON with serde_json's rules, for one JSONL line.
 *
 * The dialect is RFC 8259 exactly as serde_json reads it (spec §1): no NaN,
 * Infinity, comments or trailing commas; whitespace is space, \t, \n, \r;
 * strings are valid UTF-8 (the caller checked the line) with the standard
 * escapes, control characters rejected, \u surrogates paired; numbers follow
 * serde_json's classification: an integer without sign that fits u64 is U64, a
 * negative integer that fits i64 is I64 (-0 is F64 -0.0), everything else
 * (fraction, exponent, too many digits) is F64, and an F64 that overflows is
 * "number out of range"; nesting deeper than 127 arrays/objects is "recursion
 * limit exceeded".
 *
 * The tokens are read by the shared JSON lexer (common/wick-json-reader.h);
 * this layer keeps serde_json's structure rules, recursion limit, number
 * classification and wording. The scanner works on a borrowed buffer
 * [start, end) and never reads outside it. Errors are serde_json's message
 * texts (without "at line L column C"), stored in the scanner, with the
 * cursor where serde_json stops; functions return FALSE once an error is set.
 */
#pragma once

#include <glib.h>

#include "common/wick-json-reader.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_JSON_NULL,
  WICK_JSON_FALSE,
  WICK_JSON_TRUE,
  WICK_JSON_NUMBER,
  WICK_JSON_STRING,
  WICK_JSON_ARRAY,
  WICK_JSON_OBJECT,
} WickJsonType;

typedef enum
{
  WICK_JSON_U64,
  WICK_JSON_I64,
  WICK_JSON_F64,
} WickJsonNumberKind;

typedef struct
{
  WickJsonNumberKind kind;
  guint64 u64;
  gint64 i64;
  double f64;
} WickJsonNumber;

typedef struct
{
  const char *start;
  const char *p;
  const char *end;
  int remaining_depth;
  GString *error;   /* empty while no error */
  gboolean ran_out; /* the error is that the buffer ended inside a value */
  char *unescape; /* scratch for unescaped strings, at least end-start bytes */
  gsize unescape_len;
} WickJsonScanner;

void wick_json_scanner_init (WickJsonScanner *scanner, const char *start, const char *end,
                             GString *error, char *unescape_buffer);

gboolean wick_json_failed (const WickJsonScanner *scanner);
gboolean wick_json_fail (WickJsonScanner *scanner, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* The error that the buffer ended inside a value ("EOF while parsing …"):
 * also sets ran_out, so that a reader over a refilled buffer knows to read
 * more without looking at the text. */
gboolean wick_json_fail_eof (WickJsonScanner *scanner, const char *message);

static inline void
wick_json_skip_whitespace (WickJsonScanner *scanner)
{
  scanner->p = wick_json_lex_whitespace (scanner->p, scanner->end);
}
/* Validates a number's syntax at the cursor and steps over it (no value, no
 * range check: serde_json's ignore_value). */
gboolean wick_json_skip_number (WickJsonScanner *scanner);
/* Validates and steps over one value. */
gboolean wick_json_skip_value (WickJsonScanner *scanner);

/* Reads a string value at the cursor (which must be at '"'). The result points
 * into the line when it has no escapes, into the unescape buffer otherwise;
 * it stays valid until the scanner is re-initialised.
 *
 * Inline: the lexer's plain run (sixteen bytes at a time with SSE2); the rest
 * (the last bytes of the buffer, escapes, errors) in
 * wick_json_read_string_from(), which continues at @p with the string's text
 * starting at @literal. */
gboolean wick_json_read_string_from (WickJsonScanner *scanner, const char *literal, const char *p,
                                     const char **str, gsize *len);

static inline gboolean
wick_json_read_string (WickJsonScanner *scanner, const char **str, gsize *len)
{
  const char *literal = scanner->p + 1, *p;
  const char *close = wick_json_lex_string_plain (literal, scanner->end, 0, &p);

  if (close != NULL)
    {
      *str = literal;
      *len = (gsize)(close - literal);
      scanner->p = close + 1;
      return TRUE;
    }
  return wick_json_read_string_from (scanner, literal, p, str, len);
}

gboolean wick_json_read_number (WickJsonScanner *scanner, WickJsonNumber *number);

/* Object iteration: call begin at '{', then wick_json_object_next() (below). */
gboolean wick_json_object_begin (WickJsonScanner *scanner);
gboolean wick_json_array_begin (WickJsonScanner *scanner);

/* The type of the value at the cursor (after whitespace), judged by its first
 * byte; sets "expected value" / "EOF while parsing a value" when none.
 * Inline, as are object_next and array_next below: they run for every value
 * of every record. */
static inline gboolean
wick_json_peek_type (WickJsonScanner *scanner, WickJsonType *type)
{
  *type = WICK_JSON_NULL; /* set on every path, for the compiler's sake */
  wick_json_skip_whitespace (scanner);
  if (scanner->p >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing a value");
  switch (*scanner->p)
    {
      case 'n':
        *type = WICK_JSON_NULL;
        return TRUE;
      case 't':
        *type = WICK_JSON_TRUE;
        return TRUE;
      case 'f':
        *type = WICK_JSON_FALSE;
        return TRUE;
      case '"':
        *type = WICK_JSON_STRING;
        return TRUE;
      case '[':
        *type = WICK_JSON_ARRAY;
        return TRUE;
      case '{':
        *type = WICK_JSON_OBJECT;
        return TRUE;
      case '-':
      case '0' ... '9':
        *type = WICK_JSON_NUMBER;
        return TRUE;
      default:
        return wick_json_fail (scanner, "expected value");
    }
}

gboolean wick_json_literal_failed (WickJsonScanner *scanner, const WickJsonLexFailure *failure);

/* Steps over the literal whose type wick_json_peek_type() found (null, true
 * or false), reading it whole: serde_json's "expected ident" for "trux". */
static inline gboolean
wick_json_skip_literal (WickJsonScanner *scanner, WickJsonType type)
{
  WickJsonLexFailure failure;
  const char *word = type == WICK_JSON_NULL ? "null" : type == WICK_JSON_TRUE ? "true" : "false";
  const char *next = wick_json_lex_literal (scanner->p, scanner->end, word,
                                            type == WICK_JSON_FALSE ? 5 : 4, &failure);

  if (next == NULL)
    return wick_json_literal_failed (scanner, &failure);
  scanner->p = next;
  return TRUE;
}

/* Object iteration, continued: call wick_json_object_next() until it returns
 * FALSE with no error (end of object); on TRUE the cursor is at the member's
 * value. */
static inline gboolean
wick_json_object_next (WickJsonScanner *scanner, gboolean *first, const char **key, gsize *key_len)
{
  wick_json_skip_whitespace (scanner);
  if (scanner->p >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing an object");
  if (*first)
    {
      *first = FALSE;
      if (*scanner->p == '}')
        {
          scanner->p++;
          scanner->remaining_depth++;
          return FALSE;
        }
    }
  else
    {
      if (*scanner->p == '}')
        {
          scanner->p++;
          scanner->remaining_depth++;
          return FALSE;
        }
      if (*scanner->p != ',')
        return wick_json_fail (scanner, "expected `,` or `}`");
      scanner->p++;
      wick_json_skip_whitespace (scanner);
      if (scanner->p >= scanner->end)
        return wick_json_fail_eof (scanner, "EOF while parsing an object");
      if (*scanner->p == '}')
        return wick_json_fail (scanner, "trailing comma");
    }
  if (*scanner->p != '"')
    return wick_json_fail (scanner, "key must be a string");
  if (!wick_json_read_string (scanner, key, key_len))
    return FALSE;
  wick_json_skip_whitespace (scanner);
  if (scanner->p >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing an object");
  if (*scanner->p != ':')
    return wick_json_fail (scanner, "expected `:`");
  scanner->p++;
  return TRUE;
}

/* TRUE with the cursor at the next element, FALSE at the end (or on error). */
static inline gboolean
wick_json_array_next (WickJsonScanner *scanner, gboolean *first)
{
  wick_json_skip_whitespace (scanner);
  if (scanner->p >= scanner->end)
    return wick_json_fail_eof (scanner, "EOF while parsing a list");
  if (*scanner->p == ']')
    {
      if (!*first)
        {
          scanner->p++;
          scanner->remaining_depth++;
          return FALSE;
        }
      scanner->p++;
      scanner->remaining_depth++;
      *first = FALSE;
      return FALSE;
    }
  if (!*first)
    {
      if (*scanner->p != ',')
        return wick_json_fail (scanner, "expected `,` or `]`");
      scanner->p++;
      wick_json_skip_whitespace (scanner);
      if (scanner->p < scanner->end && *scanner->p == ']')
        return wick_json_fail (scanner, "trailing comma");
    }
  *first = FALSE;
  return TRUE;
}

/* Eight ASCII digits at @p as a number (FALSE when they are not all digits):
 * the digits' nibbles combined pairwise in one word (the well-known SWAR
 * method; little-endian). */
static inline gboolean
wick_json_eight_digits (const char *p, guint64 *value)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  guint64 v;

  memcpy (&v, p, 8);
  /* every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3 */
  if (((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4))
      != 0x3333333333333333ull)
    return FALSE;
  v -= 0x3030303030303030ull;
  v = v * 10 + (v >> 8); /* pairs: each 16-bit lane's low byte is 10 * d0 + d1 */
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32)))
       + (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32))))
      >> 32;
  *value = v;
  return TRUE;
#else
  (void)p;
  (void)value;
  return FALSE;
#endif
}

/* serde's description of the value at the cursor for "invalid type" messages
 * ("null", "boolean `true`", "integer `5`", "floating point `1.5`",
 * "string \"x\"", "sequence", "map"). Does not move the cursor. */
void wick_json_describe_value (WickJsonScanner *scanner, GString *out);

/* libwick's JSON formatting (core/wick-json.h, compiled into the model) onto a
 * GString: a float in ryu/serde_json's layout, a string quoted and escaped as
 * serde_json escapes it. */
void wick_json_format_f64 (GString *out, double value);
void wick_json_append_string (GString *out, const char *str, gsize len);
/* Rust's {:?} of a str and of an f64. */
void wick_rust_debug_str (GString *out, const char *str, gsize len);
void wick_rust_debug_f64 (GString *out, double value);
/* Rust's str::trim(): TRUE when only Unicode White_Space. */
gboolean wick_rust_is_blank (const char *str, gsize len);
/* Rust's str::trim() bounds. */
void wick_rust_trim (const char **str, gsize *len);

G_END_DECLS
