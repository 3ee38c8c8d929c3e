/* test_views.c - graph_build's views: strides and offsets of .T, permute,
 * transpose, slices with steps and negative bounds, integer indexing,
 * reshape as a view or a copy, (un)squeeze, broadcast_to, composition of
 * views, slice constraints on symbolic dims, and their errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"

/* "f32[2, 3] view [3, 1] +4 of %0": a view's type, strides, offset and base. */
static const char *view_desc(const gnode *v)
{
    if (v->op != OP_view)
        return arena_printf(H.a, "%s %s", type_of(v), op_table[v->op].name);
    return arena_printf(H.a, "%s view %s of %s", type_of(v), strides_of(v),
                        op_table[v->in[0]->op].name);
}

static const char *vd(const char *params, const char *expr) { return view_desc(res(params, expr)); }

static void test_transpose_permute(void **state)
{
    (void)state;
    assert_string_equal(vd("x: f32[N, D]", "x.T"), "f32[D, N] view [1, D] +0 of input");
    assert_string_equal(vd("x: f32[B, N, D]", "x.T"), "f32[B, D, N] view [N*D, 1, D] +0 of input");
    assert_string_equal(vd("x: f32[A, B, C]", "permute(x, 2, 0, 1)"),
                        "f32[C, A, B] view [1, B*C, C] +0 of input");
    assert_string_equal(vd("x: f32[A, B, C]", "permute(x, (1, 2, 0))"),
                        "f32[B, C, A] view [C, 1, B*C] +0 of input");
    assert_string_equal(vd("x: f32[A, B, C]", "transpose(x, 0, -1)"),
                        "f32[C, B, A] view [1, C, B*C] +0 of input");
    /* the identity permutation and a double transpose are the tensor itself */
    assert_string_equal(vd("x: f32[A, B, C]", "permute(x, 0, 1, 2)"), "f32[A, B, C] input");
    assert_string_equal(vd("x: f32[A, B]", "x.T.T"), "f32[A, B] input");
}

static void test_slices(void **state)
{
    (void)state;
    assert_string_equal(vd("x: f32[8, 6]", "x[2:6]"), "f32[4, 6] view [6, 1] +12 of input");
    assert_string_equal(vd("x: f32[8, 6]", "x[1:, ::2]"), "f32[7, 3] view [6, 2] +6 of input");
    assert_string_equal(vd("x: f32[8, 6]", "x[::3, 1:6:2]"), "f32[3, 3] view [18, 2] +1 of input");
    assert_string_equal(vd("x: f32[8, 6]", "x[-3:-1]"), "f32[2, 6] view [6, 1] +30 of input");
    assert_string_equal(vd("x: f32[8, 6]", "x[:, :]"), "f32[8, 6] input");
    /* symbolic dims: sizes stay symbolic */
    assert_string_equal(vd("x: f32[N, D]", "x[1:, ::2]"),
                        "f32[N - 1, (D + 1)/2] view [D, 2] +D of input");
    assert_string_equal(vd("x: f32[N, D]", "x[:, -4:]"), "f32[N, 4] view [D, 1] +D - 4 of input");
    assert_string_equal(vd("x: f32[N, D]", "x[:, 0:128]"), "f32[N, 128] view [D, 1] +0 of input");
}

static void test_slice_constraints(void **state)
{
    (void)state;
    gfn *f = ok(program("x: f32[N, D]", "x[:, 0:128]"));
    assert_int_equal(f->ncons, 1);
    assert_string_equal(dim_str(H.a, f->cons[0].dim), "D");
    assert_int_equal(f->cons[0].min, 128);
    assert_string_equal(f->cons[0].what, "slice end 128 of dim 1");
    assert_int_equal(f->cons[0].loc.line, 2);
    assert_int_equal(f->cons[0].loc.col, 19);
    /* x[2:-3] needs N >= 3 and N >= 2, and a non-empty slice: N - 5 >= 1 */
    f = ok(program("x: f32[N]", "x[2:-3]"));
    assert_int_equal(f->ncons, 3);
    assert_string_equal(dim_str(H.a, f->cons[2].dim), "N - 5");
    assert_int_equal(f->cons[2].min, 1);
    assert_string_equal(f->cons[2].what, "slice 2:-3 of dim 0 is not empty");
    /* an index needs the dim to hold it */
    f = ok(program("x: f32[N]", "x[-2]"));
    assert_int_equal(f->ncons, 1);
    assert_int_equal(f->cons[0].min, 2);
    assert_string_equal(f->cons[0].what, "index -2 of dim 0");
    /* a weaker requirement on the same dim is implied by a stronger one */
    f = ok(program("x: f32[N]", "x[3] + x[-2]"));
    assert_int_equal(f->ncons, 1);
    assert_int_equal(f->cons[0].min, 4);
    assert_string_equal(f->cons[0].what, "index 3 of dim 0");
    /* bounds a plain size always meets make no constraint */
    f = ok(program("x: f32[N]", "x[0] + x[-1] + x[:]"));
    assert_int_equal(f->ncons, 0);
}

static void test_integer_index(void **state)
{
    (void)state;
    assert_string_equal(vd("x: f32[4, 5]", "x[-1]"), "f32[5] view [1] +15 of input");
    assert_string_equal(vd("x: f32[4, 5]", "x[1, 2]"), "f32 view [] +7 of input");
    assert_string_equal(vd("x: f32[N, D]", "x[-1]"), "f32[D] view [1] +N*D - D of input");
    assert_string_equal(vd("x: f32[N, D]", "x[:, 3]"), "f32[N] view [D] +3 of input");
    /* an index of a view composes: (x.T)[1] is column 1 of x */
    assert_string_equal(vd("x: f32[N, D]", "x.T[1]"), "f32[N] view [D] +1 of input");
    /* a slice of a slice is one view of the base */
    assert_string_equal(vd("x: f32[16]", "x[2:][::3][1:]"), "f32[4] view [3] +5 of input");
}

static void test_reshape(void **state)
{
    (void)state;
    /* contiguous: a view with new row-major strides */
    assert_string_equal(vd("x: f32[N, D]", "reshape(x, N * D)"), "f32[N*D] view [1] +0 of input");
    assert_string_equal(vd("x: f32[N, 4, D]", "reshape(x, [N, 2, -1])"),
                        "f32[N, 2, 2*D] view [4*D, 2*D, 1] +0 of input");
    assert_string_equal(vd("x: f32[N, D]", "reshape(x, -1, D)"), "f32[N, D] input");
    assert_string_equal(vd("x: f32[4, 6]", "reshape(x, 3, -1)"), "f32[3, 8] view [8, 1] +0 of input");
    /* a contiguous slice keeps its offset */
    assert_string_equal(vd("x: f32[4, 6]", "reshape(x[1:3], 12)"), "f32[12] view [1] +6 of input");
    /* a transposed layout is copied first, then viewed */
    gnode *r = res("x: f32[N, D]", "reshape(x.T, N * D)");
    assert_string_equal(view_desc(r), "f32[N*D] view [1] +0 of copy");
    gnode *c = r->in[0];
    assert_string_equal(type_of(c), "f32[D, N]");
    assert_string_equal(view_desc(c->in[0]), "f32[D, N] view [1, D] +0 of input");
    assert_int_equal(count_op(graph_find(H.g, "f"), OP_copy), 1);
    /* a step or a broadcast forbids a view too */
    assert_string_equal(vd("x: f32[8]", "reshape(x[::2], 2, 2)"), "f32[2, 2] view [2, 1] +0 of copy");
    assert_string_equal(vd("x: f32[N]", "reshape(broadcast_to(x, [2, N]), 2 * N)"),
                        "f32[2*N] view [1] +0 of copy");
    /* reshape to the same shape is the tensor itself */
    assert_string_equal(vd("x: f32[N, D]", "reshape(x, N, D)"), "f32[N, D] input");
}

static void test_unsqueeze_squeeze_broadcast_to(void **state)
{
    (void)state;
    assert_string_equal(vd("x: f32[N, D]", "unsqueeze(x, 1)"), "f32[N, 1, D] view [D, 0, 1] +0 of input");
    assert_string_equal(vd("x: f32[N, D]", "unsqueeze(x, -1)"), "f32[N, D, 1] view [D, 1, 0] +0 of input");
    assert_string_equal(vd("x: f32[N, D]", "squeeze(unsqueeze(x, 0), 0)"), "f32[N, D] input");
    assert_string_equal(vd("x: f32[N, 1, D]", "squeeze(x, 1)"), "f32[N, D] view [D, 1] +0 of input");
    assert_string_equal(vd("x: f32[1, N, 1]", "squeeze(x)"), "f32[N] view [1] +0 of input");
    assert_string_equal(vd("x: f32[N], y: f32[M, N]", "broadcast_to(x, [M, N])"),
                        "f32[M, N] view [0, 1] +0 of input");
    assert_string_equal(vd("x: f32[N, 1]", "broadcast_to(x, [N, 4])"), "f32[N, 4] view [1, 0] +0 of input");
    /* a literal becomes an f32 tensor of that shape */
    gnode *r = res("x: f32[N]", "broadcast_to(2.5, [N, 3])");
    assert_string_equal(view_desc(r), "f32[N, 3] view [0, 0] +0 of const");
    assert_int_equal(r->in[0]->dtype, TC_F32);
    assert_false(r->in[0]->weak);
    /* composition: unsqueeze of a transposed slice */
    assert_string_equal(vd("x: f32[4, 6]", "unsqueeze(x[1:, 2:].T, 0)"),
                        "f32[1, 4, 3] view [0, 1, 6] +8 of input");
}

static void test_view_errors(void **state)
{
    (void)state;
    assert_string_equal(rerr("x: f32[N, D]", "x[0, 1, 2]"),
                        "2:13: too many indices for f32[N, D]: 3 given, but its rank is 2");
    assert_string_equal(rerr("x: f32[4, D]", "x[4]"), "2:14: index 4 is out of range for dim 0 of size 4");
    assert_string_equal(rerr("x: f32[4, D]", "x[-5]"), "2:14: index -5 is out of range for dim 0 of size 4");
    assert_string_equal(rerr("x: f32[4, D]", "x[:, 1.5]"), "2:17: index must be an integer, but it is the float 1.5");
    assert_string_equal(rerr("x: f32[4, D]", "x[x]"), "2:14: index must be a compile-time integer, not a tensor (f32[4, D])");
    assert_string_equal(rerr("x: f32[4, 6]", "x[:, 2:7]"),
                        "2:19: slice end 7 is out of range for dim 1 of size 6");
    assert_string_equal(rerr("x: f32[4, 6]", "x[-5:]"),
                        "2:14: slice start -5 is out of range for dim 0 of size 4");
    assert_string_equal(rerr("x: f32[4, 6]", "x[3:1]"), "2:15: slice 3:1 of dim 0 (size 4) is empty");
    assert_string_equal(rerr("x: f32[4, 6]", "x[::0]"), "2:16: slice step must be positive, but it is 0");
    assert_string_equal(rerr("x: f32[4, 6]", "x[::-1]"), "2:16: slice step must be positive, but it is -1");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, N, 3)"),
                        "2:12: cannot reshape f32[N, D] (N*D elements) to [N, 3] (3*N elements)");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, -1, 3)"),
                        "2:12: cannot reshape f32[N, D] to [-1, 3]: N*D elements do not divide into rows of 3");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, -1, -1)"),
                        "2:27: reshape can infer only one dim, but -1 appears twice");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, 0, -1)"),
                        "2:23: reshape dims must be positive (or -1), but got 0");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, 1.5)"),
                        "2:23: reshape dim must be an integer, but it is the float 1.5");
    assert_string_equal(rerr("x: f32[N, D]", "squeeze(x, 1)"),
                        "2:12: squeeze of dim 1 of f32[N, D], which is D, not 1");
    assert_string_equal(rerr("x: f32[N, D]", "permute(x, 0, 0)"),
                        "2:26: permute axes are not a permutation: axis 0 appears twice");
    assert_string_equal(rerr("x: f32[N, D]", "permute(x, 1)"),
                        "2:12: permute of f32[N, D] needs 2 axes, but 1 were given");
    assert_string_equal(rerr("x: f32[N, D]", "transpose(x, 0, 2)"),
                        "2:28: axis 2 is out of range for a tensor of rank 2 (f32[N, D])");
    assert_string_equal(rerr("x: f32[N, D]", "transpose(x, 0)"),
                        "2:12: missing argument 'axis1' in call to 'transpose'");
    assert_string_equal(rerr("x: f32[N, D]", "unsqueeze(x, 3)"),
                        "2:25: axis 3 is out of range for a tensor of rank 2 (f32[N, D])");
    assert_string_equal(rerr("x: f32[1, 1, 1, 1, 1, 1, 1, 1]", "unsqueeze(x, 0)"),
                        "2:12: unsqueeze of f32[1, 1, 1, 1, 1, 1, 1, 1] would exceed the maximum rank 8");
    assert_string_equal(rerr("x: f32[N, D]", "broadcast_to(x, [D])"),
                        "2:12: cannot broadcast f32[N, D] to the lower rank [D]");
    assert_string_equal(rerr("x: f32[N, D]", "reshape(x, [N, x])"),
                        "2:27: reshape dim must be an integer or a size known at compile time");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transpose_permute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_constraints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_integer_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reshape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsqueeze_squeeze_broadcast_to, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
