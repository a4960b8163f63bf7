/* wick-clock-private.h — what only the tests call of wick-clock.h (libwick
 * includes wick-clock.h alone). It declares no types: include it after
 * wick-clock.h. */
#pragma once

#ifdef __cplusplus
extern "C"
{
#endif

const char *wick_clock_describe (void);

#ifdef __cplusplus
}
#endif
