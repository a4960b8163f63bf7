/* test-app-live-panels.c — the Weights and Stages pages read typed control
 * results (app/client/wick-control-result.c), never JSON (under Xvfb): a fake
 * session on a real Unix socket answers `list` first with a reply that breaks
 * the protocol (an unknown "where"), then with a good one. The broken reply
 * changes nothing on the page and is one toast naming the member (the same
 * problem again is not repeated); the good one fills the rows. Skips without
 * a display.
 */
#include "config.h"

#include <adwaita.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/session/wick-live-session.h"
#include "ui/session/wick-live-session-private.h"
#include "ui/session/wick-stages-panel.h"
#include "ui/session/wick-stages-panel-private.h"
#include "ui/session/wick-weights-panel.h"
#include "ui/session/wick-weights-panel-private.h"
#include "ui/wick-application.h"
#include "ui/wick-window.h"

static WickApplication *app;

#define BAD_LIST                                                                                   \
  "{\"v\":1,\"ok\":true,\"stages\":[{\"name\":\"denoise\",\"state\":\"eager\"}],\"modules\":"      \
  "[{\"name\":\"embedding\",\"bytes\":4194304,\"parameters\":1,\"where\":\"tape\",\"disk\":0,"     \
  "\"ram\":0,\"restored_count\":0}],\"cuda\":false,\"cuda_unavailable\":\"no CUDA device\","       \
  "\"weights\":true,\"capture\":true}"
#define GOOD_LIST                                                                                  \
  "{\"v\":1,\"ok\":true,\"stages\":[{\"name\":\"denoise\",\"state\":\"eager\"}],\"modules\":"      \
  "[{\"name\":\"embedding\",\"bytes\":4194304,\"parameters\":1,\"where\":\"resident\",\"disk\":"   \
  "0,\"ram\":0,\"restored_count\":0}],\"cuda\":false,\"cuda_unavailable\":\"no CUDA device\","     \
  "\"weights\":true,\"capture\":true}"

#define RAM_LIST                                                                                   \
  "{\"v\":1,\"ok\":true,\"stages\":[{\"name\":\"denoise\",\"state\":\"eager\"}],\"modules\":"      \
  "[{\"name\":\"embedding\",\"bytes\":4194304,\"parameters\":1,\"where\":\"ram\",\"disk\":"        \
  "0,\"ram\":1,\"restored_count\":0}],\"cuda\":false,\"cuda_unavailable\":\"no CUDA device\","     \
  "\"weights\":true,\"capture\":true}"

/* The fake session: each connection gets one request read and one reply,
 * the reply of the current phase (chosen when the request is read, as a
 * session answers from its state then); while @hold is set, the reply waits. */
typedef struct
{
  GSocketListener *listener;
  char *path;
  volatile gint good; /* answer GOOD_LIST from now on */
  volatile gint ram;  /* answer RAM_LIST (the module evicted) from now on */
  volatile gint hold; /* keep the reply until this is cleared */
  volatile gint read; /* requests read */
  volatile gint served;
  GThread *thread;
  volatile gint stop;
} FakeSession;

static gboolean
read_exactly (GSocket *socket, guint8 *data, gsize length)
{
  gsize done = 0;
  while (done < length)
    {
      gssize n = g_socket_receive (socket, (char *)data + done, length - done, NULL, NULL);
      if (n <= 0)
        return FALSE;
      done += (gsize)n;
    }
  return TRUE;
}

static gpointer
serve (gpointer data)
{
  FakeSession *fake = data;
  while (!g_atomic_int_get (&fake->stop))
    {
      g_autoptr (GSocketConnection) connection
        = g_socket_listener_accept (fake->listener, NULL, NULL, NULL);
      if (connection == NULL || g_atomic_int_get (&fake->stop))
        break;
      GSocket *socket = g_socket_connection_get_socket (connection);
      g_socket_set_blocking (socket, TRUE);
      guint8 header[4];
      if (!read_exactly (socket, header, 4))
        continue;
      guint32 length = header[0] | header[1] << 8 | header[2] << 16 | (guint32)header[3] << 24;
      g_autofree guint8 *body = g_malloc (length + 1);
      if (!read_exactly (socket, body, length))
        continue;
      const char *reply = g_atomic_int_get (&fake->ram)    ? RAM_LIST
                          : g_atomic_int_get (&fake->good) ? GOOD_LIST
                                                           : BAD_LIST;
      g_atomic_int_inc (&fake->read);
      while (g_atomic_int_get (&fake->hold) && !g_atomic_int_get (&fake->stop))
        g_usleep (1000);
      guint32 n = (guint32)strlen (reply);
      guint8 out[4] = { n & 0xff, n >> 8 & 0xff, n >> 16 & 0xff, n >> 24 & 0xff };
      g_socket_send (socket, (const char *)out, 4, NULL, NULL);
      g_socket_send (socket, reply, n, NULL, NULL);
      g_atomic_int_inc (&fake->served);
    }
  return NULL;
}

static void
fake_start (FakeSession *fake, const char *dir)
{
  fake->path = g_build_filename (dir, "fake.sock", NULL);
  fake->listener = g_socket_listener_new ();
  g_autoptr (GSocketAddress) address = g_unix_socket_address_new (fake->path);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_socket_listener_add_address (fake->listener, address, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_DEFAULT, NULL, NULL, &error));
  g_assert_no_error (error);
  fake->thread = g_thread_new ("fake-session", serve, fake);
}

static void
fake_stop (FakeSession *fake)
{
  g_atomic_int_set (&fake->stop, 1);
  /* Wake the accept with one last connection. */
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketAddress) address = g_unix_socket_address_new (fake->path);
  g_autoptr (GSocketConnection) connection
    = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, NULL);
  g_thread_join (fake->thread);
  g_socket_listener_close (fake->listener);
  g_object_unref (fake->listener);
  g_unlink (fake->path);
  g_free (fake->path);
}

/* The panels' requests go to a thread of this process: 20 s is generous. */
#define iterate_until(done, data, what) app_test_wait_until (done, data, 20000, what)

static gboolean
weights_idle (gpointer panel)
{
  return wick_weights_panel_get_pending (panel) == 0;
}

static gboolean
stages_idle (gpointer panel)
{
  return wick_stages_panel_get_pending (panel) == 0;
}

static guint
toasts_raised (WickWindow *window)
{
  guint raised = 0, coalesced = 0, waiting = 0;
  wick_live_window_get_toast_counts (window, &raised, &coalesced, &waiting);
  return raised + coalesced + waiting;
}

static void
test_malformed_list (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-panels-XXXXXX", NULL);
  FakeSession fake = { 0 };
  fake_start (&fake, dir);
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  WickWeightsPanel *weights = WICK_WEIGHTS_PANEL (wick_weights_panel_new (window, fake.path));
  WickStagesPanel *stages = WICK_STAGES_PANEL (wick_stages_panel_new (window, fake.path));
  g_object_ref_sink (weights);
  g_object_ref_sink (stages);
  iterate_until (weights_idle, weights, "the first list (Weights)");
  iterate_until (stages_idle, stages, "the first list (Stages)");
  /* Not half-applied: no row, no stage from a reply that broke the protocol. */
  g_assert_cmpuint (wick_weights_panel_get_n_modules (weights), ==, 0);
  g_assert_cmpuint (wick_stages_panel_get_n_stages (stages), ==, 0);
  /* Said once per page, even when the same reply comes again. */
  guint said = toasts_raised (window);
  g_assert_cmpuint (said, ==, 2);
  wick_weights_panel_refresh (weights);
  iterate_until (weights_idle, weights, "the second list");
  g_assert_cmpuint (toasts_raised (window), ==, said);

  g_atomic_int_set (&fake.good, 1);
  wick_weights_panel_refresh (weights);
  wick_stages_panel_refresh (stages);
  iterate_until (weights_idle, weights, "the good list (Weights)");
  iterate_until (stages_idle, stages, "the good list (Stages)");
  g_assert_cmpuint (wick_weights_panel_get_n_modules (weights), ==, 1);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "resident");
  /* One parameter, in the singular. */
  g_assert_true (g_str_has_suffix (wick_weights_panel_get_subtitle (weights, "embedding"),
                                   " · 1 parameter · resident"));
  g_assert_cmpuint (wick_stages_panel_get_n_stages (stages), ==, 1);
  g_assert_cmpstr (wick_stages_panel_get_state (stages, "denoise"), ==, "eager");
  g_assert_cmpstr (wick_stages_panel_get_unavailable_reason (stages), ==, "no CUDA device");
  g_assert_cmpint (g_atomic_int_get (&fake.served), >=, 5);

  g_object_unref (weights);
  g_object_unref (stages);
  app_test_window_close (window);
  fake_stop (&fake);
  g_rmdir (dir);
}

static gboolean
fake_read_one (gpointer data)
{
  return g_atomic_int_get (&((FakeSession *)data)->read) >= 1;
}

/* A refresh asked for while a `list` is in flight (an eviction's reply comes
 * while the periodic list is out) is not lost: the list goes again after the
 * one in flight, so a reply read before the eviction took effect is not the
 * page's last word (live-window once saw "resident" after an eviction). */
static void
test_list_again (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-panels-XXXXXX", NULL);
  FakeSession fake = { 0 };
  g_atomic_int_set (&fake.good, 1);
  g_atomic_int_set (&fake.hold, 1);
  fake_start (&fake, dir);
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  WickWeightsPanel *weights = WICK_WEIGHTS_PANEL (wick_weights_panel_new (window, fake.path));
  g_object_ref_sink (weights);
  /* The panel's first list is read and answered "resident", held. */
  iterate_until (fake_read_one, &fake, "the first list read");
  /* Then the module is evicted and the page asked again, the list still out. */
  g_atomic_int_set (&fake.ram, 1);
  wick_weights_panel_refresh (weights);
  g_atomic_int_set (&fake.hold, 0);
  iterate_until (weights_idle, weights, "the lists");
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "ram");
  g_assert_cmpint (g_atomic_int_get (&fake.served), ==, 2);

  g_object_unref (weights);
  app_test_window_close (window);
  fake_stop (&fake);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/live-panels/malformed-list", test_malformed_list);
  g_test_add_func ("/live-panels/list-again", test_list_again);
  return app_test_ui_run (app);
}
