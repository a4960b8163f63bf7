/* bench-lttng-tp.h — LTTng-UST tracepoints for the hot-path benchmark: the
 * same two events (span begin, span end) that libwick records. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER wick_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench-lttng-tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT (wick_bench, span_begin,
  LTTNG_UST_TP_ARGS (uint64_t, id, uint64_t, parent, uint32_t, name),
  LTTNG_UST_TP_FIELDS (lttng_ust_field_integer (uint64_t, id, id)
                       lttng_ust_field_integer (uint64_t, parent, parent)
                       lttng_ust_field_integer (uint32_t, name, name)))

LTTNG_UST_TRACEPOINT_EVENT (wick_bench, span_end,
  LTTNG_UST_TP_ARGS (uint64_t, id, uint64_t, duration),
  LTTNG_UST_TP_FIELDS (lttng_ust_field_integer (uint64_t, id, id)
                       lttng_ust_field_integer (uint64_t, duration, duration)))

#endif

#include <lttng/tracepoint-event.h>
