/* wick-session.h — recording sessions: run metadata, capture contract, spans,
 * ops, tensors, memory, gradients, terminal. Owned by the recording core.
 *
 * Contract: a session writes candle-graph/trace/10 (see docs/format.md and the
 * spec restated in shared/spec). Span ids are s1, s2, ... in creation order,
 * s1 being the root span the session opens with the entrypoint as its name.
 * Timestamps are nanoseconds since the session opened, from one monotonic
 * clock (calibrated TSC where available, CLOCK_MONOTONIC otherwise).
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  char message[512];
} WickError;

typedef struct WickSession WickSession;

typedef enum { WICK_PHASE_TRAIN, WICK_PHASE_INFER } WickPhase;
typedef enum { WICK_TIMING_HOST, WICK_TIMING_DEVICE_SYNCHRONIZED } WickTimingMode;
typedef enum { WICK_COVERAGE_NONE, WICK_COVERAGE_PARTIAL, WICK_COVERAGE_COMPLETE } WickCoverage;
typedef enum
{
  WICK_SCOPE_UNKNOWN,
  WICK_SCOPE_PROFILED_WORK,
  WICK_SCOPE_PRODUCTION_EQUIVALENT,
} WickMeasurementScope;
typedef enum { WICK_SPAN_FUNCTION, WICK_SPAN_OP, WICK_SPAN_MODULE } WickSpanKind;
typedef enum
{
  WICK_STEP_NONE,
  WICK_STEP_FORWARD,
  WICK_STEP_BACKWARD,
  WICK_STEP_OPTIMIZER,
} WickStep;
typedef enum
{
  WICK_CATEGORY_PARAMETER,
  WICK_CATEGORY_ACTIVATION,
  WICK_CATEGORY_GRADIENT,
  WICK_CATEGORY_OPTIMIZER,
  WICK_CATEGORY_OTHER,
} WickMemoryCategory;
#define WICK_N_CATEGORIES 5
typedef enum { WICK_MEMORY_ALLOC, WICK_MEMORY_FREE } WickMemoryAction;
typedef enum
{
  WICK_GRADIENT_PRESENT,
  WICK_GRADIENT_MISSING,
  WICK_GRADIENT_ZERO,
  WICK_GRADIENT_NON_FINITE,
} WickGradientState;
typedef enum
{
  WICK_EXPECT_ACTIVE,
  WICK_EXPECT_INACTIVE,
  WICK_EXPECT_DATA_CONDITIONAL,
} WickGradientExpectation;
typedef enum
{
  WICK_RING_DROP,      /* default: never blocks, counts every dropped record */
  WICK_RING_BLOCK,     /* lossless: the producer waits for the reader */
  WICK_RING_OVERWRITE, /* flight recorder */
} WickRingPolicy;

/* Span ids: the N of "sN". 0 is "no span". */
typedef uint64_t WickSpanId;

typedef struct
{
  const char *key;
  const char *value;
} WickTag;

typedef struct
{
  const char *root;
  const char *key;
  const char *family;
} WickExpectedGradient;

typedef struct
{
  const char *family;
  WickGradientExpectation expectation;
  uint64_t min_present;
} WickGradientFamily;

/* An exact gradient contract, validated with candle-graph's rules (spec §7.3)
 * and with its manifest digest bound at construction. */
typedef struct WickGradientContract WickGradientContract;

/* "sha256:" + 64 lowercase hex + NUL */
#define WICK_SHA256_TEXT_LEN 72

bool wick_gradient_manifest_sha256 (const WickExpectedGradient *expected,
                                    size_t n_expected,
                                    char out[WICK_SHA256_TEXT_LEN],
                                    WickError *error);

typedef struct
{
  const char *implementation_id; /* optional */
  const char *workload_id;
  const char *model_id;
  const char *config_id;
  const char *data_id;
  const char *seed_policy;
  uint64_t physical_batch;
  uint64_t accumulation_steps;
  const char *precision;
  const char *device_state;
  const char *pair_id; /* optional */
} WickComparisonIdentity;

typedef struct
{
  WickMeasurementScope measurement_scope;
  WickCoverage operations;
  WickCoverage tensors;
  WickCoverage gradients;
  WickCoverage logical_memory;
  WickCoverage physical_memory;
  WickCoverage device_timing;
  const WickGradientContract *gradient_contract; /* optional; copied */
  const char *const *required_semantic_labels;
  size_t n_required_semantic_labels;
  const char *const *gpu_expected_semantic_labels;
  size_t n_gpu_expected_semantic_labels;
  const char *const *cpu_only_semantic_labels;
  size_t n_cpu_only_semantic_labels;
} WickCaptureContract;

typedef struct
{
  const char *entrypoint;
  WickPhase phase;
  uint64_t capture_step;
  uint64_t warmup_steps;
  const char *device;
  WickTimingMode timing_mode;
  bool measured_region_device_synchronized;
  const WickTag *tags;
  size_t n_tags;
  const WickComparisonIdentity *comparison_identity; /* optional */
  const char *correlation_id;                        /* optional: defaults to the run id */
} WickRunInfo;

typedef struct
{
  const char *jsonl_path;  /* optional: write the trace to this file */
  bool strict;             /* pure trace/10: no wick_ records in the file */
  WickRingPolicy policy;   /* of the live ring */
  size_t ring_bytes;       /* per producer thread; 0: the default */
  bool enable_control;     /* listen on the control socket (also WICK_CONTROL=1) */
} WickSessionOptions;

#ifdef __cplusplus
}
#endif
