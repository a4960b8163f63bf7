/* bench-timeline-window.c — the app's own timeline frames at 10 M spans: a
 * window of the app on the track-list document bench-timeline draws
 * (bench-tracks-document.h: WICK_BENCH_SPANS spans, default 10 000 000, over
 * 64 threads, 1 M counter samples, 100 k flows), each frame timed by the
 * window's frame clock from before-paint to after-paint (the update, layout
 * and paint phases: the snapshot of every widget and GTK's render of it), in
 * wall time and in the main thread's CPU time:
 *
 *   xvfb-run -a -s "-screen 0 1920x1200x24" _build/tests/app/bench-timeline-window [ROUNDS]
 *
 * Per frame, median (min–max) over the frames of ROUNDS rounds (default 3):
 * before-paint to after-paint in wall and in the main thread's CPU time;
 * then to the X server's end of the frame (a round trip after after-paint:
 * with the cairo renderer the window's pixels are the server's work) in wall
 * and in the server's CPU time (Xvfb's, read from /proc), and how many
 * frames took over 8 ms to the server's end. The frames:
 *   hover moved   the whole trace, the pointer's time line moved
 *   scrolled      the whole trace scrolled by a wheel click (30 px) a frame
 *   cold          the whole trace after the row cache was emptied: every
 *                 frame until the view is complete, and the first alone
 *   panned, 1/N   a new range every frame (the whole trace panned by a
 *                 pixel, or 1/N of it panned across), to its complete frame
 * GSK_RENDERER is cairo unless set (under Xvfb the GL renderer is Mesa's
 * software rasterizer, bench-tab-switch.c). WICK_BENCH_SHOT=FILE saves the
 * window on the whole trace as a PNG. Not a test: it asserts nothing.
 */
#include "config.h"

#include <adwaita.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app-test-ui.h"
#include "bench-tracks-document.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-scene-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-window-internal.h"
#include "ui/wick-window-private.h"

static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The X server's main thread (Xvfb, found by the display's number in its
 * command line): with the cairo renderer GTK's drawing onto the window is
 * the server's work, not this process's. */
static char *server_schedstat;

static void
find_server (void)
{
  const char *display = g_getenv ("DISPLAY");
  const char *colon = display ? strchr (display, ':') : NULL;
  if (colon == NULL)
    return;
  g_autofree char *want = g_strndup (colon, strcspn (colon, "."));
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      if (!g_ascii_isdigit (name[0]))
        continue;
      g_autofree char *path = g_build_filename ("/proc", name, "cmdline", NULL);
      g_autofree char *cmdline = NULL;
      gsize len;
      if (!g_file_get_contents (path, &cmdline, &len, NULL) || len == 0)
        continue;
      if (!g_str_has_suffix (cmdline, "Xvfb") && !g_str_has_suffix (cmdline, "Xorg"))
        continue;
      for (gsize at = strlen (cmdline) + 1; at < len; at += strlen (cmdline + at) + 1)
        if (strcmp (cmdline + at, want) == 0)
          {
            server_schedstat = g_build_filename ("/proc", name, "schedstat", NULL);
            return;
          }
    }
}

/* The server's CPU time in µs (its first field: ns on a CPU), 0 unknown. */
static gint64
server_cpu_us (void)
{
  g_autofree char *text = NULL;
  if (server_schedstat == NULL || !g_file_get_contents (server_schedstat, &text, NULL, NULL))
    return 0;
  return (gint64)(g_ascii_strtoull (text, NULL, 10) / 1000);
}

/* Per frame (ms): before-paint to after-paint in wall and in this thread's
 * CPU time; then to the server's end of the frame (a round trip after
 * after-paint: what it was sent is done), in wall and in the server's CPU. */
enum
{
  WALL,
  CPU,
  SYNCED,
  SERVER,
  N_FIGURES
};
typedef struct
{
  GArray *v[N_FIGURES];
} Series;

static void
series_init (Series *s)
{
  for (guint i = 0; i < N_FIGURES; i++)
    s->v[i] = g_array_new (FALSE, FALSE, sizeof (double));
}

static void
series_clear (Series *s)
{
  for (guint i = 0; i < N_FIGURES; i++)
    g_array_set_size (s->v[i], 0);
}

static void
series_free (Series *s)
{
  for (guint i = 0; i < N_FIGURES; i++)
    g_array_unref (s->v[i]);
}

/* @to gets @from's frames (all, or only the first with @first_only). */
static void
series_take (Series *to, Series *from, gboolean first_only)
{
  for (guint i = 0; i < N_FIGURES; i++)
    g_array_append_vals (to->v[i], from->v[i]->data, first_only ? MIN (from->v[i]->len, 1) : from->v[i]->len);
  if (!first_only)
    series_clear (from);
}

typedef struct
{
  gint64 wall0, cpu0, server0;
  Series s;
} Frames;

static void
on_before_paint (GdkFrameClock *clock, Frames *f)
{
  f->server0 = server_cpu_us ();
  f->wall0 = g_get_monotonic_time ();
  f->cpu0 = thread_cpu_us ();
}

static void
on_after_paint (GdkFrameClock *clock, Frames *f)
{
  if (f->wall0 == 0)
    return;
  double v[N_FIGURES];
  v[WALL] = (g_get_monotonic_time () - f->wall0) / 1000.0;
  v[CPU] = (thread_cpu_us () - f->cpu0) / 1000.0;
  gdk_display_sync (gdk_display_get_default ());
  v[SYNCED] = (g_get_monotonic_time () - f->wall0) / 1000.0;
  v[SERVER] = (server_cpu_us () - f->server0) / 1000.0;
  for (guint i = 0; i < N_FIGURES; i++)
    g_array_append_val (f->s.v[i], v[i]);
  f->wall0 = 0;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
print_stats (const char *what, Series *s)
{
  guint n = s->v[WALL]->len;
  if (n == 0)
    {
      printf ("  %-28s no frames\n", what);
      return;
    }
  double med[N_FIGURES], lo[N_FIGURES], hi[N_FIGURES];
  for (guint i = 0; i < N_FIGURES; i++)
    {
      double *v = (double *)(void *)s->v[i]->data;
      qsort (v, n, sizeof (double), compare_double);
      med[i] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
      lo[i] = v[0];
      hi[i] = v[n - 1];
    }
  guint over = 0;
  for (guint i = 0; i < n; i++)
    over += g_array_index (s->v[SYNCED], double, i) > 8.0;
  printf ("  %-28s %6.2f (%5.2f-%6.2f) %6.2f (%5.2f-%6.2f) %6.2f (%5.2f-%6.2f) %6.2f %4u %4u\n",
          what, med[WALL], lo[WALL], hi[WALL], med[CPU], lo[CPU], hi[CPU], med[SYNCED],
          lo[SYNCED], hi[SYNCED], med[SERVER], n, over);
}

/* Waits for @n more frames. */
static Frames *frames_seen;
static guint frames_wanted;

static gboolean
enough_frames (gpointer data)
{
  return frames_seen->s.v[WALL]->len >= frames_wanted;
}

static void
wait_frames (Frames *f, guint n)
{
  frames_seen = f;
  frames_wanted = f->s.v[WALL]->len + n;
  app_test_wait_until (enough_frames, NULL, 120000, "a frame");
}

/* Frames until the view's scene says its last frame was complete. */
static guint
wait_complete (Frames *f, WickTimelineScene *scene)
{
  guint n = 1;
  wait_frames (f, 1);
  while (!wick_timeline_scene_get_complete (scene) && n < 1000)
    {
      wait_frames (f, 1);
      n++;
    }
  return n;
}

static GtkEventController *
scroll_controller (GtkWidget *widget)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (GTK_IS_EVENT_CONTROLLER_SCROLL (c))
        return GTK_EVENT_CONTROLLER (c);
    }
  g_error ("the timeline has no scroll controller");
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? MAX (atoi (argv[1]), 1) : 3;
  setvbuf (stdout, NULL, _IOLBF, 0);
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  const char *env = g_getenv ("WICK_BENCH_SPANS");
  guint64 n_spans = env ? g_ascii_strtoull (env, NULL, 10) : 10000000;
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();
  find_server ();

  gint64 t0 = g_get_monotonic_time ();
  WickDocument *document = build_tracks_document (n_spans, 64, (guint)MIN (n_spans / 10, 1000000),
                                                  (guint)MIN (n_spans / 100, 100000));
  guint n;
  wick_document_get_spans (document, &n);
  printf ("timeline window: %u spans over 64 threads, built in %.1f s\n", n,
          (g_get_monotonic_time () - t0) / 1e6);
  WickWindow *w = app_test_window_new (app, 1920, 1080);
  t0 = g_get_monotonic_time ();
  wick_window_set_document (w, document);
  g_object_unref (document);
  GtkWidget *view = wick_window_get_view (w, "timeline");
  wick_window_show_page (w, "timeline");
  app_test_wait_drawn (view, 600000, "the timeline");
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (view);
  WickTimelineScene *scene = wick_timeline_view_get_scene (timeline);
  Frames f = { 0 };
  series_init (&f.s);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (w));
  g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &f);
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &f);
  gtk_widget_queue_draw (view);
  wait_complete (&f, scene);
  printf ("  shown in %.1f s; timeline %dx%d, renderer %s, %d rounds; X server CPU %s\n",
          (g_get_monotonic_time () - t0) / 1e6, gtk_widget_get_width (view),
          gtk_widget_get_height (view), g_getenv ("GSK_RENDERER"), rounds,
          server_schedstat ? "read" : "not found (0)");
  printf ("  ms a frame, median (min-max): %-29s %-27s %-27s %s\n", "before-paint to after-paint",
          "its CPU", "to the server's end", "server CPU, frames, > 8 ms");

  WickSelection *selection = wick_window_get_selection (w);
  guint64 start, end;
  wick_timeline_scene_get_extent (scene, &start, &end);
  int width = gtk_widget_get_width (view);
  Series all, firsts;
  series_init (&all);
  series_init (&firsts);

  /* The whole trace, the pointer moving over it. */
  wick_selection_set_visible (selection, start, end);
  wait_complete (&f, scene);
  series_clear (&f.s);
  const char *shot = g_getenv ("WICK_BENCH_SHOT");
  if (shot != NULL && *shot != '\0')
    {
      app_test_save_png (GTK_WIDGET (w), shot);
      printf ("  wrote %s\n", shot);
    }
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 21; i++)
      {
        wick_timeline_view_set_hover (timeline, WICK_TIMELINE_GUTTER + 20 + i * 37 % (width - 300));
        wait_frames (&f, 1);
        series_take (&all, &f.s, FALSE);
      }
  wick_timeline_view_set_hover (timeline, -1);
  wait_frames (&f, 1);
  series_clear (&f.s);
  print_stats ("whole trace, hover moved", &all);
  series_clear (&all);

  /* Scrolled a wheel click a frame, down then back up. */
  GtkEventController *scroll = scroll_controller (view);
  gboolean handled;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 42; i++)
      {
        g_signal_emit_by_name (scroll, "scroll", 0.0, i < 21 ? 1.0 : -1.0, &handled);
        wait_frames (&f, 1);
        series_take (&all, &f.s, FALSE);
      }
  print_stats ("whole trace, scrolled 30 px", &all);
  series_clear (&all);

  /* Cold: the row cache emptied, frames until complete. */
  guint min_frames = G_MAXUINT, max_frames = 0;
  for (int r = 0; r < rounds; r++)
    {
      wick_timeline_scene_set_row_cache (scene, FALSE);
      wick_timeline_scene_set_row_cache (scene, TRUE);
      /* a range a pixel's width away: the view draws it anew */
      wick_selection_set_visible (selection, start, end - (end - start) / width);
      guint frames = wait_complete (&f, scene);
      min_frames = MIN (min_frames, frames);
      max_frames = MAX (max_frames, frames);
      series_take (&firsts, &f.s, TRUE);
      series_take (&all, &f.s, FALSE);
      wick_selection_set_visible (selection, start, end);
      wait_complete (&f, scene);
      series_clear (&f.s);
    }
  print_stats ("whole trace, cold: all", &all);
  print_stats ("whole trace, cold: first", &firsts);
  printf ("  %-28s complete after %u-%u frames\n", "", min_frames, max_frames);
  series_clear (&all);

  static const struct
  {
    const char *name;
    double fraction;
  } zooms[] = {
    { "whole trace, panned", 1.0 }, { "1/100", 1e-2 },         { "1/10 000", 1e-4 },
    { "1/100 000", 1e-5 },          { "1/1 000 000", 1e-6 },
  };
  for (guint z = 0; z < G_N_ELEMENTS (zooms); z++)
    {
      guint64 span = MAX ((guint64)((end - start) * zooms[z].fraction), 1000);
      for (int r = 0; r < rounds; r++)
        for (int i = 0; i < 21; i++)
          {
            guint64 offset
              = zooms[z].fraction >= 1.0
                  ? (guint64)((double)span / width * (i + 1 + r * 21))
                  : (guint64)((double)(end - start - span) * (i + r * 21) / (21.0 * rounds));
            wick_selection_set_visible (selection, start + offset, start + offset + span);
            wait_complete (&f, scene);
            series_take (&all, &f.s, FALSE);
          }
      print_stats (zooms[z].name, &all);
      series_clear (&all);
    }
  g_signal_handlers_disconnect_by_data (clock, &f);
  series_free (&f.s);
  series_free (&all);
  series_free (&firsts);
  app_test_window_close (w);
  g_object_unref (app);
  return 0;
}
