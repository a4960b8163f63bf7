/* wick-remote-session.h — the remote requests shared by wick-trace --remote
 * and the app: a node's session objects checked into WickLiveSessionInfo,
 * an attach (ATTACH, ATTACHED, the snapshot) giving a fed WickLiveStream, and
 * one control request on its own link (docs/protocol.md, "Remote sessions
 * over SSH"). Everything from the node is bounded and cleaned (control
 * characters replaced) before it reaches a terminal or a widget.
 */
#pragma once

#include "wick-live-client.h"
#include "wick-live-stream.h"
#include "wick-remote-link.h"

G_BEGIN_DECLS

/* A string member from the node: at most 4 KiB, valid UTF-8, control
 * characters replaced by '?'; @fallback (may be NULL) when absent. */
char *wick_remote_clean_string (JsonObject *object, const char *name, const char *fallback);
guint64 wick_remote_clean_uint (JsonObject *object, const char *name);

/* The attach's small frames, read from their JSON payloads (bounded as every
 * payload is; a payload that is not a JSON object reads as one with no
 * members), each member cleaned as wick_remote_clean_string does. */
typedef struct
{
  guint64 lost;         /* records the node lost, 0 when absent */
  guint64 records;      /* records the node sent, 0 when absent */
  guint64 raw_bytes;    /* ring bytes the node read, 0 when absent */
  char *producer_state; /* "running" when absent */
} WickRemoteStats;
void wick_remote_read_stats (GBytes *payload, WickRemoteStats *stats);
void wick_remote_stats_clear (WickRemoteStats *stats);
/* END's producer_state, NULL when absent. */
char *wick_remote_read_end_state (GBytes *payload);
/* ERROR's sentence, @fallback when absent. */
char *wick_remote_read_error (GBytes *payload, const char *fallback);

/* ATTACH @pid on @link: the session's info and a fed stream with the attach
 * snapshot applied (@snapshot_error says why there is none). */
WickLiveStream *wick_remote_attach (WickRemoteLink *link, gint64 pid, gboolean strict,
                                    WickLiveSessionInfo **info, GError **snapshot_error,
                                    GError **error);

/* One control request to the session of @url's pid (ssh://host/PID), on a
 * link of its own; the reply without its "v". */
JsonObject *wick_remote_control (const char *url, const char *remote_command, gint64 pid,
                                 JsonObject *request, int timeout_ms, GError **error);

/* The sessions of @url's host (ssh://[user@]host[:port]), WickLiveSessionInfo
 * each, on a link of its own, the reply awaited at most @timeout_ms (after
 * ssh's own connect and hello deadlines); @host_out: the link's name. */
GPtrArray *wick_remote_list_sessions (const char *url, const char *remote_command, int timeout_ms,
                                      char **host_out, GError **error);

G_END_DECLS
