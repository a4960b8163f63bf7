/* wick-weight-digest-device-none.c — no GPU digests in a libwick built
 * without CUDA (wick-weight-digest-device-private.h). */
#include "wick-weight-digest-device-private.h"

#include "core/wick-error-private.h"

bool
wick_device_digests_enabled (void)
{
  return false;
}

bool
wick_device_digests_reset (WickDeviceDigests *digests, WickError *error)
{
  (void)digests;
  return wick_fail (error, WICK_ERROR_UNSUPPORTED, "libwick was built without CUDA");
}

WickDeviceDigests *
wick_device_digests_new (WickError *error)
{
  wick_fail (error, WICK_ERROR_UNSUPPORTED, "libwick was built without CUDA");
  return NULL;
}

void
wick_device_digests_free (WickDeviceDigests *digests)
{
  (void)digests;
}

bool
wick_device_digests_queue (WickDeviceDigests *digests, size_t slot, const void *data,
                           uint64_t bytes, uint64_t first_chunk, void *after_event,
                           WickError *error)
{
  (void)digests, (void)slot, (void)data, (void)bytes, (void)first_chunk, (void)after_event;
  return wick_fail (error, WICK_ERROR_UNSUPPORTED, "libwick was built without CUDA");
}

bool
wick_device_digests_wait (WickDeviceDigests *digests, uint64_t *out, size_t n, WickError *error)
{
  (void)digests, (void)out, (void)n;
  return wick_fail (error, WICK_ERROR_UNSUPPORTED, "libwick was built without CUDA");
}

bool
wick_device_digests_fence (WickDeviceDigests *digests, void *event, WickError *error)
{
  (void)digests, (void)event;
  return wick_fail (error, WICK_ERROR_UNSUPPORTED, "libwick was built without CUDA");
}
