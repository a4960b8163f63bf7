/* test-weight-session.c — a store registered in a session: found through
 * wick_session_get_weight_store, freed with the session, and its evictions and
 * restores written to the trace as memory records of the storages they move
 * (carrying wick_weight_evict / wick_weight_restore) between device_memory
 * samples (what the memory chart draws). */
#include "weights-test-util.h"

#include <string.h>

static WickSession *
open_session (const char *jsonl_path, bool strict)
{
  WickRunInfo run = { 0 };
  run.entrypoint = "weights_test";
  run.phase = WICK_PHASE_TRAIN;
  run.capture_step = 1;
  run.device = "cpu";
  run.timing_mode = WICK_TIMING_HOST;
  WickCaptureContract contract = { 0 };
  contract.measurement_scope = WICK_SCOPE_PROFILED_WORK;
  WickSessionOptions options = { 0 };
  options.jsonl_path = jsonl_path;
  options.strict = strict;
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &contract, &options, &error);
  if (session == NULL)
    g_error ("wick_session_open: %s", error.message);
  return session;
}

typedef struct
{
  char **lines;
  guint n;
} Trace;

static Trace
read_trace (const char *path)
{
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  Trace trace = { g_strsplit (text, "\n", -1), 0 };
  trace.n = g_strv_length (trace.lines);
  g_free (text);
  return trace;
}

static int
find_line (const Trace *trace, int from, const char *needle)
{
  for (guint i = (guint)from; i < trace->n; i++)
    if (strstr (trace->lines[i], needle) != NULL)
      return (int)i;
  return -1;
}

static void
test_session_records (void)
{
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "trace.jsonl", NULL);
  WickSession *session = open_session (path, false);
  WickError error = { "" };
  WickWeightStore *store = wick_weight_store_new (session, &error);
  g_assert_nonnull (store);
  g_assert_true (wick_session_get_weight_store (session) == store);
  g_assert_null (wick_weight_store_new (session, &error));
  g_assert_cmpstr (error.message, ==, "the session already has a weight store");

  const size_t bytes = 8u << 20;
  float *weights = wick_weight_alloc_host (bytes, &error);
  weights_test_fill (weights, bytes, 9);
  const uint64_t shape[] = { bytes / 4 };
  WickWeightParam param = { "w", weights, WICK_DTYPE_F32, shape, 1 };
  WickWeightModuleInfo info = { "mod\"el", &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  WickWeightStats stats;
  g_assert_true (wick_weight_store_evict (store, "mod\"el", WICK_TIER_AUTO, &stats, &error));
  g_assert_true (wick_weight_store_restore (store, "mod\"el", &stats, &error));
  g_assert_false (wick_weight_store_restore (store, "missing", &stats, &error));
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session); /* frees the store too */
  g_assert_true (wick_weight_free_host (weights, &error));

  Trace trace = read_trace (path);
  if (g_getenv ("WEIGHTS_TEST_DUMP"))
    for (guint i = 0; i < trace.n; i++)
      g_printerr ("%s\n", trace.lines[i]);
  /* Each event sits between a device_memory sample taken before it and one
   * taken after it, so the memory chart shows the drop and the return; the
   * module's storage is a parameter allocation from its registration, freed
   * by the eviction and allocated again by the restore, and each event rides
   * on the memory record of the storage it moved (no line of a
   * wick_ kind). */
  for (guint i = 0; i < trace.n; i++)
    g_assert_false (g_str_has_prefix (trace.lines[i], "{\"kind\":\"wick_"));
  const char *storage = "\"storage_id\":\"weights:mod\\\"el:w\",\"tensor_id\":\"w\"";
  int registered = find_line (&trace, 0, storage);
  g_assert_cmpint (registered, >, 0);
  g_assert_true (g_str_has_prefix (trace.lines[registered], "{\"kind\":\"memory\""));
  g_assert_nonnull (strstr (trace.lines[registered], "\"device\":\"cpu\",\"bytes\":8388608,"
                                                     "\"action\":\"alloc\",\"shape\":[2097152],"
                                                     "\"dtype\":\"f32\",\"category\":\"parameter\""));
  g_assert_null (strstr (trace.lines[registered], "wick_weight"));
  int evict = find_line (&trace, 0, "{\"kind\":\"wick_weight_evict\"");
  g_assert_cmpint (evict, >, registered);
  g_assert_nonnull (strstr (trace.lines[evict - 1], "\"kind\":\"device_memory\",\"timestamp_ns\""));
  g_assert_nonnull (strstr (trace.lines[evict - 1], "\"device\":\"cpu\""));
  g_assert_true (g_str_has_prefix (trace.lines[evict], "{\"kind\":\"memory\""));
  g_assert_nonnull (strstr (trace.lines[evict], storage));
  g_assert_nonnull (strstr (trace.lines[evict], "\"action\":\"free\""));
  g_assert_true (g_str_has_prefix (trace.lines[evict + 1], "{\"kind\":\"device_memory\""));
  const char *record
    = strstr (trace.lines[evict], ",\"wick_records\":[{\"kind\":\"wick_weight_evict\"");
  g_assert_nonnull (record);
  g_assert_nonnull (strstr (record, "\"module\":\"mod\\\"el\""));
  g_assert_nonnull (strstr (record, "\"memory\":\"host\""));
  g_assert_nonnull (strstr (record, "\"tier\":\"auto\""));
  g_assert_nonnull (strstr (record, "\"disk\":0,\"ram\":1"));
  g_assert_nonnull (strstr (record, "\"freed_bytes\":8388608"));
  g_assert_nonnull (strstr (record, "\"ok\":true"));
  int restore = find_line (&trace, evict, "{\"kind\":\"wick_weight_restore\"");
  g_assert_cmpint (restore, ==, evict + 3);
  g_assert_nonnull (strstr (trace.lines[restore - 1], "\"kind\":\"device_memory\""));
  g_assert_true (g_str_has_prefix (trace.lines[restore], "{\"kind\":\"memory\""));
  g_assert_nonnull (strstr (trace.lines[restore], storage));
  g_assert_nonnull (strstr (trace.lines[restore], "\"action\":\"alloc\""));
  g_assert_true (g_str_has_prefix (trace.lines[restore + 1], "{\"kind\":\"device_memory\""));
  g_assert_nonnull (strstr (trace.lines[restore], "\"restored\":1"));
  g_assert_nonnull (strstr (trace.lines[restore], "\"restored_bytes\":8388608"));
  /* The refused restore of an unknown module writes nothing. */
  g_assert_cmpint (find_line (&trace, restore + 1, "wick_weight"), ==, -1);
  g_strfreev (trace.lines);

  /* A strict trace carries no wick_ records. */
  session = open_session (path, true);
  store = wick_weight_store_new (session, &error);
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);
  trace = read_trace (path);
  g_assert_cmpint (find_line (&trace, 0, "wick_weight"), ==, -1);
  g_strfreev (trace.lines);
  weights_test_rmdir (dir);
  g_free (path);
  g_free (dir);
}

static gpointer
evict_and_restore (gpointer data)
{
  WickWeightStore *store = data;
  WickError error = { "" };
  g_assert_true (wick_weight_store_evict (store, "m", WICK_TIER_RAM, NULL, &error));
  g_assert_true (wick_weight_store_restore (store, "m", NULL, &error));
  return NULL;
}

/* The control socket evicts from its own thread: those records reach the trace too. */
/* The session's store with one host module "m" (512 doubles at *w). */
static WickWeightStore *
store_with_module (WickSession *session, double **w)
{
  WickError error = { "" };
  WickWeightStore *store = wick_weight_store_new (session, &error);
  g_assert_nonnull (store);
  *w = wick_weight_alloc_host (4096, &error);
  g_assert_nonnull (*w);
  static const uint64_t shape[] = { 512 };
  WickWeightParam param = { "w", *w, WICK_DTYPE_F64, shape, 1 };
  WickWeightModuleInfo info = { "m", &param, 1, WICK_WEIGHT_MEMORY_HOST, NULL };
  g_assert_true (wick_weight_store_register_module (store, &info, &error));
  return store;
}

static void
test_records_from_another_thread (void)
{
  char *dir = weights_test_tmpdir ();
  char *path = g_build_filename (dir, "trace.jsonl", NULL);
  WickSession *session = open_session (path, false);
  WickError error = { "" };
  double *w;
  WickWeightStore *store = store_with_module (session, &w);
  GThread *thread = g_thread_new ("control", evict_and_restore, store);
  g_thread_join (thread);
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);
  g_assert_true (wick_weight_free_host (w, &error));
  Trace trace = read_trace (path);
  int evict = find_line (&trace, 0, "\"kind\":\"wick_weight_evict\"");
  g_assert_cmpint (evict, >, 0);
  g_assert_nonnull (
    strstr (trace.lines[evict], "\"module\":\"m\",\"memory\":\"host\",\"tier\":\"ram\""));
  /* the control thread's own records, in order (lines of the opening thread's
   * ring, such as s1's end at finish, may come between: rings are merged in
   * the order the writer drains them); each event rides on the memory
   * record of the storage it moved, written on the same thread, and the two
   * device_memory samples (after the eviction, before the restore) lie
   * between */
  int restore = find_line (&trace, evict, "\"kind\":\"wick_weight_restore\"");
  g_assert_cmpint (restore, >, evict);
  int between = 0;
  for (int i = evict + 1; i < restore; i++)
    between += !g_str_has_prefix (trace.lines[i], "{\"kind\":\"span_end\",\"id\":\"s1\"");
  g_assert_cmpint (between, ==, 2);
  g_assert_true (g_str_has_prefix (trace.lines[evict], "{\"kind\":\"memory\""));
  g_assert_nonnull (strstr (trace.lines[evict], "\"storage_id\":\"weights:m:w\""));
  g_assert_nonnull (strstr (trace.lines[evict], "\"action\":\"free\""));
  g_assert_true (g_str_has_prefix (trace.lines[restore], "{\"kind\":\"memory\""));
  g_assert_nonnull (strstr (trace.lines[restore], "\"action\":\"alloc\""));
  g_strfreev (trace.lines);
  weights_test_rmdir (dir);
  g_free (path);
  g_free (dir);
}

/* wick_weight_store_free on a session's store (docs/weights.md's first
 * version did it) leaves it to the session: no double free at close, the
 * store still registered and working meanwhile. */
static void
test_free_session_store (void)
{
  if (g_test_subprocess ())
    {
      WickSession *session = open_session (NULL, false);
      WickError error = { "" };
      double *w;
      WickWeightStore *store = store_with_module (session, &w);
      wick_weight_store_free (store);
      g_assert_true (wick_session_get_weight_store (session) == store);
      WickWeightStats stats;
      g_assert_true (wick_weight_store_evict (store, "m", WICK_TIER_AUTO, &stats, &error));
      g_assert_true (wick_weight_store_restore (store, "m", &stats, &error));
      g_assert_true (wick_session_finish (session, &error));
      wick_session_close (session);
      g_assert_true (wick_weight_free_host (w, &error));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*this weight store belongs to session weights_test and is freed by "
                             "wick_session_close; not freed now*");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/weights/session/free-session-store", test_free_session_store);
  g_test_add_func ("/weights/session/records", test_session_records);
  g_test_add_func ("/weights/session/records-from-another-thread",
                   test_records_from_another_thread);
  return g_test_run ();
}
