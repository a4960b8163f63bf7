/* bench-live-app.c — the app's CPU per record while a window follows
 * wick-demo recording at full speed (--rate 0).
 *
 * A window attaches to the demo and the main loop runs for WICK_BENCH_SECONDS
 * (default 10) with the timeline shown and following, as a user watching the
 * run sees it; no input. The app's CPU is the process's (its main thread,
 * the live worker and GTK's threads), the records are those committed to the
 * window's document in that time. Prints one line per round
 * (WICK_BENCH_ROUNDS, default 3) and the min, median and max of µs a record;
 * compare two builds by running each in the same session. Needs a display
 * (Xvfb): skips without one.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "session/wick-live-session.h"
#include "wick-application.h"
#include "wick-window.h"
#include "model/wick-document-private.h"
#include "model/wick-tracks.h"

static double
process_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
env_number (const char *name, double fallback)
{
  const char *text = g_getenv (name);
  return text != NULL ? g_ascii_strtod (text, NULL) : fallback;
}

typedef struct
{
  double us_per_record;
  double records_per_s;
  double core_share;
} Round;

static Round
run_round (WickApplication *app, double seconds, guint number)
{
  const char *demo = g_getenv ("WICK_DEMO");
  const char *argv[] = { demo, "--quiet", "--rate", "0", NULL };
  GPid pid;
  g_autoptr (GError) error = NULL;
  g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 wick_test_die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  g_autofree char *socket = live_test_wait_for_socket (pid);

  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  g_assert_nonnull (session);
  WickDocument *live = wick_window_get_document (window);

  /* the first records in, the window drawn */
  gint64 settle = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < settle)
    g_main_context_iteration (NULL, FALSE);

  guint64 records_before = wick_document_get_n_records (live);
  double cpu_before = process_cpu_seconds ();
  gint64 wall_before = g_get_monotonic_time ();
  gint64 end = wall_before + (gint64)(seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (500);
  double wall = (g_get_monotonic_time () - wall_before) / 1e6;
  double cpu = process_cpu_seconds () - cpu_before;
  guint64 records = wick_document_get_n_records (live) - records_before;
  g_assert_cmpuint (records, >, 0);

  Round round = { 1e6 * cpu / (double)records, records / wall, cpu / wall };
  g_print ("round %u: %" G_GUINT64_FORMAT " records in %.1f s (%.0f records/s committed), app CPU "
           "%.2f s (%.0f%% of one core): %.2f us a record\n",
           number, records, wall, round.records_per_s, cpu, 100 * round.core_share,
           round.us_per_record);
  WickTracksUpdateStats stats;
  wick_tracks_get_update_stats (wick_document_get_tracks (live), &stats);
  g_print ("round %u: tracks %" G_GUINT64_FORMAT " whole builds, %" G_GUINT64_FORMAT
           " appends, %" G_GUINT64_FORMAT " fallbacks (last: %s)\n",
           number, stats.builds, stats.appends, stats.fallbacks,
           stats.last_fallback ? stats.last_fallback : "none");
  gtk_window_destroy (GTK_WINDOW (window));
  for (gint64 drain = g_get_monotonic_time () + G_USEC_PER_SEC / 2; g_get_monotonic_time () < drain;)
    g_main_context_iteration (NULL, FALSE);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  return round;
}

int
main (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("1..0 # SKIP no display: run under Xvfb\n");
      return 77;
    }
  if (g_getenv ("WICK_DEMO") == NULL)
    {
      g_print ("1..0 # SKIP WICK_DEMO is not set\n");
      return 77;
    }
  double seconds = env_number ("WICK_BENCH_SECONDS", 10);
  guint rounds = (guint)CLAMP (env_number ("WICK_BENCH_ROUNDS", 3), 1, 50);
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_autofree char *runtime_dir = g_dir_make_tmp ("wick-bench-live-app-XXXXXX", NULL);
  g_chmod (runtime_dir, 0700);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  gtk_init ();
  WickApplication *app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);

  g_autoptr (GArray) us = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) share = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint r = 1; r <= rounds; r++)
    {
      Round round = run_round (app, seconds, r);
      g_array_append_val (us, round.us_per_record);
      g_array_append_val (share, round.core_share);
    }
  g_array_sort (us, compare_double);
  g_array_sort (share, compare_double);
  g_print ("live-app-cpu: %u rounds of %.0f s: %.2f-%.2f us a record, median %.2f; "
           "%.0f-%.0f%% of one core, median %.0f%%\n",
           rounds, seconds, g_array_index (us, double, 0), g_array_index (us, double, us->len - 1),
           g_array_index (us, double, us->len / 2), 100 * g_array_index (share, double, 0),
           100 * g_array_index (share, double, share->len - 1),
           100 * g_array_index (share, double, share->len / 2));
  g_object_unref (app);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", runtime_dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", runtime_dir);
  return 0;
}
