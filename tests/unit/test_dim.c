/* test_dim.c - canonical symbolic dims: equality, printing, division, evaluation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dim.h"
#include "diag.h"

typedef struct {
    tc_arena *a;
    tc_dimctx *c;
    const tc_dim *N, *D, *B;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->a = arena_new(NULL);
    f->c = dimctx_new(f->a);
    /* creation order fixes the print order: N before D before B */
    f->N = dim_sym(f->c, "N");
    f->D = dim_sym(f->c, "D");
    f->B = dim_sym(f->c, "B");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    arena_free(f->a);
    free(f);
    return 0;
}

#define K(v) dim_const(f->c, (v))
#define ADD(x, y) dim_add(f->c, (x), (y))
#define SUB(x, y) dim_sub(f->c, (x), (y))
#define MUL(x, y) dim_mul(f->c, (x), (y))
#define FDIV(x, y) dim_floordiv(f->c, (x), (y))
#define CDIV(x, y) dim_ceildiv(f->c, (x), (y))
#define STR(x) dim_str(f->a, (x))

static void test_canonical_equality(void **state)
{
    fixture *f = *state;
    assert_true(dim_eq(MUL(f->N, f->D), MUL(f->D, f->N)));
    assert_ptr_equal(MUL(f->N, f->D), MUL(f->D, f->N)); /* hash-consed */
    assert_true(dim_eq(SUB(ADD(f->N, K(1)), K(1)), f->N));
    assert_true(dim_eq(MUL(K(2), ADD(f->N, K(1))), ADD(MUL(K(2), f->N), K(2))));
    assert_true(dim_eq(ADD(f->N, f->D), ADD(f->D, f->N)));
    assert_true(dim_eq(SUB(f->N, f->N), K(0)));
    assert_true(dim_eq(MUL(ADD(f->N, K(1)), SUB(f->N, K(1))), SUB(MUL(f->N, f->N), K(1))));
    assert_true(dim_eq(dim_sym(f->c, "N"), f->N));
    assert_false(dim_eq(f->N, f->D));
    assert_false(dim_eq(f->N, ADD(f->N, K(1))));
    assert_false(dim_eq(MUL(f->N, f->N), f->N));
    assert_false(dim_eq(K(3), K(4)));
    assert_true(dim_eq(K(12), MUL(K(3), K(4))));
    assert_false(dim_eq(NULL, f->N));
    /* associativity with three symbols */
    assert_ptr_equal(MUL(MUL(f->B, f->N), f->D), MUL(f->N, MUL(f->D, f->B)));
}

static void test_cross_context_equality(void **state)
{
    fixture *f = *state;
    tc_dimctx *c2 = dimctx_new(f->a);
    const tc_dim *n2 = dim_sym(c2, "N"), *d2 = dim_sym(c2, "D");
    assert_true(dim_eq(dim_mul(c2, n2, d2), MUL(f->N, f->D)));
    assert_true(dim_eq(dim_add(c2, n2, dim_const(c2, 1)), ADD(f->N, K(1))));
    assert_false(dim_eq(n2, f->D));
}

static void test_const(void **state)
{
    fixture *f = *state;
    int64_t v = -1;
    assert_true(dim_is_const(K(7), &v));
    assert_int_equal(v, 7);
    assert_true(dim_is_const(SUB(ADD(f->N, K(3)), f->N), &v));
    assert_int_equal(v, 3);
    assert_false(dim_is_const(f->N, &v));
    assert_true(dim_is_const(K(0), NULL));
    assert_false(dim_is_const(NULL, NULL));
}

static void test_print(void **state)
{
    fixture *f = *state;
    assert_string_equal(STR(f->N), "N");
    assert_string_equal(STR(K(4)), "4");
    assert_string_equal(STR(K(-4)), "-4");
    assert_string_equal(STR(K(0)), "0");
    assert_string_equal(STR(MUL(f->D, f->N)), "N*D");
    assert_string_equal(STR(SUB(f->N, K(1))), "N - 1");
    assert_string_equal(STR(ADD(K(1), MUL(K(2), f->N))), "2*N + 1");
    assert_string_equal(STR(SUB(K(4), f->N)), "-N + 4");
    assert_string_equal(STR(SUB(MUL(f->N, f->D), f->N)), "N*D - N");
    assert_string_equal(STR(ADD(f->D, f->N)), "N + D");
    assert_string_equal(STR(SUB(K(0), MUL(K(3), f->D))), "-3*D");
    assert_string_equal(STR(MUL(f->N, f->N)), "N*N");
    assert_string_equal(STR(ADD(MUL(f->D, f->D), f->N)), "D*D + N"); /* degree first */
    assert_string_equal(STR(CDIV(f->D, K(2))), "(D + 1)/2");
    assert_string_equal(STR(FDIV(f->D, K(2))), "D/2");
    assert_string_equal(STR(FDIV(MUL(f->N, f->D), K(4))), "N*D/4");
    assert_string_equal(STR(FDIV(f->N, MUL(K(2), f->D))), "N/(2*D)");
    assert_string_equal(STR(FDIV(f->N, ADD(f->D, K(1)))), "N/(D + 1)");
    assert_string_equal(STR(MUL(K(2), CDIV(f->D, K(2)))), "2*((D + 1)/2)");
    assert_string_equal(STR(MUL(f->N, FDIV(f->D, K(3)))), "N*(D/3)");
    assert_string_equal(STR(ADD(FDIV(f->D, K(3)), K(1))), "D/3 + 1");
    assert_string_equal(STR(FDIV(SUB(K(0), f->D), K(3))), "(-D)/3");
    assert_string_equal(STR(K(INT64_MIN)), "-9223372036854775808");
    assert_string_equal(STR(SUB(f->N, K(INT64_MIN))), "N - 9223372036854775808");
}

static void test_division(void **state)
{
    fixture *f = *state;
    int64_t v;
    /* constants: floor and ceil, negative numerators too */
    assert_true(dim_is_const(FDIV(K(7), K(2)), &v) && v == 3);
    assert_true(dim_is_const(FDIV(K(-7), K(2)), &v) && v == -4);
    assert_true(dim_is_const(CDIV(K(7), K(2)), &v) && v == 4);
    assert_true(dim_is_const(CDIV(K(-7), K(2)), &v) && v == -3);
    assert_true(dim_is_const(CDIV(K(8), K(2)), &v) && v == 4);
    /* exact divisions fold */
    assert_ptr_equal(FDIV(MUL(f->N, K(4)), K(4)), f->N);
    assert_ptr_equal(FDIV(MUL(f->N, f->D), f->D), f->N);
    assert_ptr_equal(CDIV(MUL(f->N, f->D), f->N), f->D);
    assert_ptr_equal(FDIV(f->N, K(1)), f->N);
    assert_ptr_equal(FDIV(ADD(MUL(f->N, f->D), f->N), ADD(f->D, K(1))), f->N);
    /* (2N + 1)/2 = N for integer N; (2N + 3)/2 = N + 1 */
    assert_ptr_equal(FDIV(ADD(MUL(K(2), f->N), K(1)), K(2)), f->N);
    assert_ptr_equal(FDIV(ADD(MUL(K(2), f->N), K(3)), K(2)), ADD(f->N, K(1)));
    /* ceil of a multiple plus a remainder */
    assert_ptr_equal(CDIV(ADD(MUL(K(2), f->N), K(1)), K(2)), ADD(f->N, K(1)));
    /* common factors cancel: (2N + 2)/4 = (N + 1)/2 */
    assert_ptr_equal(FDIV(ADD(MUL(K(2), f->N), K(2)), K(4)), FDIV(ADD(f->N, K(1)), K(2)));
    /* ceil is floor of (a + b - 1): both spellings give one dim */
    assert_ptr_equal(CDIV(f->D, K(2)), FDIV(ADD(f->D, K(1)), K(2)));
    assert_ptr_equal(CDIV(SUB(f->N, K(1)), K(3)), FDIV(ADD(f->N, K(1)), K(3)));
    /* opaque divisions are atoms: they multiply and cancel like symbols */
    const tc_dim *h = CDIV(f->D, K(2));
    assert_ptr_equal(SUB(ADD(h, f->N), h), f->N);
    assert_ptr_equal(FDIV(MUL(h, f->N), h), f->N);
    assert_false(dim_eq(FDIV(f->D, K(2)), CDIV(f->D, K(2))));
}

static void test_nested_division(void **state)
{
    fixture *f = *state;
    /* x[::2][::2] has the length of x[::4] */
    assert_ptr_equal(CDIV(CDIV(f->N, K(2)), K(2)), CDIV(f->N, K(4)));
    assert_ptr_equal(FDIV(FDIV(f->N, K(2)), K(3)), FDIV(f->N, K(6)));
    assert_ptr_equal(FDIV(ADD(FDIV(f->N, K(2)), K(1)), K(2)), FDIV(ADD(f->N, K(2)), K(4)));
    assert_string_equal(STR(CDIV(CDIV(f->N, K(2)), K(2))), "(N + 3)/4");
    assert_ptr_equal(FDIV(FDIV(f->N, f->D), K(2)), FDIV(f->N, MUL(K(2), f->D)));
}

/* Random dims checked against plain integer arithmetic: every folding rule
 * must agree with floor/ceil on concrete values. */
static int64_t ifloor(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

typedef struct { const tc_dim *d; int64_t v[3][3]; } sample; /* v[N-1][D-1] for N, D in 1..3 */

static void test_random_against_integers(void **state)
{
    fixture *f = *state;
    enum { POOL = 64 };
    sample pool[POOL];
    int n = 0;
    pool[n].d = f->N;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            pool[n].v[i][j] = i + 1;
    n++;
    pool[n].d = f->D;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            pool[n].v[i][j] = j + 1;
    n++;
    for (int c = 1; c <= 3; c++, n++) {
        pool[n].d = K(c);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                pool[n].v[i][j] = c;
    }
    srand(12345);
    for (int iter = 0; iter < 4000; iter++) {
        const sample *x = &pool[rand() % n], *y = &pool[rand() % n];
        int op = rand() % 5;
        bool ypos = true;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                ypos = ypos && y->v[i][j] > 0;
        if (op >= 3 && !ypos)
            op = rand() % 3;
        sample r;
        r.d = op == 0 ? ADD(x->d, y->d) : op == 1 ? SUB(x->d, y->d) : op == 2 ? MUL(x->d, y->d)
            : op == 3 ? FDIV(x->d, y->d) : CDIV(x->d, y->d);
        bool small = true;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                int64_t a = x->v[i][j], b = y->v[i][j];
                r.v[i][j] = op == 0 ? a + b : op == 1 ? a - b : op == 2 ? a * b
                          : op == 3 ? ifloor(a, b) : -ifloor(-a, b);
                tc_dimbind bs[] = {{"N", i + 1}, {"D", j + 1}};
                int64_t got;
                assert_true(dim_eval(r.d, bs, 2, &got, NULL));
                if (got != r.v[i][j])
                    fail_msg("%s at N=%d, D=%d: got %lld, want %lld", STR(r.d), i + 1, j + 1,
                             (long long)got, (long long)r.v[i][j]);
                small = small && r.v[i][j] > -1000 && r.v[i][j] < 1000;
            }
        /* keep the pool's values small so products stay exact, and its dims
         * short so products do not grow without bound */
        if (small && strlen(STR(r.d)) <= 40)
            pool[n < POOL ? n++ : 5 + rand() % (POOL - 5)] = r;
    }
}

static void test_exactdiv(void **state)
{
    fixture *f = *state;
    int64_t v;
    assert_ptr_equal(dim_exactdiv(f->c, MUL(MUL(f->N, f->D), K(4)), MUL(f->N, K(4))), f->D);
    assert_ptr_equal(dim_exactdiv(f->c, MUL(f->N, K(6)), K(3)), MUL(f->N, K(2)));
    assert_true(dim_is_const(dim_exactdiv(f->c, K(12), K(4)), &v) && v == 3);
    assert_true(dim_is_const(dim_exactdiv(f->c, K(0), f->N), &v) && v == 0);
    assert_true(dim_is_const(dim_exactdiv(f->c, f->N, f->N), &v) && v == 1);
    assert_null(dim_exactdiv(f->c, K(12), K(5)));
    assert_null(dim_exactdiv(f->c, K(12), K(0)));
    assert_null(dim_exactdiv(f->c, f->N, K(2)));
    assert_null(dim_exactdiv(f->c, f->N, f->D));
    assert_null(dim_exactdiv(f->c, ADD(f->N, K(1)), f->N));
    assert_null(dim_exactdiv(f->c, K(4), f->N));
    assert_null(dim_exactdiv(f->c, MUL(f->N, f->N), ADD(f->N, K(1))));
    /* (N^2 - 1) / (N - 1) = N + 1 */
    assert_ptr_equal(dim_exactdiv(f->c, SUB(MUL(f->N, f->N), K(1)), SUB(f->N, K(1))),
                     ADD(f->N, K(1)));
    assert_ptr_equal(dim_exactdiv(f->c, MUL(f->N, K(-6)), K(-3)), MUL(f->N, K(2)));
}

static void test_eval(void **state)
{
    fixture *f = *state;
    tc_dimbind b[] = {{"N", 10}, {"D", 7}};
    int64_t v = 0;
    const char *unb = NULL;
    assert_true(dim_eval(ADD(MUL(K(2), f->N), K(1)), b, 2, &v, &unb));
    assert_int_equal(v, 21);
    assert_true(dim_eval(MUL(f->N, f->D), b, 2, &v, NULL));
    assert_int_equal(v, 70);
    assert_true(dim_eval(CDIV(f->D, K(2)), b, 2, &v, NULL));
    assert_int_equal(v, 4);
    assert_true(dim_eval(FDIV(f->D, K(2)), b, 2, &v, NULL));
    assert_int_equal(v, 3);
    assert_true(dim_eval(FDIV(SUB(f->D, K(10)), K(2)), b, 2, &v, NULL));
    assert_int_equal(v, -2); /* floor, not truncation */
    assert_true(dim_eval(FDIV(f->N, f->D), b, 2, &v, NULL));
    assert_int_equal(v, 1);
    assert_true(dim_eval(K(5), NULL, 0, &v, NULL));
    assert_int_equal(v, 5);
    assert_false(dim_eval(ADD(f->N, f->B), b, 2, &v, &unb));
    assert_string_equal(unb, "B");
    unb = NULL;
    assert_false(dim_eval(FDIV(f->N, f->B), b, 2, &v, &unb));
    assert_string_equal(unb, "B");
    assert_false(dim_eval(f->B, b, 2, &v, NULL)); /* unbound may be NULL */
    /* division by a symbol that is 0 evaluates to 0 rather than trapping */
    tc_dimbind z[] = {{"N", 10}, {"B", 0}};
    assert_true(dim_eval(FDIV(f->N, f->B), z, 2, &v, NULL));
    assert_int_equal(v, 0);
}

static void test_symbols(void **state)
{
    fixture *f = *state;
    const char *names[4];
    int n = 0;
    dim_symbols(ADD(MUL(f->N, f->D), f->N), names, &n, 4);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "N");
    assert_string_equal(names[1], "D");
    dim_symbols(FDIV(f->B, f->D), names, &n, 4); /* appends, no repeats */
    assert_int_equal(n, 3);
    assert_string_equal(names[2], "B");
    n = 0;
    dim_symbols(K(3), names, &n, 4);
    assert_int_equal(n, 0);
    dim_symbols(ADD(ADD(f->N, f->D), f->B), names, &n, 2); /* stops at max */
    assert_int_equal(n, 2);
    const tc_dim *star = dim_sym(f->c, "*");
    assert_string_equal(STR(star), "*");
    n = 0;
    dim_symbols(star, names, &n, 4);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "*");
}

static void test_many_dims(void **state)
{
    /* grows the intern tables well past their first size */
    fixture *f = *state;
    const tc_dim *first[600];
    for (int i = 0; i < 600; i++)
        first[i] = ADD(MUL(K(i), f->N), dim_sym(f->c, i % 2 ? "D" : "B"));
    for (int i = 0; i < 600; i++) {
        const char *s = i % 2 ? "D" : "B";
        char want[64];
        if (i == 0)
            snprintf(want, sizeof want, "%s", s);
        else if (i == 1)
            snprintf(want, sizeof want, "N + %s", s);
        else
            snprintf(want, sizeof want, "%d*N + %s", i, s);
        assert_ptr_equal(first[i], ADD(MUL(K(i), f->N), dim_sym(f->c, s)));
        assert_string_equal(STR(first[i]), want);
    }
    assert_string_equal(STR(first[599]), "599*N + D");
    assert_string_equal(STR(first[1]), "N + D");
    assert_string_equal(STR(first[0]), "B");
}

static const char *str(fixture *f, const tc_dim *d)
{
    return dim_str(f->a, d);
}

/* Substitution, the split that views use to recover a multi-index, and the
 * non-negativity test that proves the split's parts in range. */
static void test_subst_split_nonneg(void **state)
{
    fixture *f = *state;
    tc_dimctx *c = f->c;
    const tc_dim *i = dim_sym(c, "$0"), *j = dim_sym(c, "$1");
    const char *names[2] = {"$0", "$1"};
    /* (D*$0 + $1) with $0 := N - 1, $1 := $1 + 4 */
    const tc_dim *e = dim_add(c, dim_mul(c, f->D, i), j);
    const tc_dim *vals[2] = {dim_sub(c, f->N, dim_const(c, 1)), dim_add(c, j, dim_const(c, 4))};
    assert_string_equal(str(f, dim_subst(c, e, 2, names, vals)), "N*D - D + $1 + 4");
    /* inside a division too */
    const tc_dim *q = dim_floordiv(c, i, f->D);
    const tc_dim *v1[1] = {dim_mul(c, f->D, j)};
    assert_true(dim_eq(dim_subst(c, q, 1, names, v1), j));

    /* split D*$0 + D + 2*$1 by D: ($0 + 1) * D + 2*$1 */
    const tc_dim *flat = dim_add(c, dim_add(c, dim_mul(c, f->D, i), f->D), dim_mul(c, dim_const(c, 2), j));
    const tc_dim *quot, *rest;
    dim_split(c, flat, f->D, &quot, &rest);
    assert_string_equal(str(f, quot), "$0 + 1");
    assert_string_equal(str(f, rest), "2*$1");
    /* by a constant: 8*$0 + $1 + 11 = 8*($0 + 1) + ($1 + 3) */
    dim_split(c, dim_add(c, dim_add(c, dim_mul(c, dim_const(c, 8), i), j), dim_const(c, 11)),
              dim_const(c, 8), &quot, &rest);
    assert_string_equal(str(f, quot), "$0 + 1");
    assert_string_equal(str(f, rest), "$1 + 3");

    assert_true(dim_nonneg(flat));
    assert_false(dim_nonneg(dim_sub(c, f->N, dim_const(c, 1))));
    /* D + 1 - 2*((D + 1)/2) >= 0: b*(x/b) <= x */
    const tc_dim *h = dim_floordiv(c, dim_add(c, f->D, dim_const(c, 1)), dim_const(c, 2));
    const tc_dim *slack = dim_sub(c, dim_add(c, f->D, dim_const(c, 1)), dim_mul(c, dim_const(c, 2), h));
    assert_true(dim_nonneg(slack));
    /* ... but not 3*((D + 1)/2) */
    assert_false(dim_nonneg(dim_sub(c, dim_add(c, f->D, dim_const(c, 1)), dim_mul(c, dim_const(c, 3), h))));
    assert_true(dim_uses(q, "$0") && !dim_uses(q, "$1") && dim_uses(q, "D"));
}

static void test_wrapping(void **state)
{
    /* absurd constants wrap instead of overflowing (no UB under UBSan) */
    fixture *f = *state;
    int64_t v;
    assert_true(dim_is_const(MUL(K(INT64_MAX), K(2)), &v));
    assert_int_equal(v, -2);
    assert_true(dim_is_const(FDIV(K(INT64_MIN), K(-1)), &v));
    assert_int_equal(v, INT64_MIN);
    assert_true(dim_is_const(ADD(K(INT64_MAX), K(1)), &v));
    assert_int_equal(v, INT64_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_canonical_equality, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cross_context_equality, setup, teardown),
        cmocka_unit_test_setup_teardown(test_const, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print, setup, teardown),
        cmocka_unit_test_setup_teardown(test_division, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_division, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exactdiv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symbols, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_dims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subst_split_nonneg, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
