/* wick-memory-chart.h — the memory chart, drawn with cairo alone.
 *
 * Per device, one panel: the stacked area of live logical bytes by category
 * (parameter at the bottom, then optimizer, gradient, activation, other), a
 * peak marker with its value for each category, and the physical samples as
 * separate lines (used solid, reserved dashed, capacity dotted when on
 * scale). A legend on top, a time axis at the bottom; with a hover position,
 * a readout of every series at that time.
 */
#pragma once

#include <cairo.h>

#include "model/wick-memory-series.h"

G_BEGIN_DECLS

#define WICK_MEMORY_AXIS 78
#define WICK_MEMORY_LEGEND 30
#define WICK_MEMORY_RULER 22

/* The series of one document, per device (logical and physical matched by
 * device name, in order of first appearance). */
typedef struct _WickMemoryChart WickMemoryChart;

typedef struct
{
  guint64 start_ns, end_ns;
  guint64 origin_ns; /* time shown as 0 on the axis */
  int width, height;
  gboolean dark;
  double hover_x; /* < 0: no readout */
  guint64 range_start, range_end;
  guint hidden;       /* legend items switched off: 1 << WickMemoryCategory, then
                       * 1 << (5 + used/reserved/capacity) */
  gboolean log_scale; /* y-axis log10(1 + bytes) instead of linear */
} WickMemoryViewport;

/* A peak marker and where its label went (placed FALSE: no free place). */
typedef struct
{
  guint category;
  double x, y;
  gboolean placed;
  cairo_rectangle_t box;
} WickMemoryPeakLabel;

WickMemoryChart *wick_memory_chart_new (WickDocument *document);
void wick_memory_chart_free (WickMemoryChart *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickMemoryChart, wick_memory_chart_free)

guint wick_memory_chart_get_n_devices (WickMemoryChart *self);
void wick_memory_chart_get_extent (WickMemoryChart *self, guint64 *start_ns, guint64 *end_ns);

void wick_memory_chart_draw (WickMemoryChart *self, cairo_t *cr, const WickMemoryViewport *view);
/* Only the hover line and readout (drawn by wick_memory_chart_draw too), for
 * a widget that keeps the rest of the chart cached between pointer moves. */
void wick_memory_chart_draw_readout (WickMemoryChart *self, cairo_t *cr,
                                     const WickMemoryViewport *view);
guint64 wick_memory_viewport_x_to_time (const WickMemoryViewport *view, double x);
/* The memory event in effect at (x, y): the last one at or before the
 * pointer's time on the device panel under it; -1 when none. */
gint64 wick_memory_chart_event_at (WickMemoryChart *self, const WickMemoryViewport *view, double x,
                                   double y);
/* The legend item at (x, y): a bit of WickMemoryViewport.hidden, 8 for the
 * log-scale switch, or -1. */
int wick_memory_chart_legend_hit (const WickMemoryViewport *view, double x, double y);
/* Bottom-to-top drawing order of the categories. */
extern const guint wick_memory_stack_order[5];

G_END_DECLS
