/* fuzz-ring-attach.c — libFuzzer target for an attach to a hostile
 * producer: the input is XORed onto a sealed ring memfd's valid header (all
 * but the magic), sets ring 0's commit and open-span stack, and the rest is
 * the attach snapshot; a live stream (the reader wick-trace attach and the app
 * use) opens the ring, applies the snapshot and drains it into JSONL lines.
 * No crash, no read outside the mapping, no hang (a drain is bounded). */
#include "wick-session-internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/wick-live-stream.h"
#include "client/wick-live-stream-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define RING_BYTES (256 * 1024)
#define ARENA_BYTES 4096
#define HEADER_FUZZ_BYTES 200 /* after the magic: the sizes, offsets and counters */

static int ring_fd = -1;
static uint8_t *ring_map;
static uint8_t pristine[WICK_RING_HEADER_BYTES];
static uint64_t controls_offset;

static void
ring_init (void)
{
  uint64_t meta_offset = WICK_RING_HEADER_BYTES;
  uint64_t arena_offset = meta_offset + WICK_RING_META_CAPACITY;
  controls_offset = arena_offset + ARENA_BYTES;
  uint64_t data_offset = controls_offset + WICK_RING_CONTROL_BYTES;
  uint64_t total = data_offset + RING_BYTES;
  ring_fd = memfd_create ("fuzz-attach", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (ring_fd < 0 || ftruncate (ring_fd, (off_t)total) != 0
      || fcntl (ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
    abort ();
  ring_map = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
  if (ring_map == MAP_FAILED)
    abort ();
  WickRingHeader *h = (WickRingHeader *)(void *)ring_map;
  h->magic = WICK_RING_MAGIC;
  h->version = WICK_RING_FORMAT_VERSION;
  h->header_bytes = WICK_RING_HEADER_BYTES;
  h->file_bytes = total;
  h->pid = getpid ();
  h->n_rings = 1;
  h->ring_bytes = RING_BYTES;
  h->chunk_bytes = WICK_RING_CHUNK_BYTES;
  h->max_record_bytes = WICK_RING_MAX_RECORD;
  h->meta_offset = meta_offset;
  h->meta_capacity = WICK_RING_META_CAPACITY;
  static const char meta[] = "{\"kind\":\"meta\"}";
  memcpy (ring_map + meta_offset, meta, sizeof meta - 1);
  h->meta_length = sizeof meta - 1;
  h->arena_offset = arena_offset;
  h->arena_capacity = ARENA_BYTES;
  uint32_t length = 4;
  memcpy (ring_map + arena_offset + 8, &length, 4);
  memcpy (ring_map + arena_offset + 16, "root", 5);
  atomic_store (&h->arena_used, 24);
  h->controls_offset = controls_offset;
  h->control_bytes = WICK_RING_CONTROL_BYTES;
  h->data_offset = data_offset;
  h->root_name = 8;
  h->hold_timeout_ns = UINT64_MAX;
  atomic_store (&h->state, WICK_RING_STATE_RUNNING);
  atomic_store (&h->rings_in_use, 1);
  memcpy (pristine, ring_map, sizeof pristine);
}

static void
discard_line (const char *line, gsize length, gpointer user_data)
{
  (void)line;
  (void)length;
  (void)user_data;
}

static size_t
take (const uint8_t **data, size_t *size, void *out, size_t want)
{
  size_t n = *size < want ? *size : want;
  memcpy (out, *data, n);
  *data += n;
  *size -= n;
  return n;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (ring_map == NULL)
    ring_init ();
  memcpy (ring_map, pristine, sizeof pristine);
  /* XORed onto a valid header: zero bytes keep it valid, so mutations of a
   * seed explore one field at a time */
  uint8_t header[HEADER_FUZZ_BYTES] = { 0 };
  take (&data, &size, header, sizeof header);
  for (size_t i = 0; i < sizeof header; i++)
    ring_map[8 + i] ^= header[i];
  WickRingControl *control = (WickRingControl *)(void *)(ring_map + controls_offset);
  uint64_t commit = 0, depth_gen = 0;
  take (&data, &size, &commit, 8);
  take (&data, &size, &depth_gen, 8);
  memset ((void *)control->stack, 0, sizeof control->stack);
  take (&data, &size, (void *)control->stack, 4 * sizeof (WickSpanPayload));
  atomic_store (&control->commit, commit);
  atomic_store (&control->depth_gen, depth_gen);
  WickLiveStream *stream = wick_live_stream_new (ring_fd, FALSE, NULL);
  if (stream == NULL)
    return 0;
  int snapshot = memfd_create ("fuzz-snapshot", MFD_CLOEXEC);
  if (snapshot >= 0 && (size == 0 || write (snapshot, data, size) == (ssize_t)size))
    wick_live_stream_apply_snapshot (stream, snapshot, NULL);
  if (snapshot >= 0)
    close (snapshot);
  /* the producer moves on after the attach */
  atomic_store (&control->commit, commit ^ (commit >> 7));
  for (int i = 0; i < 3; i++)
    wick_live_stream_drain (stream, 4096, discard_line, NULL);
  wick_live_stream_finish (stream, "fuzz", discard_line, NULL);
  wick_live_stream_free (stream);
  return 0;
}
