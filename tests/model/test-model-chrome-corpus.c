/* test-model-chrome-corpus.c — real traces from public repositories
 * (tests/data/chrome, SOURCES.md) imported onto the track model: per file the
 * slices, instants, counter samples, async slices, flows, host threads,
 * deepest nesting, object events (O/N/D) and samples (P) must equal what Perfetto's documented JSON semantics give
 * (expected.tsv, written by tests/data/chrome/make-expected.py). Files that are
 * not Chrome traces (tests/data/chrome-other) must fail with a clear error. */
#include "config.h"

#include <json-glib/json-glib.h>

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-tracks.h"
#include "wick-tracks-private.h"

static char *
corpus_dir (const char *sub)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");

  return g_build_filename (dir ? dir : "tests/data", sub, NULL);
}

static void
test_corpus_counts (void)
{
  g_autofree char *dir = corpus_dir ("chrome");
  g_autofree char *table_path = g_build_filename (dir, "expected.tsv", NULL);
  g_autofree char *table = NULL;
  g_auto (GStrv) lines = NULL;
  guint checked = 0, mismatched = 0;

  g_assert_true (g_file_get_contents (table_path, &table, NULL, NULL));
  lines = g_strsplit (table, "\n", -1);
  for (guint l = 0; lines[l] != NULL; l++)
    {
      g_auto (GStrv) f = NULL;
      g_autofree char *path = NULL;
      g_autoptr (WickDocument) doc = NULL;
      g_autoptr (GError) error = NULL;
      guint64 want[9], got[9] = { 0 };
      static const char *const names[] = { "slices",  "instants", "counters",
                                           "async",   "flows",    "threads",
                                           "depth",   "objects",  "samples" };
      WickTracks *t;
      guint n_tracks, n_flows;
      const WickTrack *tracks;

      if (lines[l][0] == '#' || lines[l][0] == '\0')
        continue;
      f = g_strsplit (lines[l], "\t", -1);
      g_assert_cmpuint (g_strv_length (f), ==, 10);
      for (int k = 0; k < 9; k++)
        want[k] = g_ascii_strtoull (f[k + 1], NULL, 10);
      path = g_build_filename (dir, f[0], NULL);
      doc = wick_document_new ();
      if (!wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error))
        g_error ("%s does not open: %s", f[0], error->message);
      g_assert_nonnull (wick_chrome_info_get (doc));
      t = wick_document_get_tracks (doc);
      tracks = wick_tracks_get_tracks (t, &n_tracks);
      wick_tracks_get_flows (t, &n_flows);
      for (guint i = 0; i < n_tracks; i++)
        switch (tracks[i].kind)
          {
            case WICK_TRACK_SLICES:
              got[0] += tracks[i].n_events;
              got[5] += tracks[i].thread >= 0;
              got[6] = MAX (got[6], tracks[i].max_depth);
              break;
            case WICK_TRACK_DEVICE:
              got[0] += tracks[i].n_events;
              break;
            case WICK_TRACK_INSTANTS:
              /* O/N/D and P are instants of their own tracks, counted apart */
              got[tracks[i].role == WICK_INSTANTS_OBJECTS   ? 7
                  : tracks[i].role == WICK_INSTANTS_SAMPLES ? 8
                                                            : 1]
                += tracks[i].n_events;
              break;
            case WICK_TRACK_COUNTER:
              got[2] += tracks[i].n_events;
              break;
            case WICK_TRACK_ASYNC:
              got[3] += tracks[i].n_events;
              break;
            default:
              break;
          }
      /* the file's flows, as Perfetto counts them: not the launch arrows
       * Wick adds from correlation ids (test-model-gpu checks those) */
      got[4] = n_flows - wick_tracks_get_n_launch_flows (t);
      for (int k = 0; k < 9; k++)
        if (got[k] != want[k])
          {
            g_test_message ("%s: %s %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, f[0],
                            names[k], got[k], want[k]);
            mismatched++;
          }
      checked++;
    }
  g_test_message ("%u traces checked, %u mismatches", checked, mismatched);
  g_assert_cmpuint (checked, >=, 30);
  g_assert_cmpuint (mismatched, ==, 0);
}

static void
test_corpus_other (void)
{
  g_autofree char *path = corpus_dir ("chrome-other/catapult-google_cloud_trace.json");
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (GError) error = NULL;

  /* a Google Cloud Trace file: JSON, but none of the shapes Wick reads */
  g_assert_false (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "not a trace Wick can read"));
  g_assert_nonnull (strstr (error->message, "\"spans\""));
  g_assert_true (wick_document_get_parse_error (doc)->failed);
}

static WickDocument *
load_corpus_file (const char *name)
{
  g_autofree char *dir = corpus_dir ("chrome");
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  WickDocument *doc = wick_document_new ();

  if (!wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error))
    g_error ("%s does not open: %s", name, error->message);
  return doc;
}

static guint64
skipped_count (WickTracks *t, const char *construct)
{
  for (guint i = 0; i < wick_tracks_get_n_skipped (t); i++)
    {
      guint64 count;
      if (strcmp (wick_tracks_get_skipped (t, i, &count), construct) == 0)
        return count;
    }
  return 0;
}

static guint32
track_named (WickDocument *doc, WickTracks *t, WickTrackKind kind, const char *name)
{
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);

  for (guint i = 0; i < n; i++)
    if (tracks[i].kind == kind && tracks[i].name
        && strcmp (wick_document_str (doc, tracks[i].name), name) == 0)
      return i;
  g_error ("no track %s", name);
  return 0;
}

/* Bazel writes its counters' values as strings ("cpu":"5.47..."):
 * chrome://tracing and Perfetto draw them, so does Wick (EngFlow's tiny
 * profile: 122 values on 5 tracks, none skipped). */
static void
test_string_counters (void)
{
  g_autoptr (WickDocument) doc = load_corpus_file ("engflow-bazel-tiny.json.gz");
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_samples, n_tracks, n_counter_tracks = 0;
  const WickCounterSample *samples = wick_tracks_get_counter_samples (t, &n_samples);
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  guint32 cpu = track_named (doc, t, WICK_TRACK_COUNTER, "CPU usage (Bazel) cpu");
  guint cpu_samples = 0;
  double first = 0;

  for (guint i = 0; i < n_tracks; i++)
    n_counter_tracks += tracks[i].kind == WICK_TRACK_COUNTER;
  g_assert_cmpuint (n_counter_tracks, ==, 5);
  g_assert_cmpuint (n_samples, ==, 122);
  g_assert_cmpuint (skipped_count (t, "C value that is not a number"), ==, 0);
  for (guint i = 0; i < n_samples; i++)
    if (samples[i].track == cpu && cpu_samples++ == 0)
      first = samples[i].value;
  g_assert_cmpuint (cpu_samples, ==, 14);
  g_assert_cmpfloat_with_epsilon (first, 5.472452785666407, 1e-12);
}

/* Every thread with slices has a track of its own, named by the file: an HTA
 * MTIA inference trace (an extract: every metadata event, the first events of
 * each thread) has 60 such threads, 12 of them accelerator streams whose
 * "mtia_ccp_events" are device intervals; those were put on tracks of the
 * process keyed by the stream argument, and the thread, its tid and its name
 * ("Stream 101") were gone. */
static void
test_every_thread_has_a_track (void)
{
  g_autoptr (WickDocument) doc = load_corpus_file ("hta-mtia-inference-extract.json.gz");
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_tracks, n_threads;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  const WickThread *threads = wick_tracks_get_threads (t, &n_threads);
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  guint device_threads = 0;

  for (guint i = 0; i < n_tracks; i++)
    {
      if (tracks[i].kind != WICK_TRACK_SLICES && tracks[i].kind != WICK_TRACK_DEVICE)
        continue;
      g_assert_cmpint (tracks[i].thread, >=, 0);
      g_hash_table_add (seen, GINT_TO_POINTER (tracks[i].thread + 1));
      if (tracks[i].kind == WICK_TRACK_DEVICE)
        {
          const WickThread *th = &threads[tracks[i].thread];
          g_autofree char *want = NULL;
          /* MTIA's stream 10N is thread 3502 + 34 N, named "Stream 10N" */
          g_assert_cmpint ((th->tid - 3502) % 34, ==, 0);
          want = g_strdup_printf ("Stream %" G_GINT64_FORMAT, 100 + (th->tid - 3502) / 34);
          g_assert_cmpstr (wick_document_str (doc, th->name), ==, want);
          device_threads++;
        }
    }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 60);
  g_assert_cmpuint (device_threads, ==, 12);
}

/* Arguments of any length are kept: a clang -ftime-trace "detail" of 745
 * characters (ClangBuildAnalyzer's hlsl2glsl test trace) was dropped with
 * every args object over 512 bytes. */
static void
test_long_args (void)
{
  g_autoptr (WickDocument) doc = load_corpus_file ("clangbuildanalyzer-hlsl2glsl-glslCommon.json");
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_spans, over_512 = 0;
  wick_document_get_spans (doc, &n_spans);
  gsize longest = 0;
  g_autofree char *longest_args = NULL;

  for (guint i = 0; i < n_spans; i++)
    {
      const char *args = wick_tracks_event_args (t, (WickEventRef){ WICK_EVENT_SLICE, i });
      gsize len = args ? strlen (args) : 0;
      over_512 += len > 512;
      if (len > longest)
        {
          longest = len;
          g_free (longest_args);
          longest_args = g_strdup (args);
        }
    }
  /* the file's args objects over 512 bytes: 10 (json.dumps counts them) */
  g_assert_cmpuint (over_512, ==, 10);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, longest_args, -1, NULL));
  JsonObject *object = json_node_get_object (json_parser_get_root (parser));
  const char *detail = json_object_get_string_member (object, "detail");
  g_assert_cmpuint (g_utf8_strlen (detail, -1), ==, 745);
  g_assert_true (g_str_has_prefix (detail, "std::__1::__compressed_pair<unsigned long, "));
  g_assert_cmpuint (skipped_count (t, "slice args past 1 GiB of slice args (not kept)"), ==, 0);
}

/* A flow end (f) whose id had no start draws no arrow and is counted, in the
 * skip counts and on the Health list: HTA's event-sync trace has 7 such ends
 * (two ids with two ends each, CPU and GPU, were drawn end to end) and 7
 * launch-to-kernel flows (one launch and its kernel written at one time, the
 * end first). */
static void
test_flow_end_without_start (void)
{
  g_autoptr (WickDocument) doc = load_corpus_file ("hta-event-sync.json.gz");
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_flows, n_issues;
  const WickFlow *flows = wick_tracks_get_flows (t, &n_flows);
  const WickHealthIssue *issues = wick_document_get_health (doc, &n_issues);
  gboolean shown = FALSE;

  g_assert_cmpuint (n_flows, ==, 7);
  for (guint i = 0; i < n_flows; i++)
    {
      /* every arrow leaves the launching thread (python3.10, the only
       * thread of process 948300) for the device process 0 */
      guint n_tracks;
      const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
      const WickProcess *processes = wick_tracks_get_processes (t, NULL);
      g_assert_cmpint (flows[i].from.event.kind, ==, WICK_EVENT_SLICE);
      g_assert_cmpint (processes[tracks[flows[i].from.track].process].pid, ==, 948300);
      g_assert_cmpint (processes[tracks[flows[i].to.track].process].pid, ==, 0);
    }
  g_assert_cmpuint (skipped_count (t, "flow end (f) without a start"), ==, 7);
  for (guint i = 0; i < n_issues; i++)
    shown |= strcmp (issues[i].code, "chrome_skipped") == 0
             && strstr (issues[i].message, "7 events read and not modelled: flow end (f) without "
                                           "a start")
                  != NULL;
  g_assert_true (shown);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/chrome-corpus/counts", test_corpus_counts);
  g_test_add_func ("/model/chrome-corpus/string-counters", test_string_counters);
  g_test_add_func ("/model/chrome-corpus/every-thread-has-a-track", test_every_thread_has_a_track);
  g_test_add_func ("/model/chrome-corpus/long-args", test_long_args);
  g_test_add_func ("/model/chrome-corpus/flow-end-without-start", test_flow_end_without_start);
  g_test_add_func ("/model/chrome-corpus/not-a-trace", test_corpus_other);
  return g_test_run ();
}
