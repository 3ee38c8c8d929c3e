/* test_graph.c - graph_build: names, inlined calls, the prelude, inout,
 * several results, outputs, CSE, constant folding, limits, and the exact
 * text and location of every semantic error.
 *
 * Programs are parsed with ast_parse and built inside a protected call; an
 * error comes back as "LINE:COL: message" so each test states both. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"

/* ---- names, calls, prelude ---- */

static void test_names_and_locations(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                "    y = x * 2\n"
                "    z = exp(y)\n"
                "    return z\n"
                "}\n");
    assert_string_equal(f->name, "f");
    assert_int_equal(f->nparams, 1);
    assert_string_equal(f->params[0].name, "x");
    assert_false(f->params[0].scalar);
    gnode *z = out(f, "out");
    assert_int_equal(z->op, OP_exp);
    assert_string_equal(z->name, "z");
    assert_int_equal(z->loc.line, 3);
    assert_int_equal(z->loc.col, 9);
    gnode *y = z->in[0];
    assert_int_equal(y->op, OP_mul);
    assert_string_equal(y->name, "y");
    assert_int_equal(y->loc.col, 11); /* the '*' */
    assert_ptr_equal(y->in[0], f->params[0].node);
    assert_string_equal(y->in[0]->name, "x");
    assert_int_equal(f->nsyms, 2);
    assert_string_equal(f->syms[0], "N");
    assert_string_equal(f->syms[1], "D");
    assert_false(f->elementwise);
    /* nodes are in topological order with ids equal to positions */
    for (int i = 0; i < f->nnodes; i++) {
        assert_int_equal(f->nodes[i]->id, i);
        for (int k = 0; k < f->nodes[i]->nin; k++)
            assert_true(f->nodes[i]->in[k]->id < i);
    }
}

static void test_calls_inlined(void **state)
{
    (void)state;
    gfn *f = ok_fn("fn sq(v: f32[N]) -> f32[N] {\n"
                   "    return v * v\n"
                   "}\n"
                   "fn f(x: f32[M], y: f32[M]) -> f32[M] {\n"
                   "    return sq(x) + sq(y)\n"
                   "}\n",
                   "f");
    gnode *r = out(f, "out");
    assert_int_equal(r->op, OP_add);
    assert_int_equal(count_op(f, OP_mul), 2);
    /* the callee's nodes carry the callee's location */
    assert_int_equal(r->in[0]->op, OP_mul);
    assert_int_equal(r->in[0]->loc.line, 2);
    assert_ptr_equal(r->in[0]->in[0], f->params[0].node);
    assert_ptr_equal(r->in[1]->in[0], f->params[1].node);
    assert_string_equal(type_of(r), "f32[M]");
    /* both functions are entries */
    assert_int_equal(H.g->nfns, 2);
    assert_non_null(graph_find(H.g, "sq"));
}

static void test_callee_dims_bind_to_caller_dims(void **state)
{
    (void)state;
    /* N and D inside the callee name the caller's sizes; using D as a
     * number gives the caller's dim */
    gfn *f = ok_fn("fn avg(x: f32[N, D]) -> f32[N] {\n"
                   "    return sum(x, axis=1) / D\n"
                   "}\n"
                   "fn f(a: f32[B, 7]) -> f32[B] {\n"
                   "    return avg(a)\n"
                   "}\n",
                   "f");
    gnode *r = out(f, "out");
    assert_int_equal(r->op, OP_div);
    assert_int_equal(r->in[1]->op, OP_const);
    assert_int_equal(r->in[1]->a.cnst.i, 7);
    gfn *g = graph_find(H.g, "avg");
    gnode *q = out(g, "out");
    assert_int_equal(q->in[1]->op, OP_dimval);
    assert_string_equal(dim_str(H.a, q->in[1]->a.dim), "D");
    assert_true(q->in[1]->weak);
    assert_string_equal(type_of(q), "f32[N]");
}

static void test_custom_prelude_and_shadowing(void **state)
{
    (void)state;
    const char *pre = "fn twice(x: T[*]) -> T[*] {\n"
                      "    return x + x\n"
                      "}\n"
                      "fn thrice(x: T[*]) -> T[*] {\n"
                      "    return twice(x) + x\n"
                      "}\n";
    assert_int_equal(try_build("fn f(x: f32[N]) -> f32[N] {\n    return thrice(x)\n}\n", pre, NULL),
                     TC_OK);
    gfn *f = H.g->fns[0];
    assert_int_equal(count_op(f, OP_add), 2);
    assert_int_equal(H.g->nfns, 1); /* prelude functions are not entries */
    /* the user's twice shadows the prelude's, also inside thrice */
    assert_int_equal(try_build("fn twice(x: f32[N]) -> f32[N] {\n    return x * 2\n}\n"
                               "fn f(x: f32[N]) -> f32[N] {\n    return thrice(x)\n}\n",
                               pre, "f"),
                     TC_OK);
    f = H.g->fns[0];
    assert_int_equal(count_op(f, OP_mul), 1);
    assert_int_equal(count_op(f, OP_add), 1);
    /* a prelude function can be built as an entry when named */
    assert_int_equal(try_build("fn f(x: f32[N]) -> f32[N] {\n    return x\n}\n", pre, "thrice"),
                     TC_OK);
    assert_int_equal(H.g->nfns, 1);
    assert_string_equal(H.g->fns[0]->name, "thrice");
    assert_true(H.g->fns[0]->params[0].star);
    assert_string_equal(type_of(H.g->fns[0]->params[0].node), "f32[*]");
    /* no such function */
    assert_int_equal(try_build("fn f(x: f32[N]) -> f32[N] {\n    return x\n}\n", pre, "thrise"),
                     TC_ERR_NOT_FOUND);
    assert_string_equal(H.d.brief, "no function named 'thrise'; did you mean 'thrice'?");
}

static void test_real_prelude_softmax(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: bf16[N, D]) -> bf16[N, D] {\n    return softmax(x, axis=0)\n}\n");
    gnode *r = out(f, "out");
    assert_int_equal(r->op, OP_cast);
    assert_int_equal(r->dtype, TC_BF16);
    gnode *dv = r->in[0];
    assert_int_equal(dv->op, OP_div);
    assert_int_equal(dv->dtype, TC_F32);
    assert_int_equal(count_op(f, OP_rmax), 1);
    assert_int_equal(count_op(f, OP_sum), 1);
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i]->op == OP_sum) {
            assert_int_equal(f->nodes[i]->a.red.naxes, 1);
            assert_int_equal(f->nodes[i]->a.red.axes[0], 0); /* axis=0 reached the callee */
            assert_true(f->nodes[i]->a.red.keepdim);
        }
    /* the default axis (-1) of the prelude */
    f = ok("fn f(x: f32[N, D]) -> f32[N, D] {\n    return log_softmax(x)\n}\n");
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i]->op == OP_sum)
            assert_int_equal(f->nodes[i]->a.red.axes[0], 1);
    /* f32 input: T(x) of an f32 value is the value itself, no casts */
    assert_int_equal(count_op(f, OP_cast), 0);
}

static void test_real_prelude_linear_and_layernorm(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[B, S, I], w: f32[O, I], b: f32[O]) -> f32[B, S, O] {\n"
                "    return linear(x, w, b)\n"
                "}\n");
    gnode *r = out(f, "out");
    assert_int_equal(r->op, OP_add);
    assert_int_equal(count_op(f, OP_matmul), 1);
    assert_string_equal(type_of(r), "f32[B, S, O]");
    f = ok("fn f(x: bf16[N, D], w: f32[D], b: f32[D]) -> bf16[N, D] {\n"
           "    return layernorm(x, w, b, eps=1e-6)\n"
           "}\n");
    r = out(f, "out");
    assert_int_equal(r->dtype, TC_BF16);
    assert_int_equal(count_op(f, OP_var), 1);
    for (int i = 0; i < f->nnodes; i++)
        if (f->nodes[i]->op == OP_var)
            assert_int_equal(f->nodes[i]->a.red.correction, 0);
}

static void test_inout(void **state)
{
    (void)state;
    static const char text[] = "fn step(p: inout f32[*], g: f32[*], lr: f32 = 0.1) -> f32 {\n"
                               "    p = p - lr * g\n"
                               "    return sum(p)\n"
                               "}\n"
                               "fn f(w: inout f32[N, D], g: f32[N, D]) -> f32 {\n"
                               "    a = step(w, g)\n"
                               "    b = step(w, g, lr=0.01)\n"
                               "    return a + b\n"
                               "}\n";
    gfn *f = ok_fn(text, "f");
    /* step is generic and called: a helper, not built as an entry with the file */
    assert_null(graph_find(H.g, "step"));
    assert_int_equal(f->noutputs, 2);
    assert_string_equal(f->outputs[0].name, "out");
    assert_int_equal(f->outputs[0].inout_param, -1);
    assert_string_equal(f->outputs[1].name, "w");
    assert_int_equal(f->outputs[1].inout_param, 0);
    assert_true(f->params[0].inout);
    /* w after two steps: (w - 0.1 g) - 0.01 g */
    gnode *w = f->outputs[1].node;
    assert_int_equal(w->op, OP_sub);
    gnode *w1 = w->in[0];
    assert_int_equal(w1->op, OP_sub);
    assert_ptr_equal(w1->in[0], f->params[0].node);
    assert_int_equal(w->in[1]->op, OP_mul);
    assert_int_equal(w->in[1]->in[0]->op, OP_const);
    assert_int_equal(w->in[1]->in[0]->dtype, TC_F32);
    assert_float_equal(w->in[1]->in[0]->a.cnst.f, (double)0.01f, 0);
    /* the sum over a [*] argument of rank 2 reduces both axes */
    gnode *a = out(f, "out")->in[0];
    assert_int_equal(a->op, OP_sum);
    assert_int_equal(a->a.red.naxes, 2);
    assert_ptr_equal(a->in[0], w1);

    /* the entry step, asked for by name: [*] is rank 1 of "*", elementwise
     * apart from the sum */
    assert_int_equal(try_build(text, NULL, "step"), TC_OK);
    gfn *s = graph_find(H.g, "step");
    assert_non_null(s);
    assert_true(s->params[0].star);
    assert_int_equal(s->params[0].rank, 1);
    assert_string_equal(dim_str(H.a, s->params[0].shape[0]), "*");
    assert_int_equal(s->nsyms, 1);
    assert_string_equal(s->syms[0], "*");
    assert_true(s->params[2].scalar);
    assert_true(s->params[2].has_default);
    assert_float_equal(s->params[2].def, (double)0.1f, 0);
    assert_false(s->elementwise);
}

static void test_inout_elementwise_adamw(void **state)
{
    (void)state;
    gfn *f = ok("fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
                "         lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
                "    p = p * (1 - lr * wd)\n"
                "    m = beta1 * m + (1 - beta1) * g\n"
                "    v = beta2 * v + (1 - beta2) * g * g\n"
                "    mhat = m / (1 - beta1 ** step)\n"
                "    vhat = v / (1 - beta2 ** step)\n"
                "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
                "}\n");
    assert_true(f->elementwise);
    assert_int_equal(f->noutputs, 3);
    assert_string_equal(f->outputs[0].name, "p");
    assert_string_equal(f->outputs[1].name, "m");
    assert_string_equal(f->outputs[2].name, "v");
    for (int i = 0; i < 3; i++)
        assert_string_equal(type_of(f->outputs[i].node), "f32[*]");
    /* 1 - lr*wd is a weak f32 scalar: p stays f32 */
    gnode *p1 = f->outputs[0].node->in[0];
    assert_int_equal(p1->op, OP_mul);
    assert_true(p1->in[1]->weak);
    assert_int_equal(p1->in[1]->dtype, TC_F32);
    assert_int_equal(p1->in[1]->rank, 0);
    assert_int_equal(count_op(f, OP_view), 0);
}

static void test_inout_assign_literal_broadcasts(void **state)
{
    (void)state;
    gfn *f = ok("fn zero(p: inout f16[N, D]) {\n    p = 0\n}\n");
    gnode *p = f->outputs[0].node;
    assert_int_equal(p->op, OP_view);
    assert_string_equal(type_of(p), "f16[N, D]");
    assert_int_equal(p->in[0]->op, OP_const);
    assert_int_equal(p->in[0]->dtype, TC_F16);
}

static void test_multi_result(void **state)
{
    (void)state;
    gfn *f = ok_fn("fn stats(x: f32[N, D]) -> (mu: f32[N], rstd: f32[N]) {\n"
                   "    mu = mean(x, axis=-1)\n"
                   "    return mu, rsqrt(var(x, axis=-1, correction=0) + 1e-5)\n"
                   "}\n"
                   "fn f(x: f32[N, D]) -> f32[N] {\n"
                   "    a, b = stats(x)\n"
                   "    return a * b\n"
                   "}\n",
                   "f");
    gnode *r = out(f, "out");
    assert_int_equal(r->in[0]->op, OP_mean);
    assert_int_equal(r->in[1]->op, OP_rsqrt);
    gfn *s = graph_find(H.g, "stats");
    assert_int_equal(s->noutputs, 2);
    assert_string_equal(s->outputs[0].name, "mu");
    assert_string_equal(s->outputs[1].name, "rstd");
    assert_int_equal(s->outputs[1].loc.line, 3);
    assert_int_equal(s->outputs[1].loc.col, 16);
    /* return g(x) forwards all of g's results */
    f = ok_fn("fn two(x: f32[N]) -> (a: f32[N], b: f32[N]) {\n    return x, -x\n}\n"
              "fn f(x: f32[N]) -> (p: f32[N], q: f32[N]) {\n    return two(x)\n}\n",
              "f");
    assert_int_equal(out(f, "q")->op, OP_neg);
}

static void test_unnamed_results_and_scalar_result(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N]) -> f32 {\n    return 1.5\n}\n");
    gnode *r = out(f, "out");
    /* a literal result adopts the declared dtype */
    assert_int_equal(r->op, OP_const);
    assert_int_equal(r->dtype, TC_F32);
    assert_false(r->weak);
}

static void test_cse(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                "    a = exp(x * x)\n"
                "    b = exp(x * x)\n"
                "    return a + b + softmax(x) + softmax(x)\n"
                "}\n");
    assert_int_equal(count_op(f, OP_mul), 1);
    assert_int_equal(count_op(f, OP_exp), 2); /* exp(x*x) once, softmax's exp once */
    assert_int_equal(count_op(f, OP_rmax), 1);
    gnode *r = out(f, "out");
    assert_ptr_equal(r->in[0]->in[1], r->in[1]); /* softmax(x) + softmax(x): the same node */
    gnode *ab = r->in[0]->in[0];
    assert_int_equal(ab->op, OP_add);
    assert_ptr_equal(ab->in[0], ab->in[1]);
    /* equal views are shared too */
    f = ok("fn f(x: f32[N, D]) -> f32[D, N] {\n    return x.T + transpose(x, 0, 1)\n}\n");
    assert_int_equal(count_op(f, OP_view), 1);
}

static void test_constant_folding(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                "    return x * (1 - 0.5) + 2 ** 3 + (7 % -3) + sum(x, axis=1 - 2, keepdim=!false)\n"
                "}\n");
    gnode *r = out(f, "out");
    /* ((x * 0.5) + 8) + -2 + view(sum) */
    gnode *a = r->in[0];
    gnode *b = a->in[0];
    gnode *c = b->in[0];
    assert_int_equal(c->op, OP_mul);
    assert_int_equal(c->in[1]->op, OP_const);
    assert_float_equal(c->in[1]->a.cnst.f, 0.5, 0);
    assert_true(c->in[1]->weak);
    assert_int_equal(c->in[1]->dtype, TC_F64);
    assert_int_equal(b->in[1]->op, OP_const);
    assert_int_equal(b->in[1]->dtype, TC_I64);
    assert_int_equal(b->in[1]->a.cnst.i, 8);
    assert_int_equal(a->in[1]->a.cnst.i, -2); /* Python's %: sign of the divisor */
    assert_int_equal(r->in[1]->op, OP_view);
    assert_int_equal(r->in[1]->in[0]->op, OP_sum);
    assert_int_equal(r->in[1]->in[0]->a.red.axes[0], 1);
    /* int / int is true division, folded to a weak f32 */
    f = ok("fn f(x: f32[N]) -> f32[N] {\n    return x + 7 / 2\n}\n");
    gnode *k = out(f, "out")->in[1];
    assert_int_equal(k->op, OP_const);
    assert_int_equal(k->dtype, TC_F32);
    assert_float_equal(k->a.cnst.f, 3.5, 0);
    /* constants made while working out axes do not stay in the graph */
    f = ok("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=-(3 - 2))\n}\n");
    assert_int_equal(f->nnodes, 2);
}

static void test_dims_as_values(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=-1) / (N * D - 1)\n}\n");
    gnode *d = out(f, "out")->in[1];
    assert_int_equal(d->op, OP_dimval);
    assert_int_equal(d->dtype, TC_I64);
    assert_string_equal(dim_str(H.a, d->a.dim), "N*D - 1");
}

static void test_dtype_variables(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: T[N], y: T[N], s: T) -> T[N] {\n    return T(x + y * s)\n}\n");
    assert_int_equal(f->params[0].dtype, TC_F32);
    assert_int_equal(f->params[2].dtype, TC_F32);
    assert_int_equal(out(f, "out")->dtype, TC_F32);
    /* in a callee T binds to the argument's dtype; a literal adopts it */
    f = ok_fn("fn g(x: T[*], s: T) -> T[*] {\n    return x * s\n}\n"
              "fn f(x: f16[N]) -> f16[N] {\n    return g(x, 2.5)\n}\n",
              "f");
    gnode *r = out(f, "out");
    assert_int_equal(r->dtype, TC_F16);
    assert_int_equal(r->in[1]->op, OP_const);
    assert_int_equal(r->in[1]->dtype, TC_F16);
    assert_true(r->in[1]->weak);
}

/* graph_build_ex over text (no prelude); like try_build. */
static tc_status try_build_dts(const char *text, const char *fn, const tc_dtypebind *dts, int ndts)
{
    jmp_buf jb;
    H.d.jb = &jb;
    H.d.ncalls = 0;
    H.g = NULL;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        return H.d.status;
    }
    H.src = (tc_source){"t.tc", text, strlen(text)};
    ast_program *p = ast_parse(&H.src, H.a, &H.d);
    H.g = graph_build_ex(p, NULL, 0, fn, dts, ndts, H.a, &H.d);
    H.d.jb = NULL;
    return TC_OK;
}

static void test_dtype_bindings(void **state)
{
    (void)state;
    const char *src = "fn f(x: T[N], g: U[N], s: T) -> T[N] {\n    return T(f32(x) * g) * s\n}\n"
                      "fn h(x: f32[N]) -> f32[N] {\n    return x\n}\n";
    tc_dtypebind bf16[] = {{"T", TC_BF16}};
    assert_int_equal(try_build_dts(src, "f", bf16, 1), TC_OK);
    gfn *f = graph_find(H.g, "f");
    assert_non_null(f);
    /* T is bf16 in the parameters, the cast and the result; U stays f32 */
    assert_int_equal(f->params[0].dtype, TC_BF16);
    assert_int_equal(f->params[0].node->dtype, TC_BF16);
    assert_int_equal(f->params[1].dtype, TC_F32);
    assert_int_equal(f->params[2].dtype, TC_BF16);
    gnode *r = out(f, "out");
    assert_int_equal(r->op, OP_mul);
    assert_string_equal(type_of(r), "bf16[N]");
    assert_int_equal(r->in[0]->op, OP_cast);
    assert_int_equal(r->in[0]->dtype, TC_BF16);
    /* several bindings */
    tc_dtypebind two[] = {{"U", TC_F16}, {"T", TC_F64}};
    assert_int_equal(try_build_dts(src, "f", two, 2), TC_OK);
    f = graph_find(H.g, "f");
    assert_int_equal(f->params[0].dtype, TC_F64);
    assert_int_equal(f->params[1].dtype, TC_F16);
    assert_string_equal(type_of(out(f, "out")), "f64[N]");
    /* without fn a binding applies where its letter is used */
    assert_int_equal(try_build_dts(src, NULL, bf16, 1), TC_OK);
    assert_int_equal(H.g->nfns, 2);
    assert_int_equal(graph_find(H.g, "f")->params[0].dtype, TC_BF16);
    assert_int_equal(graph_find(H.g, "h")->params[0].dtype, TC_F32);
    /* a result-only letter bound: the returned value must have that dtype */
    assert_int_equal(try_build_dts("fn k(x: f32[N]) -> R[N] {\n    return f16(x)\n}\n", "k",
                                   (tc_dtypebind[]){{"R", TC_F16}}, 1),
                     TC_OK);
    assert_string_equal(type_of(out(graph_find(H.g, "k"), "out")), "f16[N]");

    /* errors: a letter the entry does not use, bad names, twice, no dtype */
    assert_int_equal(try_build_dts(src, "f", (tc_dtypebind[]){{"Q", TC_BF16}}, 1),
                     TC_ERR_INVALID_ARG);
    assert_string_equal(errtext(), "0:0: function 'f' has no dtype variable 'Q' (it has T, U)");
    assert_int_equal(try_build_dts(src, "h", bf16, 1), TC_ERR_INVALID_ARG);
    assert_string_equal(errtext(), "0:0: function 'h' has no dtype variable 'T' (it has none)");
    assert_int_equal(try_build_dts(src, "f", (tc_dtypebind[]){{"TT", TC_BF16}}, 1),
                     TC_ERR_INVALID_ARG);
    assert_string_equal(errtext(), "0:0: a dtype variable is one capital letter, not 'TT'");
    assert_int_equal(try_build_dts(src, "f", (tc_dtypebind[]){{"T", TC_BF16}, {"T", TC_F16}}, 2),
                     TC_ERR_INVALID_ARG);
    assert_string_equal(errtext(), "0:0: dtype variable 'T' is bound twice");
    assert_int_equal(try_build_dts(src, "f", (tc_dtypebind[]){{"T", TC_DT_NONE}}, 1),
                     TC_ERR_INVALID_ARG);
    assert_string_equal(errtext(), "0:0: dtype variable 'T' is bound to no dtype");
    /* a binding does not hide a type error: x is bf16, h wants f32 */
    assert_int_equal(try_build_dts("fn h(x: f32[N]) -> f32[N] {\n    return x\n}\n"
                                   "fn f(x: T[N]) -> T[N] {\n    return h(x)\n}\n",
                                   "f", bf16, 1),
                     TC_ERR_COMPILE);
    assert_string_equal(errtext(), "5:14: argument 'x' of 'h' is bf16[N], but the parameter is f32[N]");
}

static void test_entry_defaults_as_compile_time_values(void **state)
{
    (void)state;
    gfn *f = ok("fn f(x: f32[N, D], axis: i32 = -1, k: bool = true) -> f32[N, 1] {\n"
                "    return sum(x, axis=axis, keepdim=k)\n"
                "}\n");
    assert_true(f->params[1].has_default);
    assert_float_equal(f->params[1].def, -1, 0);
    assert_float_equal(f->params[2].def, 1, 0);
    gnode *r = out(f, "out");
    assert_int_equal(r->a.red.axes[0], 1);
    assert_true(r->a.red.keepdim);
    /* the scalars stay parameters */
    assert_int_equal(f->params[1].node->op, OP_scalar);
    assert_true(f->params[1].node->weak);
}

static void test_call_statement_with_inout(void **state)
{
    (void)state;
    /* a call standing alone: its outputs are the callee's inout parameters */
    tc_status st = try_build("fn inc(p: inout f32[*]) {\n    p = p + 1\n}\n"
                             "fn f(w: inout f32[N]) {\n    inc(w)\n    inc(w)\n}\n",
                             "", "f");
    assert_int_equal(st, TC_OK);
    gfn *f = H.g->fns[0];
    assert_int_equal(count_op(f, OP_add), 2);
    /* w's final value is the second add, written back */
    assert_int_equal(f->noutputs, 1);
    assert_string_equal(f->outputs[0].name, "w");
    assert_int_equal(f->outputs[0].node->op, OP_add);
    assert_int_equal(f->outputs[0].node->in[0]->op, OP_add);
}

/* ---- limits ---- */

static void test_inline_depth_limit(void **state)
{
    (void)state;
    tc_buf b;
    buf_init(&b, H.a);
    for (int i = 0; i < 70; i++)
        buf_printf(&b, "fn h%d(x: f32[N]) -> f32[N] {\n    return h%d(x)\n}\n", i, i + 1);
    buf_printf(&b, "fn h70(x: f32[N]) -> f32[N] {\n    return x\n}\n");
    assert_int_equal(try_build(buf_str(&b), "", "h0"), TC_ERR_LIMIT);
    assert_string_equal(H.d.brief, "calls nested more than 64 deep");
    assert_int_equal(H.d.loc.line, 3 * 64 + 2);
    /* 64 deep is fine */
    assert_int_equal(try_build(buf_str(&b), "", "h6"), TC_OK);
}

static void test_exponential_inlining_limit(void **state)
{
    (void)state;
    /* each level calls the next twice: 2^40 calls, but few distinct nodes */
    tc_buf b;
    buf_init(&b, H.a);
    buf_printf(&b, "fn h40(x: f32[N]) -> f32[N] {\n    return x + 1\n}\n");
    for (int i = 39; i >= 0; i--)
        buf_printf(&b, "fn h%d(x: f32[N]) -> f32[N] {\n    return h%d(x) * h%d(x)\n}\n", i, i + 1,
                   i + 1);
    assert_int_equal(try_build(buf_str(&b), "", "h0"), TC_ERR_LIMIT);
    assert_string_equal(H.d.brief, "program too large: more than 262144 calls after inlining");
    /* located at the call in the entry function */
    assert_int_equal(H.d.loc.line, 3 * 40 + 2);
    assert_int_equal(H.d.loc.col, 12);
}

static void test_node_limit(void **state)
{
    (void)state;
    /* 2^15 calls of a leaf making 60 distinct nodes (its constants differ) */
    tc_buf b;
    buf_init(&b, H.a);
    buf_printf(&b, "fn g0(x: f32[N], k: f32) -> f32[N] {\n    return x * k");
    for (int i = 1; i < 20; i++)
        buf_printf(&b, " + x * (k + %d)", i);
    buf_printf(&b, "\n}\n");
    for (int i = 1; i <= 15; i++)
        buf_printf(&b, "fn g%d(x: f32[N], k: f32) -> f32[N] {\n    return g%d(x, k) + g%d(x, k + %d)\n}\n",
                   i, i - 1, i - 1, 20 << (i - 1));
    buf_printf(&b, "fn f(x: f32[N]) -> f32[N] {\n    return g15(x, 0.0)\n}\n");
    assert_int_equal(try_build(buf_str(&b), "", "f"), TC_ERR_LIMIT);
    assert_string_equal(H.d.brief, "program too large: more than 1048576 graph nodes after inlining calls");
    /* located at the call in the entry function */
    assert_int_equal(H.d.loc.line, 3 * 16 + 2);
    assert_int_equal(H.d.loc.col, 12);
}

static void test_work_limit(void **state)
{
    (void)state;
    /* 8192 calls of a 1000-statement body: few nodes, few calls, but more
     * than 2^24 expressions to evaluate */
    tc_buf b;
    buf_init(&b, H.a);
    buf_puts(&b, "fn g0(x: f32[N]) -> f32[N] {\n");
    for (int k = 0; k < 1000; k++)
        buf_printf(&b, "    a%d = x * %d\n", k, k % 7);
    buf_puts(&b, "    return a999\n}\n");
    for (int i = 1; i <= 13; i++)
        buf_printf(&b, "fn g%d(x: f32[N]) -> f32[N] {\n    return g%d(x) + g%d(x)\n}\n", i, i - 1,
                   i - 1);
    buf_puts(&b, "fn f(x: f32[N]) -> f32[N] {\n    return g13(x)\n}\n");
    assert_int_equal(try_build(buf_str(&b), "", "f"), TC_ERR_LIMIT);
    assert_string_equal(H.d.brief,
                        "program too large: inlining calls expands to more than 16777216 expressions");
    assert_int_equal(H.d.loc.line, 1003 + 3 * 13 + 2);
    assert_int_equal(H.d.loc.col, 12);
}

static void test_nesting_through_calls_limit(void **state)
{
    (void)state;
    /* each function nests 150 calls of exp around a call of the next: a
     * 64 * 150-deep recursion unless it is cut off */
    tc_buf b;
    buf_init(&b, H.a);
    for (int i = 0; i < 63; i++) {
        buf_printf(&b, "fn h%d(x: f32[N]) -> f32[N] {\n    return ", i);
        for (int k = 0; k < 150; k++)
            buf_puts(&b, "exp(");
        buf_printf(&b, "h%d(x)", i + 1);
        for (int k = 0; k < 150; k++)
            buf_putc(&b, ')');
        buf_puts(&b, "\n}\n");
    }
    buf_puts(&b, "fn h63(x: f32[N]) -> f32[N] {\n    return x\n}\n");
    assert_int_equal(try_build(buf_str(&b), "", "h0"), TC_ERR_LIMIT);
    assert_string_equal(H.d.brief, "expressions nested too deeply through calls (more than 4096 levels)");
    assert_int_equal(H.d.loc.line, 2);
    assert_int_equal(H.d.loc.col, 612);
    /* 20 levels of it are fine */
    assert_int_equal(try_build(buf_str(&b), "", "h43"), TC_OK);
    assert_int_equal(H.g->fns[0]->nnodes, 1 + 20 * 150);
}

/* ---- errors ---- */

static void test_error_names(void **state)
{
    (void)state;
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    y = xx + 1\n    return y\n}\n"),
                        "2:9: undefined name 'xx'; did you mean 'x'?");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return q\n}\n"), "2:12: undefined name 'q'");
    assert_string_equal(err("fn f(value: f32[N]) -> f32[N] {\n    return valeu * 2\n}\n"),
                        "2:12: undefined name 'valeu'; did you mean 'value'?");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x * softmax\n}\n"),
                        "2:16: 'softmax' is a function; call it with arguments");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x(1)\n}\n"),
                        "2:12: 'x' is not a function");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return sofmax(x)\n}\n"),
                        "2:12: undefined function 'sofmax'; did you mean 'softmax'?");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return U(x)\n}\n"),
                        "2:12: dtype variable 'U' does not appear in the signature of 'f'");
    assert_string_equal(err("fn exp(x: f32[N]) -> f32[N] {\n    return x\n}\n"),
                        "1:4: 'exp' is a builtin function and cannot be redefined");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x\n}\n"
                            "fn f(x: f32[N]) -> f32[N] {\n    return x\n}\n"),
                        "4:4: function 'f' is already defined at 1:4");
    assert_string_equal(err("fn f(x: f32[N], x: f32[N]) -> f32[N] {\n    return x\n}\n"),
                        "1:17: parameter 'x' is declared twice in 'f'");
    assert_string_equal(err("fn f(x: f32[N, 0]) -> f32[N] {\n    return x\n}\n"),
                        "1:16: dims must be positive, but dim 1 of 'x' is 0");
    assert_string_equal(err("fn f(x: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]) -> f32[1] {\n    return x\n}\n"),
                        "1:9: parameter 'x' has rank 9, more than the maximum 8");
    assert_string_equal(err("fn f(x: f32[N]) -> (a: f32[N], a: f32[N]) {\n    return x, x\n}\n"),
                        "1:32: result 'a' is declared twice in 'f'");
}

static void test_error_assignment(void **state)
{
    (void)state;
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    y = x\n    y = x * 2\n    return y\n}\n"),
                        "3:5: 'y' is already assigned (at 2:5); a name is assigned only once");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    x = x * 2\n    return x\n}\n"),
                        "2:5: cannot assign to parameter 'x': only inout parameters can be reassigned");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    N = 3\n    return x\n}\n"),
                        "2:5: cannot assign to 'N': it is a dim of the signature");
    assert_string_equal(err("fn f(p: inout f16[N]) {\n    p = f32(p) * 2\n}\n"),
                        "2:5: cannot assign f32[N] to inout parameter 'p', which is f16[N]");
    assert_string_equal(err("fn f(p: inout f32[N], q: f32[N, N]) {\n    p = q\n}\n"),
                        "2:5: cannot assign f32[N, N] to inout parameter 'p', which is f32[N]");
}

static void test_error_calls(void **state)
{
    (void)state;
    const char *g = "fn g(x: f32[N], y: f32[N], s: f32 = 1.0) -> f32[N] {\n    return x * y * s\n}\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(a, a, 1.0, 2.0)\n}\n", g);
    assert_string_equal(err(buf), "5:25: 'g' takes 3 arguments, but 4 were given");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(a, a, t=2.0)\n}\n", g);
    assert_string_equal(err(buf), "5:20: 'g' has no parameter named 't'");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(a, x=a)\n}\n", g);
    assert_string_equal(err(buf), "5:17: argument 'x' of 'g' is given twice");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(a)\n}\n", g);
    assert_string_equal(err(buf), "5:12: missing argument 'y' in call to 'g'");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M], b: f32[K]) -> f32[M] {\n    return g(a, b)\n}\n", g);
    assert_string_equal(err(buf), "5:17: argument 'y' of 'g' is f32[K], but the parameter is f32[N] with N = M");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M, M]) -> f32[M] {\n    return g(a, a)\n}\n", g);
    assert_string_equal(err(buf), "5:14: argument 'x' of 'g' is f32[M, M], but the parameter is f32[N]");
    snprintf(buf, sizeof buf, "%sfn f(a: i32[M]) -> f32[M] {\n    return g(a, a)\n}\n", g);
    assert_string_equal(err(buf), "5:14: argument 'x' of 'g' is i32[M], but the parameter is f32[N]");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(a, a, a)\n}\n", g);
    assert_string_equal(err(buf), "5:20: argument 's' of 'g' is f32[M], but the parameter is f32");
    snprintf(buf, sizeof buf, "%sfn f(a: f32[M]) -> f32[M] {\n    return g(1.0, a)\n}\n", g);
    assert_string_equal(err(buf), "5:14: argument 'x' of 'g' is f32, but the parameter is f32[N]");
    assert_string_equal(err("fn g(x: T[N], y: T[N]) -> T[N] {\n    return x + y\n}\n"
                            "fn f(a: f32[M], b: f16[M]) -> f32[M] {\n    return g(a, b)\n}\n"),
                        "5:17: argument 'y' of 'g' is f16[M], but T is f32 (from argument 'x')");
    assert_string_equal(err("fn g(x: f32[4]) -> f32[4] {\n    return x\n}\n"
                            "fn f(a: f32[5]) -> f32[4] {\n    return g(a)\n}\n"),
                        "5:14: argument 'x' of 'g' is f32[5], but the parameter is f32[4]");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return exp(x, x)\n}\n"),
                        "2:19: 'exp' takes 1 argument, but 2 were given");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return where(x > 0, x)\n}\n"),
                        "2:12: missing argument 'b' in call to 'where'");
}

static void test_error_recursion(void **state)
{
    (void)state;
    assert_string_equal(err("fn g(x: f32[N]) -> f32[N] {\n    return g(x)\n}\n"),
                        "2:12: recursive call to 'g'");
    assert_string_equal(err("fn a(x: f32[N]) -> f32[N] {\n    return b(x)\n}\n"
                            "fn b(x: f32[N]) -> f32[N] {\n    return x + a(x)\n}\n"),
                        "5:16: recursive call to 'a'");
    /* the note names the call site */
    assert_non_null(strstr(H.d.msg, "t.tc:2:12: note: in call to 'b' from here"));
}

/* Generic functions ([*], dtype variables) in a whole-file build (issue 11):
 * helpers are checked at their calls; one that nothing calls and that fails
 * as an entry point is left out and listed, not an error of the file;
 * recursion among generic functions is still reported. */
static void test_generic_functions(void **state)
{
    (void)state;
    static const char text[] = "fn lin(x: T[*], w: T[O, I]) -> T[*] {\n    return x @ w.T\n}\n"
                               "fn proj(x: f32[N, I], w: f32[O, I]) -> f32[N, O] {\n"
                               "    return lin(x, w)\n}\n"
                               "fn swap(a: f32[*]) -> f32[*] {\n    return a.T\n}\n"
                               "fn only_bf16(x: T[N]) -> bf16[N] {\n    return x\n}\n"
                               "fn scale(a: f32[*]) -> f32[*] {\n    return a * 2\n}\n";
    tc_status st = try_build(text, NULL, NULL);
    if (st != TC_ERR_COMPILE)
        fail_msg("want the whole file to report swap, got %d", (int)st);
    assert_string_equal(errtext(), "8:14: .T needs a tensor of rank 2 or more, but this is f32[*]");
    /* the build itself: proj and scale built, lin a helper, swap and only_bf16 left out */
    diag_clear(&H.d);
    tc_arena *a = arena_new(&H.d);
    tc_source src = {"t.tc", text, strlen(text)};
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb))
        fail_msg("build failed: %s", H.d.msg);
    tc_graph *g = graph_build(ast_parse(&src, a, &H.d), NULL, 0, NULL, a, &H.d);
    H.d.jb = NULL;
    assert_int_equal(g->nfns, 2);
    assert_string_equal(g->fns[0]->name, "proj");
    assert_string_equal(g->fns[1]->name, "scale");
    assert_int_equal(g->nunbuilt, 2);
    assert_string_equal(g->unbuilt[0], "swap");
    assert_string_equal(g->unbuilt[1], "only_bf16");
    arena_free(a);
    /* asked for by name with its binding, only_bf16 builds */
    static const tc_dtypebind bf = {"T", TC_BF16};
    H.d.jb = &jb;
    a = arena_new(&H.d);
    if (setjmp(jb))
        fail_msg("only_bf16 at T=bf16 failed: %s", H.d.msg);
    g = graph_build_ex(ast_parse(&src, a, &H.d), NULL, 0, "only_bf16", &bf, 1, a, &H.d);
    H.d.jb = NULL;
    assert_int_equal(g->nfns, 1);
    assert_int_equal(g->fns[0]->outputs[0].node->dtype, TC_BF16);
    arena_free(a);
    /* generic functions calling only each other: the recursion is reported */
    assert_string_equal(err("fn a(x: f32[*]) -> f32[*] {\n    return b(x)\n}\n"
                            "fn b(x: f32[*]) -> f32[*] {\n    return x + a(x)\n}\n"),
                        "5:16: recursive call to 'a'");
}

static void test_error_results(void **state)
{
    (void)state;
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x, x\n}\n"),
                        "2:5: function 'f' returns 2 values, but its signature declares 1");
    assert_string_equal(err("fn f(x: f32[N]) {\n    return x\n}\n"),
                        "2:5: function 'f' returns 1 value, but its signature declares 0");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    y = x + 1\n}\n"),
                        "3:1: missing return in 'f', which declares 1 result");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x\n    y = x\n}\n"),
                        "3:5: statement after 'return' is never run");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[N] {\n    return x\n}\n"),
                        "2:12: the result of 'f' is f32[N, D], but the signature declares f32[N]");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[D, N] {\n    return x\n}\n"),
                        "2:12: the result of 'f' is f32[N, D], but the signature declares f32[D, N]");
    assert_string_equal(err("fn f(x: i32[N]) -> (y: f32[N]) {\n    return x\n}\n"),
                        "2:12: result 'y' of 'f' is i32[N], but the signature declares f32[N]");
    assert_string_equal(err("fn two(x: f32[N]) -> (a: f32[N], b: f32[N]) {\n    return x, x\n}\n"
                            "fn f(x: f32[N]) -> f32[N] {\n    return two(x) + 1\n}\n"),
                        "5:12: 'two' returns 2 values, so it cannot be used in an expression");
    assert_string_equal(err("fn two(x: f32[N]) -> (a: f32[N], b: f32[N]) {\n    return x, x\n}\n"
                            "fn f(x: f32[N]) -> f32[N] {\n    y = two(x)\n    return y\n}\n"),
                        "5:5: 'two' returns 2 values, but 1 name is assigned");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    a, b = x\n    return a\n}\n"),
                        "2:5: cannot assign one value to 2 names");
}

static void test_error_inout(void **state)
{
    (void)state;
    const char *g = "fn inc(p: inout f32[*]) -> f32 {\n    p = p + 1\n    return sum(p)\n}\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sfn f(w: inout f32[N]) -> f32 {\n    return inc(w * 2)\n}\n", g);
    assert_string_equal(err(buf), "6:18: inout argument 'p' of 'inc' must be the name of a variable");
    snprintf(buf, sizeof buf, "%sfn f(w: f32[N]) -> f32 {\n    return inc(w)\n}\n", g);
    assert_string_equal(err(buf),
                        "6:16: cannot pass parameter 'w' to inout parameter 'p' of 'inc': it is not inout itself");
    assert_string_equal(err("fn f(s: inout f32) {\n    s = s + 1\n}\n"),
                        "1:6: inout parameter 's' must be a tensor, but it is the scalar f32");
    /* a local passed to an inout parameter is updated */
    snprintf(buf, sizeof buf, "%sfn f(w: f32[N]) -> f32[N] {\n    v = w * 2\n    s = inc(v)\n    return v\n}\n", g);
    gfn *f = ok_fn(buf, "f");
    assert_int_equal(out(f, "out")->op, OP_add);
}

static void test_error_compile_time_values(void **state)
{
    (void)state;
    assert_string_equal(err("fn f(x: f32[N, D], k: i32) -> f32[N] {\n    return sum(x, axis=k)\n}\n"),
                        "2:24: axis must be known at compile time, but 'k' is a run-time scalar "
                        "parameter of 'f' without a default");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=x)\n}\n"),
                        "2:24: axis must be a compile-time integer, not a tensor (f32[N, D])");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=1.0)\n}\n"),
                        "2:24: axis must be an integer, but it is the float 1");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=1, keepdim=1)\n}\n"),
                        "2:35: keepdim must be true or false, but it is i64 1");
    assert_string_equal(err("fn f(x: f32[N, D]) -> f32[N] {\n    return sum(x, axis=D)\n}\n"),
                        "2:24: axis must be a compile-time integer, but D is a size known only at run time");
    /* through a callee: the note points at the user's call */
    err("fn f(x: f32[N, D], a: i32) -> f32[N, D] {\n    return softmax(x, axis=a)\n}\n");
    assert_int_equal(H.d.loc.line, 13);
    assert_non_null(strstr(H.d.msg, "t.tc:2:12: note: in call to 'softmax' from here"));
    assert_string_equal(err("fn f(x: f32[N], s: f32 = x) -> f32[N] {\n    return x\n}\n"),
                        "1:26: the default of 's' must be a compile-time constant");
    assert_string_equal(err("fn f(x: f32[N] = 1.0) -> f32[N] {\n    return x\n}\n"),
                        "1:18: only scalar parameters can have a default, but 'x' is f32[N]");
}

static void test_error_misc_expressions(void **state)
{
    (void)state;
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x + (1, 2)\n}\n"),
                        "2:16: a tuple is only allowed as axes, a shape or the tensors of concat");
    assert_string_equal(err("fn f(x: i32[N]) -> i32[N] {\n    return x + 3 % 0\n}\n"),
                        "2:18: integer modulo by zero");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x.Y\n}\n"),
                        "2:14: unknown attribute '.Y' (the only one is .T)");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return x.T\n}\n"),
                        "2:14: .T needs a tensor of rank 2 or more, but this is f32[N]");
    assert_string_equal(err("fn f(x: i32[N]) -> i32[N] {\n    return x * 0 ** -1\n}\n"),
                        "2:18: integer 0 raised to a negative power");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return concat(axis=0)\n}\n"),
                        "2:12: 'concat' needs at least one tensor");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return concat(x, axis=0, axis=0)\n}\n"),
                        "2:30: argument 'axis' of 'concat' is given twice");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[N] {\n    return unsqueeze(x)\n}\n"),
                        "2:12: missing argument 'axis' in call to 'unsqueeze'");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[*] {\n    return reshape(x, 1, 1, 1, 1, 1, 1, 1, 1, N)\n}\n"),
                        "2:12: reshape to rank 9 exceeds the maximum rank 8");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[*] {\n    return broadcast_to(x, [1, 1, 1, 1, 1, 1, 1, 1, N])\n}\n"),
                        "2:12: broadcast_to rank 9 exceeds the maximum rank 8");
    assert_string_equal(err("fn f(x: f32[N]) -> f32[1, 1, 1, 1, 1, 1, 1, 1, N] {\n    return x\n}\n"),
                        "1:20: result of rank 9 is more than the maximum 8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_names_and_locations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_inlined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callee_dims_bind_to_caller_dims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_custom_prelude_and_shadowing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_prelude_softmax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_prelude_linear_and_layernorm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inout_elementwise_adamw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inout_assign_literal_broadcasts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unnamed_results_and_scalar_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_constant_folding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dims_as_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dtype_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dtype_bindings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_defaults_as_compile_time_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_statement_with_inout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_depth_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exponential_inlining_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nesting_through_calls_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_assignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_recursion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generic_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_inout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_compile_time_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_misc_expressions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
