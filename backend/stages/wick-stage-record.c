/* wick-stage-record.c — the `wick_stage_certification` record.
 *
 * Fields, in order (docs/stages.md):
 *   stage, windows [{name, dtype, shape}], output {dtype, shape},
 *   gate_cos, min_speedup, warmup, parity_checked, speedup_checked,
 *   parity_cos, max_abs, p99_abs, eager_ms, replay_ms,
 *   speedup_median, speedup_min, speedup_max, kernel_nodes,
 *   eager_recording, eager_instrumented_ms, accepted, verdict, reason
 * Figures that were not measured (NaN) or are infinite are null.
 */
#include "wick-stage-private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
wick_stage_json_append (WickJsonBuffer *json, const char *format, ...)
{
  if (json->used >= json->size)
    return;
  va_list args;
  va_start (args, format);
  int n = vsnprintf (json->data + json->used, json->size - json->used, format, args);
  va_end (args);
  json->used = n < 0 ? json->size : json->used + (size_t)n;
}

void
wick_stage_json_string (WickJsonBuffer *json, const char *text)
{
  wick_stage_json_append (json, "\"");
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        wick_stage_json_append (json, "\\%c", *p);
      else if (*p == '\n')
        wick_stage_json_append (json, "\\n");
      else if (*p < 0x20)
        wick_stage_json_append (json, "\\u%04x", (unsigned)*p);
      else
        wick_stage_json_append (json, "%c", *p);
    }
  wick_stage_json_append (json, "\"");
}

static void
record_number (WickJsonBuffer *json, const char *key, double value)
{
  if (isfinite (value))
    {
      /* the shortest of %.15g and %.17g that reads back as the same double */
      char text[32];
      snprintf (text, sizeof text, "%.15g", value);
      if (strtod (text, NULL) != value)
        snprintf (text, sizeof text, "%.17g", value);
      wick_stage_json_append (json, ",\"%s\":%s", key, text);
    }
  else
    wick_stage_json_append (json, ",\"%s\":null", key);
}

static void
record_buffer (WickJsonBuffer *json, const WickStageBuffer *buffer)
{
  if (buffer->name != NULL)
    {
      wick_stage_json_append (json, "\"name\":");
      wick_stage_json_string (json, buffer->name);
      wick_stage_json_append (json, ",");
    }
  wick_stage_json_append (json, "\"dtype\":\"%s\",\"shape\":[",
                          wick_stage_dtype_name (buffer->dtype));
  for (size_t i = 0; i < buffer->rank; i++)
    wick_stage_json_append (json, "%s%lld", i > 0 ? "," : "", (long long)buffer->shape[i]);
  wick_stage_json_append (json, "]");
}

bool
wick_stage_certification_json (WickStage *stage, const WickCertification *cert, char *buffer,
                               size_t size)
{
  WickJsonBuffer json = { buffer, size, 0 };
  wick_stage_json_append (&json, "\"stage\":");
  wick_stage_json_string (&json, cert->stage);
  wick_stage_json_append (&json, ",\"windows\":[");
  size_t n_windows = wick_stage_get_n_windows (stage);
  for (size_t i = 0; i < n_windows; i++)
    {
      WickStageBuffer window;
      wick_stage_get_window (stage, i, &window);
      wick_stage_json_append (&json, "%s{", i > 0 ? "," : "");
      record_buffer (&json, &window);
      wick_stage_json_append (&json, "}");
    }
  wick_stage_json_append (&json, "],\"output\":{");
  WickStageBuffer output;
  wick_stage_get_output (stage, &output);
  record_buffer (&json, &output);
  wick_stage_json_append (&json, "}");
  record_number (&json, "gate_cos", cert->gate_cos);
  record_number (&json, "min_speedup", cert->min_speedup);
  wick_stage_json_append (&json, ",\"warmup\":%u,\"parity_checked\":%s,\"speedup_checked\":%s",
                          cert->warmup, cert->parity_checked ? "true" : "false",
                          cert->speedup_checked ? "true" : "false");
  record_number (&json, "parity_cos", cert->parity_cos);
  record_number (&json, "max_abs", cert->max_abs);
  record_number (&json, "p99_abs", cert->p99_abs);
  record_number (&json, "eager_ms", cert->eager_ms);
  record_number (&json, "replay_ms", cert->replay_ms);
  record_number (&json, "speedup_median", cert->speedup_median);
  record_number (&json, "speedup_min", cert->speedup_min);
  record_number (&json, "speedup_max", cert->speedup_max);
  const char *recording = wick_eager_recording_name ((WickEagerRecording)cert->eager_recording);
  wick_stage_json_append (&json, ",\"kernel_nodes\":%llu,\"eager_recording\":\"%s\"",
                          (unsigned long long)cert->kernel_nodes,
                          recording != NULL ? recording : "unknown");
  record_number (&json, "eager_instrumented_ms", cert->eager_instrumented_ms);
  wick_stage_json_append (&json, ",\"accepted\":%s,\"verdict\":",
                          cert->accepted ? "true" : "false");
  wick_stage_json_string (&json, cert->verdict);
  wick_stage_json_append (&json, ",\"reason\":");
  wick_stage_json_string (&json, cert->reason);
  return json.used < json.size;
}
