/* test-app-gpu-pages.c — the GPU pages of a real torch 2.11 trace (H200,
 * torch.compile, tests/data/gpu/README.md): Kernels and Operators tables
 * (shown only with GPU work; every column sorts; the filter; a row's
 * instances become the timeline's matches and the previous/next buttons
 * step through them; Ctrl+C and the menu copy TSV) and the Overview (the
 * step table's parts add up to each step, the chart's bars map to steps,
 * the launch figures). Each check compares with the analysis's own arrays
 * or the file's figures, not with what the page shows.
 * With WICK_SCREENSHOT_DIR set, the pages as PNGs there (docs/images).
 * Suite: app, under Xvfb. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app-test-ui.h"
#include "model/wick-gpu-analysis.h"
#include "ui/wick-application.h"
#include "ui/wick-details-pane.h"
#include "ui/wick-details-pane-private.h"
#include "ui/wick-format.h"
#include "ui/wick-gpu-pages.h"
#include "ui/wick-gpu-pages-private.h"
#include "ui/wick-record-text.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-window-private.h"
#include "ui/wick-table-private.h"

static WickApplication *app;

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  return g_build_filename (dir ? dir : WICK_SOURCE_DIR "/tests/data", "gpu", name, NULL);
}

static gboolean
page_visible (WickWindow *w, const char *name)
{
  GtkWidget *child = wick_window_get_view (w, name);
  g_assert_nonnull (child);
  GtkWidget *stack = gtk_widget_get_ancestor (child, ADW_TYPE_VIEW_STACK);
  return adw_view_stack_page_get_visible (adw_view_stack_get_page (ADW_VIEW_STACK (stack), child));
}

static char *
clipboard_text (GtkWidget *widget)
{
  GdkContentProvider *content = gdk_clipboard_get_content (gtk_widget_get_clipboard (widget));
  g_assert_nonnull (content);
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_TYPE_STRING);
  g_autoptr (GError) error = NULL;
  g_assert_true (gdk_content_provider_get_value (content, &value, &error));
  char *text = g_value_dup_string (&value);
  g_value_unset (&value);
  return text;
}

/* The values of kernel row @index that column @c sorts by, compared. */
static int
kernel_cmp (WickDocument *doc, const WickGpuKernel *a, const WickGpuKernel *b, guint c)
{
#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y))
  switch (c)
    {
      case 0:
        return g_strcmp0 (wick_document_str (doc, a->name), wick_document_str (doc, b->name));
      case 1:
        return CMP (a->count, b->count);
      case 2:
        return CMP (a->total_ns, b->total_ns);
      case 3:
        return CMP (a->mean_ns, b->mean_ns);
      case 4:
        return CMP (a->min_ns, b->min_ns);
      case 5:
        return CMP (a->max_ns, b->max_ns);
      case 6:
        return CMP (a->share, b->share);
      case 7:
        return g_strcmp0 (wick_document_str (doc, a->grid), wick_document_str (doc, b->grid));
      case 8:
        return g_strcmp0 (wick_document_str (doc, a->block), wick_document_str (doc, b->block));
      default:
        return CMP (a->registers, b->registers);
    }
#undef CMP
}

static guint
count_widgets (GtkWidget *widget)
{
  guint n = 1;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    n += count_widgets (c);
  return n;
}

static void
test_kernels (void)
{
  g_autofree char *path = data_path ("torch-compile.json.gz");
  WickWindow *w = app_test_window_open (app, path, 1400, 860);
  WickDocument *doc = wick_window_get_document (w);
  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
  g_assert_true (page_visible (w, "kernels"));
  g_assert_true (page_visible (w, "operators"));
  g_assert_true (page_visible (w, "gpu-overview"));

  GtkWidget *page = wick_window_get_view (w, "kernels");
  wick_window_show_page (w, "kernels");
  WickTable *table = wick_gpu_table_page_get_table (WICK_GPU_TABLE_PAGE (page));
  app_test_wait_drawn (page, 20000, "the Kernels page");
  g_assert_cmpuint (a->kernels->len, >, 10);
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, a->kernels->len);
  /* grid, block and registers: the trace has them (Kineto's launch args) */
  g_assert_cmpuint (wick_table_get_n_columns (table), ==, 10);

  /* every column sorts, both ways */
  for (guint c = 0; c < 10; c++)
    for (int desc = 0; desc < 2; desc++)
      {
        wick_table_sort_by (table, c, desc);
        guint prev = G_MAXUINT;
        for (guint p = 0; p < wick_table_get_n_shown (table); p++)
          {
            guint kind, index;
            g_assert_true (wick_table_get_shown (table, p, &kind, &index));
            if (prev != G_MAXUINT)
              {
                int order = kernel_cmp (doc, &g_array_index (a->kernels, WickGpuKernel, prev),
                                        &g_array_index (a->kernels, WickGpuKernel, index), c);
                if (desc ? order < 0 : order > 0)
                  g_error ("column %u %s: row %u before row %u out of order", c,
                           desc ? "descending" : "ascending", prev, index);
              }
            prev = index;
          }
      }
  wick_table_sort_by (table, 2, TRUE);

  /* the filter: every kernel whose name contains "triton", ignoring case */
  guint want = 0;
  for (guint i = 0; i < a->kernels->len; i++)
    {
      g_autofree char *folded = g_utf8_casefold (
        wick_document_str (doc, g_array_index (a->kernels, WickGpuKernel, i).name), -1);
      want += strstr (folded, "triton") != NULL;
    }
  g_assert_cmpuint (want, >, 0);
  wick_gpu_table_page_set_filter (WICK_GPU_TABLE_PAGE (page), "TRITON");
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, want);
  wick_gpu_table_page_set_filter (WICK_GPU_TABLE_PAGE (page), "");
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, a->kernels->len);

  /* a row selects its instances: the timeline's matches, the first selected */
  guint kind, row;
  GtkSelectionModel *model = wick_table_get_model (table);
  g_assert_true (wick_table_get_shown (table, 0, &kind, &row));
  const WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, row);
  g_assert_cmpuint (k->count, >, 2);
  gtk_selection_model_select_item (model, 0, TRUE);
  WickSelection *selection = wick_window_get_selection (w);
  gint64 event;
  g_assert_cmpuint (wick_selection_get_event (selection, &event), ==, WICK_EVENT_DEVICE);
  g_assert_cmpint (a->kernel_of_device[event], ==, (gint)row);
  g_autofree char *first = g_strdup_printf ("1 of %" G_GUINT64_FORMAT " on the timeline", k->count);
  g_assert_cmpstr (wick_gpu_table_page_get_position_text (WICK_GPU_TABLE_PAGE (page)), ==, first);
  WickTracks *tracks = wick_document_get_tracks (doc);
  guint64 t0 = wick_tracks_event_start (tracks, (WickEventRef){ WICK_EVENT_DEVICE, event });
  /* next: another instance of the same kernel, later */
  g_signal_emit_by_name (page, "step", 1);
  gint64 next;
  g_assert_cmpuint (wick_selection_get_event (selection, &next), ==, WICK_EVENT_DEVICE);
  g_assert_cmpint (next, !=, event);
  g_assert_cmpint (a->kernel_of_device[next], ==, (gint)row);
  g_assert_cmpuint (wick_tracks_event_start (tracks, (WickEventRef){ WICK_EVENT_DEVICE, next }),
                    >=, t0);
  g_autofree char *second
    = g_strdup_printf ("2 of %" G_GUINT64_FORMAT " on the timeline", k->count);
  g_assert_cmpstr (wick_gpu_table_page_get_position_text (WICK_GPU_TABLE_PAGE (page)), ==, second);
  /* previous twice: wraps to the last */
  g_signal_emit_by_name (page, "step", -1);
  g_signal_emit_by_name (page, "step", -1);
  g_autofree char *last = g_strdup_printf ("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                           " on the timeline",
                                           k->count, k->count);
  g_assert_cmpstr (wick_gpu_table_page_get_position_text (WICK_GPU_TABLE_PAGE (page)), ==, last);
  /* the instances are exactly the kernel's slices */
  g_autoptr (GArray) refs = wick_gpu_table_page_get_instances (WICK_GPU_TABLE_PAGE (page), row);
  g_assert_cmpuint (refs->len, ==, k->count);
  guint64 total = 0;
  for (guint i = 0; i < refs->len; i++)
    total += wick_tracks_get_device_slices (tracks, NULL)[g_array_index (refs, WickEventRef, i).index]
               .duration_ns;
  g_assert_cmpuint (total, ==, k->total_ns);

  /* TSV: the selected row (Ctrl+C's action), then every row */
  g_assert_true (gtk_widget_activate_action (page, "gpu-table.copy-row", NULL));
  g_autofree char *tsv = clipboard_text (page);
  g_auto (GStrv) lines = g_strsplit (tsv, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3); /* header, row, "" */
  g_assert_true (g_str_has_prefix (lines[0], "Kernel\tCount\tTotal (ns)\t"));
  g_auto (GStrv) cells = g_strsplit (lines[1], "\t", -1);
  g_assert_cmpuint (g_strv_length (cells), ==, 10);
  g_assert_cmpstr (cells[0], ==, wick_document_str (doc, k->name));
  g_autofree char *total_text = g_strdup_printf ("%" G_GUINT64_FORMAT, k->total_ns);
  g_assert_cmpstr (cells[2], ==, total_text);
  g_assert_true (gtk_widget_activate_action (page, "gpu-table.copy-all", NULL));
  g_autofree char *all = clipboard_text (page);
  g_auto (GStrv) all_lines = g_strsplit (all, "\n", -1);
  g_assert_cmpuint (g_strv_length (all_lines), ==, a->kernels->len + 2);

  /* Ctrl+C is bound to the copy of the selected row */
  {
    gboolean bound = FALSE;
    g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (page);
    GtkShortcutTrigger *ctrl_c = gtk_keyval_trigger_new (GDK_KEY_c, GDK_CONTROL_MASK);
    for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
      {
        g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
        if (!GTK_IS_SHORTCUT_CONTROLLER (c))
          continue;
        for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (c)); j++)
          {
            g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), j);
            GtkShortcutAction *action = gtk_shortcut_get_action (sc);
            if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (sc), ctrl_c)
                && GTK_IS_NAMED_ACTION (action)
                && g_strcmp0 (gtk_named_action_get_action_name (GTK_NAMED_ACTION (action)),
                              "gpu-table.copy-row")
                     == 0)
              bound = TRUE;
          }
      }
    g_object_unref (ctrl_c);
    g_assert_true (bound);
  }
  app_test_screenshot (GTK_WIDGET (w), "gpu-kernels.png");
  /* the table is drawn: no widget per cell (GTK 4.8's column view kept
   * 200 rows of labels, 250-350 ms before the first frame of 1 M kernels) */
  g_assert_nonnull (wick_table_get_drawn (table));
  g_assert_cmpuint (count_widgets (page), <, 60);
  /* its input, through its own controllers: a header click sorts (numbers
   * largest first, again the other way), a click selects, the keys move
   * the selection, Enter activates */
  GtkWidget *canvas = wick_table_get_drawn (table);
  GtkGesture *click = NULL;
  GtkEventController *keys = NULL;
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (canvas);
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (GTK_IS_GESTURE_CLICK (c))
        click = GTK_GESTURE (c);
      else if (GTK_IS_EVENT_CONTROLLER_KEY (c))
        keys = GTK_EVENT_CONTROLLER (c);
    }
  g_assert_nonnull (click);
  g_assert_nonnull (keys);
  double count_x = -1;
  {
    /* the Count column: right of the Kernel column, found by its order */
    for (double x = 0; x < gtk_widget_get_width (canvas) && count_x < 0; x += 4)
      {
        g_signal_emit_by_name (click, "pressed", 1, x, wick_table_get_row_y (table, G_MAXUINT));
        guint k0, r_first, r_last;
        wick_table_get_shown (table, 0, &k0, &r_first);
        wick_table_get_shown (table, wick_table_get_n_shown (table) - 1, &k0, &r_last);
        const WickGpuKernel *kf = &g_array_index (a->kernels, WickGpuKernel, r_first);
        const WickGpuKernel *kl = &g_array_index (a->kernels, WickGpuKernel, r_last);
        if (kf->count > kl->count)
          count_x = x;
      }
  }
  g_assert_cmpfloat (count_x, >, 0);
  for (guint p = 1; p < wick_table_get_n_shown (table); p++)
    {
      guint k0, prev, cur;
      wick_table_get_shown (table, p - 1, &k0, &prev);
      wick_table_get_shown (table, p, &k0, &cur);
      g_assert_cmpuint (g_array_index (a->kernels, WickGpuKernel, prev).count, >=,
                        g_array_index (a->kernels, WickGpuKernel, cur).count);
    }
  g_signal_emit_by_name (click, "pressed", 1, count_x, wick_table_get_row_y (table, G_MAXUINT));
  {
    guint k0, r_first, r_last;
    wick_table_get_shown (table, 0, &k0, &r_first);
    wick_table_get_shown (table, wick_table_get_n_shown (table) - 1, &k0, &r_last);
    g_assert_cmpuint (g_array_index (a->kernels, WickGpuKernel, r_first).count, <=,
                      g_array_index (a->kernels, WickGpuKernel, r_last).count);
  }
  g_signal_emit_by_name (click, "pressed", 1, 40.0, wick_table_get_row_y (table, 2));
  g_assert_cmpuint (wick_table_get_selected (table), ==, 2);
  gboolean handled = FALSE;
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_Down, 0, 0, &handled);
  g_assert_true (handled);
  g_assert_cmpuint (wick_table_get_selected (table), ==, 3);
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_End, 0, 0, &handled);
  g_assert_cmpuint (wick_table_get_selected (table), ==, wick_table_get_n_shown (table) - 1);
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_Home, 0, 0, &handled);
  g_assert_cmpuint (wick_table_get_selected (table), ==, 0);
  /* Enter activates the row: the timeline is shown */
  g_signal_emit_by_name (keys, "key-pressed", GDK_KEY_Return, 0, 0, &handled);
  g_assert_true (handled);
  g_assert_cmpstr (wick_window_get_visible_view (w), ==, "timeline");
  wick_window_show_page (w, "kernels");
  /* and so does wick_table_activate */
  wick_table_activate (table, 0);
  g_assert_cmpstr (wick_window_get_visible_view (w), ==, "timeline");
  app_test_window_close (w);
}

static void
test_operators_and_overview (void)
{
  g_autofree char *path = data_path ("torch-compile.json.gz");
  WickWindow *w = app_test_window_open (app, path, 1400, 860);
  WickDocument *doc = wick_window_get_document (w);
  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
  GtkWidget *page = wick_window_get_view (w, "operators");
  wick_window_show_page (w, "operators");
  app_test_wait_drawn (page, 20000, "the Operators page");
  WickTable *table = wick_gpu_table_page_get_table (WICK_GPU_TABLE_PAGE (page));
  g_assert_cmpuint (wick_table_get_n_shown (table), ==, a->operators->len);
  /* by GPU time, descending, as the analysis */
  guint kind, row;
  g_assert_true (wick_table_get_shown (table, 0, &kind, &row));
  g_assert_cmpuint (row, ==, 0);
  const WickGpuOperator *o = &g_array_index (a->operators, WickGpuOperator, row);
  g_assert_cmpuint (o->gpu_ns, >, 0);
  gtk_selection_model_select_item (wick_table_get_model (table),
                                   0, TRUE);
  WickSelection *selection = wick_window_get_selection (w);
  gint64 span;
  g_assert_cmpuint (wick_selection_get_record (selection, &span), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (a->operator_of_span[span], ==, 0);
  g_autofree char *first = g_strdup_printf ("1 of %" G_GUINT64_FORMAT " on the timeline", o->count);
  g_assert_cmpstr (wick_gpu_table_page_get_position_text (WICK_GPU_TABLE_PAGE (page)), ==, first);
  app_test_screenshot (GTK_WIDGET (w), "gpu-operators.png");

  /* Overview: one table row per step, its parts adding up to the step */
  GtkWidget *overview = wick_window_get_view (w, "gpu-overview");
  wick_window_show_page (w, "gpu-overview");
  app_test_wait_drawn (overview, 20000, "the Overview");
  WickTable *steps = wick_gpu_overview_page_get_table (WICK_GPU_OVERVIEW_PAGE (overview), "steps");
  g_assert_cmpuint (a->steps->len, >, 1);
  g_assert_cmpuint (wick_table_get_n_shown (steps), ==, a->steps->len);
  for (guint i = 0; i < a->steps->len; i++)
    {
      const WickGpuStep *s = &g_array_index (a->steps, WickGpuStep, i);
      g_assert_cmpuint (s->cpu_only_ns, <=, s->idle_ns);
      g_assert_cmpuint (s->compute_ns + s->comm_ns + s->memcpy_ns + s->idle_ns, ==, s->dur_ns);
    }
  /* the table's Duration column (ns in TSV) is each step's */
  WickTable *devices
    = wick_gpu_overview_page_get_table (WICK_GPU_OVERVIEW_PAGE (overview), "devices");
  g_assert_cmpuint (wick_table_get_n_shown (devices), ==, a->devices->len);
  g_autofree char *busy = wick_table_get_text (devices, 0, 1);
  g_autofree char *busy_want
    = wick_format_duration (g_array_index (a->devices, WickGpuDevice, 0).busy_ns);
  g_assert_cmpstr (busy, ==, busy_want);
  /* the launch figures, as the analysis counts them */
  const char *launches
    = wick_gpu_overview_page_get_launches_text (WICK_GPU_OVERVIEW_PAGE (overview));
  g_autofree char *flows = g_strdup_printf ("Launches: %" G_GUINT64_FORMAT " kernels",
                                            a->launches.flows);
  g_assert_true (g_str_has_prefix (launches, flows));
  /* the launch-bound stretches: their count, and the longest's button
   * selects its range */
  const char *waiting
    = wick_gpu_overview_page_get_waiting_text (WICK_GPU_OVERVIEW_PAGE (overview));
  g_autofree char *waiting_want = g_strdup_printf (
    "GPU waiting on launches: %" G_GUINT64_FORMAT " stretches", a->n_stretches);
  g_assert_cmpuint (a->n_stretches, >, 0);
  g_assert_true (g_str_has_prefix (waiting, waiting_want));
  GtkWidget *stretch
    = wick_gpu_overview_page_get_stretch_button (WICK_GPU_OVERVIEW_PAGE (overview), 0);
  g_assert_nonnull (stretch);
  g_signal_emit_by_name (stretch, "clicked");
  {
    const WickGpuStretch *st = &g_array_index (a->longest, WickGpuStretch, 0);
    guint64 rs, re;
    wick_selection_get_range (selection, &rs, &re);
    g_assert_cmpuint (rs, ==, st->start_ns);
    g_assert_cmpuint (re, ==, st->end_ns);
  }
  /* the chart: a bar per step, left to right; a click selects the step */
  GtkWidget *chart = NULL;
  for (GtkWidget *c = gtk_widget_get_first_child (gtk_widget_get_first_child (overview)); c;
       c = gtk_widget_get_next_sibling (c))
    if (GTK_IS_DRAWING_AREA (c))
      chart = c;
  g_assert_nonnull (chart);
  int width = gtk_widget_get_width (chart);
  g_assert_cmpint (wick_gpu_overview_page_step_at (WICK_GPU_OVERVIEW_PAGE (overview), 10), ==, -1);
  g_assert_cmpint (wick_gpu_overview_page_step_at (WICK_GPU_OVERVIEW_PAGE (overview), width - 13),
                   ==, (gint)a->steps->len - 1);
  gtk_selection_model_select_item (wick_table_get_model (steps),
                                   1, TRUE);
  guint srow;
  g_assert_true (wick_table_get_shown (steps, 1, &kind, &srow));
  g_assert_cmpuint (wick_selection_get_record (selection, &span), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (span, ==, g_array_index (a->steps, WickGpuStep, srow).span);
  app_test_screenshot (GTK_WIDGET (w), "gpu-overview.png");
  app_test_window_close (w);
}

static gboolean
range_summarised (gpointer details)
{
  return wick_details_pane_get_range_gpu_line (WICK_DETAILS_PANE (details), 0) != NULL;
}

static int
compare_u64_pairs (gconstpointer pa, gconstpointer pb)
{
  const guint64 *a = pa, *b = pb;
  return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The raw text of "key": VALUE in @args, up to the next ',' or '}' at depth 0. */
static char *
raw_member (const char *args, const char *key)
{
  g_autofree char *quoted = g_strdup_printf ("\"%s\":", key);
  const char *p = strstr (args, quoted);
  if (p == NULL)
    return NULL;
  p += strlen (quoted);
  while (*p == ' ')
    p++;
  const char *e = p;
  int depth = 0;
  while (*e && (depth > 0 || (*e != ',' && *e != '}')))
    {
      depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
      e++;
    }
  return g_strndup (p, (gsize)(e - p));
}

/* The details pane per event kind on a Chrome trace: a kernel's stream,
 * geometry (as written), launcher link; the runtime call's launched
 * kernels; no candle-graph fields; args as written; and the range
 * summary's GPU time against a union computed here. */
static void
test_details (void)
{
  g_autofree char *path = data_path ("torch-compile.json.gz");
  WickWindow *w = app_test_window_open (app, path, 1400, 860);
  WickDocument *doc = wick_window_get_document (w);
  WickTracks *tracks = wick_document_get_tracks (doc);
  WickSelection *selection = wick_window_get_selection (w);
  WickDetailsPane *pane = WICK_DETAILS_PANE (wick_window_get_view (w, "details"));
  guint nd;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &nd);
  guint k = G_MAXUINT;
  for (guint i = 0; i < nd && k == G_MAXUINT; i++)
    {
      const char *args = wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_DEVICE, i });
      if (d[i].kind == WICK_DEVICE_KERNEL && d[i].launcher != G_MAXUINT32 && args
          && strstr (args, "\"blocks per SM\": 0.") && strstr (args, "\"grid\""))
        k = i;
    }
  g_assert_cmpuint (k, !=, G_MAXUINT);
  g_autofree char *args
    = g_strdup (wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_DEVICE, k }));
  wick_selection_set_record_event (selection, WICK_RECORD_NONE, -1, WICK_EVENT_DEVICE, k);
  g_assert_cmpstr (wick_details_pane_get_field (pane, "Kind"), ==, "kernel");
  g_autofree char *stream = wick_track_display_name (tracks, d[k].track);
  g_assert_cmpstr (wick_details_pane_get_field (pane, "Stream"), ==, stream);
  g_autofree char *grid = raw_member (args, "grid");
  g_assert_cmpstr (wick_details_pane_get_field (pane, "Grid"), ==, grid);
  g_autofree char *regs = raw_member (args, "registers per thread");
  g_assert_cmpstr (wick_details_pane_get_field (pane, "Registers per thread"), ==, regs);
  /* a float as written, not re-printed (0.030303, not 0.030303000000000001) */
  g_autofree char *bps = raw_member (args, "blocks per SM");
  g_assert_cmpstr (wick_details_pane_get_arg (pane, "blocks per SM"), ==, bps);
  g_autofree char *corr = raw_member (args, "correlation");
  g_assert_cmpstr (wick_details_pane_get_arg (pane, "correlation"), ==, corr);
  const WickSpan *spans = wick_document_get_spans (doc, NULL);
  const char *launcher = wick_document_str (doc, spans[d[k].launcher].name);
  g_assert_true (g_str_has_prefix (wick_details_pane_get_field (pane, "Launched by"), launcher));
  g_assert_null (wick_details_pane_get_field (pane, "Step"));
  g_assert_null (wick_details_pane_get_field (pane, "Measured"));
  /* the kernel and its launch in view, for the screenshot */
  {
    guint64 ls = spans[d[k].launcher].start_ns, ke = d[k].start_ns + d[k].duration_ns;
    guint64 width = ke > ls ? ke - ls : 1000;
    wick_selection_set_visible (selection, ls - width, ke + width);
    GtkWidget *timeline = wick_window_get_view (w, "timeline");
    wick_window_show_page (w, "timeline");
    app_test_wait_drawn (timeline, 20000, "the timeline");
    app_test_wait_drawn (GTK_WIDGET (pane), 20000, "the details pane");
  }
  app_test_screenshot (GTK_WIDGET (w), "gpu-details-kernel.png");
  /* the launcher link selects the runtime call */
  g_assert_cmpuint (wick_details_pane_get_n_links (pane), ==, 1);
  g_assert_true (wick_details_pane_activate_link (pane, 0));
  gint64 span;
  g_assert_cmpuint (wick_selection_get_record (selection, &span), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (span, ==, d[k].launcher);
  /* a runtime call: no candle-graph fields; its kernels, each a link */
  g_assert_null (wick_details_pane_get_field (pane, "Step"));
  g_assert_null (wick_details_pane_get_field (pane, "Measured"));
  g_assert_null (wick_details_pane_get_field (pane, "Allocated here"));
  g_assert_cmpstr (wick_details_pane_get_field (pane, "Category"), ==,
                   wick_tracks_span_category (tracks, (guint32)span));
  guint32 launched[64];
  guint n_launched = wick_tracks_span_launched (tracks, (guint32)span, launched, 64);
  g_assert_cmpuint (n_launched, >=, 1);
  /* the parent's link first when it has one, then the launched */
  guint links = wick_details_pane_get_n_links (pane);
  g_assert_cmpuint (links, ==, n_launched + (spans[span].parent >= 0));
  g_assert_true (wick_details_pane_activate_link (pane, links - n_launched));
  gint64 event;
  g_assert_cmpuint (wick_selection_get_event (selection, &event), ==, WICK_EVENT_DEVICE);
  g_assert_cmpint (event, ==, launched[0]);

  /* GPU time in a range: a third of the trace */
  guint64 t0 = wick_tracks_get_start_ns (tracks), t1 = wick_tracks_get_end_ns (tracks);
  guint64 a = t0 + (t1 - t0) / 3, b = t0 + 2 * (t1 - t0) / 3;
  wick_selection_set_range (selection, a, b);
  APP_TEST_WAIT (range_summarised, pane, 20000);
  g_autoptr (GArray) iv = g_array_new (FALSE, FALSE, 2 * sizeof (guint64));
  for (guint i = 0; i < nd; i++)
    if (WICK_DEVICE_KIND_IS_WORK (d[i].kind))
      {
        guint64 pair[2] = { MAX (d[i].start_ns, a), MIN (d[i].start_ns + d[i].duration_ns, b) };
        if (pair[1] > pair[0])
          g_array_append_val (iv, pair);
      }
  g_array_sort (iv, compare_u64_pairs);
  guint64 busy = 0, end = 0;
  for (guint i = 0; i < iv->len; i++)
    {
      const guint64 *p = (const guint64 *)(gconstpointer)iv->data + 2 * i;
      if (p[0] >= end)
        busy += p[1] - p[0];
      else if (p[1] > end)
        busy += p[1] - end;
      end = MAX (end, p[1]);
    }
  g_assert_cmpuint (busy, >, 0);
  g_autofree char *busy_text = wick_format_duration (busy);
  g_autofree char *want = g_strdup_printf ("busy %s (", busy_text);
  const char *line = wick_details_pane_get_range_gpu_line (pane, 0);
  if (!g_str_has_prefix (line, want))
    g_error ("range GPU line \"%s\", want it to begin \"%s\"", line, want);
  wick_selection_set_visible (selection, t0, t1);
  app_test_wait_drawn (GTK_WIDGET (pane), 20000, "the details pane");
  app_test_screenshot (GTK_WIDGET (w), "gpu-range.png");
  app_test_window_close (w);
}

/* Five steps of 1 ms, the fourth 3 ms: it alone is slow (>= 1.25 x the
 * median) and so marked in the Overview's table; in each, a cpu_op of
 * 500 us with nothing on the GPU, then one 100 us kernel: CPU-only 500 us,
 * idle the rest. */
static void
test_slow_step (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-gpu-pages-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "steps.json", NULL);
  GString *json = g_string_new ("{\"traceEvents\": [\n");
  guint64 t = 1000;
  for (guint i = 0; i < 5; i++)
    {
      guint dur = i == 3 ? 3000 : 1000;
      g_string_append_printf (
        json,
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%u\",\"pid\":1,"
        "\"tid\":1,\"ts\":%" G_GUINT64_FORMAT ",\"dur\":%u},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
        "\"ts\":%" G_GUINT64_FORMAT ",\"dur\":500},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
        "\"tid\":1,\"ts\":%" G_GUINT64_FORMAT ",\"dur\":10,\"args\":{\"correlation\":%u}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"
        "\"ts\":%" G_GUINT64_FORMAT ",\"dur\":100,\"args\":{\"device\":0,\"stream\":7,"
        "\"correlation\":%u}}%s\n",
        i, t, dur, t + 10, t + 20, i + 1, t + 600, i + 1, i < 4 ? "," : "");
      t += dur;
    }
  g_string_append (json, "]}\n");
  g_assert_true (g_file_set_contents (path, json->str, (gssize)json->len, NULL));
  g_string_free (json, TRUE);
  WickWindow *w = app_test_window_open (app, path, 1400, 860);
  WickDocument *doc = wick_window_get_document (w);
  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
  g_assert_cmpuint (a->steps->len, ==, 5);
  GtkWidget *overview = wick_window_get_view (w, "gpu-overview");
  wick_window_show_page (w, "gpu-overview");
  app_test_wait_drawn (overview, 20000, "the Overview");
  WickTable *steps = wick_gpu_overview_page_get_table (WICK_GPU_OVERVIEW_PAGE (overview), "steps");
  for (guint p = 0; p < 5; p++)
    {
      guint kind, row;
      g_assert_true (wick_table_get_shown (steps, p, &kind, &row));
      const WickGpuStep *st = &g_array_index (a->steps, WickGpuStep, row);
      g_assert_cmpuint (st->gpu_busy_ns, ==, 100000);
      g_assert_cmpuint (st->cpu_only_ns, ==, 500000);
      g_assert_cmpuint (st->idle_ns, ==, st->dur_ns - 100000);
      g_assert_true (st->slow == (st->dur_ns == 3000000));
      g_autofree char *name = wick_table_get_text (steps, p, 0);
      g_autofree char *want = g_strdup_printf ("ProfilerStep#%u%s", row, st->slow ? " · slow" : "");
      g_assert_cmpstr (name, ==, want);
      /* Idle (the rest of the GPU's idle time) and CPU-only, as shown */
      g_autofree char *cpu_only = wick_table_get_text (steps, p, 6);
      g_assert_cmpstr (cpu_only, ==, "500 µs");
    }
  app_test_window_close (w);
  g_unlink (path);
  g_rmdir (dir);
}

/* A candle-graph trace keeps its span fields (Step, Measured, bytes). */
static void
test_details_candle (void)
{
  WickWindow *w = app_test_window_open_example (app);
  WickDocument *doc = wick_window_get_document (w);
  WickDetailsPane *pane = WICK_DETAILS_PANE (wick_window_get_view (w, "details"));
  wick_selection_set_record (wick_window_get_selection (w), WICK_RECORD_SPAN, 1);
  g_assert_nonnull (wick_details_pane_get_field (pane, "Step"));
  g_assert_nonnull (wick_details_pane_get_field (pane, "Measured"));
  g_assert_nonnull (wick_details_pane_get_field (pane, "Allocated here"));
  g_assert_null (wick_details_pane_get_field (pane, "Category"));
  (void)doc;
  app_test_window_close (w);

  /* a Wick record's numbers as written, not re-printed by a JSON library
   * (1.939394 became 1.9393940000000001) */
  g_autoptr (WickDocument) marks = app_test_document_from_text (
    "{\"kind\":\"wick_mark\",\"timestamp_ns\":5,\"label\":\"m\",\"ratio\":1.939394,"
    "\"big\":1e300,\"kept\":true,\"shape\":[4, 1, 1]}");
  g_autoptr (WickSelection) selection = wick_selection_new ();
  GtkWidget *alone = g_object_ref_sink (wick_details_pane_new (selection));
  wick_details_pane_set_document (WICK_DETAILS_PANE (alone), marks);
  wick_selection_set_record (selection, WICK_RECORD_EXTENSION, 0);
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (alone), "ratio"), ==, "1.939394");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (alone), "big"), ==, "1e300");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (alone), "kept"), ==, "yes");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (alone), "shape"), ==, "[4, 1, 1]");
  g_assert_cmpstr (wick_details_pane_get_field (WICK_DETAILS_PANE (alone), "label"), ==, "m");
  g_object_unref (alone);
}

/* A candle-graph trace has no GPU pages: its Costs keep their meaning. */
static void
test_hidden_without_gpu (void)
{
  WickWindow *w = app_test_window_open_example (app);
  g_assert_false (page_visible (w, "kernels"));
  g_assert_false (page_visible (w, "operators"));
  g_assert_false (page_visible (w, "gpu-overview"));
  app_test_window_close (w);
}

/* Collapse All and Expand All (the primary menu, Shift+C and Shift+E on the
 * timeline): every process and every track of several rows, on a real
 * torch 2.11 trace (a host process with several threads, the GPU's
 * streams with annotations over kernels). */
static void
test_collapse_all (void)
{
  g_autofree char *path = data_path ("torch-multistream.json.gz");
  WickWindow *w = app_test_window_open (app, path, 1400, 860);
  WickTimelineView *view = WICK_TIMELINE_VIEW (wick_window_get_view (w, "timeline"));
  WickTimelineScene *scene = wick_timeline_view_get_scene (view);
  WickTracks *tracks = wick_timeline_scene_get_tracks (scene);
  guint n_processes, n_tracks, n_collapsible = 0;
  wick_tracks_get_processes (tracks, &n_processes);
  wick_tracks_get_tracks (tracks, &n_tracks);
  for (guint32 t = 0; t < n_tracks; t++)
    n_collapsible += wick_timeline_scene_get_track_collapsible (scene, t);
  g_assert_cmpuint (n_processes, >=, 2);
  g_assert_cmpuint (n_collapsible, >=, 2);
  /* it opens with nothing collapsed (no deep stack) */
  for (guint p = 0; p < n_processes; p++)
    g_assert_false (wick_timeline_scene_get_collapsed (scene, p));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.collapse-all", NULL));
  for (guint p = 0; p < n_processes; p++)
    g_assert_true (wick_timeline_scene_get_collapsed (scene, p));
  for (guint32 t = 0; t < n_tracks; t++)
    if (wick_timeline_scene_get_track_collapsible (scene, t))
      g_assert_true (wick_timeline_scene_get_track_collapsed (scene, t));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (w), "win.expand-all", NULL));
  for (guint p = 0; p < n_processes; p++)
    g_assert_false (wick_timeline_scene_get_collapsed (scene, p));
  for (guint32 t = 0; t < n_tracks; t++)
    g_assert_false (wick_timeline_scene_get_track_collapsed (scene, t));
  app_test_window_close (w);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/gpu-pages/kernels", test_kernels);
  g_test_add_func ("/gpu-pages/operators-overview", test_operators_and_overview);
  g_test_add_func ("/gpu-pages/hidden-without-gpu", test_hidden_without_gpu);
  g_test_add_func ("/gpu-pages/details", test_details);
  g_test_add_func ("/gpu-pages/details-candle", test_details_candle);
  g_test_add_func ("/gpu-pages/slow-step", test_slow_step);
  g_test_add_func ("/gpu-pages/collapse-all", test_collapse_all);
  return app_test_ui_run (app);
}
