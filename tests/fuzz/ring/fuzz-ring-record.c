/* fuzz-ring-record.c — libFuzzer target for the ring reader's untrusted input.
 *
 * First byte even: the rest is one record for wick_record_decode (copied to
 * an 8-aligned buffer, as the reader does), with a small valid string arena.
 * First byte odd: the rest is the data of ring 0 of a memfd whose header is
 * valid; the next 8 bytes of the input are ring 0's commit position. A follow
 * reader drains it through the JSONL formatter. Either way: no crash, no
 * read outside the buffer or the mapping, no hang.
 */
#include "wick-record-codec.h"
#include "wick-session-internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define RING_BYTES (256 * 1024)
#define ARENA_BYTES 4096

static uint64_t arena_storage[ARENA_BYTES / 8];
static WickArenaView arena;

static void
arena_init (void)
{
  static const char *names[] = { "root", "forward", "matmul" };
  uint8_t *base = (uint8_t *)arena_storage;
  uint64_t used = 8;
  for (size_t i = 0; i < 3; i++)
    {
      uint32_t length = (uint32_t)strlen (names[i]);
      memcpy (base + used, &length, 4);
      memcpy (base + used + 8, names[i], length + 1);
      used += (8 + length + 1 + 7) & ~(uint64_t)7;
    }
  arena.base = base;
  arena.used = used;
}

static void
decode_one (const uint8_t *data, size_t size)
{
  static uint64_t record[WICK_RING_MAX_RECORD / 8];
  static WickDecodeScratch scratch;
  if (size > sizeof record)
    size = sizeof record;
  memcpy (record, data, size);
  WickRingRecord out;
  char error[160];
  if (wick_record_decode ((const uint8_t *)record, size, &arena, &scratch, &out, error,
                          sizeof error)
      == WICK_DECODE_OK)
    {
      char line[256];
      wick_ring_record_format (&out, line, sizeof line);
    }
}

static int ring_fd = -1;
static uint8_t *ring_map;
static size_t ring_map_bytes;

static void
ring_init (void)
{
  uint64_t meta_offset = WICK_RING_HEADER_BYTES;
  uint64_t arena_offset = meta_offset + 4096;
  uint64_t controls_offset = arena_offset + ARENA_BYTES;
  uint64_t data_offset = controls_offset + WICK_RING_CONTROL_BYTES;
  ring_map_bytes = data_offset + RING_BYTES;
  ring_fd = memfd_create ("fuzz-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  /* sealed against size changes, as a producer's ring (readers refuse
   * others); the writable mapping below still writes it */
  if (ring_fd < 0 || ftruncate (ring_fd, (off_t)ring_map_bytes) != 0
      || fcntl (ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
    abort ();
  ring_map = mmap (NULL, ring_map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
  if (ring_map == MAP_FAILED)
    abort ();
  WickRingHeader *h = (WickRingHeader *)(void *)ring_map;
  h->magic = WICK_RING_MAGIC;
  h->version = WICK_RING_FORMAT_VERSION;
  h->header_bytes = WICK_RING_HEADER_BYTES;
  h->file_bytes = ring_map_bytes;
  h->pid = getpid ();
  h->n_rings = 1;
  h->ring_bytes = RING_BYTES;
  h->chunk_bytes = WICK_RING_CHUNK_BYTES;
  h->max_record_bytes = WICK_RING_MAX_RECORD;
  h->meta_offset = meta_offset;
  h->meta_capacity = 4096;
  static const char meta[] = "{\"kind\":\"meta\"}";
  memcpy (ring_map + meta_offset, meta, sizeof meta - 1);
  h->meta_length = sizeof meta - 1;
  h->arena_offset = arena_offset;
  h->arena_capacity = ARENA_BYTES;
  memcpy (ring_map + arena_offset, arena_storage, ARENA_BYTES);
  atomic_store (&h->arena_used, arena.used);
  h->controls_offset = controls_offset;
  h->control_bytes = WICK_RING_CONTROL_BYTES;
  h->data_offset = data_offset;
  h->root_name = 8;
  atomic_store (&h->state, WICK_RING_STATE_RUNNING);
  atomic_store (&h->rings_in_use, 1);
}

static void
discard_line (const char *line, size_t length, void *user_data)
{
  (void)line;
  (void)length;
  (void)user_data;
}

static bool
format_record (const WickRingRecord *record, void *user_data)
{
  wick_jsonl_formatter_feed (user_data, record, discard_line, NULL);
  return true;
}

static void
read_ring (const uint8_t *data, size_t size)
{
  uint64_t commit = 0;
  if (size >= 8)
    {
      memcpy (&commit, data, 8);
      data += 8;
      size -= 8;
    }
  if (size > RING_BYTES)
    size = RING_BYTES;
  WickRingHeader *h = (WickRingHeader *)(void *)ring_map;
  WickRingControl *control = (WickRingControl *)(void *)(ring_map + h->controls_offset);
  uint8_t *ring = ring_map + h->data_offset;
  memset (ring, 0, RING_BYTES);
  memcpy (ring, data, size);
  /* the reader starts at commit; put commit where the data ends unless the
   * input says otherwise, and let the stack depth be whatever it says */
  atomic_store (&control->commit, 0);
  memset ((void *)control->stack, 0, sizeof control->stack);
  atomic_store (&control->depth_gen, (commit >> 40) & 0xff);
  if (size >= sizeof control->stack)
    memcpy ((void *)control->stack, data, sizeof control->stack);
  WickRingReader *reader = wick_ring_reader_new (ring_fd, NULL);
  if (reader == NULL)
    return;
  atomic_store (&control->commit, (commit & 0xffffffffff) % (4 * (uint64_t)RING_BYTES));
  WickJsonlFormatter *formatter = wick_jsonl_formatter_new (false);
  for (int i = 0; i < 4; i++)
    wick_ring_reader_drain (reader, 0, format_record, formatter, NULL);
  wick_jsonl_formatter_finish (formatter, "fuzz", discard_line, NULL);
  wick_jsonl_formatter_free (formatter);
  wick_ring_reader_free (reader);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (arena.base == NULL)
    {
      arena_init ();
      ring_init ();
    }
  if (size == 0)
    return 0;
  if ((data[0] & 1) == 0)
    decode_one (data + 1, size - 1);
  else
    read_ring (data + 1, size - 1);
  return 0;
}
