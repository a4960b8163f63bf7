/* wick-stages-panel.h — the Stages page of a live window.
 *
 * Lists the stages the process registered with their state (eager, captured,
 * refused) from the control socket's "list", refreshed every second while
 * shown; Capture sends the editable gates (gate_cos, min_speedup, warm-up)
 * and shows the certificate that comes back as a card (verdict, reason,
 * parity cos / max abs / p99 abs, eager and replay ms, speedup median with
 * min and max, kernel nodes); Release returns a stage to eager. Where the
 * process has no CUDA device the page says why capture is unavailable and
 * the Capture buttons are off. Captures and refusals also appear on the
 * timeline as the stage's wick_stage_certification records.
 */
#pragma once

#include <adwaita.h>

#include "wick-page.h"
#include "wick-window.h"

G_BEGIN_DECLS

#define WICK_TYPE_STAGES_PANEL (wick_stages_panel_get_type ())
G_DECLARE_FINAL_TYPE (WickStagesPanel, wick_stages_panel, WICK, STAGES_PANEL, WickPage)

GtkWidget *wick_stages_panel_new (WickWindow *window, const char *socket_path);

G_END_DECLS
