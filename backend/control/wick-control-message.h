/* wick-control-message.h — the control protocol's messages: framing, a bounded
 * parser for requests and a bounded writer for replies.
 *
 * Framing: every message is a 4-byte little-endian length N followed by N bytes
 * of UTF-8 JSON, 1 <= N <= WICK_CONTROL_MAX_MESSAGE. A request is one flat JSON
 * object: member values are strings, numbers, true, false or null (no arrays or
 * nested objects), at most WICK_CONTROL_MAX_FIELDS members, keys at most
 * WICK_CONTROL_MAX_KEY bytes, no duplicate keys, nothing after the object but
 * whitespace. It must carry "v": WICK_CONTROL_PROTOCOL_VERSION and
 * "command": a string. Replies are JSON objects written by WickControlWriter,
 * which never grows past WICK_CONTROL_MAX_MESSAGE (an overflow is reported, not
 * truncated silently). The bytes come from another process: every length is
 * checked before use and every error is a sentence naming the byte offset.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wick-json.h"
#include "wick/wick.h"

#define WICK_CONTROL_MAX_FIELDS 32
#define WICK_CONTROL_MAX_KEY 64
#define WICK_CONTROL_FRAME_HEADER 4

typedef enum
{
  WICK_CONTROL_VALUE_NULL,
  WICK_CONTROL_VALUE_BOOL,
  WICK_CONTROL_VALUE_NUMBER,
  WICK_CONTROL_VALUE_STRING,
} WickControlValueType;

typedef struct
{
  char key[WICK_CONTROL_MAX_KEY + 1];
  WickControlValueType type;
  bool boolean;
  double number;
  bool is_integer; /* the number was written as an integer that fits in uint64 */
  uint64_t integer;
  const char *string; /* NUL-terminated, inside the request's storage */
  size_t string_length;
} WickControlField;

typedef struct
{
  WickControlField fields[WICK_CONTROL_MAX_FIELDS];
  size_t n_fields;
  const char *command; /* the "command" member */
  char *storage;       /* decoded strings */
} WickControlRequest;

/* Parses one message body. On failure the request is left empty and @error says
 * what is wrong and at which byte. Free with wick_control_request_clear(). */
bool wick_control_request_parse (WickControlRequest *request, const char *data, size_t length,
                                 WickError *error);
void wick_control_request_clear (WickControlRequest *request);

/* NULL when absent; fails (returns NULL and fills @error) when not a string. */
const char *wick_control_request_get_string (const WickControlRequest *request, const char *key,
                                             bool required, WickError *error);
/* Leaves *out unchanged when absent. */
bool wick_control_request_get_number (const WickControlRequest *request, const char *key,
                                      double *out, WickError *error);
bool wick_control_request_get_uint (const WickControlRequest *request, const char *key,
                                    uint64_t max, uint64_t *out, WickError *error);

/* Decodes a frame header. Fails for 0 or a length over the maximum. */
bool wick_control_frame_length (const unsigned char header[WICK_CONTROL_FRAME_HEADER],
                                uint32_t *length, WickError *error);
void wick_control_frame_header (uint32_t length, unsigned char header[WICK_CONTROL_FRAME_HEADER]);

/* The replies' writer: core's WickJson (wick-json.h: serde_json's escapes,
 * invalid UTF-8 as U+FFFD, shortest round-trip floats, non-finite floats as
 * null) bounded at WICK_CONTROL_MAX_MESSAGE, plus the commas between members.
 * data, length and overflow are WickJson's data, length and failed. */
typedef struct
{
  union
  {
    WickJson json;
    struct
    {
      char *data;
      size_t length;
      size_t capacity;
      bool overflow; /* past the bound, or out of memory: nothing more is written */
    };
  };
  bool need_comma;
  /* A file descriptor to pass with the reply (SCM_RIGHTS) instead of the
   * ring's; the server closes it after sending ("snapshot"). */
  bool has_pass_fd;
  int pass_fd;
} WickControlWriter;

void wick_control_writer_init (WickControlWriter *writer);
void wick_control_writer_clear (WickControlWriter *writer);
void wick_control_writer_begin_object (WickControlWriter *writer, const char *key);
void wick_control_writer_end_object (WickControlWriter *writer);
void wick_control_writer_begin_array (WickControlWriter *writer, const char *key);
void wick_control_writer_end_array (WickControlWriter *writer);
void wick_control_writer_string (WickControlWriter *writer, const char *key, const char *value);
void wick_control_writer_uint (WickControlWriter *writer, const char *key, uint64_t value);
void wick_control_writer_int (WickControlWriter *writer, const char *key, int64_t value);
void wick_control_writer_double (WickControlWriter *writer, const char *key, double value);
void wick_control_writer_bool (WickControlWriter *writer, const char *key, bool value);
