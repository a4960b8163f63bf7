/* wick-settings.h — the app's GSettings (io.github.wickprofiler.Wick).
 *
 * The schema is looked up where the running binary belongs: a binary in the
 * build tree (README's and tools/run-demo.sh's way to run Wick) uses the
 * schema compiled in <build>/data, without GSETTINGS_SCHEMA_DIR; an installed
 * one the system's schemas (compiled at install time). Only when neither has
 * it (a broken install) is nothing remembered: then a warning says so once and
 * defaults apply. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GSettings *wick_settings_get (void); /* NULL without the schema; not a new reference */
/* Whether the running binary is one of this build tree's: then the build
 * tree's schema (above) and message catalogs (<build>/po, main.c) are used. */
gboolean wick_running_from_build_tree (void);
void wick_settings_add_recent (const char *path);
char **wick_settings_get_recent (void);

G_END_DECLS
