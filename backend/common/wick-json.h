/* wick-json.h — libwick's one JSON writer, and the number formatting it shares
 * with the model (compiled into both from backend/common, never copied):
 * compact JSON text as candle-graph's writer (serde_json)
 * lays it out: strings escaped as serde_json does ("\"", "\\", \b \f \n \r \t,
 * other control bytes as \u00XX, everything else verbatim) with invalid UTF-8
 * replaced by U+FFFD; floats in shortest round-trip form laid out as ryu does
 * (2.0, 0.42, -0.0, 1e16, 1.5e-7); non-finite floats as null.
 *
 * A WickJson grows on the heap; wick_json_reset keeps its storage. Allocation
 * failure, or growing past limit (when it is not 0: the control protocol's
 * replies are bounded), sets failed and further appends do nothing.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct
{
  char *data;
  size_t length;
  size_t capacity;
  bool failed;
  size_t limit; /* the most bytes data may hold (0: no limit) */
} WickJson;

void wick_json_init (WickJson *json);
/* Room for extra more bytes (plus a NUL) at json->data + json->length; false
 * (and failed set) when memory runs out. */
bool wick_json_reserve (WickJson *json, size_t extra);
void wick_json_clear (WickJson *json);
void wick_json_reset (WickJson *json);
void wick_json_append (WickJson *json, const char *bytes, size_t length);
void wick_json_raw (WickJson *json, const char *text);
void wick_json_string (WickJson *json, const char *string);
void wick_json_string_len (WickJson *json, const char *string, size_t length);
void wick_json_u64 (WickJson *json, uint64_t value);
void wick_json_i64 (WickJson *json, int64_t value);
void wick_json_double (WickJson *json, double value);
/* The same value as wick_json_double, an integral one without its ".0"
 * ("2", "-0", "1000000000000000", but "1e16", "0.5"): the layout of the
 * records that never went through serde (Wick's own extension records). */
void wick_json_number (WickJson *json, double value);
void wick_json_bool (WickJson *json, bool value);
/* ,"key": (or "key": right after an opening brace) */
void wick_json_key (WickJson *json, const char *key);
/* the same with the key JSON-escaped */
void wick_json_key_escaped (WickJson *json, const char *key);
void wick_json_u64_array (WickJson *json, const uint64_t *values, size_t n);
void wick_json_string_array (WickJson *json, const char *const *values, size_t n);

/* @string (@length bytes) as a quoted JSON string into @out, which has room for
 * WICK_JSON_ESCAPED_MAX (length) bytes; no NUL; returns the bytes written. */
#define WICK_JSON_ESCAPED_MAX(length) (6 * (length) + 2)
size_t wick_json_escape (const char *string, size_t length, char *out);

/* The shortest decimal digits that read back as @value (finite, positive, not
 * 0) into @digits (NUL-terminated, no trailing zeros), their count in
 * *@n_digits; returns the decimal exponent of the first digit. */
int wick_format_shortest_digits (double value, char digits[24], int *n_digits);

/* Shortest round-trip text of a finite double into buffer (>= 32 bytes). */
size_t wick_format_double (double value, char *buffer);

/* Decimal digits of @value into @buffer (>= 20 bytes), no NUL; returns the length. */
size_t wick_format_u64 (uint64_t value, char *buffer);
/* Lower-case hex digits of @value, no "0x", no leading zeros, into @buffer
 * (>= 16 bytes), no NUL; returns the length. */
size_t wick_format_hex_u64 (uint64_t value, char *buffer);
