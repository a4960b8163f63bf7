/* wick-chrome-export.c — the track model as Chrome trace-event JSON.
 *
 * See wick-chrome-export.h for what is written. Events go into one GString
 * that is handed to the caller's write function whenever it holds about
 * 1 MiB, so the output is never held whole. */
#include "config.h"

#include "wick-chrome-export.h"

#include <math.h>
#include <string.h>

#include "wick-device-clock.h"
#include "wick-json-scanner.h"
#include "wick-tracks.h"

#define EXPORT_DEVICE_TID_BASE 1000000000
#define EXPORT_FLUSH_BYTES (1u << 20)

typedef struct
{
  WickDocument *doc;
  WickTracks *t;
  const WickTrack *tracks;
  guint n_tracks;
  const WickProcess *processes;
  const WickThread *threads;
  gint64 origin;
  GString *out;
  gboolean first;
  WickChromeExportWriteFunc write;
  gpointer user_data;
  GError *error; /* the first failed write; nothing more is written after it */
  WickDeviceClocks *clocks;
} Export;

/* ---- writing -------------------------------------------------------------- */

static gint64
clamp_ns (guint64 ns)
{
  return (gint64)MIN (ns, (guint64)G_MAXINT64 / 4);
}

static void
flush (Export *x, gboolean always)
{
  if (x->error == NULL && x->out->len > 0 && (always || x->out->len >= EXPORT_FLUSH_BYTES))
    x->write (x->out->str, x->out->len, x->user_data, &x->error);
  if (always || x->out->len >= EXPORT_FLUSH_BYTES)
    g_string_truncate (x->out, 0);
}

static void
begin_event (Export *x)
{
  flush (x, FALSE);
  g_string_append (x->out, x->first ? "\n" : ",\n");
  x->first = FALSE;
}

static void
append_str (Export *x, WickStr str)
{
  const char *s = wick_document_str (x->doc, str);
  wick_json_append_string (x->out, s ? s : "", s ? wick_document_str_len (x->doc, str) : 0);
}

static void
append_text (Export *x, const char *s)
{
  wick_json_append_string (x->out, s ? s : "", s ? strlen (s) : 0);
}

static void
append_us (GString *out, guint64 ns)
{
  g_string_append_printf (out, "%" G_GUINT64_FORMAT ".%03u", ns / 1000, (guint)(ns % 1000));
}

/* µs of model time @t (plus @offset ns) on the trace's own clock. */
static void
append_ts (Export *x, guint64 t, gint64 offset)
{
  gint64 ns = x->origin + clamp_ns (t) + offset;

  if (ns < 0)
    {
      g_string_append_c (x->out, '-');
      ns = -ns;
    }
  g_string_append_printf (x->out, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int)(ns % 1000));
}

static void
append_opt_str (Export *x, const char *key, WickStr str)
{
  if (str == 0)
    return;
  g_string_append_printf (x->out, ",\"%s\":", key);
  append_str (x, str);
}

static void
append_args (Export *x, const char *args)
{
  if (args != NULL && args[0] == '{')
    {
      g_string_append (x->out, ",\"args\":");
      g_string_append (x->out, args);
    }
}

static gboolean
is_device_category (const char *cat)
{
  static const char *const known[] = { "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                                       "Kernel", "Memcpy",     "Memset",     "gpu_op" };
  for (guint i = 0; cat != NULL && i < G_N_ELEMENTS (known); i++)
    if (strcmp (cat, known[i]) == 0)
      return TRUE;
  return FALSE;
}

static gint64
track_pid (Export *x, guint32 track)
{
  const WickTrack *k = &x->tracks[track];
  return k->process >= 0 ? x->processes[k->process].pid : 0;
}

static gint64
track_tid (Export *x, guint32 track)
{
  const WickTrack *k = &x->tracks[track];
  return k->thread >= 0 ? x->threads[k->thread].tid : EXPORT_DEVICE_TID_BASE + track;
}

static void
event_head (Export *x, const char *ph, guint32 track, guint64 t, gint64 offset, WickStr name)
{
  begin_event (x);
  g_string_append_printf (
    x->out, "{\"ph\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":", ph,
    track_pid (x, track), track_tid (x, track));
  append_ts (x, t, offset);
  if (name != 0)
    {
      g_string_append (x->out, ",\"name\":");
      append_str (x, name);
    }
}

static void
name_metadata (Export *x, const char *what, gint64 pid, const gint64 *tid, WickStr name)
{
  begin_event (x);
  g_string_append_printf (x->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" G_GINT64_FORMAT, what,
                          pid);
  if (tid != NULL)
    g_string_append_printf (x->out, ",\"tid\":%" G_GINT64_FORMAT, *tid);
  g_string_append (x->out, ",\"args\":{\"name\":");
  append_str (x, name);
  g_string_append (x->out, "}}");
}

static void
write_metadata (Export *x, guint n_processes, guint n_threads)
{
  for (guint i = 0; i < n_processes; i++)
    if (x->processes[i].name != 0)
      name_metadata (x, "process_name", x->processes[i].pid, NULL, x->processes[i].name);
  for (guint i = 0; i < n_threads; i++)
    if (x->threads[i].name != 0)
      name_metadata (x, "thread_name", x->processes[x->threads[i].process].pid, &x->threads[i].tid,
                     x->threads[i].name);
  for (guint i = 0; i < x->n_tracks; i++)
    if (x->tracks[i].kind == WICK_TRACK_DEVICE && x->tracks[i].name != 0)
      {
        gint64 tid = track_tid (x, i);
        name_metadata (x, "thread_name", track_pid (x, i), &tid, x->tracks[i].name);
      }
}

static void
write_slices (Export *x)
{
  guint n_spans;
  const WickSpan *spans = wick_document_get_spans (x->doc, &n_spans);

  for (guint i = 0; i < n_spans; i++)
    {
      guint32 track = wick_tracks_span_track (x->t, i);
      WickEventRef ref = { WICK_EVENT_SLICE, i };
      if (track >= x->n_tracks || x->tracks[track].kind != WICK_TRACK_SLICES)
        continue;
      gboolean open = wick_tracks_event_is_open (x->t, ref);
      event_head (x, open ? "B" : "X", track, spans[i].start_ns, 0, spans[i].name);
      if (!open)
        {
          g_string_append (x->out, ",\"dur\":");
          append_us (x->out, spans[i].duration_ns);
        }
      append_args (x, wick_tracks_event_args (x->t, ref));
      g_string_append_c (x->out, '}');
    }
}

static void
write_device (Export *x)
{
  guint n, n_intervals;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (x->t, &n);
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (x->doc, &n_intervals);

  for (guint i = 0; i < n; i++)
    {
      WickEventRef ref = { WICK_EVENT_DEVICE, i };
      gint64 offset = d[i].source >= 0 && (guint)d[i].source < n_intervals
                        ? wick_device_clocks_get_offset (x->clocks, intervals[d[i].source].clock_id)
                        : 0;
      event_head (x, "X", d[i].track, d[i].start_ns, offset, d[i].name);
      /* a category that says "device" to importers (Perfetto and Wick) */
      if (is_device_category (wick_document_str (x->doc, d[i].category)))
        append_opt_str (x, "cat", d[i].category);
      else
        g_string_append (x->out, ",\"cat\":\"kernel\"");
      g_string_append (x->out, ",\"dur\":");
      append_us (x->out, d[i].duration_ns);
      append_args (x, wick_tracks_event_args (x->t, ref));
      g_string_append_c (x->out, '}');
    }
}

static void
write_counters (Export *x)
{
  guint n;
  const WickCounterSample *c = wick_tracks_get_counter_samples (x->t, &n);

  for (guint i = 0; i < n; i++)
    {
      /* "name key" as the importer names a series: name, and key in args */
      const char *series = wick_document_str (x->doc, x->tracks[c[i].track].name);
      const char *space = series ? strrchr (series, ' ') : NULL;
      begin_event (x);
      g_string_append_printf (
        x->out, "{\"ph\":\"C\",\"pid\":%" G_GINT64_FORMAT ",\"ts\":", track_pid (x, c[i].track));
      append_ts (x, c[i].timestamp_ns, 0);
      g_string_append (x->out, ",\"name\":");
      if (space != NULL)
        {
          wick_json_append_string (x->out, series, (gsize)(space - series));
          g_string_append (x->out, ",\"args\":{");
          append_text (x, space + 1);
          g_string_append_c (x->out, ':');
        }
      else
        {
          append_text (x, series);
          g_string_append (x->out, ",\"args\":{\"value\":");
        }
      if (isfinite (c[i].value))
        wick_json_format_f64 (x->out, c[i].value);
      else
        g_string_append (x->out, "0");
      g_string_append (x->out, "}}");
    }
}

static void
write_instants (Export *x)
{
  guint n;
  const WickInstant *in = wick_tracks_get_instants (x->t, &n);
  static const char scopes[] = { 't', 'p', 'g' };

  for (guint i = 0; i < n; i++)
    {
      WickEventRef ref = { WICK_EVENT_INSTANT, i };
      char ph[2] = { in[i].phase ? in[i].phase : 'i', 0 };
      event_head (x, ph, in[i].track, in[i].timestamp_ns, 0, in[i].name);
      if (in[i].phase == 0)
        g_string_append_printf (x->out, ",\"s\":\"%c\"", scopes[MIN (in[i].scope, 2)]);
      append_opt_str (x, "cat", in[i].category);
      if (in[i].phase != 0 && in[i].phase != 'P')
        {
          g_string_append (x->out, ",\"id\":");
          append_str (x, in[i].id);
        }
      append_args (x, wick_tracks_event_args (x->t, ref));
      g_string_append_c (x->out, '}');
    }
}

static void
write_async (Export *x)
{
  guint n;
  const WickAsyncSlice *as = wick_tracks_get_async (x->t, &n);

  for (guint i = 0; i < n; i++)
    {
      WickEventRef ref = { WICK_EVENT_ASYNC, i };
      for (int edge = 0; edge < (as[i].instant ? 1 : 2); edge++)
        {
          if (edge == 1 && !(as[i].flags & WICK_SPAN_FLAG_CLOSED))
            break;
          begin_event (x);
          g_string_append_printf (x->out, "{\"ph\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"ts\":",
                                  as[i].instant ? "n"
                                  : edge == 0   ? "b"
                                                : "e",
                                  track_pid (x, as[i].track));
          append_ts (x, as[i].start_ns + (edge == 1 ? as[i].duration_ns : 0), 0);
          g_string_append (x->out, ",\"name\":");
          append_str (x, as[i].name);
          g_string_append (x->out, ",\"cat\":");
          append_str (x, as[i].category);
          g_string_append (x->out, ",\"id\":");
          append_str (x, as[i].id);
          if (edge == 0)
            append_args (x, wick_tracks_event_args (x->t, ref));
          g_string_append_c (x->out, '}');
        }
    }
}

static void
write_flows (Export *x)
{
  guint n;
  const WickFlow *f = wick_tracks_get_flows (x->t, &n);

  for (guint i = 0; i < n; i++)
    for (int edge = 0; edge < 2; edge++)
      {
        const WickFlowEnd *e = edge == 0 ? &f[i].from : &f[i].to;
        if (e->track >= x->n_tracks)
          continue;
        event_head (x, edge == 0 ? "s" : "f", e->track, e->timestamp_ns, 0, f[i].name);
        if (f[i].name == 0)
          g_string_append (x->out, ",\"name\":\"flow\"");
        g_string_append (x->out, ",\"cat\":");
        if (f[i].category != 0)
          append_str (x, f[i].category);
        else
          g_string_append (x->out, "\"flow\"");
        g_string_append_printf (x->out, ",\"id\":%u%s}", i, edge == 1 ? ",\"bp\":\"e\"" : "");
      }
}

gboolean
wick_chrome_export (WickDocument *document, WickChromeExportWriteFunc write, gpointer user_data,
                    GError **error)
{
  g_return_val_if_fail (document != NULL && write != NULL, FALSE);
  WickTracks *t = wick_document_get_tracks (document);
  guint n_processes, n_threads;
  Export x = { .doc = document,
               .t = t,
               .origin = wick_tracks_get_origin_ns (t),
               .first = TRUE,
               .write = write,
               .user_data = user_data };

  x.tracks = wick_tracks_get_tracks (t, &x.n_tracks);
  x.processes = wick_tracks_get_processes (t, &n_processes);
  x.threads = wick_tracks_get_threads (t, &n_threads);
  x.out = g_string_sized_new (EXPORT_FLUSH_BYTES + 4096);
  x.clocks = wick_device_clocks_new (document);
  g_string_append (x.out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  write_metadata (&x, n_processes, n_threads);
  write_slices (&x);
  write_device (&x);
  write_counters (&x);
  write_instants (&x);
  write_async (&x);
  write_flows (&x);
  g_string_append (x.out, "\n]}\n");
  flush (&x, TRUE);
  g_string_free (x.out, TRUE);
  wick_device_clocks_free (x.clocks);
  if (x.error != NULL)
    {
      g_propagate_error (error, x.error);
      return FALSE;
    }
  return TRUE;
}

/* ---- to a file ------------------------------------------------------------ */

typedef struct
{
  GOutputStream *stream;
  GCancellable *cancellable;
} FileSink;

static gboolean
write_stream (const char *data, gsize len, gpointer user_data, GError **error)
{
  FileSink *sink = user_data;
  return g_output_stream_write_all (sink->stream, data, len, NULL, sink->cancellable, error);
}

gboolean
wick_chrome_export_to_file (WickDocument *document, GFile *file, gboolean gzip,
                            GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (document != NULL && G_IS_FILE (file), FALSE);
  g_autoptr (GFileOutputStream) out
    = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, cancellable, error);
  if (out == NULL)
    return FALSE;
  g_autoptr (GOutputStream) stream = NULL;
  if (gzip)
    {
      g_autoptr (GZlibCompressor) compressor
        = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, -1);
      stream = g_converter_output_stream_new (G_OUTPUT_STREAM (out), G_CONVERTER (compressor));
    }
  else
    stream = g_object_ref (G_OUTPUT_STREAM (out));
  FileSink sink = { stream, cancellable };
  /* The converter stream closes the file stream (its base) too. */
  if (wick_chrome_export (document, write_stream, &sink, error)
      && g_output_stream_close (stream, cancellable, error)
      && (g_output_stream_is_closed (G_OUTPUT_STREAM (out))
          || g_output_stream_close (G_OUTPUT_STREAM (out), cancellable, error)))
    return TRUE;
  /* Closing with a cancelled cancellable removes the temporary file and
   * leaves @file as it was (a plain close would put the partial one there). */
  g_autoptr (GCancellable) abort = g_cancellable_new ();
  g_cancellable_cancel (abort);
  if (!g_output_stream_is_closed (G_OUTPUT_STREAM (out)))
    g_output_stream_close (G_OUTPUT_STREAM (out), abort, NULL);
  return FALSE;
}
