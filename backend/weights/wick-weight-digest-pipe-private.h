/* wick-weight-digest-pipe-private.h — RAM-tier copies that take their digest
 * on the way (wick-weight-hash-private.h defines the digest).
 *
 * A RAM-tier eviction copies each storage into its spill and a restore copies
 * it back; both must prove every byte (docs/weights.md, "Verification").
 * Hashing after the copy doubled their time, so the pipe hashes while the
 * copies run, chunk by chunk (WICK_WEIGHT_HASH_CHUNK), on several threads:
 *
 *   evict, CUDA    the device-to-pinned copy is queued in 8 MiB pieces with
 *                  a fence after each; workers wait on a piece's fence and
 *                  hash its chunks (1 MiB) while the next pieces copy, so the
 *                  last piece is hashed by several threads at once;
 *   restore, CUDA  the pinned-to-device copies are queued, and the workers
 *                  hash the spill at the same time (the copies only read it);
 *   host           a worker copies a chunk (live → spill, or spill → live)
 *                  in pieces that fit in the cache and hashes each piece just
 *                  written, so the digest is of the destination's bytes.
 *
 * On CUDA, where libwick has its kernels (wick-weight-digest-device-private.h),
 * the GPU takes the digests instead, of the device side of each copy (the
 * live bytes before an eviction's copy out, after a restore's copy in): CPU
 * threads reading pinned memory while the copy engine used it cost the copy a
 * fifth to a third of its bandwidth (on the H200: evict 45-56% of the pinned
 * copy with CPU hashing, 96-97% with the GPU's). On by default;
 * WICK_WEIGHT_GPU_DIGESTS=0 in the environment hashes on the CPU.
 *
 * The digest of a storage is the same sum as wick_weight_digest of its bytes
 * (chunks' hashes mixed with their index), whatever thread took which chunk.
 * Usage: new, add_copy for every storage, run (waits for the workers and,
 * through the fences, for the copies they hashed), then the backing's finish
 * for copies nobody waited on, free.
 */
#pragma once

#include "wick-weight-backing-private.h"

typedef struct WickDigestPipe WickDigestPipe;

WickDigestPipe *wick_digest_pipe_new (const WickWeightBacking *backing);
void wick_digest_pipe_free (WickDigestPipe *pipe);

/* Copies @bytes between @live (the backing's memory) and @spill (from
 * host_alloc): to the spill when @to_spill, else back to @live; *@digest
 * (set to 0 here) becomes the digest of the bytes copied once the pipe has
 * run. */
bool wick_digest_pipe_add_copy (WickDigestPipe *pipe, bool to_spill, void *live, void *spill,
                                uint64_t bytes, uint64_t *digest, WickError *error);

/* The work queued so far, and dropping what was queued after @mark (a
 * mapping released again must not be written by a host copy). */
size_t wick_digest_pipe_mark (const WickDigestPipe *pipe);
void wick_digest_pipe_truncate (WickDigestPipe *pipe, size_t mark);

/* Runs the queued work to its end on up to 16 threads (the caller's
 * included). False with the first error (a failed copy or fence). */
bool wick_digest_pipe_run (WickDigestPipe *pipe, WickError *error);

/* Whether the GPU takes this pipe's digests (wick_digest_pipe_landed works). */
bool wick_digest_pipe_on_device (const WickDigestPipe *pipe);

/* GPU digests only: fences after every copy and every digest queued so
 * far (record), and waiting for them (wait, which also frees them; free
 * alone drops them): once waited, the device memory those copies and
 * digests read may be released (the digests' values come with run). */
typedef struct
{
  void *copied, *hashed;
} WickDigestLanding;
bool wick_digest_pipe_landing_record (WickDigestPipe *pipe, WickDigestLanding *landing,
                                      WickError *error);
bool wick_digest_pipe_landing_wait (WickDigestPipe *pipe, WickDigestLanding *landing,
                                    WickError *error);
void wick_digest_pipe_landing_free (WickDigestPipe *pipe, WickDigestLanding *landing);
