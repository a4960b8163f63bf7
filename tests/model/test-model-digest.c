/* test-model-digest.c — the manifest digest the model recomputes for the
 * coverage table agrees with libwick's wick_gradient_manifest_sha256(), which
 * the recording side binds into the contracts it writes (spec §7.4). */
#include "config.h"

#include <wick/wick.h>

#include "model-test-util.h"
#include "wick-gradient-report.h"

static char *
model_digest (const WickExpectedGradient *expected, gsize n)
{
  g_autoptr (GString) list = g_string_new ("[");
  g_autofree char *contract = NULL;
  g_autofree char *meta = NULL;
  g_autoptr (WickDocument) doc = NULL;
  g_autoptr (WickGradientReport) report = NULL;

  for (gsize i = 0; i < n; i++)
    g_string_append_printf (list, "%s{\"root\":\"%s\",\"key\":\"%s\",\"family\":\"%s\"}",
                            i ? "," : "", expected[i].root, expected[i].key, expected[i].family);
  g_string_append_c (list, ']');
  contract = g_strdup_printf ("\"device_timing\":\"none\",\"gradients\":\"complete\","
                              "\"gradient_contract\":{\"manifest_sha256\":\"sha256:0\","
                              "\"expected\":%s,\"families\":[]}",
                              list->str);
  meta = meta_with ("\"device_timing\":\"none\"", contract);
  doc = parse_lines (meta, ROOT_START, ROOT_END, TERMINAL, NULL);
  report = wick_gradient_report_new (doc);
  g_assert_true (report->has_contract);
  return g_strdup (report->computed_sha256);
}

static void
test_digest_matches_libwick (void)
{
  static const WickExpectedGradient golden[] = {
    { "parameters", "trunk.weight", "trunk" },
    { "parameters", "frozen.weight", "frozen" },
    { "parameters", "optional.weight", "optional" },
  };
  static const WickExpectedGradient unicode[] = {
    { "params", "блок.0.weight", "ß" },
    { "", "k", "f" },
  };
  const struct
  {
    const WickExpectedGradient *e;
    gsize n;
  } cases[] = {
    { golden, G_N_ELEMENTS (golden) },
    { unicode, G_N_ELEMENTS (unicode) },
    { golden, 1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char expected[WICK_SHA256_TEXT_LEN];
      WickError error = { { 0 } };
      g_autofree char *ours = model_digest (cases[i].e, cases[i].n);
      g_assert_true (wick_gradient_manifest_sha256 (cases[i].e, cases[i].n, expected, &error));
      g_assert_cmpstr (ours, ==, expected);
      if (i == 0)
        g_assert_cmpstr (ours, ==,
                         "sha256:d7f0b4aa8a4072b9824018c8d3eff5757286f1348366c15ef8780be38945fcc6");
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/digest/matches-libwick", test_digest_matches_libwick);
  return g_test_run ();
}
