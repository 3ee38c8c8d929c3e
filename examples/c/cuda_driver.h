/* cuda_driver.h - the few CUDA driver API calls the examples need, loaded
 * at run time with dlopen (cuda_driver.c says why).
 *
 * Types come from the CUDA toolkit's cuda.h; no CUDA library is linked.
 */
#ifndef EXAMPLES_CUDA_DRIVER_H
#define EXAMPLES_CUDA_DRIVER_H

#include <stddef.h>

#include <cuda.h>

typedef struct gpu {
    void *lib;          /* the dlopen handle of libcuda */
    CUdevice dev;
    CUcontext ctx;      /* device 0's primary context, current while open */
    char name[128];     /* the device's name */
    CUresult (*mem_alloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*mem_free)(CUdeviceptr p);
    CUresult (*htod)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*dtoh)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*sync)(void);
    CUresult (*error_string)(CUresult r, const char **s);
    CUresult (*primary_release)(CUdevice dev);
    CUresult (*ctx_pop)(CUcontext *ctx);
} gpu;

/* Load libcuda ($TENSORC_LIBCUDA, else libcuda.so.1: the library tensorc
 * itself loads, so both use one driver), initialize it and make device 0's
 * primary context current on this thread; tc_run then uses that context.
 * @return 0 with *g ready; -1 with a reason in why[] when no GPU can be
 *         used (no driver, no device, a failed init). */
int gpu_open(gpu *g, char *why, size_t whylen);

/* Pop and release the context, close the library.  Free every allocation
 * (and tc_ctx_free every tensorc context that ran on it) first. */
void gpu_close(gpu *g);

/* 0 when r is CUDA_SUCCESS, else print "CALL failed: TEXT" and return -1. */
int gpu_check(const gpu *g, CUresult r, const char *call);

#endif
