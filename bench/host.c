/* host.c - the host-side work of a benchmark: threads, random inputs, and
 * the bytes of each dtype.
 *
 * The suite's inputs are large (64M elements, 302M for AdamW), and the
 * reference interpreter is single-threaded, so everything proportional to
 * the data runs on every core through par_for.  Random values come from
 * splitmix64 streams, one per block of BLOCK elements seeded from (seed,
 * tag, block): the values do not depend on the number of threads.
 *
 * Values are made already rounded to the tensor's dtype (ref_setf: floats
 * in the double lane, integers in the int64 lane), which is what the
 * reference interpreter reads; the device
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
        ref_setf(j->t, i, v); /* integral for integer dtypes: exact in either lane */
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

/* --- dtypes as bytes: dtype_encode / dtype_decode (src/base/dtype.c) ------------------- */

double decode_value(tc_dtype dt, const unsigned char *p)
{
    return dtype_decode(dt, p);
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
    for (int64_t i = lo; i < hi; i++) {
        if (j->t->idata)
            dtype_encode_int(j->t->dtype, j->t->idata[i], j->out + i * sz);
        else
            dtype_encode(j->t->dtype, j->t->data[i], j->out + i * sz);
    }
}

void encode_tensor(const ref_tensor *t, unsigned char *out, int nthreads)
{
    encode_job j = {t, out};
    int64_t n = ref_numel(t), blocks = (n + BLOCK - 1) / BLOCK;
    if (!par_for(blocks, nthreads, encode_block, &j))
        for (int64_t b = 0; b < blocks; b++)
            encode_block(&j, 0, b);
}

