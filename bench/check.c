/* check.c - every output against the reference interpreter, on every core.
 *
 * The reference interpreter (tc_run_cpu) is the oracle, in f64, and single-
 * threaded: over the suite's 64M-element cases and AdamW's 302M parameters
 * it would take minutes.  Most cases have rows that do not interact
 * (softmax's N, a pointwise [*]): the reference of a block of rows is the
 * same computation as those rows of the whole, so the block runs on its own,
 * on its own thread, with its own copy of the program (a context is one
 * thread's at a time).
 *
 * The case table declares the symbol (bench_case.split); here the shapes
 * must agree: each tensor uses the symbol in at most one dim and as the
 * symbol itself, and no output drops it while an input has it (that would
 * be a reduction over it).  Otherwise the reference runs whole, once.  A
 * declared split that is wrong can only make the check fail: the rows would
 * be computed from the wrong inputs.
 *
 * The measure (suite.md): max |got - want| / max(1, max |want|) per output,
 * under 1e-5 for f32 math and 1e-2 where f16/bf16 are involved.  NaN
 * matches only NaN and an infinity only itself.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool pool_open(check_pool *pool, const char *path, const char *fn, int nthreads, char **err)
{
    memset(pool, 0, sizeof *pool);
    pool->ctx = calloc((size_t)nthreads, sizeof *pool->ctx);
    pool->p = calloc((size_t)nthreads, sizeof *pool->p);
    pool->f = calloc((size_t)nthreads, sizeof *pool->f);
    if (!pool->ctx || !pool->p || !pool->f) {
        *err = msgf("out of memory");
        pool_close(pool);
        return false;
    }
    for (int i = 0; i < nthreads; i++) {
        pool->n = i + 1;
        if (tc_ctx_create(&pool->ctx[i]) != TC_OK) {
            *err = msgf("out of memory");
            pool_close(pool);
            return false;
        }
        if (tc_compile_file(pool->ctx[i], path, &pool->p[i]) != TC_OK ||
            tc_program_function(pool->p[i], fn, &pool->f[i]) != TC_OK) {
            *err = msgf("compiling %s for the reference: %s", path, tc_errmsg(pool->ctx[i]));
            pool_close(pool);
            return false;
        }
    }
    return true;
}

/* the kept reference outputs (check_pool.keep), all of them */
static void kept_free(check_pool *pool)
{
    for (int c = 0; pool->kept && c < pool->kept_chunks; c++) {
        for (size_t k = 0; pool->kept[c] && k < pool->kept_outputs; k++)
            free(pool->kept[c][k].data);
        free(pool->kept[c]);
    }
    free(pool->kept);
    pool->kept = NULL;
    pool->kept_in = NULL;
    pool->kept_chunks = 0;
}

void pool_close(check_pool *pool)
{
    kept_free(pool);
    for (int i = 0; i < pool->n; i++) {
        tc_program_free(pool->p ? pool->p[i] : NULL);
        tc_ctx_free(pool->ctx ? pool->ctx[i] : NULL);
    }
    free(pool->ctx);
    free(pool->p);
    free(pool->f);
    memset(pool, 0, sizeof *pool);
}

void check_result_free(check_result *r)
{
    free(r->detail);
    r->detail = NULL;
}

static const DLDataType DT_F16 = {kDLFloat, 16, 1}, DT_BF16 = {kDLBfloat, 16, 1};

static bool is_half(DLDataType t)
{
    return dt_is_float(t) && t.bits == 16;
}

double check_tol(tc_program *p, const tc_function_info *f, DLDataType out, double tol_f32)
{
    if (!dt_is_float(out))
        return 0; /* integers and bools: exact */
    if (is_half(out))
        return 1e-2;
    int h = 0, b = 0;
    tc_function_computes_in(p, f->name, DT_F16, &h);
    tc_function_computes_in(p, f->name, DT_BF16, &b);
    return h || b ? 1e-2 : tol_f32 > 0 ? tol_f32 : 1e-5; /* f16/bf16 math feeding an f32 result */
}

/* --- where the split symbol sits ------------------------------------------------- */

typedef struct {
    int *param_dim;         /* per param: the dim that is the symbol, or -1 */
    int *out_dim;           /* per output */
    int64_t total;          /* the symbol's value; 0: no split */
} split_plan;

/* The dim that is exactly the symbol, given a tensor's shape at the symbol's
 * value v (a) and at v + 7 (b): -1 if none moves, -2 if one moves otherwise
 * (N - 1, 2 * N, ...) or two move.  "Is exactly" is tested by value: the dim
 * moves with the symbol one for one. */
static int sym_dim(int rank, const int64_t *a, const int64_t *b, int64_t v)
{
    int found = -1;
    for (int k = 0; k < rank; k++) {
        if (a[k] == b[k])
            continue;
        if (found >= 0 || a[k] != v || b[k] != v + 7)
            return -2;
        found = k;
    }
    return found;
}

/* Fill sp for splitting along s; sp->total = 0 when the shapes say no. */
static bool plan_split(tc_program *p, const tc_function_info *f, const bench_inst *in,
                       const char *s, split_plan *sp)
{
    sp->param_dim = calloc(f->nparams + 1, sizeof(int));
    sp->out_dim = calloc(f->noutputs + 1, sizeof(int));
    sp->total = 0;
    if (!sp->param_dim || !sp->out_dim)
        return false;
    for (size_t i = 0; i < f->nparams; i++)
        sp->param_dim[i] = -1;
    for (size_t k = 0; k < f->noutputs; k++)
        sp->out_dim[k] = -1;
    int at = -1;
    for (int i = 0; s && i < in->nsizes; i++)
        if (strcmp(in->sizes[i].name, s) == 0)
            at = i;
    if (at < 0)
        return true;
    int64_t v = in->sizes[at].v.i;
    /* the shapes with the symbol moved by 7 */
    tc_arg *moved = malloc(sizeof *moved * (size_t)in->nsizes);
    tc_shape *ps = calloc(f->nparams + 1, sizeof *ps), *os = calloc(f->noutputs + 1, sizeof *os);
    bool ok = moved && ps && os;
    if (ok) {
        memcpy(moved, in->sizes, sizeof *moved * (size_t)in->nsizes);
        moved[at].v.i = v + 7;
    }
    bool split = ok && tc_shapes(p, f->name, moved, (size_t)in->nsizes, ps, f->nparams, os,
                                 f->noutputs) == TC_OK;
    bool any_in = false;
    for (size_t i = 0; split && i < f->nparams; i++) {
        if (f->params[i].scalar)
            continue;
        int d = sym_dim(in->args[i].rank, in->args[i].shape, ps[i].shape, v);
        if (d == -2)
            split = false;
        sp->param_dim[i] = d;
        any_in |= d >= 0;
    }
    for (size_t k = 0; split && k < f->noutputs; k++) {
        int d = sym_dim(in->out_shapes[k].ndim, in->out_shapes[k].shape, os[k].shape, v);
        if (d == -2 || (d == -1 && any_in))
            split = false; /* reduced over s: the rows interact */
        sp->out_dim[k] = d;
    }
    if (split && any_in && v > 1)
        sp->total = v;
    free(moved);
    free(ps);
    free(os);
    return ok;
}

/* --- one chunk ------------------------------------------------------------------------- */

typedef struct {
    double scale;           /* max |want| over finite wants */
    double maxerr;
    int64_t at;             /* global flat index of the worst element, -1: none differs */
    double got, want;
} out_stats;

typedef struct {
    check_pool *pool;
    const tc_function_info *f;  /* the caller's (shapes, dtypes: same in every copy) */
    const bench_inst *in;
    const char *sym;        /* the split symbol */
    split_plan sp;
    int nchunks;
    out_stats *stats;       /* [chunk][output] */
    char **errors;          /* per chunk */
    bool keep;              /* pool->kept[chunk]: the reference's outputs, or NULL to keep */
} check_job;

/* Block [lo, hi) of dim d of t, as outer x len x inner. */
static void dim_split_sizes(const int64_t *shape, int rank, int d, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int k = 0; k < d; k++)
        *outer *= shape[k];
    for (int k = d + 1; k < rank; k++)
        *inner *= shape[k];
}

static void compare(const check_job *j, int k, const htensor *want, int d, int64_t lo,
                    int64_t len, out_stats *st)
{
    const unsigned char *got = j->in->got[k];
    DLDataType dt = want->dtype;
    int sz = dt_size(dt);
    int64_t n = ht_numel(want), outer = 1, inner = 1, total = j->sp.total;
    if (d >= 0)
        dim_split_sizes(want->shape, want->rank, d, &outer, &inner);
    *st = (out_stats){0, 0, -1, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        int64_t g = i;
        if (d >= 0) { /* chunk-local (o, s, r) to the whole output's flat index */
            int64_t o = i / (len * inner), rest = i % (len * inner);
            g = (o * total + lo + rest / inner) * inner + rest % inner;
        }
        double a, b, e;
        if (!dt_is_float(dt)) { /* integers and bools: exactly, so any difference fails */
            long long ia = tc_value_decode_int(dt, got + g * sz);
            long long ib = tc_value_decode_int(dt, want->data + i * sz);
            a = (double)ia;
            b = (double)ib;
            e = ia == ib ? 0 : INFINITY;
        } else {
            a = tc_value_decode(dt, got + g * sz);
            b = tc_value_decode(dt, want->data + i * sz);
            if (isfinite(b) && fabs(b) > st->scale)
                st->scale = fabs(b);
            e = tc_value_diff(a, b); /* the reference's own measure */
        }
        if (e > st->maxerr || (st->at < 0 && e > 0)) {
            st->maxerr = e;
            st->at = g;
            st->got = a;
            st->want = b;
        }
    }
}

static void check_chunk(void *arg, int worker, int64_t c)
{
    check_job *j = arg;
    const tc_function_info *f = j->f;
    tc_program *wp = j->pool->p[worker];
    tc_ctx *wctx = j->pool->ctx[worker];
    const bench_inst *in = j->in;
    size_t np = f->nparams, no = f->noutputs;
    int64_t total = j->sp.total, lo = 0, hi = 0;
    if (total) {
        lo = total * c / j->nchunks;
        hi = total * (c + 1) / j->nchunks;
    }
    htensor *args = calloc(np + 1, sizeof *args);
    bool *owned = calloc(np + 1, sizeof *owned);
    htensor *outs = calloc(no + 1, sizeof *outs);
    tc_shape *os = calloc(no + 1, sizeof *os);
    DLTensor *dl = calloc(np + no + 1, sizeof *dl);
    tc_arg *targs = calloc(np + no + 1, sizeof *targs);
    tc_arg *sizes = malloc(sizeof *sizes * (size_t)(in->nsizes + 1));
    size_t nt = 0;
    char *err = NULL;
    if (!args || !owned || !outs || !os || !dl || !targs || !sizes)
        err = msgf("out of memory");

    /* the chunk's inputs: views of a leading dim, copies of an inner one
     * (and of any the reference writes back into: an inout parameter) */
    for (size_t i = 0; !err && i < np; i++) {
        const htensor *t = &in->args[i];
        int d = total ? j->sp.param_dim[i] : -1;
        args[i] = *t;
        if (f->params[i].scalar) {
            targs[nt++] = scalar_arg(f->params[i].name, t);
            continue;
        }
        int sz = dt_size(t->dtype);
        int64_t outer = ht_numel(t), inner = 1, len = 1, from_len = 1, first = 0;
        if (d >= 0) {
            dim_split_sizes(t->shape, t->rank, d, &outer, &inner);
            len = hi - lo;
            from_len = t->shape[d];
            first = lo;
            args[i].shape[d] = len;
        }
        if (d == 0 && !f->params[i].inout) {
            args[i].data = t->data + lo * inner * sz;
        } else if (d >= 0 || f->params[i].inout) {
            unsigned char *to = malloc((size_t)(outer * len * inner * sz) + 1);
            if (!to) {
                err = msgf("out of memory");
                break;
            }
            owned[i] = true;
            if (d < 0)
                memcpy(to, t->data, (size_t)(outer * sz));
            for (int64_t o = 0; d >= 0 && o < outer; o++)
                memcpy(to + o * len * inner * sz, t->data + (o * from_len + first) * inner * sz,
                       (size_t)(len * inner * sz));
            args[i].data = to;
        }
        dl[i] = ht_dl(&args[i]);
        targs[nt++] = tc_arg_tensor(f->params[i].name, &dl[i]);
    }

    /* its outputs: the whole's shapes, with the split symbol the chunk's length */
    if (!err) {
        memcpy(sizes, in->sizes, sizeof *sizes * (size_t)in->nsizes);
        for (int i = 0; total && i < in->nsizes; i++)
            if (strcmp(sizes[i].name, j->sym) == 0)
                sizes[i].v.i = hi - lo;
        if (!total)
            memcpy(os, in->out_shapes, sizeof *os * no);
        else if (tc_output_shapes(wp, f->name, sizes, (size_t)in->nsizes, os, no) != TC_OK)
            err = msgf("binding the reference's sizes: %s", tc_errmsg(wctx));
    }
    for (size_t k = 0; !err && k < no; k++) {
        int ip = out_param(f, (int)k);
        if (ip >= 0) { /* written back into the parameter's copy */
            outs[k] = args[ip];
            continue;
        }
        if (!ht_alloc(&outs[k], os[k].dtype, os[k].ndim, os[k].shape)) {
            err = msgf("out of memory");
            break;
        }
        dl[np + k] = ht_dl(&outs[k]);
        targs[nt++] = tc_arg_tensor(f->outputs[k].name, &dl[np + k]);
    }
    /* the same instance's chunk, kept from the last check: its reference */
    htensor *kept = j->keep ? j->pool->kept[c] : NULL;
    if (!err && !kept && tc_run_cpu(wp, f->name, targs, nt) != TC_OK)
        err = msgf("the reference interpreter failed: %s", tc_errmsg(wctx));
    for (size_t k = 0; !err && k < no; k++)
        compare(j, (int)k, kept ? &kept[k] : &outs[k], total ? j->sp.out_dim[k] : -1, lo, hi - lo,
                &j->stats[c * (int64_t)no + (int64_t)k]);
    if (!err && j->keep && !kept) { /* kept for the next check (the outputs are no parameter's) */
        j->pool->kept[c] = outs;
        outs = NULL;
    }
    for (size_t k = 0; outs && k < no; k++)
        if (out_param(f, (int)k) < 0)
            free(outs[k].data);
    for (size_t i = 0; args && owned && i < np; i++)
        if (owned[i])
            free(args[i].data);
    free(args);
    free(owned);
    free(outs);
    free(os);
    free(dl);
    free(targs);
    free(sizes);
    j->errors[c] = err;
}

/* "[2, 5]": the multi-index of flat element i of output k. */
static char *index_text(const bench_inst *in, int k, int64_t i)
{
    const tc_shape *n = &in->out_shapes[k];
    int64_t idx[TC_MAX_DIMS];
    for (int r = n->ndim - 1; r >= 0; r--) {
        int64_t s = n->shape[r];
        idx[r] = s ? i % s : 0;
        i = s ? i / s : 0;
    }
    sbuf b = {0};
    sb_printf(&b, "[");
    for (int r = 0; r < n->ndim; r++)
        sb_printf(&b, "%s%lld", r ? ", " : "", (long long)idx[r]);
    sb_printf(&b, "]");
    return b.s;
}

bool check_inst(check_pool *pool, const tc_function_info *f, const bench_inst *in,
                const char *split, check_result *r)
{
    memset(r, 0, sizeof *r);
    int no = (int)f->noutputs;
    check_job j = {pool, f, in, split, {0}, 1, NULL, NULL, false};
    if (!plan_split(pool->p[0], f, in, split, &j.sp)) {
        r->detail = msgf("out of memory");
        free(j.sp.param_dim);
        free(j.sp.out_dim);
        return false;
    }
    if (j.sp.total) {
        j.nchunks = 2 * pool->n; /* a few more chunks than threads, for balance */
        if (j.nchunks > j.sp.total)
            j.nchunks = (int)j.sp.total;
    }
    r->split = j.sp.total > 0;
    /* check_pool.keep: an instance none of whose outputs is written into a
     * parameter keeps its reference for the checks after this one */
    j.keep = pool->keep;
    for (int k = 0; j.keep && k < no; k++)
        j.keep = out_param(f, k) < 0;
    if (j.keep && (pool->kept_in != in || pool->kept_chunks != j.nchunks ||
                   pool->kept_outputs != (size_t)no)) {
        kept_free(pool);
        pool->kept = calloc((size_t)j.nchunks, sizeof *pool->kept);
        pool->kept_in = in;
        pool->kept_chunks = j.nchunks;
        pool->kept_outputs = (size_t)no;
        j.keep = pool->kept != NULL;
    }
    j.stats = calloc((size_t)j.nchunks * (size_t)(no + 1), sizeof *j.stats);
    j.errors = calloc((size_t)j.nchunks, sizeof *j.errors);
    bool ran = j.stats && j.errors;
    if (!ran)
        r->detail = msgf("out of memory");
    else if (!par_for(j.nchunks, pool->n, check_chunk, &j))
        for (int c = 0; c < j.nchunks; c++)
            check_chunk(&j, 0, c);
    for (int c = 0; ran && c < j.nchunks; c++)
        if (j.errors[c]) {
            r->detail = j.errors[c];
            j.errors[c] = NULL;
            ran = false;
        }

    /* each output over all chunks; the verdict is the worst output's */
    r->ok = ran;
    double worst_ratio = -1;
    for (int k = 0; ran && k < no; k++) {
        out_stats s = {0, 0, -1, 0, 0};
        for (int c = 0; c < j.nchunks; c++) {
            const out_stats *t = &j.stats[c * no + k];
            if (t->scale > s.scale)
                s.scale = t->scale;
            if (t->maxerr > s.maxerr || (s.at < 0 && t->at >= 0)) {
                s.maxerr = t->maxerr;
                s.at = t->at;
                s.got = t->got;
                s.want = t->want;
            }
        }
        double scale = s.scale > 1 ? s.scale : 1, rel = s.maxerr / scale;
        double tol = check_tol(pool->p[0], f, in->out_shapes[k].dtype, pool->tol_f32);
        bool ok = rel == 0 || rel < tol;
        double ratio = tol > 0 ? rel / tol : (rel > 0 ? INFINITY : 0);
        if (rel > r->max_rel_err || k == 0)
            r->max_rel_err = rel;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            r->tol = tol;
            free(r->detail);
            char *idx = s.at >= 0 ? index_text(in, k, s.at) : NULL;
            r->detail = s.at < 0 ? msgf("output '%s': every element equals the reference",
                                         f->outputs[k].name)
                                 : msgf("output '%s' at %s: got %.9g, want %.9g (max |got - want| = "
                                        "%.3g, %.3g of max(1, max |want|) = %.6g; tolerance %g)",
                                        f->outputs[k].name, idx ? idx : "?", s.got, s.want,
                                        s.maxerr, rel, scale, tol);
            free(idx);
        }
        if (!ok)
            r->ok = false;
    }
    for (int c = 0; j.errors && c < j.nchunks; c++)
        free(j.errors[c]);
    free(j.errors);
    free(j.stats);
    free(j.sp.param_dim);
    free(j.sp.out_dim);
    return ran;
}
