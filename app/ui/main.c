/* main.c — `wick [TRACE...]`: the Wick application. */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "wick-application.h"

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, WICK_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_set_application_name ("Wick");
  g_autoptr (WickApplication) app = wick_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
