/* wick-stage-gates.c — cosine, order statistics, median of ratios and the
 * verdict sentences of stage certification. See wick-stage-gates.h. */
#include "wick-stage-gates.h"
#include "wick-stage-gates-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double
wick_gate_cosine (double dot, double out_squared, double ref_squared)
{
  if (out_squared == 0.0 && ref_squared == 0.0)
    return 1.0;
  if (out_squared == 0.0 || ref_squared == 0.0)
    return 0.0;
  return dot / sqrt (out_squared * ref_squared);
}

/* Total order with NaN above everything, so that a NaN difference counts as
 * the worst one rather than vanishing from comparisons. */
static bool
gate_less (double a, double b)
{
  if (isnan (a))
    return false;
  if (isnan (b))
    return true;
  return a < b;
}

static void
gate_swap (double *v, size_t i, size_t j)
{
  double t = v[i];
  v[i] = v[j];
  v[j] = t;
}

static double
gate_median_of_three (double a, double b, double c)
{
  if (gate_less (b, a))
    {
      double t = a;
      a = b;
      b = t;
    }
  if (gate_less (c, b))
    b = gate_less (c, a) ? a : c;
  return b;
}

/* Quickselect with a three-way partition, so that the many equal values of a
 * parity check (an exact replay gives n zeros) take one linear pass. */
double
wick_gate_order_statistic (double *v, size_t n, size_t k)
{
  if (n == 0 || k >= n)
    return NAN;
  size_t lo = 0, hi = n - 1;
  for (;;)
    {
      double pivot = gate_median_of_three (v[lo], v[lo + (hi - lo) / 2], v[hi]);
      /* [lo, lt) < pivot, [lt, i) == pivot, (gt, hi] > pivot */
      size_t lt = lo, i = lo, gt = hi + 1;
      while (i < gt)
        {
          if (gate_less (v[i], pivot))
            gate_swap (v, lt++, i++);
          else if (gate_less (pivot, v[i]))
            gate_swap (v, i, --gt);
          else
            i++;
        }
      if (k < lt)
        hi = lt - 1;
      else if (k >= gt)
        lo = gt;
      else
        return pivot;
    }
}

double
wick_gate_p99 (double *v, size_t n)
{
  if (n == 0)
    return NAN;
  /* nearest rank: k = ceil (0.99 n), in integers to stay exact */
  size_t rank = (99 * n + 99) / 100;
  return wick_gate_order_statistic (v, n, rank - 1);
}

double
wick_gate_median (double *v, size_t n)
{
  if (n == 0)
    return NAN;
  double upper = wick_gate_order_statistic (v, n, n / 2);
  if (n % 2 == 1)
    return upper;
  /* after the selection every value below index n/2 is <= upper */
  double lower = v[0];
  for (size_t i = 1; i < n / 2; i++)
    if (gate_less (lower, v[i]))
      lower = v[i];
  return (lower + upper) / 2.0;
}

void
wick_gate_speedup_summary (const double *eager_ms, const double *replay_ms, size_t n,
                           double *median, double *min, double *max, double *eager_median_ms,
                           double *replay_median_ms)
{
  *median = *min = *max = *eager_median_ms = *replay_median_ms = NAN;
  if (n == 0)
    return;
  double *ratios = malloc (3 * n * sizeof (double));
  if (ratios == NULL)
    return;
  double *eager = ratios + n, *replay = ratios + 2 * n;
  for (size_t i = 0; i < n; i++)
    {
      ratios[i] = replay_ms[i] > 0.0 ? eager_ms[i] / replay_ms[i] : NAN;
      eager[i] = eager_ms[i];
      replay[i] = replay_ms[i];
    }
  *min = *max = ratios[0];
  for (size_t i = 1; i < n; i++)
    {
      if (gate_less (ratios[i], *min))
        *min = ratios[i];
      if (gate_less (*max, ratios[i]))
        *max = ratios[i];
    }
  *median = wick_gate_median (ratios, n);
  *eager_median_ms = wick_gate_median (eager, n);
  *replay_median_ms = wick_gate_median (replay, n);
  free (ratios);
}

static double
gate_half_to_double (uint16_t h)
{
  uint32_t sign = (uint32_t)(h >> 15) & 1u;
  int exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  double value;
  if (exponent == 0)
    value = ldexp ((double)mantissa, -24);
  else if (exponent == 31)
    value = mantissa == 0 ? INFINITY : NAN;
  else
    value = ldexp ((double)(mantissa | 0x400u), exponent - 25);
  return sign ? -value : value;
}

static double
gate_bf16_to_double (uint16_t b)
{
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy (&f, &bits, sizeof f);
  return (double)f;
}

double
wick_gate_element_to_double (WickStageDType dtype, const void *data, size_t index)
{
  switch (dtype)
    {
      case WICK_STAGE_DTYPE_F32:
        return (double)((const float *)data)[index];
      case WICK_STAGE_DTYPE_F64:
        return ((const double *)data)[index];
      case WICK_STAGE_DTYPE_F16:
        return gate_half_to_double (((const uint16_t *)data)[index]);
      case WICK_STAGE_DTYPE_BF16:
        return gate_bf16_to_double (((const uint16_t *)data)[index]);
      default:
        return NAN;
    }
}

bool
wick_gate_parity_host (WickStageDType dtype, const void *out, const void *ref, size_t n,
                       WickParity *result)
{
  double dot = 0.0, out2 = 0.0, ref2 = 0.0;
  double *diffs = malloc ((n > 0 ? n : 1) * sizeof (double));
  if (diffs == NULL)
    return false;
  result->max_abs = 0.0;
  for (size_t i = 0; i < n; i++)
    {
      double a = wick_gate_element_to_double (dtype, out, i);
      double b = wick_gate_element_to_double (dtype, ref, i);
      dot += a * b;
      out2 += a * a;
      ref2 += b * b;
      double d = fabs (a - b);
      if (isnan (d))
        d = INFINITY;
      diffs[i] = d;
      if (d > result->max_abs)
        result->max_abs = d;
    }
  result->cosine = wick_gate_cosine (dot, out2, ref2);
  result->p99_abs = n > 0 ? wick_gate_p99 (diffs, n) : 0.0;
  free (diffs);
  return true;
}

/* Writes `value` with the fewest decimals (at least `min_decimals`, at most
 * 9) that keep it on its side of `threshold`, so "0.9989 < 0.999" never reads
 * "0.9990 < 0.999". */
static void
wick_gate_format_figure (char *buffer, size_t size, double value, double threshold,
                         int min_decimals)
{
  if (!isfinite (value))
    {
      snprintf (buffer, size, "%s", isnan (value) ? "nan" : value > 0 ? "inf" : "-inf");
      return;
    }
  for (int decimals = min_decimals; decimals <= 9; decimals++)
    {
      snprintf (buffer, size, "%.*f", decimals, value);
      double shown = strtod (buffer, NULL);
      if ((value < threshold) == (shown < threshold))
        return;
    }
}

/* Appends "; " and the sentence to reason. */
static void
gate_append (char *reason, size_t size, const char *sentence)
{
  size_t used = strlen (reason);
  snprintf (reason + used, size - used, "%s%s", used > 0 ? "; " : "", sentence);
}

static bool
gate_parity (const WickCertification *cert, char *sentence, size_t size)
{
  char cos_text[32];
  wick_gate_format_figure (cos_text, sizeof cos_text, cert->parity_cos, cert->gate_cos, 4);
  if (!cert->parity_checked)
    {
      snprintf (sentence, size, "parity gate skipped (gate_cos 0), cos %s", cos_text);
      return true;
    }
  if (!(cert->parity_cos >= cert->gate_cos))
    {
      snprintf (sentence, size,
                "parity cos %s < %g against the eager reference: every input that varies "
                "between calls must be a declared window (in-graph RNG never matches eager)",
                cos_text, cert->gate_cos);
      return false;
    }
  snprintf (sentence, size, "parity cos %s >= %g (max abs %.3g, p99 abs %.3g)", cos_text,
            cert->gate_cos, cert->max_abs, cert->p99_abs);
  return true;
}

static bool
gate_speedup (const WickCertification *cert, char *sentence, size_t size)
{
  if (!cert->speedup_checked)
    {
      snprintf (sentence, size, "speedup gate skipped (min_speedup 0)");
      return true;
    }
  char speedup_text[32];
  wick_gate_format_figure (speedup_text, sizeof speedup_text, cert->speedup_median,
                           cert->min_speedup, 2);
  if (!(cert->speedup_median >= cert->min_speedup))
    {
      snprintf (sentence, size, "not a net win: %s\xc3\x97 against eager, needs %g\xc3\x97",
                speedup_text, cert->min_speedup);
      return false;
    }
  snprintf (sentence, size,
            "%s\xc3\x97 against eager >= %g\xc3\x97 (%.4g ms eager, %.4g ms replay)", speedup_text,
            cert->min_speedup, cert->eager_ms, cert->replay_ms);
  return true;
}

void
wick_gate_judge (WickCertification *cert, const char *failure)
{
  cert->reason[0] = '\0';
  if (failure != NULL)
    {
      cert->accepted = false;
      snprintf (cert->verdict, sizeof cert->verdict, "refused");
      snprintf (cert->reason, sizeof cert->reason, "%s", failure);
      return;
    }
  char parity[256], speedup[256];
  bool parity_ok = gate_parity (cert, parity, sizeof parity);
  bool speedup_ok = gate_speedup (cert, speedup, sizeof speedup);
  cert->accepted = parity_ok && speedup_ok;
  snprintf (cert->verdict, sizeof cert->verdict, "%s", cert->accepted ? "accepted" : "refused");
  if (cert->accepted)
    {
      gate_append (cert->reason, sizeof cert->reason, parity);
      gate_append (cert->reason, sizeof cert->reason, speedup);
      return;
    }
  if (!parity_ok)
    gate_append (cert->reason, sizeof cert->reason, parity);
  if (!speedup_ok)
    gate_append (cert->reason, sizeof cert->reason, speedup);
}
