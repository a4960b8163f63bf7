/* wick-live-progress.c — the "run in progress" banner of a window whose
 * document is still being fed (a live session, a followed file); see
 * wick-live-session.h, wick_live_window_update_progress.
 *
 * While the document's health is provisional (wick_document_analyze before
 * finish) the rules only the end of the run decides are pending, not failed:
 * the banner says the run is in progress and how many are pending, with a
 * button to the Health page. It is replaced only when its text changes (a
 * banner shown again moves to the end of the banner box), and hidden once
 * the health is final.
 */
#include "config.h"

#include "wick-live-session.h"
#include "wick-live-session-private.h"

#include <glib/gi18n.h>

#define BANNER_ID "in-progress"
#define DATA_KEY "wick-progress-banner"

const char *
wick_live_window_update_progress (WickWindow *window, WickDocument *document)
{
  g_return_val_if_fail (WICK_IS_WINDOW (window), NULL);
  const char *shown = g_object_get_data (G_OBJECT (window), DATA_KEY);
  if (document == NULL || !wick_document_get_health_provisional (document))
    {
      if (shown != NULL)
        {
          wick_window_hide_banner (window, BANNER_ID);
          g_object_set_data (G_OBJECT (window), DATA_KEY, NULL);
        }
      return NULL;
    }
  guint n = wick_document_count_health (document, WICK_SEVERITY_PENDING);
  g_autofree char *message
    = n == 0 ? g_strdup (_ ("The run is in progress: its health is provisional until it ends."))
             : g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                             "The run is in progress: %u health rule is pending "
                                             "until it ends.",
                                             "The run is in progress: %u health rules are pending "
                                             "until it ends.",
                                             n),
                                n);
  if (g_strcmp0 (shown, message) == 0)
    return shown;
  wick_window_show_banner (window, BANNER_ID, message, _ ("Health"), "win.show-page::health");
  g_object_set_data_full (G_OBJECT (window), DATA_KEY, g_steal_pointer (&message), g_free);
  return g_object_get_data (G_OBJECT (window), DATA_KEY);
}

const char *
wick_live_window_get_progress (WickWindow *window)
{
  return g_object_get_data (G_OBJECT (window), DATA_KEY);
}
