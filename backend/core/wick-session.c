/* wick-session.c — opening a session (validating run metadata and capture
 * contract as candle-graph does, writing the meta line into the ring), finish,
 * finish_failed, close, and the accessors.
 *
 * Order at open: validate -> ring memfd -> intern the entrypoint (root span
 * s1's name) -> meta line -> JSONL writer (a hold reader registered before any
 * record exists, so it sees them all) -> control socket when enabled. Close
 * undoes it in reverse: control, slots, terminal if none, writer, ring.
 */
#include "wick-session-internal.h"

#include "common/wick-json.h"

#define WICK_INSIDE
#include "wick/wick-live.h"
#undef WICK_INSIDE

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint64_t next_session_serial = 1;

/* ---------------------------------------------------------------------------
 * Validation (candle-graph: TraceRunMeta::validate, CaptureContract::validate)
 */

static bool
is_blank (const char *string)
{
  if (string == NULL)
    return true;
  for (; *string != '\0'; string++)
    if (!isspace ((unsigned char)*string))
      return false;
  return true;
}

static bool
require_text (const char *value, const char *field, WickError *error)
{
  if (is_blank (value))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: %s must not be empty", field);
      return false;
    }
  return true;
}

static bool
validate_identity (const WickComparisonIdentity *identity, WickError *error)
{
  const struct
  {
    const char *value;
    const char *field;
  } required[] = {
    { identity->workload_id, "comparison_identity.workload_id" },
    { identity->model_id, "comparison_identity.model_id" },
    { identity->config_id, "comparison_identity.config_id" },
    { identity->data_id, "comparison_identity.data_id" },
    { identity->seed_policy, "comparison_identity.seed_policy" },
    { identity->precision, "comparison_identity.precision" },
    { identity->device_state, "comparison_identity.device_state" },
  };
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!require_text (required[i].value, required[i].field, error))
      return false;
  if (identity->implementation_id != NULL
      && !require_text (identity->implementation_id, "comparison_identity.implementation_id",
                        error))
    return false;
  if (identity->pair_id != NULL
      && !require_text (identity->pair_id, "comparison_identity.pair_id", error))
    return false;
  if (identity->physical_batch == 0 || identity->accumulation_steps == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: comparison_identity.%s must be greater than zero",
                      identity->physical_batch == 0 ? "physical_batch" : "accumulation_steps");
      return false;
    }
  return true;
}

static bool
validate_tags (const WickRunInfo *run, WickError *error)
{
  if (run->n_tags > 0 && run->tags == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: tags is NULL with n_tags %zu", run->n_tags);
      return false;
    }
  for (size_t i = 0; i < run->n_tags; i++)
    {
      if (run->tags[i].key == NULL || run->tags[i].value == NULL)
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: tag %zu needs a key and a value", i);
          return false;
        }
      for (size_t j = 0; j < i; j++)
        if (strcmp (run->tags[i].key, run->tags[j].key) == 0)
          {
            wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: tag \"%s\" is given more than once",
                            run->tags[i].key);
            return false;
          }
    }
  return true;
}

static bool
validate_run (const WickRunInfo *run, WickError *error)
{
  if (run == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata is required");
      return false;
    }
  if (!WICK_CHECK_RESERVED (run, "WickRunInfo", error))
    return false;
  if (run->comparison_identity != NULL
      && !WICK_CHECK_RESERVED (run->comparison_identity, "WickComparisonIdentity", error))
    return false;
  if (run->capture_step == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: capture_step must be one-based and greater than zero");
      return false;
    }
  if (!require_text (run->entrypoint, "entrypoint", error)
      || !require_text (run->device, "device", error))
    return false;
  if (run->correlation_id != NULL && !require_text (run->correlation_id, "correlation_id", error))
    return false;
  if (run->warmup_steps >= run->capture_step)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "run metadata: warmup_steps (%llu) must be less than capture_step "
                      "(%llu)",
                      (unsigned long long)run->warmup_steps, (unsigned long long)run->capture_step);
      return false;
    }
  if ((unsigned)run->phase > WICK_PHASE_INFER
      || (unsigned)run->timing_mode > WICK_TIMING_DEVICE_SYNCHRONIZED)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "run metadata: phase or timing_mode out of range");
      return false;
    }
  if (run->comparison_identity != NULL && !validate_identity (run->comparison_identity, error))
    return false;
  return validate_tags (run, error);
}

static bool
label_in (const char *label, const char *const *labels, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (labels[i] != NULL && strcmp (labels[i], label) == 0)
      return true;
  return false;
}

static bool
validate_label_list (const char *const *labels, size_t n, const char *list, WickError *error)
{
  if (n > 0 && labels == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: %s is NULL with a non-zero count", list);
      return false;
    }
  for (size_t i = 0; i < n; i++)
    {
      if (is_blank (labels[i]))
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: %s must not contain an empty label", list);
          return false;
        }
      if (label_in (labels[i], labels, i))
        {
          wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: %s lists \"%s\" more than once", list,
                          labels[i]);
          return false;
        }
    }
  return true;
}

static bool
validate_classification (const WickCaptureContract *c, WickError *error)
{
  if (c->n_gpu_expected_semantic_labels == 0 && c->n_cpu_only_semantic_labels == 0)
    return true;
  const char *const *lists[2] = { c->gpu_expected_semantic_labels, c->cpu_only_semantic_labels };
  size_t counts[2] = { c->n_gpu_expected_semantic_labels, c->n_cpu_only_semantic_labels };
  const char *names[2] = { "gpu_expected_semantic_labels", "cpu_only_semantic_labels" };
  for (int l = 0; l < 2; l++)
    {
      if (!validate_label_list (lists[l], counts[l], names[l], error))
        return false;
      for (size_t i = 0; i < counts[l]; i++)
        {
          if (!label_in (lists[l][i], c->required_semantic_labels, c->n_required_semantic_labels))
            {
              wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                              "capture contract: %s classifies \"%s\", which is not a "
                              "required semantic label",
                              names[l], lists[l][i]);
              return false;
            }
          if (l == 1 && label_in (lists[1][i], lists[0], counts[0]))
            {
              wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                              "capture contract: \"%s\" is classified both GPU-expected "
                              "and CPU-only",
                              lists[1][i]);
              return false;
            }
        }
    }
  for (size_t i = 0; i < c->n_required_semantic_labels; i++)
    if (!label_in (c->required_semantic_labels[i], lists[0], counts[0])
        && !label_in (c->required_semantic_labels[i], lists[1], counts[1]))
      {
        wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                        "capture contract: required semantic label \"%s\" is not "
                        "classified GPU-expected or CPU-only",
                        c->required_semantic_labels[i]);
        return false;
      }
  return true;
}

static bool
validate_contract (const WickCaptureContract *c, WickError *error)
{
  if (c == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "a capture contract is required");
      return false;
    }
  if (!WICK_CHECK_RESERVED (c, "WickCaptureContract", error))
    return false;
  if ((unsigned)c->measurement_scope > WICK_SCOPE_PRODUCTION_EQUIVALENT
      || (unsigned)c->operations > WICK_COVERAGE_COMPLETE
      || (unsigned)c->tensors > WICK_COVERAGE_COMPLETE
      || (unsigned)c->gradients > WICK_COVERAGE_COMPLETE
      || (unsigned)c->logical_memory > WICK_COVERAGE_COMPLETE
      || (unsigned)c->physical_memory > WICK_COVERAGE_COMPLETE
      || (unsigned)c->device_timing > WICK_COVERAGE_COMPLETE)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: a coverage level or the measurement scope is out "
                             "of range");
      return false;
    }
  if (c->gradients == WICK_COVERAGE_COMPLETE && c->gradient_contract == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: complete gradient coverage requires an exact "
                             "gradient_contract");
      return false;
    }
  if (c->gradients != WICK_COVERAGE_COMPLETE && c->gradient_contract != NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "capture contract: a gradient_contract requires complete gradient "
                             "coverage");
      return false;
    }
  return validate_label_list (c->required_semantic_labels, c->n_required_semantic_labels,
                              "required_semantic_labels", error)
         && validate_classification (c, error);
}

/* ---------------------------------------------------------------------------
 * The meta line (spec §3.1, fields in table order)
 */

static void
format_timestamp (char *out, size_t size)
{
  struct timespec now;
  struct tm tm;
  clock_gettime (CLOCK_REALTIME, &now);
  gmtime_r (&now.tv_sec, &tm);
  size_t length = strftime (out, size, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (out + length, size - length, ".%03uZ", (unsigned)(now.tv_nsec / 1000000) % 1000u);
}

static void
json_string_list (WickJson *json, const char *key, const char *const *labels, size_t n)
{
  wick_json_key (json, key);
  wick_json_string_array (json, labels, n);
}

static void
json_gradient_contract (WickJson *json, const WickGradientContract *contract)
{
  wick_json_key (json, "gradient_contract");
  wick_json_raw (json, "{");
  wick_json_key (json, "manifest_sha256");
  wick_json_string (json, wick_gradient_contract_get_digest (contract));
  wick_json_key (json, "expected");
  wick_json_raw (json, "[");
  for (size_t i = 0; i < wick_gradient_contract_get_n_expected (contract); i++)
    {
      const WickExpectedGradient *e = wick_gradient_contract_get_expected (contract, i);
      wick_json_raw (json, i > 0 ? ",{" : "{");
      wick_json_key (json, "root");
      wick_json_string (json, e->root);
      wick_json_key (json, "key");
      wick_json_string (json, e->key);
      wick_json_key (json, "family");
      wick_json_string (json, e->family);
      wick_json_raw (json, "}");
    }
  wick_json_raw (json, "]");
  wick_json_key (json, "families");
  wick_json_raw (json, "[");
  for (size_t i = 0; i < wick_gradient_contract_get_n_families (contract); i++)
    {
      const WickGradientFamily *f = wick_gradient_contract_get_family (contract, i);
      wick_json_raw (json, i > 0 ? ",{" : "{");
      wick_json_key (json, "family");
      wick_json_string (json, f->family);
      wick_json_key (json, "expectation");
      wick_json_string (json, wick_gradient_expectation_to_string (f->expectation));
      wick_json_key (json, "min_present");
      wick_json_u64 (json, f->min_present);
      wick_json_raw (json, "}");
    }
  wick_json_raw (json, "]}");
}

static void
json_capture_contract (WickJson *json, const WickCaptureContract *c)
{
  wick_json_key (json, "capture_contract");
  wick_json_raw (json, "{");
  wick_json_key (json, "measurement_scope");
  wick_json_string (json, wick_measurement_scope_to_string (c->measurement_scope));
  wick_json_key (json, "operations");
  wick_json_string (json, wick_coverage_to_string (c->operations));
  wick_json_key (json, "tensors");
  wick_json_string (json, wick_coverage_to_string (c->tensors));
  wick_json_key (json, "gradients");
  wick_json_string (json, wick_coverage_to_string (c->gradients));
  if (c->gradient_contract != NULL)
    json_gradient_contract (json, c->gradient_contract);
  wick_json_key (json, "logical_memory");
  wick_json_string (json, wick_coverage_to_string (c->logical_memory));
  wick_json_key (json, "physical_memory");
  wick_json_string (json, wick_coverage_to_string (c->physical_memory));
  wick_json_key (json, "device_timing");
  wick_json_string (json, wick_coverage_to_string (c->device_timing));
  json_string_list (json, "required_semantic_labels", c->required_semantic_labels,
                    c->n_required_semantic_labels);
  if (c->n_gpu_expected_semantic_labels > 0)
    json_string_list (json, "gpu_expected_semantic_labels", c->gpu_expected_semantic_labels,
                      c->n_gpu_expected_semantic_labels);
  if (c->n_cpu_only_semantic_labels > 0)
    json_string_list (json, "cpu_only_semantic_labels", c->cpu_only_semantic_labels,
                      c->n_cpu_only_semantic_labels);
  wick_json_raw (json, "}");
}

static void
json_identity (WickJson *json, const WickComparisonIdentity *id)
{
  wick_json_key (json, "comparison_identity");
  wick_json_raw (json, "{");
  if (id->implementation_id != NULL)
    {
      wick_json_key (json, "implementation_id");
      wick_json_string (json, id->implementation_id);
    }
  const char *keys[] = { "workload_id", "model_id", "config_id", "data_id", "seed_policy" };
  const char *values[]
    = { id->workload_id, id->model_id, id->config_id, id->data_id, id->seed_policy };
  for (int i = 0; i < 5; i++)
    {
      wick_json_key (json, keys[i]);
      wick_json_string (json, values[i]);
    }
  wick_json_key (json, "physical_batch");
  wick_json_u64 (json, id->physical_batch);
  wick_json_key (json, "accumulation_steps");
  wick_json_u64 (json, id->accumulation_steps);
  wick_json_key (json, "precision");
  wick_json_string (json, id->precision);
  wick_json_key (json, "device_state");
  wick_json_string (json, id->device_state);
  if (id->pair_id != NULL)
    {
      wick_json_key (json, "pair_id");
      wick_json_string (json, id->pair_id);
    }
  wick_json_raw (json, "}");
}

static int
compare_tags (const void *a, const void *b)
{
  return strcmp (((const WickTag *)a)->key, ((const WickTag *)b)->key);
}

static bool
json_tags (WickJson *json, const WickRunInfo *run)
{
  WickTag *sorted = calloc (run->n_tags + 1, sizeof *sorted);
  if (sorted == NULL)
    return false;
  if (run->n_tags > 0)
    memcpy (sorted, run->tags, run->n_tags * sizeof *sorted);
  qsort (sorted, run->n_tags, sizeof *sorted, compare_tags); /* a BTreeMap in candle-graph */
  wick_json_key (json, "tags");
  wick_json_raw (json, "{");
  for (size_t i = 0; i < run->n_tags; i++)
    {
      wick_json_key_escaped (json, sorted[i].key);
      wick_json_string (json, sorted[i].value);
    }
  wick_json_raw (json, "}");
  free (sorted);
  return true;
}

static bool
build_meta (WickSession *session, const WickRunInfo *run, const WickCaptureContract *contract,
            WickJson *json)
{
  char timestamp[64];
  format_timestamp (timestamp, sizeof timestamp);
  wick_json_raw (json, "{\"kind\":\"meta\"");
  wick_json_key (json, "schema");
  wick_json_string (json, "candle-graph/trace/10");
  wick_json_key (json, "run_id");
  wick_json_string (json, session->run_id);
  wick_json_key (json, "correlation_id");
  if (run->correlation_id != NULL)
    wick_json_string (json, run->correlation_id);
  else
    {
      char step[48];
      snprintf (step, sizeof step, "/%s-%llu",
                run->phase == WICK_PHASE_TRAIN ? "update" : "inference",
                (unsigned long long)run->capture_step);
      WickJson correlation;
      wick_json_init (&correlation);
      wick_json_raw (&correlation, run->entrypoint);
      wick_json_raw (&correlation, step);
      wick_json_string (json, correlation.data ? correlation.data : "");
      json->failed |= correlation.failed;
      wick_json_clear (&correlation);
    }
  wick_json_key (json, "entrypoint");
  wick_json_string (json, run->entrypoint);
  wick_json_key (json, "phase");
  wick_json_string (json, wick_phase_to_string (run->phase));
  wick_json_key (json, "timestamp");
  wick_json_string (json, timestamp);
  wick_json_key (json, "capture_step");
  wick_json_u64 (json, run->capture_step);
  wick_json_key (json, "warmup_steps");
  wick_json_u64 (json, run->warmup_steps);
  wick_json_key (json, "device");
  wick_json_string (json, run->device);
  wick_json_key (json, "measured_region_device_synchronized");
  wick_json_bool (json, run->measured_region_device_synchronized);
  wick_json_key (json, "timing_mode");
  wick_json_string (json, wick_timing_mode_to_string (run->timing_mode));
  json_capture_contract (json, contract);
  if (run->comparison_identity != NULL)
    json_identity (json, run->comparison_identity);
  if (!json_tags (json, run))
    return false;
  wick_json_raw (json, "}");
  return !json->failed;
}

/* ---------------------------------------------------------------------------
 * Open
 */

static char *text_printf (const char *format, ...) __attribute__ ((format (printf, 1, 2)));

static char *
text_printf (const char *format, ...)
{
  char buffer[512];
  va_list args;
  va_start (args, format);
  vsnprintf (buffer, sizeof buffer, format, args);
  va_end (args);
  return strdup (buffer);
}

static void
copy_text (char *out, size_t size, const char *text)
{
  snprintf (out, size, "%s", text ? text : "");
}

static void
session_free (WickSession *session)
{
  wick_ring_destroy (session);
  wick_intern_table_free (session->intern);
  wick_live_state_free (session->live_state);
  pthread_mutex_destroy (&session->lock);
  free (session->program);
  free (session->entrypoint);
  free (session->run_id);
  free (session);
}

static bool
session_publish_meta (WickSession *session, const WickRunInfo *run,
                      const WickCaptureContract *contract, WickError *error)
{
  WickJson json;
  wick_json_init (&json);
  if (!build_meta (session, run, contract, &json))
    {
      wick_json_clear (&json);
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory formatting the meta record");
      return false;
    }
  bool ok = wick_ring_set_meta (session, json.data, json.length, error);
  wick_json_clear (&json);
  return ok;
}

#define DEFAULT_HOLD_TIMEOUT_MS 2000

/* The hold timeout (docs/ring.md, "Stalled hold readers"): the option, else
 * WICK_HOLD_TIMEOUT_MS (a decimal count of ms, "never" or 0 for never), else
 * the default. */
static uint64_t
hold_timeout_ns (uint64_t option_ms)
{
  uint64_t ms = option_ms;
  if (ms == 0)
    {
      ms = DEFAULT_HOLD_TIMEOUT_MS;
      const char *text = getenv ("WICK_HOLD_TIMEOUT_MS");
      if (text != NULL && strcmp (text, "never") == 0)
        ms = UINT64_MAX;
      else if (text != NULL && text[0] >= '0' && text[0] <= '9')
        {
          char *end;
          unsigned long long value = strtoull (text, &end, 10);
          if (*end == '\0')
            ms = value == 0 ? UINT64_MAX : (uint64_t)value;
          else
            fprintf (stderr, "wick: WICK_HOLD_TIMEOUT_MS=%s is not a number of milliseconds; "
                             "using %d\n", text, DEFAULT_HOLD_TIMEOUT_MS);
        }
      else if (text != NULL)
        fprintf (stderr, "wick: WICK_HOLD_TIMEOUT_MS=%s is not a number of milliseconds; "
                         "using %d\n", text, DEFAULT_HOLD_TIMEOUT_MS);
    }
  return ms >= UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

static WickSession *
session_new (const WickSessionOptions *options, const WickRunInfo *run, WickError *error)
{
  WickSession *session = calloc (1, sizeof *session);
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory opening a session");
      return NULL;
    }
  session->memfd = -1;
  session->reader_fd = -1;
  session->cursors_fd = -1;
  pthread_mutex_init (&session->lock, NULL);
  session->owner_pid = (int)getpid ();
  session->serial = atomic_fetch_add (&next_session_serial, 1);
  session->policy = options->policy;
  session->strict = options->strict;
  session->hold_timeout_ns = hold_timeout_ns (options->hold_timeout_ms);
  atomic_store (&session->next_id_block, 2);
  atomic_store (&session->next_thread, 1);
  wick_clock_init ();
  struct timespec now;
  clock_gettime (CLOCK_REALTIME, &now);
  session->start_unix_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  session->start_ns = wick_clock_now_ns ();
  session->tsc_base = wick_clock.tsc_base;
  session->tsc_mult = wick_clock.mult;
  session->tsc_offset = wick_clock.mono_base - session->start_ns; /* mod 2^64 */
  wick_producer_init_unclaimed (session);
  session->program = strdup (program_invocation_short_name);
  session->entrypoint = strdup (run->entrypoint);
  session->run_id
    = text_printf ("run-%d-%llu", (int)getpid (), (unsigned long long)session->start_unix_ns);
  if (session->program == NULL || session->entrypoint == NULL || session->run_id == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory opening a session");
      session_free (session);
      return NULL;
    }
  if (!wick_ring_create (session, options->ring_bytes, options->max_threads,
                         options->string_arena_bytes, error))
    {
      session_free (session);
      return NULL;
    }
  session->intern = wick_intern_table_new (session->header->arena_capacity);
  session->live_state = wick_live_state_new ();
  if (session->intern == NULL || session->live_state == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for the intern table");
      session_free (session);
      return NULL;
    }
  return session;
}

static void
start_control_if_enabled (WickSession *session, const WickSessionOptions *options)
{
  if (!options->enable_control && !wick_control_requested_by_environment ())
    return;
  WickError error;
  if (!wick_session_enable_control (session, &error))
    fprintf (stderr, "wick: control socket not started: %s\n", error.message);
}

WickSession *
wick_session_open (const WickRunInfo *run, const WickCaptureContract *contract,
                   const WickSessionOptions *options, WickError *error)
{
  static const WickSessionOptions defaults = { 0 };
  if (options == NULL)
    options = &defaults;
  if (!validate_run (run, error) || !validate_contract (contract, error)
      || !WICK_CHECK_RESERVED (options, "WickSessionOptions", error))
    return NULL;
  if ((unsigned)options->policy > WICK_RING_OVERWRITE)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "session options: policy %d is not a ring policy", options->policy);
      return NULL;
    }
  WickSession *session = session_new (options, run, error);
  if (session == NULL)
    return NULL;
  WickRingHeader *header = session->header;
  header->root_name = wick_intern (session, run->entrypoint);
  session->name_lost = wick_intern (session, WICK_NAME_NOT_RECORDED);
  copy_text (header->program, sizeof header->program, session->program);
  copy_text (header->entrypoint, sizeof header->entrypoint, run->entrypoint);
  copy_text (header->run_id, sizeof header->run_id, session->run_id);
  if (header->root_name == 0 || !session_publish_meta (session, run, contract, error))
    {
      if (header->root_name == 0)
        wick_set_error (error, WICK_ERROR_NO_SPACE, "the entrypoint does not fit the string arena");
      session_free (session);
      return NULL;
    }
  if (!wick_session_register_live (session))
    {
      wick_set_error (error, WICK_ERROR_NO_SPACE, "too many sessions open in this process (256)");
      session_free (session);
      return NULL;
    }
  /* The opening thread is thread 1, the thread of s1: it claims its ring
   * before any reader exists, so every reader's snapshot announces it. */
  (void)wick_producer_get (session);
  if (options->jsonl_path != NULL)
    {
      session->writer = wick_jsonl_writer_start (session, options->jsonl_path, error);
      if (session->writer == NULL)
        {
          wick_producer_forget_session (session);
          session_free (session);
          return NULL;
        }
    }
  start_control_if_enabled (session, options);
  return session;
}

/* ---------------------------------------------------------------------------
 * Fork (docs/ring.md, "Fork")
 */

/* Runs in the child, on its only thread, right after fork (async-signal-safe
 * calls only). The ring and cursors become private copy-on-write views of
 * the same memfds: the child reads what the parent had written and anything
 * it writes (an interned name, a counter) stays in the child. The locks may
 * have been held by threads that do not exist here: they start afresh. */
void
wick_session_after_fork_child (WickSession *session)
{
  session->forked = true;
  atomic_store (&session->fork_noted, 0);
  atomic_store (&session->forked_records, 0);
  if (session->map != NULL
      && mmap (session->map, session->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
               session->memfd, 0)
           == MAP_FAILED)
    (void)mmap (session->map, session->map_bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
  if (session->cursors != NULL
      && mmap (session->cursors, session->cursors_bytes, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_FIXED, session->cursors_fd, 0)
           == MAP_FAILED)
    (void)mmap (session->cursors, session->cursors_bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
  for (uint32_t i = 0; session->producers != NULL && i < session->n_rings; i++)
    wick_producer_stop_fast (&session->producers[i]);
  wick_thread_slots_clear (session); /* the forking thread's pointer is the child's */
  pthread_mutex_init (&session->lock, NULL);
  atomic_store (&session->writer_holding, 0);
  /* The control server, weight store and stages are the parent's, with
   * threads and locks that are not here: the child's copy forgets them (not
   * freed), so nothing in the child waits on them; the child may make its own. */
  for (int slot = 0; slot < WICK_N_SLOTS; slot++)
    {
      session->slots[slot].data = NULL;
      session->slots[slot].destroy = NULL;
    }
}

void
wick_session_note_forked_record (WickSession *session)
{
  atomic_fetch_add (&session->forked_records, 1);
  if (atomic_exchange (&session->fork_noted, 1) == 0)
    fprintf (stderr,
             "wick: process %d is a fork of process %d, made while session %s was open; "
             "what this process records is not recorded (a forked process records only into "
             "a session it opens itself)\n",
             (int)getpid (), session->owner_pid, session->run_id);
}

/* finish, finish_failed and close in a forked child: the session is the
 * parent's (its file, its writer thread, its terminal); nothing is written. */
static bool
finish_in_fork (WickSession *session)
{
  if (!session->forked)
    return false;
  atomic_store (&session->finished, 1);
  uint64_t records = atomic_load (&session->forked_records);
  if (records > 0)
    fprintf (stderr,
             "wick: process %d (a fork of %d): %llu record%s into session %s %s not recorded\n",
             (int)getpid (), session->owner_pid, (unsigned long long)records,
             records == 1 ? "" : "s", session->run_id, records == 1 ? "was" : "were");
  return true;
}

/* ---------------------------------------------------------------------------
 * Finish and close
 */

static bool
mark_finished (WickSession *session, WickError *error)
{
  int expected = 0;
  if (!atomic_compare_exchange_strong (&session->finished, &expected, 1))
    {
      wick_set_error (error, WICK_ERROR_STATE, "the session is already finished");
      return false;
    }
  return true;
}

static bool
sync_writer (WickSession *session, WickError *error)
{
  atomic_store_explicit (&session->header->state, WICK_RING_STATE_FINISHED, memory_order_release);
  return session->writer == NULL || wick_jsonl_writer_sync (session->writer, error);
}

/* The writer merges the threads' rings in the order it drains them, so what
 * other threads committed before the finish (a control thread's eviction and
 * restore, say) is written out before the finish writes its own records (the
 * weight store's frees of what is still registered): otherwise a restore's
 * alloc could follow the finish's free of the same storage in the file. */
static void
write_what_came_before (WickSession *session)
{
  if (session->writer != NULL)
    wick_jsonl_writer_sync (session->writer, NULL);
}

bool
wick_session_finish (WickSession *session, WickError *error)
{
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_session_finish: no session");
      return false;
    }
  if (finish_in_fork (session))
    return true;
  pthread_mutex_lock (&session->lock);
  size_t open = wick_ring_open_spans (session);
  pthread_mutex_unlock (&session->lock);
  if (open > 0)
    {
      wick_set_error (error, WICK_ERROR_STATE, "cannot finish trace with %zu nested spans still open", open);
      return false;
    }
  if (!atomic_load (&session->finished))
    {
      write_what_came_before (session);
      wick_session_finish_slots (session);
    }
  if (!mark_finished (session, error))
    return false;
  wick_session_report_names_lost (session);
  uint64_t now = wick_session_clock (session);
  if (!wick_session_write_span_end_root (session, now, error)
      || !wick_session_write_terminal (session, true, now, NULL, error))
    {
      sync_writer (session, NULL);
      return false;
    }
  return sync_writer (session, error);
}

bool
wick_session_finish_failed (WickSession *session, const char *reason, WickError *error)
{
  if (session == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_session_finish_failed: no session");
      return false;
    }
  if (is_blank (reason))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "failure reason cannot be empty");
      return false;
    }
  if (finish_in_fork (session))
    return true;
  if (!atomic_load (&session->finished))
    {
      write_what_came_before (session);
      wick_session_finish_slots (session);
    }
  if (!mark_finished (session, error))
    return false;
  wick_session_report_names_lost (session);
  if (!wick_session_write_terminal (session, false, wick_session_clock (session), reason, error))
    {
      sync_writer (session, NULL);
      return false;
    }
  return sync_writer (session, error);
}

void
wick_session_close (WickSession *session)
{
  if (session == NULL)
    return;
  wick_session_disable_control (session);
  wick_session_destroy_slots (session);
  if (!atomic_load (&session->finished))
    {
      WickError error;
      if (!wick_session_finish_failed (session, "session closed before finish", &error))
        fprintf (stderr, "wick: closing session: %s\n", error.message);
    }
  /* in a forked child the writer's thread is the parent's: its copy is left */
  if (session->writer != NULL && !session->forked)
    wick_jsonl_writer_stop (session->writer);
  wick_producer_forget_session (session);
  session_free (session);
}

/* ---------------------------------------------------------------------------
 * Accessors
 */

uint64_t
wick_session_now_ns (WickSession *session)
{
  return wick_session_clock (session);
}

int
wick_session_get_pid (WickSession *session)
{
  return session->header->pid;
}

const char *
wick_session_get_program (WickSession *session)
{
  return session->program;
}

const char *
wick_session_get_entrypoint (WickSession *session)
{
  return session->entrypoint;
}

const char *
wick_session_get_run_id (WickSession *session)
{
  return session->run_id;
}

uint64_t
wick_session_get_start_unix_ns (WickSession *session)
{
  return session->start_unix_ns;
}

WickRingPolicy
wick_session_get_policy (WickSession *session)
{
  return session->policy;
}

bool
wick_session_get_strict (WickSession *session)
{
  return session->strict;
}

int
wick_session_get_ring_fd (WickSession *session)
{
  return session->reader_fd;
}

int
wick_session_get_cursors_fd (WickSession *session)
{
  return session->cursors_fd;
}

uint64_t
wick_session_get_dropped (WickSession *session)
{
  return wick_ring_total_dropped (session);
}

bool
wick_session_is_finished (WickSession *session)
{
  return atomic_load (&session->finished) != 0;
}
