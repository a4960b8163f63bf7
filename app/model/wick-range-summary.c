/* wick-range-summary.c — a time range's spans aggregated by name. */
#include "wick-range-summary.h"

typedef struct
{
  WickRangeShare share;
  guint32 first; /* order of first appearance, for a stable sort */
} Slot;

static int
compare_slots (gconstpointer a, gconstpointer b)
{
  const Slot *x = a, *y = b;
  if (x->share.ns != y->share.ns)
    return x->share.ns > y->share.ns ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first ? 1 : 0;
}

WickRangeSummary *
wick_range_summary_new (WickDocument *document, guint64 start_ns, guint64 end_ns)
{
  g_return_val_if_fail (document != NULL, NULL);
  if (end_ns <= start_ns)
    return NULL;
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  g_autoptr (GHashTable) by_name = g_hash_table_new (NULL, NULL);
  g_autoptr (GArray) slots = g_array_new (FALSE, FALSE, sizeof (Slot));
  WickRangeSummary *summary = g_new0 (WickRangeSummary, 1);
  summary->start_ns = start_ns;
  summary->end_ns = end_ns;
  for (guint i = 0; i < n; i++)
    {
      guint64 start = spans[i].start_ns;
      guint64 end
        = start + spans[i].duration_ns < start ? G_MAXUINT64 : start + spans[i].duration_ns;
      if (!(spans[i].flags & WICK_SPAN_FLAG_CLOSED) || end <= start_ns || start >= end_ns)
        continue;
      summary->n_overlapping++;
      gpointer value;
      if (!g_hash_table_lookup_extended (by_name, GUINT_TO_POINTER (spans[i].name), NULL, &value))
        {
          Slot slot = { { spans[i].name, 0, 0 }, slots->len };
          g_array_append_val (slots, slot);
          value = GUINT_TO_POINTER (slots->len);
          g_hash_table_insert (by_name, GUINT_TO_POINTER (spans[i].name), value);
        }
      Slot *slot = &g_array_index (slots, Slot, GPOINTER_TO_UINT (value) - 1);
      slot->share.ns += MIN (end, end_ns) - MAX (start, start_ns);
      slot->share.count++;
    }
  g_array_sort (slots, compare_slots);
  summary->shares = g_array_sized_new (FALSE, FALSE, sizeof (WickRangeShare), slots->len);
  for (guint i = 0; i < slots->len; i++)
    g_array_append_val (summary->shares, g_array_index (slots, Slot, i).share);
  return summary;
}

void
wick_range_summary_free (WickRangeSummary *summary)
{
  if (summary == NULL)
    return;
  g_clear_pointer (&summary->shares, g_array_unref);
  g_free (summary);
}
