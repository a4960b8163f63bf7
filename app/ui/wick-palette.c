/* wick-palette.c — see wick-palette.h. */
#include "wick-palette.h"

#include <glib/gi18n.h>

#define RGB(hex)                                                                                   \
  {                                                                                                \
    ((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex)&0xff) / 255.0                \
  }

static const WickRgb category_light[] = {
  RGB (0x1c71d8), RGB (0xe66100), RGB (0x813d9c), RGB (0x26a269), RGB (0x865e3c),
};
static const WickRgb category_dark[] = {
  RGB (0x62a0ea), RGB (0xffa348), RGB (0xc061cb), RGB (0x57e389), RGB (0xcdab8f),
};
/* Translators: the memory categories of the memory chart's legend and of a tensor */
static const char *category_names[]
  = { NC_ ("memory category", "parameter"), NC_ ("memory category", "activation"),
      NC_ ("memory category", "gradient"), NC_ ("memory category", "optimizer"),
      NC_ ("memory category", "other") };

/* Rows: step none, forward, backward, optimizer; columns: shades. */
static const WickRgb span_light[4][WICK_SPAN_SHADES] = {
  { RGB (0x63c5c7), RGB (0x4fb3b5), RGB (0x7dd3d4), RGB (0x56a9c6), RGB (0x8cc9bf),
    RGB (0x6bb8a8) },
  { RGB (0x7fb0f0), RGB (0x99c1f1), RGB (0x6a9fe6), RGB (0x8fb8f5), RGB (0xa4c8f3),
    RGB (0x74a6ea) },
  { RGB (0xf8b36a), RGB (0xffbe6f), RGB (0xf5a35c), RGB (0xf9c27e), RGB (0xeea070),
    RGB (0xfcb07a) },
  { RGB (0x8ff0a4), RGB (0x7ddc95), RGB (0x9fe7a8), RGB (0x6fd08c), RGB (0xaaf0b4),
    RGB (0x86e09b) },
};
static const WickRgb span_dark[4][WICK_SPAN_SHADES] = {
  { RGB (0x2f7f81), RGB (0x286f71), RGB (0x3a8c8d), RGB (0x2b6f86), RGB (0x3d7f75),
    RGB (0x2f7466) },
  { RGB (0x2f5f9e), RGB (0x3a6cb0), RGB (0x28568f), RGB (0x3b69a8), RGB (0x4576b5),
    RGB (0x2c5a96) },
  { RGB (0xa35a1c), RGB (0xb0672a), RGB (0x964f16), RGB (0xb3722f), RGB (0x9c5a2a),
    RGB (0xa8622a) },
  { RGB (0x2d8a4a), RGB (0x267a40), RGB (0x359653), RGB (0x21703a), RGB (0x3a9e5a),
    RGB (0x2b8246) },
};
static const WickRgb device_series[] = { RGB (0xc01c28), RGB (0x3d3846), RGB (0x9141ac) };
static const WickRgb device_series_dark[] = { RGB (0xff7b63), RGB (0xdeddda), RGB (0xdc8add) };

WickRgb
wick_palette_category (guint category, gboolean dark)
{
  category = MIN (category, G_N_ELEMENTS (category_light) - 1);
  return dark ? category_dark[category] : category_light[category];
}

const char *
wick_palette_category_name (guint category)
{
  return g_dpgettext2 (NULL, "memory category",
                       category_names[MIN (category, G_N_ELEMENTS (category_names) - 1)]);
}

WickRgb
wick_palette_span (guint colour_id, gboolean dark)
{
  colour_id %= WICK_SPAN_COLOURS;
  guint row = colour_id / WICK_SPAN_SHADES, shade = colour_id % WICK_SPAN_SHADES;
  return dark ? span_dark[row][shade] : span_light[row][shade];
}

guint
wick_palette_span_colour_id (guint step, const char *name)
{
  return MIN (step, 3u) * WICK_SPAN_SHADES + (name ? g_str_hash (name) : 0) % WICK_SPAN_SHADES;
}

WickRgb
wick_palette_background (gboolean dark)
{
  return dark ? (WickRgb)RGB (0x1e1e1e) : (WickRgb)RGB (0xffffff);
}

WickRgb
wick_palette_foreground (gboolean dark)
{
  return dark ? (WickRgb)RGB (0xeeeeee) : (WickRgb)RGB (0x241f31);
}

WickRgb
wick_palette_grid (gboolean dark)
{
  return dark ? (WickRgb)RGB (0x3a3a3a) : (WickRgb)RGB (0xe6e6e6);
}

WickRgb
wick_palette_accent (gboolean dark)
{
  return dark ? (WickRgb)RGB (0x78aeed) : (WickRgb)RGB (0x1c71d8);
}

WickRgb
wick_palette_compiled (gboolean dark)
{
  /* GNOME's purple: apart from the span hues and the blue accent */
  return dark ? (WickRgb)RGB (0xdc8add) : (WickRgb)RGB (0x813d9c);
}

WickRgb
wick_palette_device (guint series, gboolean dark)
{
  series = MIN (series, G_N_ELEMENTS (device_series) - 1);
  return dark ? device_series_dark[series] : device_series[series];
}

void
wick_palette_set (cairo_t *cr, WickRgb rgb, double alpha)
{
  cairo_set_source_rgba (cr, rgb.r, rgb.g, rgb.b, alpha);
}
