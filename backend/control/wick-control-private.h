/* wick-control-private.h — what the files of backend/control/ share.
 *
 * The control server (wick-control-server.c) owns the socket and its thread;
 * commands (wick-control-commands.c) turn a parsed request into a reply;
 * wick-control-session.c is the only file that reads the recording core's
 * session state (metadata, ring fd, drop counts, marks).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "wick-session-private.h"
#include "wick-control-message.h"

/* Room for "<dir>/<pid>-<n>.sock" in sockaddr_un.sun_path (108 bytes). */
#define WICK_CONTROL_MAX_DIRECTORY 80

/* What "hello" reports about the session. */
typedef struct
{
  char program[256];
  int64_t pid;
  char entrypoint[256];
  char run_id[128];
  char started[40]; /* ISO-8601 UTC of the session's open */
  uint64_t started_unix_ns;
  const char *policy; /* "drop", "block", "overwrite" */
  uint64_t dropped;   /* records dropped so far, all producers */
  int ring_fd;        /* owned by the session; -1 when it has no ring */
  bool strict;
  bool finished;
} WickControlSessionInfo;

void wick_control_session_info (WickSession *session, WickControlSessionInfo *out);
bool wick_control_session_mark (WickSession *session, const char *label, WickError *error);

/* Runs one request against the session and writes its reply (without the
 * "v" envelope, which the server adds). Never fails: errors become
 * {"ok": false, "error": ...}. Sets *send_ring_fd for "hello". */
void wick_control_execute (WickSession *session, const WickControlRequest *request,
                           WickControlWriter *reply, bool *send_ring_fd);

/* The registered modules and stages, as "list" and "snapshot" write them
 * (wick-control-commands.c): each calls @func for every module (stage) that
 * the store (session) reports and returns how many; 0 in a libwick built
 * without the weight store (stage capture). write_module and write_stage
 * write one's members into the object the caller opened. */
typedef void (*WickControlModuleFunc) (const WickWeightStats *stats, void *data);
typedef void (*WickControlStageFunc) (WickStage *stage, void *data);
size_t wick_control_foreach_module (WickSession *session, WickControlModuleFunc func, void *data);
size_t wick_control_foreach_stage (WickSession *session, WickControlStageFunc func, void *data);
void wick_control_write_module (WickControlWriter *writer, const WickWeightStats *stats);
void wick_control_write_stage (WickControlWriter *writer, WickStage *stage);

/* "snapshot" (wick-control-snapshot.c): the live storages, modules and
 * stages as a sealed memfd passed with the reply. */
void wick_control_command_snapshot (WickSession *session, const WickControlRequest *request,
                                    WickControlWriter *reply, bool *send_ring_fd);

/* The control lock (wick_session_lock_control), held by the weight commands. */
void wick_control_server_lock_host (WickSession *session);
void wick_control_server_unlock_host (WickSession *session);
