/* driver.h - a thin layer over the CUDA driver API (libcuda.so.1).
 *
 * Why dlopen: like nvrtc.h, tensorc must build and run (CLI, --emit=ptx,
 * every CI test) on machines with no GPU and no driver.  So cuda.h is not
 * included and libcuda is not linked: the two dozen entry points used here
 * are declared by hand in driver.c (CUresult is an int, handles are opaque
 * pointers, CUdeviceptr is a 64-bit integer) and looked up with dlsym, using
 * the _v2 names that cuda.h maps the plain names to (cuMemAlloc_v2, ...).
 * The library is $TENSORC_LIBCUDA (a path, for tests) or libcuda.so.1.
 *
 * Contexts: tensorc shares the process with PyTorch or CuPy.  drv_open reuses
 * the context current on the calling thread when it belongs to the requested
 * device; otherwise it retains the device's primary context (the one the CUDA
 * runtime uses too) and releases it in drv_close.  Each call below makes the
 * device's context current for its duration when it is not already (push /
 * pop), so a drv_device may be used from any thread and the caller's own
 * current context is left as it was.
 *
 * Streams: a stream is the caller's CUstream passed as void*; NULL is the
 * default stream.
 *
 * Thread safety: loading libcuda is guarded by a mutex and cached once it
 * succeeds (a failure is retried on the next drv_open, which is cheap and
 * lets a test point TENSORC_LIBCUDA elsewhere).  A drv_device is immutable
 * after drv_open; the driver API itself is thread-safe.
 *
 * Errors: every function returning tc_status sets *d (which may be NULL) with
 * a message naming the driver call and the driver's error, e.g.
 *   "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
 * No GPU or no driver gives TC_ERR_NO_DEVICE; other driver failures give
 * TC_ERR_INTERNAL (TC_ERR_NOMEM for CUDA_ERROR_OUT_OF_MEMORY).
 */
#ifndef TC_DRIVER_H
#define TC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "tensorc.h"

typedef struct drv_device drv_device;  /* an opened GPU and its context */
typedef struct drv_module drv_module;  /* a loaded CUBIN/PTX image */
typedef uint64_t drv_ptr;              /* a device address (CUdeviceptr) */

/* A kernel of a loaded module: a plain value, valid while its module is. */
typedef struct drv_fn {
    drv_device *dev;
    void *handle;                      /* CUfunction */
    unsigned statmem;                  /* its static shared memory, bytes (48 KB: not known) */
} drv_fn;

/*! drv_open(): load libcuda, cuInit, open device `ordinal` (0 = first).
 *  @return TC_OK and *dev (close with drv_close);
 *          TC_ERR_NO_DEVICE: "no CUDA driver (libcuda.so.1 not found): --device=cuda
 *            needs an NVIDIA GPU", "no CUDA device found", or a failing cuInit;
 *          TC_ERR_INVALID_ARG for an ordinal that does not exist;
 *          TC_ERR_NOMEM; TC_ERR_INTERNAL for other driver failures. */
tc_status drv_open(drv_device **dev, int ordinal, tc_diag *d);

/*! drv_close(): release the primary context if drv_open retained it; free dev. NULL is a no-op. */
void drv_close(drv_device *dev);
/* For tensorc doctor: the number of devices (loading the driver; -1 with
 * the reason in d when it cannot be loaded or initialized), the file the
 * driver was loaded from (NULL before), a device's memory (0 if unknown). */
int drv_count(tc_diag *d);
const char *drv_lib_path(void);
size_t drv_total_mem(const drv_device *dev);
/* Whether [p, p + bytes) lies in one allocation the driver knows
 * (cuMemGetAddressRange): 1 yes, 0 no (host memory, a freed or foreign
 * pointer, or past the allocation's end), -1 the driver cannot tell. */
int drv_ptr_known(drv_device *dev, drv_ptr p, size_t bytes);

/*! The device's compute capability as 10*major+minor (e.g. 90 for sm_90). */
int drv_arch(const drv_device *dev);
/*! The device's name, e.g. "NVIDIA H100 80GB HBM3" (owned by dev). */
const char *drv_name(const drv_device *dev);
/*! The device's number of streaming multiprocessors. */
int drv_sm_count(const drv_device *dev);
/*! drv_version(): the driver's CUDA version, 1000 * major + 10 * minor (12010: 12.1); 0 unknown. */
int drv_version(const drv_device *dev);

/*! drv_module_load(): load a CUBIN or NUL-terminated PTX image (the driver
 *  tells them apart; it JIT-compiles PTX).  The image may be freed afterwards. */
tc_status drv_module_load(drv_device *dev, const void *image, drv_module **mod, tc_diag *d);
/*! drv_module_unload(): unload and free (NULL is a no-op); its drv_fns become invalid. */
void drv_module_unload(drv_module *mod);

/*! drv_function(): the kernel `name` (an extern "C" name) of a module.
 *  TC_ERR_NOT_FOUND when the module has no such kernel. */
tc_status drv_function(drv_module *mod, const char *name, drv_fn *fn, tc_diag *d);

/*! drv_function_params(): the byte sizes of fn's first max parameters, as
 *  the driver knows them (cuFuncGetParamInfo); *n < max when fn has fewer.
 *  Only as many as asked for are queried, since asking past the last one
 *  is an API error that tools such as compute-sanitizer report.
 *  TC_ERR_UNSUPPORTED on a driver older than CUDA 12.4. */
tc_status drv_function_params(drv_fn fn, size_t *sizes, int max, int *n, tc_diag *d);

/*! drv_launch(): launch fn with grid[3] x block[3] threads, shmem bytes of
 *  dynamic shared memory, on stream (NULL: the default stream); args is the
 *  usual array of pointers to each kernel argument.  Past 48 KB of dynamic
 *  shared memory the kernel's limit is raised first (a driver without
 *  cuFuncSetAttribute: TC_ERR_UNSUPPORTED).  Asynchronous: errors in the
 *  kernel itself show up at the next drv_sync. */
tc_status drv_launch(drv_fn fn, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                     void *stream, void **args, tc_diag *d);

/*! drv_has_clusters(): whether dev can launch thread-block clusters (sm_90
 *  and a driver with cuLaunchKernelEx). */
bool drv_has_clusters(const drv_device *dev);
/*! drv_launch_cluster(): drv_launch in clusters of `cluster` blocks along x
 *  (grid[0] a multiple of it; 1: a plain launch); past 8 (the portable
 *  size) the kernel is first allowed a non-portable size. */
tc_status drv_launch_cluster(drv_fn fn, const unsigned grid[3], const unsigned block[3],
                             unsigned cluster, unsigned shmem, void *stream, void **args, tc_diag *d);

/*! drv_resident_clusters(): how many clusters of `cluster` blocks of
 *  block[3] threads and shmem bytes of dynamic shared memory fn's device
 *  holds at once (cuOccupancyMaxActiveClusters); 0 when it cannot tell. */
unsigned drv_resident_clusters(drv_fn fn, const unsigned block[3], unsigned cluster, unsigned shmem);

/*! Device memory: drv_alloc(bytes > 0), drv_free (0 is a no-op), and synchronous copies. */
tc_status drv_alloc(drv_device *dev, size_t bytes, drv_ptr *ptr, tc_diag *d);
void drv_free(drv_device *dev, drv_ptr ptr);
tc_status drv_htod(drv_device *dev, drv_ptr dst, const void *src, size_t bytes, tc_diag *d);
tc_status drv_dtoh(drv_device *dev, void *dst, drv_ptr src, size_t bytes, tc_diag *d);

/*! Asynchronous copies and fills on stream, ordered with its kernels:
 *  device to device (the regions must not overlap), and every byte of
 *  [dst, dst + bytes) set to value (a zeroed workspace, poisoned outputs). */
tc_status drv_memcpy_dtod_async(drv_device *dev, drv_ptr dst, drv_ptr src, size_t bytes,
                                void *stream, tc_diag *d);
/*! drv_htod_async(): a host-to-device copy ordered on stream.  From pageable
 *  memory (src is not pinned) the driver stages src before returning, so
 *  the caller may reuse src at once (CUDA's "API synchronization behavior"). */
tc_status drv_htod_async(drv_device *dev, drv_ptr dst, const void *src, size_t bytes, void *stream,
                         tc_diag *d);
tc_status drv_memset_async(drv_device *dev, drv_ptr dst, unsigned char value, size_t bytes,
                           void *stream, tc_diag *d);

/*! drv_enter(): make dev's context current on this thread until drv_leave,
 *  for libraries that use the current context (cuBLAS: its handle belongs to
 *  the context current when it was created, and its calls must run there).
 *  @return whether a push happened: pass it to drv_leave. */
bool drv_enter(drv_device *dev);
void drv_leave(bool pushed);

/*! drv_sync(): wait for stream (NULL: the whole context) to finish; reports
 *  an error that a kernel raised (e.g. an illegal address). */
tc_status drv_sync(drv_device *dev, void *stream, tc_diag *d);

/*! Events, for timing kernels (--bench): create, record on a stream, the
 *  milliseconds between two recorded events (waits for `end`), destroy. */
tc_status drv_event_create(drv_device *dev, void **event, tc_diag *d);
tc_status drv_event_record(drv_device *dev, void *event, void *stream, tc_diag *d);
tc_status drv_event_elapsed(drv_device *dev, void *start, void *end, float *ms, tc_diag *d);
void drv_event_destroy(drv_device *dev, void *event);

#endif
