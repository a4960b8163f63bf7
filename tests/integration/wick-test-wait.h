/* wick-test-wait.h — waiting on conditions with deadlines, for the integration
 * tests (real processes, real sockets, a loaded machine, sanitizer builds).
 *
 * No test here decides anything after a fixed sleep: it waits until the
 * condition that matters holds (a process exited, a socket's peer read what
 * was sent, a file grew, a record arrived), polling it with short, growing
 * pauses, and fails with a sentence naming what did not happen once a generous
 * deadline has passed. A deadline costs nothing when things work; it only
 * bounds how long a broken run takes to say so.
 */
#pragma once

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#ifndef SIOCOUTQ
#include <linux/sockios.h>
#endif

/* A child dies with the test, even when an assertion aborts it (a
 * GSpawnChildSetupFunc; in a forked child, call it first). */
static inline void
wick_test_die_with_parent (gpointer user_data)
{
  (void)user_data;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

typedef struct
{
  gint64 start_us;
  gint64 end_us;
  gulong pause_us;
} WickTestDeadline;

static inline WickTestDeadline
wick_test_deadline (double seconds)
{
  gint64 now = g_get_monotonic_time ();
  WickTestDeadline deadline = { now, now + (gint64)(seconds * G_USEC_PER_SEC), 500 };
  return deadline;
}

static inline double
wick_test_deadline_elapsed (const WickTestDeadline *deadline)
{
  return (double)(g_get_monotonic_time () - deadline->start_us) / G_USEC_PER_SEC;
}

static inline gboolean
wick_test_deadline_passed (const WickTestDeadline *deadline)
{
  return g_get_monotonic_time () >= deadline->end_us;
}

/* Pauses before the next check (0.5 ms, doubling up to 20 ms); FALSE, without
 * pausing, once the deadline has passed. */
static inline gboolean
wick_test_deadline_pause (WickTestDeadline *deadline)
{
  gint64 now = g_get_monotonic_time ();
  if (now >= deadline->end_us)
    return FALSE;
  gint64 left = deadline->end_us - now;
  g_usleep ((gulong)MIN ((gint64)deadline->pause_us, left));
  deadline->pause_us = MIN (deadline->pause_us * 2, 20000);
  return TRUE;
}

/* Fails the test (as g_assert does, at the caller's line) with the sentence
 * made from the format and how long was waited. */
#define wick_test_fail_waited(deadline, ...)                                                       \
  G_STMT_START                                                                                     \
  {                                                                                                \
    g_autofree char *wick_test_what_ = g_strdup_printf (__VA_ARGS__);                              \
    g_autofree char *wick_test_message_ = g_strdup_printf ("%s (waited %.1f s)", wick_test_what_,  \
                                                           wick_test_deadline_elapsed (deadline)); \
    g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, wick_test_message_);         \
  }                                                                                                \
  G_STMT_END

/* Waits until @condition (an expression, evaluated again at every check) is
 * true, for at most @seconds; else fails with the printf-style sentence that
 * follows, which should say what did not happen (its arguments are evaluated
 * at the failure, so they can show the state then). */
#define WICK_TEST_WAIT_UNTIL(condition, seconds, ...)                                              \
  G_STMT_START                                                                                     \
  {                                                                                                \
    WickTestDeadline wick_test_deadline_ = wick_test_deadline (seconds);                           \
    while (!(condition))                                                                           \
      if (!wick_test_deadline_pause (&wick_test_deadline_))                                        \
        {                                                                                          \
          wick_test_fail_waited (&wick_test_deadline_, __VA_ARGS__);                               \
          break;                                                                                   \
        }                                                                                          \
  }                                                                                                \
  G_STMT_END

/* Whether child @pid has exited, without reaping it (WNOWAIT): a later
 * waitpid still gets its status. */
static inline gboolean
wick_test_child_exited (GPid pid)
{
  siginfo_t info = { 0 };
  if (waitid (P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD; /* already reaped */
  return info.si_pid == pid;
}

/* Reaps child @pid once it exits, failing when it is still running after
 * @seconds (@what names it: "wick-demo", "the writer"). Returns its wait
 * status. */
#define wick_test_wait_child(pid, seconds, what)                                                   \
  wick_test_wait_child_at ((pid), (seconds), (what), __FILE__, __LINE__, G_STRFUNC)

static inline int
wick_test_wait_child_at (GPid pid, double seconds, const char *what, const char *file, int line,
                         const char *func)
{
  WickTestDeadline deadline = wick_test_deadline (seconds);
  int status = 0;
  for (;;)
    {
      pid_t done = waitpid (pid, &status, WNOHANG);
      if (done == pid)
        return status;
      if (done < 0 && errno != EINTR)
        {
          g_autofree char *message
            = g_strdup_printf ("waiting for %s (pid %d): %s", what, (int)pid, g_strerror (errno));
          g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
          return -1;
        }
      if (!wick_test_deadline_pause (&deadline))
        {
          g_autofree char *message
            = g_strdup_printf ("%s (pid %d) did not exit within %g s", what, (int)pid, seconds);
          g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
          return -1;
        }
    }
}

/* /proc/PID/@entry of @pid, or of this process when @pid is 0. */
static inline char *
wick_test_proc_path (GPid pid, const char *entry)
{
  return pid == 0 ? g_strdup_printf ("/proc/self/%s", entry)
                  : g_strdup_printf ("/proc/%d/%s", (int)pid, entry);
}

/* The number of open descriptors of process @pid (0: this one) whose
 * /proc/PID/fd link starts with @prefix ("socket:", "pipe:", "/memfd:"), or
 * all of them when @prefix is NULL. */
static inline guint
wick_test_count_fds (GPid pid, const char *prefix)
{
  g_autofree char *path = wick_test_proc_path (pid, "fd");
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  if (dir == NULL)
    return 0;
  guint n = 0;
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (prefix == NULL)
        {
          n++;
          continue;
        }
      g_autofree char *entry = g_build_filename (path, name, NULL);
      g_autofree char *target = g_file_read_link (entry, NULL);
      n += target != NULL && g_str_has_prefix (target, prefix);
    }
  return n;
}

/* Whether /proc/PID/maps of @pid (0: this process) has a line containing
 * @needle (e.g. "/memfd:wick-ring": the ring is mapped). */
static inline gboolean
wick_test_maps_contain (GPid pid, const char *needle)
{
  g_autofree char *path = wick_test_proc_path (pid, "maps");
  g_autofree char *maps = NULL;
  return g_file_get_contents (path, &maps, NULL, NULL) && strstr (maps, needle) != NULL;
}

/* Bytes sent on the Unix stream socket @fd that its peer has not read yet
 * (SIOCOUTQ): 0 once the other end has taken everything. */
static inline int
wick_test_socket_unread_by_peer (int fd)
{
  int bytes = -1;
  if (ioctl (fd, SIOCOUTQ, &bytes) != 0)
    return -1;
  return bytes;
}

/* Bytes waiting to be read on @fd (FIONREAD). */
static inline int
wick_test_socket_readable (int fd)
{
  int bytes = -1;
  if (ioctl (fd, FIONREAD, &bytes) != 0)
    return -1;
  return bytes;
}

/* Reads one line (without its newline) from the pipe or socket @fd, waiting at
 * most @seconds; fails naming @what when it ends or stays silent. */
#define wick_test_read_line(fd, seconds, what)                                                     \
  wick_test_read_line_at ((fd), (seconds), (what), __FILE__, __LINE__, G_STRFUNC)

static inline char *
wick_test_read_line_at (int fd, double seconds, const char *what, const char *file, int line,
                        const char *func)
{
  WickTestDeadline deadline = wick_test_deadline (seconds);
  GString *text = g_string_new (NULL);
  for (;;)
    {
      gint64 left_ms = (deadline.end_us - g_get_monotonic_time ()) / 1000;
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      int ready = left_ms > 0 ? poll (&pfd, 1, (int)MIN (left_ms, G_MAXINT)) : 0;
      if (ready < 0 && errno == EINTR)
        continue;
      char byte;
      ssize_t n = ready > 0 ? read (fd, &byte, 1) : 0;
      if (n == 1 && byte == '\n')
        return g_string_free (text, FALSE);
      if (n == 1)
        {
          g_string_append_c (text, byte);
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      g_autofree char *message
        = ready > 0 ? g_strdup_printf ("%s ended (%s) before a whole line; it had said \"%s\"",
                                       what, n < 0 ? g_strerror (errno) : "end of file", text->str)
                    : g_strdup_printf ("%s said no whole line within %g s; it had said \"%s\"",
                                       what, seconds, text->str);
      g_string_free (text, TRUE);
      g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
      return NULL;
    }
}
