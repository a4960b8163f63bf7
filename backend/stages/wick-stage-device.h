/* wick-stage-device.h — the CUDA side of stage capture, behind plain C types
 * so that wick-stage.c never needs CUDA headers.
 *
 * wick-stage-device.cu implements it when libwick is built with CUDA;
 * wick-stage-device-none.c otherwise (every call then says that libwick was
 * built without CUDA, and copies work on host memory).
 *
 * wick_stage_device_capture() is the whole certification: warm-up on a side
 * stream, the reference, the capture in thread-local mode, instantiation,
 * one replay over a poisoned output, the parity figures on the device, the
 * alternating timing rounds, and the verdict (wick_gate_judge). It returns
 * the executable graph only when the verdict is accepted; on any failure it
 * has ended the capture, destroyed what it built and cleared the errors it
 * could. The caller guarantees that nothing else runs the stage meanwhile.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "wick-stage-gates.h"

#ifdef __cplusplus
extern "C"
{
#endif

  typedef struct
  {
    const char *name;
    WickStageEnqueueFunc enqueue;
    WickStageReferenceFunc reference; /* NULL: the eager enqueue's output is the reference */
    void *user_data;
    void *output;
    WickStageDType output_dtype;
    size_t output_elements;
    int device;
  } WickStageWork;

  /* Whether a CUDA device can be used; why not in `why` otherwise. */
  bool wick_stage_device_available (char *why, size_t why_size);

  /* The device that is current for this thread, or -1. */
  int wick_stage_device_current (void);

  /* Fills cert (figures, verdict, reason); returns the graph exec when accepted,
   * NULL when refused. cert->stage, thresholds and warmup are set by the caller. */
  void *wick_stage_device_capture (const WickStageWork *work, const WickCaptureOptions *options,
                                   WickCertification *cert);

  /* Launches the graph exec on stream; false with a sentence on failure. */
  bool wick_stage_device_launch (void *exec, void *stream, char *why, size_t why_size);

  void wick_stage_device_destroy (void *exec);

  /* Copies n bytes into dst after the work already on stream, then waits for
   * it; host or device memory on either side. */
  bool wick_stage_device_copy (void *dst, const void *src, size_t n, void *stream, char *why,
                               size_t why_size);

#ifdef __cplusplus
}
#endif
