/* wick-follow-file.c — a growing JSONL file, line by line (see the header). */
#include "config.h"

#include "wick-follow-file.h"
#include "wick-follow-file-private.h"

#include "wick-input.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)

struct _WickFollowFile
{
  char *path;
  int fd;
  dev_t dev;
  ino_t ino;
  guint64 offset;   /* bytes read from the current file */
  GString *pending; /* a partial last line */
  guint64 lines;
  guint restarts;
  char *buffer;
  gsize max_line;         /* a longer line is skipped (counted), never held whole */
  gboolean skipping;      /* inside such a line: drop bytes up to its newline */
  guint64 skipped_lines;
};

static const char *
file_type (mode_t mode)
{
  return S_ISFIFO (mode)   ? "a FIFO"
         : S_ISSOCK (mode) ? "a socket"
         : S_ISCHR (mode)  ? "a character device"
         : S_ISBLK (mode)  ? "a block device"
         : S_ISDIR (mode)  ? "a directory"
                           : "not a regular file";
}

static gboolean
open_file (WickFollowFile *self, GError **error)
{
  /* A FIFO (or a device) at the path must not block this open, nor be opened
   * at all when it can be told before: the path is looked at first, and
   * the open is non-blocking (a FIFO without a writer would block forever);
   * the descriptor is checked again, since the path may change between. */
  struct stat st;
  if (stat (self->path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "cannot follow %s: %s, not a regular file", self->path, file_type (st.st_mode));
      return FALSE;
    }
  int fd = open (self->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot follow %s: %s",
                   self->path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "cannot follow %s: %s, not a regular file", self->path, file_type (st.st_mode));
      return FALSE;
    }
  if (self->fd >= 0)
    close (self->fd);
  self->fd = fd;
  self->dev = st.st_dev;
  self->ino = st.st_ino;
  self->offset = 0;
  g_string_truncate (self->pending, 0);
  self->skipping = FALSE;
  self->lines = 0;
  return TRUE;
}

WickFollowFile *
wick_follow_file_new (const char *path, GError **error)
{
  WickFollowFile *self = g_new0 (WickFollowFile, 1);
  self->path = g_strdup (path);
  self->fd = -1;
  self->pending = g_string_new (NULL);
  self->buffer = g_malloc (READ_CHUNK);
  self->max_line = wick_max_line_length ();
  if (!open_file (self, error))
    {
      wick_follow_file_free (self);
      return NULL;
    }
  return self;
}

void
wick_follow_file_free (WickFollowFile *self)
{
  if (self == NULL)
    return;
  if (self->fd >= 0)
    close (self->fd);
  g_free (self->path);
  g_string_free (self->pending, TRUE);
  g_free (self->buffer);
  g_free (self);
}

/* Truncated or replaced since the last poll: the reason, else NULL. */
static char *
changed (WickFollowFile *self)
{
  struct stat now, ours;
  if (stat (self->path, &now) == 0 && (now.st_dev != self->dev || now.st_ino != self->ino))
    return g_strdup_printf ("%s was replaced by another file: following it from the start",
                            self->path);
  if (fstat (self->fd, &ours) == 0 && (guint64)ours.st_size < self->offset)
    return g_strdup_printf ("%s was truncated (%" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT
                            " had been read): reading it from the start",
                            self->path, (guint64)ours.st_size, self->offset);
  return NULL;
}

/* A line longer than max_line is not kept: its bytes are dropped up to its
 * newline and it is counted, so a writer that never writes a newline costs
 * at most max_line bytes of memory. */
static void
skip_long_line (WickFollowFile *self)
{
  g_string_truncate (self->pending, 0);
  if (!self->skipping)
    self->skipped_lines++;
  self->skipping = TRUE;
}

static void
deliver (WickFollowFile *self, const char *data, gsize length, WickLiveLineFunc emit,
         gpointer user_data)
{
  const char *end = data + length;
  while (data < end)
    {
      const char *newline = memchr (data, '\n', (gsize)(end - data));
      if (newline == NULL)
        {
          if (!self->skipping && self->pending->len + (gsize)(end - data) > self->max_line)
            skip_long_line (self);
          if (!self->skipping)
            g_string_append_len (self->pending, data, end - data);
          return;
        }
      gsize n = (gsize)(newline - data);
      if (!self->skipping && self->pending->len + n > self->max_line)
        skip_long_line (self);
      if (self->skipping)
        {
          /* the end of a line that was too long: counted, not delivered */
          self->skipping = FALSE;
          self->lines++;
        }
      else
        {
          self->lines++;
          if (self->pending->len > 0)
            {
              g_string_append_len (self->pending, data, (gssize)n);
              emit (self->pending->str, self->pending->len, user_data);
              g_string_truncate (self->pending, 0);
            }
          else
            emit (data, n, user_data);
        }
      data = newline + 1;
    }
}

gssize
wick_follow_file_poll (WickFollowFile *self, gsize max_bytes, WickLiveLineFunc emit,
                       gpointer user_data, char **restarted_reason, GError **error)
{
  if (restarted_reason != NULL)
    *restarted_reason = NULL;
  g_autofree char *reason = changed (self);
  if (reason != NULL)
    {
      /* A replaced file that cannot be opened yet (mid-rename) is tried again
       * at the next poll; the old one is kept until then. */
      g_autoptr (GError) local = NULL;
      if (!open_file (self, &local))
        {
          /* a FIFO, socket or device put at the path is never followed
           * (opening or reading one could block): said, as an error */
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return -1;
            }
          return 0;
        }
      self->restarts++;
      if (restarted_reason != NULL)
        *restarted_reason = g_steal_pointer (&reason);
    }
  gsize total = 0;
  while (max_bytes == 0 || total < max_bytes)
    {
      gsize want = READ_CHUNK;
      if (max_bytes != 0 && max_bytes - total < want)
        want = max_bytes - total;
      ssize_t n = pread (self->fd, self->buffer, want, (off_t)self->offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "reading %s: %s",
                       self->path, g_strerror (errno));
          return -1;
        }
      if (n == 0)
        break;
      self->offset += (guint64)n;
      total += (gsize)n;
      deliver (self, self->buffer, (gsize)n, emit, user_data);
    }
  return (gssize)total;
}

const char *
wick_follow_file_get_path (WickFollowFile *self)
{
  return self->path;
}

gsize
wick_follow_file_get_pending (WickFollowFile *self)
{
  return self->pending->len;
}

guint64
wick_follow_file_get_skipped_lines (WickFollowFile *self)
{
  return self->skipped_lines;
}

void
wick_follow_file_set_max_line (WickFollowFile *self, gsize bytes)
{
  self->max_line = bytes > 0 ? bytes : wick_max_line_length ();
}

guint
wick_follow_file_get_restarts (WickFollowFile *self)
{
  return self->restarts;
}

/* TRUE when /proc/@pid/fdinfo/@fd says the fd was opened for writing. */
static gboolean
fd_is_writable (const char *pid, const char *fd)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/fdinfo/%s", pid, fd);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  const char *flags = strstr (text, "flags:");
  if (flags == NULL)
    return FALSE;
  unsigned long value = strtoul (flags + strlen ("flags:"), NULL, 8);
  return (value & O_ACCMODE) != O_RDONLY;
}

gboolean
wick_follow_file_has_writer (WickFollowFile *self)
{
  DIR *proc = opendir ("/proc");
  if (proc == NULL)
    return TRUE;
  gboolean found = FALSE;
  struct dirent *entry;
  while (!found && (entry = readdir (proc)) != NULL)
    {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
        continue;
      g_autofree char *fds = g_strdup_printf ("/proc/%s/fd", entry->d_name);
      DIR *dir = opendir (fds);
      if (dir == NULL)
        continue; /* gone, or another user's */
      struct dirent *fd;
      while (!found && (fd = readdir (dir)) != NULL)
        {
          if (fd->d_name[0] < '0' || fd->d_name[0] > '9')
            continue;
          g_autofree char *link = g_strdup_printf ("%s/%s", fds, fd->d_name);
          struct stat st;
          if (stat (link, &st) == 0 && st.st_dev == self->dev && st.st_ino == self->ino)
            found = fd_is_writable (entry->d_name, fd->d_name);
        }
      closedir (dir);
    }
  closedir (proc);
  return found;
}
