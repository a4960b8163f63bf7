/* test-live-window.c — the app attached to a real wick-demo (under Xvfb):
 * the document grows frame after frame, the Weights page lists the demo's
 * modules and evicts and restores one from its buttons' code path, the Stages
 * page lists both stages and (without a GPU) says why capture is unavailable
 * and shows the refusal's certificate, Save As… writes a trace the model
 * parses, and the end of the process is shown. With WICK_SCREENSHOT_DIR set it
 * saves live-window.png, live-weights.png and live-stages.png there (the
 * screenshots in docs/images/). Skips without a display.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live-test-util.h"
#include "model/wick-tracks.h"
#include "model/wick-tracks-private.h"
#include "session/wick-attach-dialog.h"
#include "session/wick-attach-dialog-private.h"
#include "session/wick-live-session.h"
#include "session/wick-live-session-private.h"
#include "session/wick-stages-panel.h"
#include "session/wick-stages-panel-private.h"
#include "session/wick-weights-panel.h"
#include "session/wick-weights-panel-private.h"
#include "wick-application.h"
#include "wick-health-page.h"
#include "wick-health-page-private.h"
#include "wick-window-private.h"
#include "wick-window.h"
#include "model/wick-document-private.h"

static char *runtime_dir;

static GPid demo_pid;

/* One application for the whole run: a second one with the same id would be
 * a remote instance (no startup), which cannot own windows. */
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

/* Iterates the main loop until @done says so, failing with @what after
 * LIVE_TEST_WAIT_S. */
static gboolean
iterate_and_check (gboolean (*done) (gpointer), gpointer data)
{
  gint64 end = g_get_monotonic_time () + 10000; /* what is pending, for 10 ms at most */
  while (g_main_context_iteration (NULL, FALSE) && g_get_monotonic_time () < end)
    ;
  return done (data);
}

#define iterate_until(done, data)                                                                  \
  WICK_TEST_WAIT_UNTIL (iterate_and_check ((done), (data)), LIVE_TEST_WAIT_S,                      \
                        "%s did not become true", #done)

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
dialog_listed (gpointer dialog)
{
  return !wick_attach_dialog_is_listing (dialog);
}

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
  return n > 0;
}

static gboolean
has_lost_banner (gpointer window)
{
  return wick_window_get_banner (window, "lost") != NULL;
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
  iterate_for (300);
  g_autofree char *path = g_build_filename (directory, name, NULL);
  g_autofree char *command = g_strdup_printf ("import -window root '%s'", path);
  if (system (command) != 0)
    g_test_message ("screenshot %s failed", path);
}

static void
start_demo (void)
{
  const char *demo = g_getenv ("WICK_DEMO");
  g_assert_nonnull (demo);
  const char *argv[] = { demo, "--quiet", "--rate", "30", NULL };
  g_autoptr (GError) error = NULL;
  g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 wick_test_die_with_parent, NULL, &demo_pid, &error);
  g_assert_no_error (error);
  g_free (live_test_wait_for_socket (demo_pid));
}

static int
stop_demo (void)
{
  kill (demo_pid, SIGTERM);
  int status = wick_test_wait_child (demo_pid, LIVE_TEST_WAIT_S, "wick-demo (after SIGTERM)");
  g_spawn_close_pid (demo_pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static void
check_weights_page (WickWindow *window, WickWeightsPanel *weights)
{
  wick_window_show_page (window, "weights");
  wick_weights_panel_refresh (weights);
  iterate_until (weights_idle, weights);
  g_assert_cmpuint (wick_weights_panel_get_n_modules (weights), ==, 3);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "resident");
  wick_weights_panel_evict (weights, "embedding", "disk");
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "disk");
  wick_weights_panel_evict (weights, "trunk", "ram");
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "trunk"), ==, "ram");
  screenshot ("live-weights.png");
  wick_weights_panel_restore (weights, "embedding");
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "embedding"), ==, "resident");
  wick_weights_panel_restore_all (weights);
  iterate_until (weights_idle, weights);
  g_assert_cmpstr (wick_weights_panel_get_where (weights, "trunk"), ==, "resident");
}

static void
check_stages_page (WickWindow *window, WickStagesPanel *stages)
{
  wick_window_show_page (window, "stages");
  wick_stages_panel_refresh (stages);
  iterate_until (stages_idle, stages);
  g_assert_cmpuint (wick_stages_panel_get_n_stages (stages), ==, 2);
  g_assert_cmpstr (wick_stages_panel_get_state (stages, "denoise"), ==, "eager");
  WickError why;
  if (wick_cuda_available (&why))
    return; /* the GPU path is the cuda suite's */
  g_assert_nonnull (strstr (wick_stages_panel_get_unavailable_reason (stages), "CUDA"));
  wick_stages_panel_capture (stages, "denoise");
  iterate_until (stages_idle, stages);
  g_assert_cmpstr (wick_stages_panel_get_last_verdict (stages), ==, "refused");
  screenshot ("live-stages.png");
}

static void
check_saved_trace (WickLiveSession *session)
{
  g_autofree char *path = g_build_filename (runtime_dir, "saved.jsonl", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_live_session_save (session, path, &error));
  g_assert_no_error (error);
  g_autoptr (WickDocument) saved = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (saved, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (wick_document_get_terminal_reason (saved), ==,
                   "capture cut: saved while the process was still running");
}

/* What the app shows of a document (reading Wick's own
 * file back shows everything it showed live): thread names and ids, every
 * Wick record (kind, time, JSON: the snapshot, weight moves, stage captures
 * and certificates, marks, losses), where an attach began, what was lost,
 * the health verdict and the terminal. */
static char *
document_facts (WickDocument *doc)
{
  GString *facts = g_string_new (NULL);
  guint n;
  const WickThread *threads = wick_tracks_get_threads (wick_document_get_tracks (doc), &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (facts, "thread %" G_GINT64_FORMAT " %s\n", threads[i].tid,
                            threads[i].name ? wick_document_str (doc, threads[i].name) : "");
  const WickExtensionRecord *records = wick_document_get_extensions (doc, &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (facts, "record %s %" G_GUINT64_FORMAT " %s\n",
                            wick_document_str (doc, records[i].kind), records[i].timestamp_ns,
                            wick_document_str (doc, records[i].json));
  WickAttachFacts attach;
  if (wick_document_get_attach (doc, &attach))
    g_string_append_printf (facts, "attach %" G_GUINT64_FORMAT " missing %" G_GUINT64_FORMAT
                                   " exact %d snapshot %d partial %d\n",
                            attach.attached_ns, attach.missing, attach.exact, attach.snapshot,
                            wick_document_is_partial (doc));
  WickLossFacts losses;
  wick_document_get_losses (doc, &losses);
  g_string_append_printf (facts, "losses %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                          losses.dropped, losses.lost, losses.detached);
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (facts, "health %d %s %s\n", issues[i].severity, issues[i].code,
                            issues[i].message);
  g_string_append_printf (facts, "valid %d terminal %s\n",
                          wick_document_get_structurally_valid (doc),
                          wick_document_get_terminal_reason (doc) ?: "(none)");
  return g_string_free (facts, FALSE);
}

/* The window's file, opened as a file: the same facts as the live window,
 * and the same partial banner. */
static void
check_file_as_live (WickLiveSession *session, WickWindow *live)
{
  g_autofree char *path = g_build_filename (runtime_dir, "ended.jsonl", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (wick_live_session_save (session, path, &error));
  g_assert_no_error (error);
  g_autoptr (WickDocument) saved = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (saved, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *shown_live = document_facts (wick_window_get_document (live));
  g_autofree char *shown_file = document_facts (saved);
  g_test_message ("%s", shown_file);
  g_assert_cmpstr (shown_file, ==, shown_live);
  /* Committed live from the ring records as values, read back from the
   * saved text: the same document, array by array. */
  g_autofree char *live_digest = wick_document_digest (wick_window_get_document (live));
  g_autofree char *file_digest = wick_document_digest (saved);
  g_assert_cmpstr (file_digest, ==, live_digest);
  /* the facts this test is about are there */
  g_assert_nonnull (strstr (shown_file, "record wick_attach_snapshot "));
  g_assert_nonnull (strstr (shown_file, "record wick_weight_evict "));
  g_assert_nonnull (strstr (shown_file, "record wick_weight_restore "));
  g_assert_nonnull (strstr (shown_file, "record wick_stage_certification "));
  g_assert_nonnull (strstr (shown_file, " data_loader\n"));
  g_assert_nonnull (strstr (shown_file, "partial 1\n"));
  WickWindow *reopened = wick_window_new (GTK_APPLICATION (shared_app ()));
  wick_window_set_document (reopened, saved);
  g_assert_cmpstr (wick_window_get_banner (reopened, "partial"), ==,
                   wick_window_get_banner (live, "partial"));
  gtk_window_destroy (GTK_WINDOW (reopened));
}

static void
test_live_window (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: the live window test runs under Xvfb (tools/test.sh)");
      return;
    }
  start_demo ();
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  /* Attach to Process…: the dialog lists the demo; attaching reuses the window. */
  WickAttachDialog *dialog = wick_attach_dialog_new (app, GTK_WINDOW (window));
  gtk_window_present (GTK_WINDOW (dialog));
  iterate_until (dialog_listed, dialog);
  g_assert_cmpuint (wick_attach_dialog_get_n_sessions (dialog), ==, 1);
  screenshot ("live-attach.png");
  g_autoptr (GError) error = NULL;
  GtkWindow *shown = wick_attach_dialog_attach (dialog, 0, &error);
  g_assert_no_error (error);
  g_assert_true (shown == GTK_WINDOW (window)); /* the welcome window is reused */
  /* The attach runs in a worker thread: the window answers meanwhile. */
  iterate_until (window_attached, window);
  WickLiveSession *session = wick_live_session_from_window (window);
  g_assert_nonnull (session);
  g_assert_true (wick_window_get_live (window));

  /* Records arrive frame after frame. */
  WickDocument *document = wick_window_get_document (window);
  iterate_until (has_spans, window);
  guint first, second;
  wick_document_get_spans (document, &first);
  g_assert_cmpuint (first, >, 0);
  WICK_TEST_WAIT_UNTIL ((iterate_and_check (has_spans, window),
                         wick_document_get_spans (document, &second), second > first),
                        LIVE_TEST_WAIT_S, "the live document stayed at %u spans", first);

  /* A late attach (the demo ran before it): the banner says so, and Health
   * judges the partial capture its file will be, not a complete run with
   * errors */
  const char *partial = wick_window_get_banner (window, "partial");
  g_assert_nonnull (partial);
  g_assert_true (g_str_has_prefix (partial, "attached at "));
  g_assert_true (g_str_has_suffix (partial, " s: records before that are missing"));
  g_assert_true (wick_document_is_partial (document));
  wick_window_show_page (window, "health");
  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  WICK_TEST_WAIT_UNTIL ((iterate_for (50), wick_health_page_get_n_pending (health) > 0),
                        LIVE_TEST_WAIT_S, "the Health page has no live verdict");
  g_test_message ("live Health: %s", wick_health_page_get_title (health));
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 0);
  g_assert_true (g_str_has_prefix (wick_health_page_get_title (health),
                                   "Partial capture in progress: 0 errors"));
  if (g_getenv ("WICK_SCREENSHOT_DIR") != NULL)
    iterate_for (1500); /* the page drawn for the picture */
  screenshot ("live-partial-health.png");
  wick_window_show_page (window, "timeline");
  if (g_getenv ("WICK_SCREENSHOT_DIR") != NULL)
    iterate_for (1500);
  screenshot ("live-partial.png");

  check_weights_page (window, WICK_WEIGHTS_PANEL (wick_live_session_get_weights_panel (session)));
  check_stages_page (window, WICK_STAGES_PANEL (wick_live_session_get_stages_panel (session)));
  wick_window_show_page (window, "timeline");
  /* Widen the followed window to the last 6 s: the evictions, the waits for
   * the weights, the restores and the capture are all in the picture. */
  guint64 end = wick_document_get_end_ns (document);
  wick_selection_set_visible (wick_window_get_selection (window),
                              end > 6000000000u ? end - 6000000000u : 0, end);
  if (g_getenv ("WICK_SCREENSHOT_DIR") != NULL)
    iterate_for (1500); /* the widened view drawn for the picture */
  screenshot ("live-window.png"); /* with the evictions and the capture as Wick events */
  wick_window_show_page (window, "memory");
  screenshot ("live-memory.png");
  wick_window_show_page (window, "coverage");
  screenshot ("live-coverage.png");
  wick_window_show_page (window, "timeline");
  {
    /* how the timeline's track model kept up: appends, and whole rebuilds with their reason */
    WickTracksUpdateStats stats;
    wick_tracks_get_update_stats (wick_document_get_tracks (document), &stats);
    g_test_message ("tracks: %" G_GUINT64_FORMAT " whole builds, %" G_GUINT64_FORMAT
                    " appends, %" G_GUINT64_FORMAT " fallbacks (last: %s)",
                    stats.builds, stats.appends, stats.fallbacks,
                    stats.last_fallback ? stats.last_fallback : "none");
    g_assert_cmpuint (stats.appends, >, 0);
  }
  check_saved_trace (session);

  /* The end of the process is shown: the session ends, the document finishes. */
  g_assert_cmpint (stop_demo (), ==, 0);
  iterate_until (session_ended, session);
  g_assert_true (wick_document_is_finished (document));
  g_assert_true (wick_document_has_terminal (document));
  g_assert_false (wick_window_get_live (window));
  check_file_as_live (session, window);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (100);
}

static gboolean
view_restarted (gpointer session)
{
  return wick_live_session_get_restarts (session) >= 2;
}

/* A small history limit: the view starts over (twice) on the newest records,
 * holding about the limit, with the spans still open and the demo's module
 * memory from the second attach; Save As… writes the whole run, which
 * candle-graph's rules accept (its cut terminal after all evidence). */
static void
test_history_limit (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: the live window test runs under Xvfb (tools/test.sh)");
      return;
    }
  g_setenv ("WICK_LIVE_HISTORY", "400", TRUE);
  g_assert_cmpuint (wick_live_history_limit (), ==, 400);
  start_demo ();
  WickApplication *app = shared_app ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  g_autofree char *socket = wick_live_find_socket (demo_pid, NULL);
  g_autoptr (GError) error = NULL;
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  iterate_until (view_restarted, session);
  wick_live_session_pump (session, G_USEC_PER_SEC);
  WickDocument *view = wick_window_get_document (window);
  /* the view holds at most the limit and a batch, never the whole run */
  g_assert_cmpuint (wick_document_get_n_lines (view), <=, 400 + 4 * 2048);
  g_assert_cmpstr (wick_document_get_schema (view), ==, "candle-graph/trace/10");
  guint n_spans, n_memory;
  wick_document_get_spans (view, &n_spans);
  wick_document_get_memory (view, &n_memory);
  g_assert_cmpuint (n_spans, >, 0);
  g_assert_cmpuint (n_memory, >, 0); /* the parameters, from the snapshot */
  g_autofree char *path = g_build_filename (runtime_dir, "history.jsonl", NULL);
  g_assert_true (wick_live_session_save (session, path, &error));
  g_assert_no_error (error);
  g_autoptr (WickDocument) saved = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (saved, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (wick_document_get_parse_error (saved)->failed);
  g_assert_cmpuint (wick_document_get_n_lines (saved), >, 800);
  g_assert_cmpuint (wick_document_get_n_lines (saved), >, wick_document_get_n_lines (view));
  g_assert_cmpstr (wick_document_get_terminal_reason (saved), ==,
                   "capture cut: saved while the process was still running");
  /* the end still comes through the restarted view */
  g_assert_cmpint (stop_demo (), ==, 0);
  iterate_until (session_ended, session);
  g_assert_true (wick_document_has_terminal (wick_window_get_document (window)));
  g_unsetenv ("WICK_LIVE_HISTORY");
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (100);
}

static gboolean
is_null (gpointer pointer_to_pointer)
{
  return *(gpointer *)pointer_to_pointer == NULL;
}

/* Closing the window of a running process stops and joins the session's
 * worker thread and frees the session; the process goes on unharmed. */
static void
test_close_while_running (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: the live window test runs under Xvfb (tools/test.sh)");
      return;
    }
  start_demo ();
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  g_autofree char *socket = wick_live_find_socket (demo_pid, NULL);
  g_autoptr (GError) error = NULL;
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  iterate_until (has_spans, window);
  g_object_add_weak_pointer (G_OBJECT (session), (gpointer *)&session);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_until (is_null, &session);
  g_assert_cmpint (kill (demo_pid, 0), ==, 0);
  g_assert_cmpint (stop_demo (), ==, 0);
}

/* A window that falls behind a flood: the lost banner's count is renewed at
 * most twice a second while records stream (a new text is a new layout and
 * a frame of the whole window), and at the end it gives the exact count. */
static void
test_loss_banner (void)
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_test_skip ("no display: the live window test runs under Xvfb (tools/test.sh)");
      return;
    }
  const char *demo = g_getenv ("WICK_DEMO");
  g_assert_nonnull (demo);
  const char *argv[] = { demo, "--quiet", "--flood", "0", "--ring-bytes", "262144", NULL };
  g_autoptr (GError) error = NULL;
  g_spawn_async (NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 wick_test_die_with_parent, NULL, &demo_pid, &error);
  g_assert_no_error (error);
  g_autofree char *socket = live_test_wait_for_socket (demo_pid);
  WickWindow *window = wick_window_new (GTK_APPLICATION (shared_app ()));
  gtk_window_present (GTK_WINDOW (window));
  WickLiveSession *session = wick_live_session_attach (window, socket, &error);
  g_assert_no_error (error);
  iterate_until (has_spans, window);
  /* behind for a while: the ring laps the reader */
  wick_live_session_hold_commits (session, TRUE);
  g_usleep (300 * 1000);
  wick_live_session_hold_commits (session, FALSE);
  iterate_until (has_lost_banner, window);
  g_autofree char *shown = g_strdup (wick_window_get_banner (window, "lost"));
  guint renewed = 0;
  gint64 start = g_get_monotonic_time ();
  guint64 lost_at_start = wick_live_session_get_lost (session);
  while (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
      const char *now = wick_window_get_banner (window, "lost");
      if (g_strcmp0 (now, shown) != 0)
        {
          renewed++;
          g_free (shown);
          shown = g_strdup (now);
        }
    }
  g_test_message ("the lost banner renewed %u times in 2 s (%" G_GUINT64_FORMAT
                  " records lost meanwhile)",
                  renewed, wick_live_session_get_lost (session) - lost_at_start);
  g_assert_cmpuint (wick_live_session_get_lost (session), >, lost_at_start);
  g_assert_cmpuint (renewed, >=, 1);
  g_assert_cmpuint (renewed, <=, 5); /* 2 s at two a second, and the edges */
  kill (demo_pid, SIGINT);
  iterate_until (session_ended, session);
  guint64 lost = wick_live_session_get_lost (session);
  g_autofree char *expected = g_strdup_printf (
    "%" G_GUINT64_FORMAT " records lost: this window fell behind the process", lost);
  g_assert_cmpstr (wick_window_get_banner (window, "lost"), ==, expected);
  int status = wick_test_wait_child (demo_pid, LIVE_TEST_WAIT_S, "wick-demo (after SIGINT)");
  g_spawn_close_pid (demo_pid);
  g_assert_true (WIFEXITED (status));
  gtk_window_destroy (GTK_WINDOW (window));
  iterate_for (100);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  runtime_dir = live_test_runtime_dir_new ("wick-live-window-XXXXXX");
  if (g_getenv ("DISPLAY") != NULL || g_getenv ("WAYLAND_DISPLAY") != NULL)
    gtk_init ();
  g_test_add_func ("/live/window/attach-weights-stages-save-end", test_live_window);
  g_test_add_func ("/live/window/history-limit", test_history_limit);
  g_test_add_func ("/live/window/close-while-running", test_close_while_running);
  g_test_add_func ("/live/window/loss-banner", test_loss_banner);
  int status = g_test_run ();
  live_test_runtime_dir_remove (runtime_dir);
  return status;
}
