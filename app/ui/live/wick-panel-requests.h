/* wick-panel-requests.h — control requests sent by a live page (Weights,
 * Stages): counts those in flight, knows whether the periodic `list` is one
 * of them, and turns a failed request into a toast. A failed `list` stays
 * quiet: the next refresh asks again. */
#pragma once

#include <json-glib/json-glib.h>

#include "wick-window.h"

G_BEGIN_DECLS

typedef struct
{
  guint pending;    /* requests in flight */
  gboolean listing; /* a `list` is among them */
} WickPanelRequests;

typedef void (*WickPanelReplyFunc) (gpointer panel, JsonObject *reply, const char *what);

/* Sends @object to @socket_path; @func gets the reply on the main thread.
 * @requests and @window (the panel's weak pointer to its window) live in
 * @panel, which is kept alive until the reply. @what names the request in a
 * failure toast; "list" marks the periodic listing. */
void wick_panel_requests_send (WickPanelRequests *requests, GObject *panel,
                               WickWindow *const *window, const char *socket_path,
                               JsonObject *object, int timeout_ms, WickPanelReplyFunc func,
                               const char *what);

G_END_DECLS
