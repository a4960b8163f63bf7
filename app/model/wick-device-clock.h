/* wick-device-clock.h — candle-graph device clocks on the host clock.
 *
 * A device_interval's start_ns is on its device clock (clock_id), not the
 * host's; the one anchor a trace gives between them is the interval's span
 * (span_id): the host span that launched the work. Per clock:
 *
 *  - every interval with a known span already starts inside [its span's
 *    start, the end of the last host span]: the clock is the host's, offset 0;
 *  - otherwise the smallest shift that starts no interval before the span
 *    that launched it, max(span start - device start) over the clock's
 *    intervals with a known span: the earliest-launched interval starts with
 *    its span, the others keep their distances on the device clock;
 *  - a clock with no interval of a known span starts with the trace (its
 *    earliest interval at the earliest span's start).
 *
 * The timeline draws device tracks shifted by these offsets and the Chrome
 * export writes them so (docs/format.md "Device clocks").
 */
#pragma once

#include "wick-document.h"

G_BEGIN_DECLS

typedef struct _WickDeviceClocks WickDeviceClocks;

WickDeviceClocks *wick_device_clocks_new (WickDocument *document);
/* Folds in what @document (the one the clocks were made from) gained since:
 * new spans and intervals, spans that closed, intervals whose spans the live
 * analysis resolved. The offsets then equal a new fit's, without a pass over
 * what was there already. */
void wick_device_clocks_update (WickDeviceClocks *clocks, WickDocument *document);
void wick_device_clocks_free (WickDeviceClocks *clocks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickDeviceClocks, wick_device_clocks_free)

/* ns to add to a time of clock @clock_id; 0 for a clock with no interval. */
gint64 wick_device_clocks_get_offset (WickDeviceClocks *clocks, WickStr clock_id);


G_END_DECLS
