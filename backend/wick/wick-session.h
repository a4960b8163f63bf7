/* wick-session.h — recording sessions: run metadata, capture contract, spans,
 * ops, tensors, memory, gradients, terminal.
 *
 * Contract: a session writes candle-graph/trace/10 (spec restated in
 * shared/spec; docs/api.md has an example). Span ids are sN with s1 the root
 * span the session opens with the entrypoint as its name; ids are unique in
 * the session and increase within a thread (threads take ids in blocks, so
 * ids of concurrent threads interleave). Timestamps are nanoseconds since the
 * session opened, from one monotonic clock (calibrated TSC where the kernel
 * trusts it, CLOCK_MONOTONIC otherwise).
 *
 * Threads: every recording call may be made from any thread at once. Spans
 * nest per thread: wick_span_begin's parent is the innermost span this thread
 * has open (the root s1 when none), and a span ends on the thread that began
 * it. Calls on the hot path (span begin/end, the _interned variants) take no
 * lock, allocate nothing and make no system call. wick_session_close must not
 * race with recording calls.
 *
 * Records go as binary records to the session's shared-memory ring (see
 * wick-ring.h and docs/ring.md); a writer thread formats them as JSONL when
 * WickSessionOptions.jsonl_path is set.
 */
#pragma once

#if !defined(WICK_INSIDE) && !defined(WICK_COMPILATION)
#error "Only <wick/wick.h> can be included directly."
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wick-version-macros.h"

WICK_BEGIN_DECLS

/* What kind of failure a WickError reports; the sentence says the rest.
 * Callers decide on the code, never on the text of the message. */
typedef enum
{
  WICK_ERROR_NONE = 0,         /* no error (a WickError nothing was written to) */
  WICK_ERROR_FAILED,           /* anything not below, e.g. a CUDA call that failed */
  WICK_ERROR_INVALID_ARGUMENT, /* the caller's arguments, record, options or metadata */
  WICK_ERROR_INVALID_DATA,     /* malformed input read from a file, socket or ring */
  WICK_ERROR_NOT_FOUND,        /* no such module, stage, window, file */
  WICK_ERROR_EXISTS,           /* the name is already registered */
  WICK_ERROR_STATE,            /* not now: finished, already begun, spans open, dropped module */
  WICK_ERROR_BUSY,             /* in use, or every slot taken */
  WICK_ERROR_TIMED_OUT,        /* waited for a reader or a user and gave up */
  WICK_ERROR_DROPPED,          /* the record was dropped: ring full under the drop policy */
  WICK_ERROR_NO_SPACE,         /* a fixed-size table or arena is full */
  WICK_ERROR_NO_MEMORY,        /* an allocation failed */
  WICK_ERROR_UNSUPPORTED,      /* not built in or not available here (CUDA, a format version) */
  WICK_ERROR_PERMISSION,       /* refused for safety or by the system: another owner, a mode, EACCES */
  WICK_ERROR_IO,               /* a system call failed; the sentence names it and errno's text */
  WICK_ERROR_WRONG_THREAD,     /* a span ended on a thread that did not begin it */
} WickErrorCode;

/* Filled by every call that can fail. Initialise it with {0} (or leave it
 * uninitialised: a failing call writes both fields). */
typedef struct
{
  char message[512]; /* a sentence naming the place and the reason */
  WickErrorCode code;
} WickError;

typedef struct WickSession WickSession;

typedef enum
{
  WICK_PHASE_TRAIN,
  WICK_PHASE_INFER
} WickPhase;
typedef enum
{
  WICK_TIMING_HOST,
  WICK_TIMING_DEVICE_SYNCHRONIZED
} WickTimingMode;
typedef enum
{
  WICK_COVERAGE_NONE,
  WICK_COVERAGE_PARTIAL,
  WICK_COVERAGE_COMPLETE
} WickCoverage;
typedef enum
{
  WICK_SCOPE_UNKNOWN,
  WICK_SCOPE_PROFILED_WORK,
  WICK_SCOPE_PRODUCTION_EQUIVALENT,
} WickMeasurementScope;
typedef enum
{
  WICK_SPAN_FUNCTION,
  WICK_SPAN_OP,
  WICK_SPAN_MODULE
} WickSpanKind;
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
typedef enum
{
  WICK_MEMORY_ALLOC,
  WICK_MEMORY_FREE
} WickMemoryAction;
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

WICK_AVAILABLE_IN_1_0
bool wick_gradient_manifest_sha256 (const WickExpectedGradient *expected, size_t n_expected,
                                    char out[WICK_SHA256_TEXT_LEN], WickError *error);

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
  uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
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
  uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
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
  const char *correlation_id; /* optional: "<entrypoint>/update-<step>" (train) or
                               "<entrypoint>/inference-<step>", as candle-graph */
  uint64_t _wick_reserved[8]; /* room to grow: must be zero (initialise with {0}) */
} WickRunInfo;

typedef struct
{
  const char *jsonl_path; /* optional: write the trace to this file */
  bool strict;            /* pure trace/10: no wick_ records in the file */
  WickRingPolicy policy;  /* of the live ring */
  size_t ring_bytes;   /* per producer thread; 0: the default (4 MiB); a power of two >= 256 KiB */
  bool enable_control; /* listen on the control socket (also WICK_CONTROL=1) */
  size_t max_threads;  /* threads recording at once; 0: the default (32) */
  size_t string_arena_bytes; /* interned strings; 0: the default (1 MiB) */
  /* A hold reader (wick_ring_reader_new_hold) that holds the producer back
   * without draining for longer than this is detached (recorded as a
   * wick_reader_detached record, its losses counted): 0: the environment's
   * WICK_HOLD_TIMEOUT_MS, else the default 2000 ms; UINT64_MAX: never. */
  uint64_t hold_timeout_ms;
  uint64_t _wick_reserved[7]; /* room to grow: must be zero (initialise with {0}) */
} WickSessionOptions;

/* ---------------------------------------------------------------------------
 * Gradient contracts (spec §7.3, §7.4)
 */

/* Builds an exact contract: validated with candle-graph's rules (the error is
 * the spec's sentence, e.g. "gradient manifest must not be empty") and with its
 * manifest digest computed now. The arrays and strings are copied. */
WICK_AVAILABLE_IN_1_0
WickGradientContract *wick_gradient_contract_new (const WickExpectedGradient *expected,
                                                  size_t n_expected,
                                                  const WickGradientFamily *families,
                                                  size_t n_families, WickError *error);
WICK_AVAILABLE_IN_1_0
void wick_gradient_contract_free (WickGradientContract *contract);
WICK_AVAILABLE_IN_1_0
WickGradientContract *wick_gradient_contract_copy (const WickGradientContract *contract);
/* "sha256:<64 hex>" */
WICK_AVAILABLE_IN_1_0
const char *wick_gradient_contract_get_digest (const WickGradientContract *contract);
WICK_AVAILABLE_IN_1_0
size_t wick_gradient_contract_get_n_expected (const WickGradientContract *contract);
WICK_AVAILABLE_IN_1_0
const WickExpectedGradient *
wick_gradient_contract_get_expected (const WickGradientContract *contract, size_t index);
WICK_AVAILABLE_IN_1_0
size_t wick_gradient_contract_get_n_families (const WickGradientContract *contract);
WICK_AVAILABLE_IN_1_0
const WickGradientFamily *wick_gradient_contract_get_family (const WickGradientContract *contract,
                                                             size_t index);

/* The gradient capture plan: named parameters -> keys sorted ascending (byte
 * order) -> the validated exact contract. assign_family names the family of a
 * key (returns a string that stays valid for the call; NULL or blank makes the
 * plan fail). Refuses duplicate keys and an empty list with the contract's
 * sentences. */
typedef struct WickGradientPlan WickGradientPlan;
typedef const char *(*WickFamilyFunc) (const char *key, void *user_data);

WICK_AVAILABLE_IN_1_0
WickGradientPlan *wick_gradient_plan_new (const char *root, const char *const *keys, size_t n_keys,
                                          WickFamilyFunc assign_family, void *user_data,
                                          const WickGradientFamily *families, size_t n_families,
                                          WickError *error);
WICK_AVAILABLE_IN_1_0
void wick_gradient_plan_free (WickGradientPlan *plan);
WICK_AVAILABLE_IN_1_0
const char *wick_gradient_plan_get_root (const WickGradientPlan *plan);
/* Put this into WickCaptureContract.gradient_contract with gradients = complete. */
WICK_AVAILABLE_IN_1_0
const WickGradientContract *wick_gradient_plan_get_contract (const WickGradientPlan *plan);
WICK_AVAILABLE_IN_1_0
size_t wick_gradient_plan_get_n_keys (const WickGradientPlan *plan);
/* Manifest order (sorted). */
WICK_AVAILABLE_IN_1_0
const char *wick_gradient_plan_get_key (const WickGradientPlan *plan, size_t index);
/* Index of a key in manifest order, or -1. */
WICK_AVAILABLE_IN_1_0
long wick_gradient_plan_find_key (const WickGradientPlan *plan, const char *key);

/* What one parameter's gradient looked like after backward. */
typedef struct
{
  bool has_gradient; /* false: no gradient reached it (state missing) */
  double norm;       /* L2 norm when has_gradient */
} WickParameterGradient;

/* Records exactly one gradient per manifest entry, in manifest order.
 * gradients[i] belongs to wick_gradient_plan_get_key (plan, i). State:
 * no gradient -> missing; non-finite norm -> non_finite; 0 -> zero (norm 0.0);
 * else present with the norm. */
WICK_AVAILABLE_IN_1_0
bool wick_gradient_plan_record (const WickGradientPlan *plan, WickSession *session,
                                const WickParameterGradient *gradients, size_t n_gradients,
                                WickError *error);

/* ---------------------------------------------------------------------------
 * Sessions
 */

/* Validates run metadata and contract as candle-graph does and refuses with a
 * sentence naming the field (e.g. "run metadata: capture_step must be one-based
 * and greater than zero"); options may be NULL (ring only, drop policy). Opens
 * the root span s1 named after the entrypoint at time 0. */
WICK_AVAILABLE_IN_1_0
WickSession *wick_session_open (const WickRunInfo *run, const WickCaptureContract *contract,
                                const WickSessionOptions *options, WickError *error);

/* Closes s1 and writes a complete terminal at the same time; refuses while a
 * span other than s1 is open ("cannot finish trace with N nested spans still
 * open"). Waits until the JSONL file has every record. */
WICK_AVAILABLE_IN_1_0
bool wick_session_finish (WickSession *session, WickError *error);
/* Writes a failed terminal with the reason (not blank); open spans stay open. */
WICK_AVAILABLE_IN_1_0
bool wick_session_finish_failed (WickSession *session, const char *reason, WickError *error);
/* Finishes failed ("session closed before finish") when neither was called,
 * stops the writer, frees everything. NULL is ignored. */
WICK_AVAILABLE_IN_1_0
void wick_session_close (WickSession *session);

/* Nanoseconds since the session opened, on the session clock. */
WICK_AVAILABLE_IN_1_0
uint64_t wick_session_now_ns (WickSession *session);

/* Accessors (valid until close). */
WICK_AVAILABLE_IN_1_0
int wick_session_get_pid (WickSession *session);
WICK_AVAILABLE_IN_1_0
const char *wick_session_get_program (WickSession *session);
WICK_AVAILABLE_IN_1_0
const char *wick_session_get_entrypoint (WickSession *session);
WICK_AVAILABLE_IN_1_0
const char *wick_session_get_run_id (WickSession *session);
/* Wall-clock time the session opened, ns since the Unix epoch. */
WICK_AVAILABLE_IN_1_0
uint64_t wick_session_get_start_unix_ns (WickSession *session);
WICK_AVAILABLE_IN_1_0
WickRingPolicy wick_session_get_policy (WickSession *session);
WICK_AVAILABLE_IN_1_0
bool wick_session_get_strict (WickSession *session);
/* A read-only descriptor of the memfd holding the ring (owned by the
 * session; dup it to keep it). The memfd is sealed: no process, whatever
 * descriptor it has, can write it, map it writable or resize it. */
WICK_AVAILABLE_IN_1_0
int wick_session_get_ring_fd (WickSession *session);
/* The cursors memfd, where hold readers publish their positions
 * (wick_ring_reader_new_hold); the producer bounds-checks every word of it.
 * Give it only to a reader that may hold the producer back. */
WICK_AVAILABLE_IN_1_0
int wick_session_get_cursors_fd (WickSession *session);
/* Records lost so far: dropped by the producer (drop policy, all threads)
 * and lines the JSONL writer could not write (a full disk). */
WICK_AVAILABLE_IN_1_0
uint64_t wick_session_get_dropped (WickSession *session);
/* Whether finish or finish_failed was called. */
WICK_AVAILABLE_IN_1_0
bool wick_session_is_finished (WickSession *session);

/* Names the calling thread in every session it records into (the name of
 * its wick_thread record, at most 63 bytes, cut on a character boundary).
 * Without it a thread is named by pthread_getname_np. Takes effect for
 * sessions the thread records into later and, at once (a new wick_thread
 * record), for those it already records into. NULL or "" goes back to the
 * OS name. */
WICK_AVAILABLE_IN_1_0
void wick_thread_set_name (const char *name);

/* ---------------------------------------------------------------------------
 * Spans (hot path). A thread that records many spans can take its handle once
 * and use the inline calls of wick-thread-handle.h instead (the same records).
 */

/* An interned string: a handle to a string stored once in the ring's string
 * arena. 0 is invalid. Interning takes a lock and may allocate: do it once,
 * outside the loop. Returns 0 when the arena is full. */
typedef uint32_t WickString;
WICK_AVAILABLE_IN_1_0
WickString wick_intern (WickSession *session, const char *string);

/* Begin a span whose parent is the innermost span open on this thread (s1
 * when none). Returns its id, or 0 when the span could not be recorded (ring
 * full under the drop policy, or nesting deeper than 128 on one thread; both
 * counted in wick_session_get_dropped). A name the string arena has no room
 * for (or a 0 handle) does not lose the span: it is recorded under the name
 * "(name not recorded: string arena full)", and stderr says so once and
 * again at finish with the count. wick_span_end (session, 0) is a no-op, so
 * callers need not check. */
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin (WickSession *session, const char *name, WickSpanKind kind);
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin_step (WickSession *session, const char *name, WickSpanKind kind,
                                 WickStep step);
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin_child (WickSession *session, WickSpanId parent, const char *name,
                                  WickSpanKind kind, WickStep step);
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin_interned (WickSession *session, WickString name, WickSpanKind kind);
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin_step_interned (WickSession *session, WickString name, WickSpanKind kind,
                                          WickStep step);
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_begin_child_interned (WickSession *session, WickSpanId parent, WickString name,
                                           WickSpanKind kind, WickStep step);
/* The measured region (measured:true, kind function). A session has exactly
 * one: a second call fails ("the measured region was already begun"). */
WICK_AVAILABLE_IN_1_0
WickSpanId wick_measurement_begin (WickSession *session, const char *name, WickError *error);
/* Ends a span this thread began (inner spans it still has open stay open).
 * Returns false for 0 and for a span not open on this thread; a span another
 * thread began stays open there, and that is an error nothing leaves silent:
 * said on stderr (the first time), counted (wick_session_get_foreign_span_ends,
 * the terminal's "wick_span_ends_foreign" key), recorded (a
 * wick_span_end_foreign record with the span and both threads, the first 64
 * times) and said again at finish. wick_span_end_checked says why in an
 * error the program reads. */
WICK_AVAILABLE_IN_1_0
bool wick_span_end (WickSession *session, WickSpanId span);
/* wick_span_end with the reason on false: WICK_ERROR_WRONG_THREAD "span sN
 * was begun on wick thread A and cannot be ended on wick thread B: a span ends
 * on the thread that began it (it stays open there)" (counted and recorded as
 * above, not printed: the caller has it), WICK_ERROR_NOT_FOUND for a span
 * open on no thread (ended already), WICK_ERROR_DROPPED for 0 (a begin that
 * was not recorded), WICK_ERROR_INVALID_ARGUMENT without a session. */
WICK_AVAILABLE_IN_1_0
bool wick_span_end_checked (WickSession *session, WickSpanId span, WickError *error);
/* How many span ends came from a thread that did not begin the span. */
WICK_AVAILABLE_IN_1_0
uint64_t wick_session_get_foreign_span_ends (WickSession *session);
/* wick_span_end that also gives the duration it recorded (for call edges,
 * whose host_duration_ns must equal the target span's duration). */
WICK_AVAILABLE_IN_1_0
bool wick_span_end_timed (WickSession *session, WickSpanId span, uint64_t *duration_ns);
/* The innermost span open on this thread, or 1 (the root). */
WICK_AVAILABLE_IN_1_0
WickSpanId wick_span_current (WickSession *session);

/* ---------------------------------------------------------------------------
 * Records (off the hot path: no lock or allocation either, but they copy
 * their strings into the ring). Each returns false with a sentence when the
 * record is invalid or too large (16 KiB encoded), and false with "dropped"
 * when the ring was full under the drop policy.
 */

#define WICK_NOW UINT64_MAX /* a timestamp meaning "now, on the session clock" */

typedef struct
{
  WickSpanId span;
  const char *op_name;
  const char *const *inputs;
  size_t n_inputs;
  const char *output; /* optional */
  const uint64_t *shape;
  size_t rank;
  const char *dtype;
  const char *device;
  uint64_t duration_ns;
  uint64_t timestamp_ns;       /* 0: now - duration_ns (as candle-graph) */
  bool has_output_dense_bytes; /* false: product(shape) x dtype size when the dtype is known */
  uint64_t output_dense_bytes;
  uint64_t input_dense_bytes;
  uint64_t _wick_reserved[4]; /* room to grow: must be zero (initialise with {0}) */
} WickOpRecord;

typedef struct
{
  WickSpanId span;
  const char *tensor_id;
  const char *label; /* optional */
  const uint64_t *shape;
  size_t rank;
  const char *dtype;
  const char *device;
  bool requires_grad;
  bool has_dense_bytes; /* false: derived from shape and dtype when known */
  uint64_t dense_bytes;
  WickMemoryCategory category;
  uint64_t _wick_reserved[4]; /* room to grow: must be zero (initialise with {0}) */
} WickTensorRecord;

typedef struct
{
  WickSpanId span;
  const char *label;
  const uint64_t *shape;
  size_t rank;
  const char *dtype;
  uint64_t elements;
  uint64_t non_finite;
  double rms;
  double abs_max;
  double mean;
  uint64_t _wick_reserved[4]; /* room to grow: must be zero (initialise with {0}) */
} WickTensorStatsRecord;

typedef struct
{
  uint64_t timestamp_ns; /* WICK_NOW: now */
  const char *storage_id;
  const char *tensor_id;
  WickSpanId span;
  const char *op_name; /* optional */
  const char *device;
  uint64_t bytes;
  WickMemoryAction action;
  const uint64_t *shape;
  size_t rank;
  const char *dtype;
  WickMemoryCategory category;
  /* The allocation's device address (a CUDA storage's data_ptr()), which
   * lets an allocator snapshot's blocks be matched to this record; 0: not
   * known (written as no `wick_address`). */
  uint64_t address;
  uint64_t _wick_reserved[3]; /* room to grow: must be zero (initialise with {0}) */
} WickMemoryRecord;

typedef struct
{
  uint64_t timestamp_ns; /* WICK_NOW: now */
  const char *device;
  bool has_used_bytes, has_free_bytes, has_reserved_bytes, has_capacity_bytes;
  uint64_t used_bytes, free_bytes, reserved_bytes, capacity_bytes;
  uint64_t _wick_reserved[4]; /* room to grow: must be zero (initialise with {0}) */
} WickDeviceMemoryRecord;

typedef struct
{
  WickSpanId span;
  const char *device;
  const char *stream_id;
  const char *clock_id;
  const char *backend;
  uint64_t start_ns; /* device clock */
  uint64_t duration_ns;
  uint64_t _wick_reserved[4]; /* room to grow: must be zero (initialise with {0}) */
} WickDeviceIntervalRecord;

WICK_AVAILABLE_IN_1_0
bool wick_session_record_op (WickSession *session, const WickOpRecord *op, WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_session_record_tensor (WickSession *session, const WickTensorRecord *tensor,
                                 WickError *error);
/* Refuses what candle-graph's reader rejects (spec §3.6). */
WICK_AVAILABLE_IN_1_0
bool wick_session_record_tensor_stats (WickSession *session, const WickTensorStatsRecord *stats,
                                       WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_session_record_memory (WickSession *session, const WickMemoryRecord *memory,
                                 WickError *error);
/* Refuses a sample with no observation. */
WICK_AVAILABLE_IN_1_0
bool wick_session_record_device_memory (WickSession *session, const WickDeviceMemoryRecord *sample,
                                        WickError *error);
/* Refuses a zero duration. */
WICK_AVAILABLE_IN_1_0
bool wick_session_record_device_interval (WickSession *session,
                                          const WickDeviceIntervalRecord *interval,
                                          WickError *error);
WICK_AVAILABLE_IN_1_0
bool wick_session_record_call_edge (WickSession *session, WickSpanId from, WickSpanId to,
                                    uint64_t host_duration_ns, WickError *error);
/* Refuses empty tensor ids. */
WICK_AVAILABLE_IN_1_0
bool wick_session_record_data_edge (WickSession *session, const char *from_tensor,
                                    const char *to_tensor, WickError *error);
/* event_id gradient-N in recording order. Refuses blank root/key and a norm
 * inconsistent with the state: present needs a finite norm > 0, zero needs
 * +0.0, missing and non_finite need none (has_norm false). */
WICK_AVAILABLE_IN_1_0
bool wick_session_record_gradient (WickSession *session, const char *root, const char *key,
                                   WickGradientState state, bool has_norm, double norm,
                                   WickError *error);
/* A wick_mark record {"kind":"wick_mark","timestamp_ns":T,"label":L} (not in strict files). */
WICK_AVAILABLE_IN_1_0
bool wick_session_mark (WickSession *session, const char *label, WickError *error);

/* Fills elements, non_finite, rms, abs_max and mean from f32 data (double
 * accumulation). With any non-finite element the aggregates are 0.0 and
 * non_finite counts them; n == 0 gives all zeros (candle-graph's producer). */
WICK_AVAILABLE_IN_1_0
void wick_tensor_stats_compute_f32 (const float *data, size_t n, WickTensorStatsRecord *stats);

/* Bytes of one element of a dtype (spec §3.4, case-insensitive, trimmed), 0 when unknown. */
WICK_AVAILABLE_IN_1_0
size_t wick_dtype_size (const char *dtype);
/* product(shape) x dtype size; false when the dtype is unknown or it overflows. */
WICK_AVAILABLE_IN_1_0
bool wick_dense_bytes (const uint64_t *shape, size_t rank, const char *dtype, uint64_t *out);

/* Spellings used in trace/10 ("train", "forward", "parameter", ...). */
WICK_AVAILABLE_IN_1_0
const char *wick_phase_to_string (WickPhase phase);
WICK_AVAILABLE_IN_1_0
const char *wick_timing_mode_to_string (WickTimingMode mode);
WICK_AVAILABLE_IN_1_0
const char *wick_coverage_to_string (WickCoverage coverage);
WICK_AVAILABLE_IN_1_0
const char *wick_measurement_scope_to_string (WickMeasurementScope scope);
WICK_AVAILABLE_IN_1_0
const char *wick_span_kind_to_string (WickSpanKind kind);
WICK_AVAILABLE_IN_1_0
const char *wick_step_to_string (WickStep step); /* NULL for WICK_STEP_NONE */
WICK_AVAILABLE_IN_1_0
const char *wick_memory_category_to_string (WickMemoryCategory category);
WICK_AVAILABLE_IN_1_0
const char *wick_memory_action_to_string (WickMemoryAction action);
WICK_AVAILABLE_IN_1_0
const char *wick_gradient_state_to_string (WickGradientState state);
WICK_AVAILABLE_IN_1_0
const char *wick_gradient_expectation_to_string (WickGradientExpectation expectation);
WICK_AVAILABLE_IN_1_0
const char *wick_ring_policy_to_string (WickRingPolicy policy);
/* "invalid-argument", "dropped", ...; NULL for an unknown value. */
WICK_AVAILABLE_IN_1_0
const char *wick_error_code_to_string (WickErrorCode code);

WICK_END_DECLS
