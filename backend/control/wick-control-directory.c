/* wick-control-directory.c — the per-user socket directory and stale sockets.
 *
 * $XDG_RUNTIME_DIR/wick/ when XDG_RUNTIME_DIR is set and absolute, otherwise
 * <TMPDIR or /tmp>/wick-<uid>/. The directory is created 0700; an existing one
 * is accepted only when it is a real directory (not a symlink) owned by us with
 * no permission for group or others, so another user cannot plant or read
 * sockets. Socket names are "<pid>-<n>.sock"; a socket is stale when its pid
 * is gone or when nothing listens on it (/proc/net/unix; without it, a
 * non-blocking connect that is refused). Deciding never connects to a live
 * listener and never waits on another process (docs/protocol.md).
 */
#include "config.h"

#include "wick-control-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/wick-error-private.h"

static bool
check_directory (const char *path, WickError *error)
{
  struct stat st;
  if (lstat (path, &st) != 0)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "control directory %s: %s", path,
                      strerror (errno));
      return false;
    }
  if (!S_ISDIR (st.st_mode))
    {
      wick_set_error (error, WICK_ERROR_PERMISSION,
                      "control directory %s is not a directory (a symlink or file is refused)",
                      path);
      return false;
    }
  if (st.st_uid != geteuid ())
    {
      wick_set_error (error, WICK_ERROR_PERMISSION,
                      "control directory %s is owned by uid %u, not by this user (uid %u)", path,
                      (unsigned)st.st_uid, (unsigned)geteuid ());
      return false;
    }
  if ((st.st_mode & 077) != 0)
    {
      wick_set_error (error, WICK_ERROR_PERMISSION,
                      "control directory %s has mode %04o; it must be 0700", path,
                      (unsigned)(st.st_mode & 07777));
      return false;
    }
  return true;
}

static bool
base_directory (char *out, size_t out_size, WickError *error)
{
  const char *runtime = getenv ("XDG_RUNTIME_DIR");
  int n;
  if (runtime != NULL && runtime[0] == '/')
    n = snprintf (out, out_size, "%s/wick", runtime);
  else
    {
      const char *tmp = getenv ("TMPDIR");
      if (tmp == NULL || tmp[0] != '/')
        tmp = "/tmp";
      n = snprintf (out, out_size, "%s/wick-%u", tmp, (unsigned)geteuid ());
    }
  if (n < 0 || (size_t)n >= out_size || (size_t)n > WICK_CONTROL_MAX_DIRECTORY)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "control directory path is longer than %d bytes", WICK_CONTROL_MAX_DIRECTORY);
      return false;
    }
  return true;
}

bool
wick_control_directory (char *out, size_t out_size, WickError *error)
{
  WickError local;
  if (error == NULL)
    error = &local;
  if (!base_directory (out, out_size, error))
    return false;
  if (mkdir (out, 0700) != 0 && errno != EEXIST)
    {
      wick_set_error (error, wick_error_code_from_errno (errno),
                      "cannot create control directory %s: %s", out, strerror (errno));
      return false;
    }
  return check_directory (out, error);
}

static bool
wick_control_parse_socket_name (const char *name, pid_t *pid)
{
  char *end;
  errno = 0;
  long value = strtol (name, &end, 10);
  if (errno != 0 || end == name || value <= 0 || *end != '-')
    return false;
  const char *suffix = strrchr (end, '.');
  if (suffix == NULL || strcmp (suffix, ".sock") != 0)
    return false;
  *pid = (pid_t)value;
  return true;
}

/* The listening Unix sockets whose path starts with @prefix, read from
 * /proc/net/unix (a listener has __SO_ACCEPTCON, 0x10000, in its flags). This
 * asks the kernel instead of the peer: connecting to a stopped process would
 * leave a connection queued on its listener, and a full queue makes the next
 * blocking connect wait for as long as the process stays stopped. NULL when
 * /proc/net/unix cannot be read; otherwise a NUL-separated list ending in an
 * empty string. */
static char *
read_listeners (const char *prefix)
{
  FILE *file = fopen ("/proc/net/unix", "re");
  if (file == NULL)
    return NULL;
  size_t prefix_length = strlen (prefix);
  size_t used = 0, capacity = 256;
  char *list = malloc (capacity);
  char *line = NULL;
  size_t line_size = 0;
  ssize_t n;
  bool ok = list != NULL;
  while (ok && (n = getline (&line, &line_size, file)) > 0)
    {
      unsigned long flags;
      int path_at = -1;
      if (line[n - 1] == '\n')
        line[--n] = '\0';
      if (sscanf (line, "%*s %*s %*s %lx %*s %*s %*s %n", &flags, &path_at) < 1 || path_at < 0)
        continue;
      const char *path = line + path_at;
      if ((flags & 0x10000) == 0 || strncmp (path, prefix, prefix_length) != 0)
        continue;
      size_t length = strlen (path) + 1;
      if (used + length + 1 > capacity)
        {
          while (used + length + 1 > capacity)
            capacity *= 2;
          char *grown = realloc (list, capacity);
          if (grown == NULL)
            {
              ok = false;
              break;
            }
          list = grown;
        }
      memcpy (list + used, path, length);
      used += length;
    }
  free (line);
  fclose (file);
  if (!ok)
    {
      free (list);
      return NULL;
    }
  list[used] = '\0';
  return list;
}

static bool
listed (const char *listeners, const char *path)
{
  for (const char *p = listeners; *p != '\0'; p += strlen (p) + 1)
    if (strcmp (p, path) == 0)
      return true;
  return false;
}

/* Without /proc/net/unix: a non-blocking connect, closed at once. Refused
 * means nobody listens; a full queue (EAGAIN) or a queued connection means
 * somebody does. Never waits. */
static bool
refuses_connection (const char *path)
{
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return false;
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof address.sun_path)
    {
      close (fd);
      return false;
    }
  strcpy (address.sun_path, path);
  bool refused = connect (fd, (struct sockaddr *)&address, sizeof address) != 0
                 && (errno == ECONNREFUSED || errno == ENOENT);
  close (fd);
  return refused;
}

/* A socket file bound a moment ago may not be listening yet. */
static bool
just_created (const char *path)
{
  struct stat st;
  struct timespec now;
  if (lstat (path, &st) != 0 || clock_gettime (CLOCK_REALTIME, &now) != 0)
    return false;
  return now.tv_sec - st.st_mtim.tv_sec < 2;
}

static bool
socket_is_stale (const char *path, pid_t pid, const char *listeners)
{
  if (kill (pid, 0) != 0 && errno == ESRCH)
    return true;
  bool no_listener = listeners != NULL ? !listed (listeners, path) : refuses_connection (path);
  return no_listener && !just_created (path);
}

unsigned
wick_control_remove_stale_sockets (void)
{
  char directory[WICK_CONTROL_MAX_DIRECTORY + 1];
  WickError error;
  if (!wick_control_directory (directory, sizeof directory, &error))
    return 0;
  DIR *dir = opendir (directory);
  if (dir == NULL)
    return 0;
  char prefix[WICK_CONTROL_MAX_DIRECTORY + 2];
  snprintf (prefix, sizeof prefix, "%s/", directory);
  char *listeners = read_listeners (prefix);
  unsigned removed = 0;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      pid_t pid;
      char path[WICK_CONTROL_MAX_DIRECTORY + 300];
      if (!wick_control_parse_socket_name (entry->d_name, &pid))
        continue;
      snprintf (path, sizeof path, "%s/%s", directory, entry->d_name);
      if (socket_is_stale (path, pid, listeners) && unlink (path) == 0)
        removed++;
    }
  closedir (dir);
  free (listeners);
  return removed;
}
