/* wick-trace-sessions.h — sessions and control errors as the live commands
 * print them (wick-trace-sessions.c). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "client/wick-live-client.h"

/* One JSON object on one line of stdout. */
void wick_trace_print_json (JsonObject *object);
JsonObject *wick_trace_session_to_json (const WickLiveSessionInfo *info);
/* The sessions as `wick-trace sessions` prints them (a table, or --json). */
void wick_trace_print_sessions (GPtrArray *sessions, gboolean json);
/* {"ok":false,"error":MESSAGE} on stdout; returns WICK_TRACE_EXIT_USAGE. */
int wick_trace_print_control_error (const char *message);
