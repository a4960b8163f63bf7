/* wick-costs-page.c — see wick-costs-page.h for the contract. */
#include "wick-costs-page.h"

#include <glib/gi18n.h>

#include "model/wick-span-costs.h"
#include "wick-format.h"
#include "wick-record-text.h"

struct _WickCostsPage
{
  GtkWidget parent_instance;
  GtkWidget *box;
  GtkWidget *stack;
  GtkWidget *filter;
  WickTable *spans, *ops, *tensors, *stats;
  WickSelection *selection;
  WickDocument *document;
  GArray *costs;    /* WickSpanCost */
  guint64 trace_ns; /* the longest root span: what shares are of */
  gboolean stale;   /* a growing document changed while the page was hidden */
};

G_DEFINE_FINAL_TYPE (WickCostsPage, wick_costs_page, GTK_TYPE_WIDGET)

enum
{
  SEARCH_NAME,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

/* Span costs */
static const WickSpanCost *
cost (WickCostsPage *self, guint i)
{
  return &g_array_index (self->costs, WickSpanCost, i);
}

static char *
cost_name (gpointer d, guint k, guint i)
{
  WickCostsPage *self = d;
  return g_strdup (wick_document_str (self->document, cost (self, i)->name));
}

static char *
cost_count (gpointer d, guint k, guint i)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, cost (d, i)->count);
}

static char *
cost_total (gpointer d, guint k, guint i)
{
  return wick_format_duration (cost (d, i)->total_ns);
}

static char *
cost_self (gpointer d, guint k, guint i)
{
  return wick_format_duration (cost (d, i)->self_ns);
}

static char *
cost_mean (gpointer d, guint k, guint i)
{
  return wick_format_duration ((guint64)cost (d, i)->mean_ns);
}

static char *
cost_share (gpointer d, guint k, guint i)
{
  WickCostsPage *self = d;
  if (self->trace_ns == 0)
    return g_strdup ("—");
  return g_strdup_printf ("%.1f %%", 100.0 * cost (self, i)->total_ns / self->trace_ns);
}

static char *
cost_max (gpointer d, guint k, guint i)
{
  return wick_format_duration (cost (d, i)->max_ns);
}

static int
cmp_cost_name (gpointer d, guint a, guint b)
{
  WickCostsPage *self = d;
  return g_strcmp0 (wick_document_str (self->document, cost (self, a)->name),
                    wick_document_str (self->document, cost (self, b)->name));
}

static int
cmp_cost_count (gpointer d, guint a, guint b)
{
  return CMP (cost (d, a)->count, cost (d, b)->count);
}
static int
cmp_cost_total (gpointer d, guint a, guint b)
{
  return CMP (cost (d, a)->total_ns, cost (d, b)->total_ns);
}
static int
cmp_cost_self (gpointer d, guint a, guint b)
{
  return CMP (cost (d, a)->self_ns, cost (d, b)->self_ns);
}
static int
cmp_cost_mean (gpointer d, guint a, guint b)
{
  return CMP (cost (d, a)->mean_ns, cost (d, b)->mean_ns);
}
static int
cmp_cost_max (gpointer d, guint a, guint b)
{
  return CMP (cost (d, a)->max_ns, cost (d, b)->max_ns);
}

static void
on_cost_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  if (!activated)
    return;
  g_signal_emit (self, signals[SEARCH_NAME], 0,
                 wick_document_str (self->document, cost (self, i)->name));
}

/* Ops */
static const WickOp *
op (WickCostsPage *self, guint i)
{
  return &wick_document_get_ops (self->document, NULL)[i];
}

static const char *
span_name (WickCostsPage *self, gint32 span, WickStr span_id)
{
  if (span >= 0)
    return wick_document_str (self->document,
                              wick_document_get_spans (self->document, NULL)[span].name);
  return wick_document_str (self->document, span_id);
}

static char *
op_name (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, op (s, i)->op_name));
}
static char *
op_span (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (span_name (s, op (s, i)->span, op (s, i)->span_id));
}
static char *
op_shape (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return wick_format_shape (s->document, op (s, i)->shape_offset, op (s, i)->rank);
}
static char *
op_dtype (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, op (s, i)->dtype));
}
static char *
op_device (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, op (s, i)->device));
}
static char *
op_duration (gpointer d, guint k, guint i)
{
  return wick_format_duration (op (d, i)->duration_ns);
}
static char *
op_bytes (gpointer d, guint k, guint i)
{
  return wick_format_bytes (op (d, i)->output_dense_bytes);
}

static int
cmp_op_name (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, op (s, a)->op_name),
                    wick_document_str (s->document, op (s, b)->op_name));
}
static int
cmp_op_span (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (span_name (s, op (s, a)->span, op (s, a)->span_id),
                    span_name (s, op (s, b)->span, op (s, b)->span_id));
}
static int
cmp_op_dtype (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, op (s, a)->dtype),
                    wick_document_str (s->document, op (s, b)->dtype));
}
static int
cmp_op_device (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, op (s, a)->device),
                    wick_document_str (s->document, op (s, b)->device));
}
static int
cmp_op_duration (gpointer d, guint a, guint b)
{
  return CMP (op (d, a)->duration_ns, op (d, b)->duration_ns);
}
static int
cmp_op_bytes (gpointer d, guint a, guint b)
{
  return CMP (op (d, a)->output_dense_bytes, op (d, b)->output_dense_bytes);
}

static void
on_op_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (self->selection, WICK_RECORD_OP, i);
}

/* Tensors */
static const WickTensor *
tensor (WickCostsPage *self, guint i)
{
  return &wick_document_get_tensors (self->document, NULL)[i];
}

static char *
t_id (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, tensor (s, i)->tensor_id));
}
static char *
t_label (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, tensor (s, i)->label));
}
static char *
t_category (gpointer d, guint k, guint i)
{
  return g_strdup (wick_category_name (tensor (d, i)->category));
}
static char *
t_shape (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return wick_format_shape (s->document, tensor (s, i)->shape_offset, tensor (s, i)->rank);
}
static char *
t_dtype (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, tensor (s, i)->dtype));
}
static char *
t_device (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, tensor (s, i)->device));
}
static char *
t_bytes (gpointer d, guint k, guint i)
{
  return wick_format_bytes (tensor (d, i)->dense_bytes);
}
static char *
t_span (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (span_name (s, tensor (s, i)->span, tensor (s, i)->span_id));
}

static int
cmp_t_id (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, tensor (s, a)->tensor_id),
                    wick_document_str (s->document, tensor (s, b)->tensor_id));
}
static int
cmp_t_label (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, tensor (s, a)->label),
                    wick_document_str (s->document, tensor (s, b)->label));
}
static int
cmp_t_category (gpointer d, guint a, guint b)
{
  return CMP (tensor (d, a)->category, tensor (d, b)->category);
}
static int
cmp_t_dtype (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, tensor (s, a)->dtype),
                    wick_document_str (s->document, tensor (s, b)->dtype));
}
static int
cmp_t_device (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, tensor (s, a)->device),
                    wick_document_str (s->document, tensor (s, b)->device));
}
static int
cmp_t_bytes (gpointer d, guint a, guint b)
{
  return CMP (tensor (d, a)->dense_bytes, tensor (d, b)->dense_bytes);
}
static int
cmp_t_span (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (span_name (s, tensor (s, a)->span, tensor (s, a)->span_id),
                    span_name (s, tensor (s, b)->span, tensor (s, b)->span_id));
}

static void
on_tensor_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (self->selection, WICK_RECORD_TENSOR, i);
}

/* Tensor stats */
static const WickTensorStats *
stat (WickCostsPage *self, guint i)
{
  return &wick_document_get_tensor_stats (self->document, NULL)[i];
}

static char *
st_label (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, stat (s, i)->label));
}
static char *
st_span (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (span_name (s, stat (s, i)->span, stat (s, i)->span_id));
}
static char *
st_shape (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return wick_format_shape (s->document, stat (s, i)->shape_offset, stat (s, i)->rank);
}
static char *
st_dtype (gpointer d, guint k, guint i)
{
  WickCostsPage *s = d;
  return g_strdup (wick_document_str (s->document, stat (s, i)->dtype));
}
static char *
st_elements (gpointer d, guint k, guint i)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, stat (d, i)->elements);
}
static char *
st_non_finite (gpointer d, guint k, guint i)
{
  guint64 n = stat (d, i)->non_finite;
  return n ? g_strdup_printf ("⚠ %" G_GUINT64_FORMAT, n) : g_strdup ("0");
}
static char *
st_rms (gpointer d, guint k, guint i)
{
  return g_strdup_printf ("%.4g", stat (d, i)->rms);
}
static char *
st_abs_max (gpointer d, guint k, guint i)
{
  return g_strdup_printf ("%.4g", stat (d, i)->abs_max);
}
static char *
st_mean (gpointer d, guint k, guint i)
{
  return g_strdup_printf ("%.4g", stat (d, i)->mean);
}

static int
cmp_st_label (gpointer d, guint a, guint b)
{
  WickCostsPage *s = d;
  return g_strcmp0 (wick_document_str (s->document, stat (s, a)->label),
                    wick_document_str (s->document, stat (s, b)->label));
}
static int
cmp_st_elements (gpointer d, guint a, guint b)
{
  return CMP (stat (d, a)->elements, stat (d, b)->elements);
}
static int
cmp_st_non_finite (gpointer d, guint a, guint b)
{
  return CMP (stat (d, a)->non_finite, stat (d, b)->non_finite);
}
static int
cmp_st_rms (gpointer d, guint a, guint b)
{
  return CMP (stat (d, a)->rms, stat (d, b)->rms);
}
static int
cmp_st_abs_max (gpointer d, guint a, guint b)
{
  return CMP (stat (d, a)->abs_max, stat (d, b)->abs_max);
}
static int
cmp_st_mean (gpointer d, guint a, guint b)
{
  return CMP (stat (d, a)->mean, stat (d, b)->mean);
}

static void
on_stat_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickCostsPage *self = d;
  wick_selection_set_record (self->selection, WICK_RECORD_TENSOR_STATS, i);
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
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->spans, wick_table_free);
  g_clear_pointer (&self->ops, wick_table_free);
  g_clear_pointer (&self->tensors, wick_table_free);
  g_clear_pointer (&self->stats, wick_table_free);
  g_clear_pointer (&self->costs, g_array_unref);
  g_clear_object (&self->selection);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_costs_page_parent_class)->dispose (object);
}

static void wick_costs_page_map (GtkWidget *widget);

static void
wick_costs_page_class_init (WickCostsPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = wick_costs_page_dispose;
  GTK_WIDGET_CLASS (klass)->map = wick_costs_page_map;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[SEARCH_NAME] = g_signal_new ("search-name", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static const char *
class_non_finite (gpointer d, guint k, guint i)
{
  return stat (d, i)->non_finite ? "error" : NULL;
}

static void
build_tables (WickCostsPage *self)
{
  self->spans = wick_table_new (self);
  wick_table_add_column (self->spans, _ ("Span name"), cost_name, cmp_cost_name, TRUE, FALSE);
  wick_table_add_column (self->spans, _ ("Count"), cost_count, cmp_cost_count, FALSE, TRUE);
  wick_table_add_column (self->spans, _ ("Total"), cost_total, cmp_cost_total, FALSE, TRUE);
  wick_table_add_column (self->spans, _ ("Self"), cost_self, cmp_cost_self, FALSE, TRUE);
  wick_table_add_column (self->spans, _ ("Mean"), cost_mean, cmp_cost_mean, FALSE, TRUE);
  wick_table_add_column (self->spans, _ ("Max"), cost_max, cmp_cost_max, FALSE, TRUE);
  wick_table_add_column (self->spans, _ ("Share of trace"), cost_share, cmp_cost_total, FALSE,
                         TRUE);
  wick_table_set_row_func (self->spans, on_cost_row);

  self->ops = wick_table_new (self);
  wick_table_add_column (self->ops, _ ("Op"), op_name, cmp_op_name, TRUE, FALSE);
  wick_table_add_column (self->ops, _ ("Span"), op_span, cmp_op_span, TRUE, FALSE);
  wick_table_add_column (self->ops, _ ("Shape"), op_shape, NULL, FALSE, FALSE);
  wick_table_add_column (self->ops, _ ("Dtype"), op_dtype, cmp_op_dtype, FALSE, FALSE);
  wick_table_add_column (self->ops, _ ("Device"), op_device, cmp_op_device, FALSE, FALSE);
  wick_table_add_column (self->ops, _ ("Duration"), op_duration, cmp_op_duration, FALSE, TRUE);
  wick_table_add_column (self->ops, _ ("Output bytes"), op_bytes, cmp_op_bytes, FALSE, TRUE);
  wick_table_set_row_func (self->ops, on_op_row);

  self->tensors = wick_table_new (self);
  wick_table_add_column (self->tensors, _ ("Tensor"), t_id, cmp_t_id, FALSE, FALSE);
  wick_table_add_column (self->tensors, _ ("Label"), t_label, cmp_t_label, TRUE, FALSE);
  wick_table_add_column (self->tensors, _ ("Span"), t_span, cmp_t_span, TRUE, FALSE);
  wick_table_add_column (self->tensors, _ ("Category"), t_category, cmp_t_category, FALSE, FALSE);
  wick_table_add_column (self->tensors, _ ("Shape"), t_shape, NULL, FALSE, FALSE);
  wick_table_add_column (self->tensors, _ ("Dtype"), t_dtype, cmp_t_dtype, FALSE, FALSE);
  wick_table_add_column (self->tensors, _ ("Device"), t_device, cmp_t_device, FALSE, FALSE);
  wick_table_add_column (self->tensors, _ ("Bytes"), t_bytes, cmp_t_bytes, FALSE, TRUE);
  wick_table_set_row_func (self->tensors, on_tensor_row);

  self->stats = wick_table_new (self);
  wick_table_add_column (self->stats, _ ("Label"), st_label, cmp_st_label, TRUE, FALSE);
  wick_table_add_column (self->stats, _ ("Span"), st_span, NULL, TRUE, FALSE);
  wick_table_add_column (self->stats, _ ("Shape"), st_shape, NULL, FALSE, FALSE);
  wick_table_add_column (self->stats, _ ("Dtype"), st_dtype, NULL, FALSE, FALSE);
  wick_table_add_column (self->stats, _ ("Elements"), st_elements, cmp_st_elements, FALSE, TRUE);
  wick_table_add_column (self->stats, _ ("Non-finite"), st_non_finite, cmp_st_non_finite, FALSE,
                         TRUE);
  wick_table_set_class_func (self->stats, class_non_finite);
  wick_table_add_column (self->stats, _ ("RMS"), st_rms, cmp_st_rms, FALSE, TRUE);
  wick_table_add_column (self->stats, _ ("Abs max"), st_abs_max, cmp_st_abs_max, FALSE, TRUE);
  wick_table_add_column (self->stats, _ ("Mean"), st_mean, cmp_st_mean, FALSE, TRUE);
  wick_table_set_row_func (self->stats, on_stat_row);
}

static void
wick_costs_page_init (WickCostsPage *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  build_tables (self);
  self->stack = gtk_stack_new ();
  gtk_stack_add_titled (GTK_STACK (self->stack), wick_table_get_widget (self->spans), "spans",
                        _ ("Span costs"));
  gtk_stack_add_titled (GTK_STACK (self->stack), wick_table_get_widget (self->ops), "ops",
                        _ ("Ops"));
  gtk_stack_add_titled (GTK_STACK (self->stack), wick_table_get_widget (self->tensors), "tensors",
                        _ ("Tensors"));
  gtk_stack_add_titled (GTK_STACK (self->stack), wick_table_get_widget (self->stats), "stats",
                        _ ("Tensor stats"));

  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (bar, 12);
  gtk_widget_set_margin_end (bar, 12);
  gtk_widget_set_margin_top (bar, 8);
  gtk_widget_set_margin_bottom (bar, 8);
  GtkWidget *switcher = gtk_stack_switcher_new ();
  gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (switcher), GTK_STACK (self->stack));
  gtk_box_append (GTK_BOX (bar), switcher);
  self->filter = gtk_search_entry_new ();
  g_object_set (self->filter, "placeholder-text", _ ("Filter rows"), NULL);
  gtk_widget_set_hexpand (self->filter, TRUE);
  gtk_widget_set_halign (self->filter, GTK_ALIGN_END);
  gtk_widget_set_size_request (self->filter, 260, -1);
  g_signal_connect (self->filter, "search-changed", G_CALLBACK (on_filter_changed), self);
  gtk_box_append (GTK_BOX (bar), self->filter);
  gtk_box_append (GTK_BOX (self->box), bar);
  gtk_box_append (GTK_BOX (self->box), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  gtk_box_append (GTK_BOX (self->box), self->stack);
}

GtkWidget *
wick_costs_page_new (WickSelection *selection)
{
  WickCostsPage *self = g_object_new (WICK_TYPE_COSTS_PAGE, NULL);
  self->selection = g_object_ref (selection);
  return GTK_WIDGET (self);
}

void
wick_costs_page_set_document (WickCostsPage *self, WickDocument *document)
{
  wick_costs_page_set_document_full (self, document, NULL);
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
}

void
wick_costs_page_set_document_full (WickCostsPage *self, WickDocument *document, GArray *costs)
{
  g_set_object (&self->document, document);
  if (costs == NULL || document == NULL)
    {
      if (costs)
        g_array_unref (costs);
      wick_costs_page_document_changed (self);
    }
  else
    {
      wick_table_set_rows (self->spans, 0);
      g_clear_pointer (&self->costs, g_array_unref);
      self->costs = costs;
      show_costs (self);
    }
  wick_table_sort_by (self->spans, 2, TRUE);
}

static void refresh (WickCostsPage *self);

/* Rebuilding the tables relayouts every row: a growing (live) document does
 * it only while the page is on screen, and once when it is shown again
 * (measured: two thirds of the live window's main thread went here with
 * the page hidden, docs/performance.md "Live view"). */
void
wick_costs_page_document_changed (WickCostsPage *self)
{
  if (self->document != NULL && !wick_document_is_finished (self->document)
      && !gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->stale = TRUE;
      return;
    }
  refresh (self);
}

static void
wick_costs_page_map (GtkWidget *widget)
{
  WickCostsPage *self = WICK_COSTS_PAGE (widget);
  GTK_WIDGET_CLASS (wick_costs_page_parent_class)->map (widget);
  if (self->stale)
    refresh (self);
}

static void
refresh (WickCostsPage *self)
{
  self->stale = FALSE;
  wick_table_set_rows (self->spans, 0);
  g_clear_pointer (&self->costs, g_array_unref);
  if (self->document == NULL)
    {
      wick_table_set_rows (self->ops, 0);
      wick_table_set_rows (self->tensors, 0);
      wick_table_set_rows (self->stats, 0);
      return;
    }
  g_autoptr (WickSpanIndex) index = wick_span_index_new (self->document);
  self->costs = wick_span_costs_by_name (self->document, index);
  show_costs (self);
}

WickTable *
wick_costs_page_get_table (WickCostsPage *self, const char *name)
{
  if (self->stale)
    refresh (self);
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
  wick_table_set_filter (self->ops, text);
  wick_table_set_filter (self->tensors, text);
  wick_table_set_filter (self->stats, text);
}
