/* api_run.c - tc_run: checking the caller's arguments, then the runtime.
 *
 * The order is the contract tensorc.h documents, as a straight line:
 *
 *   1. match arguments to the function's slots (parameters in order, then
 *      the outputs that are not inout parameters) by name or position;
 *   2. check each one on the host: scalars' kinds and ranges, tensors'
 *      dtype, device, layout and alignment;
 *   3. bind the symbolic sizes from the tensor parameters (graph_bind, so
 *      shape errors read as they do in the CLI) and check each output's
 *      shape against them;
 *   4. check that no written tensor (an output, an inout parameter) shares
 *      memory with another argument, and that all are on one device;
 *   5. open the GPU (the context's tc_rt, src/runtime/rt.h), only now, so a
 *      machine without one still gets every argument error first;
 *   6. choose the variant of the unit the sizes need (64-bit indices when a
 *      size passes the 32-bit plan's limits; the wide foreach table), fetch
 *      its plan (compile.h, one call) and its module (NVRTC or the cache);
 *   7. rt_run enqueues the plan on the caller's stream.
 *
 * Steps 1 to 4 are in api_args.c, 5 to 7 here.  Everything a call
 * allocates on the host lives in a scratch arena reset at
 * its end, so repeated calls leave the program's own arena alone.
 * tc_run_foreach (api_foreach.c) runs the same steps over many groups,
 * through the pieces api_check.h shares.
 */
#include "api_check.h"
#include "api_interp.h"
#include "api_run_memo.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "compile.h"
#include "jit.h"
#include "rt.h"
#include "trace.h"

/* --- the GPU --------------------------------------------------------------------------- */

tc_status api_gpu(tc_ctx *ctx, int ordinal, struct tc_rt **out)
{
    *out = NULL;
    bool made = !ctx->rt;
    if (made && !(ctx->rt = rt_new(ordinal, NULL, &ctx->knobs)))
        return diag_set(&ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    struct tc_rt *rt = ctx->rt;
    if (!rt->dev && rt->ordinal < 0 && ordinal >= 0)
        rt->ordinal = ordinal;
    if (rt->dev && ordinal >= 0 && ordinal != rt->ordinal)
        return diag_set(&ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "the tensors are on cuda:%d, but this context runs on cuda:%d (one "
                        "context per device)", ordinal, rt->ordinal);
    tc_status st = rt_open(rt, &ctx->diag);
    if (st != TC_OK) {
        if (made) { /* it holds nothing yet: a CPU-only context keeps no GPU state */
            rt_free(rt);
            ctx->rt = NULL;
        }
        return st;
    }
    *out = rt;
    return TC_OK;
}

/* The call's scratch arena: kept in the program and reset after each call,
 * so calls made again and again (an optimizer step) reuse its memory
 * instead of faulting fresh pages in (a third of a 240-group call's host
 * time when each call had its own arena).  Messages are copied into the
 * diagnostics, so nothing outlives the reset. */
tc_arena *api_scratch(tc_program *p)
{
    if (!p->run_scratch)
        p->run_scratch = arena_new(&p->ctx->diag);
    return p->run_scratch;
}

/* Steps 5 to 7 for a checked job: the device, the plan and its module, the
 * run (over groups when G is not NULL; params and outputs are then a
 * non-empty group's, and j->binds bind "*" to the largest group). */
/* Whether to pass more groups than the 4 KB table holds in a 32 KB kernel
 * parameter (CUDA 12.1+ drivers on Volta and newer) instead of uploading
 * the table.  Off unless TENSORC_FOREACH_WIDE=1: measured on the H200
 * (AdamW over 240 tensors), the 32 KB launch cost more host time than the
 * upload (72.6 vs 39.0 us a call in examples/c/run_adamw, 54.5 vs 42.3 in
 * tc-bench), and the wide build compiled slower (cold 202 vs 25 ms). */
static bool wide_params(const tc_ctx *ctx, struct tc_rt *rt)
{
    if (ctx->knobs.foreach_wide != 1) /* the knob (knobs.h; a bad value warned about there) */
        return false;
    return drv_version(rt->dev) >= 12010 && drv_arch(rt->dev) >= 70;
}

/* A launch, copy or cuBLAS call the driver refused is the caller's fault,
 * not tensorc's, when a tensor is not device memory the driver knows (a
 * host pointer, a freed one): say which, as TC_ERR_INVALID_ARG.  Asked only
 * after a failure, so a good call pays nothing. */
tc_status api_blame(tc_diag *d, struct tc_rt *rt, const tensor_use *uses, int nuses,
                    const char *who, tc_status st)
{
    for (int i = 0; i < nuses; i++) {
        const tensor_use *u = &uses[i];
        if (!u->bytes || drv_ptr_known(rt->dev, u->addr, u->bytes) != 0)
            continue;
        char group[32] = "";
        if (u->group >= 0)
            snprintf(group, sizeof group, ": group %d", u->group);
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "%s%s: %s (0x%llx, %llu bytes) is not in CUDA device memory the driver "
                        "knows: pass memory from cudaMalloc/cuMemAlloc (or a CUDA tensor's); "
                        "the driver said: %s", who, group, u->what,
                        (unsigned long long)u->addr, (unsigned long long)u->bytes,
                        d->brief ? d->brief : tc_status_str(st));
    }
    return st;
}

/* Which variant of f's unit this call runs (compile.h's TC_VAR_*), decided
 * before it is fetched: 64-bit indices when a size reaches a limit of the
 * 32-bit plan (made by tc_compile for the file's functions); the wide
 * foreach table when there are more groups than the 4 KB table holds, the
 * driver takes a 32 KB parameter, and the wide table holds them all
 * (TENSORC_FOREACH_WIDE=1); else the small table (TC_VAR_SMALL, unless
 * TENSORC_FOREACH_SMALL=0): the groups are uploaded either way, and the
 * small unit's parameter is ~100 bytes, not the 4 KB of a table that goes
 * unread (a launch copies it; a graph node's update copies it too, which
 * cost more than the launch it saves at 4 KB). */
static tc_status choose_variant(run_job *j, const rt_groups *G, int nonempty, struct tc_rt *rt,
                                unsigned *variant)
{
    const cg_unit *u;
    const tc_plan *plan;
    tc_status st = api_unit_variant(j->p, j->f, 0, &u, &plan);
    if (st != TC_OK)
        return st;
    unsigned v = rt_needs_idx64(plan, j->binds, j->nbinds, NULL, NULL) ? TC_VAR_IDX64 : 0;
    bool past = G && plan->nsteps == 1 && plan->steps[0].fe_n && nonempty > plan->steps[0].fe_cap;
    if (past && wide_params(j->p->ctx, rt)) {
        const tc_plan *wp;
        st = api_unit_variant(j->p, j->f, v | TC_VAR_WIDE, &u, &wp);
        if (st == TC_OK && nonempty <= wp->steps[0].fe_cap)
            v |= TC_VAR_WIDE;
    }
    if (st == TC_OK && past && !(v & TC_VAR_WIDE) && j->p->ctx->knobs.foreach_small != 0)
        v |= TC_VAR_SMALL;
    *variant = v;
    return st;
}

/* n items of size bytes from src into *buf (capacity *cap, grown). */
static bool copy_out(void **buf, int *cap, const void *src, int n, size_t size)
{
    if (n + 1 > *cap) {
        void *b = realloc(*buf, size * (size_t)(n + 1));
        if (!b)
            return false;
        *buf = b;
        *cap = n + 1;
    }
    memcpy(*buf, src, size * (size_t)n);
    return true;
}

tc_status api_launch(run_job *j, const uint64_t *params, const uint64_t *outputs,
                        const rt_groups *G, int nonempty, void *stream, api_run_info *info,
                        bool *reported)
{
    tc_program *p = j->p;
    tc_ctx *ctx = p->ctx;
    tc_diag *d = j->d;
    const gfn *f = j->f;

    /* Step 5: the device the tensors are on (the context may have one already). */
    struct tc_rt *rt = NULL;
    tc_status st;
    if (ctx->rt && ctx->rt->ordinal >= 0 && j->device >= 0 && j->device != ctx->rt->ordinal)
        st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                      "%s: %s is on cuda:%d, but this context runs on cuda:%d (set "
                      "tc_options.device, or use one context per device)", j->who,
                      j->device_what, j->device, ctx->rt->ordinal);
    else
        st = api_gpu(ctx, j->device, &rt);

    /* Step 6: the variant the sizes need, its plan, and its module. */
    const cg_unit *unit = NULL;
    const tc_plan *plan = NULL;
    rt_module *mod = NULL;
    unsigned variant = 0;
    if (st == TC_OK) {
        st = choose_variant(j, G, nonempty, rt, &variant);
        if (st == TC_OK)
            st = api_unit_variant(p, f, variant, &unit, &plan);
        *reported = st != TC_OK;
    }
    if (st == TC_OK && G && (plan->nsteps != 1 || plan->steps[0].kind != PSTEP_KERNEL ||
                             !plan->steps[0].fe_n))
        st = diag_set(d, TC_ERR_INTERNAL, (tc_loc){0}, "%s: function '%s' is elementwise, but its "
                      "plan is not one kernel over tensor groups (a bug in tensorc)", j->who, f->name);
    /* A plan of cuBLAS calls and copies alone needs no module: no NVRTC
     * compile, no image without entries for the driver to load. */
    bool kernels = false;
    for (int i = 0; st == TC_OK && i < plan->nsteps; i++)
        kernels |= plan->steps[i].kind == PSTEP_KERNEL;
    /* TENSORC_BLAS_EARLY: cuBLAS's start-up (dlopen, handle) on a thread of
     * its own while NVRTC compiles, for a product that runs at these sizes
     * (a guarded cuBLAS step beside a generated kernel may not: gated_mlp
     * at M = 16); the first product joins it (rt.h) */
    for (int i = 0; st == TC_OK && kernels && p->loaded_unit != unit && i < plan->nsteps; i++) {
        rt_args ra = {.dims = j->binds, .ndims = j->nbinds};
        bool runs = false;
        if (plan->steps[i].kind == PSTEP_MATMUL && rt_step_runs(plan, i, &ra, &runs, NULL) == TC_OK &&
            runs) {
            rt_blas_early(rt);
            break;
        }
    }
    if (st == TC_OK && (!G || params) && kernels) {
        /* the nvrtc stage (stages.def): NVRTC or the kernel cache, timed */
        double t0 = tc_now_ms();
        if (p->loaded_unit == unit) { /* the same unit as the last call: its module */
            mod = p->loaded_mod;
            rt_reuse(rt);
        } else if ((st = rt_load(rt, unit->source, &mod, d)) == TC_OK) {
            /* rt keeps its modules until the context goes, and p cannot
             * outlive the context: the pointer stays good */
            p->loaded_unit = unit;
            p->loaded_mod = mod;
        }
        if (st == TC_OK)
            tc_debug_runtime(STAGE_NVRTC, p->src->name, tc_now_ms() - t0,
                             rt->origin == JIT_COMPILED    ? "compiled"
                             : rt->origin == JIT_FROM_DISK ? "the kernel cache on disk"
                                                           : "this context's kernels");
    }

    /* Step 7 (a run over groups that are all empty launches nothing). */
    if (st == TC_OK && (!G || params)) {
        rt_args ra = {j->binds, j->nbinds, params, j->scalars, f->nparams, outputs, f->noutputs, G};
        void *const *events = info && info->events && info->nevents >= plan->nsteps + 1 ? info->events
                                                                                       : NULL;
        api_trace_opt *t = info ? info->trace : NULL;
        if (t) {
            st = rt_run_traced(rt, t->pool ? t->pool : &rt->pool, mod, plan, &ra, stream, !t->dry,
                               t->trace, d);
            t->rt = rt;
            t->nuses = 0;
            t->f = f;
            if (st == TC_OK && copy_out((void **)&t->uses, &t->cap_uses, j->uses, j->nuses,
                                        sizeof *t->uses))
                t->nuses = j->nuses;
            if (st == TC_OK && !copy_out((void **)&t->given, &t->cap_given, j->given, f->nparams,
                                         sizeof *t->given))
                t->f = NULL; /* no record of the parameters: not remembered */
        } else {
            st = rt_run(rt, mod, plan, &ra, stream, events, d);
        }
        if (st != TC_OK && st != TC_ERR_INVALID_ARG && st != TC_ERR_NOMEM)
            st = api_blame(d, rt, j->uses, j->nuses, j->who, st);
    }
    if (info && st == TC_OK) {
        info->plan = plan;
        info->origin = (int)rt->origin;
        info->jit_ms = rt->jit_ms;
        info->arch = rt->jit_arch;
        info->ptx = rt->jit_ptx;
    }
    return st;
}

tc_arena *api_call_begin(tc_program *p, const char *who, const tc_arg *args, size_t nargs,
                         tc_status *st)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    api_begin(ctx);
    tc_arena *a = NULL;
    if (!args && nargs)
        *st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0}, "%s: the arguments are NULL but "
                       "nargs is %zu", who, nargs);
    else if (nargs > INT_MAX)
        *st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0}, "%s: %zu arguments", who, nargs);
    else if (!(a = api_scratch(p)))
        *st = diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    if (!a)
        *st = api_fail(ctx, *st);
    return a;
}

tc_status api_run(tc_program *p, const gfn *f, const tc_arg *args, size_t nargs, void *stream,
                  api_run_info *info)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    tc_status st;
    const char *who = info && info->trace && info->trace->who ? info->trace->who : "tc_run";
    tc_arena *a = api_call_begin(p, who, args, nargs, &st);
    if (!a)
        return st;
    run_job j = {.p = p, .f = f, .args = args, .nargs = nargs, .a = a, .d = d, .st = TC_OK, .group = -1,
                 .who = who};
    st = diag_protect(d, api_check_call, &j);
    if (st == TC_OK)
        st = j.st;

    bool reported = false; /* api_unit has called api_fail itself, keeping the location */
    if (st == TC_OK)
        st = api_launch(&j, j.params, j.outputs, NULL, 1, stream, info, &reported);
    arena_reset(a);
    return st == TC_OK || reported ? st : api_fail(ctx, st);
}

/* --- the public calls ---------------------------------------------------------------------- */

tc_status tc_ctx_create_ex(tc_ctx **ctx, const tc_options *opts)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    *ctx = NULL;
    tc_options o = TC_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (o.device < TC_DEVICE_AUTO)
        return TC_ERR_INVALID_ARG;
    tc_status st = tc_ctx_create(ctx);
    if (st != TC_OK)
        return st;
    if (!((*ctx)->rt = rt_new(o.device, o.cache_dir, &(*ctx)->knobs))) {
        tc_ctx_free(*ctx);
        *ctx = NULL;
        return TC_ERR_NOMEM;
    }
    rt_set_options((*ctx)->rt, o.fast_math != 0, o.line_info != 0);
    return TC_OK;
}

tc_status tc_run(tc_program *p, const char *fn, const tc_arg *args, size_t nargs, void *stream)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    /* the arguments of a call already checked: its launches again */
    bool done;
    api_memo *slot;
    tc_status st = api_memo_try(p, false, fn, args, nargs, 0, stream, &done, &slot);
    if (done)
        return st;
    const gfn *f;
    api_call_args rest; /* args less the dtype bindings (api_interp.h) */
    st = api_call_entry(p, "tc_run", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    api_trace_opt t = slot ? api_memo_opt(slot) : (api_trace_opt){0};
    api_run_info info = {.trace = &t};
    st = api_run(p, f, rest.args, rest.nargs, stream, slot ? &info : NULL);
    if (slot)
        api_memo_keep(slot, &t, st, false, fn, args, nargs, 0);
    api_call_args_free(&rest);
    return st;
}

const char *tc_program_source(tc_program *p, const char *fn)
{
    if (!p)
        return NULL;
    const char *src = NULL;
    if (!fn)
        return api_cuda_source(p, NULL, &src) == TC_OK ? src : NULL;
    const gfn *f;
    const cg_unit *unit;
    const tc_plan *plan;
    if (api_entry(p, fn, &f) != TC_OK || api_unit(p, f, false, &unit, &plan) != TC_OK)
        return NULL;
    return unit->source;
}

