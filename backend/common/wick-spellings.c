/* wick-spellings.c — the candle-graph spellings of libwick's enums
 * (wick-spellings.h), and libwick's public wick_*_to_string() over them.
 */
#include "config.h"

#include "common/wick-spellings.h"

#include "wick/wick-session.h"

const char *const wick_phase_spellings[] = { "train", "infer", NULL };
const char *const wick_timing_mode_spellings[] = { "host", "device_synchronized", NULL };
const char *const wick_coverage_spellings[] = { "none", "partial", "complete", NULL };
const char *const wick_measurement_scope_spellings[] = {
  "unknown",
  "profiled_work",
  "production_equivalent",
  NULL,
};
const char *const wick_span_kind_spellings[] = { "function", "op", "module", NULL };
const char *const wick_step_spellings[] = { "forward", "backward", "optimizer", NULL };
const char *const wick_memory_category_spellings[] = {
  "parameter", "activation", "gradient", "optimizer", "other", NULL,
};
const char *const wick_memory_action_spellings[] = { "alloc", "free", NULL };
const char *const wick_gradient_state_spellings[] = {
  "present", "missing", "zero", "non_finite", NULL,
};
const char *const wick_gradient_expectation_spellings[] = {
  "active",
  "inactive",
  "data_conditional",
  NULL,
};
const char *const wick_ring_policy_spellings[] = { "drop", "block", "overwrite", NULL };

/* The word for @value in @table of @n words, "unknown" past its end. */
#define SPELL(table, n, value)                                                                     \
  do                                                                                               \
    {                                                                                              \
      _Static_assert (sizeof (table) / sizeof (table)[0] == (n) + 1, "one word a value");          \
      return (unsigned)(value) < (n) ? (table)[value] : "unknown";                                 \
    }                                                                                              \
  while (0)

const char *
wick_phase_to_string (WickPhase phase)
{
  SPELL (wick_phase_spellings, 2, phase);
}

const char *
wick_timing_mode_to_string (WickTimingMode mode)
{
  SPELL (wick_timing_mode_spellings, 2, mode);
}

const char *
wick_coverage_to_string (WickCoverage coverage)
{
  SPELL (wick_coverage_spellings, 3, coverage);
}

const char *
wick_measurement_scope_to_string (WickMeasurementScope scope)
{
  SPELL (wick_measurement_scope_spellings, 3, scope);
}

const char *
wick_span_kind_to_string (WickSpanKind kind)
{
  SPELL (wick_span_kind_spellings, 3, kind);
}

const char *
wick_step_to_string (WickStep step)
{
  if (step == WICK_STEP_NONE)
    return NULL;
  SPELL (wick_step_spellings, 3, (unsigned)step - 1);
}

const char *
wick_memory_category_to_string (WickMemoryCategory category)
{
  SPELL (wick_memory_category_spellings, 5, category);
}

const char *
wick_memory_action_to_string (WickMemoryAction action)
{
  SPELL (wick_memory_action_spellings, 2, action);
}

const char *
wick_gradient_state_to_string (WickGradientState state)
{
  SPELL (wick_gradient_state_spellings, 4, state);
}

const char *
wick_gradient_expectation_to_string (WickGradientExpectation expectation)
{
  SPELL (wick_gradient_expectation_spellings, 3, expectation);
}

const char *
wick_ring_policy_to_string (WickRingPolicy policy)
{
  SPELL (wick_ring_policy_spellings, 3, policy);
}
