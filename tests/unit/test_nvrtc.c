/* test_nvrtc.c - the dlopen'd NVRTC layer against the real toolkit.
 *
 * CI machines have the CUDA toolkit but no GPU, which is all NVRTC needs, so
 * a library that cannot be loaded is a FAILURE here (with the loader's
 * message), never a skip.  The kernels are compiled for real and the PTX and
 * CUBIN inspected. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvrtc.h"

static const char *const AXPY =
    "extern \"C\" __global__ void k(float *__restrict__ y, const float *__restrict__ x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = 2.0f * x[i] + y[i];\n"
    "}\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Fail with the loader's own message, so CI says what was tried. */
static void require_nvrtc(void)
{
    tc_diag d;
    diag_init(&d);
    tc_status st = nvrtc_load(&d);
    if (st != TC_OK)
        fail_msg("nvrtc_load: status %d: %s", (int)st, d.msg ? d.msg : "(no message)");
    diag_release(&d);
}

static void test_load(void **state)
{
    (void)state;
    require_nvrtc();
    /* Loading twice is a no-op that still succeeds. */
    assert_int_equal(nvrtc_load(NULL), TC_OK);
}

static void test_version(void **state)
{
    (void)state;
    require_nvrtc();
    int major = -1, minor = -1;
    assert_true(nvrtc_version(&major, &minor));
    printf("NVRTC %d.%d\n", major, minor);
    assert_int_equal(major, 13);
    assert_in_range(minor, 0, 99);
}

static void test_archs(void **state)
{
    (void)state;
    require_nvrtc();
    int n = nvrtc_supported_archs(NULL, 0);
    assert_in_range(n, 2, 64);
    int *a = calloc((size_t)n, sizeof *a);
    assert_non_null(a);
    assert_int_equal(nvrtc_supported_archs(a, n), n);
    bool has80 = false, has90 = false;
    printf("supported:");
    for (int i = 0; i < n; i++) {
        printf(" %d", a[i]);
        has80 |= a[i] == 80;
        has90 |= a[i] == 90;
        if (i)
            assert_true(a[i - 1] < a[i]);
    }
    printf("\n");
    assert_true(has80);
    assert_true(has90);
    /* A short buffer gets a prefix and the full count. */
    int two[2] = {-1, -1};
    assert_int_equal(nvrtc_supported_archs(two, 2), n);
    assert_int_equal(two[0], a[0]);
    assert_int_equal(two[1], a[1]);
    free(a);
}

static void test_clamp(void **state)
{
    (void)state;
    require_nvrtc();
    int n = nvrtc_supported_archs(NULL, 0);
    int *a = calloc((size_t)n, sizeof *a);
    assert_non_null(a);
    nvrtc_supported_archs(a, n);
    bool ptx = true;
    /* Every supported arch clamps to itself, as a CUBIN. */
    for (int i = 0; i < n; i++) {
        ptx = true;
        assert_int_equal(nvrtc_clamp_arch(a[i], &ptx), a[i]);
        assert_false(ptx);
    }
    /* Between two supported archs: the lower one, still a CUBIN. */
    for (int i = 0; i + 1 < n; i++)
        if (a[i + 1] > a[i] + 1) {
            ptx = true;
            assert_int_equal(nvrtc_clamp_arch(a[i + 1] - 1, &ptx), a[i]);
            assert_false(ptx);
        }
    /* Newer than NVRTC: the newest arch, as PTX for the driver to JIT. */
    ptx = false;
    assert_int_equal(nvrtc_clamp_arch(a[n - 1] + 10, &ptx), a[n - 1]);
    assert_true(ptx);
    /* Older than everything NVRTC supports: nothing. */
    ptx = true;
    assert_int_equal(nvrtc_clamp_arch(a[0] - 1, &ptx), 0);
    assert_false(ptx);
    assert_int_equal(nvrtc_clamp_arch(90, NULL), 90);
    free(a);
}

static void test_ptx_sm80(void **state)
{
    (void)state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    tc_status st = nvrtc_compile(AXPY, "axpy.cu", 80, false, NULL, 0, &out, &d);
    if (st != TC_OK)
        fail_msg("%s", d.msg);
    assert_non_null(out.data);
    assert_non_null(out.log);
    assert_int_equal(out.len, strlen(out.data));
    assert_non_null(strstr(out.data, ".target sm_80"));
    assert_non_null(strstr(out.data, ".entry k("));
    nvrtc_output_free(&out);
    assert_null(out.data);
    assert_null(out.log);
    nvrtc_output_free(&out); /* twice is harmless */
    diag_release(&d);
}

static void test_cubin_sm90(void **state)
{
    (void)state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    tc_status st = nvrtc_compile(AXPY, "axpy.cu", 90, true, NULL, 0, &out, &d);
    if (st != TC_OK)
        fail_msg("%s", d.msg);
    assert_non_null(out.data);
    assert_true(out.len > 64);
    assert_memory_equal(out.data, "\x7f" "ELF", 4);
    /* The kernel's name is in the ELF's string table. */
    bool found = false;
    for (size_t i = 0; i + 2 <= out.len && !found; i++)
        found = out.data[i] == 'k' && out.data[i + 1] == '\0' && i > 0 &&
                (out.data[i - 1] == '\0' || out.data[i - 1] == '.');
    assert_true(found);
    nvrtc_output_free(&out);
    diag_release(&d);
}

static void test_syntax_error(void **state)
{
    (void)state;
    require_nvrtc();
    const char *bad = "extern \"C\" __global__ void k(float *y)\n"
                      "{\n"
                      "    y[0] = 1.0f +;\n"
                      "}\n";
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    tc_status st = nvrtc_compile(bad, "tc_bad_kernel.cu", 80, true, NULL, 0, &out, &d);
    assert_int_equal(st, TC_ERR_COMPILE);
    assert_int_equal(d.status, TC_ERR_COMPILE);
    assert_null(out.data);
    assert_non_null(out.log);
    assert_non_null(strstr(out.log, "tc_bad_kernel.cu(3): error"));
    assert_non_null(d.msg);
    /* The error carries NVRTC's log, located at the bad line. */
    assert_non_null(strstr(d.msg, "tc_bad_kernel.cu(3): error"));
    assert_non_null(strstr(d.msg, "sm_80"));
    nvrtc_output_free(&out);
    diag_release(&d);
}

static void test_two_kernels(void **state)
{
    (void)state;
    require_nvrtc();
    const char *src = "extern \"C\" __global__ void k1(float *y) { y[threadIdx.x] = 1.0f; }\n"
                      "extern \"C\" __global__ void k2(float *y, int n)\n"
                      "{ if ((int)threadIdx.x < n) y[threadIdx.x] *= 2.0f; }\n";
    nvrtc_output out;
    tc_status st = nvrtc_compile(src, "two.cu", 90, false, NULL, 0, &out, NULL);
    assert_int_equal(st, TC_OK);
    assert_non_null(strstr(out.data, ".target sm_90"));
    assert_non_null(strstr(out.data, ".entry k1("));
    assert_non_null(strstr(out.data, ".entry k2("));
    nvrtc_output_free(&out);
}

static void test_bad_args(void **state)
{
    (void)state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    /* An arch NVRTC does not know: refused before NVRTC sees it. */
    assert_int_equal(nvrtc_compile(AXPY, "axpy.cu", 12, true, NULL, 0, &out, &d),
                     TC_ERR_INVALID_ARG);
    assert_non_null(strstr(d.msg, "sm_12"));
    assert_non_null(strstr(d.msg, "90"));
    nvrtc_output_free(&out);
    /* An option NVRTC rejects. */
    const char *opts[] = {"--no-such-option"};
    assert_int_equal(nvrtc_compile(AXPY, "axpy.cu", 80, false, opts, 1, &out, &d),
                     TC_ERR_INVALID_ARG);
    assert_null(out.data);
    nvrtc_output_free(&out);
    /* Extra options that NVRTC takes are passed on: -lineinfo adds .loc lines. */
    const char *li[] = {"-lineinfo"};
    assert_int_equal(nvrtc_compile(AXPY, "axpy.cu", 80, false, li, 1, &out, &d), TC_OK);
    assert_non_null(strstr(out.data, ".loc"));
    nvrtc_output_free(&out);
    assert_int_equal(nvrtc_compile(NULL, "x.cu", 80, false, NULL, 0, &out, &d),
                     TC_ERR_INVALID_ARG);
    nvrtc_output_free(&out);
    diag_release(&d);
}

/* Several threads compiling at once (distinct programs) all succeed. */
static void *compile_thread(void *arg)
{
    nvrtc_output out;
    tc_status st = nvrtc_compile(AXPY, "axpy.cu", 80, true, NULL, 0, &out, NULL);
    bool ok = st == TC_OK && out.len > 4 && memcmp(out.data, "\x7f" "ELF", 4) == 0;
    nvrtc_output_free(&out);
    *(bool *)arg = ok;
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    require_nvrtc();
    enum { N = 4 };
    pthread_t t[N];
    bool ok[N] = {0};
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, compile_thread, &ok[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_true(ok[i]);
    }
}

/* Reported, not asserted: the cold compile budget is 150 ms, but this
 * machine's speed (and a sanitizer build) says little about the target's. */
static void test_timing(void **state)
{
    (void)state;
    require_nvrtc();
    const char *tiny = "extern \"C\" __global__ void t(float *y) { y[threadIdx.x] += 1.0f; }\n";
    for (int rep = 0; rep < 3; rep++) {
        nvrtc_output out;
        double t0 = now_ms();
        assert_int_equal(nvrtc_compile(tiny, "tiny.cu", 90, true, NULL, 0, &out, NULL), TC_OK);
        double t1 = now_ms();
        nvrtc_output_free(&out);
        assert_int_equal(nvrtc_compile(AXPY, "axpy.cu", 90, false, NULL, 0, &out, NULL), TC_OK);
        double t2 = now_ms();
        nvrtc_output_free(&out);
        printf("compile #%d: trivial kernel to CUBIN sm_90 %.1f ms, axpy to PTX sm_90 %.1f ms\n",
               rep + 1, t1 - t0, t2 - t1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),       cmocka_unit_test(test_version),
        cmocka_unit_test(test_archs),      cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_ptx_sm80),   cmocka_unit_test(test_cubin_sm90),
        cmocka_unit_test(test_syntax_error), cmocka_unit_test(test_two_kernels),
        cmocka_unit_test(test_bad_args),   cmocka_unit_test(test_threads),
        cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
