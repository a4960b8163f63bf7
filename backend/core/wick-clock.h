/* wick-clock.h — the session clock: a TSC calibrated against CLOCK_MONOTONIC
 * (as Tracy does) where the CPU's TSC is invariant or the kernel itself uses
 * it as clocksource, CLOCK_MONOTONIC otherwise (or with WICK_CLOCK=monotonic).
 *
 * wick_clock_now_ns () returns nanoseconds on the CLOCK_MONOTONIC scale
 * (offset and rate matched at calibration), so values from two processes are
 * comparable and a fallback does not change their meaning. Calibration runs
 * once per process (about 20 ms) in wick_clock_init.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct
{
  bool use_tsc;
  uint64_t tsc_base;
  uint64_t mono_base;
  uint64_t mult; /* ns per tick << 32 */
} WickClock;

extern WickClock wick_clock;

void wick_clock_init (void);
uint64_t wick_clock_monotonic_ns (void);

#if defined(__x86_64__)
/* The TSC path alone; only when wick_clock.use_tsc. */
static inline uint64_t
wick_clock_tsc_ns (void)
{
  uint64_t ticks = __builtin_ia32_rdtsc ();
  return wick_clock.mono_base
         + (uint64_t)(((unsigned __int128)(ticks - wick_clock.tsc_base) * wick_clock.mult) >> 32);
}
#define WICK_CLOCK_HAS_TSC 1
#else
#define WICK_CLOCK_HAS_TSC 0
#endif

static inline uint64_t
wick_clock_now_ns (void)
{
#if defined(__x86_64__)
  if (__builtin_expect (wick_clock.use_tsc, 1))
    {
      uint64_t ticks = __builtin_ia32_rdtsc ();
      return wick_clock.mono_base
             + (uint64_t)(((unsigned __int128)(ticks - wick_clock.tsc_base) * wick_clock.mult)
                          >> 32);
    }
#endif
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
