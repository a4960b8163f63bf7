/* wick-details-pane.h — every field of the selected record.
 *
 * Follows the shared selection. For a span: its fields, timing (start from the
 * trace's first span, duration, self time), parent, bytes allocated and freed
 * in it, and the ops, tensors and device intervals it holds (click one to
 * select it). For other records: all their fields; Wick extension records
 * show their JSON; events of the track model with no record (async slices,
 * counter samples, instants, Chrome device intervals, flows) show their
 * fields and args. Above it, while a range is box-selected: the range's
 * duration, per track the events overlapping it and the time it is busy
 * (counters: minimum and maximum), and the time inside it by span name
 * (Perfetto's area selection, condensed), recomputed when the range rests.
 *
 * A page (wick-page.h): it shows the document of its session, and follows
 * the session's selection; set_document gives a pane alone a document.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"

G_BEGIN_DECLS

#define WICK_TYPE_DETAILS_PANE (wick_details_pane_get_type ())
G_DECLARE_FINAL_TYPE (WickDetailsPane, wick_details_pane, WICK, DETAILS_PANE, WickPage)

GtkWidget *wick_details_pane_new (WickSelection *selection);

G_END_DECLS
