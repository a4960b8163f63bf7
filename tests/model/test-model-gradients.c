/* test-model-gradients.c — gradient rules, the exact contract, the manifest
 * digest and the coverage verdict (spec §7), and the gradient report. */
#include "config.h"

#include "model-test-util.h"
#include "wick-gradient-report.h"

#define GOLDEN "sha256:d7f0b4aa8a4072b9824018c8d3eff5757286f1348366c15ef8780be38945fcc6"
#define EXPECTED                                                                                   \
  "[{\"root\":\"parameters\",\"key\":\"trunk.weight\",\"family\":\"trunk\"},"                      \
  "{\"root\":\"parameters\",\"key\":\"frozen.weight\",\"family\":\"frozen\"},"                     \
  "{\"root\":\"parameters\",\"key\":\"optional.weight\",\"family\":\"optional\"}]"
#define FAMILIES                                                                                   \
  "[{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":1},"                          \
  "{\"family\":\"frozen\",\"expectation\":\"inactive\",\"min_present\":0},"                        \
  "{\"family\":\"optional\",\"expectation\":\"data_conditional\",\"min_present\":1}]"
#define GRAD(id, key, state, norm)                                                                 \
  "{\"kind\":\"gradient\",\"event_id\":\"" id "\",\"root\":\"parameters\",\"key\":\"" key          \
  "\",\"state\":\"" state "\"" norm "}"

static char *
contract_meta (const char *coverage, const char *digest, const char *expected, const char *families)
{
  g_autofree char *replacement = NULL;

  if (digest == NULL)
    replacement = g_strdup_printf ("\"device_timing\":\"none\",\"gradients\":\"%s\"", coverage);
  else
    replacement = g_strdup_printf ("\"device_timing\":\"none\",\"gradients\":\"%s\","
                                   "\"gradient_contract\":{\"manifest_sha256\":\"%s\","
                                   "\"expected\":%s,\"families\":%s}",
                                   coverage, digest, expected, families);
  return meta_with ("\"device_timing\":\"none\"", replacement);
}

static WickDocument *
with_gradients (const char *meta, const char *g1, const char *g2, const char *g3, const char *g4)
{
  return parse_lines (meta, ROOT_START, ROOT_END, g1 ? g1 : TERMINAL,
                      g1 ? (g2 ? g2 : TERMINAL) : NULL, g1 && g2 ? (g3 ? g3 : TERMINAL) : NULL,
                      g1 && g2 && g3 ? (g4 ? g4 : TERMINAL) : NULL,
                      g1 && g2 && g3 && g4 ? TERMINAL : NULL, NULL);
}

static void
assert_verdict (WickDocument *doc, const char *codes, WickCoverageVerdict verdict)
{
  g_autofree char *actual = issue_codes (doc, FALSE);

  g_assert_false (wick_document_get_parse_error (doc)->failed);
  g_assert_cmpstr (actual, ==, codes);
  g_assert_cmpstr (wick_coverage_verdict_to_string (wick_document_get_gradient_coverage (doc)), ==,
                   wick_coverage_verdict_to_string (verdict));
}

static void
test_gradient_complete (void)
{
  g_autofree char *meta = contract_meta ("complete", GOLDEN, EXPECTED, FAMILIES);
  g_autoptr (WickDocument) doc
    = with_gradients (meta, GRAD ("gradient-1", "frozen.weight", "missing", ""),
                      GRAD ("gradient-2", "optional.weight", "zero", ",\"norm\":0.0"),
                      GRAD ("gradient-3", "trunk.weight", "present", ",\"norm\":0.5"), NULL);
  g_autoptr (WickGradientReport) report = wick_gradient_report_new (doc);
  const WickGradientEntryRow *trunk;
  const WickGradientFamilyRow *family;

  assert_verdict (doc, "", WICK_COVERAGE_VERDICT_COMPLETE);
  g_assert_true (report->has_contract);
  g_assert_cmpstr (report->computed_sha256, ==, GOLDEN);
  g_assert_true (report->digest_matches);
  g_assert_null (report->contract_error);
  g_assert_cmpuint (report->entries->len, ==, 3);
  trunk = &g_array_index (report->entries, WickGradientEntryRow, 0);
  g_assert_cmpstr (wick_document_str (doc, trunk->key), ==, "trunk.weight");
  g_assert_true (trunk->observed);
  g_assert_cmpint (trunk->state, ==, WICK_GRADIENT_PRESENT);
  g_assert_cmpfloat (trunk->norm, ==, 0.5);
  family = &g_array_index (report->families, WickGradientFamilyRow, 1);
  g_assert_cmpstr (wick_document_str (doc, family->family), ==, "frozen");
  g_assert_cmpuint (family->members, ==, 1);
  g_assert_cmpuint (family->attached, ==, 0);
  g_assert_cmpstr (family->verdict, ==, "ok");
  g_assert_cmpint (report->verdict, ==, WICK_COVERAGE_VERDICT_COMPLETE);
}

static void
test_gradient_family_failures (void)
{
  g_autofree char *meta = contract_meta ("complete", GOLDEN, EXPECTED, FAMILIES);
  g_autoptr (WickDocument) doc
    = with_gradients (meta, GRAD ("g1", "frozen.weight", "zero", ",\"norm\":0"),
                      GRAD ("g2", "optional.weight", "non_finite", ""),
                      GRAD ("g3", "trunk.weight", "zero", ",\"norm\":0"), NULL);
  g_autoptr (WickGradientReport) report = wick_gradient_report_new (doc);

  assert_verdict (doc,
                  "E gradient_active_family_below_minimum E gradient_inactive_family_leakage "
                  "E gradient_family_non_finite",
                  WICK_COVERAGE_VERDICT_INVALID);
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "active gradient family \"trunk\" has 0 present gradients; requires at least 1");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==,
                   "inactive gradient family \"frozen\" has 1 attached gradient");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==,
                   "gradient family \"optional\" contains 1 non-finite gradient");
  g_assert_cmpstr (g_array_index (report->families, WickGradientFamilyRow, 0).verdict, ==,
                   "below minimum");
  g_assert_cmpstr (g_array_index (report->families, WickGradientFamilyRow, 1).verdict, ==,
                   "leakage");
  g_assert_cmpstr (g_array_index (report->families, WickGradientFamilyRow, 2).verdict, ==,
                   "non-finite");
}

static void
test_gradient_manifest_keys (void)
{
  g_autofree char *meta = contract_meta ("complete", GOLDEN, EXPECTED, FAMILIES);
  g_autoptr (WickDocument) doc = with_gradients (
    meta, GRAD ("g1", "trunk.weight", "present", ",\"norm\":1"),
    GRAD ("g2", "trunk.weight", "present", ",\"norm\":2"), GRAD ("g3", "zzz", "missing", ""),
    GRAD ("g3", "frozen.weight", "missing", ""));

  assert_verdict (doc,
                  "E duplicate_gradient_event_id E gradient_manifest_duplicate_key "
                  "E gradient_manifest_undeclared_key E gradient_manifest_missing_key",
                  WICK_COVERAGE_VERDICT_INVALID);
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==,
                   "gradient event ID \"g3\" occurs more than once");
  g_assert_cmpstr (
    nth_issue (doc, 1)->message, ==,
    "gradient (\"parameters\", \"trunk.weight\") occurs 2 times; expected exactly once");
  g_assert_cmpstr (nth_issue (doc, 2)->message, ==,
                   "gradient (\"parameters\", \"zzz\") is absent from the manifest");
  g_assert_cmpstr (nth_issue (doc, 3)->message, ==,
                   "manifest gradient (\"parameters\", \"optional.weight\") was not captured");
}

static void
test_gradient_failed_capture (void)
{
  g_autofree char *meta = contract_meta ("complete", GOLDEN, EXPECTED, FAMILIES);
  g_autoptr (WickDocument) doc = parse_lines (
    meta, ROOT_START, GRAD ("g1", "frozen.weight", "missing", ""), TERMINAL_FAILED, NULL);

  /* missing keys are warnings, the incomplete active family is not judged */
  assert_verdict (doc,
                  "W capture_failed W open_span W gradient_manifest_missing_key "
                  "W gradient_manifest_missing_key",
                  WICK_COVERAGE_VERDICT_PARTIAL);
}

static void
test_gradient_norm_consistency (void)
{
  static const struct
  {
    const char *line;
    const char *message;
  } cases[] = {
    { GRAD ("g", "k", "present", ""),
      "gradient (\"parameters\", \"k\") state `present` is inconsistent with norm None" },
    { GRAD ("g", "k", "present", ",\"norm\":0"),
      "gradient (\"parameters\", \"k\") state `present` is inconsistent with norm Some(0.0)" },
    { GRAD ("g", "k", "present", ",\"norm\":-2.5"),
      "gradient (\"parameters\", \"k\") state `present` is inconsistent with norm Some(-2.5)" },
    { GRAD ("g", "k", "zero", ",\"norm\":-0.0"),
      "gradient (\"parameters\", \"k\") state `zero` is inconsistent with norm Some(-0.0)" },
    { GRAD ("g", "k", "zero", ""),
      "gradient (\"parameters\", \"k\") state `zero` is inconsistent with norm None" },
    { GRAD ("g", "k", "missing", ",\"norm\":1e-7"),
      "gradient (\"parameters\", \"k\") state `missing` is inconsistent with norm Some(1e-7)" },
    { GRAD ("g", "k", "non_finite", ",\"norm\":1e20"),
      "gradient (\"parameters\", \"k\") state `non_finite` is inconsistent with norm Some(1e20)" },
    { GRAD ("g", "k", "missing", ",\"norm\":null"), NULL },
    { GRAD ("g", "k", "present", ",\"norm\":1e-300"), NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (WickDocument) doc = with_gradients (META_INFER, cases[i].line, NULL, NULL, NULL);
      g_test_message ("case %zu", i);
      if (cases[i].message == NULL)
        {
          /* coverage none + gradients: partial */
          assert_verdict (doc, "", WICK_COVERAGE_VERDICT_PARTIAL);
          continue;
        }
      assert_verdict (doc, "E gradient_state_norm_inconsistent", WICK_COVERAGE_VERDICT_INVALID);
      g_assert_cmpstr (nth_issue (doc, 0)->message, ==, cases[i].message);
    }
}

static void
test_gradient_event_ids (void)
{
  g_autoptr (WickDocument) doc = with_gradients (
    META_INFER,
    "{\"kind\":\"gradient\",\"event_id\":\" \",\"root\":\"\",\"key\":\"k\",\"state\":\"missing\"}",
    "{\"kind\":\"gradient\",\"event_id\":\" \",\"root\":\"r\",\"key\":\"k\",\"state\":\"missing\"}",
    NULL, NULL);

  assert_verdict (doc,
                  "E empty_gradient_event_id E empty_gradient_parameter_key "
                  "E empty_gradient_event_id E duplicate_gradient_event_id",
                  WICK_COVERAGE_VERDICT_INVALID);
  g_assert_cmpstr (nth_issue (doc, 0)->message, ==, "gradient event IDs must not be empty");
  g_assert_cmpstr (nth_issue (doc, 1)->message, ==,
                   "gradient roots and parameter keys must not be empty");
}

static void
test_gradient_applicability (void)
{
  g_autofree char *complete_no_contract = contract_meta ("complete", NULL, NULL, NULL);
  g_autofree char *partial_with_contract = contract_meta ("partial", GOLDEN, EXPECTED, FAMILIES);
  g_autofree char *partial = contract_meta ("partial", NULL, NULL, NULL);
  g_autoptr (WickDocument) a = with_gradients (complete_no_contract, NULL, NULL, NULL, NULL);
  g_autoptr (WickDocument) b = with_gradients (partial_with_contract, NULL, NULL, NULL, NULL);
  g_autoptr (WickDocument) c = with_gradients (partial, NULL, NULL, NULL, NULL);
  g_autoptr (WickDocument) d
    = with_gradients (partial, GRAD ("g", "k", "missing", ""), NULL, NULL, NULL);

  assert_verdict (a, "E gradient_contract_missing", WICK_COVERAGE_VERDICT_INVALID);
  g_assert_cmpstr (nth_issue (a, 0)->message, ==,
                   "complete gradient coverage requires an exact gradient contract");
  assert_verdict (b, "E gradient_contract_without_complete_coverage",
                  WICK_COVERAGE_VERDICT_UNAVAILABLE);
  g_assert_cmpstr (nth_issue (b, 0)->message, ==,
                   "an exact gradient contract requires complete declared gradient coverage");
  assert_verdict (c, "", WICK_COVERAGE_VERDICT_UNAVAILABLE);
  assert_verdict (d, "", WICK_COVERAGE_VERDICT_PARTIAL);
}

static void
test_gradient_contract_validation (void)
{
  static const struct
  {
    const char *digest, *expected, *families, *message;
  } cases[] = {
    { GOLDEN, "[]", FAMILIES, "gradient manifest must not be empty" },
    { GOLDEN, EXPECTED, "[]", "gradient families must not be empty" },
    { "sha256:00", EXPECTED, FAMILIES,
      "gradient manifest SHA-256 does not match its ordered parameter manifest" },
    { "sha256:18b3b6d5b8d4c97f0d4bd2b6d0e8b1a3b1ac1f2dbd7fbc5c4d5a7f6c0b7c3a11",
      "[{\"root\":\"parameters\",\"key\":\"frozen.weight\",\"family\":\"frozen\"},"
      "{\"root\":\"parameters\",\"key\":\"trunk.weight\",\"family\":\"trunk\"},"
      "{\"root\":\"parameters\",\"key\":\"optional.weight\",\"family\":\"optional\"}]",
      FAMILIES, "gradient manifest SHA-256 does not match its ordered parameter manifest" },
  };
  g_autofree char *bad_min = contract_meta (
    "complete", GOLDEN, EXPECTED,
    "[{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":2},"
    "{\"family\":\"frozen\",\"expectation\":\"inactive\",\"min_present\":0},"
    "{\"family\":\"optional\",\"expectation\":\"data_conditional\",\"min_present\":1}]");
  g_autofree char *inactive_min = contract_meta (
    "complete", GOLDEN, EXPECTED,
    "[{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":1},"
    "{\"family\":\"frozen\",\"expectation\":\"inactive\",\"min_present\":1},"
    "{\"family\":\"optional\",\"expectation\":\"data_conditional\",\"min_present\":1}]");
  g_autofree char *uncovered
    = contract_meta ("complete", GOLDEN, EXPECTED,
                     "[{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":1},"
                     "{\"family\":\"frozen\",\"expectation\":\"inactive\",\"min_present\":0}]");
  g_autofree char *twice
    = contract_meta ("complete", GOLDEN, EXPECTED,
                     "[{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":1},"
                     "{\"family\":\"trunk\",\"expectation\":\"active\",\"min_present\":1}]");
  g_autofree char *ghost
    = contract_meta ("complete", GOLDEN, EXPECTED,
                     "[{\"family\":\"ghost\",\"expectation\":\"active\",\"min_present\":1}]");
  struct
  {
    const char *meta, *message;
  } more[] = {
    { bad_min, "active or data-conditional gradient family \"trunk\" needs min_present in 1..=1" },
    { inactive_min, "inactive gradient family \"frozen\" must have min_present=0" },
    { uncovered, "gradient manifest family \"optional\" has no family contract" },
    { twice, "gradient family \"trunk\" is declared more than once" },
    { ghost, "gradient family \"ghost\" has no manifest members" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *meta
        = contract_meta ("complete", cases[i].digest, cases[i].expected, cases[i].families);
      g_autoptr (WickDocument) doc = with_gradients (meta, NULL, NULL, NULL, NULL);
      g_test_message ("case %zu", i);
      assert_verdict (doc, "E gradient_contract_invalid", WICK_COVERAGE_VERDICT_INVALID);
      g_assert_cmpstr (nth_issue (doc, 0)->message, ==, cases[i].message);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (more); i++)
    {
      g_autoptr (WickDocument) doc = with_gradients (more[i].meta, NULL, NULL, NULL, NULL);
      g_autoptr (WickGradientReport) report = wick_gradient_report_new (doc);
      g_test_message ("more %zu", i);
      assert_verdict (doc, "E gradient_contract_invalid", WICK_COVERAGE_VERDICT_INVALID);
      g_assert_cmpstr (nth_issue (doc, 0)->message, ==, more[i].message);
      g_assert_cmpstr (report->contract_error, ==, more[i].message);
      g_assert_true (report->digest_matches);
    }
}

static void
test_gradient_structural_downgrade (void)
{
  /* a complete gradient verdict becomes invalid when the trace is not
   * structurally valid for any reason */
  g_autofree char *meta = contract_meta ("complete", GOLDEN, EXPECTED, FAMILIES);
  g_autoptr (WickDocument) doc = parse_lines (
    meta, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"x\",\"start_ns\":1,\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":1}",
    GRAD ("g1", "frozen.weight", "missing", ""), GRAD ("g2", "optional.weight", "missing", ""),
    GRAD ("g3", "trunk.weight", "present", ",\"norm\":1"), ROOT_END, TERMINAL, NULL);

  assert_verdict (doc, "E root_count", WICK_COVERAGE_VERDICT_INVALID);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/gradients/complete-and-golden-digest", test_gradient_complete);
  g_test_add_func ("/model/gradients/family-failures", test_gradient_family_failures);
  g_test_add_func ("/model/gradients/manifest-keys", test_gradient_manifest_keys);
  g_test_add_func ("/model/gradients/failed-capture", test_gradient_failed_capture);
  g_test_add_func ("/model/gradients/norm-consistency", test_gradient_norm_consistency);
  g_test_add_func ("/model/gradients/event-ids", test_gradient_event_ids);
  g_test_add_func ("/model/gradients/applicability", test_gradient_applicability);
  g_test_add_func ("/model/gradients/contract-validation", test_gradient_contract_validation);
  g_test_add_func ("/model/gradients/structural-downgrade", test_gradient_structural_downgrade);
  return g_test_run ();
}
