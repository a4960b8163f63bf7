/* test-app-snapshot.c — a PyTorch CUDA memory snapshot in the app under Xvfb:
 * the main window's loader sends a pickle to a snapshot window (by its first
 * bytes, not its name), which reads it on a worker thread and shows the
 * chart, the segment map and the largest live allocations; selecting one
 * shows its life and stack; a hostile pickle ends on the error page naming
 * the refused opcode. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-application-private.h"
#include "ui/wick-snapshot-window.h"
#include "ui/wick-snapshot-window-private.h"
#include "ui/wick-window.h"
#include "ui/wick-window-private.h"

static WickApplication *app;

static char *
data_path (const char *name)
{
  return g_build_filename (WICK_SOURCE_DIR, "tests", "data", "snapshot", name, NULL);
}

static WickSnapshotWindow *
find_snapshot_window (void)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (WICK_IS_SNAPSHOT_WINDOW (l->data))
      return l->data;
  return NULL;
}

static gboolean
has_snapshot_window (gpointer data)
{
  return find_snapshot_window () != NULL;
}

static gboolean
not_loading (gpointer window)
{
  return !wick_snapshot_window_is_loading (window);
}

/* Opened through the main window, by sniffing: a .gz whose pickle says so. */
static void
test_snapshot_opens (void)
{
  g_autofree char *path = data_path ("cs336-medium-128-training.pickle.gz");
  WickWindow *main_window = app_test_window_new (app, 900, 600);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (main_window, file);
  APP_TEST_WAIT (has_snapshot_window, NULL, 10000);
  WickSnapshotWindow *window = find_snapshot_window ();
  APP_TEST_WAIT (not_loading, window, 60000);
  g_assert_null (wick_snapshot_window_get_error (window));
  WickMemorySnapshot *s = wick_snapshot_window_get_snapshot (window);
  g_assert_nonnull (s);
  guint n;
  wick_memory_snapshot_get_segments (s, &n);
  g_assert_cmpuint (n, ==, 377);
  /* The main window did not start a load of its own. */
  g_assert_true (wick_window_is_empty (main_window));

  app_test_wait_drawn (wick_snapshot_window_get_chart (window), 20000, "the snapshot chart");
  app_test_wait_drawn (wick_snapshot_window_get_segment_map (window), 20000, "the segment map");
  /* At the peak (the time first shown) the live allocations sum to the
   * peak when they all fit in the list. */
  guint64 peak;
  gint64 peak_us;
  g_assert_true (wick_memory_snapshot_get_peak (s, &peak, &peak_us));
  g_autoptr (GArray) live = wick_memory_snapshot_live_at (s, peak_us, G_MAXUINT);
  guint64 live_bytes = 0;
  const WickSnapshotAllocation *allocations = wick_memory_snapshot_get_allocations (s, &n);
  for (guint i = 0; i < live->len; i++)
    live_bytes += allocations[g_array_index (live, guint32, i)].size;
  g_assert_cmpuint (live_bytes, ==, peak);
  g_assert_cmpuint (wick_snapshot_window_get_n_live_rows (window), ==, MIN (live->len, 50));

  g_assert_cmpstr (wick_snapshot_window_get_details (window), ==, "");
  /* Every row shows its allocation's life; the third largest at the peak
   * (an AdamW state tensor) has Python frames, listed first. */
  for (guint row = 0; row < wick_snapshot_window_get_n_live_rows (window); row++)
    {
      wick_snapshot_window_select_row (window, row);
      g_assert_nonnull (strstr (wick_snapshot_window_get_details (window), "alloc "));
    }
  wick_snapshot_window_select_row (window, 2);
  const char *details = wick_snapshot_window_get_details (window);
  g_assert_nonnull (strstr (details, "Python frames:\n  step ("));
  g_assert_nonnull (strstr (details, "optimizer.py:"));

  /* The flame graph at the peak holds every live byte (its root), and a
   * frame's details name its bytes and its frames from the outermost. */
  guint n_nodes;
  g_assert_cmpuint (wick_snapshot_window_get_flame_bytes (window, &n_nodes), ==, peak);
  g_assert_cmpuint (n_nodes, >, 3);
  wick_snapshot_window_show_page (window, "flame");
  app_test_wait_drawn (wick_snapshot_window_get_flame_graph (window), 20000, "the flame graph");
  wick_snapshot_window_select_flame_node (window, 1);
  g_assert_nonnull (strstr (wick_snapshot_window_get_details (window), "live under this frame"));
  g_assert_nonnull (strstr (wick_snapshot_window_get_details (window), "Frames from the outermost:"));
  wick_snapshot_window_show_page (window, "segments");

  /* A time before the history's first alloc: the list changes. */
  guint n_entries;
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
  wick_snapshot_window_select_time (window, entries[0].time_us);
  g_assert_cmpstr (wick_snapshot_window_get_details (window), ==, "");
  g_assert_cmpuint (wick_snapshot_window_get_flame_bytes (window, NULL), <, peak);
  app_test_window_close (window);
  app_test_window_close (main_window);
}

/* A time range loaded alone (the chart's drag, then "Load Range Alone"):
 * the window reads only the range's history, the state at its start
 * rebuilt; the same figures as wick-trace memory --from/--to (6 727
 * entries of the CS336 step's middle third, tests/model's /snapshot/range
 * checks those against the reference). */
static void
test_snapshot_range (void)
{
  g_autofree char *path = data_path ("cs336-medium-128-training.pickle.gz");
  gint64 from = 1783874495910988, to = 1783874495966988;
  WickSnapshotWindow *window = wick_snapshot_window_new_range (GTK_APPLICATION (app), path, from, to);
  gtk_window_present (GTK_WINDOW (window));
  APP_TEST_WAIT (not_loading, window, 60000);
  g_assert_null (wick_snapshot_window_get_error (window));
  WickMemorySnapshot *s = wick_snapshot_window_get_snapshot (window);
  gint64 f, t;
  guint64 outside;
  g_assert_true (wick_memory_snapshot_get_range (s, &f, &t, &outside));
  g_assert_cmpint (f, ==, from);
  g_assert_cmpint (t, ==, to);
  guint n;
  wick_memory_snapshot_get_entries (s, &n);
  g_assert_cmpuint (n, ==, 6727);
  g_assert_cmpuint (outside, ==, 19136 - 6727);
  guint64 peak;
  gint64 peak_us;
  g_assert_true (wick_memory_snapshot_get_peak (s, &peak, &peak_us));
  g_assert_cmpuint (peak, ==, 7013335044);
  app_test_wait_drawn (wick_snapshot_window_get_chart (window), 20000, "the range's chart");
  /* the chart starts at the range's start with what was live then */
  g_assert_cmpuint (wick_snapshot_window_get_n_live_rows (window), >, 0);
  /* a drag on it offers a narrower range */
  gint64 a, b;
  g_assert_false (wick_snapshot_window_get_drag_range (window, &a, &b));
  wick_snapshot_window_set_drag_range (window, to - 1000, from + 1000);
  g_assert_true (wick_snapshot_window_get_drag_range (window, &a, &b));
  g_assert_cmpint (a, ==, from + 1000);
  g_assert_cmpint (b, ==, to - 1000);
  app_test_window_close (window);
}

/* The check button under @root whose label starts with @prefix. */
static GtkWidget *
find_check_button (GtkWidget *root, const char *prefix)
{
  if (GTK_IS_CHECK_BUTTON (root))
    {
      const char *label = gtk_check_button_get_label (GTK_CHECK_BUTTON (root));
      if (label != NULL && g_str_has_prefix (label, prefix))
        return root;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_check_button (c, prefix);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The compare page's differential flame graph: its root holds every live
 * byte of A and of B, and the largest frame that is live at only one of the
 * two (the training step's <module>) is drawn in @channel's colour
 * (red 0x00ff0000 for growth, blue 0x000000ff for shrinkage), with its bytes
 * in the details. */
static void
check_diff_flame (WickSnapshotWindow *window, guint64 root_a, guint64 root_b, guint32 channel)
{
  wick_snapshot_window_show_diff_page (window, "flame");
  app_test_wait_drawn (wick_snapshot_window_get_diff_flame_graph (window), 20000,
                       "the differential flame graph");
  guint n_nodes = wick_snapshot_window_get_n_diff_flame_nodes (window);
  g_assert_cmpuint (n_nodes, >, 2);
  guint depth;
  double x0, w;
  guint64 a, b;
  g_assert_true (wick_snapshot_window_get_diff_flame_node (window, 0, &depth, &x0, &w, &a, &b));
  g_assert_cmpuint (a, ==, root_a);
  g_assert_cmpuint (b, ==, root_b);
  /* the widest node at depth >= 1 live at one snapshot only */
  guint best = 0;
  double best_w = 0;
  for (guint i = 1; i < n_nodes; i++)
    {
      g_assert_true (wick_snapshot_window_get_diff_flame_node (window, i, &depth, &x0, &w, &a, &b));
      gboolean one_sided = channel == 0x00ff0000 ? (a == 0 && b > 0) : (b == 0 && a > 0);
      double width = channel == 0x00ff0000 ? w : (double)a / (double)MAX (root_a, 1);
      if (one_sided && width > best_w)
        {
          best = i;
          best_w = width;
        }
    }
  g_assert_cmpuint (best, >, 0);
  if (channel == 0x000000ff)
    {
      /* widths from B hide what B freed: "Widths from A" shows it */
      g_assert_true (wick_snapshot_window_get_diff_flame_node (window, best, &depth, &x0, &w, &a, &b));
      g_assert_cmpfloat (w, ==, 0.0);
      GtkWidget *check = find_check_button (GTK_WIDGET (window), "Widths from A");
      g_assert_nonnull (check);
      gtk_check_button_set_active (GTK_CHECK_BUTTON (check), TRUE);
    }
  g_assert_true (wick_snapshot_window_get_diff_flame_node (window, best, &depth, &x0, &w, &a, &b));
  g_assert_cmpfloat (w, >, 0.05);
  const int width = 1000, height = (int)(depth + 2) * 18;
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create (surface);
  wick_snapshot_window_render_diff_flame (window, cr, width, height);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  /* the box's top left inside its border, clear of its label */
  int px = 2 + (int)(x0 * (width - 4)) + 2, py = (int)depth * 18 + 3;
  const guint8 *data = cairo_image_surface_get_data (surface);
  guint32 pixel = *(const guint32 *)(data + py * cairo_image_surface_get_stride (surface) + px * 4);
  int r = (pixel >> 16) & 0xff, g = (pixel >> 8) & 0xff, bl = pixel & 0xff;
  cairo_surface_destroy (surface);
  if (channel == 0x00ff0000)
    g_assert_cmpint (r, >, bl + 100);
  else
    g_assert_cmpint (bl, >, r + 100);
  g_assert_cmpint (g, <, 120);
  wick_snapshot_window_select_diff_flame_node (window, best);
  const char *details = wick_snapshot_window_get_diff_details (window);
  g_assert_nonnull (strstr (details, channel == 0x00ff0000 ? "change +" : "change -"));
  g_assert_nonnull (strstr (details, "Frames from the outermost:"));
  /* the training script's <module>, at a line the inference one never ran */
  g_assert_nonnull (strstr (details, "nsys_profile.py:249)"));
}

/* wick --compare A.pickle B.pickle: the snapshot window's compare page,
 * the stacks of wick_memory_snapshot_diff (model-snapshot checks that
 * against the reference), a row's frames on selection. */
static void
test_snapshot_compare (void)
{
  g_autofree char *a = data_path ("cs336-medium-128-inference.pickle.zst");
  g_autofree char *b = data_path ("cs336-medium-128-training.pickle.gz");
  g_autoptr (GFile) fa = g_file_new_for_path (a);
  g_autoptr (GFile) fb = g_file_new_for_path (b);
  wick_application_compare_files (app, fa, fb);
  APP_TEST_WAIT (has_snapshot_window, NULL, 10000);
  WickSnapshotWindow *window = find_snapshot_window ();
  APP_TEST_WAIT (not_loading, window, 60000);
  g_assert_null (wick_snapshot_window_get_error (window));
  guint n;
  const WickSnapshotStackDiff *diff = wick_snapshot_window_get_diff (window, &n);
  g_assert_cmpuint (n, ==, 8); /* as wick-trace compare --json lists them */
  g_assert_cmpuint (wick_snapshot_window_get_n_diff_rows (window), ==, MIN (n, 500));
  /* the largest change: AdamW's state, made in the training step only */
  g_assert_cmpuint (diff[0].bytes_a, ==, 0);
  g_assert_cmpuint (diff[0].bytes_b, ==, 1694699520);
  wick_snapshot_window_select_diff_row (window, 0);
  const char *details = wick_snapshot_window_get_diff_details (window);
  g_assert_nonnull (strstr (details, "in 219 blocks"));
  g_assert_nonnull (strstr (details, "optimizer.py:"));
  guint64 total_a = 0, total_b = 0;
  for (guint i = 0; i < n; i++)
    {
      total_a += diff[i].bytes_a;
      total_b += diff[i].bytes_b;
    }
  check_diff_flame (window, total_a, total_b, 0x00ff0000 /* grew: red */);
  app_test_window_close (window);

  /* B against A: the same stacks, AdamW's state now freed: blue */
  wick_application_compare_files (app, fb, fa);
  APP_TEST_WAIT (has_snapshot_window, NULL, 10000);
  window = find_snapshot_window ();
  APP_TEST_WAIT (not_loading, window, 60000);
  g_assert_null (wick_snapshot_window_get_error (window));
  check_diff_flame (window, total_b, total_a, 0x000000ff /* shrank: blue */);
  app_test_window_close (window);
}

static gboolean
has_page (gpointer data)
{
  return wick_window_get_view (data, "memory-snapshot") != NULL;
}

static gboolean
has_document (gpointer data)
{
  return g_strcmp0 (wick_window_get_state (data), "document") == 0;
}

/* The trace window's Memory Snapshot page: its snapshot read, no window of
 * its own. */
static WickSnapshotWindow *
wait_snapshot_page (WickWindow *main_window, guint n_segments)
{
  APP_TEST_WAIT (has_page, main_window, 10000);
  GtkWidget *page = wick_window_get_view (main_window, "memory-snapshot");
  WickSnapshotWindow *window = wick_snapshot_window_from_page (page);
  g_assert_nonnull (window);
  APP_TEST_WAIT (not_loading, window, 60000);
  g_assert_null (wick_snapshot_window_get_error (window));
  g_assert_false (has_snapshot_window (NULL)); /* no window of its own */
  guint n;
  wick_memory_snapshot_get_segments (wick_snapshot_window_get_snapshot (window), &n);
  g_assert_cmpuint (n, ==, n_segments);
  g_assert_true (gtk_widget_is_ancestor (wick_snapshot_window_get_segment_map (window), page));
  return window;
}

/* A trace with run.memory.pickle beside it (wick.torch's memory_history=True)
 * shows its snapshot as a page of the trace's window; a snapshot opened into
 * a window showing a trace becomes that page (the trace stays); a trace
 * opened after it without one drops the page. */
static void
test_snapshot_beside_trace (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-mh-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "run.jsonl", NULL);
  g_autofree char *snap = g_build_filename (dir, "run.memory.pickle", NULL);
  g_autofree char *src_trace = g_build_filename (g_getenv ("WICK_TEST_DATA") ?: "tests/data",
                                                 "model", "train-contract.jsonl", NULL);
  g_autofree char *src_snap = data_path ("h200-oom.pickle.gz");
  g_autofree char *text = NULL, *bytes = NULL;
  gsize n_text, n_bytes;
  g_assert_true (g_file_get_contents (src_trace, &text, &n_text, NULL));
  g_assert_true (g_file_get_contents (src_snap, &bytes, &n_bytes, NULL));
  g_assert_true (g_file_set_contents (trace, text, (gssize)n_text, NULL));
  g_assert_true (g_file_set_contents (snap, bytes, (gssize)n_bytes, NULL));
  /* wide enough for the view switcher to hold one more page: at 900 px the
   * narrow switcher bar's revealer is allocated 0 x -1 as it opens (a GTK
   * warning, fatal in tests) */
  WickWindow *main_window = app_test_window_new (app, 1400, 900);
  g_autoptr (GFile) file = g_file_new_for_path (trace);
  wick_window_load_file (main_window, file);
  APP_TEST_WAIT (has_document, main_window, 60000);
  wait_snapshot_page (main_window, 10);

  /* a trace without one beside it: the page goes */
  g_autofree char *plain = g_build_filename (dir, "plain.jsonl", NULL);
  g_assert_true (g_file_set_contents (plain, text, (gssize)n_text, NULL));
  g_autoptr (GFile) plain_file = g_file_new_for_path (plain);
  wick_window_load_file (main_window, plain_file);
  APP_TEST_WAIT (has_document, main_window, 60000);
  g_assert_null (wick_window_get_view (main_window, "memory-snapshot"));

  /* a snapshot opened into it: its page, the trace stays, shown */
  g_autofree char *other = data_path ("cs336-medium-128-training.pickle.gz");
  g_autoptr (GFile) other_file = g_file_new_for_path (other);
  wick_window_load_file (main_window, other_file);
  wait_snapshot_page (main_window, 377);
  g_assert_cmpstr (wick_window_get_state (main_window), ==, "document");
  g_assert_cmpstr (wick_window_get_visible_view (main_window), ==, "memory-snapshot");

  /* a page dropped while its snapshot is still read: the read is cancelled
   * or its result dropped, nothing touches the page's widgets after */
  wick_window_load_file (main_window, other_file);
  APP_TEST_WAIT (has_page, main_window, 10000);
  WickSnapshotWindow *reading
    = wick_snapshot_window_from_page (wick_window_get_view (main_window, "memory-snapshot"));
  g_assert_true (wick_snapshot_window_is_loading (reading));
  wick_window_load_file (main_window, plain_file);
  g_assert_null (wick_window_get_view (main_window, "memory-snapshot"));
  APP_TEST_WAIT (has_document, main_window, 60000);
  gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE);
  g_assert_null (wick_window_get_view (main_window, "memory-snapshot"));
  app_test_window_close (main_window);
  g_unlink (trace);
  g_unlink (plain);
  g_unlink (snap);
  g_rmdir (dir);
}

static gboolean
has_match_counts (gpointer window)
{
  return wick_snapshot_window_get_match_counts (window) != NULL;
}

/* A trace with a snapshot beside it whose records carry wick_address
 * (make-snapshot.py pair): the page takes the categories from the records.
 * The live-before-history parameter (no stack: "unknown" by its frames) is
 * a parameter on the chart, in the segment map and in its details; the
 * title says the match counts. With WICK_SCREENSHOT_DIR set the page is
 * saved as snapshot-records.png there. */
static void
test_snapshot_categories_from_records (void)
{
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 for make-snapshot.py");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("wick-records-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "run.jsonl", NULL);
  g_autofree char *snap = g_build_filename (dir, "run.memory.pickle", NULL);
  g_autofree char *script
    = g_build_filename (WICK_SOURCE_DIR, "tests", "model", "make-snapshot.py", NULL);
  const char *argv[] = { "/usr/bin/python3", script, "pair", snap, trace, NULL };
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  WickWindow *main_window = app_test_window_new (app, 1400, 900);
  g_autoptr (GFile) file = g_file_new_for_path (trace);
  wick_window_load_file (main_window, file);
  APP_TEST_WAIT (has_document, main_window, 60000);
  WickSnapshotWindow *window = wait_snapshot_page (main_window, 2);
  wick_window_show_page (main_window, "memory-snapshot");
  APP_TEST_WAIT (has_match_counts, window, 20000);
  const WickSnapshotMatchCounts *c = wick_snapshot_window_get_match_counts (window);
  g_assert_cmpuint (c->matched, ==, 9);
  g_assert_cmpuint (c->unmatched, ==, 2);
  g_assert_cmpuint (c->ambiguous, ==, 1);

  /* at the snapshot: the parameter's 8 MiB are the largest live row */
  WickMemorySnapshot *s = wick_snapshot_window_get_snapshot (window);
  guint n;
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n);
  gint64 last = G_MININT64;
  for (guint i = 0; i < n; i++)
    last = MAX (last, entries[i].time_us);
  wick_snapshot_window_select_time (window, last);
  g_assert_cmpuint (wick_snapshot_window_get_n_live_rows (window), >=, 1);
  wick_snapshot_window_select_row (window, 0);
  const char *details = wick_snapshot_window_get_details (window);
  g_test_message ("%s", details);
  g_assert_nonnull (strstr (details, "The trace's record: storage param"));
  g_assert_nonnull (strstr (details, "· device 0 · parameter\n"));
  app_test_wait_drawn (wick_snapshot_window_get_chart (window), 20000, "the snapshot chart");
  app_test_wait_drawn (wick_snapshot_window_get_segment_map (window), 20000, "the segment map");
  const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
  if (shots != NULL)
    {
      g_autofree char *png = g_build_filename (shots, "snapshot-records.png", NULL);
      app_test_save_png (GTK_WIDGET (main_window), png);
    }

  /* wick.torch's own pair from an H200 (tests/data/snapshot/h200-pair.*):
   * every storage it tracked is found in the allocator's history */
  g_autofree char *real_trace = g_build_filename (dir, "h200.jsonl.gz", NULL);
  g_autofree char *real_snap = g_build_filename (dir, "h200.memory.pickle", NULL);
  {
    g_autofree char *t = NULL, *p = NULL;
    gsize n_t, n_p;
    g_autofree char *src_t = data_path ("h200-pair.jsonl.gz");
    g_autofree char *src_p = data_path ("h200-pair.memory.pickle.gz");
    g_assert_true (g_file_get_contents (src_t, &t, &n_t, NULL));
    g_assert_true (g_file_get_contents (src_p, &p, &n_p, NULL));
    g_assert_true (g_file_set_contents (real_trace, t, (gssize)n_t, NULL));
    g_assert_true (g_file_set_contents (real_snap, p, (gssize)n_p, NULL));
  }
  g_autoptr (GFile) real_file = g_file_new_for_path (real_trace);
  wick_window_load_file (main_window, real_file);
  APP_TEST_WAIT (has_document, main_window, 60000);
  WickSnapshotWindow *real = wait_snapshot_page (main_window, 9);
  wick_window_show_page (main_window, "memory-snapshot");
  APP_TEST_WAIT (has_match_counts, real, 20000);
  const WickSnapshotMatchCounts *rc = wick_snapshot_window_get_match_counts (real);
  g_test_message ("h200 pair: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " matched",
                  rc->matched, rc->allocations);
  g_assert_cmpuint (rc->lifetimes_matched, ==, rc->record_lifetimes);
  g_assert_cmpuint (rc->record_lifetimes, >, 30);
  WickMemorySnapshot *rs = wick_snapshot_window_get_snapshot (real);
  guint64 peak;
  gint64 peak_us;
  g_assert_true (wick_memory_snapshot_get_peak (rs, &peak, &peak_us));
  wick_snapshot_window_select_time (real, peak_us);
  /* the largest live row a record explains */
  for (guint row = 0; row < wick_snapshot_window_get_n_live_rows (real); row++)
    {
      wick_snapshot_window_select_row (real, row);
      if (strstr (wick_snapshot_window_get_details (real), "The trace's record") != NULL)
        break;
    }
  g_test_message ("%s", wick_snapshot_window_get_details (real));
  g_assert_nonnull (strstr (wick_snapshot_window_get_details (real), "The trace's record"));
  app_test_wait_drawn (wick_snapshot_window_get_chart (real), 20000, "the snapshot chart");
  if (shots != NULL)
    {
      g_autofree char *png = g_build_filename (shots, "snapshot-records-h200.png", NULL);
      app_test_save_png (GTK_WIDGET (main_window), png);
    }
  g_unlink (real_trace);
  g_unlink (real_snap);

  /* the same snapshot in a window of its own: categories from its frames */
  WickSnapshotWindow *alone = wick_snapshot_window_new (GTK_APPLICATION (app), snap);
  APP_TEST_WAIT (not_loading, alone, 20000);
  g_assert_null (wick_snapshot_window_get_match_counts (alone));
  wick_snapshot_window_select_time (alone, last);
  wick_snapshot_window_select_row (alone, 0);
  g_assert_null (strstr (wick_snapshot_window_get_details (alone), "The trace's record"));
  g_assert_nonnull (strstr (wick_snapshot_window_get_details (alone), "unknown"));
  gtk_window_destroy (GTK_WINDOW (alone));
  app_test_window_close (main_window);
  g_unlink (trace);
  g_unlink (snap);
  g_rmdir (dir);
}

/* A pickle that would run a command: the error page, nothing run. */
static void
test_snapshot_hostile (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-app-snapshot-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "evil.pickle", NULL);
  g_autofree char *marker = g_build_filename (dir, "MARKER", NULL);
  /* protocol 4: STACK_GLOBAL os system, the command, TUPLE1, REDUCE */
  g_autofree char *command = g_strdup_printf ("touch %s", marker);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  g_byte_array_append (bytes, (const guint8 *)"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c", 16);
  guint8 len = (guint8)strlen (command);
  g_byte_array_append (bytes, &len, 1);
  g_byte_array_append (bytes, (const guint8 *)command, len);
  g_byte_array_append (bytes, (const guint8 *)"\x85R.", 3);
  g_assert_true (g_file_set_contents (path, (const char *)bytes->data, bytes->len, NULL));

  WickSnapshotWindow *window = wick_snapshot_window_new (GTK_APPLICATION (app), path);
  gtk_window_present (GTK_WINDOW (window));
  APP_TEST_WAIT (not_loading, window, 20000);
  const char *error = wick_snapshot_window_get_error (window);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error, "byte 14: opcode STACK_GLOBAL (0x93)"));
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  app_test_window_close (window);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  app_test_ui_disable_animations ();
  g_test_add_func ("/snapshot-window/opens", test_snapshot_opens);
  g_test_add_func ("/snapshot-window/hostile", test_snapshot_hostile);
  g_test_add_func ("/snapshot-window/range", test_snapshot_range);
  g_test_add_func ("/snapshot-window/compare", test_snapshot_compare);
  g_test_add_func ("/snapshot-window/beside-trace", test_snapshot_beside_trace);
  g_test_add_func ("/snapshot-window/categories-from-records",
                   test_snapshot_categories_from_records);
  return app_test_ui_run (app);
}
