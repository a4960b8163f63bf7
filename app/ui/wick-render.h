/* wick-render.h — draw one view of a document into a PNG, SVG or PDF file.
 *
 * The same drawing code as the window (wick-timeline-scene, wick-memory-chart,
 * wick-report-draw), with no GTK: `wick-trace render` and the app's Export…
 * both call wick_render_to_file(). The format follows the file's extension.
 * A range of 0:0 means the whole trace.
 */
#pragma once

#include <cairo.h>

#include "model/wick-document.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_RENDER_TIMELINE,
  WICK_RENDER_MEMORY,
  WICK_RENDER_COVERAGE,
  WICK_RENDER_HEALTH,
} WickRenderView;

typedef struct
{
  WickRenderView view;
  int width, height;
  guint64 start_ns, end_ns; /* both 0: whole trace */
  gboolean dark;
} WickRenderOptions;

gboolean wick_render_view_from_string (const char *name, WickRenderView *view);
const char *wick_render_view_to_string (WickRenderView view);

gboolean wick_render_to_file (WickDocument *document, const WickRenderOptions *options,
                              const char *path, GError **error);

G_END_DECLS
