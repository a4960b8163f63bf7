/* wick-format.h — human units for durations, times, byte counts and shares. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "850 ns", "12.4 µs", "3.21 ms", "1.500 s" */
char *wick_format_duration (guint64 ns);
/* "1.2 GiB", "512 B" */
char *wick_format_bytes (guint64 bytes);
/* @part as a share of @whole: "43.5 %", "—" when @whole is 0. */
char *wick_format_share (double part, double whole);
/* A ruler label for time @ns on an axis whose ticks are @step_ns apart:
 * the unit is the largest of ns, µs, ms, s not above MAX (@ns, @step_ns),
 * with as many decimals as the step needs, computed exactly ("31.002 s",
 * never "31002 ms"). */
char *wick_format_time_label (guint64 ns, guint64 step_ns);
/* Same, with the unit chosen from @unit_ns instead (a ruler passes the
 * largest time it shows, so every label of it has the same unit). */
char *wick_format_time_label_in (guint64 ns, guint64 step_ns, guint64 unit_ns);

G_END_DECLS
