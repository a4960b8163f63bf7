/* wick-live-client-private.h — what only the tests call of wick-live-client.h (the app
 * includes wick-live-client.h alone). It declares no types: include it after
 * wick-live-client.h. */
#pragma once

G_BEGIN_DECLS

/* Sends raw bytes as one frame (tests of malformed messages). */
JsonObject *wick_live_connection_request_raw (WickLiveConnection *self, const char *body,
                                              gsize length, int timeout_ms, GError **error);

G_END_DECLS
