/* wick-timeline-index.h — time index and mipmap summary of a document's spans.
 *
 * For each flame-chart depth: the span indices sorted by start time with a
 * running maximum of end times, so "spans overlapping [t0, t1)" is a binary
 * search plus a walk over exactly the overlapping spans (a span that starts
 * before t0 and ends inside the range is found). On top of that, per depth, a
 * pyramid of levels in the manner of Perfetto's "mipmap": level L splits time
 * into buckets of base << L ns and keeps, per non-empty bucket, the longest
 * span starting in it. A draw at n ns per pixel reads the coarsest level
 * whose bucket is at most n ns wide, so it touches at most two entries per
 * pixel and depth, whatever the number of spans.
 *
 * Open spans (no span_end) extend to the document's end. The index holds
 * indices into the document's span array and must be rebuilt when the
 * document grows (wick_timeline_index_new() is O(n log n)).
 */
#pragma once

#include "model/wick-document.h"

G_BEGIN_DECLS

typedef struct _WickTimelineIndex WickTimelineIndex;

typedef struct
{
  guint32 bucket;
  guint32 span;
} WickMipEntry;

typedef struct
{
  guint32 *spans;   /* sorted by start_ns */
  guint64 *max_end; /* max_end[i] = max end of spans[0..i] */
  guint n_spans;
  guint n_levels;
  WickMipEntry **levels;
  guint *level_counts;
} WickTimelineDepth;

WickTimelineIndex *wick_timeline_index_new (WickDocument *document);
void wick_timeline_index_free (WickTimelineIndex *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickTimelineIndex, wick_timeline_index_free)

guint wick_timeline_index_get_n_depths (WickTimelineIndex *self);
const WickTimelineDepth *wick_timeline_index_get_depth (WickTimelineIndex *self, guint depth);
/* Width of a level-0 bucket in ns (a power of two). */
guint64 wick_timeline_index_get_base_ns (WickTimelineIndex *self);
guint64 wick_timeline_index_span_end (WickTimelineIndex *self, guint span);
guint64 wick_timeline_index_get_start_ns (WickTimelineIndex *self);
guint64 wick_timeline_index_get_end_ns (WickTimelineIndex *self);
guint wick_timeline_index_get_n_spans (WickTimelineIndex *self);

/* First position in depth->spans whose span may overlap t (max_end > t). */
guint wick_timeline_depth_first_overlapping (const WickTimelineDepth *depth, guint64 t);

/* Level to draw at @ns_per_px: -1 means draw raw spans (finer than level 0). */
int wick_timeline_index_pick_level (WickTimelineIndex *self, double ns_per_px);

/* Innermost span at time @t and depth (within @slop_ns); -1 when none. */
gint64 wick_timeline_index_span_at (WickTimelineIndex *self, guint depth, guint64 t,
                                    guint64 slop_ns);

G_END_DECLS
