/* wick-window.c — see wick-window.h for the contract and
 * wick-window-internal.h for how the window's files divide it. */
#include "config.h"

#include "wick-window.h"
#include "wick-window-internal.h"
#include "wick-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "wick-costs-page.h"
#include "wick-coverage-page.h"
#include "wick-details-pane.h"
#include "wick-gpu-pages.h"
#include "wick-health-page.h"
#include "wick-memory-view.h"
#include "wick-settings.h"
#include "wick-snapshot-window.h"
#include "wick-timeline-overview.h"
#include "wick-timeline-view.h"

static void wick_window_show_document (WickWindow *self, WickDocument *document,
                                       WickWindowDerived *derived);

G_DEFINE_FINAL_TYPE (WickWindow, wick_window, ADW_TYPE_APPLICATION_WINDOW)

enum
{
  PROP_0,
  PROP_SELECTION,
  PROP_SESSION,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

/* ---- document ---- */

/* The pages shown are those with something to show for @document
 * (wick_page_is_wanted: the GPU pages for GPU work). */
static void
pages_set_document (WickWindow *self, WickDocument *document)
{
  self->match_page = NULL;
  g_autoptr (GListModel) pages = G_LIST_MODEL (adw_view_stack_get_pages (self->views));
  for (guint i = 0; i < g_list_model_get_n_items (pages); i++)
    {
      g_autoptr (AdwViewStackPage) page = g_list_model_get_item (pages, i);
      GtkWidget *child = adw_view_stack_page_get_child (page);
      if (WICK_IS_PAGE (child))
        adw_view_stack_page_set_visible (page, wick_page_is_wanted (WICK_PAGE (child), document));
    }
}

/* A Kernels or Operators row: its slices become the timeline's matches,
 * the first selected; activating the row shows the timeline. */
static void
on_gpu_instances (GtkWidget *page, GArray *refs, gboolean activated, WickWindow *self)
{
  gtk_search_bar_set_search_mode (self->search_bar, FALSE);
  self->n_matches = wick_timeline_view_set_matches (WICK_TIMELINE_VIEW (self->timeline),
                                                    (const WickEventRef *)(gpointer)refs->data,
                                                    refs->len);
  self->match_page = page;
  gint current = wick_timeline_view_step_match (WICK_TIMELINE_VIEW (self->timeline), 1);
  wick_gpu_table_page_set_position (WICK_GPU_TABLE_PAGE (page), current, self->n_matches);
  if (activated && self->n_matches > 0)
    adw_view_stack_set_visible_child_name (self->views, "timeline");
}

static void
on_gpu_step (GtkWidget *page, int direction, WickWindow *self)
{
  if (self->match_page == page)
    wick_window_step_match (self, direction);
}

static void
gpu_pages_init (WickWindow *self)
{
  self->gpu_overview = wick_gpu_overview_page_new (self->selection);
  self->kernels = wick_gpu_table_page_new (self->selection, WICK_GPU_TABLE_KERNELS);
  self->operators = wick_gpu_table_page_new (self->selection, WICK_GPU_TABLE_OPERATORS);
  struct
  {
    GtkWidget *widget;
    const char *name;
  } pages[] = {
    { self->gpu_overview, "gpu-overview" },
    { self->kernels, "kernels" },
    { self->operators, "operators" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      WickPage *page = WICK_PAGE (pages[i].widget);
      wick_page_set_session (page, self->session);
      AdwViewStackPage *stack_page = adw_view_stack_add_titled (self->views, pages[i].widget,
                                                                pages[i].name,
                                                                wick_page_get_title (page));
      adw_view_stack_page_set_icon_name (stack_page, wick_page_get_icon_name (page));
      adw_view_stack_page_set_visible (stack_page, wick_page_is_wanted (page, NULL));
    }
  for (guint i = 1; i < G_N_ELEMENTS (pages); i++)
    {
      g_signal_connect (pages[i].widget, "instances", G_CALLBACK (on_gpu_instances), self);
      g_signal_connect (pages[i].widget, "step", G_CALLBACK (on_gpu_step), self);
    }
}

/* The session takes the document with what the loading derived (the
 * timeline and the memory chart take their scene and chart from it); every
 * page, the details pane too, reads it from there. */
static void
views_set_document (WickWindow *self, WickDocument *document, WickWindowDerived *derived)
{
  WickWindowDerived none = { 0 };
  if (derived == NULL)
    derived = &none;
  wick_trace_session_set_document_derived (self->session, document,
                                           g_steal_pointer (&derived->scene),
                                           g_steal_pointer (&derived->chart),
                                           g_steal_pointer (&derived->costs));
  pages_set_document (self, document);
}

/* The pages refresh when shown (wick-page.h); the timeline is told even
 * hidden, for its follow mode moves the visible range every view shows. */
void
wick_window_document_changed (WickWindow *self)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  wick_timeline_view_document_changed (WICK_TIMELINE_VIEW (self->timeline));
  wick_trace_session_document_changed (self->session);
}

static void
on_document_changed (WickDocument *document, WickWindow *self)
{
  wick_window_document_changed (self);
}

static void
update_title (WickWindow *self)
{
  const char *path = self->document ? wick_document_get_path (self->document) : NULL;
  g_autofree char *base = path ? g_path_get_basename (path) : NULL;
  const char *entry = self->document ? wick_document_get_entrypoint (self->document) : NULL;
  guint n_spans = 0;
  if (self->document)
    wick_document_get_spans (self->document, &n_spans);
  g_autofree char *subtitle
    = entry ? g_strdup_printf (g_dngettext (NULL, "%s · %u span", "%s · %u spans", n_spans), entry,
                               n_spans)
            : NULL;
  wick_window_set_title_text (self, base ? base : (self->document ? _ ("Live session") : "Wick"),
                              subtitle);
}

static void
show_file_facts (WickWindow *self)
{
  WickAttachFacts attach;
  WickLossFacts losses;
  wick_window_hide_banner (self, "partial");
  wick_window_hide_banner (self, "dropped");
  wick_window_hide_banner (self, "lost");
  if (wick_document_is_partial (self->document) && wick_document_get_attach (self->document, &attach))
    {
      g_autofree char *message = g_strdup_printf (
        _ ("attached at %.1f s: records before that are missing"), (double)attach.attached_ns / 1e9);
      wick_window_show_banner (self, "partial", message, NULL, NULL);
    }
  wick_document_get_losses (self->document, &losses);
  if (losses.dropped > 0)
    {
      g_autofree char *message = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE,
                     "%llu record dropped by the process: its ring was full, the trace has a gap",
                     "%llu records dropped by the process: its ring was full, the trace has gaps",
                     (gulong)MIN (losses.dropped, G_MAXULONG)),
        (unsigned long long)losses.dropped);
      wick_window_show_banner (self, "dropped", message, NULL, NULL);
    }
  if (losses.lost > 0)
    {
      g_autofree char *message = g_strdup_printf (
        g_dngettext (GETTEXT_PACKAGE,
                     "%llu record lost: the reader that wrote this file fell behind the process",
                     "%llu records lost: the reader that wrote this file fell behind the process",
                     (gulong)MIN (losses.lost, G_MAXULONG)),
        (unsigned long long)losses.lost);
      wick_window_show_banner (self, "lost", message, NULL, NULL);
    }
}

static void
show_document_banners (WickWindow *self)
{
  wick_window_hide_banner (self, "parse-error");
  wick_window_hide_banner (self, "health");
  const WickParseError *parse = wick_document_get_parse_error (self->document);
  if (parse && parse->failed)
    {
      const char *path = wick_document_get_path (self->document);
      g_autofree char *message = NULL;
      if (parse->line > 0)
        message
          = g_strdup_printf (_ ("%s, line %llu: %s%s%s. The records before it are shown."),
                             path ? path : "", (unsigned long long)parse->line, parse->message,
                             parse->cause ? ": " : "", parse->cause ? parse->cause : "");
      else
        message = g_strdup_printf (_ ("%s: %s%s%s. The records read are shown."), path ? path : "",
                                   parse->message, parse->cause ? ": " : "",
                                   parse->cause ? parse->cause : "");
      wick_window_show_banner (self, "parse-error", message, _ ("Health"), "win.show-page::health");
      return;
    }
  /* what a live window showed of the capture, shown again for its file: a late
   * attach, and what was lost */
  if (!self->live)
    show_file_facts (self);
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (self->document, &n);
  guint errors = 0;
  for (guint i = 0; i < n; i++)
    errors += issues[i].severity == WICK_SEVERITY_ERROR;
  if (errors > 0)
    {
      g_autofree char *message
        = g_strdup_printf (g_dngettext (NULL, "This trace has %u health error.",
                                        "This trace has %u health errors.", errors),
                           errors);
      wick_window_show_banner (self, "health", message, _ ("Show"), "win.show-page::health");
    }
}

void
wick_window_set_document (WickWindow *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  wick_window_show_document (self, document, NULL);
}

/* Shows @document with what was derived from it on the loading's worker
 * (NULL: the views derive it here). */
static void
wick_window_show_document (WickWindow *self, WickDocument *document, WickWindowDerived *derived)
{
  if (self->document && self->changed_handler)
    g_signal_handler_disconnect (self->document, self->changed_handler);
  self->changed_handler = 0;
  g_set_object (&self->document, document);
  wick_selection_set_record (self->selection, WICK_RECORD_NONE, -1);
  wick_selection_set_range (self->selection, 0, 0);
  views_set_document (self, document, derived);
  if (document && g_signal_lookup ("changed", G_OBJECT_TYPE (document)))
    self->changed_handler
      = g_signal_connect (document, "changed", G_CALLBACK (on_document_changed), self);
  gtk_stack_set_visible_child_name (self->main_stack, document ? "document" : "welcome");
  gtk_stack_set_visible_child_name (self->title_stack, document ? "switcher" : "title");
  if (document)
    {
      update_title (self);
      show_document_banners (self);
      gtk_widget_grab_focus (self->timeline);
    }
  wick_window_actions_update (GTK_WIDGET (self));
}

WickDocument *
wick_window_get_document (WickWindow *self)
{
  return self->document;
}

WickSelection *
wick_window_get_selection (WickWindow *self)
{
  return self->selection;
}

GtkWidget *
wick_window_get_timeline (WickWindow *self)
{
  return self->timeline;
}

/* ---- search ---- */

static void
update_match_label (WickWindow *self, guint n, gint current)
{
  g_autofree char *text = NULL;
  const char *query = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  if (query == NULL || *query == '\0')
    text = g_strdup ("");
  else if (n == 0)
    text = g_strdup (_ ("No matches"));
  else if (current < 0)
    text = g_strdup_printf (g_dngettext (NULL, "%u match", "%u matches", n), n);
  else
    text = g_strdup_printf (_ ("%d of %u"), current + 1, n);
  gtk_label_set_text (self->match_label, text);
}

static void
on_search_changed (GtkSearchEntry *entry, WickWindow *self)
{
  /* A closed bar searches nothing (search-changed comes late, after a pause
   * in typing, possibly after Escape closed the bar). */
  if (!gtk_search_bar_get_search_mode (self->search_bar))
    return;
  self->n_matches = wick_timeline_view_set_search (WICK_TIMELINE_VIEW (self->timeline),
                                                   gtk_editable_get_text (GTK_EDITABLE (entry)));
  if (self->match_page)
    wick_gpu_table_page_set_position (WICK_GPU_TABLE_PAGE (self->match_page), -1, 0);
  self->match_page = NULL;
  /* Typing in the query never switches views: Enter (activate) goes to the
   * timeline's next match. */
  update_match_label (self, self->n_matches, -1);
}

void
wick_window_step_match (WickWindow *self, int direction)
{
  gint current = wick_timeline_view_step_match (WICK_TIMELINE_VIEW (self->timeline), direction);
  if (self->match_page)
    wick_gpu_table_page_set_position (WICK_GPU_TABLE_PAGE (self->match_page), current,
                                      self->n_matches);
  else
    update_match_label (self, self->n_matches, current);
}

static void
on_search_activate (GtkSearchEntry *entry, WickWindow *self)
{
  if (self->n_matches > 0)
    adw_view_stack_set_visible_child_name (self->views, "timeline");
  wick_window_step_match (self, 1);
}

/* Escape in the entry (GtkSearchEntry's stop-search) closes the bar. */
static void
on_search_stop (GtkSearchEntry *entry, WickWindow *self)
{
  gtk_search_bar_set_search_mode (self->search_bar, FALSE);
}

/* A closed bar leaves no highlighted matches behind. */
static void
on_search_mode_changed (GtkSearchBar *bar, GParamSpec *pspec, WickWindow *self)
{
  if (!gtk_search_bar_get_search_mode (bar))
    {
      self->n_matches = wick_timeline_view_set_search (WICK_TIMELINE_VIEW (self->timeline), "");
      gtk_label_set_text (self->match_label, "");
    }
  else
    on_search_changed (self->search_entry, self);
}

static void
on_costs_search_name (WickCostsPage *page, const char *name, WickWindow *self)
{
  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), name);
  on_search_changed (self->search_entry, self);
  adw_view_stack_set_visible_child_name (self->views, "timeline");
  wick_window_step_match (self, 1);
}

/* ---- construction ---- */

static void
on_follow_notify (GObject *object, GParamSpec *pspec, WickWindow *self)
{
  gtk_widget_set_visible (
    self->follow_button,
    self->live && !wick_timeline_view_get_follow (WICK_TIMELINE_VIEW (self->timeline)));
}

static void
on_selection_record (WickSelection *selection, guint what, WickWindow *self)
{
  if (!(what & WICK_SELECTION_CHANGED_RECORD) || self->document == NULL)
    return;
  /* a slice clicked on the timeline is where the user looks: never moved to */
  if (wick_timeline_view_is_selecting (WICK_TIMELINE_VIEW (self->timeline)))
    return;
  gint64 index;
  WickRecordType type = wick_selection_get_record (selection, &index);
  guint64 t = 0, dur = 0;
  if (type == WICK_RECORD_SPAN)
    {
      const WickSpan *span = &wick_document_get_spans (self->document, NULL)[index];
      t = span->start_ns;
      dur = span->duration_ns;
      /* a span still open runs to the newest record */
      if (!(span->flags & WICK_SPAN_FLAG_CLOSED))
        dur = MAX (wick_document_get_end_ns (self->document), t) - t;
    }
  else if (type == WICK_RECORD_OP)
    {
      const WickOp *op = &wick_document_get_ops (self->document, NULL)[index];
      t = op->timestamp_ns;
      dur = op->duration_ns;
    }
  else if (type == WICK_RECORD_MEMORY)
    t = wick_document_get_memory (self->document, NULL)[index].timestamp_ns;
  else if (type == WICK_RECORD_EXTENSION)
    t = wick_document_get_extensions (self->document, NULL)[index].timestamp_ns;
  else
    return;
  /* Bring the record into view when it is outside, keeping the zoom. */
  guint64 start, end;
  wick_selection_get_visible (selection, &start, &end);
  if (t + dur >= start && t <= end)
    return;
  guint64 width = MAX (end - start, dur * 2 + 1);
  guint64 center = t + dur / 2;
  wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), FALSE);
  wick_selection_set_visible (selection, center > width / 2 ? center - width / 2 : 0,
                              (center > width / 2 ? center - width / 2 : 0) + width);
}

/* Clicking a view tab leaves the keyboard focus on the tab's button, so
 * the timeline's keys (W/A/S/D, +/−, F, M …) would go nowhere until the
 * user clicked into the plot: the view shown takes the focus instead, once
 * the click that switched it is over. */
static gboolean
focus_visible_view (gpointer user_data)
{
  WickWindow *self = user_data;
  self->focus_source = 0;
  GtkWidget *visible = adw_view_stack_get_visible_child (self->views);
  if (visible == NULL || !gtk_widget_get_mapped (visible))
    return G_SOURCE_REMOVE;
  /* Someone typing (the search entry) keeps the focus. */
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  for (GtkWidget *w = focus; w; w = gtk_widget_get_parent (w))
    if (GTK_IS_EDITABLE (w))
      return G_SOURCE_REMOVE;
  if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->views), "timeline") == 0)
    gtk_widget_grab_focus (self->timeline);
  return G_SOURCE_REMOVE;
}

static void
on_visible_view (AdwViewStack *views, GParamSpec *pspec, WickWindow *self)
{
  if (self->focus_source == 0)
    self->focus_source = g_idle_add (focus_visible_view, self);
}

/* Below this width the details pane folds away: a 700 px window
 * gives its whole width to the page, so the timeline keeps its track labels
 * and room to plot. Folded, the details button (F9) still shows the pane,
 * for as long as the user wants; wide again, the pane is as the user left it
 * ("show-details"). */
#define WICK_WINDOW_FOLD_WIDTH 860

static void
on_show_details_changed (GSettings *settings, const char *key, WickWindow *self)
{
  self->details_wanted = g_settings_get_boolean (settings, key);
  if (!self->details_folded)
    gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->details_button), self->details_wanted);
}

static void
on_details_toggled (GtkToggleButton *button, WickWindow *self)
{
  if (self->details_folded)
    return;
  self->details_wanted = gtk_toggle_button_get_active (button);
  GSettings *settings = wick_settings_get ();
  if (settings != NULL && g_settings_get_boolean (settings, "show-details") != self->details_wanted)
    g_settings_set_boolean (settings, "show-details", self->details_wanted);
}

static void
wick_window_fold_details (WickWindow *self, gboolean folded)
{
  if (self->details_folded == folded)
    return;
  self->details_folded = folded;
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->details_button),
                                folded ? FALSE : self->details_wanted);
}

static void
wick_window_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  WickWindow *self = WICK_WINDOW (widget);
  /* As AdwFlap folds: during the allocation, the pane's change laid out on the next frame. */
  wick_window_fold_details (self, width < WICK_WINDOW_FOLD_WIDTH);
  GTK_WIDGET_CLASS (wick_window_parent_class)->size_allocate (widget, width, height, baseline);
}

gboolean
wick_window_get_details_folded (WickWindow *self)
{
  return self->details_folded;
}

static void
wick_window_dispose (GObject *object)
{
  WickWindow *self = WICK_WINDOW (object);
  if (self->loading)
    {
      g_signal_handlers_disconnect_by_data (self->loading, self);
      wick_window_loading_abandon (self->loading);
    }
  g_clear_object (&self->loading);
  wick_window_actions_dispose (&self->actions);
  g_clear_handle_id (&self->focus_source, g_source_remove);
  if (self->document && self->changed_handler)
    g_signal_handler_disconnect (self->document, self->changed_handler);
  self->changed_handler = 0;
  if (self->selection)
    g_signal_handlers_disconnect_by_data (self->selection, self);
  g_clear_object (&self->document);
  if (self->save_destroy)
    self->save_destroy (self->save_data);
  self->save_destroy = NULL;
  g_clear_pointer (&self->banner_widgets, g_hash_table_unref);
  G_OBJECT_CLASS (wick_window_parent_class)->dispose (object);
  g_clear_object (&self->session);
  g_clear_object (&self->selection);
}

static void
wick_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  WickWindow *self = WICK_WINDOW (object);
  if (prop_id == PROP_SELECTION)
    g_value_set_object (value, self->selection);
  else if (prop_id == PROP_SESSION)
    g_value_set_object (value, self->session);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
wick_window_class_init (WickWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_window_dispose;
  object_class->get_property = wick_window_get_property;
  widget_class->size_allocate = wick_window_size_allocate;
  /* The selection every view of the window shares; the template's views
   * bind to it. */
  properties[PROP_SELECTION] = g_param_spec_object ("selection", NULL, NULL, WICK_TYPE_SELECTION,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* The session (document, selection, derived models) the template's pages
   * bind to. */
  properties[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, WICK_TYPE_TRACE_SESSION,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  g_type_ensure (WICK_TYPE_TIMELINE_VIEW);
  g_type_ensure (WICK_TYPE_TIMELINE_OVERVIEW);
  g_type_ensure (WICK_TYPE_MEMORY_VIEW);
  g_type_ensure (WICK_TYPE_COVERAGE_PAGE);
  g_type_ensure (WICK_TYPE_HEALTH_PAGE);
  g_type_ensure (WICK_TYPE_COSTS_PAGE);
  g_type_ensure (WICK_TYPE_DETAILS_PANE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/wickprofiler/Wick/wick-window.ui");
  gtk_widget_class_bind_template_child (widget_class, WickWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, title_stack);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, header);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, banners);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, search_bar);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, search_entry);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, search_button);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, match_label);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, loading_page);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, progress);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, paned);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, views);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, details_button);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, recent_list);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, recent_label);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, overview);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, timeline);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, follow_button);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, hint);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, memory);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, coverage);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, health);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, costs);
  gtk_widget_class_bind_template_child (widget_class, WickWindow, details);
  gtk_widget_class_bind_template_callback (widget_class, on_follow_notify);
  gtk_widget_class_bind_template_callback (widget_class, on_visible_view);
  gtk_widget_class_bind_template_callback (widget_class, on_costs_search_name);
  wick_window_actions_install (widget_class, G_STRUCT_OFFSET (WickWindow, actions));
}

static gboolean
on_search_key (GtkEventControllerKey *controller, guint keyval, guint keycode,
               GdkModifierType state, WickWindow *self)
{
  if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter) && (state & GDK_SHIFT_MASK))
    {
      wick_window_step_match (self, -1);
      return TRUE;
    }
  return FALSE;
}

static void
on_show_ops_changed (GSettings *settings, const char *key, WickWindow *self)
{
  wick_timeline_view_set_show_ops (WICK_TIMELINE_VIEW (self->timeline),
                                   g_settings_get_boolean (settings, key));
}

/* The window's size and view options live in GSettings: its size and
 * whether it is maximized (read when it opens; each window then writes its
 * own, so the last one resized or closed is what the next opens with), the
 * details pane's visibility and the op ticks (a check item in the main menu,
 * win.show-ops). */
static void
bind_settings (WickWindow *self)
{
  GSettings *settings = wick_settings_get ();
  if (settings == NULL)
    return;
  GSettingsBindFlags once
    = G_SETTINGS_BIND_GET | G_SETTINGS_BIND_SET | G_SETTINGS_BIND_GET_NO_CHANGES;
  g_settings_bind (settings, "window-width", self, "default-width", once);
  g_settings_bind (settings, "window-height", self, "default-height", once);
  g_settings_bind (settings, "window-maximized", self, "maximized", once);
  /* not g_settings_bind: a folded pane (wick_window_fold_details) is not the user's choice */
  g_signal_connect_object (settings, "changed::show-details", G_CALLBACK (on_show_details_changed),
                           self, 0);
  on_show_details_changed (settings, "show-details", self);
  g_autoptr (GAction) show_ops = g_settings_create_action (settings, "show-ops");
  g_action_map_add_action (G_ACTION_MAP (self), show_ops);
  g_signal_connect_object (settings, "changed::show-ops", G_CALLBACK (on_show_ops_changed), self,
                           0);
  on_show_ops_changed (settings, "show-ops", self);
}

/* ---- the actions' window (wick-window-actions.h) ---- */

static WickDocument *
actions_get_document (GtkWidget *window)
{
  return WICK_WINDOW (window)->document;
}

static gboolean
actions_get_live (GtkWidget *window)
{
  return WICK_WINDOW (window)->live;
}

static void
actions_step_match (GtkWidget *window, int direction)
{
  wick_window_step_match (WICK_WINDOW (window), direction);
}

static gboolean
actions_can_save (GtkWidget *window)
{
  return WICK_WINDOW (window)->save_handler != NULL;
}

static void
actions_save_as (GtkWidget *window)
{
  WickWindow *self = WICK_WINDOW (window);
  self->save_handler (self, self->save_data);
}

static void
actions_init (WickWindow *self)
{
  self->actions = (WickWindowActions){
    .timeline = self->timeline,
    .views = self->views,
    .toasts = self->toasts,
    .search_bar = self->search_bar,
    .search_entry = self->search_entry,
    .search_button = self->search_button,
    .details_button = self->details_button,
    .selection = self->selection,
    .get_document = actions_get_document,
    .get_live = actions_get_live,
    .step_match = actions_step_match,
    .can_save = actions_can_save,
    .save_as = actions_save_as,
  };
}

/* ---- opening files: the loading page and recent files ---- */

static void
add_recent (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentData data = {
    NULL, NULL, (char *)"application/x-ndjson", (char *)"Wick", (char *)"wick %f", NULL, FALSE
  };
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
  wick_settings_add_recent (path);
}

static void
on_loaded (WickWindowLoading *loading, const char *path, WickDocument *document,
           WickWindowDerived *derived, WickWindow *self)
{
  add_recent (path);
  wick_window_show_document (self, document, derived);
}

static void
on_load_failed (WickWindowLoading *loading, const char *path, const GError *error,
                WickWindow *self)
{
  gtk_stack_set_visible_child_name (self->main_stack, self->document ? "document" : "welcome");
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    wick_window_add_toast (self, adw_toast_new (_ ("Loading cancelled")));
  else
    {
      g_autofree char *message
        = g_strdup_printf (_ ("Could not open %s: %s"), path, error->message);
      AdwToast *toast = adw_toast_new (message);
      adw_toast_set_timeout (toast, 0);
      wick_window_add_toast (self, toast);
    }
  wick_window_actions_update (GTK_WIDGET (self));
}

/* A CUDA memory snapshot as the trace window's "Memory Snapshot" page (the
 * snapshot window's body, docs/memory-snapshots.md), in place of the one it
 * had; NULL only removes that. */
static void
set_snapshot_page (WickWindow *self, const char *snapshot)
{
  GtkWidget *old = adw_view_stack_get_child_by_name (self->views, "memory-snapshot");
  if (old != NULL)
    adw_view_stack_remove (self->views, old);
  if (snapshot != NULL)
    wick_window_add_page (self, "memory-snapshot", NULL, NULL,
                          wick_snapshot_window_new_page (snapshot));
}

void
wick_window_load_file (WickWindow *self, GFile *file)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  g_autofree char *path = g_file_get_path (file);
  if (path == NULL)
    {
      wick_window_add_toast (self, adw_toast_new (_ ("Only local files can be opened")));
      return;
    }
  /* A PyTorch CUDA memory snapshot (a pickle: its first byte is the PROTO
   * opcode) opened into a window showing a trace becomes its Memory
   * Snapshot page, the trace staying; else it opens in a window of its own. */
  if (wick_snapshot_window_sniff (path))
    {
      if (self->document != NULL)
        {
          set_snapshot_page (self, path);
          wick_window_show_page (self, "memory-snapshot");
          add_recent (path);
          return;
        }
      GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
      WickSnapshotWindow *snapshot = wick_snapshot_window_new (application, path);
      gtk_window_present (GTK_WINDOW (snapshot));
      add_recent (path);
      return;
    }
  /* The load shown before (if any) is cancelled and forgotten. */
  set_snapshot_page (self, NULL); /* the last trace's */
  wick_window_loading_start (self->loading, path);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  wick_window_actions_update (GTK_WIDGET (self));
  /* wick.torch's memory_history=True writes run.memory.pickle beside
   * run.jsonl: a trace opened with one beside it shows it too. */
  g_autofree char *history = wick_window_loading_find_memory_history (path);
  if (history != NULL)
    set_snapshot_page (self, history);
}

gboolean
wick_window_is_empty (WickWindow *self)
{
  return self->document == NULL && !wick_window_loading_is_busy (self->loading);
}

static void
on_cancel_clicked (GtkButton *button, WickWindow *self)
{
  wick_window_loading_cancel (self->loading);
}

static void
on_recent_activated (GtkListBox *list, GtkListBoxRow *row, WickWindow *self)
{
  const char *path = g_object_get_data (G_OBJECT (row), "wick-path");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  wick_window_load_file (self, file);
}

static void
fill_recent (WickWindow *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (self->recent_list)))
    gtk_list_box_remove (GTK_LIST_BOX (self->recent_list), child);
  g_auto (GStrv) recent = wick_settings_get_recent ();
  guint shown = 0;
  for (guint i = 0; recent && recent[i] && shown < 5; i++)
    {
      if (!g_file_test (recent[i], G_FILE_TEST_IS_REGULAR))
        continue;
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_autofree char *dir = g_path_get_dirname (recent[i]);
      g_autofree char *escaped_base = g_markup_escape_text (base, -1);
      g_autofree char *escaped_dir = g_markup_escape_text (dir, -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), escaped_base);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped_dir);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                                 gtk_image_new_from_icon_name ("go-next-symbolic"));
      g_object_set_data_full (G_OBJECT (row), "wick-path", g_strdup (recent[i]), g_free);
      gtk_list_box_append (GTK_LIST_BOX (self->recent_list), row);
      shown++;
    }
  gtk_widget_set_visible (self->recent_list, shown > 0);
  gtk_widget_set_visible (self->recent_label, shown > 0);
}

static void
loading_init (WickWindow *self)
{
  self->loading = wick_window_loading_new (self->loading_page, self->progress);
  g_signal_connect (self->loading, "loaded", G_CALLBACK (on_loaded), self);
  g_signal_connect (self->loading, "failed", G_CALLBACK (on_load_failed), self);
  g_signal_connect (self->cancel_button, "clicked", G_CALLBACK (on_cancel_clicked), self);
  g_signal_connect (self->recent_list, "row-activated", G_CALLBACK (on_recent_activated), self);
}

static void
wick_window_init (WickWindow *self)
{
  /* Before the template: its pages bind to the session, its other views
   * to the selection. */
  self->selection = wick_selection_new ();
  self->session = wick_trace_session_new (self->selection);
  gtk_widget_init_template (GTK_WIDGET (self));
  /* the overview's left edge is the timeline's label column */
  g_signal_connect_swapped (self->timeline, "notify::gutter-width",
                            G_CALLBACK (gtk_widget_queue_draw), self->overview);
  /* the overview draws the whole document: redrawn when the timeline applies
   * a change (at once, or coalesced while following a live run) */
  g_signal_connect_swapped (self->timeline, "document-applied",
                            G_CALLBACK (gtk_widget_queue_draw), self->overview);
  /* and when the timeline's scene follows it (the overview, above the
   * timeline, drew that frame from the scene before the update) */
  g_signal_connect_swapped (self->timeline, "scene-changed",
                            G_CALLBACK (wick_timeline_overview_scene_changed), self->overview);
  self->banner_widgets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_signal_connect (self->selection, "changed", G_CALLBACK (on_selection_record), self);

  g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);
  g_signal_connect (self->search_entry, "activate", G_CALLBACK (on_search_activate), self);
  g_signal_connect (self->search_entry, "stop-search", G_CALLBACK (on_search_stop), self);
  g_signal_connect (self->search_bar, "notify::search-mode-enabled",
                    G_CALLBACK (on_search_mode_changed), self);
  GtkEventController *keys = gtk_event_controller_key_new ();
  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_search_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), keys);
  gtk_search_bar_set_key_capture_widget (self->search_bar, NULL);
  gpu_pages_init (self);
  actions_init (self);
  loading_init (self);
  self->details_wanted = TRUE;
  g_signal_connect (self->details_button, "toggled", G_CALLBACK (on_details_toggled), self);
  bind_settings (self);
  gtk_paned_set_position (self->paned, MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1400) - 340);
  fill_recent (self);
  wick_window_actions_update (GTK_WIDGET (self));
}

WickWindow *
wick_window_new (GtkApplication *app)
{
  return g_object_new (WICK_TYPE_WINDOW, "application", app, NULL);
}

/* ---- live API ---- */

void
wick_window_set_live (WickWindow *self, gboolean live)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  self->live = live;
  wick_window_set_follow_newest (self, live);
  on_follow_notify (NULL, NULL, self);
  wick_window_actions_update (GTK_WIDGET (self));
}

gboolean
wick_window_get_live (WickWindow *self)
{
  return self->live;
}

void
wick_window_set_follow_newest (WickWindow *self, gboolean follow)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), follow);
  on_follow_notify (NULL, NULL, self);
}

void
wick_window_set_follow_interval (WickWindow *self, gint64 interval_us)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  wick_timeline_view_set_follow_interval (WICK_TIMELINE_VIEW (self->timeline), interval_us);
}

gboolean
wick_window_get_follow_newest (WickWindow *self)
{
  return wick_timeline_view_get_follow (WICK_TIMELINE_VIEW (self->timeline));
}

void
wick_window_set_title_text (WickWindow *self, const char *title, const char *subtitle)
{
  adw_view_switcher_title_set_title (self->switcher_title, title ? title : "Wick");
  adw_view_switcher_title_set_subtitle (self->switcher_title, subtitle ? subtitle : "");
  gtk_window_set_title (GTK_WINDOW (self), title ? title : "Wick");
}

void
wick_window_add_page (WickWindow *self, const char *name, const char *title, const char *icon_name,
                      GtkWidget *widget)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  /* a WickPage shows the window's session, under its own title and icon
   * unless told others */
  if (WICK_IS_PAGE (widget))
    {
      if (wick_page_get_session (WICK_PAGE (widget)) == NULL)
        wick_page_set_session (WICK_PAGE (widget), self->session);
      title = title ? title : wick_page_get_title (WICK_PAGE (widget));
      icon_name = icon_name ? icon_name : wick_page_get_icon_name (WICK_PAGE (widget));
    }
  AdwViewStackPage *page = adw_view_stack_add_titled (self->views, widget, name, title);
  if (icon_name)
    adw_view_stack_page_set_icon_name (page, icon_name);
}

void
wick_window_show_banner (WickWindow *self, const char *id, const char *message,
                         const char *button_label, const char *action_name)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  wick_window_hide_banner (self, id);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_add_css_class (box, "wick-banner");
  if (g_str_has_prefix (id, "parse") || g_str_has_prefix (id, "health")
      || g_str_has_prefix (id, "drop"))
    gtk_widget_add_css_class (box, "wick-banner-error");
  GtkWidget *label = gtk_label_new (message);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  /* Selectable with the mouse, but never focused (and fully selected) by default. */
  gtk_widget_set_focusable (label, FALSE);
  gtk_widget_set_hexpand (label, TRUE);
  gtk_box_append (GTK_BOX (box), label);
  if (button_label && action_name)
    {
      GtkWidget *button = gtk_button_new_with_label (button_label);
      gtk_actionable_set_detailed_action_name (GTK_ACTIONABLE (button), action_name);
      gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
      gtk_box_append (GTK_BOX (box), button);
    }
  gtk_box_append (GTK_BOX (self->banners), box);
  g_hash_table_insert (self->banner_widgets, g_strdup (id), box);
}

const char *
wick_window_get_banner (WickWindow *self, const char *id)
{
  g_return_val_if_fail (WICK_IS_WINDOW (self), NULL);
  GtkWidget *box = g_hash_table_lookup (self->banner_widgets, id);
  GtkWidget *label = box != NULL ? gtk_widget_get_first_child (box) : NULL;
  return label != NULL ? gtk_label_get_text (GTK_LABEL (label)) : NULL;
}

void
wick_window_hide_banner (WickWindow *self, const char *id)
{
  GtkWidget *box = g_hash_table_lookup (self->banner_widgets, id);
  if (box)
    {
      gtk_box_remove (GTK_BOX (self->banners), box);
      g_hash_table_remove (self->banner_widgets, id);
    }
}

void
wick_window_add_toast (WickWindow *self, AdwToast *toast)
{
  adw_toast_overlay_add_toast (self->toasts, toast);
}

void
wick_window_set_save_handler (WickWindow *self, WickSaveHandler handler, gpointer user_data,
                              GDestroyNotify destroy)
{
  if (self->save_destroy)
    self->save_destroy (self->save_data);
  self->save_handler = handler;
  self->save_data = user_data;
  self->save_destroy = destroy;
  wick_window_actions_update (GTK_WIDGET (self));
}

void
wick_window_show_page (WickWindow *self, const char *name)
{
  adw_view_stack_set_visible_child_name (self->views, name);
}

/* ---- for tests (wick-window-private.h) ---- */

GtkWidget *
wick_window_get_view (WickWindow *self, const char *name)
{
  if (g_strcmp0 (name, "timeline") == 0)
    return self->timeline;
  if (g_strcmp0 (name, "memory") == 0)
    return self->memory;
  if (g_strcmp0 (name, "coverage") == 0)
    return self->coverage;
  if (g_strcmp0 (name, "health") == 0)
    return self->health;
  if (g_strcmp0 (name, "costs") == 0)
    return self->costs;
  if (g_strcmp0 (name, "details") == 0)
    return self->details;
  if (g_strcmp0 (name, "gpu-overview") == 0)
    return self->gpu_overview;
  if (g_strcmp0 (name, "kernels") == 0)
    return self->kernels;
  if (g_strcmp0 (name, "operators") == 0)
    return self->operators;
  if (g_strcmp0 (name, "hint") == 0)
    return self->hint;
  /* a page added with wick_window_add_page (Ranks, the live pages) */
  return name ? adw_view_stack_get_child_by_name (self->views, name) : NULL;
}

const char *
wick_window_get_state (WickWindow *self)
{
  return gtk_stack_get_visible_child_name (self->main_stack);
}

guint
wick_window_get_n_banners (WickWindow *self)
{
  return g_hash_table_size (self->banner_widgets);
}

void
wick_window_search (WickWindow *self, const char *text)
{
  gtk_search_bar_set_search_mode (self->search_bar, text != NULL);
  if (text == NULL)
    text = "";
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text);
  on_search_changed (self->search_entry, self);
}

GtkSearchBar *
wick_window_get_search_bar (WickWindow *self)
{
  return self->search_bar;
}

GtkSearchEntry *
wick_window_get_search_entry (WickWindow *self)
{
  return self->search_entry;
}

const char *
wick_window_get_visible_view (WickWindow *self)
{
  return adw_view_stack_get_visible_child_name (self->views);
}

const char *
wick_window_get_match_text (WickWindow *self)
{
  return gtk_label_get_text (self->match_label);
}

double
wick_window_get_progress (WickWindow *self)
{
  return wick_window_loading_get_fraction (self->loading);
}

void
wick_window_cancel_load (WickWindow *self)
{
  wick_window_loading_cancel (self->loading);
}

guint
wick_window_get_n_loads_in_flight (void)
{
  return wick_window_loading_get_n_in_flight ();
}

gboolean
wick_window_export_view (WickWindow *self, const char *path, GError **error)
{
  return wick_window_actions_export_view (GTK_WIDGET (self), path, error);
}

gboolean
wick_window_export_trace (WickWindow *self, GFile *file, GError **error)
{
  return wick_window_actions_export_trace (GTK_WIDGET (self), file, error);
}

void
wick_window_export_trace_async (WickWindow *self, GFile *file, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  wick_window_actions_export_trace_async (GTK_WIDGET (self), file, cancellable, callback,
                                          user_data);
}

gboolean
wick_window_export_trace_finish (WickWindow *self, GAsyncResult *result, GError **error)
{
  return wick_window_actions_export_trace_finish (GTK_WIDGET (self), result, error);
}

gboolean
wick_window_get_exporting (WickWindow *self)
{
  return wick_window_actions_get_exporting (GTK_WIDGET (self));
}

guint
wick_window_get_n_recent (WickWindow *self)
{
  guint n = 0;
  for (GtkWidget *row = gtk_widget_get_first_child (self->recent_list); row;
       row = gtk_widget_get_next_sibling (row))
    n++;
  return gtk_widget_get_visible (self->recent_list) ? n : 0;
}
