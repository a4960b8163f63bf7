/* wick-ring-reader.c — reading a session's ring from any process (wick-ring.h).
 *
 * Everything in the mapping is tainted: the header is validated once and only
 * the reader's own copies of its sizes and offsets are used afterwards; every
 * record length is checked against its chunk, the ring, the commit position
 * and the largest record; records are copied out before they are decoded, and
 * a follow reader checks after the copy that the producer had not reached
 * them (the lapping rule of wick-ring-layout.h).
 */
#include "wick-session-internal.h"

#include "common/wick-json.h"
#include "wick-record-codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct
{
  uint64_t pos;
  uint64_t horizon; /* commit seen when this drain began: a drain never reads past it */
  uint32_t expected_seq;
  bool seq_known;
  bool broken;
  uint64_t last_ns;
  uint32_t thread; /* wick_thread number of the records being read */
  uint64_t dropped_seen; /* producer drops this reader knows of (DROPPED records, the start) */
  /* A broken ring: the error for its LOST records, and what was reported. */
  char *break_reason;
  bool break_announced; /* its wick_ring_broken record was delivered */
  uint64_t break_lost;  /* records lost after the break, reported so far */
} ReaderRing;

typedef struct
{
  uint32_t ring;
  uint32_t number;
  int32_t os_tid;
  char name[WICK_THREAD_NAME_BYTES];
} IntroThread;

struct WickRingReader
{
  int fd;
  uint8_t *map;
  size_t map_bytes;
  const WickRingHeader *header; /* tainted */
  WickRingReaderMode mode;
  int holder_slot;
  WickRingCursors *cursors;       /* hold readers of another process: their slot and tails */
  size_t cursors_bytes;
  _Atomic uint64_t *private_tails; /* the in-process writer: tails in the session's memory */
  WickSession *private_session;

  /* validated copies */
  uint32_t n_rings;
  uint64_t ring_bytes;
  uint64_t arena_offset;
  uint64_t arena_capacity;
  uint64_t controls_offset;
  uint64_t control_bytes;
  uint64_t data_offset;
  uint32_t root_name;
  char *meta_line;

  WickRingInfo info;
  ReaderRing *rings;
  bool drained;

  /* records delivered before the live ones: meta, root, open spans */
  WickSpanPayload *intro_spans;
  uint32_t *intro_rings;
  size_t n_intro_spans;
  IntroThread *intro_threads;
  size_t n_intro_threads;
  size_t intro_next; /* 0: meta, 1: root, 2..: threads, then spans */
  bool intro_done;
  uint64_t intro_name_bytes; /* names of synthesized spans so far (the budget) */
  char intro_cut_name[WICK_RING_READER_INTRO_CUT_BYTES + 4];

  uint64_t unclaimed_seen; /* header unclaimed_dropped announced (or there at the start) */
  uint64_t names_cut;      /* wick_ring_reader_get_names_cut */
  WickRingReaderStart start; /* records before it opened (wick_ring_reader_get_start) */
  WickRingReaderStats stats;
  WickArenaCache arena_cache;
  uint64_t batch[WICK_RING_CHUNK_BYTES / 8]; /* records copied out of shared memory */
  WickDecodeScratch scratch;
};

static void note_error (WickRingReader *reader, const char *format, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
note_error (WickRingReader *reader, const char *format, ...)
{
  if (reader->stats.first_error[0] != '\0')
    return;
  va_list args;
  va_start (args, format);
  vsnprintf (reader->stats.first_error, sizeof reader->stats.first_error, format, args);
  va_end (args);
}

static WickRingControl *
ring_control (WickRingReader *reader, uint32_t index)
{
  return (WickRingControl *)(void *)(reader->map + reader->controls_offset
                                     + (uint64_t)index * reader->control_bytes);
}

static const uint8_t *
ring_data (WickRingReader *reader, uint32_t index)
{
  return reader->map + reader->data_offset + (uint64_t)index * reader->ring_bytes;
}

static bool
region_fits (uint64_t offset, uint64_t size, uint64_t file_bytes)
{
  return offset % 8 == 0 && offset <= file_bytes && size <= file_bytes - offset;
}

/* Checks the header's sizes and offsets against the file and copies them. */
static bool
validate_header (WickRingReader *reader, uint64_t file_bytes, WickError *error)
{
  WickRingHeader h;
  memcpy (&h, reader->map, sizeof h);
  if (h.magic != WICK_RING_MAGIC)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA, "not a Wick ring (bad magic)");
      return false;
    }
  if (h.version != WICK_RING_FORMAT_VERSION)
    {
      wick_set_error (error, WICK_ERROR_UNSUPPORTED, "ring format version %u is not supported (this reader reads %d)",
                      h.version, WICK_RING_FORMAT_VERSION);
      return false;
    }
  uint64_t controls = (uint64_t)h.n_rings * h.control_bytes;
  bool ok
    = h.header_bytes == WICK_RING_HEADER_BYTES && h.n_rings >= 1 && h.n_rings <= WICK_RING_MAX_RINGS
      && h.chunk_bytes == WICK_RING_CHUNK_BYTES && h.max_record_bytes == WICK_RING_MAX_RECORD
      && h.ring_bytes >= WICK_RING_MIN_RING_BYTES && h.ring_bytes <= WICK_RING_MAX_RING_BYTES
      && (h.ring_bytes & (h.ring_bytes - 1)) == 0 && h.control_bytes >= sizeof (WickRingControl)
      && h.control_bytes <= (1u << 20) && h.meta_length <= h.meta_capacity
      && h.meta_capacity <= WICK_RING_META_CAPACITY
      && region_fits (h.meta_offset, h.meta_capacity, file_bytes)
      && region_fits (h.arena_offset, h.arena_capacity, file_bytes)
      && h.arena_capacity <= UINT32_MAX && region_fits (h.controls_offset, controls, file_bytes)
      && h.control_bytes % 8 == 0
      && region_fits (h.data_offset, (uint64_t)h.n_rings * h.ring_bytes, file_bytes)
      && h.policy <= WICK_RING_OVERWRITE;
  if (!ok)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA, "ring header: sizes or offsets do not fit the %llu-byte memfd",
                      (unsigned long long)file_bytes);
      return false;
    }
  reader->n_rings = h.n_rings;
  reader->ring_bytes = h.ring_bytes;
  reader->arena_offset = h.arena_offset;
  reader->arena_capacity = h.arena_capacity;
  reader->controls_offset = h.controls_offset;
  reader->control_bytes = h.control_bytes;
  reader->data_offset = h.data_offset;
  reader->root_name = h.root_name;
  reader->meta_line = malloc ((size_t)h.meta_length + 1); /* at most 64 KiB + 1 (above) */
  if (reader->meta_line == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory reading the meta line");
      return false;
    }
  memcpy (reader->meta_line, reader->map + h.meta_offset, h.meta_length);
  reader->meta_line[h.meta_length] = '\0';
  reader->info.pid = h.pid;
  memcpy (reader->info.program, h.program, sizeof reader->info.program);
  memcpy (reader->info.entrypoint, h.entrypoint, sizeof reader->info.entrypoint);
  memcpy (reader->info.run_id, h.run_id, sizeof reader->info.run_id);
  reader->info.program[sizeof reader->info.program - 1] = '\0';
  reader->info.entrypoint[sizeof reader->info.entrypoint - 1] = '\0';
  reader->info.run_id[sizeof reader->info.run_id - 1] = '\0';
  reader->info.start_unix_ns = h.start_unix_ns;
  reader->info.policy = (WickRingPolicy)h.policy;
  reader->info.version = h.version;
  reader->info.n_rings = h.n_rings;
  reader->info.ring_bytes = h.ring_bytes;
  reader->info.strict = h.strict != 0;
  return true;
}

static WickArenaView
arena_view (WickRingReader *reader)
{
  WickArenaView view;
  view.cache = &reader->arena_cache;
  view.base = reader->map + reader->arena_offset;
  view.used = atomic_load_explicit (&reader->header->arena_used, memory_order_acquire);
  if (view.used > reader->arena_capacity)
    view.used = reader->arena_capacity;
  /* the session's own writer keeps its producer's names whole; any other
   * reader bounds what a producer can make it write per name */
  view.max_length = reader->private_session != NULL ? 0 : WICK_RING_READER_MAX_NAME_BYTES;
  view.cut = &reader->names_cut;
  return view;
}

static uint32_t
rings_in_use (WickRingReader *reader)
{
  uint32_t n = atomic_load_explicit (&reader->header->rings_in_use, memory_order_acquire);
  return n < reader->n_rings ? n : reader->n_rings;
}

/* Copies ring index's open spans between two equal reads of depth_gen. */
static size_t
snapshot_stack (WickRingReader *reader, uint32_t index, WickSpanPayload *out)
{
  WickRingControl *control = ring_control (reader, index);
  for (int attempt = 0; attempt < 1000; attempt++)
    {
      uint64_t before = atomic_load_explicit (&control->depth_gen, memory_order_acquire);
      uint32_t depth = (uint32_t)(before & 0xffffffffu);
      if (depth > WICK_RING_MAX_DEPTH)
        return 0;
      memcpy (out, (const void *)control->stack, depth * sizeof *out);
      atomic_thread_fence (memory_order_acquire);
      if (atomic_load_explicit (&control->depth_gen, memory_order_relaxed) == before)
        return depth;
    }
  note_error (reader,
              "ring %u: the open-span stack kept changing; its spans were not "
              "snapshotted",
              index);
  return 0;
}

static bool
take_snapshot (WickRingReader *reader)
{
  uint32_t n = rings_in_use (reader);
  reader->intro_spans = calloc ((size_t)n * WICK_RING_MAX_DEPTH + 1, sizeof (WickSpanPayload));
  reader->intro_rings = calloc ((size_t)n * WICK_RING_MAX_DEPTH + 1, sizeof (uint32_t));
  reader->intro_threads = calloc ((size_t)n + 1, sizeof (IntroThread));
  if (reader->intro_spans == NULL || reader->intro_rings == NULL || reader->intro_threads == NULL)
    return false;
  for (uint32_t i = 0; i < n; i++)
    {
      WickRingControl *control = ring_control (reader, i);
      uint32_t number = atomic_load_explicit (&control->thread_number, memory_order_acquire);
      int32_t tid = atomic_load_explicit (&control->owner_tid, memory_order_relaxed);
      if (number != 0 && tid != 0)
        {
          IntroThread *thread = &reader->intro_threads[reader->n_intro_threads++];
          thread->ring = i;
          thread->number = number;
          thread->os_tid = tid;
          memcpy (thread->name, (const void *)control->thread_name, sizeof thread->name);
          thread->name[sizeof thread->name - 1] = '\0';
          reader->rings[i].thread = number;
        }
    }
  for (uint32_t i = 0; i < n; i++)
    {
      size_t depth = snapshot_stack (reader, i, reader->intro_spans + reader->n_intro_spans);
      for (size_t d = 0; d < depth; d++)
        reader->intro_rings[reader->n_intro_spans + d] = i;
      reader->n_intro_spans += depth;
    }
  return true;
}

static void break_ring (WickRingReader *reader, uint32_t index, const char *why, uint64_t pos,
                        uint64_t value);

/* Whether position pos may have been overwritten given commit c (both at
 * most WICK_RING_MAX_POSITION: no sum below wraps). */
static bool
is_lapped (WickRingReader *reader, uint64_t pos, uint64_t commit)
{
  /* under overwrite the producer ignores hold readers: they can be lapped too */
  return (reader->mode == WICK_RING_READER_FOLLOW || reader->info.policy == WICK_RING_OVERWRITE)
         && pos + reader->ring_bytes < commit + WICK_RING_MAX_RECORD;
}

/* The seq of the next record at position p0 of ring index: the last record
 * header before p0 in its chunk tells (PAD records carry the next seq). False
 * when that cannot be read safely; losses before the first read record are
 * then not counted. */
static bool
initial_seq (WickRingReader *reader, uint32_t index, uint64_t p0, uint32_t *seq)
{
  if (p0 == 0)
    {
      *seq = 0;
      return true;
    }
  WickRingControl *control = ring_control (reader, index);
  const uint8_t *data = ring_data (reader, index);
  uint64_t pos = (p0 - 1) & ~(uint64_t)(WICK_RING_CHUNK_BYTES - 1);
  if (is_lapped (reader, pos, p0))
    return false;
  WickRecordHeader header = { 0 };
  bool found = false;
  while (pos < p0)
    {
      memcpy (&header, data + (pos & (reader->ring_bytes - 1)), sizeof header);
      uint64_t size = (uint64_t)header.words * 8;
      if (size == 0 || size > p0 - pos)
        return false;
      pos += size;
      found = true;
    }
  atomic_thread_fence (memory_order_acquire);
  uint64_t commit = atomic_load_explicit (&control->commit, memory_order_relaxed);
  if (!found || is_lapped (reader, (p0 - 1) & ~(uint64_t)(WICK_RING_CHUNK_BYTES - 1), commit))
    return false;
  *seq = header.kind == WICK_KIND_PAD ? header.seq : header.seq + 1;
  return true;
}

static bool
claim_holder_slot (WickRingReader *reader, WickError *error)
{
  WickRingCursors *cursors = reader->cursors;
  for (int slot = 0; slot < WICK_RING_MAX_HOLDERS; slot++)
    {
      uint32_t expected = WICK_HOLDER_FREE;
      if (!atomic_compare_exchange_strong (&cursors->holder_state[slot], &expected,
                                           WICK_HOLDER_CLAIMING))
        continue;
      atomic_store (&cursors->holder_pid[slot], (int32_t)getpid ());
      for (uint32_t i = 0; i < reader->n_rings; i++)
        atomic_store_explicit (wick_cursor_tail (cursors, i, slot), reader->rings[i].pos,
                               memory_order_release);
      atomic_store_explicit (&cursors->holder_state[slot], WICK_HOLDER_ACTIVE,
                             memory_order_release);
      reader->holder_slot = slot;
      return true;
    }
  wick_set_error (error, WICK_ERROR_BUSY, "all %d hold-reader slots are taken", WICK_RING_MAX_HOLDERS);
  return false;
}

/* A mapping of a file that another process can truncate faults (SIGBUS) on
 * the first read past the new end: only a memfd sealed against shrinking
 * (seals are never removed) is mapped. */
static bool
sealed_against_shrink (int fd, const char *what, WickError *error)
{
  int seals = fcntl (fd, F_GET_SEALS);
  if (seals < 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "the %s descriptor is not a sealable memfd (%s): another process could "
                      "truncate it under the mapping, so it is not read",
                      what, strerror (errno));
      return false;
    }
  if ((seals & F_SEAL_SHRINK) == 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA,
                      "the %s memfd is not sealed against shrinking (F_SEAL_SHRINK): its producer "
                      "could truncate it under the mapping, so it is not read",
                      what);
      return false;
    }
  return true;
}

static WickRingReader *
reader_open (int fd, WickRingReaderMode mode, WickError *error)
{
  struct stat st;
  if (fd < 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "the ring fd %d is not a file descriptor", fd);
      return NULL;
    }
  if (fstat (fd, &st) != 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "the ring fd is not open: %s", strerror (errno));
      return NULL;
    }
  if ((uint64_t)st.st_size < WICK_RING_HEADER_BYTES)
    {
      wick_set_error (error, WICK_ERROR_INVALID_DATA, "not a Wick ring (%lld bytes, smaller than its header)",
                      (long long)st.st_size);
      return NULL;
    }
  if (!sealed_against_shrink (fd, "ring", error))
    return NULL;
  WickRingReader *reader = calloc (1, sizeof *reader);
  if (reader == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for a ring reader");
      return NULL;
    }
  reader->holder_slot = -1;
  reader->mode = mode;
  reader->fd = fcntl (fd, F_DUPFD_CLOEXEC, 0);
  reader->map_bytes = (size_t)st.st_size;
  reader->map = reader->fd < 0 ? MAP_FAILED
                                : mmap (NULL, reader->map_bytes, PROT_READ, MAP_SHARED, reader->fd, 0);
  if (reader->map == MAP_FAILED)
    {
      wick_set_error (error, wick_error_code_from_errno (errno), "mapping the ring failed: %s",
                      strerror (errno));
      reader->map = NULL;
      wick_ring_reader_free (reader);
      return NULL;
    }
  reader->header = (const WickRingHeader *)(const void *)reader->map;
  if (!validate_header (reader, (uint64_t)st.st_size, error))
    {
      wick_ring_reader_free (reader);
      return NULL;
    }
  reader->rings = calloc (reader->n_rings, sizeof *reader->rings);
  if (reader->rings == NULL)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for a ring reader");
      wick_ring_reader_free (reader);
      return NULL;
    }
  /* where it begins: the session time from the wall clocks (the session
   * clock's origin is not in the header), the records it will not see */
  struct timespec now;
  clock_gettime (CLOCK_REALTIME, &now);
  uint64_t now_unix_ns = (uint64_t)now.tv_sec * UINT64_C (1000000000) + (uint64_t)now.tv_nsec;
  reader->start.opened_ns
    = now_unix_ns > reader->info.start_unix_ns ? now_unix_ns - reader->info.start_unix_ns : 0;
  reader->start.exact = true;
  for (uint32_t i = 0; i < reader->n_rings; i++)
    {
      ReaderRing *ring = &reader->rings[i];
      ring->pos = atomic_load_explicit (&ring_control (reader, i)->commit, memory_order_acquire);
      if (ring->pos > WICK_RING_MAX_POSITION)
        {
          uint64_t commit = ring->pos;
          ring->pos = 0;
          break_ring (reader, i, "the commit position is past 2^62", 0, commit);
          continue;
        }
      ring->seq_known = initial_seq (reader, i, ring->pos, &ring->expected_seq);
      if (ring->seq_known)
        reader->start.records_before += ring->expected_seq;
      else
        reader->start.exact = false;
      ring->dropped_seen
        = atomic_load_explicit (&ring_control (reader, i)->dropped, memory_order_relaxed);
    }
  reader->unclaimed_seen
    = atomic_load_explicit (&reader->header->unclaimed_dropped, memory_order_relaxed);
  if (!take_snapshot (reader))
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for a ring reader");
      wick_ring_reader_free (reader);
      return NULL;
    }
  return reader;
}

WickRingReader *
wick_ring_reader_new_full (int fd, WickRingReaderMode mode, WickError *error)
{
  if (mode == WICK_RING_READER_HOLD)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "a hold reader needs the session's cursors fd: wick_ring_reader_new_hold");
      return NULL;
    }
  return reader_open (fd, WICK_RING_READER_FOLLOW, error);
}

WickRingReader *
wick_ring_reader_new_hold (int ring_fd, int cursors_fd, WickError *error)
{
  struct stat st;
  if (cursors_fd < 0 || fstat (cursors_fd, &st) != 0)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "the cursors fd %d is not open",
                      cursors_fd);
      return NULL;
    }
  if (!sealed_against_shrink (cursors_fd, "cursors", error))
    return NULL;
  WickRingReader *reader = reader_open (ring_fd, WICK_RING_READER_HOLD, error);
  if (reader == NULL)
    return NULL;
  uint64_t need = WICK_CURSORS_HEADER_BYTES + (uint64_t)reader->n_rings * WICK_RING_MAX_HOLDERS * 8;
  bool fits = (uint64_t)st.st_size >= need;
  void *map = fits ? mmap (NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                           cursors_fd, 0)
                   : MAP_FAILED;
  if (map == MAP_FAILED)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "the cursors fd is not this ring's cursors (%lld bytes%s%s)",
                      (long long)st.st_size, fits ? ": " : "", fits ? strerror (errno) : "");
      wick_ring_reader_free (reader);
      return NULL;
    }
  reader->cursors = map;
  reader->cursors_bytes = (size_t)st.st_size;
  WickRingCursors header;
  memcpy (&header, map, sizeof header);
  if (header.magic != WICK_CURSORS_MAGIC || header.generation != reader->header->generation
      || header.n_rings != reader->n_rings)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "the cursors fd belongs to another ring (magic, generation or ring count "
                      "differ)");
      wick_ring_reader_free (reader);
      return NULL;
    }
  if (!claim_holder_slot (reader, error))
    {
      wick_ring_reader_free (reader);
      return NULL;
    }
  return reader;
}

WickRingReader *
wick_ring_reader_new_private_hold (WickSession *session, WickError *error)
{
  WickRingReader *reader = reader_open (session->reader_fd, WICK_RING_READER_HOLD, error);
  if (reader == NULL)
    return NULL;
  if (session->writer_tails == NULL || reader->n_rings != session->n_rings)
    {
      wick_set_error (error, WICK_ERROR_NO_MEMORY,
                      "out of memory for the JSONL writer's positions");
      wick_ring_reader_free (reader);
      return NULL;
    }
  for (uint32_t i = 0; i < reader->n_rings; i++)
    atomic_store_explicit (&session->writer_tails[i], reader->rings[i].pos, memory_order_release);
  reader->private_tails = session->writer_tails;
  reader->private_session = session;
  atomic_store_explicit (&session->writer_holding, 1, memory_order_release);
  return reader;
}

WickRingReader *
wick_ring_reader_new (int fd, WickError *error)
{
  return wick_ring_reader_new_full (fd, WICK_RING_READER_FOLLOW, error);
}

void
wick_ring_reader_free (WickRingReader *reader)
{
  if (reader == NULL)
    return;
  if (reader->holder_slot >= 0
      && atomic_load (&reader->cursors->holder_pid[reader->holder_slot]) == (int32_t)getpid ())
    atomic_store (&reader->cursors->holder_state[reader->holder_slot], WICK_HOLDER_FREE);
  if (reader->cursors != NULL)
    munmap (reader->cursors, reader->cursors_bytes);
  if (reader->private_session != NULL)
    atomic_store (&reader->private_session->writer_holding, 0);
  if (reader->map != NULL)
    munmap (reader->map, reader->map_bytes);
  if (reader->fd >= 0)
    close (reader->fd);
  wick_arena_cache_clear (&reader->arena_cache);
  free (reader->meta_line);
  for (uint32_t i = 0; reader->rings != NULL && i < reader->n_rings; i++)
    free (reader->rings[i].break_reason);
  free (reader->rings);
  free (reader->intro_spans);
  free (reader->intro_rings);
  free (reader->intro_threads);
  free (reader);
}

const WickRingInfo *
wick_ring_reader_get_info (WickRingReader *reader)
{
  return &reader->info;
}

WickProducerState
wick_ring_reader_get_producer_state (WickRingReader *reader)
{
  uint32_t state = atomic_load_explicit (&reader->header->state, memory_order_acquire);
  if (state == WICK_RING_STATE_FINISHED)
    return WICK_PRODUCER_FINISHED;
  if (reader->info.pid > 0 && reader->info.pid != getpid () && kill (reader->info.pid, 0) != 0
      && errno == ESRCH)
    return WICK_PRODUCER_DEAD;
  return WICK_PRODUCER_RUNNING;
}

void
wick_ring_reader_get_start (WickRingReader *reader, WickRingReaderStart *start)
{
  *start = reader->start;
  start->redelivered = reader->n_intro_threads + 1 + reader->n_intro_spans;
}

void
wick_ring_reader_get_stats (WickRingReader *reader, WickRingReaderStats *stats)
{
  *stats = reader->stats;
  uint32_t n = rings_in_use (reader);
  stats->producer_dropped
    = atomic_load_explicit (&reader->header->unclaimed_dropped, memory_order_relaxed);
  for (uint32_t i = 0; i < n; i++)
    stats->producer_dropped
      += atomic_load_explicit (&ring_control (reader, i)->dropped, memory_order_relaxed);
  stats->detached_readers
    = atomic_load_explicit (&reader->header->detached_readers, memory_order_relaxed);
}

uint64_t
wick_ring_reader_get_names_cut (WickRingReader *reader)
{
  return reader->names_cut;
}

bool
wick_ring_reader_is_drained (WickRingReader *reader)
{
  return reader->drained;
}

/* ---------------------------------------------------------------------------
 * Draining
 */

typedef struct
{
  WickRingRecordFunc callback;
  void *user_data;
  size_t max_records;
  size_t delivered;
  bool stop;
  /* wick_ring_reader_drain_jsonl: span records go straight to the formatter */
  WickJsonlFormatter *formatter;
  WickLineFunc emit;
  void *emit_data;
} Delivery;

static void
deliver (WickRingReader *reader, Delivery *d, const WickRingRecord *record)
{
  reader->stats.records++;
  d->delivered++;
  if (!d->callback (record, d->user_data) || (d->max_records > 0 && d->delivered >= d->max_records))
    d->stop = true;
}

/* Up to 1024 rings x 128 open spans are synthesized at the start: their
 * names together get WICK_RING_READER_INTRO_NAME_BUDGET bytes, a name past
 * it is cut short (and counted), so a producer cannot make a late reader
 * write gigabytes before its first live record. */
static const char *
budget_intro_name (WickRingReader *reader, const char *name)
{
  size_t length = strlen (name); /* at most WICK_RING_READER_MAX_NAME_BYTES + 3 */
  if (reader->private_session != NULL
      || reader->intro_name_bytes + length <= WICK_RING_READER_INTRO_NAME_BUDGET)
    {
      reader->intro_name_bytes += length;
      return name;
    }
  size_t keep = WICK_RING_READER_INTRO_CUT_BYTES;
  if (length <= keep)
    return name;
  while (keep > 0 && ((uint8_t)name[keep] & 0xc0) == 0x80)
    keep--;
  memcpy (reader->intro_cut_name, name, keep);
  memcpy (reader->intro_cut_name + keep, "\u2026", sizeof "\u2026");
  reader->names_cut++;
  return reader->intro_cut_name;
}

static void
deliver_intro (WickRingReader *reader, Delivery *d)
{
  WickArenaView arena = arena_view (reader);
  size_t n_threads = reader->n_intro_threads;
  while (!reader->intro_done && !d->stop)
    {
      WickRingRecord record;
      memset (&record, 0, sizeof record);
      size_t step = reader->intro_next++;
      if (step == 0)
        {
          record.kind = WICK_RING_RECORD_META;
          record.meta.line = reader->meta_line;
        }
      else if (step <= n_threads)
        {
          const IntroThread *thread = &reader->intro_threads[step - 1];
          record.kind = WICK_RING_RECORD_THREAD;
          record.ring = thread->ring;
          record.thread.number = thread->number;
          record.thread.os_tid = thread->os_tid;
          record.thread.timestamp_ns = 0;
          record.thread.name = thread->name;
        }
      else
        {
          /* the root s1 belongs to the thread that opened the session (1) */
          WickSpanPayload span = { .id = 1, .name = reader->root_name };
          uint32_t ring = 0;
          record.span.thread = n_threads > 0 ? 1 : 0;
          bool synthesized = step > n_threads + 1;
          if (synthesized)
            {
              size_t index = step - n_threads - 2;
              if (index >= reader->n_intro_spans)
                {
                  reader->intro_done = true;
                  break;
                }
              span = reader->intro_spans[index];
              ring = reader->intro_rings[index];
              record.span.thread = reader->rings[ring].thread;
            }
          record.kind = WICK_RING_RECORD_SPAN_START;
          record.ring = ring;
          record.span.id = span.id;
          record.span.parent = span.parent;
          record.span.name = wick_arena_resolve (&arena, span.name);
          record.span.span_kind = span.span_kind <= WICK_SPAN_MODULE ? span.span_kind : 0;
          record.span.step = span.step <= WICK_STEP_OPTIMIZER ? span.step : 0;
          record.span.measured = span.measured != 0;
          record.span.synthesized = synthesized;
          record.span.start_ns = span.start_ns;
          if (record.span.name == NULL || span.id == 0)
            {
              reader->stats.malformed++;
              note_error (reader, "an open span in the snapshot names no valid string");
              continue;
            }
          if (synthesized)
            record.span.name = budget_intro_name (reader, record.span.name);
        }
      deliver (reader, d, &record);
    }
}

static void check_detached (WickRingReader *reader);

static void
break_ring (WickRingReader *reader, uint32_t index, const char *why, uint64_t pos, uint64_t value)
{
  ReaderRing *ring = &reader->rings[index];
  /* a hold reader stopped mid-drain and detached meanwhile reads records the
   * producer has since overwritten: the detach is the cause, said first */
  check_detached (reader);
  ring->broken = true;
  ring->pos = pos;
  reader->stats.broken_rings++;
  char text[200];
  snprintf (text, sizeof text, "ring %u at position %llu: %s (%llu); reading of this ring stopped",
            index, (unsigned long long)pos, why, (unsigned long long)value);
  note_error (reader, "%s", text);
  free (ring->break_reason);
  ring->break_reason = strdup (text);
}

/* Records committed on broken ring index after the record it stopped at:
 * known once the producer has gone past the chunk of the break (every chunk
 * starts with a record, so the seq at commit can be read from the last
 * chunk); false while it is still inside it, or when commit went back. */
static bool
lost_after_break (WickRingReader *reader, uint32_t index, uint64_t *records)
{
  ReaderRing *ring = &reader->rings[index];
  uint64_t commit
    = atomic_load_explicit (&ring_control (reader, index)->commit, memory_order_acquire);
  uint64_t break_chunk = ring->pos & ~(uint64_t)(WICK_RING_CHUNK_BYTES - 1);
  uint32_t seq;
  if (!ring->seq_known || commit > WICK_RING_MAX_POSITION
      || commit <= break_chunk + WICK_RING_CHUNK_BYTES
      || !initial_seq (reader, index, commit, &seq))
    return false;
  *records = (uint32_t)(seq - ring->expected_seq);
  return true;
}

/* Reports what broken ring index cost this reader: at once a
 * wick_ring_broken extension record with the ring's error, then a LOST
 * record each time more of the records committed after the break can be
 * counted. */
static void deliver (WickRingReader *reader, Delivery *d, const WickRingRecord *record);

static void
report_broken_ring (WickRingReader *reader, Delivery *d, uint32_t index)
{
  ReaderRing *ring = &reader->rings[index];
  if (!ring->break_announced)
    {
      ring->break_announced = true;
      WickJson fields;
      wick_json_init (&fields);
      char head[32];
      snprintf (head, sizeof head, "\"ring\":%u,\"error\":", index);
      wick_json_raw (&fields, head);
      wick_json_string (&fields, ring->break_reason != NULL ? ring->break_reason : "");
      WickRingRecord broken;
      memset (&broken, 0, sizeof broken);
      broken.kind = WICK_RING_RECORD_EXTENSION;
      broken.ring = index;
      broken.extension.kind = "wick_ring_broken";
      broken.extension.timestamp_ns = ring->last_ns;
      broken.extension.json_fields = fields.failed ? "" : fields.data;
      deliver (reader, d, &broken);
      wick_json_clear (&fields);
    }
  uint64_t records = 0;
  if (d->stop || !lost_after_break (reader, index, &records) || records <= ring->break_lost)
    return;
  WickRingRecord lost;
  memset (&lost, 0, sizeof lost);
  lost.kind = WICK_RING_RECORD_LOST;
  lost.ring = index;
  lost.lost.count = records - ring->break_lost;
  lost.lost.after_ns = ring->last_ns;
  ring->break_lost = records;
  reader->stats.lost += lost.lost.count;
  deliver (reader, d, &lost);
}

/* Once the producer has finished or died and everything is read: drops no
 * DROPPED record announced (a thread that exited while it was dropping, a
 * stalled hold reader that was detached only at the end, records lost
 * because every ring was taken) as one DROPPED record per ring. */
static void
deliver_unannounced_drops (WickRingReader *reader, Delivery *d)
{
  if (wick_ring_reader_get_producer_state (reader) == WICK_PRODUCER_RUNNING)
    return;
  uint32_t n = rings_in_use (reader);
  for (uint32_t i = 0; i <= n && !d->stop; i++)
    {
      uint64_t total = i < n ? atomic_load_explicit (&ring_control (reader, i)->dropped,
                                                     memory_order_relaxed)
                             : atomic_load_explicit (&reader->header->unclaimed_dropped,
                                                     memory_order_relaxed);
      uint64_t *seen = i < n ? &reader->rings[i].dropped_seen : &reader->unclaimed_seen;
      if (total <= *seen)
        continue;
      WickRingRecord dropped;
      memset (&dropped, 0, sizeof dropped);
      dropped.kind = WICK_RING_RECORD_DROPPED;
      dropped.ring = i < n ? i : reader->n_rings;
      dropped.dropped.count = total - *seen;
      dropped.dropped.first_ns = i < n ? reader->rings[i].last_ns : 0;
      dropped.dropped.last_ns = dropped.dropped.first_ns;
      dropped.dropped.total = total;
      *seen = total;
      deliver (reader, d, &dropped);
    }
}

/* A hold reader of another process whose slot the producer marked detached
 * (it stalled longer than the hold timeout) frees the slot and follows. */
static void
check_detached (WickRingReader *reader)
{
  int slot = reader->holder_slot;
  if (slot < 0 || reader->cursors == NULL)
    return;
  uint32_t state = atomic_load_explicit (&reader->cursors->holder_state[slot], memory_order_acquire);
  int32_t pid = atomic_load_explicit (&reader->cursors->holder_pid[slot], memory_order_relaxed);
  if (state == WICK_HOLDER_ACTIVE && pid == (int32_t)getpid ())
    return;
  if (state == WICK_HOLDER_DETACHED && pid == (int32_t)getpid ())
    {
      uint32_t expected = WICK_HOLDER_DETACHED;
      atomic_compare_exchange_strong (&reader->cursors->holder_state[slot], &expected,
                                      WICK_HOLDER_FREE);
    }
  reader->holder_slot = -1;
  reader->mode = WICK_RING_READER_FOLLOW;
  reader->stats.detached = true;
  note_error (reader,
              "this hold reader was detached by the producer: it held the ring without "
              "draining for more than the session's hold timeout (%llu ms); it follows now and "
              "counts what it lost",
              (unsigned long long)(reader->header->hold_timeout_ns / 1000000u));
}

static void
resync (WickRingReader *reader, uint32_t index, uint64_t commit)
{
  ReaderRing *ring = &reader->rings[index];
  uint64_t safe = commit + WICK_RING_MAX_RECORD - reader->ring_bytes;
  uint64_t target = (safe + WICK_RING_CHUNK_BYTES - 1) & ~(uint64_t)(WICK_RING_CHUNK_BYTES - 1);
  ring->pos = target < commit ? target : commit;
}

static void
note_seq (WickRingReader *reader, Delivery *d, uint32_t index, uint32_t seq)
{
  ReaderRing *ring = &reader->rings[index];
  if (ring->seq_known && seq != ring->expected_seq)
    {
      WickRingRecord lost;
      memset (&lost, 0, sizeof lost);
      lost.kind = WICK_RING_RECORD_LOST;
      lost.ring = index;
      lost.lost.count = (uint32_t)(seq - ring->expected_seq);
      lost.lost.after_ns = ring->last_ns;
      reader->stats.lost += lost.lost.count;
      deliver (reader, d, &lost);
    }
  ring->seq_known = true;
  ring->expected_seq = seq + 1;
}

static void
note_time (ReaderRing *ring, const WickRingRecord *record)
{
  switch (record->kind)
    {
      case WICK_RING_RECORD_SPAN_START:
        ring->last_ns = record->span.start_ns;
        break;
      case WICK_RING_RECORD_SPAN_END:
        ring->last_ns = record->span.start_ns + record->span.duration_ns;
        break;
      case WICK_RING_RECORD_MEMORY:
        ring->last_ns = record->memory.timestamp_ns;
        break;
      case WICK_RING_RECORD_EXTENSION:
        ring->last_ns = record->extension.timestamp_ns;
        break;
      case WICK_RING_RECORD_THREAD:
        ring->last_ns = record->thread.timestamp_ns;
        break;
      default:
        break;
    }
}

/* Decodes and delivers one record copied at record (size bytes, at ring
 * position pos). */
static void
deliver_copied (WickRingReader *reader, Delivery *d, uint32_t index, const uint8_t *record,
                uint64_t size, const WickArenaView *arena)
{
  WickRingRecord decoded;
  char error[160];
  switch (wick_record_decode (record, size, arena, &reader->scratch, &decoded, error, sizeof error))
    {
      case WICK_DECODE_OK:
        decoded.ring = index;
        if (decoded.kind == WICK_RING_RECORD_THREAD)
          reader->rings[index].thread = decoded.thread.number;
        else if (decoded.kind == WICK_RING_RECORD_DROPPED)
          reader->rings[index].dropped_seen += decoded.dropped.count;
        else if (decoded.kind == WICK_RING_RECORD_SPAN_START
                 || decoded.kind == WICK_RING_RECORD_SPAN_END)
          decoded.span.thread = reader->rings[index].thread;
        note_time (&reader->rings[index], &decoded);
        deliver (reader, d, &decoded);
        break;
      case WICK_DECODE_UNKNOWN_KIND:
        reader->stats.unknown_skipped++;
        break;
      case WICK_DECODE_PAD:
        break;
      case WICK_DECODE_MALFORMED:
        reader->stats.malformed++;
        check_detached (reader); /* as in break_ring: the cause first */
        note_error (reader, "ring %u: %s", index, error);
        break;
    }
}

/* Span records, most of a ring, decoded inline. False when the record is not
 * a well-formed span record (then the general decoder reports it). */
static inline bool
deliver_span_fast (WickRingReader *reader, Delivery *d, uint32_t index,
                   const WickRecordHeader *header, const uint8_t *record, uint64_t size,
                   const WickArenaView *arena)
{
  bool end = header->kind == WICK_KIND_SPAN_END;
  if (!(end ? size == sizeof (WickSpanEndRecord)
            : header->kind == WICK_KIND_SPAN_START && size == sizeof (WickSpanStartRecord)))
    return false;
  WickSpanPayload span;
  memcpy (&span, record + sizeof *header, sizeof span);
  if (d->formatter != NULL)
    {
      /* drain_jsonl: no WickRingRecord, no callback, the name by handle */
      uint64_t duration = 0;
      if (end)
        memcpy (&duration, record + sizeof *header + sizeof span, 8);
      if (wick_jsonl_formatter_feed_span_raw (d->formatter, &span, end, duration,
                                              reader->rings[index].thread, index, arena, d->emit,
                                              d->emit_data))
        {
          reader->rings[index].last_ns = span.start_ns + duration;
          reader->stats.records++;
          d->delivered++;
          if (d->max_records > 0 && d->delivered >= d->max_records)
            d->stop = true;
          return true;
        }
    }
  const char *name = wick_arena_resolve (arena, span.name);
  if (name == NULL || span.id == 0 || span.span_kind > WICK_SPAN_MODULE
      || span.step > WICK_STEP_OPTIMIZER)
    return false;
  WickRingRecord out;
  out.kind = end ? WICK_RING_RECORD_SPAN_END : WICK_RING_RECORD_SPAN_START;
  out.ring = index;
  out.span.id = span.id;
  out.span.parent = span.parent;
  out.span.name = name;
  out.span.span_kind = (WickSpanKind)span.span_kind;
  out.span.step = (WickStep)span.step;
  out.span.measured = span.measured != 0;
  out.span.synthesized = false;
  out.span.start_ns = span.start_ns;
  out.span.duration_ns = 0;
  out.span.thread = reader->rings[index].thread;
  if (end)
    memcpy (&out.span.duration_ns, record + sizeof *header + sizeof span, 8);
  reader->rings[index].last_ns = span.start_ns + out.span.duration_ns;
  deliver (reader, d, &out);
  return true;
}

/* Why a record of size bytes at ring position position, with available
 * bytes copied from there, cannot be read, or NULL. */
static const char *
framing_error (const WickRecordHeader *header, uint64_t position, uint64_t size, uint64_t available)
{
  if (header->words == 0)
    return "zero record length";
  if ((position & (WICK_RING_CHUNK_BYTES - 1)) + size > WICK_RING_CHUNK_BYTES)
    return "record length crosses its chunk";
  if (size > available)
    return "record length runs past the committed data";
  if (size > WICK_RING_MAX_RECORD && header->kind != WICK_KIND_PAD)
    return "record length exceeds the largest record";
  return NULL;
}

/* Copies the committed records of ring index up to its chunk's end out of
 * shared memory at once (one commit load before and one after, so a reader
 * that keeps up does not bounce the producer's commit line per record), then
 * delivers them. False when there is nothing (more) to read now. */
static bool
read_batch (WickRingReader *reader, Delivery *d, uint32_t index)
{
  ReaderRing *ring = &reader->rings[index];
  WickRingControl *control = ring_control (reader, index);
  uint64_t commit = atomic_load_explicit (&control->commit, memory_order_acquire);
  uint64_t pos = ring->pos;
  if (commit < pos || commit > WICK_RING_MAX_POSITION)
    {
      break_ring (reader, index,
                  commit < pos ? "the commit position went backwards"
                               : "the commit position is past 2^62",
                  pos, commit);
      report_broken_ring (reader, d, index);
      return false;
    }
  if (pos >= ring->horizon)
    return false; /* a producer faster than this reader must not keep one drain going forever */
  if (is_lapped (reader, pos, commit))
    {
      resync (reader, index, commit);
      return true;
    }
  uint64_t chunk_end = (pos | (WICK_RING_CHUNK_BYTES - 1)) + 1;
  uint64_t limit = commit < ring->horizon ? commit : ring->horizon;
  uint64_t end = limit < chunk_end ? limit : chunk_end;
  uint64_t n = end - pos;
  memcpy (reader->batch, ring_data (reader, index) + (pos & (reader->ring_bytes - 1)), n);
  atomic_thread_fence (memory_order_acquire);
  uint64_t after = atomic_load_explicit (&control->commit, memory_order_relaxed);
  if (after < commit || after > WICK_RING_MAX_POSITION)
    {
      break_ring (reader, index,
                  after < commit ? "the commit position went backwards"
                                 : "the commit position is past 2^62",
                  pos, after);
      report_broken_ring (reader, d, index);
      return false;
    }
  if (is_lapped (reader, pos, after))
    {
      resync (reader, index, after);
      return true;
    }
  const uint8_t *batch = (const uint8_t *)reader->batch;
  WickArenaView arena = arena_view (reader);
  uint64_t offset = 0;
  while (offset < n)
    {
      WickRecordHeader header;
      memcpy (&header, batch + offset, sizeof header);
      uint64_t size = (uint64_t)header.words * 8;
      const char *framing = framing_error (&header, pos + offset, size, n - offset);
      if (framing != NULL)
        {
          break_ring (reader, index, framing, pos + offset, size);
          report_broken_ring (reader, d, index);
          return false;
        }
      if (header.kind != WICK_KIND_PAD)
        {
          if (__builtin_expect (!ring->seq_known || header.seq != ring->expected_seq, 0))
            {
              note_seq (reader, d, index, header.seq);
              if (d->stop)
                {
                  ring->expected_seq = header.seq; /* deliver it on the next drain */
                  ring->pos = pos + offset;
                  return false;
                }
            }
          else
            ring->expected_seq++;
          if (!deliver_span_fast (reader, d, index, &header, batch + offset, size, &arena))
            deliver_copied (reader, d, index, batch + offset, size, &arena);
        }
      offset += size;
      if (d->stop)
        {
          ring->pos = pos + offset;
          return false;
        }
    }
  ring->pos = end;
  return true;
}

/* A broken ring no longer holds the producer back: its tail follows commit
 * (what this reader cannot read is counted as lost, never waited for). */
static void
publish_hold_tail (WickRingReader *reader, uint32_t index)
{
  uint64_t tail = reader->rings[index].pos;
  if (reader->rings[index].broken && (reader->private_tails != NULL || reader->holder_slot >= 0))
    tail = atomic_load_explicit (&ring_control (reader, index)->commit, memory_order_acquire);
  if (reader->private_tails != NULL)
    atomic_store_explicit (&reader->private_tails[index], tail, memory_order_release);
  else if (reader->holder_slot >= 0)
    atomic_store_explicit (wick_cursor_tail (reader->cursors, index, reader->holder_slot), tail,
                           memory_order_release);
}

static long drain (WickRingReader *reader, Delivery *d);

long
wick_ring_reader_drain (WickRingReader *reader, size_t max_records, WickRingRecordFunc callback,
                        void *user_data, WickError *error)
{
  if (reader == NULL || callback == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "wick_ring_reader_drain: a reader and a callback are required");
      return -1;
    }
  Delivery d = { callback, user_data, max_records, 0, false, NULL, NULL, NULL };
  return drain (reader, &d);
}

typedef struct
{
  WickJsonlFormatter *formatter;
  WickLineFunc emit;
  void *emit_data;
} FeedFormatter;

static bool
feed_formatter (const WickRingRecord *record, void *user_data)
{
  FeedFormatter *feed = user_data;
  wick_jsonl_formatter_feed (feed->formatter, record, feed->emit, feed->emit_data);
  return true;
}

long
wick_ring_reader_drain_jsonl (WickRingReader *reader, size_t max_records,
                              WickJsonlFormatter *formatter, WickLineFunc emit, void *emit_data,
                              WickRingRecordFunc callback, void *user_data, WickError *error)
{
  if (reader == NULL || formatter == NULL || emit == NULL)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "wick_ring_reader_drain_jsonl: a reader, a formatter and an emit "
                      "function are required");
      return -1;
    }
  FeedFormatter feed = { formatter, emit, emit_data };
  Delivery d = { callback != NULL ? callback : feed_formatter,
                 callback != NULL ? user_data : &feed,
                 max_records,
                 0,
                 false,
                 formatter,
                 emit,
                 emit_data };
  return drain (reader, &d);
}

static uint64_t
monotonic_ns (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static long
drain (WickRingReader *reader, Delivery *dp)
{
  Delivery d = *dp;
  check_detached (reader);
  deliver_intro (reader, &d);
  uint32_t n_rings = rings_in_use (reader);
  for (uint32_t i = 0; i < n_rings; i++)
    reader->rings[i].horizon
      = atomic_load_explicit (&ring_control (reader, i)->commit, memory_order_acquire);
  bool progress = true;
  bool out_of_time = false;
  uint64_t started = monotonic_ns ();
  while (progress && !d.stop && !out_of_time)
    {
      progress = false;
      uint32_t n = rings_in_use (reader);
      for (uint32_t i = 0; i < n && !d.stop && !out_of_time; i++)
        {
          if (reader->rings[i].broken)
            {
              report_broken_ring (reader, &d, i);
              publish_hold_tail (reader, i);
              continue;
            }
          for (int batch = 0; batch < 64 && !d.stop; batch++)
            {
              if (!read_batch (reader, &d, i))
                break;
              progress = true;
            }
          publish_hold_tail (reader, i);
          /* whatever a producer does to its counters, a drain returns */
          out_of_time = monotonic_ns () - started > WICK_RING_READER_DRAIN_BUDGET_NS;
        }
    }
  reader->drained = !d.stop && !out_of_time && reader->intro_done;
  if (reader->drained)
    {
      uint32_t n = rings_in_use (reader);
      for (uint32_t i = 0; i < n; i++)
        if (!reader->rings[i].broken
            && atomic_load_explicit (&ring_control (reader, i)->commit, memory_order_acquire)
                 != reader->rings[i].pos)
          reader->drained = false;
    }
  if (reader->drained)
    deliver_unannounced_drops (reader, &d);
  return (long)d.delivered;
}
