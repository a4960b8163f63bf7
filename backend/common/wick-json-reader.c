/* wick-json-reader.c — the JSON lexer's out-of-line parts and libwick's reader
 * over it (wick-json-reader.h). */
#include "config.h"

#include "common/wick-json-reader.h"
#include "common/wick-utf8.h"

#include <string.h>

/* ---- the lexer ---------------------------------------------------------- */

static int
hex_value (unsigned char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Four hex digits at @p; @escape is where the backslash stood. */
static const char *
lex_hex4 (const char *p, const char *end, const char *escape, uint32_t *out,
          WickJsonLexFailure *failure)
{
  if (end - p < 4)
    return wick_json_lex_fail (failure, WICK_JSON_READ_TRUNCATED_HEX, escape, p);
  uint32_t value = 0;
  for (int i = 0; i < 4; i++)
    {
      int digit = hex_value ((unsigned char)p[i]);
      if (digit < 0)
        return wick_json_lex_fail (failure, WICK_JSON_READ_INVALID_HEX, escape, p + i);
      value = value << 4 | (uint32_t)digit;
    }
  *out = value;
  return p + 4;
}

/* One escape at the backslash @escape; its decoding goes to *@out. */
static const char *
lex_escape (const char *escape, const char *end, char **out, unsigned flags,
            WickJsonLexFailure *failure)
{
  const char *p = escape + 1;
  if (p >= end)
    return wick_json_lex_fail (failure, WICK_JSON_READ_TRUNCATED_ESCAPE, escape, p);
  char simple;
  switch (*p)
    {
      case '"':
      case '\\':
      case '/':
        simple = *p;
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        simple = 0;
        break;
      default:
        wick_json_lex_fail (failure, WICK_JSON_READ_INVALID_ESCAPE, escape, p);
        failure->byte = (unsigned char)*p;
        return NULL;
    }
  if (simple != 0)
    {
      *(*out)++ = simple;
      return p + 1;
    }
  uint32_t code;
  if ((p = lex_hex4 (p + 1, end, escape, &code, failure)) == NULL)
    return NULL;
  if (code >= 0xdc00 && code <= 0xdfff)
    return wick_json_lex_fail (failure, WICK_JSON_READ_LONE_LOW_SURROGATE, escape, p);
  if (code >= 0xd800 && code <= 0xdbff)
    {
      if (end - p < 2 || p[0] != '\\' || p[1] != 'u')
        return wick_json_lex_fail (failure, WICK_JSON_READ_LONE_HIGH_SURROGATE, escape, p);
      uint32_t low;
      if ((p = lex_hex4 (p + 2, end, escape, &low, failure)) == NULL)
        return NULL;
      if (low < 0xdc00 || low > 0xdfff)
        return wick_json_lex_fail (failure, WICK_JSON_READ_LONE_HIGH_SURROGATE, escape, p);
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
  if (code == 0 && (flags & WICK_JSON_READ_NO_NUL))
    return wick_json_lex_fail (failure, WICK_JSON_READ_NUL_CHARACTER, escape, p);
  *out += wick_utf8_encode (code, *out);
  return p;
}

/* The part of a string from its first escape, decoded into @out. */
const char *
wick_json_lex_string_escaped (const char *text, const char *p, const char *end, char *out,
                              unsigned flags, const char **str, size_t *length,
                              WickJsonLexFailure *failure)
{
  char *o = out;
  memcpy (o, text, (size_t)(p - text));
  o += p - text;
  for (;;)
    {
      if (p >= end)
        return wick_json_lex_fail (failure, WICK_JSON_READ_UNTERMINATED_STRING, text - 1, end);
      unsigned char c = (unsigned char)*p;
      if (c == '"')
        break;
      if (c == '\\')
        {
          if ((p = lex_escape (p, end, &o, flags, failure)) == NULL)
            return NULL;
          continue;
        }
      if (c < 0x20)
        return wick_json_lex_control (text, p, failure);
      if (c >= 0x80 && (flags & WICK_JSON_LEX_UTF8))
        {
          size_t n = wick_utf8_sequence_length ((const unsigned char *)p, (size_t)(end - p));
          if (n == 0)
            return wick_json_lex_fail (failure, WICK_JSON_READ_INVALID_UTF8, text - 1, p);
          memcpy (o, p, n);
          o += n;
          p += n;
          continue;
        }
      *o++ = (char)c;
      p++;
    }
  *str = out;
  *length = (size_t)(o - out);
  return p + 1;
}

const char *
wick_json_lex_literal_failed (const char *p, const char *end, const char *word, size_t length,
                              WickJsonLexFailure *failure)
{
  size_t i = 0;
  while (i < length && p + i < end && p[i] == word[i])
    i++;
  return wick_json_lex_fail (failure, WICK_JSON_READ_INVALID_LITERAL, p, p + i);
}

/* ---- the reader --------------------------------------------------------- */

void
wick_json_reader_init (WickJsonReader *reader, const void *data, size_t length)
{
  memset (reader, 0, sizeof *reader);
  reader->data = data;
  reader->length = length;
}

/* The lexer's failure as the reader's offsets: a leading zero and a literal
 * are placed at the token's start, a high surrogate without its low one is
 * one code whichever way it lacks it. */
static bool
reader_failed (WickJsonReader *reader, const WickJsonLexFailure *failure)
{
  const char *data = (const char *)reader->data;
  reader->error = failure->code;
  reader->error_start = (size_t)(failure->start - data);
  reader->error_at = (size_t)(failure->at - data);
  reader->pos = reader->error_at;
  switch (failure->code)
    {
      case WICK_JSON_READ_LEADING_ZERO:
      case WICK_JSON_READ_INVALID_LITERAL:
        reader->error_at = reader->error_start;
        break;
      case WICK_JSON_READ_CONTROL_CHARACTER:
      case WICK_JSON_READ_INVALID_ESCAPE:
        reader->error_byte = failure->byte;
        break;
      default:
        break;
    }
  return false;
}

bool
wick_json_reader_string (WickJsonReader *reader, char *out, size_t *out_length, unsigned flags)
{
  const char *data = (const char *)reader->data;
  const char *str;
  size_t length;
  WickJsonLexFailure failure;
  const char *next = wick_json_lex_string (data + reader->pos, data + reader->length, out,
                                           flags | WICK_JSON_LEX_UTF8, &str, &length, &failure);
  if (next == NULL)
    return reader_failed (reader, &failure);
  if (str != out)
    memcpy (out, str, length);
  out[length] = '\0';
  *out_length = length;
  reader->pos = (size_t)(next - data);
  return true;
}

bool
wick_json_reader_number (WickJsonReader *reader, WickJsonNumberText *number)
{
  const char *data = (const char *)reader->data;
  WickJsonLexNumber lexed;
  WickJsonLexFailure failure;
  memset (number, 0, sizeof *number);
  const char *next
    = wick_json_lex_number (data + reader->pos, data + reader->length, false, &lexed, &failure);
  if (next == NULL)
    return reader_failed (reader, &failure);
  number->start = reader->pos;
  number->length = (size_t)(next - lexed.start);
  number->negative = lexed.negative;
  number->integer = lexed.integer;
  number->digits_start = (size_t)(lexed.digits - data);
  number->n_digits = lexed.n_digits;
  reader->pos = (size_t)(next - data);
  return true;
}

bool
wick_json_reader_literal (WickJsonReader *reader, const char *word)
{
  const char *data = (const char *)reader->data;
  WickJsonLexFailure failure;
  const char *next = wick_json_lex_literal (data + reader->pos, data + reader->length, word,
                                            strlen (word), &failure);
  if (next == NULL)
    return reader_failed (reader, &failure);
  reader->pos = (size_t)(next - data);
  return true;
}

bool
wick_json_digits_u64 (const char *digits, size_t length, uint64_t *out)
{
  if (length == 0)
    return false;
  uint64_t value = 0;
  for (size_t i = 0; i < length; i++)
    {
      if (digits[i] < '0' || digits[i] > '9')
        return false;
      uint64_t digit = (uint64_t)(digits[i] - '0');
      if (value > (UINT64_MAX - digit) / 10)
        return false;
      value = value * 10 + digit;
    }
  *out = value;
  return true;
}

bool
wick_json_number_u64 (const WickJsonReader *reader, const WickJsonNumberText *number, uint64_t *out)
{
  if (number->negative || !number->integer)
    return false;
  return wick_json_digits_u64 ((const char *)reader->data + number->digits_start, number->n_digits,
                               out);
}
