/* wick-timeline-scene-private.h — what only the tests call of wick-timeline-scene.h (the app
 * includes wick-timeline-scene.h alone). It declares no types: include it after
 * wick-timeline-scene.h. */
#pragma once

G_BEGIN_DECLS

/* Height in pixels of model track @track as laid out. */
int wick_timeline_scene_get_track_height (WickTimelineScene *self, guint32 track);

/* The share of [@t0, @t1) that process @process (>= 0), else track @track,
 * is busy, as the summary row draws it: 0 to 1. */
double wick_timeline_scene_busy_fraction (WickTimelineScene *self, gint32 process, guint32 track,
                                          guint64 t0, guint64 t1);

/* The legend of the last frame drawn with view->legend on a Chrome trace:
 * the names that took the most of the screen (their drawn width over every
 * visible row, as time: the @i-th's @visible_ns), at most
 * WICK_TIMELINE_LEGEND_MAX, most first, each drawn with its stable hue (a
 * candle-graph trace's legend shows the step hues instead). Returns how many. */
guint wick_timeline_scene_get_legend (WickTimelineScene *self, guint i, const char **name,
                                      guint64 *visible_ns);

/* ProfilerStep#N steps shown in the step row, and the row's top (-1 without steps). */
guint wick_timeline_scene_get_n_steps (WickTimelineScene *self);
int wick_timeline_scene_get_step_row_top (WickTimelineScene *self);

/* The short label drawn by a Wick record's marker ("mark: step 3",
 * "evict embed", "denoise accepted"). */
const char *wick_timeline_scene_get_marker_label (WickTimelineScene *self, guint extension);

/* The colour id of device slice @slice (wick_tracks_get_device_slices()), and
 * how many device colours the scene's updates computed (the new slices and
 * the renamed ones: an update that colours every slice again counts them all). */
guint wick_timeline_scene_get_device_colour (WickTimelineScene *self, guint slice);
guint wick_timeline_scene_get_device_colours_renewed (WickTimelineScene *self);

/* Aligned (host-time) start of a candle-graph device interval. */
guint64 wick_timeline_scene_interval_start (WickTimelineScene *self, guint interval);

/* Where a span is drawn (before clipping to the view); FALSE when off-screen. */
gboolean wick_timeline_scene_span_rect (WickTimelineScene *self, const WickTimelineViewport *view,
                                        guint span, cairo_rectangle_t *rect);

/* A progressive frame's time for its rows' summary walks (µs; at least one
 * row is walked a frame): tests make it 0 to see every frame sketch. */
void wick_timeline_scene_set_row_budget (WickTimelineScene *self, gint64 budget_us);

/* A GPU process: labelled "GPU N" or "MTIA ..." (Kineto's process_labels),
 * or one of device tracks alone. In a Chrome trace the scene shows each run
 * of GPU processes ahead of the run of host processes before it (Kineto
 * sorts them after the host), so the streams are on the first screen. */
gboolean wick_timeline_scene_process_is_gpu (WickTimelineScene *self, guint32 process);

/* Zoomed out, each dense row's rectangles are kept for the next frame with
 * the same time range and width (on by default; off: every frame reads the
 * events, the benchmark's baseline). */
void wick_timeline_scene_set_row_cache (WickTimelineScene *self, gboolean on);

double wick_timeline_viewport_time_to_x (const WickTimelineViewport *view, guint64 t);

/* The label the ruler shows for the pointer at @x: its time since the trace's
 * start to the finest digit one pixel resolves, rounded to nearest, in the
 * ruler's unit. */
char *wick_timeline_scene_cursor_label (WickTimelineScene *self, const WickTimelineViewport *view,
                                        double x);

/* The value counter track @track shows at widget x @x ("12.5 MiB" style for
 * byte series, else the number); NULL before its first sample. */
char *wick_timeline_scene_counter_label (WickTimelineScene *self, const WickTimelineViewport *view,
                                         guint32 track, double x);

/* The flows drawn for @event: its own, incoming and outgoing, then the ones
 * reached by following them from event to event across tracks (at most
 * @max). Returns how many; the first @n_direct are @event's own. */
guint wick_timeline_scene_flow_chain (WickTimelineScene *self, WickEventRef event, guint32 *flows,
                                      guint max, guint *n_direct);

G_END_DECLS
