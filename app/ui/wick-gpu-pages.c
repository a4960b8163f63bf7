/* wick-gpu-pages.c — see wick-gpu-pages.h for the contract. */
#include "config.h"

#include "wick-gpu-pages.h"
#include "wick-gpu-pages-private.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "model/wick-gpu-analysis.h"
#include "wick-format.h"

/* Both pages are for a document with GPU work. */
static gboolean
gpu_page_wanted (WickPage *page, WickDocument *document)
{
  return wick_trace_session_document_has_gpu_work (document);
}

/* ---- Kernels and Operators ------------------------------------------------ */

struct _WickGpuTablePage
{
  WickPage parent_instance;
  WickGpuTableKind kind;
  GtkWidget *box;
  GtkWidget *filter;
  GtkWidget *position;
  GtkWidget *slot; /* AdwBin holding the table's widget */
  WickTable *table;
  WickDocument *document;          /* the one the table shows */
  const WickGpuAnalysis *analysis; /* the document's, NULL without one */
};

G_DEFINE_FINAL_TYPE (WickGpuTablePage, wick_gpu_table_page, WICK_TYPE_PAGE)

static void table_page_build (WickGpuTablePage *self);

/* The table is built when the page is shown (wick-page.h), not when the
 * document is set; it is drawn (wick_table_new_drawn): a first frame of the
 * rows on screen, 25-30 ms on 1 M kernels where GTK 4.8's column view made
 * 200 rows of cells in 300-400 ms (docs/performance.md, "GPU pages"). */
static void
wick_gpu_table_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickGpuTablePage *self = WICK_GPU_TABLE_PAGE (page);
  /* the old rows read the old analysis: none until the new table */
  if (self->table)
    wick_table_set_rows (self->table, 0);
  g_set_object (&self->document, document);
  self->analysis
    = document ? wick_trace_session_get_gpu_analysis (wick_page_get_session (page)) : NULL;
  if (flags & WICK_PAGE_REFRESH_REPLACED)
    wick_gpu_table_page_set_position (self, -1, 0);
  if (document != NULL)
    table_page_build (self);
}

enum
{
  INSTANCES,
  STEP,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

static WickDocument *
page_document (gpointer d)
{
  return ((WickGpuTablePage *)d)->document;
}

static const void *
kernel_record (gpointer d, guint i)
{
  return &g_array_index (((WickGpuTablePage *)d)->analysis->kernels, WickGpuKernel, i);
}

static const void *
operator_record (gpointer d, guint i)
{
  return &g_array_index (((WickGpuTablePage *)d)->analysis->operators, WickGpuOperator, i);
}

static const WickColumn kernel_columns[] = {
  { N_ ("Kernel"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickGpuKernel, name), 0, WICK_COLUMN_EXPAND },
  { N_ ("Count"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickGpuKernel, count) },
  { N_ ("Total"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuKernel, total_ns) },
  { N_ ("Mean"), WICK_COLUMN_DURATION_F64, G_STRUCT_OFFSET (WickGpuKernel, mean_ns) },
  { N_ ("Min"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuKernel, min_ns) },
  { N_ ("Max"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuKernel, max_ns) },
  { N_ ("Share of GPU time"), WICK_COLUMN_SHARE, G_STRUCT_OFFSET (WickGpuKernel, share) },
  /* present only when the trace has them (Kineto's launch args) */
  { N_ ("Grid"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickGpuKernel, grid) },
  { N_ ("Block"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickGpuKernel, block) },
  { N_ ("Registers"), WICK_COLUMN_I64, G_STRUCT_OFFSET (WickGpuKernel, registers) },
};
#define N_KERNEL_BASE_COLUMNS 7

static const WickColumn operator_columns[] = {
  { N_ ("Operator"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickGpuOperator, name), 0,
    WICK_COLUMN_EXPAND },
  { N_ ("Count"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickGpuOperator, count) },
  { N_ ("CPU self"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuOperator, cpu_self_ns) },
  { N_ ("CPU total"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuOperator, cpu_total_ns) },
  { N_ ("GPU time"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuOperator, gpu_ns) },
  /* present only when recorded (record_shapes) */
  { N_ ("Input shapes"), WICK_COLUMN_STR, G_STRUCT_OFFSET (WickGpuOperator, shapes), 0,
    WICK_COLUMN_EXPAND },
};
#define N_OPERATOR_BASE_COLUMNS 5

static int
compare_refs (gconstpointer pa, gconstpointer pb, gpointer data)
{
  WickTracks *tracks = data;
  const WickEventRef *a = pa, *b = pb;
  guint64 sa = wick_tracks_event_start (tracks, *a), sb = wick_tracks_event_start (tracks, *b);
  if (sa != sb)
    return sa < sb ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

GArray *
wick_gpu_table_page_get_instances (WickGpuTablePage *self, guint index)
{
  GArray *refs = g_array_new (FALSE, FALSE, sizeof (WickEventRef));
  const WickGpuAnalysis *a = self->analysis;
  if (a == NULL)
    return refs;
  WickTracks *tracks = wick_document_get_tracks (self->document);
  if (self->kind == WICK_GPU_TABLE_KERNELS)
    {
      for (guint i = 0; i < a->n_device; i++)
        if (a->kernel_of_device[i] == (gint32)index)
          {
            WickEventRef ref = { WICK_EVENT_DEVICE, i };
            g_array_append_val (refs, ref);
          }
    }
  else
    for (guint i = 0; i < a->n_spans; i++)
      if (a->operator_of_span[i] == (gint32)index)
        {
          WickEventRef ref = { WICK_EVENT_SLICE, i };
          g_array_append_val (refs, ref);
        }
  /* device slices are by track; spans by thread: both by start here */
  g_array_sort_with_data (refs, compare_refs, tracks);
  return refs;
}

static void
on_row (gpointer d, guint kind, guint index, gboolean activated)
{
  WickGpuTablePage *self = d;
  g_autoptr (GArray) refs = wick_gpu_table_page_get_instances (self, index);
  g_signal_emit (self, signals[INSTANCES], 0, refs, activated);
}

static void
copy_text (WickGpuTablePage *self, gboolean selected)
{
  if (self->table == NULL)
    return;
  g_autofree char *tsv = wick_table_to_tsv (self->table, selected);
  if (tsv != NULL)
    gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), tsv);
}

static void
action_copy_row (GtkWidget *widget, const char *name, GVariant *parameter)
{
  copy_text (WICK_GPU_TABLE_PAGE (widget), TRUE);
}

static void
action_copy_all (GtkWidget *widget, const char *name, GVariant *parameter)
{
  copy_text (WICK_GPU_TABLE_PAGE (widget), FALSE);
}

static void
on_step_clicked (GtkButton *button, WickGpuTablePage *self)
{
  int direction = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "wick-direction"));
  g_signal_emit (self, signals[STEP], 0, direction);
}

static void
on_filter_changed (GtkSearchEntry *entry, WickGpuTablePage *self)
{
  wick_gpu_table_page_set_filter (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
wick_gpu_table_page_dispose (GObject *object)
{
  WickGpuTablePage *self = WICK_GPU_TABLE_PAGE (object);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->table, wick_table_free);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_gpu_table_page_parent_class)->dispose (object);
}

static void
wick_gpu_table_page_class_init (WickGpuTablePageClass *klass)
{
  WICK_PAGE_CLASS (klass)->wanted = gpu_page_wanted;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_gpu_table_page_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_gpu_table_page_refresh;
  /* (GArray of WickEventRef by start, activated): a row's slices */
  signals[INSTANCES]
    = g_signal_new ("instances", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                    G_TYPE_NONE, 2, G_TYPE_ARRAY, G_TYPE_BOOLEAN);
  /* (direction): previous (-1) or next (1) instance */
  signals[STEP] = g_signal_new ("step", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  gtk_widget_class_install_action (widget_class, "gpu-table.copy-row", NULL, action_copy_row);
  gtk_widget_class_install_action (widget_class, "gpu-table.copy-all", NULL, action_copy_all);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK,
                                       "gpu-table.copy-row", NULL);
}

static GtkWidget *
step_button (WickGpuTablePage *self, const char *icon, const char *tooltip, int direction)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);
  gtk_widget_set_tooltip_text (button, tooltip);
  g_object_set_data (G_OBJECT (button), "wick-direction", GINT_TO_POINTER (direction));
  g_signal_connect (button, "clicked", G_CALLBACK (on_step_clicked), self);
  return button;
}

static void
wick_gpu_table_page_init (WickGpuTablePage *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (bar, 6);
  gtk_widget_set_margin_end (bar, 6);
  gtk_widget_set_margin_top (bar, 6);
  gtk_widget_set_margin_bottom (bar, 6);
  self->filter = gtk_search_entry_new ();
  gtk_widget_set_hexpand (self->filter, TRUE);
  g_signal_connect (self->filter, "search-changed", G_CALLBACK (on_filter_changed), self);
  gtk_box_append (GTK_BOX (bar), self->filter);
  self->position = gtk_label_new (NULL);
  gtk_widget_add_css_class (self->position, "dim-label");
  gtk_widget_add_css_class (self->position, "numeric");
  gtk_box_append (GTK_BOX (bar), self->position);
  GtkWidget *linked = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class (linked, "linked");
  gtk_box_append (GTK_BOX (linked), step_button (self, "go-up-symbolic",
                                                 _ ("Previous instance on the timeline"), -1));
  gtk_box_append (GTK_BOX (linked),
                  step_button (self, "go-down-symbolic", _ ("Next instance on the timeline"), 1));
  gtk_box_append (GTK_BOX (bar), linked);
  g_autoptr (GMenu) menu = g_menu_new ();
  g_menu_append (menu, _ ("_Copy Row as TSV"), "gpu-table.copy-row");
  g_menu_append (menu, _ ("Copy _All Rows as TSV"), "gpu-table.copy-all");
  GtkWidget *menu_button = gtk_menu_button_new ();
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (menu_button), "edit-copy-symbolic");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (menu_button), G_MENU_MODEL (menu));
  gtk_widget_set_tooltip_text (menu_button, _ ("Copy rows as tab-separated values"));
  gtk_box_append (GTK_BOX (bar), menu_button);
  gtk_box_append (GTK_BOX (self->box), bar);
  self->slot = adw_bin_new ();
  gtk_widget_set_vexpand (self->slot, TRUE);
  gtk_box_append (GTK_BOX (self->box), self->slot);
}

GtkWidget *
wick_gpu_table_page_new (WickSelection *selection, WickGpuTableKind kind)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  WickGpuTablePage *self = g_object_new (WICK_TYPE_GPU_TABLE_PAGE, "selection", selection, NULL);
  self->kind = kind;
  wick_page_set_title (WICK_PAGE (self),
                       kind == WICK_GPU_TABLE_KERNELS ? _ ("Kernels") : _ ("Operators"));
  wick_page_set_icon_name (WICK_PAGE (self), kind == WICK_GPU_TABLE_KERNELS
                                               ? "system-run-symbolic"
                                               : "view-list-bullet-symbolic");
  gtk_editable_set_text (GTK_EDITABLE (self->filter), "");
  g_object_set (self->filter, "placeholder-text",
                kind == WICK_GPU_TABLE_KERNELS ? _ ("Filter kernels") : _ ("Filter operators"),
                NULL);
  return GTK_WIDGET (self);
}

void
wick_gpu_table_page_set_document (WickGpuTablePage *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_GPU_TABLE_PAGE (self));
  wick_trace_session_set_document (wick_page_ensure_session (WICK_PAGE (self)), document);
}

static void
table_page_build (WickGpuTablePage *self)
{
  adw_bin_set_child (ADW_BIN (self->slot), NULL);
  g_clear_pointer (&self->table, wick_table_free);
  self->table = wick_table_new_drawn (self);
  guint n_rows = 0;
  if (self->kind == WICK_GPU_TABLE_KERNELS)
    {
      guint n_columns = N_KERNEL_BASE_COLUMNS;
      GArray *kernels = self->analysis ? self->analysis->kernels : NULL;
      for (guint i = 0; kernels && i < kernels->len; i++)
        {
          const WickGpuKernel *k = &g_array_index (kernels, WickGpuKernel, i);
          if (k->grid || k->block || k->registers >= 0)
            n_columns = G_N_ELEMENTS (kernel_columns);
        }
      wick_table_add_columns (self->table, kernel_record, page_document, kernel_columns, n_columns);
      n_rows = kernels ? kernels->len : 0;
    }
  else
    {
      guint n_columns = N_OPERATOR_BASE_COLUMNS;
      GArray *operators = self->analysis ? self->analysis->operators : NULL;
      for (guint i = 0; operators && i < operators->len; i++)
        if (g_array_index (operators, WickGpuOperator, i).shapes)
          n_columns = G_N_ELEMENTS (operator_columns);
      wick_table_add_columns (self->table, operator_record, page_document, operator_columns,
                              n_columns);
      n_rows = operators ? operators->len : 0;
    }
  wick_table_set_row_func (self->table, on_row);
  wick_table_set_rows (self->table, n_rows);
  /* the analysis's order: kernels by total, operators by GPU time */
  wick_table_sort_by (self->table, self->kind == WICK_GPU_TABLE_KERNELS ? 2 : 4, TRUE);
  const char *filter = gtk_editable_get_text (GTK_EDITABLE (self->filter));
  wick_table_set_filter (self->table, filter);
  adw_bin_set_child (ADW_BIN (self->slot), wick_table_get_widget (self->table));
}

WickTable *
wick_gpu_table_page_get_table (WickGpuTablePage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->table;
}

void
wick_gpu_table_page_set_filter (WickGpuTablePage *self, const char *text)
{
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->filter)), text ? text : "") != 0)
    gtk_editable_set_text (GTK_EDITABLE (self->filter), text ? text : "");
  if (self->table)
    wick_table_set_filter (self->table, text);
}

void
wick_gpu_table_page_set_position (WickGpuTablePage *self, gint current, guint n)
{
  g_autofree char *text = NULL;
  if (n > 0 && current >= 0)
    text = g_strdup_printf (_ ("%d of %u on the timeline"), current + 1, n);
  gtk_label_set_text (GTK_LABEL (self->position), text ? text : "");
}

const char *
wick_gpu_table_page_get_position_text (WickGpuTablePage *self)
{
  return gtk_label_get_text (GTK_LABEL (self->position));
}

/* ---- Overview ------------------------------------------------------------- */

/* A step's time in five parts adding up to its duration. */
typedef struct
{
  WickGpuStep step;
  guint64 idle_only_ns; /* GPU idle with no host operator or runtime call running */
} StepRow;

enum
{
  PART_COMPUTE,
  PART_COMM,
  PART_MEMCPY,
  PART_CPU_ONLY,
  PART_IDLE,
  N_PARTS
};

static const char *const part_names[N_PARTS]
  = { N_ ("Compute"), N_ ("Communication"), N_ ("Memcpy"), N_ ("CPU-only"), N_ ("Idle") };
/* compute blue, communication orange, memcpy green, CPU-only purple, idle grey */
static const double part_rgb[N_PARTS][3] = {
  { 0.21, 0.52, 0.89 }, { 0.90, 0.50, 0.12 }, { 0.18, 0.65, 0.35 },
  { 0.57, 0.38, 0.75 }, { 0.70, 0.70, 0.70 },
};

static guint64
step_part (const StepRow *r, guint part)
{
  switch (part)
    {
      case PART_COMPUTE:
        return r->step.compute_ns;
      case PART_COMM:
        return r->step.comm_ns;
      case PART_MEMCPY:
        return r->step.memcpy_ns;
      case PART_CPU_ONLY:
        return r->step.cpu_only_ns;
      default:
        return r->idle_only_ns;
    }
}

struct _WickGpuOverviewPage
{
  WickPage parent_instance;
  GtkWidget *box;
  GtkWidget *devices_slot, *steps_slot;
  GtkWidget *launches;
  GtkWidget *waiting; /* the launch-bound stretches: a label */
  GtkWidget *longest; /* and a button per longest stretch */
  GtkWidget *chart;
  GtkWidget *steps_heading;
  WickTable *steps, *devices;
  WickDocument *document; /* the one shown */
  const WickGpuAnalysis *analysis;
  GArray *rows; /* StepRow */
};

G_DEFINE_FINAL_TYPE (WickGpuOverviewPage, wick_gpu_overview_page, WICK_TYPE_PAGE)

static void overview_build (WickGpuOverviewPage *self);

/* Built when shown, as the tables. */
static void
wick_gpu_overview_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickGpuOverviewPage *self = WICK_GPU_OVERVIEW_PAGE (page);
  if (self->steps)
    wick_table_set_rows (self->steps, 0);
  if (self->devices)
    wick_table_set_rows (self->devices, 0);
  g_clear_pointer (&self->rows, g_array_unref);
  g_set_object (&self->document, document);
  self->analysis
    = document ? wick_trace_session_get_gpu_analysis (wick_page_get_session (page)) : NULL;
  if (document != NULL)
    overview_build (self);
}

static WickDocument *
overview_document (gpointer d)
{
  return ((WickGpuOverviewPage *)d)->document;
}

static const void *
step_row_record (gpointer d, guint i)
{
  return &g_array_index (((WickGpuOverviewPage *)d)->rows, StepRow, i);
}

static char *
step_name_text (gpointer d, guint k, guint i)
{
  WickGpuOverviewPage *self = d;
  const StepRow *r = step_row_record (d, i);
  const char *name = wick_document_str (self->document, r->step.name);
  return r->step.slow ? g_strdup_printf (_ ("%s · slow"), name) : g_strdup (name);
}

static const char *
step_name_style (gpointer d, guint k, guint i)
{
  const StepRow *r = step_row_record (d, i);
  return r->step.slow ? "warning" : NULL;
}

static char *
step_start_text (gpointer d, guint k, guint i)
{
  WickGpuOverviewPage *self = d;
  const StepRow *first = step_row_record (self, 0), *r = step_row_record (self, i);
  return wick_format_duration (r->step.start_ns - MIN (first->step.start_ns, r->step.start_ns));
}

static char *
step_busy_share (gpointer d, guint k, guint i)
{
  const StepRow *r = step_row_record (d, i);
  return wick_format_share ((double)r->step.gpu_busy_ns, (double)r->step.dur_ns);
}

static const WickColumn step_row_columns[] = {
  { N_ ("Step"), WICK_COLUMN_STR, G_STRUCT_OFFSET (StepRow, step.name), 0, WICK_COLUMN_EXPAND,
    step_name_text, step_name_style },
  /* from the first step's start */
  { N_ ("Start"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.start_ns), 0, 0,
    step_start_text },
  { N_ ("Duration"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.dur_ns) },
  { N_ ("Compute"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.compute_ns) },
  { N_ ("Communication"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.comm_ns) },
  { N_ ("Memcpy"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.memcpy_ns) },
  { N_ ("CPU-only"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.cpu_only_ns) },
  { N_ ("Idle"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, idle_only_ns) },
  { N_ ("GPU idle"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.idle_ns) },
  { N_ ("GPU busy"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (StepRow, step.gpu_busy_ns), 0, 0,
    step_busy_share },
};

static void
on_step_row (gpointer d, guint k, guint i, gboolean activated)
{
  WickGpuOverviewPage *self = d;
  wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_SPAN,
                             ((const StepRow *)step_row_record (self, i))->step.span);
}

static const void *
device_record (gpointer d, guint i)
{
  return &g_array_index (((WickGpuOverviewPage *)d)->analysis->devices, WickGpuDevice, i);
}

static char *
device_name_text (gpointer d, guint k, guint i)
{
  return g_strdup (((const WickGpuDevice *)device_record (d, i))->device);
}

static int
device_name_compare (gpointer d, guint a, guint b)
{
  return g_strcmp0 (((const WickGpuDevice *)device_record (d, a))->device,
                    ((const WickGpuDevice *)device_record (d, b))->device);
}

static const WickColumn device_columns[] = {
  { N_ ("Busy"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuDevice, busy_ns) },
  { N_ ("Kernels"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuDevice, kernel_ns) },
  { N_ ("Memcpy"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuDevice, memcpy_ns) },
  { N_ ("Memset"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuDevice, memset_ns) },
  { N_ ("Communication"), WICK_COLUMN_DURATION, G_STRUCT_OFFSET (WickGpuDevice, comm_ns) },
  { N_ ("Kernel count"), WICK_COLUMN_COUNT, G_STRUCT_OFFSET (WickGpuDevice, n_kernels) },
};

/* The chart's geometry: bars left to right in step order. */
#define CHART_LEFT 64.0
#define CHART_RIGHT 12.0
#define CHART_TOP 28.0
#define CHART_BOTTOM 22.0

gint
wick_gpu_overview_page_step_at (WickGpuOverviewPage *self, double x)
{
  guint n = self->rows ? self->rows->len : 0;
  double width = gtk_widget_get_width (self->chart) - CHART_LEFT - CHART_RIGHT;
  if (n == 0 || width <= 0 || x < CHART_LEFT)
    return -1;
  guint i = (guint)((x - CHART_LEFT) / (width / n));
  return i < n ? (gint)i : -1;
}

static void
draw_chart (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer data)
{
  WickGpuOverviewPage *self = data;
  guint n = self->rows ? self->rows->len : 0;
  GdkRGBA fg;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS /* gtk_widget_get_color is GTK 4.10 */
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), NULL);

  /* legend */
  double lx = CHART_LEFT;
  for (guint p = 0; p < N_PARTS; p++)
    {
      cairo_set_source_rgb (cr, part_rgb[p][0], part_rgb[p][1], part_rgb[p][2]);
      cairo_rectangle (cr, lx, 6, 12, 12);
      cairo_fill (cr);
      pango_layout_set_text (layout, _ (part_names[p]), -1);
      int tw, th;
      pango_layout_get_pixel_size (layout, &tw, &th);
      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_move_to (cr, lx + 16, 12 - th / 2.0);
      pango_cairo_show_layout (cr, layout);
      lx += 16 + tw + 18;
    }
  pango_layout_set_text (layout, _ ("▼ slow step (≥ 1.25 × the median)"), -1);
  {
    int tw, th;
    pango_layout_get_pixel_size (layout, &tw, &th);
    cairo_set_source_rgb (cr, 0.85, 0.2, 0.15);
    cairo_move_to (cr, lx, 12 - th / 2.0);
    pango_cairo_show_layout (cr, layout);
  }
  if (n == 0)
    {
      g_object_unref (layout);
      return;
    }
  guint64 max = 1;
  for (guint i = 0; i < n; i++)
    max = MAX (max, g_array_index (self->rows, StepRow, i).step.dur_ns);
  double plot_w = w - CHART_LEFT - CHART_RIGHT, plot_h = h - CHART_TOP - CHART_BOTTOM - 10;
  double slot = plot_w / n, bar = MAX (1.0, MIN (slot * 0.75, 48.0));
  /* axis: 0 and the longest step */
  gdk_cairo_set_source_rgba (cr, &fg);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, CHART_LEFT - 4, h - CHART_BOTTOM + 0.5);
  cairo_line_to (cr, w - CHART_RIGHT, h - CHART_BOTTOM + 0.5);
  cairo_stroke (cr);
  for (guint t = 0; t <= 2; t++)
    {
      double y = h - CHART_BOTTOM - plot_h * t / 2.0;
      g_autofree char *label = wick_format_duration (max * t / 2);
      pango_layout_set_text (layout, label, -1);
      int tw, th;
      pango_layout_get_pixel_size (layout, &tw, &th);
      cairo_move_to (cr, CHART_LEFT - 8 - tw, y - th / 2.0);
      pango_cairo_show_layout (cr, layout);
      cairo_save (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.15);
      cairo_move_to (cr, CHART_LEFT, floor (y) + 0.5);
      cairo_line_to (cr, w - CHART_RIGHT, floor (y) + 0.5);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
  guint label_every = MAX (1u, (guint)ceil (40.0 / slot));
  for (guint i = 0; i < n; i++)
    {
      const StepRow *r = &g_array_index (self->rows, StepRow, i);
      double x = CHART_LEFT + slot * i + (slot - bar) / 2;
      double y = h - CHART_BOTTOM;
      for (guint p = 0; p < N_PARTS; p++)
        {
          double part_h = plot_h * (double)step_part (r, p) / (double)max;
          cairo_set_source_rgb (cr, part_rgb[p][0], part_rgb[p][1], part_rgb[p][2]);
          cairo_rectangle (cr, x, y - part_h, bar, part_h);
          cairo_fill (cr);
          y -= part_h;
        }
      if (r->step.slow)
        {
          cairo_set_source_rgb (cr, 0.85, 0.2, 0.15);
          double cx = x + bar / 2, tip = y - 3;
          cairo_move_to (cr, cx, tip);
          cairo_line_to (cr, cx - 5, tip - 8);
          cairo_line_to (cr, cx + 5, tip - 8);
          cairo_close_path (cr);
          cairo_fill (cr);
        }
      if (i % label_every == 0)
        {
          /* the step's number (ProfilerStep#N: N) */
          const char *name = wick_document_str (self->document, r->step.name);
          const char *hash = name ? strrchr (name, '#') : NULL;
          pango_layout_set_text (layout, hash ? hash + 1 : name ? name : "", -1);
          int tw, th;
          pango_layout_get_pixel_size (layout, &tw, &th);
          gdk_cairo_set_source_rgba (cr, &fg);
          cairo_move_to (cr, x + bar / 2 - tw / 2.0, h - CHART_BOTTOM + 3);
          pango_cairo_show_layout (cr, layout);
        }
    }
  g_object_unref (layout);
}

static void
on_chart_pressed (GtkGestureClick *gesture, int n_press, double x, double y,
                  WickGpuOverviewPage *self)
{
  gint i = wick_gpu_overview_page_step_at (self, x);
  if (i >= 0)
    {
      wick_table_select (self->steps, 0, (guint)i);
      wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_SPAN,
                                 g_array_index (self->rows, StepRow, i).step.span);
    }
}

static gboolean
on_chart_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  WickGpuOverviewPage *self)
{
  gint i = wick_gpu_overview_page_step_at (self, x);
  if (i < 0)
    return FALSE;
  const StepRow *r = &g_array_index (self->rows, StepRow, i);
  GString *text = g_string_new (wick_document_str (self->document, r->step.name));
  g_autofree char *dur = wick_format_duration (r->step.dur_ns);
  g_string_append_printf (text, " · %s", dur);
  for (guint p = 0; p < N_PARTS; p++)
    {
      g_autofree char *part = wick_format_duration (step_part (r, p));
      g_autofree char *share = wick_format_share ((double)step_part (r, p), (double)r->step.dur_ns);
      g_string_append_printf (text, "\n%s: %s (%s)", _ (part_names[p]), part, share);
    }
  gtk_tooltip_set_text (tooltip, text->str);
  g_string_free (text, TRUE);
  return TRUE;
}

static GtkWidget *
heading (const char *text)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  return label;
}

/* A paragraph of the page: left-aligned, wrapped, selectable for copying
 * but not a tab stop. */
static GtkWidget *
paragraph (void)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_set_focusable (label, FALSE);
  return label;
}

static void
wick_gpu_overview_page_dispose (GObject *object)
{
  WickGpuOverviewPage *self = WICK_GPU_OVERVIEW_PAGE (object);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->steps, wick_table_free);
  g_clear_pointer (&self->devices, wick_table_free);
  g_clear_pointer (&self->rows, g_array_unref);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_gpu_overview_page_parent_class)->dispose (object);
}

static void
wick_gpu_overview_page_class_init (WickGpuOverviewPageClass *klass)
{
  WICK_PAGE_CLASS (klass)->wanted = gpu_page_wanted;
  G_OBJECT_CLASS (klass)->dispose = wick_gpu_overview_page_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_gpu_overview_page_refresh;
}

static void
wick_gpu_overview_page_init (WickGpuOverviewPage *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (self->box, 12);
  gtk_widget_set_margin_end (self->box, 12);
  gtk_widget_set_margin_top (self->box, 12);
  gtk_widget_set_margin_bottom (self->box, 12);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Overview"));
  wick_page_set_icon_name (WICK_PAGE (self), "power-profile-performance-symbolic");

  gtk_box_append (GTK_BOX (self->box), heading (_ ("GPU time by device")));
  self->devices_slot = adw_bin_new ();
  gtk_box_append (GTK_BOX (self->box), self->devices_slot);
  self->launches = paragraph ();
  gtk_box_append (GTK_BOX (self->box), self->launches);
  self->waiting = paragraph ();
  gtk_box_append (GTK_BOX (self->box), self->waiting);
  self->longest = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (self->box), self->longest);

  self->steps_heading = heading (_ ("Step time"));
  gtk_widget_set_margin_top (self->steps_heading, 6);
  gtk_box_append (GTK_BOX (self->box), self->steps_heading);
  self->chart = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->chart), 220);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->chart), draw_chart, self, NULL);
  gtk_widget_set_has_tooltip (self->chart, TRUE);
  g_signal_connect (self->chart, "query-tooltip", G_CALLBACK (on_chart_tooltip), self);
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (on_chart_pressed), self);
  gtk_widget_add_controller (self->chart, GTK_EVENT_CONTROLLER (click));
  gtk_box_append (GTK_BOX (self->box), self->chart);
  self->steps_slot = adw_bin_new ();
  gtk_widget_set_vexpand (self->steps_slot, TRUE);
  gtk_box_append (GTK_BOX (self->box), self->steps_slot);
}

GtkWidget *
wick_gpu_overview_page_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_GPU_OVERVIEW_PAGE, "selection", selection, NULL);
}

static char *
count_text (guint64 n)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

static char *
signed_duration (gint64 ns)
{
  g_autofree char *d = wick_format_duration (ns < 0 ? (guint64) - (ns + 1) + 1 : (guint64)ns);
  return g_strdup_printf ("%s%s", ns < 0 ? "−" : "", d);
}

static char *
launches_text (const WickGpuAnalysis *a)
{
  const WickGpuLaunches *l = &a->launches;
  g_autofree char *flows = count_text (l->flows);
  g_autofree char *calls = count_text (l->to_kernel);
  g_autofree char *unmatched = count_text (l->unmatched);
  g_autofree char *p50 = signed_duration (l->delay_p50_ns);
  g_autofree char *p99 = signed_duration (l->delay_p99_ns);
  g_autofree char *short_kernels = count_text (l->short_kernels);
  g_autofree char *graph = count_text (l->graph_kernels);
  /* the numbers: work intervals with a launch, the runtime calls that
   * launched them, work intervals with none, the launch delay's p50 and
   * p99, kernels under 10 µs, kernels of CUDA graph replays */
  return g_strdup_printf (_ ("Launches: %s kernels, copies and fills reach their launch (from %s "
                             "runtime calls); %s have no launch in the trace. Launch to GPU "
                             "start: p50 %s, p99 %s. %s kernels shorter than 10 µs; %s launched "
                             "by CUDA graphs."),
                          flows, calls, unmatched, p50, p99, short_kernels, graph);
}

static char *
waiting_text (const WickGpuAnalysis *a)
{
  g_autofree char *n = count_text (a->n_stretches);
  g_autofree char *total = wick_format_duration (a->stretch_ns);
  g_autofree char *share = wick_format_share ((double)a->stretch_ns, (double)a->gpu_span_ns);
  g_autofree char *span = wick_format_duration (a->gpu_span_ns);
  /* stretches, their total time, its share of the next figure, the time
   * from the first GPU work to the last */
  return g_strdup_printf (_ ("GPU waiting on launches: %s stretches where a stream ran dry "
                             "before its next launch, %s in all (%s of the %s from the first GPU "
                             "work to the last). The longest:"),
                          n, total, share, span);
}

/* A stretch's button: selects its range and shows it with as much again
 * either side. */
static void
on_stretch_clicked (GtkButton *button, gpointer data)
{
  WickGpuOverviewPage *self = data;
  guint i = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "wick-stretch"));
  if (self->analysis == NULL || i >= self->analysis->longest->len)
    return;
  const WickGpuStretch *st = &g_array_index (self->analysis->longest, WickGpuStretch, i);
  WickSelection *selection = wick_page_get_selection (WICK_PAGE (self));
  guint64 len = st->end_ns - st->start_ns;
  wick_selection_set_range (selection, st->start_ns, st->end_ns);
  wick_selection_set_visible (selection, st->start_ns > len ? st->start_ns - len : 0,
                              st->end_ns + len);
}

static char *
stretch_text (WickGpuOverviewPage *self, const WickGpuStretch *st)
{
  WickTracks *tracks = wick_document_get_tracks (self->document);
  guint n_tracks, n_spans;
  const WickTrack *track_list = wick_tracks_get_tracks (tracks, &n_tracks);
  const WickSpan *spans = wick_document_get_spans (self->document, &n_spans);
  g_autofree char *dur = wick_format_duration (st->end_ns - st->start_ns);
  g_autofree char *at = wick_format_duration (st->start_ns);
  const char *stream = st->track < n_tracks && track_list[st->track].name
                         ? wick_document_str (self->document, track_list[st->track].name)
                         : "";
  const char *launch
    = st->launch < n_spans ? wick_document_str (self->document, spans[st->launch].name) : "";
  if (st->op < n_spans)
    /* length, start, stream, runtime call, operator */
    return g_strdup_printf (_ ("%s at %s on %s, waiting on %s in %s"), dur, at, stream, launch,
                            wick_document_str (self->document, spans[st->op].name));
  /* length, start, stream, runtime call */
  return g_strdup_printf (_ ("%s at %s on %s, waiting on %s"), dur, at, stream, launch);
}

static void
waiting_build (WickGpuOverviewPage *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->longest)) != NULL)
    gtk_box_remove (GTK_BOX (self->longest), child);
  gboolean any = self->analysis != NULL && self->analysis->n_stretches > 0;
  gtk_widget_set_visible (self->waiting, any);
  gtk_widget_set_visible (self->longest, any);
  if (!any)
    return;
  g_autofree char *text = waiting_text (self->analysis);
  gtk_label_set_text (GTK_LABEL (self->waiting), text);
  for (guint i = 0; i < MIN (self->analysis->longest->len, 5); i++)
    {
      g_autofree char *label
        = stretch_text (self, &g_array_index (self->analysis->longest, WickGpuStretch, i));
      GtkWidget *button = gtk_button_new_with_label (label);
      gtk_widget_add_css_class (button, "flat");
      gtk_widget_set_halign (button, GTK_ALIGN_START);
      GtkWidget *l = gtk_button_get_child (GTK_BUTTON (button));
      if (GTK_IS_LABEL (l))
        {
          gtk_label_set_xalign (GTK_LABEL (l), 0);
          gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
        }
      gtk_widget_set_tooltip_text (button, _ ("Select this stretch on the timeline"));
      g_object_set_data (G_OBJECT (button), "wick-stretch", GUINT_TO_POINTER (i));
      g_signal_connect (button, "clicked", G_CALLBACK (on_stretch_clicked), self);
      gtk_box_append (GTK_BOX (self->longest), button);
    }
}

void
wick_gpu_overview_page_set_document (WickGpuOverviewPage *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_GPU_OVERVIEW_PAGE (self));
  wick_trace_session_set_document (wick_page_ensure_session (WICK_PAGE (self)), document);
}

static void
overview_build (WickGpuOverviewPage *self)
{
  adw_bin_set_child (ADW_BIN (self->steps_slot), NULL);
  adw_bin_set_child (ADW_BIN (self->devices_slot), NULL);
  g_clear_pointer (&self->steps, wick_table_free);
  g_clear_pointer (&self->devices, wick_table_free);
  g_clear_pointer (&self->rows, g_array_unref);
  self->rows = g_array_new (FALSE, TRUE, sizeof (StepRow));
  for (guint i = 0; self->analysis && i < self->analysis->steps->len; i++)
    {
      StepRow r = { g_array_index (self->analysis->steps, WickGpuStep, i), 0 };
      r.idle_only_ns = r.step.idle_ns - MIN (r.step.cpu_only_ns, r.step.idle_ns);
      g_array_append_val (self->rows, r);
    }

  self->devices = wick_table_new_drawn (self);
  wick_table_add_column (self->devices, _ ("Device"), device_name_text, device_name_compare, TRUE,
                         FALSE);
  wick_table_add_columns (self->devices, device_record, overview_document, device_columns,
                          G_N_ELEMENTS (device_columns));
  wick_table_set_rows (self->devices, self->analysis ? self->analysis->devices->len : 0);
  /* a few rows: as tall as they are (up to 6), the steps take the rest */
  GtkWidget *scrolled = wick_table_get_widget (self->devices);
  gtk_widget_set_vexpand (scrolled, FALSE);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scrolled), TRUE);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scrolled), 180);
  adw_bin_set_child (ADW_BIN (self->devices_slot), scrolled);

  self->steps = wick_table_new_drawn (self);
  wick_table_add_columns (self->steps, step_row_record, overview_document, step_row_columns,
                          G_N_ELEMENTS (step_row_columns));
  wick_table_set_row_func (self->steps, on_step_row);
  wick_table_set_rows (self->steps, self->rows->len);
  adw_bin_set_child (ADW_BIN (self->steps_slot), wick_table_get_widget (self->steps));
  gtk_widget_set_visible (self->chart, self->rows->len > 0);
  gtk_widget_set_visible (self->steps_slot, self->rows->len > 0);
  gtk_label_set_text (GTK_LABEL (self->steps_heading),
                      self->rows->len > 0
                        ? _ ("Step time")
                        : _ ("Step time: the trace has no ProfilerStep#N slices (record with "
                             "torch.profiler.schedule and prof.step())."));

  g_autofree char *launches = self->analysis ? launches_text (self->analysis) : NULL;
  gtk_label_set_text (GTK_LABEL (self->launches), launches ? launches : "");
  waiting_build (self);
  gtk_widget_queue_draw (self->chart);
}

WickTable *
wick_gpu_overview_page_get_table (WickGpuOverviewPage *self, const char *name)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return g_strcmp0 (name, "devices") == 0 ? self->devices : self->steps;
}

const char *
wick_gpu_overview_page_get_launches_text (WickGpuOverviewPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return gtk_label_get_text (GTK_LABEL (self->launches));
}

const char *
wick_gpu_overview_page_get_waiting_text (WickGpuOverviewPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return gtk_label_get_text (GTK_LABEL (self->waiting));
}

GtkWidget *
wick_gpu_overview_page_get_stretch_button (WickGpuOverviewPage *self, guint i)
{
  wick_page_ensure_current (WICK_PAGE (self));
  GtkWidget *c = gtk_widget_get_first_child (self->longest);
  while (c != NULL && i-- > 0)
    c = gtk_widget_get_next_sibling (c);
  return c;
}
