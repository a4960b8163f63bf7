/* wick-utf8.c — cutting text on a UTF-8 character boundary (wick-utf8.h). */
#include "config.h"

#include "core/wick-utf8.h"

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
