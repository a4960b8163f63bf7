/* wick-ring-producer.c — the producer side of the ring: the memfd, a ring per
 * recording thread, and the slow path of reserving space (chunk padding, the
 * hold readers' limit, drop / block / overwrite, DROPPED records).
 *
 * Invariants: a producer writes only its own ring and only between the
 * positions it may (see wick-ring-layout.h); a ring has at most one owner;
 * nothing here runs on the hot path except through wick_producer_reserve's
 * rare miss.
 */
#include "wick-session-internal.h"

#include "wick-record-codec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static WickRingControl none_control;
WickProducer wick_producer_none = { .control = &none_control };

__thread WickProducerCache wick_producer_cache;

/* ---------------------------------------------------------------------------
 * Threads: which producers this thread holds, released when it exits.
 */

#define THREAD_MAX_SESSIONS 16

typedef struct
{
  uint64_t serial;
  WickProducer *producer;
} ThreadClaim;

static __thread ThreadClaim thread_claims[THREAD_MAX_SESSIONS];
static pthread_key_t thread_exit_key;
static pthread_once_t thread_exit_once = PTHREAD_ONCE_INIT;

/* Sessions alive, so that a thread exiting after a session closed does not
 * touch freed memory. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static WickSession *live_sessions[256];
static size_t n_live_sessions;

static bool
session_is_live_locked (uint64_t serial, WickSession **out)
{
  for (size_t i = 0; i < n_live_sessions; i++)
    if (live_sessions[i]->serial == serial)
      {
        *out = live_sessions[i];
        return true;
      }
  return false;
}

void
wick_thread_slot_install (WickSession *session, WickProducer *producer)
{
  uintptr_t tp = (uintptr_t)__builtin_thread_pointer ();
  WickThreadSlot *slot = wick_thread_slot_mine (session, tp);
  uintptr_t expected = 0;
  if (producer == &wick_producer_none || producer->session != session || session->forked
      || !wick_clock.use_tsc)
    return;
  if (atomic_load_explicit (&slot->tp, memory_order_relaxed) == tp)
    {
      slot->producer = producer;
      return;
    }
  /* producer is written after the claim: only this thread reads the slot
   * once tp is its own, and it reads in program order */
  if (atomic_compare_exchange_strong (&slot->tp, &expected, tp))
    slot->producer = producer;
}

static void
wick_thread_slot_release (WickSession *session)
{
  uintptr_t tp = (uintptr_t)__builtin_thread_pointer ();
  WickThreadSlot *slot = wick_thread_slot_mine (session, tp);
  if (atomic_load_explicit (&slot->tp, memory_order_relaxed) != tp)
    return;
  slot->producer = NULL;
  /* a new thread may get this thread pointer: it must not find the slot */
  atomic_store_explicit (&slot->tp, 0, memory_order_release);
}

void
wick_thread_slots_clear (WickSession *session)
{
  for (int i = 0; i < WICK_THREAD_SLOTS; i++)
    {
      session->thread_slots[i].producer = NULL;
      atomic_store (&session->thread_slots[i].tp, 0);
    }
}

static void
release_producer_locked (WickSession *session, WickProducer *producer)
{
  wick_thread_slot_release (session);
  pthread_mutex_lock (&session->lock);
  if (producer->in_use)
    {
      producer->control->next_seq = producer->seq;
      atomic_store_explicit (&producer->control->owner_tid, 0, memory_order_release);
      producer->in_use = 0;
      /* a WickThreadHandle this thread kept (a destructor that runs after this
       * one) takes the slow path, which finds no producer of its own */
      wick_producer_stop_fast (producer);
    }
  pthread_mutex_unlock (&session->lock);
}

static void
thread_exit (void *unused)
{
  pthread_mutex_lock (&live_lock);
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    {
      WickSession *session;
      if (thread_claims[i].producer != NULL
          && session_is_live_locked (thread_claims[i].serial, &session))
        release_producer_locked (session, thread_claims[i].producer);
      thread_claims[i].producer = NULL;
      thread_claims[i].serial = 0;
    }
  pthread_mutex_unlock (&live_lock);
  wick_producer_cache.serial = 0;
  wick_producer_cache.producer = NULL;
}

static void
thread_exit_key_create (void)
{
  pthread_key_create (&thread_exit_key, thread_exit);
}

/* Fork. A child has one thread, a copy of the parent's memory and the
 * parent's ring mapped shared: without this it would write into the parent's
 * rings (two processes on one ring's commit word break it) and wait on locks
 * and threads that exist only in the parent. prepare takes live_lock so the
 * list of sessions is whole in the child; the child handler then gives every
 * live session a private view of its ring and makes it record nothing
 * (wick_session_after_fork_child), and forgets this thread's claims. */
static void
fork_prepare (void)
{
  pthread_mutex_lock (&live_lock);
}

static void
fork_parent (void)
{
  pthread_mutex_unlock (&live_lock);
}

static void
fork_child (void)
{
  for (size_t i = 0; i < n_live_sessions; i++)
    wick_session_after_fork_child (live_sessions[i]);
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    {
      thread_claims[i].serial = 0;
      thread_claims[i].producer = NULL;
    }
  wick_producer_cache.serial = 0;
  wick_producer_cache.producer = NULL;
  pthread_mutex_unlock (&live_lock);
}

static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;

static void
install_fork_handlers (void)
{
  pthread_atfork (fork_prepare, fork_parent, fork_child);
}

bool
wick_session_register_live (WickSession *session)
{
  bool ok = false;
  pthread_once (&fork_handlers_once, install_fork_handlers);
  pthread_mutex_lock (&live_lock);
  if (n_live_sessions < sizeof live_sessions / sizeof live_sessions[0])
    {
      live_sessions[n_live_sessions++] = session;
      ok = true;
    }
  pthread_mutex_unlock (&live_lock);
  return ok;
}

void
wick_producer_forget_session (WickSession *session)
{
  pthread_mutex_lock (&live_lock);
  for (size_t i = 0; i < n_live_sessions; i++)
    if (live_sessions[i] == session)
      {
        live_sessions[i] = live_sessions[--n_live_sessions];
        break;
      }
  pthread_mutex_unlock (&live_lock);
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    if (thread_claims[i].serial == session->serial)
      {
        thread_claims[i].serial = 0;
        thread_claims[i].producer = NULL;
      }
  if (wick_producer_cache.serial == session->serial)
    {
      wick_producer_cache.serial = 0;
      wick_producer_cache.producer = NULL;
    }
}

/* ---------------------------------------------------------------------------
 * The memfd
 */

static uint64_t
random_generation (void)
{
  uint64_t value = 0;
  FILE *file = fopen ("/dev/urandom", "rb");
  if (file != NULL)
    {
      if (fread (&value, sizeof value, 1, file) != 1)
        value = 0;
      fclose (file);
    }
  return value ^ wick_clock_monotonic_ns ();
}

static bool
is_power_of_two (uint64_t n)
{
  return n != 0 && (n & (n - 1)) == 0;
}

bool
wick_ring_create (WickSession *session, size_t ring_bytes, size_t max_threads, size_t arena_bytes,
                  WickError *error)
{
  if (ring_bytes == 0)
    ring_bytes = 4u << 20;
  if (max_threads == 0)
    max_threads = 32;
  if (arena_bytes == 0)
    arena_bytes = 1u << 20;
  if (!is_power_of_two (ring_bytes) || ring_bytes < WICK_RING_MIN_RING_BYTES
      || ring_bytes > WICK_RING_MAX_RING_BYTES)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "session options: ring_bytes %zu must be a power of two between "
                      "256 KiB and 4 GiB",
                      ring_bytes);
      return false;
    }
  if (max_threads > WICK_RING_MAX_RINGS)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "session options: max_threads %zu exceeds %d", max_threads,
                      WICK_RING_MAX_RINGS);
      return false;
    }
  if (arena_bytes < 4096 || arena_bytes > (UINT64_C (1) << 31))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT,
                      "session options: string_arena_bytes %zu must be between 4 KiB and "
                      "2 GiB",
                      arena_bytes);
      return false;
    }
  arena_bytes = (arena_bytes + 4095) & ~(size_t)4095;
  uint64_t meta_offset = WICK_RING_HEADER_BYTES;
  uint64_t arena_offset = meta_offset + WICK_RING_META_CAPACITY;
  uint64_t controls_offset = arena_offset + arena_bytes;
  uint64_t data_offset = controls_offset + (uint64_t)max_threads * WICK_RING_CONTROL_BYTES;
  uint64_t total = data_offset + (uint64_t)max_threads * ring_bytes;

  int fd = memfd_create ("wick-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    {
      wick_set_error (error, WICK_ERROR_IO, "memfd_create for the ring failed: %s", strerror (errno));
      return false;
    }
  if (ftruncate (fd, (off_t)total) != 0)
    {
      wick_set_error (error, WICK_ERROR_IO, "sizing the ring memfd to %llu bytes failed: %s",
                      (unsigned long long)total, strerror (errno));
      close (fd);
      return false;
    }
  void *map = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    {
      wick_set_error (error, WICK_ERROR_IO, "mapping the ring memfd failed: %s", strerror (errno));
      close (fd);
      return false;
    }
  /* From here on only this mapping can write the ring: no write(), no new
   * writable mapping (whatever the descriptor's mode), no size change. */
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE) != 0)
    {
      wick_set_error (error, WICK_ERROR_IO, "sealing the ring memfd failed: %s", strerror (errno));
      munmap (map, total);
      close (fd);
      return false;
    }
  char proc_path[64];
  snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  int reader_fd = open (proc_path, O_RDONLY | O_CLOEXEC);
  if (reader_fd < 0)
    reader_fd = fcntl (fd, F_DUPFD_CLOEXEC, 0); /* no /proc: the seals still hold */
  uint64_t cursors_bytes
    = (WICK_CURSORS_HEADER_BYTES + (uint64_t)max_threads * WICK_RING_MAX_HOLDERS * 8 + 4095)
      & ~(uint64_t)4095;
  int cursors_fd = memfd_create ("wick-ring-cursors", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  void *cursors = MAP_FAILED;
  if (cursors_fd >= 0 && ftruncate (cursors_fd, (off_t)cursors_bytes) == 0
      && fcntl (cursors_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
    cursors = mmap (NULL, cursors_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cursors_fd, 0);
  if (reader_fd < 0 || cursors == MAP_FAILED)
    {
      wick_set_error (error, WICK_ERROR_IO, "creating the ring's reader descriptors failed: %s",
                      strerror (errno));
      if (cursors_fd >= 0)
        close (cursors_fd);
      if (reader_fd >= 0)
        close (reader_fd);
      munmap (map, total);
      close (fd);
      return false;
    }
  session->reader_fd = reader_fd;
  session->cursors_fd = cursors_fd;
  session->cursors = cursors;
  session->cursors_bytes = cursors_bytes;
  session->cursors->version = WICK_RING_FORMAT_VERSION;
  session->cursors->n_rings = (uint32_t)max_threads;
  session->cursors->file_bytes = cursors_bytes;
  session->writer_tails = calloc (max_threads, sizeof *session->writer_tails);
  session->producers = calloc (max_threads, sizeof (WickProducer));
  if (session->producers == NULL)
    {
      munmap (map, total);
      close (fd);
      wick_set_error (error, WICK_ERROR_NO_MEMORY, "out of memory for %zu producers", max_threads);
      return false;
    }
  session->memfd = fd;
  session->map = map;
  session->map_bytes = total;
  session->header = map;
  session->controls = (WickRingControl *)(void *)((uint8_t *)map + controls_offset);
  session->data = (uint8_t *)map + data_offset;
  session->ring_bytes = ring_bytes;
  session->n_rings = (uint32_t)max_threads;

  WickRingHeader *h = session->header;
  h->version = WICK_RING_FORMAT_VERSION;
  h->header_bytes = WICK_RING_HEADER_BYTES;
  h->file_bytes = total;
  h->pid = getpid ();
  h->policy = (uint32_t)session->policy;
  h->start_unix_ns = session->start_unix_ns;
  h->generation = random_generation ();
  session->cursors->generation = h->generation;
  atomic_store_explicit ((_Atomic uint64_t *)&session->cursors->magic, WICK_CURSORS_MAGIC,
                         memory_order_release);
  h->n_rings = (uint32_t)max_threads;
  h->strict = session->strict;
  h->ring_bytes = ring_bytes;
  h->chunk_bytes = WICK_RING_CHUNK_BYTES;
  h->max_record_bytes = WICK_RING_MAX_RECORD;
  h->meta_offset = meta_offset;
  h->meta_capacity = WICK_RING_META_CAPACITY;
  h->arena_offset = arena_offset;
  h->arena_capacity = arena_bytes;
  h->controls_offset = controls_offset;
  h->control_bytes = WICK_RING_CONTROL_BYTES;
  h->data_offset = data_offset;
  h->hold_timeout_ns = session->hold_timeout_ns;
  atomic_store (&h->arena_used, 8);
  atomic_store (&h->state, WICK_RING_STATE_RUNNING);
  atomic_store_explicit ((_Atomic uint64_t *)&h->magic, WICK_RING_MAGIC, memory_order_release);
  return true;
}

void
wick_ring_destroy (WickSession *session)
{
  if (session->map != NULL)
    munmap (session->map, session->map_bytes);
  if (session->memfd >= 0)
    close (session->memfd);
  if (session->reader_fd >= 0)
    close (session->reader_fd);
  if (session->cursors != NULL)
    munmap (session->cursors, session->cursors_bytes);
  if (session->cursors_fd >= 0)
    close (session->cursors_fd);
  free (session->producers);
  free (session->writer_tails);
  session->writer_tails = NULL;
  session->cursors = NULL;
  session->map = NULL;
  session->memfd = -1;
  session->reader_fd = -1;
  session->cursors_fd = -1;
  session->producers = NULL;
}

bool
wick_ring_set_meta (WickSession *session, const char *line, size_t length, WickError *error)
{
  if (length > WICK_RING_META_CAPACITY)
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "the meta record is %zu bytes, more than the ring's %d", length,
                      WICK_RING_META_CAPACITY);
      return false;
    }
  memcpy (session->map + session->header->meta_offset, line, length);
  session->header->meta_length = (uint32_t)length;
  return true;
}

uint64_t
wick_ring_total_dropped (WickSession *session)
{
  uint64_t total = atomic_load (&session->header->unclaimed_dropped) + atomic_load (&session->header->writer_lost);
  uint32_t n = atomic_load (&session->header->rings_in_use);
  for (uint32_t i = 0; i < n && i < session->n_rings; i++)
    total
      += atomic_load_explicit (&wick_session_control (session, i)->dropped, memory_order_relaxed);
  return total;
}

/* Spans open on all threads (not counting the root s1). */
size_t
wick_ring_open_spans (WickSession *session)
{
  size_t open = 0;
  uint32_t n = atomic_load (&session->header->rings_in_use);
  for (uint32_t i = 0; i < n && i < session->n_rings; i++)
    open += (size_t)(atomic_load (&wick_session_control (session, i)->depth_gen) & 0xffffffffu);
  return open;
}

/* ---------------------------------------------------------------------------
 * Claiming a ring
 */

static uint64_t
chunk_end (uint64_t position)
{
  return (position | (WICK_RING_CHUNK_BYTES - 1)) + 1;
}

/* The nearest position the hold readers allow. The JSONL writer's positions
 * are private; the cursors memfd's are hostile and read once each, a state
 * other than ACTIVE meaning free and a tail clamped into [head - ring, head]:
 * a scribbled cursor can make this producer drop (counted) or overwrite what
 * that reader had not read, never write outside its ring. */
static uint64_t
hold_limit (WickSession *session, WickProducer *producer)
{
  if (session->policy == WICK_RING_OVERWRITE)
    return UINT64_MAX;
  uint64_t head = wick_producer_head (producer);
  uint64_t floor = head > producer->capacity ? head - producer->capacity : 0;
  uint64_t limit = UINT64_MAX;
  if (atomic_load_explicit (&session->writer_holding, memory_order_acquire))
    {
      uint64_t tail = atomic_load_explicit (&session->writer_tails[producer->index],
                                            memory_order_acquire);
      limit = (tail < head ? tail : head) + producer->capacity;
    }
  for (int slot = 0; slot < WICK_RING_MAX_HOLDERS; slot++)
    {
      if (atomic_load_explicit (&session->cursors->holder_state[slot], memory_order_acquire)
          != WICK_HOLDER_ACTIVE)
        continue;
      uint64_t tail = atomic_load_explicit (wick_cursor_tail (session->cursors, producer->index, slot),
                                            memory_order_acquire);
      if (tail > head)
        tail = head;
      if (tail < floor)
        tail = floor;
      if (tail + producer->capacity < limit)
        limit = tail + producer->capacity;
    }
  return limit;
}

static void
refresh_fast_end (WickSession *session, WickProducer *producer)
{
  uint64_t limit = hold_limit (session, producer);
  uint64_t end = chunk_end (wick_producer_head (producer));
  /* below the hold limit less the span-end reserve: only span ends go further */
  if (limit != UINT64_MAX)
    limit = limit > WICK_END_RESERVE_BYTES ? limit - WICK_END_RESERVE_BYTES : 0;
  producer->fast_end = limit < end ? limit : end;
  if (producer->thread_pending)
    producer->fast_end = 0; /* the next record takes the slow path, which writes it first */
  wick_producer_update_limits (producer);
}

/* ---------------------------------------------------------------------------
 * Thread identity
 */

static void write_padding_if_needed (WickProducer *producer, uint64_t size);

static __thread char thread_name_set[WICK_THREAD_NAME_BYTES];

/* Copies at most size - 1 bytes of text, cut on a UTF-8 character boundary. */
static void
copy_name (char *out, size_t size, const char *text)
{
  size_t length = strnlen (text, size - 1);
  if (length == size - 1)
    while (length > 0 && ((unsigned char)text[length] & 0xc0) == 0x80)
      length--;
  memcpy (out, text, length);
  memset (out + length, 0, size - length);
}

static void
thread_name_now (char *out, size_t size)
{
  if (thread_name_set[0] != '\0')
    {
      copy_name (out, size, thread_name_set);
      return;
    }
  char os_name[32] = "";
  if (pthread_getname_np (pthread_self (), os_name, sizeof os_name) != 0 || os_name[0] == '\0')
    snprintf (os_name, sizeof os_name, "thread %d", (int)syscall (SYS_gettid));
  copy_name (out, size, os_name);
}

/* Publishes the producer's identity in its ring control (for late readers)
 * and makes the next record write the THREAD record that announces it. */
static void
producer_announce_thread (WickProducer *producer)
{
  memcpy (producer->control->thread_name, producer->thread_name, WICK_THREAD_NAME_BYTES);
  atomic_store_explicit (&producer->control->thread_number, producer->thread,
                         memory_order_release);
  producer->thread_pending = true;
  wick_producer_stop_fast (producer);
}

#define THREAD_RECORD_BYTES (8 + 3 * 8 + 8 + WICK_THREAD_NAME_BYTES)

static void
write_thread_record (WickSession *session, WickProducer *producer)
{
  WickRingRecord record;
  memset (&record, 0, sizeof record);
  record.kind = WICK_RING_RECORD_THREAD;
  record.thread.number = producer->thread;
  record.thread.os_tid = producer->tid;
  record.thread.timestamp_ns = wick_session_clock (session);
  record.thread.name = producer->thread_name;
  WickEncoder encoder = { NULL, 8 };
  wick_encode_payload (&encoder, WICK_KIND_THREAD, &record);
  uint64_t size = encoder.pos;
  write_padding_if_needed (producer, size);
  encoder.base = producer->data + (wick_producer_head (producer) & producer->mask);
  encoder.pos = 8;
  atomic_thread_fence (memory_order_release);
  wick_encode_payload (&encoder, WICK_KIND_THREAD, &record);
  wick_producer_commit (producer, encoder.base, size, WICK_KIND_THREAD);
  producer->thread_pending = false;
}

void
wick_thread_set_name (const char *name)
{
  copy_name (thread_name_set, sizeof thread_name_set, name != NULL ? name : "");
  pthread_mutex_lock (&live_lock);
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    {
      WickSession *session;
      WickProducer *producer = thread_claims[i].producer;
      if (producer == NULL || !session_is_live_locked (thread_claims[i].serial, &session))
        continue;
      thread_name_now (producer->thread_name, sizeof producer->thread_name);
      producer_announce_thread (producer);
    }
  pthread_mutex_unlock (&live_lock);
}

/* The WickThreadHandle part of a producer that is not a ring's: the session's
 * clock and the slow paths (wick-session-spans.c). */
static void
wick_producer_set_thread (WickSession *session, WickProducer *producer)
{
  producer->tsc_base = session->tsc_base;
  producer->tsc_mult = session->tsc_mult;
  producer->tsc_offset = session->tsc_offset;
  producer->begin_slow = wick_thread_begin_slow;
  producer->end_slow = wick_thread_end_slow;
}

void
wick_producer_init_unclaimed (WickSession *session)
{
  WickProducer *producer = &session->unclaimed;
  memset (producer, 0, sizeof *producer);
  producer->session = session;
  producer->serial = session->serial;
  producer->control = wick_producer_none.control;
  wick_producer_set_thread (session, producer);
}

WickProducer *
wick_producer_get_slow (WickSession *session)
{
  if (__builtin_expect (session->forked, 0))
    {
      wick_session_note_forked_record (session);
      return &wick_producer_none; /* never cached: every record comes back here */
    }
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    if (thread_claims[i].serial == session->serial && thread_claims[i].producer != NULL)
      {
        wick_producer_cache.serial = session->serial;
        wick_producer_cache.producer = thread_claims[i].producer;
        return thread_claims[i].producer;
      }
  size_t claim_slot = THREAD_MAX_SESSIONS;
  for (size_t i = 0; i < THREAD_MAX_SESSIONS; i++)
    if (thread_claims[i].producer == NULL)
      {
        claim_slot = i;
        break;
      }
  if (claim_slot == THREAD_MAX_SESSIONS)
    return &wick_producer_none;
  pthread_once (&thread_exit_once, thread_exit_key_create);

  WickProducer *producer = NULL;
  pthread_mutex_lock (&session->lock);
  for (uint32_t i = 0; i < session->n_rings; i++)
    if (!session->producers[i].in_use)
      {
        producer = &session->producers[i];
        WickRingControl *control = wick_session_control (session, i);
        memset (producer, 0, sizeof *producer);
        producer->session = session;
        producer->serial = session->serial;
        wick_producer_set_thread (session, producer);
        producer->control = control;
        producer->data = session->data + (uint64_t)i * session->ring_bytes;
        producer->capacity = session->ring_bytes;
        producer->mask = session->ring_bytes - 1;
        producer->seq = control->next_seq;
        /* the ring's drop count goes on from the last owner's */
        producer->dropped_total = atomic_load (&control->dropped);
        producer->index = i;
        atomic_store (&control->depth_gen,
                      atomic_load (&control->depth_gen) & ~UINT64_C (0xffffffff));
        control->below_stack.id = 1;
        producer->tid = (int)syscall (SYS_gettid);
        producer->in_use = 1;
        producer->thread = atomic_fetch_add (&session->next_thread, 1);
        thread_name_now (producer->thread_name, sizeof producer->thread_name);
        atomic_store (&control->owner_tid, producer->tid);
        wick_producer_publish_depth (producer, UINT64_C (1) << 32);
        producer_announce_thread (producer);
        refresh_fast_end (session, producer);
        if (atomic_load (&session->header->rings_in_use) < i + 1)
          atomic_store_explicit (&session->header->rings_in_use, i + 1, memory_order_release);
        break;
      }
  pthread_mutex_unlock (&session->lock);
  if (producer == NULL)
    return &wick_producer_none;
  thread_claims[claim_slot].serial = session->serial;
  thread_claims[claim_slot].producer = producer;
  pthread_setspecific (thread_exit_key, (void *)1);
  wick_producer_cache.serial = session->serial;
  wick_producer_cache.producer = producer;
  return producer;
}

/* ---------------------------------------------------------------------------
 * The slow path of reserve
 */

/* Releases hold-reader slots whose process is gone (ACTIVE or DETACHED).
 * Rate-limited: at most every 10 ms of session time per producer. */
static void
release_dead_holders (WickSession *session, WickProducer *producer, uint64_t now)
{
  if (now < producer->next_liveness_ns)
    return;
  producer->next_liveness_ns = now + 10 * 1000 * 1000;
  for (int slot = 0; slot < WICK_RING_MAX_HOLDERS; slot++)
    {
      uint32_t state = atomic_load (&session->cursors->holder_state[slot]);
      if (state != WICK_HOLDER_ACTIVE && state != WICK_HOLDER_DETACHED)
        continue;
      int pid = atomic_load (&session->cursors->holder_pid[slot]);
      if (pid == session->header->pid || pid <= 0)
        continue;
      if (kill (pid, 0) != 0 && errno == ESRCH)
        {
          uint32_t expected = state;
          atomic_compare_exchange_strong (&session->cursors->holder_state[slot], &expected,
                                          WICK_HOLDER_FREE);
        }
    }
}

/* Detaches the hold readers that have held this producer back without
 * moving their tail for longer than the session's hold timeout (a stopped
 * process, a slot marked active by a live pid that never reads). Called on
 * the slow path only, when a record did not fit below the hold limit; a slot
 * counts as holding while its limit leaves less than needed bytes free. The
 * detach is owed as a wick_reader_detached record (written before the next
 * record, like DROPPED) and counted in the header. */
static void
detach_stalled_holders (WickSession *session, WickProducer *producer, uint64_t now,
                        uint64_t needed)
{
  if (session->policy == WICK_RING_OVERWRITE || session->hold_timeout_ns == UINT64_MAX)
    return;
  uint64_t head = wick_producer_head (producer);
  uint64_t floor = head > producer->capacity ? head - producer->capacity : 0;
  for (int slot = 0; slot < WICK_RING_MAX_HOLDERS; slot++)
    {
      if (atomic_load_explicit (&session->cursors->holder_state[slot], memory_order_acquire)
          != WICK_HOLDER_ACTIVE)
        {
          producer->stall_since_ns[slot] = 0;
          continue;
        }
      uint64_t tail = atomic_load_explicit (wick_cursor_tail (session->cursors, producer->index,
                                                              slot),
                                            memory_order_acquire);
      if (tail > head)
        tail = head;
      if (tail < floor)
        tail = floor;
      bool holding = tail + producer->capacity < head + needed;
      if (!holding || producer->stall_since_ns[slot] == 0 || producer->stall_tail[slot] != tail)
        {
          producer->stall_since_ns[slot] = holding ? (now ? now : 1) : 0;
          producer->stall_tail[slot] = tail;
          continue;
        }
      uint64_t stalled = now - producer->stall_since_ns[slot];
      if (stalled < session->hold_timeout_ns)
        continue;
      uint32_t expected = WICK_HOLDER_ACTIVE;
      if (!atomic_compare_exchange_strong (&session->cursors->holder_state[slot], &expected,
                                           WICK_HOLDER_DETACHED))
        continue;
      atomic_fetch_add (&session->header->detached_readers, 1);
      producer->detach_owed |= 1u << slot;
      producer->detach_pid[slot] = atomic_load (&session->cursors->holder_pid[slot]);
      producer->detach_stalled_ns[slot] = stalled;
      producer->detach_at_ns[slot] = now;
      producer->stall_since_ns[slot] = 0;
    }
}

/* Both checks of a held-back producer: gone readers, stalled readers. */
static void
check_holders (WickSession *session, WickProducer *producer, uint64_t now, uint64_t needed)
{
  release_dead_holders (session, producer, now);
  detach_stalled_holders (session, producer, now, needed);
}

static void
count_drop (WickProducer *producer, uint64_t now)
{
  if (producer->pending_drops == 0)
    producer->first_drop_ns = now;
  producer->last_drop_ns = now;
  producer->pending_drops++;
  producer->dropped_total++;
  atomic_store_explicit (&producer->control->dropped, producer->dropped_total,
                         memory_order_relaxed);
}

/* Whether size bytes (plus chunk padding) fit below the hold limit now; less
 * the span-end reserve unless use_reserve (span ends, the root's end, the
 * terminal). Every record but a span end leaves WICK_END_RESERVE_BYTES free
 * below the limit, enough for the end (and its padding) of every span that
 * can be open, so the end of a span whose begin was written always fits:
 * drops are whole spans. The limit of genuine hold readers never moves back. */
static bool
space_for_full (WickSession *session, WickProducer *producer, uint64_t size, bool use_reserve)
{
  uint64_t limit = hold_limit (session, producer);
  if (!use_reserve && limit != UINT64_MAX)
    limit = limit > WICK_END_RESERVE_BYTES ? limit - WICK_END_RESERVE_BYTES : 0;
  uint64_t start = wick_producer_head (producer);
  if (start + size > chunk_end (start))
    start = chunk_end (start);
  return start + size <= limit;
}

static bool
space_for (WickSession *session, WickProducer *producer, uint64_t size)
{
  return space_for_full (session, producer, size, false);
}

static void
write_padding_if_needed (WickProducer *producer, uint64_t size)
{
  uint64_t head = wick_producer_head (producer);
  uint64_t end = chunk_end (head);
  if (head + size <= end)
    return;
  uint64_t pad = end - head;
  WickRecordHeader *header = (void *)(producer->data + (head & producer->mask));
  atomic_thread_fence (memory_order_release);
  header->words = (uint16_t)(pad / 8);
  header->kind = WICK_KIND_PAD;
  header->version = 1;
  header->seq = producer->seq;
  wick_producer_set_head (producer, end);
}

static void
write_dropped_record (WickSession *session, WickProducer *producer)
{
  WickRingRecord record;
  memset (&record, 0, sizeof record);
  record.dropped.count = producer->pending_drops;
  record.dropped.first_ns = producer->first_drop_ns;
  record.dropped.last_ns = producer->last_drop_ns;
  record.dropped.total = producer->dropped_total;
  WickEncoder encoder = { NULL, 8 };
  wick_encode_payload (&encoder, WICK_KIND_DROPPED, &record);
  uint64_t size = encoder.pos;
  write_padding_if_needed (producer, size);
  encoder.base = producer->data + (wick_producer_head (producer) & producer->mask);
  encoder.pos = 8;
  atomic_thread_fence (memory_order_release);
  wick_encode_payload (&encoder, WICK_KIND_DROPPED, &record);
  wick_producer_commit (producer, encoder.base, size, WICK_KIND_DROPPED);
  producer->pending_drops = 0;
}

#define DROPPED_RECORD_BYTES 40
/* A wick_reader_detached extension record: header, the kind string (24),
 * timestamp, the fields string (at most 160). */
#define DETACH_RECORD_BYTES (8 + 24 + 8 + 168)

static int
popcount32 (uint32_t x)
{
  return __builtin_popcount (x);
}

/* Bytes the records owed before the next one may need (THREAD, DROPPED,
 * wick_reader_detached). */
static uint64_t
owed_bytes (const WickProducer *producer)
{
  return (producer->pending_drops > 0 ? DROPPED_RECORD_BYTES + WICK_RING_MAX_RECORD : 0)
         + (producer->thread_pending ? THREAD_RECORD_BYTES + WICK_RING_MAX_RECORD : 0)
         + (uint64_t)popcount32 (producer->detach_owed)
             * (DETACH_RECORD_BYTES + WICK_RING_MAX_RECORD);
}

static void
write_detach_record (WickSession *session, WickProducer *producer, int slot)
{
  char fields[168];
  snprintf (fields, sizeof fields,
            "\"ring\":%u,\"slot\":%d,\"pid\":%d,\"stalled_ms\":%llu,\"timeout_ms\":%llu",
            producer->index, slot, (int)producer->detach_pid[slot],
            (unsigned long long)(producer->detach_stalled_ns[slot] / 1000000u),
            (unsigned long long)(session->hold_timeout_ns / 1000000u));
  WickRingRecord record;
  memset (&record, 0, sizeof record);
  record.kind = WICK_RING_RECORD_EXTENSION;
  record.extension.kind = "wick_reader_detached";
  record.extension.timestamp_ns = producer->detach_at_ns[slot];
  record.extension.json_fields = fields;
  WickEncoder encoder = { NULL, 8 };
  wick_encode_payload (&encoder, WICK_KIND_EXTENSION, &record);
  uint64_t size = encoder.pos;
  write_padding_if_needed (producer, size);
  encoder.base = producer->data + (wick_producer_head (producer) & producer->mask);
  encoder.pos = 8;
  atomic_thread_fence (memory_order_release);
  wick_encode_payload (&encoder, WICK_KIND_EXTENSION, &record);
  wick_producer_commit (producer, encoder.base, size, WICK_KIND_EXTENSION);
}

static void
write_owed_records (WickSession *session, WickProducer *producer)
{
  if (producer->thread_pending)
    write_thread_record (session, producer);
  while (producer->detach_owed != 0)
    {
      int slot = __builtin_ctz (producer->detach_owed);
      write_detach_record (session, producer, slot);
      producer->detach_owed &= ~(1u << slot);
    }
  if (producer->pending_drops > 0)
    write_dropped_record (session, producer);
}

/* What a held-back record needs free below a holder's limit for that holder
 * to count as holding it (detach_stalled_holders). */
static uint64_t
held_need (const WickProducer *producer, uint64_t size)
{
  return size + owed_bytes (producer) + WICK_END_RESERVE_BYTES + WICK_RING_MAX_RECORD;
}

void *
wick_producer_reserve_slow (WickProducer *producer, uint64_t size)
{
  WickSession *session = producer->session;
  if (session == NULL)
    return NULL; /* wick_producer_none: counted by the caller */
  uint64_t extra = owed_bytes (producer);
  if (!space_for (session, producer, size + extra))
    {
      uint64_t now = wick_session_clock (session);
      check_holders (session, producer, now, held_need (producer, size));
      extra = owed_bytes (producer);
      if (session->policy == WICK_RING_BLOCK)
        {
          struct timespec pause = { 0, 20 * 1000 };
          while (!space_for (session, producer, size + extra))
            {
              nanosleep (&pause, NULL);
              check_holders (session, producer, wick_session_clock (session),
                             held_need (producer, size));
              extra = owed_bytes (producer);
            }
        }
      else if (!space_for (session, producer, size + extra))
        {
          count_drop (producer, now);
          refresh_fast_end (session, producer);
          return NULL;
        }
    }
  write_owed_records (session, producer);
  write_padding_if_needed (producer, size);
  refresh_fast_end (session, producer);
  atomic_thread_fence (memory_order_release);
  return producer->data + (wick_producer_head (producer) & producer->mask);
}

/* A span end: may use the reserve its begin left. The records owed before it
 * (THREAD, DROPPED) go first only when they fit outside the reserve; else
 * they stay owed. NULL only when a hostile cursor moved the limit back (then
 * counted as a drop). */
void *
wick_producer_reserve_end (WickProducer *producer, uint64_t size)
{
  WickSession *session = producer->session;
  if (session == NULL)
    return NULL;
  bool owed_fit = space_for (session, producer, size + owed_bytes (producer));
  if (!owed_fit && !space_for_full (session, producer, size, true))
    {
      uint64_t now = wick_session_clock (session);
      check_holders (session, producer, now, held_need (producer, size));
      struct timespec pause = { 0, 20 * 1000 };
      while (session->policy == WICK_RING_BLOCK && !space_for_full (session, producer, size, true))
        {
          nanosleep (&pause, NULL);
          check_holders (session, producer, wick_session_clock (session),
                         held_need (producer, size));
        }
      if (!space_for_full (session, producer, size, true))
        {
          count_drop (producer, now);
          refresh_fast_end (session, producer);
          return NULL;
        }
    }
  if (owed_fit || space_for (session, producer, size + owed_bytes (producer)))
    write_owed_records (session, producer);
  write_padding_if_needed (producer, size);
  refresh_fast_end (session, producer);
  atomic_thread_fence (memory_order_release);
  return producer->data + (wick_producer_head (producer) & producer->mask);
}

/* For the records that must not be lost (the root's end, the terminal): waits
 * for space whatever the policy, up to timeout_ns; never counts a drop. */
void *
wick_producer_reserve_wait (WickProducer *producer, uint64_t size, uint64_t timeout_ns)
{
  WickSession *session = producer->session;
  if (session == NULL)
    return NULL;
  uint64_t extra = owed_bytes (producer);
  uint64_t deadline = wick_clock_monotonic_ns () + timeout_ns;
  struct timespec pause = { 0, 50 * 1000 };
  while (!space_for_full (session, producer, size + extra, true))
    {
      if (wick_clock_monotonic_ns () > deadline)
        return NULL;
      producer->next_liveness_ns = 0;
      check_holders (session, producer, wick_session_clock (session), held_need (producer, size));
      extra = owed_bytes (producer);
      nanosleep (&pause, NULL);
    }
  write_owed_records (session, producer);
  write_padding_if_needed (producer, size);
  refresh_fast_end (session, producer);
  atomic_thread_fence (memory_order_release);
  return producer->data + (wick_producer_head (producer) & producer->mask);
}
