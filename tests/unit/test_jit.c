/* test_jit.c - jit_image: the in-memory table, the disk cache, NVRTC.
 *
 * Like test_nvrtc, NVRTC must be loadable (CI has the toolkit, not a GPU):
 * a missing library is a failure, not a skip.  Each test gets a fresh cache
 * directory; compiles are kept few (each costs ~50 ms). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit.h"
#include "nvrtc.h"

/* Division and expf, so --use_fast_math visibly changes the code. */
static const char *const KERNEL =
    "extern \"C\" __global__ void k(float *__restrict__ y, const float *__restrict__ x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = expf(x[i]) / y[i];\n"
    "}\n";

static const char *const BROKEN =
    "extern \"C\" __global__ void k(float *__restrict__ y, const float *__restrict__ x, int n)\n"
    "{\n"
    "    y[0] = undeclared_thing;\n"
    "}\n";

static int setup(void **state)
{
    char *dir = strdup("/tmp/tc-test-jit-XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    char *dir = *state;
    tc_cache *c = cache_open(dir, 0);
    if (c) {
        cache_clear(c);
        cache_close(c);
    }
    rmdir(dir);
    free(dir);
    return 0;
}

static void require_nvrtc(void)
{
    tc_diag d;
    diag_init(&d);
    tc_status st = nvrtc_load(&d);
    if (st != TC_OK)
        fail_msg("nvrtc_load: status %d: %s", (int)st, d.msg ? d.msg : "(no message)");
    diag_release(&d);
}

static uint64_t entries_in(const char *dir)
{
    tc_cache *c = cache_open(dir, 0);
    assert_non_null(c);
    uint64_t n = 0, bytes = 0;
    cache_stats(c, &n, &bytes);
    cache_close(c);
    return n;
}

/* First request compiles, the second in the same context comes from the
 * table (same pointer, no disk read), a new context reads the disk. */
static void test_memory_then_disk(void **state)
{
    const char *dir = *state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    jit_ctx *j = jit_ctx_new(dir, 0);
    assert_non_null(j);
    assert_null(jit_warning(j));

    const void *img1 = NULL, *img2 = NULL, *img3 = NULL;
    size_t len1 = 0, len2 = 0, len3 = 0;
    jit_origin o = JIT_FROM_MEMORY;
    assert_int_equal(jit_image(j, KERNEL, strlen(KERNEL), "k.cu", 80, true, NULL, 0, &img1,
                               &len1, &o, &d), TC_OK);
    assert_int_equal(o, JIT_COMPILED);
    assert_true(len1 > 4);
    assert_memory_equal(img1, "\177ELF", 4);            /* a CUBIN is an ELF image */
    assert_int_equal(jit_table_size(j), 1);
    assert_int_equal(entries_in(dir), 1);

    assert_int_equal(jit_image(j, KERNEL, strlen(KERNEL), "k.cu", 80, true, NULL, 0, &img2,
                               &len2, &o, &d), TC_OK);
    assert_int_equal(o, JIT_FROM_MEMORY);
    assert_ptr_equal(img2, img1);
    assert_int_equal(len2, len1);
    assert_int_equal(jit_table_size(j), 1);

    /* A second context over the same directory: the disk, same bytes. */
    jit_ctx *j2 = jit_ctx_new(dir, 0);
    assert_non_null(j2);
    assert_int_equal(jit_image(j2, KERNEL, strlen(KERNEL), "k.cu", 80, true, NULL, 0, &img3,
                               &len3, &o, &d), TC_OK);
    assert_int_equal(o, JIT_FROM_DISK);
    assert_int_equal(len3, len1);
    assert_memory_equal(img3, img1, len1);
    jit_ctx_free(j2);
    jit_ctx_free(j);
    diag_release(&d);
}

/* The salt (the context's tuning knobs, jit_set_salt) is in the key: the
 * same source under other knobs compiles again, never reading the image
 * the other knobs built, and the same knobs find it on disk. */
static void test_salt_in_key(void **state)
{
    const char *dir = *state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    size_t n = strlen(KERNEL);
    const void *img;
    size_t len;
    jit_origin o = JIT_FROM_MEMORY;
    jit_ctx *plain = jit_ctx_new(dir, 0), *a = jit_ctx_new(dir, 0), *b = jit_ctx_new(dir, 0);
    assert_true(plain && a && b);
    jit_set_salt(a, "TENSORC_PW_UNROLL=4");
    jit_set_salt(b, "TENSORC_PW_UNROLL=4");
    assert_int_equal(jit_image(plain, KERNEL, n, "k.cu", 80, true, NULL, 0, &img, &len, &o, &d), TC_OK);
    assert_int_equal(o, JIT_COMPILED);
    assert_int_equal(jit_image(a, KERNEL, n, "k.cu", 80, true, NULL, 0, &img, &len, &o, &d), TC_OK);
    assert_int_equal(o, JIT_COMPILED);                  /* not the unsalted entry */
    assert_int_equal(entries_in(dir), 2);
    assert_int_equal(jit_image(b, KERNEL, n, "k.cu", 80, true, NULL, 0, &img, &len, &o, &d), TC_OK);
    assert_int_equal(o, JIT_FROM_DISK);                 /* the same knobs: a's entry */
    /* an empty salt is no salt: the key jit_key gives, as before salts */
    jit_set_salt(b, "");
    assert_int_equal(jit_image(b, KERNEL, n, "k.cu", 80, true, NULL, 0, &img, &len, &o, &d), TC_OK);
    assert_int_equal(o, JIT_FROM_DISK);
    assert_int_equal(entries_in(dir), 2);
    jit_ctx_free(plain);
    jit_ctx_free(a);
    jit_ctx_free(b);
    diag_release(&d);
}

/* Options, target and name are in the key; fast math changes the image. */
static void test_options_in_key(void **state)
{
    const char *dir = *state;
    require_nvrtc();
    const char *fast[] = {"--use_fast_math"};
    const char *line[] = {"-lineinfo"};
    size_t n = strlen(KERNEL);
    tc_cache_key plain, kfast, kline, kcubin, kname;
    assert_int_equal(jit_key(KERNEL, n, "k.cu", 80, false, NULL, 0, &plain), TC_OK);
    assert_int_equal(jit_key(KERNEL, n, "k.cu", 80, false, fast, 1, &kfast), TC_OK);
    assert_int_equal(jit_key(KERNEL, n, "k.cu", 80, false, line, 1, &kline), TC_OK);
    assert_int_equal(jit_key(KERNEL, n, "k.cu", 80, true, NULL, 0, &kcubin), TC_OK);
    assert_int_equal(jit_key(KERNEL, n, "j.cu", 80, false, NULL, 0, &kname), TC_OK);
    const tc_cache_key *all[] = {&plain, &kfast, &kline, &kcubin, &kname};
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++)
            assert_memory_not_equal(all[a]->b, all[b]->b, 16);
    tc_cache_key again;
    assert_int_equal(jit_key(KERNEL, n, "k.cu", 80, false, NULL, 0, &again), TC_OK);
    assert_memory_equal(again.b, plain.b, 16);

    tc_diag d;
    diag_init(&d);
    jit_ctx *j = jit_ctx_new(dir, 0);
    assert_non_null(j);
    const void *p = NULL, *f = NULL;
    size_t plen = 0, flen = 0;
    jit_origin o;
    assert_int_equal(jit_image(j, KERNEL, n, "k.cu", 80, false, NULL, 0, &p, &plen, &o, &d),
                     TC_OK);
    assert_int_equal(o, JIT_COMPILED);
    assert_int_equal(jit_image(j, KERNEL, n, "k.cu", 80, false, fast, 1, &f, &flen, &o, &d),
                     TC_OK);
    assert_int_equal(o, JIT_COMPILED);                    /* not the plain image */
    assert_ptr_not_equal(p, f);
    /* PTX is NUL-terminated; fast math turns the IEEE division approximate. */
    assert_int_equal(strlen(p), plen);
    assert_non_null(strstr(p, ".target sm_80"));
    assert_non_null(strstr(p, "div.rn.f32"));
    assert_null(strstr(f, "div.rn.f32"));
    assert_int_equal(jit_table_size(j), 2);
    assert_int_equal(entries_in(dir), 2);
    jit_ctx_free(j);
    diag_release(&d);
}

/* A compile error: TC_ERR_COMPILE with NVRTC's log, nothing cached. */
static void test_compile_error(void **state)
{
    const char *dir = *state;
    require_nvrtc();
    tc_diag d;
    diag_init(&d);
    jit_ctx *j = jit_ctx_new(dir, 0);
    assert_non_null(j);
    const void *img = (const void *)&d;
    size_t len = 12345;
    assert_int_equal(jit_image(j, BROKEN, strlen(BROKEN), "broken.cu", 80, true, NULL, 0, &img,
                               &len, NULL, &d), TC_ERR_COMPILE);
    assert_non_null(d.msg);
    assert_non_null(strstr(d.msg, "broken.cu(3)"));
    assert_non_null(strstr(d.msg, "undeclared_thing"));
    assert_int_equal(jit_table_size(j), 0);
    assert_int_equal(entries_in(dir), 0);
    /* Bad arguments are refused with a message, not a crash. */
    diag_clear(&d);
    assert_int_equal(jit_image(j, NULL, 5, "x.cu", 80, true, NULL, 0, &img, &len, NULL, &d),
                     TC_ERR_INVALID_ARG);
    assert_int_equal(jit_image(j, KERNEL, strlen(KERNEL), "x.cu", 80, true, NULL, 1, &img, &len,
                               NULL, NULL), TC_ERR_INVALID_ARG);
    jit_ctx_free(j);
    diag_release(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory_then_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_in_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_salt_in_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compile_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
