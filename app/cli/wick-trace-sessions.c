/* wick-trace-sessions.c — how the live commands print sessions and control
 * errors, here and through --remote (wick-trace-live.c, -remote.c, -serve.c).
 */
#include "config.h"

#include "wick-trace-sessions.h"

#include <stdio.h>

#include "wick-trace-commands.h"

void
wick_trace_print_json (JsonObject *object)
{
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  g_autofree char *text = json_to_string (node, FALSE);
  printf ("%s\n", text);
}

/* ---- sessions ---- */

static const char *
session_status (const WickLiveSessionInfo *info)
{
  return info->problem == NULL ? "answering" : info->busy ? "busy" : "not answering";
}

JsonObject *
wick_trace_session_to_json (const WickLiveSessionInfo *info)
{
  JsonObject *object = json_object_new ();
  json_object_set_int_member (object, "pid", info->pid);
  json_object_set_string_member (object, "status", session_status (info));
  if (info->problem != NULL)
    {
      json_object_set_string_member (object, "problem", info->problem);
      json_object_set_string_member (object, "socket", info->socket_path);
      return object;
    }
  json_object_set_string_member (object, "program", info->program);
  json_object_set_string_member (object, "entrypoint", info->entrypoint);
  json_object_set_string_member (object, "started", info->started);
  json_object_set_int_member (object, "started_unix_ns", (gint64)info->started_unix_ns);
  json_object_set_int_member (object, "dropped", (gint64)info->dropped);
  json_object_set_string_member (object, "policy", info->policy);
  json_object_set_boolean_member (object, "finished", info->finished);
  if (info->run_id != NULL)
    json_object_set_string_member (object, "run_id", info->run_id);
  json_object_set_string_member (object, "socket", info->socket_path);
  return object;
}

void
wick_trace_print_sessions (GPtrArray *sessions, gboolean json)
{
  if (json)
    {
      g_autoptr (JsonArray) array = json_array_new ();
      for (guint i = 0; i < sessions->len; i++)
        json_array_add_object_element (
          array, wick_trace_session_to_json (g_ptr_array_index (sessions, i)));
      g_autoptr (JsonNode) node = json_node_new (JSON_NODE_ARRAY);
      json_node_set_array (node, array);
      g_autofree char *text = json_to_string (node, FALSE);
      printf ("%s\n", text);
      return;
    }
  if (sessions->len == 0)
    {
      printf ("No live sessions. Start a program with control enabled (e.g. WICK_CONTROL=1).\n");
      return;
    }
  printf ("%-8s %-20s %-24s %-24s %8s\n", "PID", "PROGRAM", "ENTRYPOINT", "STARTED", "DROPPED");
  for (guint i = 0; i < sessions->len; i++)
    {
      const WickLiveSessionInfo *info = g_ptr_array_index (sessions, i);
      if (info->problem != NULL)
        {
          printf ("%-8" G_GINT64_FORMAT " %s (%s)\n", info->pid, session_status (info),
                  info->problem);
          continue;
        }
      printf ("%-8" G_GINT64_FORMAT " %-20s %-24s %-24s %8" G_GUINT64_FORMAT "%s\n", info->pid,
              info->program, info->entrypoint, info->started, info->dropped,
              info->finished ? "  (finished)" : "");
    }
}

int
wick_trace_print_control_error (const char *message)
{
  g_autoptr (JsonObject) reply = json_object_new ();
  json_object_set_boolean_member (reply, "ok", FALSE);
  json_object_set_string_member (reply, "error", message);
  wick_trace_print_json (reply);
  return WICK_TRACE_EXIT_USAGE;
}
