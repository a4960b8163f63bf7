/* wick-memory-snapshot-private.h — what only the tests call of wick-memory-snapshot.h (the app
 * includes wick-memory-snapshot.h alone). It declares no types: include it after
 * wick-memory-snapshot.h. */
#pragma once

G_BEGIN_DECLS

WickMemorySnapshot *wick_memory_snapshot_load_data (const void *data, gsize len, const char *name,
                                                    GError **error);

G_END_DECLS
