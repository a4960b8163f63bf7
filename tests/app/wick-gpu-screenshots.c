/* wick-gpu-screenshots.c — the GPU track list of the real app window on
 * torch 2.x traces, as PNGs for docs/gpu.md:
 *
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build/tests/app/wick-gpu-screenshots \
 *     docs/images [WITH_STACK_TRACE]
 *
 *   gpu-with-stack.png   a torch 2.11 eager trace recorded with_stack (its
 *                        39-deep Python stack collapsed, GPU 0 first), when
 *                        WITH_STACK_TRACE is given (it is 7 MB, not kept in
 *                        tests/data: tools/device/make-gpu-data.py makes it)
 *   gpu-collapsed.png    the same trace (else torch-compile.json.gz) with the
 *                        host process collapsed to its busy strip
 *   gpu-annotations.png  torch-multistream.json.gz zoomed on its annotations,
 *                        each nested above the kernels of its stream
 *   gpu-compiled.png     torch-compile.json.gz on its first Torch-Compiled
 *                        Region: the compiled regions outlined, the legend
 *                        of the names on screen
 *   gpu-launch.png       torch-multistream.json.gz: a cudaLaunchKernel
 *                        selected, its arrow followed (]) to the GEMM
 *                        kernel it launched, now selected
 *   gpu-search.png       torch-cudagraph.json.gz: Ctrl+F "gemm", the
 *                        first match selected
 *
 * Not a test: it asserts nothing.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#include "app-test-ui.h"
#include "ui/wick-application.h"
#include "ui/wick-selection.h"
#include "ui/wick-timeline-scene.h"
#include "ui/wick-timeline-scene-private.h"
#include "ui/wick-timeline-view.h"
#include "ui/wick-timeline-view-private.h"
#include "ui/wick-window-internal.h"
#include "ui/wick-window-private.h"

static void
save_window (GtkWidget *window, const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  app_test_save_png (window, path);
  g_print ("wrote %s (%dx%d)\n", path, gtk_widget_get_width (window),
           gtk_widget_get_height (window));
}

static char *
data_path (const char *name)
{
  return g_build_filename (WICK_SOURCE_DIR, "tests", "data", "gpu", name, NULL);
}

/* The view on [@from, @to) of the trace's time, as fractions of its extent. */
static void
show_fraction (WickWindow *w, double from, double to)
{
  GtkWidget *tl = wick_window_get_view (w, "timeline");
  WickTimelineScene *scene = wick_timeline_view_get_scene (WICK_TIMELINE_VIEW (tl));
  guint64 a, b;
  wick_timeline_scene_get_extent (scene, &a, &b);
  wick_selection_set_visible (wick_window_get_selection (w), a + (guint64)((b - a) * from),
                              a + (guint64)((b - a) * to));
}

/* The first device slice named @prefix... and of @kind. */
static gint64
device_slice (WickTracks *tracks, WickDeviceKind kind, const char *prefix)
{
  guint n;
  const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &n);
  for (guint i = 0; i < n; i++)
    if (d[i].kind == kind
        && g_str_has_prefix (wick_tracks_event_name (tracks, (WickEventRef){ WICK_EVENT_DEVICE, i }),
                             prefix))
      return i;
  return -1;
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *with_stack = argc > 2 ? argv[2] : NULL;
  bindtextdomain (GETTEXT_PACKAGE, WICK_BUILD_DIR G_DIR_SEPARATOR_S "po");
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  WickApplication *app = app_test_ui_app_new ();
  app_test_ui_disable_animations ();

  g_autofree char *compile = data_path ("torch-compile.json.gz");
  const char *host_trace = with_stack ? with_stack : compile;
  {
    WickWindow *w = app_test_window_load (app, host_trace, 1400, 860);
    GtkWidget *tl = wick_window_get_view (w, "timeline");
    if (wick_window_get_document (w) != NULL)
      {
        show_fraction (w, 0.30, 0.62);
        app_test_wait_drawn (tl, 20000, "the timeline");
        if (with_stack)
          save_window (GTK_WIDGET (w), dir, "gpu-with-stack.png");
        /* the host process collapsed to its busy strip */
        WickTimelineScene *scene = wick_timeline_view_get_scene (WICK_TIMELINE_VIEW (tl));
        guint n;
        wick_tracks_get_processes (wick_timeline_scene_get_tracks (scene), &n);
        for (guint p = 0; p < n; p++)
          if (!wick_timeline_scene_process_is_gpu (scene, p))
            wick_timeline_scene_set_collapsed (scene, p, TRUE);
        /* a rebuild of the scene keeps what the user collapsed */
        wick_timeline_view_document_changed (WICK_TIMELINE_VIEW (tl));
        app_test_wait_drawn (tl, 20000, "the timeline");
        save_window (GTK_WIDGET (w), dir, "gpu-collapsed.png");
      }
    app_test_window_close (w);
  }
  {
    g_autofree char *path = data_path ("torch-multistream.json.gz");
    WickWindow *w = app_test_window_load (app, path, 1400, 860);
    WickDocument *doc = wick_window_get_document (w);
    if (doc != NULL)
      {
        WickTracks *tracks = wick_document_get_tracks (doc);
        gint64 a = device_slice (tracks, WICK_DEVICE_ANNOTATION, "two_streams");
        GtkWidget *tl = wick_window_get_view (w, "timeline");
        if (a >= 0)
          {
            WickEventRef ref = { WICK_EVENT_DEVICE, (guint32)a };
            guint64 s = wick_tracks_event_start (tracks, ref), e = wick_tracks_event_end (tracks, ref);
            guint64 pad = MAX ((e - s) * 2, 1000);
            wick_selection_set_visible (wick_window_get_selection (w), s > pad ? s - pad : 0,
                                        e + pad * 8);
            wick_selection_set_record_event (wick_window_get_selection (w), WICK_RECORD_NONE, -1,
                                             WICK_EVENT_DEVICE, a);
          }
        app_test_wait_drawn (tl, 20000, "the timeline");
        save_window (GTK_WIDGET (w), dir, "gpu-annotations.png");
      }
    app_test_window_close (w);
  }
  {
    /* torch.compile: a Dynamo frame ("Torch-Compiled Region") and the
     * Inductor graph call over Triton kernels, outlined as compiled */
    WickWindow *w = app_test_window_load (app, compile, 1400, 860);
    WickDocument *doc = wick_window_get_document (w);
    if (doc != NULL)
      {
        guint n;
        const WickSpan *spans = wick_document_get_spans (doc, &n);
        for (guint i = 0; i < n; i++)
          if (g_str_has_prefix (wick_document_str (doc, spans[i].name), "Torch-Compiled Region"))
            {
              guint64 pad = spans[i].duration_ns / 20;
              wick_selection_set_visible (wick_window_get_selection (w), spans[i].start_ns - pad,
                                          spans[i].start_ns + spans[i].duration_ns + pad);
              break;
            }
        GtkWidget *tl = wick_window_get_view (w, "timeline");
        app_test_wait_drawn (tl, 20000, "the timeline");
        save_window (GTK_WIDGET (w), dir, "gpu-compiled.png");
      }
    app_test_window_close (w);
  }
  {
    /* a launch clicked, then its arrow followed (]) to the kernel it
     * launched: the torch 2.11 multi-stream trace's first cudaLaunchKernel
     * of a GEMM on a side stream */
    g_autofree char *path = data_path ("torch-multistream.json.gz");
    WickWindow *w = app_test_window_load (app, path, 1400, 860);
    WickDocument *doc = wick_window_get_document (w);
    if (doc != NULL)
      {
        WickTracks *tracks = wick_document_get_tracks (doc);
        guint nd;
        const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &nd);
        const WickSpan *spans = wick_document_get_spans (doc, NULL);
        GtkWidget *tl = wick_window_get_view (w, "timeline");
        for (guint i = 0; i < nd; i++)
          if (d[i].kind == WICK_DEVICE_KERNEL && d[i].launcher != G_MAXUINT32
              && strstr (wick_document_str (doc, d[i].name), "gemm") != NULL)
            {
              const WickSpan *launch = &spans[d[i].launcher];
              guint64 s = launch->start_ns, e = d[i].start_ns + d[i].duration_ns;
              guint64 pad = MAX ((e - s) / 3, 1000);
              wick_selection_set_visible (wick_window_get_selection (w), s > pad ? s - pad : 0,
                                          e + pad);
              wick_selection_set_record (wick_window_get_selection (w), WICK_RECORD_SPAN,
                                         d[i].launcher);
              app_test_wait_drawn (tl, 20000, "the timeline");
              wick_timeline_view_follow_flow (WICK_TIMELINE_VIEW (tl), 1);
              app_test_wait_drawn (tl, 20000, "the timeline");
              save_window (GTK_WIDGET (w), dir, "gpu-launch.png");
              break;
            }
      }
    app_test_window_close (w);
  }
  {
    /* Ctrl+F "gemm" in the torch 2.11 CUDA-graph trace: the first of its
     * GEMM kernels selected */
    g_autofree char *path = data_path ("torch-cudagraph.json.gz");
    WickWindow *w = app_test_window_load (app, path, 1400, 860);
    if (wick_window_get_document (w) != NULL)
      {
        wick_window_search (w, "gemm");
        wick_window_step_match (w, 1);
        app_test_wait_drawn (wick_window_get_view (w, "timeline"), 20000, "the timeline");
        save_window (GTK_WIDGET (w), dir, "gpu-search.png");
      }
    app_test_window_close (w);
  }
  g_object_unref (app);
  return 0;
}
