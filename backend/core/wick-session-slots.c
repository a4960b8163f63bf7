/* wick-session-slots.c — extension slots of a session (wick-session-private.h).
 *
 * A slot is published with release/acquire ordering, since the control thread
 * may look one up while the host registers stages or weights. Slots are destroyed
 * by wick_session_close in reverse slot order, before the ring goes away, so a
 * destroy function may still record.
 */
#include "wick-session-internal.h"

void *
wick_session_get_slot (WickSession *session, WickSessionSlot slot)
{
  if (session == NULL || (unsigned)slot >= WICK_N_SLOTS)
    return NULL;
  /* The control thread may look a slot up while the host is still filling it. */
  return __atomic_load_n (&session->slots[slot].data, __ATOMIC_ACQUIRE);
}

void
wick_session_set_slot (WickSession *session, WickSessionSlot slot, void *data,
                       void (*destroy) (void *data))
{
  if (session == NULL || (unsigned)slot >= WICK_N_SLOTS)
    return;
  if (session->slots[slot].destroy != NULL && session->slots[slot].data != NULL
      && session->slots[slot].data != data)
    session->slots[slot].destroy (session->slots[slot].data);
  session->slots[slot].destroy = destroy;
  __atomic_store_n (&session->slots[slot].data, data, __ATOMIC_RELEASE);
}

void
wick_session_set_slot_finish (WickSession *session, WickSessionSlot slot,
                              void (*finish) (void *data))
{
  if (session == NULL || (unsigned)slot >= WICK_N_SLOTS)
    return;
  session->slots[slot].finish = finish;
}

void
wick_session_finish_slots (WickSession *session)
{
  for (int slot = 0; slot < WICK_N_SLOTS; slot++)
    {
      void *data = wick_session_get_slot (session, (WickSessionSlot)slot);
      if (session->slots[slot].finish != NULL && data != NULL)
        session->slots[slot].finish (data);
    }
}

void
wick_session_destroy_slots (WickSession *session)
{
  for (int slot = WICK_N_SLOTS - 1; slot >= 0; slot--)
    {
      void *data = session->slots[slot].data;
      void (*destroy) (void *) = session->slots[slot].destroy;
      session->slots[slot].data = NULL;
      session->slots[slot].destroy = NULL;
      session->slots[slot].finish = NULL;
      if (destroy != NULL && data != NULL)
        destroy (data);
    }
}
