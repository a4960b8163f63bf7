/* wick-json-private.h — what only the tests call of wick-json.h (libwick
 * includes wick-json.h alone). It declares no types: include it after
 * wick-json.h. */
#pragma once

#ifdef __cplusplus
extern "C"
{
#endif

/* Decimal digits of value into buffer (>= 20 bytes), no NUL; returns the length. */
size_t wick_format_u64 (uint64_t value, char *buffer);

#ifdef __cplusplus
}
#endif
