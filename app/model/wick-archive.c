/* wick-archive.c — zip and tar members as hostile input, and a job's rank
 * traces in a directory or an archive (see wick-archive.h). */
#include "config.h"

#include "wick-archive.h"
#include "wick-archive-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "wick-chrome-stream.h"
#include "wick-input.h"

#define MAX_PATH_BYTES 1024
#define ZIP_MAX_CD_BYTES ((guint64)64 << 20)
#define RATIO_FLOOR ((guint64)1 << 20)
#define TAR_MAX_META_BYTES ((guint64)1 << 20) /* a pax header or GNU long name */
#define CHUNK (256 * 1024)

typedef struct
{
  char *path;
  guint64 csize, usize, local, data; /* data: where its bytes start (after the local header) */
  guint32 crc;
  guint16 method;
  gboolean regular;
} ZipEntry;

struct _WickArchive
{
  WickArchiveFormat format;
  char *name;
  WickArchiveLimits limits;
  guint64 total; /* decompressed bytes handed out */
  guint members;

  /* the bytes: a file (fd) or memory */
  int fd;
  const guint8 *data;
  guint64 size;

  /* zip */
  GArray *entries; /* ZipEntry */
  guint next;      /* entries handed out */
  ZipEntry *cur;
  z_stream z;
  gboolean z_live;
  guint64 in_pos, out_done;
  guint32 crc;
  guint8 *in_buf;
  gboolean cur_done;
  gboolean z_end; /* the deflate stream has ended */

  /* tar */
  WickInput *input;
  guint64 tar_offset;   /* decoded bytes consumed */
  guint64 remaining;    /* of the current member's data */
  guint64 padding;      /* after it */
  char *tar_path;
  char *long_name;      /* from a GNU 'L' or a pax path, for the next header */
  gint64 pax_size;      /* from a pax header, -1 when none */
};

static guint32
le16 (const guint8 *p)
{
  return (guint32)p[0] | (guint32)p[1] << 8;
}

static guint32
le32 (const guint8 *p)
{
  return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

static guint64
le64 (const guint8 *p)
{
  return (guint64)le32 (p) | (guint64)le32 (p + 4) << 32;
}

static gboolean
fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);
static gboolean
fail (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_propagate_error (
    error, g_error_new_valist (WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID, format, args));
  va_end (args);
  return FALSE;
}

/* Reads @len bytes at @offset; FALSE (with a message naming @what) when the
 * archive is shorter. */
static gboolean
read_at (WickArchive *a, guint64 offset, void *buf, gsize len, const char *what, GError **error)
{
  if (offset > a->size || len > a->size - offset)
    return fail (error, "%s: %s lies past the end of the archive (at byte %" G_GUINT64_FORMAT ")",
                 a->name, what, offset);
  if (a->data != NULL)
    {
      memcpy (buf, a->data + offset, len);
      return TRUE;
    }
  for (gsize done = 0; done < len;)
    {
      ssize_t n = pread (a->fd, (char *)buf + done, len - done, (off_t)(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (n < 0 ? errno : EIO),
                       "%s: reading %s: %s", a->name, what, n < 0 ? g_strerror (errno) : "end of file");
          return FALSE;
        }
      done += (gsize)n;
    }
  return TRUE;
}

/* A member's path as the archive gives it: relative and plain, else NULL
 * with the reason. */
static const char *
unsafe_reason (const char *path, gsize len)
{
  if (len == 0)
    return "it is empty";
  if (len > MAX_PATH_BYTES)
    return "it is longer than 1024 bytes";
  for (gsize i = 0; i < len; i++)
    {
      guchar c = (guchar)path[i];
      if (c < 0x20 || c == 0x7f)
        return "it holds a control character";
      if (c == '\\')
        return "it holds a backslash";
    }
  if (path[0] == '/')
    return "it is absolute";
  if (len >= 2 && g_ascii_isalpha (path[0]) && path[1] == ':')
    return "it names a drive";
  for (gsize i = 0; i < len;)
    {
      gsize j = i;
      while (j < len && path[j] != '/')
        j++;
      if (j - i == 2 && path[i] == '.' && path[i + 1] == '.')
        return "it climbs out with ..";
      i = j + 1;
    }
  if (!g_utf8_validate (path, (gssize)len, NULL))
    return "it is not UTF-8";
  return NULL;
}

static gboolean
check_path (WickArchive *a, const char *path, gsize len, guint index, GError **error)
{
  const char *why = unsafe_reason (path, len);
  if (why == NULL)
    return TRUE;
  {
    g_autofree char *shown = g_strndup (path, MIN (len, 120));
    for (char *p = shown; *p; p++)
      if ((guchar)*p < 0x20 || *p == 0x7f)
        *p = '?';
    return fail (error, "%s: member %u's path “%s” is refused: %s", a->name, index + 1, shown, why);
  }
}

/* ---- zip ---- */

static int
cmp_local (gconstpointer x, gconstpointer y)
{
  const ZipEntry *a = x, *b = y;
  return a->local < b->local ? -1 : a->local > b->local;
}

static gboolean
zip_open (WickArchive *a, GError **error)
{
  guint8 tail[65557];
  gsize tail_len = (gsize)MIN (a->size, sizeof tail);
  guint64 tail_at = a->size - tail_len, cd_offset, cd_size, n_entries, eocd;
  gssize found = -1;
  g_autofree guint8 *cd = NULL;
  g_autoptr (GArray) sorted = NULL;

  if (!read_at (a, tail_at, tail, tail_len, "the end of central directory", error))
    return FALSE;
  for (gssize i = (gssize)tail_len - 22; i >= 0; i--)
    if (le32 (tail + i) == 0x06054b50)
      {
        found = i;
        break;
      }
  if (found < 0)
    return fail (error, "%s: not a zip archive (no end of central directory record)", a->name);
  eocd = tail_at + (guint64)found;
  n_entries = le16 (tail + found + 10);
  cd_size = le32 (tail + found + 12);
  cd_offset = le32 (tail + found + 16);
  if (le16 (tail + found + 4) != 0 || le16 (tail + found + 6) != 0)
    return fail (error, "%s: a zip archive split over several disks is not read", a->name);
  if (n_entries == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff)
    {
      /* zip64: the locator right before the record points at the zip64 one */
      guint8 loc[20], rec[56];
      guint64 at;
      if (eocd < 20 || !read_at (a, eocd - 20, loc, 20, "the zip64 locator", error))
        return error && *error ? FALSE : fail (error, "%s: no zip64 locator", a->name);
      if (le32 (loc) != 0x07064b50)
        return fail (error, "%s: the zip64 locator is missing", a->name);
      at = le64 (loc + 8);
      if (!read_at (a, at, rec, sizeof rec, "the zip64 end of central directory", error))
        return FALSE;
      if (le32 (rec) != 0x06064b50)
        return fail (error, "%s: the zip64 end of central directory is broken (at byte %" G_GUINT64_FORMAT ")",
                     a->name, at);
      n_entries = le64 (rec + 32);
      cd_size = le64 (rec + 40);
      cd_offset = le64 (rec + 48);
    }
  if (n_entries > a->limits.max_members)
    return fail (error, "%s: %" G_GUINT64_FORMAT " members, more than the limit of %u", a->name,
                 n_entries, a->limits.max_members);
  if (cd_size > ZIP_MAX_CD_BYTES || cd_size > a->size || cd_offset > a->size - cd_size)
    return fail (error, "%s: the central directory (%" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
                 ") does not fit the archive", a->name, cd_size, cd_offset);
  cd = g_malloc (MAX (cd_size, 1));
  if (!read_at (a, cd_offset, cd, cd_size, "the central directory", error))
    return FALSE;

  a->entries = g_array_new (FALSE, TRUE, sizeof (ZipEntry));
  for (guint64 pos = 0, i = 0; i < n_entries; i++)
    {
      ZipEntry e = { 0 };
      guint name_len, extra_len, comment_len, flags, made_by;
      guint32 attr;
      guint8 lh[30];
      if (pos + 46 > cd_size || le32 (cd + pos) != 0x02014b50)
        return fail (error, "%s: central directory entry %" G_GUINT64_FORMAT " is broken (at byte %" G_GUINT64_FORMAT ")",
                     a->name, i + 1, cd_offset + pos);
      made_by = le16 (cd + pos + 4) >> 8;
      flags = le16 (cd + pos + 8);
      e.method = (guint16)le16 (cd + pos + 10);
      e.crc = le32 (cd + pos + 16);
      e.csize = le32 (cd + pos + 20);
      e.usize = le32 (cd + pos + 24);
      name_len = le16 (cd + pos + 28);
      extra_len = le16 (cd + pos + 30);
      comment_len = le16 (cd + pos + 32);
      attr = le32 (cd + pos + 38);
      e.local = le32 (cd + pos + 42);
      if (pos + 46 + name_len + extra_len + comment_len > cd_size)
        return fail (error, "%s: central directory entry %" G_GUINT64_FORMAT " runs past the directory", a->name,
                     i + 1);
      if (!check_path (a, (const char *)cd + pos + 46, name_len, (guint)i, error))
        return FALSE;
      e.path = g_strndup ((const char *)cd + pos + 46, name_len);
      g_array_append_val (a->entries, e);
      {
        ZipEntry *ep = &g_array_index (a->entries, ZipEntry, a->entries->len - 1);
        /* zip64 sizes and offset: in the extra field, for those that are all ones */
        const guint8 *x = cd + pos + 46 + name_len, *end = x + extra_len;
        while (x + 4 <= end)
          {
            guint id = le16 (x), len = le16 (x + 2);
            const guint8 *v = x + 4;
            if (v + len > end)
              break;
            if (id == 0x0001)
              {
                const guint8 *q = v;
                if (ep->usize == 0xffffffff && q + 8 <= v + len)
                  ep->usize = le64 (q), q += 8;
                if (ep->csize == 0xffffffff && q + 8 <= v + len)
                  ep->csize = le64 (q), q += 8;
                if (ep->local == 0xffffffff && q + 8 <= v + len)
                  ep->local = le64 (q), q += 8;
              }
            x = v + len;
          }
        ep->regular = ep->path[name_len - 1] != '/'
                      && !(made_by == 3 && ((attr >> 16) & 0170000) != 0
                           && ((attr >> 16) & 0170000) != 0100000);
        if (ep->regular && (flags & 1))
          return fail (error, "%s: %s is encrypted", a->name, ep->path);
        /* where its data start: after its local header */
        if (!read_at (a, ep->local, lh, sizeof lh, ep->path, error))
          return FALSE;
        if (le32 (lh) != 0x04034b50)
          return fail (error, "%s: %s: no local header at byte %" G_GUINT64_FORMAT, a->name,
                       ep->path, ep->local);
        ep->data = ep->local + 30 + le16 (lh + 26) + le16 (lh + 28);
        if (ep->data > cd_offset || ep->csize > cd_offset - ep->data)
          return fail (error, "%s: %s: its data (%" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
                       ") run past the central directory", a->name, ep->path, ep->csize, ep->data);
      }
      pos += 46 + name_len + extra_len + comment_len;
    }
  /* the members' bytes must not overlap: a zip bomb reuses one deflate
   * stream for many members */
  sorted = g_array_sized_new (FALSE, FALSE, sizeof (ZipEntry), a->entries->len);
  g_array_append_vals (sorted, a->entries->data, a->entries->len);
  g_array_sort (sorted, cmp_local);
  for (guint i = 1; i < sorted->len; i++)
    {
      const ZipEntry *p = &g_array_index (sorted, ZipEntry, i - 1);
      const ZipEntry *q = &g_array_index (sorted, ZipEntry, i);
      if (p->data + p->csize > q->local)
        return fail (error, "%s: %s overlaps %s (members sharing bytes: a zip bomb)", a->name,
                     q->path, p->path);
    }
  return TRUE;
}

static void
zip_end_member (WickArchive *a)
{
  if (a->z_live)
    inflateEnd (&a->z);
  a->z_live = FALSE;
  a->cur = NULL;
}

static gboolean
zip_next (WickArchive *a, WickArchiveMember *m, GError **error)
{
  ZipEntry *e;
  zip_end_member (a);
  if (a->next >= a->entries->len)
    return FALSE;
  e = &g_array_index (a->entries, ZipEntry, a->next++);
  m->path = e->path;
  m->size = e->usize;
  m->regular = e->regular;
  if (!e->regular)
    return TRUE;
  if (e->method != 0 && e->method != 8)
    return fail (error, "%s: %s is compressed with method %u (only stored and deflate are read)",
                 a->name, e->path, e->method);
  if (e->method == 0 && e->usize != e->csize)
    return fail (error, "%s: %s is stored but its sizes differ", a->name, e->path);
  if (e->usize > a->limits.max_member_bytes)
    return fail (error, "%s: %s is %" G_GUINT64_FORMAT " bytes decompressed, more than the limit of %" G_GUINT64_FORMAT,
                 a->name, e->path, e->usize, a->limits.max_member_bytes);
  if (e->usize > RATIO_FLOOR && e->usize / MAX (e->csize, 1) >= a->limits.max_ratio)
    return fail (error, "%s: %s would decompress %" G_GUINT64_FORMAT " bytes from %" G_GUINT64_FORMAT
                 " (more than %u:1: a zip bomb?)", a->name, e->path, e->usize, e->csize,
                 a->limits.max_ratio);
  if (e->usize > a->limits.max_total_bytes - MIN (a->total, a->limits.max_total_bytes))
    return fail (error, "%s: %s would take the archive past %" G_GUINT64_FORMAT " bytes decompressed",
                 a->name, e->path, a->limits.max_total_bytes);
  a->cur = e;
  a->in_pos = 0;
  a->out_done = 0;
  a->crc = crc32 (0, NULL, 0);
  a->cur_done = FALSE;
  a->z_end = FALSE;
  if (e->method == 8)
    {
      memset (&a->z, 0, sizeof a->z);
      if (inflateInit2 (&a->z, -MAX_WBITS) != Z_OK)
        return fail (error, "%s: %s: zlib could not start", a->name, e->path);
      a->z_live = TRUE;
    }
  return TRUE;
}

static gssize
zip_read (WickArchive *a, guint8 *buf, gsize len, GError **error)
{
  ZipEntry *e = a->cur;
  gsize out = 0;
  if (e == NULL || a->cur_done)
    return 0;
  if (e->method == 0)
    {
      gsize n = (gsize)MIN ((guint64)len, e->csize - a->in_pos);
      if (n > 0 && !read_at (a, e->data + a->in_pos, buf, n, e->path, error))
        return -1;
      a->in_pos += n;
      out = n;
    }
  else if (!a->z_end)
    {
      a->z.next_out = buf;
      a->z.avail_out = (uInt)MIN (len, (gsize)G_MAXUINT32);
      while (a->z.avail_out > 0)
        {
          int rc;
          if (a->z.avail_in == 0 && a->in_pos < e->csize)
            {
              gsize n = (gsize)MIN ((guint64)CHUNK, e->csize - a->in_pos);
              if (!read_at (a, e->data + a->in_pos, a->in_buf, n, e->path, error))
                return -1;
              a->in_pos += n;
              a->z.next_in = a->in_buf;
              a->z.avail_in = (uInt)n;
            }
          rc = inflate (&a->z, Z_NO_FLUSH);
          if (rc == Z_STREAM_END)
            {
              a->z_end = TRUE;
              break;
            }
          if (rc == Z_BUF_ERROR && a->z.avail_in == 0 && a->in_pos >= e->csize)
            {
              fail (error, "%s: %s: its deflate data end early", a->name, e->path);
              return -1;
            }
          if (rc != Z_OK && rc != Z_BUF_ERROR)
            {
              fail (error, "%s: %s: corrupt deflate data (%s)", a->name, e->path,
                    a->z.msg ? a->z.msg : "zlib error");
              return -1;
            }
          if (a->out_done + (len - a->z.avail_out) > e->usize)
            break;
        }
      out = len - a->z.avail_out;
    }
  if (a->out_done + out > e->usize)
    {
      fail (error, "%s: %s inflates past its declared %" G_GUINT64_FORMAT " bytes", a->name, e->path,
            e->usize);
      return -1;
    }
  a->out_done += out;
  a->total += out;
  a->crc = crc32 (a->crc, buf, (uInt)out);
  if (out == 0)
    {
      if (a->out_done != e->usize)
        {
          fail (error, "%s: %s gives %" G_GUINT64_FORMAT " bytes, not its declared %" G_GUINT64_FORMAT,
                a->name, e->path, a->out_done, e->usize);
          return -1;
        }
      if (a->crc != e->crc)
        {
          fail (error, "%s: %s: CRC-32 mismatch (damaged archive)", a->name, e->path);
          return -1;
        }
      a->cur_done = TRUE;
    }
  return (gssize)out;
}

/* ---- tar ---- */

/* Reads exactly @len decoded bytes; FALSE at a clean end (none read, *got 0)
 * or with @error. */
static gboolean
tar_read_exact (WickArchive *a, void *buf, gsize len, gsize *got, GError **error)
{
  gsize done = 0;
  *got = 0;
  while (done < len)
    {
      gssize n = wick_input_read (a->input, (char *)buf + done, len - done, error);
      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      done += (gsize)n;
    }
  a->tar_offset += done;
  *got = done;
  return done == len;
}

static gboolean
tar_skip (WickArchive *a, guint64 n, GError **error)
{
  guint8 buf[16384];
  while (n > 0)
    {
      gsize got, want = (gsize)MIN (n, (guint64)sizeof buf);
      if (!tar_read_exact (a, buf, want, &got, error))
        return error && *error ? FALSE
                               : fail (error, "%s: cut off in %s (at byte %" G_GUINT64_FORMAT ")",
                                       a->name, a->tar_path ? a->tar_path : "a member", a->tar_offset);
      n -= want;
    }
  return TRUE;
}

/* An octal (or GNU base-256) number field; FALSE when it is not one. */
static gboolean
tar_number (const guint8 *f, gsize len, guint64 *out)
{
  guint64 v = 0;
  gsize i = 0;
  if (f[0] & 0x80)
    {
      if (f[0] != 0x80)
        return FALSE; /* negative, or more than 64 bits */
      for (i = 1; i < len; i++)
        {
          if (v >> 56)
            return FALSE;
          v = v << 8 | f[i];
        }
      *out = v;
      return TRUE;
    }
  while (i < len && f[i] == ' ')
    i++;
  for (; i < len && f[i] >= '0' && f[i] <= '7'; i++)
    {
      if (v >> 60)
        return FALSE;
      v = v * 8 + (guint64)(f[i] - '0');
    }
  for (; i < len; i++)
    if (f[i] != ' ' && f[i] != '\0')
      return FALSE;
  *out = v;
  return TRUE;
}

/* A pax extended header's records "LEN key=value\n": its path and size. */
static gboolean
tar_pax (WickArchive *a, const char *text, gsize len, GError **error)
{
  gsize i = 0;
  while (i < len)
    {
      gsize n = 0, j = i;
      while (j < len && g_ascii_isdigit (text[j]) && n < len)
        n = n * 10 + (gsize)(text[j++] - '0');
      if (j >= len || text[j] != ' ' || n <= j - i + 1 || n > len - i || text[i + n - 1] != '\n')
        return fail (error, "%s: a pax header is broken (at byte %" G_GUINT64_FORMAT ")", a->name,
                     a->tar_offset);
      {
        const char *kv = text + j + 1, *end = text + i + n - 1;
        const char *eq = memchr (kv, '=', (gsize)(end - kv));
        if (eq != NULL)
          {
            gsize klen = (gsize)(eq - kv);
            if (klen == 4 && memcmp (kv, "path", 4) == 0)
              {
                g_free (a->long_name);
                a->long_name = g_strndup (eq + 1, (gsize)(end - eq - 1));
              }
            else if (klen == 4 && memcmp (kv, "size", 4) == 0)
              {
                g_autofree char *v = g_strndup (eq + 1, (gsize)(end - eq - 1));
                char *e = NULL;
                guint64 s = g_ascii_strtoull (v, &e, 10);
                if (e == v || *e != '\0')
                  return fail (error, "%s: a pax size is not a number", a->name);
                a->pax_size = (gint64)MIN (s, (guint64)G_MAXINT64);
              }
          }
      }
      i += n;
    }
  return TRUE;
}

static gboolean
tar_next (WickArchive *a, WickArchiveMember *m, GError **error)
{
  guint8 h[512];
  if (!tar_skip (a, a->remaining + a->padding, error))
    return FALSE;
  a->remaining = a->padding = 0;
  for (;;)
    {
      gsize got;
      guint64 size, sum = 0, want;
      gboolean zero = TRUE;
      char type;
      g_autofree char *path = NULL;

      if (!tar_read_exact (a, h, sizeof h, &got, error))
        {
          if (error && *error)
            return FALSE;
          if (got == 0 && a->members > 0)
            return FALSE; /* an archive without the two zero blocks: tolerated */
          return fail (error, "%s: cut off in a header (at byte %" G_GUINT64_FORMAT ")", a->name,
                       a->tar_offset);
        }
      for (guint i = 0; i < 512 && zero; i++)
        zero = h[i] == 0;
      if (zero)
        return FALSE; /* the end */
      if (++a->members > a->limits.max_members)
        return fail (error, "%s: more than the limit of %u members", a->name, a->limits.max_members);
      if (!tar_number (h + 148, 8, &want))
        return fail (error, "%s: header %u has no checksum (not a tar archive?)", a->name, a->members);
      for (guint i = 0; i < 512; i++)
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
      if (sum != want)
        return fail (error, "%s: header %u's checksum is wrong (at byte %" G_GUINT64_FORMAT ")",
                     a->name, a->members, a->tar_offset - 512);
      if (!tar_number (h + 124, 12, &size))
        return fail (error, "%s: header %u's size is not a number", a->name, a->members);
      if (a->pax_size >= 0)
        size = (guint64)a->pax_size;
      a->pax_size = -1;
      type = (char)h[156];
      if (type == 'x' || type == 'L' || type == 'g' || type == 'K')
        {
          g_autofree char *text = NULL;
          if (size > TAR_MAX_META_BYTES)
            return fail (error, "%s: header %u's extension is %" G_GUINT64_FORMAT " bytes (more than 1 MiB)",
                         a->name, a->members, size);
          text = g_malloc (size + 1);
          if (!tar_read_exact (a, text, size, &got, error))
            return error && *error ? FALSE : fail (error, "%s: cut off in header %u's extension", a->name, a->members);
          text[size] = '\0';
          if (!tar_skip (a, (512 - size % 512) % 512, error))
            return FALSE;
          if (type == 'L')
            {
              g_free (a->long_name);
              a->long_name = g_strndup (text, strnlen (text, size));
            }
          else if (type == 'x' && !tar_pax (a, text, size, error))
            return FALSE;
          continue;
        }
      if (a->long_name != NULL)
        path = g_steal_pointer (&a->long_name);
      else
        {
          gsize nlen = strnlen ((const char *)h, 100);
          if (memcmp (h + 257, "ustar", 5) == 0 && h[345] != '\0')
            path = g_strdup_printf ("%.*s/%.*s", (int)strnlen ((const char *)h + 345, 155), h + 345,
                                    (int)nlen, h);
          else
            path = g_strndup ((const char *)h, nlen);
        }
      if (!check_path (a, path, strlen (path), a->members - 1, error))
        return FALSE;
      g_free (a->tar_path);
      a->tar_path = g_steal_pointer (&path);
      m->path = a->tar_path;
      m->regular = type == '0' || type == '\0' || type == '7';
      /* links, directories and devices have no data of their own to read */
      if (type == '1' || type == '2' || type == '3' || type == '4' || type == '5' || type == '6')
        size = 0;
      m->size = size;
      if (m->regular && size > a->limits.max_member_bytes)
        return fail (error, "%s: %s is %" G_GUINT64_FORMAT " bytes, more than the limit of %" G_GUINT64_FORMAT,
                     a->name, m->path, size, a->limits.max_member_bytes);
      if (m->regular && size > a->limits.max_total_bytes - MIN (a->total, a->limits.max_total_bytes))
        return fail (error, "%s: %s would take the archive past %" G_GUINT64_FORMAT " bytes",
                     a->name, m->path, a->limits.max_total_bytes);
      a->remaining = size;
      a->padding = (512 - size % 512) % 512;
      return TRUE;
    }
}

static gssize
tar_read (WickArchive *a, guint8 *buf, gsize len, GError **error)
{
  gsize got, want = (gsize)MIN ((guint64)len, a->remaining);
  if (want == 0)
    return 0;
  if (!tar_read_exact (a, buf, want, &got, error))
    {
      if (error && *error)
        {
          g_prefix_error (error, "in %s: ", a->tar_path);
          return -1;
        }
      fail (error, "%s: %s is cut off (at byte %" G_GUINT64_FORMAT ")", a->name, a->tar_path,
            a->tar_offset);
      return -1;
    }
  a->remaining -= want;
  a->total += want;
  return (gssize)want;
}

/* ---- the archive ---- */

static gboolean
is_tar_header (const guint8 *h, gsize len)
{
  guint64 want, sum = 0;
  if (len < 512)
    return FALSE;
  if (memcmp (h + 257, "ustar", 5) == 0)
    return TRUE;
  if (!tar_number (h + 148, 8, &want))
    return FALSE;
  for (guint i = 0; i < 512; i++)
    sum += (i >= 148 && i < 156) ? ' ' : h[i];
  return sum == want && h[0] != 0;
}

/* The format by the first bytes (decoded, for a compressed tar). */
static gboolean
sniff (const char *path, WickInput *input, const guint8 *head, gsize head_len,
       WickArchiveFormat *format)
{
  guint8 h[512];
  gsize got = 0;
  if (head_len >= 4 && (le32 (head) == 0x04034b50 || le32 (head) == 0x06054b50))
    {
      *format = WICK_ARCHIVE_ZIP;
      return TRUE;
    }
  if (input == NULL)
    return FALSE;
  while (got < sizeof h)
    {
      gssize n = wick_input_read (input, h + got, sizeof h - got, NULL);
      if (n <= 0)
        break;
      got += (gsize)n;
    }
  if (is_tar_header (h, got))
    {
      *format = WICK_ARCHIVE_TAR;
      return TRUE;
    }
  return FALSE;
}

/* TRUE when @path's first bytes are a zip's, or a tar's (plain or inside
 * gzip or zstd). */
static gboolean
wick_archive_sniff (const char *path)
{
  guint8 head[4] = { 0 };
  WickArchiveFormat format;
  g_autoptr (WickInput) input = NULL;
  int fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  ssize_t n;
  if (fd < 0)
    return FALSE;
  n = read (fd, head, sizeof head);
  close (fd);
  if (n == 4 && (le32 (head) == 0x04034b50 || le32 (head) == 0x06054b50))
    return TRUE;
  input = wick_input_open (path, NULL);
  return input != NULL && sniff (path, input, head, 0, &format);
}

static WickArchive *
archive_new (const char *name, const WickArchiveLimits *limits)
{
  static const WickArchiveLimits defaults = WICK_ARCHIVE_LIMITS_DEFAULT;
  WickArchive *a = g_new0 (WickArchive, 1);
  a->name = g_strdup (name);
  a->limits = limits ? *limits : defaults;
  a->fd = -1;
  a->pax_size = -1;
  a->in_buf = g_malloc (CHUNK);
  return a;
}

static WickArchive *
finish_open (WickArchive *a, const guint8 *head, gsize head_len, WickInput *input, GError **error)
{
  if (!sniff (a->name, input, head, head_len, &a->format))
    {
      wick_input_free (input);
      fail (error, "%s: neither a zip nor a tar archive", a->name);
      wick_archive_free (a);
      return NULL;
    }
  if (a->format == WICK_ARCHIVE_ZIP)
    {
      wick_input_free (input);
      if (!zip_open (a, error))
        {
          wick_archive_free (a);
          return NULL;
        }
      return a;
    }
  a->input = input;
  /* sniff read the first header: start again */
  return a;
}

WickArchive *
wick_archive_open (const char *path, const WickArchiveLimits *limits, GError **error)
{
  WickArchive *a = archive_new (path, limits);
  guint8 head[4] = { 0 };
  struct stat st;
  WickInput *input;

  a->fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (a->fd < 0 || fstat (a->fd, &st) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "open %s: %s", path,
                   g_strerror (errno));
      wick_archive_free (a);
      return NULL;
    }
  a->size = (guint64)st.st_size;
  if (a->size >= 4 && !read_at (a, 0, head, 4, "the first bytes", error))
    {
      wick_archive_free (a);
      return NULL;
    }
  if (a->size >= 4 && (le32 (head) == 0x04034b50 || le32 (head) == 0x06054b50))
    return finish_open (a, head, 4, NULL, error);
  input = wick_input_open (path, error);
  if (input == NULL)
    {
      wick_archive_free (a);
      return NULL;
    }
  a = finish_open (a, head, 0, input, error);
  if (a != NULL && a->format == WICK_ARCHIVE_TAR)
    {
      /* again from the start: sniffing took the first header */
      wick_input_free (a->input);
      a->input = wick_input_open (path, error);
      if (a->input == NULL)
        {
          wick_archive_free (a);
          return NULL;
        }
    }
  return a;
}

WickArchive *
wick_archive_new_for_data (const void *data, gsize len, const char *name,
                           const WickArchiveLimits *limits, GError **error)
{
  WickArchive *a = archive_new (name, limits);
  a->data = data;
  a->size = len;
  if (len >= 4 && (le32 (data) == 0x04034b50 || le32 (data) == 0x06054b50))
    return finish_open (a, data, 4, NULL, error);
  a = finish_open (a, data, 0, wick_input_new_for_data (data, len, name), error);
  if (a != NULL && a->format == WICK_ARCHIVE_TAR)
    {
      wick_input_free (a->input);
      a->input = wick_input_new_for_data (data, len, name);
    }
  return a;
}

void
wick_archive_free (WickArchive *a)
{
  if (a == NULL)
    return;
  zip_end_member (a);
  if (a->entries != NULL)
    {
      for (guint i = 0; i < a->entries->len; i++)
        g_free (g_array_index (a->entries, ZipEntry, i).path);
      g_array_unref (a->entries);
    }
  if (a->fd >= 0)
    close (a->fd);
  wick_input_free (a->input);
  g_free (a->tar_path);
  g_free (a->long_name);
  g_free (a->in_buf);
  g_free (a->name);
  g_free (a);
}

WickArchiveFormat
wick_archive_get_format (WickArchive *a)
{
  return a->format;
}

gboolean
wick_archive_next (WickArchive *a, WickArchiveMember *member, GError **error)
{
  memset (member, 0, sizeof *member);
  return a->format == WICK_ARCHIVE_ZIP ? zip_next (a, member, error) : tar_next (a, member, error);
}

gssize
wick_archive_read (WickArchive *a, void *buffer, gsize len, GError **error)
{
  return a->format == WICK_ARCHIVE_ZIP ? zip_read (a, buffer, len, error)
                                       : tar_read (a, buffer, len, error);
}

/* ------------------------------------------------------------------------ */
/* A job's rank traces */

static gboolean
trace_name (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *lower = g_ascii_strdown (base, -1);
  if (base[0] == '.' || strstr (path, "__MACOSX/") != NULL || g_str_has_prefix (path, "__MACOSX"))
    return FALSE;
  return g_str_has_suffix (lower, ".json") || g_str_has_suffix (lower, ".json.gz")
         || g_str_has_suffix (lower, ".json.zst") || g_str_has_suffix (lower, ".json.zstd");
}

/* TRUE when @path starts as a trace-event JSON file. */
static gboolean
is_chrome_trace (const char *path)
{
  g_autoptr (WickChromeReader) reader = NULL;
  WickFileFormat format;
  WickInput *input = wick_input_open (path, NULL);
  if (input == NULL)
    return FALSE;
  reader = wick_chrome_reader_new (input, path);
  return wick_chrome_reader_start (reader, &format, NULL) && format == WICK_FILE_FORMAT_CHROME;
}

gboolean
wick_job_is_container (const char *path)
{
  return g_file_test (path, G_FILE_TEST_IS_DIR)
         || (g_file_test (path, G_FILE_TEST_IS_REGULAR) && wick_archive_sniff (path));
}

static gboolean
list_dir (const char *dir, guint depth, GPtrArray *out, guint *seen, guint max, GError **error)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, error);
  const char *name;
  if (d == NULL)
    return FALSE;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      struct stat st;
      if (++*seen > max)
        return fail (error, "%s: more than %u entries", dir, max);
      if (name[0] == '.' || lstat (p, &st) != 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          if (depth < 4 && strcmp (name, "__MACOSX") != 0
              && !list_dir (p, depth + 1, out, seen, max, error))
            return FALSE;
        }
      else if (S_ISREG (st.st_mode) && trace_name (p))
        g_ptr_array_add (out, g_steal_pointer (&p));
    }
  return TRUE;
}

static int
cmp_paths (gconstpointer a, gconstpointer b)
{
  return g_utf8_collate (*(const char *const *)a, *(const char *const *)b);
}

/* @base made safe for a file name of ours: [A-Za-z0-9._-], at most 120 bytes. */
static char *
safe_file_name (const char *base)
{
  GString *s = g_string_new (NULL);
  for (const char *p = base; *p && s->len < 120; p++)
    g_string_append_c (s, g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '_' ? *p : '_');
  if (s->len == 0 || s->str[0] == '.')
    g_string_prepend_c (s, '_');
  return g_string_free (s, FALSE);
}

static GPtrArray *
extract (const char *path, const char *extract_dir, GHashTable *labels, GPtrArray *notes,
         GCancellable *cancellable, GError **error)
{
  g_autoptr (WickArchive) a = wick_archive_open (path, NULL, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autofree guint8 *buf = NULL;
  g_autofree char *archive_base = g_path_get_basename (path);
  WickArchiveMember m;
  GError *local = NULL;
  guint index = 0, skipped = 0;

  if (a == NULL)
    return NULL;
  if (g_mkdir_with_parents (extract_dir, 0700) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", extract_dir,
                   g_strerror (errno));
      return NULL;
    }
  buf = g_malloc (CHUNK);
  while (wick_archive_next (a, &m, &local))
    {
      g_autofree char *base = NULL, *safe = NULL, *name = NULL, *dest = NULL, *tmp = NULL;
      FILE *f;
      gssize n;
      if (!m.regular)
        continue;
      if (!trace_name (m.path))
        {
          skipped++;
          continue;
        }
      base = g_path_get_basename (m.path);
      safe = safe_file_name (base);
      name = g_strdup_printf ("%04u-%s", index++, safe);
      dest = g_build_filename (extract_dir, name, NULL);
      tmp = g_strdup_printf ("%s.part", dest);
      f = g_fopen (tmp, "wbx");
      if (f == NULL && errno == EEXIST)
        {
          g_unlink (tmp);
          f = g_fopen (tmp, "wbx");
        }
      if (f == NULL)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", tmp,
                       g_strerror (errno));
          return NULL;
        }
      while ((n = wick_archive_read (a, buf, CHUNK, &local)) > 0)
        {
          if (fwrite (buf, 1, (size_t)n, f) != (size_t)n)
            {
              g_set_error (&local, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", tmp,
                           g_strerror (errno));
              break;
            }
          if (g_cancellable_set_error_if_cancelled (cancellable, &local))
            break;
        }
      if (fclose (f) != 0 && local == NULL)
        g_set_error (&local, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", tmp,
                     g_strerror (errno));
      if (local != NULL || n < 0)
        {
          g_unlink (tmp);
          g_propagate_error (error, local);
          return NULL;
        }
      if (g_rename (tmp, dest) != 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "%s: %s", dest,
                       g_strerror (errno));
          g_unlink (tmp);
          return NULL;
        }
      if (labels != NULL)
        g_hash_table_insert (labels, g_strdup (dest),
                             g_strdup_printf ("%s/%s", archive_base, m.path));
      g_ptr_array_add (out, g_steal_pointer (&dest));
    }
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return NULL;
    }
  if (skipped > 0 && notes != NULL)
    g_ptr_array_add (notes, g_strdup_printf ("%s: %u members not named *.json, *.json.gz or "
                                             "*.json.zst were left out",
                                             path, skipped));
  return g_steal_pointer (&out);
}

GPtrArray *
wick_job_expand (const char *path, const char *extract_dir, GHashTable *labels, GPtrArray *notes,
                 GCancellable *cancellable, GError **error)
{
  g_autoptr (GPtrArray) found = NULL;
  GPtrArray *traces;
  guint seen = 0;

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      found = g_ptr_array_new_with_free_func (g_free);
      if (!list_dir (path, 0, found, &seen, 100000, error))
        return NULL;
      g_ptr_array_sort (found, cmp_paths);
    }
  else if ((found = extract (path, extract_dir, labels, notes, cancellable, error)) == NULL)
    return NULL;
  traces = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < found->len; i++)
    {
      const char *p = found->pdata[i];
      if (is_chrome_trace (p))
        g_ptr_array_add (traces, g_strdup (p));
      else if (notes != NULL)
        {
          const char *label = labels ? g_hash_table_lookup (labels, p) : NULL;
          g_ptr_array_add (notes, g_strdup_printf ("%s is not a trace-event JSON file: left out",
                                                   label ? label : p));
        }
    }
  if (traces->len == 0)
    {
      g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_NOT_A_TRACE,
                   "%s: no rank traces in it (files named *.json, *.json.gz or *.json.zst that "
                   "are trace-event JSON)",
                   path);
      g_ptr_array_unref (traces);
      return NULL;
    }
  return traces;
}
