/* blas.h - matrix products (plan.h's PSTEP_MATMUL) through cuBLAS.
 *
 * Why dlopen: as with the driver and NVRTC (driver.h, nvrtc.h), tensorc
 * builds and runs without the CUDA toolkit, so cublas_v2.h is not included
 * and libcublas is not linked.  The handful of entry points are declared by
 * hand in blas.c.  The library is $TENSORC_CUBLAS when set (a path or
 * soname, and then only that), else the first of libcublas.so.13,
 * libcublas.so.12, /usr/local/cuda/lib64/libcublas.so.13 that loads.
 * A failed load is not cached (retrying is one dlopen, and tests point
 * TENSORC_CUBLAS elsewhere).
 *
 * The row-major trick: cuBLAS is column-major, and a row-major r x c matrix
 * with leading dimension c is, read column-major, its c x r transpose.  So
 * the plan's row-major C = op(A) @ op(B) is computed as the column-major
 * C^T = op(B)^T @ op(A)^T: cuBLAS's "A" is our B and its "B" our A, m and n
 * swap, and each transpose flag and leading dimension follows from how the
 * operand is stored (blas_map spells it out; test_blas checks it against a
 * direct row-major product).  Accumulation is f32 for f32/f16/bf16
 * (CUBLAS_COMPUTE_32F: no TF32, so results match the reference to f32
 * rounding) and f64 for f64.
 *
 * Handles: one per device context, made by blas_new with the context
 * current (cuBLAS ties a handle to it) and used with that context pushed;
 * the stream is set on every call, since each tc_run brings its own.
 *
 * Errors name the cuBLAS call and status, e.g. "cublasGemmStridedBatchedEx
 * failed: CUBLAS_STATUS_NOT_SUPPORTED (...)".  No library: TC_ERR_NO_DEVICE.
 */
#ifndef TC_BLAS_H
#define TC_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "driver.h"
#include "dtype.h"

/* One PSTEP_MATMUL with its dims evaluated (plan.h has the meaning):
 * for b < batch: C[b] (m x n, row-major) = op(A)[b] (m x k) @ op(B)[b] (k x n),
 * A stored m x k (or k x m with ta), B stored k x n (or n x k with tb),
 * batch strides in elements (0: the same matrix for every batch). */
typedef struct blas_mm {
    tc_dtype dtype;
    bool ta, tb;
    int64_t m, n, k, batch;
    int64_t stride_a, stride_b, stride_c;
    drv_ptr a, b, c;
} blas_mm;

/* The column-major cublasGemmStridedBatchedEx call that computes it:
 * C'[b] (m x n, col-major, ldc) = op'(A')[b] @ op'(B')[b]. */
typedef struct blas_gemm {
    bool transa, transb;        /* CUBLAS_OP_T when set, else CUBLAS_OP_N */
    int64_t m, n, k;
    drv_ptr a, b, c;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int64_t batch;
} blas_gemm;

/*! blas_map(): the row-major trick, as a pure function.  Checks that every
 *  size is at least 1 and every stride non-negative (TC_ERR_INTERNAL
 *  otherwise: a plan bug) and the dtype is f32, f16, bf16 or f64
 *  (TC_ERR_UNSUPPORTED). */
tc_status blas_map(const blas_mm *mm, blas_gemm *g, tc_diag *d);

/*! blas_load(): find and load cuBLAS.  TC_OK, or TC_ERR_NO_DEVICE with a
 *  message listing where it looked ("cuBLAS not found (tried ...)"). */
tc_status blas_load(tc_diag *d);
/* After a successful blas_load: the file cuBLAS was loaded from, and in
 * *version major*10000 + minor*100 + patch (0 if unknown); NULL before.
 * The search: $TENSORC_CUBLAS alone if set, else libcublas.so.13/.12,
 * /usr/local/cuda/lib64/libcublas.so.13, then pip wheels' nvidia/cublas/lib
 * (libsearch.h). */
const char *blas_lib_path(int *version);

typedef struct blas_ctx blas_ctx;

/*! blas_new(): load cuBLAS and make a handle in dev's context.  Free with
 *  blas_free before the device is closed. */
tc_status blas_new(drv_device *dev, blas_ctx **out, tc_diag *d);
void blas_free(blas_ctx *b);

/*! blas_matmul(): enqueue mm on stream (asynchronous, like a launch). */
tc_status blas_matmul(blas_ctx *b, const blas_mm *mm, void *stream, tc_diag *d);

#endif
