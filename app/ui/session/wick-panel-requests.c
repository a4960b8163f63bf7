/* wick-panel-requests.c — see wick-panel-requests.h. */
#include "config.h"

#include "wick-panel-requests.h"

#include <glib/gi18n.h>

#include "client/wick-session-request.h"
#include "wick-live-session.h"

typedef struct
{
  WickPanelRequests *requests;
  GObject *panel;
  WickWindow *const *window;
  WickControlCommand command;
  WickPanelReplyFunc func;
  char *what;
} Request;

static void
say (Request *request, const char *problem)
{
  if (*request->window == NULL)
    return;
  g_autofree char *message = g_strdup_printf (_ ("%s failed: %s"), request->what, problem);
  wick_live_window_toast_kind (*request->window, request->what, message);
}

static void
on_reply (GObject *source, GAsyncResult *async_result, gpointer user_data)
{
  Request *request = user_data;
  WickPanelRequests *requests = request->requests;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) reply = wick_live_request_finish (async_result, &error);
  gboolean is_list = request->command == WICK_CONTROL_RESULT_LIST;
  g_autoptr (WickControlResult) result = NULL;
  requests->pending--;
  if (reply != NULL)
    result = wick_control_result_parse (request->command, reply, &error);
  if (result != NULL)
    {
      if (is_list)
        g_clear_pointer (&requests->last_problem, g_free);
      request->func (request->panel, result);
    }
  else if (reply != NULL)
    {
      /* The session answered something the protocol does not allow. */
      requests->n_malformed++;
      if (!is_list || g_strcmp0 (requests->last_problem, error->message) != 0)
        say (request, error->message);
      if (is_list)
        {
          g_free (requests->last_problem);
          requests->last_problem = g_strdup (error->message);
        }
    }
  else if (!is_list)
    say (request, error->message);
  if (is_list)
    requests->listing = FALSE;
  if (is_list && requests->list_again)
    {
      requests->list_again = FALSE;
      if (requests->relist != NULL)
        requests->relist (request->panel);
    }
  g_free (request->what);
  g_object_unref (request->panel);
  g_free (request);
}

gboolean
wick_panel_requests_begin_list (WickPanelRequests *requests)
{
  if (requests->listing)
    {
      requests->list_again = TRUE;
      return FALSE;
    }
  requests->listing = TRUE;
  return TRUE;
}

void
wick_panel_requests_send (WickPanelRequests *requests, GObject *panel, WickWindow *const *window,
                          const char *socket_path, WickControlCommand command, JsonObject *object,
                          int timeout_ms, WickPanelReplyFunc func, const char *what)
{
  Request *request = g_new0 (Request, 1);
  request->requests = requests;
  request->panel = g_object_ref (panel);
  request->window = window;
  request->command = command;
  request->func = func;
  request->what = g_strdup (what);
  requests->pending++;
  wick_live_request_async (socket_path, object, timeout_ms, NULL, on_reply, request);
}

void
wick_panel_requests_clear (WickPanelRequests *requests)
{
  g_clear_pointer (&requests->last_problem, g_free);
}
