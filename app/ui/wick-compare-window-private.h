/* wick-compare-window-private.h — what only the tests call of wick-compare-window.h (the app
 * includes wick-compare-window.h alone). It declares no types: include it after
 * wick-compare-window.h. */
#pragma once

G_BEGIN_DECLS

/* For tests: TRUE once the comparison is shown (or refused, or failed). */
gboolean wick_compare_window_is_ready (WickCompareWindow *self);
const WickComparison *wick_compare_window_get_comparison (WickCompareWindow *self);

/* Whether the content is held back for an identity mismatch. */
gboolean wick_compare_window_is_refused (WickCompareWindow *self);

/* Selects the table row of @name (a span) and highlights it on both sides. */
gboolean wick_compare_window_select_name (WickCompareWindow *self, const char *name);

/* The visible ranges of both timelines, in their own times. */
void wick_compare_window_get_visible (WickCompareWindow *self, guint64 range_a[2],
                                      guint64 range_b[2]);
GtkWidget *wick_compare_window_get_timeline (WickCompareWindow *self, guint side);

G_END_DECLS
