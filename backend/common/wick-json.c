/* wick-json.c — compact JSON text as serde_json writes it (see wick-json.h). */
#include "config.h"

#include "common/wick-json.h"
#include "common/wick-utf8.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
wick_json_init (WickJson *json)
{
  memset (json, 0, sizeof *json);
}

void
wick_json_clear (WickJson *json)
{
  free (json->data);
  memset (json, 0, sizeof *json);
}

void
wick_json_reset (WickJson *json)
{
  json->length = 0;
  json->failed = false;
  if (json->data != NULL)
    json->data[0] = '\0';
}

bool
wick_json_reserve (WickJson *json, size_t extra)
{
  if (json->failed)
    return false;
  if (json->limit != 0 && (extra > json->limit || json->length > json->limit - extra))
    {
      json->failed = true;
      return false;
    }
  if (json->length + extra + 1 <= json->capacity)
    return true;
  size_t capacity = json->capacity ? json->capacity : 256;
  while (capacity < json->length + extra + 1)
    capacity *= 2;
  char *data = realloc (json->data, capacity);
  if (data == NULL)
    {
      json->failed = true;
      return false;
    }
  json->data = data;
  json->capacity = capacity;
  return true;
}

void
wick_json_append (WickJson *json, const char *bytes, size_t length)
{
  if (!wick_json_reserve (json, length))
    return;
  memcpy (json->data + json->length, bytes, length);
  json->length += length;
  json->data[json->length] = '\0';
}

void
wick_json_raw (WickJson *json, const char *text)
{
  wick_json_append (json, text, strlen (text));
}

size_t
wick_json_escape (const char *string, size_t length, char *out)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)string;
  char *o = out;
  *o++ = '"';
  size_t i = 0;
  while (i < length)
    {
      /* A run of bytes that stand for themselves, copied at once. */
      size_t run = i;
      for (;;)
        {
          while (i < length && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
            i++;
          size_t sequence
            = i < length && s[i] >= 0x80 ? wick_utf8_sequence_length (s + i, length - i) : 0;
          if (sequence == 0)
            break;
          i += sequence;
        }
      memcpy (o, string + run, i - run);
      o += i - run;
      if (i == length)
        break;
      unsigned char c = s[i++];
      switch (c)
        {
          case '"':
            *o++ = '\\', *o++ = '"';
            break;
          case '\\':
            *o++ = '\\', *o++ = '\\';
            break;
          case '\b':
            *o++ = '\\', *o++ = 'b';
            break;
          case '\f':
            *o++ = '\\', *o++ = 'f';
            break;
          case '\n':
            *o++ = '\\', *o++ = 'n';
            break;
          case '\r':
            *o++ = '\\', *o++ = 'r';
            break;
          case '\t':
            *o++ = '\\', *o++ = 't';
            break;
          default:
            if (c < 0x20)
              {
                memcpy (o, "\\u00", 4);
                o[4] = hex[c >> 4];
                o[5] = hex[c & 15];
                o += 6;
              }
            else
              {
                memcpy (o, "\xef\xbf\xbd", 3); /* U+FFFD for a byte of invalid UTF-8 */
                o += 3;
              }
            break;
        }
    }
  *o++ = '"';
  return (size_t)(o - out);
}

void
wick_json_string_len (WickJson *json, const char *string, size_t length)
{
  const unsigned char *s = (const unsigned char *)string;
  if (!wick_json_reserve (json, length + 2))
    return;
  size_t plain = 0;
  while (plain < length && s[plain] >= 0x20 && s[plain] < 0x80 && s[plain] != '"'
         && s[plain] != '\\')
    plain++;
  if (plain == length)
    {
      char *out = json->data + json->length;
      out[0] = '"';
      memcpy (out + 1, string, length);
      out[length + 1] = '"';
      json->length += length + 2;
      json->data[json->length] = '\0';
      return;
    }
  /* Room for the worst case only when the plain case did not apply; with a
   * limit the text must fit, not its worst case, so escape into scratch. */
  if (json->limit == 0)
    {
      if (!wick_json_reserve (json, WICK_JSON_ESCAPED_MAX (length)))
        return;
      json->length += wick_json_escape (string, length, json->data + json->length);
      json->data[json->length] = '\0';
      return;
    }
  char *scratch = malloc (WICK_JSON_ESCAPED_MAX (length));
  if (scratch == NULL)
    {
      json->failed = true;
      return;
    }
  wick_json_append (json, scratch, wick_json_escape (string, length, scratch));
  free (scratch);
}

void
wick_json_string (WickJson *json, const char *string)
{
  wick_json_string_len (json, string ? string : "", string ? strlen (string) : 0);
}

size_t
wick_format_u64 (uint64_t value, char *buffer)
{
  char digits[20];
  size_t n = 0;
  do
    {
      digits[n++] = (char)('0' + value % 10);
      value /= 10;
    }
  while (value != 0);
  for (size_t i = 0; i < n; i++)
    buffer[i] = digits[n - 1 - i];
  return n;
}

size_t
wick_format_hex_u64 (uint64_t value, char *buffer)
{
  static const char hex[] = "0123456789abcdef";
  size_t n = 1;
  while (n < 16 && (value >> (4 * n)) != 0)
    n++;
  for (size_t i = 0; i < n; i++)
    buffer[i] = hex[(value >> (4 * (n - 1 - i))) & 0xf];
  return n;
}

void
wick_json_u64 (WickJson *json, uint64_t value)
{
  char buffer[24];
  wick_json_append (json, buffer, wick_format_u64 (value, buffer));
}

void
wick_json_i64 (WickJson *json, int64_t value)
{
  char buffer[24];
  size_t n = 0;
  uint64_t magnitude = (uint64_t)value;
  if (value < 0)
    {
      buffer[n++] = '-';
      magnitude = 0 - magnitude;
    }
  n += wick_format_u64 (magnitude, buffer + n);
  wick_json_append (json, buffer, n);
}

/* @value with @precision digits after the first into @buffer: TRUE when it
 * reads back as @value. */
static bool
round_trips (double value, int precision, char buffer[40])
{
  snprintf (buffer, 40, "%.*e", precision, value);
  return strtod (buffer, NULL) == value;
}

/* An exact power of two (a normal one): the doubles below it are half as
 * far as those above, the one case where more digits can stop reading back. */
static bool
is_power_of_two (double value)
{
  uint64_t bits;
  memcpy (&bits, &value, sizeof bits);
  return (bits & ((UINT64_C (1) << 52) - 1)) == 0 && (bits >> 52 & 0x7ff) != 0;
}

int
wick_format_shortest_digits (double value, char digits[24], int *n_digits)
{
  int exponent;
  char buffer[40];
  /* The fewest digits after the first that read back (16 always do). The
   * nearest decimal of p + 1 digits is at least as near as that of p digits,
   * so once p reads back every larger p does and a binary search finds the
   * fewest (4 or 5 conversions instead of up to 17); a power of two, whose
   * neighbours are not equally far, is searched one precision at a time. */
  int precision = 16, in_buffer = -1; /* the precision @buffer holds */
  if (is_power_of_two (value))
    {
      for (precision = 0; precision < 16; precision++)
        if (round_trips (value, precision, buffer))
          {
            in_buffer = precision;
            break;
          }
    }
  else
    {
      char scratch[40];
      int low = 0;
      while (low < precision)
        {
          int middle = (low + precision) / 2;
          if (round_trips (value, middle, scratch))
            {
              precision = in_buffer = middle;
              memcpy (buffer, scratch, sizeof buffer);
            }
          else
            low = middle + 1;
        }
    }
  if (in_buffer != precision)
    snprintf (buffer, sizeof buffer, "%.*e", precision, value);
  /* buffer is d.ddde[+-]XX (value is positive here) */
  int n = 0;
  const char *p = buffer;
  for (; *p != '\0' && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9' && n < 23)
      digits[n++] = *p;
  exponent = *p == 'e' ? atoi (p + 1) : 0;
  while (n > 1 && digits[n - 1] == '0')
    n--;
  digits[n] = '\0';
  *n_digits = n;
  return exponent;
}

size_t
wick_format_double (double value, char *buffer)
{
  char digits[24];
  int length, e10;
  size_t out = 0;
  if (signbit (value))
    {
      buffer[out++] = '-';
      value = -value;
    }
  if (value == 0.0)
    {
      memcpy (buffer + out, "0.0", 4);
      return out + 3;
    }
  e10 = wick_format_shortest_digits (value, digits, &length);
  /* ryu's layout: value = digits x 10^k, kk = length + k */
  int k = e10 - (length - 1);
  int kk = length + k;
  if (k >= 0 && kk <= 16)
    {
      memcpy (buffer + out, digits, (size_t)length);
      out += (size_t)length;
      for (int i = 0; i < k; i++)
        buffer[out++] = '0';
      memcpy (buffer + out, ".0", 2);
      out += 2;
    }
  else if (kk > 0 && kk <= 16)
    {
      memcpy (buffer + out, digits, (size_t)kk);
      out += (size_t)kk;
      buffer[out++] = '.';
      memcpy (buffer + out, digits + kk, (size_t)(length - kk));
      out += (size_t)(length - kk);
    }
  else if (kk > -5 && kk <= 0)
    {
      buffer[out++] = '0';
      buffer[out++] = '.';
      for (int i = 0; i < -kk; i++)
        buffer[out++] = '0';
      memcpy (buffer + out, digits, (size_t)length);
      out += (size_t)length;
    }
  else
    {
      buffer[out++] = digits[0];
      if (length > 1)
        {
          buffer[out++] = '.';
          memcpy (buffer + out, digits + 1, (size_t)(length - 1));
          out += (size_t)(length - 1);
        }
      out += (size_t)sprintf (buffer + out, "e%d", kk - 1);
    }
  buffer[out] = '\0';
  return out;
}

void
wick_json_double (WickJson *json, double value)
{
  if (!isfinite (value))
    {
      wick_json_append (json, "null", 4);
      return;
    }
  char buffer[40];
  size_t n = wick_format_double (value, buffer);
  wick_json_append (json, buffer, n);
}

void
wick_json_number (WickJson *json, double value)
{
  if (!isfinite (value))
    {
      wick_json_append (json, "null", 4);
      return;
    }
  char buffer[40];
  size_t n = wick_format_double (value, buffer);
  if (n >= 2 && buffer[n - 2] == '.' && buffer[n - 1] == '0')
    n -= 2;
  wick_json_append (json, buffer, n);
}

void
wick_json_bool (WickJson *json, bool value)
{
  if (value)
    wick_json_append (json, "true", 4);
  else
    wick_json_append (json, "false", 5);
}

void
wick_json_key (WickJson *json, const char *key)
{
  if (json->length > 0 && json->data[json->length - 1] != '{')
    wick_json_append (json, ",", 1);
  wick_json_append (json, "\"", 1);
  wick_json_raw (json, key);
  wick_json_append (json, "\":", 2);
}

void
wick_json_key_escaped (WickJson *json, const char *key)
{
  if (json->length > 0 && json->data[json->length - 1] != '{')
    wick_json_append (json, ",", 1);
  wick_json_string (json, key);
  wick_json_append (json, ":", 1);
}

void
wick_json_u64_array (WickJson *json, const uint64_t *values, size_t n)
{
  wick_json_append (json, "[", 1);
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        wick_json_append (json, ",", 1);
      wick_json_u64 (json, values[i]);
    }
  wick_json_append (json, "]", 1);
}

void
wick_json_string_array (WickJson *json, const char *const *values, size_t n)
{
  wick_json_append (json, "[", 1);
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        wick_json_append (json, ",", 1);
      wick_json_string (json, values[i]);
    }
  wick_json_append (json, "]", 1);
}
