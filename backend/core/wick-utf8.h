/* wick-utf8.h — cutting text on a UTF-8 character boundary (private).
 *
 * Error text quotes names that came from elsewhere (checkpoint keys, module
 * names, commands) and cuts them to fit: "%.200s" would cut in the middle of a
 * character and the reply would not be valid UTF-8 (so not valid JSON). Every
 * cut in libwick goes through these instead:
 *
 *   snprintf (buf, size, "key '%.*s'", WICK_UTF8_CUT (key, 200));
 *
 * and a message formatted into a fixed buffer is passed to
 * wick_utf8_trim_end() afterwards, which drops a character that snprintf cut
 * at the end of the buffer. Invalid UTF-8 that was in the input is not
 * repaired here; the reply writers replace it with U+FFFD.
 */
#pragma once

#include <stddef.h>

/* Bytes of the longest prefix of @s of at most @max bytes that does not end
 * inside a character (the whole string when it is shorter). */
size_t wick_utf8_cut (const char *s, size_t max);

/* Drops an incomplete character at the end of @s (after a cut by snprintf). */
void wick_utf8_trim_end (char *s);

/* Arguments for "%.*s": at most @max bytes of @s, ending on a boundary. */
#define WICK_UTF8_CUT(s, max) (int)wick_utf8_cut ((s), (max)), (s)
