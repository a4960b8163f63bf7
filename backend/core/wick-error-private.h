/* wick-error-private.h — libwick's one error helper (not installed).
 *
 * Every failing call in libwick fills its WickError through these: a code
 * (WickErrorCode, wick-session.h) and a sentence. NULL errors are ignored.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wick/wick.h"

/* Sets error's code and formats its sentence. */
void wick_set_error (WickError *error, WickErrorCode code, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));
/* wick_set_error that returns false, for `return wick_fail (error, ...)`. */
bool wick_fail (WickError *error, WickErrorCode code, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));
/* The code for a failed system call's errno: ENOENT -> NOT_FOUND, EEXIST ->
 * EXISTS, ENOMEM -> NO_MEMORY, EBUSY/EAGAIN -> BUSY, ETIMEDOUT -> TIMED_OUT,
 * ENOSPC -> NO_SPACE, EACCES/EPERM -> PERMISSION, anything else IO. */
WickErrorCode wick_error_code_from_errno (int errnum);

/* Caller-allocated structs of the public API end in `_wick_reserved`, which
 * must be zero: a later libwick gives those bytes meaning, and a caller built
 * against 1.0 that zero-initialises its structs then gets the defaults.
 * Refuses a struct whose reserved words are not zero, naming the type. */
static inline bool
wick_check_reserved (const uint64_t *reserved, size_t n, const char *type, WickError *error)
{
  for (size_t i = 0; i < n; i++)
    if (reserved[i] != 0)
      return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                        "%s: reserved word %zu is not zero; initialise the struct with {0} "
                        "or designated initialisers",
                        type, i);
  return true;
}
#define WICK_CHECK_RESERVED(s, type, error)                                                   \
  wick_check_reserved ((s)->_wick_reserved,                                                   \
                       sizeof (s)->_wick_reserved / sizeof (s)->_wick_reserved[0], type, error)
