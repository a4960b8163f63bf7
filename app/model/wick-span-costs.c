/* wick-span-costs.c — per-span contents and costs (see the header). */
#include "config.h"

#include "wick-span-costs.h"
#include "wick-span-costs-private.h"

#include <string.h>

/* Compressed rows: for span s, items[first[s] .. first[s + 1]). */
typedef struct
{
  guint32 *first;
  guint32 *items;
} SpanRows;

struct _WickSpanIndex
{
  guint n_spans;
  SpanRows ops, tensors, memory, intervals, children;
  guint64 *self_ns;
  guint64 *allocated;
  guint64 *freed;
};

static void
rows_build (SpanRows *rows, guint n_spans, guint n, const gint32 *span_of)
{
  guint32 *cursor;

  rows->first = g_new0 (guint32, n_spans + 1);
  rows->items = g_new (guint32, MAX (1, n));
  for (guint i = 0; i < n; i++)
    if (span_of[i] >= 0)
      rows->first[span_of[i] + 1]++;
  for (guint s = 0; s < n_spans; s++)
    rows->first[s + 1] += rows->first[s];
  cursor = g_memdup2 (rows->first, sizeof (guint32) * (n_spans + 1));
  for (guint i = 0; i < n; i++)
    if (span_of[i] >= 0)
      rows->items[cursor[span_of[i]]++] = i;
  g_free (cursor);
}

static void
rows_clear (SpanRows *rows)
{
  g_free (rows->first);
  g_free (rows->items);
}

static const guint32 *
rows_get (const SpanRows *rows, guint span, guint *n)
{
  *n = rows->first[span + 1] - rows->first[span];
  return rows->items + rows->first[span];
}

/* The span index of each record, looked up by span_id (the document's `span`
 * fields are filled by analysis; this works before it too). */
#define SPAN_OF(array, Type, n)                                                                    \
  G_STMT_START                                                                                     \
  {                                                                                                \
    const Type *items = wick_document_get_##array (document, &n);                                  \
    span_of = g_renew (gint32, span_of, MAX (1, n));                                               \
    for (guint i = 0; i < n; i++)                                                                  \
      span_of[i]                                                                                   \
        = wick_document_find_span (document, wick_document_str (document, items[i].span_id));      \
  }                                                                                                \
  G_STMT_END

WickSpanIndex *
wick_span_index_new (WickDocument *document)
{
  WickSpanIndex *index = g_new0 (WickSpanIndex, 1);
  const WickSpan *spans = wick_document_get_spans (document, &index->n_spans);
  const WickMemoryEvent *memory;
  gint32 *span_of = NULL;
  guint n;

  SPAN_OF (ops, WickOp, n);
  rows_build (&index->ops, index->n_spans, n, span_of);
  SPAN_OF (tensors, WickTensor, n);
  rows_build (&index->tensors, index->n_spans, n, span_of);
  SPAN_OF (memory, WickMemoryEvent, n);
  rows_build (&index->memory, index->n_spans, n, span_of);
  SPAN_OF (device_intervals, WickDeviceInterval, n);
  rows_build (&index->intervals, index->n_spans, n, span_of);

  span_of = g_renew (gint32, span_of, MAX (1, index->n_spans));
  /* The parent indices the document resolved (linear); only a span whose
   * parent it left unresolved (unknown, or cut out of a cycle) is looked up
   * by id, as before. */
  for (guint i = 0; i < index->n_spans; i++)
    span_of[i]
      = spans[i].parent >= 0 ? spans[i].parent
        : spans[i].parent_id
          ? wick_document_find_span (document, wick_document_str (document, spans[i].parent_id))
          : -1;
  rows_build (&index->children, index->n_spans, index->n_spans, span_of);

  index->self_ns = g_new0 (guint64, MAX (1, index->n_spans));
  index->allocated = g_new0 (guint64, MAX (1, index->n_spans));
  index->freed = g_new0 (guint64, MAX (1, index->n_spans));
  for (guint s = 0; s < index->n_spans; s++)
    {
      guint64 children = 0;
      const guint32 *kids = rows_get (&index->children, s, &n);
      for (guint k = 0; k < n; k++)
        if (kids[k] != s)
          children += spans[kids[k]].duration_ns;
      index->self_ns[s] = spans[s].duration_ns > children ? spans[s].duration_ns - children : 0;
    }
  memory = wick_document_get_memory (document, &n);
  SPAN_OF (memory, WickMemoryEvent, n);
  for (guint i = 0; i < n; i++)
    {
      if (span_of[i] < 0)
        continue;
      if (memory[i].action == WICK_MEMORY_ALLOC)
        index->allocated[span_of[i]] += memory[i].bytes;
      else
        index->freed[span_of[i]] += memory[i].bytes;
    }
  g_free (span_of);
  return index;
}

void
wick_span_index_free (WickSpanIndex *index)
{
  if (index == NULL)
    return;
  rows_clear (&index->ops);
  rows_clear (&index->tensors);
  rows_clear (&index->memory);
  rows_clear (&index->intervals);
  rows_clear (&index->children);
  g_free (index->self_ns);
  g_free (index->allocated);
  g_free (index->freed);
  g_free (index);
}

const guint32 *
wick_span_index_get_ops (WickSpanIndex *index, guint span, guint *n)
{
  g_return_val_if_fail (span < index->n_spans, NULL);
  return rows_get (&index->ops, span, n);
}

const guint32 *
wick_span_index_get_tensors (WickSpanIndex *index, guint span, guint *n)
{
  g_return_val_if_fail (span < index->n_spans, NULL);
  return rows_get (&index->tensors, span, n);
}

const guint32 *
wick_span_index_get_memory (WickSpanIndex *index, guint span, guint *n)
{
  g_return_val_if_fail (span < index->n_spans, NULL);
  return rows_get (&index->memory, span, n);
}

const guint32 *
wick_span_index_get_device_intervals (WickSpanIndex *index, guint span, guint *n)
{
  g_return_val_if_fail (span < index->n_spans, NULL);
  return rows_get (&index->intervals, span, n);
}

const guint32 *
wick_span_index_get_children (WickSpanIndex *index, guint span, guint *n)
{
  g_return_val_if_fail (span < index->n_spans, NULL);
  return rows_get (&index->children, span, n);
}

guint64
wick_span_index_get_self_ns (WickSpanIndex *index, guint span)
{
  g_return_val_if_fail (span < index->n_spans, 0);
  return index->self_ns[span];
}

guint64
wick_span_index_get_bytes_allocated (WickSpanIndex *index, guint span)
{
  g_return_val_if_fail (span < index->n_spans, 0);
  return index->allocated[span];
}

guint64
wick_span_index_get_bytes_freed (WickSpanIndex *index, guint span)
{
  g_return_val_if_fail (span < index->n_spans, 0);
  return index->freed[span];
}

static int
compare_costs (gconstpointer a, gconstpointer b, gpointer document)
{
  const WickSpanCost *x = a, *y = b;

  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return strcmp (wick_document_str (document, x->name), wick_document_str (document, y->name));
}

GArray *
wick_span_costs_by_name (WickDocument *document, WickSpanIndex *index)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  GArray *costs = g_array_new (FALSE, TRUE, sizeof (WickSpanCost));
  g_autoptr (GHashTable) by_name = g_hash_table_new (NULL, NULL);

  for (guint s = 0; s < n; s++)
    {
      gpointer slot;
      WickSpanCost *cost;
      if (wick_document_is_synthetic_span (document, s))
        continue;
      if (!g_hash_table_lookup_extended (by_name, GUINT_TO_POINTER (spans[s].name), NULL, &slot))
        {
          WickSpanCost fresh = { spans[s].name, 0, 0, 0, 0, 0.0 };
          slot = GUINT_TO_POINTER (costs->len);
          g_array_append_val (costs, fresh);
          g_hash_table_insert (by_name, GUINT_TO_POINTER (spans[s].name), slot);
        }
      cost = &g_array_index (costs, WickSpanCost, GPOINTER_TO_UINT (slot));
      cost->count++;
      cost->total_ns += spans[s].duration_ns;
      cost->self_ns += wick_span_index_get_self_ns (index, s);
      cost->max_ns = MAX (cost->max_ns, spans[s].duration_ns);
    }
  for (guint i = 0; i < costs->len; i++)
    {
      WickSpanCost *cost = &g_array_index (costs, WickSpanCost, i);
      cost->mean_ns = (double)cost->total_ns / (double)cost->count;
    }
  g_array_sort_with_data (costs, compare_costs, document);
  return costs;
}

WickSpanCostInput *
wick_span_costs_copy_spans (WickDocument *document, guint *n_spans)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  WickSpanCostInput *copy = g_new (WickSpanCostInput, MAX (1, n));
  for (guint s = 0; s < n; s++)
    {
      /* the parent as wick_span_index_new() resolves it */
      gint32 parent = spans[s].parent;
      if (parent < 0 && spans[s].parent_id)
        parent = wick_document_find_span (document, wick_document_str (document, spans[s].parent_id));
      copy[s] = (WickSpanCostInput){ spans[s].name, parent,
                                     wick_document_is_synthetic_span (document, s),
                                     spans[s].duration_ns };
    }
  *n_spans = n;
  return copy;
}

static int
compare_costs_by_id (gconstpointer a, gconstpointer b)
{
  const WickSpanCost *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

GArray *
wick_span_costs_from_copy (const WickSpanCostInput *spans, guint n_spans)
{
  g_autofree guint64 *children = g_new0 (guint64, MAX (1, n_spans));
  for (guint s = 0; s < n_spans; s++)
    if (spans[s].parent >= 0 && (guint)spans[s].parent < n_spans && (guint)spans[s].parent != s)
      children[spans[s].parent] += spans[s].duration_ns;
  GArray *costs = g_array_new (FALSE, TRUE, sizeof (WickSpanCost));
  g_autoptr (GHashTable) by_name = g_hash_table_new (NULL, NULL);
  for (guint s = 0; s < n_spans; s++)
    {
      gpointer slot;
      if (spans[s].synthetic)
        continue;
      if (!g_hash_table_lookup_extended (by_name, GUINT_TO_POINTER (spans[s].name), NULL, &slot))
        {
          WickSpanCost fresh = { spans[s].name, 0, 0, 0, 0, 0.0 };
          slot = GUINT_TO_POINTER (costs->len);
          g_array_append_val (costs, fresh);
          g_hash_table_insert (by_name, GUINT_TO_POINTER (spans[s].name), slot);
        }
      WickSpanCost *cost = &g_array_index (costs, WickSpanCost, GPOINTER_TO_UINT (slot));
      guint64 duration = spans[s].duration_ns;
      cost->count++;
      cost->total_ns += duration;
      cost->self_ns += duration > children[s] ? duration - children[s] : 0;
      cost->max_ns = MAX (cost->max_ns, duration);
    }
  for (guint i = 0; i < costs->len; i++)
    {
      WickSpanCost *cost = &g_array_index (costs, WickSpanCost, i);
      cost->mean_ns = (double)cost->total_ns / (double)cost->count;
    }
  g_array_sort (costs, compare_costs_by_id);
  return costs;
}

void
wick_span_costs_sort (WickDocument *document, GArray *costs)
{
  g_array_sort_with_data (costs, compare_costs, document);
}
