/* wick-trace-commands.h — the subcommands of wick-trace.
 *
 * Each subcommand lives in its own file and returns the process exit status:
 * 0 success, 1 health errors, 2 parse error, 3 usage or I/O error.
 */
#pragma once

#include <glib.h>

#define WICK_TRACE_EXIT_OK 0
#define WICK_TRACE_EXIT_HEALTH 1
#define WICK_TRACE_EXIT_PARSE 2
#define WICK_TRACE_EXIT_USAGE 3

typedef int (*WickTraceCommandFunc) (int argc, char **argv);

int wick_trace_check (int argc, char **argv);
int wick_trace_summary (int argc, char **argv);
int wick_trace_tracks (int argc, char **argv);
int wick_trace_convert (int argc, char **argv);
int wick_trace_render (int argc, char **argv);
int wick_trace_compare (int argc, char **argv);
int wick_trace_sessions (int argc, char **argv);
int wick_trace_attach (int argc, char **argv);
int wick_trace_control (int argc, char **argv);
