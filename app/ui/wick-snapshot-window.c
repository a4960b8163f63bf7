/* wick-snapshot-window.c — see wick-snapshot-window.h. */
#include "config.h"

#include "wick-snapshot-window.h"
#include "wick-snapshot-window-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "model/wick-input.h"
#include "model/wick-snapshot-categories.h"
#include "wick-format.h"
#include "wick-palette.h"

static void wick_snapshot_window_cancel (WickSnapshotWindow *self);

#define N_CATEGORIES 5
#define LIVE_ROWS 50
#define SEGMENT_ROW_HEIGHT 18
#define SEGMENT_LABEL_WIDTH 250

typedef struct
{
  gint64 time_us;
  guint64 bytes[N_CATEGORIES];
} CategoryPoint;

/* Progress from the loading thread, shown by an idle on the main thread. */
typedef struct
{
  gint refs;
  GWeakRef window;
  char *path, *path_b;
  gint64 from_us, to_us;
  guint64 consumed, size; /* under lock */
  gboolean idle_pending;
  GMutex lock;
} Progress;

struct _WickSnapshotWindow
{
  AdwApplicationWindow parent_instance;

  char *path;
  GCancellable *cancellable;
  WickMemorySnapshot *snapshot;
  char *error;
  gboolean loading;
  Progress *progress_state;

  GtkWidget *stack;
  GtkWidget *loading_page, *progress, *error_page;
  GtkWidget *title;
  GtkWidget *chart, *segment_map, *live_title, *live_list, *details;

  GArray *points; /* CategoryPoint: allocated bytes by category after each change */
  gint64 t0, t1;
  guint64 y_max;
  gboolean has_time;
  gint64 selected_us;
  gint selected_allocation; /* -1 for none */
  GArray *live;             /* guint32 allocation indices shown in live_list */
  char *details_text;

  GtkWidget *flame_area, *bottom_stack;
  GtkWidget *range_button;
  char *path_b;                    /* compare: the second snapshot */
  WickMemorySnapshot *snapshot_b;  /* compare: B (snapshot is A) */
  GArray *diff;                    /* WickSnapshotStackDiff */
  GtkWidget *diff_list, *diff_details, *diff_title;
  char *diff_text;
  gint64 load_from, load_to; /* the range this window loads (G_MININT64, G_MAXINT64: all) */
  gboolean has_drag_range;
  gint64 drag_from, drag_to; /* a range dragged on the chart */
  double drag_x0;
  GArray *flame; /* FlameNode, [0] the root */
  guint flame_selected;
  gboolean flame_python_only;
  GtkWidget *diff_stack, *dflame_area;
  GtkWidget *header, *outer; /* the window's own header bar and body */
  GtkWidget *page;           /* as a trace window's page: its widget (weak) */
  gboolean gone;             /* that page is gone, and the widgets with it */
  GArray *dflame;         /* DiffNode, [0] the root */
  GPtrArray *dflame_names; /* frame texts */
  guint dflame_selected;
  gboolean dflame_python_only, dflame_width_a;
  /* as a trace window's page: the trace's memory records give the
   * categories (wick-snapshot-categories.h) */
  WickDocument *trace;
  WickSnapshotCategories *categories;
  guint32 *block_allocation; /* per block: its allocation, or G_MAXUINT32 */
  guint matched_records;     /* the trace's memory records when matched */
};

G_DEFINE_FINAL_TYPE (WickSnapshotWindow, wick_snapshot_window, ADW_TYPE_APPLICATION_WINDOW)

static gboolean
is_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

/* ---- derived data ---- */

/* Allocation @i's category: from the trace's records when a trace is shown
 * with the snapshot (its frames where no record tells), else its frames. */
static WickMemoryCategory
allocation_category (WickSnapshotWindow *self, guint i, const WickSnapshotAllocation *a)
{
  if (self->categories != NULL)
    return wick_snapshot_categories_get (self->categories, i, NULL, NULL, NULL);
  return wick_memory_snapshot_stack_category (self->snapshot, a->stack);
}

/* The categories from the trace's records, matched again for this snapshot
 * and trace; nothing without a trace. */
static void
update_categories (WickSnapshotWindow *self)
{
  g_clear_pointer (&self->categories, wick_snapshot_categories_free);
  g_clear_pointer (&self->block_allocation, g_free);
  if (self->snapshot == NULL || self->trace == NULL)
    return;
  self->categories = wick_snapshot_categories_new (self->snapshot, self->trace);
  wick_document_get_memory (self->trace, &self->matched_records);
  guint n_blocks, n;
  wick_memory_snapshot_get_blocks (self->snapshot, &n_blocks);
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (self->snapshot, &n);
  self->block_allocation = g_new (guint32, MAX (n_blocks, 1));
  for (guint i = 0; i < n_blocks; i++)
    self->block_allocation[i] = G_MAXUINT32;
  for (guint i = 0; i < n; i++)
    if (allocations[i].block < n_blocks)
      self->block_allocation[allocations[i].block] = i;
}

typedef struct
{
  gint64 time_us;
  gint64 delta;
  guint8 category;
} CategoryChange;

static gint
change_cmp (gconstpointer a, gconstpointer b)
{
  const CategoryChange *x = a, *y = b;
  return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

/* The allocated series split by category: the allocations' sizes from their
 * alloc to their free_completed, those live before the history at the start. */
static void
build_category_points (WickSnapshotWindow *self)
{
  WickMemorySnapshot *s = self->snapshot;
  guint n;
  const WickSnapshotAllocation *allocations = wick_memory_snapshot_get_allocations (s, &n);
  g_autoptr (GArray) changes = g_array_new (FALSE, FALSE, sizeof (CategoryChange));
  CategoryPoint start = { 0 };
  g_clear_pointer (&self->points, g_array_unref);
  guint n_entries;
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
  self->has_time = n_entries > 0;
  self->t0 = G_MAXINT64;
  self->t1 = G_MININT64;
  for (guint i = 0; i < n_entries; i++)
    {
      self->t0 = MIN (self->t0, entries[i].time_us);
      self->t1 = MAX (self->t1, entries[i].time_us);
    }
  gint64 range_from, range_to;
  if (wick_memory_snapshot_get_range (s, &range_from, &range_to, NULL) && self->has_time)
    self->t0 = MIN (self->t0, MAX (range_from, G_MININT64 + 1));
  if (!self->has_time)
    self->t0 = self->t1 = 0;
  if (self->t1 <= self->t0)
    self->t1 = self->t0 + 1;
  for (guint i = 0; i < n; i++)
    {
      const WickSnapshotAllocation *a = &allocations[i];
      guint8 c = (guint8)allocation_category (self, i, a);
      /* live when the chart starts: before the history, or before a range loaded alone */
      if (a->alloc_us == G_MININT64 || a->alloc_us < self->t0)
        start.bytes[c] += a->size;
      else
        {
          CategoryChange change = { a->alloc_us, (gint64)a->size, c };
          g_array_append_val (changes, change);
        }
      if (a->free_completed_us != G_MAXINT64)
        {
          CategoryChange change = { a->free_completed_us, -(gint64)a->size, c };
          g_array_append_val (changes, change);
        }
    }
  g_array_sort (changes, change_cmp);

  self->points = g_array_new (FALSE, FALSE, sizeof (CategoryPoint));
  start.time_us = self->t0;
  g_array_append_val (self->points, start);
  CategoryPoint p = start;
  for (guint i = 0; i < changes->len; i++)
    {
      const CategoryChange *c = &g_array_index (changes, CategoryChange, i);
      p.time_us = c->time_us;
      p.bytes[c->category] += (guint64)c->delta;
      g_array_append_val (self->points, p);
    }

  guint n_reserved;
  const WickSnapshotPoint *reserved = wick_memory_snapshot_get_reserved_series (s, &n_reserved);
  self->y_max = 1;
  for (guint i = 0; i < n_reserved; i++)
    self->y_max = MAX (self->y_max, reserved[i].bytes);
  guint64 peak;
  gint64 peak_us;
  wick_memory_snapshot_get_peak (s, &peak, &peak_us);
  self->y_max = MAX (self->y_max, peak);
  self->y_max = MAX (self->y_max, wick_memory_snapshot_get_reserved (s));
  self->selected_us = self->has_time ? peak_us : 0;
}

/* ---- the chart ---- */

#define CHART_LEFT 78
#define CHART_RIGHT 16
#define CHART_TOP 28
#define CHART_BOTTOM 26

static double
time_to_x (WickSnapshotWindow *self, gint64 t, double width)
{
  return CHART_LEFT
         + (double)(t - self->t0) / (double)(self->t1 - self->t0)
             * (width - CHART_LEFT - CHART_RIGHT);
}

static double
bytes_to_y (WickSnapshotWindow *self, double bytes, double height)
{
  double plot = height - CHART_TOP - CHART_BOTTOM;
  return height - CHART_BOTTOM - bytes / ((double)self->y_max * 1.08) * plot;
}

static void
draw_text (cairo_t *cr, GtkWidget *widget, const char *text, double x, double y, double align,
           WickRgb colour)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int w, h;
  pango_layout_get_pixel_size (layout, &w, &h);
  wick_palette_set (cr, colour, 1.0);
  cairo_move_to (cr, x - align * w, y - h / 2.0);
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

static void
draw_chart (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  WickSnapshotWindow *self = data;
  gboolean dark = is_dark ();
  WickRgb fg = wick_palette_foreground (dark), grid = wick_palette_grid (dark);
  wick_palette_set (cr, wick_palette_background (dark), 1.0);
  cairo_paint (cr);
  if (self->snapshot == NULL || self->points == NULL)
    return;
  WickMemorySnapshot *s = self->snapshot;
  int plot_w = MAX (1, width - CHART_LEFT - CHART_RIGHT);

  /* y grid and labels */
  for (int i = 0; i <= 4; i++)
    {
      double bytes = (double)self->y_max * i / 4.0;
      double y = bytes_to_y (self, bytes, height);
      wick_palette_set (cr, grid, 1.0);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, CHART_LEFT, floor (y) + 0.5);
      cairo_line_to (cr, width - CHART_RIGHT, floor (y) + 0.5);
      cairo_stroke (cr);
      g_autofree char *label = wick_format_bytes ((guint64)bytes);
      draw_text (cr, GTK_WIDGET (area), label, CHART_LEFT - 6, y, 1.0, fg);
    }
  /* x labels: time since the first entry */
  for (int i = 0; i <= 4; i++)
    {
      gint64 t = self->t0 + (self->t1 - self->t0) * i / 4;
      g_autofree char *label = wick_format_duration ((guint64)(t - self->t0) * 1000);
      draw_text (cr, GTK_WIDGET (area), label, time_to_x (self, t, width),
                 height - CHART_BOTTOM / 2.0,
                 i == 0   ? 0.0
                 : i == 4 ? 1.0
                          : 0.5,
                 fg);
    }

  /* One column per pixel: the point with the most bytes in it (spikes stay
   * visible), carried on where a column has none. */
  g_autofree CategoryPoint *columns = g_new0 (CategoryPoint, plot_w);
  g_autofree gboolean *has = g_new0 (gboolean, plot_w);
  guint64 best_total = 0;
  for (guint i = 0; i < self->points->len; i++)
    {
      const CategoryPoint *p = &g_array_index (self->points, CategoryPoint, i);
      int col = CLAMP ((int)(time_to_x (self, p->time_us, width) - CHART_LEFT), 0, plot_w - 1);
      guint64 total = 0;
      for (int c = 0; c < N_CATEGORIES; c++)
        total += p->bytes[c];
      if (!has[col])
        best_total = 0;
      if (!has[col] || total >= best_total)
        {
          columns[col] = *p;
          best_total = total;
        }
      has[col] = TRUE;
    }
  for (int x = 1; x < plot_w; x++)
    if (!has[x])
      columns[x] = columns[x - 1];
  /* stacked areas, parameters at the bottom */
  static const int order[N_CATEGORIES]
    = { WICK_CATEGORY_PARAMETER, WICK_CATEGORY_OPTIMIZER, WICK_CATEGORY_GRADIENT,
        WICK_CATEGORY_ACTIVATION, WICK_CATEGORY_OTHER };
  g_autofree double *below = g_new0 (double, plot_w);
  for (int k = 0; k < N_CATEGORIES; k++)
    {
      int c = order[k];
      cairo_move_to (cr, CHART_LEFT, bytes_to_y (self, below[0], height));
      for (int x = 0; x < plot_w; x++)
        cairo_line_to (cr, CHART_LEFT + x + 1,
                       bytes_to_y (self, below[x] + columns[x].bytes[c], height));
      for (int x = plot_w - 1; x >= 0; x--)
        cairo_line_to (cr, CHART_LEFT + x + 1, bytes_to_y (self, below[x], height));
      cairo_close_path (cr);
      wick_palette_set (cr, wick_palette_category (c, dark), 0.85);
      cairo_fill (cr);
      for (int x = 0; x < plot_w; x++)
        below[x] += columns[x].bytes[c];
    }

  /* reserved: a step line over the areas */
  guint n_reserved;
  const WickSnapshotPoint *reserved = wick_memory_snapshot_get_reserved_series (s, &n_reserved);
  wick_palette_set (cr, fg, 0.9);
  cairo_set_line_width (cr, 1.5);
  double dashes[] = { 5, 3 };
  cairo_set_dash (cr, dashes, 2, 0);
  for (guint i = 0; i < n_reserved; i++)
    {
      double x = time_to_x (self, reserved[i].time_us, width);
      double y = bytes_to_y (self, reserved[i].bytes, height);
      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
      double next = i + 1 < n_reserved ? time_to_x (self, reserved[i + 1].time_us, width)
                                       : width - CHART_RIGHT;
      cairo_line_to (cr, next, y);
    }
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);

  /* the selected allocation's life */
  if (self->selected_allocation >= 0)
    {
      guint n;
      const WickSnapshotAllocation *a
        = &wick_memory_snapshot_get_allocations (s, &n)[self->selected_allocation];
      double x0 = a->alloc_us == G_MININT64 ? CHART_LEFT : time_to_x (self, a->alloc_us, width);
      double x1 = a->free_completed_us == G_MAXINT64
                    ? width - CHART_RIGHT
                    : time_to_x (self, a->free_completed_us, width);
      wick_palette_set (cr, wick_palette_accent (dark), 0.15);
      cairo_rectangle (cr, x0, CHART_TOP, MAX (2.0, x1 - x0), height - CHART_TOP - CHART_BOTTOM);
      cairo_fill (cr);
    }

  if (self->has_drag_range)
    {
      double x0 = time_to_x (self, MIN (self->drag_from, self->drag_to), width);
      double x1 = time_to_x (self, MAX (self->drag_from, self->drag_to), width);
      wick_palette_set (cr, fg, 0.12);
      cairo_rectangle (cr, x0, CHART_TOP, MAX (1.0, x1 - x0), height - CHART_TOP - CHART_BOTTOM);
      cairo_fill (cr);
    }

  /* peak, OOMs, the selected time */
  guint64 peak;
  gint64 peak_us;
  if (wick_memory_snapshot_get_peak (s, &peak, &peak_us))
    {
      double x = time_to_x (self, peak_us, width), y = bytes_to_y (self, peak, height);
      wick_palette_set (cr, wick_palette_accent (dark), 1.0);
      cairo_arc (cr, x, y, 4, 0, 2 * G_PI);
      cairo_fill (cr);
      g_autofree char *bytes = wick_format_bytes (peak);
      g_autofree char *label = g_strdup_printf (_ ("peak %s"), bytes);
      draw_text (cr, GTK_WIDGET (area), label, x + 6, y - 10, x > width * 0.8 ? 1.0 : 0.0,
                 wick_palette_accent (dark));
    }
  guint n_entries;
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
  for (guint i = 0; i < n_entries; i++)
    if (entries[i].action == WICK_TRACE_OOM)
      {
        double x = time_to_x (self, entries[i].time_us, width);
        WickRgb red = { 0.88, 0.11, 0.14 };
        wick_palette_set (cr, red, 1.0);
        cairo_set_line_width (cr, 2);
        cairo_move_to (cr, x, CHART_TOP);
        cairo_line_to (cr, x, height - CHART_BOTTOM);
        cairo_stroke (cr);
        g_autofree char *want = wick_format_bytes (entries[i].size);
        g_autofree char *free_bytes = wick_format_bytes (entries[i].addr);
        g_autofree char *label = g_strdup_printf (_ ("OOM: %s asked, %s free"), want, free_bytes);
        draw_text (cr, GTK_WIDGET (area), label, x - 4, CHART_TOP + 8, 1.0, red);
      }
  if (self->has_time)
    {
      double x = time_to_x (self, self->selected_us, width);
      wick_palette_set (cr, fg, 0.8);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, floor (x) + 0.5, CHART_TOP);
      cairo_line_to (cr, floor (x) + 0.5, height - CHART_BOTTOM);
      cairo_stroke (cr);
    }

  /* legend */
  double lx = CHART_LEFT;
  for (int k = 0; k < N_CATEGORIES; k++)
    {
      int c = order[k];
      wick_palette_set (cr, wick_palette_category (c, dark), 0.85);
      cairo_rectangle (cr, lx, 8, 12, 12);
      cairo_fill (cr);
      const char *name = c == WICK_CATEGORY_OTHER ? _ ("unknown") : wick_palette_category_name (c);
      PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), name);
      int w, h;
      pango_layout_get_pixel_size (layout, &w, &h);
      wick_palette_set (cr, fg, 1.0);
      cairo_move_to (cr, lx + 16, 14 - h / 2.0);
      pango_cairo_show_layout (cr, layout);
      g_object_unref (layout);
      lx += 16 + w + 14;
    }
  g_autofree char *reserved_label = g_strdup (_ ("- - reserved"));
  draw_text (cr, GTK_WIDGET (area), reserved_label, lx, 14, 0.0, fg);
}

static void update_live (WickSnapshotWindow *self);

static void
on_chart_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  WickSnapshotWindow *self = data;
  int width = gtk_widget_get_width (self->chart);
  if (self->snapshot == NULL || !self->has_time || width <= CHART_LEFT + CHART_RIGHT)
    return;
  double f = CLAMP ((x - CHART_LEFT) / (width - CHART_LEFT - CHART_RIGHT), 0.0, 1.0);
  wick_snapshot_window_select_time (self, self->t0 + (gint64)(f * (double)(self->t1 - self->t0)));
}

/* ---- the segment map ---- */

static gint64
x_to_time (WickSnapshotWindow *self, double x)
{
  int width = gtk_widget_get_width (self->chart);
  double f = CLAMP ((x - CHART_LEFT) / MAX (1, width - CHART_LEFT - CHART_RIGHT), 0.0, 1.0);
  return self->t0 + (gint64)(f * (double)(self->t1 - self->t0));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, gpointer data)
{
  WickSnapshotWindow *self = data;
  self->drag_x0 = x;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, gpointer data)
{
  WickSnapshotWindow *self = data;
  if (self->snapshot == NULL || !self->has_time || fabs (dx) < 4)
    return;
  self->has_drag_range = TRUE;
  self->drag_from = x_to_time (self, self->drag_x0);
  self->drag_to = x_to_time (self, self->drag_x0 + dx);
  gtk_widget_set_visible (self->range_button, TRUE);
  gtk_widget_queue_draw (self->chart);
}

static void
on_load_range_clicked (GtkButton *button, gpointer data)
{
  WickSnapshotWindow *self = data;
  gint64 from, to;
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
  if (application == NULL && self->page != NULL && GTK_IS_WINDOW (gtk_widget_get_root (self->page)))
    application = gtk_window_get_application (GTK_WINDOW (gtk_widget_get_root (self->page)));
  if (wick_snapshot_window_get_drag_range (self, &from, &to))
    gtk_window_present (
      GTK_WINDOW (wick_snapshot_window_new_range (application, self->path, from, to)));
}

static WickRgb
block_colour (WickSnapshotWindow *self, const WickSnapshotBlock *b, gboolean dark)
{
  guint n_blocks;
  const WickSnapshotBlock *blocks = wick_memory_snapshot_get_blocks (self->snapshot, &n_blocks);
  guint index = (guint)(b - blocks);
  if (b->state == WICK_BLOCK_ACTIVE_ALLOCATED && self->block_allocation != NULL
      && index < n_blocks && self->block_allocation[index] != G_MAXUINT32)
    return wick_palette_category (
      wick_snapshot_categories_get (self->categories, self->block_allocation[index], NULL, NULL,
                                    NULL),
      dark);
  if (b->state == WICK_BLOCK_ACTIVE_ALLOCATED)
    return wick_palette_category (wick_memory_snapshot_stack_category (self->snapshot, b->stack),
                                  dark);
  if (b->state == WICK_BLOCK_ACTIVE_PENDING_FREE)
    return (WickRgb){ 0.90, 0.38, 0.00 };
  return wick_palette_grid (dark);
}

/* A colour as a premultiplied cairo ARGB32 pixel (never 0: alpha > 0). */
static guint32
argb (WickRgb rgb, double alpha)
{
  guint32 a = (guint32)CLAMP (alpha * 255.0 + 0.5, 1.0, 255.0);
  guint32 r = (guint32)CLAMP (rgb.r * a + 0.5, 0.0, 255.0);
  guint32 g = (guint32)CLAMP (rgb.g * a + 0.5, 0.0, 255.0);
  guint32 b = (guint32)CLAMP (rgb.b * a + 0.5, 0.0, 255.0);
  return a << 24 | r << 16 | g << 8 | b;
}

static void
draw_segments (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  WickSnapshotWindow *self = data;
  gboolean dark = is_dark ();
  WickRgb fg = wick_palette_foreground (dark);
  wick_palette_set (cr, wick_palette_background (dark), 1.0);
  cairo_paint (cr);
  if (self->snapshot == NULL)
    return;
  guint n_segments, n_blocks;
  const WickSnapshotSegment *segments
    = wick_memory_snapshot_get_segments (self->snapshot, &n_segments);
  const WickSnapshotBlock *blocks = wick_memory_snapshot_get_blocks (self->snapshot, &n_blocks);
  double bar_w = MAX (10, width - SEGMENT_LABEL_WIDTH - 8);
  gint selected_block = -1;
  if (self->selected_allocation >= 0)
    {
      guint n;
      selected_block
        = (gint)wick_memory_snapshot_get_allocations (self->snapshot, &n)[self->selected_allocation]
            .block;
    }
  double clip_y0, clip_y1, clip_x0, clip_x1;
  cairo_clip_extents (cr, &clip_x0, &clip_y0, &clip_x1, &clip_y1);
  /* Each row is drawn by pixel column, not by block: a column takes the
   * colour of the block over its centre, so a row costs its width, not its
   * block count (a fragmented segment of 1 000 blocks in 460 pixels). The
   * columns of every visible row are written into one image, composited
   * once: a fill per run of colour cost a rasterised rectangle each, and a
   * fragmented row is hundreds of runs (22-60 ms a viewport at 100 x 1 000
   * blocks on the loaded dev VM). Block boundaries are drawn where blocks
   * are 3 pixels wide or more; narrower ones show as the pieces of colour
   * they are. One Pango layout serves every label. */
  int n_px = (int)ceil (bar_w);
  guint first_row = (guint)MAX (0.0, floor (clip_y0 / SEGMENT_ROW_HEIGHT));
  guint end_row = (guint)MIN ((double)n_segments, floor (clip_y1 / SEGMENT_ROW_HEIGHT) + 1);
  if (first_row >= end_row)
    return;
  const int bar_h = SEGMENT_ROW_HEIGHT - 4;
  int image_h = (int)(end_row - first_row) * SEGMENT_ROW_HEIGHT;
  cairo_surface_t *image = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, n_px, image_h);
  if (cairo_surface_status (image) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (image);
      return;
    }
  cairo_surface_flush (image);
  guint8 *pixels = cairo_image_surface_get_data (image);
  int stride = cairo_image_surface_get_stride (image);
  memset (pixels, 0, (gsize)stride * (gsize)image_h);
  g_autofree guint32 *px = g_new (guint32, n_px); /* premultiplied ARGB, 0: nothing */
  WickRgb background = wick_palette_background (dark);
  guint32 edge_px = argb (background, 1.0);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), NULL);
  double sel_x = 0, sel_y = 0, sel_w = -1;
  for (guint i = first_row; i < end_row; i++)
    {
      double y = i * SEGMENT_ROW_HEIGHT;
      const WickSnapshotSegment *seg = &segments[i];
      g_autofree char *size = wick_format_bytes (seg->total_size);
      g_autofree char *address = g_strdup_printf ("0x%012" G_GINT64_MODIFIER "x", seg->address);
      /* TRANSLATORS: a segment's address, its size, " expandable" or nothing, its fragmentation */
      g_autofree char *label = g_strdup_printf (_ ("%s  %s%s  frag %.0f%%"), address, size,
                                                seg->is_expandable ? _ (" expandable") : "",
                                                seg->fragmentation * 100.0);
      pango_layout_set_text (layout, label, -1);
      int lw, lh;
      pango_layout_get_pixel_size (layout, &lw, &lh);
      wick_palette_set (cr, fg, 1.0);
      cairo_move_to (cr, 4, y + SEGMENT_ROW_HEIGHT / 2.0 - lh / 2.0);
      pango_cairo_show_layout (cr, layout);
      double scale = bar_w / (double)MAX (seg->total_size, 1);
      memset (px, 0, (gsize)n_px * sizeof *px);
      /* the last colour asked, for runs of blocks of one state and stack */
      WickBlockState last_state = WICK_BLOCK_OTHER;
      guint32 last_stack = G_MAXUINT32, last_px = 0;
      for (guint j = 0; j < seg->n_blocks; j++)
        {
          const WickSnapshotBlock *blk = &blocks[seg->first_block + j];
          double bx = (double)(blk->address - seg->address) * scale;
          double bw = (double)blk->size * scale;
          if ((gint)(seg->first_block + j) == selected_block)
            {
              sel_x = bx;
              sel_y = y;
              sel_w = bw;
            }
          int p0 = (int)ceil (bx - 0.5), p1 = (int)ceil (bx + bw - 0.5);
          p0 = CLAMP (p0, 0, n_px);
          p1 = CLAMP (p1, 0, n_px);
          if (p0 >= p1)
            continue; /* narrower than a pixel, between two centres */
          if (blk->state != last_state || blk->stack != last_stack || last_px == 0)
            {
              last_state = blk->state;
              last_stack = blk->stack;
              last_px = argb (block_colour (self, blk, dark),
                              blk->state == WICK_BLOCK_INACTIVE ? 0.6 : 0.9);
            }
          for (int q = p0; q < p1; q++)
            px[q] = last_px;
          if (j > 0 && bw >= 3.0 && p0 < n_px)
            px[p0] = edge_px; /* fragmentation shows as many thin pieces */
        }
      guint8 *row = pixels + (gsize)stride * (gsize)((int)(i - first_row) * SEGMENT_ROW_HEIGHT + 2);
      for (int r = 0; r < bar_h; r++)
        memcpy (row + (gsize)stride * (gsize)r, px, (gsize)n_px * sizeof *px);
    }
  cairo_surface_mark_dirty (image);
  cairo_save (cr);
  cairo_set_source_surface (cr, image, SEGMENT_LABEL_WIDTH, first_row * SEGMENT_ROW_HEIGHT);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle (cr, SEGMENT_LABEL_WIDTH, first_row * SEGMENT_ROW_HEIGHT, n_px, image_h);
  cairo_fill (cr);
  cairo_restore (cr);
  cairo_surface_destroy (image);
  if (sel_w >= 0)
    {
      wick_palette_set (cr, fg, 1.0);
      cairo_set_line_width (cr, 2);
      cairo_rectangle (cr, SEGMENT_LABEL_WIDTH + sel_x, sel_y + 1, MAX (sel_w, 2.0),
                       SEGMENT_ROW_HEIGHT - 2);
      cairo_stroke (cr);
    }
  g_object_unref (layout);
}

/* ---- the flame graph ---- */

/* Live bytes by stack at the selected time as an icicle: the outermost frame
 * at the top, each frame's width its live bytes, coloured by the category
 * that holds most of them. */
typedef struct
{
  guint32 frame;  /* G_MAXUINT32 for the root */
  guint32 parent; /* node index */
  guint32 first_child, next_sibling;
  guint depth;
  guint64 bytes;
  guint64 by_category[N_CATEGORIES];
  double x0; /* left edge as a fraction of the root, set by flame_layout */
} FlameNode;

#define FLAME_ROW 18
#define FLAME_NONE G_MAXUINT32
#define FLAME_NO_STACK (G_MAXUINT32 - 1)  /* a node for the stacks not recorded */
#define FLAME_NO_PYTHON (G_MAXUINT32 - 2) /* one for stacks without a Python frame */

static guint32
flame_child (GArray *nodes, guint32 parent, guint32 frame)
{
  FlameNode *p = &g_array_index (nodes, FlameNode, parent);
  for (guint32 c = p->first_child; c != FLAME_NONE;
       c = g_array_index (nodes, FlameNode, c).next_sibling)
    if (g_array_index (nodes, FlameNode, c).frame == frame)
      return c;
  FlameNode n = { frame, parent, FLAME_NONE, p->first_child, p->depth + 1, 0, { 0 }, 0 };
  guint32 index = nodes->len;
  g_array_append_val (nodes, n);
  g_array_index (nodes, FlameNode, parent).first_child = index;
  return index;
}

static gboolean
is_python_frame (WickMemorySnapshot *s, guint32 frame)
{
  const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (s, frame);
  return f != NULL && g_str_has_suffix (wick_memory_snapshot_str (s, f->filename), ".py");
}

static void
flame_layout (GArray *nodes, guint32 node, double x0)
{
  FlameNode *n = &g_array_index (nodes, FlameNode, node);
  n->x0 = x0;
  guint64 total = g_array_index (nodes, FlameNode, 0).bytes;
  double x = x0;
  for (guint32 c = n->first_child; c != FLAME_NONE;
       c = g_array_index (nodes, FlameNode, c).next_sibling)
    {
      flame_layout (nodes, c, x);
      x += (double)g_array_index (nodes, FlameNode, c).bytes / (double)MAX (total, 1);
    }
}

static void
build_flame (WickSnapshotWindow *self)
{
  WickMemorySnapshot *s = self->snapshot;
  g_clear_pointer (&self->flame, g_array_unref);
  self->flame = g_array_new (FALSE, FALSE, sizeof (FlameNode));
  FlameNode root = { FLAME_NONE, FLAME_NONE, FLAME_NONE, FLAME_NONE, 0, 0, { 0 }, 0 };
  g_array_append_val (self->flame, root);
  gint64 at = self->has_time ? self->selected_us : G_MAXINT64;
  g_autoptr (GArray) live = wick_memory_snapshot_live_by_stack (s, at);
  guint max_depth = 0;
  for (guint i = 0; i < live->len; i++)
    {
      const WickSnapshotStackBytes *sb = &g_array_index (live, WickSnapshotStackBytes, i);
      guint c = (guint)wick_memory_snapshot_stack_category (s, sb->stack);
      guint n;
      const guint32 *frames = wick_memory_snapshot_get_stack (s, sb->stack, &n);
      guint32 node = 0;
      FlameNode *r = &g_array_index (self->flame, FlameNode, 0);
      r->bytes += sb->bytes;
      r->by_category[c] += sb->bytes;
      guint added = 0;
      for (guint k = n; k-- > 0;) /* outermost first */
        {
          if (self->flame_python_only && !is_python_frame (s, frames[k]))
            continue;
          node = flame_child (self->flame, node, frames[k]);
          FlameNode *fn = &g_array_index (self->flame, FlameNode, node);
          fn->bytes += sb->bytes;
          fn->by_category[c] += sb->bytes;
          max_depth = MAX (max_depth, fn->depth);
          added++;
        }
      if (added == 0)
        {
          /* its own box, so that the widths add up */
          node = flame_child (self->flame, 0, n == 0 ? FLAME_NO_STACK : FLAME_NO_PYTHON);
          FlameNode *fn = &g_array_index (self->flame, FlameNode, node);
          fn->bytes += sb->bytes;
          fn->by_category[c] += sb->bytes;
          max_depth = MAX (max_depth, fn->depth);
        }
    }
  /* children largest first */
  for (guint i = 0; i < self->flame->len; i++)
    {
      FlameNode *p = &g_array_index (self->flame, FlameNode, i);
      g_autoptr (GArray) kids = g_array_new (FALSE, FALSE, sizeof (guint32));
      for (guint32 c = p->first_child; c != FLAME_NONE;
           c = g_array_index (self->flame, FlameNode, c).next_sibling)
        g_array_append_val (kids, c);
      for (guint a = 1; a < kids->len; a++) /* insertion sort: few children each */
        for (guint b = a; b > 0; b--)
          {
            guint32 *x = &g_array_index (kids, guint32, b - 1), *y = &g_array_index (kids, guint32, b);
            if (g_array_index (self->flame, FlameNode, *x).bytes
                >= g_array_index (self->flame, FlameNode, *y).bytes)
              break;
            guint32 t = *x;
            *x = *y;
            *y = t;
          }
      p = &g_array_index (self->flame, FlameNode, i);
      p->first_child = kids->len > 0 ? g_array_index (kids, guint32, 0) : FLAME_NONE;
      for (guint a = 0; a < kids->len; a++)
        g_array_index (self->flame, FlameNode, g_array_index (kids, guint32, a)).next_sibling
          = a + 1 < kids->len ? g_array_index (kids, guint32, a + 1) : FLAME_NONE;
    }
  flame_layout (self->flame, 0, 0.0);
  self->flame_selected = 0;
  gtk_widget_set_size_request (self->flame_area, -1, (int)(max_depth + 1) * FLAME_ROW + 4);
  gtk_widget_queue_draw (self->flame_area);
}

static guint
flame_dominant (const FlameNode *n)
{
  guint best = WICK_CATEGORY_OTHER;
  for (guint c = 0; c < N_CATEGORIES; c++)
    if (n->by_category[c] > n->by_category[best])
      best = c;
  return best;
}

static char *
flame_label (WickSnapshotWindow *self, const FlameNode *n)
{
  if (n->frame == FLAME_NONE)
    {
      g_autofree char *bytes = wick_format_bytes (n->bytes);
      return g_strdup_printf (_ ("all live allocations: %s"), bytes);
    }
  if (n->frame == FLAME_NO_STACK)
    return g_strdup (_ ("(no stack recorded)"));
  if (n->frame == FLAME_NO_PYTHON)
    return g_strdup (_ ("(no Python frame)"));
  const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (self->snapshot, n->frame);
  return g_strdup (wick_memory_snapshot_str (self->snapshot, f->name));
}

static void
draw_flame (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  WickSnapshotWindow *self = data;
  gboolean dark = is_dark ();
  WickRgb fg = wick_palette_foreground (dark);
  wick_palette_set (cr, wick_palette_background (dark), 1.0);
  cairo_paint (cr);
  if (self->flame == NULL || self->flame->len == 0)
    return;
  guint64 total = g_array_index (self->flame, FlameNode, 0).bytes;
  if (total == 0)
    {
      draw_text (cr, GTK_WIDGET (area), _ ("Nothing is live at this time."), 8, 12, 0.0, fg);
      return;
    }
  double w = width - 4;
  for (guint i = 0; i < self->flame->len; i++)
    {
      const FlameNode *n = &g_array_index (self->flame, FlameNode, i);
      double x = 2 + n->x0 * w, bw = (double)n->bytes / (double)total * w;
      if (bw < 0.5)
        continue;
      double y = n->depth * FLAME_ROW;
      guint c = flame_dominant (n);
      wick_palette_set (cr, wick_palette_category (c, dark), i == self->flame_selected ? 1.0 : 0.75);
      cairo_rectangle (cr, x, y + 1, MAX (bw - 1, 0.5), FLAME_ROW - 2);
      cairo_fill (cr);
      if (i == self->flame_selected)
        {
          wick_palette_set (cr, fg, 1.0);
          cairo_set_line_width (cr, 1.5);
          cairo_rectangle (cr, x + 0.75, y + 1.75, MAX (bw - 2.5, 0.5), FLAME_ROW - 3.5);
          cairo_stroke (cr);
        }
      if (bw > 36)
        {
          g_autofree char *label = flame_label (self, n);
          PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), label);
          pango_layout_set_width (layout, (int)((bw - 6) * PANGO_SCALE));
          pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
          int lw, lh;
          pango_layout_get_pixel_size (layout, &lw, &lh);
          wick_palette_set (cr, fg, 1.0);
          cairo_move_to (cr, x + 3, y + (FLAME_ROW - lh) / 2.0);
          pango_cairo_show_layout (cr, layout);
          g_object_unref (layout);
        }
    }
}

static void
show_flame_node (WickSnapshotWindow *self)
{
  if (self->flame == NULL || self->flame_selected >= self->flame->len)
    return;
  const FlameNode *n = &g_array_index (self->flame, FlameNode, self->flame_selected);
  guint64 total = g_array_index (self->flame, FlameNode, 0).bytes;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *bytes = wick_format_bytes (n->bytes);
  g_string_append_printf (text, _ ("%s live under this frame (%.1f%% of all live)"), bytes,
                          100.0 * (double)n->bytes / (double)MAX (total, 1));
  for (guint c = 0; c < N_CATEGORIES; c++)
    if (n->by_category[c] > 0)
      {
        g_autofree char *cb = wick_format_bytes (n->by_category[c]);
        g_string_append_printf (text, "\n  %s: %s",
                                c == WICK_CATEGORY_OTHER ? _ ("unknown")
                                                         : wick_palette_category_name (c),
                                cb);
      }
  g_string_append (text, _ ("\nFrames from the outermost:"));
  g_autoptr (GArray) path = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 k = self->flame_selected; k != FLAME_NONE && k != 0;
       k = g_array_index (self->flame, FlameNode, k).parent)
    g_array_prepend_val (path, g_array_index (self->flame, FlameNode, k).frame);
  for (guint i = 0; i < path->len; i++)
    {
      guint32 f = g_array_index (path, guint32, i);
      g_autofree char *frame = f == FLAME_NO_STACK    ? g_strdup (_ ("(no stack recorded)"))
                               : f == FLAME_NO_PYTHON ? g_strdup (_ ("(no Python frame)"))
                                                      : wick_memory_snapshot_format_frame (self->snapshot, f);
      g_string_append_printf (text, "\n  %s", frame);
    }
  g_free (self->details_text);
  self->details_text = g_string_free (g_steal_pointer (&text), FALSE);
  gtk_label_set_text (GTK_LABEL (self->details), self->details_text);
}

static void
on_flame_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  WickSnapshotWindow *self = data;
  if (self->flame == NULL)
    return;
  guint64 total = g_array_index (self->flame, FlameNode, 0).bytes;
  double w = gtk_widget_get_width (self->flame_area) - 4;
  guint depth = (guint)(y / FLAME_ROW);
  for (guint i = 0; i < self->flame->len; i++)
    {
      const FlameNode *n = &g_array_index (self->flame, FlameNode, i);
      double x0 = 2 + n->x0 * w, bw = (double)n->bytes / (double)MAX (total, 1) * w;
      if (n->depth == depth && x >= x0 && x < x0 + bw)
        {
          self->flame_selected = i;
          show_flame_node (self);
          gtk_widget_queue_draw (self->flame_area);
          return;
        }
    }
}

static void
on_python_only_toggled (GtkCheckButton *button, gpointer data)
{
  WickSnapshotWindow *self = data;
  self->flame_python_only = gtk_check_button_get_active (button);
  if (self->snapshot != NULL)
    build_flame (self);
}

/* ---- the live list and the details ---- */

static const char *
python_frame (WickMemorySnapshot *s, guint32 stack, char **owned)
{
  guint n;
  const guint32 *frames = wick_memory_snapshot_get_stack (s, stack, &n);
  for (guint i = 0; i < n; i++)
    {
      const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (s, frames[i]);
      if (g_str_has_suffix (wick_memory_snapshot_str (s, f->filename), ".py"))
        return *owned = wick_memory_snapshot_format_frame (s, frames[i]);
    }
  /* No Python frame (autograd's engine thread, a C++ caller): the first
   * frame that is not the allocator's or the unwinder's own. */
  static const char *const internal[] = { "torch::unwind",
                                          "torch::CapturedTraceback",
                                          "torch::cuda::",
                                          "c10::",
                                          "at::detail::empty",
                                          "_PyEval",
                                          "Py" };
  for (guint i = 0; i < n; i++)
    {
      const char *name
        = wick_memory_snapshot_str (s, wick_memory_snapshot_get_frame (s, frames[i])->name);
      gboolean skip = FALSE;
      for (guint k = 0; k < G_N_ELEMENTS (internal) && !skip; k++)
        skip = g_str_has_prefix (name, internal[k]);
      if (!skip)
        return *owned = wick_memory_snapshot_format_frame (s, frames[i]);
    }
  return n > 0 ? (*owned = wick_memory_snapshot_format_frame (s, frames[0]))
               : _ ("no stack recorded");
}

static char *
format_time (WickSnapshotWindow *self, gint64 t)
{
  if (t == G_MININT64)
    return g_strdup (_ ("before the history"));
  if (t == G_MAXINT64)
    return g_strdup (_ ("not freed at the snapshot"));
  g_autofree char *d = wick_format_duration ((guint64)MAX (0, t - self->t0) * 1000);
  return g_strdup_printf ("+%s", d);
}

static void
show_details (WickSnapshotWindow *self)
{
  g_clear_pointer (&self->details_text, g_free);
  if (self->selected_allocation < 0)
    {
      self->details_text = g_strdup ("");
      gtk_label_set_text (GTK_LABEL (self->details),
                          _ ("Select an allocation to see its life and stack."));
      return;
    }
  WickMemorySnapshot *s = self->snapshot;
  guint n;
  const WickSnapshotAllocation *a
    = &wick_memory_snapshot_get_allocations (s, &n)[self->selected_allocation];
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *size = wick_format_bytes (a->size);
  g_autofree char *alloc = format_time (self, a->alloc_us);
  g_autofree char *req = format_time (self, a->free_requested_us);
  g_autofree char *done = format_time (self, a->free_completed_us);
  WickMemoryCategory category = allocation_category (self, (guint)self->selected_allocation, a);
  g_autofree char *address = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", a->address);
  /* TRANSLATORS: address · size · device index · category */
  g_string_append_printf (text, _ ("%s · %s requested · device %u · %s\n"), address, size,
                          a->device_index,
                          category == WICK_CATEGORY_OTHER ? _ ("unknown")
                                                          : wick_palette_category_name (category));
  if (self->categories != NULL
      && wick_snapshot_categories_get_counts (self->categories)->record_lifetimes > 0)
    {
      WickSnapshotMatch match;
      WickSnapshotCategorySource source;
      guint32 record;
      wick_snapshot_categories_get (self->categories, (guint)self->selected_allocation, &match,
                                    &source, &record);
      guint n_memory;
      const WickMemoryEvent *memory = wick_document_get_memory (self->trace, &n_memory);
      const char *from = source == WICK_SNAPSHOT_CATEGORY_FROM_RECORD ? _ ("its record's")
                         : source == WICK_SNAPSHOT_CATEGORY_FROM_FRAMES ? _ ("its frames'")
                                                                        : _ ("none known");
      if (match == WICK_SNAPSHOT_MATCHED && record < n_memory)
        /* TRANSLATORS: the trace's storage id, then where the category came from */
        g_string_append_printf (text, _ ("The trace's record: storage %s · category: %s\n"),
                                wick_document_str (self->trace, memory[record].storage_id), from);
      else if (match == WICK_SNAPSHOT_AMBIGUOUS)
        g_string_append_printf (text,
                                _ ("Several of the trace's records overlap it about equally: "
                                   "ambiguous · category: %s\n"),
                                from);
      else
        g_string_append_printf (text, _ ("No record of the trace at its address · category: %s\n"),
                                from);
    }
  if (a->free_completed_us == G_MAXINT64)
    g_string_append_printf (text, _ ("alloc %s · live at the snapshot\n"), alloc);
  else
    g_string_append_printf (text, _ ("alloc %s · free requested %s · free completed %s\n"), alloc,
                            req, done);
  guint n_frames;
  const guint32 *frames = wick_memory_snapshot_get_stack (s, a->stack, &n_frames);
  if (n_frames == 0 && a->alloc_us == G_MININT64 && a->free_stack != WICK_SNAPSHOT_NO_STACK)
    {
      /* Made before the history: only where it was freed is known. */
      g_autofree char *owned = NULL;
      const char *freed_in = python_frame (s, a->free_stack, &owned);
      g_string_append_printf (text,
                              _ ("Allocated before the history began: no allocation stack, "
                                 "so no category. Freed in %s."),
                              freed_in);
    }
  else if (n_frames == 0)
    g_string_append (text, _ ("No stack recorded (allocated before the history began)."));
  else
    {
      /* The Python frames first (innermost first), then the whole stack. */
      g_string_append (text, _ ("Python frames:"));
      guint n_python = 0;
      for (guint i = 0; i < n_frames; i++)
        {
          const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (s, frames[i]);
          if (!g_str_has_suffix (wick_memory_snapshot_str (s, f->filename), ".py"))
            continue;
          g_autofree char *frame = wick_memory_snapshot_format_frame (s, frames[i]);
          g_string_append_printf (text, "\n  %s", frame);
          n_python++;
        }
      if (n_python == 0)
        g_string_append_printf (text, " %s", _ ("none"));
      g_string_append_printf (text, _ ("\nAll %u frames:"), n_frames);
      for (guint i = 0; i < n_frames; i++)
        {
          g_autofree char *frame = wick_memory_snapshot_format_frame (s, frames[i]);
          g_string_append_printf (text, "\n  %s", frame);
        }
    }
  self->details_text = g_string_free (g_steal_pointer (&text), FALSE);
  gtk_label_set_text (GTK_LABEL (self->details), self->details_text);
}

static void
on_row_selected (GtkListBox *list, GtkListBoxRow *row, gpointer data)
{
  WickSnapshotWindow *self = data;
  if (row == NULL)
    return;
  int index = gtk_list_box_row_get_index (row);
  if (self->live == NULL || index < 0 || (guint)index >= self->live->len)
    return;
  self->selected_allocation = (gint)g_array_index (self->live, guint32, index);
  show_details (self);
  gtk_widget_queue_draw (self->chart);
  gtk_widget_queue_draw (self->segment_map);
}

static void
update_live (WickSnapshotWindow *self)
{
  WickMemorySnapshot *s = self->snapshot;
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->live_list)))
    gtk_list_box_remove (GTK_LIST_BOX (self->live_list), child);
  g_clear_pointer (&self->live, g_array_unref);
  gint64 at = self->has_time ? self->selected_us : G_MAXINT64 - 1;
  self->live = wick_memory_snapshot_live_at (s, at, LIVE_ROWS);
  guint n;
  const WickSnapshotAllocation *allocations = wick_memory_snapshot_get_allocations (s, &n);
  guint64 total = 0;
  for (guint i = 0; i < self->live->len; i++)
    {
      guint index = g_array_index (self->live, guint32, i);
      const WickSnapshotAllocation *a = &allocations[index];
      total += a->size;
      g_autofree char *size = wick_format_bytes (a->size);
      g_autofree char *owned = NULL;
      const char *frame = python_frame (s, a->stack, &owned);
      WickMemoryCategory category = allocation_category (self, index, a);
      g_autofree char *text = g_strdup_printf (
        "%s · %s · %s", size,
        category == WICK_CATEGORY_OTHER ? _ ("unknown") : wick_palette_category_name (category),
        frame);
      GtkWidget *label = gtk_label_new (text);
      gtk_label_set_xalign (GTK_LABEL (label), 0.0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_list_box_append (GTK_LIST_BOX (self->live_list), label);
    }
  g_autofree char *when = format_time (self, at);
  g_autofree char *title = g_strdup_printf (_ ("The %u largest live at %s"), self->live->len,
                                            self->has_time ? when : _ ("the snapshot"));
  gtk_label_set_text (GTK_LABEL (self->live_title), title);
  self->selected_allocation = -1;
  show_details (self);
  build_flame (self);
}

/* ---- loading ---- */

static void
progress_unref (Progress *p)
{
  if (!g_atomic_int_dec_and_test (&p->refs))
    return;
  g_weak_ref_clear (&p->window);
  g_mutex_clear (&p->lock);
  g_free (p->path);
  g_free (p->path_b);
  g_free (p);
}

static gboolean
progress_idle (gpointer data)
{
  Progress *p = data;
  g_autoptr (WickSnapshotWindow) self = g_weak_ref_get (&p->window);
  g_mutex_lock (&p->lock);
  guint64 consumed = p->consumed, size = p->size;
  p->idle_pending = FALSE;
  g_mutex_unlock (&p->lock);
  if (self != NULL && !self->gone && self->loading && size > 0)
    gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress),
                                   (double)consumed / (double)size);
  return G_SOURCE_REMOVE;
}

static void
on_progress (guint64 consumed, guint64 size, gpointer data)
{
  Progress *p = data;
  g_mutex_lock (&p->lock);
  p->consumed = consumed;
  p->size = size;
  gboolean schedule = !p->idle_pending;
  p->idle_pending = TRUE;
  g_mutex_unlock (&p->lock);
  if (schedule)
    {
      g_atomic_int_inc (&p->refs);
      g_idle_add_full (G_PRIORITY_LOW, progress_idle, p, (GDestroyNotify)progress_unref);
    }
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Progress *p = task_data; /* the window is never touched off the main thread */
  GError *error = NULL;
  WickMemorySnapshot *s = wick_memory_snapshot_load_range (p->path, p->from_us, p->to_us,
                                                           cancellable, on_progress, p, &error);
  if (s != NULL && p->path_b != NULL)
    {
      /* compare: B too; the pair goes back as one pointer array */
      WickMemorySnapshot *b
        = wick_memory_snapshot_load (p->path_b, cancellable, on_progress, p, &error);
      if (b == NULL)
        {
          wick_memory_snapshot_free (s);
          g_task_return_error (task, error);
          return;
        }
      GPtrArray *pair = g_ptr_array_new_with_free_func ((GDestroyNotify)wick_memory_snapshot_free);
      g_ptr_array_add (pair, s);
      g_ptr_array_add (pair, b);
      g_task_return_pointer (task, pair, (GDestroyNotify)g_ptr_array_unref);
      return;
    }
  if (s == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, s, (GDestroyNotify)wick_memory_snapshot_free);
}

static void
show_snapshot (WickSnapshotWindow *self)
{
  WickMemorySnapshot *s = self->snapshot;
  update_categories (self);
  build_category_points (self);
  guint n_segments, n_entries;
  wick_memory_snapshot_get_segments (s, &n_segments);
  wick_memory_snapshot_get_entries (s, &n_entries);
  g_autofree char *reserved = wick_format_bytes (wick_memory_snapshot_get_reserved (s));
  g_autofree char *allocated = wick_format_bytes (wick_memory_snapshot_get_allocated (s));
  g_autofree char *base = g_path_get_basename (self->path);
  g_autofree char *subtitle = g_strdup_printf (
    _ ("%s reserved in %u segments, %s allocated at the snapshot · %u history entries"), reserved,
    n_segments, allocated, n_entries);
  gint64 from_us, to_us;
  guint64 n_outside;
  if (wick_memory_snapshot_get_range (s, &from_us, &to_us, &n_outside))
    {
      /* TRANSLATORS: the file's name and how many history entries a range left out */
      g_autofree char *ranged
        = g_strdup_printf (_ ("%s — a time range (%llu history entries outside it left out)"),
                           base, (unsigned long long)n_outside);
      g_free (base);
      base = g_steal_pointer (&ranged);
    }
  /* a trace whose records carry no device address matches nothing: the
   * frames' categories, said as without a trace */
  if (self->categories != NULL
      && wick_snapshot_categories_get_counts (self->categories)->record_lifetimes > 0)
    {
      const WickSnapshotMatchCounts *c = wick_snapshot_categories_get_counts (self->categories);
      /* TRANSLATORS: allocations matched to the trace's records, of all, and the ambiguous ones */
      g_autofree char *matched = g_strdup_printf (
        _ ("%s · categories from the trace's records: %llu of %llu allocations matched, %llu "
           "ambiguous"),
        subtitle, (unsigned long long)c->matched, (unsigned long long)c->allocations,
        (unsigned long long)c->ambiguous);
      g_free (subtitle);
      subtitle = g_steal_pointer (&matched);
    }
  adw_window_title_set_title (ADW_WINDOW_TITLE (self->title), base);
  adw_window_title_set_subtitle (ADW_WINDOW_TITLE (self->title), subtitle);
  gtk_widget_set_size_request (self->segment_map, -1, (int)n_segments * SEGMENT_ROW_HEIGHT);
  update_live (self);
  gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "snapshot");
  gtk_widget_queue_draw (self->chart);
  gtk_widget_queue_draw (self->segment_map);
}

/* ---- the differential flame graph (compare) ---- */

/* The stacks of two snapshots as one icicle, matched by frame text
 * ("name (file:line)", as wick_memory_snapshot_diff matches stacks): the
 * outermost frame at the top, each frame's width B's live bytes under it
 * (or A's, with "Widths from A", so that what B freed shows), coloured by
 * the change from A to B: red where it grew, blue where it shrank, the
 * deeper the larger the change against the frame's bytes, grey for none. */
typedef struct
{
  guint32 name; /* index into dflame_names; DFLAME_ROOT, FLAME_NO_STACK, FLAME_NO_PYTHON */
  guint32 parent, first_child, next_sibling;
  guint depth;
  guint64 bytes_a, bytes_b;
  double x0; /* left edge as a fraction of the root's width */
} DiffNode;

#define DFLAME_ROOT G_MAXUINT32

static guint64
dnode_width (const WickSnapshotWindow *self, const DiffNode *n)
{
  return self->dflame_width_a ? n->bytes_a : n->bytes_b;
}

static guint32
dflame_child (GArray *nodes, guint32 parent, guint32 name)
{
  DiffNode *p = &g_array_index (nodes, DiffNode, parent);
  for (guint32 c = p->first_child; c != FLAME_NONE;
       c = g_array_index (nodes, DiffNode, c).next_sibling)
    if (g_array_index (nodes, DiffNode, c).name == name)
      return c;
  DiffNode n = { name, parent, FLAME_NONE, p->first_child, p->depth + 1, 0, 0, 0 };
  guint32 index = nodes->len;
  g_array_append_val (nodes, n);
  g_array_index (nodes, DiffNode, parent).first_child = index;
  return index;
}

/* "name (file.py:12)": a Python frame as stack_key writes it. */
static gboolean
key_frame_is_python (const char *frame)
{
  const char *colon = strrchr (frame, ':');
  return colon != NULL && colon - frame >= 3 && memcmp (colon - 3, ".py", 3) == 0;
}

static void
dflame_layout (WickSnapshotWindow *self, guint32 node, double x0)
{
  GArray *nodes = self->dflame;
  DiffNode *n = &g_array_index (nodes, DiffNode, node);
  n->x0 = x0;
  guint64 total = dnode_width (self, &g_array_index (nodes, DiffNode, 0));
  double x = x0;
  for (guint32 c = n->first_child; c != FLAME_NONE;
       c = g_array_index (nodes, DiffNode, c).next_sibling)
    {
      dflame_layout (self, c, x);
      x += (double)dnode_width (self, &g_array_index (nodes, DiffNode, c)) / (double)MAX (total, 1);
    }
}

static void
dflame_sort (WickSnapshotWindow *self)
{
  GArray *nodes = self->dflame;
  g_autoptr (GArray) kids = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = 0; i < nodes->len; i++)
    {
      g_array_set_size (kids, 0);
      for (guint32 c = g_array_index (nodes, DiffNode, i).first_child; c != FLAME_NONE;
           c = g_array_index (nodes, DiffNode, c).next_sibling)
        g_array_append_val (kids, c);
      for (guint a = 1; a < kids->len; a++) /* insertion sort: few children each */
        for (guint b = a; b > 0; b--)
          {
            guint32 *x = &g_array_index (kids, guint32, b - 1), *y = &g_array_index (kids, guint32, b);
            if (dnode_width (self, &g_array_index (nodes, DiffNode, *x))
                >= dnode_width (self, &g_array_index (nodes, DiffNode, *y)))
              break;
            guint32 t = *x;
            *x = *y;
            *y = t;
          }
      g_array_index (nodes, DiffNode, i).first_child
        = kids->len > 0 ? g_array_index (kids, guint32, 0) : FLAME_NONE;
      for (guint a = 0; a < kids->len; a++)
        g_array_index (nodes, DiffNode, g_array_index (kids, guint32, a)).next_sibling
          = a + 1 < kids->len ? g_array_index (kids, guint32, a + 1) : FLAME_NONE;
    }
  dflame_layout (self, 0, 0.0);
}

static void
build_diff_flame (WickSnapshotWindow *self)
{
  g_clear_pointer (&self->dflame, g_array_unref);
  g_clear_pointer (&self->dflame_names, g_ptr_array_unref);
  if (self->diff == NULL)
    return;
  self->dflame = g_array_new (FALSE, FALSE, sizeof (DiffNode));
  self->dflame_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal); /* borrowed keys */
  DiffNode root = { DFLAME_ROOT, FLAME_NONE, FLAME_NONE, FLAME_NONE, 0, 0, 0, 0 };
  g_array_append_val (self->dflame, root);
  guint max_depth = 0;
  for (guint i = 0; i < self->diff->len; i++)
    {
      const WickSnapshotStackDiff *d = &g_array_index (self->diff, WickSnapshotStackDiff, i);
      g_auto (GStrv) frames = d->key[0] != '\0' ? g_strsplit (d->key, "\n", -1) : g_new0 (char *, 1);
      guint n = g_strv_length (frames);
      DiffNode *r = &g_array_index (self->dflame, DiffNode, 0);
      r->bytes_a += d->bytes_a;
      r->bytes_b += d->bytes_b;
      guint32 node = 0;
      guint added = 0;
      for (guint k = n; k-- > 0;) /* outermost first */
        {
          if (self->dflame_python_only && !key_frame_is_python (frames[k]))
            continue;
          gpointer id;
          if (!g_hash_table_lookup_extended (ids, frames[k], NULL, &id))
            {
              id = GUINT_TO_POINTER (self->dflame_names->len);
              char *name = g_strdup (frames[k]);
              g_ptr_array_add (self->dflame_names, name);
              g_hash_table_insert (ids, name, id);
            }
          node = dflame_child (self->dflame, node, GPOINTER_TO_UINT (id));
          added++;
          DiffNode *fn = &g_array_index (self->dflame, DiffNode, node);
          fn->bytes_a += d->bytes_a;
          fn->bytes_b += d->bytes_b;
          max_depth = MAX (max_depth, fn->depth);
        }
      if (added == 0)
        {
          node = dflame_child (self->dflame, 0, n == 0 ? FLAME_NO_STACK : FLAME_NO_PYTHON);
          DiffNode *fn = &g_array_index (self->dflame, DiffNode, node);
          fn->bytes_a += d->bytes_a;
          fn->bytes_b += d->bytes_b;
          max_depth = MAX (max_depth, fn->depth);
        }
    }
  dflame_sort (self);
  self->dflame_selected = 0;
  gtk_widget_set_size_request (self->dflame_area, -1, (int)(max_depth + 1) * FLAME_ROW + 4);
  gtk_widget_queue_draw (self->dflame_area);
}

/* Grey for no change, towards red for growth and blue for shrinkage by the
 * change's share of the larger of the two. */
static WickRgb
dflame_colour (const DiffNode *n, gboolean dark)
{
  guint64 big = MAX (n->bytes_a, n->bytes_b);
  double f = big == 0 ? 0.0
                      : ((double)n->bytes_b - (double)n->bytes_a) / (double)big; /* -1 .. 1 */
  WickRgb grey = dark ? (WickRgb){ 0.42, 0.42, 0.45 } : (WickRgb){ 0.78, 0.78, 0.80 };
  WickRgb to = f >= 0 ? (WickRgb){ 0.86, 0.16, 0.12 } : (WickRgb){ 0.15, 0.38, 0.86 };
  double t = 0.25 + 0.75 * fabs (f);
  if (f == 0.0)
    t = 0.0;
  return (WickRgb){ grey.r + (to.r - grey.r) * t, grey.g + (to.g - grey.g) * t,
                    grey.b + (to.b - grey.b) * t };
}

static char *
dflame_label (WickSnapshotWindow *self, const DiffNode *n)
{
  if (n->name == DFLAME_ROOT)
    {
      g_autofree char *a = wick_format_bytes (n->bytes_a);
      g_autofree char *b = wick_format_bytes (n->bytes_b);
      /* TRANSLATORS: live bytes at snapshot A and at B */
      return g_strdup_printf (_ ("all live allocations: %s → %s"), a, b);
    }
  if (n->name == FLAME_NO_STACK)
    return g_strdup (_ ("(no stack recorded)"));
  if (n->name == FLAME_NO_PYTHON)
    return g_strdup (_ ("(no Python frame)"));
  const char *text = g_ptr_array_index (self->dflame_names, n->name);
  const char *paren = strstr (text, " (");
  return paren != NULL ? g_strndup (text, (gsize)(paren - text)) : g_strdup (text);
}

static void
draw_diff_flame (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  WickSnapshotWindow *self = data;
  gboolean dark = is_dark ();
  WickRgb fg = wick_palette_foreground (dark);
  wick_palette_set (cr, wick_palette_background (dark), 1.0);
  cairo_paint (cr);
  if (self->dflame == NULL || self->dflame->len == 0)
    return;
  guint64 total = dnode_width (self, &g_array_index (self->dflame, DiffNode, 0));
  if (total == 0)
    {
      draw_text (cr, GTK_WIDGET (area),
                 self->dflame_width_a ? _ ("Nothing is live at snapshot A.")
                                      : _ ("Nothing is live at snapshot B."),
                 8, 12, 0.0, fg);
      return;
    }
  double w = width - 4;
  for (guint i = 0; i < self->dflame->len; i++)
    {
      const DiffNode *n = &g_array_index (self->dflame, DiffNode, i);
      double x = 2 + n->x0 * w, bw = (double)dnode_width (self, n) / (double)total * w;
      if (bw < 0.5)
        continue;
      double y = n->depth * FLAME_ROW;
      wick_palette_set (cr, dflame_colour (n, dark), 1.0);
      cairo_rectangle (cr, x, y + 1, MAX (bw - 1, 0.5), FLAME_ROW - 2);
      cairo_fill (cr);
      if (i == self->dflame_selected)
        {
          wick_palette_set (cr, fg, 1.0);
          cairo_set_line_width (cr, 1.5);
          cairo_rectangle (cr, x + 0.75, y + 1.75, MAX (bw - 2.5, 0.5), FLAME_ROW - 3.5);
          cairo_stroke (cr);
        }
      if (bw > 36)
        {
          g_autofree char *label = dflame_label (self, n);
          PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), label);
          pango_layout_set_width (layout, (int)((bw - 6) * PANGO_SCALE));
          pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
          int lw, lh;
          pango_layout_get_pixel_size (layout, &lw, &lh);
          wick_palette_set (cr, (WickRgb){ 0.08, 0.08, 0.08 }, 1.0); /* on light boxes */
          cairo_move_to (cr, x + 3, y + (FLAME_ROW - lh) / 2.0);
          pango_cairo_show_layout (cr, layout);
          g_object_unref (layout);
        }
    }
}

static void
show_diff_flame_node (WickSnapshotWindow *self)
{
  if (self->dflame == NULL || self->dflame_selected >= self->dflame->len)
    return;
  const DiffNode *n = &g_array_index (self->dflame, DiffNode, self->dflame_selected);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *ba = wick_format_bytes (n->bytes_a);
  g_autofree char *bb = wick_format_bytes (n->bytes_b);
  gint64 delta = (gint64)(n->bytes_b - n->bytes_a);
  g_autofree char *bd = wick_format_bytes ((guint64)ABS (delta));
  /* TRANSLATORS: live bytes under a frame at snapshot A, at B, and the change with its sign */
  g_string_append_printf (text, _ ("A: %s · B: %s · change %c%s"), ba, bb,
                          delta > 0 ? '+' : delta < 0 ? '-' : ' ', bd);
  g_string_append (text, _ ("\nFrames from the outermost:"));
  g_autoptr (GArray) path = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 k = self->dflame_selected; k != FLAME_NONE && k != 0;
       k = g_array_index (self->dflame, DiffNode, k).parent)
    g_array_prepend_val (path, g_array_index (self->dflame, DiffNode, k).name);
  for (guint i = 0; i < path->len; i++)
    {
      guint32 f = g_array_index (path, guint32, i);
      const char *frame = f == FLAME_NO_STACK    ? _ ("(no stack recorded)")
                          : f == FLAME_NO_PYTHON ? _ ("(no Python frame)")
                                                 : g_ptr_array_index (self->dflame_names, f);
      g_string_append_printf (text, "\n  %s", frame);
    }
  g_free (self->diff_text);
  self->diff_text = g_string_free (g_steal_pointer (&text), FALSE);
  gtk_label_set_text (GTK_LABEL (self->diff_details), self->diff_text);
}

static void
on_diff_flame_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer data)
{
  WickSnapshotWindow *self = data;
  if (self->dflame == NULL)
    return;
  guint64 total = dnode_width (self, &g_array_index (self->dflame, DiffNode, 0));
  double w = gtk_widget_get_width (self->dflame_area) - 4;
  guint depth = (guint)(y / FLAME_ROW);
  for (guint i = 0; i < self->dflame->len; i++)
    {
      const DiffNode *n = &g_array_index (self->dflame, DiffNode, i);
      double x0 = 2 + n->x0 * w, bw = (double)dnode_width (self, n) / (double)MAX (total, 1) * w;
      if (n->depth == depth && x >= x0 && x < x0 + bw)
        {
          self->dflame_selected = i;
          show_diff_flame_node (self);
          gtk_widget_queue_draw (self->dflame_area);
          return;
        }
    }
}

static void
on_diff_python_only_toggled (GtkCheckButton *button, gpointer data)
{
  WickSnapshotWindow *self = data;
  self->dflame_python_only = gtk_check_button_get_active (button);
  build_diff_flame (self);
}

static void
on_diff_width_a_toggled (GtkCheckButton *button, gpointer data)
{
  WickSnapshotWindow *self = data;
  self->dflame_width_a = gtk_check_button_get_active (button);
  if (self->dflame != NULL)
    {
      dflame_sort (self);
      gtk_widget_queue_draw (self->dflame_area);
    }
}

/* ---- compare ---- */

static const char *
diff_frame (WickMemorySnapshot *s, guint32 stack, char **owned)
{
  if (stack == WICK_SNAPSHOT_NO_STACK)
    return _ ("no stack recorded");
  return python_frame (s, stack, owned);
}

static void
on_diff_selected (GtkListBox *list, GtkListBoxRow *row, gpointer data)
{
  WickSnapshotWindow *self = data;
  if (row == NULL || self->diff == NULL)
    return;
  int i = gtk_list_box_row_get_index (row);
  if (i < 0 || (guint)i >= self->diff->len)
    return;
  const WickSnapshotStackDiff *d = &g_array_index (self->diff, WickSnapshotStackDiff, i);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *ba = wick_format_bytes (d->bytes_a);
  g_autofree char *bb = wick_format_bytes (d->bytes_b);
  /* TRANSLATORS: bytes and blocks in snapshot A, then in B */
  g_string_append_printf (text, _ ("A: %s in %u blocks · B: %s in %u blocks"), ba, d->count_a, bb,
                          d->count_b);
  g_string_append (text, "\n");
  if (d->key[0] == '\0')
    g_string_append (text, _ ("No stack recorded (allocated before the history began)."));
  else
    {
      g_string_append (text, _ ("Frames, innermost first:"));
      g_auto (GStrv) frames = g_strsplit (d->key, "\n", -1);
      for (guint f = 0; frames[f] != NULL; f++)
        g_string_append_printf (text, "\n  %s", frames[f]);
    }
  g_free (self->diff_text);
  self->diff_text = g_string_free (g_steal_pointer (&text), FALSE);
  gtk_label_set_text (GTK_LABEL (self->diff_details), self->diff_text);
}

static void
show_diff (WickSnapshotWindow *self)
{
  WickMemorySnapshot *a = self->snapshot, *b = self->snapshot_b;
  g_clear_pointer (&self->diff, g_array_unref);
  self->diff = wick_memory_snapshot_diff (a, b);
  guint shown = 0;
  for (guint i = 0; i < self->diff->len && shown < 500; i++, shown++)
    {
      const WickSnapshotStackDiff *d = &g_array_index (self->diff, WickSnapshotStackDiff, i);
      gint64 delta = (gint64)(d->bytes_b - d->bytes_a);
      g_autofree char *mag = wick_format_bytes ((guint64)ABS (delta));
      g_autofree char *owned = NULL;
      const char *frame = d->stack_b != WICK_SNAPSHOT_NO_STACK ? diff_frame (b, d->stack_b, &owned)
                                                              : diff_frame (a, d->stack_a, &owned);
      g_autofree char *row = g_strdup_printf ("%c%s · %u → %u · %s", delta >= 0 ? '+' : '-', mag,
                                              d->count_a, d->count_b, frame);
      GtkWidget *label = gtk_label_new (row);
      gtk_label_set_xalign (GTK_LABEL (label), 0.0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_list_box_append (GTK_LIST_BOX (self->diff_list), label);
    }
  g_autofree char *na = g_path_get_basename (self->path);
  g_autofree char *nb = g_path_get_basename (self->path_b);
  g_autofree char *aa = wick_format_bytes (wick_memory_snapshot_get_allocated (a));
  g_autofree char *ab = wick_format_bytes (wick_memory_snapshot_get_allocated (b));
  g_autofree char *title = g_strdup_printf ("%s → %s", na, nb);
  /* TRANSLATORS: allocated bytes at snapshot A and B, and the number of stacks */
  g_autofree char *subtitle = g_strdup_printf (_ ("allocated %s → %s · %u stacks, largest change first"),
                                               aa, ab, self->diff->len);
  adw_window_title_set_title (ADW_WINDOW_TITLE (self->title), title);
  adw_window_title_set_subtitle (ADW_WINDOW_TITLE (self->title), subtitle);
  build_diff_flame (self);
  gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "diff");
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (WickSnapshotWindow) self = data; /* the task's reference */
  g_autoptr (GError) error = NULL;
  gpointer got = g_task_propagate_pointer (G_TASK (result), &error);
  WickMemorySnapshot *s = got;
  self->loading = FALSE;
  if (self->gone)
    {
      /* a page closed while it read: nothing to show it in */
      if (got != NULL && self->path_b != NULL)
        g_ptr_array_unref (got);
      else if (s != NULL)
        wick_memory_snapshot_free (s);
      return;
    }
  if (got != NULL && self->path_b != NULL)
    {
      GPtrArray *pair = got;
      g_ptr_array_set_free_func (pair, NULL);
      self->snapshot = g_ptr_array_index (pair, 0);
      self->snapshot_b = g_ptr_array_index (pair, 1);
      g_ptr_array_unref (pair);
      show_diff (self);
      return;
    }
  if (s == NULL)
    {
      self->error = g_strdup (error != NULL ? error->message : _ ("the window closed"));
      adw_status_page_set_description (ADW_STATUS_PAGE (self->error_page), self->error);
      gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "error");
      return;
    }
  self->snapshot = s;
  show_snapshot (self);
}

/* ---- the widget ---- */

static void
on_cancel_clicked (GtkButton *button, gpointer data)
{
  wick_snapshot_window_cancel (WICK_SNAPSHOT_WINDOW (data));
}

static void
on_dark_changed (AdwStyleManager *manager, GParamSpec *pspec, gpointer data)
{
  WickSnapshotWindow *self = data;
  gtk_widget_queue_draw (self->chart);
  gtk_widget_queue_draw (self->segment_map);
  gtk_widget_queue_draw (self->dflame_area);
}

static GtkWidget *
titled (const char *title, GtkWidget *child, GtkWidget **label_out)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *label = gtk_label_new (title);
  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_top (label, 6);
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), child);
  if (label_out != NULL)
    *label_out = label;
  return box;
}

static GtkWidget *
scrolled (GtkWidget *child)
{
  GtkWidget *sw = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (sw), child);
  gtk_widget_set_vexpand (sw, TRUE);
  gtk_widget_set_hexpand (sw, TRUE);
  return sw;
}

static void
wick_snapshot_window_dispose (GObject *object)
{
  WickSnapshotWindow *self = WICK_SNAPSHOT_WINDOW (object);
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_signal_handlers_disconnect_by_data (adw_style_manager_get_default (), self);
  G_OBJECT_CLASS (wick_snapshot_window_parent_class)->dispose (object);
}

static void
wick_snapshot_window_finalize (GObject *object)
{
  WickSnapshotWindow *self = WICK_SNAPSHOT_WINDOW (object);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->categories, wick_snapshot_categories_free);
  g_clear_pointer (&self->block_allocation, g_free);
  g_clear_object (&self->trace);
  g_clear_pointer (&self->snapshot, wick_memory_snapshot_free);
  g_clear_pointer (&self->points, g_array_unref);
  g_clear_pointer (&self->live, g_array_unref);
  g_clear_pointer (&self->flame, g_array_unref);
  g_clear_pointer (&self->snapshot_b, wick_memory_snapshot_free);
  g_clear_pointer (&self->diff, g_array_unref);
  g_clear_pointer (&self->dflame, g_array_unref);
  g_clear_pointer (&self->dflame_names, g_ptr_array_unref);
  g_free (self->diff_text);
  g_free (self->path_b);
  g_clear_pointer (&self->progress_state, progress_unref);
  g_free (self->details_text);
  g_free (self->error);
  g_free (self->path);
  G_OBJECT_CLASS (wick_snapshot_window_parent_class)->finalize (object);
}

static void
wick_snapshot_window_class_init (WickSnapshotWindowClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = wick_snapshot_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = wick_snapshot_window_finalize;
}

static void
wick_snapshot_window_init (WickSnapshotWindow *self)
{
  self->selected_allocation = -1;
  GtkWidget *outer = self->outer = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = self->header = adw_header_bar_new ();
  self->title = adw_window_title_new (_ ("CUDA memory snapshot"), NULL);
  adw_header_bar_set_title_widget (ADW_HEADER_BAR (header), self->title);
  self->range_button = gtk_button_new_with_mnemonic (_ ("Load _Range Alone"));
  gtk_widget_set_tooltip_text (self->range_button,
                               _ ("Read only the history of the range dragged on the chart, with "
                                  "the state at its start rebuilt"));
  gtk_widget_set_visible (self->range_button, FALSE);
  g_signal_connect (self->range_button, "clicked", G_CALLBACK (on_load_range_clicked), self);
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), self->range_button);
  gtk_box_append (GTK_BOX (outer), header);

  self->stack = gtk_stack_new ();
  gtk_widget_set_vexpand (self->stack, TRUE);
  gtk_box_append (GTK_BOX (outer), self->stack);

  /* loading */
  self->loading_page = adw_status_page_new ();
  adw_status_page_set_title (ADW_STATUS_PAGE (self->loading_page), _ ("Reading the snapshot…"));
  GtkWidget *loading_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  self->progress = gtk_progress_bar_new ();
  gtk_widget_set_size_request (self->progress, 360, -1);
  GtkWidget *cancel = gtk_button_new_with_mnemonic (_ ("_Cancel"));
  gtk_widget_set_halign (cancel, GTK_ALIGN_CENTER);
  g_signal_connect (cancel, "clicked", G_CALLBACK (on_cancel_clicked), self);
  gtk_box_append (GTK_BOX (loading_box), self->progress);
  gtk_box_append (GTK_BOX (loading_box), cancel);
  adw_status_page_set_child (ADW_STATUS_PAGE (self->loading_page), loading_box);
  gtk_stack_add_named (GTK_STACK (self->stack), self->loading_page, "loading");

  self->error_page = adw_status_page_new ();
  adw_status_page_set_icon_name (ADW_STATUS_PAGE (self->error_page), "dialog-error-symbolic");
  adw_status_page_set_title (ADW_STATUS_PAGE (self->error_page),
                             _ ("The snapshot could not be read"));
  gtk_stack_add_named (GTK_STACK (self->stack), self->error_page, "error");

  /* the snapshot */
  self->chart = gtk_drawing_area_new ();
  gtk_widget_set_size_request (self->chart, 600, 300);
  gtk_widget_set_vexpand (self->chart, TRUE);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->chart), draw_chart, self, NULL);
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (on_chart_pressed), self);
  gtk_widget_add_controller (self->chart, GTK_EVENT_CONTROLLER (click));
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (self->chart, GTK_EVENT_CONTROLLER (drag));

  self->segment_map = gtk_drawing_area_new ();
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->segment_map), draw_segments, self, NULL);
  GtkWidget *segments_scroll = scrolled (self->segment_map);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (segments_scroll), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  GtkWidget *segments_box = titled (
    _ ("Segments at the snapshot: address, size, fragmentation; blocks by state and category"),
    segments_scroll, NULL);

  self->flame_python_only = TRUE;
  self->flame_area = gtk_drawing_area_new ();
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->flame_area), draw_flame, self, NULL);
  GtkGesture *flame_click = gtk_gesture_click_new ();
  g_signal_connect (flame_click, "pressed", G_CALLBACK (on_flame_pressed), self);
  gtk_widget_add_controller (self->flame_area, GTK_EVENT_CONTROLLER (flame_click));
  GtkWidget *flame_scroll = scrolled (self->flame_area);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (flame_scroll), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  GtkWidget *python_only = gtk_check_button_new_with_label (_ ("Python frames only"));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (python_only), TRUE);
  gtk_widget_set_margin_start (python_only, 8);
  g_signal_connect (python_only, "toggled", G_CALLBACK (on_python_only_toggled), self);
  GtkWidget *flame_box = titled (
    _ ("Live bytes by stack at the chosen time, outermost frame at the top — click a frame"),
    flame_scroll, NULL);
  gtk_box_insert_child_after (GTK_BOX (flame_box), python_only,
                              gtk_widget_get_first_child (flame_box));

  self->bottom_stack = gtk_stack_new ();
  gtk_stack_add_titled (GTK_STACK (self->bottom_stack), segments_box, "segments",
                        _ ("Segment map"));
  gtk_stack_add_titled (GTK_STACK (self->bottom_stack), flame_box, "flame", _ ("Flame graph"));
  GtkWidget *switcher = gtk_stack_switcher_new ();
  gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (switcher), GTK_STACK (self->bottom_stack));
  gtk_widget_set_halign (switcher, GTK_ALIGN_START);
  gtk_widget_set_margin_start (switcher, 6);
  gtk_widget_set_margin_top (switcher, 4);
  GtkWidget *left = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (left), switcher);
  gtk_box_append (GTK_BOX (left), self->bottom_stack);

  self->live_list = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (self->live_list), GTK_SELECTION_SINGLE);
  g_signal_connect (self->live_list, "row-selected", G_CALLBACK (on_row_selected), self);
  self->details = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->details), 0.0);
  gtk_label_set_yalign (GTK_LABEL (self->details), 0.0);
  gtk_label_set_selectable (GTK_LABEL (self->details), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->details), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->details), PANGO_WRAP_WORD_CHAR);
  gtk_widget_set_margin_start (self->details, 8);
  gtk_widget_set_margin_end (self->details, 8);
  gtk_widget_add_css_class (self->details, "monospace");
  GtkWidget *live_box = titled ("", scrolled (self->live_list), &self->live_title);
  GtkWidget *right = gtk_paned_new (GTK_ORIENTATION_VERTICAL);
  gtk_paned_set_start_child (GTK_PANED (right), live_box);
  gtk_paned_set_end_child (GTK_PANED (right),
                           titled (_ ("Allocation"), scrolled (self->details), NULL));
  gtk_paned_set_position (GTK_PANED (right), 200);

  GtkWidget *bottom = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_start_child (GTK_PANED (bottom), left);
  gtk_paned_set_end_child (GTK_PANED (bottom), right);
  gtk_paned_set_position (GTK_PANED (bottom), 720);
  GtkWidget *main = gtk_paned_new (GTK_ORIENTATION_VERTICAL);
  gtk_paned_set_start_child (
    GTK_PANED (main), titled (_ ("Allocated (requested bytes, by category) and reserved over "
                                 "the history — click to choose a time"),
                              self->chart, NULL));
  gtk_paned_set_end_child (GTK_PANED (main), bottom);
  gtk_paned_set_position (GTK_PANED (main), 340);
  gtk_stack_add_named (GTK_STACK (self->stack), main, "snapshot");

  /* compare: the stacks of two snapshots, largest change first */
  self->diff_list = gtk_list_box_new ();
  g_signal_connect (self->diff_list, "row-selected", G_CALLBACK (on_diff_selected), self);
  self->diff_details = gtk_label_new (_ ("Select a stack to see its frames."));
  gtk_label_set_xalign (GTK_LABEL (self->diff_details), 0.0);
  gtk_label_set_yalign (GTK_LABEL (self->diff_details), 0.0);
  gtk_label_set_selectable (GTK_LABEL (self->diff_details), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->diff_details), TRUE);
  gtk_widget_add_css_class (self->diff_details, "monospace");
  gtk_widget_set_margin_start (self->diff_details, 8);
  self->dflame_area = gtk_drawing_area_new ();
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->dflame_area), draw_diff_flame, self,
                                  NULL);
  GtkGesture *dflame_click = gtk_gesture_click_new ();
  g_signal_connect (dflame_click, "pressed", G_CALLBACK (on_diff_flame_pressed), self);
  gtk_widget_add_controller (self->dflame_area, GTK_EVENT_CONTROLLER (dflame_click));
  GtkWidget *dflame_scroll = scrolled (self->dflame_area);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (dflame_scroll), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  self->dflame_python_only = TRUE;
  GtkWidget *diff_python_only = gtk_check_button_new_with_label (_ ("Python frames only"));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (diff_python_only), TRUE);
  g_signal_connect (diff_python_only, "toggled", G_CALLBACK (on_diff_python_only_toggled), self);
  GtkWidget *width_a = gtk_check_button_new_with_label (_ ("Widths from A (shows what B freed)"));
  g_signal_connect (width_a, "toggled", G_CALLBACK (on_diff_width_a_toggled), self);
  GtkWidget *dflame_options = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (dflame_options, 8);
  gtk_box_append (GTK_BOX (dflame_options), diff_python_only);
  gtk_box_append (GTK_BOX (dflame_options), width_a);
  GtkWidget *dflame_box
    = titled (_ ("Live bytes by stack, widths B's: red grew from A to B, blue shrank, grey the "
                 "same — click a frame"),
              dflame_scroll, NULL);
  gtk_box_insert_child_after (GTK_BOX (dflame_box), dflame_options,
                              gtk_widget_get_first_child (dflame_box));
  self->diff_stack = gtk_stack_new ();
  gtk_stack_add_titled (
    GTK_STACK (self->diff_stack),
    titled (_ ("Live bytes at each snapshot by stack: B − A, blocks A → B, the innermost Python frame"),
            scrolled (self->diff_list), NULL),
    "list", _ ("Stacks"));
  gtk_stack_add_titled (GTK_STACK (self->diff_stack), dflame_box, "flame",
                        _ ("Differential flame graph"));
  GtkWidget *diff_switcher = gtk_stack_switcher_new ();
  gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (diff_switcher), GTK_STACK (self->diff_stack));
  gtk_widget_set_halign (diff_switcher, GTK_ALIGN_START);
  gtk_widget_set_margin_start (diff_switcher, 6);
  gtk_widget_set_margin_top (diff_switcher, 4);
  GtkWidget *diff_left = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (diff_left), diff_switcher);
  gtk_box_append (GTK_BOX (diff_left), self->diff_stack);
  GtkWidget *diff_pane = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_start_child (GTK_PANED (diff_pane), diff_left);
  gtk_paned_set_end_child (GTK_PANED (diff_pane),
                           titled (_ ("Stack"), scrolled (self->diff_details), NULL));
  gtk_paned_set_position (GTK_PANED (diff_pane), 860);
  gtk_stack_add_named (GTK_STACK (self->stack), diff_pane, "diff");

  adw_application_window_set_content (ADW_APPLICATION_WINDOW (self), outer);
  gtk_window_set_default_size (GTK_WINDOW (self), 1400, 860);
  g_signal_connect (adw_style_manager_get_default (), "notify::dark", G_CALLBACK (on_dark_changed),
                    self);
}

WickSnapshotWindow *
wick_snapshot_window_new (GtkApplication *application, const char *path)
{
  return wick_snapshot_window_new_range (application, path, G_MININT64, G_MAXINT64);
}

static WickSnapshotWindow *
window_new (GtkApplication *application, const char *path, const char *path_b, gint64 from_us,
            gint64 to_us);

WickSnapshotWindow *
wick_snapshot_window_new_range (GtkApplication *application, const char *path, gint64 from_us,
                                gint64 to_us)
{
  return window_new (application, path, NULL, from_us, to_us);
}

WickSnapshotWindow *
wick_snapshot_window_new_compare (GtkApplication *application, const char *a, const char *b)
{
  return window_new (application, a, b, G_MININT64, G_MAXINT64);
}

static WickSnapshotWindow *
window_new (GtkApplication *application, const char *path, const char *path_b, gint64 from_us,
            gint64 to_us)
{
  WickSnapshotWindow *self
    = g_object_new (WICK_TYPE_SNAPSHOT_WINDOW, "application", application, NULL);
  self->path_b = g_strdup (path_b);
  self->load_from = MIN (from_us, to_us);
  self->load_to = MAX (from_us, to_us);
  self->path = g_strdup (path);
  self->cancellable = g_cancellable_new ();
  self->loading = TRUE;
  g_autofree char *base = g_path_get_basename (path);
  adw_window_title_set_title (ADW_WINDOW_TITLE (self->title), base);
  adw_status_page_set_description (ADW_STATUS_PAGE (self->loading_page), path);

  Progress *p = g_new0 (Progress, 1);
  p->refs = 2; /* the task's and the window's */
  g_mutex_init (&p->lock);
  g_weak_ref_init (&p->window, self);
  p->path = g_strdup (path);
  p->from_us = self->load_from;
  p->to_us = self->load_to;
  p->path_b = g_strdup (path_b);
  self->progress_state = p;
  GTask *task = g_task_new (NULL, self->cancellable, on_loaded, g_object_ref (self));
  g_task_set_task_data (task, p, (GDestroyNotify)progress_unref);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
  return self;
}

gboolean
wick_snapshot_window_sniff (const char *path)
{
  g_autoptr (WickInput) input = wick_input_open (path, NULL);
  guint8 head[2];
  if (input == NULL)
    return FALSE;
  gssize got = wick_input_read (input, head, sizeof head, NULL);
  return got == 2 && wick_memory_snapshot_sniff (head, 2);
}

WickMemorySnapshot *
wick_snapshot_window_get_snapshot (WickSnapshotWindow *self)
{
  return self->snapshot;
}

gboolean
wick_snapshot_window_is_loading (WickSnapshotWindow *self)
{
  return self->loading;
}

const char *
wick_snapshot_window_get_error (WickSnapshotWindow *self)
{
  return self->error;
}

static void
wick_snapshot_window_cancel (WickSnapshotWindow *self)
{
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
}

void
wick_snapshot_window_select_time (WickSnapshotWindow *self, gint64 time_us)
{
  if (self->snapshot == NULL)
    return;
  self->selected_us = CLAMP (time_us, self->t0, self->t1);
  update_live (self);
  gtk_widget_queue_draw (self->chart);
  gtk_widget_queue_draw (self->segment_map);
}

guint
wick_snapshot_window_get_n_live_rows (WickSnapshotWindow *self)
{
  return self->live != NULL ? self->live->len : 0;
}

void
wick_snapshot_window_select_row (WickSnapshotWindow *self, guint row)
{
  GtkListBoxRow *r = gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->live_list), (int)row);
  if (r != NULL)
    gtk_list_box_select_row (GTK_LIST_BOX (self->live_list), r);
}

const char *
wick_snapshot_window_get_details (WickSnapshotWindow *self)
{
  return self->details_text != NULL ? self->details_text : "";
}

GtkWidget *
wick_snapshot_window_get_chart (WickSnapshotWindow *self)
{
  return self->chart;
}

GtkWidget *
wick_snapshot_window_get_segment_map (WickSnapshotWindow *self)
{
  return self->segment_map;
}

GtkWidget *
wick_snapshot_window_get_flame_graph (WickSnapshotWindow *self)
{
  return self->flame_area;
}

void
wick_snapshot_window_show_page (WickSnapshotWindow *self, const char *page)
{
  gtk_stack_set_visible_child_name (GTK_STACK (self->bottom_stack), page);
}

guint64
wick_snapshot_window_get_flame_bytes (WickSnapshotWindow *self, guint *n_nodes)
{
  if (n_nodes != NULL)
    *n_nodes = self->flame != NULL ? self->flame->len : 0;
  return self->flame != NULL && self->flame->len > 0
           ? g_array_index (self->flame, FlameNode, 0).bytes
           : 0;
}

void
wick_snapshot_window_select_flame_node (WickSnapshotWindow *self, guint node)
{
  if (self->flame == NULL || node >= self->flame->len)
    return;
  self->flame_selected = node;
  show_flame_node (self);
  gtk_widget_queue_draw (self->flame_area);
}

void
wick_snapshot_window_render_segment_map (WickSnapshotWindow *self, cairo_t *cr, int width,
                                         int height)
{
  draw_segments (GTK_DRAWING_AREA (self->segment_map), cr, width, height, self);
}

gboolean
wick_snapshot_window_get_drag_range (WickSnapshotWindow *self, gint64 *from_us, gint64 *to_us)
{
  if (!self->has_drag_range)
    return FALSE;
  *from_us = MIN (self->drag_from, self->drag_to);
  *to_us = MAX (self->drag_from, self->drag_to);
  return TRUE;
}

void
wick_snapshot_window_set_drag_range (WickSnapshotWindow *self, gint64 from_us, gint64 to_us)
{
  self->has_drag_range = TRUE;
  self->drag_from = from_us;
  self->drag_to = to_us;
  gtk_widget_set_visible (self->range_button, TRUE);
  gtk_widget_queue_draw (self->chart);
}

guint
wick_snapshot_window_get_n_diff_rows (WickSnapshotWindow *self)
{
  GtkWidget *child;
  guint n = 0;
  for (child = gtk_widget_get_first_child (self->diff_list); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    n++;
  return n;
}

const WickSnapshotStackDiff *
wick_snapshot_window_get_diff (WickSnapshotWindow *self, guint *n)
{
  *n = self->diff != NULL ? self->diff->len : 0;
  return self->diff != NULL ? (const WickSnapshotStackDiff *)(gpointer)self->diff->data : NULL;
}

void
wick_snapshot_window_select_diff_row (WickSnapshotWindow *self, guint row)
{
  GtkListBoxRow *r = gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->diff_list), (int)row);
  if (r != NULL)
    gtk_list_box_select_row (GTK_LIST_BOX (self->diff_list), r);
}

const char *
wick_snapshot_window_get_diff_details (WickSnapshotWindow *self)
{
  return self->diff_text != NULL ? self->diff_text : "";
}

void
wick_snapshot_window_show_diff_page (WickSnapshotWindow *self, const char *page)
{
  gtk_stack_set_visible_child_name (GTK_STACK (self->diff_stack), page);
}

GtkWidget *
wick_snapshot_window_get_diff_flame_graph (WickSnapshotWindow *self)
{
  return self->dflame_area;
}

guint
wick_snapshot_window_get_n_diff_flame_nodes (WickSnapshotWindow *self)
{
  return self->dflame != NULL ? self->dflame->len : 0;
}

gboolean
wick_snapshot_window_get_diff_flame_node (WickSnapshotWindow *self, guint node, guint *depth,
                                          double *x0, double *width, guint64 *bytes_a,
                                          guint64 *bytes_b)
{
  if (self->dflame == NULL || node >= self->dflame->len)
    return FALSE;
  const DiffNode *n = &g_array_index (self->dflame, DiffNode, node);
  guint64 total = dnode_width (self, &g_array_index (self->dflame, DiffNode, 0));
  *depth = n->depth;
  *x0 = n->x0;
  *width = (double)dnode_width (self, n) / (double)MAX (total, 1);
  *bytes_a = n->bytes_a;
  *bytes_b = n->bytes_b;
  return TRUE;
}

void
wick_snapshot_window_select_diff_flame_node (WickSnapshotWindow *self, guint node)
{
  if (self->dflame == NULL || node >= self->dflame->len)
    return;
  self->dflame_selected = node;
  show_diff_flame_node (self);
  gtk_widget_queue_draw (self->dflame_area);
}

void
wick_snapshot_window_render_diff_flame (WickSnapshotWindow *self, cairo_t *cr, int width,
                                        int height)
{
  draw_diff_flame (GTK_DRAWING_AREA (self->dflame_area), cr, width, height, self);
}

/* As a trace window's page: the window is made but never shown (and belongs
 * to no application, so it is not among its windows); its body, with the
 * title and Load Range Alone moved out of its header bar into a row on
 * top, becomes the page, which keeps the window alive and destroys it when
 * it goes (which cancels a read still running). */
static void
page_gone (gpointer data, GObject *where_the_page_was)
{
  WickSnapshotWindow *self = data;
  self->page = NULL;
  self->gone = TRUE;
  gtk_window_destroy (GTK_WINDOW (self));
}

/* The page: the box holding the bar and the body. Its data is the
 * snapshot's own, read once; the session's document does not change it. */
struct _WickSnapshotPage
{
  WickPage parent_instance;
};

G_DEFINE_FINAL_TYPE (WickSnapshotPage, wick_snapshot_page, WICK_TYPE_PAGE)

static void set_trace (WickSnapshotWindow *self, WickDocument *document);

/* The trace shown with the snapshot gives the categories (its memory
 * records, matched by device, address and lifetime). */
static void
wick_snapshot_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickSnapshotWindow *self = wick_snapshot_window_from_page (GTK_WIDGET (page));
  if (self != NULL && !self->gone)
    set_trace (self, document);
}

static void
wick_snapshot_page_class_init (WickSnapshotPageClass *klass)
{
  WICK_PAGE_CLASS (klass)->refresh = wick_snapshot_page_refresh;
}

static void
wick_snapshot_page_init (WickSnapshotPage *self)
{
  wick_page_set_title (WICK_PAGE (self), _ ("Memory Snapshot"));
  wick_page_set_icon_name (WICK_PAGE (self), "drive-multidisk-symbolic");
}

GtkWidget *
wick_snapshot_window_new_page (const char *path)
{
  WickSnapshotWindow *self = window_new (NULL, path, NULL, G_MININT64, G_MAXINT64);
  GtkWidget *page = g_object_new (WICK_TYPE_SNAPSHOT_PAGE, NULL);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (box, page);
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (bar, 8);
  gtk_widget_set_margin_end (bar, 8);
  gtk_widget_set_margin_top (bar, 4);
  g_object_ref (self->title);
  adw_header_bar_set_title_widget (ADW_HEADER_BAR (self->header), NULL);
  gtk_widget_set_hexpand (self->title, TRUE);
  gtk_box_append (GTK_BOX (bar), self->title);
  g_object_unref (self->title);
  g_object_ref (self->range_button);
  adw_header_bar_remove (ADW_HEADER_BAR (self->header), self->range_button);
  gtk_box_append (GTK_BOX (bar), self->range_button);
  g_object_unref (self->range_button);
  gtk_box_append (GTK_BOX (box), bar);
  g_object_ref (self->stack);
  gtk_box_remove (GTK_BOX (self->outer), self->stack);
  /* scrolled: the snapshot's panes need more room than a small trace window has */
  GtkWidget *body = scrolled (self->stack);
  g_object_unref (self->stack);
  gtk_box_append (GTK_BOX (box), body);
  self->page = page;
  g_object_set_data (G_OBJECT (page), "wick-snapshot-window", self);
  g_object_weak_ref (G_OBJECT (page), page_gone, self);
  return page;
}

/* The trace shown with the snapshot (the page's document; NULL: none): its
 * memory records give the categories of the chart, the segment map, the live
 * list and the details, the frames where no record tells; the title says
 * how many allocations were matched. */
static void
set_trace (WickSnapshotWindow *self, WickDocument *document)
{
  guint n_records = 0;
  if (document != NULL)
    wick_document_get_memory (document, &n_records);
  /* again when the trace is another, or grew (a live one) */
  if (document == self->trace
      && (document == NULL || self->snapshot == NULL
          || (self->categories != NULL && n_records == self->matched_records)))
    return;
  g_set_object (&self->trace, document);
  if (self->snapshot != NULL && self->snapshot_b == NULL)
    show_snapshot (self);
}

const WickSnapshotMatchCounts *
wick_snapshot_window_get_match_counts (WickSnapshotWindow *self)
{
  g_return_val_if_fail (WICK_IS_SNAPSHOT_WINDOW (self), NULL);
  return self->categories != NULL ? wick_snapshot_categories_get_counts (self->categories) : NULL;
}

WickSnapshotWindow *
wick_snapshot_window_from_page (GtkWidget *page)
{
  return page != NULL ? g_object_get_data (G_OBJECT (page), "wick-snapshot-window") : NULL;
}
