/* run_adamw.c - an optimizer step over a whole model in one launch:
 * tc_run_foreach through tensorc's C API.
 *
 *   run_adamw [--layers N] [--steps S] [--scalars f32|f64] [--in DIR] [--out DIR] [--verbose]
 *
 * The model is suite.md's transformer-like tensor set: per layer 4 x
 * 1024x1024, 4096x1024, 1024x4096 and 4 x 1024; 24 layers (the default) are
 * 240 tensors, 302,088,192 parameters.  Each tensor has its own p, g, m and
 * v buffers (cuMemAlloc each, as a framework's parameters are), and every
 * step is ONE tc_run_foreach call: the four lists hold tensor i of every
 * buffer at position i, the hyperparameters are scalars shared by all
 * groups, and tensorc runs the whole step in one kernel launch, however
 * many tensors (the groups' addresses travel in the kernel's parameters, or
 * in one copy to device memory when there are more than fit).  The step
 * number changes every call; it is a run-time scalar, so nothing
 * recompiles.
 *
 * Timing: per step, the host time of the tc_run_foreach call (wall clock
 * around the call: it only enqueues) and the time to the end of the step
 * (after cuCtxSynchronize).  Step 1 includes compiling the kernel (NVRTC,
 * or the kernel cache).  Launches: under tests/fakegpu's fake driver
 * (TENSORC_LIBCUDA=.../libtc-fake-cuda.so) the driver's own launch counter
 * is read and printed per step; on a real GPU, count them with a profiler:
 *     nsys profile -o /tmp/adamw --stats=true run_adamw --layers 24
 *         (cuda_gpu_kern_sum: one kernel, 10 instances = 10 steps)
 *     ncu --print-summary per-kernel run_adamw --layers 2
 *
 * Check: after the steps every tensor's p, m and v are copied back and
 * compared with the same steps computed on the CPU in double from the same
 * initial values, tensor by tensor, in parallel.  The error of a tensor is
 * norm-wise, max |gpu - cpu| / max |cpu| over its elements (elementwise
 * relative error is meaningless where p - lr * update cancels to near 0);
 * each tensor must be within 1e-6.  A NaN fails.  --verbose prints each
 * tensor's errors; --steps 0 runs nothing, so the values must come back as
 * they went (a test of the upload, download and check without a GPU).
 *
 * Data: by default random, from a counter-based generator (so nothing of
 * the 302M parameters is kept on the host): p and g uniform in [-1, 1), m
 * in [-0.1, 0.1), v in [0.001, 0.01) (not near 0: where v is tiny, the step
 * m / sqrt(v) is huge and magnifies the last-ulp differences between
 * CUDA's powf and the C library's in the bias corrections beyond the
 * tolerance).  --in DIR reads DIR/p.npy and DIR/g.npy
 * (and DIR/m.npy, DIR/v.npy when present, else zeros, as torch.optim
 * starts): float32, C order, every tensor's values one after the other in
 * set order, any shape with that many elements.  --out DIR writes the final
 * DIR/p.npy, DIR/m.npy and DIR/v.npy in the same layout (1.2 GB each for 24
 * layers) and DIR/shapes.txt (one "ROWSxCOLS" or "N" line per tensor).
 * tests/gpu/adamw_torch.py uses both to compare with torch.optim.AdamW.
 *
 * The program is examples/adamw.tc, given as text (tc_compile).  With
 * --scalars f32 its hyperparameters are f32 scalars, so the kernel computes 1 - beta2, lr * wd
 * and the bias corrections in f32 from the rounded values: beta2 = 0.999
 * becomes 0.99900001, and 1 - beta2 0.00099998713, where torch.optim (its
 * Python floats are doubles) multiplies by f32(1 - 0.999) = 0.001: 1.3e-5
 * apart, which shows in v (and, from a nonzero v, in p).  The CPU check
 * follows the program: its scalars are rounded as the kernel rounds them,
 * the rest is double.  --scalars f64 (the default) declares them f64: scalars are
 * weak in promotion (docs/semantics.md), so the tensor math stays f32 and
 * only the scalar arithmetic is done in double, as torch.optim does it;
 * the CPU check then uses the exact values.  tests/gpu/adamw_torch.py
 * compares both with torch.optim.AdamW.
 *
 * Without a GPU it compiles, prints the kernel's signature line, says
 * "no GPU: skipped running" and exits 0.  Exit status: 0 success or
 * skipped, 1 an error or a wrong result, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "tensorc.h"

/* examples/adamw.tc, with the hyperparameters' dtype left open (%s). */
static const char ADAMW[] =
    "fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
    "         lr: %s, beta1: %s, beta2: %s, eps: %s, wd: %s, step: i32) {\n"
    "    p = p * (1 - lr * wd)\n"
    "    m = beta1 * m + (1 - beta1) * g\n"
    "    v = beta2 * v + (1 - beta2) * g * g\n"
    "    mhat = m / (1 - beta1 ** step)\n"
    "    vhat = v / (1 - beta2 ** step)\n"
    "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
    "}\n";

static const double LR = 1e-3, BETA1 = 0.9, BETA2 = 0.999, EPS = 1e-8, WD = 0.01;
static const double TOL = 1e-6;
enum { MAX_STEPS = 1000, MAX_LAYERS = 64 };

enum { P, G, M, V, NBUF };
static const char *const NAMES[NBUF] = {"p", "g", "m", "v"};
/* The outputs, in the order they are checked and written. */
static const int OUTS[3] = {P, M, V};

/* One tensor of the set: its shape and where its values start in the
 * concatenation of all of them (the .npy layout). */
typedef struct {
    int rank;
    int64_t shape[2];
    int64_t n, off;
} tensor;

typedef struct {
    int layers, steps, verbose;
    int f64;                /* --scalars f64 */
    const char *in, *out;
} options;

/* The hyperparameters as the kernel sees them, per step (see the header):
 * what each scalar expression of the program evaluates to. */
typedef struct {
    double lr, beta1, beta2, eps;
    double decay;           /* 1 - lr * wd */
    double omb1, omb2;      /* 1 - beta1, 1 - beta2 */
    double c1[MAX_STEPS + 1], c2[MAX_STEPS + 1]; /* 1 - beta ** step */
    /* lr / c1 and 1 / sqrt(c2): the check's inner loop then has one division
     * and one square root per step, not three and one (a double rounding
     * more or less: 1e-16, far below the tolerance) */
    double lr_c1[MAX_STEPS + 1], rsqrt_c2[MAX_STEPS + 1];
} hyper;

typedef struct {
    const options *o;
    gpu *g;
    tensor *t;
    int nt;
    int64_t total, maxn;
    float *init[NBUF];      /* --in: the initial values (NULL: m, v zero), else all NULL */
    CUdeviceptr *dev[NBUF]; /* per buffer, per tensor */
    int nthreads;
    hyper h;
} state;

static void make_hyper(hyper *h, int f64, int steps)
{
    memset(h, 0, sizeof *h);
    if (f64) {
        h->lr = LR, h->beta1 = BETA1, h->beta2 = BETA2, h->eps = EPS;
        h->decay = 1 - LR * WD, h->omb1 = 1 - BETA1, h->omb2 = 1 - BETA2;
        for (int s = 1; s <= steps; s++) {
            h->c1[s] = 1 - pow(BETA1, s);
            h->c2[s] = 1 - pow(BETA2, s);
        }
    } else {
        /* f32 arithmetic, as the kernel does it (CUDA's powf and the C
         * library's may differ in the last ulp: with v not near 0 that
         * moves p by less than 1e-7 of its largest value) */
        float lr = (float)LR, b1 = (float)BETA1, b2 = (float)BETA2, wd = (float)WD;
        h->lr = lr, h->beta1 = b1, h->beta2 = b2, h->eps = (float)EPS;
        h->decay = 1.0f - lr * wd, h->omb1 = 1.0f - b1, h->omb2 = 1.0f - b2;
        for (int s = 1; s <= steps; s++) {
            h->c1[s] = 1.0f - powf(b1, (float)s);
            h->c2[s] = 1.0f - powf(b2, (float)s);
        }
    }
    for (int s = 1; s <= steps; s++) {
        h->lr_c1[s] = h->lr / h->c1[s];
        h->rsqrt_c2[s] = 1 / sqrt(h->c2[s]);
    }
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* --- the tensor set ---------------------------------------------------------------- */

static tensor *make_set(int layers, int *nt, int64_t *total, int64_t *maxn)
{
    static const int64_t layer[10][2] = {{1024, 1024}, {1024, 1024}, {1024, 1024}, {1024, 1024},
                                         {4096, 1024}, {1024, 4096}, {1024, 0},    {1024, 0},
                                         {1024, 0},    {1024, 0}};
    tensor *t = calloc((size_t)layers * 10, sizeof *t);
    if (!t)
        return NULL;
    *nt = layers * 10;
    *total = *maxn = 0;
    for (int i = 0; i < *nt; i++) {
        const int64_t *s = layer[i % 10];
        t[i].rank = s[1] ? 2 : 1;
        t[i].shape[0] = s[0];
        t[i].shape[1] = s[1];
        t[i].n = s[1] ? s[0] * s[1] : s[0];
        t[i].off = *total;
        *total += t[i].n;
        if (t[i].n > *maxn)
            *maxn = t[i].n;
    }
    return t;
}

static void shape_text(const tensor *t, char *buf, size_t len)
{
    if (t->rank == 2)
        snprintf(buf, len, "%lldx%lld", (long long)t->shape[0], (long long)t->shape[1]);
    else
        snprintf(buf, len, "%lld", (long long)t->shape[0]);
}

/* --- the initial values ----------------------------------------------------------- */

/* Buffer b's initial value at flat index k (over the whole set): counter-
 * based (splitmix64 of the index), so any element can be recomputed for the
 * check without keeping 302M of them. */
static double generated(int b, int64_t k)
{
    uint64_t z = (uint64_t)k * 4 + (uint64_t)b + 0x5eed;
    z *= 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double u = (double)(z >> 11) * 0x1p-53;
    /* v is a running mean of g*g: never negative (and see the header) */
    return (float)(b == V ? 0.001 + 0.009 * u : b == M ? 0.2 * u - 0.1 : 2 * u - 1);
}

static double initial(const state *s, int b, int64_t k)
{
    if (s->o->in)
        return s->init[b] ? s->init[b][k] : 0.0;
    return generated(b, k);
}

/* --- .npy files: float32, C order, any shape (a tiny reader and writer) ------------- */

/* The element count of a .npy header's shape tuple, or -1. */
static int64_t npy_count(const char *hdr)
{
    const char *s = strstr(hdr, "'shape':");
    if (!s || !(s = strchr(s, '(')))
        return -1;
    int64_t n = 1;
    for (s++; *s && *s != ')';) {
        char *end;
        long long d = strtoll(s, &end, 10);
        if (end == s) {
            if (*s == ',' || *s == ' ') {
                s++;
                continue;
            }
            return -1;
        }
        if (d < 0)
            return -1;
        n *= d;
        s = end;
    }
    return *s == ')' ? n : -1;
}

/* Read DIR/NAME.npy, which must hold `want` float32 values: a malloc'd
 * array, or NULL with the reason in why (missing: *absent set). */
static float *npy_read(const char *dir, const char *name, int64_t want, int *absent, char *why,
                       size_t whylen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    *absent = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *absent = errno == ENOENT;
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char pre[12];
    float *data = NULL;
    char *hdr = NULL;
    size_t hlen = 0, pre_len = 10;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        snprintf(why, whylen, "%s: not a .npy file", path);
        goto done;
    }
    if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (fread(pre + 10, 1, 2, f) == 2) { /* versions 2 and 3: a 4-byte length */
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        pre_len = 12;
    }
    if (!hlen || !(hdr = calloc(1, hlen + 1)) || fread(hdr, 1, hlen, f) != hlen) {
        snprintf(why, whylen, "%s: a truncated .npy header", path);
        goto done;
    }
    for (size_t k = hlen; k > 0 && (hdr[k - 1] == ' ' || hdr[k - 1] == '\n'); k--)
        hdr[k - 1] = 0; /* the padding, for messages */
    int64_t n = npy_count(hdr);
    if (!strstr(hdr, "'descr': '<f4'") || !strstr(hdr, "'fortran_order': False")) {
        snprintf(why, whylen, "%s: want little-endian float32 in C order, the header says %s",
                 path, hdr);
        goto done;
    }
    if (n != want) {
        snprintf(why, whylen, "%s: %lld values; the tensor set has %lld parameters (--layers?)",
                 path, (long long)n, (long long)want);
        goto done;
    }
    if (!(data = malloc((size_t)(n ? n : 1) * sizeof *data))) {
        snprintf(why, whylen, "%s: out of memory for %lld values", path, (long long)n);
        goto done;
    }
    if (fread(data, sizeof *data, (size_t)n, f) != (size_t)n) {
        snprintf(why, whylen, "%s: fewer than %lld values after a %zu-byte header", path,
                 (long long)n, pre_len + hlen);
        free(data);
        data = NULL;
    }
done:
    free(hdr);
    fclose(f);
    return data;
}

/* Create DIR/NAME.npy for n float32 values (written after it by the
 * caller, in order).  NULL with the reason printed. */
static FILE *npy_create(const char *dir, const char *name, int64_t n)
{
    char path[4096], hdr[128];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    /* version 1.0: magic, version, 2-byte length, header padded with spaces
     * to a multiple of 64 bytes in all, ending in a newline */
    int len = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld,), }",
                       (long long)n);
    int total = (10 + len + 1 + 63) / 64 * 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)((total - 10) & 0xff), (unsigned char)((total - 10) >> 8)};
    fwrite(pre, 1, sizeof pre, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 10 + len; i < total - 1; i++)
        fputc(' ', f);
    fputc('\n', f);
    if (ferror(f)) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    return f;
}

/* --- the check: the same steps on the CPU, in double ---------------------------------- */

typedef struct {
    const state *s;
    const tensor *t;
    const float *got[3];    /* p, m, v as the GPU left them */
    int64_t lo, hi;
    int started;            /* on a thread of its own */
    /* out, per output: the largest |cpu| and |gpu - cpu|, where (NaN: inf) */
    double maxabs[3], maxdiff[3];
    int64_t at[3];
    double want_at[3];
} chunk;

/* The steps run over a block of elements at a time, step by step, not
 * element by element: one element's steps are a chain of dependent square
 * roots and divisions, while a block's elements are independent and keep
 * the CPU's pipelines full (about 10x faster). */
static void *check_chunk(void *arg)
{
    enum { BLOCK = 512 };
    chunk *c = arg;
    const state *s = c->s;
    const hyper *h = &s->h;
    int steps = s->o->steps;
    double p[BLOCK], g[BLOCK], m[BLOCK], v[BLOCK];
    for (int k = 0; k < 3; k++)
        c->maxabs[k] = c->maxdiff[k] = 0, c->at[k] = c->lo;
    for (int64_t i0 = c->lo; i0 < c->hi; i0 += BLOCK) {
        int n = c->hi - i0 < BLOCK ? (int)(c->hi - i0) : BLOCK;
        for (int e = 0; e < n; e++) {
            int64_t k = c->t->off + i0 + e;
            p[e] = initial(s, P, k), g[e] = initial(s, G, k);
            m[e] = initial(s, M, k), v[e] = initial(s, V, k);
        }
        for (int st = 1; st <= steps; st++) {
            double lr_c1 = h->lr_c1[st], rsqrt_c2 = h->rsqrt_c2[st];
            for (int e = 0; e < n; e++) {
                m[e] = h->beta1 * m[e] + h->omb1 * g[e];
                v[e] = h->beta2 * v[e] + h->omb2 * g[e] * g[e];
                p[e] = p[e] * h->decay - lr_c1 * m[e] / (sqrt(v[e]) * rsqrt_c2 + h->eps);
            }
        }
        for (int e = 0; e < n; e++) {
            double want[3] = {p[e], m[e], v[e]};
            for (int q = 0; q < 3; q++) {
                double d = fabs(c->got[q][i0 + e] - want[q]);
                if (isnan(d))
                    d = INFINITY;
                if (fabs(want[q]) > c->maxabs[q])
                    c->maxabs[q] = fabs(want[q]);
                if (d > c->maxdiff[q]) {
                    c->maxdiff[q] = d;
                    c->at[q] = i0 + e;
                    c->want_at[q] = want[q];
                }
            }
        }
    }
    return NULL;
}

typedef struct {
    double err;             /* norm-wise relative error */
    int64_t at;             /* the element of the largest difference */
    double got, want;
} tensor_err;

/* Tensor t's error per output, computed on up to s->nthreads threads. */
static int check_tensor(const state *s, const tensor *t, float *const got[3], tensor_err e[3])
{
    enum { MIN_CHUNK = 1 << 16 };
    int n = (int)((t->n + MIN_CHUNK - 1) / MIN_CHUNK);
    if (n > s->nthreads)
        n = s->nthreads;
    if (n < 1)
        n = 1;
    chunk *c = calloc((size_t)n, sizeof *c);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!c || !th) {
        free(c);
        free(th);
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    for (int j = 0; j < n; j++) {
        c[j].s = s;
        c[j].t = t;
        for (int q = 0; q < 3; q++)
            c[j].got[q] = got[q];
        c[j].lo = t->n * j / n;
        c[j].hi = t->n * (j + 1) / n;
    }
    /* chunk 0 on this thread, the others on threads of their own (or on
     * this one, in turn, should a thread fail to start) */
    for (int j = 1; j < n; j++)
        if (!(c[j].started = pthread_create(&th[j], NULL, check_chunk, &c[j]) == 0))
            check_chunk(&c[j]);
    check_chunk(&c[0]);
    for (int j = 1; j < n; j++)
        if (c[j].started)
            pthread_join(th[j], NULL);
    for (int q = 0; q < 3; q++) {
        double maxabs = 0, maxdiff = -1;
        int best = 0;
        for (int j = 0; j < n; j++) {
            if (c[j].maxabs[q] > maxabs)
                maxabs = c[j].maxabs[q];
            if (c[j].maxdiff[q] > maxdiff)
                maxdiff = c[j].maxdiff[q], best = j;
        }
        e[q].err = maxabs > 0 ? maxdiff / maxabs : maxdiff;
        e[q].at = c[best].at[q];
        e[q].got = got[q][e[q].at];
        e[q].want = c[best].want_at[q];
    }
    free(c);
    free(th);
    return 0;
}

/* --- the GPU side ------------------------------------------------------------------ */

/* Device buffers for every tensor, filled with the initial values. */
static int upload(state *s)
{
    float *stage = malloc((size_t)s->maxn * sizeof *stage);
    if (!stage) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    int rc = 0;
    for (int b = 0; b < NBUF && !rc; b++) {
        if (!(s->dev[b] = calloc((size_t)s->nt, sizeof *s->dev[b]))) {
            fprintf(stderr, "out of memory\n");
            rc = -1;
            break;
        }
        for (int i = 0; i < s->nt && !rc; i++) {
            const tensor *t = &s->t[i];
            size_t bytes = (size_t)t->n * sizeof(float);
            for (int64_t e = 0; e < t->n; e++)
                stage[e] = (float)initial(s, b, t->off + e);
            if (gpu_check(s->g, s->g->mem_alloc(&s->dev[b][i], bytes), "cuMemAlloc") ||
                gpu_check(s->g, s->g->htod(s->dev[b][i], stage, bytes), "cuMemcpyHtoD"))
                rc = -1;
        }
    }
    free(stage);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The steps: one tc_run_foreach each, timed; launches counted where the
 * driver can tell (the fake one exports its counter). */
static int run_steps(state *s, tc_ctx *ctx, tc_program *prog, const char *fn)
{
    int nt = s->nt, steps = s->o->steps, rc = -1;
    DLTensor *dl = calloc((size_t)NBUF * (size_t)nt, sizeof *dl);
    const DLTensor **list = calloc((size_t)NBUF * (size_t)nt, sizeof *list);
    double *host = calloc((size_t)steps + 1, sizeof *host), *step = calloc((size_t)steps + 1, sizeof *step);
    if (!dl || !list || !host || !step) {
        fprintf(stderr, "out of memory\n");
        goto done;
    }
    /* One DLTensor per buffer of each tensor, with the tensor's real shape:
     * a [*] parameter takes any shape with the group's element count. */
    for (int b = 0; b < NBUF; b++)
        for (int i = 0; i < nt; i++) {
            DLTensor *d = &dl[b * nt + i];
            *d = (DLTensor){
                .data = (void *)(uintptr_t)s->dev[b][i],
                .device = {kDLCUDA, 0},
                .ndim = s->t[i].rank,
                .dtype = {kDLFloat, 32, 1},
                .shape = s->t[i].shape,
            };
            list[b * nt + i] = d;
        }

    long *launches = NULL; /* tests/fakegpu's counter, when that is the driver */
    void *sym = dlsym(s->g->lib, "fake_launches");
    memcpy(&launches, &sym, sizeof sym);
    long launched = 0;
    for (int st = 1; st <= steps; st++) {
        /* The lists: tensor i of p, g, m and v make group i.  inout
         * parameters are passed once and updated in place. */
        tc_arg args[] = {
            tc_arg_tensors("p", &list[P * nt]), tc_arg_tensors("g", &list[G * nt]),
            tc_arg_tensors("m", &list[M * nt]), tc_arg_tensors("v", &list[V * nt]),
            tc_arg_float("lr", LR),             tc_arg_float("beta1", BETA1),
            tc_arg_float("beta2", BETA2),       tc_arg_float("eps", EPS),
            tc_arg_float("wd", WD),             tc_arg_int("step", st),
        };
        long before = launches ? *launches : 0;
        double t0 = now_us();
        tc_status r = tc_run_foreach(prog, fn, (size_t)nt, args, sizeof args / sizeof args[0], NULL);
        double t1 = now_us();
        if (r != TC_OK) {
            fprintf(stderr, "tc_run_foreach (step %d): %s: %s\n", st, tc_status_str(r), tc_errmsg(ctx));
            goto done;
        }
        /* The call only enqueued the work: wait for it to see the step's
         * time (and a failed kernel). */
        if (gpu_check(s->g, s->g->sync(), "cuCtxSynchronize"))
            goto done;
        double t2 = now_us();
        host[st - 1] = t1 - t0;
        step[st - 1] = t2 - t0;
        long n = launches ? *launches - before : -1;
        launched += n;
        printf("step %2d: tc_run_foreach %10.1f us on the host, %10.1f us to the end of the step%s",
               st, host[st - 1], step[st - 1], st == 1 ? " (compiles the kernel)" : "");
        if (launches)
            printf("; %ld launch%s", n, n == 1 ? "" : "es");
        printf("\n");
    }
    printf("tc_run: %d AdamW steps ok, one tc_run_foreach call each over %d tensors\n", steps, nt);
    if (steps > 1) { /* step 1 compiled: the medians leave it out */
        qsort(host + 1, (size_t)steps - 1, sizeof *host, cmp_double);
        qsort(step + 1, (size_t)steps - 1, sizeof *step, cmp_double);
        double h = host[1 + (steps - 1) / 2], t = step[1 + (steps - 1) / 2];
        printf("steps 2-%d, median: %.1f us on the host per call, %.1f us per step", steps, h, t);
        /* bytes: p, m, v read and written, g read: 28 per parameter */
        if (launches)
            printf(" (the fake driver runs no kernel)\n");
        else
            printf(" (%.3f TB/s at 28 bytes per parameter, a sync per step included)\n",
                   28.0 * (double)s->total / (t * 1e6));
    }
    if (launches)
        printf("launches: %ld in %d steps, counted by the fake driver\n", launched, steps);
    else
        printf("launches: not counted on a real GPU; `nsys profile --stats=true` shows one kernel "
               "per step (see the header)\n");
    rc = 0;
done:
    free(dl);
    free(list);
    free(host);
    free(step);
    return rc;
}

/* Download every tensor, check it, write it to --out. */
static int check_all(state *s)
{
    int rc = 0, nt = s->nt;
    float *got[3] = {0};
    FILE *out[3] = {0}, *shapes = NULL;
    tensor_err worst[3] = {{0}};
    int worst_at[3] = {0}, bad[3] = {0};
    for (int q = 0; q < 3; q++)
        if (!(got[q] = malloc((size_t)s->maxn * sizeof(float)))) {
            fprintf(stderr, "out of memory\n");
            rc = -1;
            goto done;
        }
    if (s->o->out) {
        char path[4096];
        snprintf(path, sizeof path, "%s/shapes.txt", s->o->out);
        if (!(shapes = fopen(path, "w"))) {
            fprintf(stderr, "%s: %s\n", path, strerror(errno));
            rc = -1;
            goto done;
        }
        for (int q = 0; q < 3; q++)
            if (!(out[q] = npy_create(s->o->out, NAMES[OUTS[q]], s->total))) {
                rc = -1;
                goto done;
            }
    }
    double t0 = now_us();
    for (int i = 0; i < nt; i++) {
        const tensor *t = &s->t[i];
        size_t bytes = (size_t)t->n * sizeof(float);
        char shape[48];
        shape_text(t, shape, sizeof shape);
        for (int q = 0; q < 3; q++)
            if (gpu_check(s->g, s->g->dtoh(got[q], s->dev[OUTS[q]][i], bytes), "cuMemcpyDtoH")) {
                rc = -1;
                goto done;
            }
        tensor_err e[3];
        if (check_tensor(s, t, got, e) != 0) {
            rc = -1;
            goto done;
        }
        for (int q = 0; q < 3; q++) {
            if (!(e[q].err <= TOL))
                bad[q]++;
            if (i == 0 || !(e[q].err <= worst[q].err))
                worst[q] = e[q], worst_at[q] = i;
            if (out[q] && fwrite(got[q], sizeof(float), (size_t)t->n, out[q]) != (size_t)t->n) {
                fprintf(stderr, "%s/%s.npy: %s\n", s->o->out, NAMES[OUTS[q]], strerror(errno));
                rc = -1;
                goto done;
            }
        }
        if (shapes)
            fprintf(shapes, "%s\n", shape);
        if (s->o->verbose)
            printf("tensor %3d %-9s  relative error p %.2e, m %.2e, v %.2e\n", i, shape, e[0].err,
                   e[1].err, e[2].err);
    }
    for (int q = 0; q < 3; q++) {
        const char *name = NAMES[OUTS[q]];
        char shape[48];
        shape_text(&s->t[worst_at[q]], shape, sizeof shape);
        if (!bad[q]) {
            printf("check %s: %d tensors match the CPU (double) within %g relative; worst %.2e "
                   "(tensor %d, %s)\n", name, nt, TOL, worst[q].err, worst_at[q], shape);
        } else {
            printf("check %s: MISMATCH in %d of %d tensors; worst: tensor %d (%s), relative error "
                   "%.3g > %g, at [%lld]: gpu %.9g, cpu %.9g\n", name, bad[q], nt, worst_at[q],
                   shape, worst[q].err, TOL, (long long)worst[q].at, worst[q].got, worst[q].want);
            rc = 1;
        }
    }
    printf("checked %lld parameters x 3 in %.1f s on %d threads\n", (long long)s->total,
           (now_us() - t0) / 1e6, s->nthreads);
    if (s->o->out)
        printf("wrote %s/{p,m,v}.npy (%lld float32 values each) and %s/shapes.txt\n", s->o->out,
               (long long)s->total, s->o->out);
done:
    for (int q = 0; q < 3; q++) {
        if (out[q] && fclose(out[q]) != 0 && rc == 0) {
            fprintf(stderr, "%s/%s.npy: %s\n", s->o->out, NAMES[OUTS[q]], strerror(errno));
            rc = -1;
        }
        free(got[q]);
    }
    if (shapes)
        fclose(shapes);
    return rc;
}

static int run_on_gpu(gpu *g, tc_ctx *ctx, tc_program *prog, const options *o)
{
    state s = {.o = o, .g = g};
    make_hyper(&s.h, o->f64, o->steps);
    int rc = 1;
    if (!(s.t = make_set(o->layers, &s.nt, &s.total, &s.maxn))) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    s.nthreads = cpus < 1 ? 1 : cpus > 64 ? 64 : (int)cpus;
    printf("tensor set: %d layers, %d tensors, %lld parameters (%.2f GB of p, g, m and v)\n",
           o->layers, s.nt, (long long)s.total, 16.0 * (double)s.total / 1e9);
    if (o->in) {
        char why[4608];
        for (int b = 0; b < NBUF; b++) {
            int absent;
            s.init[b] = npy_read(o->in, NAMES[b], s.total, &absent, why, sizeof why);
            if (!s.init[b] && !(absent && (b == M || b == V))) {
                fprintf(stderr, "%s\n", why);
                goto done;
            }
        }
        printf("initial values: %s/p.npy, g.npy, %s\n", o->in,
               s.init[M] || s.init[V] ? "m.npy and v.npy (zeros for a missing one)" : "m = v = 0");
    }
    if (upload(&s) != 0)
        goto done;
    if (run_steps(&s, ctx, prog, "adamw") != 0)
        goto done;
    rc = check_all(&s) == 0 ? 0 : 1;
done:
    for (int b = 0; b < NBUF; b++) {
        for (int i = 0; s.dev[b] && i < s.nt; i++)
            if (s.dev[b][i])
                g->mem_free(s.dev[b][i]);
        free(s.dev[b]);
        free(s.init[b]);
    }
    free(s.t);
    return rc;
}

/* --- main ---------------------------------------------------------------------------- */

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--layers N] [--steps S] [--scalars f32|f64] [--in DIR] [--out DIR] [--verbose]\n"
            "  --layers N      N layers of suite.md's set, 10 tensors each (default 24: 240 tensors,\n"
            "                  302M parameters; 1 to %d)\n"
            "  --steps S       AdamW steps, one tc_run_foreach each (default 10; up to %d; 0 runs\n"
            "                  nothing and checks that the values come back: a test of the data path)\n"
            "  --in DIR        initial DIR/p.npy, g.npy (m.npy, v.npy optional: zeros), float32,\n"
            "                  all tensors one after the other\n"
            "  --out DIR       write the final DIR/p.npy, m.npy, v.npy the same way, and shapes.txt\n"
            "  --scalars T     the hyperparameters' dtype: f64 (default, as examples/adamw.tc:\n"
            "                  scalar arithmetic in double, as torch.optim) or f32 (see the source)\n"
            "  --verbose       each tensor's errors\n",
            argv0, MAX_LAYERS, MAX_STEPS);
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.layers = 24, .steps = 10, .f64 = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--verbose")) {
            o.verbose = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(argv[0]), 0;
        if (!val) {
            fprintf(stderr, "%s: unknown option or missing value: %s\n", argv[0], a);
            return usage(argv[0]);
        }
        if (!strcmp(a, "--layers")) {
            long v = strtol(val, &end, 10);
            if (*end || v < 1 || v > MAX_LAYERS) {
                fprintf(stderr, "%s: --layers takes 1 to %d, not '%s'\n", argv[0], MAX_LAYERS, val);
                return 2;
            }
            o.layers = (int)v;
        } else if (!strcmp(a, "--steps")) {
            long v = strtol(val, &end, 10);
            if (*end || v < 0 || v > MAX_STEPS) {
                fprintf(stderr, "%s: --steps takes 0 to %d, not '%s'\n", argv[0], MAX_STEPS, val);
                return 2;
            }
            o.steps = (int)v;
        } else if (!strcmp(a, "--in")) {
            o.in = val;
        } else if (!strcmp(a, "--out")) {
            o.out = val;
        } else if (!strcmp(a, "--scalars")) {
            if (strcmp(val, "f32") && strcmp(val, "f64")) {
                fprintf(stderr, "%s: --scalars takes f32 or f64, not '%s'\n", argv[0], val);
                return 2;
            }
            o.f64 = !strcmp(val, "f64");
        } else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            return usage(argv[0]);
        }
        i++;
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
    const char *ty = o.f64 ? "f64" : "f32";
    char text[sizeof ADAMW + 16];
    int len = snprintf(text, sizeof text, ADAMW, ty, ty, ty, ty, ty);
    st = tc_compile(ctx, text, (size_t)len, "adamw.tc", &prog);
    if (st != TC_OK) {
        fprintf(stderr, "%s", tc_errmsg(ctx));
        goto out;
    }
    const char *src = tc_program_source(prog, "adamw");
    if (!src) {
        fprintf(stderr, "tc_program_source: %s\n", tc_errmsg(ctx));
        goto out;
    }
    /* The kernel's signature: its group table and the scalars it takes. */
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
    rc = run_on_gpu(&g, ctx, prog, &o);

out:
    tc_program_free(prog);
    tc_ctx_free(ctx);
    gpu_close(&g);
    return rc;
}
