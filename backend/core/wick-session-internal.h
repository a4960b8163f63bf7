/* wick-session-internal.h — the session object and the producer side of the
 * ring, shared by the files of backend/core only.
 *
 * A WickProducer is one thread's claim on one ring of the session's memfd.
 * Its fields are private to that thread; the shared words it publishes are in
 * WickRingControl (wick-ring-layout.h). The hot path is
 * wick_producer_reserve + wick_producer_commit: a compare against fast_end,
 * the stores of the record, one release store of commit.
 */
#pragma once

#include "wick-session-private.h"

#include "wick-clock.h"
#include "wick-error-private.h"
#include "wick-ring-layout.h"

#include <pthread.h>
#include <string.h>

typedef struct WickJsonlWriter WickJsonlWriter;
typedef struct WickInternTable WickInternTable;
typedef struct WickLiveState WickLiveState;

/* A slot of the session's thread-pointer cache (wick_producer_fast_get): tp is
 * written only by the thread whose thread pointer it is (claimed 0 -> tp by
 * CAS, cleared when that thread exits), so the only thread that can match a
 * slot is its owner, which wrote producer itself. */
typedef struct
{
  _Atomic uintptr_t tp;
  struct WickProducerStruct *producer;
} WickThreadSlot;

#define WICK_THREAD_SLOTS 64

typedef struct WickProducerStruct
{
  /* The prefix the inline span calls of wick/wick-thread-handle.h read and write:
   * the layout of WickThreadHandle, field for field (asserted below), so that a
   * producer is its thread's WickThreadHandle. */
  WickRingControl *control;
  uint8_t *data;
  uint64_t mask;
  uint64_t begin_limit; /* wick_producer_update_limits: fast_end, less for ids */
  uint64_t end_limit;   /* fast_end; both 0 off the TSC clock */
  /* The next record's seq; seq_word is seq << 32 (seq_zero stays 0), the
   * seq's place in a record header word, so a span record's header is that
   * word with the size and kind or'ed in and the count is one add to memory. */
  union
  {
    uint64_t seq_word;
    struct
    {
      uint32_t seq_zero;
      uint32_t seq;
    };
  };
  uint64_t next_id; /* span ids of this thread's current block */
  uint64_t tsc_base; /* the session's TSC clock (wick_session_tsc_clock) */
  uint64_t tsc_mult;
  uint64_t tsc_offset;
  WickSpanId (*begin_slow) (WickThreadHandle *thread, uint64_t word);
  bool (*end_slow) (WickThreadHandle *thread, WickSpanId span, WickError *error);
  uint64_t thread_reserved[4];

  WickSession *session;
  uint64_t serial;
  uint64_t capacity;
  uint64_t fast_end; /* head + size <= fast_end: the record fits without checks */
  uint32_t index;
  uint64_t id_end;
  uint64_t pending_drops; /* dropped since the last DROPPED record */
  uint64_t first_drop_ns;
  uint64_t last_drop_ns;
  uint64_t dropped_total;
  uint64_t next_liveness_ns;
  /* Stalled hold readers (per cursors slot): the tail last seen while this
   * producer was held back and since when it has not moved (0: not holding). */
  uint64_t stall_tail[WICK_RING_MAX_HOLDERS];
  uint64_t stall_since_ns[WICK_RING_MAX_HOLDERS];
  /* wick_reader_detached records owed (bit per slot), with what they say. */
  uint32_t detach_owed;
  int32_t detach_pid[WICK_RING_MAX_HOLDERS];
  uint64_t detach_stalled_ns[WICK_RING_MAX_HOLDERS];
  uint64_t detach_at_ns[WICK_RING_MAX_HOLDERS];
  int tid;
  int in_use;
  uint32_t thread;     /* wick_thread number */
  bool thread_pending; /* its THREAD record is still to be written (fast_end is 0) */
  char thread_name[WICK_THREAD_NAME_BYTES];
} WickProducer;

#define WICK_PRODUCER_AS_THREAD(field, thread_field)                                               \
  _Static_assert(offsetof (WickProducer, field) == offsetof (WickThreadHandle, thread_field),      \
                 "WickProducer." #field " is WickThreadHandle." #thread_field)
WICK_PRODUCER_AS_THREAD (control, _wick_control);
WICK_PRODUCER_AS_THREAD (data, _wick_data);
WICK_PRODUCER_AS_THREAD (mask, _wick_mask);
WICK_PRODUCER_AS_THREAD (begin_limit, _wick_begin_limit);
WICK_PRODUCER_AS_THREAD (end_limit, _wick_end_limit);
WICK_PRODUCER_AS_THREAD (seq_word, _wick_seq_word);
WICK_PRODUCER_AS_THREAD (next_id, _wick_next_id);
WICK_PRODUCER_AS_THREAD (tsc_base, _wick_tsc_base);
WICK_PRODUCER_AS_THREAD (tsc_mult, _wick_tsc_mult);
WICK_PRODUCER_AS_THREAD (tsc_offset, _wick_tsc_offset);
WICK_PRODUCER_AS_THREAD (begin_slow, _wick_begin_slow);
WICK_PRODUCER_AS_THREAD (end_slow, _wick_end_slow);
WICK_PRODUCER_AS_THREAD (thread_reserved, _wick_reserved);
_Static_assert(offsetof (WickProducer, session) == sizeof (WickThreadHandle),
               "WickThreadHandle prefix");
_Static_assert(_WICK_CONTROL_DEPTH_GEN == offsetof (WickRingControl, depth_gen)
                 && _WICK_CONTROL_STACK == offsetof (WickRingControl, stack)
                 && _WICK_MAX_DEPTH == WICK_RING_MAX_DEPTH
                 && _WICK_SPAN_START_BYTES == sizeof (WickSpanStartRecord)
                 && _WICK_SPAN_END_BYTES == sizeof (WickSpanEndRecord),
               "wick-thread-handle.h's ring constants");

/* Sets begin_limit and end_limit from fast_end (after every change of
 * fast_end, and after an id block refill): 0 off the TSC clock (the inline
 * calls read the TSC); the begin limit also no further than one span_start
 * for each id left in the block, so that an inline begin never runs out of
 * ids (each begin moves the head by 40 bytes and takes one id; every other
 * record only moves the head on). */
static inline void
wick_producer_update_limits (WickProducer *producer)
{
  if (!wick_clock.use_tsc || producer->fast_end == 0)
    {
      producer->begin_limit = 0;
      producer->end_limit = 0;
      return;
    }
  uint64_t head = atomic_load_explicit (&producer->control->commit, memory_order_relaxed);
  uint64_t ids = head + (producer->id_end - producer->next_id) * sizeof (WickSpanStartRecord);
  producer->begin_limit = ids < producer->fast_end ? ids : producer->fast_end;
  producer->end_limit = producer->fast_end;
}

/* fast_end 0 (the next record takes the slow path), with the limits. */
static inline void
wick_producer_stop_fast (WickProducer *producer)
{
  producer->fast_end = 0;
  producer->begin_limit = 0;
  producer->end_limit = 0;
}

struct WickSession
{
  uint64_t serial;
  uint64_t start_ns; /* wick_clock_now_ns at open */
  /* The span fast path's clock (wick_session_tsc_clock): wick_clock's TSC
   * calibration, fixed once wick_clock_init has run, with start_ns folded
   * into the offset, next to the thread slots' session pointer. */
  uint64_t tsc_base;
  uint64_t tsc_mult;
  uint64_t tsc_offset;
  uint64_t start_unix_ns;
  int memfd;     /* read-write, sealed: the producer's own */
  int reader_fd; /* O_RDONLY, what readers get (wick_session_get_ring_fd, hello) */
  int cursors_fd;
  WickRingCursors *cursors; /* shared with hold readers: hostile */
  size_t cursors_bytes;
  _Atomic uint64_t *writer_tails; /* the in-process JSONL writer's positions, private */
  _Atomic int writer_holding;
  uint8_t *map;
  size_t map_bytes;
  WickRingHeader *header;
  WickRingControl *controls;
  uint8_t *data;
  uint64_t ring_bytes;
  uint32_t n_rings;
  WickRingPolicy policy;
  bool strict;

  pthread_mutex_t lock; /* ring claims, interning, finish */
  WickProducer *producers;
  WickInternTable *intern;
  _Atomic uint64_t next_id_block;
  _Atomic uint64_t next_gradient;
  _Atomic int measurement_begun;
  _Atomic int finished;
  _Atomic uint32_t next_thread;     /* wick_thread numbers, from 1 */
  uint64_t hold_timeout_ns;         /* a hold reader stalled this long is detached */
  /* The span hot path's producer lookup by thread pointer: no TLS access,
   * which costs a call to _dl_tlsdesc_dynamic (17 instructions) each time in
   * a libwick.so that was dlopen()ed (`import wick`). */
  WickThreadSlot thread_slots[WICK_THREAD_SLOTS];
  /* The WickThreadHandle of a thread that has no ring (every ring taken, or in a
   * forked child): no ring of its own, its limits 0, so that every inline
   * call takes the slow path, which counts what it cannot record. */
  WickProducer unclaimed;
  /* Spans begun with no name handle (the string arena full, or no name):
   * recorded under name_lost, counted here and said on stderr (docs/ring.md,
   * "When the string arena is full"). */
  WickString name_lost;
  _Atomic uint64_t names_lost;

  /* Fork (docs/ring.md, "Fork"): in a child forked while the session was
   * open, forked is set by the atfork child handler; the child's view of the
   * ring is then a private copy (nothing it does reaches the parent's ring),
   * every record is counted in forked_records and not written, and finish and
   * close touch no thread, lock or file of the parent's. */
  int owner_pid;
  bool forked;
  _Atomic int fork_noted;
  _Atomic uint64_t forked_records;
  /* wick_span_end of a span another thread began (it stays open there): said
   * on stderr the first time, counted, recorded (wick_span_end_foreign, the
   * first WICK_FOREIGN_END_RECORDS), on the terminal and said at finish. */
  _Atomic uint64_t foreign_ends;

  WickJsonlWriter *writer;
  WickLiveState *live_state; /* live storages, for the attach snapshot (wick-live-state.c) */
  char *program;
  char *entrypoint;
  char *run_id;

  struct
  {
    void *data;
    void (*destroy) (void *data);
    void (*finish) (void *data); /* wick_session_set_slot_finish */
  } slots[WICK_N_SLOTS];
};

/* Span ids a thread takes at once: enough span_starts (40 bytes) to fill more
 * than a chunk, so that the inline begin's limit for ids left
 * (wick_producer_update_limits) binds less often than the chunk's end. */
#define WICK_SPAN_ID_BLOCK 2048
_Static_assert(WICK_SPAN_ID_BLOCK * 40 > WICK_RING_CHUNK_BYTES, "an id block outlasts a chunk");

/* The name of a span begun without a name handle (see names_lost). */
#define WICK_NAME_NOT_RECORDED "(name not recorded: string arena full)"
void wick_session_report_names_lost (WickSession *session);


static inline uint64_t
wick_session_clock (WickSession *session)
{
  return wick_clock_now_ns () - session->start_ns;
}

#if WICK_CLOCK_HAS_TSC
/* wick_session_clock when wick_clock.use_tsc (the only case in which a
 * thread slot is installed): the same value, from the session's copy. */
static inline uint64_t
wick_session_tsc_clock (const WickSession *session)
{
  uint64_t ticks = __builtin_ia32_rdtsc ();
  return session->tsc_offset
         + (uint64_t)(((unsigned __int128)(ticks - session->tsc_base) * session->tsc_mult) >> 32);
}
#endif

/* Ring controls are WICK_RING_CONTROL_BYTES apart (not sizeof). */
static inline WickRingControl *
wick_session_control (WickSession *session, uint32_t index)
{
  return (WickRingControl *)(void *)((uint8_t *)session->controls
                                     + (uint64_t)index * WICK_RING_CONTROL_BYTES);
}

/* The calling thread's producer for session, claiming a ring on first use;
 * wick_producer_none when every ring is taken. */
WickProducer *wick_producer_get_slow (WickSession *session) __attribute__ ((cold));

typedef struct
{
  uint64_t serial;
  WickProducer *producer;
} WickProducerCache;

extern __thread WickProducerCache wick_producer_cache;

/* When no ring is free: fast_end 0 sends every record to the slow path,
 * which sees session NULL and counts the record as dropped. Never cached. */
extern WickProducer wick_producer_none;

/* Never NULL (wick_producer_none when every ring is taken). */
static inline WickProducer *
wick_producer_get (WickSession *session)
{
  if (__builtin_expect (wick_producer_cache.serial == session->serial, 1))
    return wick_producer_cache.producer;
  return wick_producer_get_slow (session);
}


/* The byte offset of the slot of the session's thread-pointer cache that
 * thread pointer tp hashes to: bits 12-17 of tp. glibc puts a thread's
 * pointer at the top of its stack, and the stacks of threads alive at once
 * are their size plus a guard page apart (8 MiB + 4 KiB by default), so those
 * bits differ from one thread to the next (a multiplicative hash of the whole
 * pointer sent 6 of 13 threads to a taken slot); a thread whose slot is taken
 * takes the TLS path. */
static inline uint64_t
wick_thread_slot_offset (uintptr_t tp)
{
  _Static_assert (sizeof (WickThreadSlot) == 16 && WICK_THREAD_SLOTS == 64, "slot offset");
  return ((uint64_t)tp >> 8) & 0x3f0;
}

static inline WickThreadSlot *
wick_thread_slot_mine (WickSession *session, uintptr_t tp)
{
  return (WickThreadSlot *)(void *)((uint8_t *)session->thread_slots
                                    + wick_thread_slot_offset (tp));
}

/* This thread's producer for session from the thread-pointer cache: true
 * with *producer set when the slot is this thread's; false when it has none
 * there (then wick_producer_get, which installs it). A slot whose tp is this
 * thread's always has its producer (written by this thread before any read),
 * and slots are installed only on the TSC clock, so a producer found here may
 * use wick_session_tsc_clock. */
static inline __attribute__ ((always_inline)) bool
wick_producer_fast_get (WickSession *session, WickProducer **producer)
{
  uintptr_t tp = (uintptr_t)__builtin_thread_pointer ();
  uint64_t offset = wick_thread_slot_offset (tp);
  /* the two loads indexed from session itself (no slot address computed) */
  uint8_t *slots = (uint8_t *)session + offsetof (WickSession, thread_slots);
  WickThreadSlot *slot = (WickThreadSlot *)(void *)(slots + offset);
  *producer = slot->producer;
  /* a plain read (x86: any aligned 8-byte load is atomic), so that the
   * compare takes it as its memory operand */
  uintptr_t owner;
  memcpy (&owner, (const void *)&slot->tp, sizeof owner);
  return __builtin_expect (owner == tp, 1);
}

/* WickThreadHandle (wick/wick-thread-handle.h): the session's clock and the slow paths in
 * a producer (at claim), the session's stand-in for a thread with no ring,
 * and the slow paths themselves (wick-session-spans.c). */
void wick_producer_init_unclaimed (WickSession *session);
WickSpanId wick_thread_begin_slow (WickThreadHandle *thread, uint64_t word) __attribute__ ((cold));
bool wick_thread_end_slow (WickThreadHandle *thread, WickSpanId span, WickError *error)
  __attribute__ ((cold));

/* Installs producer (this thread's, never wick_producer_none) in its slot
 * when the slot is free and the clock is the TSC; a slot another live thread
 * holds stays its. */
void wick_thread_slot_install (WickSession *session, WickProducer *producer);
/* Clears the calling thread's slot (it exits) / every slot (after fork). */
void wick_thread_slots_clear (WickSession *session);

/* The write position is the ring's commit word itself (the producer's own
 * cache line): no private copy to keep in step. */
static inline uint64_t
wick_producer_head (const WickProducer *producer)
{
  return atomic_load_explicit (&producer->control->commit, memory_order_relaxed);
}

static inline void
wick_producer_set_head (WickProducer *producer, uint64_t head)
{
  atomic_store_explicit (&producer->control->commit, head, memory_order_release);
}

void *wick_producer_reserve_slow (WickProducer *producer, uint64_t size) __attribute__ ((cold));
void *wick_producer_reserve_wait (WickProducer *producer, uint64_t size, uint64_t timeout_ns);
void *wick_producer_reserve_end (WickProducer *producer, uint64_t size);

/* Kept free below the hold limit for span ends: a 48-byte end and at most 48
 * bytes of chunk padding for each of the WICK_RING_MAX_DEPTH spans that can be
 * open (wick-ring-producer.c, space_for_full). */
#define WICK_END_RESERVE_BYTES ((uint64_t)WICK_RING_MAX_DEPTH * 2 * sizeof (WickSpanEndRecord))

/* Space for a record of size bytes (multiple of 8, <= WICK_RING_MAX_RECORD),
 * or NULL when it was dropped (counted). */
static inline void *
wick_producer_reserve (WickProducer *producer, uint64_t size)
{
  uint64_t head = wick_producer_head (producer);
  if (__builtin_expect (head + size <= producer->fast_end, 1))
    {
      atomic_thread_fence (memory_order_release);
      return producer->data + (head & producer->mask);
    }
  return wick_producer_reserve_slow (producer, size);
}

static inline void
wick_producer_commit (WickProducer *producer, void *record, uint64_t size, uint8_t kind)
{
  WickRecordHeader *header = record;
  header->words = (uint16_t)(size / 8);
  header->kind = kind;
  header->version = 1;
  header->seq = producer->seq++;
  wick_producer_set_head (producer, wick_producer_head (producer) + size);
}

/* depth_gen's generation moves on every push (and every reorder of the
 * stack, stack_raise), the only writes of an entry below a later depth; a
 * pop only lowers the depth, which a reader's second read sees all the same
 * (one instruction a span_end: no 33-bit constant). */
#define WICK_DEPTH_PUSH ((UINT64_C (1) << 32) + 1)
#define WICK_DEPTH_POP UINT64_MAX /* - 1 */

static inline uint32_t
wick_producer_depth (const WickProducer *producer)
{
  return (uint32_t)atomic_load_explicit (&producer->control->depth_gen, memory_order_relaxed);
}

/* Publishes the open-span stack depth after a push or pop (seqlock word). */
static inline void
wick_producer_publish_depth (WickProducer *producer, uint64_t delta)
{
  uint64_t depth_gen = atomic_load_explicit (&producer->control->depth_gen, memory_order_relaxed);
  atomic_store_explicit (&producer->control->depth_gen, depth_gen + delta, memory_order_release);
}

/* Records, off the hot path (wick-session-records.c). */
#define WICK_FOREIGN_END_RECORDS 64
/* A wick_span_end_foreign record: span @span, begun on @owner, ended on
 * @thread, the @count-th such end (written from the ending thread). */
void wick_session_write_foreign_end (WickSession *session, WickSpanId span, uint32_t owner,
                                     uint32_t thread, uint64_t count);
bool wick_session_write_terminal (WickSession *session, bool complete, uint64_t timestamp_ns,
                                  const char *reason, WickError *error);
bool wick_session_write_span_end_root (WickSession *session, uint64_t duration_ns,
                                       WickError *error);

/* Producers (wick-ring-producer.c). */
bool wick_ring_create (WickSession *session, size_t ring_bytes, size_t max_threads,
                       size_t arena_bytes, WickError *error);
void wick_ring_destroy (WickSession *session);
bool wick_ring_set_meta (WickSession *session, const char *line, size_t length, WickError *error);
bool wick_session_register_live (WickSession *session);
void wick_producer_forget_session (WickSession *session);
/* The atfork child handler's work on one session (wick-session.c); and the
 * count (with a line on stderr the first time) of a record a forked child
 * does not write. */
void wick_session_after_fork_child (WickSession *session);
void wick_session_note_forked_record (WickSession *session);
uint64_t wick_ring_total_dropped (WickSession *session);
size_t wick_ring_open_spans (WickSession *session);

/* Interning (wick-intern.c). */
WickInternTable *wick_intern_table_new (uint64_t arena_capacity);
void wick_intern_table_free (WickInternTable *table);
/* Lock-free lookup; returns 0 when absent. */
WickString wick_intern_lookup (WickSession *session, const char *string, size_t length,
                               uint32_t hash);
uint32_t wick_intern_hash (const char *string, size_t length);

/* Live storages for the attach snapshot (wick-live-state.c). note_memory
 * resolves a WICK_NOW timestamp (under the table's lock) and updates the table. */
WickLiveState *wick_live_state_new (void);
void wick_live_state_free (WickLiveState *state);
void wick_live_state_note_memory (WickSession *session, WickMemoryRecord *memory);

/* Slots (wick-session-slots.c). */
void wick_session_destroy_slots (WickSession *session);

/* A hold reader whose positions live in the session's private memory (the
 * JSONL writer): nothing another process maps can move them. */
WickRingReader *wick_ring_reader_new_private_hold (WickSession *session, WickError *error);

static inline _Atomic uint64_t *
wick_cursor_tail (WickRingCursors *cursors, uint32_t ring, int slot)
{
  return (_Atomic uint64_t *)(void *)((uint8_t *)cursors + WICK_CURSORS_HEADER_BYTES
                                      + ((uint64_t)ring * WICK_RING_MAX_HOLDERS + (uint64_t)slot)
                                          * 8);
}

/* Writer (wick-jsonl-writer.c). */
WickJsonlWriter *wick_jsonl_writer_start (WickSession *session, const char *path, WickError *error);
/* Drains everything committed so far into the file and flushes it. */
bool wick_jsonl_writer_sync (WickJsonlWriter *writer, WickError *error);
void wick_jsonl_writer_stop (WickJsonlWriter *writer);
