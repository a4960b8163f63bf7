/* wick-weight-digest-pipe.c — RAM-tier copies hashed on the way
 * (wick-weight-digest-pipe-private.h). */
#include "wick-weight-digest-pipe-private.h"

#include "wick-weight-digest-device-private.h"
#include "wick-weight-hash-private.h"
#include "wick-weight-store-private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/wick-error-private.h"

#define PIPE_THREADS 16
/* A CUDA eviction's copies go in pieces of this many bytes, a fence after
 * each (a smaller copy loses bandwidth); every chunk of a piece waits on it. */
#define COPY_PIECE (8u << 20)
/* Host copies go in pieces that stay in the cache until they are hashed. */
#define HOST_PIECE (256u << 10)

typedef struct
{
  unsigned char *hashed; /* the bytes hashed: the destination on the host */
  const unsigned char *copy_from; /* host: copy from here into hashed first; else NULL */
  bool to_spill;                  /* host: which copy function */
  uint64_t bytes;
  uint64_t index; /* the chunk's index in its storage */
  uint64_t *digest;
  void *fence; /* waited for before hashing (owned by the pipe's fences); NULL: ready */
} Piece;

typedef struct
{
  void *fence;
  size_t first_piece; /* the first piece that waits on it */
} Fence;

struct WickDigestPipe
{
  const WickWeightBacking *backing;
  Piece *pieces;
  size_t n, capacity;
  Fence *fences;
  size_t n_fences, fences_capacity;
  size_t next; /* the next piece a worker takes (atomic) */
  /* CUDA: the digests are taken on the GPU, one a copy (a piece each,
   * numbered by its slot); NULL: CPU workers hash the pieces */
  WickDeviceDigests *device;
  size_t device_slots; /* slots used, never reused (a truncated one holds a sum) */
  pthread_mutex_t lock;
  bool failed;
  WickError error;
};

WickDigestPipe *
wick_digest_pipe_new (const WickWeightBacking *backing)
{
  WickDigestPipe *pipe = calloc (1, sizeof *pipe);
  if (pipe == NULL)
    return NULL;
  pipe->backing = backing;
  pthread_mutex_init (&pipe->lock, NULL);
  /* On the GPU where libwick has the kernels (WICK_WEIGHT_GPU_DIGESTS=0
   * switches it off); without a stream for them the CPU workers hash. */
  if (backing->memory == WICK_WEIGHT_MEMORY_CUDA && wick_device_digests_enabled ())
    pipe->device = wick_device_digests_new (NULL);
  return pipe;
}

void
wick_digest_pipe_free (WickDigestPipe *pipe)
{
  if (pipe == NULL)
    return;
  wick_device_digests_free (pipe->device); /* waits for its kernels first */
  for (size_t i = 0; i < pipe->n_fences; i++)
    pipe->backing->fence_free (pipe->fences[i].fence);
  free (pipe->fences);
  free (pipe->pieces);
  pthread_mutex_destroy (&pipe->lock);
  free (pipe);
}

static Piece *
add_piece (WickDigestPipe *pipe, WickError *error)
{
  if (pipe->n == pipe->capacity)
    {
      size_t capacity = pipe->capacity ? pipe->capacity * 2 : 64;
      Piece *grown = realloc (pipe->pieces, capacity * sizeof *grown);
      if (grown == NULL)
        {
          wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory for the digest of a copy");
          return NULL;
        }
      pipe->pieces = grown;
      pipe->capacity = capacity;
    }
  Piece *piece = &pipe->pieces[pipe->n++];
  *piece = (Piece){ 0 };
  return piece;
}

/* A fence after the copies queued so far, waited on by the pieces added next. */
static void *
add_fence (WickDigestPipe *pipe, WickError *error)
{
  if (pipe->n_fences == pipe->fences_capacity)
    {
      size_t capacity = pipe->fences_capacity ? pipe->fences_capacity * 2 : 16;
      Fence *grown = realloc (pipe->fences, capacity * sizeof *grown);
      if (grown == NULL)
        {
          wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory for the digest of a copy");
          return NULL;
        }
      pipe->fences = grown;
      pipe->fences_capacity = capacity;
    }
  void *fence = pipe->backing->fence_new ();
  if (fence == NULL)
    {
      wick_fail (error, WICK_ERROR_NO_MEMORY, "cannot create a copy fence");
      return NULL;
    }
  pipe->fences[pipe->n_fences++] = (Fence){ fence, pipe->n };
  if (!pipe->backing->fence_record (fence, error))
    return NULL; /* freed with the pipe */
  return fence;
}

/* The GPU takes the digest of the device side: an eviction's live bytes
 * beside their copy out, a restore's live bytes once their copy in landed. */
static bool
add_device_copy (WickDigestPipe *pipe, bool to_spill, void *live, void *spill, uint64_t bytes,
                 uint64_t *digest, WickError *error)
{
  const WickWeightBacking *backing = pipe->backing;
  void *fence = NULL;
  if (to_spill)
    {
      if (!backing->copy_to_staging (spill, live, (size_t)bytes, error))
        return false;
    }
  else if (!backing->copy_from_staging (live, spill, (size_t)bytes, error)
           || (fence = add_fence (pipe, error)) == NULL)
    return false;
  Piece *piece = add_piece (pipe, error);
  if (piece == NULL)
    return false;
  piece->bytes = bytes;
  piece->digest = digest;
  piece->index = pipe->device_slots++;
  return wick_device_digests_queue (pipe->device, (size_t)piece->index, live, bytes, 0, fence,
                                    error);
}

bool
wick_digest_pipe_add_copy (WickDigestPipe *pipe, bool to_spill, void *live, void *spill,
                           uint64_t bytes, uint64_t *digest, WickError *error)
{
  const WickWeightBacking *backing = pipe->backing;
  bool host = backing->memory == WICK_WEIGHT_MEMORY_HOST;
  *digest = 0;
  if (pipe->device != NULL)
    return add_device_copy (pipe, to_spill, live, spill, bytes, digest, error);
  /* A CUDA restore queues its copy whole: the workers hash the spill meanwhile. */
  if (!host && !to_spill && !backing->copy_from_staging (live, spill, (size_t)bytes, error))
    return false;
  for (uint64_t piece_at = 0; piece_at < bytes; piece_at += COPY_PIECE)
    {
      uint64_t piece_bytes = bytes - piece_at < COPY_PIECE ? bytes - piece_at : COPY_PIECE;
      void *fence = NULL;
      if (!host && to_spill)
        {
          /* The piece's copy, then its fence: its chunks are hashed when it lands. */
          if (!backing->copy_to_staging ((unsigned char *)spill + piece_at,
                                         (const unsigned char *)live + piece_at,
                                         (size_t)piece_bytes, error)
              || (fence = add_fence (pipe, error)) == NULL)
            return false;
        }
      for (uint64_t at = piece_at; at < piece_at + piece_bytes; at += WICK_WEIGHT_HASH_CHUNK)
        {
          uint64_t n = bytes - at < WICK_WEIGHT_HASH_CHUNK ? bytes - at : WICK_WEIGHT_HASH_CHUNK;
          Piece *piece = add_piece (pipe, error);
          if (piece == NULL)
            return false;
          piece->bytes = n;
          piece->index = at / WICK_WEIGHT_HASH_CHUNK;
          piece->digest = digest;
          piece->to_spill = to_spill;
          piece->fence = fence;
          if (host)
            {
              piece->hashed = (unsigned char *)(to_spill ? spill : live) + at;
              piece->copy_from = (const unsigned char *)(to_spill ? live : spill) + at;
            }
          else
            piece->hashed = (unsigned char *)spill + at;
        }
    }
  return true;
}

size_t
wick_digest_pipe_mark (const WickDigestPipe *pipe)
{
  return pipe->n;
}

void
wick_digest_pipe_truncate (WickDigestPipe *pipe, size_t mark)
{
  /* A mapping released after this must not be read by a queued kernel. */
  if (pipe->device != NULL && pipe->n > mark)
    {
      WickError ignored;
      wick_device_digests_wait (pipe->device, NULL, 0, &ignored);
    }
  if (pipe->n > mark)
    pipe->n = mark;
  while (pipe->n_fences > 0 && pipe->fences[pipe->n_fences - 1].first_piece >= mark)
    pipe->backing->fence_free (pipe->fences[--pipe->n_fences].fence);
}

static void
fail_once (WickDigestPipe *pipe, const WickError *error)
{
  pthread_mutex_lock (&pipe->lock);
  if (!pipe->failed)
    pipe->error = *error;
  pipe->failed = true;
  pthread_mutex_unlock (&pipe->lock);
}

/* Copies the piece in cache-sized parts, hashing each part just written. */
static bool
copy_and_hash (const WickWeightBacking *backing, const Piece *piece, uint64_t *hash,
               WickError *error)
{
  WickWeightHashState state;
  wick_weight_hash_begin (&state, 0);
  uint64_t whole = piece->bytes / 32 * 32;
  for (uint64_t at = 0; at < piece->bytes; at += HOST_PIECE)
    {
      size_t n = piece->bytes - at < HOST_PIECE ? (size_t)(piece->bytes - at) : HOST_PIECE;
      bool ok = piece->to_spill
                  ? backing->copy_to_staging (piece->hashed + at, piece->copy_from + at, n, error)
                  : backing->copy_from_staging (piece->hashed + at, piece->copy_from + at, n,
                                                error);
      if (!ok)
        return false;
      if (at < whole)
        wick_weight_hash_blocks (&state, piece->hashed + at,
                                 (size_t)((whole - at) < n ? whole - at : n));
    }
  *hash = wick_weight_hash_end (&state, piece->hashed + whole, (size_t)(piece->bytes - whole),
                                piece->bytes);
  return true;
}

static void *
worker (void *data)
{
  WickDigestPipe *pipe = data;
  for (;;)
    {
      size_t i = __atomic_fetch_add (&pipe->next, 1, __ATOMIC_RELAXED);
      if (i >= pipe->n)
        return NULL;
      const Piece *piece = &pipe->pieces[i];
      WickError error;
      uint64_t hash;
      if (piece->fence != NULL && !pipe->backing->fence_wait (piece->fence, &error))
        {
          fail_once (pipe, &error);
          continue;
        }
      if (piece->copy_from != NULL)
        {
          if (!copy_and_hash (pipe->backing, piece, &hash, &error))
            {
              fail_once (pipe, &error);
              continue;
            }
        }
      else
        hash = wick_weight_hash (piece->hashed, (size_t)piece->bytes, 0);
      __atomic_fetch_add (piece->digest, wick_weight_digest_part (hash, piece->index),
                          __ATOMIC_RELAXED);
    }
}

static bool
run_device (WickDigestPipe *pipe, WickError *error)
{
  uint64_t *sums = calloc (pipe->device_slots + 1, sizeof *sums);
  if (sums == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory for the digests of a copy");
  bool ok = wick_device_digests_wait (pipe->device, sums, pipe->device_slots, error);
  for (size_t i = 0; ok && i < pipe->n; i++)
    *pipe->pieces[i].digest = sums[pipe->pieces[i].index];
  free (sums);
  return ok;
}

bool
wick_digest_pipe_on_device (const WickDigestPipe *pipe)
{
  return pipe->device != NULL;
}

void
wick_digest_pipe_landing_free (WickDigestPipe *pipe, WickDigestLanding *landing)
{
  if (landing->copied != NULL)
    pipe->backing->fence_free (landing->copied);
  if (landing->hashed != NULL)
    pipe->backing->fence_free (landing->hashed);
  landing->copied = landing->hashed = NULL;
}

bool
wick_digest_pipe_landing_record (WickDigestPipe *pipe, WickDigestLanding *landing, WickError *error)
{
  landing->copied = landing->hashed = NULL;
  if (pipe->device == NULL)
    return wick_fail (error, WICK_ERROR_UNSUPPORTED, "the digests are not taken on the GPU");
  landing->copied = pipe->backing->fence_new ();
  landing->hashed = pipe->backing->fence_new ();
  bool ok = landing->copied != NULL && landing->hashed != NULL;
  if (!ok)
    wick_fail (error, WICK_ERROR_NO_MEMORY, "cannot create a copy fence");
  ok = ok && pipe->backing->fence_record (landing->copied, error)
       && wick_device_digests_fence (pipe->device, landing->hashed, error);
  if (!ok)
    wick_digest_pipe_landing_free (pipe, landing);
  return ok;
}

bool
wick_digest_pipe_landing_wait (WickDigestPipe *pipe, WickDigestLanding *landing, WickError *error)
{
  bool ok = landing->copied != NULL && pipe->backing->fence_wait (landing->copied, error)
            && pipe->backing->fence_wait (landing->hashed, error);
  wick_digest_pipe_landing_free (pipe, landing);
  return ok;
}

bool
wick_digest_pipe_run (WickDigestPipe *pipe, WickError *error)
{
  if (pipe->device != NULL)
    return run_device (pipe, error);
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  size_t n_threads = cpus > 1 ? (size_t)cpus : 1;
  if (n_threads > PIPE_THREADS)
    n_threads = PIPE_THREADS;
  if (n_threads > pipe->n)
    n_threads = pipe->n ? pipe->n : 1;
  pthread_t threads[PIPE_THREADS];
  size_t started = 0;
  for (size_t t = 1; t < n_threads; t++)
    if (pthread_create (&threads[started], NULL, worker, pipe) == 0)
      started++;
  worker (pipe); /* the caller works too, and alone if no thread started */
  for (size_t t = 0; t < started; t++)
    pthread_join (threads[t], NULL);
  if (pipe->failed)
    {
      *error = pipe->error;
      return false;
    }
  return true;
}
