/* wick-stages-panel-private.h — what only the tests call of wick-stages-panel.h (the app
 * includes wick-stages-panel.h alone). It declares no types: include it after
 * wick-stages-panel.h. */
#pragma once

G_BEGIN_DECLS

/* For tests: stages shown, a stage's state, the reason capture is off (NULL
 * when it is available), the last certificate's verdict (NULL before one). */
guint wick_stages_panel_get_n_stages (WickStagesPanel *self);
const char *wick_stages_panel_get_state (WickStagesPanel *self, const char *stage);
const char *wick_stages_panel_get_unavailable_reason (WickStagesPanel *self);
const char *wick_stages_panel_get_last_verdict (WickStagesPanel *self);
guint wick_stages_panel_get_pending (WickStagesPanel *self);

void wick_stages_panel_refresh (WickStagesPanel *self);
void wick_stages_panel_capture (WickStagesPanel *self, const char *stage);

G_END_DECLS
