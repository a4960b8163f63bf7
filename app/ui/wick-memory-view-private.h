/* wick-memory-view-private.h — what only the tests call of wick-memory-view.h (the app
 * includes wick-memory-view.h alone). It declares no types: include it after
 * wick-memory-view.h. */
#pragma once

G_BEGIN_DECLS

/* Shows the readout as if the pointer were at widget x @x (< 0 hides it);
 * for tests and screenshots. */
void wick_memory_view_set_hover (WickMemoryView *self, double x);

/* The chart's parameters for the current size and range. */
void wick_memory_view_get_params (WickMemoryView *self, WickMemoryViewport *out);

G_END_DECLS
