/* test_fuse.c - the fusion rules (src/fuse), each positive and negative.
 *
 * Each case is a small program built with the real prelude (build_harness.h),
 * lowered and fused (lower_fn, lir_verify, fuse_fn, fuse_verify: a verifier
 * failure fails the test), and then judged on the ffn itself: how many
 * kernels, of which kind, which nodes share a kernel, and the recorded
 * decision with its reason.  Reasons are matched by a key word or two
 * ("cycle", "another row", "outer"), not whole sentences, so rewording the
 * explanations does not break the tests but dropping one does.  The last
 * test goes through the public API (tc_program_dump "fused" and "explain"),
 * the path the CLI and `tensorc explain` use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"
#include "fuse/fuse.h"
#include "lower/lir.h"
#include "tensorc.h"

/* --- running the pipeline up to fusion ------------------------------------------------ */

static ffn *lower_and_fuse(const gfn *g)
{
    lfn *l = lower_fn(g, g->dims, H.a, &H.d);
    lir_verify(l, &H.d);
    ffn *f = fuse_fn(l, NULL, H.a, &H.d);
    fuse_verify(f, &H.d);
    return f;
}

/* Build text (every function) and fuse function fn; any error fails. */
static ffn *fused(const char *text, const char *fn)
{
    const gfn *g = ok_fn(text, fn);
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        fail_msg("lowering or fusing '%s' failed (%s): %s", fn, tc_status_str(H.d.status),
                 H.d.msg ? H.d.msg : "");
    }
    ffn *f = lower_and_fuse(g);
    H.d.jb = NULL;
    return f;
}

static const char *explain(const ffn *f)
{
    tc_buf b;
    buf_init(&b, H.a);
    fuse_explain(&b, f);
    return buf_str(&b);
}

static const char *dump(const ffn *f)
{
    tc_buf b;
    buf_init(&b, H.a);
    fuse_print(&b, f);
    return buf_str(&b);
}

/* Fail, showing the fused dump and the explanation. */
#define FAIL_WITH(f, ...)                                                                  \
    do {                                                                                   \
        print_error("%s\n%s", dump(f), explain(f));                                        \
        fail_msg(__VA_ARGS__);                                                             \
    } while (0)

static void want_kernels(const ffn *f, int n)
{
    if (f->nk != n)
        FAIL_WITH(f, "want %d kernel(s), got %d", n, f->nk);
}

static void want_in_explain(const ffn *f, const char *text)
{
    if (!strstr(explain(f), text))
        FAIL_WITH(f, "explain lacks \"%s\"", text);
}

/* The number of recorded decisions that were (fused) or were not fused and
 * whose reason contains why. */
static int decisions(const ffn *f, bool fused_, const char *why)
{
    int n = 0;
    for (int i = 0; i < f->ndec; i++)
        n += f->dec[i].fused == fused_ && f->dec[i].why && strstr(f->dec[i].why, why);
    return n;
}

static void want_decision(const ffn *f, bool fused_, const char *why)
{
    if (decisions(f, fused_, why) == 0)
        FAIL_WITH(f, "no %s decision with a reason mentioning \"%s\"", fused_ ? "fused" : "refused",
                  why);
}

/* The decision between anchors p and c (either way round); NULL if none. */
static const fdecision *decision_between(const ffn *f, const lnode *p, const lnode *c)
{
    for (int i = 0; i < f->ndec; i++)
        if ((f->dec[i].producer == p && f->dec[i].consumer == c) ||
            (f->dec[i].producer == c && f->dec[i].consumer == p))
            return &f->dec[i];
    return NULL;
}

static const lnode *output_node(const ffn *f, const char *name)
{
    for (int i = 0; i < f->l->noutputs; i++)
        if (strcmp(f->l->outputs[i].name, name) == 0)
            return f->l->outputs[i].node;
    fail_msg("no output '%s'", name);
    return NULL;
}

/* The only node of kind k (and, for pointwise, op); fails unless exactly one. */
static const lnode *only_node(const ffn *f, lkind k, op_id op)
{
    const lnode *found = NULL;
    int n = 0;
    for (int i = 0; i < f->l->nnodes; i++) {
        const lnode *x = f->l->nodes[i];
        if (x->kind == k && (k != LK_POINTWISE || x->op == op)) {
            found = x;
            n++;
        }
    }
    if (n != 1)
        FAIL_WITH(f, "want one node of kind %d (op %d), found %d", (int)k, (int)op, n);
    return found;
}

static int kernel_of(const ffn *f, const lnode *n)
{
    int k = f->kernel_of[n->id];
    if (k < 0)
        FAIL_WITH(f, "%%%d is not an anchor", n->id);
    return k;
}

static bool kernel_inlines(const fkernel *k, op_id op)
{
    for (int i = 0; i < k->ninl; i++)
        if (k->inl[i]->kind == LK_POINTWISE && k->inl[i]->op == op)
            return true;
    return false;
}

/* --- pointwise + pointwise -------------------------------------------------------------- */

static void test_pointwise_chain(void **state)
{
    (void)state;
    /* a chain with no intermediate stores: everything inlined into the store */
    ffn *f = fused("fn f(x: f32[*]) -> f32[*] {\n"
                   "    return gelu(relu(x * 2 + 1) - 0.5) * 1.5\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->kind, KK_POINTWISE);
    assert_int_equal(f->k[0]->nstores, 1);
    assert_true(kernel_inlines(f->k[0], OP_gelu));
    assert_true(kernel_inlines(f->k[0], OP_relu));
    assert_non_null(strstr(f->k[0]->name, "tc_poi_"));

    /* an intermediate that is also an output: two stores, one kernel */
    f = fused("fn f(x: f32[N, D]) -> (a: f32[N, D], b: f32[N, D]) {\n"
              "    a = x * 2\n"
              "    return a, exp(a)\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nstores, 2);
    want_decision(f, true, "pointwise");
    const fdecision *d = decision_between(f, output_node(f, "a"), output_node(f, "b"));
    assert_non_null(d);
    assert_true(d->fused);
}

static void test_pointwise_domains_differ(void **state)
{
    (void)state;
    /* a stored [N, D] value read transposed by a [D, N] store */
    ffn *f = fused("fn f(x: f32[N, D]) -> (a: f32[N, D], b: f32[D, N]) {\n"
                   "    a = x * 2\n"
                   "    return a, a.T + 1\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_not_equal(kernel_of(f, output_node(f, "a")), kernel_of(f, output_node(f, "b")));
    want_decision(f, false, "domain");
    assert_int_equal(decisions(f, true, ""), 0);

    /* an [N] store read by an [N, D] store */
    f = fused("fn f(x: f32[N, D], v: f32[N]) -> (a: f32[N], b: f32[N, D]) {\n"
              "    a = exp(v)\n"
              "    return a, x * unsqueeze(a, 1)\n"
              "}\n", "f");
    want_kernels(f, 2);
    want_decision(f, false, "domain");
    const fdecision *d = decision_between(f, output_node(f, "a"), output_node(f, "b"));
    assert_non_null(d);
    assert_false(d->fused);

    /* [N] and [N, D] stores sharing an input: not merged horizontally either */
    f = fused("fn f(x: f32[N, D], v: f32[N]) -> (a: f32[N], b: f32[N, D]) {\n"
              "    return v * 2, x * unsqueeze(v, 1)\n"
              "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(decisions(f, true, ""), 0);
}

/* --- reductions: prologue and epilogue ------------------------------------------------------ */

static void test_prologue(void **state)
{
    (void)state;
    /* pointwise producers inlined into a row reduction's loads */
    ffn *f = fused("fn f(x: f32[N, D]) -> f32[N] {\n"
                   "    return sum(exp(x * 2), axis=1)\n"
                   "}\n", "f");
    want_kernels(f, 1);
    const fkernel *k = f->k[0];
    assert_int_equal(k->kind, KK_REDUCE);
    assert_true(k->inner);
    assert_int_equal(k->nreds, 1);
    assert_true(kernel_inlines(k, OP_exp));
    assert_true(kernel_inlines(k, OP_mul));
    assert_non_null(strstr(k->name, "tc_red_"));

    /* a prologue that is also stored (an output): the reduction's first pass
     * writes it */
    f = fused("fn f(x: f32[N, D]) -> (a: f32[N, D], s: f32[N]) {\n"
              "    a = exp(x)\n"
              "    return a, sum(a, axis=1)\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nstores, 2);
    want_decision(f, true, "prologue");

    /* into an outer-axis (column) reduction too */
    f = fused("fn f(x: f32[N, D]) -> f32[D] {\n"
              "    return sum(exp(x), axis=0)\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->kind, KK_REDUCE);
    assert_false(f->k[0]->inner);
    assert_true(kernel_inlines(f->k[0], OP_exp));
}

static void test_prologue_refused(void **state)
{
    (void)state;
    /* a matmul feeding a reduction stays a separate (extern) kernel */
    ffn *f = fused("fn f(x: f32[N, K], w: f32[K, M]) -> f32[N] {\n"
                   "    return sum(x @ w, axis=1)\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_EXTERN);
    assert_int_equal(f->k[1]->kind, KK_REDUCE);
    want_decision(f, false, "barrier");
}

static void test_row_epilogue(void **state)
{
    (void)state;
    /* softmax: an element-level epilogue after two reductions over the rows */
    ffn *f = fused("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                   "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
                   "    return e / sum(e, axis=-1, keepdim=true)\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->kind, KK_REDUCE);
    assert_true(f->k[0]->inner);
    assert_int_equal(f->k[0]->nreds, 2);
    assert_int_equal(f->k[0]->nstores, 1);
    assert_true(fuse_is_element(f->k[0], output_node(f, "out")));
    want_decision(f, true, "epilogue");

    /* a row-level store (mean = sum / n) */
    f = fused("fn f(x: f32[N, D]) -> f32[N] {\n"
              "    return sum(x, axis=1) / D\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_false(fuse_is_element(f->k[0], output_node(f, "out")));

    /* a row-level store after an outer-axis reduction is fine too */
    f = fused("fn f(x: f32[N, D]) -> f32[D] {\n"
              "    return sum(x, axis=0) * 2\n"
              "}\n", "f");
    want_kernels(f, 1);
}

static void test_outer_axis_epilogue_refused(void **state)
{
    (void)state;
    ffn *f = fused("fn f(x: f32[N, D]) -> f32[N, D] {\n"
                   "    return x - mean(x, axis=0, keepdim=true)\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_REDUCE);
    assert_false(f->k[0]->inner);
    assert_int_equal(f->k[1]->kind, KK_POINTWISE);
    const lnode *red = only_node(f, LK_REDUCE, 0);
    assert_int_not_equal(kernel_of(f, red), kernel_of(f, output_node(f, "out")));
    const fdecision *d = decision_between(f, red, output_node(f, "out"));
    if (!d || d->fused || !strstr(d->why, "outer"))
        FAIL_WITH(f, "want the sum -> sub pair refused for the outer axis");
    want_in_explain(f, "outer");
}

/* --- two reductions over the same rows ----------------------------------------------------- */

static void test_same_rows(void **state)
{
    (void)state;
    /* layernorm: mean and var, one kernel; mean's sum is shared with var's
     * (hash-consed), so two reductions in all */
    ffn *f = fused("fn f(x: f32[N, D], w: f32[D], b: f32[D], eps: f32 = 1e-5) -> f32[N, D] {\n"
                   "    mu = mean(x, axis=-1, keepdim=true)\n"
                   "    return (x - mu) * rsqrt(var(x, axis=-1, keepdim=true, correction=0) + eps)"
                   " * w + b\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nreds, 2);
    want_decision(f, true, "same rows");

    /* the normalized residual: two norms over the same rows, one kernel */
    f = fused("fn f(x: f32[N, D], h: f32[N, D], a: f32[D]) -> f32[N, D] {\n"
              "    return l2_normalize(x + a * l2_normalize(h - x))\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nreds, 2);

    /* independent reductions over the same rows: one kernel, two outputs */
    f = fused("fn f(x: f32[N, D]) -> (s: f32[N], m: f32[N]) {\n"
              "    return sum(x, axis=1), max(x, axis=1)\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nreds, 2);
    assert_int_equal(f->k[0]->nstores, 2);
}

static void test_different_axes(void **state)
{
    (void)state;
    ffn *f = fused("fn f(x: f32[N, D]) -> (s: f32[N], m: f32[D]) {\n"
                   "    return sum(x, axis=1), max(x, axis=0)\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_not_equal(kernel_of(f, output_node(f, "s")), kernel_of(f, output_node(f, "m")));
    assert_int_equal(decisions(f, true, ""), 0);
}

/* --- whole-tensor reductions ------------------------------------------------------------------ */

static void test_full_reduction(void **state)
{
    (void)state;
    /* a prologue and a scalar epilogue: one kernel */
    ffn *f = fused("fn f(x: f32[N, D]) -> f32 {\n"
                   "    return sum(x * x) / N\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->kind, KK_REDUCE);
    assert_int_equal(f->k[0]->mask, 3u);
    assert_true(kernel_inlines(f->k[0], OP_mul));

    /* an element-level epilogue would need every block's result: refused */
    f = fused("fn f(x: f32[N, D]) -> f32[N, D] {\n"
              "    return x - sum(x)\n"
              "}\n", "f");
    want_kernels(f, 2);
    const lnode *red = only_node(f, LK_REDUCE, 0);
    assert_int_not_equal(kernel_of(f, red), kernel_of(f, output_node(f, "out")));
    want_decision(f, false, "whole-tensor");
    want_decision(f, false, "grid-wide");

    /* a second whole-tensor reduction that needs the first one's result */
    f = fused("fn f(x: f32[N]) -> f32 {\n"
              "    return sum(x - sum(x))\n"
              "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_REDUCE);
    assert_int_equal(f->k[1]->kind, KK_REDUCE);
    assert_int_equal(f->k[0]->nreds + f->k[1]->nreds, 2);
    want_decision(f, false, "whole-tensor");
    want_decision(f, false, "grid-wide");
}

/* --- extern barrier ---------------------------------------------------------------------------- */

static void test_extern_barrier(void **state)
{
    (void)state;
    ffn *f = fused("fn f(x: f32[N, K], w: f32[K, M], b: f32[M]) -> f32[N, M] {\n"
                   "    return gelu(x @ w + b)\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_EXTERN);
    assert_non_null(f->k[0]->ext);
    assert_int_equal(f->k[0]->ext->kind, LK_MATMUL);
    assert_int_equal(f->k[1]->kind, KK_POINTWISE);
    assert_true(kernel_inlines(f->k[1], OP_add));
    const lnode *mm = only_node(f, LK_MATMUL, 0);
    const fdecision *d = decision_between(f, mm, output_node(f, "out"));
    if (!d || d->fused || !strstr(d->why, "barrier"))
        FAIL_WITH(f, "want matmul -> gelu refused as a barrier");

    /* pointwise work on the matmul's inputs is a kernel of its own, stored */
    f = fused("fn f(x: f32[N, K], w: f32[K, M]) -> f32[N, M] {\n"
              "    return exp(x) @ w\n"
              "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_POINTWISE);
    assert_int_equal(f->k[1]->kind, KK_EXTERN);
    want_decision(f, false, "barrier");
}

/* --- cycles ------------------------------------------------------------------------------------ */

static void test_matmul_epilogue(void **state)
{
    (void)state;
    /* f16 with M a constant <= 16: the generated kernel is certain, so the
     * bias, activation and residual add run in it as its epilogue */
    ffn *f = fused("fn f(x: f16[16, K], w: f16[K, N], b: f16[N], r: f16[16, N]) -> f16[16, N] {\n"
                   "    return silu(x @ w + b) + r\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->kind, KK_EXTERN);
    assert_int_equal(f->k[0]->nstores, 1);
    assert_true(kernel_inlines(f->k[0], OP_silu));
    want_decision(f, true, "epilogue of the matmul");

    /* a product with another matmul: one epilogue, the other product stored */
    f = fused("fn f(x: f16[3, K], w1: f16[K, N], w3: f16[K, N]) -> f16[3, N] {\n"
              "    return silu(x @ w1) * (x @ w3)\n"
              "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(f->k[0]->kind, KK_EXTERN);
    assert_int_equal(f->k[1]->kind, KK_EXTERN);
    want_decision(f, false, "another matmul");

    /* M symbolic (cuBLAS above 16 at launch), M > 16, or f32 (cuBLAS): a barrier */
    const char *apart[] = {
        "fn f(x: f16[M, K], w: f16[K, N], b: f16[N]) -> f16[M, N] {\n    return x @ w + b\n}\n",
        "fn f(x: f16[17, K], w: f16[K, N], b: f16[N]) -> f16[17, N] {\n    return x @ w + b\n}\n",
        "fn f(x: f32[4, K], w: f32[K, N], b: f32[N]) -> f32[4, N] {\n    return x @ w + b\n}\n",
    };
    for (size_t i = 0; i < sizeof apart / sizeof *apart; i++) {
        f = fused(apart[i], "f");
        want_kernels(f, 2);
        want_decision(f, false, "certain at compile time");
    }

    /* the product read at another element than the one being stored */
    f = fused("fn f(x: f16[16, 16], w: f16[16, 16]) -> f16[16, 16] {\n"
              "    y = x @ w\n"
              "    return y + transpose(y, 0, 1)\n"
              "}\n", "f");
    want_kernels(f, 2);
    want_decision(f, false, "another element");

    /* a reduction of the product is no epilogue */
    f = fused("fn f(x: f16[16, K], w: f16[K, N]) -> f16[16] {\n"
              "    return sum(x @ w, axis=1)\n"
              "}\n", "f");
    want_kernels(f, 2);
    want_decision(f, false, "barrier");
}

static void test_cycle(void **state)
{
    (void)state;
    /* y's kernel feeds the matmul, whose result the final add reads: putting
     * the add into y's kernel would make that kernel both feed and read the
     * matmul */
    ffn *f = fused("fn f(x: f32[N, N], w: f32[N, N]) -> f32[N, N] {\n"
                   "    y = x * 2\n"
                   "    return y + y @ w\n"
                   "}\n", "f");
    want_kernels(f, 3);
    const lnode *y = only_node(f, LK_POINTWISE, OP_mul);
    const lnode *out = output_node(f, "out");
    const lnode *mm = only_node(f, LK_MATMUL, 0);
    assert_int_not_equal(kernel_of(f, y), kernel_of(f, out));
    assert_true(kernel_of(f, y) < kernel_of(f, mm));
    assert_true(kernel_of(f, mm) < kernel_of(f, out));
    const fdecision *d = decision_between(f, y, out);
    if (!d || d->fused || !strstr(d->why, "cycle"))
        FAIL_WITH(f, "want y -> add refused for a cycle");
    want_in_explain(f, "cycle");

    /* without the matmul in between there is no cycle: one kernel */
    f = fused("fn f(x: f32[N, N], w: f32[N, N]) -> (y: f32[N, N], z: f32[N, N]) {\n"
              "    y = x * 2\n"
              "    return y, y + w\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(decisions(f, false, "cycle"), 0);
}

/* --- horizontal fusion ------------------------------------------------------------------------- */

static void test_horizontal(void **state)
{
    (void)state;
    ffn *f = fused("fn f(x: f32[N, D]) -> (a: f32[N, D], b: f32[N, D]) {\n"
                   "    return x + 1, x * 2\n"
                   "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nstores, 2);
    assert_int_equal(f->k[0]->nreads, 1);
    want_decision(f, true, "horizontal");

    /* AdamW: three updated buffers from one kernel */
    f = fused("fn f(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
              "      lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
              "    p = p * (1 - lr * wd)\n"
              "    m = beta1 * m + (1 - beta1) * g\n"
              "    v = beta2 * v + (1 - beta2) * g * g\n"
              "    mhat = m / (1 - beta1 ** step)\n"
              "    vhat = v / (1 - beta2 ** step)\n"
              "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(f->k[0]->nstores, 3);
    assert_int_equal(f->k[0]->nreads, 4);
}

static void test_horizontal_refused(void **state)
{
    (void)state;
    /* no common input: nothing is saved by merging */
    ffn *f = fused("fn f(x: f32[N, D], y: f32[N, D]) -> (a: f32[N, D], b: f32[N, D]) {\n"
                   "    return x + 1, y * 2\n"
                   "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(decisions(f, true, ""), 0);

    /* a common input, but the domains differ ([N, D] and [D, N]) */
    f = fused("fn f(x: f32[N, D]) -> (a: f32[N, D], b: f32[D, N]) {\n"
              "    return x * 2, x.T + 1\n"
              "}\n", "f");
    want_kernels(f, 2);
    assert_int_equal(decisions(f, true, ""), 0);
}

/* --- a reduction read at another row ------------------------------------------------------------ */

static void test_other_row(void **state)
{
    (void)state;
    /* row n of the result reads the max of every row (m.T): a block per row
     * cannot see the others' maxima */
    ffn *f = fused("fn f(x: f32[N, N]) -> f32[N, N] {\n"
                   "    m = max(x, axis=1, keepdim=true)\n"
                   "    return x - m.T\n"
                   "}\n", "f");
    want_kernels(f, 2);
    const lnode *red = only_node(f, LK_REDUCE, 0);
    assert_int_not_equal(kernel_of(f, red), kernel_of(f, output_node(f, "out")));
    want_decision(f, false, "another row");
    want_in_explain(f, "another row");

    /* the same program reading its own row's max fuses */
    f = fused("fn f(x: f32[N, N]) -> f32[N, N] {\n"
              "    m = max(x, axis=1, keepdim=true)\n"
              "    return x - m\n"
              "}\n", "f");
    want_kernels(f, 1);
    assert_int_equal(decisions(f, false, "another row"), 0);

    /* a permuted read through a 3-D reduction: the sum over axis 2 of
     * [A, A, B], read as [a1, a0] */
    f = fused("fn f(x: f32[A, A, B]) -> f32[A, A, B] {\n"
              "    s = sum(x, axis=2, keepdim=true)\n"
              "    return x / permute(s, 1, 0, 2)\n"
              "}\n", "f");
    want_kernels(f, 2);
    want_decision(f, false, "another row");
}

/* --- through the API: tc_program_dump "fused" and "explain" ------------------------------------ */

static const char API_SRC[] =
    "fn cyc(x: f32[N, N], w: f32[N, N]) -> f32[N, N] {\n"
    "    y = x * 2\n"
    "    return y + y @ w\n"
    "}\n"
    "fn smax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "fn center(x: f32[N, D]) -> f32[N, D] {\n"
    "    return x - mean(x, axis=0, keepdim=true)\n"
    "}\n";

static int count_of(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
        n++;
    return n;
}

static void test_api_dumps(void **state)
{
    (void)state;
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = NULL;
    tc_status st = tc_compile(ctx, API_SRC, strlen(API_SRC), "api.tc", &p);
    if (st != TC_OK)
        fail_msg("%s", tc_errmsg(ctx));
    const char *out;

    assert_int_equal(tc_program_dump(p, "fused", "smax", &out), TC_OK);
    assert_int_equal(count_of(out, "\n  kernel "), 1);
    assert_non_null(strstr(out, "reduces "));
    assert_non_null(strstr(out, "-> out"));
    assert_int_equal(tc_program_dump(p, "explain", "smax", &out), TC_OK);
    assert_true(strncmp(out, "fn smax: 1 kernel", 17) == 0);
    assert_non_null(strstr(out, "epilogue"));

    assert_int_equal(tc_program_dump(p, "fused", "cyc", &out), TC_OK);
    assert_int_equal(count_of(out, "\n  kernel "), 3);
    assert_non_null(strstr(out, "extern matmul"));
    assert_int_equal(tc_program_dump(p, "explain", "cyc", &out), TC_OK);
    assert_true(strncmp(out, "fn cyc: 3 kernels", 17) == 0);
    assert_non_null(strstr(out, "cycle"));
    assert_non_null(strstr(out, "barrier"));

    assert_int_equal(tc_program_dump(p, "explain", "center", &out), TC_OK);
    assert_true(strncmp(out, "fn center: 2 kernels", 20) == 0);
    assert_non_null(strstr(out, "outer"));

    /* every function at once: one explanation each, in file order */
    assert_int_equal(tc_program_dump(p, "explain", NULL, &out), TC_OK);
    const char *a = strstr(out, "fn cyc:"), *b = strstr(out, "fn smax:"), *c = strstr(out, "fn center:");
    assert_true(a && b && c && a < b && b < c);

    /* a prelude function as the entry: its x: T[*] is rank 1 there, so
     * log_softmax is over the whole tensor: the max, the sum that needs it
     * and the element-level result are three kernels by the rules above */
    assert_int_equal(tc_program_dump(p, "fused", "log_softmax", &out), TC_OK);
    assert_int_equal(count_of(out, "\n  kernel "), 3);
    assert_int_equal(tc_program_dump(p, "explain", "log_softmax", &out), TC_OK);
    assert_non_null(strstr(out, "grid-wide"));

    tc_program_free(p);
    tc_ctx_free(ctx);
}

/* --- issue 11: valid programs the compiler could not build ------------------------------ */

static const char *const ISSUE11_SRC =
    /* a reduction's epilogue read at shifted rows (concat of slices) and
     * reduced again: the tentative merge undone after find() had
     * compressed paths through it left a stale parent, and the kernels
     * formed a cycle */
    "fn cyc(x: f32[N, D]) -> (y: f32[N, D], m: f32[1, D]) {\n"
    "    y = x / (1 + exp(sum(x, axis=0, keepdim=true)))\n"
    "    z = concat(y[2:], y[:2], axis=0)\n"
    "    return y, min(z, axis=0, keepdim=true)\n"
    "}\n"
    /* BatchNorm statistics and softmax over axis 0: two column reductions
     * merged horizontally put an element-level store that needs the
     * first into the columns kernel's first pass */
    "fn bn(x: f32[N, D]) -> (y: f32[N, D], s: f32[D]) {\n"
    "    y = x - mean(x, axis=0, keepdim=true)\n"
    "    return y, mean(y * y, axis=0)\n"
    "}\n"
    "fn smc(x: f32[N, D]) -> (p: f32[N, D], s: f32[D]) {\n"
    "    p = softmax(x, axis=0)\n"
    "    return p, max(p, axis=0)\n"
    "}\n"
    /* independent updates of an elementwise function: one kernel (foreach) */
    "fn step(p: inout f32[*], m: inout f32[*], g: f32[*]) {\n"
    "    p = p - 0.1 * g\n"
    "    m = m * 0.5\n"
    "}\n";

static void test_issue11_programs(void **state)
{
    (void)state;
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = NULL;
    if (tc_compile(ctx, ISSUE11_SRC, strlen(ISSUE11_SRC), "issue11.tc", &p) != TC_OK)
        fail_msg("%s", tc_errmsg(ctx));
    const char *fns[] = {"cyc", "bn", "smc", "step"};
    const char *out;
    for (int i = 0; i < 4; i++)
        if (tc_program_dump(p, "cuda", fns[i], &out) != TC_OK)
            fail_msg("%s: %s", fns[i], tc_errmsg(ctx));
    /* the columns kernel that reduces mean(x) does not also store y */
    assert_int_equal(tc_program_dump(p, "fused", "bn", &out), TC_OK);
    assert_int_equal(count_of(out, "\n  kernel "), 2);
    assert_int_equal(tc_program_dump(p, "explain", "bn", &out), TC_OK);
    assert_non_null(strstr(out, "outer"));
    assert_int_equal(tc_program_dump(p, "fused", "step", &out), TC_OK);
    assert_int_equal(count_of(out, "\n  kernel "), 1);
    assert_int_equal(tc_program_dump(p, "sched", "step", &out), TC_OK);
    assert_non_null(strstr(out, "foreach"));
    assert_int_equal(tc_program_dump(p, "explain", "step", &out), TC_OK);
    assert_non_null(strstr(out, "elementwise function is one kernel"));
    tc_program_free(p);
    tc_ctx_free(ctx);
}

/* --- the budget (fuse.h) ------------------------------------------------------------------ */

/* n stacked layernorm + residual steps (tests/compile_time/gen.sh's) */
static const char *layernorm_stack(int n)
{
    tc_buf b;
    buf_init(&b, H.a);
    buf_puts(&b, "fn f(x: f32[R, D], w: f32[D], b: f32[D]) -> f32[R, D] {\n    h0 = x\n");
    for (int i = 0; i < n; i++)
        buf_printf(&b,
                   "    mu%d = mean(h%d, axis=-1, keepdim=true)\n"
                   "    v%d = mean((h%d - mu%d) * (h%d - mu%d), axis=-1, keepdim=true)\n"
                   "    h%d = h%d + (h%d - mu%d) * rsqrt(v%d + 1e-5) * w + b\n",
                   i, i, i, i, i, i, i, i + 1, i, i, i, i);
    buf_printf(&b, "    return h%d\n}\n", n);
    return buf_str(&b);
}

static void want_within(const ffn *f, const fuse_budget *bu)
{
    for (int i = 0; i < f->nk; i++)
        if (f->k[i]->passes > bu->max_passes || f->k[i]->work > bu->max_work)
            FAIL_WITH(f, "kernel %d: %d passes, %d work (budget %d, %d)", i, f->k[i]->passes,
                      f->k[i]->work, bu->max_passes, bu->max_work);
}

static void test_budget_passes(void **state)
{
    (void)state;
    /* before the budget: one kernel of 24 passes recomputing the stack */
    ffn *f = fused(layernorm_stack(12), "f");
    want_within(f, &fuse_default_budget);
    if (f->nk < 3 || f->nk > 12)
        FAIL_WITH(f, "want 3 to 12 kernels, got %d", f->nk);
    want_in_explain(f, "budget");
    want_in_explain(f, "reduction passes in one kernel");
    /* each split says which limit it hit */
    int limited = 0;
    for (int i = 0; i < f->ndec; i++)
        limited += f->dec[i].limit != NULL;
    if (limited == 0)
        FAIL_WITH(f, "no decision records the limit it hit");

    /* a smaller budget: two passes a kernel, one layer each */
    fuse_budget small = fuse_default_budget;
    small.max_passes = 2;
    const gfn *g = ok_fn(layernorm_stack(6), "f");
    lfn *l = lower_fn(g, g->dims, H.a, &H.d);
    ffn *f2 = fuse_fn_budget(l, &small, H.a, &H.d);
    fuse_verify(f2, &H.d);
    want_within(f2, &small);
    want_kernels(f2, 6);
}

static void test_budget_inline(void **state)
{
    (void)state;
    /* a softmax-like chain: without stored intermediates every kernel
     * after the first would recompute the chain from x */
    tc_buf b;
    buf_init(&b, H.a);
    buf_puts(&b, "fn f(x: f32[R, D]) -> f32[R, D] {\n    h0 = x\n");
    for (int i = 0; i < 40; i++)
        buf_printf(&b, "    h%d = exp(h%d - max(h%d, axis=-1, keepdim=true)) / "
                       "sum(exp(h%d - max(h%d, axis=-1, keepdim=true)), axis=-1, keepdim=true)\n",
                   i + 1, i, i, i, i);
    buf_puts(&b, "    return h40\n}\n");
    ffn *f = fused(buf_str(&b), "f");
    want_within(f, &fuse_default_budget);
    if (f->ncut == 0)
        FAIL_WITH(f, "no value stored by the inline limit");
    want_in_explain(f, "budget (inline)");
    /* no kernel reads the chain's input after the first ones: the stored values cut it */
    int reads_x = 0;
    for (int i = 0; i < f->nk; i++)
        for (int j = 0; j < f->k[i]->nreads; j++)
            reads_x += f->k[i]->reads[j]->kind == LK_INPUT;
    if (reads_x > 3)
        FAIL_WITH(f, "%d kernels read x", reads_x);
}

/* Independent whole-tensor reductions share one kernel (the old check
 * refused any row-level reader of both). */
static void test_full_independent(void **state)
{
    (void)state;
    ffn *f = fused("fn f(x: f32[N]) -> f32 { return sum(x) + max(x * x) }", "f");
    want_kernels(f, 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_pointwise_chain),
        T(test_pointwise_domains_differ),
        T(test_prologue),
        T(test_prologue_refused),
        T(test_row_epilogue),
        T(test_outer_axis_epilogue_refused),
        T(test_same_rows),
        T(test_different_axes),
        T(test_full_reduction),
        T(test_extern_barrier),
        T(test_matmul_epilogue),
        T(test_cycle),
        T(test_horizontal),
        T(test_horizontal_refused),
        T(test_other_row),
        T(test_budget_passes),
        T(test_budget_inline),
        T(test_full_independent),
        cmocka_unit_test(test_api_dumps),
        cmocka_unit_test(test_issue11_programs),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
