/* wick-json-reader.h — the one JSON lexer of libwick and the model (private,
 * not installed), over bytes that came from elsewhere.
 *
 * The grammar is RFC 8259's: whitespace is space, \t, \n, \r; strings have no
 * control characters, the standard escapes, \u surrogates paired, and (with
 * WICK_JSON_LEX_UTF8) strict UTF-8 (no overlong forms, no encoded surrogates,
 * nothing above U+10FFFF); numbers are -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?;
 * literals are true, false and null. Nothing here reads outside the bounds it
 * is given.
 *
 * Two layers. The lexer (wick_json_lex_*) works on pointers over [p, end): it
 * reads one token, returns where it stopped, and on a fault returns NULL with
 * a WickJsonLexFailure (a code and where). Its hot parts are inline: the
 * whitespace skip, a string's plain run (sixteen bytes at a time with SSE2),
 * numbers and literals; escapes, UTF-8 and the last bytes of the input are in
 * wick_json_lex_string_rest(). The model's serde_json scanner
 * (app/model/wick-json-scanner.h) is built on it and words faults as
 * serde_json does. The reader (wick_json_reader_*) is libwick's cursor over
 * the lexer with byte offsets, used by the control protocol's requests
 * (control/wick-control-message.c) and the weight store's safetensors headers
 * and checkpoint indexes (weights/wick-weights-json.c); its strings are always
 * strict UTF-8.
 *
 * Structure (objects, arrays, members, limits on members, nesting and size) is
 * the caller's: each user builds what it needs from these tokens and keeps its
 * own limits. A failed reader call returns false and leaves the error in the
 * reader as a code and two byte offsets; the caller words it (each protocol has
 * its own sentences, and tests pin them), typically with wick_set_error.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/wick-utf8.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* Flags for wick_json_reader_string and wick_json_lex_string. */
enum
{
  WICK_JSON_READ_NO_NUL = 1 << 0, /* refuse \u0000 (the result is a C string) */
  WICK_JSON_LEX_UTF8 = 1 << 1,    /* check strict UTF-8 (the reader always does) */
};

/* ---- the lexer ---------------------------------------------------------- */

/* Where a token failed. @start is the token's first byte: a string's opening
 * quote, the backslash of a faulty escape (the first of a surrogate pair), a
 * number's or a literal's first byte. @at is where the fault was found:
 *   UNTERMINATED_STRING, TRUNCATED_ESCAPE: the end of the input;
 *   CONTROL_CHARACTER, INVALID_ESCAPE: the byte (also in @byte);
 *   INVALID_UTF8: the first byte of the bad sequence;
 *   TRUNCATED_HEX: the first hex digit's place (fewer than four bytes remain);
 *   INVALID_HEX: the first byte of the four that is not a hex digit;
 *   LONE_LOW_SURROGATE, NUL_CHARACTER: after the escape;
 *   LONE_HIGH_SURROGATE: after the high escape when no "\u" follows it
 *     (@at == @start + 6), after the second escape when that is not a low
 *     surrogate (@at == @start + 12);
 *   NO_DIGITS, NO_FRACTION_DIGITS, NO_EXPONENT_DIGITS: where a digit was due
 *     (the byte, or the end of the input);
 *   LEADING_ZERO: the digit after the leading '0';
 *   INVALID_LITERAL: the first byte that differs from the word, or the end. */
typedef struct
{
  WickJsonReadError code;
  const char *start;
  const char *at;
  unsigned char byte;
} WickJsonLexFailure;

/* A number as the lexer read it. */
typedef struct
{
  const char *start; /* '-' or the first digit */
  const char *end;
  const char *digits; /* the integer digits, after any '-' */
  size_t n_digits;
  bool negative;
  bool integer; /* no fraction, no exponent */
  /* With want_value: the integer digits' value, unless they overflow 64 bits. */
  bool overflow;
  uint64_t significand;
} WickJsonLexNumber;

/* The lexer's hot parts are inlined into each reader's loop whatever the
 * compiler's size heuristics say: they run for every token. */
#define WICK_JSON_LEX_INLINE static inline __attribute__ ((always_inline))

WICK_JSON_LEX_INLINE const char *
wick_json_lex_whitespace (const char *p, const char *end)
{
  /* every byte that is not whitespace but might be is below '!': one
   * comparison for the common case of none */
  while (p < end && (unsigned char)*p <= ' ' && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
    p++;
  return p;
}

/* The plain run of a string's text from @text, sixteen bytes at a time: the
 * closing quote when the run ends at one; else NULL, with *@stop at the first
 * '\\' or control byte (or, with WICK_JSON_LEX_UTF8, byte above 0x7f), or
 * where fewer than sixteen bytes were left. */
WICK_JSON_LEX_INLINE const char *
wick_json_lex_string_plain (const char *text, const char *end, unsigned flags, const char **stop)
{
  const char *p = text;
#if defined(__SSE2__)
  while (end - p >= 16)
    {
      __m128i v = _mm_loadu_si128 ((const __m128i *)(const void *)p);
      __m128i quote = _mm_cmpeq_epi8 (v, _mm_set1_epi8 ('"'));
      __m128i backslash = _mm_cmpeq_epi8 (v, _mm_set1_epi8 ('\\'));
      /* c <= 0x1f, unsigned: max (c, 0x1f) == 0x1f */
      __m128i control
        = _mm_cmpeq_epi8 (_mm_max_epu8 (v, _mm_set1_epi8 (0x1f)), _mm_set1_epi8 (0x1f));
      unsigned mask
        = (unsigned)_mm_movemask_epi8 (_mm_or_si128 (_mm_or_si128 (quote, backslash), control));
      if (flags & WICK_JSON_LEX_UTF8)
        mask |= (unsigned)_mm_movemask_epi8 (v); /* the high bit of every byte */
      if (mask != 0)
        {
          p += __builtin_ctz (mask);
          if (*p == '"')
            return p;
          break;
        }
      p += 16;
    }
#else
  (void)end;
  (void)flags;
#endif
  *stop = p;
  return NULL;
}

WICK_JSON_LEX_INLINE const char *
wick_json_lex_fail (WickJsonLexFailure *failure, WickJsonReadError code, const char *start,
                    const char *at)
{
  failure->code = code;
  failure->start = start;
  failure->at = at;
  failure->byte = 0;
  return NULL;
}

static inline const char *
wick_json_lex_control (const char *text, const char *p, WickJsonLexFailure *failure)
{
  wick_json_lex_fail (failure, WICK_JSON_READ_CONTROL_CHARACTER, text - 1, p);
  failure->byte = (unsigned char)*p;
  return NULL;
}

/* A string from its first escape at @p (its text from @text), decoded into
 * @out: see wick_json_lex_string. */
const char *wick_json_lex_string_escaped (const char *text, const char *p, const char *end,
                                          char *out, unsigned flags, const char **str,
                                          size_t *length, WickJsonLexFailure *failure);

/* A string from @p onwards, its text starting at @text (after the opening
 * quote), once the plain run stopped: eight bytes at a time, then bytes; an
 * escape goes to wick_json_lex_string_escaped(). Inline so that each reader's
 * own slow path compiles it for its constant @flags. */
static inline const char *
wick_json_lex_string_rest (const char *text, const char *p, const char *end, char *out,
                           unsigned flags, const char **str, size_t *length,
                           WickJsonLexFailure *failure)
{
  const uint64_t high = (flags & WICK_JSON_LEX_UTF8) ? 0x8080808080808080ull : 0;

  for (;;)
    {
      /* the lowest flagged byte of the zero-byte test is exactly the first
       * '"', '\\' or control character of the chunk (or byte above 0x7f,
       * when UTF-8 is checked) */
      while (end - p >= 8)
        {
          uint64_t v, quote, backslash, control, mask;
          memcpy (&v, p, 8);
          quote = v ^ 0x2222222222222222ull;
          backslash = v ^ 0x5c5c5c5c5c5c5c5cull;
          quote = (quote - 0x0101010101010101ull) & ~quote;
          backslash = (backslash - 0x0101010101010101ull) & ~backslash;
          control = (v - 0x2020202020202020ull) & ~v;
          mask = (quote | backslash | control | (v & high)) & 0x8080808080808080ull;
          if (mask != 0)
            {
              p += __builtin_ctzll (mask) / 8;
              break;
            }
          p += 8;
        }
      for (; p < end; p++)
        {
          unsigned char c = (unsigned char)*p;
          if (c == '"' || c == '\\' || c < 0x20 || (c >= 0x80 && (flags & WICK_JSON_LEX_UTF8)))
            break;
        }
      if (p >= end)
        return wick_json_lex_fail (failure, WICK_JSON_READ_UNTERMINATED_STRING, text - 1, end);
      unsigned char c = (unsigned char)*p;
      if (c == '"')
        {
          *str = text;
          *length = (size_t)(p - text);
          return p + 1;
        }
      if (c == '\\')
        return wick_json_lex_string_escaped (text, p, end, out, flags, str, length, failure);
      if (c < 0x20)
        return wick_json_lex_control (text, p, failure);
      size_t n = wick_utf8_sequence_length ((const unsigned char *)p, (size_t)(end - p));
      if (n == 0)
        return wick_json_lex_fail (failure, WICK_JSON_READ_INVALID_UTF8, text - 1, p);
      p += n;
    }
}

/* Reads the string whose opening quote is at @quote. *@str and *@length are
 * its text: in the input when it has no escape, else decoded at @out, which
 * must have room for as many bytes as the rest of the input (a decoded string
 * is never longer than its quoted text; nothing is written after it). Returns
 * the byte after the closing quote, or NULL with @failure set. */
WICK_JSON_LEX_INLINE const char *
wick_json_lex_string (const char *quote, const char *end, char *out, unsigned flags,
                      const char **str, size_t *length, WickJsonLexFailure *failure)
{
  const char *text = quote + 1, *p;
  const char *close = wick_json_lex_string_plain (text, end, flags, &p);
  if (close != NULL)
    {
      *str = text;
      *length = (size_t)(close - text);
      return close + 1;
    }
  return wick_json_lex_string_rest (text, p, end, out, flags, str, length, failure);
}

#define WICK_JSON_LEX_IS_DIGIT(c) ((unsigned)((c) - '0') < 10)

/* Reads the number at @p ('-' or a digit expected) by the grammar; with
 * @want_value (a constant) also its integer digits' value. Returns the byte
 * after it, or NULL with @failure set. */
WICK_JSON_LEX_INLINE const char *
wick_json_lex_number (const char *p, const char *end, bool want_value, WickJsonLexNumber *number,
                      WickJsonLexFailure *failure)
{
  const char *start = p;
  uint64_t significand = 0;
  bool overflow = false;

  number->start = start;
  number->negative = p < end && *p == '-';
  if (number->negative)
    p++;
  number->digits = p;
  if (p >= end || !WICK_JSON_LEX_IS_DIGIT (*p))
    return wick_json_lex_fail (failure, WICK_JSON_READ_NO_DIGITS, start, p);
  if (*p == '0')
    {
      p++;
      if (p < end && WICK_JSON_LEX_IS_DIGIT (*p))
        return wick_json_lex_fail (failure, WICK_JSON_READ_LEADING_ZERO, start, p);
    }
  else if (want_value)
    for (; p < end && WICK_JSON_LEX_IS_DIGIT (*p); p++)
      {
        uint64_t digit = (uint64_t)(*p - '0');
        if (__builtin_mul_overflow (significand, 10, &significand)
            || __builtin_add_overflow (significand, digit, &significand))
          overflow = true;
      }
  else
    for (p++; p < end && WICK_JSON_LEX_IS_DIGIT (*p); p++)
      ;
  number->n_digits = (size_t)(p - number->digits);
  number->integer = true;
  if (p < end && *p == '.')
    {
      number->integer = false;
      p++;
      if (p >= end || !WICK_JSON_LEX_IS_DIGIT (*p))
        return wick_json_lex_fail (failure, WICK_JSON_READ_NO_FRACTION_DIGITS, start, p);
      while (p < end && WICK_JSON_LEX_IS_DIGIT (*p))
        p++;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      number->integer = false;
      p++;
      if (p < end && (*p == '+' || *p == '-'))
        p++;
      if (p >= end || !WICK_JSON_LEX_IS_DIGIT (*p))
        return wick_json_lex_fail (failure, WICK_JSON_READ_NO_EXPONENT_DIGITS, start, p);
      while (p < end && WICK_JSON_LEX_IS_DIGIT (*p))
        p++;
    }
  number->end = p;
  number->overflow = overflow;
  number->significand = significand;
  return p;
}

const char *wick_json_lex_literal_failed (const char *p, const char *end, const char *word,
                                          size_t length, WickJsonLexFailure *failure);

/* Steps over @word ("true", "false", "null"; @length its length) at @p. */
WICK_JSON_LEX_INLINE const char *
wick_json_lex_literal (const char *p, const char *end, const char *word, size_t length,
                       WickJsonLexFailure *failure)
{
  if ((size_t)(end - p) >= length && memcmp (p, word, length) == 0)
    return p + length;
  return wick_json_lex_literal_failed (p, end, word, length, failure);
}

/* ---- the reader: libwick's cursor with byte offsets --------------------- */

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
  const char *data = (const char *)reader->data;
  reader->pos = (size_t)(wick_json_lex_whitespace (data + reader->pos, data + reader->length) - data);
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

/* Reads the string whose opening quote is at the cursor (strict UTF-8),
 * decoding it into @out, which must not overlap the input and must have room for as many bytes as the rest of the input (a
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
