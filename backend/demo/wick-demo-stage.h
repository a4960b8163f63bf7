/* wick-demo-stage.h — the stages wick-demo registers (owned by the stages
 * area, called by backend/demo/).
 *
 * "denoise": a denoise loop of 33 small dependent kernels (16 steps of a
 * 64×64 by 64×64 matmul and an elementwise update) over the windows "noise"
 * (f32 [64, 64]) and "cond" (f32 [64]), output f32 [64, 64], with a
 * reference callback. Graph-safe: capture is accepted on a GPU.
 *
 * "denoise-rng": the same loop plus in-graph noise keyed by a host counter
 * that advances on every call. A graph freezes the counter's value at capture,
 * so the replay never matches eager: the parity gate refuses it.
 *
 * Without a GPU both stages are registered on host memory and run eagerly on
 * the CPU, so that `list` shows them and capture refuses naming CUDA.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "wick/wick.h"

#ifdef __cplusplus
extern "C"
{
#endif

#define WICK_DEMO_STAGE_NAME "denoise"
#define WICK_DEMO_UNSAFE_STAGE_NAME "denoise-rng"

  bool wick_demo_stage_register (WickSession *session, WickError *error);

  /* One workload step: writes fresh noise (drawn from `step`) into the "noise"
   * window of both stages and runs each once on the default stream. */
  bool wick_demo_stage_step (WickSession *session, uint64_t step, WickError *error);

#ifdef __cplusplus
}
#endif
