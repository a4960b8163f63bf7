/* wick-spellings.c — the candle-graph spellings of libwick's enums
 * (wick/wick-session.h), shared with the model (wick_shared_lib), which reads
 * and writes the same words.
 */
#include "config.h"

#include "wick/wick-session.h"

#define SPELL(value, n, ...)                                                                       \
  do                                                                                               \
    {                                                                                              \
      static const char *const names[n] = { __VA_ARGS__ };                                         \
      return (unsigned)(value) < (n) ? names[value] : "unknown";                                   \
    }                                                                                              \
  while (0)

const char *
wick_phase_to_string (WickPhase phase)
{
  SPELL (phase, 2, "train", "infer");
}

const char *
wick_timing_mode_to_string (WickTimingMode mode)
{
  SPELL (mode, 2, "host", "device_synchronized");
}

const char *
wick_coverage_to_string (WickCoverage coverage)
{
  SPELL (coverage, 3, "none", "partial", "complete");
}

const char *
wick_measurement_scope_to_string (WickMeasurementScope scope)
{
  SPELL (scope, 3, "unknown", "profiled_work", "production_equivalent");
}

const char *
wick_span_kind_to_string (WickSpanKind kind)
{
  SPELL (kind, 3, "function", "op", "module");
}

const char *
wick_step_to_string (WickStep step)
{
  if (step == WICK_STEP_NONE)
    return NULL;
  SPELL (step, 4, NULL, "forward", "backward", "optimizer");
}

const char *
wick_memory_category_to_string (WickMemoryCategory category)
{
  SPELL (category, 5, "parameter", "activation", "gradient", "optimizer", "other");
}

const char *
wick_memory_action_to_string (WickMemoryAction action)
{
  SPELL (action, 2, "alloc", "free");
}

const char *
wick_gradient_state_to_string (WickGradientState state)
{
  SPELL (state, 4, "present", "missing", "zero", "non_finite");
}

const char *
wick_gradient_expectation_to_string (WickGradientExpectation expectation)
{
  SPELL (expectation, 3, "active", "inactive", "data_conditional");
}

const char *
wick_ring_policy_to_string (WickRingPolicy policy)
{
  SPELL (policy, 3, "drop", "block", "overwrite");
}
