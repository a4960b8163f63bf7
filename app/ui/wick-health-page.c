/* wick-health-page.c — see wick-health-page.h for the contract; the static widget tree is
 * the template data/ui/wick-health-page.ui. */
#include "wick-health-page.h"
#include "wick-health-page-private.h"

#include <glib/gi18n.h>

#include "wick-record-text.h"

struct _WickHealthPage
{
  WickPage parent_instance;
  GtkWidget *box;
  GtkWidget *title;
  GtkWidget *subtitle;
  GtkWidget *icon;
  WickTable *table;
  WickDocument *document; /* the one the table shows */
  guint n_errors, n_warnings, n_pending;
};

G_DEFINE_FINAL_TYPE (WickHealthPage, wick_health_page, WICK_TYPE_PAGE)

static const WickHealthIssue *
issue (WickHealthPage *self, guint index)
{
  return &wick_document_get_health (self->document, NULL)[index];
}

static char *
text_severity (gpointer data, guint kind, guint index)
{
  return g_strdup (wick_severity_name (issue (data, index)->severity));
}

static char *
text_code (gpointer data, guint kind, guint index)
{
  return g_strdup (issue (data, index)->code);
}

static char *
text_message (gpointer data, guint kind, guint index)
{
  return g_strdup (issue (data, index)->message);
}

static char *
text_record (gpointer data, guint kind, guint index)
{
  WickHealthPage *self = data;
  const WickHealthIssue *i = issue (self, index);
  if (i->record_type == WICK_RECORD_NONE || i->record_index < 0)
    return g_strdup (i->record_id ? i->record_id : "");
  g_autofree char *title = wick_record_title (self->document, i->record_type, i->record_index);
  return i->record_id ? g_strdup_printf ("%s (%s)", title, i->record_id) : g_steal_pointer (&title);
}

static const char *
class_severity (gpointer data, guint kind, guint index)
{
  switch (issue (data, index)->severity)
    {
      case WICK_SEVERITY_ERROR:
        return "error";
      case WICK_SEVERITY_WARNING:
        return "warning";
      case WICK_SEVERITY_PENDING:
        return "accent"; /* judged when the run ends */
      case WICK_SEVERITY_INFO:
        break; /* importer notes */
    }
  return NULL;
}

static int
compare_severity (gpointer data, guint a, guint b)
{
  int sa = issue (data, a)->severity, sb = issue (data, b)->severity;
  return sa != sb ? (sa < sb ? -1 : 1) : (a < b ? -1 : a > b);
}

static int
compare_code (gpointer data, guint a, guint b)
{
  int c = g_strcmp0 (issue (data, a)->code, issue (data, b)->code);
  return c ? c : (a < b ? -1 : a > b);
}

static int
compare_message (gpointer data, guint a, guint b)
{
  return g_strcmp0 (issue (data, a)->message, issue (data, b)->message);
}

static void
on_row (gpointer data, guint kind, guint index, gboolean activated)
{
  WickHealthPage *self = data;
  const WickHealthIssue *i = issue (self, index);
  if (i->record_type != WICK_RECORD_NONE && i->record_index >= 0)
    {
      wick_selection_set_record (wick_page_get_selection (WICK_PAGE (self)), i->record_type, i->record_index);
      if (activated)
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-page", "s", "timeline");
    }
}

static void
update_header (WickHealthPage *self)
{
  guint n = 0;
  const WickHealthIssue *issues
    = self->document ? wick_document_get_health (self->document, &n) : NULL;
  self->n_errors = self->n_warnings = self->n_pending = 0;
  for (guint i = 0; i < n; i++)
    {
      if (issues[i].severity == WICK_SEVERITY_ERROR)
        self->n_errors++;
      else if (issues[i].severity == WICK_SEVERITY_WARNING)
        self->n_warnings++;
      else if (issues[i].severity == WICK_SEVERITY_PENDING)
        self->n_pending++;
    }
  const WickParseError *parse
    = self->document ? wick_document_get_parse_error (self->document) : NULL;
  gtk_widget_remove_css_class (self->title, "error");
  gtk_widget_remove_css_class (self->title, "warning");
  gtk_widget_remove_css_class (self->title, "success");
  gtk_widget_remove_css_class (self->title, "accent");
  if (parse && parse->failed)
    {
      gtk_label_set_text (GTK_LABEL (self->title), _ ("The trace did not parse to the end"));
      g_autofree char *sub
        = g_strdup_printf (_ ("%s%s%s. The records read before it are shown."), parse->message,
                           parse->cause ? ": " : "", parse->cause ? parse->cause : "");
      gtk_label_set_text (GTK_LABEL (self->subtitle), sub);
      gtk_widget_add_css_class (self->title, "error");
      gtk_image_set_from_icon_name (GTK_IMAGE (self->icon), "dialog-error-symbolic");
      return;
    }
  g_autofree char *errors
    = g_strdup_printf (g_dngettext (NULL, "%u error", "%u errors", self->n_errors), self->n_errors);
  g_autofree char *warnings = g_strdup_printf (
    g_dngettext (NULL, "%u warning", "%u warnings", self->n_warnings), self->n_warnings);
  gboolean valid = self->document && wick_document_get_structurally_valid (self->document);
  if (self->document && wick_document_get_health_provisional (self->document))
    {
      /* A run in progress: the end-only rules are pending, not failed. */
      g_autofree char *pending = g_strdup_printf (
        g_dngettext (NULL, "%u pending", "%u pending", self->n_pending), self->n_pending);
      gboolean partial = wick_document_is_partial (self->document);
      g_autofree char *title
        = g_strdup_printf (partial ? _ ("Partial capture in progress: %s, %s so far, %s")
                                   : _ ("Run in progress: %s, %s so far, %s"),
                           errors, warnings, pending);
      gtk_label_set_text (GTK_LABEL (self->title), title);
      if (partial)
        /* a late attach: judged as the partial capture its file
         * will be, not as a complete run missing its start */
        gtk_label_set_text (
          GTK_LABEL (self->subtitle),
          valid ? _ ("Attached after the run began: what came before is missing, so the rules "
                     "judge a partial capture, as they will judge its file. No error so far; the "
                     "rules only the end decides are pending until the run ends.")
                : _ ("Attached after the run began, judged as a partial capture: the trace "
                     "already has errors, listed below."));
      else
        gtk_label_set_text (
          GTK_LABEL (self->subtitle),
          valid ? _ ("No error so far. The rules only the end decides (the terminal record, open "
                     "spans, gradient counts, retained allocations) are pending until the run "
                     "ends.")
                : _ ("The trace already has errors, listed below. The rules only the end decides "
                     "are pending until the run ends."));
      gtk_widget_add_css_class (self->title, self->n_errors     ? "error"
                                             : self->n_warnings ? "warning"
                                                                : "accent");
      gtk_image_set_from_icon_name (GTK_IMAGE (self->icon), self->n_errors
                                                              ? "dialog-error-symbolic"
                                                              : "emblem-synchronizing-symbolic");
      return;
    }
  g_autofree char *title = g_strdup_printf ("%s, %s", errors, warnings);
  gtk_label_set_text (GTK_LABEL (self->title), title);
  gtk_label_set_text (GTK_LABEL (self->subtitle),
                      valid
                        ? _ ("The trace is structurally valid.")
                        : _ ("The trace is not structurally valid: its errors are listed below."));
  gtk_widget_add_css_class (self->title, self->n_errors     ? "error"
                                         : self->n_warnings ? "warning"
                                                            : "success");
  gtk_image_set_from_icon_name (GTK_IMAGE (self->icon), self->n_errors ? "dialog-error-symbolic"
                                                        : self->n_warnings
                                                          ? "dialog-warning-symbolic"
                                                          : "emblem-ok-symbolic");
}

static void
wick_health_page_dispose (GObject *object)
{
  WickHealthPage *self = WICK_HEALTH_PAGE (object);
  gtk_widget_dispose_template (GTK_WIDGET (self), WICK_TYPE_HEALTH_PAGE);
  g_clear_pointer (&self->table, wick_table_free);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (wick_health_page_parent_class)->dispose (object);
}

static void
wick_health_page_refresh (WickPage *page, WickDocument *document, WickPageRefreshFlags flags)
{
  WickHealthPage *self = WICK_HEALTH_PAGE (page);
  wick_table_set_rows (self->table, 0);
  g_set_object (&self->document, document);
  guint n = 0;
  if (self->document)
    wick_document_get_health (self->document, &n);
  wick_table_set_rows (self->table, n);
  update_header (self);
}

static void
wick_health_page_class_init (WickHealthPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = wick_health_page_dispose;
  WICK_PAGE_CLASS (klass)->refresh = wick_health_page_refresh;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/wickprofiler/Wick/wick-health-page.ui");
  gtk_widget_class_bind_template_child (widget_class, WickHealthPage, box);
  gtk_widget_class_bind_template_child (widget_class, WickHealthPage, icon);
  gtk_widget_class_bind_template_child (widget_class, WickHealthPage, title);
  gtk_widget_class_bind_template_child (widget_class, WickHealthPage, subtitle);
}

/* The header comes from the template (data/ui/wick-health-page.ui); the
 * issue table, its columns declared here, goes below it. */
static void
wick_health_page_init (WickHealthPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Health"));
  wick_page_set_icon_name (WICK_PAGE (self), "dialog-warning-symbolic");
  self->table = wick_table_new (self);
  wick_table_add_column (self->table, _ ("Severity"), text_severity, compare_severity, FALSE,
                         FALSE);
  wick_table_set_class_func (self->table, class_severity);
  wick_table_add_column (self->table, _ ("Code"), text_code, compare_code, FALSE, FALSE);
  wick_table_add_column (self->table, _ ("Message"), text_message, compare_message, TRUE, FALSE);
  wick_table_add_column (self->table, _ ("Record"), text_record, NULL, FALSE, FALSE);
  wick_table_set_row_func (self->table, on_row);
  gtk_box_append (GTK_BOX (self->box), wick_table_get_widget (self->table));
}

GtkWidget *
wick_health_page_new (WickSelection *selection)
{
  g_return_val_if_fail (WICK_IS_SELECTION (selection), NULL);
  return g_object_new (WICK_TYPE_HEALTH_PAGE, "selection", selection, NULL);
}

void
wick_health_page_set_document (WickHealthPage *self, WickDocument *document)
{
  wick_page_set_document (WICK_PAGE (self), document);
}

WickTable *
wick_health_page_get_table (WickHealthPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->table;
}

guint
wick_health_page_get_n_errors (WickHealthPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->n_errors;
}

guint
wick_health_page_get_n_warnings (WickHealthPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->n_warnings;
}

guint
wick_health_page_get_n_pending (WickHealthPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return self->n_pending;
}

const char *
wick_health_page_get_title (WickHealthPage *self)
{
  wick_page_ensure_current (WICK_PAGE (self));
  return gtk_label_get_text (GTK_LABEL (self->title));
}
