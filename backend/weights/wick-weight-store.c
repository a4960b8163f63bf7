/* wick-weight-store.c — the weight store's registration, queries and locking
 * (types and locking rules in wick-weight-store-private.h; the moving of
 * bytes is in wick-weight-evict.c). */
#include "wick-weight-store-private.h"
#include "common/wick-utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/wick-error-private.h"

unsigned wick_weight_store_evict_wait_seconds = 10;

static void
store_destroy (void *data)
{
  WickWeightStore *store = data;
  store->session = NULL;
  wick_weight_store_free (store);
}

/* At the session's finish: the storages with memory behind them are freed in
 * the trace (their allocations were written at registration and restores),
 * as wick.torch frees its live tensors, so the trace's memory pairs up. */
static void
store_finish (void *data)
{
  WickWeightStore *store = data;
  pthread_mutex_lock (&store->lock);
  for (size_t m = 0; m < store->n_modules; m++)
    {
      WickWeightModule *module = store->modules[m];
      bool *live = calloc (module->n_storages + 1, sizeof *live);
      if (live == NULL)
        continue;
      for (size_t s = 0; s < module->n_storages; s++)
        live[s] = !wick_weight_storage_released (module, &module->storages[s]);
      wick_weight_module_record_storages (store, module, WICK_MEMORY_FREE, live);
      free (live);
    }
  pthread_mutex_unlock (&store->lock);
}

WickWeightStore *
wick_weight_store_new (WickSession *session, WickError *error)
{
  if (session != NULL && wick_session_get_slot (session, WICK_SLOT_WEIGHTS) != NULL)
    {
      wick_fail (error, WICK_ERROR_EXISTS, "the session already has a weight store");
      return NULL;
    }
  WickWeightStore *store = calloc (1, sizeof *store);
  if (store == NULL)
    {
      wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
      return NULL;
    }
  store->session = session;
  pthread_mutex_init (&store->lock, NULL);
  pthread_cond_init (&store->changed, NULL);
  pthread_mutex_init (&store->staging_lock, NULL);
  if (session != NULL)
    {
      wick_session_set_slot (session, WICK_SLOT_WEIGHTS, store, store_destroy);
      wick_session_set_slot_finish (session, WICK_SLOT_WEIGHTS, store_finish);
    }
  return store;
}

WickWeightStore *
wick_session_get_weight_store (WickSession *session)
{
  return session != NULL ? wick_session_get_slot (session, WICK_SLOT_WEIGHTS) : NULL;
}

static void
module_free (WickWeightModule *module)
{
  wick_weight_module_free_spills (module);
  for (size_t i = 0; i < module->n_mappings; i++)
    wick_weight_allocation_unhold (module->mappings[i].base);
  for (size_t i = 0; i < module->n_params; i++)
    free (module->params[i].name);
  if (module->checkpoint_open)
    wick_checkpoint_close (&module->checkpoint);
  free (module->params);
  free (module->storages);
  free (module->mappings);
  free (module->checkpoint_path);
  pthread_mutex_destroy (&module->prepare_lock);
  free (module);
}

/* A module's stats as the caller sees them (store->lock held). */
static void
copy_stats (WickWeightModule *module, WickWeightStats *out)
{
  *out = module->stats;
  out->spill_bytes = atomic_load (&module->spill_bytes);
}

void
wick_weight_store_free (WickWeightStore *store)
{
  if (store == NULL)
    return;
  if (store->session != NULL)
    {
      /* The session frees it at close; freeing it here as well was a double
       * free there (and the control socket may still be using it). */
      fprintf (stderr,
               "wick: wick_weight_store_free: this weight store belongs to session %s and is "
               "freed by wick_session_close; not freed now\n",
               wick_session_get_entrypoint (store->session));
      return;
    }
  for (size_t i = 0; i < store->n_modules; i++)
    module_free (store->modules[i]);
  free (store->modules);
  wick_disk_staging_free (&store->staging);
  pthread_mutex_destroy (&store->lock);
  pthread_cond_destroy (&store->changed);
  pthread_mutex_destroy (&store->staging_lock);
  free (store);
}

static WickWeightModule *
find_locked (WickWeightStore *store, const char *name)
{
  for (size_t i = 0; i < store->n_modules; i++)
    if (strcmp (store->modules[i]->name, name) == 0)
      return store->modules[i];
  return NULL;
}

/* ---- registration ------------------------------------------------------ */

static bool
check_param (const WickWeightParam *param, size_t index, WickWeightParamState *state,
             WickError *error)
{
  if (param->name == NULL || param->name[0] == '\0')
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "parameter %zu has no name", index);
  if (strlen (param->name) >= sizeof ((WickWeightParamInfo *)0)->name)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "parameter '%.*s...': name longer than 255 bytes",
                      WICK_UTF8_CUT (param->name, 60));
  if (param->data == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "parameter '%s': no data", param->name);
  if (wick_weight_dtype_size (param->dtype) == 0)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "parameter '%s': unknown dtype %d",
                      param->name, (int)param->dtype);
  if (param->n_dims > WICK_WEIGHT_MAX_DIMS || (param->n_dims > 0 && param->shape == NULL))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "parameter '%s': a shape needs 0 to %d dimensions", param->name,
                      WICK_WEIGHT_MAX_DIMS);
  state->count = 1;
  for (size_t d = 0; d < param->n_dims; d++)
    if (__builtin_mul_overflow (state->count, param->shape[d], &state->count))
      return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                        "parameter '%s': its element count overflows", param->name);
  if (__builtin_mul_overflow (state->count, (uint64_t)wick_weight_dtype_size (param->dtype),
                              &state->bytes))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "parameter '%s': its byte size overflows",
                      param->name);
  state->dtype = param->dtype;
  state->n_dims = param->n_dims;
  if (param->n_dims > 0)
    memcpy (state->shape, param->shape, param->n_dims * sizeof *param->shape);
  state->name = strdup (param->name);
  return state->name != NULL || wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
}

/* The mapping of the allocation, added (and counted as a user) if new. */
static size_t
attach_mapping (WickWeightModule *module, const WickWeightAllocation *allocation)
{
  for (size_t m = 0; m < module->n_mappings; m++)
    if (module->mappings[m].base == allocation->base)
      return m;
  wick_weight_allocation_add_user (allocation->base);
  module->mappings[module->n_mappings]
    = (WickWeightMapping){ allocation->base, allocation->size, false };
  return module->n_mappings++;
}

/* Finds or adds the storage of params[index]: the same pointer and size is
 * a tied parameter; a partial overlap is refused. */
static bool
attach_storage (WickWeightModule *module, const WickWeightParam *param, size_t index,
                WickError *error)
{
  WickWeightParamState *state = &module->params[index];
  const char *begin = param->data, *end = begin + state->bytes;
  for (size_t s = 0; s < module->n_storages; s++)
    {
      WickWeightStorage *storage = &module->storages[s];
      const char *other = storage->data, *other_end = other + storage->bytes;
      if (storage->data == param->data && storage->bytes == state->bytes)
        {
          state->storage = s;
          state->tied = true;
          return true;
        }
      if (storage->data == param->data || (begin < other_end && other < end))
        return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                          "parameter '%s' overlaps '%s' without being tied to it (tied parameters "
                          "share one pointer and one size)",
                          param->name, module->params[storage->param].name);
    }
  WickWeightAllocation allocation;
  WickError hold_error;
  if (!wick_weight_allocation_hold (param->data, module->memory, state->bytes, &allocation,
                                    &hold_error))
    return wick_fail (error, hold_error.code, "parameter '%s': %s", param->name,
                      hold_error.message);
  WickWeightStorage *storage = &module->storages[module->n_storages];
  memset (storage, 0, sizeof *storage);
  storage->data = param->data;
  storage->bytes = state->bytes;
  storage->param = index;
  storage->tier = WICK_TIER_AUTO;
  storage->mapping = attach_mapping (module, &allocation);
  state->storage = module->n_storages++;
  return true;
}

static bool
check_module_info (WickWeightStore *store, const WickWeightModuleInfo *info, WickError *error)
{
  if (store == NULL || info == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no store or no module description");
  if (!WICK_CHECK_RESERVED (info, "WickWeightModuleInfo", error))
    return false;
  if (info->name == NULL || info->name[0] == '\0')
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "a module needs a name");
  if (strlen (info->name) >= sizeof ((WickWeightStats *)0)->module)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "module '%.*s...': name longer than 127 bytes",
                      WICK_UTF8_CUT (info->name, 60));
  if (info->n_params == 0 || info->params == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "module '%s': no parameters", info->name);
  if (info->memory != WICK_WEIGHT_MEMORY_HOST && info->memory != WICK_WEIGHT_MEMORY_CUDA)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "module '%s': unknown memory kind %d",
                      info->name, (int)info->memory);
  if (wick_weight_backing_for (info->memory) == NULL)
    return wick_fail (error, WICK_ERROR_UNSUPPORTED,
                      "module '%s': CUDA memory, but libwick was built without CUDA", info->name);
  for (size_t i = 0; i < info->n_params; i++)
    for (size_t j = 0; j < i; j++)
      if (info->params[i].name != NULL && info->params[j].name != NULL
          && strcmp (info->params[i].name, info->params[j].name) == 0)
        return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                          "module '%s': parameter '%s' appears twice", info->name,
                          info->params[i].name);
  return true;
}

/* Other modules must not map an allocation of this one: evicting either
 * would free the other's weights. */
static bool
check_not_shared_locked (WickWeightStore *store, WickWeightModule *module, WickError *error)
{
  for (size_t m = 0; m < store->n_modules; m++)
    for (size_t a = 0; a < store->modules[m]->n_mappings; a++)
      for (size_t s = 0; s < module->n_storages; s++)
        if (store->modules[m]->mappings[a].base
            == module->mappings[module->storages[s].mapping].base)
          return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                            "module '%s': parameter '%s' lies in an allocation of module '%s': an "
                            "allocation (and tied parameters) must belong to one module",
                            module->name, module->params[module->storages[s].param].name,
                            store->modules[m]->name);
  return true;
}

static WickWeightModule *
module_new (const WickWeightModuleInfo *info, WickError *error)
{
  WickWeightModule *module = calloc (1, sizeof *module);
  if (module == NULL)
    return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory"), NULL;
  pthread_mutex_init (&module->prepare_lock, NULL);
  snprintf (module->name, sizeof module->name, "%s", info->name);
  module->memory = info->memory;
  module->backing = wick_weight_backing_for (info->memory);
  module->params = calloc (info->n_params, sizeof *module->params);
  module->storages = calloc (info->n_params, sizeof *module->storages);
  module->mappings = calloc (info->n_params, sizeof *module->mappings);
  module->checkpoint_path = info->checkpoint ? strdup (info->checkpoint) : NULL;
  if (module->params == NULL || module->storages == NULL || module->mappings == NULL
      || (info->checkpoint != NULL && module->checkpoint_path == NULL))
    {
      module_free (module);
      return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory"), NULL;
    }
  WickError param_error;
  for (size_t i = 0; i < info->n_params; i++)
    {
      if (!check_param (&info->params[i], i, &module->params[i], &param_error)
          || !attach_storage (module, &info->params[i], i, &param_error))
        {
          module->n_params = i + 1;
          module_free (module);
          return wick_fail (error, param_error.code, "module '%s': %s", info->name,
                            param_error.message),
                 NULL;
        }
      module->n_params = i + 1;
    }
  snprintf (module->stats.module, sizeof module->stats.module, "%s", module->name);
  module->stats.parameters = module->n_params;
  for (size_t s = 0; s < module->n_storages; s++)
    module->stats.bytes += module->storages[s].bytes;
  module->stats.resident = true;
  return module;
}

bool
wick_weight_store_register_module (WickWeightStore *store, const WickWeightModuleInfo *info,
                                   WickError *error)
{
  if (!check_module_info (store, info, error))
    return false;
  WickWeightModule *module = module_new (info, error);
  if (module == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  bool ok = true;
  WickWeightModule **grown = NULL;
  if (find_locked (store, module->name) != NULL)
    ok = wick_fail (error, WICK_ERROR_EXISTS, "module '%s' is already registered", module->name);
  else if (!check_not_shared_locked (store, module, error))
    ok = false;
  else if ((grown = realloc (store->modules, (store->n_modules + 1) * sizeof *grown)) == NULL)
    ok = wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
  if (ok)
    {
      store->modules = grown;
      store->modules[store->n_modules++] = module;
    }
  pthread_mutex_unlock (&store->lock);
  if (!ok)
    module_free (module);
  else
    {
      /* its storages are the session's parameters from now */
      wick_weight_module_record_storages (store, module, WICK_MEMORY_ALLOC, NULL);
      /* the pinned spills of its first eviction, allocated beside the
       * caller (wick_weight_module_start_preparing) */
      wick_weight_module_start_preparing (module);
    }
  return ok;
}

/* ---- waiting for a module ---------------------------------------------- */

/* Waits until the module is not busy (and, for an eviction, unused), then
 * marks it busy. Called and returns with store->lock held. */
static bool
acquire_locked (WickWeightStore *store, WickWeightModule *module, bool for_eviction,
                WickError *error)
{
  struct timespec deadline;
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += wick_weight_store_evict_wait_seconds;
  if (for_eviction)
    module->evictions_waiting++;
  int result = 0;
  while ((module->busy || (for_eviction && module->users > 0)) && result != ETIMEDOUT)
    result = for_eviction ? pthread_cond_timedwait (&store->changed, &store->lock, &deadline)
                          : pthread_cond_wait (&store->changed, &store->lock);
  if (for_eviction)
    module->evictions_waiting--;
  if (module->busy || (for_eviction && module->users > 0))
    {
      pthread_cond_broadcast (&store->changed);
      return wick_fail (error, WICK_ERROR_BUSY,
                        "module '%s' is still in use after %u s: not evicted", module->name,
                        wick_weight_store_evict_wait_seconds);
    }
  module->busy = true;
  return true;
}

static void
release_locked (WickWeightStore *store, WickWeightModule *module)
{
  module->busy = false;
  pthread_cond_broadcast (&store->changed);
}

static WickWeightModule *
lookup_locked (WickWeightStore *store, const char *name, WickError *error)
{
  WickWeightModule *module = name != NULL ? find_locked (store, name) : NULL;
  if (module == NULL)
    wick_fail (error, WICK_ERROR_NOT_FOUND, "no module named '%s' is registered",
               name ? name : "(null)");
  return module;
}

/* ---- evict, restore, drop ---------------------------------------------- */

bool
wick_weight_store_evict (WickWeightStore *store, const char *name, WickTier tier,
                         WickWeightStats *out, WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  if (tier != WICK_TIER_AUTO && tier != WICK_TIER_DISK && tier != WICK_TIER_RAM)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "unknown tier %d", (int)tier);
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL && acquire_locked (store, module, true, error);
  if (ok)
    {
      pthread_mutex_unlock (&store->lock);
      if (module->state == WICK_MODULE_DROPPED)
        ok = wick_fail (error, WICK_ERROR_STATE, "module '%s' was dropped: its weights are gone",
                        module->name);
      else if (module->state == WICK_MODULE_RESIDENT)
        ok = wick_weight_module_evict (store, module, tier, error);
      pthread_mutex_lock (&store->lock);
      if (out != NULL)
        copy_stats (module, out);
      release_locked (store, module);
    }
  pthread_mutex_unlock (&store->lock);
  return ok;
}

/* Restores under the lock protocol; module busy is taken and given back. */
static bool
restore_module_locked (WickWeightStore *store, WickWeightModule *module, WickWeightStats *out,
                       WickError *error)
{
  if (!acquire_locked (store, module, false, error))
    return false;
  bool ok = true;
  pthread_mutex_unlock (&store->lock);
  if (module->state == WICK_MODULE_DROPPED)
    ok = wick_fail (error, WICK_ERROR_STATE, "module '%s' was dropped: its weights are gone",
                    module->name);
  else if (module->state == WICK_MODULE_EVICTED)
    ok = wick_weight_module_restore (store, module, error);
  else
    {
      module->stats.restored = 0;
      module->stats.restored_bytes = 0;
    }
  pthread_mutex_lock (&store->lock);
  if (out != NULL)
    copy_stats (module, out);
  release_locked (store, module);
  return ok;
}

bool
wick_weight_store_restore (WickWeightStore *store, const char *name, WickWeightStats *out,
                           WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL && restore_module_locked (store, module, out, error);
  pthread_mutex_unlock (&store->lock);
  return ok;
}

bool
wick_weight_store_restore_all (WickWeightStore *store, uint64_t *restored_modules, WickError *error)
{
  uint64_t restored = 0;
  bool ok = true;
  if (restored_modules != NULL)
    *restored_modules = 0;
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  for (size_t i = 0; i < store->n_modules; i++)
    {
      WickWeightModule *module = store->modules[i];
      if (module->state != WICK_MODULE_EVICTED)
        continue;
      WickError module_error;
      if (restore_module_locked (store, module, NULL, &module_error))
        restored++;
      else if (ok)
        {
          ok = false;
          if (error != NULL)
            *error = module_error;
        }
    }
  pthread_mutex_unlock (&store->lock);
  if (restored_modules != NULL)
    *restored_modules = restored;
  return ok;
}

bool
wick_weight_store_drop (WickWeightStore *store, const char *name, WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL && acquire_locked (store, module, false, error);
  if (ok)
    {
      wick_weight_module_free_spills (module);
      if (module->state == WICK_MODULE_EVICTED)
        {
          module->state = WICK_MODULE_DROPPED;
          module->stats.disk = module->stats.ram = 0;
          if (module->checkpoint_open)
            wick_checkpoint_close (&module->checkpoint);
          module->checkpoint_open = false;
        }
      release_locked (store, module);
    }
  pthread_mutex_unlock (&store->lock);
  return ok;
}

void
wick_weight_store_trim (WickWeightStore *store)
{
  if (store == NULL)
    return;
  pthread_mutex_lock (&store->lock);
  for (size_t i = 0; i < store->n_modules; i++)
    {
      WickWeightModule *module = store->modules[i];
      if (module->state == WICK_MODULE_RESIDENT && !module->busy)
        wick_weight_module_free_spills (module);
    }
  pthread_mutex_unlock (&store->lock);
  pthread_mutex_lock (&store->staging_lock);
  wick_disk_staging_free (&store->staging);
  pthread_mutex_unlock (&store->staging_lock);
}

bool
wick_weight_store_unregister_module (WickWeightStore *store, const char *name, WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL
            && (module->state == WICK_MODULE_DROPPED
                || restore_module_locked (store, module, NULL, error));
  if (ok && module->users > 0)
    ok = wick_fail (error, WICK_ERROR_BUSY, "module '%s' is in use", module->name);
  if (ok)
    {
      size_t i = 0;
      while (store->modules[i] != module)
        i++;
      store->modules[i] = store->modules[--store->n_modules];
      pthread_cond_broadcast (&store->changed);
    }
  pthread_mutex_unlock (&store->lock);
  if (ok)
    {
      bool *live = calloc (module->n_storages + 1, sizeof *live);
      if (live != NULL)
        {
          for (size_t s = 0; s < module->n_storages; s++)
            live[s] = !wick_weight_storage_released (module, &module->storages[s]);
          wick_weight_module_record_storages (store, module, WICK_MEMORY_FREE, live);
          free (live);
        }
      module_free (module);
    }
  return ok;
}

/* ---- residency for the host program ------------------------------------ */

bool
wick_weight_store_is_resident (WickWeightStore *store, const char *name)
{
  if (store == NULL || name == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = find_locked (store, name);
  bool resident = module != NULL && module->state == WICK_MODULE_RESIDENT && !module->busy;
  pthread_mutex_unlock (&store->lock);
  return resident;
}

static bool
make_resident_locked (WickWeightStore *store, WickWeightModule *module, WickError *error)
{
  /* Let a waiting eviction go first, so a busy training loop cannot starve
   * it; but a module already held stays available to nested use_begin calls
   * (the eviction cannot run before the outer use_end anyway). */
  while ((module->evictions_waiting > 0 && module->users == 0) || module->busy)
    pthread_cond_wait (&store->changed, &store->lock);
  if (module->state == WICK_MODULE_RESIDENT)
    return true;
  /* A refused restore is not retried on demand (it would read the same
   * damaged bytes again): the workload gets its sentence at once. An
   * explicit restore or restore-all tries again. */
  if (module->refused && module->state == WICK_MODULE_EVICTED)
    {
      if (error != NULL)
        *error = module->refusal;
      return false;
    }
  return restore_module_locked (store, module, NULL, error);
}

bool
wick_weight_store_get_refusal (WickWeightStore *store, const char *name, WickError *error)
{
  if (store == NULL || name == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = find_locked (store, name);
  bool refused = module != NULL && module->refused && module->state == WICK_MODULE_EVICTED;
  if (refused && error != NULL)
    *error = module->refusal;
  pthread_mutex_unlock (&store->lock);
  return refused;
}

bool
wick_weight_store_ensure_resident (WickWeightStore *store, const char *name, WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL && make_resident_locked (store, module, error);
  pthread_mutex_unlock (&store->lock);
  return ok;
}

bool
wick_weight_store_use_begin (WickWeightStore *store, const char *name, WickError *error)
{
  if (store == NULL)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "no weight store");
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = lookup_locked (store, name, error);
  bool ok = module != NULL && make_resident_locked (store, module, error);
  if (ok)
    module->users++;
  pthread_mutex_unlock (&store->lock);
  return ok;
}

void
wick_weight_store_use_end (WickWeightStore *store, const char *name)
{
  if (store == NULL || name == NULL)
    return;
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = find_locked (store, name);
  if (module != NULL && module->users > 0)
    {
      module->users--;
      pthread_cond_broadcast (&store->changed);
    }
  pthread_mutex_unlock (&store->lock);
}

/* ---- queries -------------------------------------------------------------- */

size_t
wick_weight_store_get_n_modules (WickWeightStore *store)
{
  if (store == NULL)
    return 0;
  pthread_mutex_lock (&store->lock);
  size_t n = store->n_modules;
  pthread_mutex_unlock (&store->lock);
  return n;
}

bool
wick_weight_store_get_module_stats (WickWeightStore *store, size_t index, WickWeightStats *out)
{
  if (store == NULL || out == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  bool ok = index < store->n_modules;
  if (ok)
    copy_stats (store->modules[index], out);
  pthread_mutex_unlock (&store->lock);
  return ok;
}

bool
wick_weight_store_find_stats (WickWeightStore *store, const char *name, WickWeightStats *out)
{
  if (store == NULL || name == NULL || out == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = find_locked (store, name);
  if (module != NULL)
    copy_stats (module, out);
  pthread_mutex_unlock (&store->lock);
  return module != NULL;
}

void
wick_weight_store_get_total_stats (WickWeightStore *store, WickWeightStats *out)
{
  memset (out, 0, sizeof *out);
  snprintf (out->module, sizeof out->module, "total");
  out->resident = true;
  if (store == NULL)
    return;
  pthread_mutex_lock (&store->lock);
  for (size_t i = 0; i < store->n_modules; i++)
    {
      const WickWeightStats *s = &store->modules[i]->stats;
      out->parameters += s->parameters;
      out->bytes += s->bytes;
      out->disk += s->disk;
      out->ram += s->ram;
      out->freed_bytes += s->freed_bytes;
      out->restored_bytes += s->restored_bytes;
      out->restored += s->restored;
      out->restored_count += s->restored_count;
      out->evict_seconds += s->evict_seconds;
      out->restore_seconds += s->restore_seconds;
      out->resident = out->resident && s->resident;
      out->spill_bytes += atomic_load (&store->modules[i]->spill_bytes);
    }
  pthread_mutex_unlock (&store->lock);
}

static WickWeightPlace
param_place (const WickWeightModule *module, const WickWeightStorage *storage)
{
  if (!wick_weight_storage_released (module, storage))
    return WICK_PLACE_RESIDENT;
  if (module->state == WICK_MODULE_DROPPED)
    return WICK_PLACE_DROPPED;
  return storage->tier == WICK_TIER_DISK ? WICK_PLACE_DISK : WICK_PLACE_RAM;
}

bool
wick_weight_store_get_param_info (WickWeightStore *store, const char *name, size_t index,
                              WickWeightParamInfo *out)
{
  if (store == NULL || name == NULL || out == NULL)
    return false;
  pthread_mutex_lock (&store->lock);
  WickWeightModule *module = find_locked (store, name);
  bool ok = module != NULL && index < module->n_params;
  if (ok)
    {
      const WickWeightParamState *param = &module->params[index];
      const WickWeightStorage *storage = &module->storages[param->storage];
      memset (out, 0, sizeof *out);
      snprintf (out->name, sizeof out->name, "%s", param->name);
      out->place = param_place (module, storage);
      out->last_tier = storage->tier;
      out->bytes = param->bytes;
      out->tied = param->tied;
      snprintf (out->key, sizeof out->key, "%s", param->key);
      snprintf (out->shard, sizeof out->shard, "%s", param->shard);
      snprintf (out->reason, sizeof out->reason, "%s", param->reason);
    }
  pthread_mutex_unlock (&store->lock);
  return ok;
}
