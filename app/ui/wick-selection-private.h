/* wick-selection-private.h — what only the tests call of wick-selection.h (the app
 * includes wick-selection.h alone). It declares no types: include it after
 * wick-selection.h. */
#pragma once

G_BEGIN_DECLS

gboolean wick_selection_has_range (WickSelection *self);

G_END_DECLS
