/* wick-format.c — see wick-format.h. */
#include "wick-format.h"
#include "wick-format-private.h"

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
wick_format_share (double part, double whole)
{
  if (whole == 0)
    return g_strdup ("—");
  return g_strdup_printf ("%.1f %%", 100.0 * part / whole);
}

char *
wick_format_time_label_in (guint64 ns, guint64 step_ns, guint64 unit_ns)
{
  static const struct
  {
    guint64 ns;
    const char *name;
  } units[] = { { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "µs" }, { 1, "ns" } };
  guint u = 0;
  while (u + 1 < G_N_ELEMENTS (units) && units[u].ns > unit_ns)
    u++;
  guint64 unit = units[u].ns;
  /* Decimals: the fewest that represent every multiple of the step. */
  guint decimals = 0;
  guint64 digit = unit;
  step_ns = MAX (step_ns, 1);
  while (digit > 1 && step_ns % digit != 0)
    {
      digit /= 10;
      decimals++;
    }
  guint64 whole = ns / unit;
  if (decimals == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " %s", whole, units[u].name);
  guint64 frac = (ns % unit) / digit;
  return g_strdup_printf ("%" G_GUINT64_FORMAT ".%0*" G_GUINT64_FORMAT " %s", whole, (int)decimals,
                          frac, units[u].name);
}

char *
wick_format_time_label (guint64 ns, guint64 step_ns)
{
  return wick_format_time_label_in (ns, step_ns, MAX (ns, step_ns));
}
