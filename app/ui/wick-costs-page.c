/* wick-costs-page.c — see wick-costs-page.h for the contract; the static widget tree is
 * the template data/ui/wick-costs-page.ui. */
#include "wick-costs-page.h"
#include "wick-costs-page-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "model/wick-span-costs.h"
#include "model/wick-steps.h"
#include "wick-format.h"
#include "wick-record-text.h"

struct _WickCostsPage
{
  WickPage parent_instance;
  /* from the template (data/ui/wick-costs-page.ui) */
  GtkWidget *box;
  GtkWidget *switcher;
  GtkWidget *stack;
  GtkWidget *filter;
  GtkStackPage *steps_page;
  AdwBin *spans_slot, *steps_slot, *ops_slot, *tensors_slot, *stats_slot;

  WickTable *spans, *steps, *ops, *tensors, *stats;
  WickDocument *document; /* the one the tables show */
  GArray *costs;          /* WickSpanCost, the session's */
  GArray *step_stats;     /* WickStepStats, in step order */
  guint64 trace_ns;       /* the longest root span: what shares are of */
};

G_DEFINE_FINAL_TYPE (WickCostsPage, wick_costs_page, WICK_TYPE_PAGE)

enum
{
  SEARCH_NAME,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

/* The tables: one record array each, its columns declared (wick-table.h). */
static WickDocument *
document_of (gpointer d)
{
  return ((WickCostsPage *)d)->document;
}

/* Each table's record accessor (a WickTableRecordFunc) is also what the
 * page's own callbacks read a row's record through. */

/* Span costs */
static const void *
cost_record (gpointer d, guint i)
{
  return &g_array_index (((WickCostsPage *)d)->costs, WickSpanCost, i);
}

static char *
cost_share (gpointer d, guint k, guint i)
{
  const WickSpanCost *c = cost_record (d, i);
  return wick_format_share (c->total_ns, ((WickCostsPage *)d)->trace_ns);
}

static const WickColumn cost_columns[] = {
  { N_ ("Span name"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickSpanCost, name), 0,
    WICK_COLUMN_EXPAND },
  { N_ ("Count"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickSpanCost, count) },
  { N_ ("Total"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickSpanCost, total_ns) },
  { N_ ("Self"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickSpanCost, self_ns) },
  { N_ ("Mean"), WICK_COLUMN_DURATION_F64, G_STRUCT_OFFSET (WickSpanCost, mean_ns) },
  { N_ ("Max"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickSpanCost, max_ns) },
  /* a share of the longest root: ordered as the total */
  { N_ ("Share of trace"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickSpanCost, total_ns), 0, 0,
    cost_share },
};

static void
on_cost_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  if (!activated)
    return;
  const WickSpanCost *c = cost_record (self, i);
  g_signal_emit (self, signals[SEARCH_NAME], 0, wick_document_str (self->document, c->name));
}

/* Steps (wick-steps.h) */
static const void *
step_record (gpointer d, guint i)
{
  return &g_array_index (((WickCostsPage *)d)->step_stats, WickStepStats, i);
}

static char *
step_start (gpointer d, guint k, guint i)
{
  WickCostsPage *self = d;
  const WickStepStats *first = step_record (self, 0), *s = step_record (self, i);
  return wick_format_duration (s->start_ns - MIN (first->start_ns, s->start_ns));
}

static char *
step_device_share (gpointer d, guint k, guint i)
{
  const WickStepStats *s = step_record (d, i);
  return wick_format_share (s->device_ns, s->duration_ns);
}

/* the measured step says so: the one whose figures summary and
 * compare quote */
static char *
step_measured_text (gpointer d, guint k, guint i)
{
  const WickStepStats *s = step_record (d, i);
  return g_strdup (s->measured ? _ ("measured") : "");
}

static const char *
step_measured_style (gpointer d, guint k, guint i)
{
  const WickStepStats *s = step_record (d, i);
  return s->measured ? "accent" : NULL;
}

static const WickColumn step_columns[] = {
  { N_ ("#"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickStepStats, index) },
  { N_ ("Step"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickStepStats, name), 0, WICK_COLUMN_EXPAND },
  { N_ ("Measured"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickStepStats, measured), 0, 0,
    step_measured_text, step_measured_style },
  /* from the first step's start */
  { N_ ("Start"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickStepStats, start_ns), 0, 0,
    step_start },
  { N_ ("Duration"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickStepStats, duration_ns) },
  { N_ ("Spans"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickStepStats, n_spans) },
  { N_ ("Ops"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickStepStats, n_ops) },
  { N_ ("Device intervals"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickStepStats, n_device) },
  { N_ ("Device time"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickStepStats, device_ns) },
  { N_ ("Device busy"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickStepStats, device_ns), 0, 0,
    step_device_share },
  { N_ ("Allocated"), WICK_COLUMN_BYTES, G_STRUCT_OFFSET (WickStepStats, allocated_bytes) },
};

static void
on_step_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  const WickStepStats *s = step_record (self, i);
  wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_SPAN, s->span);
}

/* Ops */
static const void *
op_record (gpointer d, guint i)
{
  return &wick_document_get_ops (((WickCostsPage *)d)->document, NULL)[i];
}

static const WickColumn op_columns[] = {
  { N_ ("Op"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickOp, op_name), 0, WICK_COLUMN_EXPAND },
  { N_ ("Span"), WICK_COLUMN_SPAN, G_STRUCT_OFFSET (WickOp, span),
    G_STRUCT_OFFSET (WickOp, span_id), WICK_COLUMN_EXPAND },
  { N_ ("Shape"), WICK_COLUMN_SHAPE, G_STRUCT_OFFSET (WickOp, shape_offset),
    G_STRUCT_OFFSET (WickOp, rank) },
  { N_ ("Dtype"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickOp, dtype) },
  { N_ ("Device"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickOp, device) },
  { N_ ("Duration"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickOp, duration_ns) },
  { N_ ("Output bytes"), WICK_COLUMN_BYTES, G_STRUCT_OFFSET (WickOp, output_dense_bytes) },
};

static void
on_op_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_OP, i);
}

/* Tensors */
static const void *
tensor_record (gpointer d, guint i)
{
  return &wick_document_get_tensors (((WickCostsPage *)d)->document, NULL)[i];
}

static const WickColumn tensor_columns[] = {
  { N_ ("Tensor"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensor, tensor_id) },
  { N_ ("Label"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensor, label), 0, WICK_COLUMN_EXPAND },
  { N_ ("Span"), WICK_COLUMN_SPAN, G_STRUCT_OFFSET (WickTensor, span),
    G_STRUCT_OFFSET (WickTensor, span_id), WICK_COLUMN_EXPAND },
  { N_ ("Category"), WICK_COLUMN_CATEGORY, G_STRUCT_OFFSET (WickTensor, category) },
  { N_ ("Shape"), WICK_COLUMN_SHAPE, G_STRUCT_OFFSET (WickTensor, shape_offset),
    G_STRUCT_OFFSET (WickTensor, rank) },
  { N_ ("Dtype"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensor, dtype) },
  { N_ ("Device"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensor, device) },
  { N_ ("Bytes"), WICK_COLUMN_BYTES, G_STRUCT_OFFSET (WickTensor, dense_bytes) },
};

static void
on_tensor_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_TENSOR, i);
}

/* Tensor stats */
static const void *
stat_record (gpointer d, guint i)
{
  return &wick_document_get_tensor_stats (((WickCostsPage *)d)->document, NULL)[i];
}

static char *
st_non_finite (gpointer d, guint k, guint i)
{
  const WickTensorStats *s = stat_record (d, i);
  return s->non_finite ? g_strdup_printf ("⚠ %" G_GUINT64_FORMAT, s->non_finite) : g_strdup ("0");
}

static const char *
class_non_finite (gpointer d, guint k, guint i)
{
  const WickTensorStats *s = stat_record (d, i);
  return s->non_finite ? "error" : NULL;
}

static const WickColumn stat_columns[] = {
  { N_ ("Label"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensorStats, label), 0,
    WICK_COLUMN_EXPAND },
  { N_ ("Span"), WICK_COLUMN_SPAN, G_STRUCT_OFFSET (WickTensorStats, span),
    G_STRUCT_OFFSET (WickTensorStats, span_id), WICK_COLUMN_EXPAND | WICK_COLUMN_UNSORTED },
  { N_ ("Shape"), WICK_COLUMN_SHAPE, G_STRUCT_OFFSET (WickTensorStats, shape_offset),
    G_STRUCT_OFFSET (WickTensorStats, rank) },
  { N_ ("Dtype"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickTensorStats, dtype), 0,
    WICK_COLUMN_UNSORTED },
  { N_ ("Elements"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickTensorStats, elements) },
  { N_ ("Non-finite"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickTensorStats, non_finite), 0, 0,
    st_non_finite, class_non_finite },
  { N_ ("RMS"), WICK_COLUMN_F64, G_STRUCT_OFFSET (WickTensorStats, rms) },
  { N_ ("Abs max"), WICK_COLUMN_F64, G_STRUCT_OFFSET (WickTensorStats, abs_max) },
  { N_ ("Mean"), WICK_COLUMN_F64, G_STRUCT_OFFSET (WickTensorStats, mean) },
};

static void
on_stat_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_TENSOR_STATS, i);
}

static void
on_filter_changed (GtkSearchEntry *entry, WickCostsPage *self)
{
  wick_costs_page_set_filter (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
wick_costs_page_dispose (GObject *object)
{
  WickCostsPage *self = WICK_COSTS_PAGE (object);
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_COSTS_PAGE);
  g_clear_pointer (&self->spans, wick_table_free);
  g_clear_pointer (&self->steps, wick_table_free);
  g_clear_pointer (&self->ops, wick_table_free);
  g_clear_pointer (&self->tensors, wick_table_free);
  g_clear_pointer (&self->stats, wick_table_free);
  g_clear_pointer (&self->costs, g_array_unref);
  g_clear_pointer (&self->step_stats, g_array_unref);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_costs_page_parent_class)->dispose (object);
}

static void wick_costs_page_refresh (WickPage *page, WickDocument *document,
                                     WickPageRefreshFlags flags);

static void
wick_costs_page_class_init (WickCostsPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_costs_page_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_costs_page_refresh;
  signals[SEARCH_NAME] = g_signal_new ("search-name", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  g_type_ensure (ADW_TYPE_BIN);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/wickprofiler/Wick/wick-costs-page.ui");
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, box);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, switcher);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, filter);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, steps_page);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, spans_slot);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, steps_slot);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, ops_slot);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, tensors_slot);
  gtk_widget_class_bind_template_child (widget_class, WickCostsPage, stats_slot);
  gtk_widget_class_bind_template_callback (widget_class, on_filter_changed);
}

/* A table of declared columns, packed into its stack page's slot. Drawn
 * (wick_table_new_drawn): a column view rebuilt its 200 rows of labels on
 * every refresh of a table with that many rows, hidden tables too, and
 * measured them in the next layout; on a live document of 9 000 ops and
 * tensors a refresh of the page took 1-2.5 s and its frame 1.5-3 s more. */
static WickTable *
declared_table (WickCostsPage *self, AdwBin *slot, WickTableRecordFunc record,
                const WickColumn *columns, guint n_columns, WickTableRowFunc on_row)
{
  WickTable *table = wick_table_new_drawn (self);
  wick_table_add_columns (table, record, document_of, columns, n_columns);
  wick_table_set_row_func (table, on_row);
  adw_bin_set_child (slot, wick_table_get_widget (table));
  return table;
}

static void
build_tables (WickCostsPage *self)
{
  self->spans = declared_table (self, self->spans_slot, cost_record, cost_columns,
                                G_N_ELEMENTS (cost_columns), on_cost_row);
  self->steps = declared_table (self, self->steps_slot, step_record, step_columns,
                                G_N_ELEMENTS (step_columns), on_step_row);
  self->ops = declared_table (self, self->ops_slot, op_record, op_columns,
                              G_N_ELEMENTS (op_columns), on_op_row);
  self->tensors = declared_table (self, self->tensors_slot, tensor_record, tensor_columns,
                                  G_N_ELEMENTS (tensor_columns), on_tensor_row);
  self->stats = declared_table (self, self->stats_slot, stat_record, stat_columns,
                                G_N_ELEMENTS (stat_columns), on_stat_row);
}

/* The switcher, the filter entry and the stack's pages come from the
 * template; the tables, their columns declared above, fill its slots. */
static void
wick_costs_page_init (WickCostsPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Costs"));
  wick_page_set_icon_name (WICK_PAGE (self), "view-list-symbolic");
  /* Each tab as wide as its own title, not five times the widest: the
   * switcher fits a 700 px window in German too. */
  gtk_box_layout_set_homogeneous (
    GTK_BOX_LAYOUT (gtk_widget_get_layout_manager (GTK_WIDGET (self->switcher))), FALSE);
  build_tables (self);
}

GtkWidget *
wick_costs_page_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_COSTS_PAGE, "selection", selection, NULL);
}

void
wick_costs_page_set_document (WickCostsPage *self, WickDocument *document)
{
  wick_page_set_document (WICK_PAGE (self), document);
}

void
wick_costs_page_document_changed (WickCostsPage *self)
{
  wick_page_document_changed (WICK_PAGE (self));
}

/* The step table, shown when the trace has steps (wick-steps.h). */
static void
show_steps (WickCostsPage *self)
{
  wick_table_set_rows (self->steps, 0);
  g_clear_pointer (&self->step_stats, g_array_unref);
  if (self->document != NULL)
    {
      g_autoptr (WickSteps) steps = wick_steps_find (self->document);
      self->step_stats = wick_steps_statistics (self->document, steps);
    }
  guint n = self->step_stats ? self->step_stats->len : 0;
  wick_table_set_rows (self->steps, n);
  gtk_stack_page_set_visible (self->steps_page, n > 0);
}

static void
show_costs (WickCostsPage *self)
{
  guint n_spans;
  const WickSpan *spans = wick_document_get_spans (self->document, &n_spans);
  self->trace_ns = 0;
  for (guint i = 0; i < n_spans; i++)
    if (spans[i].parent < 0 && !(spans[i].flags & WICK_SPAN_FLAG_HAS_PARENT_ID))
      self->trace_ns = MAX (self->trace_ns, spans[i].duration_ns);
  guint n_ops, n_tensors;
  wick_document_get_ops (self->document, &n_ops);
  wick_document_get_tensors (self->document, &n_tensors);
  wick_table_set_rows (self->spans, self->costs->len);
  wick_table_set_rows (self->ops, n_ops);
  wick_table_set_rows (self->tensors, n_tensors);
  guint n_stats;
  wick_document_get_tensor_stats (self->document, &n_stats);
  wick_table_set_rows (self->stats, n_stats);
  wick_table_sort_by (self->stats, 5, TRUE); /* non-finite first */
  show_steps (self);
}

/* The tables with @costs (the session's) and the document's records. */
static void
show_all (WickCostsPage *self, GArray *costs)
{
  wick_table_set_rows (self->spans, 0);
  g_clear_pointer (&self->costs, g_array_unref);
  self->costs = g_array_ref (costs);
  show_costs (self);
}

static void
on_costs (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (WickCostsPage) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) costs
    = wick_trace_session_costs_finish (WICK_TRACE_SESSION (source), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the page moved on: another refresh, document or none */
  if (costs != NULL && self->document != NULL)
    show_all (self, costs);
  wick_page_end_work (WICK_PAGE (self));
}

/* The costs of every span: the session's when current, else computed on a
 * worker (a live document's took seconds on this thread) while the tables
 * show what they had; the document's own records are read here. */
static void
wick_costs_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickCostsPage *self = WICK_COSTS_PAGE (page);
  WickTraceSession *session = wick_page_get_session (page);
  if (flags & WICK_PAGE_REFRESH_REPLACED)
    {
      wick_table_set_rows (self->spans, 0);
      g_clear_pointer (&self->costs, g_array_unref);
      g_set_object (&self->document, document);
    }
  if (self->document == NULL)
    {
      wick_table_set_rows (self->ops, 0);
      wick_table_set_rows (self->tensors, 0);
      wick_table_set_rows (self->stats, 0);
      show_steps (self);
      return;
    }
  GArray *costs = wick_trace_session_peek_costs (session);
  if (costs == NULL && (flags & WICK_PAGE_REFRESH_NOW))
    costs = wick_trace_session_get_costs (session);
  if (costs != NULL)
    show_all (self, costs);
  else
    wick_trace_session_costs_async (session, wick_page_begin_work (page), on_costs,
                                    g_object_ref (self));
  if (flags & WICK_PAGE_REFRESH_REPLACED)
    wick_table_sort_by (self->spans, 2, TRUE);
}

WickTable *
wick_costs_page_get_table (WickCostsPage *self, const char *name)
{
  wick_page_ensure_current (WICK_PAGE (self));
  if (g_strcmp0 (name, "steps") == 0)
    return self->steps;
  if (g_strcmp0 (name, "ops") == 0)
    return self->ops;
  if (g_strcmp0 (name, "tensors") == 0)
    return self->tensors;
  if (g_strcmp0 (name, "stats") == 0)
    return self->stats;
  return self->spans;
}

void
wick_costs_page_set_filter (WickCostsPage *self, const char *text)
{
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->filter)), text ? text : "") != 0)
    gtk_editable_set_text (GTK_EDITABLE (self->filter), text ? text : "");
  wick_table_set_filter (self->spans, text);
  wick_table_set_filter (self->steps, text);
  wick_table_set_filter (self->ops, text);
  wick_table_set_filter (self->tensors, text);
  wick_table_set_filter (self->stats, text);
}

void
wick_costs_page_show_table (WickCostsPage *self, const char *name)
{
  g_return_if_fail (WICK_IS_COSTS_PAGE (self));
  gtk_stack_set_visible_child_name (GTK_STACK (self->stack), name);
}
