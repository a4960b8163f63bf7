/* bench-timeline.c — timeline frame time with millions of spans, against a
 * naive draw-all baseline measured in the same run.
 *
 * The document: WICK_BENCH_SPANS spans (default 10 000 000) in units of ten
 * (a 10 µs span, three 3 µs children, six 1 µs grandchildren), fed as JSONL
 * lines. Frames are 1920×1080 ARGB32 image surfaces, labels on. Zoom levels:
 * the whole trace, 1/100, 1/10 000, 1/100 000 and 1/1 000 000 of it, at several
 * positions; each figure is the median of the frames drawn. The baseline
 * iterates every span and fills the rectangles of those in the view, which
 * is what a timeline without an index does.
 *
 * Then the track list: the same number of spans over 64 threads of one
 * Chrome-format process (built through the track model's builder, units of
 * ten as above on each thread, threads offset in time), 1 000 000 counter
 * samples over four counter tracks and 100 000 flows between threads, drawn
 * at the same zooms, plain and with a span selected whose flows are drawn;
 * the single-track figures above are its baseline in the same run, and
 * draw-all over the same spans its naive one.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/wick-document.h"
#include "model/wick-tracks.h"
#include "model/wick-tracks-private.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-scene-private.h"
#include "bench-tracks-document.h"

static void
feed (WickDocument *document, const char *line)
{
  g_autoptr (GError) error = NULL;
  if (!wick_document_feed_line (document, line, strlen (line), &error))
    g_error ("%s", error->message);
}

static WickDocument *
build_document (guint64 n_spans)
{
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  char line[512];
  guint64 units = MAX (n_spans / 10, 1);
  guint64 end = units * 10000 + 10;
  feed (
    document,
    "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/"
    "10\",\"run_id\":\"r\",\"correlation_id\":\"c\","
    "\"entrypoint\":\"bench\",\"phase\":\"infer\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"capture_"
    "step\":1,"
    "\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{"
    "\"measurement_scope\":\"profiled_work\",\"operations\":\"none\",\"logical_memory\":\"none\","
    "\"physical_memory\":\"none\",\"device_timing\":\"none\"},\"tags\":{}}");
  feed (document, "{\"kind\":\"span_start\",\"id\":\"r\",\"name\":\"root\",\"start_ns\":0,\"span_"
                  "kind\":\"function\",\"measured\":true}");
  static const char *names[] = { "forward", "matmul", "relu", "backward", "adamw" };
  for (guint64 u = 0; u < units; u++)
    {
      guint64 t = 5 + u * 10000;
      snprintf (line, sizeof line,
                "{\"kind\":\"span_start\",\"id\":\"a%" G_GUINT64_FORMAT
                "\",\"parent_id\":\"r\",\"name\":\"step\",\"start_ns\":%" G_GUINT64_FORMAT
                ",\"span_kind\":\"function\"}",
                u, t);
      feed (document, line);
      for (guint c = 0; c < 3; c++)
        {
          guint64 tc = t + 100 + c * 3200;
          snprintf (line, sizeof line,
                    "{\"kind\":\"span_start\",\"id\":\"b%" G_GUINT64_FORMAT
                    "_%u\",\"parent_id\":\"a%" G_GUINT64_FORMAT
                    "\",\"name\":\"%s\",\"start_ns\":%" G_GUINT64_FORMAT
                    ",\"span_kind\":\"module\",\"step\":\"forward\"}",
                    u, c, u, names[c], tc);
          feed (document, line);
          for (guint g = 0; g < 2; g++)
            {
              snprintf (line, sizeof line,
                        "{\"kind\":\"span_start\",\"id\":\"c%" G_GUINT64_FORMAT
                        "_%u_%u\",\"parent_id\":\"b%" G_GUINT64_FORMAT
                        "_%u\",\"name\":\"%s\",\"start_ns\":%" G_GUINT64_FORMAT
                        ",\"span_kind\":\"op\",\"step\":\"backward\"}",
                        u, c, g, u, c, names[3 + g], tc + 200 + g * 1300);
              feed (document, line);
              snprintf (line, sizeof line,
                        "{\"kind\":\"span_end\",\"id\":\"c%" G_GUINT64_FORMAT
                        "_%u_%u\",\"duration_ns\":1000}",
                        u, c, g);
              feed (document, line);
            }
          snprintf (line, sizeof line,
                    "{\"kind\":\"span_end\",\"id\":\"b%" G_GUINT64_FORMAT
                    "_%u\",\"duration_ns\":3000}",
                    u, c);
          feed (document, line);
        }
      snprintf (line, sizeof line,
                "{\"kind\":\"span_end\",\"id\":\"a%" G_GUINT64_FORMAT "\",\"duration_ns\":9900}",
                u);
      feed (document, line);
    }
  snprintf (line, sizeof line,
            "{\"kind\":\"span_end\",\"id\":\"r\",\"duration_ns\":%" G_GUINT64_FORMAT "}", end);
  feed (document, line);
  snprintf (
    line, sizeof line,
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}", end);
  feed (document, line);
  g_autoptr (GError) error = NULL;
  wick_document_finish (document, &error);
  return document;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, guint n)
{
  qsort (v, n, sizeof (double), compare_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Draw-all baseline: no index; every span is tested against the view and
 * those inside are filled one by one, clipped, with their colour. */
static void
draw_naive (WickDocument *document, cairo_t *cr, const WickTimelineViewport *view)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  double scale = (view->width - WICK_TIMELINE_GUTTER) / (double)(view->end_ns - view->start_ns);
  for (guint i = 0; i < n; i++)
    {
      guint64 s = spans[i].start_ns, e = s + spans[i].duration_ns;
      if (e < view->start_ns || s > view->end_ns)
        continue;
      double x0 = WICK_TIMELINE_GUTTER + ((double)s - (double)view->start_ns) * scale;
      double x1 = WICK_TIMELINE_GUTTER + ((double)e - (double)view->start_ns) * scale;
      x0 = MAX (x0, WICK_TIMELINE_GUTTER);
      x1 = MIN (x1, view->width);
      cairo_set_source_rgb (cr, 0.4 + (spans[i].step & 1) * 0.3, 0.6, 0.8);
      cairo_rectangle (
        cr, x0, WICK_TIMELINE_RULER + WICK_TIMELINE_MARKER_ROW + spans[i].depth * WICK_TIMELINE_ROW,
        MAX (x1 - x0, 1), WICK_TIMELINE_ROW - 1);
      cairo_fill (cr);
    }
}

typedef void (*DrawFunc) (gpointer data, cairo_t *cr, const WickTimelineViewport *view);

static void
draw_scene (gpointer data, cairo_t *cr, const WickTimelineViewport *view)
{
  wick_timeline_scene_draw (data, cr, view);
}

static void
draw_baseline (gpointer data, cairo_t *cr, const WickTimelineViewport *view)
{
  draw_naive (data, cr, view);
}

static WickEventRef bench_selected = { WICK_EVENT_NONE, 0 };

static double scroll_step; /* > 0: frame f is scrolled down f * scroll_step pixels */
static gboolean bench_progressive; /* frames as the widget draws them (rows over budget sketched) */

/* The calling thread's CPU time in µs: on a shared machine, what a frame
 * costs without the time it waited for a core. */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static double last_cpu_ms; /* the CPU-time median of the last time_frames() */

static double
time_frames (DrawFunc draw, gpointer data, guint64 start, guint64 end, double fraction,
             guint frames, cairo_t *cr)
{
  double *times = g_new (double, frames), *cpu = g_new (double, frames);
  guint64 width = MAX ((guint64)((end - start) * fraction), 1000);
  for (guint f = 0; f < frames; f++)
    {
      guint64 offset = frames > 1 ? (guint64)((double)(end - start - width) * f / (frames - 1)) : 0;
      WickTimelineViewport view = { .start_ns = start + offset,
                                    .end_ns = start + offset + width,
                                    .width = 1920,
                                    .height = 1080,
                                    .selected_type = WICK_RECORD_NONE,
                                    .selected_index = -1,
                                    .selected_event_kind = bench_selected.kind,
                                    .selected_event_index = bench_selected.index,
                                    .scroll_y = scroll_step * f,
                                    .hover_x = -1,
                                    .progressive = bench_progressive };
      gint64 t0 = g_get_monotonic_time (), c0 = thread_cpu_us ();
      draw (data, cr, &view);
      cairo_surface_flush (cairo_get_target (cr));
      times[f] = (g_get_monotonic_time () - t0) / 1000.0;
      cpu[f] = (thread_cpu_us () - c0) / 1000.0;
    }
  double m = median (times, frames);
  last_cpu_ms = median (cpu, frames);
  g_free (times);
  g_free (cpu);
  return m;
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("WICK_BENCH_SPANS");
  guint64 n_spans = env ? g_ascii_strtoull (env, NULL, 10) : 10000000;
  /* WICK_BENCH_PART=tracks: the track list alone (profiling; no single-track ratio) */
  gboolean tracks_only = g_strcmp0 (g_getenv ("WICK_BENCH_PART"), "tracks") == 0;
  /* WICK_BENCH_PART=scroll: the track list's scrolled frames alone (profiling) */
  gboolean scroll_only = g_strcmp0 (g_getenv ("WICK_BENCH_PART"), "scroll") == 0;
  tracks_only |= scroll_only;
  static const struct
  {
    const char *name;
    double fraction;
  } zooms[] = {
    { "whole trace", 1.0 },        { "1/100 of it", 1e-2 }, { "1/10 000 of it", 1e-4 },
    { "1/100 000 of it", 1e-5 }, /* spans wide enough to be labelled */
    { "1/1 000 000 of it", 1e-6 },
  };
  double single[G_N_ELEMENTS (zooms)] = { 0 };
  guint64 start, end;
  guint n;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1920, 1080);
  cairo_t *cr = cairo_create (surface);
  gint64 t0;
  WickDocument *document;
  WickTimelineScene *scene;
  if (tracks_only)
    goto track_list;
  t0 = g_get_monotonic_time ();
  document = build_document (n_spans);
  wick_document_get_spans (document, &n);
  double load_s = (g_get_monotonic_time () - t0) / 1e6;
  t0 = g_get_monotonic_time ();
  scene = wick_timeline_scene_new (document);
  double index_s = (g_get_monotonic_time () - t0) / 1e6;
  wick_timeline_scene_get_extent (scene, &start, &end);

  printf ("timeline benchmark: %u spans, 1920x1080 ARGB32, median ms per frame\n", n);
  printf ("  document fed in %.1f s; scene (index + mipmap) built in %.2f s\n", load_s, index_s);
  printf ("  %-26s %12s %16s %8s\n", "view", "wick (ms)", "draw-all (ms)", "ratio");
  for (guint z = 0; z < G_N_ELEMENTS (zooms); z++)
    {
      double ours = time_frames (draw_scene, scene, start, end, zooms[z].fraction, 21, cr);
      double naive = time_frames (draw_baseline, document, start, end, zooms[z].fraction, 3, cr);
      single[z] = ours;
      printf ("  %-26s %12.2f %16.1f %7.0fx\n", zooms[z].name, ours, naive, naive / ours);
    }
  g_clear_pointer (&scene, wick_timeline_scene_free);
  g_clear_object (&document);

  /* The track list. */
track_list:;
  const char *threads_env = g_getenv ("WICK_BENCH_THREADS");
  guint n_threads = threads_env ? (guint)g_ascii_strtoull (threads_env, NULL, 10) : 64;
  guint n_samples = (guint)MIN (n_spans / 10, 1000000),
        n_flows = (guint)MIN (n_spans / 100, 100000);
  t0 = g_get_monotonic_time ();
  document = build_tracks_document (n_spans, n_threads, n_samples, n_flows);
  double build_s = (g_get_monotonic_time () - t0) / 1e6;
  t0 = g_get_monotonic_time ();
  scene = wick_timeline_scene_new (document);
  double scene_s = (g_get_monotonic_time () - t0) / 1e6;
  wick_timeline_scene_get_extent (scene, &start, &end);
  WickTracks *tracks = wick_document_get_tracks (document);
  guint n_flows_read;
  const WickFlow *flows = wick_tracks_get_flows (tracks, &n_flows_read);
  wick_document_get_spans (document, &n);
  printf ("track list: %u spans over %u threads, %u counter samples, %u flows\n", n, n_threads,
          n_samples, n_flows_read);
  printf ("  model built (builder + finish) in %.1f s; scene in %.2f s; model %.0f B/span\n",
          build_s, scene_s, (double)wick_tracks_get_size (tracks) / MAX (n, 1));
  printf ("  wall ms (thread CPU ms), medians of 21 frames\n");
  printf ("  %-20s %16s %16s %16s %8s %18s %18s\n", "view", "tracks (ms)", "+ flows (ms)",
          "single-track (ms)", "ratio", "no caches (ms)", "progressive (ms)");
  /* WICK_BENCH_ZOOM=N: only the N-th zoom (profiling) */
  const char *zoom_env = g_getenv ("WICK_BENCH_ZOOM");
  for (guint z = 0; z < G_N_ELEMENTS (zooms) && !scroll_only; z++)
    {
      if (zoom_env != NULL && z != g_ascii_strtoull (zoom_env, NULL, 10))
        continue;
      bench_selected = (WickEventRef){ WICK_EVENT_NONE, 0 };
      /* the same run's baseline: every frame reads the events */
      wick_timeline_scene_set_row_cache (scene, FALSE);
      double uncached = time_frames (draw_scene, scene, start, end, zooms[z].fraction, 21, cr);
      double uncached_cpu = last_cpu_ms;
      wick_timeline_scene_set_row_cache (scene, TRUE);
      double plain = time_frames (draw_scene, scene, start, end, zooms[z].fraction, 21, cr);
      double plain_cpu = last_cpu_ms;
      /* A span with flows selected: its arrows and the chain behind them. */
      if (n_flows_read > 0)
        bench_selected = flows[n_flows_read / 2].from.event;
      double with_flows = time_frames (draw_scene, scene, start, end, zooms[z].fraction, 21, cr);
      double flows_cpu = last_cpu_ms;
      /* as the widget draws: a new range's rows over the frame's budget
       * sketched, finished by the frames after it */
      bench_selected = (WickEventRef){ WICK_EVENT_NONE, 0 };
      bench_progressive = TRUE;
      double progressive = time_frames (draw_scene, scene, start, end, zooms[z].fraction, 21, cr);
      bench_progressive = FALSE;
      printf ("  %-20s %7.2f (%6.2f) %7.2f (%6.2f) %16.2f %7.2fx %8.2f (%6.2f) %8.2f (%6.2f)\n",
              zooms[z].name, plain, plain_cpu, with_flows, flows_cpu, single[z],
              MAX (plain, with_flows) / single[z], uncached, uncached_cpu, progressive,
              last_cpu_ms);
    }
  /* The whole trace scrolled: frames of one time range, each scrolled 40 px
   * further (rows come into view), the first of them cold (the row cache
   * emptied before it), against the same frames with no row cache. */
  bench_selected = (WickEventRef){ WICK_EVENT_NONE, 0 };
  scroll_step = 40;
  for (int round = 0; round < 3 && zoom_env == NULL; round++)
    {
      wick_timeline_scene_set_row_cache (scene, FALSE);
      double off = scroll_only ? 0 : time_frames (draw_scene, scene, start, end, 1.0, 21, cr);
      double off_cpu = last_cpu_ms;
      wick_timeline_scene_set_row_cache (scene, TRUE);
      double cold = time_frames (draw_scene, scene, start, end, 1.0, 1, cr);
      double cold_cpu = last_cpu_ms;
      double on = time_frames (draw_scene, scene, start, end, 1.0, 21, cr);
      printf ("  whole trace, scrolling 40 px a frame (round %d): caches %.2f ms (CPU %.2f), their "
              "cold first frame %.2f ms (CPU %.2f); no caches %.2f ms (CPU %.2f)\n",
              round + 1, on, last_cpu_ms, cold, cold_cpu, off, off_cpu);
    }
  scroll_step = 0;
  /* The whole trace's first frame as the widget draws it, cold: the frames
   * of the same view until every row is drawn in full. */
  for (int round = 0; round < 3 && zoom_env == NULL; round++)
    {
      wick_timeline_scene_set_row_cache (scene, FALSE);
      wick_timeline_scene_set_row_cache (scene, TRUE);
      bench_progressive = TRUE;
      double first = 0, worst = 0, total = 0, first_cpu = 0;
      guint frames = 0;
      do
        {
          double ms = time_frames (draw_scene, scene, start, end, 1.0, 1, cr);
          if (frames == 0)
            {
              first = ms;
              first_cpu = last_cpu_ms;
            }
          worst = MAX (worst, ms);
          total += ms;
          frames++;
        }
      while (!wick_timeline_scene_get_complete (scene) && frames < 1000);
      bench_progressive = FALSE;
      printf ("  whole trace, cold, progressive (round %d): first frame %.2f ms (CPU %.2f), "
              "complete after %u frames, the longest %.2f ms, %.1f ms in all\n",
              round + 1, first, first_cpu, frames, worst, total);
    }
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  wick_timeline_scene_free (scene);
  g_object_unref (document);
  return 0;
}
