/* bench-compare.c — comparing two traces against loading them, same run.
 *
 * Writes two synthetic training runs (tests/model/compare-workload.h) of
 * WICK_BENCH_MB megabytes each (default 100; the figure is 1024) to
 * $TMPDIR, then measures the CPU time of loading each with
 * wick_document_load_file() and of wick_comparison_new() on the two, and
 * prints the ratio compare / (load A + load B). The target: comparing takes no
 * longer than loading (ratio ≤ 1). Timing never fails the benchmark. */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/resource.h>

#include "compare-workload.h"
#include "wick-compare.h"

static double
cpu_seconds (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int
main (void)
{
  const char *mb_env = g_getenv ("WICK_BENCH_MB");
  guint64 mb = mb_env ? g_ascii_strtoull (mb_env, NULL, 10) : 100;
  /* about 3.4 KB of JSONL per step */
  guint n_steps = (guint) MAX (8, mb * 1000000 / 3400);
  g_autofree char *dir = g_dir_make_tmp ("wick-bench-compare-XXXXXX", NULL);
  char *paths[2];
  WickDocument *docs[2];
  double load[2], t0, compare;
  gsize size[2];
  g_autoptr (WickComparison) c = NULL;

  for (guint i = 0; i < 2; i++)
    {
      Workload w = { 1 + i, n_steps, i ? "relu" : NULL, 1.3, NULL, FALSE, 0.1 };
      g_autofree char *text = make_run_text (&w);
      g_autoptr (GError) error = NULL;

      size[i] = strlen (text);
      paths[i] = g_build_filename (dir, i ? "b.jsonl" : "a.jsonl", NULL);
      g_assert_true (g_file_set_contents (paths[i], text, size[i], &error));
    }
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr (GError) error = NULL;
      docs[i] = wick_document_new ();
      t0 = cpu_seconds ();
      if (!wick_document_load_file (docs[i], paths[i], NULL, NULL, NULL, &error))
        g_error ("load %s: %s", paths[i], error->message);
      load[i] = cpu_seconds () - t0;
    }
  t0 = cpu_seconds ();
  c = wick_comparison_new (&docs[0], 1, &docs[1], 1, NULL, NULL);
  compare = cpu_seconds () - t0;
  g_assert_nonnull (c);
  printf ("traces: %.1f MB + %.1f MB, %u steps each\n", size[0] / 1e6, size[1] / 1e6, n_steps);
  printf ("load A %.2f s, load B %.2f s (CPU), compare %.2f s (CPU, %u resamples, %u entries)\n",
          load[0], load[1], compare, c->n_resamples, c->entries->len);
  printf ("RESULT compare_over_load=%.3f (target <= 1)\n", compare / (load[0] + load[1]));
  for (guint i = 0; i < 2; i++)
    {
      g_object_unref (docs[i]);
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
  return 0;
}
