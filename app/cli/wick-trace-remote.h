/* wick-trace-remote.h — `wick-trace --remote ssh://… sessions|attach|control`
 * and `serve --stdio` (docs/protocol.md, "Remote sessions over SSH"), and the
 * pieces of the local commands (wick-trace-live.c) they share. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "client/wick-live-client.h"

/* Set by wick-trace.c from --remote (NULL-terminated) and --remote-command;
 * NULL when the commands act on this machine. */
extern char **wick_trace_remotes;
extern char *wick_trace_remote_command;


int wick_trace_remote_sessions (gboolean json);
int wick_trace_remote_attach (gint64 pid, gboolean strict, double duration,
                              const char *output_path);
int wick_trace_remote_control (gint64 pid, JsonObject *request);
int wick_trace_serve (int argc, char **argv);
/* `--remote ssh://… convert NODE_FILE`: the node's file read (READ, FILE
 * frames) into a local copy in a new temporary directory (@directory_out),
 * which the caller converts and removes; NULL after saying why on stderr. */
char *wick_trace_remote_fetch (const char *remote_path, char **directory_out);
