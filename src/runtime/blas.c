/* blas.c - cuBLAS loaded with dlopen; see blas.h for why and the row-major trick.
 *
 * The approach mirrors driver.c: prototypes copied by hand from
 * cublas_api.h (CUDA 12/13; stable since CUDA 11), resolved with dlsym into
 * one static table that is read-only once filled, the load guarded by a
 * mutex.  cuBLAS's handle-based entry points have _v2 names in the library
 * (cublas_v2.h maps cublasCreate to cublasCreate_v2); the Ex calls do not.
 * cublasGemmStridedBatchedEx_64 (64-bit sizes, CUDA 12+) is optional: it is
 * used only when a size does not fit an int.
 */
#include "blas.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlsym.h"
#include "libsearch.h"
#include "strbuf.h"

/* --- cuBLAS's C ABI, declared here instead of including cublas_v2.h ------ */

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
typedef struct CUstream_st *cudaStream_t;

enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16F = 2,
    CUDA_R_16BF = 14,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_GEMM_DEFAULT = -1,
};

typedef cublasStatus_t (*fn_gemm)(cublasHandle_t h, int transa, int transb, int m, int n, int k,
                                  const void *alpha, const void *a, int atype, int lda,
                                  long long stride_a, const void *b, int btype, int ldb,
                                  long long stride_b, const void *beta, void *c, int ctype,
                                  int ldc, long long stride_c, int batch, int compute, int algo);
typedef cublasStatus_t (*fn_gemm64)(cublasHandle_t h, int transa, int transb, int64_t m,
                                    int64_t n, int64_t k, const void *alpha, const void *a,
                                    int atype, int64_t lda, long long stride_a, const void *b,
                                    int btype, int64_t ldb, long long stride_b, const void *beta,
                                    void *c, int ctype, int64_t ldc, long long stride_c,
                                    int64_t batch, int compute, int algo);

static struct {
    bool ok;
    cublasStatus_t (*create)(cublasHandle_t *h);
    cublasStatus_t (*destroy)(cublasHandle_t h);
    cublasStatus_t (*set_stream)(cublasHandle_t h, cudaStream_t s);
    fn_gemm gemm;
    fn_gemm64 gemm64;           /* NULL when the library lacks it */
    int (*get_property)(int type, int *value); /* cublasGetProperty; optional */
    const char *(*status_name)(cublasStatus_t s);
    const char *(*status_string)(cublasStatus_t s);
} cb;

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;

#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

struct blas_ctx {
    drv_device *dev;
    cublasHandle_t h;
};

/* --- the row-major trick ---------------------------------------------------- */

tc_status blas_map(const blas_mm *mm, blas_gemm *g, tc_diag *d)
{
    memset(g, 0, sizeof *g);
    if (mm->dtype != TC_F32 && mm->dtype != TC_F16 && mm->dtype != TC_BF16 && mm->dtype != TC_F64)
        return SET(d, TC_ERR_UNSUPPORTED, "matmul of %s: cuBLAS is used for f32, f16, bf16 and f64",
                   dtype_name(mm->dtype));
    if (mm->m < 1 || mm->n < 1 || mm->k < 1 || mm->batch < 1)
        return SET(d, TC_ERR_INTERNAL, "matmul with m=%lld n=%lld k=%lld batch=%lld: every size must be at least 1",
                   (long long)mm->m, (long long)mm->n, (long long)mm->k, (long long)mm->batch);
    if (mm->stride_a < 0 || mm->stride_b < 0 || mm->stride_c < 0)
        return SET(d, TC_ERR_INTERNAL, "matmul with a negative batch stride");
    /* cuBLAS's A is our B: stored k x n row-major (n x k column-major, used
     * as is) or, with tb, n x k row-major (k x n column-major, transposed). */
    g->a = mm->b;
    g->transa = mm->tb;
    g->lda = mm->tb ? mm->k : mm->n;
    g->stride_a = mm->stride_b;
    /* cuBLAS's B is our A: stored m x k row-major (k x m column-major) or,
     * with ta, k x m row-major (m x k column-major, transposed). */
    g->b = mm->a;
    g->transb = mm->ta;
    g->ldb = mm->ta ? mm->m : mm->k;
    g->stride_b = mm->stride_a;
    /* C^T is n x m column-major: exactly C, m x n row-major. */
    g->m = mm->n;
    g->n = mm->m;
    g->k = mm->k;
    g->c = mm->c;
    g->ldc = mm->n;
    g->stride_c = mm->stride_c;
    g->batch = mm->batch;
    return TC_OK;
}

/* --- loading ------------------------------------------------------------------ */

static bool load_from(const char *path, tc_strbuf *why)
{
    static const char *const names[] = {
        "cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasGemmStridedBatchedEx",
        "cublasGetStatusName", "cublasGetStatusString",
    };
    void *const slots[] = {&cb.create, &cb.destroy, &cb.set_stream, &cb.gemm, &cb.status_name,
                           &cb.status_string};
    _Static_assert(sizeof names / sizeof *names == sizeof slots / sizeof *slots,
                   "one slot per cuBLAS entry point");
    void *h = dl_open_all(path, names, slots, sizeof names / sizeof *names, why);
    if (!h)
        return false;
    if (!dl_sym(h, "cublasGemmStridedBatchedEx_64", &cb.gemm64))
        cb.gemm64 = NULL;
    if (!dl_sym(h, "cublasGetProperty", &cb.get_property)) /* for tensorc doctor only */
        cb.get_property = NULL;
    return true; /* kept for the process: cuBLAS may be shared with PyTorch */
}

const char *blas_lib_path(int *version)
{
    static char buf[4096];
    pthread_mutex_lock(&cb_lock);
    bool ok = cb.ok;
    pthread_mutex_unlock(&cb_lock);
    *version = 0;
    if (!ok)
        return NULL;
    int major = 0, minor = 0, patch = 0; /* libraryPropertyType: MAJOR 0, MINOR 1, PATCH 2 */
    if (cb.get_property && cb.get_property(0, &major) == 0 && cb.get_property(1, &minor) == 0 &&
        cb.get_property(2, &patch) == 0)
        *version = major * 10000 + minor * 100 + patch;
    return libsearch_path_of((const void *)(uintptr_t)cb.create, buf, sizeof buf) ? buf : "?";
}

tc_status blas_load(tc_diag *d)
{
    pthread_mutex_lock(&cb_lock);
    tc_strbuf tried = {0}, why = {0};
    if (!cb.ok) {
        /* $TENSORC_CUBLAS replaces the search: it names the one to use */
        const char *env = getenv("TENSORC_CUBLAS");
        const char *cands[] = {"libcublas.so.13", "libcublas.so.12",
                               "/usr/local/cuda/lib64/libcublas.so.13"};
        size_t ncands = sizeof cands / sizeof *cands;
        if (env && *env) {
            cands[0] = env;
            ncands = 1;
        }
        for (size_t i = 0; i < ncands && !cb.ok; i++) {
            strbuf_printf(&tried, "%s%s", tried.len ? ", " : "", cands[i]);
            cb.ok = load_from(cands[i], &why);
        }
        /* the last resort, unless $TENSORC_CUBLAS named the one: a pip
         * wheel's nvidia/cublas/lib (libsearch.h), searched only now */
        if (!cb.ok && !(env && *env)) {
            tc_strbuf sites = {0};
            char **w = libsearch_wheels("cublas/lib/libcublas.so*", &sites);
            for (size_t i = 0; w && w[i] && !cb.ok; i++) {
                strbuf_printf(&tried, ", %s", w[i]);
                cb.ok = load_from(w[i], &why);
            }
            if (!w)
                strbuf_printf(&tried, ", pip wheels' nvidia/cublas (site-packages: %s)",
                              sites.s ? sites.s : "none found");
            libsearch_free(w);
            free(sites.s);
        }
    }
    bool ok = cb.ok;
    pthread_mutex_unlock(&cb_lock);
    tc_status st = TC_OK;
    if (!ok)
        st = SET(d, TC_ERR_NO_DEVICE,
                 "cuBLAS not found (tried %s%s%s): matmul needs the CUDA toolkit's libcublas, or set "
                 "TENSORC_CUBLAS", tried.s ? tried.s : "", why.s ? "; last error: " : "",
                 why.s ? why.s : "");
    free(tried.s);
    free(why.s);
    return st;
}

static tc_status fail(tc_diag *d, const char *call, cublasStatus_t r)
{
    const char *name = cb.status_name ? cb.status_name(r) : NULL;
    const char *text = cb.status_string ? cb.status_string(r) : NULL;
    tc_status st = r == CUBLAS_STATUS_ALLOC_FAILED     ? TC_ERR_NOMEM
                   : r == CUBLAS_STATUS_NOT_INITIALIZED ? TC_ERR_NO_DEVICE
                   : r == CUBLAS_STATUS_NOT_SUPPORTED || r == CUBLAS_STATUS_ARCH_MISMATCH
                       ? TC_ERR_UNSUPPORTED
                       : TC_ERR_INTERNAL;
    return SET(d, st, "%s failed: %s (%s)", call, name ? name : "unknown cuBLAS status",
               text ? text : "no description");
}

tc_status blas_new(drv_device *dev, blas_ctx **out, tc_diag *d)
{
    *out = NULL;
    tc_status st = blas_load(d);
    if (st != TC_OK)
        return st;
    blas_ctx *b = calloc(1, sizeof *b);
    if (!b)
        return SET(d, TC_ERR_NOMEM, "out of memory");
    bool pushed = drv_enter(dev);
    cublasStatus_t r = cb.create(&b->h);
    drv_leave(pushed);
    if (r != CUBLAS_STATUS_SUCCESS) {
        free(b);
        return fail(d, "cublasCreate", r);
    }
    b->dev = dev;
    *out = b;
    return TC_OK;
}

void blas_free(blas_ctx *b)
{
    if (!b)
        return;
    bool pushed = drv_enter(b->dev);
    cb.destroy(b->h);
    drv_leave(pushed);
    free(b);
}

/* cudaDataType and compute type for a dtype (blas_map has checked it). */
static void types_of(tc_dtype dt, int *data, int *compute)
{
    switch (dt) {
    case TC_F16: *data = CUDA_R_16F; *compute = CUBLAS_COMPUTE_32F; return;
    case TC_BF16: *data = CUDA_R_16BF; *compute = CUBLAS_COMPUTE_32F; return;
    case TC_F64: *data = CUDA_R_64F; *compute = CUBLAS_COMPUTE_64F; return;
    default: *data = CUDA_R_32F; *compute = CUBLAS_COMPUTE_32F; return;
    }
}

static bool fits_int(const blas_gemm *g)
{
    return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX &&
           g->ldb <= INT_MAX && g->ldc <= INT_MAX && g->batch <= INT_MAX;
}

tc_status blas_matmul(blas_ctx *b, const blas_mm *mm, void *stream, tc_diag *d)
{
    blas_gemm g;
    tc_status st = blas_map(mm, &g, d);
    if (st != TC_OK)
        return st;
    int data, compute;
    types_of(mm->dtype, &data, &compute);
    bool small = fits_int(&g);
    if (!small && !cb.gemm64)
        return SET(d, TC_ERR_LIMIT, "matmul of %lld x %lld by %lld x %lld (batch %lld): a size "
                   "does not fit cuBLAS's 32-bit arguments and this cuBLAS has no 64-bit API",
                   (long long)mm->m, (long long)mm->k, (long long)mm->k, (long long)mm->n,
                   (long long)mm->batch);
    /* alpha = 1, beta = 0 in the compute type (host pointers: the default mode). */
    float one32 = 1, zero32 = 0;
    double one64 = 1, zero64 = 0;
    const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)&one64 : (const void *)&one32;
    const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)&zero64 : (const void *)&zero32;
    const void *pa = (const void *)(uintptr_t)g.a, *pb = (const void *)(uintptr_t)g.b;
    void *pc = (void *)(uintptr_t)g.c;
    int ta = g.transa ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.transb ? CUBLAS_OP_T : CUBLAS_OP_N;

    bool pushed = drv_enter(b->dev);
    cublasStatus_t r = cb.set_stream(b->h, (cudaStream_t)stream);
    const char *call = "cublasSetStream";
    if (r == CUBLAS_STATUS_SUCCESS && small) {
        call = "cublasGemmStridedBatchedEx";
        r = cb.gemm(b->h, ta, tb, (int)g.m, (int)g.n, (int)g.k, alpha, pa, data, (int)g.lda,
                    g.stride_a, pb, data, (int)g.ldb, g.stride_b, beta, pc, data, (int)g.ldc,
                    g.stride_c, (int)g.batch, compute, CUBLAS_GEMM_DEFAULT);
    } else if (r == CUBLAS_STATUS_SUCCESS) {
        call = "cublasGemmStridedBatchedEx_64";
        r = cb.gemm64(b->h, ta, tb, g.m, g.n, g.k, alpha, pa, data, g.lda, g.stride_a, pb, data,
                      g.ldb, g.stride_b, beta, pc, data, g.ldc, g.stride_c, g.batch, compute,
                      CUBLAS_GEMM_DEFAULT);
    }
    drv_leave(pushed);
    return r == CUBLAS_STATUS_SUCCESS ? TC_OK : fail(d, call, r);
}
