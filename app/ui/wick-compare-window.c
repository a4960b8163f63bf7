/* wick-compare-window.c — see wick-compare-window.h. */
#include "config.h"

#include "wick-compare-window.h"
#include "wick-compare-window-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "model/wick-chrome-import.h"
#include "model/wick-memory-series.h"
#include "wick-format.h"
#include "wick-palette.h"
#include "wick-record-text.h"
#include "wick-selection.h"
#include "wick-timeline-view.h"

static void wick_compare_window_compare_anyway (WickCompareWindow *self);

struct _WickCompareWindow
{
  AdwApplicationWindow parent_instance;

  GFile *files[2];
  WickDocument *docs[2];
  WickComparison *comparison;
  GCancellable *cancellable;
  gboolean ready, refused;
  char *error;

  /* from the template (data/ui/wick-compare-window.ui) */
  GtkWidget *stack;
  GtkWidget *banner, *banner_label, *banner_button;
  GtkWidget *spinner;
  GtkWidget *status;
  GtkWidget *paned;
  GtkWidget *labels[2];    /* label_a, label_b */
  GtkWidget *timelines[2]; /* timeline_a, timeline_b */
  GtkWidget *memory;
  GtkWidget *summary;
  GtkWidget *table;

  WickSelection *selections[2]; /* made before the template: its timelines bind to them */
  GListStore *rows;
  GtkSingleSelection *row_selection;
  gboolean syncing;
  GPtrArray *series[2]; /* WickMemorySeries of each side */
  double hover_x;
};

G_DEFINE_FINAL_TYPE (WickCompareWindow, wick_compare_window, ADW_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_SELECTION_A,
  PROP_SELECTION_B,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

/* ---- one row of the table: an index into comparison->entries ---- */

#define WICK_TYPE_COMPARE_ROW (wick_compare_row_get_type ())
G_DECLARE_FINAL_TYPE (WickCompareRow, wick_compare_row, WICK, COMPARE_ROW, GObject)

struct _WickCompareRow
{
  GObject parent_instance;
  guint index;
};

G_DEFINE_FINAL_TYPE (WickCompareRow, wick_compare_row, G_TYPE_OBJECT)

static void
wick_compare_row_class_init (WickCompareRowClass *klass)
{
}

static void
wick_compare_row_init (WickCompareRow *self)
{
}

static WickCompareRow *
wick_compare_row_new (guint index)
{
  WickCompareRow *row = g_object_new (WICK_TYPE_COMPARE_ROW, NULL);
  row->index = index;
  return row;
}

/* ---- alignment ---- */

static guint64
measured_start (WickCompareWindow *self, guint side)
{
  GPtrArray *runs = side == 0 ? self->comparison->runs_a : self->comparison->runs_b;
  return ((WickCompareRun *)g_ptr_array_index (runs, 0))->measured_start_ns;
}

static guint64
measured_ns (WickCompareWindow *self, guint side)
{
  GPtrArray *runs = side == 0 ? self->comparison->runs_a : self->comparison->runs_b;
  return ((WickCompareRun *)g_ptr_array_index (runs, 0))->measured_ns;
}

/* Shifts a time of @from's clock to @to's: both measured regions start at 0. */
static guint64
shift_time (WickCompareWindow *self, guint from, guint to, guint64 t)
{
  guint64 mf = measured_start (self, from), mt = measured_start (self, to);
  if (t >= mf)
    return G_MAXUINT64 - mt < t - mf ? G_MAXUINT64 : mt + (t - mf);
  return mf - t > mt ? 0 : mt - (mf - t);
}

static void
on_visible_changed (WickSelection *selection, guint what, WickCompareWindow *self)
{
  guint from = selection == self->selections[0] ? 0 : 1, to = 1 - from;
  guint64 start, end;

  if (!(what & WICK_SELECTION_CHANGED_VISIBLE) || self->syncing || self->comparison == NULL)
    return;
  wick_selection_get_visible (selection, &start, &end);
  self->syncing = TRUE;
  wick_selection_set_visible (self->selections[to], shift_time (self, from, to, start),
                              shift_time (self, from, to, end));
  self->syncing = FALSE;
  gtk_widget_queue_draw (self->memory);
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, WickCompareWindow *self)
{
  GtkWidget *view = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (motion));
  guint other = view == self->timelines[0] ? 1 : 0;

  /* same x, same aligned time: both views have one scale and one origin */
  wick_timeline_view_set_hover (WICK_TIMELINE_VIEW (self->timelines[other]), x);
  self->hover_x = x;
  gtk_widget_queue_draw (self->memory);
}

static void
on_leave (GtkEventControllerMotion *motion, WickCompareWindow *self)
{
  for (guint i = 0; i < 2; i++)
    wick_timeline_view_set_hover (WICK_TIMELINE_VIEW (self->timelines[i]), -1);
  self->hover_x = -1;
  gtk_widget_queue_draw (self->memory);
}

/* ---- the memory overlay: each side's largest device, per category ---- */

static const WickMemorySeries *
main_series (WickCompareWindow *self, guint side)
{
  const WickMemorySeries *best = NULL;

  for (guint i = 0; self->series[side] && i < self->series[side]->len; i++)
    {
      const WickMemorySeries *s = g_ptr_array_index (self->series[side], i);
      if (best == NULL || s->peak_total > best->peak_total)
        best = s;
    }
  return best;
}

static void
draw_memory (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  WickCompareWindow *self = user_data;
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  const double left = WICK_TIMELINE_GUTTER, top = 18, bottom = height - 4;
  guint64 peak = 1;
  PangoLayout *layout;

  wick_palette_set (cr, wick_palette_background (dark), 1);
  cairo_paint (cr);
  if (self->comparison == NULL)
    return;
  for (guint side = 0; side < 2; side++)
    {
      const WickMemorySeries *s = main_series (self, side);
      for (guint c = 0; s && c < WICK_N_CATEGORIES; c++)
        peak = MAX (peak, s->peak[c]);
    }

  layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), NULL);
  {
    g_autofree char *peak_text = wick_format_bytes (peak);
    g_autofree char *text
      = main_series (self, 0) || main_series (self, 1)
          ? g_strdup_printf (_ ("Live memory by category — A solid, B dashed (scale to %s)"),
                             peak_text)
          : g_strdup (_ ("Live memory by category — neither trace has memory records"));
    pango_layout_set_text (layout, text, -1);
    wick_palette_set (cr, wick_palette_foreground (dark), 0.8);
    cairo_move_to (cr, left, 1);
    pango_cairo_show_layout (cr, layout);
  }
  g_object_unref (layout);

  for (guint side = 0; side < 2; side++)
    {
      const WickMemorySeries *s = main_series (self, side);
      guint64 start, end;

      if (s == NULL)
        continue;
      wick_selection_get_visible (self->selections[side], &start, &end);
      if (end <= start)
        continue;
      for (guint c = 0; c < WICK_N_CATEGORIES; c++)
        {
          const WickMemoryPoint *pts = (const WickMemoryPoint *)s->points->data;
          double span = (double)(end - start), prev_y = bottom;
          gboolean started = FALSE;

          if (s->peak[c] == 0)
            continue;
          wick_palette_set (cr, wick_palette_category (c, dark), 0.95);
          cairo_set_line_width (cr, 1.5);
          if (side == 1)
            cairo_set_dash (cr, (double[]){ 5, 3 }, 2, 0);
          else
            cairo_set_dash (cr, NULL, 0, 0);
          for (guint p = 0; p < s->points->len; p++)
            {
              double x = left + ((double)pts[p].t_ns - (double)start) / span * (width - left);
              double y = bottom - (double)pts[p].live[c] / (double)peak * (bottom - top);
              if (x < left)
                {
                  prev_y = y;
                  continue;
                }
              if (!started)
                {
                  cairo_move_to (cr, left, prev_y);
                  started = TRUE;
                }
              cairo_line_to (cr, MIN (x, width), prev_y); /* a step chart */
              if (x > width)
                break;
              cairo_line_to (cr, x, y);
              prev_y = y;
            }
          if (!started)
            cairo_move_to (cr, left, prev_y);
          cairo_line_to (cr, width, prev_y);
          cairo_stroke (cr);
        }
    }
  cairo_set_dash (cr, NULL, 0, 0);
  if (self->hover_x >= left)
    {
      wick_palette_set (cr, wick_palette_accent (dark), 0.8);
      cairo_move_to (cr, self->hover_x + 0.5, top);
      cairo_line_to (cr, self->hover_x + 0.5, bottom);
      cairo_stroke (cr);
    }
}

/* ---- the table ---- */

static const WickCompareEntry *
row_entry (WickCompareWindow *self, GtkListItem *item)
{
  WickCompareRow *row = gtk_list_item_get_item (item);
  return &g_array_index (self->comparison->entries, WickCompareEntry, row->index);
}

typedef enum
{
  COL_CHANGE,
  COL_KIND,
  COL_NAME,
  COL_COUNT,
  COL_MEAN_A,
  COL_MEAN_B,
  COL_RATIO,
  COL_CI,
  N_COLS
} Column;

static void
setup_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column)
{
  GtkWidget *label = gtk_label_new (NULL);
  Column col = GPOINTER_TO_UINT (column);

  gtk_label_set_xalign (GTK_LABEL (label), col == COL_NAME || col == COL_KIND ? 0 : 1);
  if (col == COL_NAME)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static char *
entry_text (const WickCompareEntry *e, Column col)
{
  switch (col)
    {
      case COL_CHANGE:
        if (e->significant)
          return g_strdup (e->ratio > 1 ? _ ("slower") : _ ("faster"));
        if (e->status == WICK_COMPARE_ADDED)
          return g_strdup (_ ("added"));
        if (e->status == WICK_COMPARE_REMOVED)
          return g_strdup (_ ("removed"));
        return g_strdup (e->testable ? "" : _ ("few samples"));
      case COL_KIND:
        return g_strdup (wick_compare_kind_name (e->kind));
      case COL_NAME:
        return g_strdup (e->name);
      case COL_COUNT:
        return g_strdup_printf ("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT, e->count_a,
                                e->count_b);
      case COL_MEAN_A:
        return e->count_a ? wick_format_duration ((guint64)e->mean_ns_a) : g_strdup ("—");
      case COL_MEAN_B:
        return e->count_b ? wick_format_duration ((guint64)e->mean_ns_b) : g_strdup ("—");
      case COL_RATIO:
        return isnan (e->ratio) ? g_strdup ("—") : g_strdup_printf ("%.3f×", e->ratio);
      case COL_CI:
        return e->testable ? g_strdup_printf ("%.3f – %.3f", e->ci95_low, e->ci95_high)
                           : g_strdup ("—");
      default:
        return g_strdup ("");
    }
}

static void
bind_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column)
{
  WickCompareWindow *self = g_object_get_data (G_OBJECT (factory), "window");
  const WickCompareEntry *e = row_entry (self, item);
  GtkWidget *label = gtk_list_item_get_child (item);
  g_autofree char *text = entry_text (e, GPOINTER_TO_UINT (column));

  gtk_label_set_text (GTK_LABEL (label), text);
  if (GPOINTER_TO_UINT (column) == COL_CHANGE || GPOINTER_TO_UINT (column) == COL_RATIO)
    {
      gtk_widget_remove_css_class (label, "error");
      gtk_widget_remove_css_class (label, "success");
      if (e->significant)
        gtk_widget_add_css_class (label, e->ratio > 1 ? "error" : "success");
    }
}

static void
highlight (WickCompareWindow *self, const WickCompareEntry *e)
{
  for (guint side = 0; side < 2; side++)
    wick_timeline_view_set_search (WICK_TIMELINE_VIEW (self->timelines[side]), e ? e->name : NULL);
}

static void
on_row_selected (GtkSingleSelection *selection, GParamSpec *pspec, WickCompareWindow *self)
{
  WickCompareRow *row = gtk_single_selection_get_selected_item (selection);

  if (row == NULL || self->comparison == NULL)
    return;
  highlight (self, &g_array_index (self->comparison->entries, WickCompareEntry, row->index));
}

/* The table's model and its columns, on the template's column view. */
static void
build_table (WickCompareWindow *self)
{
  static const char *const titles[N_COLS]
    = { N_ ("Change"), N_ ("Kind"),   N_ ("Name"),  N_ ("Count A / B"),
        N_ ("Mean A"), N_ ("Mean B"), N_ ("B / A"), N_ ("95% interval") };
  GtkColumnView *view = GTK_COLUMN_VIEW (self->table);

  self->rows = g_list_store_new (WICK_TYPE_COMPARE_ROW);
  self->row_selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->rows)));
  gtk_single_selection_set_autoselect (self->row_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->row_selection, TRUE);
  g_signal_connect (self->row_selection, "notify::selected-item", G_CALLBACK (on_row_selected),
                    self);
  gtk_column_view_set_model (view, GTK_SELECTION_MODEL (self->row_selection));
  for (guint c = 0; c < N_COLS; c++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      GtkColumnViewColumn *column;

      g_object_set_data (G_OBJECT (factory), "window", self);
      g_signal_connect (factory, "setup", G_CALLBACK (setup_label), GUINT_TO_POINTER (c));
      g_signal_connect (factory, "bind", G_CALLBACK (bind_label), GUINT_TO_POINTER (c));
      column = gtk_column_view_column_new (_ (titles[c]), factory);
      gtk_column_view_column_set_expand (column, c == COL_NAME);
      gtk_column_view_column_set_resizable (column, TRUE);
      gtk_column_view_append_column (view, column);
      g_object_unref (column);
    }
}

/* ---- showing the result ---- */

static void
show_banner (WickCompareWindow *self)
{
  const WickComparison *c = self->comparison;
  g_autoptr (GString) text = g_string_new (NULL);
  gboolean any = FALSE;

  for (guint i = 0; i < c->differences->len; i++)
    {
      const WickCompareDifference *d = g_ptr_array_index (c->differences, i);
      g_string_append_printf (text, "%s%s: %s vs %s", text->len ? " · " : "", d->field, d->a, d->b);
      any = TRUE;
    }
  if (!any)
    {
      gtk_widget_set_visible (self->banner, FALSE);
      return;
    }
  {
    g_autofree char *label
      /* informational differences only: implementation_id, or what two Chrome
       * traces carry (rank, devices, versions), shown and never a wall */
      = g_strdup_printf (c->identity_match
                           ? _ ("Differences noted (not a configuration mismatch): %s")
                           : _ ("Not the same configuration: %s"),
                         text->str);
    gtk_label_set_text (GTK_LABEL (self->banner_label), label);
  }
  gtk_widget_set_visible (self->banner_button, self->refused);
  gtk_info_bar_set_message_type (GTK_INFO_BAR (self->banner),
                                 c->identity_match ? GTK_MESSAGE_INFO : GTK_MESSAGE_WARNING);
  gtk_widget_set_visible (self->banner, TRUE);
}

static void
show_result (WickCompareWindow *self)
{
  const WickComparison *c = self->comparison;

  for (guint side = 0; side < 2; side++)
    {
      GPtrArray *runs = side == 0 ? c->runs_a : c->runs_b;
      const WickCompareRun *run = g_ptr_array_index (runs, 0);
      g_autofree char *base = g_file_get_basename (self->files[side]);
      g_autofree char *measured = wick_format_duration (run->measured_ns);
      g_autofree char *text
        = g_strdup_printf (g_dngettext (NULL, "%s  %s — measured region %s, %u step",
                                        "%s  %s — measured region %s, %u steps", run->steps->len),
                           side == 0 ? "A" : "B", base, measured, run->steps->len);

      gtk_label_set_text (GTK_LABEL (self->labels[side]), text);
      wick_timeline_view_set_document (WICK_TIMELINE_VIEW (self->timelines[side]),
                                       self->docs[side]);
      self->series[side] = wick_memory_series_build (self->docs[side]);
    }
  /* both views show the longer measured region from its start */
  {
    guint64 length = MAX (measured_ns (self, 0), measured_ns (self, 1));
    guint64 start = measured_start (self, 0);
    wick_selection_set_visible (self->selections[0], start,
                                start + MAX (length + length / 50, (guint64)1000));
  }
  for (guint i = 0; i < c->entries->len; i++)
    {
      g_autoptr (WickCompareRow) row = wick_compare_row_new (i);
      g_list_store_append (self->rows, row);
    }
  {
    g_autofree char *text = g_strdup_printf (
      ngettext ("%u of %u compared names changed significantly (bootstrap 95%%, Bonferroni, "
                "at least %.0f%%)",
                "%u of %u compared names changed significantly (bootstrap 95%%, Bonferroni, "
                "at least %.0f%%)",
                c->n_significant),
      c->n_significant, c->n_testable, c->min_change * 100);
    gtk_label_set_text (GTK_LABEL (self->summary), text);
  }
  gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "result");
}

static void
on_compare_anyway (GtkButton *button, WickCompareWindow *self)
{
  wick_compare_window_compare_anyway (self);
}

static void
wick_compare_window_compare_anyway (WickCompareWindow *self)
{
  g_return_if_fail (WICK_IS_COMPARE_WINDOW (self));
  if (!self->refused)
    return;
  self->refused = FALSE;
  show_banner (self);
  show_result (self);
}

typedef struct
{
  GFile *files[2];
  WickDocument *docs[2];
  WickComparison *comparison;
} LoadData;

static void
load_data_free (gpointer data)
{
  LoadData *d = data;
  for (guint i = 0; i < 2; i++)
    {
      g_clear_object (&d->files[i]);
      g_clear_object (&d->docs[i]);
    }
  wick_comparison_free (d->comparison);
  g_free (d);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *d = task_data;
  WickCompareOptions options = { TRUE, 0, 0, -1 };
  GError *error = NULL;

  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *path = g_file_get_path (d->files[i]);
      d->docs[i] = wick_document_new_with_extensions (TRUE);
      if (!wick_document_load_file_auto (d->docs[i], path, cancellable, NULL, NULL, &error))
        {
          g_prefix_error (&error, "%s: ", path);
          g_task_return_error (task, error);
          return;
        }
    }
  d->comparison = wick_comparison_new (&d->docs[0], 1, &d->docs[1], 1, &options, &error);
  if (d->comparison == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  WickCompareWindow *self = WICK_COMPARE_WINDOW (source);
  LoadData *d = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  self->ready = TRUE;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      self->error = g_strdup (error->message);
      adw_status_page_set_title (ADW_STATUS_PAGE (self->status), _ ("Cannot Compare"));
      adw_status_page_set_description (ADW_STATUS_PAGE (self->status), error->message);
      gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "status");
      return;
    }
  for (guint i = 0; i < 2; i++)
    self->docs[i] = g_steal_pointer (&d->docs[i]);
  self->comparison = g_steal_pointer (&d->comparison);
  self->refused = !self->comparison->identity_match;
  show_banner (self);
  if (self->refused)
    {
      adw_status_page_set_title (ADW_STATUS_PAGE (self->status), _ ("Not the Same Configuration"));
      adw_status_page_set_description (
        ADW_STATUS_PAGE (self->status),
        _ ("The runs differ in the fields named above, so a change between them may come from "
           "the configuration rather than the code. Compare anyway to see the differences."));
      gtk_stack_set_visible_child_name (GTK_STACK (self->stack), "status");
      return;
    }
  show_result (self);
}

/* ---- the widget ---- */

static void
wick_compare_window_dispose (GObject *object)
{
  WickCompareWindow *self = WICK_COMPARE_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  for (guint i = 0; i < 2; i++)
    {
      if (self->selections[i])
        g_signal_handlers_disconnect_by_data (self->selections[i], self);
      g_clear_object (&self->selections[i]);
      g_clear_pointer (&self->series[i], g_ptr_array_unref);
    }
  if (self->row_selection)
    g_signal_handlers_disconnect_by_data (self->row_selection, self);
  g_clear_object (&self->row_selection);
  g_clear_object (&self->rows);
  G_OBJECT_CLASS (wick_compare_window_parent_class)->dispose (object);
}

static void
wick_compare_window_finalize (GObject *object)
{
  WickCompareWindow *self = WICK_COMPARE_WINDOW (object);

  for (guint i = 0; i < 2; i++)
    {
      g_clear_object (&self->files[i]);
      g_clear_object (&self->docs[i]);
    }
  wick_comparison_free (self->comparison);
  g_free (self->error);
  G_OBJECT_CLASS (wick_compare_window_parent_class)->finalize (object);
}

static void
wick_compare_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickCompareWindow *self = WICK_COMPARE_WINDOW (object);
  if (prop_id == PROP_SELECTION_A || prop_id == PROP_SELECTION_B)
    g_value_set_object (value, self->selections[prop_id - PROP_SELECTION_A]);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_compare_window_class_init (WickCompareWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = wick_compare_window_dispose;
  object_class->finalize = wick_compare_window_finalize;
  object_class->get_property = wick_compare_window_get_property;
  /* Each side's selection (its visible range), for the template's timelines. */
  properties[PROP_SELECTION_A] = g_param_spec_object (
    "selection-a", NULL, NULL, WICK_TYPE_SELECTION, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTION_B] = g_param_spec_object (
    "selection-b", NULL, NULL, WICK_TYPE_SELECTION, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  g_type_ensure (WICK_TYPE_TIMELINE_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/wick-compare-window.ui");
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, banner);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, banner_label);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, banner_button);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, spinner);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, status);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, paned);
  gtk_widget_class_bind_template_child_full (widget_class, "label_a", FALSE,
                                             G_STRUCT_OFFSET (WickCompareWindow, labels[0]));
  gtk_widget_class_bind_template_child_full (widget_class, "label_b", FALSE,
                                             G_STRUCT_OFFSET (WickCompareWindow, labels[1]));
  gtk_widget_class_bind_template_child_full (widget_class, "timeline_a", FALSE,
                                             G_STRUCT_OFFSET (WickCompareWindow, timelines[0]));
  gtk_widget_class_bind_template_child_full (widget_class, "timeline_b", FALSE,
                                             G_STRUCT_OFFSET (WickCompareWindow, timelines[1]));
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, memory);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, summary);
  gtk_widget_class_bind_template_child (widget_class, WickCompareWindow, table);
  gtk_widget_class_bind_template_callback (widget_class, on_compare_anyway);
  gtk_widget_class_bind_template_callback (widget_class, on_motion);
  gtk_widget_class_bind_template_callback (widget_class, on_leave);
}

/* The tree comes from the template; here the two selections it binds to,
 * the overlay's drawing and the table's model and columns. */
static void
wick_compare_window_init (WickCompareWindow *self)
{
  self->hover_x = -1;
  self->cancellable = g_cancellable_new ();
  for (guint side = 0; side < 2; side++)
    {
      self->selections[side] = wick_selection_new ();
      g_signal_connect (self->selections[side], "changed", G_CALLBACK (on_visible_changed), self);
    }
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->memory), draw_memory, self, NULL);
  build_table (self);
}

WickCompareWindow *
wick_compare_window_new (GtkApplication *application, GFile *a, GFile *b)
{
  WickCompareWindow *self
    = g_object_new (WICK_TYPE_COMPARE_WINDOW, "application", application, NULL);
  LoadData *d = g_new0 (LoadData, 1);
  g_autoptr (GTask) task = NULL;
  g_autofree char *na = g_file_get_basename (a);
  g_autofree char *nb = g_file_get_basename (b);
  g_autofree char *title = g_strdup_printf (_ ("Compare %s with %s"), na, nb);

  gtk_window_set_title (GTK_WINDOW (self), title);
  self->files[0] = g_object_ref (a);
  self->files[1] = g_object_ref (b);
  d->files[0] = g_object_ref (a);
  d->files[1] = g_object_ref (b);
  task = g_task_new (self, self->cancellable, on_loaded, NULL);
  g_task_set_task_data (task, d, load_data_free);
  g_task_run_in_thread (task, load_thread);
  return self;
}

gboolean
wick_compare_window_is_ready (WickCompareWindow *self)
{
  return self->ready;
}

const WickComparison *
wick_compare_window_get_comparison (WickCompareWindow *self)
{
  return self->comparison;
}

gboolean
wick_compare_window_is_refused (WickCompareWindow *self)
{
  return self->refused;
}

gboolean
wick_compare_window_select_name (WickCompareWindow *self, const char *name)
{
  for (guint i = 0; self->comparison && i < g_list_model_get_n_items (G_LIST_MODEL (self->rows));
       i++)
    {
      g_autoptr (WickCompareRow) row = g_list_model_get_item (G_LIST_MODEL (self->rows), i);
      const WickCompareEntry *e
        = &g_array_index (self->comparison->entries, WickCompareEntry, row->index);
      if (e->kind == WICK_COMPARE_SPAN && g_strcmp0 (e->name, name) == 0)
        {
          gtk_single_selection_set_selected (self->row_selection, i);
          return TRUE;
        }
    }
  return FALSE;
}

void
wick_compare_window_get_visible (WickCompareWindow *self, guint64 range_a[2], guint64 range_b[2])
{
  wick_selection_get_visible (self->selections[0], &range_a[0], &range_a[1]);
  wick_selection_get_visible (self->selections[1], &range_b[0], &range_b[1]);
}

GtkWidget *
wick_compare_window_get_timeline (WickCompareWindow *self, guint side)
{
  g_return_val_if_fail (side < 2, NULL);
  return self->timelines[side];
}
