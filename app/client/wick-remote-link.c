/* wick-remote-link.c — ssh to a node's `wick-trace serve --stdio` (see the header). */
#include "config.h"

#include "wick-remote-link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-live-client.h"

#define READ_CHUNK (256u << 10)
#define WRITE_TIMEOUT_MS 10000
/* What of ssh's stderr is kept (its last lines) for the error that ends the link */
#define STDERR_TAIL_BYTES 2048
/* waitid's idtype for a pidfd (Linux 5.4; glibc's enum may lack it) */
#define WICK_P_PIDFD 3
/* How long wick-askpass waits for an answer (WICK_ASKPASS_TIMEOUT overrides) */
#define ASKPASS_TIMEOUT_S 120
/* The longest line of ssh's stderr looked at whole (longer ones pass in pieces) */
#define STDERR_LINE_BYTES 4096

/* The askpass program of wick_remote_link_use_askpass (NULL: none) */
static char *askpass_helper;

struct _WickRemoteLink
{
  char *name;
  GPid pid;
  gboolean reaped;
  int exit_status;
  int to_node;   /* ssh's stdin */
  int from_node; /* ssh's stdout */
  /* ssh's stderr when nobody can see it (no terminal): drained as it comes
   * (a node flooding its stderr must not stall ssh), the tail kept */
  int ssh_stderr;
  GString *stderr_tail;
  gboolean interactive;
  /* ssh asks through askpass_helper: its lines on ssh's stderr (with the
   * token, which only it knows) say what it asks and how that ended */
  gboolean askpass;
  char *askpass_missing; /* the helper named but not there: BatchMode, said why */
  char *askpass_token;
  int askpass_timeout_s;
  GString *stderr_line;
  gboolean asking;
  gint64 asking_since;
  char *asked;   /* host-key, passphrase, password, answer, … */
  char *outcome; /* refused, cancelled, timeout N, failed WHY (NULL: answered, or none) */
  gboolean ended_unanswered; /* ssh ended for that: ssh_end_text's sentence says it all */
  int exit_fd; /* a pidfd of ssh: readable once it exited (-1: no pidfd here) */
  WickRemoteParser *parser;
  JsonObject *hello;
  guint64 bytes_received;
  guint8 *chunk;
};

void
wick_remote_target_clear (WickRemoteTarget *target)
{
  g_clear_pointer (&target->user, g_free);
  g_clear_pointer (&target->host, g_free);
  g_clear_pointer (&target->name, g_free);
  target->port = 0;
  target->pid = 0;
}

static gboolean
name_chars_ok (const char *text, gboolean allow_colon)
{
  if (text[0] == '\0' || text[0] == '-')
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '_' && *p != '-' && !(allow_colon && *p == ':'))
      return FALSE;
  return TRUE;
}

gboolean
wick_remote_target_parse (const char *url, WickRemoteTarget *target, GError **error)
{
  memset (target, 0, sizeof *target);
  if (!g_str_has_prefix (url, "ssh://"))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                   "“%s” is not an ssh://[user@]host[:port] address", url);
      return FALSE;
    }
  const char *rest = url + strlen ("ssh://");
  const char *slash = strchr (rest, '/');
  g_autofree char *authority
    = slash != NULL ? g_strndup (rest, (gsize)(slash - rest)) : g_strdup (rest);
  if (slash != NULL && slash[1] != '\0')
    {
      char *end;
      errno = 0;
      gint64 pid = g_ascii_strtoll (slash + 1, &end, 10);
      if (errno != 0 || *end != '\0' || pid <= 0 || pid > G_MAXINT32)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                       "“%s”: “%s” after the host is not a process id", url, slash + 1);
          return FALSE;
        }
      target->pid = pid;
    }
  char *at = strrchr (authority, '@');
  const char *hostport = authority;
  if (at != NULL)
    {
      *at = '\0';
      target->user = g_strdup (authority);
      hostport = at + 1;
      if (!name_chars_ok (target->user, FALSE))
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                       "“%s”: the user name may hold letters, digits, '.', '_' and '-' (not "
                       "first)",
                       url);
          wick_remote_target_clear (target);
          return FALSE;
        }
    }
  g_autofree char *host = NULL;
  const char *port_text = NULL;
  if (hostport[0] == '[')
    {
      const char *close = strchr (hostport, ']');
      if (close == NULL)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                       "“%s”: an IPv6 address needs its closing ']'", url);
          wick_remote_target_clear (target);
          return FALSE;
        }
      host = g_strndup (hostport + 1, (gsize)(close - hostport - 1));
      if (close[1] == ':')
        port_text = close + 2;
      else if (close[1] != '\0')
        host[0] = '-'; /* refused below */
    }
  else
    {
      const char *colon = strchr (hostport, ':');
      host = colon != NULL ? g_strndup (hostport, (gsize)(colon - hostport)) : g_strdup (hostport);
      port_text = colon != NULL ? colon + 1 : NULL;
    }
  if (!name_chars_ok (host, hostport[0] == '['))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                   "“%s”: the host may hold letters, digits, '.', '_' and '-' (not first)", url);
      wick_remote_target_clear (target);
      return FALSE;
    }
  if (port_text != NULL)
    {
      char *end;
      errno = 0;
      gint64 port = g_ascii_strtoll (port_text, &end, 10);
      if (errno != 0 || end == port_text || *end != '\0' || port < 1 || port > 65535)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_NOT_FOUND,
                       "“%s”: the port must be 1 to 65535, not “%s”", url, port_text);
          wick_remote_target_clear (target);
          return FALSE;
        }
      target->port = (int)port;
    }
  target->host = g_steal_pointer (&host);
  GString *name = g_string_new (NULL);
  if (target->user != NULL)
    g_string_append_printf (name, "%s@", target->user);
  g_string_append (name, target->host);
  if (target->port != 0)
    g_string_append_printf (name, ":%d", target->port);
  target->name = g_string_free (name, FALSE);
  return TRUE;
}

/* ssh may ask (host key, passphrase) only when someone can answer. */
static gboolean
is_interactive (void)
{
  if (!isatty (STDIN_FILENO) || !isatty (STDERR_FILENO))
    return FALSE;
  int tty = open ("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty < 0)
    return FALSE;
  close (tty);
  return TRUE;
}

static void
reap (WickRemoteLink *self, int wait_ms)
{
  if (self->reaped || self->pid <= 0)
    return;
  gint64 deadline = g_get_monotonic_time () + (gint64)wait_ms * 1000;
  for (;;)
    {
      int status;
      pid_t r = waitpid (self->pid, &status, WNOHANG);
      if (r == self->pid || (r < 0 && errno != EINTR))
        {
          self->exit_status
            = r == self->pid ? (WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status))
                             : -1;
          /* after the status: wick_remote_link_peek_exit reads it on another thread */
          g_atomic_int_set (&self->reaped, TRUE);
          return;
        }
      if (g_get_monotonic_time () >= deadline)
        return;
      g_usleep (10000);
    }
}

/* One line of ssh's stderr (with its newline, or a piece of a long one):
 * wick-askpass's own lines are noted, the rest passed on as before (the
 * node's own sentences are there too) and kept for the error that may end
 * the link. */
static void
stderr_line (WickRemoteLink *self, const char *line, gsize length)
{
  if (self->askpass_token != NULL)
    {
      g_autofree char *prefix = g_strdup_printf ("wick-askpass %s: ", self->askpass_token);
      gsize prefix_length = strlen (prefix);
      if (length > prefix_length && memcmp (line, prefix, prefix_length) == 0)
        {
          g_autofree char *what = g_strndup (line + prefix_length, length - prefix_length);
          g_strstrip (what);
          for (char *p = what; *p != '\0'; p++)
            if ((guchar)*p < 0x20 || *p == 0x7f)
              *p = '?';
          if (g_str_has_prefix (what, "asking"))
            {
              self->asking = TRUE;
              self->asking_since = g_get_monotonic_time ();
              g_free (self->asked);
              self->asked = g_strdup (what[6] == ' ' ? what + 7 : "answer");
            }
          else
            {
              self->asking = FALSE;
              g_clear_pointer (&self->outcome, g_free);
              if (!g_str_equal (what, "answered"))
                self->outcome = g_steal_pointer (&what);
            }
          return;
        }
    }
  ssize_t passed = write (STDERR_FILENO, line, length);
  (void)passed;
  g_string_append_len (self->stderr_tail, line, (gssize)length);
  if (self->stderr_tail->len > STDERR_TAIL_BYTES)
    g_string_erase (self->stderr_tail, 0, (gssize)(self->stderr_tail->len - STDERR_TAIL_BYTES));
}

static void
drain_stderr (WickRemoteLink *self)
{
  if (self->ssh_stderr < 0)
    return;
  char buffer[4096];
  for (;;)
    {
      ssize_t n = read (self->ssh_stderr, buffer, sizeof buffer);
      if (n > 0)
        {
          g_string_append_len (self->stderr_line, buffer, n);
          char *newline;
          while ((newline = memchr (self->stderr_line->str, '\n', self->stderr_line->len)) != NULL)
            {
              gsize length = (gsize)(newline - self->stderr_line->str) + 1;
              stderr_line (self, self->stderr_line->str, length);
              g_string_erase (self->stderr_line, 0, (gssize)length);
            }
          if (self->stderr_line->len >= STDERR_LINE_BYTES)
            {
              stderr_line (self, self->stderr_line->str, self->stderr_line->len);
              g_string_truncate (self->stderr_line, 0);
            }
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        {
          if (self->stderr_line->len > 0)
            stderr_line (self, self->stderr_line->str, self->stderr_line->len);
          g_string_truncate (self->stderr_line, 0);
          close (self->ssh_stderr);
          self->ssh_stderr = -1;
        }
      return;
    }
}

/* ssh's last words (its stderr's last lines, cleaned), "" when it said nothing. */
static char *
stderr_words (WickRemoteLink *self)
{
  drain_stderr (self);
  if (self->stderr_tail == NULL)
    return g_strdup ("");
  g_autofree char *valid = g_utf8_make_valid (self->stderr_tail->str, self->stderr_tail->len);
  g_strstrip (valid);
  /* the last three lines */
  char *start = valid + strlen (valid);
  for (int lines = 0; start > valid && lines < 3; start--)
    if (start[-1] == '\n' && ++lines == 3)
      break;
  GString *words = g_string_new (NULL);
  for (const char *p = start; *p != '\0'; p++)
    if (*p != '\r')
      g_string_append_c (words,
                         *p == '\n' ? ' ' : ((guchar)*p < 0x20 || *p == 0x7f) ? '?' : *p);
  g_strstrip (words->str);
  return g_string_free (words, FALSE);
}

/* The prompts ssh would have shown, had it a terminal to show them on. */
static gboolean
needs_an_answer (const char *words)
{
  static const char *const signs[] = { "Host key verification failed",
                                       "host key is known",
                                       "REMOTE HOST IDENTIFICATION HAS CHANGED",
                                       "Permission denied",
                                       "passphrase",
                                       "password",
                                       NULL };
  for (guint i = 0; signs[i] != NULL; i++)
    if (strstr (words, signs[i]) != NULL)
      return TRUE;
  return FALSE;
}

/* Why ssh ended after asking through wick-askpass (NULL: it did not ask, or
 * was answered). */
static char *
askpass_end_text (WickRemoteLink *self, const char *words)
{
  if (self->outcome == NULL)
    return NULL;
  const char *host = self->name + strlen ("ssh://");
  const char *asked = self->asked != NULL ? self->asked : "answer";
  g_autofree char *said
    = words[0] != '\0' ? g_strdup_printf (" (ssh: “%s”)", words) : g_strdup ("");
  if (g_str_equal (self->outcome, "refused"))
    return g_strdup_printf ("ssh did not connect to %s: you did not accept its host key%s", host,
                            said);
  if (g_str_equal (self->outcome, "cancelled"))
    return g_strdup_printf ("ssh could not log in to %s: its question for a %s was cancelled%s",
                            host, asked, said);
  if (g_str_has_prefix (self->outcome, "timeout "))
    return g_strdup_printf ("ssh could not log in to %s: its question for a %s had no answer "
                            "within %s s%s",
                            host, asked, self->outcome + strlen ("timeout "), said);
  if (g_str_has_prefix (self->outcome, "failed "))
    return g_strdup_printf ("ssh could not log in to %s: Wick could not ask for a %s (%s)%s", host,
                            asked, self->outcome + strlen ("failed "), said);
  return NULL;
}

static char *
ssh_end_text (WickRemoteLink *self)
{
  reap (self, 2000);
  if (!self->reaped)
    return g_strdup ("ssh is still running");
  if (self->exit_status == 255 && !self->interactive)
    {
      g_autofree char *words = stderr_words (self);
      const char *host = self->name + strlen ("ssh://");
      char *asked = askpass_end_text (self, words);
      self->ended_unanswered = asked != NULL;
      if (asked != NULL)
        return asked;
      if (needs_an_answer (words) && self->askpass)
        return g_strdup_printf ("ssh could not log in to %s: “%s”", host, words);
      if (needs_an_answer (words) && self->askpass_missing != NULL)
        return g_strdup_printf (
          "ssh could not log in: “%s”. Wick's dialog for ssh's questions (%s) is not installed, "
          "so ssh runs without a way to ask you to accept a host key or type a passphrase: run "
          "“ssh %s” once in a terminal (and ssh-add your key to the agent), then try again",
          words, self->askpass_missing, host);
      if (needs_an_answer (words))
        return g_strdup_printf (
          "ssh could not log in: “%s”. It runs here without a terminal (BatchMode), so it "
          "cannot ask you to accept a host key or type a passphrase: run “ssh %s” once in a "
          "terminal (and ssh-add your key to the agent), then try again",
          words, host);
      return g_strdup_printf ("ssh exited with status 255: it could not connect or "
                              "authenticate, or the connection dropped (%s)",
                              words[0] != '\0' ? words : "it said nothing");
    }
  if (self->exit_status == 255)
    return g_strdup ("ssh exited with status 255: it could not connect or authenticate, or the "
                     "connection dropped (its message is above)");
  if (self->exit_status > 128)
    return g_strdup_printf ("ssh was killed by signal %d", self->exit_status - 128);
  return g_strdup_printf ("the remote command exited with status %d", self->exit_status);
}

void
wick_remote_link_close (WickRemoteLink *self)
{
  if (self == NULL)
    return;
  if (self->to_node >= 0)
    close (self->to_node);
  self->to_node = -1;
  /* The node exits when its stdin closes; ssh then exits too. */
  reap (self, 3000);
  if (!self->reaped && self->pid > 0)
    {
      kill (self->pid, SIGTERM);
      reap (self, 1000);
      if (!self->reaped)
        {
          kill (self->pid, SIGKILL);
          reap (self, 5000);
        }
    }
  if (self->from_node >= 0)
    close (self->from_node);
  if (self->ssh_stderr >= 0)
    close (self->ssh_stderr);
  if (self->exit_fd >= 0)
    close (self->exit_fd);
  if (self->stderr_tail != NULL)
    g_string_free (self->stderr_tail, TRUE);
  if (self->stderr_line != NULL)
    g_string_free (self->stderr_line, TRUE);
  g_free (self->askpass_missing);
  g_free (self->askpass_token);
  g_free (self->asked);
  g_free (self->outcome);
  if (self->pid > 0)
    g_spawn_close_pid (self->pid);
  wick_remote_parser_free (self->parser);
  g_clear_pointer (&self->hello, json_object_unref);
  g_free (self->chunk);
  g_free (self->name);
  g_free (self);
}

const char *
wick_remote_link_get_name (WickRemoteLink *self)
{
  return self->name;
}

int
wick_remote_link_get_pid (WickRemoteLink *self)
{
  return (int)self->pid;
}

guint64
wick_remote_link_get_bytes_received (WickRemoteLink *self)
{
  return self->bytes_received;
}

int
wick_remote_link_get_fd (WickRemoteLink *self)
{
  return self->from_node;
}

int
wick_remote_link_get_exit_fd (WickRemoteLink *self)
{
  return self->exit_fd;
}

/* "" for status 0; @status as reap() keeps it (128 + N: signal N) */
static char *
describe_exit (int status)
{
  if (status == 0)
    return g_strdup ("");
  if (status == 255)
    return g_strdup ("ssh exited with status 255 (the connection dropped, or it could not "
                     "connect)");
  if (status > 128)
    return g_strdup_printf ("ssh was killed by signal %d", status - 128);
  if (status < 0)
    return g_strdup ("ssh exited");
  return g_strdup_printf ("the remote command exited with status %d", status);
}

char *
wick_remote_link_peek_exit (WickRemoteLink *self)
{
  siginfo_t info;
  memset (&info, 0, sizeof info);
  if (g_atomic_int_get (&self->reaped))
    return describe_exit (self->exit_status);
  /* by its pidfd where there is one: a pid reaped meanwhile may be reused */
  int r = self->exit_fd >= 0
            ? waitid ((idtype_t)WICK_P_PIDFD, (id_t)self->exit_fd, &info, WEXITED | WNOHANG | WNOWAIT)
            : waitid (P_PID, (id_t)self->pid, &info, WEXITED | WNOHANG | WNOWAIT);
  if (r != 0)
    {
      /* reaped meanwhile, by the link's own wait, which notes the status
       * just after: a moment for it (else the reason would be lost) */
      for (int i = 0; i < 200 && !g_atomic_int_get (&self->reaped); i++)
        g_usleep (500);
      return g_atomic_int_get (&self->reaped) ? describe_exit (self->exit_status)
                                              : g_strdup ("ssh exited");
    }
  if (info.si_pid == 0)
    return NULL; /* still running */
  return describe_exit (info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status);
}

static gboolean
write_all (WickRemoteLink *self, const guint8 *data, gsize length, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)WRITE_TIMEOUT_MS * 1000;
  while (length > 0)
    {
      if (self->to_node < 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                       "the connection to %s is closed", self->name);
          return FALSE;
        }
      ssize_t n = write (self->to_node, data, length);
      if (n > 0)
        {
          data += n;
          length -= (gsize)n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno != EAGAIN)
        {
          g_autofree char *why = ssh_end_text (self);
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                       "cannot write to %s: %s (%s)", self->name, g_strerror (errno), why);
          return FALSE;
        }
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      if (left <= 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                       "%s took no request for %d s", self->name, WRITE_TIMEOUT_MS / 1000);
          return FALSE;
        }
      struct pollfd pfd = { self->to_node, POLLOUT, 0 };
      poll (&pfd, 1, (int)MIN (left, 1000));
    }
  return TRUE;
}

static gboolean
wick_remote_link_send_json (WickRemoteLink *self, guint type, JsonNode *node, GError **error)
{
  g_autoptr (GBytes) frame = wick_remote_frame_encode_json (type, node);
  gsize length;
  const guint8 *data = g_bytes_get_data (frame, &length);
  return write_all (self, data, length, error);
}

gboolean
wick_remote_link_send_object (WickRemoteLink *self, guint type, JsonObject *object, GError **error)
{
  g_autoptr (JsonNode) node = json_node_init_object (json_node_alloc (), object);
  return wick_remote_link_send_json (self, type, node, error);
}

gboolean
wick_remote_link_next (WickRemoteLink *self, WickRemoteFrame *frame, int timeout_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  for (;;)
    {
      if (wick_remote_parser_next (self->parser, frame, error))
        return TRUE;
      if (error != NULL && *error != NULL)
        return FALSE;
      ssize_t n = read (self->from_node, self->chunk, READ_CHUNK);
      if (n > 0)
        {
          self->bytes_received += (guint64)n;
          if (!wick_remote_parser_feed (self->parser, self->chunk, (gsize)n, error))
            return FALSE;
          continue;
        }
      if (n == 0)
        {
          g_autofree char *why = ssh_end_text (self);
          gsize pending = wick_remote_parser_pending (self->parser);
          if (self->ended_unanswered)
            /* ssh's question went unanswered: that sentence is the story */
            g_set_error_literal (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT, why);
          else
            g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT,
                         "the connection to %s closed%s: %s", self->name,
                         pending > 0 ? " inside a frame" : "", why);
          return FALSE;
        }
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT, "cannot read from %s: %s",
                       self->name, g_strerror (errno));
          return FALSE;
        }
      if (self->asking)
        {
          /* The user is answering ssh (a dialog with a deadline of its own):
           * the wait starts again after, at most that deadline later. */
          gint64 now = g_get_monotonic_time ();
          gint64 bound = self->asking_since + (gint64)(self->askpass_timeout_s + 5) * G_USEC_PER_SEC;
          deadline = MAX (deadline, MIN (now, bound) + (gint64)timeout_ms * 1000);
        }
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      if (left <= 0)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_TIMEOUT,
                       "%s sent nothing for %d s (the link or the node stopped)", self->name,
                       MAX ((timeout_ms + 999) / 1000, 1));
          return FALSE;
        }
      struct pollfd pfd[2] = { { self->from_node, POLLIN, 0 }, { self->ssh_stderr, POLLIN, 0 } };
      poll (pfd, self->ssh_stderr >= 0 ? 2 : 1, (int)MIN (left, 1000));
      if (self->ssh_stderr >= 0 && pfd[1].revents != 0)
        drain_stderr (self);
    }
}

JsonObject *
wick_remote_link_expect_object (WickRemoteLink *self, guint expect, int timeout_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  for (;;)
    {
      WickRemoteFrame frame;
      int left = (int)MAX ((deadline - g_get_monotonic_time ()) / 1000, 1);
      if (!wick_remote_link_next (self, &frame, left, error))
        return NULL;
      if (frame.type == WICK_REMOTE_STATS && expect != WICK_REMOTE_STATS)
        {
          /* heartbeats of an attach in progress */
          wick_remote_frame_clear (&frame);
          continue;
        }
      if (frame.type != expect && frame.type != WICK_REMOTE_ERROR)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "%s sent a %s frame where a %s frame was expected", self->name,
                       wick_remote_type_name (frame.type), wick_remote_type_name (expect));
          wick_remote_frame_clear (&frame);
          return NULL;
        }
      g_autoptr (JsonNode) node
        = wick_remote_parse_json (frame.payload, wick_remote_type_name (frame.type), error);
      guint type = frame.type;
      wick_remote_frame_clear (&frame);
      if (node == NULL)
        return NULL;
      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "%s sent a %s frame that is not a JSON object", self->name,
                       wick_remote_type_name (type));
          return NULL;
        }
      JsonObject *object = json_node_get_object (node);
      if (type == WICK_REMOTE_ERROR)
        {
          JsonNode *message = json_object_get_member (object, "error");
          const char *text = message != NULL && json_node_get_value_type (message) == G_TYPE_STRING
                               ? json_node_get_string (message)
                               : "(no sentence)";
          g_autofree char *shown = g_utf8_make_valid (text, MIN (strlen (text), 1000));
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_REFUSED, "%s: %s", self->name,
                       shown);
          return NULL;
        }
      return json_object_ref (object);
    }
}

void
wick_remote_link_use_askpass (const char *helper)
{
  g_free (askpass_helper);
  askpass_helper = g_strdup (helper);
}

/* ssh without a controlling terminal: it cannot open /dev/tty, so it asks
 * only through SSH_ASKPASS (async-signal-safe: between fork and exec) */
static void
ssh_child_setup (gpointer user_data)
{
  setsid ();
}

WickRemoteLink *
wick_remote_link_open (const WickRemoteTarget *target, const char *remote_command, GError **error)
{
  /* A write to an ssh that died must be an error, not the end of the
   * process: SIGPIPE is ignored unless the program handles it already. */
  struct sigaction old;
  if (sigaction (SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
    signal (SIGPIPE, SIG_IGN);
  gboolean askpass = askpass_helper != NULL
                     && g_file_test (askpass_helper, G_FILE_TEST_IS_EXECUTABLE);
  gboolean interactive = askpass_helper == NULL && is_interactive ();
  const char *ssh = g_getenv ("WICK_SSH");
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (ssh != NULL && ssh[0] != '\0' ? ssh : "ssh"));
  g_ptr_array_add (argv, g_strdup ("-T")); /* no terminal on the node: binary stdio */
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("ServerAliveInterval=5"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("ServerAliveCountMax=3"));
  if (!interactive && !askpass)
    {
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup ("BatchMode=yes"));
    }
  if (!interactive)
    {
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup ("ConnectTimeout=20"));
    }
  if (target->port != 0)
    {
      g_ptr_array_add (argv, g_strdup ("-p"));
      g_ptr_array_add (argv, g_strdup_printf ("%d", target->port));
    }
  if (target->user != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("-l"));
      g_ptr_array_add (argv, g_strdup (target->user));
    }
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup (target->host));
  /* ssh hands the node's shell one command line: the path is quoted. */
  g_autofree char *quoted = g_shell_quote (remote_command != NULL ? remote_command : "wick-trace");
  g_ptr_array_add (argv, g_strdup_printf ("%s serve --stdio", quoted));
  g_ptr_array_add (argv, NULL);

  WickRemoteLink *self = g_new0 (WickRemoteLink, 1);
  self->name = g_strdup_printf ("ssh://%s", target->name);
  self->to_node = self->from_node = self->ssh_stderr = self->exit_fd = -1;
  self->interactive = interactive;
  self->askpass = askpass;
  self->askpass_missing = askpass_helper != NULL && !askpass ? g_strdup (askpass_helper) : NULL;
  self->stderr_line = g_string_new (NULL);
  self->parser = wick_remote_parser_new ();
  self->chunk = g_malloc (READ_CHUNK);
  g_auto (GStrv) envp = NULL;
  if (askpass)
    {
      self->askpass_timeout_s = ASKPASS_TIMEOUT_S;
      const char *timeout = g_getenv ("WICK_ASKPASS_TIMEOUT");
      if (timeout != NULL)
        {
          char *end;
          gint64 seconds = g_ascii_strtoll (timeout, &end, 10);
          if (end != timeout && *end == '\0' && seconds >= 1 && seconds <= 3600)
            self->askpass_timeout_s = (int)seconds;
        }
      self->askpass_token = g_strdup_printf ("%08x%08x%08x%08x", g_random_int (), g_random_int (),
                                             g_random_int (), g_random_int ());
      g_autofree char *seconds = g_strdup_printf ("%d", self->askpass_timeout_s);
      envp = g_get_environ ();
      envp = g_environ_setenv (envp, "SSH_ASKPASS", askpass_helper, TRUE);
      envp = g_environ_setenv (envp, "SSH_ASKPASS_REQUIRE", "force", TRUE);
      envp = g_environ_setenv (envp, "WICK_ASKPASS_TOKEN", self->askpass_token, TRUE);
      envp = g_environ_setenv (envp, "WICK_ASKPASS_TIMEOUT", seconds, TRUE);
    }
  g_autoptr (GError) spawn_error = NULL;
  if (!g_spawn_async_with_pipes (NULL, (char **)argv->pdata, envp,
                                 G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
                                 askpass ? ssh_child_setup : NULL, NULL, &self->pid, &self->to_node, &self->from_node,
                                 interactive ? NULL : &self->ssh_stderr, &spawn_error))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_CONNECT, "cannot run %s for %s: %s",
                   (const char *)argv->pdata[0], self->name, spawn_error->message);
      self->pid = 0;
      self->ssh_stderr = -1;
      wick_remote_link_close (self);
      return NULL;
    }
#ifdef SYS_pidfd_open
  /* Not reaping: the link's waitpid stays the one that does. */
  self->exit_fd = (int)syscall (SYS_pidfd_open, self->pid, 0);
  if (self->exit_fd >= 0)
    fcntl (self->exit_fd, F_SETFD, FD_CLOEXEC);
#endif
  if (self->ssh_stderr >= 0)
    {
      self->stderr_tail = g_string_new (NULL);
      fcntl (self->ssh_stderr, F_SETFL, fcntl (self->ssh_stderr, F_GETFL) | O_NONBLOCK);
    }
  fcntl (self->to_node, F_SETFL, fcntl (self->to_node, F_GETFL) | O_NONBLOCK);
  fcntl (self->from_node, F_SETFL, fcntl (self->from_node, F_GETFL) | O_NONBLOCK);

  g_autoptr (JsonObject) hello = json_object_new ();
  json_object_set_int_member (hello, "v", WICK_REMOTE_VERSION);
  json_object_set_string_member (hello, "client", "wick-trace " WICK_VERSION);
  if (!wick_remote_link_send_object (self, WICK_REMOTE_HELLO, hello, error))
    {
      wick_remote_link_close (self);
      return NULL;
    }
  self->hello = wick_remote_link_expect_object (
    self, WICK_REMOTE_HELLO,
    interactive ? WICK_REMOTE_HELLO_INTERACTIVE_TIMEOUT_MS : WICK_REMOTE_HELLO_TIMEOUT_MS, error);
  if (self->hello == NULL)
    {
      wick_remote_link_close (self);
      return NULL;
    }
  JsonNode *version = json_object_get_member (self->hello, "v");
  if (version == NULL || json_node_get_value_type (version) != G_TYPE_INT64
      || json_node_get_int (version) != WICK_REMOTE_VERSION)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "%s speaks another version of the remote protocol (this wick-trace speaks %d)",
                   self->name, WICK_REMOTE_VERSION);
      wick_remote_link_close (self);
      return NULL;
    }
  return self;
}
