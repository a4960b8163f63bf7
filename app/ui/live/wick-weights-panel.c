/* wick-weights-panel.c — the Weights page of a live window (see the header). */
#include "config.h"

#include "wick-weights-panel.h"

#include <glib/gi18n.h>

#include "live/wick-live-client.h"
#include "wick-live-session.h"
#include "wick-panel-requests.h"

#define REFRESH_INTERVAL_S 1

typedef struct
{
  AdwActionRow *row;
  GtkDropDown *tier;
  GtkWidget *evict;
  GtkWidget *restore;
  char *where;
} ModuleRow;

struct _WickWeightsPanel
{
  GtkBox parent_instance;
  WickWindow *window; /* weak */
  char *socket_path;
  AdwPreferencesGroup *group;
  GtkWidget *empty;
  GtkWidget *restore_all;
  GHashTable *rows; /* module name -> ModuleRow */
  guint refresh_id;
  WickPanelRequests requests;
};

G_DEFINE_FINAL_TYPE (WickWeightsPanel, wick_weights_panel, GTK_TYPE_BOX)

static const char *const tiers[] = { "auto", "disk", "ram", NULL };

static void
module_row_free (ModuleRow *row)
{
  g_free (row->where);
  g_free (row);
}

static void
toast (WickWeightsPanel *self, const char *kind, const char *message)
{
  if (self->window != NULL)
    wick_live_window_toast_kind (self->window, kind, message);
}

static void
send_request (WickWeightsPanel *self, JsonObject *object, WickPanelReplyFunc func, const char *what)
{
  wick_panel_requests_send (&self->requests, G_OBJECT (self), &self->window, self->socket_path,
                            object, WICK_LIVE_REQUEST_TIMEOUT_MS, func, what);
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
where_label (const char *where)
{
  if (g_strcmp0 (where, "resident") == 0)
    return _ ("resident");
  if (g_strcmp0 (where, "disk") == 0)
    return _ ("evicted to disk (checkpoint)");
  if (g_strcmp0 (where, "ram") == 0)
    return _ ("evicted to RAM");
  if (g_strcmp0 (where, "disk+ram") == 0)
    return _ ("evicted to disk and RAM");
  return where;
}

static void
update_module_row (ModuleRow *row, JsonObject *module)
{
  const char *where = json_object_get_string_member_with_default (module, "where", "?");
  gint64 bytes = json_object_get_int_member_with_default (module, "bytes", 0);
  gint64 parameters = json_object_get_int_member_with_default (module, "parameters", 0);
  g_autofree char *size = g_format_size_full ((guint64)bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *subtitle
    = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s · %lld parameter · %s",
                                    "%s · %lld parameters · %s", (gulong)parameters),
                       size, (long long)parameters, where_label (where));
  adw_action_row_set_subtitle (row->row, subtitle);
  gboolean resident = g_strcmp0 (where, "resident") == 0;
  gtk_widget_set_sensitive (row->evict, resident);
  gtk_widget_set_sensitive (GTK_WIDGET (row->tier), resident);
  gtk_widget_set_sensitive (row->restore, !resident);
  g_free (row->where);
  row->where = g_strdup (where);
}

static void
on_list (gpointer panel, JsonObject *reply, const char *what)
{
  WickWeightsPanel *self = panel;
  if (!json_object_get_boolean_member_with_default (reply, "ok", FALSE))
    return;
  JsonArray *modules = json_object_get_array_member (reply, "modules");
  guint n = modules != NULL ? json_array_get_length (modules) : 0;
  gboolean any_evicted = FALSE;
  for (guint i = 0; i < n; i++)
    {
      JsonObject *module = json_array_get_object_element (modules, i);
      const char *name = json_object_get_string_member_with_default (module, "name", NULL);
      if (name == NULL)
        continue;
      ModuleRow *row = g_hash_table_lookup (self->rows, name);
      if (row == NULL)
        {
          row = module_row_new (self, name);
          g_hash_table_insert (self->rows, g_strdup (name), row);
        }
      update_module_row (row, module);
      any_evicted |= g_strcmp0 (row->where, "resident") != 0;
    }
  gtk_widget_set_visible (self->empty, g_hash_table_size (self->rows) == 0);
  gtk_widget_set_sensitive (self->restore_all, any_evicted);
}

static void
on_evicted (gpointer panel, JsonObject *reply, const char *what)
{
  WickWeightsPanel *self = panel;
  g_autofree char *message = NULL;
  if (!json_object_get_boolean_member_with_default (reply, "ok", FALSE))
    message = g_strdup_printf (_ ("Evict failed: %s"),
                               json_object_get_string_member_with_default (reply, "error", "?"));
  else
    {
      g_autofree char *freed = g_format_size_full (
        (guint64)json_object_get_int_member_with_default (reply, "freed_bytes", 0),
        G_FORMAT_SIZE_IEC_UNITS);
      message = g_strdup_printf (
        _ ("Evicted %s: %lld on disk, %lld in RAM, %s freed in %.1f ms"),
        json_object_get_string_member_with_default (reply, "module", "?"),
        (long long)json_object_get_int_member_with_default (reply, "disk", 0),
        (long long)json_object_get_int_member_with_default (reply, "ram", 0), freed,
        json_object_get_double_member_with_default (reply, "seconds", 0) * 1e3);
    }
  toast (self, "evict", message);
  wick_weights_panel_refresh (self);
}

static void
on_restored (gpointer panel, JsonObject *reply, const char *what)
{
  WickWeightsPanel *self = panel;
  g_autofree char *message = NULL;
  if (!json_object_get_boolean_member_with_default (reply, "ok", FALSE))
    message = g_strdup_printf (_ ("Restore failed: %s"),
                               json_object_get_string_member_with_default (reply, "error", "?"));
  else if (json_object_has_member (reply, "restored_modules"))
    message = g_strdup_printf (
      _ ("Restored all: %lld modules"),
      (long long)json_object_get_int_member_with_default (reply, "restored_modules", 0));
  else
    message
      = g_strdup_printf (_ ("Restored %s: %lld parameters in %.1f ms"),
                         json_object_get_string_member_with_default (reply, "module", "?"),
                         (long long)json_object_get_int_member_with_default (reply, "restored", 0),
                         json_object_get_double_member_with_default (reply, "seconds", 0) * 1e3);
  toast (self, "restore", message);
  wick_weights_panel_refresh (self);
}

void
wick_weights_panel_refresh (WickWeightsPanel *self)
{
  g_return_if_fail (WICK_IS_WEIGHTS_PANEL (self));
  if (self->requests.listing)
    return;
  self->requests.listing = TRUE;
  g_autoptr (JsonObject) request = wick_live_request_new ("list");
  send_request (self, request, on_list, "list");
}

void
wick_weights_panel_evict (WickWeightsPanel *self, const char *module, const char *tier)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("evict");
  json_object_set_string_member (request, "module", module);
  json_object_set_string_member (request, "tier", tier);
  send_request (self, request, on_evicted, _ ("Evict"));
}

void
wick_weights_panel_restore (WickWeightsPanel *self, const char *module)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("restore");
  json_object_set_string_member (request, "module", module);
  send_request (self, request, on_restored, _ ("Restore"));
}

void
wick_weights_panel_restore_all (WickWeightsPanel *self)
{
  g_autoptr (JsonObject) request = wick_live_request_new ("restore-all");
  send_request (self, request, on_restored, _ ("Restore all"));
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
  return row != NULL ? row->where : NULL;
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
    widget_class, "/io/github/wickprofiler/Wick/live/wick-weights-panel.ui");
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, group);
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, empty);
  gtk_widget_class_bind_template_child (widget_class, WickWeightsPanel, restore_all);
  gtk_widget_class_bind_template_callback (widget_class, on_restore_all_clicked);
}

static void
wick_weights_panel_init (WickWeightsPanel *self)
{
  self->rows
    = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)module_row_free);
  gtk_widget_init_template (GTK_WIDGET (self));
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
