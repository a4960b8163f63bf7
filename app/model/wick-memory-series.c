/* wick-memory-series.c — logical and physical memory over time (see the header). */
#include "config.h"

#include "wick-memory-series.h"

#include <string.h>

typedef struct
{
  guint64 bytes;
  guint8 category;
} LiveAllocation;

static void
memory_series_free (gpointer data)
{
  WickMemorySeries *series = data;

  g_array_unref (series->points);
  g_free (series);
}

static WickMemorySeries *
series_for_device (GPtrArray *all, GHashTable *by_device, WickStr device)
{
  WickMemorySeries *series = g_hash_table_lookup (by_device, GUINT_TO_POINTER (device));

  if (series == NULL)
    {
      series = g_new0 (WickMemorySeries, 1);
      series->device = device;
      series->points = g_array_new (FALSE, FALSE, sizeof (WickMemoryPoint));
      g_ptr_array_add (all, series);
      g_hash_table_insert (by_device, GUINT_TO_POINTER (device), series);
    }
  return series;
}

static int
compare_time (gconstpointer a, gconstpointer b, gpointer events)
{
  guint64 x = ((const WickMemoryEvent *)events)[*(const guint32 *)a].timestamp_ns;
  guint64 y = ((const WickMemoryEvent *)events)[*(const guint32 *)b].timestamp_ns;

  return x < y ? -1 : x > y;
}

static void
record_point (WickMemorySeries *series, guint64 t_ns, const guint64 live[WICK_N_CATEGORIES],
              guint32 event)
{
  WickMemoryPoint point = { t_ns, { 0 }, event };
  guint64 total = 0;

  memcpy (point.live, live, sizeof point.live);
  for (int c = 0; c < WICK_N_CATEGORIES; c++)
    {
      total += live[c];
      if (live[c] > series->peak[c])
        {
          series->peak[c] = live[c];
          series->peak_ns[c] = t_ns;
        }
    }
  if (total > series->peak_total)
    {
      series->peak_total = total;
      series->peak_total_ns = t_ns;
    }
  g_array_append_val (series->points, point);
}

GPtrArray *
wick_memory_series_build (WickDocument *document)
{
  guint n;
  const WickMemoryEvent *events = wick_document_get_memory (document, &n);
  GPtrArray *all = g_ptr_array_new_with_free_func (memory_series_free);
  g_autoptr (GHashTable) by_device = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autofree guint32 *order = g_new (guint32, MAX (1, n));
  g_autoptr (GHashTable) totals = g_hash_table_new_full (NULL, NULL, NULL, g_free);

  for (guint i = 0; i < n; i++)
    {
      order[i] = i;
      series_for_device (all, by_device, events[i].device);
    }
  g_qsort_with_data (order, (gint)n, sizeof (guint32), compare_time, (gpointer)events);

  for (guint k = 0; k < n; k++)
    {
      const WickMemoryEvent *m = &events[order[k]];
      gint64 key = (gint64)(((guint64)m->device << 32) | m->storage_id);
      LiveAllocation *allocation = g_hash_table_lookup (live, &key);
      WickMemorySeries *series = series_for_device (all, by_device, m->device);
      guint64 *current = g_hash_table_lookup (totals, GUINT_TO_POINTER (m->device));

      if (current == NULL)
        {
          current = g_new0 (guint64, WICK_N_CATEGORIES);
          g_hash_table_insert (totals, GUINT_TO_POINTER (m->device), current);
        }
      if (m->action == WICK_MEMORY_ALLOC && allocation == NULL)
        {
          allocation = g_new (LiveAllocation, 1);
          allocation->bytes = m->bytes;
          allocation->category = m->category;
          g_hash_table_insert (live, g_memdup2 (&key, sizeof key), allocation);
          current[m->category] += m->bytes;
        }
      else if (m->action == WICK_MEMORY_FREE && allocation != NULL)
        {
          current[allocation->category] -= MIN (current[allocation->category], allocation->bytes);
          g_hash_table_remove (live, &key);
        }
      record_point (series, m->timestamp_ns, current, order[k]);
    }
  return all;
}

static void
device_series_free (gpointer data)
{
  WickDeviceMemorySeries *series = data;

  for (int k = 0; k < WICK_N_DEVICE_SERIES; k++)
    g_array_unref (series->series[k]);
  g_free (series);
}

static void
add_sample (WickDeviceMemorySeries *series, WickDeviceSeriesKind kind, guint64 t, guint64 value)
{
  WickSamplePoint point = { t, value };

  g_array_append_val (series->series[kind], point);
  series->max[kind] = MAX (series->max[kind], value);
}

GPtrArray *
wick_device_memory_series_build (WickDocument *document)
{
  guint n;
  const WickDeviceMemorySample *samples = wick_document_get_device_memory (document, &n);
  GPtrArray *all = g_ptr_array_new_with_free_func (device_series_free);
  g_autoptr (GHashTable) by_device = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < n; i++)
    {
      const WickDeviceMemorySample *s = &samples[i];
      WickDeviceMemorySeries *series
        = g_hash_table_lookup (by_device, GUINT_TO_POINTER (s->device));
      if (series == NULL)
        {
          series = g_new0 (WickDeviceMemorySeries, 1);
          series->device = s->device;
          for (int k = 0; k < WICK_N_DEVICE_SERIES; k++)
            series->series[k] = g_array_new (FALSE, FALSE, sizeof (WickSamplePoint));
          g_ptr_array_add (all, series);
          g_hash_table_insert (by_device, GUINT_TO_POINTER (s->device), series);
        }
      if (s->present & WICK_DEVICE_MEMORY_USED)
        add_sample (series, WICK_DEVICE_SERIES_USED, s->timestamp_ns, s->used_bytes);
      if (s->present & WICK_DEVICE_MEMORY_RESERVED)
        add_sample (series, WICK_DEVICE_SERIES_RESERVED, s->timestamp_ns, s->reserved_bytes);
      if (s->present & WICK_DEVICE_MEMORY_CAPACITY)
        add_sample (series, WICK_DEVICE_SERIES_CAPACITY, s->timestamp_ns, s->capacity_bytes);
      if (s->present & WICK_DEVICE_MEMORY_FREE)
        add_sample (series, WICK_DEVICE_SERIES_FREE, s->timestamp_ns, s->free_bytes);
    }
  return all;
}

void
wick_memory_series_at (const WickMemorySeries *series, guint64 t_ns,
                       guint64 live[WICK_N_CATEGORIES])
{
  guint lo = 0, hi = series->points->len;

  /* first point with t > t_ns */
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (series->points, WickMemoryPoint, mid).t_ns <= t_ns)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    memset (live, 0, sizeof (guint64) * WICK_N_CATEGORIES);
  else
    memcpy (live, g_array_index (series->points, WickMemoryPoint, lo - 1).live,
            sizeof (guint64) * WICK_N_CATEGORIES);
}

const char *
wick_device_series_to_string (WickDeviceSeriesKind kind)
{
  static const char *const names[] = { "used", "reserved", "capacity", "free" };

  return (guint)kind < G_N_ELEMENTS (names) ? names[kind] : "unknown";
}
