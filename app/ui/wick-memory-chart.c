/* wick-memory-chart.c — see wick-memory-chart.h for the contract. */
#include "wick-memory-chart.h"
#include "wick-memory-chart-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "wick-format.h"
#include "wick-palette.h"
#include "wick-timeline-axis.h"

const guint wick_memory_stack_order[5] = {
  WICK_CATEGORY_PARAMETER,  WICK_CATEGORY_OPTIMIZER, WICK_CATEGORY_GRADIENT,
  WICK_CATEGORY_ACTIVATION, WICK_CATEGORY_OTHER,
};

typedef struct
{
  char *name;
  const WickMemorySeries *logical;        /* NULL when none */
  const WickDeviceMemorySeries *physical; /* NULL when none */
  guint64 peak_total, max_physical, capacity;
} ChartDevice;

struct _WickMemoryChart
{
  GPtrArray *logical;
  GPtrArray *physical;
  GArray *devices; /* ChartDevice */
  guint64 start_ns, end_ns;
};

static ChartDevice *
chart_device (WickMemoryChart *self, WickDocument *document, WickStr device)
{
  const char *name = wick_document_str (document, device);
  for (guint i = 0; i < self->devices->len; i++)
    {
      ChartDevice *d = &g_array_index (self->devices, ChartDevice, i);
      if (g_strcmp0 (d->name, name) == 0)
        return d;
    }
  ChartDevice d = { g_strdup (name ? name : "?"), NULL, NULL, 0, 0, 0 };
  g_array_append_val (self->devices, d);
  return &g_array_index (self->devices, ChartDevice, self->devices->len - 1);
}

static void
extend (WickMemoryChart *self, guint64 t)
{
  self->start_ns = MIN (self->start_ns, t);
  self->end_ns = MAX (self->end_ns, t);
}

WickMemoryChart *
wick_memory_chart_new (WickDocument *document)
{
  WickMemoryChart *self = g_new0 (WickMemoryChart, 1);
  self->logical = wick_memory_series_build (document);
  self->physical = wick_device_memory_series_build (document);
  self->devices = g_array_new (FALSE, TRUE, sizeof (ChartDevice));
  self->start_ns = G_MAXUINT64;
  for (guint i = 0; i < self->logical->len; i++)
    {
      const WickMemorySeries *series = g_ptr_array_index (self->logical, i);
      ChartDevice *d = chart_device (self, document, series->device);
      d->logical = series;
      d->peak_total = series->peak_total;
      if (series->points->len > 0)
        {
          extend (self, g_array_index (series->points, WickMemoryPoint, 0).t_ns);
          extend (self,
                  g_array_index (series->points, WickMemoryPoint, series->points->len - 1).t_ns);
        }
    }
  for (guint i = 0; i < self->physical->len; i++)
    {
      const WickDeviceMemorySeries *series = g_ptr_array_index (self->physical, i);
      ChartDevice *d = chart_device (self, document, series->device);
      d->physical = series;
      d->max_physical
        = MAX (series->max[WICK_DEVICE_SERIES_USED], series->max[WICK_DEVICE_SERIES_RESERVED]);
      d->capacity = series->max[WICK_DEVICE_SERIES_CAPACITY];
      for (guint k = 0; k < WICK_N_DEVICE_SERIES; k++)
        for (guint j = 0; j < series->series[k]->len; j++)
          extend (self, g_array_index (series->series[k], WickSamplePoint, j).t_ns);
    }
  if (self->start_ns == G_MAXUINT64)
    self->start_ns = self->end_ns = 0;
  return self;
}

void
wick_memory_chart_free (WickMemoryChart *self)
{
  if (self == NULL)
    return;
  for (guint i = 0; i < self->devices->len; i++)
    g_free (g_array_index (self->devices, ChartDevice, i).name);
  g_array_unref (self->devices);
  g_ptr_array_unref (self->logical);
  g_ptr_array_unref (self->physical);
  g_free (self);
}

guint
wick_memory_chart_get_n_devices (WickMemoryChart *self)
{
  return self->devices->len;
}

const char *
wick_memory_chart_get_device_name (WickMemoryChart *self, guint i)
{
  g_return_val_if_fail (i < self->devices->len, NULL);
  return g_array_index (self->devices, ChartDevice, i).name;
}

const WickMemorySeries *
wick_memory_chart_get_logical (WickMemoryChart *self, guint i)
{
  g_return_val_if_fail (i < self->devices->len, NULL);
  return g_array_index (self->devices, ChartDevice, i).logical;
}

void
wick_memory_chart_get_extent (WickMemoryChart *self, guint64 *start_ns, guint64 *end_ns)
{
  *start_ns = self->start_ns;
  *end_ns = MAX (self->end_ns, wick_time_add (self->start_ns, 1));
}

static gint64
point_at (const WickMemorySeries *series, guint64 t)
{
  guint lo = 0, hi = series->points->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (series->points, WickMemoryPoint, mid).t_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return (gint64)lo - 1;
}

static gboolean
sample_at (const WickDeviceMemorySeries *series, WickDeviceSeriesKind kind, guint64 t,
           guint64 *value)
{
  gboolean found = FALSE;
  guint64 best_t = 0;
  if (series == NULL)
    return FALSE;
  for (guint i = 0; i < series->series[kind]->len; i++)
    {
      const WickSamplePoint *p = &g_array_index (series->series[kind], WickSamplePoint, i);
      if (p->t_ns <= t && (!found || p->t_ns >= best_t))
        {
          found = TRUE;
          best_t = p->t_ns;
          *value = p->value;
        }
    }
  return found;
}

static double
wick_memory_viewport_time_to_x (const WickMemoryViewport *view, guint64 t)
{
  double plot = MAX (view->width - WICK_MEMORY_AXIS - 16, 1);
  return WICK_MEMORY_AXIS
         + ((double)t - (double)view->start_ns)
             / MAX ((double)wick_time_sub (view->end_ns, view->start_ns), 1) * plot;
}

guint64
wick_memory_viewport_x_to_time (const WickMemoryViewport *view, double x)
{
  double plot = MAX (view->width - WICK_MEMORY_AXIS - 16, 1);
  double t = (double)view->start_ns
             + (x - WICK_MEMORY_AXIS) / plot * (double)wick_time_sub (view->end_ns, view->start_ns);
  return wick_time_from_double (t);
}

void
wick_memory_chart_panel (WickMemoryChart *self, const WickMemoryViewport *view, guint i,
                         cairo_rectangle_t *rect)
{
  guint n = MAX (self->devices->len, 1);
  double top = WICK_MEMORY_LEGEND, bottom = view->height - WICK_MEMORY_RULER;
  double each = (bottom - top) / n;
  rect->x = WICK_MEMORY_AXIS;
  rect->width = MAX (view->width - WICK_MEMORY_AXIS - 16, 1);
  rect->y = top + i * each + 22;
  rect->height = MAX (each - 30, 10);
}

static void
text (cairo_t *cr, const char *s, double x, double y, gboolean bold, double align)
{
  cairo_new_path (cr);
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *font = pango_font_description_from_string (bold ? "Sans Bold 8" : "Sans 8");
  pango_layout_set_font_description (layout, font);
  pango_layout_set_text (layout, s, -1);
  int w, h;
  pango_layout_get_pixel_size (layout, &w, &h);
  cairo_move_to (cr, x - align * w, y);
  pango_cairo_show_layout (cr, layout);
  cairo_new_path (cr);
  pango_font_description_free (font);
  g_object_unref (layout);
}

#define LEGEND_ITEM 88

/* Bytes to pixels above a panel's bottom: linear up to max, or log10(1 + v)
 * against log10(1 + max) on a log axis. */
typedef struct
{
  double height;
  guint64 max;
  gboolean log;
} YMap;

static double
ymap (const YMap *m, double v)
{
  if (v <= 0)
    return 0;
  if (m->log)
    return log10 (1 + v) / log10 (1 + (double)m->max) * m->height;
  return v / (double)m->max * m->height;
}

static gboolean
is_hidden (const WickMemoryViewport *view, guint bit)
{
  return (view->hidden >> bit) & 1;
}

/* Legend items: the five categories in stacking order, then used, reserved,
 * capacity; a switched-off item keeps an outline and fades. */
static void
draw_legend (cairo_t *cr, const WickMemoryViewport *view)
{
  WickRgb fg = wick_palette_foreground (view->dark);
  double x = WICK_MEMORY_AXIS;
  for (guint k = 0; k < 5; k++)
    {
      guint c = wick_memory_stack_order[k];
      gboolean off = is_hidden (view, c);
      wick_palette_set (cr, wick_palette_category (c, view->dark), 0.85);
      cairo_rectangle (cr, x + 0.5, 9.5, 11, 11);
      if (off)
        cairo_stroke (cr);
      else
        cairo_fill (cr);
      wick_palette_set (cr, fg, off ? 0.4 : 0.9);
      text (cr, wick_palette_category_name (c), x + 16, 8, FALSE, 0);
      x += LEGEND_ITEM;
    }
  static const double dash[] = { 5, 3 }, dot[] = { 1.5, 2.5 };
  const char *names[] = { N_ ("used"), N_ ("reserved"), N_ ("capacity") };
  for (guint k = 0; k < 3; k++)
    {
      gboolean off = is_hidden (view, 5 + k);
      wick_palette_set (cr, wick_palette_device (k, view->dark), off ? 0.3 : 1);
      cairo_set_line_width (cr, 2);
      cairo_set_dash (cr, k == 0 ? NULL : k == 1 ? dash : dot, k == 0 ? 0 : 2, 0);
      cairo_move_to (cr, x, 15);
      cairo_line_to (cr, x + 20, 15);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      wick_palette_set (cr, fg, off ? 0.4 : 0.9);
      text (cr, _ (names[k]), x + 24, 8, FALSE, 0);
      x += LEGEND_ITEM;
    }
  cairo_set_line_width (cr, 1);
  /* The log-scale switch: a check box. */
  wick_palette_set (cr, fg, 0.8);
  cairo_rectangle (cr, x + 0.5, 9.5, 11, 11);
  cairo_stroke (cr);
  if (view->log_scale)
    {
      cairo_set_line_width (cr, 2);
      cairo_move_to (cr, x + 2.5, 15);
      cairo_line_to (cr, x + 5, 18);
      cairo_line_to (cr, x + 10, 11);
      cairo_stroke (cr);
      cairo_set_line_width (cr, 1);
    }
  wick_palette_set (cr, fg, 0.9);
  text (cr, _ ("log scale"), x + 16, 8, FALSE, 0);
}

int
wick_memory_chart_legend_hit (const WickMemoryViewport *view, double x, double y)
{
  if (y < 4 || y > WICK_MEMORY_LEGEND - 2 || x < WICK_MEMORY_AXIS)
    return -1;
  guint item = (guint)((x - WICK_MEMORY_AXIS) / LEGEND_ITEM);
  if (item < 5)
    return wick_memory_stack_order[item];
  if (item <= 8)
    return item;
  return -1;
}

static void
draw_stack (const ChartDevice *device, cairo_t *cr, const WickMemoryViewport *view,
            const cairo_rectangle_t *panel, const YMap *map)
{
  /* One column per pixel: the point with the largest total in it, or the
   * value carried over from the point before. */
  const WickMemorySeries *series = device->logical;
  int columns = (int)panel->width + 1;
  g_autofree guint64 *values = g_new0 (guint64, (gsize)columns * WICK_N_CATEGORIES);
  g_autofree gboolean *set = g_new0 (gboolean, columns);
  guint64 carry[WICK_N_CATEGORIES] = { 0 };
  gint64 first = point_at (series, view->start_ns);
  if (first >= 0)
    memcpy (carry, g_array_index (series->points, WickMemoryPoint, first).live, sizeof carry);
  for (guint i = first < 0 ? 0 : first + 1; i < series->points->len; i++)
    {
      const WickMemoryPoint *p = &g_array_index (series->points, WickMemoryPoint, i);
      if (p->t_ns > view->end_ns)
        break;
      int col
        = CLAMP ((int)(wick_memory_viewport_time_to_x (view, p->t_ns) - panel->x), 0, columns - 1);
      guint64 total = 0, held = 0;
      for (guint c = 0; c < WICK_N_CATEGORIES; c++)
        {
          total += p->live[c];
          held += values[col * WICK_N_CATEGORIES + c];
        }
      if (!set[col] || total >= held)
        memcpy (&values[col * WICK_N_CATEGORIES], p->live, sizeof carry);
      set[col] = TRUE;
    }
  for (int col = 0; col < columns; col++)
    {
      if (!set[col])
        memcpy (&values[col * WICK_N_CATEGORIES], carry, sizeof carry);
      else
        memcpy (carry, &values[col * WICK_N_CATEGORIES], sizeof carry);
    }

  g_autofree double *base = g_new0 (double, columns);
  double bottom = panel->y + panel->height;
  for (guint k = 0; k < 5; k++)
    {
      guint c = wick_memory_stack_order[k];
      if (is_hidden (view, c))
        continue;
      /* base[] holds the bytes stacked below; the mapping of the running sum
       * keeps a log axis stacked too. */
      cairo_move_to (cr, panel->x, bottom - ymap (map, base[0]));
      for (int col = 0; col < columns; col++)
        {
          double top = ymap (map, base[col] + (double)values[col * WICK_N_CATEGORIES + c]);
          cairo_line_to (cr, panel->x + col, bottom - top);
          cairo_line_to (cr, panel->x + col + 1, bottom - top);
        }
      for (int col = columns - 1; col >= 0; col--)
        {
          cairo_line_to (cr, panel->x + col + 1, bottom - ymap (map, base[col]));
          cairo_line_to (cr, panel->x + col, bottom - ymap (map, base[col]));
        }
      cairo_close_path (cr);
      wick_palette_set (cr, wick_palette_category (c, view->dark), 0.78);
      cairo_fill (cr);
      for (int col = 0; col < columns; col++)
        base[col] += (double)values[col * WICK_N_CATEGORIES + c];
    }
}

static void
draw_physical (const ChartDevice *device, cairo_t *cr, const WickMemoryViewport *view,
               const cairo_rectangle_t *panel, const YMap *map)
{
  static const double dash[] = { 5, 3 }, dot[] = { 1.5, 2.5 };
  const WickDeviceSeriesKind kinds[]
    = { WICK_DEVICE_SERIES_USED, WICK_DEVICE_SERIES_RESERVED, WICK_DEVICE_SERIES_CAPACITY };
  double bottom = panel->y + panel->height;
  for (guint k = 0; k < 3; k++)
    {
      GArray *points = device->physical->series[kinds[k]];
      if (points->len == 0 || (k == 2 && device->capacity > map->max) || is_hidden (view, 5 + k))
        continue;
      /* A step line; samples that fall in the same pixel column become one
       * vertical stroke from their lowest to their highest value. */
      double prev_y = 0, column = -1, low = 0, high = 0;
      for (guint i = 0; i < points->len; i++)
        {
          const WickSamplePoint *p = &g_array_index (points, WickSamplePoint, i);
          double x = floor (CLAMP (wick_memory_viewport_time_to_x (view, p->t_ns), panel->x,
                                   panel->x + panel->width));
          double y = bottom - ymap (map, (double)p->value);
          if (i == 0)
            {
              cairo_move_to (cr, x, y);
              column = x;
              low = high = y;
            }
          else if (x == column)
            {
              low = MIN (low, y);
              high = MAX (high, y);
            }
          else
            {
              if (high != low)
                {
                  cairo_line_to (cr, column, high);
                  cairo_line_to (cr, column, low);
                }
              cairo_line_to (cr, column, prev_y);
              cairo_line_to (cr, x, prev_y);
              cairo_line_to (cr, x, y);
              column = x;
              low = high = y;
            }
          prev_y = y;
        }
      cairo_line_to (cr, panel->x + panel->width, prev_y);
      wick_palette_set (cr, wick_palette_device (k, view->dark), 1);
      cairo_set_line_width (cr, 2);
      cairo_set_dash (cr, k == 0 ? NULL : k == 1 ? dash : dot, k == 0 ? 0 : 2, 0);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      cairo_set_line_width (cr, 1);
    }
}

static gboolean
overlaps (const cairo_rectangle_t *a, const cairo_rectangle_t *b)
{
  return a->x < b->x + b->width && b->x < a->x + a->width && a->y < b->y + b->height
         && b->y < a->y + a->height;
}

static int
label_width (cairo_t *cr, const char *s)
{
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *font = pango_font_description_from_string ("Sans Bold 8");
  pango_layout_set_font_description (layout, font);
  pango_layout_set_text (layout, s, -1);
  int w, h;
  pango_layout_get_pixel_size (layout, &w, &h);
  pango_font_description_free (font);
  g_object_unref (layout);
  return w;
}

#define PEAK_LABEL_HEIGHT 13

/* Peak markers and their labels: each label goes to the first free place
 * near its marker (right of it, then left, then stepping away vertically),
 * inside the panel and clear of the axis, of every label placed before and
 * of every marker; a label with no free place is left out (the marker
 * stays, and the readout names it). */
static guint
layout_peaks (const ChartDevice *device, cairo_t *cr, const WickMemoryViewport *view,
              const cairo_rectangle_t *panel, const YMap *map, WickMemoryPeakLabel *out)
{
  const WickMemorySeries *series = device->logical;
  double bottom = panel->y + panel->height;
  guint n = 0;
  cairo_rectangle_t markers[5];
  for (guint k = 5; k-- > 0;)
    {
      guint c = wick_memory_stack_order[k];
      if (series->peak[c] == 0 || series->peak_ns[c] < view->start_ns
          || series->peak_ns[c] > view->end_ns || is_hidden (view, c))
        continue;
      gint64 point = point_at (series, series->peak_ns[c]);
      double base = 0;
      if (point >= 0)
        for (guint j = 0; j < k; j++)
          if (!is_hidden (view, wick_memory_stack_order[j]))
            base += g_array_index (series->points, WickMemoryPoint, point)
                      .live[wick_memory_stack_order[j]];
      WickMemoryPeakLabel *peak = &out[n];
      peak->category = c;
      peak->x = wick_memory_viewport_time_to_x (view, series->peak_ns[c]);
      peak->y = bottom - ymap (map, base + (double)series->peak[c]);
      markers[n] = (cairo_rectangle_t){ peak->x - 5, peak->y - 5, 10, 10 };
      n++;
    }
  double top = panel->y - 16, lowest = bottom - PEAK_LABEL_HEIGHT;
  for (guint i = 0; i < n; i++)
    {
      WickMemoryPeakLabel *peak = &out[i];
      g_autofree char *value = wick_format_bytes (series->peak[peak->category]);
      g_autofree char *label
        = g_strdup_printf (_ ("%s peak %s"), wick_palette_category_name (peak->category), value);
      double w = label_width (cr, label) + 4;
      peak->placed = FALSE;
      if (w > panel->width)
        continue;
      /* Candidates: right then left of the marker, at its height, then
       * 1, -1, 2, -2 … label heights away. */
      for (int step = 0; step < 40 && !peak->placed; step++)
        {
          int dy = (step + 1) / 2 * (step % 2 ? 1 : -1);
          double y = CLAMP (peak->y - 16 + dy * PEAK_LABEL_HEIGHT, top, lowest);
          for (int side = 0; side < 2 && !peak->placed; side++)
            {
              double x = side == 0 ? peak->x + 7 : peak->x - 7 - w;
              x = CLAMP (x, panel->x + 1, panel->x + panel->width - w);
              cairo_rectangle_t box = { x, y, w, PEAK_LABEL_HEIGHT };
              gboolean clash = FALSE;
              for (guint j = 0; j < i && !clash; j++)
                clash = out[j].placed && overlaps (&box, &out[j].box);
              for (guint j = 0; j < n && !clash; j++)
                clash = overlaps (&box, &markers[j]);
              if (!clash)
                {
                  peak->box = box;
                  peak->placed = TRUE;
                }
            }
        }
    }
  return n;
}

guint
wick_memory_chart_peak_labels (WickMemoryChart *self, cairo_t *cr, const WickMemoryViewport *view,
                               guint device, WickMemoryPeakLabel out[5])
{
  g_return_val_if_fail (device < self->devices->len, 0);
  const ChartDevice *d = &g_array_index (self->devices, ChartDevice, device);
  if (d->logical == NULL)
    return 0;
  cairo_rectangle_t panel;
  wick_memory_chart_panel (self, view, device, &panel);
  YMap map;
  wick_memory_chart_y_axis (self, view, device, &map.max, &map.log);
  map.height = panel.height;
  return layout_peaks (d, cr, view, &panel, &map, out);
}

static void
draw_peaks (const ChartDevice *device, cairo_t *cr, const WickMemoryViewport *view,
            const cairo_rectangle_t *panel, const YMap *map)
{
  WickMemoryPeakLabel peaks[5];
  guint n = layout_peaks (device, cr, view, panel, map, peaks);
  for (guint i = 0; i < n; i++)
    {
      const WickMemoryPeakLabel *peak = &peaks[i];
      guint c = peak->category;
      cairo_new_path (cr);
      wick_palette_set (cr, wick_palette_category (c, view->dark), 1);
      cairo_arc (cr, peak->x, peak->y, 4, 0, 2 * G_PI);
      cairo_fill_preserve (cr);
      wick_palette_set (cr, wick_palette_foreground (view->dark), 0.9);
      cairo_stroke (cr);
      if (!peak->placed)
        continue;
      const cairo_rectangle_t *box = &peak->box;
      gboolean right = box->x >= peak->x;
      if (fabs (box->y - (peak->y - 16)) > 2 || box->x > peak->x + 8
          || box->x + box->width < peak->x - 8)
        {
          wick_palette_set (cr, wick_palette_category (c, view->dark), 0.8);
          cairo_move_to (cr, peak->x, peak->y);
          cairo_line_to (cr, right ? box->x : box->x + box->width, box->y + 7);
          cairo_stroke (cr);
        }
      g_autofree char *value = wick_format_bytes (device->logical->peak[c]);
      g_autofree char *label
        = g_strdup_printf (_ ("%s peak %s"), wick_palette_category_name (c), value);
      wick_palette_set (cr, wick_palette_foreground (view->dark), 0.95);
      text (cr, label, box->x + 2, box->y, TRUE, 0);
      cairo_new_path (cr);
    }
}

/* Four gridlines at round values: 1, 2, 2.5 or 5 × 10^k of a binary unit. */
static guint64
nice_axis_max (guint64 max)
{
  double raw = max / 4.0;
  double unit = 1;
  while (unit * 1024 <= raw)
    unit *= 1024;
  double v = raw / unit, decade = 1;
  while (decade * 10 <= v)
    decade *= 10;
  static const double steps[] = { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
  double step = 10 * decade;
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    if (steps[i] * decade >= v)
      {
        step = steps[i] * decade;
        break;
      }
  return (guint64)(4 * step * unit);
}

/* The largest value of a device sample series in the visible range (the
 * value in effect at its start included). */
static guint64
series_max (GArray *points, const WickMemoryViewport *view)
{
  guint64 max = 0, before = 0;
  for (guint i = 0; i < points->len; i++)
    {
      const WickSamplePoint *p = &g_array_index (points, WickSamplePoint, i);
      if (p->t_ns <= view->start_ns)
        before = p->value;
      else if (p->t_ns <= view->end_ns)
        max = MAX (max, p->value);
    }
  return MAX (max, before);
}

/* The largest value the shown series reach in the visible range. The stacked
 * shown categories set it when there are any (a device's reserved
 * or capacity, many times the tensors, would flatten them; those lines are
 * then clipped, and the panel's title names what is off scale); without
 * categories, used and reserved when shown, capacity when shown and within
 * half again of the rest. */
static guint64
shown_max (const ChartDevice *device, const WickMemoryViewport *view)
{
  guint64 max = 0;
  const WickMemorySeries *series = device->logical;
  if (series)
    {
      gint64 first = point_at (series, view->start_ns);
      for (guint i = first < 0 ? 0 : first; i < series->points->len; i++)
        {
          const WickMemoryPoint *p = &g_array_index (series->points, WickMemoryPoint, i);
          if (p->t_ns > view->end_ns)
            break;
          guint64 total = 0;
          for (guint c = 0; c < WICK_N_CATEGORIES; c++)
            if (!is_hidden (view, c))
              total += p->live[c];
          max = MAX (max, total);
        }
    }
  if (max > 0 && !view->log_scale)
    return max;
  if (device->physical)
    {
      const WickDeviceSeriesKind kinds[] = { WICK_DEVICE_SERIES_USED, WICK_DEVICE_SERIES_RESERVED };
      for (guint k = 0; k < 2; k++)
        {
          if (is_hidden (view, 5 + k))
            continue;
          GArray *points = device->physical->series[kinds[k]];
          guint64 before = 0;
          for (guint i = 0; i < points->len; i++)
            {
              const WickSamplePoint *p = &g_array_index (points, WickSamplePoint, i);
              if (p->t_ns <= view->start_ns)
                before = p->value; /* the value in effect at the view's start */
              else if (p->t_ns <= view->end_ns)
                max = MAX (max, p->value);
            }
          max = MAX (max, before);
        }
      if (!is_hidden (view, 7) && device->capacity > 0 && device->capacity <= MAX (max, 1) * 3 / 2)
        max = MAX (max, device->capacity);
    }
  return MAX (max, 1);
}

void
wick_memory_chart_y_axis (WickMemoryChart *self, const WickMemoryViewport *view, guint device,
                          guint64 *max, gboolean *log_scale)
{
  g_return_if_fail (device < self->devices->len);
  const ChartDevice *d = &g_array_index (self->devices, ChartDevice, device);
  guint64 top = shown_max (d, view);
  *log_scale = view->log_scale;
  if (view->log_scale)
    {
      /* Up to the next power of 1024 × 1, 8, 64 or 512 above the top. */
      guint64 m = 1;
      while (m < top && m <= G_MAXUINT64 / 8)
        m *= 8;
      *max = m;
    }
  else
    *max = nice_axis_max (top + top / 20);
}

char *
wick_memory_chart_panel_title (WickMemoryChart *self, const WickMemoryViewport *view, guint d)
{
  g_return_val_if_fail (d < self->devices->len, NULL);
  const ChartDevice *device = &g_array_index (self->devices, ChartDevice, d);
  guint64 y_max;
  gboolean log_scale;
  wick_memory_chart_y_axis (self, view, d, &y_max, &log_scale);
  char *title = NULL;
  /* the device series above the axis, named with their highest value */
  g_autoptr (GString) off = g_string_new (NULL);
  if (device->physical != NULL)
    {
      const WickDeviceSeriesKind kinds[]
        = { WICK_DEVICE_SERIES_USED, WICK_DEVICE_SERIES_RESERVED, WICK_DEVICE_SERIES_CAPACITY };
      const char *names[] = { N_ ("used"), N_ ("reserved"), N_ ("capacity") };
      for (guint k = 0; k < 3; k++)
        {
          guint64 top = series_max (device->physical->series[kinds[k]], view);
          if (is_hidden (view, 5 + k) || top <= y_max)
            continue;
          g_autofree char *bytes = wick_format_bytes (top);
          g_string_append_printf (off, "%s%s %s", off->len > 0 ? ", " : "", _ (names[k]),
                                  bytes);
        }
    }
  if (off->len > 0)
    title = g_strdup_printf (_ ("%s — %s (off scale)"), device->name, off->str);
  else
    title = g_strdup (device->name);
  return title;
}

static void
draw_axis (cairo_t *cr, const WickMemoryViewport *view, const cairo_rectangle_t *panel,
           const YMap *map)
{
  WickRgb fg = wick_palette_foreground (view->dark);
  if (map->log)
    {
      /* Gridlines at 1 B, 1 KiB, 1 MiB … up to the top, labelled; the top. */
      double last_y = G_MAXDOUBLE;
      for (guint64 v = 1;; v *= 1024)
        {
          double y = floor (panel->y + panel->height - ymap (map, (double)v)) + 0.5;
          wick_palette_set (cr, wick_palette_grid (view->dark), 1);
          cairo_move_to (cr, panel->x, y);
          cairo_line_to (cr, panel->x + panel->width, y);
          cairo_stroke (cr);
          if (last_y - y >= 14)
            {
              g_autofree char *label = wick_format_bytes (v);
              wick_palette_set (cr, fg, 0.7);
              text (cr, label, panel->x - 6, y - 7, FALSE, 1);
              last_y = y;
            }
          if (v > map->max / 1024)
            break;
        }
      wick_palette_set (cr, fg, 0.7);
      text (cr, _ ("log scale"), panel->x + panel->width, panel->y - 20, FALSE, 1);
      return;
    }
  guint64 y_max = map->max;
  for (guint i = 0; i <= 4; i++)
    {
      double y = floor (panel->y + panel->height - panel->height * i / 4.0) + 0.5;
      wick_palette_set (cr, wick_palette_grid (view->dark), 1);
      cairo_move_to (cr, panel->x, y);
      cairo_line_to (cr, panel->x + panel->width, y);
      cairo_stroke (cr);
      g_autofree char *label = wick_format_bytes (y_max / 4 * i);
      wick_palette_set (cr, fg, 0.7);
      text (cr, label, panel->x - 6, y - 7, FALSE, 1);
    }
}

static void
draw_time_axis (cairo_t *cr, const WickMemoryViewport *view)
{
  double ns_per_px = (double)wick_time_sub (view->end_ns, view->start_ns)
                     / MAX (view->width - WICK_MEMORY_AXIS - 16, 1);
  guint64 step = wick_time_axis_step (ns_per_px, 90);
  guint64 unit = wick_time_sub (view->end_ns, view->origin_ns);
  double y = view->height - WICK_MEMORY_RULER;
  wick_palette_set (cr, wick_palette_foreground (view->dark), 0.3);
  cairo_move_to (cr, WICK_MEMORY_AXIS, y + 0.5);
  cairo_line_to (cr, view->width - 16, y + 0.5);
  cairo_stroke (cr);
  WickTimeTicks ticks;
  guint64 rel;
  wick_time_ticks_init (&ticks, view->origin_ns, view->start_ns, view->end_ns, step,
                        (guint)(view->width / 8) + 2);
  while (wick_time_ticks_next (&ticks, &rel))
    {
      double x
        = floor (wick_memory_viewport_time_to_x (view, wick_time_add (view->origin_ns, rel))) + 0.5;
      if (x < WICK_MEMORY_AXIS)
        continue;
      cairo_move_to (cr, x, y);
      cairo_line_to (cr, x, y + 5);
      cairo_stroke (cr);
      g_autofree char *label = wick_format_time_label_in (rel, step, unit);
      text (cr, label, x, y + 6, FALSE, 0.5);
    }
}

static void
append_bytes (GString *lines, const char *name, guint64 value)
{
  g_autofree char *b = wick_format_bytes (value);
  g_string_append_printf (lines, "\n%-10s %10s", name, b);
}

static void
draw_readout (WickMemoryChart *self, cairo_t *cr, const WickMemoryViewport *view)
{
  guint64 t = wick_memory_viewport_x_to_time (view, view->hover_x);
  WickRgb fg = wick_palette_foreground (view->dark);
  wick_palette_set (cr, fg, 0.5);
  cairo_move_to (cr, floor (view->hover_x) + 0.5, WICK_MEMORY_LEGEND);
  cairo_line_to (cr, floor (view->hover_x) + 0.5, view->height - WICK_MEMORY_RULER);
  cairo_stroke (cr);
  for (guint d = 0; d < self->devices->len; d++)
    {
      const ChartDevice *device = &g_array_index (self->devices, ChartDevice, d);
      cairo_rectangle_t panel;
      wick_memory_chart_panel (self, view, d, &panel);
      g_autoptr (GString) lines = g_string_new (NULL);
      g_autofree char *when = wick_format_duration (t > view->origin_ns ? t - view->origin_ns : 0);
      g_string_append_printf (lines, "%s @ %s", device->name, when);
      guint64 live[WICK_N_CATEGORIES] = { 0 }, total = 0, value;
      if (device->logical)
        wick_memory_series_at (device->logical, t, live);
      for (guint k = 5; k-- > 0;)
        {
          guint c = wick_memory_stack_order[k];
          total += live[c];
          append_bytes (lines, wick_palette_category_name (c), live[c]);
        }
      append_bytes (lines, _ ("logical"), total);
      if (sample_at (device->physical, WICK_DEVICE_SERIES_USED, t, &value))
        append_bytes (lines, _ ("used"), value);
      if (sample_at (device->physical, WICK_DEVICE_SERIES_RESERVED, t, &value))
        append_bytes (lines, _ ("reserved"), value);
      if (sample_at (device->physical, WICK_DEVICE_SERIES_CAPACITY, t, &value))
        append_bytes (lines, _ ("capacity"), value);
      PangoLayout *layout = pango_cairo_create_layout (cr);
      PangoFontDescription *font = pango_font_description_from_string ("Monospace 8");
      pango_layout_set_font_description (layout, font);
      pango_layout_set_text (layout, lines->str, -1);
      int w, h;
      pango_layout_get_pixel_size (layout, &w, &h);
      double x = view->hover_x + 12;
      if (x + w + 12 > view->width)
        x = view->hover_x - w - 20;
      double y = panel.y + 4;
      cairo_rectangle (cr, x - 6, y - 4, w + 12, h + 8);
      cairo_set_source_rgba (cr, view->dark ? 0.12 : 1, view->dark ? 0.12 : 1,
                             view->dark ? 0.12 : 1, 0.92);
      cairo_fill_preserve (cr);
      wick_palette_set (cr, fg, 0.3);
      cairo_stroke (cr);
      wick_palette_set (cr, fg, 1);
      cairo_move_to (cr, x, y);
      pango_cairo_show_layout (cr, layout);
      pango_font_description_free (font);
      g_object_unref (layout);
    }
}

void
wick_memory_chart_draw (WickMemoryChart *self, cairo_t *cr, const WickMemoryViewport *view)
{
  g_return_if_fail (view->end_ns > view->start_ns);
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  wick_palette_set (cr, wick_palette_background (view->dark), 1);
  cairo_paint (cr);
  draw_legend (cr, view);
  guint n = self->devices->len;
  if (n == 0)
    {
      wick_palette_set (cr, wick_palette_foreground (view->dark), 0.6);
      text (cr, _ ("This trace has no memory records."), view->width / 2.0, view->height / 2.0,
            FALSE, 0.5);
    }
  for (guint d = 0; d < n; d++)
    {
      const ChartDevice *device = &g_array_index (self->devices, ChartDevice, d);
      cairo_rectangle_t panel;
      wick_memory_chart_panel (self, view, d, &panel);
      YMap map;
      wick_memory_chart_y_axis (self, view, d, &map.max, &map.log);
      map.height = panel.height;
      wick_palette_set (cr, wick_palette_foreground (view->dark), 1);
      g_autofree char *title = wick_memory_chart_panel_title (self, view, d);
      text (cr, title, panel.x, panel.y - 20, TRUE, 0);
      draw_axis (cr, view, &panel, &map);
      cairo_save (cr);
      cairo_rectangle (cr, panel.x, panel.y - 20, panel.width, panel.height + 20);
      cairo_clip (cr);
      if (device->logical)
        draw_stack (device, cr, view, &panel, &map);
      cairo_restore (cr);
      if (device->physical)
        {
          /* clipped at the axis' top: what rises above it is named in the
           * title */
          cairo_save (cr);
          cairo_rectangle (cr, panel.x, panel.y - 1, panel.width, panel.height + 2);
          cairo_clip (cr);
          draw_physical (device, cr, view, &panel, &map);
          cairo_restore (cr);
        }
      if (device->logical)
        draw_peaks (device, cr, view, &panel, &map);
    }
  if (view->range_end > view->range_start)
    {
      double x0 = MAX (wick_memory_viewport_time_to_x (view, view->range_start), WICK_MEMORY_AXIS);
      double x1 = MIN (wick_memory_viewport_time_to_x (view, view->range_end), view->width - 16);
      if (x1 > x0)
        {
          wick_palette_set (cr, wick_palette_accent (view->dark), 0.15);
          cairo_rectangle (cr, x0, WICK_MEMORY_LEGEND, x1 - x0,
                           view->height - WICK_MEMORY_LEGEND - WICK_MEMORY_RULER);
          cairo_fill (cr);
        }
    }
  draw_time_axis (cr, view);
  wick_memory_chart_draw_readout (self, cr, view);
  cairo_restore (cr);
}

void
wick_memory_chart_draw_readout (WickMemoryChart *self, cairo_t *cr, const WickMemoryViewport *view)
{
  if (view->hover_x < WICK_MEMORY_AXIS || view->hover_x > view->width - 16
      || view->end_ns <= view->start_ns)
    return;
  cairo_save (cr);
  cairo_set_line_width (cr, 1);
  draw_readout (self, cr, view);
  cairo_restore (cr);
}

gint64
wick_memory_chart_event_at (WickMemoryChart *self, const WickMemoryViewport *view, double x,
                            double y)
{
  for (guint d = 0; d < self->devices->len; d++)
    {
      cairo_rectangle_t panel;
      wick_memory_chart_panel (self, view, d, &panel);
      if (y < panel.y - 22 || y > panel.y + panel.height || x < panel.x
          || x > panel.x + panel.width)
        continue;
      const WickMemorySeries *series = g_array_index (self->devices, ChartDevice, d).logical;
      if (series == NULL)
        return -1;
      gint64 point = point_at (series, wick_memory_viewport_x_to_time (view, x));
      return point < 0 ? -1 : (gint64)g_array_index (series->points, WickMemoryPoint, point).event;
    }
  return -1;
}
