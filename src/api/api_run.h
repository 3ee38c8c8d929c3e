/* api_run.h - tc_run's machinery, for the command-line driver.
 *
 * `tensorc run --device=cuda` runs a function the public API cannot name:
 * one built with --dtype bindings (api_entry_ex), and it wants more than a
 * status back (which plan ran, where the kernels came from, per-step
 * timing events).  So tc_run is a thin wrapper around api_run, and the CLI
 * calls api_run directly.  Not stable API.
 */
#ifndef TC_API_RUN_H
#define TC_API_RUN_H

#include "api_internal.h"

struct tc_rt;
struct tc_plan;

typedef struct api_run_info {
    /* in: NULL, or nevents events (drv_event_create) recorded around the
     * plan's steps when nevents >= plan->nsteps + 1 (see rt_exec) */
    void *const *events;
    int nevents;
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
 *  device ordinal (-1: the context's choice, else 0).  The CLI opens it
 *  before compiling, to pick --device.  Errors in ctx (TC_ERR_NO_DEVICE). */
tc_status api_gpu(tc_ctx *ctx, int ordinal, struct tc_rt **rt);

#endif
