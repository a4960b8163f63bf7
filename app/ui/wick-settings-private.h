/* wick-settings-private.h — what only the tests call of wick-settings.h (the app
 * includes wick-settings.h alone). It declares no types: include it after
 * wick-settings.h. */
#pragma once

G_BEGIN_DECLS

/* The schema as wick_settings_get finds it: the build tree's when run from it,
 * else GLib's search path, else the one compiled under the install prefix.
 * where (optional) gets that directory, or "system" for GLib's path. NULL when
 * there is none. */
GSettingsSchema *wick_settings_lookup_schema (char **where);

G_END_DECLS
