/* app-test-ui.c — the app's window tests' shared helpers (app-test-ui.h). */
#include "config.h"

#include "app-test-ui.h"

#include "ui/wick-window-private.h"

static void
setup_environment (void)
{
  /* Settings in memory: a test never writes the user's settings, and every
   * run starts from the schema's defaults. */
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
}

static WickApplication *
app_start (void)
{
  WickApplication *app = wick_application_new ();
  g_autoptr (GError) error = NULL;
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    g_error ("cannot register the application: %s", error->message);
  return app;
}

gboolean
app_test_ui_init_display (int *argc, char ***argv)
{
  g_test_init (argc, argv, NULL);
  setup_environment ();
  if (!gtk_init_check ())
    {
      /* A TAP plan of no tests with SKIP: meson reports the test skipped. */
      g_print ("1..0 # SKIP no display; the app's window tests run under Xvfb (tools/test.sh)\n");
      return FALSE;
    }
  adw_init ();
  return TRUE;
}

WickApplication *
app_test_ui_init (int *argc, char ***argv)
{
  if (!app_test_ui_init_display (argc, argv))
    return NULL;
  return app_start ();
}

WickApplication *
app_test_ui_app_new (void)
{
  setup_environment ();
  if (!gtk_init_check ())
    g_error ("no display: run this under xvfb-run");
  adw_init ();
  return app_start ();
}

int
app_test_ui_run (WickApplication *app)
{
  int status = g_test_run ();
  g_object_unref (app);
  return status;
}

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

void
app_test_ui_disable_animations (void)
{
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
}

void
app_test_wait_until (gboolean (*done) (gpointer data), gpointer data, guint timeout_ms,
                     const char *what)
{
  if (done (data))
    return;
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  /* A blocking iteration wakes for the app's own events; this source wakes it
   * for what happens elsewhere (another thread, a writer process). */
  guint waker = g_timeout_add (2, wake, NULL);
  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("timed out after %u ms waiting for %s", timeout_ms, what);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (waker);
}

void
app_test_iterate_pending (guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_ms * 1000;
  while (g_main_context_pending (NULL) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE);
}

static gboolean
is_mapped_and_allocated (gpointer widget)
{
  return gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 0
         && gtk_widget_get_height (widget) > 0;
}

static void
count_paint (GdkFrameClock *clock, gpointer data)
{
  (*(guint *)data)++;
}

static gboolean
painted (gpointer data)
{
  return *(guint *)data > 0;
}

void
app_test_wait_drawn (GtkWidget *widget, guint timeout_ms, const char *what)
{
  app_test_wait_until (is_mapped_and_allocated, widget, timeout_ms, what);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  g_assert_nonnull (clock);
  guint paints = 0;
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (count_paint), &paints);
  /* Queued now, drawn in the next frame's paint phase, which after-paint ends. */
  gtk_widget_queue_draw (widget);
  app_test_wait_until (painted, &paints, timeout_ms, what);
  g_signal_handler_disconnect (clock, handler);
}

GtkWidget *
app_test_present_page (GtkWidget *page, int width, int height, const char *what)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_child (GTK_WINDOW (window), page);
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  app_test_wait_drawn (page, 10000, what);
  return window;
}

WickDocument *
app_test_live_document (void)
{
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  const char *meta = APP_TEST_META;
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_document_feed_line (document, meta, strlen (meta) - 1, &error));
  const char *root = "{\"kind\":\"span_start\",\"id\":\"r\",\"name\":\"root\",\"start_ns\":0,"
                     "\"span_kind\":\"function\",\"measured\":true}";
  g_assert_true (wick_document_feed_line (document, root, strlen (root), &error));
  g_assert_no_error (error);
  return document;
}

gboolean
app_test_window_is_document (gpointer window)
{
  return g_strcmp0 (wick_window_get_state (window), "document") == 0;
}

gboolean
app_test_window_not_loading (gpointer window)
{
  return g_strcmp0 (wick_window_get_state (window), "loading") != 0;
}

WickWindow *
app_test_window_new (WickApplication *app, int width, int height)
{
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  if (width > 0 && height > 0)
    gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

WickWindow *
app_test_window_start_load (WickApplication *app, const char *path, int width, int height)
{
  WickWindow *window = app_test_window_new (app, width, height);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (window, file);
  return window;
}

WickWindow *
app_test_window_load (WickApplication *app, const char *path, int width, int height)
{
  WickWindow *window = app_test_window_start_load (app, path, width, height);
  g_autofree char *what = g_strdup_printf ("the load of %s to end", path);
  app_test_wait_until (app_test_window_not_loading, window, 60000, what);
  return window;
}

WickWindow *
app_test_window_open (WickApplication *app, const char *path, int width, int height)
{
  WickWindow *window = app_test_window_load (app, path, width, height);
  if (!app_test_window_is_document (window))
    g_error ("%s did not open: the window shows its %s page", path, wick_window_get_state (window));
  return window;
}

WickWindow *
app_test_window_open_example (WickApplication *app)
{
  g_autofree char *path = app_test_example_path ();
  WickWindow *window = app_test_window_open (app, path, 1400, 900);
  app_test_wait_drawn (wick_window_get_view (window, "timeline"), 10000,
                       "the example's timeline to be drawn");
  return window;
}

/* GtkWindow's own idle: destroying a window removes its shortcuts and
 * mnemonics, which queues it; GtkWindow's finalize removes it when the window
 * goes first, and while anything still holds the window it runs on a live
 * object. Not Wick's: it is let run, and the check made again. */
#define GTK_KEYS_CHANGED_SOURCE "[gtk] handle_keys_changed"

void
app_test_window_assert_no_sources (gpointer window)
{
  g_assert_nonnull (window);
  GSource *source = g_main_context_find_source_by_user_data (NULL, window);
  gint64 deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  while (source != NULL && g_strcmp0 (g_source_get_name (source), GTK_KEYS_CHANGED_SOURCE) == 0
         && g_get_monotonic_time () < deadline)
    {
      guint id = g_source_get_id (source);
      while (g_main_context_find_source_by_id (NULL, id) != NULL
             && g_get_monotonic_time () < deadline)
        g_main_context_iteration (NULL, FALSE);
      source = g_main_context_find_source_by_user_data (NULL, window);
    }
  if (source != NULL)
    /* @window itself may be finalized by now: only its address is named. */
    g_error ("a main-loop source (%s, priority %d) still calls back into the destroyed window %p",
             g_source_get_name (source) ? g_source_get_name (source) : "unnamed",
             g_source_get_priority (source), window);
}

void
app_test_window_close (gpointer window)
{
  gtk_window_destroy (GTK_WINDOW (window));
  app_test_window_assert_no_sources (window);
  app_test_iterate_pending (2000);
}

GdkTexture *
app_test_render_texture (GtkWidget *widget)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  if (width <= 0 || height <= 0)
    return NULL;
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    return NULL;
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  GdkTexture *texture
    = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_render_node_unref (node);
  return texture;
}

cairo_surface_t *
app_test_render_widget (GtkWidget *widget)
{
  g_autoptr (GdkTexture) texture = app_test_render_texture (widget);
  if (texture == NULL)
    g_error ("%s drew nothing", G_OBJECT_TYPE_NAME (widget));
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  gdk_texture_download (texture, cairo_image_surface_get_data (surface),
                        cairo_image_surface_get_stride (surface));
  cairo_surface_mark_dirty (surface);
  return surface;
}

void
app_test_save_png (GtkWidget *widget, const char *path)
{
  app_test_wait_drawn (widget, 20000, path);
  g_autoptr (GdkTexture) texture = app_test_render_texture (widget);
  if (texture == NULL)
    g_error ("%s: the window drew nothing", path);
  if (!gdk_texture_save_to_png (texture, path))
    g_error ("%s: cannot write the PNG", path);
}

void
app_test_screenshot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("WICK_SCREENSHOT_DIR");
  if (dir == NULL)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  app_test_save_png (widget, path);
  g_test_message ("wrote %s", path);
}
