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

/* Asks the process for its modules now (tests call this, then iterate). */
void wick_weights_panel_refresh (WickWeightsPanel *self);

/* What the buttons do (tier "auto", "disk" or "ram"). */
void wick_weights_panel_evict (WickWeightsPanel *self, const char *module, const char *tier);
void wick_weights_panel_restore (WickWeightsPanel *self, const char *module);
void wick_weights_panel_restore_all (WickWeightsPanel *self);

/* The words the page shows, in the current language with their plural forms
 * (tests check them): a module row's subtitle ("4.0 MiB · 1 parameter ·
 * resident") and the toast of a restore or restore-all result. */
char *wick_weights_panel_module_text (const WickControlModule *module);
char *wick_weights_panel_restored_text (const WickControlResult *result);

G_END_DECLS
