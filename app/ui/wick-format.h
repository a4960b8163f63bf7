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
/* Same, with the unit chosen from @unit_ns instead (a ruler passes the
 * largest time it shows, so every label of it has the same unit). */
char *wick_format_time_label_in (guint64 ns, guint64 step_ns, guint64 unit_ns);

G_END_DECLS
