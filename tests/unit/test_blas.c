/* test_blas.c - the cuBLAS layer without a GPU: the row-major trick and loading.
 *
 * blas_map turns the plan's row-major C = op(A) @ op(B) into a column-major
 * cublasGemmStridedBatchedEx call.  Here that call is carried out by a
 * host emulation of cuBLAS's documented semantics (column-major, lda/ldb/ldc,
 * strides per batch) on the mapped arguments, and compared, exactly, with a
 * direct row-major product: every combination of ta, tb, broadcast batch
 * strides and odd sizes.  A wrong leading dimension, a swapped operand or
 * a transpose flag on the wrong side changes the numbers.
 *
 * Loading: TENSORC_CUBLAS pointing nowhere, or at a library that is not
 * cuBLAS, gives TC_ERR_NO_DEVICE with a message naming it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

static uint64_t seed = 12345;

static double rnd(void)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)((seed >> 33) % 17) - 8; /* small integers: every sum is exact */
}

/* cuBLAS's gemm, column-major, on host pointers (the "device addresses"). */
static void emulate(const blas_gemm *g)
{
    const double *A = (const double *)(uintptr_t)g->a, *B = (const double *)(uintptr_t)g->b;
    double *C = (double *)(uintptr_t)g->c;
    for (int64_t b = 0; b < g->batch; b++) {
        const double *Ab = A + b * g->stride_a, *Bb = B + b * g->stride_b;
        double *Cb = C + b * g->stride_c;
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double s = 0;
                for (int64_t l = 0; l < g->k; l++) {
                    double a = g->transa ? Ab[l + i * g->lda] : Ab[i + l * g->lda];
                    double x = g->transb ? Bb[j + l * g->ldb] : Bb[l + j * g->ldb];
                    s += a * x;
                }
                Cb[i + j * g->ldc] = s;
            }
    }
}

/* The plan's meaning, directly: row-major, as stored. */
static void direct(const blas_mm *mm, const double *A, const double *B, double *C)
{
    for (int64_t b = 0; b < mm->batch; b++)
        for (int64_t i = 0; i < mm->m; i++)
            for (int64_t j = 0; j < mm->n; j++) {
                double s = 0;
                for (int64_t l = 0; l < mm->k; l++) {
                    const double *Ab = A + b * mm->stride_a, *Bb = B + b * mm->stride_b;
                    double a = mm->ta ? Ab[l * mm->m + i] : Ab[i * mm->k + l];
                    double x = mm->tb ? Bb[j * mm->k + l] : Bb[l * mm->n + j];
                    s += a * x;
                }
                C[b * mm->stride_c + i * mm->n + j] = s;
            }
}

static void check_case(int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb,
                       bool bcast_a, bool bcast_b)
{
    size_t na = (size_t)(m * k * (bcast_a ? 1 : batch)), nb = (size_t)(k * n * (bcast_b ? 1 : batch));
    size_t nc = (size_t)(m * n * batch);
    double *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B);
    double *C1 = malloc(nc * sizeof *C1), *C2 = malloc(nc * sizeof *C2);
    assert_true(A && B && C1 && C2);
    for (size_t i = 0; i < na; i++)
        A[i] = rnd();
    for (size_t i = 0; i < nb; i++)
        B[i] = rnd();
    for (size_t i = 0; i < nc; i++)
        C1[i] = C2[i] = -12345;
    blas_mm mm = {
        .dtype = TC_F32, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .batch = batch,
        .stride_a = bcast_a ? 0 : m * k, .stride_b = bcast_b ? 0 : k * n, .stride_c = m * n,
        .a = (drv_ptr)(uintptr_t)A, .b = (drv_ptr)(uintptr_t)B, .c = (drv_ptr)(uintptr_t)C1,
    };
    blas_gemm g;
    assert_int_equal(blas_map(&mm, &g, NULL), TC_OK);
    /* cuBLAS's own rules for its arguments */
    assert_true(g.lda >= (g.transa ? g.k : g.m));
    assert_true(g.ldb >= (g.transb ? g.n : g.k));
    assert_true(g.ldc >= g.m);
    emulate(&g);
    direct(&mm, A, B, C2);
    for (size_t i = 0; i < nc; i++)
        if (C1[i] != C2[i])
            fail_msg("m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d: element %zu is %g, want %g",
                     (long long)m, (long long)n, (long long)k, (long long)batch, ta, tb, i, C1[i],
                     C2[i]);
    free(A);
    free(B);
    free(C1);
    free(C2);
}

static void test_row_major_trick(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {5, 1, 3}, {1, 7, 2}, {3, 4, 1},
                                       {7, 5, 9}, {16, 8, 4}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int f = 0; f < 4; f++)
            for (int64_t batch = 1; batch <= 3; batch += 2)
                for (int bc = 0; bc < 3; bc++)
                    check_case(sizes[s][0], sizes[s][1], sizes[s][2], batch, f & 1, f & 2,
                               bc == 1, bc == 2);
}

/* The mapping spelled out for one case, so a reader sees what cuBLAS gets. */
static void test_mapping_fields(void **state)
{
    (void)state;
    blas_mm mm = {.dtype = TC_F16, .ta = false, .tb = true, .m = 3, .n = 5, .k = 7, .batch = 2,
                  .stride_a = 21, .stride_b = 0, .stride_c = 15, .a = 0x1000, .b = 0x2000, .c = 0x3000};
    blas_gemm g;
    assert_int_equal(blas_map(&mm, &g, NULL), TC_OK);
    assert_true(g.transa);           /* our B, stored n x k */
    assert_false(g.transb);          /* our A, stored m x k */
    assert_int_equal(g.m, 5);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.k, 7);
    assert_int_equal(g.a, 0x2000);
    assert_int_equal(g.lda, 7);
    assert_int_equal(g.stride_a, 0);
    assert_int_equal(g.b, 0x1000);
    assert_int_equal(g.ldb, 7);
    assert_int_equal(g.stride_b, 21);
    assert_int_equal(g.c, 0x3000);
    assert_int_equal(g.ldc, 5);
    assert_int_equal(g.stride_c, 15);
    assert_int_equal(g.batch, 2);
}

static void test_map_rejects(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    blas_gemm g;
    blas_mm mm = {.dtype = TC_I32, .m = 1, .n = 1, .k = 1, .batch = 1};
    assert_int_equal(blas_map(&mm, &g, &d), TC_ERR_UNSUPPORTED);
    assert_string_equal(d.brief, "matmul of i32: cuBLAS is used for f32, f16, bf16 and f64");
    mm.dtype = TC_BF16;
    mm.k = 0;
    assert_int_equal(blas_map(&mm, &g, &d), TC_ERR_INTERNAL);
    assert_non_null(strstr(d.brief, "k=0"));
    mm.k = 1;
    mm.stride_a = -1;
    assert_int_equal(blas_map(&mm, &g, &d), TC_ERR_INTERNAL);
    mm.stride_a = 0;
    assert_int_equal(blas_map(&mm, &g, NULL), TC_OK);
    diag_release(&d);
}

static void test_missing_library(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    setenv("TENSORC_CUBLAS", "/nonexistent/tensorc-test/libcublas.so.13", 1);
    assert_int_equal(blas_load(&d), TC_ERR_NO_DEVICE);
    assert_non_null(d.brief);
    assert_non_null(strstr(d.brief, "cuBLAS not found (tried /nonexistent/tensorc-test/libcublas.so.13; "
                                    "last error: "));
    assert_non_null(strstr(d.brief, "set TENSORC_CUBLAS"));
    setenv("TENSORC_CUBLAS", "libm.so.6", 1);
    assert_int_equal(blas_load(&d), TC_ERR_NO_DEVICE);
    assert_non_null(strstr(d.brief, "libm.so.6 has no cublasCreate_v2"));
    assert_int_equal(blas_load(NULL), TC_ERR_NO_DEVICE);
    unsetenv("TENSORC_CUBLAS");
    diag_release(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_major_trick),
        cmocka_unit_test(test_mapping_fields),
        cmocka_unit_test(test_map_rejects),
        cmocka_unit_test(test_missing_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
