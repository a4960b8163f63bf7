/* wick-timeline-view-private.h — what only the tests call of wick-timeline-view.h (the app
 * includes wick-timeline-view.h alone). It declares no types: include it after
 * wick-timeline-view.h. */
#pragma once

G_BEGIN_DECLS

/* The follow interval set (wick_timeline_view_set_follow_interval). */
gint64 wick_timeline_view_get_follow_interval (WickTimelineView *self);
/* TRUE while a coalesced change waits for its update. */
gboolean wick_timeline_view_get_change_pending (WickTimelineView *self);

/* What `f` does: fits the selected slice, of any of those kinds. */
gboolean wick_timeline_view_fit_selected (WickTimelineView *self);
int wick_timeline_view_get_gutter_width (WickTimelineView *self);

/* Pan by @dx pixels (positive moves later in time). */
void wick_timeline_view_pan (WickTimelineView *self, double dx);

/* Selects @span and fits it in the view with a margin (double-click). */
void wick_timeline_view_zoom_to_span (WickTimelineView *self, guint span);

/* A click at (x, y) as the pointer does it: a process header collapses or
 * expands its group, a track's pin pins or unpins it, an event is selected
 * (any kind: span, async slice, counter sample, instant, device interval,
 * flow end). Returns TRUE when it hit something. */
gboolean wick_timeline_view_click (WickTimelineView *self, double x, double y);

/* What a double-click at (x, y) does: fits the slice there (a span, an async
 * slice, a GPU kernel or other device interval) and selects it. */
void wick_timeline_view_double_click (WickTimelineView *self, double x, double y);

/* The full name of the track whose label is at (x, y) in the gutter (what
 * its tooltip shows), NULL elsewhere; g_free it. */
char *wick_timeline_view_label_at (WickTimelineView *self, double x, double y);

/* The label column's width (WICK_TIMELINE_GUTTER), what dragging its right
 * edge sets, clamped to [WICK_TIMELINE_GUTTER_MIN, _MAX]. */
void wick_timeline_view_set_gutter_width (WickTimelineView *self, int width);

/* Selects the event one flow step from the selected one (] and [ keys):
 * @direction > 0 along its outgoing flow, < 0 back along an incoming one,
 * and reveals it. FALSE when there is none. */
gboolean wick_timeline_view_follow_flow (WickTimelineView *self, int direction);

/* The view's parameters as of the last layout (for tests and export). */
void wick_timeline_view_get_viewport (WickTimelineView *self, WickTimelineViewport *out);

G_END_DECLS
