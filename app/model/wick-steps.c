/* wick-steps.c — see wick-steps.h for the rule. */
#include "config.h"

#include "wick-steps.h"
#include "wick-tracks.h"

#include <string.h>

gboolean
wick_is_profiler_step (const char *name)
{
  const char *p;

  if (name == NULL || !g_str_has_prefix (name, "ProfilerStep#"))
    return FALSE;
  p = name + strlen ("ProfilerStep#");
  if (*p == '\0')
    return FALSE;
  for (; *p; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

static int
compare_span_start (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const WickSpan *spans = user_data;
  guint64 x = spans[*(const guint32 *)a].start_ns, y = spans[*(const guint32 *)b].start_ns;
  return x < y ? -1 : x > y;
}

/* The most repeated name among the direct children of roots, 0 when no name
 * repeats. */
static WickStr
repeated_child_name (const WickSpan *spans, guint n)
{
  g_autoptr (GHashTable) counts = g_hash_table_new (NULL, NULL);
  WickStr best_name = 0;
  guint best = 1;

  for (guint i = 0; i < n; i++)
    {
      gint32 p = spans[i].parent;
      if (p < 0 || spans[p].parent >= 0)
        continue;
      guint count
        = GPOINTER_TO_UINT (g_hash_table_lookup (counts, GUINT_TO_POINTER (spans[i].name))) + 1;
      g_hash_table_insert (counts, GUINT_TO_POINTER (spans[i].name), GUINT_TO_POINTER (count));
      if (count > best || (count == best && best_name != 0 && spans[i].name < best_name))
        {
          best = count;
          best_name = spans[i].name;
        }
    }
  return best_name;
}

WickSteps *
wick_steps_find (WickDocument *document)
{
  g_return_val_if_fail (document != NULL, NULL);
  guint n;
  const WickSpan *spans = wick_document_get_spans (document, &n);
  WickSteps *steps = g_new0 (WickSteps, 1);
  WickStr repeated = 0;

  steps->spans = g_array_new (FALSE, FALSE, sizeof (guint32));
  steps->step_of = g_new (gint32, MAX (n, 1));
  steps->n_spans = n;
  for (guint i = 0; i < n && steps->source == WICK_STEPS_NONE; i++)
    if (wick_is_profiler_step (wick_document_str (document, spans[i].name)))
      steps->source = WICK_STEPS_PROFILER;
  if (steps->source == WICK_STEPS_NONE && (repeated = repeated_child_name (spans, n)) != 0)
    steps->source = WICK_STEPS_REPEATED;
  for (guint i = 0; i < n; i++)
    {
      gboolean is_step = steps->source == WICK_STEPS_PROFILER
                           ? wick_is_profiler_step (wick_document_str (document, spans[i].name))
                           : (repeated != 0 && spans[i].name == repeated && spans[i].parent >= 0
                              && spans[spans[i].parent].parent < 0);
      if (is_step)
        g_array_append_val (steps->spans, i);
    }
  g_array_sort_with_data (steps->spans, compare_span_start, (gpointer)spans);

  /* step_of: a step span's own index, else its nearest step ancestor's; each
   * walk writes its answer along the path, so the whole is linear. */
  for (guint i = 0; i < n; i++)
    steps->step_of[i] = -2;
  for (guint k = 0; k < steps->spans->len; k++)
    steps->step_of[g_array_index (steps->spans, guint32, k)] = (gint32)k;
  for (guint i = 0; i < n; i++)
    {
      guint j = i, depth = 0;
      while (steps->step_of[j] == -2 && spans[j].parent >= 0 && depth++ < 65536)
        j = (guint)spans[j].parent;
      gint32 found = steps->step_of[j] == -2 ? -1 : steps->step_of[j];
      j = i;
      depth = 0;
      while (steps->step_of[j] == -2 && depth++ < 65536)
        {
          steps->step_of[j] = found;
          if (spans[j].parent < 0)
            break;
          j = (guint)spans[j].parent;
        }
    }
  return steps;
}

void
wick_steps_free (WickSteps *steps)
{
  if (steps == NULL)
    return;
  g_array_unref (steps->spans);
  g_free (steps->step_of);
  g_free (steps);
}

static gint32
step_of_span (const WickSteps *steps, gint32 span, guint n_spans)
{
  return span >= 0 && (guint)span < steps->n_spans && (guint)span < n_spans ? steps->step_of[span]
                                                                            : -1;
}

/* The step whose [start, end) holds @t, -1 when none (steps may overlap:
 * the latest one starting at or before @t). */
static gint32
step_at (const WickSteps *steps, const WickSpan *spans, guint64 t)
{
  guint lo = 0, hi = steps->spans->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (spans[g_array_index (steps->spans, guint32, mid)].start_ns <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return -1;
  const WickSpan *s = &spans[g_array_index (steps->spans, guint32, lo - 1)];
  return t < s->start_ns + s->duration_ns ? (gint32)(lo - 1) : -1;
}

/* A device interval's step: that of the span that launched it — a
 * candle-graph interval's span, a Chrome kernel's flow source (ac2g) — else,
 * for a Chrome kernel without a flow, the step running when it started. */
static gint32
device_step (WickTracks *t, const WickSteps *steps, const WickSpan *spans, guint n_spans,
             const WickDeviceInterval *intervals, guint n_intervals, const WickDeviceSlice *d,
             guint index)
{
  if (d->source >= 0)
    return (guint)d->source < n_intervals ? step_of_span (steps, intervals[d->source].span, n_spans)
                                          : -1;
  WickEventRef ref = { WICK_EVENT_DEVICE, index };
  guint32 flows[8];
  guint n = MIN (wick_tracks_event_flows (t, ref, flows, G_N_ELEMENTS (flows)), 8);
  const WickFlow *all = wick_tracks_get_flows (t, NULL);
  for (guint k = 0; k < n; k++)
    {
      const WickFlow *f = &all[flows[k]];
      if (f->to.event.kind == WICK_EVENT_DEVICE && f->to.event.index == index
          && f->from.event.kind == WICK_EVENT_SLICE)
        return step_of_span (steps, (gint32)f->from.event.index, n_spans);
    }
  return step_at (steps, spans, d->start_ns);
}

GArray *
wick_steps_statistics (WickDocument *document, const WickSteps *steps)
{
  g_return_val_if_fail (document != NULL && steps != NULL, NULL);
  guint n_spans, n_ops, n_intervals, n_memory;
  const WickSpan *spans = wick_document_get_spans (document, &n_spans);
  const WickOp *ops = wick_document_get_ops (document, &n_ops);
  const WickDeviceInterval *intervals = wick_document_get_device_intervals (document, &n_intervals);
  const WickMemoryEvent *memory = wick_document_get_memory (document, &n_memory);
  GArray *stats = g_array_sized_new (FALSE, TRUE, sizeof (WickStepStats), steps->spans->len);

  g_array_set_size (stats, steps->spans->len);
  for (guint k = 0; k < steps->spans->len; k++)
    {
      WickStepStats *s = &g_array_index (stats, WickStepStats, k);
      s->span = g_array_index (steps->spans, guint32, k);
      s->name = spans[s->span].name;
      s->start_ns = spans[s->span].start_ns;
      s->duration_ns = spans[s->span].duration_ns;
      s->index = k + 1;
      s->measured = (spans[s->span].flags & WICK_SPAN_FLAG_MEASURED) != 0;
    }
#define STEP_OF(span) step_of_span (steps, (span), n_spans)
  for (guint i = 0; i < MIN (n_spans, steps->n_spans); i++)
    if (steps->step_of[i] >= 0 && g_array_index (stats, WickStepStats, steps->step_of[i]).span != i)
      {
        WickStepStats *s = &g_array_index (stats, WickStepStats, steps->step_of[i]);
        s->n_spans++;
        s->measured |= (spans[i].flags & WICK_SPAN_FLAG_MEASURED) != 0;
      }
  for (guint i = 0; i < n_ops; i++)
    if (STEP_OF (ops[i].span) >= 0)
      g_array_index (stats, WickStepStats, STEP_OF (ops[i].span)).n_ops++;
  WickTracks *t = wick_document_get_tracks (document);
  guint n_device;
  const WickDeviceSlice *device = wick_tracks_get_device_slices (t, &n_device);
  for (guint i = 0; i < n_device; i++)
    {
      gint32 step = device_step (t, steps, spans, n_spans, intervals, n_intervals, &device[i], i);
      if (step < 0)
        continue;
      WickStepStats *s = &g_array_index (stats, WickStepStats, step);
      s->device_ns += device[i].duration_ns;
      s->n_device++;
    }
  for (guint i = 0; i < n_memory; i++)
    if (memory[i].action == WICK_MEMORY_ALLOC && STEP_OF (memory[i].span) >= 0)
      g_array_index (stats, WickStepStats, STEP_OF (memory[i].span)).allocated_bytes
        += memory[i].bytes;
#undef STEP_OF
  return stats;
}
