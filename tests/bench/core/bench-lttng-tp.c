/* bench-lttng-tp.c — the LTTng-UST probe provider of bench-lttng-tp.h. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench-lttng-tp.h"
