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

/* Two snapshots compared by stack (wick_memory_snapshot_diff): B − A of
 * the live bytes at each, largest change first; select a row for its frames. */
WickSnapshotWindow *wick_snapshot_window_new_compare (GtkApplication *application, const char *a,
                                                      const char *b);
/* A snapshot as a page of a trace window (wick_window_add_page): a
 * WickSnapshotPage ("Memory Snapshot") holding the snapshot window's body,
 * the window itself kept unseen behind it and destroyed with it;
 * wick_snapshot_window_from_page gives it back. */
#define WICK_TYPE_SNAPSHOT_PAGE (wick_snapshot_page_get_type ())
G_DECLARE_FINAL_TYPE (WickSnapshotPage, wick_snapshot_page, WICK, SNAPSHOT_PAGE, WickPage)

GtkWidget *wick_snapshot_window_new_page (const char *path);

/* TRUE when @path's first bytes (after gzip/zstd) are a pickle's. */
gboolean wick_snapshot_window_sniff (const char *path);

G_END_DECLS
