/* wick-string-pool.c — interned strings (see the header). */
#include "config.h"

#include "wick-string-pool.h"
#include "wick-huge-pages.h"

#include <string.h>

#define RECENT_SIZE 4096

/* Open addressing; each slot is (hash >> 32) << 32 | offset, 0 = empty, so a
 * probe touches one cache line and compares bytes only on a hash match. A
 * small direct-mapped cache of recently used strings answers the repeated
 * ids of neighbouring records without touching the big table. */
struct _WickStringPool
{
  char *data;
  gsize size;
  gsize capacity;
  guint64 *slots;
  gsize n_slots; /* power of two */
  gsize n_strings;
  guint64 recent[RECENT_SIZE]; /* same layout as slots */
  /* the bytes and the table grow with the strings: on huge pages once big
   * (wick-huge-pages.h) */
  WickHugePagesAdvised advised_data, advised_slots;
};

guint64
wick_string_pool_hash (const char *str, gsize len)
{
  guint64 h = 0x9E3779B97F4A7C15ull ^ len;
  gsize i = 0;

  for (; i + 8 <= len; i += 8)
    {
      guint64 chunk;
      memcpy (&chunk, str + i, 8);
      h = (h ^ chunk) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  if (i < len)
    {
      guint64 chunk = 0;
      if (len >= 8)
        memcpy (&chunk, str + len - 8, 8); /* overlapping tail: one fixed-size load */
      else
        for (gsize k = 0; k < len; k++)
          chunk |= (guint64)(guint8)str[k] << (8 * k);
      h = (h ^ chunk) * 0xc4ceb9fe1a85ec53ull;
    }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h;
}

WickStringPool *
wick_string_pool_new (void)
{
  WickStringPool *pool = g_new0 (WickStringPool, 1);

  pool->capacity = 4096;
  pool->data = g_malloc (pool->capacity);
  pool->size = 4; /* offset 0 stays "absent" */
  memset (pool->data, 0, 4);
  pool->n_slots = 1024;
  pool->slots = g_new0 (guint64, pool->n_slots);
  return pool;
}

void
wick_string_pool_free (WickStringPool *pool)
{
  if (pool == NULL)
    return;
  g_free (pool->data);
  g_free (pool->slots);
  g_free (pool);
}

static inline guint32
entry_len (WickStringPool *pool, guint32 offset)
{
  guint32 len;

  memcpy (&len, pool->data + offset - 4, 4);
  return len;
}

static inline gboolean
same_string (WickStringPool *pool, guint32 offset, const char *str, gsize len)
{
  const char *a = pool->data + offset;

  if (entry_len (pool, offset) != len)
    return FALSE;
  /* short ids are the common case: compare them inline */
  for (; len >= 8; len -= 8, a += 8, str += 8)
    {
      guint64 x, y;
      memcpy (&x, a, 8);
      memcpy (&y, str, 8);
      if (x != y)
        return FALSE;
    }
  for (; len > 0; len--)
    if (*a++ != *str++)
      return FALSE;
  return TRUE;
}

static void
grow_table (WickStringPool *pool)
{
  gsize n_slots = pool->n_slots * 2;
  guint64 *slots = g_new0 (guint64, n_slots);
  wick_huge_pages_advise (slots, &pool->advised_slots);

  for (gsize i = 0; i < pool->n_slots; i++)
    {
      guint64 entry = pool->slots[i];
      gsize j;
      if (entry == 0)
        continue;
      /* the slot index comes from the stored tag: no need to reread the string */
      j = (entry >> 32) & (n_slots - 1);
      while (slots[j] != 0)
        j = (j + 1) & (n_slots - 1);
      slots[j] = entry;
    }
  g_free (pool->slots);
  pool->slots = slots;
  pool->n_slots = n_slots;
}

/* After wick_string_pool_compact(): the table again, from the strings. */
static void
rebuild_table (WickStringPool *pool)
{
  gsize n_slots = 1024;
  while (pool->n_strings * 2 >= n_slots)
    n_slots *= 2;
  pool->slots = g_new0 (guint64, n_slots);
  pool->n_slots = n_slots;
  for (gsize p = 4; p + 4 <= pool->size;)
    {
      guint32 len;
      memcpy (&len, pool->data + p, 4);
      guint32 offset = (guint32)(p + 4);
      guint64 h = wick_string_pool_hash (pool->data + offset, len);
      gsize j = (h >> 32) & (n_slots - 1);
      while (pool->slots[j] != 0)
        j = (j + 1) & (n_slots - 1);
      pool->slots[j] = (h & 0xffffffff00000000ull) | offset;
      p = (gsize)offset + len + 1;
    }
}

void
wick_string_pool_compact (WickStringPool *pool)
{
  g_clear_pointer (&pool->slots, g_free);
  pool->n_slots = 0;
  if (pool->capacity > pool->size)
    {
      pool->capacity = MAX (pool->size, 4);
      pool->data = g_realloc (pool->data, pool->capacity);
    }
}

static gsize
find_slot (WickStringPool *pool, const char *str, gsize len, guint64 h)
{
  if (G_UNLIKELY (pool->slots == NULL))
    rebuild_table (pool);

  gsize j = (h >> 32) & (pool->n_slots - 1);
  guint64 tag = h & 0xffffffff00000000ull;

  for (;;)
    {
      guint64 entry = pool->slots[j];
      if (entry == 0)
        return j;
      if ((entry & 0xffffffff00000000ull) == tag && same_string (pool, (guint32)entry, str, len))
        return j;
      j = (j + 1) & (pool->n_slots - 1);
    }
}

guint32
wick_string_pool_lookup (WickStringPool *pool, const char *str, gsize len)
{
  return (guint32)pool->slots[find_slot (pool, str, len, wick_string_pool_hash (str, len))];
}

void
wick_string_pool_prefetch (WickStringPool *pool, guint64 hash)
{
  if (pool->slots != NULL)
    __builtin_prefetch (&pool->slots[(hash >> 32) & (pool->n_slots - 1)]);
}

guint32
wick_string_pool_intern (WickStringPool *pool, const char *str, gsize len)
{
  return wick_string_pool_intern_hashed (pool, str, len, wick_string_pool_hash (str, len));
}

guint32
wick_string_pool_intern_hashed (WickStringPool *pool, const char *str, gsize len, guint64 h)
{
  guint64 tag = h & 0xffffffff00000000ull;
  guint64 *recent = &pool->recent[(h >> 20) & (RECENT_SIZE - 1)];
  gsize j;
  guint32 offset;
  guint32 len32 = (guint32)len;

  if ((*recent & 0xffffffff00000000ull) == tag && *recent != 0
      && same_string (pool, (guint32)*recent, str, len))
    return (guint32)*recent;
  j = find_slot (pool, str, len, h);
  if (pool->slots[j] != 0)
    {
      *recent = pool->slots[j];
      return (guint32)pool->slots[j];
    }
  if (pool->size + len + 5 > G_MAXUINT32 || len > G_MAXUINT32)
    return 0;
  if (pool->size + len + 5 > pool->capacity)
    {
      while (pool->size + len + 5 > pool->capacity)
        pool->capacity *= 2;
      pool->data = g_realloc (pool->data, pool->capacity);
      wick_huge_pages_advise (pool->data, &pool->advised_data);
    }
  memcpy (pool->data + pool->size, &len32, 4);
  offset = (guint32)(pool->size + 4);
  memcpy (pool->data + offset, str, len);
  pool->data[offset + len] = '\0';
  pool->size = offset + len + 1;
  pool->slots[j] = tag | offset;
  *recent = tag | offset;
  if (++pool->n_strings * 2 > pool->n_slots)
    grow_table (pool);
  return offset;
}

void
wick_string_pool_reserve (WickStringPool *pool, gsize n_strings, gsize bytes)
{
  if (pool->slots == NULL)
    rebuild_table (pool);
  while (n_strings * 2 > pool->n_slots && pool->n_slots < ((gsize)1 << 31))
    grow_table (pool);
  if (bytes > pool->capacity && bytes < G_MAXUINT32)
    {
      pool->capacity = bytes;
      pool->data = g_realloc (pool->data, pool->capacity);
    }
}

const char *
wick_string_pool_get (WickStringPool *pool, guint32 offset)
{
  if (offset == 0)
    return NULL;
  return pool->data + offset;
}

gsize
wick_string_pool_get_len (WickStringPool *pool, guint32 offset)
{
  return offset == 0 ? 0 : entry_len (pool, offset);
}

