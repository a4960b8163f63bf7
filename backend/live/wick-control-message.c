/* wick-control-message.c — framing, request parser and reply writer of the
 * control protocol. See wick-control-message.h for the grammar. */
#include "config.h"

#include "wick-control-message.h"
#include "core/wick-utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef struct
{
  const unsigned char *data;
  size_t length;
  size_t pos;
  char *out; /* where the next decoded string goes */
  WickError *error;
} Parser;

static bool fail_at (Parser *parser, const char *format, ...)
  __attribute__ ((format (printf, 2, 3)));

static bool
fail_at (Parser *parser, const char *format, ...)
{
  char what[400];
  va_list args;
  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  if (parser->error != NULL)
    wick_set_error (parser->error, WICK_ERROR_INVALID_DATA,
                    "malformed control message at byte %zu: %s", parser->pos, what);
  return false;
}

static void
skip_whitespace (Parser *parser)
{
  while (parser->pos < parser->length)
    {
      unsigned char c = parser->data[parser->pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      parser->pos++;
    }
}

static int
hex_value (unsigned char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static bool
read_hex4 (Parser *parser, uint32_t *out)
{
  if (parser->length - parser->pos < 4)
    return fail_at (parser, "truncated \\u escape");
  uint32_t value = 0;
  for (int i = 0; i < 4; i++)
    {
      int digit = hex_value (parser->data[parser->pos + i]);
      if (digit < 0)
        return fail_at (parser, "invalid hex digit in \\u escape");
      value = value << 4 | (uint32_t)digit;
    }
  parser->pos += 4;
  *out = value;
  return true;
}

static size_t
encode_utf8 (uint32_t code, char *out)
{
  if (code < 0x80)
    {
      out[0] = (char)code;
      return 1;
    }
  if (code < 0x800)
    {
      out[0] = (char)(0xC0 | code >> 6);
      out[1] = (char)(0x80 | (code & 0x3F));
      return 2;
    }
  if (code < 0x10000)
    {
      out[0] = (char)(0xE0 | code >> 12);
      out[1] = (char)(0x80 | (code >> 6 & 0x3F));
      out[2] = (char)(0x80 | (code & 0x3F));
      return 3;
    }
  out[0] = (char)(0xF0 | code >> 18);
  out[1] = (char)(0x80 | (code >> 12 & 0x3F));
  out[2] = (char)(0x80 | (code >> 6 & 0x3F));
  out[3] = (char)(0x80 | (code & 0x3F));
  return 4;
}

/* \uXXXX after the backslash-u, with surrogate pairs. */
static bool
decode_unicode_escape (Parser *parser, char **out)
{
  uint32_t code;
  if (!read_hex4 (parser, &code))
    return false;
  if (code >= 0xDC00 && code <= 0xDFFF)
    return fail_at (parser, "unpaired low surrogate in \\u escape");
  if (code >= 0xD800 && code <= 0xDBFF)
    {
      if (parser->length - parser->pos < 2 || parser->data[parser->pos] != '\\'
          || parser->data[parser->pos + 1] != 'u')
        return fail_at (parser, "unpaired high surrogate in \\u escape");
      parser->pos += 2;
      uint32_t low;
      if (!read_hex4 (parser, &low))
        return false;
      if (low < 0xDC00 || low > 0xDFFF)
        return fail_at (parser, "unpaired high surrogate in \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
  if (code == 0)
    return fail_at (parser, "NUL character in string");
  *out += encode_utf8 (code, *out);
  return true;
}

/* Length of the valid UTF-8 sequence at the parser position, 0 if invalid. */
static size_t
utf8_sequence_length (const unsigned char *s, size_t available)
{
  unsigned char c = s[0];
  size_t n;
  uint32_t code, min;
  if (c < 0x80)
    return 1;
  if ((c & 0xE0) == 0xC0)
    n = 2, code = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0)
    n = 3, code = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0)
    n = 4, code = c & 0x07, min = 0x10000;
  else
    return 0;
  if (available < n)
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xC0) != 0x80)
        return 0;
      code = code << 6 | (s[i] & 0x3F);
    }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return n;
}

static bool
decode_escape (Parser *parser, char **out)
{
  if (parser->pos >= parser->length)
    return fail_at (parser, "unterminated string");
  unsigned char c = parser->data[parser->pos++];
  switch (c)
    {
      case '"':
        *(*out)++ = '"';
        return true;
      case '\\':
        *(*out)++ = '\\';
        return true;
      case '/':
        *(*out)++ = '/';
        return true;
      case 'b':
        *(*out)++ = '\b';
        return true;
      case 'f':
        *(*out)++ = '\f';
        return true;
      case 'n':
        *(*out)++ = '\n';
        return true;
      case 'r':
        *(*out)++ = '\r';
        return true;
      case 't':
        *(*out)++ = '\t';
        return true;
      case 'u':
        return decode_unicode_escape (parser, out);
      default:
        parser->pos--;
        return fail_at (parser, "invalid escape \\%c", c >= 0x20 && c < 0x7F ? c : '?');
    }
}

/* Decodes a string at the opening quote into parser->out (never longer than
 * its encoding, so the storage sized like the message always suffices). */
static bool
parse_string (Parser *parser, const char **value, size_t *value_length)
{
  parser->pos++; /* the opening quote */
  char *start = parser->out;
  char *out = parser->out;
  for (;;)
    {
      if (parser->pos >= parser->length)
        return fail_at (parser, "unterminated string");
      unsigned char c = parser->data[parser->pos];
      if (c == '"')
        {
          parser->pos++;
          break;
        }
      if (c == '\\')
        {
          parser->pos++;
          if (!decode_escape (parser, &out))
            return false;
          continue;
        }
      if (c < 0x20)
        return fail_at (parser, "control character 0x%02x in string", c);
      size_t n = utf8_sequence_length (parser->data + parser->pos, parser->length - parser->pos);
      if (n == 0)
        return fail_at (parser, "invalid UTF-8 in string");
      memcpy (out, parser->data + parser->pos, n);
      out += n;
      parser->pos += n;
    }
  *out++ = '\0';
  *value = start;
  *value_length = (size_t)(out - start) - 1;
  parser->out = out;
  return true;
}

static bool
parse_literal (Parser *parser, const char *word, size_t word_length)
{
  if (parser->length - parser->pos < word_length
      || memcmp (parser->data + parser->pos, word, word_length) != 0)
    return fail_at (parser, "expected a string, number, true, false or null");
  parser->pos += word_length;
  return true;
}

static size_t
scan_digits (Parser *parser)
{
  size_t start = parser->pos;
  while (parser->pos < parser->length && parser->data[parser->pos] >= '0'
         && parser->data[parser->pos] <= '9')
    parser->pos++;
  return parser->pos - start;
}

/* JSON number grammar, then strtod on a bounded copy. */
static bool
parse_number (Parser *parser, WickControlField *field)
{
  size_t start = parser->pos;
  bool negative = false, fraction = false;
  if (parser->data[parser->pos] == '-')
    {
      negative = true;
      parser->pos++;
    }
  size_t int_start = parser->pos;
  size_t int_digits = scan_digits (parser);
  if (int_digits == 0)
    return fail_at (parser, "invalid number");
  if (int_digits > 1 && parser->data[int_start] == '0')
    {
      parser->pos = start;
      return fail_at (parser, "number with a leading zero");
    }
  if (parser->pos < parser->length && parser->data[parser->pos] == '.')
    {
      parser->pos++;
      fraction = true;
      if (scan_digits (parser) == 0)
        return fail_at (parser, "invalid number: no digits after the decimal point");
    }
  if (parser->pos < parser->length
      && (parser->data[parser->pos] == 'e' || parser->data[parser->pos] == 'E'))
    {
      parser->pos++;
      fraction = true;
      if (parser->pos < parser->length
          && (parser->data[parser->pos] == '+' || parser->data[parser->pos] == '-'))
        parser->pos++;
      if (scan_digits (parser) == 0)
        return fail_at (parser, "invalid number: no digits in the exponent");
    }
  size_t n = parser->pos - start;
  char text[64];
  if (n >= sizeof text)
    {
      parser->pos = start;
      return fail_at (parser, "number longer than %zu characters", sizeof text - 1);
    }
  memcpy (text, parser->data + start, n);
  text[n] = '\0';
  field->number = strtod (text, NULL);
  if (!isfinite (field->number))
    {
      parser->pos = start;
      return fail_at (parser, "number out of range");
    }
  field->is_integer = false;
  if (!negative && !fraction && int_digits <= 20)
    {
      uint64_t value = 0;
      bool overflow = false;
      for (size_t i = 0; i < int_digits; i++)
        {
          unsigned digit = (unsigned)(parser->data[int_start + i] - '0');
          if (value > (UINT64_MAX - digit) / 10)
            overflow = true;
          value = value * 10 + digit;
        }
      field->is_integer = !overflow;
      field->integer = value;
    }
  field->type = WICK_CONTROL_VALUE_NUMBER;
  return true;
}

static bool
parse_value (Parser *parser, WickControlField *field)
{
  if (parser->pos >= parser->length)
    return fail_at (parser, "expected a value, found the end of the message");
  unsigned char c = parser->data[parser->pos];
  switch (c)
    {
      case '"':
        field->type = WICK_CONTROL_VALUE_STRING;
        return parse_string (parser, &field->string, &field->string_length);
      case 't':
        field->type = WICK_CONTROL_VALUE_BOOL;
        field->boolean = true;
        return parse_literal (parser, "true", 4);
      case 'f':
        field->type = WICK_CONTROL_VALUE_BOOL;
        field->boolean = false;
        return parse_literal (parser, "false", 5);
      case 'n':
        field->type = WICK_CONTROL_VALUE_NULL;
        return parse_literal (parser, "null", 4);
      case '{':
      case '[':
        return fail_at (parser, "nested objects and arrays are not allowed in requests");
      default:
        if (c == '-' || (c >= '0' && c <= '9'))
          return parse_number (parser, field);
        return fail_at (parser, "expected a string, number, true, false or null");
    }
}

static bool
parse_member (Parser *parser, WickControlRequest *request)
{
  if (parser->pos >= parser->length || parser->data[parser->pos] != '"')
    return fail_at (parser, "expected a member name in double quotes");
  if (request->n_fields == WICK_CONTROL_MAX_FIELDS)
    return fail_at (parser, "more than %d members", WICK_CONTROL_MAX_FIELDS);
  WickControlField *field = &request->fields[request->n_fields];
  size_t key_pos = parser->pos;
  const char *key;
  size_t key_length;
  if (!parse_string (parser, &key, &key_length))
    return false;
  if (key_length == 0 || key_length > WICK_CONTROL_MAX_KEY || strlen (key) != key_length)
    {
      parser->pos = key_pos;
      return fail_at (parser, "member names must be 1 to %d bytes", WICK_CONTROL_MAX_KEY);
    }
  if (wick_control_request_get (request, key) != NULL)
    {
      parser->pos = key_pos;
      return fail_at (parser, "duplicate member \"%s\"", key);
    }
  memcpy (field->key, key, key_length + 1);
  skip_whitespace (parser);
  if (parser->pos >= parser->length || parser->data[parser->pos] != ':')
    return fail_at (parser, "expected ':' after member name");
  parser->pos++;
  skip_whitespace (parser);
  if (!parse_value (parser, field))
    return false;
  request->n_fields++;
  return true;
}

static bool
parse_object (Parser *parser, WickControlRequest *request)
{
  skip_whitespace (parser);
  if (parser->pos >= parser->length || parser->data[parser->pos] != '{')
    return fail_at (parser, "a request must be a JSON object");
  parser->pos++;
  skip_whitespace (parser);
  if (parser->pos < parser->length && parser->data[parser->pos] == '}')
    {
      parser->pos++;
      return true;
    }
  for (;;)
    {
      skip_whitespace (parser);
      if (!parse_member (parser, request))
        return false;
      skip_whitespace (parser);
      if (parser->pos >= parser->length)
        return fail_at (parser, "unterminated object");
      unsigned char c = parser->data[parser->pos++];
      if (c == '}')
        return true;
      if (c != ',')
        {
          parser->pos--;
          return fail_at (parser, "expected ',' or '}' after a member");
        }
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
  Parser parser = { (const unsigned char *)data, length, 0, request->storage, error };
  bool ok = parse_object (&parser, request);
  if (ok)
    {
      skip_whitespace (&parser);
      if (parser.pos != parser.length)
        ok = fail_at (&parser, "trailing characters after the object");
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

/* ---- writer ---- */

void
wick_control_writer_init (WickControlWriter *writer)
{
  memset (writer, 0, sizeof *writer);
}

void
wick_control_writer_clear (WickControlWriter *writer)
{
  free (writer->data);
  memset (writer, 0, sizeof *writer);
}

static void
writer_append (WickControlWriter *writer, const char *text, size_t n)
{
  if (writer->overflow)
    return;
  if (writer->length + n + 1 > WICK_CONTROL_MAX_MESSAGE + 1)
    {
      writer->overflow = true;
      return;
    }
  if (writer->length + n + 1 > writer->capacity)
    {
      size_t capacity = writer->capacity ? writer->capacity : 256;
      while (capacity < writer->length + n + 1)
        capacity *= 2;
      char *data = realloc (writer->data, capacity);
      if (data == NULL)
        {
          writer->overflow = true;
          return;
        }
      writer->data = data;
      writer->capacity = capacity;
    }
  memcpy (writer->data + writer->length, text, n);
  writer->length += n;
  writer->data[writer->length] = '\0';
}

static void
writer_append_escaped (WickControlWriter *writer, const char *value)
{
  writer_append (writer, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++)
    {
      char escape[8];
      switch (*p)
        {
          case '"':
            writer_append (writer, "\\\"", 2);
            break;
          case '\\':
            writer_append (writer, "\\\\", 2);
            break;
          case '\n':
            writer_append (writer, "\\n", 2);
            break;
          case '\r':
            writer_append (writer, "\\r", 2);
            break;
          case '\t':
            writer_append (writer, "\\t", 2);
            break;
          default:
            if (*p < 0x20)
              {
                snprintf (escape, sizeof escape, "\\u%04x", *p);
                writer_append (writer, escape, 6);
              }
            else if (*p < 0x80)
              writer_append (writer, (const char *)p, 1);
            else
              {
                /* A reply is valid UTF-8 whatever it quotes: a byte that does
                 * not start a valid sequence becomes U+FFFD. */
                size_t n = utf8_sequence_length (p, strnlen ((const char *)p, 4));
                if (n == 0)
                  writer_append (writer, "\xef\xbf\xbd", 3);
                else
                  {
                    writer_append (writer, (const char *)p, n);
                    p += n - 1;
                  }
              }
        }
    }
  writer_append (writer, "\"", 1);
}

static void
writer_key (WickControlWriter *writer, const char *key)
{
  if (writer->need_comma)
    writer_append (writer, ",", 1);
  if (key != NULL)
    {
      writer_append_escaped (writer, key);
      writer_append (writer, ":", 1);
    }
  writer->need_comma = true;
}

void
wick_control_writer_begin_object (WickControlWriter *writer, const char *key)
{
  writer_key (writer, key);
  writer_append (writer, "{", 1);
  writer->need_comma = false;
}

void
wick_control_writer_end_object (WickControlWriter *writer)
{
  writer_append (writer, "}", 1);
  writer->need_comma = true;
}

void
wick_control_writer_begin_array (WickControlWriter *writer, const char *key)
{
  writer_key (writer, key);
  writer_append (writer, "[", 1);
  writer->need_comma = false;
}

void
wick_control_writer_end_array (WickControlWriter *writer)
{
  writer_append (writer, "]", 1);
  writer->need_comma = true;
}

void
wick_control_writer_string (WickControlWriter *writer, const char *key, const char *value)
{
  writer_key (writer, key);
  if (value == NULL)
    writer_append (writer, "null", 4);
  else
    writer_append_escaped (writer, value);
}

void
wick_control_writer_uint (WickControlWriter *writer, const char *key, uint64_t value)
{
  char text[32];
  int n = snprintf (text, sizeof text, "%llu", (unsigned long long)value);
  writer_key (writer, key);
  writer_append (writer, text, (size_t)n);
}

void
wick_control_writer_int (WickControlWriter *writer, const char *key, int64_t value)
{
  char text[32];
  int n = snprintf (text, sizeof text, "%lld", (long long)value);
  writer_key (writer, key);
  writer_append (writer, text, (size_t)n);
}

void
wick_control_writer_double (WickControlWriter *writer, const char *key, double value)
{
  writer_key (writer, key);
  if (!isfinite (value))
    {
      writer_append (writer, "null", 4);
      return;
    }
  char text[40];
  int n = snprintf (text, sizeof text, "%.17g", value);
  /* Shortest form that reads back exactly. */
  for (int precision = 1; precision < 17; precision++)
    {
      char shorter[40];
      int m = snprintf (shorter, sizeof shorter, "%.*g", precision, value);
      if (strtod (shorter, NULL) == value)
        {
          memcpy (text, shorter, (size_t)m + 1);
          n = m;
          break;
        }
    }
  writer_append (writer, text, (size_t)n);
}

void
wick_control_writer_bool (WickControlWriter *writer, const char *key, bool value)
{
  writer_key (writer, key);
  writer_append (writer, value ? "true" : "false", value ? 4 : 5);
}

void
wick_control_writer_raw (WickControlWriter *writer, const char *key, const char *json)
{
  writer_key (writer, key);
  writer_append (writer, json, strlen (json));
}

bool
wick_control_json_escape (const char *value, char *out, size_t out_size)
{
  WickControlWriter writer;
  wick_control_writer_init (&writer);
  writer_append_escaped (&writer, value);
  bool ok = !writer.overflow && writer.length < out_size;
  if (ok)
    memcpy (out, writer.data, writer.length + 1);
  wick_control_writer_clear (&writer);
  return ok;
}
