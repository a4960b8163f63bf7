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

/* Off the hot path: a Wick-only record (kind must start with "wick_") whose
 * fields are given as the inside of a JSON object, e.g. "\"stage\":\"a\",\"ok\":true".
 * The writer emits {"kind":KIND,"timestamp_ns":T,FIELDS} unless the session is strict. */
bool wick_session_record_extension (WickSession *session, const char *kind,
                                    const char *json_fields, WickError *error);
