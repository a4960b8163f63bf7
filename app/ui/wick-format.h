/* wick-format.h — human units for durations, times and byte counts. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "850 ns", "12.4 µs", "3.21 ms", "1.500 s" */
char *wick_format_duration (guint64 ns);
/* "1.2 GiB", "512 B" */
char *wick_format_bytes (guint64 bytes);
/* A ruler label for time @ns with a step of @step_ns: "+12.5 ms". */
char *wick_format_time_label (guint64 ns, guint64 step_ns);

G_END_DECLS
