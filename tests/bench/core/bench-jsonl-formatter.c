/* bench-jsonl-formatter.c — the JSONL formatter against the one it replaced
 * (baseline-jsonl-formatter.c, the code before the two-digit/name-cache
 * rewrite), in the same run, in lines per CPU-second.
 *
 *   format only   the same records fed to each formatter, alternating, from
 *                 memory (no ring): spans only (begin/end pairs, as the drain
 *                 benchmark's producer records), and a mix (nested spans, a
 *                 memory alloc and free, an op per step);
 *   drain         the drain benchmark of bench-ring-hot-path: one producer
 *                 recording empty spans at full speed on a 16 MiB ring, a
 *                 hold reader (drop policy) decoding and formatting on
 *                 another thread; lines per CPU-second of that thread, and
 *                 how much the producer had to drop.
 *
 * Arguments: [rounds] [drain seconds]. Medians over rounds.
 */
#include "wick-session-internal.h"

#include "baseline-jsonl-formatter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double
cpu_seconds (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median (double *values, int n)
{
  qsort (values, (size_t)n, sizeof *values, compare_double);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

typedef struct
{
  uint64_t lines;
  uint64_t bytes;
} Sink;

static void
count_line (const char *line, size_t length, void *user_data)
{
  Sink *sink = user_data;
  sink->lines++;
  sink->bytes += length + 1;
}

/* ---------------------------------------------------------------------------
 * Format only
 */

static const char *const span_names[]
  = { "wick_demo.train", "forward", "backward", "optimizer.step", "trunk.fc1", "trunk.fc2",
      "embedding.lookup", "loss", "data.next_batch", "évaluation" };
static const uint64_t shape[] = { 256, 128 };

static WickRingRecord *
make_records (bool mixed, size_t *n_out)
{
  size_t steps = 200000, per_step = mixed ? 8 : 2, n = 0;
  WickRingRecord *records = calloc (steps * per_step + 1, sizeof *records);
  records[n].kind = WICK_RING_RECORD_META;
  records[n++].meta.line = "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/10\"}";
  uint64_t t = 1000000000, id = 2;
  for (size_t i = 0; i < steps; i++)
    {
      WickRingRecord *start = &records[n++];
      start->kind = WICK_RING_RECORD_SPAN_START;
      start->span.id = id;
      start->span.parent = 1;
      start->span.name = span_names[i % 10];
      start->span.span_kind = WICK_SPAN_FUNCTION;
      start->span.step = mixed ? WICK_STEP_FORWARD : WICK_STEP_NONE;
      start->span.start_ns = t;
      start->span.thread = mixed ? 1 + (uint32_t)(i % 2) : 0;
      if (mixed)
        {
          WickRingRecord *child = &records[n++];
          *child = *start;
          child->span.id = id + 1;
          child->span.parent = id;
          child->span.name = span_names[(i + 3) % 10];
          child->span.start_ns = t + 100;
          WickRingRecord *alloc = &records[n++];
          alloc->kind = WICK_RING_RECORD_MEMORY;
          alloc->memory = (WickMemoryRecord){ .timestamp_ns = t + 200,
                                              .storage_id = "activation.trunk.fc1",
                                              .tensor_id = "activation.trunk.fc1",
                                              .span = id + 1,
                                              .device = "cpu",
                                              .bytes = 131072,
                                              .action = WICK_MEMORY_ALLOC,
                                              .shape = shape,
                                              .rank = 2,
                                              .dtype = "f32",
                                              .category = WICK_CATEGORY_ACTIVATION };
          WickRingRecord *op = &records[n++];
          op->kind = WICK_RING_RECORD_OP;
          static const char *const inputs[] = { "x", "trunk.fc1.weight" };
          op->op = (WickOpRecord){ .span = id + 1,
                                   .op_name = "matmul",
                                   .inputs = inputs,
                                   .n_inputs = 2,
                                   .output = "activation.trunk.fc1",
                                   .shape = shape,
                                   .rank = 2,
                                   .dtype = "f32",
                                   .device = "cpu",
                                   .duration_ns = 1234,
                                   .timestamp_ns = t + 300,
                                   .input_dense_bytes = 262144 };
          WickRingRecord *free_record = &records[n++];
          *free_record = *alloc;
          free_record->memory.action = WICK_MEMORY_FREE;
          free_record->memory.timestamp_ns = t + 400;
          WickRingRecord *child_end = &records[n++];
          *child_end = *child;
          child_end->kind = WICK_RING_RECORD_SPAN_END;
          child_end->span.duration_ns = 500;
          WickRingRecord *tensor = &records[n++];
          tensor->kind = WICK_RING_RECORD_DEVICE_MEMORY;
          tensor->device_memory = (WickDeviceMemoryRecord){ .timestamp_ns = t + 600,
                                                            .device = "cpu",
                                                            .has_used_bytes = true,
                                                            .used_bytes = 17825792 + i };
        }
      WickRingRecord *end = &records[n++];
      *end = *start;
      end->kind = WICK_RING_RECORD_SPAN_END;
      end->span.duration_ns = mixed ? 900 : 37;
      t += 1000;
      id += 2;
    }
  *n_out = n;
  return records;
}

static double
format_new (const WickRingRecord *records, size_t n, Sink *sink)
{
  WickJsonlFormatter *formatter = wick_jsonl_formatter_new (false);
  double start = cpu_seconds (CLOCK_PROCESS_CPUTIME_ID);
  for (size_t i = 0; i < n; i++)
    wick_jsonl_formatter_feed (formatter, &records[i], count_line, sink);
  double seconds = cpu_seconds (CLOCK_PROCESS_CPUTIME_ID) - start;
  wick_jsonl_formatter_free (formatter);
  return seconds;
}

static double
format_baseline (const WickRingRecord *records, size_t n, Sink *sink)
{
  BaselineJsonlFormatter *formatter = baseline_jsonl_formatter_new (false);
  double start = cpu_seconds (CLOCK_PROCESS_CPUTIME_ID);
  for (size_t i = 0; i < n; i++)
    baseline_jsonl_formatter_feed (formatter, &records[i], count_line, sink);
  double seconds = cpu_seconds (CLOCK_PROCESS_CPUTIME_ID) - start;
  baseline_jsonl_formatter_free (formatter);
  return seconds;
}

/* The two must write the same bytes. */
typedef struct
{
  char *data;
  size_t length, capacity;
} Text;

static void
keep_line (const char *line, size_t length, void *user_data)
{
  Text *text = user_data;
  if (text->length + length + 1 > text->capacity)
    {
      text->capacity = (text->length + length + 1) * 2;
      text->data = realloc (text->data, text->capacity);
    }
  memcpy (text->data + text->length, line, length);
  text->length += length;
  text->data[text->length++] = '\n';
}

static void
check_same_output (const WickRingRecord *records, size_t n)
{
  Text a = { 0 }, b = { 0 };
  WickJsonlFormatter *f = wick_jsonl_formatter_new (false);
  BaselineJsonlFormatter *g = baseline_jsonl_formatter_new (false);
  for (size_t i = 0; i < n; i++)
    {
      wick_jsonl_formatter_feed (f, &records[i], keep_line, &a);
      baseline_jsonl_formatter_feed (g, &records[i], keep_line, &b);
    }
  wick_jsonl_formatter_finish (f, "bench", keep_line, &a);
  baseline_jsonl_formatter_finish (g, "bench", keep_line, &b);
  if (a.length != b.length || memcmp (a.data, b.data, a.length) != 0)
    {
      size_t at = 0;
      while (at < a.length && at < b.length && a.data[at] == b.data[at])
        at++;
      size_t from = at > 80 ? at - 80 : 0;
      fprintf (stderr,
               "bench: the two formatters wrote different text (%zu and %zu bytes), from byte "
               "%zu:\n  new:      %.160s\n  baseline: %.160s\n",
               a.length, b.length, at, a.data + from, b.data + from);
      exit (1);
    }
  wick_jsonl_formatter_free (f);
  baseline_jsonl_formatter_free (g);
  free (a.data);
  free (b.data);
}

static void
bench_format (const char *label, bool mixed, int rounds)
{
  size_t n;
  WickRingRecord *records = make_records (mixed, &n);
  check_same_output (records, n);
  double *old_rate = calloc ((size_t)rounds, sizeof *old_rate);
  double *new_rate = calloc ((size_t)rounds, sizeof *new_rate);
  double *ratio = calloc ((size_t)rounds, sizeof *ratio);
  Sink sink = { 0 };
  for (int r = 0; r < rounds; r++)
    {
      Sink a = { 0 }, b = { 0 };
      double t_old, t_new;
      if (r % 2 == 0)
        {
          t_old = format_baseline (records, n, &a);
          t_new = format_new (records, n, &b);
        }
      else
        {
          t_new = format_new (records, n, &b);
          t_old = format_baseline (records, n, &a);
        }
      old_rate[r] = (double)a.lines / t_old;
      new_rate[r] = (double)b.lines / t_new;
      ratio[r] = new_rate[r] / old_rate[r];
      sink = b;
    }
  double old_median = median (old_rate, rounds), new_median = median (new_rate, rounds);
  double ratio_median = median (ratio, rounds); /* sorts ratio */
  printf ("  %-10s %zu records -> %llu lines (%.0f B/line): baseline %6.1f M lines/CPU-s, "
          "new %6.1f M lines/CPU-s, ratio %.2fx (median of %d rounds, ratio range %.2f-%.2f)\n",
          label, n, (unsigned long long)sink.lines, (double)sink.bytes / (double)sink.lines,
          old_median / 1e6, new_median / 1e6, ratio_median, rounds, ratio[0], ratio[rounds - 1]);
  free (old_rate);
  free (new_rate);
  free (ratio);
  free (records);
}

/* ---------------------------------------------------------------------------
 * Drain (as bench-ring-hot-path's)
 */

static const WickRunInfo run = {
  .entrypoint = "bench",
  .phase = WICK_PHASE_INFER,
  .capture_step = 1,
  .device = "cpu",
  .timing_mode = WICK_TIMING_HOST,
};

typedef struct
{
  WickRingReader *reader;
  WickJsonlFormatter *formatter;
  BaselineJsonlFormatter *baseline;
  Sink sink;
  uint64_t records;
  double cpu;
  volatile int stop;
} Drainer;

static bool
drain_record (const WickRingRecord *record, void *user_data)
{
  Drainer *drainer = user_data;
  drainer->records++;
  baseline_jsonl_formatter_feed (drainer->baseline, record, count_line, &drainer->sink);
  return true;
}

/* The baseline is today's pipeline before this rewrite: every record decoded
 * into a WickRingRecord and handed to the (old) formatter by the callback.
 * The new one is the writer's: wick_ring_reader_drain_jsonl, span records
 * straight from the ring into the formatter's lines. */
static long
drain_some (Drainer *drainer)
{
  if (drainer->formatter == NULL)
    return wick_ring_reader_drain (drainer->reader, 0, drain_record, drainer, NULL);
  long n = wick_ring_reader_drain_jsonl (drainer->reader, 0, drainer->formatter, count_line,
                                         &drainer->sink, NULL, NULL, NULL);
  drainer->records += n > 0 ? (uint64_t)n : 0;
  return n;
}

static void *
drainer_thread (void *data)
{
  Drainer *drainer = data;
  double start = cpu_seconds (CLOCK_THREAD_CPUTIME_ID);
  for (;;)
    {
      int stopping = drainer->stop;
      long n = drain_some (drainer);
      if (stopping && n == 0)
        break;
      if (n == 0)
        usleep (50);
    }
  drainer->cpu = cpu_seconds (CLOCK_THREAD_CPUTIME_ID) - start;
  return NULL;
}

static void
drain_once (bool baseline, double seconds, double *lines_per_cpu, double *dropped_share)
{
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = 16u << 20, .max_threads = 4 };
  WickError error;
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  if (session == NULL)
    {
      fprintf (stderr, "bench: %s\n", error.message);
      exit (1);
    }
  WickString name = wick_intern (session, "work");
  Drainer drainer = { 0 };
  drainer.reader
    = wick_ring_reader_new_private_hold (session, NULL); /* as the JSONL writer */
  if (drainer.reader == NULL)
    {
      fprintf (stderr, "bench: no hold reader\n");
      exit (1);
    }
  if (baseline)
    drainer.baseline = baseline_jsonl_formatter_new (false);
  else
    drainer.formatter = wick_jsonl_formatter_new (false);
  pthread_t thread;
  pthread_create (&thread, NULL, drainer_thread, &drainer);
  uint64_t spans = 0;
  uint64_t start = wick_clock_monotonic_ns ();
  uint64_t deadline = start + (uint64_t)(seconds * 1e9);
  while (wick_clock_monotonic_ns () < deadline)
    for (int i = 0; i < 10000; i++, spans++)
      {
        WickSpanId span = wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION);
        wick_span_end (session, span);
      }
  drainer.stop = 1;
  pthread_join (thread, NULL);
  *lines_per_cpu = (double)drainer.sink.lines / drainer.cpu;
  *dropped_share = (double)wick_session_get_dropped (session) / (double)(2 * spans);
  wick_jsonl_formatter_free (drainer.formatter);
  baseline_jsonl_formatter_free (drainer.baseline);
  wick_ring_reader_free (drainer.reader);
  wick_session_close (session);
}

static void
bench_drain (int rounds, double seconds)
{
  double *old_rate = calloc ((size_t)rounds, sizeof *old_rate);
  double *new_rate = calloc ((size_t)rounds, sizeof *new_rate);
  double *old_drop = calloc ((size_t)rounds, sizeof *old_drop);
  double *new_drop = calloc ((size_t)rounds, sizeof *new_drop);
  for (int r = 0; r < rounds; r++)
    {
      bool baseline_first = r % 2 == 0;
      drain_once (baseline_first, seconds, baseline_first ? &old_rate[r] : &new_rate[r],
                  baseline_first ? &old_drop[r] : &new_drop[r]);
      drain_once (!baseline_first, seconds, baseline_first ? &new_rate[r] : &old_rate[r],
                  baseline_first ? &new_drop[r] : &old_drop[r]);
    }
  double old_median = median (old_rate, rounds), new_median = median (new_rate, rounds);
  printf ("  drain      hold reader, producer at full speed: baseline %6.1f M lines/CPU-s "
          "(producer dropped %.1f%%), new %6.1f M lines/CPU-s (dropped %.1f%%), ratio %.2fx "
          "(medians of %d rounds of %.1f s)\n",
          old_median / 1e6, 100 * median (old_drop, rounds), new_median / 1e6,
          100 * median (new_drop, rounds), new_median / old_median, rounds, seconds);
  free (old_rate);
  free (new_rate);
  free (old_drop);
  free (new_drop);
}

/* "profile [baseline]": the drain's work without the producer running at
 * the same time, for callgrind (instruction counts are steady on a loaded
 * machine): 150 000 empty spans recorded into a 16 MiB ring, then drained
 * by a hold reader into the formatter. */
static int
profile_drain (bool baseline)
{
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = 16u << 20, .max_threads = 4 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  if (session == NULL)
    return 1;
  WickString name = wick_intern (session, "work");
  Drainer drainer = { 0 };
  drainer.reader
    = wick_ring_reader_new_private_hold (session, NULL); /* as the JSONL writer */
  if (drainer.reader == NULL)
    {
      fprintf (stderr, "bench: no hold reader\n");
      exit (1);
    }
  if (baseline)
    drainer.baseline = baseline_jsonl_formatter_new (false);
  else
    drainer.formatter = wick_jsonl_formatter_new (false);
  for (int i = 0; i < 150000; i++)
    wick_span_end (session, wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION));
  while (drain_some (&drainer) > 0)
    ;
  printf ("%llu records, %llu lines, %llu dropped\n", (unsigned long long)drainer.records,
          (unsigned long long)drainer.sink.lines,
          (unsigned long long)wick_session_get_dropped (session));
  wick_jsonl_formatter_free (drainer.formatter);
  baseline_jsonl_formatter_free (drainer.baseline);
  wick_ring_reader_free (drainer.reader);
  wick_session_close (session);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "profile") == 0)
    return profile_drain (argc > 2 && strcmp (argv[2], "baseline") == 0);
  int rounds = argc > 1 ? atoi (argv[1]) : 7;
  double seconds = argc > 2 ? atof (argv[2]) : 1.0;
  if (rounds < 1)
    rounds = 1;
  printf ("JSONL formatter, this one against the one it replaced (same run):\n");
  bench_format ("spans", false, rounds);
  bench_format ("mixed", true, rounds);
  bench_drain (rounds, seconds);
  return 0;
}
