/* wick-error.c — libwick's one error helper (wick-error-private.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wick-error-private.h"
#include "common/wick-utf8.h"

static void
wick_set_error_valist (WickError *error, WickErrorCode code, const char *format, va_list args)
{
  if (error == NULL)
    return;
  /* The arguments may be error->message itself (a caller prefixing its own
   * sentence): format into a copy first. */
  char message[sizeof error->message];
  vsnprintf (message, sizeof message, format, args);
  wick_utf8_trim_end (message); /* a cut at the end of the buffer keeps whole characters */
  memcpy (error->message, message, sizeof message);
  error->code = code;
}

void
wick_set_error (WickError *error, WickErrorCode code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  wick_set_error_valist (error, code, format, args);
  va_end (args);
}

bool
wick_fail (WickError *error, WickErrorCode code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  wick_set_error_valist (error, code, format, args);
  va_end (args);
  return false;
}

WickErrorCode
wick_error_code_from_errno (int errnum)
{
  switch (errnum)
    {
    case ENOENT:
      return WICK_ERROR_NOT_FOUND;
    case EEXIST:
      return WICK_ERROR_EXISTS;
    case ENOMEM:
      return WICK_ERROR_NO_MEMORY;
    case EBUSY:
    case EAGAIN:
      return WICK_ERROR_BUSY;
    case ETIMEDOUT:
      return WICK_ERROR_TIMED_OUT;
    case ENOSPC:
      return WICK_ERROR_NO_SPACE;
    case EACCES:
    case EPERM:
      return WICK_ERROR_PERMISSION;
    default:
      return WICK_ERROR_IO;
    }
}

const char *
wick_error_code_to_string (WickErrorCode code)
{
  switch (code)
    {
    case WICK_ERROR_NONE:
      return "none";
    case WICK_ERROR_FAILED:
      return "failed";
    case WICK_ERROR_INVALID_ARGUMENT:
      return "invalid-argument";
    case WICK_ERROR_INVALID_DATA:
      return "invalid-data";
    case WICK_ERROR_NOT_FOUND:
      return "not-found";
    case WICK_ERROR_EXISTS:
      return "exists";
    case WICK_ERROR_STATE:
      return "state";
    case WICK_ERROR_BUSY:
      return "busy";
    case WICK_ERROR_TIMED_OUT:
      return "timed-out";
    case WICK_ERROR_DROPPED:
      return "dropped";
    case WICK_ERROR_WRONG_THREAD:
      return "wrong-thread";
    case WICK_ERROR_NO_SPACE:
      return "no-space";
    case WICK_ERROR_NO_MEMORY:
      return "no-memory";
    case WICK_ERROR_UNSUPPORTED:
      return "unsupported";
    case WICK_ERROR_PERMISSION:
      return "permission";
    case WICK_ERROR_IO:
      return "io";
    }
  return NULL;
}
