/* wick-live-state.c — what a late reader needs and the ring cannot give it:
 * the storages that are live now (docs/protocol.md, "snapshot").
 *
 * Every wick_session_record_memory passes through wick_live_state_note_memory
 * before its record is committed: an alloc makes (device, storage_id) live
 * with its bytes, category, tensor, dtype and shape (a second alloc of a live
 * key, an alias, changes nothing), a free removes it. The table is guarded by
 * its own mutex (memory records are not on the hot path) and costs one entry
 * per live storage, whatever the length of the run.
 *
 * The time of a WICK_NOW record is read under the same mutex, and a snapshot
 * (wick_session_foreach_live_allocation) reads its own time there too, so a
 * record stamped at or before the snapshot's time is in the snapshot, and one
 * applied after it is stamped later: a reader that began before the snapshot
 * skips memory records of snapshot keys stamped at or before that time.
 */
#include "wick-session-internal.h"

#include <stdlib.h>

typedef struct Entry Entry;
/* One allocation an entry: the struct, its shape, then its strings. */
struct Entry
{
  Entry *next;
  uint32_t hash;
  char *key; /* device \0 storage_id \0 tensor_id \0 dtype \0 [op_name \0], in the entry */
  size_t device_length, storage_length;
  const char *tensor_id;
  const char *dtype;
  const char *op_name; /* NULL when none */
  uint64_t *shape; /* in the entry */
  size_t rank;
  uint64_t bytes;
  uint64_t timestamp_ns;
  WickSpanId span;
  WickMemoryCategory category;
  uint64_t address;
};

struct WickLiveState
{
  pthread_mutex_t lock;
  Entry **buckets;
  size_t n_buckets; /* power of two */
  size_t count;
  uint64_t bytes;
  uint64_t last_snapshot_ns;
  bool failed; /* out of memory once: the snapshot says it is incomplete */
};

WickLiveState *
wick_live_state_new (void)
{
  WickLiveState *state = calloc (1, sizeof *state);
  if (state == NULL)
    return NULL;
  pthread_mutex_init (&state->lock, NULL);
  return state;
}

static void
entry_free (Entry *entry)
{
  free (entry);
}

void
wick_live_state_free (WickLiveState *state)
{
  if (state == NULL)
    return;
  for (size_t i = 0; i < state->n_buckets; i++)
    for (Entry *entry = state->buckets[i], *next; entry != NULL; entry = next)
      {
        next = entry->next;
        entry_free (entry);
      }
  free (state->buckets);
  pthread_mutex_destroy (&state->lock);
  free (state);
}

static uint32_t
key_hash (const char *device, size_t device_length, const char *storage, size_t storage_length)
{
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < device_length; i++)
    hash = (hash ^ (uint8_t)device[i]) * 16777619u;
  hash = (hash ^ 0x1f) * 16777619u;
  for (size_t i = 0; i < storage_length; i++)
    hash = (hash ^ (uint8_t)storage[i]) * 16777619u;
  return hash;
}

static Entry **
find (WickLiveState *state, uint32_t hash, const char *device, size_t device_length,
      const char *storage, size_t storage_length)
{
  if (state->n_buckets == 0)
    return NULL;
  Entry **link = &state->buckets[hash & (state->n_buckets - 1)];
  for (; *link != NULL; link = &(*link)->next)
    {
      Entry *entry = *link;
      if (entry->hash == hash && entry->device_length == device_length
          && entry->storage_length == storage_length
          && memcmp (entry->key, device, device_length) == 0
          && memcmp (entry->key + device_length + 1, storage, storage_length) == 0)
        return link;
    }
  return link;
}

static bool
grow (WickLiveState *state)
{
  size_t n = state->n_buckets ? state->n_buckets * 2 : 64;
  Entry **buckets = calloc (n, sizeof *buckets);
  if (buckets == NULL)
    return false;
  for (size_t i = 0; i < state->n_buckets; i++)
    for (Entry *entry = state->buckets[i], *next; entry != NULL; entry = next)
      {
        next = entry->next;
        entry->next = buckets[entry->hash & (n - 1)];
        buckets[entry->hash & (n - 1)] = entry;
      }
  free (state->buckets);
  state->buckets = buckets;
  state->n_buckets = n;
  return true;
}

static Entry *
entry_new (const WickMemoryRecord *memory, uint32_t hash)
{
  size_t device_length = strlen (memory->device);
  size_t storage_length = strlen (memory->storage_id);
  size_t tensor_length = strlen (memory->tensor_id);
  size_t dtype_length = strlen (memory->dtype);
  size_t op_length = memory->op_name != NULL ? strlen (memory->op_name) : 0;
  size_t total = device_length + storage_length + tensor_length + dtype_length + op_length + 5;
  _Static_assert (sizeof (Entry) % sizeof (uint64_t) == 0, "the shape follows the struct");
  Entry *entry = malloc (sizeof *entry + memory->rank * sizeof (uint64_t) + total);
  if (entry == NULL)
    return NULL;
  uint64_t *shape = memory->rank > 0 ? (uint64_t *)(void *)(entry + 1) : NULL;
  char *key = (char *)(entry + 1) + memory->rank * sizeof (uint64_t);
  entry->op_name = NULL;
  char *p = key;
  memcpy (p, memory->device, device_length + 1);
  p += device_length + 1;
  memcpy (p, memory->storage_id, storage_length + 1);
  p += storage_length + 1;
  entry->tensor_id = p;
  memcpy (p, memory->tensor_id, tensor_length + 1);
  p += tensor_length + 1;
  entry->dtype = p;
  memcpy (p, memory->dtype, dtype_length + 1);
  p += dtype_length + 1;
  if (memory->op_name != NULL)
    {
      entry->op_name = p;
      memcpy (p, memory->op_name, op_length + 1);
    }
  if (memory->rank > 0)
    memcpy (shape, memory->shape, memory->rank * sizeof *shape);
  entry->key = key;
  entry->hash = hash;
  entry->device_length = device_length;
  entry->storage_length = storage_length;
  entry->shape = shape;
  entry->rank = memory->rank;
  entry->bytes = memory->bytes;
  entry->timestamp_ns = memory->timestamp_ns;
  entry->span = memory->span;
  entry->category = memory->category;
  entry->address = memory->address;
  return entry;
}

void
wick_live_state_note_memory (WickSession *session, WickMemoryRecord *memory)
{
  WickLiveState *state = session->live_state;
  if (state == NULL)
    {
      if (memory->timestamp_ns == WICK_NOW)
        memory->timestamp_ns = wick_session_clock (session);
      return;
    }
  size_t device_length = strlen (memory->device);
  size_t storage_length = strlen (memory->storage_id);
  uint32_t hash = key_hash (memory->device, device_length, memory->storage_id, storage_length);
  pthread_mutex_lock (&state->lock);
  if (memory->timestamp_ns == WICK_NOW)
    {
      memory->timestamp_ns = wick_session_clock (session);
      /* strictly after a snapshot taken in the same nanosecond */
      if (memory->timestamp_ns <= state->last_snapshot_ns)
        memory->timestamp_ns = state->last_snapshot_ns + 1;
    }
  Entry **link = find (state, hash, memory->device, device_length, memory->storage_id,
                       storage_length);
  if (memory->action == WICK_MEMORY_ALLOC)
    {
      if (link == NULL || *link == NULL)
        {
          if (state->count + 1 > state->n_buckets && !grow (state))
            state->failed = true;
          Entry *entry = state->failed ? NULL : entry_new (memory, hash);
          if (entry == NULL)
            state->failed = true;
          else
            {
              Entry **bucket = &state->buckets[hash & (state->n_buckets - 1)];
              entry->next = *bucket;
              *bucket = entry;
              state->count++;
              state->bytes += entry->bytes;
            }
        }
    }
  else if (link != NULL && *link != NULL)
    {
      Entry *entry = *link;
      *link = entry->next;
      state->count--;
      state->bytes -= entry->bytes;
      entry_free (entry);
    }
  pthread_mutex_unlock (&state->lock);
}

size_t
wick_session_foreach_live_allocation (WickSession *session, WickLiveAllocationFunc func,
                                      void *user_data, WickLiveAllocationTotals *totals)
{
  WickLiveState *state = session != NULL ? session->live_state : NULL;
  if (totals != NULL)
    memset (totals, 0, sizeof *totals);
  if (state == NULL)
    {
      if (totals != NULL && session != NULL)
        totals->timestamp_ns = wick_session_clock (session);
      return 0;
    }
  pthread_mutex_lock (&state->lock);
  uint64_t now = wick_session_clock (session);
  if (now <= state->last_snapshot_ns)
    now = state->last_snapshot_ns + 1;
  state->last_snapshot_ns = now;
  size_t n = 0;
  for (size_t i = 0; i < state->n_buckets; i++)
    for (Entry *entry = state->buckets[i]; entry != NULL; entry = entry->next)
      {
        WickMemoryRecord record = {
          .timestamp_ns = entry->timestamp_ns,
          .storage_id = entry->key + entry->device_length + 1,
          .tensor_id = entry->tensor_id,
          .span = entry->span,
          .op_name = entry->op_name,
          .device = entry->key,
          .bytes = entry->bytes,
          .action = WICK_MEMORY_ALLOC,
          .shape = entry->shape,
          .rank = entry->rank,
          .dtype = entry->dtype,
          .category = entry->category,
          .address = entry->address,
        };
        if (func != NULL)
          func (&record, user_data);
        n++;
      }
  if (totals != NULL)
    {
      totals->timestamp_ns = now;
      totals->count = state->count;
      totals->bytes = state->bytes;
      totals->incomplete = state->failed;
    }
  pthread_mutex_unlock (&state->lock);
  return n;
}
