/* test_driver.c - the dlopen'd CUDA driver layer on a machine without a GPU.
 *
 * CI has no GPU (and usually no libcuda.so.1), so what can be checked here is
 * the part every user without a GPU meets: drv_open fails cleanly with
 * TC_ERR_NO_DEVICE and a message that says why, never crashes, and can be
 * retried.  The GPU path is exercised by tests/gpu/smoke.c (tc-gpu-smoke). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static void test_missing_library(void **state)
{
    (void)state;
    setenv("TENSORC_LIBCUDA", "/nonexistent/tensorc-test/libcuda.so.1", 1);
    tc_diag d;
    diag_init(&d);
    drv_device *dev = (drv_device *)&d; /* must be reset to NULL on failure */
    assert_int_equal(drv_open(&dev, 0, &d), TC_ERR_NO_DEVICE);
    assert_null(dev);
    assert_int_equal(d.status, TC_ERR_NO_DEVICE);
    assert_non_null(d.brief);
    assert_string_equal(d.brief, "no CUDA driver (/nonexistent/tensorc-test/libcuda.so.1 not "
                               "found): --device=cuda needs an NVIDIA GPU");
    /* A failed load is not cached: the same answer again, without d too. */
    assert_int_equal(drv_open(&dev, 3, NULL), TC_ERR_NO_DEVICE);
    assert_null(dev);
    diag_release(&d);
    unsetenv("TENSORC_LIBCUDA");
}

/* TENSORC_LIBCUDA set to a library that is not libcuda: dlopen succeeds and
 * the missing entry point is named. */
static void test_wrong_library(void **state)
{
    (void)state;
    setenv("TENSORC_LIBCUDA", "libm.so.6", 1);
    tc_diag d;
    diag_init(&d);
    drv_device *dev = NULL;
    assert_int_equal(drv_open(&dev, 0, &d), TC_ERR_NO_DEVICE);
    assert_null(dev);
    assert_non_null(d.brief);
    assert_string_equal(d.brief, "no usable CUDA driver (libm.so.6 has no cuInit): update the "
                                 "NVIDIA driver");
    diag_release(&d);
    unsetenv("TENSORC_LIBCUDA");
}

/* The default search on this machine: no GPU, so whatever is (not)
 * installed, drv_open must fail with TC_ERR_NO_DEVICE and say why. */
static void test_default_without_gpu(void **state)
{
    (void)state;
    unsetenv("TENSORC_LIBCUDA");
    tc_diag d;
    diag_init(&d);
    drv_device *dev = NULL;
    tc_status st = drv_open(&dev, 0, &d);
    if (st == TC_OK) {
        /* Only where a GPU is present (a developer's workstation). */
        printf("GPU present: %s, sm_%d, %d SMs\n", drv_name(dev), drv_arch(dev),
               drv_sm_count(dev));
        assert_true(drv_arch(dev) >= 30);
        drv_close(dev);
        diag_release(&d);
        skip();
    }
    printf("drv_open without a GPU: %s\n", d.msg ? d.msg : "(no message)");
    assert_int_equal(st, TC_ERR_NO_DEVICE);
    assert_null(dev);
    assert_non_null(d.msg);
    assert_true(strstr(d.msg, "no CUDA driver (libcuda.so.1 not found)") ||
                strstr(d.msg, "no CUDA device found") || strstr(d.msg, "cuInit failed: "));
    diag_release(&d);
}

static void test_close_null(void **state)
{
    (void)state;
    drv_close(NULL);
    drv_module_unload(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_wrong_library),
        cmocka_unit_test(test_default_without_gpu),
        cmocka_unit_test(test_close_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
