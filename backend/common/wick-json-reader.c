/* wick-json-reader.c — the bounded JSON lexer of wick-json-reader.h. */
#include "config.h"

#include "common/wick-json-reader.h"
#include "common/wick-utf8.h"

#include <string.h>

void
wick_json_reader_init (WickJsonReader *reader, const void *data, size_t length)
{
  memset (reader, 0, sizeof *reader);
  reader->data = data;
  reader->length = length;
}

static bool
fail (WickJsonReader *reader, WickJsonReadError error, size_t start, size_t at)
{
  reader->error = error;
  reader->error_start = start;
  reader->error_at = at;
  return false;
}

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

/* Four hex digits at the cursor; escape is where the backslash stood. */
static bool
read_hex4 (WickJsonReader *reader, size_t escape, uint32_t *out)
{
  if (reader->length - reader->pos < 4)
    return fail (reader, WICK_JSON_READ_TRUNCATED_HEX, escape, reader->pos);
  uint32_t value = 0;
  for (size_t i = 0; i < 4; i++)
    {
      int digit = hex_value (reader->data[reader->pos + i]);
      if (digit < 0)
        return fail (reader, WICK_JSON_READ_INVALID_HEX, escape, reader->pos + i);
      value = value << 4 | (uint32_t)digit;
    }
  reader->pos += 4;
  *out = value;
  return true;
}

/* One escape; the cursor is after the backslash at @escape. */
static bool
decode_escape (WickJsonReader *reader, size_t escape, char **out, unsigned flags)
{
  if (reader->pos >= reader->length)
    return fail (reader, WICK_JSON_READ_TRUNCATED_ESCAPE, escape, reader->pos);
  unsigned char c = reader->data[reader->pos];
  static const char simple_from[] = "\"\\/bfnrt";
  static const char simple_to[] = "\"\\/\b\f\n\r\t";
  const char *simple = c != '\0' ? strchr (simple_from, c) : NULL;
  if (simple != NULL)
    {
      *(*out)++ = simple_to[simple - simple_from];
      reader->pos++;
      return true;
    }
  if (c != 'u')
    {
      reader->error_byte = c;
      return fail (reader, WICK_JSON_READ_INVALID_ESCAPE, escape, reader->pos);
    }
  reader->pos++;
  uint32_t code;
  if (!read_hex4 (reader, escape, &code))
    return false;
  if (code >= 0xdc00 && code <= 0xdfff)
    return fail (reader, WICK_JSON_READ_LONE_LOW_SURROGATE, escape, reader->pos);
  if (code >= 0xd800 && code <= 0xdbff)
    {
      if (reader->length - reader->pos < 2 || reader->data[reader->pos] != '\\'
          || reader->data[reader->pos + 1] != 'u')
        return fail (reader, WICK_JSON_READ_LONE_HIGH_SURROGATE, escape, reader->pos);
      reader->pos += 2;
      uint32_t low;
      if (!read_hex4 (reader, escape, &low))
        return false;
      if (low < 0xdc00 || low > 0xdfff)
        return fail (reader, WICK_JSON_READ_LONE_HIGH_SURROGATE, escape, reader->pos);
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
  if (code == 0 && (flags & WICK_JSON_READ_NO_NUL))
    return fail (reader, WICK_JSON_READ_NUL_CHARACTER, escape, reader->pos);
  *out += wick_utf8_encode (code, *out);
  return true;
}

bool
wick_json_reader_string (WickJsonReader *reader, char *out, size_t *out_length, unsigned flags)
{
  size_t start = reader->pos++; /* the opening quote */
  char *o = out;
  for (;;)
    {
      if (reader->pos >= reader->length)
        return fail (reader, WICK_JSON_READ_UNTERMINATED_STRING, start, reader->pos);
      unsigned char c = reader->data[reader->pos];
      if (c == '"')
        {
          reader->pos++;
          break;
        }
      if (c == '\\')
        {
          size_t escape = reader->pos++;
          if (!decode_escape (reader, escape, &o, flags))
            return false;
          continue;
        }
      if (c < 0x20)
        {
          reader->error_byte = c;
          return fail (reader, WICK_JSON_READ_CONTROL_CHARACTER, start, reader->pos);
        }
      if (c < 0x80)
        {
          *o++ = (char)c;
          reader->pos++;
          continue;
        }
      size_t n
        = wick_utf8_sequence_length (reader->data + reader->pos, reader->length - reader->pos);
      if (n == 0)
        return fail (reader, WICK_JSON_READ_INVALID_UTF8, start, reader->pos);
      memcpy (o, reader->data + reader->pos, n);
      o += n;
      reader->pos += n;
    }
  *o = '\0';
  *out_length = (size_t)(o - out);
  return true;
}

static size_t
skip_digits (WickJsonReader *reader)
{
  size_t start = reader->pos;
  while (reader->pos < reader->length && reader->data[reader->pos] >= '0'
         && reader->data[reader->pos] <= '9')
    reader->pos++;
  return reader->pos - start;
}

bool
wick_json_reader_number (WickJsonReader *reader, WickJsonNumberText *number)
{
  memset (number, 0, sizeof *number);
  size_t start = reader->pos;
  number->start = start;
  number->negative = wick_json_reader_accept (reader, '-');
  number->digits_start = reader->pos;
  number->n_digits = skip_digits (reader);
  if (number->n_digits == 0)
    return fail (reader, WICK_JSON_READ_NO_DIGITS, start, reader->pos);
  if (number->n_digits > 1 && reader->data[number->digits_start] == '0')
    return fail (reader, WICK_JSON_READ_LEADING_ZERO, start, start);
  number->integer = true;
  if (wick_json_reader_accept (reader, '.'))
    {
      number->integer = false;
      if (skip_digits (reader) == 0)
        return fail (reader, WICK_JSON_READ_NO_FRACTION_DIGITS, start, reader->pos);
    }
  if (wick_json_reader_accept (reader, 'e') || wick_json_reader_accept (reader, 'E'))
    {
      number->integer = false;
      if (!wick_json_reader_accept (reader, '+'))
        wick_json_reader_accept (reader, '-');
      if (skip_digits (reader) == 0)
        return fail (reader, WICK_JSON_READ_NO_EXPONENT_DIGITS, start, reader->pos);
    }
  number->length = reader->pos - start;
  return true;
}

bool
wick_json_reader_literal (WickJsonReader *reader, const char *word)
{
  size_t n = strlen (word);
  if (reader->length - reader->pos < n || memcmp (reader->data + reader->pos, word, n) != 0)
    return fail (reader, WICK_JSON_READ_INVALID_LITERAL, reader->pos, reader->pos);
  reader->pos += n;
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
