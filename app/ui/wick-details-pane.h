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
void wick_details_pane_set_document (WickDetailsPane *self, WickDocument *document);
/* Rows of the range summary (span names inside the selected range), for tests. */
guint wick_details_pane_get_range_rows (WickDetailsPane *self);
/* Rows of the range's per-track summary, for tests. */
guint wick_details_pane_get_range_track_rows (WickDetailsPane *self);
/* The range summary's GPU line of device @device (in the analysis's
 * order), NULL when none; for tests. */
const char *wick_details_pane_get_range_gpu_line (WickDetailsPane *self, guint device);
/* The value shown for field @key ("Parent"), NULL when not shown; for tests. */
const char *wick_details_pane_get_field (WickDetailsPane *self, const char *key);
/* The value of arg @key in the Arguments table, as shown; for tests. */
const char *wick_details_pane_get_arg (WickDetailsPane *self, const char *key);
/* The rows of the pane's lists that select something (parent, launcher,
 * launched kernels, ops ...), and activating the @nth of them; for tests. */
guint wick_details_pane_get_n_links (WickDetailsPane *self);
gboolean wick_details_pane_activate_link (WickDetailsPane *self, guint nth);
/* The title shown (record name), for tests. */
const char *wick_details_pane_get_title (WickDetailsPane *self);

G_END_DECLS
