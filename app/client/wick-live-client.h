/* wick-live-client.h — the client side of the control protocol (docs/protocol.md).
 *
 * Discovery: wick_live_list_sessions() removes stale sockets, then says hello
 * to every socket in the per-user control directory and returns what each
 * session reports. Nothing here waits on a peer for long: connects are
 * non-blocking (a full queue is retried for WICK_LIVE_CONNECT_TIMEOUT_MS), a
 * stopped process is never connected to, and every exchange has a deadline. A connection sends
 * framed JSON requests (the "v" member is added here) and reads one framed reply per request, with
 * a deadline; hello's reply carries the ring's memfd, received with SCM_RIGHTS. Replies are
 * untrusted: a bad frame length, malformed JSON or a reply that is not an
 * object is an error (WICK_LIVE_ERROR_PROTOCOL) naming the socket.
 *
 * Used by wick-trace (sessions, attach, control) and by the app; blocking calls,
 * so the app runs them off the main thread (wick-session-request.h).
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define WICK_LIVE_ERROR (wick_live_error_quark ())
GQuark wick_live_error_quark (void);

typedef enum
{
  WICK_LIVE_ERROR_NOT_FOUND, /* no session with that pid */
  WICK_LIVE_ERROR_CONNECT,   /* connect failed (gone, refused, permission) */
  WICK_LIVE_ERROR_PROTOCOL,  /* malformed reply */
  WICK_LIVE_ERROR_TIMEOUT,   /* no reply before the deadline */
  WICK_LIVE_ERROR_REFUSED,   /* the session answered ok=false */
  WICK_LIVE_ERROR_BUSY,      /* the session answered "busy": try again later */
} WickLiveError;

/* Default deadline of a request, and of a stage capture (which times rounds). */
#define WICK_LIVE_REQUEST_TIMEOUT_MS 10000
#define WICK_LIVE_CAPTURE_TIMEOUT_MS 180000
/* How long a connect may wait for room in a listener's full queue. */
#define WICK_LIVE_CONNECT_TIMEOUT_MS 500

typedef struct
{
  char *socket_path;
  char *program;
  gint64 pid;
  char *entrypoint;
  char *started; /* ISO-8601 */
  guint64 started_unix_ns;
  char *policy; /* drop, block, overwrite */
  guint64 dropped;
  gboolean strict;
  char *run_id;
  gboolean finished; /* the session finished (the process may still run) */
  /* Set only by wick_live_list_all_sessions() for a session that exists but
   * did not answer hello: why ("... is not answering: ...", or its busy
   * reply); the metadata above is then unknown ("?", empty). */
  char *problem;
  gboolean busy;
} WickLiveSessionInfo;

void wick_live_session_info_free (WickLiveSessionInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLiveSessionInfo, wick_live_session_info_free)

/* The control directory (the same rule as libwick's). */
char *wick_live_control_directory (GError **error);

/* Live sessions of this user that answered hello, sorted by pid (WickLiveSessionInfo). */
GPtrArray *wick_live_list_sessions (GError **error);
/* The same with the sessions that exist but did not answer (busy, stopped,
 * not answering in time), each with its problem set. */
GPtrArray *wick_live_list_all_sessions (GError **error);
/* The socket of the session of @pid: one that answers hello, else one that
 * exists (WICK_LIVE_ERROR_NOT_FOUND only when the pid has no socket). */
char *wick_live_find_socket (gint64 pid, GError **error);

typedef struct _WickLiveConnection WickLiveConnection;

WickLiveConnection *wick_live_connection_new (const char *socket_path, GError **error);
void wick_live_connection_free (WickLiveConnection *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickLiveConnection, wick_live_connection_free)

const char *wick_live_connection_get_path (WickLiveConnection *self);

/* Sends @request (its "v" is set here) and returns the reply object. A reply
 * with "ok": false is returned as is (not an error); see
 * wick_live_reply_check(). When @received_fd is not NULL it receives a file
 * descriptor passed with the reply, or -1. */
JsonObject *wick_live_connection_request (WickLiveConnection *self, JsonObject *request,
                                          int timeout_ms, int *received_fd, GError **error);

/* Says hello: the session's metadata, and its ring's memfd in @ring_fd (-1 when none). */
WickLiveSessionInfo *wick_live_connection_hello (WickLiveConnection *self, int *ring_fd,
                                                 GError **error);

/* FALSE with WICK_LIVE_ERROR_REFUSED and the reply's "error" when ok is false. */
gboolean wick_live_reply_check (JsonObject *reply, GError **error);

/* A new request object {"command": @command}; add members to it. */
JsonObject *wick_live_request_new (const char *command);

/* JSON from a peer (replies, snapshot lines) is nested at most this deep:
 * json-glib parses by recursion, so a line of 200 000 '[' would overflow
 * the stack. */
#define WICK_LIVE_MAX_JSON_DEPTH 64

/* Whether @data (@length bytes of JSON text) nests arrays and objects
 * deeper than @max_depth, without parsing it (strings are skipped). */
gboolean wick_live_json_too_deep (const char *data, gsize length, guint max_depth);

G_END_DECLS
