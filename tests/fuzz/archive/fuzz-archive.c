/* fuzz-archive.c — libFuzzer target for the job archive reader
 * (wick-archive.h): the input read as a zip or a tar (plain or
 * gzip/zstd), every member listed and every regular member's data read to
 * its end (inflate, CRC-32, tar headers, pax records, GNU long names), under
 * small limits (64 members, 4 MiB a member, 16 MiB in all). The seeds are
 * small zips (deflated, stored, zip64), tars (ustar, pax, a symlink) and a
 * .tar.gz. No crash, no hang, no read past the input. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "wick-archive.h"
#include "wick-archive-private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  WickArchiveLimits limits = { 64, (guint64)4 << 20, (guint64)16 << 20, 200 };
  g_autoptr (WickArchive) a = wick_archive_new_for_data (data, size, "fuzz", &limits, NULL);
  WickArchiveMember m;
  static guint8 buf[65536];
  if (a == NULL)
    return 0;
  while (wick_archive_next (a, &m, NULL))
    {
      if (!m.regular)
        continue;
      while (wick_archive_read (a, buf, sizeof buf, NULL) > 0)
        ;
    }
  return 0;
}
