/* bench-tab-switch.c — how long a switch of the window's view takes, from
 * the switch to the first frame painted with the new page (issue 22 item 6:
 * ≤ 100 ms p95 on a 10 MB trace):
 *
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build/tests/app/bench-tab-switch TRACE [ROUNDS]
 *
 * Each round visits every page the document has (timeline, memory,
 * coverage, health, costs and, for a trace with GPU work, the GPU overview,
 * kernels and operators), then back to the timeline; the first round is each
 * page's first show, reported apart. Prints per page min / median / p95 /
 * max of the later rounds. Not a test: it asserts nothing but the pages.
 */
#include "config.h"

#include <adwaita.h>
#include <stdio.h>
#include <stdlib.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-window-internal.h"
#include "ui/wick-window-private.h"

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: bench-tab-switch TRACE [ROUNDS]\n");
      return 2;
    }
  int rounds = argc > 2 ? MAX (atoi (argv[2]), 2) : 21;
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();
  WickWindow *w = app_test_window_open (app, argv[1], 1400, 860);
  static const char *all[] = { "timeline", "memory",  "coverage",  "health",
                               "costs",    "gpu-overview", "kernels", "operators" };
  const char *pages[G_N_ELEMENTS (all)];
  guint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    {
      GtkWidget *v = wick_window_get_view (w, all[i]);
      if (v != NULL && gtk_widget_get_visible (v))
        pages[n++] = all[i];
    }
  app_test_wait_drawn (wick_window_get_view (w, "timeline"), 60000, "the timeline");
  double *ms = g_new0 (double, (gsize)n * rounds);
  for (int r = 0; r < rounds; r++)
    for (guint p = 0; p < n; p++)
      {
        guint page = (p + 1) % n; /* from the one before it: timeline last */
        GtkWidget *v = wick_window_get_view (w, pages[page]);
        gint64 t0 = g_get_monotonic_time ();
        wick_window_show_page (w, pages[page]);
        app_test_wait_drawn (v, 60000, pages[page]);
        ms[(gsize)page * rounds + r] = (g_get_monotonic_time () - t0) / 1000.0;
      }
  printf ("tab switches on %s, %d rounds (the first: first show)\n", argv[1], rounds);
  printf ("  %-14s %10s %8s %8s %8s %8s\n", "page", "first", "min", "median", "p95", "max");
  double *later = g_new (double, (gsize)n * (rounds - 1));
  guint n_later = 0;
  for (guint p = 0; p < n; p++)
    {
      double *row = ms + (gsize)p * rounds;
      double first = row[0];
      qsort (row + 1, rounds - 1, sizeof (double), compare_doubles);
      int k = rounds - 1;
      int i95 = MAX ((int)((95 * k + 99) / 100) - 1, 0);
      printf ("  %-14s %10.1f %8.1f %8.1f %8.1f %8.1f\n", pages[p], first, row[1],
              row[1 + k / 2], row[1 + i95], row[k]);
      for (int j = 1; j < rounds; j++)
        later[n_later++] = row[j];
    }
  qsort (later, n_later, sizeof (double), compare_doubles);
  printf ("  all later switches: median %.1f ms, p95 %.1f ms, max %.1f ms (%u)\n",
          later[n_later / 2], later[MAX ((int)((95 * n_later + 99) / 100) - 1, 0)],
          later[n_later - 1], n_later);
  g_free (later);
  g_free (ms);
  app_test_window_close (w);
  g_object_unref (app);
  return 0;
}
