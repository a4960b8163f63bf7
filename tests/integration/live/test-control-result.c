/* test-control-result.c — the typed control results the live pages read
 * (app/client/wick-control-result.c): every command's real reply, taken from an
 * in-process session with a weight module and a stage over its control
 * socket, read into its struct; the protocol's documented shapes (busy, a
 * capture certificate with unmeasured figures); and malformed replies, each
 * refused with the member and the reason.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client/wick-control-result.h"
#include "client/wick-control-result-private.h"
#include "live-test-util.h"

static char *runtime_dir;

static float stage_input[4], stage_output[4];
static const int64_t stage_shape[1] = { 4 };

static void
stage_enqueue (void *stream, void *user_data)
{
  for (int i = 0; i < 4; i++)
    stage_output[i] = stage_input[i] * 2.0f;
}

typedef struct
{
  WickSession *session;
  float *weights;
  WickLiveConnection *connection;
} Fixture;

#define WEIGHT_BYTES (64u * 1024u)

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->session = live_test_open_session ("control-result.test", TRUE);
  WickError error = { "" };

  WickWeightStore *store = wick_weight_store_new (f->session, &error);
  g_assert_nonnull (store);
  f->weights = wick_weight_alloc_host (WEIGHT_BYTES, &error);
  g_assert_nonnull (f->weights);
  for (guint i = 0; i < WEIGHT_BYTES / 4; i++)
    f->weights[i] = (float)i;
  const uint64_t shape[] = { WEIGHT_BYTES / 4 };
  WickWeightParam param = { "w", f->weights, WICK_DTYPE_F32, shape, 1 };
  WickWeightModuleInfo info = { "encoder", &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));

  WickStageInfo stage = {
    .name = "double",
    .enqueue = stage_enqueue,
    .windows = &(WickStageBuffer){ "input", stage_input, WICK_STAGE_DTYPE_F32, stage_shape, 1 },
    .n_windows = 1,
    .output = { NULL, stage_output, WICK_STAGE_DTYPE_F32, stage_shape, 1 },
  };
  g_assert_nonnull (wick_session_register_stage (f->session, &stage, &error));

  g_autoptr (GError) gerror = NULL;
  f->connection
    = wick_live_connection_new (wick_session_get_control_socket_path (f->session), &gerror);
  g_assert_no_error (gerror);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  WickError error = { "" };
  wick_live_connection_free (f->connection);
  wick_session_close (f->session);
  g_assert_true (wick_weight_free_host (f->weights, &error));
}

/* Sends @command with one optional string member and reads the typed reply. */
static WickControlResult *
ask (Fixture *f, WickControlCommand command, const char *member, const char *value)
{
  g_autoptr (JsonObject) request
    = wick_live_request_new (wick_control_result_command_name (command));
  if (member != NULL)
    json_object_set_string_member (request, member, value);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (f->connection, request, 10000, NULL, &error);
  g_assert_no_error (error);
  WickControlResult *result = wick_control_result_parse (command, reply, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_cmpint (result->command, ==, command);
  return result;
}

static void
test_real_list (Fixture *f, gconstpointer data)
{
  g_autoptr (WickControlResult) list = ask (f, WICK_CONTROL_RESULT_LIST, NULL, NULL);
  g_assert_cmpint (list->status, ==, WICK_CONTROL_STATUS_OK);
  g_assert_null (list->error);
  g_assert_cmpuint (list->list.modules->len, ==, 1);
  const WickControlModule *module = wick_control_result_find_module (list, "encoder");
  g_assert_nonnull (module);
  g_assert_cmpint (module->where, ==, WICK_CONTROL_WHERE_RESIDENT);
  g_assert_cmpuint (module->bytes, ==, WEIGHT_BYTES);
  g_assert_cmpuint (module->parameters, ==, 1);
  g_assert_cmpuint (module->disk, ==, 0);
  g_assert_cmpuint (module->ram, ==, 0);
  g_assert_cmpuint (module->restored_count, ==, 0);
  g_assert_null (wick_control_result_find_module (list, "decoder"));
  g_assert_cmpuint (list->list.stages->len, ==, 1);
  const WickControlStage *stage = &g_array_index (list->list.stages, WickControlStage, 0);
  g_assert_cmpstr (stage->name, ==, "double");
  g_assert_cmpint (stage->state, ==, WICK_STAGE_EAGER);
  g_assert_true (list->list.weights);
  g_assert_true (list->list.capture);
  /* Whatever this machine has, the reason comes with "no". */
  g_assert_true (list->list.cuda == (list->list.cuda_unavailable == NULL));
}

static void
test_real_weights (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) request = wick_live_request_new ("evict");
  json_object_set_string_member (request, "module", "encoder");
  json_object_set_string_member (request, "tier", "ram");
  g_autoptr (JsonObject) reply
    = wick_live_connection_request (f->connection, request, 10000, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (WickControlResult) evict
    = wick_control_result_parse (WICK_CONTROL_RESULT_EVICT, reply, &error);
  g_assert_no_error (error);
  g_assert_cmpint (evict->status, ==, WICK_CONTROL_STATUS_OK);
  g_assert_cmpstr (evict->weights.module.name, ==, "encoder");
  g_assert_cmpint (evict->weights.module.where, ==, WICK_CONTROL_WHERE_RAM);
  g_assert_cmpuint (evict->weights.module.ram, ==, 1);
  g_assert_cmpuint (evict->weights.freed_bytes, ==, WEIGHT_BYTES);
  g_assert_true (evict->weights.seconds >= 0 && isfinite (evict->weights.seconds));

  g_autoptr (WickControlResult) list = ask (f, WICK_CONTROL_RESULT_LIST, NULL, NULL);
  g_assert_cmpint (wick_control_result_find_module (list, "encoder")->where, ==,
                   WICK_CONTROL_WHERE_RAM);

  g_autoptr (WickControlResult) unknown_evict
    = ask (f, WICK_CONTROL_RESULT_EVICT, "module", "decoder");
  g_assert_cmpint (unknown_evict->status, ==, WICK_CONTROL_STATUS_REFUSED);
  g_assert_nonnull (strstr (unknown_evict->error, "decoder"));

  g_autoptr (WickControlResult) restore = ask (f, WICK_CONTROL_RESULT_RESTORE, "module", "encoder");
  g_assert_cmpint (restore->status, ==, WICK_CONTROL_STATUS_OK);
  g_assert_cmpint (restore->weights.module.where, ==, WICK_CONTROL_WHERE_RESIDENT);
  g_assert_cmpuint (restore->weights.restored, ==, 1);
  g_assert_cmpuint (restore->weights.restored_bytes, ==, WEIGHT_BYTES);
  g_assert_cmpfloat (f->weights[1000], ==, 1000.0f);

  g_autoptr (WickControlResult) all = ask (f, WICK_CONTROL_RESULT_RESTORE_ALL, NULL, NULL);
  g_assert_cmpint (all->status, ==, WICK_CONTROL_STATUS_OK);
  g_assert_cmpuint (all->restore_all.restored_modules, ==, 0);

  g_autoptr (WickControlResult) unknown = ask (f, WICK_CONTROL_RESULT_RESTORE, "module", "nope");
  g_assert_cmpint (unknown->status, ==, WICK_CONTROL_STATUS_REFUSED);
  g_assert_nonnull (strstr (unknown->error, "nope"));
}

static void
test_real_stages (Fixture *f, gconstpointer data)
{
  g_autoptr (WickControlResult) capture = ask (f, WICK_CONTROL_RESULT_CAPTURE, "stage", "double");
  g_assert_cmpint (capture->status, ==, WICK_CONTROL_STATUS_OK);
  const WickControlCertificate *c = &capture->capture;
  g_assert_cmpstr (c->stage, ==, "double");
  g_assert_nonnull (c->reason);
  g_assert_cmpfloat (c->gate_cos, ==, 0.999);
  g_assert_cmpfloat (c->min_speedup, ==, 1.02);
  g_assert_cmpuint (c->warmup, ==, 3);
  if (!c->accepted)
    {
      /* Without a GPU: refused before anything was measured. */
      g_assert_cmpint (c->state, ==, WICK_STAGE_REFUSED);
      g_assert_true (isnan (c->speedup_median) || c->speedup_checked);
    }

  g_autoptr (WickControlResult) release = ask (f, WICK_CONTROL_RESULT_RELEASE, "stage", "double");
  if (release->status == WICK_CONTROL_STATUS_OK)
    {
      g_assert_cmpstr (release->release.name, ==, "double");
      g_assert_cmpint (release->release.state, !=, WICK_STAGE_CAPTURED);
    }
  else
    g_assert_nonnull (release->error);

  g_autoptr (WickControlResult) missing = ask (f, WICK_CONTROL_RESULT_CAPTURE, "stage", "triple");
  g_assert_cmpint (missing->status, ==, WICK_CONTROL_STATUS_REFUSED);
  g_assert_cmpstr (missing->error, ==, "no stage named \"triple\" is registered");

  g_autoptr (WickControlResult) mark = ask (f, WICK_CONTROL_RESULT_MARK, "label", "epoch 2");
  g_assert_cmpint (mark->status, ==, WICK_CONTROL_STATUS_OK);
  g_assert_cmpstr (mark->mark.label, ==, "epoch 2");
  g_autoptr (WickControlResult) empty = ask (f, WICK_CONTROL_RESULT_MARK, "label", "");
  g_assert_cmpint (empty->status, ==, WICK_CONTROL_STATUS_REFUSED);
  g_assert_cmpstr (empty->error, ==, "a mark's label must be 1 to 1024 bytes");
}

static WickControlResult *
parse_ok (WickControlCommand command, const char *text)
{
  g_autoptr (GError) error = NULL;
  WickControlResult *result = wick_control_result_parse_text (command, text, -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

/* Shapes as docs/protocol.md gives them. */
static void
test_documented_shapes (void)
{
  g_autoptr (WickControlResult) busy = parse_ok (
    WICK_CONTROL_RESULT_EVICT,
    "{\"v\":1,\"ok\":false,\"busy\":true,\"error\":\"busy: the session has been running "
    "\\\"capture\\\" for another client for 2.0 s; try again\"}");
  g_assert_cmpint (busy->status, ==, WICK_CONTROL_STATUS_BUSY);
  g_assert_true (g_str_has_prefix (busy->error, "busy: the session has been running \"capture\""));

  g_autoptr (WickControlResult) list = parse_ok (
    WICK_CONTROL_RESULT_LIST,
    "{\"v\":1,\"ok\":true,"
    "\"stages\":[{\"name\":\"denoise\",\"state\":\"eager\"},{\"name\":\"denoise-rng\","
    "\"state\":\"captured\"}],"
    "\"modules\":[{\"name\":\"embedding\",\"bytes\":4194304,\"parameters\":1,\"where\":"
    "\"resident\",\"disk\":0,\"ram\":0,\"restored_count\":0},{\"name\":\"trunk\",\"bytes\":"
    "1048576,\"parameters\":4,\"where\":\"disk+ram\",\"disk\":2,\"ram\":2,\"restored_count\":3}],"
    "\"cuda\":false,\"cuda_unavailable\":\"no CUDA device is available: no NVIDIA driver is "
    "installed (libcuda.so.1 cannot be loaded)\",\"weights\":true,\"capture\":true,"
    "\"future_member\":[1,2]}");
  g_assert_cmpuint (list->list.modules->len, ==, 2);
  const WickControlModule *trunk = wick_control_result_find_module (list, "trunk");
  g_assert_cmpint (trunk->where, ==, WICK_CONTROL_WHERE_DISK_RAM);
  g_assert_cmpuint (trunk->restored_count, ==, 3);
  g_assert_cmpint (g_array_index (list->list.stages, WickControlStage, 1).state, ==,
                   WICK_STAGE_CAPTURED);
  g_assert_true (g_str_has_prefix (list->list.cuda_unavailable, "no CUDA device is available"));

  /* A refused capture: ok, verdict refused, unmeasured figures null; the
   * writer prints a zero double as 0. */
  g_autoptr (WickControlResult) capture = parse_ok (
    WICK_CONTROL_RESULT_CAPTURE,
    "{\"v\":1,\"ok\":true,\"stage\":\"denoise\",\"verdict\":\"refused\",\"reason\":\"no CUDA "
    "device is available\",\"gate_cos\":0.999,\"min_speedup\":0,\"warmup\":3,"
    "\"parity_checked\":false,\"speedup_checked\":false,\"parity_cos\":null,\"max_abs\":null,"
    "\"p99_abs\":null,\"eager_ms\":null,\"replay_ms\":null,\"speedup_median\":null,"
    "\"speedup_min\":null,\"speedup_max\":null,\"kernel_nodes\":0,\"state\":\"refused\"}");
  g_assert_false (capture->capture.accepted);
  g_assert_cmpfloat (capture->capture.gate_cos, ==, 0.999);
  g_assert_cmpfloat (capture->capture.min_speedup, ==, 0.0);
  g_assert_true (isnan (capture->capture.parity_cos));
  g_assert_true (isnan (capture->capture.speedup_max));
  g_assert_cmpint (capture->capture.state, ==, WICK_STAGE_REFUSED);

  g_autoptr (WickControlResult) accepted = parse_ok (
    WICK_CONTROL_RESULT_CAPTURE,
    "{\"ok\":true,\"stage\":\"denoise\",\"verdict\":\"accepted\",\"reason\":\"parity and "
    "speedup gates passed\",\"gate_cos\":0.999,\"min_speedup\":1.02,\"warmup\":3,"
    "\"parity_checked\":true,\"speedup_checked\":true,\"parity_cos\":0.99999994,\"max_abs\":"
    "1.1920929e-07,\"p99_abs\":5.9604645e-08,\"eager_ms\":0.412,\"replay_ms\":0.108,"
    "\"speedup_median\":3.81,\"speedup_min\":3.2,\"speedup_max\":4.05,\"kernel_nodes\":12,"
    "\"state\":\"captured\"}");
  g_assert_true (accepted->capture.accepted);
  g_assert_cmpfloat (accepted->capture.speedup_median, ==, 3.81);
  g_assert_cmpuint (accepted->capture.kernel_nodes, ==, 12);
  g_assert_cmpint (accepted->capture.state, ==, WICK_STAGE_CAPTURED);
}

typedef struct
{
  WickControlCommand command;
  const char *reply;
  const char *message;
} Malformed;

static void
test_malformed (void)
{
  static const char module_head[]
    = "{\"ok\":true,\"stages\":[],\"cuda\":true,\"weights\":true,\"capture\":true,\"modules\":";
  g_autofree char *bad_where = g_strconcat (
    module_head,
    "[{\"name\":\"a\",\"bytes\":1,\"parameters\":1,\"where\":\"resident\",\"disk\":0,\"ram\":0,"
    "\"restored_count\":0},{\"name\":\"b\",\"bytes\":1,\"parameters\":1,\"where\":\"tape\","
    "\"disk\":0,\"ram\":0,\"restored_count\":0}]}",
    NULL);
  g_autofree char *negative = g_strconcat (
    module_head,
    "[{\"name\":\"a\",\"bytes\":-5,\"parameters\":1,\"where\":\"ram\",\"disk\":0,\"ram\":1,"
    "\"restored_count\":0}]}",
    NULL);
  g_autofree char *fraction = g_strconcat (
    module_head,
    "[{\"name\":\"a\",\"bytes\":1.5,\"parameters\":1,\"where\":\"ram\",\"disk\":0,\"ram\":1,"
    "\"restored_count\":0}]}",
    NULL);
  g_autofree char *twice = g_strconcat (
    module_head,
    "[{\"name\":\"a\",\"bytes\":1,\"parameters\":1,\"where\":\"ram\",\"disk\":0,\"ram\":1,"
    "\"restored_count\":0},{\"name\":\"a\",\"bytes\":1,\"parameters\":1,\"where\":\"ram\","
    "\"disk\":0,\"ram\":1,\"restored_count\":0}]}",
    NULL);
  g_autofree char *missing = g_strconcat (
    module_head, "[{\"name\":\"a\",\"bytes\":1,\"where\":\"ram\",\"disk\":0,\"ram\":1}]}", NULL);
  g_autofree char *not_object = g_strconcat (module_head, "[7]}", NULL);
  g_autofree char *not_array = g_strconcat (module_head, "{\"a\":1}}", NULL);
  const Malformed cases[] = {
    { WICK_CONTROL_RESULT_LIST, "not json", "the list reply is not JSON: " },
    { WICK_CONTROL_RESULT_LIST, "[1,2]", "the list reply is not a JSON object" },
    { WICK_CONTROL_RESULT_LIST, "{\"v\":1}", "the list reply's member \"ok\" is missing" },
    { WICK_CONTROL_RESULT_EVICT, "{\"ok\":\"yes\"}",
      "the evict reply's member \"ok\" must be true or false, not \"yes\"" },
    { WICK_CONTROL_RESULT_EVICT, "{\"ok\":false}",
      "the evict reply's member \"error\" is missing" },
    { WICK_CONTROL_RESULT_EVICT, "{\"ok\":false,\"error\":42}",
      "the evict reply's member \"error\" must be a string, not 42" },
    { WICK_CONTROL_RESULT_MARK, "{\"ok\":false,\"busy\":1,\"error\":\"busy\"}",
      "the mark reply's member \"busy\" must be true or false, not 1" },
    { WICK_CONTROL_RESULT_LIST, bad_where,
      "the list reply's member \"modules[1].where\" must be \"resident\", \"disk\", \"ram\" or "
      "\"disk+ram\", not \"tape\"" },
    { WICK_CONTROL_RESULT_LIST, negative,
      "the list reply's member \"modules[0].bytes\" must be a non-negative integer, not -5" },
    { WICK_CONTROL_RESULT_LIST, fraction,
      "the list reply's member \"modules[0].bytes\" must be a non-negative integer, not 1.5" },
    { WICK_CONTROL_RESULT_LIST, twice,
      "the list reply's member \"modules[1].name\" repeats the name \"a\"" },
    { WICK_CONTROL_RESULT_LIST, missing,
      "the list reply's member \"modules[0].parameters\" is missing" },
    { WICK_CONTROL_RESULT_LIST, not_object,
      "the list reply's member \"modules[0]\" must be an object, not 7" },
    { WICK_CONTROL_RESULT_LIST, not_array,
      "the list reply's member \"modules\" must be an array, not an object" },
    { WICK_CONTROL_RESULT_LIST,
      "{\"ok\":true,\"stages\":[{\"name\":\"s\",\"state\":\"asleep\"}],\"modules\":[],"
      "\"cuda\":true,\"weights\":true,\"capture\":true}",
      "the list reply's member \"stages[0].state\" must be \"eager\", \"captured\" or "
      "\"refused\", not \"asleep\"" },
    { WICK_CONTROL_RESULT_LIST,
      "{\"ok\":true,\"stages\":[],\"modules\":[],\"cuda\":false,\"cuda_unavailable\":null,"
      "\"weights\":true,\"capture\":true}",
      "the list reply's member \"cuda_unavailable\" must be a string, not null" },
    { WICK_CONTROL_RESULT_EVICT,
      "{\"ok\":true,\"module\":\"m\",\"where\":\"ram\",\"parameters\":1,\"bytes\":4,\"disk\":0,"
      "\"ram\":1,\"freed_bytes\":4,\"seconds\":null}",
      "the evict reply's member \"seconds\" must be a number, not null" },
    { WICK_CONTROL_RESULT_RESTORE,
      "{\"ok\":true,\"module\":\"m\",\"where\":\"resident\",\"parameters\":1,\"bytes\":4,"
      "\"disk\":0,\"ram\":0,\"restored\":1,\"seconds\":0.001}",
      "the restore reply's member \"restored_bytes\" is missing" },
    { WICK_CONTROL_RESULT_RESTORE_ALL, "{\"ok\":true,\"restored_modules\":\"all\"}",
      "the restore-all reply's member \"restored_modules\" must be a non-negative integer, not "
      "\"all\"" },
    { WICK_CONTROL_RESULT_CAPTURE,
      "{\"ok\":true,\"stage\":\"s\",\"verdict\":\"maybe\",\"reason\":\"\"}",
      "the capture reply's member \"verdict\" must be \"refused\" or \"accepted\", not "
      "\"maybe\"" },
    { WICK_CONTROL_RESULT_CAPTURE,
      "{\"ok\":true,\"stage\":\"s\",\"verdict\":\"refused\",\"reason\":\"r\",\"gate_cos\":0.9,"
      "\"min_speedup\":1,\"warmup\":3,\"parity_checked\":true,\"speedup_checked\":true,"
      "\"parity_cos\":\"high\"}",
      "the capture reply's member \"parity_cos\" must be a number or null, not \"high\"" },
    { WICK_CONTROL_RESULT_RELEASE, "{\"ok\":true,\"stage\":[\"s\"],\"state\":\"eager\"}",
      "the release reply's member \"stage\" must be a string, not an array" },
    { WICK_CONTROL_RESULT_MARK, "{\"ok\":true}", "the mark reply's member \"label\" is missing" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (WickControlResult) result
        = wick_control_result_parse_text (cases[i].command, cases[i].reply, -1, &error);
      g_assert_null (result);
      g_assert_error (error, WICK_LIVE_ERROR, WICK_LIVE_ERROR_PROTOCOL);
      if (!g_str_has_prefix (error->message, cases[i].message))
        g_error ("case %" G_GSIZE_FORMAT ": %s\n  expected: %s", i, error->message,
                 cases[i].message);
      if (g_str_has_suffix (cases[i].message, "\""))
        g_assert_cmpstr (error->message, ==, cases[i].message);
    }

  /* A long bad value is cut in the message. */
  g_autofree char *long_value = g_strnfill (200, 'x');
  g_autofree char *text = g_strdup_printf ("{\"ok\":true,\"restored_modules\":\"%s\"}", long_value);
  g_autoptr (GError) error = NULL;
  g_assert_null (
    wick_control_result_parse_text (WICK_CONTROL_RESULT_RESTORE_ALL, text, -1, &error));
  g_autofree char *cut = g_strnfill (39, 'x');
  g_autofree char *expected = g_strdup_printf (
    "the restore-all reply's member \"restored_modules\" must be a non-negative integer, not "
    "\"%s…",
    cut);
  g_assert_cmpstr (error->message, ==, expected);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = live_test_runtime_dir_new ("wick-result-test-XXXXXX");
  g_test_add ("/control/result/real-list", Fixture, NULL, fixture_set_up, test_real_list,
              fixture_tear_down);
  g_test_add ("/control/result/real-evict-restore", Fixture, NULL, fixture_set_up,
              test_real_weights, fixture_tear_down);
  g_test_add ("/control/result/real-capture-release-mark", Fixture, NULL, fixture_set_up,
              test_real_stages, fixture_tear_down);
  g_test_add_func ("/control/result/documented-shapes", test_documented_shapes);
  g_test_add_func ("/control/result/malformed", test_malformed);
  int status = g_test_run ();
  live_test_runtime_dir_remove (runtime_dir);
  return status;
}
