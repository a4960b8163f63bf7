/* test-model-steps.c — the steps of a trace (wick-steps.h): ProfilerStep#N
 * spans, else the most repeated child of the root; the step of every span;
 * per-step statistics. */
#include "config.h"

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-steps.h"

static const char torch_trace[]
  = "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#7\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":"
    "20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":112,\"dur\":4,\"args\":{\"correlation\":5}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sgemm\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":9,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":5}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#6\",\"pid\":1,\"tid\":1,"
    "\"ts\":10,\"dur\":80},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":"
    "5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#x\",\"pid\":1,\"tid\":1,\"ts\":200,"
    "\"dur\":5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::zero_\",\"pid\":1,\"tid\":1,\"ts\":300,"
    "\"dur\":5}"
    "]}";

static guint
span_index (WickDocument *doc, const char *name)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_document_str (doc, spans[i].name), name) == 0)
      return i;
  g_error ("no span %s", name);
  return 0;
}

static void
test_steps_profiler (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_assert_true (wick_chrome_import_data (doc, torch_trace, strlen (torch_trace), "t.json", NULL));
  g_assert_false (wick_is_profiler_step ("ProfilerStep#"));
  g_assert_false (wick_is_profiler_step ("ProfilerStep#x"));
  g_assert_true (wick_is_profiler_step ("ProfilerStep#12"));

  g_autoptr (WickSteps) steps = wick_steps_find (doc);
  g_assert_cmpint (steps->source, ==, WICK_STEPS_PROFILER);
  g_assert_cmpuint (steps->spans->len, ==, 2);
  /* by start time, whatever the file order */
  g_assert_cmpuint (g_array_index (steps->spans, guint32, 0), ==,
                    span_index (doc, "ProfilerStep#6"));
  g_assert_cmpuint (g_array_index (steps->spans, guint32, 1), ==,
                    span_index (doc, "ProfilerStep#7"));
  g_assert_cmpint (steps->step_of[span_index (doc, "aten::add")], ==, 0);
  g_assert_cmpint (steps->step_of[span_index (doc, "aten::mm")], ==, 1);
  g_assert_cmpint (steps->step_of[span_index (doc, "ProfilerStep#7")], ==, 1);
  g_assert_cmpint (steps->step_of[span_index (doc, "aten::zero_")], ==, -1);
  g_assert_cmpint (steps->step_of[span_index (doc, "ProfilerStep#x")], ==, -1);

  g_autoptr (GArray) stats = wick_steps_statistics (doc, steps);
  g_assert_cmpuint (stats->len, ==, 2);
  const WickStepStats *a = &g_array_index (stats, WickStepStats, 0);
  const WickStepStats *b = &g_array_index (stats, WickStepStats, 1);
  g_assert_cmpuint (a->duration_ns, ==, 80000);
  g_assert_cmpuint (a->n_spans, ==, 1);
  g_assert_cmpuint (a->n_device, ==, 0);
  g_assert_cmpuint (b->start_ns - a->start_ns, ==, 90000);
  g_assert_cmpuint (b->duration_ns, ==, 50000);
  g_assert_cmpuint (b->n_spans, ==, 2); /* aten::mm and the launch (a span and an op) */
  g_assert_cmpuint (b->n_ops, ==, 0);   /* a Chrome runtime call is a span, not an op */
  g_assert_cmpuint (b->n_device, ==, 1);
  g_assert_cmpuint (b->device_ns, ==, 9000);
}

/* No ProfilerStep: the root's most repeated child; a trace without a
 * repeated one has no steps. */
static void
test_steps_repeated (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"setup\",\"start_ns\":1,"
    "\"span_kind\":\"function\"}",
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":2}",
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"train_step\","
    "\"start_ns\":10,\"span_kind\":\"function\"}",
    "{\"kind\":\"span_start\",\"id\":\"s4\",\"parent_id\":\"s3\",\"name\":\"forward\","
    "\"start_ns\":11,\"span_kind\":\"module\"}",
    "{\"kind\":\"span_end\",\"id\":\"s4\",\"duration_ns\":5}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":20}",
    "{\"kind\":\"span_start\",\"id\":\"s5\",\"parent_id\":\"s1\",\"name\":\"train_step\","
    "\"start_ns\":40,\"span_kind\":\"function\"}",
    "{\"kind\":\"span_end\",\"id\":\"s5\",\"duration_ns\":20}", ROOT_END, TERMINAL, NULL);
  g_autoptr (WickSteps) steps = wick_steps_find (doc);
  g_assert_cmpint (steps->source, ==, WICK_STEPS_REPEATED);
  g_assert_cmpuint (steps->spans->len, ==, 2);
  g_assert_cmpint (steps->step_of[span_index (doc, "forward")], ==, 0);
  g_assert_cmpint (steps->step_of[span_index (doc, "setup")], ==, -1);

  g_autoptr (WickDocument) single = parse_lines (META_INFER, ROOT_START, ROOT_END, TERMINAL, NULL);
  g_autoptr (WickSteps) none = wick_steps_find (single);
  g_assert_cmpint (none->source, ==, WICK_STEPS_NONE);
  g_assert_cmpuint (none->spans->len, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/steps/profiler", test_steps_profiler);
  g_test_add_func ("/model/steps/repeated", test_steps_repeated);
  return g_test_run ();
}
