/* wick-snapshot-window-private.h — what only the tests call of wick-snapshot-window.h (the app
 * includes wick-snapshot-window.h alone). It declares no types: include it after
 * wick-snapshot-window.h. */
#pragma once

G_BEGIN_DECLS

void wick_snapshot_window_set_drag_range (WickSnapshotWindow *self, gint64 from_us, gint64 to_us);
const WickSnapshotStackDiff *wick_snapshot_window_get_diff (WickSnapshotWindow *self, guint *n);
guint wick_snapshot_window_get_n_diff_rows (WickSnapshotWindow *self);
void wick_snapshot_window_select_diff_row (WickSnapshotWindow *self, guint row);

/* The compare page's differential flame graph: "list" or "flame" shown; its
 * nodes (0: the root, all live bytes of A and of B; then in the order made):
 * depth, left edge and width as fractions of the root's width (B's bytes,
 * or A's with "Widths from A"), bytes at A and at B. Selecting one puts its
 * bytes and frames in wick_snapshot_window_get_diff_details. */
void wick_snapshot_window_show_diff_page (WickSnapshotWindow *self, const char *page);
GtkWidget *wick_snapshot_window_get_diff_flame_graph (WickSnapshotWindow *self);
guint wick_snapshot_window_get_n_diff_flame_nodes (WickSnapshotWindow *self);
gboolean wick_snapshot_window_get_diff_flame_node (WickSnapshotWindow *self, guint node,
                                                   guint *depth, double *x0, double *width,
                                                   guint64 *bytes_a, guint64 *bytes_b);
void wick_snapshot_window_select_diff_flame_node (WickSnapshotWindow *self, guint node);
void wick_snapshot_window_render_diff_flame (WickSnapshotWindow *self, cairo_t *cr, int width,
                                             int height);

/* For tests and the screenshots. */
WickMemorySnapshot *
wick_snapshot_window_get_snapshot (WickSnapshotWindow *self); /* NULL while loading */

/* For tests and the screenshots. */
WickMemorySnapshot *
wick_snapshot_window_get_snapshot (WickSnapshotWindow *self); /* NULL while loading */
gboolean wick_snapshot_window_is_loading (WickSnapshotWindow *self);
const char *wick_snapshot_window_get_error (WickSnapshotWindow *self); /* NULL unless it failed */

guint wick_snapshot_window_get_n_live_rows (WickSnapshotWindow *self);

/* Selects live row @row (its allocation's life and stack are shown). */
void wick_snapshot_window_select_row (WickSnapshotWindow *self, guint row);

/* The details text of the selected allocation ("" for none). */
const char *wick_snapshot_window_get_details (WickSnapshotWindow *self);
GtkWidget *wick_snapshot_window_get_chart (WickSnapshotWindow *self);
GtkWidget *wick_snapshot_window_get_segment_map (WickSnapshotWindow *self);

/* The flame graph of live bytes by stack at the selected time. */
GtkWidget *wick_snapshot_window_get_flame_graph (WickSnapshotWindow *self);

/* "segments" or "flame": the page shown beside the live list. */
void wick_snapshot_window_show_page (WickSnapshotWindow *self, const char *page);

/* The flame graph's root bytes (all live at the selected time) and its node count. */
guint64 wick_snapshot_window_get_flame_bytes (WickSnapshotWindow *self, guint *n_nodes);

/* Selects flame node @node (0: the root; then in the order they were made):
 * its bytes, categories and frames go to the details. */
void wick_snapshot_window_select_flame_node (WickSnapshotWindow *self, guint node);

/* Draws the segment map into @cr (its clip: the rows drawn), as its
 * drawing area does: for benches. */
void wick_snapshot_window_render_segment_map (WickSnapshotWindow *self, cairo_t *cr, int width,
                                              int height);

/* The matcher's counts when the page's trace gave the categories
 * (wick-snapshot-categories.h); NULL without a trace (or before the
 * snapshot is read). */
const WickSnapshotMatchCounts *wick_snapshot_window_get_match_counts (WickSnapshotWindow *self);

/* The same, reading only the history from @from_us to @to_us (time_us), the
 * state at its start rebuilt (wick_memory_snapshot_load_range). Dragging
 * on a window's chart offers "Load Range Alone", which opens one. */
WickSnapshotWindow *wick_snapshot_window_new_range (GtkApplication *application, const char *path,
                                                    gint64 from_us, gint64 to_us);

/* The range dragged on the chart (FALSE when none), and setting it as a drag would. */
gboolean wick_snapshot_window_get_drag_range (WickSnapshotWindow *self, gint64 *from_us,
                                              gint64 *to_us);

const char *wick_snapshot_window_get_diff_details (WickSnapshotWindow *self);

WickSnapshotWindow *wick_snapshot_window_from_page (GtkWidget *page);

/* Selects the time (time_us) the live list shows. */
void wick_snapshot_window_select_time (WickSnapshotWindow *self, gint64 time_us);

G_END_DECLS
