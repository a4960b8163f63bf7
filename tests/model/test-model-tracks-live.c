/* test-model-tracks-live.c — a live document's track model, appended batch
 * by batch, equals a whole build of the same document after every batch.
 *
 * A recorded run (the repository's example trace, the model suite's files
 * and, when WICK_DEMO names the binary, a fresh wick-demo run) is committed
 * in batches of varying size through the live commit path
 * (wick_line_batch_add + wick_document_commit_batch, the live analysis now
 * and then as the live view runs it), and after each batch the document's
 * model (appended when it could be) is compared with a model built whole
 * from the same document: processes, threads, tracks, display order, every
 * event, flows, skips, the extent and zoom base, and each row's events,
 * block maxima and every level of its summary. Counter samples are compared
 * by track, time and value (an append numbers them in arrival order, a whole
 * build series by series). Tracks are matched by what they are (kind,
 * process, thread, name, device, stream): a track an append made after
 * others may have another index than in a whole build; the display order is
 * compared through that match. */
#include "config.h"

#include <glib/gstdio.h>

#include "model-test-util.h"
#include "wick-tracks.h"
#include "wick-tracks-private.h"

/* The whole build's index of each track of the appended model. */
static guint32 *track_map;
#define MAPPED(t) ((t) == G_MAXUINT32 ? G_MAXUINT32 : track_map[t])

static void
match_tracks (WickTracks *a, WickTracks *b)
{
  guint na, nb;
  const WickTrack *ka = wick_tracks_get_tracks (a, &na);
  const WickTrack *kb = wick_tracks_get_tracks (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  g_free (track_map);
  track_map = g_new (guint32, MAX (na, 1));
  g_autofree guint8 *taken = g_new0 (guint8, MAX (nb, 1));
  for (guint i = 0; i < na; i++)
    {
      track_map[i] = G_MAXUINT32;
      for (guint j = 0; j < nb && track_map[i] == G_MAXUINT32; j++)
        if (!taken[j] && ka[i].kind == kb[j].kind && ka[i].process == kb[j].process
            && ka[i].thread == kb[j].thread && ka[i].name == kb[j].name
            && ka[i].category == kb[j].category && ka[i].stream == kb[j].stream
            && ka[i].scope == kb[j].scope)
          {
            track_map[i] = j;
            taken[j] = 1;
          }
      g_assert_cmpuint (track_map[i], !=, G_MAXUINT32);
    }
}

static void
assert_counter_same (WickTracks *a, guint32 ia, WickTracks *b, guint32 ib)
{
  const WickCounterSample *sa = &wick_tracks_get_counter_samples (a, NULL)[ia];
  const WickCounterSample *sb = &wick_tracks_get_counter_samples (b, NULL)[ib];
  g_assert_cmpuint (MAPPED (sa->track), ==, sb->track);
  g_assert_cmpuint (sa->timestamp_ns, ==, sb->timestamp_ns);
  g_assert_cmpfloat (sa->value, ==, sb->value);
}

static void
assert_event_same (WickTracks *a, WickTracks *b, guint kind, guint32 ea, guint32 eb)
{
  if (kind == WICK_EVENT_COUNTER)
    assert_counter_same (a, ea, b, eb);
  else
    g_assert_cmpuint (ea, ==, eb);
}

static void
assert_rows_same (WickTracks *a, WickTracks *b, guint32 t, guint32 u)
{
  g_assert_cmpuint (wick_tracks_track_n_rows (a, t), ==, wick_tracks_track_n_rows (b, u));
  for (guint r = 0; r < wick_tracks_track_n_rows (a, t); r++)
    {
      const WickTrackRow *ra = wick_tracks_track_row (a, t, r);
      const WickTrackRow *rb = wick_tracks_track_row (b, u, r);
      g_assert_cmpuint (ra->event_kind, ==, rb->event_kind);
      g_assert_cmpuint (ra->n_events, ==, rb->n_events);
      for (guint i = 0; i < ra->n_events; i++)
        assert_event_same (a, b, ra->event_kind, ra->events[i], rb->events[i]);
      guint na, nb;
      const guint64 *ma = wick_tracks_row_block_max (a, t, r, &na);
      const guint64 *mb = wick_tracks_row_block_max (b, u, r, &nb);
      g_assert_cmpuint (na, ==, nb);
      for (guint k = 0; k < na; k++)
        g_assert_cmpuint (ma[k], ==, mb[k]);
      g_assert_cmpuint (ra->n_levels, ==, rb->n_levels);
      for (guint l = 0; l < ra->n_levels; l++)
        {
          g_assert_cmpuint (ra->level_counts[l], ==, rb->level_counts[l]);
          for (guint k = 0; k < ra->level_counts[l]; k++)
            {
              g_assert_cmpuint (ra->levels[l][k].bucket, ==, rb->levels[l][k].bucket);
              assert_event_same (a, b, ra->event_kind, ra->levels[l][k].event,
                                 rb->levels[l][k].event);
            }
        }
    }
}

static void
assert_tracks_same (WickTracks *a, WickTracks *b)
{
  WickDocument *doc = wick_tracks_get_document (a);
  g_assert_cmpint (wick_tracks_get_origin_ns (a), ==, wick_tracks_get_origin_ns (b));
  g_assert_cmpuint (wick_tracks_get_start_ns (a), ==, wick_tracks_get_start_ns (b));
  g_assert_cmpuint (wick_tracks_get_end_ns (a), ==, wick_tracks_get_end_ns (b));
  g_assert_cmpuint (wick_tracks_get_base_ns (a), ==, wick_tracks_get_base_ns (b));

  guint na, nb;
  const WickProcess *pa = wick_tracks_get_processes (a, &na);
  const WickProcess *pb = wick_tracks_get_processes (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpint (pa[i].pid, ==, pb[i].pid);
      g_assert_cmpuint (pa[i].name, ==, pb[i].name);
      g_assert_cmpuint (pa[i].labels, ==, pb[i].labels);
      g_assert_cmpint (pa[i].sort_index, ==, pb[i].sort_index);
      g_assert_cmpuint (pa[i].flags, ==, pb[i].flags);
    }
  const WickThread *ta = wick_tracks_get_threads (a, &na);
  const WickThread *tb = wick_tracks_get_threads (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpint (ta[i].tid, ==, tb[i].tid);
      g_assert_cmpuint (ta[i].process, ==, tb[i].process);
      g_assert_cmpstr (wick_document_str (doc, ta[i].name), ==,
                       wick_document_str (doc, tb[i].name));
      g_assert_cmpint (ta[i].sort_index, ==, tb[i].sort_index);
      g_assert_cmpuint (ta[i].flags, ==, tb[i].flags);
    }
  match_tracks (a, b);
  const WickTrack *ka = wick_tracks_get_tracks (a, &na);
  const WickTrack *kb0 = wick_tracks_get_tracks (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      const WickTrack *kb = kb0 + track_map[i] - i; /* kb[i]: the match of ka[i] */
      g_assert_cmpuint (ka[i].kind, ==, kb[i].kind);
      g_assert_cmpuint (ka[i].scope, ==, kb[i].scope);
      g_assert_cmpuint (ka[i].role, ==, kb[i].role);
      g_assert_cmpuint (ka[i].unit, ==, kb[i].unit);
      g_assert_cmpuint (ka[i].max_depth, ==, kb[i].max_depth);
      g_assert_cmpint (ka[i].process, ==, kb[i].process);
      g_assert_cmpint (ka[i].thread, ==, kb[i].thread);
      g_assert_cmpstr (wick_document_str (doc, ka[i].name), ==,
                       wick_document_str (doc, kb[i].name));
      g_assert_cmpuint (ka[i].category, ==, kb[i].category);
      g_assert_cmpuint (ka[i].stream, ==, kb[i].stream);
      g_assert_cmpuint (ka[i].n_events, ==, kb[i].n_events);
      g_assert_cmpuint (ka[i].n_instants, ==, kb[i].n_instants);
      g_assert_cmpfloat (ka[i].min, ==, kb[i].min);
      g_assert_cmpfloat (ka[i].max, ==, kb[i].max);
      assert_rows_same (a, b, i, track_map[i]);
    }
  const guint32 *oa = wick_tracks_get_display_order (a, &na);
  const guint32 *ob = wick_tracks_get_display_order (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    g_assert_cmpuint (track_map[oa[i]], ==, ob[i]);

  guint ns;
  wick_document_get_spans (doc, &ns);
  for (guint i = 0; i < ns; i++)
    {
      WickEventRef ref = { WICK_EVENT_SLICE, i };
      g_assert_cmpuint (MAPPED (wick_tracks_span_track (a, i)), ==, wick_tracks_span_track (b, i));
      g_assert_cmpuint (wick_tracks_event_row (a, ref), ==, wick_tracks_event_row (b, ref));
      g_assert_cmpuint (wick_tracks_event_end (a, ref), ==, wick_tracks_event_end (b, ref));
    }
  g_assert_cmpuint (wick_tracks_get_async (a, &na) == NULL, ==,
                    wick_tracks_get_async (b, &nb) == NULL);
  g_assert_cmpuint (na, ==, nb);
  const WickInstant *ia = wick_tracks_get_instants (a, &na);
  const WickInstant *ib = wick_tracks_get_instants (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpuint (MAPPED (ia[i].track), ==, ib[i].track);
      g_assert_cmpuint (ia[i].timestamp_ns, ==, ib[i].timestamp_ns);
      g_assert_cmpuint (ia[i].name, ==, ib[i].name);
      g_assert_cmpuint (ia[i].category, ==, ib[i].category);
      g_assert_cmpuint (ia[i].args, ==, ib[i].args);
      g_assert_cmpuint (ia[i].scope, ==, ib[i].scope);
    }
  const WickDeviceSlice *da = wick_tracks_get_device_slices (a, &na);
  const WickDeviceSlice *db = wick_tracks_get_device_slices (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpuint (MAPPED (da[i].track), ==, db[i].track);
      g_assert_cmpint (da[i].source, ==, db[i].source);
      g_assert_cmpuint (da[i].start_ns, ==, db[i].start_ns);
      g_assert_cmpuint (da[i].duration_ns, ==, db[i].duration_ns);
      g_assert_cmpstr (wick_document_str (doc, da[i].name), ==,
                       wick_document_str (doc, db[i].name));
      g_assert_cmpuint (da[i].category, ==, db[i].category);
      g_assert_cmpuint (da[i].row, ==, db[i].row);
      g_assert_cmpuint (da[i].launcher, ==, db[i].launcher);
    }
  wick_tracks_get_counter_samples (a, &na);
  wick_tracks_get_counter_samples (b, &nb);
  g_assert_cmpuint (na, ==, nb); /* and each one through its row, above */
  const WickFlow *fa = wick_tracks_get_flows (a, &na);
  const WickFlow *fb = wick_tracks_get_flows (b, &nb);
  g_assert_cmpuint (na, ==, nb);
  for (guint i = 0; i < na; i++)
    {
      g_assert_cmpuint (MAPPED (fa[i].from.track), ==, fb[i].from.track);
      g_assert_cmpuint (MAPPED (fa[i].to.track), ==, fb[i].to.track);
      g_assert_cmpuint (fa[i].from.timestamp_ns, ==, fb[i].from.timestamp_ns);
      g_assert_cmpuint (fa[i].to.timestamp_ns, ==, fb[i].to.timestamp_ns);
      g_assert_cmpuint (fa[i].id, ==, fb[i].id);
    }
  g_assert_cmpuint (wick_tracks_get_n_skipped (a), ==, wick_tracks_get_n_skipped (b));
  for (guint i = 0; i < wick_tracks_get_n_skipped (a); i++)
    {
      guint64 ca, cb;
      g_assert_cmpstr (wick_tracks_get_skipped (a, i, &ca), ==,
                       wick_tracks_get_skipped (b, i, &cb));
      g_assert_cmpuint (ca, ==, cb);
    }
}

/* A whole build of @doc as it stands, beside its own model. */
static WickTracks *
whole_build (WickDocument *doc)
{
  WickTracks *ref = wick_tracks_new (doc);
  wick_tracks_build_candle_graph (ref);
  return ref;
}

typedef struct
{
  guint batches, appends, fallbacks;
} Fed;

/* Commits @lines in batches of the sizes in @sizes (cycled), comparing the
 * model with a whole build after each. */
static Fed
feed_and_compare (GPtrArray *lines, const guint *sizes, guint n_sizes)
{
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickLineDecoder) decoder = wick_line_decoder_new (TRUE);
  Fed fed = { 0 };
  for (guint i = 0, b = 0; i < lines->len; b++)
    {
      g_autoptr (WickLineBatch) batch = wick_line_batch_new ();
      guint end = MIN (lines->len, i + sizes[b % n_sizes]);
      for (; i < end; i++)
        {
          const char *line = g_ptr_array_index (lines, i);
          g_assert_true (wick_line_batch_add (batch, decoder, line, strlen (line)));
        }
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_document_commit_batch (doc, batch, &error));
      g_assert_no_error (error);
      if (b % 3 == 2)
        wick_document_analyze (doc); /* resolves ops' and intervals' spans, as the live view does */
      WickTracks *tracks = wick_document_get_tracks (doc);
      WickTracks *ref = whole_build (doc);
      assert_tracks_same (tracks, ref);
      wick_tracks_free (ref);
      fed.batches++;
    }
  WickTracksUpdateStats stats;
  wick_tracks_get_update_stats (wick_document_get_tracks (doc), &stats);
  fed.appends = (guint)stats.appends;
  fed.fallbacks = (guint)stats.fallbacks;
  if (stats.fallbacks > 0)
    g_test_message ("fallbacks %u, the last: %s", fed.fallbacks, stats.last_fallback);
  return fed;
}

static GPtrArray *
read_lines (const char *path)
{
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  char **split = g_strsplit (text, "\n", -1);
  for (char **l = split; *l; l++)
    {
      g_strchomp (*l);
      if (**l)
        g_ptr_array_add (lines, g_strdup (*l));
    }
  g_strfreev (split);
  return lines;
}

static const guint sizes_mixed[] = { 1, 7, 64, 3, 300, 2, 33 };

static void
check_file (const char *path, gboolean expect_appends)
{
  g_autoptr (GPtrArray) lines = read_lines (path);
  Fed fed = feed_and_compare (lines, sizes_mixed, G_N_ELEMENTS (sizes_mixed));
  g_test_message ("%s: %u lines, %u batches, %u appends, %u fallbacks", path, lines->len,
                  fed.batches, fed.appends, fed.fallbacks);
  if (expect_appends)
    g_assert_cmpuint (fed.appends, >, fed.batches / 2);
}

static void
test_example_trace (void)
{
  g_autofree char *path
    = g_test_build_filename (G_TEST_DIST, "..", "data", "example-trace.jsonl", NULL);
  check_file (path, TRUE);
}

static void
test_model_files (void)
{
  static const char *const files[] = { "train-contract.jsonl", "valid-infer.jsonl",
                                       "with-extensions.jsonl", "with-wick-keys.jsonl" };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "model", files[i], NULL);
      check_file (path, FALSE);
    }
}

/* A fresh wick-demo run (two threads, memory, host memory samples). */
static void
test_demo_run (void)
{
  const char *demo = g_getenv ("WICK_DEMO");
  if (demo == NULL)
    {
      g_test_skip ("WICK_DEMO is not set");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("wick-tracks-live-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "demo.jsonl", NULL);
  g_autofree char *runtime = g_build_filename (dir, "run", NULL);
  g_mkdir (runtime, 0700);
  const char *argv[] = { demo, "--steps", "40", "--rate", "0", "--trace", trace, "--quiet", NULL };
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "XDG_RUNTIME_DIR", runtime, TRUE);
  gint status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  check_file (trace, TRUE);
  g_remove (trace);
  g_rmdir (runtime);
  g_rmdir (dir);
}

/* A memory event earlier than the last one committed reorders the memory
 * series: the model is rebuilt whole, counted, and still equal. */
static void
test_fallback_counted (void)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (lines, g_strdup (META_INFER));
  g_ptr_array_add (lines, g_strdup (ROOT_START));
  static const guint64 times[] = { 10, 20, 15, 30 };
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    g_ptr_array_add (
      lines, g_strdup_printf ("{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                              ",\"storage_id\":\"m%u\",\"tensor_id\":\"t%u\",\"span_id\":\"s1\","
                              "\"device\":\"cpu\",\"bytes\":64,\"action\":\"alloc\","
                              "\"shape\":[8],\"dtype\":\"f32\",\"category\":\"activation\"}",
                              times[i], i, i));
  g_ptr_array_add (lines, g_strdup (ROOT_END));
  static const guint one[] = { 1 };
  Fed fed = feed_and_compare (lines, one, 1);
  g_assert_cmpuint (fed.fallbacks, ==, 1);
  g_assert_cmpuint (fed.appends, ==, fed.batches - 1 - fed.fallbacks);
}

/* Samples recorded by two threads reach the document out of time order:
 * each goes to its place in its row (the summary recomputed from there),
 * no whole rebuild, the model still equal. */
static void
test_out_of_order_samples (void)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (lines, g_strdup (META_INFER));
  g_ptr_array_add (lines, g_strdup (ROOT_START));
  static const guint64 times[] = { 10, 40, 20, 30, 60, 50, 50, 5 };
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    g_ptr_array_add (
      lines, g_strdup_printf ("{\"kind\":\"device_memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                              ",\"device\":\"cpu\",\"used_bytes\":%u}",
                              times[i], 1000 + i));
  g_ptr_array_add (lines, g_strdup (ROOT_END));
  static const guint one[] = { 1 };
  Fed fed = feed_and_compare (lines, one, 1);
  g_assert_cmpuint (fed.fallbacks, ==, 0);
  g_assert_cmpuint (fed.appends, ==, fed.batches - 1);
}

/* A span committed before its parent (a reader that lost the parent's start
 * writes it at the parent's end, after its children), in the first build and
 * inside an append: the first build is whole, every later one an append, the
 * model still equal to a whole build after each batch. */
static void
test_parent_after_child (void)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (lines, g_strdup (META_INFER));
  g_ptr_array_add (lines, g_strdup ("{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\","
                                    "\"name\":\"early\",\"start_ns\":5,\"span_kind\":\"function\","
                                    "\"measured\":true}"));
  g_ptr_array_add (lines, g_strdup (ROOT_START));
  for (guint i = 3; i < 10; i++)
    g_ptr_array_add (lines,
                     g_strdup_printf ("{\"kind\":\"span_start\",\"id\":\"s%u\",\"parent_id\":"
                                      "\"s%u\",\"name\":\"later\",\"start_ns\":%u,"
                                      "\"span_kind\":\"function\",\"measured\":true}",
                                      i, i - 1, 10 * i));
  /* ... and a child before its parent inside one append */
  g_ptr_array_add (lines, g_strdup ("{\"kind\":\"span_start\",\"id\":\"s20\",\"parent_id\":"
                                    "\"s21\",\"name\":\"early\",\"start_ns\":95,"
                                    "\"span_kind\":\"function\",\"measured\":true}"));
  g_ptr_array_add (lines, g_strdup ("{\"kind\":\"span_start\",\"id\":\"s21\",\"parent_id\":"
                                    "\"s9\",\"name\":\"late\",\"start_ns\":94,"
                                    "\"span_kind\":\"function\",\"measured\":true}"));
  static const guint sizes[] = { 3, 1, 1, 1, 1, 1, 1, 1, 2 };
  Fed fed = feed_and_compare (lines, sizes, G_N_ELEMENTS (sizes));
  g_assert_cmpuint (fed.batches, ==, 9);
  g_assert_cmpuint (fed.fallbacks, ==, 0);
  g_assert_cmpuint (fed.appends, ==, fed.batches - 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tracks-live/example-trace", test_example_trace);
  g_test_add_func ("/tracks-live/model-files", test_model_files);
  g_test_add_func ("/tracks-live/demo-run", test_demo_run);
  g_test_add_func ("/tracks-live/fallback-counted", test_fallback_counted);
  g_test_add_func ("/tracks-live/out-of-order-samples", test_out_of_order_samples);
  g_test_add_func ("/tracks-live/parent-after-child", test_parent_after_child);
  return g_test_run ();
}
