/* test-model-tracks.c — the track model: builder constructs and candle-graph tracks. */
#include "config.h"

#include <glib/gstdio.h>

#include "model-test-util.h"
#include "wick-tracks.h"
#include "wick-tracks-private.h"

static WickStr
S (WickTracks *t, const char *s)
{
  return wick_tracks_intern (t, s, strlen (s));
}

static const WickSpan *
span_named (WickDocument *doc, const char *name, guint *index)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_document_str (doc, spans[i].name), name) == 0)
      {
        if (index)
          *index = i;
        return &spans[i];
      }
  g_assert_not_reached ();
  return NULL;
}

/* The track of a span of doc (in scope as `doc` or `t`'s document). */
#define TRACK_OF(span)                                                                             \
  wick_tracks_span_track (wick_document_get_tracks (doc),                                         \
                          (guint32)((span) - wick_document_get_spans (doc, NULL)))

static guint
count_kind (WickTracks *t, WickTrackKind kind)
{
  guint n, c = 0;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);
  for (guint i = 0; i < n; i++)
    c += tracks[i].kind == kind;
  return c;
}

/* Two threads of one process, interleaved in the file, stay on two tracks. */
static void
test_two_threads (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 7);
  wick_tracks_set_process_name (t, p, S (t, "python"));
  guint32 main_thread = wick_tracks_add_thread (t, p, 1);
  guint32 autograd = wick_tracks_add_thread (t, p, 2);
  g_assert_cmpuint (wick_tracks_add_thread (t, p, 1), ==, main_thread);
  wick_tracks_set_thread_name (t, main_thread, S (t, "main"));
  wick_tracks_set_thread_name (t, autograd, S (t, "autograd"));
  wick_tracks_slice_complete (t, main_thread, 1000, 5000, S (t, "step"), 0, 0);
  wick_tracks_slice_complete (t, autograd, 1500, 1000, S (t, "backward"), 0, 0);
  wick_tracks_slice_complete (t, main_thread, 2000, 1000, S (t, "forward"), 0, 0);
  wick_tracks_finish (t);

  guint n_tracks;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  g_assert_cmpuint (n_tracks, ==, 2);
  const WickSpan *step = span_named (doc, "step", NULL);
  const WickSpan *backward = span_named (doc, "backward", NULL);
  const WickSpan *forward = span_named (doc, "forward", NULL);
  g_assert_cmpuint (TRACK_OF (step), !=, TRACK_OF (backward));
  g_assert_cmpuint (TRACK_OF (step), ==, TRACK_OF (forward));
  /* backward overlaps step in time but is on another thread: depth 0. */
  g_assert_cmpuint (backward->depth, ==, 0);
  g_assert_cmpuint (forward->depth, ==, 1);
  g_assert_cmpuint (tracks[TRACK_OF (step)].max_depth, ==, 1);
  g_assert_cmpuint (tracks[TRACK_OF (backward)].max_depth, ==, 0);
  g_assert_cmpstr (wick_document_str (doc, tracks[TRACK_OF (backward)].name), ==, "autograd");
  /* Rebased: the earliest event is at 0. */
  g_assert_cmpint (wick_tracks_get_origin_ns (t), ==, 1000);
  g_assert_cmpuint (step->start_ns, ==, 0);
  g_assert_cmpuint (backward->start_ns, ==, 500);
}

/* B/E matched per thread in timestamp order, whatever the file order; an E
 * without a B is counted; an unclosed B runs to the end, open. */
static void
test_begin_end (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 1);
  guint32 a = wick_tracks_add_thread (t, p, 1);
  guint32 b = wick_tracks_add_thread (t, p, 2);
  /* file order is not time order */
  wick_tracks_slice_end (t, a, 900, 0);
  wick_tracks_slice_begin (t, a, 100, S (t, "outer"), 0, 0);
  wick_tracks_slice_end (t, a, 500, S (t, "{\"r\":1}"));
  wick_tracks_slice_begin (t, a, 200, S (t, "inner"), 0, 0);
  wick_tracks_slice_begin (t, b, 150, S (t, "other"), 0, 0); /* never closed */
  wick_tracks_slice_end (t, b, 50, 0);                        /* before any B: skipped */
  wick_tracks_slice_complete (t, b, 1200, 100, S (t, "late"), 0, 0);
  wick_tracks_finish (t);

  guint outer_i, inner_i, other_i;
  const WickSpan *outer = span_named (doc, "outer", &outer_i);
  const WickSpan *inner = span_named (doc, "inner", &inner_i);
  const WickSpan *other = span_named (doc, "other", &other_i);
  /* times are from origin 50 */
  g_assert_cmpuint (outer->start_ns, ==, 50);
  g_assert_cmpuint (outer->duration_ns, ==, 800); /* closed by the E at 900 */
  g_assert_cmpuint (inner->start_ns, ==, 150);
  g_assert_cmpuint (inner->duration_ns, ==, 300); /* closed by the E at 500 */
  g_assert_cmpuint (inner->depth, ==, 1);
  g_assert_cmpint (inner->parent, ==, (gint32)outer_i);
  g_assert_true (outer->flags & WICK_SPAN_FLAG_CLOSED);
  g_assert_false (other->flags & WICK_SPAN_FLAG_CLOSED);
  WickEventRef ref = { WICK_EVENT_SLICE, other_i };
  g_assert_true (wick_tracks_event_is_open (t, ref));
  g_assert_cmpuint (wick_tracks_event_end (t, ref), ==, wick_tracks_get_end_ns (t));
  g_assert_cmpuint (wick_tracks_get_end_ns (t), ==, 1250);
  g_assert_cmpstr (wick_tracks_event_args (t, (WickEventRef){ WICK_EVENT_SLICE, inner_i }), ==,
                   "{\"r\":1}");
  g_assert_cmpuint (wick_tracks_get_n_skipped (t), ==, 1);
  guint64 count;
  g_assert_cmpstr (wick_tracks_get_skipped (t, 0, &count), ==, "E without B");
  g_assert_cmpuint (count, ==, 1);
  /* the open span is found at a time after every close */
  WickEventRef at;
  g_assert_true (wick_tracks_event_at (t, TRACK_OF (other), 0, 1100, 0, &at));
  g_assert_cmpuint (at.index, ==, other_i);
}

/* Overlapping async slices never share a lane; nested ones sit below. */
static void
test_async_lanes (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 1);
  WickStr cat = S (t, "net"), req = S (t, "request");
  for (int i = 0; i < 6; i++)
    {
      g_autofree char *id = g_strdup_printf ("%d", i);
      wick_tracks_async_begin (t, (gint32)p, cat, S (t, id), 0, i * 100, req, 0);
    }
  for (int i = 0; i < 6; i++)
    {
      g_autofree char *id = g_strdup_printf ("%d", i);
      wick_tracks_async_end (t, (gint32)p, cat, S (t, id), 0, 250 + i * 100, 0);
    }
  /* a nested slice in request 0, an instant step, an end without begin */
  wick_tracks_async_begin (t, (gint32)p, cat, S (t, "0"), 0, 10, S (t, "dns"), 0);
  wick_tracks_async_end (t, (gint32)p, cat, S (t, "0"), 0, 20, 0);
  wick_tracks_async_instant (t, (gint32)p, cat, S (t, "1"), 0, 150, S (t, "sent"), 0);
  wick_tracks_async_end (t, (gint32)p, cat, S (t, "nobody"), 0, 10, 0);
  wick_tracks_finish (t);

  guint n;
  const WickAsyncSlice *async = wick_tracks_get_async (t, &n);
  g_assert_cmpuint (n, ==, 8);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_ASYNC), ==, 1);
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++)
      {
        if (async[i].instant || async[j].instant || async[i].lane != async[j].lane)
          continue;
        guint64 ei = wick_tracks_event_end (t, (WickEventRef){ WICK_EVENT_ASYNC, i });
        guint64 ej = wick_tracks_event_end (t, (WickEventRef){ WICK_EVENT_ASYNC, j });
        g_assert_true (ei <= async[j].start_ns || ej <= async[i].start_ns);
      }
  const WickTrack *track = &wick_tracks_get_tracks (t, NULL)[async[0].track];
  g_assert_cmpuint (track->n_events, ==, 7);
  g_assert_cmpuint (track->n_instants, ==, 1);
  g_assert_cmpuint (wick_tracks_track_n_rows (t, async[0].track), ==, (guint)track->max_depth + 1);
  guint64 count;
  g_assert_cmpstr (wick_tracks_get_skipped (t, 0, &count), ==, "async end without begin");
}

static void
test_counters_instants (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 3);
  guint32 th = wick_tracks_add_thread (t, p, 4);
  guint32 c = wick_tracks_counter_track (t, (gint32)p, S (t, "queue depth"));
  g_assert_cmpuint (wick_tracks_counter_track (t, (gint32)p, S (t, "queue depth")), ==, c);
  wick_tracks_counter_add (t, c, 300, 5);
  wick_tracks_counter_add (t, c, 100, 2);
  wick_tracks_counter_add (t, c, 200, 3);
  wick_tracks_instant_add (t, WICK_INSTANT_SCOPE_THREAD, (gint32)p, (gint32)th, 150, S (t, "t"), 0, 0);
  wick_tracks_instant_add (t, WICK_INSTANT_SCOPE_PROCESS, (gint32)p, -1, 160, S (t, "p"), 0, 0);
  wick_tracks_instant_add (t, WICK_INSTANT_SCOPE_GLOBAL, -1, -1, 170, S (t, "g"), 0, 0);
  wick_tracks_instant_add (t, WICK_INSTANT_SCOPE_GLOBAL, -1, -1, 180, S (t, "g2"), 0, 0);
  wick_tracks_finish (t);

  double v;
  /* origin 100: the samples are at 0, 100, 200 */
  g_assert_true (wick_tracks_counter_value_at (t, c, 0, &v));
  g_assert_cmpfloat (v, ==, 2);
  g_assert_true (wick_tracks_counter_value_at (t, c, 150, &v));
  g_assert_cmpfloat (v, ==, 3);
  g_assert_true (wick_tracks_counter_value_at (t, c, 1000, &v));
  g_assert_cmpfloat (v, ==, 5);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_INSTANTS), ==, 3);
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);
  guint scopes = 0;
  for (guint i = 0; i < n; i++)
    if (tracks[i].kind == WICK_TRACK_INSTANTS)
      {
        scopes |= 1u << tracks[i].scope;
        if (tracks[i].scope == WICK_INSTANT_SCOPE_THREAD)
          g_assert_cmpint (tracks[i].thread, ==, (gint32)th);
        if (tracks[i].scope == WICK_INSTANT_SCOPE_PROCESS)
          g_assert_cmpint (tracks[i].thread, ==, -1);
        if (tracks[i].scope == WICK_INSTANT_SCOPE_GLOBAL)
          {
            g_assert_cmpint (tracks[i].process, ==, -1);
            g_assert_cmpuint (tracks[i].n_events, ==, 2);
          }
      }
  g_assert_cmpuint (scopes, ==, 7);
}

/* A flow from a launch on one thread to work on another binds both ends. */
static void
test_flows (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 1);
  guint32 a = wick_tracks_add_thread (t, p, 1);
  guint32 b = wick_tracks_add_thread (t, p, 2);
  wick_tracks_slice_complete (t, a, 0, 100, S (t, "launch"), 0, 0);
  wick_tracks_slice_complete (t, b, 200, 100, S (t, "work"), 0, 0);
  WickStr cat = S (t, "ac2g"), name = S (t, "flow"), id = S (t, "9");
  wick_tracks_flow_add (t, WICK_FLOW_START, a, 50, cat, name, id, FALSE);
  wick_tracks_flow_add (t, WICK_FLOW_END, b, 150, cat, name, id, FALSE); /* next slice: work */
  WickPendingSlice x = wick_tracks_slice_complete (t, a, 400, 10, S (t, "x"), 0, 0);
  WickPendingSlice y = wick_tracks_slice_complete (t, b, 500, 10, S (t, "y"), 0, 0);
  wick_tracks_flow_bind (t, x, S (t, "v2"), FALSE, TRUE);
  wick_tracks_flow_bind (t, y, S (t, "v2"), TRUE, FALSE);
  wick_tracks_finish (t);

  guint n;
  const WickFlow *flows = wick_tracks_get_flows (t, &n);
  g_assert_cmpuint (n, ==, 2);
  guint launch, work, xi, yi;
  span_named (doc, "launch", &launch);
  span_named (doc, "work", &work);
  span_named (doc, "x", &xi);
  span_named (doc, "y", &yi);
  g_assert_cmpuint (flows[0].from.event.kind, ==, WICK_EVENT_SLICE);
  g_assert_cmpuint (flows[0].from.event.index, ==, launch);
  g_assert_cmpuint (flows[0].to.event.index, ==, work);
  g_assert_cmpuint (flows[0].from.track, !=, flows[0].to.track);
  g_assert_cmpuint (flows[1].from.event.index, ==, xi);
  g_assert_cmpuint (flows[1].to.event.index, ==, yi);
  guint32 out[4];
  g_assert_cmpuint (wick_tracks_event_flows (t, (WickEventRef){ WICK_EVENT_SLICE, work }, out, 4),
                    ==, 1);
  g_assert_cmpuint (out[0], ==, 0);
}

/* Many slices, shuffled: the index finds exactly the overlapping ones. */
static void
test_index (void)
{
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 1);
  guint32 th = wick_tracks_add_thread (t, p, 1);
  GRand *rand = g_rand_new_with_seed (7);
  for (guint i = 0; i < 5000; i++)
    {
      gint64 start = (gint64)((i * 7919u) % 5000u) * 100;
      wick_tracks_slice_complete (t, th, start, 50 + g_rand_int_range (rand, 0, 40), S (t, "s"), 0, 0);
    }
  g_rand_free (rand);
  wick_tracks_finish (t);
  guint32 track = 0;
  const WickTrackRow *row = wick_tracks_track_row (t, track, 0);
  g_assert_cmpuint (row->n_events, ==, 5000);
  for (guint i = 1; i < row->n_events; i++)
    g_assert_cmpuint (wick_tracks_event_start (t, (WickEventRef){ WICK_EVENT_SLICE, row->events[i - 1] }),
                      <=, wick_tracks_event_start (t, (WickEventRef){ WICK_EVENT_SLICE, row->events[i] }));
  for (guint64 q = 0; q < 500000; q += 12345)
    {
      guint first = wick_tracks_row_first_overlapping (t, track, 0, q);
      for (guint i = 0; i < first; i++)
        g_assert_cmpuint (wick_tracks_event_end (t, (WickEventRef){ WICK_EVENT_SLICE, row->events[i] }),
                          <=, q);
    }
  g_assert_cmpint (wick_tracks_pick_level (t, 1), ==, -1);
  g_assert_cmpuint (row->n_levels, >, 1);
}

/* A candle-graph trace cut off before its ends keeps every span at its depth. */
static void
test_candle_cut_off (void)
{
  g_autoptr (WickDocument) doc = parse_lines (
    META_INFER, ROOT_START,
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"layer\",\"start_ns\":10,"
    "\"span_kind\":\"module\"}",
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s2\",\"name\":\"matmul\",\"start_ns\":20,"
    "\"span_kind\":\"op\"}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":5}", NULL);
  g_assert_true (wick_document_get_parse_error (doc)->failed); /* no terminal */
  WickTracks *t = wick_document_get_tracks (doc);
  g_assert_cmpint (wick_tracks_get_format (t), ==, WICK_TRACE_FORMAT_CANDLE_GRAPH);
  guint n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (tracks[0].kind, ==, WICK_TRACK_SLICES);
  g_assert_cmpuint (tracks[0].n_events, ==, 3);
  g_assert_cmpuint (tracks[0].max_depth, ==, 2);
  g_assert_cmpuint (span_named (doc, "matmul", NULL)->depth, ==, 2);
  guint layer;
  span_named (doc, "layer", &layer);
  WickEventRef ref = { WICK_EVENT_SLICE, layer };
  g_assert_true (wick_tracks_event_is_open (t, ref));
  g_assert_cmpuint (wick_tracks_event_row (t, ref), ==, 1);
  g_assert_cmpuint (wick_tracks_track_row (t, 0, 1)->n_events, ==, 1);
  g_assert_cmpuint (wick_tracks_track_row (t, 0, 2)->n_events, ==, 1);
}

static WickDocument *
parse_ext (const char *first, ...)
{
  va_list args;
  va_start (args, first);
  WickDocument *doc = parse_lines_v (TRUE, first, args);
  va_end (args);
  return doc;
}

/* libwick's extension mode: spans carry "wick_thread": N and each thread has
 * a wick_thread record; device intervals and memory become tracks too. */
static void
test_candle_threads (void)
{
  g_autoptr (WickDocument) doc = parse_ext (
    META_INFER,
    "{\"kind\":\"wick_thread\",\"thread\":1,\"os_tid\":4242,\"name\":\"main\",\"timestamp_ns\":0}",
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo\",\"start_ns\":0,\"span_kind\":"
    "\"function\",\"measured\":true,\"wick_thread\":1}",
    "{\"kind\":\"wick_thread\",\"thread\":2,\"os_tid\":4243,\"name\":\"loader\",\"timestamp_ns\":5}",
    "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":\"load\",\"start_ns\":5,"
    "\"span_kind\":\"function\",\"wick_thread\":2}",
    "{\"kind\":\"span_start\",\"id\":\"s3\",\"parent_id\":\"s1\",\"name\":\"train\",\"start_ns\":6,"
    "\"span_kind\":\"function\",\"wick_thread\":1}",
    "{\"kind\":\"op\",\"span_id\":\"s3\",\"op_name\":\"matmul\",\"shape\":[2],\"dtype\":\"f32\","
    "\"device\":\"cuda:0\",\"duration_ns\":3,\"input_dense_bytes\":8}",
    "{\"kind\":\"device_interval\",\"span_id\":\"s3\",\"device\":\"cuda:0\",\"stream_id\":\"7\","
    "\"clock_id\":\"c\",\"backend\":\"cuda\",\"start_ns\":7,\"duration_ns\":2}",
    "{\"kind\":\"memory\",\"timestamp_ns\":8,\"storage_id\":\"a\",\"tensor_id\":\"t\",\"span_id\":"
    "\"s3\",\"device\":\"cuda:0\",\"bytes\":100,\"action\":\"alloc\",\"dtype\":\"f32\"}",
    "{\"kind\":\"span_end\",\"id\":\"s3\",\"duration_ns\":10}",
    "{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":20}",
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":100}", TERMINAL, NULL);
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_threads;
  const WickThread *threads = wick_tracks_get_threads (t, &n_threads);
  g_assert_cmpuint (n_threads, ==, 2);
  g_assert_cmpint (threads[0].tid, ==, 4242);
  g_assert_cmpstr (wick_document_str (doc, threads[1].name), ==, "loader");
  const WickSpan *root = span_named (doc, "demo", NULL);
  const WickSpan *load = span_named (doc, "load", NULL);
  const WickSpan *train = span_named (doc, "train", NULL);
  g_assert_cmpuint (TRACK_OF (root), ==, TRACK_OF (train));
  g_assert_cmpuint (TRACK_OF (root), !=, TRACK_OF (load));
  guint load_i;
  span_named (doc, "load", &load_i);
  /* depth 1 under its cross-thread parent, row 0 on its own track */
  g_assert_cmpuint (load->depth, ==, 1);
  g_assert_cmpuint (wick_tracks_event_row (t, (WickEventRef){ WICK_EVENT_SLICE, load_i }), ==, 0);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_SLICES), ==, 2);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_DEVICE), ==, 1);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_COUNTER), ==, 1);
  guint n;
  const WickDeviceSlice *device = wick_tracks_get_device_slices (t, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (wick_document_str (doc, device[0].name), ==, "matmul");
  const WickCounterSample *samples = wick_tracks_get_counter_samples (t, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpfloat (samples[0].value, ==, 100);

  /* A strict document: no thread identity, one host track; a wick_thread
   * value candle-graph would pass over is passed over. */
  g_autoptr (WickDocument) strict = parse_lines (
    META_INFER,
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"demo\",\"start_ns\":0,\"span_kind\":"
    "\"function\",\"measured\":true,\"wick_thread\":\"x\"}",
    ROOT_END, TERMINAL, NULL);
  g_assert_false (wick_document_get_parse_error (strict)->failed);
  t = wick_document_get_tracks (strict);
  g_assert_cmpuint (count_kind (t, WICK_TRACK_SLICES), ==, 1);
  wick_tracks_get_threads (t, &n_threads);
  g_assert_cmpuint (n_threads, ==, 1);
}

/* The first 300 lines of a training trace (what a crashed job leaves): every
 * span at the depth it has in the whole trace, on the track's row of that
 * depth; open spans run to the end of what was read. */
static void
test_cut_training_trace (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "example-trace.jsonl", NULL);
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  g_autoptr (WickDocument) full = wick_document_new_with_extensions (TRUE);
  g_autoptr (WickDocument) cut = wick_document_new_with_extensions (TRUE);
  char **lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      wick_document_feed_line (full, lines[i], strlen (lines[i]), NULL);
      if (i < 300)
        wick_document_feed_line (cut, lines[i], strlen (lines[i]), NULL);
    }
  g_strfreev (lines);
  g_assert_true (wick_document_finish (full, NULL));
  g_assert_false (wick_document_finish (cut, NULL));

  guint n_cut, n_full, deep = 0, open = 0;
  const WickSpan *spans = wick_document_get_spans (cut, &n_cut);
  const WickSpan *full_spans = wick_document_get_spans (full, &n_full);
  g_assert_cmpuint (n_cut, >, 50);
  WickTracks *t = wick_document_get_tracks (cut);
  for (guint i = 0; i < n_cut; i++)
    {
      gint32 j = wick_document_find_span (full, wick_document_str (cut, spans[i].id));
      g_assert_cmpint (j, >=, 0);
      g_assert_cmpuint (spans[i].depth, ==, full_spans[j].depth);
      deep += spans[i].depth > 0;
      WickEventRef ref = { WICK_EVENT_SLICE, i };
      guint row = wick_tracks_event_row (t, ref);
      g_assert_cmpuint (row, ==, spans[i].depth);
      if (wick_tracks_event_is_open (t, ref))
        {
          open++;
          guint64 expect = MAX (wick_tracks_get_end_ns (t), spans[i].start_ns);
          g_assert_cmpuint (wick_tracks_get_end_ns (t), >=, wick_document_get_end_ns (cut));
          g_assert_cmpuint (wick_tracks_event_end (t, ref), ==, expect);
        }
      /* it is in its row's index */
      const WickTrackRow *r = wick_tracks_track_row (t, wick_tracks_span_track (t, i), row);
      gboolean found = FALSE;
      for (guint k = 0; k < r->n_events && !found; k++)
        found = r->events[k] == i;
      g_assert_true (found);
    }
  g_assert_cmpuint (deep, >, n_cut / 2);
  g_assert_cmpuint (open, >, 0);
}

/* A document that finished cleanly drops its intern tables: ids are still
 * found (binary search), and interning again gives the same offsets. */
static void
test_compacted_document (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "example-trace.jsonl", NULL);
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (doc, path, NULL, NULL, NULL, NULL));
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  g_assert_cmpuint (n, >, 100);
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (wick_document_find_span (doc, wick_document_str (doc, spans[i].id)), ==, (gint32)i);
  g_assert_cmpint (wick_document_find_span (doc, "no such span"), ==, -1);
  g_assert_cmpint (wick_document_find_span (doc, ""), ==, -1);
  WickTracks *t = wick_document_get_tracks (doc);
  const char *name = wick_document_str (doc, spans[1].name);
  g_assert_cmpuint (wick_tracks_intern (t, name, strlen (name)), ==, spans[1].name);
  WickStr fresh = wick_tracks_intern (t, "a string never seen", 19);
  g_assert_cmpuint (fresh, !=, 0);
  g_assert_cmpuint (wick_tracks_intern (t, "a string never seen", 19), ==, fresh);
  g_assert_cmpstr (wick_document_str (doc, fresh), ==, "a string never seen");
}

/* Every counter track's extent is its samples' min and max. */
static void
assert_counter_extents (WickTracks *t)
{
  guint n_tracks, n;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  const WickCounterSample *samples = wick_tracks_get_counter_samples (t, &n);
  for (guint k = 0; k < n_tracks; k++)
    {
      if (tracks[k].kind != WICK_TRACK_COUNTER)
        continue;
      double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
      for (guint i = 0; i < n; i++)
        if (samples[i].track == k)
          {
            lo = MIN (lo, samples[i].value);
            hi = MAX (hi, samples[i].value);
          }
      g_assert_cmpfloat (tracks[k].min, ==, lo);
      g_assert_cmpfloat (tracks[k].max, ==, hi);
    }
}

/* PyTorch's [memory] totals without an address (kept as counters) beside
 * two C series, one of them named in bytes. */
static const char memory_totals[]
  = "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":50},\n"
    "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":10,"
    "\"args\":{\"Bytes\":128,\"Total Allocated\":128,\"Total Reserved\":1024,"
    "\"Device Type\":1,\"Device Id\":0}},\n"
    "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":20,"
    "\"args\":{\"Bytes\":128,\"Total Allocated\":256,\"Total Reserved\":1024,"
    "\"Device Type\":1,\"Device Id\":0}},\n"
    "{\"ph\":\"C\",\"name\":\"cache\",\"pid\":1,\"ts\":30,\"args\":{\"bytes\":64}},\n"
    "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":1,\"ts\":30,\"args\":{\"depth\":7}},\n"
    "{\"ph\":\"C\",\"name\":\"queue\",\"pid\":1,\"ts\":40,\"args\":{\"depth\":2}}\n"
    "]}\n";

static WickDocument *
load_data (const char *dir, const char *name)
{
  const char *root = g_getenv ("WICK_TEST_DATA");
  g_autofree char *path = NULL;
  if (dir == NULL)
    {
      g_autofree char *tmp = g_dir_make_tmp ("wick-units-XXXXXX", NULL);
      path = g_build_filename (tmp, name, NULL);
      g_assert_true (g_file_set_contents (path, memory_totals, -1, NULL));
    }
  else
    path = g_build_filename (root ? root : "tests/data", dir, name, NULL);
  WickDocument *doc = wick_document_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_load_file_auto (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  if (dir == NULL)
    {
      g_autofree char *tmp = g_path_get_dirname (path);
      g_unlink (path);
      g_rmdir (tmp);
    }
  return doc;
}

/* Counter units are the importers' (not guessed by a view from the name):
 * PyTorch's [memory] totals, a C series in bytes and a candle-graph trace's memory and
 * device memory hold bytes; Catapult's C counters and a counter built by
 * hand plain numbers; each with its min and max. */
static void
test_counter_units (void)
{
  struct
  {
    const char *dir, *file, *track;
    WickCounterUnit unit;
    double max;
  } cases[] = {
    { NULL, "memory-totals.json", "Total Allocated", WICK_COUNTER_UNIT_BYTES, 256 },
    { NULL, "memory-totals.json", "Total Reserved", WICK_COUNTER_UNIT_BYTES, 1024 },
    { NULL, "memory-totals.json", "cache bytes", WICK_COUNTER_UNIT_BYTES, 64 },
    { NULL, "memory-totals.json", "queue depth", WICK_COUNTER_UNIT_COUNT, 7 },
    { "chrome", "catapult-instance_counters.json", "", WICK_COUNTER_UNIT_COUNT, -1 },
    { "model", "valid-infer.jsonl", "memory ", WICK_COUNTER_UNIT_BYTES, -1 },
    { "model", "valid-infer.jsonl", "device memory cpu used", WICK_COUNTER_UNIT_BYTES, 1024 },
    { "model", "valid-infer.jsonl", "device memory cpu capacity", WICK_COUNTER_UNIT_BYTES, 4096 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (WickDocument) doc = load_data (cases[c].dir, cases[c].file);
      WickTracks *t = wick_document_get_tracks (doc);
      guint n_tracks, found = 0;
      const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
      for (guint k = 0; k < n_tracks; k++)
        {
          const char *name = wick_document_str (doc, tracks[k].name);
          if (tracks[k].kind != WICK_TRACK_COUNTER || !name || !strstr (name, cases[c].track))
            continue;
          g_test_message ("%s: %s %s [%g, %g]", cases[c].file, name,
                          wick_counter_unit_to_string ((WickCounterUnit)tracks[k].unit),
                          tracks[k].min, tracks[k].max);
          g_assert_cmpuint (tracks[k].unit, ==, cases[c].unit);
          g_assert_cmpfloat (tracks[k].max, >, 0);
          if (cases[c].max >= 0)
            g_assert_cmpfloat (tracks[k].max, ==, cases[c].max);
          found++;
        }
      g_assert_cmpuint (found, >, 0);
      assert_counter_extents (t);
    }

  /* built by hand: count until set, then what the builder set */
  g_autoptr (WickDocument) doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 p = wick_tracks_add_process (t, 1);
  guint32 a = wick_tracks_counter_track (t, (gint32)p, S (t, "a"));
  guint32 b = wick_tracks_counter_track (t, (gint32)p, S (t, "b"));
  guint32 e = wick_tracks_counter_track (t, (gint32)p, S (t, "e"));
  wick_tracks_counter_set_unit (t, b, WICK_COUNTER_UNIT_PERCENT);
  wick_tracks_counter_add (t, a, 10, 3);
  wick_tracks_counter_add (t, a, 20, -2);
  wick_tracks_counter_add (t, b, 10, 40);
  wick_tracks_finish (t);
  const WickTrack *tracks = wick_tracks_get_tracks (t, NULL);
  g_assert_cmpuint (tracks[a].unit, ==, WICK_COUNTER_UNIT_COUNT);
  g_assert_cmpuint (tracks[b].unit, ==, WICK_COUNTER_UNIT_PERCENT);
  g_assert_cmpfloat (tracks[a].min, ==, -2);
  g_assert_cmpfloat (tracks[a].max, ==, 3);
  g_assert_cmpfloat (tracks[b].min, ==, 40);
  g_assert_cmpfloat (tracks[e].min, ==, 0);
  g_assert_cmpfloat (tracks[e].max, ==, 0);
  g_assert_cmpstr (wick_counter_unit_to_string (WICK_COUNTER_UNIT_BYTES), ==, "bytes");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tracks/two-threads", test_two_threads);
  g_test_add_func ("/tracks/begin-end", test_begin_end);
  g_test_add_func ("/tracks/async-lanes", test_async_lanes);
  g_test_add_func ("/tracks/counters-instants", test_counters_instants);
  g_test_add_func ("/tracks/flows", test_flows);
  g_test_add_func ("/tracks/index", test_index);
  g_test_add_func ("/tracks/candle-cut-off", test_candle_cut_off);
  g_test_add_func ("/tracks/candle-threads", test_candle_threads);
  g_test_add_func ("/tracks/cut-training-trace", test_cut_training_trace);
  g_test_add_func ("/tracks/compacted-document", test_compacted_document);
  g_test_add_func ("/tracks/counter-units", test_counter_units);
  return g_test_run ();
}
