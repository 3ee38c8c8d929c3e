/* api_run_memo.h - what tc_run and tc_run_foreach remember of a call, so a
 * call with the same arguments as one already checked skips the checks.
 *
 * Host time is the point: a small kernel takes a few microseconds on the
 * GPU, and an optimizer step passes thousands of tensors, every step, that
 * are the same every step.  Each program keeps the last few calls that
 * ran (API_MEMO_SLOTS): the function's name, a snapshot of every argument
 * (a scalar's value; for a tensor, every field of its DLTensor the checks
 * read: data, byte_offset, device, dtype, ndim, the shape and stride
 * values), the launches the run made (src/runtime/trace.h) and the tensors
 * it used.  A call whose arguments equal a snapshot field for
 * field would pass every check the same way and run the same launches, so
 * it enqueues the recorded launches (cuLaunchKernel each, nothing else),
 * while the recording is still valid (trace.h: the pool unchanged, the
 * stream rule); a call repeated more often, as a CUDA graph (below).
 * Anything else takes the full path, which records again.
 *
 * The comparison reads the caller's DLTensors again each call (pointers
 * alone would not do: a caller may reuse a DLTensor with new data; and a
 * new DLTensor, or a new list, describing the same tensor is the same
 * argument), so its cost grows with the tensors, a few nanoseconds each.
 *
 * The snapshot is also what tc_replay_run compares its arguments with
 * (api_replay.c).
 */
#ifndef TC_API_RUN_MEMO_H
#define TC_API_RUN_MEMO_H

#include "api_check.h"
#include "trace.h"

/* A snapshot of one call's arguments. */
typedef struct memo_dl {
    void *data;
    uint64_t mid[2];            /* the DLTensor's device, ndim and dtype, as stored */
    uint64_t byte_offset;
    int64_t d[2];               /* ndim 1 or 2: shape[0] and shape[ndim - 1], for the lists'
                                 * compact comparison (memo_arg.compact) */
    int32_t ndim;
    int32_t dims_at;            /* its shape in dims[dims_at..], then its strides if any */
    bool null;                  /* the argument was a NULL DLTensor pointer */
    bool strides;
} memo_dl;

typedef struct memo_arg {
    int name;                   /* its name in the text pool, or -1 for NULL */
    tc_arg_kind kind;
    uint64_t bits;              /* a scalar's value (a double's bits) */
    int dtype;                  /* TC_ARG_DTYPE: its text in the pool, or -1 */
    int dl_at;                  /* its first snapshot in dls */
    bool compact;               /* a list whose every tensor is given, of rank 1 or 2,
                                 * strides NULL: compared from its memo_dl alone */
} memo_arg;

/* Every array keeps its capacity when taken again: recording a call that
 * does not repeat should cost little. */
typedef struct memo_args {
    int fn;                     /* the function's name in the pool, or -1 */
    size_t nargs, ngroups;
    bool foreach;
    bool valid;
    memo_arg *a;
    size_t cap_a;
    memo_dl *dls;
    size_t ndls, cap_dls;
    int64_t *dims;
    size_t ndims, cap_dims;
    char *pool;                 /* the names and dtype texts, NUL-terminated */
    size_t npool, cap_pool;
} memo_args;

/*! memo_args_take(): snapshot args (tc_run's, or tc_run_foreach's lists
 *  when foreach); false when out of memory (m is then not valid). */
bool memo_args_take(memo_args *m, const char *fn, const tc_arg *args, size_t nargs,
                    size_t ngroups, bool foreach);
/*! memo_args_same(): whether args equal the snapshot field for field;
 *  scalars' values too only when strict (else their kinds and names). */
bool memo_args_same(const memo_args *m, const char *fn, const tc_arg *args, size_t nargs,
                    size_t ngroups, bool foreach, bool strict);
/*! memo_args_diff(): the first argument that differs, as a message ("the
 *  data of 'x' is 0x... now, 0x... at the capture"), into buf. */
void memo_args_diff(const memo_args *m, const tc_arg *args, size_t nargs, char *buf, size_t cap);
void memo_args_free(memo_args *m);
/* The function's name the snapshot holds (NULL: none given). */
const char *memo_args_fn(const memo_args *m);

#define API_MEMO_SLOTS 4

typedef struct api_memo {
    bool valid;
    memo_args args;
    rt_trace trace;
    struct tc_rt *rt;
    /* the call's tensors (for api_blame) and its parameters' arguments,
     * filled by the full path (api_trace_opt), capacities kept */
    tensor_use *uses;
    int nuses, cap_uses;
    int *given;                 /* per parameter: its index in the arguments less dtype
                                 * bindings, then (api_memo_keep) in the arguments, or -1 */
    int cap_given;
    const gfn *f;
    rt_scalar *scalars;         /* per parameter: the call's scalars (checked again each call) */
    int cap_scalars;
    bool has_scalars;
    /* After API_MEMO_GRAPH_AFTER hits in a row with the same scalars too,
     * the launches are captured into a CUDA graph (the driver's cuGraphLaunch costs less host time than its
     * cuLaunchKernel: 2.0 vs 4.4 us measured on an H200), launched instead
     * while the scalars are those it was captured with and the caller's
     * stream is not itself being captured; valid as long as the recording
     * is.  Where the launches that take scalars have small parameters
     * (API_MEMO_UPDATE_BYTES) and the driver can update a graph's kernel
     * nodes, hits count whatever the scalars, and new scalars are set into
     * the graph's nodes before it is launched (an optimizer's step count:
     * 2.3-2.5 us for cuGraphExecKernelNodeSetParams + cuGraphLaunch against
     * 4.2 for cuLaunchKernel, H200; at 4 KB of parameter 5.1-5.7 against
     * 4.6-4.8, so not there). */
    int hits;                   /* in a row, with the same scalars (or any, updatable) */
    int updatable;              /* -1 not yet known, 0 no, 1 yes (above) */
    void *cgraph;               /* the graph `graph` was made from, when updatable */
    void **nodes;               /* per launch of the trace: its node in cgraph */
    int cap_nodes;
    int *upd;                   /* the launches that take scalars */
    int nupd, cap_upd;
    void *graph;
    bool graph_failed;          /* no graph API, or the capture failed: not tried again */
    unsigned char graph_scalars[64]; /* the scalar arguments' bytes the graph holds (before
                                      * it exists: the last hit's) */
} api_memo;

#define API_MEMO_GRAPH_AFTER 2
#define API_MEMO_UPDATE_BYTES 1024

typedef struct api_memos {
    api_memo slot[API_MEMO_SLOTS];
    int next;                   /* the slot to record into next (round robin) */
} api_memos;

/*! api_memo_try(): run p's remembered call that args equal, when there is
 *  one and its recording is valid on stream: *done true and its status.
 *  Otherwise *done false and a slot to record the full call into (the
 *  stale one with the same arguments, or the next), or NULL. */
tc_status api_memo_try(tc_program *p, bool foreach, const char *fn, const tc_arg *args,
                       size_t nargs, size_t ngroups, void *stream, bool *done, api_memo **slot);
/*! api_memo_opt(): the trace options for the full call into slot (its
 *  buffers lent to the call). */
api_trace_opt api_memo_opt(api_memo *slot);
/*! api_memo_keep(): after the full call into slot (t from api_memo_opt)
 *  returned st: remember it when it ran and can be replayed. */
void api_memo_keep(api_memo *slot, api_trace_opt *t, tc_status st, bool foreach, const char *fn,
                   const tc_arg *args, size_t nargs, size_t ngroups);
/*! api_memo_free(): everything p remembers (tc_program_free). */
void api_memo_free(tc_program *p);

#endif
