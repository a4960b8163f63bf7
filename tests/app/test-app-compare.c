/* test-app-compare.c — the compare window under Xvfb: two synthetic runs, one
 * op made slower; the table flags it, both timelines stay aligned at their
 * measured regions through zoom and pan, a row highlights its spans on both
 * sides; an identity mismatch holds the content back until "Compare Anyway".
 * With WICK_SCREENSHOT_DIR set it also writes compare.png there (docs/images).
 * Suite: app. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>

#include "compare-workload.h"
#include "ui/wick-application.h"
#include "ui/wick-compare-window.h"
#include "ui/wick-timeline-view.h"

static WickApplication *app;
static char *dir;

static void
iterate_for (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

static void
wait_ready (WickCompareWindow *window)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (!wick_compare_window_is_ready (window))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("the compare window was not ready after 30 s");
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  /* mapped and sized */
  while (gtk_widget_get_width (wick_compare_window_get_timeline (window, 0)) < 200
         && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

static char *
write_run (const Workload *w, const char *name)
{
  g_autofree char *text = make_run_text (w);
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static WickCompareWindow *
open_pair (const char *a, const char *b)
{
  g_autoptr (GFile) fa = g_file_new_for_path (a);
  g_autoptr (GFile) fb = g_file_new_for_path (b);
  WickCompareWindow *window = wick_compare_window_new (GTK_APPLICATION (app), fa, fb);

  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  wait_ready (window);
  return window;
}

static guint64
measured_start (const WickComparison *c, guint side)
{
  GPtrArray *runs = side ? c->runs_b : c->runs_a;
  return ((WickCompareRun *) runs->pdata[0])->measured_start_ns;
}

static void
assert_aligned (WickCompareWindow *window)
{
  const WickComparison *c = wick_compare_window_get_comparison (window);
  guint64 ra[2], rb[2];

  wick_compare_window_get_visible (window, ra, rb);
  g_assert_cmpuint (ra[0] - measured_start (c, 0), ==, rb[0] - measured_start (c, 1));
  g_assert_cmpuint (ra[1] - ra[0], ==, rb[1] - rb[0]);
}

static void
save_png (GtkWidget *window, const char *name)
{
  const char *out = g_getenv ("WICK_SCREENSHOT_DIR");
  int width, height;
  GtkSnapshot *snapshot;
  GskRenderNode *node;
  g_autoptr (GdkPaintable) paintable = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  g_autofree char *path = NULL;

  if (out == NULL)
    return;
  iterate_for (300);
  width = gtk_widget_get_width (window);
  height = gtk_widget_get_height (window);
  paintable = gtk_widget_paintable_new (window);
  snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_render_node_unref (node);
  path = g_build_filename (out, name, NULL);
  gdk_texture_save_to_png (texture, path);
  g_test_message ("wrote %s", path);
}

static void
test_slower_op (void)
{
  Workload wa = { 51, 20, NULL, 1, NULL, FALSE, 0.1 };
  Workload wb = { 52, 20, "relu", 1.3, NULL, FALSE, 0.1 };
  g_autofree char *a = write_run (&wa, "a.jsonl");
  g_autofree char *b = write_run (&wb, "b.jsonl");
  WickCompareWindow *window = open_pair (a, b);
  const WickComparison *c = wick_compare_window_get_comparison (window);
  GtkWidget *timeline_a = wick_compare_window_get_timeline (window, 0);
  gboolean relu = FALSE;

  g_assert_nonnull (c);
  g_assert_false (wick_compare_window_is_refused (window));
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      relu |= e->significant && strcmp (e->name, "relu") == 0;
    }
  g_assert_true (relu);
  assert_aligned (window);

  /* one zoom, one pan: the other side follows, still aligned */
  wick_timeline_view_zoom (WICK_TIMELINE_VIEW (timeline_a), 0.25,
                           gtk_widget_get_width (timeline_a) / 2.0);
  iterate_for (20);
  assert_aligned (window);
  wick_timeline_view_pan (WICK_TIMELINE_VIEW (wick_compare_window_get_timeline (window, 1)), 120);
  iterate_for (20);
  assert_aligned (window);

  g_assert_true (wick_compare_window_select_name (window, "relu"));
  g_assert_false (wick_compare_window_select_name (window, "no such span"));
  save_png (GTK_WIDGET (window), "compare.png");
  gtk_window_destroy (GTK_WINDOW (window));
  g_unlink (a);
  g_unlink (b);
}

static void
test_mismatch_refused (void)
{
  Workload wa = { 61, 8, NULL, 1, "bf16", FALSE, 0.1 };
  Workload wb = { 62, 8, NULL, 1, "f32", FALSE, 0.1 };
  g_autofree char *a = write_run (&wa, "a16.jsonl");
  g_autofree char *b = write_run (&wb, "b32.jsonl");
  WickCompareWindow *window = open_pair (a, b);
  const WickComparison *c = wick_compare_window_get_comparison (window);

  g_assert_nonnull (c);
  g_assert_false (c->identity_match);
  g_assert_true (wick_compare_window_is_refused (window));
  wick_compare_window_compare_anyway (window);
  g_assert_false (wick_compare_window_is_refused (window));
  iterate_for (50);
  assert_aligned (window);
  gtk_window_destroy (GTK_WINDOW (window));
  g_unlink (a);
  g_unlink (b);
}

static void
test_unreadable (void)
{
  g_autofree char *a = g_build_filename (dir, "missing.jsonl", NULL);
  WickCompareWindow *window = open_pair (a, a);

  g_assert_null (wick_compare_window_get_comparison (window));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (!gtk_init_check ())
    {
      g_printerr ("test-app-compare: no display; the window tests run under Xvfb\n");
      return 77;
    }
  adw_init ();
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  dir = g_dir_make_tmp ("wick-app-compare-XXXXXX", NULL);
  g_test_add_func ("/compare-window/slower-op", test_slower_op);
  g_test_add_func ("/compare-window/mismatch-refused", test_mismatch_refused);
  g_test_add_func ("/compare-window/unreadable", test_unreadable);
  status = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  g_object_unref (app);
  return status;
}
