/* wick-huge-pages.h — asking the kernel for transparent huge pages under a
 * big malloc'd array.
 *
 * A reader that fills arrays of hundreds of MB (a snapshot's history, the
 * pickle memo) spends a large part of its time in page faults of that fresh
 * memory, one per 4 KiB; on a system whose transparent huge pages are in
 * "madvise" mode (the common default), MADV_HUGEPAGE on the array makes
 * that one fault per 2 MiB. glibc serves blocks this big with their own
 * mmap and grows them with mremap, which keeps the advice, so it is given
 * again only when the block moved or grew (the caller keeps the last
 * pointer and size it advised).
 *
 * Only a hint: where it is not available, or the kernel says no, nothing
 * changes.
 */
#pragma once

#include <glib.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

#define WICK_HUGE_PAGE ((gsize)2 << 20)

typedef struct
{
  gconstpointer data;
  gsize size;
} WickHugePagesAdvised;

/* Advises the pages of the malloc'd block at @data, when it
 * is at least 4 MiB and is not the block (or the size) advised last. */
static inline void
wick_huge_pages_advise (gconstpointer data, WickHugePagesAdvised *last)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  if (data == NULL)
    return;
  gsize size = malloc_usable_size ((void *)data);
  if (size < 2 * WICK_HUGE_PAGE || (data == last->data && size == last->size))
    return;
  last->data = data;
  last->size = size;
  /* The whole pages of the block, not only its 2 MiB-aligned middle: a block
   * of its own mmap is then one mapping still, which mremap can grow (a
   * mapping split by advice on a part of it cannot be, and glibc would copy
   * the block instead). */
  gsize page = 4096;
  guintptr from = (guintptr)data & ~(guintptr)(page - 1);
  guintptr to = ((guintptr)data + size + page - 1) & ~(guintptr)(page - 1);
  (void)madvise ((void *)from, to - from, MADV_HUGEPAGE);
#else
  (void)data;
  (void)last;
#endif
}

/* The same for a GArray's data (nothing when @array is NULL). */
static inline void
wick_huge_pages_advise_array (const GArray *array, WickHugePagesAdvised *last)
{
  if (array != NULL)
    wick_huge_pages_advise (array->data, last);
}
