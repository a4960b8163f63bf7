/* bench-live-app.c — the app's CPU per record while a window follows a live
 * wick-demo.
 *
 * A window attaches to the demo and the main loop runs for WICK_BENCH_SECONDS
 * (default 10) with the timeline shown and following, as a user watching the
 * run sees it; no input. The app's CPU is the process's (its main thread,
 * the live worker and GTK's threads; the main thread's share is printed
 * too), the records are those committed to the window's document in that
 * time. Prints one line per round (WICK_BENCH_ROUNDS, default 3) and the
 * min, median and max of µs a record; compare two builds by running each in
 * the same session. Needs a display (Xvfb): skips without one.
 *
 * The producer: by default `wick-demo --rate 0` (training as fast as the
 * CPU lets it: on a small machine a few hundred to a few thousand records a
 * second, where the app's CPU is its redraws, not the records). With
 * WICK_BENCH_FLOOD=RATE it is `wick-demo --flood RATE --start-on-signal`:
 * the demo's records without its arithmetic at RATE records a second (0: as
 * fast as it can), so that the records dominate. Then a round attaches,
 * lets the window settle, starts the flood (SIGUSR1), measures after one
 * second of it, stops the demo (SIGINT) and waits for the window's session
 * to end, and checks the count: the records committed since the start plus
 * those the reader lost against what the demo says it asked libwick for
 * (its session's closing records among them). Losses are printed, never hidden;
 * a count that does not match without losses is reported and fails the run
 * (exit status 1) after its rounds. The view's history
 * limit is off in this mode (WICK_LIVE_HISTORY=0 unless set), so that a
 * round's million records do not start the view over.
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
#include "session/wick-live-session-private.h"
#include "wick-application.h"
#include "wick-window.h"
#include "model/wick-document-private.h"
#include "model/wick-tracks.h"
#include "model/wick-tracks-private.h"

#define END_WAIT_S 120

static double
process_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The main thread's CPU (it runs the commits, the tracks, the scene and the
 * drawing; the live worker and GTK's helpers are the rest). */
static double
main_thread_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* The frames painted and the main thread's CPU in them (the frame clock's
 * update, layout and paint phases: the timeline's scene update, snapshot
 * and rendering). */
typedef struct
{
  guint64 count;
  double cpu;
  double began;
} Frames;

static void
frame_begin (GdkFrameClock *clock, gpointer data)
{
  ((Frames *)data)->began = main_thread_cpu_seconds ();
}

static void
frame_end (GdkFrameClock *clock, gpointer data)
{
  Frames *frames = data;
  if (frames->began > 0)
    frames->cpu += main_thread_cpu_seconds () - frames->began;
  frames->began = 0;
  frames->count++;
}

typedef struct
{
  double us_per_record;
  double main_us_per_record;
  double records_per_s;
  double core_share;
  double lost;
  double frames_per_s;
  double frame_ms;   /* main thread CPU a frame */
  double outside_us; /* app CPU outside the frames, a record */
  gboolean mismatch; /* records missing (or extra) without a loss to say why */
} Round;

static void
pump_for (double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (500);
}

/* The demo's last line in flood mode: "wick-demo: flood: N records ..., D
 * dropped by the ring, ...". FALSE when @text has no such line. */
static gboolean
parse_flood_report (const char *text, guint64 *records, guint64 *dropped)
{
  const char *line = text != NULL ? strstr (text, "wick-demo: flood: ") : NULL;
  if (line == NULL)
    return FALSE;
  char *end = NULL;
  *records = g_ascii_strtoull (line + strlen ("wick-demo: flood: "), &end, 10);
  const char *comma = end != NULL ? strstr (end, ", ") : NULL;
  if (comma == NULL)
    return FALSE;
  *dropped = g_ascii_strtoull (comma + 2, &end, 10);
  return end != NULL && g_str_has_prefix (end, " dropped by the ring");
}

static char *
read_all (int fd)
{
  GString *text = g_string_new (NULL);
  char buffer[4096];
  ssize_t n;
  while ((n = read (fd, buffer, sizeof buffer)) > 0 && text->len < 65536)
    g_string_append_len (text, buffer, n);
  return g_string_free (text, FALSE);
}

static Round
run_round (WickApplication *app, double seconds, const char *flood, guint number)
{
  const char *demo = g_getenv ("WICK_DEMO");
  const char *rate_argv[] = { demo, "--quiet", "--rate", "0", NULL };
  const char *flood_argv[] = { demo, "--quiet", "--flood", flood, "--start-on-signal", NULL };
  GPid pid;
  int out_fd = -1;
  g_autoptr (GError) error = NULL;
  g_spawn_async_with_pipes (NULL, (char **)(flood != NULL ? flood_argv : rate_argv), NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD, wick_test_die_with_parent, NULL, &pid, NULL,
                            &out_fd, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *socket = live_test_wait_for_socket (pid);

  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  g_assert_nonnull (session);
  g_object_ref (session);
  WickDocument *live = wick_window_get_document (window);

  /* the first records in, the window drawn */
  pump_for (1);
  Frames frames = { 0 };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  g_assert_nonnull (clock);
  gulong frame_begin_handler
    = g_signal_connect (clock, "before-paint", G_CALLBACK (frame_begin), &frames);
  gulong frame_end_handler
    = g_signal_connect (clock, "after-paint", G_CALLBACK (frame_end), &frames);
  guint64 records_at_start = wick_document_get_n_records (live);
  guint64 lost_at_start = wick_live_session_get_lost (session);
  if (flood != NULL)
    {
      kill (pid, SIGUSR1);
      pump_for (1); /* the flood under way */
    }

  guint64 records_before = wick_document_get_n_records (live);
  guint64 lost_before = wick_live_session_get_lost (session);
  Frames frames_before = frames;
  double cpu_before = process_cpu_seconds ();
  double main_before = main_thread_cpu_seconds ();
  gint64 wall_before = g_get_monotonic_time ();
  pump_for (seconds);
  double wall = (g_get_monotonic_time () - wall_before) / 1e6;
  double cpu = process_cpu_seconds () - cpu_before;
  double main_cpu = main_thread_cpu_seconds () - main_before;
  guint64 records = wick_document_get_n_records (live) - records_before;
  guint64 lost = wick_live_session_get_lost (session) - lost_before;
  g_assert_cmpuint (records, >, 0);

  Round round = { 1e6 * cpu / (double)records,
                  1e6 * main_cpu / (double)records,
                  records / wall,
                  cpu / wall,
                  (double)lost,
                  (frames.count - frames_before.count) / wall };
  double frame_cpu = frames.cpu - frames_before.cpu;
  guint64 n_frames = frames.count - frames_before.count;
  round.frame_ms = n_frames > 0 ? 1e3 * frame_cpu / n_frames : 0;
  round.outside_us = 1e6 * (cpu - frame_cpu) / (double)records;
  g_print ("round %u: %" G_GUINT64_FORMAT " records in %.1f s (%.0f records/s committed, "
           "%" G_GUINT64_FORMAT " lost), app CPU %.2f s (%.0f%% of one core; main thread "
           "%.2f s): %.2f us a record (main thread %.2f)\n",
           number, records, wall, round.records_per_s, lost, cpu, 100 * round.core_share, main_cpu,
           round.us_per_record, round.main_us_per_record);
  g_print ("round %u: %.0f frames/s painted, %.2f ms of main thread CPU a frame (%.2f s in all); "
           "outside the frames %.2f us a record\n",
           number, round.frames_per_s, round.frame_ms, frame_cpu, round.outside_us);
  WickTracksUpdateStats stats;
  wick_tracks_get_update_stats (wick_document_get_tracks (live), &stats);
  g_print ("round %u: tracks %" G_GUINT64_FORMAT " whole builds, %" G_GUINT64_FORMAT
           " appends, %" G_GUINT64_FORMAT " fallbacks (last: %s)\n",
           number, stats.builds, stats.appends, stats.fallbacks,
           stats.last_fallback ? stats.last_fallback : "none");

  if (flood != NULL)
    {
      /* the count: stop the demo, take what is left, compare */
      kill (pid, SIGINT);
      gint64 deadline = g_get_monotonic_time () + END_WAIT_S * G_USEC_PER_SEC;
      while (!wick_live_session_is_ended (session) && g_get_monotonic_time () < deadline)
        if (!g_main_context_iteration (NULL, FALSE))
          g_usleep (500);
      int status = 0;
      waitpid (pid, &status, 0);
      g_autofree char *report = read_all (out_fd);
      guint64 produced = 0, dropped = 0;
      if (!wick_live_session_is_ended (session))
        g_error ("round %u: the window's session did not end within %d s of the demo's stop",
                 number, END_WAIT_S);
      if (!parse_flood_report (report, &produced, &dropped))
        g_error ("round %u: the demo printed no flood report (exit status %d): %s", number, status,
                 report);
      guint64 committed = wick_document_get_n_records (live) - records_at_start;
      guint64 lost_all = wick_live_session_get_lost (session) - lost_at_start;
      gint64 difference = (gint64)(committed + lost_all) - (gint64)produced;
      g_print (
        "round %u: count: the demo asked for %" G_GUINT64_FORMAT " records (%" G_GUINT64_FORMAT
        " dropped by its ring); the window committed %" G_GUINT64_FORMAT
        " and lost %" G_GUINT64_FORMAT
        " since the start: committed + lost - asked = %" G_GINT64_FORMAT "%s\n",
        number, produced, dropped, committed, lost_all, difference,
        difference == 0 ? " (every record accounted for)"
        : lost_all > 0  ? " (a lossy reader also writes the starts of spans whose start it lost)"
                        : " (MISMATCH)");
      if (lost_all == 0 && dropped == 0 && difference != 0)
        {
          g_printerr ("round %u: %s records than the demo asked for, none counted as lost\n",
                      number, difference < 0 ? "fewer" : "more");
          round.mismatch = TRUE;
        }
    }
  else
    {
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  close (out_fd);
  g_signal_handler_disconnect (clock, frame_begin_handler);
  g_signal_handler_disconnect (clock, frame_end_handler);
  g_object_unref (session);
  gtk_window_destroy (GTK_WINDOW (window));
  pump_for (0.5);
  return round;
}

static double
median_of (GArray *values, double *min, double *max)
{
  g_array_sort (values, compare_double);
  *min = g_array_index (values, double, 0);
  *max = g_array_index (values, double, values->len - 1);
  return g_array_index (values, double, values->len / 2);
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
  const char *flood = g_getenv ("WICK_BENCH_FLOOD");
  if (flood != NULL)
    {
      char *end = NULL;
      double rate = g_ascii_strtod (flood, &end);
      if (end == flood || *end != '\0' || !(rate >= 0))
        {
          g_printerr ("WICK_BENCH_FLOOD=%s: not a rate in records a second (0: unlimited)\n",
                      flood);
          return 2;
        }
      g_setenv ("WICK_LIVE_HISTORY", "0", FALSE);
    }
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_autofree char *runtime_dir = g_dir_make_tmp ("wick-bench-live-app-XXXXXX", NULL);
  g_chmod (runtime_dir, 0700);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  gtk_init ();
  WickApplication *app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);

  g_autoptr (GArray) us = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) main_us = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) share = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) rate = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) lost = g_array_new (FALSE, FALSE, sizeof (double));
  guint mismatches = 0;
  for (guint r = 1; r <= rounds; r++)
    {
      Round round = run_round (app, seconds, flood, r);
      mismatches += round.mismatch;
      g_array_append_val (us, round.us_per_record);
      g_array_append_val (main_us, round.main_us_per_record);
      g_array_append_val (share, round.core_share);
      g_array_append_val (rate, round.records_per_s);
      g_array_append_val (lost, round.lost);
    }
  double lo[5], hi[5], mid[5];
  mid[0] = median_of (us, &lo[0], &hi[0]);
  mid[1] = median_of (main_us, &lo[1], &hi[1]);
  mid[2] = median_of (share, &lo[2], &hi[2]);
  mid[3] = median_of (rate, &lo[3], &hi[3]);
  mid[4] = median_of (lost, &lo[4], &hi[4]);
  g_print ("live-app-cpu%s%s: %u rounds of %.0f s: %.2f-%.2f us a record, median %.2f (main "
           "thread %.2f-%.2f, median %.2f); %.0f-%.0f%% of one core, median %.0f%%; "
           "%.0f-%.0f records/s committed, median %.0f; lost %.0f-%.0f a round, median %.0f\n",
           flood != NULL ? " flood " : "", flood != NULL ? flood : "", rounds, seconds, lo[0],
           hi[0], mid[0], lo[1], hi[1], mid[1], 100 * lo[2], 100 * hi[2], 100 * mid[2], lo[3],
           hi[3], mid[3], lo[4], hi[4], mid[4]);
  g_object_unref (app);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", runtime_dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", runtime_dir);
  if (mismatches > 0)
    g_printerr ("%u of %u rounds: the count did not match (see above)\n", mismatches, rounds);
  return mismatches > 0 ? 1 : 0;
}
