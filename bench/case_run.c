/* case_run.c - one suite case, in its own process (tc-bench --child=case).
 *
 * The straight line, each step's failure recorded as the case's "stage"
 * and "error" in its JSON (the parent carries on with the next case):
 *
 *   device    open cuda:0 (dev_open) for our own buffers and events
 *   compile   tc_compile_file, the entry function
 *   inputs    per instance (one; a foreach case: one per tensor group):
 *             random inputs, uploaded once, outputs poisoned
 *   run       the first tc_run (the kernels compile here); a foreach case:
 *             the first tc_run_foreach over every group
 *   check     every output against the reference interpreter on the same
 *             inputs, instance by instance, each host copy freed once
 *             checked; a foreach case frees them after the upload already
 *             and makes them again (same seed, same values) to check, so
 *             AdamW's 302M parameters never sit on the host all at once
 *   time      timing.c, only when every instance checked
 *
 * Launches per step come from the plan that ran (its kernel and matmul
 * steps: every step not named "copy"), as tc_run_info reports it: for a
 * foreach case, the launches of its one call.
 *
 * An unchecked or failing case gets no figure: "status" says why.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const child_opts *o;
    const bench_case *c;
    json j;
    const char *stage;
    char *error;            /* malloc'd */
    tc_ctx *dev;            /* ours: buffers, syncs (dev_open) */
    tc_ctx *ctx;
    tc_program *p;
    const tc_function_info *f;
    check_pool pool;
    bench_inst *inst;
    int ninst;
    bool mismatch;          /* a check ran and found an output wrong */
    int launches;           /* per step, from the plan; -1 unknown */
    tc_arg *lists;          /* a foreach case: tc_run_foreach's arguments */
    int nlists;
    const DLTensor ***tensor_lists; /* their tensor lists (nlists, NULL for scalars) */
} case_state;

/* The instances' shapes: one, or a foreach case's groups. */
static char **instance_shapes(const case_state *s, int *n)
{
    if (s->c->kind != CASE_FOREACH) {
        char **v = calloc(1, sizeof *v);
        if (v && !(v[0] = strdup(s->o->quick ? s->c->small : s->c->shape))) {
            free(v);
            return NULL;
        }
        *n = 1;
        return v;
    }
    int m = 0;
    int64_t *sizes = foreach_sizes(s->c, s->o->quick, &m);
    char **v = sizes ? calloc((size_t)m, sizeof *v) : NULL;
    for (int i = 0; v && i < m; i++)
        if (!(v[i] = msgf("*=%lld", (long long)sizes[i]))) {
            for (int k = 0; k < i; k++)
                free(v[k]);
            free(v);
            v = NULL;
        }
    free(sizes);
    *n = m;
    return v;
}

static bool fail_at(case_state *s, const char *stage, char *msg)
{
    s->stage = stage;
    s->error = msg ? msg : msgf("out of memory");
    return false;
}

static bool open_all(case_state *s)
{
    tc_device_info gpu;
    char *m = NULL;
    if (!(s->dev = dev_open(&gpu, &m)))
        return fail_at(s, "device", m);
    json_kstr(&s->j, "device", gpu.name);
    char *path = msgf("%s/%s", s->o->cases_dir, s->c->file);
    if (!path)
        return fail_at(s, "compile", NULL);
    bool ok = true;
    if (tc_ctx_create(&s->ctx) != TC_OK)
        ok = fail_at(s, "compile", NULL);
    else if (tc_compile_file(s->ctx, path, &s->p) != TC_OK ||
             tc_program_function(s->p, s->c->fn, &s->f) != TC_OK)
        ok = fail_at(s, "compile", msgf("%s", tc_errmsg(s->ctx)));
    char *err = NULL;
    if (ok && !pool_open(&s->pool, path, s->c->fn, s->o->threads, &err))
        ok = fail_at(s, "compile", err);
    s->pool.tol_f32 = s->c->tol_f32;
    free(path);
    return ok;
}

/* The most steps of a plan whose launches we count. */
enum { MAX_STEPS = 1024 };

/* Kernel and matmul launches of one call of the plan that ran (its steps
 * not named "copy"); -1 unknown. */
static int plan_launches(const tc_run_info *info)
{
    if (info->nsteps > info->cap_steps)
        return -1;
    int n = 0;
    for (int k = 0; k < info->nsteps; k++)
        n += strcmp(info->step_names[k], "copy") != 0;
    return n;
}

/* Instance i's inputs: made on the host and, when upload, uploaded (and
 * its outputs poisoned). */
static bool make_one(case_state *s, int i, const char *shape, bool upload, int64_t *bytes)
{
    bench_inst *in = &s->inst[i];
    char *err = NULL, tag[32];
    snprintf(tag, sizeof tag, "i%d", i);
    if (!upload) { /* the same values again, for the check: same seed, same tag */
        bench_inst again;
        bool made = inst_make(s->ctx, s->p, s->f, s->c, shape, s->o->seed, tag, s->o->threads,
                              &again, &err);
        inst_free_shapes(&again);
        if (!made) {
            inst_free_host(s->f, &again);
            return fail_at(s, "check", err);
        }
        in->args = again.args;
        return true;
    }
    if (!inst_make(s->ctx, s->p, s->f, s->c, shape, s->o->seed, tag, s->o->threads, in, &err))
        return fail_at(s, "inputs", err);
    if (i == 0) {
        char *desc = inst_describe(s->f, in);
        json_kstr(&s->j, "args", desc);
        free(desc);
    }
    *bytes += inst_bytes_min(s->f, in);
    if (!inst_upload(s->dev, s->f, in, s->o->threads, &err))
        return fail_at(s, "inputs", err);
    return true;
}

/* Download and check instance i (its host inputs made), then free its host
 * copy.  *worst keeps the worst check over the instances. */
static bool check_one(case_state *s, int i, const char *shape, check_result *worst)
{
    bench_inst *in = &s->inst[i];
    char *err = NULL;
    if (!inst_download(s->dev, s->f, in, &err))
        return fail_at(s, "run", err);
    check_result r;
    bool ran = check_inst(&s->pool, s->f, in, s->c->split, &r);
    inst_free_host(s->f, in);
    if (!ran) {
        char *m = msgf("%s", r.detail ? r.detail : "the reference check did not run");
        check_result_free(&r);
        return fail_at(s, "check", m);
    }
    if (i == 0 || r.max_rel_err > worst->max_rel_err || !r.ok) {
        free(worst->detail);
        worst->detail = s->ninst > 1 ? msgf("tensor %d (%s): %s", i, shape, r.detail) : r.detail;
        if (s->ninst > 1)
            free(r.detail);
        r.detail = NULL;
        worst->max_rel_err = r.max_rel_err;
        worst->tol = r.tol;
    }
    worst->split = r.split;
    check_result_free(&r);
    if (!r.ok) {
        worst->ok = false;
        s->mismatch = true;
        s->stage = "check";
        return false;
    }
    return true;
}

/* The first call, timed from an idle device to its end. */
static bool first_run(case_state *s, bool foreach, const bench_inst *in, double *ms)
{
    static const char *names[MAX_STEPS];
    tc_run_info info = {.step_names = names, .cap_steps = MAX_STEPS};
    tc_status st = tc_device_sync(s->dev, NULL);
    double t0 = now_ms();
    if (st == TC_OK) {
        st = foreach ? tc_run_foreach_ex(s->p, s->c->fn, (size_t)s->ninst, s->lists,
                                         (size_t)s->nlists, NULL, &info)
                     : tc_run_ex(s->p, s->c->fn, in->targs, (size_t)in->ntargs, NULL, &info);
        if (st != TC_OK)
            return fail_at(s, "run", msgf("%s failed: %s: %s", foreach ? "tc_run_foreach" : "tc_run",
                                          tc_status_str(st), tc_errmsg(s->ctx)));
        st = tc_device_sync(s->dev, NULL);
    }
    *ms = now_ms() - t0;
    if (st != TC_OK) {
        char *why = dev_error(s->dev, st), *m = msgf("after the first run: %s", why);
        free(why);
        return fail_at(s, "run", m);
    }
    s->launches = plan_launches(&info);
    return true;
}

/* Inputs, first run, download and check of instance i of a plain case. */
static bool prepare_one(case_state *s, int i, const char *shape, check_result *worst,
                        int64_t *bytes, double *first_ms)
{
    double ms;
    if (!make_one(s, i, shape, true, bytes) || !first_run(s, false, &s->inst[i], &ms))
        return false;
    if (i == 0)
        *first_ms = ms;
    return check_one(s, i, shape, worst);
}

/* tc_run_foreach's arguments: each tensor argument of instance 0 becomes a
 * list of that argument of every instance (group i = instance i); the
 * scalars are instance 0's, the same in all. */
static bool make_lists(case_state *s)
{
    const bench_inst *in0 = &s->inst[0];
    s->nlists = in0->ntargs;
    s->lists = calloc((size_t)s->nlists + 1, sizeof *s->lists);
    s->tensor_lists = calloc((size_t)s->nlists + 1, sizeof *s->tensor_lists);
    if (!s->lists || !s->tensor_lists)
        return false;
    for (int k = 0; k < s->nlists; k++) {
        const tc_arg *a = &in0->targs[k];
        if (a->kind != TC_ARG_TENSOR) {
            s->lists[k] = *a;
            continue;
        }
        const DLTensor **l = calloc((size_t)s->ninst, sizeof *l);
        if (!(s->tensor_lists[k] = l))
            return false;
        for (int i = 0; i < s->ninst; i++)
            l[i] = s->inst[i].targs[k].v.tensor;
        s->lists[k] = tc_arg_tensors(a->name, l);
    }
    return true;
}

/* A foreach case: every group's inputs made and uploaded, its host copy
 * freed at once; one tc_run_foreach over all the groups; then each group's
 * inputs made again and its outputs checked. */
static bool prepare_foreach(case_state *s, char **shapes, check_result *worst, int64_t *bytes,
                            double *first_ms)
{
    for (int i = 0; i < s->ninst; i++) {
        if (!make_one(s, i, shapes[i], true, bytes))
            return false;
        inst_free_host(s->f, &s->inst[i]);
    }
    if (!make_lists(s))
        return fail_at(s, "inputs", NULL);
    if (!first_run(s, true, NULL, first_ms))
        return false;
    for (int i = 0; i < s->ninst; i++)
        if (!make_one(s, i, shapes[i], false, bytes) || !check_one(s, i, shapes[i], worst))
            return false;
    return true;
}

int child_case(const child_opts *o, const bench_case *c)
{
    case_state s = {.o = o, .c = c, .launches = -1};
    json_obj(&s.j);
    json_kstr(&s.j, "name", c->name);
    json_kstr(&s.j, "program", c->file);
    json_kstr(&s.j, "fn", c->fn);
    json_kstr(&s.j, "kind", c->latency ? "latency" : "throughput");
    json_kstr(&s.j, "note", c->note);

    bool ok = open_all(&s);
    char **shapes = NULL;
    int nshapes = 0;
    if (ok && !(shapes = instance_shapes(&s, &nshapes)))
        ok = fail_at(&s, "inputs", NULL);
    if (ok && !(s.inst = calloc((size_t)nshapes, sizeof *s.inst)))
        ok = fail_at(&s, "inputs", NULL);
    s.ninst = ok ? nshapes : 0;
    if (c->kind != CASE_FOREACH) {
        json_kstr(&s.j, "shape", o->quick ? c->small : c->shape);
    } else { /* as peers.py spells it */
        long long params = 0;
        for (int i = 0; i < nshapes; i++)
            params += strtoll(shapes[i] + 2, NULL, 10); /* "*=N" */
        char *text = msgf("%d tensors, %lld parameters", nshapes, params);
        json_kstr(&s.j, "shape", text);
        free(text);
    }

    check_result worst = {.ok = true};
    int64_t bytes = 0;
    double first_ms = NAN, t0 = now_ms();
    if (c->kind == CASE_FOREACH)
        ok = ok && prepare_foreach(&s, shapes, &worst, &bytes, &first_ms);
    for (int i = 0; c->kind != CASE_FOREACH && ok && i < s.ninst; i++)
        ok = prepare_one(&s, i, shapes[i], &worst, &bytes, &first_ms);
    double check_ms = now_ms() - t0;
    json_kstr(&s.j, "call", c->kind == CASE_FOREACH ? "tc_run_foreach" : "tc_run");
    json_kint(&s.j, "groups", c->kind == CASE_FOREACH ? s.ninst : 0);
    if (s.launches >= 0)
        json_kint(&s.j, "launches_per_step", c->kind == CASE_FOREACH ? s.launches : s.launches * s.ninst);
    else
        json_key(&s.j, "launches_per_step"), json_null(&s.j);
    json_kint(&s.j, "bytes_min", bytes);
    json_knum(&s.j, "first_call_ms", first_ms);
    json_key(&s.j, "check");
    json_obj(&s.j);
    bool checked = s.ninst > 0 && (ok || s.mismatch);
    json_kbool(&s.j, "ok", checked && worst.ok);
    if (checked) {
        json_knum(&s.j, "max_rel_err", worst.max_rel_err);
        json_knum(&s.j, "tol", worst.tol);
        json_kbool(&s.j, "split", worst.split);
        json_kstr(&s.j, "worst", worst.detail);
        json_knum(&s.j, "inputs_and_check_ms", check_ms);
    }
    json_end_obj(&s.j);
    char *worst_text = worst.detail;  /* for the message below */
    worst.detail = NULL;

    if (ok) {
        bench_step step = {s.p, c->fn, s.inst, s.ninst, s.lists, s.nlists, s.ninst, s.ctx};
        if (c->kind != CASE_FOREACH)
            step.lists = NULL;
        timing t;
        char *err = NULL;
        if (!time_steps(s.dev, &step, c->latency, o->quick, &t, &err)) {
            ok = fail_at(&s, "time", err);
        } else {
            double us = c->latency || !(t.event_us > 0) || t.wall_us < t.event_us ? t.wall_us : t.event_us;
            json_knum(&s.j, "event_us", t.event_us);
            json_kint(&s.j, "event_iters", t.event_iters);
            json_knum(&s.j, "wall_us", t.wall_us);
            json_kint(&s.j, "wall_calls", t.wall_calls);
            json_knum(&s.j, "host_us", t.host_us);
            json_knum(&s.j, "time_us", us);
            json_kstr(&s.j, "time_from", us == t.wall_us ? "wall" : "event");
            json_knum(&s.j, "GBps", us > 0 ? (double)bytes / (us * 1e3) : NAN);
        }
    }
    if (ok && c->latency && c->kind != CASE_FOREACH) {
        /* the same call captured into a CUDA graph (issue 14's replay figure) */
        bench_step step = {s.p, c->fn, s.inst, s.ninst, NULL, 0, s.ninst, s.ctx};
        replay_timing rt;
        char *err = NULL;
        json_key(&s.j, "replay");
        json_obj(&s.j);
        if (time_replay(s.dev, &step, o->quick, &rt, &err)) {
            json_kint(&s.j, "kernels", rt.kernels);
            json_kint(&s.j, "calls", rt.calls);
            json_knum(&s.j, "us", rt.us);
            json_knum(&s.j, "us_per_kernel", rt.kernels > 0 ? rt.us / rt.kernels : NAN);
        }
        json_kstr(&s.j, "error", err);
        json_end_obj(&s.j);
        free(err);
    }
    const char *status = ok ? "ok" : s.mismatch ? "check_failed" : "error";
    json_kstr(&s.j, "status", status);
    json_kstr(&s.j, "stage", ok ? NULL : s.stage);
    json_kstr(&s.j, "error", s.error);
    json_kint(&s.j, "threads", o->threads);
    json_end_obj(&s.j);
    if (!ok)
        fprintf(stderr, "tc-bench: %s: %s at stage %s: %s\n", c->name, status, s.stage,
                s.error ? s.error : s.mismatch && worst_text ? worst_text : "");
    free(worst_text);

    bool wrote = write_file(o->out, s.j.b.s ? s.j.b.s : "{}");
    for (int i = 0; i < s.ninst; i++)
        inst_free(s.dev, s.f, &s.inst[i]);
    free(s.inst);
    for (int k = 0; s.tensor_lists && k < s.nlists; k++)
        free(s.tensor_lists[k]);
    free(s.tensor_lists);
    free(s.lists);
    for (int i = 0; shapes && i < nshapes; i++)
        free(shapes[i]);
    free(shapes);
    pool_close(&s.pool);
    tc_program_free(s.p);
    tc_ctx_free(s.ctx);
    tc_ctx_free(s.dev);
    free(s.error);
    free(s.j.b.s);
    if (!wrote)
        return BENCH_ENV;
    return ok ? BENCH_OK : !strcmp(s.stage ? s.stage : "", "device") ? BENCH_ENV : BENCH_FAILED;
}
