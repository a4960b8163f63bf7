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

/* For tests: TRUE once the comparison is shown (or refused, or failed). */
gboolean wick_compare_window_is_ready (WickCompareWindow *self);
const WickComparison *wick_compare_window_get_comparison (WickCompareWindow *self);
/* Whether the content is held back for an identity mismatch. */
gboolean wick_compare_window_is_refused (WickCompareWindow *self);
void wick_compare_window_compare_anyway (WickCompareWindow *self);
/* Selects the table row of @name (a span) and highlights it on both sides. */
gboolean wick_compare_window_select_name (WickCompareWindow *self, const char *name);
/* The visible ranges of both timelines, in their own times. */
void wick_compare_window_get_visible (WickCompareWindow *self, guint64 range_a[2],
                                      guint64 range_b[2]);
GtkWidget *wick_compare_window_get_timeline (WickCompareWindow *self, guint side);

G_END_DECLS
