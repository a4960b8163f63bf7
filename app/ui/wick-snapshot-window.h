/* wick-snapshot-window.h — a window on a PyTorch CUDA memory snapshot
 * (WickMemorySnapshot): allocated bytes over the history stacked by category
 * with the reserved bytes over them, the peak and every OOM marked; the
 * segment map at the snapshot (each segment a row, its blocks coloured by
 * state, allocated ones by category, the fragmentation figure beside it); the
 * largest allocations live at the selected time (click the chart) and, for the
 * one selected, its life (alloc, free requested, free completed) and stack.
 * The file is read on a worker thread with a progress bar and Cancel.
 */
#pragma once

#include <adwaita.h>

#include "model/wick-memory-snapshot.h"
#include "model/wick-snapshot-categories.h" /* WickSnapshotMatchCounts (the private header) */
#include "wick-page.h"

G_BEGIN_DECLS

#define WICK_TYPE_SNAPSHOT_WINDOW (wick_snapshot_window_get_type ())
G_DECLARE_FINAL_TYPE (WickSnapshotWindow, wick_snapshot_window, WICK, SNAPSHOT_WINDOW,
                      AdwApplicationWindow)

/* A window that starts reading @path at once. */
WickSnapshotWindow *wick_snapshot_window_new (GtkApplication *application, const char *path);

/* The same, reading only the history from @from_us to @to_us (time_us), the
 * state at its start rebuilt (wick_memory_snapshot_load_range). Dragging
 * on a window's chart offers "Load Range Alone", which opens one. */
WickSnapshotWindow *wick_snapshot_window_new_range (GtkApplication *application, const char *path,
                                                    gint64 from_us, gint64 to_us);
/* The range dragged on the chart (FALSE when none), and setting it as a drag would. */
gboolean wick_snapshot_window_get_drag_range (WickSnapshotWindow *self, gint64 *from_us,
                                              gint64 *to_us);

/* Two snapshots compared by stack (wick_memory_snapshot_diff): B − A of
 * the live bytes at each, largest change first; select a row for its frames. */
WickSnapshotWindow *wick_snapshot_window_new_compare (GtkApplication *application, const char *a,
                                                      const char *b);
const char *wick_snapshot_window_get_diff_details (WickSnapshotWindow *self);
/* A snapshot as a page of a trace window (wick_window_add_page): a
 * WickSnapshotPage ("Memory Snapshot") holding the snapshot window's body,
 * the window itself kept unseen behind it and destroyed with it;
 * wick_snapshot_window_from_page gives it back. */
#define WICK_TYPE_SNAPSHOT_PAGE (wick_snapshot_page_get_type ())
G_DECLARE_FINAL_TYPE (WickSnapshotPage, wick_snapshot_page, WICK, SNAPSHOT_PAGE, WickPage)

GtkWidget *wick_snapshot_window_new_page (const char *path);
WickSnapshotWindow *wick_snapshot_window_from_page (GtkWidget *page);


/* TRUE when @path's first bytes (after gzip/zstd) are a pickle's. */
gboolean wick_snapshot_window_sniff (const char *path);

/* Selects the time (time_us) the live list shows. */
void wick_snapshot_window_select_time (WickSnapshotWindow *self, gint64 time_us);

G_END_DECLS
