/* wick-stage-gates.h — the arithmetic of stage certification, kept apart from
 * CUDA so that CI tests it on the CPU with known vectors.
 *
 * - Cosine similarity from float64 sums: dot / sqrt(|out|² |ref|²); two zero
 *   vectors are identical (1), one zero vector against a non-zero one is 0.
 * - p99 abs is an order statistic, nearest-rank: the k-th smallest |diff|
 *   with k = ceil(0.99 n). NaN sorts above +inf, so it can never hide.
 * - Speedup is the median of per-round ratios eager_ms / replay_ms (the mean
 *   of the two middle ratios for an even count), reported with min and max.
 * - A gate passes only when `figure >= threshold`: NaN fails every gate.
 *
 * These functions are also the CPU reference that the CUDA suite checks the
 * device's parity kernels against.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef WICK_COMPILATION
#define WICK_COMPILATION
#endif
#include "wick/wick.h"

#ifdef __cplusplus
extern "C"
{
#endif

  typedef struct
  {
    double cosine;
    double max_abs;
    double p99_abs;
  } WickParity;

  double wick_gate_cosine (double dot, double out_squared, double ref_squared);

  /* Nearest-rank p99 of v[0..n) (n >= 1). Reorders v. NaN for n == 0. */
  double wick_gate_p99 (double *v, size_t n);

  /* Median of v[0..n) (n >= 1). Reorders v. NaN for n == 0. */
  double wick_gate_median (double *v, size_t n);

  /* Per-round ratios eager/replay of n rounds: their median, min and max, and
   * the median per-iteration eager and replay times. Reorders nothing. */
  void wick_gate_speedup_summary (const double *eager_ms, const double *replay_ms, size_t n,
                                  double *median, double *min, double *max, double *eager_median_ms,
                                  double *replay_median_ms);

  /* Fills cert->accepted, verdict and reason from the figures, thresholds and
   * parity_checked / speedup_checked already in cert. `failure`, when not
   * NULL, is why the capture itself failed: the verdict is then refused and
   * the reason is that sentence. */
  void wick_gate_judge (WickCertification *cert, const char *failure);

#ifdef __cplusplus
}
#endif
