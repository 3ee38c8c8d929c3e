/* test_ref.c - the reference interpreter against numbers worked out by hand.
 *
 * Graphs are built directly with graph_node_new/graph_add, so these tests
 * exercise ref_run alone (no parser, no builder).  Every expected value is
 * written out as a number (from the definition, or from Python's math module
 * for transcendental functions), never recomputed with the formula under
 * test: gelu(1) = 0.8413447460685429, sigmoid(-800) = 0, and so on.
 *
 * test_every_op_is_covered fails if ops.def grows an op that no test here
 * evaluates.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ref/ref.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define DV(...) ((const double[]){__VA_ARGS__})
#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* --- building graphs by hand ---------------------------------------------- */

static const char SRC_TEXT[] = "line 1\nline 2\nline 3\n";
static const tc_source SRC = {"t.tc", SRC_TEXT, sizeof SRC_TEXT - 1};

typedef struct G {
    tc_arena *a;
    tc_dimctx *dc;
    gfn *f;
    tc_diag d;
} G;

enum { MAXP = 16 };

static int setup(void **state)
{
    G *g = calloc(1, sizeof *g);
    g->a = arena_new(NULL);
    g->dc = dimctx_new(g->a);
    g->f = graph_fn_new(g->a, "f");
    g->f->params = ARENA_ARRAY(g->a, gparam, MAXP);
    g->f->outputs = ARENA_ARRAY(g->a, goutput, MAXP);
    diag_init(&g->d);
    *state = g;
    return 0;
}

static int teardown(void **state)
{
    G *g = *state;
    diag_release(&g->d);
    arena_free(g->a);
    free(g);
    return 0;
}

/* Node k is located at line k + 1, so an error's line names its node. */
static tc_loc at(int line) { return (tc_loc){&SRC, line, 1}; }

static const tc_dim *K(G *g, int64_t v) { return dim_const(g->dc, v); }
static const tc_dim *S(G *g, const char *name) { return dim_sym(g->dc, name); }

/* A shape of constant dims. */
static const tc_dim **cshape(G *g, int rank, const int64_t *s)
{
    const tc_dim **d = ARENA_ARRAY(g->a, const tc_dim *, rank > 0 ? rank : 1);
    for (int k = 0; k < rank; k++)
        d[k] = K(g, s[k]);
    return d;
}

static gnode *node(G *g, op_id op, tc_dtype dt, int rank, const tc_dim *const *shape,
                   gnode *const *in, int nin)
{
    gnode *n = graph_node_new(g->a, op, dt, rank, shape, in, nin, at(g->f->nnodes + 1));
    graph_add(g->a, g->f, n);
    return n;
}

static gnode *param(G *g, const char *name, tc_dtype dt, int rank, const tc_dim *const *shape,
                    bool scalar)
{
    int p = g->f->nparams++;
    assert_true(p < MAXP);
    gparam *gp = &g->f->params[p];
    gp->name = name;
    gp->loc = at(100 + p);
    gp->scalar = scalar;
    gp->dtype = dt;
    gp->rank = rank;
    gp->shape = (const tc_dim **)shape;
    gnode *n = node(g, scalar ? OP_scalar : OP_input, dt, rank, shape, NULL, 0);
    n->a.param = p;
    n->weak = scalar;
    gp->node = n;
    return n;
}

/* A tensor parameter of constant shape. */
static gnode *cinput(G *g, const char *name, tc_dtype dt, int rank, const int64_t *s)
{
    return param(g, name, dt, rank, cshape(g, rank, s), false);
}

static gnode *cnst_f(G *g, tc_dtype dt, double v)
{
    gnode *n = node(g, OP_const, dt, 0, NULL, NULL, 0);
    n->a.cnst.f = v;
    n->weak = true;
    return n;
}

static gnode *cnst_i(G *g, tc_dtype dt, int64_t v)
{
    gnode *n = node(g, OP_const, dt, 0, NULL, NULL, 0);
    n->a.cnst.i = v;
    n->weak = true;
    return n;
}

static gnode *op1(G *g, op_id op, tc_dtype dt, gnode *x)
{
    return node(g, op, dt, x->rank, x->shape, (gnode *[]){x}, 1);
}

/* Pointwise of several inputs, taking the shape of the first non-scalar. */
static gnode *opn(G *g, op_id op, tc_dtype dt, int nin, gnode *const *in)
{
    const gnode *sh = in[0];
    for (int k = 0; k < nin; k++)
        if (in[k]->rank > sh->rank)
            sh = in[k];
    return node(g, op, dt, sh->rank, sh->shape, in, nin);
}

static gnode *op2(G *g, op_id op, tc_dtype dt, gnode *a, gnode *b)
{
    return opn(g, op, dt, 2, (gnode *[]){a, b});
}

static gnode *reduce(G *g, op_id op, tc_dtype dt, gnode *x, int naxes, const int *axes, bool keepdim,
                     int correction)
{
    const tc_dim *shape[TC_MAX_RANK];
    int rank = 0;
    for (int k = 0; k < x->rank; k++) {
        bool r = false;
        for (int j = 0; j < naxes; j++)
            r |= axes[j] == k;
        if (!r)
            shape[rank++] = x->shape[k];
        else if (keepdim)
            shape[rank++] = K(g, 1);
    }
    gnode *n = node(g, op, dt, rank, shape, (gnode *[]){x}, 1);
    n->a.red.naxes = naxes;
    for (int j = 0; j < naxes; j++)
        n->a.red.axes[j] = axes[j];
    n->a.red.keepdim = keepdim;
    n->a.red.correction = correction;
    return n;
}

static gnode *view(G *g, gnode *x, int rank, const tc_dim *const *shape, const tc_dim *const *strides,
                   const tc_dim *offset)
{
    gnode *n = node(g, OP_view, x->dtype, rank, shape, (gnode *[]){x}, 1);
    n->a.view.strides = ARENA_ARRAY(g->a, const tc_dim *, rank > 0 ? rank : 1);
    for (int k = 0; k < rank; k++)
        n->a.view.strides[k] = strides[k];
    n->a.view.offset = offset;
    return n;
}

static gnode *cview(G *g, gnode *x, int rank, const int64_t *shape, const int64_t *strides,
                    int64_t offset)
{
    return view(g, x, rank, cshape(g, rank, shape), cshape(g, rank, strides), K(g, offset));
}

static void output(G *g, const char *name, gnode *n)
{
    int j = g->f->noutputs++;
    assert_true(j < MAXP);
    g->f->outputs[j] = (goutput){name, n->loc, n, -1};
}

/* --- tensors ---------------------------------------------------------------- */

static ref_tensor tens(tc_dtype dt, int rank, const int64_t *shape, const double *v)
{
    ref_tensor t;
    assert_true(ref_alloc(&t, dt, rank, shape));
    int64_t n = ref_numel(&t);
    for (int64_t i = 0; i < n; i++)
        ref_setf(&t, i, v[i]); /* integral values for integer dtypes: exact */
    return t;
}

/* An integer tensor from exact int64 values (most i64 have no double). */
static ref_tensor tens_i(tc_dtype dt, int rank, const int64_t *shape, const int64_t *v)
{
    ref_tensor t;
    assert_true(ref_alloc(&t, dt, rank, shape));
    assert_non_null(t.idata);
    assert_null(t.data);
    int64_t n = ref_numel(&t);
    for (int64_t i = 0; i < n; i++)
        t.idata[i] = v[i];
    return t;
}

static ref_tensor zeros(tc_dtype dt, int rank, const int64_t *shape)
{
    ref_tensor t;
    assert_true(ref_alloc(&t, dt, rank, shape));
    return t;
}

static ref_tensor scalar_t(tc_dtype dt, double v) { return tens(dt, 0, NULL, DV(v)); }

static void free_all(ref_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        ref_free(&t[i]);
}

/* Check the hand-built graph against graph.h's contract (graph_verify), so
 * these tests feed the interpreter only graphs the builder could make, then
 * run it. */
static tc_status run(G *g, const tc_dimbind *b, int nb, const ref_tensor *args, ref_tensor *outs)
{
    jmp_buf jb;
    g->d.jb = &jb;
    if (setjmp(jb))
        fail_msg("graph_verify: %s", g->d.msg);
    graph_verify(g->f, &g->d);
    g->d.jb = NULL;
    tc_status st = ref_run(g->f, b, nb, args, outs, &g->d);
    if (st != TC_OK)
        print_message("ref_run: %s\n", g->d.msg ? g->d.msg : "(no message)");
    return st;
}

/* got == want element by element: NaN matches NaN, a zero matches only a
 * zero of the same sign, and rtol allows for libm's last bit. */
static void expect_vals(const ref_tensor *t, int n, const double *want, double rtol, const char *what)
{
    assert_int_equal(ref_numel(t), n);
    for (int i = 0; i < n; i++) {
        double got = ref_getf(t, i), w = want[i];
        bool ok;
        if (isnan(w))
            ok = isnan(got);
        else if (w == 0)
            ok = got == 0 && signbit(got) == signbit(w);
        else if (isinf(w) || rtol == 0)
            ok = got == w;
        else
            ok = fabs(got - w) <= rtol * fabs(w);
        if (!ok)
            fail_msg("%s: element %d is %.17g, expected %.17g", what, i, got, w);
    }
}

/* An integer result, exactly: from the int64 lane, the double one absent. */
static void expect_ints(const ref_tensor *t, int n, const int64_t *want, const char *what)
{
    assert_int_equal(ref_numel(t), n);
    assert_non_null(t->idata);
    assert_null(t->data);
    for (int i = 0; i < n; i++)
        if (t->idata[i] != want[i])
            fail_msg("%s: element %d is %lld, expected %lld", what, i, (long long)t->idata[i],
                     (long long)want[i]);
}

static void expect_shape(const ref_tensor *t, tc_dtype dt, int rank, const int64_t *shape)
{
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int k = 0; k < rank; k++)
        assert_int_equal(t->shape[k], shape[k]);
}

/* --- every pointwise op ------------------------------------------------------ */

typedef struct pw_case {
    op_id op;
    tc_dtype out;       /* inputs are f64 */
    int n;
    double a[6], b[6], c[6];
    double want[6];
    double rtol;
} pw_case;

#define NaN NAN
#define Inf INFINITY
static const double LIBM = 4e-16; /* two ulps or so for transcendental functions */

static const pw_case PW[] = {
    /* unary */
    {OP_neg, TC_F64, 3, {1.5, -2, 0}, {0}, {0}, {-1.5, 2, -0.0}, 0},
    {OP_abs, TC_F64, 3, {-3.25, 2, -0.0}, {0}, {0}, {3.25, 2, 0}, 0},
    {OP_exp, TC_F64, 4, {0, 1, -1, 710}, {0}, {0}, {1, 2.718281828459045, 0.36787944117144233, Inf}, LIBM},
    {OP_exp2, TC_F64, 3, {3, -1, 0.5}, {0}, {0}, {8, 0.5, 1.4142135623730951}, LIBM},
    {OP_log, TC_F64, 4, {1, 10, 0, -1}, {0}, {0}, {0, 2.302585092994046, -Inf, NaN}, LIBM},
    {OP_log2, TC_F64, 3, {8, 0.5, 3}, {0}, {0}, {3, -1, 1.584962500721156}, LIBM},
    {OP_log1p, TC_F64, 3, {0, 1e-10, -1}, {0}, {0}, {0, 9.999999999500001e-11, -Inf}, LIBM},
    {OP_sqrt, TC_F64, 3, {4, 2, -1}, {0}, {0}, {2, 1.4142135623730951, NaN}, 0},
    {OP_rsqrt, TC_F64, 3, {4, 0, 0.25}, {0}, {0}, {0.5, Inf, 2}, 0},
    {OP_sin, TC_F64, 3, {0, 1, -2}, {0}, {0}, {0, 0.8414709848078965, -0.9092974268256817}, LIBM},
    {OP_cos, TC_F64, 3, {0, 1, 3}, {0}, {0}, {1, 0.5403023058681398, -0.9899924966004454}, LIBM},
    {OP_tanh, TC_F64, 3, {0, 1, -20}, {0}, {0}, {0, 0.7615941559557649, -1}, LIBM},
    {OP_erf, TC_F64, 3, {0, 1, -0.5}, {0}, {0}, {0, 0.8427007929497149, -0.5204998778130465}, LIBM},
    {OP_sigmoid, TC_F64, 6, {0, 1, -800, 800, -1, NaN}, {0}, {0},
     {0.5, 0.7310585786300049, 0, 1, 0.2689414213699951, NaN}, LIBM},
    {OP_relu, TC_F64, 4, {-1, 2.5, 0, NaN}, {0}, {0}, {0, 2.5, 0, NaN}, 0},
    {OP_gelu, TC_F64, 4, {1, -1, 0, 3}, {0}, {0},
     {0.8413447460685429, -0.15865525393145707, 0, 2.99595030590511}, LIBM},
    {OP_gelu_tanh, TC_F64, 3, {1, -1, 0.5}, {0}, {0},
     {0.8411919906082768, -0.15880800939172324, 0.34571400982514394}, LIBM},
    {OP_silu, TC_F64, 4, {1, -1, 0, -800}, {0}, {0},
     {0.7310585786300049, -0.2689414213699951, 0, -0.0}, LIBM},
    {OP_softplus, TC_F64, 5, {0, 1, 25, -50, 20}, {0}, {0},
     {0.6931471805599453, 1.3132616875182228, 25, 1.9287498479639178e-22, 20.000000002061153}, LIBM},
    {OP_floor, TC_F64, 3, {-1.5, 1.5, 2}, {0}, {0}, {-2, 1, 2}, 0},
    {OP_ceil, TC_F64, 3, {-1.5, 1.5, 2}, {0}, {0}, {-1, 2, 2}, 0},
    /* half to even, like torch.round */
    {OP_round, TC_F64, 6, {0.5, 1.5, 2.5, -0.5, -1.5, 2.6}, {0}, {0}, {0, 2, 2, -0.0, -2, 3}, 0},
    {OP_sign, TC_F64, 4, {-3, 0, 2, NaN}, {0}, {0}, {-1, 0, 1, NaN}, 0},
    {OP_reciprocal, TC_F64, 3, {2, 0, -4}, {0}, {0}, {0.5, Inf, -0.25}, 0},
    {OP_isnan, TC_BOOL, 3, {NaN, 1, Inf}, {0}, {0}, {1, 0, 0}, 0},
    {OP_isinf, TC_BOOL, 4, {Inf, -Inf, 1, NaN}, {0}, {0}, {1, 1, 0, 0}, 0},
    {OP_not, TC_BOOL, 4, {0, 2, -1, NaN}, {0}, {0}, {1, 0, 0, 0}, 0},
    /* binary */
    {OP_add, TC_F64, 3, {1, 2.5, Inf}, {2, -0.5, -Inf}, {0}, {3, 2, NaN}, 0},
    {OP_sub, TC_F64, 3, {1, 2.5, 0}, {2, -0.5, 0}, {0}, {-1, 3, 0}, 0},
    {OP_mul, TC_F64, 3, {1.5, -2, 0}, {2, 3, Inf}, {0}, {3, -6, NaN}, 0},
    {OP_div, TC_F64, 4, {1, -3, 1, 0}, {4, 2, 0, 0}, {0}, {0.25, -1.5, Inf, NaN}, 0},
    /* Python %: the sign of the divisor */
    {OP_mod, TC_F64, 6, {5, -5, 5, -5, 5.5, 6}, {3, 3, -3, -3, 2, 0}, {0}, {2, 1, -1, -2, 1.5, NaN}, 0},
    {OP_pow, TC_F64, 5, {2, 4, 2, 0, -8}, {10, 0.5, -1, 0, 0.5}, {0}, {1024, 2, 0.5, 1, NaN}, 0},
    /* NaN-propagating, like torch.maximum / torch.minimum */
    {OP_max, TC_F64, 4, {1, NaN, 3, -1}, {2, 1, NaN, -3}, {0}, {2, NaN, NaN, -1}, 0},
    {OP_min, TC_F64, 4, {1, NaN, 3, -1}, {2, 1, NaN, -3}, {0}, {1, NaN, NaN, -3}, 0},
    {OP_atan2, TC_F64, 4, {1, 1, -1, 0}, {1, -1, -1, -1}, {0},
     {0.7853981633974483, 2.356194490192345, -2.356194490192345, 3.141592653589793}, LIBM},
    {OP_eq, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {0, 1, 0, 0}, 0},
    {OP_ne, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {1, 0, 1, 1}, 0},
    {OP_lt, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {1, 0, 0, 0}, 0},
    {OP_le, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {1, 1, 0, 0}, 0},
    {OP_gt, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {0, 0, 1, 0}, 0},
    {OP_ge, TC_BOOL, 4, {1, 2, 3, NaN}, {2, 2, 2, NaN}, {0}, {0, 1, 1, 0}, 0},
    {OP_and, TC_BOOL, 4, {0, 0, 2, -1}, {0, 3, 0, 1}, {0}, {0, 0, 0, 1}, 0},
    {OP_or, TC_BOOL, 4, {0, 0, 2, -1}, {0, 3, 0, 1}, {0}, {0, 1, 1, 1}, 0},
    /* ternary: where(cond, a, b) (NaN is true); clamp(x, lo, hi) */
    {OP_where, TC_F64, 4, {1, 0, 5, NaN}, {1, 2, 3, 4}, {10, 20, 30, 40}, {1, 20, 3, 4}, 0},
    {OP_clamp, TC_F64, 5, {-5, 0.5, 5, NaN, 0.5}, {0, 0, 0, 0, NaN}, {1, 1, 1, 1, 1},
     {0, 0.5, 1, NaN, NaN}, 0},
};

static int arity(op_id op)
{
    switch (op) {
#define OP(id, spelling, kind, ar, rule, ref, cuda) case OP_##id: return ar;
#include "ops.def"
#undef OP
    default: return -2;
    }
}

static op_kind kind(op_id op)
{
    switch (op) {
#define OP(id, spelling, kd, ar, rule, ref, cuda) case OP_##id: return kd;
#include "ops.def"
#undef OP
    default: return OPK_LEAF;
    }
}

static void test_pointwise_table(void **state)
{
    (void)state;
    for (int r = 0; r < NELEMS(PW); r++) {
        const pw_case *pc = &PW[r];
        G *g;
        setup((void **)&g);
        int n = pc->n, ar = arity(pc->op);
        const double *cols[3] = {pc->a, pc->b, pc->c};
        gnode *in[3];
        ref_tensor args[3];
        for (int k = 0; k < ar; k++) {
            in[k] = cinput(g, "x", TC_F64, 1, I64(n));
            args[k] = tens(TC_F64, 1, I64(n), cols[k]);
        }
        output(g, "out", opn(g, pc->op, pc->out, ar, in));
        ref_tensor out[1];
        assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
        expect_shape(&out[0], pc->out, 1, I64(n));
        char what[64];
        snprintf(what, sizeof what, "row %d", r);
        expect_vals(&out[0], n, pc->want, pc->rtol, what);
        free_all(out, 1);
        free_all(args, ar);
        teardown((void **)&g);
    }
}

/* Ops with dedicated tests below (leaves, cast, reductions, layout, matmul). */
static const op_id TESTED_ELSEWHERE[] = {
    OP_input, OP_scalar, OP_const, OP_dimval, OP_cast, OP_sum, OP_mean, OP_rmax, OP_rmin,
    OP_prod, OP_argmax, OP_argmin, OP_var, OP_std, OP_logsumexp, OP_view, OP_copy, OP_concat,
    OP_matmul, OP_cumsum, OP_cumprod, OP_cummax, OP_cummin, OP_logcumsumexp,
};

static void test_every_op_is_covered(void **state)
{
    (void)state;
    bool covered[OP_COUNT] = {false};
    for (int r = 0; r < NELEMS(PW); r++) {
        op_kind k = kind(PW[r].op);
        assert_true(k == OPK_UNARY || k == OPK_BINARY || k == OPK_TERNARY);
        covered[PW[r].op] = true;
    }
    for (int i = 0; i < NELEMS(TESTED_ELSEWHERE); i++)
        covered[TESTED_ELSEWHERE[i]] = true;
    for (int op = 0; op < OP_COUNT; op++)
        if (!covered[op])
            fail_msg("op %d has no reference test", op);
}

/* --- broadcasting of rank-0 inputs ------------------------------------------ */

static void test_rank0_broadcast(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F32, 2, I64(2, 3));
    gnode *s = param(g, "s", TC_F32, 0, NULL, true);
    gnode *two = cnst_i(g, TC_I64, 2);
    gnode *y = op2(g, OP_mul, TC_F32, x, s);                 /* x * s */
    gnode *z = op2(g, OP_sub, TC_F32, two, y);               /* 2 - x * s */
    gnode *c = op2(g, OP_gt, TC_BOOL, x, two);
    gnode *w = opn(g, OP_where, TC_F32, 3, (gnode *[]){c, s, x}); /* where(x > 2, s, x) */
    gnode *cl = opn(g, OP_clamp, TC_F32, 3, (gnode *[]){x, two, cnst_f(g, TC_F32, 4.5)});
    output(g, "z", z);
    output(g, "w", w);
    output(g, "cl", cl);
    ref_tensor args[2] = {tens(TC_F32, 2, I64(2, 3), DV(1, 2, 3, 4, 5, 6)), scalar_t(TC_F32, 0.5)};
    ref_tensor out[3];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F32, 2, I64(2, 3));
    expect_vals(&out[0], 6, DV(1.5, 1, 0.5, 0, -0.5, -1), 0, "2 - x * s");
    expect_vals(&out[1], 6, DV(1, 2, 0.5, 0.5, 0.5, 0.5), 0, "where");
    expect_vals(&out[2], 6, DV(2, 2, 3, 4, 4.5, 4.5), 0, "clamp");
    free_all(out, 3);
    free_all(args, 2);
}

/* --- rounding on store -------------------------------------------------------- */

static void test_f16_rounding(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F16, 1, I64(5));
    gnode *y = cinput(g, "y", TC_F16, 1, I64(5));
    output(g, "sum", op2(g, OP_add, TC_F16, x, y));
    output(g, "third", op2(g, OP_div, TC_F16, x, cnst_i(g, TC_I64, 3)));
    ref_tensor args[2] = {tens(TC_F16, 1, I64(5), DV(2048, 2048, 65504, 1, 1)),
                          tens(TC_F16, 1, I64(5), DV(1, 3, 16, 0x1p-11, 0x3p-11))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F16, 1, I64(5));
    /* 2049 and 2051 are ties (spacing 2): to even.  65520 is the tie between
     * the largest f16 and 65536, which overflows: inf.  1 + 3*2^-11 ties
     * between 1 + 2^-10 (odd) and 1 + 2^-9 (even). */
    expect_vals(&out[0], 5, DV(2048, 2052, INFINITY, 1, 1.001953125), 0, "f16 add");
    expect_vals(&out[1], 5, DV(682.5, 682.5, 21840, 0.333251953125, 0.333251953125), 0, "f16 div");
    free_all(out, 2);
    free_all(args, 2);
}

static void test_bf16_f32_rounding(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_BF16, 1, I64(3));
    gnode *y = cinput(g, "y", TC_BF16, 1, I64(3));
    gnode *f = cinput(g, "f", TC_F32, 1, I64(2));
    output(g, "sum", op2(g, OP_add, TC_BF16, x, y));
    output(g, "third", op2(g, OP_div, TC_BF16, cnst_i(g, TC_I64, 1), x));
    output(g, "f32", op2(g, OP_div, TC_F32, f, cnst_i(g, TC_I64, 3)));
    ref_tensor args[3] = {tens(TC_BF16, 1, I64(3), DV(256, 1, 1)),
                          tens(TC_BF16, 1, I64(3), DV(1, 0x1p-8, 0x3p-8)),
                          tens(TC_F32, 1, I64(2), DV(1, 16777216))};
    ref_tensor out[3];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    /* bf16 has 8 significant bits: 257 ties to 256; 1 + 3*2^-8 ties to 1 + 2^-6. */
    expect_vals(&out[0], 3, DV(256, 1, 1.015625), 0, "bf16 add");
    /* 1/256 is exact; 1/1 = 1. */
    expect_vals(&out[1], 3, DV(0.00390625, 1, 1), 0, "bf16 reciprocal");
    expect_vals(&out[2], 2, DV(0.3333333432674408, 5592405.5), 0, "f32 div");
    free_all(out, 3);
    free_all(args, 3);
}

static void test_bf16_third(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_BF16, 1, I64(1));
    output(g, "out", op2(g, OP_div, TC_BF16, x, cnst_i(g, TC_I64, 3)));
    ref_tensor args[1] = {tens(TC_BF16, 1, I64(1), DV(1))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 1, DV(0.333984375), 0, "bf16 1/3");
    free_all(out, 1);
    free_all(args, 1);
}

/* --- integer semantics ---------------------------------------------------------- */

static void test_int_wrap(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(3));
    gnode *b = cinput(g, "b", TC_I32, 1, I64(3));
    gnode *p = cinput(g, "p", TC_I64, 1, I64(1));
    output(g, "add", op2(g, OP_add, TC_I32, a, b));
    output(g, "mul", op2(g, OP_mul, TC_I32, a, b));
    output(g, "neg", op1(g, OP_neg, TC_I32, a));
    output(g, "abs", op1(g, OP_abs, TC_I32, a));
    output(g, "sq64", op2(g, OP_mul, TC_I64, p, p));
    output(g, "inc", op2(g, OP_add, TC_I32, a, cnst_i(g, TC_I64, 1)));   /* weak literal keeps i32 */
    output(g, "half", op2(g, OP_mul, TC_F32, a, cnst_f(g, TC_F64, 0.5))); /* weak float: f32 math */
    ref_tensor args[3] = {tens(TC_I32, 1, I64(3), DV(2147483647, -2147483648.0, 123456789)),
                          tens(TC_I32, 1, I64(3), DV(1, -1, 987654321)),
                          tens(TC_I64, 1, I64(1), DV(1099511627777.0))}; /* 2^40 + 1 */
    ref_tensor out[7];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_I32, 1, I64(3));
    expect_vals(&out[0], 3, DV(-2147483648.0, 2147483647, 1111111110), 0, "i32 add");
    /* 123456789 * 987654321 = 121932631112635269 > 2^53: the low bits must
     * come from integer math, then wrap to -67153019. */
    expect_vals(&out[1], 3, DV(2147483647, -2147483648.0, -67153019), 0, "i32 mul");
    expect_vals(&out[2], 3, DV(-2147483647.0, -2147483648.0, -123456789), 0, "i32 neg");
    expect_vals(&out[3], 3, DV(2147483647, -2147483648.0, 123456789), 0, "i32 abs");
    /* (2^40 + 1)^2 = 2^80 + 2^41 + 1 = 2^41 + 1 mod 2^64 (f64 would lose the + 1). */
    expect_vals(&out[4], 1, DV(2199023255553.0), 0, "i64 mul");
    expect_vals(&out[5], 3, DV(-2147483648.0, -2147483647.0, 123456790), 0, "i32 + 1");
    expect_shape(&out[6], TC_F32, 1, I64(3));
    expect_vals(&out[6], 3, DV(1073741824, -1073741824, 61728396 /* 61728394.5 to f32 (spacing 4) */), 0,
                "i32 * 0.5");
    free_all(out, 7);
    free_all(args, 3);
}

static void test_int_mul_products(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(2));
    gnode *b = cinput(g, "b", TC_I32, 1, I64(2));
    output(g, "mul", op2(g, OP_mul, TC_I32, a, b));
    ref_tensor args[2] = {tens(TC_I32, 1, I64(2), DV(65536, 100000)),
                          tens(TC_I32, 1, I64(2), DV(65536, 100003))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    /* 2^32 wraps to 0; 10000300000 - 2 * 2^32 = 1410365408. */
    expect_vals(&out[0], 2, DV(0, 1410365408), 0, "i32 mul wrap");
    free_all(out, 1);
    free_all(args, 2);
}

static void test_int_mod_div_pow(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(5));
    gnode *b = cinput(g, "b", TC_I32, 1, I64(5));
    gnode *pa = cinput(g, "pa", TC_I32, 1, I64(7));
    gnode *pb = cinput(g, "pb", TC_I32, 1, I64(7));
    output(g, "mod", op2(g, OP_mod, TC_I32, a, b));
    output(g, "div", op2(g, OP_div, TC_F32, a, b));
    output(g, "pow", op2(g, OP_pow, TC_I32, pa, pb));
    ref_tensor args[4] = {tens(TC_I32, 1, I64(5), DV(-7, 7, -7, 7, 0)),
                          tens(TC_I32, 1, I64(5), DV(3, -3, -3, 2, 5)),
                          tens(TC_I32, 1, I64(7), DV(2, 3, -2, 2, -1, 1, 2)),
                          tens(TC_I32, 1, I64(7), DV(10, 0, 3, -1, -3, -5, 31))};
    ref_tensor out[3];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 5, DV(2, -2, -1, 1, 0), 0, "python mod");
    expect_shape(&out[1], TC_F32, 1, I64(5));
    expect_vals(&out[1], 5, DV(-2.3333332538604736, -2.3333332538604736, 2.3333332538604736, 3.5, 0), 0,
                "true division");
    /* 2 ** -1 truncates to 0; (-1) ** -3 = -1; 2 ** 31 wraps. */
    expect_vals(&out[2], 7, DV(1024, 1, -8, 0, -1, 1, -2147483648.0), 0, "int pow");
    free_all(out, 3);
    free_all(args, 4);
}

static void test_int_div_by_zero_is_inf(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(2));
    output(g, "div", op2(g, OP_div, TC_F32, a, cnst_i(g, TC_I64, 0)));
    ref_tensor args[1] = {tens(TC_I32, 1, I64(2), DV(1, 0))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 2, DV(INFINITY, NAN), 0, "i32 / 0");
    free_all(out, 1);
    free_all(args, 1);
}

/* docs/semantics.md, "Edges": integer % 0 is 0 (as the kernels' tc_mod),
 * and so is integer 0 ** negative; other negative powers truncate. */
static void test_int_mod_by_zero_is_zero(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(3));
    gnode *b = cinput(g, "b", TC_I32, 1, I64(3));
    output(g, "m", op2(g, OP_mod, TC_I32, a, b));
    ref_tensor args[2] = {tens(TC_I32, 1, I64(3), DV(5, -7, -2147483648.0)),
                          tens(TC_I32, 1, I64(3), DV(0, 0, -1))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 3, DV(0, 0, 0), 0, "i32 % 0 and INT_MIN % -1");
    free_all(out, 1);
    free_all(args, 2);
}

static void test_int_zero_to_negative_power(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I64, 1, I64(5));
    output(g, "p", op2(g, OP_pow, TC_I64, a, cnst_i(g, TC_I64, -3)));
    ref_tensor args[1] = {tens(TC_I64, 1, I64(5), DV(0, 1, -1, 2, -2))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 5, DV(0, 1, -1, 0, 0), 0, "i64 ** -3");
    free_all(out, 1);
    free_all(args, 1);
}

/* Floats to integers saturate, NaN 0 (PTX cvt.rzi); integers to integers wrap. */
static void test_cast_saturates(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F32, 1, I64(7));
    gnode *i = cinput(g, "i", TC_I64, 1, I64(2));
    output(g, "i32", op1(g, OP_cast, TC_I32, x));
    output(g, "i64", op1(g, OP_cast, TC_I64, x));
    output(g, "wrap", op1(g, OP_cast, TC_I32, i));
    ref_tensor args[2] = {tens(TC_F32, 1, I64(7), DV(NAN, INFINITY, -INFINITY, 3e9, -3e9, 1e30, -2.9)),
                          tens(TC_I64, 1, I64(2), DV(3000000000.0, -3000000000.0))};
    ref_tensor out[3];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 7, DV(0, 2147483647, -2147483648.0, 2147483647, -2147483648.0, 2147483647, -2),
                0, "f32 -> i32");
    expect_ints(&out[1], 7, I64(0, INT64_MAX, INT64_MIN, 3000000000, -3000000000, INT64_MAX, -2),
                "f32 -> i64");
    expect_vals(&out[2], 2, DV(-1294967296, 1294967296), 0, "i64 -> i32 wraps");
    free_all(out, 3);
    free_all(args, 2);
}

/* --- integers carried exactly (issue 11: i64 near INT64_MAX came back as
 * INT64_MIN when values were doubles) -------------------------------------- */

/* INT64_MAX, INT64_MIN and INT64_MAX - 1 .. INT64_MAX - 512 (none of which but
 * the ends has a double) through the input, a copy, x + 0, max, a view and a
 * concat: every one unchanged. */
static void test_i64_near_max_round_trip(void **state)
{
    G *g = *state;
    enum { N = 514 };
    int64_t v[N];
    v[0] = INT64_MAX;
    v[1] = INT64_MIN;
    for (int i = 2; i < N; i++)
        v[i] = INT64_MAX - (i - 1);
    gnode *x = cinput(g, "x", TC_I64, 1, I64(N));
    output(g, "x", x);
    output(g, "copy", op1(g, OP_copy, TC_I64, x));
    output(g, "plus0", op2(g, OP_add, TC_I64, x, cnst_i(g, TC_I64, 0)));
    output(g, "max", op2(g, OP_max, TC_I64, x, cnst_i(g, TC_I64, INT64_MIN)));
    output(g, "min", op2(g, OP_min, TC_I64, x, cnst_i(g, TC_I64, INT64_MAX)));
    gnode *lo = cview(g, x, 1, I64(N / 2), I64(1), 0), *hi = cview(g, x, 1, I64(N / 2), I64(1), N / 2);
    gnode *cat = node(g, OP_concat, TC_I64, 1, cshape(g, 1, I64(N)), (gnode *[]){lo, hi}, 2);
    cat->a.axis = 0;
    output(g, "cat", cat);
    output(g, "i64", op1(g, OP_cast, TC_I64, op1(g, OP_cast, TC_I32, x))); /* wraps, both ways */
    ref_tensor args[1] = {tens_i(TC_I64, 1, I64(N), v)};
    ref_tensor out[7];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    const char *what[6] = {"input", "copy", "x + 0", "max", "min", "concat"};
    for (int k = 0; k < 6; k++) {
        expect_shape(&out[k], TC_I64, 1, I64(N));
        expect_ints(&out[k], N, v, what[k]);
    }
    int64_t low[N]; /* the low 32 bits, sign-extended */
    for (int i = 0; i < N; i++)
        low[i] = (int32_t)(uint32_t)(uint64_t)v[i];
    assert_int_equal(low[0], -1);
    expect_ints(&out[6], N, low, "i64 -> i32 -> i64");
    free_all(out, 7);
    free_all(args, 1);
}

static void test_i64_overflow_wraps(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_I64, 1, I64(3));
    output(g, "add", op2(g, OP_add, TC_I64, x, cnst_i(g, TC_I64, 1)));
    output(g, "sub", op2(g, OP_sub, TC_I64, x, cnst_i(g, TC_I64, 1)));
    output(g, "mul", op2(g, OP_mul, TC_I64, x, cnst_i(g, TC_I64, 2)));
    output(g, "neg", op1(g, OP_neg, TC_I64, x));
    output(g, "abs", op1(g, OP_abs, TC_I64, x));
    output(g, "eq", op2(g, OP_eq, TC_BOOL, x, cnst_i(g, TC_I64, INT64_MAX - 1)));
    output(g, "lt", op2(g, OP_lt, TC_BOOL, x, cnst_i(g, TC_I64, INT64_MAX)));
    output(g, "clamp", opn(g, OP_clamp, TC_I64, 3,
                           (gnode *[]){x, cnst_i(g, TC_I64, INT64_MIN + 1), cnst_i(g, TC_I64, INT64_MAX - 1)}));
    ref_tensor args[1] = {tens_i(TC_I64, 1, I64(3), I64(INT64_MAX, INT64_MIN, INT64_MAX - 1))};
    ref_tensor out[8];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_ints(&out[0], 3, I64(INT64_MIN, INT64_MIN + 1, INT64_MAX), "i64 + 1");
    expect_ints(&out[1], 3, I64(INT64_MAX - 1, INT64_MAX, INT64_MAX - 2), "i64 - 1");
    expect_ints(&out[2], 3, I64(-2, 0, -4), "i64 * 2");
    expect_ints(&out[3], 3, I64(INT64_MIN + 1, INT64_MIN, INT64_MIN + 2), "-i64");
    expect_ints(&out[4], 3, I64(INT64_MAX, INT64_MIN, INT64_MAX - 1), "abs i64");
    /* as doubles all three would be -2^63 or 2^63, and equal */
    expect_ints(&out[5], 3, I64(0, 0, 1), "i64 == INT64_MAX - 1");
    expect_ints(&out[6], 3, I64(0, 1, 1), "i64 < INT64_MAX");
    expect_ints(&out[7], 3, I64(INT64_MAX - 1, INT64_MIN + 1, INT64_MAX - 1), "clamp i64");
    free_all(out, 8);
    free_all(args, 1);
}

static void test_i64_reductions_exact(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_I64, 2, I64(2, 3));
    gnode *b = cinput(g, "b", TC_BOOL, 1, I64(3));
    output(g, "sum", reduce(g, OP_sum, TC_I64, x, 1, (const int[]){1}, false, 0));
    output(g, "max", reduce(g, OP_rmax, TC_I64, x, 1, (const int[]){1}, false, 0));
    output(g, "argmax", reduce(g, OP_argmax, TC_I64, x, 1, (const int[]){1}, false, 0));
    output(g, "argmin", reduce(g, OP_argmin, TC_I64, x, 1, (const int[]){1}, false, 0));
    output(g, "prod", reduce(g, OP_prod, TC_I64, x, 1, (const int[]){1}, false, 0));
    output(g, "count", reduce(g, OP_sum, TC_I64, b, 1, (const int[]){0}, false, 0));
    ref_tensor args[2] = {tens_i(TC_I64, 2, I64(2, 3),
                                 I64(INT64_MAX - 1, INT64_MAX, 1,   /* sums wrap */
                                     INT64_MIN + 1, INT64_MIN, -1)),
                          tens_i(TC_BOOL, 1, I64(3), I64(1, 0, 1))};
    ref_tensor out[6];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    /* (2^63 - 2) + (2^63 - 1) + 1 = 2^64 - 2 = -2; (-2^63 + 1) - 2^63 - 1 = -2^64 = 0 */
    expect_ints(&out[0], 2, I64(-2, 0), "i64 sum wraps");
    expect_ints(&out[1], 2, I64(INT64_MAX, -1), "i64 max");
    expect_ints(&out[2], 2, I64(1, 2), "i64 argmax (INT64_MAX - 1 and INT64_MAX are one double)");
    expect_ints(&out[3], 2, I64(2, 1), "i64 argmin");
    /* (2^63 - 2)(2^63 - 1) = 2^126 - 3 * 2^63 + 2 = 2^63 + 2 mod 2^64;
     * (1 - 2^63)(-2^63)(-1) = 2^63 - 2^126 = 2^63 mod 2^64 */
    expect_ints(&out[4], 2, I64(INT64_MIN + 2, INT64_MIN), "i64 prod wraps");
    expect_ints(&out[5], 1, I64(2), "sum of bool");
    free_all(out, 6);
    free_all(args, 2);
}

/* i64 and i32 to f32/f64 round once to nearest even (as the kernels' cvt.rn),
 * and back saturate (cvt.rzi): INT64_MAX -> 2^63 -> INT64_MAX. */
static void test_int_float_casts_both_ways(void **state)
{
    G *g = *state;
    gnode *i = cinput(g, "i", TC_I64, 1, I64(4));
    gnode *j = cinput(g, "j", TC_I32, 1, I64(3));
    gnode *f32 = op1(g, OP_cast, TC_F32, i), *f64 = op1(g, OP_cast, TC_F64, i);
    gnode *j32 = op1(g, OP_cast, TC_F32, j), *j64 = op1(g, OP_cast, TC_F64, j);
    output(g, "f32", f32);
    output(g, "f64", f64);
    output(g, "back32", op1(g, OP_cast, TC_I64, f32));
    output(g, "back64", op1(g, OP_cast, TC_I64, f64));
    output(g, "jf32", j32);
    output(g, "jback32", op1(g, OP_cast, TC_I32, j32));
    output(g, "jback64", op1(g, OP_cast, TC_I32, j64));
    /* 2^60 + 2^36 + 1: in one rounding to f32 (24 bits) above the tie, so up
     * to 2^60 + 2^37; through a double it would first lose the 1 and tie to
     * even, 2^60. */
    int64_t odd = ((int64_t)1 << 60) + ((int64_t)1 << 36) + 1;
    ref_tensor args[2] = {tens_i(TC_I64, 1, I64(4), I64(INT64_MAX, INT64_MIN, odd, INT64_MAX - 512)),
                          tens_i(TC_I32, 1, I64(3), I64(INT32_MAX, INT32_MIN, 16777217))};
    ref_tensor out[7];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    double p63 = 9223372036854775808.0, p60 = 1152921504606846976.0;
    expect_vals(&out[0], 4, DV(p63, -p63, p60 + 137438953472.0, p63), 0, "i64 -> f32");
    /* 2^63 - 513 is nearer 2^63 - 1024 (doubles there are 1024 apart) */
    expect_vals(&out[1], 4, DV(p63, -p63, p60 + 68719476736.0, p63 - 1024), 0, "i64 -> f64");
    int64_t up = ((int64_t)1 << 60) + ((int64_t)1 << 37), mid = ((int64_t)1 << 60) + ((int64_t)1 << 36);
    expect_ints(&out[2], 4, I64(INT64_MAX, INT64_MIN, up, INT64_MAX), "i64 -> f32 -> i64 saturates");
    expect_ints(&out[3], 4, I64(INT64_MAX, INT64_MIN, mid, INT64_MAX - 1023),
                "i64 -> f64 -> i64 saturates");
    expect_vals(&out[4], 3, DV(2147483648.0, -2147483648.0, 16777216), 0, "i32 -> f32");
    expect_ints(&out[5], 3, I64(INT32_MAX, INT32_MIN, 16777216), "i32 -> f32 -> i32 saturates");
    expect_ints(&out[6], 3, I64(INT32_MAX, INT32_MIN, 16777217), "i32 -> f64 -> i32 exact");
    free_all(out, 7);
    free_all(args, 2);
}

/* ref_setf/ref_seti convert as a cast: the lane follows the dtype. */
static void test_lanes(void **state)
{
    (void)state;
    ref_tensor t;
    assert_true(ref_alloc(&t, TC_I64, 1, I64(4)));
    assert_null(t.data);
    ref_setf(&t, 0, 1e30);
    ref_setf(&t, 1, NAN);
    ref_setf(&t, 2, -2.9);
    ref_seti(&t, 3, INT64_MAX);
    expect_ints(&t, 4, I64(INT64_MAX, 0, -2, INT64_MAX), "i64 lane");
    assert_true(ref_getf(&t, 3) == 9223372036854775808.0);
    ref_free(&t);
    assert_true(ref_alloc(&t, TC_BOOL, 0, NULL));
    ref_setf(&t, 0, NAN); /* NaN is true */
    assert_int_equal(ref_geti(&t, 0), 1);
    ref_free(&t);
    assert_true(ref_alloc(&t, TC_F32, 1, I64(1)));
    assert_null(t.idata);
    ref_seti(&t, 0, INT64_MAX);
    assert_true(t.data[0] == 9223372036854775808.0);
    assert_int_equal(ref_geti(&t, 0), INT64_MAX);
    ref_free(&t);
}

/* --- cast ---------------------------------------------------------------------------- */

static void test_cast(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 1, I64(4));
    gnode *i = cinput(g, "i", TC_I64, 1, I64(2));
    output(g, "i32", op1(g, OP_cast, TC_I32, x));
    output(g, "bool", op1(g, OP_cast, TC_BOOL, x));
    output(g, "f16", op1(g, OP_cast, TC_F16, x));
    output(g, "f32", op1(g, OP_cast, TC_F32, i));
    ref_tensor args[2] = {tens(TC_F64, 1, I64(4), DV(2.7, -2.7, 3e9, 0.1)),
                          tens(TC_I64, 1, I64(2), DV(16777217, -3))};
    ref_tensor out[4];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_I32, 1, I64(4));
    /* toward zero; 3e9 saturates */
    expect_vals(&out[0], 4, DV(2, -2, 2147483647, 0), 0, "f64 -> i32");
    expect_vals(&out[1], 4, DV(1, 1, 1, 1), 0, "f64 -> bool");
    expect_vals(&out[2], 4, DV(2.69921875, -2.69921875, INFINITY, 0.0999755859375), 0, "f64 -> f16");
    expect_vals(&out[3], 2, DV(16777216, -3), 0, "i64 -> f32");
    free_all(out, 4);
    free_all(args, 2);
}

/* --- reductions ---------------------------------------------------------------------- */

/* x[i, j, k] = 12 i + 4 j + k over [2, 3, 4]. */
static ref_tensor iota234(void)
{
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    return tens(TC_F64, 3, I64(2, 3, 4), v);
}

static void test_reduce_axes_keepdim(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 3, I64(2, 3, 4));
    output(g, "sum02", reduce(g, OP_sum, TC_F64, x, 2, (int[]){0, 2}, false, 0));
    output(g, "sum02k", reduce(g, OP_sum, TC_F64, x, 2, (int[]){0, 2}, true, 0));
    output(g, "sumall", reduce(g, OP_sum, TC_F64, x, 3, (int[]){0, 1, 2}, false, 0));
    output(g, "mean2", reduce(g, OP_mean, TC_F64, x, 1, (int[]){2}, false, 0));
    output(g, "max1k", reduce(g, OP_rmax, TC_F64, x, 1, (int[]){1}, true, 0));
    output(g, "min01", reduce(g, OP_rmin, TC_F64, x, 2, (int[]){0, 1}, false, 0));
    output(g, "argmax12", reduce(g, OP_argmax, TC_I64, x, 2, (int[]){1, 2}, false, 0));
    output(g, "mean0k", reduce(g, OP_mean, TC_F64, x, 1, (int[]){0}, true, 0));
    ref_tensor args[1] = {iota234()};
    ref_tensor out[8];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    /* sum over i, k of 12i + 4j + k = 48 + 32j + 12 */
    expect_shape(&out[0], TC_F64, 1, I64(3));
    expect_vals(&out[0], 3, DV(60, 92, 124), 0, "sum (0, 2)");
    expect_shape(&out[1], TC_F64, 3, I64(1, 3, 1));
    expect_vals(&out[1], 3, DV(60, 92, 124), 0, "sum (0, 2) keepdim");
    expect_shape(&out[2], TC_F64, 0, NULL);
    expect_vals(&out[2], 1, DV(276), 0, "sum all");
    expect_shape(&out[3], TC_F64, 2, I64(2, 3));
    expect_vals(&out[3], 6, DV(1.5, 5.5, 9.5, 13.5, 17.5, 21.5), 0, "mean 2");
    expect_shape(&out[4], TC_F64, 3, I64(2, 1, 4));
    expect_vals(&out[4], 8, DV(8, 9, 10, 11, 20, 21, 22, 23), 0, "max 1 keepdim");
    expect_shape(&out[5], TC_F64, 1, I64(4));
    expect_vals(&out[5], 4, DV(0, 1, 2, 3), 0, "min (0, 1)");
    expect_shape(&out[6], TC_I64, 1, I64(2));
    expect_vals(&out[6], 2, DV(11, 11), 0, "argmax (1, 2)");
    expect_shape(&out[7], TC_F64, 3, I64(1, 3, 4));
    expect_vals(&out[7], 12, DV(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), 0, "mean 0 keepdim");
    free_all(out, 8);
    free_all(args, 1);
}

static void test_prod(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 2, I64(2, 2));
    output(g, "p1", reduce(g, OP_prod, TC_F64, x, 1, (int[]){1}, false, 0));
    output(g, "p0k", reduce(g, OP_prod, TC_F64, x, 1, (int[]){0}, true, 0));
    ref_tensor args[1] = {tens(TC_F64, 2, I64(2, 2), DV(1, 2, 3, 4))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 2, DV(2, 12), 0, "prod 1");
    expect_shape(&out[1], TC_F64, 2, I64(1, 2));
    expect_vals(&out[1], 2, DV(3, 8), 0, "prod 0 keepdim");
    free_all(out, 2);
    free_all(args, 1);
}

/* argmax over (0, 2): the index is into the flattened (i, k) pairs, i * 2 + k. */
static void test_argmax_ties_multi_axis(void **state)
{
    G *g = *state;
    gnode *w = cinput(g, "w", TC_F64, 3, I64(2, 3, 2));
    output(g, "amax", reduce(g, OP_argmax, TC_I64, w, 2, (int[]){0, 2}, true, 0));
    output(g, "amin", reduce(g, OP_argmin, TC_I64, w, 2, (int[]){0, 2}, false, 0));
    /* j = 0: (1, 2, 7, 0); j = 1: (9, 3, 9, 9); j = 2: (4, 4, 4, 8) */
    ref_tensor args[1] = {tens(TC_F64, 3, I64(2, 3, 2), DV(1, 2, 9, 3, 4, 4, 7, 0, 9, 9, 4, 8))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_I64, 3, I64(1, 3, 1));
    expect_vals(&out[0], 3, DV(2, 0, 3), 0, "argmax first of ties");
    expect_shape(&out[1], TC_I64, 1, I64(3));
    expect_vals(&out[1], 3, DV(3, 1, 0), 0, "argmin first of ties");
    free_all(out, 2);
    free_all(args, 1);
}

static void test_reduce_nan(void **state)
{
    G *g = *state;
    gnode *u = cinput(g, "u", TC_F64, 1, I64(4));
    int ax[] = {0};
    output(g, "max", reduce(g, OP_rmax, TC_F64, u, 1, ax, false, 0));
    output(g, "min", reduce(g, OP_rmin, TC_F64, u, 1, ax, false, 0));
    output(g, "argmax", reduce(g, OP_argmax, TC_I64, u, 1, ax, false, 0));
    output(g, "argmin", reduce(g, OP_argmin, TC_I64, u, 1, ax, false, 0));
    output(g, "sum", reduce(g, OP_sum, TC_F64, u, 1, ax, false, 0));
    ref_tensor args[1] = {tens(TC_F64, 1, I64(4), DV(1, NAN, 5, NAN))};
    ref_tensor out[5];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 1, DV(NAN), 0, "max with NaN");
    expect_vals(&out[1], 1, DV(NAN), 0, "min with NaN");
    expect_vals(&out[2], 1, DV(1), 0, "argmax: first NaN");
    expect_vals(&out[3], 1, DV(1), 0, "argmin: first NaN");
    expect_vals(&out[4], 1, DV(NAN), 0, "sum with NaN");
    free_all(out, 5);
    free_all(args, 1);
}

static void test_var_std(void **state)
{
    G *g = *state;
    gnode *v = cinput(g, "v", TC_F64, 2, I64(2, 4));
    gnode *one = cinput(g, "one", TC_F64, 2, I64(1, 3));
    int ax[] = {1};
    output(g, "var0", reduce(g, OP_var, TC_F64, v, 1, ax, false, 0));
    output(g, "var1", reduce(g, OP_var, TC_F64, v, 1, ax, true, 1));
    output(g, "std0", reduce(g, OP_std, TC_F64, v, 1, ax, false, 0));
    output(g, "std1", reduce(g, OP_std, TC_F64, v, 1, ax, false, 1));
    output(g, "var_n1", reduce(g, OP_var, TC_F64, one, 1, (int[]){0}, false, 1)); /* n = 1 */
    output(g, "var_c3", reduce(g, OP_var, TC_F64, one, 1, ax, false, 3));        /* n = 3 */
    gnode *v32 = cinput(g, "v32", TC_F32, 2, I64(2, 4));
    output(g, "var_f32", reduce(g, OP_var, TC_F32, v32, 1, ax, false, 1));
    /* A large offset: a one-pass E[x^2] - E[x]^2 would lose everything. */
    gnode *big = cinput(g, "big", TC_F64, 1, I64(3));
    output(g, "var_big", reduce(g, OP_var, TC_F64, big, 1, (int[]){0}, false, 1));
    ref_tensor args[4] = {tens(TC_F64, 2, I64(2, 4), DV(1, 2, 3, 4, 2, 2, 2, 2)),
                          tens(TC_F64, 2, I64(1, 3), DV(1, 2, 6)),
                          tens(TC_F32, 2, I64(2, 4), DV(1, 2, 3, 4, 2, 2, 2, 2)),
                          tens(TC_F64, 1, I64(3), DV(1e9 + 1, 1e9 + 2, 1e9 + 3))};
    ref_tensor out[8];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 2, DV(1.25, 0), 0, "var correction 0");
    expect_shape(&out[1], TC_F64, 2, I64(2, 1));
    expect_vals(&out[1], 2, DV(1.6666666666666667, 0), 1e-16, "var correction 1");
    expect_vals(&out[2], 2, DV(1.118033988749895, 0), 1e-16, "std correction 0");
    expect_vals(&out[3], 2, DV(1.2909944487358056, 0), 1e-16, "std correction 1");
    /* n - correction = 0: 0/0 = NaN for each column of [1, 3] over axis 0 */
    expect_vals(&out[4], 3, DV(NAN, NAN, NAN), 0, "var n = 1");
    /* mean 3, squared deviations 4 + 1 + 9 = 14, over max(3 - 3, 0): inf */
    expect_vals(&out[5], 1, DV(INFINITY), 0, "var correction = n");
    expect_vals(&out[6], 2, DV(1.6666666269302368, 0), 0, "var f32");
    expect_vals(&out[7], 1, DV(1), 0, "var of 1e9 + (1, 2, 3)");
    free_all(out, 8);
    free_all(args, 4);
}

static gnode *scan(G *g, op_id op, tc_dtype dt, gnode *x, int axis, bool reverse)
{
    gnode *n = op1(g, op, dt, x);
    n->a.scan.axis = axis;
    n->a.scan.reverse = reverse;
    return n;
}

/* Scans: NaN and inf as PyTorch has them, reverse, along axis 0, f16
 * outputs rounded per element from an unrounded carry, i32 sums in i64. */
static void test_scans(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 2, I64(2, 4));
    gnode *h = cinput(g, "h", TC_F16, 2, I64(2, 4));
    gnode *i = cinput(g, "i", TC_I32, 2, I64(2, 4));
    output(g, "s", scan(g, OP_cumsum, TC_F64, x, 1, false));
    output(g, "p", scan(g, OP_cumprod, TC_F64, x, 0, false));
    output(g, "hi", scan(g, OP_cummax, TC_F64, x, 1, false));
    output(g, "lo", scan(g, OP_cummin, TC_F64, x, 1, true));
    output(g, "l", scan(g, OP_logcumsumexp, TC_F64, x, 1, false));
    output(g, "hs", scan(g, OP_cumsum, TC_F16, h, 1, false));
    output(g, "is", scan(g, OP_cumsum, TC_I64, i, 1, true));
    output(g, "im", scan(g, OP_cummax, TC_I32, i, 0, false));
    const double inf = INFINITY;
    ref_tensor args[3] = {tens(TC_F64, 2, I64(2, 4), DV(1, NAN, 2, -1, -inf, -inf, 3, inf)),
                          tens(TC_F16, 2, I64(2, 4), DV(1, 2048, 1, 1, 0.5, 0.25, -0.75, 3)),
                          tens_i(TC_I32, 2, I64(2, 4), I64(1, 2, 3, 2147483647, -5, 0, 7, -2))};
    ref_tensor out[8];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 8, DV(1, NAN, NAN, NAN, -inf, -inf, -inf, NAN), 0, "cumsum");
    expect_vals(&out[1], 8, DV(1, NAN, 2, -1, -inf, NAN, 6, -inf), 0, "cumprod axis 0");
    expect_vals(&out[2], 8, DV(1, NAN, NAN, NAN, -inf, -inf, 3, inf), 0, "cummax");
    expect_vals(&out[3], 8, DV(NAN, NAN, -1, -1, -inf, -inf, 3, inf), 0, "cummin reverse");
    expect_vals(&out[4], 8, DV(1, NAN, NAN, NAN, -inf, -inf, 3, inf), 0, "logcumsumexp");
    /* 2049 and 2051 are f16 ties (to even: 2048, 2052); a rounded carry
     * would give 2048, 2048, 2048 */
    expect_vals(&out[5], 8, DV(1, 2048, 2050, 2052, 0.5, 0.75, 0, 3), 0, "cumsum f16");
    expect_ints(&out[6], 8, I64(2147483653, 2147483652, 2147483650, 2147483647, 0, 5, 5, -2),
                "cumsum i32 reverse (i64)");
    expect_ints(&out[7], 8, I64(1, 2, 3, 2147483647, 1, 2, 7, 2147483647), "cummax i32 axis 0");
    free_all(out, 8);
    free_all(args, 3);
}

static void test_logsumexp(void **state)
{
    G *g = *state;
    gnode *l = cinput(g, "l", TC_F64, 2, I64(5, 3));
    gnode *l32 = cinput(g, "l32", TC_F32, 2, I64(5, 3));
    output(g, "lse", reduce(g, OP_logsumexp, TC_F64, l, 1, (int[]){1}, false, 0));
    output(g, "lse32", reduce(g, OP_logsumexp, TC_F32, l32, 1, (int[]){1}, true, 0));
    const double *rows = DV(1000, 1000, -INFINITY, /* log(2 e^1000) */
                            1, 2, 3,
                            -INFINITY, -INFINITY, -INFINITY,
                            INFINITY, 1, 2,
                            NAN, 1, 2);
    ref_tensor args[2] = {tens(TC_F64, 2, I64(5, 3), rows), tens(TC_F32, 2, I64(5, 3), rows)};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 5, DV(1000.6931471805599, 3.40760596444438, -INFINITY, INFINITY, NAN), LIBM,
                "logsumexp");
    expect_shape(&out[1], TC_F32, 2, I64(5, 1));
    expect_vals(&out[1], 5, DV(1000.6931762695312, 3.4076058864593506, -INFINITY, INFINITY, NAN), 0,
                "logsumexp f32");
    free_all(out, 2);
    free_all(args, 2);
}

static void test_int_reductions(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_I32, 1, I64(3));
    gnode *b = cinput(g, "b", TC_BOOL, 1, I64(4));
    gnode *p = cinput(g, "p", TC_I64, 1, I64(2));
    int ax[] = {0};
    output(g, "sum", reduce(g, OP_sum, TC_I64, a, 1, ax, false, 0));
    output(g, "count", reduce(g, OP_sum, TC_I64, b, 1, ax, false, 0));
    output(g, "prod", reduce(g, OP_prod, TC_I64, p, 1, ax, false, 0));
    output(g, "mean", reduce(g, OP_mean, TC_F32, a, 1, ax, false, 0));
    output(g, "max", reduce(g, OP_rmax, TC_I32, a, 1, ax, false, 0));
    ref_tensor args[3] = {tens(TC_I32, 1, I64(3), DV(2147483647, 2147483647, 3)),
                          tens(TC_BOOL, 1, I64(4), DV(1, 0, 1, 1)),
                          tens(TC_I64, 1, I64(2), DV(4294967296.0, -4294967296.0))};
    ref_tensor out[5];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_I64, 0, NULL);
    expect_vals(&out[0], 1, DV(4294967297.0), 0, "i32 sum in i64");
    expect_vals(&out[1], 1, DV(3), 0, "bool count");
    expect_vals(&out[2], 1, DV(0), 0, "i64 prod wraps (-2^64 = 0)");
    expect_shape(&out[3], TC_F32, 0, NULL);
    expect_vals(&out[3], 1, DV(1431655808 /* 4294967297 / 3 to f32 */), 0, "i32 mean in f32");
    expect_vals(&out[4], 1, DV(2147483647), 0, "i32 max");
    free_all(out, 5);
    free_all(args, 3);
}

/* Reductions accumulate wide and round once: f16 2048 + 1 + 1 = 2050, where
 * adding in f16 would stay at 2048. */
static void test_f16_sum_accumulates_wide(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F16, 1, I64(3));
    output(g, "sum", reduce(g, OP_sum, TC_F16, x, 1, (int[]){0}, false, 0));
    ref_tensor args[1] = {tens(TC_F16, 1, I64(3), DV(2048, 1, 1))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F16, 0, NULL);
    expect_vals(&out[0], 1, DV(2050), 0, "f16 sum");
    free_all(out, 1);
    free_all(args, 1);
}

static void test_empty_reductions(void **state)
{
    G *g = *state;
    gnode *e = cinput(g, "e", TC_F64, 2, I64(2, 0));
    int ax[] = {1};
    output(g, "sum", reduce(g, OP_sum, TC_F64, e, 1, ax, false, 0));
    output(g, "prod", reduce(g, OP_prod, TC_F64, e, 1, ax, false, 0));
    output(g, "mean", reduce(g, OP_mean, TC_F64, e, 1, ax, false, 0));
    output(g, "lse", reduce(g, OP_logsumexp, TC_F64, e, 1, ax, false, 0));
    output(g, "var", reduce(g, OP_var, TC_F64, e, 1, ax, false, 1));
    output(g, "max0", reduce(g, OP_rmax, TC_F64, e, 1, (int[]){0}, false, 0)); /* empty result: fine */
    ref_tensor args[1] = {tens(TC_F64, 2, I64(2, 0), DV(0))};
    ref_tensor out[6];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 2, DV(0, 0), 0, "empty sum");
    expect_vals(&out[1], 2, DV(1, 1), 0, "empty prod");
    expect_vals(&out[2], 2, DV(NAN, NAN), 0, "empty mean");
    expect_vals(&out[3], 2, DV(-INFINITY, -INFINITY), 0, "empty logsumexp");
    expect_vals(&out[4], 2, DV(NAN, NAN), 0, "empty var");
    expect_shape(&out[5], TC_F64, 1, I64(0));
    free_all(out, 6);
    free_all(args, 1);
}

static void test_empty_max_is_an_error(void **state)
{
    const op_id ops[] = {OP_rmax, OP_rmin, OP_argmax, OP_argmin};
    const char *msgs[] = {"max of an empty dimension", "min of an empty dimension",
                          "argmax of an empty dimension", "argmin of an empty dimension"};
    for (int i = 0; i < 4; i++) {
        G *g;
        setup((void **)&g);
        gnode *e = cinput(g, "e", TC_F64, 2, I64(2, 0));
        output(g, "ok", op1(g, OP_neg, TC_F64, e));
        gnode *r = reduce(g, ops[i], ops[i] == OP_rmax || ops[i] == OP_rmin ? TC_F64 : TC_I64, e, 1,
                          (int[]){1}, false, 0);
        output(g, "bad", r);
        ref_tensor args[1] = {tens(TC_F64, 2, I64(2, 0), DV(0))};
        ref_tensor out[2];
        assert_int_equal(ref_run(g->f, NULL, 0, args, out, &g->d), TC_ERR_INVALID_ARG);
        assert_string_equal(g->d.brief, msgs[i]);
        assert_int_equal(g->d.loc.line, r->id + 1);
        assert_null(out[0].data);
        assert_null(out[0].idata);
        free_all(args, 1);
        teardown((void **)&g);
    }
}

/* --- views, copy, concat ----------------------------------------------------------- */

static void test_views(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 2, I64(2, 3));
    gnode *y = cinput(g, "y", TC_F64, 1, I64(3));
    gnode *t = cview(g, x, 2, I64(3, 2), I64(1, 3), 0);        /* x.T */
    gnode *s = cview(g, x, 2, I64(1, 2), I64(3, 2), 3);        /* x[1:, ::2] */
    gnode *last = cview(g, x, 0, NULL, NULL, 5);               /* x[-1, -1] */
    gnode *b = cview(g, y, 2, I64(2, 3), I64(0, 1), 0);        /* broadcast_to(y, [2, 3]) */
    gnode *sum = op2(g, OP_add, TC_F64, x, b);                 /* x + y */
    gnode *col = cview(g, x, 2, I64(2, 1), I64(3, 1), 1);      /* x[:, 1:2] */
    output(g, "t", t);
    output(g, "s", s);
    output(g, "last", last);
    output(g, "sum", sum);
    output(g, "col", col);
    ref_tensor args[2] = {tens(TC_F64, 2, I64(2, 3), DV(0, 1, 2, 3, 4, 5)),
                          tens(TC_F64, 1, I64(3), DV(10, 20, 30))};
    ref_tensor out[5];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F64, 2, I64(3, 2));
    expect_vals(&out[0], 6, DV(0, 3, 1, 4, 2, 5), 0, "transpose");
    expect_shape(&out[1], TC_F64, 2, I64(1, 2));
    expect_vals(&out[1], 2, DV(3, 5), 0, "slice with offset and step");
    expect_shape(&out[2], TC_F64, 0, NULL);
    expect_vals(&out[2], 1, DV(5), 0, "x[-1, -1]");
    expect_vals(&out[3], 6, DV(10, 21, 32, 13, 24, 35), 0, "broadcast stride 0");
    expect_vals(&out[4], 2, DV(1, 4), 0, "column");
    free_all(out, 5);
    free_all(args, 2);
}

static void test_view_symbolic(void **state)
{
    G *g = *state;
    const tc_dim *N = S(g, "N"), *D = S(g, "D");
    gnode *x = param(g, "x", TC_F64, 2, (const tc_dim *[]){N, D}, false);
    /* x.T: shape [D, N], strides (1, D) */
    gnode *t = view(g, x, 2, (const tc_dim *[]){D, N}, (const tc_dim *[]){K(g, 1), D}, K(g, 0));
    /* x[1:, 1:]: shape [N - 1, D - 1], strides (D, 1), offset D + 1 */
    gnode *s = view(g, x, 2, (const tc_dim *[]){dim_sub(g->dc, N, K(g, 1)), dim_sub(g->dc, D, K(g, 1))},
                    (const tc_dim *[]){D, K(g, 1)}, dim_add(g->dc, D, K(g, 1)));
    output(g, "t", t);
    output(g, "s", s);
    tc_dimbind b[] = {{"N", 2}, {"D", 3}};
    ref_tensor args[1] = {tens(TC_F64, 2, I64(2, 3), DV(0, 1, 2, 3, 4, 5))};
    ref_tensor out[2];
    assert_int_equal(run(g, b, 2, args, out), TC_OK);
    expect_shape(&out[0], TC_F64, 2, I64(3, 2));
    expect_vals(&out[0], 6, DV(0, 3, 1, 4, 2, 5), 0, "symbolic transpose");
    expect_shape(&out[1], TC_F64, 2, I64(1, 2));
    expect_vals(&out[1], 2, DV(4, 5), 0, "symbolic slice");
    free_all(out, 2);
    free_all(args, 1);
}

static void test_view_out_of_bounds_is_internal(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 1, I64(4));
    output(g, "v", cview(g, x, 1, I64(3), I64(2), 1)); /* reads 1, 3, 5: 5 is past the end */
    ref_tensor args[1] = {tens(TC_F64, 1, I64(4), DV(0, 1, 2, 3))};
    ref_tensor out[1];
    assert_int_equal(ref_run(g->f, NULL, 0, args, out, &g->d), TC_ERR_INTERNAL);
    assert_non_null(strstr(g->d.msg, "reads element 5"));
    assert_null(out[0].data);
    assert_null(out[0].idata);
    free_all(args, 1);
}

static void test_copy_then_reshape(void **state)
{
    G *g = *state;
    gnode *x = cinput(g, "x", TC_F64, 2, I64(2, 3));
    gnode *t = cview(g, x, 2, I64(3, 2), I64(1, 3), 0);
    gnode *c = op1(g, OP_copy, TC_F64, t);
    gnode *r = cview(g, c, 1, I64(6), I64(1), 0); /* reshape(x.T, 6) */
    output(g, "r", r);
    ref_tensor args[1] = {tens(TC_F64, 2, I64(2, 3), DV(0, 1, 2, 3, 4, 5))};
    ref_tensor out[1];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F64, 1, I64(6));
    expect_vals(&out[0], 6, DV(0, 3, 1, 4, 2, 5), 0, "copy + reshape");
    free_all(out, 1);
    free_all(args, 1);
}

static gnode *concat(G *g, int axis, int nin, gnode *const *in, int rank, const int64_t *shape)
{
    gnode *n = node(g, OP_concat, in[0]->dtype, rank, cshape(g, rank, shape), in, nin);
    n->a.axis = axis;
    return n;
}

static void test_concat(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_F64, 2, I64(2, 2));
    gnode *b = cinput(g, "b", TC_F64, 2, I64(2, 1));
    gnode *p = cinput(g, "p", TC_F64, 2, I64(1, 2));
    gnode *q = cinput(g, "q", TC_F64, 2, I64(0, 2));
    output(g, "ab", concat(g, 1, 2, (gnode *[]){a, b}, 2, I64(2, 3)));
    output(g, "paqp", concat(g, 0, 4, (gnode *[]){p, a, q, p}, 2, I64(4, 2)));
    ref_tensor args[4] = {tens(TC_F64, 2, I64(2, 2), DV(1, 2, 3, 4)),
                          tens(TC_F64, 2, I64(2, 1), DV(5, 6)),
                          tens(TC_F64, 2, I64(1, 2), DV(7, 8)),
                          tens(TC_F64, 2, I64(0, 2), DV(0))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_F64, 2, I64(2, 3));
    expect_vals(&out[0], 6, DV(1, 2, 5, 3, 4, 6), 0, "concat axis 1");
    expect_shape(&out[1], TC_F64, 2, I64(4, 2));
    expect_vals(&out[1], 8, DV(7, 8, 1, 2, 3, 4, 7, 8), 0, "concat axis 0 with an empty part");
    free_all(out, 2);
    free_all(args, 4);
}

/* --- matmul -------------------------------------------------------------------------- */

static gnode *matmul(G *g, tc_dtype dt, gnode *a, gnode *b, int rank, const int64_t *shape)
{
    return node(g, OP_matmul, dt, rank, cshape(g, rank, shape), (gnode *[]){a, b}, 2);
}

static void test_matmul(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_F64, 2, I64(2, 3));
    gnode *b = cinput(g, "b", TC_F64, 2, I64(3, 2));
    gnode *e1 = cinput(g, "e1", TC_F64, 2, I64(2, 0));
    gnode *e2 = cinput(g, "e2", TC_F64, 2, I64(0, 3));
    output(g, "ab", matmul(g, TC_F64, a, b, 2, I64(2, 2)));
    output(g, "empty_k", matmul(g, TC_F64, e1, e2, 2, I64(2, 3)));
    ref_tensor args[4] = {tens(TC_F64, 2, I64(2, 3), DV(1, 2, 3, 4, 5, 6)),
                          tens(TC_F64, 2, I64(3, 2), DV(7, 8, 9, 10, 11, 12)),
                          tens(TC_F64, 2, I64(2, 0), DV(0)),
                          tens(TC_F64, 2, I64(0, 3), DV(0))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 4, DV(58, 64, 139, 154), 0, "2-D");
    expect_vals(&out[1], 6, DV(0, 0, 0, 0, 0, 0), 0, "K = 0");
    free_all(out, 2);
    free_all(args, 4);
}

/* Rank-1 operands follow NumPy (a vector on the left drops M, on the right
 * drops N).  graph_verify wants matmul operands of rank >= 2 (the builder
 * unsqueezes vectors), so this graph is run without it: the interpreter
 * still accepts the NumPy forms. */
static void test_matmul_vectors(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_F64, 2, I64(2, 3));
    gnode *v = cinput(g, "v", TC_F64, 1, I64(3));
    gnode *u = cinput(g, "u", TC_F64, 1, I64(2));
    gnode *w = cinput(g, "w", TC_F64, 1, I64(3));
    output(g, "vw", matmul(g, TC_F64, v, w, 0, NULL));
    output(g, "ua", matmul(g, TC_F64, u, a, 1, I64(3)));
    output(g, "aw", matmul(g, TC_F64, a, w, 1, I64(2)));
    ref_tensor args[4] = {tens(TC_F64, 2, I64(2, 3), DV(1, 2, 3, 4, 5, 6)),
                          tens(TC_F64, 1, I64(3), DV(1, 2, 3)),
                          tens(TC_F64, 1, I64(2), DV(1, 2)),
                          tens(TC_F64, 1, I64(3), DV(1, 0, -1))};
    ref_tensor out[3];
    assert_int_equal(ref_run(g->f, NULL, 0, args, out, &g->d), TC_OK);
    expect_shape(&out[0], TC_F64, 0, NULL);
    expect_vals(&out[0], 1, DV(-2), 0, "[K] @ [K]");
    expect_shape(&out[1], TC_F64, 1, I64(3));
    expect_vals(&out[1], 3, DV(9, 12, 15), 0, "[K] @ [K, N]");
    expect_shape(&out[2], TC_F64, 1, I64(2));
    expect_vals(&out[2], 2, DV(-2, -2), 0, "[M, K] @ [K]");
    free_all(out, 3);
    free_all(args, 4);
}

static void test_matmul_batched(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_F64, 3, I64(2, 2, 2));
    gnode *b = cinput(g, "b", TC_F64, 2, I64(2, 2));
    gnode *a1 = cinput(g, "a1", TC_F64, 3, I64(1, 2, 2));
    gnode *b3 = cinput(g, "b3", TC_F64, 3, I64(3, 2, 1));
    gnode *a4 = cinput(g, "a4", TC_F64, 4, I64(2, 1, 1, 2));
    gnode *b4 = cinput(g, "b4", TC_F64, 3, I64(3, 2, 1));
    output(g, "ab", matmul(g, TC_F64, a, b, 3, I64(2, 2, 2)));
    output(g, "a1b3", matmul(g, TC_F64, a1, b3, 3, I64(3, 2, 1)));
    output(g, "a4b4", matmul(g, TC_F64, a4, b4, 4, I64(2, 3, 1, 1)));
    ref_tensor args[6] = {tens(TC_F64, 3, I64(2, 2, 2), DV(1, 2, 3, 4, 5, 6, 7, 8)),
                          tens(TC_F64, 2, I64(2, 2), DV(1, 0, 0, 2)),
                          tens(TC_F64, 3, I64(1, 2, 2), DV(1, 2, 3, 4)),
                          tens(TC_F64, 3, I64(3, 2, 1), DV(1, 1, 0, 1, 2, 0)),
                          tens(TC_F64, 4, I64(2, 1, 1, 2), DV(1, 10, 100, 1000)),
                          tens(TC_F64, 3, I64(3, 2, 1), DV(1, 2, 3, 4, 5, 6))};
    ref_tensor out[3];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 8, DV(1, 4, 3, 8, 5, 12, 7, 16), 0, "batched @ 2-D");
    expect_vals(&out[1], 6, DV(3, 7, 2, 4, 2, 6), 0, "batch dim 1 broadcasts");
    /* out[i, j] = a4[i] . b4[j]: a4 = (1, 10), (100, 1000); b4 = (1, 2), (3, 4), (5, 6) */
    expect_shape(&out[2], TC_F64, 4, I64(2, 3, 1, 1));
    expect_vals(&out[2], 6, DV(21, 43, 65, 2100, 4300, 6500), 0, "batch dims broadcast both ways");
    free_all(out, 3);
    free_all(args, 6);
}

static void test_matmul_rounding(void **state)
{
    G *g = *state;
    gnode *a = cinput(g, "a", TC_F16, 2, I64(1, 3));
    gnode *b = cinput(g, "b", TC_F16, 2, I64(3, 1));
    gnode *ia = cinput(g, "ia", TC_I32, 2, I64(1, 2));
    gnode *ib = cinput(g, "ib", TC_I32, 2, I64(2, 1));
    output(g, "h", matmul(g, TC_F16, a, b, 2, I64(1, 1)));
    output(g, "i", matmul(g, TC_I32, ia, ib, 2, I64(1, 1)));
    ref_tensor args[4] = {tens(TC_F16, 2, I64(1, 3), DV(2048, 1, 1)),
                          tens(TC_F16, 2, I64(3, 1), DV(1, 1, 1)),
                          tens(TC_I32, 2, I64(1, 2), DV(65536, 1)),
                          tens(TC_I32, 2, I64(2, 1), DV(65536, 5))};
    ref_tensor out[2];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_vals(&out[0], 1, DV(2050), 0, "f16 matmul accumulates wide");
    expect_vals(&out[1], 1, DV(5), 0, "i32 matmul wraps (2^32 + 5)");
    free_all(out, 2);
    free_all(args, 4);
}

/* --- leaves, outputs, bindings, errors ------------------------------------------------- */

static void test_symbolic_multi_output(void **state)
{
    G *g = *state;
    const tc_dim *N = S(g, "N"), *D = S(g, "D");
    gnode *x = param(g, "x", TC_F32, 2, (const tc_dim *[]){N, D}, false);
    gnode *dv = node(g, OP_dimval, TC_I64, 0, NULL, NULL, 0);
    dv->a.dim = D;
    dv->weak = true;
    gnode *y = op2(g, OP_div, TC_F32, x, dv);                       /* x / D */
    gnode *s = reduce(g, OP_sum, TC_F32, y, 1, (int[]){1}, false, 0);
    gnode *nd = node(g, OP_dimval, TC_I64, 0, NULL, NULL, 0);
    nd->a.dim = dim_mul(g->dc, N, D);
    gnode *unused = op1(g, OP_exp, TC_F32, x);                      /* dead: evaluated, freed */
    (void)unused;
    output(g, "y", y);
    output(g, "s", s);
    output(g, "s_again", s);
    output(g, "nd", nd);
    tc_dimbind b[] = {{"N", 2}, {"D", 4}};
    ref_tensor args[1] = {tens(TC_F32, 2, I64(2, 4), DV(1, 2, 3, 4, 5, 6, 7, 8))};
    ref_tensor out[4];
    assert_int_equal(run(g, b, 2, args, out), TC_OK);
    expect_shape(&out[0], TC_F32, 2, I64(2, 4));
    expect_vals(&out[0], 8, DV(0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2), 0, "x / D");
    expect_shape(&out[1], TC_F32, 1, I64(2));
    expect_vals(&out[1], 2, DV(2.5, 6.5), 0, "row sums");
    expect_vals(&out[2], 2, DV(2.5, 6.5), 0, "same node twice");
    assert_ptr_not_equal(out[1].data, out[2].data);
    expect_shape(&out[3], TC_I64, 0, NULL);
    expect_vals(&out[3], 1, DV(8), 0, "N * D");
    free_all(out, 4);
    free_all(args, 1);
}

static void test_scalar_and_const_leaves(void **state)
{
    G *g = *state;
    gnode *s = param(g, "s", TC_I32, 0, NULL, true);
    output(g, "s", s);
    output(g, "cf", cnst_f(g, TC_F16, 0.1));
    output(g, "ci", cnst_i(g, TC_I32, 3000000000LL)); /* wraps on store */
    output(g, "cb", cnst_i(g, TC_BOOL, 7));
    ref_tensor args[1] = {scalar_t(TC_I32, -5)};
    ref_tensor out[4];
    assert_int_equal(run(g, NULL, 0, args, out), TC_OK);
    expect_shape(&out[0], TC_I32, 0, NULL);
    expect_vals(&out[0], 1, DV(-5), 0, "scalar");
    expect_vals(&out[1], 1, DV(0.0999755859375), 0, "f16 const");
    expect_vals(&out[2], 1, DV(-1294967296), 0, "i32 const");
    expect_vals(&out[3], 1, DV(1), 0, "bool const");
    free_all(out, 4);
    free_all(args, 1);
}

static void test_unbound_symbol(void **state)
{
    G *g = *state;
    gnode *x = param(g, "x", TC_F32, 2, (const tc_dim *[]){S(g, "N"), S(g, "D")}, false);
    output(g, "x", x);
    tc_dimbind b[] = {{"N", 2}};
    ref_tensor args[1] = {tens(TC_F32, 2, I64(2, 4), DV(1, 2, 3, 4, 5, 6, 7, 8))};
    ref_tensor out[1];
    assert_int_equal(ref_run(g->f, b, 1, args, out, &g->d), TC_ERR_INVALID_ARG);
    assert_string_equal(g->d.brief, "size 'D' is not bound");
    free_all(args, 1);
}

static void test_argument_shape_mismatch(void **state)
{
    G *g = *state;
    gnode *x = param(g, "x", TC_F32, 2, (const tc_dim *[]){S(g, "N"), S(g, "D")}, false);
    gnode *s = param(g, "lr", TC_F32, 0, NULL, true);
    output(g, "y", op2(g, OP_mul, TC_F32, x, s));
    tc_dimbind b[] = {{"N", 3}, {"D", 4}};
    ref_tensor args[2] = {zeros(TC_F32, 2, I64(3, 5)), scalar_t(TC_F32, 1)};
    ref_tensor out[1];
    assert_int_equal(ref_run(g->f, b, 2, args, out, &g->d), TC_ERR_INVALID_ARG);
    assert_string_equal(g->d.brief, "argument for parameter 'x' has shape [3, 5], expected [3, 4]");
    assert_int_equal(g->d.loc.line, 100); /* the parameter's location */
    free_all(args, 2);

    /* a scalar given as a vector */
    ref_tensor args2[2] = {zeros(TC_F32, 2, I64(3, 4)), tens(TC_F32, 1, I64(1), DV(1))};
    assert_int_equal(ref_run(g->f, b, 2, args2, out, &g->d), TC_ERR_INVALID_ARG);
    assert_string_equal(g->d.brief, "argument for parameter 'lr' has shape [1], expected [] (a scalar)");
    free_all(args2, 2);
}

static void test_size_guard(void **state)
{
    G *g = *state;
    const tc_dim *N = S(g, "N");
    gnode *c = cnst_f(g, TC_F32, 1);
    gnode *big = view(g, c, 2, (const tc_dim *[]){N, N}, (const tc_dim *[]){K(g, 0), K(g, 0)}, K(g, 0));
    output(g, "big", big);
    ref_tensor out[1];
    /* 2^20 * 2^20 elements: over the limit, refused before any allocation */
    tc_dimbind b1[] = {{"N", (int64_t)1 << 20}};
    assert_int_equal(ref_run(g->f, b1, 1, NULL, out, &g->d), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(g->d.msg, "limit"));
    assert_int_equal(g->d.loc.line, big->id + 1);
    assert_null(out[0].data);
    assert_null(out[0].idata);
    /* 2^40 * 2^40 overflows int64 */
    tc_dimbind b2[] = {{"N", (int64_t)1 << 40}};
    assert_int_equal(ref_run(g->f, b2, 1, NULL, out, &g->d), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(g->d.msg, "limit"));
    /* negative size */
    tc_dimbind b3[] = {{"N", -1}};
    assert_int_equal(ref_run(g->f, b3, 1, NULL, out, &g->d), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(g->d.msg, "negative"));
    /* and a sane size works, broadcasting the constant */
    tc_dimbind b4[] = {{"N", 2}};
    assert_int_equal(run(g, b4, 1, NULL, out), TC_OK);
    expect_vals(&out[0], 4, DV(1, 1, 1, 1), 0, "broadcast const");
    free_all(out, 1);
}

static void test_alloc(void **state)
{
    (void)state;
    ref_tensor t;
    assert_true(ref_alloc(&t, TC_F32, 0, NULL));
    assert_int_equal(ref_numel(&t), 1);
    assert_true(t.data[0] == 0);
    ref_free(&t);
    assert_null(t.data);
    ref_free(&t); /* twice is harmless */
    assert_true(ref_alloc(&t, TC_F32, 2, I64(3, 0)));
    assert_int_equal(ref_numel(&t), 0);
    assert_non_null(t.data);
    ref_free(&t);
    assert_false(ref_alloc(&t, TC_F32, 2, I64((int64_t)1 << 40, (int64_t)1 << 40)));
    assert_false(ref_alloc(&t, TC_F32, 1, I64(-1)));
    assert_false(ref_alloc(&t, TC_F32, TC_MAX_RANK + 1, I64(1, 1, 1, 1, 1, 1, 1, 1, 1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointwise_table),
        cmocka_unit_test(test_every_op_is_covered),
        cmocka_unit_test_setup_teardown(test_rank0_broadcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f16_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bf16_f32_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bf16_third, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_mul_products, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_mod_div_pow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_div_by_zero_is_inf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_mod_by_zero_is_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_zero_to_negative_power, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cast_saturates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_axes_keepdim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argmax_ties_multi_axis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduce_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_var_std, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logsumexp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_reductions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f16_sum_accumulates_wide, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_reductions, setup, teardown),
        cmocka_unit_test(test_empty_max_is_an_error),
        cmocka_unit_test_setup_teardown(test_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_symbolic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_out_of_bounds_is_internal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_then_reshape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_batched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symbolic_multi_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scalar_and_const_leaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unbound_symbol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_shape_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_guard, setup, teardown),
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_lanes),
        cmocka_unit_test_setup_teardown(test_i64_near_max_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_i64_overflow_wraps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_i64_reductions_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_float_casts_both_ways, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
