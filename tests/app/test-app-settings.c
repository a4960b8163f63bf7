/* test-app-settings — the app run from the build tree has settings: the schema
 * compiled in <build>/data is found with GSETTINGS_SCHEMA_DIR unset and no
 * system schema, and a recently opened file is written to the settings backend
 * (a keyfile here) and read back by a second process. No display needed. */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "ui/wick-settings.h"
#include "ui/wick-settings-private.h"

static char *self_path;

static void
test_build_tree_schema (void)
{
  g_autofree char *where = NULL;
  g_autoptr (GSettingsSchema) schema = wick_settings_lookup_schema (&where);
  g_assert_nonnull (schema);
  g_autofree char *expected = g_build_filename (WICK_BUILD_DIR, "data", NULL);
  g_assert_cmpstr (where, ==, expected);
  /* Every key the app reads exists; the unused capture-* keys are gone. */
  const char *keys[] = { "recent-files", "window-width", "window-height", "window-maximized",
                         "show-details", "show-ops" };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    g_assert_true (g_settings_schema_has_key (schema, keys[i]));
  g_assert_false (g_settings_schema_has_key (schema, "capture-gate-cos"));
  g_assert_false (g_settings_schema_has_key (schema, "capture-min-speedup"));
  g_assert_false (g_settings_schema_has_key (schema, "capture-warmup"));
}

static void
test_recent_file_remembered (void)
{
  g_assert_nonnull (wick_settings_get ());
  wick_settings_add_recent ("/tmp/wick-settings-test/a.jsonl");
  g_settings_sync ();

  /* A second process (this binary in its reader role) sees the file. */
  const char *argv[] = { self_path, "--read-recent", NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (out, ==, "/tmp/wick-settings-test/a.jsonl\n");
}

int
main (int argc, char **argv)
{
  self_path = g_canonicalize_filename (argv[0], NULL);
  if (argc == 2 && g_str_equal (argv[1], "--read-recent"))
    {
      g_auto (GStrv) recent = wick_settings_get_recent ();
      if (recent != NULL && recent[0] != NULL)
        g_print ("%s\n", recent[0]);
      return 0;
    }

  /* As a newcomer runs it: no schema directory, no system schema, settings
   * kept in a keyfile of a fresh configuration directory. */
  g_autofree char *home = g_dir_make_tmp ("wick-settings-XXXXXX", NULL);
  g_assert_nonnull (home);
  g_unsetenv ("GSETTINGS_SCHEMA_DIR");
  g_setenv ("XDG_DATA_DIRS", home, TRUE);
  g_setenv ("XDG_DATA_HOME", home, TRUE);
  g_setenv ("XDG_CONFIG_HOME", home, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "keyfile", TRUE);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/app/settings/build-tree-schema", test_build_tree_schema);
  g_test_add_func ("/app/settings/recent-file-remembered", test_recent_file_remembered);
  int status = g_test_run ();

  g_autofree char *keyfile = g_build_filename (home, "glib-2.0", "settings", "keyfile", NULL);
  g_remove (keyfile);
  g_autofree char *d1 = g_build_filename (home, "glib-2.0", "settings", NULL);
  g_autofree char *d2 = g_build_filename (home, "glib-2.0", NULL);
  g_rmdir (d1);
  g_rmdir (d2);
  g_rmdir (home);
  return status;
}
