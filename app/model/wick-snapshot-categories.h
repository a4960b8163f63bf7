/* wick-snapshot-categories.h — the categories of a CUDA memory snapshot's
 * allocations from a Wick session's own memory records (docs/memory-snapshots.md,
 * "Categories from a Wick session's records").
 *
 * A record and an allocation are the same memory when they have the same
 * device ("cuda:N" is the snapshot's device N; "cuda" is 0) and address (the
 * record's wick_address, the snapshot's block / entry address) and their
 * lifetimes overlap. The two clocks differ: a record's timestamp_ns is the
 * session's (nanoseconds since it opened), a snapshot's time_us the epoch's.
 * They are aligned so:
 *  1. a first offset from the trace's meta "timestamp" (ISO-8601, the wall
 *     clock when the session opened, to the millisecond): snapshot µs =
 *     meta µs + floor(timestamp_ns / 1000) ("meta_timestamp"); without a
 *     timestamp that parses, the trace's last memory record is put at the
 *     history's last entry ("trace_end", a guess);
 *  2. refined by the allocations themselves: each record's allocation is
 *     paired with the nearest history alloc at the same device, address and
 *     size within 100 ms of it (the earlier on a tie); the median of those
 *     differences (the lower one for an even count) is added to the offset.
 * Lifetimes: a record's from its alloc to its storage's free (pairing by
 * device and storage_id in timestamp order, as the health does; a free with
 * no alloc began before the trace, an alloc with no free is live at its end;
 * a second alloc of an open storage ends the first), an allocation's from
 * its alloc to its free_completed (wick_memory_snapshot_get_allocations; one
 * live at the snapshot ends at the history's last entry, one live before the
 * history starts before everything). Intervals are closed.
 * The candidates of an allocation are the records at its device and address
 * whose lifetime overlaps; those of its size (requested bytes) when there are
 * any. One candidate: matched. Several: the one that overlaps longest
 * (unbounded ends cut at the earliest and latest times of both sides) is
 * matched when it overlaps more than twice as long as the next, else the
 * allocation is ambiguous. None: unmatched.
 * An allocation's category is its record's when matched and the record says
 * one (not "other"), else its stack's (wick_memory_snapshot_stack_category),
 * else unknown (WICK_CATEGORY_OTHER).
 */
#pragma once

#include "wick-document.h"
#include "wick-memory-snapshot.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_SNAPSHOT_UNMATCHED,
  WICK_SNAPSHOT_MATCHED,
  WICK_SNAPSHOT_AMBIGUOUS,
} WickSnapshotMatch;

typedef enum
{
  WICK_SNAPSHOT_CATEGORY_FROM_RECORD,
  WICK_SNAPSHOT_CATEGORY_FROM_FRAMES,
  WICK_SNAPSHOT_CATEGORY_UNKNOWN,
} WickSnapshotCategorySource;

typedef enum
{
  WICK_SNAPSHOT_CLOCK_META_TIMESTAMP,
  WICK_SNAPSHOT_CLOCK_TRACE_END,
  WICK_SNAPSHOT_CLOCK_NONE, /* no memory record to align */
} WickSnapshotClock;

#define WICK_SNAPSHOT_N_CATEGORIES (WICK_CATEGORY_OTHER + 1)

typedef struct
{
  /* the snapshot's allocations (all of wick_memory_snapshot_get_allocations) */
  guint64 allocations, matched, unmatched, ambiguous;
  /* those live at the snapshot (with a block) */
  guint64 live, live_matched, live_unmatched, live_ambiguous;
  /* where each allocation's category came from (WickSnapshotCategorySource) */
  guint64 from_record, from_frames, unknown;
  /* the trace's memory records: lifetimes with an address on a CUDA device,
   * records with no address, records of another device, records whose
   * wick_address was not one (wick_document_get_bad_addresses) */
  guint64 record_lifetimes, records_without_address, records_other_device, records_bad_address;
  guint64 lifetimes_matched; /* lifetimes some allocation was matched to */
  WickSnapshotClock clock;
  gint64 offset_us;     /* snapshot µs = floor(timestamp_ns / 1000) + offset_us */
  gint64 correction_us; /* the part of offset_us step 2 found */
  guint64 refined_pairs;
} WickSnapshotMatchCounts;

typedef struct _WickSnapshotCategories WickSnapshotCategories;

/* Matches every allocation of @snapshot with @document's memory records.
 * Both must outlive the result. */
WickSnapshotCategories *wick_snapshot_categories_new (WickMemorySnapshot *snapshot,
                                                      WickDocument *document);
void wick_snapshot_categories_free (WickSnapshotCategories *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickSnapshotCategories, wick_snapshot_categories_free)

const WickSnapshotMatchCounts *wick_snapshot_categories_get_counts (WickSnapshotCategories *self);
/* Allocation @i's category; @match, @source, @record (the matched record's
 * alloc, or free when it had none, as an index of wick_document_get_memory;
 * G_MAXUINT32 when none) may be NULL. */
WickMemoryCategory wick_snapshot_categories_get (WickSnapshotCategories *self, guint i,
                                                 WickSnapshotMatch *match,
                                                 WickSnapshotCategorySource *source,
                                                 guint32 *record);
/* Bytes by category (WICK_SNAPSHOT_N_CATEGORIES) at the snapshot: the
 * active_allocated blocks' sizes (their sum is the allocated bytes), a block
 * taking its allocation's category; and at @time_us: the allocations live
 * then (alloc_us <= t < free_completed_us), in the trace's requested bytes. */
void wick_snapshot_categories_at_snapshot (WickSnapshotCategories *self, guint64 *bytes);
void wick_snapshot_categories_at (WickSnapshotCategories *self, gint64 time_us, guint64 *bytes);

const char *wick_snapshot_clock_to_string (WickSnapshotClock clock);

G_END_DECLS
