/* wick-window-dnd.c — files dropped on a window open as File → Open opens
 * them: several rank traces as one job, else the first in this window when it
 * shows the welcome page, the others (and all of them over a document) in new
 * windows. */
#include "config.h"

#include "wick-window-internal.h"

#include "wick-application.h"

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, WickWindow *self)
{
  GSList *files = g_value_get_boxed (value);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  if (app == NULL)
    return FALSE;
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  for (GSList *l = files; l; l = l->next)
    g_ptr_array_add (list, l->data);
  wick_application_open_files (WICK_APPLICATION (app), (GFile **)list->pdata, list->len,
                               GTK_WINDOW (self));
  return files != NULL;
}

void
wick_window_dnd_init (WickWindow *self)
{
  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}
