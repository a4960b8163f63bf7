/* wick-trace-summary.c — `wick-trace summary FILE`: run identity, record
 * counts by kind, the measured region's wall time, the top spans by total time
 * and the peak live logical bytes by memory category, per device.
 *
 * Chrome / Perfetto trace-event JSON is imported (wick-chrome-import.h).
 * Wick extension records are counted (the document is read in extension
 * mode); a trace candle-graph would reject is summarised as far as it was read,
 * after the parse error. Exit status as check: 0, 1 health errors, 2 parse
 * error, 3 usage or I/O error.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "wick-chrome-import.h"
#include "wick-chrome-stream.h"
#include "wick-document.h"
#include "wick-memory-series.h"
#include "wick-span-costs.h"
#include "wick-steps.h"
#include "wick-trace-commands.h"

#define TOP_SPANS 10

static void
format_ns (char *buffer, gsize size, double ns)
{
  if (ns >= 1e9)
    g_snprintf (buffer, size, "%.3f s", ns / 1e9);
  else if (ns >= 1e6)
    g_snprintf (buffer, size, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    g_snprintf (buffer, size, "%.3f µs", ns / 1e3);
  else
    g_snprintf (buffer, size, "%.0f ns", ns);
}

/* What a Chrome import read: counts by phase, what was skipped, the
 * top-level metadata (distributedInfo's rank and world size, the devices,
 * schemaVersion, traceName, ...) and the ProfilerStep#N steps. */
static void
print_chrome (WickDocument *doc)
{
  const WickChromeInfo *info = wick_chrome_info_get (doc);
  const char *distributed;
  guint n_spans, n_steps = 0;
  const WickSpan *spans = wick_document_get_spans (doc, &n_spans);
  double total = 0, longest = 0, shortest = G_MAXDOUBLE;

  if (info == NULL)
    return;
  printf ("format:      %s\n", info->format);
  for (int which = 0; which < 2; which++)
    {
      GPtrArray *pairs = which == 0 ? info->imported : info->skipped;
      if (pairs->len == 0)
        continue;
      printf ("%s", which == 0 ? "imported:    " : "skipped:     ");
      for (guint i = 0; i + 1 < pairs->len; i += 2)
        printf ("%s%s %s", i ? ", " : "", (const char *)g_ptr_array_index (pairs, i + 1),
                (const char *)g_ptr_array_index (pairs, i));
      printf ("\n");
    }
  if (info->frees_before_window > 0)
    printf ("memory:      %" G_GUINT64_FORMAT
            " frees of blocks allocated before the profile started (information)\n",
            info->frees_before_window);
  distributed = wick_chrome_info_lookup_metadata (info, "distributedInfo");
  if (distributed != NULL)
    {
      double rank, world;
      g_autoptr (GString) backend = g_string_new (NULL);
      gsize len = strlen (distributed);
      if (wick_chrome_args_number (distributed, len, "rank", &rank)
          && wick_chrome_args_number (distributed, len, "world_size", &world))
        printf ("distributed: rank %.0f of world size %.0f", rank, world);
      else
        printf ("distributed: %.200s", distributed);
      if (wick_chrome_args_string (distributed, len, "backend", backend))
        printf (", backend %s", backend->str);
      printf ("\n");
    }
  for (guint i = 0; i + 1 < info->metadata->len; i += 2)
    {
      const char *key = g_ptr_array_index (info->metadata, i);
      const char *value = g_ptr_array_index (info->metadata, i + 1);
      g_autoptr (GString) flat = g_string_new (NULL);
      if (strcmp (key, "distributedInfo") == 0)
        continue;
      /* one line: the JSON's layout whitespace squeezed */
      for (const char *p = value; *p != '\0' && flat->len < 160; p++)
        if (!g_ascii_isspace (*p) || (flat->len > 0 && flat->str[flat->len - 1] != ' '))
          g_string_append_c (flat, g_ascii_isspace (*p) ? ' ' : *p);
      printf ("metadata:    %s = %s%s\n", key, flat->str, strlen (value) > flat->len ? "…" : "");
    }
  g_autoptr (WickSteps) steps = wick_steps_find (doc);
  for (guint k = 0; steps->source == WICK_STEPS_PROFILER && k < steps->spans->len; k++)
    {
      double d = (double)spans[g_array_index (steps->spans, guint32, k)].duration_ns;
      n_steps++;
      total += d;
      longest = MAX (longest, d);
      shortest = MIN (shortest, d);
    }
  if (n_steps > 0)
    {
      char mean[32], lo[32], hi[32];
      format_ns (mean, sizeof mean, total / n_steps);
      format_ns (lo, sizeof lo, shortest);
      format_ns (hi, sizeof hi, longest);
      printf ("steps:       %u ProfilerStep#N, mean %s, min %s, max %s\n", n_steps, mean, lo, hi);
    }
  printf ("\n");
}

static void
print_identity (WickDocument *doc)
{
  const WickTraceMeta *meta = wick_document_get_meta (doc);

  if (!meta->present)
    {
      printf ("run: no meta record\n");
      return;
    }
  printf ("schema:      %s\n", wick_document_str (doc, meta->schema));
  printf ("run:         %s (correlation %s)\n", wick_document_str (doc, meta->run_id),
          wick_document_str (doc, meta->correlation_id));
  printf ("entrypoint:  %s, phase %s, step %" G_GUINT64_FORMAT " after %" G_GUINT64_FORMAT
          " warm-up, device %s, timing %s\n",
          wick_document_str (doc, meta->entrypoint),
          meta->phase == WICK_PHASE_TRAIN ? "train" : "infer", meta->capture_step,
          meta->warmup_steps, wick_document_str (doc, meta->device),
          meta->timing_mode == WICK_TIMING_HOST ? "host" : "device_synchronized");
  if (!wick_document_has_terminal (doc))
    printf ("outcome:     no terminal record\n");
  else if (wick_document_get_capture_complete (doc))
    printf ("outcome:     complete at %" G_GUINT64_FORMAT " ns\n",
            wick_document_get_terminal_ns (doc));
  else
    printf ("outcome:     failed at %" G_GUINT64_FORMAT " ns: %s\n",
            wick_document_get_terminal_ns (doc), wick_document_get_terminal_reason (doc));
}

static void
print_counts (WickDocument *doc)
{
  static const struct
  {
    WickRecordType type;
    const char *name;
  } kinds[] = {
    { WICK_RECORD_META, "meta" },
    { WICK_RECORD_SPAN, "span" },
    { WICK_RECORD_OP, "op" },
    { WICK_RECORD_TENSOR, "tensor" },
    { WICK_RECORD_TENSOR_STATS, "tensor_stats" },
    { WICK_RECORD_MEMORY, "memory" },
    { WICK_RECORD_DEVICE_MEMORY, "device_memory" },
    { WICK_RECORD_DEVICE_INTERVAL, "device_interval" },
    { WICK_RECORD_GRADIENT, "gradient" },
    { WICK_RECORD_EDGE, "edge" },
    { WICK_RECORD_TERMINAL, "terminal" },
    { WICK_RECORD_EXTENSION, "wick_* (extension)" },
  };

  printf ("\nrecords (%" G_GUINT64_FORMAT " lines):\n", wick_document_get_n_lines (doc));
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      guint64 n = wick_document_get_record_count (doc, kinds[i].type);
      if (n > 0)
        printf ("  %-20s %" G_GUINT64_FORMAT "\n", kinds[i].name, n);
    }
}

static void
print_measured (WickDocument *doc)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  char text[64];

  for (guint i = 0; i < n; i++)
    if (spans[i].flags & WICK_SPAN_FLAG_MEASURED)
      {
        format_ns (text, sizeof text, (double)spans[i].duration_ns);
        printf ("\nmeasured region: %s (span %s) %s%s\n", wick_document_str (doc, spans[i].name),
                wick_document_str (doc, spans[i].id), text,
                spans[i].flags & WICK_SPAN_FLAG_CLOSED ? "" : " (open)");
        return;
      }
  printf ("\nmeasured region: none\n");
}

static void
print_top_spans (WickDocument *doc)
{
  g_autoptr (WickSpanIndex) index = wick_span_index_new (doc);
  g_autoptr (GArray) costs = wick_span_costs_by_name (doc, index);

  printf ("\ntop spans by total time:\n  %-32s %8s %12s %12s %12s %12s\n", "name", "count", "total",
          "self", "mean", "max");
  for (guint i = 0; i < costs->len && i < TOP_SPANS; i++)
    {
      const WickSpanCost *c = &g_array_index (costs, WickSpanCost, i);
      char total[32], self[32], mean[32], max[32];
      format_ns (total, sizeof total, (double)c->total_ns);
      format_ns (self, sizeof self, (double)c->self_ns);
      format_ns (mean, sizeof mean, c->mean_ns);
      format_ns (max, sizeof max, (double)c->max_ns);
      printf ("  %-32s %8" G_GUINT64_FORMAT " %12s %12s %12s %12s\n",
              wick_document_str (doc, c->name), c->count, total, self, mean, max);
    }
}

static void
print_peaks (WickDocument *doc)
{
  g_autoptr (GPtrArray) series = wick_memory_series_build (doc);

  printf ("\npeak live logical bytes:\n");
  if (series->len == 0)
    printf ("  no memory events\n");
  for (guint i = 0; i < series->len; i++)
    {
      const WickMemorySeries *s = g_ptr_array_index (series, i);
      printf ("  %s: total %" G_GUINT64_FORMAT " at %" G_GUINT64_FORMAT " ns\n",
              wick_document_str (doc, s->device), s->peak_total, s->peak_total_ns);
      for (int c = 0; c < WICK_N_CATEGORIES; c++)
        printf ("    %-11s %" G_GUINT64_FORMAT " at %" G_GUINT64_FORMAT " ns\n",
                wick_memory_category_to_string (c), s->peak[c], s->peak_ns[c]);
    }
}

int
wick_trace_summary (int argc, char **argv)
{
  g_autoptr (WickDocument) doc = NULL;
  g_autoptr (GError) error = NULL;
  const WickParseError *pe;
  int status = WICK_TRACE_EXIT_OK;

  status = wick_trace_parse_options (
    "summary", "FILE",
    "Run identity, record counts, measured time, top spans and peak memory of a trace.\n"
    "Exit status: 0 (valid), 1 (health errors), 2 (parse error), 3 (usage or I/O error).",
    NULL, FALSE, &argc, &argv);
  if (status >= 0)
    return status;
  status = WICK_TRACE_EXIT_OK;
  if (argc != 2)
    return wick_trace_usage_error ("summary",
                                   argc < 2 ? "a FILE is required" : "only one FILE may be given");
  doc = wick_document_new_with_extensions (TRUE);
  if (!wick_document_load_file_auto (doc, argv[1], NULL, NULL, NULL, &error))
    {
      pe = wick_document_get_parse_error (doc);
      if (!pe->failed)
        {
          fprintf (stderr, "wick-trace summary: %s\n", error->message);
          return WICK_TRACE_EXIT_USAGE;
        }
      printf ("parse error: %s%s%s (showing what was read before it)\n\n", pe->message,
              pe->cause ? ": " : "", pe->cause ? pe->cause : "");
      wick_document_analyze (doc);
      status = WICK_TRACE_EXIT_PARSE;
    }
  else if (!wick_document_get_structurally_valid (doc))
    status = WICK_TRACE_EXIT_HEALTH;
  if (wick_document_get_first_extension_line (doc) > 0)
    printf ("note: line %" G_GUINT64_FORMAT " and later wick_* lines are Wick extension records; "
            "candle-graph rejects them (wick-trace convert moves them into wick_ keys, "
            "--strict removes them)\n\n",
            wick_document_get_first_extension_line (doc));
  print_chrome (doc);
  print_identity (doc);
  print_counts (doc);
  print_measured (doc);
  print_top_spans (doc);
  print_peaks (doc);
  return status;
}
