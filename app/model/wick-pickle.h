/* wick-pickle.h — a Python pickle reader for data only: it never imports,
 * calls or builds anything.
 *
 * What it reads: the binary opcodes of protocols 1–5 that make plain data —
 * None, True/False, ints (BININT*, LONG1/LONG4 of any length: values past
 * 64 bits are kept as "big", without their digits), floats (BINFLOAT), str
 * (BINUNICODE*, SHORT_BINUNICODE), bytes (BINBYTES*, SHORT_BINBYTES,
 * BYTEARRAY8, BINSTRING), lists, tuples, dicts, sets and frozensets (read as
 * lists), MARK, POP, POP_MARK, DUP, the memo (PUT/GET in every width,
 * MEMOIZE), PROTO, FRAME and STOP; and the two text opcodes protocol 1
 * still writes, INT ("I01\n" for True) and LONG, as decimal lines of at most
 * 4096 bytes.
 *
 * What it refuses, with "byte OFFSET: opcode NAME (0xNN) …: refused":
 * GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4,
 * PERSID, BINPERSID (each would import or call code), NEXT_BUFFER and
 * READONLY_BUFFER (out-of-band buffers), protocol 0's other text opcodes, and any
 * byte that is not an opcode. OFFSET counts decoded bytes from the start of
 * the pickle (the file's bytes after gzip/zstd, which wick-input undoes).
 *
 * Bounds (WickPickleLimits): the longest str/bytes/long, the value stack, the
 * mark stack, the memo (PUT indices may not run far past its end), how deep
 * containers nest, and the items all kept containers hold together. A
 * container may not be changed after it went inside another one, nor go
 * inside itself: no cycles, so values free without recursion past the depth
 * bound. Exceeding a bound is an error naming the offset and the bound.
 *
 * Streaming. A multi-GB snapshot is mostly two big lists; holding them whole
 * would cost several times the file. So every item appended to a list (by
 * APPEND, APPENDS or LIST) is first offered to the element callback, which
 * looks at it (a trace entry, a segment: it knows them by their keys) and
 * either keeps it in the list or takes it: a taken item is dropped from the
 * list and from the memo, so a later GET of it is an error (Python's pickler
 * never refers back to such items in a snapshot; a file that does is refused,
 * not misread). Each list has a serial number (wick_pickle_value_get_list_id)
 * given to the callback, so a caller can tell, once the whole value is read,
 * which list the items it took were in (device_traces[0] from [1]). Memory is
 * then the memo's strings and shared frames plus one batch of items (the
 * pickler appends 1000 at a time).
 *
 * Values are reference counted; scalars live in WickPickleValue itself.
 */
#pragma once

#include <gio/gio.h>

#include "wick-input.h"

G_BEGIN_DECLS

typedef enum
{
  WICK_PICKLE_NONE,
  WICK_PICKLE_BOOL,
  WICK_PICKLE_INT,  /* fits gint64 */
  WICK_PICKLE_UINT, /* above G_MAXINT64, fits guint64 */
  WICK_PICKLE_BIG,  /* an int of more than 64 bits: its digits are not kept */
  WICK_PICKLE_FLOAT,
  WICK_PICKLE_STR,   /* UTF-8 as the pickle gives it (not validated here) */
  WICK_PICKLE_BYTES, /* bytes, bytearray, protocol 1 strings */
  WICK_PICKLE_LIST,  /* lists, sets and frozensets */
  WICK_PICKLE_TUPLE,
  WICK_PICKLE_DICT,
} WickPickleType;

typedef struct _WickPickleObject WickPickleObject;

typedef struct
{
  guint32 type; /* WickPickleType, or the reader's internal marks */
  guint32 reserved;
  union
  {
    gint64 i; /* INT, BOOL */
    guint64 u;
    double f;
    WickPickleObject *object; /* STR, BYTES, LIST, TUPLE, DICT */
  } as;
} WickPickleValue;

typedef struct
{
  gsize max_string;       /* longest str/bytes/long payload (default 64 MiB) */
  guint64 max_stack;      /* values on the stack (default 4 Mi) */
  guint64 max_marks;      /* open MARKs (default 64 Ki) */
  guint64 max_memo;       /* memo slots (default 256 Mi) */
  guint max_depth;        /* container nesting (default 200) */
  guint64 max_kept_items; /* items in kept (not streamed) containers (default 256 Mi) */
} WickPickleLimits;

typedef enum
{
  WICK_PICKLE_KEEP,   /* the item stays in its list */
  WICK_PICKLE_TAKEN,  /* the caller used it: dropped from the list and the memo */
  WICK_PICKLE_FAILED, /* stop with the callback's error */
} WickPickleVerdict;

/* Called for each item appended to a list, before it is stored; @item is
 * borrowed for the call. @index counts the list's items, kept and taken. */
typedef WickPickleVerdict (*WickPickleElementFunc) (guint64 list_id, guint64 index,
                                                    const WickPickleValue *item, gpointer user_data,
                                                    GError **error);

typedef struct _WickPickleReader WickPickleReader;

/* @input is borrowed; @name names the file in errors. */
WickPickleReader *wick_pickle_reader_new (WickInput *input, const char *name);
void wick_pickle_reader_free (WickPickleReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickPickleReader, wick_pickle_reader_free)

void wick_pickle_reader_set_limits (WickPickleReader *reader, const WickPickleLimits *limits);
void wick_pickle_reader_set_element_func (WickPickleReader *reader, WickPickleElementFunc func,
                                          gpointer user_data);
/* Records. A batch of a list's items written as a snapshot writes its history
 * (MARK, then for each item EMPTY_DICT, a PUT, MARK, pairs, SETITEMS, and
 * APPENDS at the end), where every key is a memoized str and every value a
 * memo GET, an int of at most 64 bits, None, a bool or a short str, is read
 * without building the dicts: at the APPENDS, for each item in order, @func
 * gets what wick_pickle_value_lookup_cached (@keys) would give for the dict
 * (@found: @keys' values, NULL where absent; borrowed for the call). Only
 * batches whose every item holds all the keys of one of @masks (bit k for
 * @keys' key k; at most 4 masks) go this way, and @func must take each item
 * (WICK_PICKLE_TAKEN: the item counts as taken from its list, its memo slot
 * released) or fail; the element callback would have had to take them too,
 * for everything else (reading, errors, offsets, the memo and the bounds) is
 * as if the batch had been built and offered to it: any batch that does not
 * fit this shape, or that a check of the reader would refuse, is read the
 * ordinary way. @keys is borrowed (it must outlive the reads), @masks copied. */
typedef struct _WickPickleKeyCache WickPickleKeyCache;
typedef WickPickleVerdict (*WickPickleRecordFunc) (guint64 list_id, guint64 index,
                                                   const WickPickleValue *const *found,
                                                   gpointer user_data, GError **error);
void wick_pickle_reader_set_record_func (WickPickleReader *reader, WickPickleKeyCache *keys,
                                         const guint32 *masks, guint n_masks,
                                         WickPickleRecordFunc func, gpointer user_data);
/* Checked between opcodes every 64 KiB of input; cancelling gives G_IO_ERROR_CANCELLED. */
void wick_pickle_reader_set_cancellable (WickPickleReader *reader, GCancellable *cancellable);

/* Reads one pickle up to STOP. On success *@result holds the value STOP
 * returned (release with wick_pickle_value_clear). Errors are
 * WICK_DOCUMENT_ERROR ("NAME: byte N: …"): INVALID, or TRUNCATED when the
 * input ends inside the pickle; the input's own errors, or the callback's. */
gboolean wick_pickle_reader_read (WickPickleReader *reader, WickPickleValue *result,
                                  GError **error);
/* Decoded bytes read so far. */
guint64 wick_pickle_reader_get_offset (WickPickleReader *reader);

void wick_pickle_value_clear (WickPickleValue *value);

/* Reading values (all accept NULL and the wrong type, answering "no"). */
gboolean wick_pickle_value_get_int (const WickPickleValue *value, gint64 *out); /* INT, BOOL */
gboolean wick_pickle_value_get_uint64 (const WickPickleValue *value,
                                       guint64 *out); /* INT >= 0, UINT */
/* STR or BYTES: the bytes (NUL-terminated past @len) or NULL. */
const char *wick_pickle_value_get_string (const WickPickleValue *value, gsize *len);
/* LIST, TUPLE: item count; DICT: pair count; else 0. */
gsize wick_pickle_value_get_length (const WickPickleValue *value);
/* LIST, TUPLE: item @i; NULL past the end. */
const WickPickleValue *wick_pickle_value_get_item (const WickPickleValue *value, gsize i);
/* DICT: pair @i's key and value. */
gboolean wick_pickle_value_get_pair (const WickPickleValue *value, gsize i,
                                     const WickPickleValue **key, const WickPickleValue **item);
/* DICT: the value under the str key @key (the last one when repeated), or NULL. */
const WickPickleValue *wick_pickle_value_lookup (const WickPickleValue *value, const char *key);
/* DICT: for each of the cache's str keys, the value under it (the last one
 * when repeated) or NULL, in one pass over the dict. A dict's keys are the
 * pickle's memoized strings, so after the first dict the keys are found by
 * pointer, not by comparing text.
 * The cache holds a reference on each key object it remembers (an address
 * is never reused while remembered). At most 16 keys. */
WickPickleKeyCache *wick_pickle_key_cache_new (const char *const *keys, guint n);
void wick_pickle_key_cache_free (WickPickleKeyCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickPickleKeyCache, wick_pickle_key_cache_free)
void wick_pickle_value_lookup_cached (const WickPickleValue *value, WickPickleKeyCache *cache,
                                      const WickPickleValue **out);
/* STR, BYTES, LIST, TUPLE, DICT: the caller's mark on the object (shared by
 * every memo GET of it), 0 until set; it lives and dies with the object, so a
 * later object at the same address starts at 0. Else 0 / nothing. */
guint32 wick_pickle_value_get_tag (const WickPickleValue *value);
void wick_pickle_value_set_tag (const WickPickleValue *value, guint32 tag);
/* LIST: its serial number, from 1 in the order lists were made; else 0. */
guint64 wick_pickle_value_get_list_id (const WickPickleValue *value);
const char *wick_pickle_type_to_string (guint32 type);

G_END_DECLS
