/* wick-session-request.c — see wick-session-request.h. */
#include "config.h"

#include "wick-session-request.h"

#include "wick-remote-channel.h"
#include "wick-remote-session.h"

typedef struct
{
  char *socket_path;
  JsonObject *request;
  int timeout_ms;
} RequestTask;

static void
request_task_free (RequestTask *task)
{
  g_free (task->socket_path);
  json_object_unref (task->request);
  g_free (task);
}

static void
request_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  RequestTask *request = data;
  GError *error = NULL;
  if (g_str_has_prefix (request->socket_path, "ssh://"))
    {
      /* A remote session (wick --attach ssh://host/PID): the request on
       * the live window's control channel (one long-lived ssh), else on a
       * link of its own to the node's wick-trace (WICK_REMOTE_COMMAND). */
      JsonObject *reply
        = wick_remote_channel_exists (request->socket_path)
            ? wick_remote_channel_request (request->socket_path, request->request,
                                           request->timeout_ms, &error)
            : wick_remote_control (request->socket_path, g_getenv ("WICK_REMOTE_COMMAND"), 0,
                                   request->request,
                                   request->timeout_ms + WICK_REMOTE_CHANNEL_MARGIN_MS, &error);
      if (reply == NULL)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, reply, (GDestroyNotify)json_object_unref);
      return;
    }
  g_autoptr (WickLiveConnection) connection
    = wick_live_connection_new (request->socket_path, &error);
  if (connection == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  JsonObject *reply = wick_live_connection_request (connection, request->request,
                                                    request->timeout_ms, NULL, &error);
  if (reply == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reply, (GDestroyNotify)json_object_unref);
}

void
wick_live_request_async (const char *socket_path, JsonObject *request, int timeout_ms,
                         GCancellable *cancellable, GAsyncReadyCallback callback,
                         gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  RequestTask *data = g_new0 (RequestTask, 1);
  data->socket_path = g_strdup (socket_path);
  data->request = json_object_ref (request);
  data->timeout_ms = timeout_ms;
  g_task_set_task_data (task, data, (GDestroyNotify)request_task_free);
  g_task_run_in_thread (task, request_thread);
}

JsonObject *
wick_live_request_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
