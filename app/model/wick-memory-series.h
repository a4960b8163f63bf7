/* wick-memory-series.h — memory over time, per device, for the memory chart and
 * wick-trace summary.
 *
 * Logical memory (WickMemorySeries): live bytes per category from the memory
 * events, paired exactly as spec §6.1 pairs them. Events are stably sorted by
 * timestamp_ns and replayed with a map keyed by (device, storage_id):
 *   alloc of a key not live   -> live; its bytes count in the alloc's category;
 *   alloc of a live key       -> an alias or an error (health reports it): no change;
 *   free of a live key        -> its allocation's bytes leave its allocation's
 *                                category (whatever the free says);
 *   free of a key not live    -> no change.
 * One point per memory event of that device, after the event is applied: the
 * series is a step function (a value holds from its time until the next point).
 * Peaks: per category, the greatest live value and the first time it was
 * reached; and the same for the total of all categories.
 *
 * Physical memory (WickDeviceMemorySeries): device_memory samples split into
 * four independent series (used, reserved, capacity, free), each holding only
 * the samples that carried that field: no series is derived from another.
 *
 * Devices are listed in order of first appearance in the file.
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct
{
  guint64 t_ns;
  guint64 live[WICK_N_CATEGORIES]; /* indexed by WickMemoryCategory */
  guint32 event;                   /* index into the document's memory events */
} WickMemoryPoint;

typedef struct
{
  WickStr device;
  GArray *points; /* WickMemoryPoint, by time */
  guint64 peak[WICK_N_CATEGORIES];
  guint64 peak_ns[WICK_N_CATEGORIES];
  guint64 peak_total;
  guint64 peak_total_ns;
} WickMemorySeries;

typedef struct
{
  guint64 t_ns;
  guint64 value;
} WickSamplePoint;

typedef enum
{
  WICK_DEVICE_SERIES_USED,
  WICK_DEVICE_SERIES_RESERVED,
  WICK_DEVICE_SERIES_CAPACITY,
  WICK_DEVICE_SERIES_FREE,
} WickDeviceSeriesKind;
#define WICK_N_DEVICE_SERIES 4

typedef struct
{
  WickStr device;
  GArray *series[WICK_N_DEVICE_SERIES]; /* WickSamplePoint, in file order */
  guint64 max[WICK_N_DEVICE_SERIES];    /* greatest value of each, 0 when empty */
} WickDeviceMemorySeries;

/* GPtrArray of WickMemorySeries* (owns them; g_ptr_array_unref frees). */
GPtrArray *wick_memory_series_build (WickDocument *document);
/* GPtrArray of WickDeviceMemorySeries* (owns them). */
GPtrArray *wick_device_memory_series_build (WickDocument *document);

/* The live bytes of @series at @t_ns (the last point at or before it), into
 * @live; all zero before the first point. */
void wick_memory_series_at (const WickMemorySeries *series, guint64 t_ns,
                            guint64 live[WICK_N_CATEGORIES]);
/* A category's spelling: libwick's wick_memory_category_to_string. */
const char *wick_device_series_to_string (WickDeviceSeriesKind kind);

G_END_DECLS
