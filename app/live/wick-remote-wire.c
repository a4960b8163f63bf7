/* wick-remote-wire.c — frames and records of the remote protocol (see the header). */
#include "config.h"

#include "wick-remote-wire.h"

#include <string.h>
#include <zstd.h>

#include "wick-live-client.h"

/* ---- frames ---- */

static const char *const type_names[] = {
  NULL,      "hello", "list",    "sessions", "attach", "attached", "snapshot",
  "records", "stats", "control", "reply",    "error",  "end",      "detach",
  "read",    "file",
};

const char *
wick_remote_type_name (guint type)
{
  return type >= 1 && type <= WICK_REMOTE_LAST_TYPE ? type_names[type] : "unknown";
}

void
wick_remote_frame_clear (WickRemoteFrame *frame)
{
  g_clear_pointer (&frame->payload, g_bytes_unref);
  frame->type = 0;
  frame->flags = 0;
}

static void
put_header (guint8 *header, guint type, guint flags, guint32 length, guint32 decoded)
{
  memcpy (header, WICK_REMOTE_MAGIC, 4);
  header[4] = WICK_REMOTE_VERSION;
  header[5] = (guint8)type;
  guint16 f = GUINT16_TO_LE ((guint16)flags);
  memcpy (header + 6, &f, 2);
  guint32 l = GUINT32_TO_LE (length), d = GUINT32_TO_LE (decoded);
  memcpy (header + 8, &l, 4);
  memcpy (header + 12, &d, 4);
}

GBytes *
wick_remote_frame_encode (guint type, guint flags, const void *payload, gsize length,
                          gboolean compress)
{
  g_return_val_if_fail (length <= WICK_REMOTE_MAX_DECODED_BYTES, NULL);
  if (compress && length >= 256)
    {
      gsize bound = ZSTD_compressBound (length);
      guint8 *out = g_malloc (WICK_REMOTE_HEADER_BYTES + bound);
      /* Level 1: the node's CPU is the workload's; ~4x on trace records. */
      gsize n = ZSTD_compress (out + WICK_REMOTE_HEADER_BYTES, bound, payload, length, 1);
      if (!ZSTD_isError (n) && n < length && n <= WICK_REMOTE_MAX_FRAME_BYTES)
        {
          put_header (out, type, flags | WICK_REMOTE_FLAG_ZSTD, (guint32)n, (guint32)length);
          return g_bytes_new_take (out, WICK_REMOTE_HEADER_BYTES + n);
        }
      g_free (out);
    }
  g_return_val_if_fail (length <= WICK_REMOTE_MAX_FRAME_BYTES, NULL);
  guint8 *out = g_malloc (WICK_REMOTE_HEADER_BYTES + length);
  put_header (out, type, flags & ~WICK_REMOTE_FLAG_ZSTD, (guint32)length, (guint32)length);
  if (length > 0)
    memcpy (out + WICK_REMOTE_HEADER_BYTES, payload, length);
  return g_bytes_new_take (out, WICK_REMOTE_HEADER_BYTES + length);
}

GBytes *
wick_remote_frame_encode_json (guint type, JsonNode *node)
{
  g_autofree char *text = json_to_string (node, FALSE);
  return wick_remote_frame_encode (type, 0, text, strlen (text), FALSE);
}

struct _WickRemoteParser
{
  GByteArray *buffer;
  gsize start;    /* first unconsumed byte of buffer */
  guint64 offset; /* stream offset of buffer[start] */
  gboolean dead;
};

WickRemoteParser *
wick_remote_parser_new (void)
{
  WickRemoteParser *self = g_new0 (WickRemoteParser, 1);
  self->buffer = g_byte_array_new ();
  return self;
}

void
wick_remote_parser_free (WickRemoteParser *self)
{
  if (self == NULL)
    return;
  g_byte_array_unref (self->buffer);
  g_free (self);
}

static gboolean parser_fail (WickRemoteParser *self, GError **error, const char *format, ...)
  G_GNUC_PRINTF (3, 4);

static gboolean
parser_fail (WickRemoteParser *self, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  self->dead = TRUE;
  g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
               "the remote stream is broken at byte %" G_GUINT64_FORMAT ": %s", self->offset,
               message);
  return FALSE;
}

gboolean
wick_remote_parser_feed (WickRemoteParser *self, const guint8 *data, gsize length, GError **error)
{
  if (self->dead)
    return parser_fail (self, error, "the stream already failed");
  /* Compact before growing: the buffer holds at most one frame and a bit. */
  if (self->start > 0 && self->start >= self->buffer->len / 2)
    {
      g_byte_array_remove_range (self->buffer, 0, (guint)self->start);
      self->start = 0;
    }
  if (self->buffer->len - self->start + (guint64)length
      > WICK_REMOTE_HEADER_BYTES + WICK_REMOTE_MAX_FRAME_BYTES + (1u << 20))
    {
      /* The caller takes frames out after each feed: more than a frame
       * pending means the caller's reads outran it; feed in pieces. */
      if (self->buffer->len - self->start >= WICK_REMOTE_HEADER_BYTES + WICK_REMOTE_MAX_FRAME_BYTES)
        return parser_fail (self, error, "more than a whole frame is pending");
    }
  g_byte_array_append (self->buffer, data, (guint)length);
  return TRUE;
}

gsize
wick_remote_parser_pending (WickRemoteParser *self)
{
  return self->buffer->len - self->start;
}

guint64
wick_remote_parser_offset (WickRemoteParser *self)
{
  return self->offset;
}

gboolean
wick_remote_parser_next (WickRemoteParser *self, WickRemoteFrame *frame, GError **error)
{
  memset (frame, 0, sizeof *frame);
  if (self->dead)
    return parser_fail (self, error, "the stream already failed");
  gsize available = self->buffer->len - self->start;
  if (available == 0)
    return FALSE; /* (an empty GByteArray's data is NULL) */
  const guint8 *header = self->buffer->data + self->start;
  /* The magic is checked as soon as its bytes are there, so that a node
   * printing text (a shell's motd, a missing wick-trace) is named at once. */
  gsize magic_bytes = MIN (available, 4);
  if (memcmp (header, WICK_REMOTE_MAGIC, magic_bytes) != 0)
    {
      g_autofree char *cut = g_strndup ((const char *)header, MIN (available, 60));
      g_autofree char *cut_escaped = g_strescape (cut, NULL);
      return parser_fail (self, error,
                          "not a wick remote frame (magic \"WKRS\" expected, the node sent "
                          "\"%s\"): is `wick-trace serve --stdio` what the remote command runs?",
                          cut_escaped);
    }
  if (available < WICK_REMOTE_HEADER_BYTES)
    return FALSE;
  if (header[4] != WICK_REMOTE_VERSION)
    return parser_fail (self, error, "protocol version %u, this wick-trace speaks %u", header[4],
                        WICK_REMOTE_VERSION);
  guint type = header[5];
  guint16 flags;
  guint32 length, decoded;
  memcpy (&flags, header + 6, 2);
  memcpy (&length, header + 8, 4);
  memcpy (&decoded, header + 12, 4);
  flags = GUINT16_FROM_LE (flags);
  length = GUINT32_FROM_LE (length);
  decoded = GUINT32_FROM_LE (decoded);
  if (type < 1 || type > WICK_REMOTE_LAST_TYPE)
    return parser_fail (self, error, "unknown frame type %u", type);
  if ((flags & ~(WICK_REMOTE_FLAG_ZSTD | WICK_REMOTE_FLAG_MORE)) != 0)
    return parser_fail (self, error, "unknown flags 0x%x in a %s frame", flags,
                        wick_remote_type_name (type));
  if (length > WICK_REMOTE_MAX_FRAME_BYTES)
    return parser_fail (self, error, "a %s frame of %u bytes (the limit is %u)",
                        wick_remote_type_name (type), length, WICK_REMOTE_MAX_FRAME_BYTES);
  if (decoded > WICK_REMOTE_MAX_DECODED_BYTES)
    return parser_fail (self, error, "a %s frame decoding to %u bytes (the limit is %u)",
                        wick_remote_type_name (type), decoded, WICK_REMOTE_MAX_DECODED_BYTES);
  if (!(flags & WICK_REMOTE_FLAG_ZSTD) && decoded != length)
    return parser_fail (self, error, "an uncompressed %s frame of %u bytes says it decodes to %u",
                        wick_remote_type_name (type), length, decoded);
  if (available < WICK_REMOTE_HEADER_BYTES + (gsize)length)
    return FALSE;
  const guint8 *payload = header + WICK_REMOTE_HEADER_BYTES;
  GBytes *bytes;
  if (flags & WICK_REMOTE_FLAG_ZSTD)
    {
      unsigned long long declared = ZSTD_getFrameContentSize (payload, length);
      if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN
          || declared != decoded)
        return parser_fail (self, error,
                            "a %s frame's zstd data does not declare the %u bytes its header says",
                            wick_remote_type_name (type), decoded);
      guint8 *out = g_malloc (MAX (decoded, 1));
      gsize n = ZSTD_decompress (out, decoded, payload, length);
      if (ZSTD_isError (n) || n != decoded)
        {
          g_free (out);
          return parser_fail (self, error, "a %s frame's zstd data is corrupt (%s)",
                              wick_remote_type_name (type),
                              ZSTD_isError (n) ? ZSTD_getErrorName (n) : "short");
        }
      bytes = g_bytes_new_take (out, decoded);
    }
  else
    bytes = g_bytes_new (payload, length);
  frame->type = type;
  frame->flags = flags & ~WICK_REMOTE_FLAG_ZSTD;
  frame->payload = bytes;
  self->start += WICK_REMOTE_HEADER_BYTES + length;
  self->offset += WICK_REMOTE_HEADER_BYTES + length;
  return TRUE;
}

/* json-glib's parser recurses per level: refuse deep nesting before it. */
static gboolean
json_depth_ok (const char *text, gsize length)
{
  int depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];
      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        {
          if (++depth > WICK_REMOTE_MAX_JSON_DEPTH)
            return FALSE;
        }
      else if (c == '}' || c == ']')
        depth--;
    }
  return TRUE;
}

JsonNode *
wick_remote_parse_json (GBytes *payload, const char *what, GError **error)
{
  gsize length;
  const char *text = g_bytes_get_data (payload, &length);
  if (length > WICK_REMOTE_MAX_JSON_BYTES)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the node's %s is %" G_GSIZE_FORMAT " bytes of JSON (the limit is %u)", what,
                   length, WICK_REMOTE_MAX_JSON_BYTES);
      return NULL;
    }
  if (length == 0 || !g_utf8_validate (text, (gssize)length, NULL)
      || memchr (text, '\0', length) != NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the node's %s is not UTF-8 JSON text", what);
      return NULL;
    }
  if (!json_depth_ok (text, length))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                   "the node's %s nests deeper than %d levels", what, WICK_REMOTE_MAX_JSON_DEPTH);
      return NULL;
    }
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, text, (gssize)length, &local))
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL, "the node's %s: %s", what,
                   local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL, "the node's %s is empty",
                   what);
      return NULL;
    }
  return json_node_copy (root);
}

/* ---- records ---- */

static void
put_u8 (GByteArray *out, guint8 v)
{
  g_byte_array_append (out, &v, 1);
}

static void
put_u32 (GByteArray *out, guint32 v)
{
  v = GUINT32_TO_LE (v);
  g_byte_array_append (out, (const guint8 *)&v, 4);
}

static void
put_u64 (GByteArray *out, guint64 v)
{
  v = GUINT64_TO_LE (v);
  g_byte_array_append (out, (const guint8 *)&v, 8);
}

static void
put_f64 (GByteArray *out, double d)
{
  guint64 v;
  memcpy (&v, &d, 8);
  put_u64 (out, v);
}

#define ABSENT 0xffffffffu

static void
put_str (GByteArray *out, const char *s)
{
  if (s == NULL)
    {
      put_u32 (out, ABSENT);
      return;
    }
  gsize n = MIN (strlen (s), WICK_REMOTE_MAX_STRING_BYTES);
  put_u32 (out, (guint32)n);
  g_byte_array_append (out, (const guint8 *)s, (guint)n);
}

static void
put_u64s (GByteArray *out, const uint64_t *v, size_t n)
{
  n = MIN (n, WICK_REMOTE_MAX_ARRAY);
  put_u32 (out, (guint32)n);
  for (size_t i = 0; i < n; i++)
    put_u64 (out, v[i]);
}

static void
put_strs (GByteArray *out, const char *const *v, size_t n)
{
  n = MIN (n, WICK_REMOTE_MAX_ARRAY);
  put_u32 (out, (guint32)n);
  for (size_t i = 0; i < n; i++)
    put_str (out, v[i]);
}

void
wick_remote_record_encode (GByteArray *out, const WickRingRecord *r)
{
  guint start = out->len;
  put_u32 (out, 0); /* body length, set below */
  put_u8 (out, (guint8)r->kind);
  put_u32 (out, r->ring);
  switch (r->kind)
    {
      case WICK_RING_RECORD_META:
        put_str (out, r->meta.line);
        break;
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        put_u64 (out, r->span.id);
        put_u64 (out, r->span.parent);
        put_str (out, r->span.name);
        put_u8 (out, (guint8)r->span.span_kind);
        put_u8 (out, (guint8)r->span.step);
        put_u8 (out, (guint8)((r->span.measured ? 1 : 0) | (r->span.synthesized ? 2 : 0)));
        put_u64 (out, r->span.start_ns);
        put_u64 (out, r->span.duration_ns);
        put_u32 (out, r->span.thread);
        break;
      case WICK_RING_RECORD_OP:
        put_u64 (out, r->op.span);
        put_str (out, r->op.op_name);
        put_strs (out, r->op.inputs, r->op.n_inputs);
        put_str (out, r->op.output);
        put_u64s (out, r->op.shape, r->op.rank);
        put_str (out, r->op.dtype);
        put_str (out, r->op.device);
        put_u64 (out, r->op.duration_ns);
        put_u64 (out, r->op.timestamp_ns);
        put_u8 (out, r->op.has_output_dense_bytes);
        put_u64 (out, r->op.output_dense_bytes);
        put_u64 (out, r->op.input_dense_bytes);
        break;
      case WICK_RING_RECORD_TENSOR:
        put_u64 (out, r->tensor.span);
        put_str (out, r->tensor.tensor_id);
        put_str (out, r->tensor.label);
        put_u64s (out, r->tensor.shape, r->tensor.rank);
        put_str (out, r->tensor.dtype);
        put_str (out, r->tensor.device);
        put_u8 (out,
                (guint8)((r->tensor.requires_grad ? 1 : 0) | (r->tensor.has_dense_bytes ? 2 : 0)));
        put_u64 (out, r->tensor.dense_bytes);
        put_u8 (out, (guint8)r->tensor.category);
        break;
      case WICK_RING_RECORD_TENSOR_STATS:
        put_u64 (out, r->tensor_stats.span);
        put_str (out, r->tensor_stats.label);
        put_u64s (out, r->tensor_stats.shape, r->tensor_stats.rank);
        put_str (out, r->tensor_stats.dtype);
        put_u64 (out, r->tensor_stats.elements);
        put_u64 (out, r->tensor_stats.non_finite);
        put_f64 (out, r->tensor_stats.rms);
        put_f64 (out, r->tensor_stats.abs_max);
        put_f64 (out, r->tensor_stats.mean);
        break;
      case WICK_RING_RECORD_MEMORY:
        put_u64 (out, r->memory.timestamp_ns);
        put_str (out, r->memory.storage_id);
        put_str (out, r->memory.tensor_id);
        put_u64 (out, r->memory.span);
        put_str (out, r->memory.op_name);
        put_str (out, r->memory.device);
        put_u64 (out, r->memory.bytes);
        put_u8 (out, (guint8)r->memory.action);
        put_u64s (out, r->memory.shape, r->memory.rank);
        put_str (out, r->memory.dtype);
        put_u8 (out, (guint8)r->memory.category);
        break;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        put_u64 (out, r->device_memory.timestamp_ns);
        put_str (out, r->device_memory.device);
        put_u8 (out, (guint8)((r->device_memory.has_used_bytes ? 1 : 0)
                              | (r->device_memory.has_free_bytes ? 2 : 0)
                              | (r->device_memory.has_reserved_bytes ? 4 : 0)
                              | (r->device_memory.has_capacity_bytes ? 8 : 0)));
        put_u64 (out, r->device_memory.used_bytes);
        put_u64 (out, r->device_memory.free_bytes);
        put_u64 (out, r->device_memory.reserved_bytes);
        put_u64 (out, r->device_memory.capacity_bytes);
        break;
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        put_u64 (out, r->device_interval.span);
        put_str (out, r->device_interval.device);
        put_str (out, r->device_interval.stream_id);
        put_str (out, r->device_interval.clock_id);
        put_str (out, r->device_interval.backend);
        put_u64 (out, r->device_interval.start_ns);
        put_u64 (out, r->device_interval.duration_ns);
        break;
      case WICK_RING_RECORD_GRADIENT:
        put_u64 (out, r->gradient.event_number);
        put_str (out, r->gradient.root);
        put_str (out, r->gradient.key);
        put_u8 (out, (guint8)r->gradient.state);
        put_u8 (out, r->gradient.has_norm);
        put_f64 (out, r->gradient.norm);
        break;
      case WICK_RING_RECORD_CALL_EDGE:
        put_u64 (out, r->call_edge.from);
        put_u64 (out, r->call_edge.to);
        put_u64 (out, r->call_edge.host_duration_ns);
        break;
      case WICK_RING_RECORD_DATA_EDGE:
        put_str (out, r->data_edge.from_tensor);
        put_str (out, r->data_edge.to_tensor);
        break;
      case WICK_RING_RECORD_TERMINAL:
        put_u8 (out, (guint8)r->terminal.outcome);
        put_u64 (out, r->terminal.timestamp_ns);
        put_str (out, r->terminal.reason);
        break;
      case WICK_RING_RECORD_EXTENSION:
        put_str (out, r->extension.kind);
        put_u64 (out, r->extension.timestamp_ns);
        put_str (out, r->extension.json_fields);
        break;
      case WICK_RING_RECORD_DROPPED:
        put_u64 (out, r->dropped.count);
        put_u64 (out, r->dropped.first_ns);
        put_u64 (out, r->dropped.last_ns);
        put_u64 (out, r->dropped.total);
        break;
      case WICK_RING_RECORD_LOST:
        put_u64 (out, r->lost.count);
        put_u64 (out, r->lost.after_ns);
        break;
      case WICK_RING_RECORD_THREAD:
        put_u32 (out, r->thread.number);
        put_u32 (out, (guint32)r->thread.os_tid);
        put_u64 (out, r->thread.timestamp_ns);
        put_str (out, r->thread.name);
        break;
    }
  guint32 body = GUINT32_TO_LE (out->len - start - 4);
  memcpy (out->data + start, &body, 4);
}

/* Decoding: a cursor over one record's body. Strings are copied with a NUL
 * into the decoder's scratch, arrays into aligned storage; both are sized
 * from the body before decoding starts, so no pointer moves during it. */
struct _WickRemoteDecoder
{
  char *text; /* strings, NUL-terminated */
  gsize text_size;
  guint64 *values; /* u64 arrays */
  gsize values_size;
  const char **strs; /* string arrays */
  gsize strs_size;
  guint64 index; /* records decoded so far */
};

typedef struct
{
  WickRemoteDecoder *d;
  const guint8 *p;
  gsize left;
  gsize text_used, values_used, strs_used;
  const char *field;
  gboolean bad;
  char why[160];
} Cursor;

WickRemoteDecoder *
wick_remote_decoder_new (void)
{
  return g_new0 (WickRemoteDecoder, 1);
}

void
wick_remote_decoder_free (WickRemoteDecoder *self)
{
  if (self == NULL)
    return;
  g_free (self->text);
  g_free (self->values);
  g_free (self->strs);
  g_free (self);
}

static void
bad (Cursor *c, const char *why)
{
  if (!c->bad)
    g_strlcpy (c->why, why, sizeof c->why);
  c->bad = TRUE;
  c->left = 0;
}

static gboolean
take (Cursor *c, void *out, gsize n)
{
  if (c->bad)
    return FALSE;
  if (c->left < n)
    {
      bad (c, "the record ends inside it");
      return FALSE;
    }
  memcpy (out, c->p, n);
  c->p += n;
  c->left -= n;
  return TRUE;
}

static guint8
get_u8 (Cursor *c, const char *field)
{
  guint8 v = 0;
  c->field = field;
  take (c, &v, 1);
  return v;
}

static guint32
get_u32 (Cursor *c, const char *field)
{
  guint32 v = 0;
  c->field = field;
  take (c, &v, 4);
  return GUINT32_FROM_LE (v);
}

static guint64
get_u64 (Cursor *c, const char *field)
{
  guint64 v = 0;
  c->field = field;
  take (c, &v, 8);
  return GUINT64_FROM_LE (v);
}

static double
get_f64 (Cursor *c, const char *field)
{
  guint64 v = get_u64 (c, field);
  double d;
  memcpy (&d, &v, 8);
  return d;
}

/* @optional: the absent marker gives NULL; otherwise it is an error. */
static const char *
get_str_full (Cursor *c, const char *field, gboolean optional)
{
  guint32 n = get_u32 (c, field);
  c->field = field;
  if (c->bad)
    return NULL;
  if (n == ABSENT)
    {
      if (!optional)
        bad (c, "a required string is absent");
      return NULL;
    }
  if (n > WICK_REMOTE_MAX_STRING_BYTES || n > c->left)
    {
      bad (c, n > c->left ? "the string runs past the record" : "the string is too long");
      return NULL;
    }
  if (memchr (c->p, '\0', n) != NULL || !g_utf8_validate ((const char *)c->p, n, NULL))
    {
      bad (c, "the string is not UTF-8 text without NULs");
      return NULL;
    }
  g_assert (c->text_used + n + 1 <= c->d->text_size);
  char *s = c->d->text + c->text_used;
  memcpy (s, c->p, n);
  s[n] = '\0';
  c->text_used += n + 1;
  c->p += n;
  c->left -= n;
  return s;
}

static const char *
get_str (Cursor *c, const char *field)
{
  return get_str_full (c, field, FALSE);
}

static const char *
get_opt_str (Cursor *c, const char *field)
{
  return get_str_full (c, field, TRUE);
}

static const uint64_t *
get_u64s (Cursor *c, const char *field, size_t *n_out)
{
  guint32 n = get_u32 (c, field);
  *n_out = 0;
  if (c->bad)
    return NULL;
  if (n > WICK_REMOTE_MAX_ARRAY || (guint64)n * 8 > c->left)
    {
      bad (c, "the array's count is larger than the record");
      return NULL;
    }
  guint64 *v = c->d->values + c->values_used;
  g_assert (c->values_used + n <= c->d->values_size);
  for (guint32 i = 0; i < n; i++)
    v[i] = get_u64 (c, field);
  c->values_used += n;
  *n_out = n;
  return v;
}

static const char *const *
get_strs (Cursor *c, const char *field, size_t *n_out)
{
  guint32 n = get_u32 (c, field);
  *n_out = 0;
  if (c->bad)
    return NULL;
  if (n > WICK_REMOTE_MAX_ARRAY || (guint64)n * 4 > c->left)
    {
      bad (c, "the array's count is larger than the record");
      return NULL;
    }
  g_assert (c->strs_used + n <= c->d->strs_size);
  const char **v = c->d->strs + c->strs_used;
  for (guint32 i = 0; i < n && !c->bad; i++)
    v[i] = get_str (c, field);
  c->strs_used += n;
  *n_out = n;
  return v;
}

static void
check_range (Cursor *c, guint value, guint max, const char *field)
{
  if (value > max)
    {
      c->field = field;
      bad (c, "the value is out of range");
    }
}

/* Extension fields go into the trace line as they are: they must be the
 * inside of a JSON object. */
static void
check_fields (Cursor *c, const char *fields)
{
  if (fields == NULL || c->bad || fields[0] == '\0')
    return;
  g_autofree char *object = g_strdup_printf ("{%s}", fields);
  g_autoptr (GBytes) bytes = g_bytes_new_static (object, strlen (object));
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = wick_remote_parse_json (bytes, "extension fields", &error);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      c->field = "json_fields";
      bad (c, "not the inside of a JSON object");
    }
}

static void
ensure (WickRemoteDecoder *d, gsize body)
{
  /* Each string costs at least its 4-byte length: body + body/4 + 1 bytes
   * hold them all with NULs. Arrays are at most body/8 values, body/4 strings. */
  gsize text = body + body / 4 + 1, values = body / 8 + 1, strs = body / 4 + 1;
  if (d->text_size < text)
    {
      d->text = g_realloc (d->text, text);
      d->text_size = text;
    }
  if (d->values_size < values)
    {
      d->values = g_renew (guint64, d->values, values);
      d->values_size = values;
    }
  if (d->strs_size < strs)
    {
      d->strs = g_renew (const char *, d->strs, strs);
      d->strs_size = strs;
    }
}

static void
decode_body (Cursor *c, WickRingRecord *r)
{
  memset (r, 0, sizeof *r);
  guint kind = get_u8 (c, "kind");
  r->kind = (WickRingRecordKind)kind;
  r->ring = get_u32 (c, "ring");
  if (c->bad)
    return;
  switch (kind)
    {
      case WICK_RING_RECORD_META:
        r->meta.line = get_str (c, "meta.line");
        break;
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        {
          r->span.id = get_u64 (c, "span.id");
          r->span.parent = get_u64 (c, "span.parent");
          r->span.name = get_str (c, "span.name");
          guint span_kind = get_u8 (c, "span.span_kind"), step = get_u8 (c, "span.step");
          guint flags = get_u8 (c, "span.flags");
          check_range (c, span_kind, WICK_SPAN_MODULE, "span.span_kind");
          check_range (c, step, WICK_STEP_OPTIMIZER, "span.step");
          check_range (c, flags, 3, "span.flags");
          r->span.span_kind = (WickSpanKind)span_kind;
          r->span.step = (WickStep)step;
          r->span.measured = (flags & 1) != 0;
          r->span.synthesized = (flags & 2) != 0;
          r->span.start_ns = get_u64 (c, "span.start_ns");
          r->span.duration_ns = get_u64 (c, "span.duration_ns");
          r->span.thread = get_u32 (c, "span.thread");
          if (!c->bad && r->span.id == 0)
            {
              c->field = "span.id";
              bad (c, "span id 0 is not a span");
            }
          break;
        }
      case WICK_RING_RECORD_OP:
        r->op.span = get_u64 (c, "op.span");
        r->op.op_name = get_str (c, "op.op_name");
        r->op.inputs = get_strs (c, "op.inputs", &r->op.n_inputs);
        r->op.output = get_opt_str (c, "op.output");
        r->op.shape = get_u64s (c, "op.shape", &r->op.rank);
        r->op.dtype = get_str (c, "op.dtype");
        r->op.device = get_str (c, "op.device");
        r->op.duration_ns = get_u64 (c, "op.duration_ns");
        r->op.timestamp_ns = get_u64 (c, "op.timestamp_ns");
        {
          guint has = get_u8 (c, "op.has_output_dense_bytes");
          check_range (c, has, 1, "op.has_output_dense_bytes");
          r->op.has_output_dense_bytes = has != 0;
        }
        r->op.output_dense_bytes = get_u64 (c, "op.output_dense_bytes");
        r->op.input_dense_bytes = get_u64 (c, "op.input_dense_bytes");
        break;
      case WICK_RING_RECORD_TENSOR:
        {
          r->tensor.span = get_u64 (c, "tensor.span");
          r->tensor.tensor_id = get_str (c, "tensor.tensor_id");
          r->tensor.label = get_opt_str (c, "tensor.label");
          r->tensor.shape = get_u64s (c, "tensor.shape", &r->tensor.rank);
          r->tensor.dtype = get_str (c, "tensor.dtype");
          r->tensor.device = get_str (c, "tensor.device");
          guint flags = get_u8 (c, "tensor.flags");
          check_range (c, flags, 3, "tensor.flags");
          r->tensor.requires_grad = (flags & 1) != 0;
          r->tensor.has_dense_bytes = (flags & 2) != 0;
          r->tensor.dense_bytes = get_u64 (c, "tensor.dense_bytes");
          guint category = get_u8 (c, "tensor.category");
          check_range (c, category, WICK_N_CATEGORIES - 1, "tensor.category");
          r->tensor.category = (WickMemoryCategory)category;
          break;
        }
      case WICK_RING_RECORD_TENSOR_STATS:
        r->tensor_stats.span = get_u64 (c, "tensor_stats.span");
        r->tensor_stats.label = get_str (c, "tensor_stats.label");
        r->tensor_stats.shape = get_u64s (c, "tensor_stats.shape", &r->tensor_stats.rank);
        r->tensor_stats.dtype = get_str (c, "tensor_stats.dtype");
        r->tensor_stats.elements = get_u64 (c, "tensor_stats.elements");
        r->tensor_stats.non_finite = get_u64 (c, "tensor_stats.non_finite");
        r->tensor_stats.rms = get_f64 (c, "tensor_stats.rms");
        r->tensor_stats.abs_max = get_f64 (c, "tensor_stats.abs_max");
        r->tensor_stats.mean = get_f64 (c, "tensor_stats.mean");
        break;
      case WICK_RING_RECORD_MEMORY:
        {
          r->memory.timestamp_ns = get_u64 (c, "memory.timestamp_ns");
          r->memory.storage_id = get_str (c, "memory.storage_id");
          r->memory.tensor_id = get_str (c, "memory.tensor_id");
          r->memory.span = get_u64 (c, "memory.span");
          r->memory.op_name = get_opt_str (c, "memory.op_name");
          r->memory.device = get_str (c, "memory.device");
          r->memory.bytes = get_u64 (c, "memory.bytes");
          guint action = get_u8 (c, "memory.action");
          check_range (c, action, WICK_MEMORY_FREE, "memory.action");
          r->memory.action = (WickMemoryAction)action;
          r->memory.shape = get_u64s (c, "memory.shape", &r->memory.rank);
          r->memory.dtype = get_str (c, "memory.dtype");
          guint category = get_u8 (c, "memory.category");
          check_range (c, category, WICK_N_CATEGORIES - 1, "memory.category");
          r->memory.category = (WickMemoryCategory)category;
          break;
        }
      case WICK_RING_RECORD_DEVICE_MEMORY:
        {
          r->device_memory.timestamp_ns = get_u64 (c, "device_memory.timestamp_ns");
          r->device_memory.device = get_str (c, "device_memory.device");
          guint has = get_u8 (c, "device_memory.flags");
          check_range (c, has, 15, "device_memory.flags");
          r->device_memory.has_used_bytes = (has & 1) != 0;
          r->device_memory.has_free_bytes = (has & 2) != 0;
          r->device_memory.has_reserved_bytes = (has & 4) != 0;
          r->device_memory.has_capacity_bytes = (has & 8) != 0;
          r->device_memory.used_bytes = get_u64 (c, "device_memory.used_bytes");
          r->device_memory.free_bytes = get_u64 (c, "device_memory.free_bytes");
          r->device_memory.reserved_bytes = get_u64 (c, "device_memory.reserved_bytes");
          r->device_memory.capacity_bytes = get_u64 (c, "device_memory.capacity_bytes");
          break;
        }
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        r->device_interval.span = get_u64 (c, "device_interval.span");
        r->device_interval.device = get_str (c, "device_interval.device");
        r->device_interval.stream_id = get_str (c, "device_interval.stream_id");
        r->device_interval.clock_id = get_str (c, "device_interval.clock_id");
        r->device_interval.backend = get_str (c, "device_interval.backend");
        r->device_interval.start_ns = get_u64 (c, "device_interval.start_ns");
        r->device_interval.duration_ns = get_u64 (c, "device_interval.duration_ns");
        break;
      case WICK_RING_RECORD_GRADIENT:
        {
          r->gradient.event_number = get_u64 (c, "gradient.event_number");
          r->gradient.root = get_str (c, "gradient.root");
          r->gradient.key = get_str (c, "gradient.key");
          guint state = get_u8 (c, "gradient.state"), has = get_u8 (c, "gradient.has_norm");
          check_range (c, state, WICK_GRADIENT_NON_FINITE, "gradient.state");
          check_range (c, has, 1, "gradient.has_norm");
          r->gradient.state = (WickGradientState)state;
          r->gradient.has_norm = has != 0;
          r->gradient.norm = get_f64 (c, "gradient.norm");
          break;
        }
      case WICK_RING_RECORD_CALL_EDGE:
        r->call_edge.from = get_u64 (c, "call_edge.from");
        r->call_edge.to = get_u64 (c, "call_edge.to");
        r->call_edge.host_duration_ns = get_u64 (c, "call_edge.host_duration_ns");
        break;
      case WICK_RING_RECORD_DATA_EDGE:
        r->data_edge.from_tensor = get_str (c, "data_edge.from_tensor");
        r->data_edge.to_tensor = get_str (c, "data_edge.to_tensor");
        break;
      case WICK_RING_RECORD_TERMINAL:
        {
          guint outcome = get_u8 (c, "terminal.outcome");
          check_range (c, outcome, WICK_OUTCOME_FAILED, "terminal.outcome");
          r->terminal.outcome = (WickOutcome)outcome;
          r->terminal.timestamp_ns = get_u64 (c, "terminal.timestamp_ns");
          r->terminal.reason = get_opt_str (c, "terminal.reason");
          break;
        }
      case WICK_RING_RECORD_EXTENSION:
        r->extension.kind = get_str (c, "extension.kind");
        r->extension.timestamp_ns = get_u64 (c, "extension.timestamp_ns");
        r->extension.json_fields = get_str (c, "extension.json_fields");
        if (!c->bad && !g_str_has_prefix (r->extension.kind, "wick_"))
          {
            c->field = "extension.kind";
            bad (c, "an extension kind must start with \"wick_\"");
          }
        if (!c->bad)
          for (const char *k = r->extension.kind; *k != '\0'; k++)
            if (!g_ascii_isalnum (*k) && *k != '_')
              {
                c->field = "extension.kind";
                bad (c, "an extension kind is letters, digits and '_'");
                break;
              }
        check_fields (c, r->extension.json_fields);
        break;
      case WICK_RING_RECORD_DROPPED:
        r->dropped.count = get_u64 (c, "dropped.count");
        r->dropped.first_ns = get_u64 (c, "dropped.first_ns");
        r->dropped.last_ns = get_u64 (c, "dropped.last_ns");
        r->dropped.total = get_u64 (c, "dropped.total");
        break;
      case WICK_RING_RECORD_LOST:
        r->lost.count = get_u64 (c, "lost.count");
        r->lost.after_ns = get_u64 (c, "lost.after_ns");
        break;
      case WICK_RING_RECORD_THREAD:
        r->thread.number = get_u32 (c, "thread.number");
        r->thread.os_tid = (int32_t)get_u32 (c, "thread.os_tid");
        r->thread.timestamp_ns = get_u64 (c, "thread.timestamp_ns");
        r->thread.name = get_str (c, "thread.name");
        break;
      default:
        c->field = "kind";
        bad (c, "unknown record kind");
        return;
    }
  if (!c->bad && c->left != 0)
    {
      c->field = "(end)";
      bad (c, "bytes left over after the record's fields");
    }
}

gboolean
wick_remote_decode_records (WickRemoteDecoder *self, GBytes *payload, WickRemoteRecordFunc func,
                            gpointer user_data, GError **error)
{
  gsize length;
  const guint8 *p = g_bytes_get_data (payload, &length);
  gsize offset = 0;
  while (offset < length)
    {
      guint32 body;
      if (length - offset < 4)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "remote record %" G_GUINT64_FORMAT ": a record length cut at the end of "
                       "its frame",
                       self->index);
          return FALSE;
        }
      memcpy (&body, p + offset, 4);
      body = GUINT32_FROM_LE (body);
      if (body > length - offset - 4 || body < 5)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "remote record %" G_GUINT64_FORMAT ": length %u does not fit its frame "
                       "(%" G_GSIZE_FORMAT " bytes left)",
                       self->index, body, length - offset - 4);
          return FALSE;
        }
      ensure (self, body);
      Cursor c = { .d = self, .p = p + offset + 4, .left = body, .field = "kind" };
      WickRingRecord record;
      decode_body (&c, &record);
      if (c.bad)
        {
          g_set_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL,
                       "remote record %" G_GUINT64_FORMAT " (kind %u), field %s: %s", self->index,
                       (guint)record.kind, c.field, c.why);
          return FALSE;
        }
      self->index++;
      offset += 4 + (gsize)body;
      if (!func (&record, user_data))
        return TRUE;
    }
  return TRUE;
}
