/* wick-weight-evict.c — moving a module's bytes: provenance checks against
 * the checkpoint, eviction (plan, spill, release, with rollback), restore
 * (recommit, then fill from the RAM spill or the disk tier), and the trace
 * records of both. Called with the module marked busy (see
 * wick-weight-store-private.h). */
#include "wick-weight-store-private.h"
#include "wick-weight-digest-pipe-private.h"
#include "common/wick-dtype-table.h"
#include "common/wick-json.h"
#include "common/wick-utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "core/wick-error-private.h"

static double
now_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

WickWeightPhaseTimes wick_weight_phase_times;

WickWeightMoveOptions wick_weight_move_options = {
  .release_early = true,
  .prepare_spills = true,
};

/* The environment may pick another contender for a whole process (read at
 * the first eviction or restore): WICK_WEIGHT_RELEASE_EARLY=0|1,
 * WICK_WEIGHT_PIN_REGISTERED=0|1, WICK_WEIGHT_PREPARE_SPILLS=0|1; anything
 * else keeps the default. */
static pthread_once_t options_once = PTHREAD_ONCE_INIT;

static bool
env_on (const char *name, bool fallback)
{
  const char *value = getenv (name);
  if (value == NULL)
    return fallback;
  return strcmp (value, "1") == 0 ? true : strcmp (value, "0") == 0 ? false : fallback;
}

static void
options_from_environment (void)
{
  WickWeightMoveOptions *o = &wick_weight_move_options;
  o->release_early = env_on ("WICK_WEIGHT_RELEASE_EARLY", o->release_early);
  wick_weight_pin_registered = env_on ("WICK_WEIGHT_PIN_REGISTERED", wick_weight_pin_registered);
  o->prepare_spills = env_on ("WICK_WEIGHT_PREPARE_SPILLS", o->prepare_spills);
}

void
wick_weight_move_options_init (void)
{
  pthread_once (&options_once, options_from_environment);
}

/* ---- provenance ------------------------------------------------------------ */

/* The candidate checkpoint keys of "module.param": the full name, then with
 * 1, 2 and 3 leading components stripped. Returns how many (at most 4); each
 * is a pointer into full. */
static size_t
wick_weight_candidate_keys (const char *full, const char *out[4])
{
  size_t n = 0;
  out[n++] = full;
  const char *p = full;
  while (n < 4 && (p = strchr (p, '.')) != NULL && p[1] != '\0')
    out[n++] = ++p;
  return n;
}

/* Compares the whole file tensor, converted to the live dtype, with the live
 * bytes, streamed in pieces of WICK_DISK_SLOT_BYTES live bytes (a whole
 * number of digest chunks), and takes the digest of the live bytes on the
 * way. *first_difference is the first element of the first piece that
 * differs (UINT64_MAX when all are equal). */
static bool
compare_whole (const WickWeightModule *module, const WickWeightParamState *param, void *live,
               const WickSafetensorsShard *shard, const WickSafetensorsTensor *tensor,
               uint64_t *first_difference, uint64_t *digest, WickError *error)
{
  size_t file_size = wick_weight_dtype_size (tensor->dtype);
  size_t live_size = wick_weight_dtype_size (param->dtype);
  uint64_t per_chunk = WICK_DISK_SLOT_BYTES / live_size;
  uint64_t most = param->count < per_chunk ? param->count : per_chunk;
  /* file elements may be up to 8x wider than live ones (F64 -> U8) */
  size_t file_buffer = (size_t)most * file_size + 1, live_buffer = (size_t)most * live_size + 1;
  unsigned char *file_bytes = wick_weight_pages_alloc (file_buffer);
  unsigned char *converted = wick_weight_pages_alloc (live_buffer);
  unsigned char *live_bytes = wick_weight_pages_alloc (live_buffer);
  bool ok = file_bytes != NULL && converted != NULL && live_bytes != NULL;
  if (!ok)
    wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  *first_difference = UINT64_MAX;
  *digest = 0;
  uint64_t offset = shard->header.data_offset + tensor->begin;
  for (uint64_t first = 0; ok && first < param->count; first += per_chunk)
    {
      uint64_t count = param->count - first < per_chunk ? param->count - first : per_chunk;
      ok = wick_read_exact (shard->fd, file_bytes, (size_t)count * file_size,
                            offset + first * file_size, shard->path, error)
           && module->backing->copy_to_host (live_bytes, (char *)live + first * live_size,
                                             (size_t)count * live_size, error);
      if (!ok)
        break;
      const unsigned char *from_file = file_bytes;
      if (tensor->dtype != param->dtype)
        {
          wick_weight_dtype_convert (tensor->dtype, file_bytes, param->dtype, converted,
                                     (size_t)count);
          from_file = converted;
        }
      if (*first_difference == UINT64_MAX
          && memcmp (from_file, live_bytes, (size_t)count * live_size) != 0)
        {
          uint64_t e = 0;
          while (e < count
                 && memcmp (from_file + e * live_size, live_bytes + e * live_size, live_size) == 0)
            e++;
          *first_difference = first + e;
          break; /* not a disk-tier candidate: the digest is not needed */
        }
      *digest += wick_weight_digest_range (live_bytes, count * live_size,
                                           first * live_size / WICK_WEIGHT_HASH_CHUNK);
    }
  wick_weight_pages_free (file_bytes, file_buffer);
  wick_weight_pages_free (converted, live_buffer);
  wick_weight_pages_free (live_bytes, live_buffer);
  return ok;
}

/* Whether key's tensor proves the parameter: same shape, convertible dtype,
 * every element equal to the live one (*digest is then the live bytes'
 * digest). Otherwise reason says why not. */
static bool
candidate_matches (const WickWeightModule *module, const WickWeightParamState *param, void *live,
                   const char *key, const WickSafetensorsShard *shard,
                   const WickSafetensorsTensor *tensor, uint64_t *digest, char *reason,
                   size_t reason_size)
{
  char file_shape[128], live_shape[128];
  if (tensor->n_dims != param->n_dims
      || memcmp (tensor->shape, param->shape, param->n_dims * sizeof *param->shape) != 0)
    {
      wick_format_shape (tensor->shape, tensor->n_dims, file_shape, sizeof file_shape);
      wick_format_shape (param->shape, param->n_dims, live_shape, sizeof live_shape);
      snprintf (reason, reason_size, "key '%s': shape %s differs from the live %s", key, file_shape,
                live_shape);
      return false;
    }
  if (!wick_weight_dtype_convertible (tensor->dtype, param->dtype))
    {
      snprintf (reason, reason_size, "key '%s': dtype %s cannot be converted to the live %s", key,
                wick_weight_dtype_name (tensor->dtype), wick_weight_dtype_name (param->dtype));
      return false;
    }
  uint64_t difference;
  WickError error;
  if (!compare_whole (module, param, live, shard, tensor, &difference, digest, &error))
    {
      snprintf (reason, reason_size, "key '%.*s': %.*s", WICK_UTF8_CUT (key, 200),
                WICK_UTF8_CUT (error.message, 290));
      return false;
    }
  if (difference != UINT64_MAX)
    {
      snprintf (reason, reason_size,
                "key '%.*s' in %.*s: element %" PRIu64 " differs from the live bytes",
                WICK_UTF8_CUT (key, 150), WICK_UTF8_CUT (shard->path, 250), difference);
      return false;
    }
  return true;
}

/* Looks for a verified checkpoint source of a storage's first parameter. */
static bool
find_disk_source (WickWeightModule *module, WickWeightStorage *storage)
{
  WickWeightParamState *param = &module->params[storage->param];
  char full[512];
  const char *keys[4];
  snprintf (full, sizeof full, "%s.%s", module->name, param->name);
  size_t n_keys = wick_weight_candidate_keys (full, keys);
  param->reason[0] = '\0';
  for (size_t k = 0; k < n_keys; k++)
    {
      const WickSafetensorsShard *shard;
      const WickSafetensorsTensor *tensor;
      char reason[512];
      WickCheckpointLookup lookup = wick_checkpoint_find (&module->checkpoint, keys[k], &shard,
                                                          &tensor, reason, sizeof reason);
      if (lookup == WICK_LOOKUP_ABSENT)
        continue;
      if (lookup == WICK_LOOKUP_FOUND
          && candidate_matches (module, param, storage->data, keys[k], shard, tensor,
                                &storage->digest, reason, sizeof reason))
        {
          storage->shard = (size_t)(shard - module->checkpoint.shards);
          storage->file_offset = shard->header.data_offset + tensor->begin;
          storage->file_dtype = tensor->dtype;
          snprintf (param->key, sizeof param->key, "%s", keys[k]);
          snprintf (param->shard, sizeof param->shard, "%s", shard->path);
          return true;
        }
      if (param->reason[0] == '\0')
        snprintf (param->reason, sizeof param->reason, "%s", reason);
    }
  if (param->reason[0] == '\0')
    {
      size_t used = (size_t)snprintf (param->reason, sizeof param->reason, "no key among ");
      for (size_t k = 0; k < n_keys && used < sizeof param->reason; k++)
        used += (size_t)snprintf (param->reason + used, sizeof param->reason - used,
                                  k ? ", '%s'" : "'%s'", keys[k]);
      if (used < sizeof param->reason)
        snprintf (param->reason + used, sizeof param->reason - used, " in the checkpoint");
    }
  return false;
}

/* Decides each storage's tier. tier DISK fails if a storage cannot go there. */
static bool
plan_tiers (WickWeightModule *module, WickTier tier, const char *checkpoint_error, WickError *error)
{
  for (size_t s = 0; s < module->n_storages; s++)
    {
      WickWeightStorage *storage = &module->storages[s];
      WickWeightParamState *param = &module->params[storage->param];
      param->key[0] = param->shard[0] = '\0';
      bool disk = false;
      if (tier == WICK_TIER_RAM)
        snprintf (param->reason, sizeof param->reason, "the RAM tier was asked for");
      else if (module->checkpoint_path == NULL)
        snprintf (param->reason, sizeof param->reason, "the module has no checkpoint");
      else if (checkpoint_error != NULL)
        snprintf (param->reason, sizeof param->reason, "checkpoint: %.*s",
                  WICK_UTF8_CUT (checkpoint_error, 490));
      else
        disk = find_disk_source (module, storage);
      if (!disk && tier == WICK_TIER_DISK)
        return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                          "parameter '%s' cannot go to the disk tier: %s", param->name,
                          param->reason);
      storage->tier = disk ? WICK_TIER_DISK : WICK_TIER_RAM;
      if (disk)
        param->reason[0] = '\0';
    }
  for (size_t i = 0; i < module->n_params; i++)
    {
      WickWeightParamState *param = &module->params[i];
      const WickWeightParamState *first = &module->params[module->storages[param->storage].param];
      if (param != first)
        {
          memcpy (param->key, first->key, sizeof param->key);
          memcpy (param->shard, first->shard, sizeof param->shard);
          memcpy (param->reason, first->reason, sizeof param->reason);
        }
    }
  return true;
}

/* ---- spills ------------------------------------------------------------------ */

static bool
allocate_spill (WickWeightModule *module, WickWeightStorage *storage, WickError *error)
{
  if (storage->spill != NULL)
    return true;
  storage->spill = module->backing->host_alloc (storage->bytes);
  storage->spill_size = storage->bytes;
  if (storage->spill != NULL)
    atomic_fetch_add (&module->spill_bytes, storage->spill_size);
  if (storage->spill == NULL)
    return wick_fail (
      error, WICK_ERROR_NO_MEMORY, "cannot allocate %" PRIu64 " bytes of %s RAM for parameter '%s'",
      storage->bytes, module->memory == WICK_WEIGHT_MEMORY_CUDA ? "pinned host" : "host",
      module->params[storage->param].name);
  return true;
}

/* The preparing thread: the storages' spills in order, until told to stop
 * or an allocation fails (the eviction then allocates the rest, or says why
 * it cannot). Only this thread writes the spills while it runs. */
static void *
prepare_spills_thread (void *data)
{
  WickWeightModule *module = data;
  for (size_t s = 0; s < module->n_storages && !atomic_load (&module->stop_preparing); s++)
    {
      WickError ignored;
      if (!allocate_spill (module, &module->storages[s], &ignored))
        break;
    }
  return NULL;
}

void
wick_weight_module_start_preparing (WickWeightModule *module)
{
  wick_weight_move_options_init ();
  if (!wick_weight_move_options.prepare_spills || module->memory != WICK_WEIGHT_MEMORY_CUDA)
    return;
  pthread_mutex_lock (&module->prepare_lock);
  if (!module->preparing)
    {
      atomic_store (&module->stop_preparing, false);
      module->preparing
        = pthread_create (&module->preparer, NULL, prepare_spills_thread, module) == 0;
    }
  pthread_mutex_unlock (&module->prepare_lock);
}

static void
join_preparing (WickWeightModule *module, bool stop)
{
  pthread_mutex_lock (&module->prepare_lock);
  if (module->preparing)
    {
      if (stop)
        atomic_store (&module->stop_preparing, true);
      pthread_join (module->preparer, NULL);
      module->preparing = false;
    }
  pthread_mutex_unlock (&module->prepare_lock);
}

void
wick_weight_module_wait_prepared (WickWeightModule *module)
{
  join_preparing (module, false);
}

void
wick_weight_module_free_spills (WickWeightModule *module)
{
  join_preparing (module, true);
  for (size_t s = 0; s < module->n_storages; s++)
    {
      WickWeightStorage *storage = &module->storages[s];
      if (storage->spill != NULL)
        {
          module->backing->host_free (storage->spill, storage->spill_size);
          atomic_fetch_sub (&module->spill_bytes, storage->spill_size);
        }
      storage->spill = NULL;
      storage->spill_size = 0;
      storage->spill_holds_data = false;
    }
}

bool
wick_weight_module_prepare_spills (WickWeightModule *module, WickError *error)
{
  join_preparing (module, true);
  for (size_t s = 0; s < module->n_storages; s++)
    if (!allocate_spill (module, &module->storages[s], error))
      return false;
  return true;
}

/* With wick_weight_move_options.release_early and GPU digests: releases
 * each mapping none of whose RAM-tier storages lies at or after @queued (the
 * storages whose copies @landing follows), once @landing's copies landed and
 * its digests read them. The later copies keep running meanwhile. */
static bool
release_landed (WickWeightModule *module, WickDigestPipe *pipe, WickDigestLanding *landing,
                size_t queued, size_t *failed_mapping, WickError *error)
{
  if (!wick_digest_pipe_landing_wait (pipe, landing, error))
    return false; /* the copies' fences fail again at the pipe's end */
  for (size_t m = 0; m < module->n_mappings; m++)
    {
      WickWeightMapping *mapping = &module->mappings[m];
      if (mapping->released)
        continue;
      bool ready = true;
      for (size_t s = queued; s < module->n_storages && ready; s++)
        ready = module->storages[s].mapping != m || module->storages[s].tier != WICK_TIER_RAM;
      if (ready && !module->backing->release (mapping->base, mapping->size, error))
        {
          *failed_mapping = m;
          return false;
        }
      mapping->released = mapping->released || ready;
    }
  return true;
}

/* Copies the RAM-tier storages out, taking each one's digest on the way
 * (wick-weight-digest-pipe-private.h). Pinned spills of CUDA modules are kept
 * after a restore and reused here (pinning costs more than the copy). With
 * release_early, mappings are released while later copies run; a release
 * that fails sets *failed_mapping and @release_error (else SIZE_MAX). */
static bool
spill_ram_storages (WickWeightModule *module, size_t *failed_mapping, WickError *release_error,
                    WickError *error)
{
  *failed_mapping = SIZE_MAX;
  /* the spills a preparing thread has not reached are allocated here */
  join_preparing (module, true);
  WickDigestPipe *pipe = wick_digest_pipe_new (module->backing);
  if (pipe == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  bool ok = true;
  WickDigestLanding *landings = NULL;
  size_t *landing_after = NULL, n_landings = 0;
  if (wick_weight_move_options.release_early && wick_digest_pipe_on_device (pipe))
    {
      landings = calloc (module->n_storages + 1, sizeof *landings);
      landing_after = calloc (module->n_storages + 1, sizeof *landing_after);
      if (landings == NULL || landing_after == NULL)
        {
          free (landings), free (landing_after);
          landings = NULL, landing_after = NULL;
        }
    }
  for (size_t s = 0; ok && s < module->n_storages; s++)
    {
      WickWeightStorage *storage = &module->storages[s];
      if (storage->tier != WICK_TIER_RAM)
        continue;
      if (!(ok = allocate_spill (module, storage, error)))
        break;
      /* Queued: copies run back to back while the next spill is allocated. */
      ok = wick_digest_pipe_add_copy (pipe, true, storage->data, storage->spill, storage->bytes,
                                      &storage->digest, error);
      storage->spill_holds_data = ok;
      bool ends_mapping = true;
      for (size_t t = s + 1; t < module->n_storages && ends_mapping; t++)
        ends_mapping = module->storages[t].mapping != storage->mapping
                       || module->storages[t].tier != WICK_TIER_RAM;
      WickError landing_error; /* without a landing the mapping waits for the end */
      if (ok && ends_mapping && landings != NULL
          && wick_digest_pipe_landing_record (pipe, &landings[n_landings], &landing_error))
        landing_after[n_landings++] = s + 1;
    }
  /* Early releases: a landing after each storage that ends its mapping's
   * RAM-tier copies, waited for in order once all are queued; a release
   * that fails stops them (*failed_mapping: the caller rolls back). */
  bool early = ok && wick_weight_move_options.release_early && wick_digest_pipe_on_device (pipe);
  for (size_t i = 0; early && i < n_landings; i++)
    early = release_landed (module, pipe, &landings[i], landing_after[i], failed_mapping,
                            release_error);
  for (size_t i = 0; i < n_landings; i++)
    wick_digest_pipe_landing_free (pipe, &landings[i]);
  free (landings);
  free (landing_after);
  /* The digests are of the spills' bytes once the pipe has run. */
  WickError later_error;
  if (ok)
    ok = wick_digest_pipe_run (pipe, error);
  if (!module->backing->finish (&later_error) && ok)
    {
      *error = later_error;
      ok = false;
    }
  wick_digest_pipe_free (pipe);
  return ok;
}

/* After a restore (or a failed eviction): host spills go, pinned ones stay. */
static void
settle_spills (WickWeightModule *module)
{
  if (module->memory == WICK_WEIGHT_MEMORY_HOST)
    wick_weight_module_free_spills (module);
  else
    for (size_t s = 0; s < module->n_storages; s++)
      module->storages[s].spill_holds_data = false;
}

/* ---- filling storages back ----------------------------------------------------- */

typedef struct
{
  WickDiskJob *jobs;
  size_t *mappings; /* of each job */
  size_t *storages; /* of each job */
  size_t n;
} DiskBatch;

/* Releases a mapping again after a failed refill, so that a retry starts anew. */
static void
release_again (WickWeightModule *module, size_t m)
{
  WickWeightMapping *mapping = &module->mappings[m];
  WickError ignored;
  if (!mapping->released && module->backing->release (mapping->base, mapping->size, &ignored))
    mapping->released = true;
}

/* Maps a released mapping again. (Whether its disk-tier shards changed is
 * not judged by their size or mtime: what is read is verified byte for byte
 * against the eviction's digest, so a shard repaired in place restores.) */
static bool
recommit_mapping (WickWeightModule *module, size_t m, WickError *error)
{
  WickWeightMapping *mapping = &module->mappings[m];
  if (!module->backing->recommit (mapping->base, mapping->size, error))
    return false;
  mapping->released = false;
  return true;
}

/* Refills a mapping's storages: RAM-tier copies are queued on the digest
 * pipe (their digests land in ram_digests), disk-tier storages join the
 * batch. */
static bool
fill_mapping (WickWeightModule *module, size_t m, DiskBatch *batch, WickDigestPipe *pipe,
              uint64_t *ram_digests, bool *ram_queued, WickError *error)
{
  size_t first_job = batch->n;
  size_t mark = wick_digest_pipe_mark (pipe);
  for (size_t s = 0; s < module->n_storages; s++)
    {
      WickWeightStorage *storage = &module->storages[s];
      if (storage->mapping != m)
        continue;
      if (storage->tier == WICK_TIER_DISK)
        {
          const WickWeightParamState *param = &module->params[storage->param];
          const WickSafetensorsShard *shard = &module->checkpoint.shards[storage->shard];
          batch->jobs[batch->n]
            = (WickDiskJob){ storage->data, shard->fd,           shard->path, storage->file_offset,
                             param->count,  storage->file_dtype, param->dtype };
          batch->mappings[batch->n] = m;
          batch->storages[batch->n++] = s;
          continue;
        }
      /* Verified against the eviction's digest before the module goes live. */
      if (!wick_digest_pipe_add_copy (pipe, false, storage->data, storage->spill, storage->bytes,
                                      &ram_digests[s], error))
        {
          batch->n = first_job; /* the caller releases the mapping again */
          wick_digest_pipe_truncate (pipe, mark);
          return false;
        }
      ram_queued[s] = true;
    }
  return true;
}

/* After the RAM-tier copies and their digests: a storage whose RAM copy
 * changed since the eviction is refused and its mapping released again (the
 * wrong bytes never go live; a disk-tier storage of the same mapping is then
 * not read). Counts the bytes that stayed. False with the first refusal. */
static bool
verify_ram_storages (WickWeightModule *module, const uint64_t *ram_digests,
                     const bool *ram_queued, DiskBatch *batch, uint64_t *restored_bytes,
                     WickError *error)
{
  size_t refused = 0;
  for (size_t s = 0; s < module->n_storages; s++)
    {
      const WickWeightStorage *storage = &module->storages[s];
      if (!ram_queued[s] || ram_digests[s] == storage->digest)
        continue;
      if (refused++ == 0)
        wick_set_error (error, WICK_ERROR_INVALID_DATA,
                        "parameter '%s' of module '%s' refused: its RAM copy changed after the "
                        "eviction (digest %016" PRIx64 ", evicted %016" PRIx64
                        "); its bytes were not restored",
                        module->params[storage->param].name, module->name, ram_digests[s],
                        storage->digest);
      release_again (module, storage->mapping);
    }
  if (refused > 1)
    {
      size_t used = strlen (error->message);
      snprintf (error->message + used, sizeof error->message - used,
                "; %zu more parameters refused", refused - 1);
      wick_utf8_trim_end (error->message);
    }
  size_t kept = 0;
  for (size_t j = 0; j < batch->n; j++)
    if (!module->mappings[batch->mappings[j]].released)
      {
        batch->jobs[kept] = batch->jobs[j];
        batch->mappings[kept] = batch->mappings[j];
        batch->storages[kept++] = batch->storages[j];
      }
  batch->n = kept;
  for (size_t s = 0; s < module->n_storages; s++)
    if (ram_queued[s] && !module->mappings[module->storages[s].mapping].released)
      *restored_bytes += module->storages[s].bytes;
  return refused == 0;
}

/* Reads the batch through the disk pipeline and verifies every storage it
 * read against the digest its eviction took. A failed read leaves its
 * mappings with unknown bytes: they are released again. A storage whose bytes
 * differ is refused: its mapping is released again (the wrong bytes never go
 * live), the others are kept. */
static bool
read_disk_batch (WickWeightStore *store, WickWeightModule *module, const DiskBatch *batch,
                 uint64_t *restored_bytes, WickError *error)
{
  uint64_t *digests = calloc (batch->n + 1, sizeof *digests);
  if (digests == NULL)
    {
      for (size_t j = 0; j < batch->n; j++)
        release_again (module, batch->mappings[j]);
      return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
    }
  pthread_mutex_lock (&store->staging_lock);
  bool ok
    = wick_disk_staging_reserve (&store->staging, module->backing, WICK_DISK_SLOT_BYTES, error)
      && wick_disk_read (&store->staging, batch->jobs, batch->n, digests, error);
  /* Pinned staging is worth keeping; plain host staging would only inflate
   * the resident set the memory chart shows. */
  if (module->memory == WICK_WEIGHT_MEMORY_HOST)
    wick_disk_staging_free (&store->staging);
  pthread_mutex_unlock (&store->staging_lock);
  size_t refused = 0;
  for (size_t j = 0; ok && j < batch->n; j++)
    {
      const WickWeightStorage *storage = &module->storages[batch->storages[j]];
      if (digests[j] == storage->digest)
        continue;
      const WickWeightParamState *param = &module->params[storage->param];
      if (refused++ == 0)
        wick_set_error (error, WICK_ERROR_INVALID_DATA,
                        "parameter '%s' of module '%s' refused: the bytes read from %s for key "
                        "'%s' differ from what was evicted (digest %016" PRIx64
                        ", evicted %016" PRIx64 "); the checkpoint was changed after the "
                        "eviction verified it",
                        param->name, module->name, param->shard, param->key, digests[j],
                        storage->digest);
    }
  for (size_t j = 0; j < batch->n; j++)
    {
      bool bad = !ok || digests[j] != module->storages[batch->storages[j]].digest;
      if (bad)
        release_again (module, batch->mappings[j]);
    }
  /* Count what stayed live (a mapping released again takes all its storages). */
  for (size_t j = 0; ok && j < batch->n; j++)
    if (!module->mappings[batch->mappings[j]].released)
      *restored_bytes += batch->jobs[j].count * wick_weight_dtype_size (batch->jobs[j].live_dtype);
  if (ok && refused > 1)
    {
      size_t used = strlen (error->message);
      snprintf (error->message + used, sizeof error->message - used,
                "; %zu more parameters refused", refused - 1);
      wick_utf8_trim_end (error->message);
    }
  free (digests);
  return ok && refused == 0;
}

/* Fills mapping @m (made just now); on failure releases it again. */
static void
fill_made (WickWeightModule *module, size_t m, DiskBatch *batch, WickDigestPipe *pipe,
           uint64_t *ram_digests, bool *ram_queued, bool *filled, WickError *later_error)
{
  if (*filled
      && (*filled = fill_mapping (module, m, batch, pipe, ram_digests, ram_queued, later_error)))
    return;
  release_again (module, m);
  for (size_t s = 0; s < module->n_storages; s++)
    if (module->storages[s].mapping == m)
      ram_queued[s] = false;
}

/* Recommits every released mapping, then queues their refills; made[]
 * lists the mappings made. Every mapping is made before any copy is queued:
 * a mapping made while copies run waits behind them (a worker thread making
 * them ahead and one making them between the copies were timed on the H200
 * three times, 2026-12-03 and -04, and gained nothing: docs/performance.md).
 * A failed recommit stops the recommits (*ok false, @error says why); the
 * mappings made before it are still refilled. A failed fill (*filled false,
 * @later_error) releases its mapping and every later one again. Sets the
 * phase time restore_map. */
static void
make_and_fill (WickWeightModule *module, size_t *made, size_t *n_made, DiskBatch *batch,
               WickDigestPipe *pipe, uint64_t *ram_digests, bool *ram_queued, bool *ok,
               WickError *error, bool *filled, WickError *later_error)
{
  double start = now_seconds ();
  size_t n_todo = 0, n = 0;
  for (size_t m = 0; m < module->n_mappings; m++)
    if (module->mappings[m].released)
      made[n_todo++] = m;
  for (; n < n_todo; n++)
    if (!(*ok = recommit_mapping (module, made[n], error)))
      break;
  wick_weight_phase_times.restore_map = now_seconds () - start;
  for (size_t i = 0; i < n; i++)
    fill_made (module, made[i], batch, pipe, ram_digests, ram_queued, filled, later_error);
  *n_made = n;
}

/* Recommits every released mapping, then refills them. All mappings are
 * made before any copy is queued: new physical memory maps in about 1 ms
 * per 1.5 GB on an idle H200, but waits behind copies in flight. A failure
 * stops the recommits; the mappings made before it are still refilled. */
static bool
refill_storages (WickWeightStore *store, WickWeightModule *module, uint64_t *restored_bytes,
                 WickError *error)
{
  DiskBatch batch = { calloc (module->n_storages + 1, sizeof *batch.jobs),
                      calloc (module->n_storages + 1, sizeof *batch.mappings),
                      calloc (module->n_storages + 1, sizeof *batch.storages), 0 };
  size_t *made = calloc (module->n_mappings + 1, sizeof *made);
  uint64_t *ram_digests = calloc (module->n_storages + 1, sizeof *ram_digests);
  bool *ram_queued = calloc (module->n_storages + 1, sizeof *ram_queued);
  WickDigestPipe *pipe = wick_digest_pipe_new (module->backing);
  size_t n_made = 0;
  bool ok = batch.jobs != NULL && batch.mappings != NULL && batch.storages != NULL && made != NULL
            && ram_digests != NULL && ram_queued != NULL && pipe != NULL;
  if (!ok)
    wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  double phase = now_seconds ();
  WickError later_error;
  bool filled = true;
  if (ok)
    make_and_fill (module, made, &n_made, &batch, pipe, ram_digests, ram_queued, &ok, error,
                   &filled, &later_error);
  wick_weight_phase_times.restore_queue
    = now_seconds () - phase - wick_weight_phase_times.restore_map;
  if (!filled && ok)
    {
      *error = later_error;
      ok = false;
    }
  phase = now_seconds ();
  /* Hash the RAM copies while they run, then wait for the copies. */
  bool hashed = pipe == NULL || wick_digest_pipe_run (pipe, &later_error);
  if (!hashed && ok)
    {
      *error = later_error;
      ok = false;
    }
  if (!module->backing->finish (&later_error) && ok)
    {
      *error = later_error;
      ok = false;
      hashed = false;
    }
  if (!hashed)
    {
      /* Copies or digests failed: nothing of this restore is known good. */
      for (size_t i = 0; i < n_made; i++)
        release_again (module, made[i]);
      batch.n = 0;
    }
  else if (ram_queued != NULL
           && !verify_ram_storages (module, ram_digests, ram_queued, &batch, restored_bytes,
                                    &later_error)
           && ok)
    {
      *error = later_error;
      ok = false;
    }
  wick_weight_phase_times.restore_wait = now_seconds () - phase;
  phase = now_seconds ();
  if (batch.n > 0 && !read_disk_batch (store, module, &batch, restored_bytes, &later_error) && ok)
    {
      *error = later_error;
      ok = false;
    }
  wick_weight_phase_times.restore_disk = now_seconds () - phase;
  wick_digest_pipe_free (pipe);
  free (batch.jobs);
  free (batch.mappings);
  free (batch.storages);
  free (made);
  free (ram_digests);
  free (ram_queued);
  return ok;
}

/* ---- trace records -------------------------------------------------------- */

static void
record_device_memory (WickWeightStore *store, WickWeightModule *module)
{
  char device[32];
  WickDeviceMemoryRecord sample;
  WickError ignored;
  memset (&sample, 0, sizeof sample);
  if (store->session == NULL
      || !module->backing->sample (device, &sample.used_bytes, &sample.free_bytes,
                                   &sample.capacity_bytes))
    return;
  sample.timestamp_ns = WICK_NOW;
  sample.device = device;
  sample.has_used_bytes = sample.has_free_bytes = sample.has_capacity_bytes = true;
  wick_session_record_device_memory (store->session, &sample, &ignored);
}

void
wick_weight_module_record_storages (WickWeightStore *store, WickWeightModule *module,
                                    WickMemoryAction action, const bool *which)
{
  char device[32];
  uint64_t used, free_bytes, capacity;
  if (store->session == NULL || !module->backing->sample (device, &used, &free_bytes, &capacity))
    return;
  WickSpanId span = wick_span_current (store->session);
  for (size_t s = 0; s < module->n_storages; s++)
    {
      if (which != NULL && !which[s])
        continue;
      const WickWeightStorage *storage = &module->storages[s];
      const WickWeightParamState *param = &module->params[storage->param];
      char id[512], dtype[16];
      snprintf (id, sizeof id, "weights:%s:%s", module->name, param->name);
      /* the trace's name (as wick.torch and candle-graph's writers name dtypes);
       * for one the trace format has none (F8_E4M3), the safetensors name in
       * lower case */
      const WickDtypeRow *row = wick_dtype_row_for_weight ((int)param->dtype);
      const char *name = row == NULL ? NULL : row->trace != NULL ? row->trace : row->safetensors;
      size_t n = 0;
      for (; name != NULL && name[n] != '\0' && n + 1 < sizeof dtype; n++)
        dtype[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] - 'A' + 'a' : name[n]);
      dtype[n] = '\0';
      WickMemoryRecord memory = {
        .timestamp_ns = WICK_NOW,
        .storage_id = id,
        .tensor_id = param->name,
        .span = span,
        .device = device,
        .bytes = storage->bytes,
        .action = action,
        .shape = param->shape,
        .rank = param->n_dims,
        .dtype = dtype,
        .category = WICK_CATEGORY_PARAMETER,
      };
      WickError ignored;
      wick_session_record_memory (store->session, &memory, &ignored);
    }
}

static const char *
tier_name (WickTier tier)
{
  return tier == WICK_TIER_DISK ? "disk" : tier == WICK_TIER_RAM ? "ram" : "auto";
}

/* The record of a move: the module and its backing, @details (the move's own
 * fields, already written), whether it worked and, when not, why. */
static void
record_event (WickWeightStore *store, WickWeightModule *module, const char *kind,
              const WickJson *details, bool ok, const WickError *error)
{
  if (store->session == NULL || details->failed)
    return;
  WickJson fields;
  wick_json_init (&fields);
  /* bound to the memory records of the storages it moved, which follow it on
   * this thread (docs/format.md, "Wick keys") */
  wick_json_key (&fields, "on");
  wick_json_string (&fields, "memory");
  wick_json_key (&fields, "module");
  wick_json_string (&fields, module->name);
  wick_json_key (&fields, "memory");
  wick_json_string (&fields, module->backing->name);
  wick_json_append (&fields, ",", 1);
  wick_json_append (&fields, details->data, details->length);
  wick_json_key (&fields, "ok");
  wick_json_bool (&fields, ok);
  if (!ok)
    {
      wick_json_key (&fields, "error");
      wick_json_string (&fields, error->message);
    }
  WickError ignored;
  if (!fields.failed)
    wick_session_record_extension (store->session, kind, fields.data, &ignored);
  wick_json_clear (&fields);
}

/* ---- evict ------------------------------------------------------------------------ */

/* Which storages have no memory behind them now (NULL when out of memory:
 * the move then writes no memory records). */
static bool *
released_now (WickWeightModule *module)
{
  bool *released = calloc (module->n_storages + 1, sizeof *released);
  if (released != NULL)
    for (size_t s = 0; s < module->n_storages; s++)
      released[s] = wick_weight_storage_released (module, &module->storages[s]);
  return released;
}

static void
count_tiers (WickWeightModule *module)
{
  module->stats.disk = module->stats.ram = 0;
  for (size_t i = 0; i < module->n_params; i++)
    {
      const WickWeightStorage *storage = &module->storages[module->params[i].storage];
      if (!wick_weight_storage_released (module, storage))
        continue;
      if (storage->tier == WICK_TIER_DISK)
        module->stats.disk++;
      else
        module->stats.ram++;
    }
}

/* Puts back storages [0, released) after a failed release. */
static bool
roll_back (WickWeightStore *store, WickWeightModule *module, WickError *error)
{
  uint64_t bytes = 0;
  return refill_storages (store, module, &bytes, error);
}

/* Mapping @m could not be released: the ones released before it are
 * restored, and the error says so. False. */
static bool
release_failed (WickWeightStore *store, WickWeightModule *module, size_t m,
                const WickError *release_error, WickError *error)
{
  const char *name = "";
  for (size_t s = 0; s < module->n_storages && name[0] == '\0'; s++)
    if (module->storages[s].mapping == m)
      name = module->params[module->storages[s].param].name;
  WickError rollback_error;
  bool rolled_back = roll_back (store, module, &rollback_error);
  return wick_fail (error, WICK_ERROR_IO, "module '%s': releasing parameter '%s' failed: %s; %s%s",
                    module->name, name, release_error->message,
                    rolled_back ? "the parameters already released were restored"
                                : "restoring the parameters already released failed too: ",
                    rolled_back ? "" : rollback_error.message);
}

static bool
release_mappings (WickWeightStore *store, WickWeightModule *module, uint64_t *freed,
                  WickError *error)
{
  for (size_t m = 0; m < module->n_mappings; m++)
    {
      WickWeightMapping *mapping = &module->mappings[m];
      WickError release_error;
      if (mapping->released) /* released early, while the spill ran */
        continue;
      if (module->backing->release (mapping->base, mapping->size, &release_error))
        {
          mapping->released = true;
          continue;
        }
      return release_failed (store, module, m, &release_error, error);
    }
  for (size_t s = 0; s < module->n_storages; s++)
    *freed += module->storages[s].bytes;
  return true;
}

static bool
evict_steps (WickWeightStore *store, WickWeightModule *module, WickTier tier, uint64_t *freed,
             WickError *error)
{
  WickError checkpoint_error;
  bool checkpoint_ok = false;
  if (!module->backing->synchronize (error))
    return false;
  if (tier != WICK_TIER_RAM && module->checkpoint_path != NULL)
    {
      checkpoint_ok
        = wick_checkpoint_open (module->checkpoint_path, &module->checkpoint, &checkpoint_error);
      module->checkpoint_open = checkpoint_ok;
    }
  bool ok = plan_tiers (module, tier, checkpoint_ok ? NULL : checkpoint_error.message, error);
  double spill_start = now_seconds ();
  size_t failed_mapping = SIZE_MAX;
  WickError release_error;
  bool *was_released = calloc (module->n_mappings + 1, sizeof *was_released);
  for (size_t m = 0; was_released != NULL && m < module->n_mappings; m++)
    was_released[m] = module->mappings[m].released;
  ok = ok && spill_ram_storages (module, &failed_mapping, &release_error, error);
  bool released_early = false;
  for (size_t m = 0; m < module->n_mappings; m++)
    released_early
      = released_early
        || (module->mappings[m].released && (was_released == NULL || !was_released[m]));
  free (was_released);
  if (ok && failed_mapping != SIZE_MAX)
    ok = release_failed (store, module, failed_mapping, &release_error, error);
  else if (!ok && released_early && error != NULL)
    {
      /* a copy or digest after an early release failed: put back what went */
      WickError rollback_error;
      bool rolled_back = roll_back (store, module, &rollback_error);
      size_t used = strlen (error->message);
      snprintf (error->message + used, sizeof error->message - used, "; %s%s",
                rolled_back ? "the parameters already released were restored"
                            : "restoring the parameters already released failed too: ",
                rolled_back ? "" : rollback_error.message);
      wick_utf8_trim_end (error->message);
    }
  double release_start = now_seconds ();
  ok = ok && release_mappings (store, module, freed, error);
  wick_weight_phase_times.evict_spill = release_start - spill_start;
  wick_weight_phase_times.evict_release = now_seconds () - release_start;
  if (!ok)
    {
      for (size_t s = 0; s < module->n_storages; s++)
        if (!wick_weight_storage_released (module, &module->storages[s]))
          module->storages[s].tier = WICK_TIER_AUTO;
      settle_spills (module);
    }
  return ok;
}

bool
wick_weight_module_evict (WickWeightStore *store, WickWeightModule *module, WickTier tier,
                          WickError *error)
{
  wick_weight_move_options_init ();
  double start = now_seconds ();
  uint64_t freed = 0;
  bool *was_released = released_now (module);
  record_device_memory (store, module);
  bool ok = evict_steps (store, module, tier, &freed, error);
  bool any_disk = false;
  for (size_t s = 0; s < module->n_storages; s++)
    any_disk = any_disk
               || (wick_weight_storage_released (module, &module->storages[s])
                   && module->storages[s].tier == WICK_TIER_DISK);
  if (module->checkpoint_open && !any_disk)
    {
      wick_checkpoint_close (&module->checkpoint);
      module->checkpoint_open = false;
    }
  bool any_released = false;
  for (size_t m = 0; m < module->n_mappings; m++)
    any_released = any_released || module->mappings[m].released;
  module->state = any_released ? WICK_MODULE_EVICTED : WICK_MODULE_RESIDENT;
  count_tiers (module);
  module->stats.resident = module->state == WICK_MODULE_RESIDENT;
  module->stats.freed_bytes = ok ? freed : 0;
  module->stats.evict_seconds = now_seconds () - start;
  WickJson details;
  wick_json_init (&details);
  wick_json_key (&details, "tier");
  wick_json_string (&details, tier_name (tier));
  wick_json_key (&details, "parameters");
  wick_json_u64 (&details, module->stats.parameters);
  wick_json_key (&details, "disk");
  wick_json_u64 (&details, module->stats.disk);
  wick_json_key (&details, "ram");
  wick_json_u64 (&details, module->stats.ram);
  wick_json_key (&details, "freed_bytes");
  wick_json_u64 (&details, module->stats.freed_bytes);
  wick_json_key (&details, "duration_ns");
  wick_json_u64 (&details, (uint64_t)(module->stats.evict_seconds * 1e9));
  record_event (store, module, "wick_weight_evict", &details, ok, error);
  wick_json_clear (&details);
  bool *moved = calloc (module->n_storages + 1, sizeof *moved);
  if (moved != NULL)
    {
      for (size_t s = 0; s < module->n_storages; s++)
        moved[s] = wick_weight_storage_released (module, &module->storages[s])
                   && !was_released[s];
      wick_weight_module_record_storages (store, module, WICK_MEMORY_FREE, moved);
      free (moved);
    }
  free (was_released);
  record_device_memory (store, module);
  return ok;
}

/* ---- restore ---------------------------------------------------------------------- */

bool
wick_weight_module_restore (WickWeightStore *store, WickWeightModule *module, WickError *error)
{
  wick_weight_move_options_init ();
  double start = now_seconds ();
  uint64_t bytes = 0;
  uint64_t disk = module->stats.disk, ram = module->stats.ram;
  bool *was_released = released_now (module);
  record_device_memory (store, module);
  bool ok = refill_storages (store, module, &bytes, error);
  count_tiers (module);
  /* Bytes that failed verification are a verdict a waiting workload must
   * hear (use_begin, ensure_resident, wick_weight_store_get_refusal). */
  module->refused = !ok && error != NULL && error->code == WICK_ERROR_INVALID_DATA;
  if (module->refused)
    module->refusal = *error;
  if (ok)
    {
      module->state = WICK_MODULE_RESIDENT;
      settle_spills (module);
      if (module->checkpoint_open)
        wick_checkpoint_close (&module->checkpoint);
      module->checkpoint_open = false;
      module->stats.restored_count++;
    }
  module->stats.resident = module->state == WICK_MODULE_RESIDENT;
  module->stats.restored = disk + ram - module->stats.disk - module->stats.ram;
  module->stats.restored_bytes = bytes;
  module->stats.restore_seconds = now_seconds () - start;
  WickJson details;
  wick_json_init (&details);
  wick_json_key (&details, "disk");
  wick_json_u64 (&details, disk);
  wick_json_key (&details, "ram");
  wick_json_u64 (&details, ram);
  wick_json_key (&details, "restored");
  wick_json_u64 (&details, module->stats.restored);
  wick_json_key (&details, "restored_bytes");
  wick_json_u64 (&details, bytes);
  wick_json_key (&details, "duration_ns");
  wick_json_u64 (&details, (uint64_t)(module->stats.restore_seconds * 1e9));
  record_event (store, module, "wick_weight_restore", &details, ok, error);
  wick_json_clear (&details);
  if (was_released != NULL)
    {
      for (size_t s = 0; s < module->n_storages; s++)
        was_released[s] = was_released[s]
                          && !wick_weight_storage_released (module, &module->storages[s]);
      wick_weight_module_record_storages (store, module, WICK_MEMORY_ALLOC, was_released);
    }
  free (was_released);
  record_device_memory (store, module);
  return ok;
}
