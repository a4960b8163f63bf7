/* wick-report-draw.h — the coverage and health views as cairo drawings.
 *
 * Used by `wick-trace render --view coverage|health` and by Export… in the
 * app; the app itself shows these as GtkColumnViews with the same content: a
 * verdict banner (coverage verdict and reason, digest match; or the parse
 * status and issue counts), then a table.
 */
#pragma once

#include <cairo.h>

#include "model/wick-document.h"
#include "model/wick-gradient-report.h"

G_BEGIN_DECLS

void wick_coverage_draw (WickDocument *document, const WickGradientReport *report, cairo_t *cr,
                         int width, int height, gboolean dark);
void wick_health_draw (WickDocument *document, cairo_t *cr, int width, int height, gboolean dark);

G_END_DECLS
