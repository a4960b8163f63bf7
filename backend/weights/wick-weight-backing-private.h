/* wick-weight-backing-private.h — where a module's buffers live, and the few
 * operations the weight store needs from that place. The store's logic is
 * the same for both backings:
 *
 *   host  page-aligned anonymous mappings. release = mmap(MAP_FIXED,
 *         PROT_NONE, MAP_NORESERVE) over the range: the pages go back to the
 *         kernel, the address range stays reserved, and a stray access faults
 *         as it would on an unmapped device range. recommit = mmap(MAP_FIXED,
 *         PROT_READ|PROT_WRITE) at the same address. Copies are memcpy.
 *   cuda  driver VMM allocations (cuMemAddressReserve + cuMemCreate +
 *         cuMemMap + cuMemSetAccess). release = cuMemUnmap + cuMemRelease,
 *         recommit = cuMemCreate + cuMemMap + cuMemSetAccess at the same
 *         address. Spills and staging are pinned host memory. Driver entry
 *         points come from cudaGetDriverEntryPointByVersion, so libwick never
 *         links libcuda and loads on machines without a driver.
 *
 * Allocations made by wick_weight_alloc_host/device are kept in one
 * process-wide registry; the store accepts only parameters that lie in one.
 */
#pragma once

#include "wick-session-private.h"

typedef struct
{
  WickWeightMemory memory;
  const char *name; /* "host" or "cuda" */

  /* Free the physical memory of an allocation, keeping its addresses. */
  bool (*release) (void *base, size_t size, WickError *error);
  /* Back an allocation's addresses with fresh memory again. */
  bool (*recommit) (void *base, size_t size, WickError *error);

  /* A synchronous copy from the backing to ordinary host memory. */
  bool (*copy_to_host) (void *destination, const void *source, size_t bytes, WickError *error);

  /* Asynchronous copies between the backing and memory from host_alloc
   * (pinned for CUDA), complete at the next finish; and a fence after them:
   * the disk pipeline waits on a staging buffer's fence before refilling it. */
  bool (*copy_from_staging) (void *destination, const void *source, size_t bytes, WickError *error);
  bool (*copy_to_staging) (void *destination, const void *source, size_t bytes, WickError *error);
  void *(*fence_new) (void);
  bool (*fence_record) (void *fence, WickError *error);
  bool (*fence_wait) (void *fence, WickError *error);
  void (*fence_free) (void *fence);
  /* Waits for every copy issued so far. */
  bool (*finish) (WickError *error);

  /* Waits for the host program's own device work (before reading weights). */
  bool (*synchronize) (WickError *error);

  /* Host memory for spills and staging: pinned where the backing copies
   * faster from it. */
  void *(*host_alloc) (size_t bytes);
  void (*host_free) (void *memory, size_t bytes);

  /* A device memory sample: device name ("cpu", "cuda:0"), used, free and
   * capacity bytes. */
  bool (*sample) (char device[32], uint64_t *used, uint64_t *free_bytes, uint64_t *capacity);
} WickWeightBacking;

const WickWeightBacking *wick_weight_backing_for (WickWeightMemory memory);

/* Large host buffers as their own page mappings (freed with the same bytes):
 * their pages leave the resident set at the free, whatever malloc's
 * thresholds (wick-weight-backing-host.c). */
void *wick_weight_pages_alloc (size_t bytes);
void wick_weight_pages_free (void *memory, size_t bytes);

/* ---- the allocation registry ------------------------------------------ */

typedef struct
{
  void *base;
  size_t size; /* the whole mapping: a multiple of the page or granularity */
  WickWeightMemory memory;
  int device;      /* CUDA ordinal */
  uint64_t handle; /* CUDA physical allocation handle while mapped */
  unsigned users;  /* registered parameters holding it */
  bool released;   /* evicted: no physical memory behind it */
} WickWeightAllocation;

/* All take the registry lock. */
bool wick_weight_allocation_add (const WickWeightAllocation *allocation, WickError *error);
/* A copy of the allocation starting exactly at base; false if none. */
bool wick_weight_allocation_get (void *base, WickWeightAllocation *out);
/* The allocation holding [ptr, ptr + bytes) of the given memory, or false
 * with the reason. */
bool wick_weight_allocation_hold (const void *ptr, WickWeightMemory memory, size_t bytes,
                                  WickWeightAllocation *out, WickError *error);
/* Counts one more module mapping on the allocation at base. */
bool wick_weight_allocation_add_user (void *base);
void wick_weight_allocation_unhold (void *base);
/* Removes the registry entry (which must have no users) and hands it back. */
bool wick_weight_allocation_remove (void *base, WickWeightMemory memory, WickWeightAllocation *out,
                                    WickError *error);
void wick_weight_allocation_set_released (void *base, bool released, uint64_t handle);

/* How the CUDA backing pins host memory (spills, staging): true (the
 * default), anonymous pages 2 MiB aligned with transparent huge pages asked
 * for (madvise), pinned by cudaHostRegister (fewer, larger pages to fault
 * in and pin; about half cudaHostAlloc's time and a fifth of its free on an
 * H200 host), cudaHostAlloc where registering fails; false, cudaHostAlloc.
 * Process-wide (WICK_WEIGHT_PIN_REGISTERED=0, or benchmarks); memory is
 * freed the way it was made whatever the setting is then. */
extern bool wick_weight_pin_registered;

/* Fault injection for the rollback tests (wick-weight-store-private.h). */
extern unsigned wick_weight_fail_release_after;
extern unsigned wick_weight_fail_recommit_after;
