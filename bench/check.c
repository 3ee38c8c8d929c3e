/* check.c - every output against the reference interpreter, on every core.
 *
 * The reference interpreter (src/ref) is the oracle, in f64, and single-
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
            api_entry(pool->p[i], fn, &pool->f[i]) != TC_OK) {
            *err = msgf("compiling %s for the reference: %s", path, tc_errmsg(pool->ctx[i]));
            pool_close(pool);
            return false;
        }
    }
    return true;
}

void pool_close(check_pool *pool)
{
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

double check_tol(const gfn *f, tc_dtype out)
{
    if (!dtype_is_float(out))
        return 0; /* integers and bools: exact */
    if (out == TC_F16 || out == TC_BF16)
        return 1e-2;
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i]->dtype == TC_F16 || f->nodes[i]->dtype == TC_BF16)
            return 1e-2; /* f16/bf16 math feeding an f32 result */
    return 1e-5;
}

/* --- where the split symbol sits ------------------------------------------------- */

typedef struct {
    int *param_dim;         /* per param: the dim that is the symbol, or -1 */
    int *out_dim;           /* per output */
    int64_t total;          /* the symbol's value; 0: no split */
} split_plan;

/* The dim of shape (rank dims) that is exactly symbol s, -1 if none uses
 * it, -2 if it is used otherwise (twice, or as N - 1, 2 * N, ...).  "Is
 * exactly" is tested by value: the dim moves with s one for one. */
static int sym_dim(const tc_dim *const *shape, int rank, const char *s, const tc_dimbind *b,
                   int nb, int at, int64_t v)
{
    int found = -1;
    for (int k = 0; k < rank; k++) {
        if (!dim_uses(shape[k], s))
            continue;
        if (found >= 0)
            return -2;
        tc_dimbind *moved = malloc(sizeof *moved * (size_t)nb);
        if (!moved)
            return -2;
        memcpy(moved, b, sizeof *moved * (size_t)nb);
        int64_t x = -1, y = -1;
        bool e1 = dim_eval(shape[k], b, nb, &x, NULL);
        moved[at].value = v + 7;
        bool e2 = dim_eval(shape[k], moved, nb, &y, NULL);
        free(moved);
        if (!e1 || !e2 || x != v || y != v + 7)
            return -2;
        found = k;
    }
    return found;
}

/* Fill sp for splitting along s; sp->total = 0 when the shapes say no. */
static bool plan_split(const gfn *f, const bench_inst *in, const char *s, split_plan *sp)
{
    sp->param_dim = calloc((size_t)f->nparams + 1, sizeof(int));
    sp->out_dim = calloc((size_t)f->noutputs + 1, sizeof(int));
    sp->total = 0;
    if (!sp->param_dim || !sp->out_dim)
        return false;
    for (int i = 0; i < f->nparams; i++)
        sp->param_dim[i] = -1;
    for (int k = 0; k < f->noutputs; k++)
        sp->out_dim[k] = -1;
    int at = -1;
    for (int i = 0; s && i < in->nb; i++)
        if (strcmp(in->binds[i].name, s) == 0)
            at = i;
    if (at < 0)
        return true;
    int64_t v = in->binds[at].value;
    bool any_in = false;
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (g->scalar)
            continue;
        int d = sym_dim(g->shape, g->rank, s, in->binds, in->nb, at, v);
        if (d == -2)
            return true;
        sp->param_dim[i] = d;
        any_in |= d >= 0;
    }
    for (int k = 0; k < f->noutputs; k++) {
        const gnode *n = f->outputs[k].node;
        int d = sym_dim(n->shape, n->rank, s, in->binds, in->nb, at, v);
        if (d == -2 || (d == -1 && any_in))
            return true; /* reduced over s: the rows interact */
        sp->out_dim[k] = d;
    }
    if (any_in && v > 1)
        sp->total = v;
    return true;
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
    const gfn *f;           /* the caller's (shapes, dtypes: same in every copy) */
    const bench_inst *in;
    const char *sym;        /* the split symbol */
    split_plan sp;
    int nchunks;
    out_stats *stats;       /* [chunk][output] */
    char **errors;          /* per chunk */
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

static void compare(const check_job *j, int k, const ref_tensor *want, int d, int64_t lo,
                    int64_t len, out_stats *st)
{
    const unsigned char *got = j->in->got[k];
    tc_dtype dt = j->f->outputs[k].node->dtype;
    int sz = dtype_size(dt);
    int64_t n = ref_numel(want), outer = 1, inner = 1, total = j->sp.total;
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
        if (want->idata) { /* integers and bools: exactly, so any difference fails */
            int64_t ia = dtype_decode_int(dt, got + g * sz), ib = want->idata[i];
            a = (double)ia;
            b = (double)ib;
            e = ia == ib ? 0 : INFINITY;
        } else {
            a = decode_value(dt, got + g * sz);
            b = want->data[i];
            if (isfinite(b) && fabs(b) > st->scale)
                st->scale = fabs(b);
            e = ref_elem_err(a, b);
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
    const gfn *f = j->f, *wf = j->pool->f[worker];
    tc_program *wp = j->pool->p[worker];
    const bench_inst *in = j->in;
    int64_t total = j->sp.total, lo = 0, hi = 0;
    if (total) {
        lo = total * c / j->nchunks;
        hi = total * (c + 1) / j->nchunks;
    }
    ref_tensor *args = calloc((size_t)f->nparams + 1, sizeof *args);
    bool *owned = calloc((size_t)f->nparams + 1, sizeof *owned);
    bind_arg *ba = calloc((size_t)f->nparams + 1, sizeof *ba);
    tc_dimbind *extra = malloc(sizeof *extra * (size_t)(in->nb + 1));
    ref_tensor *outs = calloc((size_t)f->noutputs + 1, sizeof *outs);
    char *err = NULL;
    if (!args || !owned || !ba || !extra || !outs)
        err = msgf("out of memory");

    /* the chunk's inputs: views of a leading dim, copies of an inner one */
    for (int i = 0; !err && i < f->nparams; i++) {
        const ref_tensor *t = &in->args[i];
        int d = total ? j->sp.param_dim[i] : -1;
        args[i] = *t;
        if (d >= 0) {
            int64_t outer, inner, len = hi - lo;
            dim_split_sizes(t->shape, t->rank, d, &outer, &inner);
            args[i].shape[d] = len;
            /* either lane (ref.h): 8 bytes an element in both */
            const char *from = t->idata ? (const char *)t->idata : (const char *)t->data;
            char *to;
            if (d == 0) {
                to = (char *)from + lo * inner * 8;
            } else if (!(to = malloc(8 * (size_t)(outer * len * inner) + 1))) {
                err = msgf("out of memory");
                break;
            } else {
                owned[i] = true;
                for (int64_t o = 0; o < outer; o++)
                    memcpy(to + o * len * inner * 8, from + (o * t->shape[d] + lo) * inner * 8,
                           8 * (size_t)(len * inner));
            }
            if (t->idata)
                args[i].idata = (int64_t *)(void *)to;
            else
                args[i].data = (double *)(void *)to;
        }
        if (!f->params[i].scalar) {
            ba[i].given = true;
            ba[i].rank = args[i].rank;
            memcpy(ba[i].shape, args[i].shape, sizeof ba[i].shape);
        }
    }

    /* its sizes: the whole's, with the split symbol the chunk's length */
    tc_dimbind *binds = NULL;
    int nb = 0;
    if (!err) {
        memcpy(extra, in->binds, sizeof *extra * (size_t)in->nb);
        for (int i = 0; total && i < in->nb; i++)
            if (strcmp(extra[i].name, j->sym) == 0)
                extra[i].value = hi - lo;
        if (api_bind(wp, wf, ba, extra, in->nb, &binds, &nb) != TC_OK)
            err = msgf("binding the reference's sizes: %s", tc_errmsg(wp->ctx));
        else if (api_ref_run(wp, wf, binds, nb, args, outs) != TC_OK)
            err = msgf("the reference interpreter failed: %s", tc_errmsg(wp->ctx));
    }
    for (int k = 0; !err && k < f->noutputs; k++)
        compare(j, k, &outs[k], total ? j->sp.out_dim[k] : -1, lo, hi - lo,
                &j->stats[c * f->noutputs + k]);
    for (int k = 0; outs && k < f->noutputs; k++)
        ref_free(&outs[k]);
    for (int i = 0; args && owned && i < f->nparams; i++)
        if (owned[i]) {
            free(args[i].data);
            free(args[i].idata);
        }
    free(args);
    free(owned);
    free(ba);
    free(extra);
    free(outs);
    j->errors[c] = err;
}

/* "[2, 5]": the multi-index of flat element i of output k. */
static char *index_text(const gfn *f, const bench_inst *in, int k, int64_t i)
{
    const gnode *n = f->outputs[k].node;
    int64_t idx[TC_MAX_RANK];
    for (int r = n->rank - 1; r >= 0; r--) {
        int64_t s = bind_eval(n->shape[r], in->binds, in->nb);
        idx[r] = s ? i % s : 0;
        i = s ? i / s : 0;
    }
    sbuf b = {0};
    sb_printf(&b, "[");
    for (int r = 0; r < n->rank; r++)
        sb_printf(&b, "%s%lld", r ? ", " : "", (long long)idx[r]);
    sb_printf(&b, "]");
    return b.s;
}

bool check_inst(check_pool *pool, const gfn *f, const bench_inst *in, const char *split,
                check_result *r)
{
    memset(r, 0, sizeof *r);
    check_job j = {pool, f, in, split, {0}, 1, NULL, NULL};
    if (!plan_split(f, in, split, &j.sp)) {
        r->detail = msgf("out of memory");
        return false;
    }
    if (j.sp.total) {
        j.nchunks = 2 * pool->n; /* a few more chunks than threads, for balance */
        if (j.nchunks > j.sp.total)
            j.nchunks = (int)j.sp.total;
    }
    r->split = j.sp.total > 0;
    j.stats = calloc((size_t)j.nchunks * (size_t)(f->noutputs + 1), sizeof *j.stats);
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
    for (int k = 0; ran && k < f->noutputs; k++) {
        out_stats s = {0, 0, -1, 0, 0};
        for (int c = 0; c < j.nchunks; c++) {
            const out_stats *t = &j.stats[c * f->noutputs + k];
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
        double tol = check_tol(f, f->outputs[k].node->dtype);
        bool ok = rel == 0 || rel < tol;
        double ratio = tol > 0 ? rel / tol : (rel > 0 ? INFINITY : 0);
        if (rel > r->max_rel_err || k == 0)
            r->max_rel_err = rel;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            r->tol = tol;
            free(r->detail);
            char *idx = s.at >= 0 ? index_text(f, in, k, s.at) : NULL;
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
