/* wick-jsonl-formatter.c — ring records as candle-graph/trace/10 JSONL lines.
 *
 * wick_ring_record_format lays one record out exactly as candle-graph's
 * writer does (spec §2 and §3: kind first, fields in table order, optional
 * fields omitted). The WickJsonlFormatter keeps a stream of records a
 * parseable trace (spec §4): meta first, a span_start before every span_end
 * (synthesized from the span_end's copy of the span when the start was lost
 * or happened before a late reader attached), no duplicate span_start, the
 * terminal last and not before the latest host evidence.
 *
 * No line has a wick_ kind (candle-graph rejects unknown kinds): in
 * extension mode Wick's records wait for the next standard line, which
 * carries them in its "wick_records" key; a thread's identity goes on its
 * next span_start ("wick_thread_name", "wick_os_tid"); losses make the
 * terminal failed, with their counts (docs/format.md, "Wick keys").
 *
 * Speed (docs/performance.md, bench-jsonl-formatter): every line is written
 * straight into one buffer the formatter keeps, with room checked once per
 * field; integers go out two digits at a time from a table; strings (span
 * names, devices, storage ids, dtypes: the ring's interned strings, so the
 * same pointers again and again) are escaped once and kept in a small
 * direct-mapped cache keyed by pointer and checked by content, so a line
 * costs no allocation and no escaping once its strings were seen.
 */
#include "wick-session-internal.h"

#include "common/wick-json.h"
#include "wick-record-codec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------
 * Output primitives
 */

static const char two_digits[201] = "00010203040506070809"
                                    "10111213141516171819"
                                    "20212223242526272829"
                                    "30313233343536373839"
                                    "40414243444546474849"
                                    "50515253545556575859"
                                    "60616263646566676869"
                                    "70717273747576777879"
                                    "80818283848586878889"
                                    "90919293949596979899";

/* Eight decimal digits of value (< 10^8) as ASCII, most significant first in
 * memory (little-endian: the low byte), by SWAR: two 4-digit halves in the
 * 32-bit lanes, /100 and /10 by multiply-shift within the lanes (exact for
 * these ranges: x < 10^4 with 10486 / 2^20, x < 100 with 103 / 2^10). The
 * digits before '0' is added are returned in *raw (for leading zeros). */
static inline uint64_t
eight_digits (uint32_t value, uint64_t *raw)
{
  uint64_t halves = (uint64_t)(value / 10000) | ((uint64_t)(value % 10000) << 32);
  uint64_t hundreds = ((halves * 10486) >> 20) & UINT64_C (0x0000007F0000007F);
  uint64_t pairs = hundreds | ((halves - 100 * hundreds) << 16);
  uint64_t tens = ((pairs * 103) >> 10) & UINT64_C (0x000F000F000F000F);
  uint64_t digits = tens | ((pairs - 10 * tens) << 8);
  *raw = digits;
  return digits + UINT64_C (0x3030303030303030);
}

/* value (< 10^8) without leading zeros; writes 8 bytes, returns the end. */
static inline char *
put_small (char *out, uint32_t value)
{
  if (value < 10)
    {
      *out = (char)('0' + value);
      return out + 1;
    }
  if (value < 100)
    {
      memcpy (out, two_digits + 2 * value, 2);
      return out + 2;
    }
  uint64_t raw;
  uint64_t text = eight_digits (value, &raw);
  unsigned skip = (unsigned)__builtin_ctzll (raw) / 8; /* leading zero digits */
  text >>= 8 * skip;
  memcpy (out, &text, 8);
  return out + 8 - skip;
}

static inline char *
put_eight (char *out, uint32_t value)
{
  uint64_t raw;
  uint64_t text = eight_digits (value, &raw);
  memcpy (out, &text, 8);
  return out + 8;
}

/* At most 20 digits; may write up to 8 bytes past the number's end (room
 * for it is part of every room() a caller asks). Returns the end. */
static inline __attribute__ ((always_inline)) char *
put_u64 (char *out, uint64_t value)
{
  if (value < 100000000u)
    return put_small (out, (uint32_t)value);
  if (value < UINT64_C (10000000000000000))
    {
      out = put_small (out, (uint32_t)(value / 100000000u));
      return put_eight (out, (uint32_t)(value % 100000000u));
    }
  uint64_t high = value / UINT64_C (10000000000000000);
  uint64_t rest = value % UINT64_C (10000000000000000);
  out = put_small (out, (uint32_t)high);
  out = put_eight (out, (uint32_t)(rest / 100000000u));
  return put_eight (out, (uint32_t)(rest % 100000000u));
}

static inline char *
put (char *out, const char *text, size_t length)
{
  memcpy (out, text, length);
  return out + length;
}

#define PUT(out, literal) put ((out), (literal), sizeof (literal) - 1)

static inline char *
put_span_id (char *out, uint64_t id)
{
  *out++ = '"';
  *out++ = 's';
  out = put_u64 (out, id);
  *out++ = '"';
  return out;
}

/* Room for @extra more bytes at the end of @json; NULL when memory ran out. */
static inline char *
room (WickJson *json, size_t extra)
{
  if (__builtin_expect (json->length + extra + 1 > json->capacity, 0)
      && !wick_json_reserve (json, extra))
    return NULL;
  return json->failed ? NULL : json->data + json->length;
}

static inline void
advance (WickJson *json, char *end)
{
  json->length = (size_t)(end - json->data);
  json->data[json->length] = '\0';
}

/* Appends a literal (with room for the longest number that may follow). */
static inline void
lit (WickJson *json, const char *text, size_t length)
{
  char *out = room (json, length + 24);
  if (out != NULL)
    advance (json, put (out, text, length));
}

#define LIT(json, literal) lit ((json), (literal), sizeof (literal) - 1)

static inline void
u64 (WickJson *json, uint64_t value)
{
  char *out = room (json, 24);
  if (out != NULL)
    advance (json, put_u64 (out, value));
}

static inline void
span_id (WickJson *json, uint64_t id)
{
  char *out = room (json, 24);
  if (out != NULL)
    advance (json, put_span_id (out, id));
}

/* Escaped strings, once per distinct string. */
#define STRING_CACHE 1024       /* direct-mapped slots */
#define STRING_CACHE_MAX 256    /* longer strings are escaped every time */

typedef struct
{
  const char *key;    /* the pointer it was made for */
  char *raw;          /* the string as it was, then its escaped form with quotes */
  uint32_t raw_length;
  uint32_t escaped_length;
} CachedString;

typedef struct
{
  CachedString slots[STRING_CACHE];
  WickJson scratch;
} StringCache;

static void
string_cache_free (StringCache *cache)
{
  if (cache == NULL)
    return;
  for (size_t i = 0; i < STRING_CACHE; i++)
    free (cache->slots[i].raw);
  wick_json_clear (&cache->scratch);
  free (cache);
}

static inline size_t
string_slot (const char *key)
{
  uintptr_t k = (uintptr_t)key;
  return (size_t)((k >> 3) ^ (k >> 13)) & (STRING_CACHE - 1);
}

/* The escaped form of @value (with quotes), or NULL when not cacheable. */
static const CachedString *
cached_string (StringCache *cache, const char *value)
{
  CachedString *slot = &cache->slots[string_slot (value)];
  if (slot->key == value && strcmp (slot->raw, value) == 0)
    return slot;
  size_t length = strlen (value);
  if (length > STRING_CACHE_MAX)
    return NULL;
  wick_json_reset (&cache->scratch);
  wick_json_string_len (&cache->scratch, value, length);
  if (cache->scratch.failed)
    return NULL;
  size_t escaped = cache->scratch.length;
  char *raw = realloc (slot->raw, length + 1 + escaped + 1);
  if (raw == NULL)
    return NULL;
  memcpy (raw, value, length + 1);
  memcpy (raw + length + 1, cache->scratch.data, escaped + 1);
  slot->raw = raw;
  slot->key = value;
  slot->raw_length = (uint32_t)length;
  slot->escaped_length = (uint32_t)escaped;
  return slot;
}

static inline void
str (WickJson *json, StringCache *cache, const char *value)
{
  const CachedString *cached = cache != NULL ? cached_string (cache, value) : NULL;
  if (cached == NULL)
    {
      wick_json_string (json, value);
      return;
    }
  char *out = room (json, cached->escaped_length + 24);
  if (out != NULL)
    advance (json, put (out, cached->raw + cached->raw_length + 1, cached->escaped_length));
}

static void
shape (WickJson *json, const uint64_t *values, size_t n)
{
  char *out = room (json, 2 + 21 * n + 24);
  if (out == NULL)
    return;
  *out++ = '[';
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        *out++ = ',';
      out = put_u64 (out, values[i]);
    }
  *out++ = ']';
  advance (json, out);
}

static void
string_array (WickJson *json, StringCache *cache, const char *const *values, size_t n)
{
  LIT (json, "[");
  for (size_t i = 0; i < n; i++)
    {
      if (i > 0)
        LIT (json, ",");
      str (json, cache, values[i]);
    }
  LIT (json, "]");
}

/* The fixed middle of a span_start: ,"span_kind":"K","measured":M. Padded
 * to FRAGMENT_BYTES so that it is copied with one fixed-size move (the room
 * a line asks for covers the overshoot). */
#define FRAGMENT_BYTES 48

typedef struct
{
  char text[FRAGMENT_BYTES];
  size_t length;
} Fragment;

static inline char *
put_fragment (char *out, const Fragment *fragment)
{
  memcpy (out, fragment->text, FRAGMENT_BYTES);
  return out + fragment->length;
}

#define FRAGMENT(literal) { literal, sizeof (literal) - 1 }

static const Fragment span_kind_measured[3][2] = {
  { FRAGMENT (",\"span_kind\":\"function\",\"measured\":false"),
    FRAGMENT (",\"span_kind\":\"function\",\"measured\":true") },
  { FRAGMENT (",\"span_kind\":\"op\",\"measured\":false"),
    FRAGMENT (",\"span_kind\":\"op\",\"measured\":true") },
  { FRAGMENT (",\"span_kind\":\"module\",\"measured\":false"),
    FRAGMENT (",\"span_kind\":\"module\",\"measured\":true") },
};

/* ,"step":"S"} or } */
static const Fragment span_step_end[] = {
  FRAGMENT ("}"),
  FRAGMENT (",\"step\":\"forward\"}"),
  FRAGMENT (",\"step\":\"backward\"}"),
  FRAGMENT (",\"step\":\"optimizer\"}"),
};

/* ---------------------------------------------------------------------------
 * Records
 */

/* A span line in pieces, shared by format_span and the drain's fast path
 * (wick_jsonl_formatter_feed_span_raw): the whole span_end line; the
 * span_start up to its name; the rest after the escaped name. Each writes at
 * most 160 bytes (numbers included). */
static inline char *
put_span_end (char *out, const WickRingSpan *span)
{
  out = PUT (out, "{\"kind\":\"span_end\",\"id\":");
  out = put_span_id (out, span->id);
  out = PUT (out, ",\"duration_ns\":");
  out = put_u64 (out, span->duration_ns);
  *out++ = '}';
  return out;
}

static inline char *
put_span_start_head (char *out, const WickRingSpan *span)
{
  out = PUT (out, "{\"kind\":\"span_start\",\"id\":");
  out = put_span_id (out, span->id);
  if (span->parent != 0)
    {
      out = PUT (out, ",\"parent_id\":");
      out = put_span_id (out, span->parent);
    }
  return PUT (out, ",\"name\":");
}

static inline char *
put_span_start_tail (char *out, const WickRingSpan *span, bool with_thread)
{
  out = PUT (out, ",\"start_ns\":");
  out = put_u64 (out, span->start_ns);
  if ((unsigned)span->span_kind < 3)
    {
      out = put_fragment (out, &span_kind_measured[span->span_kind][span->measured ? 1 : 0]);
    }
  else
    {
      const char *kind = wick_span_kind_to_string (span->span_kind);
      out = PUT (out, ",\"span_kind\":\"");
      out = put (out, kind, strlen (kind));
      out = span->measured ? PUT (out, "\",\"measured\":true")
                           : PUT (out, "\",\"measured\":false");
    }
  if ((unsigned)span->step < sizeof span_step_end / sizeof span_step_end[0])
    {
      /* the fragment without its closing brace */
      char *end = put_fragment (out, &span_step_end[span->step]);
      out = end - 1;
    }
  else
    {
      const char *step = wick_step_to_string (span->step);
      if (step != NULL)
        {
          out = PUT (out, ",\"step\":\"");
          out = put (out, step, strlen (step));
          *out++ = '"';
        }
    }
  /* the agreed thread field (TEAM.md), last, extension mode only */
  if (with_thread && span->thread != 0)
    {
      out = PUT (out, ",\"wick_thread\":");
      out = put_u64 (out, span->thread);
    }
  *out++ = '}';
  return out;
}

static void
format_span (WickJson *json, StringCache *cache, const WickRingRecord *record, bool with_thread)
{
  const WickRingSpan *span = &record->span;
  char *out = room (json, 160);
  if (out == NULL)
    return;
  if (record->kind == WICK_RING_RECORD_SPAN_END)
    {
      advance (json, put_span_end (out, span));
      return;
    }
  advance (json, put_span_start_head (out, span));
  str (json, cache, span->name);
  out = room (json, 160);
  if (out == NULL)
    return;
  advance (json, put_span_start_tail (out, span, with_thread));
}

static void
format_op (WickJson *json, StringCache *cache, const WickOpRecord *op)
{
  LIT (json, "{\"kind\":\"op\",\"span_id\":");
  span_id (json, op->span);
  LIT (json, ",\"op_name\":");
  str (json, cache, op->op_name);
  LIT (json, ",\"inputs\":");
  string_array (json, cache, op->inputs, op->n_inputs);
  if (op->output != NULL)
    {
      LIT (json, ",\"output\":");
      str (json, cache, op->output);
    }
  LIT (json, ",\"shape\":");
  shape (json, op->shape, op->rank);
  LIT (json, ",\"dtype\":");
  str (json, cache, op->dtype);
  LIT (json, ",\"device\":");
  str (json, cache, op->device);
  LIT (json, ",\"duration_ns\":");
  u64 (json, op->duration_ns);
  LIT (json, ",\"timestamp_ns\":");
  u64 (json, op->timestamp_ns);
  if (op->has_output_dense_bytes)
    {
      LIT (json, ",\"output_dense_bytes\":");
      u64 (json, op->output_dense_bytes);
    }
  LIT (json, ",\"input_dense_bytes\":");
  u64 (json, op->input_dense_bytes);
  LIT (json, "}");
}

static void
category (WickJson *json, WickMemoryCategory value)
{
  LIT (json, ",\"category\":\"");
  const char *text = wick_memory_category_to_string (value);
  lit (json, text, strlen (text));
  LIT (json, "\"}");
}

static void
format_tensor (WickJson *json, StringCache *cache, const WickTensorRecord *t)
{
  LIT (json, "{\"kind\":\"tensor\",\"span_id\":");
  span_id (json, t->span);
  LIT (json, ",\"tensor_id\":");
  str (json, cache, t->tensor_id);
  if (t->label != NULL)
    {
      LIT (json, ",\"label\":");
      str (json, cache, t->label);
    }
  LIT (json, ",\"shape\":");
  shape (json, t->shape, t->rank);
  LIT (json, ",\"dtype\":");
  str (json, cache, t->dtype);
  LIT (json, ",\"device\":");
  str (json, cache, t->device);
  if (t->requires_grad)
    LIT (json, ",\"requires_grad\":true");
  else
    LIT (json, ",\"requires_grad\":false");
  if (t->has_dense_bytes)
    {
      LIT (json, ",\"dense_bytes\":");
      u64 (json, t->dense_bytes);
    }
  category (json, t->category);
}

static void
format_tensor_stats (WickJson *json, StringCache *cache, const WickTensorStatsRecord *s)
{
  LIT (json, "{\"kind\":\"tensor_stats\",\"span_id\":");
  span_id (json, s->span);
  LIT (json, ",\"label\":");
  str (json, cache, s->label);
  LIT (json, ",\"shape\":");
  shape (json, s->shape, s->rank);
  LIT (json, ",\"dtype\":");
  str (json, cache, s->dtype);
  LIT (json, ",\"elements\":");
  u64 (json, s->elements);
  LIT (json, ",\"non_finite\":");
  u64 (json, s->non_finite);
  LIT (json, ",\"rms\":");
  wick_json_double (json, s->rms);
  LIT (json, ",\"abs_max\":");
  wick_json_double (json, s->abs_max);
  LIT (json, ",\"mean\":");
  wick_json_double (json, s->mean);
  LIT (json, "}");
}

/* strict: no wick_address (pure trace/10). */
static void
format_memory (WickJson *json, StringCache *cache, const WickMemoryRecord *m, bool strict)
{
  LIT (json, "{\"kind\":\"memory\",\"timestamp_ns\":");
  u64 (json, m->timestamp_ns);
  LIT (json, ",\"storage_id\":");
  str (json, cache, m->storage_id);
  LIT (json, ",\"tensor_id\":");
  str (json, cache, m->tensor_id);
  LIT (json, ",\"span_id\":");
  span_id (json, m->span);
  if (m->op_name != NULL)
    {
      LIT (json, ",\"op_name\":");
      str (json, cache, m->op_name);
    }
  LIT (json, ",\"device\":");
  str (json, cache, m->device);
  LIT (json, ",\"bytes\":");
  u64 (json, m->bytes);
  if (m->action == WICK_MEMORY_ALLOC)
    LIT (json, ",\"action\":\"alloc\",\"shape\":");
  else if (m->action == WICK_MEMORY_FREE)
    LIT (json, ",\"action\":\"free\",\"shape\":");
  else
    {
      LIT (json, ",\"action\":");
      wick_json_string (json, wick_memory_action_to_string (m->action));
      LIT (json, ",\"shape\":");
    }
  shape (json, m->shape, m->rank);
  LIT (json, ",\"dtype\":");
  str (json, cache, m->dtype);
  if (m->address != 0 && !strict)
    {
      /* A hex string: a JSON number past 2^53 loses digits in many readers. */
      static const char key[] = ",\"wick_address\":\"0x";
      char text[sizeof key + 17]; /* the key, 16 digits and the quote */
      memcpy (text, key, sizeof key - 1);
      size_t n = sizeof key - 1;
      n += wick_format_hex_u64 (m->address, text + n);
      text[n++] = '"';
      lit (json, text, n);
    }
  category (json, m->category);
}

static void
format_device_memory (WickJson *json, StringCache *cache, const WickDeviceMemoryRecord *s)
{
  LIT (json, "{\"kind\":\"device_memory\",\"timestamp_ns\":");
  u64 (json, s->timestamp_ns);
  LIT (json, ",\"device\":");
  str (json, cache, s->device);
  if (s->has_used_bytes)
    {
      LIT (json, ",\"used_bytes\":");
      u64 (json, s->used_bytes);
    }
  if (s->has_free_bytes)
    {
      LIT (json, ",\"free_bytes\":");
      u64 (json, s->free_bytes);
    }
  if (s->has_reserved_bytes)
    {
      LIT (json, ",\"reserved_bytes\":");
      u64 (json, s->reserved_bytes);
    }
  if (s->has_capacity_bytes)
    {
      LIT (json, ",\"capacity_bytes\":");
      u64 (json, s->capacity_bytes);
    }
  LIT (json, "}");
}

static void
format_device_interval (WickJson *json, StringCache *cache, const WickDeviceIntervalRecord *d)
{
  LIT (json, "{\"kind\":\"device_interval\",\"span_id\":");
  span_id (json, d->span);
  LIT (json, ",\"device\":");
  str (json, cache, d->device);
  LIT (json, ",\"stream_id\":");
  str (json, cache, d->stream_id);
  LIT (json, ",\"clock_id\":");
  str (json, cache, d->clock_id);
  LIT (json, ",\"backend\":");
  str (json, cache, d->backend);
  LIT (json, ",\"start_ns\":");
  u64 (json, d->start_ns);
  LIT (json, ",\"duration_ns\":");
  u64 (json, d->duration_ns);
  LIT (json, "}");
}

static void
format_gradient (WickJson *json, StringCache *cache, const WickRingRecord *r)
{
  LIT (json, "{\"kind\":\"gradient\",\"event_id\":\"gradient-");
  u64 (json, r->gradient.event_number);
  LIT (json, "\",\"root\":");
  str (json, cache, r->gradient.root);
  LIT (json, ",\"key\":");
  str (json, cache, r->gradient.key);
  LIT (json, ",\"state\":");
  wick_json_string (json, wick_gradient_state_to_string (r->gradient.state));
  if (r->gradient.has_norm)
    {
      LIT (json, ",\"norm\":");
      wick_json_double (json, r->gradient.norm);
    }
  LIT (json, "}");
}

static void
format_extension (WickJson *json, StringCache *cache, const char *kind, uint64_t timestamp_ns,
                  const char *fields)
{
  LIT (json, "{\"kind\":");
  str (json, cache, kind);
  LIT (json, ",\"timestamp_ns\":");
  u64 (json, timestamp_ns);
  if (fields != NULL && fields[0] != '\0')
    {
      LIT (json, ",");
      wick_json_raw (json, fields);
    }
  LIT (json, "}");
}

static void
format_counted (WickJson *json, const WickRingRecord *r)
{
  bool dropped = r->kind == WICK_RING_RECORD_DROPPED;
  if (dropped)
    LIT (json, "{\"kind\":\"wick_dropped\",\"timestamp_ns\":");
  else
    LIT (json, "{\"kind\":\"wick_lost\",\"timestamp_ns\":");
  u64 (json, dropped ? r->dropped.last_ns : r->lost.after_ns);
  LIT (json, ",\"ring\":");
  u64 (json, r->ring);
  LIT (json, ",\"count\":");
  u64 (json, dropped ? r->dropped.count : r->lost.count);
  if (dropped)
    {
      LIT (json, ",\"first_ns\":");
      u64 (json, r->dropped.first_ns);
      LIT (json, ",\"last_ns\":");
      u64 (json, r->dropped.last_ns);
      LIT (json, ",\"total\":");
      u64 (json, r->dropped.total);
    }
  LIT (json, "}");
}

/* The agreed shape (docs/format.md): kind, thread, os_tid, name, timestamp_ns. */
static void
format_thread (WickJson *json, StringCache *cache, const WickRingRecord *r)
{
  LIT (json, "{\"kind\":\"wick_thread\",\"thread\":");
  u64 (json, r->thread.number);
  LIT (json, ",\"os_tid\":");
  u64 (json, r->thread.os_tid > 0 ? (uint64_t)r->thread.os_tid : 0);
  LIT (json, ",\"name\":");
  str (json, cache, r->thread.name != NULL ? r->thread.name : "");
  LIT (json, ",\"timestamp_ns\":");
  u64 (json, r->thread.timestamp_ns);
  LIT (json, "}");
}

/* strict: pure trace/10, spans without wick_thread. */
static void
record_to_json (const WickRingRecord *r, WickJson *json, StringCache *cache, bool strict)
{
  switch (r->kind)
    {
      case WICK_RING_RECORD_META:
        wick_json_raw (json, r->meta.line ? r->meta.line : "");
        break;
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        format_span (json, cache, r, !strict);
        break;
      case WICK_RING_RECORD_OP:
        format_op (json, cache, &r->op);
        break;
      case WICK_RING_RECORD_THREAD:
        format_thread (json, cache, r);
        break;
      case WICK_RING_RECORD_TENSOR:
        format_tensor (json, cache, &r->tensor);
        break;
      case WICK_RING_RECORD_TENSOR_STATS:
        format_tensor_stats (json, cache, &r->tensor_stats);
        break;
      case WICK_RING_RECORD_MEMORY:
        format_memory (json, cache, &r->memory, strict);
        break;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        format_device_memory (json, cache, &r->device_memory);
        break;
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        format_device_interval (json, cache, &r->device_interval);
        break;
      case WICK_RING_RECORD_GRADIENT:
        format_gradient (json, cache, r);
        break;
      case WICK_RING_RECORD_CALL_EDGE:
        LIT (json, "{\"kind\":\"edge\",\"edge_kind\":\"call\",\"from_span\":");
        span_id (json, r->call_edge.from);
        LIT (json, ",\"to_span\":");
        span_id (json, r->call_edge.to);
        LIT (json, ",\"host_duration_ns\":");
        u64 (json, r->call_edge.host_duration_ns);
        LIT (json, "}");
        break;
      case WICK_RING_RECORD_DATA_EDGE:
        LIT (json, "{\"kind\":\"edge\",\"edge_kind\":\"data\",\"from_tensor\":");
        str (json, cache, r->data_edge.from_tensor);
        LIT (json, ",\"to_tensor\":");
        str (json, cache, r->data_edge.to_tensor);
        LIT (json, "}");
        break;
      case WICK_RING_RECORD_TERMINAL:
        if (r->terminal.outcome == WICK_OUTCOME_COMPLETE)
          LIT (json, "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":");
        else
          LIT (json, "{\"kind\":\"terminal\",\"outcome\":\"failed\",\"timestamp_ns\":");
        u64 (json, r->terminal.timestamp_ns);
        if (r->terminal.reason != NULL)
          {
            LIT (json, ",\"reason\":");
            wick_json_string (json, r->terminal.reason);
          }
        LIT (json, "}");
        break;
      case WICK_RING_RECORD_EXTENSION:
        format_extension (json, cache, r->extension.kind, r->extension.timestamp_ns,
                          r->extension.json_fields);
        break;
      case WICK_RING_RECORD_DROPPED:
      case WICK_RING_RECORD_LOST:
        format_counted (json, r);
        break;
    }
}

size_t
wick_ring_record_format (const WickRingRecord *record, char *buffer, size_t size)
{
  WickJson json;
  wick_json_init (&json);
  record_to_json (record, &json, NULL, false);
  size_t length = json.length;
  if (size > 0 && buffer != NULL)
    {
      size_t copy = length < size - 1 ? length : size - 1;
      if (json.data != NULL)
        memcpy (buffer, json.data, copy);
      buffer[copy] = '\0';
    }
  wick_json_clear (&json);
  return length;
}

/* ---------------------------------------------------------------------------
 * The stateful formatter
 */

/* Open span ids: linear probing with backward-shift deletion; 0 is empty. */
typedef struct
{
  uint64_t *slots;
  size_t mask;
  size_t count;
} SpanSet;

static size_t
span_slot (uint64_t id, size_t mask)
{
  return (size_t)((id * UINT64_C (0x9e3779b97f4a7c15)) >> 20) & mask;
}

static bool
span_set_grow (SpanSet *set)
{
  size_t n = set->slots ? (set->mask + 1) * 2 : 256;
  uint64_t *slots = calloc (n, sizeof *slots);
  if (slots == NULL)
    return false;
  for (size_t i = 0; set->slots && i <= set->mask; i++)
    if (set->slots[i] != 0)
      {
        size_t j = span_slot (set->slots[i], n - 1);
        while (slots[j] != 0)
          j = (j + 1) & (n - 1);
        slots[j] = set->slots[i];
      }
  free (set->slots);
  set->slots = slots;
  set->mask = n - 1;
  return true;
}

static bool
span_set_contains (const SpanSet *set, uint64_t id)
{
  if (set->slots == NULL)
    return false;
  for (size_t i = span_slot (id, set->mask);; i = (i + 1) & set->mask)
    {
      if (set->slots[i] == id)
        return true;
      if (set->slots[i] == 0)
        return false;
    }
}

/* Adds @id; false when it was already there. */
static bool
span_set_add (SpanSet *set, uint64_t id)
{
  if ((set->count + 1) * 2 > (set->slots ? set->mask + 1 : 0) && !span_set_grow (set))
    return !span_set_contains (set, id);
  size_t i = span_slot (id, set->mask);
  while (set->slots[i] != 0 && set->slots[i] != id)
    i = (i + 1) & set->mask;
  if (set->slots[i] == id)
    return false;
  set->count++;
  set->slots[i] = id;
  return true;
}

/* Removes @id; false when it was not there. */
static bool
span_set_remove (SpanSet *set, uint64_t id)
{
  if (set->slots == NULL)
    return false;
  size_t i = span_slot (id, set->mask);
  while (set->slots[i] != id)
    {
      if (set->slots[i] == 0)
        return false;
      i = (i + 1) & set->mask;
    }
  set->slots[i] = 0;
  set->count--;
  for (size_t j = (i + 1) & set->mask; set->slots[j] != 0; j = (j + 1) & set->mask)
    {
      uint64_t moved = set->slots[j];
      set->slots[j] = 0;
      size_t k = span_slot (moved, set->mask);
      while (set->slots[k] != 0)
        k = (k + 1) & set->mask;
      set->slots[k] = moved;
    }
  return true;
}

struct WickFormatterNames;
static void names_free (struct WickFormatterNames *names);

typedef struct
{
  uint64_t hash;
  char *name; /* as recorded: the identity waits for a span_start */
  int32_t os_tid;
  uint64_t timestamp_ns;
} ThreadSeen;

/* Wick records held for the next standard record: a flood with no record
 * between them (never seen in practice) is counted beyond this. */
#define FACTS_MAX_BYTES ((size_t)16 << 20)

/* A Wick record bound to a later record of its own thread (its fields begin
 * "on":"span_start", "on":"span_end" or "on":"memory", docs/format.md): a
 * stage's capture and certificate ride on the span_start and span_end of the
 * capture's span, a weight move on the memory records of the storages it
 * moved. It waits for that record of its ring; a memory-bound one takes the
 * ring's next record of any kind when no memory record comes first. */
typedef enum
{
  BOUND_NONE,
  BOUND_SPAN_START,
  BOUND_SPAN_END,
  BOUND_MEMORY,
} BoundOn;

typedef struct
{
  uint32_t ring;
  BoundOn on;
  char *json; /* the record's object */
} BoundFact;

/* More waiting at once than this (a thread that never records the record
 * they wait for) go to the next record instead. */
#define BOUND_MAX 256

struct WickJsonlFormatter
{
  bool strict;
  bool meta_emitted;
  bool has_terminal;
  bool finished;
  WickOutcome terminal_outcome;
  uint64_t terminal_ns;
  char *terminal_reason;
  uint64_t evidence_ns;
  SpanSet open;
  /* The span started last, not yet in open: an end that follows its start at
   * once (most spans) costs no set operation. */
  uint64_t pending_open;
  uint64_t synthesized_starts; /* duplicates are possible only after these */
  /* the drain's fast path: the id text of the span_start it wrote last
   * ("sN" with quotes, 32 bytes copied at once) */
  uint64_t last_id;
  uint32_t last_id_length;
  char last_id_text[32];
  /* thread identities announced: number -> hash of os tid and name, so that
   * the snapshot's and the stream's copies of one identity are written once;
   * with the identity not yet written (extension mode: it goes on the
   * thread's next span_start) */
  ThreadSeen *thread_seen;
  size_t n_thread_seen;
  size_t n_thread_pending;
  /* Extension mode: the Wick records (marks, stage verdicts, weight moves,
   * drops...) waiting for the next standard record, which carries them in
   * its "wick_records" key (docs/format.md), comma-separated objects. */
  WickJson facts;
  uint64_t facts_dropped; /* beyond FACTS_MAX_BYTES with no record to carry them */
  uint64_t foreign_ends;  /* the largest count of a wick_span_end_foreign record */
  BoundFact bound[BOUND_MAX]; /* in the order they came */
  size_t n_bound;
  WickJson json;
  StringCache *strings; /* allocated with the formatter */
  struct WickFormatterNames *names; /* the drain's span names by handle, on first use */
  uint64_t lines;
  uint64_t skipped;
  /* Losses the stream reported (for the strict terminal's reason). */
  uint64_t dropped;
  uint64_t lost;
  uint64_t detached;
  char *first_loss_reason; /* the first wick_ring_broken record's error */
  char *partial;           /* wick_jsonl_formatter_set_partial */
  WickFormattedFunc formatted_func; /* wick_jsonl_formatter_set_formatted_func */
};

WickJsonlFormatter *
wick_jsonl_formatter_new (bool strict)
{
  WickJsonlFormatter *formatter = calloc (1, sizeof *formatter);
  if (formatter == NULL)
    return NULL;
  formatter->strict = strict;
  wick_json_init (&formatter->json);
  wick_json_init (&formatter->facts);
  formatter->strings = calloc (1, sizeof *formatter->strings);
  if (formatter->strings != NULL)
    wick_json_init (&formatter->strings->scratch);
  return formatter;
}

void
wick_jsonl_formatter_free (WickJsonlFormatter *formatter)
{
  if (formatter == NULL)
    return;
  free (formatter->open.slots);
  for (size_t i = 0; i < formatter->n_thread_seen; i++)
    free (formatter->thread_seen[i].name);
  free (formatter->thread_seen);
  wick_json_clear (&formatter->facts);
  for (size_t i = 0; i < formatter->n_bound; i++)
    free (formatter->bound[i].json);
  free (formatter->terminal_reason);
  free (formatter->first_loss_reason);
  free (formatter->partial);
  wick_json_clear (&formatter->json);
  string_cache_free (formatter->strings);
  names_free (formatter->names);
  free (formatter);
}

/* Extension mode: a Wick record into the facts the next standard record
 * carries. */
static void
add_fact (WickJsonlFormatter *formatter, const WickRingRecord *record)
{
  WickJson *facts = &formatter->facts;
  size_t before = facts->length;
  if (facts->length > FACTS_MAX_BYTES)
    {
      formatter->facts_dropped++;
      return;
    }
  if (facts->length > 0)
    LIT (facts, ",");
  record_to_json (record, facts, formatter->strings, false);
  if (facts->failed)
    {
      /* out of memory: this one is lost (counted), the others kept */
      facts->failed = false;
      facts->length = before;
      if (facts->data != NULL)
        facts->data[before] = '\0';
      formatter->facts_dropped++;
    }
}

static BoundOn
bound_target (const WickRingRecord *record)
{
  if (record->kind != WICK_RING_RECORD_EXTENSION || record->extension.json_fields == NULL)
    return BOUND_NONE;
  const char *fields = record->extension.json_fields;
  if (strncmp (fields, "\"on\":\"", 6) != 0)
    return BOUND_NONE;
  fields += 6;
  if (strncmp (fields, "span_start\"", 11) == 0)
    return BOUND_SPAN_START;
  if (strncmp (fields, "span_end\"", 9) == 0)
    return BOUND_SPAN_END;
  if (strncmp (fields, "memory\"", 7) == 0)
    return BOUND_MEMORY;
  return BOUND_NONE;
}

/* Extension mode: a Wick record that waits for a record of its ring (false:
 * it goes with the next record, as any other). */
static bool
add_bound (WickJsonlFormatter *formatter, const WickRingRecord *record, BoundOn on)
{
  if (formatter->n_bound >= BOUND_MAX)
    return false;
  WickJson json;
  wick_json_init (&json);
  record_to_json (record, &json, formatter->strings, false);
  char *copy = json.failed ? NULL : strdup (json.data);
  wick_json_clear (&json);
  if (copy == NULL)
    return false;
  formatter->bound[formatter->n_bound++] = (BoundFact){ record->ring, on, copy };
  return true;
}

/* Whether a record of @kind from @ring takes bound fact @fact. */
static inline bool
bound_takes (const BoundFact *fact, uint32_t ring, WickRingRecordKind kind)
{
  if (fact->ring != ring)
    return false;
  switch (fact->on)
    {
    case BOUND_SPAN_START:
      return kind == WICK_RING_RECORD_SPAN_START;
    case BOUND_SPAN_END:
      return kind == WICK_RING_RECORD_SPAN_END;
    case BOUND_MEMORY:
      return true;
    case BOUND_NONE:
    default:
      return false;
    }
}

static bool
bound_waiting (const WickJsonlFormatter *formatter, uint32_t ring, WickRingRecordKind kind)
{
  for (size_t i = 0; i < formatter->n_bound; i++)
    if (bound_takes (&formatter->bound[i], ring, kind))
      return true;
  return false;
}

/* The bound facts a record of @kind from @ring takes, appended to @out
 * (comma-separated objects) and forgotten; all of them when @all. */
static void
take_bound (WickJsonlFormatter *formatter, WickJson *out, uint32_t ring, WickRingRecordKind kind,
            bool all)
{
  size_t kept = 0;
  for (size_t i = 0; i < formatter->n_bound; i++)
    {
      BoundFact *fact = &formatter->bound[i];
      if (!all && !bound_takes (fact, ring, kind))
        {
          formatter->bound[kept++] = *fact;
          continue;
        }
      if (out->length > 0)
        LIT (out, ",");
      wick_json_raw (out, fact->json);
      free (fact->json);
    }
  formatter->n_bound = kept;
}

/* The thread identities no span_start carried, as wick_thread records. */
static void
add_pending_threads (WickJsonlFormatter *formatter)
{
  for (size_t number = 0; number < formatter->n_thread_seen && formatter->n_thread_pending > 0;
       number++)
    {
      ThreadSeen *t = &formatter->thread_seen[number];
      if (t->name == NULL)
        continue;
      WickJson *facts = &formatter->facts;
      if (facts->length > 0)
        LIT (facts, ",");
      LIT (facts, "{\"kind\":\"wick_thread\",\"thread\":");
      u64 (facts, number);
      LIT (facts, ",\"os_tid\":");
      u64 (facts, t->os_tid > 0 ? (uint64_t)t->os_tid : 0);
      LIT (facts, ",\"name\":");
      wick_json_string (facts, t->name);
      LIT (facts, ",\"timestamp_ns\":");
      u64 (facts, t->timestamp_ns);
      LIT (facts, "}");
      free (t->name);
      t->name = NULL;
      formatter->n_thread_pending--;
    }
}

/* Extension mode: the Wick keys of a standard line just formatted in @json
 * (docs/format.md): a span_start of a thread whose identity waits gets
 * "wick_thread_name" and "wick_os_tid"; any line takes the waiting Wick
 * records, and those bound to it (a record of @kind from @ring), as
 * "wick_records". candle-graph ignores unknown keys. */
static void
attach_wick_keys (WickJsonlFormatter *formatter, WickJson *json, uint32_t thread, uint32_t ring,
                  WickRingRecordKind kind, WickFormattedRecord *formatted, size_t *records_at)
{
  ThreadSeen *t = thread != 0 && thread < formatter->n_thread_seen
                      && formatter->thread_seen[thread].name != NULL
                    ? &formatter->thread_seen[thread]
                    : NULL;
  bool bound = formatter->n_bound > 0
               && (kind == WICK_RING_RECORD_TERMINAL || bound_waiting (formatter, ring, kind));
  if (t == NULL && formatter->facts.length == 0 && !bound)
    return;
  if (json->failed || json->length == 0 || json->data[json->length - 1] != '}')
    return;
  if (bound)
    take_bound (formatter, &formatter->facts, ring, kind, kind == WICK_RING_RECORD_TERMINAL);
  json->length--;
  if (t != NULL)
    {
      LIT (json, ",\"wick_thread_name\":");
      wick_json_string (json, t->name);
      LIT (json, ",\"wick_os_tid\":");
      u64 (json, t->os_tid > 0 ? (uint64_t)t->os_tid : 0);
      if (formatter->formatted_func != NULL)
        {
          /* the formatter's to free once the line is out */
          formatted->thread_name = t->name;
          formatted->os_tid = t->os_tid > 0 ? (uint64_t)t->os_tid : 0;
        }
      else
        free (t->name);
      t->name = NULL;
      formatter->n_thread_pending--;
    }
  if (formatter->facts.length > 0)
    {
      LIT (json, ",\"wick_records\":[");
      *records_at = json->length;
      formatted->wick_records_length = formatter->facts.length;
      wick_json_append (json, formatter->facts.data, formatter->facts.length);
      LIT (json, "]");
      wick_json_reset (&formatter->facts);
    }
  LIT (json, "}");
}

/* The terminal's Wick keys: what was lost, counted (extension mode). */
static void
attach_loss_keys (WickJsonlFormatter *formatter, WickJson *json, WickFormattedRecord *formatted)
{
  if (formatter->dropped == 0 && formatter->lost == 0 && formatter->detached == 0
      && formatter->facts_dropped == 0 && formatter->foreign_ends == 0)
    return;
  if (json->failed || json->length == 0 || json->data[json->length - 1] != '}')
    return;
  formatted->has_loss_keys = true;
  formatted->dropped = formatter->dropped;
  formatted->lost = formatter->lost;
  formatted->span_ends_foreign = formatter->foreign_ends;
  formatted->detached = formatter->detached;
  formatted->records_dropped = formatter->facts_dropped;
  json->length--;
  LIT (json, ",\"wick_dropped\":");
  u64 (json, formatter->dropped);
  LIT (json, ",\"wick_lost\":");
  u64 (json, formatter->lost);
  if (formatter->foreign_ends > 0)
    {
      /* span ends on a thread that did not begin the span (they stay open) */
      LIT (json, ",\"wick_span_ends_foreign\":");
      u64 (json, formatter->foreign_ends);
    }
  if (formatter->detached > 0)
    {
      LIT (json, ",\"wick_detached\":");
      u64 (json, formatter->detached);
    }
  if (formatter->facts_dropped > 0)
    {
      LIT (json, ",\"wick_records_dropped\":");
      u64 (json, formatter->facts_dropped);
    }
  LIT (json, "}");
}

static void
emit_record (WickJsonlFormatter *formatter, const WickRingRecord *record, WickLineFunc emit,
             void *user_data)
{
  WickFormattedRecord formatted = { .record = record };
  size_t records_at = 0;
  wick_json_reset (&formatter->json);
  record_to_json (record, &formatter->json, formatter->strings, formatter->strict);
  if (!formatter->strict && record->kind != WICK_RING_RECORD_META)
    {
      if (record->kind == WICK_RING_RECORD_TERMINAL)
        {
          attach_loss_keys (formatter, &formatter->json, &formatted);
          add_pending_threads (formatter);
        }
      attach_wick_keys (formatter, &formatter->json,
                        record->kind == WICK_RING_RECORD_SPAN_START ? record->span.thread : 0,
                        record->ring, record->kind, &formatted, &records_at);
    }
  if (formatter->json.failed)
    {
      free ((char *)formatted.thread_name);
      formatter->skipped++;
      return;
    }
  formatter->lines++;
  if (formatter->formatted_func == NULL)
    {
      emit (formatter->json.data, formatter->json.length, user_data);
      return;
    }
  if (records_at > 0)
    formatted.wick_records = formatter->json.data + records_at;
  else
    formatted.wick_records_length = 0;
  formatter->formatted_func (&formatted, formatter->json.data, formatter->json.length, user_data);
  free ((char *)formatted.thread_name);
}

static uint64_t
saturating_add (uint64_t a, uint64_t b)
{
  return a + b < a ? UINT64_MAX : a + b;
}

static void
note_evidence (WickJsonlFormatter *formatter, uint64_t end_ns)
{
  if (end_ns > formatter->evidence_ns)
    formatter->evidence_ns = end_ns;
}

/* Open spans: the set, and the one started last (pending_open). A start is
 * a duplicate only of a span the snapshot announced (synthesized); false
 * then. */
static inline bool
open_add (WickJsonlFormatter *formatter, uint64_t id, bool synthesized)
{
  if (formatter->pending_open == id
      || (formatter->synthesized_starts > 0 && span_set_contains (&formatter->open, id)))
    return false;
  if (synthesized)
    {
      formatter->synthesized_starts++;
      return span_set_add (&formatter->open, id);
    }
  if (formatter->pending_open != 0)
    span_set_add (&formatter->open, formatter->pending_open);
  formatter->pending_open = id;
  return true;
}

/* False when id was not open. */
static inline bool
open_remove (WickJsonlFormatter *formatter, uint64_t id)
{
  if (formatter->pending_open == id)
    {
      formatter->pending_open = 0;
      return true;
    }
  return span_set_remove (&formatter->open, id);
}

static void
feed_span (WickJsonlFormatter *formatter, const WickRingRecord *record, WickLineFunc emit,
           void *user_data)
{
  const WickRingSpan *span = &record->span;
  if (record->kind == WICK_RING_RECORD_SPAN_START)
    {
      if (!open_add (formatter, span->id, span->synthesized))
        {
          formatter->skipped++; /* the snapshot already announced it */
          return;
        }
      note_evidence (formatter, span->start_ns);
      emit_record (formatter, record, emit, user_data);
      return;
    }
  if (!open_remove (formatter, span->id))
    {
      WickRingRecord start = *record;
      start.kind = WICK_RING_RECORD_SPAN_START;
      emit_record (formatter, &start, emit, user_data);
    }
  note_evidence (formatter, saturating_add (span->start_ns, span->duration_ns));
  emit_record (formatter, record, emit, user_data);
}

static uint64_t
thread_identity_hash (const WickRingRecord *record)
{
  uint64_t hash = UINT64_C (0xcbf29ce484222325) ^ (uint32_t)record->thread.os_tid;
  for (const char *p = record->thread.name ? record->thread.name : ""; *p != '\0'; p++)
    hash = (hash ^ (unsigned char)*p) * UINT64_C (0x100000001b3);
  return hash | 1;
}

/* Thread numbers the formatter remembers announcing (a 512 KiB table at most). */
#define THREAD_SEEN_LIMIT 65536u

/* False when this thread number was already announced with this identity. */
static bool
thread_is_new (WickJsonlFormatter *formatter, const WickRingRecord *record)
{
  uint32_t number = record->thread.number;
  uint64_t hash = thread_identity_hash (record);
  /* The number comes from shared memory: one beyond any real session's
   * threads is written every time rather than sizing a table after it. */
  if (number >= THREAD_SEEN_LIMIT)
    return true;
  if (number >= formatter->n_thread_seen)
    {
      size_t n = formatter->n_thread_seen ? formatter->n_thread_seen : 16;
      while (n <= number)
        n *= 2;
      ThreadSeen *seen = realloc (formatter->thread_seen, n * sizeof *seen);
      if (seen == NULL)
        return true;
      memset (seen + formatter->n_thread_seen, 0, (n - formatter->n_thread_seen) * sizeof *seen);
      formatter->thread_seen = seen;
      formatter->n_thread_seen = n;
    }
  if (formatter->thread_seen[number].hash == hash)
    return false;
  formatter->thread_seen[number].hash = hash;
  return true;
}

/* Extension mode: holds a new identity for its thread's next span_start
 * (false when it cannot: the caller writes it as a wick_thread record). */
static bool
hold_thread_identity (WickJsonlFormatter *formatter, const WickRingRecord *record)
{
  uint32_t number = record->thread.number;
  if (number == 0 || number >= formatter->n_thread_seen)
    return false;
  char *name = strdup (record->thread.name != NULL ? record->thread.name : "");
  if (name == NULL)
    return false;
  ThreadSeen *t = &formatter->thread_seen[number];
  if (t->name == NULL)
    formatter->n_thread_pending++;
  free (t->name);
  t->name = name;
  t->os_tid = record->thread.os_tid;
  t->timestamp_ns = record->thread.timestamp_ns;
  return true;
}

static void
keep_terminal (WickJsonlFormatter *formatter, const WickRingRecord *record)
{
  if (formatter->has_terminal)
    {
      formatter->skipped++;
      return;
    }
  formatter->has_terminal = true;
  formatter->terminal_outcome = record->terminal.outcome;
  formatter->terminal_ns = record->terminal.timestamp_ns;
  if (record->terminal.reason != NULL)
    formatter->terminal_reason = strdup (record->terminal.reason);
}

/* The "error" string of a wick_ring_broken record's fields (as the reader
 * writes them: ...,"error":"<escaped>"), unescaped well enough for a reason:
 * \" and \\ undone, other escapes kept as written. */
static char *
json_error_field (const char *fields)
{
  const char *start = fields != NULL ? strstr (fields, "\"error\":\"") : NULL;
  if (start == NULL)
    return strdup ("a ring broke");
  start += strlen ("\"error\":\"");
  char *out = malloc (strlen (start) + 1);
  if (out == NULL)
    return NULL;
  size_t n = 0;
  for (const char *p = start; *p != '\0' && *p != '"'; p++)
    {
      if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
        p++;
      out[n++] = *p;
    }
  out[n] = '\0';
  return out;
}

/* Counts what the stream says was lost, so that a strict trace (no wick_
 * records) still says it in its terminal. */
static void
note_loss (WickJsonlFormatter *formatter, const WickRingRecord *record)
{
  if (record->kind == WICK_RING_RECORD_DROPPED)
    formatter->dropped += record->dropped.count;
  else if (record->kind == WICK_RING_RECORD_LOST)
    formatter->lost += record->lost.count;
  else if (record->extension.kind != NULL
           && strcmp (record->extension.kind, "wick_reader_detached") == 0)
    formatter->detached++;
  else if (record->extension.kind != NULL
           && strcmp (record->extension.kind, "wick_span_end_foreign") == 0
           && record->extension.json_fields != NULL)
    {
      const char *count = strstr (record->extension.json_fields, "\"count\":");
      uint64_t n = count != NULL ? strtoull (count + 8, NULL, 10) : 0;
      if (n > formatter->foreign_ends)
        formatter->foreign_ends = n;
    }
  else if (record->extension.kind != NULL
           && strcmp (record->extension.kind, "wick_ring_broken") == 0
           && formatter->first_loss_reason == NULL)
    formatter->first_loss_reason = json_error_field (record->extension.json_fields);
}

/* The strict terminal's account of the losses (NULL when none). */
static char *
loss_sentence (const WickJsonlFormatter *formatter)
{
  if (formatter->dropped == 0 && formatter->lost == 0 && formatter->detached == 0
      && formatter->first_loss_reason == NULL && formatter->facts_dropped == 0)
    return NULL;
  WickJson text;
  wick_json_init (&text);
  char part[160];
  snprintf (part, sizeof part, "records were lost: %llu dropped by the recorder, %llu lost by the "
            "reader",
            (unsigned long long)formatter->dropped, (unsigned long long)formatter->lost);
  wick_json_raw (&text, part);
  if (formatter->detached > 0)
    {
      snprintf (part, sizeof part, ", %llu stalled hold reader(s) detached",
                (unsigned long long)formatter->detached);
      wick_json_raw (&text, part);
    }
  if (formatter->facts_dropped > 0)
    {
      snprintf (part, sizeof part,
                ", %llu Wick record(s) dropped with no trace record to carry "
                "them",
                (unsigned long long)formatter->facts_dropped);
      wick_json_raw (&text, part);
    }
  if (formatter->first_loss_reason != NULL)
    {
      wick_json_raw (&text, " (");
      wick_json_raw (&text, formatter->first_loss_reason);
      wick_json_raw (&text, ")");
    }
  char *sentence = text.failed ? NULL : strdup (text.data);
  wick_json_clear (&text);
  return sentence;
}

void
wick_jsonl_formatter_feed (WickJsonlFormatter *formatter, const WickRingRecord *record,
                           WickLineFunc emit, void *user_data)
{
  if (formatter->finished)
    {
      formatter->skipped++;
      return;
    }
  if (record->kind == WICK_RING_RECORD_META)
    {
      if (formatter->meta_emitted)
        formatter->skipped++;
      else
        {
          formatter->meta_emitted = true;
          emit_record (formatter, record, emit, user_data);
        }
      return;
    }
  if (!formatter->meta_emitted)
    {
      formatter->skipped++;
      return;
    }
  switch (record->kind)
    {
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        feed_span (formatter, record, emit, user_data);
        return;
      case WICK_RING_RECORD_TERMINAL:
        keep_terminal (formatter, record);
        return;
      case WICK_RING_RECORD_THREAD:
        if (formatter->strict || !thread_is_new (formatter, record))
          formatter->skipped++;
        else if (!hold_thread_identity (formatter, record))
          add_fact (formatter, record);
        return;
      case WICK_RING_RECORD_EXTENSION:
      case WICK_RING_RECORD_DROPPED:
      case WICK_RING_RECORD_LOST:
        /* no line of their own: candle-graph rejects unknown kinds */
        note_loss (formatter, record);
        if (formatter->strict)
          formatter->skipped++;
        else
          {
            BoundOn on = bound_target (record);
            if (on == BOUND_NONE || !add_bound (formatter, record, on))
              add_fact (formatter, record);
          }
        return;
      case WICK_RING_RECORD_OP:
        note_evidence (formatter, saturating_add (record->op.timestamp_ns, record->op.duration_ns));
        break;
      case WICK_RING_RECORD_MEMORY:
        note_evidence (formatter, record->memory.timestamp_ns);
        break;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        note_evidence (formatter, record->device_memory.timestamp_ns);
        break;
      default:
        break;
    }
  emit_record (formatter, record, emit, user_data);
}

void
wick_jsonl_formatter_set_formatted_func (WickJsonlFormatter *formatter, WickFormattedFunc func)
{
  if (formatter != NULL)
    formatter->formatted_func = func;
}

void
wick_jsonl_formatter_finish (WickJsonlFormatter *formatter, const char *reason_if_none,
                             WickLineFunc emit, void *user_data)
{
  if (formatter->finished || !formatter->meta_emitted)
    return;
  formatter->finished = true;
  WickRingRecord terminal = { .kind = WICK_RING_RECORD_TERMINAL };
  if (formatter->has_terminal)
    {
      terminal.terminal.outcome = formatter->terminal_outcome;
      terminal.terminal.timestamp_ns = formatter->terminal_ns;
      terminal.terminal.reason = formatter->terminal_reason;
    }
  else
    {
      terminal.terminal.outcome = WICK_OUTCOME_FAILED;
      terminal.terminal.reason = reason_if_none && reason_if_none[0]
                                   ? reason_if_none
                                   : "the capture ended without a terminal record";
    }
  if (terminal.terminal.timestamp_ns < formatter->evidence_ns)
    terminal.terminal.timestamp_ns = formatter->evidence_ns;
  /* what was lost, the terminal says (both modes; extension mode also counts
   * it in Wick keys); a complete terminal cannot carry a reason (spec §4), so
   * it becomes failed */
  char *losses = loss_sentence (formatter);
  char *reason = NULL, *partial = NULL;
  if (formatter->partial != NULL)
    {
      /* a late reader's file: failed, saying so first, then what the
       * session's own terminal said */
      const char *after = terminal.terminal.outcome != WICK_OUTCOME_FAILED ? "the session completed"
                          : terminal.terminal.reason != NULL ? terminal.terminal.reason
                                                             : "failed";
      size_t n = strlen (formatter->partial) + strlen (after) + 3;
      partial = malloc (n);
      if (partial != NULL)
        {
          snprintf (partial, n, "%s; %s", formatter->partial, after);
          terminal.terminal.outcome = WICK_OUTCOME_FAILED;
          terminal.terminal.reason = partial;
        }
    }
  if (losses != NULL)
    {
      const char *before = terminal.terminal.outcome != WICK_OUTCOME_FAILED
                             ? "the session completed, but"
                             : terminal.terminal.reason != NULL ? terminal.terminal.reason
                                                                : "failed";
      size_t n = strlen (before) + strlen (losses) + 3;
      reason = malloc (n);
      if (reason != NULL)
        {
          snprintf (reason, n, "%s%s %s", before,
                    terminal.terminal.outcome == WICK_OUTCOME_FAILED ? ";" : "", losses);
          terminal.terminal.outcome = WICK_OUTCOME_FAILED;
          terminal.terminal.reason = reason;
        }
    }
  emit_record (formatter, &terminal, emit, user_data);
  free (reason);
  free (partial);
  free (losses);
}

void
wick_jsonl_formatter_set_partial (WickJsonlFormatter *formatter, const char *why)
{
  free (formatter->partial);
  formatter->partial = why != NULL && why[0] != '\0' ? strdup (why) : NULL;
}

bool
wick_jsonl_formatter_has_terminal (WickJsonlFormatter *formatter)
{
  return formatter->has_terminal;
}

uint64_t
wick_jsonl_formatter_get_lines (WickJsonlFormatter *formatter)
{
  return formatter->lines;
}

uint64_t
wick_jsonl_formatter_get_skipped (WickJsonlFormatter *formatter)
{
  return formatter->skipped;
}

/* ---------------------------------------------------------------------------
 * The drain's fast path for span records (wick_ring_reader_drain_jsonl)
 */

/* Escaped span names by arena handle: a handle names one string for the
 * arena's life (entries are written once, the memfd is sealed), so a hit
 * costs no lookup of the string, no strcmp and no escaping. */
#define NAME_CACHE 256

typedef struct
{
  const uint8_t *arena; /* the arena the handle belongs to */
  uint32_t handle;
  uint32_t length;
  char *escaped; /* with quotes */
} CachedName;

struct WickFormatterNames
{
  CachedName slots[NAME_CACHE];
};

static const CachedName *
cached_name (WickJsonlFormatter *formatter, const WickArenaView *arena, uint32_t handle)
{
  if (formatter->names == NULL)
    {
      formatter->names = calloc (1, sizeof *formatter->names);
      if (formatter->names == NULL)
        return NULL;
    }
  CachedName *slot = &formatter->names->slots[(handle >> 3) & (NAME_CACHE - 1)];
  if (slot->handle == handle && slot->arena == arena->base && slot->escaped != NULL)
    return slot;
  const char *name = wick_arena_resolve (arena, handle);
  if (name == NULL)
    return NULL;
  WickJson escaped;
  wick_json_init (&escaped);
  wick_json_string (&escaped, name);
  if (escaped.failed || escaped.length > UINT32_MAX)
    {
      wick_json_clear (&escaped);
      return NULL;
    }
  /* padded to 16 bytes: copied 16 at a time (put_name) */
  size_t length = escaped.length;
  char *copy = malloc ((length + 15) / 16 * 16 + 16);
  if (copy != NULL)
    memcpy (copy, escaped.data, length);
  wick_json_clear (&escaped);
  if (copy == NULL)
    return NULL;
  free (slot->escaped);
  slot->escaped = copy;
  slot->length = (uint32_t)length;
  slot->handle = handle;
  slot->arena = arena->base;
  return slot;
}

static void
names_free (struct WickFormatterNames *names)
{
  if (names == NULL)
    return;
  for (size_t i = 0; i < NAME_CACHE; i++)
    free (names->slots[i].escaped);
  free (names);
}

static inline bool
emit_span_line (WickJsonlFormatter *formatter, const WickRingSpan *span, bool end,
                const CachedName *name, uint32_t ring, WickLineFunc emit, void *user_data)
{
  WickJson *json = &formatter->json;
  if (json->failed)
    return false;
  json->length = 0;
  char *out = room (json, 2 * 160 + name->length + 16);
  if (out == NULL)
    return false;
  if (end && span->id == formatter->last_id && formatter->last_id_length > 0)
    {
      /* the end of the span started last: its id as that line wrote it */
      out = PUT (out, "{\"kind\":\"span_end\",\"id\":");
      memcpy (out, formatter->last_id_text, sizeof formatter->last_id_text);
      out += formatter->last_id_length;
      out = PUT (out, ",\"duration_ns\":");
      out = put_u64 (out, span->duration_ns);
      *out++ = '}';
    }
  else if (end)
    out = put_span_end (out, span);
  else
    {
      out = PUT (out, "{\"kind\":\"span_start\",\"id\":");
      char *id = out;
      out = put_span_id (out, span->id);
      size_t id_length = (size_t)(out - id);
      if (id_length <= sizeof formatter->last_id_text - 8)
        {
          memcpy (formatter->last_id_text, id, sizeof formatter->last_id_text);
          formatter->last_id = span->id;
          formatter->last_id_length = (uint32_t)id_length;
        }
      if (span->parent != 0)
        {
          out = PUT (out, ",\"parent_id\":");
          out = put_span_id (out, span->parent);
        }
      out = PUT (out, ",\"name\":");
      for (uint32_t i = 0; i < name->length; i += 16)
        memcpy (out + i, name->escaped + i, 16);
      out += name->length;
      out = put_span_start_tail (out, span, !formatter->strict);
    }
  advance (json, out);
  if (!formatter->strict
      && (formatter->facts.length > 0 || formatter->n_thread_pending > 0 || formatter->n_bound > 0))
    {
      /* never with a formatted func (feed_span_raw leaves those to the general path) */
      WickFormattedRecord unused = { 0 };
      size_t unused_at = 0;
      attach_wick_keys (formatter, json, end ? 0 : span->thread, ring,
                        end ? WICK_RING_RECORD_SPAN_END : WICK_RING_RECORD_SPAN_START, &unused,
                        &unused_at);
    }
  if (json->failed)
    return false;
  formatter->lines++;
  emit (json->data, json->length, user_data);
  return true;
}

bool
wick_jsonl_formatter_feed_span_raw (WickJsonlFormatter *formatter, const WickSpanPayload *payload,
                                    bool end, uint64_t duration_ns, uint32_t thread,
                                    uint32_t ring, const WickArenaView *arena, WickLineFunc emit,
                                    void *user_data)
{
  /* a formatted func is told the record of each line: the general path */
  if (formatter->formatted_func != NULL || !formatter->meta_emitted || formatter->finished
      || payload->id == 0 || payload->span_kind > WICK_SPAN_MODULE
      || payload->step > WICK_STEP_OPTIMIZER)
    return false;
  const CachedName *name = cached_name (formatter, arena, payload->name);
  if (name == NULL)
    return false;
  WickRingSpan span = {
    .id = payload->id,
    .parent = payload->parent,
    .span_kind = (WickSpanKind)payload->span_kind,
    .step = (WickStep)payload->step,
    .measured = payload->measured != 0,
    .start_ns = payload->start_ns,
    .duration_ns = duration_ns,
    .thread = thread,
  };
  if (!end)
    {
      if (!open_add (formatter, span.id, false))
        {
          formatter->skipped++; /* the snapshot already announced it */
          return true;
        }
      note_evidence (formatter, span.start_ns);
      if (!emit_span_line (formatter, &span, false, name, ring, emit, user_data))
        formatter->skipped++;
      return true;
    }
  if (!open_remove (formatter, span.id)
      && !emit_span_line (formatter, &span, false, name, ring, emit, user_data))
    formatter->skipped++;
  note_evidence (formatter, saturating_add (span.start_ns, span.duration_ns));
  if (!emit_span_line (formatter, &span, true, name, ring, emit, user_data))
    formatter->skipped++;
  return true;
}
