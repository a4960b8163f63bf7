/* wick-memory-view.h — the memory chart widget.
 *
 * Paints a WickMemoryChart over the shared visible range (the timeline's), so
 * zooming either view moves both. Hover shows a readout of every series at
 * the pointer's time; ctrl+scroll zooms, drag pans, shift+drag selects a
 * range; click selects the memory event in effect there, or shows and hides
 * a series when on its legend item.
 *
 * A WickPage: the document is its session's, with the chart a loading worker
 * built (wick_trace_session_take_chart()); a document that grows marks the
 * chart for a rebuild on the next frame while the page is shown, and on the
 * frame after the first of its next show.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-memory-chart.h"
#include "wick-page.h"

G_BEGIN_DECLS

#define WICK_TYPE_MEMORY_VIEW (wick_memory_view_get_type ())
G_DECLARE_FINAL_TYPE (WickMemoryView, wick_memory_view, WICK, MEMORY_VIEW, WickPage)

GtkWidget *wick_memory_view_new (WickSelection *selection);

G_END_DECLS
