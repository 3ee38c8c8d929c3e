/* test_shape.c - graph_build's shapes and dtypes: NumPy broadcasting over
 * symbolic dims (with explicit stride-0 views), reductions (axes, tuples,
 * negative axes, keepdim, dtype rules), matmul shapes and the promotion
 * table of docs/semantics.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"

/* ---- broadcasting ---- */

static void test_broadcast_views(void **state)
{
    (void)state;
    gnode *r = res("x: f32[N, D], g: f32[D]", "x * g");
    assert_string_equal(type_of(r), "f32[N, D]");
    assert_int_equal(r->op, OP_mul);
    assert_int_equal(r->in[0]->op, OP_input);
    gnode *v = r->in[1];
    assert_int_equal(v->op, OP_view);
    assert_string_equal(type_of(v), "f32[N, D]");
    assert_string_equal(strides_of(v), "[0, 1] +0");
    assert_int_equal(v->in[0]->op, OP_input);

    /* both sides stretch: [N, 1] + [1, D] */
    r = res("a: f32[N, 1], b: f32[1, D]", "a + b");
    assert_string_equal(type_of(r), "f32[N, D]");
    assert_string_equal(strides_of(r->in[0]), "[1, 0] +0");
    assert_string_equal(strides_of(r->in[1]), "[0, 1] +0");

    /* rank 3 against rank 1 and a size-1 middle dim */
    r = res("a: f32[B, 1, D], b: f32[N, 1]", "a - b");
    assert_string_equal(type_of(r), "f32[B, N, D]");
    assert_string_equal(strides_of(r->in[0]), "[D, 0, 1] +0");
    assert_string_equal(strides_of(r->in[1]), "[0, 1, 0] +0");

    /* scalars and rank-0 values need no view */
    r = res("x: f32[N, D], s: f32", "x * s + 1");
    assert_int_equal(count_op(graph_find(H.g, "f"), OP_view), 0);
    r = res("x: f32[N, D]", "x / sum(x)");
    assert_int_equal(r->in[1]->op, OP_sum);
    assert_int_equal(r->in[1]->rank, 0);

    /* equal symbolic shapes need no view either */
    r = res("x: f32[N, D], y: f32[N, D]", "x + y");
    assert_ptr_equal(r->in[1], graph_find(H.g, "f")->params[1].node);

    /* a broadcast of a view composes into one view of the base */
    r = res("x: f32[D, N]", "x.T + x[:, 1]");
    assert_int_equal(r->in[1]->op, OP_view);
    assert_int_equal(r->in[1]->in[0]->op, OP_input);
    assert_string_equal(strides_of(r->in[1]), "[0, N] +1");
    assert_string_equal(type_of(r), "f32[N, D]");
    assert_string_equal(strides_of(r->in[0]), "[1, N] +0");
}

static void test_broadcast_errors(void **state)
{
    (void)state;
    assert_string_equal(rerr("x: f32[N, D], g: f32[N]", "x * g"),
                        "2:14: shapes f32[N, D] and f32[N] do not broadcast (dim -1: D vs N)");
    assert_string_equal(rerr("x: f32[N, 4], g: f32[3, 4]", "x + g"),
                        "2:14: shapes f32[N, 4] and f32[3, 4] do not broadcast (dim -2: N vs 3)");
    assert_string_equal(rerr("c: bool[N], a: f32[N], b: f32[M]", "where(c, a, b)"),
                        "2:12: shapes bool[N] and f32[M] do not broadcast (dim -1: N vs M)");
    assert_string_equal(rerr("x: f32[N, D]", "broadcast_to(x, [N, 3])"),
                        "2:12: cannot broadcast f32[N, D] to [N, 3] (dim -1: D vs 3)");
}

static void test_where_and_clamp(void **state)
{
    (void)state;
    gnode *r = res("c: bool[N, 1], a: f16[N, D], b: f16[D]", "where(c, a, b)");
    assert_string_equal(type_of(r), "f16[N, D]");
    assert_int_equal(r->op, OP_where);
    assert_string_equal(strides_of(r->in[0]), "[1, 0] +0");
    assert_string_equal(strides_of(r->in[2]), "[0, 1] +0");
    assert_string_equal(rt("c: bool[N], a: f16[N], b: i32[N]", "where(c, a, b)"), "f16[N]");
    assert_string_equal(rt("c: bool[N], a: i32[N]", "where(c, a, 0.5)"), "f32[N]");
    assert_string_equal(rt("x: bf16[N]", "clamp(x, 0, 6)"), "bf16[N]");
    assert_string_equal(rt("x: i32[N]", "clamp(x, 0, 6)"), "i32[N]");
}

/* ---- reductions ---- */

static void test_reduction_shapes(void **state)
{
    (void)state;
    gnode *r = res("x: f32[A, B, C]", "sum(x, axis=-1)");
    assert_string_equal(type_of(r), "f32[A, B]");
    assert_int_equal(r->a.red.naxes, 1);
    assert_int_equal(r->a.red.axes[0], 2);
    assert_false(r->a.red.keepdim);

    r = res("x: f32[A, B, C]", "mean(x, axis=(2, 0), keepdim=true)");
    assert_string_equal(type_of(r), "f32[1, B, 1]");
    assert_int_equal(r->a.red.naxes, 2);
    assert_int_equal(r->a.red.axes[0], 0); /* sorted */
    assert_int_equal(r->a.red.axes[1], 2);
    assert_true(r->a.red.keepdim);

    r = res("x: f32[A, B, C]", "max(x, axis=[-2])");
    assert_int_equal(r->op, OP_rmax);
    assert_string_equal(type_of(r), "f32[A, C]");

    r = res("x: f32[A, B, C]", "prod(x)"); /* no axis: all */
    assert_string_equal(type_of(r), "f32");
    assert_int_equal(r->a.red.naxes, 3);

    r = res("x: f32[A, B]", "sum(x, 0, true)"); /* positional axis and keepdim */
    assert_string_equal(type_of(r), "f32[1, B]");

    r = res("x: f32[A, B]", "std(x, axis=1, correction=0)");
    assert_int_equal(r->op, OP_std);
    assert_int_equal(r->a.red.correction, 0);
    r = res("x: f32[A, B]", "var(x, axis=1)");
    assert_int_equal(r->a.red.correction, 1);

    r = res("x: f32[A, B]", "min(x, axis=0)");
    assert_int_equal(r->op, OP_rmin);
    r = res("x: f32[A, B], y: f32[A, B]", "min(x, y)"); /* two positional: pointwise */
    assert_int_equal(r->op, OP_min);
    assert_string_equal(type_of(r), "f32[A, B]");
    r = res("x: f32[A, B]", "logsumexp(x, axis=1, keepdim=true)");
    assert_int_equal(r->op, OP_logsumexp);
}

static void test_reduction_dtypes(void **state)
{
    (void)state;
    assert_string_equal(rt("x: i32[N]", "sum(x)"), "i64");
    assert_string_equal(rt("x: bool[N]", "sum(x)"), "i64");
    assert_string_equal(rt("x: i32[N]", "prod(x)"), "i64");
    assert_string_equal(rt("x: f16[N]", "sum(x)"), "f16");
    assert_string_equal(rt("x: i32[N]", "mean(x)"), "f32");
    assert_string_equal(rt("x: i64[N]", "var(x)"), "f32");
    assert_string_equal(rt("x: bool[N]", "logsumexp(x)"), "f32");
    assert_string_equal(rt("x: bf16[N]", "mean(x)"), "bf16");
    assert_string_equal(rt("x: i32[N]", "max(x)"), "i32");
    assert_string_equal(rt("x: f16[N, D]", "argmax(x, axis=1)"), "i64[N]");
    assert_string_equal(rt("x: f16[N, D]", "argmin(x)"), "i64");
}

static void test_reduction_errors(void **state)
{
    (void)state;
    assert_string_equal(rerr("x: f32[N, D]", "sum(x, axis=2)"),
                        "2:24: axis 2 is out of range for a tensor of rank 2 (f32[N, D])");
    assert_string_equal(rerr("x: f32[N, D]", "sum(x, axis=-3)"),
                        "2:24: axis -3 is out of range for a tensor of rank 2 (f32[N, D])");
    assert_string_equal(rerr("x: f32[N, D]", "sum(x, axis=(1, -1))"),
                        "2:28: axis 1 is given twice");
    assert_string_equal(rerr("x: f32[N, D]", "argmax(x, axis=(0, 1))"),
                        "2:22: 'argmax' takes one axis, but 2 were given");
    assert_string_equal(rerr("x: f32[N, D]", "sum(x, dim=1)"),
                        "2:19: 'sum' has no parameter named 'dim'");
    assert_string_equal(rerr("x: f32[N, D]", "sum(x, axis=1, correction=0)"),
                        "2:27: 'sum' has no parameter named 'correction'");
    assert_string_equal(rerr("x: f32[N, D]", "var(x, correction=-1)"),
                        "2:19: correction must be a small non-negative integer, but it is -1");
    assert_string_equal(rerr("x: f32[N, D]", "sum(axis=1)"), "2:12: missing argument 'x' in call to 'sum'");
}

/* ---- matmul ---- */

static void test_matmul_shapes(void **state)
{
    (void)state;
    gnode *r = res("a: f32[N, K], b: f32[K, M]", "a @ b");
    assert_int_equal(r->op, OP_matmul);
    assert_string_equal(type_of(r), "f32[N, M]");
    assert_string_equal(rt("a: f32[B, N, K], b: f32[K, M]", "a @ b"), "f32[B, N, M]");
    assert_string_equal(rt("a: f32[B, 1, N, K], b: f32[H, K, M]", "a @ b"), "f32[B, H, N, M]");
    assert_string_equal(rt("a: f32[N, K], b: f32[B, K, M]", "a @ b"), "f32[B, N, M]");
    /* rank-1 operands, as NumPy: the MATMUL node itself is always 2-D or more */
    r = res("a: f32[N, K], v: f32[K]", "a @ v");
    assert_string_equal(type_of(r), "f32[N]");
    assert_int_equal(r->op, OP_view);
    gnode *m = r->in[0];
    assert_int_equal(m->op, OP_matmul);
    assert_string_equal(type_of(m), "f32[N, 1]");
    assert_string_equal(type_of(m->in[1]), "f32[K, 1]");
    r = res("v: f32[K], b: f32[B, K, M]", "v @ b");
    assert_string_equal(type_of(r), "f32[B, M]");
    assert_string_equal(type_of(r->in[0]), "f32[B, 1, M]");
    r = res("u: f32[K], v: f32[K]", "u @ v");
    assert_string_equal(type_of(r), "f32");
    assert_string_equal(type_of(r->in[0]), "f32[1, 1]");
}

static void test_matmul_dtypes_and_errors(void **state)
{
    (void)state;
    gnode *r = res("a: f16[N, K], b: f32[K, M]", "a @ b");
    assert_int_equal(r->dtype, TC_F32);
    assert_int_equal(r->in[0]->op, OP_cast);
    assert_int_equal(r->in[0]->dtype, TC_F32);
    assert_int_equal(r->in[1]->op, OP_input);
    assert_string_equal(rt("a: bf16[N, K], b: f16[K, M]", "a @ b"), "f32[N, M]");
    assert_string_equal(rt("a: i32[N, K], b: i32[K, M]", "a @ b"), "i32[N, M]");
    assert_string_equal(rerr("a: f32[N, K], b: f32[M, D]", "a @ b"),
                        "2:14: shapes f32[N, K] and f32[M, D] do not match for '@' (inner dims K vs M)");
    assert_string_equal(rerr("a: f32[B, N, K], b: f32[C, K, M]", "a @ b"),
                        "2:14: shapes f32[B, N, K] and f32[C, K, M] do not match for '@' (batch dim -1: B vs C)");
    assert_string_equal(rerr("a: f32[N, K], s: f32", "a @ s"),
                        "2:14: '@' needs operands of rank 1 or more, but the right operand is f32");
}

/* ---- promotion ---- */

static void test_promotion_table(void **state)
{
    (void)state;
    /* literals adopt the tensor's dtype; weak operands only pick the category */
    assert_string_equal(rt("x: f16[N]", "x * 2"), "f16[N]");
    assert_string_equal(rt("x: f16[N]", "x * 2.5"), "f16[N]");
    assert_string_equal(rt("x: i32[N]", "x + 2"), "i32[N]");
    assert_string_equal(rt("x: i32[N]", "x * 0.5"), "f32[N]");
    assert_string_equal(rt("x: bool[N]", "x + 1"), "i64[N]");
    assert_string_equal(rt("x: f64[N]", "x + 0.1"), "f64[N]");
    /* scalar parameters are weak too */
    assert_string_equal(rt("p: f16[N], lr: f32", "p * lr"), "f16[N]");
    assert_string_equal(rt("p: i32[N], lr: f32", "p * lr"), "f32[N]");
    assert_string_equal(rt("p: i32[N], lr: f16", "p * lr"), "f16[N]");
    /* dims are weak i64 */
    assert_string_equal(rt("x: f16[N, D]", "x / D"), "f16[N, D]");
    assert_string_equal(rt("x: i32[N, D]", "x + D"), "i32[N, D]");
    /* strong operands */
    assert_string_equal(rt("a: f16[N], b: bf16[N]", "a + b"), "f32[N]");
    assert_string_equal(rt("a: f16[N], b: f32[N]", "a + b"), "f32[N]");
    assert_string_equal(rt("a: i32[N], b: i64[N]", "a * b"), "i64[N]");
    assert_string_equal(rt("a: i32[N], b: f16[N]", "a * b"), "f16[N]");
    assert_string_equal(rt("a: bool[N], b: i32[N]", "a + b"), "i32[N]");
    /* true division, comparisons, logic */
    assert_string_equal(rt("a: i32[N], b: i32[N]", "a / b"), "f32[N]");
    assert_string_equal(rt("a: i32[N], b: i32[N]", "a % b"), "i32[N]");
    assert_string_equal(rt("a: f16[N], b: f32[N]", "a < b"), "bool[N]");
    assert_string_equal(rt("a: f16[N]", "a == 0"), "bool[N]");
    assert_string_equal(rt("a: f32[N], b: i32[N]", "a && b"), "bool[N]");
    assert_string_equal(rt("a: f32[N]", "!a"), "bool[N]");
    /* unary float functions of ints give f32; others keep the dtype */
    assert_string_equal(rt("a: i32[N]", "exp(a)"), "f32[N]");
    assert_string_equal(rt("a: bool[N]", "sigmoid(a)"), "f32[N]");
    assert_string_equal(rt("a: i32[N]", "abs(a)"), "i32[N]");
    assert_string_equal(rt("a: f16[N]", "-a"), "f16[N]");
    assert_string_equal(rt("a: bf16[N]", "gelu(a)"), "bf16[N]");
    assert_string_equal(rt("a: i64[N]", "isnan(a)"), "bool[N]");
    assert_string_equal(rt("a: f16[N]", "pow(a, 2)"), "f16[N]");
    assert_string_equal(rt("a: f16[N]", "a ** 0.5"), "f16[N]");
    assert_string_equal(rt("a: f32[N], b: f32[N]", "atan2(a, b)"), "f32[N]");
    /* casts */
    gnode *r = res("a: f32[N]", "bf16(a)");
    assert_int_equal(r->op, OP_cast);
    assert_string_equal(type_of(r), "bf16[N]");
    r = res("a: f32[N]", "f32(a)");
    assert_int_equal(r->op, OP_input); /* a cast to its own dtype is the value */
    /* weak results are ordinary once returned: a float literal is f32 */
    assert_string_equal(rt("a: f32[N]", "1.5 * 2"), "f32");
    assert_string_equal(rt("a: f32[N]", "3 * 2"), "i64");
}

/* ---- concat ---- */

static void test_concat(void **state)
{
    (void)state;
    gnode *r = res("x: f32[N, D], y: f32[N, E]", "concat(x, y, axis=-1)");
    assert_int_equal(r->op, OP_concat);
    assert_int_equal(r->a.axis, 1);
    assert_int_equal(r->nin, 2);
    assert_string_equal(type_of(r), "f32[N, D + E]");
    r = res("x: f32[N, 4], y: f32[M, 4]", "concat([x, y, x])");
    assert_int_equal(r->a.axis, 0);
    assert_int_equal(r->nin, 3);
    assert_string_equal(type_of(r), "f32[2*N + M, 4]");
    assert_string_equal(rt("x: f16[N], y: f32[N]", "concat(x, y)"), "f32[2*N]");
    /* inputs may be views: slices of one tensor */
    r = res("x: f32[8, D]", "concat(x[4:], x[:4])");
    assert_string_equal(type_of(r), "f32[8, D]");
    assert_int_equal(r->in[0]->op, OP_view);
    assert_string_equal(rerr("x: f32[N, D], y: f32[M, D]", "concat(x, y, axis=1)"),
                        "2:12: concat along axis 1 needs the other dims equal, but got f32[N, D] and "
                        "f32[M, D] (dim 0: N vs M)");
    assert_string_equal(rerr("x: f32[N, D], y: f32[N]", "concat(x, y)"),
                        "2:12: concat needs tensors of one rank, but got f32[N, D] and f32[N]");
    assert_string_equal(rerr("x: f32[N], s: f32", "concat(x, s)"),
                        "2:22: 'concat' needs tensors of rank 1 or more, but this is f32");
    assert_string_equal(rerr("x: f32[N]", "concat(x, x, dim=0)"),
                        "2:25: 'concat' has no parameter named 'dim'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_broadcast_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broadcast_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_where_and_clamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduction_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduction_dtypes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reduction_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matmul_dtypes_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_promotion_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concat, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
