/* test-model-chrome.c — Chrome / Perfetto trace-event JSON (PyTorch profiler
 * output) imported into a document: spans nested per thread, runtime calls as
 * ops, kernels attached to their launch by correlation or flow, [memory]
 * events as memory and device-memory records, and a healthy trace. The
 * slices, device intervals and flows are on the track model (wick-tracks.h). */
#include "config.h"

#include <glib/gstdio.h>

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-compare.h"
#include "wick-memory-series.h"
#include "wick-span-costs.h"
#include "wick-tracks.h"
#include "wick-document-private.h"

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

static const WickTrack *
find_track (WickTracks *t, WickDocument *doc, WickTrackKind kind, const char *name)
{
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);

  for (guint i = 0; i < n; i++)
    if (tracks[i].kind == kind && g_strcmp0 (wick_document_str (doc, tracks[i].name), name) == 0)
      return &tracks[i];
  return NULL;
}

static void
test_chrome_spans (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  WickTracks *t = wick_document_get_tracks (doc);
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  const WickTrack *main_thread = find_track (t, doc, WICK_TRACK_SLICES, "python");
  static const struct
  {
    const char *name;
    guint depth;
    guint64 start, dur;
  } expected[] = {
    { "ProfilerStep#1", 0, 0, 500000 },      { "aten::linear", 1, 10000, 200000 },
    { "aten::addmm", 2, 20000, 150000 },     { "cudaLaunchKernel", 3, 30000, 10000 },
    { "cudaMemcpyAsync", 1, 300000, 20000 },
  };
  guint found = 0;

  g_assert_cmpint (wick_tracks_get_format (t), ==, WICK_TRACE_FORMAT_CHROME);
  /* the main thread, named by thread_name, with runtime calls as host slices */
  g_assert_nonnull (main_thread);
  g_assert_cmpuint (main_thread->n_events, ==, 5);
  g_assert_cmpuint (main_thread->max_depth, ==, 3);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < G_N_ELEMENTS (expected); k++)
      if (g_strcmp0 (wick_document_str (doc, spans[i].name), expected[k].name) == 0)
        {
          g_assert_cmpuint (spans[i].depth, ==, expected[k].depth);
          g_assert_cmpuint (spans[i].start_ns, ==, expected[k].start);
          g_assert_cmpuint (spans[i].duration_ns, ==, expected[k].dur);
          found++;
        }
  g_assert_cmpuint (found, ==, G_N_ELEMENTS (expected));
  /* the B/E pair on its own thread */
  g_assert_cmpstr (wick_document_get_schema (doc), ==, "candle-graph/trace/10");
  g_assert_cmpstr (wick_document_get_entrypoint (doc), ==, "pytorch-profile.json");
}

static void
test_chrome_launches (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  WickTracks *t = wick_document_get_tracks (doc);
  guint n, n_flows;
  const WickDeviceSlice *device = wick_tracks_get_device_slices (t, &n);
  const WickFlow *flows = wick_tracks_get_flows (t, &n_flows);
  const WickTrack *stream = find_track (t, doc, WICK_TRACK_DEVICE, "cuda:0 stream 7");

  g_assert_nonnull (stream);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, device[0].name), ==, "sgemm_128x64");
  g_assert_cmpuint (device[0].start_ns, ==, 50000);
  g_assert_cmpuint (device[0].duration_ns, ==, 40500);
  g_assert_nonnull (strstr (wick_document_str (doc, device[0].args), "\"correlation\": 7"));
  /* ac2g flows: launch -> kernel */
  g_assert_cmpuint (n_flows, ==, 2);
  g_assert_cmpint (flows[0].from.event.kind, ==, WICK_EVENT_SLICE);
  g_assert_cmpint (flows[0].to.event.kind, ==, WICK_EVENT_DEVICE);
}

static void
test_chrome_memory (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  g_autoptr (GPtrArray) logical = wick_memory_series_build (doc);
  g_autoptr (GPtrArray) physical = wick_device_memory_series_build (doc);
  const WickMemorySeries *cuda = g_ptr_array_index (logical, 0);
  const WickDeviceMemorySeries *device = g_ptr_array_index (physical, 0);
  WickTracks *t = wick_document_get_tracks (doc);
  guint n;
  const WickMemoryEvent *memory = wick_document_get_memory (doc, &n);

  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (wick_document_str (doc, memory[0].storage_id), ==, "cuda:0/0x8583b00");
  g_assert_cmpint (memory[1].action, ==, WICK_MEMORY_FREE);
  g_assert_cmpstr (wick_document_str (doc, cuda->device), ==, "cuda:0");
  g_assert_cmpuint (cuda->peak[WICK_CATEGORY_OTHER], ==, 1024);
  g_assert_cmpuint (device->series[WICK_DEVICE_SERIES_USED]->len, ==, 2);
  g_assert_cmpuint (device->max[WICK_DEVICE_SERIES_RESERVED], ==, 20971520);
  /* with Addr the totals are the physical lines above, not counter tracks */
  guint n_tracks;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  for (guint i = 0; i < n_tracks; i++)
    g_assert_cmpint (tracks[i].kind, !=, WICK_TRACK_COUNTER);
}

static void
test_chrome_healthy (void)
{
  g_autoptr (WickDocument) doc = import_fixture ();
  g_autofree char *codes = issue_codes (doc, TRUE);

  g_assert_true (wick_document_get_structurally_valid (doc));
  g_assert_cmpstr (codes, ==, "I chrome_imported");
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
  g_assert_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_NOT_A_TRACE);
  g_assert_true (wick_chrome_import_data (array, bare, strlen (bare), "bare", NULL));
  /* the root span and the slice */
  g_assert_cmpuint (wick_document_get_record_count (array, WICK_RECORD_SPAN), ==, 1);
  g_assert_cmpuint (wick_tracks_get_tracks (wick_document_get_tracks (array), NULL)[0].n_events, ==,
                    1);
}

/* The root an import makes over everything, named after the file, is no row
 * of any table: not a slice of a track, not a span cost, not a compare entry
 * (two copies of one public trace under two names would show it as removed
 * and added). */
static void
test_chrome_root_in_no_table (void)
{
  g_autofree char *source = g_build_filename (g_getenv ("WICK_TEST_DATA"), "chrome",
                                              "hta-simple-add.json.gz", NULL);
  g_autofree char *dir = g_dir_make_tmp ("wick-chrome-root-XXXXXX", NULL);
  const char *names[] = { "run-a.json.gz", "run-b.json.gz" };
  WickDocument *docs[2];
  char *text = NULL;
  gsize length = 0;

  g_assert_true (g_file_get_contents (source, &text, &length, NULL));
  for (guint d = 0; d < 2; d++)
    {
      g_autofree char *path = g_build_filename (dir, names[d], NULL);
      g_autoptr (GError) error = NULL;
      g_assert_true (g_file_set_contents (path, text, (gssize)length, NULL));
      docs[d] = wick_document_new ();
      g_assert_true (wick_chrome_import_file (docs[d], path, NULL, &error));
      g_assert_no_error (error);
      g_unlink (path);

      WickDocument *doc = docs[d];
      guint n_spans, n_synthetic = 0;
      const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
      gint32 root = wick_document_find_span (doc, WICK_CHROME_ROOT_SPAN_ID);
      g_assert_cmpint (root, >=, 0);
      g_assert_cmpstr (wick_document_str (doc, spans[root].name), ==, names[d]);
      g_assert_cmpuint (n_spans, >, 1);
      for (guint i = 0; i < n_spans; i++)
        n_synthetic += wick_document_is_synthetic_span (doc, i);
      g_assert_cmpuint (n_synthetic, ==, 1);
      g_assert_true (wick_document_is_synthetic_span (doc, (guint)root));

      WickTracks *tracks = wick_document_get_tracks (doc);
      g_assert_cmpuint (wick_tracks_span_track (tracks, (guint32)root), ==, G_MAXUINT32);
      guint n_tracks;
      const WickTrack *t = wick_tracks_get_tracks (tracks, &n_tracks);
      for (guint i = 0; i < n_tracks; i++)
        g_assert_cmpstr (wick_document_str (doc, t[i].name), !=, names[d]);

      g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
      g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);
      g_assert_cmpuint (costs->len, >, 0);
      for (guint i = 0; i < costs->len; i++)
        g_assert_cmpstr (wick_document_str (doc, g_array_index (costs, WickSpanCost, i).name), !=,
                         names[d]);
      guint n_copy;
      g_autofree WickSpanCostInput *copy = wick_span_costs_copy_spans (doc, &n_copy);
      g_autoptr (GArray) from_copy = wick_span_costs_from_copy (copy, n_copy);
      g_assert_cmpuint (from_copy->len, ==, costs->len);
    }
  g_free (text);

  g_autoptr (GError) error = NULL;
  WickCompareOptions options = { TRUE, 16, 0, -1 };
  g_autoptr (WickComparison) comparison
    = wick_comparison_new (&docs[0], 1, &docs[1], 1, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (comparison->entries->len, >, 0);
  for (guint i = 0; i < comparison->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (comparison->entries, WickCompareEntry, i);
      g_assert_cmpstr (e->name, !=, names[0]);
      g_assert_cmpstr (e->name, !=, names[1]);
    }
  g_object_unref (docs[0]);
  g_object_unref (docs[1]);
  g_rmdir (dir);
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
  g_test_add_func ("/model/chrome/root-in-no-table", test_chrome_root_in_no_table);
  return g_test_run ();
}
