/* exec.h - running one launch plan (plan.h) on a device.
 *
 * rt_exec walks a plan's steps in order on the caller's stream: it resolves
 * every buffer to a device address (parameters and outputs from the caller,
 * temporaries packed into one block by memplan.h), launches kernels with
 * their arguments typed as the plan says, runs matmuls through cuBLAS and
 * copies through the driver.  Nothing waits: like a kernel launch, a run is
 * asynchronous on its stream.
 *
 * The device is reached through rt_ops, a table of the dozen operations a
 * run needs.  rt.c fills it with the CUDA driver and cuBLAS; the unit tests
 * fill it with host memory and hand-written "kernels", so every line here
 * (argument types, grid clamping, buffer resolution, memory reuse, the
 * workspace, copies, matmul mapping) is tested on machines without a GPU.
 *
 * Memory kept between runs (rt_pool, owned by the context): the block of
 * temporaries and the zeroed workspace grow to the largest run seen and are
 * reused, so a run of a plan already seen allocates nothing.  Because runs
 * are asynchronous, the pool is shared with work still in flight:
 *   - growing it first waits for the device (ops->sync), then frees;
 *   - a run on a different stream than the last run that used the pool
 *     waits for the device first, so two streams never share temporaries
 *     at the same time.  (Runs on one stream are ordered by the stream.)
 *
 * Foreach kernels (plan.h's PARG_GROUPS): the table of groups is built
 * here, the groups with no elements left out, and the grid is their total
 * of chunks; nothing runs when that is zero.  A table larger than the
 * kernel parameter is uploaded (ops->upload) into pool memory kept for the
 * next run, which the stream rule above protects like the temporaries.
 *
 * Index width: rt_needs_idx64 says whether a 32-bit plan's `limits` are
 * exceeded by these sizes; the caller then asks codegen for the idx64 plan.
 */
#ifndef TC_EXEC_H
#define TC_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blas.h"
#include "codegen/plan.h"
#include "diag.h"
#include "memplan.h"

/* The device operations a run needs.  dev is the implementation's own
 * state; addresses are device addresses as integers (CUdeviceptr). */
typedef struct rt_ops {
    tc_status (*alloc)(void *dev, size_t bytes, uint64_t *ptr, tc_diag *d);
    void (*release)(void *dev, uint64_t ptr);
    /* Wait for all work on the device (before memory in use is freed). */
    tc_status (*sync)(void *dev, tc_diag *d);
    tc_status (*zero)(void *dev, uint64_t ptr, size_t bytes, void *stream, tc_diag *d);
    tc_status (*copy)(void *dev, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                      tc_diag *d);
    /* The kernel `name` of a loaded module. */
    tc_status (*kernel)(void *dev, void *module, const char *name, void **fn, tc_diag *d);
    /* args: nargs pointers to each argument's value, typed as plan.h says;
     * sizes: each one's size in bytes (sizeof its C type), so the device
     * side can check them against the kernel's parameters.  cluster: blocks
     * a thread-block cluster along x (1: none; grid[0] a multiple).
     * shmem: dynamic shared memory a block, bytes (plan.h's). */
    tc_status (*launch)(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                        unsigned cluster, unsigned shmem, void **args, const size_t *sizes, int nargs,
                        void *stream, tc_diag *d);
    tc_status (*matmul)(void *dev, const blas_mm *mm, void *stream, tc_diag *d);
    /* Record event (for --bench) on stream. */
    tc_status (*record)(void *dev, void *event, void *stream, tc_diag *d);
    /* Host to device, ordered on stream; src may be reused as soon as it
     * returns (a foreach group table). */
    tc_status (*upload)(void *dev, uint64_t dst, const void *src, size_t bytes, void *stream,
                        tc_diag *d);
    /* The most blocks a cluster launch may have here (1: no clusters), and
     * the fewest threads a block of one should have; NULL: no clusters. */
    unsigned (*clusters)(void *dev, unsigned *min_block);
    /* How many clusters of `cluster` blocks fn (from `kernel`) has resident
     * at once with this block and dynamic shared memory (a persistent grid:
     * plan.h's pipe); 0 or NULL: unknown (the grid stays a cluster a row). */
    unsigned (*resident)(void *dev, void *fn, const unsigned block[3], unsigned cluster, unsigned shmem);
} rt_ops;

/* A scalar parameter's value, rounded to the parameter's dtype, both ways:
 * f as a double and i as an integer (a float truncated), so the kernel
 * argument can take whichever C type the plan passes it as. */
typedef struct rt_scalar {
    double f;
    int64_t i;
} rt_scalar;

/* tc_run_foreach's groups: group i has numel[i] elements in each tensor,
 * params[i * nparams + k] is the address of gfn parameter k (0 for a
 * scalar) and outputs[i * noutputs + k] that of output k (0 for an inout
 * output written in place). */
typedef struct rt_groups {
    int n;
    const int64_t *numel;
    const uint64_t *params;
    const uint64_t *outputs;
} rt_groups;

/* What one run binds to the plan. */
typedef struct rt_args {
    const tc_dimbind *dims;     /* a value for every symbol of the signature */
    int ndims;
    const uint64_t *params;     /* per gfn parameter: a tensor's address (0 for scalars) */
    const rt_scalar *scalars;   /* per gfn parameter: a scalar's value */
    int nparams;
    const uint64_t *outputs;    /* per gfn output: its address, or 0 for scratch memory (an
                                   inout output not written in place, see plan.h) */
    int noutputs;
    /* NULL: one run over the tensors above.  Else (a plan whose one kernel
     * takes PARG_GROUPS) a run over these groups: the tensors above are
     * group 0's, and dims bind "*" to the largest group's element count. */
    const rt_groups *groups;
} rt_args;

/* One kernel argument's value, in the C type plan.h gives it. */
typedef union rt_argval {
    uint64_t ptr;
    int32_t i32;
    long long i64;
    float f32;
    double f64;
    unsigned char b;
} rt_argval;

/* Device memory and host scratch kept between runs (zero-initialize it;
 * release with rt_pool_release). */
typedef struct rt_pool {
    uint64_t block, block_bytes;        /* temporaries */
    uint64_t ws, ws_bytes;              /* the workspace, all zero between runs */
    void *stream;                       /* of the last run that used block or ws */
    bool used;
    /* host scratch, grown as needed, so a run does not malloc */
    uint64_t *addr;                     /* per plan buffer */
    int *item_buf;                      /* per scratch item: its buffer */
    mp_item *items;
    uint64_t *offsets;
    int cap_bufs;
    rt_argval *vals;
    void **argv;
    size_t *sizes;
    int cap_args;
    /* foreach: the group table's words (the kernel parameter), and device
     * memory for tables larger than the parameter holds */
    uint64_t *fe_words;
    size_t cap_fe_words;
    uint64_t fe_dev, fe_dev_bytes;
    /* Bumped whenever block, ws or fe_dev is reallocated or fe_dev gets a
     * new table: a recorded run (trace.h) that used the pool holds their
     * addresses and contents, and may be replayed only while gen is the
     * one it saw. */
    unsigned gen;
    bool last_used;                     /* the last run used block, ws or fe_dev */
} rt_pool;

/* Whether a guarded step runs where its guard's value is v (plan.h) */
static inline bool rt_guard_passes(const pstep *s, int64_t v)
{
    return s->guard_above ? v > s->guard_max : v <= s->guard_max;
}

/*! rt_step_runs(): whether step s of plan runs at a's sizes (plan.h's
 *  guards: a step skipped there launches nothing) */
tc_status rt_step_runs(const tc_plan *plan, int s, const rt_args *a, bool *runs, tc_diag *d);

/*! rt_exec(): enqueue every step of plan on stream.  module holds the
 *  plan's kernels (ops->kernel looks them up).  events: NULL, or
 *  plan->nsteps + 1 events; events[i] is recorded before step i and
 *  events[nsteps] after the last, so step i took events[i]..events[i+1].
 *  Errors: TC_ERR_INTERNAL for a malformed plan (a bug in tensorc, named),
 *  TC_ERR_LIMIT for a grid beyond the device's limits, or the device's. */
tc_status rt_exec(rt_pool *pool, const rt_ops *ops, void *dev, void *module,
                  const tc_plan *plan, const rt_args *a, void *stream, void *const *events,
                  tc_diag *d);

/*! rt_pool_release(): free the pool's device memory (after waiting for the
 *  device) and its host scratch; the pool may be used again afterwards. */
void rt_pool_release(rt_pool *pool, const rt_ops *ops, void *dev);

/*! rt_needs_idx64(): whether plan is a 32-bit plan and one of its limits
 *  is 2^31 or more under dims (*which and *value, when not NULL, say which).
 *  A limit that cannot be evaluated counts as exceeded. */
bool rt_needs_idx64(const tc_plan *plan, const tc_dimbind *dims, int ndims, const tc_dim **which,
                    int64_t *value);

/*! rt_step_bytes(): the bytes step `step` moves: the sum of the sizes of the
 *  distinct buffers it names (kernel arguments, matmul operands), or twice
 *  the bytes copied; 0 for a step its guard skips at these sizes (plan.h).
 *  For --bench's GB/s; -1 if a size cannot be evaluated. */
int64_t rt_step_bytes(const tc_plan *plan, int step, const tc_dimbind *dims, int ndims);

/*! rt_step_skipped(): whether step `step` (in range) is guarded off at
 *  these sizes (plan.h); false when its guard cannot be evaluated */
bool rt_step_skipped(const tc_plan *plan, int step, const tc_dimbind *dims, int ndims);

/*! rt_buf_bytes(): the bytes of buffer b at these sizes, or -1 when b is
 *  out of range or its size cannot be evaluated. */
int64_t rt_buf_bytes(const tc_plan *plan, int b, const tc_dimbind *dims, int ndims);
/*! rt_step_name(): a kernel's name, "matmul (cuBLAS)" or "copy". */
const char *rt_step_name(const pstep *s);

#endif
