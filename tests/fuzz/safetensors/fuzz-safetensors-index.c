/* fuzz-safetensors-index.c — libFuzzer target for model.safetensors.index.json
 * (and the strict JSON reader under it): a weight_map that parses holds plain
 * shard file names only. */
#include "../../../backend/weights/wick-safetensors-private.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  WickCheckpointKey *keys;
  char **shards;
  size_t n;
  WickError error = { "" };
  if (!wick_checkpoint_parse_index ((const char *)data, size, &keys, &shards, &n, &error))
    {
      if (error.message[0] == '\0' || keys != NULL || shards != NULL || n != 0)
        abort ();
      return 0;
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
  return 0;
}
