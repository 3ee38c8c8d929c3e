/* test_dtype.c - dtype names, promotion and rounding against hand-computed values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>

#include "dtype.h"

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(dtype_name(TC_F32), "f32");
    assert_string_equal(dtype_name(TC_BF16), "bf16");
    assert_string_equal(dtype_name(TC_BOOL), "bool");
    assert_string_equal(dtype_name(TC_DT_NONE), "?");
    assert_string_equal(dtype_name(TC_DT_COUNT), "?");
    assert_int_equal(dtype_size(TC_F16), 2);
    assert_int_equal(dtype_size(TC_I64), 8);
    assert_int_equal(dtype_size(TC_BOOL), 1);
    assert_int_equal(dtype_size(TC_DT_NONE), 0);
    assert_int_equal(dtype_parse("i32"), TC_I32);
    assert_int_equal(dtype_parse("f64"), TC_F64);
    assert_int_equal(dtype_parse("float"), TC_DT_NONE);
    assert_int_equal(dtype_parse("F32"), TC_DT_NONE);
    assert_int_equal(dtype_parse(""), TC_DT_NONE);
    assert_int_equal(dtype_parse(NULL), TC_DT_NONE);
    for (int t = TC_DT_NONE + 1; t < TC_DT_COUNT; t++)
        assert_int_equal(dtype_parse(dtype_name((tc_dtype)t)), t);
    assert_true(dtype_is_float(TC_BF16));
    assert_false(dtype_is_float(TC_I32));
    assert_true(dtype_is_int(TC_I64));
    assert_false(dtype_is_int(TC_BOOL));
    assert_false(dtype_is_int(TC_F16));
}

/* Both operand orders must agree. */
static void expect_promote(tc_dtype a, bool wa, tc_dtype b, bool wb, tc_dtype want)
{
    assert_int_equal(dtype_promote(a, wa, b, wb), want);
    assert_int_equal(dtype_promote(b, wb, a, wa), want);
}

static void test_promote_strong(void **state)
{
    (void)state;
    expect_promote(TC_F32, false, TC_F32, false, TC_F32);
    expect_promote(TC_F32, false, TC_F16, false, TC_F32);
    expect_promote(TC_F16, false, TC_BF16, false, TC_F32);
    expect_promote(TC_BF16, false, TC_F64, false, TC_F64);
    expect_promote(TC_I32, false, TC_I64, false, TC_I64);
    expect_promote(TC_BOOL, false, TC_I32, false, TC_I32);
    expect_promote(TC_I64, false, TC_F16, false, TC_F16);
    expect_promote(TC_BOOL, false, TC_BF16, false, TC_BF16);
    expect_promote(TC_BOOL, false, TC_BOOL, false, TC_BOOL);
    expect_promote(TC_DT_NONE, false, TC_F32, false, TC_DT_NONE);
}

static void test_promote_weak(void **state)
{
    (void)state;
    /* x * 2.0 keeps x's dtype; a weak operand never widens within a category */
    expect_promote(TC_F16, false, TC_F32, true, TC_F16);
    expect_promote(TC_BF16, false, TC_F64, true, TC_BF16);
    expect_promote(TC_F16, false, TC_I64, true, TC_F16);
    expect_promote(TC_I32, false, TC_I64, true, TC_I32);
    expect_promote(TC_BOOL, false, TC_BOOL, true, TC_BOOL);
    expect_promote(TC_F32, false, TC_BOOL, true, TC_F32);
    /* a weak operand of a higher category picks the category */
    expect_promote(TC_I32, false, TC_F32, true, TC_F32);
    expect_promote(TC_I64, false, TC_F64, true, TC_F32); /* float literal: default f32 */
    expect_promote(TC_I32, false, TC_F16, true, TC_F16); /* like a PyTorch 0-d tensor */
    expect_promote(TC_BOOL, false, TC_I64, true, TC_I64);
    expect_promote(TC_BOOL, false, TC_I32, true, TC_I32);
    /* two weak operands promote like strong ones */
    expect_promote(TC_I32, true, TC_F32, true, TC_F32);
    expect_promote(TC_I64, true, TC_I32, true, TC_I64);
    expect_promote(TC_F16, true, TC_F32, true, TC_F32);
    expect_promote(TC_F16, true, TC_BF16, true, TC_F32);
}

static void expect_round(tc_dtype t, double v, double want)
{
    double got = dtype_round(t, v);
    if (isnan(want)) {
        assert_true(isnan(got));
        return;
    }
    if (got != want || signbit(got) != signbit(want))
        fail_msg("dtype_round(%s, %.17g) = %.17g, want %.17g", dtype_name(t), v, got, want);
}

static void test_round_f16(void **state)
{
    (void)state;
    double u = ldexp(1, -10); /* ulp of 1 */
    expect_round(TC_F16, 1.0, 1.0);
    expect_round(TC_F16, 1 + u / 2, 1.0);                 /* tie to even (down) */
    expect_round(TC_F16, 1 + 3 * u / 2, 1 + 2 * u);       /* tie to even (up) */
    expect_round(TC_F16, 1 + u / 2 + ldexp(1, -30), 1 + u); /* via float this would tie down */
    expect_round(TC_F16, -(1 + 3 * u / 2), -(1 + 2 * u));
    expect_round(TC_F16, 0.1, 0.0999755859375);
    expect_round(TC_F16, 1.0 / 3, 0.333251953125);
    expect_round(TC_F16, 2049, 2048);                     /* ulp 2 above 2048: tie to even */
    expect_round(TC_F16, 2051, 2052);
    expect_round(TC_F16, 65504, 65504);
    expect_round(TC_F16, 65519, 65504);
    expect_round(TC_F16, 65519.999, 65504);
    expect_round(TC_F16, 65520, INFINITY);
    expect_round(TC_F16, -65520, -INFINITY);
    expect_round(TC_F16, 1e10, INFINITY);
    /* subnormals: quantum 2^-24 */
    expect_round(TC_F16, ldexp(1, -14), ldexp(1, -14));
    expect_round(TC_F16, ldexp(1023, -24), ldexp(1023, -24));
    expect_round(TC_F16, ldexp(1, -24), ldexp(1, -24));
    expect_round(TC_F16, ldexp(1, -25), 0.0);               /* tie to even: 0 */
    expect_round(TC_F16, -ldexp(1, -25), -0.0);
    expect_round(TC_F16, ldexp(1, -25) + ldexp(1, -40), ldexp(1, -24));
    expect_round(TC_F16, ldexp(3, -26), ldexp(1, -24));
    expect_round(TC_F16, ldexp(3, -25), ldexp(2, -24));     /* 1.5 quanta: tie to 2 */
    expect_round(TC_F16, ldexp(5, -25), ldexp(2, -24));     /* 2.5 quanta: tie to 2 */
    expect_round(TC_F16, 1e-30, 0.0);
    expect_round(TC_F16, -0.0, -0.0);
    expect_round(TC_F16, INFINITY, INFINITY);
    expect_round(TC_F16, -INFINITY, -INFINITY);
    expect_round(TC_F16, NAN, NAN);
}

static void test_round_bf16(void **state)
{
    (void)state;
    double u = ldexp(1, -7);
    double maxfin = ldexp(255, 120); /* (2 - 2^-7) * 2^127 */
    assert_true(fabs(maxfin - 3.38953139e38) < 1e30);
    expect_round(TC_BF16, 1 + u / 2, 1.0);
    expect_round(TC_BF16, 1 + 3 * u / 2, 1 + 2 * u);
    expect_round(TC_BF16, 1 + u / 2 + ldexp(1, -30), 1 + u);
    expect_round(TC_BF16, 0.1, 0.10009765625);
    expect_round(TC_BF16, 3.14159265358979, 3.140625);
    expect_round(TC_BF16, 257, 256);
    expect_round(TC_BF16, 259, 260);
    expect_round(TC_BF16, maxfin, maxfin);
    expect_round(TC_BF16, maxfin + ldexp(1, 119), INFINITY);        /* tie: to even = 2^128 */
    expect_round(TC_BF16, maxfin + ldexp(1, 119) - ldexp(1, 100), maxfin);
    expect_round(TC_BF16, 1e39, INFINITY);
    expect_round(TC_BF16, -1e39, -INFINITY);
    expect_round(TC_BF16, ldexp(1, -133), ldexp(1, -133));          /* smallest subnormal */
    expect_round(TC_BF16, ldexp(1, -134), 0.0);
    expect_round(TC_BF16, ldexp(3, -135), ldexp(1, -133));
    expect_round(TC_BF16, ldexp(1, -126), ldexp(1, -126));
    expect_round(TC_BF16, NAN, NAN);
}

static void test_round_f32_f64(void **state)
{
    (void)state;
    double u = ldexp(1, -23);
    expect_round(TC_F32, 1 + u / 2, 1.0);
    expect_round(TC_F32, 1 + 3 * u / 2, 1 + 2 * u);
    expect_round(TC_F32, 1 + u / 2 + ldexp(1, -50), 1 + u);
    expect_round(TC_F32, 0.1, (double)0.1f);
    expect_round(TC_F32, FLT_MAX, FLT_MAX);
    expect_round(TC_F32, (double)FLT_MAX + ldexp(1, 103) - ldexp(1, 80), FLT_MAX);
    expect_round(TC_F32, (double)FLT_MAX + ldexp(1, 103), INFINITY);
    expect_round(TC_F32, 1e300, INFINITY);
    expect_round(TC_F32, -1e300, -INFINITY);
    expect_round(TC_F32, ldexp(1, -149), ldexp(1, -149));
    expect_round(TC_F32, ldexp(1, -150), 0.0);
    expect_round(TC_F32, NAN, NAN);
    expect_round(TC_F64, 0.1, 0.1);
    expect_round(TC_F64, 1e300, 1e300);
}

static void test_round_int(void **state)
{
    (void)state;
    expect_round(TC_I32, 2.9, 2);
    expect_round(TC_I32, -2.9, -2);
    expect_round(TC_I32, -0.5, 0);
    expect_round(TC_I32, 2147483647, 2147483647);
    expect_round(TC_I32, 2147483648.0, -2147483648.0);   /* wraps */
    expect_round(TC_I32, 4294967296.0 + 5, 5);
    expect_round(TC_I32, -2147483649.0, 2147483647);
    expect_round(TC_I32, -4294967296.0 * 3 - 7, -7);
    expect_round(TC_I32, NAN, 0);
    expect_round(TC_I32, INFINITY, 2147483647);
    expect_round(TC_I32, -INFINITY, -2147483648.0);
    expect_round(TC_I64, -1.5, -1);
    expect_round(TC_I64, 1e15 + 0.5, 1e15);
    expect_round(TC_I64, ldexp(1, 63), -ldexp(1, 63));
    expect_round(TC_I64, ldexp(1, 64) + 4096, 4096); /* ulp at 2^64 is 4096 */
    expect_round(TC_I64, -ldexp(1, 63), -ldexp(1, 63));
    expect_round(TC_I64, NAN, 0);
    expect_round(TC_I64, INFINITY, 9223372036854774784.0);
    expect_round(TC_I64, -INFINITY, -ldexp(1, 63));
    expect_round(TC_BOOL, 0.0, 0);
    expect_round(TC_BOOL, -0.0, 0);
    expect_round(TC_BOOL, 0.5, 1);
    expect_round(TC_BOOL, -3, 1);
    expect_round(TC_BOOL, NAN, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_promote_strong),
        cmocka_unit_test(test_promote_weak),
        cmocka_unit_test(test_round_f16),
        cmocka_unit_test(test_round_bf16),
        cmocka_unit_test(test_round_f32_f64),
        cmocka_unit_test(test_round_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
