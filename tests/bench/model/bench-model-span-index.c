/* bench-model-span-index.c — resident bytes per span and index build time.
 *
 * For each size N (default 1 M and 10 M spans; WICK_BENCH_SPANS="1000000,
 * 10000000,100000000" to choose), in a child process of its own:
 *   - feeds a generated candle-graph trace of N spans to a document (two
 *     libwick threads, "wick_thread" on every span, a root, steps, layers and
 *     ops four deep, as wick-demo records them) and finishes it;
 *   - BASELINE, the old path, in the same run: the flame-chart index the
 *     timeline built in app/ui (per depth: qsort by start, an 8-byte running
 *     max per span, the mipmap; reproduced below as it was), and the costs
 *     index's parent step as it was (wick_document_find_span on every
 *     parent id);
 *   - NEW: wick_document_get_tracks() (threads, per-track rows, block maxima,
 *     mipmap) and wick_span_index_new() (resolved parent indices).
 * Reports resident bytes per span (RSS after malloc_trim, over N) of the
 * document alone, document + old index, document + track model, and ns per
 * span of each index build; ratios new/old. Timing never fails the
 * benchmark; a wrong count does. */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-document.h"
#include "wick-span-costs.h"
#include "wick-tracks-private.h"

#include <time.h>

/* ---- the old app/ui timeline index (baseline) ---------------------------- */

typedef struct
{
  guint32 bucket, span;
} OldMip;

typedef struct
{
  guint32 *spans;
  guint64 *max_end;
  guint n_spans, n_levels;
  OldMip **levels;
  guint *counts;
} OldDepth;

static const WickSpan *old_spans;
static guint64 old_doc_end;

static guint64
old_end (guint i)
{
  const WickSpan *s = &old_spans[i];
  return (s->flags & WICK_SPAN_FLAG_CLOSED) ? s->start_ns + s->duration_ns
                                            : MAX (s->start_ns, old_doc_end);
}

static int
old_compare (gconstpointer a, gconstpointer b, gpointer data)
{
  const WickSpan *spans = data;
  guint64 sa = spans[*(const guint32 *)a].start_ns, sb = spans[*(const guint32 *)b].start_ns;
  if (sa != sb)
    return sa < sb ? -1 : 1;
  guint64 da = spans[*(const guint32 *)a].duration_ns, db = spans[*(const guint32 *)b].duration_ns;
  return da > db ? -1 : da < db ? 1 : 0;
}

static OldDepth *
old_index_new (WickDocument *doc, guint *n_depths_out)
{
  guint n;
  old_spans = wick_document_get_spans (doc, &n);
  old_doc_end = wick_document_get_end_ns (doc);
  guint n_depths = 0;
  guint64 start = G_MAXUINT64, end = 0;
  for (guint i = 0; i < n; i++)
    {
      n_depths = MAX (n_depths, (guint)old_spans[i].depth + 1);
      start = MIN (start, old_spans[i].start_ns);
      end = MAX (end, old_end (i));
    }
  OldDepth *depths = g_new0 (OldDepth, MAX (n_depths, 1));
  for (guint i = 0; i < n; i++)
    depths[old_spans[i].depth].n_spans++;
  guint widest = 1;
  for (guint d = 0; d < n_depths; d++)
    {
      widest = MAX (widest, depths[d].n_spans);
      depths[d].spans = g_new (guint32, MAX (depths[d].n_spans, 1));
      depths[d].max_end = g_new (guint64, MAX (depths[d].n_spans, 1));
      depths[d].n_spans = 0;
    }
  for (guint i = 0; i < n; i++)
    {
      OldDepth *d = &depths[old_spans[i].depth];
      d->spans[d->n_spans++] = i;
    }
  guint64 extent = MAX (end - start, 1), target = MAX (extent / MAX (widest / 4, 1), 1);
  guint shift = 0;
  while ((G_GUINT64_CONSTANT (1) << (shift + 1)) <= target && shift < 62)
    shift++;
  for (guint d = 0; d < n_depths; d++)
    {
      OldDepth *depth = &depths[d];
      g_qsort_with_data (depth->spans, (gint)depth->n_spans, sizeof (guint32), old_compare,
                         (gpointer)old_spans);
      guint64 running = 0;
      for (guint i = 0; i < depth->n_spans; i++)
        depth->max_end[i] = running = MAX (running, old_end (depth->spans[i]));
      GPtrArray *levels = g_ptr_array_new ();
      GArray *counts = g_array_new (FALSE, FALSE, sizeof (guint));
      OldMip *prev = NULL;
      guint prev_count = 0;
      for (guint level = 0; level < 64; level++)
        {
          guint cap = level == 0 ? depth->n_spans : prev_count, count = 0;
          OldMip *e = g_new (OldMip, MAX (cap, 1));
          for (guint i = 0; i < cap; i++)
            {
              guint32 span = level == 0 ? depth->spans[i] : prev[i].span;
              guint32 bucket = level == 0
                                 ? (guint32)((old_spans[span].start_ns - start) >> (shift + level))
                                 : prev[i].bucket >> 1;
              if (count > 0 && e[count - 1].bucket == bucket)
                {
                  if (old_spans[span].duration_ns > old_spans[e[count - 1].span].duration_ns)
                    e[count - 1].span = span;
                  continue;
                }
              e[count++] = (OldMip){ bucket, span };
            }
          g_ptr_array_add (levels, e);
          g_array_append_val (counts, count);
          prev = e;
          prev_count = count;
          if (count <= 1 || (extent >> (shift + level)) == 0)
            break;
        }
      depth->n_levels = levels->len;
      depth->levels = (OldMip **)g_ptr_array_free (levels, FALSE);
      depth->counts = (guint *)g_array_free (counts, FALSE);
    }
  *n_depths_out = n_depths;
  return depths;
}

static void
old_index_free (OldDepth *depths, guint n_depths)
{
  for (guint d = 0; d < n_depths; d++)
    {
      for (guint l = 0; l < depths[d].n_levels; l++)
        g_free (depths[d].levels[l]);
      g_free (depths[d].levels);
      g_free (depths[d].counts);
      g_free (depths[d].spans);
      g_free (depths[d].max_end);
    }
  g_free (depths);
}

/* ---- the trace ----------------------------------------------------------- */

static const char META[]
  = "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\",\"run_id\":\"bench\","
    "\"correlation_id\":\"bench\",\"entrypoint\":\"train\",\"phase\":\"train\","
    "\"timestamp\":\"2026-08-19T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,"
    "\"device\":\"cpu\",\"timing_mode\":\"host\",\"capture_contract\":{\"measurement_scope\":"
    "\"unknown\",\"operations\":\"none\",\"logical_memory\":\"none\",\"physical_memory\":"
    "\"none\",\"device_timing\":\"none\"},\"tags\":{}}";

static void
feed (WickDocument *doc, const char *line, int len)
{
  if (!wick_document_feed_line (doc, line, (gsize)len, NULL))
    {
      g_printerr ("feed failed: %s\n", line);
      _exit (4);
    }
}

/* Spans: s1 root (thread 1); steps under it (thread 1), each with 8 layers
 * (thread 1) of 6 ops each; every 16th step a loader span on thread 2 with
 * 4 children. Ends follow their children. */
static void
generate (WickDocument *doc, guint64 n_spans)
{
  char line[512];
  int len;
  guint64 id = 1, t = 0;
  static const char *const names[] = { "linear", "attention", "mlp", "layernorm", "softmax",
                                       "matmul" };

  feed (doc, META, (int)strlen (META));
  len = g_snprintf (line, sizeof line,
                    "{\"kind\":\"wick_thread\",\"thread\":1,\"os_tid\":100,\"name\":\"main\","
                    "\"timestamp_ns\":0}");
  feed (doc, line, len);
  len = g_snprintf (line, sizeof line,
                    "{\"kind\":\"wick_thread\",\"thread\":2,\"os_tid\":101,\"name\":\"loader\","
                    "\"timestamp_ns\":0}");
  feed (doc, line, len);
  len = g_snprintf (line, sizeof line,
                    "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"train\",\"start_ns\":0,"
                    "\"span_kind\":\"function\",\"measured\":true,\"wick_thread\":1}");
  feed (doc, line, len);
#define START(sid, parent, name, start, thread)                                                   \
  do                                                                                               \
    {                                                                                              \
      len = g_snprintf (line, sizeof line,                                                         \
                        "{\"kind\":\"span_start\",\"id\":\"s%" G_GUINT64_FORMAT                    \
                        "\",\"parent_id\":\"s%" G_GUINT64_FORMAT "\",\"name\":\"%s\","             \
                        "\"start_ns\":%" G_GUINT64_FORMAT ",\"span_kind\":\"module\","             \
                        "\"wick_thread\":%d}",                                                     \
                        (guint64)(sid), (guint64)(parent), name, (guint64)(start), thread);        \
      feed (doc, line, len);                                                                       \
    }                                                                                              \
  while (0)
#define END(sid, dur)                                                                              \
  do                                                                                               \
    {                                                                                              \
      len = g_snprintf (line, sizeof line,                                                         \
                        "{\"kind\":\"span_end\",\"id\":\"s%" G_GUINT64_FORMAT                      \
                        "\",\"duration_ns\":%" G_GUINT64_FORMAT "}",                               \
                        (guint64)(sid), (guint64)(dur));                                           \
      feed (doc, line, len);                                                                       \
    }                                                                                              \
  while (0)
  guint64 step_n = 0;
  while (id < n_spans)
    {
      guint64 step = ++id, step_start = ++t;
      START (step, 1, "step", step_start, 1);
      if (step_n++ % 16 == 0 && id + 5 < n_spans)
        {
          guint64 loader = ++id, ls = t;
          START (loader, 1, "load_batch", ls, 2);
          for (int c = 0; c < 4; c++)
            {
              guint64 child = ++id, cs = t + 1 + (guint64)c * 10;
              START (child, loader, "decode", cs, 2);
              END (child, 8);
            }
          END (loader, 50);
        }
      for (int l = 0; l < 8 && id < n_spans; l++)
        {
          guint64 layer = ++id, layer_start = ++t;
          START (layer, step, names[l % 5], layer_start, 1);
          for (int o = 0; o < 6 && id < n_spans; o++)
            {
              guint64 op = ++id, op_start = ++t;
              START (op, layer, names[5], op_start, 1);
              t += 3;
              END (op, 3);
            }
          t += 1;
          END (layer, t - layer_start);
        }
      t += 1;
      END (step, t - step_start);
    }
  END (1, t + 1);
  len = g_snprintf (line, sizeof line,
                    "{\"kind\":\"terminal\",\"outcome\":\"complete\",\"timestamp_ns\":%" G_GUINT64_FORMAT
                    "}",
                    t + 1);
  feed (doc, line, len);
}

/* CPU time of this thread in µs: the machine is shared, wall time is not ours. */
static gint64
cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static gsize
rss_bytes (void)
{
  malloc_trim (0);
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    return 0;
  unsigned long size = 0, resident = 0;
  sscanf (text, "%lu %lu", &size, &resident);
  return (gsize)resident * (gsize)sysconf (_SC_PAGESIZE);
}

typedef struct
{
  guint64 n;
  double fed_b, doc_b, old_index_b, new_index_b;
  double old_index_ns, new_index_ns;
  double old_parent_ns, new_parent_ns;
  double load_s;
  guint n_tracks;
} Result;

static void
run_child (guint64 n_spans, Result *r)
{
  gsize rss0 = rss_bytes ();
  g_autoptr (WickDocument) doc = wick_document_new_with_extensions (TRUE);
  gint64 t0 = cpu_us ();
  generate (doc, n_spans);
  r->fed_b = (double)(rss_bytes () - rss0) / (double)n_spans;
  if (!wick_document_finish (doc, NULL))
    _exit (5);
  r->load_s = (double)(cpu_us () - t0) / 1e6;
  guint n;
  const WickSpan *spans = wick_document_get_spans (doc, &n);
  if (n != n_spans)
    _exit (6);
  r->n = n;
  gsize rss_doc = rss_bytes ();
  r->doc_b = (double)(rss_doc - rss0) / n;

  /* baseline: the old timeline index */
  guint n_depths;
  gint64 a = cpu_us ();
  OldDepth *old = old_index_new (doc, &n_depths);
  r->old_index_ns = (double)(cpu_us () - a) * 1e3 / n;
  r->old_index_b = (double)(rss_bytes () - rss_doc) / n;
  old_index_free (old, n_depths);

  /* baseline: parents by id, as the costs index found them */
  gint32 *parent = g_new (gint32, n);
  a = cpu_us ();
  for (guint i = 0; i < n; i++)
    parent[i] = spans[i].parent_id
                  ? wick_document_find_span (doc, wick_document_str (doc, spans[i].parent_id))
                  : -1;
  r->old_parent_ns = (double)(cpu_us () - a) * 1e3 / n;
  /* new: the resolved indices (what wick_span_index_new reads now) */
  a = cpu_us ();
  guint64 agree = 0;
  for (guint i = 0; i < n; i++)
    agree += spans[i].parent == parent[i];
  r->new_parent_ns = (double)(cpu_us () - a) * 1e3 / n;
  if (agree != n)
    _exit (7);
  g_free (parent);
  gsize rss_base = rss_bytes ();

  /* new: the track model the document built at finish is in doc_b; time
   * a second build of it, and its size, on the side */
  WickTracks *t = wick_document_get_tracks (doc);
  a = cpu_us ();
  WickTracks *again = wick_tracks_new (doc);
  wick_tracks_build_candle_graph (again);
  r->new_index_ns = (double)(cpu_us () - a) * 1e3 / n;
  r->new_index_b = (double)((gssize)rss_bytes () - (gssize)rss_base) / n;
  wick_tracks_free (again);
  wick_tracks_get_tracks (t, &r->n_tracks);
  guint total = 0;
  const WickTrack *tracks = wick_tracks_get_tracks (t, NULL);
  for (guint i = 0; i < r->n_tracks; i++)
    if (tracks[i].kind == WICK_TRACK_SLICES)
      total += tracks[i].n_events;
  if (total != n)
    _exit (8);
}

int
main (void)
{
  const char *env = g_getenv ("WICK_BENCH_SPANS");
  g_auto (GStrv) sizes = g_strsplit (env ? env : "1000000,10000000", ",", -1);

  printf ("span index and resident memory, %u cores\n", g_get_num_processors ());
  printf ("doc B/sp: document after finish (with its track model); fed: before finish (intern "
          "tables held, as documents were)\n");
  printf ("%12s %8s %9s %10s %10s %10s %10s %10s %9s %9s %7s\n", "spans", "load s", "fed B/sp", "doc B/sp",
          "old idx B", "new idx B", "old ns/sp", "new ns/sp", "old par", "new par", "tracks");
  for (guint k = 0; sizes[k] != NULL; k++)
    {
      guint64 n = g_ascii_strtoull (sizes[k], NULL, 10);
      int fds[2];
      g_assert_cmpint (pipe (fds), ==, 0);
      pid_t pid = fork ();
      if (pid == 0)
        {
          Result r = { 0 };
          run_child (n, &r);
          if (write (fds[1], &r, sizeof r) != sizeof r)
            _exit (3);
          _exit (0);
        }
      close (fds[1]);
      Result r = { 0 };
      gssize got = read (fds[0], &r, sizeof r);
      close (fds[0]);
      int status;
      struct rusage usage;
      wait4 (pid, &status, 0, &usage);
      if (got != sizeof r || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
        {
          printf ("%12" G_GUINT64_FORMAT "  failed (status %d)\n", n,
                  WIFEXITED (status) ? WEXITSTATUS (status) : -1);
          return 1;
        }
      printf ("%12" G_GUINT64_FORMAT " %8.1f %9.1f %10.1f %10.1f %10.1f %10.1f %10.1f %9.1f %9.1f %7u\n",
              r.n, r.load_s, r.fed_b, r.doc_b, r.old_index_b, r.new_index_b, r.old_index_ns,
              r.new_index_ns, r.old_parent_ns, r.new_parent_ns, r.n_tracks);
      printf ("%12s resident: old path %.1f B/span (fed document + old index), new %.1f B/span "
              "(document with its track model), %.2fx; index build %.2fx faster; parents %.1fx\n",
              "", r.fed_b + r.old_index_b, r.doc_b, r.doc_b / (r.fed_b + r.old_index_b),
              r.old_index_ns / r.new_index_ns, r.old_parent_ns / MAX (r.new_parent_ns, 0.01));
      printf ("%12s peak RSS of the whole run (load, health, both indices) %.2f GB\n", "",
              (double)usage.ru_maxrss * 1024 / 1e9);
      fflush (stdout);
    }
  return 0;
}
