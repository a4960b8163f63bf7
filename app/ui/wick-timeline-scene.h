/* wick-timeline-scene.h — what the timeline shows, drawn with cairo alone.
 *
 * A scene is built once per document version from the document's track
 * model (model/wick-tracks.h): a track list in the manner of Perfetto. Top
 * to bottom: the time ruler, the marker row (Wick records and the terminal),
 * the step row (torch.profiler's ProfilerStep#N spans, model/wick-steps.h,
 * as numbered bands; a click selects the step's span), the pinned tracks, then one collapsible group per process, headed by its
 * name, holding its tracks in the model's display order:
 *
 *   slices    a thread's nested spans, one row per depth (height follows depth)
 *   async     async slices, one row per lane
 *   counter   a step chart of the series, its value at the cursor
 *   instants  ticks
 *   device    intervals of one device and stream, labelled with their names
 *
 * Flows of the selected event are drawn as arrows, incoming and outgoing,
 * followed from event to event across tracks. The index that makes a frame
 * cost independent of the number of events (per-row overlap index and
 * per-zoom summary) lives in the model; the scene only draws.
 *
 * wick_timeline_scene_draw() paints a view onto any cairo context: the
 * widget's snapshot, or a PNG, SVG or PDF surface for export and
 * `wick-trace render`. Nothing here knows about GTK. Device intervals of a
 * candle-graph trace are on the device's clock; each clock is shifted onto
 * the host's as model/wick-device-clock.h says (the Chrome export does the
 * same).
 *
 * The layout state (collapsed processes and tracks, pinned tracks) lives in the scene;
 * wick_timeline_scene_copy_state() carries it to the scene of the next
 * document version.
 */
#pragma once

#include <cairo.h>

#include "model/wick-document.h"
#include "model/wick-gpu-graphs.h"
#include "model/wick-tracks.h"

G_BEGIN_DECLS

/* The track label column's width: one for every timeline of the process,
 * resized by dragging its right edge, between the bounds. */
extern int wick_timeline_gutter_width;
#define WICK_TIMELINE_GUTTER wick_timeline_gutter_width
#define WICK_TIMELINE_GUTTER_DEFAULT 150
#define WICK_TIMELINE_GUTTER_MIN 80
#define WICK_TIMELINE_GUTTER_MAX 600
#define WICK_TIMELINE_RULER 26
#define WICK_TIMELINE_MARKER_ROW 20
#define WICK_TIMELINE_STEP_ROW 18
#define WICK_TIMELINE_ROW 20
#define WICK_TIMELINE_PROCESS_ROW 22
#define WICK_TIMELINE_COUNTER_HEIGHT 40
#define WICK_TIMELINE_INSTANTS_HEIGHT 18
#define WICK_TIMELINE_SECTION_GAP 8
/* Names in a Chrome trace's legend. */
#define WICK_TIMELINE_LEGEND_MAX 8
/* A thread with more rows than this starts collapsed to its summary row. */
#define WICK_TIMELINE_DEEP_ROWS 16

/* A selected flow, in WickTimelineViewport.selected_event_kind. */
#define WICK_TIMELINE_EVENT_FLOW 0x100

typedef struct _WickTimelineScene WickTimelineScene;

typedef struct
{
  guint64 start_ns, end_ns; /* visible time range */
  int width, height;        /* pixels, gutter included */
  double scroll_y;          /* vertical scroll of the tracks, pixels */
  gboolean dark;
  WickRecordType selected_type;
  gint64 selected_index;
  guint selected_event_kind; /* WickEventKind or WICK_TIMELINE_EVENT_FLOW; NONE: see type */
  gint64 selected_event_index;
  guint64 range_start, range_end; /* box selection; empty when equal */
  const guint8 *matches;          /* per span: 1 = matches the search; NULL: no search */
  const guint8 *device_matches;   /* per device slice, the same (NULL with matches) */
  const guint32 *match_list;      /* matching spans sorted by start (may be NULL) */
  guint n_match_list;
  double hover_x;     /* < 0: no hover line */
  gboolean no_labels; /* benchmarks: rectangles only */
  gboolean hide_ops;  /* no op ticks (view option) */
  gboolean legend;    /* the colour legend, bottom right */
  /* outlined with the selection: the other parts of what is selected (one
   * collective's kernels on every rank of a job); may be NULL */
  const WickEventRef *related;
  guint n_related;
  /* a frame on screen: rows whose summary walk would pass the frame's
   * budget are drawn from a coarser level and finished by the next frames
   * of the same view (wick_timeline_scene_get_complete()); FALSE: every
   * row in full (export, tests) */
  gboolean progressive;
  /* the label column left out (the plot alone, under it anything):
   * wick_timeline_scene_draw_gutter() draws it, so a frame of a new time
   * range need not draw the labels again */
  gboolean no_gutter;
} WickTimelineViewport;

WickTimelineScene *wick_timeline_scene_new (WickDocument *document);
/* The document grew: brings the scene up to date in place when its track
 * model grew by appending (model/wick-tracks.h: the same tracks and event
 * indices) — the new spans' colours, the new ops in time order, the
 * extent, the markers, the layout (rows may have been added) — and drops
 * the cached pixels of the rows that changed only. FALSE when the model
 * was rebuilt whole, got tracks, a device clock moved or a step row
 * appeared: build a new scene (wick_timeline_scene_copy_state() keeps the
 * layout). */
gboolean wick_timeline_scene_update (WickTimelineScene *self);
/* The label column alone, [0, WICK_TIMELINE_GUTTER) by the view's height,
 * as wick_timeline_scene_draw() draws it over the plot; it does not depend
 * on the time range. */
void wick_timeline_scene_draw_gutter (WickTimelineScene *self, cairo_t *cr,
                                      const WickTimelineViewport *view);
/* Changes when what the label column shows may have changed other than by
 * the viewport's height, scroll and style: the layout (collapse, pins,
 * rows) or the tracks' events (a counter's maximum). */
guint64 wick_timeline_scene_get_gutter_stamp (WickTimelineScene *self);
void wick_timeline_scene_free (WickTimelineScene *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickTimelineScene, wick_timeline_scene_free)

WickDocument *wick_timeline_scene_get_document (WickTimelineScene *self);
WickTracks *wick_timeline_scene_get_tracks (WickTimelineScene *self);

/* Full time extent of the document (every track, markers). */
void wick_timeline_scene_get_extent (WickTimelineScene *self, guint64 *start_ns, guint64 *end_ns);
/* Height of everything below the ruler and marker row (pinned and
 * scrolled), plus those two. */
int wick_timeline_scene_get_content_height (WickTimelineScene *self);

/* Tracks of the model, in display order (see above for GPU processes). */
guint wick_timeline_scene_get_n_tracks (WickTimelineScene *self);
/* The @i-th track in display order: its model index. */
guint32 wick_timeline_scene_get_track (WickTimelineScene *self, guint i);
/* The name the gutter shows for model track @track. */
const char *wick_timeline_scene_get_track_name (WickTimelineScene *self, guint32 track);
/* Where track @track is drawn in @view (x is the plot, y its top); FALSE
 * when hidden (collapsed) or scrolled out. */
gboolean wick_timeline_scene_track_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                         guint32 track, cairo_rectangle_t *rect);

/* Layout state. */
void wick_timeline_scene_set_collapsed (WickTimelineScene *self, guint32 process,
                                        gboolean collapsed);
gboolean wick_timeline_scene_get_collapsed (WickTimelineScene *self, guint32 process);
void wick_timeline_scene_set_pinned (WickTimelineScene *self, guint32 track, gboolean pinned);
gboolean wick_timeline_scene_get_pinned (WickTimelineScene *self, guint32 track);
/* A track of several rows (slices, async lanes, a stream with annotations)
 * collapses to one summary row: the share of each pixel's time it is busy
 * (the union of its events), drawn as a bar; its events are then neither
 * drawn nor hit. A collapsed process's header shows the same strip for all
 * its tracks. Collapsed by default: a thread deeper than
 * WICK_TIMELINE_DEEP_ROWS rows (torch's with_stack Python stacks). */
gboolean wick_timeline_scene_get_track_collapsible (WickTimelineScene *self, guint32 track);
void wick_timeline_scene_set_track_collapsed (WickTimelineScene *self, guint32 track,
                                              gboolean collapsed);
gboolean wick_timeline_scene_get_track_collapsed (WickTimelineScene *self, guint32 track);
/* Every process and every collapsible track collapsed (@collapsed), or all
 * expanded, deep threads included: Collapse All and Expand All. */
void wick_timeline_scene_set_all_collapsed (WickTimelineScene *self, gboolean collapsed);
/* Copies collapsed processes, collapsed or expanded tracks (the user's
 * choices; defaults are the new scene's own) and pinned tracks of @from (a
 * scene of an earlier version of the same document), matched by pid and by
 * (pid, tid, kind, name). */
void wick_timeline_scene_copy_state (WickTimelineScene *self, WickTimelineScene *from);

/* The CUDA graphs of the document (model/wick-gpu-graphs.h), built on first use. */
WickGpuGraphs *wick_timeline_scene_get_graphs (WickTimelineScene *self);

/* Start and end of @event as drawn (device clocks aligned). */
void wick_timeline_scene_event_extent (WickTimelineScene *self, WickEventRef event,
                                       guint64 *start_ns, guint64 *end_ns);

void wick_timeline_scene_draw (WickTimelineScene *self, cairo_t *cr,
                               const WickTimelineViewport *view);
/* FALSE when the last frame drawn (progressive) left rows to finish: draw
 * the same view again. */
gboolean wick_timeline_scene_get_complete (WickTimelineScene *self);
/* Only the hover line, the pointer's time in the ruler and the counters'
 * values at it (drawn by wick_timeline_scene_draw too), for a widget that
 * caches the rest. */
void wick_timeline_scene_draw_hover (WickTimelineScene *self, cairo_t *cr,
                                     const WickTimelineViewport *view);

/* The whole trace squeezed into @view's height (every track a thin band,
 * from the model's summary), search hits marked, the visible range outlined
 * and the rest veiled: the overview strip above the timeline. @view's range
 * is the whole extent. */
void wick_timeline_scene_draw_overview (WickTimelineScene *self, cairo_t *cr,
                                        const WickTimelineViewport *view, guint64 visible_start,
                                        guint64 visible_end);
/* The overview in two parts, drawn one over the other: the rows, hits and
 * title, which do not depend on the visible range, and the veil, outline
 * and bottom rule that show it. */
void wick_timeline_scene_draw_overview_rows (WickTimelineScene *self, cairo_t *cr,
                                             const WickTimelineViewport *view);
void wick_timeline_scene_draw_overview_band (WickTimelineScene *self, cairo_t *cr,
                                             const WickTimelineViewport *view,
                                             guint64 visible_start, guint64 visible_end);

guint64 wick_timeline_viewport_x_to_time (const WickTimelineViewport *view, double x);

/* The event under (x, y): any kind, or a flow end of the selected event's
 * flows (then @event->kind is WICK_TIMELINE_EVENT_FLOW and its index the
 * flow). FALSE when nothing. */
gboolean wick_timeline_scene_hit_event (WickTimelineScene *self, const WickTimelineViewport *view,
                                        double x, double y, WickEventRef *event);
/* The same as a document record: spans, candle-graph device intervals and
 * extension markers (other events give WICK_RECORD_NONE). */
WickRecordType wick_timeline_scene_hit (WickTimelineScene *self, const WickTimelineViewport *view,
                                        double x, double y, gint64 *index);

typedef enum
{
  WICK_TIMELINE_GUTTER_NONE,
  WICK_TIMELINE_GUTTER_PROCESS, /* a process header: toggles collapse */
  WICK_TIMELINE_GUTTER_PIN,     /* a track's pin: toggles pinning */
  WICK_TIMELINE_GUTTER_TRACK,   /* a track's label */
  WICK_TIMELINE_GUTTER_EXPANDER, /* a collapsible track's label: toggles its summary row */
} WickTimelineGutterHit;
WickTimelineGutterHit wick_timeline_scene_hit_gutter (WickTimelineScene *self,
                                                      const WickTimelineViewport *view, double x,
                                                      double y, guint32 *index);

/* Where any event is drawn; FALSE when off-screen or hidden. Zero-length
 * events get the width of their mark. */
gboolean wick_timeline_scene_event_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                         WickEventRef event, cairo_rectangle_t *rect);

/* The event one flow step from @event: @direction > 0 follows its first
 * outgoing flow, < 0 its first incoming one. FALSE when there is none. */
gboolean wick_timeline_scene_follow_flow (WickTimelineScene *self, WickEventRef event,
                                          int direction, WickEventRef *next);

G_END_DECLS
