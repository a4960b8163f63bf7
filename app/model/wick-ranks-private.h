/* wick-ranks-private.h — what only the tests call of wick-ranks.h (the app
 * includes wick-ranks.h alone). It declares no types: include it after
 * wick-ranks.h. */
#pragma once

G_BEGIN_DECLS

/* NCCL's bus-bandwidth factor of a collective over @n ranks (nccl-tests'
 * PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather, reduce-scatter and
 * all-to-all (n-1)/n, the others 1. */
double wick_collective_busbw_factor (const char *name, guint n);

G_END_DECLS
