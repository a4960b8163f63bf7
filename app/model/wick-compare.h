/* wick-compare.h — what changed between two runs, or two cohorts of runs.
 *
 * Inputs are two sides, A and B, each one or more loaded documents
 * (candle-graph or Chrome/PyTorch traces; every run of a side should be the
 * same configuration). wick_comparison_new() computes:
 *
 *  - identity: the runs' comparison identity and run metadata, field by field
 *    (every run against A's first run). A difference in an identity field is
 *    a mismatch; callers refuse to compare unless told to (allow_mismatch).
 *    implementation_id and run_id are expected to differ and are not compared.
 *    Chrome/PyTorch traces carry no such meta (Wick makes one up, with the
 *    file name as entrypoint): their identity is what the file carries, the
 *    members of distributedInfo (rank, world_size, backend, ...),
 *    deviceProperties and the other top-level scalars (schemaVersion,
 *    cuda_runtime_version, host_name, ...; not traceName, trace_id,
 *    baseTimeNanoseconds, which name one file). Their differences are shown
 *    (informational), never refused; the root named after the file is in no
 *    table.
 *  - entries: spans by name, ops by op name and device intervals (kernels) by
 *    the name of their span, with per-run counts, mean and median duration,
 *    mean self time (spans), share of the measured region, and the ratio of
 *    mean durations B/A with a bootstrap 95% confidence interval.
 *  - memory: peak live logical bytes per device and category, and the peak of
 *    the physical samples (used, reserved), per side.
 *  - gradients: coverage verdict and per-family present counts per side, and
 *    the manifest entries whose state changed or whose norm jumped.
 *  - health: issue codes present on one side only.
 *  - steps: a per-step series (duration, memory peak) of every run.
 *
 * The bootstrap. A run's occurrences of a name are grouped into resampling
 * units: its training steps when the run has them (ProfilerStep#N spans, or
 * the most repeated direct child of a root, when it repeats) when there are
 * WICK_COMPARE_MIN_STEPS or more, else blocks of consecutive occurrences. At most
 * WICK_COMPARE_MAX_UNITS units per run: consecutive ones are merged beyond that. One resample draws
 * runs with replacement within each cohort (when the cohort has two runs or more), then units with
 * replacement within each drawn run; its statistic is the mean duration per occurrence over the
 * drawn units, and the ratio B/A of the two sides. WICK_COMPARE_RESAMPLES resamples from a
 * xoshiro256** generator seeded with WICK_COMPARE_SEED (per entry, so results do not depend on the
 * order of names). ci95 is the 2.5% and 97.5% percentile of the resampled ratios.
 *
 * Many names. With m testable entries the per-entry 95% interval alone would
 * flag about 0.05·m names in two runs of the same workload. "significant"
 * therefore uses a Bonferroni-corrected interval on the log ratio (Student's
 * t at level 1 − 0.05/(2m) with the Welch degrees of freedom of the two sides,
 * each side's bootstrap variance inflated by n/(n − 1); docs/compare.md), and
 * requires the change to be at least min_change (default 10%) so that a
 * machine-wide drift of a few percent is not reported name by name. An entry
 * needs WICK_COMPARE_MIN_UNITS units on each side to be testable.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

#define WICK_COMPARE_SEED G_GUINT64_CONSTANT (0x5769636b436d7031) /* "WickCmp1" */
#define WICK_COMPARE_RESAMPLES 2000
#define WICK_COMPARE_MAX_UNITS 256
#define WICK_COMPARE_BLOCKS 64
#define WICK_COMPARE_MIN_UNITS 4
#define WICK_COMPARE_MIN_CHANGE 0.10
/* Steps are the resampling units from this many steps on; fewer steps, blocks. */
#define WICK_COMPARE_MIN_STEPS 8
/* A gradient norm that changes by more than this factor (either way) is reported. */
#define WICK_COMPARE_NORM_FACTOR 10.0

#define WICK_COMPARE_ERROR (wick_compare_error_quark ())
GQuark wick_compare_error_quark (void);

typedef enum
{
  WICK_COMPARE_ERROR_EMPTY,    /* a side has no run */
  WICK_COMPARE_ERROR_MISMATCH, /* identities differ and allow_mismatch is off */
} WickCompareErrorCode;

typedef struct
{
  gboolean allow_mismatch;
  guint n_resamples; /* 0: WICK_COMPARE_RESAMPLES */
  guint64 seed;      /* 0: WICK_COMPARE_SEED */
  double min_change; /* < 0: WICK_COMPARE_MIN_CHANGE */
} WickCompareOptions;

typedef struct
{
  char *field; /* e.g. "precision", "comparison_identity", "format" */
  char *a;     /* value in A's first run, "(absent)" when absent */
  char *b;
  char *run; /* which run differs from A1: "B1", "A2", ... */
  gboolean informational; /* expected to differ (implementation_id, a Chrome trace's
                           * metadata): shown, never refused */
} WickCompareDifference;

typedef enum
{
  WICK_COMPARE_SPAN,
  WICK_COMPARE_OP,
  WICK_COMPARE_KERNEL,
} WickCompareKind;

typedef enum
{
  WICK_COMPARE_BOTH,
  WICK_COMPARE_ADDED,   /* only in B */
  WICK_COMPARE_REMOVED, /* only in A */
} WickCompareStatus;

typedef struct
{
  char *name;
  guint8 kind;   /* WickCompareKind */
  guint8 status; /* WickCompareStatus */
  guint64 count_a, count_b; /* over all runs of the side */
  double count_per_run_a, count_per_run_b;
  double count_per_step_a, count_per_step_b; /* 0 when the runs have no steps */
  double mean_ns_a, mean_ns_b;
  double median_ns_a, median_ns_b;
  double self_ns_a, self_ns_b; /* mean self time (spans; = mean for ops and kernels) */
  double share_a, share_b;     /* total duration / measured region, mean over runs */
  double ratio;                /* mean_ns_b / mean_ns_a, NAN unless both sides have it */
  double ci95_low, ci95_high;  /* NAN when not testable */
  double corrected_low, corrected_high; /* the Bonferroni interval behind "significant" */
  guint units_a, units_b;      /* resampling units */
  gboolean testable;
  gboolean significant;
} WickCompareEntry;

typedef struct
{
  char *device;
  char *category; /* a memory category, or "physical_used" / "physical_reserved" */
  guint64 peak_a, peak_b; /* median over the side's runs */
} WickCompareMemory;

typedef struct
{
  char *family;
  guint present_a, present_b;
} WickCompareGradientFamily;

typedef struct
{
  char *root, *key;
  char *state_a, *state_b; /* "present", "missing", "zero", "non_finite", "absent" */
  double norm_a, norm_b;   /* NAN when absent */
  const char *change;      /* "state" or "norm" */
} WickCompareGradientChange;

typedef struct
{
  char *code;
  char *severity;
  char *message; /* the first such issue's message */
  guint count;
  gboolean in_a; /* TRUE: only in A; FALSE: only in B */
} WickCompareHealth;

typedef struct
{
  char *name;
  guint64 start_ns;
  guint64 duration_ns;
  guint64 memory_peak; /* peak live logical bytes (all devices) during the step */
} WickCompareStep;

typedef struct
{
  char *label;  /* "A1", "B2" */
  char *path;
  GArray *steps; /* WickCompareStep */
  double drift;  /* median duration of the second half of steps / first half, NAN under 4 steps */
  guint64 measured_start_ns; /* start of the measured region (or of the first root) */
  guint64 measured_ns;
} WickCompareRun;

typedef struct
{
  gboolean identity_match;
  GPtrArray *differences; /* WickCompareDifference */
  GArray *entries;        /* WickCompareEntry, sorted: significant first, then |log ratio| */
  GArray *memory;         /* WickCompareMemory */
  char *coverage_a, *coverage_b;
  GArray *gradient_families; /* WickCompareGradientFamily */
  GArray *gradient_changes;  /* WickCompareGradientChange */
  GArray *health;            /* WickCompareHealth */
  GPtrArray *runs_a, *runs_b; /* WickCompareRun */
  guint n_testable;
  guint n_significant;
  guint n_resamples;
  guint64 seed;
  double min_change;
} WickComparison;

/* Compares two sides. Returns NULL with WICK_COMPARE_ERROR_MISMATCH when the
 * identities differ and options->allow_mismatch is FALSE: the message names
 * every differing field ("precision: bf16 vs f32"). @paths may be NULL. */
WickComparison *wick_comparison_new (WickDocument *const *a, guint n_a, WickDocument *const *b,
                                     guint n_b, const WickCompareOptions *options,
                                     GError **error);
void wick_comparison_free (WickComparison *comparison);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickComparison, wick_comparison_free)

/* The identity check alone (cheap): a new array of WickCompareDifference. */
GPtrArray *wick_compare_identity (WickDocument *const *a, guint n_a, WickDocument *const *b,
                                  guint n_b);

/* {"identity": {"match", "refused", "differences"}} for a refused comparison. */
char *wick_compare_identity_to_json (GPtrArray *differences);

/* The comparison as one JSON object (the `wick-trace compare --json` shape). */
char *wick_comparison_to_json (const WickComparison *comparison);

const char *wick_compare_kind_to_string (WickCompareKind kind);
const char *wick_compare_status_to_string (WickCompareStatus status);

G_END_DECLS
