/* wick-remote-channel.h — one long-lived ssh for the control requests of a
 * remote live window (the Weights and Stages pages: list, evict, restore,
 * capture), instead of a new ssh connection per request.
 *
 * A channel belongs to an address (ssh://[user@]host[:port]/PID). The live
 * window opens it when it attaches and closes it when it goes away
 * (wick_remote_channel_hold/drop); wick_live_request_async() sends an ssh://
 * request on the address's channel when there is one. The link is opened on
 * the first request, and every request waits for its reply under a deadline
 * (the request's own timeout plus WICK_REMOTE_CHANNEL_MARGIN_MS). Requests on
 * one channel go one at a time (the node answers them in order).
 *
 * When the channel dies: a link found dead before the request went out (ssh
 * exited while idle, a write that failed) is opened again and the request
 * sent on the new one; a link that dies after the request went out ends that
 * request with an error saying so (the node may or may not have carried it
 * out) and the next request opens a new link.
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define WICK_REMOTE_CHANNEL_MARGIN_MS 20000

/* Keeps a channel for @url (counted: each hold needs a drop). */
void wick_remote_channel_hold (const char *url, const char *remote_command);
/* The last drop closes its ssh (the node's serve exits). */
void wick_remote_channel_drop (const char *url);
/* Whether @url has a channel (held). */
gboolean wick_remote_channel_exists (const char *url);

/* One control request on @url's channel (blocking: run it off the main
 * thread); the reply without its "v". FALSE-y (NULL) with @error when there
 * is no channel, or as above. */
JsonObject *wick_remote_channel_request (const char *url, JsonObject *request, int timeout_ms,
                                         GError **error);

G_END_DECLS
