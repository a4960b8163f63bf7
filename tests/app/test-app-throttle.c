/* test-app-throttle.c — the views' rebuild throttle (wick-rebuild-throttle.h):
 * the first build runs, a build within four build times of the last is put
 * off with one redraw queued for when it may run, forcing runs anyway, the
 * queued redraw draws the widget and finds the wait over, and clearing
 * removes it. */
#include "config.h"

#include <adwaita.h>

#include "app-test-ui.h"
#include "ui/wick-rebuild-throttle.h"

/* A throttle whose last build ended now and took @cost_us. */
static void
built_now (WickRebuildThrottle *throttle, gint64 cost_us)
{
  throttle->last_build_us = g_get_monotonic_time ();
  throttle->build_cost_us = cost_us;
}

static void
test_first_build (void)
{
  GtkWidget *widget = g_object_ref_sink (gtk_drawing_area_new ());
  WickRebuildThrottle throttle;
  wick_rebuild_throttle_init (&throttle, widget);
  g_assert_true (wick_rebuild_throttle_begin (&throttle, FALSE));
  gint64 before = g_get_monotonic_time ();
  wick_rebuild_throttle_end (&throttle);
  g_assert_cmpint (throttle.last_build_us, >=, before);
  g_assert_cmpint (throttle.build_cost_us, >=, 0);
  g_assert_cmpint (throttle.build_cost_us, <=, throttle.last_build_us - throttle.began_us);
  g_assert_cmpuint (throttle.redraw_source, ==, 0);
  wick_rebuild_throttle_clear (&throttle);
  g_object_unref (widget);
}

static void
test_too_soon (void)
{
  GtkWidget *widget = g_object_ref_sink (gtk_drawing_area_new ());
  WickRebuildThrottle throttle;
  wick_rebuild_throttle_init (&throttle, widget);
  built_now (&throttle, 10 * G_USEC_PER_SEC);
  g_assert_false (wick_rebuild_throttle_begin (&throttle, FALSE));
  gint64 answered = g_get_monotonic_time ();
  guint source = throttle.redraw_source;
  g_assert_cmpuint (source, !=, 0);
  /* The redraw is due when four build times have passed: 40 s after the
   * last build (rounded up to the millisecond), not later. */
  GSource *timeout = g_main_context_find_source_by_id (NULL, source);
  g_assert_nonnull (timeout);
  gint64 due = g_source_get_ready_time (timeout);
  g_assert_cmpint (due, >=, throttle.last_build_us + 40 * G_USEC_PER_SEC);
  g_assert_cmpint (due, <=, answered + 40 * G_USEC_PER_SEC + 1000);
  /* Asked again: still too soon, the same one redraw queued. */
  g_assert_false (wick_rebuild_throttle_begin (&throttle, FALSE));
  g_assert_cmpuint (throttle.redraw_source, ==, source);
  /* Forced: builds now. */
  g_assert_true (wick_rebuild_throttle_begin (&throttle, TRUE));
  wick_rebuild_throttle_end (&throttle);
  /* Dispose's clear removes the queued redraw. */
  wick_rebuild_throttle_clear (&throttle);
  g_assert_cmpuint (throttle.redraw_source, ==, 0);
  g_assert_null (g_main_context_find_source_by_id (NULL, source));
  g_object_unref (widget);
}

typedef struct
{
  WickRebuildThrottle throttle;
  guint draws;
} Drawn;

static void
count_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  ((Drawn *)data)->draws++;
}

static gboolean
redraw_done (gpointer data)
{
  Drawn *drawn = data;
  return drawn->throttle.redraw_source == 0 && drawn->draws > 0;
}

static void
test_redraw_later (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *area = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), 50);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), 50);
  Drawn drawn = { 0 };
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), count_draw, &drawn, NULL);
  gtk_window_set_child (GTK_WINDOW (window), area);
  gtk_window_present (GTK_WINDOW (window));
  app_test_wait_drawn (area, 20000, "the drawing area");
  app_test_iterate_pending (2000);

  wick_rebuild_throttle_init (&drawn.throttle, area);
  built_now (&drawn.throttle, 20 * 1000); /* 20 ms: the redraw after 80 ms */
  g_assert_false (wick_rebuild_throttle_begin (&drawn.throttle, FALSE));
  g_assert_cmpuint (drawn.throttle.redraw_source, !=, 0);
  drawn.draws = 0;
  APP_TEST_WAIT (redraw_done, &drawn, 20000);
  /* The redraw came when the wait was over: the rebuild runs now. */
  g_assert_cmpint (g_get_monotonic_time () - drawn.throttle.last_build_us, >=,
                   4 * drawn.throttle.build_cost_us);
  g_assert_true (wick_rebuild_throttle_begin (&drawn.throttle, FALSE));
  wick_rebuild_throttle_end (&drawn.throttle);
  wick_rebuild_throttle_clear (&drawn.throttle);
  app_test_window_close (window);
}

/* Deferred (a page shown again): every unforced begin of the next frame
 * draws the old result (the timeline and its overview both ask in the
 * switch's frame), and the frame after it rebuilds. */
static void
test_deferred_frame (void)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *area = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), 50);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), 50);
  Drawn drawn = { 0 };
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), count_draw, &drawn, NULL);
  gtk_window_set_child (GTK_WINDOW (window), area);
  gtk_window_present (GTK_WINDOW (window));
  app_test_wait_drawn (area, 20000, "the drawing area");
  app_test_iterate_pending (2000);
  wick_rebuild_throttle_init (&drawn.throttle, area);
  drawn.throttle.last_build_us = g_get_monotonic_time () - 10 * G_USEC_PER_SEC; /* long ago */
  drawn.throttle.build_cost_us = 1000;
  wick_rebuild_throttle_defer (&drawn.throttle);
  g_assert_false (wick_rebuild_throttle_begin (&drawn.throttle, FALSE));
  g_assert_false (wick_rebuild_throttle_begin (&drawn.throttle, FALSE)); /* the same frame */
  g_assert_cmpuint (drawn.throttle.redraw_source, !=, 0);
  drawn.draws = 0;
  APP_TEST_WAIT (redraw_done, &drawn, 20000);
  g_assert_true (wick_rebuild_throttle_begin (&drawn.throttle, FALSE));
  wick_rebuild_throttle_end (&drawn.throttle);
  wick_rebuild_throttle_clear (&drawn.throttle);
  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  if (!app_test_ui_init_display (&argc, &argv))
    return 0;
  g_test_add_func ("/throttle/first-build", test_first_build);
  g_test_add_func ("/throttle/too-soon", test_too_soon);
  g_test_add_func ("/throttle/redraw-later", test_redraw_later);
  g_test_add_func ("/throttle/deferred-frame", test_deferred_frame);
  return g_test_run ();
}
