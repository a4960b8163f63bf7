/* bench-model-live-commit.c — CPU per record of a live session's model work,
 * without a workload's rate limit.
 *
 * A live session's worker decodes lines into WickLineBatch batches (at most
 * 2048 lines a batch, as wick-live-session.c's BATCH_MAX_LINES); the main
 * thread commits each batch (wick_document_commit_batch), re-runs the live
 * analysis (wick_document_analyze) at most every 250 ms or 10 times its cost,
 * and the timeline asks for the track model (wick_document_get_tracks) at most
 * once per 4 times the last build's cost (wick-rebuild-throttle.c). This
 * bench does the same, as fast as it goes, on records made in memory (spans
 * with an op, a memory alloc/free pair and a device interval each), and
 * prints the thread CPU of each part per record, over the whole session and
 * over its last tenth (the marginal cost at that document size).
 *
 *   bench-model-live-commit [RECORDS] [--every-batch] [--whole]
 *
 * --every-batch asks for the tracks after every batch (no throttle): the
 * track model's cost alone. The model is brought up to date by appending
 * the new records (wick-tracks.h); --whole turns that off, so that every
 * change rebuilds the model whole (the way before appending, the baseline
 * of the same binary). The last line says how the model kept up: whole
 * builds, appends, and fallbacks (appends given up for a whole rebuild). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wick-document.h"
#include "wick-tracks.h"
#include "wick-tracks-private.h"

#define BATCH_LINES 2048

static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static GPtrArray *
make_lines (guint target)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  static const char *const names[] = { "linear", "attention", "mlp", "layernorm", "softmax" };
  guint64 t = 0;
  guint span = 1;

  g_ptr_array_add (
    lines,
    g_strdup ("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"run-bench\","
              "\"correlation_id\":\"bench\",\"entrypoint\":\"train_step\",\"phase\":\"train\","
              "\"timestamp\":\"2026-08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"
              "\"device\":\"cuda:0\",\"measured_region_device_synchronized\":false,"
              "\"timing_mode\":\"host\",\"capture_contract\":{\"measurement_scope\":"
              "\"profiled_work\",\"operations\":\"complete\",\"tensors\":\"partial\","
              "\"gradients\":\"partial\",\"logical_memory\":\"complete\",\"physical_memory\":"
              "\"partial\",\"device_timing\":\"partial\",\"required_semantic_labels\":[]},"
              "\"tags\":{}}"));
  g_ptr_array_add (lines, g_strdup ("{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":"
                                    "\"train_step\",\"start_ns\":0,\"span_kind\":\"function\","
                                    "\"measured\":true}"));
  while (lines->len < target)
    {
      const char *name = names[span % 5];
      span++;
      t += 10;
      g_ptr_array_add (lines, g_strdup_printf (
                                "{\"kind\":\"span_start\",\"id\":\"s%u\",\"parent_id\":\"s1\","
                                "\"name\":\"%s\",\"start_ns\":%" G_GUINT64_FORMAT
                                ",\"span_kind\":\"module\",\"measured\":false}",
                                span, name, t));
      g_ptr_array_add (lines,
                       g_strdup_printf ("{\"kind\":\"op\",\"span_id\":\"s%u\",\"op_name\":"
                                        "\"matmul\",\"inputs\":[\"w1\"],\"output\":\"t%u\",\"shape\":"
                                        "[64,1024],\"dtype\":\"bf16\",\"device\":\"cuda:0\",\"duration_ns\":5,\"timestamp_ns\":"
                                        "%" G_GUINT64_FORMAT ",\"input_dense_bytes\":262144}",
                                        span, span, t + 1));
      g_ptr_array_add (lines, g_strdup_printf (
                                "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                                ",\"storage_id\":\"st%u\",\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"device\":"
                                "\"cuda:0\",\"bytes\":131072,\"action\":\"alloc\","
                                "\"shape\":[64,1024],\"dtype\":\"bf16\",\"category\":\"activation\"}",
                                t + 2, span, span, span));
      g_ptr_array_add (lines, g_strdup_printf (
                                "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                                ",\"storage_id\":\"st%u\",\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"device\":"
                                "\"cuda:0\",\"bytes\":131072,\"action\":\"free\","
                                "\"shape\":[64,1024],\"dtype\":\"bf16\",\"category\":\"activation\"}",
                                t + 7, span, span, span));
      g_ptr_array_add (lines, g_strdup_printf (
                                "{\"kind\":\"device_interval\",\"span_id\":\"s%u\",\"device\":"
                                "\"cuda:0\",\"stream_id\":\"7\",\"clock_id\":\"cuda-event\","
                                "\"backend\":\"cuda\",\"start_ns\":%" G_GUINT64_FORMAT
                                ",\"duration_ns\":4}",
                                span, t + 3));
      g_ptr_array_add (lines,
                       g_strdup_printf ("{\"kind\":\"span_end\",\"id\":\"s%u\",\"duration_ns\":8}",
                                        span));
    }
  return lines;
}

typedef struct
{
  gint64 decode, commit, analyze, tracks;
  guint n_tracks;
} Parts;

int
main (int argc, char **argv)
{
  guint target = argc > 1 ? (guint)strtoul (argv[1], NULL, 10) : 100000;
  gboolean every_batch = FALSE, whole = FALSE;
  for (int a = 2; a < argc; a++)
    {
      every_batch |= strcmp (argv[a], "--every-batch") == 0;
      whole |= strcmp (argv[a], "--whole") == 0;
    }
  g_autoptr (GPtrArray) lines = make_lines (target);
  g_autoptr (WickDocument) doc = wick_document_new ();
  g_autoptr (WickLineDecoder) decoder = wick_line_decoder_new (TRUE);
  wick_document_set_incremental_tracks (doc, !whole);
  Parts all = { 0 }, tail = { 0 };
  guint tail_from = lines->len - lines->len / 10;
  gint64 last_analyze = G_MININT64 / 2, analyze_cost = 0;
  gint64 last_tracks = G_MININT64 / 2, tracks_cost = 0;
  gint64 wall0 = g_get_monotonic_time ();

  for (guint i = 0; i < lines->len;)
    {
      gboolean in_tail = i >= tail_from;
      Parts *p[2] = { &all, in_tail ? &tail : NULL };
      gint64 c0 = thread_cpu_us ();
      g_autoptr (WickLineBatch) batch = wick_line_batch_new ();
      guint end = MIN (lines->len, i + BATCH_LINES);
      for (; i < end; i++)
        {
          const char *line = g_ptr_array_index (lines, i);
          if (!wick_line_batch_add (batch, decoder, line, strlen (line)))
            g_error ("line %u did not decode", i);
        }
      gint64 c1 = thread_cpu_us ();
      g_autoptr (GError) error = NULL;
      if (!wick_document_commit_batch (doc, batch, &error))
        g_error ("commit: %s", error->message);
      gint64 c2 = thread_cpu_us ();
      gint64 now = g_get_monotonic_time ();
      gint64 c3 = c2;
      if (now - last_analyze >= MAX (250000, 10 * analyze_cost))
        {
          wick_document_analyze (doc);
          last_analyze = g_get_monotonic_time ();
          analyze_cost = last_analyze - now;
          c3 = thread_cpu_us ();
        }
      now = g_get_monotonic_time ();
      gint64 c4 = c3;
      if (every_batch || now - last_tracks >= 4 * tracks_cost)
        {
          WickTracks *tracks = wick_document_get_tracks (doc);
          guint n = 0;
          wick_tracks_get_tracks (tracks, &n);
          last_tracks = g_get_monotonic_time ();
          tracks_cost = last_tracks - now;
          c4 = thread_cpu_us ();
          for (guint k = 0; k < 2; k++)
            if (p[k])
              p[k]->n_tracks++;
        }
      for (guint k = 0; k < 2; k++)
        if (p[k])
          {
            p[k]->decode += c1 - c0;
            p[k]->commit += c2 - c1;
            p[k]->analyze += c3 - c2;
            p[k]->tracks += c4 - c3;
          }
    }
  double n_all = lines->len, n_tail = lines->len - tail_from;
  printf ("records %u batches %u mode %s %s wall %.3f s\n", lines->len,
          (lines->len + BATCH_LINES - 1) / BATCH_LINES, every_batch ? "every-batch" : "throttled",
          whole ? "whole" : "incremental", (double)(g_get_monotonic_time () - wall0) / 1e6);
  const struct
  {
    const char *what;
    const Parts *p;
    double n;
  } rows[] = { { "all", &all, n_all }, { "tail", &tail, n_tail } };
  for (guint k = 0; k < 2; k++)
    {
      const Parts *p = rows[k].p;
      double main_us = (double)(p->commit + p->analyze + p->tracks);
      printf ("%-4s us/record: main %.3f (commit %.3f analyze %.3f tracks %.3f, %u builds) "
              "decode %.3f\n",
              rows[k].what, main_us / rows[k].n, (double)p->commit / rows[k].n,
              (double)p->analyze / rows[k].n, (double)p->tracks / rows[k].n, p->n_tracks,
              (double)p->decode / rows[k].n);
    }
  WickTracksUpdateStats stats;
  wick_tracks_get_update_stats (wick_document_get_tracks (doc), &stats);
  printf ("tracks: %" G_GUINT64_FORMAT " whole builds, %" G_GUINT64_FORMAT
          " appends, %" G_GUINT64_FORMAT " fallbacks (last: %s)\n",
          stats.builds, stats.appends, stats.fallbacks,
          stats.last_fallback ? stats.last_fallback : "none");
  return 0;
}
