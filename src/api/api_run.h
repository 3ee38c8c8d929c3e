/* api_run.h - tc_run's machinery, for the API's own files.
 *
 * tc_run and tc_run_ex (api_device.c) are thin wrappers around api_run,
 * which runs an entry function already built (its dtype variables bound)
 * and says which plan ran and where the kernels came from; tc_run_foreach
 * likewise around api_run_foreach.  Not public API: tools/ use tc_run_ex.
 */
#ifndef TC_API_RUN_H
#define TC_API_RUN_H

#include "api_internal.h"

struct tc_rt;
struct tc_plan;
struct rt_trace;
struct rt_pool;

/* A run recorded (src/runtime/trace.h) for tc_run's repeated calls and
 * tc_capture, instead of run only. */
typedef struct api_trace_opt {
    struct rt_trace *trace;     /* the launches land here */
    struct rt_pool *pool;       /* temporaries from this pool (NULL: the context's) */
    bool dry;                   /* record without launching (tc_capture) */
    const char *who;            /* for messages: "tc_capture"; NULL: the call's own name */
    /* out: the runtime; the job's tensor uses (to say which tensor a later
     * failing replay blames) and per parameter the index in args of the
     * argument it took (-1: none), in the caller's buffers, grown with
     * realloc (the caller frees them) */
    struct tc_rt *rt;
    struct tensor_use *uses;
    int nuses, cap_uses;
    int *given;
    int cap_given;
    const gfn *f;
} api_trace_opt;

typedef struct api_run_info {
    /* in: NULL, or nevents events (drv_event_create) recorded around the
     * plan's steps when nevents >= plan->nsteps + 1 (see rt_exec) */
    void *const *events;
    int nevents;
    api_trace_opt *trace;       /* NULL, or record the run (events are then ignored) */
    /* out */
    const struct tc_plan *plan; /* the plan that ran: 32- or 64-bit indices */
    int origin;                 /* jit_origin of the kernels' image (jit.h) */
    double jit_ms;              /* time spent getting it (NVRTC or the cache) */
    int arch;                   /* the image's target: sm_<arch>, or compute_<arch> with ptx */
    bool ptx;
} api_run_info;

/*! api_dl_dtype(): the DLPack type of a tensorc dtype (tc_run's inverse
 *  mapping), for tools that build DLTensors. */
DLDataType api_dl_dtype(tc_dtype t);

/*! api_run(): tc_run for entry function f of p; info may be NULL. */
tc_status api_run(tc_program *p, const gfn *f, const tc_arg *args, size_t nargs, void *stream,
                  api_run_info *info);

/*! api_not_elementwise(): why f cannot run over tensor groups ("parameter
 *  'x' is f32[N, D], not [*]", "'sum' (line 3) is not pointwise"), or NULL
 *  when it can (graph.h's elementwise).  Text in a. */
const char *api_not_elementwise(tc_arena *a, const gfn *f);

/*! api_run_foreach(): tc_run_foreach for entry function f of p. */
tc_status api_run_foreach(tc_program *p, const gfn *f, size_t ngroups, const tc_arg *lists,
                          size_t nargs, void *stream, api_run_info *info);

/*! api_gpu(): the context's GPU state, made and opened if it is not yet, on
 *  device ordinal (-1: the context's choice, else 0): tc_device_open.
 *  Errors in ctx (TC_ERR_NO_DEVICE). */
tc_status api_gpu(tc_ctx *ctx, int ordinal, struct tc_rt **rt);

#endif
