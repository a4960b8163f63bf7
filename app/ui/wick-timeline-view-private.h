/* wick-timeline-view-private.h — what only the tests call of wick-timeline-view.h (the app
 * includes wick-timeline-view.h alone). It declares no types: include it after
 * wick-timeline-view.h. */
#pragma once

G_BEGIN_DECLS

/* What `f` does: fits the selected slice, of any of those kinds. */
gboolean wick_timeline_view_fit_selected (WickTimelineView *self);
int wick_timeline_view_get_gutter_width (WickTimelineView *self);

G_END_DECLS
