/* fuzz-safetensors.c — libFuzzer target for the weight store's parsers of
 * untrusted bytes. Every input goes through both:
 * - the safetensors header reader, as a whole file (8-byte length, JSON
 *   header, data). A header that parses must satisfy the reader's contract:
 *   every tensor inside the data, sizes matching shapes, names sorted and
 *   unique.
 * - the model.safetensors.index.json reader. A weight_map that parses holds
 *   only plain shard file names.
 * Both run the strict JSON reader. (One target, named after this directory,
 * so that tools/fuzz.sh finds its corpus.) */
#include "../../../backend/weights/wick-safetensors-private.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_contract (const WickSafetensorsHeader *header, size_t size)
{
  if (header->data_offset + header->data_size != size)
    abort ();
  for (size_t i = 0; i < header->n_tensors; i++)
    {
      const WickSafetensorsTensor *t = &header->tensors[i];
      uint64_t bytes = wick_weight_dtype_size (t->dtype);
      for (size_t d = 0; d < t->n_dims; d++)
        bytes *= t->shape[d];
      if (t->begin > t->end || t->end > header->data_size || bytes != t->end - t->begin)
        abort ();
      if (i > 0 && strcmp (header->tensors[i - 1].name, t->name) >= 0)
        abort ();
      if (wick_safetensors_header_find (header, t->name) != t)
        abort ();
    }
}

static void
fuzz_header (const uint8_t *data, size_t size)
{
  WickSafetensorsHeader header;
  WickError error = { "" };
  if (wick_safetensors_parse_bytes (data, size, &header, &error))
    {
      check_contract (&header, size);
      wick_safetensors_header_clear (&header);
    }
  else if (error.message[0] == '\0')
    abort ();
}

static void
fuzz_index (const uint8_t *data, size_t size)
{
  WickCheckpointKey *keys;
  char **shards;
  size_t n;
  WickError error = { "" };
  if (!wick_checkpoint_parse_index ((const char *)data, size, &keys, &shards, &n, &error))
    {
      if (error.message[0] == '\0' || keys != NULL || shards != NULL || n != 0)
        abort ();
      return;
    }
  for (size_t i = 0; i < n; i++)
    {
      if (strchr (shards[i], '/') != NULL || strcmp (shards[i], "..") == 0 || shards[i][0] == '\0')
        abort ();
      free (keys[i].key);
      free (shards[i]);
    }
  free (keys);
  free (shards);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_header (data, size);
  fuzz_index (data, size);
  return 0;
}
