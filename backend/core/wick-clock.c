/* wick-clock.c — calibration of the session clock (see wick-clock.h). */
#include "wick-clock.h"
#include "wick-clock-private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

WickClock wick_clock;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

uint64_t
wick_clock_monotonic_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static bool
cpu_has_invariant_tsc (void)
{
  unsigned int eax, ebx, ecx, edx;
  if (__get_cpuid (0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u)
    return false;
  __get_cpuid (0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;
}

static bool
kernel_uses_tsc (void)
{
  FILE *file = fopen ("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  char name[32] = "";
  if (file == NULL)
    return false;
  if (fgets (name, sizeof name, file) == NULL)
    name[0] = '\0';
  fclose (file);
  return strncmp (name, "tsc", 3) == 0;
}

/* A (tsc, monotonic) pair read as close together as this machine allows:
 * the best of a few tries, by the ticks spent around the clock_gettime. */
static void
sample_pair (uint64_t *tsc, uint64_t *mono)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++)
    {
      uint64_t before = __builtin_ia32_rdtsc ();
      uint64_t ns = wick_clock_monotonic_ns ();
      uint64_t after = __builtin_ia32_rdtsc ();
      if (after - before < best)
        {
          best = after - before;
          *tsc = before + (after - before) / 2;
          *mono = ns;
        }
    }
}

static void
calibrate_tsc (void)
{
  uint64_t tsc0 = 0, mono0 = 0, tsc1 = 0, mono1 = 0;
  sample_pair (&tsc0, &mono0);
  struct timespec pause = { 0, 20 * 1000 * 1000 };
  nanosleep (&pause, NULL);
  sample_pair (&tsc1, &mono1);
  if (tsc1 <= tsc0 || mono1 <= mono0)
    return;
  wick_clock.mult = (uint64_t)(((unsigned __int128)(mono1 - mono0) << 32) / (tsc1 - tsc0));
  wick_clock.tsc_base = tsc1;
  wick_clock.mono_base = mono1;
  wick_clock.use_tsc = wick_clock.mult != 0;
}
#endif

static void
clock_init_once (void)
{
  const char *forced = getenv ("WICK_CLOCK");
  wick_clock.use_tsc = false;
#if defined(__x86_64__)
  if (forced == NULL || strcmp (forced, "monotonic") != 0)
    if (cpu_has_invariant_tsc () || kernel_uses_tsc ())
      calibrate_tsc ();
#else
  (void)forced;
#endif
}

void
wick_clock_init (void)
{
  pthread_once (&clock_once, clock_init_once);
}

const char *
wick_clock_describe (void)
{
  return wick_clock.use_tsc ? "tsc" : "monotonic";
}
