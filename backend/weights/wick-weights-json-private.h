/* wick-weights-json-private.h — JSON documents for the weight store
 * (safetensors headers, model.safetensors.index.json), read with libwick's one
 * bounded JSON reader (core/wick-json-reader.h, shared with the control
 * protocol). libwick has no GLib, and these bytes are untrusted.
 *
 * Grammar: RFC 8259 exactly. No comments, no trailing commas, no NaN, no
 * leading zeros, no control characters in strings, strict UTF-8 (no overlong
 * forms, no encoded surrogates), \u escapes with paired surrogates only,
 * nesting at most WICK_JSON_MAX_DEPTH, nothing but whitespace after the value.
 * Duplicate object keys are left for the caller (it knows what they mean).
 *
 * The document is a node array: node 0 is the root, children are linked by
 * index (0 means none). Strings are decoded into one arena and NUL-terminated;
 * their length is kept since "\u0000" may appear inside. Numbers keep their
 * raw text. Errors read "byte N: <what was expected or found>".
 */
#pragma once

#include "wick-session-private.h"

#define WICK_JSON_MAX_DEPTH 64

typedef enum
{
  WICK_JSON_NULL,
  WICK_JSON_FALSE,
  WICK_JSON_TRUE,
  WICK_JSON_NUMBER,
  WICK_JSON_STRING,
  WICK_JSON_ARRAY,
  WICK_JSON_OBJECT,
} WickJsonKind;

typedef struct
{
  WickJsonKind kind;
  uint32_t first_child;
  uint32_t next_sibling;
  uint32_t n_children;
  const char *text; /* string: decoded, NUL-terminated; number: raw, not terminated */
  size_t length;
  const char *key; /* member name inside an object, else NULL */
  size_t key_length;
  size_t offset; /* of the value in the input */
} WickJsonNode;

typedef struct
{
  WickJsonNode *nodes;
  size_t n_nodes;
  size_t capacity;
  char *strings;
  size_t strings_used;
} WickJsonDocument;

bool wick_weights_json_parse (const char *data, size_t length, WickJsonDocument *document,
                              WickError *error);
void wick_weights_json_clear (WickJsonDocument *document);

const WickJsonNode *wick_weights_json_root (const WickJsonDocument *document);
const WickJsonNode *wick_weights_json_first (const WickJsonDocument *document,
                                             const WickJsonNode *node);
const WickJsonNode *wick_weights_json_next (const WickJsonDocument *document,
                                            const WickJsonNode *node);
/* The last member named key of an object, or NULL. */
const WickJsonNode *wick_weights_json_member (const WickJsonDocument *document,
                                              const WickJsonNode *object, const char *key);
/* A non-negative integer without fraction or exponent that fits 64 bits. */
bool wick_weights_json_uint64 (const WickJsonNode *node, uint64_t *out);
const char *wick_weights_json_kind_name (WickJsonKind kind);
