/* wick-weight-allocations.c — the process-wide registry of memory made by
 * wick_weight_alloc_host/device (see wick-weight-backing-private.h). A short
 * list under one mutex: it is touched at registration, eviction and restore,
 * never on a hot path. */
#include "wick-weight-backing-private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wick-error-private.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static WickWeightAllocation *registry;
static size_t registry_length;
static size_t registry_capacity;

unsigned wick_weight_fail_release_after;
bool wick_weight_pin_registered = true;
unsigned wick_weight_fail_recommit_after;

bool
wick_weight_allocation_add (const WickWeightAllocation *allocation, WickError *error)
{
  pthread_mutex_lock (&registry_lock);
  if (registry_length == registry_capacity)
    {
      size_t capacity = registry_capacity ? registry_capacity * 2 : 64;
      WickWeightAllocation *grown = realloc (registry, capacity * sizeof *grown);
      if (grown == NULL)
        {
          pthread_mutex_unlock (&registry_lock);
          wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for the registry");
          return false;
        }
      registry = grown;
      registry_capacity = capacity;
    }
  registry[registry_length++] = *allocation;
  pthread_mutex_unlock (&registry_lock);
  return true;
}

static WickWeightAllocation *
find_locked (const void *ptr, bool exact)
{
  const char *p = ptr;
  for (size_t i = 0; i < registry_length; i++)
    {
      const char *base = registry[i].base;
      if (p == base || (!exact && p > base && p < base + registry[i].size))
        return &registry[i];
    }
  return NULL;
}

bool
wick_weight_allocation_get (void *base, WickWeightAllocation *out)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (base, true);
  if (found != NULL)
    *out = *found;
  pthread_mutex_unlock (&registry_lock);
  return found != NULL;
}

static const char *
memory_name (WickWeightMemory memory)
{
  return memory == WICK_WEIGHT_MEMORY_CUDA ? "wick_weight_alloc_device" : "wick_weight_alloc_host";
}

bool
wick_weight_allocation_hold (const void *ptr, WickWeightMemory memory, size_t bytes,
                             WickWeightAllocation *out, WickError *error)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (ptr, false);
  bool ok = false;
  size_t offset = found != NULL ? (size_t)((const char *)ptr - (const char *)found->base) : 0;
  if (found == NULL || found->memory != memory)
    wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                    "%p is not memory from %s: the store can only release and restore at the same "
                    "address memory it allocated",
                    ptr, memory_name (memory));
  else if (bytes > found->size - offset)
    wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                    "%zu bytes at %p run past the end of the %zu-byte allocation at %p", bytes, ptr,
                    found->size, found->base);
  else
    {
      *out = *found;
      ok = true;
    }
  pthread_mutex_unlock (&registry_lock);
  return ok;
}

bool
wick_weight_allocation_add_user (void *base)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (base, true);
  if (found != NULL)
    found->users++;
  pthread_mutex_unlock (&registry_lock);
  return found != NULL;
}

void
wick_weight_allocation_unhold (void *base)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (base, true);
  if (found != NULL && found->users > 0)
    found->users--;
  pthread_mutex_unlock (&registry_lock);
}

bool
wick_weight_allocation_remove (void *base, WickWeightMemory memory, WickWeightAllocation *out,
                               WickError *error)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (base, true);
  bool ok = false;
  if (found == NULL || found->memory != memory)
    wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "%p was not allocated by %s", base,
                    memory_name (memory));
  else if (found->users > 0)
    wick_set_error (error, WICK_ERROR_BUSY,
                    "%p is still held by %u registered module(s): unregister them first", base,
                    found->users);
  else
    {
      *out = *found;
      *found = registry[--registry_length];
      ok = true;
    }
  pthread_mutex_unlock (&registry_lock);
  return ok;
}

void
wick_weight_allocation_set_released (void *base, bool released, uint64_t handle)
{
  pthread_mutex_lock (&registry_lock);
  WickWeightAllocation *found = find_locked (base, true);
  if (found != NULL)
    {
      found->released = released;
      found->handle = handle;
    }
  pthread_mutex_unlock (&registry_lock);
}
