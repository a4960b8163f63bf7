/* wick-steps.h — the training or inference steps of a trace.
 *
 * One rule, used by `wick-trace summary`, compare, the timeline's step track
 * and the Costs page's step table:
 *
 *  - the spans named ProfilerStep#N (N decimal digits: what torch.profiler
 *    writes around each step; source WICK_STEPS_PROFILER);
 *  - in a trace with none, the most repeated name among the direct children
 *    of root spans, when it occurs twice or more (ties: the name interned
 *    first; source WICK_STEPS_REPEATED) — what a hand-instrumented training
 *    loop's per-iteration span is.
 *
 * Steps are listed by start time; every span knows the step that holds it
 * (the step itself, or its nearest step ancestor; -1 outside every step).
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_STEPS_NONE,
  WICK_STEPS_PROFILER,
  WICK_STEPS_REPEATED,
} WickStepsSource;

typedef struct
{
  WickStepsSource source;
  GArray *spans;   /* guint32: span index of each step, by start time */
  gint32 *step_of; /* per span: index into spans of the step holding it, -1 none */
  guint n_spans;   /* length of step_of */
} WickSteps;

/* TRUE for "ProfilerStep#" followed by one or more digits. */
gboolean wick_is_profiler_step (const char *name);

/* The steps of @document's spans (parents resolved). */
WickSteps *wick_steps_find (WickDocument *document);
void wick_steps_free (WickSteps *steps);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickSteps, wick_steps_free)

/* Per-step statistics (the Costs page's step table). */
typedef struct
{
  guint32 span; /* the step's span */
  WickStr name; /* its name */
  guint64 start_ns;
  guint64 duration_ns;
  guint64 n_spans;         /* spans inside it, the step itself excluded */
  guint64 n_ops;           /* candle-graph ops in its spans */
  guint64 device_ns;       /* summed duration of the device intervals it launched: a
                            * candle-graph interval by its span, a Chrome kernel by its
                            * flow from the launch, else by the step running at its start */
  guint64 n_device;        /* those intervals */
  guint64 allocated_bytes; /* logical memory allocated in its spans */
  guint64 index;           /* 1-based, by start time (what the Costs page shows as #) */
  guint64 measured;        /* 1 when the step is the measured region or holds it */
} WickStepStats;

/* One WickStepStats per step, in step order. */
GArray *wick_steps_statistics (WickDocument *document, const WickSteps *steps);

G_END_DECLS
