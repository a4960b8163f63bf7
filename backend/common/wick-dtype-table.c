/* wick-dtype-table.c — the element types and their spellings (wick-dtype-table.h). */
#include "config.h"

#include "common/wick-dtype-table.h"

#include <string.h>
#include <strings.h>

#include "wick/wick.h"

#define W(x) WICK_DTYPE_##x
#define S(x) WICK_STAGE_DTYPE_##x

/* The trace format's names first, in candle-graph's order. */
static const WickDtypeRow rows[] = {
  { "u8", "U8", W (U8), S (U8), 1 },
  { "i8", "I8", W (I8), -1, 1 },
  { "bool", "BOOL", W (BOOL), -1, 1 },
  { "f8", NULL, -1, -1, 1 },
  { "u16", "U16", W (U16), -1, 2 },
  { "i16", "I16", W (I16), -1, 2 },
  { "f16", "F16", W (F16), S (F16), 2 },
  { "bf16", "BF16", W (BF16), S (BF16), 2 },
  { "u32", "U32", W (U32), -1, 4 },
  { "i32", "I32", W (I32), S (I32), 4 },
  { "f32", "F32", W (F32), S (F32), 4 },
  { "u64", "U64", W (U64), -1, 8 },
  { "i64", "I64", W (I64), S (I64), 8 },
  { "f64", "F64", W (F64), S (F64), 8 },
  { NULL, "F8_E4M3", W (F8_E4M3), -1, 1 },
  { NULL, "F8_E5M2", W (F8_E5M2), -1, 1 },
};
#define N_ROWS (sizeof rows / sizeof rows[0])

_Static_assert (N_ROWS == WICK_N_DTYPES + 1, "every safetensors dtype has a row, and f8");

size_t
wick_dtype_table_size (const char *name, size_t length)
{
  if (name == NULL || length == 0)
    return 0;
  /* every tensor record asks (its dense bytes): the first letter before the
   * rest; strncasecmp equal over length means the row has that many letters,
   * so its terminator is in bounds */
  int first = name[0] | 0x20;
  for (size_t i = 0; i < N_ROWS; i++)
    if (rows[i].trace != NULL && (rows[i].trace[0] | 0x20) == first
        && strncasecmp (rows[i].trace, name, length) == 0 && rows[i].trace[length] == '\0')
      return rows[i].size;
  return 0;
}

const WickDtypeRow *
wick_dtype_row_for_weight (int dtype)
{
  for (size_t i = 0; i < N_ROWS; i++)
    if (dtype >= 0 && rows[i].weight == dtype)
      return &rows[i];
  return NULL;
}

const WickDtypeRow *
wick_dtype_row_for_stage (int dtype)
{
  for (size_t i = 0; i < N_ROWS; i++)
    if (dtype >= 0 && rows[i].stage == dtype)
      return &rows[i];
  return NULL;
}

const WickDtypeRow *
wick_dtype_row_for_safetensors (const char *name)
{
  for (size_t i = 0; name != NULL && i < N_ROWS; i++)
    if (rows[i].safetensors != NULL && strcmp (rows[i].safetensors, name) == 0)
      return &rows[i];
  return NULL;
}
