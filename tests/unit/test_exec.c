/* test_exec.c - running launch plans, on the host.
 *
 * exec.c reaches the device only through rt_ops; here the table is host
 * memory and hand-written "kernels" (C functions that read their arguments
 * exactly as a CUDA kernel would: a pointer, an int or a long long for a
 * size, a float/double/int/long long/bool for a scalar).  Plans are built
 * by hand the way codegen would, so these tests pin plan.h's contract:
 * argument types (32- and 64-bit plans), buffers (parameters, outputs,
 * in-place and copied-back inout outputs, temporaries sharing memory only
 * when their lives do not overlap), grid clamping, the zeroed workspace,
 * matmul (through blas_map, emulated), copies, events, memory kept between
 * runs, the device wait when the stream changes, and every malformed-plan
 * error.  memplan's packing is checked on its own too, exhaustively on
 * random lifetimes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "memplan.h"

/* --- memplan ---------------------------------------------------------------------- */

static uint64_t rup(uint64_t v) { return (v + MEMPLAN_ALIGN - 1) / MEMPLAN_ALIGN * MEMPLAN_ALIGN; }

static void check_packing(const mp_item *it, int n, const uint64_t *off, uint64_t total)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(off[i] % MEMPLAN_ALIGN, 0);
        assert_true(off[i] + it[i].bytes <= total);
        for (int j = 0; j < i; j++) {
            bool together = it[i].first <= it[j].last && it[j].first <= it[i].last;
            bool disjoint = off[i] + it[i].bytes <= off[j] || off[j] + it[j].bytes <= off[i];
            if (together && it[i].bytes && it[j].bytes && !disjoint)
                fail_msg("items %d and %d are alive together and overlap", i, j);
        }
    }
}

static void test_memplan_basic(void **state)
{
    (void)state;
    uint64_t off[4], total = 99;
    assert_true(memplan(NULL, 0, off, &total));
    assert_int_equal(total, 0);

    /* a chain t1 -> t2 -> t3: t1 and t3 never live together */
    mp_item chain[] = {{1000, 0, 1}, {500, 1, 2}, {1000, 2, 3}};
    assert_true(memplan(chain, 3, off, &total));
    check_packing(chain, 3, off, total);
    assert_int_equal(off[0], off[2]);
    assert_int_equal(total, rup(1000) + rup(500));

    /* all alive at once: the sum */
    mp_item all[] = {{10, 0, 5}, {300, 1, 2}, {7, 2, 3}, {256, 0, 3}};
    assert_true(memplan(all, 4, off, &total));
    check_packing(all, 4, off, total);
    assert_int_equal(total, rup(10) + rup(300) + rup(7) + 256);

    /* the two big ones share offset 0; the small ones go above, and share
     * too, since they never live at the same time */
    mp_item gap[] = {{4096, 0, 0}, {4096, 1, 2}, {100, 0, 0}, {2048, 2, 2}};
    assert_true(memplan(gap, 4, off, &total));
    check_packing(gap, 4, off, total);
    assert_int_equal(off[0], 0);
    assert_int_equal(off[1], 0);
    assert_int_equal(off[2], 4096);
    assert_int_equal(off[3], 4096);
    assert_int_equal(total, 4096 + 2048);
}

static void test_memplan_random(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (int round = 0; round < 300; round++) {
        mp_item it[24];
        uint64_t off[24], total;
        int n = 1 + (int)(s % 24);
        int steps = 1 + (int)((s >> 8) % 12);
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            int a = (int)((s >> 20) % (uint64_t)steps), b = (int)((s >> 40) % (uint64_t)steps);
            it[i] = (mp_item){1 + (s >> 50) % 5000, a < b ? a : b, a < b ? b : a};
        }
        assert_true(memplan(it, n, off, &total));
        check_packing(it, n, off, total);
        /* never more than giving everyone their own memory, never less
         * than what is alive at the busiest step */
        uint64_t sum = 0, peak = 0;
        for (int i = 0; i < n; i++)
            sum += rup(it[i].bytes);
        for (int t = 0; t < steps; t++) {
            uint64_t live = 0;
            for (int i = 0; i < n; i++)
                if (it[i].first <= t && t <= it[i].last)
                    live += it[i].bytes;
            if (live > peak)
                peak = live;
        }
        assert_true(total <= sum);
        assert_true(total >= peak);
    }
}

/* --- a host device ------------------------------------------------------------------ */

typedef void (*host_kernel)(void **args, int nargs, const unsigned grid[3], const unsigned block[3]);

typedef struct {
    const char *name;
    host_kernel fn;
} kernel_def;

typedef struct {
    int allocs, frees, syncs, zeros, copies, launches, matmuls, uploads;
    unsigned grid[3], block[3], cluster, shmem; /* of the last launch */
    unsigned cluster_max;               /* what the device allows (0 taken as 1) */
    unsigned cluster_block;             /* its blocks' fewest threads (0 taken as 1024) */
    size_t sizes[8][16];                /* arguments' sizes, by launch (the first 8) */
    void *events[16];
    void *event_streams[16];
    int nevents;
    bool fail_alloc;
    unsigned cluster_fail;              /* launches of clusters past this fail (0: none) */
    unsigned clusters_tried;            /* the sizes launched, OR'd */
    unsigned resident;                  /* clusters held at once (0: unknown) */
    unsigned resident_cluster, resident_shmem; /* what the last query asked about */
} host_dev;

static tc_status h_alloc(void *dev, size_t bytes, uint64_t *ptr, tc_diag *d)
{
    host_dev *h = dev;
    if (h->fail_alloc) {
        if (d)
            diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "host alloc of %zu bytes refused", bytes);
        return TC_ERR_NOMEM;
    }
    void *p = malloc(bytes);
    assert_non_null(p);
    memset(p, 0xA5, bytes); /* garbage, like fresh device memory */
    h->allocs++;
    *ptr = (uint64_t)(uintptr_t)p;
    return TC_OK;
}

static void h_release(void *dev, uint64_t ptr)
{
    ((host_dev *)dev)->frees++;
    free((void *)(uintptr_t)ptr);
}

static tc_status h_sync(void *dev, tc_diag *d)
{
    (void)d;
    ((host_dev *)dev)->syncs++;
    return TC_OK;
}

static tc_status h_zero(void *dev, uint64_t ptr, size_t bytes, void *stream, tc_diag *d)
{
    (void)stream;
    (void)d;
    ((host_dev *)dev)->zeros++;
    memset((void *)(uintptr_t)ptr, 0, bytes);
    return TC_OK;
}

static tc_status h_copy(void *dev, uint64_t dst, uint64_t src, size_t bytes, void *stream, tc_diag *d)
{
    (void)stream;
    (void)d;
    ((host_dev *)dev)->copies++;
    assert_true(dst + bytes <= src || src + bytes <= dst);
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return TC_OK;
}

static tc_status h_kernel(void *dev, void *module, const char *name, void **fn, tc_diag *d)
{
    (void)dev;
    for (const kernel_def *k = module; k->name; k++)
        if (strcmp(k->name, name) == 0) {
            *fn = (void *)k;
            return TC_OK;
        }
    if (d)
        diag_set(d, TC_ERR_INTERNAL, (tc_loc){0}, "no kernel '%s'", name);
    return TC_ERR_INTERNAL;
}

static tc_status h_launch(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                          unsigned cluster, unsigned shmem, void **args, const size_t *sizes,
                          int nargs, void *stream, tc_diag *d)
{
    ((host_dev *)dev)->cluster = cluster;
    ((host_dev *)dev)->shmem = shmem;
    (void)stream;
    host_dev *h = dev;
    h->clusters_tried |= cluster;
    if (h->cluster_fail && cluster > h->cluster_fail) /* as cuLaunchKernelEx past a GPC */
        return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0}, "cluster of %u blocks refused", cluster);
    if (h->launches < 8 && nargs <= 16)
        memcpy(h->sizes[h->launches], sizes, (size_t)nargs * sizeof *sizes);
    h->launches++;
    memcpy(h->grid, grid, sizeof h->grid);
    memcpy(h->block, block, sizeof h->block);
    ((const kernel_def *)fn)->fn(args, nargs, grid, block);
    return TC_OK;
}

/* cuBLAS's semantics on f32 host data, through the same mapping blas.c uses. */
static tc_status h_matmul(void *dev, const blas_mm *mm, void *stream, tc_diag *d)
{
    (void)stream;
    ((host_dev *)dev)->matmuls++;
    blas_gemm g;
    tc_status st = blas_map(mm, &g, d);
    if (st != TC_OK)
        return st;
    const float *A = (const float *)(uintptr_t)g.a, *B = (const float *)(uintptr_t)g.b;
    float *C = (float *)(uintptr_t)g.c;
    for (int64_t b = 0; b < g.batch; b++)
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++) {
                float s = 0;
                for (int64_t l = 0; l < g.k; l++)
                    s += (g.transa ? A[b * g.stride_a + l + i * g.lda] : A[b * g.stride_a + i + l * g.lda]) *
                         (g.transb ? B[b * g.stride_b + j + l * g.ldb] : B[b * g.stride_b + l + j * g.ldb]);
                C[b * g.stride_c + i + j * g.ldc] = s;
            }
    return TC_OK;
}

static tc_status h_record(void *dev, void *event, void *stream, tc_diag *d)
{
    (void)d;
    host_dev *h = dev;
    assert_true(h->nevents < 16);
    h->events[h->nevents] = event;
    h->event_streams[h->nevents++] = stream;
    return TC_OK;
}

static tc_status h_upload(void *dev, uint64_t dst, const void *src, size_t bytes, void *stream,
                          tc_diag *d)
{
    (void)stream;
    (void)d;
    ((host_dev *)dev)->uploads++;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return TC_OK;
}

static unsigned h_clusters(void *dev, unsigned *min_block)
{
    host_dev *h = dev;
    *min_block = h->cluster_block ? h->cluster_block : 1024;
    return h->cluster_max ? h->cluster_max : 1;
}

static unsigned h_resident(void *dev, void *fn, const unsigned block[3], unsigned cluster, unsigned shmem)
{
    host_dev *h = dev;
    (void)fn;
    (void)block;
    h->resident_cluster = cluster;
    h->resident_shmem = shmem;
    return h->resident;
}

static const rt_ops host_ops = {h_alloc, h_release, h_sync, h_zero, h_copy, h_kernel,
                                h_launch, h_matmul, h_record, h_upload, h_clusters, h_resident};

/* --- kernels, reading their arguments as CUDA would ------------------------------------ */

static bool g_idx64;                  /* how the kernels read a size */
static void *g_seen[8];               /* addresses the kernels were given, by kernel */

static long long size_arg(void *p)
{
    return g_idx64 ? *(long long *)p : (long long)*(int *)p;
}

/* scale(float *out, const float *x, n, float s): out = x * s */
static void k_scale(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    assert_int_equal(nargs, 4);
    float *out = *(float **)a[0];
    const float *x = *(const float **)a[1];
    long long n = size_arg(a[2]);
    float s = *(float *)a[3];
    g_seen[0] = out;
    for (long long i = 0; i < n; i++)
        out[i] = x[i] * s;
}

/* addk(float *out, const float *x, n, int k, bool flag, double dd, long long big) */
static void k_addk(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    assert_int_equal(nargs, 7);
    float *out = *(float **)a[0];
    const float *x = *(const float **)a[1];
    long long n = size_arg(a[2]);
    int k = *(int *)a[3];
    unsigned char flag = *(unsigned char *)a[4];
    double dd = *(double *)a[5];
    long long big = *(long long *)a[6];
    assert_true(flag == 0 || flag == 1);
    g_seen[1] = out;
    g_seen[2] = (void *)x;
    for (long long i = 0; i < n; i++)
        out[i] = x[i] + (float)k + (float)flag + (float)dd + (float)(big - 4000000000LL);
}

/* neg(float *out, const float *x, n) */
static void k_neg(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    assert_int_equal(nargs, 3);
    float *out = *(float **)a[0];
    const float *x = *(const float **)a[1];
    long long n = size_arg(a[2]);
    g_seen[3] = out;
    g_seen[4] = (void *)x;
    for (long long i = 0; i < n; i++)
        out[i] = -x[i];
}

/* neg64(float *out, const float *x, long long n): a kernel of a 32-bit
 * plan that takes 64-bit sizes (its step's idx64). */
static void k_neg64(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    assert_int_equal(nargs, 3);
    float *out = *(float **)a[0];
    const float *x = *(const float **)a[1];
    long long n = *(long long *)a[2];
    for (long long i = 0; i < n; i++)
        out[i] = -x[i];
}

/* wsum(float *out, const float *x, n, void *ws): uses the workspace as the
 * full-reduction kernels do, and leaves it zero. */
static void k_wsum(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    assert_int_equal(nargs, 4);
    float *out = *(float **)a[0];
    const float *x = *(const float **)a[1];
    long long n = size_arg(a[2]);
    unsigned char *ws = *(unsigned char **)a[3];
    for (int i = 0; i < 64; i++)
        assert_int_equal(ws[i], 0);
    double *acc = (double *)ws;
    for (long long i = 0; i < n; i++)
        *acc += x[i];
    out[0] = (float)*acc;
    memset(ws, 0, 64);
}

/* fe(table, float s): y = x * s over a foreach table of groups {x, y},
 * read the way the generated kernel reads it (plan.h, PARG_GROUPS): each
 * block finds its group by the groups' first blocks and takes its chunk. */
enum { FE_CAP = 3, FE_CHUNK = 4 };
static int g_fe_blocks;
static void k_fe(void **a, int nargs, const unsigned grid[3], const unsigned block[3])
{
    (void)block;
    assert_int_equal(nargs, 2);
    const uint64_t *w = a[0];
    float s = *(float *)a[1];
    const uint64_t *groups = w[0] ? (const uint64_t *)(uintptr_t)w[0] : w + 2;
    long long ng = (long long)w[1];
    assert_true(ng >= 1);
    for (unsigned b = 0; b < grid[0]; b++) {
        long long lo = 0, hi = ng - 1;
        while (lo < hi) {
            long long mid = (lo + hi + 1) / 2;
            if ((long long)groups[mid * 4 + 3] <= (long long)b)
                lo = mid;
            else
                hi = mid - 1;
        }
        const uint64_t *G = groups + lo * 4;
        const float *x = (const float *)(uintptr_t)G[0];
        float *y = (float *)(uintptr_t)G[1];
        long long n = (long long)G[2], first = (long long)G[3];
        assert_true(n > 0); /* empty groups are left out */
        long long from = ((long long)b - first) * FE_CHUNK;
        assert_true(from < n);
        for (long long i = from; i < n && i < from + FE_CHUNK; i++)
            y[i] = x[i] * s;
        g_fe_blocks++;
    }
}

static const kernel_def KERNELS[] = {
    {"scale", k_scale}, {"addk", k_addk}, {"neg", k_neg}, {"neg64", k_neg64}, {"wsum", k_wsum},
    {"fe", k_fe}, {NULL, NULL},
};

/* --- building plans by hand --------------------------------------------------------------- */

typedef struct {
    tc_arena *a;
    tc_dimctx *dc;
    const tc_dim *N, *one;
} fixture;

static fixture F;

static int setup(void **state)
{
    (void)state;
    F.a = arena_new(NULL);
    F.dc = dimctx_new(F.a);
    F.N = dim_sym(F.dc, "N");
    F.one = dim_const(F.dc, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    arena_free(F.a);
    return 0;
}

static pbuf vec(pbuf_kind kind, int index, const char *name)
{
    const tc_dim **shape = ARENA_ARRAY(F.a, const tc_dim *, 1);
    shape[0] = F.N;
    return (pbuf){kind, index, -1, TC_F32, 1, shape, F.N, 0, 0, -1, name};
}

static pbuf temp(const char *name, int first, int last)
{
    pbuf b = vec(PBUF_TEMP, -1, name);
    b.first = first;
    b.last = last;
    return b;
}

static parg abuf(int b) { return (parg){PARG_BUF, b, NULL, 0, TC_DT_NONE}; }
static parg adim(const tc_dim *d) { return (parg){PARG_DIM, 0, d, 0, TC_DT_NONE}; }
static parg ascalar(int param, tc_dtype dt) { return (parg){PARG_SCALAR, 0, NULL, param, dt}; }

static pstep kstep(const char *name, const parg *args, int nargs)
{
    pstep s = {0};
    s.kind = PSTEP_KERNEL;
    s.kernel = name;
    s.args = ARENA_ARRAY(F.a, parg, nargs);
    memcpy(s.args, args, (size_t)nargs * sizeof *args);
    s.nargs = nargs;
    s.grid[0] = F.N;
    s.grid_cap = 4;
    s.shmem = 64 * 1024 + 16; /* dynamic shared memory: passed to the launch as it is */
    s.block[0] = 128;
    s.block[1] = s.block[2] = 1;
    return s;
}

/* f(x: f32[N], s: f32, k: i32, flag: bool, dd: f64, big: i64) -> f32[N]:
 *   t1 = scale(x, s); t2 = addk(t1, ...); t3 = neg(t2); out = copy(t3) */
static tc_plan *chain_plan(bool idx64)
{
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "f";
    p->nbufs = 5;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 5);
    p->bufs[0] = vec(PBUF_PARAM, 0, "in_x");
    p->bufs[1] = vec(PBUF_OUTPUT, 0, "out_out");
    p->bufs[2] = temp("buf2", 0, 1);
    p->bufs[3] = temp("buf3", 1, 2);
    p->bufs[4] = temp("buf4", 2, 3);
    p->nsteps = 4;
    p->steps = ARENA_ARRAY(F.a, pstep, 4);
    p->steps[0] = kstep("scale", (parg[]){abuf(2), abuf(0), adim(F.N), ascalar(1, TC_F32)}, 4);
    p->steps[1] = kstep("addk", (parg[]){abuf(3), abuf(2), adim(F.N), ascalar(2, TC_I32),
                                         ascalar(3, TC_BOOL), ascalar(4, TC_F64), ascalar(5, TC_I64)}, 7);
    p->steps[2] = kstep("neg", (parg[]){abuf(4), abuf(3), adim(F.N)}, 3);
    p->steps[3] = (pstep){.kind = PSTEP_COPY, .src = 4, .dst = 1,
                          .copy_bytes = dim_mul(F.dc, F.N, dim_const(F.dc, 4))};
    p->idx64 = idx64;
    p->nlimits = 1;
    p->limits = ARENA_ARRAY(F.a, const tc_dim *, 1);
    p->limits[0] = dim_mul(F.dc, F.N, F.N);
    return p;
}

typedef struct {
    tc_dimbind dims[1];
    uint64_t params[6];
    rt_scalar scalars[6];
    uint64_t outputs[1];
    rt_args args;
    float *x, *out;
} chain_io;

static void chain_io_init(chain_io *io, int64_t n)
{
    memset(io, 0, sizeof *io);
    io->dims[0] = (tc_dimbind){"N", n};
    io->x = malloc((size_t)n * sizeof(float));
    io->out = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        io->x[i] = (float)i - 3;
        io->out[i] = NAN;
    }
    io->params[0] = (uint64_t)(uintptr_t)io->x;
    io->scalars[1] = (rt_scalar){0.5, 0};
    io->scalars[2] = (rt_scalar){7, 7};
    io->scalars[3] = (rt_scalar){1, 1};
    io->scalars[4] = (rt_scalar){0.25, 0};
    io->scalars[5] = (rt_scalar){4000000002.0, 4000000002LL}; /* needs 64 bits */
    io->outputs[0] = (uint64_t)(uintptr_t)io->out;
    io->args = (rt_args){io->dims, 1, io->params, io->scalars, 6, io->outputs, 1, NULL};
}

static void chain_io_check(const chain_io *io, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float want = -(io->x[i] * 0.5f + 7 + 1 + 0.25f + 2);
        if (io->out[i] != want)
            fail_msg("out[%lld] = %g, want %g", (long long)i, io->out[i], want);
    }
}

static void chain_io_free(chain_io *io)
{
    free(io->x);
    free(io->out);
}

static void test_chain(void **state)
{
    (void)state;
    for (int wide = 0; wide < 2; wide++) {
        g_idx64 = wide;
        tc_plan *plan = chain_plan(wide);
        host_dev h = {0};
        rt_pool pool = {0};
        tc_diag d;
        diag_init(&d);
        chain_io io;
        chain_io_init(&io, 10);
        tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d);
        if (st != TC_OK)
            fail_msg("%s", d.msg);
        chain_io_check(&io, 10);
        assert_int_equal(h.launches, 3);
        assert_int_equal(h.copies, 1);
        /* addk(float *, const float *, n, int, bool, double, long long) */
        size_t n_size = wide ? 8 : 4;
        size_t want_sizes[7] = {sizeof(void *), sizeof(void *), n_size, 4, 1, 8, 8};
        for (int i = 0; i < 7; i++)
            assert_int_equal(h.sizes[1][i], want_sizes[i]);
        assert_int_equal(h.sizes[0][3], sizeof(float));
        assert_int_equal(h.sizes[2][2], n_size);
        /* grid[0] = N = 10, clamped to grid_cap 4; missing dims are 1 */
        assert_int_equal(h.grid[0], 4);
        assert_int_equal(h.grid[1], 1);
        assert_int_equal(h.grid[2], 1);
        assert_int_equal(h.block[0], 128);
        assert_int_equal(h.shmem, 64 * 1024 + 16);
        /* buf2 (steps 0-1) and buf4 (steps 2-3) share memory; buf3 does not */
        assert_ptr_equal(g_seen[0], g_seen[3]);
        assert_ptr_not_equal(g_seen[0], g_seen[1]);
        assert_ptr_equal(g_seen[2], g_seen[0]);
        assert_ptr_equal(g_seen[4], g_seen[1]);
        int allocs = h.allocs;
        assert_int_equal(allocs, 1); /* one block; no workspace */

        /* again: nothing allocated, nothing waited for */
        for (int64_t i = 0; i < 10; i++)
            io.out[i] = NAN;
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d), TC_OK);
        chain_io_check(&io, 10);
        assert_int_equal(h.allocs, allocs);
        assert_int_equal(h.syncs, 0);
        chain_io_free(&io);

        /* larger: the block grows, after waiting for the device */
        chain_io_init(&io, 300000);
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d), TC_OK);
        chain_io_check(&io, 300000);
        assert_int_equal(h.allocs, allocs + 1);
        assert_int_equal(h.frees, 1);
        assert_int_equal(h.syncs, 1);
        /* on another stream: wait for the device before sharing the pool */
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, (void *)0x5, NULL, &d), TC_OK);
        assert_int_equal(h.syncs, 2);
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, (void *)0x5, NULL, &d), TC_OK);
        assert_int_equal(h.syncs, 2);
        chain_io_free(&io);
        rt_pool_release(&pool, &host_ops, &h);
        assert_int_equal(h.frees, h.allocs);
        diag_release(&d);
    }
    g_idx64 = false;
}

/* A row kernel's cluster (sched.h, "Clusters"): the fewest blocks, a power
 * of two, whose slices fit block_per * 1024 elements each, at most what the
 * step and the device allow (else the most: slices loop), 8 blocks of up to
 * 512 threads, then 16 of up to 512, then 8 and 16 of any size; the grid is the rows times the cluster, and the block
 * fits the slice.  A device that refuses 16 gets the portable 8.  Step 2 (neg) is
 * made a row kernel of N-long rows, grid_cap rows. */
static void test_cluster(void **state)
{
    (void)state;
    struct { int64_t n; unsigned dev_max, minb; int step_max; unsigned cluster, block, fail; } cases[] = {
        {10, 8, 0, 16, 1, 32, 0},              /* short: one block of 32 threads */
        {16384, 8, 0, 16, 1, 1024, 0},         /* exactly a block's registers */
        {16385, 8, 0, 16, 2, 1024, 0},         /* one past: two blocks */
        {65536, 8, 0, 16, 4, 1024, 0},
        {65537, 8, 0, 16, 8, 1024, 0},         /* 8 runs of 8193 */
        {262144, 8, 0, 16, 8, 1024, 0},        /* past 8 blocks' registers: the most, looped */
        {262144, 16, 0, 16, 16, 1024, 0},      /* a device allowing 16 */
        {262144, 16, 0, 4, 4, 1024, 0},        /* the step's own limit */
        {262144, 1, 0, 16, 1, 1024, 0},        /* no clusters (before sm_90): one block a row */
        {100000, 8, 0, 0, 1, 1024, 0},         /* a kernel without clusters */
        {16385, 8, 256, 16, 8, 256, 0},        /* small blocks first: 8 of 256 threads */
        {65536, 8, 256, 16, 8, 512, 0},        /* 16 of 256 would pass 8: 8 of 512 */
        {65536, 16, 256, 16, 8, 512, 0},       /* 8 blocks of 512 before 16 of 256 */
        {131072, 16, 256, 16, 16, 512, 0},     /* 16 of 512 (two a SM) before 8 of 1024 */
        {131072, 8, 256, 16, 8, 1024, 0},      /* a device of 8: 8 of 1024 */
        {131073, 16, 256, 16, 16, 1024, 0},    /* past 8 x 1024: 16 blocks, the largest */
        {262144, 16, 256, 16, 16, 1024, 0},
        {524288, 16, 256, 16, 16, 1024, 0},    /* past every cluster: the most, looped */
        {16384, 8, 256, 16, 1, 1024, 0},       /* one block holds it: no cluster */
        {262144, 16, 256, 16, 8, 1024, 8},     /* 16 refused at launch: the portable 8, looped */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_plan *plan = chain_plan(false);
        pstep *S = &plan->steps[2];
        S->block[0] = 1024;
        S->block_len = F.N;
        S->block_per = 16;
        S->cluster = cases[c].step_max;
        host_dev h = {0};
        h.cluster_max = cases[c].dev_max;
        h.cluster_block = cases[c].minb;
        h.cluster_fail = cases[c].fail;
        rt_pool pool = {0};
        tc_diag d;
        diag_init(&d);
        chain_io io;
        chain_io_init(&io, cases[c].n);
        tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d);
        if (st != TC_OK)
            fail_msg("%s", d.msg);
        chain_io_check(&io, cases[c].n);
        if (h.cluster != cases[c].cluster || h.block[0] != cases[c].block ||
            h.grid[0] != 4 * cases[c].cluster)
            fail_msg("case %zu (rows of %lld): cluster %u, block %u, grid %u; want %u, %u, %u", c,
                     (long long)cases[c].n, h.cluster, h.block[0], h.grid[0], cases[c].cluster,
                     cases[c].block, 4 * cases[c].cluster);
        if (cases[c].fail && !(h.clusters_tried & 16))
            fail_msg("case %zu: the 16-block cluster was not tried first", c);
        chain_io_free(&io);
        rt_pool_release(&pool, &host_ops, &h);
        diag_release(&d);
    }
}

/* TENSORC_ROWS_PIPE (plan.h's pipe): a row kernel launched in clusters
 * gets pipe bytes a thread of dynamic shared memory and at most the
 * resident clusters (the rows loop); without a cluster, neither; a device
 * that cannot tell keeps a cluster a row.  4 rows (test_cluster's plan). */
static void test_cluster_pipe(void **state)
{
    (void)state;
    struct { int64_t n; unsigned dev_max, resident, fail, cluster, block, grid, shmem; } cases[] = {
        {262144, 16, 3, 0, 16, 1024, 3 * 16, 128 * 1024},  /* 3 clusters for 4 rows */
        {262144, 16, 1, 0, 16, 1024, 16, 128 * 1024},      /* one: it takes every row */
        {262144, 16, 9, 0, 16, 1024, 4 * 16, 128 * 1024},  /* more than the rows: a cluster a row */
        {262144, 16, 0, 0, 16, 1024, 4 * 16, 128 * 1024},  /* unknown: a cluster a row */
        {65536, 8, 2, 0, 4, 1024, 2 * 4, 128 * 1024},
        {262144, 16, 3, 8, 8, 1024, 3 * 8, 128 * 1024},    /* 16 refused: 8, asked again */
        {262144, 1, 3, 0, 1, 1024, 4, 0},                  /* no clusters: no pipe (the step's shmem) */
        {10, 16, 3, 0, 1, 32, 4, 0},                       /* one block a row: no pipe */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_plan *plan = chain_plan(false);
        pstep *S = &plan->steps[2];
        S->block[0] = 1024;
        S->block_len = F.N;
        S->block_per = 16;
        S->cluster = 16;
        S->pipe = 128;
        host_dev h = {0};
        h.cluster_max = cases[c].dev_max;
        h.resident = cases[c].resident;
        h.cluster_fail = cases[c].fail;
        rt_pool pool = {0};
        tc_diag d;
        diag_init(&d);
        chain_io io;
        chain_io_init(&io, cases[c].n);
        tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d);
        if (st != TC_OK)
            fail_msg("%s", d.msg);
        unsigned shmem = cases[c].shmem ? cases[c].shmem : (unsigned)S->shmem;
        if (h.cluster != cases[c].cluster || h.block[0] != cases[c].block || h.grid[0] != cases[c].grid ||
            h.shmem != shmem)
            fail_msg("case %zu (rows of %lld): cluster %u, block %u, grid %u, shmem %u; want %u, %u, %u, %u", c,
                     (long long)cases[c].n, h.cluster, h.block[0], h.grid[0], h.shmem, cases[c].cluster,
                     cases[c].block, cases[c].grid, shmem);
        if (cases[c].cluster > 1 && (h.resident_cluster != cases[c].cluster || h.resident_shmem != cases[c].shmem))
            fail_msg("case %zu: asked about clusters of %u with %u bytes", c, h.resident_cluster,
                     h.resident_shmem);
        chain_io_free(&io);
        rt_pool_release(&pool, &host_ops, &h);
        diag_release(&d);
    }
}

/* TENSORC_COLPART_PREFETCH (plan.h's pipe with no cluster: a rows kernel
 * carrying column partials): pipe bytes a thread of dynamic shared memory
 * for the block the row sizes, the grid as planned (a block per block of
 * rows, not the resident ones). */
static void test_colpart_pipe(void **state)
{
    (void)state;
    struct { int64_t n; unsigned block; } cases[] = {{4096, 512}, {4097, 1024}, {10, 32}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_plan *plan = chain_plan(false);
        pstep *S = &plan->steps[2];
        S->block[0] = 1024;
        S->block_len = F.N;
        S->block_per = 8;
        S->cluster = 0;
        S->pipe = 64;
        host_dev h = {0};
        h.cluster_max = 16;
        h.resident = 3;
        rt_pool pool = {0};
        tc_diag d;
        diag_init(&d);
        chain_io io;
        chain_io_init(&io, cases[c].n);
        tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, NULL, NULL, &d);
        if (st != TC_OK)
            fail_msg("%s", d.msg);
        if (h.cluster > 1 || h.block[0] != cases[c].block || h.grid[0] != 4 || h.shmem != 64 * cases[c].block)
            fail_msg("case %zu (rows of %lld): cluster %u, block %u, grid %u, shmem %u; want 1, %u, 4, %u", c,
                     (long long)cases[c].n, h.cluster, h.block[0], h.grid[0], h.shmem, cases[c].block,
                     64 * cases[c].block);
        chain_io_free(&io);
        rt_pool_release(&pool, &host_ops, &h);
        diag_release(&d);
    }
}

/* One kernel of a 32-bit plan may take 64-bit sizes (step idx64):
 * out = neg64(neg(x)), neg reading an int n and neg64 a long long. */
static void test_step_idx64(void **state)
{
    (void)state;
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "h";
    p->nbufs = 3;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 3);
    p->bufs[0] = vec(PBUF_PARAM, 0, "in_x");
    p->bufs[1] = vec(PBUF_OUTPUT, 0, "out_out");
    p->bufs[2] = temp("buf2", 0, 1);
    p->nsteps = 2;
    p->steps = ARENA_ARRAY(F.a, pstep, 2);
    p->steps[0] = kstep("neg", (parg[]){abuf(2), abuf(0), adim(F.N)}, 3);
    p->steps[1] = kstep("neg64", (parg[]){abuf(1), abuf(2), adim(F.N)}, 3);
    p->steps[1].idx64 = true;
    float x[5] = {1, 2, 3, 4, 5}, out[5] = {0};
    tc_dimbind b = {"N", 5};
    uint64_t params[1] = {(uint64_t)(uintptr_t)x}, outputs[1] = {(uint64_t)(uintptr_t)out};
    rt_scalar sc[1] = {{0, 0}};
    rt_args a = {&b, 1, params, sc, 1, outputs, 1, NULL};
    host_dev h = {0};
    rt_pool pool = {0};
    g_idx64 = false;
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, NULL), TC_OK);
    for (int i = 0; i < 5; i++)
        assert_true(out[i] == x[i]);
    assert_int_equal(h.sizes[0][2], sizeof(int));
    assert_int_equal(h.sizes[1][2], sizeof(long long));
    rt_pool_release(&pool, &host_ops, &h);
}

static void test_needs_idx64(void **state)
{
    (void)state;
    tc_plan *p = chain_plan(false);
    tc_dimbind b = {"N", 46340}; /* N*N = 2147395600 < 2^31 */
    const tc_dim *which = NULL;
    int64_t v = 0;
    assert_false(rt_needs_idx64(p, &b, 1, &which, &v));
    b.value = 46341; /* 2147488281 */
    assert_true(rt_needs_idx64(p, &b, 1, &which, &v));
    assert_ptr_equal(which, p->limits[0]);
    assert_int_equal(v, 2147488281LL);
    assert_true(rt_needs_idx64(p, NULL, 0, NULL, NULL)); /* unbound: not provably small */
    p->idx64 = true;
    assert_false(rt_needs_idx64(p, &b, 1, NULL, NULL));
}

/* A 32-bit plan given a size that does not fit: an error naming the plan,
 * never a truncated int. */
static void test_dim_overflow(void **state)
{
    (void)state;
    tc_plan *p = chain_plan(false);
    p->steps[0].grid[0] = F.one; /* so the grid is not the problem */
    host_dev h = {0};
    rt_pool pool = {0};
    tc_diag d;
    diag_init(&d);
    chain_io io;
    chain_io_init(&io, 1);
    io.dims[0].value = (int64_t)1 << 32;
    h.fail_alloc = true; /* the temporaries would be 16 GiB: refuse, and expect the message */
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &io.args, NULL, NULL, &d), TC_ERR_NOMEM);
    assert_non_null(strstr(d.brief, "refused"));
    /* no temporaries: the size argument is the first thing that fails */
    p->nbufs = 2;
    p->nsteps = 1;
    p->steps[0].args[0] = abuf(1);
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &io.args, NULL, NULL, &d), TC_ERR_INTERNAL);
    assert_string_equal(d.brief, "plan of 'f': step 0: a size argument is 4294967296, which does "
                                 "not fit the 32-bit plan (its limits should have asked for idx64)");
    assert_int_equal(h.launches, 0);
    chain_io_free(&io);
    rt_pool_release(&pool, &host_ops, &h);
    diag_release(&d);
}

/* g(p: inout f32[N]) with p = neg(p): in place (alias) and through a
 * scratch output and a final copy (alias -1, no memory from the caller). */
static void test_inout(void **state)
{
    (void)state;
    for (int in_place = 0; in_place < 2; in_place++) {
        tc_plan *p = ARENA_NEW(F.a, tc_plan);
        p->fn = "g";
        p->nbufs = 2;
        p->bufs = ARENA_ARRAY(F.a, pbuf, 2);
        p->bufs[0] = vec(PBUF_PARAM, 0, "in_p");
        p->bufs[1] = vec(PBUF_OUTPUT, 0, "out_p");
        p->bufs[1].alias = in_place ? 0 : -1;
        p->nsteps = in_place ? 1 : 2;
        p->steps = ARENA_ARRAY(F.a, pstep, 2);
        p->steps[0] = kstep("neg", (parg[]){abuf(1), abuf(0), adim(F.N)}, 3);
        p->steps[1] = (pstep){.kind = PSTEP_COPY, .src = 1, .dst = 0,
                              .copy_bytes = dim_mul(F.dc, F.N, dim_const(F.dc, 4))};
        float data[5] = {1, -2, 3, -4, 5};
        tc_dimbind b = {"N", 5};
        uint64_t params[1] = {(uint64_t)(uintptr_t)data}, outputs[1] = {0};
        rt_scalar scalars[1] = {{0, 0}};
        rt_args a = {&b, 1, params, scalars, 1, outputs, 1, NULL};
        host_dev h = {0};
        rt_pool pool = {0};
        tc_diag d;
        diag_init(&d);
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, &d), TC_OK);
        for (int i = 0; i < 5; i++)
            assert_true(data[i] == (i % 2 ? 2.0f * (float)(i / 2 + 1) : -(float)(i + 1)));
        if (in_place) {
            assert_ptr_equal(g_seen[3], data);
            assert_int_equal(h.allocs, 0);
        } else {
            assert_ptr_not_equal(g_seen[3], data);
            assert_int_equal(h.allocs, 1);
            assert_int_equal(h.copies, 1);
        }
        rt_pool_release(&pool, &host_ops, &h);
        diag_release(&d);
    }
}

/* A full reduction through the workspace: zeroed once, reused. */
static void test_workspace(void **state)
{
    (void)state;
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "s";
    p->nbufs = 2;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 2);
    p->bufs[0] = vec(PBUF_PARAM, 0, "in_x");
    p->bufs[1] = (pbuf){PBUF_OUTPUT, 0, -1, TC_F32, 0, NULL, F.one, 0, 0, -1, "out_out"};
    p->nsteps = 1;
    p->steps = ARENA_ARRAY(F.a, pstep, 1);
    p->steps[0] = kstep("wsum", (parg[]){abuf(1), abuf(0), adim(F.N), {PARG_WORKSPACE, 0, NULL, 0, 0}}, 4);
    p->steps[0].ws_bytes = dim_const(F.dc, 64);
    float x[3] = {1, 2, 4}, out = 0;
    tc_dimbind b = {"N", 3};
    uint64_t params[1] = {(uint64_t)(uintptr_t)x}, outputs[1] = {(uint64_t)(uintptr_t)&out};
    rt_scalar sc[1] = {{0, 0}};
    rt_args a = {&b, 1, params, sc, 1, outputs, 1, NULL};
    host_dev h = {0};
    rt_pool pool = {0};
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, NULL), TC_OK);
    assert_true(out == 7);
    assert_int_equal(h.zeros, 1);
    out = 0;
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, NULL), TC_OK);
    assert_true(out == 7);
    assert_int_equal(h.zeros, 1);
    assert_int_equal(h.allocs, 1);
    assert_int_equal(rt_step_bytes(p, 0, &b, 1), 3 * 4 + 4);
    rt_pool_release(&pool, &host_ops, &h);
}

/* Guarded steps (plan.h): neg(x) when N > 4, wsum(x) when N <= 4, both
 * writing out; the skipped one is not launched, its workspace (2^40 bytes an
 * element: no host could allocate it) not sized, its bytes 0. */
static void test_guards(void **state)
{
    (void)state;
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "g";
    p->nbufs = 2;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 2);
    p->bufs[0] = vec(PBUF_PARAM, 0, "in_x");
    p->bufs[1] = vec(PBUF_OUTPUT, 0, "out_out");
    p->nsteps = 2;
    p->steps = ARENA_ARRAY(F.a, pstep, 2);
    p->steps[0] = kstep("neg", (parg[]){abuf(1), abuf(0), adim(F.N)}, 3);
    p->steps[0].guard = F.N;
    p->steps[0].guard_max = 4;
    p->steps[0].guard_above = true;
    p->steps[1] = kstep("wsum", (parg[]){abuf(1), abuf(0), adim(F.N), {PARG_WORKSPACE, 0, NULL, 0, 0}}, 4);
    p->steps[1].ws_bytes = dim_mul(F.dc, F.N, dim_const(F.dc, (int64_t)1 << 40));
    p->steps[1].guard = F.N;
    p->steps[1].guard_max = 4;
    float x[5] = {1, 2, 4, 8, 16}, out[5] = {0};
    uint64_t params[1] = {(uint64_t)(uintptr_t)x}, outputs[1] = {(uint64_t)(uintptr_t)out};
    rt_scalar sc[1] = {{0, 0}};
    tc_diag d;
    diag_init(&d);
    /* N = 5: neg alone, and no workspace asked for */
    tc_dimbind b = {"N", 5};
    rt_args a = {&b, 1, params, sc, 1, outputs, 1, NULL};
    host_dev h = {0};
    rt_pool pool = {0};
    tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, &d);
    if (st != TC_OK)
        fail_msg("%s", d.msg);
    for (int i = 0; i < 5; i++)
        assert_true(out[i] == -x[i]);
    assert_int_equal(h.zeros, 0);
    assert_int_equal(rt_step_bytes(p, 0, &b, 1), 2 * 5 * 4);
    assert_int_equal(rt_step_bytes(p, 1, &b, 1), 0);
    rt_pool_release(&pool, &host_ops, &h);
    /* N = 3: wsum alone; its workspace is asked for now (the only
     * allocation: refused here) */
    tc_dimbind b3 = {"N", 3};
    rt_args a3 = {&b3, 1, params, sc, 1, outputs, 1, NULL};
    host_dev h3 = {.fail_alloc = true};
    rt_pool pool3 = {0};
    assert_int_equal(rt_exec(&pool3, &host_ops, &h3, (void *)KERNELS, p, &a3, NULL, NULL, &d), TC_ERR_NOMEM);
    assert_int_equal(rt_step_bytes(p, 0, &b3, 1), 0);
    rt_pool_release(&pool3, &host_ops, &h3);
    p->steps[1].ws_bytes = dim_const(F.dc, 64);
    host_dev h4 = {0};
    rt_pool pool4 = {0};
    out[0] = 0;
    out[3] = 99;
    assert_int_equal(rt_exec(&pool4, &host_ops, &h4, (void *)KERNELS, p, &a3, NULL, NULL, &d), TC_OK);
    assert_true(out[0] == 7);
    assert_true(out[3] == 99);
    rt_pool_release(&pool4, &host_ops, &h4);
    diag_release(&d);
}

/* y[B, M, N] = x[B, M, K] @ w[N, K]^T (w broadcast over B), then neg. */
static void test_matmul(void **state)
{
    (void)state;
    const int64_t B = 2, M = 3, K = 4, N = 5;
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "mm";
    p->nbufs = 4;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 4);
    p->bufs[0] = (pbuf){PBUF_PARAM, 0, -1, TC_F32, 0, NULL, dim_const(F.dc, B * M * K), 0, 0, -1, "in_x"};
    p->bufs[1] = (pbuf){PBUF_PARAM, 1, -1, TC_F32, 0, NULL, dim_const(F.dc, N * K), 0, 0, -1, "in_w"};
    p->bufs[2] = (pbuf){PBUF_TEMP, -1, -1, TC_F32, 0, NULL, dim_const(F.dc, B * M * N), 0, 1, 0, "buf2"};
    p->bufs[3] = (pbuf){PBUF_OUTPUT, 0, -1, TC_F32, 0, NULL, dim_const(F.dc, B * M * N), 0, 0, -1, "out_y"};
    p->nsteps = 2;
    p->steps = ARENA_ARRAY(F.a, pstep, 2);
    pstep mm = {.kind = PSTEP_MATMUL};
    mm.mm.a = 0;
    mm.mm.b = 1;
    mm.mm.c = 2;
    mm.mm.tb = true;
    mm.mm.m = dim_const(F.dc, M);
    mm.mm.n = dim_const(F.dc, N);
    mm.mm.k = dim_const(F.dc, K);
    mm.mm.batch = dim_const(F.dc, B);
    mm.mm.stride_a = dim_const(F.dc, M * K);
    mm.mm.stride_b = dim_const(F.dc, 0);
    mm.mm.stride_c = dim_const(F.dc, M * N);
    mm.mm.dtype = TC_F32;
    p->steps[0] = mm;
    p->steps[1] = kstep("neg", (parg[]){abuf(3), abuf(2), adim(F.N)}, 3);
    float x[2 * 3 * 4], w[5 * 4], y[2 * 3 * 5];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i % 7) - 3;
    for (int i = 0; i < 20; i++)
        w[i] = (float)(i % 5) - 1;
    tc_dimbind b = {"N", B * M * N};
    uint64_t params[2] = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)w};
    uint64_t outputs[1] = {(uint64_t)(uintptr_t)y};
    rt_scalar sc[2] = {{0, 0}, {0, 0}};
    rt_args a = {&b, 1, params, sc, 2, outputs, 1, NULL};
    host_dev h = {0};
    rt_pool pool = {0};
    tc_diag d;
    diag_init(&d);
    tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, &d);
    if (st != TC_OK)
        fail_msg("%s", d.msg);
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float s = 0;
                for (int64_t l = 0; l < K; l++)
                    s += x[bb * M * K + i * K + l] * w[j * K + l];
                assert_true(y[bb * M * N + i * N + j] == -s);
            }
    assert_int_equal(h.matmuls, 1);
    assert_int_equal(rt_step_bytes(p, 0, &b, 1), 4 * (24 + 20 + 30));
    assert_string_equal(rt_step_name(&p->steps[0]), "matmul (cuBLAS)");
    assert_string_equal(rt_step_name(&p->steps[1]), "neg");
    rt_pool_release(&pool, &host_ops, &h);
    diag_release(&d);
}

static void test_events_and_bytes(void **state)
{
    (void)state;
    tc_plan *plan = chain_plan(false);
    host_dev h = {0};
    rt_pool pool = {0};
    chain_io io;
    chain_io_init(&io, 6);
    int e[5];
    void *events[5] = {&e[0], &e[1], &e[2], &e[3], &e[4]};
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, plan, &io.args, (void *)0x9, events, NULL), TC_OK);
    assert_int_equal(h.nevents, 5);
    for (int i = 0; i < 5; i++) {
        assert_ptr_equal(h.events[i], events[i]);
        assert_ptr_equal(h.event_streams[i], (void *)0x9);
    }
    /* scale reads x and writes buf2: 2 * 6 * 4 bytes; the copy moves 24 both ways */
    assert_int_equal(rt_step_bytes(plan, 0, io.dims, 1), 48);
    assert_int_equal(rt_step_bytes(plan, 3, io.dims, 1), 48);
    assert_int_equal(rt_step_bytes(plan, 4, io.dims, 1), -1);
    assert_int_equal(rt_step_bytes(plan, 0, NULL, 0), -1);
    assert_string_equal(rt_step_name(&plan->steps[3]), "copy");
    chain_io_free(&io);
    rt_pool_release(&pool, &host_ops, &h);
}

/* Every malformed plan is TC_ERR_INTERNAL (or TC_ERR_LIMIT for a grid the
 * hardware cannot launch) with a message naming what is wrong. */
/* A foreach plan: the table in the parameter (up to FE_CAP groups), in
 * device memory past it (one upload), empty groups left out of the table
 * and the grid, nothing launched when every group is empty, and tc_run's
 * single group. */
static void test_foreach(void **state)
{
    (void)state;
    tc_plan *p = ARENA_NEW(F.a, tc_plan);
    p->fn = "fe";
    p->nbufs = 2;
    p->bufs = ARENA_ARRAY(F.a, pbuf, 2);
    p->bufs[0] = vec(PBUF_PARAM, 0, "in_x");
    p->bufs[1] = vec(PBUF_OUTPUT, 0, "out_y");
    p->nsteps = 1;
    p->steps = ARENA_ARRAY(F.a, pstep, 1);
    p->steps[0] = kstep("fe", (parg[]){{PARG_GROUPS, -1, NULL, -1, TC_DT_NONE}, ascalar(1, TC_F32)}, 2);
    pstep *st = &p->steps[0];
    st->fe_bufs = ARENA_ARRAY(F.a, int, 2);
    st->fe_bufs[0] = 0;
    st->fe_bufs[1] = 1;
    st->fe_n = 2;
    st->fe_cap = FE_CAP;
    st->fe_chunk = FE_CHUNK;
    st->fe_numel = F.N;

    enum { NG = 6 };
    static const int64_t sizes[NG] = {5, 0, 4, 9, 0, 1};
    float x[NG][9], y[NG][10];
    uint64_t gp[NG * 2], go[NG];
    int64_t numel[NG];
    for (int g = 0; g < NG; g++) {
        for (int i = 0; i < 9; i++)
            x[g][i] = (float)(g * 10 + i);
        for (int i = 0; i < 10; i++)
            y[g][i] = -1;
        gp[g * 2] = (uint64_t)(uintptr_t)x[g];
        gp[g * 2 + 1] = 0; /* the scalar */
        go[g] = (uint64_t)(uintptr_t)y[g];
        numel[g] = sizes[g];
    }
    rt_scalar sc[2] = {{0, 0}, {2, 2}};
    tc_dimbind b = {"N", 9};
    host_dev h = {0};
    rt_pool pool = {0};
    for (int round = 0; round < 2; round++) { /* 3 groups fit the parameter; all 6 do not */
        int ng = round ? NG : 3;
        rt_groups G = {ng, numel, gp, go};
        rt_args a = {&b, 1, gp, sc, 2, go, 1, &G};
        g_fe_blocks = 0;
        assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &a, NULL, NULL, NULL), TC_OK);
        int blocks = 0;
        for (int g = 0; g < ng; g++) {
            blocks += (int)((sizes[g] + FE_CHUNK - 1) / FE_CHUNK);
            for (int i = 0; i < 10; i++)
                assert_true(y[g][i] == (i < sizes[g] ? x[g][i] * 2 : -1));
        }
        assert_int_equal(g_fe_blocks, blocks);
        assert_int_equal((int)h.grid[0], blocks);
        assert_int_equal(h.uploads, round); /* the second round's table went to device memory */
        assert_int_equal(h.sizes[round][0], (2 + FE_CAP * 4) * sizeof(uint64_t));
    }

    /* only empty groups: nothing launched */
    int launches = h.launches;
    int64_t none[2] = {0, 0};
    rt_groups E = {2, none, gp, go};
    rt_args ea = {&b, 1, gp, sc, 2, go, 1, &E};
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &ea, NULL, NULL, NULL), TC_OK);
    assert_int_equal(h.launches, launches);

    /* tc_run: one group of N elements from the run's own buffers */
    float x1[7] = {1, 2, 3, 4, 5, 6, 7}, y1[7] = {0};
    uint64_t p1[2] = {(uint64_t)(uintptr_t)x1, 0}, o1[1] = {(uint64_t)(uintptr_t)y1};
    tc_dimbind b7 = {"N", 7};
    rt_args one = {&b7, 1, p1, sc, 2, o1, 1, NULL};
    assert_int_equal(rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &one, NULL, NULL, NULL), TC_OK);
    for (int i = 0; i < 7; i++)
        assert_true(y1[i] == 2 * x1[i]);
    assert_int_equal((int)h.grid[0], 2);
    assert_int_equal(rt_step_bytes(p, 0, &b7, 1), 2 * 7 * 4);
    rt_pool_release(&pool, &host_ops, &h);
}

static void test_malformed(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    struct {
        const char *what;
        tc_status st;
    } cases[] = {
        {"step 0 names buffer 9 of 5", TC_ERR_INTERNAL},
        {"uses 'Q', which has no value", TC_ERR_INTERNAL},
        {"grid dimension 1 is 70000", TC_ERR_LIMIT},
        {"buffer buf2 lives from step 3 to 1", TC_ERR_INTERNAL},
        {"buffer 1 is output 4 of 1", TC_ERR_INTERNAL},
        {"no kernel 'nope'", TC_ERR_INTERNAL},
        {"block dimension 0 = 0", TC_ERR_INTERNAL},
        {"a scalar passed as ?", TC_ERR_INTERNAL},
        {"output buffer 1 aliases buffer 2, which is not a parameter", TC_ERR_INTERNAL},
        {"scalar parameter 9 of 6", TC_ERR_INTERNAL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_plan *p = chain_plan(false);
        switch (c) {
        case 0: p->steps[0].args[0].buf = 9; break;
        case 1: p->steps[1].args[2].dim = dim_sym(F.dc, "Q"); break;
        case 2: p->steps[0].grid[1] = dim_const(F.dc, 70000); break;
        case 3: p->bufs[2].first = 3; p->bufs[2].last = 1; break;
        case 4: p->bufs[1].index = 4; break;
        case 5: p->steps[2].kernel = "nope"; break;
        case 6: p->steps[0].block[0] = 0; break;
        case 7: p->steps[0].args[3].dtype = TC_DT_NONE; break;
        case 8: p->bufs[1].alias = 2; break;
        case 9: p->steps[1].args[3].param = 9; break;
        }
        host_dev h = {0};
        rt_pool pool = {0};
        chain_io io;
        chain_io_init(&io, 3);
        tc_status st = rt_exec(&pool, &host_ops, &h, (void *)KERNELS, p, &io.args, NULL, NULL, &d);
        if (st != cases[c].st || !d.brief || !strstr(d.brief, cases[c].what))
            fail_msg("case %zu: status %d: %s", c, (int)st, d.brief ? d.brief : "(no message)");
        chain_io_free(&io);
        rt_pool_release(&pool, &host_ops, &h);
    }
    diag_release(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memplan_basic),
        cmocka_unit_test(test_memplan_random),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_cluster),
        cmocka_unit_test(test_cluster_pipe),
        cmocka_unit_test(test_colpart_pipe),
        cmocka_unit_test(test_step_idx64),
        cmocka_unit_test(test_needs_idx64),
        cmocka_unit_test(test_dim_overflow),
        cmocka_unit_test(test_inout),
        cmocka_unit_test(test_workspace),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_guards),
        cmocka_unit_test(test_events_and_bytes),
        cmocka_unit_test(test_foreach),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
