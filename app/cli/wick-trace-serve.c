/* wick-trace-serve.c — `wick-trace serve --stdio`: the node's end of a remote
 * session (docs/protocol.md, "Remote sessions over SSH").
 *
 * Run by ssh on the node. Speaks the framed protocol of wick-remote-wire.h on
 * stdin/stdout and nothing else (diagnostics go to stderr, which ssh carries
 * to the user): it lists the user's sessions, attaches to one (its ring read
 * in follow mode, so a slow link makes this reader lose records — counted in
 * LOST records and STATS — and never slows the workload), sends the attach
 * snapshot and the ring's records in zstd-compressed RECORDS frames, and
 * forwards control requests, and sends a file it is asked to READ (for
 * `--remote … convert`: a regular file, read-only). It opens no port and no
 * other file; the sessions it
 * sees are those of the control directory of the user ssh logged in as
 * (owned by that uid, mode 0700: libwick refuses any other). It exits when
 * its stdin closes (ssh went away) or when stdout cannot take a frame for
 * WRITE_STALL_S seconds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/wick-live-client.h"
#include "client/wick-remote-wire.h"
#include "wick-trace-commands.h"
#include "wick-trace-remote.h"
#include "wick-trace-sessions.h"

/* Records in one RECORDS frame (before zstd: small, so that on a slow link
 * little is queued behind a detach), and how often STATS goes out. */
#define BATCH_BYTES (64u << 10)
#define STATS_INTERVAL_US 500000
#define DRAIN_CHUNK 512
#define DRAIN_BUDGET_US 20000
#define POLL_ATTACHED_MS 5
#define SNAPSHOT_CHUNK (4u << 20)
#define WRITE_STALL_S 60
#define FILE_CHUNK (4u << 20)

typedef struct
{
  WickRemoteParser *parser;
  gboolean input_closed;
  gboolean output_failed;
  /* the attached session */
  WickRingReader *reader;
  gint64 pid;
  GByteArray *batch;
  guint64 records;
  guint64 lost;
  guint64 dropped;
  gboolean terminal;
  guint64 raw_bytes;
  guint64 sent_bytes;
  gint64 next_stats_us;
} Serve;

/* Writes all of @frame to stdout; while stdout is full, stdin's end is still
 * noticed (a client that went away ends the wait). */
static gboolean
write_frame (Serve *serve, GBytes *frame)
{
  gsize length;
  const guint8 *data = g_bytes_get_data (frame, &length);
  gint64 stall_deadline = g_get_monotonic_time () + (gint64)WRITE_STALL_S * G_USEC_PER_SEC;
  while (length > 0 && !serve->output_failed)
    {
      ssize_t n = write (STDOUT_FILENO, data, length);
      if (n > 0)
        {
          data += n;
          length -= (gsize)n;
          serve->sent_bytes += (guint64)n;
          stall_deadline = g_get_monotonic_time () + (gint64)WRITE_STALL_S * G_USEC_PER_SEC;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno != EAGAIN)
        {
          serve->output_failed = TRUE;
          break;
        }
      if (g_get_monotonic_time () >= stall_deadline)
        {
          fprintf (stderr, "wick-trace serve: the client took nothing for %d s; exiting\n",
                   WRITE_STALL_S);
          serve->output_failed = TRUE;
          break;
        }
      struct pollfd pfd[2] = { { STDOUT_FILENO, POLLOUT, 0 }, { STDIN_FILENO, 0, 0 } };
      poll (pfd, 2, 1000);
      if (pfd[1].revents & (POLLHUP | POLLERR))
        serve->output_failed = TRUE;
    }
  return !serve->output_failed;
}

static gboolean
send_object (Serve *serve, guint type, JsonObject *object)
{
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), object);
  g_autoptr (GBytes) frame = wick_remote_frame_encode_json (type, node);
  return write_frame (serve, frame);
}

static gboolean send_error (Serve *serve, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
send_error (Serve *serve, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autoptr (JsonObject) object = json_object_new ();
  json_object_set_string_member (object, "error", message);
  return send_object (serve, WICK_REMOTE_ERROR, object);
}

static const char *
producer_state_name (WickProducerState state)
{
  return state == WICK_PRODUCER_RUNNING    ? "running"
         : state == WICK_PRODUCER_FINISHED ? "finished"
                                           : "dead";
}

static void
flush_batch (Serve *serve)
{
  if (serve->batch->len == 0)
    return;
  serve->raw_bytes += serve->batch->len;
  g_autoptr (GBytes) frame = wick_remote_frame_encode (WICK_REMOTE_RECORDS, 0, serve->batch->data,
                                                       serve->batch->len, TRUE);
  g_byte_array_set_size (serve->batch, 0);
  write_frame (serve, frame);
}

static bool
on_record (const WickRingRecord *record, void *user_data)
{
  Serve *serve = user_data;
  if (record->kind == WICK_RING_RECORD_LOST)
    serve->lost += record->lost.count;
  else if (record->kind == WICK_RING_RECORD_DROPPED)
    serve->dropped += record->dropped.count;
  else if (record->kind == WICK_RING_RECORD_TERMINAL)
    serve->terminal = TRUE;
  serve->records++;
  wick_remote_record_encode (serve->batch, record);
  if (serve->batch->len >= BATCH_BYTES)
    flush_batch (serve);
  return true;
}

static void
send_stats (Serve *serve)
{
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (serve->reader, &stats);
  g_autoptr (JsonObject) object = json_object_new ();
  json_object_set_int_member (object, "records", (gint64)serve->records);
  json_object_set_int_member (object, "lost", (gint64)serve->lost);
  json_object_set_int_member (object, "dropped", (gint64)serve->dropped);
  json_object_set_int_member (object, "producer_dropped", (gint64)stats.producer_dropped);
  json_object_set_int_member (object, "broken_rings", stats.broken_rings);
  if (stats.first_error[0] != '\0')
    json_object_set_string_member (object, "first_error", stats.first_error);
  json_object_set_int_member (object, "raw_bytes", (gint64)serve->raw_bytes);
  json_object_set_int_member (object, "sent_bytes", (gint64)serve->sent_bytes);
  json_object_set_int_member (object, "node_time_us", g_get_real_time ());
  json_object_set_string_member (
    object, "producer_state",
    producer_state_name (wick_ring_reader_get_producer_state (serve->reader)));
  send_object (serve, WICK_REMOTE_STATS, object);
}

static void
detach (Serve *serve, const char *why)
{
  if (serve->reader == NULL)
    return;
  flush_batch (serve);
  send_stats (serve);
  g_autoptr (JsonObject) end = json_object_new ();
  json_object_set_string_member (
    end, "producer_state",
    producer_state_name (wick_ring_reader_get_producer_state (serve->reader)));
  json_object_set_boolean_member (end, "terminal", serve->terminal);
  json_object_set_string_member (end, "why", why);
  send_object (serve, WICK_REMOTE_END, end);
  g_clear_pointer (&serve->reader, wick_ring_reader_free);
  serve->pid = 0;
}

/* The pid member of a request, checked. */
static gboolean
request_pid (JsonObject *object, gint64 *pid)
{
  JsonNode *node = json_object_get_member (object, "pid");
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *pid = json_node_get_int (node);
  return *pid > 0 && *pid <= G_MAXINT32;
}

static void
serve_list (Serve *serve)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) sessions = wick_live_list_all_sessions (&error);
  if (sessions == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  g_autoptr (JsonArray) array = json_array_new ();
  for (guint i = 0; i < sessions->len && i < WICK_REMOTE_MAX_SESSIONS; i++)
    json_array_add_object_element (array,
                                   wick_trace_session_to_json (g_ptr_array_index (sessions, i)));
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  g_autoptr (GBytes) frame = wick_remote_frame_encode_json (WICK_REMOTE_SESSIONS, node);
  write_frame (serve, frame);
}

/* The session's snapshot file, in SNAPSHOT chunks (the last without MORE). */
static gboolean
send_snapshot (Serve *serve, int fd, char **why)
{
  if (lseek (fd, 0, SEEK_SET) < 0)
    {
      *why = g_strdup_printf ("cannot read the attach snapshot: %s", g_strerror (errno));
      return FALSE;
    }
  g_autofree guint8 *chunk = g_malloc (SNAPSHOT_CHUNK);
  guint64 total = 0;
  gsize fill = 0;
  for (;;)
    {
      ssize_t n = read (fd, chunk + fill, SNAPSHOT_CHUNK - fill);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          *why = g_strdup_printf ("cannot read the attach snapshot: %s", g_strerror (errno));
          return FALSE;
        }
      fill += (gsize)n;
      total += (guint64)n;
      if (total > WICK_REMOTE_MAX_SNAPSHOT_BYTES)
        {
          *why = g_strdup ("the attach snapshot is larger than 512 MiB");
          return FALSE;
        }
      if (fill == SNAPSHOT_CHUNK || n == 0)
        {
          g_autoptr (GBytes) frame = wick_remote_frame_encode (
            WICK_REMOTE_SNAPSHOT, n == 0 ? 0 : WICK_REMOTE_FLAG_MORE, chunk, fill, TRUE);
          if (!write_frame (serve, frame))
            return TRUE;
          fill = 0;
        }
      if (n == 0)
        return TRUE;
    }
}

static void
serve_attach (Serve *serve, JsonObject *request)
{
  gint64 pid;
  if (serve->reader != NULL)
    {
      send_error (serve, "already attached to pid %" G_GINT64_FORMAT "; detach first", serve->pid);
      return;
    }
  if (!request_pid (request, &pid))
    {
      send_error (serve, "attach needs a \"pid\" between 1 and %d", G_MAXINT32);
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autofree char *socket_path = wick_live_find_socket (pid, &error);
  if (socket_path == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (socket_path, &error);
  if (connection == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  int ring_fd = -1;
  g_autoptr (WickLiveSessionInfo) info = wick_live_connection_hello (connection, &ring_fd, &error);
  if (info == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  if (ring_fd < 0)
    {
      send_error (serve, "the session of %s (pid %" G_GINT64_FORMAT ") sent no ring with its hello",
                  info->program, info->pid);
      return;
    }
  WickError wick_error;
  /* The reader begins before the snapshot is taken (wick-live-stream.h). */
  serve->reader = wick_ring_reader_new (ring_fd, &wick_error);
  close (ring_fd);
  if (serve->reader == NULL)
    {
      send_error (serve, "cannot read the session's ring: %s", wick_error.message);
      return;
    }
  serve->pid = pid;
  serve->records = serve->lost = serve->dropped = serve->raw_bytes = 0;
  serve->terminal = FALSE;

  g_autoptr (JsonObject) request_snapshot = wick_live_request_new ("snapshot");
  int snapshot_fd = -1;
  g_autofree char *snapshot_error = NULL;
  g_autoptr (JsonObject) reply = wick_live_connection_request (
    connection, request_snapshot, WICK_LIVE_REQUEST_TIMEOUT_MS, &snapshot_fd, &error);
  if (reply == NULL || !wick_live_reply_check (reply, &error))
    snapshot_error = g_strdup (error->message);
  else if (snapshot_fd < 0)
    snapshot_error = g_strdup ("the session sent no snapshot file with its reply");

  JsonObject *attached = wick_trace_session_to_json (info);
  if (snapshot_error != NULL)
    json_object_set_string_member (attached, "snapshot_error", snapshot_error);
  const WickRingInfo *ring = wick_ring_reader_get_info (serve->reader);
  json_object_set_int_member (attached, "ring_bytes", (gint64)ring->ring_bytes);
  json_object_set_int_member (attached, "n_rings", ring->n_rings);
  send_object (serve, WICK_REMOTE_ATTACHED, attached);
  json_object_unref (attached);
  if (snapshot_fd >= 0)
    {
      g_autofree char *why = NULL;
      if (!send_snapshot (serve, snapshot_fd, &why))
        {
          /* An empty last chunk is not sent: the client is told instead. */
          fprintf (stderr, "wick-trace serve: %s\n", why);
          g_autoptr (GBytes) frame
            = wick_remote_frame_encode (WICK_REMOTE_SNAPSHOT, 0, "", 0, FALSE);
          write_frame (serve, frame);
        }
      close (snapshot_fd);
    }
  serve->next_stats_us = 0;
}

static void
serve_control (Serve *serve, JsonObject *request)
{
  gint64 pid;
  if (!request_pid (request, &pid))
    {
      send_error (serve, "control needs a \"pid\" between 1 and %d", G_MAXINT32);
      return;
    }
  JsonNode *inner = json_object_get_member (request, "request");
  if (inner == NULL || !JSON_NODE_HOLDS_OBJECT (inner))
    {
      send_error (serve, "control needs a \"request\" object");
      return;
    }
  JsonObject *command = json_node_get_object (inner);
  JsonNode *name = json_object_get_member (command, "command");
  if (name == NULL || json_node_get_value_type (name) != G_TYPE_STRING)
    {
      send_error (serve, "control's request needs a \"command\" string");
      return;
    }
  /* The session checks the command itself; these two only pass fds. */
  if (strcmp (json_node_get_string (name), "hello") == 0
      || strcmp (json_node_get_string (name), "snapshot") == 0)
    {
      send_error (serve, "“%s” is not forwarded (its reply carries a file descriptor)",
                  json_node_get_string (name));
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autofree char *socket_path = wick_live_find_socket (pid, &error);
  g_autoptr (WickLiveConnection) connection
    = socket_path != NULL ? wick_live_connection_new (socket_path, &error) : NULL;
  if (connection == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  int timeout = strcmp (json_node_get_string (name), "capture") == 0 ? WICK_LIVE_CAPTURE_TIMEOUT_MS
                                                                     : WICK_LIVE_REQUEST_TIMEOUT_MS;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (connection, command, timeout, NULL, &error);
  if (reply == NULL)
    {
      send_error (serve, "%s", error->message);
      return;
    }
  json_object_remove_member (reply, "v");
  send_object (serve, WICK_REMOTE_REPLY, reply);
}

/* READ: a regular file of the node, read-only, as the user ssh logged in
 * as may read it (`ssh node cat FILE` could too), sent in FILE chunks; an
 * empty last chunk ends it. A FIFO or device is refused before it could
 * block, a file past WICK_REMOTE_MAX_FILE_BYTES is cut with an error. */
static void
serve_read (Serve *serve, JsonObject *request)
{
  if (serve->reader != NULL)
    {
      send_error (serve, "a read while attached (detach first)");
      return;
    }
  JsonNode *member = json_object_get_member (request, "path");
  const char *path = member != NULL && json_node_get_value_type (member) == G_TYPE_STRING
                       ? json_node_get_string (member)
                       : NULL;
  if (path == NULL || path[0] == '\0' || strlen (path) > WICK_REMOTE_MAX_PATH_BYTES)
    {
      send_error (serve, "read needs a \"path\" string of 1 to %d bytes",
                  WICK_REMOTE_MAX_PATH_BYTES);
      return;
    }
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      send_error (serve, "cannot read %s: %s", path, g_strerror (errno));
      if (fd >= 0)
        close (fd);
      return;
    }
  if (!S_ISREG (st.st_mode))
    {
      send_error (serve, "%s is not a regular file", path);
      close (fd);
      return;
    }
  fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
  g_autofree guint8 *chunk = g_malloc (FILE_CHUNK);
  guint64 sent = 0;
  for (;;)
    {
      gsize have = 0;
      while (have < FILE_CHUNK)
        {
          ssize_t n = read (fd, chunk + have, FILE_CHUNK - have);
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            {
              send_error (serve, "reading %s at byte %" G_GUINT64_FORMAT ": %s", path,
                          sent + have, g_strerror (errno));
              close (fd);
              return;
            }
          if (n == 0)
            break;
          have += (gsize)n;
        }
      if (sent + have > WICK_REMOTE_MAX_FILE_BYTES)
        {
          send_error (serve, "%s is larger than %" G_GUINT64_FORMAT " GiB", path,
                      WICK_REMOTE_MAX_FILE_BYTES >> 30);
          close (fd);
          return;
        }
      g_autoptr (GBytes) frame = wick_remote_frame_encode (
        WICK_REMOTE_FILE, have > 0 ? WICK_REMOTE_FLAG_MORE : 0, chunk, have, TRUE);
      if (!write_frame (serve, frame) || have == 0)
        break;
      sent += have;
    }
  close (fd);
}

static void
handle_frame (Serve *serve, WickRemoteFrame *frame)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node
    = wick_remote_parse_json (frame->payload, wick_remote_type_name (frame->type), &error);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      send_error (serve, "a %s request that is not a JSON object%s%s",
                  wick_remote_type_name (frame->type), error != NULL ? ": " : "",
                  error != NULL ? error->message : "");
      return;
    }
  JsonObject *object = json_node_get_object (node);
  switch (frame->type)
    {
      case WICK_REMOTE_HELLO:
        break; /* answered at start */
      case WICK_REMOTE_LIST:
        serve_list (serve);
        break;
      case WICK_REMOTE_ATTACH:
        serve_attach (serve, object);
        break;
      case WICK_REMOTE_CONTROL:
        serve_control (serve, object);
        break;
      case WICK_REMOTE_READ:
        serve_read (serve, object);
        break;
      case WICK_REMOTE_DETACH:
        if (serve->reader != NULL)
          detach (serve, "detached");
        break;
      default:
        send_error (serve, "a %s frame is not a request", wick_remote_type_name (frame->type));
        break;
    }
}

static void
read_input (Serve *serve, GError **error)
{
  guint8 buffer[65536];
  for (;;)
    {
      ssize_t n = read (STDIN_FILENO, buffer, sizeof buffer);
      if (n == 0)
        {
          serve->input_closed = TRUE;
          return;
        }
      if (n < 0)
        {
          if (errno != EAGAIN && errno != EINTR)
            serve->input_closed = TRUE;
          return;
        }
      if (!wick_remote_parser_feed (serve->parser, buffer, (gsize)n, error))
        return;
      WickRemoteFrame frame;
      while (wick_remote_parser_next (serve->parser, &frame, error))
        {
          handle_frame (serve, &frame);
          wick_remote_frame_clear (&frame);
        }
      if (*error != NULL)
        return;
    }
}

static void
pump (Serve *serve)
{
  gint64 deadline = g_get_monotonic_time () + DRAIN_BUDGET_US;
  WickError error;
  for (;;)
    {
      long n = wick_ring_reader_drain (serve->reader, DRAIN_CHUNK, on_record, serve, &error);
      if (n < DRAIN_CHUNK || g_get_monotonic_time () >= deadline || serve->output_failed)
        break;
    }
  flush_batch (serve);
  gint64 now = g_get_monotonic_time ();
  if (now >= serve->next_stats_us)
    {
      send_stats (serve);
      serve->next_stats_us = now + STATS_INTERVAL_US;
    }
  WickProducerState state = wick_ring_reader_get_producer_state (serve->reader);
  if (serve->terminal || state != WICK_PRODUCER_RUNNING)
    {
      /* what the producer committed before it stopped */
      wick_ring_reader_drain (serve->reader, 0, on_record, serve, &error);
      detach (serve, serve->terminal ? "the session finished" : "the process stopped");
    }
}

int
wick_trace_serve (int argc, char **argv)
{
  gboolean stdio = FALSE;
  const GOptionEntry entries[] = {
    { "stdio", 0, 0, G_OPTION_ARG_NONE, &stdio,
      "Speak the remote protocol on stdin/stdout (what ssh runs)", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "serve", "--stdio",
    "The node's end of `wick-trace --remote`: the remote protocol (docs/protocol.md) on "
    "stdin/stdout, for the sessions of the user running it. Exits when stdin closes.",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (!stdio)
    return wick_trace_usage_error ("serve", "--stdio is required (no other transport exists)");
  if (argc > 1)
    return wick_trace_usage_error ("serve", "unexpected argument “%s”", argv[1]);
  if (getuid () != geteuid ())
    {
      fprintf (stderr, "wick-trace serve: refusing to run set-uid\n");
      return WICK_TRACE_EXIT_USAGE;
    }
  if (isatty (STDOUT_FILENO))
    {
      fprintf (stderr, "wick-trace serve: stdout is a terminal; this command speaks a binary "
                       "protocol for `wick-trace --remote` (run through ssh)\n");
      return WICK_TRACE_EXIT_USAGE;
    }
  signal (SIGPIPE, SIG_IGN);
  fcntl (STDIN_FILENO, F_SETFL, fcntl (STDIN_FILENO, F_GETFL) | O_NONBLOCK);
  fcntl (STDOUT_FILENO, F_SETFL, fcntl (STDOUT_FILENO, F_GETFL) | O_NONBLOCK);

  Serve serve = { 0 };
  serve.parser = wick_remote_parser_new ();
  serve.batch = g_byte_array_sized_new (BATCH_BYTES + 65536);
  g_autoptr (JsonObject) hello = json_object_new ();
  json_object_set_int_member (hello, "v", WICK_REMOTE_VERSION);
  json_object_set_string_member (hello, "server", "wick-trace " WICK_VERSION);
  json_object_set_string_member (hello, "host", g_get_host_name ());
  json_object_set_int_member (hello, "uid", getuid ());
  json_object_set_int_member (hello, "pid", getpid ());
  send_object (&serve, WICK_REMOTE_HELLO, hello);

  int status = WICK_TRACE_EXIT_OK;
  while (!serve.input_closed && !serve.output_failed)
    {
      struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };
      poll (&pfd, 1, serve.reader != NULL ? POLL_ATTACHED_MS : 1000);
      g_autoptr (GError) error = NULL;
      if (pfd.revents != 0)
        read_input (&serve, &error);
      if (error != NULL)
        {
          /* A client speaking garbage: say so once and stop. */
          send_error (&serve, "%s", error->message);
          fprintf (stderr, "wick-trace serve: %s\n", error->message);
          status = WICK_TRACE_EXIT_USAGE;
          break;
        }
      if (serve.reader != NULL && !serve.input_closed)
        pump (&serve);
    }
  g_clear_pointer (&serve.reader, wick_ring_reader_free);
  g_byte_array_unref (serve.batch);
  wick_remote_parser_free (serve.parser);
  return status;
}
