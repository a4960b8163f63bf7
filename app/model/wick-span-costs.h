/* wick-span-costs.h — what each span costs and holds, for the span-costs view,
 * the details pane and wick-trace summary.
 *
 * A WickSpanIndex is built once from a finished (or analysed live) document and
 * is immutable; rebuild it after the document changed. Times are host
 * nanoseconds; an open span counts with duration 0 (spec §3.3).
 *
 *   self_ns(span)  = duration - sum of the durations of its direct children,
 *                    clamped at 0 (children overlapping each other are not
 *                    merged: candle-graph keeps no such rule either).
 *   bytes allocated in a span = sum of `bytes` of its memory alloc events,
 *   bytes freed = sum of `bytes` of its memory free events (by span_id, as
 *   written; not inclusive of children).
 *
 * wick_span_costs_by_name() aggregates spans by name: count, total (sum of
 * durations), self (sum of self times), mean = total / count, max duration;
 * sorted by total descending, then name. A span the importer made (the root
 * over a Chrome trace, wick_document_is_synthetic_span()) is in no row.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct _WickSpanIndex WickSpanIndex;

WickSpanIndex *wick_span_index_new (WickDocument *document);
void wick_span_index_free (WickSpanIndex *index);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickSpanIndex, wick_span_index_free)

/* Indices into the document's arrays of the records whose span_id names @span,
 * in file order. */
const guint32 *wick_span_index_get_ops (WickSpanIndex *index, guint span, guint *n);
const guint32 *wick_span_index_get_tensors (WickSpanIndex *index, guint span, guint *n);
const guint32 *wick_span_index_get_device_intervals (WickSpanIndex *index, guint span, guint *n);
/* Direct children (spans whose parent_id names @span), in file order. */
const guint32 *wick_span_index_get_children (WickSpanIndex *index, guint span, guint *n);

guint64 wick_span_index_get_self_ns (WickSpanIndex *index, guint span);
guint64 wick_span_index_get_bytes_allocated (WickSpanIndex *index, guint span);
guint64 wick_span_index_get_bytes_freed (WickSpanIndex *index, guint span);

typedef struct
{
  WickStr name;
  guint64 count;
  guint64 total_ns;
  guint64 self_ns;
  guint64 max_ns;
  double mean_ns;
} WickSpanCost;

/* A new array of WickSpanCost (free with g_array_unref). */
GArray *wick_span_costs_by_name (WickDocument *document, WickSpanIndex *index);

/* The same costs in two halves, for a document that grows on another
 * thread: wick_span_costs_copy_spans() (on the document's thread) copies
 * what the costs read of each span (name, duration, and its parent as the
 * index resolves it); wick_span_costs_from_copy() (any thread) aggregates
 * that copy, sorted by total descending then by name string id (its
 * caller, on the document's thread, may wick_span_costs_sort() for the
 * names' order among equal totals). */
typedef struct
{
  WickStr name;
  gint32 parent; /* -1: a root, or a parent never read */
  gboolean synthetic; /* wick_document_is_synthetic_span(): in no row */
  guint64 duration_ns;
} WickSpanCostInput;

WickSpanCostInput *wick_span_costs_copy_spans (WickDocument *document, guint *n_spans);
GArray *wick_span_costs_from_copy (const WickSpanCostInput *spans, guint n_spans);
void wick_span_costs_sort (WickDocument *document, GArray *costs);

G_END_DECLS
