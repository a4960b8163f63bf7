/* wick-control-server.c — the control socket and its listener thread.
 *
 * One thread per session polls the listening socket, a wake pipe (to stop) and
 * up to WICK_CONTROL_MAX_CLIENTS connections. Each connection is admitted only
 * when SO_PEERCRED says its uid is ours; a refused peer gets one error reply
 * and is closed. Connections carry framed requests (wick-control-message.h);
 * a frame with a bad length gets an error reply and the connection is closed
 * (it cannot be resynchronised), a malformed body gets an error reply and the
 * connection stays usable. Commands run one at a time on this thread. Replies
 * are written with a deadline so that a client that stops reading cannot hold
 * the thread. The workload's threads never wait on this thread.
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

#define WICK_CONTROL_MAX_CLIENTS 16
#define WICK_CONTROL_SEND_TIMEOUT_MS 2000

typedef struct
{
  int fd;
  unsigned char *buffer; /* header then body */
  size_t filled;
  uint32_t body_length; /* 0 until the header is complete */
} Client;

typedef struct
{
  WickSession *session;
  int listen_fd;
  int wake[2];
  pthread_t thread;
  pthread_mutex_t host_lock;
  char path[sizeof ((struct sockaddr_un *)0)->sun_path];
  Client clients[WICK_CONTROL_MAX_CLIENTS];
  locale_t c_locale;
} WickControlServer;

static atomic_uint socket_counter;

static WickControlServer *
server_of (WickSession *session)
{
  return wick_session_get_slot (session, WICK_SLOT_CONTROL);
}

/* Writes all of @data before the deadline, passing @fd_to_send with the first byte. */
static bool
send_all (int fd, const unsigned char *data, size_t length, int fd_to_send)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  size_t sent = 0;
  while (sent < length)
    {
      struct iovec iov = { (void *)(data + sent), length - sent };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
      union
      {
        char buf[CMSG_SPACE (sizeof (int))];
        struct cmsghdr align;
      } control;
      if (fd_to_send >= 0)
        {
          memset (&control, 0, sizeof control);
          msg.msg_control = control.buf;
          msg.msg_controllen = sizeof control.buf;
          struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
          cmsg->cmsg_level = SOL_SOCKET;
          cmsg->cmsg_type = SCM_RIGHTS;
          cmsg->cmsg_len = CMSG_LEN (sizeof (int));
          memcpy (CMSG_DATA (cmsg), &fd_to_send, sizeof (int));
        }
      ssize_t n = sendmsg (fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0)
        {
          sent += (size_t)n;
          fd_to_send = -1;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return false;
      struct timespec now;
      clock_gettime (CLOCK_MONOTONIC, &now);
      long elapsed_ms
        = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (elapsed_ms >= WICK_CONTROL_SEND_TIMEOUT_MS)
        return false;
      struct pollfd pfd = { fd, POLLOUT, 0 };
      poll (&pfd, 1, (int)(WICK_CONTROL_SEND_TIMEOUT_MS - elapsed_ms));
    }
  return true;
}

static bool
send_frame (int fd, const char *body, size_t length, int fd_to_send)
{
  unsigned char *frame = malloc (WICK_CONTROL_FRAME_HEADER + length);
  if (frame == NULL)
    return false;
  wick_control_frame_header ((uint32_t)length, frame);
  memcpy (frame + WICK_CONTROL_FRAME_HEADER, body, length);
  bool ok = send_all (fd, frame, WICK_CONTROL_FRAME_HEADER + length, fd_to_send);
  free (frame);
  return ok;
}

static bool
send_error (int fd, const char *message)
{
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  wick_control_writer_begin_object (&writer, NULL);
  wick_control_writer_int (&writer, "v", WICK_CONTROL_PROTOCOL_VERSION);
  wick_control_writer_bool (&writer, "ok", false);
  wick_control_writer_string (&writer, "error", message);
  wick_control_writer_end_object (&writer);
  bool ok = !writer.overflow && send_frame (fd, writer.data, writer.length, -1);
  wick_control_writer_clear (&writer);
  return ok;
}

static void
client_close (Client *client)
{
  if (client->fd >= 0)
    close (client->fd);
  free (client->buffer);
  memset (client, 0, sizeof *client);
  client->fd = -1;
}

/* Executes one complete body; false when the connection should close. */
static bool
client_handle_body (WickControlServer *server, Client *client)
{
  WickControlRequest request;
  WickError error = { "" };
  const char *body = (const char *)client->buffer + WICK_CONTROL_FRAME_HEADER;
  if (!wick_control_request_parse (&request, body, client->body_length, &error))
    return send_error (client->fd, error.message);

  WickControlWriter reply;
  bool send_ring_fd = false;
  wick_control_writer_init (&reply);
  wick_control_writer_begin_object (&reply, NULL);
  wick_control_writer_int (&reply, "v", WICK_CONTROL_PROTOCOL_VERSION);
  wick_control_execute (server->session, &request, &reply, &send_ring_fd);
  wick_control_writer_end_object (&reply);

  bool ok;
  if (reply.overflow)
    ok = send_error (client->fd, "the reply is larger than the protocol's message limit");
  else
    {
      int ring_fd = -1;
      if (send_ring_fd)
        {
          WickControlSessionInfo info;
          wick_control_session_info (server->session, &info);
          ring_fd = info.ring_fd;
        }
      if (reply.has_pass_fd)
        ring_fd = reply.pass_fd;
      ok = send_frame (client->fd, reply.data, reply.length, ring_fd);
    }
  if (reply.has_pass_fd)
    close (reply.pass_fd);
  wick_control_writer_clear (&reply);
  wick_control_request_clear (&request);
  return ok;
}

/* Reads what is available and handles complete frames; false to close. */
static bool
client_read (WickControlServer *server, Client *client)
{
  for (;;)
    {
      size_t want = client->body_length == 0
                      ? WICK_CONTROL_FRAME_HEADER - client->filled
                      : WICK_CONTROL_FRAME_HEADER + client->body_length - client->filled;
      ssize_t n = recv (client->fd, client->buffer + client->filled, want, MSG_DONTWAIT);
      if (n == 0)
        return false;
      if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      client->filled += (size_t)n;
      if (client->body_length == 0 && client->filled == WICK_CONTROL_FRAME_HEADER)
        {
          WickError error = { "" };
          if (!wick_control_frame_length (client->buffer, &client->body_length, &error))
            {
              send_error (client->fd, error.message);
              return false;
            }
        }
      else if (client->body_length != 0
               && client->filled == WICK_CONTROL_FRAME_HEADER + client->body_length)
        {
          bool keep = client_handle_body (server, client);
          client->filled = 0;
          client->body_length = 0;
          if (!keep)
            return false;
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

static void
server_accept (WickControlServer *server)
{
  int fd = accept4 (server->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return;
  char why[256];
  if (!peer_is_same_user (fd, why, sizeof why))
    {
      send_error (fd, why);
      close (fd);
      return;
    }
  for (int i = 0; i < WICK_CONTROL_MAX_CLIENTS; i++)
    {
      Client *client = &server->clients[i];
      if (client->fd >= 0)
        continue;
      client->buffer = malloc (WICK_CONTROL_FRAME_HEADER + WICK_CONTROL_MAX_MESSAGE);
      if (client->buffer == NULL)
        break;
      client->fd = fd;
      return;
    }
  snprintf (why, sizeof why, "too many control clients: at most %d at once",
            WICK_CONTROL_MAX_CLIENTS);
  send_error (fd, why);
  close (fd);
}

static void *
server_thread (void *data)
{
  WickControlServer *server = data;
  if (server->c_locale != (locale_t)0)
    uselocale (server->c_locale);
  for (;;)
    {
      struct pollfd fds[2 + WICK_CONTROL_MAX_CLIENTS];
      int map[2 + WICK_CONTROL_MAX_CLIENTS];
      nfds_t n = 0;
      fds[n++] = (struct pollfd){ server->wake[0], POLLIN, 0 };
      fds[n++] = (struct pollfd){ server->listen_fd, POLLIN, 0 };
      for (int i = 0; i < WICK_CONTROL_MAX_CLIENTS; i++)
        if (server->clients[i].fd >= 0)
          {
            map[n] = i;
            fds[n++] = (struct pollfd){ server->clients[i].fd, POLLIN, 0 };
          }
      if (poll (fds, n, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents != 0)
        break;
      /* Clients first: a closed connection frees its slot for the next one. */
      for (nfds_t i = 2; i < n; i++)
        if (fds[i].revents != 0 && !client_read (server, &server->clients[map[i]]))
          client_close (&server->clients[map[i]]);
      if (fds[1].revents & POLLIN)
        server_accept (server);
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
  for (int i = 0; i < WICK_CONTROL_MAX_CLIENTS; i++)
    client_close (&server->clients[i]);
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
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s", "cannot create the control socket", server->path,
                      strerror (errno));
      return false;
    }
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  memcpy (address.sun_path, server->path, strlen (server->path) + 1);
  if (bind (server->listen_fd, (struct sockaddr *)&address, sizeof address) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s", "cannot bind the control socket", server->path,
                      strerror (errno));
      close (server->listen_fd);
      server->listen_fd = -1;
      return false;
    }
  if (chmod (server->path, 0600) != 0 || listen (server->listen_fd, 16) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "%s %s: %s", "cannot listen on the control socket", server->path,
                      strerror (errno));
      return false;
    }
  return true;
}

static bool
server_start_thread (WickControlServer *server, WickError *error)
{
  if (pipe2 (server->wake, O_CLOEXEC) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "cannot create the control wake pipe: %s",
                strerror (errno));
      server->wake[0] = server->wake[1] = -1;
      return false;
    }
  /* The workload's signal handlers must not run on our thread. */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  int status = pthread_create (&server->thread, NULL, server_thread, server);
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
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_session_enable_control: no session");
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
  for (int i = 0; i < WICK_CONTROL_MAX_CLIENTS; i++)
    server->clients[i].fd = -1;
  pthread_mutex_init (&server->host_lock, NULL);
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
