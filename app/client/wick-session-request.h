/* wick-session-request.h — one control request to a session, off the main thread.
 *
 * The session is a local socket (wick-live-client.h) or a remote one,
 * ssh://host/PID (wick-remote-session.h): on the live window's control
 * channel when it has one, else on a link of its own to the node's
 * wick-trace (WICK_REMOTE_COMMAND). This sits above both, so the local
 * client knows nothing of the remote sessions built on it.
 */
#pragma once

#include "wick-live-client.h"

G_BEGIN_DECLS

/* One request on a fresh connection to @socket_path (a socket or ssh://host/PID),
 * in a worker thread. */
void wick_live_request_async (const char *socket_path, JsonObject *request, int timeout_ms,
                              GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data);
JsonObject *wick_live_request_finish (GAsyncResult *result, GError **error);

G_END_DECLS
