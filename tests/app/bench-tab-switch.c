/* bench-tab-switch.c — how long a switch of the window's view takes, from
 * the switch to the first frame painted with the new page (the
 * target: ≤ 100 ms p95 on a 10 MB trace):
 *
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build/tests/app/bench-tab-switch TRACE [ROUNDS]
 *   WICK_DEMO=_build/backend/demo/wick-demo xvfb-run ... bench-tab-switch --live [ROUNDS]
 *
 * --live attaches the window to wick-demo recording at full speed (--rate 0)
 * instead of opening a trace: every switch then finds a document that grew
 * since the page was last shown. WICK_BENCH_LIVE_RECORDS=N first follows the
 * demo until the document holds N records (at most 10 minutes), so that the
 * switches run on a document of a given size; the run's trace is saved at the
 * end and its size printed (the size the same run's file has).
 * WICK_BENCH_SHOTS=DIR saves the window, after the switches, on the Kernels
 * page (a trace with GPU work) and, live, on the Weights page, as PNGs.
 *
 * Each round visits every page the window has (timeline, memory,
 * coverage, health, costs, the GPU overview, kernels and operators, and a
 * live window's weights and stages), then back to the timeline; the first round is each
 * page's first show, reported apart. Prints per page min / median / p95 /
 * max of the later rounds and, as the same run's baseline, a redraw of the
 * same page without a switch (queue_draw to the frame's end) right after each
 * switch: what any frame of that page costs. Not a test: it asserts nothing
 * but the pages.
 *
 * GTK draws with its cairo renderer unless GSK_RENDERER says otherwise: under
 * Xvfb the GL renderer is Mesa's software rasterizer (llvmpipe), whose frame
 * of a 1400x860 window costs 200-400 ms on the dev VM whether or not the page
 * changed (GSK_RENDERER=gl to see it).
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-window-internal.h"
#include "ui/wick-window-private.h"
#include "client/wick-live-client.h"
#include "ui/session/wick-live-session.h"
#include "ui/session/wick-live-session-private.h"
#include "model/wick-document-private.h"

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* wick-demo (WICK_DEMO) at full speed, and its control socket. */
static char *
start_demo (GPid *pid)
{
  const char *demo = g_getenv ("WICK_DEMO");
  if (demo == NULL)
    g_error ("--live needs WICK_DEMO (the wick-demo to attach to)");
  const char *argv[] = { demo, "--quiet", "--rate", "0", NULL };
  g_autoptr (GError) error = NULL;
  if (!g_spawn_async (NULL, (char **)argv, NULL,
                      G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, die_with_parent,
                      NULL, pid, &error))
    g_error ("%s: %s", demo, error->message);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline)
    {
      char *path = wick_live_find_socket (*pid, NULL);
      if (path != NULL)
        return path;
      if (waitpid (*pid, NULL, WNOHANG) == *pid)
        g_error ("wick-demo exited before its control socket answered");
      g_usleep (20000);
    }
  g_error ("wick-demo's control socket did not answer within 30 s");
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
percentile (double *v, guint n, int pct)
{
  qsort (v, n, sizeof (double), compare_doubles);
  return v[MAX ((int)((pct * n + 99) / 100) - 1, 0)];
}

/* Times of one variant: per page, the later switches and the redraws. */
typedef struct
{
  const char *name;
  GArray *ms[10], *redraw[10];
} Variant;

static void
variant_report (Variant *v, const char *const *pages, guint n)
{
  printf ("%s:\n", v->name);
  printf ("  %-14s %8s %8s %8s %8s | %15s %8s\n", "page", "min", "median", "p95", "max",
          "redraw median", "p95");
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) all_redraw = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint p = 0; p < n; p++)
    {
      double *row = (double *)v->ms[p]->data, *same = (double *)v->redraw[p]->data;
      guint k = v->ms[p]->len;
      g_array_append_vals (all, row, k);
      g_array_append_vals (all_redraw, same, k);
      double p95 = percentile (row, k, 95), r95 = percentile (same, k, 95);
      printf ("  %-14s %8.1f %8.1f %8.1f %8.1f | %15.1f %8.1f\n", pages[p], row[0], row[k / 2],
              p95, row[k - 1], same[k / 2], r95);
    }
  double *a = (double *)all->data, *b = (double *)all_redraw->data;
  double p95 = percentile (a, all->len, 95), r95 = percentile (b, all->len, 95);
  printf ("  all switches: median %.1f ms, p95 %.1f ms, max %.1f ms (%u); the same pages redrawn "
          "without a switch: median %.1f ms, p95 %.1f ms\n",
          a[all->len / 2], p95, a[all->len - 1], all->len, b[all->len / 2], r95);
}

static void
switch_to (WickWindow *w, const char *page, double *ms, double *redraw)
{
  GtkWidget *v = wick_window_get_view (w, page);
  gint64 t0 = g_get_monotonic_time ();
  wick_window_show_page (w, page);
  app_test_wait_drawn (v, 60000, page);
  *ms = (g_get_monotonic_time () - t0) / 1000.0;
  gint64 t1 = g_get_monotonic_time ();
  app_test_wait_drawn (v, 60000, page);
  *redraw = (g_get_monotonic_time () - t1) / 1000.0;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: bench-tab-switch TRACE|--live [ROUNDS]\n");
      return 2;
    }
  int rounds = argc > 2 ? MAX (atoi (argv[2]), 2) : 21;
  setvbuf (stdout, NULL, _IOLBF, 0);
  gboolean live = g_strcmp0 (argv[1], "--live") == 0;
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_autofree char *runtime_dir = NULL;
  if (live)
    {
      runtime_dir = g_dir_make_tmp ("wick-bench-tabs-XXXXXX", NULL);
      g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
    }
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();
  WickWindow *w;
  GPid demo = 0;
  WickLiveSession *session = NULL;
  if (live)
    {
      g_autofree char *socket = start_demo (&demo);
      w = app_test_window_new (app, 1400, 860);
      g_autoptr (GError) error = NULL;
      session = wick_live_session_attach (w, socket, &error);
      if (session == NULL)
        g_error ("attaching: %s", error->message);
      /* the first records in and every page the demo's records make */
      gint64 t0 = g_get_monotonic_time ();
      gint64 settle = t0 + 2 * G_USEC_PER_SEC;
      while (g_get_monotonic_time () < settle)
        g_main_context_iteration (NULL, FALSE);
      const char *wanted = g_getenv ("WICK_BENCH_LIVE_RECORDS");
      guint64 n_wanted = wanted ? g_ascii_strtoull (wanted, NULL, 10) : 0;
      gint64 deadline = t0 + 600 * G_USEC_PER_SEC;
      while (wick_document_get_n_records (wick_window_get_document (w)) < n_wanted
             && g_get_monotonic_time () < deadline)
        g_main_context_iteration (NULL, TRUE);
      printf ("followed the demo %.1f s: %" G_GUINT64_FORMAT " records\n",
              (g_get_monotonic_time () - t0) / 1e6,
              wick_document_get_n_records (wick_window_get_document (w)));
    }
  else
    w = app_test_window_open (app, argv[1], 1400, 860);
  static const char *all[] = { "timeline",     "memory",  "coverage",  "health",  "costs",
                               "gpu-overview", "kernels", "operators", "weights", "stages" };
  const char *pages[G_N_ELEMENTS (all)];
  guint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    {
      GtkWidget *v = wick_window_get_view (w, all[i]);
      if (v != NULL && gtk_widget_get_visible (v))
        pages[n++] = all[i];
    }
  app_test_wait_drawn (wick_window_get_view (w, "timeline"), 60000, "the timeline");

  guint64 records_before = live ? wick_document_get_n_records (wick_window_get_document (w)) : 0;
  printf ("tab switches on %s, renderer %s, window 1400x860, %d rounds\n",
          live ? "a window attached to wick-demo --rate 0" : argv[1], g_getenv ("GSK_RENDERER"),
          rounds);
  printf ("first show (the first round):\n");
  double first_ms, first_redraw;
  for (guint p = 0; p < n; p++)
    {
      guint page = (p + 1) % n; /* from the one before it: timeline last */
      switch_to (w, pages[page], &first_ms, &first_redraw);
      printf ("  %-14s %8.1f ms (redraw %.1f)\n", pages[page], first_ms, first_redraw);
    }
  Variant variant = { "later switches" };
  for (guint p = 0; p < n; p++)
    {
      variant.ms[p] = g_array_new (FALSE, FALSE, sizeof (double));
      variant.redraw[p] = g_array_new (FALSE, FALSE, sizeof (double));
    }
  for (int r = 1; r < rounds; r++)
    for (guint p = 0; p < n; p++)
      {
        guint page = (p + 1) % n;
        double ms, redraw;
        switch_to (w, pages[page], &ms, &redraw);
        g_array_append_val (variant.ms[page], ms);
        g_array_append_val (variant.redraw[page], redraw);
      }
  variant_report (&variant, pages, n);
  for (guint p = 0; p < n; p++)
    {
      g_array_unref (variant.ms[p]);
      g_array_unref (variant.redraw[p]);
    }
  const char *shots = g_getenv ("WICK_BENCH_SHOTS");
  for (guint p = 0; shots != NULL && p < n; p++)
    if (g_strcmp0 (pages[p], "kernels") == 0 || g_strcmp0 (pages[p], "weights") == 0)
      {
        double ms, redraw;
        switch_to (w, pages[p], &ms, &redraw);
        g_autofree char *name = g_strdup_printf ("%s-%s.png", live ? "live" : "static", pages[p]);
        g_autofree char *path = g_build_filename (shots, name, NULL);
        app_test_save_png (GTK_WIDGET (w), path);
        printf ("wrote %s\n", path);
      }
  if (live)
    {
      printf ("live: %" G_GUINT64_FORMAT " records committed during the switches\n",
              wick_document_get_n_records (wick_window_get_document (w)) - records_before);
      g_autofree char *saved = g_build_filename (runtime_dir, "run.jsonl", NULL);
      g_autoptr (GError) error = NULL;
      GStatBuf st;
      if (wick_live_session_save (session, saved, &error) && g_stat (saved, &st) == 0)
        printf ("live: the run's trace is %.1f MB (%" G_GUINT64_FORMAT " records)\n",
                st.st_size / 1e6, wick_document_get_n_records (wick_window_get_document (w)));
      else
        printf ("live: the run could not be saved: %s\n", error ? error->message : "stat");
      g_unlink (saved);
    }
  app_test_window_close (w);
  (void)session; /* the window's: closed with it */
  if (demo != 0)
    {
      kill (demo, SIGKILL);
      waitpid (demo, NULL, 0);
    }
  g_object_unref (app);
  if (runtime_dir != NULL)
    g_rmdir (runtime_dir);
  return 0;
}
