/* wick-string-pool.c — interned strings (see the header). */
#include "config.h"

#include "wick-string-pool.h"

#include <string.h>

struct _WickStringPool
{
  char *data;
  gsize size;
  gsize capacity;
  guint32 *slots;      /* open addressing: string offsets, 0 = empty */
  guint32 *hashes;     /* low 32 bits of each slot's hash */
  gsize n_slots;       /* power of two */
  gsize n_strings;
};

static inline guint64
hash_bytes (const char *str, gsize len)
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
      memcpy (&chunk, str + i, len - i);
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
  pool->slots = g_new0 (guint32, pool->n_slots);
  pool->hashes = g_new0 (guint32, pool->n_slots);
  return pool;
}

void
wick_string_pool_free (WickStringPool *pool)
{
  if (pool == NULL)
    return;
  g_free (pool->data);
  g_free (pool->slots);
  g_free (pool->hashes);
  g_free (pool);
}

static inline guint32
entry_len (WickStringPool *pool, guint32 offset)
{
  guint32 len;

  memcpy (&len, pool->data + offset - 4, 4);
  return len;
}

static void
grow_table (WickStringPool *pool)
{
  gsize n_slots = pool->n_slots * 2;
  guint32 *slots = g_new0 (guint32, n_slots);
  guint32 *hashes = g_new0 (guint32, n_slots);

  for (gsize i = 0; i < pool->n_slots; i++)
    {
      guint32 offset = pool->slots[i];
      gsize j;
      if (offset == 0)
        continue;
      j = hash_bytes (pool->data + offset, entry_len (pool, offset)) & (n_slots - 1);
      while (slots[j] != 0)
        j = (j + 1) & (n_slots - 1);
      slots[j] = offset;
      hashes[j] = pool->hashes[i];
    }
  g_free (pool->slots);
  g_free (pool->hashes);
  pool->slots = slots;
  pool->hashes = hashes;
  pool->n_slots = n_slots;
}

static gsize
find_slot (WickStringPool *pool, const char *str, gsize len, guint64 h)
{
  gsize j = h & (pool->n_slots - 1);

  for (;;)
    {
      guint32 offset = pool->slots[j];
      if (offset == 0)
        return j;
      if (pool->hashes[j] == (guint32) h && entry_len (pool, offset) == len
          && memcmp (pool->data + offset, str, len) == 0)
        return j;
      j = (j + 1) & (pool->n_slots - 1);
    }
}

guint32
wick_string_pool_lookup (WickStringPool *pool, const char *str, gsize len)
{
  return pool->slots[find_slot (pool, str, len, hash_bytes (str, len))];
}

guint32
wick_string_pool_intern (WickStringPool *pool, const char *str, gsize len)
{
  guint64 h = hash_bytes (str, len);
  gsize j = find_slot (pool, str, len, h);
  guint32 offset;
  guint32 len32 = (guint32) len;

  if (pool->slots[j] != 0)
    return pool->slots[j];
  if (pool->size + len + 5 > G_MAXUINT32 || len > G_MAXUINT32)
    return 0;
  if (pool->size + len + 5 > pool->capacity)
    {
      while (pool->size + len + 5 > pool->capacity)
        pool->capacity *= 2;
      pool->data = g_realloc (pool->data, pool->capacity);
    }
  memcpy (pool->data + pool->size, &len32, 4);
  offset = (guint32) (pool->size + 4);
  memcpy (pool->data + offset, str, len);
  pool->data[offset + len] = '\0';
  pool->size = offset + len + 1;
  pool->slots[j] = offset;
  pool->hashes[j] = (guint32) h;
  if (++pool->n_strings * 2 > pool->n_slots)
    grow_table (pool);
  return offset;
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

gsize
wick_string_pool_get_size (WickStringPool *pool)
{
  return pool->size;
}
