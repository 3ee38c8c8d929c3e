/* plan.h - the launch plan: what the runtime does to run one function.
 *
 * Code generation produces, per entry function, CUDA source (every kernel in
 * one NVRTC program) and this plan.  The runtime binds sizes (graph_bind
 * gives every symbol of the signature a value), allocates buffers and walks
 * the steps in order on the caller's stream.  Everything size-dependent is a
 * tc_dim over the signature's symbols, evaluated with bind_eval(): one plan
 * serves every size.
 *
 * Buffers
 *   PBUF_PARAM   a tensor parameter (gfn param index `index`), supplied by
 *                the caller, contiguous row-major (the runtime checks).
 *   PBUF_OUTPUT  output `index` of the function (gfn output index),
 *                contiguous row-major: supplied by the caller (C API) or
 *                allocated (CLI).  An inout output written in place has
 *                alias = the PARAM buffer id of its parameter and needs no
 *                memory of its own; otherwise alias is -1 and, for an inout
 *                output, a final PSTEP_COPY writes it back to the param.
 *                A value several outputs return is stored to each by a
 *                kernel; an extern step (cuBLAS, the generated matmul or
 *                attention kernel) writes the first, and final
 *                PSTEP_COPYs the others.
 *   PBUF_TEMP    an intermediate between kernels, contiguous, allocated by
 *                the runtime; live from step `first` to step `last`
 *                (inclusive), so temps whose lives do not overlap may share
 *                memory (`slot`: the plan's suggestion, temps with the same
 *                slot never overlap; nslots slots in all).
 *
 * Steps
 *   PSTEP_KERNEL  launch `kernel` with grid[0..2] x block[0..2]; grid[0] is
 *                 clamped to [1, grid_cap] (kernels loop over their work, so
 *                 a clamped grid is still correct).  Arguments in order:
 *                   PARG_BUF      the buffer's device pointer (void *)
 *                   PARG_DIM      the dim's value as the kernel's index
 *                                 type: long long when plan->idx64 or the
 *                                 step's idx64 is set, else int
 *                   PARG_SCALAR   scalar parameter `param` as `dtype`'s C
 *                                 type: float (f32, and f16/bf16 passed as
 *                                 float), double, int (i32), long long
 *                                 (i64), bool (1 byte)
 *                   PARG_WORKSPACE a pointer to ws_bytes of device memory
 *                                 that is all zero before the first launch;
 *                                 the kernel leaves it zero again, so one
 *                                 zeroed area per context can be reused.
 *                   PARG_GROUPS   a foreach kernel's group table, passed by
 *                                 value (__grid_constant__), 64-bit words:
 *                                   [0] device address of the groups when
 *                                       they are not in this table, else 0
 *                                   [1] the number of groups
 *                                   then fe_cap groups of fe_n + 2 words:
 *                                   fe_n addresses (buffers fe_bufs[0..fe_n)
 *                                   of that group), its element count, its
 *                                   first block.
 *                                 Groups with no elements are left out; the
 *                                 grid is the sum of each group's
 *                                 ceil(count / fe_chunk) (the plan's grid is
 *                                 that for one group of fe_numel).  More
 *                                 groups than fe_cap: the same layout (from
 *                                 the first group on) goes to device memory.
 *  PSTEP_MATMUL   C = A @ B through cuBLAS, row-major, batched:
 *                 for b < batch: C[b] (m x n, contiguous) =
 *                 op(A)[b] (m x k) * op(B)[b] (k x n), all of `dtype`
 *                 (f32, f16, bf16; f16/bf16 accumulate in f32).
 *                 A is stored as m x k row-major (lda = k) or, with ta, as
 *                 k x m row-major (lda = m); likewise B as k x n (ldb = n)
 *                 or, with tb, n x k (ldb = k).  Batch strides in elements
 *                 (0: the same matrix for every batch).
 *  PSTEP_COPY     copy_bytes bytes from buffer src to buffer dst.
 *
 * Guards: a step with `guard` set runs only when the guard's value is at
 * most guard_max (guard_above false) or above it (guard_above true); the
 * runtime skips it otherwise, workspace and all.  A matmul with symbolic M
 * has two steps writing its output, the generated kernel guarded by
 * M <= its limit and cuBLAS by M above it (sched_matmul.c), so exactly one
 * runs at any size.
 *
 * Index width: a plan with idx64 false was generated for 32-bit indices and
 * is valid only when every dim in `limits` evaluates below 2^31; otherwise
 * the runtime asks codegen for the idx64 variant (codegen_fn with idx64).
 * The limits are every buffer's and kernel domain's element count plus 64,
 * and the values kernels need beyond those (a loop's bound plus its step);
 * plan_verify proves, for every loop of every kernel step, that the largest
 * value its variable reaches, final increment included, is at most one of
 * them, so no index arithmetic wraps.  Grid-stride loops saturate at their
 * bound instead of stepping past it, so a 32-bit plan serves up to
 * 2^31 - 65 elements.
 */
#ifndef TC_PLAN_H
#define TC_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "dim.h"
#include "dtype.h"

typedef enum { PBUF_PARAM, PBUF_OUTPUT, PBUF_TEMP } pbuf_kind;

typedef struct pbuf {
    pbuf_kind kind;
    int index;              /* PARAM: gfn param index; OUTPUT: gfn output index; TEMP: -1 */
    int alias;              /* OUTPUT written in place: the PARAM buffer id; else -1 */
    tc_dtype dtype;
    int rank;
    const tc_dim **shape;
    const tc_dim *numel;
    int first, last;        /* TEMP: steps that write it first and read it last */
    int slot;               /* TEMP: shared-memory suggestion, see above */
    const char *name;       /* as in the generated source: "in_x", "out_y", "buf3" */
} pbuf;

typedef enum { PARG_BUF, PARG_DIM, PARG_SCALAR, PARG_WORKSPACE, PARG_GROUPS } parg_kind;

typedef struct parg {
    parg_kind kind;
    int buf;                /* PARG_BUF */
    const tc_dim *dim;      /* PARG_DIM */
    int param;              /* PARG_SCALAR: gfn param index */
    tc_dtype dtype;         /* PARG_SCALAR: the C type it is passed as (see above) */
} parg;

typedef enum { PSTEP_KERNEL, PSTEP_MATMUL, PSTEP_COPY } pstep_kind;

/* A parameter of a kernel as its signature declares it: what each step
 * that launches the kernel passes in that place (a parg of this kind; a
 * buffer of this element dtype). */
typedef struct pparam {
    parg_kind kind;
    tc_dtype dtype;         /* PARG_BUF: the buffer's dtype; PARG_SCALAR: as parg's */
    bool written;           /* PARG_BUF: the kernel stores to it (else const) */
} pparam;

/* A kernel of the unit that the plan launches. */
typedef struct pkernel {
    const char *name;
    pparam *params;
    int nparams;
} pkernel;

/* An index variable of a kernel and the largest value it takes: a loop
 * `for (var = ...; var < bound; var += step)` reaches bound - 1 + step after
 * its last increment; with step NULL the loop is written so it cannot pass
 * bound (var = bound - var > step ? var + step : bound), and a plain value
 * (a thread's first column) is at most bound.  plan_verify proves each one
 * below a dim of the plan's limits. */
typedef struct ploop {
    const char *var;        /* as in the source: "base", "row", "r", ... */
    const tc_dim *bound;
    const tc_dim *step;     /* NULL: saturating, or a plain value */
} ploop;

typedef struct pstep {
    pstep_kind kind;
    /* KERNEL */
    int kidx;               /* the kernel it launches: plan->kernels[kidx] */
    const char *kernel;     /* its name, plan->kernels[kidx] */
    parg *args;
    int nargs;
    const tc_dim *grid[3];
    int64_t grid_cap;
    int block[3];
    int shmem;              /* dynamic shared memory a block, bytes (0: none; past 48 KB the
                             * runtime raises the kernel's limit first) */
    bool resident;          /* grid_cap is a resident grid (TENSORC_MATMUL_RESIDENT), printed */
    const tc_dim *block_len;    /* NULL: block[0] as it is; else see above */
    int block_per;
    int cluster;            /* row kernels: the most blocks a cluster may split a row across
                             * (sched.h, "Clusters"; the runtime sizes it), 0: none */
    int pipe;               /* row kernels with a cluster (TENSORC_ROWS_PIPE=1): bytes a thread
                             * of dynamic shared memory for the next row's slice; the
                             * runtime then launches at most the resident clusters
                             * (a persistent grid; codegen/rows.c), 0: none */
    const tc_dim *ws_bytes; /* NULL when no PARG_WORKSPACE */
    bool idx64;             /* this kernel takes 64-bit sizes even in a 32-bit plan */
    ploop *loops;           /* its index variables' bounds (see ploop) */
    int nloops;
    /* PARG_GROUPS (foreach kernels) */
    int *fe_bufs;           /* the table's buffers, in order */
    int fe_n;
    int fe_cap;             /* groups the kernel parameter holds */
    int64_t fe_chunk;       /* elements a block takes */
    const tc_dim *fe_numel; /* a single group's element count (tc_run) */
    /* MATMUL */
    struct {
        int a, b, c;        /* buffer ids */
        bool ta, tb;
        const tc_dim *m, *n, *k, *batch;
        const tc_dim *stride_a, *stride_b, *stride_c;
        tc_dtype dtype;
    } mm;
    /* COPY */
    int src, dst;
    const tc_dim *copy_bytes;
    /* any step: runs only when guard <= guard_max (or > it with guard_above) */
    const tc_dim *guard;
    int64_t guard_max;
    bool guard_above;
} pstep;

typedef struct tc_plan {
    const char *fn;
    pbuf *bufs;
    int nbufs;
    pstep *steps;
    int nsteps;
    pkernel *kernels;       /* the unit's kernels the steps launch, each once: steps
                             * whose code is the same (compact kernels of a long
                             * chain, codegen.h) share one with their own arguments */
    int nkernels;
    int nslots;
    bool idx64;
    const tc_dim **limits;  /* must each be < 2^31 when !idx64 */
    int nlimits;
} tc_plan;

struct tc_diag;
/* Check p's index bounds (above): every loop of every 32-bit kernel step
 * below one of p->limits.  On failure a TC_ERR_INTERNAL through d naming the
 * kernel and the loop; returns normally otherwise. */
void plan_verify(const tc_plan *p, tc_dimctx *c, tc_arena *a, struct tc_diag *d);

#endif
