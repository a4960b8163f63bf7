/* wick-weight-disk-reader.c — reads disk-tier tensors through staging
 * buffers with reader threads (protocol in wick-weight-disk-reader-private.h). */
#include "wick-weight-disk-reader-private.h"

#include "wick-weight-hash-private.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

typedef struct
{
  size_t job;
  uint64_t first; /* element */
  uint64_t count;
} Chunk;

typedef struct
{
  WickDiskStaging *staging;
  const WickDiskJob *jobs;
  Chunk *chunks;
  size_t n_chunks;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  unsigned n_slots, n_readers;
  bool full[WICK_DISK_MAX_SLOTS];
  size_t chunk_in[WICK_DISK_MAX_SLOTS];
  bool fence_pending[WICK_DISK_MAX_SLOTS];
  bool failed;
  WickError error;
  _Atomic uint64_t *digests; /* one per job, or NULL: the readers hash */
  WickDeviceDigests *device;  /* or the GPU hashes what the copies landed */
} Pipeline;

typedef struct
{
  Pipeline *pipeline;
  unsigned reader;
} Reader;

/* The reader threads a read uses (WICK_WEIGHT_DISK_READERS, else 16). */
static unsigned
wick_disk_readers (void)
{
  const char *text = getenv ("WICK_WEIGHT_DISK_READERS");
  if (text != NULL)
    {
      char *end;
      unsigned long n = strtoul (text, &end, 10);
      if (*end == '\0' && n >= 1 && n <= WICK_DISK_MAX_READERS)
        return (unsigned)n;
    }
  return WICK_DISK_READERS;
}

bool
wick_disk_staging_reserve (WickDiskStaging *staging, const WickWeightBacking *backing,
                           size_t slot_bytes, WickError *error)
{
  unsigned n_slots = 2 * wick_disk_readers ();
  if (staging->backing == backing && staging->slot_bytes >= slot_bytes
      && staging->n_slots >= n_slots)
    return true;
  wick_disk_staging_free (staging);
  staging->backing = backing;
  staging->slot_bytes = slot_bytes;
  staging->n_slots = n_slots;
  for (unsigned i = 0; i < n_slots; i++)
    {
      staging->slots[i] = backing->host_alloc (slot_bytes);
      staging->fences[i] = backing->fence_new ();
      if (staging->slots[i] == NULL || staging->fences[i] == NULL)
        {
          wick_disk_staging_free (staging);
          wick_set_error (error, WICK_ERROR_NO_MEMORY,
                          "cannot allocate %u staging buffers of %zu bytes", n_slots,
                          slot_bytes);
          return false;
        }
    }
  return true;
}

void
wick_disk_staging_free (WickDiskStaging *staging)
{
  wick_device_digests_free (staging->device); /* waits for its kernels */
  for (unsigned i = 0; i < staging->n_slots && staging->backing != NULL; i++)
    {
      if (staging->slots[i] != NULL)
        staging->backing->host_free (staging->slots[i], staging->slot_bytes);
      if (staging->fences[i] != NULL)
        staging->backing->fence_free (staging->fences[i]);
    }
  memset (staging, 0, sizeof *staging);
}

static void
pipeline_fail (Pipeline *pipeline, const WickError *error)
{
  pthread_mutex_lock (&pipeline->lock);
  if (!pipeline->failed)
    pipeline->error = *error;
  pipeline->failed = true;
  pthread_cond_broadcast (&pipeline->changed);
  pthread_mutex_unlock (&pipeline->lock);
}

/* Reads one chunk into its slot, converting through scratch when needed,
 * and adds its contribution to its job's digest when digests are asked for:
 * without a conversion, each WICK_WEIGHT_HASH_CHUNK piece is hashed right
 * after its read, while it is still in the cache. */
static bool
read_chunk (Pipeline *pipeline, const Chunk *chunk, void *slot, void **scratch, WickError *error)
{
  const WickDiskJob *job = &pipeline->jobs[chunk->job];
  size_t file_size = wick_weight_dtype_size (job->file_dtype);
  size_t live_size = wick_weight_dtype_size (job->live_dtype);
  uint64_t offset = job->file_offset + chunk->first * file_size;
  size_t bytes = (size_t)chunk->count * file_size;
  uint64_t first_hash_chunk = chunk->first * live_size / WICK_WEIGHT_HASH_CHUNK;
  if (job->file_dtype == job->live_dtype)
    {
      if (pipeline->digests == NULL)
        return wick_read_exact (job->fd, slot, bytes, offset, job->path, error);
      uint64_t digest = 0;
      for (size_t at = 0; at < bytes; at += WICK_WEIGHT_HASH_CHUNK)
        {
          size_t n = bytes - at < WICK_WEIGHT_HASH_CHUNK ? bytes - at : WICK_WEIGHT_HASH_CHUNK;
          if (!wick_read_exact (job->fd, (unsigned char *)slot + at, n, offset + at, job->path,
                                error))
            return false;
          digest += wick_weight_digest_range ((unsigned char *)slot + at, n,
                                              first_hash_chunk + at / WICK_WEIGHT_HASH_CHUNK);
        }
      atomic_fetch_add (&pipeline->digests[chunk->job], digest);
      return true;
    }
  if (*scratch == NULL)
    *scratch = malloc (pipeline->staging->slot_bytes * 4);
  if (*scratch == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for dtype conversion");
      return false;
    }
  if (!wick_read_exact (job->fd, *scratch, bytes, offset, job->path, error))
    return false;
  wick_weight_dtype_convert (job->file_dtype, *scratch, job->live_dtype, slot,
                             (size_t)chunk->count);
  /* The slot as it will go live (a slot starts on a chunk boundary of its
   * job's live bytes). */
  if (pipeline->digests != NULL)
    atomic_fetch_add (&pipeline->digests[chunk->job],
                      wick_weight_digest_range (slot, chunk->count * live_size, first_hash_chunk));
  return true;
}

static void *
reader_main (void *data)
{
  Reader *reader = data;
  Pipeline *pipeline = reader->pipeline;
  const WickWeightBacking *backing = pipeline->staging->backing;
  void *scratch = NULL;
  WickError error;
  for (size_t c = 0; c < pipeline->n_chunks; c++)
    {
      size_t slot = c % pipeline->n_slots;
      if (slot % pipeline->n_readers != reader->reader)
        continue;
      pthread_mutex_lock (&pipeline->lock);
      while (pipeline->full[slot] && !pipeline->failed)
        pthread_cond_wait (&pipeline->changed, &pipeline->lock);
      bool stop = pipeline->failed;
      bool wait_fence = pipeline->fence_pending[slot];
      pipeline->fence_pending[slot] = false;
      pthread_mutex_unlock (&pipeline->lock);
      if (stop)
        break;
      if ((wait_fence && !backing->fence_wait (pipeline->staging->fences[slot], &error))
          || !read_chunk (pipeline, &pipeline->chunks[c], pipeline->staging->slots[slot], &scratch,
                          &error))
        {
          pipeline_fail (pipeline, &error);
          break;
        }
      pthread_mutex_lock (&pipeline->lock);
      pipeline->full[slot] = true;
      pipeline->chunk_in[slot] = c;
      pthread_cond_broadcast (&pipeline->changed);
      pthread_mutex_unlock (&pipeline->lock);
    }
  free (scratch);
  return NULL;
}

/* The calling thread's part: copies chunks to their destinations in order. */
static void
copy_chunks (Pipeline *pipeline)
{
  const WickWeightBacking *backing = pipeline->staging->backing;
  WickError error;
  for (size_t c = 0; c < pipeline->n_chunks; c++)
    {
      size_t slot = c % pipeline->n_slots;
      pthread_mutex_lock (&pipeline->lock);
      while (!(pipeline->full[slot] && pipeline->chunk_in[slot] == c) && !pipeline->failed)
        pthread_cond_wait (&pipeline->changed, &pipeline->lock);
      bool stop = pipeline->failed;
      pthread_mutex_unlock (&pipeline->lock);
      if (stop)
        return;
      const Chunk *chunk = &pipeline->chunks[c];
      const WickDiskJob *job = &pipeline->jobs[chunk->job];
      size_t live_size = wick_weight_dtype_size (job->live_dtype);
      char *destination = (char *)job->destination + chunk->first * live_size;
      uint64_t bytes = chunk->count * live_size;
      if (!backing->copy_from_staging (destination, pipeline->staging->slots[slot],
                                       (size_t)bytes, &error)
          || !backing->fence_record (pipeline->staging->fences[slot], &error)
          || (pipeline->device != NULL
              && !wick_device_digests_queue (pipeline->device, chunk->job, destination, bytes,
                                             chunk->first * live_size / WICK_WEIGHT_HASH_CHUNK,
                                             pipeline->staging->fences[slot], &error)))
        {
          pipeline_fail (pipeline, &error);
          return;
        }
      pthread_mutex_lock (&pipeline->lock);
      pipeline->full[slot] = false;
      pipeline->fence_pending[slot] = true;
      pthread_cond_broadcast (&pipeline->changed);
      pthread_mutex_unlock (&pipeline->lock);
    }
}

static bool
make_chunks (WickDiskStaging *staging, const WickDiskJob *jobs, size_t n_jobs, Chunk **out,
             size_t *n_out, WickError *error)
{
  size_t n = 0, capacity = 0;
  Chunk *chunks = NULL;
  for (size_t j = 0; j < n_jobs; j++)
    {
      /* Chunks of one slot of live bytes (WICK_DISK_SLOT_BYTES, a whole
       * number of the digest's chunks). */
      uint64_t per_chunk = WICK_DISK_SLOT_BYTES / wick_weight_dtype_size (jobs[j].live_dtype);
      for (uint64_t first = 0; first < jobs[j].count; first += per_chunk)
        {
          if (n == capacity)
            {
              capacity = capacity ? capacity * 2 : 64;
              Chunk *grown = realloc (chunks, capacity * sizeof *grown);
              if (grown == NULL)
                {
                  free (chunks);
                  wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory");
                  return false;
                }
              chunks = grown;
            }
          uint64_t left = jobs[j].count - first;
          chunks[n++] = (Chunk){ j, first, left < per_chunk ? left : per_chunk };
        }
    }
  *out = chunks;
  *n_out = n;
  return true;
}

bool
wick_disk_read (WickDiskStaging *staging, const WickDiskJob *jobs, size_t n_jobs, uint64_t *digests,
                WickError *error)
{
  Pipeline pipeline;
  memset (&pipeline, 0, sizeof pipeline);
  pipeline.staging = staging;
  pipeline.jobs = jobs;
  if (staging->slot_bytes < WICK_DISK_SLOT_BYTES)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "disk staging slots of %zu bytes are smaller than a %u-byte chunk",
                      staging->slot_bytes, WICK_DISK_SLOT_BYTES);
      return false;
    }
  if (digests != NULL && staging->backing->memory == WICK_WEIGHT_MEMORY_CUDA
      && wick_device_digests_enabled ())
    {
      /* Made once and kept with the staging; where it cannot be had the
       * readers hash. */
      if (staging->device == NULL && !staging->device_tried)
        staging->device = wick_device_digests_new (NULL);
      staging->device_tried = true;
      /* every job's slot, the empty ones too (zero bytes: a zero digest) */
      if (staging->device != NULL && n_jobs > 0 && wick_device_digests_reset (staging->device, NULL)
          && wick_device_digests_queue (staging->device, n_jobs - 1, NULL, 0, 0, NULL, NULL))
        pipeline.device = staging->device;
    }
  if (digests != NULL && pipeline.device == NULL)
    {
      pipeline.digests = calloc (n_jobs + 1, sizeof *pipeline.digests);
      if (pipeline.digests == NULL)
        {
          wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory");
          return false;
        }
    }
  if (!make_chunks (staging, jobs, n_jobs, &pipeline.chunks, &pipeline.n_chunks, error))
    {
      free (pipeline.digests);
      return false;
    }
  pthread_mutex_init (&pipeline.lock, NULL);
  pthread_cond_init (&pipeline.changed, NULL);
  /* the slots' readers: as many as the staging has slots for */
  pipeline.n_slots = staging->n_slots;
  pipeline.n_readers = staging->n_slots / 2;
  Reader readers[WICK_DISK_MAX_READERS];
  pthread_t threads[WICK_DISK_MAX_READERS];
  unsigned started = 0;
  for (unsigned r = 0; r < pipeline.n_readers; r++)
    {
      readers[r] = (Reader){ &pipeline, r };
      if (pthread_create (&threads[r], NULL, reader_main, &readers[r]) != 0)
        {
          WickError thread_error;
          wick_set_error (&thread_error, WICK_ERROR_FAILED, "cannot start a disk reader thread");
          pipeline_fail (&pipeline, &thread_error);
          break;
        }
      started++;
    }
  copy_chunks (&pipeline);
  for (unsigned r = 0; r < started; r++)
    pthread_join (threads[r], NULL);
  WickError finish_error;
  if (!staging->backing->finish (&finish_error) && !pipeline.failed)
    pipeline_fail (&pipeline, &finish_error);
  /* The GPU's digests of what landed (every copy has, after finish). */
  if (pipeline.device != NULL && n_jobs > 0
      && !wick_device_digests_wait (pipeline.device, digests, n_jobs, &finish_error)
      && !pipeline.failed)
    pipeline_fail (&pipeline, &finish_error);
  pthread_mutex_destroy (&pipeline.lock);
  pthread_cond_destroy (&pipeline.changed);
  free (pipeline.chunks);
  if (digests != NULL && pipeline.device == NULL)
    {
      for (size_t j = 0; j < n_jobs; j++)
        digests[j] = atomic_load (&pipeline.digests[j]);
      free (pipeline.digests);
    }
  if (pipeline.failed)
    *error = pipeline.error;
  return !pipeline.failed;
}
