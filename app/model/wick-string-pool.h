/* wick-string-pool.h — interned strings of a document.
 *
 * Every distinct byte string is stored once, as [u32 length][bytes][NUL], and
 * named by the offset of its bytes (a WickStr); offset 0 means "absent", so the
 * empty string is a real entry. Equal strings have equal offsets, which makes
 * id lookups and equality checks integer comparisons. Strings may contain NUL
 * bytes (JSON "\u0000"): use the length, not strlen, where that matters.
 * Offsets are 32-bit: a document holds at most 4 GiB of distinct strings.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _WickStringPool WickStringPool;

WickStringPool *wick_string_pool_new (void);
void wick_string_pool_free (WickStringPool *pool);
/* Returns 0 (and sets nothing) only when the pool is full. */
guint32 wick_string_pool_intern (WickStringPool *pool, const char *str, gsize len);
/* Interning in two steps, so that a record's strings can be hashed and their
 * table slots prefetched together before they are interned one by one. */
guint64 wick_string_pool_hash (const char *str, gsize len);
void wick_string_pool_prefetch (WickStringPool *pool, guint64 hash);
guint32 wick_string_pool_intern_hashed (WickStringPool *pool, const char *str, gsize len,
                                        guint64 hash);
/* The offset of an interned string, 0 when it was never interned. */
guint32 wick_string_pool_lookup (WickStringPool *pool, const char *str, gsize len);
/* Sizes the table for about @n_strings strings and @bytes of text. */
void wick_string_pool_reserve (WickStringPool *pool, gsize n_strings, gsize bytes);
const char *wick_string_pool_get (WickStringPool *pool, guint32 offset);
gsize wick_string_pool_get_len (WickStringPool *pool, guint32 offset);
/* Frees the intern table (8 bytes a slot, two slots or more a string) and the
 * text buffer's slack, for a document that is read: the strings stay; the
 * next intern or lookup rebuilds the table from them (linear). */
void wick_string_pool_compact (WickStringPool *pool);

G_END_DECLS
