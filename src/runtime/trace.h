/* trace.h - a run's launches, recorded so they can be enqueued again
 * without the plan: tc_run's repeated calls (the same arguments as a call
 * already checked) and tc_capture's CUDA graphs.
 *
 * rt_run_traced runs a plan as rt_run does (rt_exec, the same checks and
 * pool), and records each kernel launch (the function, grid, block and
 * the bytes of every argument) and each device copy.  rt_trace_run then
 * enqueues exactly those again: no dims evaluated, no buffers resolved, no
 * kernel looked up, one cuLaunchKernel per kernel.
 *
 * When a recording may be replayed (rt_trace_valid):
 *   - every step was a kernel or a copy (a cuBLAS matmul is not recorded);
 *   - the pool (exec.h) still has the generation the run left it with: the
 *     recorded arguments hold the addresses of its temporaries, workspace
 *     and foreach table, and gen changes when any is reallocated or the
 *     table rewritten;
 *   - when the run used the pool, the pool's last user ran on the same
 *     stream (else rt_exec would have waited for the device first: the
 *     caller takes the full path, which does).
 */
#ifndef TC_TRACE_H
#define TC_TRACE_H

#include "rt.h"

typedef struct rt_launch {
    bool copy;                  /* a device copy, else a kernel */
    drv_fn fn;
    unsigned grid[3], block[3];
    unsigned cluster;           /* blocks a cluster (sm_90 long rows); 0 or 1: none */
    unsigned shmem;             /* dynamic shared memory a block, bytes */
    int nargs;
    int argv_at;                /* its arguments' pointers: argv[argv_at..] */
    uint64_t dst, src;          /* a copy */
    size_t bytes;
} rt_launch;

/* A kernel argument that is a scalar parameter's value: rewritten from the
 * call's scalars before each replay (changing a scalar changes no launch
 * but this one value: an optimizer's step count, its learning rate). */
typedef struct rt_patch {
    int argv;                   /* the argument (an index into argv) */
    int param;                  /* the gfn parameter */
    tc_dtype dtype;             /* the C type it is passed as (plan.h's PARG_SCALAR) */
} rt_patch;

typedef struct rt_trace {
    rt_launch *l;
    int n, cap;
    unsigned char *vals;        /* the argument values, each 16-byte aligned */
    size_t nvals, capvals;
    size_t *val_at;             /* per argument: its offset in vals */
    void **argv;                /* per argument: vals + val_at, made by the last record */
    int nargv, capargv;
    rt_patch *patches;
    int npatches, cappatches;
    bool replayable;            /* only kernels and copies were recorded */
    bool failed;                /* out of memory while recording: not replayable */
    const char *why;            /* not replayable: what was not recorded */
    const rt_pool *pool;
    unsigned pool_gen;
    bool uses_pool;
    void *stream;
} rt_trace;

/*! rt_run_traced(): rt_run on pool with every launch and copy recorded in
 *  *t (emptied first).  execute false records without launching or
 *  copying anything (allocations, the workspace's zeroing and a foreach
 *  table's upload still happen: they are the pool's state, not the run's),
 *  and a matmul is then TC_ERR_UNSUPPORTED. */
tc_status rt_run_traced(struct tc_rt *rt, rt_pool *pool, rt_module *mod, const tc_plan *plan,
                        const rt_args *a, void *stream, bool execute, rt_trace *t, tc_diag *d);

/*! rt_trace_set_scalars(): the scalar arguments of t's launches from
 *  scalars (per gfn parameter, as rt_args has them). */
void rt_trace_set_scalars(rt_trace *t, const rt_scalar *scalars);

/*! rt_patch_size(): the bytes a scalar argument of dtype takes (its C type). */
size_t rt_patch_size(tc_dtype dtype);

/*! rt_trace_valid(): whether t may be enqueued on stream now (see above). */
bool rt_trace_valid(const rt_trace *t, void *stream);

/*! rt_trace_run(): enqueue t's launches and copies on stream. */
tc_status rt_trace_run(struct tc_rt *rt, const rt_trace *t, void *stream, tc_diag *d);

/*! rt_trace_free(): free what t holds; t may be recorded into again. */
void rt_trace_free(rt_trace *t);

#endif
