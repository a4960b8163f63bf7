/* wick-timeline-overview.h — the whole trace in a strip above the timeline.
 *
 * Draws the timeline's scene over the document's full extent (every depth a
 * thin row) with the visible range outlined; clicking or dragging moves the
 * visible range there, keeping its width, as Perfetto's overview does.
 * Its "timeline" (the sibling view whose scene it draws, not owned) and
 * "selection" properties may be set from a template (data/ui/wick-window.ui).
 */
#pragma once

#include "wick-timeline-view.h"

G_BEGIN_DECLS

#define WICK_TYPE_TIMELINE_OVERVIEW (wick_timeline_overview_get_type ())
G_DECLARE_FINAL_TYPE (WickTimelineOverview, wick_timeline_overview, WICK, TIMELINE_OVERVIEW,
                      GtkWidget)

/* The timeline's scene changed (its "scene-changed"): redrawn, unless the
 * change came from the overview's own drawing, which drew it. */
void wick_timeline_overview_scene_changed (WickTimelineOverview *self);

G_END_DECLS
