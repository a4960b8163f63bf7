/* test-app-pages.c — the table pages built from GtkBuilder templates
 * (data/ui/wick-health-page.ui, wick-coverage-page.ui, wick-costs-page.ui):
 * each page's template children are bound, of the expected types, carry the
 * properties the .ui gives them, show the page's state, have its tables
 * packed where the template leaves room, and go away with the page. A
 * broken .ui (a renamed id, a lost callback, a dropped slot) fails here.
 * Suite: app, under Xvfb. */
#include "config.h"

#include <adwaita.h>

#include "app-test-ui.h"
#include "app-test-util.h"
#include "ui/wick-costs-page.h"
#include "ui/wick-costs-page-private.h"
#include "ui/wick-coverage-page.h"
#include "ui/wick-coverage-page-private.h"
#include "ui/wick-health-page.h"
#include "ui/wick-health-page-private.h"
#include "ui/wick-table.h"
#include "ui/wick-table-private.h"

static GObject *
template_child (gpointer page, GType type, const char *name, GType expected)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (page), type, name);
  if (child == NULL)
    g_error ("%s: template child \"%s\" is not bound", g_type_name (type), name);
  if (!g_type_is_a (G_OBJECT_TYPE (child), expected))
    g_error ("%s: template child \"%s\" is a %s, not a %s", g_type_name (type), name,
             G_OBJECT_TYPE_NAME (child), g_type_name (expected));
  return child;
}

/* The page owns the template root; its last child is the page's table. */
static GtkWidget *
assert_root_box (gpointer page, GType type, WickTable *table)
{
  GtkWidget *box = GTK_WIDGET (template_child (page, type, "box", GTK_TYPE_BOX));
  g_assert_true (gtk_widget_get_parent (box) == GTK_WIDGET (page));
  g_assert_true (gtk_widget_get_first_child (GTK_WIDGET (page)) == box);
  g_assert_cmpint (gtk_orientable_get_orientation (GTK_ORIENTABLE (box)), ==,
                   GTK_ORIENTATION_VERTICAL);
  if (table)
    g_assert_true (gtk_widget_get_last_child (box) == wick_table_get_widget (table));
  return box;
}

/* A selectable label that never takes the focus (so it is not fully selected). */
static void
assert_selectable_unfocused (GObject *label)
{
  g_assert_true (gtk_label_get_selectable (GTK_LABEL (label)));
  g_assert_false (gtk_widget_get_focusable (GTK_WIDGET (label)));
  g_assert_cmpfloat (gtk_label_get_xalign (GTK_LABEL (label)), ==, 0);
}

/* Disposing the page releases its template tree: nothing of it outlives it. */
static void
assert_released (GtkWidget *page, GType type, const char *const *names)
{
  GObject *children[8] = { NULL };
  guint n = 0;
  for (; names[n]; n++)
    {
      g_assert_cmpuint (n, <, G_N_ELEMENTS (children));
      children[n] = gtk_widget_get_template_child (page, type, names[n]);
      g_object_add_weak_pointer (children[n], (gpointer *)&children[n]);
    }
  g_object_unref (page);
  for (guint i = 0; i < n; i++)
    if (children[i] != NULL)
      g_error ("%s: template child \"%s\" outlived its page", g_type_name (type), names[i]);
}

static void
test_health_page (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *page = g_object_ref_sink (wick_health_page_new (selection));
  WickHealthPage *health = WICK_HEALTH_PAGE (page);
  GType type = WICK_TYPE_HEALTH_PAGE;
  assert_root_box (page, type, wick_health_page_get_table (health));

  GObject *icon = template_child (page, type, "icon", GTK_TYPE_IMAGE);
  g_assert_cmpint (gtk_image_get_pixel_size (GTK_IMAGE (icon)), ==, 32);
  g_assert_cmpstr (gtk_image_get_icon_name (GTK_IMAGE (icon)), ==, "emblem-ok-symbolic");
  GObject *title = template_child (page, type, "title", GTK_TYPE_LABEL);
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (title), "title-3"));
  GObject *subtitle = template_child (page, type, "subtitle", GTK_TYPE_LABEL);
  g_assert_true (gtk_label_get_wrap (GTK_LABEL (subtitle)));
  assert_selectable_unfocused (subtitle);

  /* The bound widgets are the ones the page writes its state into. */
  g_autoptr (WickDocument) document = app_test_load_example ();
  wick_health_page_set_document (health, document);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (title)), ==, "0 errors, 0 warnings");
  g_assert_cmpstr (wick_health_page_get_title (health), ==, "0 errors, 0 warnings");
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (title), "success"));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (subtitle)), ==,
                   "The trace is structurally valid.");
  g_assert_cmpstr (gtk_image_get_icon_name (GTK_IMAGE (icon)), ==, "emblem-ok-symbolic");

  const char *const names[] = { "box", "icon", "title", "subtitle", NULL };
  assert_released (page, type, names);
}

static void
test_coverage_page (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *page = g_object_ref_sink (wick_coverage_page_new (selection));
  WickCoveragePage *coverage = WICK_COVERAGE_PAGE (page);
  GType type = WICK_TYPE_COVERAGE_PAGE;
  assert_root_box (page, type, wick_coverage_page_get_table (coverage));

  const char *const labels[] = { "verdict", "reason", "digest" };
  for (guint i = 0; i < G_N_ELEMENTS (labels); i++)
    {
      GObject *label = template_child (page, type, labels[i], GTK_TYPE_LABEL);
      g_assert_true (gtk_label_get_wrap (GTK_LABEL (label)));
      g_assert_cmpint (gtk_label_get_wrap_mode (GTK_LABEL (label)), ==, PANGO_WRAP_WORD_CHAR);
      assert_selectable_unfocused (label);
    }
  GObject *verdict = template_child (page, type, "verdict", GTK_TYPE_LABEL);
  GObject *digest = template_child (page, type, "digest", GTK_TYPE_LABEL);
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (verdict), "title-3"));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (digest), "caption"));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (digest), "monospace"));

  g_autoptr (WickDocument) document = app_test_load_example ();
  wick_coverage_page_set_document (coverage, document);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (verdict)), ==, "Gradient coverage: complete");
  g_assert_cmpstr (wick_coverage_page_get_verdict_text (coverage), ==,
                   "Gradient coverage: complete");
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (verdict), "success"));
  g_assert_true (
    g_str_has_prefix (gtk_label_get_text (GTK_LABEL (digest)), "Manifest digest matches: sha256:"));
  /* three families, expanded into their nine entries */
  g_assert_cmpuint (wick_table_get_n_shown (wick_coverage_page_get_table (coverage)), ==, 3 + 9);

  const char *const names[] = { "box", "verdict", "reason", "digest", NULL };
  assert_released (page, type, names);
}

static gboolean
ops_filtered (gpointer table)
{
  return wick_table_get_n_shown (table) == 8 * 8; /* adamw_update: 8 parameters, 8 steps */
}

static void
test_costs_page (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *page = g_object_ref_sink (wick_costs_page_new (selection));
  WickCostsPage *costs = WICK_COSTS_PAGE (page);
  GType type = WICK_TYPE_COSTS_PAGE;
  GtkWidget *box = assert_root_box (page, type, NULL);

  GObject *stack = template_child (page, type, "stack", GTK_TYPE_STACK);
  g_assert_true (gtk_widget_get_last_child (box) == GTK_WIDGET (stack));
  GObject *switcher = template_child (page, type, "switcher", GTK_TYPE_STACK_SWITCHER);
  g_assert_true (gtk_stack_switcher_get_stack (GTK_STACK_SWITCHER (switcher)) == GTK_STACK (stack));
  GObject *filter = template_child (page, type, "filter", GTK_TYPE_SEARCH_ENTRY);
  g_autofree char *placeholder = NULL;
  g_object_get (filter, "placeholder-text", &placeholder, NULL);
  g_assert_cmpstr (placeholder, ==, "Filter rows");

  /* The stack's pages, in the switcher's order, each slot holding its table. */
  const struct
  {
    const char *name, *title, *slot;
  } pages[] = {
    { "spans", "Span costs", "spans_slot" },
    { "steps", "Steps", "steps_slot" },
    { "ops", "Ops", "ops_slot" },
    { "tensors", "Tensors", "tensors_slot" },
    { "stats", "Tensor stats", "stats_slot" },
  };
  GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (stack));
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++, child = gtk_widget_get_next_sibling (child))
    {
      g_assert_nonnull (child);
      GObject *slot = template_child (page, type, pages[i].slot, ADW_TYPE_BIN);
      g_assert_true (child == GTK_WIDGET (slot));
      GtkStackPage *stack_page = gtk_stack_get_page (GTK_STACK (stack), child);
      g_assert_cmpstr (gtk_stack_page_get_name (stack_page), ==, pages[i].name);
      g_assert_cmpstr (gtk_stack_page_get_title (stack_page), ==, pages[i].title);
      g_assert_true (adw_bin_get_child (ADW_BIN (slot))
                     == wick_table_get_widget (wick_costs_page_get_table (costs, pages[i].name)));
    }
  g_assert_null (child);

  /* The steps page is shown only when the trace has steps. */
  GObject *steps_page = template_child (page, type, "steps_page", GTK_TYPE_STACK_PAGE);
  g_assert_false (gtk_stack_page_get_visible (GTK_STACK_PAGE (steps_page)));
  g_autoptr (WickDocument) document = app_test_load_example ();
  wick_costs_page_set_document (costs, document);
  g_assert_true (gtk_stack_page_get_visible (GTK_STACK_PAGE (steps_page)));

  /* Typing in the filter entry filters the tables (the template's callback). */
  WickTable *ops = wick_costs_page_get_table (costs, "ops");
  guint n_ops;
  wick_document_get_ops (document, &n_ops);
  g_assert_cmpuint (wick_table_get_n_shown (ops), ==, n_ops);
  gtk_editable_set_text (GTK_EDITABLE (filter), "adamw_update");
  app_test_wait_until (ops_filtered, ops, 10000, "the filter entry to filter the ops");
  wick_costs_page_set_filter (costs, NULL);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (filter)), ==, "");
  g_assert_cmpuint (wick_table_get_n_shown (ops), ==, n_ops);

  const char *const names[]
    = { "box", "switcher", "stack", "filter", "steps_page", "spans_slot", "stats_slot", NULL };
  assert_released (page, type, names);
}

static void
feed_span (WickDocument *document, guint i)
{
  g_autofree char *lines = g_strdup_printf (
    "{\"kind\":\"span_start\",\"id\":\"c%u\",\"parent_id\":\"r\",\"name\":\"name%u\","
    "\"start_ns\":%u,\"span_kind\":\"op\"}\n"
    "{\"kind\":\"span_end\",\"id\":\"c%u\",\"duration_ns\":10}",
    i, i, 100 + i * 100, i);
  g_auto (GStrv) split = g_strsplit (lines, "\n", -1);
  for (guint k = 0; split[k] != NULL; k++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_true (wick_document_feed_line (document, split[k], strlen (split[k]), &error));
      g_assert_no_error (error);
    }
}

typedef struct
{
  WickTable *table;
  guint rows;
} RowsWanted;

static gboolean
has_rows (gpointer data)
{
  RowsWanted *wanted = data;
  return wick_table_get_n_shown (wanted->table) == wanted->rows;
}

/* A growing (live) document on the Costs page on screen: a change is not
 * refreshed in the caller (it took seconds a time with a large live
 * document, four times a second), but from the main loop, and the next one
 * waits at least 250 ms after the last refresh ended. */
static void
test_costs_page_live (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *page = wick_costs_page_new (selection);
  WickCostsPage *costs = WICK_COSTS_PAGE (page);
  GtkWidget *window = app_test_present_page (page, 800, 600, "the costs page");

  g_autoptr (WickDocument) document = app_test_live_document ();
  feed_span (document, 0);
  g_assert_false (wick_document_is_finished (document));
  WickTable *spans = wick_costs_page_get_table (costs, "spans");
  wick_costs_page_set_document (costs, document);
  RowsWanted wanted = { spans, 2 }; /* root, name0 */
  app_test_wait_until (has_rows, &wanted, 10000, "the first refresh");
  gint64 refreshed = g_get_monotonic_time ();

  feed_span (document, 1);
  wick_costs_page_document_changed (costs);
  g_assert_cmpuint (wick_table_get_n_shown (spans), ==, 2); /* not in the caller */
  wanted.rows = 3;
  app_test_wait_until (has_rows, &wanted, 10000, "the throttled refresh");
  g_assert_cmpint (g_get_monotonic_time () - refreshed, >=, 250 * 1000);

  gtk_window_destroy (GTK_WINDOW (window));
}

static guint
count_labels (GtkWidget *widget)
{
  guint n = GTK_IS_LABEL (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    n += count_labels (c);
  return n;
}

/* The Costs page's tables are drawn: a refresh with thousands of ops does
 * not build widgets per row (a column view kept 200 rows of labels and
 * rebuilt them on every refresh, 1-2.5 s on a live document of 9 000 ops,
 * and measured them in the next frame). */
static void
test_costs_page_rows_drawn (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *page = wick_costs_page_new (selection);
  WickCostsPage *costs = WICK_COSTS_PAGE (page);
  GtkWidget *window = app_test_present_page (page, 800, 600, "the costs page");
  guint labels_empty = count_labels (page);

  g_autoptr (WickDocument) document = app_test_live_document ();
  g_autoptr (GError) error = NULL;
  enum { N_OPS = 2000 };
  for (guint i = 0; i < N_OPS; i++)
    {
      g_autofree char *op = g_strdup_printf (
        "{\"kind\":\"op\",\"span_id\":\"r\",\"op_name\":\"op%u\",\"inputs\":[\"in\"],"
        "\"output\":\"out\",\"shape\":[2],\"dtype\":\"f32\",\"device\":\"cpu\","
        "\"duration_ns\":%u,\"timestamp_ns\":%u,\"input_dense_bytes\":8}",
        i, 1 + i % 97, 10 + i);
      g_assert_true (wick_document_feed_line (document, op, strlen (op), &error));
    }
  g_assert_no_error (error);
  wick_costs_page_set_document (costs, document);
  wick_costs_page_show_table (costs, "ops");
  WickTable *ops = wick_costs_page_get_table (costs, "ops");
  g_assert_cmpuint (wick_table_get_n_shown (ops), ==, N_OPS);
  app_test_wait_drawn (page, 10000, "the ops table");
  /* every table drawn; no label came with the rows */
  static const char *const tables[] = { "spans", "steps", "ops", "tensors", "stats" };
  for (guint t = 0; t < G_N_ELEMENTS (tables); t++)
    g_assert_nonnull (wick_table_get_drawn (wick_costs_page_get_table (costs, tables[t])));
  g_assert_cmpuint (count_labels (page), ==, labels_empty);
  /* the stack is sized by the table shown: the hidden ones are not
   * measured at every refresh */
  GObject *stack = template_child (page, WICK_TYPE_COSTS_PAGE, "stack", GTK_TYPE_STACK);
  g_assert_false (gtk_stack_get_hhomogeneous (GTK_STACK (stack)));
  g_assert_false (gtk_stack_get_vhomogeneous (GTK_STACK (stack)));

  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  if (!app_test_ui_init_display (&argc, &argv))
    return 0;
  g_test_add_func ("/pages/health-template", test_health_page);
  g_test_add_func ("/pages/coverage-template", test_coverage_page);
  g_test_add_func ("/pages/costs-template", test_costs_page);
  g_test_add_func ("/pages/costs-live-refresh", test_costs_page_live);
  g_test_add_func ("/pages/costs-rows-drawn", test_costs_page_rows_drawn);
  return g_test_run ();
}
