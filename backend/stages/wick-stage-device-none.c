/* wick-stage-device-none.c — wick-stage-device.h for a libwick built without
 * CUDA: no device is ever available, capture is refused naming CUDA, and
 * window copies work on host memory (the eager fallback of such a build). */
#include "wick-stage-device.h"

#include <stdio.h>
#include <string.h>

static const char no_cuda[] = "no CUDA device is available: libwick was built without CUDA";

bool
wick_stage_device_available (char *why, size_t why_size)
{
  if (why != NULL && why_size > 0)
    snprintf (why, why_size, "%s", no_cuda);
  return false;
}

int
wick_stage_device_current (void)
{
  return -1;
}

void *
wick_stage_device_capture (const WickStageWork *work, const WickCaptureOptions *options,
                           WickCertification *cert)
{
  wick_gate_judge (cert, no_cuda);
  return NULL;
}

bool
wick_stage_device_launch (void *exec, void *stream, char *why, size_t why_size)
{
  snprintf (why, why_size, "%s", no_cuda);
  return false;
}

void
wick_stage_device_destroy (void *exec)
{
}

bool
wick_stage_device_copy (void *dst, const void *src, size_t n, void *stream, char *why,
                        size_t why_size)
{
  memmove (dst, src, n);
  return true;
}
