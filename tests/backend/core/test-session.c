/* test-session.c — the recording API: validation sentences, the JSONL file a
 * session writes, gradient contracts and plans, threads recording at once. */
#include "wick-session-internal.h"

#include <glib.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include <math.h>
#include <unistd.h>

static const WickRunInfo train_run = {
  .entrypoint = "train::update",
  .phase = WICK_PHASE_TRAIN,
  .capture_step = 2,
  .warmup_steps = 1,
  .device = "cpu",
};

/* A file in the temporary directory named for this process too: two runs
 * at once (another build tree, meson test --repeat) must not share a path. */
static char *
temp_path (const char *name)
{
  g_autofree char *own = g_strdup_printf ("%d-%s", (int)getpid (), name);
  return g_build_filename (g_get_tmp_dir (), own, NULL);
}

/* The file's lines (its last newline required). A plain loop: g_strsplit is
 * quadratic under ASan's strstr interceptor on a file of 200k lines. */
static char **
read_lines (const char *path, guint *n)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_assert_true (length > 0 && text[length - 1] == '\n');
  GPtrArray *lines = g_ptr_array_new ();
  for (char *line = text; line < text + length;)
    {
      char *end = memchr (line, '\n', (size_t) (text + length - line));
      g_ptr_array_add (lines, g_strndup (line, (gsize) (end - line)));
      line = end + 1;
    }
  *n = lines->len;
  g_ptr_array_add (lines, NULL);
  return (char **) g_ptr_array_free (lines, FALSE);
}

static void
assert_open_refused (const WickRunInfo *run, const WickCaptureContract *contract,
                     const char *expected)
{
  WickError error = { "" };
  WickSession *session = wick_session_open (run, contract, NULL, &error);
  g_assert_null (session);
  g_assert_cmpstr (error.message, ==, expected);
}

static void
test_open_validation (void)
{
  WickCaptureContract contract = { 0 };
  WickRunInfo run = train_run;
  run.capture_step = 0;
  assert_open_refused (&run, &contract,
                       "run metadata: capture_step must be one-based and greater than zero");
  run = train_run;
  run.entrypoint = "  ";
  assert_open_refused (&run, &contract, "run metadata: entrypoint must not be empty");
  run = train_run;
  run.device = "";
  assert_open_refused (&run, &contract, "run metadata: device must not be empty");
  run = train_run;
  run.warmup_steps = 2;
  assert_open_refused (&run, &contract,
                       "run metadata: warmup_steps (2) must be less than capture_step (2)");
  run = train_run;
  run.correlation_id = " ";
  assert_open_refused (&run, &contract, "run metadata: correlation_id must not be empty");
  WickComparisonIdentity identity = { .workload_id = "w",
                                      .model_id = "m",
                                      .config_id = "c",
                                      .data_id = "d",
                                      .seed_policy = "fixed",
                                      .physical_batch = 8,
                                      .accumulation_steps = 0,
                                      .precision = "f32",
                                      .device_state = "warm" };
  run = train_run;
  run.comparison_identity = &identity;
  assert_open_refused (&run, &contract,
                       "run metadata: comparison_identity.accumulation_steps must be greater "
                       "than zero");
  identity.accumulation_steps = 1;
  identity.pair_id = "";
  assert_open_refused (&run, &contract,
                       "run metadata: comparison_identity.pair_id must not be empty");
  WickTag tags[] = { { "b", "1" }, { "b", "2" } };
  run = train_run;
  run.tags = tags;
  run.n_tags = 2;
  assert_open_refused (&run, &contract, "run metadata: tag \"b\" is given more than once");

  contract.gradients = WICK_COVERAGE_COMPLETE;
  assert_open_refused (&train_run, &contract,
                       "capture contract: complete gradient coverage requires an exact "
                       "gradient_contract");
  contract.gradients = WICK_COVERAGE_NONE;
  const char *labels[] = { "forward", "forward" };
  contract.required_semantic_labels = labels;
  contract.n_required_semantic_labels = 2;
  assert_open_refused (&train_run, &contract,
                       "capture contract: required_semantic_labels lists \"forward\" more than "
                       "once");
  const char *one[] = { "forward" };
  const char *gpu[] = { "loss" };
  contract.required_semantic_labels = one;
  contract.n_required_semantic_labels = 1;
  contract.gpu_expected_semantic_labels = gpu;
  contract.n_gpu_expected_semantic_labels = 1;
  assert_open_refused (&train_run, &contract,
                       "capture contract: gpu_expected_semantic_labels classifies \"loss\", "
                       "which is not a required semantic label");
  contract.gpu_expected_semantic_labels = one;
  contract.cpu_only_semantic_labels = one;
  contract.n_cpu_only_semantic_labels = 1;
  assert_open_refused (&train_run, &contract,
                       "capture contract: \"forward\" is classified both GPU-expected and "
                       "CPU-only");
  WickSessionOptions options = { .ring_bytes = 1000 };
  WickError error;
  g_assert_null (wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, &error));
  g_assert_cmpstr (error.message, ==,
                   "session options: ring_bytes 1000 must be a power of two between 256 KiB and "
                   "4 GiB");
  options = (WickSessionOptions){ .jsonl_path = "/nonexistent-dir/t.jsonl" };
  g_assert_null (wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, &error));
  g_assert_cmpstr (error.message, ==,
                   "open trace /nonexistent-dir/t.jsonl: No such file or directory");
}

static const WickExpectedGradient golden_expected[] = {
  { "parameters", "trunk.weight", "trunk" },
  { "parameters", "frozen.weight", "frozen" },
  { "parameters", "optional.weight", "optional" },
};
static const WickGradientFamily golden_families[] = {
  { "trunk", WICK_EXPECT_ACTIVE, 1 },
  { "frozen", WICK_EXPECT_INACTIVE, 0 },
  { "optional", WICK_EXPECT_DATA_CONDITIONAL, 1 },
};

static void
test_manifest_digest (void)
{
  char digest[WICK_SHA256_TEXT_LEN];
  g_assert_true (wick_gradient_manifest_sha256 (golden_expected, 3, digest, NULL));
  g_assert_cmpstr (digest, ==,
                   "sha256:d7f0b4aa8a4072b9824018c8d3eff5757286f1348366c15ef8780be38945fcc6");
  WickGradientContract *contract
    = wick_gradient_contract_new (golden_expected, 3, golden_families, 3, NULL);
  g_assert_nonnull (contract);
  g_assert_cmpstr (wick_gradient_contract_get_digest (contract), ==, digest);
  WickGradientContract *copy = wick_gradient_contract_copy (contract);
  g_assert_cmpstr (wick_gradient_contract_get_digest (copy), ==, digest);
  g_assert_cmpstr (wick_gradient_contract_get_expected (copy, 1)->key, ==, "frozen.weight");
  wick_gradient_contract_free (copy);
  wick_gradient_contract_free (contract);
  /* order matters */
  WickExpectedGradient swapped[] = { golden_expected[1], golden_expected[0], golden_expected[2] };
  g_assert_true (wick_gradient_manifest_sha256 (swapped, 3, digest, NULL));
  g_assert_cmpstr (digest, !=,
                   "sha256:d7f0b4aa8a4072b9824018c8d3eff5757286f1348366c15ef8780be38945fcc6");
}

static void
assert_contract_refused (const WickExpectedGradient *expected, size_t n_expected,
                         const WickGradientFamily *families, size_t n_families, const char *message)
{
  WickError error = { "" };
  g_assert_null (wick_gradient_contract_new (expected, n_expected, families, n_families, &error));
  g_assert_cmpstr (error.message, ==, message);
}

static void
test_contract_validation (void)
{
  assert_contract_refused (NULL, 0, golden_families, 3, "gradient manifest must not be empty");
  assert_contract_refused (golden_expected, 3, NULL, 0, "gradient families must not be empty");
  WickExpectedGradient blank[] = { { "parameters", " ", "trunk" } };
  assert_contract_refused (blank, 1, golden_families, 1,
                           "gradient manifest root, key, and family must not be empty");
  WickExpectedGradient twice[] = { golden_expected[0], golden_expected[0] };
  assert_contract_refused (twice, 2, golden_families, 1,
                           "gradient manifest declares (\"parameters\", \"trunk.weight\") more "
                           "than once");
  WickGradientFamily repeated[] = { golden_families[0], golden_families[0] };
  assert_contract_refused (golden_expected, 1, repeated, 2,
                           "gradient family \"trunk\" is declared more than once");
  WickGradientFamily stray[] = { golden_families[0], { "other", WICK_EXPECT_ACTIVE, 1 } };
  assert_contract_refused (golden_expected, 1, stray, 2,
                           "gradient family \"other\" has no manifest members");
  WickGradientFamily inactive[] = { { "trunk", WICK_EXPECT_INACTIVE, 1 } };
  assert_contract_refused (golden_expected, 1, inactive, 1,
                           "inactive gradient family \"trunk\" must have min_present=0");
  WickGradientFamily too_many[] = { { "trunk", WICK_EXPECT_ACTIVE, 2 } };
  assert_contract_refused (golden_expected, 1, too_many, 1,
                           "active or data-conditional gradient family \"trunk\" needs "
                           "min_present in 1..=1");
  assert_contract_refused (golden_expected, 3, golden_families, 1,
                           "gradient manifest family \"frozen\" has no family contract");
}

static const char *
family_of (const char *key, void *user_data)
{
  return g_str_has_prefix (key, "frozen") ? "frozen" : "params";
}

static void
test_plan_sorting_duplicates_empty (void)
{
  const char *keys[] = { "encoder.weight", "decoder.weight", "encoder.bias" };
  WickGradientFamily families[] = { { "params", WICK_EXPECT_DATA_CONDITIONAL, 1 } };
  WickError error = { "" };
  WickGradientPlan *plan
    = wick_gradient_plan_new ("varmap", keys, 3, family_of, NULL, families, 1, &error);
  g_assert_nonnull (plan);
  g_assert_cmpstr (wick_gradient_plan_get_root (plan), ==, "varmap");
  g_assert_cmpstr (wick_gradient_plan_get_key (plan, 0), ==, "decoder.weight");
  g_assert_cmpstr (wick_gradient_plan_get_key (plan, 1), ==, "encoder.bias");
  g_assert_cmpstr (wick_gradient_plan_get_key (plan, 2), ==, "encoder.weight");
  g_assert_cmpint (wick_gradient_plan_find_key (plan, "encoder.weight"), ==, 2);
  g_assert_cmpint (wick_gradient_plan_find_key (plan, "nope"), ==, -1);
  const WickGradientContract *contract = wick_gradient_plan_get_contract (plan);
  g_assert_cmpuint (wick_gradient_contract_get_n_expected (contract), ==, 3);
  g_assert_cmpstr (wick_gradient_contract_get_expected (contract, 0)->root, ==, "varmap");
  g_assert_cmpstr (wick_gradient_contract_get_expected (contract, 0)->family, ==, "params");
  wick_gradient_plan_free (plan);

  const char *duplicate[] = { "encoder.weight", "encoder.weight" };
  g_assert_null (
    wick_gradient_plan_new ("varmap", duplicate, 2, family_of, NULL, families, 1, &error));
  g_assert_cmpstr (error.message, ==,
                   "building exact gradient contract from named parameters: gradient manifest "
                   "declares (\"varmap\", \"encoder.weight\") more than once");
  g_assert_null (wick_gradient_plan_new ("varmap", NULL, 0, family_of, NULL, families, 1, &error));
  g_assert_cmpstr (error.message, ==,
                   "building exact gradient contract from named parameters: gradient manifest "
                   "must not be empty");
}

static void
test_plan_records_manifest_population (void)
{
  const char *keys[] = { "used.weight", "frozen.weight", "zero.weight", "nan.weight" };
  WickGradientFamily families[]
    = { { "frozen", WICK_EXPECT_INACTIVE, 0 }, { "params", WICK_EXPECT_DATA_CONDITIONAL, 1 } };
  WickGradientPlan *plan
    = wick_gradient_plan_new ("varmap", keys, 4, family_of, NULL, families, 2, NULL);
  g_assert_nonnull (plan);
  g_autofree char *path = temp_path ("wick-test-plan.jsonl");
  WickCaptureContract contract = { .gradients = WICK_COVERAGE_COMPLETE,
                                   .gradient_contract = wick_gradient_plan_get_contract (plan) };
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK };
  WickError error = { "" };
  WickSession *session = wick_session_open (&train_run, &contract, &options, &error);
  g_assert_nonnull (session);
  /* manifest order: frozen.weight, nan.weight, used.weight, zero.weight */
  WickParameterGradient gradients[]
    = { { false, 0.0 }, { true, NAN }, { true, 2.5 }, { true, 0.0 } };
  g_assert_true (wick_gradient_plan_record (plan, session, gradients, 4, &error));
  g_assert_false (wick_gradient_plan_record (plan, session, gradients, 3, &error));
  g_assert_cmpstr (error.message, ==, "gradient plan: 3 gradients given for 4 manifest entries");
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);
  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  g_assert_cmpuint (n, ==, 8); /* meta, s1, 4 gradients, s1 end, terminal */
  g_assert_true (strstr (lines[0], "\"gradient_contract\":{\"manifest_sha256\":\"sha256:") != NULL);
  g_assert_cmpstr (lines[2], ==,
                   "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":\"varmap\","
                   "\"key\":\"frozen.weight\",\"state\":\"missing\"}");
  g_assert_cmpstr (lines[3], ==,
                   "{\"kind\":\"gradient\",\"event_id\":\"gradient-2\",\"root\":\"varmap\","
                   "\"key\":\"nan.weight\",\"state\":\"non_finite\"}");
  g_assert_cmpstr (lines[4], ==,
                   "{\"kind\":\"gradient\",\"event_id\":\"gradient-3\",\"root\":\"varmap\","
                   "\"key\":\"used.weight\",\"state\":\"present\",\"norm\":2.5}");
  g_assert_cmpstr (lines[5], ==,
                   "{\"kind\":\"gradient\",\"event_id\":\"gradient-4\",\"root\":\"varmap\","
                   "\"key\":\"zero.weight\",\"state\":\"zero\",\"norm\":0.0}");
  wick_gradient_plan_free (plan);
  g_unlink (path);
}

static void
test_record_refusals (void)
{
  WickSession *session = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, NULL, NULL);
  g_assert_nonnull (session);
  WickError error = { "" };
  g_assert_false (
    wick_session_record_gradient (session, "p", "k", WICK_GRADIENT_PRESENT, true, 0.0, &error));
  g_assert_cmpstr (error.message, ==, "gradient state `present` is inconsistent with norm Some(0)");
  g_assert_false (
    wick_session_record_gradient (session, "p", "k", WICK_GRADIENT_ZERO, true, -0.0, &error));
  g_assert_cmpstr (error.message, ==, "gradient state `zero` is inconsistent with norm Some(-0)");
  g_assert_false (
    wick_session_record_gradient (session, "p", "k", WICK_GRADIENT_MISSING, true, 1.0, &error));
  g_assert_cmpstr (error.message, ==, "gradient state `missing` is inconsistent with norm Some(1)");
  g_assert_false (
    wick_session_record_gradient (session, " ", "k", WICK_GRADIENT_MISSING, false, 0, &error));
  g_assert_cmpstr (error.message, ==, "gradient roots and parameter keys must not be empty");
  WickDeviceMemoryRecord empty = { .timestamp_ns = WICK_NOW, .device = "cuda:0" };
  g_assert_false (wick_session_record_device_memory (session, &empty, &error));
  g_assert_cmpstr (error.message, ==,
                   "device-memory checkpoint must contain at least one observation");
  WickDeviceIntervalRecord interval
    = { .span = 1, .device = "cuda:0", .stream_id = "0", .clock_id = "c", .backend = "cuda" };
  g_assert_false (wick_session_record_device_interval (session, &interval, &error));
  g_assert_cmpstr (error.message, ==, "device interval duration must be positive");
  g_assert_false (wick_session_record_data_edge (session, "", "t", &error));
  g_assert_cmpstr (error.message, ==, "data-edge tensor IDs cannot be empty");
  /* Reserved words must be zero, so that a later libwick can use them. */
  WickDeviceIntervalRecord grown = interval;
  grown.duration_ns = 5;
  grown._wick_reserved[3] = 1;
  g_assert_false (wick_session_record_device_interval (session, &grown, &error));
  g_assert_cmpstr (error.message, ==,
                   "WickDeviceIntervalRecord: reserved word 3 is not zero; initialise the struct "
                   "with {0} or designated initialisers");
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_ARGUMENT);
  WickSessionOptions bad_options = { ._wick_reserved = { 7 } };
  g_assert_null (wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &bad_options, &error));
  g_assert_true (g_str_has_prefix (error.message, "WickSessionOptions: reserved word 0"));
  uint64_t shape[] = { 2, 2 };
  WickTensorStatsRecord stats
    = { .span = 1, .label = "x", .shape = shape, .rank = 2, .dtype = "f32", .elements = 5 };
  g_assert_false (wick_session_record_tensor_stats (session, &stats, &error));
  g_assert_cmpstr (error.message, ==,
                   "invalid tensor_stats \"x\": elements 5 differs from the shape's 4");
  stats.elements = 4;
  stats.rms = -1.0;
  g_assert_false (wick_session_record_tensor_stats (session, &stats, &error));
  g_assert_cmpstr (error.message, ==,
                   "invalid tensor_stats \"x\": rms and abs_max must be finite and >= 0, mean "
                   "finite");
  g_assert_false (wick_session_record_extension (session, "mark", "", &error));
  g_assert_cmpstr (error.message, ==, "extension kind \"mark\" must start with \"wick_\"");
  g_assert_nonnull (wick_measurement_begin (session, "measured", &error) ? "ok" : NULL);
  g_assert_cmpuint (wick_measurement_begin (session, "again", &error), ==, 0);
  g_assert_cmpstr (error.message, ==,
                   "the measured region was already begun; a session has exactly one");
  g_assert_false (wick_session_finish (session, &error));
  g_assert_cmpstr (error.message, ==, "cannot finish trace with 1 nested spans still open");
  g_assert_cmpint (error.code, ==, WICK_ERROR_STATE);
  g_assert_false (wick_span_end (session, 0));
  g_assert_false (wick_span_end (session, 999));
  g_assert_false (wick_session_finish_failed (session, " ", &error));
  g_assert_cmpstr (error.message, ==, "failure reason cannot be empty");
  g_assert_cmpint (error.code, ==, WICK_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (wick_error_code_to_string (error.code), ==, "invalid-argument");
  g_assert_cmpstr (wick_error_code_to_string (WICK_ERROR_DROPPED), ==, "dropped");
  g_assert_null (wick_error_code_to_string ((WickErrorCode)999));
  g_assert_true (wick_session_finish_failed (session, "stopped by test", &error));
  g_assert_false (wick_session_mark (session, "late", &error));
  g_assert_cmpstr (error.message, ==,
                   "the session is finished; nothing can be recorded after its terminal");
  wick_session_close (session);
}

/* The calling thread's name as libwick reads it. */
static const char *
thread_name (void)
{
  static char name[64];
  if (pthread_getname_np (pthread_self (), name, sizeof name) != 0)
    name[0] = '\0';
  return name;
}

static void
test_session_file (void)
{
  g_autofree char *path = temp_path ("wick-test-session.jsonl");
  WickTag tags[] = { { "zeta", "1" }, { "alpha", "a\"b" } };
  WickRunInfo run = train_run;
  run.tags = tags;
  run.n_tags = 2;
  run.correlation_id = "corr-1";
  const char *labels[] = { "forward" };
  WickCaptureContract contract = { .measurement_scope = WICK_SCOPE_PROFILED_WORK,
                                   .operations = WICK_COVERAGE_COMPLETE,
                                   .required_semantic_labels = labels,
                                   .n_required_semantic_labels = 1 };
  WickSessionOptions options = { .jsonl_path = path };
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &contract, &options, &error);
  g_assert_nonnull (session);
  g_assert_cmpstr (wick_session_get_entrypoint (session), ==, "train::update");
  g_assert_cmpint (wick_session_get_pid (session), ==, getpid ());
  g_assert_cmpint (wick_session_get_ring_fd (session), >=, 0);
  g_assert_true (g_str_has_prefix (wick_session_get_run_id (session), "run-"));
  WickSpanId measured = wick_measurement_begin (session, "step", &error);
  g_assert_cmpuint (measured, ==, 2);
  WickString forward_name = wick_intern (session, "forward");
  g_assert_cmpuint (forward_name, ==, wick_intern (session, "forward"));
  WickSpanId forward
    = wick_span_begin_step_interned (session, forward_name, WICK_SPAN_MODULE, WICK_STEP_FORWARD);
  g_assert_cmpuint (forward, ==, 3);
  g_assert_cmpuint (wick_span_current (session), ==, 3);
  uint64_t shape[] = { 4, 2 };
  WickTensorRecord tensor = { .span = forward,
                              .tensor_id = "t9",
                              .shape = shape,
                              .rank = 2,
                              .dtype = "F32 ",
                              .device = "cpu",
                              .category = WICK_CATEGORY_ACTIVATION };
  g_assert_true (wick_session_record_tensor (session, &tensor, &error));
  g_assert_true (wick_span_end (session, forward));
  g_assert_true (wick_span_end (session, measured));
  g_assert_true (wick_session_finish (session, &error));
  g_assert_true (wick_session_is_finished (session));
  wick_session_close (session);

  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  g_assert_cmpuint (n, ==, 9);
  g_assert_true (g_str_has_prefix (lines[0],
                                   "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\","
                                   "\"run_id\":\"run-"));
  g_assert_true (strstr (lines[0],
                         ",\"correlation_id\":\"corr-1\",\"entrypoint\":\"train::update\","
                         "\"phase\":\"train\",\"timestamp\":\"")
                 != NULL);
  g_assert_true (g_str_has_suffix (
    lines[0], "Z\",\"capture_step\":2,\"warmup_steps\":1,\"device\":\"cpu\","
              "\"measured_region_device_synchronized\":false,\"timing_mode\":\"host\","
              "\"capture_contract\":{\"measurement_scope\":\"profiled_work\",\"operations\":"
              "\"complete\",\"tensors\":\"none\",\"gradients\":\"none\",\"logical_memory\":"
              "\"none\",\"physical_memory\":\"none\",\"device_timing\":\"none\","
              "\"required_semantic_labels\":[\"forward\"]},\"tags\":{\"alpha\":\"a\\\"b\","
              "\"zeta\":\"1\"}}"));
  /* extension mode: spans say their thread, the thread's first one its
   * identity (no wick_thread record: candle-graph rejects unknown kinds) */
  g_autofree char *thread_keys
    = g_strdup_printf (",\"wick_thread\":1,\"wick_thread_name\":\"%s\",\"wick_os_tid\":%d}",
                       thread_name (), (int)gettid ());
  g_autofree char *root_start
    = g_strconcat ("{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"train::update\","
                   "\"start_ns\":0,\"span_kind\":\"function\",\"measured\":false",
                   thread_keys, NULL);
  g_assert_cmpstr (lines[1], ==, root_start);
  g_assert_true (g_str_has_prefix (lines[2], "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":"
                                             "\"s1\",\"name\":\"step\",\"start_ns\":"));
  g_assert_true (g_str_has_suffix (
    lines[2], ",\"span_kind\":\"function\",\"measured\":true,\"wick_thread\":1}"));
  g_assert_true (g_str_has_suffix (lines[3], ",\"span_kind\":\"module\",\"measured\":false,"
                                             "\"step\":\"forward\",\"wick_thread\":1}"));
  g_assert_cmpstr (lines[4], ==,
                   "{\"kind\":\"tensor\",\"span_id\":\"s3\",\"tensor_id\":\"t9\",\"shape\":[4,2],"
                   "\"dtype\":\"F32 \",\"device\":\"cpu\",\"requires_grad\":false,"
                   "\"dense_bytes\":32,\"category\":\"activation\"}");
  g_assert_true (g_str_has_prefix (lines[5], "{\"kind\":\"span_end\",\"id\":\"s3\""));
  g_assert_true (g_str_has_prefix (lines[6], "{\"kind\":\"span_end\",\"id\":\"s2\""));
  g_assert_true (
    g_str_has_prefix (lines[7], "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":"));
  guint64 root_ns = g_ascii_strtoull (lines[7]
                                        + strlen ("{\"kind\":\"span_end\",\"id\":\"s1\","
                                                  "\"duration_ns\":"),
                                      NULL, 10);
  g_autofree char *terminal = g_strdup_printf (
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}",
    root_ns);
  g_assert_cmpstr (lines[8], ==, terminal);
  g_unlink (path);
}

static gpointer
end_elsewhere (gpointer data)
{
  WickSession *session = ((gpointer *)data)[0];
  WickSpanId span = GPOINTER_TO_SIZE (((gpointer *)data)[1]);
  return GINT_TO_POINTER (wick_span_end (session, span));
}

/* On another thread: wick_span_end_checked's error is WRONG_THREAD with the
 * sentence naming the span and both threads. */
static gpointer
end_elsewhere_checked (gpointer data)
{
  WickSession *session = ((gpointer *)data)[0];
  WickSpanId span = GPOINTER_TO_SIZE (((gpointer *)data)[1]);
  WickError error = { "" };
  gboolean ok = !wick_span_end_checked (session, span, &error)
                && error.code == WICK_ERROR_WRONG_THREAD
                && strstr (error.message, "was begun on wick thread 1 and cannot be ended on wick "
                                          "thread ")
                     != NULL
                && strstr (error.message, "a span ends on the thread that began it") != NULL;
  if (!ok)
    g_printerr ("wick_span_end_checked on another thread: code %d, %s\n", error.code,
                error.message);
  return GINT_TO_POINTER (ok);
}

static void
test_span_nesting (void)
{
  g_autofree char *path = temp_path ("wick-test-nesting.jsonl");
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  WickSpanId a = wick_span_begin (session, "a", WICK_SPAN_FUNCTION);
  WickSpanId b = wick_span_begin (session, "b", WICK_SPAN_FUNCTION);
  WickSpanId c = wick_span_begin_child (session, a, "c", WICK_SPAN_OP, WICK_STEP_FORWARD);
  g_assert_cmpuint (wick_span_current (session), ==, c);
  /* a span ends on the thread that began it */
  gpointer args[2] = { session, GSIZE_TO_POINTER (c) };
  GThread *thread = g_thread_new ("other", end_elsewhere, args);
  g_assert_false (GPOINTER_TO_INT (g_thread_join (thread)));
  /* and it is said (stderr) and counted, not only a false */
  g_assert_cmpuint (atomic_load (&session->foreign_ends), ==, 1);
  /* an error the program reads: the code and the sentence, through the
   * public API (it was a false and a stderr line only) */
  GThread *checked = g_thread_new ("other", end_elsewhere_checked, args);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (checked)));
  g_assert_cmpuint (wick_session_get_foreign_span_ends (session), ==, 2);
  WickError why = { "" };
  g_assert_false (wick_span_end_checked (session, 0, &why));
  g_assert_cmpint (why.code, ==, WICK_ERROR_DROPPED);
  g_assert_false (wick_span_end_checked (session, 999999, &why));
  g_assert_cmpint (why.code, ==, WICK_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (why.message, "span s999999 is not open on any thread"));
  g_assert_cmpstr (wick_error_code_to_string (WICK_ERROR_WRONG_THREAD), ==, "wrong-thread");
  /* ending b (not the innermost) keeps c open and c's parent stays a */
  uint64_t b_ns = 0;
  g_assert_true (wick_span_end_timed (session, b, &b_ns));
  g_assert_cmpuint (wick_span_current (session), ==, c);
  g_assert_false (wick_span_end (session, b));
  WickSpanId d = wick_span_begin (session, "d", WICK_SPAN_FUNCTION);
  g_assert_true (wick_span_end (session, d));
  g_assert_true (wick_span_end (session, c));
  g_assert_true (wick_span_end (session, a));
  g_assert_cmpuint (wick_span_current (session), ==, 1);
  /* 128 open spans on one thread at most */
  WickSpanId open[129];
  for (int i = 0; i < 128; i++)
    g_assert_cmpuint ((open[i] = wick_span_begin (session, "deep", WICK_SPAN_FUNCTION)), !=, 0);
  g_assert_cmpuint (wick_span_begin (session, "too-deep", WICK_SPAN_FUNCTION), ==, 0);
  for (int i = 127; i >= 0; i--)
    g_assert_true (wick_span_end (session, open[i]));
  g_assert_true (wick_session_finish (session, NULL));
  wick_session_close (session);
  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  /* meta, s1, ..., terminal: the thread's identity and the too-deep span's
   * wick_dropped ride on standard records */
  g_assert_cmpuint (n, ==, 2 + 2 * 4 + 2 * 128 + 2);
  guint dropped_lines = 0;
  for (guint i = 0; i < n; i++)
    dropped_lines += strstr (lines[i], "\"kind\":\"wick_dropped\"") != NULL;
  g_assert_cmpuint (dropped_lines, ==, 1);
  /* and the terminal says so */
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"failed\""));
  g_assert_nonnull (strstr (lines[n - 1], "records were lost: 1 dropped by the recorder"));
  g_assert_nonnull (strstr (lines[n - 1], ",\"wick_dropped\":1,"));
  g_assert_true (g_str_has_prefix (lines[2], "{\"kind\":\"span_start\",\"id\":\"s2\","
                                             "\"parent_id\":\"s1\",\"name\":\"a\""));
  g_assert_true (g_str_has_prefix (lines[4], "{\"kind\":\"span_start\",\"id\":\"s4\","
                                             "\"parent_id\":\"s2\",\"name\":\"c\""));
  g_assert_true (g_str_has_suffix (lines[4], ",\"span_kind\":\"op\",\"measured\":false,"
                                             "\"step\":\"forward\",\"wick_thread\":1}"));
  /* s3 (b) ends where it did; the foreign ends ride on a standard record,
   * the first the writer drained after them: which one depends on the order
   * the writer drains the two threads' rings */
  g_autofree char *b_end = g_strdup_printf (
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":%" G_GUINT64_FORMAT, b_ns);
  g_assert_true (g_str_has_prefix (lines[5], b_end));
  /* and nothing else: the line as it was, or with foreign ends riding on it */
  const char *rest = lines[5] + strlen (b_end);
  if (strcmp (rest, "}") != 0)
    {
      g_assert_true (g_str_has_prefix (rest, ",\"wick_records\":[{\"kind\":\"wick_span_end_foreign\","));
      g_assert_true (g_str_has_suffix (rest, "}]}"));
      guint records = 0, foreign_here = 0;
      for (const char *at = strstr (rest, "{\"kind\":"); at != NULL; at = strstr (at + 1, "{\"kind\":"))
        records++;
      for (const char *at = strstr (rest, "{\"kind\":\"wick_span_end_foreign\",");
           at != NULL; at = strstr (at + 1, "{\"kind\":\"wick_span_end_foreign\","))
        foreign_here++;
      g_test_message ("s3's end carries %u foreign ends: %s", foreign_here, rest);
      g_assert_cmpuint (records, ==, foreign_here);
    }
  /* two foreign ends of s4 (threads 2 and 3), each a Wick record on a standard line */
  guint foreign = 0;
  for (guint i = 0; i < n; i++)
    for (const char *at = strstr (lines[i], "{\"kind\":\"wick_span_end_foreign\",");
         at != NULL; at = strstr (at + 1, "{\"kind\":\"wick_span_end_foreign\","))
      {
        foreign++;
        g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
        g_assert_nonnull (strstr (lines[i], "\"wick_records\":["));
        g_assert_nonnull (strstr (at, "\"span\":\"s4\",\"began_on_thread\":1,\"ended_on_thread\":"));
      }
  g_assert_cmpuint (foreign, ==, 2);
  /* both counted, on the terminal */
  g_assert_nonnull (strstr (lines[n - 1], ",\"wick_span_ends_foreign\":2"));
  g_assert_true (g_str_has_prefix (lines[6], "{\"kind\":\"span_start\",\"id\":\"s5\","
                                             "\"parent_id\":\"s4\",\"name\":\"d\""));
  g_unlink (path);
}

static void
test_tensor_stats_helper (void)
{
  float data[] = { 3.0f, -4.0f, 0.0f, 1.0f };
  WickTensorStatsRecord stats = { 0 };
  wick_tensor_stats_compute_f32 (data, 4, &stats);
  g_assert_cmpuint (stats.elements, ==, 4);
  g_assert_cmpuint (stats.non_finite, ==, 0);
  g_assert_cmpfloat (stats.rms, ==, sqrt (26.0 / 4.0));
  g_assert_cmpfloat (stats.abs_max, ==, 4.0);
  g_assert_cmpfloat (stats.mean, ==, 0.0);
  data[2] = NAN;
  data[3] = INFINITY;
  wick_tensor_stats_compute_f32 (data, 4, &stats);
  g_assert_cmpuint (stats.non_finite, ==, 2);
  g_assert_cmpfloat (stats.rms, ==, 0.0);
  g_assert_cmpfloat (stats.abs_max, ==, 0.0);
  wick_tensor_stats_compute_f32 (NULL, 0, &stats);
  g_assert_cmpuint (stats.elements, ==, 0);
  g_assert_cmpuint (wick_dtype_size (" BF16 "), ==, 2);
  g_assert_cmpuint (wick_dtype_size ("q4"), ==, 0);
  uint64_t dense = 0, big[] = { UINT64_C (1) << 32, UINT64_C (1) << 32 };
  g_assert_false (wick_dense_bytes (big, 2, "u8", &dense));
  g_assert_true (wick_dense_bytes (NULL, 0, "f64", &dense));
  g_assert_cmpuint (dense, ==, 8);
}

#define THREADS 4
#define SPANS_PER_THREAD 20000

typedef struct
{
  WickSession *session;
  int index;
} ThreadArgs;

static gpointer
record_thread (gpointer data)
{
  ThreadArgs *args = data;
  char name[32];
  g_snprintf (name, sizeof name, "worker-%d", args->index);
  WickString handle = wick_intern (args->session, name);
  /* odd workers name themselves before recording, worker 2 halfway through;
   * the others keep the OS name ("recorder") */
  if (args->index % 2 == 1)
    wick_thread_set_name (name);
  for (int i = 0; i < SPANS_PER_THREAD; i++)
    {
      if (args->index == 2 && i == SPANS_PER_THREAD / 2)
        wick_thread_set_name ("renamed-2");
      WickSpanId outer = wick_span_begin_interned (args->session, handle, WICK_SPAN_FUNCTION);
      g_assert_cmpuint (outer, !=, 0);
      if (i % 100 == 0)
        {
          uint64_t shape[] = { (uint64_t)i };
          WickOpRecord op = { .span = outer,
                              .op_name = name,
                              .shape = shape,
                              .rank = 1,
                              .dtype = "f32",
                              .device = "cpu",
                              .duration_ns = 1,
                              .timestamp_ns = 0 };
          g_assert_true (wick_session_record_op (args->session, &op, NULL));
        }
      g_assert_true (wick_span_end (args->session, outer));
    }
  return NULL;
}

static void
test_four_threads (void)
{
  g_autofree char *path = temp_path ("wick-test-threads.jsonl");
  WickSessionOptions options
    = { .jsonl_path = path, .policy = WICK_RING_BLOCK, .ring_bytes = 256 * 1024 };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  GThread *threads[THREADS];
  ThreadArgs args[THREADS];
  for (int t = 0; t < THREADS; t++)
    {
      args[t] = (ThreadArgs){ session, t };
      threads[t] = g_thread_new ("recorder", record_thread, &args[t]);
    }
  for (int t = 0; t < THREADS; t++)
    g_thread_join (threads[t]);
  WickError error;
  g_assert_true (wick_session_finish (session, &error));
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  wick_session_close (session);

  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  g_autoptr (GHashTable) started = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint starts[THREADS] = { 0 }, ends = 0, ops[THREADS] = { 0 }, thread_lines = 0;
  /* thread number -> its latest name, and worker -> the thread numbers its spans carried */
  g_autoptr (GHashTable) names = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  guint worker_thread[THREADS] = { 0 };
  for (guint i = 0; i < n; i++)
    {
      const char *line = lines[i];
      g_assert_false (g_str_has_prefix (line, "{\"kind\":\"wick_"));
      const char *named = strstr (line, ",\"wick_thread_name\":\"");
      if (named != NULL)
        {
          /* a thread's identity rides on its next span_start */
          g_assert_true (g_str_has_prefix (line, "{\"kind\":\"span_start\""));
          const char *thread = strstr (line, ",\"wick_thread\":");
          g_assert_true (thread != NULL && thread < named);
          guint number = (guint)g_ascii_strtoull (thread + strlen (",\"wick_thread\":"), NULL, 10);
          const char *name = named + strlen (",\"wick_thread_name\":\"");
          g_hash_table_insert (names, GUINT_TO_POINTER (number), g_strndup (name, strchr (name, '"') - name));
          g_assert_nonnull (strstr (line, ",\"wick_os_tid\":"));
          thread_lines++;
        }
      if (g_str_has_prefix (line, "{\"kind\":\"span_start\",\"id\":\""))
        {
          const char *thread = strstr (line, ",\"wick_thread\":");
          g_assert_nonnull (thread);
          g_assert_true (g_str_has_suffix (line, "}"));
          guint number = (guint)g_ascii_strtoull (thread + strlen (",\"wick_thread\":"), NULL, 10);
          /* a thread's record comes before its first span */
          g_assert_true (g_hash_table_contains (names, GUINT_TO_POINTER (number)));
          const char *id = line + strlen ("{\"kind\":\"span_start\",\"id\":\"");
          char *key = g_strndup (id, strchr (id, '"') - id);
          g_assert_false (g_hash_table_contains (started, key));
          g_hash_table_add (started, key);
          const char *worker = strstr (line, "\"name\":\"worker-");
          if (worker != NULL)
            {
              int t = worker[strlen ("\"name\":\"worker-")] - '0';
              starts[t]++;
              g_assert_true (number >= 2 && number <= THREADS + 1);
              if (worker_thread[t] == 0)
                worker_thread[t] = number;
              g_assert_cmpuint (worker_thread[t], ==, number);
              const char *expected = t == 2 && starts[t] > SPANS_PER_THREAD / 2 ? "renamed-2"
                                     : t % 2 == 1                               ? NULL
                                                                                : "recorder";
              if (expected == NULL)
                g_assert_true (g_str_has_prefix (g_hash_table_lookup (names, GUINT_TO_POINTER (number)), "worker-"));
              else
                g_assert_cmpstr (g_hash_table_lookup (names, GUINT_TO_POINTER (number)), ==, expected);
            }
          else
            g_assert_cmpuint (number, ==, 1); /* s1, on the opening thread */
        }
      else if (g_str_has_prefix (line, "{\"kind\":\"span_end\""))
        ends++;
      else if (g_str_has_prefix (line, "{\"kind\":\"op\""))
        ops[strstr (line, "\"op_name\":\"worker-")[strlen ("\"op_name\":\"worker-")] - '0']++;
    }
  for (int t = 0; t < THREADS; t++)
    {
      g_assert_cmpuint (starts[t], ==, SPANS_PER_THREAD);
      g_assert_cmpuint (ops[t], ==, SPANS_PER_THREAD / 100);
    }
  g_assert_cmpuint (ends, ==, THREADS * SPANS_PER_THREAD + 1);
  for (int a = 0; a < THREADS; a++)
    for (int b = a + 1; b < THREADS; b++)
      g_assert_cmpuint (worker_thread[a], !=, worker_thread[b]);
  /* the opening thread, each worker, worker 2's rename */
  g_assert_cmpuint (thread_lines, ==, 1 + THREADS + 1);
  g_assert_cmpuint (n, ==, 1 + 1 + 2 * THREADS * SPANS_PER_THREAD + THREADS * 200 + 1 + 1);
  g_unlink (path);
}

/* A full disk (RLIMIT_FSIZE stands in for it): the file
 * ends at a whole line, the lost lines are counted in the session's losses
 * and finish says so. */
static void
test_disk_full (void)
{
  g_autofree char *path = temp_path ("wick-test-disk-full.jsonl");
  const off_t limit = 100 * 1024;
  pid_t pid = fork ();
  if (pid == 0)
    {
      WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK };
      WickSession *session
        = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
      if (session == NULL)
        _exit (21);
      /* after the open: the ring's memfd is sized then */
      struct rlimit rl = { (rlim_t)limit, (rlim_t)limit };
      signal (SIGXFSZ, SIG_IGN);
      if (setrlimit (RLIMIT_FSIZE, &rl) != 0)
        _exit (20);
      for (int i = 0; i < 20000; i++)
        wick_span_end (session, wick_span_begin (session, "work", WICK_SPAN_FUNCTION));
      WickError error = { 0 };
      bool finished = wick_session_finish (session, &error);
      uint64_t lost = wick_session_get_dropped (session);
      wick_session_close (session);
      if (finished)
        _exit (22);
      if (lost == 0)
        _exit (23);
      if (strstr (error.message, "lines lost, the file ends at its last whole line") == NULL)
        _exit (24);
      _exit (0);
    }
  int status;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_assert_cmpuint (length, >, 0);
  g_assert_cmpuint (length, <=, (gsize)limit);
  g_assert_cmpint (text[length - 1], ==, '\n'); /* never mid-line */
  g_unlink (path);
}

/* A FIFO as the trace path: with no reader the session is refused at once
 * (it never waits in open() for another process); with a reader that stops
 * taking data the workload keeps recording, finish returns, and the lines the
 * pipe did not take are counted as lost. */
static void
test_trace_fifo (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-test-fifo-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "trace.fifo", NULL);
  g_assert_cmpint (mkfifo (path, 0600), ==, 0);

  WickSessionOptions options = { .jsonl_path = path };
  WickError error = { 0 };
  gint64 start = g_get_monotonic_time ();
  WickSession *session = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, &error);
  g_assert_null (session);
  g_assert_cmpint (error.code, ==, WICK_ERROR_IO);
  g_assert_nonnull (strstr (error.message, "a FIFO that no process has open for reading"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);

  /* a reader that opens the pipe and never reads it */
  int reader = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  g_assert_cmpint (reader, >=, 0);
  session = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, &error);
  g_assert_nonnull (session);
  for (int i = 0; i < 50000; i++)
    wick_span_end (session, wick_span_begin (session, "work", WICK_SPAN_FUNCTION));
  start = g_get_monotonic_time ();
  g_assert_false (wick_session_finish (session, &error));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);
  g_assert_cmpuint (wick_session_get_dropped (session), >, 0);
  g_assert_nonnull (strstr (error.message, "lines lost"));
  wick_session_close (session);
  close (reader);
  g_unlink (path);
  g_rmdir (dir);
}

/* Spans whose names the string arena has no room for are recorded under a
 * name that says so (never silently left out: 300 000 distinct names once
 * gave 65 534 spans and "complete"); spans nested deeper than the ring's
 * stack are counted as dropped. */
static void
test_names_lost (void)
{
  g_autofree char *path = temp_path ("wick-test-names-lost.jsonl");
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK,
                                 .string_arena_bytes = 4096 };
  WickError error = { 0 };
  WickSession *session = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, &error);
  g_assert_nonnull (session);
  const int n = 2000;
  for (int i = 0; i < n; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "step %d", i);
      WickSpanId span = wick_span_begin (session, name, WICK_SPAN_FUNCTION);
      g_assert_cmpuint (span, !=, 0);
      g_assert_true (wick_span_end (session, span));
    }
  /* deeper than the ring's stack: not recorded, counted */
  WickSpanId stack[WICK_RING_MAX_DEPTH + 2];
  int depth = 0;
  for (; depth < WICK_RING_MAX_DEPTH + 2; depth++)
    stack[depth] = wick_span_begin (session, "deep", WICK_SPAN_FUNCTION);
  g_assert_cmpuint (stack[WICK_RING_MAX_DEPTH + 1], ==, 0);
  while (depth-- > 0)
    wick_span_end (session, stack[depth]);
  g_assert_cmpuint (wick_session_get_dropped (session), >=, 2);
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);

  guint n_lines;
  g_auto (GStrv) lines = read_lines (path, &n_lines);
  guint starts = 0, lost = 0;
  for (guint i = 0; i < n_lines; i++)
    if (strstr (lines[i], "\"kind\":\"span_start\"") != NULL)
      {
        starts++;
        lost += strstr (lines[i], "\"name\":\"" WICK_NAME_NOT_RECORDED "\"") != NULL;
      }
  /* the root, every step, the deep spans the stack held */
  g_assert_cmpuint (starts, >=, 1 + (guint)n);
  g_assert_cmpuint (lost, >, 0);
  g_assert_cmpuint (lost, <, (guint)n);
  g_unlink (path);
}

/* Fork: two children forked while a span is open and the
 * parent's writer and a recording thread run, recording as DataLoader
 * workers do, then finishing and closing their copy of the session. Each
 * child must end (alarm: a finish waiting on the parent's writer thread, or
 * a lock a thread held at fork, kills it), nothing of theirs may reach the
 * parent's file, and the parent's ring stays whole: its finish succeeds with
 * nothing dropped and every one of its spans in the file. */
#define FORK_SPANS 20000

static gpointer
fork_parent_recorder (gpointer data)
{
  WickSession *session = data;
  for (int i = 0; i < FORK_SPANS; i++)
    {
      WickSpanId id = wick_span_begin (session, "parent-thread", WICK_SPAN_FUNCTION);
      g_assert_cmpuint (id, !=, 0);
      g_assert_true (wick_span_end (session, id));
    }
  return NULL;
}

static void
test_fork_children (void)
{
  g_autofree char *path = temp_path ("wick-test-fork.jsonl");
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  WickSpanId epoch = wick_span_begin (session, "epoch", WICK_SPAN_FUNCTION);
  GThread *recorder = g_thread_new ("recorder", fork_parent_recorder, session);
  pid_t children[2];
  for (int c = 0; c < 2; c++)
    {
      children[c] = fork ();
      g_assert_cmpint (children[c], >=, 0);
      if (children[c] == 0)
        {
          alarm (20);
          for (int i = 0; i < FORK_SPANS; i++)
            {
              WickSpanId id = wick_span_begin (session, "child-worker", WICK_SPAN_FUNCTION);
              wick_span_end (session, id);
            }
          WickOpRecord op = { .op_name = "child-op", .device = "cpu", .dtype = "f32",
                              .duration_ns = 5 };
          if (!wick_session_record_op (session, &op, NULL))
            _exit (30);
          wick_span_end (session, epoch); /* the parent's span, open at fork */
          WickError error = { "" };
          if (!wick_session_finish (session, &error))
            _exit (31);
          wick_session_close (session);
          _exit (0);
        }
    }
  for (int i = 0; i < FORK_SPANS; i++)
    g_assert_true (wick_span_end (session, wick_span_begin (session, "parent", WICK_SPAN_FUNCTION)));
  for (int c = 0; c < 2; c++)
    {
      int status = 0;
      g_assert_cmpint (waitpid (children[c], &status, 0), ==, children[c]);
      if (WIFSIGNALED (status))
        g_error ("forked child %d died of signal %d (SIGALRM: it hung)", c, WTERMSIG (status));
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
    }
  g_thread_join (recorder);
  g_assert_true (wick_span_end (session, epoch));
  WickError error = { "" };
  if (!wick_session_finish (session, &error))
    g_error ("the parent's finish failed after its children recorded: %s", error.message);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  wick_session_close (session);

  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  guint parent = 0, parent_thread = 0, starts = 0, ends = 0, terminals = 0;
  for (guint i = 0; i < n; i++)
    {
      g_assert_null (strstr (lines[i], "child-"));
      g_assert_null (strstr (lines[i], "wick_dropped"));
      if (g_str_has_prefix (lines[i], "{\"kind\":\"span_start\""))
        {
          starts++;
          parent += strstr (lines[i], "\"name\":\"parent\"") != NULL;
          parent_thread += strstr (lines[i], "\"name\":\"parent-thread\"") != NULL;
        }
      ends += g_str_has_prefix (lines[i], "{\"kind\":\"span_end\"");
      terminals += g_str_has_prefix (lines[i], "{\"kind\":\"terminal\"");
    }
  g_assert_cmpuint (parent, ==, FORK_SPANS);
  g_assert_cmpuint (parent_thread, ==, FORK_SPANS);
  g_assert_cmpuint (starts, ==, 2 * FORK_SPANS + 2); /* and s1, epoch */
  g_assert_cmpuint (ends, ==, starts);
  g_assert_cmpuint (terminals, ==, 1);
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"complete\""));
  g_unlink (path);
}

/* WickThreadHandle (wick/wick-thread-handle.h): the inline span calls write
 * the same records as the session calls, mixed on one thread, across chunk
 * ends and id blocks (a 256 KiB ring under block, 3000 spans of three levels);
 * a span begun elsewhere is refused with the reason; 128 levels at most; a
 * thread with no ring counts what it cannot record; a forked child records
 * nothing through its parent's handle. */
static gpointer
handle_end_elsewhere (gpointer data)
{
  WickSession *session = ((gpointer *)data)[0];
  WickSpanId span = GPOINTER_TO_SIZE (((gpointer *)data)[1]);
  WickThreadHandle *handle = wick_thread_handle_get (session);
  WickError error = { "" };
  gboolean ok = !wick_span_end_checked_on (handle, span, &error)
                && error.code == WICK_ERROR_WRONG_THREAD
                && strstr (error.message, "cannot be ended on wick thread") != NULL;
  return GINT_TO_POINTER (ok);
}

static gpointer
handle_without_ring (gpointer data)
{
  WickSession *session = data;
  WickThreadHandle *handle = wick_thread_handle_get (session);
  WickString name = wick_intern (session, "no-ring");
  WickSpanId span = wick_span_begin_on (handle, name, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  wick_span_end_on (handle, span);
  return GSIZE_TO_POINTER (span);
}

#define HANDLE_SPANS 3000

static void
test_thread_handle (void)
{
  g_autofree char *path = temp_path ("wick-test-handle.jsonl");
  WickSessionOptions options
    = { .jsonl_path = path, .policy = WICK_RING_BLOCK, .ring_bytes = 256 << 10, .max_threads = 2 };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  WickThreadHandle *handle = wick_thread_handle_get (session);
  g_assert_true (handle == wick_thread_handle_get (session));
  WickString outer = wick_intern (session, "outer"), inner = wick_intern (session, "inner");
  WickSpanId last = 0;
  for (int i = 0; i < HANDLE_SPANS; i++)
    {
      WickSpanId a = wick_span_begin_on (handle, outer, WICK_SPAN_MODULE, WICK_STEP_FORWARD);
      WickSpanId b = wick_span_begin (session, "middle", WICK_SPAN_FUNCTION);
      WickSpanId c = wick_span_begin_on (handle, inner, WICK_SPAN_OP, WICK_STEP_NONE);
      g_assert_cmpuint (a, >, last);
      g_assert_cmpuint (b, >, a);
      g_assert_cmpuint (c, >, b);
      g_assert_cmpuint (wick_span_current (session), ==, c);
      g_assert_true (wick_span_end_on (handle, c));
      g_assert_true (wick_span_end_on (handle, b));
      g_assert_true (wick_span_end (session, a));
      last = c;
    }
  /* another thread's handle: the span stays open here */
  WickSpanId open = wick_span_begin_on (handle, outer, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  gpointer args[2] = { session, GSIZE_TO_POINTER (open) };
  GThread *other = g_thread_new ("other", handle_end_elsewhere, args);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (other)));
  WickError why = { "" };
  g_assert_false (wick_span_end_checked_on (handle, 0, &why));
  g_assert_cmpint (why.code, ==, WICK_ERROR_DROPPED);
  g_assert_false (wick_span_end_on (handle, open + 1000));
  g_assert_true (wick_span_end_checked_on (handle, open, &why));
  /* a session of one ring: another thread has none */
  WickSessionOptions one = { .max_threads = 1 };
  WickSession *lone = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &one, NULL);
  GThread *third = g_thread_new ("third", handle_without_ring, lone);
  g_assert_cmpuint (GPOINTER_TO_SIZE (g_thread_join (third)), ==, 0);
  g_assert_cmpuint (wick_session_get_dropped (lone), ==, 1);
  wick_session_close (lone);
  /* 128 levels at most, as the session calls */
  WickSpanId deep[128];
  for (int i = 0; i < 128; i++)
    g_assert_cmpuint (
      (deep[i] = wick_span_begin_on (handle, inner, WICK_SPAN_FUNCTION, WICK_STEP_NONE)), !=, 0);
  g_assert_cmpuint (wick_span_begin_on (handle, inner, WICK_SPAN_FUNCTION, WICK_STEP_NONE), ==, 0);
  for (int i = 127; i >= 0; i--)
    g_assert_true (wick_span_end_on (handle, deep[i]));
  /* a forked child's spans through the parent's handle are not recorded */
  pid_t child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      alarm (20);
      WickString name = wick_intern (session, "child-handle");
      for (int i = 0; i < 1000; i++)
        if (wick_span_end_on (
              handle, wick_span_begin_on (handle, name, WICK_SPAN_FUNCTION, WICK_STEP_NONE)))
          _exit (40);
      _exit (0);
    }
  int status = 0;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_true (wick_session_finish (session, NULL));
  wick_session_close (session);

  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  guint starts = 0, ends = 0, outer_lines = 0;
  for (guint i = 0; i < n; i++)
    {
      g_assert_null (strstr (lines[i], "child-handle"));
      if (g_str_has_prefix (lines[i], "{\"kind\":\"span_start\""))
        starts++;
      ends += g_str_has_prefix (lines[i], "{\"kind\":\"span_end\"");
      outer_lines += strstr (lines[i], "\"name\":\"outer\",\"start_ns\"") != NULL;
    }
  g_assert_cmpuint (starts, ==, 1 + 3 * HANDLE_SPANS + 1 + 128);
  g_assert_cmpuint (ends, ==, starts);
  g_assert_cmpuint (outer_lines, ==, HANDLE_SPANS + 1);
  /* nesting through both kinds of call: outer in s1, middle in outer, inner in middle */
  g_assert_true (g_str_has_prefix (lines[2], "{\"kind\":\"span_start\",\"id\":\"s2\","
                                             "\"parent_id\":\"s1\",\"name\":\"outer\""));
  g_assert_true (g_str_has_prefix (lines[3], "{\"kind\":\"span_start\",\"id\":\"s3\","
                                             "\"parent_id\":\"s2\",\"name\":\"middle\""));
  g_assert_true (g_str_has_prefix (lines[4], "{\"kind\":\"span_start\",\"id\":\"s4\","
                                             "\"parent_id\":\"s3\",\"name\":\"inner\""));
  g_assert_nonnull (
    strstr (lines[2], "\"span_kind\":\"module\",\"measured\":false,\"step\":\"forward\""));
  g_assert_true (g_str_has_prefix (lines[5], "{\"kind\":\"span_end\",\"id\":\"s4\","));
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"failed\""));
  g_assert_nonnull (strstr (lines[n - 1], "records were lost: 1 dropped by the recorder"));
  g_unlink (path);
}

/* A child forked from a session can open its own: that one records. */
static void
test_fork_own_session (void)
{
  g_autofree char *path = temp_path ("wick-test-fork-parent.jsonl");
  g_autofree char *child_path = temp_path ("wick-test-fork-child.jsonl");
  WickSessionOptions options = { .jsonl_path = path };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  pid_t pid = fork ();
  if (pid == 0)
    {
      alarm (20);
      WickSessionOptions child_options = { .jsonl_path = child_path };
      WickSession *own
        = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &child_options, NULL);
      if (own == NULL)
        _exit (40);
      WickSpanId id = wick_span_begin (own, "in-child", WICK_SPAN_FUNCTION);
      if (id == 0 || !wick_span_end (own, id) || !wick_session_finish (own, NULL))
        _exit (41);
      wick_session_close (own);
      wick_session_close (session);
      _exit (0);
    }
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_true (wick_session_finish (session, NULL));
  wick_session_close (session);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (child_path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"name\":\"in-child\""));
  g_autofree char *run = g_strdup_printf ("\"run_id\":\"run-%d-", (int)pid);
  g_assert_nonnull (strstr (text, run));
  g_assert_nonnull (strstr (text, "{\"kind\":\"terminal\",\"outcome\":\"complete\""));
  g_unlink (path);
  g_unlink (child_path);
}

/* Threads one after another (glibc reuses a thread's stack and so its thread
 * pointer): each must record on a ring of its own, announced as its own
 * thread, never through the slot of the thread pointer's last owner
 * (wick_producer_fast_get). */
static gpointer
one_span_thread (gpointer data)
{
  WickSession *session = data;
  WickSpanId id = wick_span_begin (session, "sequential", WICK_SPAN_FUNCTION);
  g_assert_cmpuint (id, !=, 0);
  g_assert_true (wick_span_end (session, id));
  return NULL;
}

static void
test_sequential_threads (void)
{
  g_autofree char *path = temp_path ("wick-test-sequential.jsonl");
  WickSessionOptions options = { .jsonl_path = path, .policy = WICK_RING_BLOCK, .max_threads = 4 };
  WickSession *session
    = wick_session_open (&train_run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  for (int i = 0; i < 20; i++)
    g_thread_join (g_thread_new ("seq", one_span_thread, session));
  g_assert_true (wick_session_finish (session, NULL));
  wick_session_close (session);
  guint n;
  g_auto (GStrv) lines = read_lines (path, &n);
  g_autoptr (GHashTable) threads = g_hash_table_new (g_direct_hash, g_direct_equal);
  guint spans = 0;
  for (guint i = 0; i < n; i++)
    if (strstr (lines[i], "\"name\":\"sequential\"") != NULL)
      {
        const char *t = strstr (lines[i], ",\"wick_thread\":");
        g_assert_nonnull (t);
        guint number = (guint)g_ascii_strtoull (t + strlen (",\"wick_thread\":"), NULL, 10);
        g_assert_false (g_hash_table_contains (threads, GUINT_TO_POINTER (number)));
        g_hash_table_add (threads, GUINT_TO_POINTER (number));
        spans++;
      }
  g_assert_cmpuint (spans, ==, 20);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/session/open-validation", test_open_validation);
  g_test_add_func ("/core/session/record-refusals", test_record_refusals);
  g_test_add_func ("/core/session/file", test_session_file);
  g_test_add_func ("/core/session/four-threads", test_four_threads);
  g_test_add_func ("/core/session/span-nesting", test_span_nesting);
  g_test_add_func ("/core/session/disk-full", test_disk_full);
  g_test_add_func ("/core/session/trace-fifo", test_trace_fifo);
  g_test_add_func ("/core/session/names-lost", test_names_lost);
  g_test_add_func ("/core/session/fork-children", test_fork_children);
  g_test_add_func ("/core/session/sequential-threads", test_sequential_threads);
  g_test_add_func ("/core/session/fork-own-session", test_fork_own_session);
  g_test_add_func ("/core/session/thread-handle", test_thread_handle);
  g_test_add_func ("/core/gradient/manifest-digest", test_manifest_digest);
  g_test_add_func ("/core/gradient/contract-validation", test_contract_validation);
  g_test_add_func ("/core/gradient/plan-sorting-duplicates-empty",
                   test_plan_sorting_duplicates_empty);
  g_test_add_func ("/core/gradient/plan-records-manifest", test_plan_records_manifest_population);
  g_test_add_func ("/core/tensor-stats/helper", test_tensor_stats_helper);
  return g_test_run ();
}
