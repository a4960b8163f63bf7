/* wick-weight-backing-host.c — the host backing of the weight store (see
 * wick-weight-backing-private.h) and wick_weight_alloc_host. */
#include "wick-weight-backing-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/wick-error-private.h"

static size_t
page_round (size_t bytes)
{
  size_t page = (size_t)sysconf (_SC_PAGESIZE);
  return (bytes + page - 1) / page * page;
}

void *
wick_weight_alloc_host (size_t bytes, WickError *error)
{
  size_t size = page_round (bytes ? bytes : 1);
  void *base = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "cannot map %zu bytes: %s", size,
                      strerror (errno));
      return NULL;
    }
  WickWeightAllocation allocation
    = { .base = base, .size = size, .memory = WICK_WEIGHT_MEMORY_HOST };
  if (!wick_weight_allocation_add (&allocation, error))
    {
      munmap (base, size);
      return NULL;
    }
  return base;
}

bool
wick_weight_free_host (void *ptr, WickError *error)
{
  WickWeightAllocation allocation;
  if (!wick_weight_allocation_remove (ptr, WICK_WEIGHT_MEMORY_HOST, &allocation, error))
    return false;
  munmap (allocation.base, allocation.size);
  return true;
}

static bool
host_release (void *base, size_t size, WickError *error)
{
  if (wick_weight_fail_release_after > 0 && --wick_weight_fail_release_after == 0)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "release of %p failed (injected)", base);
      return false;
    }
  void *p
    = mmap (base, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    {
      wick_set_error (error, wick_error_code_from_errno (errno),
                      "cannot release %zu bytes at %p: %s", size, base, strerror (errno));
      return false;
    }
  wick_weight_allocation_set_released (base, true, 0);
  return true;
}

static bool
host_recommit (void *base, size_t size, WickError *error)
{
  if (wick_weight_fail_recommit_after > 0 && --wick_weight_fail_recommit_after == 0)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "recommit of %p failed (injected)", base);
      return false;
    }
  void *p
    = mmap (base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED)
    {
      wick_set_error (error, wick_error_code_from_errno (errno),
                      "cannot map %zu bytes at %p again: %s", size, base, strerror (errno));
      return false;
    }
  wick_weight_allocation_set_released (base, false, 0);
  return true;
}

static bool
host_copy (void *destination, const void *source, size_t bytes, WickError *error)
{
  memcpy (destination, source, bytes);
  return true;
}

static void *
host_fence_new (void)
{
  return (void *)1;
}

static bool
host_fence (void *fence, WickError *error)
{
  return true;
}

static void
host_fence_free (void *fence)
{
}

static bool
host_nothing_to_wait (WickError *error)
{
  return true;
}

/* Spills, staging and comparison buffers are whole page mappings, not
 * malloc: glibc raises its mmap threshold to the size of the first large
 * block freed (up to 32 MiB), so from the second eviction on malloc would
 * serve these from a thread's arena and keep their pages resident after the
 * free (wick-demo's heap grew by a staging slot and a spill that way). A
 * mapping gives its pages back at munmap. */
void *
wick_weight_pages_alloc (size_t bytes)
{
  void *base = mmap (NULL, page_round (bytes ? bytes : 1), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return base == MAP_FAILED ? NULL : base;
}

void
wick_weight_pages_free (void *memory, size_t bytes)
{
  if (memory != NULL)
    munmap (memory, page_round (bytes ? bytes : 1));
}

static void *
host_alloc (size_t bytes)
{
  return wick_weight_pages_alloc (bytes);
}

static void
host_free (void *memory, size_t bytes)
{
  wick_weight_pages_free (memory, bytes);
}

static uint64_t
meminfo_bytes (const char *field)
{
  FILE *file = fopen ("/proc/meminfo", "re");
  char line[256];
  unsigned long long kib = 0;
  size_t n = strlen (field);
  while (file != NULL && fgets (line, sizeof line, file) != NULL)
    if (strncmp (line, field, n) == 0 && line[n] == ':')
      {
        sscanf (line + n + 1, "%llu", &kib);
        break;
      }
  if (file != NULL)
    fclose (file);
  return (uint64_t)kib * 1024;
}

/* "Device" memory of the host backing: this process's resident set. */
static bool
host_sample (char device[32], uint64_t *used, uint64_t *free_bytes, uint64_t *capacity)
{
  FILE *file = fopen ("/proc/self/statm", "re");
  unsigned long long pages_total = 0, pages_resident = 0;
  bool ok = file != NULL && fscanf (file, "%llu %llu", &pages_total, &pages_resident) == 2;
  if (file != NULL)
    fclose (file);
  if (!ok)
    return false;
  snprintf (device, 32, "cpu");
  *used = (uint64_t)pages_resident * (uint64_t)sysconf (_SC_PAGESIZE);
  *free_bytes = meminfo_bytes ("MemAvailable");
  *capacity = meminfo_bytes ("MemTotal");
  return true;
}

static const WickWeightBacking host_backing = {
  .memory = WICK_WEIGHT_MEMORY_HOST,
  .name = "host",
  .release = host_release,
  .recommit = host_recommit,
  .copy_to_host = host_copy,
  .copy_from_staging = host_copy,
  .copy_to_staging = host_copy,
  .fence_new = host_fence_new,
  .fence_record = host_fence,
  .fence_wait = host_fence,
  .fence_free = host_fence_free,
  .finish = host_nothing_to_wait,
  .synchronize = host_nothing_to_wait,
  .host_alloc = host_alloc,
  .host_free = host_free,
  .sample = host_sample,
};

extern const WickWeightBacking *wick_weight_cuda_backing (void);

const WickWeightBacking *
wick_weight_backing_for (WickWeightMemory memory)
{
  return memory == WICK_WEIGHT_MEMORY_CUDA ? wick_weight_cuda_backing () : &host_backing;
}
