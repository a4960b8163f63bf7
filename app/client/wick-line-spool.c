/* wick-line-spool.c — a live session's lines on disk (see the header). */
#include "config.h"

#include "wick-line-spool.h"
#include "wick-line-spool-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Lines are gathered in memory up to this many bytes between writes. */
#define SPOOL_BUFFER (256 << 10)
#define COPY_CHUNK (1 << 20)

struct _WickLineSpool
{
  int fd;
  GString *buffer; /* the appending thread's lines not yet written */
  guint64 buffered_lines;
  GMutex lock; /* guards what follows */
  guint64 flushed_bytes;
  guint64 flushed_lines;
  guint64 lost_lines;
  GError *error; /* the first write error */
};

WickLineSpool *
wick_line_spool_new (GError **error)
{
  int fd = memfd_create ("wick-live-lines", MFD_CLOEXEC);
  if (fd < 0)
    {
      g_autofree char *path = NULL;
      fd = g_file_open_tmp ("wick-live-lines-XXXXXX", &path, error);
      if (fd < 0)
        return NULL;
      g_unlink (path); /* anonymous from here on: gone when the app exits */
    }
  WickLineSpool *self = g_new0 (WickLineSpool, 1);
  self->fd = fd;
  self->buffer = g_string_sized_new (SPOOL_BUFFER + 4096);
  g_mutex_init (&self->lock);
  return self;
}

void
wick_line_spool_free (WickLineSpool *self)
{
  if (self == NULL)
    return;
  close (self->fd);
  g_string_free (self->buffer, TRUE);
  g_clear_error (&self->error);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* 0, or the errno of the failed write. */
static int
pwrite_all (int fd, const char *data, gsize length, guint64 offset)
{
  while (length > 0)
    {
      gssize n = pwrite (fd, data, length, (off_t)offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno;
      if (n == 0)
        return EIO;
      data += n;
      length -= (gsize)n;
      offset += (guint64)n;
    }
  return 0;
}

static gboolean
write_all (int fd, const char *data, gsize length, guint64 offset, GError **error)
{
  int saved = pwrite_all (fd, data, length, offset);
  if (saved != 0)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                 "could not keep the live session's lines for Save As: %s", g_strerror (saved));
  return saved == 0;
}

gboolean
wick_line_spool_flush (WickLineSpool *self, GError **error)
{
  g_mutex_lock (&self->lock);
  guint64 offset = self->flushed_bytes;
  gboolean failed = self->error != NULL;
  g_mutex_unlock (&self->lock);
  GError *local = NULL;
  if (!failed && self->buffer->len > 0
      && !write_all (self->fd, self->buffer->str, self->buffer->len, offset, &local))
    failed = TRUE;
  g_mutex_lock (&self->lock);
  if (local != NULL && self->error == NULL)
    self->error = local;
  else
    g_clear_error (&local);
  if (failed)
    {
      /* The file keeps its whole lines: the rest is counted, not kept. */
      self->lost_lines += self->buffered_lines;
      if (ftruncate (self->fd, (off_t)self->flushed_bytes) != 0)
        g_debug ("spool: could not cut back a failed write: %s", g_strerror (errno));
    }
  else
    {
      self->flushed_bytes += self->buffer->len;
      self->flushed_lines += self->buffered_lines;
    }
  gboolean ok = self->error == NULL;
  if (!ok)
    g_set_error_literal (error, self->error->domain, self->error->code, self->error->message);
  g_mutex_unlock (&self->lock);
  g_string_truncate (self->buffer, 0);
  self->buffered_lines = 0;
  return ok;
}

void
wick_line_spool_append (WickLineSpool *self, const char *line, gsize length)
{
  g_string_append_len (self->buffer, line, (gssize)length);
  g_string_append_c (self->buffer, '\n');
  self->buffered_lines++;
  if (self->buffer->len >= SPOOL_BUFFER)
    wick_line_spool_flush (self, NULL);
}

char *
wick_line_spool_get_error (WickLineSpool *self)
{
  g_mutex_lock (&self->lock);
  char *message = self->error != NULL ? g_strdup (self->error->message) : NULL;
  g_mutex_unlock (&self->lock);
  return message;
}

guint64
wick_line_spool_get_lines (WickLineSpool *self)
{
  g_mutex_lock (&self->lock);
  guint64 lines = self->flushed_lines;
  g_mutex_unlock (&self->lock);
  return lines;
}

guint64
wick_line_spool_get_bytes (WickLineSpool *self)
{
  g_mutex_lock (&self->lock);
  guint64 bytes = self->flushed_bytes;
  g_mutex_unlock (&self->lock);
  return bytes;
}

guint64
wick_line_spool_get_lost_lines (WickLineSpool *self)
{
  g_mutex_lock (&self->lock);
  guint64 lost = self->lost_lines;
  g_mutex_unlock (&self->lock);
  return lost;
}

static gboolean
save_error (GError **error, const char *path, int saved)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", path,
               g_strerror (saved));
  return FALSE;
}

gboolean
wick_line_spool_save (WickLineSpool *self, const char *path, guint64 length, const char *trailer,
                      GError **error)
{
  g_mutex_lock (&self->lock);
  guint64 total = MIN (length, self->flushed_bytes);
  g_mutex_unlock (&self->lock);

  g_autofree char *temp = g_strdup_printf ("%s.XXXXXX", path);
  int out = g_mkstemp_full (temp, O_WRONLY | O_CLOEXEC, 0644);
  if (out < 0)
    return save_error (error, path, errno);
  g_autofree char *chunk = g_malloc (COPY_CHUNK);
  int saved = 0;
  for (guint64 offset = 0; offset < total && saved == 0;)
    {
      gsize want = (gsize)MIN ((guint64)COPY_CHUNK, total - offset);
      gssize n = pread (self->fd, chunk, want, (off_t)offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          saved = n < 0 ? errno : EIO;
          break;
        }
      saved = pwrite_all (out, chunk, (gsize)n, offset);
      offset += (guint64)n;
    }
  if (saved == 0 && trailer != NULL)
    saved = pwrite_all (out, trailer, strlen (trailer), total);
  if (saved == 0 && fsync (out) != 0)
    saved = errno;
  if (close (out) != 0 && saved == 0)
    saved = errno;
  if (saved == 0 && g_rename (temp, path) != 0)
    saved = errno;
  if (saved != 0)
    {
      g_unlink (temp);
      return save_error (error, path, saved);
    }
  return TRUE;
}
