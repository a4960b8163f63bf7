/* test-app-follow.c — a window whose document is still being fed (under
 * Xvfb): provisional health (the Health page says the run is in progress and
 * counts the pending rules, the window's banner says so, and both give way to
 * the final verdicts when the document finishes); and File → Follow… / wick
 * --follow on a file that a separate writer process (/usr/bin/python3,
 * writing and flushing candle-graph lines as candle-graph's TraceSession
 * does) appends to: every line shown as it arrives, a partial last line
 * waiting for its newline, a truncation starting over with a banner, the
 * final health at the terminal, and the cut capture's verdicts when the
 * writer goes away without one. Skips without a display.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/session/wick-follow-session.h"
#include "ui/session/wick-follow-session-private.h"
#include "ui/session/wick-live-session.h"
#include "ui/session/wick-live-session-private.h"
#include "ui/wick-application.h"
#include "ui/wick-health-page.h"
#include "ui/wick-health-page-private.h"
#include "ui/wick-window-private.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-scene-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-timeline-view-private.h"
#include "ui/wick-window.h"

static WickApplication *app;

static char *
data_path (const char *name)
{
  const char *dir = g_getenv ("WICK_TEST_DATA");
  return g_build_filename (dir ? dir : "tests/data", "model", name, NULL);
}

static GStrv
fixture_lines (void)
{
  g_autofree char *path = data_path ("train-contract.jsonl");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strsplit (text, "\n", -1);
}

static gboolean
health_pending (gpointer page)
{
  return wick_health_page_get_n_pending (page) > 0;
}

static gboolean
health_final (gpointer page)
{
  return wick_health_page_get_n_pending (page) == 0
         && !g_str_has_prefix (wick_health_page_get_title (page), "Run in progress");
}

/* A window showing @document as a live session's, as records reach it. */
static WickWindow *
live_window_new (WickDocument *document)
{
  WickWindow *window = app_test_window_new (app, 1200, 700);
  wick_window_set_document (window, document);
  wick_window_set_live (window, TRUE);
  return window;
}

/* A training trace fed up to its first gradient: the Health page and the
 * banner say the run is in progress with its six pending rules, the window
 * shows no health-error banner; fed to the end and finished, the final
 * health (0 errors) and no banner. */
static void
test_provisional_health (void)
{
  g_auto (GStrv) lines = fixture_lines ();
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  WickWindow *window = live_window_new (document);
  guint i = 0;
  for (; i < 20; i++)
    g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
  wick_document_analyze (document);
  wick_window_document_changed (window);
  const char *banner = wick_live_window_update_progress (window, document);
  g_assert_cmpstr (banner, ==, "The run is in progress: 6 health rules are pending until it ends.");
  g_assert_cmpstr (wick_live_window_get_progress (window), ==, banner);
  /* Shown once: the same text again does not re-add it. */
  g_assert_true (wick_live_window_update_progress (window, document) == banner);

  WickHealthPage *health = WICK_HEALTH_PAGE (wick_window_get_view (window, "health"));
  wick_window_show_page (window, "health");
  app_test_wait_until (health_pending, health, 10000, "the pending rules on the Health page");
  g_assert_cmpuint (wick_health_page_get_n_pending (health), ==, 6);
  g_assert_cmpuint (wick_health_page_get_n_errors (health), ==, 0);
  g_assert_cmpstr (wick_health_page_get_title (health), ==,
                   "Run in progress: 0 errors, 0 warnings so far, 6 pending");
  /* Pending rules are not health errors: the only banner is the progress one. */
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 1);
  app_test_screenshot (GTK_WIDGET (window), "health-provisional.png");

  for (; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
  g_assert_true (wick_document_finish (document, NULL));
  wick_window_document_changed (window);
  g_assert_null (wick_live_window_update_progress (window, document));
  g_assert_null (wick_live_window_get_progress (window));
  app_test_wait_until (health_final, health, 10000, "the final health");
  g_assert_cmpstr (wick_health_page_get_title (health), ==, "0 errors, 0 warnings");
  g_assert_cmpuint (wick_window_get_n_banners (window), ==, 0);
  app_test_window_close (window);
}

static void
count_applied (WickTimelineView *view, guint *n)
{
  (*n)++;
}

static gboolean
change_applied (gpointer view)
{
  return !wick_timeline_view_get_change_pending (view);
}

/* A live window's following timeline with an update interval: of a burst of
 * changes inside one interval the first is applied at once and the rest are
 * coalesced into one update after it (the visible range then at the newest
 * record); without the interval every change is applied at once; lifting
 * the interval applies a waiting change at once. */
static void
test_follow_interval (void)
{
  g_auto (GStrv) lines = fixture_lines ();
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  WickWindow *window = live_window_new (document);
  wick_window_set_follow_newest (window, TRUE);
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  WickSelection *selection = wick_window_get_selection (window);
  guint applied = 0;
  g_signal_connect (timeline, "document-applied", G_CALLBACK (count_applied), &applied);
  guint n = g_strv_length (lines), i = 0;
  g_assert_cmpuint (n, >, 24);

  /* no interval: each change at once */
  g_assert_cmpint (wick_timeline_view_get_follow_interval (timeline), ==, 0);
  for (guint k = 0; k < 4; k++, i++)
    {
      g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
      wick_window_document_changed (window);
    }
  g_assert_cmpuint (applied, >=, 4); /* the timeline page is told too */
  g_assert_false (wick_timeline_view_get_change_pending (timeline));

  /* a long interval: one update now, the burst after it coalesced into one */
  wick_window_set_follow_interval (window, 60 * G_USEC_PER_SEC);
  applied = 0;
  wick_timeline_view_set_follow (timeline, FALSE);
  wick_selection_set_visible (selection, 0, 2); /* narrower than the records to come */
  wick_window_set_follow_newest (window, TRUE); /* applies at once, and counts */
  g_assert_cmpuint (applied, ==, 1);
  guint64 start, end, applied_end;
  wick_selection_get_visible (selection, &start, &applied_end);
  for (guint k = 0; k < 10 && lines[i + 1] != NULL; k++, i++)
    if (lines[i][0] != '\0')
      {
        g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
        wick_window_document_changed (window);
      }
  g_assert_cmpuint (applied, ==, 1);
  g_assert_true (wick_timeline_view_get_change_pending (timeline));
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (end, ==, applied_end); /* not moved yet */
  guint64 width = end - start, newest = wick_document_get_end_ns (document);
  g_assert_cmpuint (MAX (newest, width), >, applied_end);
  /* lifting the interval applies the waiting change at once */
  wick_window_set_follow_interval (window, 0);
  g_assert_cmpuint (applied, ==, 2);
  g_assert_false (wick_timeline_view_get_change_pending (timeline));
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (end, ==, MAX (newest, width));

  /* a short interval: the coalesced update comes by itself */
  wick_window_set_follow_interval (window, 100 * 1000);
  applied = 0;
  for (guint k = 0; k < 8 && lines[i + 1] != NULL; k++, i++)
    if (lines[i][0] != '\0')
      {
        g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
        wick_window_document_changed (window);
      }
  g_assert_cmpuint (applied, <=, 1);
  app_test_wait_until (change_applied, timeline, 10000, "the coalesced update");
  g_assert_cmpuint (applied, <=, 2);
  g_assert_cmpuint (applied, >=, 1);
  wick_selection_get_visible (selection, &start, &end);
  g_assert_cmpuint (end, ==, MAX (wick_document_get_end_ns (document), width));
  app_test_window_close (window);
}

/* The writer: a separate process appending to @path the lines of @source on
 * command (one per line on its stdin, answered "ok" once written and flushed):
 * "write N" (up to line N), "half" / "rest" (the next line in two writes),
 * "truncate N" (empties the file, then writes lines 0..N), "end" (the rest). */
static const char writer_script[]
  = "import sys\n"
    "lines = open(sys.argv[2]).read().splitlines(True)\n"
    "out = open(sys.argv[1], 'a')\n"
    "i = 0\n"
    "for command in sys.stdin:\n"
    "    words = command.split()\n"
    "    if words[0] == 'write':\n"
    "        out.write(''.join(lines[i:int(words[1])])); i = int(words[1])\n"
    "    elif words[0] == 'half':\n"
    "        out.write(lines[i][:len(lines[i]) // 2])\n"
    "    elif words[0] == 'rest':\n"
    "        out.write(lines[i][len(lines[i]) // 2:]); i += 1\n"
    "    elif words[0] == 'truncate':\n"
    "        out.truncate(0); i = int(words[1]); out.write(''.join(lines[:i]))\n"
    "    elif words[0] == 'end':\n"
    "        out.write(''.join(lines[i:])); i = len(lines)\n"
    "    out.flush()\n"
    "    print('ok', flush=True)\n";

typedef struct
{
  GSubprocess *process;
  GDataInputStream *replies;
} Writer;

static void
writer_start (Writer *w, const char *path)
{
  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    g_error ("the writer process needs /usr/bin/python3");
  g_autofree char *source = data_path ("train-contract.jsonl");
  g_autoptr (GError) error = NULL;
  w->process
    = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                        "/usr/bin/python3", "-c", writer_script, path, source, NULL);
  g_assert_no_error (error);
  w->replies = g_data_input_stream_new (g_subprocess_get_stdout_pipe (w->process));
}

/* Sends @command and waits (blocking) for the writer's "ok". */
static void
writer_do (Writer *w, const char *command)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *line = g_strdup_printf ("%s\n", command);
  g_assert_true (g_output_stream_write_all (g_subprocess_get_stdin_pipe (w->process), line,
                                            strlen (line), NULL, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *reply = g_data_input_stream_read_line (w->replies, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "ok");
}

/* Closes its stdin: the writer exits, closing the file without a terminal. */
static void
writer_stop (Writer *w)
{
  g_autoptr (GError) error = NULL;
  g_output_stream_close (g_subprocess_get_stdin_pipe (w->process), NULL, NULL);
  g_assert_true (g_subprocess_wait_check (w->process, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&w->replies);
  g_clear_object (&w->process);
}

typedef struct
{
  WickFollowSession *session;
  guint64 lines;
} LinesWanted;

static gboolean
has_lines (gpointer data)
{
  LinesWanted *wanted = data;
  return wick_document_get_n_lines (wick_follow_session_get_document (wanted->session))
         == wanted->lines;
}

static void
wait_lines (WickFollowSession *session, guint64 lines)
{
  LinesWanted wanted = { session, lines };
  g_autofree char *what = g_strdup_printf ("%" G_GUINT64_FORMAT " lines", lines);
  app_test_wait_until (has_lines, &wanted, 20000, what);
}

static gboolean
follow_ended (gpointer session)
{
  return wick_follow_session_is_ended (session);
}

static gboolean
restarted_once (gpointer session)
{
  return wick_follow_session_get_restarts (session) == 1;
}

static char *
health_text (WickDocument *doc)
{
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (doc, &n);
  GString *out = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "%s %s %s\n", wick_severity_to_string (issues[i].severity),
                            issues[i].code, issues[i].message);
  return g_string_free (out, FALSE);
}

/* An empty trace.jsonl in a new directory, its writer process, and a window
 * following it. */
typedef struct
{
  char *dir, *path;
  Writer writer;
  WickFollowSession *session;
  WickWindow *window;
} Following;

static void
following_start (Following *f)
{
  f->dir = g_dir_make_tmp ("wick-follow-XXXXXX", NULL);
  f->path = g_build_filename (f->dir, "trace.jsonl", NULL);
  g_assert_true (g_file_set_contents (f->path, "", 0, NULL));
  writer_start (&f->writer, f->path);
  f->window = app_test_window_new (app, 1200, 700);
  g_autoptr (GError) error = NULL;
  f->session = wick_follow_session_start (f->window, f->path, &error);
  g_assert_no_error (error);
  g_assert_true (wick_follow_session_from_window (f->window) == f->session);
  g_assert_true (wick_window_get_live (f->window));
}

/* The window closed, the file and its directory removed (the writer stopped
 * already). */
static void
following_end (Following *f)
{
  g_assert_null (f->writer.process);
  app_test_window_close (f->window);
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

static void
test_follow_writer (void)
{
  Following f = { 0 };
  following_start (&f);
  Writer *writer = &f.writer;
  WickFollowSession *session = f.session;
  WickWindow *window = f.window;

  writer_do (writer, "write 10");
  wait_lines (session, 10);
  WickDocument *document = wick_follow_session_get_document (session);
  g_assert_true (wick_window_get_document (window) == document);
  g_assert_cmpuint (wick_document_get_record_count (document, WICK_RECORD_SPAN), ==, 3);

  /* Half a line waits for the rest. */
  writer_do (writer, "half");
  for (int i = 0; i < 5; i++)
    wick_follow_session_poll (session);
  g_assert_cmpuint (wick_document_get_n_lines (document), ==, 10);
  writer_do (writer, "rest");
  wait_lines (session, 11);
  /* the view fits the data as it grows */
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  WickSelection *selection = wick_window_get_selection (window);
  guint64 vs, ve, fs, fe;
  wick_selection_get_visible (selection, &vs, &ve);
  wick_timeline_view_zoom_to_fit (timeline);
  wick_selection_get_visible (selection, &fs, &fe);
  g_assert_cmpuint (vs, ==, fs);
  g_assert_cmpuint (ve, ==, fe);
  guint64 end_before = wick_document_get_end_ns (document);
  writer_do (writer, "write 20");
  wait_lines (session, 20);
  g_assert_cmpuint (wick_document_get_end_ns (document), >, end_before);
  wick_selection_get_visible (selection, &vs, &ve);
  wick_timeline_view_zoom_to_fit (timeline);
  wick_selection_get_visible (selection, &fs, &fe);
  g_test_message ("grown to %" G_GUINT64_FORMAT " ns: shown [%" G_GUINT64_FORMAT ", %"
                  G_GUINT64_FORMAT "], fit [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                  wick_document_get_end_ns (document), vs, ve, fs, fe);
  g_assert_cmpuint (vs, ==, fs);
  g_assert_cmpuint (ve, ==, fe);
  g_assert_true (wick_timeline_view_get_follow (timeline));
  const char *shots = g_getenv ("WICK_SCREENSHOT_DIR");
  if (shots != NULL)
    {
      app_test_iterate_pending (300);
      g_autofree char *png = g_build_filename (shots, "follow-fit.png", NULL);
      app_test_save_png (GTK_WIDGET (window), png);
    }
  /* a zoom by the user ends it: more data, the same view */
  wick_timeline_view_zoom (timeline, 0.5, WICK_TIMELINE_GUTTER + 100);
  g_assert_false (wick_timeline_view_get_follow (timeline));
  wick_selection_get_visible (selection, &vs, &ve);
  writer_do (writer, "write 24");
  wait_lines (session, 24);
  guint64 vs2, ve2;
  wick_selection_get_visible (selection, &vs2, &ve2);
  g_assert_cmpuint (vs2, ==, vs);
  g_assert_cmpuint (ve2, ==, ve);
  /* The run is in progress: provisional health, the banner says so. */
  wick_document_analyze (document);
  g_assert_true (wick_document_get_health_provisional (document));
  g_assert_nonnull (wick_live_window_update_progress (window, document));

  /* Truncated and rewritten: a new document from the start, with a banner. */
  writer_do (writer, "truncate 3");
  app_test_wait_until (restarted_once, session, 20000, "the restart");
  wait_lines (session, 3);
  WickDocument *again = wick_follow_session_get_document (session);
  g_assert_true (again != document);
  g_assert_true (wick_window_get_document (window) == again);
  g_assert_nonnull (strstr (wick_follow_session_get_message (session), "was truncated"));
  g_assert_true (
    g_str_has_suffix (wick_follow_session_get_message (session), "The view starts over."));

  /* To the end: the terminal ends the follow with the file's own health. */
  writer_do (writer, "end");
  app_test_wait_until (follow_ended, session, 20000, "the terminal");
  g_assert_true (wick_document_is_finished (again));
  g_assert_false (wick_document_get_health_provisional (again));
  g_assert_null (wick_live_window_get_progress (window));
  g_assert_false (wick_window_get_live (window));
  g_assert_cmpstr (wick_follow_session_get_message (session), ==,
                   "trace.jsonl finished its trace.");
  g_autofree char *fixture = data_path ("train-contract.jsonl");
  g_autoptr (WickDocument) whole = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (whole, fixture, NULL, NULL, NULL, NULL));
  g_autofree char *followed_health = health_text (again);
  g_autofree char *whole_health = health_text (whole);
  g_assert_cmpstr (followed_health, ==, whole_health);
  g_assert_true (wick_document_get_structurally_valid (again));
  writer_stop (writer);
  following_end (&f);
}

typedef struct
{
  WickFollowSession *session;
  guint before;
} IdleChecks;

static gboolean
looked_for_writer (gpointer data)
{
  IdleChecks *checks = data;
  return wick_follow_session_get_idle_checks (checks->session) > checks->before;
}

/* The writer goes away mid-run: the capture is cut, and the final verdicts of
 * an interrupted run replace the pending ones. */
static void
test_follow_writer_gone (void)
{
  Following f = { 0 };
  following_start (&f);
  Writer *writer = &f.writer;
  WickFollowSession *session = f.session;
  WickWindow *window = f.window;
  writer_do (writer, "write 12");
  wait_lines (session, 12);
  /* While it writes, an idle file is not the end: the session's own polls
   * look for the writer once the file has not grown for a second. */
  IdleChecks checks = { session, wick_follow_session_get_idle_checks (session) };
  app_test_wait_until (looked_for_writer, &checks, 20000, "a writer check on the idle file");
  g_assert_false (wick_follow_session_is_ended (session));
  writer_stop (writer);
  app_test_wait_until (follow_ended, session, 20000, "the end of the writer");
  WickDocument *document = wick_follow_session_get_document (session);
  g_assert_true (wick_document_is_finished (document));
  g_assert_false (wick_document_get_health_provisional (document));
  g_assert_cmpstr (wick_document_get_terminal_reason (document), ==,
                   "capture cut: the file's writer went away without finishing the trace");
  g_assert_true (g_str_has_prefix (wick_follow_session_get_message (session),
                                   "No process writes trace.jsonl any more"));
  guint n;
  const WickHealthIssue *issues = wick_document_get_health (document, &n);
  guint interrupted = 0;
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpint (issues[i].severity, !=, WICK_SEVERITY_PENDING);
      interrupted += g_strcmp0 (issues[i].code, "open_span") == 0
                     && issues[i].severity == WICK_SEVERITY_WARNING;
    }
  g_assert_cmpuint (interrupted, ==, 3); /* s1, s2 and s4 were open */
  g_assert_null (wick_live_window_get_progress (window));
  following_end (&f);
}

typedef struct
{
  GApplication *app;
  gboolean followed;
  guint64 lines;
  gint64 deadline;
} CommandLine;

/* Waits for the window of `wick --follow`, checks it, then quits. */
static gboolean
check_command_line (gpointer data)
{
  CommandLine *c = data;
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (c->app));
  for (GList *l = windows; l != NULL && !c->followed; l = l->next)
    {
      WickFollowSession *session
        = WICK_IS_WINDOW (l->data) ? wick_follow_session_from_window (l->data) : NULL;
      if (session == NULL)
        continue;
      c->lines = wick_document_get_n_lines (wick_follow_session_get_document (session));
      c->followed = c->lines == 20;
    }
  if (!c->followed && g_get_monotonic_time () < c->deadline)
    return G_SOURCE_CONTINUE;
  for (GList *l = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (c->app))), *it = l;
       it != NULL; it = it->next)
    {
      gtk_window_destroy (it->data);
      if (it->next == NULL)
        g_list_free (l);
    }
  g_application_quit (c->app);
  return G_SOURCE_REMOVE;
}

/* `wick --follow TRACE.jsonl`, through the application's own option parsing. */
static void
test_follow_command_line (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-follow-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "trace.jsonl", NULL);
  g_auto (GStrv) lines = fixture_lines ();
  g_autoptr (GString) text = g_string_new (NULL);
  for (guint i = 0; i < 20; i++)
    g_string_append_printf (text, "%s\n", lines[i]);
  g_assert_true (g_file_set_contents (path, text->str, (gssize)text->len, NULL));
  /* The test's application itself (one per process can be on the bus); the
   * last test, since it quits. */
  CommandLine c = { G_APPLICATION (app), FALSE, 0, g_get_monotonic_time () + 20 * G_USEC_PER_SEC };
  g_timeout_add (20, check_command_line, &c);
  char *argv[] = { (char *)"wick", (char *)"--follow", path, NULL };
  g_application_run (G_APPLICATION (app), 3, argv);
  g_assert_true (c.followed);
  g_assert_cmpuint (c.lines, ==, 20);
  g_unlink (path);
  g_rmdir (dir);
}

/* A file that cannot be followed is an error naming it. */
static void
test_follow_missing (void)
{
  WickWindow *window = wick_window_new (GTK_APPLICATION (app));
  g_autoptr (GError) error = NULL;
  g_assert_null (wick_follow_session_start (window, "/nonexistent/trace.jsonl", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==,
                   "cannot follow /nonexistent/trace.jsonl: No such file or directory");
  app_test_window_close (window);
}

/* Selecting a slice on the timeline never moves the view, an open
 * span (still running, no duration yet) that began before the visible range
 * included; selecting one from elsewhere (a table) outside the view still
 * brings it in, an open one counted to the newest record. */
static void
test_click_keeps_view (void)
{
  g_auto (GStrv) lines = fixture_lines ();
  g_autoptr (WickDocument) document = wick_document_new_with_extensions (TRUE);
  WickWindow *window = live_window_new (document);
  /* every record but the root's end and the terminal: the root is running */
  for (guint i = 0; lines[i] != NULL; i++)
    if (!g_str_has_prefix (lines[i], "{\"kind\":\"span_end\",\"id\":\"s1\"")
        && !g_str_has_prefix (lines[i], "{\"kind\":\"terminal\""))
      g_assert_true (wick_document_feed_line (document, lines[i], strlen (lines[i]), NULL));
  wick_document_analyze (document);
  wick_window_document_changed (window);
  WickTimelineView *timeline = WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline"));
  WickSelection *selection = wick_window_get_selection (window);
  gint32 root = wick_document_find_span (document, "s1");
  const WickSpan *s1 = &wick_document_get_spans (document, NULL)[root];
  g_assert_false (s1->flags & WICK_SPAN_FLAG_CLOSED);
  guint64 end = wick_document_get_end_ns (document);
  g_assert_cmpuint (end, >, s1->start_ns + 10);
  /* the view on the second half: the open root began before it */
  guint64 start = s1->start_ns + (end - s1->start_ns) / 2;
  wick_timeline_view_set_follow (timeline, FALSE);
  wick_selection_set_visible (selection, start, end);
  app_test_iterate_pending (100);
  WickTimelineViewport view;
  wick_timeline_view_get_viewport (timeline, &view);
  cairo_rectangle_t r;
  g_assert_true (wick_timeline_scene_span_rect (wick_timeline_view_get_scene (timeline), &view,
                                                root, &r));
  g_assert_true (wick_timeline_view_click (timeline, WICK_TIMELINE_GUTTER + 300, r.y + r.height / 2));
  gint64 index;
  g_assert_cmpint (wick_selection_get_record (selection, &index), ==, WICK_RECORD_SPAN);
  g_assert_cmpint (index, ==, root);
  guint64 vs, ve;
  wick_selection_get_visible (selection, &vs, &ve);
  g_assert_cmpuint (vs, ==, start);
  g_assert_cmpuint (ve, ==, end);

  /* from elsewhere, a span outside the view is brought in, keeping the zoom */
  wick_selection_set_record (selection, WICK_RECORD_NONE, -1);
  wick_selection_set_visible (selection, end + 1000000, end + 2000000);
  wick_selection_set_record (selection, WICK_RECORD_SPAN, root);
  wick_selection_get_visible (selection, &vs, &ve);
  g_assert_cmpuint (ve - vs, >=, 1000000);
  g_assert_cmpuint (vs, <=, end);
  g_assert_cmpuint (ve, >=, s1->start_ns);
  app_test_window_close (window);
}

int
main (int argc, char **argv)
{
  app = app_test_ui_init (&argc, &argv);
  if (app == NULL)
    return 0;
  g_test_add_func ("/follow/provisional-health", test_provisional_health);
  g_test_add_func ("/follow/click-keeps-view", test_click_keeps_view);
  g_test_add_func ("/follow/interval-coalesces", test_follow_interval);
  g_test_add_func ("/follow/writer-process", test_follow_writer);
  g_test_add_func ("/follow/writer-gone", test_follow_writer_gone);
  g_test_add_func ("/follow/missing-file", test_follow_missing);
  g_test_add_func ("/follow/command-line", test_follow_command_line);
  return app_test_ui_run (app);
}
