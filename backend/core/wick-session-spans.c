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

static void
refill_span_ids (WickSession *session, WickProducer *producer)
{
  producer->next_id = atomic_fetch_add_explicit (&session->next_id_block, WICK_SPAN_ID_BLOCK,
                                                 memory_order_relaxed);
  producer->id_end = producer->next_id + WICK_SPAN_ID_BLOCK;
}

static inline WickSpanId
span_begin (WickSession *session, bool explicit_parent, WickSpanId parent, WickString name,
            WickSpanKind kind, WickStep step, bool measured)
{
  WickProducer *producer = wick_producer_get (session);
  if (__builtin_expect (producer == NULL, 0))
    {
      atomic_fetch_add (&session->unclaimed_drops, 1);
      return 0;
    }
  uint32_t depth = producer->depth;
  if (__builtin_expect (depth >= WICK_RING_MAX_DEPTH || name == 0, 0))
    return 0;
  if (__builtin_expect (producer->next_id == producer->id_end, 0))
    refill_span_ids (session, producer);
  uint64_t now = wick_session_clock (session);
  WickSpanStartRecord *record = wick_producer_reserve (producer, sizeof *record);
  if (__builtin_expect (record == NULL, 0))
    return 0;
  WickSpanPayload *entry = &producer->control->stack[depth];
  WickSpanId id = producer->next_id++;
  if (!explicit_parent)
    parent = depth > 0 ? entry[-1].id : 1;
  record->span.id = id;
  record->span.parent = parent;
  record->span.name = name;
  record->span.span_kind = (uint8_t) kind;
  record->span.step = (uint8_t) step;
  record->span.measured = measured;
  record->span.reserved = 0;
  record->span.start_ns = now;
  *entry = record->span;
  wick_producer_commit (producer, record, sizeof *record, WICK_KIND_SPAN_START);
  producer->depth = depth + 1;
  wick_producer_publish_depth (producer);
  return id;
}

/* Removes entry index from the published stack (an end that is not the innermost). */
static void
stack_remove (WickProducer *producer, uint32_t index)
{
  WickSpanPayload *stack = producer->control->stack;
  producer->depth--;
  wick_producer_publish_depth (producer);
  atomic_thread_fence (memory_order_release);
  for (uint32_t i = index; i < producer->depth; i++)
    stack[i] = stack[i + 1];
  wick_producer_publish_depth (producer);
}

bool
wick_span_end (WickSession *session, WickSpanId span)
{
  if (span == 0 || session == NULL)
    return false;
  WickProducer *producer = wick_producer_get (session);
  if (__builtin_expect (producer == NULL || producer->depth == 0, 0))
    return false;
  uint32_t index = producer->depth - 1;
  WickSpanPayload *stack = producer->control->stack;
  if (__builtin_expect (stack[index].id != span, 0))
    {
      while (index > 0 && stack[index].id != span)
        index--;
      if (stack[index].id != span)
        return false;
    }
  uint64_t now = wick_session_clock (session);
  WickSpanEndRecord *record = wick_producer_reserve (producer, sizeof *record);
  if (__builtin_expect (record != NULL, 1))
    {
      record->span = stack[index];
      record->duration_ns = now > record->span.start_ns ? now - record->span.start_ns : 0;
      wick_producer_commit (producer, record, sizeof *record, WICK_KIND_SPAN_END);
    }
  if (__builtin_expect (index == producer->depth - 1, 1))
    {
      producer->depth = index;
      wick_producer_publish_depth (producer);
    }
  else
    stack_remove (producer, index);
  return true;
}

WickSpanId
wick_span_current (WickSession *session)
{
  WickProducer *producer = wick_producer_get (session);
  if (producer == NULL || producer->depth == 0)
    return 1;
  return producer->control->stack[producer->depth - 1].id;
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
  return span_begin (session, false, 0, name, kind, WICK_STEP_NONE, false);
}

WickSpanId
wick_span_begin_step_interned (WickSession *session, WickString name, WickSpanKind kind,
                               WickStep step)
{
  return span_begin (session, false, 0, name, kind, step, false);
}

WickSpanId
wick_span_begin_child_interned (WickSession *session, WickSpanId parent, WickString name,
                                WickSpanKind kind, WickStep step)
{
  return span_begin (session, parent != 0, parent, name, kind, step, false);
}

WickSpanId
wick_span_begin (WickSession *session, const char *name, WickSpanKind kind)
{
  return span_begin (session, false, 0, intern_fast (session, name), kind, WICK_STEP_NONE,
                     false);
}

WickSpanId
wick_span_begin_step (WickSession *session, const char *name, WickSpanKind kind, WickStep step)
{
  return span_begin (session, false, 0, intern_fast (session, name), kind, step, false);
}

WickSpanId
wick_span_begin_child (WickSession *session, WickSpanId parent, const char *name,
                       WickSpanKind kind, WickStep step)
{
  return span_begin (session, parent != 0, parent, intern_fast (session, name), kind, step,
                     false);
}

WickSpanId
wick_measurement_begin (WickSession *session, const char *name, WickError *error)
{
  if (session == NULL || name == NULL)
    {
      wick_set_error (error, "wick_measurement_begin: session and name are required");
      return 0;
    }
  int expected = 0;
  if (!atomic_compare_exchange_strong (&session->measurement_begun, &expected, 1))
    {
      wick_set_error (error, "the measured region was already begun; a session has exactly one");
      return 0;
    }
  WickString handle = intern_fast (session, name);
  if (handle == 0)
    {
      wick_set_error (error, "the string arena is full; \"%s\" could not be interned", name);
      return 0;
    }
  WickSpanId id = span_begin (session, false, 0, handle, WICK_SPAN_FUNCTION, WICK_STEP_NONE, true);
  if (id == 0)
    wick_set_error (error, "the measured span was dropped (ring full or nesting too deep)");
  return id;
}
