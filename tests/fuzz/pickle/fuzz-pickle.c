/* fuzz-pickle.c — libFuzzer target for the data-only pickle reader and the
 * CUDA memory snapshot model built on it. Every input goes through both:
 * - wick_pickle_parse_data: a value, or an error that names a byte;
 * - wick_memory_snapshot_load_data: a snapshot whose derived figures hold
 *   together (the series starts at its first point, every block lies in its
 *   segment's block range, stacks' frames exist), or an error;
 * - the reader twice, the ordinary way and with the record callback that the
 *   model reads history entries with (tests/model/pickle-records-diff.h):
 *   the same callbacks, values, result or error, else abort.
 * Bounds (lengths, depth, memo, stack) keep every input small in memory. */
#include "../../model/pickle-records-diff.h"
#include "wick-memory-snapshot.h"
#include "wick-memory-snapshot-private.h"
#include "wick-pickle.h"
#include "wick-pickle-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_error (GError *error)
{
  if (error == NULL || error->message == NULL || error->message[0] == '\0')
    abort ();
}

static void
check_snapshot (WickMemorySnapshot *s)
{
  guint n_segments, n_blocks, n_entries, n_points, n_allocations;
  const WickSnapshotSegment *segments = wick_memory_snapshot_get_segments (s, &n_segments);
  wick_memory_snapshot_get_blocks (s, &n_blocks);
  const WickSnapshotEntry *entries = wick_memory_snapshot_get_entries (s, &n_entries);
  for (guint i = 0; i < n_segments; i++)
    if ((guint64)segments[i].first_block + segments[i].n_blocks > n_blocks
        || segments[i].fragmentation < 0.0 || segments[i].fragmentation > 1.0)
      abort ();
  for (guint i = 0; i < n_entries; i++)
    {
      guint n;
      const guint32 *frames = wick_memory_snapshot_get_stack (s, entries[i].stack, &n);
      for (guint f = 0; f < n; f++)
        if (wick_memory_snapshot_get_frame (s, frames[f]) == NULL)
          abort ();
      g_free (wick_memory_snapshot_format_frame (s, n > 0 ? frames[0] : 0));
      (void)wick_memory_snapshot_stack_category (s, entries[i].stack);
    }
  wick_memory_snapshot_get_allocated_series (s, &n_points);
  if (n_points < 1)
    abort ();
  const WickSnapshotAllocation *allocations
    = wick_memory_snapshot_get_allocations (s, &n_allocations);
  GArray *live = wick_memory_snapshot_live_at (
    s, entries != NULL && n_entries > 0 ? entries[0].time_us : 0, 5);
  for (guint i = 0; i < live->len; i++)
    if (g_array_index (live, guint32, i) >= n_allocations)
      abort ();
  (void)allocations;
  g_array_unref (live);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  WickPickleValue value;
  if (wick_pickle_parse_data (data, size, &value, &error))
    wick_pickle_value_clear (&value);
  else
    check_error (error);
  g_clear_error (&error);

  char *diff = records_diff (data, size);
  if (diff != NULL)
    {
      fprintf (stderr, "fuzz-pickle: the record path differs:\n%s\n", diff);
      abort ();
    }

  WickMemorySnapshot *s = wick_memory_snapshot_load_data (data, size, "fuzz.pickle", &error);
  if (s != NULL)
    {
      check_snapshot (s);
      wick_memory_snapshot_free (s);
    }
  else
    check_error (error);
  g_clear_error (&error);
  return 0;
}
