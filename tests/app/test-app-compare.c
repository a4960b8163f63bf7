/* test-app-compare.c — the compare window under Xvfb: two synthetic runs, one
 * op made slower; the table flags it, both timelines stay aligned at their
 * measured regions through zoom and pan, a row highlights its spans on both
 * sides; an identity mismatch holds the content back until "Compare Anyway";
 * two Chrome traces with different names are compared, their differences noted.
 * With WICK_SCREENSHOT_DIR set it also writes compare.png there (docs/images).
 * Suite: app. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>

#include "app-test-ui.h"
#include "compare-workload.h"
#include "ui/wick-application.h"
#include "ui/wick-compare-window.h"
#include "ui/wick-compare-window-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-timeline-view-private.h"

static WickApplication *app;
static char *dir;

static gboolean
is_ready (gpointer window)
{
  return wick_compare_window_is_ready (window);
}

/* Both timelines mapped, sized and drawn (the comparison is shown). */
static void
wait_timelines_drawn (WickCompareWindow *window)
{
  for (guint side = 0; side < 2; side++)
    app_test_wait_drawn (wick_compare_window_get_timeline (window, side), 10000,
                         side == 0 ? "timeline A to be drawn" : "timeline B to be drawn");
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
  APP_TEST_WAIT (is_ready, window, 30000);
  return window;
}

/* A child of the window's template (data/ui/wick-compare-window.ui). */
static GtkWidget *
part (WickCompareWindow *window, const char *name)
{
  GObject *child
    = gtk_widget_get_template_child (GTK_WIDGET (window), WICK_TYPE_COMPARE_WINDOW, name);
  g_assert_nonnull (child);
  return GTK_WIDGET (child);
}

static guint64
measured_start (const WickComparison *c, guint side)
{
  GPtrArray *runs = side ? c->runs_b : c->runs_a;
  return ((WickCompareRun *)runs->pdata[0])->measured_start_ns;
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
  wait_timelines_drawn (window);
  assert_aligned (window);

  /* one zoom, one pan: the other side follows, still aligned */
  wick_timeline_view_zoom (WICK_TIMELINE_VIEW (timeline_a), 0.25,
                           gtk_widget_get_width (timeline_a) / 2.0);
  assert_aligned (window);
  wick_timeline_view_pan (WICK_TIMELINE_VIEW (wick_compare_window_get_timeline (window, 1)), 120);
  assert_aligned (window);

  g_assert_true (wick_compare_window_select_name (window, "relu"));
  g_assert_false (wick_compare_window_select_name (window, "no such span"));
  app_test_screenshot (GTK_WIDGET (window), "compare.png");
  app_test_window_close (window);
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
  /* Held back: the banner names the difference and offers Compare Anyway
   * over the status page. */
  g_assert_true (gtk_widget_get_visible (part (window, "banner")));
  g_assert_true (g_str_has_prefix (gtk_label_get_text (GTK_LABEL (part (window, "banner_label"))),
                                   "Not the same configuration: "));
  g_assert_true (gtk_widget_get_visible (part (window, "banner_button")));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (GTK_STACK (part (window, "stack"))), ==,
                   "status");
  g_assert_cmpstr (adw_status_page_get_title (ADW_STATUS_PAGE (part (window, "status"))), ==,
                   "Not the Same Configuration");
  /* The banner's button is Compare Anyway. */
  g_signal_emit_by_name (part (window, "banner_button"), "clicked");
  g_assert_false (wick_compare_window_is_refused (window));
  g_assert_true (gtk_widget_get_visible (part (window, "banner")));
  g_assert_false (gtk_widget_get_visible (part (window, "banner_button")));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (GTK_STACK (part (window, "stack"))), ==,
                   "result");
  /* The content is shown now: both timelines drawn, aligned. */
  wait_timelines_drawn (window);
  assert_aligned (window);
  app_test_window_close (window);
  g_unlink (a);
  g_unlink (b);
}

static char *
chrome_file (const char *name)
{
  const char *data = g_getenv ("WICK_TEST_DATA");
  return g_build_filename (data ? data : "tests/data", "chrome", name, NULL);
}

/* Two Chrome/PyTorch traces (HTA's: rank 0 of an A100 job, rank 34 of a CPU
 * job) have different file names and no run metadata: compared, not refused;
 * what they carry that differs (rank, devices, distributedInfo) is in the
 * banner as a note; the root Wick names after each file is in no table. */
static void
test_chrome_not_refused (void)
{
  g_autofree char *a = chrome_file ("hta-simple-add.json.gz");
  g_autofree char *b = chrome_file ("hta-cpu-only-rank-34.pt.trace.json.gz");
  WickCompareWindow *window = open_pair (a, b);
  const WickComparison *c = wick_compare_window_get_comparison (window);
  const char *banner;

  g_assert_nonnull (c);
  g_assert_true (c->identity_match);
  g_assert_false (wick_compare_window_is_refused (window));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (GTK_STACK (part (window, "stack"))), ==,
                   "result");
  g_assert_true (gtk_widget_get_visible (part (window, "banner")));
  g_assert_false (gtk_widget_get_visible (part (window, "banner_button")));
  banner = gtk_label_get_text (GTK_LABEL (part (window, "banner_label")));
  g_assert_true (g_str_has_prefix (banner, "Differences noted (not a configuration mismatch): "));
  g_assert_nonnull (strstr (banner, "distributedInfo.rank: 0 vs 34"));
  g_assert_nonnull (strstr (banner, "deviceProperties: 8 × NVIDIA A100-PG509-200"));
  g_assert_null (strstr (banner, "entrypoint"));
  for (guint i = 0; i < c->entries->len; i++)
    {
      const WickCompareEntry *e = &g_array_index (c->entries, WickCompareEntry, i);
      g_assert_null (strstr (e->name, ".json"));
    }
  g_assert_cmpuint (c->entries->len, >, 10);
  wait_timelines_drawn (window);
  app_test_screenshot (GTK_WIDGET (window), "compare-chrome.png");
  app_test_window_close (window);
}

static void
test_unreadable (void)
{
  g_autofree char *a = g_build_filename (dir, "missing.jsonl", NULL);
  WickCompareWindow *window = open_pair (a, a);

  g_assert_null (wick_compare_window_get_comparison (window));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (GTK_STACK (part (window, "stack"))), ==,
                   "status");
  g_assert_cmpstr (adw_status_page_get_title (ADW_STATUS_PAGE (part (window, "status"))), ==,
                   "Cannot Compare");
  g_assert_false (gtk_widget_get_visible (part (window, "banner")));
  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  int status;

  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  app_test_ui_disable_animations ();
  dir = g_dir_make_tmp ("wick-app-compare-XXXXXX", NULL);
  g_test_add_func ("/compare-window/slower-op", test_slower_op);
  g_test_add_func ("/compare-window/mismatch-refused", test_mismatch_refused);
  g_test_add_func ("/compare-window/unreadable", test_unreadable);
  g_test_add_func ("/compare-window/chrome-not-refused", test_chrome_not_refused);
  status = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  g_object_unref (app);
  return status;
}
