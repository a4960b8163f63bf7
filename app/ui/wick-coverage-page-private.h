/* wick-coverage-page-private.h — what only the tests call of wick-coverage-page.h (the app
 * includes wick-coverage-page.h alone). It declares no types: include it after
 * wick-coverage-page.h. */
#pragma once

G_BEGIN_DECLS

void wick_coverage_page_set_document (WickCoveragePage *self, WickDocument *document);
WickTable *wick_coverage_page_get_table (WickCoveragePage *self);
const char *wick_coverage_page_get_verdict_text (WickCoveragePage *self);

G_END_DECLS
