/* wick-weights.h — the weight store: evict a registered module's parameters to
 * a verified safetensors checkpoint (disk tier) or host RAM (RAM tier), and
 * restore them at the same address.
 *
 * The functions that list, evict and restore modules are also what the
 * control socket calls (docs/protocol.md).
 *
 * Contract (docs/weights.md has the long form):
 * - Parameter buffers live in memory the store can release and map again at
 *   the same address: wick_weight_alloc_host() (page-aligned anonymous
 *   mappings) or wick_weight_alloc_device() (CUDA driver VMM). Each
 *   parameter must lie inside one such allocation; several may share one
 *   (small tensors should: the allocation is the unit released and mapped
 *   again, and bytes of it that no parameter covers are not kept). Several
 *   names on one pointer and size are tied parameters (stashed once, restored
 *   tied); other overlaps are refused. Buffers from anywhere else are refused
 *   at registration with the reason.
 * - Evict: every parameter whose checkpoint key is found (the full name
 *   "module.param", then with 1, 2, 3 leading components stripped) with an
 *   equal shape and whose first and last 64 KiB, converted to the live dtype,
 *   equal the live bytes goes to the disk tier; anything else to the RAM tier
 *   (pinned host memory for CUDA modules). Then the memory is released. A
 *   failure puts back what was already released, so the module stays
 *   runnable.
 * - Restore maps new memory at the same addresses and fills it from the
 *   checkpoint (through pinned staging buffers, reads overlapped with copies)
 *   or from the RAM spill. Pointers and captured CUDA graphs stay valid.
 * - All functions are thread-safe. Evict waits (up to 10 s) for users that
 *   hold the module through wick_weight_store_use_begin(); use_begin and
 *   ensure_resident restore an evicted module on demand.
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

WICK_BEGIN_DECLS

  typedef struct WickWeightStore WickWeightStore;

  typedef enum
  {
    WICK_TIER_AUTO,
    WICK_TIER_DISK,
    WICK_TIER_RAM
  } WickTier;

  typedef struct
  {
    char module[128];
    uint64_t parameters;     /* parameters in the module */
    uint64_t bytes;          /* live bytes of the module when resident */
    uint64_t disk;           /* parameters now on the disk tier */
    uint64_t ram;            /* parameters now on the RAM tier */
    uint64_t freed_bytes;    /* by the last eviction */
    uint64_t restored_bytes; /* by the last restore */
    uint64_t restored;       /* parameters restored by the last restore */
    uint64_t restored_count; /* restores so far */
    double evict_seconds;    /* duration of the last eviction */
    double restore_seconds;  /* duration of the last restore */
    bool resident;
    /* host memory held now for the module's RAM-tier copies (pinned for a
     * CUDA module): prepared ahead of the first eviction, holding an evicted
     * module's bytes, or kept after a restore for the next eviction;
     * wick_weight_store_trim frees what a resident module keeps */
    uint64_t spill_bytes;
    uint64_t _wick_reserved[7]; /* room to grow: written as zero by libwick */
  } WickWeightStats;

  /* The weight store registered with a session, or NULL. */
  WICK_AVAILABLE_IN_1_0
  WickWeightStore *wick_session_get_weight_store (WickSession *session);

  /* The store's modules and what evict and restore did. */
  WICK_AVAILABLE_IN_1_0
  size_t wick_weight_store_get_n_modules (WickWeightStore *store);
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_get_module_stats (WickWeightStore *store, size_t index, WickWeightStats *out);
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_evict (WickWeightStore *store, const char *module, WickTier tier,
                                WickWeightStats *out, WickError *error);
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_restore (WickWeightStore *store, const char *module, WickWeightStats *out,
                                  WickError *error);
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_restore_all (WickWeightStore *store, uint64_t *restored_modules,
                                      WickError *error);

  /* ---- Registration and the rest of the store -------------------------- */

  /* Safetensors dtypes; the names are safetensors' ("F32", "BF16", ...). */
  typedef enum
  {
    WICK_DTYPE_BOOL,
    WICK_DTYPE_U8,
    WICK_DTYPE_I8,
    WICK_DTYPE_F8_E4M3,
    WICK_DTYPE_F8_E5M2,
    WICK_DTYPE_I16,
    WICK_DTYPE_U16,
    WICK_DTYPE_F16,
    WICK_DTYPE_BF16,
    WICK_DTYPE_I32,
    WICK_DTYPE_U32,
    WICK_DTYPE_F32,
    WICK_DTYPE_I64,
    WICK_DTYPE_U64,
    WICK_DTYPE_F64,
    WICK_N_DTYPES,
  } WickWeightDtype;

  /* "F32", ... or NULL for an out-of-range value. */
  WICK_AVAILABLE_IN_1_0
  const char *wick_weight_dtype_name (WickWeightDtype dtype);
  /* Bytes per element, 0 for an out-of-range value. */
  WICK_AVAILABLE_IN_1_0
  size_t wick_weight_dtype_size (WickWeightDtype dtype);
  /* Parses a safetensors dtype name; false if unknown. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_dtype_from_name (const char *name, WickWeightDtype *out);

#define WICK_WEIGHT_MAX_DIMS 8

  typedef enum
  {
    WICK_WEIGHT_MEMORY_HOST,
    WICK_WEIGHT_MEMORY_CUDA
  } WickWeightMemory;

  /* One named tensor: a parameter of a module, or a tensor to write. */
  typedef struct
  {
    const char *name;
    void *data;
    WickWeightDtype dtype;
    const uint64_t *shape;
    size_t n_dims; /* at most WICK_WEIGHT_MAX_DIMS; 0 is a scalar */
  } WickWeightParam;

  typedef struct
  {
    const char *name;              /* unique in the store, at most 127 bytes */
    const WickWeightParam *params; /* names unique in the module; copied */
    size_t n_params;
    WickWeightMemory memory; /* where every buffer of the module lives */
    const char *checkpoint;  /* optional: a .safetensors file, or a directory with
                                model.safetensors.index.json or *.safetensors shards */
    uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
  } WickWeightModuleInfo;

  /* A new store. With a session, the store is registered in it (the control
   * socket finds it through wick_session_get_weight_store), records its
   * evictions and restores into the session's trace, and is freed with the
   * session; a session holds at most one store. Without one, free it with
   * wick_weight_store_free(). */
  WICK_AVAILABLE_IN_1_0
  WickWeightStore *wick_weight_store_new (WickSession *session, WickError *error);
  /* Frees a store made without a session. Evicted modules stay released; their
   * RAM spills are freed. A store made with a session is freed by
   * wick_session_close: here it is left alone (with a line on stderr). */
  WICK_AVAILABLE_IN_1_0
  void wick_weight_store_free (WickWeightStore *store);

  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_register_module (WickWeightStore *store, const WickWeightModuleInfo *info,
                                          WickError *error);
  /* Restores the module if it is evicted, then forgets it. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_unregister_module (WickWeightStore *store, const char *module,
                                            WickError *error);

  /* Makes the module's eviction final: its RAM spills are freed and it can no
   * longer be restored (use_begin and ensure_resident then fail). A resident
   * module only drops its retained spill buffers. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_drop (WickWeightStore *store, const char *module, WickError *error);

  /* Frees the pinned spill buffers that resident CUDA modules keep for their
   * next RAM-tier eviction (pinning is slow; docs/weights.md). */
  WICK_AVAILABLE_IN_1_0
  void wick_weight_store_trim (WickWeightStore *store);

  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_find_stats (WickWeightStore *store, const char *module,
                                     WickWeightStats *out);
  /* Sums over every module; out->module is "total", out->resident whether all are. */
  WICK_AVAILABLE_IN_1_0
  void wick_weight_store_get_total_stats (WickWeightStore *store, WickWeightStats *out);

  /* False for an unknown, evicted or dropped module. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_is_resident (WickWeightStore *store, const char *module);
  /* Restores the module on demand if it is evicted. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_ensure_resident (WickWeightStore *store, const char *module,
                                          WickError *error);
  /* True when the module's last restore refused bytes that failed
   * verification (docs/weights.md): the module stays evicted and @error gets
   * the sentence naming the parameter, file and key. A workload that waits
   * for someone else to restore a module polls this to stop waiting.
   * ensure_resident and use_begin fail with the same error. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_get_refusal (WickWeightStore *store, const char *module,
                                      WickError *error);
  /* ensure_resident, then holds the module resident until use_end: an
   * eviction asked for meanwhile waits for use_end. Calls nest. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_use_begin (WickWeightStore *store, const char *module, WickError *error);
  WICK_AVAILABLE_IN_1_0
  void wick_weight_store_use_end (WickWeightStore *store, const char *module);

  typedef enum
  {
    WICK_PLACE_RESIDENT,
    WICK_PLACE_DISK,
    WICK_PLACE_RAM,
    WICK_PLACE_DROPPED,
  } WickWeightPlace;

  /* Where one parameter is and why: the checkpoint key and shard of a disk-tier
   * parameter, or the reason the last eviction put it on the RAM tier. */
  typedef struct
  {
    char name[256];
    WickWeightPlace place;
    WickTier last_tier; /* WICK_TIER_DISK or WICK_TIER_RAM after an eviction; AUTO before */
    uint64_t bytes;
    bool tied;        /* shares its storage with an earlier parameter of the module */
    char key[256];    /* disk tier: the checkpoint key */
    char shard[1024]; /* disk tier: the shard file */
    char reason[512]; /* RAM tier: why not the disk tier */
    uint64_t _wick_reserved[8]; /* room to grow: written as zero by libwick */
  } WickWeightParamInfo;

  WICK_AVAILABLE_IN_1_0
  bool wick_weight_store_get_param_info (WickWeightStore *store, const char *module, size_t index,
                                     WickWeightParamInfo *out);

  /* ---- Memory the store can release and restore in place --------------- */

  /* Page-aligned anonymous memory, zero-filled, rounded up to whole pages. */
  WICK_AVAILABLE_IN_1_0
  void *wick_weight_alloc_host (size_t bytes, WickError *error);
  /* False if ptr is not from wick_weight_alloc_host or a module still holds it. */
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_free_host (void *ptr, WickError *error);
  /* CUDA device memory on the current device through the driver's virtual
   * memory management, rounded up to the allocation granularity. NULL with a
   * reason where CUDA is not built in or there is no device. */
  WICK_AVAILABLE_IN_1_0
  void *wick_weight_alloc_device (size_t bytes, WickError *error);
  WICK_AVAILABLE_IN_1_0
  bool wick_weight_free_device (void *ptr, WickError *error);

  /* ---- Safetensors ----------------------------------------------------- */

  /* Writes tensors (host or CUDA memory) to a safetensors file: the header is
   * padded with spaces to 8 bytes, data follows in the given order. metadata
   * (optional) becomes __metadata__. Written to PATH.tmp, then renamed. */
  WICK_AVAILABLE_IN_1_0
  bool wick_safetensors_write (const char *path, const WickWeightParam *tensors, size_t n_tensors,
                               WickWeightMemory memory, const WickTag *metadata, size_t n_metadata,
                               WickError *error);

WICK_END_DECLS
