/* wick-format.c — see wick-format.h. */
#include "wick-format.h"

char *
wick_format_duration (guint64 ns)
{
  if (ns < 1000)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " ns", ns);
  if (ns < 1000000)
    return g_strdup_printf ("%.3g µs", ns / 1e3);
  if (ns < 1000000000)
    return g_strdup_printf ("%.3g ms", ns / 1e6);
  return g_strdup_printf ("%.3f s", ns / 1e9);
}

char *
wick_format_bytes (guint64 bytes)
{
  static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  double value = (double)bytes;
  guint unit = 0;
  while (value >= 1024.0 && unit + 1 < G_N_ELEMENTS (units))
    {
      value /= 1024.0;
      unit++;
    }
  if (unit == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " B", bytes);
  return g_strdup_printf (value < 10    ? "%.2f %s"
                          : value < 100 ? "%.1f %s"
                                        : "%.0f %s",
                          value, units[unit]);
}

char *
wick_format_time_label (guint64 ns, guint64 step_ns)
{
  if (step_ns >= 1000000000)
    return g_strdup_printf ("%.*f s", step_ns % 1000000000 ? 1 : 0, ns / 1e9);
  if (step_ns >= 1000000)
    return g_strdup_printf ("%.*f ms", step_ns % 1000000 ? 1 : 0, ns / 1e6);
  if (step_ns >= 1000)
    return g_strdup_printf ("%.*f µs", step_ns % 1000 ? 1 : 0, ns / 1e3);
  return g_strdup_printf ("%" G_GUINT64_FORMAT " ns", ns);
}
