/* wick-health-page-private.h — what only the tests call of wick-health-page.h (the app
 * includes wick-health-page.h alone). It declares no types: include it after
 * wick-health-page.h. */
#pragma once

G_BEGIN_DECLS

void wick_health_page_set_document (WickHealthPage *self, WickDocument *document);
WickTable *wick_health_page_get_table (WickHealthPage *self);
guint wick_health_page_get_n_errors (WickHealthPage *self);
guint wick_health_page_get_n_warnings (WickHealthPage *self);

/* Pending issues of a run in progress (provisional health), and the header. */
guint wick_health_page_get_n_pending (WickHealthPage *self);
const char *wick_health_page_get_title (WickHealthPage *self);

G_END_DECLS
