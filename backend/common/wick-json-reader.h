/* wick-json-reader.h — libwick's one JSON reader (private, not installed):
 * a bounded lexer over bytes that came from elsewhere, shared by the control
 * protocol's requests (control/wick-control-message.c) and the weight store's
 * safetensors headers and checkpoint indexes (weights/wick-weights-json.c).
 *
 * The grammar is RFC 8259's: whitespace is space, \t, \n, \r; strings are
 * strict UTF-8 (no overlong forms, no encoded surrogates, nothing above
 * U+10FFFF), no control characters, the standard escapes, \u surrogates paired;
 * numbers are -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; literals are
 * true, false and null. The reader never looks outside [data, data + length).
 *
 * Structure (objects, arrays, members, limits on members, nesting and size) is
 * the caller's: each user builds what it needs from these tokens and keeps its
 * own limits. A failed call returns false and leaves the error in the reader
 * as a code and two byte offsets; the caller words it (each protocol has its
 * own sentences, and tests pin them), typically with wick_set_error.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum
{
  WICK_JSON_READ_OK = 0,
  WICK_JSON_READ_UNTERMINATED_STRING, /* the input ended inside a string */
  WICK_JSON_READ_CONTROL_CHARACTER,   /* a byte below 0x20 in a string (error_byte) */
  WICK_JSON_READ_INVALID_UTF8,        /* at the first byte of the bad sequence */
  WICK_JSON_READ_TRUNCATED_ESCAPE,    /* the input ended right after a backslash */
  WICK_JSON_READ_INVALID_ESCAPE,      /* at the byte after the backslash (error_byte) */
  WICK_JSON_READ_TRUNCATED_HEX,       /* fewer than four bytes after \u */
  WICK_JSON_READ_INVALID_HEX,         /* at the first byte that is not a hex digit */
  WICK_JSON_READ_LONE_LOW_SURROGATE,  /* \uDC00-\uDFFF first */
  WICK_JSON_READ_LONE_HIGH_SURROGATE, /* \uD800-\uDBFF not followed by a low one */
  WICK_JSON_READ_NUL_CHARACTER,       /* \u0000 where WICK_JSON_READ_NO_NUL refuses it */
  WICK_JSON_READ_NO_DIGITS,           /* a number without integer digits ("-", "-x") */
  WICK_JSON_READ_LEADING_ZERO,        /* "01", "-00" (at the number's start) */
  WICK_JSON_READ_NO_FRACTION_DIGITS,  /* "1." */
  WICK_JSON_READ_NO_EXPONENT_DIGITS,  /* "1e", "1e+" */
  WICK_JSON_READ_INVALID_LITERAL,     /* not true / false / null */
} WickJsonReadError;

/* Flags for wick_json_reader_string. */
enum
{
  WICK_JSON_READ_NO_NUL = 1 << 0, /* refuse \u0000 (the result is a C string) */
};

typedef struct
{
  const unsigned char *data;
  size_t length;
  size_t pos;
  WickJsonReadError error;
  /* Where the failing token began: the opening quote of a string, the
   * backslash of an escape, the first byte of a number or a literal. */
  size_t error_start;
  /* Where reading stood when it failed (see each code). */
  size_t error_at;
  unsigned char error_byte; /* the offending byte, for the codes that name one */
} WickJsonReader;

/* A number's text as the grammar read it. */
typedef struct
{
  size_t start;  /* offset of its first byte ('-' or a digit) */
  size_t length; /* bytes of its text */
  bool negative;
  bool integer;        /* no fraction, no exponent */
  size_t digits_start; /* the integer digits, after any '-' */
  size_t n_digits;
} WickJsonNumberText;

void wick_json_reader_init (WickJsonReader *reader, const void *data, size_t length);

static inline void
wick_json_reader_skip_whitespace (WickJsonReader *reader)
{
  while (reader->pos < reader->length)
    {
      unsigned char c = reader->data[reader->pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      reader->pos++;
    }
}

static inline bool
wick_json_reader_at_end (const WickJsonReader *reader)
{
  return reader->pos >= reader->length;
}

/* The byte at the cursor, or -1 at the end. */
static inline int
wick_json_reader_peek (const WickJsonReader *reader)
{
  return reader->pos < reader->length ? reader->data[reader->pos] : -1;
}

/* Steps over @c when it is at the cursor. */
static inline bool
wick_json_reader_accept (WickJsonReader *reader, char c)
{
  if (reader->pos < reader->length && reader->data[reader->pos] == (unsigned char)c)
    {
      reader->pos++;
      return true;
    }
  return false;
}

/* Reads the string whose opening quote is at the cursor, decoding it into
 * @out, which must have room for as many bytes as the rest of the input (a
 * decoded string is never longer than its quoted text); a NUL is written after
 * it. *@out_length excludes that NUL (the text may hold "\u0000" unless
 * WICK_JSON_READ_NO_NUL is given). */
bool wick_json_reader_string (WickJsonReader *reader, char *out, size_t *out_length,
                              unsigned flags);

/* Reads the number at the cursor ('-' or a digit) by the grammar. Its value is
 * the caller's (wick_json_number_u64, or strtod on the text). */
bool wick_json_reader_number (WickJsonReader *reader, WickJsonNumberText *number);

/* Steps over @word ("true", "false", "null") at the cursor. */
bool wick_json_reader_literal (WickJsonReader *reader, const char *word);

/* The value of an integer number's digits when it is non-negative and fits
 * 64 bits. */
bool wick_json_number_u64 (const WickJsonReader *reader, const WickJsonNumberText *number,
                           uint64_t *out);
/* The same for raw digits (no sign, no fraction). */
bool wick_json_digits_u64 (const char *digits, size_t length, uint64_t *out);
