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

/* The panel rectangle of device @i (plot area, without axis). */
void wick_memory_chart_panel (WickMemoryChart *self, const WickMemoryViewport *view, guint i,
                              cairo_rectangle_t *rect);

/* The y-axis of device @i's panel: its top value, from the series shown
 * (legend items switched off do not count) in the visible range, and
 * whether it is a log axis (view->log_scale). */
void wick_memory_chart_y_axis (WickMemoryChart *self, const WickMemoryViewport *view, guint i,
                               guint64 *max, gboolean *log_scale);

/* Panel @i's title: its device, and the device series (used, reserved,
 * capacity) that rise above its axis in the visible range, with their
 * highest value ("cuda:0 — reserved 60 GiB (off scale)"). */
char *wick_memory_chart_panel_title (WickMemoryChart *self, const WickMemoryViewport *view,
                                     guint i);

G_END_DECLS
