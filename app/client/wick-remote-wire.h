/* wick-remote-wire.h — the remote protocol's frames and record encoding
 * (docs/protocol.md, "Remote sessions over SSH").
 *
 * `wick-trace serve --stdio` on a node and `wick-trace --remote` (or the app)
 * on the desktop talk through ssh's stdin/stdout in frames: a 16-byte header
 * (magic "WKRS", version, type, flags, payload length, decoded length) and a
 * payload, zstd-compressed when flagged. Ring records travel in RECORDS frames
 * as a compact binary encoding of WickRingRecord (below), so the desktop runs
 * libwick's own JSONL formatter on them and a capture cut by a dropped link
 * still ends as a parseable trace.
 *
 * Everything read here is hostile: the frame reader checks the magic, the
 * version, the type, both lengths against fixed limits and the zstd frame's
 * declared size before allocating; the record decoder checks every length
 * against the bytes left, every enum against its range, every string for
 * UTF-8 and embedded NULs, and extension fields for being a JSON object's
 * inside. Decoded records point into the decoder's buffer (valid until the
 * next decode).
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <wick/wick.h>

G_BEGIN_DECLS

#define WICK_REMOTE_MAGIC "WKRS"
#define WICK_REMOTE_VERSION 1
#define WICK_REMOTE_HEADER_BYTES 16
/* Largest payload on the wire, and largest once decoded. */
#define WICK_REMOTE_MAX_FRAME_BYTES (8u << 20)
#define WICK_REMOTE_MAX_DECODED_BYTES (32u << 20)
/* JSON payloads: size and nesting (json-glib's parser recurses). */
#define WICK_REMOTE_MAX_JSON_BYTES (1u << 20)
#define WICK_REMOTE_MAX_JSON_DEPTH 32
/* A whole attach snapshot, assembled from SNAPSHOT frames. */
#define WICK_REMOTE_MAX_SNAPSHOT_BYTES (G_GUINT64_CONSTANT (512) << 20)
/* Strings and arrays inside a record. */
#define WICK_REMOTE_MAX_STRING_BYTES (1u << 20)
#define WICK_REMOTE_MAX_ARRAY 4096
/* A file sent by FILE frames (what `--remote … convert` reads), and a READ's path. */
#define WICK_REMOTE_MAX_FILE_BYTES (G_GUINT64_CONSTANT (16) << 30)
#define WICK_REMOTE_MAX_PATH_BYTES 4096
/* Sessions in one SESSIONS reply. */
#define WICK_REMOTE_MAX_SESSIONS 4096

#define WICK_REMOTE_FLAG_ZSTD 0x1u
#define WICK_REMOTE_FLAG_MORE 0x2u /* SNAPSHOT, FILE: more chunks follow */

typedef enum
{
  WICK_REMOTE_HELLO = 1,    /* both ways, JSON */
  WICK_REMOTE_LIST = 2,     /* client: JSON {} */
  WICK_REMOTE_SESSIONS = 3, /* node: JSON array, as `sessions --json` */
  WICK_REMOTE_ATTACH = 4,   /* client: JSON {"pid":N,"strict":B} */
  WICK_REMOTE_ATTACHED = 5, /* node: JSON session object (+ "snapshot_error") */
  WICK_REMOTE_SNAPSHOT = 6, /* node: the attach snapshot's JSONL bytes, in chunks */
  WICK_REMOTE_RECORDS = 7,  /* node: encoded records */
  WICK_REMOTE_STATS = 8,    /* node: JSON counters, at least every 500 ms while attached */
  WICK_REMOTE_CONTROL = 9,  /* client: JSON {"pid":N,"request":{...}} */
  WICK_REMOTE_REPLY = 10,   /* node: JSON reply of a control request */
  WICK_REMOTE_ERROR = 11,   /* node: JSON {"error":"sentence"} */
  WICK_REMOTE_END = 12,     /* node: JSON, the attached stream ended */
  WICK_REMOTE_DETACH = 13,  /* client: stop streaming, JSON {} */
  WICK_REMOTE_READ = 14,    /* client: JSON {"path":"..."}: a file of the node, for convert */
  WICK_REMOTE_FILE = 15,    /* node: its bytes, in chunks (MORE on all but the last) */
  WICK_REMOTE_LAST_TYPE = 15,
} WickRemoteType;

const char *wick_remote_type_name (guint type);

typedef struct
{
  guint type;
  guint flags;
  GBytes *payload; /* decoded (decompressed) */
} WickRemoteFrame;

void wick_remote_frame_clear (WickRemoteFrame *frame);

/* Header and payload bytes of one frame; compressed with zstd when @compress
 * and it helps. */
GBytes *wick_remote_frame_encode (guint type, guint flags, const void *payload, gsize length,
                                  gboolean compress);
GBytes *wick_remote_frame_encode_json (guint type, JsonNode *node);

/* Incremental, hostile-input parser of the byte stream: feed what arrived,
 * take whole frames out. FALSE with @error (WICK_LIVE_ERROR_PROTOCOL, naming
 * the stream offset and the field) on the first bad byte; the parser is then
 * dead. */
typedef struct _WickRemoteParser WickRemoteParser;
WickRemoteParser *wick_remote_parser_new (void);
void wick_remote_parser_free (WickRemoteParser *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRemoteParser, wick_remote_parser_free)
gboolean wick_remote_parser_feed (WickRemoteParser *self, const guint8 *data, gsize length,
                                  GError **error);
/* TRUE and fills @frame when a whole frame is buffered. */
gboolean wick_remote_parser_next (WickRemoteParser *self, WickRemoteFrame *frame, GError **error);
/* Bytes of a frame begun but not complete (a deadline applies to them). */
gsize wick_remote_parser_pending (WickRemoteParser *self);

/* A JSON payload: bounded size and depth, parsed; NULL with @error. */
JsonNode *wick_remote_parse_json (GBytes *payload, const char *what, GError **error);

/* Records: append one to @out (the RECORDS payload). */
void wick_remote_record_encode (GByteArray *out, const WickRingRecord *record);

typedef struct _WickRemoteDecoder WickRemoteDecoder;
WickRemoteDecoder *wick_remote_decoder_new (void);
void wick_remote_decoder_free (WickRemoteDecoder *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickRemoteDecoder, wick_remote_decoder_free)
typedef gboolean (*WickRemoteRecordFunc) (const WickRingRecord *record, gpointer user_data);
/* Decodes every record of a RECORDS payload, calling @func for each (stops
 * when it returns FALSE). FALSE with @error naming the record and field. */
gboolean wick_remote_decode_records (WickRemoteDecoder *self, GBytes *payload,
                                     WickRemoteRecordFunc func, gpointer user_data, GError **error);

G_END_DECLS
