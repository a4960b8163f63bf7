/* wick-weights-json.c — the weight store's JSON documents (wick-weights-json-private.h),
 * read by libwick's one JSON reader (core/wick-json-reader.h). */
#include "wick-weights-json-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"
#include "common/wick-json-reader.h"

typedef struct
{
  WickJsonReader json;
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

/* The weight store's words for what the shared reader found. */
static bool
parser_fail_read (JsonParser *parser)
{
  const WickJsonReader *json = &parser->json;
  size_t start = json->error_start, at = json->error_at;
  switch (json->error)
    {
      case WICK_JSON_READ_UNTERMINATED_STRING:
        return parser_fail (parser, start, "unterminated string");
      case WICK_JSON_READ_CONTROL_CHARACTER:
        return parser_fail (parser, at, "control character in string");
      case WICK_JSON_READ_INVALID_UTF8:
        return parser_fail (parser, at, "invalid UTF-8 in string");
      case WICK_JSON_READ_TRUNCATED_ESCAPE:
        return parser_fail (parser, start, "truncated escape in string");
      case WICK_JSON_READ_INVALID_ESCAPE:
        return parser_fail (parser, start, "invalid escape in string");
      case WICK_JSON_READ_TRUNCATED_HEX:
        return parser_fail (parser, at, "truncated \\u escape");
      case WICK_JSON_READ_INVALID_HEX:
        return parser_fail (parser, at, "invalid hex digit in \\u escape");
      case WICK_JSON_READ_LONE_LOW_SURROGATE:
        return parser_fail (parser, start, "unpaired low surrogate in \\u escape");
      case WICK_JSON_READ_LONE_HIGH_SURROGATE:
        return parser_fail (parser, start, "high surrogate not followed by a low surrogate");
      case WICK_JSON_READ_NO_DIGITS:
      case WICK_JSON_READ_NO_FRACTION_DIGITS:
      case WICK_JSON_READ_NO_EXPONENT_DIGITS:
        return parser_fail (parser, at, "expected a digit in number");
      case WICK_JSON_READ_LEADING_ZERO:
        return parser_fail (parser, start, "leading zero in number");
      case WICK_JSON_READ_INVALID_LITERAL:
        return parser_fail (parser, at, "invalid literal");
      case WICK_JSON_READ_NUL_CHARACTER: /* not asked for: "\u0000" is kept */
      case WICK_JSON_READ_OK:
      default:
        return parser_fail (parser, at, "unreadable JSON");
    }
}

static void
skip_whitespace (JsonParser *parser)
{
  wick_json_reader_skip_whitespace (&parser->json);
}

static bool
at_end (JsonParser *parser)
{
  return wick_json_reader_at_end (&parser->json);
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
          parser_fail (parser, parser->json.pos, "out of memory");
          return -1;
        }
      document->nodes = nodes;
      document->capacity = capacity;
    }
  WickJsonNode *node = &document->nodes[document->n_nodes];
  memset (node, 0, sizeof *node);
  node->kind = kind;
  node->offset = parser->json.pos;
  return (int64_t)document->n_nodes++;
}

/* Parses a string at the opening quote; the decoded text goes to the arena. */
static bool
parse_string (JsonParser *parser, const char **text, size_t *length)
{
  WickJsonDocument *document = parser->document;
  char *out = document->strings + document->strings_used;
  if (!wick_json_reader_string (&parser->json, out, length, 0))
    return parser_fail_read (parser);
  document->strings_used += *length + 1;
  *text = out;
  return true;
}

static bool
parse_number (JsonParser *parser, WickJsonNode *node)
{
  WickJsonNumberText number;
  if (!wick_json_reader_number (&parser->json, &number))
    return parser_fail_read (parser);
  node->text = (const char *)parser->json.data + number.start;
  node->length = number.length;
  return true;
}

static bool
parse_literal (JsonParser *parser, const char *word)
{
  return wick_json_reader_literal (&parser->json, word) || parser_fail_read (parser);
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
    return parser_fail (parser, parser->json.pos, "nesting deeper than 64 levels"), -1;
  int64_t self = new_node (parser, object ? WICK_JSON_OBJECT : WICK_JSON_ARRAY);
  if (self < 0)
    return -1;
  char close = object ? '}' : ']';
  uint32_t last = 0;
  parser->json.pos++;
  skip_whitespace (parser);
  if (!at_end (parser) && parser->json.data[parser->json.pos] == close)
    {
      parser->json.pos++;
      return self;
    }
  for (;;)
    {
      const char *key = NULL;
      size_t key_length = 0;
      if (object)
        {
          if (at_end (parser) || parser->json.data[parser->json.pos] != '"')
            return parser_fail (parser, parser->json.pos, "expected a string key in object"), -1;
          if (!parse_string (parser, &key, &key_length))
            return -1;
          skip_whitespace (parser);
          if (at_end (parser) || parser->json.data[parser->json.pos] != ':')
            return parser_fail (parser, parser->json.pos, "expected ':' after an object key"), -1;
          parser->json.pos++;
        }
      int64_t child = parse_value (parser, depth + 1);
      if (child < 0)
        return -1;
      parser->document->nodes[child].key = key;
      parser->document->nodes[child].key_length = key_length;
      link_child (parser, self, &last, child);
      skip_whitespace (parser);
      if (at_end (parser))
        return parser_fail (parser, parser->json.pos,
                            object ? "unterminated object" : "unterminated array"),
               -1;
      char c = (char)parser->json.data[parser->json.pos++];
      if (c == close)
        return self;
      if (c != ',')
        return parser_fail (parser, parser->json.pos - 1,
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
    return parser_fail (parser, parser->json.pos, "unexpected end of input"), -1;
  unsigned char c = parser->json.data[parser->json.pos];
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
        ok = self >= 0 && parse_literal (parser, "true");
        break;
      case 'f':
        self = new_node (parser, WICK_JSON_FALSE);
        ok = self >= 0 && parse_literal (parser, "false");
        break;
      case 'n':
        self = new_node (parser, WICK_JSON_NULL);
        ok = self >= 0 && parse_literal (parser, "null");
        break;
      default:
        if (c != '-' && (c < '0' || c > '9'))
          return parser_fail (parser, parser->json.pos, "unexpected character"), -1;
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
  JsonParser parser = { .document = document, .error = error };
  wick_json_reader_init (&parser.json, data, length);
  if (parse_value (&parser, 0) < 0)
    {
      wick_weights_json_clear (document);
      return false;
    }
  skip_whitespace (&parser);
  if (!at_end (&parser))
    {
      parser_fail (&parser, parser.json.pos, "unexpected characters after the JSON value");
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
  return node->kind == WICK_JSON_NUMBER && wick_json_digits_u64 (node->text, node->length, out);
}

const char *
wick_weights_json_kind_name (WickJsonKind kind)
{
  static const char *const names[]
    = { "null", "false", "true", "a number", "a string", "an array", "an object" };
  return kind <= WICK_JSON_OBJECT ? names[kind] : "?";
}
