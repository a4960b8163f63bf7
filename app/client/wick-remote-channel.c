/* wick-remote-channel.c — a long-lived control link per remote address (see the header). */
#include "config.h"

#include "wick-remote-channel.h"
#include "wick-remote-channel-private.h"

#include <string.h>

#include "wick-live-client.h"
#include "wick-remote-link.h"

typedef struct
{
  char *url;
  char *remote_command;
  guint holds;
  GMutex lock; /* one request at a time; guards link */
  WickRemoteLink *link;
  guint links_opened;
  gint refs; /* the registry's, and each request's while it runs */
} Channel;

static GMutex registry_lock;
static GHashTable *registry; /* url -> Channel */

static void
channel_unref (Channel *channel)
{
  if (!g_atomic_int_dec_and_test (&channel->refs))
    return;
  g_clear_pointer (&channel->link, wick_remote_link_close);
  g_mutex_clear (&channel->lock);
  g_free (channel->url);
  g_free (channel->remote_command);
  g_free (channel);
}

static Channel *
channel_lookup (const char *url)
{
  g_mutex_lock (&registry_lock);
  Channel *channel = registry != NULL ? g_hash_table_lookup (registry, url) : NULL;
  if (channel != NULL)
    g_atomic_int_inc (&channel->refs);
  g_mutex_unlock (&registry_lock);
  return channel;
}

void
wick_remote_channel_hold (const char *url, const char *remote_command)
{
  g_mutex_lock (&registry_lock);
  if (registry == NULL)
    registry = g_hash_table_new (g_str_hash, g_str_equal);
  Channel *channel = g_hash_table_lookup (registry, url);
  if (channel == NULL)
    {
      channel = g_new0 (Channel, 1);
      channel->url = g_strdup (url);
      channel->remote_command = g_strdup (remote_command);
      channel->refs = 1;
      g_mutex_init (&channel->lock);
      g_hash_table_insert (registry, channel->url, channel);
    }
  channel->holds++;
  g_mutex_unlock (&registry_lock);
}

static gpointer
close_thread (gpointer data)
{
  channel_unref (data);
  return NULL;
}

void
wick_remote_channel_drop (const char *url)
{
  Channel *channel = NULL;
  g_mutex_lock (&registry_lock);
  Channel *held = registry != NULL ? g_hash_table_lookup (registry, url) : NULL;
  if (held != NULL && --held->holds == 0)
    {
      g_hash_table_remove (registry, url);
      channel = held;
    }
  g_mutex_unlock (&registry_lock);
  /* a request still running keeps it until it returns; the close (ssh may
   * take a moment to exit) runs off the caller's thread: the main loop */
  if (channel != NULL)
    g_thread_unref (g_thread_new ("wick-channel-close", close_thread, channel));
}

gboolean
wick_remote_channel_exists (const char *url)
{
  g_mutex_lock (&registry_lock);
  gboolean exists = registry != NULL && g_hash_table_contains (registry, url);
  g_mutex_unlock (&registry_lock);
  return exists;
}

static gboolean
open_link (Channel *channel, GError **error)
{
  WickRemoteTarget target;
  if (!wick_remote_target_parse (channel->url, &target, error))
    return FALSE;
  channel->link = wick_remote_link_open (&target, channel->remote_command, error);
  wick_remote_target_clear (&target);
  if (channel->link != NULL)
    channel->links_opened++;
  return channel->link != NULL;
}

static gpointer
close_link_thread (gpointer link)
{
  wick_remote_link_close (link);
  return NULL;
}

/* A link that failed is closed off the request's thread: the close waits up
 * to 3 s for an ssh whose node stopped before it kills it, and the error
 * need not wait for that. */
static void
close_in_background (Channel *channel)
{
  WickRemoteLink *link = g_steal_pointer (&channel->link);
  if (link != NULL)
    g_thread_unref (g_thread_new ("wick-link-close", close_link_thread, link));
}

/* A link whose ssh already exited (while idle) is closed here. */
static void
drop_dead_link (Channel *channel)
{
  if (channel->link == NULL)
    return;
  g_autofree char *exited = wick_remote_link_peek_exit (channel->link);
  if (exited != NULL)
    g_clear_pointer (&channel->link, wick_remote_link_close);
}

JsonObject *
wick_remote_channel_request (const char *url, JsonObject *request, int timeout_ms, GError **error)
{
  Channel *channel = channel_lookup (url);
  if (channel == NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                   "no control channel to %s (the window is closed)", url);
      return NULL;
    }
  WickRemoteTarget target;
  if (!wick_remote_target_parse (url, &target, error))
    {
      channel_unref (channel);
      return NULL;
    }
  gint64 pid = target.pid;
  wick_remote_target_clear (&target);
  if (pid <= 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                   "“%s” names no process (ssh://host/PID)", url);
      channel_unref (channel);
      return NULL;
    }
  g_autoptr (JsonObject) message = json_object_new ();
  json_object_set_int_member (message, "pid", pid);
  json_object_set_object_member (message, "request", json_object_ref (request));
  JsonNode *command_node = json_object_get_member (request, "command");
  const char *command = command_node != NULL
                            && json_node_get_value_type (command_node) == G_TYPE_STRING
                          ? json_node_get_string (command_node)
                          : "the request";

  JsonObject *reply = NULL;
  g_mutex_lock (&channel->lock);
  drop_dead_link (channel);
  /* a link found dead before the request went out: once more on a new one */
  for (int attempt = 0; attempt < 2 && reply == NULL; attempt++)
    {
      g_autoptr (GError) local = NULL;
      if (channel->link == NULL && !open_link (channel, &local))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          break;
        }
      if (!wick_remote_link_send_object (channel->link, WICK_REMOTE_CONTROL, message, &local))
        {
          g_clear_pointer (&channel->link, wick_remote_link_close);
          if (attempt == 0)
            continue;
          g_propagate_error (error, g_steal_pointer (&local));
          break;
        }
      reply = wick_remote_link_expect_object (channel->link, WICK_REMOTE_REPLY,
                                              timeout_ms + WICK_REMOTE_CHANNEL_MARGIN_MS, &local);
      if (reply != NULL)
        break;
      if (g_error_matches (local, WICK_LIVE_ERROR, WICK_LIVE_ERROR_REFUSED))
        {
          /* the node's ERROR sentence: the channel is fine */
          g_propagate_error (error, g_steal_pointer (&local));
          break;
        }
      /* after the request went out: the node may or may not have done it */
      g_set_error (error, WICK_LIVE_ERROR, local->code,
                   "the control channel to %s died while %s was in flight (it may or may not "
                   "have been carried out): %s",
                   url, command, local->message);
      close_in_background (channel);
      break;
    }
  g_mutex_unlock (&channel->lock);
  channel_unref (channel);
  if (reply != NULL)
    json_object_remove_member (reply, "v");
  return reply;
}

int
wick_remote_channel_get_ssh_pid (const char *url)
{
  Channel *channel = channel_lookup (url);
  if (channel == NULL)
    return 0;
  g_mutex_lock (&channel->lock);
  int pid = channel->link != NULL ? wick_remote_link_get_pid (channel->link) : 0;
  g_mutex_unlock (&channel->lock);
  channel_unref (channel);
  return pid;
}

guint
wick_remote_channel_get_links_opened (const char *url)
{
  Channel *channel = channel_lookup (url);
  if (channel == NULL)
    return 0;
  g_mutex_lock (&channel->lock);
  guint n = channel->links_opened;
  g_mutex_unlock (&channel->lock);
  channel_unref (channel);
  return n;
}
