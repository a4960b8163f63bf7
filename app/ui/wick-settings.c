/* wick-settings.c — see wick-settings.h. */
#include "wick-settings.h"

#define SCHEMA_ID "io.github.wickprofiler.Wick"
#define MAX_RECENT 10

GSettings *
wick_settings_get (void)
{
  static GSettings *settings;
  static gsize once;
  if (g_once_init_enter (&once))
    {
      GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
      g_autoptr (GSettingsSchema) schema
        = source ? g_settings_schema_source_lookup (source, SCHEMA_ID, TRUE) : NULL;
      if (schema)
        settings = g_settings_new (SCHEMA_ID);
      g_once_init_leave (&once, 1);
    }
  return settings;
}

void
wick_settings_add_recent (const char *path)
{
  GSettings *settings = wick_settings_get ();
  if (settings == NULL)
    return;
  g_auto (GStrv) old = g_settings_get_strv (settings, "recent-files");
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_strv_builder_add (builder, path);
  guint n = 1;
  for (guint i = 0; old[i] && n < MAX_RECENT; i++)
    if (g_strcmp0 (old[i], path) != 0)
      {
        g_strv_builder_add (builder, old[i]);
        n++;
      }
  g_auto (GStrv) list = g_strv_builder_end (builder);
  g_settings_set_strv (settings, "recent-files", (const char *const *)list);
}

char **
wick_settings_get_recent (void)
{
  GSettings *settings = wick_settings_get ();
  return settings ? g_settings_get_strv (settings, "recent-files") : NULL;
}

gboolean
wick_settings_get_window (int *width, int *height, gboolean *maximized)
{
  GSettings *settings = wick_settings_get ();
  if (settings == NULL)
    return FALSE;
  *width = g_settings_get_int (settings, "window-width");
  *height = g_settings_get_int (settings, "window-height");
  *maximized = g_settings_get_boolean (settings, "window-maximized");
  return *width > 0 && *height > 0;
}

void
wick_settings_save_window (int width, int height, gboolean maximized)
{
  GSettings *settings = wick_settings_get ();
  if (settings == NULL)
    return;
  g_settings_set_int (settings, "window-width", width);
  g_settings_set_int (settings, "window-height", height);
  g_settings_set_boolean (settings, "window-maximized", maximized);
}
