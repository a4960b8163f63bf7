/* wick-memory-chart-private.h — what only the tests call of wick-memory-chart.h (the app
 * includes wick-memory-chart.h alone). It declares no types: include it after
 * wick-memory-chart.h. */
#pragma once

G_BEGIN_DECLS

const char *wick_memory_chart_get_device_name (WickMemoryChart *self, guint i);

/* Logical series of device @i, NULL when it has no memory events. */
const WickMemorySeries *wick_memory_chart_get_logical (WickMemoryChart *self, guint i);

/* The peak markers of device @i as drawn, with their label boxes: placed
 * labels never overlap each other, a marker or the axis. Returns how many. */
guint wick_memory_chart_peak_labels (WickMemoryChart *self, cairo_t *cr,
                                     const WickMemoryViewport *view, guint i,
                                     WickMemoryPeakLabel out[5]);

G_END_DECLS
