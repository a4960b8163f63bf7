/* app-test-util.h — helpers for the app's tests: synthetic traces, pixel reads. */
#pragma once

#include <cairo.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <locale.h>

#include "model/wick-document.h"

/* A meta line (candle-graph/trace/10, host timing, nothing captured but
 * spans), with its newline. */
#define APP_TEST_META                                                                              \
  "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/"                                            \
  "10\",\"run_id\":\"r\",\"correlation_id\":\"c\","                                                \
  "\"entrypoint\":\"main\",\"phase\":\"infer\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"capture_"  \
  "step\":1,"                                                                                      \
  "\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{"          \
  "\"measurement_scope\":\"profiled_work\",\"operations\":\"none\",\"logical_memory\":\"none\","   \
  "\"physical_memory\":\"none\",\"device_timing\":\"none\"},\"tags\":{}}\n"

/* The app's gettext setup (main.c) on the build tree's catalogs, in C.UTF-8
 * (not "C": gettext honours LANGUAGE in it), for tests that switch LANGUAGE.
 * FALSE, having printed a TAP skip, when the machine has no C.UTF-8. */
static inline gboolean
app_test_bind_build_catalogs (void)
{
  if (setlocale (LC_ALL, "C.UTF-8") == NULL)
    {
      g_print ("1..0 # SKIP no C.UTF-8 locale (gettext ignores LANGUAGE in \"C\")\n");
      return FALSE;
    }
  g_autofree char *catalogs = g_build_filename (WICK_BUILD_DIR, "po", NULL);
  bindtextdomain (GETTEXT_PACKAGE, catalogs);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  return TRUE;
}

/* A document from JSONL text fed line by line (extensions kept). */
static inline WickDocument *
app_test_document_from_text (const char *text)
{
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_autoptr (GError) error = NULL;
      if (!wick_document_feed_line (document, lines[i], strlen (lines[i]), &error))
        g_error ("line %u: %s", i + 1, error->message);
    }
  g_autoptr (GError) error = NULL;
  wick_document_finish (document, &error);
  return document;
}

/* The example trace shipped in data/. */
static inline char *
app_test_example_path (void)
{
  return g_build_filename (WICK_SOURCE_DIR, "data", "example-trace.jsonl", NULL);
}

static inline WickDocument *
app_test_load_example (void)
{
  g_autofree char *path = app_test_example_path ();
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  if (!wick_document_load_file (document, path, NULL, NULL, NULL, &error))
    g_error ("%s: %s", path, error->message);
  return document;
}

/* RGB of an ARGB32 (premultiplied, opaque here) pixel. */
static inline guint32
app_test_pixel (cairo_surface_t *surface, int x, int y)
{
  cairo_surface_flush (surface);
  const guint8 *data = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  return *(const guint32 *)(data + (gsize)y * stride + (gsize)x * 4) & 0xffffff;
}

static inline guint32
app_test_rgb (double r, double g, double b)
{
  return ((guint32)(r * 255 + 0.5) << 16) | ((guint32)(g * 255 + 0.5) << 8)
         | (guint32)(b * 255 + 0.5);
}

/* Counts pixels within @tolerance (per channel) of @rgb. */
static inline guint
app_test_count_colour (cairo_surface_t *surface, guint32 rgb, int tolerance)
{
  cairo_surface_flush (surface);
  int w = cairo_image_surface_get_width (surface), h = cairo_image_surface_get_height (surface);
  guint count = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint32 p = app_test_pixel (surface, x, y);
        int dr = (int)(p >> 16 & 0xff) - (int)(rgb >> 16 & 0xff);
        int dg = (int)(p >> 8 & 0xff) - (int)(rgb >> 8 & 0xff);
        int db = (int)(p & 0xff) - (int)(rgb & 0xff);
        if (ABS (dr) <= tolerance && ABS (dg) <= tolerance && ABS (db) <= tolerance)
          count++;
      }
  return count;
}
