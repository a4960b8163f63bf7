/* wick-error-private.h — libwick's one error helper (not installed).
 *
 * Every failing call in libwick fills its WickError through these: a code
 * (WickErrorCode, wick-session.h) and a sentence. NULL errors are ignored.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#include "wick/wick.h"

/* Sets error's code and formats its sentence. */
void wick_set_error (WickError *error, WickErrorCode code, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));
void wick_set_error_valist (WickError *error, WickErrorCode code, const char *format,
                            va_list args) __attribute__ ((format (printf, 3, 0)));
/* wick_set_error that returns false, for `return wick_fail (error, ...)`. */
bool wick_fail (WickError *error, WickErrorCode code, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));
/* The code for a failed system call's errno: ENOENT -> NOT_FOUND, EEXIST ->
 * EXISTS, ENOMEM -> NO_MEMORY, EBUSY/EAGAIN -> BUSY, ETIMEDOUT -> TIMED_OUT,
 * ENOSPC -> NO_SPACE, EACCES/EPERM -> PERMISSION, anything else IO. */
WickErrorCode wick_error_code_from_errno (int errnum);
