/* wick-pickle.c — the data-only pickle reader (the contract is in the header). */
#include "config.h"

#include "wick-pickle.h"
#include "wick-pickle-private.h"

#include "wick-document-error.h"

#include <errno.h>
#include <string.h>

/* Internal value kinds, beyond WickPickleType: a memo slot never set, and one
 * whose item the element callback took. */
#define VALUE_UNSET 100
#define VALUE_RELEASED 101

#define BUFFER_SIZE (1024 * 1024)
#define MEMO_GAP_MAX (1u << 20) /* a PUT may skip at most this many slots */
#define CANCEL_CHECK_BYTES (64 * 1024)
#define FREE_OBJECTS_MAX 2048
#define MEMO_PAGE_BITS 12
#define MEMO_PAGE_SLOTS (1u << MEMO_PAGE_BITS)
#define SPARE_ITEMS_MAX 64 /* a kept container's item array is at most this long */
#define KEY_CACHE_MAX 16
/* Records (fast_records): a batch begun with fewer bytes than this left in
 * the buffer first moves them to its front and reads more; at most this many
 * items and pairs an item, else the batch is read the ordinary way. */
#define REFILL_AHEAD (128 * 1024)
#define RECORDS_MAX 2048
#define RECORD_PAIRS_MAX 32
#define RECORD_MASKS_MAX 4

/* A PUT inside a batch of records, made when the batch is: @value is the
 * PUT's value, or of type VALUE_RELEASED for the item's own dict. */
typedef struct
{
  guint64 key;
  WickPickleValue value;
} RecordPut;

struct _WickPickleObject
{
  guint32 refs;
  guint8 type;
  guint8 sealed;    /* inside another container: may not change any more */
  guint16 depth;    /* nesting height: 0 for str/bytes, 1 for an empty container */
  guint32 key_tag;  /* str: which WickPickleKeyCache key it is (see there) */
  guint32 user_tag; /* the caller's mark (wick_pickle_value_set_tag) */
  gint64 memo_slot; /* the last memo slot that holds it, or -1 */
  guint64 list_id;
  guint64 taken; /* items the element callback took (lists) */
  gsize len;     /* bytes (str/bytes) or values (containers: 2 per dict pair) */
  gsize capacity;
  WickPickleValue *items;
  char data[]; /* str/bytes payload, NUL-terminated */
};

typedef struct
{
  WickPickleValue *slots; /* NULL: no slot holds a value (see released) */
  guint64 *released;      /* while slots is NULL: a bit per RELEASED slot, or NULL for none */
  guint n_values;         /* slots holding a value */
} MemoPage;

struct _WickPickleReader
{
  WickInput *input;
  char *name;
  WickPickleLimits limits;
  WickPickleElementFunc element_func;
  gpointer element_data;
  GCancellable *cancellable;

  guint8 *buffer;
  gsize pos, len;
  guint64 base; /* decoded offset of buffer[0] */
  guint64 next_cancel_check;
  gboolean eof;

  struct
  {
    WickPickleValue *values;
    guint len, capacity;
  } stack;            /* a plain array: push is the hottest path */
  struct
  {
    guint *at; /* stack length at each MARK */
    guint len, capacity;
  } marks;
  /* The memo: memo_len slots (what PUT's bounds are measured against), in
   * pages of MEMO_PAGE_SLOTS. A snapshot memoizes every history entry and
   * the reader takes them all, so most slots end up VALUE_RELEASED: a page
   * where no slot holds a value any more and that MEMOIZE has passed keeps
   * only a bitmap of its released slots (512 bytes for 64 KiB). */
  MemoPage *memo_pages;
  guint memo_len, n_memo_pages;
  guint64 memo_count; /* set slots: MEMOIZE's next key, as len(memo) in Python */
  guint64 kept_items;
  guint64 next_list_id;
  guint64 op_offset; /* offset of the opcode being run, for errors */
  guint8 op;
  /* Containers the element callback took, kept for reuse with their item
   * arrays: a snapshot makes and drops one dict per history entry. */
  WickPickleObject *spare[FREE_OBJECTS_MAX];
  guint n_spare;

  /* Records (wick_pickle_reader_set_record_func, fast_records) */
  WickPickleRecordFunc record_func;
  gpointer record_data;
  WickPickleKeyCache *record_keys;
  guint32 record_masks[RECORD_MASKS_MAX];
  guint n_record_masks;
  WickPickleValue *record_values; /* n keys per item of the batch */
  const WickPickleValue **record_found; /* n keys per item: into record_values, or NULL */
  RecordPut *record_puts;
  gsize n_record_puts_max;
  WickPickleObject **record_made; /* strs the batch made, its references */
  guint rec_put_kind; /* 1: MEMOIZE, 2: BINPUT/LONG_BINPUT (a batch uses one kind) */
  guint64 rec_last_put, rec_memo_count;
  gsize rec_n_puts;
  gsize n_record_made_max;
  /* A read error of refill_ahead, given when the bytes past it are needed
   * (where the ordinary read would have met it). */
  GError *pending_error;
};

static const char *const opcode_names[256] = {
  ['('] = "MARK",
  ['.'] = "STOP",
  ['0'] = "POP",
  ['1'] = "POP_MARK",
  ['2'] = "DUP",
  ['F'] = "FLOAT",
  ['I'] = "INT",
  ['J'] = "BININT",
  ['K'] = "BININT1",
  ['L'] = "LONG",
  ['M'] = "BININT2",
  ['N'] = "NONE",
  ['P'] = "PERSID",
  ['Q'] = "BINPERSID",
  ['R'] = "REDUCE",
  ['S'] = "STRING",
  ['T'] = "BINSTRING",
  ['U'] = "SHORT_BINSTRING",
  ['V'] = "UNICODE",
  ['X'] = "BINUNICODE",
  ['a'] = "APPEND",
  ['b'] = "BUILD",
  ['c'] = "GLOBAL",
  ['d'] = "DICT",
  ['}'] = "EMPTY_DICT",
  ['e'] = "APPENDS",
  ['g'] = "GET",
  ['h'] = "BINGET",
  ['i'] = "INST",
  ['j'] = "LONG_BINGET",
  ['l'] = "LIST",
  [']'] = "EMPTY_LIST",
  ['o'] = "OBJ",
  ['p'] = "PUT",
  ['q'] = "BINPUT",
  ['r'] = "LONG_BINPUT",
  ['s'] = "SETITEM",
  ['t'] = "TUPLE",
  [')'] = "EMPTY_TUPLE",
  ['u'] = "SETITEMS",
  ['G'] = "BINFLOAT",
  [0x80] = "PROTO",
  [0x81] = "NEWOBJ",
  [0x82] = "EXT1",
  [0x83] = "EXT2",
  [0x84] = "EXT4",
  [0x85] = "TUPLE1",
  [0x86] = "TUPLE2",
  [0x87] = "TUPLE3",
  [0x88] = "NEWTRUE",
  [0x89] = "NEWFALSE",
  [0x8a] = "LONG1",
  [0x8b] = "LONG4",
  ['B'] = "BINBYTES",
  ['C'] = "SHORT_BINBYTES",
  [0x8c] = "SHORT_BINUNICODE",
  [0x8d] = "BINUNICODE8",
  [0x8e] = "BINBYTES8",
  [0x8f] = "EMPTY_SET",
  [0x90] = "ADDITEMS",
  [0x91] = "FROZENSET",
  [0x92] = "NEWOBJ_EX",
  [0x93] = "STACK_GLOBAL",
  [0x94] = "MEMOIZE",
  [0x95] = "FRAME",
  [0x96] = "BYTEARRAY8",
  [0x97] = "NEXT_BUFFER",
  [0x98] = "READONLY_BUFFER",
};

void
wick_pickle_limits_init (WickPickleLimits *limits)
{
  limits->max_string = (gsize)64 << 20;
  limits->max_stack = (guint64)4 << 20;
  limits->max_marks = 64 << 10;
  limits->max_memo = (guint64)256 << 20;
  limits->max_depth = 200;
  limits->max_kept_items = (guint64)256 << 20;
}

/* Values */

static inline gboolean
is_object_type (guint32 type)
{
  return type >= WICK_PICKLE_STR && type <= WICK_PICKLE_DICT;
}

static inline gboolean
is_container_type (guint32 type)
{
  return type >= WICK_PICKLE_LIST && type <= WICK_PICKLE_DICT;
}

static void object_free (WickPickleObject *object);

/* Inline: every GET's value is dropped again by the container it went into,
 * and most of those are memoized strings that stay alive. */
static inline void
object_unref (WickPickleObject *object)
{
  g_assert (object->refs > 0);
  if (G_LIKELY (--object->refs > 0))
    return;
  object_free (object);
}

static G_NO_INLINE void
object_free (WickPickleObject *object)
{
  /* Recursion is bounded: depth never exceeds limits.max_depth. */
  for (gsize i = 0; i < object->len && object->items != NULL; i++)
    if (is_object_type (object->items[i].type))
      object_unref (object->items[i].as.object);
  g_free (object->items);
  g_free (object);
}

/* The reader's own copies of ref and clear: the public functions are global
 * symbols, which a -fPIC build may not inline, and these run per value. */
static inline void
value_ref (WickPickleValue *dest, const WickPickleValue *src)
{
  *dest = *src;
  if (is_object_type (src->type))
    src->as.object->refs++;
}

static inline void
value_clear (WickPickleValue *value)
{
  if (is_object_type (value->type))
    object_unref (value->as.object);
  value->type = WICK_PICKLE_NONE;
  value->as.i = 0;
}

void
wick_pickle_value_clear (WickPickleValue *value)
{
  if (value == NULL)
    return;
  value_clear (value);
}

static WickPickleValue
object_value (WickPickleObject *object)
{
  WickPickleValue v = { .type = object->type };
  v.as.object = object;
  return v;
}

static WickPickleObject *
object_new (guint8 type, gsize payload)
{
  WickPickleObject *object = g_malloc (sizeof (WickPickleObject) + payload + 1);
  memset (object, 0, sizeof (WickPickleObject));
  object->refs = 1;
  object->type = type;
  object->memo_slot = -1;
  object->depth = is_container_type (type) ? 1 : 0;
  object->data[payload] = '\0';
  return object;
}

gboolean
wick_pickle_value_get_int (const WickPickleValue *value, gint64 *out)
{
  if (value == NULL || (value->type != WICK_PICKLE_INT && value->type != WICK_PICKLE_BOOL))
    return FALSE;
  *out = value->as.i;
  return TRUE;
}

gboolean
wick_pickle_value_get_uint64 (const WickPickleValue *value, guint64 *out)
{
  if (value == NULL)
    return FALSE;
  if (value->type == WICK_PICKLE_INT && value->as.i >= 0)
    *out = (guint64)value->as.i;
  else if (value->type == WICK_PICKLE_UINT)
    *out = value->as.u;
  else
    return FALSE;
  return TRUE;
}

const char *
wick_pickle_value_get_string (const WickPickleValue *value, gsize *len)
{
  if (value == NULL || (value->type != WICK_PICKLE_STR && value->type != WICK_PICKLE_BYTES))
    return NULL;
  if (len != NULL)
    *len = value->as.object->len;
  return value->as.object->data;
}

gsize
wick_pickle_value_get_length (const WickPickleValue *value)
{
  if (value == NULL || !is_container_type (value->type))
    return 0;
  return value->type == WICK_PICKLE_DICT ? value->as.object->len / 2 : value->as.object->len;
}

const WickPickleValue *
wick_pickle_value_get_item (const WickPickleValue *value, gsize i)
{
  if (value == NULL || (value->type != WICK_PICKLE_LIST && value->type != WICK_PICKLE_TUPLE)
      || i >= value->as.object->len)
    return NULL;
  return &value->as.object->items[i];
}

gboolean
wick_pickle_value_get_pair (const WickPickleValue *value, gsize i, const WickPickleValue **key,
                            const WickPickleValue **item)
{
  if (value == NULL || value->type != WICK_PICKLE_DICT || i >= value->as.object->len / 2)
    return FALSE;
  *key = &value->as.object->items[2 * i];
  *item = &value->as.object->items[2 * i + 1];
  return TRUE;
}

const WickPickleValue *
wick_pickle_value_lookup (const WickPickleValue *value, const char *key)
{
  if (value == NULL || value->type != WICK_PICKLE_DICT)
    return NULL;
  gsize key_len = strlen (key);
  const WickPickleObject *dict = value->as.object;
  for (gsize i = dict->len; i >= 2; i -= 2)
    {
      const WickPickleValue *k = &dict->items[i - 2];
      if (k->type == WICK_PICKLE_STR && k->as.object->len == key_len
          && memcmp (k->as.object->data, key, key_len) == 0)
        return &dict->items[i - 1];
    }
  return NULL;
}

#define KEY_TAG_BITS 5 /* key index + 1, or KEY_TAG_NONE */
#define KEY_TAG_NONE 31

/* A str object, once compared with a cache's keys, carries the answer in
 * key_tag: the cache's serial number above KEY_TAG_BITS, below them the key's
 * index + 1 or KEY_TAG_NONE. The next dict that has the same (memoized) key
 * object is answered without comparing text, and no pointer is kept that
 * could outlive the object. */
struct _WickPickleKeyCache
{
  guint n;
  guint32 serial;
  const char *keys[KEY_CACHE_MAX];
  gsize lengths[KEY_CACHE_MAX];
};

WickPickleKeyCache *
wick_pickle_key_cache_new (const char *const *keys, guint n)
{
  static gint next_serial = 0;
  g_return_val_if_fail (n <= KEY_CACHE_MAX, NULL);
  WickPickleKeyCache *cache = g_new0 (WickPickleKeyCache, 1);
  cache->n = n;
  /* 1 to 2^27 - 1, round and round; a reuse needs 2^27 caches alive at once
   * with the same objects to be confused, which a reader never has. */
  cache->serial = ((guint32)g_atomic_int_add (&next_serial, 1) % ((1u << 27) - 1)) + 1;
  for (guint k = 0; k < n; k++)
    {
      cache->keys[k] = keys[k];
      cache->lengths[k] = strlen (keys[k]);
    }
  return cache;
}

void
wick_pickle_key_cache_free (WickPickleKeyCache *cache)
{
  g_free (cache);
}

/* @text's key in @cache: its index + 1, or KEY_TAG_NONE; remembered in its key_tag. */
static inline guint
key_cache_index (const WickPickleKeyCache *cache, WickPickleObject *text)
{
  guint32 mine = cache->serial << KEY_TAG_BITS;
  guint32 tag = text->key_tag;
  if (G_UNLIKELY ((tag & ~(guint32)KEY_TAG_NONE) != mine))
    {
      tag = mine | KEY_TAG_NONE;
      for (guint k = 0; k < cache->n; k++)
        if (text->len == cache->lengths[k] && memcmp (text->data, cache->keys[k], text->len) == 0)
          {
            tag = mine | (k + 1);
            break;
          }
      text->key_tag = tag;
    }
  return tag & KEY_TAG_NONE;
}

void
wick_pickle_value_lookup_cached (const WickPickleValue *value, WickPickleKeyCache *cache,
                                 const WickPickleValue **out)
{
  guint n = cache->n;
  for (guint k = 0; k < n; k++)
    out[k] = NULL;
  if (value == NULL || value->type != WICK_PICKLE_DICT)
    return;
  const WickPickleObject *dict = value->as.object;
  if (dict->len < 2)
    return; /* an empty dict may have no items array (NULL + 0 is undefined) */
  const WickPickleValue *key = dict->items, *end = dict->items + (dict->len & ~(gsize)1);
  for (; key < end; key += 2)
    {
      if (key->type != WICK_PICKLE_STR)
        continue;
      guint k = key_cache_index (cache, key->as.object);
      if (k != KEY_TAG_NONE)
        out[k - 1] = key + 1; /* the last one when repeated */
    }
}

guint32
wick_pickle_value_get_tag (const WickPickleValue *value)
{
  return value != NULL && is_object_type (value->type) ? value->as.object->user_tag : 0;
}

void
wick_pickle_value_set_tag (const WickPickleValue *value, guint32 tag)
{
  if (value != NULL && is_object_type (value->type))
    value->as.object->user_tag = tag;
}

guint64
wick_pickle_value_get_list_id (const WickPickleValue *value)
{
  return value != NULL && value->type == WICK_PICKLE_LIST ? value->as.object->list_id : 0;
}

const char *
wick_pickle_type_to_string (guint32 type)
{
  static const char *const names[]
    = { "None", "bool", "int", "int", "int", "float", "str", "bytes", "list", "tuple", "dict" };
  return type < G_N_ELEMENTS (names) ? names[type] : "?";
}

/* The reader */

WickPickleReader *
wick_pickle_reader_new (WickInput *input, const char *name)
{
  WickPickleReader *reader = g_new0 (WickPickleReader, 1);
  reader->input = input;
  reader->name = g_strdup (name != NULL ? name : "pickle");
  wick_pickle_limits_init (&reader->limits);
  reader->buffer = g_malloc (BUFFER_SIZE);
  reader->next_cancel_check = CANCEL_CHECK_BYTES;
  return reader;
}

static void
memo_free (WickPickleReader *reader)
{
  for (guint p = 0; p < reader->n_memo_pages; p++)
    {
      MemoPage *page = &reader->memo_pages[p];
      if (page->slots != NULL)
        for (guint i = 0; i < MEMO_PAGE_SLOTS && page->n_values > 0; i++)
          if (page->slots[i].type <= WICK_PICKLE_DICT)
            {
              if (is_object_type (page->slots[i].type))
                object_unref (page->slots[i].as.object);
              page->n_values--;
            }
      g_free (page->slots);
      g_free (page->released);
    }
  g_free (reader->memo_pages);
}

void
wick_pickle_reader_free (WickPickleReader *reader)
{
  if (reader == NULL)
    return;
  for (guint i = 0; i < reader->stack.len; i++)
    if (is_object_type (reader->stack.values[i].type))
      object_unref (reader->stack.values[i].as.object);
  g_free (reader->stack.values);
  for (guint i = 0; i < reader->n_spare; i++)
    {
      g_free (reader->spare[i]->items);
      g_free (reader->spare[i]);
    }
  memo_free (reader);
  g_free (reader->record_values);
  g_free (reader->record_found);
  g_free (reader->record_puts);
  g_free (reader->record_made);
  g_clear_error (&reader->pending_error);
  g_free (reader->marks.at);
  g_clear_object (&reader->cancellable);
  g_free (reader->buffer);
  g_free (reader->name);
  g_free (reader);
}

void
wick_pickle_reader_set_limits (WickPickleReader *reader, const WickPickleLimits *limits)
{
  reader->limits = *limits;
  /* Freeing recurses once per level; depth is kept in 16 bits. */
  reader->limits.max_depth = MIN (limits->max_depth, 1000u);
}

void
wick_pickle_reader_set_element_func (WickPickleReader *reader, WickPickleElementFunc func,
                                     gpointer user_data)
{
  reader->element_func = func;
  reader->element_data = user_data;
}

void
wick_pickle_reader_set_record_func (WickPickleReader *reader, WickPickleKeyCache *keys,
                                    const guint32 *masks, guint n_masks,
                                    WickPickleRecordFunc func, gpointer user_data)
{
  g_return_if_fail (n_masks <= RECORD_MASKS_MAX && (func == NULL || (keys != NULL && n_masks > 0)));
  reader->record_func = func;
  reader->record_data = user_data;
  reader->record_keys = keys;
  reader->n_record_masks = n_masks;
  for (guint i = 0; i < n_masks; i++)
    reader->record_masks[i] = masks[i];
}

void
wick_pickle_reader_set_cancellable (WickPickleReader *reader, GCancellable *cancellable)
{
  g_set_object (&reader->cancellable, cancellable);
}

guint64
wick_pickle_reader_get_offset (WickPickleReader *reader)
{
  return reader->base + reader->pos;
}

static const char *
op_name (guint8 op)
{
  return opcode_names[op] != NULL ? opcode_names[op] : "not an opcode";
}

static gboolean G_GNUC_PRINTF (4, 0) fail_valist (WickPickleReader *reader, WickDocumentError code,
                                                  GError **error, const char *format, va_list args)
{
  g_autofree char *message = g_strdup_vprintf (format, args);
  g_set_error (error, WICK_DOCUMENT_ERROR, (int)code,
               "%s: byte %" G_GUINT64_FORMAT ": opcode %s (0x%02x): %s", reader->name,
               reader->op_offset, op_name (reader->op), reader->op, message);
  return FALSE;
}

/* The pickle breaks the format (WICK_DOCUMENT_ERROR_INVALID). */
static gboolean G_GNUC_PRINTF (3, 4)
  fail (WickPickleReader *reader, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  fail_valist (reader, WICK_DOCUMENT_ERROR_INVALID, error, format, args);
  va_end (args);
  return FALSE;
}

/* The pickle passes one of the reader's limits (WICK_DOCUMENT_ERROR_TOO_LARGE). */
static gboolean G_GNUC_PRINTF (3, 4)
  fail_too_large (WickPickleReader *reader, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  fail_valist (reader, WICK_DOCUMENT_ERROR_TOO_LARGE, error, format, args);
  va_end (args);
  return FALSE;
}

/* The input ends inside the pickle (WICK_DOCUMENT_ERROR_TRUNCATED). */
static gboolean G_GNUC_PRINTF (3, 4)
  fail_cut (WickPickleReader *reader, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  fail_valist (reader, WICK_DOCUMENT_ERROR_TRUNCATED, error, format, args);
  va_end (args);
  return FALSE;
}

/* Makes @n (≤ BUFFER_SIZE) bytes available at buffer + pos. */
static gboolean need_slow (WickPickleReader *reader, gsize n, GError **error);

static inline gboolean
need (WickPickleReader *reader, gsize n, GError **error)
{
  if (G_LIKELY (reader->len - reader->pos >= n))
    return TRUE;
  return need_slow (reader, n, error);
}

static G_NO_INLINE gboolean
need_slow (WickPickleReader *reader, gsize n, GError **error)
{
  if (reader->pos > 0)
    {
      memmove (reader->buffer, reader->buffer + reader->pos, reader->len - reader->pos);
      reader->base += reader->pos;
      reader->len -= reader->pos;
      reader->pos = 0;
    }
  while (reader->len < n && !reader->eof)
    {
      if (G_UNLIKELY (reader->pending_error != NULL))
        {
          g_propagate_error (error, g_steal_pointer (&reader->pending_error));
          return FALSE;
        }
      gssize got = wick_input_read (reader->input, reader->buffer + reader->len,
                                    BUFFER_SIZE - reader->len, error);
      if (got < 0)
        return FALSE;
      if (got == 0)
        reader->eof = TRUE;
      reader->len += (gsize)got;
    }
  if (reader->len < n)
    return fail_cut (reader, error,
                     "the pickle ends inside it (%" G_GSIZE_FORMAT
                     " more bytes needed at byte %" G_GUINT64_FORMAT ")",
                     n - reader->len, reader->base + reader->len);
  return TRUE;
}

/* Moves what is left to the buffer's front and reads until it is full, the
 * input ends or fails; a failure is kept in pending_error for need_slow,
 * which gives it when the bytes are needed, as its own read would have. */
static void
refill_ahead (WickPickleReader *reader)
{
  if (reader->eof || reader->pending_error != NULL || reader->len - reader->pos == BUFFER_SIZE)
    return;
  if (reader->pos > 0)
    {
      memmove (reader->buffer, reader->buffer + reader->pos, reader->len - reader->pos);
      reader->base += reader->pos;
      reader->len -= reader->pos;
      reader->pos = 0;
    }
  while (reader->len < BUFFER_SIZE && !reader->eof)
    {
      gssize got = wick_input_read (reader->input, reader->buffer + reader->len,
                                    BUFFER_SIZE - reader->len, &reader->pending_error);
      if (got < 0)
        return;
      if (got == 0)
        reader->eof = TRUE;
      reader->len += (gsize)got;
    }
}

/* Copies @n bytes into @dest, any length. */
static gboolean
read_into (WickPickleReader *reader, char *dest, gsize n, GError **error)
{
  while (n > 0)
    {
      gsize chunk = MIN (n, (gsize)BUFFER_SIZE);
      if (!need (reader, chunk, error))
        return FALSE;
      memcpy (dest, reader->buffer + reader->pos, chunk);
      reader->pos += chunk;
      dest += chunk;
      n -= chunk;
    }
  return TRUE;
}

static inline guint64
read_le (const guint8 *p, guint n)
{
  guint16 v16;
  guint32 v32;
  guint64 v64;
  switch (n)
    {
      case 2:
        memcpy (&v16, p, 2);
        return GUINT16_FROM_LE (v16);
      case 4:
        memcpy (&v32, p, 4);
        return GUINT32_FROM_LE (v32);
      case 8:
        memcpy (&v64, p, 8);
        return GUINT64_FROM_LE (v64);
      default:
        break;
    }
  guint64 v = 0;
  for (guint i = 0; i < n; i++)
    v |= (guint64)p[i] << (8 * i);
  return v;
}

/* Reads an @n-byte little-endian length (n = 1, 4 or 8; 4-byte ones are
 * signed in BINSTRING and LONG4, so @is_signed refuses negatives). */
static gboolean
read_length (WickPickleReader *reader, guint n, gboolean is_signed, guint64 *out, GError **error)
{
  if (!need (reader, n, error))
    return FALSE;
  guint64 v = read_le (reader->buffer + reader->pos, n);
  reader->pos += n;
  if (is_signed && n == 4 && (v & 0x80000000u))
    return fail (reader, error, "negative length %" G_GINT64_FORMAT, (gint64)(gint32)(guint32)v);
  if (v > reader->limits.max_string)
    return fail_too_large (
      reader, error, "length %" G_GUINT64_FORMAT " is over the limit of %" G_GSIZE_FORMAT " bytes",
      v, reader->limits.max_string);
  *out = v;
  return TRUE;
}

static gboolean push_slow (WickPickleReader *reader, WickPickleValue value, GError **error);

static inline gboolean
push (WickPickleReader *reader, WickPickleValue value, GError **error)
{
  if (G_LIKELY (reader->stack.len < reader->stack.capacity
                && reader->stack.len < reader->limits.max_stack))
    {
      reader->stack.values[reader->stack.len++] = value;
      return TRUE;
    }
  return push_slow (reader, value, error);
}

static G_NO_INLINE gboolean
push_slow (WickPickleReader *reader, WickPickleValue value, GError **error)
{
  if (reader->stack.len >= reader->limits.max_stack)
    {
      WickPickleValue copy = value;
      value_clear (&copy);
      return fail_too_large (reader, error,
                             "the stack is over the limit of %" G_GUINT64_FORMAT " values",
                             reader->limits.max_stack);
    }
  if (reader->stack.len == reader->stack.capacity)
    {
      reader->stack.capacity = MAX (64, reader->stack.capacity * 2);
      reader->stack.values
        = g_renew (WickPickleValue, reader->stack.values, reader->stack.capacity);
    }
  reader->stack.values[reader->stack.len++] = value;
  return TRUE;
}

static WickPickleValue *
stack_top (WickPickleReader *reader, guint from_top)
{
  return &reader->stack.values[reader->stack.len - 1 - from_top];
}

/* The stack length at the last MARK (which it pops), or FALSE. */
static gboolean
pop_mark (WickPickleReader *reader, guint *at, GError **error)
{
  if (reader->marks.len == 0)
    return fail (reader, error, "no MARK before it");
  *at = reader->marks.at[--reader->marks.len];
  /* POP can take values from below a mark in Python; so may a hostile file. */
  if (*at > reader->stack.len)
    return fail (reader, error, "its MARK was popped");
  return TRUE;
}

static gboolean
needs_stack (WickPickleReader *reader, guint n, GError **error)
{
  guint floor
    = reader->marks.len > 0 ? reader->marks.at[reader->marks.len - 1] : 0;
  if (reader->stack.len < floor + n)
    return fail (reader, error, "needs %u value%s on the stack above the last MARK", n,
                 n == 1 ? "" : "s");
  return TRUE;
}

static gboolean
object_reserve (WickPickleReader *reader, WickPickleObject *object, gsize extra, GError **error)
{
  if (reader->kept_items + extra > reader->limits.max_kept_items)
    return fail_too_large (
      reader, error, "containers would hold more than the limit of %" G_GUINT64_FORMAT " items",
      reader->limits.max_kept_items);
  if (object->len + extra > object->capacity)
    {
      gsize capacity = MAX (object->capacity * 2, object->len + extra);
      capacity = MAX (capacity, 4);
      object->items = g_renew (WickPickleValue, object->items, capacity);
      object->capacity = capacity;
    }
  return TRUE;
}

/* Puts @value (owned) at the end of @object's items. */
static gboolean
object_add (WickPickleReader *reader, WickPickleObject *object, WickPickleValue value,
            GError **error)
{
  if (is_container_type (value.type))
    {
      WickPickleObject *child = value.as.object;
      if (child == object)
        {
          value_clear (&value);
          return fail (reader, error, "a container would hold itself (recursive data is refused)");
        }
      if ((guint)child->depth + 1 > reader->limits.max_depth)
        {
          value_clear (&value);
          return fail_too_large (reader, error, "containers nest deeper than the limit of %u",
                                 reader->limits.max_depth);
        }
      child->sealed = 1;
      object->depth = MAX (object->depth, child->depth + 1);
    }
  if (!object_reserve (reader, object, 1, error))
    {
      value_clear (&value);
      return FALSE;
    }
  object->items[object->len++] = value;
  reader->kept_items++;
  return TRUE;
}

static gboolean
check_mutable (WickPickleReader *reader, const WickPickleValue *target, guint32 type,
               GError **error)
{
  if (target->type != type)
    return fail (reader, error, "its target is a %s, not a %s",
                 wick_pickle_type_to_string (target->type), wick_pickle_type_to_string (type));
  if (target->as.object->sealed)
    return fail (reader, error,
                 "its target is already inside another container (recursive data is refused)");
  return TRUE;
}

/* The items held by @object and what only it holds, which go when it goes. */
static guint64
count_owned_items (const WickPickleObject *object)
{
  if (object->refs > 1 || !is_container_type (object->type))
    return 0;
  guint64 n = object->len;
  for (gsize i = 0; i < object->len; i++)
    if (is_container_type (object->items[i].type))
      n += count_owned_items (object->items[i].as.object);
  return n;
}

/* A slot's state without its page's slots: VALUE_RELEASED or VALUE_UNSET. */
static guint32
memo_page_bit_state (const MemoPage *page, guint i)
{
  return page->released != NULL && (page->released[i / 64] >> (i % 64) & 1) ? VALUE_RELEASED
                                                                            : VALUE_UNSET;
}

/* The page's slots, made again from its bitmap when it had been folded. */
static WickPickleValue *
memo_page_slots (MemoPage *page)
{
  if (page->slots != NULL)
    return page->slots;
  page->slots = g_new (WickPickleValue, MEMO_PAGE_SLOTS);
  for (guint i = 0; i < MEMO_PAGE_SLOTS; i++)
    {
      page->slots[i].type = memo_page_bit_state (page, i);
      page->slots[i].as.i = 0;
    }
  g_clear_pointer (&page->released, g_free);
  return page->slots;
}

/* Folds page @p into its bitmap once no slot holds a value and MEMOIZE's
 * next key is past it (Python's pickler memoizes in order, so nothing more
 * comes to it). */
static void
memo_page_fold (WickPickleReader *reader, guint64 p)
{
  MemoPage *page = &reader->memo_pages[p];
  if (page->n_values > 0 || page->slots == NULL || (p + 1) * MEMO_PAGE_SLOTS > reader->memo_count)
    return;
  guint64 *bits = g_new0 (guint64, MEMO_PAGE_SLOTS / 64);
  gboolean any = FALSE;
  for (guint i = 0; i < MEMO_PAGE_SLOTS; i++)
    if (page->slots[i].type == VALUE_RELEASED)
      {
        bits[i / 64] |= (guint64)1 << (i % 64);
        any = TRUE;
      }
  g_clear_pointer (&page->slots, g_free);
  if (any)
    page->released = bits;
  else
    g_free (bits);
}

/* Forgets a taken item in the memo, so that it can be freed. */
static void
release_memo (WickPickleReader *reader, WickPickleValue *value)
{
  if (!is_object_type (value->type) || value->as.object->memo_slot < 0)
    return;
  guint64 key = (guint64)value->as.object->memo_slot;
  MemoPage *page = &reader->memo_pages[key >> MEMO_PAGE_BITS];
  if (page->slots == NULL)
    return;
  WickPickleValue *slot = &page->slots[key & (MEMO_PAGE_SLOTS - 1)];
  if (is_object_type (slot->type) && slot->as.object == value->as.object)
    {
      object_unref (slot->as.object);
      slot->type = VALUE_RELEASED;
      page->n_values--;
      memo_page_fold (reader, key >> MEMO_PAGE_BITS);
    }
}

/* Appends @value (owned) to the list @list, offering it to the callback first. */
static gboolean
list_append (WickPickleReader *reader, WickPickleObject *list, WickPickleValue value,
             GError **error)
{
  if (reader->element_func != NULL)
    {
      GError *local = NULL;
      WickPickleVerdict verdict = reader->element_func (list->list_id, list->len + list->taken,
                                                        &value, reader->element_data, &local);
      if (verdict == WICK_PICKLE_FAILED)
        {
          value_clear (&value);
          if (local == NULL)
            return fail (reader, error, "the reader's callback failed without a reason");
          g_propagate_error (error, local);
          return FALSE;
        }
      if (G_UNLIKELY (local != NULL))
        g_clear_error (&local);
      if (verdict == WICK_PICKLE_TAKEN)
        {
          list->taken++;
          release_memo (reader, &value);
          if (is_container_type (value.type))
            {
              WickPickleObject *object = value.as.object;
              if (object->refs == 1 && reader->n_spare < FREE_OBJECTS_MAX
                  && object->capacity <= SPARE_ITEMS_MAX)
                {
                  /* count_owned_items and the unref in one pass */
                  guint64 owned = object->len;
                  WickPickleValue *items = object->items;
                  for (gsize i = 0, len = object->len; i < len; i++)
                    if (is_object_type (items[i].type))
                      {
                        WickPickleObject *child = items[i].as.object;
                        if (child->refs == 1 && is_container_type (items[i].type))
                          owned += count_owned_items (child);
                        object_unref (child);
                      }
                  reader->kept_items -= MIN (reader->kept_items, owned);
                  object->len = 0;
                  reader->spare[reader->n_spare++] = object;
                  return TRUE;
                }
              reader->kept_items -= MIN (reader->kept_items, count_owned_items (object));
            }
          value_clear (&value);
          return TRUE;
        }
    }
  return object_add (reader, list, value, error);
}

static WickPickleObject *
new_container (WickPickleReader *reader, guint8 type)
{
  WickPickleObject *object;
  if (reader->n_spare > 0)
    {
      object = reader->spare[--reader->n_spare];
      object->refs = 1;
      object->type = type;
      object->sealed = 0;
      object->depth = 1;
      object->key_tag = 0;
      object->user_tag = 0;
      object->memo_slot = -1;
      object->list_id = 0;
      object->taken = 0;
      object->len = 0; /* items and capacity are kept */
    }
  else
    object = object_new (type, 0);
  if (type == WICK_PICKLE_LIST)
    object->list_id = ++reader->next_list_id;
  return object;
}

/* Moves the stack's values from @at to the top into @object (tuples, sets,
 * LIST, DICT); lists go through list_append. */
static gboolean
fill_from_stack (WickPickleReader *reader, WickPickleObject *object, guint at, gboolean offer,
                 GError **error)
{
  gboolean ok = TRUE;
  guint n = reader->stack.len - at;
  /* One allocation for the batch (offered items may be taken, so this can be
   * more than needed, never less). */
  if (object->len + n > object->capacity)
    {
      object->capacity = object->len + n;
      object->items = g_renew (WickPickleValue, object->items, object->capacity);
    }
  if (!offer && reader->kept_items + n <= reader->limits.max_kept_items)
    {
      /* The common case in one pass: what object_add checks per item, with
       * the bound on kept items checked once for the batch. */
      WickPickleValue *from = &reader->stack.values[at];
      guint max_depth = reader->limits.max_depth;
      guint depth = object->depth;
      for (guint i = 0; i < n; i++)
        if (is_container_type (from[i].type))
          {
            WickPickleObject *child = from[i].as.object;
            if (G_UNLIKELY (child == object))
              ok = fail (reader, error, "a container would hold itself (recursive data is refused)");
            else if (G_UNLIKELY ((guint)child->depth + 1 > max_depth))
              ok = fail (reader, error, "containers nest deeper than the limit of %u", max_depth);
            if (!ok)
              {
                /* (children before it were marked sealed: the read ends here) */
                for (guint j = 0; j < n; j++)
                  value_clear (&from[j]);
                reader->stack.len = at;
                return FALSE;
              }
            child->sealed = 1;
            depth = MAX (depth, (guint)child->depth + 1);
          }
      object->depth = (guint16)depth;
      if (n > 0) /* an empty container may have no items array (NULL + 0 is undefined) */
        memcpy (object->items + object->len, from, n * sizeof (WickPickleValue));
      object->len += n;
      reader->kept_items += n;
      reader->stack.len = at;
      return TRUE;
    }
  for (guint i = 0; i < n; i++)
    {
      WickPickleValue *v = &reader->stack.values[at + i];
      WickPickleValue item = *v;
      v->type = WICK_PICKLE_NONE; /* moved */
      if (!ok)
        value_clear (&item);
      else if (offer)
        ok = list_append (reader, object, item, error);
      else
        ok = object_add (reader, object, item, error);
    }
  reader->stack.len = at;
  return ok;
}

static gboolean
op_string (WickPickleReader *reader, guint8 type, guint width, gboolean is_signed, GError **error)
{
  guint64 len;
  if (!read_length (reader, width, is_signed, &len, error))
    return FALSE;
  WickPickleObject *object = object_new (type, (gsize)len);
  object->len = (gsize)len;
  if (!read_into (reader, object->data, (gsize)len, error))
    {
      object_unref (object);
      return FALSE;
    }
  return push (reader, object_value (object), error);
}

/* LONG1/LONG4: little-endian two's complement of any length. */
static gboolean
op_long (WickPickleReader *reader, guint width, GError **error)
{
  guint64 len;
  if (!read_length (reader, width, TRUE, &len, error))
    return FALSE;
  WickPickleValue v = { .type = WICK_PICKLE_INT };
  if (len == 0)
    return push (reader, v, error);
  /* Bytes beyond the ninth must all be sign bytes for a 64-bit value. */
  guint8 head[9] = { 0 };
  guint keep = (guint)MIN (len, (guint64)9);
  if (!read_into (reader, (char *)head, keep, error))
    return FALSE;
  gboolean negative = (head[keep - 1] & 0x80) != 0;
  gboolean big = FALSE;
  for (guint64 rest = len - keep; rest > 0;)
    {
      guint8 chunk[256];
      guint n = (guint)MIN (rest, (guint64)sizeof chunk);
      if (!read_into (reader, (char *)chunk, n, error))
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (chunk[i] != (negative ? 0xff : 0x00))
          big = TRUE;
      rest -= n;
    }
  if (keep <= 8)
    {
      guint64 u = read_le (head, keep);
      if (negative && keep < 8)
        u |= ~(guint64)0 << (8 * keep);
      v.as.i = (gint64)u;
    }
  else if (!negative && head[8] == 0)
    {
      guint64 u = read_le (head, 8);
      if (u > G_MAXINT64)
        {
          v.type = WICK_PICKLE_UINT;
          v.as.u = u;
        }
      else
        v.as.i = (gint64)u;
    }
  else if (negative && head[8] == 0xff && (head[7] & 0x80))
    v.as.i = (gint64)read_le (head, 8);
  else
    big = TRUE;
  if (big)
    {
      v.type = WICK_PICKLE_BIG;
      v.as.i = negative ? -1 : 1;
    }
  return push (reader, v, error);
}

/* INT and LONG, the text opcodes protocol 1 still writes for bools ("I01")
 * and ints past 32 bits ("L123L"): a decimal line of at most 4096 bytes. */
static gboolean
op_text_int (WickPickleReader *reader, GError **error)
{
  char line[4097];
  gsize len = 0;
  for (;;)
    {
      if (!need (reader, 1, error))
        return FALSE;
      char c = (char)reader->buffer[reader->pos++];
      if (c == '\n')
        break;
      if (len == sizeof line - 1)
        return fail (reader, error, "its number is longer than 4096 bytes");
      line[len++] = c;
    }
  line[len] = '\0';
  if (reader->op == 'L' && len > 0 && line[len - 1] == 'L')
    line[--len] = '\0';
  WickPickleValue v = { .type = WICK_PICKLE_INT };
  if (reader->op == 'I' && (strcmp (line, "00") == 0 || strcmp (line, "01") == 0))
    {
      v.type = WICK_PICKLE_BOOL;
      v.as.i = line[1] == '1';
      return push (reader, v, error);
    }
  const char *digits = line[0] == '-' || line[0] == '+' ? line + 1 : line;
  if (*digits == '\0' || strspn (digits, "0123456789") != strlen (digits))
    return fail (reader, error, "\"%.40s\" is not a decimal integer", line);
  errno = 0;
  gint64 i = g_ascii_strtoll (line, NULL, 10);
  if (errno == 0)
    v.as.i = i;
  else if (line[0] != '-' && (errno = 0, v.as.u = g_ascii_strtoull (line, NULL, 10), errno == 0))
    v.type = WICK_PICKLE_UINT;
  else
    {
      v.type = WICK_PICKLE_BIG;
      v.as.i = line[0] == '-' ? -1 : 1;
    }
  return push (reader, v, error);
}

static gboolean
memo_put (WickPickleReader *reader, guint64 key, GError **error)
{
  if (!needs_stack (reader, 1, error))
    return FALSE;
  if (key >= reader->limits.max_memo)
    return fail_too_large (reader, error,
                           "memo key %" G_GUINT64_FORMAT " is over the limit of %" G_GUINT64_FORMAT,
                           key, reader->limits.max_memo);
  if (key > reader->memo_len + (guint64)MEMO_GAP_MAX)
    return fail (reader, error, "memo key %" G_GUINT64_FORMAT " is far past the memo's %u slots",
                 key, reader->memo_len);
  if (reader->memo_len <= key)
    {
      guint from = reader->memo_len;
      reader->memo_len = MAX ((guint)key + 1, from + from / 2 + 64);
      guint n_pages = (reader->memo_len + MEMO_PAGE_SLOTS - 1) / MEMO_PAGE_SLOTS;
      if (n_pages > reader->n_memo_pages)
        {
          /* (new pages have no slots: all VALUE_UNSET) */
          reader->memo_pages = g_renew (MemoPage, reader->memo_pages, n_pages);
          memset (reader->memo_pages + reader->n_memo_pages, 0,
                  (n_pages - reader->n_memo_pages) * sizeof (MemoPage));
          reader->n_memo_pages = n_pages;
        }
    }
  MemoPage *page = &reader->memo_pages[key >> MEMO_PAGE_BITS];
  WickPickleValue *slot = &memo_page_slots (page)[key & (MEMO_PAGE_SLOTS - 1)];
  if (slot->type == VALUE_UNSET)
    reader->memo_count++;
  else if (is_object_type (slot->type))
    object_unref (slot->as.object);
  if (slot->type > WICK_PICKLE_DICT)
    page->n_values++;
  value_ref (slot, stack_top (reader, 0));
  if (is_object_type (slot->type))
    slot->as.object->memo_slot = (gint64)key;
  return TRUE;
}

static gboolean
memo_get (WickPickleReader *reader, guint64 key, GError **error)
{
  const MemoPage *page = key < reader->memo_len ? &reader->memo_pages[key >> MEMO_PAGE_BITS] : NULL;
  guint index = (guint)(key & (MEMO_PAGE_SLOTS - 1));
  guint32 state = page == NULL          ? VALUE_UNSET
                  : page->slots == NULL ? memo_page_bit_state (page, index)
                                        : page->slots[index].type;
  if (state == VALUE_UNSET)
    return fail (reader, error, "memo key %" G_GUINT64_FORMAT " was never set", key);
  if (state == VALUE_RELEASED)
    return fail (reader, error,
                 "memo key %" G_GUINT64_FORMAT " is an item the streaming reader already took "
                 "(a snapshot never refers back to one)",
                 key);
  WickPickleValue v;
  value_ref (&v, &page->slots[index]);
  return push (reader, v, error);
}

static gboolean
refuse (WickPickleReader *reader, GError **error)
{
  switch (reader->op)
    {
      case 'c':
      case 0x93:
      case 'i':
        return fail (reader, error,
                     "would import a Python name; a memory snapshot holds only "
                     "data: refused, nothing was run");
      case 'R':
      case 'o':
      case 0x81:
      case 0x92:
      case 'b':
        return fail (reader, error,
                     "would call Python code; a memory snapshot holds only data: "
                     "refused, nothing was run");
      case 0x82:
      case 0x83:
      case 0x84:
        return fail (reader, error, "names an extension-registry object; refused");
      case 'P':
      case 'Q':
        return fail (reader, error, "names a persistent object; refused");
      case 0x97:
      case 0x98:
        return fail (reader, error, "needs an out-of-band buffer; refused");
      case 'F':
      case 'S':
      case 'V':
      case 'g':
      case 'p':
        return fail (reader, error,
                     "is a protocol 0 text opcode; only binary pickles "
                     "(protocol 1 to 5) are read");
      default:
        return fail (reader, error, "is not a pickle opcode");
    }
}

/* Runs one opcode; *@stop is set by STOP. */
static gboolean
step (WickPickleReader *reader, gboolean *stop, WickPickleValue *result, GError **error)
{
  guint64 n;
  guint at;
  WickPickleValue v = { .type = WICK_PICKLE_NONE };

  if (reader->pos == reader->len)
    {
      reader->op_offset = reader->base + reader->pos;
      if (!need (reader, 1, error))
        {
          if (g_error_matches (error != NULL ? *error : NULL, WICK_DOCUMENT_ERROR,
                               WICK_DOCUMENT_ERROR_TRUNCATED)
              && reader->eof)
            {
              g_clear_error (error);
              g_set_error (error, WICK_DOCUMENT_ERROR, WICK_DOCUMENT_ERROR_TRUNCATED,
                           "%s: byte %" G_GUINT64_FORMAT ": the pickle ends before its STOP opcode",
                           reader->name, reader->op_offset);
            }
          return FALSE;
        }
    }
  reader->op_offset = reader->base + reader->pos;
  reader->op = reader->buffer[reader->pos++];
  const guint8 *p;

  switch (reader->op)
    {
      case 0x80: /* PROTO */
        if (!need (reader, 1, error))
          return FALSE;
        n = reader->buffer[reader->pos++];
        if (n > 5)
          return fail (reader, error, "protocol %u is newer than 5", (guint)n);
        return TRUE;
      case 0x95: /* FRAME: framing only helps readers that buffer whole frames */
        if (!need (reader, 8, error))
          return FALSE;
        reader->pos += 8;
        return TRUE;
      case '.': /* STOP */
        if (!needs_stack (reader, 1, error))
          return FALSE;
        *result = *stack_top (reader, 0);
        reader->stack.len = reader->stack.len - 1;
        *stop = TRUE;
        return TRUE;
      case '(': /* MARK */
        if (reader->marks.len >= reader->limits.max_marks)
          return fail_too_large (reader, error,
                                 "more than the limit of %" G_GUINT64_FORMAT " open MARKs",
                                 reader->limits.max_marks);
        if (reader->marks.len == reader->marks.capacity)
          {
            reader->marks.capacity = MAX (16, reader->marks.capacity * 2);
            reader->marks.at = g_renew (guint, reader->marks.at, reader->marks.capacity);
          }
        reader->marks.at[reader->marks.len++] = reader->stack.len;
        return TRUE;
      case '0': /* POP */
        if (reader->marks.len > 0 && reader->marks.at[reader->marks.len - 1] == reader->stack.len)
          {
            reader->marks.len--; /* Python pops the mark */
            return TRUE;
          }
        if (!needs_stack (reader, 1, error))
          return FALSE;
        value_clear (stack_top (reader, 0));
        reader->stack.len = reader->stack.len - 1;
        return TRUE;
      case '1': /* POP_MARK */
        if (!pop_mark (reader, &at, error))
          return FALSE;
        while (reader->stack.len > at)
          {
            value_clear (stack_top (reader, 0));
            reader->stack.len = reader->stack.len - 1;
          }
        return TRUE;
      case '2': /* DUP */
        if (!needs_stack (reader, 1, error))
          return FALSE;
        value_ref (&v, stack_top (reader, 0));
        return push (reader, v, error);
      case 'N':
        return push (reader, v, error);
      case 0x88: /* NEWTRUE */
      case 0x89: /* NEWFALSE */
        v.type = WICK_PICKLE_BOOL;
        v.as.i = reader->op == 0x88;
        return push (reader, v, error);
      case 'J': /* BININT */
        if (!need (reader, 4, error))
          return FALSE;
        v.type = WICK_PICKLE_INT;
        v.as.i = (gint32)(guint32)read_le (reader->buffer + reader->pos, 4);
        reader->pos += 4;
        return push (reader, v, error);
      case 'K': /* BININT1 */
        if (!need (reader, 1, error))
          return FALSE;
        v.type = WICK_PICKLE_INT;
        v.as.i = reader->buffer[reader->pos++];
        return push (reader, v, error);
      case 'M': /* BININT2 */
        if (!need (reader, 2, error))
          return FALSE;
        v.type = WICK_PICKLE_INT;
        v.as.i = (gint64)read_le (reader->buffer + reader->pos, 2);
        reader->pos += 2;
        return push (reader, v, error);
      case 'I': /* INT */
      case 'L': /* LONG */
        return op_text_int (reader, error);
      case 0x8a: /* LONG1 */
        return op_long (reader, 1, error);
      case 0x8b: /* LONG4 */
        return op_long (reader, 4, error);
      case 'G': /* BINFLOAT: big-endian IEEE 754 */
        {
          if (!need (reader, 8, error))
            return FALSE;
          p = reader->buffer + reader->pos;
          guint64 bits = 0;
          for (int i = 0; i < 8; i++)
            bits = (bits << 8) | p[i];
          reader->pos += 8;
          v.type = WICK_PICKLE_FLOAT;
          memcpy (&v.as.f, &bits, sizeof bits);
          return push (reader, v, error);
        }
      case 'X': /* BINUNICODE */
        return op_string (reader, WICK_PICKLE_STR, 4, FALSE, error);
      case 0x8c: /* SHORT_BINUNICODE */
        return op_string (reader, WICK_PICKLE_STR, 1, FALSE, error);
      case 0x8d: /* BINUNICODE8 */
        return op_string (reader, WICK_PICKLE_STR, 8, FALSE, error);
      case 'B': /* BINBYTES */
        return op_string (reader, WICK_PICKLE_BYTES, 4, FALSE, error);
      case 'C': /* SHORT_BINBYTES */
        return op_string (reader, WICK_PICKLE_BYTES, 1, FALSE, error);
      case 0x8e: /* BINBYTES8 */
      case 0x96: /* BYTEARRAY8 */
        return op_string (reader, WICK_PICKLE_BYTES, 8, FALSE, error);
      case 'T': /* BINSTRING */
        return op_string (reader, WICK_PICKLE_BYTES, 4, TRUE, error);
      case 'U': /* SHORT_BINSTRING */
        return op_string (reader, WICK_PICKLE_BYTES, 1, FALSE, error);
      case ']': /* EMPTY_LIST */
        return push (reader, object_value (new_container (reader, WICK_PICKLE_LIST)), error);
      case '}': /* EMPTY_DICT */
        return push (reader, object_value (new_container (reader, WICK_PICKLE_DICT)), error);
      case ')': /* EMPTY_TUPLE */
        return push (reader, object_value (new_container (reader, WICK_PICKLE_TUPLE)), error);
      case 0x8f: /* EMPTY_SET */
        return push (reader, object_value (new_container (reader, WICK_PICKLE_LIST)), error);
      case 0x85: /* TUPLE1 */
      case 0x86: /* TUPLE2 */
      case 0x87: /* TUPLE3 */
        {
          guint count = reader->op - 0x84;
          if (!needs_stack (reader, count, error))
            return FALSE;
          WickPickleObject *tuple = new_container (reader, WICK_PICKLE_TUPLE);
          gboolean ok = fill_from_stack (reader, tuple, reader->stack.len - count, FALSE, error);
          if (!ok)
            {
              object_unref (tuple);
              return FALSE;
            }
          return push (reader, object_value (tuple), error);
        }
      case 't':  /* TUPLE */
      case 'l':  /* LIST */
      case 'd':  /* DICT */
      case 0x91: /* FROZENSET */
        {
          if (!pop_mark (reader, &at, error))
            return FALSE;
          guint8 type = reader->op == 't'   ? WICK_PICKLE_TUPLE
                        : reader->op == 'd' ? WICK_PICKLE_DICT
                                            : WICK_PICKLE_LIST;
          if (type == WICK_PICKLE_DICT && (reader->stack.len - at) % 2 != 0)
            return fail (reader, error, "an odd number of values for key/value pairs");
          WickPickleObject *object = new_container (reader, type);
          if (!fill_from_stack (reader, object, at, reader->op == 'l', error))
            {
              object_unref (object);
              return FALSE;
            }
          return push (reader, object_value (object), error);
        }
      case 'a': /* APPEND */
        {
          if (!needs_stack (reader, 2, error)
              || !check_mutable (reader, stack_top (reader, 1), WICK_PICKLE_LIST, error))
            return FALSE;
          WickPickleValue item = *stack_top (reader, 0);
          reader->stack.len = reader->stack.len - 1;
          return list_append (reader, stack_top (reader, 0)->as.object, item, error);
        }
      case 'e':  /* APPENDS */
      case 0x90: /* ADDITEMS */
      case 'u':  /* SETITEMS */
        {
          if (!pop_mark (reader, &at, error))
            return FALSE;
          if (at == 0
              || (reader->marks.len > 0 && reader->marks.at[reader->marks.len - 1] >= at))
            return fail (reader, error, "no container below its MARK");
          WickPickleValue *target = &reader->stack.values[at - 1];
          guint32 type = reader->op == 'u' ? WICK_PICKLE_DICT : WICK_PICKLE_LIST;
          if (!check_mutable (reader, target, type, error))
            return FALSE;
          if (type == WICK_PICKLE_DICT && (reader->stack.len - at) % 2 != 0)
            return fail (reader, error, "an odd number of values for key/value pairs");
          return fill_from_stack (reader, target->as.object, at, reader->op == 'e', error);
        }
      case 's': /* SETITEM */
        {
          if (!needs_stack (reader, 3, error)
              || !check_mutable (reader, stack_top (reader, 2), WICK_PICKLE_DICT, error))
            return FALSE;
          WickPickleObject *dict = stack_top (reader, 2)->as.object;
          return fill_from_stack (reader, dict, reader->stack.len - 2, FALSE, error);
        }
      case 'q': /* BINPUT */
        if (!need (reader, 1, error))
          return FALSE;
        n = reader->buffer[reader->pos++];
        return memo_put (reader, n, error);
      case 'r': /* LONG_BINPUT */
        if (!need (reader, 4, error))
          return FALSE;
        n = read_le (reader->buffer + reader->pos, 4);
        reader->pos += 4;
        return memo_put (reader, n, error);
      case 0x94: /* MEMOIZE */
        return memo_put (reader, reader->memo_count, error);
      case 'h': /* BINGET */
        if (!need (reader, 1, error))
          return FALSE;
        n = reader->buffer[reader->pos++];
        return memo_get (reader, n, error);
      case 'j': /* LONG_BINGET */
        if (!need (reader, 4, error))
          return FALSE;
        n = read_le (reader->buffer + reader->pos, 4);
        reader->pos += 4;
        return memo_get (reader, n, error);
      default:
        return refuse (reader, error);
    }
}

/* Bytes left in the buffer for fast_run: more than any operand it reads. */
#define FAST_MARGIN 16

/* The value memo slot @key holds, or NULL: never set, released, or past the memo. */
static inline const WickPickleValue *
memo_value_at (const MemoPage *pages, guint64 memo_len, guint64 key)
{
  if (key >= memo_len)
    return NULL;
  const MemoPage *page = &pages[key >> MEMO_PAGE_BITS];
  if (page->slots == NULL)
    return NULL;
  const WickPickleValue *slot = &page->slots[key & (MEMO_PAGE_SLOTS - 1)];
  return slot->type > WICK_PICKLE_DICT ? NULL : slot;
}

static inline gboolean
is_put_op (guint8 op)
{
  return op == 0x94 || op == 'q' || op == 'r';
}

/* Past any FRAME opcodes at @q (framing may come between any two opcodes);
 * buffer[q] may be read for q < end + FAST_MARGIN. */
static inline gsize
skip_frames (const guint8 *buffer, gsize q, gsize end)
{
  while (G_UNLIKELY (buffer[q] == 0x95) && q < end)
    q += 9;
  return q;
}

/* The PUT at buffer[q] inside a batch of records, of @v (VALUE_RELEASED: the
 * item's own dict), checked and set aside in record_puts: the offset after
 * it, or 0 when the batch cannot go on as records. Its state is in the
 * reader's rec_ fields, so that fast_records' locals stay in registers. */
static G_NO_INLINE gsize
record_put (WickPickleReader *reader, gsize q, WickPickleValue v)
{
  const guint8 *op = reader->buffer + q;
  guint64 key;
  if (op[0] == 0x94)
    {
      if (reader->rec_put_kind == 2)
        return 0;
      reader->rec_put_kind = 1;
      key = reader->rec_memo_count;
      q += 1;
    }
  else
    {
      key = op[0] == 'q' ? op[1] : read_le (op + 1, 4);
      q += op[0] == 'q' ? 2 : 5;
      /* increasing keys within the memo's slots: none PUT twice */
      if (reader->rec_put_kind == 1 || (reader->rec_put_kind == 2 && key <= reader->rec_last_put)
          || key >= reader->memo_len)
        return 0;
      reader->rec_put_kind = 2;
      reader->rec_last_put = key;
    }
  if (key >= reader->limits.max_memo)
    return 0;
  if (key < reader->memo_len)
    {
      const MemoPage *page = &reader->memo_pages[key >> MEMO_PAGE_BITS];
      guint i = (guint)(key & (MEMO_PAGE_SLOTS - 1));
      if ((page->slots != NULL ? page->slots[i].type : memo_page_bit_state (page, i))
          != VALUE_UNSET)
        return 0;
    }
  if (reader->rec_n_puts == reader->n_record_puts_max)
    {
      reader->n_record_puts_max = MAX (256, reader->n_record_puts_max * 2);
      reader->record_puts = g_renew (RecordPut, reader->record_puts, reader->n_record_puts_max);
    }
  reader->record_puts[reader->rec_n_puts].key = key;
  reader->record_puts[reader->rec_n_puts].value = v;
  reader->rec_n_puts++;
  reader->rec_memo_count++;
  return q;
}

/* What memo_put does for a PUT that fast_records checked: the slot was never
 * set, the key is under the limit and at most the memo's end. */
static void
memo_commit_put (WickPickleReader *reader, const RecordPut *put)
{
  guint64 key = put->key;
  if (reader->memo_len <= key)
    {
      guint from = reader->memo_len;
      reader->memo_len = MAX ((guint)key + 1, from + from / 2 + 64);
      guint n_pages = (reader->memo_len + MEMO_PAGE_SLOTS - 1) / MEMO_PAGE_SLOTS;
      if (n_pages > reader->n_memo_pages)
        {
          reader->memo_pages = g_renew (MemoPage, reader->memo_pages, n_pages);
          memset (reader->memo_pages + reader->n_memo_pages, 0,
                  (n_pages - reader->n_memo_pages) * sizeof (MemoPage));
          reader->n_memo_pages = n_pages;
        }
    }
  MemoPage *page = &reader->memo_pages[key >> MEMO_PAGE_BITS];
  WickPickleValue *slot = &memo_page_slots (page)[key & (MEMO_PAGE_SLOTS - 1)];
  reader->memo_count++;
  if (put->value.type == VALUE_RELEASED)
    {
      /* the item's dict: put, then taken and released (release_memo) */
      slot->type = VALUE_RELEASED;
      return;
    }
  page->n_values++;
  value_ref (slot, &put->value);
  if (is_object_type (slot->type))
    slot->as.object->memo_slot = (gint64)key;
}

/* The item arrays, at their whole size once: record_found points into record_values. */
static void
records_alloc (WickPickleReader *reader)
{
  gsize n = (gsize)RECORDS_MAX * reader->record_keys->n;
  reader->record_values = g_new (WickPickleValue, n);
  reader->record_found = g_new (const WickPickleValue *, n);
}

/* A batch of records (wick_pickle_reader_set_record_func) from the MARK at
 * *@pos_io, the list being on top of the @sl values of the stack: 1 when it
 * was read whole up to its APPENDS (*@pos_io past it), 0 when it is not one
 * (nothing changed but the keys' cached tags: fast_run or step() read it),
 * -1 with @error when the record callback failed.
 *
 * The batch is read once: each item's known values into record_values, its
 * PUTs and the strs it makes set aside. Every check that the ordinary reading
 * of these opcodes makes is made on the way (the marks, the stack and the
 * items kept against their limits, a PUT's slot never set, a GET's slot set
 * before the batch, nesting); anything else, a GET of a slot the batch itself
 * PUTs among them, stops it with 0. Only at the APPENDS do the PUTs go into
 * the memo, and then the callback is called for each item. */
static int
fast_records (WickPickleReader *reader, gsize *pos_io, guint sl, GError **error)
{
  const guint8 *buffer = reader->buffer;
  gsize end = reader->len > FAST_MARGIN ? reader->len - FAST_MARGIN : 0;
  const MemoPage *pages = reader->memo_pages;
  guint64 memo_len = reader->memo_len;
  const WickPickleKeyCache *cache = reader->record_keys;
  guint n_keys = cache->n;
  guint max_depth = reader->limits.max_depth;
  WickPickleObject *list = reader->stack.values[sl - 1].as.object;

  /* MARK twice (the batch's, an item's) and APPENDS' checks */
  if (list->sealed || (guint64)reader->marks.len + 2 > reader->limits.max_marks
      || (reader->marks.len > 0 && reader->marks.at[reader->marks.len - 1] >= sl))
    return 0;

  if (reader->record_values == NULL)
    records_alloc (reader);
  guint n_records = 0, n_made = 0;
  guint64 kept = 0;
  reader->rec_put_kind = 0;
  reader->rec_last_put = 0;
  reader->rec_memo_count = reader->memo_count;
  reader->rec_n_puts = 0;
  gsize q = *pos_io + 1;
  int result = 0;
  for (;;)
    {
      q = skip_frames (buffer, q, end);
      if (q >= end)
        goto stop;
      if (buffer[q] == 'e')
        break;
      /* EMPTY_DICT, its PUT, MARK */
      if (buffer[q] != '}' || n_records == RECORDS_MAX)
        goto stop;
      WickPickleValue *values = reader->record_values + (gsize)n_records * n_keys;
      const WickPickleValue **found = reader->record_found + (gsize)n_records * n_keys;
      for (guint k = 0; k < n_keys; k++)
        found[k] = NULL;
      guint32 present = 0;
      guint n_values = 0;
      WickPickleValue v = { .type = VALUE_RELEASED };
      q = skip_frames (buffer, q + 1, end);
      if (q >= end || (is_put_op (buffer[q]) && (q = record_put (reader, q, v)) == 0))
        goto stop;
      q = skip_frames (buffer, q, end);
      if (q >= end || buffer[q] != '(')
        goto stop;
      q++;
      for (;;)
        {
          /* a pair without its str's bytes is at most 20 bytes, its PUT 5 more */
          if (q + 32 > end)
            goto stop;
          guint8 op = buffer[q];
          if (op == 'u')
            {
              q++;
              break;
            }
          if (G_UNLIKELY (op == 0x95))
            {
              q = skip_frames (buffer, q, end);
              continue;
            }
          /* the key: a memoized str */
          guint64 key;
          if (op == 'h')
            key = buffer[q + 1], q += 2;
          else if (op == 'j')
            key = read_le (buffer + q + 1, 4), q += 5;
          else
            goto stop;
          const WickPickleValue *slot = memo_value_at (pages, memo_len, key);
          if (slot == NULL || slot->type != WICK_PICKLE_STR || n_values == 2 * RECORD_PAIRS_MAX)
            goto stop;
          guint k = key_cache_index (cache, slot->as.object);
          /* the value */
          op = buffer[q];
          if (G_UNLIKELY (op == 0x95))
            {
              q = skip_frames (buffer, q, end);
              if (q + 32 > end)
                goto stop;
              op = buffer[q];
            }
          const guint8 *p = buffer + q + 1;
          switch (op)
            {
              case 'h':
              case 'j':
                key = op == 'h' ? p[0] : read_le (p, 4);
                q += op == 'h' ? 2 : 5;
                slot = memo_value_at (pages, memo_len, key);
                if (slot == NULL)
                  goto stop;
                /* a container going in must be inside another one already
                 * (so sealing it changes nothing) and not too deep */
                if (is_container_type (slot->type)
                    && (!slot->as.object->sealed
                        || (guint)slot->as.object->depth + 1 > max_depth))
                  goto stop;
                v = *slot;
                break;
              case 'K':
                v.type = WICK_PICKLE_INT;
                v.as.i = p[0];
                q += 2;
                break;
              case 'M':
                v.type = WICK_PICKLE_INT;
                v.as.i = (gint64)read_le (p, 2);
                q += 3;
                break;
              case 'J':
                v.type = WICK_PICKLE_INT;
                v.as.i = (gint32)(guint32)read_le (p, 4);
                q += 5;
                break;
              case 'N':
                v.type = WICK_PICKLE_NONE;
                v.as.i = 0;
                q += 1;
                break;
              case 0x88:
              case 0x89:
                v.type = WICK_PICKLE_BOOL;
                v.as.i = op == 0x88;
                q += 1;
                break;
              case 0x8a: /* LONG1 of at most 8 bytes, as fast_run's */
                {
                  guint n = p[0];
                  if (n > 8 || n > reader->limits.max_string)
                    goto stop;
                  v.type = WICK_PICKLE_INT;
                  v.as.i = 0;
                  if (n > 0)
                    {
                      guint64 u = read_le (p + 1, 8);
                      if (n < 8)
                        {
                          u &= ~(~(guint64)0 << (8 * n));
                          if (p[n] & 0x80)
                            u |= ~(guint64)0 << (8 * n);
                        }
                      v.as.i = (gint64)u;
                    }
                  q += 2 + n;
                  break;
                }
              case 0x8c: /* SHORT_BINUNICODE */
                {
                  gsize n = p[0];
                  if (n > reader->limits.max_string || q + 2 + n + 16 > end)
                    goto stop;
                  q += 2 + n;
                  gsize after = skip_frames (buffer, q, end);
                  if (k == KEY_TAG_NONE && !(after < end && is_put_op (buffer[after])))
                    {
                      v.type = WICK_PICKLE_NONE; /* not kept by anything: not made */
                      break;
                    }
                  if (n_made == reader->n_record_made_max)
                    {
                      reader->n_record_made_max = MAX (64, reader->n_record_made_max * 2);
                      reader->record_made = g_renew (WickPickleObject *, reader->record_made,
                                                     reader->n_record_made_max);
                    }
                  WickPickleObject *object = object_new (WICK_PICKLE_STR, n);
                  object->len = n;
                  memcpy (object->data, p + 1, n);
                  reader->record_made[n_made++] = object;
                  v = object_value (object);
                  break;
                }
              default:
                goto stop;
            }
          n_values += 2;
          if (k != KEY_TAG_NONE)
            {
              values[k - 1] = v; /* the last one when repeated */
              found[k - 1] = &values[k - 1];
              present |= 1u << (k - 1);
            }
          if (G_UNLIKELY (buffer[q] == 0x95))
            {
              q = skip_frames (buffer, q, end);
              if (q >= end)
                goto stop;
            }
          if (is_put_op (buffer[q]) && (q = record_put (reader, q, v)) == 0)
            goto stop;
        }
      /* the stack at the item's SETITEMS: the list, the items before, the
       * dict, its pairs (nothing is pushed here: its capacity does not matter) */
      if ((guint64)sl + n_records + 1 + n_values > reader->limits.max_stack)
        goto stop;
      kept += n_values;
      guint m = 0;
      while (m < reader->n_record_masks
             && (present & reader->record_masks[m]) != reader->record_masks[m])
        m++;
      if (m == reader->n_record_masks)
        goto stop;
      n_records++;
    }
  if (n_records == 0 || reader->kept_items + kept > reader->limits.max_kept_items)
    goto stop;

  /* APPENDS: the PUTs, then each item to the callback. */
  reader->op = 'e';
  reader->op_offset = reader->base + q;
  reader->pos = *pos_io = q + 1;
  gsize n_puts = reader->rec_n_puts;
  for (gsize i = 0; i < n_puts; i++)
    memo_commit_put (reader, &reader->record_puts[i]);
  for (gsize i = 0; i < n_puts; i++)
    if (reader->record_puts[i].value.type == VALUE_RELEASED
        && (i + 1 == n_puts
            || (reader->record_puts[i + 1].key >> MEMO_PAGE_BITS)
                 != (reader->record_puts[i].key >> MEMO_PAGE_BITS)))
      memo_page_fold (reader, reader->record_puts[i].key >> MEMO_PAGE_BITS);
  result = 1;
  for (guint i = 0; i < n_records; i++)
    {
      const WickPickleValue *const *found = reader->record_found + (gsize)i * n_keys;
      GError *local = NULL;
      WickPickleVerdict verdict = reader->record_func (list->list_id, list->len + list->taken,
                                                       found, reader->record_data, &local);
      if (G_UNLIKELY (verdict != WICK_PICKLE_TAKEN))
        {
          if (local != NULL && verdict == WICK_PICKLE_FAILED)
            g_propagate_error (error, local);
          else
            {
              g_clear_error (&local);
              fail (reader, error, verdict == WICK_PICKLE_FAILED
                                     ? "the reader's callback failed without a reason"
                                     : "the record callback kept an item it had to take");
            }
          result = -1;
          break;
        }
      if (G_UNLIKELY (local != NULL))
        g_clear_error (&local);
      list->taken++;
    }
stop:
  for (guint i = 0; i < n_made; i++)
    object_unref (reader->record_made[i]);
  return result;
}

/* The opcodes a snapshot's history is made of (GETs, MEMOIZE, MARK, small
 * ints, LONG1 addresses, short strings, empty containers, SETITEMS and
 * APPENDS), run with the buffer and the stack in locals while the buffer
 * holds more than FAST_MARGIN bytes, so that no operand can be cut. Each
 * case is only the success case of step()'s, with every check of step()
 * made before anything is consumed: an opcode not here, or one that any
 * check would refuse or that needs a slow path (the memo or the stack to
 * grow), returns TRUE with it not consumed, and step() runs or refuses it
 * with its error. FALSE only for an error of fill_from_stack (the element
 * callback's, a depth or self-containment refusal), reported as step()
 * would. */
static gboolean
fast_run (WickPickleReader *reader, GError **error)
{
  const guint8 *buffer = reader->buffer;
  gsize pos = reader->pos;
  gsize end = reader->len > FAST_MARGIN ? reader->len - FAST_MARGIN : 0;
  WickPickleValue *sv = reader->stack.values;
  guint sl = reader->stack.len;
  guint64 stack_max = MIN ((guint64)reader->stack.capacity, reader->limits.max_stack);
  /* (pages fold as items are taken; the page table only grows in memo_put) */
  MemoPage *pages = reader->memo_pages;
  guint64 memo_len = reader->memo_len;
  gboolean ok = TRUE;

  while (pos < end)
    {
      guint8 op = buffer[pos];
      const guint8 *p = buffer + pos + 1;
      WickPickleValue v, *slot;
      MemoPage *page;
      guint64 key;
      gsize width;
      guint at, floor;
      guint32 type;

      switch (op)
        {
          case 'h': /* BINGET */
            key = p[0];
            width = 2;
            goto get;
          case 'j': /* LONG_BINGET */
            key = read_le (p, 4);
            width = 5;
          get:
            if (key >= memo_len || sl >= stack_max)
              goto out;
            page = &pages[key >> MEMO_PAGE_BITS];
            if (page->slots == NULL
                || page->slots[key & (MEMO_PAGE_SLOTS - 1)].type > WICK_PICKLE_DICT)
              goto out; /* never set, or released */
            v = page->slots[key & (MEMO_PAGE_SLOTS - 1)];
            if (is_object_type (v.type))
              v.as.object->refs++;
            sv[sl++] = v;
            pos += width;
            continue;
          case 0x94: /* MEMOIZE */
            key = reader->memo_count;
            width = 1;
            goto put;
          case 'q': /* BINPUT */
            key = p[0];
            width = 2;
            goto put;
          case 'r': /* LONG_BINPUT */
            key = read_le (p, 4);
            width = 5;
          put:
            floor = reader->marks.len > 0 ? reader->marks.at[reader->marks.len - 1] : 0;
            if (sl <= floor || key >= reader->limits.max_memo || key >= memo_len)
              goto out; /* an error, or a memo to grow */
            page = &pages[key >> MEMO_PAGE_BITS];
            if (page->slots == NULL || page->slots[key & (MEMO_PAGE_SLOTS - 1)].type != VALUE_UNSET)
              goto out; /* a page to make, or a slot set before */
            reader->memo_count++;
            page->n_values++;
            slot = &page->slots[key & (MEMO_PAGE_SLOTS - 1)];
            *slot = sv[sl - 1];
            if (is_object_type (slot->type))
              {
                slot->as.object->refs++;
                slot->as.object->memo_slot = (gint64)key;
              }
            pos += width;
            continue;
          case '(': /* MARK */
            if (reader->record_func != NULL && sl > 0 && sv[sl - 1].type == WICK_PICKLE_LIST)
              {
                if (reader->len - pos < REFILL_AHEAD)
                  {
                    reader->pos = pos;
                    refill_ahead (reader);
                    pos = reader->pos;
                    end = reader->len > FAST_MARGIN ? reader->len - FAST_MARGIN : 0;
                  }
                int read = fast_records (reader, &pos, sl, error);
                if (read < 0)
                  {
                    ok = FALSE;
                    goto out;
                  }
                if (read > 0)
                  {
                    pages = reader->memo_pages;
                    memo_len = reader->memo_len;
                    if (reader->base + pos >= reader->next_cancel_check)
                      {
                        /* reader_read's check, made here: going out would
                         * leave the next batch's MARK to step() */
                        if (g_cancellable_is_cancelled (reader->cancellable))
                          goto out;
                        reader->next_cancel_check = reader->base + pos + CANCEL_CHECK_BYTES;
                      }
                    continue;
                  }
              }
            if (reader->marks.len >= reader->limits.max_marks
                || reader->marks.len == reader->marks.capacity)
              goto out;
            reader->marks.at[reader->marks.len++] = sl;
            pos++;
            continue;
          case 'K': /* BININT1 */
            v.type = WICK_PICKLE_INT;
            v.as.i = p[0];
            width = 2;
            goto push_value;
          case 'M': /* BININT2 */
            v.type = WICK_PICKLE_INT;
            v.as.i = (gint64)read_le (p, 2);
            width = 3;
            goto push_value;
          case 'J': /* BININT */
            v.type = WICK_PICKLE_INT;
            v.as.i = (gint32)(guint32)read_le (p, 4);
            width = 5;
            goto push_value;
          case 'N': /* NONE */
            v.type = WICK_PICKLE_NONE;
            v.as.i = 0;
            width = 1;
            goto push_value;
          case 0x88: /* NEWTRUE */
          case 0x89: /* NEWFALSE */
            v.type = WICK_PICKLE_BOOL;
            v.as.i = op == 0x88;
            width = 1;
            goto push_value;
          case 0x8a: /* LONG1 of at most 8 bytes (op_long's keep <= 8 case) */
            {
              guint n = p[0];
              if (n > 8 || n > reader->limits.max_string)
                goto out;
              v.type = WICK_PICKLE_INT;
              v.as.i = 0;
              if (n > 0)
                {
                  /* 8 bytes are there (FAST_MARGIN): load them, keep n */
                  guint64 u = read_le (p + 1, 8);
                  if (n < 8)
                    {
                      u &= ~(~(guint64)0 << (8 * n));
                      if (p[n] & 0x80)
                        u |= ~(guint64)0 << (8 * n);
                    }
                  v.as.i = (gint64)u;
                }
              width = 2 + n;
            }
          push_value:
            if (sl >= stack_max)
              goto out;
            sv[sl++] = v;
            pos += width;
            continue;
          case 0x8c: /* SHORT_BINUNICODE */
            {
              gsize n = p[0];
              if (n > reader->limits.max_string || pos + 2 + n > reader->len || sl >= stack_max)
                goto out;
              WickPickleObject *object = object_new (WICK_PICKLE_STR, n);
              object->len = n;
              memcpy (object->data, p + 1, n);
              sv[sl++] = object_value (object);
              pos += 2 + n;
              continue;
            }
          case '}': /* EMPTY_DICT */
            type = WICK_PICKLE_DICT;
            goto empty;
          case ']': /* EMPTY_LIST */
            type = WICK_PICKLE_LIST;
            goto empty;
          case ')': /* EMPTY_TUPLE */
            type = WICK_PICKLE_TUPLE;
          empty:
            if (sl >= stack_max)
              goto out;
            sv[sl++] = object_value (new_container (reader, (guint8)type));
            pos++;
            continue;
          case 0x95: /* FRAME */
            pos += 9;
            continue;
          case 'u': /* SETITEMS */
          case 'e': /* APPENDS */
            {
              guint n_marks = reader->marks.len;
              if (n_marks == 0)
                goto out;
              at = reader->marks.at[n_marks - 1];
              if (at > sl || at == 0 || (n_marks > 1 && reader->marks.at[n_marks - 2] >= at))
                goto out;
              type = op == 'u' ? WICK_PICKLE_DICT : WICK_PICKLE_LIST;
              WickPickleValue *target = &sv[at - 1];
              if (target->type != type || target->as.object->sealed
                  || (type == WICK_PICKLE_DICT && (sl - at) % 2 != 0))
                goto out;
              reader->marks.len = n_marks - 1;
              reader->op = op;
              reader->op_offset = reader->base + pos;
              reader->pos = pos + 1;
              reader->stack.len = sl;
              ok = fill_from_stack (reader, target->as.object, at, op == 'e', error);
              sl = reader->stack.len;
              pos = reader->pos;
              if (!ok)
                goto out;
              continue;
            }
          default:
            goto out;
        }
    }
out:
  reader->pos = pos;
  reader->stack.len = sl;
  return ok;
}

gboolean
wick_pickle_reader_read (WickPickleReader *reader, WickPickleValue *result, GError **error)
{
  gboolean stop = FALSE;
  result->type = WICK_PICKLE_NONE;
  result->as.i = 0;
  while (!stop)
    {
      if (!fast_run (reader, error) || !step (reader, &stop, result, error))
        return FALSE;
      guint64 offset = reader->base + reader->pos;
      if (offset >= reader->next_cancel_check)
        {
          reader->next_cancel_check = offset + CANCEL_CHECK_BYTES;
          if (g_cancellable_set_error_if_cancelled (reader->cancellable, error))
            return FALSE;
        }
    }
  return TRUE;
}

gboolean
wick_pickle_parse_data (const void *data, gsize len, WickPickleValue *result, GError **error)
{
  g_autoptr (WickInput) input = wick_input_new_for_data (data, len, "pickle");
  g_autoptr (WickPickleReader) reader = wick_pickle_reader_new (input, "pickle");
  return wick_pickle_reader_read (reader, result, error);
}
