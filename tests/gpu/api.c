/* api.c - tc-gpu-api: the public run API (tc_run) on a real GPU.
 *
 * What `tensorc run --check` cannot reach, because its reference
 * interpreter holds at most 2^30 elements:
 *
 *   plan32  the 32-bit plan at 2^30 + 1 and 2^31 - 65 elements (its
 *           largest): y = x * 2 + 1 (pointwise), the sum of i32 ones
 *           (whole-tensor, exactly n) and sums of rows of one element
 *           (rows kernel, n > 2^30 rows); the plan tc_run takes is
 *           asserted 32-bit first, every element is checked, and guard
 *           zones of 1 MiB before and after every buffer must be intact.
 *   idx64   y = x * 2 + 1 over 2^31 - 3 and 2^31 + 5 elements: past the
 *           32-bit plan's limits, so tc_run must switch to the 64-bit plan.
 *           Every element is checked (x is filled with a byte pattern on
 *           the device, so the expected value is one number).
 *   inout   p = p - lr * g through DLTensors, p updated in place.
 *   matmul  a @ b through cuBLAS, against a host product; batched, with an
 *           operand of explicit size-1 batch dims on either side (its batch
 *           stride must be 0) and with a mix of size-1 and full batch dims.
 *   argred  argmin and argmax over every axis of ranks 2 to 4 and over all
 *           axes, on small integers (ties: the first index wins), in rows,
 *           columns, split-column and whole-tensor kernels.
 *   calls   the same call a hundred times (kernels and memory are reused;
 *           the result stays right), and a tensor on another device id
 *           rejected with TC_ERR_INVALID_ARG before anything runs.
 *
 * Prints one line per check and "N passed, M failed" last; exit status 0,
 * 1 on a failure, 3 when there is no GPU.  TC_GPU_API_SMALL=1 skips the
 * 2^30- and 2^31-element checks (they need ~18 GB of GPU memory);
 * TC_GPU_API_PLAN32=N runs the plan32 checks at N elements too.
 */
#include <math.h>
#include <stdbool.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "codegen/plan.h"
#include "driver.h"
#include "exec.h"
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
    "}\n"
    "fn total(x: i32[*]) -> i64 {\n"
    "    return sum(x)\n"
    "}\n"
    "fn rowsum(x: f32[R, C]) -> f32[R] {\n"
    "    return sum(x, axis=1)\n"
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

/* argmin/argmax over every axis of ranks 2 to 4 (and over all axes), with
 * ties: x holds small integers, so most rows have repeated extremes and the
 * first index must win (NumPy).  Shapes make every strategy: rows (last
 * axis), split columns with vectors (a leading axis, last kept), split
 * columns with scalar loads (a middle axis), plain columns (a leading axis
 * of 3) and whole-tensor. */
static void check_argred(tc_ctx *ctx)
{
    static const int64_t shapes[][4] = {{33, 40}, {3, 40}, {33, 32, 8}, {7, 33, 9}, {5, 3, 33, 17}, {4, 6, 5, 33}};
    static const int ranks[] = {2, 2, 3, 3, 4, 4};
    for (int si = 0; si < 6; si++) {
        int R = ranks[si];
        const int64_t *shp = shapes[si];
        int64_t n = 1;
        for (int k = 0; k < R; k++)
            n *= shp[k];
        float *x = malloc((size_t)n * 4);
        long long *got = malloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)((int)((rnd() + 1) * 2.5f)); /* 0..4: many ties */
        drv_ptr xd = 0, yd = 0;
        bool up = x && got && upload(&xd, x, (size_t)n) && drv_alloc(dev, (size_t)n * 8, &yd, &d) == TC_OK;
        for (int axis = -1; axis < R; axis++)
            for (int mx = 0; mx < 2; mx++) {
                char src[512], label[160], msg[512] = "";
                static const char *const dn[] = {"A", "B", "C", "E"};
                char dims[64] = "", odims[64] = "";
                for (int k = 0; k < R; k++) {
                    /* small dims written as numbers: a reduced range known
                     * to be short gets plain (unsplit) columns */
                    char dk[24];
                    if (shp[k] <= 8)
                        snprintf(dk, sizeof dk, "%lld", (long long)shp[k]);
                    else
                        snprintf(dk, sizeof dk, "%s", dn[k]);
                    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", k ? ", " : "", dk);
                    if (k != axis)
                        snprintf(odims + strlen(odims), sizeof odims - strlen(odims), "%s%s",
                                 odims[0] ? ", " : "", dk);
                }
                const char *op = mx ? "argmax" : "argmin";
                if (axis < 0)
                    snprintf(src, sizeof src, "fn f(x: f32[%s]) -> i64 { return %s(x) }\n", dims, op);
                else
                    snprintf(src, sizeof src, "fn f(x: f32[%s]) -> i64[%s] { return %s(x, axis=%d) }\n", dims,
                             odims, op, axis);
                snprintf(label, sizeof label, "%s over axis %d of rank %d [%lld, %lld, ...], with ties", op, axis, R,
                         (long long)shp[0], (long long)shp[1]);
                tc_program *p = NULL;
                bool ok = up;
                if (ok && tc_compile(ctx, src, strlen(src), "argred.tc", &p) != TC_OK) {
                    ok = false;
                    snprintf(msg, sizeof msg, "%s", tc_errmsg(ctx));
                }
                int64_t oshape[4], on = 1;
                int orank = 0;
                for (int k = 0; k < R; k++)
                    if (k != axis && axis >= 0) {
                        oshape[orank++] = shp[k];
                        on *= shp[k];
                    }
                DLTensor tx = tensor(xd, R, (int64_t *)shp), ty = tensor(yd, orank, oshape);
                ty.dtype.code = kDLInt;
                ty.dtype.bits = 64;
                tc_arg args[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
                if (ok) {
                    tc_status st = tc_run(p, "f", args, 2, NULL);
                    if (st != TC_OK || drv_sync(dev, NULL, &d) != TC_OK ||
                        drv_dtoh(dev, got, yd, (size_t)on * 8, &d) != TC_OK) {
                        ok = false;
                        snprintf(msg, sizeof msg, "%s", st != TC_OK ? tc_errmsg(ctx) : d.brief);
                    }
                }
                /* the host's answer: first index of the extreme along axis */
                int64_t stride = 1, len = axis < 0 ? n : shp[axis];
                for (int k = R - 1; k > axis && axis >= 0; k--)
                    stride *= shp[k];
                for (int64_t o = 0; ok && o < on; o++) {
                    int64_t inner = axis < 0 ? 0 : o % stride, outer = axis < 0 ? 0 : o / stride;
                    int64_t base = outer * stride * len + inner, best = 0;
                    for (int64_t j = 1; j < len; j++) {
                        float a = x[base + j * (axis < 0 ? 1 : stride)], b = x[base + best * (axis < 0 ? 1 : stride)];
                        if (mx ? a > b : a < b)
                            best = j;
                    }
                    if (got[o] != best) {
                        ok = false;
                        snprintf(msg, sizeof msg, "element %lld is %lld, want %lld", (long long)o, got[o],
                                 (long long)best);
                    }
                }
                report(ok, label, ok ? NULL : msg);
                tc_program_free(p);
            }
        drv_free(dev, xd);
        drv_free(dev, yd);
        free(x);
        free(got);
    }
}

/* Batched matmuls whose operand has explicit size-1 batch dims (one matrix
 * for every batch: batch stride 0), and a mix of size-1 and full batch
 * dims, against a host product. */
static void check_matmul_batch1(tc_ctx *ctx)
{
    static const char src[] =
        "fn w1(a: f32[B, N, K], w: f32[1, K, M]) -> f32[B, N, M] { return a @ w }\n"
        "fn a1(a: f32[1, N, K], w: f32[B, K, M]) -> f32[B, N, M] { return a @ w }\n"
        "fn mix(a: f32[B, 1, N, K], w: f32[B, H, K, M]) -> f32[B, H, N, M] { return a @ w }\n";
    enum { B = 64, N = 17, K = 33, M = 100, B2 = 4, H = 3 };
    tc_program *p = NULL;
    if (tc_compile(ctx, src, strlen(src), "mm1.tc", &p) != TC_OK) {
        report(false, "matmuls with size-1 batch dims", tc_errmsg(ctx));
        return;
    }
    for (int c = 0; c < 3; c++) {
        const char *fn = c == 0 ? "w1" : c == 1 ? "a1" : "mix";
        /* batches of a, of w, of the output; a's batch index for output batch b */
        int nb = c == 2 ? B2 * H : B, ab = c == 0 ? B : c == 1 ? 1 : B2, wb = c == 0 ? 1 : c == 1 ? B : B2 * H;
        float *a = malloc((size_t)ab * N * K * 4), *w = malloc((size_t)wb * K * M * 4);
        float *out = malloc((size_t)nb * N * M * 4);
        for (int i = 0; i < ab * N * K; i++)
            a[i] = rnd();
        for (int i = 0; i < wb * K * M; i++)
            w[i] = rnd();
        drv_ptr ad = 0, wd = 0, od = 0;
        char msg[512] = "";
        bool ok = a && w && out && upload(&ad, a, (size_t)ab * N * K) && upload(&wd, w, (size_t)wb * K * M) &&
                  drv_alloc(dev, (size_t)nb * N * M * 4, &od, &d) == TC_OK;
        int64_t sa[4], sw[4], so[4];
        int ra, rw, ro;
        if (c < 2) {
            ra = rw = ro = 3;
            sa[0] = ab, sa[1] = N, sa[2] = K;
            sw[0] = wb, sw[1] = K, sw[2] = M;
            so[0] = B, so[1] = N, so[2] = M;
        } else {
            ra = rw = ro = 4;
            sa[0] = B2, sa[1] = 1, sa[2] = N, sa[3] = K;
            sw[0] = B2, sw[1] = H, sw[2] = K, sw[3] = M;
            so[0] = B2, so[1] = H, so[2] = N, so[3] = M;
        }
        DLTensor ta = tensor(ad, ra, sa), tw = tensor(wd, rw, sw), to = tensor(od, ro, so);
        tc_arg args[3] = {tc_arg_tensor("a", &ta), tc_arg_tensor("w", &tw), tc_arg_tensor("out", &to)};
        if (ok) {
            tc_status st = tc_run(p, fn, args, 3, NULL);
            if (st != TC_OK || drv_sync(dev, NULL, &d) != TC_OK ||
                drv_dtoh(dev, out, od, (size_t)nb * N * M * 4, &d) != TC_OK) {
                ok = false;
                snprintf(msg, sizeof msg, "%s", st != TC_OK ? tc_errmsg(ctx) : d.brief);
            }
        }
        double worst = 0;
        for (int b = 0; ok && b < nb; b++) {
            int ia = c == 0 ? b : c == 1 ? 0 : b / H, iw = c == 0 ? 0 : b;
            for (int i = 0; i < N; i++)
                for (int j = 0; j < M; j++) {
                    double s = 0;
                    for (int l = 0; l < K; l++)
                        s += (double)a[((size_t)ia * N + i) * K + l] * w[((size_t)iw * K + l) * M + j];
                    double e = fabs(out[((size_t)b * N + i) * M + j] - s);
                    if (!(e <= worst))
                        worst = e;
                }
        }
        if (ok && !(worst <= 1e-4)) {
            ok = false;
            snprintf(msg, sizeof msg, "max |error| %g", worst);
        }
        char label[128];
        snprintf(label, sizeof label, "matmul %s (size-1 batch dims) through cuBLAS", fn);
        report(ok, label, ok ? NULL : msg);
        drv_free(dev, ad);
        drv_free(dev, wd);
        drv_free(dev, od);
        free(a);
        free(w);
        free(out);
    }
    tc_program_free(p);
}

/* Which plan tc_run takes for fn at these sizes: the decision it makes
 * (rt_needs_idx64 on fn's 32-bit plan). */
static bool takes_plan32(tc_program *p, const char *fn, const tc_dimbind *b, int nb)
{
    const gfn *f = NULL;
    const tc_plan *plan = NULL;
    const struct cg_unit *u = NULL;
    if (api_entry(p, fn, &f) != TC_OK || api_unit(p, f, false, &u, &plan) != TC_OK)
        return false;
    return !plan->idx64 && !rt_needs_idx64(plan, b, nb, NULL, NULL);
}

enum { GUARD = 1 << 20 }; /* bytes of guard before and after each buffer */
static const unsigned char GUARD_BYTE = 0xa5;

/* A buffer of bytes with guard zones: the interior starts at *inner. */
static bool guarded(size_t bytes, drv_ptr *outer, drv_ptr *inner, int fill)
{
    if (drv_alloc(dev, bytes + 2 * GUARD, outer, &d) != TC_OK)
        return false;
    *inner = *outer + GUARD;
    return drv_memset_async(dev, *outer, GUARD_BYTE, GUARD, NULL, &d) == TC_OK &&
           drv_memset_async(dev, *inner + bytes, GUARD_BYTE, GUARD, NULL, &d) == TC_OK &&
           drv_memset_async(dev, *inner, fill, bytes, NULL, &d) == TC_OK;
}

static bool guards_intact(drv_ptr outer, size_t bytes, char *msg, size_t cap)
{
    unsigned char *h = malloc(GUARD);
    bool ok = h != NULL;
    for (int side = 0; ok && side < 2; side++) {
        drv_ptr at = side ? outer + GUARD + bytes : outer;
        ok = drv_dtoh(dev, h, at, GUARD, &d) == TC_OK;
        for (size_t i = 0; ok && i < GUARD; i++)
            if (h[i] != GUARD_BYTE) {
                ok = false;
                snprintf(msg, cap, "guard %s the buffer overwritten at byte %zu", side ? "after" : "before", i);
            }
    }
    free(h);
    return ok;
}

/* The 32-bit plan at n elements (2^30 + 1, 2^31 - 65): pointwise
 * y = x * 2 + 1 (x all bytes 0x3f), whole-tensor sum of i32 ones (exact:
 * n), and a rows kernel summing rows of 1 element of x (n rows, > 2^30),
 * every element checked and the guard zones around every buffer intact. */
static void check_plan32(tc_program *p, tc_ctx *ctx, int64_t n)
{
    char label[160], msg[512] = "";
    size_t bytes = (size_t)n * 4;
    float v;
    uint32_t bits = 0x3f3f3f3fu;
    memcpy(&v, &bits, 4);
    for (int kind = 0; kind < 3; kind++) {
        const char *fn = kind == 0 ? "big" : kind == 1 ? "total" : "rowsum";
        snprintf(label, sizeof label, "32-bit plan, %s over %lld elements", fn, (long long)n);
        tc_dimbind b[2] = {{kind == 2 ? "R" : "*", n}, {"C", 1}};
        if (!takes_plan32(p, fn, b, kind == 2 ? 2 : 1)) {
            report(false, label, "tc_run would not take the 32-bit plan");
            continue;
        }
        size_t obytes = kind == 1 ? 8 : bytes;
        drv_ptr xo = 0, xi = 0, yo = 0, yi = 0;
        bool ok = guarded(bytes, &xo, &xi, kind == 1 ? 0 : 0x3f) && guarded(obytes, &yo, &yi, 0xff);
        if (ok && kind == 1) { /* i32 ones: the bytes 01 00 00 00, one element at a time */
            int32_t *ones = malloc(1 << 26);
            for (size_t i = 0; ones && i < (1u << 24); i++)
                ones[i] = 1;
            for (size_t at = 0; ok && ones && at < (size_t)n; at += 1u << 24) {
                size_t m = (size_t)n - at < (1u << 24) ? (size_t)n - at : 1u << 24;
                ok = drv_htod(dev, xi + at * 4, ones, m * 4, &d) == TC_OK;
            }
            ok = ok && ones;
            free(ones);
        }
        ok = ok && drv_sync(dev, NULL, &d) == TC_OK;
        if (!ok)
            snprintf(msg, sizeof msg, "%s", d.brief ? d.brief : "setup failed");
        int64_t shape[2] = {n, 1}, one = 1;
        DLTensor tx = tensor(xi, kind == 2 ? 2 : 1, shape), ty = tensor(yi, kind == 1 ? 0 : 1, kind == 1 ? &one : shape);
        if (kind == 1) {
            tx.dtype.code = kDLInt;
            ty.dtype.code = kDLInt;
            ty.dtype.bits = 64;
        }
        tc_arg args[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
        if (ok) {
            tc_status st = tc_run(p, fn, args, 2, NULL);
            if (st == TC_OK)
                st = drv_sync(dev, NULL, &d);
            if (st != TC_OK) {
                ok = false;
                snprintf(msg, sizeof msg, "%s: %s", tc_status_str(st), tc_errmsg(ctx));
            }
        }
        const float want = kind == 0 ? v * 2.0f + 1.0f : v; /* rowsum of one element is it */
        if (ok && kind == 1) {
            int64_t got = 0;
            ok = drv_dtoh(dev, &got, yi, 8, &d) == TC_OK && got == n;
            if (!ok)
                snprintf(msg, sizeof msg, "sum is %lld, want %lld", (long long)got, (long long)n);
        }
        const size_t chunk = (size_t)1 << 26;
        float *buf = ok && kind != 1 ? malloc(chunk * 4) : NULL;
        for (int64_t at = 0; buf && ok && at < n; at += (int64_t)chunk) {
            size_t m = (size_t)(n - at) < chunk ? (size_t)(n - at) : chunk;
            ok = drv_dtoh(dev, buf, yi + (drv_ptr)at * 4, m * 4, &d) == TC_OK;
            for (size_t i = 0; ok && i < m; i++)
                if (buf[i] != want) {
                    ok = false;
                    snprintf(msg, sizeof msg, "element %lld is %.9g, want %.9g", (long long)(at + (int64_t)i),
                             buf[i], want);
                }
        }
        free(buf);
        ok = ok && guards_intact(xo, bytes, msg, sizeof msg) && guards_intact(yo, obytes, msg, sizeof msg);
        drv_free(dev, xo);
        drv_free(dev, yo);
        report(ok, label, ok ? NULL : msg);
    }
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
    check_matmul_batch1(ctx);
    check_argred(ctx);
    const char *at = getenv("TC_GPU_API_PLAN32"); /* the plan32 checks at another size (a quick look) */
    if (at && atoll(at) > 0)
        check_plan32(p, ctx, atoll(at));
    const char *small = getenv("TC_GPU_API_SMALL");
    if (!small || strcmp(small, "1") != 0) {
        check_plan32(p, ctx, ((int64_t)1 << 30) + 1);
        check_plan32(p, ctx, ((int64_t)1 << 31) - 65);
        check_big(p, ctx, ((int64_t)1 << 31) - 3, "y = x * 2 + 1, 64-bit plan just past the 32-bit one");
        check_big(p, ctx, ((int64_t)1 << 31) + 5, "y = x * 2 + 1, 64-bit plan");
    }
    tc_program_free(p);
    tc_ctx_free(ctx);
    drv_close(dev);
    diag_release(&d);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
