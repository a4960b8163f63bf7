/* wick-coverage-page.c — see wick-coverage-page.h for the contract; the static widget tree is
 * the template data/ui/wick-coverage-page.ui. */
#include "wick-coverage-page.h"
#include "wick-coverage-page-private.h"

#include <glib/gi18n.h>

#include "model/wick-gradient-report.h"
#include "wick-record-text.h"

struct _WickCoveragePage
{
  WickPage parent_instance;
  GtkWidget *box;
  GtkWidget *verdict;
  GtkWidget *reason;
  GtkWidget *digest;
  WickTable *table;
  WickDocument *document; /* the one the report is of */
  WickGradientReport *report;
};

G_DEFINE_FINAL_TYPE (WickCoveragePage, wick_coverage_page, WICK_TYPE_PAGE)

static const WickGradientFamilyRow *
family (WickCoveragePage *self, guint index)
{
  return &g_array_index (self->report->families, WickGradientFamilyRow, index);
}

static const WickGradientEntryRow *
entry (WickCoveragePage *self, guint index)
{
  return &g_array_index (self->report->entries, WickGradientEntryRow, index);
}

static char *
text_name (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind == 0)
    return g_strdup (wick_document_str (self->document, family (self, index)->family));
  const WickGradientEntryRow *e = entry (self, index);
  return g_strdup (wick_document_str (self->document, e->key));
}

static char *
text_root (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  return kind == 0 ? NULL
                   : g_strdup (wick_document_str (self->document, entry (self, index)->root));
}

static char *
text_state (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind == 0)
    return g_strdup (wick_gradient_expectation_name (family (self, index)->expectation));
  const WickGradientEntryRow *e = entry (self, index);
  if (!e->observed)
    return g_strdup (_ ("not recorded"));
  if (e->observed_count > 1)
    return g_strdup_printf (_ ("%s (×%u)"), wick_gradient_state_name (e->state),
                            e->observed_count);
  return g_strdup (wick_gradient_state_name (e->state));
}

static char *
text_norm (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind == 0)
    return g_strdup_printf (_ ("min present %llu"),
                            (unsigned long long)family (self, index)->min_present);
  const WickGradientEntryRow *e = entry (self, index);
  return e->observed && e->has_norm ? g_strdup_printf ("%.6g", e->norm) : g_strdup ("—");
}

static char *
text_counts (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind != 0)
    return NULL;
  const WickGradientFamilyRow *f = family (self, index);
  return g_strdup_printf (g_dngettext (NULL, "%u member · %u present · %u attached",
                                       "%u members · %u present · %u attached", f->members),
                          f->members, f->present, f->attached);
}

static char *
text_verdict (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  return kind == 0 ? g_strdup (wick_family_verdict_name (family (self, index)->verdict)) : NULL;
}

static const char *
class_state (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind == 0)
    return NULL;
  const WickGradientEntryRow *e = entry (self, index);
  if (!e->observed || e->observed_count > 1 || e->state == WICK_GRADIENT_NON_FINITE)
    return "error";
  return e->state == WICK_GRADIENT_PRESENT ? "success" : "warning";
}

static const char *
class_verdict (gpointer data, guint kind, guint index)
{
  WickCoveragePage *self = data;
  if (kind != 0)
    return NULL;
  const WickGradientFamilyRow *row = family (self, index);
  /* "pending": a run in progress may still capture the family's gradients */
  return row->ok ? "success" : g_strcmp0 (row->verdict, "pending") == 0 ? "accent" : "error";
}

static GArray *
children (gpointer data, guint index)
{
  WickCoveragePage *self = data;
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  WickStr name = family (self, index)->family;
  for (guint i = 0; i < self->report->entries->len; i++)
    if (entry (self, i)->family == name)
      g_array_append_val (out, i);
  return out;
}

static void
on_row (gpointer data, guint kind, guint index, gboolean activated)
{
  WickCoveragePage *self = data;
  if (kind == 1 && entry (self, index)->gradient >= 0)
    wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), WICK_RECORD_GRADIENT,
                               entry (self, index)->gradient);
}

static void
update_header (WickCoveragePage *self)
{
  WickGradientReport *r = self->report;
  static const char *css[] = { "success", "warning", "error", "dim-label" };
  for (guint i = 0; i < G_N_ELEMENTS (css); i++)
    gtk_widget_remove_css_class (self->verdict, css[i]);
  g_autofree char *verdict
    = g_strdup_printf (_ ("Gradient coverage: %s"), wick_coverage_verdict_name (r->verdict));
  gtk_label_set_text (GTK_LABEL (self->verdict), verdict);
  gtk_widget_add_css_class (self->verdict, css[MIN (r->verdict, 3)]);
  gtk_label_set_text (GTK_LABEL (self->reason), r->reason ? r->reason : "");
  if (!r->has_contract)
    {
      g_autofree char *text = g_strdup_printf (
        g_dngettext (NULL, "No gradient contract declared; %u gradient record.",
                     "No gradient contract declared; %u gradient records.", r->n_gradients),
        r->n_gradients);
      gtk_label_set_text (GTK_LABEL (self->digest), text);
      return;
    }
  g_autofree char *digest = NULL;
  if (r->digest_matches)
    digest = g_strdup_printf (_ ("Manifest digest matches: %s"), r->computed_sha256);
  else
    digest = g_strdup_printf (_ ("Manifest digest does not match: declared %s, recomputed %s"),
                              r->declared_sha256 ? r->declared_sha256 : "—",
                              r->computed_sha256 ? r->computed_sha256 : "—");
  if (r->contract_error)
    {
      g_autofree char *more = g_strdup_printf ("%s\n%s", digest, r->contract_error);
      gtk_label_set_text (GTK_LABEL (self->digest), more);
    }
  else
    gtk_label_set_text (GTK_LABEL (self->digest), digest);
}

static void
wick_coverage_page_dispose (GObject *object)
{
  WickCoveragePage *self = WICK_COVERAGE_PAGE (object);
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_COVERAGE_PAGE);
  g_clear_pointer (&self->table, wick_table_free);
  g_clear_pointer (&self->report, wick_gradient_report_free);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_coverage_page_parent_class)->dispose (object);
}

static void
wick_coverage_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickCoveragePage *self = WICK_COVERAGE_PAGE (page);
  wick_table_set_rows (self->table, 0);
  g_clear_pointer (&self->report, wick_gradient_report_free);
  g_set_object (&self->document, document);
  if (self->document == NULL)
    return;
  self->report = wick_gradient_report_new (self->document);
  wick_table_set_rows (self->table, self->report->families->len);
  update_header (self);
}

static void
wick_coverage_page_class_init (WickCoveragePageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_coverage_page_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_coverage_page_refresh;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/wick-coverage-page.ui");
  gtk_widget_class_bind_template_child (widget_class, WickCoveragePage, box);
  gtk_widget_class_bind_template_child (widget_class, WickCoveragePage, verdict);
  gtk_widget_class_bind_template_child (widget_class, WickCoveragePage, reason);
  gtk_widget_class_bind_template_child (widget_class, WickCoveragePage, digest);
}

/* The header comes from the template (data/ui/wick-coverage-page.ui); the
 * family and entry table, its columns declared here, goes below it. */
static void
wick_coverage_page_init (WickCoveragePage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Coverage"));
  wick_page_set_icon_name (WICK_PAGE (self), "emblem-ok-symbolic");
  self->table = wick_table_new (self);
  wick_table_set_tree (self->table, children);
  wick_table_add_column (self->table, _ ("Family / key"), text_name, NULL, TRUE, FALSE);
  wick_table_add_column (self->table, _ ("Root"), text_root, NULL, FALSE, FALSE);
  wick_table_add_column (self->table, _ ("Expectation / state"), text_state, NULL, FALSE, FALSE);
  wick_table_set_class_func (self->table, class_state);
  wick_table_add_column (self->table, _ ("Norm"), text_norm, NULL, FALSE, TRUE);
  wick_table_add_column (self->table, _ ("Counts"), text_counts, NULL, FALSE, FALSE);
  wick_table_add_column (self->table, _ ("Verdict"), text_verdict, NULL, FALSE, FALSE);
  wick_table_set_class_func (self->table, class_verdict);
  wick_table_set_row_func (self->table, on_row);
  gtk_box_append (GTK_BOX (self->box), wick_table_get_widget (self->table));
}

GtkWidget *
wick_coverage_page_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_COVERAGE_PAGE, "selection", selection, NULL);
}

void
wick_coverage_page_set_document (WickCoveragePage *self, WickDocument *document)
{
  wick_page_set_document (WICK_PAGE (self), document);
}

WickTable *
wick_coverage_page_get_table (WickCoveragePage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->table;
}

const char *
wick_coverage_page_get_verdict_text (WickCoveragePage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return gtk_label_get_text (GTK_LABEL (self->verdict));
}
