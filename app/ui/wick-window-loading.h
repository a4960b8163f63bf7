/* wick-window-loading.h — one trace file loading for a window's loading page.
 *
 * A WickWindowLoading reads a file with a WickDocumentLoader (its fraction
 * and message drive the progress bar it was given), then derives what the
 * views draw from (scene, memory chart, span costs) on a worker thread, then
 * emits "loaded". One load at a time: starting another, or abandoning, cancels
 * the load shown and forgets it, so its end (cancelled, failed or read) emits
 * nothing. No timer polls anything.
 *
 * It knows no window: the window owns one, hands it the loading page's
 * widgets and answers its two signals (show the document, or say why not).
 */
#pragma once

#include <adwaita.h>

#include "model/wick-document.h"
#include "wick-memory-chart.h"
#include "wick-timeline-scene.h"

G_BEGIN_DECLS

/* What the views derive from a document, built on a worker thread so that a
 * large trace does not freeze the window after loading either. A receiver
 * steals what it keeps; the rest is freed after the signal. */
typedef struct
{
  WickTimelineScene *scene;
  WickMemoryChart *chart;
  GArray *costs;
} WickWindowDerived;

#define WICK_TYPE_WINDOW_LOADING (wick_window_loading_get_type ())
G_DECLARE_FINAL_TYPE (WickWindowLoading, wick_window_loading, WICK, WINDOW_LOADING, GObject)

/* Signals:
 *   "loaded" (const char *path, WickDocument *document,
 *     WickWindowDerived *derived): the load shown ended with @path read.
 *   "failed" (const char *path, const GError *error): it ended without one
 *     (G_IO_ERROR_CANCELLED when cancelled). */

/* Shows the load's title, path and progress on @page and @progress. */
WickWindowLoading *wick_window_loading_new (AdwStatusPage *page, GtkProgressBar *progress);

/* Starts loading @path, cancelling and forgetting the load shown before. */
void wick_window_loading_start (WickWindowLoading *self, const char *path);
/* Cancels the load shown: it ends with "failed" (cancelled). */
void wick_window_loading_cancel (WickWindowLoading *self);
/* Stops the load shown, if any; its end is then ignored. */
void wick_window_loading_abandon (WickWindowLoading *self);

/* TRUE while a load is shown (started, not ended nor abandoned). */
gboolean wick_window_loading_is_busy (WickWindowLoading *self);
/* The load shown's fraction, 0 when none. */
double wick_window_loading_get_fraction (WickWindowLoading *self);

/* Loads started by any WickWindowLoading whose end has not arrived yet (a
 * load another replaced, or whose window closed, still counts until its
 * thread ends). */
guint wick_window_loading_get_n_in_flight (void);

/* The PyTorch memory snapshot wick.torch writes beside a trace
 * (run.memory.pickle beside run.jsonl, docs/memory-snapshots.md) when @path
 * has one, else NULL. */
char *wick_window_loading_find_memory_history (const char *path);

G_END_DECLS
