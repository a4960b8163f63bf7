/* wick-dtype-table.h — libwick's one table of element types (private;
 * compiled into libwick and the model from backend/common, never copied).
 *
 * A row is one element type with its spellings in each vocabulary that names
 * it: the trace format's (candle-graph's table: u8 i8 bool f8 u16 i16 f16
 * bf16 u32 i32 f32 u64 i64 f64; read by the model, written by the recorder),
 * safetensors' (BOOL U8 I8 F8_E4M3 F8_E5M2 I16 U16 F16 BF16 I32 U32 F32 I64
 * U64 F64; the weight store's WickWeightDtype) and the stage windows'
 * (WickStageDType, written in the trace's spelling), with its size in bytes.
 */
#pragma once

#include <stddef.h>

typedef struct
{
  const char *trace;       /* candle-graph's name; NULL where the trace format has none */
  const char *safetensors; /* NULL where safetensors has none */
  int weight;              /* its WickWeightDtype, or -1 */
  int stage;               /* its WickStageDType, or -1 */
  unsigned size;           /* bytes per element */
} WickDtypeRow;

/* Bytes per element of the trace dtype named by the @length bytes at @name,
 * matched without regard to ASCII case and without trimming (each caller
 * trims by its own rules); 0 for a name not in the table. */
size_t wick_dtype_table_size (const char *name, size_t length);

/* The row of a WickWeightDtype or a WickStageDType value, or of a safetensors
 * name (exact, case-sensitive, as the format is); NULL for none. */
const WickDtypeRow *wick_dtype_row_for_weight (int dtype);
const WickDtypeRow *wick_dtype_row_for_stage (int dtype);
const WickDtypeRow *wick_dtype_row_for_safetensors (const char *name);
