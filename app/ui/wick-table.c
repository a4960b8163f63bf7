/* wick-table.c — see wick-table.h for the contract. */
#include "wick-table.h"

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

guint
wick_table_row_get_kind (WickTableRow *row)
{
  return row->kind;
}

guint
wick_table_row_get_index (WickTableRow *row)
{
  return row->index;
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
} Column;

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

WickTable *
wick_table_new (gpointer data)
{
  WickTable *self = g_new0 (WickTable, 1);
  self->data = data;
  self->columns = g_ptr_array_new_with_free_func (g_free);
  self->store = g_list_store_new (WICK_TYPE_TABLE_ROW);
  self->range = g_object_new (WICK_TYPE_ROW_RANGE, NULL);
  self->filter = gtk_custom_filter_new (filter_row, self, NULL);
  self->filtered = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->range)), NULL);
  self->view = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  self->sorted = gtk_sort_list_model_new (G_LIST_MODEL (g_object_ref (self->filtered)),
                                          g_object_ref (gtk_column_view_get_sorter (self->view)));
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->sorted)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_column_view_set_model (self->view, GTK_SELECTION_MODEL (g_object_ref (self->selection)));
  gtk_column_view_set_show_column_separators (self->view, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->view), "data-table");
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (on_selection_changed), self);
  g_signal_connect (self->view, "activate", G_CALLBACK (on_activate), self);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), GTK_WIDGET (self->view));
  gtk_widget_set_vexpand (self->scrolled, TRUE);
  g_object_ref_sink (self->scrolled);
  return self;
}

void
wick_table_free (WickTable *self)
{
  if (self == NULL)
    return;
  g_signal_handlers_disconnect_by_data (self->selection, self);
  g_signal_handlers_disconnect_by_data (self->view, self);
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

static void
append_column (WickTable *self, Column *column, const char *title, gboolean sortable,
               gboolean expand)
{
  g_ptr_array_add (self->columns, column);

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
  GListModel *view_columns = gtk_column_view_get_columns (self->view);
  for (guint c = 0; c < self->columns->len; c++)
    {
      g_autoptr (GtkColumnViewColumn) vc = g_list_model_get_item (view_columns, c);
      g_autofree char *title = g_strdup (vc ? gtk_column_view_column_get_title (vc) : "");
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

gboolean
wick_table_page_can_wait (GtkWidget *page, WickDocument *document)
{
  return document != NULL && !wick_document_is_finished (document) && !gtk_widget_get_mapped (page);
}
