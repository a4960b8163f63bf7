/* wick-trace-gpu.c — `wick-trace gpu [--json] FILE`: where the GPU time of
 * a PyTorch profiler trace goes (app/model/wick-gpu-analysis.h; docs/gpu.md
 * defines the figures).
 *
 * With --json, one object on one line:
 *   {"devices":[{"device","busy_ns","kernel_ns","memcpy_ns","memset_ns","comm_ns"}],
 *    "kernels":[{"name","count","total_ns","mean_ns","min_ns","max_ns","share"}],
 *    "operators":[{"name","count","cpu_self_ns","cpu_total_ns","gpu_ns"}],
 *    "steps":[{"name","start_ns","dur_ns","gpu_busy_ns","idle_ns","compute_ns","comm_ns",
 *              "memcpy_ns","cpu_only_ns"}],
 *    "graphs":[{"graph","graph_id","nodes","replays","kernels","gpu_ns","stage"}],
 *    "stages":[{"name","graphs","replays","kernels","gpu_ns",
 *               "by_kernel":[{"name","count","total_ns"}]}],
 *    "launches":{"flows","to_kernel","unmatched","delay_p50_ns","delay_p99_ns",
 *                "short_kernels","short_kernel_ns","short_threshold_ns"},
 *    "idle":[{"device","stream","host_wait_ns","kernel_wait_ns","other_ns","stretches"}],
 *    "launch_bound":{"stretches","total_ns","gpu_span_ns","share","kernel_wait_threshold_ns",
 *                    "launch_slack_ns","longest":[{"start_ns","dur_ns","device","stream",
 *                                                 "launch","operator"}]}}
 * (steps also carry "launch_bound_ns").
 * Without, a short text report. Exit status as `check`: 0 valid, 1 health
 * errors, 2 parse error (what was read before it is still analysed), 3
 * usage or I/O error.
 */
#include "config.h"

#include <stdio.h>

#include "wick-chrome-import.h"
#include "wick-document.h"
#include "wick-gpu-analysis.h"
#include "wick-trace-commands.h"

static void
print_text (const char *file, WickDocument *doc, const WickGpuAnalysis *a)
{
  printf ("%s\n", file);
  if (!a->has_gpu)
    {
      printf ("no kernels, copies or fills (a CPU-only trace)\n");
      return;
    }
  for (guint i = 0; i < a->devices->len; i++)
    {
      const WickGpuDevice *d = &g_array_index (a->devices, WickGpuDevice, i);
      printf ("device %s: busy %.3f ms, kernels %.3f ms (communication %.3f ms), memcpy %.3f ms, "
              "memset %.3f ms\n",
              d->device, d->busy_ns / 1e6, d->kernel_ns / 1e6, d->comm_ns / 1e6, d->memcpy_ns / 1e6,
              d->memset_ns / 1e6);
    }
  printf ("kernels: %u names\n", a->kernels->len);
  for (guint i = 0; i < MIN (a->kernels->len, 10); i++)
    {
      const WickGpuKernel *k = &g_array_index (a->kernels, WickGpuKernel, i);
      printf ("  %5.1f%%  %8.3f ms  %6" G_GUINT64_FORMAT "×  %s\n", k->share * 100,
              k->total_ns / 1e6, k->count, wick_document_str (doc, k->name));
    }
  for (guint i = 0; i < a->steps->len; i++)
    {
      const WickGpuStep *s = &g_array_index (a->steps, WickGpuStep, i);
      printf ("%s: %.3f ms, GPU busy %.3f ms, idle %.3f ms%s\n", wick_document_str (doc, s->name),
              s->dur_ns / 1e6, s->gpu_busy_ns / 1e6, s->idle_ns / 1e6, s->slow ? " (slow)" : "");
    }
  printf ("launches: %" G_GUINT64_FORMAT " reach their GPU work (%" G_GUINT64_FORMAT
          " arrows), %" G_GUINT64_FORMAT " GPU intervals without a launch; delay p50 %.3f ms, "
          "p99 %.3f ms\n",
          a->launches.to_kernel, a->launches.flows, a->launches.unmatched,
          a->launches.delay_p50_ns / 1e6, a->launches.delay_p99_ns / 1e6);
  printf ("short kernels (under %.0f µs): %" G_GUINT64_FORMAT ", %.3f ms\n",
          WICK_GPU_SHORT_KERNEL_NS / 1e3, a->launches.short_kernels,
          a->launches.short_kernel_ns / 1e6);
  printf ("GPU waiting on launches: %" G_GUINT64_FORMAT " stretches, %.3f ms (%.1f%% of the "
          "GPU's %.3f ms)\n",
          a->n_stretches, a->stretch_ns / 1e6,
          a->gpu_span_ns > 0 ? 100.0 * (double)a->stretch_ns / (double)a->gpu_span_ns : 0.0,
          a->gpu_span_ns / 1e6);
  guint n_spans;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  for (guint i = 0; i < MIN (a->longest->len, 5); i++)
    {
      const WickGpuStretch *st = &g_array_index (a->longest, WickGpuStretch, i);
      printf ("  %8.3f ms at %.3f ms, waiting on %s%s%s\n", (st->end_ns - st->start_ns) / 1e6,
              st->start_ns / 1e6,
              st->launch < n_spans ? wick_document_str (doc, spans[st->launch].name) : "?",
              st->op < n_spans ? " in " : "",
              st->op < n_spans ? wick_document_str (doc, spans[st->op].name) : "");
    }
}

int
wick_trace_gpu (int argc, char **argv)
{
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object for the trace", NULL },
    G_OPTION_ENTRY_NULL,
  };
  int parsed = wick_trace_parse_options (
    "gpu", "FILE", "Kernels, operators, steps and launches of a GPU trace (docs/gpu.md).", entries,
    FALSE, &argc, &argv);
  if (parsed >= 0)
    return parsed;
  if (argc != 2)
    return wick_trace_usage_error ("gpu",
                                   argc < 2 ? "a FILE is required" : "only one FILE may be given");
  const char *file = argv[1];

  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  g_autoptr (GError) error = NULL;
  int status = WICK_TRACE_EXIT_OK;
  if (!wick_document_load_file_auto (doc, file, NULL, NULL, NULL, &error))
    {
      fprintf (stderr, "wick-trace gpu: %s\n", error->message);
      gboolean parse = wick_document_get_parse_error (doc)->failed
                       || !(error->domain == G_FILE_ERROR || error->domain == G_IO_ERROR);
      if (!parse)
        return WICK_TRACE_EXIT_USAGE;
      status = WICK_TRACE_EXIT_PARSE;
    }
  else if (!wick_document_get_structurally_valid (doc))
    status = WICK_TRACE_EXIT_HEALTH;

  const WickGpuAnalysis *a = wick_gpu_analysis_get (doc);
  if (json)
    {
      g_autofree char *text = wick_gpu_analysis_to_json (a, doc);
      printf ("%s\n", text);
    }
  else
    print_text (file, doc, a);
  return status;
}
