/* host.c - the host-side work of a benchmark: threads, random inputs, and
 * the bytes of each dtype.
 *
 * The suite's inputs are large (64M elements, 302M for AdamW), and the
 * reference interpreter is single-threaded, so everything proportional to
 * the data runs on every core through par_for.  Random values come from
 * splitmix64 streams, one per block of BLOCK elements seeded from (seed,
 * tag, block): the values do not depend on the number of threads.
 *
 * Values are made as the dtype's bytes (tc_value_encode rounds them), which
 * is what both the device and the reference interpreter (tc_run_cpu) read,
 * so the two see the same numbers exactly.
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
    htensor *t;
    uint64_t base;
    bool nonneg;
} fill_job;

static void fill_block(void *arg, int worker, int64_t b)
{
    (void)worker;
    fill_job *j = arg;
    int64_t n = ht_numel(j->t), lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
    uint64_t s = j->base ^ (0x632be59bd9b4e019ull * (uint64_t)(b + 1));
    DLDataType dt = j->t->dtype;
    int sz = dt_size(dt);
    for (int64_t i = lo; i < hi; i++) {
        double u = (double)(splitmix(&s) >> 11) * 0x1p-53; /* [0, 1) */
        double v;
        if (dt_is_float(dt))
            v = j->nonneg ? u : 2 * u - 1;
        else if (dt_is_int(dt))
            v = (j->nonneg ? 0 : -10) + (double)(splitmix(&s) % 20);
        else
            v = (double)(splitmix(&s) >> 63);
        tc_value_encode(dt, v, j->t->data + i * sz); /* rounded to the dtype */
    }
}

void fill_random(htensor *t, uint64_t seed, const char *tag, bool nonneg, int nthreads)
{
    fill_job j = {t, hash_str(0, tag) ^ seed * 0x9e3779b97f4a7c15ull, nonneg};
    int64_t n = ht_numel(t), blocks = (n + BLOCK - 1) / BLOCK;
    if (!par_for(blocks, nthreads, fill_block, &j))
        for (int64_t b = 0; b < blocks; b++)
            fill_block(&j, 0, b);
}

/* --- host tensors and dtypes ------------------------------------------------------------ */

int dt_size(DLDataType t)
{
    return t.bits / 8;
}

bool dt_is_float(DLDataType t)
{
    return t.code == kDLFloat || t.code == kDLBfloat;
}

bool dt_is_int(DLDataType t)
{
    return t.code == kDLInt;
}

const char *dt_name(DLDataType t)
{
    switch (t.code) {
    case kDLFloat: return t.bits == 16 ? "f16" : t.bits == 64 ? "f64" : "f32";
    case kDLBfloat: return "bf16";
    case kDLInt: return t.bits == 64 ? "i64" : "i32";
    default: return "bool";
    }
}

int64_t ht_numel(const htensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->rank; k++)
        n *= t->shape[k];
    return n;
}

bool ht_alloc(htensor *t, DLDataType dt, int rank, const int64_t *shape)
{
    t->dtype = dt;
    t->rank = rank;
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        t->shape[k] = shape[k];
        if (shape[k] < 0 || (shape[k] && n > INT64_MAX / 8 / shape[k]))
            return false;
        n *= shape[k];
    }
    t->data = malloc((size_t)(n * dt_size(dt)) + 1);
    return t->data != NULL;
}

DLTensor ht_dl(htensor *t)
{
    DLTensor d;
    memset(&d, 0, sizeof d);
    d.data = t->data;
    d.device.device_type = kDLCPU;
    d.ndim = t->rank;
    d.dtype = t->dtype;
    d.shape = t->shape;
    return d;
}
