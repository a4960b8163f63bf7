/* wick-render.c — see wick-render.h. */
#include "wick-render.h"
#include "wick-render-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <glib/gi18n.h>

#include "model/wick-gradient-report.h"
#include "wick-memory-chart.h"
#include "wick-report-draw.h"
#include "wick-timeline-scene.h"

static const char *view_names[] = { "timeline", "memory", "coverage", "health" };

gboolean
wick_render_view_from_string (const char *name, WickRenderView *view)
{
  for (guint i = 0; i < G_N_ELEMENTS (view_names); i++)
    if (g_strcmp0 (name, view_names[i]) == 0)
      {
        *view = i;
        return TRUE;
      }
  return FALSE;
}

const char *
wick_render_view_to_string (WickRenderView view)
{
  return view < G_N_ELEMENTS (view_names) ? view_names[view] : NULL;
}

static void
draw_timeline (WickDocument *document, const WickRenderOptions *options, cairo_t *cr)
{
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickTimelineViewport view = { 0 };
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  if (options->end_ns > options->start_ns)
    {
      view.start_ns = options->start_ns;
      view.end_ns = options->end_ns;
    }
  view.width = options->width;
  view.height = options->height;
  view.dark = options->dark;
  view.selected_type = WICK_RECORD_NONE;
  view.selected_index = -1;
  view.hover_x = -1;
  view.legend = TRUE;
  wick_timeline_scene_draw (scene, cr, &view);
}

static void
draw_memory (WickDocument *document, const WickRenderOptions *options, cairo_t *cr)
{
  g_autoptr (WickMemoryChart) chart = wick_memory_chart_new (document);
  g_autoptr (WickTimelineScene) scene = wick_timeline_scene_new (document);
  WickMemoryViewport view = { 0 };
  guint64 mem_start, mem_end;
  wick_timeline_scene_get_extent (scene, &view.start_ns, &view.end_ns);
  wick_memory_chart_get_extent (chart, &mem_start, &mem_end);
  view.origin_ns = view.start_ns;
  view.start_ns = MIN (view.start_ns, mem_start);
  view.end_ns = MAX (view.end_ns, mem_end);
  if (options->end_ns > options->start_ns)
    {
      view.start_ns = options->start_ns;
      view.end_ns = options->end_ns;
    }
  view.width = options->width;
  view.height = options->height;
  view.dark = options->dark;
  view.hover_x = -1;
  wick_memory_chart_draw (chart, cr, &view);
}

void
wick_render_draw (WickDocument *document, const WickRenderOptions *options, cairo_t *cr)
{
  switch (options->view)
    {
      case WICK_RENDER_TIMELINE:
        draw_timeline (document, options, cr);
        break;
      case WICK_RENDER_MEMORY:
        draw_memory (document, options, cr);
        break;
      case WICK_RENDER_COVERAGE:
        {
          g_autoptr (WickGradientReport) report = wick_gradient_report_new (document);
          wick_coverage_draw (document, report, cr, options->width, options->height, options->dark);
          break;
        }
      case WICK_RENDER_HEALTH:
        wick_health_draw (document, cr, options->width, options->height, options->dark);
        break;
      default:
        g_assert_not_reached ();
    }
}

static gboolean
check_surface (cairo_surface_t *surface, const char *path, GError **error)
{
  cairo_status_t status = cairo_surface_status (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _ ("Cannot write “%s”: %s"), path,
                   cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

gboolean
wick_render_to_file (WickDocument *document, const WickRenderOptions *options, const char *path,
                     GError **error)
{
  g_return_val_if_fail (options->width > 0 && options->height > 0, FALSE);
  g_autofree char *lower = g_ascii_strdown (path, -1);
  cairo_surface_t *surface;
  gboolean png = FALSE;
  if (g_str_has_suffix (lower, ".png"))
    {
      surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, options->width, options->height);
      png = TRUE;
    }
  else if (g_str_has_suffix (lower, ".svg"))
    surface = cairo_svg_surface_create (path, options->width, options->height);
  else if (g_str_has_suffix (lower, ".pdf"))
    surface = cairo_pdf_surface_create (path, options->width, options->height);
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _ ("Cannot tell the format of “%s”: the name must end in .png, .svg or .pdf"),
                   path);
      return FALSE;
    }
  if (!check_surface (surface, path, error))
    {
      cairo_surface_destroy (surface);
      return FALSE;
    }
  cairo_t *cr = cairo_create (surface);
  wick_render_draw (document, options, cr);
  cairo_destroy (cr);
  gboolean ok = TRUE;
  if (png)
    {
      cairo_status_t status = cairo_surface_write_to_png (surface, path);
      if (status != CAIRO_STATUS_SUCCESS)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _ ("Cannot write “%s”: %s"), path,
                       cairo_status_to_string (status));
          ok = FALSE;
        }
    }
  cairo_surface_finish (surface);
  if (ok)
    ok = check_surface (surface, path, error);
  cairo_surface_destroy (surface);
  return ok;
}
