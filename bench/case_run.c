/* case_run.c - one suite case, in its own process (tc-bench --child=case).
 *
 * The straight line, each step's failure recorded as the case's "stage"
 * and "error" in its JSON (the parent carries on with the next case):
 *
 *   device    open cuda:0 (driver.h) for our own buffers and events
 *   compile   tc_compile_file, the entry function
 *   inputs    per instance (one; AdamW: one per tensor): random inputs,
 *             uploaded once, outputs poisoned
 *   run       the first tc_run of each instance (the kernels compile here)
 *   check     every output against the reference interpreter on the same
 *             inputs; the host copies are freed once checked, so AdamW's
 *             302M parameters never sit on the host all at once
 *   time      timing.c, only when every instance checked
 *
 * An unchecked or failing case gets no figure: "status" says why.
 */
#include "bench.h"

#include "rt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const child_opts *o;
    const bench_case *c;
    json j;
    const char *stage;
    char *error;            /* malloc'd */
    drv_device *dev;
    tc_ctx *ctx;
    tc_program *p;
    const gfn *f;
    check_pool pool;
    bench_inst *inst;
    int ninst;
    bool mismatch;          /* a check ran and found an output wrong */
} case_state;

/* The instances' shapes: one, or AdamW's tensor set. */
static char **instance_shapes(const case_state *s, int *n)
{
    if (s->c->kind != CASE_ADAMW) {
        char **v = calloc(1, sizeof *v);
        if (v && !(v[0] = strdup(s->o->quick ? s->c->small : s->c->shape))) {
            free(v);
            return NULL;
        }
        *n = 1;
        return v;
    }
    int m = 0;
    int64_t *sizes = adamw_sizes(s->o->quick, &m);
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
    tc_diag d;
    diag_init(&d);
    tc_status st = drv_open(&s->dev, 0, &d);
    if (st != TC_OK) {
        char *m = msgf("%s", d.brief ? d.brief : tc_status_str(st));
        diag_release(&d);
        return fail_at(s, "device", m);
    }
    diag_release(&d);
    json_kstr(&s->j, "device", drv_name(s->dev));
    char *path = msgf("%s/%s", s->o->cases_dir, s->c->file);
    if (!path)
        return fail_at(s, "compile", NULL);
    bool ok = true;
    if (tc_ctx_create(&s->ctx) != TC_OK)
        ok = fail_at(s, "compile", NULL);
    else if (tc_compile_file(s->ctx, path, &s->p) != TC_OK || api_entry(s->p, s->c->fn, &s->f) != TC_OK)
        ok = fail_at(s, "compile", msgf("%s", tc_errmsg(s->ctx)));
    char *err = NULL;
    if (ok && !pool_open(&s->pool, path, s->c->fn, s->o->threads, &err))
        ok = fail_at(s, "compile", err);
    free(path);
    return ok;
}

/* Inputs, first run, download and check of instance i; its host copy is
 * freed.  *worst keeps the worst check over the instances. */
static bool prepare_one(case_state *s, int i, const char *shape, check_result *worst,
                        int64_t *bytes, double *first_ms)
{
    bench_inst *in = &s->inst[i];
    char *err = NULL, tag[32];
    snprintf(tag, sizeof tag, "i%d", i);
    if (!inst_make(s->p, s->f, s->c, shape, s->o->seed, tag, s->o->threads, in, &err))
        return fail_at(s, "inputs", err);
    if (i == 0) {
        char *desc = inst_describe(s->f, in);
        json_kstr(&s->j, "args", desc);
        free(desc);
    }
    *bytes += inst_bytes_min(s->f, in);
    if (!inst_upload(s->dev, s->f, in, s->o->threads, &err))
        return fail_at(s, "inputs", err);

    tc_diag d;
    diag_init(&d);
    tc_status st = drv_sync(s->dev, NULL, &d);
    double t0 = now_ms();
    if (st == TC_OK && (st = tc_run(s->p, s->c->fn, in->targs, (size_t)in->ntargs, NULL)) != TC_OK) {
        diag_release(&d);
        return fail_at(s, "run", msgf("tc_run failed: %s: %s", tc_status_str(st), tc_errmsg(s->ctx)));
    }
    if (st == TC_OK)
        st = drv_sync(s->dev, NULL, &d);
    if (i == 0)
        *first_ms = now_ms() - t0;
    if (st != TC_OK) {
        char *m = msgf("after the first run: %s", d.brief ? d.brief : tc_status_str(st));
        diag_release(&d);
        return fail_at(s, "run", m);
    }
    diag_release(&d);
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

int child_case(const child_opts *o, const bench_case *c)
{
    case_state s = {.o = o, .c = c};
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
    if (c->kind != CASE_ADAMW) {
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
    for (int i = 0; ok && i < s.ninst; i++)
        ok = prepare_one(&s, i, shapes[i], &worst, &bytes, &first_ms);
    double check_ms = now_ms() - t0;
    json_kint(&s.j, "launches_per_step", s.ninst);
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
        bench_step step = {s.p, c->fn, s.inst, s.ninst};
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
            json_knum(&s.j, "time_us", us);
            json_kstr(&s.j, "time_from", us == t.wall_us ? "wall" : "event");
            json_knum(&s.j, "GBps", us > 0 ? (double)bytes / (us * 1e3) : NAN);
        }
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
    for (int i = 0; shapes && i < nshapes; i++)
        free(shapes[i]);
    free(shapes);
    pool_close(&s.pool);
    tc_program_free(s.p);
    if (s.ctx) { /* until tc_ctx_free releases the GPU state itself (as tools/run.c) */
        rt_free(s.ctx->rt);
        s.ctx->rt = NULL;
    }
    tc_ctx_free(s.ctx);
    drv_close(s.dev);
    free(s.error);
    free(s.j.b.s);
    if (!wrote)
        return BENCH_ENV;
    return ok ? BENCH_OK : !strcmp(s.stage ? s.stage : "", "device") ? BENCH_ENV : BENCH_FAILED;
}
