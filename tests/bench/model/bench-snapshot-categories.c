/* bench-snapshot-categories.c — the categories from records
 * (app/model/wick-snapshot-categories.c) at millions of allocations.
 *
 * Makes (tests/bench/model/make-snapshot-large.py, in a temporary directory)
 * a snapshot of N allocations (WICK_BENCH_SNAPSHOT_ALLOCS, default 2 000 000;
 * 3 history entries each) and a Wick trace with a storage for each (2 records
 * each), loads both once, then matches them WICK_BENCH_ROUNDS times (default
 * 5), printing each round's wall and CPU time and the peak RSS it added
 * (VmHWM reset through /proc/self/clear_refs before each). The
 * baselines of the same run: the snapshot's load alone (no records) and the
 * trace's load. With WICK_BENCH_SCALING set, the same at N/4 first (to see
 * whether the matcher grows faster than N).
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wick-document.h"
#include "wick-memory-snapshot.h"
#include "wick-snapshot-categories.h"

static double
now_s (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
rss_mib (const char *key)
{
  g_autofree char *status = NULL;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  const char *p = strstr (status, key);
  return p != NULL ? (double)strtoull (p + strlen (key) + 1, NULL, 10) / 1024.0 : 0;
}

/* Resets the process's peak RSS (VmHWM) to its RSS now. */
static void
reset_peak (void)
{
  FILE *f = fopen ("/proc/self/clear_refs", "w");
  if (f != NULL)
    {
      fputs ("5", f);
      fclose (f);
    }
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
report (const char *what, double *values, guint n, const char *unit)
{
  qsort (values, n, sizeof *values, compare_double);
  printf ("  %-28s median %.3f %s (min %.3f, max %.3f, %u runs)\n", what, values[n / 2], unit,
          values[0], values[n - 1], n);
}

static void
bench (const char *dir, guint64 n, guint rounds)
{
  g_autofree char *pickle = g_strdup_printf ("%s/large-%" G_GUINT64_FORMAT ".pickle", dir, n);
  g_autofree char *trace = g_strdup_printf ("%s/large-%" G_GUINT64_FORMAT ".jsonl", dir, n);
  g_autofree char *count = g_strdup_printf ("%" G_GUINT64_FORMAT, n);
  g_autofree char *script = g_build_filename (g_getenv ("WICK_BENCH_SOURCE") ?: ".",
                                              "make-snapshot-large.py", NULL);
  const char *argv[] = { "/usr/bin/python3", script, count, pickle, trace, NULL };
  int status = 0;
  GError *error = NULL;
  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                     &error)
      || !g_spawn_check_wait_status (status, &error))
    g_error ("make-snapshot-large.py: %s", error->message);

  printf ("%" G_GUINT64_FORMAT " allocations\n", n);
  reset_peak ();
  double rss0 = rss_mib ("VmRSS:");
  double w = now_s (CLOCK_MONOTONIC), c = now_s (CLOCK_PROCESS_CPUTIME_ID);
  WickMemorySnapshot *snapshot = wick_memory_snapshot_load (pickle, NULL, NULL, NULL, &error);
  if (snapshot == NULL)
    g_error ("%s", error->message);
  printf ("  baseline: snapshot load      %.3f s wall, %.3f s CPU, +%.0f MiB RSS\n",
          now_s (CLOCK_MONOTONIC) - w, now_s (CLOCK_PROCESS_CPUTIME_ID) - c,
          rss_mib ("VmRSS:") - rss0);
  rss0 = rss_mib ("VmRSS:");
  w = now_s (CLOCK_MONOTONIC), c = now_s (CLOCK_PROCESS_CPUTIME_ID);
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  if (!wick_document_load_file (document, trace, NULL, NULL, NULL, &error))
    g_error ("%s", error->message);
  guint records = 0;
  wick_document_get_memory (document, &records);
  printf ("  baseline: trace load         %.3f s wall, %.3f s CPU, +%.0f MiB RSS (%u records)\n",
          now_s (CLOCK_MONOTONIC) - w, now_s (CLOCK_PROCESS_CPUTIME_ID) - c,
          rss_mib ("VmRSS:") - rss0, records);

  g_autofree double *wall = g_new (double, rounds);
  g_autofree double *cpu = g_new (double, rounds);
  g_autofree double *rss = g_new (double, rounds);
  for (guint r = 0; r < rounds; r++)
    {
      reset_peak ();
      rss0 = rss_mib ("VmRSS:");
      w = now_s (CLOCK_MONOTONIC), c = now_s (CLOCK_PROCESS_CPUTIME_ID);
      WickSnapshotCategories *categories = wick_snapshot_categories_new (snapshot, document);
      wall[r] = now_s (CLOCK_MONOTONIC) - w;
      cpu[r] = now_s (CLOCK_PROCESS_CPUTIME_ID) - c;
      rss[r] = rss_mib ("VmHWM:") - rss0; /* its peak, above the RSS before it */
      const WickSnapshotMatchCounts *k = wick_snapshot_categories_get_counts (categories);
      if (r == 0)
        printf ("  allocations %" G_GUINT64_FORMAT ", matched %" G_GUINT64_FORMAT
                ", ambiguous %" G_GUINT64_FORMAT ", lifetimes %" G_GUINT64_FORMAT
                ", correction %" G_GINT64_FORMAT " us\n",
                k->allocations, k->matched, k->ambiguous, k->record_lifetimes, k->correction_us);
      if (k->matched != n)
        g_error ("matched %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, k->matched, n);
      wick_snapshot_categories_free (categories);
    }
  report ("matcher wall", wall, rounds, "s");
  report ("matcher CPU", cpu, rounds, "s");
  report ("matcher peak RSS added", rss, rounds, "MiB");
  g_object_unref (document);
  wick_memory_snapshot_free (snapshot);
  g_unlink (pickle);
  g_unlink (trace);
}

int
main (void)
{
  const char *env = g_getenv ("WICK_BENCH_SNAPSHOT_ALLOCS");
  guint64 n = env != NULL ? g_ascii_strtoull (env, NULL, 10) : 2000000;
  env = g_getenv ("WICK_BENCH_ROUNDS");
  guint rounds = env != NULL ? (guint)g_ascii_strtoull (env, NULL, 10) : 5;
  if (rounds == 0 || n < 4)
    return 1;
  g_autofree char *dir = g_dir_make_tmp ("wick-bench-categories-XXXXXX", NULL);
  if (g_getenv ("WICK_BENCH_SCALING") != NULL)
    bench (dir, n / 4, rounds);
  bench (dir, n, rounds);
  g_rmdir (dir);
  return 0;
}
