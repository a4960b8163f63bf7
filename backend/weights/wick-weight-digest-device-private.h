/* wick-weight-digest-device-private.h — the parameter digest taken on the GPU.
 *
 * The CUDA backing's RAM tier proves every byte (docs/weights.md,
 * "Verification"). Hashing the pinned spill on CPU threads while the copy
 * engine reads or writes the same host memory cost a fifth to a third of the
 * copy's bandwidth on the H200. The GPU computes the same digest
 * (wick-weight-hash-private.h: 4 lanes over each WICK_WEIGHT_HASH_CHUNK, the
 * chunks' parts summed) from device memory, on a stream of its own, while the
 * copy engine runs:
 *
 *   evict    the digest of the live device bytes, queued beside the
 *            device-to-pinned copy (both only read them);
 *   restore  the digest of the device bytes after the pinned-to-device copy
 *            landed (the hash stream waits on the copy's fence), so what is
 *            compared is what went live against what was evicted.
 *
 * Each digest is one kernel: four threads a chunk, a chunk's lanes combined
 * with warp shuffles, its part added to the digest's slot with a 64-bit
 * atomic (the sum is order-free). Slots live in device memory from the
 * stream-ordered allocator; wait() copies them back and synchronises.
 * Without CUDA (the -none.c file) built() is false and the CPU pipe runs.
 *
 * The disk tier's restore (wick-weight-disk-reader.c) takes its digests the
 * same way: of each staging slot's bytes once their copy to the device
 * landed, so the reader threads only read.
 *
 * On by default where libwick has the kernels; WICK_WEIGHT_GPU_DIGESTS=0 in
 * the environment makes the CPU threads hash instead (measured against each
 * other in docs/performance.md, "Weight eviction").
 */
#pragma once

#include "wick/wick-session.h" /* WickError; C++-safe for the .cu */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WickDeviceDigests WickDeviceDigests;

/* Whether digests of CUDA memory are taken on the GPU: built, and not
 * switched off with WICK_WEIGHT_GPU_DIGESTS=0. */
bool wick_device_digests_enabled (void);

/* NULL with the reason where no stream or memory can be had. */
WickDeviceDigests *wick_device_digests_new (WickError *error);
/* Waits for what was queued (so no kernel reads memory released after). */
void wick_device_digests_free (WickDeviceDigests *digests);

/* Queues the digest of @bytes of device memory at @data into slot @slot
 * (slots are numbered from 0, at most 1 << 20; several queues into one slot
 * add up). @data starts chunk @first_chunk of the buffer whose digest the
 * slot sums (0 for a whole buffer; a part of a buffer must start on a chunk
 * boundary). When @after_event (a cudaEvent_t recorded on the copy stream)
 * is not NULL, the hash waits for it. */
bool wick_device_digests_queue (WickDeviceDigests *digests, size_t slot, const void *data,
                                uint64_t bytes, uint64_t first_chunk, void *after_event,
                                WickError *error);

/* Zeroes every slot (stream-ordered, after the digests queued before) so
 * that the same digests serve another round. */
bool wick_device_digests_reset (WickDeviceDigests *digests, WickError *error);

/* Records @event (a cudaEvent_t) on the digests' stream after the digests
 * queued so far: once it completes, they have read their bytes. */
bool wick_device_digests_fence (WickDeviceDigests *digests, void *event, WickError *error);

/* Waits for every queued digest and copies the first @n slots into @out. */
bool wick_device_digests_wait (WickDeviceDigests *digests, uint64_t *out, size_t n,
                               WickError *error);

#ifdef __cplusplus
}
#endif
