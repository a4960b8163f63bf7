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
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "wick-document.h"
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

static int
convert_strict (const char *in, const char *out_path)
{
  g_autoptr (GFile) file = g_file_new_for_commandline_arg (in);
  g_autoptr (GError) error = NULL;
  g_autoptr (GFileInputStream) stream = g_file_read (file, NULL, &error);
  g_autoptr (GDataInputStream) data = NULL;
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickTraceDecoder) decoder = wick_trace_decoder_new (TRUE);
  g_autoptr (GString) cause = g_string_new (NULL);
  g_autoptr (GString) record = g_string_new (NULL);
  guint64 dropped = 0, written = 0;
  FILE *out;
  char *line;
  gsize length;

  if (stream == NULL)
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
  out = fopen (out_path, "w");
  if (out == NULL)
    {
      fprintf (stderr, "wick-trace convert: cannot write %s: %s\n", out_path, g_strerror (errno));
      return WICK_TRACE_EXIT_USAGE;
    }
  data = g_data_input_stream_new (G_INPUT_STREAM (stream));
  g_buffered_input_stream_set_buffer_size (G_BUFFERED_INPUT_STREAM (data), 1 << 20);
  while ((line = g_data_input_stream_read_upto (data, "\n", 1, &length, NULL, &error)) != NULL)
    {
      const char *text = line;
      gsize text_len = length;
      WickRecordKind kind;

      g_data_input_stream_read_byte (data, NULL, NULL);
      if (!wick_document_feed_line (doc, line, length, &error))
        {
          g_free (line);
          break;
        }
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
              fwrite (record->str, 1, record->len, out);
              written++;
            }
        }
      g_free (line);
    }
  if (fclose (out) != 0)
    {
      fprintf (stderr, "wick-trace convert: cannot write %s\n", out_path);
      return WICK_TRACE_EXIT_USAGE;
    }
  if (error != NULL)
    {
      const WickParseError *pe = wick_document_get_parse_error (doc);
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      g_unlink (out_path);
      return pe->failed ? WICK_TRACE_EXIT_PARSE : WICK_TRACE_EXIT_USAGE;
    }
  fprintf (stderr,
           "wrote %" G_GUINT64_FORMAT " records to %s, dropped %" G_GUINT64_FORMAT
           " Wick extension records\n",
           written, out_path, dropped);
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

  if (!wick_document_load_file (doc, in, NULL, NULL, NULL, &error))
    {
      if (!wick_document_get_parse_error (doc)->failed)
        {
          fprintf (stderr, "wick-trace convert: %s\n", error->message);
          return WICK_TRACE_EXIT_USAGE;
        }
      fprintf (stderr, "wick-trace convert: %s (converting what was read before it)\n",
               error->message);
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
  if (!g_file_set_contents (out_path, out->str, (gssize)out->len, &error))
    {
      fprintf (stderr, "wick-trace convert: %s\n", error->message);
      return WICK_TRACE_EXIT_USAGE;
    }
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
