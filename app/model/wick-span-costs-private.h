/* wick-span-costs-private.h — what only the tests call of wick-span-costs.h (the app
 * includes wick-span-costs.h alone). It declares no types: include it after
 * wick-span-costs.h. */
#pragma once

G_BEGIN_DECLS

const guint32 *wick_span_index_get_memory (WickSpanIndex *index, guint span, guint *n);

G_END_DECLS
