/* wick-screenshots.c — renders the real app window on the example trace into
 * PNGs for docs/images and the AppStream metainfo:
 *
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build-app/tests/app/wick-screenshots docs/images
 *
 * One image per view (timeline with a selected span and a range, memory with
 * the hover readout, coverage, health, costs), the welcome page, and the
 * timeline in dark mode. Not a test: it asserts nothing. With LANGUAGE=de (and
 * LANG=C.UTF-8 or a German locale) the same shots in German.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-costs-page.h"
#include "ui/wick-costs-page-private.h"
#include "ui/wick-details-pane.h"
#include "ui/wick-details-pane-private.h"
#include "ui/wick-memory-view.h"
#include "ui/wick-memory-view-private.h"
#include "ui/wick-ranks-page.h"
#include "ui/wick-ranks-page-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-window-internal.h"
#include "ui/wick-window-private.h"

/* The window once laid out and drawn (the shared helper waits for that, not
 * for a time), as a PNG. */
static void
save_window (GtkWidget *window, const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  app_test_save_png (window, path);
  g_print ("wrote %s (%dx%d)\n", path, gtk_widget_get_width (window),
           gtk_widget_get_height (window));
}

static gboolean
range_summarised (gpointer details)
{
  return wick_details_pane_get_range_rows (WICK_DETAILS_PANE (details)) > 0;
}

static gboolean
range_cleared (gpointer details)
{
  return wick_details_pane_get_range_rows (WICK_DETAILS_PANE (details)) == 0;
}

static gint32
find_named (WickDocument *document, const char *name, guint nth)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (wick_document_str (document, spans[i].name), name) == 0 && nth-- == 0)
      return i;
  return -1;
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  /* The build's catalogs, as the app run from the build tree reads them:
   * LANGUAGE=de gives the German shots. */
  bindtextdomain (GETTEXT_PACKAGE, WICK_BUILD_DIR G_DIR_SEPARATOR_S "po");
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();

  WickWindow *welcome = wick_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (welcome), 1400, 860);
  gtk_window_present (GTK_WINDOW (welcome));
  save_window (GTK_WIDGET (welcome), dir, "welcome.png");
  gtk_window_destroy (GTK_WINDOW (welcome));

  g_autofree char *path = app_test_example_path ();
  WickWindow *window = app_test_window_open (app, path, 1400, 860);

  WickDocument *document = wick_window_get_document (window);
  WickSelection *selection = wick_window_get_selection (window);
  const WickSpan *spans = wick_document_get_spans (document, NULL);
  gint32 step3 = find_named (document, "train_step", 2);
  gint32 step4 = find_named (document, "train_step", 3);
  guint64 start = spans[step3].start_ns - 20000;
  guint64 end = spans[step4].start_ns + spans[step4].duration_ns + 20000;
  wick_selection_set_visible (selection, start, end);
  gint32 backward = find_named (document, "backward", 2);
  wick_selection_set_range (selection, spans[backward].start_ns,
                            spans[backward].start_ns + spans[backward].duration_ns);
  wick_selection_set_record (selection, WICK_RECORD_SPAN, find_named (document, "Linear[fc2]", 2));
  wick_selection_set_visible (selection, start, end);
  GtkWidget *timeline = wick_window_get_view (window, "timeline");
  /* The hover line at 62 % of the laid-out width; the range summary is
   * computed once the range rests. */
  app_test_wait_drawn (timeline, 20000, "the timeline");
  APP_TEST_WAIT (range_summarised, wick_window_get_view (window, "details"), 20000);
  wick_timeline_view_set_hover (WICK_TIMELINE_VIEW (timeline),
                                gtk_widget_get_width (timeline) * 0.62);
  save_window (GTK_WIDGET (window), dir, "timeline.png");
  wick_timeline_view_set_hover (WICK_TIMELINE_VIEW (timeline), -1);

  wick_window_search (window, "matmul");
  save_window (GTK_WIDGET (window), dir, "search.png");
  wick_window_search (window, NULL);

  wick_window_show_page (window, "memory");
  guint64 full_start, full_end;
  WickTimelineScene *scene
    = wick_timeline_view_get_scene (WICK_TIMELINE_VIEW (wick_window_get_view (window, "timeline")));
  wick_timeline_scene_get_extent (scene, &full_start, &full_end);
  wick_selection_set_visible (selection, full_start, full_end + (full_end - full_start) / 50);
  wick_selection_set_range (selection, 0, 0);
  GtkWidget *memory = wick_window_get_view (window, "memory");
  app_test_wait_drawn (memory, 20000, "the memory chart");
  /* The range summary goes once the cleared range rests (a timer): the
   * shot shows the record alone, whatever the machine's speed. */
  APP_TEST_WAIT (range_cleared, wick_window_get_view (window, "details"), 20000);
  wick_memory_view_set_hover (WICK_MEMORY_VIEW (memory), gtk_widget_get_width (memory) * 0.42);
  save_window (GTK_WIDGET (window), dir, "memory.png");
  wick_memory_view_set_hover (WICK_MEMORY_VIEW (memory), -1);

  wick_window_show_page (window, "coverage");
  wick_selection_set_record (selection, WICK_RECORD_GRADIENT, 3);
  save_window (GTK_WIDGET (window), dir, "coverage.png");

  /* Health: a trace with instrumentation mistakes (tests/app/data). */
  g_autofree char *faulty_path
    = g_build_filename (WICK_SOURCE_DIR, "tests", "app", "data", "faulty-trace.jsonl", NULL);
  WickWindow *faulty = app_test_window_open (app, faulty_path, 1400, 860);
  wick_window_show_page (faulty, "health");
  const WickHealthIssue *issues
    = wick_document_get_health (wick_window_get_document (faulty), NULL);
  wick_selection_set_record (wick_window_get_selection (faulty), issues[1].record_type,
                             issues[1].record_index);
  wick_window_show_page (faulty, "health");
  save_window (GTK_WIDGET (faulty), dir, "health.png");
  gtk_window_destroy (GTK_WINDOW (faulty));

  wick_window_show_page (window, "costs");
  wick_selection_set_record (selection, WICK_RECORD_SPAN, find_named (document, "matmul", 5));
  save_window (GTK_WIDGET (window), dir, "costs.png");
  /* every step with its index, the measured one marked */
  wick_costs_page_show_table (WICK_COSTS_PAGE (wick_window_get_view (window, "costs")), "steps");
  save_window (GTK_WIDGET (window), dir, "costs-steps.png");
  wick_costs_page_show_table (WICK_COSTS_PAGE (wick_window_get_view (window, "costs")), "spans");

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_DARK);
  wick_window_show_page (window, "timeline");
  wick_selection_set_visible (selection, full_start, full_end);
  wick_selection_set_record (selection, WICK_RECORD_SPAN,
                             find_named (document, "optimizer_step", 4));
  save_window (GTK_WIDGET (window), dir, "timeline-dark.png");

  gtk_window_destroy (GTK_WINDOW (window));
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      ADW_COLOR_SCHEME_FORCE_LIGHT);

  /* The track list: a multi-threaded PyTorch trace (main and autograd
   * threads, a GPU stream) with the launch -> kernel flow of a selected
   * op, and a trace written by wick-demo (its main and data-loader
   * threads) when WICK_SCREENSHOT_DEMO names one. */
  const char *pytorch = g_getenv ("WICK_SCREENSHOT_PYTORCH");
  g_autofree char *default_pytorch
    = g_build_filename (WICK_SOURCE_DIR, "tests", "data", "chrome", "hta-amd-mi250.json.gz", NULL);
  const char *traces[][2] = { { pytorch ? pytorch : default_pytorch, "timeline-pytorch.png" },
                              { g_getenv ("WICK_SCREENSHOT_DEMO"), "timeline-demo.png" } };
  for (guint t = 0; t < G_N_ELEMENTS (traces); t++)
    {
      if (traces[t][0] == NULL)
        continue;
      WickWindow *w = app_test_window_load (app, traces[t][0], 1400, 860);
      WickDocument *doc = wick_window_get_document (w);
      if (doc == NULL)
        {
          g_printerr ("%s did not open; %s not written\n", traces[t][0], traces[t][1]);
          app_test_window_close (w);
          continue;
        }
      /* Select the first span with an outgoing flow (a kernel launch). */
      WickTracks *tracks = wick_document_get_tracks (doc);
      guint n;
      wick_document_get_spans (doc, &n);
      for (guint i = 0; i < n; i++)
        {
          WickEventRef ref = { WICK_EVENT_SLICE, i };
          guint32 flow;
          if (wick_tracks_event_flows (tracks, ref, &flow, 1) > 0
              && g_str_has_prefix (wick_tracks_event_name (tracks, ref), "cuda"))
            {
              wick_selection_set_record (wick_window_get_selection (w), WICK_RECORD_SPAN, i);
              break;
            }
        }
      GtkWidget *tl = wick_window_get_view (w, "timeline");
      app_test_wait_drawn (tl, 20000, "the timeline");
      wick_timeline_view_set_hover (WICK_TIMELINE_VIEW (tl), gtk_widget_get_width (tl) * 0.55);
      save_window (GTK_WIDGET (w), dir, traces[t][1]);
      app_test_window_close (w);
    }

  /* gpu-launch.png and gpu-search.png: tests/app/wick-gpu-screenshots.c */
  /* A job of 8 ranks (tools/make-rank-traces.py: two nodes, clocks off by
   * ms and the second node by > 1 s, rank 5 the straggler) opened as one:
   * the aligned timeline and the Ranks page. */
  {
    g_autofree char *tmp = g_dir_make_tmp ("wick-shot-ranks-XXXXXX", NULL);
    g_autofree char *gen = g_build_filename (WICK_SOURCE_DIR, "tools", "make-rank-traces.py", NULL);
    const char *argv_gen[] = { "/usr/bin/python3", gen, tmp, "--steps", "4", NULL };
    int status = 0;
    if (tmp != NULL
        && g_spawn_sync (NULL, (char **)argv_gen, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                         &status, NULL)
        && g_spawn_check_wait_status (status, NULL))
      {
        GFile *files[8];
        WickWindow *w = wick_window_new (GTK_APPLICATION (app));
        gtk_window_set_default_size (GTK_WINDOW (w), 1400, 990);
        gtk_window_present (GTK_WINDOW (w));
        for (guint i = 0; i < 8; i++)
          {
            g_autofree char *name = g_strdup_printf ("rank-%u.json", i);
            g_autofree char *p = g_build_filename (tmp, name, NULL);
            files[i] = g_file_new_for_path (p);
          }
        wick_window_open_job (w, files, 8);
        for (guint i = 0; i < 8; i++)
          g_object_unref (files[i]);
        app_test_wait_until (app_test_window_is_document, w, 60000, "the 8-rank job");
        GtkWidget *tl = wick_window_get_view (w, "timeline");
        /* the world group's last collectives of step 0: their kernels end
         * together on every rank once the clocks are aligned */
        wick_selection_set_visible (wick_window_get_selection (w), 8000000, 14000000);
        {
          /* each rank's host process collapsed to its header, so that all
           * eight ranks' GPU streams fit */
          WickTimelineScene *sc = wick_timeline_view_get_scene (WICK_TIMELINE_VIEW (tl));
          guint np;
          wick_tracks_get_processes (wick_document_get_tracks (wick_window_get_document (w)), &np);
          for (guint p = 0; p < np; p += 2)
            wick_timeline_scene_set_collapsed (sc, p, TRUE);
        }
        app_test_wait_drawn (tl, 20000, "the job's timeline");
        save_window (GTK_WIDGET (w), dir, "ranks-timeline.png");
        {
          /* a world all-reduce's kernel selected on rank 0: its kernels on
           * the seven other ranks outlined */
          WickDocument *doc = wick_window_get_document (w);
          WickTracks *tracks = wick_document_get_tracks (doc);
          const WickDeviceSlice *ds;
          const WickTrack *tr;
          const WickProcess *procs;
          guint nd, nt, np;
          ds = wick_tracks_get_device_slices (tracks, &nd);
          tr = wick_tracks_get_tracks (tracks, &nt);
          procs = wick_tracks_get_processes (tracks, &np);
          for (guint i = 0; i < nd; i++)
            {
              const char *args = wick_document_str (doc, ds[i].args);
              if (args != NULL && g_str_has_prefix (args, "{\"wick_collective\":")
                  && strstr (args, "\"Process Group Name\": \"0\"") != NULL
                  && ds[i].start_ns >= 12000000 && ds[i].start_ns < 14000000
                  && g_str_has_prefix (wick_document_str (doc, procs[tr[ds[i].track].process].name),
                                       "rank 0 "))
                {
                  wick_selection_set_record_event (wick_window_get_selection (w),
                                                   ds[i].source >= 0
                                                     ? WICK_RECORD_DEVICE_INTERVAL
                                                     : WICK_RECORD_NONE,
                                                   ds[i].source, WICK_EVENT_DEVICE, i);
                  break;
                }
            }
          app_test_wait_drawn (tl, 20000, "the selected collective");
          save_window (GTK_WIDGET (w), dir, "ranks-collective.png");
          wick_selection_set_record (wick_window_get_selection (w), WICK_RECORD_NONE, -1);
        }
        wick_window_show_page (w, "ranks");
        save_window (GTK_WIDGET (w), dir, "ranks.png");
        app_test_window_close (w);
      }
    else
      g_printerr ("tools/make-rank-traces.py did not run; ranks.png not written\n");
  }

  /* A job of 16 ranks: one summary row each (GPU busy per step), rank 5,
   * the straggler, loaded in full from the Ranks page. */
  {
    g_autofree char *tmp = g_dir_make_tmp ("wick-shot-ranks16-XXXXXX", NULL);
    g_autofree char *gen = g_build_filename (WICK_SOURCE_DIR, "tools", "make-rank-traces.py", NULL);
    const char *argv_gen[] = { "/usr/bin/python3", gen, tmp, "--ranks", "16", "--nodes", "2",
                               "--steps", "6", NULL };
    int status = 0;
    if (tmp != NULL
        && g_spawn_sync (NULL, (char **)argv_gen, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                         &status, NULL)
        && g_spawn_check_wait_status (status, NULL))
      {
        GFile *files[16];
        WickWindow *w = wick_window_new (GTK_APPLICATION (app));
        WickRanksPage *page;
        WickDocument *before;
        gtk_window_set_default_size (GTK_WINDOW (w), 1400, 990);
        gtk_window_present (GTK_WINDOW (w));
        for (guint i = 0; i < 16; i++)
          {
            g_autofree char *name = g_strdup_printf ("rank-%u.json", i);
            g_autofree char *p = g_build_filename (tmp, name, NULL);
            files[i] = g_file_new_for_path (p);
          }
        wick_window_open_job (w, files, 16);
        for (guint i = 0; i < 16; i++)
          g_object_unref (files[i]);
        app_test_wait_until (app_test_window_is_document, w, 60000, "the 16-rank job");
        page = WICK_RANKS_PAGE (wick_window_get_view (w, "ranks"));
        before = wick_window_get_document (w);
        gtk_check_button_set_active (GTK_CHECK_BUTTON (wick_ranks_page_get_load_button (page, 5)),
                                     TRUE);
        while (wick_ranks_page_is_realigning (page) || wick_window_get_document (w) == before
               || !app_test_window_is_document (w))
          g_main_context_iteration (NULL, TRUE);
        {
          /* rank 5's host process collapsed to its header, its GPU in full */
          WickTimelineScene *sc
            = wick_timeline_view_get_scene (WICK_TIMELINE_VIEW (wick_window_get_view (w, "timeline")));
          WickDocument *doc = wick_window_get_document (w);
          guint np;
          const WickProcess *procs
            = wick_tracks_get_processes (wick_document_get_tracks (doc), &np);
          for (guint p = 0; p < np; p++)
            if (strstr (wick_document_str (doc, procs[p].name), "python") != NULL)
              wick_timeline_scene_set_collapsed (sc, p, TRUE);
        }
        app_test_wait_drawn (wick_window_get_view (w, "timeline"), 20000, "the 16-rank timeline");
        save_window (GTK_WIDGET (w), dir, "ranks-summary.png");
        app_test_window_close (w);
      }
    else
      g_printerr ("tools/make-rank-traces.py did not run; ranks-summary.png not written\n");
  }

  app_test_iterate_pending (2000);
  g_object_unref (app);
  return 0;
}
