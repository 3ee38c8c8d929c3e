/* run_adamw.c - an optimizer step through tensorc's C API: scalars and
 * inout tensors.
 *
 *   run_adamw [COUNT [STEPS]]      default: 100003 parameters, 3 steps
 *
 * The program is given as text (tc_compile; the same AdamW as
 * examples/adamw.tc).  Its tensors are `inout`: p, m and v are updated in
 * place, so each tc_run passes them once and finds the new values in the
 * same buffers.  The hyperparameters are run-time scalars (tc_arg_float,
 * and tc_arg_int for the step number), so one set of compiled kernels
 * serves every step: the second and later calls compile nothing and
 * allocate nothing.  After the steps, p, m and v are copied back and
 * compared with the same steps computed on the CPU in double.
 *
 * Without a GPU it compiles, prints the kernel's signature line, says
 * "no GPU: skipped running" and exits 0.  Exit status: 0 success or
 * skipped, 1 an error or a wrong result, 2 usage.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "tensorc.h"

static const char ADAMW[] =
    "fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
    "         lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
    "    p = p * (1 - lr * wd)\n"
    "    m = beta1 * m + (1 - beta1) * g\n"
    "    v = beta2 * v + (1 - beta2) * g * g\n"
    "    mhat = m / (1 - beta1 ** step)\n"
    "    vhat = v / (1 - beta2 ** step)\n"
    "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
    "}\n";

static const double LR = 1e-3, BETA1 = 0.9, BETA2 = 0.999, EPS = 1e-8, WD = 0.01;

/* splitmix64 to a uniform double in [0, 1). */
static double next_unit(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

/* The largest error of got against want, in units of rtol*|want| + atol
 * (<= 1 passes); *at is where. */
static double worst_error(const float *got, const double *want, size_t n, size_t *at)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]) / (1e-4 * fabs(want[i]) + 1e-6);
        if (!(err <= worst)) { /* a NaN counts as the worst */
            worst = isnan(err) ? INFINITY : err;
            *at = i;
        }
    }
    return worst;
}

enum { P, G, M, V, NBUF };
static const char *const NAMES[NBUF] = {"p", "g", "m", "v"};

static int run_on_gpu(gpu *g, tc_ctx *ctx, tc_program *prog, int64_t count, int steps)
{
    size_t n = (size_t)count, bytes = n * sizeof(float);
    float *host[NBUF] = {0};
    double *ref[NBUF] = {0};
    CUdeviceptr dev[NBUF] = {0};
    int rc = 1;

    /* Random state: p and g in [-1, 1), m in [-0.1, 0.1), v in [0, 0.01)
     * (v is a running mean of g*g: never negative). */
    uint64_t seed = 7;
    for (int b = 0; b < NBUF; b++) {
        host[b] = malloc(bytes);
        ref[b] = malloc(n * sizeof(double));
        if (!host[b] || !ref[b]) {
            fprintf(stderr, "out of memory\n");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            double u = next_unit(&seed);
            host[b][i] = (float)(b == V ? 0.01 * u : b == M ? 0.2 * u - 0.1 : 2 * u - 1);
            ref[b][i] = host[b][i];
        }
        if (gpu_check(g, g->mem_alloc(&dev[b], bytes), "cuMemAlloc") ||
            gpu_check(g, g->htod(dev[b], host[b], bytes), "cuMemcpyHtoD"))
            goto done;
    }

    /* One DLTensor per buffer.  A [*] parameter takes any shape; here each
     * is a vector of `count` floats. */
    int64_t shape[1] = {count};
    DLTensor t[NBUF];
    for (int b = 0; b < NBUF; b++)
        t[b] = (DLTensor){
            .data = (void *)(uintptr_t)dev[b],
            .device = {kDLCUDA, 0},
            .ndim = 1,
            .dtype = {kDLFloat, 32, 1},
            .shape = shape,
        };

    for (int step = 1; step <= steps; step++) {
        /* inout parameters are passed once: tc_run reads and rewrites them. */
        tc_arg args[] = {
            tc_arg_tensor("p", &t[P]),  tc_arg_tensor("g", &t[G]),
            tc_arg_tensor("m", &t[M]),  tc_arg_tensor("v", &t[V]),
            tc_arg_float("lr", LR),     tc_arg_float("beta1", BETA1),
            tc_arg_float("beta2", BETA2), tc_arg_float("eps", EPS),
            tc_arg_float("wd", WD),     tc_arg_int("step", step),
        };
        tc_status st = tc_run(prog, "adamw", args, sizeof args / sizeof args[0], NULL);
        if (st != TC_OK) {
            fprintf(stderr, "tc_run (step %d): %s: %s\n", step, tc_status_str(st), tc_errmsg(ctx));
            goto done;
        }

        /* The same step on the CPU. */
        double c1 = 1 - pow(BETA1, step), c2 = 1 - pow(BETA2, step);
        for (size_t i = 0; i < n; i++) {
            double gi = ref[G][i];
            double p = ref[P][i] * (1 - LR * WD);
            double m = ref[M][i] = BETA1 * ref[M][i] + (1 - BETA1) * gi;
            double v = ref[V][i] = BETA2 * ref[V][i] + (1 - BETA2) * gi * gi;
            ref[P][i] = p - LR * (m / c1) / (sqrt(v / c2) + EPS);
        }
    }
    /* The calls were only enqueued; synchronize to see a failed kernel. */
    if (gpu_check(g, g->sync(), "cuCtxSynchronize"))
        goto done;
    printf("tc_run: %d steps ok\n", steps);

    rc = 0;
    for (int b = 0; b < NBUF; b++) {
        if (b == G)
            continue;
        if (gpu_check(g, g->dtoh(host[b], dev[b], bytes), "cuMemcpyDtoH")) {
            rc = 1;
            break;
        }
        size_t at = 0;
        double worst = worst_error(host[b], ref[b], n, &at);
        if (worst <= 1.0) {
            printf("check %s: %lld elements match the CPU (rtol 1e-4, atol 1e-6); %s[0] = %.7f\n",
                   NAMES[b], (long long)count, NAMES[b], host[b][0]);
        } else {
            printf("check %s: MISMATCH at %zu: gpu %.9g, cpu %.9g\n", NAMES[b], at, host[b][at],
                   ref[b][at]);
            rc = 1;
        }
    }

done:
    for (int b = 0; b < NBUF; b++) {
        if (dev[b])
            g->mem_free(dev[b]);
        free(host[b]);
        free(ref[b]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    long long count = 100003, steps = 3;
    if (argc > 1)
        count = strtoll(argv[1], NULL, 10);
    if (argc > 2)
        steps = strtoll(argv[2], NULL, 10);
    if (argc > 3 || count < 1 || count > (1ll << 28) || steps < 1 || steps > 1000) {
        fprintf(stderr, "usage: %s [COUNT [STEPS]]   (default 100003 3; COUNT in 1..2^28,"
                        " STEPS in 1..1000)\n", argv[0]);
        return 2;
    }

    tc_ctx *ctx = NULL;
    tc_program *prog = NULL;
    gpu g = {0};
    int rc = 1;
    tc_status st = tc_ctx_create(&ctx);
    if (st != TC_OK) {
        fprintf(stderr, "tc_ctx_create: %s\n", tc_status_str(st));
        return 1;
    }

    /* Compile from a string; "adamw.tc" only names it in messages. */
    st = tc_compile(ctx, ADAMW, strlen(ADAMW), "adamw.tc", &prog);
    if (st != TC_OK) {
        fprintf(stderr, "%s", tc_errmsg(ctx));
        goto out;
    }
    const char *src = tc_program_source(prog, "adamw");
    if (!src) {
        fprintf(stderr, "tc_program_source: %s\n", tc_errmsg(ctx));
        goto out;
    }
    /* The kernel's signature: its tensors and the scalars it takes. */
    const char *sig = strstr(src, "extern \"C\" __global__");
    const char *end = sig ? strchr(sig, '{') : NULL;
    if (!sig || !end) {
        fprintf(stderr, "tc_program_source: no kernel in the generated source\n");
        goto out;
    }
    while (end > sig && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    printf("generated CUDA for adamw: %zu bytes; its kernel's signature:\n%.*s\n", strlen(src),
           (int)(end - sig), sig);

    char why[256];
    if (gpu_open(&g, why, sizeof why) != 0) {
        printf("no GPU: skipped running (%s)\n", why);
        rc = 0;
        goto out;
    }
    printf("device 0: %s\n", g.name);
    rc = run_on_gpu(&g, ctx, prog, count, (int)steps);

out:
    tc_program_free(prog);
    tc_ctx_free(ctx);
    gpu_close(&g);
    return rc;
}
