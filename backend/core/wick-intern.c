/* wick-intern.c — interned strings: stored once in the ring's string arena
 * (layout in wick-ring-layout.h) and found again through an open-addressing
 * table of handles.
 *
 * Lookups take no lock: a slot is written once (release) after its arena
 * entry is complete, and never changes. Inserts take the session lock. The
 * table has twice as many slots as the arena can hold minimal entries / 2, so
 * it never fills before the arena does.
 */
#include "wick-session-internal.h"

#include <stdlib.h>

struct WickInternTable
{
  _Atomic uint32_t *slots;
  uint32_t mask;
};

static bool intern_table_size (WickInternTable *table, uint64_t arena_capacity);

WickInternTable *
wick_intern_table_new (uint64_t arena_capacity)
{
  WickInternTable *table = calloc (1, sizeof *table);
  if (table != NULL && !intern_table_size (table, arena_capacity))
    {
      free (table);
      return NULL;
    }
  return table;
}

void
wick_intern_table_free (WickInternTable *table)
{
  if (table == NULL)
    return;
  free ((void *)table->slots);
  free (table);
}

static bool
intern_table_size (WickInternTable *table, uint64_t arena_capacity)
{
  if (table->slots != NULL)
    return true;
  uint64_t entries = arena_capacity / 16 + 1;
  uint32_t n = 1024;
  while (n < entries * 2 && n < (1u << 30))
    n *= 2;
  table->slots = calloc (n, sizeof (uint32_t));
  table->mask = n - 1;
  return table->slots != NULL;
}

uint32_t
wick_intern_hash (const char *string, size_t length)
{
  uint32_t hash = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < length; i++)
    hash = (hash ^ (uint8_t)string[i]) * 16777619u;
  return hash;
}

static const uint8_t *
arena_base (WickSession *session)
{
  return session->map + session->header->arena_offset;
}

static bool
entry_matches (WickSession *session, uint32_t handle, const char *string, size_t length,
               uint32_t hash)
{
  const uint8_t *entry = arena_base (session) + handle;
  uint32_t entry_length, entry_hash;
  memcpy (&entry_length, entry, 4);
  memcpy (&entry_hash, entry + 4, 4);
  return entry_hash == hash && entry_length == length && memcmp (entry + 8, string, length) == 0;
}

WickString
wick_intern_lookup (WickSession *session, const char *string, size_t length, uint32_t hash)
{
  WickInternTable *table = session->intern;
  if (table->slots == NULL)
    return 0;
  for (uint32_t i = hash & table->mask;; i = (i + 1) & table->mask)
    {
      uint32_t handle = atomic_load_explicit (&table->slots[i], memory_order_acquire);
      if (handle == 0)
        return 0;
      if (entry_matches (session, handle, string, length, hash))
        return handle;
    }
}

WickString
wick_intern (WickSession *session, const char *string)
{
  if (session == NULL || string == NULL)
    return 0;
  size_t length = strlen (string);
  uint32_t hash = wick_intern_hash (string, length);
  WickString found = wick_intern_lookup (session, string, length, hash);
  if (found != 0)
    return found;

  WickString handle = 0;
  pthread_mutex_lock (&session->lock);
  WickInternTable *table = session->intern;
  WickRingHeader *header = session->header;
  found = wick_intern_lookup (session, string, length, hash);
  if (found != 0)
    {
      handle = found;
      goto out;
    }
  uint64_t used = atomic_load_explicit (&header->arena_used, memory_order_relaxed);
  uint64_t size = (8 + length + 1 + 7) & ~(uint64_t)7;
  if (length > UINT32_MAX - 16 || used + size > header->arena_capacity || used > UINT32_MAX)
    goto out;
  uint8_t *entry = session->map + header->arena_offset + used;
  uint32_t length32 = (uint32_t)length;
  memcpy (entry, &length32, 4);
  memcpy (entry + 4, &hash, 4);
  memcpy (entry + 8, string, length);
  memset (entry + 8 + length, 0, size - 8 - length);
  atomic_store_explicit (&header->arena_used, used + size, memory_order_release);
  handle = (WickString)used;
  for (uint32_t i = hash & table->mask;; i = (i + 1) & table->mask)
    if (atomic_load_explicit (&table->slots[i], memory_order_relaxed) == 0)
      {
        atomic_store_explicit (&table->slots[i], handle, memory_order_release);
        break;
      }
out:
  pthread_mutex_unlock (&session->lock);
  return handle;
}
