/* wick-panel-requests.c — see wick-panel-requests.h. */
#include "config.h"

#include "wick-panel-requests.h"

#include <glib/gi18n.h>

#include "live/wick-live-client.h"
#include "wick-live-session.h"

typedef struct
{
  WickPanelRequests *requests;
  GObject *panel;
  WickWindow *const *window;
  WickPanelReplyFunc func;
  char *what;
} Request;

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Request *request = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) reply = wick_live_request_finish (result, &error);
  gboolean is_list = g_strcmp0 (request->what, "list") == 0;
  request->requests->pending--;
  if (reply != NULL)
    request->func (request->panel, reply, request->what);
  else if (!is_list && *request->window != NULL)
    {
      g_autofree char *message
        = g_strdup_printf (_ ("%s failed: %s"), request->what, error->message);
      wick_live_window_toast_kind (*request->window, request->what, message);
    }
  if (is_list)
    request->requests->listing = FALSE;
  g_free (request->what);
  g_object_unref (request->panel);
  g_free (request);
}

void
wick_panel_requests_send (WickPanelRequests *requests, GObject *panel, WickWindow *const *window,
                          const char *socket_path, JsonObject *object, int timeout_ms,
                          WickPanelReplyFunc func, const char *what)
{
  Request *request = g_new0 (Request, 1);
  request->requests = requests;
  request->panel = g_object_ref (panel);
  request->window = window;
  request->func = func;
  request->what = g_strdup (what);
  requests->pending++;
  wick_live_request_async (socket_path, object, timeout_ms, NULL, on_reply, request);
}
