/* wick-settings.c — see wick-settings.h. */
#include "config.h"

#include "wick-settings.h"
#include "wick-settings-private.h"

#define SCHEMA_ID "io.github.wickprofiler.Wick"
#define MAX_RECENT 10

gboolean
wick_running_from_build_tree (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  return exe != NULL && g_str_has_prefix (exe, WICK_BUILD_DIR G_DIR_SEPARATOR_S);
}

GSettingsSchema *
wick_settings_lookup_schema (char **where)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  if (wick_running_from_build_tree ())
    {
      /* The build tree's own schema wins over an installed (maybe older) one. */
      g_autofree char *dir = g_build_filename (WICK_BUILD_DIR, "data", NULL);
      g_autoptr (GSettingsSchemaSource) build
        = g_settings_schema_source_new_from_directory (dir, source, FALSE, NULL);
      GSettingsSchema *schema = build ? g_settings_schema_source_lookup (build, SCHEMA_ID, FALSE)
                                      : NULL;
      if (schema)
        {
          if (where)
            *where = g_steal_pointer (&dir);
          return schema;
        }
    }
  GSettingsSchema *schema = source ? g_settings_schema_source_lookup (source, SCHEMA_ID, TRUE)
                                   : NULL;
  if (schema)
    {
      if (where)
        *where = g_strdup ("system");
      return schema;
    }
  /* Installed under a prefix GLib does not search (meson install --prefix
   * ~/wick): the schema compiled there by the post-install step. */
  g_autoptr (GSettingsSchemaSource) installed
    = g_settings_schema_source_new_from_directory (WICK_SCHEMADIR, source, FALSE, NULL);
  schema = installed ? g_settings_schema_source_lookup (installed, SCHEMA_ID, FALSE) : NULL;
  if (schema && where)
    *where = g_strdup (WICK_SCHEMADIR);
  return schema;
}

GSettings *
wick_settings_get (void)
{
  static GSettings *settings;
  static gsize once;
  if (g_once_init_enter (&once))
    {
      g_autoptr (GSettingsSchema) schema = wick_settings_lookup_schema (NULL);
      if (schema)
        settings = g_settings_new_full (schema, NULL, NULL);
      else
        g_warning ("the GSettings schema %s is not installed: recent files, the window size "
                   "and the view options are not remembered",
                   SCHEMA_ID);
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
