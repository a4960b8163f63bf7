/* test-app-views.c — the drawing code without GTK: index, timeline and memory
 * pixels, file rendering and `wick-trace render`. Suite: app. */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app-test-util.h"
#include "model/wick-chrome-import.h"
#include "model/wick-chrome-import-private.h"
#include "ui/wick-format.h"
#include "ui/wick-format-private.h"
#include "ui/wick-memory-chart.h"
#include "ui/wick-memory-chart-private.h"
#include "ui/wick-palette.h"
#include "ui/wick-render.h"
#include "ui/wick-render-private.h"
#include "ui/wick-selection.h"
#include "ui/wick-selection-private.h"
#include "ui/wick-timeline-axis.h"
#include "ui/wick-record-text.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-scene-private.h"

#define META APP_TEST_META

/* s1 [0, 1 ms) root; s2 [100 ns, 500 µs) and s3 [600 µs, 900 µs) at depth 1. */
static const char *nested_trace
  = META "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,\"span_kind\":"
         "\"function\",\"measured\":true}\n"
         "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"early\",\"start_"
         "ns\":100,\"span_kind\":\"function\",\"step\":\"forward\"}\n"
         "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":499900}\n"
         "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"late\",\"start_"
         "ns\":600000,\"span_kind\":\"function\",\"step\":\"backward\"}\n"
         "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":300000}\n"
         "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":1000000}\n"
         "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":1000000}";

static void
test_format (void)
{
  g_autofree char *a = wick_format_duration (850);
  g_autofree char *b = wick_format_duration (1500);
  g_autofree char *c = wick_format_duration (3210000);
  g_autofree char *d = wick_format_duration (1500000000);
  g_autofree char *e = wick_format_bytes (512);
  g_autofree char *f = wick_format_bytes (1536);
  g_autofree char *g = wick_format_bytes (G_GUINT64_CONSTANT (80) << 30);
  g_assert_cmpstr (a, ==, "850 ns");
  g_assert_cmpstr (b, ==, "1.5 µs");
  g_assert_cmpstr (c, ==, "3.21 ms");
  g_assert_cmpstr (d, ==, "1.500 s");
  g_assert_cmpstr (e, ==, "512 B");
  g_assert_cmpstr (f, ==, "1.50 KiB");
  g_assert_cmpstr (g, ==, "80.0 GiB");
  /* Shares (the costs tables): one decimal, a dash for an empty whole. */
  g_autofree char *h = wick_format_share (435, 1000);
  g_autofree char *i = wick_format_share (3, 0);
  g_autofree char *j = wick_format_share (0, 7);
  g_assert_cmpstr (h, ==, "43.5 %");
  g_assert_cmpstr (i, ==, "—");
  g_assert_cmpstr (j, ==, "0.0 %");
}

static int
index_of (WickDocument *document, const char *id)
{
  gint32 i = wick_document_find_span (document, id);
  g_assert_cmpint (i, >=, 0);
  return i;
}

/* The per-track overlap index and summary of the model (wick-tracks.h), as
 * the timeline queries them. */
static void
test_index_overlap (void)
{
  g_autoptr (WickDocument) document = app_test_document_from_text (nested_trace);
  WickTracks *t = wick_document_get_tracks (document);
  guint32 track = wick_tracks_span_track (t, index_of (document, "s2"));
  g_assert_cmpuint (wick_tracks_track_n_rows (t, track), ==, 2);
  const WickTrackRow *row = wick_tracks_track_row (t, track, 1);
  g_assert_cmpuint (row->n_events, ==, 2);
  /* A query starting at 400 µs must begin with s2, which started at 100 ns. */
  guint first = wick_tracks_row_first_overlapping (t, track, 1, 400000);
  g_assert_cmpuint (first, ==, 0);
  g_assert_cmpint (row->events[first], ==, index_of (document, "s2"));
  /* After s2 ended only s3 remains. */
  first = wick_tracks_row_first_overlapping (t, track, 1, 550000);
  g_assert_cmpint (row->events[first], ==, index_of (document, "s3"));
  WickEventRef ref;
  g_assert_true (wick_tracks_event_at (t, track, 1, 450000, 0, &ref));
  g_assert_cmpint (ref.index, ==, index_of (document, "s2"));
  g_assert_false (wick_tracks_event_at (t, track, 1, 550000, 0, &ref));
  g_assert_true (wick_tracks_event_at (t, track, 1, 560000, 60000, &ref));
  g_assert_cmpint (ref.index, ==, index_of (document, "s3"));
}

static void
test_index_mipmap (void)
{
  /* 3000 spans of pseudo-random lengths at depth 1: every level keeps, per
   * bucket, the longest span starting in it. */
  GString *text = g_string_new (META);
  g_string_append (text, "{\"kind\":\"span_start\",\"id\":\"r\",\"name\":\"root\",\"start_ns\":0,"
                         "\"span_kind\":\"function\",\"measured\":true}\n");
  guint64 t = 10, seed = 12345;
  for (guint i = 0; i < 3000; i++)
    {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      guint64 dur = 1 + (seed >> 33) % 5000;
      g_string_append_printf (
        text,
        "{\"kind\":\"span_start\",\"id\":\"c%u\",\"parent_id\":\"r\",\"name\":\"n%u\",\"start_ns\":"
        "%" G_GUINT64_FORMAT ",\"span_kind\":\"op\"}\n"
        "{\"kind\":\"span_end\",\"id\":\"c%u\",\"duration_ns\":%" G_GUINT64_FORMAT "}\n",
        i, i % 7, t, i, dur);
      t += dur + (seed >> 40) % 300;
    }
  g_string_append_printf (
    text,
    "{\"kind\":\"span_end\",\"id\":\"r\",\"duration_ns\":%" G_GUINT64_FORMAT "}\n"
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}",
    t, t);
  g_autoptr (WickDocument) document = app_test_document_from_text (text->str);
  g_string_free (text, TRUE);
  WickTracks *tracks = wick_document_get_tracks (document);
  const WickSpan *spans = wick_document_get_spans (document, NULL);
  guint32 track = wick_tracks_span_track (tracks, (guint32)index_of (document, "c0"));
  const WickTrackRow *row = wick_tracks_track_row (tracks, track, 1);
  guint64 origin = wick_tracks_get_start_ns (tracks);
  guint64 base = wick_tracks_get_base_ns (tracks);
  g_assert_cmpuint (row->n_levels, >, 3);
  for (guint level = 0; level < row->n_levels; level++)
    {
      guint64 width = base << level;
      guint64 n_buckets = (wick_tracks_get_end_ns (tracks) - origin) / width + 1;
      g_assert_cmpuint (row->level_counts[level], <=, MIN (row->n_events, n_buckets));
      for (guint e = 0; e < row->level_counts[level]; e++)
        {
          const WickTrackMip *entry = &row->levels[level][e];
          for (guint i = 0; i < row->n_events; i++)
            {
              const WickSpan *s = &spans[row->events[i]];
              if ((s->start_ns - origin) / width == entry->bucket)
                g_assert_cmpuint (s->duration_ns, <=, spans[entry->event].duration_ns);
            }
        }
    }
  /* Zoomed out to 1 ns per 1000 px of a 10 µs+ trace: a level, not raw. */
  g_assert_cmpint (wick_tracks_pick_level (tracks, (double)t / 100), >=, 0);
  g_assert_cmpint (wick_tracks_pick_level (tracks, 1), ==, -1);
}

static cairo_surface_t *
draw_timeline (WickDocument *document, WickTimelineViewport *view)
{
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  cairo_surface_t *surface
    = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view->width, view->height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, view);
  cairo_destroy (cr);
  return surface;
}

/* The middle of the depth-1 row of the host thread's track. */
static int
depth1_y (WickDocument *document, const WickTimelineViewport *view)
{
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  cairo_rectangle_t r;
  g_assert_true (wick_timeline_scene_span_rect (scene, view, index_of (document, "s3"), &r));
  return (int)(r.y + r.height / 2);
}

static void
test_unlinked_clock (void)
{
  /* A device interval whose span is unknown, on a clock far from host time:
   * the clock starts with the trace instead of stretching the axis to 9000 s. */
  g_autofree char *text = g_strdup_printf (
    "%s\n{\"kind\":\"device_interval\",\"span_id\":\"nope\",\"device\":\"cuda:0\",\"stream_id\":"
    "\"1\","
    "\"clock_id\":\"gpu\",\"backend\":\"cuda\",\"start_ns\":9000000000000,\"duration_ns\":5000}",
    nested_trace);
  /* The terminal must stay last: move it after the interval. */
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines);
  char *terminal = lines[n - 2];
  lines[n - 2] = lines[n - 1];
  lines[n - 1] = terminal;
  g_autofree char *reordered = g_strjoinv ("\n", lines);
  g_autoptr (WickDocument) document = app_test_document_from_text (reordered);
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  g_assert_cmpuint (start, ==, 0);
  g_assert_cmpuint (end, ==, 1000000);
  g_assert_cmpuint (wick_timeline_scene_interval_start (scene, 0), ==, 0);
}

static void
test_timeline_pixels (void)
{
  g_autoptr (WickDocument) document = app_test_document_from_text (nested_trace);
  WickTimelineViewport view = { .start_ns = 400000,
                                .end_ns = 700000,
                                .width = 150 + 300,
                                .height = 120,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1,
                                .no_labels = TRUE };
  cairo_surface_t *surface = draw_timeline (document, &view);
  const WickSpan *spans = wick_document_get_spans (document, NULL);
  int y1 = depth1_y (document, &view);
  /* One pixel per 1000 ns: s2 (started before the view) covers x 150..249,
   * nothing at 250..349, s3 from 350. */
  WickRgb early = wick_palette_span (
    wick_palette_span_colour_id (spans[index_of (document, "s2")].step, "early"), FALSE);
  WickRgb late = wick_palette_span (
    wick_palette_span_colour_id (spans[index_of (document, "s3")].step, "late"), FALSE);
  WickRgb bg = wick_palette_background (FALSE);
  g_assert_cmphex (app_test_pixel (surface, 160, y1), ==, app_test_rgb (early.r, early.g, early.b));
  g_assert_cmphex (app_test_pixel (surface, 240, y1), ==, app_test_rgb (early.r, early.g, early.b));
  g_assert_cmphex (app_test_pixel (surface, 300, y1), ==, app_test_rgb (bg.r, bg.g, bg.b));
  g_assert_cmphex (app_test_pixel (surface, 400, y1), ==, app_test_rgb (late.r, late.g, late.b));
  cairo_surface_destroy (surface);
}

static void
test_timeline_search_dims (void)
{
  g_autoptr (WickDocument) document = app_test_document_from_text (nested_trace);
  guint8 matches[3] = { 0 };
  matches[index_of (document, "s3")] = 1;
  WickTimelineViewport view = { .start_ns = 400000,
                                .end_ns = 700000,
                                .width = 450,
                                .height = 120,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1,
                                .no_labels = TRUE,
                                .matches = matches };
  cairo_surface_t *surface = draw_timeline (document, &view);
  const WickSpan *spans = wick_document_get_spans (document, NULL);
  int y1 = depth1_y (document, &view);
  WickRgb early = wick_palette_span (
    wick_palette_span_colour_id (spans[index_of (document, "s2")].step, "early"), FALSE);
  WickRgb late = wick_palette_span (
    wick_palette_span_colour_id (spans[index_of (document, "s3")].step, "late"), FALSE);
  /* The match keeps its colour; the other span is dimmed over white. */
  g_assert_cmphex (app_test_pixel (surface, 400, y1), ==, app_test_rgb (late.r, late.g, late.b));
  guint32 dimmed = app_test_pixel (surface, 200, y1);
  g_assert_cmphex (dimmed, !=, app_test_rgb (early.r, early.g, early.b));
  g_assert_cmpuint (dimmed >> 16 & 0xff, >, (guint)(early.r * 255));
  cairo_surface_destroy (surface);
}

static void
test_timeline_example (void)
{
  g_autoptr (WickDocument) document = app_test_load_example ();
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  /* The example: the host thread, memory counters, a copy stream and a
   * compute stream, in display order. The model also has the Wick events as
   * an instants track; the scene leaves it out, since the marker row under
   * the ruler shows those records already (each once). */
  guint n_tracks = wick_timeline_scene_get_n_tracks (scene);
  g_assert_cmpuint (n_tracks, ==, 8);
  guint n_model;
  const WickTrack *model = wick_tracks_get_tracks (wick_document_get_tracks (document), &n_model);
  g_assert_cmpuint (n_model, ==, 9);
  guint instants = 0;
  for (guint t = 0; t < n_model; t++)
    instants += model[t].kind == WICK_TRACK_INSTANTS ? model[t].n_events : 0;
  g_assert_cmpuint (instants, ==, 5);
  for (guint i = 0; i < n_tracks; i++)
    g_assert_cmpuint (model[wick_timeline_scene_get_track (scene, i)].kind, !=,
                      WICK_TRACK_INSTANTS);
  /* Memory counters are named device first, in the gutter and wherever a
   * track is named (the range summary): the model keeps its names. */
  WickTracks *model_tracks = wick_document_get_tracks (document);
  const char *shown[] = { "cuda:0 tensors", "cuda:0 used", "cuda:0 reserved", "cuda:0 capacity",
                          "cuda:0 free" };
  const char *named[] = { "memory cuda:0", "device memory cuda:0 used",
                          "device memory cuda:0 reserved", "device memory cuda:0 capacity",
                          "device memory cuda:0 free" };
  for (guint k = 0; k < G_N_ELEMENTS (shown); k++)
    {
      guint32 t = wick_timeline_scene_get_track (scene, 1 + k);
      g_assert_cmpstr (wick_document_str (document, model[t].name), ==, named[k]);
      g_assert_cmpstr (wick_timeline_scene_get_track_name (scene, t), ==, shown[k]);
      g_autofree char *display = wick_track_display_name (model_tracks, t);
      g_assert_cmpstr (display, ==, shown[k]);
    }
  g_assert_cmpstr (
    wick_timeline_scene_get_track_name (scene, wick_timeline_scene_get_track (scene, 0)), ==,
    "host");
  g_assert_cmpstr (
    wick_timeline_scene_get_track_name (scene, wick_timeline_scene_get_track (scene, n_tracks - 2)),
    ==, "cuda:0 stream 13");
  g_assert_cmpstr (
    wick_timeline_scene_get_track_name (scene, wick_timeline_scene_get_track (scene, n_tracks - 1)),
    ==, "cuda:0 stream 7");
  /* Wick records: two marks, a certification, an eviction and a restore. */
  guint n_ext;
  wick_document_get_extensions (document, &n_ext);
  g_assert_cmpuint (n_ext, ==, 5);
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 0), ==, "step 1");
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 1), ==, "denoise accepted");
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 2), ==, "step 5");
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 3), ==, "evict embed");
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 4), ==, "restore embed");
  WickTimelineViewport view = { .width = 1600,
                                .height = 500,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  cairo_surface_t *surface
    = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  /* Every train_step span is painted in its colour at its centre. */
  guint n, checked = 0;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  for (guint i = 0; i < n; i++)
    {
      if (g_strcmp0 (wick_document_str (document, spans[i].name), "train_step") != 0)
        continue;
      cairo_rectangle_t r;
      g_assert_true (wick_timeline_scene_span_rect (scene, &view, i, &r));
      WickRgb rgb
        = wick_palette_span (wick_palette_span_colour_id (spans[i].step, "train_step"), FALSE);
      /* Below the label, above the bottom edge. */
      g_assert_cmphex (
        app_test_pixel (surface, (int)(r.x + r.width * 0.9), (int)(r.y + r.height - 3)), ==,
        app_test_rgb (rgb.r, rgb.g, rgb.b));
      checked++;
    }
  g_assert_cmpuint (checked, ==, 8);
  /* The hit test finds what is drawn. */
  cairo_rectangle_t r;
  gint32 root = wick_document_find_span (document, "s1");
  wick_timeline_scene_span_rect (scene, &view, root, &r);
  gint64 hit;
  g_assert_cmpint (wick_timeline_scene_hit (scene, &view, 800, r.y + 5, &hit), ==,
                   WICK_RECORD_SPAN);
  g_assert_cmpint (hit, ==, root);
  cairo_surface_destroy (surface);
}

static void
test_memory_categories (void)
{
  g_autoptr (WickDocument) document = app_test_load_example ();
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  g_assert_cmpuint (wick_memory_chart_get_n_devices (chart), ==, 1);
  g_assert_cmpstr (wick_memory_chart_get_device_name (chart, 0), ==, "cuda:0");
  for (int dark = 0; dark <= 1; dark++)
    {
      WickMemoryViewport view = { .width = 1200, .height = 600, .hover_x = -1, .dark = dark };
      wick_memory_chart_get_extent (chart, &view.start_ns, &view.end_ns);
      cairo_surface_t *surface
        = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
      cairo_t *cr = cairo_create (surface);
      wick_memory_chart_draw (chart, cr, &view);
      cairo_destroy (cr);
      WickRgb bg = wick_palette_background (dark);
      for (guint c = 0; c < WICK_N_CATEGORIES; c++)
        {
          WickRgb rgb = wick_palette_category (c, dark);
          /* Areas are 78% opaque over the background. */
          guint32 blended = app_test_rgb (rgb.r * 0.78 + bg.r * 0.22, rgb.g * 0.78 + bg.g * 0.22,
                                          rgb.b * 0.78 + bg.b * 0.22);
          guint count = app_test_count_colour (surface, blended, 2);
          if (count < 40)
            g_error ("category %s (dark %d): %u pixels of #%06x", wick_palette_category_name (c),
                     dark, count, blended);
        }
      cairo_surface_destroy (surface);
    }
  /* A category switched off in the legend is not drawn; the others are. */
  {
    WickMemoryViewport view
      = { .width = 1200, .height = 600, .hover_x = -1, .hidden = 1u << WICK_CATEGORY_ACTIVATION };
    wick_memory_chart_get_extent (chart, &view.start_ns, &view.end_ns);
    cairo_surface_t *surface
      = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
    cairo_t *cr = cairo_create (surface);
    wick_memory_chart_draw (chart, cr, &view);
    cairo_destroy (cr);
    WickRgb bg = wick_palette_background (FALSE);
    for (guint c = 0; c < WICK_N_CATEGORIES; c++)
      {
        WickRgb rgb = wick_palette_category (c, FALSE);
        guint32 blended = app_test_rgb (rgb.r * 0.78 + bg.r * 0.22, rgb.g * 0.78 + bg.g * 0.22,
                                        rgb.b * 0.78 + bg.b * 0.22);
        guint count = app_test_count_colour (surface, blended, 2);
        if (c == WICK_CATEGORY_ACTIVATION)
          g_assert_cmpuint (count, ==, 0);
        else
          g_assert_cmpuint (count, >, 40);
      }
    cairo_surface_destroy (surface);
    /* Legend items: categories in stacking order, then used, reserved, capacity. */
    g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 5, 15), ==,
                     WICK_CATEGORY_PARAMETER);
    g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 305, 15), ==,
                     WICK_CATEGORY_ACTIVATION);
    g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 505, 15), ==, 5);
    g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 905, 15), ==, -1);
    g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 5, 200), ==, -1);
  }
  /* Clicking the chart picks the memory event in effect there. */
  WickMemoryViewport view = { .width = 1200, .height = 600, .hover_x = -1 };
  wick_memory_chart_get_extent (chart, &view.start_ns, &view.end_ns);
  cairo_rectangle_t panel;
  wick_memory_chart_panel (chart, &view, 0, &panel);
  double x = panel.x + panel.width / 2;
  gint64 event = wick_memory_chart_event_at (chart, &view, x, panel.y + panel.height / 2);
  g_assert_cmpint (event, >=, 0);
  const WickMemoryEvent *events = wick_document_get_memory (document, NULL);
  guint64 t = wick_memory_viewport_x_to_time (&view, x);
  g_assert_cmpuint (events[event].timestamp_ns, <=, t);
  g_assert_cmpint (wick_memory_chart_event_at (chart, &view, 5, 5), ==, -1);
}

static void
test_memory_two_devices (void)
{
  /* Two devices, two panels, one above the other; frees pair with their
   * allocation by (device, storage): the same storage id on two devices is
   * two storages. */
  g_autoptr (GString) text = g_string_new (nested_trace);
  g_auto (GStrv) lines = g_strsplit (nested_trace, "\n", -1);
  guint n = g_strv_length (lines);
  g_string_truncate (text, 0);
  for (guint i = 0; i + 1 < n; i++)
    g_string_append_printf (text, "%s\n", lines[i]);
  for (guint d = 0; d < 2; d++)
    g_string_append_printf (text,
                            "{\"kind\":\"memory\",\"timestamp_ns\":%u,\"storage_id\":\"a\","
                            "\"tensor_id\":\"t\",\"span_id\":\"s1\","
                            "\"device\":\"cuda:%u\",\"bytes\":%u,\"action\":\"alloc\",\"dtype\":"
                            "\"f32\",\"category\":\"activation\"}\n"
                            "{\"kind\":\"memory\",\"timestamp_ns\":%u,\"storage_id\":\"a\","
                            "\"tensor_id\":\"t\",\"span_id\":\"s1\","
                            "\"device\":\"cuda:%u\",\"bytes\":%u,\"action\":\"free\",\"dtype\":"
                            "\"f32\",\"category\":\"activation\"}\n",
                            100 + d, d, 1024 * (d + 1), 500000 + d, d, 1024 * (d + 1));
  g_string_append (text, lines[n - 1]);
  g_autoptr (WickDocument) document = app_test_document_from_text (text->str);
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  g_assert_cmpuint (wick_memory_chart_get_n_devices (chart), ==, 2);
  g_assert_cmpstr (wick_memory_chart_get_device_name (chart, 0), ==, "cuda:0");
  g_assert_cmpstr (wick_memory_chart_get_device_name (chart, 1), ==, "cuda:1");
  g_assert_cmpuint (wick_memory_chart_get_logical (chart, 0)->peak[WICK_CATEGORY_ACTIVATION], ==,
                    1024);
  g_assert_cmpuint (wick_memory_chart_get_logical (chart, 1)->peak[WICK_CATEGORY_ACTIVATION], ==,
                    2048);
  WickMemoryViewport view
    = { .start_ns = 0, .end_ns = 1000000, .width = 800, .height = 600, .hover_x = -1 };
  cairo_rectangle_t top, bottom;
  wick_memory_chart_panel (chart, &view, 0, &top);
  wick_memory_chart_panel (chart, &view, 1, &bottom);
  g_assert_cmpfloat (top.y + top.height, <, bottom.y);
  g_assert_cmpfloat (bottom.y + bottom.height, <=, view.height - WICK_MEMORY_RULER);
}

static void
check_magic (const char *path, const char *magic)
{
  g_autofree char *contents = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  g_assert_cmpuint (length, >, 1000);
  g_assert_true (memcmp (contents, magic, strlen (magic)) == 0);
}

static void
test_render_formats (void)
{
  g_autoptr (WickDocument) document = app_test_load_example ();
  g_autofree char *dir = g_dir_make_tmp ("wick-render-XXXXXX", NULL);
  const char *ext[] = { "png", "svg", "pdf" };
  const char *magic[] = { "\x89PNG", "<?xml", "%PDF" };
  for (WickRenderView v = WICK_RENDER_TIMELINE; v <= WICK_RENDER_HEALTH; v++)
    for (guint e = 0; e < 3; e++)
      {
        g_autofree char *name = g_strdup_printf ("%s.%s", wick_render_view_to_string (v), ext[e]);
        g_autofree char *path = g_build_filename (dir, name, NULL);
        WickRenderOptions options = { v, 800, 500, 0, 0, FALSE };
        g_autoptr (GError) error = NULL;
        g_assert_true (wick_render_to_file (document, &options, path, &error));
        g_assert_no_error (error);
        check_magic (path, magic[e]);
        g_unlink (path);
      }
  g_autofree char *bad = g_build_filename (dir, "view.bmp", NULL);
  WickRenderOptions options = { WICK_RENDER_TIMELINE, 800, 500, 0, 0, FALSE };
  g_autoptr (GError) error = NULL;
  g_assert_false (wick_render_to_file (document, &options, bad, &error));
  g_autofree char *expected = g_strdup_printf (
    "Cannot tell the format of “%s”: the name must end in .png, .svg or .pdf", bad);
  g_assert_cmpstr (error->message, ==, expected);
  g_rmdir (dir);
}

static int
run_cli (const char *const *args, char **err)
{
  const char *exe = g_getenv ("WICK_TRACE");
  g_assert_nonnull (exe);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer)exe);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);
  int status;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               err, &status, &error));
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void
test_render_cli (void)
{
  if (g_getenv ("WICK_TRACE") == NULL)
    {
      g_test_skip ("WICK_TRACE is not set (run through meson test)");
      return;
    }
  g_autofree char *trace = app_test_example_path ();
  g_autofree char *dir = g_dir_make_tmp ("wick-cli-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "t.png", NULL);
  g_autofree char *err = NULL;
  const char *ok[] = { "render",  "--view",  "timeline",  "--output", out, "--size",
                       "640x360", "--range", "0:2000000", trace,      NULL };
  g_assert_cmpint (run_cli (ok, &err), ==, 0);
  cairo_surface_t *png = cairo_image_surface_create_from_png (out);
  g_assert_cmpint (cairo_image_surface_get_width (png), ==, 640);
  g_assert_cmpint (cairo_image_surface_get_height (png), ==, 360);
  cairo_surface_destroy (png);
  g_unlink (out);
  g_clear_pointer (&err, g_free);
  const char *bad_view[] = { "render", "--view", "flame", "--output", out, trace, NULL };
  g_assert_cmpint (run_cli (bad_view, &err), ==, 3);
  g_assert_nonnull (
    strstr (err, "wick-trace render: --view must be timeline, memory, coverage or health"));
  g_clear_pointer (&err, g_free);
  /* A PyTorch-profiler-style trace-event JSON file renders too. */
  g_autofree char *chrome = g_build_filename (dir, "torch.json", NULL);
  g_assert_true (
    g_file_set_contents (chrome,
                         "{\"traceEvents\":[{\"name\":\"aten::mm\",\"ph\":\"X\",\"ts\":10,\"dur\":"
                         "50,\"pid\":1,\"tid\":1,\"cat\":\"cpu_op\"},"
                         "{\"name\":\"aten::relu\",\"ph\":\"X\",\"ts\":70,\"dur\":20,\"pid\":1,"
                         "\"tid\":1,\"cat\":\"cpu_op\"}]}",
                         -1, NULL));
  g_clear_pointer (&err, g_free);
  const char *torch[] = { "render", "--view", "timeline", "--output", out, chrome, NULL };
  g_assert_cmpint (run_cli (torch, &err), ==, 0);
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  g_unlink (out);
  g_unlink (chrome);
  g_clear_pointer (&err, g_free);
  const char *bad_size[]
    = { "render", "--view", "memory", "--output", out, "--size", "10x", trace, NULL };
  g_assert_cmpint (run_cli (bad_size, &err), ==, 3);
  g_assert_nonnull (strstr (err, "--size must be WxH"));
  g_rmdir (dir);
}

static void
count_changes (WickSelection *selection, guint what, guint *counts)
{
  for (guint bit = 0; bit < 3; bit++)
    if (what & (1u << bit))
      counts[bit]++;
}

static void
test_selection (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  guint counts[3] = { 0 };
  g_signal_connect (selection, "changed", G_CALLBACK (count_changes), counts);
  wick_selection_set_visible (selection, 10, 20);
  wick_selection_set_visible (selection, 10, 20); /* same: no signal */
  wick_selection_set_range (selection, 50, 30);   /* stored in order */
  guint64 a, b;
  wick_selection_get_range (selection, &a, &b);
  g_assert_cmpuint (a, ==, 30);
  g_assert_cmpuint (b, ==, 50);
  g_assert_true (wick_selection_has_range (selection));
  wick_selection_set_record (selection, WICK_RECORD_SPAN, 4);
  wick_selection_set_record (selection, WICK_RECORD_SPAN, 4);
  wick_selection_set_record (selection, WICK_RECORD_NONE, 9); /* index dropped */
  gint64 index;
  g_assert_cmpint (wick_selection_get_record (selection, &index), ==, WICK_RECORD_NONE);
  g_assert_cmpint (index, ==, -1);
  g_assert_cmpuint (counts[0], ==, 1);
  g_assert_cmpuint (counts[1], ==, 1);
  g_assert_cmpuint (counts[2], ==, 2);
  /* An empty visible range is widened to one nanosecond. */
  wick_selection_set_visible (selection, 7, 7);
  wick_selection_get_visible (selection, &a, &b);
  g_assert_cmpuint (b, ==, 8);
}

/* Times near 2^64 ns: a root span lasting 2^64 - 616 ns,
 * children, memory, device samples and intervals at the far end. Every view
 * draws it, whole and zoomed into either end, with the pointer over it; a
 * view whose time stepping wrapped around used to loop forever. */
static const char *u64_trace
  = META "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":600,\"span_kind\":"
         "\"function\",\"measured\":true}\n"
         "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"late\",\"start_"
         "ns\":18446744073709550000,\"span_kind\":\"function\",\"step\":\"forward\"}\n"
         "{\"kind\":\"memory\",\"timestamp_ns\":18446744073709550100,\"storage_id\":\"w\","
         "\"tensor_id\":\"w\",\"span_id\":\"s2\",\"device\":\"cpu\",\"bytes\":4096,\"action\":"
         "\"alloc\",\"shape\":[32,32],\"dtype\":\"f32\",\"category\":\"parameter\"}\n"
         "{\"kind\":\"device_memory\",\"timestamp_ns\":18446744073709550200,\"device\":\"cpu\","
         "\"used_bytes\":8192,\"reserved_bytes\":16384,\"capacity_bytes\":1048576}\n"
         "{\"kind\":\"device_interval\",\"span_id\":\"s2\",\"device\":\"cpu\",\"stream_id\":\"0\","
         "\"clock_id\":\"host\",\"backend\":\"cpu\",\"start_ns\":18446744073709550300,"
         "\"duration_ns\":1000}\n"
         "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":1500}\n"
         "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":18446744073709551000}\n"
         "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":18446744073709551615}";

static void
draw_u64_views (void)
{
  g_autoptr (WickDocument) document = app_test_document_from_text (u64_trace);
  guint n_spans;
  wick_document_get_spans (document, &n_spans);
  g_assert_cmpuint (n_spans, ==, 2);
  const guint64 ranges[][2] = {
    { 0, 0 },
    { G_MAXUINT64 - 1000, G_MAXUINT64 },
    { G_MAXUINT64 - 3000, G_MAXUINT64 - 1000 },
    { 0, 2000 },
    { 1, G_MAXUINT64 },
  };
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  cairo_t *cr = cairo_create (surface);
  for (guint v = WICK_RENDER_TIMELINE; v <= WICK_RENDER_HEALTH; v++)
    for (guint r = 0; r < G_N_ELEMENTS (ranges); r++)
      {
        WickRenderOptions options = { v, 900, 500, ranges[r][0], ranges[r][1], r % 2 == 1 };
        wick_render_draw (document, &options, cr);
      }

  /* The pieces a window draws besides: hover line and cursor label,
   * selection, overview, memory readout. */
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  for (guint r = 1; r < G_N_ELEMENTS (ranges); r++)
    {
      WickTimelineViewport view = { .start_ns = ranges[r][0],
                                    .end_ns = ranges[r][1],
                                    .width = 900,
                                    .height = 500,
                                    .hover_x = 700,
                                    .selected_type = WICK_RECORD_SPAN,
                                    .selected_index = 1,
                                    .range_start = ranges[r][0],
                                    .range_end = ranges[r][1] };
      wick_timeline_scene_draw (scene, cr, &view);
      g_autofree char *label = wick_timeline_scene_cursor_label (scene, &view, 700);
      g_assert_nonnull (label);
      gint64 index;
      wick_timeline_scene_hit (scene, &view, 700, 60, &index);
      g_assert_cmpuint (wick_timeline_viewport_x_to_time (&view, 1e30), ==, G_MAXUINT64);
      WickTimelineViewport full = view;
      wick_timeline_scene_get_extent (scene, &full.start_ns, &full.end_ns);
      full.height = 60;
      wick_timeline_scene_draw_overview (scene, cr, &full, view.start_ns, view.end_ns);
      WickMemoryViewport mem = { .start_ns = ranges[r][0],
                                 .end_ns = ranges[r][1],
                                 .origin_ns = 600,
                                 .width = 900,
                                 .height = 500,
                                 .hover_x = 500,
                                 .range_start = ranges[r][0],
                                 .range_end = ranges[r][1] };
      wick_memory_chart_draw (chart, cr, &mem);
      wick_memory_chart_event_at (chart, &mem, 500, 200);
    }
  cairo_destroy (cr);
  g_assert_cmpint (cairo_surface_status (surface), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy (surface);
}

static void
test_u64_times (void)
{
  /* In a child with a deadline, so a view that loops fails the test instead
   * of hanging it. */
  if (g_test_subprocess ())
    {
      draw_u64_views ();
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_time_labels (void)
{
  struct
  {
    guint64 ns, step, unit;
    const char *label;
  } cases[] = {
    /* The unit follows the magnitude, never "31000 ms". */
    { G_GUINT64_CONSTANT (31000000000), 1000000, G_GUINT64_CONSTANT (31000000000), "31.000 s" },
    { G_GUINT64_CONSTANT (31002000000), 2000000, G_GUINT64_CONSTANT (31010000000), "31.002 s" },
    { G_GUINT64_CONSTANT (31000500000), 500000, G_GUINT64_CONSTANT (31010000000), "31.0005 s" },
    { 200000000, 200000000, 1000000000, "0.2 s" },
    { 2000000000, 1000000000, 9000000000, "2 s" },
    { 0, 100000000, 900000000, "0 ms" },
    { 500000000, 100000000, 900000000, "500 ms" },
    { 1500, 500, 9000, "1.5 µs" },
    { 12, 2, 900, "12 ns" },
    /* Exact digits: 1 ns steps at 4.000000001 s. */
    { G_GUINT64_CONSTANT (4000000001), 1, G_GUINT64_CONSTANT (4000000005), "4.000000001 s" },
    { G_MAXUINT64, 1, G_MAXUINT64, "18446744073.709551615 s" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *label
        = wick_format_time_label_in (cases[i].ns, cases[i].step, cases[i].unit);
      g_assert_cmpstr (label, ==, cases[i].label);
    }
  g_autofree char *plain = wick_format_time_label (G_GUINT64_CONSTANT (31000000000), 1000000);
  g_assert_cmpstr (plain, ==, "31.000 s");

  /* Tick walks end at saturation, at the range's end and at their cap. */
  WickTimeTicks ticks;
  guint64 rel, n = 0;
  wick_time_ticks_init (&ticks, 600, 0, G_MAXUINT64, G_GUINT64_CONSTANT (5000000000000000000), 100);
  while (wick_time_ticks_next (&ticks, &rel))
    n++;
  g_assert_cmpuint (n, ==, 4);
  wick_time_ticks_init (&ticks, 0, 0, G_MAXUINT64, 1, 50);
  for (n = 0; wick_time_ticks_next (&ticks, &rel);)
    n++;
  g_assert_cmpuint (n, ==, 50);
  g_assert_cmpuint (wick_time_axis_step (1e30, 90), ==, G_GUINT64_CONSTANT (10000000000000000000));
  g_assert_cmpuint (wick_time_axis_step (1, 90), ==, 100);
  g_assert_cmpuint (wick_time_add (G_MAXUINT64 - 1, 5), ==, G_MAXUINT64);
  g_assert_cmpuint (wick_time_sub (3, 5), ==, 0);
  g_assert_cmpuint (wick_time_from_double (1e30), ==, G_MAXUINT64);
  g_assert_cmpuint (wick_time_from_double (-5), ==, 0);
}

static void
test_cursor_label (void)
{
  /* 31 s into a trace, zoomed to 1 µs a pixel: the label is the pointer's
   * time to the microsecond, in seconds. */
  g_autoptr (WickDocument) document = app_test_document_from_text (nested_trace);
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  guint64 origin, end;
  wick_timeline_scene_get_extent (scene, &origin, &end);
  WickTimelineViewport view = { .start_ns = origin + G_GUINT64_CONSTANT (31000000000),
                                .width = WICK_TIMELINE_GUTTER + 1000,
                                .height = 300 };
  view.end_ns = view.start_ns + 1000 * 1000;
  g_autofree char *a = wick_timeline_scene_cursor_label (scene, &view, WICK_TIMELINE_GUTTER + 250);
  g_assert_cmpstr (a, ==, "31.000250 s");
  /* Zoomed to 10 ns a pixel near the start: nanoseconds, in µs. */
  view.start_ns = origin;
  view.end_ns = origin + 10000;
  g_autofree char *b = wick_timeline_scene_cursor_label (scene, &view, WICK_TIMELINE_GUTTER + 123);
  g_assert_cmpstr (b, ==, "1.23 µs");
}

/* Logical categories of a few MiB under physical samples of tens of GiB. */
static char *
small_and_large_trace (void)
{
  GString *t = g_string_new (META);
  g_string_append (t, "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"root\",\"start_ns\":0,"
                      "\"span_kind\":\"function\",\"measured\":true}\n");
  static const char *cats[] = { "parameter", "optimizer", "gradient", "activation", "other" };
  for (guint c = 0; c < 5; c++)
    g_string_append_printf (
      t,
      "{\"kind\":\"memory\",\"timestamp_ns\":%u,\"storage_id\":\"st%u\",\"tensor_id\":\"t%u\","
      "\"span_id\":\"s1\",\"device\":\"cuda:0\",\"bytes\":%u,\"action\":\"alloc\",\"shape\":[1],"
      "\"dtype\":\"f32\",\"category\":\"%s\"}\n",
      1000 + c, c, c, (c + 1) << 20, cats[c]);
  g_string_append (t, "{\"kind\":\"device_memory\",\"timestamp_ns\":2000,\"device\":\"cuda:0\","
                      "\"used_bytes\":42949672960,\"reserved_bytes\":64424509440,"
                      "\"capacity_bytes\":85899345920}\n");
  g_string_append (t, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":5000}\n"
                      "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":5000}");
  return g_string_free (t, FALSE);
}

static guint
category_pixels (WickMemoryChart *chart, const WickMemoryViewport *view, guint category)
{
  cairo_surface_t *surface
    = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view->width, view->height);
  cairo_t *cr = cairo_create (surface);
  wick_memory_chart_draw (chart, cr, view);
  cairo_destroy (cr);
  WickRgb rgb = wick_palette_category (category, FALSE), bg = wick_palette_background (FALSE);
  guint count
    = app_test_count_colour (surface,
                             app_test_rgb (rgb.r * 0.78 + bg.r * 0.22, rgb.g * 0.78 + bg.g * 0.22,
                                           rgb.b * 0.78 + bg.b * 0.22),
                             2);
  cairo_surface_destroy (surface);
  return count;
}

static void
test_memory_y_axis (void)
{
  g_autofree char *text = small_and_large_trace ();
  g_autoptr (WickDocument) document = app_test_document_from_text (text);
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  WickMemoryViewport view = { .width = 1000, .height = 500, .hover_x = -1 };
  wick_memory_chart_get_extent (chart, &view.start_ns, &view.end_ns);
  view.end_ns += 3000;
  guint64 max;
  gboolean log_scale;
  /* Everything shown: the categories set the axis, not the 60 GiB
   * reserved line, which the title names as off scale. */
  wick_memory_chart_y_axis (chart, &view, 0, &max, &log_scale);
  g_assert_false (log_scale);
  g_assert_cmpuint (max, >=, 15u << 20);
  g_assert_cmpuint (max, <=, 20u << 20);
  g_autofree char *title = wick_memory_chart_panel_title (chart, &view, 0);
  g_test_message ("%s", title);
  g_assert_nonnull (strstr (title, "reserved 60"));
  g_assert_nonnull (strstr (title, "capacity 80"));
  g_assert_true (g_str_has_suffix (title, "(off scale)"));
  guint default_pixels = category_pixels (chart, &view, WICK_CATEGORY_PARAMETER);
  const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
  if (shots != NULL)
    {
      cairo_surface_t *surface
        = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
      cairo_t *cr = cairo_create (surface);
      WickRgb bg = wick_palette_background (FALSE);
      cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
      cairo_paint (cr);
      wick_memory_chart_draw (chart, cr, &view);
      cairo_destroy (cr);
      g_autofree char *png = g_build_filename (shots, "memory-axis.png", NULL);
      cairo_surface_write_to_png (surface, png);
      cairo_surface_destroy (surface);
    }
  /* With the categories hidden, the device lines set it, as before */
  WickMemoryViewport lines_only = view;
  lines_only.hidden = (1u << WICK_N_CATEGORIES) - 1;
  wick_memory_chart_y_axis (chart, &lines_only, 0, &max, &log_scale);
  g_assert_cmpuint (max, >=, G_GUINT64_CONSTANT (60) << 30);
  lines_only.hidden = (1u << WICK_N_CATEGORIES) - 1 - (1u << WICK_CATEGORY_PARAMETER);
  wick_memory_chart_y_axis (chart, &lines_only, 0, &max, &log_scale);
  g_assert_cmpuint (max, <=, 20u << 20);
  /* Used and reserved hidden: the same axis, the same picture of the
   * categories */
  view.hidden = (1u << 5) | (1u << 6);
  wick_memory_chart_y_axis (chart, &view, 0, &max, &log_scale);
  g_assert_cmpuint (max, >=, 15u << 20);
  g_assert_cmpuint (max, <=, 20u << 20);
  guint rescaled_pixels = category_pixels (chart, &view, WICK_CATEGORY_PARAMETER);
  g_assert_cmpuint (rescaled_pixels, >=, default_pixels * 9 / 10);
  g_assert_cmpuint (default_pixels, >, 10000);
  guint linear_pixels = default_pixels / 40; /* what the old 60 GiB axis left them */
  /* Hiding a category rescales too: without "other" (5 MiB) the top is lower. */
  guint64 with_other = max;
  view.hidden |= 1u << WICK_CATEGORY_OTHER;
  wick_memory_chart_y_axis (chart, &view, 0, &max, &log_scale);
  g_assert_cmpuint (max, <, with_other);
  /* Log scale with everything shown: the small categories are visible. */
  view.hidden = 0;
  view.log_scale = TRUE;
  wick_memory_chart_y_axis (chart, &view, 0, &max, &log_scale);
  g_assert_true (log_scale);
  g_assert_cmpuint (max, >=, G_GUINT64_CONSTANT (60) << 30);
  guint log_pixels = category_pixels (chart, &view, WICK_CATEGORY_PARAMETER);
  g_assert_cmpuint (log_pixels, >, 20 * MAX (linear_pixels, 1));
  /* The legend's ninth item is the log-scale switch. */
  g_assert_cmpint (wick_memory_chart_legend_hit (&view, WICK_MEMORY_AXIS + 710, 15), ==, 8);
}

static void
assert_peak_labels_apart (WickMemoryChart *chart, const WickMemoryViewport *view, guint min_placed)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 10, 10);
  cairo_t *cr = cairo_create (surface);
  for (guint d = 0; d < wick_memory_chart_get_n_devices (chart); d++)
    {
      WickMemoryPeakLabel peaks[5];
      guint n = wick_memory_chart_peak_labels (chart, cr, view, d, peaks), placed = 0;
      cairo_rectangle_t panel;
      wick_memory_chart_panel (chart, view, d, &panel);
      for (guint i = 0; i < n; i++)
        {
          if (!peaks[i].placed)
            continue;
          placed++;
          const cairo_rectangle_t *a = &peaks[i].box;
          /* Clear of the axis and inside the panel horizontally. */
          g_assert_cmpfloat (a->x, >, panel.x);
          g_assert_cmpfloat (a->x + a->width, <=, panel.x + panel.width + 0.01);
          g_assert_cmpfloat (a->y + a->height, <=, panel.y + panel.height + 0.01);
          for (guint j = 0; j < n; j++)
            {
              cairo_rectangle_t marker = { peaks[j].x - 4, peaks[j].y - 4, 8, 8 };
              g_assert_false (a->x < marker.x + marker.width && marker.x < a->x + a->width
                              && a->y < marker.y + marker.height && marker.y < a->y + a->height);
              if (j == i || !peaks[j].placed)
                continue;
              const cairo_rectangle_t *b = &peaks[j].box;
              g_assert_false (a->x < b->x + b->width && b->x < a->x + a->width
                              && a->y < b->y + b->height && b->y < a->y + a->height);
            }
        }
      g_assert_cmpuint (placed, >=, MIN (min_placed, n));
    }
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static void
test_memory_peak_labels (void)
{
  /* All five peaks within 4 ns, at the right edge of the view and in a
   * small chart: the labels crowd. */
  g_autofree char *text = small_and_large_trace ();
  g_autoptr (WickDocument) document = app_test_document_from_text (text);
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  const int sizes[][2] = { { 1000, 500 }, { 420, 180 }, { 300, 120 } };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (guint hidden = 0; hidden < 2; hidden++)
      {
        WickMemoryViewport view = { .width = sizes[i][0],
                                    .height = sizes[i][1],
                                    .hover_x = -1,
                                    .start_ns = 0,
                                    .end_ns = 1005,
                                    .hidden = hidden ? (1u << 5) | (1u << 6) : 0 };
        assert_peak_labels_apart (chart, &view, i == 0 ? 5 : 1);
        view.log_scale = TRUE;
        assert_peak_labels_apart (chart, &view, i == 0 ? 5 : 1);
      }
  g_autoptr (WickDocument) example = app_test_load_example ();
  g_autoptr (WickMemoryChart) example_chart = wick_memory_chart_new (example);
  WickMemoryViewport view = { .width = 700, .height = 300, .hover_x = -1 };
  wick_memory_chart_get_extent (example_chart, &view.start_ns, &view.end_ns);
  assert_peak_labels_apart (example_chart, &view, 1);
}

/* The track list on a small multi-threaded Chrome trace:
 * tests/app/data/tracks.json. */
static WickDocument *
load_tracks_fixture (void)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "tracks.json", NULL);
  WickDocument *document = wick_document_new ();
  g_autoptr (GError) error = NULL;
  if (!wick_document_load_file_auto (document, path, NULL, NULL, NULL, &error))
    g_error ("%s: %s", path, error->message);
  return document;
}

static guint32
track_named (WickTimelineScene *scene, const char *name)
{
  for (guint i = 0; i < wick_timeline_scene_get_n_tracks (scene); i++)
    {
      guint32 t = wick_timeline_scene_get_track (scene, i);
      if (g_strcmp0 (wick_timeline_scene_get_track_name (scene, t), name) == 0)
        return t;
    }
  g_error ("no track named %s", name);
  return 0;
}

static gint64
span_named (WickDocument *document, const char *name)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_document_str (document, spans[i].name), name) == 0)
      return i;
  g_error ("no span named %s", name);
  return -1;
}

static guint
count_near (cairo_surface_t *surface, guint32 rgb, double x0, double y0, double x1, double y1)
{
  guint n = 0;
  for (int y = (int)y0; y < (int)y1; y++)
    for (int x = (int)x0; x < (int)x1; x++)
      {
        guint32 p = app_test_pixel (surface, x, y);
        int dr = (int)(p >> 16 & 0xff) - (int)(rgb >> 16 & 0xff);
        int dg = (int)(p >> 8 & 0xff) - (int)(rgb >> 8 & 0xff);
        int db = (int)(p & 0xff) - (int)(rgb & 0xff);
        n += ABS (dr) <= 24 && ABS (dg) <= 24 && ABS (db) <= 24;
      }
  return n;
}

/* A torch with_stack trace in small: a host thread 40 slices deep (its
 * Python stack), a shallow one, and a GPU stream with two kernels under an
 * annotation that, as torch 2.x writes it, carries no device or stream. */
static WickDocument *
load_deep_stack_trace (void)
{
  GString *json = g_string_new ("{\"traceEvents\":[\n");
  g_string_append (json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"args\":{\"name\":\"python3\"}},\n"
                         "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"python3\"}},\n"
                         "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"args\":{\"labels\":\"GPU 0\"}},\n"
                         "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":100,\"args\":{\"sort_index\":100}},\n"
                         "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,\"args\":{\"sort_index\":5000000}},\n"
                         "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":1,\"args\":{\"name\":\"main\"}},\n");
  for (int d = 0; d < 40; d++)
    g_string_append_printf (json,
                            "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"frame %d\","
                            "\"pid\":100,\"tid\":1,\"ts\":%d,\"dur\":%d},\n",
                            d, d, 1000 - 2 * d);
  g_string_append (json,
                   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":100,\"tid\":1,\"ts\":100,\"dur\":300},\n"
                   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":100,\"tid\":2,\"ts\":10,\"dur\":50},\n"
                   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":100,\"tid\":2,\"ts\":20,\"dur\":10},\n"
                   "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"step\",\"pid\":0,\"tid\":7,\"ts\":90,\"dur\":360,\"args\":{\"External id\":1}},\n"
                   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":100,\"args\":{\"device\":0,\"stream\":7,\"correlation\":5}},\n"
                   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":100,\"args\":{\"device\":0,\"stream\":7,\"correlation\":6}}\n"
                   "]}\n");
  WickDocument *document = wick_document_new ();
  g_autoptr (GError) error = NULL;
  if (!wick_chrome_import_data (document, json->str, json->len, "deep.json", &error))
    g_error ("deep.json: %s", error->message);
  g_string_free (json, TRUE);
  return document;
}

static gint32
process_with_pid (WickTracks *tracks, gint64 pid)
{
  guint n;
  const WickProcess *p = wick_tracks_get_processes (tracks, &n);
  for (guint i = 0; i < n; i++)
    if (p[i].pid == pid)
      return (gint32)i;
  g_error ("no process %" G_GINT64_FORMAT, pid);
  return -1;
}

static void
test_timeline_collapse (void)
{
  g_autoptr (WickDocument) document = load_deep_stack_trace ();
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickTracks *tracks = wick_timeline_scene_get_tracks (scene);
  WickTimelineViewport view = { .width = 1200,
                                .height = 600,
                                .hover_x = -1,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  guint32 deep = track_named (scene, "main 1");
  guint32 shallow = track_named (scene, "thread 2");
  guint32 stream = track_named (scene, "cuda:0 stream 7");
  gint64 origin = wick_tracks_get_origin_ns (tracks);
  g_assert_cmpint (origin, ==, 0);

  /* The 40-deep stack starts collapsed to one row, the 2-deep one does not;
   * so the tracks after it are on the first screen. */
  g_assert_cmpuint (wick_tracks_track_n_rows (tracks, deep), ==, 41);
  g_assert_true (wick_timeline_scene_get_track_collapsible (scene, deep));
  g_assert_true (wick_timeline_scene_get_track_collapsed (scene, deep));
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, deep), ==, WICK_TIMELINE_ROW);
  g_assert_true (wick_timeline_scene_get_track_collapsible (scene, shallow));
  g_assert_false (wick_timeline_scene_get_track_collapsed (scene, shallow));
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, shallow), ==, 2 * WICK_TIMELINE_ROW);
  cairo_rectangle_t r, deep_rect;
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, stream, &r));
  g_assert_cmpfloat (r.y + r.height, <=, view.height);
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, shallow, &r));
  g_assert_cmpfloat (r.y + r.height, <=, view.height);

  /* The GPU process comes first, whatever its sort index (Kineto's 5000000
   * puts it after the host). */
  gint32 gpu = process_with_pid (tracks, 0);
  gint32 host = process_with_pid (tracks, 100);
  g_assert_true (wick_timeline_scene_process_is_gpu (scene, gpu));
  g_assert_false (wick_timeline_scene_process_is_gpu (scene, host));
  {
    cairo_rectangle_t s_rect, d_rect;
    g_assert_true (wick_timeline_scene_track_rect (scene, &view, stream, &s_rect));
    g_assert_true (wick_timeline_scene_track_rect (scene, &view, deep, &d_rect));
    g_assert_cmpfloat (s_rect.y, <, d_rect.y);
    g_assert_cmpuint (wick_timeline_scene_get_track (scene, 0), ==, stream);
  }

  /* A collapsed track's events are neither drawn nor hit; its flows end on
   * the summary row. */
  gint64 frame = span_named (document, "frame 20");
  WickEventRef ref = { WICK_EVENT_SLICE, (guint32)frame };
  g_assert_false (wick_timeline_scene_event_rect (scene, &view, ref, &r));
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, deep, &deep_rect));
  WickEventRef hit;
  g_assert_false (wick_timeline_scene_hit_event (
    scene, &view, wick_timeline_viewport_time_to_x (&view, 500000), deep_rect.y + 5, &hit));

  /* Its summary: the busy share of each stretch of time. The thread's
   * operator [100, 400) µs counts, not the Python frames around it (the
   * outermost lasts 1 ms); the stream's kernels [100, 200) and [300, 400)
   * count, its annotation does not. */
  g_assert_cmpfloat_with_epsilon (
    wick_timeline_scene_busy_fraction (scene, -1, deep, 0, 500000), 0.6, 1e-9);
  g_assert_cmpfloat_with_epsilon (
    wick_timeline_scene_busy_fraction (scene, -1, deep, 1000000, 2000000), 0.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (
    wick_timeline_scene_busy_fraction (scene, -1, stream, 100000, 400000), 2.0 / 3, 1e-9);
  g_assert_cmpfloat_with_epsilon (
    wick_timeline_scene_busy_fraction (scene, gpu, 0, 0, 500000), 200.0 / 500, 1e-9);
  g_assert_cmpfloat_with_epsilon (
    wick_timeline_scene_busy_fraction (scene, host, 0, 0, 1000000), 350.0 / 1000, 1e-9);

  /* The disclosure in the label expands it: 41 rows, the next thread below the fold. */
  guint32 what = 0;
  g_assert_cmpint (wick_timeline_scene_hit_gutter (scene, &view, 8, deep_rect.y + 6, &what), ==,
                   WICK_TIMELINE_GUTTER_EXPANDER);
  g_assert_cmpuint (what, ==, deep);
  wick_timeline_scene_set_track_collapsed (scene, deep, FALSE);
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, deep), ==, 41 * WICK_TIMELINE_ROW);
  g_assert_true (wick_timeline_scene_event_rect (scene, &view, ref, &r));
  g_assert_false (wick_timeline_scene_track_rect (scene, &view, shallow, &r));

  /* The user's choice survives a rebuild (a new scene of the document);
   * the defaults apply where the user chose nothing. */
  wick_timeline_scene_set_collapsed (scene, gpu, TRUE);
  {
    g_autoptr (WickTimelineScene) next = wick_timeline_scene_new (document);
    g_assert_true (wick_timeline_scene_get_track_collapsed (next, deep));
    wick_timeline_scene_copy_state (next, scene);
    g_assert_false (wick_timeline_scene_get_track_collapsed (next, deep));
    g_assert_true (wick_timeline_scene_get_collapsed (next, gpu));
    g_assert_false (wick_timeline_scene_get_collapsed (next, host));
  }

  /* A collapsed process's header draws the strip: busy where the kernels
   * ran, empty between them. */
  wick_timeline_scene_set_track_collapsed (scene, deep, TRUE);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  /* the GPU header (the first) */
  double header_y = -1;
  for (double y = WICK_TIMELINE_RULER; y < view.height; y += 1)
    {
      guint32 p;
      if (wick_timeline_scene_hit_gutter (scene, &view, 20, y, &p) == WICK_TIMELINE_GUTTER_PROCESS
          && p == (guint32)gpu)
        {
          header_y = y;
          break;
        }
    }
  g_assert_cmpfloat (header_y, >, 0);
  WickRgb accent = wick_palette_accent (FALSE), bg = wick_palette_background (FALSE);
  guint32 strip = (guint32)((accent.r * 0.75 + bg.r * 0.25) * 255) << 16
                  | (guint32)((accent.g * 0.75 + bg.g * 0.25) * 255) << 8
                  | (guint32)((accent.b * 0.75 + bg.b * 0.25) * 255);
  double busy_x = wick_timeline_viewport_time_to_x (&view, 150000);
  double idle_x = wick_timeline_viewport_time_to_x (&view, 250000);
  g_assert_cmpuint (count_near (surface, strip, busy_x - 2, header_y, busy_x + 2,
                                header_y + WICK_TIMELINE_PROCESS_ROW),
                    >, 40);
  g_assert_cmpuint (count_near (surface, strip, idle_x - 2, header_y, idle_x + 2,
                                header_y + WICK_TIMELINE_PROCESS_ROW),
                    ==, 0);
  /* the collapsed thread's row: busy while its operator runs, not after */
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, deep, &deep_rect));
  double op_x = wick_timeline_viewport_time_to_x (&view, 250000);
  double after_x = wick_timeline_viewport_time_to_x (&view, 700000);
  g_assert_cmpuint (count_near (surface, strip, op_x - 2, deep_rect.y, op_x + 2,
                                deep_rect.y + deep_rect.height),
                    >, 40);
  g_assert_cmpuint (count_near (surface, strip, after_x - 2, deep_rect.y, after_x + 2,
                                deep_rect.y + deep_rect.height),
                    ==, 0);
  cairo_surface_destroy (surface);
}

static gboolean
legend_has (WickTimelineScene *scene, const char *name, guint64 *ns)
{
  guint n = wick_timeline_scene_get_legend (scene, 0, NULL, NULL);
  for (guint i = 0; i < n; i++)
    {
      const char *got;
      wick_timeline_scene_get_legend (scene, i, &got, ns);
      if (g_strcmp0 (got, name) == 0)
        return TRUE;
    }
  return FALSE;
}

/* A Chrome trace's legend: the names on screen by the time they take,
 * most first; what is off screen or collapsed does not count. */
static void
test_timeline_legend (void)
{
  g_autoptr (WickDocument) document = load_deep_stack_trace ();
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickTimelineViewport view = { .width = 1200,
                                .height = 600,
                                .hover_x = -1,
                                .legend = TRUE,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1 };
  view.start_ns = 0;
  view.end_ns = 1050000;
  double ns_per_px = 1050000.0 / (view.width - WICK_TIMELINE_GUTTER);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  /* stream 7: the annotation step 360 µs, gemm and relu 100 µs each; thread
   * 2: aten::mm 50 µs, aten::addmm 10 µs; the 41 rows of main are collapsed */
  const char *first;
  guint64 ns;
  guint n = wick_timeline_scene_get_legend (scene, 0, &first, &ns);
  g_assert_cmpuint (n, ==, 5);
  g_assert_cmpstr (first, ==, "step");
  g_assert_cmpfloat (fabs ((double)ns - 360000), <=, 2 * ns_per_px);
  g_assert_true (legend_has (scene, "gemm", &ns));
  g_assert_cmpfloat (fabs ((double)ns - 100000), <=, 2 * ns_per_px);
  g_assert_true (legend_has (scene, "aten::mm", &ns));
  g_assert_cmpfloat (fabs ((double)ns - 50000), <=, 2 * ns_per_px);
  const char *last;
  wick_timeline_scene_get_legend (scene, 4, &last, NULL);
  g_assert_cmpstr (last, ==, "aten::addmm");
  g_assert_false (legend_has (scene, "frame 20", NULL));
  /* expanded, the frames count: frame 0 lasts the whole millisecond */
  wick_timeline_scene_set_track_collapsed (scene, track_named (scene, "main 1"), FALSE);
  view.height = 1400;
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, view.width, view.height);
  cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  wick_timeline_scene_get_legend (scene, 0, &first, NULL);
  g_assert_cmpstr (first, ==, "frame 0");
  g_assert_cmpuint (wick_timeline_scene_get_legend (scene, 0, NULL, NULL), ==,
                    WICK_TIMELINE_LEGEND_MAX);
  /* off screen does not count: [0, 150) µs has no relu */
  wick_timeline_scene_set_track_collapsed (scene, track_named (scene, "main 1"), TRUE);
  view.end_ns = 150000;
  wick_timeline_scene_draw (scene, cr, &view);
  g_assert_false (legend_has (scene, "relu", NULL));
  g_assert_true (legend_has (scene, "gemm", &ns));
  g_assert_cmpfloat (fabs ((double)ns - 50000), <=, 2 * 150000.0 / (view.width - WICK_TIMELINE_GUTTER));
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
}

static void
test_timeline_tracks (void)
{
  g_autoptr (WickDocument) document = load_tracks_fixture ();
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickTracks *tracks = wick_timeline_scene_get_tracks (scene);
  WickTimelineViewport view = { .width = 1200,
                                .height = 600,
                                .hover_x = -1,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  /* A track per thread, named; height follows depth (main: 3 rows). */
  guint32 main_track = track_named (scene, "main 10");
  guint32 autograd = track_named (scene, "autograd 11");
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, main_track), ==,
                   3 * WICK_TIMELINE_ROW);
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, autograd), ==,
                   2 * WICK_TIMELINE_ROW);
  guint32 load = track_named (scene, "load");
  guint32 counter = track_named (scene, "memory bytes");
  guint32 device = track_named (scene, "cuda:0 stream 7");
  guint32 instants = track_named (scene, "main · instants");
  g_assert_cmpint (wick_timeline_scene_get_track_height (scene, load), ==, 2 * WICK_TIMELINE_ROW);

  /* The process header collapses its group; the gutter hit says so. */
  cairo_rectangle_t r, before;
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, main_track, &before));
  guint32 what = 0;
  g_assert_cmpint (wick_timeline_scene_hit_gutter (scene, &view, 20, before.y - 5, &what), ==,
                   WICK_TIMELINE_GUTTER_PROCESS);
  wick_timeline_scene_set_collapsed (scene, what, TRUE);
  g_assert_false (wick_timeline_scene_track_rect (scene, &view, main_track, &r));
  g_assert_false (wick_timeline_scene_track_rect (scene, &view, autograd, &r));
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, device, &r));
  wick_timeline_scene_set_collapsed (scene, what, FALSE);
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, main_track, &r));

  /* Pinning: the pin in the gutter; the track moves to the top. */
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, autograd, &r));
  g_assert_cmpint (
    wick_timeline_scene_hit_gutter (scene, &view, WICK_TIMELINE_GUTTER - 10, r.y + 6, &what), ==,
    WICK_TIMELINE_GUTTER_PIN);
  g_assert_cmpuint (what, ==, autograd);
  wick_timeline_scene_set_pinned (scene, autograd, TRUE);
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, autograd, &r));
  g_assert_cmpfloat (r.y, ==, WICK_TIMELINE_RULER);
  /* ...and stays there while the rest scrolls. */
  view.scroll_y = 40;
  g_assert_true (wick_timeline_scene_track_rect (scene, &view, autograd, &r));
  g_assert_cmpfloat (r.y, ==, WICK_TIMELINE_RULER);
  view.scroll_y = 0;
  wick_timeline_scene_set_pinned (scene, autograd, FALSE);

  /* Every kind of event is hit where it is drawn. */
  struct
  {
    guint32 track;
    double t_us;
    guint kind;
    const char *name;
  } hits[] = {
    { load, 150, WICK_EVENT_ASYNC, "load" },
    { counter, 500, WICK_EVENT_COUNTER, "memory bytes" },
    { instants, 650, WICK_EVENT_INSTANT, "tick" },
    { device, 250, WICK_EVENT_DEVICE, "sgemm" },
    { autograd, 700, WICK_EVENT_SLICE, "backward" },
  };
  guint64 origin = view.start_ns;
  for (guint i = 0; i < G_N_ELEMENTS (hits); i++)
    {
      g_assert_true (wick_timeline_scene_track_rect (scene, &view, hits[i].track, &r));
      double x = wick_timeline_viewport_time_to_x (&view, origin + (guint64)(hits[i].t_us * 1000));
      WickEventRef event;
      g_assert_true (wick_timeline_scene_hit_event (scene, &view, x, r.y + 5, &event));
      g_assert_cmpuint (event.kind, ==, hits[i].kind);
      g_assert_cmpstr (wick_tracks_event_name (tracks, event), ==, hits[i].name);
    }
  /* The counter's value at the cursor. */
  double x500 = wick_timeline_viewport_time_to_x (&view, origin + 500000);
  g_autofree char *value = wick_timeline_scene_counter_label (scene, &view, counter, x500);
  g_assert_cmpstr (value, ==, "300 B");

  /* Flows of the selected slice (matmul, where the fwdbwd flow starts):
   * drawn as an arrow into autograd's "grad", which ] reaches. */
  WickEventRef matmul = { WICK_EVENT_SLICE, (guint32)span_named (document, "matmul") };
  guint32 chain[16];
  guint n_direct;
  guint n_chain = wick_timeline_scene_flow_chain (scene, matmul, chain, 16, &n_direct);
  g_assert_cmpuint (n_direct, ==, 1);
  g_assert_cmpuint (n_chain, >=, 1);
  WickEventRef next;
  g_assert_true (wick_timeline_scene_follow_flow (scene, matmul, 1, &next));
  g_assert_cmpstr (wick_tracks_event_name (tracks, next), ==, "grad");
  WickEventRef back;
  g_assert_true (wick_timeline_scene_follow_flow (scene, next, -1, &back));
  g_assert_cmpuint (back.index, ==, matmul.index);
  /* The launch → kernel arrow of cudaLaunchKernel. */
  WickEventRef launch = { WICK_EVENT_SLICE, (guint32)span_named (document, "cudaLaunchKernel") };
  g_assert_true (wick_timeline_scene_follow_flow (scene, launch, 1, &next));
  g_assert_cmpuint (next.kind, ==, WICK_EVENT_DEVICE);
  g_assert_cmpstr (wick_tracks_event_name (tracks, next), ==, "sgemm");

  view.selected_type = WICK_RECORD_SPAN;
  view.selected_index = matmul.index;
  view.selected_event_kind = WICK_EVENT_SLICE;
  view.selected_event_index = matmul.index;
  cairo_surface_t *plain_surface
    = draw_timeline (document, &(WickTimelineViewport){ .start_ns = view.start_ns,
                                                        .end_ns = view.end_ns,
                                                        .width = 1200,
                                                        .height = 600,
                                                        .hover_x = -1,
                                                        .selected_type = WICK_RECORD_NONE,
                                                        .selected_index = -1 });
  cairo_surface_t *surface = draw_timeline (document, &view);
  WickRgb accent = wick_palette_accent (FALSE);
  guint32 accent_rgb = app_test_rgb (accent.r, accent.g, accent.b);
  /* Between the two threads' rows, the arrow is drawn; not without it. */
  cairo_rectangle_t grad;
  WickEventRef grad_ref = { WICK_EVENT_SLICE, (guint32)span_named (document, "grad") };
  g_assert_true (wick_timeline_scene_event_rect (scene, &view, grad_ref, &grad));
  g_assert_cmpuint (
    count_near (surface, accent_rgb, grad.x - 14, grad.y - 6, grad.x + 2, grad.y + grad.height), >,
    8);
  g_assert_cmpuint (count_near (plain_surface, accent_rgb, grad.x - 14, grad.y - 6, grad.x + 2,
                                grad.y + grad.height),
                    ==, 0);
  /* A flow end is clickable. */
  WickEventRef flow_hit;
  g_assert_true (
    wick_timeline_scene_hit_event (scene, &view, grad.x, grad.y + grad.height / 2, &flow_hit));
  g_assert_cmpuint (flow_hit.kind, ==, WICK_TIMELINE_EVENT_FLOW);
  cairo_surface_destroy (surface);
  cairo_surface_destroy (plain_surface);

  /* A zero-duration slice is drawn, and boxed when selected. */
  gint64 zero = span_named (document, "zero_len");
  WickEventRef zero_ref = { WICK_EVENT_SLICE, (guint32)zero };
  cairo_rectangle_t z;
  g_assert_true (wick_timeline_scene_event_rect (scene, &view, zero_ref, &z));
  view.selected_index = zero;
  view.selected_event_index = zero;
  surface = draw_timeline (document, &view);
  guint32 zero_colour = app_test_pixel (surface, (int)z.x, (int)(z.y + z.height / 2));
  g_assert_cmphex (zero_colour, !=,
                   app_test_rgb (wick_palette_background (FALSE).r,
                                 wick_palette_background (FALSE).g,
                                 wick_palette_background (FALSE).b));
  g_assert_cmpuint (count_near (surface, accent_rgb, z.x - 6, z.y - 8, z.x + 7, z.y + z.height), >,
                    20);
  cairo_surface_destroy (surface);

  /* The legend of a Chrome trace: names on screen with their hues, bottom
   * right, only when asked (the step hues are a candle-graph trace's). */
  view.selected_type = WICK_RECORD_NONE;
  view.selected_event_kind = WICK_EVENT_NONE;
  cairo_surface_t *plain = draw_timeline (document, &view);
  view.legend = TRUE;
  surface = draw_timeline (document, &view);
  guint changed = 0;
  for (int y = 300; y < view.height - 40; y++)
    for (int x = view.width - 330; x < view.width; x++)
      changed += app_test_pixel (surface, x, y) != app_test_pixel (plain, x, y);
  g_assert_cmpuint (changed, >, 200);
  WickRgb fwd = wick_palette_span (1 * WICK_SPAN_SHADES, FALSE);
  guint32 fwd_rgb = app_test_rgb (fwd.r, fwd.g, fwd.b);
  g_assert_cmpuint (count_near (surface, fwd_rgb, 600, 540, 1200, 575), ==,
                    count_near (plain, fwd_rgb, 600, 540, 1200, 575));
  cairo_surface_destroy (plain);
  cairo_surface_destroy (surface);
}

/* Search hits stay visible zoomed out (a 100 ns span in a 10 ms view) and
 * are ticked on the overview. */
static void
test_timeline_search_zoomed_out (void)
{
  g_autoptr (WickDocument) document = load_tracks_fixture ();
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  guint32 hit = (guint32)span_named (document, "matmul");
  guint n;
  wick_document_get_spans (document, &n);
  g_autofree guint8 *matches = g_new0 (guint8, n);
  matches[hit] = 1;
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  WickTimelineViewport view = { .start_ns = start,
                                .end_ns = start + 400000000,
                                .width = 1000,
                                .height = 400,
                                .hover_x = -1,
                                .selected_index = -1,
                                .matches = matches,
                                .match_list = &hit,
                                .n_match_list = 1 };
  cairo_rectangle_t r;
  WickEventRef ref = { WICK_EVENT_SLICE, hit };
  g_assert_true (wick_timeline_scene_event_rect (scene, &view, ref, &r));
  cairo_surface_t *surface = draw_timeline (document, &view);
  WickRgb accent = wick_palette_accent (FALSE);
  guint32 accent_rgb = app_test_rgb (accent.r, accent.g, accent.b);
  g_assert_cmpuint (count_near (surface, accent_rgb, r.x - 1, r.y, r.x + 3, r.y + r.height), >=,
                    r.height);
  cairo_surface_destroy (surface);
  /* The overview: a tick for the hit. */
  WickTimelineViewport full = view;
  full.end_ns = end;
  full.height = 60;
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, full.width, full.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw_overview (scene, cr, &full, start, end);
  cairo_destroy (cr);
  double x = wick_timeline_viewport_time_to_x (&full, start + 20000);
  g_assert_cmpuint (count_near (surface, accent_rgb, x - 2, 50, x + 4, 60), >, 4);
  cairo_surface_destroy (surface);
}

/* A live document grows after its scene was built: a mark appended then is
 * labelled and drawn (the live window crashed in pango_layout_set_text,
 * reading a label past the end of the scene's array). */
static void
test_timeline_marks_appended (void)
{
  g_autofree char *path = app_test_example_path ();
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0' && strstr (lines[i], "\"kind\":\"terminal\"") == NULL)
      g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), &error));
  g_assert_no_error (error);
  guint n_ext;
  wick_document_get_extensions (document, &n_ext);
  g_assert_cmpuint (n_ext, ==, 5);
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickTimelineViewport view = { .width = 1600,
                                .height = 500,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  /* Marks at the end of the view, one per 300 ns so that each gets a label. */
  for (guint m = 0; m < 40; m++)
    {
      g_autofree char *line = g_strdup_printf (
        "{\"kind\":\"wick_mark\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"label\":\"late %u\"}",
        view.end_ns - 40 * 300 + m * 300, m);
      g_assert_true (wick_document_feed_line (document, line, strlen (line), &error));
    }
  wick_document_get_extensions (document, &n_ext);
  g_assert_cmpuint (n_ext, ==, 45);
  cairo_surface_t *surface
    = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  view.start_ns = view.end_ns - 40 * 300; /* zoomed in on the late marks */
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 0), ==, "step 1");
  g_assert_cmpstr (wick_timeline_scene_get_marker_label (scene, 44), ==, "late 39");
}

static gboolean
rgb_near (guint32 a, guint32 b)
{
  for (int shift = 0; shift < 24; shift += 8)
    if (ABS ((int)(a >> shift & 0xff) - (int)(b >> shift & 0xff)) > 3)
      return FALSE;
  return TRUE;
}

/* ProfilerStep#N as a step row under the ruler — a band per
 * step in the accent colour, a click on it selects the step's span; a trace
 * without steps has no such row. */
static void
test_timeline_steps (void)
{
  static const char trace[]
    = "{\"traceEvents\":["
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
      "\"tid\":1,\"ts\":0,\"dur\":400},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,"
      "\"dur\":100},"
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,"
      "\"tid\":1,\"ts\":500,\"dur\":500}"
      "]}";
  g_autoptr (WickDocument) document = wick_document_new ();
  g_assert_true (wick_chrome_import_data (document, trace, strlen (trace), "steps.json", NULL));
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  g_assert_cmpuint (wick_timeline_scene_get_n_steps (scene), ==, 2);
  int top = wick_timeline_scene_get_step_row_top (scene);
  g_assert_cmpint (top, ==, WICK_TIMELINE_RULER);
  WickTimelineViewport view = { .start_ns = 0,
                                .end_ns = 1000000,
                                .width = 150 + 1000,
                                .height = 200,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1,
                                .no_labels = TRUE };
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  /* 1 px per µs: step 1 over x 150..549, a gap to 650, step 2 from 650 */
  int y = top + WICK_TIMELINE_STEP_ROW / 2;
  WickRgb accent = wick_palette_accent (FALSE), bg = wick_palette_background (FALSE);
  guint32 first = app_test_rgb (accent.r * 0.5 + bg.r * 0.5, accent.g * 0.5 + bg.g * 0.5,
                                accent.b * 0.5 + bg.b * 0.5);
  guint32 second = app_test_rgb (accent.r * 0.3 + bg.r * 0.7, accent.g * 0.3 + bg.g * 0.7,
                                 accent.b * 0.3 + bg.b * 0.7);
  g_assert_true (rgb_near (app_test_pixel (surface, 300, y), first));
  g_assert_true (rgb_near (app_test_pixel (surface, 800, y), second));
  g_assert_false (rgb_near (app_test_pixel (surface, 600, y), first));
  g_assert_false (rgb_near (app_test_pixel (surface, 600, y), second));
  cairo_surface_destroy (surface);
  gint64 index;
  g_assert_cmpint (wick_timeline_scene_hit (scene, &view, 800, y, &index), ==, WICK_RECORD_SPAN);
  g_assert_cmpstr (wick_document_str (document, wick_document_get_spans (document, NULL)[index].name),
                   ==, "ProfilerStep#2");
  g_assert_cmpint (wick_timeline_scene_hit (scene, &view, 600, y, &index), ==, WICK_RECORD_NONE);

  g_autoptr (WickDocument) plain = app_test_document_from_text (nested_trace);
  g_autoptr (WickTimelineScene) no_steps = wick_timeline_scene_new (plain);
  g_assert_cmpuint (wick_timeline_scene_get_n_steps (no_steps), ==, 0);
  g_assert_cmpint (wick_timeline_scene_get_step_row_top (no_steps), ==, -1);
}

/* Zoomed out, a dense row's rectangles are kept for the next frame of the
 * same time range and width (the row cache): every frame, scrolled, panned,
 * zoomed or of a row that grew, is the same pixels as one drawn without it. */
static WickDocument *
dense_tracks_document (guint units, guint n_threads)
{
  WickDocument *document = wick_document_new ();
  WickTracks *tracks = wick_document_begin_tracks (document, WICK_TRACE_FORMAT_CHROME);
  guint32 process = wick_tracks_add_process (tracks, 1);
  WickStr names[4], cat = wick_tracks_intern (tracks, "cpu_op", 6);
  static const char *text[] = { "step", "forward", "matmul", "relu" };
  for (guint i = 0; i < 4; i++)
    names[i] = wick_tracks_intern (tracks, text[i], strlen (text[i]));
  for (guint th = 0; th < n_threads; th++)
    {
      guint32 thread = wick_tracks_add_thread (tracks, process, 100 + th);
      for (guint u = 0; u < units; u++)
        {
          gint64 t = 5 + (gint64)u * 1000 + th * 13;
          wick_tracks_slice_complete (tracks, thread, t, 990, names[u % 2], cat, 0);
          wick_tracks_slice_complete (tracks, thread, t + 10, 400 + (u * 7919) % 500,
                                      names[2 + u % 2], cat, 0);
        }
    }
  wick_tracks_finish (tracks);
  return document;
}

static void
draw_frame (WickTimelineScene *scene, cairo_surface_t *surface, guint64 start, guint64 end,
            double scroll)
{
  cairo_t *cr = cairo_create (surface);
  WickTimelineViewport view = { .start_ns = start, .end_ns = end, .width = 900, .height = 500,
                                .scroll_y = scroll, .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1, .selected_event_kind = WICK_EVENT_NONE,
                                .hover_x = -1 };
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
}

static void
test_timeline_row_cache (void)
{
  g_autoptr (WickDocument) document = dense_tracks_document (40000, 12);
  WickTimelineScene *scene = wick_timeline_scene_new (document);
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  cairo_surface_t *cached = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  cairo_surface_t *fresh = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  guint64 width = end - start;
  /* whole trace twice (the second from the cache), scrolled, then panned and
   * zoomed a little: each against the same frame drawn without the cache */
  const struct
  {
    guint64 start, end;
    double scroll;
  } frames[] = {
    { start, end, 0 },
    { start, end, 0 },
    { start, end, 60 },
    { start, end, 0 },
    { start + width / 10, end, 0 },
    { start + width / 10, end - width / 10, 40 },
    { start, end - width / 3, 0 },
  };
  guint64 painted = 0;
  for (guint f = 0; f < G_N_ELEMENTS (frames); f++)
    {
      wick_timeline_scene_set_row_cache (scene, TRUE);
      draw_frame (scene, cached, frames[f].start, frames[f].end, frames[f].scroll);
      /* no cache: the table is emptied and every row reads its events */
      wick_timeline_scene_set_row_cache (scene, FALSE);
      draw_frame (scene, fresh, frames[f].start, frames[f].end, frames[f].scroll);
      wick_timeline_scene_set_row_cache (scene, TRUE);
      /* the cache is filled again only by a cached draw: redraw the frame
       * before so that frame f + 1 may come from it */
      int stride = cairo_image_surface_get_stride (cached);
      const guint8 *a = cairo_image_surface_get_data (cached), *b = cairo_image_surface_get_data (fresh);
      for (int y = 0; y < 500; y++)
        {
          if (memcmp (a + (gsize)y * stride, b + (gsize)y * stride, 900 * 4) != 0)
            g_error ("frame %u: row %d of the cached frame differs from the uncached one", f, y);
          for (int x = 200; x < 900; x++)
            painted += ((const guint32 *)(gconstpointer)(a + (gsize)y * stride))[x] != 0;
        }
      if (f + 1 < G_N_ELEMENTS (frames))
        draw_frame (scene, cached, frames[f].start, frames[f].end, frames[f].scroll);
    }
  g_assert_cmpuint (painted, >, 0);
  cairo_surface_destroy (cached);
  cairo_surface_destroy (fresh);
  wick_timeline_scene_free (scene);
}

/* Draws @scene over [@start, @end) into a new surface. */
static cairo_surface_t *
draw_scene_range (WickTimelineScene *scene, guint64 start, guint64 end, int width)
{
  WickTimelineViewport view = { .width = width,
                                .height = 600,
                                .start_ns = start,
                                .end_ns = end,
                                .selected_type = WICK_RECORD_NONE,
                                .selected_index = -1,
                                .hover_x = -1 };
  cairo_surface_t *surface
    = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, view.width, view.height);
  cairo_t *cr = cairo_create (surface);
  wick_timeline_scene_draw (scene, cr, &view);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  return surface;
}

static void
assert_same_pixels (cairo_surface_t *a, cairo_surface_t *b)
{
  int stride = cairo_image_surface_get_stride (a), h = cairo_image_surface_get_height (a);
  g_assert_cmpint (stride, ==, cairo_image_surface_get_stride (b));
  g_assert_cmpmem (cairo_image_surface_get_data (a), stride * h, cairo_image_surface_get_data (b),
                   stride * h);
}

/* What live_update_run() counted. */
typedef struct
{
  guint updates, rebuilds;
  /* device colours the updates computed, what colouring every slice again
   * at each update would have computed, and the slices the model renamed
   * one by one (their spans resolved) */
  guint renewed, whole, renamed;
  guint clock_moves; /* batches after which a device clock's offset changed */
} LiveUpdateRun;

/* The trace's @lines committed in batches: the scene updated in place after
 * each batch (wick_timeline_scene_update(), its unchanged rows' cached
 * pixels kept) draws what a scene built afresh draws, over the start of the
 * run (where the row cache is kept from frame to frame) and over all of it,
 * and places and colours every device interval as that scene does. */
static void
live_update_run (char **lines, LiveUpdateRun *run)
{
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickLineDecoder) decoder = wick_line_decoder_new (TRUE);
  g_autoptr (WickTimelineScene) scene = NULL;
  guint64 early_end = 0, first_interval = G_MAXUINT64;
  *run = (LiveUpdateRun){ 0 };
  static const guint sizes[] = { 5, 40, 1, 120, 17, 300 };
  for (guint i = 0, b = 0; lines[i] != NULL; b++)
    {
      g_autoptr (WickLineBatch) batch = wick_line_batch_new ();
      for (guint k = 0; k < sizes[b % G_N_ELEMENTS (sizes)] && lines[i] != NULL; i++)
        if (*g_strstrip (lines[i]))
          {
            g_assert_true (wick_line_batch_add (batch, decoder, lines[i], strlen (lines[i])));
            k++;
          }
      g_assert_true (wick_document_commit_batch (document, batch, NULL));
      if (b % 4 == 3)
        wick_document_analyze (document);
      guint before = scene != NULL ? wick_timeline_scene_get_device_colours_renewed (scene) : 0;
      if (scene != NULL && wick_timeline_scene_update (scene))
        {
          run->updates++;
          run->renewed += wick_timeline_scene_get_device_colours_renewed (scene) - before;
          guint nd;
          wick_tracks_get_device_slices (wick_timeline_scene_get_tracks (scene), &nd);
          run->whole += nd;
        }
      else
        {
          g_clear_pointer (&scene, wick_timeline_scene_free);
          scene = wick_timeline_scene_new (document);
          run->rebuilds++;
        }
      g_autoptr (WickTimelineScene) fresh = wick_timeline_scene_new (document);
      /* every device interval where a new scene places it (its clock) and in its colour */
      {
        WickTracks *model = wick_timeline_scene_get_tracks (fresh);
        guint nd, n_renamed;
        wick_tracks_get_device_slices (model, &nd);
        wick_tracks_get_device_renames (model, &n_renamed, NULL);
        run->renamed = MAX (run->renamed, n_renamed);
        for (guint d = 0; d < nd; d++)
          {
            WickEventRef ref = { WICK_EVENT_DEVICE, d };
            guint64 a0, a1, f0, f1;
            wick_timeline_scene_event_extent (scene, ref, &a0, &a1);
            wick_timeline_scene_event_extent (fresh, ref, &f0, &f1);
            g_assert_cmpuint (a0, ==, f0);
            g_assert_cmpuint (a1, ==, f1);
            g_assert_cmpuint (wick_timeline_scene_get_device_colour (scene, d), ==,
                              wick_timeline_scene_get_device_colour (fresh, d));
          }
        if (nd > 0)
          {
            guint64 at = wick_timeline_scene_interval_start (fresh, 0);
            run->clock_moves += first_interval != G_MAXUINT64 && at != first_interval;
            first_interval = at;
          }
      }
      guint64 s0, e0, s1, e1;
      wick_timeline_scene_get_extent (scene, &s0, &e0);
      wick_timeline_scene_get_extent (fresh, &s1, &e1);
      g_assert_cmpuint (s0, ==, s1);
      g_assert_cmpuint (e0, ==, e1);
      g_assert_cmpint (wick_timeline_scene_get_content_height (scene), ==,
                       wick_timeline_scene_get_content_height (fresh));
      g_assert_cmpuint (wick_timeline_scene_get_n_tracks (scene), ==,
                        wick_timeline_scene_get_n_tracks (fresh));
      for (guint t = 0; t < wick_timeline_scene_get_n_tracks (scene); t++)
        g_assert_cmpuint (wick_timeline_scene_get_track (scene, t), ==,
                          wick_timeline_scene_get_track (fresh, t));
      if (early_end == 0 && e0 - s0 > 1000000)
        early_end = s0 + (e0 - s0) / 3;
      /* narrow: the rows are dense there, so their pixels are cached */
      guint64 ranges[3][2]
        = { { s0, early_end ? early_end : e0 }, { s0, e0 }, { s0, early_end ? early_end : e0 } };
      const int widths[3] = { 1200, 1200, WICK_TIMELINE_GUTTER + 24 };
      for (guint r = 0; r < 3; r++)
        {
          cairo_surface_t *a = draw_scene_range (scene, ranges[r][0], ranges[r][1], widths[r]);
          cairo_surface_t *c = draw_scene_range (fresh, ranges[r][0], ranges[r][1], widths[r]);
          assert_same_pixels (a, c);
          cairo_surface_destroy (a);
          cairo_surface_destroy (c);
        }
    }
  g_test_message ("%u updates in place, %u scenes built; the updates coloured %u device "
                  "intervals (%u renamed one by one in the model), %u if each had coloured them "
                  "all; the device clock moved %u times",
                  run->updates, run->rebuilds, run->renewed, run->renamed, run->whole,
                  run->clock_moves);
}

/* The example trace live, as it is and with its device clock moving: every
 * 60th kernel starts earlier on the device clock than the one before it
 * did, by more each time, so that the clock's offset to the host grows
 * while the run plays (and the scene is built again then, its placement of
 * every interval moved). */
static void
test_timeline_live_update (void)
{
  g_autofree char *path = app_test_example_path ();
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  LiveUpdateRun run;
  live_update_run (lines, &run);
  g_assert_cmpuint (run.updates, >, run.rebuilds);
  /* the example's kernels arrive while it plays, some renamed when their spans
   * resolve: updates colour the new and the renamed ones, not all again */
  g_assert_cmpuint (run.renamed, >, 0);
  g_assert_cmpuint (run.renewed, >, 0);
  g_assert_cmpuint (run.renewed, <, run.whole / 2);

  guint kernels = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *at = strstr (lines[i], ",\"start_ns\":");
      if (strstr (lines[i], "{\"kind\":\"device_interval\"") == NULL || at == NULL)
        continue;
      if (kernels++ % 60 != 59)
        continue;
      guint64 start = g_ascii_strtoull (at + strlen (",\"start_ns\":"), NULL, 10);
      const char *rest = strchr (at + 1, ',');
      g_assert_nonnull (rest);
      char *moved = g_strdup_printf ("%.*s,\"start_ns\":%" G_GUINT64_FORMAT "%s",
                                     (int)(at - lines[i]), lines[i],
                                     start - (guint64)kernels * 20000, rest);
      g_free (lines[i]);
      lines[i] = moved;
    }
  live_update_run (lines, &run);
  g_assert_cmpuint (run.clock_moves, >, 0);
  g_assert_cmpuint (run.updates, >, run.rebuilds);

  /* Every kernel 500 µs after its launch: the clock is the host's (offset 0)
   * while every kernel starts before the end of the host's spans so far, and
   * shifted back when the newest starts after it (spans still open end at
   * their start); the offset follows the spans as they close. */
  g_autoptr (GHashTable) launches = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *id = strstr (lines[i], "\"id\":\"");
      const char *at = strstr (lines[i], ",\"start_ns\":");
      if (g_str_has_prefix (lines[i], "{\"kind\":\"span_start\"") && id != NULL && at != NULL)
        g_hash_table_insert (launches, g_strndup (id + 6, strcspn (id + 6, "\"")),
                             GSIZE_TO_POINTER (g_ascii_strtoull (at + 12, NULL, 10)));
    }
  guint on_host = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *span = strstr (lines[i], "\"span_id\":\"");
      const char *at = strstr (lines[i], ",\"start_ns\":");
      if (!g_str_has_prefix (lines[i], "{\"kind\":\"device_interval\"") || span == NULL
          || at == NULL)
        continue;
      g_autofree char *id = g_strndup (span + 11, strcspn (span + 11, "\""));
      gpointer launch;
      g_assert_true (g_hash_table_lookup_extended (launches, id, NULL, &launch));
      char *moved = g_strdup_printf ("%.*s,\"start_ns\":%" G_GUINT64_FORMAT "%s",
                                     (int)(at - lines[i]), lines[i],
                                     (guint64)GPOINTER_TO_SIZE (launch) + 500000,
                                     strchr (at + 1, ','));
      g_free (lines[i]);
      lines[i] = moved;
      on_host++;
    }
  g_assert_cmpuint (on_host, ==, kernels);
  live_update_run (lines, &run);
  g_assert_cmpuint (run.clock_moves, >, 0);
  g_assert_cmpuint (run.updates, >, 0);
}

/* Two processes of nested dense threads and a counter: process headers and
 * stripes scroll out of view, rows are drawn from the summary zoomed out and
 * carry labels zoomed in. */
static WickDocument *
scrolled_tracks_document (void)
{
  WickDocument *document = wick_document_new ();
  WickTracks *tracks = wick_document_begin_tracks (document, WICK_TRACE_FORMAT_CHROME);
  WickStr cat = wick_tracks_intern (tracks, "cpu_op", 6);
  static const char *text[] = { "step", "forward", "matmul", "relu" };
  WickStr names[4];
  for (guint i = 0; i < 4; i++)
    names[i] = wick_tracks_intern (tracks, text[i], strlen (text[i]));
  for (guint pid = 1; pid <= 2; pid++)
    {
      guint32 process = wick_tracks_add_process (tracks, pid);
      for (guint th = 0; th < 9; th++)
        {
          guint32 thread = wick_tracks_add_thread (tracks, process, pid * 100 + th);
          for (guint u = 0; u < 20000; u++)
            {
              gint64 t = 5 + (gint64)u * 1000 + th * 13;
              wick_tracks_slice_complete (tracks, thread, t, 990, names[u % 2], cat, 0);
              wick_tracks_slice_complete (tracks, thread, t + 10, 400 + (u * 7919) % 500,
                                          names[2 + u % 2], cat, 0);
              if (u % 3 == 0)
                wick_tracks_slice_complete (tracks, thread, t + 20, 200, names[3], cat, 0);
            }
        }
      guint32 counter = wick_tracks_counter_track (tracks, (gint32)process,
                                                   wick_tracks_intern (tracks, "queue", 5));
      for (guint i = 0; i < 5000; i++)
        wick_tracks_counter_add (tracks, counter, (gint64)i * 4000,
                                 (double)((i * 2654435761u) % 97));
    }
  wick_tracks_finish (tracks);
  return document;
}

/* The scrolled band is kept as pixels and moved by a vertical scroll of whole
 * pixels, only the exposed strip drawn (the gutter's labels too): every frame
 * of a run of scrolls, up and down, by small and large steps, fractional
 * ones, with a collapsed track, zoomed out and zoomed in with labels, is the
 * same pixels as the frame drawn afresh by a scene without any cache. */
static void
test_timeline_scrolled_layer (void)
{
  g_autoptr (WickDocument) document = scrolled_tracks_document ();
  WickTimelineScene *kept = wick_timeline_scene_new (document);
  WickTimelineScene *fresh = wick_timeline_scene_new (document);
  wick_timeline_scene_set_row_cache (fresh, FALSE);
  guint64 start, end;
  wick_timeline_scene_get_extent (kept, &start, &end);
  /* a collapsed thread (its busy strip) in the second process */
  guint32 collapsed = wick_timeline_scene_get_track (kept, 12);
  g_assert_true (wick_timeline_scene_get_track_collapsible (kept, collapsed));
  wick_timeline_scene_set_track_collapsed (kept, collapsed, TRUE);
  wick_timeline_scene_set_track_collapsed (fresh, collapsed, TRUE);
  int max_scroll = wick_timeline_scene_get_content_height (kept) - 500;
  g_assert_cmpint (max_scroll, >, 600);
  static const double scrolls[] = { 0, 40, 41, 17, 300, 301.5, 302.5, 290.5, 610, 0, 1, 480, 3 };
  const struct
  {
    guint64 start, end;
  } ranges[] = {
    { start, end },                       /* every row from the summary */
    { start + 3000000, start + 3020000 }, /* spans 44 px wide: labelled */
  };
  cairo_surface_t *a = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  cairo_surface_t *b = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  guint64 differs_from_previous = 0;
  g_autofree guint8 *previous = g_malloc0 (500 * 900 * 4);
  for (guint r = 0; r < G_N_ELEMENTS (ranges); r++)
    for (guint f = 0; f < G_N_ELEMENTS (scrolls); f++)
      {
        draw_frame (kept, a, ranges[r].start, ranges[r].end, scrolls[f]);
        draw_frame (fresh, b, ranges[r].start, ranges[r].end, scrolls[f]);
        int stride = cairo_image_surface_get_stride (a);
        const guint8 *pa = cairo_image_surface_get_data (a), *pb = cairo_image_surface_get_data (b);
        for (int y = 0; y < 500; y++)
          for (int x = 0; x < 900; x++)
            {
              guint32 ka = ((const guint32 *)(gconstpointer)(pa + (gsize)y * stride))[x];
              guint32 kb = ((const guint32 *)(gconstpointer)(pb + (gsize)y * stride))[x];
              if (ka != kb)
                g_error ("range %u, scroll %.1f: pixel (%d, %d) is %08x kept, %08x drawn afresh", r,
                         scrolls[f], x, y, ka, kb);
              guint32 *was = (guint32 *)(gpointer)(previous + ((gsize)y * 900 + x) * 4);
              differs_from_previous += *was != ka;
              *was = ka;
            }
      }
  /* the frames did move */
  g_assert_cmpuint (differs_from_previous, >, 100000);
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
  wick_timeline_scene_free (kept);
  wick_timeline_scene_free (fresh);
}

/* A progressive frame over its budget sketches the rows it has no time for
 * from a coarser level and says it is not complete; the frames after it
 * finish them, and the last is the same pixels as a frame drawn in full. */
static void
test_timeline_progressive (void)
{
  g_autoptr (WickDocument) document = scrolled_tracks_document ();
  WickTimelineScene *scene = wick_timeline_scene_new (document);
  WickTimelineScene *fresh = wick_timeline_scene_new (document);
  wick_timeline_scene_set_row_cache (fresh, FALSE);
  wick_timeline_scene_set_row_budget (scene, 0); /* one row a frame */
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  cairo_surface_t *a = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  cairo_surface_t *b = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  static const double scrolls[] = { 0, 0, 0, 40, 40 }; /* a scroll while unfinished */
  guint frames = 0;
  for (guint s = 0; s < G_N_ELEMENTS (scrolls); s++)
    {
      WickTimelineViewport view = { .start_ns = start,
                                    .end_ns = end,
                                    .width = 900,
                                    .height = 500,
                                    .scroll_y = scrolls[s],
                                    .selected_type = WICK_RECORD_NONE,
                                    .selected_index = -1,
                                    .selected_event_kind = WICK_EVENT_NONE,
                                    .hover_x = -1,
                                    .progressive = TRUE };
      cairo_t *cr = cairo_create (a);
      wick_timeline_scene_draw (scene, cr, &view);
      cairo_destroy (cr);
      frames++;
      g_assert_false (wick_timeline_scene_get_complete (scene));
    }
  for (; frames < 500; frames++)
    {
      WickTimelineViewport view = { .start_ns = start,
                                    .end_ns = end,
                                    .width = 900,
                                    .height = 500,
                                    .scroll_y = 40,
                                    .selected_type = WICK_RECORD_NONE,
                                    .selected_index = -1,
                                    .selected_event_kind = WICK_EVENT_NONE,
                                    .hover_x = -1,
                                    .progressive = TRUE };
      cairo_t *cr = cairo_create (a);
      wick_timeline_scene_draw (scene, cr, &view);
      cairo_destroy (cr);
      if (wick_timeline_scene_get_complete (scene))
        break;
    }
  g_assert_cmpuint (frames, <, 500);
  g_assert_cmpuint (frames, >, 10);
  draw_frame (fresh, b, start, end, 40);
  cairo_surface_flush (a);
  int stride = cairo_image_surface_get_stride (a);
  g_assert_cmpint (memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b),
                           (gsize)stride * 500),
                   ==, 0);
  /* a frame that is not progressive draws every row in full at once */
  wick_timeline_scene_set_row_cache (scene, FALSE);
  wick_timeline_scene_set_row_cache (scene, TRUE);
  draw_frame (scene, a, start, end, 40);
  g_assert_true (wick_timeline_scene_get_complete (scene));
  g_assert_cmpint (memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b),
                           (gsize)stride * 500),
                   ==, 0);
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
  wick_timeline_scene_free (scene);
  wick_timeline_scene_free (fresh);
}

/* With the name legend on, each cached row brings its share of the legend:
 * the legend and the pixels of frames drawn from the row cache (and
 * progressively) are those of frames drawn afresh. */
static void
test_timeline_row_cache_legend (void)
{
  g_autoptr (WickDocument) document = scrolled_tracks_document ();
  WickTimelineScene *kept = wick_timeline_scene_new (document);
  WickTimelineScene *fresh = wick_timeline_scene_new (document);
  wick_timeline_scene_set_row_cache (fresh, FALSE);
  wick_timeline_scene_set_row_budget (kept, 0);
  guint64 start, end;
  wick_timeline_scene_get_extent (kept, &start, &end);
  cairo_surface_t *a = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  cairo_surface_t *b = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 900, 500);
  const struct
  {
    guint64 start, end;
    double scroll;
  } frames[] = {
    { start, end, 0 },      { start, end, 0 },     { start, end, 60 },
    { start, end / 2, 60 }, { start, end / 2, 0 },
  };
  guint sketched = 0;
  for (guint f = 0; f < G_N_ELEMENTS (frames); f++)
    {
      WickTimelineViewport view = { .start_ns = frames[f].start,
                                    .end_ns = frames[f].end,
                                    .width = 900,
                                    .height = 500,
                                    .scroll_y = frames[f].scroll,
                                    .selected_type = WICK_RECORD_NONE,
                                    .selected_index = -1,
                                    .selected_event_kind = WICK_EVENT_NONE,
                                    .hover_x = -1,
                                    .legend = TRUE,
                                    .progressive = TRUE };
      for (guint n = 0; n < 200; n++)
        {
          cairo_t *cr = cairo_create (a);
          wick_timeline_scene_draw (kept, cr, &view);
          cairo_destroy (cr);
          if (wick_timeline_scene_get_complete (kept))
            break;
          sketched++;
        }
      g_assert_true (wick_timeline_scene_get_complete (kept));
      view.progressive = FALSE;
      cairo_t *cr = cairo_create (b);
      wick_timeline_scene_draw (fresh, cr, &view);
      cairo_destroy (cr);
      cairo_surface_flush (a);
      cairo_surface_flush (b);
      g_assert_cmpuint (wick_timeline_scene_get_legend (kept, 0, NULL, NULL), >, 0);
      g_assert_cmpuint (wick_timeline_scene_get_legend (kept, 0, NULL, NULL), ==,
                        wick_timeline_scene_get_legend (fresh, 0, NULL, NULL));
      for (guint i = 0; i < wick_timeline_scene_get_legend (kept, 0, NULL, NULL); i++)
        {
          const char *name_a, *name_b;
          guint64 ns_a, ns_b;
          wick_timeline_scene_get_legend (kept, i, &name_a, &ns_a);
          wick_timeline_scene_get_legend (fresh, i, &name_b, &ns_b);
          g_assert_cmpstr (name_a, ==, name_b);
          g_assert_cmpuint (ns_a, ==, ns_b);
        }
      int stride = cairo_image_surface_get_stride (a);
      for (int y = 0; y < 500; y++)
        if (memcmp (cairo_image_surface_get_data (a) + (gsize)y * stride,
                    cairo_image_surface_get_data (b) + (gsize)y * stride, 900 * 4)
            != 0)
          g_error ("frame %u: row %d of the cached frame differs from the fresh one", f, y);
    }
  g_assert_cmpuint (sketched, >, 0);
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);
  wick_timeline_scene_free (kept);
  wick_timeline_scene_free (fresh);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/views/format", test_format);
  g_test_add_func ("/views/selection", test_selection);
  g_test_add_func ("/views/index/overlap", test_index_overlap);
  g_test_add_func ("/views/index/mipmap", test_index_mipmap);
  g_test_add_func ("/views/timeline/pixels", test_timeline_pixels);
  g_test_add_func ("/views/timeline/unlinked-clock", test_unlinked_clock);
  g_test_add_func ("/views/timeline/search-dims", test_timeline_search_dims);
  g_test_add_func ("/views/timeline/example", test_timeline_example);
  g_test_add_func ("/views/timeline/marks-appended", test_timeline_marks_appended);
  g_test_add_func ("/views/memory/categories", test_memory_categories);
  g_test_add_func ("/views/memory/two-devices", test_memory_two_devices);
  g_test_add_func ("/views/memory/y-axis", test_memory_y_axis);
  g_test_add_func ("/views/memory/peak-labels", test_memory_peak_labels);
  g_test_add_func ("/views/render/formats", test_render_formats);
  g_test_add_func ("/views/render/cli", test_render_cli);
  g_test_add_func ("/views/render/u64-times", test_u64_times);
  g_test_add_func ("/views/format/time-labels", test_time_labels);
  g_test_add_func ("/views/timeline/cursor-label", test_cursor_label);
  g_test_add_func ("/views/timeline/tracks", test_timeline_tracks);
  g_test_add_func ("/views/timeline/collapse", test_timeline_collapse);
  g_test_add_func ("/views/timeline/legend", test_timeline_legend);
  g_test_add_func ("/views/timeline/search-zoomed-out", test_timeline_search_zoomed_out);
  g_test_add_func ("/views/timeline/steps", test_timeline_steps);
  g_test_add_func ("/views/timeline/row-cache", test_timeline_row_cache);
  g_test_add_func ("/views/timeline/live-update", test_timeline_live_update);
  g_test_add_func ("/views/timeline/scrolled-layer", test_timeline_scrolled_layer);
  g_test_add_func ("/views/timeline/progressive", test_timeline_progressive);
  g_test_add_func ("/views/timeline/row-cache-legend", test_timeline_row_cache_legend);
  return g_test_run ();
}
