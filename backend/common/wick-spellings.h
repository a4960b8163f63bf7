/* wick-spellings.h — the candle-graph words for libwick's enums
 * (wick/wick-session.h), one table each, NULL-terminated, in the order of the
 * enum's values. libwick's public wick_*_to_string() read them
 * (wick-spellings.c); the model's JSONL reader decodes with them and its
 * writers write them (app/model/wick-trace-record.c), so a word is spelled in
 * one place. Private (not installed).
 *
 * The step table has no word for WICK_STEP_NONE: entry i is step i + 1
 * (a record without a step leaves the field out).
 */
#pragma once

extern const char *const wick_phase_spellings[];       /* WickPhase */
extern const char *const wick_timing_mode_spellings[]; /* WickTimingMode */
extern const char *const wick_coverage_spellings[];    /* WickCoverage */
extern const char *const wick_measurement_scope_spellings[];    /* WickMeasurementScope */
extern const char *const wick_span_kind_spellings[];            /* WickSpanKind */
extern const char *const wick_step_spellings[];                 /* WickStep - 1 */
extern const char *const wick_memory_category_spellings[];      /* WickMemoryCategory */
extern const char *const wick_memory_action_spellings[];        /* WickMemoryAction */
extern const char *const wick_gradient_state_spellings[];       /* WickGradientState */
extern const char *const wick_gradient_expectation_spellings[]; /* WickGradientExpectation */
extern const char *const wick_ring_policy_spellings[];          /* WickRingPolicy */
