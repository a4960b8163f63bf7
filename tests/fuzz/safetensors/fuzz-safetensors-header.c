/* fuzz-safetensors-header.c — libFuzzer target for the safetensors header
 * reader: the input is a whole file (8-byte length, JSON header, data). A
 * header that parses must satisfy the reader's contract: every tensor inside
 * the data, sizes matching shapes, names sorted and unique, no overlap. */
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

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
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
  return 0;
}
