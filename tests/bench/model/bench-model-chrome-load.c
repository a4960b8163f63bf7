/* bench-model-chrome-load.c — the streaming Chrome importer against baselines
 * of the same run, on a Kineto-like trace this program generates.
 *
 *   wick        wick_document_load_file_auto(): scan, every phase onto the
 *               track model, finish (B/E, flows, index), health
 *   wick gzip   the same file gzip-compressed (throughput in MB/s of JSON)
 *   json.load   python3's json.load of the file (the DOM a Python user gets)
 *   simdjson    simdjson ondemand over traceEvents reading ph, name, cat, pid,
 *               tid, ts, dur of every event (the practical parsing limit;
 *               bench-simdjson-chrome, built when a C++ compiler and
 *               libsimdjson-dev are there)
 *
 * Each is run in a child process, three times; the medians of wall time and of
 * peak RSS (ru_maxrss of that child alone) are printed, with ratios. Size:
 * WICK_BENCH_CHROME_EVENTS events (default 5,000,000, about 500 MB); CI runs it
 * small (WICK_BENCH_CHROME_EVENTS=200000) or not at all. Argument 1: the
 * simdjson baseline binary (optional).
 *
 * For profiling (callgrind, perf): `--generate PATH EVENTS` writes the trace
 * and exits; `--load PATH` imports PATH once in this process and prints the
 * wall and CPU time it took and the peak RSS. WICK_BENCH_PYTHON names the
 * python of the json.load baseline (default /usr/bin/python3). */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "wick-chrome-import.h"
#include "wick-tracks.h"

#define RUNS 3

/* A training-step-shaped trace: per step a ProfilerStep#N, per op a cpu_op
 * with two children, a cuda_runtime launch with its kernel on stream 7 and the
 * ac2g flow between them, and now and then a [memory] event. */
static guint64
generate (const char *path, guint64 n_events)
{
  FILE *f = fopen (path, "w");
  guint64 n = 0, ts = G_GUINT64_CONSTANT (1700000000000000), corr = 1;
  char buf[1 << 16];

  setvbuf (f, buf, _IOFBF, sizeof buf);
  fputs ("{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,"
         "\"world_size\":8},\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100\"}],"
         "\"traceEvents\":[\n",
         f);
  fputs ("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":4242,"
         "\"args\":{\"name\":\"python\"}}",
         f);
  n++;
  for (guint64 step = 0; n < n_events; step++)
    {
      guint64 step_start = ts;
      fprintf (f,
               ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%" G_GUINT64_FORMAT
               "\",\"pid\":4242,\"tid\":4242,\"ts\":%" G_GUINT64_FORMAT ".000,\"dur\":%d.5,"
               "\"args\":{\"External id\":%" G_GUINT64_FORMAT "}}",
               step, ts, 100 * 40 + 10, corr);
      n++;
      ts += 5;
      for (int op = 0; op < 40 && n < n_events; op++)
        {
          fprintf (f,
                   ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":4242,"
                   "\"tid\":4242,\"ts\":%" G_GUINT64_FORMAT ".125,\"dur\":90,\"args\":{\"External "
                   "id\":%" G_GUINT64_FORMAT ",\"Ev Idx\":%d}}",
                   ts, corr, op);
          fprintf (f,
                   ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":4242,"
                   "\"tid\":4242,\"ts\":%" G_GUINT64_FORMAT ".250,\"dur\":60,\"args\":{\"External "
                   "id\":%" G_GUINT64_FORMAT "}}",
                   ts + 10, corr);
          fprintf (f,
                   ",\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                   "\"pid\":4242,\"tid\":4242,\"ts\":%" G_GUINT64_FORMAT ",\"dur\":8,\"args\":{"
                   "\"correlation\":%" G_GUINT64_FORMAT "}}",
                   ts + 20, corr);
          fprintf (f,
                   ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16\","
                   "\"pid\":0,\"tid\":7,\"ts\":%" G_GUINT64_FORMAT ",\"dur\":45,\"args\":{"
                   "\"device\":0,\"stream\":7,\"correlation\":%" G_GUINT64_FORMAT
                   ",\"registers per thread\":168,\"shared memory\":0,\"grid\":[132,1,1],"
                   "\"block\":[384,1,1]}}",
                   ts + 40, corr);
          fprintf (f,
                   ",\n{\"ph\":\"s\",\"id\":%" G_GUINT64_FORMAT ",\"pid\":4242,\"tid\":4242,"
                   "\"ts\":%" G_GUINT64_FORMAT ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}",
                   corr, ts + 20);
          fprintf (f,
                   ",\n{\"ph\":\"f\",\"id\":%" G_GUINT64_FORMAT ",\"pid\":0,\"tid\":7,"
                   "\"ts\":%" G_GUINT64_FORMAT ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
                   corr, ts + 40);
          n += 6;
          if (op % 8 == 0)
            {
              fprintf (f,
                       ",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":4242,"
                       "\"tid\":4242,\"ts\":%" G_GUINT64_FORMAT ",\"args\":{\"Addr\":%" G_GUINT64_FORMAT
                       ",\"Bytes\":%d,\"Total Allocated\":%" G_GUINT64_FORMAT
                       ",\"Total Reserved\":2097152000,\"Device Type\":1,\"Device Id\":0}}",
                       ts + 15, (guint64)140000000000 + (corr % 64) * 4096, (corr / 8) % 2 ? -4096 : 4096,
                       corr * 16);
              n++;
            }
          corr++;
          ts += 100;
        }
      ts = step_start + 100 * 40 + 20;
    }
  fputs ("\n]}\n", f);
  fclose (f);
  return n;
}

static void
gzip_file (const char *in, const char *out)
{
  FILE *f = fopen (in, "rb");
  gzFile z = gzopen (out, "wb1");
  char buf[1 << 16];
  size_t n;

  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    gzwrite (z, buf, (unsigned)n);
  gzclose (z);
  fclose (f);
}

typedef struct
{
  double seconds;
  double rss_mb;
  gboolean ok;
} Run;

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Runs @argv (or the import of @path when argv is NULL) in a child. */
static Run
run_child (char **argv, const char *path)
{
  Run r = { 0 };
  gint64 t0 = g_get_monotonic_time ();
  struct rusage usage;
  int status = 0;
  pid_t pid = fork ();

  if (pid == 0)
    {
      if (argv != NULL)
        {
          execv (argv[0], argv);
          _exit (127);
        }
      else
        {
          WickDocument *doc = wick_document_new ();
          gboolean ok = wick_document_load_file_auto (doc, path, NULL, NULL, NULL, NULL);
          _exit (ok && wick_chrome_info_get (doc) != NULL ? 0 : 1);
        }
    }
  wait4 (pid, &status, 0, &usage);
  r.seconds = (double)(g_get_monotonic_time () - t0) / 1e6;
  r.rss_mb = (double)usage.ru_maxrss / 1024.0;
  r.ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  return r;
}

static Run
median_of (char **argv, const char *path)
{
  double s[RUNS], m[RUNS];
  Run r = { 0, 0, TRUE };

  for (int i = 0; i < RUNS; i++)
    {
      Run one = run_child (argv, path);
      s[i] = one.seconds;
      m[i] = one.rss_mb;
      r.ok &= one.ok;
    }
  qsort (s, RUNS, sizeof (double), compare_double);
  qsort (m, RUNS, sizeof (double), compare_double);
  r.seconds = s[RUNS / 2];
  r.rss_mb = m[RUNS / 2];
  return r;
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("WICK_BENCH_CHROME_EVENTS");
  guint64 want = env ? g_ascii_strtoull (env, NULL, 10) : 5000000;
  g_autofree char *dir = g_dir_make_tmp ("wick-bench-chrome-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "kineto.json", NULL);
  g_autofree char *gz_path = g_build_filename (dir, "kineto.json.gz", NULL);
  GStatBuf st;
  double mb, gz_mb;
  guint64 n;
  Run wick, wick_gz, py = { 0 }, simd = { 0 };
  const char *python = g_getenv ("WICK_BENCH_PYTHON"); /* default /usr/bin/python3 */
  char *py_argv[] = { (char *)(python ? python : "/usr/bin/python3"), (char *)"-c",
                      "import json,sys; d=json.load(open(sys.argv[1])); "
                      "sys.exit(0 if len(d['traceEvents']) > 0 else 1)",
                      path, NULL };
  char *simd_argv[] = { argc > 1 ? argv[1] : NULL, path, NULL };

  if (argc == 4 && strcmp (argv[1], "--generate") == 0)
    {
      g_rmdir (dir);
      printf ("%" G_GUINT64_FORMAT " events\n",
              generate (argv[2], g_ascii_strtoull (argv[3], NULL, 10)));
      return 0;
    }
  if (argc == 3 && strcmp (argv[1], "--load") == 0)
    {
      g_autoptr (WickDocument) doc = wick_document_new ();
      g_autoptr (GError) error = NULL;
      struct rusage before, after;
      gint64 t0 = g_get_monotonic_time ();
      gboolean ok;
      g_rmdir (dir);
      getrusage (RUSAGE_SELF, &before);
      ok = wick_document_load_file_auto (doc, argv[2], NULL, NULL, NULL, &error);
      getrusage (RUSAGE_SELF, &after);
      printf ("%s: %.3f s wall, %.3f s user, %.3f s system, peak RSS %.1f MB%s%s\n", argv[2],
              (double)(g_get_monotonic_time () - t0) / 1e6,
              (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec)
                + (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6,
              (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec)
                + (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6,
              (double)after.ru_maxrss / 1024.0, ok ? "" : ": ", ok ? "" : error->message);
      return ok ? 0 : 1;
    }
  n = generate (path, want);
  g_stat (path, &st);
  mb = (double)st.st_size / 1e6;
  gzip_file (path, gz_path);
  g_stat (gz_path, &st);
  gz_mb = (double)st.st_size / 1e6;
  printf ("Kineto-like trace: %" G_GUINT64_FORMAT " events, %.1f MB (%.1f MB gzip -1), "
          "medians of %d runs, %u cores\n",
          n, mb, gz_mb, RUNS, g_get_num_processors ());

  wick = median_of (NULL, path);
  wick_gz = median_of (NULL, gz_path);
  if (g_file_test (py_argv[0], G_FILE_TEST_IS_EXECUTABLE))
    py = median_of (py_argv, NULL);
  if (simd_argv[0] != NULL && g_file_test (simd_argv[0], G_FILE_TEST_IS_EXECUTABLE))
    simd = median_of (simd_argv, NULL);

  printf ("  %-22s %8.2f s %8.1f MB/s  peak RSS %7.1f MB (%.2fx the file)%s\n", "wick import",
          wick.seconds, mb / wick.seconds, wick.rss_mb, wick.rss_mb / mb,
          wick.ok ? "" : "  FAILED");
  printf ("  %-22s %8.2f s %8.1f MB/s  peak RSS %7.1f MB%s\n", "wick import (gzip)",
          wick_gz.seconds, mb / wick_gz.seconds, wick_gz.rss_mb, wick_gz.ok ? "" : "  FAILED");
  if (py.seconds > 0)
    printf ("  %-22s %8.2f s %8.1f MB/s  peak RSS %7.1f MB  wick is %.2fx its speed\n",
            "python json.load", py.seconds, mb / py.seconds, py.rss_mb,
            py.seconds / wick.seconds);
  if (simd.seconds > 0)
    printf ("  %-22s %8.2f s %8.1f MB/s  peak RSS %7.1f MB  wick is %.2fx its speed\n",
            "simdjson ondemand", simd.seconds, mb / simd.seconds, simd.rss_mb,
            simd.seconds / wick.seconds);
  g_unlink (path);
  g_unlink (gz_path);
  g_rmdir (dir);
  return wick.ok && wick_gz.ok ? 0 : 1;
}
