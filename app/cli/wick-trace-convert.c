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
#include "wick-tracks.h"
#include <math.h>

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

/* ---- the track model as Chrome JSON -------------------------------------
 *
 * Every track of the document's model (wick-tracks.h), whatever the input
 * format: processes and threads as pids and tids with process_name /
 * thread_name metadata; slices as X (a B never closed as B) on their thread;
 * device intervals as X on a tid per device stream (named by the track) in
 * their process, named by kernel or op; counters as C; instants as i with
 * their scope; async slices as b/e (steps as n); flows as s/f pairs with
 * bp "e". Times are µs from the trace's origin (a Chrome input keeps its
 * own clock). */
#define EXPORT_DEVICE_TID_BASE 1000000000

static gboolean
is_device_category (const char *cat)
{
  static const char *const known[] = { "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                                       "Kernel", "Memcpy", "Memset", "gpu_op" };
  for (guint i = 0; cat != NULL && i < G_N_ELEMENTS (known); i++)
    if (strcmp (cat, known[i]) == 0)
      return TRUE;
  return FALSE;
}

static void
append_ts (GString *out, gint64 origin, guint64 t)
{
  gint64 ns = origin + (gint64)MIN (t, (guint64)G_MAXINT64 / 2);

  if (ns < 0)
    {
      g_string_append_c (out, '-');
      ns = -ns;
    }
  g_string_append_printf (out, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int)(ns % 1000));
}

static void
append_opt_str (GString *out, WickDocument *doc, const char *key, WickStr str)
{
  if (str == 0)
    return;
  g_string_append_printf (out, ",\"%s\":", key);
  append_str (out, doc, str);
}

static void
append_args (GString *out, const char *args)
{
  if (args != NULL && args[0] == '{')
    {
      g_string_append (out, ",\"args\":");
      g_string_append (out, args);
    }
}

typedef struct
{
  WickDocument *doc;
  WickTracks *t;
  const WickTrack *tracks;
  const WickProcess *processes;
  const WickThread *threads;
  gint64 origin;
  GString *out;
  gboolean *first;
} Export;

static gint64
track_pid (Export *x, guint32 track)
{
  const WickTrack *k = &x->tracks[track];
  if (k->process >= 0)
    return x->processes[k->process].pid;
  return 0;
}

static gint64
track_tid (Export *x, guint32 track)
{
  const WickTrack *k = &x->tracks[track];
  if (k->thread >= 0)
    return x->threads[k->thread].tid;
  return EXPORT_DEVICE_TID_BASE + track;
}

static void
event_head (Export *x, const char *ph, guint32 track, guint64 t, WickStr name)
{
  begin_event (x->out, x->first);
  g_string_append_printf (x->out, "{\"ph\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":",
                          ph, track_pid (x, track), track_tid (x, track));
  append_ts (x->out, x->origin, t);
  if (name != 0)
    {
      g_string_append (x->out, ",\"name\":");
      append_str (x->out, x->doc, name);
    }
}

static void
chrome_tracks (GString *out, gboolean *first, WickDocument *doc)
{
  WickTracks *t = wick_document_get_tracks (doc);
  Export x = { doc, t, NULL, NULL, NULL, wick_tracks_get_origin_ns (t), out, first };
  guint n_tracks, n_processes, n_threads, n, n_spans;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  guint64 end = wick_tracks_get_end_ns (t);

  x.tracks = wick_tracks_get_tracks (t, &n_tracks);
  x.processes = wick_tracks_get_processes (t, &n_processes);
  x.threads = wick_tracks_get_threads (t, &n_threads);
  for (guint i = 0; i < n_processes; i++)
    if (x.processes[i].name != 0)
      {
        begin_event (out, first);
        g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" G_GINT64_FORMAT ",\"args\":{\"name\":",
                                x.processes[i].pid);
        append_str (out, doc, x.processes[i].name);
        g_string_append (out, "}}");
      }
  for (guint i = 0; i < n_threads; i++)
    if (x.threads[i].name != 0)
      {
        begin_event (out, first);
        g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"args\":{\"name\":",
                                x.processes[x.threads[i].process].pid, x.threads[i].tid);
        append_str (out, doc, x.threads[i].name);
        g_string_append (out, "}}");
      }
  for (guint i = 0; i < n_tracks; i++)
    if (x.tracks[i].kind == WICK_TRACK_DEVICE && x.tracks[i].name != 0)
      {
        begin_event (out, first);
        g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"args\":{\"name\":",
                                track_pid (&x, i), track_tid (&x, i));
        append_str (out, doc, x.tracks[i].name);
        g_string_append (out, "}}");
      }
  /* slices: the spans on a slices track */
  for (guint i = 0; i < n_spans; i++)
    {
      guint32 track = wick_tracks_span_track (t, i);
      WickEventRef ref = { WICK_EVENT_SLICE, i };
      gboolean open;
      if (track >= n_tracks || x.tracks[track].kind != WICK_TRACK_SLICES)
        continue;
      open = wick_tracks_event_is_open (t, ref);
      event_head (&x, open ? "B" : "X", track, spans[i].start_ns, spans[i].name);
      if (!open)
        {
          g_string_append (out, ",\"dur\":");
          append_us (out, spans[i].duration_ns);
        }
      append_args (out, wick_tracks_event_args (t, ref));
      g_string_append_c (out, '}');
    }
  {
    const WickDeviceSlice *d = wick_tracks_get_device_slices (t, &n);
    for (guint i = 0; i < n; i++)
      {
        WickEventRef ref = { WICK_EVENT_DEVICE, i };
        event_head (&x, "X", d[i].track, d[i].start_ns, d[i].name);
        /* a category that says "device" to importers (Perfetto and Wick) */
        if (is_device_category (wick_document_str (doc, d[i].category)))
          append_opt_str (out, doc, "cat", d[i].category);
        else
          g_string_append (out, ",\"cat\":\"kernel\"");
        g_string_append (out, ",\"dur\":");
        append_us (out, d[i].duration_ns);
        append_args (out, wick_tracks_event_args (t, ref));
        g_string_append_c (out, '}');
      }
  }
  {
    const WickCounterSample *c = wick_tracks_get_counter_samples (t, &n);
    for (guint i = 0; i < n; i++)
      {
        begin_event (out, first);
        g_string_append_printf (out, "{\"ph\":\"C\",\"pid\":%" G_GINT64_FORMAT ",\"ts\":",
                                track_pid (&x, c[i].track));
        append_ts (out, x.origin, c[i].timestamp_ns);
        {
          /* "name key" as the importer names a series: name, and key in args */
          const char *series = wick_document_str (doc, x.tracks[c[i].track].name);
          const char *space = series ? strrchr (series, ' ') : NULL;
          g_string_append (out, ",\"name\":");
          if (space != NULL)
            {
              wick_json_append_string (out, series, (gsize)(space - series));
              g_string_append (out, ",\"args\":{");
              wick_json_append_string (out, space + 1, strlen (space + 1));
              g_string_append_c (out, ':');
            }
          else
            {
              wick_json_append_string (out, series ? series : "", series ? strlen (series) : 0);
              g_string_append (out, ",\"args\":{\"value\":");
            }
        }
        if (isfinite (c[i].value))
          wick_json_format_f64 (out, c[i].value);
        else
          g_string_append (out, "0");
        g_string_append (out, "}}");
      }
  }
  {
    const WickInstant *in = wick_tracks_get_instants (t, &n);
    static const char scopes[] = { 't', 'p', 'g' };
    for (guint i = 0; i < n; i++)
      {
        WickEventRef ref = { WICK_EVENT_INSTANT, i };
        event_head (&x, "i", in[i].track, in[i].timestamp_ns, in[i].name);
        g_string_append_printf (out, ",\"s\":\"%c\"", scopes[MIN (in[i].scope, 2)]);
        append_opt_str (out, doc, "cat", in[i].category);
        append_args (out, wick_tracks_event_args (t, ref));
        g_string_append_c (out, '}');
      }
  }
  {
    const WickAsyncSlice *as = wick_tracks_get_async (t, &n);
    for (guint i = 0; i < n; i++)
      {
        WickEventRef ref = { WICK_EVENT_ASYNC, i };
        const char *id = wick_document_str (doc, as[i].id);
        for (int edge = 0; edge < (as[i].instant ? 1 : 2); edge++)
          {
            if (edge == 1 && !(as[i].flags & WICK_SPAN_FLAG_CLOSED))
              break;
            begin_event (out, first);
            g_string_append_printf (out, "{\"ph\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"ts\":",
                                    as[i].instant ? "n" : edge == 0 ? "b" : "e",
                                    track_pid (&x, as[i].track));
            append_ts (out, x.origin, as[i].start_ns + (edge == 1 ? as[i].duration_ns : 0));
            g_string_append (out, ",\"name\":");
            append_str (out, doc, as[i].name);
            g_string_append (out, ",\"cat\":");
            append_str (out, doc, as[i].category);
            g_string_append (out, ",\"id\":");
            wick_json_append_string (out, id ? id : "", id ? strlen (id) : 0);
            if (edge == 0)
              append_args (out, wick_tracks_event_args (t, ref));
            g_string_append_c (out, '}');
          }
      }
    (void)end;
  }
  {
    const WickFlow *f = wick_tracks_get_flows (t, &n);
    for (guint i = 0; i < n; i++)
      for (int edge = 0; edge < 2; edge++)
        {
          const WickFlowEnd *e = edge == 0 ? &f[i].from : &f[i].to;
          if (e->track >= n_tracks)
            continue;
          event_head (&x, edge == 0 ? "s" : "f", e->track, e->timestamp_ns, f[i].name ? f[i].name : 0);
          if (f[i].name == 0)
            g_string_append (out, ",\"name\":\"flow\"");
          g_string_append (out, ",\"cat\":");
          if (f[i].category != 0)
            append_str (out, doc, f[i].category);
          else
            g_string_append (out, "\"flow\"");
          g_string_append_printf (out, ",\"id\":%u%s}", i, edge == 1 ? ",\"bp\":\"e\"" : "");
        }
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
  chrome_tracks (out, &first, doc);
  if (wick_chrome_info_get (doc) == NULL)
    {
      /* a candle-graph trace: its extension records too (its memory planes
       * are counter tracks of the model) */
      metadata (out, &first, "thread_name", PID_HOST, TID_WICK, "wick");
      chrome_extensions (out, &first, doc);
    }
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
