/* wick-session-private.h — what other parts of libwick may use of a session.
 *
 * Extension slots let the live, weights and stages areas hang their state off
 * a session without the recording core knowing their types. A slot is set once
 * (before the session is shared with other threads) and freed by its owner's
 * destroy function when the session closes, in reverse slot order.
 */
#pragma once

#ifndef WICK_COMPILATION
#define WICK_COMPILATION
#endif
#include "wick/wick.h"

typedef enum
{
  WICK_SLOT_CONTROL,
  WICK_SLOT_WEIGHTS,
  WICK_SLOT_STAGES,
  WICK_N_SLOTS,
} WickSessionSlot;

void *wick_session_get_slot (WickSession *session, WickSessionSlot slot);
void wick_session_set_slot (WickSession *session, WickSessionSlot slot, void *data,
                            void (*destroy) (void *data));
/* Called by wick_session_finish (and _finish_failed) with the slot's data
 * while records can still be written, before the root ends: the weight store
 * frees its storages there, as wick.torch frees its tensors, so that the
 * trace's memory pairs up. In slot order, on the finishing thread. */
void wick_session_set_slot_finish (WickSession *session, WickSessionSlot slot,
                                   void (*finish) (void *data));
void wick_session_finish_slots (WickSession *session);

/* Off the hot path: a Wick-only record (kind must start with "wick_") whose
 * fields are given as the inside of a JSON object, e.g. "\"stage\":\"a\",\"ok\":true".
 * The writer emits {"kind":KIND,"timestamp_ns":T,FIELDS} unless the session is strict. */
bool wick_session_record_extension (WickSession *session, const char *kind,
                                    const char *json_fields, WickError *error);

/* The storages live now (allocated and not freed), for the attach snapshot
 * (docs/protocol.md). Calls func for each under the table's lock (keep it
 * short: the workload's memory records wait) with a WickMemoryRecord whose
 * action is alloc and whose timestamp is the allocation's. totals receives the
 * snapshot's own session time: every memory record stamped at or before it is
 * reflected, every later one is stamped after it. Returns the number of live
 * storages. */
typedef struct
{
  uint64_t timestamp_ns;
  size_t count;
  uint64_t bytes;
  bool incomplete; /* the table ran out of memory once: some storages are missing */
} WickLiveAllocationTotals;
typedef void (*WickLiveAllocationFunc) (const WickMemoryRecord *allocation, void *user_data);
size_t wick_session_foreach_live_allocation (WickSession *session, WickLiveAllocationFunc func,
                                             void *user_data, WickLiveAllocationTotals *totals);
