/* wick-device-clock.c — see wick-device-clock.h for the rule.
 *
 * The fit is kept as what it is made of, so that records appended to a live
 * document fold in without a pass over the document: per clock the earliest
 * device start, and over its anchored intervals the largest launch - start,
 * the latest start and whether any started before its launch; the host's
 * start and the end of its closed spans, with the spans still open read
 * again each time. Intervals whose span is not resolved yet are kept aside
 * and looked at again: the live analysis resolves them later. */
#include "config.h"

#include "wick-device-clock.h"

struct _WickDeviceClocks
{
  GHashTable *offsets; /* clock_id WickStr -> ClockFit */
  guint n_spans, n_intervals; /* folded in */
  gint64 host_start;          /* G_MAXINT64 before any span */
  gint64 closed_end;          /* the latest end of a closed span */
  gint64 host_end;            /* and of any span, the open ones as last read */
  GArray *open_spans;         /* guint32: spans not closed when folded in */
  GArray *unanchored;         /* guint32: intervals whose span may still resolve */
};

typedef struct
{
  gint64 need;     /* max(span start - device start) over anchored intervals */
  gint64 earliest; /* earliest device start of any interval */
  gint64 latest;   /* latest device start of an anchored interval */
  gboolean before_launch; /* an anchored interval starts before its span */
  gboolean anchored;
} ClockFit;

static gint64
clamp_ns (guint64 ns)
{
  return (gint64)MIN (ns, (guint64)G_MAXINT64 / 4);
}

static gint64
span_end (const WickSpan *s)
{
  return clamp_ns (s->start_ns) + clamp_ns (s->duration_ns);
}

static ClockFit *
clock_fit (WickDeviceClocks *self, WickStr clock_id)
{
  ClockFit *fit = g_hash_table_lookup (self->offsets, GUINT_TO_POINTER (clock_id));
  if (fit == NULL)
    {
      fit = g_new0 (ClockFit, 1);
      fit->earliest = G_MAXINT64;
      g_hash_table_insert (self->offsets, GUINT_TO_POINTER (clock_id), fit);
    }
  return fit;
}

/* An interval starting at @start with its span resolved, launched at @launch. */
static void
fit_anchor (ClockFit *fit, gint64 start, gint64 launch)
{
  fit->before_launch |= start < launch;
  fit->need = fit->anchored ? MAX (fit->need, launch - start) : launch - start;
  fit->latest = fit->anchored ? MAX (fit->latest, start) : start;
  fit->anchored = TRUE;
}

WickDeviceClocks *
wick_device_clocks_new (WickDocument *document)
{
  g_return_val_if_fail (document != NULL, NULL);
  WickDeviceClocks *self = g_new0 (WickDeviceClocks, 1);
  self->offsets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  self->host_start = G_MAXINT64;
  self->open_spans = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->unanchored = g_array_new (FALSE, FALSE, sizeof (guint32));
  wick_device_clocks_update (self, document);
  return self;
}

void
wick_device_clocks_update (WickDeviceClocks *self, WickDocument *document)
{
  g_return_if_fail (self != NULL && document != NULL);
  guint n_spans, n;
  const WickSpan *spans = wick_document_get_spans (document, &n_spans);
  const WickDeviceInterval *d = wick_document_get_device_intervals (document, &n);
  g_return_if_fail (n_spans >= self->n_spans && n >= self->n_intervals);

  guint kept = 0;
  for (guint k = 0; k < self->open_spans->len; k++)
    {
      guint32 i = g_array_index (self->open_spans, guint32, k);
      if (spans[i].flags & WICK_SPAN_FLAG_CLOSED)
        self->closed_end = MAX (self->closed_end, span_end (&spans[i]));
      else
        g_array_index (self->open_spans, guint32, kept++) = i;
    }
  g_array_set_size (self->open_spans, kept);
  for (guint i = self->n_spans; i < n_spans; i++)
    {
      self->host_start = MIN (self->host_start, clamp_ns (spans[i].start_ns));
      if (spans[i].flags & WICK_SPAN_FLAG_CLOSED)
        self->closed_end = MAX (self->closed_end, span_end (&spans[i]));
      else
        g_array_append_val (self->open_spans, i);
    }
  self->n_spans = n_spans;
  self->host_end = self->closed_end;
  for (guint k = 0; k < self->open_spans->len; k++)
    self->host_end
      = MAX (self->host_end, span_end (&spans[g_array_index (self->open_spans, guint32, k)]));

  kept = 0;
  for (guint k = 0; k < self->unanchored->len; k++)
    {
      guint32 i = g_array_index (self->unanchored, guint32, k);
      if (d[i].span < 0 || (guint)d[i].span >= n_spans)
        g_array_index (self->unanchored, guint32, kept++) = i;
      else
        fit_anchor (clock_fit (self, d[i].clock_id), clamp_ns (d[i].start_ns),
                    clamp_ns (spans[d[i].span].start_ns));
    }
  g_array_set_size (self->unanchored, kept);
  for (guint i = self->n_intervals; i < n; i++)
    {
      ClockFit *fit = clock_fit (self, d[i].clock_id);
      gint64 start = clamp_ns (d[i].start_ns);
      fit->earliest = MIN (fit->earliest, start);
      if (d[i].span >= 0 && (guint)d[i].span < n_spans)
        fit_anchor (fit, start, clamp_ns (spans[d[i].span].start_ns));
      else if (d[i].span >= 0 || d[i].span_id != 0)
        g_array_append_val (self->unanchored, i); /* its span may come or resolve */
    }
  self->n_intervals = n;
}

void
wick_device_clocks_free (WickDeviceClocks *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->offsets);
  g_array_unref (self->open_spans);
  g_array_unref (self->unanchored);
  g_free (self);
}

gint64
wick_device_clocks_get_offset (WickDeviceClocks *self, WickStr clock_id)
{
  g_return_val_if_fail (self != NULL, 0);
  ClockFit *fit = g_hash_table_lookup (self->offsets, GUINT_TO_POINTER (clock_id));
  if (fit == NULL)
    return 0;
  if (!fit->anchored)
    return (self->n_spans ? self->host_start : 0) - fit->earliest;
  return !fit->before_launch && fit->latest <= self->host_end ? 0 : fit->need;
}
