/* wick-health-page.h — the trace's health issues and parse status.
 *
 * A status header (parse error with file, line and reason; or the counts of
 * errors and warnings and whether the trace is structurally valid; for a run
 * in progress, "Run in progress" with the pending count, since the rules only
 * the end decides are pending until it ends), then every issue (severity, code, message, record) in the spec's order.
 * Selecting or activating an issue selects its record in the shared
 * selection, so the timeline and details pane go to it.
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-table.h"

G_BEGIN_DECLS

#define WICK_TYPE_HEALTH_PAGE (wick_health_page_get_type ())
G_DECLARE_FINAL_TYPE (WickHealthPage, wick_health_page, WICK, HEALTH_PAGE, WickPage)

GtkWidget *wick_health_page_new (WickSelection *selection);

G_END_DECLS
