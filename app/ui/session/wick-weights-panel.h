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

G_END_DECLS
