/* wick-table.c — see wick-table.h for the contract. */
#include "wick-table.h"
#include "wick-table-private.h"

#include "wick-document.h"

#include <glib/gi18n.h>
#include <string.h>

#include "wick-format.h"
#include "wick-record-text.h"

struct _WickTableRow
{
  GObject parent_instance;
  guint kind, index;
};

G_DEFINE_FINAL_TYPE (WickTableRow, wick_table_row, G_TYPE_OBJECT)

static void
wick_table_row_class_init (WickTableRowClass *klass)
{
}

static void
wick_table_row_init (WickTableRow *self)
{
}

static WickTableRow *
row_new (guint kind, guint index)
{
  WickTableRow *row = g_object_new (WICK_TYPE_TABLE_ROW, NULL);
  row->kind = kind;
  row->index = index;
  return row;
}

/* Rows 0..n-1 made on demand: a table of a million ops holds no million
 * objects, only the ones on screen (and a sort's keys, when sorted). */
#define WICK_TYPE_ROW_RANGE (wick_row_range_get_type ())
G_DECLARE_FINAL_TYPE (WickRowRange, wick_row_range, WICK, ROW_RANGE, GObject)

struct _WickRowRange
{
  GObject parent_instance;
  guint n_rows;
};

static GType
row_range_get_item_type (GListModel *list)
{
  return WICK_TYPE_TABLE_ROW;
}

static guint
row_range_get_n_items (GListModel *list)
{
  return WICK_ROW_RANGE (list)->n_rows;
}

static gpointer
row_range_get_item (GListModel *list, guint position)
{
  return position < WICK_ROW_RANGE (list)->n_rows ? row_new (0, position) : NULL;
}

static void
row_range_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = row_range_get_item_type;
  iface->get_n_items = row_range_get_n_items;
  iface->get_item = row_range_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (WickRowRange, wick_row_range, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, row_range_list_model_init))

static void
wick_row_range_class_init (WickRowRangeClass *klass)
{
}

static void
wick_row_range_init (WickRowRange *self)
{
}

static void
row_range_set (WickRowRange *self, guint n_rows)
{
  guint old = self->n_rows;
  self->n_rows = n_rows;
  if (old || n_rows)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, old, n_rows);
}

/* Above this many rows, sorting and filtering run in slices between frames. */
#define INCREMENTAL_ROWS 20000

typedef struct
{
  WickTableTextFunc text;
  WickTableCompareFunc compare;
  WickTableClassFunc style;
  gboolean numeric;
  /* a declared column: text and order from the record's field */
  const WickColumn *def;
  WickTableRecordFunc record;
  WickTableDocumentFunc document;
  char *title;      /* translated */
  gboolean sortable;
  gboolean expand;
} Column;

static void
column_free (gpointer data)
{
  Column *column = data;
  g_free (column->title);
  g_free (column);
}

typedef struct _WickTableCanvas WickTableCanvas;

struct _WickTable
{
  gpointer data;
  GtkWidget *scrolled;
  GtkColumnView *view;
  GListStore *store;   /* tree mode: the root rows */
  WickRowRange *range; /* flat mode: rows 0..n-1 */
  GtkFilterListModel *filtered;
  GtkSortListModel *sorted;
  GtkSingleSelection *selection;
  GtkCustomFilter *filter;
  GPtrArray *columns; /* Column */
  char *needle;
  WickTableChildrenFunc children;
  WickTableRowFunc row_func;
  gboolean quiet;
  /* drawn mode (wick_table_new_drawn): no column view; the canvas draws the
   * rows on screen and the table sorts with its own sorter */
  WickTableCanvas *canvas;
  GtkSorter *drawn_sorter;
  gint sort_column; /* -1: unsorted */
  gboolean sort_descending;
};

static WickTableRow *
unwrap (gpointer item)
{
  if (GTK_IS_TREE_LIST_ROW (item))
    {
      gpointer inner = gtk_tree_list_row_get_item (item);
      g_object_unref (inner); /* the row holds it */
      return inner;
    }
  return item;
}

#define FIELD(record, offset, type) (*(const type *)((const char *)(record) + (offset)))
#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static const char *
field_str (WickDocument *doc, const void *record, gsize offset)
{
  return wick_document_str (doc, FIELD (record, offset, WickStr));
}

/* A SPAN field's text: its span's name, else the span_id as written. */
static const char *
field_span (WickDocument *doc, const void *record, const WickColumn *def)
{
  gint32 span = FIELD (record, def->offset, gint32);
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  if (span >= 0 && (guint)span < n)
    return wick_document_str (doc, spans[span].name);
  return field_str (doc, record, def->offset2);
}

static char *
declared_text (Column *column, gpointer data, guint index)
{
  const WickColumn *def = column->def;
  const void *r = column->record (data, index);
  WickDocument *doc = column->document (data);
  switch (def->type)
    {
      case WICK_COLUMN_STR:
        return g_strdup (field_str (doc, r, def->offset));
      case WICK_COLUMN_COUNT:
        return g_strdup_printf ("%" G_GUINT64_FORMAT, FIELD (r, def->offset, guint64));
      case WICK_COLUMN_DURATION:
        return wick_format_duration (FIELD (r, def->offset, guint64));
      case WICK_COLUMN_DURATION_F64:
        return wick_format_duration ((guint64)FIELD (r, def->offset, double));
      case WICK_COLUMN_BYTES:
        return wick_format_bytes (FIELD (r, def->offset, guint64));
      case WICK_COLUMN_F64:
        return g_strdup_printf ("%.4g", FIELD (r, def->offset, double));
      case WICK_COLUMN_CATEGORY:
        return g_strdup (wick_category_name (FIELD (r, def->offset, guint8)));
      case WICK_COLUMN_SPAN:
        return g_strdup (field_span (doc, r, def));
      case WICK_COLUMN_SHAPE:
        return wick_format_shape (doc, FIELD (r, def->offset, guint32),
                                  FIELD (r, def->offset2, guint32));
      case WICK_COLUMN_I64:
        return FIELD (r, def->offset, gint64) < 0
                 ? g_strdup ("")
                 : g_strdup_printf ("%" G_GINT64_FORMAT, FIELD (r, def->offset, gint64));
      case WICK_COLUMN_SHARE:
        return g_strdup_printf ("%.1f %%", 100.0 * FIELD (r, def->offset, double));
      default:
        g_assert_not_reached ();
    }
}

static int
declared_compare (Column *column, gpointer data, guint a, guint b)
{
  const WickColumn *def = column->def;
  const void *ra = column->record (data, a), *rb = column->record (data, b);
  WickDocument *doc = column->document (data);
  switch (def->type)
    {
      case WICK_COLUMN_STR:
        return g_strcmp0 (field_str (doc, ra, def->offset), field_str (doc, rb, def->offset));
      case WICK_COLUMN_COUNT:
      case WICK_COLUMN_DURATION:
      case WICK_COLUMN_BYTES:
        return CMP (FIELD (ra, def->offset, guint64), FIELD (rb, def->offset, guint64));
      case WICK_COLUMN_DURATION_F64:
      case WICK_COLUMN_F64:
      case WICK_COLUMN_SHARE:
        return CMP (FIELD (ra, def->offset, double), FIELD (rb, def->offset, double));
      case WICK_COLUMN_I64:
        return CMP (FIELD (ra, def->offset, gint64), FIELD (rb, def->offset, gint64));
      case WICK_COLUMN_CATEGORY:
        return CMP (FIELD (ra, def->offset, guint8), FIELD (rb, def->offset, guint8));
      case WICK_COLUMN_SPAN:
        return g_strcmp0 (field_span (doc, ra, def), field_span (doc, rb, def));
      default:
        return 0;
    }
}

static char *
column_text (Column *column, gpointer data, guint kind, guint index)
{
  if (column->text != NULL)
    return column->text (data, kind, index);
  return declared_text (column, data, index);
}

/* An ellipsized cell's whole text on hover, looked up when the tooltip is
 * asked for: setting a tooltip text on every bind queried the pointer
 * (an X round trip) per cell, most of a table's fill time
 * (docs/performance.md, "GPU pages"). */
static gboolean
on_label_tooltip (GtkWidget *label, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer user_data)
{
  PangoLayout *layout = gtk_label_get_layout (GTK_LABEL (label));
  if (layout == NULL || !pango_layout_is_ellipsized (layout))
    return FALSE;
  gtk_tooltip_set_text (tooltip, gtk_label_get_text (GTK_LABEL (label)));
  return TRUE;
}

static GtkWidget *
cell_label_new (void)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_widget_set_has_tooltip (label, TRUE);
  g_signal_connect (label, "query-tooltip", G_CALLBACK (on_label_tooltip), NULL);
  return label;
}

static void
setup_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  Column *column = user_data;
  GtkWidget *label = cell_label_new ();
  gtk_label_set_xalign (GTK_LABEL (label), column->numeric ? 1.0 : 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (column->numeric)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
setup_expander (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *label = cell_label_new ();
  gtk_label_set_xalign (GTK_LABEL (label), 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), label);
  gtk_list_item_set_child (item, expander);
}

static void
bind_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  WickTable *self = g_object_get_data (G_OBJECT (factory), "wick-table");
  Column *column = user_data;
  gpointer object = gtk_list_item_get_item (item);
  GtkWidget *child = gtk_list_item_get_child (item);
  if (GTK_IS_TREE_EXPANDER (child))
    {
      gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (child), object);
      child = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (child));
    }
  WickTableRow *row = unwrap (object);
  g_autofree char *text = column_text (column, self->data, row->kind, row->index);
  gtk_label_set_text (GTK_LABEL (child), text ? text : "");
  static const char *styles[] = { "success", "warning", "error", "accent" };
  for (guint i = 0; i < G_N_ELEMENTS (styles); i++)
    gtk_widget_remove_css_class (child, styles[i]);
  const char *style = column->style ? column->style (self->data, row->kind, row->index) : NULL;
  if (style)
    gtk_widget_add_css_class (child, style);
  if (row->kind == 0 && self->children)
    gtk_widget_add_css_class (child, "heading");
  else
    gtk_widget_remove_css_class (child, "heading");
}

typedef struct
{
  WickTable *table;
  Column *column;
} SortData;

static int
sort_rows (gconstpointer a, gconstpointer b, gpointer user_data)
{
  SortData *sort = user_data;
  WickTableRow *ra = unwrap ((gpointer)a), *rb = unwrap ((gpointer)b);
  if (sort->column->def != NULL)
    return declared_compare (sort->column, sort->table->data, ra->index, rb->index);
  return sort->column->compare (sort->table->data, ra->index, rb->index);
}

static gboolean
filter_row (gpointer item, gpointer user_data)
{
  WickTable *self = user_data;
  if (self->needle == NULL)
    return TRUE;
  WickTableRow *row = unwrap (item);
  for (guint c = 0; c < self->columns->len; c++)
    {
      Column *column = g_ptr_array_index (self->columns, c);
      g_autofree char *text = column_text (column, self->data, row->kind, row->index);
      if (text == NULL)
        continue;
      g_autofree char *folded = g_utf8_casefold (text, -1);
      if (strstr (folded, self->needle))
        return TRUE;
    }
  return FALSE;
}

static void
notify_row (WickTable *self, guint position, gboolean activated)
{
  if (self->row_func == NULL || self->quiet || position == GTK_INVALID_LIST_POSITION)
    return;
  g_autoptr (GObject) item = g_list_model_get_item (G_LIST_MODEL (self->selection), position);
  if (item == NULL)
    return;
  WickTableRow *row = unwrap (item);
  self->row_func (self->data, row->kind, row->index, activated);
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n, WickTable *self)
{
  notify_row (self, gtk_single_selection_get_selected (self->selection), FALSE);
}

static void
on_activate (GtkColumnView *view, guint position, WickTable *self)
{
  notify_row (self, position, TRUE);
}

/* ---- the drawn table ------------------------------------------------------
 *
 * GTK 4.8's list views keep up to 200 rows of widgets alive whatever their
 * height (GTK_LIST_VIEW_MAX_LIST_ITEMS in gtklistview.c), each cell a
 * label measured and styled: a 200-row, 10-column table was 2 000 labels,
 * 250-350 ms before its first frame (docs/performance.md, "GPU pages").
 * The canvas draws only the rows on screen, one Pango layout reused per
 * cell, over the same filter, sort and selection models: its first frame
 * costs the rows that fit the window. It scrolls in a GtkScrolledWindow
 * (GtkScrollable), sorts on a header click (again: the other way), selects
 * on a click or the arrow, Page and Home/End keys, activates on a double
 * click or Enter, and shows an ellipsized cell's whole text as its tooltip.
 * Screen readers read it as a grid whose label is the selected row's
 * cells ("Kernel: gemm, Count: 12, …"). Columns are as wide as their title
 * and a sample of their cells (not resizable by dragging); expanding
 * columns share the rest of the width. */

struct _WickTableCanvas
{
  GtkWidget parent_instance;
  WickTable *table; /* not owned: the table owns the canvas */
  GtkAdjustment *hadjustment, *vadjustment;
  guint hscroll_policy : 1;
  guint vscroll_policy : 1;
  gboolean widths_valid;
  GArray *widths; /* int per column, after the spare width is shared */
  GArray *natural; /* int per column: title and sampled cells */
  int row_height, header_height, content_width;
};

#define WICK_TYPE_TABLE_CANVAS (wick_table_canvas_get_type ())
G_DECLARE_FINAL_TYPE (WickTableCanvas, wick_table_canvas, WICK, TABLE_CANVAS, GtkWidget)

enum
{
  CANVAS_PROP_0,
  CANVAS_PROP_HADJUSTMENT,
  CANVAS_PROP_VADJUSTMENT,
  CANVAS_PROP_HSCROLL_POLICY,
  CANVAS_PROP_VSCROLL_POLICY,
};

G_DEFINE_FINAL_TYPE_WITH_CODE (WickTableCanvas, wick_table_canvas, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE, NULL))

#define CELL_PAD 8      /* px left and right of a cell's text */
#define SAMPLE_ROWS 48  /* rows measured for the columns' widths, from the start */
#define SAMPLE_SPREAD 48 /* and as many spread over the rest */
#define MIN_EXPAND_WIDTH 120

static guint
canvas_n_rows (WickTableCanvas *self)
{
  return g_list_model_get_n_items (G_LIST_MODEL (self->table->selection));
}

static void
canvas_set_font (PangoLayout *layout, gboolean numeric, gboolean bold)
{
  PangoAttrList *attrs = pango_attr_list_new ();
  if (numeric)
    pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum=1"));
  if (bold)
    pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
}

static int
text_width (PangoLayout *layout, const char *text)
{
  int w, h;
  pango_layout_set_width (layout, -1);
  pango_layout_set_text (layout, text ? text : "", -1);
  pango_layout_get_pixel_size (layout, &w, &h);
  return w;
}

/* Widths from the titles and a sample of rows by index (0..n-1 of the
 * data, not of the sorted order: sorting does not move the columns). */
static void
canvas_measure_columns (WickTableCanvas *self)
{
  WickTable *table = self->table;
  guint nc = table->columns->len;
  g_array_set_size (self->natural, nc);
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  int w, h;
  pango_layout_set_text (layout, "Ag", -1);
  pango_layout_get_pixel_size (layout, &w, &h);
  self->row_height = h + 8;
  self->header_height = h + 12;
  guint n = table->range->n_rows;
  guint sample[SAMPLE_ROWS + SAMPLE_SPREAD], n_sample = 0;
  for (guint i = 0; i < MIN (n, SAMPLE_ROWS); i++)
    sample[n_sample++] = i;
  if (n > SAMPLE_ROWS)
    for (guint i = 0; i < SAMPLE_SPREAD; i++)
      {
        guint row = SAMPLE_ROWS + (guint)((guint64)(n - SAMPLE_ROWS) * i / SAMPLE_SPREAD);
        if (row > sample[n_sample - 1])
          sample[n_sample++] = row;
      }
  self->content_width = 0;
  for (guint c = 0; c < nc; c++)
    {
      Column *column = g_ptr_array_index (table->columns, c);
      canvas_set_font (layout, FALSE, TRUE);
      int width = text_width (layout, column->title) + (column->sortable ? 14 : 0);
      canvas_set_font (layout, column->numeric, FALSE);
      for (guint i = 0; i < n_sample; i++)
        {
          g_autofree char *text = column_text (column, table->data, 0, sample[i]);
          width = MAX (width, text_width (layout, text));
        }
      width += 2 * CELL_PAD;
      if (column->expand)
        width = MIN (width, 640);
      g_array_index (self->natural, int, c) = width;
      self->content_width += width;
    }
  g_object_unref (layout);
  self->widths_valid = TRUE;
}

/* The natural widths, the spare width shared by the expanding columns, or
 * taken from them (down to MIN_EXPAND_WIDTH) when the window is narrower. */
static void
canvas_share_width (WickTableCanvas *self, int width)
{
  guint nc = self->natural->len, n_expand = 0;
  int expand_natural = 0;
  g_array_set_size (self->widths, nc);
  for (guint c = 0; c < nc; c++)
    {
      Column *column = g_ptr_array_index (self->table->columns, c);
      g_array_index (self->widths, int, c) = g_array_index (self->natural, int, c);
      if (column->expand)
        {
          n_expand++;
          expand_natural += g_array_index (self->natural, int, c);
        }
    }
  int spare = width - self->content_width;
  if (n_expand == 0 || spare == 0)
    return;
  int fixed = self->content_width - expand_natural;
  int expand_total = MAX ((int)n_expand * MIN_EXPAND_WIDTH, width - fixed);
  int given = 0;
  guint seen = 0;
  for (guint c = 0; c < nc; c++)
    {
      Column *column = g_ptr_array_index (self->table->columns, c);
      if (!column->expand)
        continue;
      int share = ++seen == n_expand ? expand_total - given : expand_total / (int)n_expand;
      g_array_index (self->widths, int, c) = share;
      given += share;
    }
}

static int
canvas_total_width (WickTableCanvas *self)
{
  int total = 0;
  for (guint c = 0; c < self->widths->len; c++)
    total += g_array_index (self->widths, int, c);
  return total;
}

static void
canvas_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                int *natural, int *minimum_baseline, int *natural_baseline)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (widget);
  if (self->table == NULL)
    {
      *minimum = *natural = 0;
      return;
    }
  if (!self->widths_valid)
    canvas_measure_columns (self);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 0;
      *natural = self->content_width;
    }
  else
    {
      *minimum = self->header_height;
      *natural = self->header_height + self->row_height * (int)canvas_n_rows (self);
    }
}

static void
canvas_configure (WickTableCanvas *self)
{
  if (self->table == NULL)
    return;
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (self->hadjustment)
    {
      double upper = MAX (canvas_total_width (self), width);
      gtk_adjustment_configure (self->hadjustment,
                                CLAMP (gtk_adjustment_get_value (self->hadjustment), 0,
                                       upper - width),
                                0, upper, 16, width * 0.9, width);
    }
  if (self->vadjustment)
    {
      double upper
        = MAX (self->header_height + (double)self->row_height * canvas_n_rows (self), height);
      gtk_adjustment_configure (self->vadjustment,
                                CLAMP (gtk_adjustment_get_value (self->vadjustment), 0,
                                       upper - height),
                                0, upper, self->row_height,
                                MAX (height - self->header_height - self->row_height, 1),
                                height);
    }
}

static void
canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (widget);
  if (self->table == NULL)
    return;
  if (!self->widths_valid)
    canvas_measure_columns (self);
  canvas_share_width (self, width);
  canvas_configure (self);
}

static double
adjustment_value (GtkAdjustment *adjustment)
{
  return adjustment ? gtk_adjustment_get_value (adjustment) : 0;
}

static const GdkRGBA *
style_color (const char *style)
{
  static const GdkRGBA success = { 0.15, 0.55, 0.30, 1 }, warning = { 0.75, 0.40, 0.0, 1 },
                       error = { 0.80, 0.11, 0.16, 1 }, accent = { 0.11, 0.44, 0.85, 1 };
  if (style == NULL)
    return NULL;
  if (strcmp (style, "success") == 0)
    return &success;
  if (strcmp (style, "warning") == 0)
    return &warning;
  if (strcmp (style, "error") == 0)
    return &error;
  if (strcmp (style, "accent") == 0)
    return &accent;
  return NULL;
}

static void
canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (widget);
  WickTable *table = self->table;
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  if (table == NULL)
    return;
  GdkRGBA fg;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS /* gtk_widget_get_color is GTK 4.10 */
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  GdkRGBA line = { fg.red, fg.green, fg.blue, 0.10 };
  GdkRGBA header_bg = { fg.red, fg.green, fg.blue, 0.05 };
  GdkRGBA selected_bg = { 0.21, 0.52, 0.89, gtk_widget_has_focus (widget) ? 0.32 : 0.20 };
  double x0 = -adjustment_value (self->hadjustment);
  double scroll = adjustment_value (self->vadjustment);
  guint n = canvas_n_rows (self);
  guint selected = gtk_single_selection_get_selected (table->selection);
  guint first = (guint)(scroll / self->row_height);
  guint nc = MIN (self->widths->len, table->columns->len);
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, NULL);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_single_paragraph_mode (layout, TRUE);
  int text_h;
  pango_layout_set_text (layout, "Ag", -1);
  pango_layout_get_pixel_size (layout, NULL, &text_h);

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  for (guint p = first; p < n; p++)
    {
      double y = self->header_height + (double)p * self->row_height - scroll;
      if (y >= height)
        break;
      g_autoptr (GObject) item = g_list_model_get_item (G_LIST_MODEL (table->selection), p);
      if (item == NULL)
        break;
      WickTableRow *row = unwrap (item);
      if (p == selected)
        gtk_snapshot_append_color (snapshot, &selected_bg,
                                   &GRAPHENE_RECT_INIT (0, y, width, self->row_height));
      gtk_snapshot_append_color (snapshot, &line,
                                 &GRAPHENE_RECT_INIT (0, y + self->row_height - 1, width, 1));
      double x = x0;
      for (guint c = 0; c < nc && x < width; c++)
        {
          Column *column = g_ptr_array_index (table->columns, c);
          int cw = g_array_index (self->widths, int, c);
          if (x + cw > 0)
            {
              g_autofree char *text = column_text (column, table->data, row->kind, row->index);
              const char *style
                = column->style ? column->style (table->data, row->kind, row->index) : NULL;
              const GdkRGBA *color = style_color (style);
              canvas_set_font (layout, column->numeric, FALSE);
              pango_layout_set_text (layout, text ? text : "", -1);
              pango_layout_set_width (layout, MAX (cw - 2 * CELL_PAD, 1) * PANGO_SCALE);
              pango_layout_set_alignment (layout,
                                          column->numeric ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT);
              gtk_snapshot_save (snapshot);
              gtk_snapshot_translate (snapshot,
                                      &GRAPHENE_POINT_INIT (x + CELL_PAD,
                                                            y + (self->row_height - text_h) / 2.0));
              gtk_snapshot_append_layout (snapshot, layout, color ? color : &fg);
              gtk_snapshot_restore (snapshot);
            }
          x += cw;
          gtk_snapshot_append_color (snapshot, &line,
                                     &GRAPHENE_RECT_INIT (x - 1, y, 1, self->row_height));
        }
    }
  /* the header, over the rows scrolled under it */
  GdkRGBA bg = { 1, 1, 1, 1 };
  {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    GtkStyleContext *context = gtk_widget_get_style_context (widget);
    if (!gtk_style_context_lookup_color (context, "view_bg_color", &bg))
      bg = (GdkRGBA){ 1, 1, 1, 1 };
    G_GNUC_END_IGNORE_DEPRECATIONS
  }
  gtk_snapshot_append_color (snapshot, &bg,
                             &GRAPHENE_RECT_INIT (0, 0, width, self->header_height));
  gtk_snapshot_append_color (snapshot, &header_bg,
                             &GRAPHENE_RECT_INIT (0, 0, width, self->header_height));
  gtk_snapshot_append_color (snapshot, &line,
                             &GRAPHENE_RECT_INIT (0, self->header_height - 1, width, 1));
  double x = x0;
  for (guint c = 0; c < nc && x < width; c++)
    {
      Column *column = g_ptr_array_index (table->columns, c);
      int cw = g_array_index (self->widths, int, c);
      g_autofree char *title
        = (gint)c == table->sort_column
            ? g_strdup_printf ("%s %s", column->title, table->sort_descending ? "▾" : "▴")
            : g_strdup (column->title);
      canvas_set_font (layout, FALSE, TRUE);
      pango_layout_set_text (layout, title, -1);
      pango_layout_set_width (layout, MAX (cw - 2 * CELL_PAD, 1) * PANGO_SCALE);
      pango_layout_set_alignment (layout, column->numeric ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (
        snapshot, &GRAPHENE_POINT_INIT (x + CELL_PAD, (self->header_height - text_h) / 2.0));
      gtk_snapshot_append_layout (snapshot, layout, &fg);
      gtk_snapshot_restore (snapshot);
      x += cw;
      gtk_snapshot_append_color (snapshot, &line,
                                 &GRAPHENE_RECT_INIT (x - 1, 0, 1, self->header_height));
    }
  gtk_snapshot_pop (snapshot);
  g_object_unref (layout);
}

/* The column under @x (widget coordinates), -1 past the last. */
static gint
canvas_column_at (WickTableCanvas *self, double x)
{
  double left = -adjustment_value (self->hadjustment);
  for (guint c = 0; c < self->widths->len; c++)
    {
      double right = left + g_array_index (self->widths, int, c);
      if (x >= left && x < right)
        return (gint)c;
      left = right;
    }
  return -1;
}

/* The row position under @y, GTK_INVALID_LIST_POSITION in the header or
 * past the last row. */
static guint
canvas_row_at (WickTableCanvas *self, double y)
{
  if (y < self->header_height || self->row_height <= 0)
    return GTK_INVALID_LIST_POSITION;
  double p = (y - self->header_height + adjustment_value (self->vadjustment)) / self->row_height;
  return p < canvas_n_rows (self) ? (guint)p : GTK_INVALID_LIST_POSITION;
}

/* Scrolls so that the row at @position is wholly on screen. */
static void
canvas_scroll_to (WickTableCanvas *self, guint position)
{
  if (self->vadjustment == NULL)
    return;
  double value = gtk_adjustment_get_value (self->vadjustment);
  double view = gtk_widget_get_height (GTK_WIDGET (self)) - self->header_height;
  double top = (double)position * self->row_height;
  if (top < value)
    gtk_adjustment_set_value (self->vadjustment, top);
  else if (top + self->row_height > value + view)
    gtk_adjustment_set_value (self->vadjustment, top + self->row_height - view);
}

static void
canvas_select (WickTableCanvas *self, guint position)
{
  gtk_single_selection_set_selected (self->table->selection, position);
  canvas_scroll_to (self, position);
}

static void
canvas_pressed (GtkGestureClick *gesture, int n_press, double x, double y, WickTableCanvas *self)
{
  if (self->table == NULL)
    return;
  WickTable *table = self->table;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (y < self->header_height)
    {
      gint c = canvas_column_at (self, x);
      if (c < 0 || n_press > 1)
        return;
      Column *column = g_ptr_array_index (table->columns, c);
      if (!column->sortable)
        return;
      /* a column's first click sorts numbers largest first, names A to Z */
      gboolean descending
        = c == table->sort_column ? !table->sort_descending : column->numeric;
      wick_table_sort_by (table, (guint)c, descending);
      return;
    }
  guint p = canvas_row_at (self, y);
  if (p == GTK_INVALID_LIST_POSITION)
    return;
  if (n_press == 2)
    notify_row (table, p, TRUE);
  else
    canvas_select (self, p);
}

static gboolean
canvas_key_pressed (GtkEventControllerKey *controller, guint keyval, guint keycode,
                    GdkModifierType state, WickTableCanvas *self)
{
  if (self->table == NULL)
    return FALSE;
  guint n = canvas_n_rows (self);
  if (n == 0)
    return FALSE;
  guint selected = gtk_single_selection_get_selected (self->table->selection);
  gboolean none = selected == GTK_INVALID_LIST_POSITION;
  guint page = MAX (1, (guint)((gtk_widget_get_height (GTK_WIDGET (self)) - self->header_height)
                               / MAX (self->row_height, 1))
                         - 1);
  guint target;
  switch (keyval)
    {
      case GDK_KEY_Up:
      case GDK_KEY_KP_Up:
        target = none ? 0 : selected > 0 ? selected - 1 : 0;
        break;
      case GDK_KEY_Down:
      case GDK_KEY_KP_Down:
        target = none ? 0 : MIN (selected + 1, n - 1);
        break;
      case GDK_KEY_Page_Up:
      case GDK_KEY_KP_Page_Up:
        target = none ? 0 : selected > page ? selected - page : 0;
        break;
      case GDK_KEY_Page_Down:
      case GDK_KEY_KP_Page_Down:
        target = none ? 0 : MIN (selected + page, n - 1);
        break;
      case GDK_KEY_Home:
      case GDK_KEY_KP_Home:
        target = 0;
        break;
      case GDK_KEY_End:
      case GDK_KEY_KP_End:
        target = n - 1;
        break;
      case GDK_KEY_Return:
      case GDK_KEY_KP_Enter:
      case GDK_KEY_ISO_Enter:
        if (none)
          return FALSE;
        notify_row (self->table, selected, TRUE);
        return TRUE;
      default:
        return FALSE;
    }
  canvas_select (self, target);
  return TRUE;
}

static gboolean
canvas_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                      gpointer user_data)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (widget);
  if (self->table == NULL)
    return FALSE;
  guint p = canvas_row_at (self, y);
  gint c = canvas_column_at (self, x);
  if (p == GTK_INVALID_LIST_POSITION || c < 0)
    return FALSE;
  g_autofree char *text = wick_table_get_text (self->table, p, (guint)c);
  if (text == NULL || *text == '\0')
    return FALSE;
  Column *column = g_ptr_array_index (self->table->columns, c);
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, NULL);
  canvas_set_font (layout, column->numeric, FALSE);
  int w = text_width (layout, text);
  g_object_unref (layout);
  if (w <= g_array_index (self->widths, int, c) - 2 * CELL_PAD)
    return FALSE; /* not ellipsized */
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* What a screen reader says: the selected row, column by column. */
static void
canvas_update_accessible (WickTableCanvas *self)
{
  WickTable *table = self->table;
  guint selected = gtk_single_selection_get_selected (table->selection);
  GString *label = g_string_new (NULL);
  for (guint c = 0; selected != GTK_INVALID_LIST_POSITION && c < table->columns->len; c++)
    {
      Column *column = g_ptr_array_index (table->columns, c);
      g_autofree char *text = wick_table_get_text (table, selected, c);
      g_string_append_printf (label, "%s%s: %s", c ? ", " : "", column->title,
                              text ? text : "");
    }
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  label->str, -1);
  g_string_free (label, TRUE);
}

static void
canvas_selection_changed (GtkSelectionModel *model, guint position, guint n,
                          WickTableCanvas *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  canvas_update_accessible (self);
}

static void
canvas_items_changed (GListModel *model, guint position, guint removed, guint added,
                      WickTableCanvas *self)
{
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

static void
canvas_adjustment_changed (GtkAdjustment *adjustment, WickTableCanvas *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
canvas_set_adjustment (WickTableCanvas *self, GtkAdjustment **slot, GtkAdjustment *adjustment)
{
  if (*slot == adjustment && adjustment != NULL)
    return;
  if (*slot)
    {
      g_signal_handlers_disconnect_by_func (*slot, canvas_adjustment_changed, self);
      g_object_unref (*slot);
    }
  if (adjustment == NULL)
    adjustment = gtk_adjustment_new (0, 0, 0, 0, 0, 0);
  *slot = g_object_ref_sink (adjustment);
  g_signal_connect (adjustment, "value-changed", G_CALLBACK (canvas_adjustment_changed), self);
  canvas_configure (self);
}

static void
canvas_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (object);
  switch (prop_id)
    {
      case CANVAS_PROP_HADJUSTMENT:
        canvas_set_adjustment (self, &self->hadjustment, g_value_get_object (value));
        break;
      case CANVAS_PROP_VADJUSTMENT:
        canvas_set_adjustment (self, &self->vadjustment, g_value_get_object (value));
        break;
      case CANVAS_PROP_HSCROLL_POLICY:
        self->hscroll_policy = g_value_get_enum (value);
        gtk_widget_queue_resize (GTK_WIDGET (self));
        break;
      case CANVAS_PROP_VSCROLL_POLICY:
        self->vscroll_policy = g_value_get_enum (value);
        gtk_widget_queue_resize (GTK_WIDGET (self));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
canvas_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (object);
  switch (prop_id)
    {
      case CANVAS_PROP_HADJUSTMENT:
        g_value_set_object (value, self->hadjustment);
        break;
      case CANVAS_PROP_VADJUSTMENT:
        g_value_set_object (value, self->vadjustment);
        break;
      case CANVAS_PROP_HSCROLL_POLICY:
        g_value_set_enum (value, self->hscroll_policy);
        break;
      case CANVAS_PROP_VSCROLL_POLICY:
        g_value_set_enum (value, self->vscroll_policy);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
canvas_dispose (GObject *object)
{
  WickTableCanvas *self = WICK_TABLE_CANVAS (object);
  if (self->hadjustment)
    g_signal_handlers_disconnect_by_func (self->hadjustment, canvas_adjustment_changed, self);
  if (self->vadjustment)
    g_signal_handlers_disconnect_by_func (self->vadjustment, canvas_adjustment_changed, self);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->vadjustment);
  g_clear_pointer (&self->widths, g_array_unref);
  g_clear_pointer (&self->natural, g_array_unref);
  G_OBJECT_CLASS (wick_table_canvas_parent_class)->dispose (object);
}

static void
wick_table_canvas_class_init (WickTableCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->set_property = canvas_set_property;
  object_class->get_property = canvas_get_property;
  object_class->dispose = canvas_dispose;
  widget_class->measure = canvas_measure;
  widget_class->size_allocate = canvas_size_allocate;
  widget_class->snapshot = canvas_snapshot;
  g_object_class_override_property (object_class, CANVAS_PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, CANVAS_PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, CANVAS_PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, CANVAS_PROP_VSCROLL_POLICY, "vscroll-policy");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GRID);
  gtk_widget_class_set_css_name (widget_class, "wick-table");
}

static void
wick_table_canvas_init (WickTableCanvas *self)
{
  self->widths = g_array_new (FALSE, TRUE, sizeof (int));
  self->natural = g_array_new (FALSE, TRUE, sizeof (int));
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
  gtk_widget_add_css_class (GTK_WIDGET (self), "view");
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (canvas_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  GtkEventController *keys = gtk_event_controller_key_new ();
  g_signal_connect (keys, "key-pressed", G_CALLBACK (canvas_key_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (canvas_query_tooltip), NULL);
}

static int
drawn_sort (gconstpointer a, gconstpointer b, gpointer user_data)
{
  WickTable *self = user_data;
  if (self->sort_column < 0 || (guint)self->sort_column >= self->columns->len)
    return 0;
  WickTableRow *ra = unwrap ((gpointer)a), *rb = unwrap ((gpointer)b);
  Column *column = g_ptr_array_index (self->columns, self->sort_column);
  int order = column->def != NULL
                ? declared_compare (column, self->data, ra->index, rb->index)
                : column->compare (self->data, ra->index, rb->index);
  if (order == 0) /* ties in the data's order, both ways */
    return CMP (ra->index, rb->index);
  return self->sort_descending ? -order : order;
}

static WickTable *
table_new (gpointer data, gboolean drawn)
{
  WickTable *self = g_new0 (WickTable, 1);
  self->data = data;
  self->sort_column = -1;
  self->columns = g_ptr_array_new_with_free_func (column_free);
  self->store = g_list_store_new (WICK_TYPE_TABLE_ROW);
  self->range = g_object_new (WICK_TYPE_ROW_RANGE, NULL);
  self->filter = gtk_custom_filter_new (filter_row, self, NULL);
  self->filtered = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->range)), NULL);
  GtkSorter *sorter;
  if (drawn)
    {
      self->drawn_sorter = GTK_SORTER (gtk_custom_sorter_new (drawn_sort, self, NULL));
      sorter = g_object_ref (self->drawn_sorter);
    }
  else
    {
      self->view = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
      sorter = g_object_ref (gtk_column_view_get_sorter (self->view));
    }
  self->sorted = gtk_sort_list_model_new (G_LIST_MODEL (g_object_ref (self->filtered)), sorter);
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->sorted)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (on_selection_changed), self);
  self->scrolled = gtk_scrolled_window_new ();
  if (drawn)
    {
      self->canvas = g_object_new (WICK_TYPE_TABLE_CANVAS, NULL);
      self->canvas->table = self;
      g_signal_connect (self->selection, "selection-changed",
                        G_CALLBACK (canvas_selection_changed), self->canvas);
      g_signal_connect (self->selection, "items-changed", G_CALLBACK (canvas_items_changed),
                        self->canvas);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled),
                                     GTK_WIDGET (self->canvas));
    }
  else
    {
      gtk_column_view_set_model (self->view,
                                 GTK_SELECTION_MODEL (g_object_ref (self->selection)));
      gtk_column_view_set_show_column_separators (self->view, TRUE);
      gtk_widget_add_css_class (GTK_WIDGET (self->view), "data-table");
      g_signal_connect (self->view, "activate", G_CALLBACK (on_activate), self);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled),
                                     GTK_WIDGET (self->view));
    }
  gtk_widget_set_vexpand (self->scrolled, TRUE);
  g_object_ref_sink (self->scrolled);
  return self;
}

WickTable *
wick_table_new (gpointer data)
{
  return table_new (data, FALSE);
}

WickTable *
wick_table_new_drawn (gpointer data)
{
  return table_new (data, TRUE);
}

void
wick_table_free (WickTable *self)
{
  if (self == NULL)
    return;
  g_signal_handlers_disconnect_by_data (self->selection, self);
  if (self->view)
    g_signal_handlers_disconnect_by_data (self->view, self);
  if (self->canvas)
    {
      g_signal_handlers_disconnect_by_data (self->selection, self->canvas);
      self->canvas->table = NULL;
    }
  if (self->drawn_sorter)
    {
      /* the sort model may outlive the table (a widget holding it): its
       * sorter must not call back into freed memory */
      gtk_sort_list_model_set_sorter (self->sorted, NULL);
      g_clear_object (&self->drawn_sorter);
    }
  gtk_custom_filter_set_filter_func (self->filter, NULL, NULL, NULL);
  g_object_unref (self->scrolled);
  g_object_unref (self->selection);
  g_object_unref (self->sorted);
  g_object_unref (self->filtered);
  g_object_unref (self->filter);
  g_object_unref (self->store);
  g_object_unref (self->range);
  g_ptr_array_unref (self->columns);
  g_free (self->needle);
  g_free (self);
}

GtkWidget *
wick_table_get_widget (WickTable *self)
{
  return self->scrolled;
}

GtkColumnView *
wick_table_get_column_view (WickTable *self)
{
  return self->view;
}

GtkSelectionModel *
wick_table_get_model (WickTable *self)
{
  return GTK_SELECTION_MODEL (self->selection);
}

double
wick_table_get_row_y (WickTable *self, guint position)
{
  if (self->canvas == NULL)
    return -1;
  if (position == G_MAXUINT)
    return self->canvas->header_height / 2.0;
  return self->canvas->header_height + ((double)position + 0.5) * self->canvas->row_height
         - adjustment_value (self->canvas->vadjustment);
}

void
wick_table_activate (WickTable *self, guint position)
{
  notify_row (self, position, TRUE);
}

guint
wick_table_get_n_columns (WickTable *self)
{
  return self->columns->len;
}

GtkWidget *
wick_table_get_drawn (WickTable *self)
{
  return self->canvas ? GTK_WIDGET (self->canvas) : NULL;
}

static void
append_column (WickTable *self, Column *column, const char *title, gboolean sortable,
               gboolean expand)
{
  g_ptr_array_add (self->columns, column);
  column->title = g_strdup (title);
  column->sortable = sortable;
  column->expand = expand;
  if (self->canvas)
    {
      self->canvas->widths_valid = FALSE;
      gtk_widget_queue_resize (GTK_WIDGET (self->canvas));
      return;
    }

  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_object_set_data (G_OBJECT (factory), "wick-table", self);
  gboolean expander = self->children != NULL && self->columns->len == 1;
  g_signal_connect (factory, "setup", G_CALLBACK (expander ? setup_expander : setup_label), column);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_label), column);
  GtkColumnViewColumn *view_column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_resizable (view_column, TRUE);
  gtk_column_view_column_set_expand (view_column, expand);
  if (sortable)
    {
      SortData *sort = g_new0 (SortData, 1);
      sort->table = self;
      sort->column = column;
      GtkSorter *sorter = GTK_SORTER (gtk_custom_sorter_new (sort_rows, sort, g_free));
      gtk_column_view_column_set_sorter (view_column, sorter);
      g_object_unref (sorter);
    }
  gtk_column_view_append_column (self->view, view_column);
  g_object_unref (view_column);
}

void
wick_table_add_column (WickTable *self, const char *title, WickTableTextFunc text,
                       WickTableCompareFunc compare, gboolean expand, gboolean numeric)
{
  Column *column = g_new0 (Column, 1);
  column->text = text;
  column->compare = compare;
  column->numeric = numeric;
  append_column (self, column, title, compare != NULL, expand);
}

void
wick_table_add_columns (WickTable *self, WickTableRecordFunc record,
                        WickTableDocumentFunc document, const WickColumn *columns,
                        guint n_columns)
{
  g_return_if_fail (record != NULL && document != NULL);
  for (guint i = 0; i < n_columns; i++)
    {
      const WickColumn *def = &columns[i];
      Column *column = g_new0 (Column, 1);
      column->def = def;
      column->record = record;
      column->document = document;
      column->text = def->text;
      column->style = def->style;
      column->numeric = def->type == WICK_COLUMN_COUNT || def->type == WICK_COLUMN_DURATION
                        || def->type == WICK_COLUMN_DURATION_F64
                        || def->type == WICK_COLUMN_BYTES || def->type == WICK_COLUMN_F64
                        || def->type == WICK_COLUMN_I64 || def->type == WICK_COLUMN_SHARE;
      gboolean sortable = def->type != WICK_COLUMN_SHAPE && !(def->flags & WICK_COLUMN_UNSORTED);
      append_column (self, column, _ (def->title), sortable,
                     (def->flags & WICK_COLUMN_EXPAND) != 0);
    }
}

static GListModel *
create_children (gpointer item, gpointer user_data)
{
  WickTable *self = user_data;
  WickTableRow *row = item;
  if (row->kind != 0 || self->children == NULL)
    return NULL;
  g_autoptr (GArray) indices = self->children (self->data, row->index);
  if (indices == NULL || indices->len == 0)
    return NULL;
  GListStore *store = g_list_store_new (WICK_TYPE_TABLE_ROW);
  for (guint i = 0; i < indices->len; i++)
    {
      g_autoptr (WickTableRow) child = row_new (1, g_array_index (indices, guint, i));
      g_list_store_append (store, child);
    }
  return G_LIST_MODEL (store);
}

void
wick_table_set_tree (WickTable *self, WickTableChildrenFunc children)
{
  g_return_if_fail (self->columns->len == 0);
  self->children = children;
  GtkTreeListModel *tree = gtk_tree_list_model_new (G_LIST_MODEL (g_object_ref (self->store)),
                                                    FALSE, TRUE, create_children, self, NULL);
  gtk_filter_list_model_set_model (self->filtered, G_LIST_MODEL (tree));
  g_object_unref (tree);
  gtk_sort_list_model_set_sorter (self->sorted, NULL);
}

void
wick_table_set_rows (WickTable *self, guint n_rows)
{
  gboolean incremental = n_rows > INCREMENTAL_ROWS;
  gtk_filter_list_model_set_incremental (self->filtered, incremental);
  gtk_sort_list_model_set_incremental (self->sorted, incremental);
  self->quiet = TRUE;
  if (self->canvas)
    {
      g_return_if_fail (self->children == NULL);
      self->canvas->widths_valid = FALSE;
      gtk_widget_queue_resize (GTK_WIDGET (self->canvas));
    }
  if (self->children == NULL)
    row_range_set (self->range, n_rows);
  else
    {
      g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint i = 0; i < n_rows; i++)
        g_ptr_array_add (rows, row_new (0, i));
      g_list_store_splice (self->store, 0, g_list_model_get_n_items (G_LIST_MODEL (self->store)),
                           rows->pdata, rows->len);
    }
  self->quiet = FALSE;
}

void
wick_table_set_filter (WickTable *self, const char *text)
{
  g_clear_pointer (&self->needle, g_free);
  if (text && *text)
    self->needle = g_utf8_casefold (text, -1);
  /* No filter at all without text: nothing to evaluate per row. */
  gtk_filter_list_model_set_filter (self->filtered,
                                    self->needle ? GTK_FILTER (self->filter) : NULL);
  if (self->needle)
    gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
}

void
wick_table_sort_by (WickTable *self, guint column, gboolean descending)
{
  if (self->canvas)
    {
      g_return_if_fail (column < self->columns->len);
      self->sort_column = (gint)column;
      self->sort_descending = descending;
      gtk_sorter_changed (self->drawn_sorter, GTK_SORTER_CHANGE_DIFFERENT);
      gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
      return;
    }
  GListModel *columns = gtk_column_view_get_columns (self->view);
  g_autoptr (GtkColumnViewColumn) view_column = g_list_model_get_item (columns, column);
  g_return_if_fail (view_column != NULL);
  gtk_column_view_sort_by_column (self->view, view_column,
                                  descending ? GTK_SORT_DESCENDING : GTK_SORT_ASCENDING);
}

guint
wick_table_get_n_shown (WickTable *self)
{
  return g_list_model_get_n_items (G_LIST_MODEL (self->selection));
}

gboolean
wick_table_get_shown (WickTable *self, guint position, guint *kind, guint *index)
{
  g_autoptr (GObject) item = g_list_model_get_item (G_LIST_MODEL (self->selection), position);
  if (item == NULL)
    return FALSE;
  WickTableRow *row = unwrap (item);
  *kind = row->kind;
  *index = row->index;
  return TRUE;
}

char *
wick_table_get_text (WickTable *self, guint position, guint column)
{
  guint kind, index;
  g_return_val_if_fail (column < self->columns->len, NULL);
  if (!wick_table_get_shown (self, position, &kind, &index))
    return NULL;
  return column_text (g_ptr_array_index (self->columns, column), self->data, kind, index);
}

/* A cell for TSV: a declared number column's plain value, else its text. */
static char *
tsv_cell (WickTable *self, Column *column, guint kind, guint index)
{
  char *text = NULL;
  if (column->def != NULL && column->def->text == NULL)
    {
      const void *r = column->record (self->data, index);
      switch (column->def->type)
        {
          case WICK_COLUMN_COUNT:
          case WICK_COLUMN_DURATION:
          case WICK_COLUMN_BYTES:
            text = g_strdup_printf ("%" G_GUINT64_FORMAT, FIELD (r, column->def->offset, guint64));
            break;
          case WICK_COLUMN_DURATION_F64:
            text = g_strdup_printf ("%.1f", FIELD (r, column->def->offset, double));
            break;
          case WICK_COLUMN_SHARE:
            text = g_strdup_printf ("%.6f", FIELD (r, column->def->offset, double));
            break;
          default:
            break;
        }
    }
  if (text == NULL)
    text = column_text (column, self->data, kind, index);
  if (text == NULL)
    return g_strdup ("");
  g_strdelimit (text, "\t\n\r", ' ');
  return text;
}

static const char *
tsv_unit (Column *column)
{
  if (column->def == NULL || column->def->text != NULL)
    return NULL;
  switch (column->def->type)
    {
      case WICK_COLUMN_DURATION:
      case WICK_COLUMN_DURATION_F64:
        return "ns";
      case WICK_COLUMN_BYTES:
        return "B";
      case WICK_COLUMN_SHARE:
        return "fraction";
      default:
        return NULL;
    }
}

guint
wick_table_get_selected (WickTable *self)
{
  return gtk_single_selection_get_selected (self->selection);
}

char *
wick_table_to_tsv (WickTable *self, gboolean selected)
{
  guint first = 0, n = wick_table_get_n_shown (self);
  if (selected)
    {
      first = gtk_single_selection_get_selected (self->selection);
      if (first == GTK_INVALID_LIST_POSITION || first >= n)
        return NULL;
      n = first + 1;
    }
  GString *out = g_string_new (NULL);
  for (guint c = 0; c < self->columns->len; c++)
    {
      Column *column = g_ptr_array_index (self->columns, c);
      g_autofree char *title = g_strdup (column->title ? column->title : "");
      const char *unit = tsv_unit (g_ptr_array_index (self->columns, c));
      g_strdelimit (title, "\t\n\r", ' ');
      g_string_append_printf (out, "%s%s%s%s%s", c ? "\t" : "", title, unit ? " (" : "",
                              unit ? unit : "", unit ? ")" : "");
    }
  g_string_append_c (out, '\n');
  for (guint p = first; p < n; p++)
    {
      guint kind, index;
      if (!wick_table_get_shown (self, p, &kind, &index))
        break;
      for (guint c = 0; c < self->columns->len; c++)
        {
          g_autofree char *cell = tsv_cell (self, g_ptr_array_index (self->columns, c), kind, index);
          if (c)
            g_string_append_c (out, '\t');
          g_string_append (out, cell);
        }
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

void
wick_table_set_row_func (WickTable *self, WickTableRowFunc func)
{
  self->row_func = func;
}

gboolean
wick_table_select (WickTable *self, guint kind, guint index)
{
  guint n = wick_table_get_n_shown (self);
  for (guint i = 0; i < n; i++)
    {
      guint k, x;
      if (wick_table_get_shown (self, i, &k, &x) && k == kind && x == index)
        {
          self->quiet = TRUE;
          gtk_single_selection_set_selected (self->selection, i);
          self->quiet = FALSE;
          return TRUE;
        }
    }
  return FALSE;
}

void
wick_table_set_class_func (WickTable *self, WickTableClassFunc func)
{
  g_return_if_fail (self->columns->len > 0);
  Column *column = g_ptr_array_index (self->columns, self->columns->len - 1);
  column->style = func;
}
