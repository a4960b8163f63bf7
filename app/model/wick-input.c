/* wick-input.c — plain, gzip and zstd trace bytes as one stream (see the header). */
#include "config.h"

#include "wick-input.h"

#include "wick-document-error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define COMPRESSED_CHUNK (1 << 20)

static guint64 max_decompressed; /* 0: the default */
static guint max_ratio;

struct _WickInput
{
  char *name;
  int fd; /* -1 for memory */
  const guint8 *memory;
  gsize memory_len, memory_pos;
  WickCompression compression;
  guint64 size, consumed, decoded;

  /* compressed bytes read ahead: [in_pos, in_len) of in_buffer */
  guint8 *in_buffer;
  gsize in_pos, in_len;
  gboolean in_eof;
  gboolean finished; /* the compressed stream ended cleanly */
  GError *stop_error; /* a decompression limit was reached, or the bytes are in a
                       * compression Wick does not read: every later read fails */

  /* the first bytes, read to sniff, given back first (plain files) */
  guint8 head[4];
  gsize head_len, head_pos;

  z_stream z;
  gboolean z_ready;
  ZSTD_DCtx *zstd;
  gsize zstd_last; /* last ZSTD_decompressStream hint: 0 at a frame's end */
};

/* The compression of a buffer that starts a file. */
static WickCompression
wick_compression_sniff (const void *data, gsize len)
{
  const guint8 *p = data;

  if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
    return WICK_COMPRESSION_GZIP;
  if (len >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
    return WICK_COMPRESSION_ZSTD;
  return WICK_COMPRESSION_NONE;
}

/* A compression Wick does not read, by its magic bytes; NULL when none. */
static const char *
unsupported_compression (const guint8 *p, gsize len)
{
  if (len < 4)
    return NULL;
  if (p[0] == 0xfd && p[1] == '7' && p[2] == 'z' && p[3] == 'X')
    return "xz";
  if (p[0] == 'B' && p[1] == 'Z' && p[2] == 'h' && p[3] >= '1' && p[3] <= '9')
    return "bzip2";
  if (p[0] == 0x04 && p[1] == 0x22 && p[2] == 0x4d && p[3] == 0x18)
    return "lz4";
  return NULL;
}

static const char *
wick_compression_to_string (WickCompression compression)
{
  switch (compression)
    {
      case WICK_COMPRESSION_GZIP:
        return "gzip";
      case WICK_COMPRESSION_ZSTD:
        return "zstd";
      default:
        return "none";
    }
}

/* Raw bytes from the file or memory. */
static gssize
raw_read (WickInput *input, guint8 *buffer, gsize len, GError **error)
{
  gsize filled = 0;

  if (input->fd < 0)
    {
      gsize n = MIN (len, input->memory_len - input->memory_pos);
      memcpy (buffer, input->memory + input->memory_pos, n);
      input->memory_pos += n;
      input->consumed += n;
      return (gssize)n;
    }
  while (filled < len)
    {
      gssize n = read (input->fd, buffer + filled, len - filled);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "read %s: %s",
                       input->name, g_strerror (saved));
          return -1;
        }
      if (n == 0)
        break;
      filled += (gsize)n;
    }
  input->consumed += filled;
  return (gssize)filled;
}

static gboolean
fill_compressed (WickInput *input, GError **error)
{
  gssize n;

  if (input->in_pos < input->in_len || input->in_eof)
    return TRUE;
  input->in_pos = 0;
  input->in_len = 0;
  if (input->head_len > 0)
    {
      memcpy (input->in_buffer, input->head, input->head_len);
      input->in_len = input->head_len;
      input->head_len = 0;
    }
  n = raw_read (input, input->in_buffer + input->in_len, COMPRESSED_CHUNK - input->in_len, error);
  if (n < 0)
    return FALSE;
  input->in_len += (gsize)n;
  if (input->in_len == 0)
    input->in_eof = TRUE;
  return TRUE;
}

static WickInput *
input_start (WickInput *input, GError **error)
{
  gssize n = raw_read (input, input->head, sizeof input->head, error);
  const char *what;

  if (n < 0)
    {
      wick_input_free (input);
      return NULL;
    }
  input->head_len = (gsize)n;
  input->compression = wick_compression_sniff (input->head, input->head_len);
  what = unsupported_compression (input->head, input->head_len);
  if (what != NULL)
    input->stop_error
      = g_error_new (WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_UNSUPPORTED_COMPRESSION,
                     /* Translators: the file's name and a compression (xz, bzip2, lz4). */
                     _ ("%s: the file is %s-compressed; Wick reads plain, gzip and zstd files "
                        "(decompress it first)"),
                     input->name, what);
  if (input->compression == WICK_COMPRESSION_GZIP)
    {
      if (inflateInit2 (&input->z, 15 + 32) != Z_OK)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot start zlib", input->name);
          wick_input_free (input);
          return NULL;
        }
      input->z_ready = TRUE;
    }
  else if (input->compression == WICK_COMPRESSION_ZSTD)
    {
      input->zstd = ZSTD_createDCtx ();
      input->zstd_last = 1;
      /* frames made with --long=31 (a 2 GiB window) read: the window is
       * allocated only as large as the frame says, at most 2 GiB */
      if (input->zstd != NULL)
        ZSTD_DCtx_setParameter (input->zstd, ZSTD_d_windowLogMax, 31);
    }
  if (input->compression != WICK_COMPRESSION_NONE)
    input->in_buffer = g_malloc (COMPRESSED_CHUNK);
  return input;
}

WickInput *
wick_input_open (const char *path, GError **error)
{
  WickInput *input = g_new0 (WickInput, 1);
  struct stat st;

  input->name = g_strdup (path);
  /* non-blocking: a FIFO without a writer (or a device) at the path must not
   * block the open; anything but a regular file is refused below */
  input->fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (input->fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "open %s: %s", path,
                   g_strerror (saved));
      g_free (input->name);
      g_free (input);
      return NULL;
    }
  if (fstat (input->fd, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, "read %s: %s", path,
                       g_strerror (EISDIR));
          wick_input_free (input);
          return NULL;
        }
      if (!S_ISREG (st.st_mode))
        {
          /* a FIFO would block every read (or never end), a device too
           * (/dev/zero is an endless "trace"): a growing trace is followed
           * (--follow), never read as a file */
          const char *what = S_ISFIFO (st.st_mode)   ? "a FIFO"
                             : S_ISSOCK (st.st_mode) ? "a socket"
                             : S_ISCHR (st.st_mode)  ? "a character device"
                             : S_ISBLK (st.st_mode)  ? "a block device"
                                                     : "not a regular file";
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                       "read %s: %s, not a regular file (a trace is read from a regular file; "
                       "one still written is followed with --follow)",
                       path, what);
          wick_input_free (input);
          return NULL;
        }
      input->size = (guint64)st.st_size;
    }
  /* a regular file: blocking reads from here on */
  fcntl (input->fd, F_SETFL, fcntl (input->fd, F_GETFL) & ~O_NONBLOCK);
#ifdef POSIX_FADV_SEQUENTIAL
  posix_fadvise (input->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return input_start (input, error);
}

WickInput *
wick_input_new_for_data (const void *data, gsize len, const char *name)
{
  WickInput *input = g_new0 (WickInput, 1);

  input->name = g_strdup (name ? name : "<memory>");
  input->fd = -1;
  input->memory = data;
  input->memory_len = len;
  input->size = len;
  return input_start (input, NULL);
}

void
wick_input_free (WickInput *input)
{
  if (input == NULL)
    return;
  if (input->fd >= 0)
    close (input->fd);
  if (input->z_ready)
    inflateEnd (&input->z);
  if (input->zstd != NULL)
    ZSTD_freeDCtx (input->zstd);
  g_clear_error (&input->stop_error);
  g_free (input->in_buffer);
  g_free (input->name);
  g_free (input);
}

static gssize
cut_off (WickInput *input, const char *what, GError **error)
{
  /* A cut-off file is read up to the cut, and this sentence is shown with
   * what was read (the Health page of a Chrome trace): translated. */
  g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED,
               g_dngettext (GETTEXT_PACKAGE,
                            /* Translators: the file's name, the compression (gzip or zstd)
                             * and the number of bytes decompressed before the cut. */
                            "%s: the %s stream is cut off after %llu byte of data",
                            "%s: the %s stream is cut off after %llu bytes of data",
                            input->decoded > G_MAXULONG ? G_MAXULONG : (gulong)input->decoded),
               input->name, what, (unsigned long long)input->decoded);
  return -1;
}

static gssize
read_gzip (WickInput *input, guint8 *buffer, gsize len, GError **error)
{
  gsize out = 0;

  while (out < len && !input->finished)
    {
      int rc;
      gsize before = out;
      if (!fill_compressed (input, error))
        return -1;
      input->z.next_in = input->in_buffer + input->in_pos;
      input->z.avail_in = (uInt)(input->in_len - input->in_pos);
      input->z.next_out = buffer + out;
      input->z.avail_out = (uInt)MIN (len - out, (gsize)G_MAXUINT32);
      rc = inflate (&input->z, Z_NO_FLUSH);
      out = (gsize)(input->z.next_out - buffer);
      input->in_pos = input->in_len - input->z.avail_in;
      if (rc == Z_STREAM_END)
        {
          /* another member may follow (gzip -c a b > ab.gz); trailing bytes
           * that are no gzip member are ignored, as gzip(1) does */
          if (!fill_compressed (input, error))
            return -1;
          if (!input->in_eof && input->in_len - input->in_pos >= 1
              && input->in_buffer[input->in_pos] == 0x1f)
            inflateReset (&input->z);
          else
            input->finished = TRUE;
          continue;
        }
      if (rc == Z_BUF_ERROR || (rc == Z_OK && input->in_eof && out == before))
        {
          /* no progress: more input is needed, and there is none */
          if (!input->in_eof)
            continue;
          if (out > 0)
            break;
          return cut_off (input, "gzip", error);
        }
      if (rc != Z_OK)
        {
          g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_CORRUPT_COMPRESSION,
                       "%s: corrupt gzip data after %" G_GUINT64_FORMAT " bytes of data (%s)",
                       input->name, input->decoded + out,
                       input->z.msg ? input->z.msg : zError (rc));
          return -1;
        }
    }
  return (gssize)out;
}

static gssize
read_zstd (WickInput *input, guint8 *buffer, gsize len, GError **error)
{
  ZSTD_outBuffer zout = { buffer, len, 0 };

  while (zout.pos < len)
    {
      ZSTD_inBuffer zin;
      gsize rc;
      gsize before = zout.pos;
      if (!fill_compressed (input, error))
        return -1;
      if (input->in_eof && input->zstd_last == 0)
        break;
      zin.src = input->in_buffer;
      zin.size = input->in_len;
      zin.pos = input->in_pos;
      rc = ZSTD_decompressStream (input->zstd, &zout, &zin);
      input->in_pos = zin.pos;
      if (ZSTD_isError (rc))
        {
          g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_CORRUPT_COMPRESSION,
                       "%s: corrupt zstd data after %" G_GUINT64_FORMAT " bytes of data (%s)",
                       input->name, input->decoded + zout.pos, ZSTD_getErrorName (rc));
          return -1;
        }
      input->zstd_last = rc;
      if (input->in_eof && zout.pos == before)
        {
          if (rc == 0 || zout.pos > 0)
            break;
          return cut_off (input, "zstd", error);
        }
    }
  return (gssize)zout.pos;
}

static guint64
wick_max_decompressed_bytes (void)
{
  return max_decompressed > 0 ? max_decompressed : WICK_DEFAULT_MAX_DECOMPRESSED;
}

static guint
wick_max_compression_ratio (void)
{
  return max_ratio > 0 ? max_ratio : WICK_DEFAULT_MAX_COMPRESSION_RATIO;
}

void
wick_set_max_decompressed_bytes (guint64 bytes)
{
  max_decompressed = bytes;
}

void
wick_set_max_compression_ratio (guint ratio)
{
  max_ratio = ratio;
}

/* Compressed bytes the decoder has used (not those read ahead). */
static guint64
compressed_used (WickInput *input)
{
  return input->consumed - (guint64)(input->in_len - input->in_pos);
}

/* Before a compressed read: FALSE once a limit is reached, with the reason
 * in input->stop_error (every later read fails with it too); *len is cut so
 * the decoded size passes the size limit by one byte at most. */
static gboolean
within_limits (WickInput *input, gsize *len)
{
  guint64 limit = wick_max_decompressed_bytes ();
  guint64 used = compressed_used (input);
  guint ratio = wick_max_compression_ratio ();
  const char *what = wick_compression_to_string (input->compression);

  if (input->stop_error != NULL)
    return FALSE;
  if (input->decoded > limit)
    {
      input->stop_error = g_error_new (
        WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE,
        /* Translators: the file's name, a size in bytes, a size in bytes, the compression
         * (gzip or zstd) and the limit in bytes. */
        _ ("%s: %llu bytes decompressed from %llu bytes of %s pass the limit of %llu "
           "decompressed bytes: reading stopped there, what was decoded before is kept "
           "(raise it with --max-decompressed-bytes or WICK_MAX_DECOMPRESSED_BYTES)"),
        input->name, (unsigned long long)input->decoded, (unsigned long long)used, what,
        (unsigned long long)limit);
      return FALSE;
    }
  if (input->decoded >= WICK_COMPRESSION_RATIO_FLOOR && used > 0
      && input->decoded / used >= ratio)
    {
      input->stop_error = g_error_new (
        WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE,
        /* Translators: the file's name, a size in bytes, a size in bytes, the compression
         * (gzip or zstd), the ratio reached and the limit. */
        _ ("%s: %llu bytes decompressed from %llu bytes of %s, a ratio of %llu:1, reach the "
           "limit of %u:1 (a decompression bomb?): reading stopped there, what was decoded "
           "before is kept (raise it with --max-compression-ratio or "
           "WICK_MAX_COMPRESSION_RATIO)"),
        input->name, (unsigned long long)input->decoded, (unsigned long long)used, what,
        (unsigned long long)(input->decoded / used), ratio);
      return FALSE;
    }
  /* one byte past the limit tells a larger stream from one of exactly the
   * limit's size */
  if (*len > limit + 1 - input->decoded)
    *len = (gsize)(limit + 1 - input->decoded);
  return TRUE;
}

gssize
wick_input_read (WickInput *input, void *buffer, gsize len, GError **error)
{
  gssize n;

  g_return_val_if_fail (input != NULL, -1);
  if (input->stop_error != NULL
      || (input->compression != WICK_COMPRESSION_NONE && len > 0 && !within_limits (input, &len)))
    {
      g_propagate_error (error, g_error_copy (input->stop_error));
      return -1;
    }
  switch (input->compression)
    {
      case WICK_COMPRESSION_GZIP:
        n = read_gzip (input, buffer, len, error);
        break;
      case WICK_COMPRESSION_ZSTD:
        n = read_zstd (input, buffer, len, error);
        break;
      default:
        {
          gsize from_head = MIN (len, input->head_len - input->head_pos);
          memcpy (buffer, input->head + input->head_pos, from_head);
          input->head_pos += from_head;
          n = from_head;
          if (from_head < len)
            {
              gssize more = raw_read (input, (guint8 *)buffer + from_head, len - from_head, error);
              if (more < 0)
                return -1;
              n += more;
            }
          break;
        }
    }
  if (n > 0)
    input->decoded += (guint64)n;
  return n;
}

WickCompression
wick_input_get_compression (WickInput *input)
{
  return input->compression;
}

guint64
wick_input_get_consumed (WickInput *input)
{
  return input->consumed;
}

guint64
wick_input_get_size (WickInput *input)
{
  return input->size;
}

static gsize max_line_length;

gboolean
wick_parse_byte_size (const char *text, gsize *bytes)
{
  char *end = NULL;
  guint64 value;
  guint shift = 0;

  if (text == NULL || !g_ascii_isdigit (*text))
    return FALSE;
  value = g_ascii_strtoull (text, &end, 10);
  if (*end == 'K' || *end == 'k')
    shift = 10;
  else if (*end == 'M' || *end == 'm')
    shift = 20;
  else if (*end == 'G' || *end == 'g')
    shift = 30;
  if (shift > 0)
    end++;
  if (*end != '\0' || value == 0 || value > (G_MAXSIZE >> shift))
    return FALSE;
  *bytes = (gsize)value << shift;
  return TRUE;
}

gboolean
wick_parse_ratio (const char *text, guint *ratio)
{
  char *end = NULL;
  guint64 value;

  if (text == NULL || !g_ascii_isdigit (*text))
    return FALSE;
  value = g_ascii_strtoull (text, &end, 10);
  if (*end == ':' && end[1] == '1' && end[2] == '\0')
    end += 2;
  if (*end != '\0' || value == 0 || value > G_MAXUINT)
    return FALSE;
  *ratio = (guint)value;
  return TRUE;
}

gsize
wick_max_line_length (void)
{
  if (max_line_length == 0)
    {
      gsize from_env;
      if (wick_parse_byte_size (g_getenv ("WICK_MAX_LINE_BYTES"), &from_env))
        max_line_length = from_env;
      else
        max_line_length = WICK_DEFAULT_MAX_LINE_LENGTH;
    }
  return max_line_length;
}

gboolean
wick_max_line_length_from_environment (GError **error)
{
  const char *text = g_getenv ("WICK_MAX_LINE_BYTES");
  const char *decompressed = g_getenv ("WICK_MAX_DECOMPRESSED_BYTES");
  const char *ratio = g_getenv ("WICK_MAX_COMPRESSION_RATIO");
  gsize bytes;
  if (decompressed != NULL)
    {
      if (!wick_parse_byte_size (decompressed, &bytes))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "WICK_MAX_DECOMPRESSED_BYTES=“%s” is not a size: it needs a whole number "
                       "of bytes above 0, with an optional K, M or G suffix (e.g. 64G)",
                       decompressed);
          return FALSE;
        }
      max_decompressed = bytes;
    }
  if (ratio != NULL)
    {
      guint value;
      if (!wick_parse_ratio (ratio, &value))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "WICK_MAX_COMPRESSION_RATIO=“%s” is not a ratio: it needs a whole number "
                       "from 1 to 4294967295 (e.g. 1000 for 1000:1)",
                       ratio);
          return FALSE;
        }
      max_ratio = value;
    }
  if (text == NULL)
    return TRUE;
  if (!wick_parse_byte_size (text, &bytes))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "WICK_MAX_LINE_BYTES=“%s” is not a size: it needs a whole number of bytes above "
                   "0, with an optional K, M or G suffix (e.g. 512M)",
                   text);
      return FALSE;
    }
  max_line_length = bytes;
  return TRUE;
}

void
wick_set_max_line_length (gsize bytes)
{
  max_line_length = bytes > 0 ? bytes : WICK_DEFAULT_MAX_LINE_LENGTH;
}

gboolean
wick_input_error_is_cut (const GError *error)
{
  return g_error_matches (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED)
         || g_error_matches (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE);
}
