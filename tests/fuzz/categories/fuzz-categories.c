/* fuzz-categories.c — libFuzzer target for the categories from records
 * (app/model/wick-snapshot-categories.c): the matcher's two inputs, an
 * allocator snapshot and a Wick trace, from one input.
 *
 * Input: the snapshot's pickle bytes, then SEPARATOR, then the trace's JSONL
 * (without a separator the whole input is the pickle and the trace is
 * empty). The pickle goes through wick_memory_snapshot_load_data, the trace
 * line by line through a document in extension mode (wick_address read);
 * when both load, the matcher runs and its results must hold together:
 * the counts add up (matched + unmatched + ambiguous = allocations, the same
 * for the live ones and for the sources), every allocation's category is
 * one of the categories and its record an index of the document's memory
 * records or none, and the bytes by category at the snapshot and at a few
 * times are computed. Anything else aborts. */
#include "wick-document.h"
#include "wick-memory-snapshot.h"
#include "wick-memory-snapshot-private.h"
#include "wick-snapshot-categories.h"

#include <stdlib.h>
#include <string.h>

#define SEPARATOR "\n\x01WICK-TRACE\x01\n"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const uint8_t *
find_separator (const uint8_t *data, size_t size)
{
  const size_t n = sizeof SEPARATOR - 1;
  for (size_t i = 0; i + n <= size; i++)
    if (data[i] == '\n' && memcmp (data + i, SEPARATOR, n) == 0)
      return data + i;
  return NULL;
}

static void
check (WickSnapshotCategories *categories, WickMemorySnapshot *snapshot, WickDocument *document)
{
  const WickSnapshotMatchCounts *k = wick_snapshot_categories_get_counts (categories);
  guint n_allocations, n_memory;
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (snapshot, &n_allocations);
  wick_document_get_memory (document, &n_memory);
  if (k->allocations != n_allocations || k->matched + k->unmatched + k->ambiguous != k->allocations
      || k->live_matched + k->live_unmatched + k->live_ambiguous != k->live
      || k->live > k->allocations
      || k->from_record + k->from_frames + k->unknown != k->allocations
      || k->from_record > k->matched || k->lifetimes_matched > k->record_lifetimes)
    abort ();
  for (guint i = 0; i < n_allocations; i++)
    {
      WickSnapshotMatch match;
      WickSnapshotCategorySource source;
      guint32 record;
      WickMemoryCategory category
        = wick_snapshot_categories_get (categories, i, &match, &source, &record);
      if ((guint)category >= WICK_SNAPSHOT_N_CATEGORIES
          || (record != G_MAXUINT32 && record >= n_memory)
          || (match == WICK_SNAPSHOT_MATCHED) != (record != G_MAXUINT32)
          || (source == WICK_SNAPSHOT_CATEGORY_FROM_RECORD && match != WICK_SNAPSHOT_MATCHED))
        abort ();
    }
  guint64 bytes[WICK_SNAPSHOT_N_CATEGORIES];
  wick_snapshot_categories_at_snapshot (categories, bytes);
  gint64 times[] = { G_MININT64, -1, 0, G_MAXINT64,
                     n_allocations > 0 ? allocations[0].alloc_us : 1,
                     n_allocations > 0 ? allocations[n_allocations - 1].alloc_us : 2 };
  for (gsize i = 0; i < G_N_ELEMENTS (times); i++)
    wick_snapshot_categories_at (categories, times[i], bytes);
  (void)wick_snapshot_clock_to_string (k->clock);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const uint8_t *separator = find_separator (data, size);
  size_t pickle_size = separator != NULL ? (size_t)(separator - data) : size;
  const char *p = separator != NULL ? (const char *)separator + sizeof SEPARATOR - 1 : NULL;
  const char *end = (const char *)data + size;

  GError *error = NULL;
  WickMemorySnapshot *snapshot = wick_memory_snapshot_load_data (data, pickle_size, "fuzz",
                                                                 &error);
  if (snapshot == NULL)
    {
      if (error == NULL || error->message == NULL || error->message[0] == '\0')
        abort ();
      g_clear_error (&error);
      return 0;
    }
  WickDocument *document = wick_document_new_with_extensions (TRUE);
  gboolean reading = TRUE;
  while (p != NULL && p < end && reading)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      const char *line_end = nl ? nl : end;
      reading = wick_document_feed_line (document, p, (gsize)(line_end - p), NULL);
      p = nl ? nl + 1 : end;
    }
  if (wick_document_finish (document, NULL))
    {
      WickSnapshotCategories *categories = wick_snapshot_categories_new (snapshot, document);
      check (categories, snapshot, document);
      wick_snapshot_categories_free (categories);
    }
  g_object_unref (document);
  wick_memory_snapshot_free (snapshot);
  return 0;
}
