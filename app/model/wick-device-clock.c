/* wick-device-clock.c — see wick-device-clock.h for the rule. */
#include "config.h"

#include "wick-device-clock.h"

struct _WickDeviceClocks
{
  GHashTable *offsets; /* clock_id WickStr -> ClockFit */
};

typedef struct
{
  gint64 need;     /* max(span start - device start) over anchored intervals */
  gint64 earliest; /* earliest device start of any interval */
  gboolean raw_ok; /* every anchored interval inside [span start, host end] */
  gboolean anchored;
  gint64 offset;
} ClockFit;

static gint64
clamp_ns (guint64 ns)
{
  return (gint64)MIN (ns, (guint64)G_MAXINT64 / 4);
}

WickDeviceClocks *
wick_device_clocks_new (WickDocument *document)
{
  g_return_val_if_fail (document != NULL, NULL);
  WickDeviceClocks *self = g_new0 (WickDeviceClocks, 1);
  guint n_spans, n;
  const WickSpan *spans = wick_document_get_spans (document, &n_spans);
  const WickDeviceInterval *d = wick_document_get_device_intervals (document, &n);
  gint64 host_start = n_spans ? G_MAXINT64 : 0, host_end = 0;

  self->offsets = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  for (guint i = 0; i < n_spans; i++)
    {
      host_start = MIN (host_start, clamp_ns (spans[i].start_ns));
      host_end = MAX (host_end, clamp_ns (spans[i].start_ns) + clamp_ns (spans[i].duration_ns));
    }
  for (guint i = 0; i < n; i++)
    {
      ClockFit *fit = g_hash_table_lookup (self->offsets, GUINT_TO_POINTER (d[i].clock_id));
      gint64 start = clamp_ns (d[i].start_ns);
      if (fit == NULL)
        {
          fit = g_new0 (ClockFit, 1);
          fit->raw_ok = TRUE;
          fit->earliest = start;
          g_hash_table_insert (self->offsets, GUINT_TO_POINTER (d[i].clock_id), fit);
        }
      fit->earliest = MIN (fit->earliest, start);
      if (d[i].span < 0 || (guint)d[i].span >= n_spans)
        continue;
      gint64 launch = clamp_ns (spans[d[i].span].start_ns);
      if (start < launch || start > host_end)
        fit->raw_ok = FALSE;
      fit->need = fit->anchored ? MAX (fit->need, launch - start) : launch - start;
      fit->anchored = TRUE;
    }
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, self->offsets);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      ClockFit *fit = value;
      if (!fit->anchored)
        fit->offset = host_start - fit->earliest;
      else
        fit->offset = fit->raw_ok ? 0 : fit->need;
    }
  return self;
}

void
wick_device_clocks_free (WickDeviceClocks *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->offsets);
  g_free (self);
}

gint64
wick_device_clocks_get_offset (WickDeviceClocks *self, WickStr clock_id)
{
  g_return_val_if_fail (self != NULL, 0);
  ClockFit *fit = g_hash_table_lookup (self->offsets, GUINT_TO_POINTER (clock_id));
  return fit ? fit->offset : 0;
}

