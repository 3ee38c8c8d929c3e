/* test_lower.c - properties of lowering (src/lower), checked over every
 * program of corpus.h (the examples, the golden and fusion programs, and
 * generated chains of views, pointwise ops and reductions) at random sizes:
 *
 *   in range    every operand index of every node, at every point of the
 *               node's domain (a concat's operand only where it is
 *               selected), lies inside the operand's shape, and lir_verify
 *               accepts the function;
 *   hash-consed no two nodes are the same op over the same operands at the
 *               same indices (equal nodes have equal ids), and lowering is
 *               deterministic (the same dump twice);
 *   faithful    evaluating the lowered nodes (each element through its
 *               index expressions, with ops.def's reference column) gives
 *               what the reference interpreter (src/ref) gives, for every
 *               function without a matmul or f16/bf16 values: views
 *               composed into index expressions address the elements the
 *               interpreter's views address, and the expanded composite
 *               reductions (mean, var, logsumexp ...) compute its values,
 *               and scans (each element from the start of its lane) too.
 *
 * A failure names the program, the function, the node and the point. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "build_harness.h"
#include "corpus.h"
#include "graph/opeval.h"
#include "lower/lir.h"
#include "ref/ref.h"

enum { NGEN = 1000, MAXPOINTS = 4096 };

/* ---- building and lowering ------------------------------------------------ */

static lfn *lower_protected(const gfn *g, const char *what)
{
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        fail_msg("%s: lowering '%s' failed (%s): %s", what, g->name, tc_status_str(H.d.status),
                 H.d.msg ? H.d.msg : "");
    }
    lfn *l = lower_fn(g, g->dims, H.a, &H.d);
    lir_verify(l, &H.d);
    H.d.jb = NULL;
    return l;
}

static const char *dump(const lfn *l)
{
    tc_buf b;
    buf_init(&b, H.a);
    lir_print(&b, l);
    return buf_str(&b);
}

/* ---- concrete evaluation of index expressions ----------------------------- */

/* The symbols' sizes, then $0..$8 (set per point). */
typedef struct env {
    tc_dimbind b[64 + TC_MAX_RANK + 1];
    int nsym, n;
} env;

static void env_init(env *e, const lfn *l, const tc_dimbind *b, int nb)
{
    assert_true(nb <= 64);
    memcpy(e->b, b, sizeof *b * (size_t)nb);
    e->nsym = nb;
    for (int k = 0; k <= TC_MAX_RANK; k++)
        e->b[nb + k] = (tc_dimbind){l->varnames[k], 0};
    e->n = nb + TC_MAX_RANK + 1;
}

static void env_at(env *e, const int64_t *idx, int rank)
{
    for (int k = 0; k < rank; k++)
        e->b[e->nsym + k].value = idx[k];
}

static int64_t ev(const env *e, const tc_dim *d, const char *what)
{
    int64_t v = 0;
    const char *unbound = NULL;
    if (!dim_eval(d, e->b, e->n, &v, &unbound))
        fail_msg("%s: cannot evaluate %s (unbound %s)", what, dim_str(H.a, d), unbound ? unbound : "?");
    return v;
}

static void shape_of(const env *e, int rank, const tc_dim *const *shape, int64_t *out)
{
    for (int k = 0; k < rank; k++)
        out[k] = ev(e, shape[k], "a shape");
}

static int64_t numel_of(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k] > 0 ? shape[k] : 0;
    return n;
}

static void unflatten(int64_t flat, int rank, const int64_t *shape, int64_t *idx)
{
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = shape[k] > 0 ? flat % shape[k] : 0;
        flat = shape[k] > 0 ? flat / shape[k] : 0;
    }
}

static int64_t flatten(int rank, const int64_t *shape, const int64_t *idx)
{
    int64_t f = 0;
    for (int k = 0; k < rank; k++)
        f = f * shape[k] + idx[k];
    return f;
}

/* ---- property: operand indices in range ----------------------------------- */

static int check_in_range(const char *prog, const lfn *l, const tc_dimbind *b, int nb)
{
    env e;
    env_init(&e, l, b, nb);
    int points = 0;
    for (int i = 0; i < l->nnodes; i++) {
        const lnode *n = l->nodes[i];
        if (n->kind == LK_MATMUL || n->nin == 0)
            continue;
        int drank = n->kind == LK_REDUCE ? n->a.red.rin : n->rank;
        const tc_dim *const *dshape = n->kind == LK_REDUCE ? n->a.red.shape_in : n->shape;
        int64_t dom[TC_MAX_RANK], idx[TC_MAX_RANK];
        shape_of(&e, drank, dshape, dom);
        int64_t total = numel_of(drank, dom);
        int64_t step = total > MAXPOINTS ? total / MAXPOINTS + 1 : 1;
        for (int64_t p = 0; p < total; p += step) {
            unflatten(p, drank, dom, idx);
            env_at(&e, idx, drank);
            for (int r = 0; r < n->nin; r++) {
                const lref *ref = &n->in[r];
                if (n->kind == LK_CONCAT) {
                    int64_t lo = ev(&e, n->a.cat.offsets[r], "a concat offset");
                    int64_t hi = ev(&e, n->a.cat.offsets[r + 1], "a concat offset");
                    if (idx[n->a.cat.axis] < lo || idx[n->a.cat.axis] >= hi)
                        continue; /* this operand is not selected here */
                }
                int64_t sshape[TC_MAX_RANK];
                shape_of(&e, ref->src->rank, ref->src->shape, sshape);
                for (int j = 0; j < ref->src->rank; j++) {
                    int64_t v = ev(&e, ref->idx[j], "an index");
                    if (v < 0 || v >= sshape[j]) {
                        print_error("%s\n", dump(l));
                        fail_msg("%s: fn %s: %%%d reads %%%d dim %d at %lld (size %lld), at point %lld of "
                                 "its domain (sizes: %s=%lld ...)",
                                 prog, l->g->name, n->id, ref->src->id, j, (long long)v,
                                 (long long)sshape[j], (long long)p, nb ? b[0].name : "-",
                                 nb ? (long long)b[0].value : 0LL);
                    }
                }
                points++;
            }
        }
    }
    return points;
}

/* ---- property: hash-consing ---------------------------------------------- */

static bool same_dims(int n, const tc_dim *const *a, const tc_dim *const *b)
{
    for (int k = 0; k < n; k++)
        if (!dim_eq(a[k], b[k]))
            return false;
    return true;
}

static bool same_node(const lnode *a, const lnode *b)
{
    if (a->kind != b->kind || a->op != b->op || a->dtype != b->dtype || a->opdt != b->opdt ||
        a->rank != b->rank || a->nin != b->nin || !same_dims(a->rank, a->shape, b->shape))
        return false;
    for (int i = 0; i < a->nin; i++)
        if (a->in[i].src != b->in[i].src || !same_dims(a->in[i].src->rank, a->in[i].idx, b->in[i].idx))
            return false;
    switch (a->kind) {
    case LK_INPUT:
    case LK_SCALAR:
        return a->a.param == b->a.param;
    case LK_CONST:
        return memcmp(&a->a.cnst.f, &b->a.cnst.f, sizeof(double)) == 0 && a->a.cnst.i == b->a.cnst.i;
    case LK_DIMVAL:
        return dim_eq(a->a.dim, b->a.dim);
    case LK_REDUCE:
        return a->a.red.kind == b->a.red.kind && a->a.red.mask == b->a.red.mask &&
               a->a.red.keepdim == b->a.red.keepdim && a->a.red.rin == b->a.red.rin &&
               same_dims(a->a.red.rin, a->a.red.shape_in, b->a.red.shape_in);
    case LK_CONCAT:
        return a->a.cat.axis == b->a.cat.axis && same_dims(a->nin + 1, a->a.cat.offsets, b->a.cat.offsets);
    case LK_MATMUL:
        return a->a.mm.batch == b->a.mm.batch;
    case LK_SCAN:
        return a->a.scan.axis == b->a.scan.axis && a->a.scan.reverse == b->a.scan.reverse;
    default:
        return true;
    }
}

static void check_hash_consed(const char *prog, const lfn *l)
{
    for (int i = 0; i < l->nnodes; i++) {
        if (l->nodes[i]->id != i)
            fail_msg("%s: fn %s: node %d has id %d", prog, l->g->name, i, l->nodes[i]->id);
        for (int j = 0; j < i; j++)
            if (same_node(l->nodes[i], l->nodes[j])) {
                print_error("%s\n", dump(l));
                fail_msg("%s: fn %s: %%%d and %%%d are the same node under two ids", prog, l->g->name, j, i);
            }
    }
}

/* ---- property: lowered evaluation equals the interpreter ------------------- */

typedef int64_t shape_t[TC_MAX_RANK];

typedef struct leval {
    const lfn *l;
    env e;
    const ref_tensor *args;
    double **memo;          /* per node, per element of its shape */
    unsigned char **have;
    shape_t *shape;
} leval;

/* Whether eval() covers f: no matmul (cuBLAS's, apart), no f16/bf16
 * (computed in f32 between stores, where the interpreter rounds each op). */
static bool evaluable(const lfn *l)
{
    for (int i = 0; i < l->nnodes; i++) {
        const lnode *n = l->nodes[i];
        if (n->dtype == TC_F16 || n->dtype == TC_BF16 || n->kind == LK_MATMUL)
            return false;
        if (n->kind == LK_POINTWISE && (n->opdt == TC_F16 || n->opdt == TC_BF16))
            return false;
    }
    return true;
}

static double eval(leval *x, const lnode *n, const int64_t *idx);

/* n's operand r at the point idx of n's domain (drank variables). */
static double operand(leval *x, const lnode *n, int r, const int64_t *idx, int drank)
{
    const lref *ref = &n->in[r];
    int64_t at[TC_MAX_RANK];
    env_at(&x->e, idx, drank);
    for (int j = 0; j < ref->src->rank; j++)
        at[j] = ev(&x->e, ref->idx[j], "an index");
    return eval(x, ref->src, at);
}

static double eval(leval *x, const lnode *n, const int64_t *idx)
{
    int64_t flat = flatten(n->rank, x->shape[n->id], idx);
    if (x->have[n->id][flat])
        return x->memo[n->id][flat];
    double v = 0;
    switch (n->kind) {
    case LK_INPUT:
        v = ref_getf(&x->args[n->a.param], flat);
        break;
    case LK_SCALAR:
        v = ref_getf(&x->args[n->a.param], 0);
        break;
    case LK_CONST:
        v = dtype_is_float(n->dtype) ? n->a.cnst.f : (double)n->a.cnst.i;
        break;
    case LK_DIMVAL:
        v = (double)ev(&x->e, n->a.dim, "a size");
        break;
    case LK_POINTWISE: {
        double in[3] = {0, 0, 0};
        op_kind k = op_table[n->op].kind;
        if (k == OPK_COPY || k == OPK_CAST) {
            v = dtype_cast(n->in[0].src->dtype, n->dtype, operand(x, n, 0, idx, n->rank));
            break;
        }
        for (int r = 0; r < n->nin && r < 3; r++)
            in[r] = dtype_cast(n->in[r].src->dtype, n->opdt, operand(x, n, r, idx, n->rank));
        int64_t iv;
        if (!dtype_is_float(n->opdt) && opeval_has_int(n->op) && n->opdt != TC_BOOL) {
            opeval_i64(n->op, (int64_t)in[0], (int64_t)in[1], &iv);
            v = (double)iv;
        } else {
            v = opeval_f64(n->op, in[0], in[1], in[2]);
        }
        break;
    }
    case LK_CONCAT: {
        env_at(&x->e, idx, n->rank);
        for (int r = 0; r < n->nin; r++) {
            int64_t lo = ev(&x->e, n->a.cat.offsets[r], "an offset");
            int64_t hi = ev(&x->e, n->a.cat.offsets[r + 1], "an offset");
            if (idx[n->a.cat.axis] >= lo && idx[n->a.cat.axis] < hi) {
                v = operand(x, n, r, idx, n->rank);
                break;
            }
        }
        break;
    }
    case LK_REDUCE: {
        int rin = n->a.red.rin;
        int64_t dom[TC_MAX_RANK], in[TC_MAX_RANK] = {0}, red[TC_MAX_RANK];
        shape_of(&x->e, rin, n->a.red.shape_in, dom);
        for (int j = 0; j < n->rank; j++) {
            int ax = red_out_axis(n, j);
            if (!(n->a.red.mask & (1u << ax)))
                in[ax] = idx[j];
        }
        int nr = 0;
        int64_t count = 1;
        for (int ax = 0; ax < rin; ax++)
            if (n->a.red.mask & (1u << ax)) {
                red[nr++] = ax;
                count *= dom[ax];
            }
        red_kind rk = n->a.red.kind;
        bool arg = rk == RK_ARGMAX || rk == RK_ARGMIN;
        double best = rk == RK_ARGMAX ? -INFINITY : INFINITY;
        v = rk == RK_SUM ? 0 : rk == RK_PROD ? 1 : rk == RK_MAX ? -INFINITY : INFINITY;
        if (arg)
            v = 0;
        for (int64_t c = 0; c < count; c++) {
            int64_t rest = c;
            for (int q = nr - 1; q >= 0; q--) {
                in[red[q]] = rest % dom[red[q]];
                rest /= dom[red[q]];
            }
            double a = operand(x, n, 0, in, rin);
            if (arg) { /* the first extreme, by its index over the reduced axes */
                if (rk == RK_ARGMAX ? a > best : a < best) {
                    best = a;
                    v = (double)c;
                }
            } else if (rk == RK_SUM)
                v += a;
            else if (rk == RK_PROD)
                v *= a;
            else if (isnan(a) || isnan(v))
                v = NAN;
            else if (rk == RK_MAX ? a > v : a < v)
                v = a;
        }
        break;
    }
    case LK_SCAN: { /* the operand from the start (or the end) of the axis to idx */
        int ax = n->a.scan.axis;
        int64_t len = x->shape[n->id][ax], at[TC_MAX_RANK];
        for (int j = 0; j < n->rank; j++)
            at[j] = idx[j];
        bool first = true;
        for (int64_t s = n->a.scan.reverse ? len - 1 : 0; n->a.scan.reverse ? s >= idx[ax] : s <= idx[ax];
             s += n->a.scan.reverse ? -1 : 1) {
            at[ax] = s;
            double a = operand(x, n, 0, at, n->rank);
            if (first)
                v = a;
            else if (n->op == OP_cumsum)
                v += a;
            else if (n->op == OP_cumprod)
                v *= a;
            else if (isnan(a) || isnan(v))
                v = NAN;
            else if (n->op == OP_cummax || n->op == OP_cummin)
                v = (n->op == OP_cummax ? a > v : a < v) ? a : v;
            else if (!isinf(a > v ? a : v)) /* logcumsumexp */
                v = (a > v ? a : v) + log1p(exp(-fabs(a - v)));
            else
                v = a > v ? a : v;
            first = false;
        }
        break;
    }
    default:
        fail_msg("node kind %d not evaluated", n->kind);
    }
    v = dtype_round(n->dtype, v);
    x->have[n->id][flat] = 1;
    x->memo[n->id][flat] = v;
    return v;
}

/* Returns the elements compared (0 if f is not evaluable). */
static int64_t check_faithful(const char *prog, const gfn *g, const lfn *l, const tc_dimbind *b, int nb,
                              uint64_t *s)
{
    if (!evaluable(l))
        return 0;
    ref_tensor *args = calloc((size_t)g->nparams + 1, sizeof *args);
    ref_tensor *outs = calloc((size_t)g->noutputs + 1, sizeof *outs);
    assert_non_null(args);
    assert_non_null(outs);
    for (int p = 0; p < g->nparams; p++) {
        const gparam *gp = &g->params[p];
        int64_t shape[TC_MAX_RANK];
        for (int k = 0; k < gp->rank; k++)
            shape[k] = bind_eval(gp->shape[k], b, nb);
        assert_true(ref_alloc(&args[p], gp->dtype, gp->scalar ? 0 : gp->rank, shape));
        for (int64_t i = 0; i < ref_numel(&args[p]); i++)
            ref_setf(&args[p], i, (double)(int64_t)(rng_next(s) % 2001 - 1000) / 1000.0);
    }
    tc_diag d;
    diag_init(&d);
    tc_status st = ref_run(g, b, nb, args, outs, &d);
    if (st != TC_OK)
        fail_msg("%s: fn %s: the interpreter failed: %s", prog, g->name, d.msg ? d.msg : "?");
    diag_release(&d);

    leval x = {.l = l, .args = args};
    env_init(&x.e, l, b, nb);
    x.memo = ARENA_ARRAY(H.a, double *, l->nnodes);
    x.have = ARENA_ARRAY(H.a, unsigned char *, l->nnodes);
    x.shape = ARENA_ARRAY(H.a, shape_t, l->nnodes);
    for (int i = 0; i < l->nnodes; i++) {
        const lnode *n = l->nodes[i];
        shape_of(&x.e, n->rank, n->shape, x.shape[i]);
        int64_t ne = numel_of(n->rank, x.shape[i]);
        x.memo[i] = ARENA_ARRAY(H.a, double, ne > 0 ? ne : 1);
        x.have[i] = ARENA_ARRAY(H.a, unsigned char, ne > 0 ? ne : 1);
    }
    int64_t compared = 0;
    for (int o = 0; o < l->noutputs; o++) {
        const lnode *n = l->outputs[o].node;
        const ref_tensor *want = &outs[o];
        assert_int_equal(want->rank, n->rank);
        for (int k = 0; k < n->rank; k++)
            if (want->shape[k] != x.shape[n->id][k])
                fail_msg("%s: fn %s: output %s dim %d is %lld lowered, %lld interpreted", prog, g->name,
                         l->outputs[o].name, k, (long long)x.shape[n->id][k], (long long)want->shape[k]);
        for (int64_t i = 0; i < ref_numel(want); i++) {
            int64_t idx[TC_MAX_RANK];
            unflatten(i, n->rank, x.shape[n->id], idx);
            double got = eval(&x, n, idx), w = ref_getf(want, i);
            double err = ref_elem_err(got, w);
            if (!(err == 0 || err <= 1e-5 * (1 + fabs(w)))) {
                print_error("%s\n", dump(l));
                fail_msg("%s: fn %s: output %s element %lld: lowered %.9g, interpreter %.9g", prog, g->name,
                         l->outputs[o].name, (long long)i, got, w);
            }
            compared++;
        }
    }
    for (int p = 0; p < g->nparams; p++)
        ref_free(&args[p]);
    for (int o = 0; o < g->noutputs; o++)
        ref_free(&outs[o]);
    free(args);
    free(outs);
    return compared;
}

/* ---- the corpus ----------------------------------------------------------- */

typedef struct tally {
    int progs, fns, refused, bound, evaluated;
    int file_fns, file_fns_evaluated; /* of the .tc files (not generated) */
    int64_t points, elements;
} tally;

static void check_program(const cprog *p, uint64_t *s, tally *t)
{
    tc_status st = try_build(p->text, NULL, NULL);
    if (st != TC_OK) {
        /* the files must build; a generated program the checker refuses
         * (a slice past a size, say) is simply not used */
        if (strncmp(p->name, "generated", 9) != 0)
            fail_msg("%s does not build: %s", p->name, H.d.msg ? H.d.msg : "?");
        t->refused++;
        return;
    }
    t->progs++;
    const tc_graph *gr = H.g;
    for (int i = 0; i < gr->nfns; i++) {
        const gfn *g = gr->fns[i];
        lfn *l = lower_protected(g, p->name);
        t->fns++;
        bool file = strncmp(p->name, "generated", 9) != 0;
        t->file_fns += file;
        t->file_fns_evaluated += file && evaluable(l);
        check_hash_consed(p->name, l);
        /* deterministic: the same function lowered again prints the same */
        lfn *l2 = lower_protected(g, p->name);
        if (strcmp(dump(l), dump(l2)) != 0)
            fail_msg("%s: fn %s: two lowerings differ", p->name, g->name);
        for (int round = 0; round < 3; round++) {
            tc_dimbind *b;
            int nb;
            if (!corpus_bind(g, s, round == 0 ? 3 : 6, H.a, &b, &nb))
                continue;
            t->bound++;
            t->points += check_in_range(p->name, l, b, nb);
            int64_t el = check_faithful(p->name, g, l, b, nb, s);
            t->elements += el;
            t->evaluated += el > 0;
        }
    }
}

static void test_lower_properties(void **state)
{
    (void)state;
    corpus c = corpus_all(NGEN, 12);
    uint64_t s = 99;
    tally t = {0};
    for (int i = 0; i < c.n; i++) {
        check_program(&c.p[i], &s, &t);
        arena_reset(H.a);
    }
    print_message("lower: %d programs (%d generated ones refused by the checker), %d functions, %d "
                  "bindings; %lld operand indices in range; %d runs, %lld elements equal to the "
                  "interpreter's (functions of the .tc files: %d of %d evaluated)\n",
                  t.progs, t.refused, t.fns, t.bound, (long long)t.points, t.evaluated,
                  (long long)t.elements, t.file_fns_evaluated, t.file_fns);
    /* the corpus must exercise what it claims */
    assert_true(t.progs > 200);
    assert_true(t.evaluated > 200);
    assert_true(t.file_fns_evaluated > 40);
    corpus_free(&c);
}

/* Hash-consing by construction: the same expression written twice is one
 * node, and so is a view read twice. */
static void test_hash_consing_shares(void **state)
{
    (void)state;
    assert_int_equal(try_build("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                               "    a = exp(x.T.T) * 2.0\n"
                               "    b = exp(x) * 2.0\n"
                               "    return a + b\n"
                               "}\n",
                               NULL, NULL),
                     TC_OK);
    lfn *l = lower_protected(H.g->fns[0], "shares");
    int exps = 0, muls = 0;
    for (int i = 0; i < l->nnodes; i++) {
        exps += l->nodes[i]->kind == LK_POINTWISE && l->nodes[i]->op == OP_exp;
        muls += l->nodes[i]->kind == LK_POINTWISE && l->nodes[i]->op == OP_mul;
    }
    if (exps != 1 || muls != 1) {
        print_error("%s\n", dump(l));
        fail_msg("want one exp and one mul, got %d and %d", exps, muls);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hash_consing_shares, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lower_properties, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
