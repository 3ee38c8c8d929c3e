/* driver.c - the CUDA driver API loaded with dlopen; see driver.h for why.
 *
 * The approach mirrors nvrtc.c: the prototypes are copied by hand from
 * cuda.h (CUDA 13; stable since CUDA 11), resolved with dlsym into one static
 * table, and the table is read-only once filled.  cuda.h #defines several
 * names to versioned entry points (cuMemAlloc -> cuMemAlloc_v2, ...); dlsym
 * sees the real exported names, so those are what we look up: the unversioned
 * symbols are older ABIs kept for old binaries (32-bit CUdeviceptr for
 * cuMemAlloc, say) and must not be used.  cuEventElapsedTime became
 * cuEventElapsedTime_v2 in CUDA 12.8 with the same signature; older drivers
 * have only the first, so both are tried.
 *
 * Unlike NVRTC, a failed load is not cached: the search is one dlopen, and
 * retrying lets tests point TENSORC_LIBCUDA at different places in one run.
 */
#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlsym.h"
#include "libsearch.h"

/* --- the driver's C ABI, declared here instead of including cuda.h ------- */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr; /* the _v2 ABI: 64-bit */

_Static_assert(sizeof(CUdeviceptr) == sizeof(drv_ptr), "drv_ptr holds a CUdeviceptr");

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_NOT_FOUND = 500,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_EVENT_DEFAULT = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* cuLaunchKernelEx's configuration (CUDA 12.0+), for cluster launches */
typedef struct {
    int id;                     /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
    char pad[4];
    union {
        char pad[64];
        struct { unsigned x, y, z; } cluster;
    } value;
} CUlaunchAttribute;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, shmem;
    CUstream stream;
    CUlaunchAttribute *attrs;
    unsigned nattrs;
} CUlaunchConfig;
enum { CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14 };

static struct {
    bool ok;
    CUresult (*init)(unsigned flags);
    CUresult (*driver_version)(int *v);
    CUresult (*device_count)(int *n);
    CUresult (*device_get)(CUdevice *dev, int ordinal);
    CUresult (*device_attr)(int *v, int attr, CUdevice dev);
    CUresult (*device_name)(char *name, int len, CUdevice dev);
    CUresult (*ctx_get_current)(CUcontext *ctx);
    CUresult (*ctx_get_device)(CUdevice *dev);
    CUresult (*ctx_push)(CUcontext ctx);
    CUresult (*ctx_pop)(CUcontext *ctx);
    CUresult (*ctx_sync)(void);
    CUresult (*primary_retain)(CUcontext *ctx, CUdevice dev);
    CUresult (*primary_release)(CUdevice dev);
    CUresult (*module_load)(CUmodule *mod, const void *image);
    CUresult (*module_unload)(CUmodule mod);
    CUresult (*module_function)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*launch)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                       void **params, void **extra);
    CUresult (*mem_alloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*mem_free)(CUdeviceptr p);
    CUresult (*htod)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*dtoh)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*dtod_async)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*htod_async)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*memset_d8_async)(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
    CUresult (*stream_sync)(CUstream s);
    CUresult (*event_create)(CUevent *e, unsigned flags);
    CUresult (*event_record)(CUevent e, CUstream s);
    CUresult (*event_sync)(CUevent e);
    CUresult (*event_elapsed)(float *ms, CUevent start, CUevent end);
    CUresult (*event_destroy)(CUevent e);
    CUresult (*param_info)(CUfunction f, size_t i, size_t *offset, size_t *size); /* optional */
    CUresult (*launch_ex)(const CUlaunchConfig *c, CUfunction f, void **params, void **extra); /* optional */
    CUresult (*func_attr)(CUfunction f, int attr, int value); /* optional */
    CUresult (*func_get_attr)(int *value, int attr, CUfunction f); /* optional */
    CUresult (*max_clusters)(int *n, CUfunction f, const CUlaunchConfig *c); /* optional (12.0+) */
    CUresult (*total_mem)(size_t *bytes, CUdevice dev); /* optional: tensorc doctor's report */
    CUresult (*addr_range)(CUdeviceptr *base, size_t *size, CUdeviceptr p); /* optional */
    CUresult (*error_name)(CUresult r, const char **s);
    CUresult (*error_string)(CUresult r, const char **s);
} cu;

static pthread_mutex_t cu_lock = PTHREAD_MUTEX_INITIALIZER;

/* Record an unlocated error in d, which may be NULL; evaluates to st. */
#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

struct drv_device {
    CUdevice dev;
    CUcontext ctx;
    bool retained;      /* ctx is the primary context, retained by drv_open */
    int arch, sm_count;
    char name[256];     /* cuDeviceGetName truncates to the length given */
};

struct drv_module {
    drv_device *dev;
    CUmodule mod;
};

/* Fill `cu` from the library at path.  On failure, *missing names the
 * first absent entry point (NULL when dlopen itself failed). */
static bool load_from(const char *path, const char **missing)
{
    *missing = NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    static const char *const names[] = {
        "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
        "cuDeviceGetAttribute", "cuDeviceGetName", "cuCtxGetCurrent", "cuCtxGetDevice",
        "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxSynchronize",
        "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuModuleLoadData",
        "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel", "cuMemAlloc_v2",
        "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoDAsync_v2",
        "cuMemcpyHtoDAsync_v2", "cuMemsetD8Async", "cuStreamSynchronize",
        "cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventDestroy_v2", "cuGetErrorName",
        "cuGetErrorString",
    };
    void *slots[] = {
        &cu.init, &cu.driver_version, &cu.device_count, &cu.device_get, &cu.device_attr,
        &cu.device_name, &cu.ctx_get_current, &cu.ctx_get_device, &cu.ctx_push, &cu.ctx_pop,
        &cu.ctx_sync, &cu.primary_retain, &cu.primary_release, &cu.module_load,
        &cu.module_unload, &cu.module_function, &cu.launch, &cu.mem_alloc, &cu.mem_free,
        &cu.htod, &cu.dtoh, &cu.dtod_async, &cu.htod_async, &cu.memset_d8_async, &cu.stream_sync,
        &cu.event_create, &cu.event_record, &cu.event_sync, &cu.event_destroy, &cu.error_name,
        &cu.error_string,
    };
    _Static_assert(sizeof names / sizeof *names == sizeof slots / sizeof *slots,
                   "one slot per driver entry point");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!dl_sym(h, names[i], slots[i])) {
            *missing = names[i];
            dlclose(h);
            return false;
        }
    if (!dl_sym(h, "cuFuncGetParamInfo", &cu.param_info)) /* CUDA 12.4+ */
        cu.param_info = NULL;
    if (!dl_sym(h, "cuLaunchKernelEx", &cu.launch_ex) || !dl_sym(h, "cuFuncSetAttribute", &cu.func_attr))
        cu.launch_ex = NULL, cu.func_attr = NULL; /* CUDA 12.0+: clusters */
    if (!dl_sym(h, "cuFuncGetAttribute", &cu.func_get_attr))
        cu.func_get_attr = NULL;
    if (!dl_sym(h, "cuOccupancyMaxActiveClusters", &cu.max_clusters))
        cu.max_clusters = NULL;
    if (!dl_sym(h, "cuDeviceTotalMem_v2", &cu.total_mem))
        cu.total_mem = NULL;
    if (!dl_sym(h, "cuMemGetAddressRange_v2", &cu.addr_range))
        cu.addr_range = NULL;
    if (!dl_sym(h, "cuEventElapsedTime_v2", &cu.event_elapsed) &&
        !dl_sym(h, "cuEventElapsedTime", &cu.event_elapsed)) {
        *missing = "cuEventElapsedTime";
        dlclose(h);
        return false;
    }
    return true; /* kept for the process: the driver is shared with other libraries */
}

static tc_status load(tc_diag *d)
{
    pthread_mutex_lock(&cu_lock);
    const char *env = getenv("TENSORC_LIBCUDA");
    const char *path = env && *env ? env : "libcuda.so.1";
    const char *missing = NULL;
    if (!cu.ok)
        cu.ok = load_from(path, &missing);
    bool ok = cu.ok;
    pthread_mutex_unlock(&cu_lock);
    if (ok)
        return TC_OK;
    if (missing)
        return SET(d, TC_ERR_NO_DEVICE, "no usable CUDA driver (%s has no %s): update the NVIDIA driver", path,
                        missing);
    return SET(d, TC_ERR_NO_DEVICE, "no CUDA driver (%s not found): --device=cuda needs an NVIDIA GPU", path);
}

/* "cuX failed: CUDA_ERROR_Y (text)" into d, with status st. */
static tc_status fail_as(tc_diag *d, tc_status st, const char *call, CUresult r)
{
    const char *name = NULL, *text = NULL;
    if (cu.error_name(r, &name) != CUDA_SUCCESS || !name)
        name = "unknown CUDA error";
    if (cu.error_string(r, &text) != CUDA_SUCCESS || !text)
        text = "no description";
    return SET(d, st, "%s failed: %s (%s)", call, name, text);
}

/* The same, with the status that suits the driver's error. */
static tc_status fail(tc_diag *d, const char *call, CUresult r)
{
    tc_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? TC_ERR_NOMEM
                   : r == CUDA_ERROR_NO_DEVICE   ? TC_ERR_NO_DEVICE
                   : r == CUDA_ERROR_NOT_FOUND   ? TC_ERR_NOT_FOUND
                                                 : TC_ERR_INTERNAL;
    return fail_as(d, st, call, r);
}

/* Make dev's context current for one call unless it already is; the caller's
 * context is restored by leave().  @return whether a push happened. */
static bool enter(const drv_device *dev)
{
    CUcontext cur = NULL;
    if (cu.ctx_get_current(&cur) == CUDA_SUCCESS && cur == dev->ctx)
        return false;
    return cu.ctx_push(dev->ctx) == CUDA_SUCCESS;
}

static void leave(bool pushed)
{
    if (pushed) {
        CUcontext popped;
        cu.ctx_pop(&popped);
    }
}

tc_status drv_open(drv_device **out, int ordinal, tc_diag *d)
{
    *out = NULL;
    tc_status st = load(d);
    if (st != TC_OK)
        return st;
    CUresult r = cu.init(0);
    if (r == CUDA_ERROR_NO_DEVICE)
        return SET(d, TC_ERR_NO_DEVICE, "no CUDA device found");
    if (r != CUDA_SUCCESS)
        return fail_as(d, TC_ERR_NO_DEVICE, "cuInit", r); /* a stub libcuda, a driver mismatch */
    int n = 0;
    if ((r = cu.device_count(&n)) != CUDA_SUCCESS)
        return fail(d, "cuDeviceGetCount", r);
    if (n == 0)
        return SET(d, TC_ERR_NO_DEVICE, "no CUDA device found");
    if (ordinal < 0 || ordinal >= n)
        return SET(d, TC_ERR_INVALID_ARG, "CUDA device %d does not exist (%d found, numbered from 0)", ordinal, n);

    drv_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return SET(d, TC_ERR_NOMEM, "out of memory");
    int major = 0, minor = 0;
    const char *call = NULL;
    if ((r = cu.device_get(&dev->dev, ordinal)) != CUDA_SUCCESS)
        call = "cuDeviceGet";
    else if ((r = cu.device_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 dev->dev)) != CUDA_SUCCESS ||
             (r = cu.device_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 dev->dev)) != CUDA_SUCCESS ||
             (r = cu.device_attr(&dev->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                 dev->dev)) != CUDA_SUCCESS)
        call = "cuDeviceGetAttribute";
    else if ((r = cu.device_name(dev->name, (int)sizeof dev->name - 1, dev->dev)) !=
             CUDA_SUCCESS)
        call = "cuDeviceGetName";
    if (call) {
        free(dev);
        return fail(d, call, r);
    }
    dev->arch = 10 * major + minor;

    /* Share the caller's context (PyTorch's, say) when it is on this device:
     * its allocations and streams are then ours to use. */
    CUcontext cur = NULL;
    CUdevice cur_dev = -1;
    if (cu.ctx_get_current(&cur) == CUDA_SUCCESS && cur &&
        cu.ctx_get_device(&cur_dev) == CUDA_SUCCESS && cur_dev == dev->dev) {
        dev->ctx = cur;
    } else if ((r = cu.primary_retain(&dev->ctx, dev->dev)) == CUDA_SUCCESS) {
        dev->retained = true;
    } else {
        free(dev);
        return fail(d, "cuDevicePrimaryCtxRetain", r);
    }
    *out = dev;
    return TC_OK;
}

void drv_close(drv_device *dev)
{
    if (!dev)
        return;
    if (dev->retained)
        cu.primary_release(dev->dev);
    free(dev);
}

int drv_count(tc_diag *d)
{
    tc_status st = load(d);
    if (st != TC_OK)
        return -1;
    CUresult r = cu.init(0);
    int n = 0;
    if (r == CUDA_ERROR_NO_DEVICE)
        return 0;
    if (r != CUDA_SUCCESS)
        return fail_as(d, TC_ERR_NO_DEVICE, "cuInit", r), -1;
    if ((r = cu.device_count(&n)) != CUDA_SUCCESS)
        return fail(d, "cuDeviceGetCount", r), -1;
    return n;
}

const char *drv_lib_path(void)
{
    static char buf[4096];
    pthread_mutex_lock(&cu_lock);
    bool ok = cu.ok;
    pthread_mutex_unlock(&cu_lock);
    if (!ok)
        return NULL;
    return libsearch_path_of((const void *)(uintptr_t)cu.init, buf, sizeof buf) ? buf : "?";
}

int drv_ptr_known(drv_device *dev, drv_ptr p, size_t bytes)
{
    if (!cu.addr_range)
        return -1;
    bool pushed = drv_enter(dev);
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult r = cu.addr_range(&base, &size, p);
    drv_leave(pushed);
    if (r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE)
        return 0;
    if (r != CUDA_SUCCESS)
        return -1; /* a sticky error, say: the driver cannot tell */
    return p - base <= size && bytes <= size - (p - base) ? 1 : 0;
}

size_t drv_total_mem(const drv_device *dev)
{
    size_t n = 0;
    return cu.total_mem && cu.total_mem(&n, dev->dev) == CUDA_SUCCESS ? n : 0;
}

int drv_arch(const drv_device *dev) { return dev->arch; }
const char *drv_name(const drv_device *dev) { return dev->name; }
int drv_sm_count(const drv_device *dev) { return dev->sm_count; }

int drv_version(const drv_device *dev)
{
    int v = 0;
    (void)dev; /* the driver is loaded: dev was opened */
    return cu.driver_version(&v) == CUDA_SUCCESS ? v : 0;
}

tc_status drv_module_load(drv_device *dev, const void *image, drv_module **out, tc_diag *d)
{
    *out = NULL;
    drv_module *m = calloc(1, sizeof *m);
    if (!m)
        return SET(d, TC_ERR_NOMEM, "out of memory");
    bool pushed = enter(dev);
    CUresult r = cu.module_load(&m->mod, image);
    leave(pushed);
    if (r != CUDA_SUCCESS) {
        free(m);
        return fail(d, "cuModuleLoadData", r);
    }
    m->dev = dev;
    *out = m;
    return TC_OK;
}

void drv_module_unload(drv_module *mod)
{
    if (!mod)
        return;
    bool pushed = enter(mod->dev);
    cu.module_unload(mod->mod);
    leave(pushed);
    free(mod);
}

tc_status drv_function(drv_module *mod, const char *name, drv_fn *fn, tc_diag *d)
{
    *fn = (drv_fn){0};
    CUfunction f = NULL;
    bool pushed = enter(mod->dev);
    CUresult r = cu.module_function(&f, mod->mod, name);
    leave(pushed);
    if (r == CUDA_ERROR_NOT_FOUND)
        return SET(d, TC_ERR_NOT_FOUND, "the module has no kernel named '%s'",
                        name);
    if (r != CUDA_SUCCESS)
        return fail(d, "cuModuleGetFunction", r);
    /* the static shared memory counts toward the 48 KB a launch gets
     * without raising the kernel's limit (allow_shmem) */
    int stat = 48 * 1024;
    if (cu.func_get_attr) {
        pushed = enter(mod->dev);
        if (cu.func_get_attr(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) != CUDA_SUCCESS || stat < 0)
            stat = 48 * 1024;
        leave(pushed);
    }
    *fn = (drv_fn){mod->dev, f, (unsigned)stat};
    return TC_OK;
}

tc_status drv_function_params(drv_fn fn, size_t *sizes, int max, int *n, tc_diag *d)
{
    *n = 0;
    if (!cu.param_info)
        return SET(d, TC_ERR_UNSUPPORTED, "this CUDA driver has no cuFuncGetParamInfo (CUDA 12.4+)");
    bool pushed = enter(fn.dev);
    for (int i = 0; i < max; i++) {
        size_t offset, size;
        if (cu.param_info((CUfunction)fn.handle, (size_t)i, &offset, &size) != CUDA_SUCCESS)
            break; /* past the last parameter: CUDA_ERROR_INVALID_VALUE */
        sizes[i] = size;
        (*n)++;
    }
    leave(pushed);
    return TC_OK;
}

/* static and dynamic shared memory past the default 48 KB: the kernel must
 * allow the dynamic part (an attention ring of exactly 48 KB beside its
 * 5 KB of static memory failed its launch when this counted the ring alone) */
static bool past_48k(drv_fn fn, unsigned shmem)
{
    return shmem && (uint64_t)shmem + fn.statmem > 48 * 1024;
}

static CUresult allow_shmem(drv_fn fn, unsigned shmem)
{
    if (!past_48k(fn, shmem))
        return CUDA_SUCCESS;
    return cu.func_attr ? cu.func_attr((CUfunction)fn.handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       (int)shmem)
                        : CUDA_ERROR_NOT_FOUND;
}

tc_status drv_launch(drv_fn fn, const unsigned grid[3], const unsigned block[3], unsigned shmem,
                     void *stream, void **args, tc_diag *d)
{
    if (past_48k(fn, shmem) && !cu.func_attr)
        return SET(d, TC_ERR_UNSUPPORTED, "this CUDA driver has no cuFuncSetAttribute (%u bytes of "
                   "dynamic shared memory)", shmem);
    bool pushed = enter(fn.dev);
    CUresult r = allow_shmem(fn, shmem);
    if (r != CUDA_SUCCESS) {
        leave(pushed);
        return fail(d, "cuFuncSetAttribute (dynamic shared memory)", r);
    }
    r = cu.launch((CUfunction)fn.handle, grid[0], grid[1], grid[2], block[0], block[1],
                           block[2], shmem, (CUstream)stream, args, NULL);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuLaunchKernel", r);
}

bool drv_has_clusters(const drv_device *dev)
{
    return dev->arch >= 90 && cu.launch_ex && cu.func_attr;
}

tc_status drv_launch_cluster(drv_fn fn, const unsigned grid[3], const unsigned block[3],
                             unsigned cluster, unsigned shmem, void *stream, void **args, tc_diag *d)
{
    if (cluster <= 1)
        return drv_launch(fn, grid, block, shmem, stream, args, d);
    if (!cu.launch_ex)
        return SET(d, TC_ERR_UNSUPPORTED, "this CUDA driver has no cuLaunchKernelEx (clusters)");
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.cluster.x = cluster;
    at.value.cluster.y = at.value.cluster.z = 1;
    CUlaunchConfig c = {grid[0], grid[1], grid[2], block[0], block[1], block[2], shmem,
                        (CUstream)stream, &at, 1};
    bool pushed = enter(fn.dev);
    CUresult r = allow_shmem(fn, shmem);
    if (r == CUDA_SUCCESS && cluster > 8) /* past the portable size: the kernel must allow it */
        r = cu.func_attr((CUfunction)fn.handle, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r == CUDA_SUCCESS)
        r = cu.launch_ex(&c, (CUfunction)fn.handle, args, NULL);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuLaunchKernelEx (a cluster launch)", r);
}

unsigned drv_resident_clusters(drv_fn fn, const unsigned block[3], unsigned cluster, unsigned shmem)
{
    if (!cu.max_clusters || !cu.func_attr || cluster < 2)
        return 0;
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.cluster.x = cluster;
    at.value.cluster.y = at.value.cluster.z = 1;
    /* the grid: one cluster (the query's answer does not depend on it) */
    CUlaunchConfig c = {cluster, 1, 1, block[0], block[1], block[2], shmem, NULL, &at, 1};
    bool pushed = enter(fn.dev);
    int n = 0;
    CUresult r = allow_shmem(fn, shmem);
    if (r == CUDA_SUCCESS && cluster > 8)
        r = cu.func_attr((CUfunction)fn.handle, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r == CUDA_SUCCESS)
        r = cu.max_clusters(&n, (CUfunction)fn.handle, &c);
    leave(pushed);
    return r == CUDA_SUCCESS && n > 0 ? (unsigned)n : 0;
}

tc_status drv_alloc(drv_device *dev, size_t bytes, drv_ptr *ptr, tc_diag *d)
{
    CUdeviceptr p = 0;
    bool pushed = enter(dev);
    CUresult r = cu.mem_alloc(&p, bytes);
    leave(pushed);
    *ptr = r == CUDA_SUCCESS ? p : 0;
    if (r == CUDA_SUCCESS)
        return TC_OK;
    char call[64]; /* "cuMemAlloc(" + a size_t fits; snprintf bounds it anyway */
    snprintf(call, sizeof call, "cuMemAlloc(%zu bytes)", bytes);
    return fail(d, call, r);
}

void drv_free(drv_device *dev, drv_ptr ptr)
{
    if (!ptr)
        return;
    bool pushed = enter(dev);
    cu.mem_free(ptr);
    leave(pushed);
}

tc_status drv_htod(drv_device *dev, drv_ptr dst, const void *src, size_t bytes, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.htod(dst, src, bytes);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuMemcpyHtoD", r);
}

tc_status drv_dtoh(drv_device *dev, void *dst, drv_ptr src, size_t bytes, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.dtoh(dst, src, bytes);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuMemcpyDtoH", r);
}

tc_status drv_memcpy_dtod_async(drv_device *dev, drv_ptr dst, drv_ptr src, size_t bytes,
                                void *stream, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.dtod_async(dst, src, bytes, (CUstream)stream);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuMemcpyDtoDAsync", r);
}

tc_status drv_htod_async(drv_device *dev, drv_ptr dst, const void *src, size_t bytes, void *stream,
                         tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.htod_async(dst, src, bytes, (CUstream)stream);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuMemcpyHtoDAsync", r);
}

tc_status drv_memset_async(drv_device *dev, drv_ptr dst, unsigned char value, size_t bytes,
                           void *stream, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.memset_d8_async(dst, value, bytes, (CUstream)stream);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuMemsetD8Async", r);
}

bool drv_enter(drv_device *dev) { return enter(dev); }
void drv_leave(bool pushed) { leave(pushed); }

tc_status drv_sync(drv_device *dev, void *stream, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = stream ? cu.stream_sync((CUstream)stream) : cu.ctx_sync();
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK
                             : fail(d, stream ? "cuStreamSynchronize" : "cuCtxSynchronize", r);
}

tc_status drv_event_create(drv_device *dev, void **event, tc_diag *d)
{
    CUevent e = NULL;
    bool pushed = enter(dev);
    CUresult r = cu.event_create(&e, CU_EVENT_DEFAULT);
    leave(pushed);
    *event = e;
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuEventCreate", r);
}

tc_status drv_event_record(drv_device *dev, void *event, void *stream, tc_diag *d)
{
    bool pushed = enter(dev);
    CUresult r = cu.event_record((CUevent)event, (CUstream)stream);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuEventRecord", r);
}

tc_status drv_event_elapsed(drv_device *dev, void *start, void *end, float *ms, tc_diag *d)
{
    bool pushed = enter(dev);
    /* cuEventElapsedTime does not wait for the end event: wait first. */
    CUresult r = cu.event_sync((CUevent)end);
    if (r == CUDA_SUCCESS)
        r = cu.event_elapsed(ms, (CUevent)start, (CUevent)end);
    leave(pushed);
    return r == CUDA_SUCCESS ? TC_OK : fail(d, "cuEventElapsedTime", r);
}

void drv_event_destroy(drv_device *dev, void *event)
{
    if (!event)
        return;
    bool pushed = enter(dev);
    cu.event_destroy((CUevent)event);
    leave(pushed);
}
