/* wick-remote-wire.c — frames and records of the remote protocol (see the header). */
#include "config.h"

#include "wick-remote-wire.h"

#include <stddef.h>
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

/* One description of each record kind's fields, in wire order, read by both
 * the encoder and the decoder (so the two cannot disagree): a field's type,
 * its name in errors, where it lives in WickRingRecord, and its bound. */
typedef enum
{
  WIRE_U8,      /* an enum or bool of @size bytes: at most @max */
  WIRE_U32,     /* uint32_t, or int32_t (@size 4 either way) */
  WIRE_U64,
  WIRE_F64,
  WIRE_STR,     /* required */
  WIRE_OPT_STR, /* NULL as the absent marker */
  WIRE_U64S,    /* const uint64_t *, its size_t count at @count */
  WIRE_STRS,    /* const char *const *, its size_t count at @count */
  WIRE_FLAGS,   /* one u8: bit i is the bool at @bits[i] (@max bits) */
} WireType;

typedef struct
{
  WireType type;
  const char *name;
  guint16 offset;
  guint8 size;
  guint8 max;
  guint16 count;
  guint16 bits[4];
} WireField;

#define AT(member) ((guint16)offsetof (WickRingRecord, member))
#define SIZE(member) ((guint8)sizeof (((WickRingRecord *)NULL)->member))
#define U8(member, maximum) { WIRE_U8, #member, AT (member), SIZE (member), (maximum), 0, { 0 } }
#define U32(member) { WIRE_U32, #member, AT (member), SIZE (member), 0, 0, { 0 } }
#define U64(member) { WIRE_U64, #member, AT (member), 8, 0, 0, { 0 } }
#define F64(member) { WIRE_F64, #member, AT (member), 8, 0, 0, { 0 } }
#define STR(member) { WIRE_STR, #member, AT (member), 0, 0, 0, { 0 } }
#define OPT_STR(member) { WIRE_OPT_STR, #member, AT (member), 0, 0, 0, { 0 } }
#define U64S(member, n) { WIRE_U64S, #member, AT (member), 0, 0, AT (n), { 0 } }
#define STRS(member, n) { WIRE_STRS, #member, AT (member), 0, 0, AT (n), { 0 } }
#define FLAGS2(name, a, b) { WIRE_FLAGS, name, 0, 0, 2, 0, { AT (a), AT (b) } }
#define FLAGS4(name, a, b, c, d) { WIRE_FLAGS, name, 0, 0, 4, 0, { AT (a), AT (b), AT (c), AT (d) } }
#define END { WIRE_U8, NULL, 0, 0, 0, 0, { 0 } }

static const WireField meta_fields[] = { STR (meta.line), END };
static const WireField span_fields[] = {
  U64 (span.id),
  U64 (span.parent),
  STR (span.name),
  U8 (span.span_kind, WICK_SPAN_MODULE),
  U8 (span.step, WICK_STEP_OPTIMIZER),
  FLAGS2 ("span.flags", span.measured, span.synthesized),
  U64 (span.start_ns),
  U64 (span.duration_ns),
  U32 (span.thread),
  END,
};
static const WireField op_fields[] = {
  U64 (op.span),
  STR (op.op_name),
  STRS (op.inputs, op.n_inputs),
  OPT_STR (op.output),
  U64S (op.shape, op.rank),
  STR (op.dtype),
  STR (op.device),
  U64 (op.duration_ns),
  U64 (op.timestamp_ns),
  U8 (op.has_output_dense_bytes, 1),
  U64 (op.output_dense_bytes),
  U64 (op.input_dense_bytes),
  END,
};
static const WireField tensor_fields[] = {
  U64 (tensor.span),
  STR (tensor.tensor_id),
  OPT_STR (tensor.label),
  U64S (tensor.shape, tensor.rank),
  STR (tensor.dtype),
  STR (tensor.device),
  FLAGS2 ("tensor.flags", tensor.requires_grad, tensor.has_dense_bytes),
  U64 (tensor.dense_bytes),
  U8 (tensor.category, WICK_N_CATEGORIES - 1),
  END,
};
static const WireField tensor_stats_fields[] = {
  U64 (tensor_stats.span),
  STR (tensor_stats.label),
  U64S (tensor_stats.shape, tensor_stats.rank),
  STR (tensor_stats.dtype),
  U64 (tensor_stats.elements),
  U64 (tensor_stats.non_finite),
  F64 (tensor_stats.rms),
  F64 (tensor_stats.abs_max),
  F64 (tensor_stats.mean),
  END,
};
static const WireField memory_fields[] = {
  U64 (memory.timestamp_ns),
  STR (memory.storage_id),
  STR (memory.tensor_id),
  U64 (memory.span),
  OPT_STR (memory.op_name),
  STR (memory.device),
  U64 (memory.bytes),
  U8 (memory.action, WICK_MEMORY_FREE),
  U64S (memory.shape, memory.rank),
  STR (memory.dtype),
  U8 (memory.category, WICK_N_CATEGORIES - 1),
  END,
};
static const WireField device_memory_fields[] = {
  U64 (device_memory.timestamp_ns),
  STR (device_memory.device),
  FLAGS4 ("device_memory.flags", device_memory.has_used_bytes, device_memory.has_free_bytes,
          device_memory.has_reserved_bytes, device_memory.has_capacity_bytes),
  U64 (device_memory.used_bytes),
  U64 (device_memory.free_bytes),
  U64 (device_memory.reserved_bytes),
  U64 (device_memory.capacity_bytes),
  END,
};
static const WireField device_interval_fields[] = {
  U64 (device_interval.span),
  STR (device_interval.device),
  STR (device_interval.stream_id),
  STR (device_interval.clock_id),
  STR (device_interval.backend),
  U64 (device_interval.start_ns),
  U64 (device_interval.duration_ns),
  END,
};
static const WireField gradient_fields[] = {
  U64 (gradient.event_number),
  STR (gradient.root),
  STR (gradient.key),
  U8 (gradient.state, WICK_GRADIENT_NON_FINITE),
  U8 (gradient.has_norm, 1),
  F64 (gradient.norm),
  END,
};
static const WireField call_edge_fields[] = {
  U64 (call_edge.from),
  U64 (call_edge.to),
  U64 (call_edge.host_duration_ns),
  END,
};
static const WireField data_edge_fields[] = {
  STR (data_edge.from_tensor),
  STR (data_edge.to_tensor),
  END,
};
static const WireField terminal_fields[] = {
  U8 (terminal.outcome, WICK_OUTCOME_FAILED),
  U64 (terminal.timestamp_ns),
  OPT_STR (terminal.reason),
  END,
};
static const WireField extension_fields[] = {
  STR (extension.kind),
  U64 (extension.timestamp_ns),
  STR (extension.json_fields),
  END,
};
static const WireField dropped_fields[] = {
  U64 (dropped.count),
  U64 (dropped.first_ns),
  U64 (dropped.last_ns),
  U64 (dropped.total),
  END,
};
static const WireField lost_fields[] = { U64 (lost.count), U64 (lost.after_ns), END };
static const WireField thread_fields[] = {
  U32 (thread.number),
  U32 (thread.os_tid),
  U64 (thread.timestamp_ns),
  STR (thread.name),
  END,
};

/* The fields of @kind, NULL for a kind the wire does not carry. */
static const WireField *
fields_of (guint kind)
{
  switch (kind)
    {
      case WICK_RING_RECORD_META:
        return meta_fields;
      case WICK_RING_RECORD_SPAN_START:
      case WICK_RING_RECORD_SPAN_END:
        return span_fields;
      case WICK_RING_RECORD_OP:
        return op_fields;
      case WICK_RING_RECORD_TENSOR:
        return tensor_fields;
      case WICK_RING_RECORD_TENSOR_STATS:
        return tensor_stats_fields;
      case WICK_RING_RECORD_MEMORY:
        return memory_fields;
      case WICK_RING_RECORD_DEVICE_MEMORY:
        return device_memory_fields;
      case WICK_RING_RECORD_DEVICE_INTERVAL:
        return device_interval_fields;
      case WICK_RING_RECORD_GRADIENT:
        return gradient_fields;
      case WICK_RING_RECORD_CALL_EDGE:
        return call_edge_fields;
      case WICK_RING_RECORD_DATA_EDGE:
        return data_edge_fields;
      case WICK_RING_RECORD_TERMINAL:
        return terminal_fields;
      case WICK_RING_RECORD_EXTENSION:
        return extension_fields;
      case WICK_RING_RECORD_DROPPED:
        return dropped_fields;
      case WICK_RING_RECORD_LOST:
        return lost_fields;
      case WICK_RING_RECORD_THREAD:
        return thread_fields;
      default:
        return NULL;
    }
}

/* A bool or uint8 (1 byte), an enum, uint32_t or int32_t (4) of a record */
G_STATIC_ASSERT (sizeof (WickSpanKind) == 4 && sizeof (bool) == 1);

static guint
read_small (const guint8 *base, guint16 offset, guint8 size)
{
  if (size == 1)
    return base[offset];
  guint32 v;
  memcpy (&v, base + offset, 4);
  return v;
}

static void
write_small (guint8 *base, guint16 offset, guint8 size, guint value)
{
  if (size == 1)
    base[offset] = (guint8)value;
  else
    {
      guint32 v = value;
      memcpy (base + offset, &v, 4);
    }
}

void
wick_remote_record_encode (GByteArray *out, const WickRingRecord *r)
{
  guint start = out->len;
  put_u32 (out, 0); /* body length, set below */
  put_u8 (out, (guint8)r->kind);
  put_u32 (out, r->ring);
  const WireField *fields = fields_of (r->kind);
  const guint8 *base = (const guint8 *)r;
  for (const WireField *f = fields; f != NULL && f->name != NULL; f++)
    {
      const guint8 *at = base + f->offset;
      switch (f->type)
        {
          case WIRE_U8:
            put_u8 (out, (guint8)read_small (base, f->offset, f->size));
            break;
          case WIRE_U32:
            put_u32 (out, (guint32)read_small (base, f->offset, f->size));
            break;
          case WIRE_U64:
          case WIRE_F64:
            {
              guint64 v; /* a double's bits as they are */
              memcpy (&v, at, 8);
              put_u64 (out, v);
              break;
            }
          case WIRE_STR:
          case WIRE_OPT_STR:
            {
              const char *s;
              memcpy (&s, at, sizeof s);
              put_str (out, s);
              break;
            }
          case WIRE_U64S:
          case WIRE_STRS:
            {
              const void *v;
              size_t n;
              memcpy (&v, at, sizeof v);
              memcpy (&n, base + f->count, sizeof n);
              if (f->type == WIRE_U64S)
                put_u64s (out, v, n);
              else
                put_strs (out, v, n);
              break;
            }
          case WIRE_FLAGS:
            {
              guint8 bits = 0;
              for (guint i = 0; i < f->max; i++)
                if (base[f->bits[i]] != 0) /* a bool */
                  bits |= (guint8)(1u << i);
              put_u8 (out, bits);
              break;
            }
        }
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
  const WireField *fields = fields_of (kind);
  if (fields == NULL)
    {
      c->field = "kind";
      bad (c, "unknown record kind");
      return;
    }
  guint8 *base = (guint8 *)r;
  for (const WireField *f = fields; f->name != NULL && !c->bad; f++)
    {
      guint8 *at = base + f->offset;
      switch (f->type)
        {
          case WIRE_U8:
            {
              guint v = get_u8 (c, f->name);
              check_range (c, v, f->max, f->name);
              write_small (base, f->offset, f->size, v);
              break;
            }
          case WIRE_U32:
            write_small (base, f->offset, f->size, get_u32 (c, f->name));
            break;
          case WIRE_U64:
          case WIRE_F64:
            {
              guint64 v = get_u64 (c, f->name);
              memcpy (at, &v, 8);
              break;
            }
          case WIRE_STR:
          case WIRE_OPT_STR:
            {
              const char *s = get_str_full (c, f->name, f->type == WIRE_OPT_STR);
              memcpy (at, &s, sizeof s);
              break;
            }
          case WIRE_U64S:
          case WIRE_STRS:
            {
              size_t n = 0;
              const void *v = f->type == WIRE_U64S ? (const void *)get_u64s (c, f->name, &n)
                                                   : (const void *)get_strs (c, f->name, &n);
              memcpy (at, &v, sizeof v);
              memcpy (base + f->count, &n, sizeof n);
              break;
            }
          case WIRE_FLAGS:
            {
              guint v = get_u8 (c, f->name);
              check_range (c, v, (1u << f->max) - 1, f->name);
              for (guint i = 0; i < f->max; i++)
                base[f->bits[i]] = (v >> i) & 1; /* a bool */
              break;
            }
        }
    }
  if (c->bad)
    return;
  if ((kind == WICK_RING_RECORD_SPAN_START || kind == WICK_RING_RECORD_SPAN_END)
      && r->span.id == 0)
    {
      c->field = "span.id";
      bad (c, "span id 0 is not a span");
    }
  if (kind == WICK_RING_RECORD_EXTENSION)
    {
      c->field = "extension.kind";
      if (!g_str_has_prefix (r->extension.kind, "wick_"))
        bad (c, "an extension kind must start with \"wick_\"");
      for (const char *k = r->extension.kind; *k != '\0' && !c->bad; k++)
        if (!g_ascii_isalnum (*k) && *k != '_')
          bad (c, "an extension kind is letters, digits and '_'");
      check_fields (c, r->extension.json_fields);
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
