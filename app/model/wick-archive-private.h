/* wick-archive-private.h — what only the tests call of wick-archive.h (the app
 * includes wick-archive.h alone). It declares no types: include it after
 * wick-archive.h. */
#pragma once

G_BEGIN_DECLS

/* The same from memory (borrowed), for tests and fuzzing. */
WickArchive *wick_archive_new_for_data (const void *data, gsize len, const char *name,
                                        const WickArchiveLimits *limits, GError **error);

/* NULL with @error when @path is neither or its directory is broken. */
WickArchive *wick_archive_open (const char *path, const WickArchiveLimits *limits,
                                GError **error);

/* The next member: TRUE and @member, FALSE at the end (@error unset) or on
 * failure. The data of a member not read is skipped. */
gboolean wick_archive_next (WickArchive *archive, WickArchiveMember *member, GError **error);

/* The current member's data: up to @len bytes, 0 at its end (then its CRC
 * was checked, for a zip), -1 with @error. */
gssize wick_archive_read (WickArchive *archive, void *buffer, gsize len, GError **error);

G_END_DECLS
