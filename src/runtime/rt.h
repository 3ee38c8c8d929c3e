/* rt.h - the GPU side of a tensorc context (struct tc_rt).
 *
 * A tc_ctx holds one tc_rt, made on the first GPU call (or by
 * tc_ctx_create_ex, which records the options without touching the driver)
 * so that a program that only compiles never loads libcuda.  It owns, for
 * one device:
 *
 *   - the opened device and its context (driver.h);
 *   - the JIT context: images by source, in memory and on disk (jit.h);
 *   - loaded modules, keyed by their image (jit_image hands back one stable
 *     pointer per distinct source, so the image is the module's identity and
 *     a freed program can never leave a stale module behind), each with the
 *     kernels looked up so far and their parameter sizes as the driver
 *     reports them: every launch checks the plan's arguments against them,
 *     so a plan that passes an argument of the wrong size, or more
 *     arguments than the kernel takes, is an error naming both, never a
 *     kernel reading garbage (a kernel taking more than the plan passes
 *     goes unnoticed: the driver cannot count parameters without an API
 *     error that sanitizers report);
 *   - a cuBLAS handle, made on the first matmul (blas.h), or, with
 *     TENSORC_BLAS_EARLY=1, started early: rt_blas_early loads cuBLAS and
 *     makes the handle on a thread of its own while NVRTC compiles the
 *     kernels, and the first matmul joins it.  Measured on an H200 in a
 *     fresh process (session 22): dlopen of libcublas/libcublasLt 55-65 ms
 *     (268 with a cold page cache) and cublasCreate 3 ms, against NVRTC's
 *     ~45 ms for mlp_bwd's kernels; the first product's own start-up
 *     (~85-130 ms, cuBLAS loading its kernels) stays on the caller's
 *     thread.  Off by default: the cold compile of mlp_bwd measured 182-252
 *     ms with it against 237-276 without in one call (tc-bench, medians of
 *     3, two runs each), and 165-191 against 164-211 in another (a fresh
 *     machine, four runs each, alternating): no gain shown.  The cause,
 *     measured on a CPU (session 22: a thread's dlopen of libcublas.so.13
 *     beside NVRTC loading and compiling a one-line kernel on the main
 *     thread): dlopen holds the loader's lock for its 50-80 ms, and NVRTC
 *     needs it too, for dlsym and inside nvrtcCompileProgram even when
 *     loaded first (compile 33-40 ms alone, 92-112 beside the thread; all
 *     of it 89-128 ms either way).  What could still overlap the compile:
 *     cublasCreate and a first product (the 85-130 ms of cuBLAS loading its
 *     kernels) after a dlopen on the caller's thread; not measured.
 *     Nothing is shared while it
 *     runs: the thread writes blas_early alone, read after the join;
 *     blas_load has its own lock.  A failure there is forgotten: the first
 *     matmul tries again on its own thread, where the error is reported;
 *   - the pool of temporaries and the workspace (exec.h).
 *
 * rt_ops_cuda (the CUDA implementation of exec.h's rt_ops) takes the
 * tc_rt as its `dev`.
 *
 * Thread safety: like the context, one thread at a time.
 */
#ifndef TC_RT_H
#define TC_RT_H

#include <pthread.h>

#include "blas.h"
#include "driver.h"
#include "exec.h"
#include "jit.h"
#include "knobs.h"

typedef struct rt_kernel {
    char *name;
    drv_fn fn;
    int nparams;                /* parameters known (see cu_launch); -1: the driver cannot say */
    bool probed;                /* nparams and param_sizes are filled */
    size_t *param_sizes;        /* nparams sizes in bytes */
    /* cu_resident's last answer (TENSORC_ROWS_PIPE's persistent grid), for
     * clusters of res_cluster blocks of res_block threads with res_shmem
     * bytes (res_cluster 0: none yet): the query once, not every launch */
    unsigned res_block, res_cluster, res_shmem, res;
} rt_kernel;

typedef struct rt_module {
    const void *image;          /* the key: owned by the jit_ctx */
    char *source;               /* a copy of the source it was built from (malloc'd), so a
                                 * repeated call finds it without hashing the source */
    size_t source_len;
    drv_module *mod;
    rt_kernel *kernels;
    int nkernels, cap;
} rt_module;

struct tc_rt {
    int ordinal;                /* the device; -1 until known (TC_DEVICE_AUTO) */
    char *cache_dir;            /* NULL: the default (cache.h) */
    const char *nvrtc_opts[2];  /* opt-in NVRTC options (fast math, line info); in the cache key */
    int nnvrtc_opts;
    drv_device *dev;            /* NULL until rt_open succeeds */
    jit_ctx *jit;
    blas_ctx *blas;             /* NULL until the first matmul */
    pthread_t blas_thread;      /* rt_blas_early's, joined by the first matmul or rt_free */
    bool blas_started;          /* the thread runs (or has run and is not yet joined) */
    blas_ctx *blas_early;       /* what it made (NULL: it failed); written by it alone */
    bool blas_off;              /* no such thread: TENSORC_BLAS_EARLY unset or 0 */
    rt_module **mods;
    int nmods, capmods;
    rt_pool pool;
    jit_origin origin;          /* where the last rt_load's image came from */
    double jit_ms;              /* and how long getting it took */
    int jit_arch;               /* what it was compiled for: sm_XX, or compute_XX when */
    bool jit_ptx;               /*   PTX (a device newer than NVRTC knows) */
    unsigned cluster_max;       /* the context's knobs (knobs.h): the most blocks of a cluster, */
    unsigned cluster_block;     /*   the fewest threads of its blocks */
    char knobs[512];            /*   and all of them as text, a part of the kernel cache key */
};

/*! rt_new(): GPU state for device ordinal (-1: decided at the first run)
 *  and a kernel cache in cache_dir (NULL: the default; copied), under the
 *  context's tuning knobs k (NULL: none).  Touches no driver.  NULL when
 *  out of memory. */
struct tc_rt *rt_new(int ordinal, const char *cache_dir, const tc_knobs *k);
/*! rt_set_options(): the opt-in NVRTC options for later compilations. */
void rt_set_options(struct tc_rt *rt, bool fast_math, bool line_info);
/*! rt_free(): wait for the device, free everything (NULL is fine). */
void rt_free(struct tc_rt *rt);

/*! rt_open(): open the device (rt->ordinal, 0 if still unknown) and the JIT
 *  context, once; later calls return TC_OK at once.  TC_ERR_NO_DEVICE (no
 *  driver, no GPU) with the driver's message; nothing is kept on failure,
 *  so a later call tries again. */
tc_status rt_open(struct tc_rt *rt, tc_diag *d);

/*! rt_load(): the loaded module of a unit's CUDA source: NVRTC (or the
 *  cache) for the device's arch, clamped to what NVRTC supports (PTX for a
 *  device newer than NVRTC knows), then loaded once.  rt->origin says where
 *  the image came from ("cache: hit" unless JIT_COMPILED). */
tc_status rt_load(struct tc_rt *rt, const char *source, rt_module **mod, tc_diag *d);
/*! rt_reuse(): note that the caller runs a module an earlier rt_load gave
 *  it (origin: this context's kernels, no JIT time), as rt_load's memory
 *  path would. */
void rt_reuse(struct tc_rt *rt);

/*! rt_blas_early(): start loading cuBLAS and making the handle on a
 *  thread of its own, for a plan with matmul steps, before its kernels
 *  compile (see above; only with TENSORC_BLAS_EARLY=1).  Nothing when the
 *  device is not open, the handle exists or the thread is started. */
void rt_blas_early(struct tc_rt *rt);

/*! rt_run(): rt_exec of plan with mod's kernels, on stream. */
tc_status rt_run(struct tc_rt *rt, rt_module *mod, const tc_plan *plan, const rt_args *a,
                 void *stream, void *const *events, tc_diag *d);

/*! rt_kernel_check(): the sizes of the nargs arguments a plan passes to
 *  kernel k against its parameters as the driver reports them (asked on
 *  the first launch); TC_ERR_INTERNAL naming both when they differ. */
tc_status rt_kernel_check(rt_kernel *k, const size_t *sizes, int nargs, tc_diag *d);

/* The CUDA implementation of rt_ops; dev is a struct tc_rt *. */
extern const rt_ops rt_ops_cuda;

#endif
