/* wick-coverage-page.h — the gradient contract: verdict, digest, families, entries.
 *
 * Header: the coverage verdict (complete, partial, invalid, unavailable) with
 * its reason, and the manifest digest recomputed and compared with the
 * declared one. Table: one row per family (expectation, min_present,
 * members, present and attached counts, verdict), expanding into its
 * manifest entries (root, key, state, norm). Selecting an entry with a
 * gradient record selects that record.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-table.h"

G_BEGIN_DECLS

#define WICK_TYPE_COVERAGE_PAGE (wick_coverage_page_get_type ())
G_DECLARE_FINAL_TYPE (WickCoveragePage, wick_coverage_page, WICK, COVERAGE_PAGE, WickPage)

GtkWidget *wick_coverage_page_new (WickSelection *selection);

G_END_DECLS
