/* app-test-ui.h — the one copy of what the app's window tests share (and the
 * screenshot tool): main()'s setup, waiting on a condition with a deadline
 * (never a fixed time), waiting for a widget to be drawn, opening and closing
 * windows, rendering a widget. Built once into a static library
 * (tests/app/meson.build, app_test_ui_dep). */
#pragma once

#include <adwaita.h>

#include "app-test-util.h"
#include "ui/wick-application.h"
#include "ui/wick-window.h"

G_BEGIN_DECLS

/* main()'s setup for a window test: g_test_init, settings in memory, GTK,
 * libadwaita, the application registered. Without a display
 * it prints a TAP plan of no tests with SKIP (what meson counts as skipped)
 * and returns NULL: main then returns 0. */
WickApplication *app_test_ui_init (int *argc, char ***argv);
/* The same without the application (widget tests): FALSE without a display,
 * after the TAP plan that skips. */
gboolean app_test_ui_init_display (int *argc, char ***argv);

/* The same without g_test_init, for a tool (the screenshots): a display is
 * required (it fails without one). */
WickApplication *app_test_ui_app_new (void);

/* g_test_run, then the application released: main()'s end. */
int app_test_ui_run (WickApplication *app);

/* Transitions off (the compare test, the screenshots). Not for the window
 * test: with animations off, GTK 4.8 allocates the view switcher bar's box
 * at width 0 when a window narrows to 700 px (a Gtk-WARNING, fatal in a
 * test). */
void app_test_ui_disable_animations (void);

/* Runs the default main context until @done (data) holds; after @timeout_ms
 * the test fails naming @what. The main context is iterated (blocking, woken
 * at least every few milliseconds so a condition set by another thread or
 * process is seen). The deadlines are generous: this runs on loaded machines
 * and under xvfb-run. */
void app_test_wait_until (gboolean (*done) (gpointer data), gpointer data, guint timeout_ms,
                          const char *what);
/* app_test_wait_until naming the condition function. */
#define APP_TEST_WAIT(done, data, timeout_ms) app_test_wait_until (done, data, timeout_ms, #done)

/* Runs the default main context until nothing is pending (idle handlers,
 * redraws), at most @timeout_ms. Decides nothing: for letting queued work run
 * (a destroyed window's idles) before the next check. */
void app_test_iterate_pending (guint timeout_ms);

/* Waits until @widget is mapped and allocated (width and height > 0) and the
 * frame clock has then painted one more frame with it queued for drawing;
 * fails naming @what after @timeout_ms. */
void app_test_wait_drawn (GtkWidget *widget, guint timeout_ms, const char *what);

/* A plain window @width × @height with @page as its child, presented; waits
 * until @page is drawn (app_test_wait_drawn, naming @what). */
GtkWidget *app_test_present_page (GtkWidget *page, int width, int height, const char *what);

/* A growing (live) document with extensions: APP_TEST_META's meta line and
 * an open measured root span "r" fed, not finished. */
WickDocument *app_test_live_document (void);

/* Conditions for app_test_wait_until on a WickWindow. */
gboolean app_test_window_is_document (gpointer window);
gboolean app_test_window_not_loading (gpointer window);

/* A new window @width × @height (its default size unless 0), presented. */
WickWindow *app_test_window_new (WickApplication *app, int width, int height);
/* The same with the load of @path begun (the window shows its loading page). */
WickWindow *app_test_window_start_load (WickApplication *app, const char *path, int width,
                                        int height);
/* A window @width × @height presented, @path loaded into it; waits until the
 * load ended (the document shown, or the welcome page after a failure). */
WickWindow *app_test_window_load (WickApplication *app, const char *path, int width, int height);
/* The same, failing unless the document is shown. */
WickWindow *app_test_window_open (WickApplication *app, const char *path, int width, int height);
/* data/example-trace.jsonl at 1400 × 900, its timeline drawn. */
WickWindow *app_test_window_open_example (WickApplication *app);
/* Fails when a main-loop source (a timer, an idle) of the default context
 * still has @window as its data: it would fire on the destroyed window. */
void app_test_window_assert_no_sources (gpointer window);
/* Destroys @window (any GtkWindow), checks that none of its timers or idles
 * is left (app_test_window_assert_no_sources), and lets pending work run. */
void app_test_window_close (gpointer window);

/* @widget as drawn now, through its native's renderer: a texture, or NULL
 * when it draws nothing (not drawn yet). */
GdkTexture *app_test_render_texture (GtkWidget *widget);
/* The same as an ARGB32 image surface (the widget must draw something). */
cairo_surface_t *app_test_render_widget (GtkWidget *widget);
/* @widget (a window) drawn as a PNG at @path: waits for it to be drawn
 * first. Fails the test naming @path when it draws nothing. */
void app_test_save_png (GtkWidget *widget, const char *path);
/* With WICK_SCREENSHOT_DIR set, @widget as @name there (docs/images); a
 * message names the file. Nothing without it. */
void app_test_screenshot (GtkWidget *widget, const char *name);

G_END_DECLS
