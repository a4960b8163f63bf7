/* wick-safetensors.c — the safetensors header reader of
 * wick-safetensors-private.h and the writer of wick-weights.h. */
#include "wick-safetensors-private.h"
#include "common/wick-json.h"
#include "common/wick-utf8.h"
#include "wick-weight-backing-private.h"
#include "wick-weights-json-private.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/wick-error-private.h"

bool
wick_safetensors_header_length (const uint8_t prefix[8], uint64_t file_size, uint64_t *out,
                                WickError *error)
{
  if (file_size < 8)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "the file is %" PRIu64 " bytes, shorter than the 8-byte header length",
                      file_size);
  uint64_t length = 0;
  for (int i = 7; i >= 0; i--)
    length = (length << 8) | prefix[i];
  if (length > WICK_SAFETENSORS_MAX_HEADER)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "header length %" PRIu64 " exceeds the limit of %u bytes", length,
                      WICK_SAFETENSORS_MAX_HEADER);
  if (length > file_size - 8)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes)",
                      length, file_size);
  if (length < 2)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "header length %" PRIu64 " is too short for a JSON object", length);
  *out = length;
  return true;
}

static bool
parse_shape (const WickJsonDocument *document, const WickJsonNode *node, const char *name,
             WickSafetensorsTensor *tensor, WickError *error)
{
  if (node == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s': missing \"shape\"",
                      WICK_UTF8_CUT (name, 200));
  if (node->kind != WICK_JSON_ARRAY)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': \"shape\" is %s, not an array", WICK_UTF8_CUT (name, 200),
                      wick_weights_json_kind_name (node->kind));
  if (node->n_children > WICK_WEIGHT_MAX_DIMS)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': %u dimensions, more than the %d supported",
                      WICK_UTF8_CUT (name, 200), node->n_children, WICK_WEIGHT_MAX_DIMS);
  size_t i = 0;
  for (const WickJsonNode *dim = wick_weights_json_first (document, node); dim != NULL;
       dim = wick_weights_json_next (document, dim), i++)
    if (!wick_weights_json_uint64 (dim, &tensor->shape[i]))
      return wick_fail (error, WICK_ERROR_INVALID_DATA,
                        "tensor '%.*s': shape[%zu] is not a non-negative 64-bit integer",
                        WICK_UTF8_CUT (name, 200), i);
  tensor->n_dims = i;
  return true;
}

static bool
parse_offsets (const WickJsonDocument *document, const WickJsonNode *node, const char *name,
               WickSafetensorsTensor *tensor, WickError *error)
{
  if (node == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s': missing \"data_offsets\"",
                      WICK_UTF8_CUT (name, 200));
  if (node->kind != WICK_JSON_ARRAY || node->n_children != 2)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': \"data_offsets\" is not an array of two integers",
                      WICK_UTF8_CUT (name, 200));
  const WickJsonNode *begin = wick_weights_json_first (document, node);
  const WickJsonNode *end = wick_weights_json_next (document, begin);
  if (!wick_weights_json_uint64 (begin, &tensor->begin)
      || !wick_weights_json_uint64 (end, &tensor->end))
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': \"data_offsets\" are not non-negative 64-bit integers",
                      WICK_UTF8_CUT (name, 200));
  if (tensor->begin > tensor->end)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': data_offsets [%" PRIu64 ", %" PRIu64 "] begin after they end",
                      WICK_UTF8_CUT (name, 200), tensor->begin, tensor->end);
  return true;
}

static bool
check_size (const char *name, const WickSafetensorsTensor *tensor, uint64_t data_size,
            WickError *error)
{
  uint64_t count = 1;
  for (size_t i = 0; i < tensor->n_dims; i++)
    if (__builtin_mul_overflow (count, tensor->shape[i], &count))
      return wick_fail (error, WICK_ERROR_INVALID_DATA,
                        "tensor '%.*s': the element count of its shape overflows 64 bits",
                        WICK_UTF8_CUT (name, 200));
  uint64_t bytes;
  if (__builtin_mul_overflow (count, (uint64_t)wick_weight_dtype_size (tensor->dtype), &bytes))
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': its byte size overflows 64 bits", WICK_UTF8_CUT (name, 200));
  if (bytes != tensor->end - tensor->begin)
    {
      char shape[256];
      wick_format_shape (tensor->shape, tensor->n_dims, shape, sizeof shape);
      return wick_fail (error, WICK_ERROR_INVALID_DATA,
                        "tensor '%.*s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                        " bytes but shape %s of %s needs %" PRIu64,
                        WICK_UTF8_CUT (name, 200), tensor->begin, tensor->end,
                        tensor->end - tensor->begin, shape, wick_weight_dtype_name (tensor->dtype),
                        bytes);
    }
  if (tensor->end > data_size)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': data_offsets end %" PRIu64
                      " is past the end of the data (%" PRIu64 " bytes)",
                      WICK_UTF8_CUT (name, 200), tensor->end, data_size);
  return true;
}

static bool
parse_tensor (const WickJsonDocument *document, const WickJsonNode *entry, uint64_t data_size,
              WickSafetensorsTensor *tensor, WickError *error)
{
  const char *name = entry->key;
  if (entry->kind != WICK_JSON_OBJECT)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s': entry is %s, not an object",
                      WICK_UTF8_CUT (name, 200), wick_weights_json_kind_name (entry->kind));
  const WickJsonNode *dtype = wick_weights_json_member (document, entry, "dtype");
  if (dtype == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s': missing \"dtype\"",
                      WICK_UTF8_CUT (name, 200));
  if (dtype->kind != WICK_JSON_STRING)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "tensor '%.*s': \"dtype\" is %s, not a string", WICK_UTF8_CUT (name, 200),
                      wick_weights_json_kind_name (dtype->kind));
  if (!wick_weight_dtype_from_name (dtype->text, &tensor->dtype))
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s': unknown dtype '%.*s'",
                      WICK_UTF8_CUT (name, 200), WICK_UTF8_CUT (dtype->text, 40));
  if (!parse_shape (document, wick_weights_json_member (document, entry, "shape"), name, tensor,
                    error)
      || !parse_offsets (document, wick_weights_json_member (document, entry, "data_offsets"), name,
                         tensor, error))
    return false;
  return check_size (name, tensor, data_size, error);
}

static bool
parse_metadata (const WickJsonDocument *document, const WickJsonNode *node,
                WickSafetensorsHeader *out, WickError *error)
{
  if (node->kind != WICK_JSON_OBJECT)
    return wick_fail (error, WICK_ERROR_INVALID_DATA, "\"__metadata__\" is %s, not an object",
                      wick_weights_json_kind_name (node->kind));
  out->metadata = calloc (2 * (size_t)node->n_children + 1, sizeof (char *));
  if (out->metadata == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  for (const WickJsonNode *item = wick_weights_json_first (document, node); item != NULL;
       item = wick_weights_json_next (document, item))
    {
      if (item->kind != WICK_JSON_STRING)
        return wick_fail (error, WICK_ERROR_INVALID_DATA,
                          "\"__metadata__\" value of '%.*s' is %s, not a string",
                          WICK_UTF8_CUT (item->key, 200), wick_weights_json_kind_name (item->kind));
      out->metadata[2 * out->n_metadata] = strdup (item->key);
      out->metadata[2 * out->n_metadata + 1] = strdup (item->text);
      out->n_metadata++;
      if (out->metadata[2 * out->n_metadata - 2] == NULL
          || out->metadata[2 * out->n_metadata - 1] == NULL)
        return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
    }
  return true;
}

static int
compare_by_begin (const void *a, const void *b)
{
  const WickSafetensorsTensor *x = a, *y = b;
  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return 0;
}

static int
compare_by_name (const void *a, const void *b)
{
  const WickSafetensorsTensor *x = a, *y = b;
  return strcmp (x->name, y->name);
}

/* Sorted by offset, each non-empty tensor must begin at or after the end of
 * every earlier one; then sorted by name, no name may repeat. */
static bool
check_layout (WickSafetensorsHeader *out, WickError *error)
{
  qsort (out->tensors, out->n_tensors, sizeof *out->tensors, compare_by_begin);
  const WickSafetensorsTensor *reach = NULL;
  for (size_t i = 0; i < out->n_tensors; i++)
    {
      const WickSafetensorsTensor *t = &out->tensors[i];
      if (t->begin == t->end)
        continue;
      if (reach != NULL && t->begin < reach->end)
        return wick_fail (error, WICK_ERROR_INVALID_DATA,
                          "tensors '%.*s' [%" PRIu64 ", %" PRIu64 ") and '%.*s' [%" PRIu64
                          ", %" PRIu64 ") overlap",
                          WICK_UTF8_CUT (reach->name, 200), reach->begin, reach->end,
                          WICK_UTF8_CUT (t->name, 200), t->begin, t->end);
      if (reach == NULL || t->end > reach->end)
        reach = t;
    }
  qsort (out->tensors, out->n_tensors, sizeof *out->tensors, compare_by_name);
  for (size_t i = 1; i < out->n_tensors; i++)
    if (strcmp (out->tensors[i - 1].name, out->tensors[i].name) == 0)
      return wick_fail (error, WICK_ERROR_INVALID_DATA, "tensor '%.*s' appears twice",
                        WICK_UTF8_CUT (out->tensors[i].name, 200));
  return true;
}

static bool
parse_entries (const WickJsonDocument *document, const WickJsonNode *root, uint64_t data_size,
               WickSafetensorsHeader *out, WickError *error)
{
  out->tensors = calloc (root->n_children + 1, sizeof *out->tensors);
  if (out->tensors == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  for (const WickJsonNode *entry = wick_weights_json_first (document, root); entry != NULL;
       entry = wick_weights_json_next (document, entry))
    {
      if (strlen (entry->key) != entry->key_length)
        return wick_fail (error, WICK_ERROR_INVALID_DATA, "a tensor name contains a NUL character");
      if (strcmp (entry->key, "__metadata__") == 0)
        {
          if (out->metadata != NULL)
            return wick_fail (error, WICK_ERROR_INVALID_DATA, "\"__metadata__\" appears twice");
          if (!parse_metadata (document, entry, out, error))
            return false;
          continue;
        }
      WickSafetensorsTensor *tensor = &out->tensors[out->n_tensors];
      if (!parse_tensor (document, entry, data_size, tensor, error))
        return false;
      tensor->name = strdup (entry->key);
      if (tensor->name == NULL)
        return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
      out->n_tensors++;
    }
  return check_layout (out, error);
}

bool
wick_safetensors_parse_header (const char *json, size_t length, uint64_t data_size,
                               WickSafetensorsHeader *out, WickError *error)
{
  memset (out, 0, sizeof *out);
  out->data_size = data_size;
  if (length == 0 || json[0] != '{')
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "header: the JSON header does not start with '{'");
  WickJsonDocument document;
  WickError json_error;
  if (!wick_weights_json_parse (json, length, &document, &json_error))
    return wick_fail (error, json_error.code, "header: invalid JSON: %s", json_error.message);
  bool ok = parse_entries (&document, wick_weights_json_root (&document), data_size, out, error);
  wick_weights_json_clear (&document);
  if (!ok)
    {
      char message[sizeof error->message];
      snprintf (message, sizeof message, "header: %.*s", WICK_UTF8_CUT (error->message, 490));
      memcpy (error->message, message, sizeof message);
      wick_safetensors_header_clear (out);
    }
  return ok;
}

bool
wick_safetensors_parse_bytes (const uint8_t *data, size_t size, WickSafetensorsHeader *out,
                              WickError *error)
{
  uint64_t length;
  memset (out, 0, sizeof *out);
  if (size < 8)
    return wick_fail (error, WICK_ERROR_INVALID_DATA,
                      "the file is %zu bytes, shorter than the 8-byte header length", size);
  if (!wick_safetensors_header_length (data, size, &length, error))
    return false;
  if (!wick_safetensors_parse_header ((const char *)data + 8, length, size - 8 - length, out,
                                      error))
    return false;
  out->data_offset = 8 + length;
  return true;
}

void
wick_safetensors_header_clear (WickSafetensorsHeader *header)
{
  for (size_t i = 0; i < header->n_tensors; i++)
    free (header->tensors[i].name);
  free (header->tensors);
  for (size_t i = 0; i < 2 * header->n_metadata; i++)
    free (header->metadata[i]);
  free (header->metadata);
  memset (header, 0, sizeof *header);
}

const WickSafetensorsTensor *
wick_safetensors_header_find (const WickSafetensorsHeader *header, const char *name)
{
  WickSafetensorsTensor key = { .name = (char *)name };
  if (header->n_tensors == 0)
    return NULL;
  return bsearch (&key, header->tensors, header->n_tensors, sizeof key, compare_by_name);
}

void
wick_format_shape (const uint64_t *shape, size_t n_dims, char *out, size_t size)
{
  size_t used = (size_t)snprintf (out, size, "[");
  for (size_t i = 0; i < n_dims && used < size; i++)
    used += (size_t)snprintf (out + used, size - used, i ? ", %" PRIu64 : "%" PRIu64, shape[i]);
  if (used < size)
    snprintf (out + used, size - used, "]");
}

bool
wick_read_exact (int fd, void *buffer, size_t count, uint64_t offset, const char *path,
                 WickError *error)
{
  char *p = buffer;
  while (count > 0)
    {
      ssize_t got = pread (fd, p, count, (off_t)offset);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return wick_fail (error, wick_error_code_from_errno (errno),
                          "%s: read at byte %" PRIu64 " failed: %s", path, offset,
                          strerror (errno));
      if (got == 0)
        return wick_fail (error, WICK_ERROR_INVALID_DATA,
                          "%s: unexpected end of file at byte %" PRIu64, path, offset);
      p += got;
      count -= (size_t)got;
      offset += (uint64_t)got;
    }
  return true;
}

/* ---- writer -------------------------------------------------------- */

/* The header is written with libwick's one JSON writer (common/wick-json.h);
 * names and metadata must be UTF-8, which the reader insists on. */

static bool
header_string (WickJson *text, const char *what, size_t index, const char *s, WickError *error)
{
  size_t length = strlen (s);
  if (!wick_utf8_validate (s, length))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "%s %zu: not valid UTF-8", what, index);
  wick_json_string_len (text, s, length);
  return true;
}

static bool
tensor_bytes (const WickWeightParam *tensor, uint64_t *out, WickError *error)
{
  uint64_t count = 1;
  size_t element = wick_weight_dtype_size (tensor->dtype);
  if (element == 0)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "tensor '%.*s': unknown dtype %d",
                      WICK_UTF8_CUT (tensor->name, 200), (int)tensor->dtype);
  if (tensor->n_dims > WICK_WEIGHT_MAX_DIMS || (tensor->n_dims > 0 && tensor->shape == NULL))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "tensor '%.*s': invalid shape",
                      WICK_UTF8_CUT (tensor->name, 200));
  for (size_t i = 0; i < tensor->n_dims; i++)
    if (__builtin_mul_overflow (count, tensor->shape[i], &count))
      return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                        "tensor '%.*s': its element count overflows",
                        WICK_UTF8_CUT (tensor->name, 200));
  if (__builtin_mul_overflow (count, (uint64_t)element, out))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "tensor '%.*s': its byte size overflows",
                      WICK_UTF8_CUT (tensor->name, 200));
  return true;
}

static bool
build_header (const WickWeightParam *tensors, size_t n_tensors, const WickTag *metadata,
              size_t n_metadata, WickJson *text, uint64_t *data_bytes, WickError *error)
{
  uint64_t offset = 0;
  wick_json_append (text, "{", 1);
  if (n_metadata > 0)
    {
      wick_json_raw (text, "\"__metadata__\":{");
      for (size_t i = 0; i < n_metadata; i++)
        {
          if (i)
            wick_json_append (text, ",", 1);
          if (!header_string (text, "metadata key", i, metadata[i].key, error))
            return false;
          wick_json_append (text, ":", 1);
          if (!header_string (text, "metadata value", i, metadata[i].value, error))
            return false;
        }
      wick_json_append (text, "}", 1);
    }
  for (size_t i = 0; i < n_tensors; i++)
    {
      uint64_t bytes;
      if (tensors[i].name == NULL || tensors[i].data == NULL)
        return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "tensor %zu has no name or no data",
                          i);
      if (!tensor_bytes (&tensors[i], &bytes, error))
        return false;
      if (n_metadata > 0 || i > 0)
        wick_json_append (text, ",", 1);
      if (!header_string (text, "tensor", i, tensors[i].name, error))
        return false;
      wick_json_raw (text, ":{");
      wick_json_key (text, "dtype");
      wick_json_string (text, wick_weight_dtype_name (tensors[i].dtype));
      wick_json_key (text, "shape");
      wick_json_u64_array (text, tensors[i].shape, tensors[i].n_dims);
      wick_json_key (text, "data_offsets");
      uint64_t offsets[2] = { offset, offset + bytes };
      wick_json_u64_array (text, offsets, 2);
      wick_json_append (text, "}", 1);
      offset += bytes;
    }
  wick_json_append (text, "}", 1);
  while (!text->failed && (8 + text->length) % 8 != 0)
    wick_json_append (text, " ", 1);
  *data_bytes = offset;
  return text->failed
           ? wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory for the safetensors header")
           : true;
}

static bool
write_all (int fd, const void *data, size_t count, const char *path, WickError *error)
{
  const char *p = data;
  while (count > 0)
    {
      ssize_t n = write (fd, p, count);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return wick_fail (error, wick_error_code_from_errno (errno), "%s: write failed: %s", path,
                          strerror (errno));
      p += n;
      count -= (size_t)n;
    }
  return true;
}

static bool
write_tensor_data (int fd, const WickWeightParam *tensor, WickWeightMemory memory, const char *path,
                   WickError *error)
{
  uint64_t bytes;
  if (!tensor_bytes (tensor, &bytes, error))
    return false;
  if (memory == WICK_WEIGHT_MEMORY_HOST)
    return write_all (fd, tensor->data, bytes, path, error);
  /* Device memory: through a host bounce buffer. */
  const WickWeightBacking *backing = wick_weight_backing_for (memory);
  if (backing == NULL)
    return wick_fail (error, WICK_ERROR_UNSUPPORTED,
                      "tensor '%.*s': CUDA memory, but libwick was built without CUDA",
                      WICK_UTF8_CUT (tensor->name, 200));
  const size_t chunk = 16u << 20;
  void *bounce = malloc (chunk);
  if (bounce == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  bool ok = true;
  for (uint64_t done = 0; ok && done < bytes; done += chunk)
    {
      size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
      ok = backing->copy_to_host (bounce, (const char *)tensor->data + done, n, error)
           && write_all (fd, bounce, n, path, error);
    }
  free (bounce);
  return ok;
}

bool
wick_safetensors_write (const char *path, const WickWeightParam *tensors, size_t n_tensors,
                        WickWeightMemory memory, const WickTag *metadata, size_t n_metadata,
                        WickError *error)
{
  WickJson text;
  wick_json_init (&text);
  uint64_t data_bytes;
  if (!build_header (tensors, n_tensors, metadata, n_metadata, &text, &data_bytes, error))
    {
      wick_json_clear (&text);
      return false;
    }
  char temporary[4096];
  if ((size_t)snprintf (temporary, sizeof temporary, "%s.tmp", path) >= sizeof temporary)
    {
      wick_json_clear (&text);
      return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "%.*s: path too long",
                        WICK_UTF8_CUT (path, 200));
    }
  int fd = open (temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      wick_json_clear (&text);
      return wick_fail (error, wick_error_code_from_errno (errno), "%s: cannot create: %s",
                        temporary, strerror (errno));
    }
  uint8_t prefix[8];
  for (int i = 0; i < 8; i++)
    prefix[i] = (uint8_t)((uint64_t)text.length >> (8 * i));
  bool ok = write_all (fd, prefix, 8, temporary, error)
            && write_all (fd, text.data, text.length, temporary, error);
  for (size_t i = 0; ok && i < n_tensors; i++)
    ok = write_tensor_data (fd, &tensors[i], memory, temporary, error);
  wick_json_clear (&text);
  if (close (fd) != 0 && ok)
    ok = wick_fail (error, wick_error_code_from_errno (errno), "%s: close failed: %s", temporary,
                    strerror (errno));
  if (ok && rename (temporary, path) != 0)
    ok = wick_fail (error, wick_error_code_from_errno (errno), "%s: cannot rename to %s: %s",
                    temporary, path, strerror (errno));
  if (!ok)
    unlink (temporary);
  return ok;
}
