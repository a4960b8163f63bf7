/* wick-range-summary.h — what a time range of a document holds, by span name.
 *
 * Perfetto's area selection, in short: every closed span overlapping
 * [start_ns, end_ns) counts for the part of it inside the range; spans of one
 * name add up. Shares are sorted by time inside the range, descending, then
 * by first appearance. Open spans (no end read) are left out. Times are the
 * document's span nanoseconds (host time). The summary is a value: it keeps
 * no pointer into the document, so it may be computed on any thread that
 * holds the document unchanged.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct
{
  WickStr name;
  guint64 ns;    /* time of the spans of this name inside the range */
  guint32 count; /* spans of this name overlapping the range */
} WickRangeShare;

typedef struct
{
  guint64 start_ns, end_ns;
  guint32 n_overlapping; /* closed spans overlapping the range */
  GArray *shares;        /* WickRangeShare */
} WickRangeSummary;

/* NULL when @end_ns <= @start_ns. */
WickRangeSummary *wick_range_summary_new (WickDocument *document, guint64 start_ns, guint64 end_ns);
void wick_range_summary_free (WickRangeSummary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRangeSummary, wick_range_summary_free)

G_END_DECLS
