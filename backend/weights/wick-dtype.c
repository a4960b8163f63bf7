/* wick-dtype.c — safetensors dtypes: names and sizes (from common/wick-dtype-table.h)
 * and the float conversions the weight store needs (F64, F32, F16, BF16; rounding to nearest even). */
#include "wick-safetensors-private.h"

#include "common/wick-dtype-table.h"

#include <math.h>
#include <string.h>

/* The names and sizes are the rows of libwick's one dtype table. */

const char *
wick_weight_dtype_name (WickWeightDtype dtype)
{
  const WickDtypeRow *row = wick_dtype_row_for_weight ((int)dtype);
  return row != NULL ? row->safetensors : NULL;
}

size_t
wick_weight_dtype_size (WickWeightDtype dtype)
{
  const WickDtypeRow *row = wick_dtype_row_for_weight ((int)dtype);
  return row != NULL ? row->size : 0;
}

bool
wick_weight_dtype_from_name (const char *name, WickWeightDtype *out)
{
  const WickDtypeRow *row = wick_dtype_row_for_safetensors (name);
  if (row == NULL || row->weight < 0)
    return false;
  *out = (WickWeightDtype)row->weight;
  return true;
}

static bool
is_float (WickWeightDtype dtype)
{
  return dtype == WICK_DTYPE_F64 || dtype == WICK_DTYPE_F32 || dtype == WICK_DTYPE_F16
         || dtype == WICK_DTYPE_BF16;
}

bool
wick_weight_dtype_convertible (WickWeightDtype from, WickWeightDtype to)
{
  return from == to || (is_float (from) && is_float (to));
}

static uint32_t
float_bits (float value)
{
  uint32_t bits;
  memcpy (&bits, &value, sizeof bits);
  return bits;
}

static float
bits_float (uint32_t bits)
{
  float value;
  memcpy (&value, &bits, sizeof value);
  return value;
}

static float
half_to_float (uint16_t h)
{
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0x1F)
    return bits_float (sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0)
    {
      float value = ldexpf ((float)mantissa, -24);
      return sign ? -value : value;
    }
  return bits_float (sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static uint16_t
float_to_half (float value)
{
  uint32_t bits = float_bits (value);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xFF;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF)
    return (uint16_t)(sign | 0x7C00 | (mantissa ? 0x200 | (mantissa >> 13) : 0));
  int e = (int)exponent - 127 + 15;
  if (e >= 0x1F)
    return (uint16_t)(sign | 0x7C00);
  if (e <= 0)
    {
      /* Subnormal half (or zero): shift the full mantissa into place, round to nearest even. */
      if (e < -10)
        return sign;
      uint32_t full = mantissa | 0x800000;
      uint32_t shift = (uint32_t)(14 - e);
      uint32_t half = full >> shift;
      uint32_t rest = full & ((1u << shift) - 1);
      uint32_t midpoint = 1u << (shift - 1);
      if (rest > midpoint || (rest == midpoint && (half & 1)))
        half++;
      return (uint16_t)(sign | half);
    }
  uint32_t half = ((uint32_t)e << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    half++; /* may carry into the exponent, up to infinity: correct */
  return (uint16_t)(sign | half);
}

static float
bf16_to_float (uint16_t b)
{
  return bits_float ((uint32_t)b << 16);
}

static uint16_t
float_to_bf16 (float value)
{
  uint32_t bits = float_bits (value);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFF))
    return (uint16_t)((bits >> 16) | 0x40); /* quiet NaN */
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return (uint16_t)((bits + rounding) >> 16);
}

static double
load_element (WickWeightDtype dtype, const unsigned char *p)
{
  uint16_t h;
  float f;
  double d;
  switch (dtype)
    {
      case WICK_DTYPE_F16:
        memcpy (&h, p, 2);
        return half_to_float (h);
      case WICK_DTYPE_BF16:
        memcpy (&h, p, 2);
        return bf16_to_float (h);
      case WICK_DTYPE_F32:
        memcpy (&f, p, 4);
        return f;
      default:
        memcpy (&d, p, 8);
        return d;
    }
}

static void
store_element (WickWeightDtype dtype, double value, unsigned char *p)
{
  uint16_t h;
  float f;
  switch (dtype)
    {
      case WICK_DTYPE_F16:
        /* via float: F64 → F16 double rounding differs from torch only in
         * ties that F64 checkpoints of F16 weights do not produce */
        h = float_to_half ((float)value);
        memcpy (p, &h, 2);
        break;
      case WICK_DTYPE_BF16:
        h = float_to_bf16 ((float)value);
        memcpy (p, &h, 2);
        break;
      case WICK_DTYPE_F32:
        f = (float)value;
        memcpy (p, &f, 4);
        break;
      default:
        memcpy (p, &value, 8);
        break;
    }
}

void
wick_weight_dtype_convert (WickWeightDtype from, const void *source, WickWeightDtype to,
                           void *destination, size_t count)
{
  size_t from_size = wick_weight_dtype_size (from);
  size_t to_size = wick_weight_dtype_size (to);
  if (from == to)
    {
      memmove (destination, source, count * from_size);
      return;
    }
  const unsigned char *in = source;
  unsigned char *out = destination;
  for (size_t i = 0; i < count; i++)
    store_element (to, load_element (from, in + i * from_size), out + i * to_size);
}
