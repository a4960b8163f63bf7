/* wick-weight-backing-cuda.c — the CUDA backing of the weight store (see
 * wick-weight-backing-private.h) and wick_weight_alloc_device.
 *
 * Driver VMM functions come from cudaGetDriverEntryPointByVersion (the static
 * runtime finds the driver at run time), so libwick does not link libcuda.
 * Copies run on one non-blocking stream of the store's; each driver call is
 * preceded by cudaSetDevice so that the device's primary context is current
 * on whichever thread (the control thread, say) evicts or restores. */
#include "config.h"
#include "wick-weight-backing-private.h"
#include "core/wick-error-private.h"

#include <stdio.h>
#include <string.h>

#if WICK_HAVE_CUDA

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "core/wick-error-private.h"

typedef CUresult (*ReserveFn) (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*FreeAddressFn) (CUdeviceptr, size_t);
typedef CUresult (*CreateFn) (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*ReleaseFn) (CUmemGenericAllocationHandle);
typedef CUresult (*MapFn) (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*UnmapFn) (CUdeviceptr, size_t);
typedef CUresult (*SetAccessFn) (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*GranularityFn) (size_t *, const CUmemAllocationProp *,
                                   CUmemAllocationGranularity_flags);

static struct
{
  ReserveFn reserve;
  FreeAddressFn free_address;
  CreateFn create;
  ReleaseFn release;
  MapFn map;
  UnmapFn unmap;
  SetAccessFn set_access;
  GranularityFn granularity;
  char error[256];
  bool ok;
} driver;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t copy_stream;

static bool
load_entry (const char *symbol, void **out)
{
  enum cudaDriverEntryPointQueryResult status;
  cudaError_t result
    = cudaGetDriverEntryPointByVersion (symbol, out, 12000, cudaEnableDefault, &status);
  if (result != cudaSuccess || status != cudaDriverEntryPointSuccess || *out == NULL)
    {
      snprintf (driver.error, sizeof driver.error, "the CUDA driver has no %s (%s)", symbol,
                cudaGetErrorString (result));
      return false;
    }
  return true;
}

static void
load_driver (void)
{
  int count = 0;
  cudaError_t result = cudaGetDeviceCount (&count);
  if (result == cudaErrorInsufficientDriver)
    {
      snprintf (driver.error, sizeof driver.error,
                "no CUDA device: no CUDA driver is installed, or it is older than the runtime");
      return;
    }
  if (result != cudaSuccess || count == 0)
    {
      snprintf (driver.error, sizeof driver.error, "no CUDA device (%s)",
                result != cudaSuccess ? cudaGetErrorString (result) : "none found");
      return;
    }
  driver.ok = load_entry ("cuMemAddressReserve", (void **)&driver.reserve)
              && load_entry ("cuMemAddressFree", (void **)&driver.free_address)
              && load_entry ("cuMemCreate", (void **)&driver.create)
              && load_entry ("cuMemRelease", (void **)&driver.release)
              && load_entry ("cuMemMap", (void **)&driver.map)
              && load_entry ("cuMemUnmap", (void **)&driver.unmap)
              && load_entry ("cuMemSetAccess", (void **)&driver.set_access)
              && load_entry ("cuMemGetAllocationGranularity", (void **)&driver.granularity);
}

static bool
driver_ready (WickError *error)
{
  pthread_once (&driver_once, load_driver);
  if (!driver.ok)
    wick_set_error (error, WICK_ERROR_FAILED, "%s", driver.error);
  return driver.ok;
}

static bool
runtime_ok (cudaError_t result, const char *what, WickError *error)
{
  if (result == cudaSuccess)
    return true;
  wick_set_error (error, WICK_ERROR_FAILED, "%s failed: %s", what, cudaGetErrorString (result));
  return false;
}

static bool
driver_ok (CUresult result, const char *what, WickError *error)
{
  if (result == CUDA_SUCCESS)
    return true;
  wick_set_error (error, WICK_ERROR_FAILED, "%s failed: CUDA driver error %d", what, (int)result);
  return false;
}

static CUmemAllocationProp
device_properties (int device)
{
  CUmemAllocationProp prop;
  memset (&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

/* Creates physical memory for [base, base+size) and maps it there. */
static bool
map_physical (CUdeviceptr base, size_t size, int device, CUmemGenericAllocationHandle *handle,
              WickError *error)
{
  CUmemAllocationProp prop = device_properties (device);
  CUmemAccessDesc access;
  memset (&access, 0, sizeof access);
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (!driver_ok (driver.create (handle, size, &prop, 0), "cuMemCreate", error))
    return false;
  if (!driver_ok (driver.map (base, size, 0, *handle, 0), "cuMemMap", error))
    {
      driver.release (*handle);
      return false;
    }
  if (!driver_ok (driver.set_access (base, size, &access, 1), "cuMemSetAccess", error))
    {
      driver.unmap (base, size);
      driver.release (*handle);
      return false;
    }
  return true;
}

void *
wick_weight_alloc_device (size_t bytes, WickError *error)
{
  int device;
  size_t granularity;
  CUdeviceptr base;
  CUmemGenericAllocationHandle handle;
  if (!driver_ready (error) || !runtime_ok (cudaGetDevice (&device), "cudaGetDevice", error)
      || !runtime_ok (cudaSetDevice (device), "cudaSetDevice", error))
    return NULL;
  CUmemAllocationProp prop = device_properties (device);
  if (!driver_ok (driver.granularity (&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                  "cuMemGetAllocationGranularity", error))
    return NULL;
  size_t size = ((bytes ? bytes : 1) + granularity - 1) / granularity * granularity;
  if (!driver_ok (driver.reserve (&base, size, granularity, 0, 0), "cuMemAddressReserve", error))
    return NULL;
  if (!map_physical (base, size, device, &handle, error))
    {
      driver.free_address (base, size);
      return NULL;
    }
  WickWeightAllocation allocation = { .base = (void *)(uintptr_t)base,
                                      .size = size,
                                      .memory = WICK_WEIGHT_MEMORY_CUDA,
                                      .device = device,
                                      .handle = (uint64_t)handle };
  if (!wick_weight_allocation_add (&allocation, error))
    {
      driver.unmap (base, size);
      driver.release (handle);
      driver.free_address (base, size);
      return NULL;
    }
  return allocation.base;
}

bool
wick_weight_free_device (void *ptr, WickError *error)
{
  WickWeightAllocation allocation;
  if (!driver_ready (error)
      || !wick_weight_allocation_remove (ptr, WICK_WEIGHT_MEMORY_CUDA, &allocation, error))
    return false;
  CUdeviceptr base = (CUdeviceptr)(uintptr_t)allocation.base;
  cudaSetDevice (allocation.device);
  if (!allocation.released)
    {
      driver.unmap (base, allocation.size);
      driver.release ((CUmemGenericAllocationHandle)allocation.handle);
    }
  return driver_ok (driver.free_address (base, allocation.size), "cuMemAddressFree", error);
}

static bool
lookup (void *base, WickWeightAllocation *allocation, WickError *error)
{
  if (!driver_ready (error))
    return false;
  if (!wick_weight_allocation_get (base, allocation))
    {
      wick_set_error (error, WICK_ERROR_INVALID_ARGUMENT, "%p is not a Wick device allocation",
                      base);
      return false;
    }
  return runtime_ok (cudaSetDevice (allocation->device), "cudaSetDevice", error);
}

static bool
cuda_release (void *base, size_t size, WickError *error)
{
  WickWeightAllocation allocation;
  if (!lookup (base, &allocation, error))
    return false;
  if (wick_weight_fail_release_after > 0 && --wick_weight_fail_release_after == 0)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "release of %p failed (injected)", base);
      return false;
    }
  CUdeviceptr address = (CUdeviceptr)(uintptr_t)base;
  if (!driver_ok (driver.unmap (address, allocation.size), "cuMemUnmap", error))
    return false;
  driver_ok (driver.release ((CUmemGenericAllocationHandle)allocation.handle), "cuMemRelease",
             error);
  wick_weight_allocation_set_released (base, true, 0);
  return true;
}

static bool
cuda_recommit (void *base, size_t size, WickError *error)
{
  WickWeightAllocation allocation;
  CUmemGenericAllocationHandle handle;
  if (!lookup (base, &allocation, error))
    return false;
  if (wick_weight_fail_recommit_after > 0 && --wick_weight_fail_recommit_after == 0)
    {
      wick_set_error (error, WICK_ERROR_FAILED, "recommit of %p failed (injected)", base);
      return false;
    }
  if (!map_physical ((CUdeviceptr)(uintptr_t)base, allocation.size, allocation.device, &handle,
                     error))
    return false;
  wick_weight_allocation_set_released (base, false, (uint64_t)handle);
  return true;
}

static cudaStream_t
stream (void)
{
  pthread_mutex_lock (&stream_lock);
  if (copy_stream == NULL)
    cudaStreamCreateWithFlags (&copy_stream, cudaStreamNonBlocking);
  pthread_mutex_unlock (&stream_lock);
  return copy_stream;
}

static bool
cuda_finish (WickError *error)
{
  return runtime_ok (cudaStreamSynchronize (stream ()), "cudaStreamSynchronize", error);
}

static bool
cuda_copy_to_host (void *destination, const void *source, size_t bytes, WickError *error)
{
  return runtime_ok (
           cudaMemcpyAsync (destination, source, bytes, cudaMemcpyDeviceToHost, stream ()),
           "cudaMemcpyAsync (device to host)", error)
         && cuda_finish (error);
}

static bool
cuda_copy_from_staging (void *destination, const void *source, size_t bytes, WickError *error)
{
  return runtime_ok (
    cudaMemcpyAsync (destination, source, bytes, cudaMemcpyHostToDevice, stream ()),
    "cudaMemcpyAsync (staging to device)", error);
}

static bool
cuda_copy_to_staging (void *destination, const void *source, size_t bytes, WickError *error)
{
  return runtime_ok (
    cudaMemcpyAsync (destination, source, bytes, cudaMemcpyDeviceToHost, stream ()),
    "cudaMemcpyAsync (device to pinned host)", error);
}

static void *
cuda_fence_new (void)
{
  cudaEvent_t event = NULL;
  if (cudaEventCreateWithFlags (&event, cudaEventDisableTiming) != cudaSuccess)
    return NULL;
  return event;
}

static bool
cuda_fence_record (void *fence, WickError *error)
{
  return runtime_ok (cudaEventRecord ((cudaEvent_t)fence, stream ()), "cudaEventRecord", error);
}

static bool
cuda_fence_wait (void *fence, WickError *error)
{
  return runtime_ok (cudaEventSynchronize ((cudaEvent_t)fence), "cudaEventSynchronize", error);
}

static void
cuda_fence_free (void *fence)
{
  cudaEventDestroy ((cudaEvent_t)fence);
}

static bool
cuda_synchronize (WickError *error)
{
  return runtime_ok (cudaDeviceSynchronize (), "cudaDeviceSynchronize", error);
}

/* Host memory pinned by cudaHostRegister (wick_weight_pin_registered): the
 * pages mapped for it, so that the free unmaps what was mapped. */
typedef struct Registered
{
  struct Registered *next;
  void *memory;  /* what host_alloc returned (2 MiB aligned) */
  void *mapping; /* what mmap returned */
  size_t mapped; /* its length */
} Registered;
static pthread_mutex_t registered_lock = PTHREAD_MUTEX_INITIALIZER;
static Registered *registered;

#define HUGE_PAGE ((size_t)2 << 20)

static void *
registered_alloc (size_t bytes)
{
  Registered *entry = calloc (1, sizeof *entry);
  if (entry == NULL)
    return NULL;
  size_t size = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  entry->mapped = size + HUGE_PAGE;
  entry->mapping
    = mmap (NULL, entry->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (entry->mapping == MAP_FAILED)
    {
      free (entry);
      return NULL;
    }
  uintptr_t at = ((uintptr_t)entry->mapping + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  entry->memory = (void *)at;
  madvise (entry->memory, size, MADV_HUGEPAGE); /* a hint: without THP, small pages */
  if (cudaHostRegister (entry->memory, size, cudaHostRegisterPortable) != cudaSuccess)
    {
      cudaGetLastError ();
      munmap (entry->mapping, entry->mapped);
      free (entry);
      return NULL;
    }
  pthread_mutex_lock (&registered_lock);
  entry->next = registered;
  registered = entry;
  pthread_mutex_unlock (&registered_lock);
  return entry->memory;
}

/* Portable: pinned for every context, as the spills may be made on a
 * thread other than the one that copies (prepared ahead). Registered pages
 * where that works, cudaHostAlloc where it does not. */
static void *
cuda_host_alloc (size_t bytes)
{
  void *memory = wick_weight_pin_registered ? registered_alloc (bytes ? bytes : 1) : NULL;
  if (memory != NULL)
    return memory;
  if (cudaHostAlloc (&memory, bytes ? bytes : 1, cudaHostAllocPortable) != cudaSuccess)
    return NULL;
  return memory;
}

static void
cuda_host_free (void *memory, size_t bytes)
{
  (void)bytes;
  if (memory == NULL)
    return;
  pthread_mutex_lock (&registered_lock);
  Registered **link = &registered;
  while (*link != NULL && (*link)->memory != memory)
    link = &(*link)->next;
  Registered *entry = *link;
  if (entry != NULL)
    *link = entry->next;
  pthread_mutex_unlock (&registered_lock);
  if (entry == NULL)
    {
      cudaFreeHost (memory);
      return;
    }
  cudaHostUnregister (entry->memory);
  munmap (entry->mapping, entry->mapped);
  free (entry);
}

static bool
cuda_sample (char device[32], uint64_t *used, uint64_t *free_bytes, uint64_t *capacity)
{
  int ordinal;
  size_t free_memory, total;
  if (cudaGetDevice (&ordinal) != cudaSuccess
      || cudaMemGetInfo (&free_memory, &total) != cudaSuccess)
    return false;
  snprintf (device, 32, "cuda:%d", ordinal);
  *used = total - free_memory;
  *free_bytes = free_memory;
  *capacity = total;
  return true;
}

static const WickWeightBacking cuda_backing = {
  .memory = WICK_WEIGHT_MEMORY_CUDA,
  .name = "cuda",
  .release = cuda_release,
  .recommit = cuda_recommit,
  .copy_to_host = cuda_copy_to_host,
  .copy_from_staging = cuda_copy_from_staging,
  .copy_to_staging = cuda_copy_to_staging,
  .fence_new = cuda_fence_new,
  .fence_record = cuda_fence_record,
  .fence_wait = cuda_fence_wait,
  .fence_free = cuda_fence_free,
  .finish = cuda_finish,
  .synchronize = cuda_synchronize,
  .host_alloc = cuda_host_alloc,
  .host_free = cuda_host_free,
  .sample = cuda_sample,
};

const WickWeightBacking *wick_weight_cuda_backing (void);

const WickWeightBacking *
wick_weight_cuda_backing (void)
{
  return &cuda_backing;
}

#else /* !WICK_HAVE_CUDA */

static const char no_cuda[] = "libwick was built without CUDA";

void *
wick_weight_alloc_device (size_t bytes, WickError *error)
{
  wick_set_error (error, WICK_ERROR_UNSUPPORTED, "%s", no_cuda);
  return NULL;
}

bool
wick_weight_free_device (void *ptr, WickError *error)
{
  wick_set_error (error, WICK_ERROR_UNSUPPORTED, "%s", no_cuda);
  return false;
}

const WickWeightBacking *wick_weight_cuda_backing (void);

/* Without CUDA no device allocation exists, so no CUDA module can be
 * registered and this backing is never asked to act. */
const WickWeightBacking *
wick_weight_cuda_backing (void)
{
  return NULL;
}

#endif
