/* wick-weight-hash-private.h — the digest that proves a parameter's bytes.
 *
 * Eviction takes the digest of each storage's live bytes; restore takes the
 * digest of what it read (from the checkpoint, or the RAM copy) and refuses
 * the storage when they differ, before the module is marked resident. The
 * bytes are cut into WICK_WEIGHT_HASH_CHUNK pieces, hashed independently
 * (four 64-bit multiply-rotate lanes, several GB/s a core) and combined by an
 * order-free sum of the chunks' hashes mixed with their index, so the disk
 * reader's threads can hash their chunks in any order. Not cryptographic: it
 * catches damaged and changed bytes, not an adversary who chooses them.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Live bytes per hashed chunk. Copies and reads go in larger pieces (the
 * disk reader's 8 MiB slots, a RAM-tier copy's 8 MiB fences), each hashed as
 * its chunks, so that the chunks of the last piece of a copy are hashed by
 * several threads at once. 64 KiB: each lane of a chunk is one serial chain
 * of 2048 multiply-rotates, which is what the GPU digest
 * (wick-weight-digest-device.cu: four threads a chunk) waits for after the
 * last copy of a restore lands — 1 MiB chunks made that tail about 0.3 ms. */
#define WICK_WEIGHT_HASH_CHUNK (1u << 16)

uint64_t wick_weight_hash (const void *data, size_t bytes, uint64_t seed);

/* The same hash taken piece by piece: blocks of a multiple of 32 bytes, then
 * the tail (under 32 bytes) and the total length. */
typedef struct
{
  uint64_t a, b, c, d;
} WickWeightHashState;
void wick_weight_hash_begin (WickWeightHashState *state, uint64_t seed);
void wick_weight_hash_blocks (WickWeightHashState *state, const void *data, size_t bytes);
uint64_t wick_weight_hash_end (const WickWeightHashState *state, const void *tail,
                               size_t tail_bytes, uint64_t total_bytes);

/* The contribution of chunk @index (its hash @chunk_hash) to a digest. */
uint64_t wick_weight_digest_part (uint64_t chunk_hash, uint64_t index);

/* The contribution of @bytes at @data, whose first byte starts chunk
 * @first_chunk of its buffer, to that buffer's digest (its chunks in turn). */
uint64_t wick_weight_digest_range (const void *data, uint64_t bytes, uint64_t first_chunk);

/* The whole digest of @bytes in memory (chunked as above). */
uint64_t wick_weight_digest (const void *data, uint64_t bytes);
