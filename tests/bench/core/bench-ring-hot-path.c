/* bench-ring-hot-path.c — the cost of a span (begin + end) through the ring,
 * against, in the same run and alternating round by round:
 *   floor     the same two records (40 + 48 bytes, the same fields, the same
 *             clock) stored to a thread-local buffer of the same size;
 *   ring+reader  the ring while a follow reader drains it on another thread;
 *   lttng     two LTTng-UST tracepoints (begin, end);
 *   sysprof   a libsysprof-capture mark (begin time + duration) written by a
 *             SysprofCaptureWriter (to /dev/null);
 *   libwick.so   the ring through the shared library (WICK_LIBWICK), dlopen()ed,
 *             or linked at start when run under LD_PRELOAD=libwick.so.1: its
 *             TLS descriptors, which the static link above does not see.
 *   thread    the same spans through a WickThreadHandle (wick/wick-thread-handle.h:
 *             wick_thread_handle_get once, then the inline wick_span_begin_on /
 *             wick_span_end_on), static and through libwick.so's handle.
 * Each link mode's session and thread-handle figures end in one RESULT line
 * each: mode (static, dlopen, linked-at-start), variant (session, thread),
 * ns/span (median over rounds) and the ratio to the floor (median of the
 * per-round ratios), plus the thread handle's ratio to the session calls.
 * Then the drain rate: one producer at full speed on a 16 MiB ring against a
 * reader (decode only, decode + JSONL formatting, hold reader under drop).
 *
 * Prints medians over rounds and the ratios; never fails on timing.
 * Arguments: [rounds] [spans per round] [drain seconds].
 */
#include "wick-session-internal.h"
#include "wick-clock-private.h"

#include "bench-lttng-tp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysprof-capture.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#define RING_BYTES (16u << 20)

static const WickRunInfo run = {
  .entrypoint = "bench::hot_path",
  .phase = WICK_PHASE_TRAIN,
  .capture_step = 1,
  .device = "cpu",
};

static WickSession *
open_session (WickRingPolicy policy)
{
  WickSessionOptions options = { .policy = policy, .ring_bytes = RING_BYTES, .max_threads = 4 };
  WickError error;
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  if (session == NULL)
    {
      fprintf (stderr, "bench: %s\n", error.message);
      exit (1);
    }
  return session;
}

/* ---------------------------------------------------------------------------
 * The floor: the same records, the same clock, a thread-local buffer.
 */

static __thread uint8_t *floor_buffer; /* RING_BYTES, allocated by the measuring thread */
static __thread uint64_t floor_head;
static __thread uint64_t floor_next_id = 2;
static volatile uint64_t sink;

static inline uint64_t
floor_begin (uint32_t name)
{
  uint64_t now = wick_clock_now_ns ();
  WickSpanStartRecord *record = (void *)(floor_buffer + (floor_head & (RING_BYTES - 1)));
  uint64_t id = floor_next_id++;
  record->header = (WickRecordHeader){ 5, WICK_KIND_SPAN_START, 1, (uint32_t)id };
  record->span = (WickSpanPayload){ .id = id, .parent = 1, .name = name, .start_ns = now };
  floor_head += sizeof *record;
  return now;
}

static inline void
floor_end (uint64_t id, uint32_t name, uint64_t start)
{
  uint64_t now = wick_clock_now_ns ();
  WickSpanEndRecord *record = (void *)(floor_buffer + (floor_head & (RING_BYTES - 1)));
  record->header = (WickRecordHeader){ 6, WICK_KIND_SPAN_END, 1, (uint32_t)id };
  record->span = (WickSpanPayload){ .id = id, .parent = 1, .name = name, .start_ns = start };
  record->duration_ns = now - start;
  floor_head += sizeof *record;
}

static __attribute__ ((noinline)) void
run_floor (uint64_t spans)
{
  for (uint64_t i = 0; i < spans; i++)
    {
      uint64_t start = floor_begin (32);
      floor_end (floor_next_id - 1, 32, start);
    }
  sink = floor_head;
}

/* ---------------------------------------------------------------------------
 * The ring
 */

static WickSession *ring_session;
static WickString ring_name;

static __attribute__ ((noinline)) void
run_ring (uint64_t spans)
{
  for (uint64_t i = 0; i < spans; i++)
    {
      WickSpanId span = wick_span_begin_interned (ring_session, ring_name, WICK_SPAN_FUNCTION);
      wick_span_end (ring_session, span);
    }
}

/* The same spans on the thread's handle: the span calls inlined here. */
static WickThreadHandle *ring_thread;

static __attribute__ ((noinline)) void
run_thread (uint64_t spans)
{
  WickThreadHandle *thread = ring_thread;
  WickString name = ring_name;
  for (uint64_t i = 0; i < spans; i++)
    {
      WickSpanId span = wick_span_begin_on (thread, name, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      wick_span_end_on (thread, span);
    }
}

/* The same calls into libwick.so, loaded with dlopen (path in WICK_LIBWICK):
 * what a program linked against libwick pays, TLS descriptors
 * (-mtls-dialect=gnu2) included, where the static link above lets the
 * linker turn the thread-local producer cache into a local-exec access.
 * Run under LD_PRELOAD=libwick.so.1 it is the start-up linked case. */
static struct
{
  void *handle;
  WickSession *(*open) (const WickRunInfo *, const WickCaptureContract *,
                        const WickSessionOptions *, WickError *);
  void (*close) (WickSession *);
  WickString (*intern) (WickSession *, const char *);
  WickSpanId (*begin) (WickSession *, WickString, WickSpanKind);
  bool (*end) (WickSession *, WickSpanId);
  WickThreadHandle *(*thread_get) (WickSession *);
  WickSession *session;
  WickString name;
  WickThreadHandle *thread;
} shared;

static bool
shared_open (void)
{
  const char *path = getenv ("WICK_LIBWICK");
  if (path == NULL || (shared.handle = dlopen (path, RTLD_NOW | RTLD_LOCAL)) == NULL)
    return false;
  shared.open = (void *)dlsym (shared.handle, "wick_session_open");
  shared.close = (void *)dlsym (shared.handle, "wick_session_close");
  shared.intern = (void *)dlsym (shared.handle, "wick_intern");
  shared.begin = (void *)dlsym (shared.handle, "wick_span_begin_interned");
  shared.end = (void *)dlsym (shared.handle, "wick_span_end");
  shared.thread_get = (void *)dlsym (shared.handle, "wick_thread_handle_get");
  if (shared.open == NULL || shared.close == NULL || shared.intern == NULL || shared.begin == NULL
      || shared.end == NULL || shared.thread_get == NULL)
    return false;
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = RING_BYTES, .max_threads = 4 };
  WickError error;
  shared.session = shared.open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  if (shared.session == NULL)
    return false;
  shared.name = shared.intern (shared.session, "work");
  shared.thread = shared.thread_get (shared.session);
  return true;
}

static __attribute__ ((noinline)) void
run_shared (uint64_t spans)
{
  for (uint64_t i = 0; i < spans; i++)
    {
      WickSpanId span = shared.begin (shared.session, shared.name, WICK_SPAN_FUNCTION);
      shared.end (shared.session, span);
    }
}

/* libwick.so's handle: the inline calls here, its slow paths in libwick.so. */
static __attribute__ ((noinline)) void
run_shared_thread (uint64_t spans)
{
  WickThreadHandle *thread = shared.thread;
  WickString name = shared.name;
  for (uint64_t i = 0; i < spans; i++)
    {
      WickSpanId span = wick_span_begin_on (thread, name, WICK_SPAN_FUNCTION, WICK_STEP_NONE);
      wick_span_end_on (thread, span);
    }
}

/* A follow reader draining ring_session on another thread. */
static volatile int reader_stop;
static uint64_t reader_records;

static bool
count_record (const WickRingRecord *record, void *user_data)
{
  (*(uint64_t *)user_data)++;
  return true;
}

static void *
follow_reader_thread (void *data)
{
  WickRingReader *reader = data;
  while (!reader_stop)
    if (wick_ring_reader_drain (reader, 0, count_record, &reader_records, NULL) == 0)
      usleep (100);
  return NULL;
}

/* ---------------------------------------------------------------------------
 * Peers
 */

static __attribute__ ((noinline)) void
run_lttng (uint64_t spans)
{
  for (uint64_t i = 0; i < spans; i++)
    {
      lttng_ust_tracepoint (wick_bench, span_begin, i + 2, 1, 32);
      lttng_ust_tracepoint (wick_bench, span_end, i + 2, 0);
    }
}

static SysprofCaptureWriter *sysprof_writer;

static __attribute__ ((noinline)) void
run_sysprof (uint64_t spans)
{
  for (uint64_t i = 0; i < spans; i++)
    {
      int64_t begin = SYSPROF_CAPTURE_CURRENT_TIME;
      int64_t end = SYSPROF_CAPTURE_CURRENT_TIME;
      sysprof_capture_writer_add_mark (sysprof_writer, begin, -1, 1, (uint64_t)(end - begin),
                                       "bench", "work", "");
    }
}

/* ---------------------------------------------------------------------------
 * Measuring
 */

typedef struct
{
  const char *name;
  void (*run) (uint64_t spans);
  double *samples;
  const char *mode; /* RESULT line: link mode and variant (NULL: none) */
  const char *variant;
} Contender;

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, (size_t)n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static double
time_round (void (*func) (uint64_t), uint64_t spans)
{
  uint64_t start = wick_clock_monotonic_ns ();
  func (spans);
  return (double)(wick_clock_monotonic_ns () - start) / (double)spans;
}

static void
bench_hot_path (int rounds, uint64_t spans)
{
  floor_buffer = aligned_alloc (4096, RING_BYTES);
  ring_session = open_session (WICK_RING_DROP);
  ring_name = wick_intern (ring_session, "work");
  ring_thread = wick_thread_handle_get (ring_session);
  int null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  sysprof_writer = sysprof_capture_writer_new_from_fd (null_fd, RING_BYTES);

  /* LD_PRELOAD names libwick.so: it was loaded at start (static TLS); else
   * dlopen() loads it now (dynamic TLS). valgrind sets LD_PRELOAD too. */
  const char *preload = getenv ("LD_PRELOAD");
  bool at_start = preload != NULL && strstr (preload, "libwick") != NULL;
  const char *shared_mode = at_start ? "linked-at-start" : "dlopen";
  Contender contenders[] = {
    { "floor (thread-local buffer)", run_floor, NULL, NULL, NULL },
    { "wick ring", run_ring, NULL, "static", "session" },
    { "wick ring, thread handle (inline)", run_thread, NULL, "static", "thread" },
    { "wick ring + follow reader", run_ring, NULL, NULL, NULL },
    { lttng_ust_tracepoint_enabled (wick_bench, span_begin) ? "lttng-ust tracepoints (session)"
                                                            : "lttng-ust tracepoints (no session)",
      run_lttng, NULL, NULL, NULL },
    { "libsysprof-capture mark", run_sysprof, NULL, NULL, NULL },
    { at_start ? "wick ring, libwick.so linked at start" : "wick ring, libwick.so dlopen()ed",
      run_shared, NULL, shared_mode, "session" },
    { at_start ? "thread handle, libwick.so linked at start"
               : "thread handle, libwick.so dlopen()ed",
      run_shared_thread, NULL, shared_mode, "thread" },
  };
  int n = sizeof contenders / sizeof contenders[0];
  if (!shared_open ())
    {
      printf ("  (no libwick.so contenders: WICK_LIBWICK is not set or did not load)\n");
      n -= 2; /* the libwick.so contenders are the last two */
    }
  for (int c = 0; c < n; c++)
    contenders[c].samples = calloc ((size_t)rounds, sizeof (double));

  for (int c = 0; c < n; c++) /* warm-up: touch every page once */
    contenders[c].run (spans / 4 + 1);

  for (int r = 0; r < rounds; r++)
    for (int c = 0; c < n; c++)
      {
        pthread_t reader_thread;
        WickRingReader *reader = NULL;
        if (c == 3)
          {
            reader = wick_ring_reader_new (wick_session_get_ring_fd (ring_session), NULL);
            reader_stop = 0;
            pthread_create (&reader_thread, NULL, follow_reader_thread, reader);
          }
        contenders[c].samples[r] = time_round (contenders[c].run, spans);
        if (c == 3)
          {
            reader_stop = 1;
            pthread_join (reader_thread, NULL);
            wick_ring_reader_free (reader);
          }
      }

  /* Each round runs every contender once, back to back: the ratio to the
   * floor within a round is robust to the load of a shared machine drifting
   * between rounds, so that is what the ratio column is (median over rounds). */
  double *ratios = calloc ((size_t)rounds, sizeof (double));
  printf ("span begin+end, %d rounds of %llu spans, clock %s, ns/span (median, min) and "
          "the median of the per-round ratio to the floor:\n",
          rounds, (unsigned long long)spans, wick_clock_describe ());
  double *floor_samples = calloc ((size_t)rounds, sizeof (double));
  memcpy (floor_samples, contenders[0].samples, (size_t)rounds * sizeof (double));
  double floor_median = 0, ratio_of[16] = { 0 }, median_of[16] = { 0 };
  /* the session contender of the same mode, for the handle's ratio to it */
  double *sessions[16] = { NULL };
  for (int c = 0; c < n; c++)
    {
      if (contenders[c].variant != NULL && strncmp (contenders[c].variant, "thread", 6) == 0)
        for (int d = 0; d < n; d++)
          if (contenders[d].mode != NULL && strcmp (contenders[d].mode, contenders[c].mode) == 0
              && strcmp (contenders[d].variant, "session") == 0)
            sessions[c] = contenders[d].samples;
      for (int r = 0; r < rounds; r++)
        ratios[r] = contenders[c].samples[r] / floor_samples[r];
      ratio_of[c] = median (ratios, rounds);
      double *sorted = calloc ((size_t)rounds, sizeof (double));
      memcpy (sorted, contenders[c].samples, (size_t)rounds * sizeof (double));
      median_of[c] = median (sorted, rounds);
      printf ("  %-44s %7.2f ns  (min %6.2f)  %.2fx floor\n", contenders[c].name, median_of[c],
              sorted[0], ratio_of[c]);
      free (sorted);
    }
  floor_median = median_of[0];
  for (int c = 0; c < n; c++)
    {
      if (contenders[c].mode == NULL)
        continue;
      double to_session = 1.0;
      if (sessions[c] != NULL)
        {
          for (int r = 0; r < rounds; r++)
            ratios[r] = contenders[c].samples[r] / sessions[c][r];
          to_session = median (ratios, rounds);
        }
      printf ("RESULT mode=%s variant=%s ns_per_span=%.2f floor_ns=%.2f ratio_to_floor=%.3f "
              "ratio_to_session=%.3f target=1.10 %s\n",
              contenders[c].mode, contenders[c].variant, median_of[c], floor_median, ratio_of[c],
              to_session, ratio_of[c] <= 1.10 ? "met" : "not-met");
    }
  free (ratios);
  free (floor_samples);
  printf ("  ring dropped %llu records (expected 0: no hold reader)\n",
          (unsigned long long)wick_session_get_dropped (ring_session));
  sysprof_capture_writer_unref (sysprof_writer);
  wick_session_close (ring_session);
  if (shared.session != NULL)
    shared.close (shared.session);
  for (int c = 0; c < n; c++)
    free (contenders[c].samples);
}

/* ---------------------------------------------------------------------------
 * Drain rate
 */

typedef struct
{
  WickRingReader *reader;
  WickJsonlFormatter *formatter;
  uint64_t records;
  uint64_t lines;
  uint64_t bytes;
  volatile int stop;
} Drainer;

static void
count_line (const char *line, size_t length, void *user_data)
{
  Drainer *drainer = user_data;
  drainer->lines++;
  drainer->bytes += length + 1;
}

static bool
drain_record (const WickRingRecord *record, void *user_data)
{
  Drainer *drainer = user_data;
  drainer->records++;
  if (drainer->formatter != NULL)
    wick_jsonl_formatter_feed (drainer->formatter, record, count_line, drainer);
  return true;
}

static void *
drainer_thread (void *data)
{
  Drainer *drainer = data;
  for (;;)
    {
      int stopping = drainer->stop;
      long n = wick_ring_reader_drain (drainer->reader, 0, drain_record, drainer, NULL);
      if (stopping && n == 0)
        return NULL;
      if (n == 0)
        usleep (50);
    }
}

static void
bench_drain (const char *label, WickRingPolicy policy, WickRingReaderMode mode, bool format,
             double seconds)
{
  WickSession *session = open_session (policy);
  WickString name = wick_intern (session, "work");
  Drainer drainer = { 0 };
  drainer.reader = mode == WICK_RING_READER_HOLD
                     ? wick_ring_reader_new_hold (wick_session_get_ring_fd (session),
                                                  wick_session_get_cursors_fd (session), NULL)
                     : wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  drainer.formatter = format ? wick_jsonl_formatter_new (false) : NULL;
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
  double elapsed = (double)(wick_clock_monotonic_ns () - start) / 1e9;
  drainer.stop = 1;
  pthread_join (thread, NULL);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (drainer.reader, &stats);
  uint64_t produced = 2 * spans;
  printf ("  %-44s producer %6.1f M records/s; reader %6.1f M records/s (%.0f MB/s of JSONL); "
          "lost %llu, dropped %llu of %llu (%.2f%%)\n",
          label, produced / elapsed / 1e6, (double)(drainer.records) / elapsed / 1e6,
          (double)drainer.bytes / elapsed / 1e6, (unsigned long long)stats.lost,
          (unsigned long long)wick_session_get_dropped (session), (unsigned long long)produced,
          100.0 * (double)(stats.lost + wick_session_get_dropped (session)) / (double)produced);
  wick_jsonl_formatter_free (drainer.formatter);
  wick_ring_reader_free (drainer.reader);
  wick_session_close (session);
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 11;
  uint64_t spans = argc > 2 ? strtoull (argv[2], NULL, 10) : 1000000;
  double seconds = argc > 3 ? atof (argv[3]) : 1.0;
  bench_hot_path (rounds, spans);
  printf ("drain: one producer at full speed, 16 MiB ring, %.1f s each:\n", seconds);
  bench_drain ("follow reader, decode only", WICK_RING_DROP, WICK_RING_READER_FOLLOW, false,
               seconds);
  bench_drain ("follow reader, decode + JSONL format", WICK_RING_DROP, WICK_RING_READER_FOLLOW,
               true, seconds);
  bench_drain ("hold reader (drop policy), decode only", WICK_RING_DROP, WICK_RING_READER_HOLD,
               false, seconds);
  bench_drain ("hold reader (drop policy), decode + format", WICK_RING_DROP, WICK_RING_READER_HOLD,
               true, seconds);
  return 0;
}
