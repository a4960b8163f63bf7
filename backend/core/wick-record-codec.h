/* wick-record-codec.h — payloads of ring records (layout in wick-ring-layout.h).
 *
 * Variable records are a sequence of 8-byte cells: u64 and f64 values,
 * strings as { u32 length, bytes, NUL, zero padding to 8 } (length
 * 0xffffffff: absent optional string, 8 bytes), u64 arrays as { u64 count,
 * values }, string arrays as { u64 count, strings }. The encoder measures
 * (base NULL) or writes; the decoder checks every length against the record
 * and every string for its NUL and for embedded NULs, and never reads outside
 * [record, record + size).
 */
#pragma once

#include "wick-ring-layout.h"

#define WICK_INSIDE
#include "wick/wick-ring.h"
#undef WICK_INSIDE

typedef struct
{
  uint8_t *base; /* NULL: measure only */
  size_t pos;
} WickEncoder;

/* Encodes the payload of a variable record of the given kind from a
 * WickRingRecord view (kind-specific union member). */
void wick_encode_payload (WickEncoder *encoder, uint8_t kind, const WickRingRecord *record);

/* Read-only view of the string arena, for span names. */
#define WICK_ARENA_CACHE 64

/* Private copies of strings already resolved: a name is checked and copied
 * out of shared memory once, so a producer changing it later cannot make a
 * reader run past its end. Owned by the reader (wick_arena_cache_clear). */
typedef struct
{
  uint32_t handles[WICK_ARENA_CACHE];
  char *strings[WICK_ARENA_CACHE];
} WickArenaCache;

void wick_arena_cache_clear (WickArenaCache *cache);

typedef struct
{
  const uint8_t *base;
  uint64_t used;         /* read with acquire by the caller */
  WickArenaCache *cache; /* optional */
  /* Another process's reader: a name longer than this is cut (at a UTF-8
   * boundary, "…" appended) and counted in *cut; needs the cache. 0: no
   * limit (the session's own writer, which trusts its own arena). */
  uint32_t max_length;
  uint64_t *cut;
} WickArenaView;

/* Resolves an interned handle; NULL when it is outside the arena or malformed.
 * With a cache the result is a private copy, valid until the next call;
 * without, it points into the arena. */
const char *wick_arena_resolve (const WickArenaView *arena, uint32_t handle);

/* The drain's fast path (wick-jsonl-formatter.c, used by
 * wick_ring_reader_drain_jsonl): a span record's payload straight to its
 * line(s), the name escaped once per arena handle; the same lines and the
 * same bookkeeping as wick_jsonl_formatter_feed of the decoded record. False
 * when it does not take the record (meta not yet out, finished, a field out
 * of range, a name outside the arena): the caller decodes it as usual. */
bool wick_jsonl_formatter_feed_span_raw (WickJsonlFormatter *formatter,
                                         const WickSpanPayload *payload, bool end,
                                         uint64_t duration_ns, uint32_t thread,
                                         uint32_t ring, const WickArenaView *arena,
                                         WickLineFunc emit,
                                         void *user_data);

#define WICK_DECODE_MAX_STRINGS 2048

typedef struct
{
  const char *strings[WICK_DECODE_MAX_STRINGS];
} WickDecodeScratch;

typedef enum
{
  WICK_DECODE_OK,
  WICK_DECODE_UNKNOWN_KIND, /* skip it */
  WICK_DECODE_PAD,          /* skip it */
  WICK_DECODE_MALFORMED,    /* error filled */
} WickDecodeResult;

/* record points at an 8-aligned private copy of size bytes (header
 * included); size is already validated against framing. */
WickDecodeResult wick_record_decode (const uint8_t *record, size_t size, const WickArenaView *arena,
                                     WickDecodeScratch *scratch, WickRingRecord *out, char *error,
                                     size_t error_size);
