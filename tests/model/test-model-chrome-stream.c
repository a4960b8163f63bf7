/* test-model-chrome-stream.c — the streaming Chrome importer and the input
 * layer: gzip and zstd by magic bytes (JSON and JSONL), the structure sniff
 * (a 20 KB header before traceEvents, JSONL, other objects), tolerated damage
 * (trailing comma, a cut-off file, a cut-off .gz) with warnings, errors with
 * file:line:column, counts by phase, [memory] without Addr and frees from
 * before the window, the torch memory timeline, and JSONL lines in linear
 * time with a maximum length. */
#include "config.h"

#include <time.h>
#include <glib/gstdio.h>
#include <zstd.h>

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-chrome-import-private.h"
#include "wick-input.h"
#include "wick-memory-series.h"
#include "wick-tracks.h"
#include "wick-document-private.h"

static char *
write_temp (const char *name, const void *data, gsize len)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-chrome-XXXXXX", NULL);
  char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, data, (gssize)len, NULL));
  return path;
}

static GBytes *
gzip_bytes (const char *data, gsize len)
{
  g_autoptr (GZlibCompressor) z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  g_autoptr (GInputStream) in = g_memory_input_stream_new_from_data (data, (gssize)len, NULL);
  g_autoptr (GInputStream) conv = g_converter_input_stream_new (in, G_CONVERTER (z));
  g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();

  g_assert_cmpint (g_output_stream_splice (out, conv, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                                           NULL),
                   >, 0);
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

static GBytes *
zstd_bytes (const char *data, gsize len)
{
  gsize cap = ZSTD_compressBound (len);
  char *out = g_malloc (cap);
  gsize n = ZSTD_compress (out, cap, data, len, 3);

  g_assert_false (ZSTD_isError (n));
  return g_bytes_new_take (out, n);
}

static const char *
imported (const WickChromeInfo *info, const char *phase)
{
  for (guint i = 0; i + 1 < info->imported->len; i += 2)
    if (strcmp (g_ptr_array_index (info->imported, i), phase) == 0)
      return g_ptr_array_index (info->imported, i + 1);
  return "0";
}

static const char *
skipped (const WickChromeInfo *info, const char *construct)
{
  for (guint i = 0; i + 1 < info->skipped->len; i += 2)
    if (strcmp (g_ptr_array_index (info->skipped, i), construct) == 0)
      return g_ptr_array_index (info->skipped, i + 1);
  return "0";
}

static const char small_trace[]
  = "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},\n"
    "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":\"11.5\",\"dur\":\"2\"},\n"
    "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"mark\",\"pid\":1,\"tid\":1,\"ts\":12},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":12,\"args\":{\"a\":1,\"b\":2.5}},\n"
    "{\"ph\":\"b\",\"cat\":\"c\",\"id\":\"0x1\",\"name\":\"req\",\"pid\":1,\"ts\":10},\n"
    "{\"ph\":\"e\",\"cat\":\"c\",\"id\":\"0x1\",\"name\":\"req\",\"pid\":1,\"ts\":14},\n"
    "{\"ph\":\"Z\",\"name\":\"odd\",\"pid\":1,\"ts\":1},\n"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":20},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}}\n"
    "],\"displayTimeUnit\":\"ns\",\"traceName\":\"small\"}";

static void
check_small (WickDocument *doc)
{
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);

  g_assert_nonnull (info);
  g_assert_cmpstr (info->format, ==, "chrome");
  g_assert_cmpstr (imported (info, "X"), ==, "2");
  g_assert_cmpstr (imported (info, "i"), ==, "1");
  g_assert_cmpstr (imported (info, "C"), ==, "1");
  g_assert_cmpstr (imported (info, "b"), ==, "1");
  g_assert_cmpstr (imported (info, "M"), ==, "1");
  g_assert_cmpstr (skipped (info, "ph=Z"), ==, "1");
  g_assert_cmpstr (skipped (info, "E without B"), ==, "1");
  g_assert_cmpstr (wick_chrome_info_lookup_metadata (info, "traceName"), ==, "\"small\"");
  g_assert_nonnull (find_issue (doc, "chrome_skipped"));
  /* on the tracks: an instant (global), two counter series, one async slice */
  {
    WickTracks *t = wick_document_get_tracks (doc);
    guint n_tracks, n_async, n_instants, n_counters;
    const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
    gboolean named = FALSE;
    wick_tracks_get_async (t, &n_async);
    wick_tracks_get_instants (t, &n_instants);
    wick_tracks_get_counter_samples (t, &n_counters);
    g_assert_cmpuint (n_async, ==, 1);
    g_assert_cmpuint (n_instants, ==, 1);
    g_assert_cmpuint (n_counters, ==, 2);
    for (guint i = 0; i < n_tracks; i++)
      named |= tracks[i].kind == WICK_TRACK_COUNTER
               && g_strcmp0 (wick_document_str (doc, tracks[i].name), "mem b") == 0;
    g_assert_true (named);
  }
  /* root + a + b; ts given as a string, µs to ns from the earliest event */
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpuint (spans[2].start_ns, ==, 1500);
  g_assert_cmpuint (spans[2].duration_ns, ==, 2000);
}

static void
test_plain_gzip_zstd (void)
{
  g_autoptr (GBytes) gz = gzip_bytes (small_trace, strlen (small_trace));
  g_autoptr (GBytes) zst = zstd_bytes (small_trace, strlen (small_trace));
  const struct
  {
    const char *name;
    const void *data;
    gsize len;
  } files[] = {
    { "t.json", small_trace, strlen (small_trace) },
    /* the name says nothing: the magic bytes decide */
    { "t.trace", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz) },
    { "t.json.zst", g_bytes_get_data (zst, NULL), g_bytes_get_size (zst) },
  };

  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = write_temp (files[i].name, files[i].data, files[i].len);
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
      g_assert_no_error (error);
      check_small (doc);
      g_unlink (path);
    }
}

static void
test_jsonl_gzip (void)
{
  g_autofree char *src = g_build_filename (g_getenv ("WICK_TEST_DATA") ?: "tests/data", "model",
                                           "valid-infer.jsonl", NULL);
  g_autofree char *text = NULL;
  gsize len;
  g_autoptr (GBytes) gz = NULL;
  g_autoptr (GBytes) zst = NULL;
  g_autofree char *gz_path = NULL, *zst_path = NULL;
  g_autoptr (WickDocument) plain = wick_document_new ();
  g_autoptr (WickDocument) a = wick_document_new ();
  g_autoptr (WickDocument) b = wick_document_new ();

  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  gz = gzip_bytes (text, len);
  zst = zstd_bytes (text, len);
  gz_path = write_temp ("v.jsonl.gz", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz));
  zst_path = write_temp ("v.jsonl.zst", g_bytes_get_data (zst, NULL), g_bytes_get_size (zst));
  g_assert_true (wick_document_load_file (plain, src, NULL, NULL, NULL, NULL));
  g_assert_true (wick_document_load_file_auto (a, gz_path, NULL, NULL, NULL, NULL));
  g_assert_true (wick_document_load_file_auto (b, zst_path, NULL, NULL, NULL, NULL));
  g_assert_null (wick_chrome_info_get (a));
  g_assert_cmpuint (wick_document_get_n_records (a), ==, wick_document_get_n_records (plain));
  g_assert_cmpuint (wick_document_get_n_records (b), ==, wick_document_get_n_records (plain));
}

static void
test_large_header (void)
{
  g_autoptr (GString) text = g_string_new ("{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,"
                                           "\"world_size\":8,\"pad\":\"");
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autofree char *path = NULL;
  const WickChromeInfo *info;

  for (int i = 0; i < 20000; i++)
    g_string_append_c (text, 'x');
  g_string_append (text, "\"},\"deviceProperties\":[{\"name\":\"H100\"}],\"traceEvents\":["
                         "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}");
  path = write_temp ("rank3.json", text->str, text->len);
  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, NULL));
  info = wick_chrome_info_get (doc);
  g_assert_nonnull (info);
  g_assert_nonnull (strstr (wick_chrome_info_lookup_metadata (info, "distributedInfo"),
                            "\"world_size\":8"));
  g_assert_nonnull (wick_chrome_info_lookup_metadata (info, "deviceProperties"));
}

static void
test_damage_tolerated (void)
{
  const char *trailing = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n]";
  const char *cut = "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
                    "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"du";
  g_autoptr (WickDocument) a = wick_document_new ();
  g_autoptr (WickDocument) b = wick_document_new ();
  g_autoptr (WickDocument) c = wick_document_new ();
  g_autoptr (GBytes) gz = gzip_bytes (small_trace, strlen (small_trace));
  g_autofree char *gz_path
    = write_temp ("cut.json.gz", g_bytes_get_data (gz, NULL), g_bytes_get_size (gz) - 30);
  const WickChromeInfo *info;

  g_assert_true (wick_chrome_import_data (a, trailing, strlen (trailing), "t.json", NULL));
  info = wick_chrome_info_get (a);
  g_assert_cmpuint (info->warnings->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (info->warnings, 0), "t.json:2:1: trailing comma"));

  g_assert_true (wick_chrome_import_data (b, cut, strlen (cut), "cut.json", NULL));
  info = wick_chrome_info_get (b);
  g_assert_true (info->cut_off);
  g_assert_cmpstr (imported (info, "X"), ==, "1");
  g_assert_nonnull (find_issue (b, "chrome_damaged"));

  /* a cut-off .gz: the events decoded before the cut */
  g_assert_true (wick_document_load_file_auto (c, gz_path, NULL, NULL, NULL, NULL));
  info = wick_chrome_info_get (c);
  g_assert_true (info->cut_off);
  g_assert_nonnull (strstr (g_ptr_array_index (info->warnings, 0), "gzip stream is cut off"));
}

static void
test_errors_name_the_place (void)
{
  const char *bad = "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1},\n"
                    "{\"ph\":\"X\" \"name\":\"b\"}]}";
  const char *other = "{\"foo\":1,\"bar\":[1,2]}\n";
  g_autofree char *bad_path = write_temp ("bad.json", bad, strlen (bad));
  g_autofree char *other_path = write_temp ("other.json", other, strlen (other));
  g_autoptr (WickDocument) a = wick_document_new ();
  g_autoptr (WickDocument) b = wick_document_new ();
  g_autoptr (GError) error = NULL;

  g_assert_false (wick_document_load_file_auto (a, bad_path, NULL, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "bad.json:3:11: expected `,` or `}`"));
  g_assert_true (wick_document_get_parse_error (a)->failed);
  g_assert_cmpuint (wick_document_get_parse_error (a)->line, ==, 3);
  /* what was read before the error is kept: the root and slice a */
  g_assert_cmpuint (wick_document_get_record_count (a, WICK_RECORD_SPAN), ==, 1);
  {
    guint n_spans;
    wick_document_get_spans (a, &n_spans);
    g_assert_cmpuint (n_spans, ==, 2);
  }
  g_clear_error (&error);

  /* Chrome-shaped but wrong: the Chrome error, not a JSONL one */
  {
    const char *not_array = "{\"traceEvents\":5}";
    g_autoptr (GString) deep = g_string_new (NULL);
    g_autofree char *p1 = write_temp ("not-array.json", not_array, strlen (not_array));
    g_autofree char *p2 = NULL;
    g_autoptr (WickDocument) c = wick_document_new ();
    g_autoptr (WickDocument) d = wick_document_new ();
    for (int i = 0; i < 300; i++)
      g_string_append_c (deep, '[');
    p2 = write_temp ("deep.json", deep->str, deep->len);
    g_assert_false (wick_document_load_file_auto (c, p1, NULL, NULL, NULL, &error));
    g_assert_nonnull (strstr (error->message, "not-array.json:1:16: \"traceEvents\" must be an array"));
    g_assert_true (wick_document_get_parse_error (c)->failed);
    g_clear_error (&error);
    g_assert_false (wick_document_load_file_auto (d, p2, NULL, NULL, NULL, &error));
    g_assert_nonnull (strstr (error->message, "recursion limit exceeded"));
    g_assert_true (wick_document_get_parse_error (d)->failed);
    g_clear_error (&error);
  }

  g_assert_false (wick_document_load_file_auto (b, other_path, NULL, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "no \"traceEvents\" array"));
  g_assert_nonnull (strstr (error->message, "\"foo\", \"bar\""));
  g_assert_true (wick_document_get_parse_error (b)->failed);
}

static void
test_memory_events (void)
{
  const char *trace
    = "[{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
      /* a free of a block from before the window: information */
      "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"Addr\":16,"
      "\"Bytes\":-64,\"Total Allocated\":0,\"Device Type\":1,\"Device Id\":0}},\n"
      "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":2,\"args\":{\"Addr\":32,"
      "\"Bytes\":128,\"Total Allocated\":128,\"Device Type\":1,\"Device Id\":0}},\n"
      "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":3,\"args\":{\"Addr\":32,"
      "\"Bytes\":-128,\"Total Allocated\":0,\"Device Type\":1,\"Device Id\":0}},\n"
      /* without Addr (PyTorch <= 1.9): totals only, nothing paired */
      "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":4,\"args\":{"
      "\"Bytes\":256,\"Total Allocated\":256,\"Total Reserved\":1024,\"Device Type\":1,"
      "\"Device Id\":0}}]";
  g_autoptr (WickDocument) doc = wick_document_new ();
  guint n;
  const WickMemoryEvent *memory;
  const WickChromeInfo *info;

  g_assert_true (wick_chrome_import_data (doc, trace, strlen (trace), "mem.json", NULL));
  memory = wick_document_get_memory (doc, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (memory[0].action, ==, WICK_MEMORY_ALLOC);
  g_assert_cmpint (memory[1].action, ==, WICK_MEMORY_FREE);
  wick_document_get_device_memory (doc, &n);
  g_assert_cmpuint (n, ==, 4);
  info = wick_chrome_info_get (doc);
  g_assert_cmpuint (info->frees_before_window, ==, 1);
  g_assert_cmpint (find_issue (doc, "chrome_free_before_window")->severity, ==,
                   WICK_SEVERITY_INFO);
  g_assert_true (wick_document_get_structurally_valid (doc));
  /* counter tracks only of the totals without Addr: one sample each */
  WickTracks *tracks = wick_document_get_tracks (doc);
  guint n_counter_tracks = 0, n_tracks;
  const WickTrack *all = wick_tracks_get_tracks (tracks, &n_tracks);
  for (guint i = 0; i < n_tracks; i++)
    {
      const WickTrack *track = &all[i];
      if (track->kind != WICK_TRACK_COUNTER)
        continue;
      n_counter_tracks++;
      g_assert_cmpuint (track->n_events, ==, 1);
    }
  g_assert_cmpuint (n_counter_tracks, ==, 2);
}

static void
test_memory_timeline (void)
{
  /* [times, sizes]: torch's 8 categories after an unused column 0 */
  const char *timeline = "[[1000, 1001, 1003],"
                         " [[0, 100, 0, 0, 0, 0, 0, 0, 0],"
                         "  [0, 100, 0, 0, 0, 50, 0, 0, 0],"
                         "  [0, 100, 20, 0, 0, 0, 30, 0, 0]]]";
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autofree char *path = write_temp ("mt.json", timeline, strlen (timeline));
  g_autoptr (GPtrArray) series = NULL;
  const WickMemorySeries *s;
  const WickChromeInfo *info;

  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, NULL));
  info = wick_chrome_info_get (doc);
  g_assert_cmpstr (info->format, ==, "torch-memory-timeline");
  series = wick_memory_series_build (doc);
  g_assert_cmpuint (series->len, ==, 1);
  s = g_ptr_array_index (series, 0);
  g_assert_cmpuint (s->peak[WICK_CATEGORY_PARAMETER], ==, 100);
  g_assert_cmpuint (s->peak[WICK_CATEGORY_ACTIVATION], ==, 50);
  g_assert_cmpuint (s->peak[WICK_CATEGORY_OPTIMIZER], ==, 20);
  g_assert_cmpuint (s->peak[WICK_CATEGORY_GRADIENT], ==, 30);
}

/* export_memory_timeline's raw form, [t_ns, action, bytes, category] with
 * categories 0-7, is the same timeline: first a synthetic one equal to the
 * [times, sizes] above, then an H200 profile's two files from one run. */
static void
assert_same_series (WickDocument *a, WickDocument *b)
{
  g_autoptr (GPtrArray) sa = wick_memory_series_build (a);
  g_autoptr (GPtrArray) sb = wick_memory_series_build (b);
  g_assert_cmpuint (sa->len, ==, 1);
  g_assert_cmpuint (sb->len, ==, 1);
  const WickMemorySeries *x = g_ptr_array_index (sa, 0), *y = g_ptr_array_index (sb, 0);
  for (guint c = 0; c < WICK_N_CATEGORIES; c++)
    g_assert_cmpuint (x->peak[c], ==, y->peak[c]);
  guint na, nb;
  const WickMemoryEvent *ma = wick_document_get_memory (a, &na);
  const WickMemoryEvent *mb = wick_document_get_memory (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpint (ma[i].timestamp_ns, ==, mb[i].timestamp_ns);
      g_assert_cmpint (ma[i].bytes, ==, mb[i].bytes);
      g_assert_cmpint (ma[i].action, ==, mb[i].action);
    }
}

static void
test_memory_timeline_raw (void)
{
  const char *timeline = "[[1000, 1001, 1003],"
                         " [[0, 100, 0, 0, 0, 0, 0, 0, 0],"
                         "  [0, 100, 0, 0, 0, 50, 0, 0, 0],"
                         "  [0, 100, 20, 0, 0, 0, 30, 0, 0]]]";
  const char *raw = "[[1000000, 2, 100, 0], [1001000, 2, 50, 4], [1003000, 4, -50, 4],"
                    " [1003000, 2, 20, 1], [1003000, 2, 30, 5]]";
  g_autoptr (WickDocument) a = wick_document_new ();
  g_autoptr (WickDocument) b = wick_document_new ();
  g_autofree char *pa = write_temp ("mt.json", timeline, strlen (timeline));
  g_autofree char *pb = write_temp ("mt.raw.json", raw, strlen (raw));
  g_assert_true (wick_document_load_file_auto (a, pa, NULL, NULL, NULL, NULL));
  g_assert_true (wick_document_load_file_auto (b, pb, NULL, NULL, NULL, NULL));
  g_assert_cmpstr (wick_chrome_info_get (b)->format, ==, "torch-memory-timeline");
  assert_same_series (a, b);

  const char *dir = g_getenv ("WICK_TEST_DATA") ?: "tests/data";
  g_autofree char *ja = g_build_filename (dir, "snapshot", "h200-memtl.json.gz", NULL);
  g_autofree char *jb = g_build_filename (dir, "snapshot", "h200-memtl.raw.json.gz", NULL);
  g_autoptr (WickDocument) c = wick_document_new ();
  g_autoptr (WickDocument) d = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (c, ja, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (wick_document_load_file_auto (d, jb, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  guint n;
  wick_document_get_memory (d, &n);
  g_assert_cmpuint (n, >, 100);
  assert_same_series (c, d);

  /* a category torch does not have is an error, not a column made up */
  const char *bad = "[[1000000, 2, 100, 0], [1001000, 2, 50, 9]]";
  g_autoptr (WickDocument) e = wick_document_new ();
  g_autofree char *pe = write_temp ("bad.raw.json", bad, strlen (bad));
  g_assert_false (wick_document_load_file_auto (e, pe, NULL, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "category is not 0 to 7"));
}

static gint64
cpu_time_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* A JSONL line of @mib MiB; returns the CPU seconds the load took. */
static double
load_long_line (gsize mib, gboolean *failed, char **cause)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-long-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "long.jsonl", NULL);
  g_autoptr (WickDocument) doc = wick_document_new ();
  FILE *f = fopen (path, "w");
  char block[65536];
  gint64 t0;
  double seconds;

  memset (block, 'x', sizeof block);
  fputs ("{\"kind\":\"meta\",\"pad\":\"", f);
  for (gsize i = 0; i < mib * 16; i++)
    fwrite (block, 1, sizeof block, f);
  fputs ("\"}\n", f);
  fclose (f);
  /* the process's CPU time, not the wall clock: CI runs other tests
   * beside this one on two cores, and a wait for a core is not work */
  t0 = cpu_time_us ();
  *failed = !wick_document_load_file (doc, path, NULL, NULL, NULL, NULL);
  seconds = (double)(cpu_time_us () - t0) / 1e6;
  *cause = g_strdup (wick_document_get_parse_error (doc)->cause);
  g_unlink (path);
  g_rmdir (dir);
  return seconds;
}

static void
test_long_lines (void)
{
  gboolean failed;
  g_autofree char *cause1 = NULL, *cause2 = NULL, *cause3 = NULL;
  double t16, t64;

  /* linear: 4x the bytes is well under 16x the time (quadratic before).
   * The fastest of up to three pairs: a pair slowed by something else
   * running (page reclaim, a neighbour's cache) is measured again, while
   * a quadratic reader fails all three. */
  t16 = G_MAXDOUBLE;
  t64 = G_MAXDOUBLE;
  for (int attempt = 0; attempt < 3; attempt++)
    {
      double s16, s64;

      g_clear_pointer (&cause1, g_free);
      g_clear_pointer (&cause2, g_free);
      /* one call a size (MIN would evaluate a call twice) */
      s16 = load_long_line (16, &failed, &cause1);
      g_assert_true (failed);
      g_assert_nonnull (strstr (cause1, "missing field"));
      s64 = load_long_line (64, &failed, &cause2);
      g_assert_true (failed);
      t16 = MIN (t16, s16);
      t64 = MIN (t64, s64);
      g_test_message ("16 MiB line %.3f s, 64 MiB line %.3f s (fastest so far)", t16, t64);
      if (t64 < 10 * t16 + 0.5)
        break;
    }
  g_assert_cmpfloat (t64, <, 10 * t16 + 0.5);
  /* beyond the maximum: a clear error as soon as it is exceeded */
  wick_set_max_line_length (8 << 20);
  load_long_line (16, &failed, &cause3);
  wick_set_max_line_length (0);
  g_assert_true (failed);
  g_assert_nonnull (strstr (cause3, "longer than the maximum of 8388608 bytes"));
  g_assert_nonnull (strstr (cause3, "--max-line-bytes"));
}

static void
test_sizes (void)
{
  gsize v;

  g_assert_true (wick_parse_byte_size ("512M", &v));
  g_assert_cmpuint (v, ==, (gsize)512 << 20);
  g_assert_true (wick_parse_byte_size ("1G", &v));
  g_assert_false (wick_parse_byte_size ("12X", &v));
  g_assert_false (wick_parse_byte_size ("", &v));
  g_assert_cmpuint (wick_max_line_length (), ==, WICK_DEFAULT_MAX_LINE_LENGTH);
}

/* ts in µs to ns exactly: the one-pass fast path (16 digits, the fraction
 * rounded half up at the fourth digit) and numeric strings alike; an exponent
 * goes through a double (exact here, 1.7e18 ns being a double). */
static void
test_timestamps_exact (void)
{
  static const char json[]
    = "[{\"ph\":\"i\",\"s\":\"g\",\"name\":\"a\",\"ts\":1700000000000000},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"b\",\"ts\":1700000000000000.1235},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"c\",\"ts\":1700000000000000.0004},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"d\",\"ts\":1700000000000000.0005},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"e\",\"ts\":1.7e15},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"f\",\"ts\":\"1700000000000002.5\"},"
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"g\",\"ts\":1700000000000003.9999}]";
  static const struct
  {
    const char *name;
    guint64 ns;
  } want[] = { { "a", 0 }, { "b", 124 },  { "c", 0 },   { "d", 1 },
               { "e", 0 }, { "f", 2500 }, { "g", 4000 } };
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  WickTracks *t;
  const WickInstant *instants;
  guint n, found = 0;

  g_assert_true (wick_chrome_import_data (doc, json, sizeof json - 1, "ts.json", &error));
  g_assert_no_error (error);
  t = wick_document_get_tracks (doc);
  instants = wick_tracks_get_instants (t, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < G_N_ELEMENTS (want); k++)
      if (g_strcmp0 (wick_document_str (doc, instants[i].name), want[k].name) == 0)
        {
          g_test_message ("%s: %" G_GUINT64_FORMAT, want[k].name, instants[i].timestamp_ns);
          g_assert_cmpuint (instants[i].timestamp_ns, ==, want[k].ns);
          found++;
        }
  g_assert_cmpuint (found, ==, n);
}

/* Bad values inside args (skipped on the fast paths for plain integers and
 * strings) are errors naming their place, as anywhere else. */
static void
test_args_errors (void)
{
  static const struct
  {
    const char *json, *want;
  } cases[] = {
    { "[{\"ph\":\"X\",\"args\":{\"a\":12x}}]", "args.json:1:26: expected `,` or `}`" },
    { "[{\"ph\":\"X\",\"args\":{\"a\":\"x\\u12\"}}]", "args.json:1:30: invalid escape" },
    { "[{\"ph\":\"X\",\"args\":{\"a\":[1,2,]}}]", "args.json:1:29: trailing comma" },
    { "[{\"ph\":\"X\",\"args\":{\"a\":01}}]", "args.json:1:25: invalid number" },
    { "[{\"ph\":\"X\",\"args\":{\"a\":\"\t\"}}]", "args.json:1:25: control character" },
    { "[{\"ph\":\"X\",\"args\":{\"a\":1.}}]", "args.json:1:26: invalid number" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_assert_false (
        wick_chrome_import_data (doc, cases[i].json, strlen (cases[i].json), "args.json", &error));
      g_test_message ("%s -> %s", cases[i].json, error->message);
      g_assert_nonnull (strstr (error->message, cases[i].want));
    }
}

/* ---- the pipeline ------------------------------------------------------ */

/* Everything the import put on the track model and the document, as text. */
static char *
describe_import (WickDocument *doc)
{
  GString *out = g_string_new (NULL);
  WickTracks *t = wick_document_get_tracks (doc);
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  const WickParseError *pe = wick_document_get_parse_error (doc);
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);
  static const WickEventKind kinds[] = { WICK_EVENT_SLICE, WICK_EVENT_ASYNC, WICK_EVENT_COUNTER,
                                         WICK_EVENT_INSTANT, WICK_EVENT_DEVICE };
  const WickFlow *flows;

  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "track %u kind %u name %s depth %u events %u\n", i, tracks[i].kind,
                            wick_document_str (doc, tracks[i].name), tracks[i].max_depth,
                            tracks[i].n_events);
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      guint count = 0;
      switch (kinds[k])
        {
          case WICK_EVENT_SLICE:
            wick_document_get_spans (doc, &count);
            break;
          case WICK_EVENT_ASYNC:
            wick_tracks_get_async (t, &count);
            break;
          case WICK_EVENT_COUNTER:
            wick_tracks_get_counter_samples (t, &count);
            break;
          case WICK_EVENT_INSTANT:
            wick_tracks_get_instants (t, &count);
            break;
          default:
            wick_tracks_get_device_slices (t, &count);
            break;
        }
      for (guint i = 0; i < count; i++)
        {
          WickEventRef ref = { kinds[k], i };
          g_string_append_printf (out, "%u/%u %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT " %s %s\n",
                                  kinds[k], i, wick_tracks_event_start (t, ref),
                                  wick_tracks_event_end (t, ref), wick_tracks_event_name (t, ref),
                                  wick_tracks_event_args (t, ref));
        }
    }
  flows = wick_tracks_get_flows (t, &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "flow %s %u:%u -> %u:%u\n", wick_document_str (doc, flows[i].id),
                            flows[i].from.event.kind, flows[i].from.event.index,
                            flows[i].to.event.kind, flows[i].to.event.index);
  for (guint i = 0; info != NULL && i < info->imported->len; i++)
    g_string_append_printf (out, "imported %s\n",
                            (const char *)g_ptr_array_index (info->imported, i));
  for (guint i = 0; info != NULL && i < info->skipped->len; i++)
    g_string_append_printf (out, "skipped %s\n",
                            (const char *)g_ptr_array_index (info->skipped, i));
  for (guint i = 0; info != NULL && i < info->warnings->len; i++)
    g_string_append_printf (out, "warning %s\n",
                            (const char *)g_ptr_array_index (info->warnings, i));
  g_string_append_printf (out, "error %s %s\n", pe->message ? pe->message : "-",
                          pe->cause ? pe->cause : "-");
  return g_string_free (out, FALSE);
}

/* A trace of many batches: every phase, escaped strings (unescaped into the
 * reader's scratch, so copied apart from the event's text), numeric strings,
 * id2, a non-object element and one event larger than a batch's arena. */
static GString *
pipeline_trace (guint n_steps)
{
  GString *j = g_string_new ("{\"traceEvents\":[\n"
                             "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,"
                             "\"args\":{\"name\":\"main \\\"thread\\\"\"}}");
  for (guint i = 0; i < n_steps; i++)
    {
      guint64 ts = 1700000000000000ull + (guint64)i * 100;
      g_string_append_printf (j,
                              ",\n{\"ph\":\"X\",\"name\":\"step\\u00e9 %u\",\"cat\":\"cpu_op\","
                              "\"pid\":1,\"tid\":2,\"ts\":%" G_GUINT64_FORMAT ".5,\"dur\":90,"
                              "\"args\":{\"k\":[1,2.5e3,{\"x\":null}],\"s\":\"a\\nb\"}}",
                              i, ts);
      g_string_append_printf (j,
                              ",{\"ph\":\"B\",\"name\":\"inner\",\"pid\":\"1\",\"tid\":2,"
                              "\"ts\":\"%" G_GUINT64_FORMAT ".25\"},{\"ph\":\"E\",\"pid\":1,"
                              "\"tid\":2,\"ts\":%" G_GUINT64_FORMAT "}",
                              ts + 10, ts + 20);
      g_string_append_printf (j,
                              ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\/%u\",\"pid\":0,"
                              "\"tid\":7,\"ts\":%" G_GUINT64_FORMAT ",\"dur\":5,\"args\":{"
                              "\"device\":0,\"stream\":%u,\"correlation\":%u}}",
                              i % 3, ts + 30, 7 + i % 2, i);
      g_string_append_printf (
        j,
        ",{\"ph\":\"s\",\"id\":%u,\"pid\":1,\"tid\":2,\"ts\":%" G_GUINT64_FORMAT
        ",\"cat\":\"ac2g\",\"name\":\"ac2g\"},{\"ph\":\"f\",\"id\":%u,"
        "\"pid\":0,\"tid\":7,\"ts\":%" G_GUINT64_FORMAT
        ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
        i, ts + 15, i, ts + 30);
      if (i % 5 == 0)
        g_string_append_printf (
          j,
          ",{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":%" G_GUINT64_FORMAT
          ",\"args\":{\"a\":%u,\"b\":\"x\"}},{\"ph\":\"i\",\"s\":\"p\","
          "\"name\":\"mark\",\"pid\":1,\"tid\":2,\"ts\":%" G_GUINT64_FORMAT
          "},{\"ph\":\"b\",\"cat\":\"io\",\"id2\":{\"local\":\"0x%x\"},"
          "\"name\":\"req\",\"pid\":1,\"ts\":%" G_GUINT64_FORMAT
          "},{\"ph\":\"e\",\"cat\":\"io\",\"id2\":{\"local\":\"0x%x\"},"
          "\"pid\":1,\"ts\":%" G_GUINT64_FORMAT "},7,{\"ph\":\"Z\"}",
          ts, i, ts + 1, i, ts + 2, i, ts + 50);
      if (i == n_steps / 2)
        {
          /* more than a batch's 2 MiB arena in one event */
          g_string_append_printf (
            j,
            ",{\"ph\":\"i\",\"name\":\"big\",\"pid\":1,\"tid\":2,\"ts\":%" G_GUINT64_FORMAT
            ",\"args\":{\"blob\":\"",
            ts + 3);
          for (guint k = 0; k < (3u << 20) / 8; k++)
            g_string_append (j, "0123\\\"56");
          g_string_append (j, "\"}}");
        }
    }
  return j;
}

/* Returns the description of the document (the same both ways). */
static char *
check_pipeline_same (const char *json, gsize len)
{
  char *one = NULL;
  g_autofree char *two = NULL;

  for (int mode = 0; mode <= 1; mode++)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      wick_chrome_import_set_pipeline (mode);
      wick_chrome_import_data (doc, json, len, "pipeline.json", NULL);
      if (mode == 0)
        one = describe_import (doc);
      else
        two = describe_import (doc);
    }
  wick_chrome_import_set_pipeline (-1);
  g_assert_cmpuint (strlen (one), >, 1000);
  if (strcmp (one, two) != 0)
    g_error ("the pipelined import differs (%" G_GSIZE_FORMAT " vs %" G_GSIZE_FORMAT " bytes)",
             strlen (one), strlen (two));
  return one;
}

/* Reading on a thread of its own gives the same document as on one, for a
 * whole file, one cut off inside an event, and one with a syntax error. */
static void
test_pipeline (void)
{
  g_autoptr (GString) j = pipeline_trace (6000);
  gsize whole;

  g_string_append (j, "\n]}\n");
  whole = j->len;
  g_free (check_pipeline_same (j->str, whole));
  /* cut off in the middle of the last events */
  {
    g_autofree char *d = check_pipeline_same (j->str, whole - 400);
    g_assert_nonnull (strstr (d, "the file is cut off inside the events"));
  }
  /* a syntax error after many batches */
  *g_strrstr_len (j->str, (gssize)(whole - 700), ",{") = '#';
  {
    g_autofree char *d = check_pipeline_same (j->str, whole);
    g_assert_nonnull (strstr (d, "error parse Chrome trace JSON"));
  }
}

/* A negative dur is counted as read and not modelled (not made a 0 ns
 * slice), and a second "traceEvents" array's events are read, with a
 * warning that says there were two (not dropped silently). */
static void
test_negative_dur_second_events (void)
{
  static const char trace[]
    = "{\"traceEvents\":[\n"
      "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5},\n"
      "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":-3}\n"
      "],\"traceName\":\"two\",\"traceEvents\":[\n"
      "{\"ph\":\"X\",\"name\":\"second\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":2}\n"
      "],\"displayTimeUnit\":\"ns\"}";
  g_autofree char *path = write_temp ("two.json", trace, strlen (trace));
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  g_assert_cmpstr (imported (info, "X"), ==, "2");
  g_assert_cmpstr (skipped (info, "X with a negative dur"), ==, "1");
  g_assert_cmpstr (wick_chrome_info_lookup_metadata (info, "traceName"), ==, "\"two\"");
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  gboolean second = FALSE;
  for (guint i = 0; i < n; i++)
    {
      const char *name = wick_document_str (doc, spans[i].name);
      g_assert_cmpstr (name, !=, "neg");
      second |= g_strcmp0 (name, "second") == 0;
    }
  g_assert_true (second);
  g_assert_cmpuint (n, ==, 3); /* the root, a, second */
  const WickHealthIssue *damaged = find_issue (doc, "chrome_damaged");
  g_assert_nonnull (damaged);
  g_test_message ("%s", damaged->message);
  g_assert_nonnull (strstr (damaged->message, "two.json:4:"));
  g_assert_nonnull (strstr (damaged->message, "a second \"traceEvents\" array"));
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/chrome-stream/plain-gzip-zstd", test_plain_gzip_zstd);
  g_test_add_func ("/model/chrome-stream/jsonl-compressed", test_jsonl_gzip);
  g_test_add_func ("/model/chrome-stream/large-header", test_large_header);
  g_test_add_func ("/model/chrome-stream/damage-tolerated", test_damage_tolerated);
  g_test_add_func ("/model/chrome-stream/errors-name-the-place", test_errors_name_the_place);
  g_test_add_func ("/model/chrome-stream/memory-events", test_memory_events);
  g_test_add_func ("/model/chrome-stream/memory-timeline", test_memory_timeline);
  g_test_add_func ("/model/chrome-stream/memory-timeline-raw", test_memory_timeline_raw);
  g_test_add_func ("/model/chrome-stream/long-lines", test_long_lines);
  g_test_add_func ("/model/chrome-stream/sizes", test_sizes);
  g_test_add_func ("/model/chrome-stream/pipeline", test_pipeline);
  g_test_add_func ("/model/chrome-stream/timestamps-exact", test_timestamps_exact);
  g_test_add_func ("/model/chrome-stream/args-errors", test_args_errors);
  g_test_add_func ("/model/chrome-stream/negative-dur-second-events",
                   test_negative_dur_second_events);
  return g_test_run ();
}
