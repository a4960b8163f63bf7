/* wick-live-client.c — discovery and control requests (see the header). */
#include "config.h"

#include "wick-live-client.h"
#include "wick-live-client-private.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <wick/wick.h>

#define FRAME_HEADER 4
#define HELLO_TIMEOUT_MS 3000
#define LIST_HELLO_TIMEOUT_MS 1000
#define LIST_PARALLEL 256
/* the whole listing, however many sockets the directory holds */
#define LIST_DEADLINE_MS 2000

struct _WickLiveConnection
{
  int fd;
  char *path;
};

G_DEFINE_QUARK (wick - live - error - quark, wick_live_error)

void
wick_live_session_info_free (WickLiveSessionInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->socket_path);
  g_free (info->program);
  g_free (info->entrypoint);
  g_free (info->started);
  g_free (info->policy);
  g_free (info->run_id);
  g_free (info->problem);
  g_free (info);
}

char *
wick_live_control_directory (GError **error)
{
  char path[256];
  WickError wick_error;
  if (!wick_control_directory (path, sizeof path, &wick_error))
    {
      g_set_error_literal (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT, wick_error.message);
      return NULL;
    }
  return g_strdup (path);
}

/* The pid in a socket name "<pid>-<n>.sock", or 0. */
static gint64
socket_pid (const char *path)
{
  const char *name = strrchr (path, '/');
  name = name != NULL ? name + 1 : path;
  char *end;
  gint64 value = g_ascii_strtoll (name, &end, 10);
  if (end == name || value <= 0 || value > G_MAXINT32 || *end != '-'
      || !g_str_has_suffix (name, ".sock"))
    return 0;
  return value;
}

/* TRUE when /proc says @pid is stopped (SIGSTOP, ptrace): it cannot answer. */
static gboolean
wick_live_process_is_stopped (gint64 pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%" G_GINT64_FORMAT "/stat", pid);
  g_autofree char *text = NULL;
  if (pid <= 0 || !g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  /* "pid (comm) S ...": comm may hold spaces and parentheses; the state
   * follows the last ')'. */
  const char *close_paren = strrchr (text, ')');
  if (close_paren == NULL || close_paren[1] != ' ')
    return FALSE;
  return close_paren[2] == 'T' || close_paren[2] == 't';
}

WickLiveConnection *
wick_live_connection_new (const char *socket_path, GError **error)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen (socket_path) >= sizeof address.sun_path)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                   "control socket path %s is too long", socket_path);
      return NULL;
    }
  /* A stopped process cannot accept: connecting would only leave a queued
   * connection on its listener (docs/protocol.md, "Never blocking on a peer"). */
  gint64 pid = socket_pid (socket_path);
  if (pid > 0 && wick_live_process_is_stopped (pid))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                   "the session at %s is not answering: its process (pid %" G_GINT64_FORMAT
                   ") is stopped (SIGSTOP or a debugger)",
                   socket_path, pid);
      return NULL;
    }
  strcpy (address.sun_path, socket_path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                   "cannot create a socket for %s: %s", socket_path, g_strerror (errno));
      return NULL;
    }
  /* Non-blocking: a Unix connect either completes at once, is refused, or
   * (EAGAIN) finds the listener's queue full, which is retried briefly. */
  gint64 deadline = g_get_monotonic_time () + (gint64)WICK_LIVE_CONNECT_TIMEOUT_MS * 1000;
  for (;;)
    {
      if (connect (fd, (struct sockaddr *)&address, sizeof address) == 0)
        break;
      int saved = errno;
      if (saved == EINTR)
        continue;
      if (saved == EAGAIN && g_get_monotonic_time () < deadline)
        {
          g_usleep (5000);
          continue;
        }
      close (fd);
      if (saved == EAGAIN)
        g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                     "the session at %s is not answering: its connection queue stayed full "
                     "for %d ms",
                     socket_path, WICK_LIVE_CONNECT_TIMEOUT_MS);
      else
        g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                     "cannot connect to the session at %s: %s", socket_path, g_strerror (saved));
      return NULL;
    }
  WickLiveConnection *self = g_new0 (WickLiveConnection, 1);
  self->fd = fd;
  self->path = g_strdup (socket_path);
  return self;
}

void
wick_live_connection_free (WickLiveConnection *self)
{
  if (self == NULL)
    return;
  close (self->fd);
  g_free (self->path);
  g_free (self);
}

const char *
wick_live_connection_get_path (WickLiveConnection *self)
{
  return self->path;
}

static gboolean
wait_for (WickLiveConnection *self, short events, gint64 deadline, GError **error)
{
  for (;;)
    {
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;
      if (left_ms <= 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                       "the session at %s is not answering: no reply in time", self->path);
          return FALSE;
        }
      struct pollfd pfd = { self->fd, events, 0 };
      int n = poll (&pfd, 1, (int)MIN (left_ms, G_MAXINT));
      if (n > 0)
        return TRUE;
      if (n < 0 && errno != EINTR)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT, "poll on %s: %s",
                       self->path, g_strerror (errno));
          return FALSE;
        }
    }
}

static gboolean
send_bytes (WickLiveConnection *self, const guint8 *data, gsize length, gint64 deadline,
            GError **error)
{
  gsize sent = 0;
  while (sent < length)
    {
      if (!wait_for (self, POLLOUT, deadline, error))
        return FALSE;
      ssize_t n = send (self->fd, data + sent, length - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n < 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                       "cannot send to the session at %s: %s", self->path, g_strerror (errno));
          return FALSE;
        }
      sent += (gsize)n;
    }
  return TRUE;
}

/* Reads exactly @length bytes; keeps the first file descriptor passed along. */
static gboolean
receive_bytes (WickLiveConnection *self, guint8 *data, gsize length, int *received_fd,
               gint64 deadline, GError **error)
{
  gsize got = 0;
  while (got < length)
    {
      if (!wait_for (self, POLLIN, deadline, error))
        return FALSE;
      struct iovec iov = { data + got, length - got };
      union
      {
        char buf[CMSG_SPACE (sizeof (int) * 4)];
        struct cmsghdr align;
      } control;
      struct msghdr msg = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof control.buf };
      ssize_t n = recvmsg (self->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                       "the session at %s closed the connection%s%s", self->path, n < 0 ? ": " : "",
                       n < 0 ? g_strerror (errno) : "");
          return FALSE;
        }
      for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
          {
            gsize n_fds = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
            for (gsize i = 0; i < n_fds; i++)
              {
                int fd;
                memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof fd);
                if (received_fd != NULL && *received_fd < 0)
                  *received_fd = fd;
                else
                  close (fd);
              }
          }
      got += (gsize)n;
    }
  return TRUE;
}

gboolean
wick_live_json_too_deep (const char *data, gsize length, guint max_depth)
{
  guint depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < length; i++)
    {
      char c = data[i];
      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if (c == '[' || c == '{')
        {
          if (++depth > max_depth)
            return TRUE;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return FALSE;
}

static JsonObject *
parse_reply (WickLiveConnection *self, const char *body, gsize length, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  if (wick_live_json_too_deep (body, length, WICK_LIVE_MAX_JSON_DEPTH))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "malformed reply from the session at %s: nested deeper than %d levels",
                   self->path, WICK_LIVE_MAX_JSON_DEPTH);
      return NULL;
    }
  if (!json_parser_load_from_data (parser, body, (gssize)length, &local))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "malformed reply from the session at %s: %s", self->path, local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "reply from the session at %s is not a JSON object", self->path);
      return NULL;
    }
  JsonObject *reply = json_node_dup_object (root);
  if (!json_object_has_member (reply, "ok"))
    {
      json_object_unref (reply);
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "reply from the session at %s lacks \"ok\"", self->path);
      return NULL;
    }
  return reply;
}

static JsonObject *
exchange (WickLiveConnection *self, const char *body, gsize length, int timeout_ms,
          int *received_fd, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  guint8 header[FRAME_HEADER]
    = { length & 0xFF, length >> 8 & 0xFF, length >> 16 & 0xFF, length >> 24 & 0xFF };
  if (received_fd != NULL)
    *received_fd = -1;
  g_autoptr (GError) send_error = NULL;
  if (!send_bytes (self, header, FRAME_HEADER, deadline, &send_error)
      || !send_bytes (self, (const guint8 *)body, length, deadline, &send_error))
    {
      /* A session that refuses a peer answers with an error and closes before
       * reading: that reply, when there is one, says more than EPIPE. */
      if (!g_error_matches (send_error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT))
        {
          g_propagate_error (error, g_steal_pointer (&send_error));
          return NULL;
        }
    }
  guint8 reply_header[FRAME_HEADER];
  if (!receive_bytes (self, reply_header, FRAME_HEADER, received_fd, deadline,
                      send_error != NULL ? NULL : error))
    {
      if (send_error != NULL)
        g_propagate_error (error, g_steal_pointer (&send_error));
      return NULL;
    }
  guint32 reply_length = (guint32)reply_header[0] | (guint32)reply_header[1] << 8
                         | (guint32)reply_header[2] << 16 | (guint32)reply_header[3] << 24;
  if (reply_length == 0 || reply_length > WICK_CONTROL_MAX_MESSAGE)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the session at %s announced a reply of %u bytes (limit %d)", self->path,
                   reply_length, WICK_CONTROL_MAX_MESSAGE);
      return NULL;
    }
  g_autofree char *reply = g_malloc (reply_length + 1);
  if (!receive_bytes (self, (guint8 *)reply, reply_length, received_fd, deadline, error))
    return NULL;
  reply[reply_length] = '\0';
  return parse_reply (self, reply, reply_length, error);
}

JsonObject *
wick_live_connection_request_raw (WickLiveConnection *self, const char *body, gsize length,
                                  int timeout_ms, GError **error)
{
  return exchange (self, body, length, timeout_ms, NULL, error);
}

JsonObject *
wick_live_connection_request (WickLiveConnection *self, JsonObject *request, int timeout_ms,
                              int *received_fd, GError **error)
{
  json_object_set_int_member (request, "v", WICK_CONTROL_PROTOCOL_VERSION);
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, request);
  gsize length;
  g_autofree char *body = json_to_string (node, FALSE);
  length = strlen (body);
  int fd = -1;
  JsonObject *reply = exchange (self, body, length, timeout_ms, &fd, error);
  if (received_fd != NULL)
    *received_fd = fd;
  else if (fd >= 0)
    close (fd);
  return reply;
}

JsonObject *
wick_live_request_new (const char *command)
{
  JsonObject *request = json_object_new ();
  json_object_set_string_member (request, "command", command);
  return request;
}

gboolean
wick_live_reply_check (JsonObject *reply, GError **error)
{
  if (json_object_get_boolean_member_with_default (reply, "ok", FALSE))
    return TRUE;
  gboolean busy = json_object_get_boolean_member_with_default (reply, "busy", FALSE);
  g_set_error_literal (
    error, WICK_LIVE_ERROR, busy ? WICK_LIVE_ERROR_BUSY : WICK_LIVE_ERROR_REFUSED,
    json_object_get_string_member_with_default (reply, "error", "the session refused"));
  return FALSE;
}

static char *
dup_string_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return g_strdup (json_node_get_string (node));
}

static guint64
uint_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  if (node == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return 0;
  gint64 value = json_node_get_int (node);
  return value > 0 ? (guint64)value : 0;
}

static WickLiveSessionInfo *
info_from_hello (WickLiveConnection *self, JsonObject *reply)
{
  WickLiveSessionInfo *info = g_new0 (WickLiveSessionInfo, 1);
  info->socket_path = g_strdup (self->path);
  info->program = dup_string_member (reply, "program");
  info->pid = (gint64)uint_member (reply, "pid");
  info->entrypoint = dup_string_member (reply, "entrypoint");
  info->started = dup_string_member (reply, "started");
  info->started_unix_ns = uint_member (reply, "started_unix_ns");
  info->policy = dup_string_member (reply, "policy");
  info->dropped = uint_member (reply, "dropped");
  info->strict = json_object_get_boolean_member_with_default (reply, "strict", FALSE);
  info->run_id = dup_string_member (reply, "run_id");
  info->finished = json_object_get_boolean_member_with_default (reply, "finished", FALSE);
  if (info->program == NULL)
    info->program = g_strdup ("?");
  if (info->entrypoint == NULL)
    info->entrypoint = g_strdup ("");
  if (info->started == NULL)
    info->started = g_strdup ("");
  if (info->policy == NULL)
    info->policy = g_strdup ("drop");
  return info;
}

WickLiveSessionInfo *
wick_live_connection_hello (WickLiveConnection *self, int *ring_fd, GError **error)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("hello");
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (self, request, HELLO_TIMEOUT_MS, ring_fd, error);
  if (reply == NULL || !wick_live_reply_check (reply, error))
    {
      if (ring_fd != NULL && *ring_fd >= 0)
        {
          close (*ring_fd);
          *ring_fd = -1;
        }
      return NULL;
    }
  return info_from_hello (self, reply);
}

static gboolean
is_socket_name (const char *name, gint64 *pid)
{
  *pid = socket_pid (name);
  return *pid > 0;
}

/* n of "<pid>-<n>.sock" (sessions of one process sort by it). */
static gint64
socket_number (const char *path)
{
  const char *dash = strrchr (path, '-');
  return dash != NULL ? g_ascii_strtoll (dash + 1, NULL, 10) : 0;
}

static gint
compare_sessions (gconstpointer a, gconstpointer b)
{
  const WickLiveSessionInfo *x = *(WickLiveSessionInfo *const *)a;
  const WickLiveSessionInfo *y = *(WickLiveSessionInfo *const *)b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  gint64 nx = socket_number (x->socket_path), ny = socket_number (y->socket_path);
  if (nx != ny)
    return nx < ny ? -1 : 1;
  return g_strcmp0 (x->socket_path, y->socket_path);
}

static WickLiveSessionInfo *
unanswering_info (const char *path, gint64 pid, const GError *why)
{
  WickLiveSessionInfo *info = g_new0 (WickLiveSessionInfo, 1);
  info->socket_path = g_strdup (path);
  info->pid = pid;
  info->program = g_strdup ("?");
  info->entrypoint = g_strdup ("");
  info->started = g_strdup ("");
  info->policy = g_strdup ("");
  info->busy = g_error_matches (why, WICK_LIVE_ERROR, WICK_LIVE_ERROR_BUSY);
  info->problem = g_strdup (why->message);
  return info;
}

typedef struct
{
  char *path;
  gint64 pid;
  gboolean include_unanswering;
  int timeout_ms;            /* the hello's, within the listing's deadline */
  WickLiveSessionInfo *info; /* the result, or NULL */
} Probe;

/* One socket's hello, on its own thread: a peer that accepts and never
 * answers costs its probe LIST_HELLO_TIMEOUT_MS, not the whole listing. */
static gpointer
probe_thread (gpointer data)
{
  Probe *probe = data;
  g_autoptr (GError) why = NULL;
  g_autoptr (WickLiveConnection) connection = wick_live_connection_new (probe->path, &why);
  if (connection != NULL)
    {
      g_autoptr (JsonObject) request = wick_live_request_new ("hello");
      g_autoptr (JsonObject) reply
        = wick_live_connection_request (connection, request, probe->timeout_ms, NULL, &why);
      if (reply != NULL && wick_live_reply_check (reply, &why))
        probe->info = info_from_hello (connection, reply);
    }
  if (probe->info == NULL && probe->include_unanswering
      && !g_error_matches (why, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT))
    probe->info = unanswering_info (probe->path, probe->pid, why);
  return NULL;
}

/* Every socket of the directory, stale ones removed first. Never blocks on a
 * peer: a stopped process is not connected to, a connect never waits more than
 * WICK_LIVE_CONNECT_TIMEOUT_MS, a hello not more than LIST_HELLO_TIMEOUT_MS,
 * up to LIST_PARALLEL sockets are probed at once (so 31 silent sockets
 * take about one hello timeout, not 31), and all of them within
 * LIST_DEADLINE_MS: sockets left when it has passed are listed as not
 * answering, unprobed (600 silent sockets took 10 s before, now 2). */
static GPtrArray *
list_sessions (gboolean include_unanswering, gint64 only_pid, GError **error)
{
  g_autofree char *directory = wick_live_control_directory (error);
  if (directory == NULL)
    return NULL;
  wick_control_remove_stale_sockets ();
  g_autoptr (GDir) dir = g_dir_open (directory, 0, error);
  if (dir == NULL)
    return NULL;
  g_autoptr (GArray) probes = g_array_new (FALSE, TRUE, sizeof (Probe));
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      gint64 pid;
      if (!is_socket_name (name, &pid) || (only_pid > 0 && pid != only_pid))
        continue;
      Probe probe
        = { g_build_filename (directory, name, NULL), pid, include_unanswering, 0, NULL };
      g_array_append_val (probes, probe);
    }
  GPtrArray *sessions
    = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_live_session_info_free);
  gint64 deadline = g_get_monotonic_time () + (gint64)LIST_DEADLINE_MS * 1000;
  for (guint first = 0; first < probes->len; first += LIST_PARALLEL)
    {
      guint n = MIN (probes->len - first, LIST_PARALLEL);
      GThread *threads[LIST_PARALLEL] = { NULL };
      gint64 left_ms = (deadline - g_get_monotonic_time ()) / 1000;
      if (left_ms <= 0)
        {
          for (guint i = first; i < probes->len; i++)
            {
              Probe *probe = &g_array_index (probes, Probe, i);
              if (include_unanswering)
                {
                  g_autoptr (GError) why
                    = g_error_new (WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                                   "not asked: the listing's %d ms were spent on %u sockets "
                                   "before it",
                                   LIST_DEADLINE_MS, i);
                  g_ptr_array_add (sessions, unanswering_info (probe->path, probe->pid, why));
                }
              g_free (probe->path);
            }
          break;
        }
      for (guint i = 0; i < n; i++)
        {
          Probe *probe = &g_array_index (probes, Probe, first + i);
          probe->timeout_ms = (int)MIN (left_ms, LIST_HELLO_TIMEOUT_MS);
          threads[i] = g_thread_try_new ("wick-probe", probe_thread, probe, NULL);
          if (threads[i] == NULL)
            probe_thread (probe); /* no thread to spare: in series */
        }
      for (guint i = 0; i < n; i++)
        {
          Probe *probe = &g_array_index (probes, Probe, first + i);
          if (threads[i] != NULL)
            g_thread_join (threads[i]);
          if (probe->info != NULL)
            g_ptr_array_add (sessions, probe->info);
          g_free (probe->path);
        }
    }
  g_ptr_array_sort (sessions, compare_sessions);
  return sessions;
}

GPtrArray *
wick_live_list_sessions (GError **error)
{
  return list_sessions (FALSE, 0, error);
}

GPtrArray *
wick_live_list_all_sessions (GError **error)
{
  return list_sessions (TRUE, 0, error);
}

char *
wick_live_find_socket (gint64 pid, GError **error)
{
  g_autoptr (GPtrArray) sessions = list_sessions (TRUE, pid, error);
  if (sessions == NULL)
    return NULL;
  /* The first session of the pid that answers; else the first that exists
   * (its connection then says "busy" or "not answering", never "no session"). */
  for (guint i = 0; i < sessions->len; i++)
    {
      WickLiveSessionInfo *info = g_ptr_array_index (sessions, i);
      if (info->problem == NULL)
        return g_strdup (info->socket_path);
    }
  if (sessions->len > 0)
    return g_strdup (((WickLiveSessionInfo *)g_ptr_array_index (sessions, 0))->socket_path);
  g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
               "no live session with pid %" G_GINT64_FORMAT
               " (is it running with control enabled, e.g. WICK_CONTROL=1?)",
               pid);
  return NULL;
}
