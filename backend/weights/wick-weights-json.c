/* wick-weights-json.c — the strict JSON reader of wick-weights-json-private.h. */
#include "wick-weights-json-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef struct
{
  const unsigned char *data;
  size_t length;
  size_t position;
  WickJsonDocument *document;
  WickError *error;
} JsonParser;

static bool
parser_fail (JsonParser *parser, size_t at, const char *what)
{
  if (parser->error != NULL)
    wick_set_error (parser->error, WICK_ERROR_INVALID_DATA, "byte %zu: %s", at, what);
  return false;
}

static void
skip_whitespace (JsonParser *parser)
{
  while (parser->position < parser->length)
    {
      unsigned char c = parser->data[parser->position];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      parser->position++;
    }
}

static bool
at_end (JsonParser *parser)
{
  return parser->position >= parser->length;
}

static int64_t
new_node (JsonParser *parser, WickJsonKind kind)
{
  WickJsonDocument *document = parser->document;
  if (document->n_nodes == document->capacity)
    {
      size_t capacity = document->capacity ? document->capacity * 2 : 64;
      WickJsonNode *nodes = realloc (document->nodes, capacity * sizeof *nodes);
      if (nodes == NULL)
        {
          parser_fail (parser, parser->position, "out of memory");
          return -1;
        }
      document->nodes = nodes;
      document->capacity = capacity;
    }
  WickJsonNode *node = &document->nodes[document->n_nodes];
  memset (node, 0, sizeof *node);
  node->kind = kind;
  node->offset = parser->position;
  return (int64_t)document->n_nodes++;
}

static int
hex_digit (unsigned char c)
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
read_hex4 (JsonParser *parser, uint32_t *out)
{
  if (parser->length - parser->position < 4)
    return parser_fail (parser, parser->position, "truncated \\u escape");
  uint32_t value = 0;
  for (int i = 0; i < 4; i++)
    {
      int digit = hex_digit (parser->data[parser->position + i]);
      if (digit < 0)
        return parser_fail (parser, parser->position + i, "invalid hex digit in \\u escape");
      value = value * 16 + (uint32_t)digit;
    }
  parser->position += 4;
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
      out[0] = (char)(0xC0 | (code >> 6));
      out[1] = (char)(0x80 | (code & 0x3F));
      return 2;
    }
  if (code < 0x10000)
    {
      out[0] = (char)(0xE0 | (code >> 12));
      out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
      out[2] = (char)(0x80 | (code & 0x3F));
      return 3;
    }
  out[0] = (char)(0xF0 | (code >> 18));
  out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
  out[3] = (char)(0x80 | (code & 0x3F));
  return 4;
}

/* Decodes one \-escape after the backslash into out; returns bytes written or 0. */
static size_t
decode_escape (JsonParser *parser, char *out)
{
  size_t at = parser->position - 1;
  if (at_end (parser))
    return parser_fail (parser, at, "truncated escape in string"), 0;
  unsigned char c = parser->data[parser->position++];
  switch (c)
    {
      case '"':
        out[0] = '"';
        return 1;
      case '\\':
        out[0] = '\\';
        return 1;
      case '/':
        out[0] = '/';
        return 1;
      case 'b':
        out[0] = '\b';
        return 1;
      case 'f':
        out[0] = '\f';
        return 1;
      case 'n':
        out[0] = '\n';
        return 1;
      case 'r':
        out[0] = '\r';
        return 1;
      case 't':
        out[0] = '\t';
        return 1;
      case 'u':
        break;
      default:
        return parser_fail (parser, at, "invalid escape in string"), 0;
    }
  uint32_t code;
  if (!read_hex4 (parser, &code))
    return 0;
  if (code >= 0xDC00 && code <= 0xDFFF)
    return parser_fail (parser, at, "unpaired low surrogate in \\u escape"), 0;
  if (code >= 0xD800 && code <= 0xDBFF)
    {
      uint32_t low;
      if (parser->length - parser->position < 2 || parser->data[parser->position] != '\\'
          || parser->data[parser->position + 1] != 'u')
        return parser_fail (parser, at, "high surrogate not followed by a low surrogate"), 0;
      parser->position += 2;
      if (!read_hex4 (parser, &low))
        return 0;
      if (low < 0xDC00 || low > 0xDFFF)
        return parser_fail (parser, at, "high surrogate not followed by a low surrogate"), 0;
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
  return encode_utf8 (code, out);
}

/* Length of the valid UTF-8 sequence at the position, or 0. */
static size_t
utf8_sequence_length (const unsigned char *s, size_t available)
{
  unsigned char c = s[0];
  size_t length;
  uint32_t code;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    length = 2, code = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    length = 3, code = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    length = 4, code = c & 0x07;
  else
    return 0;
  if (available < length)
    return 0;
  for (size_t i = 1; i < length; i++)
    {
      if ((s[i] & 0xC0) != 0x80)
        return 0;
      code = (code << 6) | (s[i] & 0x3F);
    }
  if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) || code > 0x10FFFF
      || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return length;
}

/* Parses a string at the opening quote; the decoded text goes to the arena. */
static bool
parse_string (JsonParser *parser, const char **text, size_t *length)
{
  WickJsonDocument *document = parser->document;
  size_t start = parser->position++;
  char *out = document->strings + document->strings_used;
  size_t written = 0;
  for (;;)
    {
      if (at_end (parser))
        return parser_fail (parser, start, "unterminated string");
      unsigned char c = parser->data[parser->position];
      if (c == '"')
        {
          parser->position++;
          break;
        }
      if (c < 0x20)
        return parser_fail (parser, parser->position, "control character in string");
      if (c == '\\')
        {
          parser->position++;
          size_t n = decode_escape (parser, out + written);
          if (n == 0)
            return false;
          written += n;
          continue;
        }
      size_t n
        = utf8_sequence_length (parser->data + parser->position, parser->length - parser->position);
      if (n == 0)
        return parser_fail (parser, parser->position, "invalid UTF-8 in string");
      memcpy (out + written, parser->data + parser->position, n);
      written += n;
      parser->position += n;
    }
  out[written] = '\0';
  document->strings_used += written + 1;
  *text = out;
  *length = written;
  return true;
}

static bool
parse_digits (JsonParser *parser)
{
  size_t start = parser->position;
  while (!at_end (parser) && parser->data[parser->position] >= '0'
         && parser->data[parser->position] <= '9')
    parser->position++;
  if (parser->position == start)
    return parser_fail (parser, parser->position, "expected a digit in number");
  return true;
}

static bool
parse_number (JsonParser *parser, WickJsonNode *node)
{
  size_t start = parser->position;
  if (parser->data[parser->position] == '-')
    parser->position++;
  if (at_end (parser))
    return parser_fail (parser, parser->position, "expected a digit in number");
  if (parser->data[parser->position] == '0')
    {
      parser->position++;
      if (!at_end (parser) && parser->data[parser->position] >= '0'
          && parser->data[parser->position] <= '9')
        return parser_fail (parser, start, "leading zero in number");
    }
  else if (!parse_digits (parser))
    return false;
  if (!at_end (parser) && parser->data[parser->position] == '.')
    {
      parser->position++;
      if (!parse_digits (parser))
        return false;
    }
  if (!at_end (parser)
      && (parser->data[parser->position] == 'e' || parser->data[parser->position] == 'E'))
    {
      parser->position++;
      if (!at_end (parser)
          && (parser->data[parser->position] == '+' || parser->data[parser->position] == '-'))
        parser->position++;
      if (!parse_digits (parser))
        return false;
    }
  node->text = (const char *)parser->data + start;
  node->length = parser->position - start;
  return true;
}

static bool
parse_literal (JsonParser *parser, const char *word, size_t n)
{
  if (parser->length - parser->position < n
      || memcmp (parser->data + parser->position, word, n) != 0)
    return parser_fail (parser, parser->position, "invalid literal");
  parser->position += n;
  return true;
}

static int64_t parse_value (JsonParser *parser, unsigned depth);

/* Appends child to parent's list; last is the previous child or 0. */
static void
link_child (JsonParser *parser, int64_t parent, uint32_t *last, int64_t child)
{
  WickJsonNode *nodes = parser->document->nodes;
  if (*last == 0)
    nodes[parent].first_child = (uint32_t)child;
  else
    nodes[*last].next_sibling = (uint32_t)child;
  *last = (uint32_t)child;
  nodes[parent].n_children++;
}

static int64_t
parse_container (JsonParser *parser, unsigned depth, bool object)
{
  if (depth >= WICK_JSON_MAX_DEPTH)
    return parser_fail (parser, parser->position, "nesting deeper than 64 levels"), -1;
  int64_t self = new_node (parser, object ? WICK_JSON_OBJECT : WICK_JSON_ARRAY);
  if (self < 0)
    return -1;
  char close = object ? '}' : ']';
  uint32_t last = 0;
  parser->position++;
  skip_whitespace (parser);
  if (!at_end (parser) && parser->data[parser->position] == close)
    {
      parser->position++;
      return self;
    }
  for (;;)
    {
      const char *key = NULL;
      size_t key_length = 0;
      if (object)
        {
          if (at_end (parser) || parser->data[parser->position] != '"')
            return parser_fail (parser, parser->position, "expected a string key in object"), -1;
          if (!parse_string (parser, &key, &key_length))
            return -1;
          skip_whitespace (parser);
          if (at_end (parser) || parser->data[parser->position] != ':')
            return parser_fail (parser, parser->position, "expected ':' after an object key"), -1;
          parser->position++;
        }
      int64_t child = parse_value (parser, depth + 1);
      if (child < 0)
        return -1;
      parser->document->nodes[child].key = key;
      parser->document->nodes[child].key_length = key_length;
      link_child (parser, self, &last, child);
      skip_whitespace (parser);
      if (at_end (parser))
        return parser_fail (parser, parser->position,
                            object ? "unterminated object" : "unterminated array"),
               -1;
      char c = (char)parser->data[parser->position++];
      if (c == close)
        return self;
      if (c != ',')
        return parser_fail (parser, parser->position - 1,
                            object ? "expected ',' or '}' in object"
                                   : "expected ',' or ']' in array"),
               -1;
      skip_whitespace (parser);
    }
}

static int64_t
parse_value (JsonParser *parser, unsigned depth)
{
  skip_whitespace (parser);
  if (at_end (parser))
    return parser_fail (parser, parser->position, "unexpected end of input"), -1;
  unsigned char c = parser->data[parser->position];
  if (c == '{' || c == '[')
    return parse_container (parser, depth, c == '{');
  int64_t self;
  bool ok;
  switch (c)
    {
      case '"':
        self = new_node (parser, WICK_JSON_STRING);
        ok = self >= 0
             && parse_string (parser, &parser->document->nodes[self].text,
                              &parser->document->nodes[self].length);
        break;
      case 't':
        self = new_node (parser, WICK_JSON_TRUE);
        ok = self >= 0 && parse_literal (parser, "true", 4);
        break;
      case 'f':
        self = new_node (parser, WICK_JSON_FALSE);
        ok = self >= 0 && parse_literal (parser, "false", 5);
        break;
      case 'n':
        self = new_node (parser, WICK_JSON_NULL);
        ok = self >= 0 && parse_literal (parser, "null", 4);
        break;
      default:
        if (c != '-' && (c < '0' || c > '9'))
          return parser_fail (parser, parser->position, "unexpected character"), -1;
        self = new_node (parser, WICK_JSON_NUMBER);
        ok = self >= 0 && parse_number (parser, &parser->document->nodes[self]);
        break;
    }
  return ok ? self : -1;
}

bool
wick_weights_json_parse (const char *data, size_t length, WickJsonDocument *document,
                         WickError *error)
{
  memset (document, 0, sizeof *document);
  /* Decoded strings never outgrow their quoted source, so one arena of the
   * input's size (plus a NUL) holds them all. */
  document->strings = malloc (length + 1);
  if (document->strings == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for a %zu-byte JSON text",
                      length);
      return false;
    }
  JsonParser parser = { (const unsigned char *)data, length, 0, document, error };
  if (parse_value (&parser, 0) < 0)
    {
      wick_weights_json_clear (document);
      return false;
    }
  skip_whitespace (&parser);
  if (!at_end (&parser))
    {
      parser_fail (&parser, parser.position, "unexpected characters after the JSON value");
      wick_weights_json_clear (document);
      return false;
    }
  return true;
}

void
wick_weights_json_clear (WickJsonDocument *document)
{
  free (document->nodes);
  free (document->strings);
  memset (document, 0, sizeof *document);
}

const WickJsonNode *
wick_weights_json_root (const WickJsonDocument *document)
{
  return document->n_nodes > 0 ? &document->nodes[0] : NULL;
}

const WickJsonNode *
wick_weights_json_first (const WickJsonDocument *document, const WickJsonNode *node)
{
  return node->first_child ? &document->nodes[node->first_child] : NULL;
}

const WickJsonNode *
wick_weights_json_next (const WickJsonDocument *document, const WickJsonNode *node)
{
  return node->next_sibling ? &document->nodes[node->next_sibling] : NULL;
}

const WickJsonNode *
wick_weights_json_member (const WickJsonDocument *document, const WickJsonNode *object,
                          const char *key)
{
  const WickJsonNode *found = NULL;
  if (object->kind != WICK_JSON_OBJECT)
    return NULL;
  size_t key_length = strlen (key);
  for (const WickJsonNode *child = wick_weights_json_first (document, object); child != NULL;
       child = wick_weights_json_next (document, child))
    if (child->key_length == key_length && memcmp (child->key, key, key_length) == 0)
      found = child;
  return found;
}

bool
wick_weights_json_uint64 (const WickJsonNode *node, uint64_t *out)
{
  if (node->kind != WICK_JSON_NUMBER || node->length == 0)
    return false;
  uint64_t value = 0;
  for (size_t i = 0; i < node->length; i++)
    {
      char c = node->text[i];
      if (c < '0' || c > '9')
        return false;
      uint64_t digit = (uint64_t)(c - '0');
      if (value > (UINT64_MAX - digit) / 10)
        return false;
      value = value * 10 + digit;
    }
  *out = value;
  return true;
}

const char *
wick_weights_json_kind_name (WickJsonKind kind)
{
  static const char *const names[]
    = { "null", "false", "true", "a number", "a string", "an array", "an object" };
  return kind <= WICK_JSON_OBJECT ? names[kind] : "?";
}
