/* wick-weights-panel.h — the Weights page of a live window.
 *
 * Lists the weight modules the process registered (name, bytes, parameters,
 * where each is now: resident, disk, ram) from the control socket's "list",
 * refreshed every second while shown, with Evict (tier Auto, Disk or RAM),
 * Restore and Restore all buttons. Requests run off the main thread; results
 * and errors appear as toasts on the window. The evictions and restores
 * themselves appear on the timeline as the weight store's wick_ records.
 */
#pragma once

#include <adwaita.h>

#include "client/wick-control-result.h"
#include "wick-page.h"
#include "wick-window.h"

G_BEGIN_DECLS

#define WICK_TYPE_WEIGHTS_PANEL (wick_weights_panel_get_type ())
G_DECLARE_FINAL_TYPE (WickWeightsPanel, wick_weights_panel, WICK, WEIGHTS_PANEL, WickPage)

GtkWidget *wick_weights_panel_new (WickWindow *window, const char *socket_path);

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
