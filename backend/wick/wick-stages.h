/* wick-stages.h — stage capture: record a registered hot stage into a CUDA
 * graph, certify it against its eager path on parity and net speedup, or
 * refuse it with a reason.
 *
 * Contract (docs/stages.md has the long form):
 *
 * - The host registers a stage on a session: an enqueue callback that puts the
 *   stage's work on the CUDA stream it is given, the named windows (device
 *   buffers the host may rewrite between calls), the output buffer, and
 *   optionally a reference callback that computes the eager output into a
 *   buffer the library passes. Without a reference the library takes the
 *   eager enqueue's own output as the reference.
 * - wick_stage_run() is what the host calls each step instead of its enqueue:
 *   it launches the certified graph, or runs the enqueue callback (eager)
 *   when the stage is not captured. Its fast path is a few atomic operations
 *   and the launch: no lock, allocation or system call.
 * - wick_stage_capture() may be called from any thread (the control socket's
 *   thread does): it waits for the wick_stage_run() calls in flight, holds
 *   new ones back until it is done (the workload pauses for the capture),
 *   warms the stage up on a side stream, records it into a graph in
 *   thread-local capture mode, and certifies it on parity (cosine, max abs,
 *   p99 abs of the replay against the reference, float64 accumulation on the
 *   device) and on speedup (median of alternating eager/replay rounds timed
 *   with CUDA events). A failure of either gate, or any error while
 *   capturing, destroys the graph and leaves the stage eager.
 * - Every capture, accepted or refused, writes a `wick_stage_certification`
 *   record into the session's trace and live ring.
 * - Without CUDA (not built, or no device at run time) everything links and
 *   works eagerly; capture is refused with a reason that says no CUDA device
 *   is available. The stream handed to callbacks is then NULL.
 *
 * The functions that list, capture and release stages are also what the
 * control socket calls (docs/protocol.md).
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include "wick-session.h"

WICK_BEGIN_DECLS

typedef struct WickStage WickStage;

typedef enum { WICK_STAGE_EAGER, WICK_STAGE_CAPTURED, WICK_STAGE_REFUSED } WickStageState;

typedef struct
{
  uint32_t warmup;         /* default 3 */
  double gate_cos;         /* default 0.999; 0 skips the parity gate */
  double min_speedup;      /* default 1.02; 0 skips the speedup gate */
  uint32_t timing_rounds;  /* default 7 */
  uint32_t timing_iterations; /* per round, default 20 */
  uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
} WickCaptureOptions;

WICK_AVAILABLE_IN_1_0
void wick_capture_options_init (WickCaptureOptions *options);

typedef struct
{
  char stage[128];
  bool accepted;
  char verdict[16];        /* "accepted" or "refused" */
  char reason[512];
  double gate_cos, min_speedup;
  bool parity_checked, speedup_checked;
  double parity_cos, max_abs, p99_abs;
  double eager_ms, replay_ms;
  double speedup_median, speedup_min, speedup_max;
  uint64_t kernel_nodes;
  uint32_t warmup;
  /* How the eager side of the speedup gate was timed (a WickEagerRecording,
   * kept as uint32_t so the struct's layout stays put), and the eager block's
   * median ms timed with the host's recording on, NaN when the host timed only
   * the suspended block (wick_stage_note_eager_timing). */
  uint32_t eager_recording;
  double eager_instrumented_ms;
  uint64_t _wick_reserved[7]; /* room to grow: written as zero by libwick */
} WickCertification;

/* What recorded inside the eager block of the speedup gate. The gate's
 * eager_ms is the time of that block: a host that instruments its own work
 * (wick.torch.instrument's per-module hooks) would otherwise credit the graph
 * with the cost of Wick's own recording. */
typedef enum
{
  /* libwick's own stages: the enqueue callback ran as the host wrote it and
   * libwick recorded nothing inside the timed rounds */
  WICK_EAGER_RECORDING_NONE = 0,
  /* a host stage whose host suspended its Wick recording for the eager rounds */
  WICK_EAGER_RECORDING_SUSPENDED = 1,
  /* a host stage timed with its recording on (a host that did not say) */
  WICK_EAGER_RECORDING_ACTIVE = 2,
} WickEagerRecording;

/* "none", "suspended", "active"; NULL for an unknown value. */
WICK_AVAILABLE_IN_1_0
const char *wick_eager_recording_name (WickEagerRecording recording);

/* The session's stages. */
WICK_AVAILABLE_IN_1_0
size_t wick_session_get_n_stages (WickSession *session);
WICK_AVAILABLE_IN_1_0
WickStage *wick_session_get_stage (WickSession *session, size_t index);
WICK_AVAILABLE_IN_1_0
WickStage *wick_session_find_stage (WickSession *session, const char *name);
WICK_AVAILABLE_IN_1_0
const char *wick_stage_get_name (WickStage *stage);
WICK_AVAILABLE_IN_1_0
WickStageState wick_stage_get_state (WickStage *stage);
/* Returns false only when the request itself is malformed; a refusal is a
 * successful call with out->accepted false. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_capture (WickStage *stage, const WickCaptureOptions *options,
                         WickCertification *out, WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_stage_release (WickStage *stage, WickError *error);

/* Whether this process can capture at all, and why not. */
WICK_AVAILABLE_IN_1_0
bool wick_cuda_available (WickError *why_not);

/* --- Registration and use by the host program ---------------------------- */

typedef enum
{
  WICK_STAGE_DTYPE_F32,
  WICK_STAGE_DTYPE_F16,
  WICK_STAGE_DTYPE_BF16,
  WICK_STAGE_DTYPE_F64,
  WICK_STAGE_DTYPE_I32,
  WICK_STAGE_DTYPE_I64,
  WICK_STAGE_DTYPE_U8,
} WickStageDType;

#define WICK_STAGE_MAX_RANK 8
#define WICK_STAGE_MAX_WINDOWS 32

/* "f32", "f16", "bf16", "f64", "i32", "i64", "u8"; NULL for an unknown value. */
WICK_AVAILABLE_IN_1_0
const char *wick_stage_dtype_name (WickStageDType dtype);
/* Bytes of one element; 0 for an unknown value. */
WICK_AVAILABLE_IN_1_0
size_t wick_stage_dtype_size (WickStageDType dtype);

/* A device buffer with its form. For windows `name` is the window's name;
 * for the output it is optional. shape has `rank` entries, each >= 1. */
typedef struct
{
  const char *name;
  void *data;
  WickStageDType dtype;
  const int64_t *shape;
  size_t rank;
} WickStageBuffer;

/* Enqueues the stage's work on `stream` (a cudaStream_t; NULL without CUDA).
 * Must be graph-safe to be accepted: no synchronisation, no allocation, no
 * host branching on device values, every varying input read from a window. */
typedef void (*WickStageEnqueueFunc) (void *stream, void *user_data);
/* Enqueues the eager computation of the stage's output into `output` (a
 * buffer of the output's dtype and shape that the library owns). */
typedef void (*WickStageReferenceFunc) (void *stream, void *output, void *user_data);

typedef struct
{
  const char *name;                  /* unique within the session, < 128 bytes */
  WickStageEnqueueFunc enqueue;      /* required */
  WickStageReferenceFunc reference;  /* optional */
  void *user_data;
  void (*destroy_user_data) (void *user_data); /* optional, at session close */
  const WickStageBuffer *windows;
  size_t n_windows;                  /* at most WICK_STAGE_MAX_WINDOWS */
  WickStageBuffer output;            /* f32, f16, bf16 or f64 */
  uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
} WickStageInfo;

/* Registers a stage; the session keeps it until it closes. Names, shapes and
 * window lists are copied. Returns NULL and fills error on a malformed info
 * or a duplicate name. */
WICK_AVAILABLE_IN_1_0
WickStage *wick_session_register_stage (WickSession *session, const WickStageInfo *info,
                                        WickError *error);

/* Runs the stage once on `stream`: the certified graph when captured, the
 * enqueue callback otherwise. Asynchronous like any launch. Returns false
 * only when the graph launch itself fails (the stage then turns eager). */
WICK_AVAILABLE_IN_1_0
bool wick_stage_run (WickStage *stage, void *stream, WickError *error);

/* Copies n_bytes from `data` (host or device memory) into the window `name`,
 * after the stage's work already enqueued on the last stream it ran on, and
 * waits for the copy. Waits for a capture in progress, as a run does.
 * Refuses, naming what was expected and what came, when the name is not a
 * window, or the dtype, the shape or the byte count does not match. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_write_window (WickStage *stage, const char *name, const void *data,
                              size_t n_bytes, WickStageDType dtype, const int64_t *shape,
                              size_t rank, WickError *error);

WICK_AVAILABLE_IN_1_0
size_t wick_stage_get_n_windows (WickStage *stage);
/* The window's name, dtype and shape (pointers owned by the stage). */
WICK_AVAILABLE_IN_1_0
bool wick_stage_get_window (WickStage *stage, size_t index, WickStageBuffer *out);
/* The output's dtype and shape (name NULL). */
WICK_AVAILABLE_IN_1_0
bool wick_stage_get_output (WickStage *stage, WickStageBuffer *out);
/* The last capture's certificate; false when the stage was never captured. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_get_certification (WickStage *stage, WickCertification *out);

/* Refuses, as wick_stage_write_window() does, a write of n_bytes of that dtype
 * and shape into the window `name`; copies nothing. For hosts that copy
 * windows themselves (stages captured by their host). */
WICK_AVAILABLE_IN_1_0
bool wick_stage_check_window (WickStage *stage, const char *name, size_t n_bytes,
                              WickStageDType dtype, const int64_t *shape, size_t rank,
                              WickError *error);

/* --- Stages captured by their host --------------------------------------- *
 *
 * For hosts whose work cannot be enqueued by a C callback on a stream that
 * libwick chooses (Python: wick.torch.register_stage captures through
 * torch.cuda.graph). The host registers the stage with
 * wick_session_register_host_stage(): info->enqueue and info->reference may
 * be NULL, and wick_stage_run() refuses such a stage. The host runs the stage
 * itself, and captures it only on its own thread, at a call of the stage:
 *
 * - wick_stage_capture() from another thread (the control socket's) refuses
 *   at once, with the reason, where no CUDA device is available; otherwise it
 *   posts a request and waits (up to 60 s) for the host to complete it, then
 *   returns the certificate. After the wait it fails with a sentence saying
 *   the request stays pending.
 * - At each call of the stage the host checks wick_stage_capture_requested()
 *   (a mutex, no system call) and takes the request with
 *   wick_stage_take_capture_request(), which gives the capture options.
 * - It warms up, captures, replays, measures parity (float64 sums on the
 *   device) and times alternating rounds, then hands the figures to
 *   wick_stage_complete_capture(): libwick computes the cosine and the
 *   speedup summary, judges both gates as for its own stages, writes the
 *   `wick_stage_certification` record, sets the state and wakes the asker.
 *   `failure` (not NULL) refuses with that sentence instead (a capture that
 *   raised, graph-unsafe work, no device).
 * - wick_stage_release() sets the state back to eager; the host drops its
 *   graph when it sees wick_stage_state() is no longer captured.
 */

typedef struct
{
  double dot;         /* sum of out x ref, float64 */
  double out_squared; /* sum of out x out */
  double ref_squared; /* sum of ref x ref */
  double max_abs;     /* max |out - ref| */
  double p99_abs;     /* nearest-rank p99 of |out - ref| (NaN if any is NaN) */
  const double *eager_ms;  /* per-iteration ms of each round, eager */
  const double *replay_ms; /* and replayed */
  size_t n_rounds;
  uint64_t kernel_nodes; /* 0 when the host cannot count them */
} WickStageFigures;

WICK_AVAILABLE_IN_1_0
WickStage *wick_session_register_host_stage (WickSession *session, const WickStageInfo *info,
                                             WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_stage_is_host_captured (WickStage *stage);
/* Whether a capture was asked for and not taken yet. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_capture_requested (WickStage *stage);
/* Takes the pending request: true and its options, or false when none. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_take_capture_request (WickStage *stage, WickCaptureOptions *options);
/* Begins a capture the host was not asked for (wick.torch's
 * Stage.capture()), on this thread: the capture's span and its
 * wick_stage_capture record are written now, as for a taken request, so a
 * reader sees the capture in progress; the next
 * wick_stage_complete_capture() on this thread ends it. Refuses a stage not
 * captured by its host, bad options, or a capture already begun. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_begin_capture (WickStage *stage, const WickCaptureOptions *options,
                               WickError *error);
/* options NULL: the defaults. figures may be NULL when failure is set. */
/* Says how the host timed the eager rounds it will hand to the next
 * wick_stage_complete_capture() of this stage: @recording, and optionally the
 * per-round ms of the same eager block timed with its recording on
 * (@instrumented_ms, @n_rounds entries; NULL and 0 when not timed), which the
 * certificate reports beside eager_ms. Without this call a host stage's
 * certificate says "active". Refuses an unknown @recording, a stage not
 * captured by its host, or more than 1024 rounds. */
WICK_AVAILABLE_IN_1_0
bool wick_stage_note_eager_timing (WickStage *stage, WickEagerRecording recording,
                                   const double *instrumented_ms, size_t n_rounds,
                                   WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_stage_complete_capture (WickStage *stage, const WickCaptureOptions *options,
                                  const WickStageFigures *figures, const char *failure,
                                  WickCertification *out, WickError *error);

WICK_END_DECLS
