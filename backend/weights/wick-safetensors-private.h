/* wick-safetensors-private.h — reading safetensors files and checkpoints.
 *
 * File layout (https://github.com/huggingface/safetensors):
 *   bytes 0..8     N, the header length, unsigned 64-bit little-endian
 *   bytes 8..8+N   a JSON object: "__metadata__" (optional, string → string)
 *                  and one member per tensor: {"dtype": "F32", "shape": [2, 3],
 *                  "data_offsets": [begin, end]}, offsets relative to 8+N
 *   bytes 8+N..    the tensor data, little-endian, row-major
 *
 * Every byte is untrusted. The reader checks: the file holds the 8-byte
 * prefix; N ≤ 100 000 000 (safetensors' own limit) and 8+N ≤ the file size;
 * the header is strict JSON (wick-weights-json-private.h) whose root is an
 * object; each tensor entry has a known dtype, a shape of at most
 * WICK_WEIGHT_MAX_DIMS non-negative integers, and data_offsets of exactly two
 * integers with begin ≤ end ≤ the data size; shape × dtype size computed
 * without overflow equals end − begin; no two tensors overlap; no name
 * repeats or contains a NUL. Errors are sentences; callers prefix the path.
 *
 * A checkpoint is one file, or a directory with model.safetensors.index.json
 * ({"weight_map": {key: shard file name}}, shard names plain file names in the
 * directory) or, without an index, every *.safetensors file in it.
 */
#pragma once

#include "wick-session-private.h"

#include <sys/types.h>
#include <time.h>

#define WICK_SAFETENSORS_MAX_HEADER 100000000u

typedef struct
{
  char *name;
  WickWeightDtype dtype;
  uint64_t shape[WICK_WEIGHT_MAX_DIMS];
  size_t n_dims;
  uint64_t begin; /* relative to the data start */
  uint64_t end;
} WickSafetensorsTensor;

typedef struct
{
  WickSafetensorsTensor *tensors; /* sorted by name */
  size_t n_tensors;
  char **metadata; /* key, value, key, value, ... */
  size_t n_metadata;
  uint64_t data_offset; /* 8 + N */
  uint64_t data_size;
} WickSafetensorsHeader;

/* Checks the 8-byte prefix against the file size; out gets N. */
bool wick_safetensors_header_length (const uint8_t prefix[8], uint64_t file_size, uint64_t *out,
                                     WickError *error);
bool wick_safetensors_parse_header (const char *json, size_t length, uint64_t data_size,
                                    WickSafetensorsHeader *out, WickError *error);
/* A whole file in memory (tests, fuzzing). */
bool wick_safetensors_parse_bytes (const uint8_t *data, size_t size, WickSafetensorsHeader *out,
                                   WickError *error);
void wick_safetensors_header_clear (WickSafetensorsHeader *header);
const WickSafetensorsTensor *wick_safetensors_header_find (const WickSafetensorsHeader *header,
                                                           const char *name);

typedef struct
{
  char *path;
  int fd; /* -1 where the shard could not be read */
  WickSafetensorsHeader header;
  char error[512]; /* why fd is -1 */
} WickSafetensorsShard;

typedef struct
{
  char *key;
  size_t shard;
} WickCheckpointKey;

typedef struct
{
  WickSafetensorsShard *shards;
  size_t n_shards;
  WickCheckpointKey *keys; /* sorted by key */
  size_t n_keys;
} WickCheckpoint;

/* Opens a checkpoint (file or directory). A broken shard does not fail the
 * whole checkpoint: its keys report the shard's error when looked up. */
bool wick_checkpoint_open (const char *path, WickCheckpoint *out, WickError *error);
/* Parses an index file's text (model.safetensors.index.json); out gets its
 * weight_map as key → shard file name pairs (sorted by key). */
bool wick_checkpoint_parse_index (const char *json, size_t length, WickCheckpointKey **keys,
                                  char ***shard_names, size_t *n_keys, WickError *error);
void wick_checkpoint_close (WickCheckpoint *checkpoint);

typedef enum
{
  WICK_LOOKUP_FOUND,
  WICK_LOOKUP_ABSENT,      /* no such key */
  WICK_LOOKUP_SHARD_ERROR, /* the key's shard could not be read: reason says why */
} WickCheckpointLookup;

WickCheckpointLookup wick_checkpoint_find (const WickCheckpoint *checkpoint, const char *key,
                                           const WickSafetensorsShard **shard,
                                           const WickSafetensorsTensor **tensor, char *reason,
                                           size_t reason_size);

/* Reads exactly count bytes at offset (retrying short reads). */
bool wick_read_exact (int fd, void *buffer, size_t count, uint64_t offset, const char *path,
                      WickError *error);

/* ---- dtype conversion (for provenance checks and disk restores) ------ */

/* Whether values of from can be converted to to: equal dtypes, or both
 * among F64, F32, F16, BF16. */
bool wick_weight_dtype_convertible (WickWeightDtype from, WickWeightDtype to);
/* Converts count elements; rounding to nearest even, as torch's .to() does. */
void wick_weight_dtype_convert (WickWeightDtype from, const void *source, WickWeightDtype to,
                                void *destination, size_t count);

/* Formats [2, 3] into out. */
void wick_format_shape (const uint64_t *shape, size_t n_dims, char *out, size_t size);
