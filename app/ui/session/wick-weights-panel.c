/* wick-weights-panel.c — the Weights page of a live window (see the header). */
#include "config.h"

#include "wick-weights-panel.h"
#include "wick-weights-panel-private.h"

#include <glib/gi18n.h>

#include "client/wick-live-client.h"
#include "wick-live-session.h"
#include "wick-panel-requests.h"

#define REFRESH_INTERVAL_S 1

typedef struct
{
  AdwActionRow *row;
  GtkDropDown *tier;
  GtkWidget *evict;
  GtkWidget *restore;
  WickControlWhere where;
} ModuleRow;

struct _WickWeightsPanel
{
  WickPage parent_instance;
  WickWindow *window; /* weak */
  char *socket_path;
  AdwPreferencesGroup *group;
  GtkWidget *empty;
  GtkWidget *restore_all;
  GHashTable *rows; /* module name -> ModuleRow */
  guint refresh_id;
  WickPanelRequests requests;
};

G_DEFINE_FINAL_TYPE (WickWeightsPanel, wick_weights_panel, WICK_TYPE_PAGE)

static const char *const tiers[] = { "auto", "disk", "ram", NULL };

static void
module_row_free (ModuleRow *row)
{
  g_free (row);
}

static void
toast (WickWeightsPanel *self, const char *kind, const char *message)
{
  if (self->window != NULL)
    wick_live_window_toast_kind (self->window, kind, message);
}

static void
send_request (WickWeightsPanel *self, WickControlCommand command, JsonObject *object,
              WickPanelReplyFunc func, const char *what)
{
  wick_panel_requests_send (&self->requests, G_OBJECT (self), &self->window, self->socket_path,
                            command, object, WICK_LIVE_REQUEST_TIMEOUT_MS, func, what);
}

static guint
selected_tier (ModuleRow *row)
{
  guint selected = gtk_drop_down_get_selected (row->tier);
  return selected < 3 ? selected : 0;
}

static void
on_evict_clicked (GtkButton *button, gpointer user_data)
{
  WickWeightsPanel *self = user_data;
  const char *module = g_object_get_data (G_OBJECT (button), "module");
  ModuleRow *row = g_hash_table_lookup (self->rows, module);
  if (row != NULL)
    wick_weights_panel_evict (self, module, tiers[selected_tier (row)]);
}

static void
on_restore_clicked (GtkButton *button, gpointer user_data)
{
  WickWeightsPanel *self = user_data;
  wick_weights_panel_restore (self, g_object_get_data (G_OBJECT (button), "module"));
}

static ModuleRow *
module_row_new (WickWeightsPanel *self, const char *name)
{
  ModuleRow *row = g_new0 (ModuleRow, 1);
  row->row = ADW_ACTION_ROW (adw_action_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row->row), name);
  const char *labels[] = { _ ("Auto"), _ ("Disk"), _ ("RAM"), NULL };
  row->tier = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (labels));
  gtk_widget_set_tooltip_text (GTK_WIDGET (row->tier),
                               _ ("Tier: Auto puts parameters that match the checkpoint on disk "
                                  "and the rest in RAM"));
  gtk_widget_set_valign (GTK_WIDGET (row->tier), GTK_ALIGN_CENTER);
  row->evict = gtk_button_new_with_mnemonic (_ ("_Evict"));
  row->restore = gtk_button_new_with_mnemonic (_ ("_Restore"));
  GtkWidget *buttons[] = { row->evict, row->restore };
  for (gsize i = 0; i < G_N_ELEMENTS (buttons); i++)
    {
      gtk_widget_set_valign (buttons[i], GTK_ALIGN_CENTER);
      g_object_set_data_full (G_OBJECT (buttons[i]), "module", g_strdup (name), g_free);
    }
  gtk_widget_add_css_class (row->evict, "destructive-action");
  g_signal_connect (row->evict, "clicked", G_CALLBACK (on_evict_clicked), self);
  g_signal_connect (row->restore, "clicked", G_CALLBACK (on_restore_clicked), self);
  adw_action_row_add_suffix (row->row, GTK_WIDGET (row->tier));
  adw_action_row_add_suffix (row->row, row->evict);
  adw_action_row_add_suffix (row->row, row->restore);
  adw_preferences_group_add (self->group, GTK_WIDGET (row->row));
  return row;
}

static const char *
where_label (WickControlWhere where)
{
  switch (where)
    {
      case WICK_CONTROL_WHERE_RESIDENT:
        return _ ("resident");
      case WICK_CONTROL_WHERE_DISK:
        return _ ("evicted to disk (checkpoint)");
      case WICK_CONTROL_WHERE_RAM:
        return _ ("evicted to RAM");
      case WICK_CONTROL_WHERE_DISK_RAM:
        return _ ("evicted to disk and RAM");
    }
  return "?";
}

char *
wick_weights_panel_module_text (const WickControlModule *module)
{
  g_autofree char *size = g_format_size_full (module->bytes, G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s · %lld parameter · %s",
                                       "%s · %lld parameters · %s", (gulong)module->parameters),
                          size, (long long)module->parameters, where_label (module->where));
}

static void
update_module_row (ModuleRow *row, const WickControlModule *module)
{
  g_autofree char *subtitle = wick_weights_panel_module_text (module);
  adw_action_row_set_subtitle (row->row, subtitle);
  gboolean resident = module->where == WICK_CONTROL_WHERE_RESIDENT;
  gtk_widget_set_sensitive (row->evict, resident);
  gtk_widget_set_sensitive (GTK_WIDGET (row->tier), resident);
  gtk_widget_set_sensitive (row->restore, !resident);
  row->where = module->where;
}

static void
on_list (gpointer panel, const WickControlResult *result)
{
  WickWeightsPanel *self = panel;
  if (result->status != WICK_CONTROL_STATUS_OK)
    return;
  gboolean any_evicted = FALSE;
  for (guint i = 0; i < result->list.modules->len; i++)
    {
      const WickControlModule *module = &g_array_index (result->list.modules, WickControlModule, i);
      ModuleRow *row = g_hash_table_lookup (self->rows, module->name);
      if (row == NULL)
        {
          row = module_row_new (self, module->name);
          g_hash_table_insert (self->rows, g_strdup (module->name), row);
        }
      update_module_row (row, module);
      any_evicted |= row->where != WICK_CONTROL_WHERE_RESIDENT;
    }
  gtk_widget_set_visible (self->empty, g_hash_table_size (self->rows) == 0);
  gtk_widget_set_sensitive (self->restore_all, any_evicted);
}

static void
on_evicted (gpointer panel, const WickControlResult *result)
{
  WickWeightsPanel *self = panel;
  g_autofree char *message = NULL;
  if (result->status != WICK_CONTROL_STATUS_OK)
    message = g_strdup_printf (_ ("Evict failed: %s"), result->error);
  else
    {
      g_autofree char *freed
        = g_format_size_full (result->weights.freed_bytes, G_FORMAT_SIZE_IEC_UNITS);
      message = g_strdup_printf (
        _ ("Evicted %s: %lld on disk, %lld in RAM, %s freed in %.1f ms"),
        result->weights.module.name, (long long)result->weights.module.disk,
        (long long)result->weights.module.ram, freed, result->weights.seconds * 1e3);
    }
  toast (self, "evict", message);
  wick_weights_panel_refresh (self);
}

char *
wick_weights_panel_restored_text (const WickControlResult *result)
{
  if (result->status != WICK_CONTROL_STATUS_OK)
    return g_strdup_printf (_ ("Restore failed: %s"), result->error);
  if (result->command == WICK_CONTROL_RESULT_RESTORE_ALL)
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Restored all: %lld module",
                                         "Restored all: %lld modules",
                                         (gulong)result->restore_all.restored_modules),
                            (long long)result->restore_all.restored_modules);
  return g_strdup_printf (
    g_dngettext (GETTEXT_PACKAGE, "Restored %s: %lld parameter in %.1f ms",
                 "Restored %s: %lld parameters in %.1f ms", (gulong)result->weights.restored),
    result->weights.module.name, (long long)result->weights.restored,
    result->weights.seconds * 1e3);
}

static void
on_restored (gpointer panel, const WickControlResult *result)
{
  WickWeightsPanel *self = panel;
  g_autofree char *message = wick_weights_panel_restored_text (result);
  toast (self, "restore", message);
  wick_weights_panel_refresh (self);
}

void
wick_weights_panel_refresh (WickWeightsPanel *self)
{
  g_return_if_fail (WICK_IS_WEIGHTS_PANEL (self));
  if (!wick_panel_requests_begin_list (&self->requests))
    return;
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  send_request (self, WICK_CONTROL_RESULT_LIST, request, on_list, "list");
}

void
wick_weights_panel_evict (WickWeightsPanel *self, const char *module, const char *tier)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("evict");
  json_object_set_string_member (request, "module", module);
  json_object_set_string_member (request, "tier", tier);
  send_request (self, WICK_CONTROL_RESULT_EVICT, request, on_evicted, _ ("Evict"));
}

void
wick_weights_panel_restore (WickWeightsPanel *self, const char *module)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("restore");
  json_object_set_string_member (request, "module", module);
  send_request (self, WICK_CONTROL_RESULT_RESTORE, request, on_restored, _ ("Restore"));
}

void
wick_weights_panel_restore_all (WickWeightsPanel *self)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("restore-all");
  send_request (self, WICK_CONTROL_RESULT_RESTORE_ALL, request, on_restored, _ ("Restore all"));
}

static void
on_restore_all_clicked (GtkButton *button, gpointer user_data)
{
  wick_weights_panel_restore_all (user_data);
}

static gboolean
on_refresh_timeout (gpointer user_data)
{
  WickWeightsPanel *self = user_data;
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    wick_weights_panel_refresh (self);
  return G_SOURCE_CONTINUE;
}

guint
wick_weights_panel_get_n_modules (WickWeightsPanel *self)
{
  return g_hash_table_size (self->rows);
}

const char *
wick_weights_panel_get_where (WickWeightsPanel *self, const char *module)
{
  ModuleRow *row = g_hash_table_lookup (self->rows, module);
  return row != NULL ? wick_control_where_to_string (row->where) : NULL;
}

const char *
wick_weights_panel_get_subtitle (WickWeightsPanel *self, const char *module)
{
  ModuleRow *row = g_hash_table_lookup (self->rows, module);
  return row != NULL ? adw_action_row_get_subtitle (row->row) : NULL;
}

guint
wick_weights_panel_get_pending (WickWeightsPanel *self)
{
  return self->requests.pending;
}

static void
wick_weights_panel_dispose (GObject *object)
{
  WickWeightsPanel *self = WICK_WEIGHTS_PANEL (object);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  if (self->window != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *)&self->window);
  self->window = NULL;
  G_OBJECT_CLASS (wick_weights_panel_parent_class)->dispose (object);
}

static void
wick_weights_panel_finalize (GObject *object)
{
  WickWeightsPanel *self = WICK_WEIGHTS_PANEL (object);
  g_hash_table_unref (self->rows);
  wick_panel_requests_clear (&self->requests);
  g_free (self->socket_path);
  G_OBJECT_CLASS (wick_weights_panel_parent_class)->finalize (object);
}

static void
wick_weights_panel_class_init (WickWeightsPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = wick_weights_panel_dispose;
  object_class->finalize = wick_weights_panel_finalize;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/wickprofiler/Wick/session/wick-weights-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, group);
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, empty);
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, restore_all);
  gtk_widget_class_bind_template_callback (widget_class, on_restore_all_clicked);
}

static void
relist (gpointer panel)
{
  wick_weights_panel_refresh (panel);
}

static void
wick_weights_panel_init (WickWeightsPanel *self)
{
  self->rows
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)module_row_free);
  self->requests.relist = relist;
  gtk_widget_init_template (GTK_WIDGET (self));
  wick_page_set_title (WICK_PAGE (self), _ ("Weights"));
  wick_page_set_icon_name (WICK_PAGE (self), "drive-harddisk-symbolic");
}

GtkWidget *
wick_weights_panel_new (WickWindow *window, const char *socket_path)
{
  WickWeightsPanel *self = g_object_new (WICK_TYPE_WEIGHTS_PANEL, NULL);
  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&self->window);
  self->socket_path = g_strdup (socket_path);
  self->refresh_id = g_timeout_add_seconds (REFRESH_INTERVAL_S, on_refresh_timeout, self);
  wick_weights_panel_refresh (self);
  return GTK_WIDGET (self);
}
