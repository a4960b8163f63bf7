/* wick-utf8.h — UTF-8 for libwick and the model (private; compiled into both
 * from backend/common, never copied): strict validation, encoding, and cutting
 * text on a character boundary.
 *
 * Strict means what Rust's str::from_utf8 and RFC 3629 accept: no overlong
 * forms, no encoded surrogates (U+D800-U+DFFF), nothing above U+10FFFF.
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the valid UTF-8 sequence at @s (1 to 4), or 0 when the bytes there
 * (at most @available of them) do not start one. */
size_t wick_utf8_sequence_length (const unsigned char *s, size_t available);

/* True when all @length bytes of @data are strict UTF-8 (NUL bytes included). */
bool wick_utf8_validate (const char *data, size_t length);

/* Writes the UTF-8 form of @code (at most U+10FFFF, not a surrogate) to @out
 * (room for 4 bytes); returns its length. */
size_t wick_utf8_encode (uint32_t code, char *out);

/* Bytes of the longest prefix of @s of at most @max bytes that does not end
 * inside a character (the whole string when it is shorter). */
size_t wick_utf8_cut (const char *s, size_t max);

/* Drops an incomplete character at the end of @s (after a cut by snprintf). */
void wick_utf8_trim_end (char *s);

/* Arguments for "%.*s": at most @max bytes of @s, ending on a boundary. */
#define WICK_UTF8_CUT(s, max) (int)wick_utf8_cut ((s), (max)), (s)
