/* selftest.c - tc-bench --self-test: what can be tested without a GPU.
 *
 * The check is the part of tc-bench that decides whether a figure is
 * reported at all, and its chunked reference (check.c) is the one clever
 * thing in it.  So for every case, at its small shape:
 *
 *   1. the reference interpreter runs whole, single-threaded, and its
 *      outputs are encoded as if the GPU had produced them;
 *   2. check_inst must accept them with error exactly 0, and must have
 *      split the reference along the case's declared symbol (a split that
 *      computed anything differently would show as a nonzero error);
 *   3. one element made wrong, then one made NaN, must each be rejected,
 *      and the message must name that element's index.
 *
 * Plus the JSON writer's output read back by the helpers the parent uses,
 * and the foreach cases' tensor sets (foreach_sizes): suite.md's 240
 * tensors of 302,088,192 parameters, 2000 x 4096, and malformed sets refused.
 * Exit status 0 when everything holds, 1 otherwise; each failure printed.
 *
 * Steps 2 and 3 compute the chunked reference once: each rejection is a
 * whole check_inst again (the same code, its comparison and verdict), on the
 * reference outputs the first check kept (check_pool.keep: the args are the
 * same, only got differs): the Release build's self-test 41.3 u + 1.7 s ->
 * 21.3 u + 1.0 s, the ASan build's quick one 69.6 u + 6.0 s -> 39.3 u + 3.1 s,
 * the same output line for line.
 *
 * TC_SELFTEST_QUICK=1 (scripts/test.sh's sanitizer builds, which look for
 * memory errors and undefined behaviour in this code, not for what it
 * decides): step 3 on each case's last output only.  Each rejection is a
 * whole check again, the same code for every output; a case whose reference
 * runs whole (mlp_bwd's four products at its small shape: 9 reference runs,
 * half of the ASan build's self-test) pays for each in full.  The Release
 * build runs every output.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "[i, j]" for flat element e of output k (its shape in in). */
static char *index_of(const bench_inst *in, int k, int64_t e)
{
    const tc_shape *n = &in->out_shapes[k];
    int64_t idx[TC_MAX_DIMS];
    for (int r = n->ndim - 1; r >= 0; r--) {
        int64_t s = n->shape[r];
        idx[r] = e % s;
        e /= s;
    }
    sbuf b = {0};
    sb_printf(&b, "[");
    for (int r = 0; r < n->ndim; r++)
        sb_printf(&b, "%s%lld", r ? ", " : "", (long long)idx[r]);
    sb_printf(&b, "]");
    return b.s;
}

static int expect_reject(const char *name, const tc_function_info *f, check_pool *pool,
                         bench_inst *in, const char *split, int k, int64_t e, double bad,
                         const char *what)
{
    DLDataType dt = in->out_shapes[k].dtype;
    int sz = dt_size(dt);
    unsigned char keep[8];
    memcpy(keep, in->got[k] + e * sz, (size_t)sz);
    tc_value_encode(dt, bad, in->got[k] + e * sz);
    check_result r;
    bool ran = check_inst(pool, f, in, split, &r);
    char *idx = index_of(in, k, e);
    int fails = 0;
    if (!ran || r.ok || !r.detail || !idx || !strstr(r.detail, idx)) {
        printf("self-test: %s: FAIL: %s at %s of output '%s' was not rejected by name (%s)\n", name,
               what, idx ? idx : "?", f->outputs[k].name, r.detail ? r.detail : "no detail");
        fails = 1;
    }
    memcpy(in->got[k] + e * sz, keep, (size_t)sz);
    free(idx);
    check_result_free(&r);
    return fails;
}

/* The reference run whole on in's inputs, its outputs into in->got as the
 * GPU would have written them.  NULL, or the error (malloc'd). */
static char *reference_whole(tc_ctx *ctx, tc_program *p, const tc_function_info *f,
                             bench_inst *in)
{
    size_t np = f->nparams, no = f->noutputs, nt = 0;
    DLTensor *dl = calloc(np + no + 1, sizeof *dl);
    tc_arg *targs = calloc(np + no + 1, sizeof *targs);
    htensor *copy = calloc(np + 1, sizeof *copy);
    char *err = NULL;
    if (!dl || !targs || !copy || !(in->got = calloc(no + 1, sizeof *in->got)))
        err = msgf("out of memory");
    for (size_t i = 0; !err && i < np; i++) {
        htensor *t = &in->args[i];
        if (f->params[i].scalar) {
            targs[nt++] = scalar_arg(f->params[i].name, t);
            continue;
        }
        copy[i] = *t;
        if (f->params[i].inout) { /* written back: into a copy, the inputs kept */
            size_t bytes = (size_t)(ht_numel(t) * dt_size(t->dtype));
            if (!(copy[i].data = malloc(bytes + 1))) {
                err = msgf("out of memory");
                break;
            }
            memcpy(copy[i].data, t->data, bytes);
        }
        dl[i] = ht_dl(&copy[i]);
        targs[nt++] = tc_arg_tensor(f->params[i].name, &dl[i]);
    }
    for (size_t k = 0; !err && k < no; k++) {
        const tc_shape *sh = &in->out_shapes[k];
        int ip = out_param(f, (int)k);
        if (ip >= 0) {
            in->got[k] = copy[ip].data;
            copy[ip].data = in->args[ip].data; /* now owned by in->got */
            continue;
        }
        htensor o;
        if (!ht_alloc(&o, sh->dtype, sh->ndim, sh->shape)) {
            err = msgf("out of memory");
            break;
        }
        in->got[k] = o.data;
        dl[np + k] = ht_dl(&o);
        dl[np + k].shape = in->out_shapes[k].shape;
        targs[nt++] = tc_arg_tensor(f->outputs[k].name, &dl[np + k]);
    }
    if (!err && tc_run_cpu(p, f->name, targs, nt) != TC_OK)
        err = msgf("the reference failed: %s", tc_errmsg(ctx));
    for (size_t i = 0; copy && i < np; i++)
        if (copy[i].data && in->args && copy[i].data != in->args[i].data)
            free(copy[i].data);
    free(copy);
    free(dl);
    free(targs);
    return err;
}

static int test_case(const char *cases_dir, const bench_case *c, int threads)
{
    char *path = msgf("%s/%s", cases_dir, c->file), *err = NULL;
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    const tc_function_info *f = NULL;
    check_pool pool = {0};
    bench_inst in = {0};
    int fails = 0;
    if (!path || tc_ctx_create(&ctx) != TC_OK)
        err = msgf("out of memory");
    else if (tc_compile_file(ctx, path, &p) != TC_OK || tc_program_function(p, c->fn, &f) != TC_OK)
        err = msgf("%s", tc_errmsg(ctx));
    else if (pool_open(&pool, path, c->fn, threads, &err) &&
             inst_make(ctx, p, f, c, c->small, 1, "selftest", threads, &in, &err))
        err = reference_whole(ctx, p, f, &in);
    /* the checks below see the same args, only got made wrong: the first
     * one's reference, chunk by chunk, serves them all (check_pool.keep) */
    pool.keep = true;
    if (err) {
        printf("self-test: %s: FAIL: %s\n", c->name, err);
        fails = 1;
    } else {
        check_result r;
        bool ran = check_inst(&pool, f, &in, c->split, &r);
        if (!ran || !r.ok || r.max_rel_err != 0 || r.split != (c->split != NULL)) {
            printf("self-test: %s: FAIL: the reference's own outputs: ran %d, ok %d, max rel err "
                   "%g, split %d (want %d): %s\n", c->name, ran, r.ok, r.max_rel_err, r.split,
                   c->split != NULL, r.detail ? r.detail : "");
            fails++;
        }
        check_result_free(&r);
        const char *q = getenv("TC_SELFTEST_QUICK");
        int k0 = q && strcmp(q, "1") == 0 && f->noutputs > 0 ? (int)f->noutputs - 1 : 0;
        for (int k = k0; k < (int)f->noutputs; k++) {
            const tc_shape *sh = &in.out_shapes[k];
            DLDataType dt = sh->dtype;
            int64_t n = 1;
            for (int d = 0; d < sh->ndim; d++)
                n *= sh->shape[d];
            int64_t e = n > 2 ? n - n / 3 : n - 1;
            double v = tc_value_decode(dt, in.got[k] + e * dt_size(dt));
            /* wrong in the output's dtype too: an integer moves by at least 1 */
            double bad = !dt_is_float(dt) && !dt_is_int(dt) ? (v == 0)
                         : dt_is_int(dt) ? v + 1 + floor(fabs(v) / 4)
                                         : v + 0.5 + fabs(v) / 4;
            fails += expect_reject(c->name, f, &pool, &in, c->split, k, e, bad, "a wrong value");
            if (dt_is_float(dt))
                fails += expect_reject(c->name, f, &pool, &in, c->split, k, e, NAN, "a NaN");
        }
        if (!fails)
            printf("self-test: %s: ok (%s; reference %s)\n", c->name, c->small,
                   c->split ? "in chunks" : "whole");
    }
    if (f)
        inst_free(NULL, f, &in);
    pool_close(&pool);
    tc_program_free(p);
    tc_ctx_free(ctx);
    free(path);
    free(err);
    return fails;
}

static int test_json(void)
{
    json j = {0};
    json_obj(&j);
    json_kstr(&j, "name", "a \"quoted\"\nname");
    json_knum(&j, "time_us", 12.5);
    json_knum(&j, "nan", NAN);
    json_key(&j, "inner");
    json_raw(&j, "{\n  \"ok\": true,\n  \"total_ms\": 3\n}\n");
    json_key(&j, "list");
    json_arr(&j);
    json_int(&j, 1);
    json_null(&j);
    json_end_arr(&j);
    json_end_obj(&j);
    const char *t = j.b.s;
    bool ok = false;
    int fails = !t || !json_balanced(t) || json_find_num(t, "time_us") != 12.5 ||
                json_find_num(t, "total_ms") != 3 || !isnan(json_find_num(t, "nan")) ||
                !json_find_bool(t, "ok", &ok) || !ok || !strstr(t, "\\\"quoted\\\"\\nname") ||
                json_balanced("{\"a\": [1, 2}") || json_balanced("{\"a\": \"}\"");
    if (fails)
        printf("self-test: json: FAIL:\n%s\n", t ? t : "(nothing)");
    else
        printf("self-test: json: ok\n");
    free(j.b.s);
    return fails;
}

/* The set's group count and parameters, or -1 when foreach_sizes refuses it. */
static int64_t set_params(const char *set, int *n)
{
    bench_case c = {.name = "set", .kind = CASE_FOREACH, .set = set};
    int64_t *s = foreach_sizes(&c, false, n), total = 0;
    if (!s)
        return -1;
    for (int i = 0; i < *n; i++)
        total += s[i];
    free(s);
    return total;
}

static int test_sets(void)
{
    static const struct { const char *set; int n; int64_t params; } want[] = {
        {"transformer:24", 240, 302088192}, {"transformer:1", 10, 12587008},
        {"4096*2000", 2000, 8192000},       {"1*1", 1, 1},
        {"transformer:0", 0, -1},           {"transformer:", 0, -1},
        {"4096*", 0, -1},                   {"4096*0", 0, -1},
        {"4096", 0, -1},                    {"x*2", 0, -1},
        {"", 0, -1},
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int n = 0;
        int64_t p = set_params(want[i].set, &n);
        if (p != want[i].params || (p >= 0 && n != want[i].n)) {
            printf("self-test: foreach set '%s': FAIL: %d groups, %lld parameters (want %d, %lld)\n",
                   want[i].set, n, (long long)p, want[i].n, (long long)want[i].params);
            fails++;
        }
    }
    for (int i = 0; i < bench_ncases; i++) { /* every foreach case's sets parse */
        const bench_case *c = &bench_cases[i];
        int n = 0;
        int64_t *s = c->kind == CASE_FOREACH ? foreach_sizes(c, false, &n) : NULL;
        int64_t *q = c->kind == CASE_FOREACH ? foreach_sizes(c, true, &n) : NULL;
        if (c->kind == CASE_FOREACH && (!s || !q)) {
            printf("self-test: %s: FAIL: its set '%s' or quick set '%s' does not parse\n", c->name,
                   c->set ? c->set : "(none)", c->set_quick ? c->set_quick : "(none)");
            fails++;
        }
        free(s);
        free(q);
    }
    if (!fails)
        printf("self-test: foreach sets: ok\n");
    return fails;
}

int self_test(const char *cases_dir, int threads)
{
    int fails = test_json() + test_sets();
    for (int i = 0; i < bench_ncases; i++)
        fails += test_case(cases_dir, &bench_cases[i], threads);
    printf("self-test: %s\n", fails ? "FAILED" : "all passed");
    return fails ? BENCH_FAILED : BENCH_OK;
}
