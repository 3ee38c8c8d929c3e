/* api_replay.c - tc_capture and tc_replay_run: a call's launches as a CUDA
 * graph (src/runtime/cugraph.h).
 *
 * tc_capture checks the call as tc_run does (api_run, the same messages
 * under "tc_capture"), then runs its plan without launching anything
 * (api_trace_opt.dry: the launches are recorded, src/runtime/trace.h) on a
 * pool of the replay's own, so the graph's temporaries and workspace are
 * never the context's pool, which later calls may grow and free.  The
 * pool's set-up (allocation, the workspace zeroed) runs on the default
 * stream and is waited for; then the recorded launches are enqueued on a
 * capturing stream, and the graph instantiated.  The arguments are kept
 * (api_run_memo.h's snapshot) for tc_replay_run to compare.
 */
#include "api_run_memo.h"
#include "api_interp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cugraph.h"

struct tc_replay {
    tc_ctx *ctx;
    struct tc_rt *rt;
    void *exec;                 /* the instantiated graph */
    rt_pool pool;               /* the call's temporaries and workspace */
    rt_trace trace;
    memo_args args;             /* the capture's arguments */
    int kernels;
};

void tc_replay_free(tc_replay *r)
{
    if (!r)
        return;
    if (r->rt) {
        if (r->exec)
            (void)drv_sync(r->rt->dev, NULL, NULL); /* a replay in flight uses the pool */
        drv_graph_free(r->rt->dev, r->exec);
        rt_pool_release(&r->pool, &rt_ops_cuda, r->rt);
    }
    rt_trace_free(&r->trace);
    memo_args_free(&r->args);
    free(r);
}

/* Enqueue the recorded launches on a capturing stream: the graph. */
static tc_status capture(tc_replay *r, tc_diag *d)
{
    void *s;
    tc_status st = drv_sync(r->rt->dev, NULL, d); /* the pool's set-up, before the graph */
    if (st == TC_OK)
        st = drv_graph_begin(r->rt->dev, &s, d);
    if (st != TC_OK)
        return st;
    st = rt_trace_run(r->rt, &r->trace, s, d);
    /* the capture is ended either way: a stream left capturing breaks later work */
    tc_status end = drv_graph_end(r->rt->dev, s, &r->exec, st == TC_OK ? d : NULL);
    if (st == TC_OK)
        st = end;
    return st;
}

tc_status tc_capture(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                     tc_replay **out)
{
    if (!p || !out)
        return TC_ERR_INVALID_ARG;
    *out = NULL;
    tc_ctx *ctx = p->ctx;
    const gfn *f;
    api_call_args rest; /* args less the dtype bindings (api_interp.h) */
    tc_status st = api_call_entry(p, "tc_capture", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    tc_replay *r = calloc(1, sizeof *r);
    if (!r) {
        api_call_args_free(&rest);
        return api_fail(ctx, diag_set(&ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    }
    r->ctx = ctx;
    api_trace_opt t = {.trace = &r->trace, .pool = &r->pool, .dry = true, .who = "tc_capture"};
    api_run_info info = {.trace = &t};
    st = api_run(p, f, rest.args, rest.nargs, NULL, &info);
    r->rt = t.rt;
    free(t.uses);
    free(t.given);
    api_call_args_free(&rest);
    bool reported = st != TC_OK; /* api_run has reported its own errors */
    if (st == TC_OK && !r->trace.replayable)
        st = diag_set(&ctx->diag, TC_ERR_UNSUPPORTED, (tc_loc){0}, "tc_capture: the call cannot be "
                      "captured (%s)", r->trace.why ? r->trace.why : "?");
    if (st == TC_OK)
        st = capture(r, &ctx->diag);
    if (st == TC_OK && !memo_args_take(&r->args, fn, args, nargs, 0, false))
        st = diag_set(&ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    if (st != TC_OK) {
        tc_replay_free(r);
        return reported ? st : api_fail(ctx, st);
    }
    for (int i = 0; i < r->trace.n; i++)
        r->kernels += !r->trace.l[i].copy;
    *out = r;
    return TC_OK;
}

tc_status tc_replay_run(tc_replay *r, const tc_arg *args, size_t nargs, void *stream)
{
    if (!r)
        return TC_ERR_INVALID_ARG;
    tc_ctx *ctx = r->ctx;
    api_begin(ctx);
    if ((args || nargs) &&
        !memo_args_same(&r->args, memo_args_fn(&r->args), args, nargs, 0, false, true)) {
        char why[512];
        if (!args)
            snprintf(why, sizeof why, "the arguments are NULL but nargs is %zu", nargs);
        else
            memo_args_diff(&r->args, args, nargs, why, sizeof why);
        return api_fail(ctx, diag_set(&ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_replay_run: %s: a replay runs the buffers, shapes and "
                                      "scalars of its capture (tc_capture again for others)", why));
    }
    if (!r->exec) /* nothing to launch (no kernel in the plan) */
        return TC_OK;
    tc_status st = drv_graph_launch(r->rt->dev, r->exec, stream, &ctx->diag);
    return st == TC_OK ? st : api_fail(ctx, st);
}

int tc_replay_kernels(const tc_replay *r)
{
    return r ? r->kernels : 0;
}
