/* wick-control-message.c — framing, request parser and reply writer of the
 * control protocol. See wick-control-message.h for the grammar. */
#include "config.h"

#include "wick-control-message.h"
#include "wick-control-message-private.h"
#include "common/wick-json-reader.h"
#include "common/wick-json.h"
#include "common/wick-utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef struct
{
  WickJsonReader json;
  char *out; /* where the next decoded string goes */
  WickError *error;
} Parser;

static bool fail_at (Parser *parser, size_t at, const char *format, ...)
  __attribute__ ((format (printf, 3, 4)));

static bool
fail_at (Parser *parser, size_t at, const char *format, ...)
{
  char what[400];
  va_list args;
  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  if (parser->error != NULL)
    wick_set_error (parser->error, WICK_ERROR_INVALID_DATA,
                    "malformed control message at byte %zu: %s", at, what);
  return false;
}

/* The control protocol's words for what the shared reader found. */
static bool
fail_read (Parser *parser)
{
  const WickJsonReader *json = &parser->json;
  size_t at = json->error_at;
  switch (json->error)
    {
      case WICK_JSON_READ_UNTERMINATED_STRING:
      case WICK_JSON_READ_TRUNCATED_ESCAPE:
        return fail_at (parser, at, "unterminated string");
      case WICK_JSON_READ_CONTROL_CHARACTER:
        return fail_at (parser, at, "control character 0x%02x in string", json->error_byte);
      case WICK_JSON_READ_INVALID_UTF8:
        return fail_at (parser, at, "invalid UTF-8 in string");
      case WICK_JSON_READ_INVALID_ESCAPE:
        return fail_at (parser, at, "invalid escape \\%c",
                        json->error_byte >= 0x20 && json->error_byte < 0x7F ? json->error_byte
                                                                            : '?');
      case WICK_JSON_READ_TRUNCATED_HEX:
        return fail_at (parser, at, "truncated \\u escape");
      case WICK_JSON_READ_INVALID_HEX:
        return fail_at (parser, at, "invalid hex digit in \\u escape");
      case WICK_JSON_READ_LONE_LOW_SURROGATE:
        return fail_at (parser, at, "unpaired low surrogate in \\u escape");
      case WICK_JSON_READ_LONE_HIGH_SURROGATE:
        return fail_at (parser, at, "unpaired high surrogate in \\u escape");
      case WICK_JSON_READ_NUL_CHARACTER:
        return fail_at (parser, at, "NUL character in string");
      case WICK_JSON_READ_NO_DIGITS:
        return fail_at (parser, at, "invalid number");
      case WICK_JSON_READ_LEADING_ZERO:
        return fail_at (parser, json->error_start, "number with a leading zero");
      case WICK_JSON_READ_NO_FRACTION_DIGITS:
        return fail_at (parser, at, "invalid number: no digits after the decimal point");
      case WICK_JSON_READ_NO_EXPONENT_DIGITS:
        return fail_at (parser, at, "invalid number: no digits in the exponent");
      case WICK_JSON_READ_INVALID_LITERAL:
        return fail_at (parser, at, "expected a string, number, true, false or null");
      case WICK_JSON_READ_OK:
      default:
        return fail_at (parser, at, "unreadable JSON");
    }
}

/* Decodes a string at the opening quote into parser->out (never longer than
 * its encoding, so the storage sized like the message always suffices). */
static bool
parse_string (Parser *parser, const char **value, size_t *value_length)
{
  if (!wick_json_reader_string (&parser->json, parser->out, value_length, WICK_JSON_READ_NO_NUL))
    return fail_read (parser);
  *value = parser->out;
  parser->out += *value_length + 1;
  return true;
}

/* JSON number grammar from the reader, then strtod on a bounded copy. */
static bool
parse_number (Parser *parser, WickControlField *field)
{
  WickJsonNumberText number;
  if (!wick_json_reader_number (&parser->json, &number))
    return fail_read (parser);
  char text[64];
  if (number.length >= sizeof text)
    return fail_at (parser, number.start, "number longer than %zu characters", sizeof text - 1);
  memcpy (text, parser->json.data + number.start, number.length);
  text[number.length] = '\0';
  field->number = strtod (text, NULL);
  if (!isfinite (field->number))
    return fail_at (parser, number.start, "number out of range");
  field->is_integer = wick_json_number_u64 (&parser->json, &number, &field->integer);
  field->type = WICK_CONTROL_VALUE_NUMBER;
  return true;
}

static bool
parse_literal (Parser *parser, const char *word)
{
  return wick_json_reader_literal (&parser->json, word) || fail_read (parser);
}

static bool
parse_value (Parser *parser, WickControlField *field)
{
  WickJsonReader *json = &parser->json;
  int c = wick_json_reader_peek (json);
  switch (c)
    {
      case -1:
        return fail_at (parser, json->pos, "expected a value, found the end of the message");
      case '"':
        field->type = WICK_CONTROL_VALUE_STRING;
        return parse_string (parser, &field->string, &field->string_length);
      case 't':
        field->type = WICK_CONTROL_VALUE_BOOL;
        field->boolean = true;
        return parse_literal (parser, "true");
      case 'f':
        field->type = WICK_CONTROL_VALUE_BOOL;
        field->boolean = false;
        return parse_literal (parser, "false");
      case 'n':
        field->type = WICK_CONTROL_VALUE_NULL;
        return parse_literal (parser, "null");
      case '{':
      case '[':
        return fail_at (parser, json->pos, "nested objects and arrays are not allowed in requests");
      default:
        if (c == '-' || (c >= '0' && c <= '9'))
          return parse_number (parser, field);
        return fail_at (parser, json->pos, "expected a string, number, true, false or null");
    }
}

static bool
parse_member (Parser *parser, WickControlRequest *request)
{
  WickJsonReader *json = &parser->json;
  if (wick_json_reader_peek (json) != '"')
    return fail_at (parser, json->pos, "expected a member name in double quotes");
  if (request->n_fields == WICK_CONTROL_MAX_FIELDS)
    return fail_at (parser, json->pos, "more than %d members", WICK_CONTROL_MAX_FIELDS);
  WickControlField *field = &request->fields[request->n_fields];
  size_t key_pos = json->pos;
  const char *key = NULL;
  size_t key_length = 0;
  if (!parse_string (parser, &key, &key_length))
    return false;
  if (key_length == 0 || key_length > WICK_CONTROL_MAX_KEY)
    return fail_at (parser, key_pos, "member names must be 1 to %d bytes", WICK_CONTROL_MAX_KEY);
  if (wick_control_request_get (request, key) != NULL)
    return fail_at (parser, key_pos, "duplicate member \"%s\"", key);
  memcpy (field->key, key, key_length + 1);
  wick_json_reader_skip_whitespace (json);
  if (!wick_json_reader_accept (json, ':'))
    return fail_at (parser, json->pos, "expected ':' after member name");
  wick_json_reader_skip_whitespace (json);
  if (!parse_value (parser, field))
    return false;
  request->n_fields++;
  return true;
}

static bool
parse_object (Parser *parser, WickControlRequest *request)
{
  WickJsonReader *json = &parser->json;
  wick_json_reader_skip_whitespace (json);
  if (!wick_json_reader_accept (json, '{'))
    return fail_at (parser, json->pos, "a request must be a JSON object");
  wick_json_reader_skip_whitespace (json);
  if (wick_json_reader_accept (json, '}'))
    return true;
  for (;;)
    {
      wick_json_reader_skip_whitespace (json);
      if (!parse_member (parser, request))
        return false;
      wick_json_reader_skip_whitespace (json);
      if (wick_json_reader_at_end (json))
        return fail_at (parser, json->pos, "unterminated object");
      if (wick_json_reader_accept (json, '}'))
        return true;
      if (!wick_json_reader_accept (json, ','))
        return fail_at (parser, json->pos, "expected ',' or '}' after a member");
    }
}

static bool
check_envelope (WickControlRequest *request, WickError *error)
{
  const WickControlField *version = wick_control_request_get (request, "v");
  if (version == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "control message lacks the protocol version \"v\"");
      return false;
    }
  if (version->type != WICK_CONTROL_VALUE_NUMBER || !version->is_integer
      || version->integer != WICK_CONTROL_PROTOCOL_VERSION)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "unsupported control protocol version: this session speaks \"v\": %d",
                      WICK_CONTROL_PROTOCOL_VERSION);
      return false;
    }
  const WickControlField *command = wick_control_request_get (request, "command");
  if (command == NULL || command->type != WICK_CONTROL_VALUE_STRING)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA, "control message lacks a \"command\" string");
      return false;
    }
  request->command = command->string;
  return true;
}

bool
wick_control_request_parse (WickControlRequest *request, const char *data, size_t length,
                            WickError *error)
{
  memset (request, 0, sizeof *request);
  if (length == 0 || length > WICK_CONTROL_MAX_MESSAGE)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "control message of %zu bytes: the limit is 1 to %d bytes", length,
                      WICK_CONTROL_MAX_MESSAGE);
      return false;
    }
  request->storage = malloc (length + 1);
  if (request->storage == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory reading a control message");
      return false;
    }
  Parser parser = { .out = request->storage, .error = error };
  wick_json_reader_init (&parser.json, data, length);
  bool ok = parse_object (&parser, request);
  if (ok)
    {
      wick_json_reader_skip_whitespace (&parser.json);
      if (!wick_json_reader_at_end (&parser.json))
        ok = fail_at (&parser, parser.json.pos, "trailing characters after the object");
    }
  if (ok)
    ok = check_envelope (request, error);
  if (!ok)
    wick_control_request_clear (request);
  return ok;
}

void
wick_control_request_clear (WickControlRequest *request)
{
  free (request->storage);
  memset (request, 0, sizeof *request);
}

const WickControlField *
wick_control_request_get (const WickControlRequest *request, const char *key)
{
  for (size_t i = 0; i < request->n_fields; i++)
    if (strcmp (request->fields[i].key, key) == 0)
      return &request->fields[i];
  return NULL;
}

const char *
wick_control_request_get_string (const WickControlRequest *request, const char *key, bool required,
                                 WickError *error)
{
  const WickControlField *field = wick_control_request_get (request, key);
  if (field == NULL)
    {
      if (required)
        wick_set_error (error, WICK_ERROR_INVALID_DATA,
                        "command \"%s\" needs the string member \"%s\"", request->command, key);
      return NULL;
    }
  if (field->type != WICK_CONTROL_VALUE_STRING)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "member \"%s\" of command \"%s\" must be a string", key, request->command);
      return NULL;
    }
  return field->string;
}

bool
wick_control_request_get_number (const WickControlRequest *request, const char *key, double *out,
                                 WickError *error)
{
  const WickControlField *field = wick_control_request_get (request, key);
  if (field == NULL)
    return true;
  if (field->type != WICK_CONTROL_VALUE_NUMBER)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "member \"%s\" of command \"%s\" must be a number", key, request->command);
      return false;
    }
  *out = field->number;
  return true;
}

bool
wick_control_request_get_uint (const WickControlRequest *request, const char *key, uint64_t max,
                               uint64_t *out, WickError *error)
{
  const WickControlField *field = wick_control_request_get (request, key);
  if (field == NULL)
    return true;
  if (field->type != WICK_CONTROL_VALUE_NUMBER || !field->is_integer || field->integer > max)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "member \"%s\" of command \"%s\" must be an integer from 0 to %llu", key,
                      request->command, (unsigned long long)max);
      return false;
    }
  *out = field->integer;
  return true;
}

bool
wick_control_frame_length (const unsigned char header[WICK_CONTROL_FRAME_HEADER], uint32_t *length,
                           WickError *error)
{
  uint32_t value = (uint32_t)header[0] | (uint32_t)header[1] << 8 | (uint32_t)header[2] << 16
                   | (uint32_t)header[3] << 24;
  if (value == 0 || value > WICK_CONTROL_MAX_MESSAGE)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "control frame announces %u bytes: the limit is 1 to %d bytes", value,
                      WICK_CONTROL_MAX_MESSAGE);
      return false;
    }
  *length = value;
  return true;
}

void
wick_control_frame_header (uint32_t length, unsigned char header[WICK_CONTROL_FRAME_HEADER])
{
  header[0] = (unsigned char)(length & 0xFF);
  header[1] = (unsigned char)(length >> 8 & 0xFF);
  header[2] = (unsigned char)(length >> 16 & 0xFF);
  header[3] = (unsigned char)(length >> 24 & 0xFF);
}

/* ---- writer: core's WickJson with the protocol's bound ---- */

void
wick_control_writer_init (WickControlWriter *writer)
{
  memset (writer, 0, sizeof *writer);
  wick_json_init (&writer->json);
  writer->json.limit = WICK_CONTROL_MAX_MESSAGE;
}

void
wick_control_writer_clear (WickControlWriter *writer)
{
  wick_json_clear (&writer->json);
  memset (writer, 0, sizeof *writer);
}

static void
writer_key (WickControlWriter *writer, const char *key)
{
  if (writer->need_comma)
    wick_json_append (&writer->json, ",", 1);
  if (key != NULL)
    {
      wick_json_string (&writer->json, key);
      wick_json_append (&writer->json, ":", 1);
    }
  writer->need_comma = true;
}

void
wick_control_writer_begin_object (WickControlWriter *writer, const char *key)
{
  writer_key (writer, key);
  wick_json_append (&writer->json, "{", 1);
  writer->need_comma = false;
}

void
wick_control_writer_end_object (WickControlWriter *writer)
{
  wick_json_append (&writer->json, "}", 1);
  writer->need_comma = true;
}

void
wick_control_writer_begin_array (WickControlWriter *writer, const char *key)
{
  writer_key (writer, key);
  wick_json_append (&writer->json, "[", 1);
  writer->need_comma = false;
}

void
wick_control_writer_end_array (WickControlWriter *writer)
{
  wick_json_append (&writer->json, "]", 1);
  writer->need_comma = true;
}

void
wick_control_writer_string (WickControlWriter *writer, const char *key, const char *value)
{
  writer_key (writer, key);
  if (value == NULL)
    wick_json_append (&writer->json, "null", 4);
  else
    wick_json_string (&writer->json, value);
}

void
wick_control_writer_uint (WickControlWriter *writer, const char *key, uint64_t value)
{
  writer_key (writer, key);
  wick_json_u64 (&writer->json, value);
}

void
wick_control_writer_int (WickControlWriter *writer, const char *key, int64_t value)
{
  writer_key (writer, key);
  wick_json_i64 (&writer->json, value);
}

void
wick_control_writer_double (WickControlWriter *writer, const char *key, double value)
{
  writer_key (writer, key);
  wick_json_double (&writer->json, value);
}

void
wick_control_writer_bool (WickControlWriter *writer, const char *key, bool value)
{
  writer_key (writer, key);
  wick_json_bool (&writer->json, value);
}

void
wick_control_writer_raw (WickControlWriter *writer, const char *key, const char *json)
{
  writer_key (writer, key);
  wick_json_raw (&writer->json, json);
}
