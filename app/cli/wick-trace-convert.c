/* wick-trace-convert.c — `wick-trace convert --strict|--chrome IN --output OUT`.
 *
 * --strict  rewrites a trace as pure candle-graph trace/10 JSONL: Wick
 *           extension records (kind wick_*) and empty lines are dropped, every
 *           other record is re-emitted in candle-graph's writer layout (kind
 *           first, fields in spec order, compact, absent optionals omitted,
 *           defaults written, shortest round-trip floats). The input must
 *           decode; if the result breaks a stream rule the command says so
 *           and exits 2 (the output is kept for inspection).
 * --chrome  writes Chrome trace-event JSON (opens in Perfetto and
 *           chrome://tracing): spans as complete events on the host track,
 *           ops on their own track, device intervals per device stream,
 *           logical memory per category and device memory samples as counters,
 *           Wick extension records as instant events. Times in µs.
 * Exit status: 0 written, 2 input parse error, 3 usage or I/O error.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-document.h"
#include "wick-input.h"
#include "wick-json-scanner.h"
#include "wick-memory-series.h"
#include "wick-trace-commands.h"
#include "wick-trace-record.h"

static int
usage (void)
{
  fprintf (stderr, "Usage: wick-trace convert --strict|--chrome IN --output OUT\n");
  return WICK_TRACE_EXIT_USAGE;
}

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

static int
convert_strict (const char *in, const char *out_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (WickInput) input = wick_input_open (in, &error);
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (TRUE);
  g_autoptr (GString) cause = g_string_new (NULL);
  g_autoptr (GString) record = g_string_new (NULL);
  g_autoptr (GByteArray) pending = g_byte_array_new ();
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
              g_set_error (&error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
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
          g_set_error (&error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
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
            dropped++;
          else
            {
              g_string_truncate (record, 0);
              wick_trace_decoder_write (decoder, kind, record);
              g_string_append_c (record, '\n');
              output_write (&out, record->str, record->len);
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
      parse_failed = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT);
      if (!parse_failed)
        {
          output_close (&out);
          return WICK_TRACE_EXIT_USAGE;
        }
    }
  if (!output_close (&out))
    return WICK_TRACE_EXIT_USAGE;
  if (parse_failed)
    {
      /* the records before the error are kept, as the other views keep them */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
        fprintf (stderr, "wick-trace convert: %s\n", error->message);
      fprintf (stderr,
               "wrote the %" G_GUINT64_FORMAT " records read before the error to %s (dropped %"
               G_GUINT64_FORMAT " Wick extension records); the trace is incomplete\n",
               written, out_path, dropped);
      return WICK_TRACE_EXIT_PARSE;
    }
  fprintf (stderr,
           "wrote %" G_GUINT64_FORMAT " records to %s, dropped %" G_GUINT64_FORMAT
           " Wick extension records\n",
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

/* ---- Chrome trace-event JSON ------------------------------------------ */

enum
{
  PID_HOST = 1,
  PID_DEVICE = 2
};
enum
{
  TID_SPANS = 1,
  TID_OPS = 2,
  TID_WICK = 3
};

static void
append_us (GString *out, guint64 ns)
{
  g_string_append_printf (out, "%" G_GUINT64_FORMAT ".%03u", ns / 1000, (guint)(ns % 1000));
}

static void
append_str (GString *out, WickDocument *doc, WickStr str)
{
  wick_json_append_string (out, wick_document_str (doc, str) ? wick_document_str (doc, str) : "",
                           wick_document_str_len (doc, str));
}

static void
begin_event (GString *out, gboolean *first)
{
  g_string_append (out, *first ? "\n" : ",\n");
  *first = FALSE;
}

static void
metadata (GString *out, gboolean *first, const char *what, int pid, int tid, const char *name)
{
  begin_event (out, first);
  g_string_append_printf (
    out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what, pid, tid);
  wick_json_append_string (out, name, strlen (name));
  g_string_append (out, "}}");
}

static void
chrome_spans (GString *out, gboolean *first, WickDocument *doc)
{
  static const char *const kinds[] = { "function", "op", "module" };
  static const char *const steps[] = { "", "forward", "backward", "optimizer" };
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  guint64 end = wick_document_get_end_ns (doc);

  for (guint i = 0; i < n; i++)
    {
      const WickSpan *s = &spans[i];
      guint64 dur = s->flags & WICK_SPAN_FLAG_CLOSED ? s->duration_ns
                                                     : (end > s->start_ns ? end - s->start_ns : 0);
      begin_event (out, first);
      g_string_append (out, "{\"name\":");
      append_str (out, doc, s->name);
      g_string_append_printf (out,
                              ",\"cat\":\"span,%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
                              kinds[MIN (s->kind, 2)], PID_HOST, TID_SPANS);
      append_us (out, s->start_ns);
      g_string_append (out, ",\"dur\":");
      append_us (out, dur);
      g_string_append (out, ",\"args\":{\"id\":");
      append_str (out, doc, s->id);
      if (s->parent_id)
        {
          g_string_append (out, ",\"parent_id\":");
          append_str (out, doc, s->parent_id);
        }
      if (s->step)
        g_string_append_printf (out, ",\"step\":\"%s\"", steps[MIN (s->step, 3)]);
      if (s->flags & WICK_SPAN_FLAG_MEASURED)
        g_string_append (out, ",\"measured\":true");
      if (!(s->flags & WICK_SPAN_FLAG_CLOSED))
        g_string_append (out, ",\"open\":true");
      g_string_append (out, "}}");
    }
}

static void
chrome_ops (GString *out, gboolean *first, WickDocument *doc)
{
  guint n;
  const WickOp *ops = wick_document_get_ops (doc, &n);

  for (guint i = 0; i < n; i++)
    {
      begin_event (out, first);
      g_string_append (out, "{\"name\":");
      append_str (out, doc, ops[i].op_name);
      g_string_append_printf (
        out, ",\"cat\":\"op\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", PID_HOST, TID_OPS);
      append_us (out, ops[i].timestamp_ns);
      g_string_append (out, ",\"dur\":");
      append_us (out, ops[i].duration_ns);
      g_string_append (out, ",\"args\":{\"span_id\":");
      append_str (out, doc, ops[i].span_id);
      g_string_append (out, ",\"dtype\":");
      append_str (out, doc, ops[i].dtype);
      g_string_append_printf (out, ",\"output_dense_bytes\":%" G_GUINT64_FORMAT "}}",
                              ops[i].output_dense_bytes);
    }
}

static void
chrome_device_intervals (GString *out, gboolean *first, WickDocument *doc)
{
  guint n;
  const WickDeviceInterval *d = wick_document_get_device_intervals (doc, &n);
  g_autoptr (GHashTable) tracks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *track
        = g_strdup_printf ("%s stream %s", wick_document_str (doc, d[i].device),
                           wick_document_str (doc, d[i].stream_id));
      guint tid = GPOINTER_TO_UINT (g_hash_table_lookup (tracks, track));
      if (tid == 0)
        {
          tid = g_hash_table_size (tracks) + 1;
          metadata (out, first, "thread_name", PID_DEVICE, (int)tid, track);
          g_hash_table_insert (tracks, g_strdup (track), GUINT_TO_POINTER (tid));
        }
      begin_event (out, first);
      g_string_append (out, "{\"name\":");
      append_str (out, doc, d[i].span_id);
      g_string_append_printf (
        out, ",\"cat\":\"device\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":", PID_DEVICE, tid);
      append_us (out, d[i].start_ns);
      g_string_append (out, ",\"dur\":");
      append_us (out, d[i].duration_ns);
      g_string_append (out, ",\"args\":{\"clock_id\":");
      append_str (out, doc, d[i].clock_id);
      g_string_append (out, ",\"backend\":");
      append_str (out, doc, d[i].backend);
      g_string_append (out, "}}");
    }
}

static void
chrome_memory (GString *out, gboolean *first, WickDocument *doc)
{
  g_autoptr (GPtrArray) logical = wick_memory_series_build (doc);
  g_autoptr (GPtrArray) physical = wick_device_memory_series_build (doc);

  for (guint i = 0; i < logical->len; i++)
    {
      const WickMemorySeries *s = g_ptr_array_index (logical, i);
      for (guint p = 0; p < s->points->len; p++)
        {
          const WickMemoryPoint *pt = &g_array_index (s->points, WickMemoryPoint, p);
          begin_event (out, first);
          g_string_append (out, "{\"name\":\"logical memory ");
          g_string_append (out, wick_document_str (doc, s->device));
          g_string_append_printf (out, "\",\"ph\":\"C\",\"pid\":%d,\"ts\":", PID_HOST);
          append_us (out, pt->t_ns);
          g_string_append (out, ",\"args\":{");
          for (int c = 0; c < WICK_N_CATEGORIES; c++)
            g_string_append_printf (out, "%s\"%s\":%" G_GUINT64_FORMAT, c ? "," : "",
                                    wick_memory_category_to_string (c), pt->live[c]);
          g_string_append (out, "}}");
        }
    }
  for (guint i = 0; i < physical->len; i++)
    {
      const WickDeviceMemorySeries *s = g_ptr_array_index (physical, i);
      for (int k = 0; k < WICK_N_DEVICE_SERIES; k++)
        for (guint p = 0; p < s->series[k]->len; p++)
          {
            const WickSamplePoint *pt = &g_array_index (s->series[k], WickSamplePoint, p);
            begin_event (out, first);
            g_string_append_printf (
              out, "{\"name\":\"device memory %s %s\",\"ph\":\"C\",\"pid\":%d,\"ts\":",
              wick_document_str (doc, s->device), wick_device_series_to_string (k), PID_DEVICE);
            append_us (out, pt->t_ns);
            g_string_append_printf (out, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}}", pt->value);
          }
    }
}

static void
chrome_extensions (GString *out, gboolean *first, WickDocument *doc)
{
  guint n;
  const WickExtensionRecord *records = wick_document_get_extensions (doc, &n);

  for (guint i = 0; i < n; i++)
    {
      begin_event (out, first);
      g_string_append (out, "{\"name\":");
      append_str (out, doc, records[i].kind);
      g_string_append_printf (
        out, ",\"cat\":\"wick\",\"ph\":\"i\",\"s\":\"g\",\"pid\":%d,\"tid\":%d,\"ts\":", PID_HOST,
        TID_WICK);
      append_us (out, records[i].timestamp_ns);
      g_string_append_printf (out, ",\"args\":{\"line\":%u}}", records[i].line);
    }
}

static int
convert_chrome (const char *in, const char *out_path)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new ("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  gboolean first = TRUE;
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
  metadata (out, &first, "process_name", PID_HOST, 0, "host");
  metadata (out, &first, "process_name", PID_DEVICE, 0, "device");
  metadata (out, &first, "thread_name", PID_HOST, TID_SPANS, "spans");
  metadata (out, &first, "thread_name", PID_HOST, TID_OPS, "ops");
  metadata (out, &first, "thread_name", PID_HOST, TID_WICK, "wick");
  chrome_spans (out, &first, doc);
  chrome_ops (out, &first, doc);
  chrome_device_intervals (out, &first, doc);
  chrome_memory (out, &first, doc);
  chrome_extensions (out, &first, doc);
  g_string_append (out, "\n]}\n");
  if (!output_open (&output, out_path))
    return WICK_TRACE_EXIT_USAGE;
  output_write (&output, out->str, out->len);
  if (!output_close (&output))
    return WICK_TRACE_EXIT_USAGE;
  return status;
}

int
wick_trace_convert (int argc, char **argv)
{
  const char *mode = NULL, *in = NULL, *out = NULL;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--strict") == 0 || strcmp (argv[i], "--chrome") == 0)
        {
          if (mode != NULL)
            return usage ();
          mode = argv[i];
        }
      else if (strcmp (argv[i], "--output") == 0 || strcmp (argv[i], "-o") == 0)
        {
          if (++i >= argc)
            return usage ();
          out = argv[i];
        }
      else if (g_str_has_prefix (argv[i], "--output="))
        out = argv[i] + strlen ("--output=");
      else if (argv[i][0] == '-' || in != NULL)
        return usage ();
      else
        in = argv[i];
    }
  if (mode == NULL || in == NULL || out == NULL)
    return usage ();
  if (strcmp (mode, "--strict") == 0)
    return convert_strict (in, out);
  return convert_chrome (in, out);
}
