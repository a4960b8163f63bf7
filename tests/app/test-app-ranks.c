/* test-app-ranks.c — several rank files opened as one job
 * (wick_window_open_job): a generated 4-rank job (tools/make-rank-traces.py)
 * opens in one window with every rank's processes named "rank N · …" on the
 * aligned clock and a Ranks page holding the job (offsets, straggler first);
 * a broken rank file leaves a banner naming it and the window open.
 * Suite: app, under Xvfb. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-application-private.h"
#include "ui/wick-ranks-page.h"
#include "ui/wick-ranks-page-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-timeline-view-private.h"
#include "ui/wick-timeline-scene.h"
#include <json-glib/json-glib.h>
#include <stdio.h>
#include "ui/wick-window-private.h"
#include "wick-tracks.h"

static WickApplication *app;

static gboolean
banner_shown (gpointer window)
{
  return wick_window_get_n_banners (WICK_WINDOW (window)) > 0
         && wick_window_get_view (WICK_WINDOW (window), "ranks") == NULL;
}

/* GTK's own keys-changed idle (queued when the view switcher gains the Ranks
 * page's button, or a banner its widgets) has run: closing the window then
 * leaves nothing of it in the main loop. */
static gboolean
no_window_sources (gpointer window)
{
  return g_main_context_find_source_by_user_data (NULL, window) == NULL;
}

/* The earliest GPU slice of @rank's processes ("rank N · …") on the window's timeline. */
static guint64
rank_first_ns (WickWindow *w, int rank)
{
  WickDocument *doc = wick_window_get_document (w);
  WickTracks *tracks = wick_document_get_tracks (doc);
  g_autofree char *prefix = g_strdup_printf ("rank %d \xc2\xb7 ", rank);
  const WickProcess *procs;
  const WickTrack *tr;
  const WickDeviceSlice *ds;
  guint np, nt, nd;
  guint64 first = G_MAXUINT64;

  procs = wick_tracks_get_processes (tracks, &np);
  tr = wick_tracks_get_tracks (tracks, &nt);
  ds = wick_tracks_get_device_slices (tracks, &nd);
  for (guint i = 0; i < nd; i++)
    {
      gint32 p = tr[ds[i].track].process;
      if (p >= 0 && g_str_has_prefix (wick_document_str (doc, procs[p].name), prefix))
        first = MIN (first, ds[i].start_ns);
    }
  g_assert_cmpuint (first, !=, G_MAXUINT64);
  return first;
}

static gboolean
realigned (gpointer window)
{
  GtkWidget *page = wick_window_get_view (WICK_WINDOW (window), "ranks");
  return !wick_ranks_page_is_realigning (WICK_RANKS_PAGE (page))
         && app_test_window_is_document (window);
}

static char *
args_string (const char *args, const char *key)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  g_assert_true (json_parser_load_from_data (parser, args, -1, NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  if (!json_object_has_member (o, key))
    return NULL;
  if (json_node_get_value_type (json_object_get_member (o, key)) == G_TYPE_STRING)
    return g_strdup (json_object_get_string_member (o, key));
  return g_strdup_printf ("%" G_GINT64_FORMAT, json_object_get_int_member (o, key));
}

/* A collective's kernel selected on rank 0: the timeline outlines its
 * kernels on every other rank of its group, matched by (group, Seq) as the
 * reduction matched them. */
static void
check_collective_highlight (WickWindow *w)
{
  WickDocument *doc = wick_window_get_document (w);
  WickTracks *tracks = wick_document_get_tracks (doc);
  WickTimelineView *view = WICK_TIMELINE_VIEW (wick_window_get_view (w, "timeline"));
  const WickRankJob *job
    = wick_ranks_page_get_job (WICK_RANKS_PAGE (wick_window_get_view (w, "ranks")));
  const WickProcess *procs;
  const WickTrack *tr;
  const WickDeviceSlice *ds;
  guint np, nt, nd, checked = 0;

  procs = wick_tracks_get_processes (tracks, &np);
  tr = wick_tracks_get_tracks (tracks, &nt);
  ds = wick_tracks_get_device_slices (tracks, &nd);
  for (guint i = 0; i < nd && checked < 3; i++)
    {
      const char *args = wick_document_str (doc, ds[i].args);
      const char *pname = wick_document_str (doc, procs[tr[ds[i].track].process].name);
      g_autofree char *group = NULL, *seq = NULL, *index = NULL;
      const WickJobCollective *c;
      WickTimelineViewport vp;
      guint seen_ranks = 0;
      if (args == NULL || !g_str_has_prefix (pname, "rank 0 ")
          || !g_str_has_prefix (args, "{\"wick_collective\":"))
        continue;
      index = args_string (args, "wick_collective");
      group = args_string (args, "Process Group Name");
      seq = args_string (args, "Seq");
      c = job->collectives->pdata[g_ascii_strtoull (index, NULL, 10)];
      g_assert_cmpstr (c->group, ==, group);
      g_assert_cmpint (c->seq, ==, g_ascii_strtoll (seq, NULL, 10));
      wick_selection_set_record_event (wick_window_get_selection (w),
                                       ds[i].source >= 0 ? WICK_RECORD_DEVICE_INTERVAL
                                                         : WICK_RECORD_NONE,
                                       ds[i].source, WICK_EVENT_DEVICE, i);
      wick_timeline_view_get_viewport (view, &vp);
      /* every other rank of its group, once */
      g_assert_cmpuint (vp.n_related, ==, c->ranks->len - 1);
      for (guint k = 0; k < vp.n_related; k++)
        {
          const WickDeviceSlice *o;
          g_autofree char *og = NULL, *os = NULL;
          int rank = -1;
          g_assert_cmpuint (vp.related[k].kind, ==, WICK_EVENT_DEVICE);
          o = &ds[vp.related[k].index];
          g_assert_true (sscanf (wick_document_str (doc, procs[tr[o->track].process].name),
                                 "rank %d", &rank) == 1);
          g_assert_cmpint (rank, >, 0);
          g_assert_false (seen_ranks & (1u << rank));
          seen_ranks |= 1u << rank;
          og = args_string (wick_document_str (doc, o->args), "Process Group Name");
          os = args_string (wick_document_str (doc, o->args), "Seq");
          g_assert_cmpstr (og, ==, group);
          g_assert_cmpstr (os, ==, seq);
        }
      app_test_wait_drawn (GTK_WIDGET (view), 20000, "the highlighted collective");
      checked++;
    }
  g_assert_cmpuint (checked, ==, 3);
  wick_selection_set_record (wick_window_get_selection (w), WICK_RECORD_NONE, -1);
}

/* Setting a rank's offset by hand in the Ranks page and pinning another
 * re-align the page and the timeline. */
static void
check_by_hand (WickWindow *w)
{
  WickRanksPage *page = WICK_RANKS_PAGE (wick_window_get_view (w, "ranks"));
  const WickRankJob *job = wick_ranks_page_get_job (page);
  gint64 before = g_array_index (job->ranks, WickJobRank, 2).offset_ns;
  gint64 gap = (gint64)rank_first_ns (w, 2) - (gint64)rank_first_ns (w, 0);
  GtkWidget *entry = wick_ranks_page_get_offset_entry (page, 2);
  g_autofree char *text = g_strdup_printf ("%.3f", (double)(before + 3000000) / 1e3);
  WickDocument *old = wick_window_get_document (w);

  g_assert_nonnull (entry);
  g_assert_false (gtk_widget_get_sensitive (wick_ranks_page_get_offset_entry (page, 0)));
  /* not an offset: refused where typed, nothing re-aligned */
  gtk_editable_set_text (GTK_EDITABLE (entry), "soon");
  g_signal_emit_by_name (entry, "activate");
  g_assert_true (gtk_widget_has_css_class (entry, "error"));
  g_assert_false (wick_ranks_page_is_realigning (page));
  g_assert_true (wick_ranks_page_get_job (page) == job);

  /* rank 2 3 ms later than the collectives put it (the text in µs) */
  gtk_editable_set_text (GTK_EDITABLE (entry), text);
  g_signal_emit_by_name (entry, "activate");
  g_assert_true (wick_ranks_page_is_realigning (page));
  APP_TEST_WAIT (realigned, w, 60000);
  g_assert_true (wick_window_get_document (w) != old);
  job = wick_ranks_page_get_job (page);
  g_assert_cmpstr (g_array_index (job->ranks, WickJobRank, 2).offset_source, ==, "set");
  g_assert_cmpint (g_array_index (job->ranks, WickJobRank, 2).offset_ns, ==, before + 3000000);
  /* the timeline moved rank 2 by 3 ms against rank 0 (µs text: within 1 µs) */
  g_assert_cmpint (
    ABS ((gint64)rank_first_ns (w, 2) - (gint64)rank_first_ns (w, 0) - gap - 3000000), <=, 1000);

  /* pin rank 1: its clock the reference, its offset 0 */
  old = wick_window_get_document (w);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (wick_ranks_page_get_pin_button (page, 1)), TRUE);
  APP_TEST_WAIT (realigned, w, 60000);
  g_assert_true (wick_window_get_document (w) != old);
  job = wick_ranks_page_get_job (page);
  g_assert_cmpint (job->reference_rank, ==, 1);
  g_assert_cmpint (job->pinned_rank, ==, 1);
  g_assert_cmpint (g_array_index (job->ranks, WickJobRank, 1).offset_ns, ==, 0);
  g_assert_cmpstr (g_array_index (job->ranks, WickJobRank, 2).offset_source, ==, "set");
  g_assert_false (gtk_widget_get_sensitive (wick_ranks_page_get_offset_entry (page, 1)));
  g_assert_true (gtk_check_button_get_active (
    GTK_CHECK_BUTTON (wick_ranks_page_get_pin_button (page, 1))));
}

static void
test_job (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("wick-app-ranks-XXXXXX", NULL);
  g_autofree char *gen = g_build_filename (WICK_SOURCE_DIR, "tools", "make-rank-traces.py", NULL);
  const char *argv_gen[] = { "/usr/bin/python3", gen, tmp,       "--ranks", "4", "--nodes", "2",
                             "--straggler",      "3", "--steps", "3",       NULL };
  int status = 0;
  GFile *files[4];
  WickWindow *w;
  GtkWidget *page;
  const WickRankJob *job;
  const WickProcess *procs;
  guint n;

  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 for tools/make-rank-traces.py");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **)argv_gen, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  w = app_test_window_new (app, 1200, 800);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *name = g_strdup_printf ("rank-%u.json", 3 - i);
      g_autofree char *p = g_build_filename (tmp, name, NULL);
      files[i] = g_file_new_for_path (p);
    }
  wick_window_open_job (w, files, 4);
  APP_TEST_WAIT (app_test_window_is_document, w, 60000);
  page = wick_window_get_view (w, "ranks");
  g_assert_nonnull (page);
  g_assert_true (WICK_IS_RANKS_PAGE (page));
  job = wick_ranks_page_get_job (WICK_RANKS_PAGE (page));
  g_assert_cmpuint (job->ranks->len, ==, 4);
  g_assert_cmpint (g_array_index (job->stragglers, WickJobStraggler, 0).rank, ==, 3);
  /* ranks 2 and 3 are on the second node, > 1 s off */
  g_assert_cmpint (ABS (g_array_index (job->ranks, WickJobRank, 3).offset_ns), >, 1000000000);
  procs = wick_tracks_get_processes (wick_document_get_tracks (wick_window_get_document (w)), &n);
  g_assert_cmpuint (n, ==, 8);
  check_collective_highlight (w);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("rank %u \xc2\xb7 ", i / 2);
      g_assert_true (
        g_str_has_prefix (wick_document_str (wick_window_get_document (w), procs[i].name), prefix));
    }
  wick_window_show_page (w, "ranks");
  app_test_wait_drawn (GTK_WIDGET (w), 20000, "the Ranks page");
  check_by_hand (w);
  APP_TEST_WAIT (no_window_sources, w, 20000);
  app_test_window_close (w);

  /* as File → Open and a drop open them: one new window, the job */
  {
    guint before = g_list_length (gtk_application_get_windows (GTK_APPLICATION (app)));
    wick_application_open_files (app, files, 4, NULL);
    g_assert_cmpuint (g_list_length (gtk_application_get_windows (GTK_APPLICATION (app))), ==,
                      before + 1);
    w = WICK_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
    APP_TEST_WAIT (app_test_window_is_document, w, 60000);
    g_assert_true (WICK_IS_RANKS_PAGE (wick_window_get_view (w, "ranks")));
    APP_TEST_WAIT (no_window_sources, w, 20000);
    app_test_window_close (w);
  }

  /* a .zip of the ranks (and their directory) opens as the same job */
  {
    g_autofree char *zip = g_build_filename (tmp, "job.zip", NULL);
    g_autofree char *script = g_strdup_printf (
      "import zipfile,sys\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
      "    [z.write('%s/rank-%%d.json' %% i, 'job/rank-%%d.json' %% i) for i in range(4)]\n",
      tmp);
    const char *argv_zip[] = { "/usr/bin/python3", "-c", script, zip, NULL };
    const char *inputs[] = { zip, tmp };
    g_assert_true (g_spawn_sync (NULL, (char **)argv_zip, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                                 NULL, &status, NULL));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    for (guint k = 0; k < G_N_ELEMENTS (inputs); k++)
      {
        g_autoptr (GFile) one = g_file_new_for_path (inputs[k]);
        guint before = g_list_length (gtk_application_get_windows (GTK_APPLICATION (app)));
        const WickRankJob *zjob;
        wick_application_open_files (app, &one, 1, NULL);
        g_assert_cmpuint (g_list_length (gtk_application_get_windows (GTK_APPLICATION (app))), ==,
                          before + 1);
        w = WICK_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
        APP_TEST_WAIT (app_test_window_is_document, w, 60000);
        g_assert_true (WICK_IS_RANKS_PAGE (wick_window_get_view (w, "ranks")));
        zjob = wick_ranks_page_get_job (WICK_RANKS_PAGE (wick_window_get_view (w, "ranks")));
        g_assert_cmpuint (zjob->ranks->len, ==, 4);
        g_assert_cmpint (g_array_index (zjob->stragglers, WickJobStraggler, 0).rank, ==, 3);
        if (k == 0)
          g_assert_cmpstr (g_array_index (zjob->ranks, WickJobRank, 2).file, ==,
                           "job.zip/job/rank-2.json");
        APP_TEST_WAIT (no_window_sources, w, 20000);
        app_test_window_close (w);
      }
    g_remove (zip);
  }

  /* one rank broken: a banner names it, nothing else is lost */
  {
    g_autofree char *bad = g_build_filename (tmp, "rank-1.json", NULL);
    g_assert_true (g_file_set_contents (bad, "{\"traceEvents\":[{\"ph\":\"X\",}]}", -1, NULL));
    w = app_test_window_new (app, 1200, 800);
    wick_window_open_job (w, files, 4);
    APP_TEST_WAIT (banner_shown, w, 60000);
    g_assert_false (app_test_window_is_document (w));
    APP_TEST_WAIT (no_window_sources, w, 20000);
    app_test_window_close (w);
  }
  for (guint i = 0; i < 4; i++)
    g_object_unref (files[i]);
  {
    g_autoptr (GDir) d = g_dir_open (tmp, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *p = g_build_filename (tmp, name, NULL);
        g_remove (p);
      }
    g_rmdir (tmp);
  }
}

/* A job of 12 ranks: each a summary row (one process, one counter) and no
 * rank file read until its Loaded box is checked; then that rank alone is
 * on the timeline in full. */
static void
test_many (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("wick-app-ranks-many-XXXXXX", NULL);
  g_autofree char *gen = g_build_filename (WICK_SOURCE_DIR, "tools", "make-rank-traces.py", NULL);
  const char *argv_gen[] = { "/usr/bin/python3", gen, tmp,       "--ranks", "12", "--nodes", "2",
                             "--straggler",      "7", "--steps", "3",       NULL };
  int status = 0;
  GFile *files[12];
  WickWindow *w;
  WickRanksPage *page;
  WickDocument *doc, *old;
  const WickProcess *procs;
  const WickTrack *tracks;
  guint n, nt, nd, counters = 0;

  if (!g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 for tools/make-rank-traces.py");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **)argv_gen, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *name = g_strdup_printf ("rank-%u.json", i);
      g_autofree char *p = g_build_filename (tmp, name, NULL);
      files[i] = g_file_new_for_path (p);
    }
  w = app_test_window_new (app, 1200, 800);
  wick_window_open_job (w, files, 12);
  APP_TEST_WAIT (app_test_window_is_document, w, 60000);
  page = WICK_RANKS_PAGE (wick_window_get_view (w, "ranks"));
  doc = wick_window_get_document (w);
  procs = wick_tracks_get_processes (wick_document_get_tracks (doc), &n);
  tracks = wick_tracks_get_tracks (wick_document_get_tracks (doc), &nt);
  wick_tracks_get_device_slices (wick_document_get_tracks (doc), &nd);
  /* one process a rank, one counter track each, no GPU slice read */
  g_assert_cmpuint (n, ==, 12);
  g_assert_cmpuint (nd, ==, 0);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("rank %u \xc2\xb7 summary", i);
      g_assert_true (g_str_has_prefix (wick_document_str (doc, procs[i].name), prefix));
    }
  for (guint t = 0; t < nt; t++)
    counters += tracks[t].kind == WICK_TRACK_COUNTER;
  g_assert_cmpuint (counters, ==, 12);
  g_assert_false (
    gtk_check_button_get_active (GTK_CHECK_BUTTON (wick_ranks_page_get_load_button (page, 7))));

  /* load rank 7: its processes and kernels, the others still summaries */
  old = doc;
  gtk_check_button_set_active (GTK_CHECK_BUTTON (wick_ranks_page_get_load_button (page, 7)), TRUE);
  APP_TEST_WAIT (realigned, w, 60000);
  doc = wick_window_get_document (w);
  g_assert_true (doc != old);
  procs = wick_tracks_get_processes (wick_document_get_tracks (doc), &n);
  g_assert_cmpuint (n, ==, 13);
  g_assert_cmpuint (rank_first_ns (w, 7), >, 0);
  for (guint i = 0; i < n; i++)
    {
      const char *name = wick_document_str (doc, procs[i].name);
      g_assert_true (g_str_has_prefix (name, "rank 7 ") || strstr (name, " summary") != NULL);
    }
  g_assert_true (
    gtk_check_button_get_active (GTK_CHECK_BUTTON (wick_ranks_page_get_load_button (page, 7))));

  /* a click on rank 3's summary header on the timeline loads rank 3 */
  {
    WickTimelineView *view = WICK_TIMELINE_VIEW (wick_window_get_timeline (w));
    WickTimelineScene *scene;
    WickTimelineViewport vp;
    guint32 p3 = G_MAXUINT32, what;
    gboolean clicked = FALSE;
    for (guint i = 0; i < n; i++)
      if (g_str_has_prefix (wick_document_str (doc, procs[i].name), "rank 3 \xc2\xb7 summary"))
        p3 = i;
    g_assert_cmpuint (p3, !=, G_MAXUINT32);
    app_test_wait_drawn (GTK_WIDGET (view), 20000, "the job's timeline");
    scene = wick_timeline_view_get_scene (view);
    wick_timeline_view_get_viewport (view, &vp);
    for (double y = 0; y < vp.height && !clicked; y += 2)
      if (wick_timeline_scene_hit_gutter (scene, &vp, 20, y, &what) == WICK_TIMELINE_GUTTER_PROCESS
          && what == p3)
        clicked = wick_timeline_view_click (view, 20, y);
    g_assert_true (clicked);
    g_assert_true (wick_ranks_page_is_realigning (page));
    old = doc;
    APP_TEST_WAIT (realigned, w, 60000);
    doc = wick_window_get_document (w);
    g_assert_true (doc != old);
    g_assert_true (
      gtk_check_button_get_active (GTK_CHECK_BUTTON (wick_ranks_page_get_load_button (page, 3))));
    g_assert_cmpuint (rank_first_ns (w, 3), >, 0);
    wick_tracks_get_processes (wick_document_get_tracks (doc), &n);
    g_assert_cmpuint (n, ==, 14);
  }
  APP_TEST_WAIT (no_window_sources, w, 20000);
  app_test_window_close (w);
  for (guint i = 0; i < 12; i++)
    g_object_unref (files[i]);
  {
    g_autoptr (GDir) d = g_dir_open (tmp, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *p = g_build_filename (tmp, name, NULL);
        g_remove (p);
      }
    g_rmdir (tmp);
  }
}

int
main (int argc, char **argv)
{
  if (!app_test_ui_init_display (&argc, &argv))
    return 0;
  app = app_test_ui_app_new ();
  g_test_add_func ("/ranks/open-job", test_job);
  g_test_add_func ("/ranks/many-summary-rows", test_many);
  return g_test_run ();
}
