/* wick-table-private.h — what only the tests call of wick-table.h (the app
 * includes wick-table.h alone). It declares no types: include it after
 * wick-table.h. */
#pragma once

G_BEGIN_DECLS

/* NULL for a drawn table. */
GtkColumnView *wick_table_get_column_view (WickTable *self);

/* The drawn table's widget (inside wick_table_get_widget's), NULL otherwise. */
GtkWidget *wick_table_get_drawn (WickTable *self);

/* The rows shown, sorted and filtered, with the selection. */
GtkSelectionModel *wick_table_get_model (WickTable *self);
guint wick_table_get_n_columns (WickTable *self);

/* A drawn table's middle of the row shown at @position in its widget's
 * coordinates (G_MAXUINT: the header's), scrolled as it is; -1 otherwise. */
double wick_table_get_row_y (WickTable *self, guint position);

/* Activates the row shown at @position, as Enter or a double click does. */
void wick_table_activate (WickTable *self, guint position);

/* The position of the selected row, GTK_INVALID_LIST_POSITION when none. */
guint wick_table_get_selected (WickTable *self);

guint wick_table_get_n_shown (WickTable *self);

/* The row shown at @position (kind and index), FALSE past the end. */
gboolean wick_table_get_shown (WickTable *self, guint position, guint *kind, guint *index);

/* The text of column @column in the row shown at @position, NULL past the end. */
char *wick_table_get_text (WickTable *self, guint position, guint column);

G_END_DECLS
