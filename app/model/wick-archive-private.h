/* wick-archive-private.h — what only the tests call of wick-archive.h (the app
 * includes wick-archive.h alone). It declares no types: include it after
 * wick-archive.h. */
#pragma once

G_BEGIN_DECLS

/* The same from memory (borrowed), for tests and fuzzing. */
WickArchive *wick_archive_new_for_data (const void *data, gsize len, const char *name,
                                        const WickArchiveLimits *limits, GError **error);

G_END_DECLS
