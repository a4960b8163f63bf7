/* test-live-window-hostile.c — the app's window against producers and files
 * it does not trust, under Xvfb with real GTK windows:
 *
 * - close while the attach is blocked: a real hostile-producer that answers
 *   the hello and never the snapshot request (the attach waits for its
 *   deadline) and a real wick-demo frozen by SIGSTOP before the attach (its
 *   hello is never answered): the window is closed 0.3 s into the attach; the
 *   close returns at once, the main loop never stalls, and when the attach
 *   gives up no session is made for the closed window;
 * - close while attached to a frozen producer: wick-demo attached, then
 *   SIGSTOPped with a Weights request in flight; closing the window joins the
 *   session's worker within a deadline; the demo goes on when continued;
 * - wick --follow on a FIFO, and a FIFO renamed over the followed file: the
 *   real `wick` process keeps answering on D-Bus (org.gtk.Actions.List within
 *   its deadline), says why in a sentence, and quits when asked (app.quit);
 *   in process, the follow refuses with a sentence without blocking.
 *
 * Each case measures the longest main-loop stall (a 5 ms timeout source that
 * records the gaps between its runs). Skips without a display.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "session/wick-follow-session.h"
#include "session/wick-live-session.h"
#include "session/wick-live-session-private.h"
#include "session/wick-weights-panel.h"
#include "session/wick-weights-panel-private.h"
#include "wick-application.h"
#include "wick-window.h"
#include "wick-window-private.h"

/* the longest the main loop may stall while a producer is hostile (the
 * blocking this guards against is 3 s of hello or 10 s of snapshot; a loaded
 * 2-core CI machine stalls a healthy window by up to a few hundred ms) */
#define MAX_STALL_MS 1500
/* closing a window (destroy and the session's teardown) */
#define MAX_CLOSE_MS 2000
/* what a close may wait for a worker before letting go of it */
#define WORKER_STOP_MS 200

static char *runtime_dir;

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

static void iterate_for (int ms);

/* Once per process, before any stall is measured: a window that draws a
 * banner and a page, so the fonts and styles are loaded (the first text a
 * process draws stalls it by hundreds of ms on a loaded machine, hostile
 * producer or not). */
static void
warm_up (void)
{
  static gboolean done;
  if (done)
    return;
  done = TRUE;
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  wick_window_show_banner (window, "warm-up", "Attaching to a process…", NULL, NULL);
  iterate_for (1000);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (200);
}

static gboolean
have_display (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: the live window tests run under Xvfb (tools/test.sh)");
      return FALSE;
    }
  warm_up ();
  return TRUE;
}

/* ---- main-loop stalls ------------------------------------------------------ */

typedef struct
{
  gint64 last, worst;
  guint id;
} Heartbeat;

static gboolean
heartbeat_tick (gpointer data)
{
  Heartbeat *h = data;
  gint64 now = g_get_monotonic_time ();
  if (h->last > 0 && now - h->last > h->worst)
    h->worst = now - h->last;
  h->last = now;
  return G_SOURCE_CONTINUE;
}

static void
heartbeat_start (Heartbeat *h)
{
  h->last = 0;
  h->worst = 0;
  h->id = g_timeout_add (5, heartbeat_tick, h);
}

static gint64
heartbeat_stop (Heartbeat *h)
{
  g_source_remove (h->id);
  return h->worst / 1000;
}

/* What is pending, for 10 ms at most (a live window redraws for ever). */
static void
iterate_pending (void)
{
  gint64 end = g_get_monotonic_time () + 10000;
  while (g_main_context_iteration (NULL, FALSE) && g_get_monotonic_time () < end)
    ;
}

static void
iterate_for (int ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;
  while (g_get_monotonic_time () < end)
    {
      iterate_pending ();
      g_usleep (1000);
    }
}

/* Iterates until @done or @seconds; FALSE on the deadline. */
static gboolean
iterate_until (gboolean (*done) (gpointer), gpointer data, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64)(seconds * G_USEC_PER_SEC);
  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      iterate_pending ();
      g_usleep (1000);
    }
  return TRUE;
}

static gboolean
is_null (gpointer pointer_to_pointer)
{
  return *(gpointer *)pointer_to_pointer == NULL;
}

/* ---- processes --------------------------------------------------------------- */

static GPid
start_process (const char *const *argv, gboolean wait_for_ready)
{
  g_autoptr (GError) error = NULL;
  GPid pid;
  int out_fd = -1;
  g_spawn_async_with_pipes (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                            wick_test_die_with_parent, NULL, &pid, NULL,
                            wait_for_ready ? &out_fd : NULL, NULL, &error);
  g_assert_no_error (error);
  if (wait_for_ready)
    {
      /* hostile-producer prints "ready" when its socket listens */
      char buffer[16] = "";
      gsize got = 0;
      while (got < 5)
        {
          gssize n = read (out_fd, buffer + got, sizeof buffer - 1 - got);
          g_assert_cmpint (n, >, 0);
          got += (gsize)n;
        }
      close (out_fd);
    }
  return pid;
}

static void
end_process (GPid pid)
{
  kill (pid, SIGCONT);
  kill (pid, SIGKILL);
  wick_test_wait_child (pid, LIVE_TEST_WAIT_S, "a test process (after SIGKILL)");
  g_spawn_close_pid (pid);
}

static GPid
start_demo (void)
{
  const char *demo = g_getenv ("WICK_DEMO");
  g_assert_nonnull (demo);
  const char *argv[] = { demo, "--quiet", "--rate", "30", NULL };
  g_autoptr (GError) error = NULL;
  GPid pid;
  g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 wick_test_die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  g_free (live_test_wait_for_socket (pid));
  return pid;
}

/* ---- close while the attach is blocked ---------------------------------------- */

typedef struct
{
  gboolean done;
  WickLiveSession *session;
  char *message;
} AttachOutcome;

static void
attach_done (GObject *source, GAsyncResult *result, gpointer data)
{
  AttachOutcome *outcome = data;
  g_autoptr (GError) error = NULL;
  outcome->session = wick_live_session_attach_finish (WICK_WINDOW (source), result, &error);
  outcome->message = g_strdup (error != NULL ? error->message : NULL);
  outcome->done = TRUE;
}

static gboolean
outcome_done (gpointer data)
{
  return ((AttachOutcome *)data)->done;
}

/* Starts an attach to @socket in a new window, closes the window 0.3 s in,
 * and checks the close, the stalls and the outcome. */
static void
close_during_attach (const char *socket, const char *what, gboolean must_block)
{
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  iterate_for (500); /* the first frame */
  /* the baseline: the same window, idle, as long as the case */
  Heartbeat baseline;
  heartbeat_start (&baseline);
  iterate_for (1500);
  gint64 baseline_ms = heartbeat_stop (&baseline);
  Heartbeat heartbeat;
  heartbeat_start (&heartbeat);
  AttachOutcome outcome = { 0 };
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *)&window);
  wick_live_session_attach_async (window, socket, 0, what, NULL, attach_done, &outcome);
  iterate_for (300);
  /* blocked (a frozen producer that answers nothing), or refused at once
   * (a stopped process is not connected to) */
  gboolean blocked = !outcome.done;
  g_test_message ("%s: %s 0.3 s into the attach", what,
                  blocked ? "still blocked" : "already refused");
  gint64 start = g_get_monotonic_time ();
  gtk_window_destroy (GTK_WINDOW (window));
  gint64 close_ms = (g_get_monotonic_time () - start) / 1000;
  /* the attach gives up on its own deadline (hello 3 s, snapshot 10 s) */
  g_assert_true (iterate_until (outcome_done, &outcome, 20));
  iterate_for (200);
  gint64 stall = heartbeat_stop (&heartbeat);
  g_test_message ("%s: close %" G_GINT64_FORMAT " ms, worst main-loop stall %" G_GINT64_FORMAT
                  " ms (idle, same window: %" G_GINT64_FORMAT " ms), attach outcome: %s",
                  what, close_ms, stall, baseline_ms,
                  outcome.message ? outcome.message : "a session");
  g_assert_cmpint (close_ms, <, MAX_CLOSE_MS);
  g_assert_cmpint (stall, <, baseline_ms + MAX_STALL_MS);
  /* no session lives on for a window that was closed; the attach's thread
   * ends on its own deadline and lets go of the window */
  g_assert_null (outcome.session);
  g_assert_true (iterate_until (is_null, &window, 20));
  if (must_block)
    g_assert_true (blocked);
  g_free (outcome.message);
}

static void
test_close_during_blocked_snapshot (void)
{
  if (!have_display ())
    return;
  const char *producer = g_getenv ("WICK_HOSTILE_PRODUCER");
  g_assert_nonnull (producer);
  const char *argv[] = { producer, "frozen-snapshot", NULL };
  GPid pid = start_process (argv, TRUE);
  g_autofree char *socket = wick_live_find_socket (pid, NULL);
  g_assert_nonnull (socket);
  close_during_attach (socket, "a producer whose snapshot never comes", TRUE);
  end_process (pid);
}

static void
test_close_during_frozen_hello (void)
{
  if (!have_display ())
    return;
  GPid pid = start_demo ();
  g_autofree char *socket = wick_live_find_socket (pid, NULL);
  kill (pid, SIGSTOP);
  close_during_attach (socket, "a frozen wick-demo", FALSE);
  end_process (pid);
}

/* ---- close while attached to a producer that froze ------------------------------ */

static gboolean
has_spans (gpointer window)
{
  guint n = 0;
  wick_document_get_spans (wick_window_get_document (window), &n);
  return n > 0;
}


static void
test_close_attached_frozen (void)
{
  if (!have_display ())
    return;
  GPid pid = start_demo ();
  g_autofree char *socket = wick_live_find_socket (pid, NULL);
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  iterate_for (500); /* the first frame */
  g_autoptr (GError) error = NULL;
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  g_assert_true (iterate_until (has_spans, window, LIVE_TEST_WAIT_S));
  /* the Weights page drawn once while the process answers (its first draw
   * is no stall of the producer's making) */
  wick_window_show_page (window, "weights");
  WickWeightsPanel *weights = WICK_WEIGHTS_PANEL (wick_live_session_get_weights_panel (session));
  wick_weights_panel_refresh (weights);
  iterate_for (1000);
  /* the baseline: the same window, the process running */
  Heartbeat baseline;
  heartbeat_start (&baseline);
  wick_weights_panel_refresh (weights);
  iterate_for (1500);
  gint64 baseline_ms = heartbeat_stop (&baseline);
  kill (pid, SIGSTOP);
  Heartbeat heartbeat;
  heartbeat_start (&heartbeat);
  /* a Weights request to the frozen process is in flight when the window closes */
  wick_weights_panel_refresh (weights);
  iterate_for (500);
  g_test_message ("frozen, before the close: worst stall %" G_GINT64_FORMAT " ms",
                  heartbeat.worst / 1000);
  g_object_add_weak_pointer (G_OBJECT (session), (gpointer *)&session);
  gint64 start = g_get_monotonic_time ();
  gtk_window_destroy (GTK_WINDOW (window));
  g_assert_true (iterate_until (is_null, &session, 5));
  gint64 close_ms = (g_get_monotonic_time () - start) / 1000;
  iterate_for (300);
  gint64 stall = heartbeat_stop (&heartbeat);
  g_test_message ("attached, frozen: session gone %" G_GINT64_FORMAT
                  " ms after the close, worst stall %" G_GINT64_FORMAT
                  " ms (running, same window: %" G_GINT64_FORMAT " ms)",
                  close_ms, stall, baseline_ms);
  g_assert_cmpint (close_ms, <, MAX_CLOSE_MS);
  g_assert_cmpint (stall, <, baseline_ms + MAX_STALL_MS);
  /* the workload goes on when continued */
  kill (pid, SIGCONT);
  iterate_for (300);
  g_assert_cmpint (kill (pid, 0), ==, 0);
  int status;
  g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
  end_process (pid);
}

/* A session whose view restarts (history limit 1) on a producer that froze
 * in the second attach: the restart's snapshot request waits out its 10 s
 * deadline in the session's worker, and closing the window must not wait
 * with it (23fd216 joined the worker: the close took the rest of the 10 s). */
static void
test_close_during_blocked_restart (void)
{
  if (!have_display ())
    return;
  const char *producer = g_getenv ("WICK_HOSTILE_PRODUCER");
  g_assert_nonnull (producer);
  const char *argv[] = { producer, "frozen-restart", NULL };
  GPid pid = start_process (argv, TRUE);
  g_autofree char *socket = wick_live_find_socket (pid, NULL);
  g_assert_nonnull (socket);
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  iterate_for (500); /* the first frame */
  g_setenv ("WICK_LIVE_HISTORY", "1", TRUE);
  g_autoptr (GError) error = NULL;
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_unsetenv ("WICK_LIVE_HISTORY");
  g_assert_no_error (error);
  /* the first batch (the four open spans) takes the view past the limit:
   * the restart connects, and its snapshot is never answered */
  iterate_for (1000);
  g_test_message ("before the close: %" G_GUINT64_FORMAT " lines in the view, %u restarts",
                  wick_document_get_n_lines (wick_window_get_document (window)),
                  wick_live_session_get_restarts (session));
  Heartbeat heartbeat;
  heartbeat_start (&heartbeat);
  g_object_add_weak_pointer (G_OBJECT (session), (gpointer *)&session);
  gint64 start = g_get_monotonic_time ();
  gtk_window_destroy (GTK_WINDOW (window));
  g_assert_true (iterate_until (is_null, &session, 30));
  gint64 close_ms = (g_get_monotonic_time () - start) / 1000;
  iterate_for (200);
  gint64 stall = heartbeat_stop (&heartbeat);
  g_test_message ("restart blocked: session gone %" G_GINT64_FORMAT
                  " ms after the close, worst stall %" G_GINT64_FORMAT " ms",
                  close_ms, stall);
  g_assert_cmpint (close_ms, <, MAX_CLOSE_MS);
  g_assert_cmpint (stall, <, MAX_STALL_MS + WORKER_STOP_MS);
  end_process (pid);
}

/* ---- follow on a FIFO ------------------------------------------------------------ */

static void
test_follow_fifo_in_process (void)
{
  if (!have_display ())
    return;
  g_autofree char *fifo = g_build_filename (runtime_dir, "follow-in-process.fifo", NULL);
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  iterate_for (500); /* the first frame */
  Heartbeat heartbeat;
  heartbeat_start (&heartbeat);
  g_autoptr (GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  WickFollowSession *session = wick_follow_session_start (window, fifo, &error);
  gint64 took_ms = (g_get_monotonic_time () - start) / 1000;
  iterate_for (300);
  gint64 stall = heartbeat_stop (&heartbeat);
  g_test_message ("follow a FIFO: %" G_GINT64_FORMAT " ms, %s", took_ms,
                  error ? error->message : "(followed)");
  g_assert_null (session);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "a FIFO, not a regular file"));
  g_assert_cmpint (took_ms, <, MAX_STALL_MS);
  g_assert_cmpint (stall, <, MAX_STALL_MS);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (100);
  g_unlink (fifo);
}

/* The real `wick` process, under the test's display and session bus: the
 * app is NON_UNIQUE (it owns no well-known name), so its connection is found
 * by its pid, and its org.gtk.Actions asked there. */
static char *
app_bus_name (GDBusConnection *bus, GPid pid)
{
  g_autoptr (GVariant) names
    = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                   "org.freedesktop.DBus", "ListNames", NULL,
                                   G_VARIANT_TYPE ("(as)"), G_DBUS_CALL_FLAGS_NONE, 2000, NULL,
                                   NULL);
  if (names == NULL)
    return NULL;
  g_autoptr (GVariantIter) iter = NULL;
  const char *name;
  g_variant_get (names, "(as)", &iter);
  while (g_variant_iter_next (iter, "&s", &name))
    {
      if (name[0] != ':')
        continue;
      g_autoptr (GVariant) owner = g_dbus_connection_call_sync (
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
        "GetConnectionUnixProcessID", g_variant_new ("(s)", name), G_VARIANT_TYPE ("(u)"),
        G_DBUS_CALL_FLAGS_NONE, 2000, NULL, NULL);
      guint32 owner_pid = 0;
      if (owner != NULL)
        g_variant_get (owner, "(u)", &owner_pid);
      if (owner_pid == (guint32)pid)
        return g_strdup (name);
    }
  return NULL;
}

/* TRUE when the app at @name answers org.gtk.Actions.List within 2 s. */
static gboolean
app_answers (GDBusConnection *bus, const char *name, const char *what)
{
  g_autoptr (GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  g_autoptr (GVariant) actions = g_dbus_connection_call_sync (
    bus, name, "/io/github/wickprofiler/Wick", "org.gtk.Actions", "List", NULL,
    G_VARIANT_TYPE ("(as)"), G_DBUS_CALL_FLAGS_NONE, 2000, NULL, &error);
  g_test_message ("%s: the app %s on D-Bus in %" G_GINT64_FORMAT " ms%s%s", what,
                  actions != NULL ? "answered" : "did not answer",
                  (g_get_monotonic_time () - start) / 1000, error ? ": " : "",
                  error ? error->message : "");
  return actions != NULL;
}

static gboolean
app_exited (gpointer data)
{
  GPid pid = *(GPid *)data;
  int status;
  return waitpid (pid, &status, WNOHANG) == pid;
}

static void
follow_in_app (const char *path, void (*during) (const char *path), const char *what)
{
  const char *wick = g_getenv ("WICK_APP");
  g_assert_nonnull (wick);
  const char *argv[] = { wick, "--follow", path, NULL };
  g_autoptr (GError) error = NULL;
  GPid pid;
  int err_fd;
  g_spawn_async_with_pipes (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                            wick_test_die_with_parent, NULL, &pid, NULL, NULL, &err_fd, &error);
  g_assert_no_error (error);
  /* up when it answers; then the hostile change, then it must still answer */
  g_autoptr (GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  g_autofree char *name = NULL;
  while (name == NULL && g_get_monotonic_time () < deadline)
    {
      int status;
      g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
      name = app_bus_name (bus, pid);
      if (name == NULL || !app_answers (bus, name, what))
        {
          g_clear_pointer (&name, g_free);
          g_usleep (200000);
        }
    }
  g_assert_nonnull (name);
  if (during != NULL)
    {
      during (path);
      g_usleep (1500000); /* a few polls of the followed file */
    }
  for (int i = 0; i < 3; i++)
    {
      g_assert_true (app_answers (bus, name, what));
      g_usleep (300000);
    }
  g_autoptr (GVariant) quit = g_dbus_connection_call_sync (
    bus, name, "/io/github/wickprofiler/Wick", "org.gtk.Actions", "Activate",
    g_variant_new ("(sava{sv})", "quit", NULL, NULL), NULL, G_DBUS_CALL_FLAGS_NONE, 2000, NULL,
    &error);
  g_assert_no_error (error);
  gint64 start = g_get_monotonic_time ();
  g_assert_true (iterate_until (app_exited, &pid, 5));
  g_test_message ("%s: quit in %" G_GINT64_FORMAT " ms", what,
                  (g_get_monotonic_time () - start) / 1000);
  /* what the app said on stderr */
  char buffer[4096];
  gssize n = read (err_fd, buffer, sizeof buffer - 1);
  buffer[MAX (n, 0)] = '\0';
  close (err_fd);
  g_test_message ("%s: stderr: %s", what, buffer);
  g_spawn_close_pid (pid);
}

static void
test_follow_fifo_app (void)
{
  if (!have_display ())
    return;
  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL || g_getenv ("WICK_APP") == NULL)
    {
      g_test_skip ("needs a session bus (dbus-run-session) and WICK_APP");
      return;
    }
  g_autofree char *fifo = g_build_filename (runtime_dir, "follow-app.fifo", NULL);
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  follow_in_app (fifo, NULL, "wick --follow FIFO");
  g_unlink (fifo);
}

static void
rename_fifo_over (const char *path)
{
  g_autofree char *fifo = g_strconcat (path, ".fifo", NULL);
  g_unlink (fifo);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_assert_cmpint (g_rename (fifo, path), ==, 0);
}

static void
test_follow_fifo_renamed_over_app (void)
{
  if (!have_display ())
    return;
  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL || g_getenv ("WICK_APP") == NULL)
    {
      g_test_skip ("needs a session bus (dbus-run-session) and WICK_APP");
      return;
    }
  g_autofree char *path = g_build_filename (runtime_dir, "followed.jsonl", NULL);
  g_autofree char *source
    = g_build_filename (g_getenv ("WICK_TEST_DATA"), "model", "train-contract.jsonl", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (source, &text, NULL, NULL));
  /* the first lines only: a writer that has not finished */
  char *cut = text;
  for (int i = 0; i < 5 && cut != NULL; i++)
    cut = strchr (cut + 1, '\n');
  g_assert_true (g_file_set_contents (path, text, cut ? cut - text + 1 : -1, NULL));
  follow_in_app (path, rename_fifo_over, "wick --follow FILE, a FIFO renamed over it");
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = live_test_runtime_dir_new ("wick-live-hostile-XXXXXX");
  if (g_getenv ("DISPLAY") != NULL || g_getenv ("WAYLAND_DISPLAY") != NULL)
    gtk_init ();
  /* the real app's processes first: this process registers the same
   * application id later (a second instance would forward to it) */
  g_test_add_func ("/live/window-hostile/follow-fifo-app", test_follow_fifo_app);
  g_test_add_func ("/live/window-hostile/follow-fifo-renamed-over-app",
                   test_follow_fifo_renamed_over_app);
  g_test_add_func ("/live/window-hostile/close-during-blocked-snapshot",
                   test_close_during_blocked_snapshot);
  g_test_add_func ("/live/window-hostile/close-during-frozen-hello",
                   test_close_during_frozen_hello);
  g_test_add_func ("/live/window-hostile/close-attached-frozen", test_close_attached_frozen);
  g_test_add_func ("/live/window-hostile/close-during-blocked-restart",
                   test_close_during_blocked_restart);
  g_test_add_func ("/live/window-hostile/follow-fifo-in-process", test_follow_fifo_in_process);
  int status = g_test_run ();
  live_test_runtime_dir_remove (runtime_dir);
  return status;
}
