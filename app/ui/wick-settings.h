/* wick-settings.h — the app's GSettings (io.github.wickprofiler.Wick), tolerant
 * of a missing schema (running uninstalled without GSETTINGS_SCHEMA_DIR):
 * then nothing is remembered and defaults apply. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GSettings *wick_settings_get (void); /* NULL without the schema; not a new reference */
void wick_settings_add_recent (const char *path);
char **wick_settings_get_recent (void);
gboolean wick_settings_get_window (int *width, int *height, gboolean *maximized);
void wick_settings_save_window (int width, int height, gboolean maximized);

G_END_DECLS
