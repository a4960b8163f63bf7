/* wick-trace-convert.c — `wick-trace convert [--strict|--chrome] IN --output OUT`.
 *
 * (default) rewrites a trace into Wick's key layout (docs/format.md, "Wick
 *           keys"): a file of the older layout, whose Wick records are lines
 *           of their own (kind wick_*, which candle-graph rejects), becomes
 *           trace/10 candle-graph takes, each such record moved into the
 *           "wick_records" key of the next standard line (the last one for
 *           those after it), every standard line kept as it was. A file
 *           already in the key layout comes out the same.
 * --strict  rewrites a trace as pure candle-graph trace/10 JSONL: Wick
 *           extension records (kind wick_*) and empty lines are dropped, every
 *           other record is re-emitted in candle-graph's writer layout (kind
 *           first, fields in spec order, compact, absent optionals omitted,
 *           defaults written, shortest round-trip floats). The input must
 *           decode; if the result breaks a stream rule the command says so
 *           and exits 2 (the output is kept for inspection).
 * --chrome  writes Chrome trace-event JSON (opens in Perfetto and
 *           chrome://tracing) from the document's track model, as
 *           wick-chrome-export.h describes: threads as tids, device intervals
 *           on the host clock per device stream, counters, instants (Wick
 *           extension records among them), async slices and flows. Times in µs.
 * Exit status: 0 written, 2 input parse error, 3 usage or I/O error.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-export.h"
#include "wick-chrome-import.h"
#include "wick-document.h"
#include "wick-input.h"
#include "wick-json-scanner.h"
#include "wick-trace-commands.h"
#include "wick-trace-record.h"
#include "wick-trace-remote.h"

/* ---- output: a temporary file beside OUT, renamed over it when complete --
 *
 * Every write is checked; the first failure is kept with its reason (a full
 * disk says "No space left on device"), the temporary file is removed and OUT
 * is left as it was: never a partial file under OUT's name. */
typedef struct
{
  char *path, *tmp_path;
  FILE *file;
  int error; /* errno of the first failure, 0 while none */
} Output;

static gboolean
output_open (Output *o, const char *path)
{
  struct stat st;
  mode_t mask;
  int fd;

  memset (o, 0, sizeof *o);
  o->path = g_strdup (path);
  if (g_stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      /* a device, pipe or terminal (/dev/stdout): written directly */
      o->file = fopen (path, "w");
      if (o->file == NULL)
        {
          fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", path, g_strerror (errno));
          g_free (o->path);
          return FALSE;
        }
      return TRUE;
    }
  o->tmp_path = g_strconcat (path, ".wick-XXXXXX", NULL);
  fd = g_mkstemp (o->tmp_path);
  if (fd < 0)
    {
      fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", path, g_strerror (errno));
      g_clear_pointer (&o->tmp_path, g_free);
      g_free (o->path);
      return FALSE;
    }
  mask = umask (0);
  umask (mask);
  fchmod (fd, 0666 & ~mask);
  o->file = fdopen (fd, "w");
  return TRUE;
}

static void
output_write (Output *o, const char *data, gsize len)
{
  if (o->error == 0 && fwrite (data, 1, len, o->file) != len)
    o->error = errno ? errno : EIO;
}

/* Renames the file over OUT when every write worked; FALSE (saying why,
 * OUT untouched) otherwise. */
static gboolean
output_close (Output *o)
{
  gboolean ok;

  if (o->error == 0 && fflush (o->file) != 0)
    o->error = errno;
  if (o->error == 0 && fsync (fileno (o->file)) != 0 && errno != EINVAL)
    o->error = errno;
  if (fclose (o->file) != 0 && o->error == 0)
    o->error = errno;
  if (o->error == 0 && o->tmp_path != NULL && g_rename (o->tmp_path, o->path) != 0)
    o->error = errno;
  ok = o->error == 0;
  if (!ok)
    {
      fprintf (stderr, "wick-trace convert: cannot write %s: %s%s\n", o->path,
               g_strerror (o->error), o->tmp_path ? " (nothing was written)" : "");
      if (o->tmp_path != NULL)
        g_unlink (o->tmp_path);
    }
  g_free (o->path);
  g_free (o->tmp_path);
  return ok;
}

/* The Wick records waiting for a standard line, as the key layout carries
 * them: comma-separated objects. */
static void
keys_add_record (GString *facts, const char *text, gsize len)
{
  if (facts->len > 0)
    g_string_append_c (facts, ',');
  g_string_append_len (facts, text, len);
}

/* A standard line of the key layout: @text with the waiting records added
 * as "wick_records" (into its own array when it has one: the first of a
 * repeated key is the one Wick reads), newline-terminated, into @line. */
static void
keys_line (GString *line, const char *text, gsize len, GString *facts)
{
  g_string_truncate (line, 0);
  if (facts->len == 0 || len < 2 || text[len - 1] != '}')
    {
      g_string_append_len (line, text, len);
      g_string_append_c (line, '\n');
      return;
    }
  const char *key = g_strstr_len (text, (gssize)len, "\"wick_records\":[");
  if (key != NULL)
    {
      /* the line's own array, then its other entries after ours */
      const char *open = key + strlen ("\"wick_records\":[");
      g_string_append_len (line, text, open - text);
      g_string_append_len (line, facts->str, facts->len);
      if (*open != ']')
        g_string_append_c (line, ',');
      g_string_append_len (line, open, text + len - open);
    }
  else
    {
      g_string_append_len (line, text, len - 1);
      g_string_append (line, ",\"wick_records\":[");
      g_string_append_len (line, facts->str, facts->len);
      g_string_append (line, "]}");
    }
  g_string_append_c (line, '\n');
  g_string_truncate (facts, 0);
}

static int
convert_jsonl (const char *in, const char *out_path, gboolean strict)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickInput) input = wick_input_open (in, &error);
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (TRUE);
  g_autoptr (GString) cause = g_string_new (NULL);
  g_autoptr (GString) record = g_string_new (NULL);
  g_autoptr (GByteArray) pending = g_byte_array_new ();
  /* the key layout: the Wick records waiting for a line, and the standard
   * line held back until the next one (those after the last ride on it) */
  g_autoptr (GString) facts = g_string_new (NULL);
  g_autoptr (GString) held = g_string_new (NULL);
  gsize limit = wick_max_line_length (), scanned = 0, start = 0;
  guint64 dropped = 0, written = 0, line_number = 0;
  gboolean eof = FALSE, parse_failed = FALSE;
  Output out;
  char chunk[1 << 16];

  if (input == NULL)
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (!output_open (&out, out_path))
    return WICK_TRACE_EXIT_USAGE;
  wick_document_set_path (doc, in);
  while (!parse_failed && error == NULL && (!eof || pending->len > start))
    {
      guint8 *nl = NULL;
      gsize length;
      const char *text;
      gsize text_len;
      WickRecordKind kind;

      scanned = MAX (scanned, start);
      if (scanned < pending->len)
        nl = memchr (pending->data + scanned, '\n', pending->len - scanned);
      if (nl == NULL && !eof)
        {
          gssize n;
          /* drop the lines done, once per chunk; search only the new bytes */
          g_byte_array_remove_range (pending, 0, (guint)start);
          start = 0;
          scanned = pending->len;
          if (pending->len > limit)
            {
              g_set_error (&error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE,
                           "%s: line %" G_GUINT64_FORMAT
                           " is longer than the maximum of %" G_GSIZE_FORMAT
                           " bytes (raise it with --max-line-bytes)",
                           in, line_number + 1, limit);
              parse_failed = TRUE;
              break;
            }
          n = wick_input_read (input, chunk, sizeof chunk, &error);
          if (n < 0)
            break;
          if (n == 0)
            eof = TRUE;
          g_byte_array_append (pending, (guint8 *)chunk, (guint)n);
          continue;
        }
      length = (nl != NULL ? (gsize)(nl - pending->data) : pending->len) - start;
      line_number++;
      if (length > limit)
        {
          g_set_error (&error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TOO_LARGE,
                       "%s: line %" G_GUINT64_FORMAT
                       " is longer than the maximum of %" G_GSIZE_FORMAT
                       " bytes (raise it with --max-line-bytes)",
                       in, line_number, limit);
          parse_failed = TRUE;
          break;
        }
      if (!wick_document_feed_line (doc, (const char *)pending->data + start, length, &error))
        {
          parse_failed = TRUE;
          break;
        }
      text = (const char *)pending->data + start;
      text_len = length;
      if (text_len > 0 && text[text_len - 1] == '\r')
        text_len--;
      wick_rust_trim (&text, &text_len);
      if (text_len > 0 && wick_trace_decoder_decode (decoder, text, text_len, &kind, cause))
        {
          if (kind == WICK_KIND_EXTENSION)
            {
              dropped++;
              if (!strict)
                keys_add_record (facts, text, text_len);
            }
          else if (strict)
            {
              g_string_truncate (record, 0);
              wick_trace_decoder_write (decoder, kind, record);
              g_string_append_c (record, '\n');
              output_write (&out, record->str, record->len);
              written++;
            }
          else
            {
              output_write (&out, held->str, held->len);
              keys_line (held, text, text_len, facts);
              written++;
            }
        }
      start = MIN (pending->len, start + length + 1);
      scanned = start;
    }
  if (error != NULL && !parse_failed)
    {
      /* an I/O error (or a cut-off compressed file) while reading the input */
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      parse_failed = wick_input_error_is_cut (error);
      if (!parse_failed)
        {
          output_close (&out);
          return WICK_TRACE_EXIT_USAGE;
        }
    }
  if (!strict)
    {
      /* Wick records after the last standard line ride on it */
      if (facts->len > 0 && held->len > 0)
        {
          g_autofree char *last = g_strndup (held->str, held->len - 1);
          keys_line (held, last, strlen (last), facts);
        }
      output_write (&out, held->str, held->len);
    }
  if (!output_close (&out))
    return WICK_TRACE_EXIT_USAGE;
  if (parse_failed)
    {
      /* the records before the error are kept, as the other views keep them */
      if (!wick_input_error_is_cut (error))
        fprintf (stderr, "wick-trace convert: %s\n", error->message);
      fprintf (stderr,
               "wrote the %" G_GUINT64_FORMAT
               " records read before the error to %s (%s %" G_GUINT64_FORMAT
               " Wick extension records); the trace is incomplete\n",
               written, out_path, strict ? "dropped" : "with", dropped);
      return WICK_TRACE_EXIT_PARSE;
    }
  if (strict)
    fprintf (stderr,
             "wrote %" G_GUINT64_FORMAT " records to %s, dropped %" G_GUINT64_FORMAT
             " Wick extension records\n",
             written, out_path, dropped);
  else
    fprintf (stderr,
             "wrote %" G_GUINT64_FORMAT " records to %s, %" G_GUINT64_FORMAT
             " Wick extension lines moved into wick_records keys\n",
             written, out_path, dropped);
  g_clear_error (&error);
  if (!wick_document_finish (doc, &error))
    {
      fprintf (stderr, "wick-trace convert: candle-graph would still reject %s: %s\n", out_path,
               error->message);
      return WICK_TRACE_EXIT_PARSE;
    }
  return WICK_TRACE_EXIT_OK;
}

/* ---- Chrome trace-event JSON (wick-chrome-export.h) ---------------------- */

static gboolean
write_output (const char *data, gsize len, gpointer user_data, GError **error)
{
  Output *o = user_data;
  (void)error; /* the first failure is kept in the Output and said by output_close */
  output_write (o, data, len);
  return o->error == 0;
}

static int
convert_chrome (const char *in, const char *out_path)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  int status = WICK_TRACE_EXIT_OK;
  Output output;

  if (!wick_document_load_file_auto (doc, in, NULL, NULL, NULL, &error))
    {
      if (!wick_document_get_parse_error (doc)->failed)
        {
          fprintf (stderr, "wick-trace convert: %s\n", error->message);
          return WICK_TRACE_EXIT_USAGE;
        }
      fprintf (stderr, "wick-trace convert: %s (converting what was read before it)\n",
               error->message);
      g_clear_error (&error);
      status = WICK_TRACE_EXIT_PARSE;
    }
  if (!output_open (&output, out_path))
    return WICK_TRACE_EXIT_USAGE;
  wick_chrome_export (doc, write_output, &output, NULL);
  if (!output_close (&output))
    return WICK_TRACE_EXIT_USAGE;
  return status;
}

int
wick_trace_convert (int argc, char **argv)
{
  gboolean strict = FALSE, chrome = FALSE;
  g_autofree char *out = NULL;
  const GOptionEntry entries[] = {
    { "strict", 0, 0, G_OPTION_ARG_NONE, &strict,
      "Pure candle-graph trace/10 JSONL: Wick extension records dropped, the rest in "
      "candle-graph's layout",
      NULL },
    { "chrome", 0, 0, G_OPTION_ARG_NONE, &chrome,
      "Chrome trace-event JSON (Perfetto, chrome://tracing); .json.gz is compressed", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "The file to write (required)", "OUT" },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "convert", "IN",
    "Rewrite a trace. Without an option: into Wick's key layout (a file whose Wick records are\n"
    "lines of kind wick_* becomes trace/10 candle-graph reads, the records in wick_records keys).\n"
    "OUT is written whole or not at all.\n"
    "Exit status: 0 written, 2 input parse error, 3 usage or I/O error.",
    entries, FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (strict && chrome)
    return wick_trace_usage_error ("convert", "--strict and --chrome cannot be combined");
  if (out == NULL)
    return wick_trace_usage_error ("convert", "--output is required");
  if (argc != 2)
    return wick_trace_usage_error ("convert", argc < 2 ? "an input file IN is required"
                                                       : "only one input file may be given");
  if (wick_trace_remotes != NULL)
    {
      /* IN is the node's: read into a local copy, converted as a local file
       * is (the same output, OUT written here), the copy removed after. */
      g_autofree char *directory = NULL;
      g_autofree char *local = wick_trace_remote_fetch (argv[1], &directory);
      if (local == NULL)
        return WICK_TRACE_EXIT_USAGE;
      int status = chrome ? convert_chrome (local, out) : convert_jsonl (local, out, strict);
      g_unlink (local);
      g_rmdir (directory);
      return status;
    }
  if (chrome)
    return convert_chrome (argv[1], out);
  return convert_jsonl (argv[1], out, strict);
}
