/* wick-gpu-pages-private.h — what only the tests call of wick-gpu-pages.h (the app
 * includes wick-gpu-pages.h alone). It declares no types: include it after
 * wick-gpu-pages.h. */
#pragma once

G_BEGIN_DECLS

void wick_gpu_table_page_set_document (WickGpuTablePage *self, WickDocument *document);
WickTable *wick_gpu_table_page_get_table (WickGpuTablePage *self);
const char *wick_gpu_table_page_get_position_text (WickGpuTablePage *self);
void wick_gpu_overview_page_set_document (WickGpuOverviewPage *self, WickDocument *document);

/* "steps" or "devices". */
WickTable *wick_gpu_overview_page_get_table (WickGpuOverviewPage *self, const char *name);

/* The launch figures' line, as shown. */
const char *wick_gpu_overview_page_get_launches_text (WickGpuOverviewPage *self);
/* The launch-bound stretches' line, and the button of the @i-th longest
 * (NULL when none). */
const char *wick_gpu_overview_page_get_waiting_text (WickGpuOverviewPage *self);
GtkWidget *wick_gpu_overview_page_get_stretch_button (WickGpuOverviewPage *self, guint i);

void wick_gpu_table_page_set_filter (WickGpuTablePage *self, const char *text);

/* The slices of row @index of the analysis (not a shown position): WickEventRef, by start. */
GArray *wick_gpu_table_page_get_instances (WickGpuTablePage *self, guint index);

/* The step whose bar is at @x of the chart (its allocation's coordinates),
 * -1 when none. */
gint wick_gpu_overview_page_step_at (WickGpuOverviewPage *self, double x);

G_END_DECLS
