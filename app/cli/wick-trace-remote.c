/* wick-trace-remote.c — sessions, attach and control on another machine,
 * through ssh to its `wick-trace serve --stdio` (wick-remote-link.h).
 *
 * The output is the local commands': the same table or JSON (each session
 * with a "host" in JSON), the same trace file written here, the same control
 * reply. What the node sends is untrusted: session fields are checked and
 * bounded (and control characters replaced before they reach a terminal),
 * records go through the hostile decoder, and a node that breaks or goes
 * silent ends the command with an error naming it — an attach then still
 * closes its file as a parseable trace with a failed terminal saying why.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "client/wick-live-stream.h"
#include "client/wick-remote-link.h"
#include "client/wick-remote-session.h"
#include "wick-trace-commands.h"
#include "wick-trace-remote.h"
#include "wick-trace-sessions.h"

char **wick_trace_remotes;
char *wick_trace_remote_command;

#define POLL_SLICE_MS 200
#define DETACH_TIMEOUT_MS 10000
#define DETACH_MAX_MS 60000

static volatile sig_atomic_t remote_interrupted;

static void
on_interrupt (int signal_number)
{
  remote_interrupted = 1;
}

#define clean_string wick_remote_clean_string
#define clean_uint wick_remote_clean_uint

static WickRemoteLink *
open_link (const char *url, WickRemoteTarget *target, GError **error)
{
  if (!wick_remote_target_parse (url, target, error))
    return NULL;
  return wick_remote_link_open (target, wick_trace_remote_command, error);
}

/* ---- sessions ---- */

int
wick_trace_remote_sessions (gboolean json)
{
  guint n_hosts = g_strv_length (wick_trace_remotes);
  int status = WICK_TRACE_EXIT_OK;
  g_autoptr (JsonArray) all = json_array_new ();
  for (guint h = 0; h < n_hosts; h++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *host = NULL;
      g_autoptr (GPtrArray) sessions = wick_remote_list_sessions (
        wick_trace_remotes[h], wick_trace_remote_command, WICK_REMOTE_REPLY_TIMEOUT_MS, &host,
        &error);
      if (sessions == NULL)
        {
          fprintf (stderr, "wick-trace: sessions: %s\n", error->message);
          status = WICK_TRACE_EXIT_USAGE;
          continue;
        }
      if (json)
        {
          for (guint i = 0; i < sessions->len; i++)
            {
              JsonObject *object = wick_trace_session_to_json (g_ptr_array_index (sessions, i));
              json_object_set_string_member (object, "host", host);
              json_array_add_object_element (all, object);
            }
          continue;
        }
      if (n_hosts > 1)
        printf ("%s%s:\n", h > 0 ? "\n" : "", host);
      wick_trace_print_sessions (sessions, FALSE);
      fflush (stdout);
    }
  if (json)
    {
      g_autoptr (JsonNode) node = json_node_new (JSON_NODE_ARRAY);
      json_node_set_array (node, all);
      g_autofree char *text = json_to_string (node, FALSE);
      printf ("%s\n", text);
    }
  return status;
}

static gboolean
single_remote (const char *command)
{
  if (g_strv_length (wick_trace_remotes) == 1)
    return TRUE;
  wick_trace_usage_error (command, "--remote may be given once for %s (several only for sessions)",
                          command);
  return FALSE;
}

/* ---- convert: the node's file, read into a local copy ---- */

char *
wick_trace_remote_fetch (const char *remote_path, char **directory_out)
{
  *directory_out = NULL;
  if (!single_remote ("convert"))
    return NULL;
  if (remote_path[0] == '\0' || strlen (remote_path) > WICK_REMOTE_MAX_PATH_BYTES)
    {
      wick_trace_usage_error ("convert", "the node's file name must be 1 to %d bytes",
                              WICK_REMOTE_MAX_PATH_BYTES);
      return NULL;
    }
  g_autoptr (GError) error = NULL;
  WickRemoteTarget target;
  g_autoptr (WickRemoteLink) link = open_link (wick_trace_remotes[0], &target, &error);
  wick_remote_target_clear (&target);
  if (link == NULL)
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      return NULL;
    }
  /* The copy keeps the node's base name (its extension picks the format, a
   * message names it) in a directory of its own, removed afterwards. */
  g_autofree char *directory = g_dir_make_tmp ("wick-remote-XXXXXX", &error);
  if (directory == NULL)
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      return NULL;
    }
  g_autofree char *base = g_path_get_basename (remote_path);
  if (strcmp (base, ".") == 0 || strcmp (base, "..") == 0 || strcmp (base, "/") == 0)
    {
      g_free (base);
      base = g_strdup ("trace");
    }
  g_autofree char *local = g_build_filename (directory, base, NULL);
  FILE *file = fopen (local, "wbx");
  gboolean ok = file != NULL;
  if (!ok)
    fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", local, g_strerror (errno));
  g_autoptr (JsonObject) request = json_object_new ();
  json_object_set_string_member (request, "path", remote_path);
  if (ok && !wick_remote_link_send_object (link, WICK_REMOTE_READ, request, &error))
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      ok = FALSE;
    }
  guint64 received = 0;
  while (ok)
    {
      WickRemoteFrame frame;
      if (!wick_remote_link_next (link, &frame, WICK_REMOTE_REPLY_TIMEOUT_MS, &error))
        {
          fprintf (stderr, "wick-trace convert: reading %s from %s: %s\n", remote_path,
                   wick_remote_link_get_name (link), error->message);
          ok = FALSE;
          break;
        }
      if (frame.type == WICK_REMOTE_ERROR)
        {
          g_autofree char *message = wick_remote_read_error (frame.payload, "?");
          fprintf (stderr, "wick-trace convert: %s: %s\n", wick_remote_link_get_name (link),
                   message);
          wick_remote_frame_clear (&frame);
          ok = FALSE;
          break;
        }
      if (frame.type != WICK_REMOTE_FILE)
        {
          fprintf (stderr, "wick-trace convert: %s sent a %s frame while sending %s\n",
                   wick_remote_link_get_name (link), wick_remote_type_name (frame.type),
                   remote_path);
          wick_remote_frame_clear (&frame);
          ok = FALSE;
          break;
        }
      gsize length;
      const guint8 *data = g_bytes_get_data (frame.payload, &length);
      gboolean more = (frame.flags & WICK_REMOTE_FLAG_MORE) != 0;
      received += length;
      if (received > WICK_REMOTE_MAX_FILE_BYTES)
        {
          fprintf (stderr, "wick-trace convert: %s sent more than %" G_GUINT64_FORMAT " GiB of %s\n",
                   wick_remote_link_get_name (link), WICK_REMOTE_MAX_FILE_BYTES >> 30, remote_path);
          ok = FALSE;
        }
      else if (length > 0 && fwrite (data, 1, length, file) != length)
        {
          fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", local, g_strerror (errno));
          ok = FALSE;
        }
      wick_remote_frame_clear (&frame);
      if (!more)
        break;
    }
  if (file != NULL && fclose (file) != 0 && ok)
    {
      fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", local, g_strerror (errno));
      ok = FALSE;
    }
  if (!ok)
    {
      g_unlink (local);
      g_rmdir (directory);
      return NULL;
    }
  *directory_out = g_steal_pointer (&directory);
  return g_steal_pointer (&local);
}

/* ---- control ---- */

int
wick_trace_remote_control (gint64 pid, JsonObject *request)
{
  if (!single_remote ("control"))
    return WICK_TRACE_EXIT_USAGE;
  g_autoptr (GError) error = NULL;
  gboolean capture = g_strcmp0 (json_object_get_string_member (request, "command"), "capture") == 0;
  g_autoptr (JsonObject) reply = wick_remote_control (
    wick_trace_remotes[0], wick_trace_remote_command, pid, request,
    capture ? WICK_LIVE_CAPTURE_TIMEOUT_MS + 10000 : WICK_REMOTE_REPLY_TIMEOUT_MS, &error);
  if (reply == NULL)
    return wick_trace_print_control_error (error->message);
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), reply);
  g_autofree char *text = json_to_string (node, FALSE);
  printf ("%s\n", text);
  JsonNode *ok = json_object_get_member (reply, "ok");
  return ok != NULL && json_node_get_value_type (ok) == G_TYPE_BOOLEAN && json_node_get_boolean (ok)
           ? WICK_TRACE_EXIT_OK
           : WICK_TRACE_EXIT_HEALTH;
}

/* ---- attach ---- */

typedef struct
{
  FILE *file;
  gboolean write_failed;
  WickLiveStream *stream;
  /* the node's last STATS */
  guint64 node_lost;
  guint64 node_records;
  guint64 raw_bytes;
  char *producer_state;
} RemoteAttach;

static void
write_line (const char *line, gsize length, gpointer user_data)
{
  RemoteAttach *attach = user_data;
  if (fwrite (line, 1, length, attach->file) != length || fputc ('\n', attach->file) == EOF)
    attach->write_failed = TRUE;
}

static gboolean
feed_record (const WickRingRecord *record, gpointer user_data)
{
  RemoteAttach *attach = user_data;
  wick_live_stream_feed (attach->stream, record, write_line, attach);
  return !attach->write_failed;
}

static void
take_stats (RemoteAttach *attach, GBytes *payload)
{
  WickRemoteStats stats;
  wick_remote_read_stats (payload, &stats);
  attach->node_lost = stats.lost;
  attach->node_records = stats.records;
  attach->raw_bytes = stats.raw_bytes;
  g_free (attach->producer_state);
  attach->producer_state = g_steal_pointer (&stats.producer_state);
}

int
wick_trace_remote_attach (gint64 pid, gboolean strict, double duration, const char *output_path)
{
  if (!single_remote ("attach"))
    return WICK_TRACE_EXIT_USAGE;
  WickRemoteTarget target;
  g_autoptr (GError) error = NULL;
  g_autoptr (WickRemoteLink) link = open_link (wick_trace_remotes[0], &target, &error);
  wick_remote_target_clear (&target);
  if (link == NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  const char *host = wick_remote_link_get_name (link);
  g_autoptr (WickLiveSessionInfo) info = NULL;
  g_autoptr (GError) snapshot_error = NULL;
  g_autoptr (WickLiveStream) stream
    = wick_remote_attach (link, pid, strict, &info, &snapshot_error, &error);
  if (stream == NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (snapshot_error != NULL)
    fprintf (stderr,
             "wick-trace: attach: no attach snapshot (%s): storages allocated before the "
             "attach are missing from the capture\n",
             snapshot_error->message);

  RemoteAttach attach = { fopen (output_path, "w"), FALSE, stream, 0, 0, 0, NULL };
  if (attach.file == NULL)
    {
      fprintf (stderr, "wick-trace: attach: cannot write %s: %s\n", output_path,
               g_strerror (errno));
      return WICK_TRACE_EXIT_USAGE;
    }
  remote_interrupted = 0;
  struct sigaction action = { .sa_handler = on_interrupt }, old_int, old_term;
  sigaction (SIGINT, &action, &old_int);
  sigaction (SIGTERM, &action, &old_term);

  g_autoptr (WickRemoteDecoder) decoder = wick_remote_decoder_new ();
  gint64 deadline = duration > 0 ? g_get_monotonic_time () + (gint64)(duration * 1e6) : G_MAXINT64;
  gint64 last_frame = g_get_monotonic_time ();
  guint64 last_received = wick_remote_link_get_bytes_received (link);
  gint64 detach_deadline = 0, detach_start = 0;
  guint64 detach_seen = 0;
  gboolean ended = FALSE, stopped_by_us = FALSE;
  g_autoptr (GError) link_error = NULL;
  g_autofree char *end_state = NULL;
  while (!ended && !attach.write_failed)
    {
      gint64 now = g_get_monotonic_time ();
      if (detach_deadline == 0 && (remote_interrupted || now >= deadline))
        {
          stopped_by_us = TRUE;
          g_autoptr (JsonObject) detach = json_object_new ();
          if (!wick_remote_link_send_object (link, WICK_REMOTE_DETACH, detach, &link_error))
            break;
          detach_deadline = now + (gint64)DETACH_TIMEOUT_MS * 1000;
          detach_start = now;
          detach_seen = wick_remote_link_get_bytes_received (link);
        }
      if (detach_deadline != 0 && wick_remote_link_get_bytes_received (link) != detach_seen)
        {
          /* A slow link still delivering what was queued before the detach:
           * 10 s of silence ends the wait, 60 s in all at most. */
          detach_seen = wick_remote_link_get_bytes_received (link);
          detach_deadline = MIN (now + (gint64)DETACH_TIMEOUT_MS * 1000,
                                 detach_start + (gint64)DETACH_MAX_MS * 1000);
        }
      if (detach_deadline != 0 && now >= detach_deadline)
        {
          g_set_error (&link_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                       "%s did not end the stream after the detach (%d s silent or %d s in all)",
                       host, DETACH_TIMEOUT_MS / 1000, DETACH_MAX_MS / 1000);
          break;
        }
      WickRemoteFrame frame;
      g_autoptr (GError) local = NULL;
      if (!wick_remote_link_next (link, &frame, POLL_SLICE_MS, &local))
        {
          if (g_error_matches (local, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT))
            {
              /* A big frame over a slow link takes long: bytes arriving
               * are life too, only silence is a dead link. */
              guint64 received = wick_remote_link_get_bytes_received (link);
              if (received != last_received)
                {
                  last_received = received;
                  last_frame = g_get_monotonic_time ();
                }
              if (g_get_monotonic_time () - last_frame < (gint64)WICK_REMOTE_IDLE_TIMEOUT_MS * 1000)
                continue;
              g_set_error (&link_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                           "%s sent nothing for %d s (the link or the node stopped)", host,
                           WICK_REMOTE_IDLE_TIMEOUT_MS / 1000);
            }
          else
            link_error = g_steal_pointer (&local);
          break;
        }
      last_frame = g_get_monotonic_time ();
      switch (frame.type)
        {
          case WICK_REMOTE_RECORDS:
            if (!wick_remote_decode_records (decoder, frame.payload, feed_record, &attach,
                                             &link_error))
              g_prefix_error (&link_error, "%s: ", host);
            break;
          case WICK_REMOTE_STATS:
            take_stats (&attach, frame.payload);
            break;
          case WICK_REMOTE_END:
            {
              g_free (end_state);
              end_state = wick_remote_read_end_state (frame.payload);
              ended = TRUE;
              break;
            }
          case WICK_REMOTE_ERROR:
            {
              g_autofree char *message = wick_remote_read_error (frame.payload, "?");
              g_set_error (&link_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_REFUSED, "%s: %s", host,
                           message);
              break;
            }
          default:
            g_set_error (&link_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                         "%s sent a %s frame during the attach", host,
                         wick_remote_type_name (frame.type));
            break;
        }
      wick_remote_frame_clear (&frame);
      if (link_error != NULL)
        break;
    }
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGTERM, &old_term, NULL);

  g_autofree char *reason = NULL;
  if (link_error != NULL)
    reason = g_strdup_printf ("capture cut: the remote link failed: %s", link_error->message);
  else if (g_strcmp0 (end_state, "dead") == 0)
    reason = g_strdup_printf ("capture cut: the process (pid %" G_GINT64_FORMAT ") on %s exited "
                              "without finishing its trace",
                              pid, host);
  else if (g_strcmp0 (end_state, "finished") == 0 && !wick_live_stream_has_terminal (stream))
    reason = g_strdup ("capture cut: the process finished, but its terminal record was not read");
  else if (stopped_by_us && remote_interrupted)
    reason = g_strdup ("capture cut: wick-trace attach was interrupted while the process was "
                       "still running");
  else
    reason = g_strdup_printf ("capture cut: wick-trace attach stopped after %g s while the "
                              "process was still running",
                              duration);
  wick_live_stream_finish (stream, reason, write_line, &attach);
  int status = WICK_TRACE_EXIT_OK;
  if (fclose (attach.file) != 0 || attach.write_failed)
    {
      fprintf (stderr, "wick-trace: attach: writing %s failed: %s\n", output_path,
               g_strerror (errno));
      status = WICK_TRACE_EXIT_USAGE;
    }
  if (link_error != NULL)
    {
      fprintf (stderr, "wick-trace: attach: %s (what arrived is in %s, closed as a cut capture)\n",
               link_error->message, output_path);
      status = WICK_TRACE_EXIT_USAGE;
    }
  fprintf (stderr,
           "wick-trace: attached to %s (pid %" G_GINT64_FORMAT ") on %s: %" G_GUINT64_FORMAT
           " records, %" G_GUINT64_FORMAT " lines to %s; %" G_GUINT64_FORMAT
           " dropped by the process, %" G_GUINT64_FORMAT " lost by the node's reader; %.1f MiB "
           "received (%.1f MiB of records before zstd)%s\n",
           info->program, pid, host, wick_live_stream_get_records (stream),
           wick_live_stream_get_lines (stream), output_path, wick_live_stream_get_dropped (stream),
           wick_live_stream_get_lost (stream),
           (double)wick_remote_link_get_bytes_received (link) / (1 << 20),
           (double)attach.raw_bytes / (1 << 20),
           wick_live_stream_has_terminal (stream) ? "; the session finished" : "");
  g_free (attach.producer_state);
  return status;
}
