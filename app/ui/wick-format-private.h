/* wick-format-private.h — what only the tests call of wick-format.h (the app
 * includes wick-format.h alone). It declares no types: include it after
 * wick-format.h. */
#pragma once

G_BEGIN_DECLS

/* A ruler label for time @ns on an axis whose ticks are @step_ns apart:
 * the unit is the largest of ns, µs, ms, s not above MAX (@ns, @step_ns),
 * with as many decimals as the step needs, computed exactly ("31.002 s",
 * never "31002 ms"). */
char *wick_format_time_label (guint64 ns, guint64 step_ns);

G_END_DECLS
