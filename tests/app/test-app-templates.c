/* test-app-templates.c — the widgets built from GtkBuilder templates
 * (the .ui files in data/ui/) get their template: every bound child present with its
 * type, the translated strings of the .ui shown, and nothing left behind
 * after dispose. A .ui that does not parse, names a missing callback or an
 * unknown type fails here (GtkBuilder's criticals are fatal in tests).
 */
#include "config.h"

#include <adwaita.h>

#include "app-test-ui.h"
#include "ui/wick-details-pane.h"

static GObject *
template_child (gpointer widget, GType type, const char *name)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (widget), type, name);
  if (child == NULL)
    g_error ("%s: template child \"%s\" is not bound", g_type_name (type), name);
  return child;
}

static void
assert_child_type (gpointer widget, GType type, const char *name, GType expected)
{
  GObject *child = template_child (widget, type, name);
  if (!g_type_is_a (G_OBJECT_TYPE (child), expected))
    g_error ("%s: template child \"%s\" is a %s, not a %s", g_type_name (type), name,
             G_OBJECT_TYPE_NAME (child), g_type_name (expected));
}

static void
test_details_pane (void)
{
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *pane = g_object_ref_sink (wick_details_pane_new (selection));
  GType type = WICK_TYPE_DETAILS_PANE;
  assert_child_type (pane, type, "scrolled", GTK_TYPE_SCROLLED_WINDOW);
  assert_child_type (pane, type, "range_box", GTK_TYPE_BOX);
  assert_child_type (pane, type, "title", GTK_TYPE_LABEL);
  assert_child_type (pane, type, "grid", GTK_TYPE_GRID);
  assert_child_type (pane, type, "hint", GTK_TYPE_LABEL);
  assert_child_type (pane, type, "contents", GTK_TYPE_BOX);
  g_assert_true (gtk_widget_get_first_child (pane)
                 == (GtkWidget *)template_child (pane, type, "scrolled"));
  /* Nothing selected: the title and the hint of the .ui. */
  g_assert_cmpstr (wick_details_pane_get_title (WICK_DETAILS_PANE (pane)), ==, "Nothing selected");
  GtkWidget *hint = GTK_WIDGET (template_child (pane, type, "hint"));
  g_assert_true (gtk_widget_get_visible (hint));
  g_assert_true (
    g_str_has_prefix (gtk_label_get_text (GTK_LABEL (hint)), "Click any event on the timeline"));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (template_child (pane, type, "range_box"))));
  g_assert_true (
    gtk_widget_has_css_class (GTK_WIDGET (template_child (pane, type, "title")), "title-3"));

  /* A record: its fields in the grid, the hint hidden; then nothing again. */
  g_autoptr (WickDocument) document = app_test_document_from_text (
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\",\"count\":3}");
  wick_details_pane_set_document (WICK_DETAILS_PANE (pane), document);
  wick_selection_set_record (selection, WICK_RECORD_EXTENSION, 0);
  g_assert_false (gtk_widget_get_visible (hint));
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "count"), ==, "3");
  wick_selection_set_record (selection, WICK_RECORD_NONE, -1);
  g_assert_true (gtk_widget_get_visible (hint));
  g_assert_null (wick_details_pane_get_field (WICK_DETAILS_PANE (pane), "count"));

  /* Dispose takes the template's tree down with it. */
  g_object_run_dispose (G_OBJECT (pane));
  g_assert_null (gtk_widget_get_first_child (pane));
  g_object_unref (pane);
}

int
main (int argc, char **argv)
{
  if (!app_test_ui_init_display (&argc, &argv))
    return 0;
  g_test_add_func ("/templates/details-pane", test_details_pane);
  return g_test_run ();
}
