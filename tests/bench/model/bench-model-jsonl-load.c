/* bench-model-jsonl-load.c — JSONL load throughput of the document model.
 *
 * Generates a realistic trace of about 200 MB (spans with ops, tensors,
 * memory alloc/free pairs, device intervals, gradients) in $TMPDIR, then
 * measures in the same run:
 *   floor      reading the file and splitting lines with memchr (no parsing);
 *   json-glib  json_parser_load_from_data per line (on the first 40 MB, the
 *              DESIGN's 40 MB/s reference);
 *   wick       wick_document_load_file (decode, stream rules, health), in a
 *              child process so that its peak RSS is its own.
 * Prints MB/s for each, wick's ratio to both baselines and peak RSS / file
 * size. Timing never fails the benchmark; only a load error does.
 * WICK_BENCH_MB overrides the size. */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-document.h"

static void
generate (const char *path, gsize target_bytes, guint *n_spans)
{
  FILE *out = fopen (path, "w");
  guint64 t = 0;
  guint span = 1;
  gsize written = 0;
  char line[4096];
  int n;

  g_assert_nonnull (out);
  written += (gsize)fprintf (
    out,
    "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"run-bench\","
    "\"correlation_id\":\"bench\",\"entrypoint\":\"train_step\",\"phase\":\"train\","
    "\"timestamp\":\"2026-08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"
    "\"device\":\"cuda:0\",\"measured_region_device_synchronized\":false,\"timing_mode\":\"host\","
    "\"capture_contract\":{\"measurement_scope\":\"profiled_work\",\"operations\":\"complete\","
    "\"tensors\":\"partial\",\"gradients\":\"partial\",\"logical_memory\":\"complete\","
    "\"physical_memory\":\"partial\",\"device_timing\":\"partial\",\"required_semantic_labels\":[]}"
    ","
    "\"tags\":{}}\n"
    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"train_step\",\"start_ns\":0,"
    "\"span_kind\":\"function\",\"measured\":true}\n");
  while (written < target_bytes)
    {
      static const char *const names[] = { "linear", "attention", "mlp", "layernorm", "softmax" };
      const char *name = names[span % 5];
      span++;
      t += 10;
      n = g_snprintf (
        line, sizeof line,
        "{\"kind\":\"span_start\",\"id\":\"s%u\",\"parent_id\":\"s1\",\"name\":\"%s\","
        "\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"module\",\"measured\":false,"
        "\"step\":\"forward\"}\n"
        "{\"kind\":\"op\",\"span_id\":\"s%u\",\"op_name\":\"matmul\",\"inputs\":[\"t%u\","
        "\"w%u\"],\"output\":\"t%u\",\"shape\":[64,1024],\"dtype\":\"bf16\",\"device\":"
        "\"cuda:0\",\"duration_ns\":5,\"timestamp_ns\":%" G_GUINT64_FORMAT
        ",\"input_dense_bytes\":262144}\n"
        "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":"
        "\"st%u\",\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"op_name\":\"matmul\","
        "\"device\":\"cuda:0\",\"bytes\":131072,\"action\":\"alloc\",\"shape\":[64,1024],"
        "\"dtype\":\"bf16\",\"category\":\"activation\"}\n"
        "{\"kind\":\"tensor\",\"span_id\":\"s%u\",\"tensor_id\":\"t%u\",\"label\":\"%s.out\","
        "\"shape\":[64,1024],\"dtype\":\"bf16\",\"device\":\"cuda:0\",\"requires_grad\":true,"
        "\"category\":\"activation\"}\n"
        "{\"kind\":\"memory\",\"timestamp_ns\":%" G_GUINT64_FORMAT ",\"storage_id\":"
        "\"st%u\",\"tensor_id\":\"t%u\",\"span_id\":\"s%u\",\"device\":\"cuda:0\","
        "\"bytes\":131072,\"action\":\"free\",\"shape\":[64,1024],\"dtype\":\"bf16\","
        "\"category\":\"activation\"}\n"
        "{\"kind\":\"device_interval\",\"span_id\":\"s%u\",\"device\":\"cuda:0\","
        "\"stream_id\":\"7\",\"clock_id\":\"cuda-event\",\"backend\":\"cuda\",\"start_ns\":"
        "%" G_GUINT64_FORMAT ",\"duration_ns\":4}\n"
        "{\"kind\":\"span_end\",\"id\":\"s%u\",\"duration_ns\":8}\n",
        span, name, t, span, span, span, span, t + 1, t + 2, span, span, span, span, span, name,
        t + 7, span, span, span, span, t * 3, span);
      fwrite (line, 1, (gsize)n, out);
      written += (gsize)n;
    }
  t += 10;
  written += (gsize)fprintf (
    out,
    "{\"kind\":\"gradient\",\"event_id\":\"gradient-1\",\"root\":"
    "\"parameters\",\"key\":\"w\",\"state\":\"present\",\"norm\":0.25}\n"
    "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" G_GUINT64_FORMAT "}\n"
    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT "}\n",
    t, t);
  fclose (out);
  *n_spans = span;
}

static double
floor_mb_s (const char *path, gsize size)
{
  int fd = open (path, O_RDONLY);
  g_autofree char *buffer = g_malloc (4 << 20);
  gint64 start = g_get_monotonic_time ();
  guint64 lines = 0;
  gssize n;

  while ((n = read (fd, buffer, 4 << 20)) > 0)
    {
      const char *p = buffer, *end = buffer + n, *nl;
      while ((nl = memchr (p, '\n', (gsize)(end - p))) != NULL)
        {
          lines++;
          p = nl + 1;
        }
    }
  close (fd);
  g_assert_cmpuint (lines, >, 0);
  return (double)size / 1e6 / ((double)(g_get_monotonic_time () - start) / 1e6);
}

static double
json_glib_mb_s (const char *path, gsize limit)
{
  g_autofree char *text = NULL;
  gsize size;
  g_autoptr (JsonParser) parser = json_parser_new ();
  const char *p, *end;
  gint64 start;
  gsize parsed = 0;

  g_assert_true (g_file_get_contents (path, &text, &size, NULL));
  end = text + MIN (size, limit);
  start = g_get_monotonic_time ();
  for (p = text; p < end;)
    {
      const char *nl = memchr (p, '\n', (gsize)(end - p));
      if (nl == NULL)
        break;
      g_assert_true (json_parser_load_from_data (parser, p, nl - p, NULL));
      parsed += (gsize)(nl - p + 1);
      p = nl + 1;
    }
  return (double)parsed / 1e6 / ((double)(g_get_monotonic_time () - start) / 1e6);
}

/* Loads in a child; returns MB/s and the child's peak RSS in bytes. */
static double
wick_mb_s (const char *path, gsize size, guint n_spans, long *peak_rss)
{
  int fds[2];
  pid_t pid;
  struct rusage usage;
  int status;
  double seconds = 0;

  g_assert_cmpint (pipe (fds), ==, 0);
  pid = fork ();
  if (pid == 0)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      gint64 start = g_get_monotonic_time ();
      guint n;
      if (!wick_document_load_file (doc, path, NULL, NULL, NULL, &error))
        {
          g_printerr ("load failed: %s\n", error->message);
          _exit (1);
        }
      seconds = (double)(g_get_monotonic_time () - start) / 1e6;
      wick_document_get_spans (doc, &n);
      if (n != n_spans || !wick_document_get_structurally_valid (doc))
        _exit (2);
      if (write (fds[1], &seconds, sizeof seconds) != sizeof seconds)
        _exit (3);
      _exit (0);
    }
  close (fds[1]);
  g_assert_cmpint (read (fds[0], &seconds, sizeof seconds), ==, sizeof seconds);
  close (fds[0]);
  g_assert_cmpint (wait4 (pid, &status, 0, &usage), ==, pid);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  *peak_rss = usage.ru_maxrss * 1024;
  return (double)size / 1e6 / seconds;
}

int
main (int argc, char **argv)
{
  const char *mb_env = g_getenv ("WICK_BENCH_MB");
  gsize target = (mb_env ? (gsize)g_ascii_strtoull (mb_env, NULL, 10) : 200) * 1000 * 1000;
  g_autofree char *dir = g_dir_make_tmp ("wick-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "trace.jsonl", NULL);
  GStatBuf st;
  guint n_spans;
  double floor_rate, glib_rate, wick_rate;
  long peak = 0;

  /* for profiling (callgrind): --generate PATH MB writes the trace; --load
   * PATH loads it once in this process */
  if (argc == 4 && strcmp (argv[1], "--generate") == 0)
    {
      g_rmdir (dir);
      generate (argv[2], (gsize)g_ascii_strtoull (argv[3], NULL, 10) * 1000 * 1000, &n_spans);
      printf ("%u spans\n", n_spans);
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "--load") == 0)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      g_rmdir (dir);
      if (!wick_document_load_file (doc, argv[2], NULL, NULL, NULL, &error))
        g_error ("%s", error->message);
      return 0;
    }
  generate (path, target, &n_spans);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  floor_rate = floor_mb_s (path, (gsize)st.st_size);
  wick_rate = wick_mb_s (path, (gsize)st.st_size, n_spans, &peak);
  glib_rate = json_glib_mb_s (path, 40 * 1000 * 1000);

  printf ("JSONL load, %.1f MB, %u spans, %u cores\n", (double)st.st_size / 1e6, n_spans,
          g_get_num_processors ());
  printf ("  floor (read + memchr lines)   %8.1f MB/s\n", floor_rate);
  printf ("  json-glib per line (40 MB)    %8.1f MB/s\n", glib_rate);
  printf ("  wick_document_load_file       %8.1f MB/s  (%.2fx json-glib, %.2f of the floor)\n",
          wick_rate, wick_rate / glib_rate, wick_rate / floor_rate);
  printf ("  peak RSS of the load          %8.1f MB  (%.2fx file size)\n", (double)peak / 1e6,
          (double)peak / (double)st.st_size);
  g_unlink (path);
  g_rmdir (dir);
  return 0;
}
