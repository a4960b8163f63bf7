/* wick-palette.h — the colours every view and export uses, light and dark.
 *
 * Memory categories have fixed, distinct hues from the GNOME palette
 * (parameter blue, activation orange, gradient purple, optimizer green,
 * other brown-grey) that read on both backgrounds. Spans take a hue from their
 * execution step (forward blue, backward orange, optimizer green, none teal)
 * and a shade from a hash of their name, so equal names look equal.
 */
#pragma once

#include <cairo.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  double r, g, b;
} WickRgb;

#define WICK_SPAN_SHADES 6
#define WICK_SPAN_COLOURS (4 * WICK_SPAN_SHADES)

WickRgb wick_palette_category (guint category, gboolean dark);
/* Translated: the legend's and the tooltips' word for the category. */
const char *wick_palette_category_name (guint category);
WickRgb wick_palette_span (guint colour_id, gboolean dark);
guint wick_palette_span_colour_id (guint step, const char *name);
WickRgb wick_palette_background (gboolean dark);
WickRgb wick_palette_foreground (gboolean dark);
WickRgb wick_palette_grid (gboolean dark);
WickRgb wick_palette_accent (gboolean dark);
/* The outline of torch.compile's regions on the timeline. */
WickRgb wick_palette_compiled (gboolean dark);
WickRgb wick_palette_device (guint series, gboolean dark);

void wick_palette_set (cairo_t *cr, WickRgb rgb, double alpha);

G_END_DECLS
