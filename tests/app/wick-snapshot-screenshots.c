/* wick-snapshot-screenshots.c — the snapshot window on real CUDA memory
 * snapshots, as PNGs for docs/images:
 *
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build/tests/app/wick-snapshot-screenshots docs/images
 *
 * snapshot.png: the public CS336 GPT-2-medium training step
 * (tests/data/snapshot) at its peak, the third largest live allocation (an AdamW state tensor)
 * selected (its life on the chart, its block outlined in the segment map, its
 * stack on the right); snapshot-oom.png: the H200 OOM snapshot with its OOM
 * marked; snapshot-flame.png: the training step's flame graph of live bytes
 * by stack at the end of its history (Python frames), a frame selected;
 * snapshot-compare.png: wick --compare of the inference and training
 * snapshots, the largest change selected; snapshot-compare-flame.png: the same pair
 * as a differential flame graph, the frame that grew most (3 deep or more) selected;
 * snapshot-in-trace.png: a trace window with the training snapshot opened into it, its
 * Memory Snapshot page. Not a test: it asserts nothing beyond the files being drawn.
 */
#include "config.h"

#include <adwaita.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-snapshot-window.h"
#include "ui/wick-snapshot-window-private.h"
#include "ui/wick-window-private.h"
#include "ui/wick-window.h"

static gboolean
not_loading (gpointer window)
{
  return !wick_snapshot_window_is_loading (window);
}

static gboolean
has_document (gpointer window)
{
  return g_strcmp0 (wick_window_get_state (window), "document") == 0;
}

static gboolean
has_page (gpointer window)
{
  return wick_window_get_view (window, "memory-snapshot") != NULL;
}

static void
shoot (WickApplication *app, const char *dir, const char *file, const char *name, guint row,
       const char *page, guint flame_node)
{
  g_autofree char *path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "snapshot", file, NULL);
  WickSnapshotWindow *window = wick_snapshot_window_new (GTK_APPLICATION (app), path);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  gtk_window_present (GTK_WINDOW (window));
  APP_TEST_WAIT (not_loading, window, 60000);
  if (wick_snapshot_window_get_error (window) != NULL)
    g_error ("%s: %s", path, wick_snapshot_window_get_error (window));
  app_test_wait_drawn (wick_snapshot_window_get_chart (window), 20000, "the chart");
  if (row != G_MAXUINT)
    wick_snapshot_window_select_row (window, row);
  if (page != NULL)
    {
      /* at the end of the history, where AdamW's state has been made */
      guint n_entries;
      const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (
        wick_snapshot_window_get_snapshot (window), &n_entries);
      if (n_entries > 0)
        wick_snapshot_window_select_time (window, entries[n_entries - 1].time_us);
      wick_snapshot_window_show_page (window, page);
      app_test_wait_drawn (wick_snapshot_window_get_flame_graph (window), 20000, "the flame graph");
    }
  if (flame_node != G_MAXUINT)
    wick_snapshot_window_select_flame_node (window, flame_node);
  g_autofree char *out = g_build_filename (dir, name, NULL);
  app_test_save_png (GTK_WIDGET (window), out);
  g_print ("wrote %s\n", out);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();
  shoot (app, dir, "cs336-medium-128-training.pickle.gz", "snapshot.png", 2, NULL, G_MAXUINT);
  shoot (app, dir, "h200-oom.pickle.gz", "snapshot-oom.png", 0, NULL, G_MAXUINT);
  shoot (app, dir, "cs336-medium-128-training.pickle.gz", "snapshot-flame.png", G_MAXUINT, "flame",
         3);
  /* snapshot-compare.png: inference against training, the largest change selected */
  g_autofree char *pa
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "snapshot", "cs336-medium-128-inference.pickle.zst", NULL);
  g_autofree char *pb
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "snapshot", "cs336-medium-128-training.pickle.gz", NULL);
  WickSnapshotWindow *cmp = wick_snapshot_window_new_compare (GTK_APPLICATION (app), pa, pb);
  gtk_window_set_default_size (GTK_WINDOW (cmp), 1400, 700);
  gtk_window_present (GTK_WINDOW (cmp));
  APP_TEST_WAIT (not_loading, cmp, 60000);
  wick_snapshot_window_select_diff_row (cmp, 0);
  app_test_wait_drawn (GTK_WIDGET (cmp), 20000, "the compare page");
  g_autofree char *out = g_build_filename (dir, "snapshot-compare.png", NULL);
  app_test_save_png (GTK_WIDGET (cmp), out);
  g_print ("wrote %s\n", out);
  /* snapshot-compare-flame.png: the same pair as a differential flame graph,
   * the widest frame that grew selected */
  wick_snapshot_window_show_diff_page (cmp, "flame");
  app_test_wait_drawn (wick_snapshot_window_get_diff_flame_graph (cmp), 20000,
                       "the differential flame graph");
  guint best = 0;
  double best_grew = 0;
  for (guint i = 1; i < wick_snapshot_window_get_n_diff_flame_nodes (cmp); i++)
    {
      guint depth;
      double x0, w;
      guint64 ba, bb;
      wick_snapshot_window_get_diff_flame_node (cmp, i, &depth, &x0, &w, &ba, &bb);
      if (depth >= 3 && bb > ba && (double)(bb - ba) > best_grew)
        {
          best = i;
          best_grew = (double)(bb - ba);
        }
    }
  wick_snapshot_window_select_diff_flame_node (cmp, best);
  app_test_wait_drawn (wick_snapshot_window_get_diff_flame_graph (cmp), 20000,
                       "the differential flame graph");
  g_autofree char *out_flame = g_build_filename (dir, "snapshot-compare-flame.png", NULL);
  app_test_save_png (GTK_WIDGET (cmp), out_flame);
  g_print ("wrote %s\n", out_flame);
  gtk_window_destroy (GTK_WINDOW (cmp));

  /* snapshot-in-trace.png: a trace window (the model test's training run)
   * with the CS336 snapshot opened into it: its Memory Snapshot page */
  WickWindow *main_window = app_test_window_new (app, 1400, 900);
  g_autofree char *trace
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "model", "train-contract.jsonl", NULL);
  g_autoptr (GFile) trace_file = g_file_new_for_path (trace);
  wick_window_load_file (main_window, trace_file);
  APP_TEST_WAIT (has_document, main_window, 60000);
  g_autoptr (GFile) snap_file = g_file_new_for_path (pb);
  wick_window_load_file (main_window, snap_file);
  APP_TEST_WAIT (has_page, main_window, 10000);
  WickSnapshotWindow *page = wick_snapshot_window_from_page (
    wick_window_get_view (main_window, "memory-snapshot"));
  APP_TEST_WAIT (not_loading, page, 60000);
  app_test_wait_drawn (wick_snapshot_window_get_chart (page), 20000, "the page's chart");
  wick_snapshot_window_select_row (page, 2);
  g_autofree char *out_page = g_build_filename (dir, "snapshot-in-trace.png", NULL);
  app_test_save_png (GTK_WIDGET (main_window), out_page);
  g_print ("wrote %s\n", out_page);
  gtk_window_destroy (GTK_WINDOW (main_window));
  g_object_unref (app);
  return 0;
}
