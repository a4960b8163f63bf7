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

/* "1 error", "2 errors": the count and its noun. wick-trace's text is English
 * in every locale (wick-trace-locale.h), so no catalog is asked. */
static inline char *
wick_trace_count (guint64 n, const char *one, const char *many)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT " %s", n, n == 1 ? one : many);
}

typedef int (*WickTraceCommandFunc) (int argc, char **argv);

/* Parses subcommand @name's options with GOptionContext (wick-trace.c):
 * @entries (may be NULL) plus -h/--help, which prints "Usage: wick-trace NAME
 * [OPTION…] @parameters", @summary and the options to stdout. Options and
 * operands may come in any order; a "--" ends the options (what follows is
 * operands even when it starts with '-') and is dropped, or kept in argv when
 * @keep_separator (compare's cohorts). Returns -1 when the command goes on,
 * with argc and argv holding NAME then the operands; otherwise the exit status:
 * WICK_TRACE_EXIT_OK after --help, WICK_TRACE_EXIT_USAGE after an unknown
 * option or a missing value (the message names the option). */
int wick_trace_parse_options (const char *name, const char *parameters, const char *summary,
                              const GOptionEntry *entries, gboolean keep_separator, int *argc,
                              char ***argv);

/* A usage error of subcommand @name on stderr ("wick-trace NAME: MESSAGE (see
 * wick-trace NAME --help)"); returns WICK_TRACE_EXIT_USAGE. */
int wick_trace_usage_error (const char *name, const char *format, ...) G_GNUC_PRINTF (2, 3);

int wick_trace_check (int argc, char **argv);
int wick_trace_summary (int argc, char **argv);
int wick_trace_tracks (int argc, char **argv);
int wick_trace_convert (int argc, char **argv);
int wick_trace_render (int argc, char **argv);
int wick_trace_compare (int argc, char **argv);
int wick_trace_ranks (int argc, char **argv);
int wick_trace_memory (int argc, char **argv);
/* `wick-trace compare A B` when both are CUDA memory snapshots: live bytes by
 * stack at each snapshot, what grew and shrank. */
int wick_trace_memory_compare (const char *a, const char *b, gboolean json);
int wick_trace_gpu (int argc, char **argv);
int wick_trace_arrays (int argc, char **argv);
int wick_trace_sessions (int argc, char **argv);
int wick_trace_attach (int argc, char **argv);
int wick_trace_control (int argc, char **argv);
