/* wick-costs-page-private.h — what only the tests call of wick-costs-page.h (the app
 * includes wick-costs-page.h alone). It declares no types: include it after
 * wick-costs-page.h. */
#pragma once

G_BEGIN_DECLS

void wick_costs_page_set_document (WickCostsPage *self, WickDocument *document);
void wick_costs_page_document_changed (WickCostsPage *self);
WickTable *wick_costs_page_get_table (WickCostsPage *self,
                                      const char *name); /* "spans", "ops", "tensors" */

/* Shows the table named "spans", "steps", "ops", "tensors" or "stats". */
void wick_costs_page_show_table (WickCostsPage *self, const char *name);

void wick_costs_page_set_filter (WickCostsPage *self, const char *text);

G_END_DECLS
