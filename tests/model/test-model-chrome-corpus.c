/* test-model-chrome-corpus.c — real traces from public repositories
 * (tests/data/chrome, SOURCES.md) imported onto the track model: per file the
 * slices, instants, counter samples, async slices, flows, host threads,
 * deepest nesting, object events (O/N/D) and samples (P) must equal what Perfetto's documented JSON semantics give
 * (expected.tsv, written by tests/data/chrome/make-expected.py). Files that are
 * not Chrome traces (tests/data/chrome-other) must fail with a clear error. */
#include "config.h"

#include "model-test-util.h"
#include "wick-chrome-import.h"
#include "wick-tracks.h"

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
      got[4] = n_flows;
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/chrome-corpus/counts", test_corpus_counts);
  g_test_add_func ("/model/chrome-corpus/not-a-trace", test_corpus_other);
  return g_test_run ();
}
