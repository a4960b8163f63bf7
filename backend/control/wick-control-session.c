/* wick-control-session.c — what the control server reads of a session: the
 * metadata "hello" reports and marks. Only the session's public accessors are
 * used, so the server never depends on the recording core's internals. */
#include "config.h"

#include "wick-control-private.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void
copy_string (char *out, size_t size, const char *value)
{
  snprintf (out, size, "%s", value != NULL ? value : "");
}

static void
format_iso8601 (uint64_t unix_ns, char *out, size_t size)
{
  time_t seconds = (time_t)(unix_ns / 1000000000u);
  struct tm tm;
  gmtime_r (&seconds, &tm);
  char date[32];
  strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (out, size, "%s.%03uZ", date, (unsigned)(unix_ns / 1000000u % 1000u));
}

void
wick_control_session_info (WickSession *session, WickControlSessionInfo *out)
{
  memset (out, 0, sizeof *out);
  copy_string (out->program, sizeof out->program, wick_session_get_program (session));
  copy_string (out->entrypoint, sizeof out->entrypoint, wick_session_get_entrypoint (session));
  copy_string (out->run_id, sizeof out->run_id, wick_session_get_run_id (session));
  out->pid = wick_session_get_pid (session);
  out->started_unix_ns = wick_session_get_start_unix_ns (session);
  format_iso8601 (out->started_unix_ns, out->started, sizeof out->started);
  out->policy = wick_ring_policy_to_string (wick_session_get_policy (session));
  out->dropped = wick_session_get_dropped (session);
  out->strict = wick_session_get_strict (session);
  out->finished = wick_session_is_finished (session);
  out->ring_fd = wick_session_get_ring_fd (session);
}

bool
wick_control_session_mark (WickSession *session, const char *label, WickError *error)
{
  return wick_session_mark (session, label, error);
}
