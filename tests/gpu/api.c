/* api.c - tc-gpu-api: the public run API (tc_run) on a real GPU.
 *
 * What `tensorc run --check` cannot reach, because its reference
 * interpreter holds at most 2^30 elements:
 *
 *   idx64   y = x * 2 + 1 over 2^31 + 5 elements: the sizes pass the 32-bit
 *           plan's limits, so tc_run must switch to the 64-bit plan; and
 *           over 2^31 - 3 elements, the largest the 32-bit plan takes, where
 *           an index one vector past the end would overflow an int.  Every
 *           element is checked (x is filled with a byte pattern on the
 *           device, so the expected value is one number).
 *   inout   p = p - lr * g through DLTensors, p updated in place.
 *   matmul  a @ b through cuBLAS, against a host product.
 *   calls   the same call a hundred times (kernels and memory are reused;
 *           the result stays right), and a tensor on another device id
 *           rejected with TC_ERR_INVALID_ARG before anything runs.
 *
 * Prints one line per check and "N passed, M failed" last; exit status 0,
 * 1 on a failure, 3 when there is no GPU.  TC_GPU_API_SMALL=1 skips the
 * 2^31-element checks (they need ~18 GB of GPU memory).
 */
#include <math.h>
#include <stdbool.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "tensorc.h"

static const char SRC[] =
    "fn big(x: f32[*]) -> f32[*] {\n"
    "    return x * 2 + 1\n"
    "}\n"
    "fn upd(p: inout f32[*], g: f32[*], lr: f32) {\n"
    "    p = p - lr * g\n"
    "}\n"
    "fn mm(a: f32[M, K], b: f32[K, N]) -> f32[M, N] {\n"
    "    return a @ b\n"
    "}\n";

static int passed, failed;
static drv_device *dev;
static tc_diag d;

static void report(bool ok, const char *what, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail ? ": " : "", detail ? detail : "");
    if (ok)
        passed++;
    else
        failed++;
}

static DLTensor tensor(drv_ptr p, int ndim, int64_t *shape)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = (void *)(uintptr_t)p;
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    t.ndim = ndim;
    t.shape = shape;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    return t;
}

static bool upload(drv_ptr *p, const float *host, size_t n)
{
    return drv_alloc(dev, n * 4, p, &d) == TC_OK && drv_htod(dev, *p, host, n * 4, &d) == TC_OK;
}

/* y = x * 2 + 1 over n elements, x all bytes 0x3f. */
static void check_big(tc_program *p, tc_ctx *ctx, int64_t n, const char *what)
{
    drv_ptr x = 0, y = 0;
    size_t bytes = (size_t)n * 4;
    char msg[512] = "";
    bool ok = drv_alloc(dev, bytes, &x, &d) == TC_OK && drv_alloc(dev, bytes, &y, &d) == TC_OK &&
              drv_memset_async(dev, x, 0x3f, bytes, NULL, &d) == TC_OK &&
              drv_memset_async(dev, y, 0xff, bytes, NULL, &d) == TC_OK && drv_sync(dev, NULL, &d) == TC_OK;
    if (!ok) {
        snprintf(msg, sizeof msg, "%s", d.brief ? d.brief : "setup failed");
    } else {
        int64_t shape[1] = {n};
        DLTensor tx = tensor(x, 1, shape), ty = tensor(y, 1, shape);
        tc_arg args[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
        tc_status st = tc_run(p, "big", args, 2, NULL);
        if (st == TC_OK)
            st = drv_sync(dev, NULL, &d);
        if (st != TC_OK) {
            ok = false;
            snprintf(msg, sizeof msg, "%s: %s", tc_status_str(st), tc_errmsg(ctx));
        }
    }
    float v;
    uint32_t bits = 0x3f3f3f3fu;
    memcpy(&v, &bits, 4);
    const float want = v * 2.0f + 1.0f;
    /* every element, in chunks */
    const size_t chunk = (size_t)1 << 26;
    float *buf = ok ? malloc(chunk * 4) : NULL;
    if (ok && !buf) {
        ok = false;
        snprintf(msg, sizeof msg, "out of host memory");
    }
    for (int64_t at = 0; ok && at < n; at += (int64_t)chunk) {
        size_t m = (size_t)(n - at) < chunk ? (size_t)(n - at) : chunk;
        if (drv_dtoh(dev, buf, y + (drv_ptr)at * 4, m * 4, &d) != TC_OK) {
            ok = false;
            snprintf(msg, sizeof msg, "%s", d.brief);
            break;
        }
        for (size_t i = 0; i < m; i++)
            if (buf[i] != want) {
                ok = false;
                snprintf(msg, sizeof msg, "element %lld is %.9g, want %.9g", (long long)(at + (int64_t)i),
                         buf[i], want);
                break;
            }
    }
    free(buf);
    drv_free(dev, x);
    drv_free(dev, y);
    char label[128];
    snprintf(label, sizeof label, "%s (%lld elements)", what, (long long)n);
    report(ok, label, ok ? NULL : msg);
}

static uint64_t seed = 88172645463325252ull;
static float rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1);
}

static void check_inout_and_calls(tc_program *p, tc_ctx *ctx)
{
    enum { n = 1000003 };
    float *ph = malloc(n * 4), *gh = malloc(n * 4), *out = malloc(n * 4);
    drv_ptr pd = 0, gd = 0;
    for (int i = 0; i < n; i++) {
        ph[i] = rnd();
        gh[i] = rnd();
    }
    bool ok = ph && gh && out && upload(&pd, ph, n) && upload(&gd, gh, n);
    char msg[512] = "";
    int64_t shape[2] = {1, n}, gshape[1] = {n}; /* [*]: any shape with the right count */
    DLTensor tp = tensor(pd, 2, shape), tg = tensor(gd, 1, gshape);
    tc_arg args[3] = {tc_arg_tensor("p", &tp), tc_arg_tensor("g", &tg), tc_arg_float("lr", 0.5)};
    int calls = 100;
    for (int c = 0; ok && c < calls; c++) {
        tc_status st = tc_run(p, "upd", args, 3, NULL);
        if (st != TC_OK) {
            ok = false;
            snprintf(msg, sizeof msg, "call %d: %s", c, tc_errmsg(ctx));
        }
    }
    if (ok && (drv_sync(dev, NULL, &d) != TC_OK || drv_dtoh(dev, out, pd, n * 4, &d) != TC_OK)) {
        ok = false;
        snprintf(msg, sizeof msg, "%s", d.brief);
    }
    for (int i = 0; ok && i < n; i++) {
        float want = ph[i];
        for (int c = 0; c < calls; c++)
            want = want - 0.5f * gh[i];
        if (fabsf(out[i] - want) > 1e-5f * fmaxf(1.0f, fabsf(want))) {
            ok = false;
            snprintf(msg, sizeof msg, "p[%d] is %.9g, want %.9g", i, out[i], want);
        }
    }
    report(ok, "inout p = p - lr * g, 100 calls in place", ok ? NULL : msg);

    /* host time per call, for the record (not a check): small tensors, so
     * the GPU keeps up and the time is tc_run's own */
    int64_t small = 1024;
    tp.ndim = 1;
    tp.shape = &small;
    tg.shape = &small;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool timed = true;
    for (int c = 0; c < 1000 && timed; c++)
        timed = tc_run(p, "upd", args, 3, NULL) == TC_OK;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (timed)
        printf("info: tc_run takes %.1f us of host time per call (1000 calls, 1024 elements)\n",
               ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / 1000);
    drv_sync(dev, NULL, &d);
    tp.ndim = 2;
    tp.shape = shape;
    tg.shape = gshape;

    /* a tensor on another device: rejected before anything runs */
    tg.device.device_id = 1;
    tc_status st = tc_run(p, "upd", args, 3, NULL);
    report(st == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "parameter 'g' is on cuda:1"),
           "a tensor on another device is rejected", tc_errmsg(ctx));
    drv_free(dev, pd);
    drv_free(dev, gd);
    free(ph);
    free(gh);
    free(out);
}

static void check_matmul(tc_program *p, tc_ctx *ctx)
{
    enum { M = 67, K = 131, N = 45 };
    float *a = malloc(M * K * 4), *b = malloc(K * N * 4), *c = malloc(M * N * 4);
    for (int i = 0; i < M * K; i++)
        a[i] = rnd();
    for (int i = 0; i < K * N; i++)
        b[i] = rnd();
    drv_ptr ad = 0, bd = 0, cd = 0;
    char msg[512] = "";
    bool ok = a && b && c && upload(&ad, a, M * K) && upload(&bd, b, K * N) &&
              drv_alloc(dev, M * N * 4, &cd, &d) == TC_OK;
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
    DLTensor ta = tensor(ad, 2, sa), tb = tensor(bd, 2, sb), tcc = tensor(cd, 2, sc);
    tc_arg args[3] = {tc_arg_tensor(NULL, &ta), tc_arg_tensor(NULL, &tb), tc_arg_tensor(NULL, &tcc)};
    if (ok) {
        tc_status st = tc_run(p, "mm", args, 3, NULL);
        if (st != TC_OK || drv_sync(dev, NULL, &d) != TC_OK || drv_dtoh(dev, c, cd, M * N * 4, &d) != TC_OK) {
            ok = false;
            snprintf(msg, sizeof msg, "%s", st != TC_OK ? tc_errmsg(ctx) : d.brief);
        }
    }
    double worst = 0;
    for (int i = 0; ok && i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int l = 0; l < K; l++)
                s += (double)a[i * K + l] * b[l * N + j];
            double e = fabs(c[i * N + j] - s);
            if (e > worst)
                worst = e;
        }
    if (ok && worst > 1e-4) {
        ok = false;
        snprintf(msg, sizeof msg, "max |error| %g", worst);
    }
    report(ok, "matmul a @ b through cuBLAS (positional arguments)", ok ? NULL : msg);
    drv_free(dev, ad);
    drv_free(dev, bd);
    drv_free(dev, cd);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    diag_init(&d);
    if (drv_open(&dev, 0, &d) != TC_OK) {
        fprintf(stderr, "tc-gpu-api: %s\n", d.brief ? d.brief : "no GPU");
        printf("0 passed, 0 failed (no GPU)\n");
        diag_release(&d);
        return 3;
    }
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    tc_options o = TC_OPTIONS_INIT;
    if (tc_ctx_create_ex(&ctx, &o) != TC_OK ||
        tc_compile(ctx, SRC, strlen(SRC), "api.tc", &p) != TC_OK) {
        fprintf(stderr, "tc-gpu-api: %s\n", ctx ? tc_errmsg(ctx) : "out of memory");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    check_inout_and_calls(p, ctx);
    check_matmul(p, ctx);
    const char *small = getenv("TC_GPU_API_SMALL");
    if (!small || strcmp(small, "1") != 0) {
        check_big(p, ctx, ((int64_t)1 << 31) - 3, "y = x * 2 + 1, 32-bit plan at its limit");
        check_big(p, ctx, ((int64_t)1 << 31) + 5, "y = x * 2 + 1, 64-bit plan");
    }
    tc_program_free(p);
    tc_ctx_free(ctx);
    drv_close(dev);
    diag_release(&d);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
