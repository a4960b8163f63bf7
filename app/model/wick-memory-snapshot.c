/* wick-memory-snapshot.c — PyTorch allocator snapshots (see the header). */
#include "config.h"

#include "wick-memory-snapshot.h"
#include "wick-memory-snapshot-private.h"

#include <string.h>

#include "wick-document-error.h"
#include "wick-huge-pages.h"
#include "wick-input.h"
#include "wick-pickle.h"
#include "wick-string-pool.h"

#define NO_INDEX G_MAXUINT32

typedef struct
{
  guint n;
  guint32 frames[];
} StackKey;

struct _WickMemorySnapshot
{
  char *name;
  WickStringPool *strings;
  GArray *segments;    /* WickSnapshotSegment */
  GArray *blocks;      /* WickSnapshotBlock */
  GArray *entries;     /* WickSnapshotEntry, device by device */
  GArray *frames;      /* WickSnapshotFrame */
  GArray *stack_start; /* guint32 offsets into stack_frames, one per stack + 1 */
  GArray *stack_frames;
  GArray *stack_category; /* guint8, 0xff until computed */
  GArray *allocated;      /* WickSnapshotPoint */
  GArray *reserved;
  GArray *allocations; /* WickSnapshotAllocation */
  GArray *ooms;        /* guint32: the oom entries' indices, in entry order */
  guint n_devices;
  guint64 allocated_now, reserved_now;
  gboolean has_peak;
  guint64 peak;
  gint64 peak_us;
  GPtrArray *unmodelled_names;
  GArray *unmodelled_counts; /* guint64 */
  gint64 from_us, to_us; /* the range loaded */
  guint64 n_outside;     /* history entries outside it, not kept */
};

/* One list of history entries (a device's trace), matched as it is read:
 * what derive_device did over a whole array, one entry at a time, so that
 * only the entries of the time range are kept (see wick_memory_snapshot_load_range). */
typedef struct
{
  gint64 time_us;
  gint64 delta;
  guint32 entry;
} Change;

#define OPEN_AFTER_RANGE G_MAXUINT32 /* an open alloc made after the range: not kept */

/* Open allocations by address: open addressing with linear probing and
 * backward-shift deletion, at most half full. A GHashTable of pointers
 * took a lookup, an insert and a remove per alloc/free pair through
 * function calls (about 200 instructions an entry). Values are never 0. */
typedef struct
{
  guint64 *keys;
  guint32 *values; /* 0: empty */
  gsize mask;
  gsize n;
} AddrMap;

static inline gsize
addr_hash (guint64 a, gsize mask)
{
  a ^= a >> 31;
  a *= G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  a ^= a >> 29;
  return (gsize)a & mask;
}

static void
addr_map_init (AddrMap *m, gsize size)
{
  m->mask = size - 1;
  m->n = 0;
  m->keys = g_new (guint64, size);
  m->values = g_new0 (guint32, size);
}

static void
addr_map_clear (AddrMap *m)
{
  g_free (m->keys);
  g_free (m->values);
}

static inline guint32
addr_map_lookup (const AddrMap *m, guint64 a)
{
  for (gsize i = addr_hash (a, m->mask);; i = (i + 1) & m->mask)
    {
      if (m->values[i] == 0)
        return 0;
      if (m->keys[i] == a)
        return m->values[i];
    }
}

static void addr_map_insert (AddrMap *m, guint64 a, guint32 value);

static G_NO_INLINE void
addr_map_grow (AddrMap *m)
{
  AddrMap bigger;
  addr_map_init (&bigger, (m->mask + 1) * 2);
  for (gsize i = 0; i <= m->mask; i++)
    if (m->values[i] != 0)
      addr_map_insert (&bigger, m->keys[i], m->values[i]);
  addr_map_clear (m);
  *m = bigger;
}

static void
addr_map_insert (AddrMap *m, guint64 a, guint32 value)
{
  if ((m->n + 1) * 2 > m->mask + 1)
    addr_map_grow (m);
  gsize i = addr_hash (a, m->mask);
  for (; m->values[i] != 0; i = (i + 1) & m->mask)
    if (m->keys[i] == a)
      {
        m->values[i] = value;
        return;
      }
  m->keys[i] = a;
  m->values[i] = value;
  m->n++;
}

static void
addr_map_remove (AddrMap *m, guint64 a)
{
  gsize i = addr_hash (a, m->mask);
  for (;; i = (i + 1) & m->mask)
    {
      if (m->values[i] == 0)
        return;
      if (m->keys[i] == a)
        break;
    }
  m->values[i] = 0;
  m->n--;
  /* Moves back each following entry whose home is not cyclically in (hole, it]. */
  for (gsize j = (i + 1) & m->mask; m->values[j] != 0; j = (j + 1) & m->mask)
    {
      gsize home = addr_hash (m->keys[j], m->mask);
      gboolean stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays)
        continue;
      m->keys[i] = m->keys[j];
      m->values[i] = m->values[j];
      m->values[j] = 0;
      i = j;
    }
}

typedef struct _ListState
{
  GArray *entries;       /* WickSnapshotEntry of the range, in file order */
  AddrMap open;          /* address -> allocation slot + 1, or OPEN_AFTER_RANGE */
  GArray *allocs;        /* WickSnapshotAllocation slots; dead ones are reused */
  GArray *order;         /* guint64 per slot: when it was made, to sort the kept ones */
  GArray *free_slots;    /* guint32 */
  GArray *alloc_changes; /* Change within the range; entry indexes @entries */
  GArray *reserve_changes;
  gint64 net_reserved_from; /* reserved change of the entries from the range's start on */
  gint64 first_us;
  guint64 n_seen; /* entries read, in the range or not */
  guint64 n_extra;   /* allocations made after the entries (live blocks) */
  guint64 n_dropped; /* slots dropped (freed before the range) */
  guint64 bytes_before_history; /* sizes of the slots with alloc_us G_MININT64 */
  GArray *ooms;      /* guint32: oom entries of the range, indexing @entries */
  /* Appends to entries, alloc_changes and reserve_changes go through these
   * first and are flushed a batch at a time (g_array_append_val is a call
   * and a capacity check per entry); list_state_flush before any reads. */
  guint n_stage_entries, n_stage_alloc, n_stage_reserve;
  WickSnapshotEntry stage_entries[128];
  Change stage_alloc[128], stage_reserve[128];
  WickHugePagesAdvised advised[5]; /* entries, allocs, order, the two changes */
} ListState;

#define STAGE_MAX 128

/* The arrays that grow with the history, on huge pages (wick-huge-pages.h):
 * their page faults were a third of the reader's time. Checked a batch at a
 * time; a batch appends at most STAGE_MAX items past the last advice. */
static void
list_state_advise (ListState *ls)
{
  GArray *arrays[5] = { ls->entries, ls->allocs, ls->order, ls->alloc_changes, ls->reserve_changes };
  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    wick_huge_pages_advise (arrays[i]->data, &ls->advised[i]);
}

static void
list_state_flush (ListState *ls)
{
  g_array_append_vals (ls->entries, ls->stage_entries, ls->n_stage_entries);
  g_array_append_vals (ls->alloc_changes, ls->stage_alloc, ls->n_stage_alloc);
  g_array_append_vals (ls->reserve_changes, ls->stage_reserve, ls->n_stage_reserve);
  ls->n_stage_entries = ls->n_stage_alloc = ls->n_stage_reserve = 0;
}

static inline void
stage_entry (ListState *ls, const WickSnapshotEntry *e)
{
  if (G_UNLIKELY (ls->n_stage_entries == STAGE_MAX))
    {
      g_array_append_vals (ls->entries, ls->stage_entries, STAGE_MAX);
      ls->n_stage_entries = 0;
      list_state_advise (ls);
    }
  ls->stage_entries[ls->n_stage_entries++] = *e;
}

static inline void
stage_change (GArray *to, Change *stage, guint *n, const Change *c)
{
  if (G_UNLIKELY (*n == STAGE_MAX))
    {
      g_array_append_vals (to, stage, STAGE_MAX);
      *n = 0;
    }
  stage[(*n)++] = *c;
}

static ListState *
list_state_new (void)
{
  ListState *ls = g_new0 (ListState, 1);
  ls->entries = g_array_new (FALSE, FALSE, sizeof (WickSnapshotEntry));
  addr_map_init (&ls->open, 1024);
  ls->allocs = g_array_new (FALSE, FALSE, sizeof (WickSnapshotAllocation));
  ls->order = g_array_new (FALSE, FALSE, sizeof (guint64));
  ls->free_slots = g_array_new (FALSE, FALSE, sizeof (guint32));
  ls->alloc_changes = g_array_new (FALSE, FALSE, sizeof (Change));
  ls->reserve_changes = g_array_new (FALSE, FALSE, sizeof (Change));
  ls->ooms = g_array_new (FALSE, FALSE, sizeof (guint32));
  ls->first_us = G_MAXINT64;
  return ls;
}

static void
list_state_free (gpointer p)
{
  ListState *ls = p;
  g_array_unref (ls->entries);
  addr_map_clear (&ls->open);
  g_array_unref (ls->allocs);
  g_array_unref (ls->order);
  g_array_unref (ls->free_slots);
  g_array_unref (ls->alloc_changes);
  g_array_unref (ls->reserve_changes);
  g_array_unref (ls->ooms);
  g_free (ls);
}

static void
list_state_unref (ListState *ls)
{
  list_state_free (ls);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ListState, list_state_unref)


/* State while reading: the caches that turn shared pickle values into indices. */
typedef struct
{
  WickMemorySnapshot *snapshot;
  WickPickleReader *reader;
  GHashTable *entries_by_list;  /* list id -> ListState */
  GHashTable *frame_by_content; /* "name\\0file\\0line" -> frame index + 1 */
  GHashTable *stack_by_content; /* StackKey* -> stack index + 1 */
  guint64 n_segments_read;
  guint64 n_entries_read;
  guint64 n_items_seen;
  guint64 n_outside; /* entries read but outside the range */
  WickInput *input;
  WickSnapshotProgressFunc progress;
  gpointer progress_data;
  guint64 last_list_id; /* the entries list read_entry appended to last */
  struct _ListState *last_list;
  gint64 from_us, to_us; /* the time range kept: G_MININT64, G_MAXINT64 for all */
  GPtrArray *device_lists; /* ListState (borrowed) per device_traces index, or NULL */
  GPtrArray *owned_lists;  /* the ListStates taken out of entries_by_list */
  WickPickleKeyCache *keys; /* scan_names */
} Loader;

static void
count_unmodelled (WickMemorySnapshot *s, const char *what, guint64 n)
{
  for (guint i = 0; i < s->unmodelled_names->len; i++)
    if (strcmp (g_ptr_array_index (s->unmodelled_names, i), what) == 0)
      {
        g_array_index (s->unmodelled_counts, guint64, i) += n;
        return;
      }
  g_ptr_array_add (s->unmodelled_names, g_strdup (what));
  g_array_append_val (s->unmodelled_counts, n);
}

static const char *
wick_trace_action_to_string (WickTraceAction action)
{
  static const char *const names[]
    = { "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
        "segment_map", "segment_unmap",  "snapshot",       "oom",           "other" };
  return action < G_N_ELEMENTS (names) ? names[action] : "other";
}

static const char *
wick_block_state_to_string (WickBlockState state)
{
  static const char *const names[]
    = { "active_allocated", "active_pending_free", "inactive", "other" };
  return state < G_N_ELEMENTS (names) ? names[state] : "other";
}

static WickTraceAction
parse_action (const char *s, gsize len)
{
  for (guint a = 0; a < WICK_TRACE_OTHER; a++)
    {
      const char *name = wick_trace_action_to_string (a);
      if (strlen (name) == len && memcmp (name, s, len) == 0)
        return a;
    }
  return WICK_TRACE_OTHER;
}

static WickBlockState
parse_state (const char *s, gsize len)
{
  for (guint a = 0; a < WICK_BLOCK_OTHER; a++)
    {
      const char *name = wick_block_state_to_string (a);
      if (strlen (name) == len && memcmp (name, s, len) == 0)
        return a;
    }
  return WICK_BLOCK_OTHER;
}

static gboolean G_GNUC_PRINTF (3, 4) bad_field (Loader *l, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_INVALID,
               "%s: byte %" G_GUINT64_FORMAT ": %s", l->snapshot->name,
               wick_pickle_reader_get_offset (l->reader), message);
  return FALSE;
}

/* An integer field: absent is 0 (counted as unmodelled when @required), a
 * value of another type is an error naming @what and @key. */
static gboolean value_u64_slow (Loader *l, const WickPickleValue *v, const char *what,
                                const char *key, gboolean required, guint64 *out, GError **error);

static inline gboolean
value_u64 (Loader *l, const WickPickleValue *v, const char *what, const char *key,
           gboolean required, guint64 *out, GError **error)
{
  if (G_LIKELY (v != NULL && v->type == WICK_PICKLE_INT))
    {
      *out = (guint64)v->as.i; /* negative stays two's complement, as below */
      return TRUE;
    }
  return value_u64_slow (l, v, what, key, required, out, error);
}

static G_NO_INLINE gboolean
value_u64_slow (Loader *l, const WickPickleValue *v, const char *what, const char *key,
                gboolean required, guint64 *out, GError **error)
{
  gint64 i;
  *out = 0;
  if (v == NULL || v->type == WICK_PICKLE_NONE)
    {
      if (required)
        {
          g_autofree char *name = g_strdup_printf ("%s without \"%s\"", what, key);
          count_unmodelled (l->snapshot, name, 1);
        }
      return TRUE;
    }
  if (wick_pickle_value_get_uint64 (v, out))
    return TRUE;
  if (wick_pickle_value_get_int (v, &i))
    {
      *out = (guint64)i; /* negative stays two's complement, as the allocator's own */
      return TRUE;
    }
  return bad_field (l, error, "%s: \"%s\" is a %s, not an int", what, key,
                    wick_pickle_type_to_string (v->type));
}

static gboolean
get_u64 (Loader *l, const WickPickleValue *dict, const char *what, const char *key,
         gboolean required, guint64 *out, GError **error)
{
  return value_u64 (l, wick_pickle_value_lookup (dict, key), what, key, required, out, error);
}

/* The keys that tell an entry or a segment, found in one pass over a dict
 * (every item appended to any list comes through here). */
typedef union
{
  struct
  {
    const WickPickleValue *action, *addr, *size, *stream, *time_us, *frames, *blocks, *total_size,
      *device_free;
  };
  const WickPickleValue *found[9];
} Keys;

static const char *const scan_names[] = { "action", "addr",   "size",       "stream",     "time_us",
                                          "frames", "blocks", "total_size", "device_free" };
G_STATIC_ASSERT (G_N_ELEMENTS (scan_names) == G_N_ELEMENTS (((Keys *)NULL)->found));

static void
scan_keys (Loader *l, const WickPickleValue *dict, Keys *k)
{
  wick_pickle_value_lookup_cached (dict, l->keys, k->found);
}

static WickStr
intern (WickMemorySnapshot *s, const WickPickleValue *v)
{
  gsize len;
  const char *text = wick_pickle_value_get_string (v, &len);
  if (text == NULL)
    return 0;
  if (!g_utf8_validate_len (text, len, NULL))
    {
      g_autofree char *valid = g_utf8_make_valid (text, (gssize)len);
      return wick_string_pool_intern (s->strings, valid, strlen (valid));
    }
  return wick_string_pool_intern (s->strings, text, len);
}

static guint32
intern_frame (Loader *l, const WickPickleValue *frame)
{
  /* A frame dict the pickle shares (memo GETs) carries its index as a tag. */
  guint32 cached = wick_pickle_value_get_tag (frame);
  if (cached != 0)
    return cached - 1;
  WickMemorySnapshot *s = l->snapshot;
  WickSnapshotFrame f = { 0 };
  gint64 line = 0;
  f.name = intern (s, wick_pickle_value_lookup (frame, "name"));
  f.filename = intern (s, wick_pickle_value_lookup (frame, "filename"));
  if (wick_pickle_value_get_int (wick_pickle_value_lookup (frame, "line"), &line))
    f.line = line;
  g_autofree char *key = g_strdup_printf ("%u/%u/%" G_GINT64_FORMAT, f.name, f.filename, f.line);
  guint32 index;
  gpointer known = g_hash_table_lookup (l->frame_by_content, key);
  if (known != NULL)
    index = GPOINTER_TO_UINT (known) - 1;
  else
    {
      index = s->frames->len;
      g_array_append_val (s->frames, f);
      g_hash_table_insert (l->frame_by_content, g_steal_pointer (&key),
                           GUINT_TO_POINTER (index + 1));
    }
  wick_pickle_value_set_tag (frame, index + 1);
  return index;
}

static guint
stack_key_hash (gconstpointer p)
{
  const StackKey *k = p;
  guint h = 5381 + k->n;
  for (guint i = 0; i < k->n; i++)
    h = h * 33 + k->frames[i];
  return h;
}

static gboolean
stack_key_equal (gconstpointer a, gconstpointer b)
{
  const StackKey *x = a, *y = b;
  return x->n == y->n && memcmp (x->frames, y->frames, x->n * sizeof (guint32)) == 0;
}

/* A frames list's stack index, NO_INDEX for none or an empty list. */
static guint32
intern_stack (Loader *l, const WickPickleValue *frames)
{
  if (frames == NULL || frames->type != WICK_PICKLE_LIST)
    return NO_INDEX;
  guint32 cached = wick_pickle_value_get_tag (frames);
  if (cached != 0)
    return cached - 1;
  gsize n = wick_pickle_value_get_length (frames);
  if (n == 0)
    return NO_INDEX;
  WickMemorySnapshot *s = l->snapshot;
  StackKey *key = g_malloc (sizeof (StackKey) + n * sizeof (guint32));
  key->n = 0;
  for (gsize i = 0; i < n; i++)
    {
      const WickPickleValue *frame = wick_pickle_value_get_item (frames, i);
      if (frame->type == WICK_PICKLE_DICT)
        key->frames[key->n++] = intern_frame (l, frame);
      else
        count_unmodelled (s, "frames that are not dicts", 1);
    }
  guint32 index;
  gpointer known = g_hash_table_lookup (l->stack_by_content, key);
  if (known != NULL)
    {
      index = GPOINTER_TO_UINT (known) - 1;
      g_free (key);
    }
  else
    {
      index = s->stack_start->len - 1;
      g_array_append_vals (s->stack_frames, key->frames, key->n);
      guint32 end = s->stack_frames->len;
      g_array_append_val (s->stack_start, end);
      guint8 unknown = 0xff;
      g_array_append_val (s->stack_category, unknown);
      g_hash_table_insert (l->stack_by_content, key, GUINT_TO_POINTER (index + 1));
    }
  wick_pickle_value_set_tag (frames, index + 1);
  return index;
}


static guint32
alloc_slot (ListState *ls, const WickSnapshotAllocation *a)
{
  guint32 slot;
  guint64 order = ls->n_seen + ls->n_extra;
  if (ls->free_slots->len > 0)
    {
      slot = g_array_index (ls->free_slots, guint32, ls->free_slots->len - 1);
      g_array_set_size (ls->free_slots, ls->free_slots->len - 1);
      g_array_index (ls->allocs, WickSnapshotAllocation, slot) = *a;
      g_array_index (ls->order, guint64, slot) = order;
    }
  else
    {
      slot = ls->allocs->len;
      g_array_append_val (ls->allocs, *a);
      g_array_append_val (ls->order, order);
    }
  return slot;
}

static void
drop_slot (ListState *ls, guint32 slot)
{
  ls->n_dropped++;
  g_array_index (ls->order, guint64, slot) = G_MAXUINT64; /* dead */
  g_array_append_val (ls->free_slots, slot);
}

/* One entry, in file order: the alloc/free matching of PyTorch's viewer
 * (the header says how), keeping the entry and its changes when it is in
 * the range, and the allocations that are live at some time of the range. */
static void
match_entry (Loader *l, ListState *ls, const WickSnapshotEntry *e)
{
  gint64 t = e->time_us;
  gboolean before = t < l->from_us, after = t > l->to_us;
  gboolean in_range = !before && !after;
  guint32 index = ls->entries->len + ls->n_stage_entries; /* the entry's index when kept */
  Change c = { t, 0, index };
  if (ls->n_seen == 0)
    ls->first_us = t; /* the series starts at the first entry's time, as the viewer's */
  ls->n_seen++;
  if (in_range)
    {
      if (G_UNLIKELY (e->action == WICK_TRACE_OOM))
        g_array_append_val (ls->ooms, index);
      stage_entry (ls, e);
    }
  else
    l->n_outside++;

  switch (e->action)
    {
      case WICK_TRACE_ALLOC:
        {
          if (after)
            {
              addr_map_insert (&ls->open, e->addr, OPEN_AFTER_RANGE);
              break;
            }
          WickSnapshotAllocation a = { e->addr,  e->size,  t, G_MAXINT64, G_MAXINT64,
                                       e->stack, NO_INDEX, NO_INDEX, 0, NO_INDEX };
          if (in_range)
            a.alloc_entry = index;
          guint32 slot = alloc_slot (ls, &a);
          if (G_UNLIKELY (t == G_MININT64))
            ls->bytes_before_history += a.size; /* counted as live before, as derive_device would */
          addr_map_insert (&ls->open, e->addr, slot + 1);
          if (in_range)
            {
              c.delta = (gint64)e->size;
              stage_change (ls->alloc_changes, ls->stage_alloc, &ls->n_stage_alloc, &c);
            }
          break;
        }
      case WICK_TRACE_FREE_REQUESTED:
        {
          guint32 known = addr_map_lookup (&ls->open, e->addr);
          if (known != 0 && known != OPEN_AFTER_RANGE)
            g_array_index (ls->allocs, WickSnapshotAllocation, known - 1).free_requested_us = t;
          break;
        }
      case WICK_TRACE_FREE_COMPLETED:
        {
          guint32 known = addr_map_lookup (&ls->open, e->addr);
          guint64 size = e->size;
          if (known == OPEN_AFTER_RANGE)
            {
              addr_map_remove (&ls->open, e->addr);
              break;
            }
          if (known != 0)
            {
              WickSnapshotAllocation *a
                = &g_array_index (ls->allocs, WickSnapshotAllocation, known - 1);
              a->free_completed_us = t;
              a->free_stack = e->stack;
              if (a->free_requested_us == G_MAXINT64)
                a->free_requested_us = t;
              size = a->size;
              addr_map_remove (&ls->open, e->addr);
              if (before)
                drop_slot (ls, known - 1); /* alloc and free both before the range */
            }
          else if (!before)
            {
              /* live since before the history, freed now */
              WickSnapshotAllocation a
                = { e->addr, e->size, G_MININT64, t, t, NO_INDEX, NO_INDEX, NO_INDEX, 0, e->stack };
              alloc_slot (ls, &a);
              ls->bytes_before_history += a.size;
            }
          if (in_range)
            {
              c.delta = -(gint64)size;
              stage_change (ls->alloc_changes, ls->stage_alloc, &ls->n_stage_alloc, &c);
            }
          break;
        }
      case WICK_TRACE_SEGMENT_ALLOC:
      case WICK_TRACE_SEGMENT_MAP:
      case WICK_TRACE_SEGMENT_FREE:
      case WICK_TRACE_SEGMENT_UNMAP:
        c.delta = e->action == WICK_TRACE_SEGMENT_ALLOC || e->action == WICK_TRACE_SEGMENT_MAP
                    ? (gint64)e->size
                    : -(gint64)e->size;
        if (!before)
          ls->net_reserved_from += c.delta;
        if (in_range)
          stage_change (ls->reserve_changes, ls->stage_reserve, &ls->n_stage_reserve, &c);
        break;
      default:
        break;
    }
}

static gboolean
read_entry (Loader *l, guint64 list_id, const Keys *k, GError **error)
{
  WickSnapshotEntry e = { 0 };
  guint64 time_us;
  gsize len;
  const char *what = "device_traces entry";
  /* The action str is memoized and shared: it carries its parse as a tag. */
  guint32 tag = wick_pickle_value_get_tag (k->action);
  if (G_LIKELY (tag != 0))
    e.action = tag - 1;
  else
    {
      const char *action = wick_pickle_value_get_string (k->action, &len);
      if (action == NULL)
        return bad_field (l, error, "device_traces entry: \"action\" is not a str");
      e.action = parse_action (action, len);
      if (e.action != WICK_TRACE_OTHER)
        wick_pickle_value_set_tag (k->action, e.action + 1);
    }
  if (e.action == WICK_TRACE_OTHER)
    {
      const char *action = wick_pickle_value_get_string (k->action, &len);
      g_autofree char *name = g_strdup_printf ("action %.*s", (int)MIN (len, 64), action);
      count_unmodelled (l->snapshot, name, 1);
    }
  /* An oom entry of newer PyTorch names the device's free bytes
   * "device_free"; older ones put them in "addr". */
  gboolean free_bytes = e.action == WICK_TRACE_OOM && k->device_free != NULL;
  if (!value_u64 (l, free_bytes ? k->device_free : k->addr, what,
                  free_bytes ? "device_free" : "addr", TRUE, &e.addr, error)
      || !value_u64 (l, k->size, what, "size", TRUE, &e.size, error)
      || !value_u64 (l, k->stream, what, "stream", FALSE, &e.stream, error)
      || !value_u64 (l, k->time_us, what, "time_us", FALSE, &time_us, error))
    return FALSE;
  e.time_us = (gint64)time_us;
  e.stack = intern_stack (l, k->frames);
  if (list_id != l->last_list_id || l->last_list == NULL)
    {
      l->last_list = g_hash_table_lookup (l->entries_by_list, GSIZE_TO_POINTER (list_id));
      if (l->last_list == NULL)
        {
          l->last_list = list_state_new ();
          g_hash_table_insert (l->entries_by_list, GSIZE_TO_POINTER (list_id), l->last_list);
        }
      l->last_list_id = list_id;
    }
  match_entry (l, l->last_list, &e);
  l->n_entries_read++;
  return TRUE;
}

static void
segment_fragmentation (WickMemorySnapshot *s, WickSnapshotSegment *seg)
{
  seg->largest_inactive = seg->inactive_bytes = 0;
  for (guint i = 0; i < seg->n_blocks; i++)
    {
      const WickSnapshotBlock *b
        = &g_array_index (s->blocks, WickSnapshotBlock, seg->first_block + i);
      if (b->state == WICK_BLOCK_INACTIVE)
        {
          seg->inactive_bytes += b->size;
          seg->largest_inactive = MAX (seg->largest_inactive, b->size);
        }
    }
  seg->fragmentation = seg->inactive_bytes == 0
                         ? 0.0
                         : 1.0 - (double)seg->largest_inactive / (double)seg->inactive_bytes;
}

static gboolean
read_segment (Loader *l, const WickPickleValue *item, GError **error)
{
  WickMemorySnapshot *s = l->snapshot;
  WickSnapshotSegment seg = { 0 };
  guint64 device, pool;
  const char *what = "segment";
  if (!get_u64 (l, item, what, "device", FALSE, &device, error)
      || !get_u64 (l, item, what, "address", TRUE, &seg.address, error)
      || !get_u64 (l, item, what, "total_size", TRUE, &seg.total_size, error)
      || !get_u64 (l, item, what, "allocated_size", FALSE, &seg.allocated_size, error)
      || !get_u64 (l, item, what, "active_size", FALSE, &seg.active_size, error)
      || !get_u64 (l, item, what, "requested_size", FALSE, &seg.requested_size, error)
      || !get_u64 (l, item, what, "stream", FALSE, &seg.stream, error))
    return FALSE;
  seg.device = (gint64)device;
  seg.segment_type = intern (s, wick_pickle_value_lookup (item, "segment_type"));
  const WickPickleValue *pool_id = wick_pickle_value_lookup (item, "segment_pool_id");
  for (guint i = 0; i < 2; i++)
    if (wick_pickle_value_get_uint64 (wick_pickle_value_get_item (pool_id, i), &pool))
      seg.pool_id[i] = (gint64)pool;
  gint64 expandable = 0;
  seg.is_expandable
    = wick_pickle_value_get_int (wick_pickle_value_lookup (item, "is_expandable"), &expandable)
      && expandable != 0;
  seg.stack = intern_stack (l, wick_pickle_value_lookup (item, "frames"));

  const WickPickleValue *blocks = wick_pickle_value_lookup (item, "blocks");
  if (blocks == NULL || blocks->type != WICK_PICKLE_LIST)
    return bad_field (l, error, "segment at 0x%" G_GINT64_MODIFIER "x: \"blocks\" is not a list",
                      seg.address);
  seg.first_block = s->blocks->len;
  guint64 next = seg.address;
  for (gsize i = 0; i < wick_pickle_value_get_length (blocks); i++)
    {
      const WickPickleValue *bv = wick_pickle_value_get_item (blocks, i);
      WickSnapshotBlock b = { 0 };
      if (bv->type != WICK_PICKLE_DICT)
        return bad_field (l, error,
                          "segment at 0x%" G_GINT64_MODIFIER "x: block %" G_GSIZE_FORMAT
                          " is a %s, not a dict",
                          seg.address, i, wick_pickle_type_to_string (bv->type));
      if (!get_u64 (l, bv, "block", "size", TRUE, &b.size, error)
          || !get_u64 (l, bv, "block", "requested_size", FALSE, &b.requested_size, error))
        return FALSE;
      b.address = next;
      if (wick_pickle_value_lookup (bv, "address") != NULL
          && !get_u64 (l, bv, "block", "address", FALSE, &b.address, error))
        return FALSE;
      next = b.address + b.size;
      gsize len;
      const char *state
        = wick_pickle_value_get_string (wick_pickle_value_lookup (bv, "state"), &len);
      b.state = state != NULL ? parse_state (state, len) : WICK_BLOCK_OTHER;
      if (b.state == WICK_BLOCK_OTHER)
        count_unmodelled (s, "blocks in another state", 1);
      b.stack = intern_stack (l, wick_pickle_value_lookup (bv, "frames"));
      b.segment = s->segments->len;
      g_array_append_val (s->blocks, b);
    }
  seg.n_blocks = s->blocks->len - seg.first_block;
  segment_fragmentation (s, &seg);
  g_array_append_val (s->segments, seg);
  l->n_segments_read++;
  return TRUE;
}

static WickPickleVerdict
on_item (guint64 list_id, guint64 index, const WickPickleValue *item, gpointer user_data,
         GError **error)
{
  Loader *l = user_data;
  (void)index;
  if (l->progress != NULL && (++l->n_items_seen & 4095) == 0)
    l->progress (wick_input_get_consumed (l->input), wick_input_get_size (l->input),
                 l->progress_data);
  if (item->type != WICK_PICKLE_DICT)
    return WICK_PICKLE_KEEP;
  Keys k;
  scan_keys (l, item, &k);
  if (k.action != NULL && (k.addr != NULL || k.device_free != NULL))
    return read_entry (l, list_id, &k, error) ? WICK_PICKLE_TAKEN : WICK_PICKLE_FAILED;
  if (k.blocks != NULL && k.total_size != NULL)
    return read_segment (l, item, error) ? WICK_PICKLE_TAKEN : WICK_PICKLE_FAILED;
  return WICK_PICKLE_KEEP;
}

/* A history entry the reader gives as a record (wick_pickle_reader_set_record_func):
 * what on_item does with a dict that has "action" and "addr" or "device_free". */
static WickPickleVerdict
on_record (guint64 list_id, guint64 index, const WickPickleValue *const *found,
           gpointer user_data, GError **error)
{
  Loader *l = user_data;
  (void)index;
  if (l->progress != NULL && (++l->n_items_seen & 4095) == 0)
    l->progress (wick_input_get_consumed (l->input), wick_input_get_size (l->input),
                 l->progress_data);
  Keys k;
  memcpy (k.found, found, sizeof k.found);
  return read_entry (l, list_id, &k, error) ? WICK_PICKLE_TAKEN : WICK_PICKLE_FAILED;
}

/* The keys on_item takes an entry by (bits of scan_names). */
static const guint32 entry_masks[] = { 1u << 0 | 1u << 1, 1u << 0 | 1u << 8 };

static WickMemorySnapshot *
snapshot_new (const char *name)
{
  WickMemorySnapshot *s = g_new0 (WickMemorySnapshot, 1);
  guint32 zero = 0;
  s->name = g_strdup (name);
  s->strings = wick_string_pool_new ();
  s->segments = g_array_new (FALSE, FALSE, sizeof (WickSnapshotSegment));
  s->blocks = g_array_new (FALSE, FALSE, sizeof (WickSnapshotBlock));
  s->entries = g_array_new (FALSE, FALSE, sizeof (WickSnapshotEntry));
  s->frames = g_array_new (FALSE, FALSE, sizeof (WickSnapshotFrame));
  s->stack_start = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_append_val (s->stack_start, zero);
  s->stack_frames = g_array_new (FALSE, FALSE, sizeof (guint32));
  s->stack_category = g_array_new (FALSE, FALSE, sizeof (guint8));
  s->allocated = g_array_new (FALSE, FALSE, sizeof (WickSnapshotPoint));
  s->reserved = g_array_new (FALSE, FALSE, sizeof (WickSnapshotPoint));
  s->allocations = g_array_new (FALSE, FALSE, sizeof (WickSnapshotAllocation));
  s->ooms = g_array_new (FALSE, FALSE, sizeof (guint32));
  s->unmodelled_names = g_ptr_array_new_with_free_func (g_free);
  s->unmodelled_counts = g_array_new (FALSE, FALSE, sizeof (guint64));
  s->from_us = G_MININT64;
  s->to_us = G_MAXINT64;
  return s;
}

void
wick_memory_snapshot_free (WickMemorySnapshot *s)
{
  if (s == NULL)
    return;
  g_free (s->name);
  wick_string_pool_free (s->strings);
  g_array_unref (s->segments);
  g_array_unref (s->blocks);
  g_array_unref (s->entries);
  g_array_unref (s->frames);
  g_array_unref (s->stack_start);
  g_array_unref (s->stack_frames);
  g_array_unref (s->stack_category);
  g_array_unref (s->allocated);
  g_array_unref (s->reserved);
  g_array_unref (s->allocations);
  g_array_unref (s->ooms);
  g_ptr_array_unref (s->unmodelled_names);
  g_array_unref (s->unmodelled_counts);
  g_free (s);
}

/* The top-level dict after streaming: device_traces tells which taken list is
 * which device; other keys are counted. */
static gboolean
finish_top (Loader *l, const WickPickleValue *top, GError **error)
{
  WickMemorySnapshot *s = l->snapshot;
  if (top->type != WICK_PICKLE_DICT)
    return bad_field (l, error, "the pickle holds a %s, not a snapshot's dict",
                      wick_pickle_type_to_string (top->type));
  const WickPickleValue *segments = wick_pickle_value_lookup (top, "segments");
  if (segments == NULL || segments->type != WICK_PICKLE_LIST)
    return bad_field (l, error, "no \"segments\" list: not a CUDA memory snapshot");
  if (wick_pickle_value_get_length (segments) > 0)
    count_unmodelled (s, "segments that are not segment dicts",
                      wick_pickle_value_get_length (segments));
  const WickPickleValue *traces = wick_pickle_value_lookup (top, "device_traces");
  if (traces != NULL && traces->type == WICK_PICKLE_LIST)
    {
      s->n_devices = (guint)wick_pickle_value_get_length (traces);
      for (guint d = 0; d < s->n_devices; d++)
        {
          const WickPickleValue *list = wick_pickle_value_get_item (traces, d);
          guint64 id = wick_pickle_value_get_list_id (list);
          ListState *ls
            = id != 0 ? g_hash_table_lookup (l->entries_by_list, GSIZE_TO_POINTER (id)) : NULL;
          if (wick_pickle_value_get_length (list) > 0)
            count_unmodelled (s, "device_traces items that are not entries",
                              wick_pickle_value_get_length (list));
          if (ls == NULL)
            continue;
          /* the same list twice in device_traces is one list: taken once */
          g_hash_table_steal (l->entries_by_list, GSIZE_TO_POINTER (id));
          g_ptr_array_set_size (l->device_lists, MAX (l->device_lists->len, d + 1));
          g_ptr_array_index (l->device_lists, d) = ls;
          g_ptr_array_add (l->owned_lists, ls);
        }
    }
  else if (traces != NULL)
    count_unmodelled (s, "device_traces that is not a list", 1);
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, l->entries_by_list);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    count_unmodelled (s, "entries outside device_traces", ((ListState *)value)->n_seen);
  for (gsize i = 0; i < wick_pickle_value_get_length (top); i++)
    {
      const WickPickleValue *key, *item;
      wick_pickle_value_get_pair (top, i, &key, &item);
      const char *name = wick_pickle_value_get_string (key, NULL);
      if (name != NULL && (strcmp (name, "segments") == 0 || strcmp (name, "device_traces") == 0))
        continue;
      g_autofree char *what = g_strdup_printf ("key %s", name != NULL ? name : "(not a str)");
      if (!g_utf8_validate (what, -1, NULL))
        {
          g_free (what);
          what = g_strdup ("key (not UTF-8)");
        }
      count_unmodelled (s, what, 1);
    }
  return TRUE;
}

/* Derived data */

/* The series from its start and changes, made in the changes' own memory
 * (a Change and a WickSnapshotPoint are the same size): a history of many
 * millions of entries is not held twice. Returns the series; @changes is
 * used up. */
G_STATIC_ASSERT (sizeof (Change) == sizeof (WickSnapshotPoint));

static GArray *
series_from_changes (guint64 start, GArray *changes, gint64 first_us)
{
  guint64 total = start;
  for (guint i = 0; i < changes->len; i++)
    {
      Change c = g_array_index (changes, Change, i);
      total += (guint64)c.delta;
      WickSnapshotPoint q = { c.time_us, total, c.entry };
      memcpy (&g_array_index (changes, Change, i), &q, sizeof q);
    }
  WickSnapshotPoint p = { first_us, start, NO_INDEX };
  Change as_change;
  memcpy (&as_change, &p, sizeof p);
  g_array_prepend_val (changes, as_change);
  return changes;
}

static gint
change_by_time (gconstpointer a, gconstpointer b)
{
  const Change *x = a, *y = b;
  if (x->time_us != y->time_us)
    return x->time_us < y->time_us ? -1 : 1;
  /* entries are device by device, each in file order */
  return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static gint
order_cmp (gconstpointer a, gconstpointer b, gpointer data)
{
  const guint64 *order = data;
  guint64 x = order[*(const guint32 *)a], y = order[*(const guint32 *)b];
  return x < y ? -1 : x > y;
}

/* The live slots of @ls appended to the snapshot's allocations in the order
 * they began; returns the bytes of those live when the series starts. */
static guint64
keep_sorted (Loader *l, ListState *ls, guint device, guint32 offset)
{
  WickMemorySnapshot *s = l->snapshot;
  g_autoptr (GArray) kept = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 i = 0; i < ls->allocs->len; i++)
    if (g_array_index (ls->order, guint64, i) != G_MAXUINT64)
      g_array_append_val (kept, i);
  g_array_sort_with_data (kept, order_cmp, ls->order->data);
  guint64 start = 0;
  for (guint i = 0; i < kept->len; i++)
    {
      WickSnapshotAllocation a
        = g_array_index (ls->allocs, WickSnapshotAllocation, g_array_index (kept, guint32, i));
      a.device_index = device;
      if (a.alloc_entry != NO_INDEX)
        a.alloc_entry += offset;
      /* live when the series starts: from before the history, or from before the range */
      if (a.alloc_us == G_MININT64 || a.alloc_us < l->from_us)
        start += a.size;
      g_array_append_val (s->allocations, a);
    }
  return start;
}

/* One device, after its entries were matched as they were read: its blocks
 * live at the snapshot (the open alloc of their address, or live since before
 * the history), its kept allocations in the order they began, its changes
 * moved onto the snapshot's entry indices. @ls may be NULL (no history). */
static void
derive_device (Loader *l, guint device, ListState *ls, GArray **alloc_changes,
               guint64 *alloc_start, GArray **reserve_changes, guint64 *reserve_start,
               gint64 *first_us)
{
  WickMemorySnapshot *s = l->snapshot;
  g_autoptr (ListState) empty = NULL;
  if (ls == NULL)
    ls = empty = list_state_new ();
  list_state_flush (ls);
  guint32 offset = s->entries->len;
  if (device != 0) /* (entries are made with device_index 0) */
    for (guint i = 0; i < ls->entries->len; i++)
      g_array_index (ls->entries, WickSnapshotEntry, i).device_index = device;
  if (s->entries->len == 0)
    {
      /* the usual one device: take the array rather than copy it */
      GArray *taken = ls->entries;
      ls->entries = s->entries;
      s->entries = taken;
    }
  else
    g_array_append_vals (s->entries, ls->entries->data, ls->entries->len);
  if (ls->n_seen > 0)
    *first_us = MIN (*first_us, ls->first_us);
  for (guint i = 0; i < ls->ooms->len; i++)
    {
      guint32 oom = g_array_index (ls->ooms, guint32, i) + offset;
      g_array_append_val (s->ooms, oom);
    }

  guint64 reserved_now = 0;
  for (guint k = 0; k < s->segments->len; k++)
    {
      const WickSnapshotSegment *seg = &g_array_index (s->segments, WickSnapshotSegment, k);
      if (seg->device != (gint64)device)
        continue;
      reserved_now += seg->total_size;
      for (guint j = 0; j < seg->n_blocks; j++)
        {
          guint32 bi = seg->first_block + j;
          const WickSnapshotBlock *b = &g_array_index (s->blocks, WickSnapshotBlock, bi);
          if (b->state != WICK_BLOCK_ACTIVE_ALLOCATED)
            continue;
          guint32 known = addr_map_lookup (&ls->open, b->address);
          if (known == OPEN_AFTER_RANGE)
            continue; /* allocated after the range */
          if (known != 0)
            {
              g_array_index (ls->allocs, WickSnapshotAllocation, known - 1).block = bi;
              continue;
            }
          WickSnapshotAllocation a
            = { b->address, b->requested_size, G_MININT64, G_MAXINT64, G_MAXINT64,
                b->stack,   NO_INDEX,          bi,         device,     NO_INDEX };
          ls->n_extra++;
          alloc_slot (ls, &a);
          ls->bytes_before_history += a.size;
        }
    }

  /* The kept allocations, in the order they began. With no slot ever
   * dropped (the whole history, or nothing before the range) the slots are
   * in that order already: fixed up in place and taken, not copied. */
  if (ls->n_dropped == 0 && s->allocations->len == 0)
    {
      guint64 start = ls->bytes_before_history;
      /* a pass over the slots only where it changes them or the start is
       * not yet known: a device after the first, or a range (slots are
       * made with device_index 0) */
      if (device != 0 || offset != 0 || l->from_us != G_MININT64)
        {
          start = 0;
          for (guint i = 0; i < ls->allocs->len; i++)
            {
              WickSnapshotAllocation *a = &g_array_index (ls->allocs, WickSnapshotAllocation, i);
              a->device_index = device;
              if (a->alloc_entry != NO_INDEX)
                a->alloc_entry += offset;
              if (a->alloc_us == G_MININT64 || a->alloc_us < l->from_us)
                start += a->size;
            }
        }
      GArray *tmp = s->allocations;
      s->allocations = ls->allocs;
      ls->allocs = tmp;
      *alloc_start += start;
      goto changes;
    }
  *alloc_start += keep_sorted (l, ls, device, offset);
changes:;
  GArray **mine[2] = { &ls->alloc_changes, &ls->reserve_changes };
  GArray **all[2] = { alloc_changes, reserve_changes };
  for (guint k = 0; k < 2; k++)
    {
      for (guint i = 0; i < (*mine[k])->len && offset != 0; i++)
        g_array_index (*mine[k], Change, i).entry += offset;
      if ((*all[k])->len == 0)
        {
          /* swap: the one device's changes are not copied */
          GArray *tmp = *all[k];
          *all[k] = *mine[k];
          *mine[k] = tmp;
        }
      else
        g_array_append_vals (*all[k], (*mine[k])->data, (*mine[k])->len);
    }
  *reserve_start += reserved_now - (guint64)ls->net_reserved_from;
}

static void
derive (Loader *l)
{
  WickMemorySnapshot *s = l->snapshot;
  g_autoptr (GArray) alloc_changes = g_array_new (FALSE, FALSE, sizeof (Change));
  g_autoptr (GArray) reserve_changes = g_array_new (FALSE, FALSE, sizeof (Change));
  guint64 alloc_start = 0, reserve_start = 0;
  gint64 first_us = G_MAXINT64;

  for (guint i = 0; i < s->segments->len; i++)
    {
      const WickSnapshotSegment *seg = &g_array_index (s->segments, WickSnapshotSegment, i);
      s->reserved_now += seg->total_size;
      for (guint j = 0; j < seg->n_blocks; j++)
        {
          const WickSnapshotBlock *b
            = &g_array_index (s->blocks, WickSnapshotBlock, seg->first_block + j);
          if (b->state == WICK_BLOCK_ACTIVE_ALLOCATED)
            s->allocated_now += b->size;
        }
    }
  /* Devices: every device_traces index, and any device a segment names
   * beyond them (a snapshot of segments without history). */
  guint n_devices = s->n_devices;
  for (guint i = 0; i < s->segments->len; i++)
    {
      gint64 d = g_array_index (s->segments, WickSnapshotSegment, i).device;
      if (d >= 0 && d < 4096 && (guint)d + 1 > n_devices)
        n_devices = (guint)d + 1;
    }
  guint64 n_seen = 0;
  for (guint d = 0; d < n_devices; d++)
    {
      ListState *ls = d < l->device_lists->len ? g_ptr_array_index (l->device_lists, d) : NULL;
      if (ls != NULL)
        n_seen += ls->n_seen;
      derive_device (l, d, ls, &alloc_changes, &alloc_start, &reserve_changes, &reserve_start,
                     &first_us);
    }
  if (first_us == G_MAXINT64)
    first_us = 0;
  if (l->from_us != G_MININT64)
    first_us = MAX (first_us, l->from_us);
  if (n_devices > 1)
    {
      g_array_sort (alloc_changes, change_by_time);
      g_array_sort (reserve_changes, change_by_time);
    }
  g_array_unref (s->allocated);
  g_array_unref (s->reserved);
  s->allocated = series_from_changes (alloc_start, g_steal_pointer (&alloc_changes), first_us);
  s->reserved = series_from_changes (reserve_start, g_steal_pointer (&reserve_changes), first_us);
  s->has_peak = n_seen > 0 && s->allocated->len > 0;
  for (guint i = 0; i < s->allocated->len; i++)
    {
      const WickSnapshotPoint *p = &g_array_index (s->allocated, WickSnapshotPoint, i);
      if (i == 0 || p->bytes > s->peak)
        {
          s->peak = p->bytes;
          s->peak_us = p->time_us;
        }
    }
}

gboolean
wick_memory_snapshot_sniff (const void *data, gsize len)
{
  const guint8 *p = data;
  return len >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5;
}

gboolean
wick_memory_snapshot_sniff_path (const char *path)
{
  g_autoptr (WickInput) input = wick_input_open (path, NULL);
  guint8 head[2];
  if (input == NULL)
    return FALSE;
  gssize got = wick_input_read (input, head, sizeof head, NULL);
  return got == 2 && wick_memory_snapshot_sniff (head, 2);
}

static WickMemorySnapshot *
load_input (WickInput *input, const char *name, gint64 from_us, gint64 to_us,
            GCancellable *cancellable, WickSnapshotProgressFunc progress, gpointer progress_data,
            GError **error)
{
  g_autoptr (WickMemorySnapshot) s = snapshot_new (name);
  g_autoptr (WickPickleReader) reader = wick_pickle_reader_new (input, name);
  Loader l = { s, reader };
  l.entries_by_list
    = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, list_state_free);
  l.frame_by_content = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  l.stack_by_content = g_hash_table_new_full (stack_key_hash, stack_key_equal, g_free, NULL);
  l.keys = wick_pickle_key_cache_new (scan_names, G_N_ELEMENTS (scan_names));
  wick_pickle_reader_set_element_func (reader, on_item, &l);
  wick_pickle_reader_set_record_func (reader, l.keys, entry_masks, G_N_ELEMENTS (entry_masks),
                                      on_record, &l);
  wick_pickle_reader_set_cancellable (reader, cancellable);
  l.input = input;
  l.progress = progress;
  l.progress_data = progress_data;

  l.from_us = from_us;
  l.to_us = to_us;
  l.device_lists = g_ptr_array_new ();
  l.owned_lists = g_ptr_array_new_with_free_func (list_state_free);

  WickPickleValue top;
  gboolean ok = wick_pickle_reader_read (reader, &top, error);
  if (ok)
    ok = finish_top (&l, &top, error);
  wick_pickle_value_clear (&top);
  if (ok)
    {
      s->from_us = from_us;
      s->to_us = to_us;
      derive (&l);
      s->n_outside = l.n_outside;
    }
  g_ptr_array_unref (l.device_lists);
  g_ptr_array_unref (l.owned_lists);
  g_hash_table_unref (l.entries_by_list);
  g_hash_table_unref (l.frame_by_content);
  g_hash_table_unref (l.stack_by_content);
  wick_pickle_key_cache_free (l.keys);
  if (!ok)
    return NULL;
  wick_string_pool_compact (s->strings);
  return g_steal_pointer (&s);
}

WickMemorySnapshot *
wick_memory_snapshot_load (const char *path, GCancellable *cancellable,
                           WickSnapshotProgressFunc progress, gpointer progress_data,
                           GError **error)
{
  g_autoptr (WickInput) input = wick_input_open (path, error);
  if (input == NULL)
    return NULL;
  return load_input (input, path, G_MININT64, G_MAXINT64, cancellable, progress, progress_data,
                     error);
}

WickMemorySnapshot *
wick_memory_snapshot_load_range (const char *path, gint64 from_us, gint64 to_us,
                                 GCancellable *cancellable, WickSnapshotProgressFunc progress,
                                 gpointer progress_data, GError **error)
{
  if (from_us > to_us)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: the range starts at %" G_GINT64_FORMAT " us, after its end at %" G_GINT64_FORMAT
                   " us",
                   path, from_us, to_us);
      return NULL;
    }
  g_autoptr (WickInput) input = wick_input_open (path, error);
  if (input == NULL)
    return NULL;
  return load_input (input, path, from_us, to_us, cancellable, progress, progress_data, error);
}

gboolean
wick_memory_snapshot_get_range (WickMemorySnapshot *s, gint64 *from_us, gint64 *to_us,
                                guint64 *n_outside)
{
  if (from_us != NULL)
    *from_us = s->from_us;
  if (to_us != NULL)
    *to_us = s->to_us;
  if (n_outside != NULL)
    *n_outside = s->n_outside;
  return s->from_us != G_MININT64 || s->to_us != G_MAXINT64;
}

WickMemorySnapshot *
wick_memory_snapshot_load_data (const void *data, gsize len, const char *name, GError **error)
{
  g_autoptr (WickInput) input = wick_input_new_for_data (data, len, name);
  return load_input (input, name, G_MININT64, G_MAXINT64, NULL, NULL, NULL, error);
}

/* Accessors */

const WickSnapshotSegment *
wick_memory_snapshot_get_segments (WickMemorySnapshot *s, guint *n)
{
  *n = s->segments->len;
  return (const WickSnapshotSegment *)(gpointer)s->segments->data;
}

const WickSnapshotBlock *
wick_memory_snapshot_get_blocks (WickMemorySnapshot *s, guint *n)
{
  *n = s->blocks->len;
  return (const WickSnapshotBlock *)(gpointer)s->blocks->data;
}

const WickSnapshotEntry *
wick_memory_snapshot_get_entries (WickMemorySnapshot *s, guint *n)
{
  *n = s->entries->len;
  return (const WickSnapshotEntry *)(gpointer)s->entries->data;
}

const guint32 *
wick_memory_snapshot_get_oom_entries (WickMemorySnapshot *s, guint *n)
{
  *n = s->ooms->len;
  return (const guint32 *)(gpointer)s->ooms->data;
}

guint
wick_memory_snapshot_get_n_devices (WickMemorySnapshot *s)
{
  return s->n_devices;
}

guint64
wick_memory_snapshot_get_allocated (WickMemorySnapshot *s)
{
  return s->allocated_now;
}

guint64
wick_memory_snapshot_get_reserved (WickMemorySnapshot *s)
{
  return s->reserved_now;
}

const WickSnapshotPoint *
wick_memory_snapshot_get_allocated_series (WickMemorySnapshot *s, guint *n)
{
  *n = s->allocated->len;
  return (const WickSnapshotPoint *)(gpointer)s->allocated->data;
}

const WickSnapshotPoint *
wick_memory_snapshot_get_reserved_series (WickMemorySnapshot *s, guint *n)
{
  *n = s->reserved->len;
  return (const WickSnapshotPoint *)(gpointer)s->reserved->data;
}

gboolean
wick_memory_snapshot_get_peak (WickMemorySnapshot *s, guint64 *bytes, gint64 *time_us)
{
  *bytes = s->peak;
  *time_us = s->peak_us;
  return s->has_peak;
}

const guint32 *
wick_memory_snapshot_get_stack (WickMemorySnapshot *s, guint32 stack, guint *n)
{
  if (stack >= s->stack_start->len - 1)
    {
      *n = 0;
      return NULL;
    }
  guint32 from = g_array_index (s->stack_start, guint32, stack);
  *n = g_array_index (s->stack_start, guint32, stack + 1) - from;
  return &g_array_index (s->stack_frames, guint32, from);
}

const WickSnapshotFrame *
wick_memory_snapshot_get_frame (WickMemorySnapshot *s, guint32 frame)
{
  return frame < s->frames->len ? &g_array_index (s->frames, WickSnapshotFrame, frame) : NULL;
}

const char *
wick_memory_snapshot_str (WickMemorySnapshot *s, WickStr str)
{
  return str == 0 ? "" : wick_string_pool_get (s->strings, str);
}

char *
wick_memory_snapshot_format_frame (WickMemorySnapshot *s, guint32 frame)
{
  const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (s, frame);
  if (f == NULL)
    return g_strdup ("?");
  return g_strdup_printf ("%s (%s:%" G_GINT64_FORMAT ")", wick_memory_snapshot_str (s, f->name),
                          wick_memory_snapshot_str (s, f->filename), f->line);
}

const char *
wick_memory_snapshot_category_name (WickMemoryCategory category)
{
  switch (category)
    {
      case WICK_CATEGORY_PARAMETER:
        return "parameters";
      case WICK_CATEGORY_ACTIVATION:
        return "activations";
      case WICK_CATEGORY_GRADIENT:
        return "gradients";
      case WICK_CATEGORY_OPTIMIZER:
        return "optimizer state";
      default:
        return "unknown";
    }
}

static WickMemoryCategory
categorize (WickMemorySnapshot *s, guint32 stack)
{
  guint n;
  const guint32 *frames = wick_memory_snapshot_get_stack (s, stack, &n);
  gboolean optimizer = FALSE, backward = FALSE, parameter = FALSE, forward = FALSE;
  for (guint i = 0; i < n; i++)
    {
      const WickSnapshotFrame *f = wick_memory_snapshot_get_frame (s, frames[i]);
      const char *name = wick_memory_snapshot_str (s, f->name);
      const char *file = wick_memory_snapshot_str (s, f->filename);
      if (strstr (file, "torch/optim/") != NULL)
        optimizer = TRUE;
      if (strstr (name, "autograd::Engine") != NULL || strstr (name, "autograd::engine") != NULL
          || strstr (name, "_engine_run_backward") != NULL
          || (strstr (file, "torch/autograd/") != NULL && strcmp (name, "backward") == 0)
          || (g_str_has_suffix (file, "torch/_tensor.py") && strcmp (name, "backward") == 0))
        backward = TRUE;
      if (strstr (file, "torch/nn/parameter.py") != NULL || strcmp (name, "reset_parameters") == 0
          || (g_str_has_suffix (file, "torch/nn/modules/module.py")
              && (strcmp (name, "_apply") == 0 || strcmp (name, "to") == 0
                  || strcmp (name, "cuda") == 0 || strcmp (name, "register_parameter") == 0)))
        parameter = TRUE;
      if (g_str_has_suffix (file, "torch/nn/modules/module.py")
          && (strcmp (name, "_call_impl") == 0 || strcmp (name, "_wrapped_call_impl") == 0))
        forward = TRUE;
    }
  if (optimizer)
    return WICK_CATEGORY_OPTIMIZER;
  if (backward)
    return WICK_CATEGORY_GRADIENT;
  if (parameter)
    return WICK_CATEGORY_PARAMETER;
  if (forward)
    return WICK_CATEGORY_ACTIVATION;
  return WICK_CATEGORY_OTHER;
}

WickMemoryCategory
wick_memory_snapshot_stack_category (WickMemorySnapshot *s, guint32 stack)
{
  if (stack >= s->stack_category->len)
    return WICK_CATEGORY_OTHER;
  guint8 *cached = &g_array_index (s->stack_category, guint8, stack);
  if (*cached == 0xff)
    *cached = (guint8)categorize (s, stack);
  return (WickMemoryCategory)*cached;
}

guint
wick_memory_snapshot_get_n_unmodelled (WickMemorySnapshot *s)
{
  return s->unmodelled_names->len;
}

const char *
wick_memory_snapshot_get_unmodelled (WickMemorySnapshot *s, guint i, guint64 *count)
{
  if (i >= s->unmodelled_names->len)
    return NULL;
  *count = g_array_index (s->unmodelled_counts, guint64, i);
  return g_ptr_array_index (s->unmodelled_names, i);
}

const WickSnapshotAllocation *
wick_memory_snapshot_get_allocations (WickMemorySnapshot *s, guint *n)
{
  *n = s->allocations->len;
  return (const WickSnapshotAllocation *)(gpointer)s->allocations->data;
}

typedef struct
{
  guint64 size;
  guint32 index;
} Ranked;

static gint
ranked_cmp (gconstpointer a, gconstpointer b)
{
  const Ranked *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

GArray *
wick_memory_snapshot_live_at (WickMemorySnapshot *s, gint64 time_us, guint max)
{
  g_autoptr (GArray) ranked = g_array_new (FALSE, FALSE, sizeof (Ranked));
  for (guint i = 0; i < s->allocations->len; i++)
    {
      const WickSnapshotAllocation *a = &g_array_index (s->allocations, WickSnapshotAllocation, i);
      if (a->alloc_us <= time_us && time_us < a->free_completed_us)
        {
          Ranked r = { a->size, i };
          g_array_append_val (ranked, r);
        }
    }
  g_array_sort (ranked, ranked_cmp);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint i = 0; i < ranked->len && i < max; i++)
    g_array_append_val (out, g_array_index (ranked, Ranked, i).index);
  return out;
}

static gint
stack_bytes_cmp (gconstpointer a, gconstpointer b)
{
  const WickSnapshotStackBytes *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  return x->stack < y->stack ? -1 : x->stack > y->stack;
}

GArray *
wick_memory_snapshot_live_by_stack (WickMemorySnapshot *s, gint64 time_us)
{
  g_autoptr (GHashTable) at = g_hash_table_new (g_direct_hash, g_direct_equal);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (WickSnapshotStackBytes));
  guint n;
#define ADD(stack_, bytes_)                                                                       \
  G_STMT_START                                                                                    \
  {                                                                                               \
    gpointer key = GUINT_TO_POINTER ((stack_) == NO_INDEX ? 0u : (stack_) + 1);                   \
    gpointer index;                                                                               \
    if (!g_hash_table_lookup_extended (at, key, NULL, &index))                                    \
      {                                                                                           \
        WickSnapshotStackBytes sb = { (stack_), 0, 0 };                                           \
        index = GUINT_TO_POINTER (out->len);                                                      \
        g_array_append_val (out, sb);                                                             \
        g_hash_table_insert (at, key, index);                                                     \
      }                                                                                           \
    WickSnapshotStackBytes *sb = &g_array_index (out, WickSnapshotStackBytes, GPOINTER_TO_UINT (index)); \
    sb->bytes += (bytes_);                                                                        \
    sb->count++;                                                                                  \
  }                                                                                               \
  G_STMT_END
  if (time_us == G_MAXINT64)
    {
      const WickSnapshotBlock *blocks = wick_memory_snapshot_get_blocks (s, &n);
      for (guint i = 0; i < n; i++)
        if (blocks[i].state == WICK_BLOCK_ACTIVE_ALLOCATED)
          ADD (blocks[i].stack, blocks[i].size);
    }
  else
    {
      const WickSnapshotAllocation *a = wick_memory_snapshot_get_allocations (s, &n);
      for (guint i = 0; i < n; i++)
        if (a[i].alloc_us <= time_us && time_us < a[i].free_completed_us)
          ADD (a[i].stack, a[i].size);
    }
#undef ADD
  g_array_sort (out, stack_bytes_cmp);
  return out;
}

/* A stack as one string, frames "name (file:line)" innermost first joined
 * by "\n" ("" for no stack): what two snapshots' stacks are matched by. */
static char *
wick_memory_snapshot_stack_key (WickMemorySnapshot *s, guint32 stack)
{
  guint n;
  const guint32 *frames = wick_memory_snapshot_get_stack (s, stack, &n);
  GString *key = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = wick_memory_snapshot_format_frame (s, frames[i]);
      if (i > 0)
        g_string_append_c (key, '\n');
      g_string_append (key, text);
    }
  return g_string_free (key, FALSE);
}

static void
stack_diff_clear (gpointer p)
{
  g_free (((WickSnapshotStackDiff *)p)->key);
}

static gint
stack_diff_cmp (gconstpointer a, gconstpointer b)
{
  const WickSnapshotStackDiff *x = a, *y = b;
  guint64 dx = x->bytes_a > x->bytes_b ? x->bytes_a - x->bytes_b : x->bytes_b - x->bytes_a;
  guint64 dy = y->bytes_a > y->bytes_b ? y->bytes_a - y->bytes_b : y->bytes_b - y->bytes_a;
  if (dx != dy)
    return dx > dy ? -1 : 1;
  return strcmp (x->key, y->key);
}

GArray *
wick_memory_snapshot_diff (WickMemorySnapshot *a, WickMemorySnapshot *b)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (WickSnapshotStackDiff));
  g_array_set_clear_func (out, stack_diff_clear);
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  WickMemorySnapshot *sides[2] = { a, b };
  for (guint side = 0; side < 2; side++)
    {
      g_autoptr (GArray) live = wick_memory_snapshot_live_by_stack (sides[side], G_MAXINT64);
      for (guint i = 0; i < live->len; i++)
        {
          const WickSnapshotStackBytes *sb = &g_array_index (live, WickSnapshotStackBytes, i);
          g_autofree char *key = wick_memory_snapshot_stack_key (sides[side], sb->stack);
          gpointer index;
          if (!g_hash_table_lookup_extended (by_key, key, NULL, &index))
            {
              WickSnapshotStackDiff d = { g_strdup (key), NO_INDEX, NO_INDEX, 0, 0, 0, 0 };
              index = GUINT_TO_POINTER (out->len);
              g_array_append_val (out, d);
              g_hash_table_insert (by_key, g_array_index (out, WickSnapshotStackDiff, out->len - 1).key,
                                   index);
            }
          WickSnapshotStackDiff *d
            = &g_array_index (out, WickSnapshotStackDiff, GPOINTER_TO_UINT (index));
          if (side == 0)
            {
              d->stack_a = sb->stack;
              d->bytes_a += sb->bytes;
              d->count_a += sb->count;
            }
          else
            {
              d->stack_b = sb->stack;
              d->bytes_b += sb->bytes;
              d->count_b += sb->count;
            }
        }
    }
  g_hash_table_remove_all (by_key); /* its keys live in out, which the sort moves */
  g_array_sort (out, stack_diff_cmp);
  return out;
}
