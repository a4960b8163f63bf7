/* wick-timeline-view.h — the span timeline widget.
 *
 * Paints a WickTimelineScene through gtk_snapshot_append_cairo. The visible
 * range, box-selected range and selected record live in the shared
 * WickSelection; this widget only keeps its vertical scroll, hover and search.
 *
 * Input: ctrl+scroll and pinch zoom around the pointer; scroll pans (vertical
 * wheel scrolls tracks when they overflow, horizontal wheel or shift pans
 * time); drag pans; shift+drag box-selects a range; click selects the record
 * under the pointer; + / − / 0 zoom in, out and to fit; W/S zoom and A/D pan
 * (as in Perfetto and Tracy); double-click or F fits the selected slice (any kind),
 * M marks its extent as the range (Perfetto's keys); Escape clears the range;
 * ] and [ follow the selected event's flows forward and back; P pins the
 * selected event's track. Clicking a process header collapses it, a track's
 * pin (right of its label) pins it to the top.
 *
 * Follow mode (live): after the document changes, the visible range keeps its
 * width and ends at the document's end. Any zoom or pan by the user leaves
 * follow mode ("follow" property turns FALSE).
 *
 * A WickPage: in a window its document is the session's, with the scene a
 * loading worker built (wick_trace_session_take_scene()); a document that
 * grows rebuilds the scene on the next frame while shown (throttled). The
 * "selection" property is the session's, or one set apart (by
 * wick_timeline_view_new (), or by a template binding it), before the view
 * is drawn.
 * The view's controllers and properties come from its template,
 * data/ui/wick-timeline-view.ui.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-timeline-scene.h"

G_BEGIN_DECLS

#define WICK_TYPE_TIMELINE_VIEW (wick_timeline_view_get_type ())
G_DECLARE_FINAL_TYPE (WickTimelineView, wick_timeline_view, WICK, TIMELINE_VIEW, WickPage)

GtkWidget *wick_timeline_view_new (WickSelection *selection);

/* Shows @document through the view's session (wick_page_set_document()). */
void wick_timeline_view_set_document (WickTimelineView *self, WickDocument *document);
/* The document grew: rebuild the scene before the next frame, and, in follow
 * mode, move the shared visible range to the newest time (the window calls
 * it for every change, shown or not: the other views follow that range).
 * With a follow interval the change may be coalesced into the next update
 * ("document-applied" says when it is applied). */
void wick_timeline_view_document_changed (WickTimelineView *self);
/* A following view applies document changes at most once per @interval_us
 * (0, the default: every change at once); the live session sets it while
 * records stream, so that a flood of records redraws the plot at that rate,
 * not at the frame clock's. */
void wick_timeline_view_set_follow_interval (WickTimelineView *self, gint64 interval_us);
/* The scene drawn now (after a change it may lag the document by one
 * rebuild; see the throttle in wick-timeline-view.c). "scene-changed" is
 * emitted when it was updated or made anew. */
WickTimelineScene *wick_timeline_view_get_scene (WickTimelineView *self);

/* Zoom by @factor (< 1 zooms in) keeping the time under widget x @anchor_x. */
void wick_timeline_view_zoom (WickTimelineView *self, double factor, double anchor_x);
void wick_timeline_view_zoom_to_fit (WickTimelineView *self);

/* Search: spans whose name contains @text (case-insensitive); NULL or "" clears.
 * Returns the number of matches; next/previous select and reveal one. */
guint wick_timeline_view_set_search (WickTimelineView *self, const char *text);
gint wick_timeline_view_step_match (WickTimelineView *self, int direction);
/* Matches given as events instead of a query (the instances of a Kernels or
 * Operators row): @refs, by start, are highlighted and stepped through as a
 * search's matches are. Returns how many. */
guint wick_timeline_view_set_matches (WickTimelineView *self, const WickEventRef *refs, guint n);

void wick_timeline_view_set_follow (WickTimelineView *self, gboolean follow);
gboolean wick_timeline_view_get_follow (WickTimelineView *self);
/* Follow mode fits all the data as it grows (a followed file) instead of
 * keeping the newest width in view (a live process). */
void wick_timeline_view_set_follow_fit (WickTimelineView *self, gboolean fit);
/* TRUE while a selection made on the timeline (a click, a flow followed) is
 * being set: the window then leaves the view where it is. */
gboolean wick_timeline_view_is_selecting (WickTimelineView *self);

/* View option: draw op ticks inside spans (default TRUE). */
void wick_timeline_view_set_show_ops (WickTimelineView *self, gboolean show);

/* Draws the hover line at widget x @x (< 0 hides it); for tests and screenshots. */
void wick_timeline_view_set_hover (WickTimelineView *self, double x);
/* Collapses (or expands) every process and track: Shift+C, Shift+E and
 * the window's win.collapse-all / win.expand-all. */
void wick_timeline_view_set_all_collapsed (WickTimelineView *self, gboolean collapsed);

G_END_DECLS
