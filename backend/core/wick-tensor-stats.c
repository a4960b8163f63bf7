/* wick-tensor-stats.c — tensor statistics from f32 data, dtype sizes and dense
 * bytes (spec §3.4, §3.6 and candle-graph's producer note).
 */
#include "wick-session-internal.h"
#include "common/wick-dtype-table.h"

#include <ctype.h>
#include <math.h>
#include <strings.h>

void
wick_tensor_stats_compute_f32 (const float *data, size_t n, WickTensorStatsRecord *stats)
{
  double sum = 0.0, sum_squares = 0.0, abs_max = 0.0;
  uint64_t non_finite = 0;
  for (size_t i = 0; i < n; i++)
    {
      double value = data[i];
      if (!isfinite (value))
        {
          non_finite++;
          continue;
        }
      sum += value;
      sum_squares += value * value;
      if (fabs (value) > abs_max)
        abs_max = fabs (value);
    }
  stats->elements = n;
  stats->non_finite = non_finite;
  if (n == 0 || non_finite > 0)
    {
      stats->rms = 0.0;
      stats->abs_max = 0.0;
      stats->mean = 0.0;
      return;
    }
  stats->rms = sqrt (sum_squares / (double)n);
  stats->abs_max = abs_max;
  stats->mean = sum / (double)n;
}

size_t
wick_dtype_size (const char *dtype)
{
  if (dtype == NULL)
    return 0;
  while (isspace ((unsigned char)*dtype))
    dtype++;
  size_t length = strlen (dtype);
  while (length > 0 && isspace ((unsigned char)dtype[length - 1]))
    length--;
  return wick_dtype_table_size (dtype, length);
}

bool
wick_dense_bytes (const uint64_t *shape, size_t rank, const char *dtype, uint64_t *out)
{
  uint64_t bytes = wick_dtype_size (dtype);
  if (bytes == 0)
    return false;
  for (size_t i = 0; i < rank; i++)
    if (__builtin_mul_overflow (bytes, shape[i], &bytes))
      return false;
  *out = bytes;
  return true;
}
