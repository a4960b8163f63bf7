/* wick-thread-handle.h — spans on a thread handle: the span hot path inlined into
 * the caller.
 *
 * wick_span_begin_interned (session, …) finds the calling thread's ring from
 * the session on every call (its thread pointer hashed into a table), and is
 * a call into libwick. A thread that records many spans can instead ask once
 * for its handle, WickThreadHandle, and pass it to the static inline calls below,
 * which write the span records into the thread's ring in the caller's own
 * code and call into libwick only on a slow path (a chunk boundary, a full
 * ring, an id block used up, nesting deeper than 128, a name handle 0, the
 * CLOCK_MONOTONIC clock, a forked child). The records, ids, seq and the
 * published open-span stack are exactly those of the session calls
 * (docs/ring.md); the two kinds of call may be mixed on one thread.
 *
 *   WickThreadHandle *thread = wick_thread_handle_get (session);     once per thread
 *   WickSpanId span = wick_span_begin_on (thread, name, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
 *   wick_span_end_on (thread, span);
 *
 * A handle belongs to the thread that got it and to its session: use it only
 * on that thread, while it lives and while the session is open (a handle is
 * not a lock: another thread's handle would write that thread's ring at the
 * same time as it). wick_thread_handle_get is cheap after a thread's first call
 * (a thread-local lookup); it never returns NULL for an open session: when
 * every ring is taken its handle counts what it cannot record, as the session
 * calls do.
 *
 * ABI: the fields of WickThreadHandle are libwick's, read and written only by the
 * inline calls of this header; their layout is part of libwick 1.0, so code
 * compiled against this header keeps working with a later libwick. A libwick
 * that needs another layout keeps both limits at 0, and every inline call then
 * takes the function pointers (which stay).
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

WICK_BEGIN_DECLS

typedef struct WickThreadHandle WickThreadHandle;

struct WickThreadHandle
{
  /* The ring control of the thread's ring (commit at byte 0, depth_gen at
   * 64, the open-span stack at 192, 32 bytes an entry, with the root's entry
   * below it) and the ring's data. */
  uint8_t *_wick_control;
  uint8_t *_wick_data;
  uint64_t _wick_mask;
  /* commit + record size <= limit: the record fits with no other check (0:
   * every call takes the slow path). The begin limit also leaves one
   * span_start of room for each span id left in the thread's block. */
  uint64_t _wick_begin_limit;
  uint64_t _wick_end_limit;
  uint64_t _wick_seq_word; /* the next record's seq << 32 */
  uint64_t _wick_next_id;
  /* The session clock: offset + ((rdtsc - base) * mult >> 32). */
  uint64_t _wick_tsc_base;
  uint64_t _wick_tsc_mult;
  uint64_t _wick_tsc_offset;
  /* The slow paths, in the libwick that made the handle (so that the inline
   * calls work as well on a libwick that was dlopen()ed). error NULL: as
   * wick_span_end; else as wick_span_end_checked. */
  WickSpanId (*_wick_begin_slow) (WickThreadHandle *thread, uint64_t word);
  bool (*_wick_end_slow) (WickThreadHandle *thread, WickSpanId span, WickError *error);
  uint64_t _wick_reserved[4];
};

/* The calling thread's handle in session (it claims the thread's ring if the
 * thread has none yet). */
WICK_AVAILABLE_IN_1_0
WickThreadHandle *wick_thread_handle_get (WickSession *session);

#define _WICK_CONTROL_DEPTH_GEN 64
#define _WICK_CONTROL_STACK 192
#define _WICK_MAX_DEPTH 128
#define _WICK_SPAN_START_BYTES 40
#define _WICK_SPAN_END_BYTES 48
/* record headers: {u16 words, u8 kind, u8 version 1} | seq << 32 */
#define _WICK_SPAN_START_HEADER UINT64_C (0x1010005)
#define _WICK_SPAN_END_HEADER UINT64_C (0x1020006)
#define _WICK_DEPTH_PUSH ((UINT64_C (1) << 32) + 1) /* depth + 1, generation + 1 */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define _WICK_INLINE_SPANS 1

static inline void
_wick_store (uint8_t *where, uint64_t value)
{
  __builtin_memcpy (where, &value, 8);
}

static inline uint64_t
_wick_load (const uint8_t *where)
{
  uint64_t value;
  __builtin_memcpy (&value, where, 8);
  return value;
}

/* The seq's half of _wick_seq_word, counted with one add to memory. */
typedef uint32_t __attribute__ ((__may_alias__)) _WickSeq;

static inline void
_wick_count_record (WickThreadHandle *thread)
{
  ((_WickSeq *)(void *)&thread->_wick_seq_word)[1]++;
}

/* _wick_seq_word read as the 32-bit word that _wick_count_record adds to: a
 * 64-bit load after that 32-bit store would be wider than it, which x86
 * does not forward from the store buffer (the load waits for the store to
 * reach the cache), twice a span. */
static inline uint64_t
_wick_seq_word (const WickThreadHandle *thread)
{
  return (uint64_t)((const _WickSeq *)(const void *)&thread->_wick_seq_word)[1] << 32;
}

static inline uint64_t
_wick_thread_now (const WickThreadHandle *thread)
{
  __extension__ typedef unsigned __int128 _WickU128;
  uint64_t ticks = __builtin_ia32_rdtsc () - thread->_wick_tsc_base;
  return thread->_wick_tsc_offset + (uint64_t)(((_WickU128)ticks * thread->_wick_tsc_mult) >> 32);
}
#else
#define _WICK_INLINE_SPANS 0
#endif

/* wick_span_begin_step_interned on the calling thread's handle: the parent
 * is the innermost span open on this thread (s1 when none); 0 when the span
 * could not be recorded (counted, as there). */
static inline WickSpanId
wick_span_begin_on (WickThreadHandle *thread, WickString name, WickSpanKind kind, WickStep step)
{
  uint64_t word = (uint64_t)name | (uint64_t)(uint8_t)kind << 32 | (uint64_t)(uint8_t)step << 40;
#if _WICK_INLINE_SPANS
  uint8_t *control = thread->_wick_control;
  uint64_t head = __atomic_load_n ((uint64_t *)(void *)control, __ATOMIC_RELAXED);
  uint64_t depth_gen
    = __atomic_load_n ((uint64_t *)(void *)(control + _WICK_CONTROL_DEPTH_GEN), __ATOMIC_RELAXED);
  if (__builtin_expect (head + _WICK_SPAN_START_BYTES > thread->_wick_begin_limit
                          || (uint32_t)depth_gen >= _WICK_MAX_DEPTH || name == 0,
                        0))
    return thread->_wick_begin_slow (thread, word);
  uint64_t now = _wick_thread_now (thread);
  uint64_t header = _wick_seq_word (thread) | _WICK_SPAN_START_HEADER;
  WickSpanId id = thread->_wick_next_id;
  uint8_t *record = thread->_wick_data + (head & thread->_wick_mask);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  _wick_store (record, header);
  _wick_store (record + 8, id);
  _wick_store (record + 24, word);
  _wick_store (record + 32, now);
  _wick_count_record (thread);
  thread->_wick_next_id++;
  /* entry depth's place; the entry below it is the parent's (the root's
   * below entry 0) */
  uint8_t *entries = control + (uint64_t)(uint32_t)depth_gen * 32;
  uint64_t parent = _wick_load (entries + _WICK_CONTROL_STACK - 32);
  _wick_store (record + 16, parent);
  _wick_store (entries + _WICK_CONTROL_STACK, id);
  _wick_store (entries + _WICK_CONTROL_STACK + 8, parent);
  _wick_store (entries + _WICK_CONTROL_STACK + 16, word);
  _wick_store (entries + _WICK_CONTROL_STACK + 24, now);
  __atomic_store_n ((uint64_t *)(void *)control, head + _WICK_SPAN_START_BYTES, __ATOMIC_RELEASE);
  __atomic_store_n ((uint64_t *)(void *)(control + _WICK_CONTROL_DEPTH_GEN),
                    depth_gen + _WICK_DEPTH_PUSH, __ATOMIC_RELEASE);
  return id;
#else
  return thread->_wick_begin_slow (thread, word);
#endif
}

static inline bool
_wick_span_end_on (WickThreadHandle *thread, WickSpanId span, WickError *error)
{
#if _WICK_INLINE_SPANS
  uint8_t *control = thread->_wick_control;
  uint64_t head = __atomic_load_n ((uint64_t *)(void *)control, __ATOMIC_RELAXED);
  uint64_t depth_gen
    = __atomic_load_n ((uint64_t *)(void *)(control + _WICK_CONTROL_DEPTH_GEN), __ATOMIC_RELAXED);
  /* the innermost open span's entry is the one below depth's place */
  const uint8_t *entries = control + (uint64_t)(uint32_t)depth_gen * 32;
  const uint8_t *entry = entries + _WICK_CONTROL_STACK - 32;
  if (__builtin_expect ((uint32_t)depth_gen == 0 || _wick_load (entry) != span
                          || head + _WICK_SPAN_END_BYTES > thread->_wick_end_limit,
                        0))
    return thread->_wick_end_slow (thread, span, error);
  uint64_t now = _wick_thread_now (thread);
  uint64_t header = _wick_seq_word (thread) | _WICK_SPAN_END_HEADER;
  uint8_t *record = thread->_wick_data + (head & thread->_wick_mask);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  _wick_store (record, header);
  _wick_count_record (thread);
  _wick_store (record + 8, span);
  _wick_store (record + 16, _wick_load (entry + 8));
  _wick_store (record + 24, _wick_load (entry + 16));
  uint64_t start = _wick_load (entry + 24);
  _wick_store (record + 32, start);
  if (__builtin_expect (now < start, 0)) /* another core's TSC behind */
    now = start;
  _wick_store (record + 40, now - start);
  __atomic_store_n ((uint64_t *)(void *)control, head + _WICK_SPAN_END_BYTES, __ATOMIC_RELEASE);
  __atomic_store_n ((uint64_t *)(void *)(control + _WICK_CONTROL_DEPTH_GEN), depth_gen - 1,
                    __ATOMIC_RELEASE);
  return true;
#else
  return thread->_wick_end_slow (thread, span, error);
#endif
}

/* wick_span_end on the calling thread's handle (the same results). */
static inline bool
wick_span_end_on (WickThreadHandle *thread, WickSpanId span)
{
  return _wick_span_end_on (thread, span, (WickError *)0);
}

/* wick_span_end_checked on the calling thread's handle: the reason on false
 * (wrong thread, not open, 0) in error, never on stderr. error must not be
 * NULL. */
static inline bool
wick_span_end_checked_on (WickThreadHandle *thread, WickSpanId span, WickError *error)
{
  return _wick_span_end_on (thread, span, error);
}

WICK_END_DECLS
