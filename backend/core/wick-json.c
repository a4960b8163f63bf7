/* wick-json.c — compact JSON text as serde_json writes it (see wick-json.h). */
#include "wick-json.h"

#include <math.h>
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

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t
utf8_sequence_length (const unsigned char *s, size_t available)
{
  unsigned char c = s[0];
  size_t need;
  uint32_t min, cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 2, min = 0x80, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    need = 3, min = 0x800, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    need = 4, min = 0x10000, cp = c & 0x07;
  else
    return 0;
  if (available < need)
    return 0;
  for (size_t i = 1; i < need; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return need;
}

void
wick_json_string_len (WickJson *json, const char *string, size_t length)
{
  static const char hex[] = "0123456789abcdef";
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
  wick_json_append (json, "\"", 1);
  size_t run = 0; /* start of the pending verbatim run */
  size_t i = 0;
  while (i < length)
    {
      unsigned char c = s[i];
      if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80)
        {
          i++;
          continue;
        }
      size_t sequence = c >= 0x80 ? utf8_sequence_length (s + i, length - i) : 0;
      if (sequence > 0)
        {
          i += sequence;
          continue;
        }
      wick_json_append (json, string + run, i - run);
      char escape[8];
      size_t n = 2;
      escape[0] = '\\';
      switch (c)
        {
          case '"':
            escape[1] = '"';
            break;
          case '\\':
            escape[1] = '\\';
            break;
          case '\b':
            escape[1] = 'b';
            break;
          case '\f':
            escape[1] = 'f';
            break;
          case '\n':
            escape[1] = 'n';
            break;
          case '\r':
            escape[1] = 'r';
            break;
          case '\t':
            escape[1] = 't';
            break;
          default:
            if (c < 0x20)
              {
                memcpy (escape, "\\u00", 4);
                escape[4] = hex[c >> 4];
                escape[5] = hex[c & 15];
                n = 6;
              }
            else
              {
                memcpy (escape, "\xef\xbf\xbd", 3); /* U+FFFD for invalid UTF-8 */
                n = 3;
              }
            break;
        }
      wick_json_append (json, escape, n);
      i++;
      run = i;
    }
  wick_json_append (json, string + run, length - run);
  wick_json_append (json, "\"", 1);
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

void
wick_json_u64 (WickJson *json, uint64_t value)
{
  char buffer[24];
  wick_json_append (json, buffer, wick_format_u64 (value, buffer));
}

/* Shortest digits d1..dn and exponent k with value = 0.d1..dn x 10^k... as
 * "digits" and decimal exponent of the first digit. */
static void
shortest_digits (double value, char *digits, int *n_digits, int *exponent)
{
  char buffer[40];
  for (int precision = 0; precision <= 16; precision++)
    {
      snprintf (buffer, sizeof buffer, "%.*e", precision, value);
      if (strtod (buffer, NULL) == value || precision == 16)
        break;
    }
  /* buffer is d.ddde[+-]XX (value is positive here) */
  int n = 0;
  const char *p = buffer;
  for (; *p != 'e'; p++)
    if (*p >= '0' && *p <= '9')
      digits[n++] = *p;
  *exponent = atoi (p + 1);
  while (n > 1 && digits[n - 1] == '0')
    n--;
  digits[n] = '\0';
  *n_digits = n;
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
  shortest_digits (value, digits, &length, &e10);
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
