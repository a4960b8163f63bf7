/* test-ring.c — the live ring inside one process: drop counting to the
 * record, block policy lossless under a slow reader, a lapped follow reader
 * counting exactly what it lost, a late reader's open-span snapshot, and a
 * reader facing corrupt framing, corrupt payloads and foreign files. */
#include "wick-session-internal.h"

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const WickRunInfo run = {
  .entrypoint = "ring::test",
  .phase = WICK_PHASE_INFER,
  .capture_step = 1,
  .device = "cpu",
};

static WickSession *
open_session (WickRingPolicy policy)
{
  /* hold readers here stop draining on purpose: never detached for it */
  WickSessionOptions options = {
    .policy = policy, .ring_bytes = 256 * 1024, .max_threads = 4, .hold_timeout_ms = UINT64_MAX
  };
  WickError error = { "" };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, &error);
  g_assert_cmpstr (error.message, ==, "");
  g_assert_nonnull (session);
  return session;
}

typedef struct
{
  guint meta, span_starts, span_ends, edges, dropped_records, lost_records, marks, threads;
  guint detached, broken; /* wick_reader_detached, wick_ring_broken (not marks) */
  guint64 dropped, lost, dropped_total, first_ns, last_ns;
  guint64 last_edge;
  gboolean edges_in_order;
  GPtrArray *names;
} Counts;

static bool
count_record (const WickRingRecord *record, void *user_data)
{
  Counts *c = user_data;
  switch (record->kind)
    {
      case WICK_RING_RECORD_META:
        c->meta++;
        break;
      case WICK_RING_RECORD_SPAN_START:
        c->span_starts++;
        if (c->names != NULL)
          g_ptr_array_add (c->names,
                           g_strdup_printf ("%s s%" G_GUINT64_FORMAT " <s%" G_GUINT64_FORMAT "%s",
                                            record->span.name, record->span.id, record->span.parent,
                                            record->span.synthesized ? " synthesized" : ""));
        break;
      case WICK_RING_RECORD_SPAN_END:
        c->span_ends++;
        break;
      case WICK_RING_RECORD_CALL_EDGE:
        if (c->edges > 0 && record->call_edge.host_duration_ns <= c->last_edge)
          c->edges_in_order = FALSE;
        c->last_edge = record->call_edge.host_duration_ns;
        c->edges++;
        break;
      case WICK_RING_RECORD_DROPPED:
        c->dropped_records++;
        c->dropped += record->dropped.count;
        c->dropped_total = record->dropped.total;
        c->first_ns = record->dropped.first_ns;
        c->last_ns = record->dropped.last_ns;
        break;
      case WICK_RING_RECORD_LOST:
        c->lost_records++;
        c->lost += record->lost.count;
        break;
      case WICK_RING_RECORD_EXTENSION:
        if (strcmp (record->extension.kind, "wick_reader_detached") == 0)
          c->detached++;
        else if (strcmp (record->extension.kind, "wick_ring_broken") == 0)
          c->broken++;
        else
          c->marks++;
        break;
      case WICK_RING_RECORD_THREAD:
        c->threads++;
        break;
      default:
        break;
    }
  return true;
}

static gboolean
record_edge (WickSession *session, guint64 value)
{
  return wick_session_record_call_edge (session, 1, 2, value, NULL);
}

static void
test_drop_counting_exact (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickError error = { "" };
  WickRingReader *holder
    = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), &error);
  g_assert_nonnull (holder);
  const guint total = 20000;
  guint stored = 0;
  for (guint i = 0; i < total; i++)
    if (record_edge (session, i))
      stored++;
  /* 32-byte records, 2048 to a 64 KiB chunk, a 256 KiB ring less the 12 KiB
   * kept for span ends (384 records); the thread's 48-byte wick_thread record
   * (name "test-ring") comes first and costs two */
  g_assert_cmpuint (stored, ==, 8192 - 384 - 2);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, total - stored);
  g_assert_false (wick_session_record_call_edge (session, 1, 2, 0, &error));
  g_assert_cmpstr (error.message, ==, "dropped: the ring is full (drop policy)");
  g_assert_cmpint (error.code, ==, WICK_ERROR_DROPPED);
  guint64 before = wick_session_now_ns (session);

  Counts c = { .edges_in_order = TRUE };
  /* meta, the snapshot's thread 1, s1, the stream's thread record, the edges */
  g_assert_cmpint (wick_ring_reader_drain (holder, 0, count_record, &c, NULL), ==, 4 + stored);
  g_assert_cmpuint (c.meta, ==, 1);
  g_assert_cmpuint (c.threads, ==, 2);
  g_assert_cmpuint (c.span_starts, ==, 1);
  g_assert_cmpuint (c.edges, ==, stored);
  g_assert_true (c.edges_in_order);
  g_assert_cmpuint (c.dropped_records, ==, 0);

  g_assert_true (record_edge (session, 99999)); /* space again: the drop is announced first */
  Counts after = { .edges_in_order = TRUE };
  g_assert_cmpint (wick_ring_reader_drain (holder, 0, count_record, &after, NULL), ==, 2);
  g_assert_cmpuint (after.dropped_records, ==, 1);
  g_assert_cmpuint (after.dropped, ==, total - stored + 1);
  g_assert_cmpuint (after.dropped_total, ==, total - stored + 1);
  g_assert_cmpuint (after.first_ns, <=, after.last_ns);
  g_assert_cmpuint (after.last_ns, <=, before);
  g_assert_cmpuint (after.edges, ==, 1);
  g_assert_cmpuint (after.last_edge, ==, 99999);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (holder, &stats);
  g_assert_cmpuint (stats.producer_dropped, ==, total - stored + 1);
  g_assert_cmpuint (stats.lost, ==, 0);
  wick_ring_reader_free (holder);
  wick_session_close (session);
}

typedef struct
{
  WickRingReader *reader;
  Counts counts;
  gint stop;
} SlowReader;

static gpointer
slow_reader_thread (gpointer data)
{
  SlowReader *slow = data;
  for (;;)
    {
      gboolean stopping = g_atomic_int_get (&slow->stop);
      wick_ring_reader_drain (slow->reader, 1000, count_record, &slow->counts, NULL);
      if (stopping && wick_ring_reader_is_drained (slow->reader))
        return NULL;
      g_usleep (500);
    }
}

static void
test_block_lossless (void)
{
  WickSession *session = open_session (WICK_RING_BLOCK);
  SlowReader slow = { .counts.edges_in_order = TRUE };
  slow.reader
    = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), NULL);
  GThread *thread = g_thread_new ("slow-reader", slow_reader_thread, &slow);
  const guint total = 100000;
  for (guint i = 0; i < total; i++)
    g_assert_true (record_edge (session, i));
  g_atomic_int_set (&slow.stop, 1);
  g_thread_join (thread);
  g_assert_cmpuint (slow.counts.edges, ==, total);
  g_assert_true (slow.counts.edges_in_order);
  g_assert_cmpuint (slow.counts.dropped_records, ==, 0);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  wick_ring_reader_free (slow.reader);
  wick_session_close (session);
}

static void
test_follow_reader_lapped (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickRingReader *follower = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  const guint total = 100000;
  for (guint i = 0; i < total; i++)
    g_assert_true (record_edge (session, i)); /* no hold reader: nothing is dropped */
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  Counts c = { .edges_in_order = TRUE };
  wick_ring_reader_drain (follower, 0, count_record, &c, NULL);
  g_assert_cmpuint (c.lost_records, ==, 1);
  g_assert_cmpuint (c.edges + c.lost, ==, total + 1); /* the thread's wick_thread record too */
  g_assert_true (c.edges_in_order);
  g_assert_cmpuint (c.last_edge, ==, total - 1);
  /* what survives: from the first chunk boundary past the danger zone (the
   * largest record) to the end: commit 3200064 (the 48-byte thread record and
   * 16 bytes of padding in the first chunk), safe from 2954304, chunk
   * boundary 3014656 */
  g_assert_cmpuint (c.edges, ==, (3200064 - 3014656) / 32);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (follower, &stats);
  g_assert_cmpuint (stats.lost, ==, c.lost);
  g_assert_true (wick_ring_reader_is_drained (follower));
  g_assert_cmpint (wick_ring_reader_get_producer_state (follower), ==, WICK_PRODUCER_RUNNING);
  wick_ring_reader_free (follower);
  wick_session_close (session);
}

static void
test_late_reader_snapshot (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickSpanId outer = wick_span_begin_step (session, "epoch", WICK_SPAN_FUNCTION, WICK_STEP_NONE);
  WickSpanId inner = wick_span_begin_step (session, "forward", WICK_SPAN_MODULE, WICK_STEP_FORWARD);
  WickRingReader *late = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  const WickRingInfo *info = wick_ring_reader_get_info (late);
  g_assert_cmpint (info->pid, ==, getpid ());
  g_assert_cmpstr (info->entrypoint, ==, "ring::test");
  g_assert_cmpstr (info->run_id, ==, wick_session_get_run_id (session));
  g_assert_cmpuint (info->start_unix_ns, ==, wick_session_get_start_unix_ns (session));
  g_assert_cmpint (info->policy, ==, WICK_RING_DROP);
  g_assert_cmpuint (info->ring_bytes, ==, 256 * 1024);
  g_assert_true (wick_span_end (session, inner));
  g_assert_true (wick_span_end (session, outer));
  Counts c = { .names = g_ptr_array_new_with_free_func (g_free) };
  wick_ring_reader_drain (late, 0, count_record, &c, NULL);
  g_assert_cmpuint (c.meta, ==, 1);
  g_assert_cmpuint (c.names->len, ==, 3);
  g_assert_cmpstr (c.names->pdata[0], ==, "ring::test s1 <s0");
  g_assert_cmpstr (c.names->pdata[1], ==, "epoch s2 <s1 synthesized");
  g_assert_cmpstr (c.names->pdata[2], ==, "forward s3 <s2 synthesized");
  g_assert_cmpuint (c.span_ends, ==, 2);
  g_assert_true (wick_session_finish (session, NULL));
  g_assert_cmpint (wick_ring_reader_get_producer_state (late), ==, WICK_PRODUCER_FINISHED);
  g_ptr_array_unref (c.names);
  wick_ring_reader_free (late);
  wick_session_close (session);
}

/* A writable view of the session's ring, to corrupt it like a hostile or
 * broken producer would. */
static uint8_t *
map_ring (WickSession *session, size_t *bytes)
{
  /* the producer's own mapping: the memfd is sealed against new writable maps */
  *bytes = session->map_bytes;
  return session->map;
}

static WickRecordHeader *
record_at (uint8_t *map, uint64_t position)
{
  WickRingHeader *header = (WickRingHeader *)(void *)map;
  return (WickRecordHeader *)(void *)(map + header->data_offset + position);
}

static void
test_malformed_framing (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  size_t bytes;
  uint8_t *map = map_ring (session, &bytes);
  WickRingReader *reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  g_assert_true (record_edge (session, 1)); /* position t, after the thread's record */
  uint64_t t = atomic_load (&wick_session_control (session, 0)->commit) - 32;
  g_assert_true (record_edge (session, 2));               /* t + 32 */
  g_assert_true (record_edge (session, 3));               /* t + 64 */
  g_assert_true (wick_session_mark (session, "m", NULL)); /* t + 96 */
  record_at (map, t)->kind = 200;                         /* unknown kind: skipped by its length */
  uint32_t bad_length = 4000; /* the mark's kind string runs past the record */
  memcpy ((uint8_t *)record_at (map, t + 96) + 8, &bad_length, 4);
  record_at (map, t + 64)->words = 0; /* zero length: ends the ring */
  Counts c = { .edges_in_order = TRUE };
  wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
  g_assert_cmpuint (c.edges, ==, 1);
  g_assert_cmpuint (c.last_edge, ==, 2);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.unknown_skipped, ==, 1);
  g_assert_cmpuint (stats.broken_rings, ==, 1);
  g_autofree char *zero = g_strdup_printf (
    "ring 0 at position %" G_GUINT64_FORMAT ": zero record length (0); reading of this ring stopped",
    t + 64);
  g_assert_cmpstr (stats.first_error, ==, zero);
  /* a broken ring stays ended: no spin, nothing more from it */
  g_assert_cmpint (wick_ring_reader_drain (reader, 0, count_record, &c, NULL), ==, 0);
  wick_ring_reader_free (reader);

  record_at (map, t + 64)->words = 4;
  reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  g_assert_true (record_edge (session, 4)); /* t + 144 (the mark is 48 bytes) */
  record_at (map, t + 144)->words = 3000;
  wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
  wick_ring_reader_get_stats (reader, &stats);
  g_autofree char *past = g_strdup_printf ("ring 0 at position %" G_GUINT64_FORMAT
                                           ": record length runs past the committed data (24000); "
                                           "reading of this ring stopped",
                                           t + 144);
  g_assert_cmpstr (stats.first_error, ==, past);
  wick_ring_reader_free (reader);

  reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  g_assert_true (wick_session_mark (session, "m", NULL)); /* t + 176 */
  memcpy ((uint8_t *)record_at (map, t + 176) + 8, &bad_length, 4);
  g_assert_true (record_edge (session, 5));
  Counts d = { .edges_in_order = TRUE };
  wick_ring_reader_drain (reader, 0, count_record, &d, NULL);
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.malformed, ==, 1);
  g_assert_cmpuint (d.marks, ==, 0);
  g_assert_cmpuint (d.edges, ==, 1);
  /* seq 6: the thread record, four edges and a mark came before it */
  g_assert_cmpstr (stats.first_error, ==,
                   "ring 0: record kind 13 seq 6: a string length runs past the end of the record");
  wick_ring_reader_free (reader);
  wick_session_close (session);
}

static void
assert_reader_refused (const void *data, size_t size, const char *expected)
{
  int fd = memfd_create ("not-a-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, data, size), ==, (gssize)size);
  g_assert_cmpint (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK), ==, 0);
  WickError error = { "" };
  g_assert_null (wick_ring_reader_new (fd, &error));
  g_assert_cmpstr (error.message, ==, expected);
  close (fd);
}

static void
test_foreign_files (void)
{
  char junk[8192] = "definitely not a ring";
  assert_reader_refused (junk, 16, "not a Wick ring (16 bytes, smaller than its header)");
  assert_reader_refused (junk, sizeof junk, "not a Wick ring (bad magic)");
  WickRingHeader header = { .magic = WICK_RING_MAGIC, .version = 3 };
  memcpy (junk, &header, sizeof header);
  assert_reader_refused (junk, sizeof junk,
                         "ring format version 3 is not supported (this reader reads 2)");
  header.version = 2;
  header.header_bytes = WICK_RING_HEADER_BYTES;
  header.n_rings = 1;
  header.chunk_bytes = WICK_RING_CHUNK_BYTES;
  header.max_record_bytes = WICK_RING_MAX_RECORD;
  header.ring_bytes = 1u << 20;
  header.control_bytes = WICK_RING_CONTROL_BYTES;
  header.data_offset = 4096;
  memcpy (junk, &header, sizeof header);
  assert_reader_refused (junk, sizeof junk,
                         "ring header: sizes or offsets do not fit the 8192-byte memfd");
  WickError error = { "" };
  g_assert_null (wick_ring_reader_new (-1, &error));
  g_assert_cmpstr (error.message, ==, "the ring fd -1 is not a file descriptor");

  /* A ring its producer could truncate under the mapping (SIGBUS)
   * is refused before it is mapped: an unsealed memfd, a regular file */
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, NULL, NULL);
  g_assert_nonnull (session);
  char copy[WICK_RING_HEADER_BYTES * 2];
  g_assert_cmpint (pread (wick_session_get_ring_fd (session), copy, sizeof copy, 0), ==,
                   (gssize)sizeof copy);
  wick_session_close (session);
  int unsealed = memfd_create ("unsealed-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  g_assert_cmpint (write (unsealed, copy, sizeof copy), ==, (gssize)sizeof copy);
  g_assert_null (wick_ring_reader_new (unsealed, &error));
  g_assert_cmpstr (error.message, ==,
                   "the ring memfd is not sealed against shrinking (F_SEAL_SHRINK): its producer "
                   "could truncate it under the mapping, so it is not read");
  close (unsealed);
  g_autofree char *path = NULL;
  int file = g_file_open_tmp ("wick-ring-XXXXXX", &path, NULL);
  g_assert_cmpint (write (file, copy, sizeof copy), ==, (gssize)sizeof copy);
  g_assert_null (wick_ring_reader_new (file, &error));
  g_assert_true (g_str_has_prefix (error.message, "the ring descriptor is not a sealable memfd"));
  close (file);
  g_unlink (path);
}

static void
test_hold_slots (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickRingReader *readers[8];
  for (int i = 0; i < 8; i++)
    {
      readers[i] = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), NULL);
      g_assert_nonnull (readers[i]);
    }
  WickError error = { "" };
  g_assert_null (
    wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), &error));
  g_assert_cmpstr (error.message, ==, "all 8 hold-reader slots are taken");
  g_assert_cmpint (error.code, ==, WICK_ERROR_BUSY);
  wick_ring_reader_free (readers[3]);
  readers[3]
    = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), NULL);
  g_assert_nonnull (readers[3]);
  for (int i = 0; i < 8; i++)
    wick_ring_reader_free (readers[i]);
  wick_session_close (session);
}

static void
test_overwrite_ignores_holders (void)
{
  WickSession *session = open_session (WICK_RING_OVERWRITE);
  WickRingReader *holder
    = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), NULL);
  for (guint i = 0; i < 50000; i++)
    g_assert_true (record_edge (session, i));
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  /* the holder was lapped like a follower, and counts what it lost */
  Counts c = { .edges_in_order = TRUE };
  wick_ring_reader_drain (holder, 0, count_record, &c, NULL);
  g_assert_cmpuint (c.lost_records, ==, 1);
  g_assert_cmpuint (c.edges + c.lost, ==, 50000 + 1); /* and the thread record */
  g_assert_cmpuint (c.last_edge, ==, 49999);
  g_assert_true (c.edges_in_order);
  wick_ring_reader_free (holder);
  wick_session_close (session);
}

static gpointer
record_three_edges (gpointer data)
{
  WickSession *session = data;
  gboolean stored = TRUE;
  for (guint i = 0; i < 3; i++)
    stored &= record_edge (session, i);
  return GINT_TO_POINTER (stored);
}

/* One ring, two threads one after the other: the first gives its ring back
 * when it exits and the second continues the same byte stream and seq (the
 * opening thread holds the other ring from the open on). */
static void
test_ring_reused_after_thread_exit (void)
{
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = 256 * 1024, .max_threads = 2 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  WickRingReader *reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  for (int t = 0; t < 2; t++)
    {
      GThread *thread = g_thread_new ("recorder", record_three_edges, session);
      g_assert_true (GPOINTER_TO_INT (g_thread_join (thread)));
    }
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  Counts c = { .edges_in_order = FALSE };
  wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
  g_assert_cmpuint (c.edges, ==, 6);
  g_assert_cmpuint (c.lost_records, ==, 0);
  /* the snapshot's thread 1 and each recorder's own (threads 2 and 3) */
  g_assert_cmpuint (c.threads, ==, 3);
  g_assert_true (record_edge (session, 7)); /* and then this thread */
  wick_ring_reader_free (reader);
  wick_session_close (session);
}

static gpointer
try_span (gpointer data)
{
  WickSession *session = data;
  WickError error = { "" };
  WickSpanId span = wick_span_begin (session, "late", WICK_SPAN_FUNCTION);
  gboolean edge = wick_session_record_call_edge (session, 1, 1, 0, &error);
  g_assert_cmpstr (error.message, ==, "dropped: all 1 thread rings are in use");
  return GINT_TO_POINTER (span == 0 && !edge && !wick_span_end (session, span));
}

/* More threads than rings: the extra thread's records are dropped and counted. */
static void
test_no_free_ring (void)
{
  WickSessionOptions options
    = { .policy = WICK_RING_DROP, .ring_bytes = 256 * 1024, .max_threads = 1 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  WickSpanId mine = wick_span_begin (session, "mine", WICK_SPAN_FUNCTION); /* takes the ring */
  GThread *thread = g_thread_new ("extra", try_span, session);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (thread)));
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 2);
  g_assert_true (wick_span_end (session, mine));
  wick_session_close (session);
}

/* A hold reader whose process is gone stops holding the ring: the producer
 * (drop policy) drops while it is in the way, checks its pid, and recovers. */
static void
test_dead_holder_released (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickRingReader *holder
    = wick_ring_reader_new_hold (wick_session_get_ring_fd (session), wick_session_get_cursors_fd (session), NULL);
  pid_t child = fork ();
  if (child == 0)
    _exit (0);
  g_assert_cmpint (waitpid (child, NULL, 0), ==, child);
  WickRingCursors *header = session->cursors;
  g_assert_cmpuint (atomic_load (&header->holder_state[0]), ==, WICK_HOLDER_ACTIVE);
  atomic_store (&header->holder_pid[0], child); /* the holder "died" */
  /* 20000 records do not fit in front of the holder's position (8192 do);
   * the producer checks the holder's pid when it first finds the ring full
   * and releases the slot instead of dropping */
  for (guint i = 0; i < 20000; i++)
    g_assert_true (record_edge (session, i));
  g_assert_cmpuint (atomic_load (&header->holder_state[0]), ==, WICK_HOLDER_FREE);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, 0);
  wick_ring_reader_free (holder);
  wick_session_close (session);
}

/* A producer faster than its reader must not keep one drain going forever:
 * here every delivered record makes the producer write two more, so a drain
 * that chased the commit position would never return. A drain stops at the
 * commit it saw when it began, and the next drain picks up from there. */
typedef struct
{
  WickSession *session;
  WickString name;
  guint delivered;
} Chaser;

static bool
chase_record (const WickRingRecord *record, void *user_data)
{
  Chaser *chaser = user_data;
  chaser->delivered++;
  for (int i = 0; i < 2; i++)
    wick_span_end (chaser->session,
                   wick_span_begin_interned (chaser->session, chaser->name, WICK_SPAN_FUNCTION));
  return true;
}

static void
test_drain_bounded_by_its_start (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickRingReader *reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  g_assert_nonnull (reader);
  Chaser chaser = { session, wick_intern (session, "chase"), 0 };
  for (int i = 0; i < 100; i++)
    wick_span_end (session, wick_span_begin_interned (session, chaser.name, WICK_SPAN_FUNCTION));
  long first = wick_ring_reader_drain (reader, 0, chase_record, &chaser, NULL);
  g_assert_cmpint (first, >, 0);
  g_assert_cmpint (first, <, 1000); /* the meta, root and 200 span records, not an endless chase */
  long second = wick_ring_reader_drain (reader, 0, chase_record, &chaser, NULL);
  g_assert_cmpint (second, >=, 2 * first - 2); /* what the first drain's callbacks wrote */
  wick_ring_reader_free (reader);
  wick_session_close (session);
}

/* Drops are whole spans: under the drop policy with a
 * hold reader that does not read, a span whose begin was written always gets
 * its end, however full the ring is when it ends; what is dropped is counted. */
static void
test_drops_are_whole_spans (void)
{
  WickSession *session = open_session (WICK_RING_DROP);
  WickRingReader *holder = wick_ring_reader_new_hold (wick_session_get_ring_fd (session),
                                                      wick_session_get_cursors_fd (session), NULL);
  g_assert_nonnull (holder);
  WickSpanId open[WICK_RING_MAX_DEPTH];
  guint depth = 0, begun = 0, ended = 0;
  /* nested spans and edges until the ring refuses, the deepest nesting allowed */
  for (guint i = 0; i < 40000; i++)
    {
      if (depth < WICK_RING_MAX_DEPTH && i % 50 == 0)
        {
          WickSpanId span = wick_span_begin (session, "outer", WICK_SPAN_FUNCTION);
          if (span != 0)
            {
              open[depth++] = span;
              begun++;
            }
        }
      record_edge (session, i);
      if (i % 7 == 0)
        {
          /* short spans at the top of the stack: begin may be refused, end never */
          WickSpanId inner = wick_span_begin (session, "inner", WICK_SPAN_OP);
          if (inner != 0)
            {
              begun++;
              g_assert_true (wick_span_end (session, inner));
              ended++;
            }
        }
    }
  g_assert_cmpuint (wick_session_get_dropped (session), >, 0);
  g_assert_cmpuint (depth, >, 64);
  while (depth > 0)
    {
      g_assert_true (wick_span_end (session, open[--depth]));
      ended++;
    }
  Counts c = { .edges_in_order = TRUE };
  wick_ring_reader_drain (holder, 0, count_record, &c, NULL);
  /* every begin in the ring has its end in the ring (s1, from the snapshot, stays open) */
  g_assert_cmpuint (c.span_starts, ==, 1 + begun);
  g_assert_cmpuint (c.span_ends, ==, ended);
  g_assert_cmpuint (c.span_ends, ==, begun);
  wick_ring_reader_free (holder);
  wick_session_close (session);
}

/* A slot marked active with a live pid that never moves its tail (a hostile
 * cursors writer) is detached after the hold timeout under
 * both policies that respect hold readers: drop goes on recording (every drop
 * counted, the detach recorded), block stops waiting. */
static void
hostile_slot_detached (WickRingPolicy policy)
{
  WickSessionOptions options = {
    .policy = policy, .ring_bytes = 256 * 1024, .max_threads = 4, .hold_timeout_ms = 50
  };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  WickRingReader *reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  WickRingCursors *cursors = session->cursors;
  atomic_store (&cursors->holder_pid[5], (int32_t)getppid ()); /* alive, never reads */
  atomic_store (&cursors->holder_state[5], WICK_HOLDER_ACTIVE);
  Counts c = { .edges_in_order = TRUE };
  guint64 attempted = 0, stored = 0;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (atomic_load (&cursors->holder_state[5]) == WICK_HOLDER_ACTIVE)
    {
      /* under block the first record past the ring waits until the detach */
      stored += record_edge (session, attempted++);
      if (attempted % 1000 == 0)
        wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
    }
  g_assert_cmpuint (atomic_load (&cursors->holder_state[5]), ==, WICK_HOLDER_DETACHED);
  for (int i = 0; i < 10000; i++)
    {
      stored += record_edge (session, attempted++);
      if (attempted % 1000 == 0)
        wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
    }
  g_assert_true (wick_session_finish (session, NULL));
  while (wick_ring_reader_drain (reader, 0, count_record, &c, NULL) > 0)
    ;
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.detached_readers, ==, 1);
  g_assert_cmpuint (c.marks, ==, 0);
  g_assert_cmpuint (c.detached, ==, 1);
  g_assert_cmpuint (wick_session_get_dropped (session), ==, attempted - stored);
  if (policy == WICK_RING_BLOCK)
    g_assert_cmpuint (stored, ==, attempted);
  else
    g_assert_cmpuint (stored, <, attempted);
  /* the follower may have been lapped, but what it read and lost adds up */
  g_assert_cmpuint (c.edges + stats.lost, >=, stored);
  wick_ring_reader_free (reader);
  wick_session_close (session);
}

static void
test_hostile_slot_detached_drop (void)
{
  hostile_slot_detached (WICK_RING_DROP);
}

static void
test_hostile_slot_detached_block (void)
{
  hostile_slot_detached (WICK_RING_BLOCK);
}

/* A ring that breaks: the in-process JSONL writer must say
 * so (a wick_ring_broken line with the reader's sentence), count what the
 * break cost it (wick_lost lines, exactly the records committed after the
 * break), stop holding the producer back, and end the file with a terminal
 * that says why. The bad commit is made through the producer's own mapping
 * (the memfd is sealed for everyone else). */
static void
test_broken_ring_recorded (void)
{
  /* the run's own file: two runs at once must not share a path */
  g_autofree char *name = g_strdup_printf ("wick-broken-ring-%d.jsonl", (int)getpid ());
  g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
  WickSessionOptions options = { .jsonl_path = path,
                                 .policy = WICK_RING_BLOCK,
                                 .ring_bytes = 256 * 1024,
                                 .max_threads = 4 };
  WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
  g_assert_nonnull (session);
  WickRingReader *reader = wick_ring_reader_new (wick_session_get_ring_fd (session), NULL);
  for (guint i = 0; i < 10; i++)
    g_assert_true (record_edge (session, i));
  /* a committed record of length zero */
  WickProducer *producer = wick_producer_get (session);
  WickRecordHeader *bad = wick_producer_reserve (producer, 8);
  g_assert_nonnull (bad);
  wick_producer_commit (producer, bad, 8, WICK_KIND_CALL_EDGE);
  bad->words = 0;
  Counts c = { .edges_in_order = TRUE };
  wick_ring_reader_drain (reader, 0, count_record, &c, NULL); /* a follower stops there too */
  g_assert_cmpuint (c.broken, ==, 1);
  g_assert_cmpuint (c.edges, ==, 10);
  /* block policy: a writer that kept holding a broken ring would stop this */
  guint after = 20000;
  for (guint i = 0; i < after; i++)
    g_assert_true (record_edge (session, 10 + i));
  g_assert_true (wick_session_finish (session, NULL));
  wick_ring_reader_drain (reader, 0, count_record, &c, NULL);
  WickRingReaderStats stats;
  wick_ring_reader_get_stats (reader, &stats);
  g_assert_cmpuint (stats.broken_rings, ==, 1);
  g_assert_nonnull (strstr (stats.first_error, "zero record length"));
  /* the bad record itself, the edges after it, the root's end and the terminal */
  g_assert_cmpuint (stats.lost, ==, after + 3);
  g_assert_cmpuint (c.lost, ==, after + 3);
  g_assert_cmpuint (c.broken, ==, 1);
  wick_ring_reader_free (reader);
  wick_session_close (session);

  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = g_strv_length (lines) - 1, broken = 0;
  guint64 lost = 0;
  /* the Wick records ride in "wick_records" of standard lines */
  for (guint i = 0; i < n; i++)
    {
      g_assert_false (g_str_has_prefix (lines[i], "{\"kind\":\"wick_"));
      for (const char *p = strstr (lines[i], "{\"kind\":\"wick_ring_broken\""); p != NULL;
           p = strstr (p + 1, "{\"kind\":\"wick_ring_broken\""))
        {
          broken++;
          g_assert_nonnull (strstr (p, "\"ring\":0,\"error\":\"ring 0 at position "));
          g_assert_nonnull (strstr (p, "zero record length"));
        }
      for (const char *p = strstr (lines[i], "{\"kind\":\"wick_lost\""); p != NULL;
           p = strstr (p + 1, "{\"kind\":\"wick_lost\""))
        lost += g_ascii_strtoull (strstr (p, "\"count\":") + 8, NULL, 10);
    }
  g_assert_cmpuint (broken, ==, 1);
  g_assert_cmpuint (lost, ==, after + 3);
  g_assert_true (g_str_has_prefix (lines[n - 1], "{\"kind\":\"terminal\",\"outcome\":\"failed\""));
  g_assert_nonnull (strstr (lines[n - 1], "a ring broke"));
  unlink (path);
}

/* wick_ring_reader_drain_jsonl (span records straight to lines) writes
 * exactly the lines of decoding every record and feeding the formatter:
 * nested spans of every kind, step and measured flag, names that need
 * escaping, ops and marks between them, a second thread, in both modes. */
static void
append_line (const char *line, size_t length, void *user_data)
{
  g_string_append_len (user_data, line, (gssize)length);
  g_string_append_c (user_data, '\n');
}

typedef struct
{
  WickJsonlFormatter *formatter;
  GString *out;
} Feed;

static bool
feed_record (const WickRingRecord *record, void *user_data)
{
  Feed *feed = user_data;
  wick_jsonl_formatter_feed (feed->formatter, record, append_line, feed->out);
  return true;
}

static gpointer
other_thread_spans (gpointer data)
{
  WickSession *session = data;
  for (int i = 0; i < 50; i++)
    wick_span_end (session, wick_span_begin (session, "worker \"x\"", WICK_SPAN_OP));
  return NULL;
}

static void
test_drain_jsonl_same_lines (void)
{
  for (int strict = 0; strict < 2; strict++)
    {
      WickSessionOptions options = { .policy = WICK_RING_DROP,
                                     .strict = strict,
                                     .ring_bytes = 256 * 1024,
                                     .max_threads = 4,
                                     .hold_timeout_ms = UINT64_MAX };
      WickSession *session = wick_session_open (&run, &(WickCaptureContract){ 0 }, &options, NULL);
      g_assert_nonnull (session);
      int fd = wick_session_get_ring_fd (session);
      WickRingReader *fast = wick_ring_reader_new (fd, NULL);
      WickRingReader *slow = wick_ring_reader_new (fd, NULL);
      static const char *const names[] = { "forward", "tab\there", "évaluation", "a\"b\\c" };
      static const WickSpanKind kinds[] = { WICK_SPAN_FUNCTION, WICK_SPAN_OP, WICK_SPAN_MODULE };
      for (int i = 0; i < 300; i++)
        {
          WickSpanId outer = wick_span_begin (session, names[i % 4], kinds[i % 3]);
          WickSpanId inner = wick_span_begin (session, names[(i + 1) % 4], kinds[(i + 1) % 3]);
          if (i % 7 == 0)
            wick_session_mark (session, "m", NULL);
          wick_span_end (session, inner);
          wick_span_end (session, outer);
        }
      GThread *thread = g_thread_new ("other", other_thread_spans, session);
      g_thread_join (thread);
      g_assert_true (wick_session_finish (session, NULL));
      Feed a = { wick_jsonl_formatter_new (strict), g_string_new (NULL) };
      Feed b = { wick_jsonl_formatter_new (strict), g_string_new (NULL) };
      while (wick_ring_reader_drain_jsonl (fast, 7, a.formatter, append_line, a.out, feed_record, &a,
                                           NULL)
             > 0)
        ;
      while (wick_ring_reader_drain (slow, 0, feed_record, &b, NULL) > 0)
        ;
      wick_jsonl_formatter_finish (a.formatter, "x", append_line, a.out);
      wick_jsonl_formatter_finish (b.formatter, "x", append_line, b.out);
      g_assert_cmpuint (a.out->len, >, 600 * 2 * 60);
      g_assert_cmpstr (a.out->str, ==, b.out->str);
      g_assert_cmpuint (wick_jsonl_formatter_get_lines (a.formatter), ==,
                        wick_jsonl_formatter_get_lines (b.formatter));
      g_string_free (a.out, TRUE);
      g_string_free (b.out, TRUE);
      wick_jsonl_formatter_free (a.formatter);
      wick_jsonl_formatter_free (b.formatter);
      wick_ring_reader_free (fast);
      wick_ring_reader_free (slow);
      wick_session_close (session);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/ring/drop-counting-exact", test_drop_counting_exact);
  g_test_add_func ("/core/ring/block-lossless", test_block_lossless);
  g_test_add_func ("/core/ring/follow-reader-lapped", test_follow_reader_lapped);
  g_test_add_func ("/core/ring/late-reader-snapshot", test_late_reader_snapshot);
  g_test_add_func ("/core/ring/malformed-framing", test_malformed_framing);
  g_test_add_func ("/core/ring/foreign-files", test_foreign_files);
  g_test_add_func ("/core/ring/hold-slots", test_hold_slots);
  g_test_add_func ("/core/ring/overwrite-ignores-holders", test_overwrite_ignores_holders);
  g_test_add_func ("/core/ring/drain-bounded-by-its-start", test_drain_bounded_by_its_start);
  g_test_add_func ("/core/ring/reused-after-thread-exit", test_ring_reused_after_thread_exit);
  g_test_add_func ("/core/ring/dead-holder-released", test_dead_holder_released);
  g_test_add_func ("/core/ring/no-free-ring", test_no_free_ring);
  g_test_add_func ("/core/ring/drops-are-whole-spans", test_drops_are_whole_spans);
  g_test_add_func ("/core/ring/hostile-slot-detached-drop", test_hostile_slot_detached_drop);
  g_test_add_func ("/core/ring/hostile-slot-detached-block", test_hostile_slot_detached_block);
  g_test_add_func ("/core/ring/broken-ring-recorded", test_broken_ring_recorded);
  g_test_add_func ("/core/ring/drain-jsonl-same-lines", test_drain_jsonl_same_lines);
  return g_test_run ();
}
