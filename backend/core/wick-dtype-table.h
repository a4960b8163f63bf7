/* wick-dtype-table.h — the element sizes of the trace format's dtype names
 * (candle-graph's table: u8 i8 bool f8 u16 i16 f16 bf16 u32 i32 f32 u64 i64
 * f64), shared by libwick's recorder (wick_dtype_size) and the model's reader
 * (compiled into both from backend/core, never copied). Private.
 *
 * The safetensors names (BF16, F8_E4M3, ...) are another format's vocabulary
 * and stay in weights/wick-dtype.c; the stage kernels' WickStageDType is an
 * enum of the public API.
 */
#pragma once

#include <stddef.h>

/* Bytes per element of the dtype named by the @length bytes at @name, matched
 * without regard to ASCII case and without trimming (each caller trims by its
 * own rules); 0 for a name not in the table. */
size_t wick_dtype_table_size (const char *name, size_t length);
