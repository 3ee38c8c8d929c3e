/* test_bind.c - graphs built by hand with the low-level constructors:
 * binding run-time sizes (graph_bind, every message), and the printer and
 * verifier (graph_print, graph_verify) on the same graphs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bind.h"
#include "graph/graph.h"

/* The function the hand-built graph stands for.  Columns matter: the
 * locations below point into this text. */
static const char SRC[] =
    "fn rmsnorm(x: f32[N, D], g: f32[D], eps: f32 = 1e-6) -> f32[N, D] {\n"
    "    ms = mean(x * x, axis=-1, keepdim=true)\n"
    "    y = x[:, 0:128]\n"
    "    return x * rsqrt(ms + eps) * g\n"
    "}\n";

typedef struct fx {
    tc_arena *a;
    tc_dimctx *dc;
    tc_source src;
    tc_diag d;
    gfn *f;
    const tc_dim *N, *D;
} fx;

static tc_loc L(fx *t, int line, int col) { return (tc_loc){&t->src, line, col}; }

static gnode *add(fx *t, op_id op, tc_dtype dt, int rank, const tc_dim *const *shape,
                  gnode *const *in, int nin, int line, int col)
{
    gnode *n = graph_node_new(t->a, op, dt, rank, shape, in, nin, L(t, line, col));
    graph_add(t->a, t->f, n);
    return n;
}

static void add_param(fx *t, const char *name, int col, bool scalar, tc_dtype dt, int rank,
                      const tc_dim *const *shape)
{
    gfn *f = t->f;
    gparam *ps = ARENA_ARRAY(t->a, gparam, f->nparams + 1);
    if (f->nparams)
        memcpy(ps, f->params, sizeof *ps * (size_t)f->nparams);
    gparam *p = &ps[f->nparams];
    p->name = name;
    p->loc = L(t, 1, col);
    p->scalar = scalar;
    p->dtype = dt;
    p->rank = rank;
    p->shape = ARENA_ARRAY(t->a, const tc_dim *, rank > 0 ? rank : 1);
    if (rank)
        memcpy(p->shape, shape, sizeof *shape * (size_t)rank);
    p->node = add(t, scalar ? OP_scalar : OP_input, dt, rank, shape, NULL, 0, 1, col);
    p->node->a.param = f->nparams;
    p->node->name = name;
    p->node->weak = scalar;
    f->params = ps;
    f->nparams++;
}

static void add_sym(fx *t, const char *s)
{
    gfn *f = t->f;
    const char **syms = ARENA_ARRAY(t->a, const char *, f->nsyms + 1);
    if (f->nsyms)
        memcpy(syms, f->syms, sizeof *syms * (size_t)f->nsyms);
    syms[f->nsyms++] = s;
    f->syms = syms;
}

static void add_cons(fx *t, const tc_dim *dim, int64_t min, int line, int col, const char *what)
{
    gfn *f = t->f;
    gconstraint *c = ARENA_ARRAY(t->a, gconstraint, f->ncons + 1);
    if (f->ncons)
        memcpy(c, f->cons, sizeof *c * (size_t)f->ncons);
    c[f->ncons++] = (gconstraint){dim, min, L(t, line, col), what};
    f->cons = c;
    f->capcons = f->ncons;
}

/* rmsnorm as the builder would make it, with y's slice kept as a
 * constraint D >= 128. */
static int setup(void **state)
{
    fx *t = calloc(1, sizeof *t);
    t->a = arena_new(NULL);
    t->dc = dimctx_new(t->a);
    t->src = (tc_source){"rms.tc", SRC, sizeof SRC - 1};
    diag_init(&t->d);
    t->f = graph_fn_new(t->a, "rmsnorm");
    t->f->loc = L(t, 1, 4);
    t->N = dim_sym(t->dc, "N");
    t->D = dim_sym(t->dc, "D");
    add_sym(t, "N");
    add_sym(t, "D");
    const tc_dim *nd[] = {t->N, t->D}, *d1[] = {t->D}, *n1[] = {t->N, dim_const(t->dc, 1)};
    add_param(t, "x", 12, false, TC_F32, 2, nd);
    add_param(t, "g", 25, false, TC_F32, 1, d1);
    add_param(t, "eps", 37, true, TC_F32, 0, NULL);
    t->f->params[2].has_default = true;
    t->f->params[2].def = 1e-6;
    gnode **P = t->f->nodes;
    gnode *sq = add(t, OP_mul, TC_F32, 2, nd, (gnode *[]){P[0], P[0]}, 2, 2, 17);
    gnode *ms = add(t, OP_mean, TC_F32, 2, n1, &sq, 1, 2, 10);
    ms->a.red.naxes = 1;
    ms->a.red.axes[0] = 1;
    ms->a.red.keepdim = true;
    ms->name = "ms";
    gnode *e = add(t, OP_add, TC_F32, 2, n1, (gnode *[]){ms, P[2]}, 2, 4, 25);
    gnode *r = add(t, OP_rsqrt, TC_F32, 2, n1, &e, 1, 4, 16);
    gnode *rb = add(t, OP_view, TC_F32, 2, nd, &r, 1, 4, 14);
    rb->a.view.strides = ARENA_ARRAY(t->a, const tc_dim *, 2);
    rb->a.view.strides[0] = dim_const(t->dc, 1);
    rb->a.view.strides[1] = dim_const(t->dc, 0);
    rb->a.view.offset = dim_const(t->dc, 0);
    gnode *xr = add(t, OP_mul, TC_F32, 2, nd, (gnode *[]){P[0], rb}, 2, 4, 14);
    gnode *gb = add(t, OP_view, TC_F32, 2, nd, &P[1], 1, 4, 33);
    gb->a.view.strides = ARENA_ARRAY(t->a, const tc_dim *, 2);
    gb->a.view.strides[0] = dim_const(t->dc, 0);
    gb->a.view.strides[1] = dim_const(t->dc, 1);
    gb->a.view.offset = dim_const(t->dc, 0);
    gnode *out = add(t, OP_mul, TC_F32, 2, nd, (gnode *[]){xr, gb}, 2, 4, 31);
    t->f->outputs = ARENA_NEW(t->a, goutput);
    t->f->outputs[0] = (goutput){"out", L(t, 4, 12), out, -1};
    t->f->noutputs = 1;
    add_cons(t, t->D, 128, 3, 14, "slice end 128 of dim 1");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    fx *t = *state;
    diag_release(&t->d);
    arena_free(t->a);
    free(t);
    return 0;
}

static bind_arg tensor2(int64_t a, int64_t b) { return (bind_arg){true, 2, {a, b}}; }
static bind_arg tensor1(int64_t a) { return (bind_arg){true, 1, {a}}; }
static const bind_arg none = {false, 0, {0}};

static tc_status bind(fx *t, const bind_arg *args, const tc_dimbind *extra, int nextra,
                      tc_dimbind **out, int *nout)
{
    diag_clear(&t->d);
    return graph_bind(t->f, args, extra, nextra, t->a, &t->d, out, nout);
}

/* An error: its status, brief text and location. */
static void expect_error(fx *t, tc_status st, const char *brief, int line, int col)
{
    assert_int_equal(st, TC_ERR_INVALID_ARG);
    assert_int_equal(t->d.status, TC_ERR_INVALID_ARG);
    assert_non_null(t->d.brief);
    assert_string_equal(t->d.brief, brief);
    assert_int_equal(t->d.loc.line, line);
    assert_int_equal(t->d.loc.col, col);
}

/* ---- binding ------------------------------------------------------------ */

static void test_bind_ok(void **state)
{
    fx *t = *state;
    bind_arg args[] = {tensor2(4, 200), tensor1(200), none};
    tc_dimbind *out = NULL;
    int n = -1;
    assert_int_equal(bind(t, args, NULL, 0, &out, &n), TC_OK);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].name, "N");
    assert_int_equal(out[0].value, 4);
    assert_string_equal(out[1].name, "D");
    assert_int_equal(out[1].value, 200);
    assert_int_equal(bind_eval(dim_mul(t->dc, t->N, t->D), out, n), 800);
    assert_int_equal(bind_eval(dim_ceildiv(t->dc, t->D, dim_const(t->dc, 3)), out, n), 67);
    assert_int_equal(bind_eval(dim_sym(t->dc, "B"), out, n), -1);
    /* out and nout may be NULL */
    assert_int_equal(bind(t, args, NULL, 0, NULL, NULL), TC_OK);
}

static void test_bind_extra(void **state)
{
    fx *t = *state;
    /* only g given: N comes from an explicit size */
    bind_arg args[] = {none, tensor1(128), none};
    tc_dimbind extra[] = {{"N", 7}};
    tc_dimbind *out;
    int n;
    assert_int_equal(bind(t, args, extra, 1, &out, &n), TC_OK);
    assert_int_equal(out[0].value, 7);
    assert_int_equal(out[1].value, 128);
    /* no tensors at all */
    tc_dimbind both[] = {{"D", 256}, {"N", 3}};
    assert_int_equal(bind(t, NULL, both, 2, &out, &n), TC_OK);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].value, 3);
    assert_int_equal(out[1].value, 256);
    /* the same size given twice with one value is fine */
    tc_dimbind twice[] = {{"D", 256}, {"N", 3}, {"D", 256}};
    assert_int_equal(bind(t, NULL, twice, 3, &out, &n), TC_OK);
}

static void test_bind_mismatch(void **state)
{
    fx *t = *state;
    bind_arg args[] = {tensor2(4, 128), tensor1(64), none};
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "parameter 'g' has shape [64], but its dim 0 is D = 128 (bound by parameter 'x' dim 1)",
                 1, 25);
    /* the whole message: location, source line, caret */
    assert_string_equal(t->d.msg,
                        "rms.tc:1:25: error: parameter 'g' has shape [64], but its dim 0 is D = 128 "
                        "(bound by parameter 'x' dim 1)\n"
                        "    fn rmsnorm(x: f32[N, D], g: f32[D], eps: f32 = 1e-6) -> f32[N, D] {\n"
                        "                            ^\n");
    /* an explicit size is applied first, so the tensor is blamed */
    tc_dimbind extra[] = {{"D", 64}};
    bind_arg args2[] = {tensor2(4, 128), none, none};
    expect_error(t, bind(t, args2, extra, 1, NULL, NULL),
                 "parameter 'x' has shape [4, 128], but its dim 1 is D = 64 (given as D=64)", 1, 12);
}

static void test_bind_rank(void **state)
{
    fx *t = *state;
    bind_arg args[] = {{true, 3, {4, 128, 2}}, none, none};
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "parameter 'x' has rank 3, expected 2 (f32[N, D])", 1, 12);
    bind_arg args2[] = {tensor2(4, 128), {true, 0, {0}}, none};
    expect_error(t, bind(t, args2, NULL, 0, NULL, NULL),
                 "parameter 'g' has rank 0, expected 1 (f32[D])", 1, 25);
}

static void test_bind_unknown(void **state)
{
    fx *t = *state;
    expect_error(t, bind(t, NULL, NULL, 0, NULL, NULL),
                 "size of N is not known: pass a tensor for parameter 'x' or --shape N=...", 1, 12);
    bind_arg args[] = {none, tensor1(128), none};
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "size of N is not known: pass a tensor for parameter 'x' or --shape N=...", 1, 12);
    tc_dimbind extra[] = {{"N", 2}};
    expect_error(t, bind(t, NULL, extra, 1, NULL, NULL),
                 "size of D is not known: pass a tensor for parameter 'x' or --shape D=...", 1, 12);
}

static void test_bind_bad_extra(void **state)
{
    fx *t = *state;
    tc_dimbind q[] = {{"Q", 3}};
    expect_error(t, bind(t, NULL, q, 1, NULL, NULL),
                 "'Q' is not a size of function 'rmsnorm' (its sizes are N, D)", 1, 4);
    tc_dimbind neg[] = {{"N", -3}};
    expect_error(t, bind(t, NULL, neg, 1, NULL, NULL),
                 "size N=-3 is out of range: sizes must be between 1 and 2^48", 1, 4);
    tc_dimbind zero[] = {{"N", 0}};
    expect_error(t, bind(t, NULL, zero, 1, NULL, NULL),
                 "size N=0 is out of range: sizes must be between 1 and 2^48", 1, 4);
    tc_dimbind huge[] = {{"D", (int64_t)1 << 50}};
    expect_error(t, bind(t, NULL, huge, 1, NULL, NULL),
                 "size D=1125899906842624 is out of range: sizes must be between 1 and 2^48", 1, 4);
    tc_dimbind twice[] = {{"N", 3}, {"N", 4}};
    expect_error(t, bind(t, NULL, twice, 2, NULL, NULL), "size N is given twice: 3 and 4", 1, 4);
}

static void test_bind_bad_sizes(void **state)
{
    fx *t = *state;
    bind_arg neg[] = {tensor2(-1, 128), none, none};
    expect_error(t, bind(t, neg, NULL, 0, NULL, NULL),
                 "parameter 'x' has shape [-1, 128]: dim 0 is out of range", 1, 12);
    bind_arg zero[] = {tensor2(0, 128), none, none};
    expect_error(t, bind(t, zero, NULL, 0, NULL, NULL),
                 "parameter 'x' has shape [0, 128], but its dim 0 (N) must be at least 1", 1, 12);
    bind_arg big[] = {tensor2((int64_t)1 << 30, (int64_t)1 << 20), none, none};
    expect_error(t, bind(t, big, NULL, 0, NULL, NULL),
                 "parameter 'x' has shape [1073741824, 1048576]: more than 2^48 elements", 1, 12);
    bind_arg huge[] = {tensor2(INT64_MAX, 1), none, none};
    expect_error(t, bind(t, huge, NULL, 0, NULL, NULL),
                 "parameter 'x' has shape [9223372036854775807, 1]: dim 0 is out of range", 1, 12);
}

static void test_bind_constraint(void **state)
{
    fx *t = *state;
    bind_arg args[] = {tensor2(4, 100), tensor1(100), none};
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "D is 100, but it must be at least 128 here (slice end 128 of dim 1)", 3, 14);
    /* exactly the bound is fine */
    bind_arg ok[] = {tensor2(4, 128), tensor1(128), none};
    assert_int_equal(bind(t, ok, NULL, 0, NULL, NULL), TC_OK);
    /* an expression constraint names the symbols' values */
    add_cons(t, dim_sub(t->dc, t->N, dim_const(t->dc, 1)), 1, 3, 9,
             "slice 1: of dim 0 is not empty");
    bind_arg one[] = {tensor2(1, 128), tensor1(128), none};
    expect_error(t, bind(t, one, NULL, 0, NULL, NULL),
                 "N - 1 is 0 (N = 1), but it must be at least 1 here (slice 1: of dim 0 is not empty)",
                 3, 9);
    t->f->cons[1].what = NULL;
    expect_error(t, bind(t, one, NULL, 0, NULL, NULL),
                 "N - 1 is 0 (N = 1), but it must be at least 1 here", 3, 9);
}

static void test_bind_literal_and_expr_dims(void **state)
{
    fx *t = *state;
    /* h: f32[3], y: f32[N + 1] */
    const tc_dim *three[] = {dim_const(t->dc, 3)};
    const tc_dim *np1[] = {dim_add(t->dc, t->N, dim_const(t->dc, 1))};
    add_param(t, "h", 50, false, TC_F32, 1, three);
    add_param(t, "y", 60, false, TC_F32, 1, np1);
    bind_arg args[] = {tensor2(4, 128), none, none, tensor1(3), tensor1(5)};
    assert_int_equal(bind(t, args, NULL, 0, NULL, NULL), TC_OK);
    args[3] = tensor1(4);
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "parameter 'h' has shape [4], but its dim 0 must be 3 (f32[3])", 1, 50);
    args[3] = tensor1(3);
    args[4] = tensor1(6);
    expect_error(t, bind(t, args, NULL, 0, NULL, NULL),
                 "parameter 'y' has shape [6], but its dim 0 is N + 1 = 5 (N = 4)", 1, 60);
}

static void test_bind_star(void **state)
{
    fx *t = *state;
    /* a foreach-style function: p: f32[*], q: f32[*] */
    t->f = graph_fn_new(t->a, "axpy");
    t->f->loc = L(t, 1, 4);
    add_sym(t, "*");
    const tc_dim *star[] = {dim_sym(t->dc, "*")};
    add_param(t, "p", 10, false, TC_F32, 1, star);
    add_param(t, "q", 20, false, TC_F32, 1, star);
    t->f->params[0].star = t->f->params[1].star = true;
    bind_arg args[] = {tensor1(1000), tensor1(1000)};
    tc_dimbind *out;
    int n;
    assert_int_equal(bind(t, args, NULL, 0, &out, &n), TC_OK);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].name, "*");
    assert_int_equal(out[0].value, 1000);
    bind_arg bad[] = {tensor1(1000), tensor1(999)};
    expect_error(t, bind(t, bad, NULL, 0, NULL, NULL),
                 "parameter 'q' has shape [999], but its dim 0 is * = 1000 (bound by parameter 'p' dim 0)",
                 1, 20);
    bind_arg rank2[] = {tensor2(10, 100), none};
    expect_error(t, bind(t, rank2, NULL, 0, NULL, NULL),
                 "parameter 'p' has rank 2, expected 1 (a f32[*] parameter is passed flattened)", 1, 10);
    tc_dimbind q[] = {{"N", 3}};
    expect_error(t, bind(t, NULL, q, 1, NULL, NULL),
                 "'N' is not a size of function 'axpy' (its sizes are *)", 1, 4);
}

static void test_bind_no_syms(void **state)
{
    fx *t = *state;
    t->f = graph_fn_new(t->a, "k");
    t->f->loc = L(t, 1, 4);
    const tc_dim *two[] = {dim_const(t->dc, 2)};
    add_param(t, "c", 8, false, TC_I32, 1, two);
    tc_dimbind *out = (tc_dimbind *)1;
    int n = -1;
    assert_int_equal(bind(t, NULL, NULL, 0, &out, &n), TC_OK);
    assert_int_equal(n, 0);
    tc_dimbind q[] = {{"N", 3}};
    expect_error(t, bind(t, NULL, q, 1, NULL, NULL),
                 "'N' is not a size of function 'k', which has no symbolic sizes", 1, 4);
}

/* ---- printing ------------------------------------------------------------- */

static void test_print(void **state)
{
    fx *t = *state;
    tc_buf b;
    buf_init(&b, t->a);
    graph_print(&b, t->f);
    assert_string_equal(buf_str(&b),
        "fn rmsnorm(x: f32[N, D], g: f32[D], eps: f32 = 1e-06) -> (out: f32[N, D])\n"
        "  %0 = input x : f32[N, D]                          # rms.tc:1:12  x\n"
        "  %1 = input g : f32[D]                             # rms.tc:1:25  g\n"
        "  %2 = scalar eps : weak f32                        # rms.tc:1:37  eps\n"
        "  %3 = mul(%0, %0) : f32[N, D]                      # rms.tc:2:17\n"
        "  %4 = mean(%3, axes=[1], keepdim) : f32[N, 1]      # rms.tc:2:10  ms\n"
        "  %5 = add(%4, %2) : f32[N, 1]                      # rms.tc:4:25\n"
        "  %6 = rsqrt(%5) : f32[N, 1]                        # rms.tc:4:16\n"
        "  %7 = view(%6, strides=[1, 0], offset=0) : f32[N, D]  # rms.tc:4:14\n"
        "  %8 = mul(%0, %7) : f32[N, D]                      # rms.tc:4:14\n"
        "  %9 = view(%1, strides=[0, 1], offset=0) : f32[N, D]  # rms.tc:4:33\n"
        "  %10 = mul(%8, %9) : f32[N, D]                     # rms.tc:4:31\n"
        "  out = %10\n"
        "  requires D >= 128                                 # rms.tc:3:14  slice end 128 of dim 1\n");
}

static void test_print_leaves_and_attrs(void **state)
{
    fx *t = *state;
    t->f = graph_fn_new(t->a, "misc");
    t->src.name = "m.tc";
    const tc_dim *n1[] = {t->N}, *nn[] = {t->N, t->N};
    add_sym(t, "N");
    add_param(t, "p", 9, false, TC_BF16, 1, n1);
    t->f->params[0].inout = true;
    gnode *c1 = add(t, OP_const, TC_F64, 0, NULL, NULL, 0, 2, 5);
    c1->a.cnst.f = 0.1;
    c1->weak = true;
    gnode *c2 = add(t, OP_const, TC_I64, 0, NULL, NULL, 0, 2, 9);
    c2->a.cnst.i = -3;
    gnode *c3 = add(t, OP_const, TC_BOOL, 0, NULL, NULL, 0, 2, 9);
    c3->a.cnst.i = 1;
    gnode *c4 = add(t, OP_const, TC_F32, 0, NULL, NULL, 0, 2, 9);
    c4->a.cnst.f = -INFINITY;
    /* floats print as the shortest text that reads back in their dtype */
    add(t, OP_const, TC_F32, 0, NULL, NULL, 0, 2, 9)->a.cnst.f = (double)0.1f;
    add(t, OP_const, TC_F16, 0, NULL, NULL, 0, 2, 9)->a.cnst.f = 0.0999755859375;
    add(t, OP_const, TC_F64, 0, NULL, NULL, 0, 2, 9)->a.cnst.f = (double)0.1f;
    add(t, OP_const, TC_F32, 0, NULL, NULL, 0, 2, 9)->a.cnst.f = 0.1; /* not an f32: exact */
    gnode *dv = add(t, OP_dimval, TC_I64, 0, NULL, NULL, 0, 3, 1);
    dv->a.dim = dim_ceildiv(t->dc, t->N, dim_const(t->dc, 2));
    dv->weak = true;
    gnode *cast = add(t, OP_cast, TC_F32, 1, n1, &t->f->nodes[0], 1, 4, 1);
    gnode *vr = add(t, OP_var, TC_F32, 0, NULL, &cast, 1, 5, 1);
    vr->a.red.naxes = 1;
    vr->a.red.correction = 0;
    gnode *cat = add(t, OP_concat, TC_F32, 1, (const tc_dim *[]){dim_add(t->dc, t->N, t->N)},
                     (gnode *[]){cast, cast}, 2, 6, 1);
    cat->a.axis = 0;
    gnode *mm = add(t, OP_matmul, TC_F32, 2, nn, (gnode *[]){cast, cast}, 2, 7, 1);
    gnode *back = add(t, OP_cast, TC_BF16, 1, n1, &cast, 1, 0, 0);
    back->loc = (tc_loc){0};
    t->f->outputs = ARENA_ARRAY(t->a, goutput, 2);
    t->f->outputs[0] = (goutput){"m", L(t, 8, 1), mm, -1};
    t->f->outputs[1] = (goutput){"p", L(t, 1, 9), back, 0};
    t->f->noutputs = 2;
    t->f->elementwise = false;
    (void)vr;
    (void)c2;
    (void)c3;
    (void)c4;
    (void)dv;
    tc_buf b;
    buf_init(&b, t->a);
    graph_print(&b, t->f);
    assert_string_equal(buf_str(&b),
        "fn misc(p: inout bf16[N]) -> (m: f32[N, N], p: bf16[N])\n"
        "  %0 = input p : bf16[N]                            # m.tc:1:9  p\n"
        "  %1 = const 0.1 : weak f64                         # m.tc:2:5\n"
        "  %2 = const -3 : i64                               # m.tc:2:9\n"
        "  %3 = const true : bool                            # m.tc:2:9\n"
        "  %4 = const -inf : f32                             # m.tc:2:9\n"
        "  %5 = const 0.1 : f32                              # m.tc:2:9\n"
        "  %6 = const 0.1 : f16                              # m.tc:2:9\n"
        "  %7 = const 0.10000000149011612 : f64              # m.tc:2:9\n"
        "  %8 = const 0.1 : f32                              # m.tc:2:9\n"
        "  %9 = dimval (N + 1)/2 : weak i64                  # m.tc:3:1\n"
        "  %10 = cast(%0) : f32[N]                           # m.tc:4:1\n"
        "  %11 = var(%10, axes=[0], correction=0) : f32      # m.tc:5:1\n"
        "  %12 = concat(%10, %10, axis=0) : f32[2*N]         # m.tc:6:1\n"
        "  %13 = matmul(%10, %10) : f32[N, N]                # m.tc:7:1\n"
        "  %14 = cast(%10) : bf16[N]\n"
        "  m = %13\n"
        "  p = %14 (inout)\n");
}

/* ---- verifying ------------------------------------------------------------ */

/* Run graph_verify under a jump buffer; the status it ends with. */
static tc_status verify(fx *t)
{
    jmp_buf jb;
    diag_clear(&t->d);
    t->d.jb = &jb;
    if (setjmp(jb)) {
        t->d.jb = NULL;
        return t->d.status;
    }
    graph_verify(t->f, &t->d);
    t->d.jb = NULL;
    return TC_OK;
}

static void expect_verify_error(fx *t, const char *brief, int line, int col)
{
    assert_int_equal(verify(t), TC_ERR_INTERNAL);
    assert_string_equal(t->d.brief, brief);
    assert_int_equal(t->d.loc.line, line);
    assert_int_equal(t->d.loc.col, col);
}

static void test_verify_ok(void **state)
{
    fx *t = *state;
    assert_int_equal(verify(t), TC_OK);
}

static void test_verify_structure(void **state)
{
    fx *t = *state;
    gnode **n = t->f->nodes;
    n[3]->id = 7;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %7 mul: id 7 at position 3", 2, 17);
    n[3]->id = 3;
    n[3]->in[1] = n[10]; /* a later node: not topological */
    expect_verify_error(t,
                        "graph verifier: in 'rmsnorm', %3 mul: input 1 (%10) is not an earlier node "
                        "of this function", 2, 17);
    n[3]->in[1] = n[0];
    n[3]->nin = 1;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %3 mul: 1 inputs, expected 2", 2, 17);
    n[3]->nin = 2;
    n[3]->dtype = TC_DT_NONE;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %3 mul: no dtype", 2, 17);
    n[3]->dtype = TC_F32;
    n[3]->shape[1] = NULL;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %3 mul: dim 1 of its shape is missing", 2, 17);
    n[3]->shape[1] = t->D;
    assert_int_equal(verify(t), TC_OK);
}

static void test_verify_pointwise_and_dtypes(void **state)
{
    fx *t = *state;
    gnode **n = t->f->nodes;
    n[10]->in[1] = n[1]; /* f32[D] into an f32[N, D] mul: broadcasting must be a view */
    expect_verify_error(t,
                        "graph verifier: in 'rmsnorm', %10 mul: input 1 (%1) has a shape that is "
                        "neither the node's nor rank 0", 4, 31);
    n[10]->in[1] = n[9];
    n[10]->dtype = TC_F16;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %10 mul: dtype f16, but its inputs give f32",
                        4, 31);
    n[10]->dtype = TC_F32;
    /* a weak f64 scalar does not widen f32: add stays f32, so f64 is wrong */
    n[2]->dtype = TC_F64;
    t->f->params[2].dtype = TC_F64;
    assert_int_equal(verify(t), TC_OK);
    n[5]->dtype = TC_F64;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %5 add: dtype f64, but its inputs give f32",
                        4, 25);
}

static void test_verify_reduce(void **state)
{
    fx *t = *state;
    gnode *ms = t->f->nodes[4];
    ms->a.red.axes[0] = 2;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %4 mean: axis 2 out of range for rank 2",
                        2, 10);
    ms->a.red.naxes = 2;
    ms->a.red.axes[0] = 1;
    ms->a.red.axes[1] = 0;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %4 mean: axes are not sorted and distinct",
                        2, 10);
    ms->a.red.naxes = 1;
    ms->a.red.axes[0] = 1;
    ms->shape[1] = t->D; /* keepdim leaves a 1 */
    expect_verify_error(t,
                        "graph verifier: in 'rmsnorm', %4 mean: dim 1 does not follow from input dim 1",
                        2, 10);
    ms->shape[1] = dim_const(t->dc, 1);
    ms->a.red.keepdim = false;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %4 mean: rank 2, expected 1", 2, 10);
}

static void test_verify_views(void **state)
{
    fx *t = *state;
    gnode **n = t->f->nodes;
    n[9]->in[0] = n[7]; /* a view of a view */
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %9 view: a view of a view (%7)", 4, 33);
    n[9]->in[0] = n[1];
    n[9]->a.view.offset = NULL;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %9 view: no offset", 4, 33);
}

static void test_verify_fn(void **state)
{
    fx *t = *state;
    t->f->params[1].node = t->f->nodes[0];
    expect_verify_error(t,
                        "graph verifier: in 'rmsnorm', %1 input: parameter 1 ('g') does not refer "
                        "back to this node", 1, 25);
    t->f->params[1].node = t->f->nodes[1];
    t->f->outputs[0].inout_param = 0;
    expect_verify_error(t,
                        "graph verifier: in 'rmsnorm', output 'out' writes back to parameter 0, "
                        "which is not inout", 4, 12);
    t->f->outputs[0].inout_param = -1;
    t->f->outputs[0].node = NULL;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', output 'out' has no node in the function",
                        4, 12);
}

static void test_verify_elementwise(void **state)
{
    fx *t = *state;
    t->f->elementwise = true;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', marked elementwise, but parameter 'x' is "
                           "not [*]", 1, 12);
    t->f->params[0].star = t->f->params[1].star = true;
    expect_verify_error(t, "graph verifier: in 'rmsnorm', %4 mean: not pointwise, in a function "
                           "marked elementwise", 2, 10);
}

static void test_verify_matmul(void **state)
{
    fx *t = *state;
    t->f = graph_fn_new(t->a, "mm");
    const tc_dim *K = dim_sym(t->dc, "K"), *M = dim_sym(t->dc, "M");
    const tc_dim *bmk[] = {t->N, M, K}, *kd[] = {K, t->D}, *bmd[] = {t->N, M, t->D};
    add_param(t, "a", 7, false, TC_F16, 3, bmk);
    add_param(t, "b", 20, false, TC_F16, 2, kd);
    gnode **P = t->f->nodes;
    gnode *mm = add(t, OP_matmul, TC_F16, 3, bmd, (gnode *[]){P[0], P[1]}, 2, 2, 14);
    assert_int_equal(verify(t), TC_OK);
    mm->shape[2] = K;
    expect_verify_error(t,
                        "graph verifier: in 'mm', %2 matmul: result dims are not (M, N) of its operands",
                        2, 14);
    mm->shape[2] = t->D;
    mm->in[1] = mm->in[0];
    expect_verify_error(t, "graph verifier: in 'mm', %2 matmul: inner dims differ", 2, 14);
    mm->in[1] = P[1];
    P[1]->dtype = TC_F32;
    t->f->params[1].dtype = TC_F32;
    expect_verify_error(t,
                        "graph verifier: in 'mm', %2 matmul: operand dtypes f16 and f32 and result "
                        "f16 differ", 2, 14);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_bind_ok),         T(test_bind_extra),
        T(test_bind_mismatch),   T(test_bind_rank),
        T(test_bind_unknown),    T(test_bind_bad_extra),
        T(test_bind_bad_sizes),  T(test_bind_constraint),
        T(test_bind_literal_and_expr_dims), T(test_bind_star),
        T(test_bind_no_syms),    T(test_print),
        T(test_print_leaves_and_attrs),     T(test_verify_ok),
        T(test_verify_structure), T(test_verify_pointwise_and_dtypes),
        T(test_verify_reduce),   T(test_verify_views),
        T(test_verify_fn),       T(test_verify_matmul),
        T(test_verify_elementwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
