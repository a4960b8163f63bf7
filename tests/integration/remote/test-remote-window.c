/* test-remote-window.c — the app attached to a wick-demo through ssh (run by
 * test-remote-ssh.sh with WICK_REMOTE_EXEC, which starts the sshd and the demo
 * and sets WICK_REMOTE_URL=ssh://host/PID, WICK_SSH and WICK_REMOTE_COMMAND):
 * the live window fills from the node's records, the Weights page evicts and
 * restores a module over the link, and when ssh is killed the session ends
 * with what was received kept. ssh's questions are answered in the real
 * wick-askpass window (found on the X display by its title, keys pressed
 * through XTest as a user would): a host key refused and accepted, a key's
 * passphrase typed and cancelled, a question left unanswered past its
 * deadline. With WICK_SCREENSHOT_DIR it saves remote-askpass-hostkey.png,
 * remote-askpass-passphrase.png, remote-askpass-unanswered.png, remote-dialog.png, remote-weights.png
 * (evicted), remote-window.png (restored) and remote-lost.png (the banner
 * after the drop). Skips without a display.
 */
#include "config.h"

#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "live-test-util.h"
#include "session/wick-attach-dialog.h"
#include "session/wick-live-session.h"
#include "session/wick-live-session-private.h"
#include "client/wick-remote-channel.h"
#include "client/wick-remote-channel-private.h"
#include "session/wick-remote-dialog.h"
#include "session/wick-remote-dialog-private.h"
#include "client/wick-remote-session.h"
#include "session/wick-stages-panel.h"
#include "session/wick-stages-panel-private.h"
#include "session/wick-weights-panel.h"
#include "session/wick-weights-panel-private.h"
#include "wick-application.h"
#include "wick-window.h"
#include "wick-window-private.h"

static void
iterate_for (int ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (2000);
    }
}

static gboolean
iterate_and_check (gboolean (*done) (gpointer), gpointer data)
{
  gint64 end = g_get_monotonic_time () + 10000;
  while (g_main_context_iteration (NULL, FALSE) && g_get_monotonic_time () < end)
    ;
  return done (data);
}

#define iterate_until(done, data)                                                                  \
  WICK_TEST_WAIT_UNTIL (iterate_and_check ((done), (data)), LIVE_TEST_WAIT_S,                      \
                        "%s did not become true", #done)

static gboolean
window_attached (gpointer window)
{
  return wick_live_session_from_window (window) != NULL;
}

static gboolean
has_spans (gpointer window)
{
  guint n = 0;
  wick_document_get_spans (wick_window_get_document (window), &n);
  return n > 20;
}

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

static gboolean
session_ended (gpointer session)
{
  return wick_live_session_is_ended (session);
}

static void
screenshot (const char *name)
{
  const char *directory = g_getenv ("WICK_SCREENSHOT_DIR");
  if (directory == NULL)
    return;
  iterate_for (500);
  g_autofree char *path = g_build_filename (directory, name, NULL);
  g_autofree char *command = g_strdup_printf ("import -window root '%s'", path);
  if (system (command) != 0)
    g_test_message ("screenshot %s failed", path);
}

/* Whether child @pid exited within @seconds (not reaped: its owner does). */
static gboolean
wick_test_child_exited_within (int pid, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  while (!wick_test_child_exited (pid))
    {
      if (g_get_monotonic_time () >= end)
        return FALSE;
      g_usleep (10000);
    }
  return TRUE;
}

/* One application for the tests (GTK takes one registration per process). */
static WickApplication *
shared_app (void)
{
  static WickApplication *app;
  if (app == NULL)
    {
      app = wick_application_new ();
      g_application_register (G_APPLICATION (app), NULL, NULL);
    }
  return app;
}

static gboolean
dialog_listed (gpointer dialog)
{
  return !wick_remote_dialog_is_listing (dialog);
}

/* ---- wick-askpass, driven as a user would: its window found by title on the
 * X display, keys pressed through XTest (libXtst, loaded at run time). ---- */

#define ASKPASS_TITLE "Wick: ssh"
/* The longest main-loop iteration allowed while ssh's question waits (a
 * hang would be the whole deadline; a loaded 2-core machine stalls ~1 s) */
#define STALL_MAX_MS 2500

typedef int (*FakeKeyEvent) (Display *, unsigned int, Bool, unsigned long);

static Display *x_display;
static FakeKeyEvent fake_key;

/* Whether keys can be pressed here (an X display with XTest). */
static gboolean
x_keys_available (void)
{
  if (x_display != NULL)
    return fake_key != NULL;
  x_display = XOpenDisplay (NULL);
  if (x_display == NULL)
    return FALSE;
  void *xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);
  if (xtst != NULL)
    fake_key = (FakeKeyEvent)dlsym (xtst, "XTestFakeKeyEvent");
  return fake_key != NULL;
}

static Window
find_named (Window window, const char *name, int depth)
{
  char *title = NULL;
  if (XFetchName (x_display, window, &title) && title != NULL)
    {
      gboolean same = g_str_equal (title, name);
      XFree (title);
      XWindowAttributes attributes;
      if (same && XGetWindowAttributes (x_display, window, &attributes)
          && attributes.map_state == IsViewable)
        return window;
    }
  if (depth >= 2)
    return None;
  Window root, parent, *children = NULL;
  unsigned int n = 0;
  Window found = None;
  if (XQueryTree (x_display, window, &root, &parent, &children, &n))
    {
      for (unsigned int i = 0; i < n && found == None; i++)
        found = find_named (children[i], name, depth + 1);
      if (children != NULL)
        XFree (children);
    }
  return found;
}

static Window
askpass_window (void)
{
  XSync (x_display, False);
  return find_named (DefaultRootWindow (x_display), ASKPASS_TITLE, 0);
}

/* Waits (the app's main loop running) for wick-askpass's window; the longest
 * main-loop iteration meanwhile goes to @stall_ms. */
static Window
wait_for_askpass (double seconds, double *stall_ms)
{
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  gint64 last = g_get_monotonic_time ();
  *stall_ms = 0;
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      gint64 now = g_get_monotonic_time ();
      *stall_ms = MAX (*stall_ms, (now - last) / 1e3);
      last = now;
      Window window = askpass_window ();
      if (window != None)
        return window;
      g_usleep (20000);
      last = g_get_monotonic_time ();
    }
  return None;
}

static void
press (const char *key, gboolean alt)
{
  KeySym sym = XStringToKeysym (key);
  g_assert_true (sym != NoSymbol);
  KeyCode code = XKeysymToKeycode (x_display, sym);
  g_assert_true (code != 0);
  KeyCode alt_code = XKeysymToKeycode (x_display, XK_Alt_L);
  if (alt)
    fake_key (x_display, alt_code, True, CurrentTime);
  fake_key (x_display, code, True, CurrentTime);
  fake_key (x_display, code, False, CurrentTime);
  if (alt)
    fake_key (x_display, alt_code, False, CurrentTime);
  XSync (x_display, False);
  iterate_for (60);
}

/* Gives @window the keyboard, then presses: "type:TEXT" (lower-case letters
 * and digits), "alt+X", or a key name (Return, Escape). */
static void
askpass_keys (Window window, const char *const *keys)
{
  XRaiseWindow (x_display, window);
  XSetInputFocus (x_display, window, RevertToParent, CurrentTime);
  XSync (x_display, False);
  iterate_for (300);
  for (guint i = 0; keys[i] != NULL; i++)
    {
      if (g_str_has_prefix (keys[i], "type:"))
        for (const char *c = keys[i] + 5; *c != '\0'; c++)
          {
            char one[2] = { *c, '\0' };
            press (one, FALSE);
          }
      else if (g_str_has_prefix (keys[i], "alt+"))
        press (keys[i] + 4, TRUE);
      else
        press (keys[i], FALSE);
    }
}

/* Whether wick-askpass's window went away within @seconds. */
static gboolean
askpass_gone_within (double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  while (askpass_window () != None)
    {
      if (g_get_monotonic_time () >= end)
        return FALSE;
      iterate_for (50);
    }
  return TRUE;
}


/* ssh's questions in wick-askpass's dialog, answered with the keyboard */
static void
askpass_questions (WickRemoteDialog *dialog, gint64 demo)
{
  double stall_ms;
  /* 1. a host whose key is not known: the question, refused (Escape) */
  gint64 start = g_get_monotonic_time ();
  wick_remote_dialog_list (dialog, "wickfresh");
  g_assert_true (wick_remote_dialog_is_listing (dialog));
  Window asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  g_test_message ("host key question shown %.2f s after the pick, the app's main loop stalled at "
                  "most %.0f ms meanwhile",
                  (g_get_monotonic_time () - start) / 1e6, stall_ms);
  screenshot ("remote-askpass-hostkey.png");
  const char *const refuse[] = { "Escape", NULL };
  askpass_keys (asking, refuse);
  iterate_until (dialog_listed, dialog);
  g_test_message ("refused: %s", wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (strstr (wick_remote_dialog_get_error (dialog),
                            "ssh did not connect to wickfresh: you did not accept its host key"));
  g_assert_true (g_str_has_prefix (wick_remote_dialog_get_error (dialog), "ssh did not connect"));
  g_assert_nonnull (strstr (wick_remote_dialog_get_error (dialog), "Host key verification failed"));
  g_assert_true (askpass_gone_within (5));
  /* 2. asked again, accepted (Alt+C: Connect): the host's sessions */
  wick_remote_dialog_list (dialog, "wickfresh");
  asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  const char *const accept[] = { "alt+c", NULL };
  askpass_keys (asking, accept);
  iterate_until (dialog_listed, dialog);
  g_assert_cmpstr (wick_remote_dialog_get_error (dialog), ==, NULL);
  gboolean listed = FALSE;
  for (guint i = 0; i < wick_remote_dialog_get_n_sessions (dialog); i++)
    listed |= wick_remote_dialog_get_session_pid (dialog, i) == demo;
  g_assert_true (listed);
  /* 3. a key with a passphrase: typed into the dialog's hidden entry */
  start = g_get_monotonic_time ();
  wick_remote_dialog_list (dialog, "wickpass");
  asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  const char *const passphrase[] = { "type:wickpass42", NULL };
  askpass_keys (asking, passphrase);
  screenshot ("remote-askpass-passphrase.png");
  const char *const enter[] = { "Return", NULL };
  askpass_keys (asking, enter);
  iterate_until (dialog_listed, dialog);
  g_test_message ("passphrase: listed %.2f s after the pick", (g_get_monotonic_time () - start) / 1e6);
  g_assert_cmpstr (wick_remote_dialog_get_error (dialog), ==, NULL);
  listed = FALSE;
  for (guint i = 0; i < wick_remote_dialog_get_n_sessions (dialog); i++)
    listed |= wick_remote_dialog_get_session_pid (dialog, i) == demo;
  g_assert_true (listed);
  /* 4. the passphrase question cancelled (Escape) */
  wick_remote_dialog_list (dialog, "wickpass");
  asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  askpass_keys (asking, refuse);
  iterate_until (dialog_listed, dialog);
  g_test_message ("cancelled: %s", wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (strstr (wick_remote_dialog_get_error (dialog),
                            "ssh could not log in to wickpass: its question for a passphrase was "
                            "cancelled"));
  g_assert_null (strstr (wick_remote_dialog_get_error (dialog), "WARNING"));
  g_assert_true (askpass_gone_within (5));
  /* 5. nobody answers: the dialog's deadline (3 s here) ends it, the app
   * answering all along */
  g_setenv ("WICK_ASKPASS_TIMEOUT", "3", TRUE);
  start = g_get_monotonic_time ();
  wick_remote_dialog_list (dialog, "wickpass");
  asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  /* from the question shown on: the main loop keeps running */
  double worst_ms = 0;
  gint64 last = g_get_monotonic_time ();
  while (wick_remote_dialog_is_listing (dialog)
         && g_get_monotonic_time () - start < 30 * G_USEC_PER_SEC)
    {
      g_main_context_iteration (NULL, FALSE);
      worst_ms = MAX (worst_ms, (g_get_monotonic_time () - last) / 1e3);
      g_usleep (10000);
      last = g_get_monotonic_time ();
    }
  double deadline_s = (g_get_monotonic_time () - start) / 1e6;
  g_unsetenv ("WICK_ASKPASS_TIMEOUT");
  g_test_message ("unanswered: the error %.2f s after the pick (deadline 3 s), the main loop "
                  "stalled at most %.0f ms: %s",
                  deadline_s, worst_ms, wick_remote_dialog_get_error (dialog));
  g_assert_false (wick_remote_dialog_is_listing (dialog));
  g_assert_cmpfloat (deadline_s, >=, 3);
  g_assert_cmpfloat (deadline_s, <, 15);
  g_assert_cmpfloat (worst_ms, <, STALL_MAX_MS);
  g_assert_nonnull (wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (strstr (wick_remote_dialog_get_error (dialog),
                            "its question for a passphrase had no answer within 3 s"));
  g_assert_true (askpass_gone_within (5));
  screenshot ("remote-askpass-unanswered.png");
}

/* File → Attach to Remote Process…: the hosts of ~/.ssh/config (the test's
 * HOME), ssh's questions answered in wick-askpass (see the top), a host's
 * sessions listed through the real sshd with the spinner shown meanwhile,
 * one attached. */
static void
test_remote_dialog (void)
{
  const char *url = g_getenv ("WICK_REMOTE_URL");
  if (url == NULL)
    {
      g_test_skip ("WICK_REMOTE_URL is not set (test-remote-ssh.sh sets it)");
      return;
    }
  gint64 demo = g_ascii_strtoll (strrchr (url, '/') + 1, NULL, 10);
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  /* the menu's action opens it */
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach-remote", NULL);
  iterate_for (300);
  WickRemoteDialog *dialog = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (WICK_IS_REMOTE_DIALOG (l->data))
      dialog = l->data;
  g_assert_nonnull (dialog);
  /* the names, in order, once each; no pattern, negation, option or odd name */
  g_autoptr (GString) hosts = g_string_new (NULL);
  for (guint i = 0; i < wick_remote_dialog_get_n_hosts (dialog); i++)
    g_string_append_printf (hosts, "%s%s", i > 0 ? " " : "", wick_remote_dialog_get_host (dialog, i));
  g_assert_cmpstr (hosts->str, ==, "wicknode wickfresh wickpass gpu-01 login.example.org");

  if (x_keys_available ())
    askpass_questions (dialog, demo);
  else
    g_test_incomplete ("no X display with XTest (libXtst.so.6): ssh's questions not answered");

  /* the configured host: listed through the sshd, the demo among them */
  wick_remote_dialog_list (dialog, wick_remote_dialog_get_host (dialog, 0));
  g_assert_true (wick_remote_dialog_is_listing (dialog));
  iterate_until (dialog_listed, dialog);
  g_assert_null (wick_remote_dialog_get_error (dialog));
  guint found = G_MAXUINT;
  for (guint i = 0; i < wick_remote_dialog_get_n_sessions (dialog); i++)
    if (wick_remote_dialog_get_session_pid (dialog, i) == demo)
      found = i;
  g_assert_cmpuint (found, !=, G_MAXUINT);
  screenshot ("remote-dialog.png");
  GtkWindow *shown = wick_remote_dialog_attach (dialog, found);
  g_assert_true (shown == GTK_WINDOW (window)); /* the empty window is reused */
  iterate_until (window_attached, window);
  WickLiveSession *session = wick_live_session_from_window (window);
  g_autofree char *expected = g_strdup_printf ("ssh://wicknode/%" G_GINT64_FORMAT, demo);
  g_assert_cmpstr (wick_live_session_get_socket_path (session), ==, expected);
  iterate_until (has_spans, window);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (200);
}

static gboolean
link_lost (gpointer session)
{
  return wick_live_session_get_link_lost (session) != NULL;
}

/* How soon the "connection lost" banner must follow a killed ssh: ~1 s is
 * the aim (0.03-0.4 s typically here), the bound leaves room for a main
 * loop stalled by a loaded 2-core machine (outliers of 1.1-2.3 s seen). */
#define LOST_BANNER_MAX_S 3.0

/* Kills the session's ssh (its attach link's) and returns the seconds until
 * the lost banner showed. With @hold the main thread commits nothing
 * meanwhile (as when busy): the banner must not wait for the batches. */
static double
kill_link (WickLiveSession *session, gboolean hold)
{
  int pid = wick_live_session_get_ssh_pid (session);
  g_assert_cmpint (pid, >, 0);
  wick_live_session_hold_commits (session, hold);
  gint64 killed_us = g_get_monotonic_time ();
  kill (pid, SIGKILL);
  iterate_until (link_lost, session);
  double seconds = (g_get_monotonic_time () - killed_us) / 1e6;
  g_assert_nonnull (strstr (wick_live_session_get_link_lost (session), "killed by signal 9"));
  if (hold)
    g_assert_false (wick_live_session_is_ended (session)); /* the end waits in the queue */
  wick_live_session_hold_commits (session, FALSE);
  return seconds;
}

/* A killed ssh is noticed from ssh's exit and its stdout's hang-up, not from
 * the batches: the banner within LOST_BANNER_MAX_S, also while the main
 * thread commits nothing; then the session ends with the link's reason and
 * what arrived. Rounds alternate, min–max reported. */
static void
test_remote_kill_latency (void)
{
  const char *url = g_getenv ("WICK_REMOTE_URL");
  if (url == NULL)
    {
      g_test_skip ("WICK_REMOTE_URL is not set (test-remote-ssh.sh sets it)");
      return;
    }
  WickApplication *app = shared_app ();
  double min_s = G_MAXDOUBLE, max_s = 0;
  for (int round = 0; round < 4; round++)
    {
      WickWindow *window = wick_window_new (GTK_APPLICATION (app));
      gtk_window_present (GTK_WINDOW (window));
      wick_live_ui_attach_url (app, GTK_WINDOW (window), url);
      iterate_until (window_attached, window);
      WickLiveSession *session = wick_live_session_from_window (window);
      iterate_until (has_spans, window);
      gboolean hold = round % 2 == 1;
      double seconds = kill_link (session, hold);
      g_test_message ("round %d (%s): the lost banner %.3f s after the kill", round,
                      hold ? "commits held" : "committing", seconds);
      g_assert_cmpfloat (seconds, <, LOST_BANNER_MAX_S);
      min_s = MIN (min_s, seconds);
      max_s = MAX (max_s, seconds);
      iterate_until (session_ended, session);
      g_assert_nonnull (strstr (wick_document_get_terminal_reason (wick_window_get_document (window)),
                                "the remote link failed"));
      gtk_window_destroy (GTK_WINDOW (window));
      iterate_for (100);
    }
  g_test_message ("kill to lost banner: %.3f–%.3f s over 4 rounds", min_s, max_s);
}

static void
test_remote_window (void)
{
  const char *url = g_getenv ("WICK_REMOTE_URL");
  if (url == NULL)
    {
      g_test_skip ("WICK_REMOTE_URL is not set (test-remote-ssh.sh sets it)");
      return;
    }
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  wick_live_ui_attach_url (app, GTK_WINDOW (window), url);
  iterate_until (window_attached, window);
  WickLiveSession *session = wick_live_session_from_window (window);
  g_assert_cmpstr (wick_live_session_get_socket_path (session), ==, url);
  iterate_until (has_spans, window);

  /* Evict and restore through the Weights page: each request goes to the
   * node over ssh (wick_live_request_async of an ssh:// address). */
  WickWeightsPanel *weights = WICK_WEIGHTS_PANEL (wick_live_session_get_weights_panel (session));
  wick_window_show_page (window, "weights");
  wick_weights_panel_refresh (weights);
  iterate_until (weights_idle, weights);
  g_assert_cmpuint (wick_weights_panel_get_n_modules (weights), ==, 3);
  wick_weights_panel_evict (weights, "embedding", "disk");
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "disk");
  screenshot ("remote-weights.png");
  wick_weights_panel_restore (weights, "embedding");
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "resident");

  /* Those requests went over the window's one long-lived ssh (the control
   * channel). Five list round trips on it against five on an ssh of their
   * own (as before the channel), in the same run. */
  g_assert_cmpuint (wick_remote_channel_get_links_opened (url), ==, 1);
  int channel_ssh = wick_remote_channel_get_ssh_pid (url);
  g_assert_cmpint (channel_ssh, >, 0);
  g_assert_cmpint (channel_ssh, !=, wick_live_session_get_ssh_pid (session));
  double on_channel[5], own_link[5];
  g_autoptr (JsonObject) list = json_object_new ();
  json_object_set_string_member (list, "command", "list");
  for (int i = 0; i < 5; i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr (GError) error = NULL;
      g_autoptr (JsonObject) listed = wick_remote_channel_request (url, list, 30000, &error);
      g_assert_no_error (error);
      on_channel[i] = (g_get_monotonic_time () - t0) / 1e3;
      g_assert_nonnull (json_object_get_member (listed, "modules"));
      t0 = g_get_monotonic_time ();
      g_autoptr (JsonObject) reply
        = wick_remote_control (url, g_getenv ("WICK_REMOTE_COMMAND"), 0, list, 30000, &error);
      g_assert_no_error (error);
      own_link[i] = (g_get_monotonic_time () - t0) / 1e3;
    }
  double c_min = on_channel[0], c_max = on_channel[0], o_min = own_link[0], o_max = own_link[0];
  for (int i = 1; i < 5; i++)
    {
      c_min = MIN (c_min, on_channel[i]), c_max = MAX (c_max, on_channel[i]);
      o_min = MIN (o_min, own_link[i]), o_max = MAX (o_max, own_link[i]);
    }
  g_test_message ("a list round trip over the channel %.1f–%.1f ms, on an ssh of its own "
                  "%.1f–%.1f ms, 5 each",
                  c_min, c_max, o_min, o_max);
  g_assert_cmpuint (wick_remote_channel_get_links_opened (url), ==, 1);
  g_assert_cmpint (wick_remote_channel_get_ssh_pid (url), ==, channel_ssh);
  /* The channel's ssh dies while idle: the next request opens another. */
  kill (channel_ssh, SIGKILL);
  g_assert_true (wick_test_child_exited_within (channel_ssh, 10));
  wick_weights_panel_refresh (weights);
  iterate_until (weights_idle, weights);
  g_assert_cmpuint (wick_weights_panel_get_n_modules (weights), ==, 3);
  g_assert_cmpuint (wick_remote_channel_get_links_opened (url), ==, 2);
  g_assert_cmpint (wick_remote_channel_get_ssh_pid (url), !=, channel_ssh);
  /* Capture from the Stages page goes over the same channel (refused on a
   * machine without CUDA, with the session's sentence; judged on the node) */
  WickStagesPanel *stages = WICK_STAGES_PANEL (wick_live_session_get_stages_panel (session));
  wick_window_show_page (window, "stages");
  wick_stages_panel_refresh (stages);
  iterate_until (stages_idle, stages);
  g_assert_cmpuint (wick_stages_panel_get_n_stages (stages), ==, 2);
  wick_stages_panel_capture (stages, "denoise");
  iterate_until (stages_idle, stages);
  g_test_message ("capture denoise over the channel: state %s, verdict %s",
                  wick_stages_panel_get_state (stages, "denoise"),
                  wick_stages_panel_get_last_verdict (stages));
  g_assert_nonnull (wick_stages_panel_get_state (stages, "denoise"));
  g_assert_cmpuint (wick_remote_channel_get_links_opened (url), ==, 2);

  wick_window_show_page (window, "timeline");
  iterate_for (1500);
  screenshot ("remote-window.png");

  /* The link drops: ssh (this process's child) is killed. */
  guint spans_before = 0;
  wick_document_get_spans (wick_window_get_document (window), &spans_before);
  double banner_s = kill_link (session, FALSE);
  g_test_message ("the lost banner %.3f s after ssh was killed: %s", banner_s,
                  wick_live_session_get_link_lost (session));
  g_assert_cmpfloat (banner_s, <, LOST_BANNER_MAX_S);
  iterate_until (session_ended, session);
  /* the capture is closed as cut, saying why */
  g_assert_true (wick_document_has_terminal (wick_window_get_document (window)));
  g_test_message ("terminal: %s",
                  wick_document_get_terminal_reason (wick_window_get_document (window)));
  g_assert_nonnull (strstr (wick_document_get_terminal_reason (wick_window_get_document (window)),
                            "the remote link failed"));
  guint spans_after = 0;
  wick_document_get_spans (wick_window_get_document (window), &spans_after);
  g_assert_cmpuint (spans_after, >=, spans_before); /* what was received is kept */
  iterate_for (2000);
  screenshot ("remote-lost.png");
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (200);
}

/* The last pid written to the node's serve.pids (each `serve --stdio` the
 * test's node starts appends its own), and how many there are. */
static int
last_serve_pid (guint *count)
{
  g_autofree char *text = NULL;
  *count = 0;
  if (!g_file_get_contents (g_getenv ("WICK_REMOTE_SERVE_PIDS"), &text, NULL, NULL))
    return 0;
  g_auto (GStrv) lines = g_strsplit (g_strstrip (text), "\n", -1);
  *count = g_strv_length (lines);
  return *count > 0 ? (int)g_ascii_strtoll (lines[*count - 1], NULL, 10) : 0;
}

typedef struct
{
  char *url;
  int timeout_ms;
  GError *error;
  JsonObject *reply;
  gint64 done_us;
  gint done;
} Request;

static gpointer
request_thread (gpointer data)
{
  Request *request = data;
  g_autoptr (JsonObject) list = json_object_new ();
  json_object_set_string_member (list, "command", "list");
  request->reply = wick_remote_channel_request (request->url, list, request->timeout_ms,
                                                &request->error);
  request->done_us = g_get_monotonic_time ();
  g_atomic_int_set (&request->done, 1);
  return NULL;
}

static gboolean
channel_held (gpointer url)
{
  return wick_remote_channel_exists (url);
}

static gboolean
request_done (gpointer request)
{
  return g_atomic_int_get (&((Request *)request)->done);
}

/* A control request whose reply never comes, then one whose node dies with
 * it in flight: each ends with an error within its deadline while the main
 * loop runs on, the window keeps what it received (more of it: the attach
 * link is another ssh) and Save Session As writes a trace wick-trace reads. */
static void
test_remote_node_dies_mid_request (void)
{
  const char *url = g_getenv ("WICK_REMOTE_URL");
  if (url == NULL || g_getenv ("WICK_REMOTE_SERVE_PIDS") == NULL)
    {
      g_test_skip ("WICK_REMOTE_URL is not set (test-remote-ssh.sh sets it)");
      return;
    }
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  wick_live_ui_attach_url (app, GTK_WINDOW (window), url);
  iterate_until (window_attached, window);
  WickLiveSession *session = wick_live_session_from_window (window);
  iterate_until (has_spans, window);

  /* the window's pages open its channel; once they are done, its ssh is
   * killed, so that the next request opens the channel's link at a known
   * moment: its node's serve is then the newest */
  iterate_until (channel_held, (gpointer)url);
  g_autoptr (JsonObject) first = json_object_new ();
  json_object_set_string_member (first, "command", "list");
  g_autoptr (GError) first_error = NULL;
  g_autoptr (JsonObject) first_reply = wick_remote_channel_request (url, first, 30000, &first_error);
  g_assert_no_error (first_error);
  iterate_for (1000);
  int channel_ssh = wick_remote_channel_get_ssh_pid (url);
  g_assert_cmpint (channel_ssh, >, 0);
  kill (channel_ssh, SIGKILL);
  g_assert_true (wick_test_child_exited_within (channel_ssh, 10));
  guint opened = wick_remote_channel_get_links_opened (url);
  guint before = 0, after = 0;
  last_serve_pid (&before);
  g_autoptr (JsonObject) list = json_object_new ();
  json_object_set_string_member (list, "command", "list");
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonObject) listed = wick_remote_channel_request (url, list, 30000, &error);
  g_assert_no_error (error);
  int serve = last_serve_pid (&after);
  g_assert_cmpuint (wick_remote_channel_get_links_opened (url), ==, opened + 1);
  g_assert_cmpuint (after, ==, before + 1);
  g_assert_cmpint (serve, >, 0);

  /* 1. the node stops (SIGSTOP its serve): no reply ever; a 2 s request
   * ends at its deadline (2 s + the channel's margin) */
  kill (serve, SIGSTOP);
  guint spans_before = 0;
  wick_document_get_spans (wick_window_get_document (window), &spans_before);
  Request hang = { .url = (char *)url, .timeout_ms = 2000 };
  gint64 start = g_get_monotonic_time ();
  GThread *thread = g_thread_new ("request", request_thread, &hang);
  double stall_ms = 0;
  gint64 last = g_get_monotonic_time ();
  while (!request_done (&hang) && g_get_monotonic_time () - start < 90 * G_USEC_PER_SEC)
    {
      g_main_context_iteration (NULL, FALSE);
      stall_ms = MAX (stall_ms, (g_get_monotonic_time () - last) / 1e3);
      g_usleep (5000);
      last = g_get_monotonic_time ();
    }
  g_thread_join (thread);
  double hang_s = (hang.done_us - start) / 1e6;
  guint spans_during = 0;
  wick_document_get_spans (wick_window_get_document (window), &spans_during);
  g_test_message ("a stopped node: the request ended %.2f s after it was sent (deadline %.0f s), "
                  "the main loop stalled at most %.0f ms, spans %u -> %u meanwhile: %s",
                  hang_s, (2000 + WICK_REMOTE_CHANNEL_MARGIN_MS) / 1e3, stall_ms, spans_before,
                  spans_during, hang.error != NULL ? hang.error->message : "(no error)");
  g_assert_null (hang.reply);
  g_assert_nonnull (hang.error);
  g_assert_nonnull (strstr (hang.error->message, "died while list was in flight"));
  g_assert_nonnull (strstr (hang.error->message, "sent nothing for"));
  g_assert_cmpfloat (hang_s, >=, (2000 + WICK_REMOTE_CHANNEL_MARGIN_MS) / 1e3 - 0.5);
  g_assert_cmpfloat (hang_s, <, (2000 + WICK_REMOTE_CHANNEL_MARGIN_MS) / 1e3 + 10);
  g_assert_cmpfloat (stall_ms, <, STALL_MAX_MS);
  g_assert_cmpuint (spans_during, >, spans_before); /* the attach link ran on */
  if (wick_live_session_is_ended (session))
    g_test_message ("the attach session ended while the control node was stopped: %s",
                    wick_document_has_terminal (wick_window_get_document (window))
                      ? wick_document_get_terminal_reason (wick_window_get_document (window))
                      : "(no terminal)");
  g_assert_false (wick_live_session_is_ended (session));
  kill (serve, SIGKILL);
  g_clear_error (&hang.error);

  /* 2. the node dies with a request in flight: the next request opens a new
   * link (its serve the newest); that serve is stopped, a request sent to it
   * (it waits in the pipe), and the serve killed */
  last_serve_pid (&before);
  g_autoptr (JsonObject) again = wick_remote_channel_request (url, list, 30000, &error);
  g_assert_no_error (error);
  int serve2 = last_serve_pid (&after);
  g_assert_cmpuint (after, ==, before + 1);
  g_assert_cmpint (serve2, >, 0);
  kill (serve2, SIGSTOP);
  Request died = { .url = (char *)url, .timeout_ms = 30000 };
  thread = g_thread_new ("request", request_thread, &died);
  iterate_for (1500);
  g_assert_false (request_done (&died)); /* in flight on the node */
  gint64 killed = g_get_monotonic_time ();
  kill (serve2, SIGKILL);
  while (!request_done (&died) && g_get_monotonic_time () - killed < 60 * G_USEC_PER_SEC)
    iterate_for (10);
  g_thread_join (thread);
  double died_s = (died.done_us - killed) / 1e6;
  g_test_message ("the node's serve killed mid-request: the error %.3f s after the kill: %s",
                  died_s, died.error != NULL ? died.error->message : "(no error)");
  g_assert_null (died.reply);
  g_assert_nonnull (died.error);
  g_assert_nonnull (strstr (died.error->message, "died while list was in flight"));
  g_assert_cmpfloat (died_s, <, 5);
  g_clear_error (&died.error);

  /* what was received is kept and can be saved */
  iterate_for (500);
  guint spans_now = 0;
  wick_document_get_spans (wick_window_get_document (window), &spans_now);
  g_assert_cmpuint (spans_now, >=, spans_during);
  g_autofree char *directory = g_dir_make_tmp ("wick-remote-XXXXXX", NULL);
  g_autofree char *saved = g_build_filename (directory, "saved.jsonl", NULL);
  g_assert_true (wick_live_session_save (session, saved, &error));
  g_assert_no_error (error);
  const char *check[] = { g_getenv ("WICK_TRACE"), "summary", saved, NULL };
  g_autofree char *out = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **)check, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, &status, NULL));
  g_test_message ("saved %s (%u spans in the window): wick-trace summary exit %d", saved,
                  spans_now, status);
  g_assert_cmpint (status, ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (200);
  g_unlink (saved);
  g_rmdir (directory);
}

/* `wick --attach ssh://wickpass/PID`: the attach link's ssh asks for the key's
 * passphrase in wick-askpass, typed there, and the window fills (the
 * window's other ssh links ask again: each authenticates on its own,
 * docs/protocol.md; those questions are left to their deadline). Then a node
 * that writes lines shaped like wick-askpass's to its stderr, without the
 * app's token, does not hold the hello's deadline: the listing fails at it. */
static void
test_remote_askpass_attach (void)
{
  const char *url = g_getenv ("WICK_REMOTE_URL");
  if (url == NULL || g_getenv ("WICK_REMOTE_FORGED") == NULL)
    {
      g_test_skip ("WICK_REMOTE_URL is not set (test-remote-ssh.sh sets it)");
      return;
    }
  if (!x_keys_available ())
    {
      g_test_skip ("no X display with XTest (libXtst.so.6)");
      return;
    }
  gint64 demo = g_ascii_strtoll (strrchr (url, '/') + 1, NULL, 10);
  g_autofree char *pass_url = g_strdup_printf ("ssh://wickpass/%" G_GINT64_FORMAT, demo);
  g_setenv ("WICK_ASKPASS_TIMEOUT", "15", TRUE);
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  gint64 start = g_get_monotonic_time ();
  wick_live_ui_attach_url (app, GTK_WINDOW (window), pass_url);
  double stall_ms;
  Window asking = wait_for_askpass (LIVE_TEST_WAIT_S, &stall_ms);
  g_assert_true (asking != None);
  const char *const passphrase[] = { "type:wickpass42", "Return", NULL };
  askpass_keys (asking, passphrase);
  iterate_until (window_attached, window);
  WickLiveSession *session = wick_live_session_from_window (window);
  g_assert_cmpstr (wick_live_session_get_socket_path (session), ==, pass_url);
  iterate_until (has_spans, window);
  g_test_message ("attached through a passphrase typed in wick-askpass: spans %.2f s after the "
                  "attach began",
                  (g_get_monotonic_time () - start) / 1e6);
  /* The window's pages then open more ssh links (the control channel, and
   * a page's request before it is up): each asks again. Not answered here:
   * their questions end at the (short) deadline, with the window closed. */
  gtk_window_destroy (GTK_WINDOW (window));
  g_assert_true (askpass_gone_within (30));
  g_unsetenv ("WICK_ASKPASS_TIMEOUT");

  /* forged lines on the node's stderr: the deadline runs on */
  WickRemoteDialog *dialog = wick_remote_dialog_new (app, NULL);
  gtk_window_present (GTK_WINDOW (dialog));
  g_autofree char *command = g_strdup (g_getenv ("WICK_REMOTE_COMMAND"));
  g_setenv ("WICK_REMOTE_COMMAND", g_getenv ("WICK_REMOTE_FORGED"), TRUE);
  start = g_get_monotonic_time ();
  wick_remote_dialog_list (dialog, "wicknode");
  while (wick_remote_dialog_is_listing (dialog)
         && g_get_monotonic_time () - start < 120 * G_USEC_PER_SEC)
    iterate_for (50);
  g_setenv ("WICK_REMOTE_COMMAND", command, TRUE);
  double forged_s = (g_get_monotonic_time () - start) / 1e6;
  g_test_message ("a node forging wick-askpass lines: the listing failed %.1f s after the pick "
                  "(hello deadline %d s): %s",
                  forged_s, WICK_REMOTE_HELLO_TIMEOUT_MS / 1000,
                  wick_remote_dialog_get_error (dialog));
  g_assert_false (wick_remote_dialog_is_listing (dialog));
  g_assert_cmpfloat (forged_s, <, WICK_REMOTE_HELLO_TIMEOUT_MS / 1000 + 15);
  g_assert_nonnull (wick_remote_dialog_get_error (dialog));
  g_assert_nonnull (strstr (wick_remote_dialog_get_error (dialog), "sent nothing for 30 s"));
  gtk_window_destroy (GTK_WINDOW (dialog));
  iterate_for (200);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("1..0 # SKIP no display\n");
      return 0; /* TAP: the plan above is the skip (77 reads as an error under protocol tap) */
    }
  gtk_init ();
  g_test_add_func ("/remote/dialog/hosts-list-attach", test_remote_dialog);
  g_test_add_func ("/remote/window/attach-evict-restore-drop", test_remote_window);
  g_test_add_func ("/remote/window/kill-latency", test_remote_kill_latency);
  g_test_add_func ("/remote/window/node-dies-mid-request", test_remote_node_dies_mid_request);
  g_test_add_func ("/remote/askpass/attach-and-forged-lines", test_remote_askpass_attach);
  return g_test_run ();
}
