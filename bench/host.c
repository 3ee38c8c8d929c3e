/* host.c - the host-side work of a benchmark: threads, random inputs, and
 * the bytes of each dtype.
 *
 * The suite's inputs are large (64M elements, 302M for AdamW), and the
 * reference interpreter is single-threaded, so everything proportional to
 * the data runs on every core through par_for.  Random values come from
 * splitmix64 streams, one per block of BLOCK elements seeded from (seed,
 * tag, block): the values do not depend on the number of threads.
 *
 * Values are made as doubles already rounded to the tensor's dtype
 * (dtype_round), which is what the reference interpreter reads; the device
 * gets the same values as the dtype's bytes, so the two see the same
 * numbers exactly.
 */
#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 1 << 20 };

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* --- threads ------------------------------------------------------------------ */

typedef struct {
    par_fn fn;
    void *arg;
    int64_t n;
    atomic_llong next;
} par_job;

typedef struct {
    par_job *job;
    int worker;
} par_worker;

static void *par_main(void *p)
{
    par_worker *w = p;
    for (;;) {
        long long i = atomic_fetch_add(&w->job->next, 1);
        if (i >= w->job->n)
            break;
        w->job->fn(w->job->arg, w->worker, i);
    }
    return NULL;
}

bool par_for(int64_t n, int nthreads, par_fn fn, void *arg)
{
    if (n <= 0)
        return true;
    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > n)
        nthreads = (int)n;
    par_job job = {fn, arg, n, 0};
    par_worker *w = calloc((size_t)nthreads, sizeof *w);
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    if (!w || !t) {
        free(w);
        free(t);
        return false;
    }
    int started = 0;
    for (int i = 1; i < nthreads; i++) {
        w[i] = (par_worker){&job, i};
        if (pthread_create(&t[i], NULL, par_main, &w[i]) != 0)
            break;
        started = i;
    }
    w[0] = (par_worker){&job, 0};
    par_main(&w[0]); /* the calling thread is worker 0 */
    for (int i = 1; i <= started; i++)
        pthread_join(t[i], NULL);
    free(w);
    free(t);
    return true;
}

int bench_threads(void)
{
    const char *e = getenv("TC_BENCH_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > 32 ? 32 : (int)n;
}

/* --- random values ---------------------------------------------------------------- */

uint64_t hash_str(uint64_t h, const char *s)
{
    /* FNV-1a */
    if (!h)
        h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct {
    ref_tensor *t;
    uint64_t base;
    bool nonneg;
} fill_job;

static void fill_block(void *arg, int worker, int64_t b)
{
    (void)worker;
    fill_job *j = arg;
    int64_t n = ref_numel(j->t), lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
    uint64_t s = j->base ^ (0x632be59bd9b4e019ull * (uint64_t)(b + 1));
    tc_dtype dt = j->t->dtype;
    for (int64_t i = lo; i < hi; i++) {
        double u = (double)(splitmix(&s) >> 11) * 0x1p-53; /* [0, 1) */
        double v;
        if (dtype_is_float(dt))
            v = dtype_round(dt, j->nonneg ? u : 2 * u - 1);
        else if (dtype_is_int(dt))
            v = (j->nonneg ? 0 : -10) + (double)(splitmix(&s) % 20);
        else
            v = (double)(splitmix(&s) >> 63);
        j->t->data[i] = v;
    }
}

void fill_random(ref_tensor *t, uint64_t seed, const char *tag, bool nonneg, int nthreads)
{
    fill_job j = {t, hash_str(0, tag) ^ seed * 0x9e3779b97f4a7c15ull, nonneg};
    int64_t n = ref_numel(t), blocks = (n + BLOCK - 1) / BLOCK;
    if (!par_for(blocks, nthreads, fill_block, &j))
        for (int64_t b = 0; b < blocks; b++)
            fill_block(&j, 0, b);
}

/* --- dtypes as bytes ---------------------------------------------------------------- */

/* An f16 bit pattern for a value already representable in f16. */
static uint16_t half_bits(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v))
        return 0x7e00;
    if (isinf(a) || a >= 65520.0)
        return sign | 0x7c00;
    if (a == 0)
        return sign;
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int E = e + 14;          /* f16: a = (1 + f/1024) * 2^(E-15) */
    if (E >= 1)
        return (uint16_t)(sign | (E << 10) | ((uint16_t)lround((2 * m - 1) * 1024) & 0x3ff));
    return (uint16_t)(sign | (uint16_t)lround(a * 16777216.0)); /* subnormal: f * 2^-24 */
}

static double half_value(uint16_t h)
{
    int E = (h >> 10) & 0x1f, f = h & 0x3ff;
    double v = E == 0 ? ldexp(f, -24) : E == 31 ? (f ? NAN : INFINITY) : ldexp(1024 + f, E - 25);
    return (h & 0x8000) ? -v : v;
}

static void encode_value(tc_dtype dt, double v, unsigned char *p)
{
    switch (dt) {
    case TC_F32: { float x = (float)v; memcpy(p, &x, 4); return; }
    case TC_F64: memcpy(p, &v, 8); return;
    case TC_F16: { uint16_t h = half_bits(v); memcpy(p, &h, 2); return; }
    case TC_BF16: { /* exact: v is a bf16 value, so the low half of its f32 is zero */
        float x = (float)v;
        uint32_t u;
        memcpy(&u, &x, 4);
        uint16_t h = (uint16_t)(u >> 16);
        memcpy(p, &h, 2);
        return;
    }
    case TC_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); return; }
    case TC_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); return; }
    case TC_BOOL: *p = v != 0; return;
    default: return;
    }
}

double decode_value(tc_dtype dt, const unsigned char *p)
{
    switch (dt) {
    case TC_F32: { float x; memcpy(&x, p, 4); return x; }
    case TC_F64: { double x; memcpy(&x, p, 8); return x; }
    case TC_F16: { uint16_t h; memcpy(&h, p, 2); return half_value(h); }
    case TC_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        uint32_t u = (uint32_t)h << 16;
        float x;
        memcpy(&x, &u, 4);
        return x;
    }
    case TC_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case TC_I64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case TC_BOOL: return *p != 0;
    default: return 0;
    }
}

typedef struct {
    const ref_tensor *t;
    unsigned char *out;
} encode_job;

static void encode_block(void *arg, int worker, int64_t b)
{
    (void)worker;
    encode_job *j = arg;
    int64_t n = ref_numel(j->t), lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
    int sz = dtype_size(j->t->dtype);
    for (int64_t i = lo; i < hi; i++)
        encode_value(j->t->dtype, j->t->data[i], j->out + i * sz);
}

void encode_tensor(const ref_tensor *t, unsigned char *out, int nthreads)
{
    encode_job j = {t, out};
    int64_t n = ref_numel(t), blocks = (n + BLOCK - 1) / BLOCK;
    if (!par_for(blocks, nthreads, encode_block, &j))
        for (int64_t b = 0; b < blocks; b++)
            encode_block(&j, 0, b);
}

DLDataType dl_dtype(tc_dtype dt)
{
    DLDataType t = {kDLFloat, 32, 1};
    switch (dt) {
    case TC_F64: t.bits = 64; break;
    case TC_F16: t.bits = 16; break;
    case TC_BF16: t.code = kDLBfloat; t.bits = 16; break;
    case TC_I32: t.code = kDLInt; break;
    case TC_I64: t.code = kDLInt; t.bits = 64; break;
    case TC_BOOL: t.code = 6 /* kDLBool, DLPack 0.8 */; t.bits = 8; break;
    default: break;
    }
    return t;
}
