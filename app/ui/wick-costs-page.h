/* wick-costs-page.h — span costs by name, steps, and the ops and tensors tables.
 *
 * Tables under a switcher, one filter entry for all: span costs (name, count,
 * total, self, mean, max, share; sorted by total), steps (when the trace has
 * them, model/wick-steps.h: per step its start from the first step, duration,
 * spans, ops, device intervals launched, device time and its share of the
 * step, bytes allocated), ops (name, span, shape, dtype, device, duration,
 * bytes), tensors (id, label, category, shape, dtype, device, bytes) and
 * tensor statistics (label, elements, non-finite count first, rms, abs max,
 * mean). Each table is a list of declared columns (wick-table.h WickColumn):
 * a field of the record, its type giving the text and the order. Selecting a
 * step, an op or a tensor selects it in the shared selection; activating a
 * span-cost row emits "search-name" so the window can highlight those spans
 * on the timeline.
 *
 * The span costs are the session's (wick_trace_session_get_costs()): those
 * a loading worker computed, or, for a document that grew, computed on a
 * worker thread while the page shows what it had (wick-page.h).
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-table.h"

G_BEGIN_DECLS

#define WICK_TYPE_COSTS_PAGE (wick_costs_page_get_type ())
G_DECLARE_FINAL_TYPE (WickCostsPage, wick_costs_page, WICK, COSTS_PAGE, WickPage)

GtkWidget *wick_costs_page_new (WickSelection *selection);

G_END_DECLS
