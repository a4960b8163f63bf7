/* wick-remote-session.c — remote attach and control requests (see the header). */
#include "config.h"

#include "wick-remote-session.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FIELD_MAX_BYTES 4096

char *
wick_remote_clean_string (JsonObject *object, const char *name, const char *fallback)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return fallback != NULL ? g_strdup (fallback) : NULL;
  const char *text = json_node_get_string (node);
  gsize length = strlen (text);
  g_autofree char *valid = g_utf8_make_valid (text, (gssize)MIN (length, FIELD_MAX_BYTES));
  for (char *p = valid; *p != '\0'; p++)
    if ((guchar)*p < 0x20 || *p == 0x7f)
      *p = '?';
  return g_steal_pointer (&valid);
}

guint64
wick_remote_clean_uint (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return 0;
  gint64 value = json_node_get_int (node);
  return value > 0 ? (guint64)value : 0;
}

/* The payload's object, or NULL when it is no bounded JSON object. */
static JsonNode *
frame_object (GBytes *payload, const char *what)
{
  JsonNode *node = wick_remote_parse_json (payload, what, NULL);
  if (node != NULL && !JSON_NODE_HOLDS_OBJECT (node))
    g_clear_pointer (&node, json_node_unref);
  return node;
}

void
wick_remote_read_stats (GBytes *payload, WickRemoteStats *stats)
{
  g_autoptr (JsonNode) node = frame_object (payload, "stats");
  JsonObject *object = node != NULL ? json_node_get_object (node) : NULL;
  stats->lost = object != NULL ? wick_remote_clean_uint (object, "lost") : 0;
  stats->records = object != NULL ? wick_remote_clean_uint (object, "records") : 0;
  stats->raw_bytes = object != NULL ? wick_remote_clean_uint (object, "raw_bytes") : 0;
  stats->producer_state = object != NULL
                            ? wick_remote_clean_string (object, "producer_state", "running")
                            : g_strdup ("running");
}

void
wick_remote_stats_clear (WickRemoteStats *stats)
{
  g_clear_pointer (&stats->producer_state, g_free);
}

char *
wick_remote_read_end_state (GBytes *payload)
{
  g_autoptr (JsonNode) node = frame_object (payload, "end");
  return node != NULL ? wick_remote_clean_string (json_node_get_object (node), "producer_state", NULL)
                      : NULL;
}

char *
wick_remote_read_error (GBytes *payload, const char *fallback)
{
  g_autoptr (JsonNode) node = frame_object (payload, "error");
  return node != NULL ? wick_remote_clean_string (json_node_get_object (node), "error", fallback)
                      : g_strdup (fallback);
}

/* A session object of SESSIONS or ATTACHED; NULL with @error when it is not
 * an object with a pid in 1..INT32_MAX. */
static WickLiveSessionInfo *
wick_remote_session_from_json (JsonNode *node, const char *host, GError **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "%s listed a session that is not a JSON object", host);
      return NULL;
    }
  JsonObject *object = json_node_get_object (node);
  gint64 pid = (gint64)wick_remote_clean_uint (object, "pid");
  if (pid <= 0 || pid > G_MAXINT32)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "%s listed a session without a valid \"pid\"", host);
      return NULL;
    }
  WickLiveSessionInfo *info = g_new0 (WickLiveSessionInfo, 1);
  info->pid = pid;
  info->socket_path = wick_remote_clean_string (object, "socket", "");
  info->problem = wick_remote_clean_string (object, "problem", NULL);
  g_autofree char *status = wick_remote_clean_string (object, "status", "answering");
  info->busy = g_strcmp0 (status, "busy") == 0;
  if (info->problem == NULL && g_strcmp0 (status, "answering") != 0)
    info->problem = g_strdup_printf ("%s (the node said no more)", status);
  info->program = wick_remote_clean_string (object, "program", "?");
  info->entrypoint = wick_remote_clean_string (object, "entrypoint", "?");
  info->started = wick_remote_clean_string (object, "started", "?");
  info->started_unix_ns = wick_remote_clean_uint (object, "started_unix_ns");
  info->dropped = wick_remote_clean_uint (object, "dropped");
  info->policy = wick_remote_clean_string (object, "policy", "?");
  JsonNode *finished = json_object_get_member (object, "finished");
  info->finished = finished != NULL && json_node_get_value_type (finished) == G_TYPE_BOOLEAN
                   && json_node_get_boolean (finished);
  info->run_id = wick_remote_clean_string (object, "run_id", NULL);
  return info;
}

/* SNAPSHOT chunks until the last; applied to the stream through a memfd. */
static gboolean
receive_snapshot (WickRemoteLink *link, WickLiveStream *stream, GError **error)
{
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  for (;;)
    {
      WickRemoteFrame frame;
      if (!wick_remote_link_next (link, &frame, WICK_REMOTE_REPLY_TIMEOUT_MS, error))
        return FALSE;
      if (frame.type != WICK_REMOTE_SNAPSHOT)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "%s sent a %s frame inside the attach snapshot",
                       wick_remote_link_get_name (link), wick_remote_type_name (frame.type));
          wick_remote_frame_clear (&frame);
          return FALSE;
        }
      gsize length;
      const guint8 *data = g_bytes_get_data (frame.payload, &length);
      gboolean more = (frame.flags & WICK_REMOTE_FLAG_MORE) != 0;
      if (bytes->len + (guint64)length > WICK_REMOTE_MAX_SNAPSHOT_BYTES)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "the attach snapshot from %s is larger than 512 MiB",
                       wick_remote_link_get_name (link));
          wick_remote_frame_clear (&frame);
          return FALSE;
        }
      g_byte_array_append (bytes, data, (guint)length);
      wick_remote_frame_clear (&frame);
      if (!more)
        break;
    }
  if (bytes->len == 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the node could not read it (its reason is on its stderr)");
      return FALSE;
    }
  int fd = memfd_create ("wick-remote-snapshot", MFD_CLOEXEC);
  if (fd < 0 || write (fd, bytes->data, bytes->len) != (ssize_t)bytes->len)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "cannot keep the snapshot in memory: %s", g_strerror (errno));
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  gboolean ok = wick_live_stream_apply_snapshot (stream, fd, error);
  close (fd);
  return ok;
}

WickLiveStream *
wick_remote_attach (WickRemoteLink *link, gint64 pid, gboolean strict, WickLiveSessionInfo **info,
                    GError **snapshot_error, GError **error)
{
  g_autoptr (JsonObject) request = json_object_new ();
  json_object_set_int_member (request, "pid", pid);
  json_object_set_boolean_member (request, "strict", strict);
  if (!wick_remote_link_send_object (link, WICK_REMOTE_ATTACH, request, error))
    return NULL;
  g_autoptr (JsonObject) attached = wick_remote_link_expect_object (
    link, WICK_REMOTE_ATTACHED, WICK_REMOTE_REPLY_TIMEOUT_MS, error);
  if (attached == NULL)
    return NULL;
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), attached);
  g_autoptr (WickLiveSessionInfo) session
    = wick_remote_session_from_json (node, wick_remote_link_get_name (link), error);
  if (session == NULL)
    return NULL;
  WickLiveStream *stream = wick_live_stream_new_fed (strict);
  g_autofree char *why = wick_remote_clean_string (attached, "snapshot_error", NULL);
  if (why != NULL)
    g_set_error_literal (snapshot_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_REFUSED, why);
  else
    {
      /* A snapshot that failed leaves the attach without it (as locally); a
       * link that broke there fails at the next frame. */
      receive_snapshot (link, stream, snapshot_error);
    }
  *info = g_steal_pointer (&session);
  return stream;
}

JsonObject *
wick_remote_control (const char *url, const char *remote_command, gint64 pid, JsonObject *request,
                     int timeout_ms, GError **error)
{
  WickRemoteTarget target;
  if (!wick_remote_target_parse (url, &target, error))
    return NULL;
  if (pid <= 0)
    pid = target.pid;
  g_autoptr (WickRemoteLink) link = wick_remote_link_open (&target, remote_command, error);
  wick_remote_target_clear (&target);
  if (link == NULL)
    return NULL;
  if (pid <= 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                   "“%s” names no process (ssh://host/PID)", url);
      return NULL;
    }
  g_autoptr (JsonObject) message = json_object_new ();
  json_object_set_int_member (message, "pid", pid);
  json_object_set_object_member (message, "request", json_object_ref (request));
  if (!wick_remote_link_send_object (link, WICK_REMOTE_CONTROL, message, error))
    return NULL;
  JsonObject *reply = wick_remote_link_expect_object (link, WICK_REMOTE_REPLY, timeout_ms, error);
  if (reply != NULL)
    json_object_remove_member (reply, "v");
  return reply;
}

GPtrArray *
wick_remote_list_sessions (const char *url, const char *remote_command, int timeout_ms,
                           char **host_out, GError **error)
{
  WickRemoteTarget target;
  *host_out = NULL;
  if (!wick_remote_target_parse (url, &target, error))
    return NULL;
  g_autoptr (WickRemoteLink) link = wick_remote_link_open (&target, remote_command, error);
  wick_remote_target_clear (&target);
  if (link == NULL)
    return NULL;
  const char *host = wick_remote_link_get_name (link);
  *host_out = g_strdup (host);
  g_autoptr (JsonObject) list = json_object_new ();
  if (!wick_remote_link_send_object (link, WICK_REMOTE_LIST, list, error))
    return NULL;
  WickRemoteFrame frame;
  if (!wick_remote_link_next (link, &frame, timeout_ms, error))
    return NULL;
  if (frame.type != WICK_REMOTE_SESSIONS && frame.type != WICK_REMOTE_ERROR)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "%s answered a list with a %s frame", host, wick_remote_type_name (frame.type));
      wick_remote_frame_clear (&frame);
      return NULL;
    }
  g_autoptr (JsonNode) node = wick_remote_parse_json (frame.payload, "session list", error);
  guint type = frame.type;
  wick_remote_frame_clear (&frame);
  if (node == NULL)
    return NULL;
  if (type == WICK_REMOTE_ERROR)
    {
      g_autofree char *message
        = JSON_NODE_HOLDS_OBJECT (node)
            ? wick_remote_clean_string (json_node_get_object (node), "error", "?")
            : g_strdup ("?");
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_REFUSED, "%s: %s", host, message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node)
      || json_array_get_length (json_node_get_array (node)) > WICK_REMOTE_MAX_SESSIONS)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "%s sent a session list that is not an array of at most %d sessions", host,
                   WICK_REMOTE_MAX_SESSIONS);
      return NULL;
    }
  JsonArray *array = json_node_get_array (node);
  g_autoptr (GPtrArray) sessions
    = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_live_session_info_free);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      WickLiveSessionInfo *info
        = wick_remote_session_from_json (json_array_get_element (array, i), host, error);
      if (info == NULL)
        return NULL;
      g_ptr_array_add (sessions, info);
    }
  return g_steal_pointer (&sessions);
}
