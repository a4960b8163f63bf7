/* wick-ranks-page.h — the Ranks page of a job opened as several rank files:
 * a ranks × steps heat map of step time and of exposed communication, each
 * rank's clock offset, the stragglers and the collectives (wick-ranks.h).
 * A WickPage whose figures are the job's reduction, fixed when the page is
 * made; the merged trace it shows is its window's session document. */
#pragma once

#include <gtk/gtk.h>

#include "wick-page.h"
#include "wick-ranks.h"
#include "wick-window.h"

G_BEGIN_DECLS

/* A job of more ranks than this shows each as one summary row on the
 * timeline (its GPU busy share per step, from the reduction) until the
 * Ranks page's Loaded box loads it: only loaded ranks' files are read. */
#define WICK_RANKS_PAGE_SUMMARY_ABOVE 8

#define WICK_TYPE_RANKS_PAGE (wick_ranks_page_get_type ())
G_DECLARE_FINAL_TYPE (WickRanksPage, wick_ranks_page, WICK, RANKS_PAGE, WickPage)

/* Takes @job. @window (weak) and @merged, the job's merged trace shown on
 * its timeline, may be NULL: then pinning or setting an offset re-aligns the
 * page only; else the merged trace is rewritten on the new clocks and
 * reloaded into @window. */
GtkWidget *wick_ranks_page_new (WickRankJob *job, WickWindow *window, const char *merged);

/* Opens @files (n >= 2 PyTorch profiler traces, one a rank) in @window as one
 * job: the reduction and the merged, aligned trace on a worker thread
 * (written under the user's cache directory), then the merged trace loaded
 * and the Ranks page added. A failure is a toast naming the file. */
void wick_window_open_job (WickWindow *window, GFile **files, guint n_files);

G_END_DECLS
