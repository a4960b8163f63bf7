/* bench-follow.c — the cost of following a growing JSONL file
 * (app/client/wick-follow-file.c feeding a document line by line, as the app's
 * follow window and wick-trace attach --follow do) against reading the same
 * file at once with wick_document_load_file (the baseline), in the same run:
 * CPU seconds of each over 5 rounds, medians, lines per CPU-second and the
 * ratio. The followed file is read in polls of 2 MiB, as the app does.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/wick-follow-file.h"
#include "model/wick-document.h"

#define ROUNDS 5
#define POLL_BYTES (2u << 20)

static double
cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
on_line (const char *line, gsize length, gpointer user_data)
{
  if (!wick_document_feed_line (user_data, line, length, NULL))
    g_error ("a benchmark line did not parse");
}

/* A training-shaped trace: per step, a span with an op, a tensor and an
 * alloc/free pair, so every record kind the follow feeds is there. */
static guint64
write_trace (const char *path, guint steps)
{
  g_autoptr (GString) text = g_string_new (
    "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"run\","
    "\"correlation_id\":\"corr\",\"entrypoint\":\"bench\",\"phase\":\"infer\","
    "\"timestamp\":\"2026-08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"
    "\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{\"measurement_scope\":"
    "\"unknown\",\"operations\":\"partial\",\"logical_memory\":\"partial\",\"physical_memory\":"
    "\"none\",\"device_timing\":\"none\"},\"tags\":{}}\n"
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"run\",\"start_ns\":0,\"span_kind\":"
    "\"function\",\"measured\":true}\n");
  guint64 lines = 2;
  for (guint i = 0; i < steps; i++)
    {
      guint64 t = 10 + (guint64)i * 100;
      g_string_append_printf (
        text,
        "{\"kind\":\"span_start\",\"id\":\"k%u\",\"parent_id\":\"s1\",\"name\":\"step\","
        "\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"function\"}\n"
        "{\"kind\":\"op\",\"span_id\":\"k%u\",\"op_name\":\"matmul\",\"inputs\":[\"x\",\"w\"],"
        "\"output\":\"y%u\",\"shape\":[8,32],\"dtype\":\"f32\",\"device\":\"cpu\",\"input_dense_"
        "bytes\":2048,\"duration_ns\":"
        "20,\"timestamp_ns\":%" G_GUINT64_FORMAT "}\n"
        "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":\"y%u\","
        "\"tensor_id\":\"y%u\",\"span_id\":\"k%u\",\"device\":\"cpu\",\"bytes\":1024,\"action\":"
        "\"alloc\",\"shape\":[8,32],\"dtype\":\"f32\",\"category\":\"activation\"}\n"
        "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":\"y%u\","
        "\"tensor_id\":\"y%u\",\"span_id\":\"k%u\",\"device\":\"cpu\",\"bytes\":1024,\"action\":"
        "\"free\",\"shape\":[8,32],\"dtype\":\"f32\",\"category\":\"activation\"}\n"
        "{\"kind\":\"span_end\",\"id\":\"k%u\",\"duration_ns\":50}\n",
        i, t, i, i, t + 30, t + 31, i, i, i, t + 40, i, i, i, i);
      lines += 5;
    }
  guint64 end = 10 + (guint64)steps * 100;
  g_string_append_printf (
    text,
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" G_GUINT64_FORMAT
    "}\n{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}\n",
    end, end);
  lines += 2;
  g_assert_true (g_file_set_contents (path, text->str, (gssize)text->len, NULL));
  return lines;
}

int
main (int argc, char **argv)
{
  guint steps = argc > 1 ? (guint)g_ascii_strtoull (argv[1], NULL, 10) : 100000;
  g_autofree char *dir = g_dir_make_tmp ("wick-bench-follow-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "trace.jsonl", NULL);
  guint64 lines = write_trace (path, steps);
  double load[ROUNDS], follow[ROUNDS];
  for (int r = 0; r < ROUNDS; r++)
    {
      /* Baseline: the whole file at once. */
      g_autoptr (WickDocument) loaded = wick_document_new ();
      double t0 = cpu_seconds ();
      g_autoptr (GError) error = NULL;
      if (!wick_document_load_file (loaded, path, NULL, NULL, NULL, &error))
        g_error ("%s", error->message);
      load[r] = cpu_seconds () - t0;
      g_assert_cmpuint (wick_document_get_n_lines (loaded), ==, lines);

      /* Followed: polls of 2 MiB, every line fed, then finish (the final analysis). */
      g_autoptr (WickDocument) fed = wick_document_new ();
      t0 = cpu_seconds ();
      g_autoptr (WickFollowFile) file = wick_follow_file_new (path, NULL);
      while (wick_follow_file_poll (file, POLL_BYTES, on_line, fed, NULL, NULL) > 0)
        ;
      g_assert_true (wick_document_finish (fed, NULL));
      follow[r] = cpu_seconds () - t0;
      g_assert_cmpuint (wick_document_get_n_lines (fed), ==, lines);
      g_assert_true (wick_document_get_structurally_valid (fed));
    }
  qsort (load, ROUNDS, sizeof (double), compare_doubles);
  qsort (follow, ROUNDS, sizeof (double), compare_doubles);
  double ml = load[ROUNDS / 2], mf = follow[ROUNDS / 2];
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  printf ("bench-follow: %" G_GUINT64_FORMAT " lines, %.1f MB, %d rounds, medians of CPU seconds\n",
          lines, st.st_size / 1e6, ROUNDS);
  printf ("  load_file (baseline): %.3f s  %.2f M lines/CPU-s\n", ml, lines / ml / 1e6);
  printf ("  follow (2 MiB polls + feed_line + finish): %.3f s  %.2f M lines/CPU-s\n", mf,
          lines / mf / 1e6);
  printf ("  follow / load_file: %.2fx the CPU time\n", mf / ml);
  g_unlink (path);
  g_rmdir (dir);
  return 0;
}
