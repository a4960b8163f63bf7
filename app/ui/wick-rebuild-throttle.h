/* wick-rebuild-throttle.h — rebuild at most once per four build times.
 *
 * A view that derives something costly from a growing document (the
 * timeline's scene, the memory chart's series) rebuilds it when it draws,
 * but not more often than once per four times the last build took, so a
 * live session with a large trace keeps its frame rate: meanwhile the last
 * result is drawn, and one redraw of the widget is queued for when the
 * next rebuild may run.
 *
 *   if (!wick_rebuild_throttle_begin (&self->throttle, force || self->thing == NULL))
 *     return;                       // too soon: draw the old one
 *   ... rebuild ...
 *   wick_rebuild_throttle_end (&self->throttle);
 *
 * A page shown again with a stale result (wick-page.h: a tab switch paints
 * what the page had) defers its rebuild by one frame with
 * wick_rebuild_throttle_defer(): the begins that are not forced in the frame
 * of the next one (every widget drawing the result in that frame) draw the old
 * result, and a redraw is queued for after that frame.
 *
 * The throttle lives in the widget's instance struct; init it in the
 * widget's init and clear it in dispose (that removes the queued redraw).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef struct
{
  GtkWidget *widget;    /* not a reference: the throttle is inside it */
  gint64 began_us;      /* the build under way (wick_rebuild_throttle_begin) */
  gint64 last_build_us; /* when the last build ended (monotonic µs) */
  gint64 build_cost_us; /* how long it took */
  guint redraw_source;  /* the queued redraw, 0 when none */
  gboolean deferred;    /* the unforced begins of the next frame wait */
  gint64 deferred_frame; /* that frame's counter, -1 until its first begin */
} WickRebuildThrottle;

void wick_rebuild_throttle_init (WickRebuildThrottle *self, GtkWidget *widget);
/* TRUE: rebuild now (@force, or four build times have passed), then call
 * wick_rebuild_throttle_end (). FALSE: too soon; a redraw of the widget is
 * queued for when a rebuild may run (one at a time). */
gboolean wick_rebuild_throttle_begin (WickRebuildThrottle *self, gboolean force);
/* The unforced begins of the frame of the next one return FALSE, queuing a
 * redraw after that frame. */
void wick_rebuild_throttle_defer (WickRebuildThrottle *self);
/* The rebuild begun is done: its cost sets the next wait. */
void wick_rebuild_throttle_end (WickRebuildThrottle *self);
/* Removes the queued redraw (dispose). */
void wick_rebuild_throttle_clear (WickRebuildThrottle *self);

G_END_DECLS
