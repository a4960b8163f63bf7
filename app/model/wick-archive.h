/* wick-archive.h — the members of a .zip or .tar (.tar.gz, .tar.zst) read
 * as hostile input, and a job's rank traces found in a directory or an
 * archive (wick_job_expand), for `wick-trace ranks DIR|job.zip` and the app.
 *
 * Own readers, no library beyond zlib: the zip's central directory (zip64
 * too) with stored and deflated members, each inflated through zlib and
 * checked against its CRC-32; the tar's 512-byte headers (ustar, GNU long
 * names, pax paths and sizes) over WickInput, so a compressed tar is
 * decompressed with WickInput's own bounds.
 *
 * Bounded (WickArchiveLimits): the members (every header counts, not only
 * files), each member's and all members' decompressed bytes, and a zip
 * member's decompressed-to-compressed ratio; a zip's members whose data
 * overlap (a zip bomb's trick), whose data lie outside the file or that
 * inflate past their declared size are refused. A member's path must be
 * relative and plain: absolute paths, "..", backslashes, drive letters and
 * control characters are refused, and the path is never used on disk (what
 * is extracted gets a name of our making). Every error names the archive and
 * the member.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct
{
  guint max_members;        /* headers read at most */
  guint64 max_member_bytes; /* one member, decompressed */
  guint64 max_total_bytes;  /* every member together, decompressed */
  guint max_ratio;          /* a zip member's decompressed ÷ compressed, past 1 MiB */
} WickArchiveLimits;

/* 4096 members, 32 GiB each, 256 GiB in all, 200:1 */
#define WICK_ARCHIVE_LIMITS_DEFAULT                                                               \
  { 4096, (guint64)32 << 30, (guint64)256 << 30, 200 }

typedef enum
{
  WICK_ARCHIVE_ZIP,
  WICK_ARCHIVE_TAR,
} WickArchiveFormat;

typedef struct
{
  const char *path; /* as the archive names it, checked safe; valid until the next call */
  guint64 size;     /* decompressed bytes */
  gboolean regular; /* FALSE: a directory, link or other kind (its data is never read) */
} WickArchiveMember;

typedef struct _WickArchive WickArchive;

void wick_archive_free (WickArchive *archive);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (WickArchive, wick_archive_free)

WickArchiveFormat wick_archive_get_format (WickArchive *archive);

/* A job given as one path: a directory (its files, four levels deep, links
 * not followed), a .zip or a .tar(.gz/.zst). Returns the rank traces in it
 * (char* paths, sorted): files named *.json, *.json.gz or *.json.zst (not
 * hidden, not under __MACOSX) whose start is a trace-event JSON file. An
 * archive's are extracted into @extract_dir (made if needed), each under a
 * name of our own with the member's file name in it (so a rank read from the
 * name still is). @labels, when not NULL, gets path → "ARCHIVE/MEMBER" for
 * each (for messages); @notes gets a sentence for what was left out. NULL
 * with @error naming the archive and member. */
GPtrArray *wick_job_expand (const char *path, const char *extract_dir, GHashTable *labels,
                            GPtrArray *notes, GCancellable *cancellable, GError **error);

/* TRUE when @path is a directory or an archive wick_job_expand reads. */
gboolean wick_job_is_container (const char *path);

G_END_DECLS
