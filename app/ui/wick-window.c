/* wick-window.c — see wick-window.h for the contract. */
#include "config.h"

#include "wick-window.h"
#include "wick-window-private.h"

#include <glib/gi18n.h>

#include "wick-application.h"
#include "wick-costs-page.h"
#include "wick-coverage-page.h"
#include "wick-details-pane.h"
#include "wick-health-page.h"
#include "wick-memory-view.h"
#include "model/wick-chrome-import.h"
#include "model/wick-span-costs.h"
#include "wick-render.h"
#include "wick-settings.h"
#include "wick-timeline-overview.h"
#include "wick-timeline-view.h"

struct _WickWindow
{
  AdwApplicationWindow parent_instance;

  /* template */
  AdwToastOverlay *toasts;
  AdwViewSwitcherTitle *switcher_title;
  GtkStack *title_stack;
  AdwHeaderBar *header;
  GtkWidget *banners;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkWidget *search_button;
  GtkLabel *match_label;
  GtkStack *main_stack;
  AdwStatusPage *loading_page;
  GtkProgressBar *progress;
  GtkWidget *cancel_button;
  GtkPaned *paned;
  AdwViewStack *views;
  GtkWidget *details_button;
  GtkWidget *hint;
  guint focus_source;
  GtkWidget *recent_list;
  GtkWidget *recent_label;

  /* views */
  WickSelection *selection;
  GtkWidget *timeline;
  GtkWidget *follow_button;
  GtkWidget *overview;
  GtkWidget *memory;
  GtkWidget *coverage;
  GtkWidget *health;
  GtkWidget *costs;
  GtkWidget *details;

  WickDocument *document;
  gulong changed_handler;
  guint changed_source;
  GCancellable *load_cancellable;
  guint progress_source;
  gint progress_permille; /* atomic */
  guint n_matches;
  gboolean live;
  GHashTable *banner_widgets; /* id -> GtkWidget */
  WickSaveHandler save_handler;
  gpointer save_data;
  GDestroyNotify save_destroy;
};

G_DEFINE_FINAL_TYPE (WickWindow, wick_window, ADW_TYPE_APPLICATION_WINDOW)

static void update_actions (WickWindow *self);

/* ---- document ---- */

/* What the views derive from a document, built on the loader's thread so
 * that a large trace does not freeze the window after loading either. */
typedef struct
{
  WickTimelineScene *scene;
  WickMemoryChart *chart;
  GArray *costs;
} Derived;

static void
derived_clear (Derived *derived)
{
  g_clear_pointer (&derived->scene, wick_timeline_scene_free);
  g_clear_pointer (&derived->chart, wick_memory_chart_free);
  g_clear_pointer (&derived->costs, g_array_unref);
}

static void
derived_build (Derived *derived, WickDocument *document, GCancellable *cancellable)
{
  if (!g_cancellable_is_cancelled (cancellable))
    derived->scene = wick_timeline_scene_new (document);
  if (!g_cancellable_is_cancelled (cancellable))
    derived->chart = wick_memory_chart_new (document);
  if (!g_cancellable_is_cancelled (cancellable))
    {
      g_autoptr (WickSpanIndex) index = wick_span_index_new (document);
      derived->costs = wick_span_costs_by_name (document, index);
    }
}

static void
views_set_document (WickWindow *self, WickDocument *document, Derived *derived)
{
  Derived none = { 0 };
  if (derived == NULL)
    derived = &none;
  wick_timeline_view_set_document_full (WICK_TIMELINE_VIEW (self->timeline), document,
                                        g_steal_pointer (&derived->scene));
  wick_memory_view_set_document_full (WICK_MEMORY_VIEW (self->memory), document,
                                      g_steal_pointer (&derived->chart));
  wick_coverage_page_set_document (WICK_COVERAGE_PAGE (self->coverage), document);
  wick_health_page_set_document (WICK_HEALTH_PAGE (self->health), document);
  wick_costs_page_set_document_full (WICK_COSTS_PAGE (self->costs), document,
                                     g_steal_pointer (&derived->costs));
  wick_details_pane_set_document (WICK_DETAILS_PANE (self->details), document);
}

static gboolean
flush_changed (gpointer user_data)
{
  WickWindow *self = user_data;
  self->changed_source = 0;
  if (self->document == NULL)
    return G_SOURCE_REMOVE;
  wick_timeline_view_document_changed (WICK_TIMELINE_VIEW (self->timeline));
  wick_memory_view_document_changed (WICK_MEMORY_VIEW (self->memory));
  wick_coverage_page_document_changed (WICK_COVERAGE_PAGE (self->coverage));
  wick_health_page_document_changed (WICK_HEALTH_PAGE (self->health));
  wick_costs_page_document_changed (WICK_COSTS_PAGE (self->costs));
  return G_SOURCE_REMOVE;
}

void
wick_window_document_changed (WickWindow *self)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  /* The timeline redraws every frame; tables requery at most 4 times a second. */
  wick_timeline_view_document_changed (WICK_TIMELINE_VIEW (self->timeline));
  wick_memory_view_document_changed (WICK_MEMORY_VIEW (self->memory));
  gtk_widget_queue_draw (self->overview);
  if (self->changed_source == 0)
    self->changed_source = g_timeout_add (250, flush_changed, self);
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

static void set_document_derived (WickWindow *self, WickDocument *document, Derived *derived);

void
wick_window_set_document (WickWindow *self, WickDocument *document)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  set_document_derived (self, document, NULL);
}

static void
set_document_derived (WickWindow *self, WickDocument *document, Derived *derived)
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
  update_actions (self);
}

WickDocument *
wick_window_get_document (WickWindow *self)
{
  return self->document;
}

gboolean
wick_window_is_empty (WickWindow *self)
{
  return self->document == NULL && self->load_cancellable == NULL;
}

WickSelection *
wick_window_get_selection (WickWindow *self)
{
  return self->selection;
}

/* ---- loading ---- */

typedef struct
{
  char *path;
  WickDocument *document;
  GError *error;
  gint *permille; /* the window's atomic progress counter */
  Derived derived;
} LoadJob;

static void
load_job_free (LoadJob *job)
{
  g_free (job->path);
  derived_clear (&job->derived);
  g_clear_object (&job->document);
  g_clear_error (&job->error);
  g_free (job);
}

static void
on_progress (double fraction, gpointer user_data)
{
  LoadJob *job = user_data;
  g_atomic_int_set (job->permille, (gint)(CLAMP (fraction, 0, 1) * 1000));
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadJob *job = task_data;
  job->document = wick_document_new_with_extensions (TRUE);
  wick_document_load_file_auto (job->document, job->path, cancellable, on_progress, job,
                                &job->error);
  const WickParseError *parse = wick_document_get_parse_error (job->document);
  if (job->error == NULL || (parse && parse->failed))
    derived_build (&job->derived, job->document, cancellable);
  /* Cancelled after the file was read: still a cancellation for the user. */
  if (job->error == NULL && g_cancellable_is_cancelled (cancellable))
    g_set_error_literal (&job->error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
  g_task_return_boolean (task, TRUE);
}

static gboolean
poll_progress (gpointer user_data)
{
  WickWindow *self = user_data;
  gint permille = g_atomic_int_get (&self->progress_permille);
  gtk_progress_bar_set_fraction (self->progress, permille / 1000.0);
  g_autofree char *text = g_strdup_printf ("%.1f %%", permille / 10.0);
  gtk_progress_bar_set_text (self->progress, text);
  return G_SOURCE_CONTINUE;
}

static void
add_recent (WickWindow *self, const char *path)
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
on_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  WickWindow *self = WICK_WINDOW (source);
  LoadJob *job = g_task_get_task_data (G_TASK (result));
  g_clear_handle_id (&self->progress_source, g_source_remove);
  g_clear_object (&self->load_cancellable);

  if (job->error && g_error_matches (job->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      gtk_stack_set_visible_child_name (self->main_stack, self->document ? "document" : "welcome");
      wick_window_add_toast (self, adw_toast_new (_ ("Loading cancelled")));
      update_actions (self);
      return;
    }
  const WickParseError *parse = wick_document_get_parse_error (job->document);
  if (job->error && !(parse && parse->failed))
    {
      gtk_stack_set_visible_child_name (self->main_stack, self->document ? "document" : "welcome");
      g_autofree char *message
        = g_strdup_printf (_ ("Could not open %s: %s"), job->path, job->error->message);
      AdwToast *toast = adw_toast_new (message);
      adw_toast_set_timeout (toast, 0);
      wick_window_add_toast (self, toast);
      update_actions (self);
      return;
    }
  add_recent (self, job->path);
  set_document_derived (self, job->document, &job->derived);
}

void
wick_window_load_file (WickWindow *self, GFile *file)
{
  g_return_if_fail (WICK_IS_WINDOW (self));
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_autofree char *path = g_file_get_path (file);
  if (path == NULL)
    {
      wick_window_add_toast (self, adw_toast_new (_ ("Only local files can be opened")));
      return;
    }
  LoadJob *job = g_new0 (LoadJob, 1);
  job->path = g_strdup (path);
  job->permille = &self->progress_permille;
  g_atomic_int_set (&self->progress_permille, 0);
  self->load_cancellable = g_cancellable_new ();
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *title = g_strdup_printf (_ ("Loading %s…"), base);
  adw_status_page_set_title (self->loading_page, title);
  adw_status_page_set_description (self->loading_page, path);
  gtk_progress_bar_set_fraction (self->progress, 0);
  gtk_stack_set_visible_child_name (self->main_stack, "loading");
  self->progress_source = g_timeout_add (50, poll_progress, self);
  GTask *task = g_task_new (self, self->load_cancellable, on_loaded, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify)load_job_free);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
  update_actions (self);
}

static void
on_cancel_clicked (GtkButton *button, WickWindow *self)
{
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
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
  /* Typing in the query never switches views: Enter (activate) goes to the
   * timeline's next match. */
  update_match_label (self, self->n_matches, -1);
}

static void
step_match (WickWindow *self, int direction)
{
  gint current = wick_timeline_view_step_match (WICK_TIMELINE_VIEW (self->timeline), direction);
  update_match_label (self, self->n_matches, current);
}

static void
on_search_activate (GtkSearchEntry *entry, WickWindow *self)
{
  if (self->n_matches > 0)
    adw_view_stack_set_visible_child_name (self->views, "timeline");
  step_match (self, 1);
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
  step_match (self, 1);
}

/* ---- export ---- */

static WickRenderView
current_render_view (WickWindow *self, gboolean *supported)
{
  const char *name = adw_view_stack_get_visible_child_name (self->views);
  WickRenderView view = WICK_RENDER_TIMELINE;
  *supported = wick_render_view_from_string (name, &view);
  if (g_strcmp0 (name, "costs") == 0)
    *supported = FALSE;
  return view;
}

gboolean
wick_window_export_view (WickWindow *self, const char *path, GError **error)
{
  gboolean supported;
  WickRenderView view = current_render_view (self, &supported);
  if (!supported || self->document == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           _ ("This view cannot be exported; switch to the timeline, memory, "
                              "coverage or health view"));
      return FALSE;
    }
  /* The view as it is on screen: its size, its time range, its style. */
  GtkWidget *visible = adw_view_stack_get_visible_child (self->views);
  WickRenderOptions options = { view,
                                MAX (gtk_widget_get_width (visible), 400),
                                MAX (gtk_widget_get_height (visible), 300),
                                0,
                                0,
                                adw_style_manager_get_dark (adw_style_manager_get_default ()) };
  if (view == WICK_RENDER_TIMELINE || view == WICK_RENDER_MEMORY)
    wick_selection_get_visible (self->selection, &options.start_ns, &options.end_ns);
  return wick_render_to_file (self->document, &options, path, error);
}

static void
on_export_response (GtkNativeDialog *dialog, int response, WickWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT && self->document)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = g_file_get_path (file);
      g_autoptr (GError) error = NULL;
      g_autofree char *message = NULL;
      if (wick_window_export_view (self, path, &error))
        message = g_strdup_printf (_ ("Exported to %s"), path);
      else
        message = g_strdup (error->message);
      wick_window_add_toast (self, adw_toast_new (message));
    }
  g_object_unref (dialog);
}

static void
action_export (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  gboolean supported;
  WickRenderView view = current_render_view (self, &supported);
  if (!supported)
    {
      wick_window_add_toast (self, adw_toast_new (_ ("This view cannot be exported; switch to the "
                                                     "timeline, memory, coverage or health view")));
      return;
    }
  GtkFileChooserNative *dialog
    = gtk_file_chooser_native_new (_ ("Export View"), GTK_WINDOW (self),
                                   GTK_FILE_CHOOSER_ACTION_SAVE, _ ("_Export"), _ ("_Cancel"));
  g_autofree char *name = g_strdup_printf ("%s.png", wick_render_view_to_string (view));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  const char *patterns[][2] = { { N_ ("PNG image"), "*.png" },
                                { N_ ("SVG image"), "*.svg" },
                                { N_ ("PDF document"), "*.pdf" } };
  for (guint i = 0; i < G_N_ELEMENTS (patterns); i++)
    {
      GtkFileFilter *filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _ (patterns[i][0]));
      gtk_file_filter_add_pattern (filter, patterns[i][1]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
      g_object_unref (filter);
    }
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- actions ---- */

static void
action_search (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
action_find_next (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  step_match (user_data, 1);
}

static void
action_find_previous (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  step_match (user_data, -1);
}

static void
action_zoom_in (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  wick_timeline_view_zoom (
    WICK_TIMELINE_VIEW (self->timeline), 0.7,
    WICK_TIMELINE_GUTTER + (gtk_widget_get_width (self->timeline) - WICK_TIMELINE_GUTTER) / 2.0);
}

static void
action_zoom_out (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  wick_timeline_view_zoom (
    WICK_TIMELINE_VIEW (self->timeline), 1 / 0.7,
    WICK_TIMELINE_GUTTER + (gtk_widget_get_width (self->timeline) - WICK_TIMELINE_GUTTER) / 2.0);
}

static void
action_zoom_fit (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), FALSE);
  wick_timeline_view_zoom_to_fit (WICK_TIMELINE_VIEW (self->timeline));
}

static void
action_zoom_selection (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  guint64 start, end;
  wick_selection_get_range (self->selection, &start, &end);
  if (end > start)
    {
      wick_timeline_view_set_follow (WICK_TIMELINE_VIEW (self->timeline), FALSE);
      wick_selection_set_visible (self->selection, start, end);
    }
}

static void
action_show_page (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  wick_window_show_page (user_data, g_variant_get_string (parameter, NULL));
}

static void
action_follow (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  wick_window_set_follow_newest (user_data, TRUE);
}

static void
action_save_as (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  if (self->save_handler)
    self->save_handler (self, self->save_data);
}

static const GActionEntry window_actions[] = {
  { "export", action_export },
  { "search", action_search },
  { "find-next", action_find_next },
  { "find-previous", action_find_previous },
  { "zoom-in", action_zoom_in },
  { "zoom-out", action_zoom_out },
  { "zoom-fit", action_zoom_fit },
  { "zoom-selection", action_zoom_selection },
  { "show-page", action_show_page, "s" },
  { "follow", action_follow },
  { "save-as", action_save_as },
};

static void
set_action_enabled (WickWindow *self, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  if (action)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

static void
update_actions (WickWindow *self)
{
  gboolean has_doc = self->document != NULL;
  const char *doc_actions[]
    = { "export",   "search",   "find-next",      "find-previous", "zoom-in",
        "zoom-out", "zoom-fit", "zoom-selection", "show-page" };
  for (guint i = 0; i < G_N_ELEMENTS (doc_actions); i++)
    set_action_enabled (self, doc_actions[i], has_doc);
  set_action_enabled (self, "follow", has_doc && self->live);
  set_action_enabled (self, "save-as", self->save_handler != NULL);
  gtk_widget_set_visible (self->search_button, has_doc);
  gtk_widget_set_visible (self->details_button, has_doc);
}

/* ---- drag and drop ---- */

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, WickWindow *self)
{
  GSList *files = g_value_get_boxed (value);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  for (GSList *l = files; l; l = l->next)
    wick_application_open_file (WICK_APPLICATION (app), l->data, GTK_WINDOW (self));
  return files != NULL;
}

/* ---- recent ---- */

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

/* ---- construction ---- */

static GtkWidget *
zoom_button (const char *icon, const char *tooltip, const char *action)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);
  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action);
  return button;
}

/* Zoom buttons and a one-line hint, so the mouse-only user finds them. */
static GtkWidget *
build_zoom_controls (WickWindow *self)
{
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_add_css_class (bar, "wick-zoom-bar");
  gtk_widget_set_halign (bar, GTK_ALIGN_START);
  gtk_widget_set_valign (bar, GTK_ALIGN_END);
  gtk_widget_set_margin_start (bar, 12);
  gtk_widget_set_margin_bottom (bar, 12);
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class (buttons, "linked");
  gtk_box_append (
    GTK_BOX (buttons),
    zoom_button ("zoom-out-symbolic", _ ("Zoom out (−, S, Ctrl+scroll)"), "win.zoom-out"));
  gtk_box_append (GTK_BOX (buttons), zoom_button ("zoom-fit-best-symbolic",
                                                  _ ("Show the whole trace (0)"), "win.zoom-fit"));
  gtk_box_append (
    GTK_BOX (buttons),
    zoom_button ("zoom-in-symbolic", _ ("Zoom in (+, W, Ctrl+scroll)"), "win.zoom-in"));
  gtk_box_append (GTK_BOX (bar), buttons);
  GtkWidget *hint = gtk_label_new (
    _ ("Drag to pan · Shift+drag selects a range · Double-click zooms to a span · Ctrl+F finds"));
  gtk_widget_add_css_class (hint, "dim-label");
  gtk_widget_add_css_class (hint, "caption");
  /* A narrow window shortens the hint instead of cutting it off or
   * widening the window; the tooltip keeps the whole sentence. */
  gtk_label_set_ellipsize (GTK_LABEL (hint), PANGO_ELLIPSIZE_END);
  gtk_widget_set_tooltip_text (hint, gtk_label_get_text (GTK_LABEL (hint)));
  gtk_widget_set_hexpand (hint, TRUE);
  self->hint = hint;
  gtk_box_append (GTK_BOX (bar), hint);
  return bar;
}

static GtkWidget *
build_timeline_page (WickWindow *self)
{
  self->timeline = wick_timeline_view_new (self->selection);
  GtkWidget *overlay = gtk_overlay_new ();
  gtk_overlay_set_child (GTK_OVERLAY (overlay), self->timeline);
  self->follow_button = gtk_button_new_with_mnemonic (_ ("_Follow Newest"));
  gtk_widget_set_tooltip_text (self->follow_button, _ ("Keep the newest records in view"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->follow_button), "win.follow");
  gtk_widget_add_css_class (self->follow_button, "suggested-action");
  gtk_widget_add_css_class (self->follow_button, "pill");
  gtk_widget_set_halign (self->follow_button, GTK_ALIGN_END);
  gtk_widget_set_valign (self->follow_button, GTK_ALIGN_END);
  gtk_widget_set_margin_end (self->follow_button, 18);
  gtk_widget_set_margin_bottom (self->follow_button, 18);
  gtk_widget_set_visible (self->follow_button, FALSE);
  gtk_overlay_add_overlay (GTK_OVERLAY (overlay), self->follow_button);
  gtk_overlay_add_overlay (GTK_OVERLAY (overlay), build_zoom_controls (self));
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->overview
    = wick_timeline_overview_new (WICK_TIMELINE_VIEW (self->timeline), self->selection);
  gtk_widget_set_tooltip_text (self->overview,
                               _ ("The whole trace: click or drag to move the view"));
  gtk_box_append (GTK_BOX (box), self->overview);
  gtk_box_append (GTK_BOX (box), overlay);
  return box;
}

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
  gint64 index;
  WickRecordType type = wick_selection_get_record (selection, &index);
  guint64 t = 0, dur = 0;
  if (type == WICK_RECORD_SPAN)
    {
      const WickSpan *span = &wick_document_get_spans (self->document, NULL)[index];
      t = span->start_ns;
      dur = span->duration_ns;
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

static void
add_builtin_pages (WickWindow *self)
{
  AdwViewStackPage *page;
  page = adw_view_stack_add_titled (self->views, build_timeline_page (self), "timeline",
                                    _ ("Timeline"));
  adw_view_stack_page_set_icon_name (page, "view-paged-symbolic");
  self->memory = wick_memory_view_new (self->selection);
  page = adw_view_stack_add_titled (self->views, self->memory, "memory", _ ("Memory"));
  adw_view_stack_page_set_icon_name (page, "drive-harddisk-symbolic");
  self->coverage = wick_coverage_page_new (self->selection);
  page = adw_view_stack_add_titled (self->views, self->coverage, "coverage", _ ("Coverage"));
  adw_view_stack_page_set_icon_name (page, "emblem-ok-symbolic");
  self->health = wick_health_page_new (self->selection);
  page = adw_view_stack_add_titled (self->views, self->health, "health", _ ("Health"));
  adw_view_stack_page_set_icon_name (page, "dialog-warning-symbolic");
  self->costs = wick_costs_page_new (self->selection);
  page = adw_view_stack_add_titled (self->views, self->costs, "costs", _ ("Costs"));
  adw_view_stack_page_set_icon_name (page, "view-list-symbolic");
  g_signal_connect (self->costs, "search-name", G_CALLBACK (on_costs_search_name), self);
  g_signal_connect (self->timeline, "notify::follow", G_CALLBACK (on_follow_notify), self);

  self->details = wick_details_pane_new (self->selection);
  /* Narrow enough for a 700 px window to keep the timeline's labels. */
  gtk_widget_set_size_request (self->details, 180, -1);
  gtk_paned_set_end_child (self->paned, self->details);
  g_object_bind_property (self->details_button, "active", self->details, "visible",
                          G_BINDING_SYNC_CREATE);
  g_signal_connect (self->selection, "changed", G_CALLBACK (on_selection_record), self);
  g_signal_connect (self->views, "notify::visible-child", G_CALLBACK (on_visible_view), self);
}

static void
wick_window_dispose (GObject *object)
{
  WickWindow *self = WICK_WINDOW (object);
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_handle_id (&self->progress_source, g_source_remove);
  g_clear_handle_id (&self->changed_source, g_source_remove);
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
  g_clear_object (&self->selection);
}

static gboolean
wick_window_close_request (GtkWindow *window)
{
  int width, height;
  gtk_window_get_default_size (window, &width, &height);
  wick_settings_save_window (width, height, gtk_window_is_maximized (window));
  return GTK_WINDOW_CLASS (wick_window_parent_class)->close_request (window);
}

static void
wick_window_class_init (WickWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_window_dispose;
  GTK_WINDOW_CLASS (klass)->close_request = wick_window_close_request;
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
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "win.toggle-details", NULL);
}

static void
action_toggle_details (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  WickWindow *self = user_data;
  gtk_toggle_button_set_active (
    GTK_TOGGLE_BUTTON (self->details_button),
    !gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->details_button)));
}

static gboolean
on_search_key (GtkEventControllerKey *controller, guint keyval, guint keycode,
               GdkModifierType state, WickWindow *self)
{
  if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter) && (state & GDK_SHIFT_MASK))
    {
      step_match (self, -1);
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

/* View options live in GSettings: the details pane's visibility and the op
 * ticks (a check item in the main menu, win.show-ops). */
static void
bind_view_options (WickWindow *self)
{
  GSettings *settings = wick_settings_get ();
  if (settings == NULL)
    return;
  g_settings_bind (settings, "show-details", self->details_button, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_autoptr (GAction) show_ops = g_settings_create_action (settings, "show-ops");
  g_action_map_add_action (G_ACTION_MAP (self), show_ops);
  g_signal_connect_object (settings, "changed::show-ops", G_CALLBACK (on_show_ops_changed), self,
                           0);
  on_show_ops_changed (settings, "show-ops", self);
}

static void
wick_window_init (WickWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->selection = wick_selection_new ();
  self->banner_widgets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_action_map_add_action_entries (G_ACTION_MAP (self), window_actions,
                                   G_N_ELEMENTS (window_actions), self);
  GSimpleAction *toggle = g_simple_action_new ("toggle-details", NULL);
  g_signal_connect (toggle, "activate", G_CALLBACK (action_toggle_details), self);
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (toggle));
  g_object_unref (toggle);
  add_builtin_pages (self);

  g_signal_connect (self->cancel_button, "clicked", G_CALLBACK (on_cancel_clicked), self);
  g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);
  g_signal_connect (self->search_entry, "activate", G_CALLBACK (on_search_activate), self);
  g_signal_connect (self->search_entry, "stop-search", G_CALLBACK (on_search_stop), self);
  g_signal_connect (self->search_bar, "notify::search-mode-enabled",
                    G_CALLBACK (on_search_mode_changed), self);
  GtkEventController *keys = gtk_event_controller_key_new ();
  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_search_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search_entry), keys);
  gtk_search_bar_set_key_capture_widget (self->search_bar, NULL);
  g_signal_connect (self->recent_list, "row-activated", G_CALLBACK (on_recent_activated), self);

  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  bind_view_options (self);
  int width, height;
  gboolean maximized;
  if (wick_settings_get_window (&width, &height, &maximized))
    {
      gtk_window_set_default_size (GTK_WINDOW (self), width, height);
      if (maximized)
        gtk_window_maximize (GTK_WINDOW (self));
    }
  gtk_paned_set_position (self->paned, MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1400) - 340);
  fill_recent (self);
  update_actions (self);
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
  update_actions (self);
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
  AdwViewStackPage *page = adw_view_stack_add_titled (self->views, widget, name, title);
  if (icon_name)
    adw_view_stack_page_set_icon_name (page, icon_name);
}

void
wick_window_add_header_widget (WickWindow *self, GtkWidget *widget)
{
  adw_header_bar_pack_end (self->header, widget);
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
  update_actions (self);
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
  if (g_strcmp0 (name, "hint") == 0)
    return self->hint;
  return NULL;
}

const char *
wick_window_get_state (WickWindow *self)
{
  return gtk_stack_get_visible_child_name (self->main_stack);
}

double
wick_window_get_progress (WickWindow *self)
{
  return g_atomic_int_get (&self->progress_permille) / 1000.0;
}

void
wick_window_cancel_load (WickWindow *self)
{
  on_cancel_clicked (NULL, self);
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

guint
wick_window_get_n_recent (WickWindow *self)
{
  guint n = 0;
  for (GtkWidget *row = gtk_widget_get_first_child (self->recent_list); row;
       row = gtk_widget_get_next_sibling (row))
    n++;
  return gtk_widget_get_visible (self->recent_list) ? n : 0;
}
