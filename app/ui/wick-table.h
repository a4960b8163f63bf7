/* wick-table.h — a sortable, filterable GtkColumnView over record indices.
 *
 * The tables (span costs, ops, tensors, health, coverage) show rows of the
 * document's plain arrays without a GObject per record in the model: a row is
 * a small WickTableRow (kind, index) created on demand. Each column is a text
 * function and an optional compare function (clicking its header sorts), or,
 * for a table over one array of plain structs, a declared WickColumn: a field
 * at an offset of the record, its type giving the format and the order. A
 * filter keeps rows where any column's text contains the filter text,
 * ignoring case. In tree mode, root rows (kind 0) expand into the children
 * the children function lists (kind 1).
 */
#pragma once

#include <gtk/gtk.h>

#include "wick-document.h"

G_BEGIN_DECLS

#define WICK_TYPE_TABLE_ROW (wick_table_row_get_type ())
G_DECLARE_FINAL_TYPE (WickTableRow, wick_table_row, WICK, TABLE_ROW, GObject)

typedef char *(*WickTableTextFunc) (gpointer data, guint kind, guint index);
typedef int (*WickTableCompareFunc) (gpointer data, guint index_a, guint index_b);
typedef GArray *(*WickTableChildrenFunc) (gpointer data, guint index); /* guint indices */
/* @activated: FALSE when the row was selected, TRUE when activated (Enter,
 * double-click). */
typedef void (*WickTableRowFunc) (gpointer data, guint kind, guint index, gboolean activated);

/* A style class for a cell ("success", "warning", "error"), or NULL. */
typedef const char *(*WickTableClassFunc) (gpointer data, guint kind, guint index);

typedef struct _WickTable WickTable;

/* @data is passed to every callback; the table does not own it. */
WickTable *wick_table_new (gpointer data);
/* A flat table drawn by Wick instead of a GtkColumnView (no tree mode):
 * its first frame costs the rows on screen, not the 200 rows of widgets
 * GTK 4.8's list views keep (see wick-table.c, "the drawn table"). */
WickTable *wick_table_new_drawn (gpointer data);
void wick_table_free (WickTable *self);

/* The scrolled window holding the column view (owned by the table until packed). */
GtkWidget *wick_table_get_widget (WickTable *self);

void wick_table_add_column (WickTable *self, const char *title, WickTableTextFunc text,
                            WickTableCompareFunc compare, gboolean expand, gboolean numeric);
/* ---- columns declared as data ------------------------------------------ */

typedef enum
{
  WICK_COLUMN_STR,          /* WickStr: the document's string */
  WICK_COLUMN_COUNT,        /* guint64, as a number */
  WICK_COLUMN_DURATION,     /* guint64 ns (wick_format_duration) */
  WICK_COLUMN_DURATION_F64, /* double ns */
  WICK_COLUMN_BYTES,        /* guint64 (wick_format_bytes) */
  WICK_COLUMN_F64,          /* double, 4 significant digits */
  WICK_COLUMN_CATEGORY,     /* guint8 WickMemoryCategory: its name, ordered by value */
  WICK_COLUMN_SPAN,         /* gint32 span index at offset, WickStr span_id at offset2: the
                             * span's name (its id when the span is unknown) */
  WICK_COLUMN_SHAPE,        /* guint32 shape offset at offset, guint32 rank at offset2 */
  WICK_COLUMN_I64,          /* gint64, as a number; negative: empty (none) */
  WICK_COLUMN_SHARE,        /* double fraction, as a percentage */
} WickColumnType;

typedef enum
{
  WICK_COLUMN_EXPAND = 1 << 0,   /* takes the spare width */
  WICK_COLUMN_UNSORTED = 1 << 1, /* its header does not sort */
} WickColumnFlags;

typedef struct
{
  const char *title; /* untranslated (N_): translated when added */
  WickColumnType type;
  gsize offset;  /* of the field in the record */
  gsize offset2; /* SPAN: the span_id; SHAPE: the rank */
  guint flags;   /* WickColumnFlags */
  WickTableTextFunc text;   /* optional: the text instead of the type's (order still by type) */
  WickTableClassFunc style; /* optional: a style class per cell */
} WickColumn;

/* Record @index of the table's array, and the document its strings are in. */
typedef const void *(*WickTableRecordFunc) (gpointer data, guint index);
typedef WickDocument *(*WickTableDocumentFunc) (gpointer data);

/* Adds @n_columns declared columns over the records @record returns
 * (@columns must outlive the table: a static array). Numbers are right
 * aligned; every column but SHAPE and the UNSORTED ones sorts. */
void wick_table_add_columns (WickTable *self, WickTableRecordFunc record,
                             WickTableDocumentFunc document, const WickColumn *columns,
                             guint n_columns);

/* Colours the cells of the column added last. */
void wick_table_set_class_func (WickTable *self, WickTableClassFunc func);
/* Rows 0..n-1 (kind 0). */
void wick_table_set_rows (WickTable *self, guint n_rows);
void wick_table_set_tree (WickTable *self, WickTableChildrenFunc children);
void wick_table_set_filter (WickTable *self, const char *text);
/* Sorts by column @column (descending when @descending). */
void wick_table_sort_by (WickTable *self, guint column, gboolean descending);
/* The rows shown (all of them, or only the selected one when @selected)
 * as tab-separated values, one line per row, the column titles first.
 * Durations, counts and bytes of declared columns are plain numbers
 * (their titles say "(ns)", "(B)"), other cells as shown; tabs and
 * newlines inside a cell become spaces. NULL when no row is selected. */
char *wick_table_to_tsv (WickTable *self, gboolean selected);
/* Called when a row is selected or activated. */
void wick_table_set_row_func (WickTable *self, WickTableRowFunc func);
/* Selects the shown row with this kind and index, if shown. */
gboolean wick_table_select (WickTable *self, guint kind, guint index);

G_END_DECLS
