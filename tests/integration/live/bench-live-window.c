/* bench-live-window.c — input-to-redraw latency and frame times of the live
 * window while wick-demo records at full speed (--rate 0), against the same
 * window on a static trace in the same run.
 *
 * Phase 1 attaches a window to the demo and, for WICK_BENCH_SECONDS (default
 * 20), sends it input at random moments 20-60 ms apart through the window's
 * own actions (zoom in, zoom out, switch to Memory, Health and back to
 * Timeline): each input is a timeout, so an input due while the main thread is
 * busy waits as a real event would; its latency runs from the moment it was
 * due to the end of the next frame drawn after it (gtk_test_widget_wait_for_
 * draw, GTK's test API). Frame times are the frame clock's own phases, from
 * its "before-paint" to "after-paint" signal, of every frame in the phase.
 * Phase 2 saves the live trace, loads it into a new window (a static,
 * finished document of the same records) and repeats the same inputs, with
 * the demo still running (not attached), so both phases share the machine
 * with the same workload. GTK draws with its cairo renderer (GSK_RENDERER,
 * unless set): under Xvfb its GL one is Mesa's software rasterizer.
 * Prints p50/p99/max for both and the ratios. Needs a display (Xvfb):
 * skips without one.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "session/wick-live-session.h"
#include "session/wick-live-session-private.h"
#include "wick-application.h"
#include "wick-window.h"
#include "model/wick-document-private.h"

static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * G_GINT64_CONSTANT (1000000) + ts.tv_nsec / 1000;
}

typedef struct
{
  GArray *latency_us;   /* gint64 */
  GArray *frame_us;     /* gint64, wall */
  GArray *frame_cpu_us; /* gint64, the main thread's CPU time */
  gint64 paint_start, paint_cpu_start;
  /* a heartbeat every 5 ms at high priority: gaps over 50 ms, and how much
   * of each the main thread spent on the CPU (busy) or not (waiting, or not
   * scheduled on a loaded machine) */
  gint64 beat_wall, beat_cpu;
  guint stalls;
  gint64 stall_wall_us, stall_cpu_us, worst_stall_us, worst_stall_cpu_us;
} Samples;

static gboolean
heartbeat (gpointer data)
{
  Samples *s = data;
  gint64 wall = g_get_monotonic_time ();
  gint64 cpu = thread_cpu_us ();
  if (s->beat_wall != 0 && wall - s->beat_wall > 50000)
    {
      s->stalls++;
      s->stall_wall_us += wall - s->beat_wall;
      s->stall_cpu_us += cpu - s->beat_cpu;
      if (wall - s->beat_wall > s->worst_stall_us)
        {
          s->worst_stall_us = wall - s->beat_wall;
          s->worst_stall_cpu_us = cpu - s->beat_cpu;
        }
    }
  s->beat_wall = wall;
  s->beat_cpu = cpu;
  return G_SOURCE_CONTINUE;
}

static void
samples_init (Samples *samples)
{
  memset (samples, 0, sizeof *samples);
  samples->latency_us = g_array_new (FALSE, FALSE, sizeof (gint64));
  samples->frame_us = g_array_new (FALSE, FALSE, sizeof (gint64));
  samples->frame_cpu_us = g_array_new (FALSE, FALSE, sizeof (gint64));
}

static void
on_before_paint (GdkFrameClock *clock, Samples *samples)
{
  samples->paint_start = g_get_monotonic_time ();
  samples->paint_cpu_start = thread_cpu_us ();
}

static void
on_after_paint (GdkFrameClock *clock, Samples *samples)
{
  if (samples->paint_start == 0)
    return;
  gint64 us = g_get_monotonic_time () - samples->paint_start;
  gint64 cpu = thread_cpu_us () - samples->paint_cpu_start;
  g_array_append_val (samples->frame_us, us);
  g_array_append_val (samples->frame_cpu_us, cpu);
  samples->paint_start = 0;
}

static int
compare_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

static double
percentile (GArray *values, double p)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, compare_i64);
  guint i = (guint)(p * (values->len - 1) + 0.5);
  return g_array_index (values, gint64, i) / 1000.0;
}

static const char *const inputs[][2] = {
  { "win.zoom-in", NULL },          { "win.zoom-out", NULL },
  { "win.show-page", "memory" },    { "win.show-page", "timeline" },
  { "win.show-page", "health" },    { "win.show-page", "timeline" },
};

typedef struct
{
  WickWindow *window;
  Samples *samples;
  gint64 due;
  guint n;
  gboolean fired;
} Input;

static gboolean
fire_input (gpointer data)
{
  Input *input = data;
  const char *const *what = inputs[input->n % G_N_ELEMENTS (inputs)];
  GVariant *parameter = what[1] != NULL ? g_variant_new_string (what[1]) : NULL;
  gtk_widget_activate_action_variant (GTK_WIDGET (input->window), what[0], parameter);
  gtk_test_widget_wait_for_draw (GTK_WIDGET (input->window));
  gint64 us = g_get_monotonic_time () - input->due;
  g_array_append_val (input->samples->latency_us, us);
  input->fired = TRUE;
  return G_SOURCE_REMOVE;
}

/* Sends inputs to @window for @seconds; fills @samples. */
static void
drive (WickWindow *window, double seconds, Samples *samples)
{
  GRand *rand = g_rand_new_with_seed (11);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  gulong before = g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), samples);
  gulong after = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), samples);
  guint beat = g_timeout_add_full (G_PRIORITY_HIGH, 5, heartbeat, samples, NULL);
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  Input input = { window, samples, 0, 0, FALSE };
  while (g_get_monotonic_time () < end)
    {
      guint delay_ms = (guint)g_rand_int_range (rand, 20, 61);
      input.due = g_get_monotonic_time () + delay_ms * 1000;
      input.fired = FALSE;
      g_timeout_add (delay_ms, fire_input, &input);
      while (!input.fired)
        g_main_context_iteration (NULL, TRUE);
      input.n++;
    }
  g_source_remove (beat);
  g_signal_handler_disconnect (clock, before);
  g_signal_handler_disconnect (clock, after);
  g_rand_free (rand);
}

static GPid demo_pid;

static char *
start_demo (void)
{
  const char *demo = g_getenv ("WICK_DEMO");
  g_assert_nonnull (demo);
  const char *argv[] = { demo, "--quiet", "--rate", "0", NULL };
  g_autoptr (GError) error = NULL;
  g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 wick_test_die_with_parent, NULL, &demo_pid, &error);
  g_assert_no_error (error);
  return live_test_wait_for_socket (demo_pid);
}

static void
stop_demo (void)
{
  kill (demo_pid, SIGKILL);
  waitpid (demo_pid, NULL, 0);
}

static void
report (const char *name, Samples *s)
{
  g_print ("%-8s inputs %4u  latency p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  |  frames %5u  "
           "wall p50 %6.2f p99 %6.2f max %7.2f ms  |  main-thread CPU p50 %6.2f p99 %6.2f ms\n",
           name, s->latency_us->len, percentile (s->latency_us, 0.5),
           percentile (s->latency_us, 0.99), percentile (s->latency_us, 1.0), s->frame_us->len,
           percentile (s->frame_us, 0.5), percentile (s->frame_us, 0.99),
           percentile (s->frame_us, 1.0), percentile (s->frame_cpu_us, 0.5),
           percentile (s->frame_cpu_us, 0.99));
  g_print ("%-8s main-thread stalls over 50 ms: %u, %.2f s in all, on the CPU for %.0f%% of it; "
           "worst %.0f ms (%.0f ms on the CPU)\n",
           name, s->stalls, s->stall_wall_us / 1e6,
           s->stall_wall_us > 0 ? 100.0 * s->stall_cpu_us / s->stall_wall_us : 0.0,
           s->worst_stall_us / 1e3, s->worst_stall_cpu_us / 1e3);
}

static double
cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main (int argc, char **argv)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("1..0 # SKIP no display: run under Xvfb\n");
      return 77;
    }
  double seconds = g_getenv ("WICK_BENCH_SECONDS") ? g_ascii_strtod (g_getenv ("WICK_BENCH_SECONDS"), NULL) : 20;
  /* GTK's GL renderer under Xvfb is Mesa's software rasterizer on the same
   * two cores: measure the app's own drawing (cairo) unless told otherwise. */
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_autofree char *runtime_dir = g_dir_make_tmp ("wick-bench-live-XXXXXX", NULL);
  g_chmod (runtime_dir, 0700);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  gtk_init ();
  g_autofree char *socket = start_demo ();

  WickApplication *app = wick_application_new ();
  g_application_register (G_APPLICATION (app), NULL, NULL);
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_autoptr (GError) error = NULL;
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  WickDocument *live = wick_window_get_document (window);
  /* let the first records in and the window settle */
  gint64 settle = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < settle)
    g_main_context_iteration (NULL, FALSE);

  Samples live_samples;
  samples_init (&live_samples);
  guint64 records_before = wick_document_get_n_records (live);
  double cpu_before = cpu_seconds ();
  gint64 wall_before = g_get_monotonic_time ();
  drive (window, seconds, &live_samples);
  double wall = (g_get_monotonic_time () - wall_before) / 1e6;
  double cpu = cpu_seconds () - cpu_before;
  guint64 records = wick_document_get_n_records (live) - records_before;
  g_assert_cmpuint (records, >, 0);
  g_autofree char *saved = g_build_filename (runtime_dir, "live.jsonl", NULL);
  g_assert_true (wick_live_session_save (session, saved, &error));
  g_assert_no_error (error);
  guint64 total = wick_document_get_n_records (live);
  guint64 dropped = wick_live_session_get_dropped (session);
  gtk_window_destroy (GTK_WINDOW (window));

  /* The baseline: the same window on the saved trace, static and finished. */
  WickWindow *still = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (still), 1400, 900);
  gtk_window_present (GTK_WINDOW (still));
  g_autoptr (GFile) file = g_file_new_for_path (saved);
  wick_window_load_file (still, file);
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (wick_window_get_document (still) == NULL
         || !wick_document_is_finished (wick_window_get_document (still)))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  settle = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < settle)
    g_main_context_iteration (NULL, FALSE);
  Samples static_samples;
  samples_init (&static_samples);
  drive (still, seconds, &static_samples);
  stop_demo ();

  g_print ("live: %" G_GUINT64_FORMAT " records in %.1f s (%.0f records/s committed; %" G_GUINT64_FORMAT
           " in the document at the end, %" G_GUINT64_FORMAT " dropped by the demo), app CPU %.2f s "
           "(%.0f%% of one core)\n",
           records, wall, records / wall, total, dropped, cpu, 100 * cpu / wall);
  g_print ("static: %" G_GUINT64_FORMAT " records\n",
           wick_document_get_n_records (wick_window_get_document (still)));
  report ("live", &live_samples);
  report ("static", &static_samples);
  g_print ("ratio live/static: latency p50 %.2fx p99 %.2fx, frames p50 %.2fx p99 %.2fx\n",
           percentile (live_samples.latency_us, 0.5) / MAX (percentile (static_samples.latency_us, 0.5), 0.001),
           percentile (live_samples.latency_us, 0.99) / MAX (percentile (static_samples.latency_us, 0.99), 0.001),
           percentile (live_samples.frame_us, 0.5) / MAX (percentile (static_samples.frame_us, 0.5), 0.001),
           percentile (live_samples.frame_us, 0.99) / MAX (percentile (static_samples.frame_us, 0.99), 0.001));
  gtk_window_destroy (GTK_WINDOW (still));
  g_object_unref (app);
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", runtime_dir);
  if (system (command) != 0)
    g_printerr ("could not remove %s\n", runtime_dir);
  return 0;
}
