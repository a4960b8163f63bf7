/* wick-stages-panel.c — the Stages page of a live window (see the header). */
#include "config.h"

#include "wick-stages-panel.h"
#include "wick-stages-panel-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "client/wick-live-client.h"
#include "wick-live-session.h"
#include "wick-panel-requests.h"

static void wick_stages_panel_release (WickStagesPanel *self, const char *stage);

#define REFRESH_INTERVAL_S 1

typedef struct
{
  AdwActionRow *row;
  GtkWidget *capture;
  GtkWidget *release;
  WickStageState state;
} StageRow;

struct _WickStagesPanel
{
  WickPage parent_instance;
  WickWindow *window; /* weak */
  char *socket_path;
  GtkWidget *unavailable; /* group shown without CUDA */
  AdwActionRow *unavailable_row;
  char *unavailable_reason;
  GtkSpinButton *gate_cos;
  GtkSpinButton *min_speedup;
  GtkSpinButton *warmup;
  AdwPreferencesGroup *stages;
  GtkWidget *empty;
  GtkWidget *card_box;
  char *last_verdict;
  GHashTable *rows; /* stage name -> StageRow */
  guint refresh_id;
  WickPanelRequests requests;
  gboolean cuda;
};

G_DEFINE_FINAL_TYPE (WickStagesPanel, wick_stages_panel, WICK_TYPE_PAGE)

static void
stage_row_free (StageRow *row)
{
  g_free (row);
}

static void
toast (WickStagesPanel *self, const char *kind, const char *message)
{
  if (self->window != NULL)
    wick_live_window_toast_kind (self->window, kind, message);
}

static void
send_request (WickStagesPanel *self, WickControlCommand command, JsonObject *object, int timeout_ms,
              WickPanelReplyFunc func, const char *what)
{
  wick_panel_requests_send (&self->requests, G_OBJECT (self), &self->window, self->socket_path,
                            command, object, timeout_ms, func, what);
}

static void
on_capture_clicked (GtkButton *button, gpointer user_data)
{
  wick_stages_panel_capture (user_data, g_object_get_data (G_OBJECT (button), "stage"));
}

static void
on_release_clicked (GtkButton *button, gpointer user_data)
{
  wick_stages_panel_release (user_data, g_object_get_data (G_OBJECT (button), "stage"));
}

static StageRow *
stage_row_new (WickStagesPanel *self, const char *name)
{
  StageRow *row = g_new0 (StageRow, 1);
  row->row = ADW_ACTION_ROW (adw_action_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row->row), name);
  row->capture = gtk_button_new_with_mnemonic (_ ("_Capture"));
  row->release = gtk_button_new_with_mnemonic (_ ("_Release"));
  gtk_widget_add_css_class (row->capture, "suggested-action");
  GtkWidget *buttons[] = { row->capture, row->release };
  for (gsize i = 0; i < G_N_ELEMENTS (buttons); i++)
    {
      gtk_widget_set_valign (buttons[i], GTK_ALIGN_CENTER);
      g_object_set_data_full (G_OBJECT (buttons[i]), "stage", g_strdup (name), g_free);
      adw_action_row_add_suffix (row->row, buttons[i]);
    }
  g_signal_connect (row->capture, "clicked", G_CALLBACK (on_capture_clicked), self);
  g_signal_connect (row->release, "clicked", G_CALLBACK (on_release_clicked), self);
  adw_preferences_group_add (self->stages, GTK_WIDGET (row->row));
  return row;
}

static const char *
state_label (WickStageState state)
{
  switch (state)
    {
      case WICK_STAGE_EAGER:
        return _ ("eager: runs its kernels one by one");
      case WICK_STAGE_CAPTURED:
        return _ ("captured: replays a certified CUDA graph");
      case WICK_STAGE_REFUSED:
        return _ ("refused: stays eager (see the certificate)");
    }
  return "?";
}

static void
update_stage_row (WickStagesPanel *self, StageRow *row, WickStageState state)
{
  adw_action_row_set_subtitle (row->row, state_label (state));
  gtk_widget_set_sensitive (row->capture, self->cuda && state != WICK_STAGE_CAPTURED);
  gtk_widget_set_sensitive (row->release, state == WICK_STAGE_CAPTURED);
  if (!self->cuda)
    gtk_widget_set_tooltip_text (row->capture, self->unavailable_reason);
  row->state = state;
}

static void
update_availability (WickStagesPanel *self, const WickControlResult *result)
{
  self->cuda = result->list.cuda;
  g_clear_pointer (&self->unavailable_reason, g_free);
  if (!self->cuda)
    self->unavailable_reason
      = g_strdup (result->list.cuda_unavailable != NULL ? result->list.cuda_unavailable
                                                        : _ ("the process has no CUDA device"));
  gtk_widget_set_visible (self->unavailable, !self->cuda);
  if (!self->cuda)
    adw_action_row_set_subtitle (self->unavailable_row, self->unavailable_reason);
}

static void
on_list (gpointer panel, const WickControlResult *result)
{
  WickStagesPanel *self = panel;
  if (result->status != WICK_CONTROL_STATUS_OK)
    return;
  update_availability (self, result);
  for (guint i = 0; i < result->list.stages->len; i++)
    {
      const WickControlStage *stage = &g_array_index (result->list.stages, WickControlStage, i);
      StageRow *row = g_hash_table_lookup (self->rows, stage->name);
      if (row == NULL)
        {
          row = stage_row_new (self, stage->name);
          g_hash_table_insert (self->rows, g_strdup (stage->name), row);
        }
      update_stage_row (self, row, stage->state);
    }
  gtk_widget_set_visible (self->empty, g_hash_table_size (self->rows) == 0);
}

static void
card_add (AdwPreferencesGroup *card, const char *title, const char *value)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  GtkWidget *label = gtk_label_new (value);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 1.0f);
  gtk_widget_add_css_class (label, "numeric");
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), label);
  adw_preferences_group_add (card, row);
}

/* A figure with @precision digits ('f' fixed or 'g' general) and a suffix, or
 * a dash when it was not measured (NAN). */
static char *
figure (double value, char style, int precision, const char *suffix)
{
  if (isnan (value))
    return g_strdup ("—");
  if (style == 'f')
    return g_strdup_printf ("%.*f%s", precision, value, suffix);
  return g_strdup_printf ("%.*g%s", precision, value, suffix);
}

/* The certificate as a card: verdict and reason first, then the figures. */
static void
show_certificate (WickStagesPanel *self, const WickControlCertificate *c)
{
  GtkWidget *old = gtk_widget_get_first_child (self->card_box);
  if (old != NULL)
    gtk_box_remove (GTK_BOX (self->card_box), old);
  AdwPreferencesGroup *card = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  const char *verdict = c->accepted ? "accepted" : "refused";
  g_autofree char *title = g_strdup_printf (_ ("Certificate of %s: %s"), c->stage, verdict);
  adw_preferences_group_set_title (card, title);
  adw_preferences_group_set_description (card, c->reason);
  g_autofree char *gate_cos
    = c->parity_checked ? figure (c->gate_cos, 'g', 6, "") : g_strdup (_ ("skipped"));
  g_autofree char *min_speedup
    = c->speedup_checked ? figure (c->min_speedup, 'g', 6, "×") : g_strdup (_ ("skipped"));
  g_autofree char *gates = g_strdup_printf (_ ("cos ≥ %s, speedup ≥ %s, warm-up %lld"), gate_cos,
                                            min_speedup, (long long)c->warmup);
  g_autofree char *cos = figure (c->parity_cos, 'f', 6, "");
  g_autofree char *max_abs = figure (c->max_abs, 'g', 3, "");
  g_autofree char *p99 = figure (c->p99_abs, 'g', 3, "");
  g_autofree char *eager = figure (c->eager_ms, 'f', 4, " ms");
  g_autofree char *replay = figure (c->replay_ms, 'f', 4, " ms");
  g_autofree char *median = figure (c->speedup_median, 'f', 3, "×");
  g_autofree char *min = figure (c->speedup_min, 'f', 3, "");
  g_autofree char *max = figure (c->speedup_max, 'f', 3, "");
  g_autofree char *speed = g_strdup_printf (_ ("%s (min %s, max %s)"), median, min, max);
  g_autofree char *nodes = g_strdup_printf ("%" G_GUINT64_FORMAT, c->kernel_nodes);
  card_add (card, _ ("Gates"), gates);
  card_add (card, _ ("Parity cosine"), cos);
  g_autofree char *abs_errors = g_strdup_printf ("%s / %s", max_abs, p99);
  g_autofree char *times = g_strdup_printf ("%s / %s", eager, replay);
  card_add (card, _ ("Max abs / p99 abs"), abs_errors);
  card_add (card, _ ("Eager / replay"), times);
  card_add (card, _ ("Speedup (median)"), speed);
  card_add (card, _ ("Kernel nodes"), nodes);
  gtk_box_append (GTK_BOX (self->card_box), GTK_WIDGET (card));
  g_free (self->last_verdict);
  self->last_verdict = g_strdup (verdict);
}

static void
on_captured (gpointer panel, const WickControlResult *result)
{
  WickStagesPanel *self = panel;
  g_autofree char *message = NULL;
  if (result->status != WICK_CONTROL_STATUS_OK)
    message = g_strdup_printf (_ ("Capture failed: %s"), result->error);
  else
    {
      show_certificate (self, &result->capture);
      message = g_strdup_printf (_ ("%s: %s"), result->capture.stage,
                                 result->capture.accepted ? "accepted" : "refused");
    }
  toast (self, "capture", message);
  wick_stages_panel_refresh (self);
}

static void
on_released (gpointer panel, const WickControlResult *result)
{
  WickStagesPanel *self = panel;
  g_autofree char *message = NULL;
  if (result->status != WICK_CONTROL_STATUS_OK)
    message = g_strdup_printf (_ ("Release failed: %s"), result->error);
  else
    message = g_strdup_printf (_ ("Released %s: it runs eagerly again"), result->release.name);
  toast (self, "release", message);
  wick_stages_panel_refresh (self);
}

void
wick_stages_panel_refresh (WickStagesPanel *self)
{
  g_return_if_fail (WICK_IS_STAGES_PANEL (self));
  if (!wick_panel_requests_begin_list (&self->requests))
    return;
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  send_request (self, WICK_CONTROL_RESULT_LIST, request, WICK_LIVE_REQUEST_TIMEOUT_MS, on_list,
                "list");
}

void
wick_stages_panel_capture (WickStagesPanel *self, const char *stage)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("capture");
  json_object_set_string_member (request, "stage", stage);
  json_object_set_double_member (request, "gate_cos", gtk_spin_button_get_value (self->gate_cos));
  json_object_set_double_member (request, "min_speedup",
                                 gtk_spin_button_get_value (self->min_speedup));
  json_object_set_int_member (request, "warmup", gtk_spin_button_get_value_as_int (self->warmup));
  send_request (self, WICK_CONTROL_RESULT_CAPTURE, request, WICK_LIVE_CAPTURE_TIMEOUT_MS,
                on_captured, _ ("Capture"));
}

static void
wick_stages_panel_release (WickStagesPanel *self, const char *stage)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("release");
  json_object_set_string_member (request, "stage", stage);
  send_request (self, WICK_CONTROL_RESULT_RELEASE, request, WICK_LIVE_REQUEST_TIMEOUT_MS,
                on_released, _ ("Release"));
}

static gboolean
on_refresh_timeout (gpointer user_data)
{
  WickStagesPanel *self = user_data;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    wick_stages_panel_refresh (self);
  return G_SOURCE_CONTINUE;
}

guint
wick_stages_panel_get_n_stages (WickStagesPanel *self)
{
  return g_hash_table_size (self->rows);
}

const char *
wick_stages_panel_get_state (WickStagesPanel *self, const char *stage)
{
  StageRow *row = g_hash_table_lookup (self->rows, stage);
  return row != NULL ? wick_control_stage_state_to_string (row->state) : NULL;
}

const char *
wick_stages_panel_get_unavailable_reason (WickStagesPanel *self)
{
  return self->unavailable_reason;
}

const char *
wick_stages_panel_get_last_verdict (WickStagesPanel *self)
{
  return self->last_verdict;
}

guint
wick_stages_panel_get_pending (WickStagesPanel *self)
{
  return self->requests.pending;
}

static void
wick_stages_panel_dispose (GObject *object)
{
  WickStagesPanel *self = WICK_STAGES_PANEL (object);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  if (self->window != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *)&self->window);
  self->window = NULL;
  G_OBJECT_CLASS (wick_stages_panel_parent_class)->dispose (object);
}

static void
wick_stages_panel_finalize (GObject *object)
{
  WickStagesPanel *self = WICK_STAGES_PANEL (object);
  g_hash_table_unref (self->rows);
  wick_panel_requests_clear (&self->requests);
  g_free (self->socket_path);
  g_free (self->unavailable_reason);
  g_free (self->last_verdict);
  G_OBJECT_CLASS (wick_stages_panel_parent_class)->finalize (object);
}

static void
wick_stages_panel_class_init (WickStagesPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_stages_panel_dispose;
  object_class->finalize = wick_stages_panel_finalize;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/session/wick-stages-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, unavailable);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, unavailable_row);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, gate_cos);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, min_speedup);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, warmup);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, stages);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, empty);
  gtk_widget_class_bind_template_child (widget_class, WickStagesPanel, card_box);
}

static void
relist (gpointer panel)
{
  wick_stages_panel_refresh (panel);
}

static void
wick_stages_panel_init (WickStagesPanel *self)
{
  self->rows
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)stage_row_free);
  self->requests.relist = relist;
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Stages"));
  wick_page_set_icon_name (WICK_PAGE (self), "media-record-symbolic");
}

GtkWidget *
wick_stages_panel_new (WickWindow *window, const char *socket_path)
{
  WickStagesPanel *self = g_object_new (WICK_TYPE_STAGES_PANEL, NULL);
  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&self->window);
  self->socket_path = g_strdup (socket_path);
  self->refresh_id = g_timeout_add_seconds (REFRESH_INTERVAL_S, on_refresh_timeout, self);
  wick_stages_panel_refresh (self);
  return GTK_WIDGET (self);
}
