/* wick-stage.c — a registered stage: its windows and output, its run path
 * (graph when certified, eager otherwise) and its capture and release.
 *
 * Concurrency. The host runs a stage from its own thread(s) with
 * wick_stage_run(); capture and release may come from any thread (the
 * control socket's). The run path takes no lock:
 *
 *   run:     active_runs += 1; if exclusive { active_runs -= 1; wait on mutex;
 *            retry } ... launch exec or enqueue ...; active_runs -= 1
 *   capture: lock mutex; exclusive = 1; wait until active_runs == 0; ...;
 *            publish exec; exclusive = 0; unlock mutex
 *
 * With sequentially consistent atomics either the runner sees `exclusive`
 * and backs off, or the capturer sees the runner's count and waits for it:
 * no run (nor window write, which enters the same way) overlaps a capture or
 * a release, and a run held back sleeps on the
 * mutex, not in a spin. The exec pointer is published with release order and
 * read with acquire order.
 */
#include "wick-stage-private.h"

#include "wick-stage-device.h"

#include "wick-session-private.h"

#include "common/wick-dtype-table.h"
#include "common/wick-json.h"

#include <stdarg.h>

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/wick-error-private.h"

#define STAGE_NAME_MAX 128

typedef struct
{
  char *name;
  void *data;
  WickStageDType dtype;
  int64_t shape[WICK_STAGE_MAX_RANK];
  size_t rank;
  size_t elements;
  size_t bytes;
} StageBuffer;

struct WickStage
{
  WickSession *session;
  char *name;
  WickStageEnqueueFunc enqueue;
  WickStageReferenceFunc reference;
  void *user_data;
  void (*destroy_user_data) (void *user_data);
  StageBuffer windows[WICK_STAGE_MAX_WINDOWS];
  size_t n_windows;
  StageBuffer output;
  bool on_device; /* registered while a CUDA device was available */
  int device;

  _Atomic (void *) exec;
  _Atomic (void *) last_stream;
  atomic_uint active_runs;
  atomic_bool exclusive;
  atomic_int state;
  _Atomic (void *) failed_exec; /* a graph whose launch failed, destroyed later */

  pthread_mutex_t mutex; /* capture and release; the certificate below */
  WickCertification cert;
  bool has_cert;

  /* Stages captured by their host (wick_session_register_host_stage): a
   * capture asked from another thread is a request the host takes at its next
   * call of the stage; `done` wakes the asker. Under `mutex`. */
  bool host_captured;
  bool pending;
  WickCaptureOptions pending_options;
  uint64_t completed; /* captures completed so far */
  pthread_cond_t done;
  /* wick_stage_note_eager_timing() for the next completed capture */
  WickEagerRecording eager_recording;
  double eager_instrumented_ms; /* median, NaN when not timed */
  /* the span of the capture a host took (wick_stage_take_capture_request),
   * ended by its completion on the same thread; under `mutex` */
  WickSpanId capture_span;
  pthread_t capture_thread;
};

/* The stage windows' dtypes are written in the trace's spelling (common/wick-dtype-table.h). */
const char *
wick_stage_dtype_name (WickStageDType dtype)
{
  const WickDtypeRow *row = wick_dtype_row_for_stage ((int)dtype);
  return row != NULL ? row->trace : NULL;
}

size_t
wick_stage_dtype_size (WickStageDType dtype)
{
  const WickDtypeRow *row = wick_dtype_row_for_stage ((int)dtype);
  return row != NULL ? row->size : 0;
}

/* "[64, 64]" */
static void
wick_stage_format_shape (char *buffer, size_t size, const int64_t *shape, size_t rank)
{
  size_t used = (size_t)snprintf (buffer, size, "[");
  for (size_t i = 0; i < rank && used < size; i++)
    used += (size_t)snprintf (buffer + used, size - used, "%s%lld", i > 0 ? ", " : "",
                              (long long)shape[i]);
  if (used < size)
    snprintf (buffer + used, size - used, "]");
}

void
wick_capture_options_init (WickCaptureOptions *options)
{
  *options = (WickCaptureOptions){ 0 };
  options->warmup = 3;
  options->gate_cos = 0.999;
  options->min_speedup = 1.02;
  options->timing_rounds = 7;
  options->timing_iterations = 20;
}

bool
wick_capture_options_validate (const WickCaptureOptions *options, WickCaptureOptions *out,
                               WickError *error)
{
  WickCaptureOptions defaults;
  wick_capture_options_init (&defaults);
  *out = options != NULL ? *options : defaults;
  if (!WICK_CHECK_RESERVED (out, "WickCaptureOptions", error))
    return false;
  if (!(out->gate_cos >= 0.0 && out->gate_cos <= 1.0))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture options: gate_cos must be between 0 and 1, got %g",
                       out->gate_cos);
      return false;
    }
  if (!(out->min_speedup >= 0.0 && out->min_speedup <= 1000.0))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture options: min_speedup must be between 0 and 1000, got %g",
                       out->min_speedup);
      return false;
    }
  if (out->warmup > 1000)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture options: warmup must be at most 1000, got %u", out->warmup);
      return false;
    }
  if (out->timing_rounds > 1000 || out->timing_iterations > 100000)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                       "capture options: at most 1000 timing rounds of 100000 iterations, got "
                       "%u rounds of %u",
                       out->timing_rounds, out->timing_iterations);
      return false;
    }
  if (out->timing_rounds == 0)
    out->timing_rounds = defaults.timing_rounds;
  if (out->timing_iterations == 0)
    out->timing_iterations = defaults.timing_iterations;
  return true;
}

/* Copies and validates one buffer description; `what` names it in errors. */
static bool
stage_buffer_init (StageBuffer *buffer, const WickStageBuffer *from, const char *stage,
                   const char *what, WickError *error)
{
  if (wick_stage_dtype_size (from->dtype) == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %s has an unknown dtype (%d)", stage, what,
                       (int)from->dtype);
      return false;
    }
  if (from->data == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %s has no data pointer", stage, what);
      return false;
    }
  if (from->rank > WICK_STAGE_MAX_RANK || (from->rank > 0 && from->shape == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %s has rank %zu, must be at most %d with a shape", stage,
                       what, from->rank, WICK_STAGE_MAX_RANK);
      return false;
    }
  size_t elements = 1;
  for (size_t i = 0; i < from->rank; i++)
    {
      int64_t extent = from->shape[i];
      if (extent < 1 || (uint64_t)extent > SIZE_MAX / elements / 8)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %s has shape[%zu] = %lld, must be >= 1", stage, what,
                           i, (long long)extent);
          return false;
        }
      buffer->shape[i] = extent;
      elements *= (size_t)extent;
    }
  buffer->name = from->name != NULL ? strdup (from->name) : NULL;
  buffer->data = from->data;
  buffer->dtype = from->dtype;
  buffer->rank = from->rank;
  buffer->elements = elements;
  buffer->bytes = elements * wick_stage_dtype_size (from->dtype);
  return true;
}

static bool
stage_check_name (const char *name, const char *stage, const char *what, WickError *error)
{
  if (name == NULL || name[0] == '\0' || strlen (name) >= STAGE_NAME_MAX)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %s needs a name of 1 to %d bytes", stage, what,
                       STAGE_NAME_MAX - 1);
      return false;
    }
  return true;
}

static bool
stage_add_windows (WickStage *stage, const WickStageInfo *info, WickError *error)
{
  if (info->n_windows > WICK_STAGE_MAX_WINDOWS || (info->n_windows > 0 && info->windows == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %zu windows, at most %d are allowed", stage->name,
                       info->n_windows, WICK_STAGE_MAX_WINDOWS);
      return false;
    }
  for (size_t i = 0; i < info->n_windows; i++)
    {
      const WickStageBuffer *from = &info->windows[i];
      char what[STAGE_NAME_MAX + 32];
      snprintf (what, sizeof what, "window %zu", i);
      if (!stage_check_name (from->name, stage->name, what, error))
        return false;
      snprintf (what, sizeof what, "window '%s'", from->name);
      for (size_t j = 0; j < i; j++)
        if (strcmp (info->windows[j].name, from->name) == 0)
          {
            wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': window '%s' is declared twice", stage->name,
                             from->name);
            return false;
          }
      if (!stage_buffer_init (&stage->windows[i], from, stage->name, what, error))
        return false;
      stage->n_windows = i + 1;
    }
  return true;
}

static bool
stage_is_float (WickStageDType dtype)
{
  return dtype == WICK_STAGE_DTYPE_F32 || dtype == WICK_STAGE_DTYPE_F16
         || dtype == WICK_STAGE_DTYPE_BF16 || dtype == WICK_STAGE_DTYPE_F64;
}

static WickStage *
stage_new (WickSession *session, const WickStageInfo *info, bool host_captured, WickError *error)
{
  if (info == NULL || !WICK_CHECK_RESERVED (info, "WickStageInfo", error)
      || !stage_check_name (info->name, "?", "the stage", error))
    return NULL;
  if (info->enqueue == NULL && !host_captured)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': the enqueue callback is required", info->name);
      return NULL;
    }
  if (!stage_is_float (info->output.dtype))
    {
      const char *dtype = wick_stage_dtype_name (info->output.dtype);
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': the output must be f32, f16, bf16 or f64, got %s",
                       info->name, dtype != NULL ? dtype : "an unknown dtype");
      return NULL;
    }
  WickStage *stage = calloc (1, sizeof *stage);
  if (stage == NULL || (stage->name = strdup (info->name)) == NULL)
    {
      free (stage);
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "stage '%s': out of memory", info->name);
      return NULL;
    }
  pthread_mutex_init (&stage->mutex, NULL);
  pthread_cond_init (&stage->done, NULL);
  stage->session = session;
  stage->eager_recording = WICK_EAGER_RECORDING_ACTIVE;
  stage->eager_instrumented_ms = NAN;
  if (!stage_add_windows (stage, info, error)
      || !stage_buffer_init (&stage->output, &info->output, stage->name, "the output", error))
    {
      wick_stage_free (stage);
      return NULL;
    }
  stage->enqueue = info->enqueue;
  stage->reference = info->reference;
  stage->user_data = info->user_data;
  stage->destroy_user_data = info->destroy_user_data;
  stage->on_device = wick_stage_device_available (NULL, 0);
  stage->device = stage->on_device ? wick_stage_device_current () : -1;
  atomic_init (&stage->exec, NULL);
  atomic_init (&stage->last_stream, NULL);
  atomic_init (&stage->active_runs, 0);
  atomic_init (&stage->exclusive, false);
  atomic_init (&stage->state, WICK_STAGE_EAGER);
  atomic_init (&stage->failed_exec, NULL);
  stage->host_captured = host_captured;
  return stage;
}

WickStage *
wick_stage_new (WickSession *session, const WickStageInfo *info, WickError *error)
{
  return stage_new (session, info, false, error);
}

WickStage *
wick_stage_new_host (WickSession *session, const WickStageInfo *info, WickError *error)
{
  return stage_new (session, info, true, error);
}

void
wick_stage_free (WickStage *stage)
{
  if (stage == NULL)
    return;
  wick_stage_device_destroy (atomic_load (&stage->exec));
  wick_stage_device_destroy (atomic_load (&stage->failed_exec));
  if (stage->destroy_user_data != NULL)
    stage->destroy_user_data (stage->user_data);
  for (size_t i = 0; i < stage->n_windows; i++)
    free (stage->windows[i].name);
  free (stage->output.name);
  pthread_cond_destroy (&stage->done);
  pthread_mutex_destroy (&stage->mutex);
  free (stage->name);
  free (stage);
}

const char *
wick_stage_get_name (WickStage *stage)
{
  return stage != NULL ? stage->name : NULL;
}

WickStageState
wick_stage_get_state (WickStage *stage)
{
  return stage != NULL ? (WickStageState)atomic_load (&stage->state) : WICK_STAGE_EAGER;
}

size_t
wick_stage_get_n_windows (WickStage *stage)
{
  return stage != NULL ? stage->n_windows : 0;
}

bool
wick_stage_get_window (WickStage *stage, size_t index, WickStageBuffer *out)
{
  if (stage == NULL || index >= stage->n_windows)
    return false;
  const StageBuffer *window = &stage->windows[index];
  out->name = window->name;
  out->data = window->data;
  out->dtype = window->dtype;
  out->shape = window->shape;
  out->rank = window->rank;
  return true;
}

bool
wick_stage_get_output (WickStage *stage, WickStageBuffer *out)
{
  if (stage == NULL)
    return false;
  out->name = NULL;
  out->data = stage->output.data;
  out->dtype = stage->output.dtype;
  out->shape = stage->output.shape;
  out->rank = stage->output.rank;
  return true;
}

bool
wick_stage_get_certification (WickStage *stage, WickCertification *out)
{
  if (stage == NULL)
    return false;
  pthread_mutex_lock (&stage->mutex);
  bool has = stage->has_cert;
  if (has)
    *out = stage->cert;
  pthread_mutex_unlock (&stage->mutex);
  return has;
}

bool
wick_cuda_available (WickError *why_not)
{
  char why[sizeof why_not->message];
  if (wick_stage_device_available (why, sizeof why))
    return true;
  wick_set_error (why_not, WICK_ERROR_UNSUPPORTED, "%s", why);
  return false;
}

/* --- run ----------------------------------------------------------------- */

static void
stage_enter_run (WickStage *stage)
{
  for (;;)
    {
      atomic_fetch_add (&stage->active_runs, 1);
      if (!atomic_load (&stage->exclusive))
        return;
      atomic_fetch_sub (&stage->active_runs, 1);
      pthread_mutex_lock (&stage->mutex);
      pthread_mutex_unlock (&stage->mutex);
    }
}

bool
wick_stage_run (WickStage *stage, void *stream, WickError *error)
{
  if (stage == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_run: no stage");
      return false;
    }
  if (stage->host_captured)
    {
      wick_set_error (error, WICK_ERROR_STATE, "stage '%s' is run by its host, not by wick_stage_run",
                       stage->name);
      return false;
    }
  stage_enter_run (stage);
  atomic_store_explicit (&stage->last_stream, stream, memory_order_relaxed);
  void *exec = atomic_load_explicit (&stage->exec, memory_order_acquire);
  bool ok = true;
  if (exec != NULL)
    {
      char why[256];
      ok = wick_stage_device_launch (exec, stream, why, sizeof why);
      if (!ok)
        {
          /* turn eager for good; the graph is destroyed by the next capture,
           * release or the session's end, never under a concurrent run */
          void *expected = exec;
          if (atomic_compare_exchange_strong (&stage->exec, &expected, NULL))
            {
              atomic_store (&stage->failed_exec, exec);
              atomic_store (&stage->state, WICK_STAGE_EAGER);
            }
          wick_set_error (error, WICK_ERROR_FAILED, "stage '%s': %s; it runs eager from now on", stage->name, why);
        }
    }
  if (exec == NULL || !ok)
    stage->enqueue (stream, stage->user_data);
  atomic_fetch_sub (&stage->active_runs, 1);
  return ok;
}

/* --- capture and release -------------------------------------------------- */

static void
stage_exclusive_begin (WickStage *stage)
{
  pthread_mutex_lock (&stage->mutex);
  atomic_store (&stage->exclusive, true);
  while (atomic_load (&stage->active_runs) != 0)
    sched_yield ();
}

static void
stage_exclusive_end (WickStage *stage)
{
  atomic_store (&stage->exclusive, false);
  pthread_mutex_unlock (&stage->mutex);
}

/* Destroys the current graph (and one whose launch failed). Exclusive only. */
static void
stage_drop_graphs (WickStage *stage)
{
  wick_stage_device_destroy (atomic_exchange (&stage->exec, NULL));
  wick_stage_device_destroy (atomic_exchange (&stage->failed_exec, NULL));
}

static void
stage_record (WickStage *stage, const char *kind, const char *fields)
{
  if (stage->session == NULL)
    return;
  WickError ignored;
  wick_session_record_extension (stage->session, kind, fields, &ignored);
}

/* A capture's span (docs/stages.md, "In the trace"): "stage capture: NAME"
 * on the capturing thread, from the capture's start to its certificate. The
 * wick_stage_capture record (the gates asked for) rides on its span_start,
 * the certificate on its span_end (docs/format.md, "Wick keys"): the records
 * are bound to the next span_start / span_end of this thread, so they are
 * written right before the span begins and ends. 0 without a session. */
static WickSpanId
stage_span_begin (WickStage *stage, const char *what, const WickCaptureOptions *options)
{
  if (stage->session == NULL)
    return 0;
  if (options != NULL)
    {
      WickJson json;
      wick_json_init (&json);
      wick_json_key (&json, "on");
      wick_json_string (&json, "span_start");
      wick_json_key (&json, "stage");
      wick_json_string (&json, stage->name);
      wick_json_key (&json, "gate_cos");
      wick_json_number (&json, options->gate_cos);
      wick_json_key (&json, "min_speedup");
      wick_json_number (&json, options->min_speedup);
      wick_json_key (&json, "warmup");
      wick_json_u64 (&json, options->warmup);
      if (!json.failed)
        stage_record (stage, "wick_stage_capture", json.data);
      wick_json_clear (&json);
    }
  char name[STAGE_NAME_MAX + 32];
  snprintf (name, sizeof name, "stage %s: %s", what, stage->name);
  return wick_span_begin (stage->session, name, WICK_SPAN_FUNCTION);
}

/* The stage's record on the span_end of @span (begun on this thread), then
 * the end; without a span, the record as it is. */
static void
stage_span_end (WickStage *stage, WickSpanId span, const char *kind, const char *fields)
{
  if (span == 0 || stage->session == NULL)
    {
      stage_record (stage, kind, fields);
      return;
    }
  WickJson bound;
  wick_json_init (&bound);
  wick_json_key (&bound, "on");
  wick_json_string (&bound, "span_end");
  wick_json_key (&bound, "span");
  wick_json_append (&bound, "\"s", 2);
  wick_json_u64 (&bound, span);
  wick_json_append (&bound, "\",", 2);
  wick_json_raw (&bound, fields);
  stage_record (stage, kind, bound.failed ? fields : bound.data);
  wick_json_clear (&bound);
  wick_span_end (stage->session, span);
}

static void
stage_record_certification (WickStage *stage, WickSpanId span, const WickCertification *cert)
{
  size_t size = 16384;
  char *fields = malloc (size);
  if (fields != NULL && wick_stage_certification_json (stage, cert, fields, size))
    stage_span_end (stage, span, "wick_stage_certification", fields);
  else if (span != 0)
    wick_span_end (stage->session, span);
  free (fields);
}

static void
stage_certification_init (WickStage *stage, const WickCaptureOptions *options,
                          WickCertification *cert)
{
  memset (cert, 0, sizeof *cert);
  snprintf (cert->stage, sizeof cert->stage, "%s", stage->name);
  cert->gate_cos = options->gate_cos;
  cert->min_speedup = options->min_speedup;
  cert->parity_checked = options->gate_cos > 0.0;
  cert->speedup_checked = options->min_speedup > 0.0;
  cert->warmup = options->warmup;
  cert->parity_cos = cert->max_abs = cert->p99_abs = NAN;
  cert->eager_ms = cert->replay_ms = NAN;
  cert->eager_recording = stage->host_captured ? WICK_EAGER_RECORDING_ACTIVE
                                               : WICK_EAGER_RECORDING_NONE;
  cert->eager_instrumented_ms = NAN;
  cert->speedup_median = cert->speedup_min = cert->speedup_max = NAN;
}

static bool stage_capture_by_host (WickStage *stage, const WickCaptureOptions *options,
                                   WickCertification *out, WickError *error);

bool
wick_stage_capture (WickStage *stage, const WickCaptureOptions *options, WickCertification *out,
                    WickError *error)
{
  WickCaptureOptions checked;
  if (stage == NULL || out == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_capture: no stage or no certificate to fill");
      return false;
    }
  if (!wick_capture_options_validate (options, &checked, error))
    return false;
  if (stage->host_captured)
    return stage_capture_by_host (stage, &checked, out, error);
  WickCertification cert;
  stage_certification_init (stage, &checked, &cert);
  WickSpanId span = stage_span_begin (stage, "capture", &checked);

  stage_exclusive_begin (stage);
  stage_drop_graphs (stage);
  char why[256];
  void *exec = NULL;
  if (!wick_stage_device_available (why, sizeof why))
    wick_gate_judge (&cert, why);
  else if (!stage->on_device)
    wick_gate_judge (&cert, "no CUDA device is available to this stage: it was registered "
                            "before CUDA could be used");
  else
    {
      WickStageWork work = {
        .name = stage->name,
        .enqueue = stage->enqueue,
        .reference = stage->reference,
        .user_data = stage->user_data,
        .output = stage->output.data,
        .output_dtype = stage->output.dtype,
        .output_elements = stage->output.elements,
        .device = stage->device,
      };
      exec = wick_stage_device_capture (&work, &checked, &cert);
    }
  atomic_store (&stage->state, exec != NULL ? WICK_STAGE_CAPTURED : WICK_STAGE_REFUSED);
  atomic_store_explicit (&stage->exec, exec, memory_order_release);
  stage->cert = cert;
  stage->has_cert = true;
  stage_exclusive_end (stage);

  stage_record_certification (stage, span, &cert);
  *out = cert;
  return true;
}

bool
wick_stage_release (WickStage *stage, WickError *error)
{
  if (stage == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_release: no stage");
      return false;
    }
  WickSpanId span = stage_span_begin (stage, "release", NULL);
  stage_exclusive_begin (stage);
  stage_drop_graphs (stage);
  atomic_store (&stage->state, WICK_STAGE_EAGER);
  stage_exclusive_end (stage);

  WickJson json;
  wick_json_init (&json);
  wick_json_key (&json, "stage");
  wick_json_string (&json, stage->name);
  if (!json.failed)
    stage_span_end (stage, span, "wick_stage_release", json.data);
  else if (span != 0)
    wick_span_end (stage->session, span);
  wick_json_clear (&json);
  return true;
}

/* --- windows -------------------------------------------------------------- */

static const StageBuffer *
stage_find_window (WickStage *stage, const char *name)
{
  for (size_t i = 0; i < stage->n_windows; i++)
    if (strcmp (stage->windows[i].name, name) == 0)
      return &stage->windows[i];
  return NULL;
}

static void
stage_unknown_window (WickStage *stage, const char *name, WickError *error)
{
  char names[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < stage->n_windows && used < sizeof names; i++)
    used += (size_t)snprintf (names + used, sizeof names - used, "%s%s", i > 0 ? ", " : "",
                              stage->windows[i].name);
  if (stage->n_windows == 0)
    wick_set_error (error, WICK_ERROR_NOT_FOUND, "stage '%s' has no window '%s': it declares no windows", stage->name,
                     name);
  else
    wick_set_error (error, WICK_ERROR_NOT_FOUND, "stage '%s' has no window '%s'; its windows are %s", stage->name, name,
                     names);
}

static bool
stage_same_shape (const StageBuffer *window, const int64_t *shape, size_t rank)
{
  if (window->rank != rank)
    return false;
  for (size_t i = 0; i < rank; i++)
    if (window->shape[i] != shape[i])
      return false;
  return true;
}

bool
wick_stage_check_window (WickStage *stage, const char *name, size_t n_bytes, WickStageDType dtype,
                         const int64_t *shape, size_t rank, WickError *error)
{
  if (stage == NULL || name == NULL || (rank > 0 && shape == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "wick_stage_check_window: stage, window name and shape are "
                              "required");
      return false;
    }
  const StageBuffer *window = stage_find_window (stage, name);
  if (window == NULL)
    {
      stage_unknown_window (stage, name, error);
      return false;
    }
  const char *mismatch = NULL;
  if (dtype != window->dtype)
    mismatch = "dtype";
  else if (rank > WICK_STAGE_MAX_RANK || !stage_same_shape (window, shape, rank))
    mismatch = "shape";
  else if (n_bytes != window->bytes)
    mismatch = "size";
  if (mismatch != NULL)
    {
      char want_shape[160], got_shape[160];
      wick_stage_format_shape (want_shape, sizeof want_shape, window->shape, window->rank);
      wick_stage_format_shape (got_shape, sizeof got_shape, shape,
                               rank <= WICK_STAGE_MAX_RANK ? rank : WICK_STAGE_MAX_RANK);
      const char *got_dtype = wick_stage_dtype_name (dtype);
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                       "window '%s' of stage '%s' refused a %s mismatch: expected %s %s (%zu "
                       "bytes), got %s %s%s (%zu bytes); a replay over a coerced write would be "
                       "silently wrong",
                       name, stage->name, mismatch, wick_stage_dtype_name (window->dtype),
                       want_shape, window->bytes, got_dtype != NULL ? got_dtype : "unknown dtype",
                       got_shape, rank > WICK_STAGE_MAX_RANK ? "..." : "", n_bytes);
      return false;
    }
  return true;
}

bool
wick_stage_write_window (WickStage *stage, const char *name, const void *data, size_t n_bytes,
                         WickStageDType dtype, const int64_t *shape, size_t rank, WickError *error)
{
  if (stage == NULL || name == NULL || data == NULL || (rank > 0 && shape == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_write_window: stage, window name, data and shape are "
                              "required");
      return false;
    }
  if (!wick_stage_check_window (stage, name, n_bytes, dtype, shape, rank, error))
    return false;
  const StageBuffer *window = stage_find_window (stage, name);
  /* a write is a use of the stage like a run: never in the middle of a capture,
   * whose reference and replay must read the same window contents */
  stage_enter_run (stage);
  bool ok = true;
  if (!stage->on_device)
    memmove (window->data, data, n_bytes);
  else
    {
      char why[256];
      void *stream = atomic_load_explicit (&stage->last_stream, memory_order_relaxed);
      ok = wick_stage_device_copy (window->data, data, n_bytes, stream, why, sizeof why);
      if (!ok)
        wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "window '%s' of stage '%s': %s", name, stage->name, why);
    }
  atomic_fetch_sub (&stage->active_runs, 1);
  return ok;
}

/* --- stages captured by their host ---------------------------------------- */

#define HOST_CAPTURE_WAIT_S 60

bool
wick_stage_is_host_captured (WickStage *stage)
{
  return stage != NULL && stage->host_captured;
}

/* wick_stage_capture() of a host stage: refused at once where no device can
 * capture; otherwise a request that the host takes at its next call of the
 * stage (wick_stage_take_capture_request), waited for here. */
static bool
stage_capture_by_host (WickStage *stage, const WickCaptureOptions *options, WickCertification *out,
                       WickError *error)
{
  char why[256];
  if (!wick_stage_device_available (why, sizeof why))
    {
      WickCertification cert;
      stage_certification_init (stage, options, &cert);
      WickSpanId span = stage_span_begin (stage, "capture", options);
      wick_gate_judge (&cert, why);
      pthread_mutex_lock (&stage->mutex);
      atomic_store (&stage->state, WICK_STAGE_REFUSED);
      stage->cert = cert;
      stage->has_cert = true;
      pthread_mutex_unlock (&stage->mutex);
      stage_record_certification (stage, span, &cert);
      *out = cert;
      return true;
    }
  pthread_mutex_lock (&stage->mutex);
  uint64_t before = stage->completed;
  stage->pending = true;
  stage->pending_options = *options;
  struct timespec deadline;
  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += HOST_CAPTURE_WAIT_S;
  int rc = 0;
  while (stage->completed == before && rc == 0)
    rc = pthread_cond_timedwait (&stage->done, &stage->mutex, &deadline);
  bool completed = stage->completed != before;
  if (completed)
    *out = stage->cert;
  pthread_mutex_unlock (&stage->mutex);
  if (!completed)
    wick_set_error (error, WICK_ERROR_TIMED_OUT,
                     "stage '%s' is captured by its host at its next call, and it was not called "
                     "within %d s; the request stays pending and its certificate goes to the trace",
                     stage->name, HOST_CAPTURE_WAIT_S);
  return completed;
}

void
wick_stage_set_capture_request (WickStage *stage, const WickCaptureOptions *options)
{
  pthread_mutex_lock (&stage->mutex);
  stage->pending = true;
  stage->pending_options = *options;
  pthread_mutex_unlock (&stage->mutex);
}

bool
wick_stage_capture_requested (WickStage *stage)
{
  if (stage == NULL || !stage->host_captured)
    return false;
  pthread_mutex_lock (&stage->mutex);
  bool pending = stage->pending;
  pthread_mutex_unlock (&stage->mutex);
  return pending;
}

bool
wick_stage_take_capture_request (WickStage *stage, WickCaptureOptions *options)
{
  if (stage == NULL || !stage->host_captured)
    return false;
  pthread_mutex_lock (&stage->mutex);
  bool pending = stage->pending;
  WickCaptureOptions taken;
  if (pending)
    {
      taken = stage->pending_options;
      *options = taken;
      stage->pending = false;
    }
  pthread_mutex_unlock (&stage->mutex);
  if (pending)
    {
      /* the capture's span begins here, on the host's thread, and ends with
       * its completion (wick_stage_complete_capture) */
      WickSpanId span = stage_span_begin (stage, "capture", &taken);
      pthread_mutex_lock (&stage->mutex);
      stage->capture_span = span;
      stage->capture_thread = pthread_self ();
      pthread_mutex_unlock (&stage->mutex);
    }
  return pending;
}

bool
wick_stage_begin_capture (WickStage *stage, const WickCaptureOptions *options, WickError *error)
{
  WickCaptureOptions checked;
  if (stage == NULL || !stage->host_captured)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_begin_capture: %s",
                      stage == NULL ? "no stage" : "the stage is not captured by its host");
  if (!wick_capture_options_validate (options, &checked, error))
    return false;
  pthread_mutex_lock (&stage->mutex);
  bool open = stage->capture_span != 0;
  pthread_mutex_unlock (&stage->mutex);
  if (open)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "stage '%s': a capture has begun and not completed yet "
                      "(wick_stage_complete_capture ends it)",
                      stage->name);
  /* as a taken request's: the span begins here, on the host's thread, and
   * ends with the completion */
  WickSpanId span = stage_span_begin (stage, "capture", &checked);
  pthread_mutex_lock (&stage->mutex);
  stage->capture_span = span;
  stage->capture_thread = pthread_self ();
  pthread_mutex_unlock (&stage->mutex);
  return true;
}

const char *
wick_eager_recording_name (WickEagerRecording recording)
{
  switch (recording)
    {
    case WICK_EAGER_RECORDING_NONE:
      return "none";
    case WICK_EAGER_RECORDING_SUSPENDED:
      return "suspended";
    case WICK_EAGER_RECORDING_ACTIVE:
      return "active";
    }
  return NULL;
}

#define MAX_NOTED_ROUNDS 1024

bool
wick_stage_note_eager_timing (WickStage *stage, WickEagerRecording recording,
                              const double *instrumented_ms, size_t n_rounds, WickError *error)
{
  if (stage == NULL || !stage->host_captured)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_note_eager_timing: %s",
                      stage == NULL ? "no stage" : "the stage is not captured by its host");
  if (wick_eager_recording_name (recording) == NULL || recording == WICK_EAGER_RECORDING_NONE)
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "stage '%s': eager recording %d is not suspended (1) or active (2)",
                      stage->name, (int)recording);
  if (n_rounds > MAX_NOTED_ROUNDS || (n_rounds > 0 && instrumented_ms == NULL))
    return wick_fail (error, WICK_ERROR_INVALID_ARGUMENT,
                      "stage '%s': %zu instrumented eager rounds %s", stage->name, n_rounds,
                      n_rounds > MAX_NOTED_ROUNDS ? "(at most 1024)" : "without their times");
  double median = NAN;
  if (n_rounds > 0)
    {
      double *copy = malloc (n_rounds * sizeof *copy);
      if (copy == NULL)
        return wick_fail (error, WICK_ERROR_NO_MEMORY, "out of memory");
      memcpy (copy, instrumented_ms, n_rounds * sizeof *copy);
      median = wick_gate_median (copy, n_rounds);
      free (copy);
    }
  pthread_mutex_lock (&stage->mutex);
  stage->eager_recording = recording;
  stage->eager_instrumented_ms = median;
  pthread_mutex_unlock (&stage->mutex);
  return true;
}

bool
wick_stage_complete_capture (WickStage *stage, const WickCaptureOptions *options,
                             const WickStageFigures *figures, const char *failure,
                             WickCertification *out, WickError *error)
{
  WickCaptureOptions checked;
  if (stage == NULL || !stage->host_captured)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_stage_complete_capture: %s",
                       stage == NULL ? "no stage" : "the stage is not captured by its host");
      return false;
    }
  if (!wick_capture_options_validate (options, &checked, error))
    return false;
  if (failure == NULL && figures == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': a completed capture needs its figures or a failure",
                       stage->name);
      return false;
    }
  WickCertification cert;
  stage_certification_init (stage, &checked, &cert);
  pthread_mutex_lock (&stage->mutex);
  cert.eager_recording = stage->eager_recording;
  cert.eager_instrumented_ms = stage->eager_instrumented_ms;
  stage->eager_recording = WICK_EAGER_RECORDING_ACTIVE;
  stage->eager_instrumented_ms = NAN;
  pthread_mutex_unlock (&stage->mutex);
  if (failure == NULL && figures->n_rounds > 0
      && (figures->eager_ms == NULL || figures->replay_ms == NULL))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "stage '%s': %zu timing rounds without their times", stage->name,
                       figures->n_rounds);
      return false;
    }
  pthread_mutex_lock (&stage->mutex);
  WickSpanId span = stage->capture_span != 0 && pthread_equal (stage->capture_thread, pthread_self ())
                      ? stage->capture_span
                      : 0;
  stage->capture_span = 0;
  pthread_mutex_unlock (&stage->mutex);
  /* a capture completed without a request taken or a begin on this thread:
   * its span is the completion's */
  if (span == 0)
    span = stage_span_begin (stage, "capture", &checked);
  if (failure == NULL)
    {
      if (cert.parity_checked)
        {
          cert.parity_cos
            = wick_gate_cosine (figures->dot, figures->out_squared, figures->ref_squared);
          cert.max_abs = figures->max_abs;
          cert.p99_abs = figures->p99_abs;
        }
      if (cert.speedup_checked && figures->n_rounds == 0)
        failure = "the speedup gate needs at least one timing round";
      else if (figures->n_rounds > 0)
        wick_gate_speedup_summary (figures->eager_ms, figures->replay_ms, figures->n_rounds,
                                   &cert.speedup_median, &cert.speedup_min, &cert.speedup_max,
                                   &cert.eager_ms, &cert.replay_ms);
      cert.kernel_nodes = figures->kernel_nodes;
    }
  wick_gate_judge (&cert, failure);

  pthread_mutex_lock (&stage->mutex);
  atomic_store (&stage->state, cert.accepted ? WICK_STAGE_CAPTURED : WICK_STAGE_REFUSED);
  stage->cert = cert;
  stage->has_cert = true;
  stage->pending = false;
  stage->completed++;
  pthread_cond_broadcast (&stage->done);
  pthread_mutex_unlock (&stage->mutex);

  stage_record_certification (stage, span, &cert);
  if (out != NULL)
    *out = cert;
  return true;
}
