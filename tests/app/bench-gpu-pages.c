/* bench-gpu-pages.c — how long the GPU pages take to appear on a trace of
 * WICK_BENCH_KERNELS kernels (default 1 000 000), against the Costs page
 * filled from the same document in the same run (what the window already
 * did before these pages existed).
 *
 * The trace, built through the track model's builder as the Chrome importer
 * builds a PyTorch profiler trace: one host thread with 100 ProfilerStep#N
 * steps, in each cpu_op slices (40 operator names) holding
 * cudaLaunchKernel runtime calls (one per kernel, a correlation id each),
 * a 4 µs gap between launches; every kernel (200 names, grid/block/
 * registers args as Kineto writes them) on one of two streams of cuda:0,
 * 8 µs after its launch, a memcpy every 50 kernels.
 *
 * Measured, RUNS times each (min–max and median):
 *   finish     the track model built from the builder's events (the load's
 *              last step, as a baseline of what a load costs);
 *   analysis   wick_gpu_analysis_get () from scratch (on the loading thread
 *              in the app, before the document is shown);
 *   shown      the three pages given the document while another page (the
 *              timeline) is in front, on the main thread: what the window
 *              adds when it shows the document (the budget: 100 ms);
 *   kernels, overview, operators
 *              each page shown for the first time until drawn (its table
 *              built then);
 *   costs      the Costs page given the same document while in front, until
 *              drawn (the baseline: what the window did before);
 *   instances  a Kernels row's instances (the top kernel), when selected;
 *   range      the range summary's GPU time of one range (all devices).
 * WICK_BENCH_ANALYSIS_ONLY=1 stops after the analysis (to profile it).
 * Needs a display (xvfb-run). Not a test: it prints and asserts nothing but
 * that the pages are filled.
 */
#include "config.h"

#include <adwaita.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app-test-ui.h"
#include "model/wick-gpu-analysis.h"
#include "model/wick-tracks.h"
#include "model/wick-tracks-private.h"
#include "ui/wick-costs-page.h"
#include "ui/wick-costs-page-private.h"
#include "ui/wick-gpu-pages.h"
#include "ui/wick-gpu-pages-private.h"
#include "ui/wick-table.h"
#include "ui/wick-table-private.h"

#define RUNS 5

static double now_ms (void);

static WickDocument *
build (guint64 n_kernels, double *finish_ms)
{
  WickDocument *doc = wick_document_new ();
  WickTracks *t = wick_document_begin_tracks (doc, WICK_TRACE_FORMAT_CHROME);
  guint32 host = wick_tracks_add_process (t, 1);
  wick_tracks_set_process_name (t, host, wick_tracks_intern (t, "python3", 7));
  guint32 thread = wick_tracks_add_thread (t, host, 1);
  guint32 gpu = wick_tracks_add_process (t, 0);
  guint32 streams[2];
  WickStr dev = wick_tracks_intern (t, "cuda:0", 6);
  for (guint s = 0; s < 2; s++)
    {
      guint32 st = wick_tracks_add_thread (t, gpu, 7 + s);
      char sname[16], full[32];
      g_snprintf (sname, sizeof sname, "%u", 7 + s);
      g_snprintf (full, sizeof full, "cuda:0 stream %u", 7 + s);
      streams[s] = wick_tracks_thread_device_track (t, st, dev, wick_tracks_intern (t, sname, strlen (sname)),
                                                    wick_tracks_intern (t, full, strlen (full)));
      wick_tracks_set_thread_device_track (t, st, streams[s]);
    }
  WickStr kernel_names[200], kernel_args[200] = { 0 }, op_names[40];
  for (guint i = 0; i < 200; i++)
    {
      g_autofree char *n = g_strdup_printf ("void at::native::bench_kernel_%u<float, 4>(int, float*)", i);
      kernel_names[i] = wick_tracks_intern (t, n, strlen (n));
    }
  for (guint i = 0; i < 40; i++)
    {
      g_autofree char *n = g_strdup_printf ("aten::op_%u", i);
      op_names[i] = wick_tracks_intern (t, n, strlen (n));
    }
  WickStr cat_kernel = wick_tracks_intern (t, "kernel", 6);
  WickStr cat_memcpy = wick_tracks_intern (t, "gpu_memcpy", 10);
  WickStr cat_op = wick_tracks_intern (t, "cpu_op", 6);
  WickStr cat_rt = wick_tracks_intern (t, "cuda_runtime", 12);
  WickStr cat_user = wick_tracks_intern (t, "user_annotation", 15);
  WickStr launch = wick_tracks_intern (t, "cudaLaunchKernel", 16);
  WickStr copy = wick_tracks_intern (t, "cudaMemcpyAsync", 15);
  WickStr memcpy_name = wick_tracks_intern (t, "Memcpy HtoD (Pageable -> Device)", 32);
  guint64 per_step = MAX (n_kernels / 100, 1), per_op = 25;
  gint64 ts = 1000000;
  gint64 correlation = 1;
  guint64 k = 0;
  for (guint step = 0; k < n_kernels; step++)
    {
      guint64 in_step = MIN (per_step, n_kernels - k);
      gint64 step_start = ts;
      gint64 step_dur = (gint64)((in_step + per_op - 1) / per_op) * (gint64)(per_op * 4000 + 2000) + 2000;
      g_autofree char *sname = g_strdup_printf ("ProfilerStep#%u", step);
      wick_tracks_slice_complete (t, thread, step_start, step_dur,
                                  wick_tracks_intern (t, sname, strlen (sname)), cat_user, 0);
      ts += 1000;
      for (guint64 done = 0; done < in_step;)
        {
          guint64 n = MIN (per_op, in_step - done);
          gint64 op_start = ts;
          wick_tracks_slice_complete (t, thread, op_start, (gint64)n * 4000 + 1000,
                                      op_names[(k / per_op) % 40], cat_op, 0);
          ts += 500;
          for (guint64 i = 0; i < n; i++, k++, done++)
            {
              gboolean is_copy = k % 50 == 49;
              WickPendingSlice s = wick_tracks_slice_complete (t, thread, ts, 3000,
                                                               is_copy ? copy : launch, cat_rt, 0);
              wick_tracks_slice_set_correlation (t, s, correlation);
              guint name = (guint)((k * 7919) % 200);
              if (kernel_args[name] == 0)
                {
                  g_autofree char *args = g_strdup_printf (
                    "{\"device\": 0, \"stream\": 7, \"registers per thread\": %u, "
                    "\"blocks per SM\": 0.030303, \"grid\": [%u, 1, 1], \"block\": [256, 1, 1]}",
                    16 + name % 64, 1 + name);
                  kernel_args[name] = wick_tracks_intern (t, args, strlen (args));
                }
              wick_tracks_device_add_correlated (
                t, streams[k % 2], ts + 8000, is_copy ? 1500 : 1000 + (gint64)(name * 13) % 2500,
                is_copy ? memcpy_name : kernel_names[name], is_copy ? cat_memcpy : cat_kernel,
                is_copy ? 0 : kernel_args[name], correlation);
              correlation++;
              ts += 4000;
            }
          ts += 500;
        }
      ts = step_start + step_dur;
    }
  double t0 = now_ms ();
  wick_tracks_finish (t);
  *finish_ms = now_ms () - t0;
  return doc;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
report (const char *what, double *ms, guint n)
{
  qsort (ms, n, sizeof (double), compare_double);
  printf ("%-10s min %9.2f  median %9.2f  max %9.2f ms\n", what, ms[0], ms[n / 2], ms[n - 1]);
}

/* CPU time of this process, ms: the machine the benchmark runs on is
 * shared (load averages of 10-20 on two cores), so wall time measures the
 * neighbours; WICK_BENCH_WALL=1 for wall time. */
static double
now_ms (void)
{
  if (g_getenv ("WICK_BENCH_WALL"))
    return g_get_monotonic_time () / 1000.0;
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

int
main (int argc, char **argv)
{
  gtk_init ();
  adw_init ();
  const char *env = g_getenv ("WICK_BENCH_KERNELS");
  guint64 n = env ? g_ascii_strtoull (env, NULL, 10) : 1000000;
  /* WICK_BENCH_ANALYSIS_ONLY=1: the track model and the analysis only (to
   * profile the analysis) */
  gboolean analysis_only = g_getenv ("WICK_BENCH_ANALYSIS_ONLY") != NULL;
  double finish[RUNS], analysis[RUNS], shown[RUNS], first_kernels[RUNS], first_overview[RUNS],
    first_operators[RUNS], costs[RUNS], instances[RUNS], range[RUNS];
  WickSelection *selection = wick_selection_new ();
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 860);
  GtkWidget *stack = gtk_stack_new ();
  gtk_window_set_child (GTK_WINDOW (window), stack);
  GtkWidget *overview = wick_gpu_overview_page_new (selection);
  GtkWidget *kernels = wick_gpu_table_page_new (selection, WICK_GPU_TABLE_KERNELS);
  GtkWidget *operators = wick_gpu_table_page_new (selection, WICK_GPU_TABLE_OPERATORS);
  GtkWidget *cost_page = wick_costs_page_new (selection);
  GtkWidget *front = gtk_label_new ("timeline");
  gtk_stack_add_named (GTK_STACK (stack), front, "front");
  gtk_stack_add_named (GTK_STACK (stack), kernels, "kernels");
  gtk_stack_add_named (GTK_STACK (stack), overview, "overview");
  gtk_stack_add_named (GTK_STACK (stack), operators, "operators");
  gtk_stack_add_named (GTK_STACK (stack), cost_page, "costs");
  gtk_window_present (GTK_WINDOW (window));
  app_test_wait_drawn (window, 20000, "the window");
  guint64 n_device = 0;
  for (guint r = 0; r < RUNS; r++)
    {
      WickDocument *doc = build (n, &finish[r]);
      double t0 = now_ms ();
      const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
      analysis[r] = now_ms () - t0;
      n_device = a->n_device;
      if (analysis_only)
        {
          g_object_unref (doc);
          continue;
        }

      /* the document shown with the timeline in front: the pages are told */
      gtk_stack_set_visible_child_name (GTK_STACK (stack), "front");
      app_test_wait_drawn (front, 20000, "the front page");
      t0 = now_ms ();
      wick_gpu_overview_page_set_document (WICK_GPU_OVERVIEW_PAGE (overview), doc);
      wick_gpu_table_page_set_document (WICK_GPU_TABLE_PAGE (kernels), doc);
      wick_gpu_table_page_set_document (WICK_GPU_TABLE_PAGE (operators), doc);
      shown[r] = now_ms () - t0;
      /* then each page shown for the first time, until drawn */
      gtk_stack_set_visible_child_name (GTK_STACK (stack), "kernels");
      t0 = now_ms ();
      app_test_wait_drawn (kernels, 20000, "the Kernels page");
      first_kernels[r] = now_ms () - t0;
      g_assert_cmpuint (
        wick_table_get_n_shown (wick_gpu_table_page_get_table (WICK_GPU_TABLE_PAGE (kernels))), ==,
        a->kernels->len);
      gtk_stack_set_visible_child_name (GTK_STACK (stack), "overview");
      t0 = now_ms ();
      app_test_wait_drawn (overview, 20000, "the Overview");
      first_overview[r] = now_ms () - t0;
      gtk_stack_set_visible_child_name (GTK_STACK (stack), "operators");
      t0 = now_ms ();
      app_test_wait_drawn (operators, 20000, "the Operators page");
      first_operators[r] = now_ms () - t0;

      gtk_stack_set_visible_child_name (GTK_STACK (stack), "costs");
      t0 = now_ms ();
      wick_costs_page_set_document (WICK_COSTS_PAGE (cost_page), doc);
      app_test_wait_drawn (cost_page, 20000, "the Costs page");
      costs[r] = now_ms () - t0;

      t0 = now_ms ();
      g_autoptr (GArray) refs = wick_gpu_table_page_get_instances (WICK_GPU_TABLE_PAGE (kernels), 0);
      instances[r] = now_ms () - t0;
      g_assert_cmpuint (refs->len, ==, g_array_index (a->kernels, WickGpuKernel, 0).count);

      WickGpuRangeTime rt[4];
      WickTracks *tracks = wick_document_get_tracks (doc);
      guint64 s = wick_tracks_get_start_ns (tracks), e = wick_tracks_get_end_ns (tracks);
      t0 = now_ms ();
      wick_gpu_analysis_range (a, s + (e - s) / 3, s + 2 * (e - s) / 3, rt);
      range[r] = now_ms () - t0;
      g_assert_cmpuint (rt[0].busy_ns, >, 0);

      wick_gpu_overview_page_set_document (WICK_GPU_OVERVIEW_PAGE (overview), NULL);
      wick_gpu_table_page_set_document (WICK_GPU_TABLE_PAGE (kernels), NULL);
      wick_gpu_table_page_set_document (WICK_GPU_TABLE_PAGE (operators), NULL);
      wick_costs_page_set_document (WICK_COSTS_PAGE (cost_page), NULL);
      g_object_unref (doc);
    }
  printf ("%" G_GUINT64_FORMAT " kernels (%" G_GUINT64_FORMAT " device slices), %d runs\n", n,
          n_device, RUNS);
  report ("finish", finish, RUNS);
  report ("analysis", analysis, RUNS);
  if (analysis_only)
    return 0;
  report ("shown", shown, RUNS);
  report ("kernels", first_kernels, RUNS);
  report ("overview", first_overview, RUNS);
  report ("operators", first_operators, RUNS);
  report ("costs", costs, RUNS);
  report ("instances", instances, RUNS);
  report ("range", range, RUNS);
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (selection);
  return 0;
}
