/* foreach.c - tc-gpu-foreach: tc_run_foreach on a real GPU.
 *
 * Every element of every group is checked against the same update computed
 * on the host in double:
 *
 *   adamw    3 AdamW steps (examples/adamw.tc's formula) over 1, 7, 300 and
 *            2,000 groups: sizes from 0 to 3M elements, chunk edges (8192,
 *            8193), and misaligned groups (tensors that start 4 bytes past
 *            a 16-byte boundary, all of a group's or just one of them), so
 *            the vector path, the scalar path, the group table in the
 *            kernel parameter (up to its capacity) and in device memory
 *            (300 and 2,000 groups) all run.  Untouched memory between the
 *            tensors (guard elements) must keep its value.
 *   outputs  y = x * s with y a list of outputs (not inout).
 *   mixed    a bf16 inout tensor updated from an f32 one.
 *   empty    no groups, and only empty groups: TC_OK, nothing written.
 *   errors   element counts that differ within a group, a written tensor
 *            overlapping another group's, a function that is not
 *            elementwise: TC_ERR_INVALID_ARG naming the group.
 *
 * Also prints tc_run_foreach's host time per call for 240 groups (not a
 * check: timings are for bench/).  Prints one line per check and
 * "N passed, M failed" last; exit status 0, 1 on a failure, 3 when there is
 * no GPU.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "tensorc.h"

static const char SRC[] =
    "fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
    "         lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
    "    p = p * (1 - lr * wd)\n"
    "    m = beta1 * m + (1 - beta1) * g\n"
    "    v = beta2 * v + (1 - beta2) * g * g\n"
    "    mhat = m / (1 - beta1 ** step)\n"
    "    vhat = v / (1 - beta2 ** step)\n"
    "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
    "}\n"
    "fn scale(x: f32[*], s: f32) -> f32[*] {\n"
    "    return x * s\n"
    "}\n"
    "fn mixed(y: inout bf16[*], x: f32[*], a: f32) {\n"
    "    y = bf16(f32(y) + a * x)\n"
    "}\n"
    "fn rowsum(x: f32[N, D]) -> f32[N] {\n"
    "    return sum(x, axis=1)\n"
    "}\n";

static const double LR = 1e-3, B1 = 0.9, B2 = 0.999, EPS = 1e-8, WD = 0.01;

static int passed, failed;
static drv_device *dev;
static tc_diag d;

static void report(bool ok, const char *what, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail && *detail ? ": " : "",
           detail ? detail : "");
    if (ok)
        passed++;
    else
        failed++;
}

static uint64_t seed = 88172645463325252ull;
static uint64_t next(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}
static float rnd(void) /* uniform in [-1, 1) */
{
    return (float)((double)(next() >> 11) / 9007199254740992.0 * 2 - 1);
}

static DLTensor tensor(uint64_t addr, int64_t *shape, int bits, int code)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = (void *)(uintptr_t)addr;
    t.device.device_type = kDLCUDA;
    t.ndim = 1;
    t.shape = shape;
    t.dtype.code = (uint8_t)code;
    t.dtype.bits = (uint8_t)bits;
    t.dtype.lanes = 1;
    return t;
}

/* --- one device block holding every tensor of a test, with its host copy ------- */

typedef struct {
    float *host;            /* the block's floats, as uploaded */
    size_t n, used;         /* floats */
    drv_ptr base;
} block;

/* n floats from the block, starting at a 64-byte boundary plus `skew`
 * floats, with a guard of 3 floats after (they must stay untouched). */
static size_t take(block *b, int64_t n, int skew)
{
    size_t at = (b->used + 15) / 16 * 16 + (size_t)skew;
    b->used = at + (size_t)n + 3;
    return at;
}

static bool block_alloc(block *b, size_t n)
{
    b->n = n;
    b->used = 0;
    b->host = malloc(n * sizeof(float));
    if (!b->host)
        return false;
    for (size_t i = 0; i < n; i++)
        b->host[i] = 12345.0f; /* the guards' value; tensors are filled over it */
    return drv_alloc(dev, n * sizeof(float), &b->base, &d) == TC_OK;
}

static bool block_upload(block *b)
{
    return drv_htod(dev, b->base, b->host, b->n * sizeof(float), &d) == TC_OK;
}

static float *block_download(block *b)
{
    float *out = malloc(b->n * sizeof(float));
    if (out && (drv_sync(dev, NULL, &d) != TC_OK ||
                drv_dtoh(dev, out, b->base, b->n * sizeof(float), &d) != TC_OK)) {
        free(out);
        return NULL;
    }
    return out;
}

static void block_free(block *b)
{
    drv_free(dev, b->base);
    free(b->host);
}

/* --- adamw over groups ------------------------------------------------------------ */

typedef struct {
    int64_t n;
    size_t at[4];           /* p, g, m, v: offsets in the block */
    int64_t shape;
    DLTensor t[4];
} group;

static int64_t pick_size(int i, int ngroups, int64_t big)
{
    static const int64_t edge[] = {0, 1, 3, 4, 5, 8191, 8192, 8193, 4096, 12289};
    if (ngroups == 1)
        return big;
    if (i < (int)(sizeof edge / sizeof *edge) && ngroups > 20)
        return edge[i];
    if (next() % 10 == 0)
        return 0;
    return (int64_t)(next() % (uint64_t)big);
}

/* The steps on the host, in double; the largest error in units of the
 * tolerance (<= 1 passes), and where. */
static double adamw_errors(const block *b, const float *got, const group *gs, int ng, int steps,
                           char *where, size_t wn)
{
    double worst = 0;
    for (int k = 0; k < ng; k++) {
        const group *G = &gs[k];
        for (int64_t i = 0; i < G->n; i++) {
            double p = b->host[G->at[0] + i], g = b->host[G->at[1] + i];
            double m = b->host[G->at[2] + i], v = b->host[G->at[3] + i];
            double sp = 0, sm = 0, sv = 0; /* the largest magnitude of each one's terms */
            /* the scalars are f32 parameters: 1 - beta2 and beta2 ** step are
             * f32 arithmetic in the kernel (1 - 0.999f is 1.3e-5 off 0.001) */
            const double c_wd = 1.0f - (float)LR * (float)WD;
            const double c1 = 1.0f - (float)B1, c2 = 1.0f - (float)B2;
            const double b1 = (float)B1, b2 = (float)B2, lr = (float)LR, eps = (float)EPS;
            for (int s = 1; s <= steps; s++) {
                sm = fmax(sm, b1 * fabs(m) + c1 * fabs(g));
                sv = fmax(sv, b2 * fabs(v) + c2 * g * g);
                p = p * c_wd;
                m = b1 * m + c1 * g;
                v = b2 * v + c2 * g * g;
                double mhat = m / (1.0f - powf((float)B1, (float)s)),
                       vhat = v / (1.0f - powf((float)B2, (float)s));
                double step = lr * mhat / (sqrt(vhat) + eps);
                sp = fmax(sp, fabs(p) + fabs(step));
                p = p - step;
            }
            /* f32 rounding of a few operations: 2e-6 of the terms' magnitude
             * (m = beta1 * m + (1 - beta1) * g may cancel to almost 0, and
             * then only its terms say how large its rounding error may be) */
            const double want[3] = {p, m, v}, scale[3] = {sp, sm, sv};
            const size_t at[3] = {G->at[0], G->at[2], G->at[3]};
            for (int q = 0; q < 3; q++) {
                double e = fabs(got[at[q] + i] - want[q]) / (2e-6 * scale[q] + 1e-30);
                if (!(e <= worst)) {
                    worst = isnan(e) ? INFINITY : e;
                    snprintf(where, wn, "group %d (n %lld) %s[%lld] = %.9g, want %.9g", k,
                             (long long)G->n, (const char *[]){"p", "m", "v"}[q], (long long)i,
                             got[at[q] + i], want[q]);
                }
            }
        }
    }
    return worst;
}

static void check_adamw(tc_program *prog, tc_ctx *ctx, int ng, int64_t big, int misalign_pct)
{
    group *gs = calloc((size_t)(ng > 0 ? ng : 1), sizeof *gs);
    const DLTensor **lists[4];
    for (int q = 0; q < 4; q++)
        lists[q] = calloc((size_t)(ng > 0 ? ng : 1), sizeof(DLTensor *));
    size_t total = 64;
    for (int k = 0; k < ng; k++) {
        gs[k].n = pick_size(k, ng, big);
        total += 4 * ((size_t)gs[k].n + 3 + 32);
    }
    block b;
    char msg[700] = "";
    bool ok = gs && lists[3] && block_alloc(&b, total);
    for (int k = 0; ok && k < ng; k++) {
        group *G = &gs[k];
        bool skew_all = (int)(next() % 100) < misalign_pct, skew_one = (int)(next() % 100) < misalign_pct;
        int one = (int)(next() % 4);
        G->shape = G->n;
        for (int q = 0; q < 4; q++) {
            G->at[q] = take(&b, G->n, skew_all || (skew_one && q == one) ? 1 : 0);
            for (int64_t i = 0; i < G->n; i++) {
                float x = rnd();
                b.host[G->at[q] + i] = q == 3 ? fabsf(x) * 1e-3f : q == 2 ? x * 0.1f : x;
            }
            G->t[q] = tensor(b.base + G->at[q] * sizeof(float), &G->shape, 32, kDLFloat);
            lists[q][k] = &G->t[q];
        }
    }
    ok = ok && block_upload(&b);
    int steps = 3;
    for (int s = 1; ok && s <= steps; s++) {
        tc_arg args[10] = {
            tc_arg_tensors("p", lists[0]), tc_arg_tensors("g", lists[1]),
            tc_arg_tensors("m", lists[2]), tc_arg_tensors("v", lists[3]),
            tc_arg_float("lr", LR), tc_arg_float("beta1", B1), tc_arg_float("beta2", B2),
            tc_arg_float("eps", EPS), tc_arg_float("wd", WD), tc_arg_int("step", s),
        };
        if (tc_run_foreach(prog, "adamw", (size_t)ng, args, 10, NULL) != TC_OK) {
            ok = false;
            snprintf(msg, sizeof msg, "step %d: %s", s, tc_errmsg(ctx));
        }
    }
    float *got = ok ? block_download(&b) : NULL;
    if (ok && !got) {
        ok = false;
        snprintf(msg, sizeof msg, "%s", d.brief ? d.brief : "download failed");
    }
    int64_t elems = 0;
    if (ok) {
        double worst = adamw_errors(&b, got, gs, ng, steps, msg, sizeof msg);
        int bad_guard = 0; /* the guards after each tensor: untouched */
        for (int k = 0; k < ng; k++)
            for (int q = 0; q < 4; q++)
                for (int e = 0; e < 3; e++)
                    bad_guard += got[gs[k].at[q] + (size_t)gs[k].n + (size_t)e] != 12345.0f;
        for (int k = 0; k < ng; k++)
            elems += gs[k].n;
        ok = worst <= 1 && bad_guard == 0;
        char tail[400];
        if (bad_guard)
            snprintf(tail, sizeof tail, "%d guard elements past the tensors were written", bad_guard);
        else
            snprintf(tail, sizeof tail, "worst %.3g of tolerance%s%.300s", worst, ok ? "" : " at ",
                     ok ? "" : msg);
        snprintf(msg, sizeof msg, "%s", tail);
    }
    char what[160];
    snprintf(what, sizeof what, "adamw, %d group%s, %lld elements, 3 steps, every element", ng,
             ng == 1 ? "" : "s", (long long)elems);
    report(ok, what, msg);
    free(got);
    if (gs && lists[3])
        block_free(&b);
    free(gs);
    for (int q = 0; q < 4; q++)
        free(lists[q]);
}

/* --- outputs, mixed dtypes, empty, errors -------------------------------------------- */

static void check_outputs(tc_program *prog, tc_ctx *ctx)
{
    enum { NG = 5 };
    int64_t sizes[NG] = {100, 0, 4096 * 3 + 1, 7, 65536}, shapes[NG];
    block b;
    group gs[NG];
    const DLTensor *xs[NG], *ys[NG];
    size_t total = 64;
    for (int k = 0; k < NG; k++)
        total += 2 * ((size_t)sizes[k] + 3 + 32);
    char msg[300] = "";
    bool ok = block_alloc(&b, total);
    for (int k = 0; ok && k < NG; k++) {
        shapes[k] = sizes[k];
        gs[k].n = sizes[k];
        gs[k].at[0] = take(&b, sizes[k], k == 3);
        gs[k].at[1] = take(&b, sizes[k], 0);
        for (int64_t i = 0; i < sizes[k]; i++)
            b.host[gs[k].at[0] + i] = rnd();
        gs[k].t[0] = tensor(b.base + gs[k].at[0] * 4, &shapes[k], 32, kDLFloat);
        gs[k].t[1] = tensor(b.base + gs[k].at[1] * 4, &shapes[k], 32, kDLFloat);
        xs[k] = &gs[k].t[0];
        ys[k] = &gs[k].t[1];
    }
    ok = ok && block_upload(&b);
    tc_arg args[3] = {tc_arg_tensors("x", xs), tc_arg_float("s", -2.5), tc_arg_tensors("out", ys)};
    if (ok && tc_run_foreach(prog, "scale", NG, args, 3, NULL) != TC_OK) {
        ok = false;
        snprintf(msg, sizeof msg, "%s", tc_errmsg(ctx));
    }
    float *got = ok ? block_download(&b) : NULL;
    for (int k = 0; got && ok && k < NG; k++)
        for (int64_t i = 0; ok && i < sizes[k]; i++) {
            float want = b.host[gs[k].at[0] + i] * -2.5f, have = got[gs[k].at[1] + i];
            if (have != want) {
                ok = false;
                snprintf(msg, sizeof msg, "group %d y[%lld] = %.9g, want %.9g", k, (long long)i,
                         have, want);
            }
        }
    report(ok && got, "y = x * s into output lists, 5 groups", msg);
    free(got);
    block_free(&b);
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void check_mixed(tc_program *prog, tc_ctx *ctx)
{
    enum { NG = 4 };
    int64_t sizes[NG] = {1000, 33, 0, 40001}, shapes[NG];
    size_t yat[NG], xat[NG], total = 0;
    for (int k = 0; k < NG; k++)
        total += (size_t)sizes[k] * 6 + 256;
    unsigned char *host = calloc(total, 1);
    drv_ptr base = 0;
    char msg[300] = "";
    bool ok = host && drv_alloc(dev, total, &base, &d) == TC_OK;
    size_t at = 0;
    DLTensor ty[NG], tx[NG];
    const DLTensor *ly[NG], *lx[NG];
    for (int k = 0; k < NG; k++) {
        shapes[k] = sizes[k];
        yat[k] = at + (k == 1 ? 2 : 0); /* group 1's y is 2-byte aligned only */
        at = (yat[k] + (size_t)sizes[k] * 2 + 63) / 64 * 64;
        xat[k] = at;
        at = (xat[k] + (size_t)sizes[k] * 4 + 63) / 64 * 64;
        for (int64_t i = 0; i < sizes[k]; i++) {
            uint16_t y = to_bf16(rnd());
            float x = rnd();
            memcpy(host + yat[k] + 2 * i, &y, 2);
            memcpy(host + xat[k] + 4 * i, &x, 4);
        }
        ty[k] = tensor(base + yat[k], &shapes[k], 16, kDLBfloat);
        tx[k] = tensor(base + xat[k], &shapes[k], 32, kDLFloat);
        ly[k] = &ty[k];
        lx[k] = &tx[k];
    }
    ok = ok && drv_htod(dev, base, host, total, &d) == TC_OK;
    tc_arg args[3] = {tc_arg_tensors("y", ly), tc_arg_tensors("x", lx), tc_arg_float("a", 0.75)};
    if (ok && tc_run_foreach(prog, "mixed", NG, args, 3, NULL) != TC_OK) {
        ok = false;
        snprintf(msg, sizeof msg, "%s", tc_errmsg(ctx));
    }
    unsigned char *got = ok ? malloc(total) : NULL;
    ok = ok && got && drv_sync(dev, NULL, &d) == TC_OK && drv_dtoh(dev, got, base, total, &d) == TC_OK;
    for (int k = 0; ok && k < NG; k++)
        for (int64_t i = 0; ok && i < sizes[k]; i++) {
            uint16_t y0, y1;
            float x;
            memcpy(&y0, host + yat[k] + 2 * i, 2);
            memcpy(&y1, got + yat[k] + 2 * i, 2);
            memcpy(&x, host + xat[k] + 4 * i, 4);
            float want = from_bf16(to_bf16(from_bf16(y0) + 0.75f * x)), have = from_bf16(y1);
            if (fabsf(have - want) > 1e-2f * fmaxf(fabsf(want), 1e-2f)) {
                ok = false;
                snprintf(msg, sizeof msg, "group %d y[%lld] = %g, want %g", k, (long long)i, have, want);
            }
        }
    report(ok, "bf16 y += a * f32 x, 4 groups (one 2-byte aligned)", msg);
    free(got);
    free(host);
    drv_free(dev, base);
}

static void check_empty_and_errors(tc_program *prog, tc_ctx *ctx)
{
    /* no groups at all, and groups with no elements: nothing to do */
    tc_arg none[3] = {tc_arg_tensors("x", NULL), tc_arg_float("s", 1), tc_arg_tensors("out", NULL)};
    tc_status st = tc_run_foreach(prog, "scale", 0, none, 3, NULL);
    report(st == TC_OK, "no groups: TC_OK", st == TC_OK ? NULL : tc_errmsg(ctx));
    int64_t zero = 0;
    DLTensor ex = tensor(0, &zero, 32, kDLFloat), ey = tensor(0, &zero, 32, kDLFloat);
    const DLTensor *lx[2] = {&ex, &ex}, *ly[2] = {&ey, &ey};
    tc_arg empty[3] = {tc_arg_tensors("x", lx), tc_arg_float("s", 1), tc_arg_tensors("out", ly)};
    st = tc_run_foreach(prog, "scale", 2, empty, 3, NULL);
    report(st == TC_OK, "only empty groups (NULL data): TC_OK", st == TC_OK ? NULL : tc_errmsg(ctx));

    /* counts that differ within a group */
    drv_ptr mem = 0;
    if (drv_alloc(dev, 1 << 20, &mem, &d) != TC_OK) {
        report(false, "error checks", "cannot allocate");
        return;
    }
    int64_t n100 = 100, n99 = 99;
    DLTensor x0 = tensor(mem, &n100, 32, kDLFloat), y0 = tensor(mem + 4096, &n100, 32, kDLFloat);
    DLTensor x1 = tensor(mem + 8192, &n100, 32, kDLFloat), y1 = tensor(mem + 12288, &n99, 32, kDLFloat);
    const DLTensor *xs[2] = {&x0, &x1}, *ys[2] = {&y0, &y1};
    tc_arg args[3] = {tc_arg_tensors("x", xs), tc_arg_float("s", 1), tc_arg_tensors("out", ys)};
    st = tc_run_foreach(prog, "scale", 2, args, 3, NULL);
    report(st == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "group 1: output 'out' has 99 elements"),
           "counts that differ within a group are rejected", tc_errmsg(ctx));

    /* group 1's output over group 0's input */
    y1 = tensor(mem + 200, &n100, 32, kDLFloat);
    st = tc_run_foreach(prog, "scale", 2, args, 3, NULL);
    report(st == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "share memory"),
           "a written tensor overlapping another group's is rejected", tc_errmsg(ctx));

    /* not elementwise */
    tc_arg rs[2] = {tc_arg_tensors("x", xs), tc_arg_tensors("out", ys)};
    st = tc_run_foreach(prog, "rowsum", 2, rs, 2, NULL);
    report(st == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "cannot run over tensor groups"),
           "a function that is not elementwise is rejected", tc_errmsg(ctx));
    drv_free(dev, mem);
}

/* Host time of one tc_run_foreach call over 240 small groups (for the
 * record; bench/ has the real figures). */
static void host_time(tc_program *prog, tc_ctx *ctx)
{
    enum { NG = 240, N = 1024 };
    drv_ptr mem = 0;
    if (drv_alloc(dev, (size_t)NG * 4 * N * 4, &mem, &d) != TC_OK)
        return;
    if (drv_memset_async(dev, mem, 0, (size_t)NG * 4 * N * 4, NULL, &d) != TC_OK)
        return;
    int64_t n = N;
    DLTensor *t = calloc(NG * 4, sizeof *t);
    const DLTensor **l = calloc(NG * 4, sizeof *l);
    if (!t || !l)
        return;
    for (int i = 0; i < NG * 4; i++) {
        t[i] = tensor(mem + (uint64_t)i * N * 4, &n, 32, kDLFloat);
        l[(i % 4) * NG + i / 4] = &t[i];
    }
    tc_arg args[10] = {
        tc_arg_tensors("p", l), tc_arg_tensors("g", l + NG), tc_arg_tensors("m", l + 2 * NG),
        tc_arg_tensors("v", l + 3 * NG), tc_arg_float("lr", LR), tc_arg_float("beta1", B1),
        tc_arg_float("beta2", B2), tc_arg_float("eps", EPS), tc_arg_float("wd", WD),
        tc_arg_int("step", 1),
    };
    bool ok = tc_run_foreach(prog, "adamw", NG, args, 10, NULL) == TC_OK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int calls = 0;
    for (; ok && calls < 500; calls++)
        ok = tc_run_foreach(prog, "adamw", NG, args, 10, NULL) == TC_OK;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    drv_sync(dev, NULL, &d);
    if (ok)
        printf("info: tc_run_foreach takes %.1f us of host time per call (240 groups of 1024)\n",
               ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / calls);
    else
        report(false, "240 groups, 500 calls", tc_errmsg(ctx));
    free(t);
    free(l);
    drv_free(dev, mem);
}

int main(void)
{
    diag_init(&d);
    if (drv_open(&dev, 0, &d) != TC_OK) {
        fprintf(stderr, "tc-gpu-foreach: %s\n", d.brief ? d.brief : "no GPU");
        printf("0 passed, 0 failed (no GPU)\n");
        diag_release(&d);
        return 3;
    }
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    tc_options o = TC_OPTIONS_INIT;
    if (tc_ctx_create_ex(&ctx, &o) != TC_OK ||
        tc_compile(ctx, SRC, strlen(SRC), "foreach.tc", &p) != TC_OK) {
        fprintf(stderr, "tc-gpu-foreach: %s\n", ctx ? tc_errmsg(ctx) : "out of memory");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    check_adamw(p, ctx, 1, 1000004, 0);
    check_adamw(p, ctx, 7, 3000001, 30);
    check_adamw(p, ctx, 300, 70000, 15);
    check_adamw(p, ctx, 2000, 5000, 15);
    check_outputs(p, ctx);
    check_mixed(p, ctx);
    check_empty_and_errors(p, ctx);
    host_time(p, ctx);
    tc_program_free(p);
    tc_ctx_free(ctx);
    drv_close(dev);
    diag_release(&d);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
