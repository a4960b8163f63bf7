/* wick-weight-hash.c — the parameter digest (wick-weight-hash-private.h). */
#include "wick-weight-hash-private.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define K1 0x9e3779b185ebca87ull
#define K2 0xc2b2ae3d27d4eb4full
#define K3 0x165667b19e3779f9ull

static inline uint64_t
rotl (uint64_t x, unsigned r)
{
  return (x << r) | (x >> (64 - r));
}

static inline uint64_t
lane (uint64_t acc, uint64_t word)
{
  return rotl (acc + word * K2, 31) * K1;
}

static inline uint64_t
avalanche (uint64_t h)
{
  h ^= h >> 33;
  h *= K2;
  h ^= h >> 29;
  h *= K3;
  h ^= h >> 32;
  return h;
}

static inline uint64_t
load64 (const unsigned char *p)
{
  uint64_t v;
  memcpy (&v, p, sizeof v);
  return v;
}

void
wick_weight_hash_begin (WickWeightHashState *state, uint64_t seed)
{
  state->a = seed + K1 + K2;
  state->b = seed + K2;
  state->c = seed;
  state->d = seed - K1;
}

void
wick_weight_hash_blocks (WickWeightHashState *state, const void *data, size_t bytes)
{
  const unsigned char *p = data;
  uint64_t a = state->a, b = state->b, c = state->c, d = state->d;
  for (size_t i = 0; i + 32 <= bytes; i += 32)
    {
      a = lane (a, load64 (p + i));
      b = lane (b, load64 (p + i + 8));
      c = lane (c, load64 (p + i + 16));
      d = lane (d, load64 (p + i + 24));
    }
  state->a = a, state->b = b, state->c = c, state->d = d;
}

uint64_t
wick_weight_hash_end (const WickWeightHashState *state, const void *tail, size_t tail_bytes,
                      uint64_t total_bytes)
{
  const unsigned char *p = tail;
  uint64_t h = rotl (state->a, 1) + rotl (state->b, 7) + rotl (state->c, 12) + rotl (state->d, 18)
               + total_bytes;
  size_t i = 0;
  for (; i + 8 <= tail_bytes; i += 8)
    h = rotl (h ^ lane (0, load64 (p + i)), 27) * K1 + K3;
  for (; i < tail_bytes; i++)
    h = rotl (h ^ (p[i] * K3), 11) * K1;
  return avalanche (h);
}

uint64_t
wick_weight_hash (const void *data, size_t bytes, uint64_t seed)
{
  WickWeightHashState state;
  size_t whole = bytes / 32 * 32;
  wick_weight_hash_begin (&state, seed);
  wick_weight_hash_blocks (&state, data, whole);
  return wick_weight_hash_end (&state, (const unsigned char *)data + whole, bytes - whole, bytes);
}

uint64_t
wick_weight_digest_part (uint64_t chunk_hash, uint64_t index)
{
  return avalanche (chunk_hash ^ (index * K3 + K2));
}

uint64_t
wick_weight_digest_range (const void *data, uint64_t bytes, uint64_t first_chunk)
{
  const unsigned char *p = data;
  uint64_t digest = 0;
  for (uint64_t at = 0, index = first_chunk; at < bytes; at += WICK_WEIGHT_HASH_CHUNK, index++)
    {
      uint64_t n = bytes - at < WICK_WEIGHT_HASH_CHUNK ? bytes - at : WICK_WEIGHT_HASH_CHUNK;
      digest += wick_weight_digest_part (wick_weight_hash (p + at, (size_t)n, 0), index);
    }
  return digest;
}

typedef struct
{
  const unsigned char *data;
  uint64_t bytes;
  uint64_t first_chunk, step;
  uint64_t digest;
} DigestPart;

static void *
digest_thread (void *data)
{
  DigestPart *part = data;
  for (uint64_t index = part->first_chunk; index * WICK_WEIGHT_HASH_CHUNK < part->bytes;
       index += part->step)
    {
      uint64_t at = index * WICK_WEIGHT_HASH_CHUNK;
      uint64_t n
        = part->bytes - at < WICK_WEIGHT_HASH_CHUNK ? part->bytes - at : WICK_WEIGHT_HASH_CHUNK;
      part->digest
        += wick_weight_digest_part (wick_weight_hash (part->data + at, (size_t)n, 0), index);
    }
  return NULL;
}

/* Large buffers are hashed by up to DIGEST_THREADS threads: the chunks are
 * independent and the digest is their sum, so the result is the same. */
#define DIGEST_THREADS 8

uint64_t
wick_weight_digest (const void *data, uint64_t bytes)
{
  uint64_t chunks = (bytes + WICK_WEIGHT_HASH_CHUNK - 1) / WICK_WEIGHT_HASH_CHUNK;
  unsigned n_threads
    = chunks >= 4 ? (chunks < DIGEST_THREADS ? (unsigned)chunks : DIGEST_THREADS) : 1;
  DigestPart parts[DIGEST_THREADS];
  pthread_t threads[DIGEST_THREADS];
  bool started[DIGEST_THREADS] = { false };
  for (unsigned t = 0; t < n_threads; t++)
    {
      parts[t] = (DigestPart){ data, bytes, t, n_threads, 0 };
      if (t > 0)
        started[t] = pthread_create (&threads[t], NULL, digest_thread, &parts[t]) == 0;
    }
  digest_thread (&parts[0]);
  uint64_t digest = parts[0].digest;
  for (unsigned t = 1; t < n_threads; t++)
    {
      if (started[t])
        pthread_join (threads[t], NULL);
      else
        digest_thread (&parts[t]); /* no thread: do its share here */
      digest += parts[t].digest;
    }
  return digest;
}
