/* wick-timeline-axis.h — saturating time arithmetic and time-axis ticks.
 *
 * Every view that maps trace time to pixels (timeline, overview, memory
 * chart, render) does its time arithmetic through these helpers, so a trace
 * with times near 2^64 ns draws (clamped) instead of wrapping around: sums
 * saturate at G_MAXUINT64, differences at 0, and a double converted back to
 * time is clamped to [0, G_MAXUINT64]. A tick walk stops at the end of the
 * range, at saturation, and after a bounded number of ticks, whatever the
 * step.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

static inline guint64
wick_time_add (guint64 a, guint64 b)
{
  return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

static inline guint64
wick_time_sub (guint64 a, guint64 b)
{
  return a > b ? a - b : 0;
}

/* @t clamped to [0, G_MAXUINT64]; NaN gives 0. */
guint64 wick_time_from_double (double t);

/* The smallest 1-2-5 step (1, 2, 5, 10, 20 … ns) that is at least
 * @ns_per_px × @min_px; at most 10^19 ns. */
guint64 wick_time_axis_step (double ns_per_px, double min_px);

/* The largest power of ten not above @ns_per_px (at least 1): the finest
 * digit a pointer position can resolve. */
guint64 wick_time_axis_resolution (double ns_per_px);

typedef struct
{
  guint64 origin, end, step, rel;
  guint n, max;
  gboolean done;
} WickTimeTicks;

/* Ticks at origin + k·step (k ≥ 0) from the last one at or before @start up
 * to @end, at most @max of them. */
void wick_time_ticks_init (WickTimeTicks *ticks, guint64 origin, guint64 start, guint64 end,
                           guint64 step, guint max);
/* The next tick, relative to origin; FALSE when done. */
gboolean wick_time_ticks_next (WickTimeTicks *ticks, guint64 *rel);

G_END_DECLS
