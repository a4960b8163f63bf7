/* bench-segment-map.c — the snapshot window's segment map redrawn at 100 k
 * blocks (within 16 ms). Makes two synthetic snapshots (Python's
 * pickler, protocol 4; no history): 2 000 segments of 50 blocks and 100
 * segments of 1 000 blocks (a fragmented map), opens each in the window and
 * times, on an image surface, the redraw of what a scrolled window shows (a
 * 720 x 480 viewport at the top, the middle and the end) and of the whole
 * map at once, 20 runs each, min / median / max in ms. Prints TAP with a
 * SKIP when there is no display or no Python; fails when the median
 * viewport redraw is over 16 ms.
 *
 *   xvfb-run -a _build/tests/app/bench-segment-map
 */
#include "config.h"

#include <adwaita.h>
#include <stdio.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-snapshot-window.h"
#include "ui/wick-snapshot-window-private.h"

#define RUNS 20
#define ROW 18 /* SEGMENT_ROW_HEIGHT */

static const char *script
  = "import pickle, sys\n"
    "n_seg, per = int(sys.argv[2]), int(sys.argv[3])\n"
    "segs = []\n"
    "states = ['active_allocated', 'inactive', 'active_pending_free']\n"
    "for s in range(n_seg):\n"
    "    base = 0x7f0000000000 + s * (1 << 26)\n"
    "    blocks = [{'address': base + b * 4096, 'size': 4096, 'requested_size': 4000,\n"
    "               'state': states[(s + b) % 3], 'frames': []} for b in range(per)]\n"
    "    segs.append({'device': 0, 'address': base, 'total_size': per * 4096,\n"
    "                 'allocated_size': 0, 'active_size': 0, 'requested_size': 0,\n"
    "                 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),\n"
    "                 'is_expandable': False, 'frames': [], 'blocks': blocks})\n"
    "pickle.dump({'segments': segs, 'device_traces': [[]]}, open(sys.argv[1], 'wb'), protocol=4)\n";

static gboolean
not_loading (gpointer window)
{
  return !wick_snapshot_window_is_loading (window);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
time_draw (WickSnapshotWindow *window, int width, int y0, int height, double *min, double *max)
{
  double ms[RUNS];
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  for (int r = 0; r < RUNS; r++)
    {
      cairo_t *cr = cairo_create (surface);
      cairo_translate (cr, 0, -y0);
      cairo_rectangle (cr, 0, y0, width, height);
      cairo_clip (cr);
      gint64 t0 = g_get_monotonic_time ();
      wick_snapshot_window_render_segment_map (window, cr, width, y0 + height);
      cairo_surface_flush (surface);
      ms[r] = (g_get_monotonic_time () - t0) / 1000.0;
      cairo_destroy (cr);
    }
  cairo_surface_destroy (surface);
  qsort (ms, RUNS, sizeof ms[0], cmp_double);
  *min = ms[0];
  *max = ms[RUNS - 1];
  return ms[RUNS / 2];
}

int
main (int argc, char **argv)
{
  if (!gtk_init_check ())
    {
      printf ("1..0 # SKIP no display\n");
      return 0;
    }
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      printf ("1..0 # SKIP no /usr/bin/python3\n");
      return 0;
    }
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();
  g_autofree char *dir = g_dir_make_tmp ("wick-segmap-XXXXXX", NULL);
  g_autofree char *py = g_build_filename (dir, "make.py", NULL);
  g_file_set_contents (py, script, -1, NULL);
  const int shapes[][2] = { { 2000, 50 }, { 100, 1000 } };
  gboolean ok = TRUE;
  printf ("1..%u\n", (guint)G_N_ELEMENTS (shapes));
  for (guint k = 0; k < G_N_ELEMENTS (shapes); k++)
    {
      g_autofree char *path = g_strdup_printf ("%s/segmap-%d.pickle", dir, k);
      g_autofree char *n_seg = g_strdup_printf ("%d", shapes[k][0]);
      g_autofree char *per = g_strdup_printf ("%d", shapes[k][1]);
      const char *cmd[] = { "/usr/bin/python3", py, path, n_seg, per, NULL };
      int status = 0;
      g_assert_true (g_spawn_sync (NULL, (char **)cmd, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                                   NULL, &status, NULL));
      g_assert_cmpint (status, ==, 0);
      WickSnapshotWindow *window = wick_snapshot_window_new (GTK_APPLICATION (app), path);
      gtk_window_present (GTK_WINDOW (window));
      APP_TEST_WAIT (not_loading, window, 120000);
      g_assert_null (wick_snapshot_window_get_error (window));
      guint n_blocks;
      wick_memory_snapshot_get_blocks (wick_snapshot_window_get_snapshot (window), &n_blocks);
      int full = shapes[k][0] * ROW;
      double worst = 0;
      const int tops[] = { 0, MAX (0, full / 2 - 240), MAX (0, full - 480) };
      for (guint t = 0; t < G_N_ELEMENTS (tops); t++)
        {
          double mn, mx, med = time_draw (window, 720, tops[t], MIN (480, full), &mn, &mx);
          printf ("# %u blocks in %d segments, viewport at y=%d: %.2f ms median (%.2f-%.2f)\n",
                  n_blocks, shapes[k][0], tops[t], med, mn, mx);
          worst = MAX (worst, med);
        }
      double mn, mx, med = time_draw (window, 720, 0, MIN (full, 32000), &mn, &mx);
      printf ("# %u blocks in %d segments, the whole map (%d px): %.2f ms median (%.2f-%.2f)\n",
              n_blocks, shapes[k][0], MIN (full, 32000), med, mn, mx);
      gboolean pass = worst <= 16.0;
      ok &= pass;
      printf ("%s %u - %u blocks: viewport redraw %.2f ms (target 16 ms)\n", pass ? "ok" : "not ok",
              k + 1, n_blocks, worst);
      gtk_window_destroy (GTK_WINDOW (window));
    }
  g_object_unref (app);
  return ok ? 0 : 1;
}
