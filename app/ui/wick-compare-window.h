/* wick-compare-window.h — two traces side by side.
 *
 * Both timelines stacked, aligned at the start of their measured regions,
 * with one zoom and one cursor; the memory of each side overlaid per category
 * (A solid, B dashed); the table of differences from wick-compare.h sorted by
 * significance and size of change, whose rows highlight the spans of that name
 * on both timelines; the identity differences as a banner. When the runs are
 * not the same configuration the window says so and compares only when asked
 * ("Compare Anyway"), as `wick-trace compare` refuses without
 * --allow-mismatch.
 */
#pragma once

#include <adwaita.h>

#include "model/wick-compare.h"

G_BEGIN_DECLS

#define WICK_TYPE_COMPARE_WINDOW (wick_compare_window_get_type ())
G_DECLARE_FINAL_TYPE (WickCompareWindow, wick_compare_window, WICK, COMPARE_WINDOW,
                      AdwApplicationWindow)

/* Loads both files on a worker thread, compares, then shows the result. */
WickCompareWindow *wick_compare_window_new (GtkApplication *application, GFile *a, GFile *b);

G_END_DECLS
