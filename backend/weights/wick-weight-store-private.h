/* wick-weight-store-private.h — the weight store's internal types, shared by
 * wick-weight-store.c (registration, queries, locking), wick-weight-evict.c
 * (provenance, evict, restore, drop) and the tests.
 *
 * A module's parameters are grouped into storages, one per distinct data
 * pointer, and storages into mappings, one per Wick allocation they lie in.
 * Tied parameters (several names on one pointer) share a storage, which is
 * stashed once and restored once, at the same address, so the names stay
 * tied. A mapping is released and mapped again as a whole; each storage in it
 * keeps its own tier. Each mapping carries its released flag, so a partial
 * failure leaves an exact record of what is where.
 *
 * Locking: store->lock guards the module list and each module's state, users
 * and busy flag. Eviction and restore run with the module marked busy and the
 * lock dropped, so queries stay quick while gigabytes move.
 */
#pragma once

#include "wick-safetensors-private.h"
#include "wick-weight-backing-private.h"
#include "wick-weight-disk-reader-private.h"
#include "wick-weight-hash-private.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct
{
  char *name;
  WickWeightDtype dtype;
  uint64_t shape[WICK_WEIGHT_MAX_DIMS];
  size_t n_dims;
  uint64_t count;
  uint64_t bytes;
  size_t storage;
  bool tied;
  char key[256];
  char shard[1024];
  char reason[512];
} WickWeightParamState;

/* One Wick allocation of the module: the unit that is released and mapped
 * again. */
typedef struct
{
  void *base;
  size_t size;
  bool released; /* no memory behind it now */
} WickWeightMapping;

/* One tensor's bytes inside a mapping, shared by tied parameters: the unit
 * that is stashed (disk or RAM tier) and refilled. */
typedef struct
{
  void *data;
  uint64_t bytes; /* live bytes */
  size_t mapping;
  size_t param;  /* the first parameter on it */
  WickTier tier; /* of the last eviction; AUTO before any */
  /* disk tier */
  size_t shard;
  uint64_t file_offset; /* absolute */
  WickWeightDtype file_dtype;
  /* RAM tier */
  void *spill;
  size_t spill_size;
  bool spill_holds_data;
  /* wick-weight-hash-private.h: of the live bytes at the last eviction; a
   * restore refuses bytes whose digest differs */
  uint64_t digest;
} WickWeightStorage;

typedef enum
{
  WICK_MODULE_RESIDENT,
  WICK_MODULE_EVICTED,
  WICK_MODULE_DROPPED
} WickModuleState;

typedef struct
{
  char name[128];
  WickWeightMemory memory;
  const WickWeightBacking *backing;
  char *checkpoint_path;
  WickCheckpoint checkpoint; /* open while a storage is on the disk tier */
  bool checkpoint_open;
  WickWeightParamState *params;
  size_t n_params;
  WickWeightStorage *storages;
  size_t n_storages;
  WickWeightMapping *mappings;
  size_t n_mappings;
  WickModuleState state;
  unsigned users;
  unsigned evictions_waiting;
  bool busy;
  /* The last restore refused bytes that failed verification: why (a
   * sentence naming the file and key); cleared by a restore that succeeds.
   * use_begin and ensure_resident answer with it instead of waiting. */
  bool refused;
  WickError refusal;
  WickWeightStats stats; /* its spill_bytes is filled from spill_bytes below when copied out */
  /* Host memory the storages' spills hold now (pinned for CUDA modules),
   * written by the preparing thread too: WickWeightStats.spill_bytes. */
  _Atomic uint64_t spill_bytes;
  /* Spills prepared ahead (wick_weight_module_start_preparing): a thread
   * that allocates every storage's spill after registration. Whatever else
   * touches the spills stops and joins it first
   * (join_preparing in wick-weight-evict.c); prepare_lock guards the join. */
  pthread_mutex_t prepare_lock;
  pthread_t preparer;
  bool preparing; /* started and not yet joined */
  atomic_bool stop_preparing;
} WickWeightModule;

struct WickWeightStore
{
  WickSession *session;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  WickWeightModule **modules;
  size_t n_modules;
  WickDiskStaging staging; /* used by one busy module at a time: staging_lock */
  pthread_mutex_t staging_lock;
};

static inline bool
wick_weight_storage_released (const WickWeightModule *module, const WickWeightStorage *storage)
{
  return module->mappings[storage->mapping].released;
}

/* wick-weight-evict.c; called with the module busy and store->lock not held. */
/* How long the phases of this process's last eviction and restore took
 * (seconds; written without a lock: for benchmarks, bench-weight-store). */
typedef struct
{
  double evict_spill;   /* RAM-tier copies out and their digests */
  double evict_release; /* unmapping and releasing the physical memory */
  double restore_map;   /* creating and mapping the physical memory again */
  double restore_queue; /* queuing the RAM-tier copies and their digests */
  double restore_wait;  /* waiting for them */
  double restore_disk;  /* the disk tier's reads, copies and digests */
} WickWeightPhaseTimes;
extern WickWeightPhaseTimes wick_weight_phase_times;

/* How an eviction of a CUDA module orders its work, timed against the old
 * order and the pinned copies in one process by bench-weight-store
 * (docs/performance.md, "Issue 22 items 1 and 2"); process-wide, set by
 * benchmarks between calls, defaults in wick-weight-evict.c. */
typedef struct
{
  /* evict, GPU digests: each mapping released as soon as its copies out
   * landed and its digests read it, while the later copies run (default);
   * false: every copy, then every release */
  bool release_early;
  /* CUDA modules: every storage's pinned spill allocated on a thread of
   * its own when the module is registered (default), so that the first
   * RAM-tier eviction does not pin in its timed path */
  bool prepare_spills;
} WickWeightMoveOptions;
extern WickWeightMoveOptions wick_weight_move_options;

/* Reads the environment's choices into wick_weight_move_options and
 * wick_weight_pin_registered once a process (WICK_WEIGHT_RELEASE_EARLY,
 * WICK_WEIGHT_PIN_REGISTERED, WICK_WEIGHT_PREPARE_SPILLS; docs/weights.md). */
void wick_weight_move_options_init (void);

/* Allocates the pinned spill of every storage that has none, ahead of the
 * first RAM-tier eviction (which otherwise pins it in its timed path);
 * stops a preparing thread first. */
bool wick_weight_module_prepare_spills (WickWeightModule *module, WickError *error);
/* With wick_weight_move_options.prepare_spills and a CUDA module: starts
 * the thread that allocates the spills (a module registered just now, not
 * yet busy). Without a thread, the first eviction allocates them. */
void wick_weight_module_start_preparing (WickWeightModule *module);
/* Waits for the preparing thread to finish (benchmarks: time what follows
 * without it running beside). */
void wick_weight_module_wait_prepared (WickWeightModule *module);

bool wick_weight_module_evict (WickWeightStore *store, WickWeightModule *module, WickTier tier,
                               WickError *error);
bool wick_weight_module_restore (WickWeightStore *store, WickWeightModule *module,
                                 WickError *error);
void wick_weight_module_free_spills (WickWeightModule *module);
/* The module's storages in the session's trace (docs/weights.md, "In the
 * trace"): a memory record (category parameter) of @action for each storage
 * whose entry in @which is true (NULL: every storage). */
void wick_weight_module_record_storages (WickWeightStore *store, WickWeightModule *module,
                                         WickMemoryAction action, const bool *which);

/* How long evict waits for users (use_begin without use_end), in seconds. */
extern unsigned wick_weight_store_evict_wait_seconds;
