/* api_device.c - the unstable API's device side (tensorc.h, TC_UNSTABLE_API):
 * opening the context's GPU, its memory, streams and timing events, for the
 * tools that make the tensors they pass to tc_run; and tc_run_ex /
 * tc_run_foreach_ex, tc_run with what the call ran (plan steps, their bytes,
 * where the kernels came from). */
#define TC_UNSTABLE_API
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_interp.h"
#include "api_run.h"
#include "codegen/plan.h"

#define DPTR(p) ((drv_ptr)(uintptr_t)(p))

/* The context's opened device, or TC_ERR_NO_DEVICE in the context. */
static tc_status device_of(tc_ctx *ctx, const char *who, drv_device **dev)
{
    api_begin(ctx);
    *dev = ctx->rt ? ctx->rt->dev : NULL;
    if (*dev)
        return TC_OK;
    return api_fail(ctx, diag_set(&ctx->diag, TC_ERR_NO_DEVICE, (tc_loc){0},
                                  "%s: no device is open (tc_device_open first)", who));
}

static tc_status done(tc_ctx *ctx, tc_status st)
{
    return st == TC_OK ? TC_OK : api_fail(ctx, st);
}

tc_status tc_device_open(tc_ctx *ctx, int ordinal, tc_device_info *info)
{
    if (!ctx || ordinal < TC_DEVICE_AUTO)
        return TC_ERR_INVALID_ARG;
    api_begin(ctx);
    struct tc_rt *rt;
    tc_status st = api_gpu(ctx, ordinal, &rt);
    if (st != TC_OK)
        return api_fail(ctx, st);
    if (info) {
        info->ordinal = rt->ordinal;
        info->name = drv_name(rt->dev);
        info->arch = drv_arch(rt->dev);
        info->sm_count = drv_sm_count(rt->dev);
        info->total_mem = drv_total_mem(rt->dev);
    }
    return TC_OK;
}

tc_status tc_device_alloc(tc_ctx *ctx, size_t bytes, void **dptr)
{
    if (!ctx || !dptr)
        return TC_ERR_INVALID_ARG;
    *dptr = NULL;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_device_alloc", &dev);
    drv_ptr p = 0;
    if (st == TC_OK && (st = drv_alloc(dev, bytes ? bytes : 1, &p, &ctx->diag)) == TC_OK)
        *dptr = (void *)(uintptr_t)p;
    return st == TC_OK ? TC_OK : done(ctx, st);
}

void tc_device_free(tc_ctx *ctx, void *dptr)
{
    if (ctx && ctx->rt && ctx->rt->dev && dptr)
        drv_free(ctx->rt->dev, DPTR(dptr));
}

tc_status tc_device_copy(tc_ctx *ctx, void *dst, const void *src, size_t bytes, tc_copy_kind kind,
                         void *stream)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_device_copy", &dev);
    if (st != TC_OK || !bytes)
        return st;
    switch (kind) {
    case TC_COPY_TO_DEVICE:
        return done(ctx, drv_htod(dev, DPTR(dst), src, bytes, &ctx->diag));
    case TC_COPY_TO_HOST:
        return done(ctx, drv_dtoh(dev, dst, DPTR(src), bytes, &ctx->diag));
    case TC_COPY_ON_DEVICE:
        return done(ctx, drv_memcpy_dtod_async(dev, DPTR(dst), DPTR(src), bytes, stream, &ctx->diag));
    }
    return done(ctx, diag_set(&ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                              "tc_device_copy: unknown kind %d", (int)kind));
}

tc_status tc_device_memset(tc_ctx *ctx, void *dptr, unsigned char value, size_t bytes, void *stream)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_device_memset", &dev);
    if (st != TC_OK || !bytes)
        return st;
    return done(ctx, drv_memset_async(dev, DPTR(dptr), value, bytes, stream, &ctx->diag));
}

tc_status tc_device_sync(tc_ctx *ctx, void *stream)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_device_sync", &dev);
    return st != TC_OK ? st : done(ctx, drv_sync(dev, stream, &ctx->diag));
}

tc_status tc_event_create(tc_ctx *ctx, void **event)
{
    if (!ctx || !event)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_event_create", &dev);
    return st != TC_OK ? st : done(ctx, drv_event_create(dev, event, &ctx->diag));
}

tc_status tc_event_record(tc_ctx *ctx, void *event, void *stream)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_event_record", &dev);
    return st != TC_OK ? st : done(ctx, drv_event_record(dev, event, stream, &ctx->diag));
}

tc_status tc_event_elapsed(tc_ctx *ctx, void *start, void *end, float *ms)
{
    if (!ctx || !ms)
        return TC_ERR_INVALID_ARG;
    drv_device *dev;
    tc_status st = device_of(ctx, "tc_event_elapsed", &dev);
    return st != TC_OK ? st : done(ctx, drv_event_elapsed(dev, start, end, ms, &ctx->diag));
}

void tc_event_destroy(tc_ctx *ctx, void *event)
{
    if (ctx && ctx->rt && ctx->rt->dev && event)
        drv_event_destroy(ctx->rt->dev, event);
}

/* --- tc_run_ex ------------------------------------------------------------------------------- */

/* The bytes of each step for one group's (or a plain call's) arguments,
 * added into info->step_bytes; false when the sizes cannot be bound. */
static bool add_bytes(tc_program *p, const gfn *f, const tc_plan *plan, const tc_arg *args,
                      size_t nargs, tc_run_info *info)
{
    api_host_call c;
    bool ok = api_host_begin(&c, p, f, "tc_run_ex", args, nargs, false, NULL, 0) == TC_OK;
    for (int i = 0; ok && i < plan->nsteps && i < info->cap_steps; i++) {
        /* a step guarded off at these sizes launched nothing: its events
         * time only the gap between them */
        if (info->step_names && rt_step_skipped(plan, i, c.binds, c.nbinds))
            info->step_names[i] = "(not run at these sizes)";
        int64_t b = rt_step_bytes(plan, i, c.binds, c.nbinds);
        if (b < 0 || info->step_bytes[i] < 0)
            info->step_bytes[i] = -1;
        else
            info->step_bytes[i] += b;
    }
    api_host_end(&c);
    return ok;
}

/* info from api_run's ri; bytes from the call's arguments (per group for
 * tc_run_foreach_ex: lists, ngroups). */
static void fill_info(tc_program *p, const gfn *f, const api_run_info *ri, const tc_arg *args,
                      size_t nargs, size_t ngroups, bool foreach, tc_run_info *info)
{
    const tc_plan *plan = ri->plan;
    info->nsteps = plan ? plan->nsteps : 0;
    info->index64 = plan && plan->idx64;
    info->jit_origin = ri->origin;
    info->jit_ms = ri->jit_ms;
    info->arch = ri->arch;
    info->ptx = ri->ptx;
    if (!plan)
        return;
    for (int i = 0; info->step_names && i < plan->nsteps && i < info->cap_steps; i++)
        info->step_names[i] = rt_step_name(&plan->steps[i]);
    if (!info->step_bytes)
        return;
    for (int i = 0; i < plan->nsteps && i < info->cap_steps; i++)
        info->step_bytes[i] = 0;
    bool ok = true;
    if (!foreach) {
        ok = add_bytes(p, f, plan, args, nargs, info);
    } else {
        tc_arg *one = malloc((nargs + 1) * sizeof *one);
        ok = one != NULL;
        for (size_t g = 0; ok && g < ngroups; g++) {
            bool empty = false; /* an empty group launches nothing: it moves no bytes */
            for (size_t k = 0; k < nargs; k++) {
                one[k] = args[k];
                if (args[k].kind == TC_ARG_TENSORS) {
                    const DLTensor *t = args[k].v.tensors[g];
                    one[k] = tc_arg_tensor(args[k].name, t);
                    for (int d = 0; d < t->ndim; d++)
                        empty = empty || t->shape[d] == 0;
                }
            }
            if (!empty)
                ok = add_bytes(p, f, plan, one, nargs, info);
        }
        free(one);
    }
    for (int i = 0; !ok && i < plan->nsteps && i < info->cap_steps; i++)
        info->step_bytes[i] = -1;
    api_begin(p->ctx); /* the call succeeded: no message from the byte counts */
}

tc_status tc_run_ex(tc_program *p, const char *fn, const tc_arg *args, size_t nargs, void *stream,
                    tc_run_info *info)
{
    if (!info)
        return tc_run(p, fn, args, nargs, stream);
    if (!p)
        return TC_ERR_INVALID_ARG;
    const gfn *f;
    api_call_args rest;
    tc_status st = api_call_entry(p, "tc_run", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    api_run_info ri = {.events = info->events, .nevents = info->nevents};
    st = api_run(p, f, rest.args, rest.nargs, stream, &ri);
    if (st == TC_OK)
        fill_info(p, f, &ri, rest.args, rest.nargs, 0, false, info);
    api_call_args_free(&rest);
    return st;
}

tc_status tc_run_foreach_ex(tc_program *p, const char *fn, size_t ngroups, const tc_arg *lists,
                            size_t nargs, void *stream, tc_run_info *info)
{
    if (!info)
        return tc_run_foreach(p, fn, ngroups, lists, nargs, stream);
    if (!p)
        return TC_ERR_INVALID_ARG;
    const gfn *f;
    api_call_args rest;
    tc_status st = api_call_entry(p, "tc_run_foreach", fn, lists, nargs, ngroups == 0, &f, &rest);
    if (st != TC_OK)
        return st;
    api_run_info ri = {.events = info->events, .nevents = info->nevents};
    st = api_run_foreach(p, f, ngroups, rest.args, rest.nargs, stream, &ri);
    if (st == TC_OK)
        fill_info(p, f, &ri, rest.args, rest.nargs, ngroups, true, info);
    api_call_args_free(&rest);
    return st;
}
