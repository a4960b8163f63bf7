/* wick-timeline-axis.c — see wick-timeline-axis.h. */
#include "wick-timeline-axis.h"

#include <math.h>

guint64
wick_time_from_double (double t)
{
  if (!(t > 0))
    return 0;
  /* 2^64 is the first double that does not fit. */
  if (t >= 18446744073709551616.0)
    return G_MAXUINT64;
  return (guint64)t;
}

guint64
wick_time_axis_step (double ns_per_px, double min_px)
{
  static const guint mult[] = { 1, 2, 5 };
  double target = ns_per_px * min_px;
  guint64 decade = 1;
  for (guint d = 0; d < 19; d++, decade *= 10)
    for (guint m = 0; m < G_N_ELEMENTS (mult); m++)
      if ((double)decade * mult[m] >= target)
        return decade * mult[m];
  return decade; /* 10^19 */
}

guint64
wick_time_axis_resolution (double ns_per_px)
{
  guint64 r = 1;
  for (guint d = 0; d < 19 && (double)r * 10 <= ns_per_px; d++)
    r *= 10;
  return r;
}

void
wick_time_ticks_init (WickTimeTicks *ticks, guint64 origin, guint64 start, guint64 end,
                      guint64 step, guint max)
{
  ticks->origin = origin;
  ticks->end = end;
  ticks->step = MAX (step, 1);
  ticks->rel = wick_time_sub (start, origin) / ticks->step * ticks->step;
  ticks->n = 0;
  ticks->max = max;
  ticks->done = FALSE;
}

gboolean
wick_time_ticks_next (WickTimeTicks *ticks, guint64 *rel)
{
  if (ticks->done || ticks->n >= ticks->max)
    return FALSE;
  if (ticks->rel > G_MAXUINT64 - ticks->origin || ticks->origin + ticks->rel > ticks->end)
    {
      ticks->done = TRUE;
      return FALSE;
    }
  *rel = ticks->rel;
  ticks->n++;
  if (ticks->rel > G_MAXUINT64 - ticks->step)
    ticks->done = TRUE;
  else
    ticks->rel += ticks->step;
  return TRUE;
}
