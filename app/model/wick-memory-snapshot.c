/* wick-memory-snapshot.c — PyTorch allocator snapshots (see the header). */
#include "config.h"

#include "wick-memory-snapshot.h"

#include <string.h>

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
  guint n_devices;
  guint64 allocated_now, reserved_now;
  gboolean has_peak;
  guint64 peak;
  gint64 peak_us;
  GPtrArray *unmodelled_names;
  GArray *unmodelled_counts; /* guint64 */
};

/* State while reading: the caches that turn shared pickle values into indices. */
typedef struct
{
  WickMemorySnapshot *snapshot;
  WickPickleReader *reader;
  GHashTable *entries_by_list;  /* list id -> GArray of WickSnapshotEntry */
  GHashTable *frame_by_content; /* "name\\0file\\0line" -> frame index + 1 */
  GHashTable *stack_by_content; /* StackKey* -> stack index + 1 */
  guint64 n_segments_read;
  guint64 n_entries_read;
  guint64 n_items_seen;
  WickInput *input;
  WickSnapshotProgressFunc progress;
  gpointer progress_data;
  guint64 last_list_id; /* the entries list read_entry appended to last */
  GArray *last_list;
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

const char *
wick_trace_action_to_string (WickTraceAction action)
{
  static const char *const names[]
    = { "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
        "segment_map", "segment_unmap",  "snapshot",       "oom",           "other" };
  return action < G_N_ELEMENTS (names) ? names[action] : "other";
}

const char *
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
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: byte %" G_GUINT64_FORMAT ": %s",
               l->snapshot->name, wick_pickle_reader_get_offset (l->reader), message);
  return FALSE;
}

/* An integer field: absent is 0 (counted as unmodelled when @required), a
 * value of another type is an error naming @what and @key. */
static gboolean
value_u64 (Loader *l, const WickPickleValue *v, const char *what, const char *key,
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
typedef struct
{
  const WickPickleValue *action, *addr, *size, *stream, *time_us, *frames, *blocks, *total_size,
    *device_free;
} Keys;

static const char *const scan_names[] = { "action", "addr",   "size",       "stream",     "time_us",
                                          "frames", "blocks", "total_size", "device_free" };

static void
scan_keys (Loader *l, const WickPickleValue *dict, Keys *k)
{
  const WickPickleValue *found[G_N_ELEMENTS (scan_names)];
  G_STATIC_ASSERT (sizeof (Keys) == sizeof found);
  wick_pickle_value_lookup_cached (dict, l->keys, found);
  memcpy (k, found, sizeof found);
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

static gboolean
read_entry (Loader *l, guint64 list_id, const Keys *k, GError **error)
{
  WickSnapshotEntry e = { 0 };
  guint64 time_us;
  gsize len;
  const char *what = "device_traces entry";
  const char *action = wick_pickle_value_get_string (k->action, &len);
  if (action == NULL)
    return bad_field (l, error, "device_traces entry: \"action\" is not a str");
  e.action = parse_action (action, len);
  if (e.action == WICK_TRACE_OTHER)
    {
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
          l->last_list = g_array_new (FALSE, FALSE, sizeof (WickSnapshotEntry));
          g_hash_table_insert (l->entries_by_list, GSIZE_TO_POINTER (list_id), l->last_list);
        }
      l->last_list_id = list_id;
    }
  g_array_append_val (l->last_list, e);
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
  s->unmodelled_names = g_ptr_array_new_with_free_func (g_free);
  s->unmodelled_counts = g_array_new (FALSE, FALSE, sizeof (guint64));
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
          GArray *entries
            = id != 0 ? g_hash_table_lookup (l->entries_by_list, GSIZE_TO_POINTER (id)) : NULL;
          if (wick_pickle_value_get_length (list) > 0)
            count_unmodelled (s, "device_traces items that are not entries",
                              wick_pickle_value_get_length (list));
          if (entries == NULL)
            continue;
          for (guint i = 0; i < entries->len; i++)
            g_array_index (entries, WickSnapshotEntry, i).device_index = d;
          if (s->entries->len == 0)
            {
              /* the usual one device: take the array rather than copy it */
              g_array_unref (s->entries);
              s->entries = g_array_ref (entries);
            }
          else
            g_array_append_vals (s->entries, entries->data, entries->len);
          g_hash_table_remove (l->entries_by_list, GSIZE_TO_POINTER (id));
        }
    }
  else if (traces != NULL)
    count_unmodelled (s, "device_traces that is not a list", 1);
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, l->entries_by_list);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    count_unmodelled (s, "entries outside device_traces", ((GArray *)value)->len);
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

typedef struct
{
  gint64 time_us;
  gint64 delta;
  guint32 entry;
} Change;

static void
series_from_changes (GArray *out, guint64 start, GArray *changes, gint64 first_us)
{
  WickSnapshotPoint p = { first_us, start, NO_INDEX };
  g_array_append_val (out, p);
  guint64 total = start;
  for (guint i = 0; i < changes->len; i++)
    {
      const Change *c = &g_array_index (changes, Change, i);
      total += (guint64)c->delta;
      WickSnapshotPoint q = { c->time_us, total, c->entry };
      g_array_append_val (out, q);
    }
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

static void
add_allocation (WickMemorySnapshot *s, WickSnapshotAllocation a)
{
  g_array_append_val (s->allocations, a);
}

/* One device: its allocated and reserved changes and starts, and its allocations. */
static void
derive_device (WickMemorySnapshot *s, guint device, guint first, guint end, GArray *alloc_changes,
               guint64 *alloc_start, GArray *reserve_changes, guint64 *reserve_start)
{
  g_autoptr (GHashTable) open = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint64 start = 0;
  gint64 net_reserved = 0;

  for (guint i = first; i < end; i++)
    {
      const WickSnapshotEntry *e = &g_array_index (s->entries, WickSnapshotEntry, i);
      Change c = { e->time_us, 0, i };
      switch (e->action)
        {
          case WICK_TRACE_ALLOC:
            {
              WickSnapshotAllocation a = { e->addr,  e->size, e->time_us, G_MAXINT64, G_MAXINT64,
                                           e->stack, i,       NO_INDEX,   device };
              g_hash_table_insert (open, (gpointer)&e->addr,
                                   GUINT_TO_POINTER (s->allocations->len + 1));
              add_allocation (s, a);
              c.delta = (gint64)e->size;
              g_array_append_val (alloc_changes, c);
              break;
            }
          case WICK_TRACE_FREE_REQUESTED:
            {
              gpointer known = g_hash_table_lookup (open, &e->addr);
              if (known != NULL)
                g_array_index (s->allocations, WickSnapshotAllocation, GPOINTER_TO_UINT (known) - 1)
                  .free_requested_us
                  = e->time_us;
              break;
            }
          case WICK_TRACE_FREE_COMPLETED:
            {
              gpointer known = g_hash_table_lookup (open, &e->addr);
              if (known != NULL)
                {
                  WickSnapshotAllocation *a = &g_array_index (
                    s->allocations, WickSnapshotAllocation, GPOINTER_TO_UINT (known) - 1);
                  a->free_completed_us = e->time_us;
                  if (a->free_requested_us == G_MAXINT64)
                    a->free_requested_us = e->time_us;
                  c.delta = -(gint64)a->size;
                  g_hash_table_remove (open, &e->addr);
                }
              else
                {
                  WickSnapshotAllocation a
                    = { e->addr,  e->size,  G_MININT64, e->time_us, e->time_us,
                        e->stack, NO_INDEX, NO_INDEX,   device };
                  add_allocation (s, a);
                  start += e->size;
                  c.delta = -(gint64)e->size;
                }
              g_array_append_val (alloc_changes, c);
              break;
            }
          case WICK_TRACE_SEGMENT_ALLOC:
          case WICK_TRACE_SEGMENT_MAP:
            c.delta = (gint64)e->size;
            net_reserved += c.delta;
            g_array_append_val (reserve_changes, c);
            break;
          case WICK_TRACE_SEGMENT_FREE:
          case WICK_TRACE_SEGMENT_UNMAP:
            c.delta = -(gint64)e->size;
            net_reserved += c.delta;
            g_array_append_val (reserve_changes, c);
            break;
          default:
            break;
        }
    }

  /* Blocks live at the snapshot: the open alloc of their address, or live
   * since before the history. */
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
          gpointer known = g_hash_table_lookup (open, &b->address);
          if (known != NULL)
            {
              g_array_index (s->allocations, WickSnapshotAllocation, GPOINTER_TO_UINT (known) - 1)
                .block
                = bi;
              continue;
            }
          WickSnapshotAllocation a
            = { b->address, b->requested_size, G_MININT64, G_MAXINT64, G_MAXINT64,
                b->stack,   NO_INDEX,          bi,         device };
          add_allocation (s, a);
          start += b->requested_size;
        }
    }
  *alloc_start += start;
  *reserve_start += reserved_now - (guint64)net_reserved;
}

static void
derive (WickMemorySnapshot *s)
{
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
  guint first = 0;
  for (guint d = 0; d < n_devices; d++)
    {
      guint end = first;
      while (end < s->entries->len
             && g_array_index (s->entries, WickSnapshotEntry, end).device_index == d)
        end++;
      if (end > first)
        first_us = MIN (first_us, g_array_index (s->entries, WickSnapshotEntry, first).time_us);
      derive_device (s, d, first, end, alloc_changes, &alloc_start, reserve_changes,
                     &reserve_start);
      first = end;
    }
  if (first_us == G_MAXINT64)
    first_us = 0;
  if (n_devices > 1)
    {
      g_array_sort (alloc_changes, change_by_time);
      g_array_sort (reserve_changes, change_by_time);
    }
  series_from_changes (s->allocated, alloc_start, alloc_changes, first_us);
  series_from_changes (s->reserved, reserve_start, reserve_changes, first_us);
  s->has_peak = s->entries->len > 0;
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

static WickMemorySnapshot *
load_input (WickInput *input, const char *name, GCancellable *cancellable,
            WickSnapshotProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autoptr (WickMemorySnapshot) s = snapshot_new (name);
  g_autoptr (WickPickleReader) reader = wick_pickle_reader_new (input, name);
  Loader l = { s, reader };
  l.entries_by_list
    = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
  l.frame_by_content = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  l.stack_by_content = g_hash_table_new_full (stack_key_hash, stack_key_equal, g_free, NULL);
  l.keys = wick_pickle_key_cache_new (scan_names, G_N_ELEMENTS (scan_names));
  wick_pickle_reader_set_element_func (reader, on_item, &l);
  wick_pickle_reader_set_cancellable (reader, cancellable);
  l.input = input;
  l.progress = progress;
  l.progress_data = progress_data;

  WickPickleValue top;
  gboolean ok = wick_pickle_reader_read (reader, &top, error);
  if (ok)
    ok = finish_top (&l, &top, error);
  wick_pickle_value_clear (&top);
  g_hash_table_unref (l.entries_by_list);
  g_hash_table_unref (l.frame_by_content);
  g_hash_table_unref (l.stack_by_content);
  wick_pickle_key_cache_free (l.keys);
  if (!ok)
    return NULL;
  wick_string_pool_compact (s->strings);
  derive (s);
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
  return load_input (input, path, cancellable, progress, progress_data, error);
}

WickMemorySnapshot *
wick_memory_snapshot_load_data (const void *data, gsize len, const char *name, GError **error)
{
  g_autoptr (WickInput) input = wick_input_new_for_data (data, len, name);
  return load_input (input, name, NULL, NULL, NULL, error);
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

guint
wick_memory_snapshot_get_n_stacks (WickMemorySnapshot *s)
{
  return s->stack_start->len - 1;
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
