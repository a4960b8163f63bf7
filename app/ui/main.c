/* main.c — `wick [TRACE...]`: the Wick application. */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "wick-application.h"
#include "wick-input.h"
#include "wick-settings.h"

int
main (int argc, char **argv)
{
  /* Run from the build tree (README's and tools/run-demo.sh's way), the
   * catalogs the build compiled in <build>/po, as the schema is found there:
   * a German desktop gets a German Wick before `meson install`. */
  g_autofree char *catalogs = wick_running_from_build_tree ()
                                ? g_build_filename (WICK_BUILD_DIR, "po", NULL)
                                : g_strdup (WICK_LOCALEDIR);

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, catalogs);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_set_application_name ("Wick");
  g_autoptr (GError) error = NULL;
  if (!wick_max_line_length_from_environment (&error))
    {
      g_printerr ("wick: %s\n", error->message);
      return 2;
    }
  g_autoptr (WickApplication) app = wick_application_new ();
  int status = g_application_run (G_APPLICATION (app), argc, argv);
  return status != 0 ? status : wick_application_get_exit_status (app);
}
