/* wick-control-server.c — the control socket, its listener thread and its
 * command worker.
 *
 * The listener thread does all socket I/O and never waits on a peer: it polls
 * the listening socket, a wake pipe (to stop), the worker's done pipe and every
 * connection, reads and writes without blocking, and keeps a deadline for
 * everything a peer could hold open (docs/protocol.md, "Fairness and
 * deadlines"):
 *
 * - a frame must arrive whole within WICK_CONTROL_FRAME_TIMEOUT_MS of its first
 *   byte, else the client gets an error reply and is closed;
 * - a connection idle (no partial frame, nothing pending) for
 *   WICK_CONTROL_IDLE_TIMEOUT_MS is closed, and when every served slot is taken
 *   the longest-idle connection idle for WICK_CONTROL_IDLE_EVICT_MS gives its
 *   slot to the newcomer;
 * - a reply must be taken within WICK_CONTROL_SEND_TIMEOUT_MS.
 *
 * Fair service: a connection has at most one request in flight (it is not read
 * again until its reply is written), and requests wait for the worker in
 * arrival order. "hello" only reads the session's metadata and is answered on
 * the listener thread at once; every other command runs on the worker thread,
 * one at a time. A request that cannot start within WICK_CONTROL_QUEUE_WAIT_MS
 * (another client's evict or capture is running), and every request of a
 * connection beyond WICK_CONTROL_MAX_SERVED, gets {"ok":false,"busy":true,...}
 * instead of silence; a busy-only connection is still read to the end of its
 * frame first, so its client never writes into a closed socket.
 *
 * Each connection is admitted only when SO_PEERCRED says its uid is ours; a
 * refused peer gets one error reply and is closed. A frame with a bad length
 * gets an error reply and the connection is closed (it cannot be
 * resynchronised); a malformed body gets an error reply and the connection
 * stays usable. The workload's threads never wait on these threads.
 */
#include "config.h"

#include "wick-control-private.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/wick-error-private.h"

#define WICK_CONTROL_MAX_SERVED 64       /* connections whose commands run */
#define WICK_CONTROL_MAX_CONNECTIONS 256 /* beyond the served ones: answered "busy" */
#define WICK_CONTROL_BACKLOG 128
#define WICK_CONTROL_SEND_TIMEOUT_MS 2000
#define WICK_CONTROL_FRAME_TIMEOUT_MS 2000
#define WICK_CONTROL_QUEUE_WAIT_MS 2000
#define WICK_CONTROL_IDLE_TIMEOUT_MS 30000
#define WICK_CONTROL_IDLE_EVICT_MS 1000

typedef enum
{
  CLIENT_FREE,
  CLIENT_READING, /* waiting for (the rest of) a frame */
  CLIENT_QUEUED,  /* a parsed request waits for the worker */
  CLIENT_RUNNING, /* the worker runs its request */
  CLIENT_WRITING, /* a reply is being written */
} ClientState;

typedef struct
{
  int fd;
  ClientState state;
  bool busy_only;   /* beyond WICK_CONTROL_MAX_SERVED: every request gets "busy" */
  bool close_after; /* close once the reply is written */
  unsigned char header[WICK_CONTROL_FRAME_HEADER];
  size_t filled;        /* bytes of the current frame, header included */
  uint32_t body_length; /* 0 until the header is complete */
  char *body;           /* body_length + 1 bytes; NULL for busy-only clients */
  int64_t frame_start_ms, active_ms, queued_ms, write_start_ms;
  uint64_t queue_order;
  WickControlRequest request;
  bool has_request;
  unsigned char *out; /* the reply frame being written */
  size_t out_length, out_sent;
  int out_fd;        /* passed with the reply's first byte (hello's ring), or -1 */
  bool out_fd_owned; /* out_fd is ours to close once sent (a reply's pass_fd) */
} Client;

typedef struct
{
  WickSession *session;
  int listen_fd;
  int wake[2];
  int done[2]; /* the worker says "finished" here */
  pthread_t thread;
  pthread_mutex_t host_lock;
  char path[sizeof ((struct sockaddr_un *)0)->sun_path];
  Client clients[WICK_CONTROL_MAX_CONNECTIONS];
  unsigned next_first; /* round-robin start of the service loop */
  uint64_t queue_counter;
  locale_t c_locale;

  /* The worker: one command at a time. */
  pthread_t worker;
  bool worker_started;
  pthread_mutex_t job_lock;
  pthread_cond_t job_cond;
  int job_client; /* index, or -1 */
  bool job_done, worker_stop;
  WickControlWriter job_reply;
  bool job_send_ring_fd;
  char job_command[WICK_CONTROL_MAX_KEY + 1];
  int64_t job_started_ms;
} WickControlServer;

static atomic_uint socket_counter;

static WickControlServer *
server_of (WickSession *session)
{
  return wick_session_get_slot (session, WICK_SLOT_CONTROL);
}

static int64_t
now_ms (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- writing replies (never blocking) ---- */

/* Writes what the socket takes now; true when the reply is all written, false
 * with *failed when the connection is broken. */
static bool
client_flush (Client *client, bool *failed)
{
  *failed = false;
  while (client->out_sent < client->out_length)
    {
      struct iovec iov = { client->out + client->out_sent, client->out_length - client->out_sent };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
      union
      {
        char buf[CMSG_SPACE (sizeof (int))];
        struct cmsghdr align;
      } control;
      if (client->out_fd >= 0)
        {
          memset (&control, 0, sizeof control);
          msg.msg_control = control.buf;
          msg.msg_controllen = sizeof control.buf;
          struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
          cmsg->cmsg_level = SOL_SOCKET;
          cmsg->cmsg_type = SCM_RIGHTS;
          cmsg->cmsg_len = CMSG_LEN (sizeof (int));
          memcpy (CMSG_DATA (cmsg), &client->out_fd, sizeof (int));
        }
      ssize_t n = sendmsg (client->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0)
        {
          client->out_sent += (size_t)n;
          if (client->out_fd_owned)
            close (client->out_fd);
          client->out_fd = -1;
          client->out_fd_owned = false;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return false;
      *failed = true;
      return false;
    }
  free (client->out);
  client->out = NULL;
  client->out_length = client->out_sent = 0;
  return true;
}

static void client_close (Client *client);

/* Queues @body as the client's reply and writes what it can; closes the
 * connection when the write fails or @close_after is set and it is done. */
static void
client_reply (Client *client, const char *body, size_t length, int fd_to_send, bool close_after,
              bool owns_fd)
{
  free (client->out);
  client->out = malloc (WICK_CONTROL_FRAME_HEADER + length);
  client->out_fd = fd_to_send;
  client->out_fd_owned = owns_fd && fd_to_send >= 0;
  if (client->out == NULL)
    {
      client_close (client);
      return;
    }
  wick_control_frame_header ((uint32_t)length, client->out);
  memcpy (client->out + WICK_CONTROL_FRAME_HEADER, body, length);
  client->out_length = WICK_CONTROL_FRAME_HEADER + length;
  client->out_sent = 0;
  client->close_after = close_after;
  client->state = CLIENT_WRITING;
  client->write_start_ms = now_ms ();
  bool failed;
  if (client_flush (client, &failed))
    {
      client->state = CLIENT_READING;
      client->active_ms = now_ms ();
      if (client->close_after)
        client_close (client);
    }
  else if (failed)
    client_close (client);
}

static void
client_reply_error (Client *client, const char *message, bool busy, bool close_after)
{
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_int (&writer, "v", WICK_CONTROL_PROTOCOL_VERSION);
  wick_control_writer_bool (&writer, "ok", false);
  if (busy)
    wick_control_writer_bool (&writer, "busy", true);
  wick_control_writer_string (&writer, "error", message);
  wick_control_writer_end_object (&writer);
  if (writer.overflow)
    client_close (client);
  else
    client_reply (client, writer.data, writer.length, -1, close_after, false);
  wick_control_writer_clear (&writer);
}

/* One error reply on a connection that is closed right after (a refused
 * peer, no slot left): a short blocking-free attempt, nothing kept. */
static void
send_and_close (int fd, const char *message, bool busy)
{
  Client temporary = { .fd = fd, .out_fd = -1 };
  client_reply_error (&temporary, message, busy, true);
  if (temporary.fd >= 0)
    client_close (&temporary);
}

static void
client_close (Client *client)
{
  if (client->fd >= 0)
    close (client->fd);
  free (client->body);
  free (client->out);
  if (client->out_fd_owned && client->out_fd >= 0)
    close (client->out_fd);
  if (client->has_request)
    wick_control_request_clear (&client->request);
  memset (client, 0, sizeof *client);
  client->fd = -1;
  client->out_fd = -1;
  client->state = CLIENT_FREE;
}

/* ---- the worker ---- */

static void *
worker_thread (void *data)
{
  WickControlServer *server = data;
  if (server->c_locale != (locale_t)0)
    uselocale (server->c_locale);
  pthread_mutex_lock (&server->job_lock);
  for (;;)
    {
      while (!server->worker_stop && (server->job_client < 0 || server->job_done))
        pthread_cond_wait (&server->job_cond, &server->job_lock);
      if (server->worker_stop)
        break;
      Client *client = &server->clients[server->job_client];
      pthread_mutex_unlock (&server->job_lock);

      WickControlWriter reply;
      bool send_ring_fd = false;
      wick_control_writer_init (&reply);
      wick_control_writer_begin_object (&reply, NULL);
      wick_control_writer_int (&reply, "v", WICK_CONTROL_PROTOCOL_VERSION);
      wick_control_execute (server->session, &client->request, &reply, &send_ring_fd);
      wick_control_writer_end_object (&reply);

      pthread_mutex_lock (&server->job_lock);
      server->job_reply = reply;
      server->job_send_ring_fd = send_ring_fd;
      server->job_done = true;
      char byte = 1;
      while (write (server->done[1], &byte, 1) < 0 && errno == EINTR)
        ;
    }
  pthread_mutex_unlock (&server->job_lock);
  return NULL;
}

static int
session_ring_fd (WickControlServer *server)
{
  WickControlSessionInfo info;
  wick_control_session_info (server->session, &info);
  return info.ring_fd;
}

/* Sends the reply of @writer (overflow becomes an error reply). */
static void
client_send_writer (WickControlServer *server, Client *client, WickControlWriter *writer,
                    bool send_ring_fd)
{
  /* A reply may pass its own descriptor (snapshot's memfd): ours to close
   * once it is sent, or when the connection closes first. */
  int pass_fd = writer->has_pass_fd ? writer->pass_fd : -1;
  writer->has_pass_fd = false;
  if (writer->overflow)
    {
      if (pass_fd >= 0)
        close (pass_fd);
      client_reply_error (client, "the reply is larger than the protocol's message limit", false,
                          false);
      return;
    }
  client_reply (client, writer->data, writer->length,
                pass_fd >= 0   ? pass_fd
                : send_ring_fd ? session_ring_fd (server)
                               : -1,
                false, pass_fd >= 0);
}

/* Takes the worker's finished reply to its client. */
static void
collect_job (WickControlServer *server)
{
  char bytes[16];
  while (read (server->done[0], bytes, sizeof bytes) > 0)
    ;
  pthread_mutex_lock (&server->job_lock);
  if (server->job_client < 0 || !server->job_done)
    {
      pthread_mutex_unlock (&server->job_lock);
      return;
    }
  Client *client = &server->clients[server->job_client];
  WickControlWriter reply = server->job_reply;
  bool send_ring_fd = server->job_send_ring_fd;
  server->job_client = -1;
  server->job_done = false;
  pthread_mutex_unlock (&server->job_lock);

  wick_control_request_clear (&client->request);
  client->has_request = false;
  client_send_writer (server, client, &reply, send_ring_fd);
  wick_control_writer_clear (&reply);
}

/* Gives the worker the request that has waited longest, when it is idle. */
static void
start_next_job (WickControlServer *server)
{
  pthread_mutex_lock (&server->job_lock);
  bool idle = server->job_client < 0;
  pthread_mutex_unlock (&server->job_lock);
  if (!idle)
    return;
  int best = -1;
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    if (server->clients[i].state == CLIENT_QUEUED
        && (best < 0 || server->clients[i].queue_order < server->clients[best].queue_order))
      best = i;
  if (best < 0)
    return;
  Client *client = &server->clients[best];
  client->state = CLIENT_RUNNING;
  pthread_mutex_lock (&server->job_lock);
  server->job_client = best;
  server->job_done = false;
  snprintf (server->job_command, sizeof server->job_command, "%s", client->request.command);
  server->job_started_ms = now_ms ();
  pthread_cond_signal (&server->job_cond);
  pthread_mutex_unlock (&server->job_lock);
}

/* ---- reading requests ---- */

static void
client_handle_body (WickControlServer *server, Client *client)
{
  if (client->busy_only)
    {
      char message[160];
      snprintf (message, sizeof message,
                "busy: %d control clients are connected to this session; try again",
                WICK_CONTROL_MAX_SERVED);
      client_reply_error (client, message, true, true);
      return;
    }
  WickError error = { "" };
  if (!wick_control_request_parse (&client->request, client->body, client->body_length, &error))
    {
      client_reply_error (client, error.message, false, false);
      return;
    }
  client->has_request = true;
  if (strcmp (client->request.command, "hello") == 0)
    {
      /* hello reads only the session's metadata: answered at once, even while
       * the worker runs another client's command. */
      WickControlWriter reply;
      bool send_ring_fd = false;
      wick_control_writer_init (&reply);
      wick_control_writer_begin_object (&reply, NULL);
      wick_control_writer_int (&reply, "v", WICK_CONTROL_PROTOCOL_VERSION);
      wick_control_execute (server->session, &client->request, &reply, &send_ring_fd);
      wick_control_writer_end_object (&reply);
      wick_control_request_clear (&client->request);
      client->has_request = false;
      client_send_writer (server, client, &reply, send_ring_fd);
      wick_control_writer_clear (&reply);
      return;
    }
  client->state = CLIENT_QUEUED;
  client->queued_ms = now_ms ();
  client->queue_order = server->queue_counter++;
}

/* Reads what is there of the current frame (at most one frame); handles it
 * when it is complete. */
static void
client_read (WickControlServer *server, Client *client)
{
  for (;;)
    {
      size_t want;
      unsigned char *into;
      if (client->filled < WICK_CONTROL_FRAME_HEADER)
        {
          want = WICK_CONTROL_FRAME_HEADER - client->filled;
          into = client->header + client->filled;
        }
      else
        {
          size_t at = client->filled - WICK_CONTROL_FRAME_HEADER;
          want = client->body_length - at;
          if (client->body != NULL)
            into = (unsigned char *)client->body + at;
          else
            {
              static unsigned char discard[4096];
              into = discard;
              if (want > sizeof discard)
                want = sizeof discard;
            }
        }
      ssize_t n = recv (client->fd, into, want, MSG_DONTWAIT);
      if (n == 0)
        {
          client_close (client);
          return;
        }
      if (n < 0)
        {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            client_close (client);
          return;
        }
      if (client->filled == 0)
        client->frame_start_ms = now_ms ();
      client->filled += (size_t)n;
      client->active_ms = now_ms ();
      if (client->filled == WICK_CONTROL_FRAME_HEADER)
        {
          WickError error = { "" };
          if (!wick_control_frame_length (client->header, &client->body_length, &error))
            {
              client_reply_error (client, error.message, false, true);
              return;
            }
          if (!client->busy_only)
            {
              client->body = malloc ((size_t)client->body_length + 1);
              if (client->body == NULL)
                {
                  client_close (client);
                  return;
                }
            }
        }
      else if (client->filled == WICK_CONTROL_FRAME_HEADER + (size_t)client->body_length)
        {
          if (client->body != NULL)
            client->body[client->body_length] = '\0';
          client_handle_body (server, client);
          if (client->fd >= 0)
            {
              free (client->body);
              client->body = NULL;
              client->filled = 0;
              client->body_length = 0;
            }
          return;
        }
    }
}

static bool
peer_is_same_user (int fd, char *why, size_t why_size)
{
  struct ucred cred;
  socklen_t length = sizeof cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0)
    {
      snprintf (why, why_size, "permission denied: cannot read the peer's credentials: %s",
                strerror (errno));
      return false;
    }
  if (cred.uid != geteuid ())
    {
      snprintf (why, why_size,
                "permission denied: peer uid %u is not the session's uid %u (SO_PEERCRED)",
                (unsigned)cred.uid, (unsigned)geteuid ());
      return false;
    }
  return true;
}

static int
served_count (WickControlServer *server)
{
  int n = 0;
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    if (server->clients[i].state != CLIENT_FREE && !server->clients[i].busy_only)
      n++;
  return n;
}

/* When every served slot is taken: frees the one idle longest, if it has been
 * idle (no partial frame, nothing pending) for WICK_CONTROL_IDLE_EVICT_MS. */
static bool
evict_idle (WickControlServer *server, int64_t now)
{
  int oldest = -1;
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    {
      Client *c = &server->clients[i];
      if (c->state == CLIENT_READING && !c->busy_only && c->filled == 0
          && now - c->active_ms >= WICK_CONTROL_IDLE_EVICT_MS
          && (oldest < 0 || c->active_ms < server->clients[oldest].active_ms))
        oldest = i;
    }
  if (oldest < 0)
    return false;
  client_close (&server->clients[oldest]);
  return true;
}

/* Accepts every waiting connection there is room for. */
static void
server_accept (WickControlServer *server)
{
  for (;;)
    {
      int fd = accept4 (server->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0)
        return;
      char why[256];
      if (!peer_is_same_user (fd, why, sizeof why))
        {
          send_and_close (fd, why, false);
          continue;
        }
      int64_t now = now_ms ();
      int slot = -1;
      for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS && slot < 0; i++)
        if (server->clients[i].state == CLIENT_FREE)
          slot = i;
      if (slot < 0)
        {
          snprintf (why, sizeof why,
                    "busy: %d control connections are open to this session; try again",
                    WICK_CONTROL_MAX_CONNECTIONS);
          send_and_close (fd, why, true);
          continue;
        }
      /* Counted while the slot is still free: counting the new client among
       * the served ones (with whatever busy_only its slot last had) served 63
       * or 64 at once, not WICK_CONTROL_MAX_SERVED. */
      bool busy_only
        = served_count (server) >= WICK_CONTROL_MAX_SERVED && !evict_idle (server, now);
      Client *client = &server->clients[slot];
      client->fd = fd;
      client->out_fd = -1;
      client->state = CLIENT_READING;
      client->active_ms = now;
      client->busy_only = busy_only;
    }
}

/* Applies every deadline; returns the poll timeout until the next one. */
static int
expire_deadlines (WickControlServer *server, int64_t now)
{
  int64_t next = now + WICK_CONTROL_IDLE_TIMEOUT_MS;
  bool worker_busy;
  char running[WICK_CONTROL_MAX_KEY + 1];
  int64_t running_since;
  pthread_mutex_lock (&server->job_lock);
  worker_busy = server->job_client >= 0;
  snprintf (running, sizeof running, "%s", server->job_command);
  running_since = server->job_started_ms;
  pthread_mutex_unlock (&server->job_lock);
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    {
      Client *c = &server->clients[i];
      char message[256];
      int64_t due = INT64_MAX;
      switch (c->state)
        {
          case CLIENT_READING:
            if (c->filled > 0)
              {
                due = c->frame_start_ms + WICK_CONTROL_FRAME_TIMEOUT_MS;
                if (now >= due)
                  {
                    snprintf (message, sizeof message,
                              "incomplete control frame: %zu of %zu bytes arrived in %d ms; "
                              "closing the connection",
                              c->filled,
                              c->filled < WICK_CONTROL_FRAME_HEADER
                                ? (size_t)WICK_CONTROL_FRAME_HEADER
                                : WICK_CONTROL_FRAME_HEADER + (size_t)c->body_length,
                              WICK_CONTROL_FRAME_TIMEOUT_MS);
                    client_reply_error (c, message, false, true);
                    continue;
                  }
              }
            else
              {
                due = c->active_ms + WICK_CONTROL_IDLE_TIMEOUT_MS;
                if (now >= due)
                  {
                    client_close (c);
                    continue;
                  }
              }
            break;
          case CLIENT_QUEUED:
            due = c->queued_ms + WICK_CONTROL_QUEUE_WAIT_MS;
            if (now >= due)
              {
                if (worker_busy)
                  snprintf (message, sizeof message,
                            "busy: the session has been running \"%s\" for another client for "
                            "%.1f s; try again",
                            running, (double)(now - running_since) / 1000.0);
                else
                  snprintf (message, sizeof message,
                            "busy: other clients' requests are ahead of this one; try again");
                wick_control_request_clear (&c->request);
                c->has_request = false;
                client_reply_error (c, message, true, false);
                continue;
              }
            break;
          case CLIENT_WRITING:
            due = c->write_start_ms + WICK_CONTROL_SEND_TIMEOUT_MS;
            if (now >= due)
              {
                client_close (c);
                continue;
              }
            break;
          default:
            break;
        }
      if (due < next)
        next = due;
    }
  int64_t wait = next - now;
  return wait < 0 ? 0 : wait > 60000 ? 60000 : (int)wait;
}

static void *
server_thread (void *data)
{
  WickControlServer *server = data;
  if (server->c_locale != (locale_t)0)
    uselocale (server->c_locale);
  int timeout = 0;
  for (;;)
    {
      struct pollfd fds[3 + WICK_CONTROL_MAX_CONNECTIONS];
      int map[3 + WICK_CONTROL_MAX_CONNECTIONS];
      nfds_t n = 0;
      fds[n++] = (struct pollfd){ server->wake[0], POLLIN, 0 };
      fds[n++] = (struct pollfd){ server->done[0], POLLIN, 0 };
      fds[n++] = (struct pollfd){ server->listen_fd, POLLIN, 0 };
      /* Round robin: the connection served first moves on every turn. */
      unsigned first = server->next_first++ % WICK_CONTROL_MAX_CONNECTIONS;
      for (int k = 0; k < WICK_CONTROL_MAX_CONNECTIONS; k++)
        {
          int i = (int)((first + (unsigned)k) % WICK_CONTROL_MAX_CONNECTIONS);
          Client *c = &server->clients[i];
          if (c->state == CLIENT_READING || c->state == CLIENT_WRITING)
            {
              map[n] = i;
              fds[n++] = (struct pollfd){ c->fd, c->state == CLIENT_READING ? POLLIN : POLLOUT, 0 };
            }
        }
      if (poll (fds, n, timeout) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents != 0)
        break;
      if (fds[1].revents != 0)
        collect_job (server);
      /* Clients first: a closed connection frees its slot for the next one. */
      for (nfds_t i = 3; i < n; i++)
        {
          Client *c = &server->clients[map[i]];
          if (fds[i].revents == 0 || c->fd != fds[i].fd)
            continue;
          if (c->state == CLIENT_READING)
            client_read (server, c);
          else if (c->state == CLIENT_WRITING)
            {
              bool failed;
              if (client_flush (c, &failed))
                {
                  c->state = CLIENT_READING;
                  c->active_ms = now_ms ();
                  if (c->close_after)
                    client_close (c);
                }
              else if (failed || (fds[i].revents & (POLLERR | POLLHUP)))
                client_close (c);
            }
        }
      if (fds[2].revents & POLLIN)
        server_accept (server);
      start_next_job (server);
      timeout = expire_deadlines (server, now_ms ());
    }
  return NULL;
}

static void
server_free (void *data)
{
  WickControlServer *server = data;
  if (server->wake[1] >= 0)
    {
      char byte = 1;
      while (write (server->wake[1], &byte, 1) < 0 && errno == EINTR)
        ;
      pthread_join (server->thread, NULL);
    }
  if (server->worker_started)
    {
      pthread_mutex_lock (&server->job_lock);
      server->worker_stop = true;
      pthread_cond_signal (&server->job_cond);
      pthread_mutex_unlock (&server->job_lock);
      pthread_join (server->worker, NULL);
      if (server->job_done)
        wick_control_writer_clear (&server->job_reply);
    }
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    client_close (&server->clients[i]);
  for (int i = 0; i < 2; i++)
    if (server->done[i] >= 0)
      close (server->done[i]);
  pthread_mutex_destroy (&server->job_lock);
  pthread_cond_destroy (&server->job_cond);
  if (server->listen_fd >= 0)
    {
      close (server->listen_fd);
      unlink (server->path);
    }
  if (server->wake[0] >= 0)
    close (server->wake[0]);
  if (server->wake[1] >= 0)
    close (server->wake[1]);
  if (server->c_locale != (locale_t)0)
    freelocale (server->c_locale);
  pthread_mutex_destroy (&server->host_lock);
  free (server);
}

static bool
server_listen (WickControlServer *server, WickError *error)
{
  char directory[WICK_CONTROL_MAX_DIRECTORY + 1];
  if (!wick_control_directory (directory, sizeof directory, error))
    return false;
  wick_control_remove_stale_sockets ();
  snprintf (server->path, sizeof server->path, "%s/%ld-%u.sock", directory, (long)getpid (),
            atomic_fetch_add (&socket_counter, 1));
  unlink (server->path); /* a leftover of an earlier process with our pid */
  server->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (server->listen_fd < 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s",
                      "cannot create the control socket", server->path, strerror (errno));
      return false;
    }
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  memcpy (address.sun_path, server->path, strlen (server->path) + 1);
  if (bind (server->listen_fd, (struct sockaddr *)&address, sizeof address) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s",
                      "cannot bind the control socket", server->path, strerror (errno));
      close (server->listen_fd);
      server->listen_fd = -1;
      return false;
    }
  if (chmod (server->path, 0600) != 0 || listen (server->listen_fd, WICK_CONTROL_BACKLOG) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s",
                      "cannot listen on the control socket", server->path, strerror (errno));
      return false;
    }
  return true;
}

static bool
server_start_thread (WickControlServer *server, WickError *error)
{
  if (pipe2 (server->wake, O_CLOEXEC) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno),
                      "cannot create the control wake pipe: %s", strerror (errno));
      server->wake[0] = server->wake[1] = -1;
      return false;
    }
  if (pipe2 (server->done, O_CLOEXEC | O_NONBLOCK) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno),
                      "cannot create the control done pipe: %s", strerror (errno));
      server->done[0] = server->done[1] = -1;
      close (server->wake[0]);
      close (server->wake[1]);
      server->wake[0] = server->wake[1] = -1;
      return false;
    }
  /* The workload's signal handlers must not run on our threads. */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  int status = pthread_create (&server->worker, NULL, worker_thread, server);
  if (status == 0)
    {
      server->worker_started = true;
      status = pthread_create (&server->thread, NULL, server_thread, server);
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (status != 0)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "cannot start the control thread: %s",
                      strerror (status));
      close (server->wake[0]);
      close (server->wake[1]);
      server->wake[0] = server->wake[1] = -1;
      return false;
    }
  return true;
}

bool
wick_session_enable_control (WickSession *session, WickError *error)
{
  WickError local;
  if (error == NULL)
    error = &local;
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "wick_session_enable_control: no session");
      return false;
    }
  if (server_of (session) != NULL)
    return true;
  WickControlServer *server = calloc (1, sizeof *server);
  if (server == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory starting control");
      return false;
    }
  server->session = session;
  server->listen_fd = -1;
  server->wake[0] = server->wake[1] = -1;
  server->done[0] = server->done[1] = -1;
  for (int i = 0; i < WICK_CONTROL_MAX_CONNECTIONS; i++)
    {
      server->clients[i].fd = -1;
      server->clients[i].out_fd = -1;
    }
  server->job_client = -1;
  pthread_mutex_init (&server->host_lock, NULL);
  pthread_mutex_init (&server->job_lock, NULL);
  pthread_cond_init (&server->job_cond, NULL);
  server->c_locale = newlocale (LC_ALL_MASK, "C", (locale_t)0);
  if (!server_listen (server, error) || !server_start_thread (server, error))
    {
      server_free (server);
      return false;
    }
  wick_session_set_slot (session, WICK_SLOT_CONTROL, server, server_free);
  return true;
}

void
wick_session_disable_control (WickSession *session)
{
  if (session == NULL || server_of (session) == NULL)
    return;
  wick_session_set_slot (session, WICK_SLOT_CONTROL, NULL, NULL);
}

bool
wick_control_requested_by_environment (void)
{
  const char *value = getenv ("WICK_CONTROL");
  return value != NULL && strcmp (value, "1") == 0;
}

const char *
wick_session_get_control_socket_path (WickSession *session)
{
  WickControlServer *server = session != NULL ? server_of (session) : NULL;
  return server != NULL ? server->path : NULL;
}

void
wick_session_lock_control (WickSession *session)
{
  WickControlServer *server = session != NULL ? server_of (session) : NULL;
  if (server != NULL)
    pthread_mutex_lock (&server->host_lock);
}

void
wick_session_unlock_control (WickSession *session)
{
  WickControlServer *server = session != NULL ? server_of (session) : NULL;
  if (server != NULL)
    pthread_mutex_unlock (&server->host_lock);
}

void
wick_control_server_lock_host (WickSession *session)
{
  wick_session_lock_control (session);
}

void
wick_control_server_unlock_host (WickSession *session)
{
  wick_session_unlock_control (session);
}
