/* wick-panel-requests.h — control requests sent by a live page (Weights,
 * Stages): counts those in flight, knows whether the periodic `list` is one
 * of them, reads each reply into a typed WickControlResult (the pages never
 * see JSON) and turns a failed request into a toast. A `list` that could not
 * be sent or was refused stays quiet (the next refresh asks again); a reply
 * that breaks the protocol is always said, a repeated one once. */
#pragma once

#include <json-glib/json-glib.h>

#include "client/wick-control-result.h"
#include "wick-window.h"

G_BEGIN_DECLS

typedef struct
{
  guint pending;       /* requests in flight */
  gboolean listing;    /* a `list` is among them */
  gboolean list_again; /* a `list` was asked for while that one was in flight */
  /* Sends the panel's `list` again (its refresh): called when a `list` asked
   * for while another was in flight can go, after that one's reply, so that a
   * reply read before an evict or a capture took effect is not the last. */
  void (*relist) (gpointer panel);
  char *last_problem;  /* the protocol error of the last malformed `list` reply */
  guint64 n_malformed; /* replies that broke the protocol */
} WickPanelRequests;

/* Called with every reply that was read: status OK, or REFUSED/BUSY with the
 * session's sentence in result->error. Never called when no reply came or
 * the reply broke the protocol (those are toasts). */
typedef void (*WickPanelReplyFunc) (gpointer panel, const WickControlResult *result);

/* Sends @object (a request for @command) to @socket_path; @func gets the
 * typed reply on the main thread. @requests and @window (the panel's weak
 * pointer to its window) live in @panel, which is kept alive until the reply.
 * @what names the request in a failure toast. */
void wick_panel_requests_send (WickPanelRequests *requests, GObject *panel,
                               WickWindow *const *window, const char *socket_path,
                               WickControlCommand command, JsonObject *object, int timeout_ms,
                               WickPanelReplyFunc func, const char *what);
/* TRUE when the panel's `list` may be sent now (it is then in flight); FALSE
 * when one is in flight already: it is sent again (relist) after that one's
 * reply. */
gboolean wick_panel_requests_begin_list (WickPanelRequests *requests);
/* Frees what @requests holds (the panel's finalize). */
void wick_panel_requests_clear (WickPanelRequests *requests);

G_END_DECLS
