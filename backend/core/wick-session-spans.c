/* wick-session-spans.c — the hot path: span begin and end.
 *
 * A span begin is: the thread's producer (one TLS compare), a clock read, an
 * id from the thread's block, a 40-byte span_start record and the same 32
 * bytes pushed on the thread's published open-span stack; an end is the
 * matching 48-byte span_end record and a pop. No lock, no allocation, no
 * system call; only refilling the id block (every 256 spans, one atomic add)
 * and a full ring leave the fast path.
 */
#include "wick-session-internal.h"

#include <stdio.h>

/* Not vectorised: gcc's SLP pass builds the records' words in vector
 * registers (movq, movhps, punpcklqdq), more instructions a span than the
 * scalar loads and stores they replace. */
#pragma GCC optimize ("no-tree-slp-vectorize")

/* The span payload's third word: name, kind, step, measured (little endian,
 * the layout of WickSpanPayload), stored at once. */
static inline uint64_t
span_word (WickString name, WickSpanKind kind, WickStep step, bool measured)
{
  return (uint64_t)name | (uint64_t)(uint8_t)kind << 32 | (uint64_t)(uint8_t)step << 40
         | (uint64_t)measured << 48;
}

/* A record header word from the producer's seq_word (seq << 32). */
static inline uint64_t
record_header_word (uint64_t size, uint8_t kind, uint64_t seq_word)
{
  return seq_word | size / 8 | (uint64_t)kind << 16 | UINT64_C (1) << 24;
}

static inline void
store_u64 (void *where, uint64_t value)
{
  memcpy (where, &value, 8);
}

static inline uint64_t
load_u64 (const void *where)
{
  uint64_t value;
  memcpy (&value, where, 8);
  return value;
}

/* The stores of a span_start: the record at head and the same 32 bytes on
 * the published stack, then commit and depth. Everything is read into locals
 * first: with -fno-strict-aliasing the record's stores would otherwise force
 * the producer's fields to be reloaded. */
/* The producer's seq_word read as the 32-bit seq that producer->seq++ adds
 * to: a 64-bit load after that 32-bit store would be wider than it, which
 * x86 does not forward from the store buffer (the load waits until the
 * store reaches the cache), twice a span. */
static inline uint64_t
producer_seq_word (const WickProducer *producer)
{
  return (uint64_t)producer->seq << 32;
}

static inline __attribute__ ((always_inline)) WickSpanId
span_start_store (WickProducer *producer, uint64_t head, uint64_t depth_gen, uint64_t parent,
                  uint64_t word, uint64_t now)
{
  uint64_t seq_word = producer_seq_word (producer);
  WickSpanId id = producer->next_id;
  WickRingControl *control = producer->control;
  uint8_t *record = producer->data + (head & producer->mask);
  atomic_thread_fence (memory_order_release);
  /* In an order that keeps few values live at once (no callee-saved
   * register to push): the record but its parent, then the stack entry;
   * the counts as adds to memory, no register for the new values. */
  store_u64 (record, record_header_word (sizeof (WickSpanStartRecord), WICK_KIND_SPAN_START, seq_word));
  store_u64 (record + 8, id);
  store_u64 (record + 24, word);
  store_u64 (record + 32, now);
  producer->seq++;
  producer->next_id++;
  uint32_t depth = (uint32_t)depth_gen;
  uint8_t *entry = (uint8_t *)control + offsetof (WickRingControl, stack)
                   + (uint64_t)depth * sizeof (WickSpanPayload);
  if (parent == 0) /* the id of the entry below entry (below_stack's is the root's) */
    parent = load_u64 (entry - sizeof (WickSpanPayload));
  store_u64 (record + 16, parent);
  store_u64 (entry, id);
  store_u64 (entry + 8, parent);
  store_u64 (entry + 16, word);
  store_u64 (entry + 24, now);
  atomic_store_explicit (&control->commit, head + sizeof (WickSpanStartRecord),
                         memory_order_release);
  atomic_store_explicit (&control->depth_gen, depth_gen + WICK_DEPTH_PUSH, memory_order_release);
  return id;
}

/* A new block of span ids (higher than every id this thread took before, so
 * ids still increase within the thread; what was left of the old block is
 * not used). */
static void
refill_ids (WickSession *session, WickProducer *producer)
{
  producer->next_id
    = atomic_fetch_add_explicit (&session->next_id_block, WICK_SPAN_ID_BLOCK, memory_order_relaxed);
  producer->id_end = producer->next_id + WICK_SPAN_ID_BLOCK;
  wick_producer_update_limits (producer);
}

static __attribute__ ((noinline, cold)) WickSpanId
span_begin_slow (WickSession *session, WickProducer *producer, uint64_t parent, uint64_t word,
                 uint64_t now)
{
  if (producer->session == NULL)
    {
      atomic_fetch_add (&session->header->unclaimed_dropped, 1);
      return 0;
    }
  if (wick_producer_depth (producer) >= WICK_RING_MAX_DEPTH)
    {
      /* not recorded, and counted as a drop like a full ring's */
      atomic_fetch_add (&session->header->unclaimed_dropped, 1);
      return 0;
    }
  if ((uint32_t)word == 0)
    {
      if (session->name_lost == 0)
        {
          atomic_fetch_add (&session->header->unclaimed_dropped, 1);
          return 0;
        }
      word |= session->name_lost;
      if (atomic_fetch_add (&session->names_lost, 1) == 0)
        fprintf (stderr,
                 "wick: a span with a name the string arena (%llu bytes) has no room for, or "
                 "with no name, is recorded as \"%s\"; raise "
                 "WickSessionOptions.string_arena_bytes, or use fewer distinct names\n",
                 (unsigned long long)session->header->arena_capacity, WICK_NAME_NOT_RECORDED);
    }
  if (producer->next_id == producer->id_end)
    refill_ids (session, producer);
  if (wick_producer_reserve (producer, sizeof (WickSpanStartRecord)) == NULL)
    return 0;
  return span_start_store (
    producer, wick_producer_head (producer),
    atomic_load_explicit (&producer->control->depth_gen, memory_order_relaxed), parent, word, now);
}

/* span_begin_slow for a producer from the thread-pointer cache (never
 * wick_producer_none): its session is its own, so the fast path need not keep
 * the session in a register past the clock read. */
static __attribute__ ((noinline, cold)) WickSpanId
span_begin_slow_own (WickProducer *producer, uint64_t parent, uint64_t word, uint64_t now)
{
  return span_begin_slow (producer->session, producer, parent, word, now);
}

/* parent 0: the innermost span open on this thread, else the root. session
 * NULL: the producer's own (a producer from the thread-pointer cache). */
static inline __attribute__ ((always_inline)) WickSpanId
span_begin_with (WickSession *session, WickProducer *producer, uint64_t now, WickSpanId parent,
                 uint64_t word)
{
  WickRingControl *control = producer->control;
  uint64_t head = atomic_load_explicit (&control->commit, memory_order_relaxed);
  uint64_t depth_gen = atomic_load_explicit (&control->depth_gen, memory_order_relaxed);
  if (__builtin_expect (head + sizeof (WickSpanStartRecord) > producer->fast_end
                          || (uint32_t)depth_gen >= WICK_RING_MAX_DEPTH || (uint32_t)word == 0
                          || producer->next_id == producer->id_end,
                        0))
    return session != NULL ? span_begin_slow (session, producer, parent, word, now)
                           : span_begin_slow_own (producer, parent, word, now);
  return span_start_store (producer, head, depth_gen, parent, word, now);
}

/* Any thread, any clock: the producer lookup may claim a ring. */
static __attribute__ ((noinline, cold)) WickSpanId
span_begin_general (WickSession *session, WickSpanId parent, uint64_t word)
{
  WickProducer *producer = wick_producer_get (session);
  wick_thread_slot_install (session, producer);
  return span_begin_with (session, producer, wick_session_clock (session), parent, word);
}

/* The fast path has no call that returns (only tail calls), so it needs no
 * stack frame: a thread that already has its ring, on the TSC clock. */
static inline __attribute__ ((always_inline)) WickSpanId
span_begin (WickSession *session, WickSpanId parent, WickString name, WickSpanKind kind,
            WickStep step, bool measured)
{
  uint64_t word = span_word (name, kind, step, measured);
#if WICK_CLOCK_HAS_TSC
  WickProducer *producer;
  if (wick_producer_fast_get (session, &producer))
    return span_begin_with (NULL, producer, wick_session_tsc_clock (session), parent, word);
#endif
  return span_begin_general (session, parent, word);
}

/* The stores of a span_end for the innermost span, @id, whose stack entry
 * (index depth - 1) is at @entry. */
static inline __attribute__ ((always_inline)) void
span_end_store (WickProducer *producer, WickRingControl *control, uint64_t head,
                uint64_t depth_gen, const uint8_t *entry, uint64_t id, uint64_t now)
{
  uint8_t *record = producer->data + (head & producer->mask);
  atomic_thread_fence (memory_order_release);
  /* each word loaded just before its store: with -fno-strict-aliasing the
   * loads cannot pass the stores, so loading them all first keeps them all
   * in registers at once (and the function pushes callee-saved ones); the
   * header last, once the entry's pointer is no longer needed, so that the
   * seq has a free register, and the count after it as an add to memory */
  store_u64 (record + 8, id);
  store_u64 (record + 16, load_u64 (entry + 8));
  store_u64 (record + 24, load_u64 (entry + 16));
  uint64_t start = load_u64 (entry + 24), duration;
  store_u64 (record + 32, start);
  if (__builtin_sub_overflow (now, start, &duration))
    duration = 0;
  store_u64 (record + 40, duration);
  store_u64 (record, record_header_word (sizeof (WickSpanEndRecord), WICK_KIND_SPAN_END,
                                         producer_seq_word (producer)));
  producer->seq++;
  atomic_store_explicit (&control->commit, head + sizeof (WickSpanEndRecord), memory_order_release);
  atomic_store_explicit (&control->depth_gen, depth_gen + WICK_DEPTH_POP, memory_order_release);
}

/* The entry below depth (only read when depth > 0). */
static inline const uint8_t *
stack_top (WickRingControl *control, uint64_t depth_gen)
{
  return (const uint8_t *)control + offsetof (WickRingControl, stack)
         + (uint64_t)(uint32_t)depth_gen * sizeof (WickSpanPayload) - sizeof (WickSpanPayload);
}

/* Ends a span that is not the innermost one: moves it to the top of the
 * stack first (each step republished), then ends it as usual. */
static void
stack_raise (WickProducer *producer, uint32_t index)
{
  WickSpanPayload *stack = producer->control->stack;
  uint32_t depth = wick_producer_depth (producer);
  WickSpanPayload span = stack[index];
  wick_producer_publish_depth (producer, (UINT64_C (1) << 32) - (depth - index));
  atomic_thread_fence (memory_order_release);
  for (uint32_t i = index; i + 1 < depth; i++)
    stack[i] = stack[i + 1];
  stack[depth - 1] = span;
  wick_producer_publish_depth (producer, (UINT64_C (1) << 32) + (depth - index));
}

/* The thread number of the ring whose open-span stack holds span, other than
 * this producer's (0: none). The other rings' stacks are read while their
 * threads run: good enough to word a message, never used for a record. */
static uint32_t
span_owner_elsewhere (WickSession *session, const WickProducer *producer, WickSpanId span)
{
  uint32_t n = atomic_load (&session->header->rings_in_use);
  for (uint32_t i = 0; i < n && i < session->n_rings; i++)
    {
      WickRingControl *control = wick_session_control (session, i);
      if (control == producer->control)
        continue;
      uint32_t depth = (uint32_t)atomic_load_explicit (&control->depth_gen, memory_order_acquire);
      for (uint32_t d = 0; d < depth && d < WICK_RING_MAX_DEPTH; d++)
        if (control->stack[d].id == span)
          return atomic_load (&control->thread_number);
    }
  return 0;
}

/* A span this thread does not have open: ended twice, or begun on another
 * thread. The latter is an error: counted (wick_session_get_foreign_span_ends,
 * the terminal's "wick_span_ends_foreign"), recorded (a wick_span_end_foreign
 * record, the first WICK_FOREIGN_END_RECORDS times), said on stderr the first
 * time unless the caller reads it (wick_span_end_checked), and the sentence
 * put in @error. Returns the thread that began it, 0 when none has it open. */
static __attribute__ ((noinline, cold)) uint32_t
span_end_not_open (WickSession *session, WickProducer *producer, WickSpanId span, bool quiet,
                   WickError *error)
{
  if (session->forked || producer->session == NULL)
    return 0;
  uint32_t owner = span_owner_elsewhere (session, producer, span);
  if (owner == 0)
    return 0;
  uint64_t count = atomic_fetch_add (&session->foreign_ends, 1) + 1;
  char sentence[256];
  snprintf (sentence, sizeof sentence,
            "span s%llu was begun on wick thread %u and cannot be ended on wick thread %u: a "
            "span ends on the thread that began it (it stays open there)",
            (unsigned long long)span, owner, producer->thread);
  if (count == 1 && !quiet)
    fprintf (stderr, "wick: %s; wick_span_end returned false\n", sentence);
  if (count <= WICK_FOREIGN_END_RECORDS)
    wick_session_write_foreign_end (session, span, owner, producer->thread, count);
  wick_set_error (error, WICK_ERROR_WRONG_THREAD, "%s", sentence);
  return owner;
}

static __attribute__ ((noinline, cold)) bool
span_end_slow (WickSession *session, WickProducer *producer, WickSpanId span, uint64_t now)
{
  uint32_t depth = wick_producer_depth (producer);
  if (span == 0)
    return false;
  if (depth == 0)
    {
      span_end_not_open (session, producer, span, false, NULL);
      return false;
    }
  WickSpanPayload *stack = producer->control->stack;
  uint32_t index = depth - 1;
  while (index > 0 && stack[index].id != span)
    index--;
  if (stack[index].id != span)
    {
      span_end_not_open (session, producer, span, false, NULL);
      return false;
    }
  if (index != depth - 1)
    stack_raise (producer, index);
  if (wick_producer_reserve_end (producer, sizeof (WickSpanEndRecord)) != NULL)
    {
      WickRingControl *control = producer->control;
      uint64_t depth_gen = atomic_load_explicit (&control->depth_gen, memory_order_relaxed);
      span_end_store (producer, control, wick_producer_head (producer), depth_gen,
                      stack_top (control, depth_gen), span, now);
    }
  else
    wick_producer_publish_depth (producer, WICK_DEPTH_POP); /* its end was dropped: pop only */
  return true;
}

static inline __attribute__ ((always_inline)) bool
span_end_with (WickSession *session, WickProducer *producer, WickSpanId span, uint64_t now)
{
  WickRingControl *control = producer->control;
  uint64_t head = atomic_load_explicit (&control->commit, memory_order_relaxed);
  uint64_t depth_gen = atomic_load_explicit (&control->depth_gen, memory_order_relaxed);
  const uint8_t *entry = stack_top (control, depth_gen);
  if (__builtin_expect ((uint32_t)depth_gen == 0 || load_u64 (entry) != span
                          || head + sizeof (WickSpanEndRecord) > producer->fast_end,
                        0))
    return span_end_slow (session, producer, span, now);
  span_end_store (producer, control, head, depth_gen, entry, span, now);
  return true;
}

static __attribute__ ((noinline, cold)) bool
span_end_general (WickSession *session, WickSpanId span)
{
  WickProducer *producer = wick_producer_get (session);
  wick_thread_slot_install (session, producer);
  return span_end_with (session, producer, span, wick_session_clock (session));
}

bool
wick_span_end (WickSession *session, WickSpanId span)
{
#if WICK_CLOCK_HAS_TSC
  WickProducer *producer;
  if (wick_producer_fast_get (session, &producer))
    return span_end_with (session, producer, span, wick_session_tsc_clock (session));
#endif
  return span_end_general (session, span);
}

bool
wick_span_end_checked (WickSession *session, WickSpanId span, WickError *error)
{
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_span_end_checked: no session");
      return false;
    }
  if (span == 0)
    {
      wick_set_error (error, WICK_ERROR_DROPPED,
                      "span 0: its begin was not recorded (dropped or too deep); nothing to end");
      return false;
    }
  WickProducer *producer = wick_producer_get (session);
  wick_thread_slot_install (session, producer);
  uint32_t depth = wick_producer_depth (producer);
  const WickSpanPayload *stack = producer->control->stack;
  for (uint32_t i = depth; i > 0; i--)
    if (stack[i - 1].id == span)
      return span_end_with (session, producer, span, wick_session_clock (session));
  if (span_end_not_open (session, producer, span, true, error) != 0)
    return false;
  wick_set_error (error, WICK_ERROR_NOT_FOUND,
                  "span s%llu is not open on any thread (ended already, or not begun in this "
                  "session)",
                  (unsigned long long)span);
  return false;
}

/* ---------------------------------------------------------------------------
 * WickThreadHandle (wick/wick-thread-handle.h): the inline calls' slow paths are the
 * session calls' general paths, which find the thread's own producer again;
 * then the handle's limits are set again when it is that producer.
 */

WickThreadHandle *
wick_thread_handle_get (WickSession *session)
{
  if (session == NULL)
    return NULL;
  WickProducer *producer = wick_producer_get (session);
  if (producer == &wick_producer_none || producer->session != session)
    return (WickThreadHandle *)(void *)&session->unclaimed;
  wick_thread_slot_install (session, producer);
  return (WickThreadHandle *)(void *)producer;
}

static bool
thread_is_mine (WickSession *session, WickProducer *producer)
{
  return producer != &session->unclaimed && !session->forked
         && wick_producer_get (session) == producer;
}

static void
thread_limits_again (WickSession *session, WickProducer *producer)
{
  if (thread_is_mine (session, producer))
    wick_producer_update_limits (producer);
}

WickSpanId
wick_thread_begin_slow (WickThreadHandle *thread, uint64_t word)
{
  WickProducer *producer = (WickProducer *)(void *)thread;
  WickSession *session = producer->session;
  /* Sent here by the ids left rather than by the ring: a new block now, so
   * that the next slow begin is the ring's (a block's span_starts fill more
   * than a chunk), not one every few dozen spans as the ids run down. */
  if (producer->begin_limit < producer->end_limit /* limits live (TSC), the ids' lower */
      && wick_producer_head (producer) + sizeof (WickSpanStartRecord) > producer->begin_limit
      && thread_is_mine (session, producer))
    refill_ids (session, producer);
  WickSpanId id = span_begin_general (session, 0, word);
  thread_limits_again (session, producer);
  return id;
}

bool
wick_thread_end_slow (WickThreadHandle *thread, WickSpanId span, WickError *error)
{
  WickProducer *producer = (WickProducer *)(void *)thread;
  WickSession *session = producer->session;
  bool ended = error != NULL ? wick_span_end_checked (session, span, error)
                             : span_end_general (session, span);
  thread_limits_again (session, producer);
  return ended;
}

uint64_t
wick_session_get_foreign_span_ends (WickSession *session)
{
  return session != NULL ? atomic_load (&session->foreign_ends) : 0;
}

bool
wick_span_end_timed (WickSession *session, WickSpanId span, uint64_t *duration_ns)
{
  WickProducer *producer = wick_producer_get (session);
  uint64_t now = wick_session_clock (session);
  uint32_t depth = wick_producer_depth (producer);
  const WickSpanPayload *stack = producer->control->stack;
  uint32_t index = depth;
  while (index > 0 && stack[index - 1].id != span)
    index--;
  if (span == 0 || index == 0)
    return false;
  uint64_t start = stack[index - 1].start_ns;
  if (duration_ns != NULL)
    *duration_ns = now > start ? now - start : 0;
  return span_end_slow (session, producer, span, now);
}

WickSpanId
wick_span_current (WickSession *session)
{
  WickProducer *producer = wick_producer_get (session);
  uint32_t depth = wick_producer_depth (producer);
  if (producer->session == NULL || depth == 0)
    return 1;
  return producer->control->stack[depth - 1].id;
}

static WickString
intern_fast (WickSession *session, const char *name)
{
  if (name == NULL)
    return 0;
  size_t length = strlen (name);
  WickString handle = wick_intern_lookup (session, name, length, wick_intern_hash (name, length));
  return handle != 0 ? handle : wick_intern (session, name);
}

WickSpanId
wick_span_begin_interned (WickSession *session, WickString name, WickSpanKind kind)
{
  return span_begin (session, 0, name, kind, WICK_STEP_NONE, false);
}

WickSpanId
wick_span_begin_step_interned (WickSession *session, WickString name, WickSpanKind kind,
                               WickStep step)
{
  return span_begin (session, 0, name, kind, step, false);
}

WickSpanId
wick_span_begin_child_interned (WickSession *session, WickSpanId parent, WickString name,
                                WickSpanKind kind, WickStep step)
{
  return span_begin (session, parent, name, kind, step, false);
}

WickSpanId
wick_span_begin (WickSession *session, const char *name, WickSpanKind kind)
{
  return span_begin (session, 0, intern_fast (session, name), kind, WICK_STEP_NONE, false);
}

WickSpanId
wick_span_begin_step (WickSession *session, const char *name, WickSpanKind kind, WickStep step)
{
  return span_begin (session, 0, intern_fast (session, name), kind, step, false);
}

WickSpanId
wick_span_begin_child (WickSession *session, WickSpanId parent, const char *name, WickSpanKind kind,
                       WickStep step)
{
  return span_begin (session, parent, intern_fast (session, name), kind, step, false);
}

WickSpanId
wick_measurement_begin (WickSession *session, const char *name, WickError *error)
{
  if (session == NULL || name == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_measurement_begin: session and name are required");
      return 0;
    }
  int expected = 0;
  if (!atomic_compare_exchange_strong (&session->measurement_begun, &expected, 1))
    {
      wick_set_error (error, WICK_ERROR_STATE, "the measured region was already begun; a session has exactly one");
      return 0;
    }
  WickString handle = intern_fast (session, name);
  if (handle == 0)
    {
      wick_set_error (error, WICK_ERROR_NO_SPACE, "the string arena is full; \"%s\" could not be interned", name);
      return 0;
    }
  WickSpanId id = span_begin (session, 0, handle, WICK_SPAN_FUNCTION, WICK_STEP_NONE, true);
  if (id == 0)
    wick_set_error (error, WICK_ERROR_DROPPED, "the measured span was dropped (ring full or nesting too deep)");
  return id;
}

void
wick_session_report_names_lost (WickSession *session)
{
  uint64_t foreign = atomic_load (&session->foreign_ends);
  if (foreign > 0)
    fprintf (stderr,
             "wick: %llu span end%s on a thread that did not begin the span; those spans "
             "stay open (a span ends on the thread that began it)\n",
             (unsigned long long)foreign, foreign == 1 ? " was" : "s were");
  uint64_t lost = atomic_load (&session->names_lost);
  if (lost > 0)
    fprintf (stderr,
             "wick: %llu span%s recorded as \"%s\": the string arena (%llu bytes) was full\n",
             (unsigned long long)lost, lost == 1 ? " was" : "s were", WICK_NAME_NOT_RECORDED,
             (unsigned long long)session->header->arena_capacity);
}
