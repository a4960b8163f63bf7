/* wick-stage-gates-private.h — what only the tests call of wick-stage-gates.h (libwick
 * includes wick-stage-gates.h alone). It declares no types: include it after
 * wick-stage-gates.h. */
#pragma once

#ifdef __cplusplus
extern "C"
{
#endif

  /* The k-th smallest value (0-based) of v[0..n), NaN above +inf. Reorders v. */
  double wick_gate_order_statistic (double *v, size_t n, size_t k);

  /* One element of a float buffer as a double (f32, f16, bf16, f64). */
  double wick_gate_element_to_double (WickStageDType dtype, const void *data, size_t index);

  /* Parity of out against ref, n elements of dtype, on the CPU with float64
   * accumulation: the reference implementation of the device kernels. */
  bool wick_gate_parity_host (WickStageDType dtype, const void *out, const void *ref, size_t n,
                              WickParity *result);

#ifdef __cplusplus
}
#endif
