/* wick-weights-panel-private.h — what only the tests call of wick-weights-panel.h (the app
 * includes wick-weights-panel.h alone). It declares no types: include it after
 * wick-weights-panel.h. */
#pragma once

G_BEGIN_DECLS

/* Rows shown, for tests: module count, and a module's "where", NULL if absent. */
guint wick_weights_panel_get_n_modules (WickWeightsPanel *self);
const char *wick_weights_panel_get_where (WickWeightsPanel *self, const char *module);

/* A module row's subtitle as shown (size, parameters, where), NULL if absent. */
const char *wick_weights_panel_get_subtitle (WickWeightsPanel *self, const char *module);

/* Requests in flight (tests wait for 0). */
guint wick_weights_panel_get_pending (WickWeightsPanel *self);

G_END_DECLS
