/* test_contexts.c - distinct contexts used from distinct threads at once.
 *
 * tensorc.h promises that distinct contexts are independent: several
 * threads may each create their own context, compile and run at the same
 * time.  What they share is process-wide: the NVRTC library and its
 * facts (src/runtime/nvrtc.c), the CUDA driver and cuBLAS (src/runtime/driver.c,
 * blas.c), the prelude.  This test starts THREADS threads behind a barrier,
 * so they reach those one-time loads together, and each, ROUNDS times:
 * creates a context with its own kernel cache, compiles a program, dumps
 * its CUDA, and runs three functions (one a matmul, first in half the
 * rounds: cuBLAS then loads on a thread of its own while NVRTC compiles) with tc_run on the fake driver
 * (tests/fakegpu: TENSORC_LIBCUDA and TENSORC_CUBLAS point at it), which
 * compiles the kernels with NVRTC and launches them.
 *
 * Built with ThreadSanitizer (TC_TSAN=ON: scripts/test.sh's build-tsan),
 * a data race anywhere on that path fails it; in the other builds it checks
 * that concurrent runs succeed.  Without NVRTC, tc_run answers
 * TC_ERR_NO_DEVICE, which is accepted: the compile path still runs
 * concurrently. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorc.h"

enum { THREADS = 4, ROUNDS = 2, N = 8, D = 32 };

static const char SRC[] =
    "fn softmax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "fn axpy(x: f32[N, D], y: f32[N, D], a: f32 = 2.0) -> f32[N, D] {\n"
    "    return a * x + y\n"
    "}\n"
    "fn mm(x: f32[N, D], y: f32[D, N]) -> f32[N, N] {\n"
    "    return relu(x @ y)\n"
    "}\n";

/* the fake driver's allocator, called directly: device memory for tc_run */
typedef int (*fn_alloc)(uint64_t *p, size_t n);
typedef int (*fn_free)(uint64_t p);
static fn_alloc mem_alloc;
static fn_free mem_free;

static pthread_barrier_t start;
static char root[] = "/tmp/tc-contexts-XXXXXX";

typedef struct {
    int id;
    int failures;       /* checks that failed in this thread */
    int ran;            /* tc_run calls that returned TC_OK */
    char msg[512];      /* the first failure */
} worker;

static void note_fail(worker *w, const char *what, tc_status st, const tc_ctx *ctx)
{
    if (!w->failures++)
        snprintf(w->msg, sizeof w->msg, "thread %d: %s: %s: %s", w->id, what, tc_status_str(st),
                 ctx ? tc_errmsg(ctx) : "");
}

static DLTensor tensor(void *data, int64_t *shape)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    t.ndim = 2;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = shape;
    return t;
}

/* tc_run's answer: TC_OK, or TC_ERR_NO_DEVICE where NVRTC is missing */
static void ran(worker *w, const char *what, tc_status st, const tc_ctx *ctx)
{
    if (st == TC_OK)
        w->ran++;
    else if (st != TC_ERR_NO_DEVICE || !strstr(tc_errmsg(ctx), "NVRTC"))
        note_fail(w, what, st, ctx);
}

static void *work(void *arg)
{
    worker *w = arg;
    char dir[sizeof root + 16];
    snprintf(dir, sizeof dir, "%s/cache%d", root, w->id);
    pthread_barrier_wait(&start);
    for (int r = 0; r < ROUNDS; r++) {
        tc_options o = TC_OPTIONS_INIT;
        o.device = 0;
        o.cache_dir = dir;
        tc_ctx *ctx = NULL;
        tc_status st = tc_ctx_create_ex(&ctx, &o);
        if (st != TC_OK) {
            note_fail(w, "tc_ctx_create_ex", st, NULL);
            return NULL;
        }
        tc_program *p = NULL;
        if ((st = tc_compile(ctx, SRC, sizeof SRC - 1, "contexts.tc", &p)) != TC_OK) {
            note_fail(w, "tc_compile", st, ctx);
            tc_ctx_free(ctx);
            return NULL;
        }
        const char *cuda = NULL;
        if ((st = tc_program_dump(p, "cuda", NULL, &cuda)) != TC_OK || !strstr(cuda, "__global__"))
            note_fail(w, "tc_program_dump cuda", st, ctx);

        uint64_t x = 0, y = 0, out = 0;
        size_t bytes = (size_t)N * D * sizeof(float);
        if (mem_alloc(&x, bytes) || mem_alloc(&y, bytes) || mem_alloc(&out, bytes)) {
            note_fail(w, "cuMemAlloc on the fake driver", TC_ERR_NOMEM, NULL);
        } else {
            int64_t shape[2] = {N, D};
            DLTensor tx = tensor((void *)(uintptr_t)x, shape), ty = tensor((void *)(uintptr_t)y, shape),
                     to = tensor((void *)(uintptr_t)out, shape);
            /* a matmul: cuBLAS loaded too; run first in half the rounds, where
             * its call compiles the unit and cuBLAS loads on a thread of its
             * own meanwhile (TENSORC_BLAS_EARLY=1, which tests/CMakeLists.txt
             * sets for this test; src/runtime/rt.h) */
            int64_t tshape[2] = {D, N}, oshape[2] = {N, N};
            DLTensor tyt = tensor((void *)(uintptr_t)y, tshape), tom = tensor((void *)(uintptr_t)out, oshape);
            tc_arg a3[] = {tc_arg_tensor("x", &tx), tc_arg_tensor("y", &tyt), tc_arg_tensor("out", &tom)};
            bool mm_first = (w->id + r) % 2;
            if (mm_first)
                ran(w, "tc_run mm", tc_run(p, "mm", a3, 3, NULL), ctx);
            tc_arg a1[] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &to)};
            ran(w, "tc_run softmax", tc_run(p, "softmax", a1, 2, NULL), ctx);
            tc_arg a2[] = {tc_arg_tensor("x", &tx), tc_arg_tensor("y", &ty), tc_arg_float("a", 0.5),
                           tc_arg_tensor("out", &to)};
            ran(w, "tc_run axpy", tc_run(p, "axpy", a2, 4, NULL), ctx);
            if (!mm_first)
                ran(w, "tc_run mm", tc_run(p, "mm", a3, 3, NULL), ctx);
        }
        if (x)
            mem_free(x);
        if (y)
            mem_free(y);
        if (out)
            mem_free(out);
        tc_program_free(p);
        tc_ctx_free(ctx);
    }
    return NULL;
}

static void concurrent_contexts(void **state)
{
    (void)state;
    const char *lib = getenv("TENSORC_LIBCUDA");
    if (!lib || !*lib)
        skip(); /* registered by tests/CMakeLists.txt with the fake driver */
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    *(void **)&mem_alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&mem_free = dlsym(h, "cuMemFree_v2");
    assert_non_null(mem_alloc);
    assert_non_null(mem_free);
    assert_non_null(mkdtemp(root));

    pthread_t t[THREADS];
    worker w[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.id = i};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    int failures = 0, runs = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failures)
            fprintf(stderr, "%s\n", w[i].msg);
        failures += w[i].failures;
        runs += w[i].ran;
    }
    pthread_barrier_destroy(&start);
    printf("%d threads x %d rounds: %d tc_run calls succeeded%s\n", THREADS, ROUNDS, runs,
           runs ? "" : " (no NVRTC: compile path only)");
    char cmd[sizeof root + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    dlclose(h);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_contexts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
