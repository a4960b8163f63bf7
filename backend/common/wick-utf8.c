/* wick-utf8.c — strict UTF-8 validation, encoding and cutting on a character
 * boundary, for libwick and the model (wick-utf8.h). */
#include "config.h"

#include "common/wick-utf8.h"

#include <stdint.h>
#include <string.h>

static size_t
sequence_length (unsigned char lead)
{
  if (lead < 0x80)
    return 1;
  if (lead >= 0xc2 && lead <= 0xdf)
    return 2;
  if (lead >= 0xe0 && lead <= 0xef)
    return 3;
  if (lead >= 0xf0 && lead <= 0xf4)
    return 4;
  return 1; /* not a lead byte: invalid input, left as it is */
}

size_t
wick_utf8_cut (const char *s, size_t max)
{
  if (s == NULL)
    return 0;
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strnlen (s, max);
  if (n < max || u[n] == '\0')
    return n; /* nothing cut */
  /* u[n] is the first byte left out: when it continues a character, that
   * character started at most 3 bytes earlier and is left out whole. */
  size_t back = 0;
  while (back < 3 && n - back > 0 && (u[n - back] & 0xc0) == 0x80)
    back++;
  if ((u[n - back] & 0xc0) == 0x80)
    return n; /* four continuation bytes in a row: invalid input, cut as is */
  if (back > 0 && sequence_length (u[n - back]) > back)
    return n - back;
  return n;
}

void
wick_utf8_trim_end (char *s)
{
  if (s == NULL)
    return;
  unsigned char *u = (unsigned char *)s;
  size_t length = strlen (s);
  for (size_t back = 1; back <= 4 && back <= length; back++)
    {
      unsigned char c = u[length - back];
      if ((c & 0xc0) == 0x80)
        continue; /* a continuation byte: its lead is further back */
      if (c >= 0x80 && sequence_length (c) > back)
        s[length - back] = '\0';
      return;
    }
}

size_t
wick_utf8_sequence_length (const unsigned char *s, size_t available)
{
  if (available == 0)
    return 0;
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  size_t need;
  if (c >= 0xc2 && c <= 0xdf)
    need = 2;
  else if (c >= 0xe0 && c <= 0xef)
    need = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    need = 4;
  else
    return 0;
  if (available < need)
    return 0;
  for (size_t i = 1; i < need; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  /* The second byte's range rules out overlong forms, surrogates and code
   * points above U+10FFFF (RFC 3629, section 4). */
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90)
      || (c == 0xf4 && s[1] > 0x8f))
    return 0;
  return need;
}

bool
wick_utf8_validate (const char *data, size_t length)
{
  const unsigned char *p = (const unsigned char *)data;
  const unsigned char *end = p + length;
  /* The same rules as wick_utf8_sequence_length, checked inline: this runs on
   * every line the model loads. */
  while (p < end)
    {
      if (*p < 0x80)
        {
          /* ASCII eight bytes at a time: most trace text is ASCII. */
          while (end - p >= 8)
            {
              uint64_t chunk;
              memcpy (&chunk, p, 8);
              if (chunk & 0x8080808080808080ull)
                break;
              p += 8;
            }
          while (p < end && *p < 0x80)
            p++;
          continue;
        }
      if (*p >= 0xc2 && *p <= 0xdf)
        {
          if (end - p < 2 || (p[1] & 0xc0) != 0x80)
            return false;
          p += 2;
        }
      else if (*p >= 0xe0 && *p <= 0xef)
        {
          if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80
              || (*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] > 0x9f))
            return false;
          p += 3;
        }
      else if (*p >= 0xf0 && *p <= 0xf4)
        {
          if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80
              || (*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] > 0x8f))
            return false;
          p += 4;
        }
      else
        return false;
    }
  return true;
}

size_t
wick_utf8_encode (uint32_t code, char *out)
{
  if (code < 0x80)
    {
      out[0] = (char)code;
      return 1;
    }
  if (code < 0x800)
    {
      out[0] = (char)(0xc0 | code >> 6);
      out[1] = (char)(0x80 | (code & 0x3f));
      return 2;
    }
  if (code < 0x10000)
    {
      out[0] = (char)(0xe0 | code >> 12);
      out[1] = (char)(0x80 | (code >> 6 & 0x3f));
      out[2] = (char)(0x80 | (code & 0x3f));
      return 3;
    }
  out[0] = (char)(0xf0 | code >> 18);
  out[1] = (char)(0x80 | (code >> 12 & 0x3f));
  out[2] = (char)(0x80 | (code >> 6 & 0x3f));
  out[3] = (char)(0x80 | (code & 0x3f));
  return 4;
}
