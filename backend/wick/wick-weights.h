/* wick-weights.h — the weight store: evict a registered module's parameters to
 * a verified safetensors checkpoint (disk tier) or host RAM (RAM tier), and
 * restore them at the same address. Owned by the weights area.
 *
 * The functions below marked [control] are what the control socket calls;
 * their names and result structs are a contract with backend/live/.
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WickWeightStore WickWeightStore;

typedef enum { WICK_TIER_AUTO, WICK_TIER_DISK, WICK_TIER_RAM } WickTier;

typedef struct
{
  char module[128];
  uint64_t parameters;      /* parameters in the module */
  uint64_t bytes;           /* live bytes of the module when resident */
  uint64_t disk;            /* parameters now on the disk tier */
  uint64_t ram;             /* parameters now on the RAM tier */
  uint64_t freed_bytes;     /* by the last eviction */
  uint64_t restored_bytes;  /* by the last restore */
  uint64_t restored;        /* parameters restored by the last restore */
  uint64_t restored_count;  /* restores so far */
  double evict_seconds;     /* duration of the last eviction */
  double restore_seconds;   /* duration of the last restore */
  bool resident;
} WickWeightStats;

/* [control] The weight store registered with a session, or NULL. */
WickWeightStore *wick_session_get_weight_store (WickSession *session);

/* [control] */
size_t wick_weight_store_n_modules (WickWeightStore *store);
bool wick_weight_store_module_stats (WickWeightStore *store, size_t index, WickWeightStats *out);
bool wick_weight_store_evict (WickWeightStore *store, const char *module, WickTier tier,
                              WickWeightStats *out, WickError *error);
bool wick_weight_store_restore (WickWeightStore *store, const char *module,
                                WickWeightStats *out, WickError *error);
bool wick_weight_store_restore_all (WickWeightStore *store, uint64_t *restored_modules,
                                    WickError *error);

#ifdef __cplusplus
}
#endif
