/* wick-memory-snapshot.h — a PyTorch CUDA allocator snapshot
 * (torch.cuda.memory._dump_snapshot's pickle), read without running anything.
 *
 * The file is a pickle (wick-pickle.h; gzip or zstd around it are undone) of
 *   {"segments": [segment...], "device_traces": [[entry...] per device],
 *    "allocator_settings": {...}, "external_annotations": [...]}
 * segment: {"device", "address", "total_size", "allocated_size", "active_size",
 *           "requested_size", "stream", "segment_type", "segment_pool_id",
 *           "is_expandable", "frames", "blocks": [block...]}
 * block:   {"address"?, "size", "requested_size", "state", "frames"}; blocks
 *          tile their segment in order, so a block without "address" (older
 *          files) starts where the previous one ended.
 * entry:   {"action", "addr", "size", "stream", "time_us", "frames",
 *           "compile_context"?, "user_metadata"?}; an "oom" entry gives the
 *          device's free bytes as CUDA reported them in "device_free" (torch
 *          2.5 and later) or "addr" (before); the model keeps them in addr.
 * frames:  [{"name", "filename", "line"}...], innermost first.
 * Segments and entries are taken from the pickle one at a time as they are
 * read (WickPickleElementFunc), so the big lists are never held as values.
 * Anything else (keys, unknown actions, entries outside device_traces) is
 * counted in "unmodelled", never dropped silently.
 *
 * Derived, per device and for all devices:
 * - allocated / reserved at the snapshot: the block sizes of active_allocated
 *   blocks (what torch.cuda.memory_allocated() counts) and the segments'
 *   total_size.
 * - The allocated series over the history, as PyTorch's viewer (MemoryViz.js,
 *   "Active Memory Timeline") reconstructs it, in the trace's sizes (requested
 *   bytes): an alloc is matched with the next free_completed of its address;
 *   a free_completed with no alloc before it, and an active_allocated block
 *   whose address no unmatched alloc explains, were live before the history
 *   began: their sizes (the block's requested_size) make the start. One point
 *   at the first entry's time with the start, then one after each alloc and
 *   each matched or unmatched free_completed. The peak is the greatest point
 *   (the first at that value); its time is that point's time_us.
 * - The reserved series the same way from segment_alloc/segment_map (+size)
 *   and segment_free/segment_unmap (-size), the start being the reserved
 *   bytes at the snapshot minus the history's net change.
 * - Fragmentation of a segment: 1 - largest inactive block / inactive bytes
 *   (0 with no inactive bytes): how far its free bytes are from one piece.
 * - A category for each stack, from its frames (wick_memory_snapshot_stack_category).
 */
#pragma once

#include <gio/gio.h>

#include "wick-document.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_BLOCK_ACTIVE_ALLOCATED,
  WICK_BLOCK_ACTIVE_PENDING_FREE,
  WICK_BLOCK_INACTIVE,
  WICK_BLOCK_OTHER, /* a state this reader does not know */
} WickBlockState;

typedef enum
{
  WICK_TRACE_ALLOC,
  WICK_TRACE_FREE_REQUESTED,
  WICK_TRACE_FREE_COMPLETED,
  WICK_TRACE_SEGMENT_ALLOC,
  WICK_TRACE_SEGMENT_FREE,
  WICK_TRACE_SEGMENT_MAP,
  WICK_TRACE_SEGMENT_UNMAP,
  WICK_TRACE_SNAPSHOT,
  WICK_TRACE_OOM,
  WICK_TRACE_OTHER,
  WICK_N_TRACE_ACTIONS,
} WickTraceAction;

#define WICK_SNAPSHOT_NO_STACK G_MAXUINT32

typedef struct
{
  guint64 address, size, requested_size;
  guint32 state; /* WickBlockState */
  guint32 stack; /* or WICK_SNAPSHOT_NO_STACK */
  guint32 segment;
} WickSnapshotBlock;

typedef struct
{
  gint64 device;
  guint64 address, total_size, allocated_size, active_size, requested_size;
  guint64 stream;
  WickStr segment_type;
  gint64 pool_id[2];
  gboolean is_expandable;
  guint32 first_block, n_blocks;
  guint32 stack;
  double fragmentation; /* see the header comment */
  guint64 largest_inactive, inactive_bytes;
} WickSnapshotSegment;

typedef struct
{
  gint64 time_us;
  guint64 addr, size, stream;
  guint32 action;       /* WickTraceAction */
  guint32 device_index; /* index into the device_traces list */
  guint32 stack;
} WickSnapshotEntry;

typedef struct
{
  gint64 time_us;
  guint64 bytes;
  guint32 entry; /* the entry after which it holds, G_MAXUINT32 for the start */
} WickSnapshotPoint;

typedef struct
{
  WickStr name, filename;
  gint64 line;
} WickSnapshotFrame;

typedef struct _WickMemorySnapshot WickMemorySnapshot;

typedef void (*WickSnapshotProgressFunc) (guint64 consumed, guint64 size, gpointer user_data);

/* Reads @path (plain, gzip or zstd). Errors name the file and the byte. */
WickMemorySnapshot *wick_memory_snapshot_load (const char *path, GCancellable *cancellable,
                                               WickSnapshotProgressFunc progress,
                                               gpointer progress_data, GError **error);
/* Only the history entries with @from_us <= time_us <= @to_us are kept: the
 * series start at the range's start with the state then reconstructed (the
 * allocations live at @from_us: made before it and not yet freed, or live
 * since before the history), and the allocations kept are those live at
 * some time of the range. Entries outside it are matched as they are read
 * and dropped: memory follows the range, not the file. Segments and blocks
 * are the snapshot's, as always. */
WickMemorySnapshot *wick_memory_snapshot_load_range (const char *path, gint64 from_us,
                                                     gint64 to_us, GCancellable *cancellable,
                                                     WickSnapshotProgressFunc progress,
                                                     gpointer progress_data, GError **error);
/* TRUE when loaded with a range narrower than everything; the range and the
 * count of entries left out. */
gboolean wick_memory_snapshot_get_range (WickMemorySnapshot *s, gint64 *from_us, gint64 *to_us,
                                         guint64 *n_outside);
void wick_memory_snapshot_free (WickMemorySnapshot *snapshot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickMemorySnapshot, wick_memory_snapshot_free)

/* TRUE when @data (a file's first bytes, after decompression) looks like a
 * pickle: the PROTO opcode 0x80 and a protocol 2 to 5. */
gboolean wick_memory_snapshot_sniff (const void *data, gsize len);
/* The same for a file (plain, gzip or zstd); FALSE when it cannot be read. */
gboolean wick_memory_snapshot_sniff_path (const char *path);

const WickSnapshotSegment *wick_memory_snapshot_get_segments (WickMemorySnapshot *s, guint *n);
const WickSnapshotBlock *wick_memory_snapshot_get_blocks (WickMemorySnapshot *s, guint *n);
/* Entries of every device, device by device, each in file order. */
const WickSnapshotEntry *wick_memory_snapshot_get_entries (WickMemorySnapshot *s, guint *n);
/* The indices of the oom entries (WICK_TRACE_OOM) among them, in their order. */
const guint32 *wick_memory_snapshot_get_oom_entries (WickMemorySnapshot *s, guint *n);
guint wick_memory_snapshot_get_n_devices (WickMemorySnapshot *s); /* device_traces' length */

guint64 wick_memory_snapshot_get_allocated (WickMemorySnapshot *s);
guint64 wick_memory_snapshot_get_reserved (WickMemorySnapshot *s);
/* The allocated (requested bytes) and reserved series of all devices together:
 * points from each device merged by time. */
const WickSnapshotPoint *wick_memory_snapshot_get_allocated_series (WickMemorySnapshot *s,
                                                                    guint *n);
const WickSnapshotPoint *wick_memory_snapshot_get_reserved_series (WickMemorySnapshot *s, guint *n);
/* FALSE when there is no history. */
gboolean wick_memory_snapshot_get_peak (WickMemorySnapshot *s, guint64 *bytes, gint64 *time_us);

/* Stacks: frame indices, innermost first. */
const guint32 *wick_memory_snapshot_get_stack (WickMemorySnapshot *s, guint32 stack, guint *n);
const WickSnapshotFrame *wick_memory_snapshot_get_frame (WickMemorySnapshot *s, guint32 frame);
const char *wick_memory_snapshot_str (WickMemorySnapshot *s, WickStr str);
/* "name (filename:line)" */
char *wick_memory_snapshot_format_frame (WickMemorySnapshot *s, guint32 frame);
/* From the stack's Python frames: optimizer state (torch/optim/), gradients
 * (inside autograd's backward), parameters (module construction, .to/.cuda,
 * torch/nn/parameter.py), activations (inside a module's forward call), and
 * WICK_CATEGORY_OTHER ("unknown") when the frames do not tell. */
WickMemoryCategory wick_memory_snapshot_stack_category (WickMemorySnapshot *s, guint32 stack);
const char *wick_memory_snapshot_category_name (WickMemoryCategory category);

/* What was read but not modelled: names ("key segments[].foo", "action
 * annotate", "entries outside device_traces") with counts. */
guint wick_memory_snapshot_get_n_unmodelled (WickMemorySnapshot *s);
const char *wick_memory_snapshot_get_unmodelled (WickMemorySnapshot *s, guint i, guint64 *count);

/* Every allocation the file tells of: each alloc of the history (its
 * free_requested and free_completed when they came), each free_completed with
 * no alloc before it (alloc_us = G_MININT64: live since before the history;
 * its stack is WICK_SNAPSHOT_NO_STACK, for the free entry's frames say where
 * it was freed, not where it was made: free_stack keeps them),
 * and each active_allocated block that no open alloc explains (the same, never
 * freed). Sizes are the trace's (requested bytes), as in the series; a live
 * one's free times are G_MAXINT64. */
typedef struct
{
  guint64 address, size;
  gint64 alloc_us, free_requested_us, free_completed_us;
  guint32 stack;
  guint32 alloc_entry; /* G_MAXUINT32 when it began before the history */
  guint32 block;       /* the snapshot's block when still live, else G_MAXUINT32 */
  guint32 device_index;
  guint32 free_stack; /* the free_completed entry's stack, or WICK_SNAPSHOT_NO_STACK */
} WickSnapshotAllocation;

const WickSnapshotAllocation *wick_memory_snapshot_get_allocations (WickMemorySnapshot *s,
                                                                    guint *n);
/* Indices of the allocations live at @time_us (alloc_us <= t < free_completed_us),
 * largest first (then by index), at most @max; a new GArray of guint32. */
GArray *wick_memory_snapshot_live_at (WickMemorySnapshot *s, gint64 time_us, guint max);

/* Live bytes by stack at @time_us (G_MAXINT64: at the snapshot, from the
 * live blocks' sizes; else the allocations live then, in the trace's
 * requested bytes), largest first, ties by stack index. */
typedef struct
{
  guint32 stack; /* or WICK_SNAPSHOT_NO_STACK */
  guint32 count; /* allocations */
  guint64 bytes;
} WickSnapshotStackBytes;

GArray *wick_memory_snapshot_live_by_stack (WickMemorySnapshot *s, gint64 time_us);

/* Diff of two snapshots by stack: the live block bytes at each snapshot,
 * grouped by stack_key, every stack of either; sorted by |b - a| largest
 * first, then by key in byte order. */
typedef struct
{
  char *key;               /* wick_memory_snapshot_stack_key */
  guint32 stack_a, stack_b; /* WICK_SNAPSHOT_NO_STACK where absent */
  guint64 bytes_a, bytes_b;
  guint32 count_a, count_b;
} WickSnapshotStackDiff;

GArray *wick_memory_snapshot_diff (WickMemorySnapshot *a, WickMemorySnapshot *b);

G_END_DECLS
