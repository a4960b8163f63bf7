/* wick-timeline-scene.h — what the timeline shows, drawn with cairo alone.
 *
 * A scene is built once per document version: the span index (flame chart
 * rows by depth), device-interval tracks per (device, stream), ops sorted by
 * time and Wick extension markers. wick_timeline_scene_draw() paints a view
 * of it onto any cairo context: the widget's snapshot, or a PNG, SVG or PDF
 * surface for export and `wick-trace render`. Nothing here knows about GTK.
 *
 * Vertical layout, top to bottom: time ruler, marker row (Wick records and the
 * terminal), one row per span depth, then one row per device stream. A
 * gutter on the left names the tracks. Device intervals are on the device's
 * clock; each clock is shifted so its first interval starts with the span
 * that launched it (the offset is shown in the interval's details).
 */
#pragma once

#include <cairo.h>

#include "model/wick-document.h"
#include "wick-timeline-index.h"

G_BEGIN_DECLS

#define WICK_TIMELINE_GUTTER 150
#define WICK_TIMELINE_RULER 26
#define WICK_TIMELINE_MARKER_ROW 20
#define WICK_TIMELINE_ROW 20
#define WICK_TIMELINE_SECTION_GAP 8

typedef struct _WickTimelineScene WickTimelineScene;

typedef struct
{
  guint64 start_ns, end_ns; /* visible time range */
  int width, height;        /* pixels, gutter included */
  double scroll_y;          /* vertical scroll of the tracks, pixels */
  gboolean dark;
  WickRecordType selected_type;
  gint64 selected_index;
  guint64 range_start, range_end; /* box selection; empty when equal */
  const guint8 *matches;          /* per span: 1 = matches the search; NULL: no search */
  double hover_x;                 /* < 0: no hover line */
  gboolean no_labels;             /* benchmarks: rectangles only */
  gboolean hide_ops;              /* no op ticks (view option) */
} WickTimelineViewport;

WickTimelineScene *wick_timeline_scene_new (WickDocument *document);
void wick_timeline_scene_free (WickTimelineScene *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickTimelineScene, wick_timeline_scene_free)

WickTimelineIndex *wick_timeline_scene_get_index (WickTimelineScene *self);
WickDocument *wick_timeline_scene_get_document (WickTimelineScene *self);

/* Full time extent of the document (spans, intervals, markers). */
void wick_timeline_scene_get_extent (WickTimelineScene *self, guint64 *start_ns, guint64 *end_ns);
/* Height of all tracks, ruler included. */
int wick_timeline_scene_get_content_height (WickTimelineScene *self);

/* Tracks: 0 is the span flame chart, then one per device stream. */
guint wick_timeline_scene_get_n_tracks (WickTimelineScene *self);
const char *wick_timeline_scene_get_track_name (WickTimelineScene *self, guint track);
/* The short label drawn by a Wick record's marker ("mark: step 3",
 * "evict embed", "denoise accepted"). */
const char *wick_timeline_scene_get_marker_label (WickTimelineScene *self, guint extension);
/* Aligned (host-time) start of a device interval. */
guint64 wick_timeline_scene_interval_start (WickTimelineScene *self, guint interval);

void wick_timeline_scene_draw (WickTimelineScene *self, cairo_t *cr,
                               const WickTimelineViewport *view);
/* Only the hover line and the pointer's time in the ruler (drawn by
 * wick_timeline_scene_draw too), for a widget that caches the rest. */
void wick_timeline_scene_draw_hover (WickTimelineScene *self, cairo_t *cr,
                                     const WickTimelineViewport *view);

/* The whole trace squeezed into @view's height (every depth a thin row, from
 * the mipmap), with the visible range outlined and the rest veiled: the
 * overview strip above the timeline. @view's range is the whole extent. */
void wick_timeline_scene_draw_overview (WickTimelineScene *self, cairo_t *cr,
                                        const WickTimelineViewport *view, guint64 visible_start,
                                        guint64 visible_end);

/* The label the ruler shows for the pointer at @x: its time since the trace's
 * start to the finest digit one pixel resolves, rounded to nearest, in the
 * ruler's unit. */
char *wick_timeline_scene_cursor_label (WickTimelineScene *self, const WickTimelineViewport *view,
                                        double x);

double wick_timeline_viewport_time_to_x (const WickTimelineViewport *view, guint64 t);
guint64 wick_timeline_viewport_x_to_time (const WickTimelineViewport *view, double x);

/* The record under (x, y): a span, a device interval or an extension marker. */
WickRecordType wick_timeline_scene_hit (WickTimelineScene *self, const WickTimelineViewport *view,
                                        double x, double y, gint64 *index);
/* Where a span is drawn (before clipping to the view); FALSE when off-screen. */
gboolean wick_timeline_scene_span_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                        guint span, cairo_rectangle_t *rect);

G_END_DECLS
