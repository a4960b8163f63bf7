/* wick-ring-layout.h — the shared-memory layout of a session's ring (format 1).
 * This comment is the protocol; docs/ring.md explains the why.
 *
 * One memfd, mapped MAP_SHARED read-write by the producer only: it is sealed
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE) right after the
 * producer maps it, so no process can write it, map it writable or change
 * its size, and readers get an O_RDONLY descriptor. Hold readers write their
 * positions into a second memfd, the cursors (below), which the producer
 * bounds-checks on every use. All integers are native
 * endian (readers run on the same host), all offsets are from the start of
 * the memfd and 8-byte aligned:
 *
 *   [0, 4096)                 WickRingHeader
 *   [meta_offset, +meta_capacity)     the meta JSONL line (meta_length bytes)
 *   [arena_offset, +arena_capacity)   interned strings
 *   [controls_offset, +n_rings * control_bytes)  one WickRingControl per ring
 *   [data_offset, +n_rings * ring_bytes)         ring data, ring i at data_offset + i * ring_bytes
 *
 * Interned strings: entry = u32 length, u32 hash, bytes, NUL, zero padding to
 * 8. A handle is the entry's offset inside the arena (never 0: the arena
 * starts with 8 reserved bytes). arena_used is published with release after
 * the entry is written; a reader accepts handle h only if h + 8 + length + 1
 * <= arena_used <= arena_capacity and the byte at length is NUL.
 *
 * Rings: one per producer thread (a thread that exits gives its ring to the
 * next thread that starts recording; the ring's byte stream continues). Data
 * positions are monotonic u64 byte counts; position p lives at p % ring_bytes.
 * ring_bytes is a power of two and a multiple of the chunk (64 KiB). A record
 * never straddles a chunk boundary: when it would, the producer fills the rest
 * of the chunk with one PAD record. So the first record of every chunk starts
 * at the chunk's first byte, which lets a lapped reader resynchronise.
 *
 * Record: 8-byte header { u16 words; u8 kind; u8 version; u32 seq } then the
 * payload; words is the whole record's length in 8-byte words (never 0); seq
 * counts records on this ring (PAD records carry the next seq and do not
 * consume it). A reader skips kinds it does not know by their length; fields
 * may be appended to a kind in a later version, readers read the prefix they
 * know. Framing errors (words == 0, record beyond its chunk, beyond commit)
 * end that ring for that reader.
 *
 * Producer protocol (single writer per ring): write the record's bytes at
 * position head (after a release fence), then store commit = head + size with
 * release. The producer never writes past
 *   min over active hold readers (hold_tail[slot] + ring_bytes)
 * except in the overwrite policy, where hold readers are ignored. When that
 * limit stops it: drop policy drops the record (dropped += 1, and the next
 * record it manages to write is preceded by a DROPPED record with the count
 * and the first/last timestamps); block policy waits (sleeping) until a hold
 * reader advances or is found dead (kill(pid, 0) == ESRCH).
 *
 * Follow readers: read commit (acquire), copy the record, fence (acquire),
 * read commit again as c2. The copy is valid iff its start >= c2 +
 * WICK_RING_MAX_RECORD - ring_bytes (no record the producer may be writing
 * reaches it). Otherwise, or when commit - pos > ring_bytes, the reader was
 * lapped: it jumps to the first chunk boundary past the danger zone and counts
 * seq(new) - seq(expected) records lost.
 *
 * Open-span stack: the producer keeps its thread's open spans in
 * WickRingControl.stack and publishes depth_gen = generation << 32 | depth
 * with release after each push and pop (generation increments each time). A
 * late reader snapshots entries [0, depth) between two equal reads of
 * depth_gen (seqlock) and synthesizes their span_start records. The entry
 * just below stack[0] (below_stack) has id 1, the root's.
 */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define WICK_RING_MAGIC UINT64_C (0x474e49524b434957) /* "WICKRING" */
#define WICK_RING_FORMAT_VERSION 2
#define WICK_RING_HEADER_BYTES 4096
#define WICK_RING_CHUNK_BYTES 65536
#define WICK_RING_MAX_RECORD 16384
#define WICK_RING_MIN_RING_BYTES (4 * WICK_RING_CHUNK_BYTES)
#define WICK_RING_MAX_RING_BYTES (UINT64_C (1) << 32)
#define WICK_RING_MAX_HOLDERS 8
#define WICK_RING_MAX_DEPTH 128
#define WICK_RING_MAX_RINGS 1024
#define WICK_RING_META_CAPACITY 65536
#define WICK_THREAD_NAME_BYTES 64

enum
{
  WICK_RING_STATE_RUNNING = 1,
  WICK_RING_STATE_FINISHED = 2,
};

enum
{
  WICK_HOLDER_FREE = 0,
  WICK_HOLDER_CLAIMING = 1,
  WICK_HOLDER_ACTIVE = 2,
  /* The producer detached this hold reader: it stopped draining for longer
   * than the session's hold timeout while the producer was held back. The
   * producer ignores the slot; the reader frees it (DETACHED -> FREE) when it
   * notices and goes on as a follow reader; the producer frees it when the
   * reader's pid is gone. */
  WICK_HOLDER_DETACHED = 3,
};

/* Record kinds in the ring (not the same numbers as WickRingRecordKind). */
enum
{
  WICK_KIND_PAD = 0,
  WICK_KIND_SPAN_START = 1,
  WICK_KIND_SPAN_END = 2,
  WICK_KIND_OP = 3,
  WICK_KIND_TENSOR = 4,
  WICK_KIND_TENSOR_STATS = 5,
  WICK_KIND_MEMORY = 6,
  WICK_KIND_DEVICE_MEMORY = 7,
  WICK_KIND_DEVICE_INTERVAL = 8,
  WICK_KIND_GRADIENT = 9,
  WICK_KIND_CALL_EDGE = 10,
  WICK_KIND_DATA_EDGE = 11,
  WICK_KIND_TERMINAL = 12,
  WICK_KIND_EXTENSION = 13,
  WICK_KIND_DROPPED = 14,
  WICK_KIND_THREAD = 15,
  WICK_KIND_LAST = 15,
};

typedef struct
{
  uint16_t words;
  uint8_t kind;
  uint8_t version;
  uint32_t seq;
} WickRecordHeader;

/* An open span, as kept on the stack and as the payload of span records. */
typedef struct
{
  uint64_t id;
  uint64_t parent;
  uint32_t name; /* interned handle */
  uint8_t span_kind;
  uint8_t step;
  uint8_t measured;
  uint8_t reserved;
  uint64_t start_ns;
} WickSpanPayload;

typedef struct
{
  WickRecordHeader header;
  WickSpanPayload span;
} WickSpanStartRecord;

typedef struct
{
  WickRecordHeader header;
  WickSpanPayload span;
  uint64_t duration_ns;
} WickSpanEndRecord;

_Static_assert(sizeof (WickSpanPayload) == 32, "span payload layout");
_Static_assert(sizeof (WickSpanStartRecord) == 40, "span_start layout");
_Static_assert(sizeof (WickSpanEndRecord) == 48, "span_end layout");

typedef struct
{
  int32_t pid;
  uint32_t reserved;
} WickHolderInfo;

typedef struct
{
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;
  uint64_t file_bytes;
  int32_t pid;
  uint32_t policy; /* WickRingPolicy */
  uint64_t start_unix_ns;
  uint64_t generation; /* random per session */
  uint32_t n_rings;
  uint32_t strict;
  uint64_t ring_bytes;
  uint32_t chunk_bytes;
  uint32_t max_record_bytes;
  uint64_t meta_offset;
  uint32_t meta_capacity;
  uint32_t meta_length;
  uint64_t arena_offset;
  uint64_t arena_capacity;
  uint64_t controls_offset;
  uint64_t control_bytes;
  uint64_t data_offset;
  uint32_t root_name; /* interned entrypoint */
  uint32_t reserved0;
  char program[256];
  char entrypoint[256];
  char run_id[128];
  _Atomic uint32_t state;
  _Atomic uint32_t rings_in_use; /* rings ever claimed: readers look at [0, rings_in_use) */
  _Atomic uint64_t arena_used;
  /* Appended in format 2 (zero from an older producer of format 2): losses
   * that no ring's DROPPED records carry, and hold readers detached. */
  _Atomic uint64_t unclaimed_dropped; /* records lost because every ring was taken */
  _Atomic uint64_t writer_lost;       /* lines the session's JSONL writer could not write */
  _Atomic uint64_t detached_readers;  /* hold readers detached for stalling */
  uint64_t hold_timeout_ns;           /* the session's hold timeout (UINT64_MAX: never) */
} WickRingHeader;

_Static_assert(sizeof (WickRingHeader) <= WICK_RING_HEADER_BYTES, "header fits its page");

typedef struct
{
  _Atomic uint64_t commit;
  uint64_t reserved0[7];
  _Atomic uint64_t depth_gen;
  _Atomic uint64_t dropped;  /* records dropped by the producer on this ring */
  _Atomic int32_t owner_tid; /* 0: free */
  uint32_t next_seq;         /* seq the next owner continues from */
  uint64_t reserved1[5];
  uint64_t reserved3[WICK_RING_MAX_HOLDERS / 2]; /* format 1: hold tails (now in cursors) */
  /* Format 1's other hold tails; written by the producer at claim as an
   * entry whose id is 1 (the root s1), so that the entry below stack[depth]
   * is a new span's parent at every depth (no test for depth 0). Readers
   * ignore it. */
  WickSpanPayload below_stack;
  WickSpanPayload stack[WICK_RING_MAX_DEPTH];
  /* The owner's thread identity (published at claim and on a rename, before
   * the THREAD record that announces it; read by late readers only). */
  _Atomic uint32_t thread_number; /* 1 = the thread that opened the session; 0: none yet */
  uint32_t reserved2;
  char thread_name[WICK_THREAD_NAME_BYTES];
} WickRingControl;

/* The cursors memfd (format 2): the only shared memory a reader may write.
 * Passed only to hold readers (never by hello); sealed against shrink and
 * grow. [0, 4096) this header, then hold tails: u64 at
 * WICK_CURSORS_HEADER_BYTES + (ring * WICK_RING_MAX_HOLDERS + slot) * 8.
 * The producer reads every word of it as hostile: a state other than ACTIVE
 * is free, a tail is clamped into [head - ring_bytes, head]. */
#define WICK_CURSORS_MAGIC UINT64_C (0x535255434b434957) /* "WICKCURS" */
#define WICK_CURSORS_HEADER_BYTES 4096

typedef struct
{
  uint64_t magic;
  uint32_t version;
  uint32_t n_rings;
  uint64_t generation; /* the ring header's */
  uint64_t file_bytes;
  _Atomic uint32_t holder_state[WICK_RING_MAX_HOLDERS];
  _Atomic int32_t holder_pid[WICK_RING_MAX_HOLDERS];
} WickRingCursors;

_Static_assert(sizeof (WickRingCursors) <= WICK_CURSORS_HEADER_BYTES, "cursors header fits");

/* The inline span calls (wick/wick-thread-handle.h) use these offsets. */
_Static_assert(offsetof (WickRingControl, depth_gen) == 64, "depth_gen at 64");
_Static_assert(offsetof (WickRingControl, below_stack) == 160, "root entry at 160");
_Static_assert(offsetof (WickRingControl, stack) == 192, "stack at 192");

#define WICK_RING_CONTROL_BYTES 8192
_Static_assert(sizeof (WickRingControl) <= WICK_RING_CONTROL_BYTES, "control fits");
