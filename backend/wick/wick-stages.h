/* wick-stages.h — stage capture: record a registered hot stage into a CUDA
 * graph, certify it against its eager path on parity and net speedup, or
 * refuse it with a reason. Owned by the stages area.
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

typedef struct WickStage WickStage;

typedef enum { WICK_STAGE_EAGER, WICK_STAGE_CAPTURED, WICK_STAGE_REFUSED } WickStageState;

typedef struct
{
  uint32_t warmup;         /* default 3 */
  double gate_cos;         /* default 0.999; 0 skips the parity gate */
  double min_speedup;      /* default 1.02; 0 skips the speedup gate */
  uint32_t timing_rounds;  /* default 7 */
  uint32_t timing_iterations; /* per round, default 20 */
} WickCaptureOptions;

void wick_capture_options_init (WickCaptureOptions *options);

typedef struct
{
  char stage[128];
  bool accepted;
  char verdict[16];        /* "accepted" or "refused" */
  char reason[512];
  double gate_cos, min_speedup;
  bool parity_checked, speedup_checked;
  double parity_cos, max_abs, p99_abs;
  double eager_ms, replay_ms;
  double speedup_median, speedup_min, speedup_max;
  uint64_t kernel_nodes;
  uint32_t warmup;
} WickCertification;

/* [control] */
size_t wick_session_n_stages (WickSession *session);
WickStage *wick_session_get_stage (WickSession *session, size_t index);
WickStage *wick_session_find_stage (WickSession *session, const char *name);
const char *wick_stage_name (WickStage *stage);
WickStageState wick_stage_state (WickStage *stage);
/* Returns false only when the request itself is malformed; a refusal is a
 * successful call with out->accepted false. */
bool wick_stage_capture (WickStage *stage, const WickCaptureOptions *options,
                         WickCertification *out, WickError *error);
bool wick_stage_release (WickStage *stage, WickError *error);

/* Whether this process can capture at all, and why not. */
bool wick_cuda_available (WickError *why_not);

#ifdef __cplusplus
}
#endif
