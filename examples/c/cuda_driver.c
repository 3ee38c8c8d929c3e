/* cuda_driver.c - the CUDA driver API for the examples, through dlopen.
 *
 * Why dlopen rather than linking -lcuda: libcuda.so.1 comes with the NVIDIA
 * driver, not with the toolkit, so a program linked against it (even
 * against the toolkit's stub, /usr/local/cuda/lib64/stubs/libcuda.so) does
 * not start at all on a machine without the driver.  Loading it at run time
 * lets these programs still compile their kernels and say "no GPU" there,
 * which is also how tensorc itself (src/runtime/driver.c) and CUDA's own
 * runtime library find the driver.  A program that only ever runs on GPU
 * machines can instead link -lcuda and call these functions directly.
 *
 * cuda.h #defines several names to versioned entry points (cuMemAlloc ->
 * cuMemAlloc_v2); dlsym needs the exported names, so those are spelled out
 * below.
 */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dlsym into a function-pointer slot (POSIX guarantees the sizes match). */
static int sym(void *lib, const char *name, void *slot)
{
    void *p = dlsym(lib, name);
    if (!p)
        return -1;
    memcpy(slot, &p, sizeof p);
    return 0;
}

int gpu_open(gpu *g, char *why, size_t whylen)
{
    memset(g, 0, sizeof *g);
    const char *env = getenv("TENSORC_LIBCUDA");
    const char *path = env && *env ? env : "libcuda.so.1";
    g->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!g->lib) {
        snprintf(why, whylen, "cannot load the CUDA driver: %s", dlerror());
        return -1;
    }

    CUresult (*init)(unsigned flags);
    CUresult (*device_count)(int *n);
    CUresult (*device_get)(CUdevice *dev, int ordinal);
    CUresult (*device_name)(char *name, int len, CUdevice dev);
    CUresult (*primary_retain)(CUcontext *ctx, CUdevice dev);
    CUresult (*ctx_push)(CUcontext ctx);
    const struct { const char *name; void *slot; } syms[] = {
        {"cuInit", &init},
        {"cuDeviceGetCount", &device_count},
        {"cuDeviceGet", &device_get},
        {"cuDeviceGetName", &device_name},
        {"cuDevicePrimaryCtxRetain", &primary_retain},
        {"cuCtxPushCurrent_v2", &ctx_push},
        {"cuCtxPopCurrent_v2", &g->ctx_pop},
        {"cuDevicePrimaryCtxRelease_v2", &g->primary_release},
        {"cuMemAlloc_v2", &g->mem_alloc},
        {"cuMemFree_v2", &g->mem_free},
        {"cuMemcpyHtoD_v2", &g->htod},
        {"cuMemcpyDtoH_v2", &g->dtoh},
        {"cuCtxSynchronize", &g->sync},
        {"cuGetErrorString", &g->error_string},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (sym(g->lib, syms[i].name, syms[i].slot) != 0) {
            snprintf(why, whylen, "%s has no %s (driver too old)", path, syms[i].name);
            goto fail;
        }

    int n = 0;
    CUresult r = init(0);
    if (r == CUDA_SUCCESS)
        r = device_count(&n);
    if (r != CUDA_SUCCESS || n == 0) {
        const char *text = "no CUDA device";
        if (r != CUDA_SUCCESS)
            g->error_string(r, &text);
        snprintf(why, whylen, "the CUDA driver found no usable device (%s)", text ? text : "?");
        goto fail;
    }
    const char *call = NULL;
    if ((r = device_get(&g->dev, 0)) != CUDA_SUCCESS)
        call = "cuDeviceGet";
    else if ((r = device_name(g->name, (int)sizeof g->name - 1, g->dev)) != CUDA_SUCCESS)
        call = "cuDeviceGetName";
    else if ((r = primary_retain(&g->ctx, g->dev)) != CUDA_SUCCESS)
        call = "cuDevicePrimaryCtxRetain";
    else if ((r = ctx_push(g->ctx)) != CUDA_SUCCESS) {
        g->primary_release(g->dev);
        call = "cuCtxPushCurrent";
    }
    if (call) {
        const char *text = NULL;
        g->error_string(r, &text);
        snprintf(why, whylen, "%s failed: %s", call, text ? text : "?");
        goto fail;
    }
    return 0;

fail:
    dlclose(g->lib);
    g->lib = NULL;
    return -1;
}

void gpu_close(gpu *g)
{
    if (!g->lib)
        return;
    CUcontext popped;
    g->ctx_pop(&popped);
    g->primary_release(g->dev);
    /* libcuda stays loaded: tensorc holds its own handle to the same library. */
    dlclose(g->lib);
    g->lib = NULL;
}

int gpu_check(const gpu *g, CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS)
        return 0;
    const char *text = NULL;
    g->error_string(r, &text);
    fprintf(stderr, "%s failed: %s\n", call, text ? text : "unknown error");
    return -1;
}
