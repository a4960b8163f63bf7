/* test-model-chrome.c — Chrome / Perfetto trace-event JSON (PyTorch profiler
 * output) imported into a document: spans nested per thread, runtime calls as
 * ops, kernels attached to their launch by correlation or flow, [memory]
 * events as memory and device-memory records, and a healthy trace. */
#include "config.h"

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-memory-series.h"

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");

  return g_build_filename (dir ? dir : "tests/data", "model", name, NULL);
}

static WickDocument *
import_fixture (void)
{
  g_autofree char *path = data_path ("pytorch-profile.json");
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return doc;
}

static void
test_chrome_spans (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  static const struct
  {
    const char *name;
    gint parent;
    guint64 start, dur;
  } expected[] = {
    { "pytorch-profile.json", -1, 0, 500000 }, { "ProfilerStep#1", 0, 0, 500000 },
    { "aten::linear", 1, 10000, 200000 },      { "aten::addmm", 2, 20000, 150000 },
    { "optimizer.step", 0, 200000, 50000 },
  };

  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (wick_document_str (doc, spans[i].name), ==, expected[i].name);
      g_assert_cmpint (spans[i].parent, ==, expected[i].parent);
      g_assert_cmpuint (spans[i].start_ns, ==, expected[i].start);
      g_assert_cmpuint (spans[i].duration_ns, ==, expected[i].dur);
    }
  g_assert_true (spans[0].flags & WICK_SPAN_FLAG_MEASURED);
  g_assert_cmpstr (wick_document_get_schema (doc), ==, "candle-graph/trace/10");
  g_assert_cmpstr (wick_document_get_entrypoint (doc), ==, "pytorch-profile.json");
}

static void
test_chrome_launches (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  guint n;
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (doc, &n);
  const WickOp *ops;

  g_assert_cmpuint (n, ==, 2);
  /* by correlation: the kernel belongs to aten::addmm (s4) */
  g_assert_cmpstr (wick_document_str (doc, intervals[0].span_id), ==, "s4");
  g_assert_cmpuint (intervals[0].start_ns, ==, 50000);
  g_assert_cmpuint (intervals[0].duration_ns, ==, 40500);
  g_assert_cmpstr (wick_document_str (doc, intervals[0].device), ==, "cuda:0");
  g_assert_cmpstr (wick_document_str (doc, intervals[0].stream_id), ==, "7");
  /* by flow: the copy belongs to the span of cudaMemcpyAsync (s2) */
  g_assert_cmpstr (wick_document_str (doc, intervals[1].span_id), ==, "s2");
  ops = wick_document_get_ops (doc, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, ops[0].op_name), ==, "cudaLaunchKernel");
  g_assert_cmpstr (wick_document_str (doc, ops[0].span_id), ==, "s4");
}

static void
test_chrome_memory (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  g_autoptr (GPtrArray) logical = wick_memory_series_build (doc);
  g_autoptr (GPtrArray) physical = wick_device_memory_series_build (doc);
  const WickMemorySeries *cuda = g_ptr_array_index (logical, 0);
  const WickDeviceMemorySeries *device = g_ptr_array_index (physical, 0);
  guint n;
  const WickMemoryEvent *memory = wick_document_get_memory (doc, &n);

  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, memory[0].storage_id), ==, "cuda:0/0x8583b00");
  g_assert_cmpint (memory[1].action, ==, WICK_MEMORY_FREE);
  g_assert_cmpstr (wick_document_str (doc, cuda->device), ==, "cuda:0");
  g_assert_cmpuint (cuda->peak[WICK_CATEGORY_OTHER], ==, 1024);
  g_assert_cmpuint (device->series[WICK_DEVICE_SERIES_USED]->len, ==, 2);
  g_assert_cmpuint (device->max[WICK_DEVICE_SERIES_RESERVED], ==, 20971520);
}

static void
test_chrome_healthy (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  g_autofree char *codes = issue_codes (doc, TRUE);

  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpstr (codes, ==, "W tensors_absent I chrome_imported");
}

static void
test_chrome_sniff_and_errors (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (WickDocument) array = wick_document_new ();
  g_autoptr (GError) error = NULL;
  const char *bare = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":2}]";

  g_assert_true (wick_chrome_sniff (" [", 2));
  g_assert_true (wick_chrome_sniff ("{\"traceEvents\":[]}", 18));
  g_assert_false (wick_chrome_sniff ("{\"kind\":\"meta\",\"x\":\"traceEvents\"}", 33));
  g_assert_false (wick_chrome_import_data (doc, "{\"events\":[]}", 13, "x", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_true (wick_chrome_import_data (array, bare, strlen (bare), "bare", NULL));
  g_assert_cmpuint (wick_document_get_record_count (array, WICK_RECORD_SPAN), ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/chrome/spans", test_chrome_spans);
  g_test_add_func ("/model/chrome/launches", test_chrome_launches);
  g_test_add_func ("/model/chrome/memory", test_chrome_memory);
  g_test_add_func ("/model/chrome/healthy", test_chrome_healthy);
  g_test_add_func ("/model/chrome/sniff-and-errors", test_chrome_sniff_and_errors);
  return g_test_run ();
}
