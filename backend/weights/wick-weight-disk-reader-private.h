/* wick-weight-disk-reader-private.h — the disk tier's restore path: tensors
 * are read from their checkpoint shards into staging buffers (pinned for
 * CUDA) by reader threads while the calling thread copies full buffers to
 * their destinations, so reads and copies overlap.
 *
 * Protocol: the work is cut into chunks of at most one staging slot; chunk c
 * uses slot c % n_slots and is read by reader thread (c % n_slots) % n_readers,
 * so a slot always has one reader. n_readers is 16, or WICK_WEIGHT_DISK_READERS
 * (1 to 16) from the environment; there are two slots a reader.
 * A reader waits until its slot is empty and the fence of the slot's last
 * copy has passed, reads (converting the dtype if the file's differs from the
 * live one) and marks the slot full with the chunk number; the copier takes
 * chunks in order, issues the copy and a fence, and marks the slot empty.
 * Any error stops every thread; the first message is kept. The pages of the
 * file are read with pread into the staging buffer: never mapped, and never
 * handed to the device straight from the page cache.
 *
 * Digests: on CUDA, where the GPU takes them (wick-weight-digest-device-
 * private.h), the copier queues the digest of each chunk's device bytes
 * behind the chunk's copy, so the readers only read; otherwise each reader
 * hashes what it read while it is still in the cache.
 */
#pragma once

#include "wick-safetensors-private.h"
#include "wick-weight-backing-private.h"
#include "wick-weight-digest-device-private.h"

#define WICK_DISK_MAX_READERS 16
#define WICK_DISK_MAX_SLOTS (2 * WICK_DISK_MAX_READERS)
#define WICK_DISK_READERS 16 /* the default */
#define WICK_DISK_SLOT_BYTES (8u << 20)

typedef struct
{
  void *destination;
  int fd;
  const char *path;
  uint64_t file_offset; /* absolute */
  uint64_t count;       /* elements */
  WickWeightDtype file_dtype;
  WickWeightDtype live_dtype;
} WickDiskJob;

typedef struct
{
  const WickWeightBacking *backing;
  void *slots[WICK_DISK_MAX_SLOTS];
  void *fences[WICK_DISK_MAX_SLOTS];
  size_t slot_bytes;
  unsigned n_slots; /* allocated */
  WickDeviceDigests *device; /* CUDA: the GPU's digests, kept with the staging; or NULL */
  bool device_tried;
} WickDiskStaging;

/* Allocates staging for up to slot_bytes a slot, two slots for each of
 * wick_disk_readers() (lazily grown). */
bool wick_disk_staging_reserve (WickDiskStaging *staging, const WickWeightBacking *backing,
                                size_t slot_bytes, WickError *error);
void wick_disk_staging_free (WickDiskStaging *staging);

/* Reads every job. When @digests is not NULL, digests[j] receives the digest
 * (wick-weight-hash-private.h) of job j's bytes as converted to the live
 * dtype (by the GPU from the destination once the copies landed, or by the
 * reader threads in the staging buffers), so a caller can verify what was
 * read before it trusts it. */
bool wick_disk_read (WickDiskStaging *staging, const WickDiskJob *jobs, size_t n_jobs,
                     uint64_t *digests, WickError *error);
