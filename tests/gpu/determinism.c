/* determinism.c - tc-gpu-determinism: reductions give the same bits every
 * run and whatever the batch around them (docs/semantics.md,
 * "Determinism"), on a real GPU, through the public API.
 *
 * Every reduction strategy the scheduler has (its --emit=sched name is
 * checked, so a test that stops exercising one says so):
 *
 *   rows       row_sum, row_max, softmax, layernorm (f32), rmsnorm (bf16):
 *              row lengths 1, 3, 4097, 4104, 65537, 65544, 262144 (4104 and
 *              65544: whole vectors, the last items of a thread partly past
 *              the row, in one block and in a cluster);
 *   columns    col_sum, col_scale (a split column reduction feeding an
 *              elementwise epilogue): reduced lengths 1, 3, 4097, 65537;
 *   full       full_sum over 1, 3, 4097, 2^20 + 3 and 2^24 + 1 elements;
 *   foreach    AdamW over 2,000 groups (tc_run_foreach).
 *
 * For each: the same inputs run 4 times, outputs poisoned (0xff) before
 * each run, give identical bits (run to run); and a row (column, group)
 * run alone gives the bits it gets inside the large batch (batch
 * invariance: rows at the start, middle and end; columns likewise).  A
 * full reduction has no batch: its runs must agree, and so must a captured
 * replay (tc_capture) of it.  Last, the paths a repeated call takes
 * (tc_run's remembered calls, tc_replay_run) against the first call's bits,
 * a changed scalar through the remembered path against a host computation,
 * and a 4-kernel chain with temporaries through all three.
 *
 * Prints one line per check and "N passed, M failed" last; exit 0, 1 on a
 * failure, 3 when there is no GPU.
 */
#define TC_UNSTABLE_API
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorc.h"

static const char SRC[] =
    "fn row_sum(x: f32[N, D]) -> f32[N] { return sum(x, axis=1) }\n"
    "fn row_max(x: f32[N, D]) -> f32[N] { return max(x, axis=1) }\n"
    "fn softmax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "fn layernorm(x: f32[N, D]) -> f32[N, D] {\n"
    "    mu = mean(x, axis=-1, keepdim=true)\n"
    "    return (x - mu) * rsqrt(var(x, axis=-1, keepdim=true, correction=0) + 1e-5)\n"
    "}\n"
    "fn rmsnorm(x: bf16[N, D]) -> bf16[N, D] {\n"
    "    xf = f32(x)\n"
    "    return bf16(xf * rsqrt(mean(xf * xf, axis=-1, keepdim=true) + 1e-6))\n"
    "}\n"
    "fn col_sum(x: f32[N, D]) -> f32[D] { return sum(x, axis=0) }\n"
    "fn col_scale(x: f32[N, D]) -> f32[N, D] { return x / (sum(x * x, axis=0, keepdim=true) + 1) }\n"
    "fn full_sum(x: f32[*]) -> f32 { return sum(x) }\n"
    "fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
    "         lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
    "    p = p * (1 - lr * wd)\n"
    "    m = beta1 * m + (1 - beta1) * g\n"
    "    v = beta2 * v + (1 - beta2) * g * g\n"
    "    mhat = m / (1 - beta1 ** step)\n"
    "    vhat = v / (1 - beta2 ** step)\n"
    "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
    "}\n"
    "fn axpy(y: inout f32[*], x: f32[*], a: f32) { y = y + a * x }\n"
    "fn chain4(x: f32[N, D]) -> f32[N, D] {\n"
    "    a = x - sum(x, axis=0, keepdim=true)\n"
    "    b = a - sum(a, axis=1, keepdim=true)\n"
    "    c = b - sum(b, axis=0, keepdim=true)\n"
    "    return c - sum(c, axis=1, keepdim=true)\n"
    "}\n";

enum { RUNS = 4 };

static int passed, failed;
static tc_ctx *ctx;
static tc_program *P;

static void report(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (ok)
        passed++;
    else
        failed++;
}

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static float rnd(void) /* uniform in [-1, 1) */
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1);
}

static uint16_t bf16_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    if (tc_device_alloc(ctx, bytes ? bytes : 1, &p) != TC_OK) {
        fprintf(stderr, "tc_device_alloc(%zu): %s\n", bytes, tc_errmsg(ctx));
        exit(1);
    }
    return p;
}

static void up(void *d, const void *h, size_t n)
{
    if (n && tc_device_copy(ctx, d, h, n, TC_COPY_TO_DEVICE, NULL) != TC_OK) {
        fprintf(stderr, "upload: %s\n", tc_errmsg(ctx));
        exit(1);
    }
}

static void down(void *h, const void *d, size_t n)
{
    if (tc_device_sync(ctx, NULL) != TC_OK ||
        (n && tc_device_copy(ctx, h, d, n, TC_COPY_TO_HOST, NULL) != TC_OK)) {
        fprintf(stderr, "download: %s\n", tc_errmsg(ctx));
        exit(1);
    }
}

static DLTensor tensor(void *data, int ndim, int64_t *shape, int code, int bits)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = kDLCUDA;
    t.ndim = ndim;
    t.shape = shape;
    t.dtype.code = (uint8_t)code;
    t.dtype.bits = (uint8_t)bits;
    t.dtype.lanes = 1;
    return t;
}

/* Elements of es bytes in buf still holding the 0xff poison (NaN in every
 * float type): a kernel that wrote nothing would otherwise pass for
 * deterministic. */
static size_t poisoned(const void *buf, size_t bytes, int es)
{
    const unsigned char *b = buf;
    size_t n = 0;
    for (size_t i = 0; i + (size_t)es <= bytes; i += (size_t)es) {
        bool all = true;
        for (int k = 0; k < es; k++)
            all &= b[i + (size_t)k] == 0xff;
        n += all;
    }
    return n;
}

/* The strategy the scheduler chose for fn's kernels, from --emit=sched. */
static bool uses(const char *fn, const char *strategy)
{
    const char *text = NULL;
    if (tc_program_dump(P, "sched", fn, &text) != TC_OK || !text)
        return false;
    char want[64];
    snprintf(want, sizeof want, ": %s\n", strategy);
    return strstr(text, want) != NULL;
}

/* Run fn(x) -> out with x [N, D] (elem bytes each), the output out_per
 * elements a row: bits into host (n_out bytes), poisoned first. */
static bool run_xo(const char *fn, void *dx, int64_t N, int64_t D, int code, int bits, void *dout,
                   int out_ndim, int64_t *out_shape, size_t out_bytes, void *host)
{
    int64_t xs[2] = {N, D};
    DLTensor tx = tensor(dx, 2, xs, code, bits);
    DLTensor to = tensor(dout, out_ndim, out_shape, code, bits);
    if (tc_device_memset(ctx, dout, 0xff, out_bytes, NULL) != TC_OK)
        return false;
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &to)};
    tc_status st = tc_run(P, fn, a, 2, NULL);
    if (st != TC_OK) {
        report(false, "%s [%lld, %lld]: %s", fn, (long long)N, (long long)D, tc_errmsg(ctx));
        return false;
    }
    down(host, dout, out_bytes);
    return true;
}

/* rows: fn over [N, D]; per_row output elements a row (1 or D) */
static void rows(const char *fn, int64_t N, int64_t D, bool bf16, bool per_elem)
{
    int es = bf16 ? 2 : 4, code = bf16 ? kDLBfloat : kDLFloat, bits = bf16 ? 16 : 32;
    size_t xn = (size_t)(N * D), ob = (size_t)(per_elem ? N * D : N) * (size_t)es;
    size_t rowb = (size_t)(per_elem ? D : 1) * (size_t)es;
    unsigned char *hx = malloc(xn * (size_t)es), *ref = malloc(ob), *got = malloc(ob);
    for (size_t i = 0; i < xn; i++) {
        float f = rnd() * 4;
        if (bf16) {
            uint16_t b = bf16_of(f);
            memcpy(hx + 2 * i, &b, 2);
        } else {
            memcpy(hx + 4 * i, &f, 4);
        }
    }
    void *dx = dalloc(xn * (size_t)es), *dout = dalloc(ob);
    up(dx, hx, xn * (size_t)es);
    int64_t osh[2] = {N, D}, osh1[1] = {N};
    bool ok = run_xo(fn, dx, N, D, code, bits, dout, per_elem ? 2 : 1, per_elem ? osh : osh1, ob, ref);
    int same = 0;
    for (int r = 1; ok && r < RUNS; r++)
        if (run_xo(fn, dx, N, D, code, bits, dout, per_elem ? 2 : 1, per_elem ? osh : osh1, ob, got))
            same += memcmp(ref, got, ob) == 0;
    size_t left = ok ? poisoned(ref, ob, es) : 0;
    if (ok)
        report(same == RUNS - 1 && !left, "rows %s [%lld, %lld]: %d runs, identical bits (%zu elements "
               "unwritten)", fn, (long long)N, (long long)D, RUNS, left);
    /* a row alone: the bits it has in the batch */
    int64_t picks[3] = {0, N / 2 + (N > 2), N - 1};
    int alone_ok = 0, tried = 0;
    void *d1 = dalloc(rowb);
    for (int k = 0; ok && k < 3; k++) {
        int64_t i = picks[k];
        if (k && picks[k] == picks[k - 1])
            continue;
        tried++;
        int64_t o2[2] = {1, D}, o1[1] = {1};
        void *dcopy = dalloc((size_t)D * (size_t)es);
        up(dcopy, hx + (size_t)(i * D) * (size_t)es, (size_t)D * (size_t)es);
        if (run_xo(fn, dcopy, 1, D, code, bits, d1, per_elem ? 2 : 1, per_elem ? o2 : o1, rowb, got))
            alone_ok += memcmp(got, ref + (size_t)i * rowb, rowb) == 0;
        tc_device_sync(ctx, NULL);
        tc_device_free(ctx, dcopy);
    }
    if (ok)
        report(alone_ok == tried, "rows %s [%lld, %lld]: rows %lld, %lld, %lld alone give their batch bits "
               "(%d of %d)", fn, (long long)N, (long long)D, (long long)picks[0], (long long)picks[1],
               (long long)picks[2], alone_ok, tried);
    tc_device_free(ctx, d1);
    tc_device_free(ctx, dx);
    tc_device_free(ctx, dout);
    free(hx);
    free(ref);
    free(got);
}

/* columns: fn over [N, D] reducing axis 0; per_elem: output [N, D], else [D] */
static void columns(const char *fn, int64_t N, int64_t D, bool per_elem)
{
    size_t xn = (size_t)(N * D), ob = (size_t)(per_elem ? N * D : D) * 4;
    float *hx = malloc(xn * 4), *ref = malloc(ob), *got = malloc(ob), *col = malloc((size_t)N * 4);
    for (size_t i = 0; i < xn; i++)
        hx[i] = rnd() * 4;
    void *dx = dalloc(xn * 4), *dout = dalloc(ob);
    up(dx, hx, xn * 4);
    int64_t osh[2] = {N, D}, osh1[1] = {D};
    bool ok = run_xo(fn, dx, N, D, kDLFloat, 32, dout, per_elem ? 2 : 1, per_elem ? osh : osh1, ob, ref);
    int same = 0;
    for (int r = 1; ok && r < RUNS; r++)
        if (run_xo(fn, dx, N, D, kDLFloat, 32, dout, per_elem ? 2 : 1, per_elem ? osh : osh1, ob, got))
            same += memcmp(ref, got, ob) == 0;
    size_t left = ok ? poisoned(ref, ob, 4) : 0;
    if (ok)
        report(same == RUNS - 1 && !left, "columns %s [%lld, %lld]: %d runs, identical bits (%zu elements "
               "unwritten)", fn, (long long)N, (long long)D, RUNS, left);
    int64_t picks[3] = {0, D / 2 + (D > 2), D - 1};
    int alone_ok = 0, tried = 0;
    void *dc = dalloc((size_t)N * 4), *d1 = dalloc((size_t)(per_elem ? N : 1) * 4);
    float *g1 = malloc((size_t)N * 4);
    for (int k = 0; ok && k < 3; k++) {
        int64_t j = picks[k];
        if (k && picks[k] == picks[k - 1])
            continue;
        tried++;
        for (int64_t i = 0; i < N; i++)
            col[i] = hx[i * D + j];
        up(dc, col, (size_t)N * 4);
        int64_t o2[2] = {N, 1}, o1[1] = {1};
        size_t b1 = (size_t)(per_elem ? N : 1) * 4;
        if (run_xo(fn, dc, N, 1, kDLFloat, 32, d1, per_elem ? 2 : 1, per_elem ? o2 : o1, b1, g1)) {
            bool eq = true;
            for (int64_t i = 0; i < (per_elem ? N : 1); i++)
                eq &= memcmp(&g1[i], per_elem ? &ref[i * D + j] : &ref[j], 4) == 0;
            alone_ok += eq;
        }
    }
    if (ok)
        report(alone_ok == tried, "columns %s [%lld, %lld]: columns %lld, %lld, %lld alone give their "
               "batch bits (%d of %d)", fn, (long long)N, (long long)D, (long long)picks[0],
               (long long)picks[1], (long long)picks[2], alone_ok, tried);
    tc_device_free(ctx, dc);
    tc_device_free(ctx, d1);
    tc_device_free(ctx, dx);
    tc_device_free(ctx, dout);
    free(g1);
    free(hx);
    free(ref);
    free(got);
    free(col);
}

static void full(int64_t n)
{
    float *hx = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        hx[i] = rnd();
    void *dx = dalloc((size_t)n * 4), *dout = dalloc(4);
    up(dx, hx, (size_t)n * 4);
    int64_t xs[1] = {n};
    DLTensor tx = tensor(dx, 1, xs, kDLFloat, 32), to = tensor(dout, 0, NULL, kDLFloat, 32);
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &to)};
    uint32_t bits[RUNS + 1];
    int same = 0;
    bool ok = true;
    for (int r = 0; ok && r < RUNS; r++) {
        ok = tc_device_memset(ctx, dout, 0xff, 4, NULL) == TC_OK && tc_run(P, "full_sum", a, 2, NULL) == TC_OK;
        if (ok) {
            down(&bits[r], dout, 4);
            same += r && bits[r] == bits[0];
        }
    }
    tc_replay *rp = NULL;
    bool rok = ok && tc_capture(P, "full_sum", a, 2, &rp) == TC_OK &&
               tc_device_memset(ctx, dout, 0xff, 4, NULL) == TC_OK && tc_replay_run(rp, a, 2, NULL) == TC_OK &&
               tc_replay_run(rp, NULL, 0, NULL) == TC_OK;
    if (rok)
        down(&bits[RUNS], dout, 4);
    double want = 0;
    for (int64_t i = 0; i < n; i++)
        want += hx[i];
    float f;
    memcpy(&f, &bits[0], 4);
    report(ok && same == RUNS - 1 && fabs(f - want) <= 1e-5 * (1 + fabs(want)) * sqrt((double)n),
           "full full_sum over %lld: %d runs, identical bits (%.9g; f64 sum %.9g)%s", (long long)n, RUNS,
           f, want, ok ? "" : tc_errmsg(ctx));
    report(rok && bits[RUNS] == bits[0], "full full_sum over %lld: a captured replay gives the same bits%s%s",
           (long long)n, rok ? "" : ": ", rok ? "" : tc_errmsg(ctx));
    tc_replay_free(rp);
    tc_device_free(ctx, dx);
    tc_device_free(ctx, dout);
    free(hx);
}

/* AdamW over G groups, 3 steps; then group k alone from the same start
 * gives the bits it got among all. */
static void foreach_adamw(int G)
{
    int64_t *n = malloc(sizeof *n * (size_t)G);
    size_t total = 0;
    for (int i = 0; i < G; i++) {
        n[i] = (i * 7919) % 9000 + (i % 5 == 0 ? 0 : 1);
        total += (size_t)n[i];
    }
    float *h0 = malloc(total * 4 * 4), *h1 = malloc(total * 4 * 4);
    for (size_t i = 0; i < total * 4; i++)
        h0[i] = rnd();
    for (size_t i = 0; i < total; i++)
        h0[3 * total + i] = fabsf(h0[3 * total + i]); /* v >= 0 */
    float *base = dalloc(total * 4 * 4);
    DLTensor *T = calloc((size_t)G * 4, sizeof *T);
    const DLTensor **L[4];
    for (int k = 0; k < 4; k++)
        L[k] = calloc((size_t)G, sizeof *L[k]);
    size_t at = 0;
    for (int i = 0; i < G; i++) {
        for (int k = 0; k < 4; k++) { /* p, g, m, v: four regions of base */
            T[4 * i + k] = tensor(base + k * total + at, 1, &n[i], kDLFloat, 32);
            L[k][i] = &T[4 * i + k];
        }
        at += (size_t)n[i];
    }
    tc_arg a[10] = {tc_arg_tensors("p", L[0]), tc_arg_tensors("g", L[1]), tc_arg_tensors("m", L[2]),
                    tc_arg_tensors("v", L[3]), tc_arg_float("lr", 1e-3), tc_arg_float("beta1", 0.9),
                    tc_arg_float("beta2", 0.999), tc_arg_float("eps", 1e-8), tc_arg_float("wd", 0.01),
                    tc_arg_int("step", 1)};
    bool ok = true;
    float *ref = malloc(total * 4 * 4);
    int same = 0;
    for (int r = 0; ok && r < 2; r++) { /* twice from the same start: the same bits */
        up(base, h0, total * 16);
        for (int s = 1; ok && s <= 3; s++) {
            a[9] = tc_arg_int("step", s);
            ok = tc_run_foreach(P, "adamw", (size_t)G, a, 10, NULL) == TC_OK;
        }
        if (ok)
            down(r ? h1 : ref, base, total * 16);
        same += ok && r && memcmp(ref, h1, total * 16) == 0;
    }
    /* the result itself, against AdamW in double on the host (every element) */
    double worst = 0;
    for (size_t i = 0; ok && i < total; i++) {
        double Pp = h0[i], G1 = h0[total + i], M = h0[2 * total + i], V = h0[3 * total + i];
        for (int s = 1; s <= 3; s++) {
            Pp *= 1 - 1e-3 * 0.01;
            M = 0.9 * M + 0.1 * G1;
            V = 0.999 * V + 0.001 * G1 * G1;
            Pp -= 1e-3 * (M / (1 - pow(0.9, s))) / (sqrt(V / (1 - pow(0.999, s))) + 1e-8);
        }
        double want[3] = {Pp, M, V};
        for (int k = 0; k < 3; k++) {
            double got = ref[(k == 0 ? 0 : k + 1) * total + i];
            worst = fmax(worst, fabs(got - want[k]) / (1 + fabs(want[k])));
        }
    }
    report(ok && same == 1 && worst < 1e-5, "foreach adamw over %d groups, 3 steps: 2 runs, identical bits "
           "(against the host in double: worst rel err %.2g)%s%s", G, worst, ok ? "" : ": ",
           ok ? "" : tc_errmsg(ctx));
    /* groups alone */
    int picks[3] = {1, G / 2 + 1, G - 1}, alone = 0;
    for (int q = 0; ok && q < 3; q++) {
        int i = picks[q];
        size_t off = 0;
        for (int k = 0; k < i; k++)
            off += (size_t)n[k];
        up(base, h0, total * 16);
        const DLTensor *one[4] = {&T[4 * i], &T[4 * i + 1], &T[4 * i + 2], &T[4 * i + 3]};
        tc_arg b[10];
        memcpy(b, a, sizeof b);
        for (int k = 0; k < 4; k++)
            b[k] = tc_arg_tensors(a[k].name, &one[k]);
        for (int s = 1; ok && s <= 3; s++) {
            b[9] = tc_arg_int("step", s);
            ok = tc_run_foreach(P, "adamw", 1, b, 10, NULL) == TC_OK;
        }
        if (!ok)
            break;
        down(h1, base, total * 16);
        bool eq = true;
        for (int k = 0; k < 4; k++)
            eq &= memcmp(h1 + k * total + off, ref + k * total + off, (size_t)n[i] * 4) == 0;
        alone += eq;
    }
    report(ok && alone == 3, "foreach adamw: groups %d, %d, %d alone give their bits among %d (%d of 3)",
           picks[0], picks[1], picks[2], G, alone);
    tc_device_free(ctx, base);
    for (int k = 0; k < 4; k++)
        free(L[k]);
    free(T);
    free(n);
    free(h0);
    free(h1);
    free(ref);
}

/* The paths of a repeated call: the first tc_run (checked), the same call
 * again (remembered), a captured replay: the same bits. */
static void repeated_paths(const char *fn, int64_t N, int64_t D)
{
    size_t bytes = (size_t)(N * D) * 4;
    float *hx = malloc(bytes), *b0 = malloc(bytes), *b1 = malloc(bytes);
    for (int64_t i = 0; i < N * D; i++)
        hx[i] = rnd() * 3;
    void *dx = dalloc(bytes), *dout = dalloc(bytes), *dout2 = dalloc(bytes);
    up(dx, hx, bytes);
    int64_t xs[2] = {N, D};
    DLTensor tx = tensor(dx, 2, xs, kDLFloat, 32), to = tensor(dout, 2, xs, kDLFloat, 32);
    DLTensor to2 = tensor(dout2, 2, xs, kDLFloat, 32);
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &to)};
    tc_arg a2[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &to2)};
    bool ok = tc_device_memset(ctx, dout, 0xff, bytes, NULL) == TC_OK && tc_run(P, fn, a, 2, NULL) == TC_OK;
    if (ok)
        down(b0, dout, bytes);
    size_t left = ok ? poisoned(b0, bytes, 4) : 0;
    report(ok && !left, "%s [%lld, %lld]: the first call writes every element (%zu unwritten)", fn,
           (long long)N, (long long)D, left);
    /* another call in between (other output), then the first again: remembered */
    int agree = 0;
    for (int r = 0; ok && r < 3; r++) {
        ok = tc_run(P, fn, a2, 2, NULL) == TC_OK && tc_device_memset(ctx, dout, 0xff, bytes, NULL) == TC_OK &&
             tc_run(P, fn, a, 2, NULL) == TC_OK;
        if (ok) {
            down(b1, dout, bytes);
            agree += memcmp(b0, b1, bytes) == 0;
        }
    }
    report(ok && agree == 3, "%s [%lld, %lld]: repeated calls give the first call's bits (%d of 3)%s%s",
           fn, (long long)N, (long long)D, agree, ok ? "" : ": ", ok ? "" : tc_errmsg(ctx));
    tc_replay *rp = NULL;
    ok = tc_capture(P, fn, a, 2, &rp) == TC_OK;
    agree = 0;
    for (int r = 0; ok && r < 3; r++) {
        ok = tc_device_memset(ctx, dout, 0xff, bytes, NULL) == TC_OK && tc_replay_run(rp, NULL, 0, NULL) == TC_OK &&
             tc_replay_run(rp, a, 2, NULL) == TC_OK;
        if (ok) {
            down(b1, dout, bytes);
            agree += memcmp(b0, b1, bytes) == 0;
        }
    }
    report(ok && agree == 3 && tc_replay_kernels(rp) > 0,
           "%s [%lld, %lld]: a captured replay (%d kernels) gives the first call's bits (%d of 3)%s%s", fn,
           (long long)N, (long long)D, tc_replay_kernels(rp), agree, ok ? "" : ": ", ok ? "" : tc_errmsg(ctx));
    tc_replay_free(rp);
    tc_device_free(ctx, dx);
    tc_device_free(ctx, dout);
    tc_device_free(ctx, dout2);
    free(hx);
    free(b0);
    free(b1);
}

/* A scalar changed between remembered calls reaches the kernel. */
static void changed_scalar(void)
{
    enum { N = 4099 };
    float hx[N], hy[N], got[N];
    for (int i = 0; i < N; i++) {
        hx[i] = rnd();
        hy[i] = rnd();
    }
    void *dx = dalloc(sizeof hx), *dy = dalloc(sizeof hy);
    up(dx, hx, sizeof hx);
    up(dy, hy, sizeof hy);
    int64_t n[1] = {N};
    DLTensor tx = tensor(dx, 1, n, kDLFloat, 32), ty = tensor(dy, 1, n, kDLFloat, 32);
    bool ok = true;
    for (int s = 0; ok && s < 5; s++) {
        float a = 0.25f * (float)(s + 1);
        tc_arg args[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_float("a", a)};
        ok = tc_run(P, "axpy", args, 3, NULL) == TC_OK;
        for (int i = 0; i < N; i++)
            hy[i] = hy[i] + a * hx[i];
    }
    double worst = 0;
    if (ok) {
        down(got, dy, sizeof got);
        for (int i = 0; i < N; i++)
            worst = fmax(worst, fabs((double)got[i] - hy[i]) / (1 + fabs(hy[i])));
    }
    report(ok && worst <= 1e-6, "axpy, 5 remembered calls with a new scalar each: worst rel err %.2g%s%s", worst,
           ok ? "" : ": ", ok ? "" : tc_errmsg(ctx));
    tc_device_free(ctx, dx);
    tc_device_free(ctx, dy);
}

int main(void)
{
    if (tc_ctx_create(&ctx) != TC_OK || tc_compile(ctx, SRC, strlen(SRC), "determinism.tc", &P) != TC_OK) {
        fprintf(stderr, "setup: %s\n", tc_errmsg(ctx));
        return 1;
    }
    tc_device_info info;
    if (tc_device_open(ctx, TC_DEVICE_AUTO, &info) != TC_OK) {
        printf("no GPU: %s\n", tc_errmsg(ctx));
        return 3;
    }
    printf("device: %s (sm_%d, %d SMs)\n", info.name, info.arch, info.sm_count);
    static const struct { const char *fn, *strategy; } strat[] = {
        {"row_sum", "rows"}, {"softmax", "rows"}, {"layernorm", "rows"}, {"rmsnorm", "rows"},
        {"col_sum", "columns"}, {"col_scale", "columns"}, {"full_sum", "full"},
    };
    for (size_t i = 0; i < sizeof strat / sizeof *strat; i++)
        report(uses(strat[i].fn, strat[i].strategy), "%s is scheduled as %s (--emit=sched)", strat[i].fn,
               strat[i].strategy);

    static const int64_t lens[] = {1, 3, 4097, 4104, 65537, 65544, 262144};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        int64_t D = lens[k], N = D >= 65536 ? 48 : 515;
        rows("row_sum", N, D, false, false);
        rows("row_max", N, D, false, false);
        rows("softmax", N, D, false, true);
        rows("layernorm", N, D, false, true);
        rows("rmsnorm", N, D, true, true);
    }
    static const int64_t reduced[] = {1, 3, 4097, 65537};
    for (size_t k = 0; k < sizeof reduced / sizeof *reduced; k++) {
        int64_t N = reduced[k], D = N >= 65536 ? 129 : 1031;
        columns("col_sum", N, D, false);
        columns("col_scale", N, D, true);
    }
    static const int64_t fulls[] = {1, 3, 4097, (1 << 20) + 3, (1 << 24) + 1};
    for (size_t k = 0; k < sizeof fulls / sizeof *fulls; k++)
        full(fulls[k]);
    foreach_adamw(2000);
    repeated_paths("chain4", 32, 128);
    repeated_paths("chain4", 1000, 333);
    repeated_paths("softmax", 32, 128);
    changed_scalar();

    tc_program_free(P);
    tc_ctx_free(ctx);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
