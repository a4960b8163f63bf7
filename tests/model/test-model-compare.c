/* test-model-compare.c — comparisons with known answers: synthetic training
 * runs of one workload with noise, one op made slower, a span removed, an
 * identity mismatch, cohorts, and `wick-trace compare` itself. */
#include "config.h"

#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sys/wait.h>

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-compare.h"
#include "compare-workload.h"

static const char *wick_trace_path;

static const WickCompareEntry *
find_entry (const WickComparison *c, WickCompareKind kind, const char *name)
{
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      if (e->kind == kind && strcmp (e->name, name) == 0)
        return e;
    }
  return NULL;
}

static WickComparison *
compare_pair (WickDocument *a, WickDocument *b, guint resamples)
{
  WickCompareOptions options = { FALSE, resamples, 0, -1 };
  g_autoptr (GError) error = NULL;
  WickComparison *c = wick_comparison_new (&a, 1, &b, 1, &options, &error);

  g_assert_no_error (error);
  g_assert_nonnull (c);
  return c;
}

/* Two runs of one workload: nothing significant, over many seeds; the
 * per-name 95% interval excludes 1 about 5% of the time. */
static void
test_noise_only (void)
{
  guint names = 0, excluded = 0, pairs_flagged = 0;
  const guint n_pairs = 40;

  for (guint p = 0; p < n_pairs; p++)
    {
      Workload wa = { 1000 + 2 * p, 32, NULL, 1, NULL, FALSE, 0.10 };
      Workload wb = wa;
      g_autoptr (WickDocument) a = NULL;
      g_autoptr (WickDocument) b = NULL;
      g_autoptr (WickComparison) c = NULL;

      wb.seed = wa.seed + 1;
      a = make_run (&wa);
      b = make_run (&wb);
      c = compare_pair (a, b, 1000);
      g_assert_true (c->identity_match);
      for (guint i = 0; i < c->entries->len; i++)
        {
          const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
          if (!e->testable)
            continue;
          names++;
          excluded += e->ci95_low > 1 || e->ci95_high < 1;
        }
      pairs_flagged += c->n_significant > 0;
    }
  g_test_message ("noise only: %u of %u per-name intervals exclude 1 (%.1f%%); %u of %u pairs "
                  "flag anything",
                  excluded, names, 100.0 * excluded / names, pairs_flagged, n_pairs);
  g_assert_cmpuint (names, >=, n_pairs * 10);
  /* nominal 5%; a percentile bootstrap over 32 steps runs a little narrow */
  g_assert_cmpfloat ((double) excluded / names, <=, 0.12);
  g_assert_cmpfloat ((double) excluded / names, >=, 0.01);
  /* Bonferroni and the minimum change keep the family-wise rate under 5% */
  g_assert_cmpuint (pairs_flagged, <=, n_pairs / 20);
}

/* Noise-only pairs at 8, 16 and 32 steps with 250 extra ops (500 more
 * testable names, spans and ops): the family-wise rate, the share of pairs
 * that flag anything, must hold at small step counts too (8-step pairs with
 * 500 names once flagged something in 9 of 10). Printed
 * for docs/compare.md. */
static void
test_noise_only_many_names (void)
{
  const guint steps[] = { 8, 16, 32 };
  const guint n_pairs = 20;
  guint flagged_total = 0;

  for (guint s = 0; s < G_N_ELEMENTS (steps); s++)
    {
      guint flagged = 0, names = 0, significant = 0;
      for (guint p = 0; p < n_pairs; p++)
        {
          Workload wa = { 5000 + 2 * p + 100 * s, steps[s], NULL, 1, NULL, FALSE, 0.10, 250 };
          Workload wb = wa;
          g_autoptr (WickDocument) a = NULL;
          g_autoptr (WickDocument) b = NULL;
          g_autoptr (WickComparison) c = NULL;

          wb.seed = wa.seed + 1;
          a = make_run (&wa);
          b = make_run (&wb);
          c = compare_pair (a, b, 1000);
          names += c->n_testable;
          significant += c->n_significant;
          flagged += c->n_significant > 0;
        }
      g_test_message ("noise only, %u steps, %u testable names a pair: %u of %u pairs flag "
                      "anything (%u names in all)",
                      steps[s], names / n_pairs, flagged, n_pairs, significant);
      g_assert_cmpuint (names / n_pairs, >=, 500);
      /* a family-wise rate of 5% flags more than 3 of 20 with probability 1.6% */
      g_assert_cmpuint (flagged, <=, 3);
      flagged_total += flagged;
    }
  /* and more than 6 of 60 with probability 2.4% */
  g_assert_cmpuint (flagged_total, <=, 6);
}

static gboolean
contains_relu (const char *name)
{
  /* relu and the spans that contain it */
  return strcmp (name, "relu") == 0 || strcmp (name, "forward") == 0
         || strcmp (name, "train_step") == 0 || strcmp (name, "demo") == 0;
}

static void
test_one_op_slower (void)
{
  Workload wa = { 7, 24, NULL, 1, NULL, FALSE, 0.10 };
  Workload wb = { 8, 24, "relu", 1.30, NULL, FALSE, 0.10 };
  g_autoptr (WickDocument) a = make_run (&wa);
  g_autoptr (WickDocument) b = make_run (&wb);
  g_autoptr (WickComparison) c = compare_pair (a, b, 0);
  const WickCompareEntry *relu = find_entry (c, WICK_COMPARE_SPAN, "relu");
  const WickCompareEntry *relu_op = find_entry (c, WICK_COMPARE_OP, "relu");
  const WickCompareEntry *matmul = find_entry (c, WICK_COMPARE_SPAN, "matmul");
  const WickCompareEntry *relu_grad = find_entry (c, WICK_COMPARE_SPAN, "relu_grad");

  g_assert_nonnull (relu);
  g_assert_true (relu->significant);
  g_assert_cmpfloat (relu->ci95_low, >, 1.0);
  g_assert_cmpfloat (relu->ratio, >, 1.2);
  g_assert_true (relu_op && relu_op->significant);
  g_assert_true (matmul && !matmul->significant);
  g_assert_true (relu_grad && !relu_grad->significant);
  g_assert_cmpfloat (relu_grad->ci95_low, <, 1.0);
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      if (e->significant)
        g_assert_true (contains_relu (e->name));
    }
  /* sorted: significant first */
  g_assert_true (g_array_index (c->entries, WickCompareEntry, 0).significant);
  /* steps found and counted */
  g_assert_cmpuint (((WickCompareRun *) c->runs_a->pdata[0])->steps->len, ==, 24);
  g_assert_cmpfloat (relu->count_per_step_a, ==, 1.0);
}

static void
test_removed_span (void)
{
  Workload wa = { 11, 16, NULL, 1, NULL, FALSE, 0.05 };
  Workload wb = { 12, 16, NULL, 1, NULL, TRUE, 0.05 };
  g_autoptr (WickDocument) a = make_run (&wa);
  g_autoptr (WickDocument) b = make_run (&wb);
  g_autoptr (WickComparison) c = compare_pair (a, b, 0);
  const WickCompareEntry *softmax = find_entry (c, WICK_COMPARE_SPAN, "softmax");

  g_assert_nonnull (softmax);
  g_assert_cmpint (softmax->status, ==, WICK_COMPARE_REMOVED);
  g_assert_cmpuint (softmax->count_a, ==, 16);
  g_assert_cmpuint (softmax->count_b, ==, 0);
  g_assert_false (softmax->significant);
  /* swapped, it is added */
  {
    g_autoptr (WickComparison) d = compare_pair (b, a, 0);
    g_assert_cmpint (find_entry (d, WICK_COMPARE_SPAN, "softmax")->status, ==, WICK_COMPARE_ADDED);
  }
}

static void
test_identity_mismatch (void)
{
  Workload wa = { 21, 8, NULL, 1, "bf16", FALSE, 0.05 };
  Workload wb = { 22, 8, NULL, 1, "f32", FALSE, 0.05 };
  g_autoptr (WickDocument) a = make_run (&wa);
  g_autoptr (WickDocument) b = make_run (&wb);
  g_autoptr (GError) error = NULL;
  g_autoptr (WickComparison) refused = wick_comparison_new (&a, 1, &b, 1, NULL, &error);
  WickCompareOptions anyway = { TRUE, 200, 0, -1 };
  g_autoptr (WickComparison) c = NULL;

  g_assert_null (refused);
  g_assert_error (error, WICK_COMPARE_ERROR, WICK_COMPARE_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "precision: bf16 vs f32"));
  c = wick_comparison_new (&a, 1, &b, 1, &anyway, NULL);
  g_assert_nonnull (c);
  g_assert_false (c->identity_match);
  g_assert_cmpuint (c->differences->len, ==, 1);
  g_assert_cmpstr (((WickCompareDifference *) c->differences->pdata[0])->field, ==, "precision");
}

static WickDocument *
load_chrome (const char *name)
{
  const char *data = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path = g_build_filename (data ? data : "tests/data", "chrome", name, NULL);
  g_autoptr (GError) error = NULL;
  WickDocument *doc = wick_document_new ();

  if (!wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error))
    g_error ("%s: %s", name, error->message);
  return doc;
}

static const WickCompareDifference *
find_difference (const WickComparison *c, const char *field)
{
  for (guint i = 0; i < c->differences->len; i++)
    {
      const WickCompareDifference *d = c->differences->pdata[i];
      if (strcmp (d->field, field) == 0)
        return d;
    }
  return NULL;
}

/* Two Chrome/PyTorch traces (HTA's public ones) are compared whatever their
 * file names: their identity is what they carry. The same job's rank 1
 * twice (trace_compare base and test): no difference at all. Rank 0 of an
 * A100 job against rank 34 of a CPU-only job: compared, every difference
 * informational (rank, devices, distributedInfo members); no entry is the
 * root Wick names after each file. */
static void
test_chrome_identity (void)
{
  g_autoptr (WickDocument) base = load_chrome ("hta-compare-base.json.gz");
  g_autoptr (WickDocument) test = load_chrome ("hta-compare-test.json.gz");
  g_autoptr (WickDocument) gpu = load_chrome ("hta-simple-add.json.gz");
  g_autoptr (WickDocument) cpu = load_chrome ("hta-cpu-only-rank-34.pt.trace.json.gz");
  g_autoptr (WickComparison) same = compare_pair (base, test, 200);
  g_autoptr (WickComparison) c = compare_pair (gpu, cpu, 200);
  const WickCompareDifference *d;

  g_assert_true (same->identity_match);
  g_assert_cmpuint (same->differences->len, ==, 0);
  g_assert_nonnull (find_entry (same, WICK_COMPARE_SPAN, "ProfilerStep#1009"));
  g_assert_null (find_entry (same, WICK_COMPARE_SPAN, "hta-compare-base.json.gz"));
  g_assert_null (find_entry (same, WICK_COMPARE_SPAN, "hta-compare-test.json.gz"));

  g_assert_true (c->identity_match);
  for (guint i = 0; i < c->differences->len; i++)
    g_assert_true (((WickCompareDifference *)c->differences->pdata[i])->informational);
  d = find_difference (c, "distributedInfo.rank");
  g_assert_nonnull (d);
  g_assert_cmpstr (d->a, ==, "0");
  g_assert_cmpstr (d->b, ==, "34");
  d = find_difference (c, "deviceProperties");
  g_assert_nonnull (d);
  g_assert_cmpstr (d->a, ==, "8 × NVIDIA A100-PG509-200 (compute 8.0, 39.4 GiB)");
  g_assert_cmpstr (d->b, ==, "none");
  d = find_difference (c, "distributedInfo.world_size");
  g_assert_nonnull (d);
  g_assert_cmpstr (d->a, ==, "(absent)");
  g_assert_cmpstr (d->b, ==, "300");
  g_assert_null (find_difference (c, "entrypoint"));
  g_assert_null (find_difference (c, "device"));
  g_assert_null (find_difference (c, "traceName"));
  for (guint i = 0; i < c->entries->len; i++)
    g_assert_null (strstr (g_array_index (c->entries, WickCompareEntry, i).name, ".json"));
}

static void
test_cohorts (void)
{
  WickDocument *a[3], *b[3];
  g_autoptr (WickComparison) c = NULL;
  const WickCompareEntry *relu;

  for (guint i = 0; i < 3; i++)
    {
      Workload wa = { 100 + i, 12, NULL, 1, NULL, FALSE, 0.10 };
      Workload wb = { 200 + i, 12, "relu", 1.30, NULL, FALSE, 0.10 };
      a[i] = make_run (&wa);
      b[i] = make_run (&wb);
    }
  c = wick_comparison_new (a, 3, b, 3, NULL, NULL);
  g_assert_nonnull (c);
  relu = find_entry (c, WICK_COMPARE_SPAN, "relu");
  g_assert_true (relu->significant);
  g_assert_cmpuint (relu->count_a, ==, 36);
  g_assert_cmpfloat (relu->count_per_run_a, ==, 12);
  g_assert_cmpuint (c->runs_a->len, ==, 3);
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      if (e->significant)
        g_assert_true (contains_relu (e->name));
    }
  for (guint i = 0; i < 3; i++)
    {
      g_object_unref (a[i]);
      g_object_unref (b[i]);
    }
}

/* The same seed gives the same intervals: results are reproducible. */
static void
test_deterministic (void)
{
  Workload wa = { 31, 16, NULL, 1, NULL, FALSE, 0.1 };
  Workload wb = { 32, 16, NULL, 1, NULL, FALSE, 0.1 };
  g_autoptr (WickDocument) a = make_run (&wa);
  g_autoptr (WickDocument) b = make_run (&wb);
  g_autoptr (WickComparison) c1 = compare_pair (a, b, 300);
  g_autoptr (WickComparison) c2 = compare_pair (a, b, 300);
  g_autofree char *j1 = wick_comparison_to_json (c1);
  g_autofree char *j2 = wick_comparison_to_json (c2);

  g_assert_cmpstr (j1, ==, j2);
}

static void
cli_run (const char *const *argv, int *status, char **out)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               out, NULL, status, &error));
  g_assert_no_error (error);
}

static void
test_cli (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-compare-XXXXXX", NULL);
  g_autofree char *pa = g_build_filename (dir, "a.jsonl", NULL);
  g_autofree char *pb = g_build_filename (dir, "b.jsonl", NULL);
  g_autofree char *pc = g_build_filename (dir, "c.jsonl", NULL);
  g_autofree char *out = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *root;
  JsonArray *spans;
  int status;
  const char *argv_json[] = { wick_trace_path, "compare", "--json", pa, pb, NULL };
  const char *argv_same[] = { wick_trace_path, "compare", pa, pa, NULL };
  const char *argv_mismatch[] = { wick_trace_path, "compare", "--json", pa, pc, NULL };
  const char *argv_usage[] = { wick_trace_path, "compare", pa, NULL };
  gboolean relu_flagged = FALSE;

  if (wick_trace_path == NULL)
    {
      g_test_skip ("no wick-trace path given");
      return;
    }
  {
    Workload w[3] = { { 41, 20, NULL, 1, NULL, FALSE, 0.1 },
                      { 42, 20, "relu", 1.3, NULL, FALSE, 0.1 },
                      { 43, 20, NULL, 1, "f32", FALSE, 0.1 } };
    const char *paths[3] = { pa, pb, pc };
    for (guint i = 0; i < 3; i++)
      {
        g_autofree char *text = make_run_text (&w[i]);
        g_assert_true (g_file_set_contents (paths[i], text, -1, NULL));
      }
  }

  cli_run (argv_json, &status, &out);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (json_object_get_boolean_member (json_object_get_object_member (root, "identity"),
                                                 "match"));
  spans = json_object_get_array_member (root, "spans");
  for (guint i = 0; i < json_array_get_length (spans); i++)
    {
      JsonObject *e = json_array_get_object_element (spans, i);
      const char *name = json_object_get_string_member (e, "name");
      g_assert_true (json_object_has_member (e, "ci95_low"));
      g_assert_true (json_object_has_member (e, "count_a"));
      if (json_object_get_boolean_member (e, "significant"))
        {
          g_assert_true (contains_relu (name));
          relu_flagged |= strcmp (name, "relu") == 0;
        }
    }
  g_assert_true (relu_flagged);
  g_assert_true (json_object_has_member (root, "memory"));
  g_assert_true (json_object_has_member (root, "gradients"));
  g_assert_true (json_object_has_member (root, "health"));
  g_clear_pointer (&out, g_free);

  cli_run (argv_same, &status, &out);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_clear_pointer (&out, g_free);

  cli_run (argv_mismatch, &status, &out);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 3);
  g_assert_nonnull (strstr (out, "\"field\":\"precision\""));
  g_clear_pointer (&out, g_free);

  cli_run (argv_usage, &status, &out);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 3);
  g_clear_pointer (&out, g_free);

  /* cohorts through GLib's option parser (2.74's removes
   * the `--` of `--cohort A... -- B...`, which was always a usage error):
   * A's files as arguments (or --cohort-a), B's each after --cohort-b */
  {
    const char *argv_cohort[] = { wick_trace_path, "compare", "--json", pa, pa,
                                  "--cohort-b", pb, "--cohort-b", pb, NULL };
    const char *argv_cohort_a[] = { wick_trace_path, "compare", "--json", "--cohort-a", pa,
                                    "--cohort-a", pa, "--cohort-a", pa, "--cohort-b", pb, "--cohort-b",
                                    pb, NULL };
    const char *const *forms[] = { argv_cohort, argv_cohort_a };
    const guint n_a[] = { 2, 3 };
    for (guint f = 0; f < G_N_ELEMENTS (forms); f++)
      {
        JsonObject *runs;
        cli_run (forms[f], &status, &out);
        g_assert_true (WIFEXITED (status));
        g_assert_cmpint (WEXITSTATUS (status), <=, 1);
        g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
        runs = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                              "runs");
        g_assert_cmpuint (json_array_get_length (json_object_get_array_member (runs, "a")), ==,
                          n_a[f]);
        g_assert_cmpuint (json_array_get_length (json_object_get_array_member (runs, "b")), ==, 2);
        g_clear_pointer (&out, g_free);
      }
  }

  g_unlink (pa);
  g_unlink (pb);
  g_unlink (pc);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc > 1)
    wick_trace_path = argv[1];
  g_test_add_func ("/compare/noise-only", test_noise_only);
  g_test_add_func ("/compare/noise-only-many-names", test_noise_only_many_names);
  g_test_add_func ("/compare/one-op-slower", test_one_op_slower);
  g_test_add_func ("/compare/removed-span", test_removed_span);
  g_test_add_func ("/compare/identity-mismatch", test_identity_mismatch);
  g_test_add_func ("/compare/chrome-identity", test_chrome_identity);
  g_test_add_func ("/compare/cohorts", test_cohorts);
  g_test_add_func ("/compare/deterministic", test_deterministic);
  g_test_add_func ("/compare/cli", test_cli);
  return g_test_run ();
}
