/* run_softmax.c - tensorc's C API end to end: compile examples/softmax.tc,
 * show the CUDA kernel it becomes, run it on the GPU and check the result
 * against a softmax computed on the CPU.
 *
 *   run_softmax [FILE.tc [N D]]      default: examples/softmax.tc, N=128, D=1000
 *
 * The steps: tc_compile_file; tc_program_source (the generated CUDA, read
 * without a GPU); device memory from the CUDA driver API (cuda_driver.c
 * loads it with dlopen); random input copied up; DLTensors describing the
 * buffers; tc_run, which compiles the kernels with NVRTC (or finds them in
 * the kernel cache) and launches them on the default stream; the output
 * copied back and compared.
 *
 * Without a GPU (no driver, or no device) it still compiles and prints the
 * kernel source, then says "no GPU: skipped running" and exits 0.  Exit
 * status: 0 success or skipped, 1 an error or a wrong result, 2 usage.
 *
 * Build: examples/c/CMakeLists.txt (find_package(tensorc)) or
 * examples/c/Makefile (Makefile.inc or pkg-config); see README.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "tensorc.h"

/* splitmix64: a small, seedable source of uniform floats in [-4, 4). */
static float next_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) * 0x1p-53 * 8.0 - 4.0);
}

/* Print the first `lines` lines of text, indented. */
static void print_head(const char *text, int lines)
{
    for (int i = 0; i < lines && *text; i++) {
        const char *nl = strchr(text, '\n');
        int len = nl ? (int)(nl - text) : (int)strlen(text);
        printf("    %.*s\n", len, text);
        text += len + (nl != NULL);
    }
    if (*text)
        printf("    ...\n");
}

/* out = softmax(x) row by row on the GPU; the reference in double on the
 * CPU; returns 0 when every element agrees. */
static int run_on_gpu(gpu *g, tc_ctx *ctx, tc_program *prog, int64_t n, int64_t d)
{
    size_t count = (size_t)(n * d), bytes = count * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    double *ref = malloc(count * sizeof *ref);
    CUdeviceptr dx = 0, dy = 0;
    int rc = 1;
    if (!x || !y || !ref) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    uint64_t seed = 42;
    for (size_t i = 0; i < count; i++)
        x[i] = next_uniform(&seed);

    if (gpu_check(g, g->mem_alloc(&dx, bytes), "cuMemAlloc") ||
        gpu_check(g, g->mem_alloc(&dy, bytes), "cuMemAlloc") ||
        gpu_check(g, g->htod(dx, x, bytes), "cuMemcpyHtoD"))
        goto done;

    /* DLPack describes each buffer: device, dtype, shape; strides NULL
     * means compact row-major.  The shape binds softmax's dims N and D. */
    int64_t shape[2] = {n, d};
    DLTensor tx = {
        .data = (void *)(uintptr_t)dx,
        .device = {kDLCUDA, 0},
        .ndim = 2,
        .dtype = {kDLFloat, 32, 1},
        .shape = shape,
        .strides = NULL,
        .byte_offset = 0,
    };
    DLTensor ty = tx;
    ty.data = (void *)(uintptr_t)dy;

    /* By name: the parameter x, and the single unnamed result "out". */
    tc_arg args[] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    tc_status st = tc_run(prog, "softmax", args, 2, NULL /* the default stream */);
    if (st != TC_OK) {
        fprintf(stderr, "tc_run: %s: %s\n", tc_status_str(st), tc_errmsg(ctx));
        goto done;
    }
    /* tc_run only enqueues; synchronize to see a failed kernel here. */
    if (gpu_check(g, g->sync(), "cuCtxSynchronize") ||
        gpu_check(g, g->dtoh(y, dy, bytes), "cuMemcpyDtoH"))
        goto done;
    printf("tc_run: ok\n");

    /* The reference in double, and the largest error measured against the
     * tolerance rtol*|ref| + atol (so worst <= 1 passes). */
    for (int64_t r = 0; r < n; r++) {
        const float *xr = x + r * d;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < d; j++)
            mx = fmax(mx, xr[j]);
        for (int64_t j = 0; j < d; j++)
            sum += exp(xr[j] - mx);
        for (int64_t j = 0; j < d; j++)
            ref[r * d + j] = exp(xr[j] - mx) / sum;
    }
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < count; i++) {
        double err = fabs(y[i] - ref[i]) / (1e-4 * fabs(ref[i]) + 1e-7);
        if (!(err <= worst)) { /* a NaN counts as the worst */
            worst = isnan(err) ? INFINITY : err;
            worst_at = i;
        }
    }
    printf("row 0, first 4:  gpu");
    for (int j = 0; j < 4 && j < d; j++)
        printf(" %.6f", y[j]);
    printf("\n                 cpu");
    for (int j = 0; j < 4 && j < d; j++)
        printf(" %.6f", ref[j]);
    printf("\n");
    if (worst <= 1.0) {
        printf("check: %lld x %lld elements match the CPU softmax (rtol 1e-4, atol 1e-7)\n",
               (long long)n, (long long)d);
        rc = 0;
    } else {
        printf("check: MISMATCH at row %zu, col %zu: gpu %.9g, cpu %.9g\n", worst_at / (size_t)d,
               worst_at % (size_t)d, y[worst_at], ref[worst_at]);
    }

done:
    if (dx)
        g->mem_free(dx);
    if (dy)
        g->mem_free(dy);
    free(x);
    free(y);
    free(ref);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/softmax.tc";
    int64_t n = 128, d = 1000;
    if (argc == 4) {
        n = strtoll(argv[2], NULL, 10);
        d = strtoll(argv[3], NULL, 10);
    }
    if (argc == 3 || argc > 4 || n < 1 || d < 1 || n > (1 << 20) || d > (1 << 20) ||
        (argc > 1 && strcmp(argv[1], "--help") == 0)) {
        fprintf(stderr, "usage: %s [FILE.tc [N D]]   (default examples/softmax.tc 128 1000;"
                        " N, D in 1..1048576)\n", argv[0]);
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
    printf("tensorc %s\n", tc_version_string());

    /* 1. Compile: parse, check, build the op graph (no GPU needed). */
    st = tc_compile_file(ctx, path, &prog);
    if (st != TC_OK) {
        fprintf(stderr, "%s", tc_errmsg(ctx)); /* file:line:col: error: ..., a caret */
        goto out;
    }

    /* 2. The CUDA source tc_run will compile (no GPU needed either). */
    const char *src = tc_program_source(prog, "softmax");
    if (!src) {
        fprintf(stderr, "tc_program_source: %s\n", tc_errmsg(ctx));
        goto out;
    }
    /* Past the shared helpers at the top, the kernel itself. */
    const char *kernel = strstr(src, "extern \"C\" __global__");
    printf("generated CUDA for softmax: %zu bytes; the first lines of its kernel:\n", strlen(src));
    print_head(kernel ? kernel : src, 20);

    /* 3. The GPU, if there is one. */
    char why[256];
    if (gpu_open(&g, why, sizeof why) != 0) {
        printf("no GPU: skipped running (%s)\n", why);
        rc = 0;
        goto out;
    }
    printf("device 0: %s\n", g.name);
    rc = run_on_gpu(&g, ctx, prog, n, d);

out:
    /* tensorc's context holds kernels and memory in the CUDA context: free
     * it before the CUDA context is released. */
    tc_program_free(prog);
    tc_ctx_free(ctx);
    gpu_close(&g);
    return rc;
}
