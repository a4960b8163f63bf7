/* wick-snapshot-categories.c — a snapshot's allocations matched with a Wick
 * session's memory records by device, address and lifetime (see the header
 * for the rules and the clock alignment). */
#include "config.h"

#include "wick-snapshot-categories.h"

#include <stdlib.h>
#include <string.h>

#define NEG_INF G_MININT64
#define POS_INF G_MAXINT64
/* step 2's window around a record's alloc */
#define REFINE_WINDOW_US 100000

typedef struct
{
  gint64 device;
  guint64 address;
  gint64 r0, r1; /* ns on the trace's clock, then µs on the snapshot's */
  guint64 bytes;
  gint64 max_r1; /* the greatest r1 of its key's lifetimes up to it (sorted) */
  guint32 memory; /* its alloc's index (or its free's) in the document */
  guint8 category;
} Life;

struct _WickSnapshotCategories
{
  WickMemorySnapshot *snapshot;
  WickDocument *document;
  GArray *lives; /* Life, by (device, address, r0) */
  guint n_allocations;
  guint8 *category, *match, *source;
  guint32 *record;
  WickSnapshotMatchCounts counts;
};

/* "cuda:N" -> N, "cuda" -> 0, anything else -> -1 */
static gint64
cuda_device (const char *device)
{
  if (device == NULL || strncmp (device, "cuda", 4) != 0)
    return -1;
  if (device[4] == '\0')
    return 0;
  if (device[4] != ':' || device[5] == '\0')
    return -1;
  gint64 n = 0;
  for (const char *p = device + 5; *p != '\0'; p++)
    {
      if (*p < '0' || *p > '9' || n > G_MAXINT32 / 10)
        return -1;
      n = n * 10 + (*p - '0');
    }
  return n;
}

static gint
compare_life (gconstpointer pa, gconstpointer pb)
{
  const Life *a = pa, *b = pb;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if (a->address != b->address)
    return a->address < b->address ? -1 : 1;
  if (a->r0 != b->r0)
    return a->r0 < b->r0 ? -1 : 1;
  return a->memory < b->memory ? -1 : a->memory > b->memory;
}

static gint
compare_event_time (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const WickMemoryEvent *events = data;
  guint32 a = *(const guint32 *)pa, b = *(const guint32 *)pb;
  if (events[a].timestamp_ns != events[b].timestamp_ns)
    return events[a].timestamp_ns < events[b].timestamp_ns ? -1 : 1;
  return a < b ? -1 : a > b;
}

static gint64
trace_ns (guint64 ns)
{
  return (gint64)MIN (ns, (guint64)G_MAXINT64 - 1);
}

/* The records' lifetimes (ns), by pairing alloc and free per (device, storage). */
static void
build_lives (WickSnapshotCategories *self, guint64 *last_ns)
{
  WickDocument *doc = self->document;
  guint n;
  const WickMemoryEvent *events = wick_document_get_memory (doc, &n);
  g_autofree guint32 *order = g_new (guint32, MAX (n, 1));
  g_autoptr (GHashTable) open = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) devices = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autofree gint64 *keys = g_new (gint64, MAX (n, 1));
  WickSnapshotMatchCounts *c = &self->counts;

  for (guint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, (gint)n, sizeof *order, compare_event_time, (gpointer)events);
  *last_ns = 0;
  for (guint k = 0; k < n; k++)
    {
      guint32 i = order[k];
      const WickMemoryEvent *m = &events[i];
      gint64 t = trace_ns (m->timestamp_ns);
      gpointer cached;
      gint64 device;
      *last_ns = MAX (*last_ns, m->timestamp_ns);
      if (g_hash_table_lookup_extended (devices, GUINT_TO_POINTER (m->device), NULL, &cached))
        device = GPOINTER_TO_INT (cached);
      else
        {
          device = cuda_device (wick_document_str (doc, m->device));
          g_hash_table_insert (devices, GUINT_TO_POINTER (m->device), GINT_TO_POINTER (device));
        }
      /* WickStr offsets are 32 bits: device and storage make one key */
      keys[i] = (gint64)(((guint64)m->device << 32) | m->storage_id);
      gpointer at;
      gboolean was_open = g_hash_table_lookup_extended (open, &keys[i], NULL, &at);
      if (was_open)
        {
          /* a free ends it; a second alloc of an open storage ends it too */
          g_array_index (self->lives, Life, GPOINTER_TO_UINT (at)).r1 = t;
          g_hash_table_remove (open, &keys[i]);
        }
      if (device < 0)
        {
          c->records_other_device++;
          continue;
        }
      if (m->action != WICK_MEMORY_ALLOC && was_open)
        continue;
      if (m->address == 0)
        {
          c->records_without_address++;
          continue;
        }
      Life life = { device, m->address, NEG_INF, POS_INF, m->bytes, 0, i, m->category };
      if (m->action == WICK_MEMORY_ALLOC)
        {
          life.r0 = t;
          g_hash_table_insert (open, &keys[i], GUINT_TO_POINTER (self->lives->len));
        }
      else
        life.r1 = t; /* freed with no alloc: began before the trace */
      g_array_append_val (self->lives, life);
    }
  c->record_lifetimes = self->lives->len;
}

/* The first of @lives (n, sorted) after (device, address, r0) with @after,
 * else the first not before it. */
static guint
life_bound (const Life *lives, guint n, gint64 device, guint64 address, gint64 r0, gboolean after)
{
  guint lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const Life *l = &lives[mid];
      int c = l->device != device   ? (l->device < device ? -1 : 1)
              : l->address != address ? (l->address < address ? -1 : 1)
              : l->r0 != r0           ? (l->r0 < r0 ? -1 : 1)
                                      : 0;
      if (c < 0 || (after && c == 0))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static gint64
to_snapshot_us (gint64 ns, gint64 offset_us)
{
  if (ns == NEG_INF || ns == POS_INF)
    return ns;
  return ns / 1000 + offset_us;
}

typedef struct
{
  gint64 device;
  guint64 address;
  gint64 alloc_us;
  guint32 index;
} AllocKey;

static gint
compare_alloc_key (gconstpointer pa, gconstpointer pb)
{
  const AllocKey *a = pa, *b = pb;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if (a->address != b->address)
    return a->address < b->address ? -1 : 1;
  if (a->alloc_us != b->alloc_us)
    return a->alloc_us < b->alloc_us ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static gint
compare_gint64 (gconstpointer pa, gconstpointer pb)
{
  gint64 a = *(const gint64 *)pa, b = *(const gint64 *)pb;
  return a < b ? -1 : a > b;
}

/* The first of @keys (n) not before (device, address, alloc_us). */
static guint
alloc_lower_bound (const AllocKey *keys, guint n, gint64 device, guint64 address, gint64 alloc_us)
{
  guint lo = 0, hi = n;
  AllocKey probe = { device, address, alloc_us, 0 };
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (compare_alloc_key (&keys[mid], &probe) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Step 2: the median difference between the records' allocs and the
 * nearest history alloc of the same device, address and size. */
static void
refine_clock (WickSnapshotCategories *self, const WickSnapshotAllocation *allocations)
{
  WickSnapshotMatchCounts *c = &self->counts;
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (AllocKey));
  g_autoptr (GArray) diffs = g_array_new (FALSE, FALSE, sizeof (gint64));

  for (guint i = 0; i < self->n_allocations; i++)
    if (allocations[i].alloc_us != G_MININT64)
      {
        AllocKey k = { allocations[i].device_index, allocations[i].address,
                       allocations[i].alloc_us, i };
        g_array_append_val (keys, k);
      }
  g_array_sort (keys, compare_alloc_key);
  const AllocKey *k = (const AllocKey *)(gpointer)keys->data;
  for (guint i = 0; i < self->lives->len; i++)
    {
      const Life *life = &g_array_index (self->lives, Life, i);
      if (life->r0 == NEG_INF)
        continue;
      gint64 at = to_snapshot_us (life->r0, c->offset_us);
      guint j = alloc_lower_bound (k, keys->len, life->device, life->address,
                                   at - REFINE_WINDOW_US);
      gboolean found = FALSE;
      gint64 best = 0;
      for (; j < keys->len && k[j].device == life->device && k[j].address == life->address
             && k[j].alloc_us <= at + REFINE_WINDOW_US;
           j++)
        {
          if (allocations[k[j].index].size != life->bytes)
            continue;
          gint64 d = k[j].alloc_us - at;
          if (!found || ABS (d) < ABS (best))
            best = d, found = TRUE;
        }
      if (found)
        g_array_append_val (diffs, best);
    }
  c->refined_pairs = diffs->len;
  if (diffs->len == 0)
    return;
  g_array_sort (diffs, compare_gint64);
  c->correction_us = g_array_index (diffs, gint64, (diffs->len - 1) / 2);
  c->offset_us += c->correction_us;
}

/* Step 1: the meta's timestamp, else the trace's end at the history's end. */
static void
first_offset (WickSnapshotCategories *self, guint64 last_ns, gboolean has_entries,
              gint64 last_entry_us)
{
  WickSnapshotMatchCounts *c = &self->counts;
  const WickTraceMeta *meta = wick_document_get_meta (self->document);
  const char *stamp = meta != NULL && meta->present
                        ? wick_document_str (self->document, meta->timestamp)
                        : NULL;
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GDateTime) when = stamp != NULL ? g_date_time_new_from_iso8601 (stamp, utc) : NULL;

  if (self->lives->len == 0)
    {
      c->clock = WICK_SNAPSHOT_CLOCK_NONE;
      return;
    }
  if (when != NULL)
    {
      c->clock = WICK_SNAPSHOT_CLOCK_META_TIMESTAMP;
      c->offset_us = g_date_time_to_unix (when) * G_USEC_PER_SEC
                     + g_date_time_get_microsecond (when);
      return;
    }
  c->clock = WICK_SNAPSHOT_CLOCK_TRACE_END;
  c->offset_us = has_entries ? last_entry_us - trace_ns (last_ns) / 1000 : 0;
}

static gint64
clamp (gint64 t, gint64 lo, gint64 hi)
{
  return t == NEG_INF ? lo : t == POS_INF ? hi : t;
}

WickSnapshotCategories *
wick_snapshot_categories_new (WickMemorySnapshot *snapshot, WickDocument *document)
{
  WickSnapshotCategories *self = g_new0 (WickSnapshotCategories, 1);
  WickSnapshotMatchCounts *c = &self->counts;
  guint n_entries;
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (snapshot, &n_entries);
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (snapshot, &self->n_allocations);
  guint64 last_ns;

  self->snapshot = snapshot;
  self->document = document;
  self->lives = g_array_new (FALSE, FALSE, sizeof (Life));
  c->records_bad_address = wick_document_get_bad_addresses (document, NULL);
  build_lives (self, &last_ns);

  gint64 last_entry_us = G_MININT64;
  for (guint i = 0; i < n_entries; i++)
    last_entry_us = MAX (last_entry_us, entries[i].time_us);
  first_offset (self, last_ns, n_entries > 0, last_entry_us);
  if (self->lives->len > 0)
    refine_clock (self, allocations);

  /* every lifetime on the snapshot's clock, sorted, with its key's running
   * greatest end; the bounds that cut unbounded ends */
  gint64 lo = POS_INF, hi = NEG_INF;
  for (guint i = 0; i < self->lives->len; i++)
    {
      Life *life = &g_array_index (self->lives, Life, i);
      life->r0 = to_snapshot_us (life->r0, c->offset_us);
      life->r1 = to_snapshot_us (life->r1, c->offset_us);
      if (life->r0 != NEG_INF)
        lo = MIN (lo, life->r0), hi = MAX (hi, life->r0);
      if (life->r1 != POS_INF)
        lo = MIN (lo, life->r1), hi = MAX (hi, life->r1);
    }
  g_array_sort (self->lives, compare_life);
  Life *lives = (Life *)(gpointer)self->lives->data;
  for (guint i = 0; i < self->lives->len; i++)
    {
      gboolean same_key = i > 0 && lives[i - 1].device == lives[i].device
                          && lives[i - 1].address == lives[i].address;
      lives[i].max_r1 = same_key ? MAX (lives[i - 1].max_r1, lives[i].r1) : lives[i].r1;
    }
  for (guint i = 0; i < self->n_allocations; i++)
    {
      const WickSnapshotAllocation *a = &allocations[i];
      if (a->alloc_us != G_MININT64)
        lo = MIN (lo, a->alloc_us), hi = MAX (hi, a->alloc_us);
      if (a->free_completed_us != G_MAXINT64)
        lo = MIN (lo, a->free_completed_us), hi = MAX (hi, a->free_completed_us);
    }
  if (n_entries > 0)
    lo = MIN (lo, last_entry_us), hi = MAX (hi, last_entry_us);

  self->category = g_new0 (guint8, MAX (self->n_allocations, 1));
  self->match = g_new0 (guint8, MAX (self->n_allocations, 1));
  self->source = g_new0 (guint8, MAX (self->n_allocations, 1));
  self->record = g_new (guint32, MAX (self->n_allocations, 1));
  g_autofree guint8 *life_matched = g_new0 (guint8, MAX (self->lives->len, 1));
  c->allocations = self->n_allocations;
  for (guint i = 0; i < self->n_allocations; i++)
    {
      const WickSnapshotAllocation *a = &allocations[i];
      gint64 a0 = a->alloc_us;
      gint64 a1 = a->free_completed_us == G_MAXINT64 && n_entries > 0 ? last_entry_us
                                                                     : a->free_completed_us;
      gint64 device = a->device_index;
      /* the key's lifetimes that begin by a1, from the latest back while
       * one before can still reach a0 */
      guint first = life_bound (lives, self->lives->len, device, a->address, NEG_INF, FALSE);
      guint key_end = life_bound (lives, self->lives->len, device, a->address, a1, TRUE);
      guint best = G_MAXUINT32, n_candidates = 0;
      gint64 best_overlap = -1, second_overlap = -1;
      gboolean sized = FALSE;
      for (guint j = key_end; j > first && lives[j - 1].max_r1 >= a0; j--)
        {
          const Life *l = &lives[j - 1];
          if (MAX (a0, l->r0) > MIN (a1, l->r1))
            continue;
          gboolean same_size = l->bytes == a->size;
          if (sized && !same_size)
            continue;
          if (same_size && !sized)
            {
              /* those of its size only, from now on */
              sized = TRUE;
              n_candidates = 0;
              best = G_MAXUINT32;
              best_overlap = second_overlap = -1;
            }
          gint64 overlap = MIN (clamp (a1, lo, hi), clamp (l->r1, lo, hi))
                           - MAX (clamp (a0, lo, hi), clamp (l->r0, lo, hi));
          n_candidates++;
          if (overlap > best_overlap)
            {
              second_overlap = best_overlap;
              best_overlap = overlap;
              best = j - 1;
            }
          else if (overlap > second_overlap)
            second_overlap = overlap;
        }
      WickSnapshotMatch match = WICK_SNAPSHOT_UNMATCHED;
      if (n_candidates == 1 || (n_candidates > 1 && best_overlap > 2 * second_overlap))
        match = WICK_SNAPSHOT_MATCHED;
      else if (n_candidates > 1)
        match = WICK_SNAPSHOT_AMBIGUOUS;
      self->match[i] = (guint8)match;
      self->record[i] = G_MAXUINT32;
      WickMemoryCategory category = WICK_CATEGORY_OTHER;
      WickSnapshotCategorySource source = WICK_SNAPSHOT_CATEGORY_UNKNOWN;
      if (match == WICK_SNAPSHOT_MATCHED)
        {
          self->record[i] = lives[best].memory;
          life_matched[best] = TRUE;
          if (lives[best].category != WICK_CATEGORY_OTHER)
            {
              category = lives[best].category;
              source = WICK_SNAPSHOT_CATEGORY_FROM_RECORD;
            }
        }
      if (source == WICK_SNAPSHOT_CATEGORY_UNKNOWN && a->stack != WICK_SNAPSHOT_NO_STACK)
        {
          category = wick_memory_snapshot_stack_category (self->snapshot, a->stack);
          if (category != WICK_CATEGORY_OTHER)
            source = WICK_SNAPSHOT_CATEGORY_FROM_FRAMES;
        }
      self->category[i] = (guint8)category;
      self->source[i] = (guint8)source;
      gboolean live = a->block != G_MAXUINT32;
      c->live += live;
      switch (match)
        {
          case WICK_SNAPSHOT_MATCHED:
            c->matched++, c->live_matched += live;
            break;
          case WICK_SNAPSHOT_AMBIGUOUS:
            c->ambiguous++, c->live_ambiguous += live;
            break;
          default:
            c->unmatched++, c->live_unmatched += live;
        }
      c->from_record += source == WICK_SNAPSHOT_CATEGORY_FROM_RECORD;
      c->from_frames += source == WICK_SNAPSHOT_CATEGORY_FROM_FRAMES;
      c->unknown += source == WICK_SNAPSHOT_CATEGORY_UNKNOWN;
    }
  for (guint i = 0; i < self->lives->len; i++)
    c->lifetimes_matched += life_matched[i];
  return self;
}

void
wick_snapshot_categories_free (WickSnapshotCategories *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->lives);
  g_free (self->category);
  g_free (self->match);
  g_free (self->source);
  g_free (self->record);
  g_free (self);
}

const WickSnapshotMatchCounts *
wick_snapshot_categories_get_counts (WickSnapshotCategories *self)
{
  return &self->counts;
}

WickMemoryCategory
wick_snapshot_categories_get (WickSnapshotCategories *self, guint i, WickSnapshotMatch *match,
                              WickSnapshotCategorySource *source, guint32 *record)
{
  g_return_val_if_fail (i < self->n_allocations, WICK_CATEGORY_OTHER);
  if (match != NULL)
    *match = self->match[i];
  if (source != NULL)
    *source = self->source[i];
  if (record != NULL)
    *record = self->record[i];
  return self->category[i];
}

void
wick_snapshot_categories_at_snapshot (WickSnapshotCategories *self, guint64 *bytes)
{
  guint n_blocks, n;
  const WickSnapshotBlock *blocks = wick_memory_snapshot_get_blocks (self->snapshot, &n_blocks);
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (self->snapshot, &n);
  g_autofree guint32 *of_block = g_new (guint32, MAX (n_blocks, 1));

  memset (bytes, 0, WICK_SNAPSHOT_N_CATEGORIES * sizeof *bytes);
  for (guint i = 0; i < n_blocks; i++)
    of_block[i] = G_MAXUINT32;
  for (guint i = 0; i < n; i++)
    if (allocations[i].block < n_blocks)
      of_block[allocations[i].block] = i;
  for (guint i = 0; i < n_blocks; i++)
    {
      if (blocks[i].state != WICK_BLOCK_ACTIVE_ALLOCATED)
        continue;
      WickMemoryCategory category
        = of_block[i] != G_MAXUINT32
            ? self->category[of_block[i]]
            : (blocks[i].stack != WICK_SNAPSHOT_NO_STACK
                 ? wick_memory_snapshot_stack_category (self->snapshot, blocks[i].stack)
                 : WICK_CATEGORY_OTHER);
      bytes[MIN (category, WICK_CATEGORY_OTHER)] += blocks[i].size;
    }
}

void
wick_snapshot_categories_at (WickSnapshotCategories *self, gint64 time_us, guint64 *bytes)
{
  guint n;
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (self->snapshot, &n);

  memset (bytes, 0, WICK_SNAPSHOT_N_CATEGORIES * sizeof *bytes);
  for (guint i = 0; i < n; i++)
    if (allocations[i].alloc_us <= time_us && time_us < allocations[i].free_completed_us)
      bytes[MIN (self->category[i], WICK_CATEGORY_OTHER)] += allocations[i].size;
}

const char *
wick_snapshot_clock_to_string (WickSnapshotClock clock)
{
  switch (clock)
    {
      case WICK_SNAPSHOT_CLOCK_META_TIMESTAMP:
        return "meta_timestamp";
      case WICK_SNAPSHOT_CLOCK_TRACE_END:
        return "trace_end";
      case WICK_SNAPSHOT_CLOCK_NONE:
        return "none";
    }
  return "none";
}
