/* wick-stage-record.c — the `wick_stage_certification` record.
 *
 * Fields, in order (docs/stages.md):
 *   stage, windows [{name, dtype, shape}], output {dtype, shape},
 *   gate_cos, min_speedup, warmup, parity_checked, speedup_checked,
 *   parity_cos, max_abs, p99_abs, eager_ms, replay_ms,
 *   speedup_median, speedup_min, speedup_max, kernel_nodes,
 *   eager_recording, eager_instrumented_ms, accepted, verdict, reason
 * Figures that were not measured (NaN) or are infinite are null; written with
 * the one JSON writer (common/wick-json.h).
 */
#include "wick-stage-private.h"

#include "common/wick-json.h"

#include <string.h>

static void
record_number (WickJson *json, const char *key, double value)
{
  wick_json_key (json, key);
  wick_json_number (json, value);
}

static void
record_buffer (WickJson *json, const WickStageBuffer *buffer)
{
  if (buffer->name != NULL)
    {
      wick_json_key (json, "name");
      wick_json_string (json, buffer->name);
    }
  wick_json_key (json, "dtype");
  wick_json_string (json, wick_stage_dtype_name (buffer->dtype));
  wick_json_key (json, "shape");
  wick_json_append (json, "[", 1);
  for (size_t i = 0; i < buffer->rank; i++)
    {
      if (i > 0)
        wick_json_append (json, ",", 1);
      wick_json_i64 (json, buffer->shape[i]);
    }
  wick_json_append (json, "]", 1);
}

bool
wick_stage_certification_json (WickStage *stage, const WickCertification *cert, char *buffer,
                               size_t size)
{
  if (size == 0)
    return false;
  WickJson json;
  wick_json_init (&json);
  json.limit = size - 1; /* and its NUL */
  wick_json_key (&json, "stage");
  wick_json_string (&json, cert->stage);
  wick_json_key (&json, "windows");
  wick_json_append (&json, "[", 1);
  size_t n_windows = wick_stage_get_n_windows (stage);
  for (size_t i = 0; i < n_windows; i++)
    {
      WickStageBuffer window;
      wick_stage_get_window (stage, i, &window);
      wick_json_raw (&json, i > 0 ? ",{" : "{");
      record_buffer (&json, &window);
      wick_json_append (&json, "}", 1);
    }
  wick_json_append (&json, "]", 1);
  wick_json_key (&json, "output");
  wick_json_append (&json, "{", 1);
  WickStageBuffer output;
  wick_stage_get_output (stage, &output);
  record_buffer (&json, &output);
  wick_json_append (&json, "}", 1);
  record_number (&json, "gate_cos", cert->gate_cos);
  record_number (&json, "min_speedup", cert->min_speedup);
  wick_json_key (&json, "warmup");
  wick_json_u64 (&json, cert->warmup);
  wick_json_key (&json, "parity_checked");
  wick_json_bool (&json, cert->parity_checked);
  wick_json_key (&json, "speedup_checked");
  wick_json_bool (&json, cert->speedup_checked);
  record_number (&json, "parity_cos", cert->parity_cos);
  record_number (&json, "max_abs", cert->max_abs);
  record_number (&json, "p99_abs", cert->p99_abs);
  record_number (&json, "eager_ms", cert->eager_ms);
  record_number (&json, "replay_ms", cert->replay_ms);
  record_number (&json, "speedup_median", cert->speedup_median);
  record_number (&json, "speedup_min", cert->speedup_min);
  record_number (&json, "speedup_max", cert->speedup_max);
  wick_json_key (&json, "kernel_nodes");
  wick_json_u64 (&json, cert->kernel_nodes);
  const char *recording = wick_eager_recording_name ((WickEagerRecording)cert->eager_recording);
  wick_json_key (&json, "eager_recording");
  wick_json_string (&json, recording != NULL ? recording : "unknown");
  record_number (&json, "eager_instrumented_ms", cert->eager_instrumented_ms);
  wick_json_key (&json, "accepted");
  wick_json_bool (&json, cert->accepted);
  wick_json_key (&json, "verdict");
  wick_json_string (&json, cert->verdict);
  wick_json_key (&json, "reason");
  wick_json_string (&json, cert->reason);
  bool ok = !json.failed;
  if (ok)
    memcpy (buffer, json.data, json.length + 1);
  wick_json_clear (&json);
  return ok;
}
