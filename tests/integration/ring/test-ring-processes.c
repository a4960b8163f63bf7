/* test-ring-processes.c — the ring between real processes: a forked producer
 * hands its memfd over a socket with SCM_RIGHTS (as the control socket does)
 * and the test process reads it. Exact counts under block, exact drop counts
 * under a slow hold reader, SIGKILL of the producer and of the reader.
 * Every wait is bounded; the test's timeout is the backstop. */
#include <wick/wick.h>

#include "wick-document.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wick-test-wait.h"

/* This run's own directory for trace files (runs in parallel must not share
 * a path). */
static char *tmp_dir;

static const WickRunInfo run = {
  .entrypoint = "ring::processes",
  .phase = WICK_PHASE_INFER,
  .capture_step = 1,
  .device = "cpu",
};

/* ---------------------------------------------------------------------------
 * fd passing
 */

static void
send_fd (int socket, int fd, uint64_t value)
{
  char control[CMSG_SPACE (sizeof (int))];
  struct iovec iov = { &value, sizeof value };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  memset (control, 0, sizeof control);
  if (fd >= 0)
    {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cmsg), &fd, sizeof (int));
    }
  g_assert_cmpint (sendmsg (socket, &msg, 0), ==, sizeof value);
}

static int
receive_fd (int socket, uint64_t *value)
{
  char control[CMSG_SPACE (sizeof (int))];
  uint64_t data = 0;
  struct iovec iov = { &data, sizeof data };
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control
  };
  if (recvmsg (socket, &msg, 0) != sizeof data)
    return -1;
  if (value != NULL)
    *value = data;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
  int fd = -1;
  if (cmsg != NULL && cmsg->cmsg_type == SCM_RIGHTS)
    memcpy (&fd, CMSG_DATA (cmsg), sizeof (int));
  return fd;
}

/* ---------------------------------------------------------------------------
 * Producers (run in the forked child; they report through the socket)
 */

typedef enum
{
  PRODUCE_SPANS_BLOCK,
  PRODUCE_EDGES_DROP,
  PRODUCE_FOREVER,
} ProducerKind;

#define SPANS 100000
#define OPS 1000
#define EDGES 200000

static void
produce (ProducerKind kind, int socket)
{
  WickSessionOptions options = { .ring_bytes = 256 * 1024, .max_threads = 2 };
  options.policy = kind == PRODUCE_SPANS_BLOCK ? WICK_RING_BLOCK : WICK_RING_DROP;
  WickError error;
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  if (session == NULL)
    _exit (10);
  send_fd (socket, wick_session_get_ring_fd (session), 0);
  send_fd (socket, wick_session_get_cursors_fd (session), 0);
  uint64_t go;
  if (read (socket, &go, sizeof go) != sizeof go) /* the reader is attached */
    _exit (11);
  uint64_t stored = 0;
  WickString name = wick_intern (session, "work");
  switch (kind)
    {
      case PRODUCE_SPANS_BLOCK:
        for (int i = 0; i < SPANS; i++)
          {
            WickSpanId span = wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION);
            if (i % (SPANS / OPS) == 0)
              {
                WickOpRecord op = { .span = span,
                                    .op_name = "add",
                                    .dtype = "f32",
                                    .device = "cpu",
                                    .duration_ns = 1,
                                    .timestamp_ns = 1 };
                stored += wick_session_record_op (session, &op, NULL);
              }
            stored += span != 0 && wick_span_end (session, span);
          }
        break;
      case PRODUCE_EDGES_DROP:
        for (int i = 0; i < EDGES; i++)
          stored += wick_session_record_call_edge (session, 1, 1, (uint64_t)i, NULL);
        break;
      case PRODUCE_FOREVER:
        for (;;)
          {
            WickSpanId span = wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION);
            wick_span_end (session, span);
          }
    }
  if (!wick_session_finish (session, &error))
    _exit (12);
  if (write (socket, &stored, sizeof stored) != sizeof stored)
    _exit (13);
  wick_session_close (session);
  _exit (0);
}

typedef struct
{
  pid_t pid;
  int socket;
  int ring_fd;
  int cursors_fd;
} Child;

static Child
spawn_producer (ProducerKind kind)
{
  int pair[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      wick_test_die_with_parent (NULL); /* never outlive a failed test */
      close (pair[0]);
      produce (kind, pair[1]);
    }
  close (pair[1]);
  Child child = { pid, pair[0], receive_fd (pair[0], NULL), -1 };
  child.cursors_fd = receive_fd (pair[0], NULL);
  g_assert_cmpint (child.ring_fd, >=, 0);
  g_assert_cmpint (child.cursors_fd, >=, 0);
  return child;
}

static void
child_go (Child *child)
{
  uint64_t go = 1;
  g_assert_cmpint (write (child->socket, &go, sizeof go), ==, sizeof go);
}

static int
child_wait (Child *child)
{
  int status = 0;
  g_assert_cmpint (waitpid (child->pid, &status, 0), ==, child->pid);
  close (child->socket);
  close (child->ring_fd);
  close (child->cursors_fd);
  return status;
}

/* ---------------------------------------------------------------------------
 * Reading
 */

typedef struct
{
  guint64 starts, ends, ops, edges, terminals, dropped, dropped_records, lost, records;
  guint64 next_edge;
  gboolean edges_in_order;
  WickJsonlFormatter *formatter;
  WickDocument *document;
} Tally;

static void
feed_document (const char *line, size_t length, void *user_data)
{
  Tally *tally = user_data;
  GError *error = NULL;
  if (!wick_document_feed_line (tally->document, line, length, &error))
    g_error ("the model refused line %.*s: %s", (int)length, line, error->message);
}

static bool
tally_record (const WickRingRecord *record, void *user_data)
{
  Tally *tally = user_data;
  tally->records++;
  switch (record->kind)
    {
      case WICK_RING_RECORD_SPAN_START:
        tally->starts++;
        break;
      case WICK_RING_RECORD_SPAN_END:
        tally->ends++;
        break;
      case WICK_RING_RECORD_OP:
        tally->ops++;
        break;
      case WICK_RING_RECORD_TERMINAL:
        tally->terminals++;
        break;
      case WICK_RING_RECORD_CALL_EDGE:
        if (record->call_edge.host_duration_ns < tally->next_edge)
          tally->edges_in_order = FALSE;
        tally->next_edge = record->call_edge.host_duration_ns + 1;
        tally->edges++;
        break;
      case WICK_RING_RECORD_DROPPED:
        tally->dropped_records++;
        tally->dropped += record->dropped.count;
        break;
      case WICK_RING_RECORD_LOST:
        tally->lost += record->lost.count;
        break;
      default:
        break;
    }
  if (tally->formatter != NULL)
    wick_jsonl_formatter_feed (tally->formatter, record, feed_document, tally);
  return true;
}

/* Drains until the producer is no longer running and everything is read,
 * sleeping sleep_us between batches of batch records. */
static WickProducerState
drain_until_done (WickRingReader *reader, Tally *tally, size_t batch, gulong sleep_us)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  for (;;)
    {
      WickProducerState state = wick_ring_reader_get_producer_state (reader);
      wick_ring_reader_drain (reader, batch, tally_record, tally, NULL);
      if (state != WICK_PRODUCER_RUNNING && wick_ring_reader_is_drained (reader))
        return state;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (sleep_us);
    }
}

static void
test_two_processes_exact_counts (void)
{
  Child child = spawn_producer (PRODUCE_SPANS_BLOCK);
  WickError error = { "" };
  WickRingReader *reader = wick_ring_reader_new_hold (child.ring_fd, child.cursors_fd, &error);
  g_assert_nonnull (reader);
  g_assert_cmpint (wick_ring_reader_get_info (reader)->pid, ==, child.pid);
  g_assert_cmpstr (wick_ring_reader_get_info (reader)->entrypoint, ==, "ring::processes");
  child_go (&child);
  Tally tally = { .edges_in_order = TRUE };
  g_assert_cmpint (drain_until_done (reader, &tally, 5000, 200), ==, WICK_PRODUCER_FINISHED);
  uint64_t stored = 0;
  g_assert_cmpint (read (child.socket, &stored, sizeof stored), ==, sizeof stored);
  g_assert_cmpuint (stored, ==, SPANS + OPS);
  g_assert_cmpuint (tally.starts, ==, SPANS + 1);
  g_assert_cmpuint (tally.ends, ==, SPANS + 1);
  g_assert_cmpuint (tally.ops, ==, OPS);
  g_assert_cmpuint (tally.terminals, ==, 1);
  g_assert_cmpuint (tally.lost + tally.dropped, ==, 0);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.producer_dropped, ==, 0);
  g_assert_cmpuint (stats.broken_rings + stats.malformed, ==, 0);
  g_assert_cmpint (WEXITSTATUS (child_wait (&child)), ==, 0);
  wick_ring_reader_free (reader);
}

static void
test_slow_reader_drop_exact (void)
{
  Child child = spawn_producer (PRODUCE_EDGES_DROP);
  WickRingReader *reader = wick_ring_reader_new_hold (child.ring_fd, child.cursors_fd, NULL);
  g_assert_nonnull (reader);
  child_go (&child);
  Tally tally = { .edges_in_order = TRUE };
  g_assert_cmpint (drain_until_done (reader, &tally, 300, 1000), ==, WICK_PRODUCER_FINISHED);
  uint64_t stored = 0;
  g_assert_cmpint (read (child.socket, &stored, sizeof stored), ==, sizeof stored);
  g_test_message ("producer stored %" G_GUINT64_FORMAT " of %d, reader told of %" G_GUINT64_FORMAT
                  " dropped in %" G_GUINT64_FORMAT " notices",
                  stored, EDGES, tally.dropped, tally.dropped_records);
  g_assert_cmpuint (stored, <, EDGES); /* the slow reader made it drop */
  g_assert_cmpuint (tally.edges, ==, stored);
  g_assert_cmpuint (tally.dropped, ==, EDGES - stored);
  g_assert_true (tally.edges_in_order);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.producer_dropped, ==, EDGES - stored);
  g_assert_cmpuint (stats.lost, ==, 0);
  g_assert_cmpint (WEXITSTATUS (child_wait (&child)), ==, 0);
  wick_ring_reader_free (reader);
}

static void
test_producer_killed (void)
{
  Child child = spawn_producer (PRODUCE_FOREVER);
  WickRingReader *reader = wick_ring_reader_new (child.ring_fd, NULL);
  g_assert_nonnull (reader);
  Tally tally = { .edges_in_order = TRUE,
                  .formatter = wick_jsonl_formatter_new (false),
                  .document = wick_document_new_with_extensions (TRUE) };
  child_go (&child);
  WICK_TEST_WAIT_UNTIL (
    (wick_ring_reader_drain (reader, 0, tally_record, &tally, NULL), tally.ends >= 10000), 60,
    "the producer's spans did not reach the reader: %" G_GUINT64_FORMAT " of 10000 ended",
    tally.ends);
  g_assert_cmpint (kill (child.pid, SIGKILL), ==, 0);
  int status = child_wait (&child);
  g_assert_true (WIFSIGNALED (status));
  gint64 started = g_get_monotonic_time ();
  g_assert_cmpint (drain_until_done (reader, &tally, 0, 1000), ==, WICK_PRODUCER_DEAD);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 5 * G_USEC_PER_SEC);
  wick_jsonl_formatter_finish (tally.formatter, "the producer died (SIGKILL)", feed_document,
                               &tally);
  GError *error = NULL;
  g_assert_true (wick_document_finish (tally.document, &error));
  g_assert_no_error (error);
  g_assert_false (wick_document_get_capture_complete (tally.document));
  /* the reason, and what this follower lost when the producer lapped it
   * (the terminal says every loss) */
  const char *reason = wick_document_get_terminal_reason (tally.document);
  g_assert_true (g_str_has_prefix (reason, "the producer died (SIGKILL)"));
  if (strcmp (reason, "the producer died (SIGKILL)") != 0)
    g_assert_nonnull (strstr (reason, "; records were lost: "));
  g_assert_cmpuint (tally.terminals, ==, 0);
  g_assert_cmpuint (tally.ends, >=, 10000);
  g_object_unref (tally.document);
  wick_jsonl_formatter_free (tally.formatter);
  wick_ring_reader_free (reader);
}

/* A hold reader's child (it never returns): holds the ring and never reads;
 * the producer must not stall forever on it. */
static void
hold_and_never_read (WickRingReader *reader)
{
  (void)reader;
  for (;;)
    pause ();
}

/* A hold reader's child: drains as a hold reader should, until it learns it
 * was detached (exit 0 when it was told why). */
static void
drain_until_detached (WickRingReader *reader)
{
  Tally tally = { 0 };
  for (;;)
    {
      wick_ring_reader_drain (reader, 0, tally_record, &tally, NULL);
      WickRingReaderStats stats;
      wick_ring_reader_get_stats (reader, &stats);
      if (stats.detached)
        {
          if (strstr (stats.first_error, "detached by the producer") != NULL)
            _exit (0);
          fprintf (stderr, "detached, but the reader's first error is: %s\n", stats.first_error);
          _exit (3);
        }
      g_usleep (1000);
    }
}

/* Forks a child that receives @session's ring and cursors over a socket
 * (as the control socket passes them), attaches as a hold reader and says
 * so, then runs @child_main. Returns once it has attached; @peer is this
 * end of the socket. */
static pid_t
fork_hold_reader (WickSession *session, void (*child_main) (WickRingReader *), int *peer)
{
  int pair[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      wick_test_die_with_parent (NULL);
      int fd = receive_fd (pair[1], NULL);
      int cursors_fd = receive_fd (pair[1], NULL);
      WickRingReader *reader = wick_ring_reader_new_hold (fd, cursors_fd, NULL);
      uint64_t attached = reader != NULL;
      if (write (pair[1], &attached, sizeof attached) != sizeof attached || reader == NULL)
        _exit (2);
      child_main (reader);
      _exit (4);
    }
  close (pair[1]);
  send_fd (pair[0], wick_session_get_ring_fd (session), 0);
  send_fd (pair[0], wick_session_get_cursors_fd (session), 0);
  uint64_t attached = 0;
  g_assert_cmpint (read (pair[0], &attached, sizeof attached), ==, sizeof attached);
  g_assert_cmpuint (attached, ==, 1);
  *peer = pair[0];
  return pid;
}

/* The reader is the child: it holds the ring (hold mode) and is killed while
 * the producer, here, is blocked on it. */
static void
test_reader_killed (void)
{
  WickSessionOptions options
    = { .policy = WICK_RING_BLOCK, .ring_bytes = 256 * 1024, .max_threads = 2 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  int peer;
  pid_t pid = fork_hold_reader (session, hold_and_never_read, &peer);

  /* nearly fill the ring (the thread record takes the rest): the block policy
   * waits on the child from the next record on */
  for (int i = 0; i < 7000; i++)
    g_assert_true (wick_session_record_call_edge (session, 1, 1, (uint64_t)i, NULL));
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  int status;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid); /* reaped: kill (pid, 0) says ESRCH */
  gint64 started = g_get_monotonic_time ();
  for (int i = 0; i < 100000; i++)
    g_assert_true (wick_session_record_call_edge (session, 1, 1, (uint64_t)i, NULL));
  gint64 elapsed = g_get_monotonic_time () - started;
  g_test_message ("the producer went on %" G_GINT64_FORMAT " us after the reader died", elapsed);
  g_assert_cmpint (elapsed, <, 5 * G_USEC_PER_SEC);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  close (peer);
  g_assert_true (wick_session_finish (session, NULL));
  wick_session_close (session);
}

/* A hostile reader: a child gets what hello gives (the
 * ring fd) and, as a hold reader would, the cursors fd, then tries to write
 * the ring every way it can (writable mmap, mprotect, reopening through
 * /proc read-write, write(), ftruncate, punching a hole), scribbles
 * pseudo-random bytes over all of the cursors and truncates them. The
 * producer here records all the while and must go on, its trace file whole. */
static int
hostile_reader (int ring_fd, int cursors_fd)
{
  int succeeded = 0; /* attacks on the ring that worked */
  struct stat st;
  if (fstat (ring_fd, &st) != 0)
    return 100;
  size_t bytes = (size_t)st.st_size;
  void *map = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
  if (map != MAP_FAILED)
    {
      succeeded++;
      memset (map, 0xa5, bytes);
    }
  void *ro = mmap (NULL, bytes, PROT_READ, MAP_SHARED, ring_fd, 0);
  if (ro == MAP_FAILED)
    return 101; /* reading must still work */
  if (mprotect (ro, bytes, PROT_READ | PROT_WRITE) == 0)
    {
      succeeded++;
      memset (ro, 0x5a, bytes);
    }
  char path[64];
  g_snprintf (path, sizeof path, "/proc/self/fd/%d", ring_fd);
  int rw = open (path, O_RDWR);
  if (rw >= 0)
    {
      void *again = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
      if (again != MAP_FAILED)
        {
          succeeded++;
          memset (again, 0x33, bytes);
        }
      char junk[4096];
      memset (junk, 0x77, sizeof junk);
      if (pwrite (rw, junk, sizeof junk, 4096) > 0)
        succeeded++;
      if (ftruncate (rw, 4096) == 0)
        succeeded++;
      if (fallocate (rw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes) == 0)
        succeeded++;
      close (rw);
    }
  if (ftruncate (ring_fd, 4096) == 0)
    succeeded++;
  /* the cursors are writable by design: scribble over every byte, then try to shrink them */
  if (fstat (cursors_fd, &st) != 0)
    return 102;
  uint8_t *cursors = mmap (NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                           cursors_fd, 0);
  if (cursors == MAP_FAILED)
    return 103;
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int round = 0; round < 200; round++)
    for (off_t i = 0; i < st.st_size; i++)
      {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        cursors[i] = (uint8_t)x;
      }
  if (ftruncate (cursors_fd, 4096) == 0 || ftruncate (cursors_fd, 0) == 0)
    succeeded += 10;
  return succeeded;
}

/* 100 spans, each with a call edge. */
static void
record_spans_with_edges (WickSession *session, WickString name, guint *spans)
{
  for (int i = 0; i < 100; i++, (*spans)++)
    {
      WickSpanId span = wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION);
      wick_session_record_call_edge (session, span, span, (uint64_t)i, NULL);
      wick_span_end (session, span);
    }
}

static void
test_hostile_reader (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "hostile-reader.jsonl", NULL);
  WickSessionOptions options = { .jsonl_path = path, .ring_bytes = 256 * 1024, .max_threads = 2 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  int pair[2];
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      wick_test_die_with_parent (NULL);
      int ring_fd = receive_fd (pair[1], NULL);
      int cursors_fd = receive_fd (pair[1], NULL);
      _exit (hostile_reader (ring_fd, cursors_fd));
    }
  close (pair[1]);
  send_fd (pair[0], wick_session_get_ring_fd (session), 0);
  send_fd (pair[0], wick_session_get_cursors_fd (session), 0);
  WickString name = wick_intern (session, "work");
  guint spans = 0;
  /* records all the while the child attacks */
  WICK_TEST_WAIT_UNTIL (
    (record_spans_with_edges (session, name, &spans), wick_test_child_exited (pid)), 60,
    "the hostile reader (pid %d) did not finish its attacks", (int)pid);
  int status = wick_test_wait_child (pid, 10, "the hostile reader");
  for (int i = 0; i < 1000; i++, spans++) /* and after the attack */
    wick_span_end (session, wick_span_begin_interned (session, name, WICK_SPAN_FUNCTION));
  close (pair[0]);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0); /* no attack on the ring worked */
  WickError error = { 0 };
  g_assert_true (wick_session_finish (session, &error));
  wick_session_close (session);

  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_assert_true (length > 0 && text[length - 1] == '\n');
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines) - 1, starts = 0, ends = 0;
  for (guint i = 0; i < n; i++)
    {
      starts += g_str_has_prefix (lines[i], "{\"kind\":\"span_start\"");
      ends += g_str_has_prefix (lines[i], "{\"kind\":\"span_end\"");
    }
  g_assert_cmpuint (starts, ==, ends);
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"complete\""));
  g_test_message ("%u spans recorded through the attack, %u in the file", spans, starts - 1);
  g_unlink (path);
}

/* A stalled hold reader: a child attaches as a hold reader
 * and drains until the test stops it with SIGSTOP. The producer here (drop
 * policy, writing its own JSONL file) must detach it after the hold timeout,
 * record the detach, and count every record it dropped meanwhile in the
 * file: wick_dropped lines (extension mode) or the terminal's reason
 * (strict). Continued, the child must see that it was detached. */
static void
stalled_hold_reader (gboolean strict)
{
  g_autofree char *path
    = g_build_filename (tmp_dir, strict ? "stalled-strict.jsonl" : "stalled.jsonl", NULL);
  WickSessionOptions options = { .jsonl_path = path,
                                 .strict = strict,
                                 .ring_bytes = 256 * 1024,
                                 .max_threads = 2,
                                 .hold_timeout_ms = 200 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  int peer;
  pid_t pid = fork_hold_reader (session, drain_until_detached, &peer);
  g_assert_cmpint (kill (pid, SIGSTOP), ==, 0);
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, WUNTRACED), ==, pid);
  g_assert_true (WIFSTOPPED (status));

  /* record until the producer has detached the stopped reader */
  WickRingReader *watch = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  g_assert_nonnull (watch);
  guint64 attempted = 0, stored = 0;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  WickRingReaderStats stats = { 0 };
  while (stats.detached_readers == 0)
    {
      for (int i = 0; i < 1000; i++, attempted++)
        stored += wick_session_record_call_edge (session, 1, 1, attempted, NULL);
      wick_ring_reader_get_stats (watch, &stats);
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
    }
  wick_ring_reader_free (watch);
  g_assert_cmpuint (stored, <, attempted); /* the stopped reader made it drop */
  for (int i = 0; i < 1000; i++, attempted++) /* and after the detach */
    stored += wick_session_record_call_edge (session, 1, 1, attempted, NULL);
  guint64 dropped = wick_session_get_dropped (session);
  g_test_message ("%s: %" G_GUINT64_FORMAT " edges, %" G_GUINT64_FORMAT " stored, %"
                  G_GUINT64_FORMAT " dropped",
                  strict ? "strict" : "extensions", attempted, stored, dropped);
  g_assert_cmpuint (dropped, ==, attempted - stored);
  WickError error = { 0 };
  g_assert_true (wick_session_finish (session, &error)); /* the terminal is written */
  wick_session_close (session);

  g_assert_cmpint (kill (pid, SIGCONT), ==, 0); /* the child sees it was detached */
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  close (peer);

  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (path, &text, &length, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines) - 1, edges = 0, detached = 0;
  guint64 dropped_in_file = 0;
  g_autofree char *detach_pid = g_strdup_printf ("\"pid\":%d,", (int)pid);
  for (guint i = 0; i < n; i++)
    {
      edges += g_str_has_prefix (lines[i], "{\"kind\":\"edge\"");
      /* Wick records ride in "wick_records" of standard lines */
      g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
      for (const char *p = strstr (lines[i], "{\"kind\":\"wick_reader_detached\""); p != NULL;
           p = strstr (p + 1, "{\"kind\":\"wick_reader_detached\""))
        {
          detached++;
          g_assert_nonnull (strstr (p, detach_pid));
          g_assert_nonnull (strstr (p, "\"timeout_ms\":200"));
        }
      for (const char *p = strstr (lines[i], "{\"kind\":\"wick_dropped\""); p != NULL;
           p = strstr (p + 1, "{\"kind\":\"wick_dropped\""))
        {
          const char *count = strstr (p, "\"count\":");
          g_assert_nonnull (count);
          dropped_in_file += g_ascii_strtoull (count + 8, NULL, 10);
        }
    }
  g_assert_cmpuint (edges, ==, stored);
  /* both modes: the terminal says what was lost */
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"failed\""));
  g_autofree char *counts = g_strdup_printf (
    "the session completed, but records were lost: %" G_GUINT64_FORMAT
    " dropped by the recorder, 0 lost by the reader, 1 stalled hold reader(s) detached",
    dropped);
  g_assert_nonnull (strstr (lines[n - 1], counts));
  if (strict)
    g_assert_cmpuint (detached + dropped_in_file, ==, 0);
  else
    {
      g_assert_cmpuint (detached, ==, 1);
      g_assert_cmpuint (dropped_in_file, ==, dropped);
      g_autofree char *keys = g_strdup_printf (
        ",\"wick_dropped\":%" G_GUINT64_FORMAT ",\"wick_lost\":0,\"wick_detached\":1", dropped);
      g_assert_nonnull (strstr (lines[n - 1], keys));
    }
  /* it parses by candle-graph's rules (Wick's extension records kept aside;
   * the self call edges are a health matter, not a parse one) */
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  GError *gerror = NULL;
  g_assert_true (wick_document_load_file (document, path, NULL, NULL, NULL, &gerror));
  g_assert_no_error (gerror);
  g_assert_false (wick_document_get_capture_complete (document));
  g_object_unref (document);
  /* wick-trace check does not call it clean: in both modes the terminal
   * says what was lost (candle-graph's rules read both files) */
  const char *wick_trace = g_getenv ("WICK_TRACE");
  if (wick_trace != NULL)
    {
      const char *argv[] = { wick_trace, "check", path, NULL };
      g_autofree char *out = NULL;
      int wait_status = 0;
      g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                   NULL, &wait_status, NULL));
      g_test_message ("%s", out);
      g_assert_nonnull (strstr (out, "capture failed"));
      g_assert_null (strstr (out, "parse error"));
    }
  g_unlink (path);
}

static void
test_stalled_hold_reader (void)
{
  stalled_hold_reader (FALSE);
}

static void
test_stalled_hold_reader_strict (void)
{
  stalled_hold_reader (TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("wick-ring-processes-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  g_test_add_func ("/integration/ring/two-processes-exact-counts", test_two_processes_exact_counts);
  g_test_add_func ("/integration/ring/slow-reader-drop-exact", test_slow_reader_drop_exact);
  g_test_add_func ("/integration/ring/producer-killed", test_producer_killed);
  g_test_add_func ("/integration/ring/reader-killed", test_reader_killed);
  g_test_add_func ("/integration/ring/hostile-reader", test_hostile_reader);
  g_test_add_func ("/integration/ring/stalled-hold-reader", test_stalled_hold_reader);
  g_test_add_func ("/integration/ring/stalled-hold-reader-strict",
                   test_stalled_hold_reader_strict);
  int status = g_test_run ();
  if (g_rmdir (tmp_dir) != 0)
    g_printerr ("could not remove %s\n", tmp_dir);
  g_free (tmp_dir);
  return status;
}
