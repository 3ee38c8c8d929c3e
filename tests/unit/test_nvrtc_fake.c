/* test_nvrtc_fake.c - src/runtime/nvrtc.c against an NVRTC that misbehaves
 * (tests/fakegpu/fakenvrtc.c, loaded through TENSORC_NVRTC): an absurd log
 * or PTX size is refused, not believed (it was a heap overflow), and an
 * empty PTX or CUBIN is an error, not an image. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsearch.h"
#include "nvrtc.h"

static const char *const SRC = "extern \"C\" __global__ void k() {}\n";

static tc_status compile(const char *mode, bool cubin, nvrtc_output *out, tc_diag *d)
{
    setenv("FAKE_NVRTC", mode, 1);
    memset(out, 0, sizeof *out);
    return nvrtc_compile(SRC, "k.cu", 90, cubin, NULL, 0, out, d);
}

static void fake_loads(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    assert_int_equal(nvrtc_load(&d), TC_OK);
    nvrtc_output out;
    assert_int_equal(compile("", false, &out, &d), TC_OK);
    assert_true(out.len > 0);
    nvrtc_output_free(&out);
    diag_release(&d);
}

static void absurd_log_size(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    assert_int_equal(compile("hugelog", false, &out, &d), TC_OK);
    assert_non_null(out.log);
    assert_non_null(strstr(out.log, "NVRTC reported a log of 18446744073709551615 bytes, not read"));
    nvrtc_output_free(&out);
    diag_release(&d);
}

static void absurd_ptx_size(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    assert_int_equal(compile("hugeptx", false, &out, &d), TC_ERR_COMPILE);
    assert_non_null(strstr(d.msg, "NVRTC reported a PTX of 18446744073709551615 bytes for k.cu"));
    nvrtc_output_free(&out);
    diag_release(&d);
}

static void empty_images_refused(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    nvrtc_output out;
    assert_int_equal(compile("emptyptx", false, &out, &d), TC_ERR_COMPILE);
    assert_non_null(strstr(d.msg, "NVRTC compiled k.cu but gave an empty PTX"));
    nvrtc_output_free(&out);
    assert_int_equal(compile("emptycubin", true, &out, &d), TC_ERR_COMPILE);
    assert_non_null(strstr(d.msg, "NVRTC compiled k.cu but gave an empty CUBIN"));
    nvrtc_output_free(&out);
    diag_release(&d);
}

/* pip wheels' libraries found from a python3 on PATH, without running it */
static void wheels_found(void **state)
{
    (void)state;
    char root[] = "/tmp/tc_wheels_XXXXXX";
    assert_non_null(mkdtemp(root));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/venv/bin %s/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib && "
             "printf '#!/bin/sh\nexit 1\n' >%s/venv/bin/python3 && chmod +x %s/venv/bin/python3 && "
             "touch %s/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 "
             "%s/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4",
             root, root, root, root, root, root);
    assert_int_equal(system(cmd), 0);
    char *saved = strdup(getenv("PATH") ? getenv("PATH") : "");
    char path[512];
    snprintf(path, sizeof path, "/nonexistent:%s/venv/bin", root);
    setenv("PATH", path, 1);
    tc_strbuf where = {0};
    char **w = libsearch_wheels("cuda_nvrtc/lib/libnvrtc.so*", &where);
    assert_non_null(w);
    char want[512];
    snprintf(want, sizeof want, "%s/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", root);
    assert_string_equal(w[0], want);
    assert_null(w[1]); /* not the builtins */
    assert_non_null(strstr(where.s, "/venv/lib/python3.12/site-packages"));
    libsearch_free(w);
    free(where.s);
    setenv("PATH", saved, 1);
    free(saved);
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    /* before the first load, which is once per process */
    setenv("TENSORC_NVRTC", FAKE_NVRTC_LIB, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_loads),
        cmocka_unit_test(absurd_log_size),
        cmocka_unit_test(absurd_ptx_size),
        cmocka_unit_test(empty_images_refused),
        cmocka_unit_test(wheels_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
