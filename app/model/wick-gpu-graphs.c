/* wick-gpu-graphs.c — see wick-gpu-graphs.h for the contract. */
#include "wick-gpu-graphs.h"

#include <math.h>
#include <string.h>

#include "wick-chrome-stream.h"

struct _WickGpuGraphs
{
  GArray *graphs;          /* WickGpuGraph */
  WickGpuGraphNode *nodes; /* per device slice */
  guint n_device;
  GPtrArray *stages;       /* char *, owned: the graphs' stage names */
};

typedef struct
{
  guint32 launcher;
  guint64 start;
  guint32 index;
} GraphItem;

static int
compare_graph_items (gconstpointer pa, gconstpointer pb)
{
  const GraphItem *a = pa, *b = pb;
  if (a->launcher != b->launcher)
    return a->launcher < b->launcher ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* The stage named by a "wick stage: NAME" slice enclosing span @span (at any
 * depth), NULL when none; pooled, valid as long as the document. */
static const char *
wick_gpu_stage_of_span (WickDocument *document, guint32 span)
{
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  /* a bounded walk: parents are earlier on the thread's stack, never a cycle
   * in a Chrome model, but a candle-graph document's ids could make one */
  for (guint steps = 0; span < n && steps < 4096; steps++)
    {
      const char *name = wick_document_str (document, spans[span].name);
      if (name && g_str_has_prefix (name, WICK_GPU_STAGE_PREFIX)
          && name[strlen (WICK_GPU_STAGE_PREFIX)] != '\0')
        return name + strlen (WICK_GPU_STAGE_PREFIX);
      if (spans[span].parent < 0)
        break;
      span = (guint32)spans[span].parent;
    }
  return NULL;
}

static gint64
graph_id_of (WickTracks *tracks, guint32 device)
{
  const char *args = wick_tracks_event_args (tracks, (WickEventRef){ WICK_EVENT_DEVICE, device });
  double v;
  if (args != NULL && wick_chrome_args_number (args, strlen (args), "graph id", &v)
      && fabs (v) < 9e18 && v >= 0)
    return (gint64)v;
  return -1;
}

WickGpuGraphs *
wick_gpu_graphs_new (WickDocument *document)
{
  WickGpuGraphs *self = g_new0 (WickGpuGraphs, 1);
  WickTracks *tracks = wick_document_get_tracks (document);
  const WickDeviceSlice *d = wick_tracks_get_device_slices (tracks, &self->n_device);
  self->graphs = g_array_new (FALSE, FALSE, sizeof (WickGpuGraph));
  self->stages = g_ptr_array_new_with_free_func (g_free);
  self->nodes = g_new (WickGpuGraphNode, MAX (self->n_device, 1));
  for (guint i = 0; i < self->n_device; i++)
    self->nodes[i] = (WickGpuGraphNode){ G_MAXUINT32, 0, 0 };

  g_autoptr (GArray) items = g_array_new (FALSE, FALSE, sizeof (GraphItem));
  for (guint i = 0; i < self->n_device; i++)
    if ((d[i].flags & WICK_DEVICE_FLAG_GRAPH) && d[i].launcher != G_MAXUINT32)
      {
        GraphItem item = { d[i].launcher, d[i].start_ns, i };
        g_array_append_val (items, item);
      }
  if (items->len == 0)
    return self;
  g_array_sort (items, compare_graph_items);
  const GraphItem *it = (const GraphItem *)(gconstpointer)items->data;

  /* graph key (the name sequence's hash, or the graph id) -> graph indices + 1 */
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) firsts = g_array_new (FALSE, FALSE, sizeof (guint)); /* per graph: its first replay in items */
  /* keys live in an array that grows: hash on a copy per graph, heap-held */
  GPtrArray *held = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < items->len;)
    {
      guint end = i;
      while (end < items->len && it[end].launcher == it[i].launcher)
        end++;
      guint n_nodes = end - i;
      gint64 graph_id = graph_id_of (tracks, it[i].index);
      guint64 h = 1469598103934665603ull;
      for (guint k = i; k < end; k++)
        h = (h ^ d[it[k].index].name) * 1099511628211ull;
      h = (h ^ n_nodes) * 1099511628211ull;
      gint64 key = graph_id >= 0 ? -1 - graph_id : (gint64)(h >> 1);
      guint graph = G_MAXUINT;
      GSList *candidates = g_hash_table_lookup (by_key, &key);
      for (GSList *l = candidates; l != NULL && graph == G_MAXUINT; l = l->next)
        {
          guint g = GPOINTER_TO_UINT (l->data) - 1;
          if (graph_id >= 0)
            {
              graph = g;
              break;
            }
          /* the same names in the same order: the same graph */
          guint f = g_array_index (firsts, guint, g);
          const WickGpuGraph *gr = &g_array_index (self->graphs, WickGpuGraph, g);
          if (gr->n_nodes != n_nodes)
            continue;
          gboolean same = TRUE;
          for (guint k = 0; k < n_nodes && same; k++)
            same = d[it[f + k].index].name == d[it[i + k].index].name;
          if (same)
            graph = g;
        }
      if (graph == G_MAXUINT)
        {
          graph = self->graphs->len;
          const char *stage = wick_gpu_stage_of_span (document, it[i].launcher);
          char *owned = stage ? g_strdup (stage) : NULL;
          if (owned)
            g_ptr_array_add (self->stages, owned);
          WickGpuGraph gr = { n_nodes, 0, 0, graph_id, owned, it[i].launcher };
          g_array_append_val (self->graphs, gr);
          g_array_append_val (firsts, i);
          gint64 *stored = g_new (gint64, 1);
          *stored = key;
          g_ptr_array_add (held, stored);
          candidates = g_slist_append (candidates, GUINT_TO_POINTER (graph + 1));
          g_hash_table_replace (by_key, stored, candidates);
        }
      WickGpuGraph *gr = &g_array_index (self->graphs, WickGpuGraph, graph);
      for (guint k = i; k < end; k++)
        {
          self->nodes[it[k].index] = (WickGpuGraphNode){ graph, gr->n_replays, k - i };
          gr->gpu_ns += d[it[k].index].duration_ns;
        }
      gr->n_replays++;
      i = end;
    }
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, by_key);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_slist_free (value);
  g_hash_table_remove_all (by_key);
  g_ptr_array_unref (held);
  return self;
}

void
wick_gpu_graphs_free (WickGpuGraphs *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->graphs);
  g_ptr_array_unref (self->stages);
  g_free (self->nodes);
  g_free (self);
}

const WickGpuGraph *
wick_gpu_graphs_get (WickGpuGraphs *self, guint *n)
{
  if (n)
    *n = self->graphs->len;
  return (const WickGpuGraph *)(gconstpointer)self->graphs->data;
}

gboolean
wick_gpu_graphs_node (WickGpuGraphs *self, guint32 device, WickGpuGraphNode *node)
{
  if (device >= self->n_device || self->nodes[device].graph == G_MAXUINT32)
    {
      *node = (WickGpuGraphNode){ G_MAXUINT32, 0, 0 };
      return FALSE;
    }
  *node = self->nodes[device];
  return TRUE;
}

WickCompiledKind
wick_gpu_compiled_kind (const char *name)
{
  if (name == NULL)
    return WICK_COMPILED_NONE;
  if (g_str_has_prefix (name, "Torch-Compiled Region"))
    return WICK_COMPILED_REGION;
  if (strcmp (name, "CompiledFunction") == 0 || strcmp (name, "CompiledFunctionBackward") == 0
      || g_str_has_suffix (name, ": CompiledFunctionBackward"))
    return WICK_COMPILED_FUNCTION;
  if (g_str_has_prefix (name, "## Call CompiledFxGraph"))
    return WICK_COMPILED_GRAPH_CALL;
  if (strcmp (name, "TorchDynamo Cache Lookup") == 0)
    return WICK_COMPILED_GUARD;
  return WICK_COMPILED_NONE;
}

gboolean
wick_gpu_is_triton_kernel (const char *name)
{
  return name != NULL && g_str_has_prefix (name, "triton_");
}
