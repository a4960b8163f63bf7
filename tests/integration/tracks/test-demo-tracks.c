/* test-demo-tracks.c — wick-demo's saved trace on the track model: the main
 * thread and its data-loader thread on two named slices tracks (libwick's
 * wick_thread records and span fields, read by app/model). Argument 1 is the
 * wick-demo binary. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "wick-document.h"
#include "wick-tracks.h"

static const char *demo;

static void
test_demo_threads (void)
{
  g_autofree char *dir = g_dir_make_tmp ("wick-tracks-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "demo.jsonl", NULL);
  const char *argv[] = { demo, "--steps", "4", "--trace", path, "--quiet", NULL };
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));

  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_assert_true (wick_document_load_file (doc, path, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  WickTracks *t = wick_document_get_tracks (doc);
  guint n_tracks, n_threads, slices = 0;
  const WickTrack *tracks = wick_tracks_get_tracks (t, &n_tracks);
  const WickThread *threads = wick_tracks_get_threads (t, &n_threads);
  gboolean loader = FALSE;
  guint total = 0;
  for (guint i = 0; i < n_tracks; i++)
    if (tracks[i].kind == WICK_TRACK_SLICES)
      {
        slices++;
        total += tracks[i].n_events;
        g_assert_cmpint (tracks[i].thread, >=, 0);
        g_assert_cmpuint (tracks[i].name, !=, 0);
        g_assert_cmpint (threads[tracks[i].thread].tid, >, 0); /* an OS tid */
        loader |= g_strcmp0 (wick_document_str (doc, tracks[i].name), "data_loader") == 0;
        g_assert_cmpuint (tracks[i].n_events, >, 0);
      }
  g_assert_cmpuint (slices, ==, 2);
  g_assert_true (loader);
  guint n_spans;
  wick_document_get_spans (doc, &n_spans);
  g_assert_cmpuint (total, ==, n_spans);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  demo = argc > 1 ? argv[1] : g_getenv ("WICK_DEMO");
  if (demo == NULL)
    {
      g_printerr ("usage: test-demo-tracks WICK_DEMO\n");
      return 1;
    }
  g_test_add_func ("/tracks/demo-threads", test_demo_threads);
  return g_test_run ();
}
