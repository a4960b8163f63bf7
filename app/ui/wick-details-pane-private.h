/* wick-details-pane-private.h — what only the tests call of wick-details-pane.h (the app
 * includes wick-details-pane.h alone). It declares no types: include it after
 * wick-details-pane.h. */
#pragma once

G_BEGIN_DECLS

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

void wick_details_pane_set_document (WickDetailsPane *self, WickDocument *document);

G_END_DECLS
