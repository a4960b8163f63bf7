/* wick-stage-private.h — what libwick's own files and tests may use of stages.
 *
 * wick_stage_new() builds a stage that belongs to no session (session may be
 * NULL: no certification record is then written); the session registry uses
 * it and frees its stages with wick_stage_free() when the session closes.
 */
#pragma once

#include "wick-stage-gates.h"

#ifdef __cplusplus
extern "C"
{
#endif

  WickStage *wick_stage_new (WickSession *session, const WickStageInfo *info, WickError *error);
  void wick_stage_free (WickStage *stage);
  /* A stage captured by its host (wick_session_register_host_stage). */
  WickStage *wick_stage_new_host (WickSession *session, const WickStageInfo *info,
                                  WickError *error);

  /* The fields of a `wick_stage_certification` record, i.e. the inside of a
   * JSON object, for this stage and certificate. Returns false when `size` is
   * too small. Non-finite figures are written as null. */
  /* Leaves a capture request for the host, as wick_stage_capture() of a host
   * stage does where a device can capture (and the tests of the host's side,
   * where none can). */
  void wick_stage_set_capture_request (WickStage *stage, const WickCaptureOptions *options);
  bool wick_stage_certification_json (WickStage *stage, const WickCertification *cert, char *buffer,
                                      size_t size);

  /* Validates options (NULL: the defaults) into out; 0 rounds or iterations
   * mean the default. False with a sentence naming the field otherwise. */
  bool wick_capture_options_validate (const WickCaptureOptions *options, WickCaptureOptions *out,
                                      WickError *error);

#ifdef __cplusplus
}
#endif
