/* trace.c - recording a run's launches and enqueueing them again; see
 * trace.h.  The recording is an rt_ops table wrapped around rt_ops_cuda:
 * rt_exec does all the work as for any run, and the wrapper keeps what it
 * hands the driver. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

typedef struct {
    struct tc_rt *rt;
    rt_trace *t;
    bool execute;
} recorder;

static rt_launch *add_launch(rt_trace *t)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 4;
        rt_launch *l = realloc(t->l, (size_t)cap * sizeof *l);
        if (!l)
            return NULL;
        t->l = l;
        t->cap = cap;
    }
    rt_launch *l = &t->l[t->n++];
    memset(l, 0, sizeof *l);
    return l;
}

/* The values of nargs arguments, copied; argv rebuilt (vals may move). */
static bool add_args(rt_trace *t, void **args, const size_t *sizes, int nargs)
{
    size_t need = t->nvals;
    for (int i = 0; i < nargs; i++)
        need += (sizes[i] + 15) & ~(size_t)15;
    if (need > t->capvals) {
        size_t cap = need < 256 ? 256 : 2 * need;
        unsigned char *v = realloc(t->vals, cap);
        if (!v)
            return false;
        t->vals = v;
        t->capvals = cap;
    }
    if (t->nargv + nargs > t->capargv) {
        int cap = 2 * (t->nargv + nargs) + 8;
        void **a = realloc(t->argv, (size_t)cap * sizeof *a);
        size_t *at = a ? realloc(t->val_at, (size_t)cap * sizeof *at) : NULL;
        if (a)
            t->argv = a;
        if (!at)
            return false;
        t->val_at = at;
        t->capargv = cap;
    }
    for (int i = 0; i < nargs; i++) {
        memcpy(t->vals + t->nvals, args[i], sizes[i]);
        t->val_at[t->nargv + i] = t->nvals;
        t->nvals += (sizes[i] + 15) & ~(size_t)15;
    }
    t->nargv += nargs;
    for (int i = 0; i < t->nargv; i++)
        t->argv[i] = t->vals + t->val_at[i];
    return true;
}

static tc_status r_alloc(void *dev, size_t bytes, uint64_t *ptr, tc_diag *d)
{
    return rt_ops_cuda.alloc(((recorder *)dev)->rt, bytes, ptr, d);
}
static void r_release(void *dev, uint64_t ptr) { rt_ops_cuda.release(((recorder *)dev)->rt, ptr); }
static tc_status r_sync(void *dev, tc_diag *d) { return rt_ops_cuda.sync(((recorder *)dev)->rt, d); }
static tc_status r_zero(void *dev, uint64_t ptr, size_t bytes, void *stream, tc_diag *d)
{
    return rt_ops_cuda.zero(((recorder *)dev)->rt, ptr, bytes, stream, d);
}
static tc_status r_upload(void *dev, uint64_t dst, const void *src, size_t bytes, void *stream,
                          tc_diag *d)
{
    return rt_ops_cuda.upload(((recorder *)dev)->rt, dst, src, bytes, stream, d);
}
static tc_status r_record(void *dev, void *event, void *stream, tc_diag *d)
{
    return rt_ops_cuda.record(((recorder *)dev)->rt, event, stream, d);
}
static tc_status r_kernel(void *dev, void *module, const char *name, void **fn, tc_diag *d)
{
    return rt_ops_cuda.kernel(((recorder *)dev)->rt, module, name, fn, d);
}

static tc_status r_copy(void *dev, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                        tc_diag *d)
{
    recorder *r = dev;
    rt_launch *l = add_launch(r->t);
    if (!l)
        r->t->failed = true;
    else
        *l = (rt_launch){.copy = true, .dst = dst, .src = src, .bytes = bytes};
    return r->execute ? rt_ops_cuda.copy(r->rt, dst, src, bytes, stream, d) : TC_OK;
}

static tc_status r_launch(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                          unsigned cluster, unsigned shmem, void **args, const size_t *sizes,
                          int nargs, void *stream, tc_diag *d)
{
    recorder *r = dev;
    rt_kernel *k = fn;
    tc_status st = rt_kernel_check(k, sizes, nargs, d);
    if (st != TC_OK)
        return st;
    int at = r->t->nargv;
    rt_launch *l = add_launch(r->t);
    if (!l || !add_args(r->t, args, sizes, nargs)) {
        r->t->failed = true;
    } else {
        *l = (rt_launch){.fn = k->fn, .cluster = cluster, .shmem = shmem, .nargs = nargs, .argv_at = at};
        memcpy(l->grid, grid, sizeof l->grid);
        memcpy(l->block, block, sizeof l->block);
    }
    return r->execute ? drv_launch_cluster(k->fn, grid, block, cluster, shmem, stream, args, d) : TC_OK;
}

/* The device's cluster limits, so a recorded run launches what an unrecorded
 * one would (the same blocks, the same bits). */
static unsigned r_clusters(void *dev, unsigned *min_block)
{
    return rt_ops_cuda.clusters(((recorder *)dev)->rt, min_block);
}

static unsigned r_resident(void *dev, void *fn, const unsigned block[3], unsigned cluster, unsigned shmem)
{
    return rt_ops_cuda.resident(((recorder *)dev)->rt, fn, block, cluster, shmem);
}

static tc_status r_matmul(void *dev, const blas_mm *mm, void *stream, tc_diag *d)
{
    recorder *r = dev;
    r->t->replayable = false;
    r->t->why = "a matmul (cuBLAS)";
    if (!r->execute)
        return SET(d, TC_ERR_UNSUPPORTED, "the plan calls cuBLAS for a matmul, which tensorc does "
                   "not capture yet (tc_run runs it)");
    return rt_ops_cuda.matmul(r->rt, mm, stream, d);
}

static const rt_ops recording_ops = {
    .alloc = r_alloc,
    .release = r_release,
    .sync = r_sync,
    .zero = r_zero,
    .copy = r_copy,
    .kernel = r_kernel,
    .launch = r_launch,
    .clusters = r_clusters,
    .resident = r_resident,
    .matmul = r_matmul,
    .record = r_record,
    .upload = r_upload,
};

/* Which recorded arguments are scalar parameters: the k-th kernel launch
 * is the plan's k-th kernel step (rt_exec goes in order, and skips a
 * kernel only when a foreach run has no element at all: no launch then). */
static bool find_patches(rt_trace *t, const tc_plan *plan, const rt_args *a)
{
    t->npatches = 0;
    int kernels = 0;
    for (int i = 0; i < t->n; i++)
        kernels += !t->l[i].copy;
    if (kernels == 0)
        return true; /* nothing launched (the empty foreach run): nothing to patch */
    int k = 0;
    for (int s = 0; s < plan->nsteps; s++) {
        const pstep *S = &plan->steps[s];
        if (S->kind != PSTEP_KERNEL)
            continue;
        bool runs;
        tc_diag d;
        diag_init(&d);
        if (rt_step_runs(plan, s, a, &runs, &d) != TC_OK)
            return false;
        if (!runs) /* guarded off at these sizes (plan.h): it launched nothing */
            continue;
        while (k < t->n && t->l[k].copy)
            k++;
        if (k == t->n)
            return false;
        const rt_launch *l = &t->l[k++];
        if (l->nargs != S->nargs)
            return false;
        for (int i = 0; i < S->nargs; i++) {
            if (S->args[i].kind != PARG_SCALAR)
                continue;
            if (t->npatches == t->cappatches) {
                int cap = t->cappatches ? 2 * t->cappatches : 8;
                rt_patch *p = realloc(t->patches, (size_t)cap * sizeof *p);
                if (!p)
                    return false;
                t->patches = p;
                t->cappatches = cap;
            }
            t->patches[t->npatches++] = (rt_patch){l->argv_at + i, S->args[i].param, S->args[i].dtype};
        }
    }
    while (k < t->n && t->l[k].copy)
        k++;
    return k == t->n;
}

size_t rt_patch_size(tc_dtype dtype)
{
    switch (dtype) {
    case TC_F64: case TC_I64: return 8;
    case TC_BOOL: return 1;
    default: return 4;
    }
}

void rt_trace_set_scalars(rt_trace *t, const rt_scalar *scalars)
{
    for (int i = 0; i < t->npatches; i++) {
        const rt_patch *p = &t->patches[i];
        const rt_scalar *s = &scalars[p->param];
        unsigned char *v = t->vals + t->val_at[p->argv];
        /* as exec.c's pack_arg */
        switch (p->dtype) {
        case TC_F32: case TC_F16: case TC_BF16: { float x = (float)s->f; memcpy(v, &x, sizeof x); break; }
        case TC_F64: memcpy(v, &s->f, sizeof s->f); break;
        case TC_I32: { int32_t x = (int32_t)s->i; memcpy(v, &x, sizeof x); break; }
        case TC_I64: { long long x = (long long)s->i; memcpy(v, &x, sizeof x); break; }
        case TC_BOOL: *v = s->i != 0; break;
        default: break;
        }
    }
}

tc_status rt_run_traced(struct tc_rt *rt, rt_pool *pool, rt_module *mod, const tc_plan *plan,
                        const rt_args *a, void *stream, bool execute, rt_trace *t, tc_diag *d)
{
    t->n = 0;
    t->nvals = 0;
    t->nargv = 0;
    t->replayable = true;
    t->failed = false;
    t->why = NULL;
    recorder r = {rt, t, execute};
    tc_status st = rt_exec(pool, &recording_ops, &r, mod, plan, a, stream, NULL, d);
    if (t->failed) {
        t->replayable = false;
        t->why = "out of memory while recording";
    }
    if (st == TC_OK && t->replayable && !find_patches(t, plan, a)) {
        t->replayable = false;
        t->why = "launches that do not follow the plan's kernel steps";
    }
    if (st != TC_OK)
        t->replayable = false;
    t->pool = pool;
    t->pool_gen = pool->gen;
    t->uses_pool = pool->last_used;
    t->stream = stream;
    return st;
}

bool rt_trace_valid(const rt_trace *t, void *stream)
{
    return t->replayable && t->pool && t->pool_gen == t->pool->gen &&
           (!t->uses_pool || t->pool->stream == stream);
}

tc_status rt_trace_run(struct tc_rt *rt, const rt_trace *t, void *stream, tc_diag *d)
{
    /* one push for the lot (none when the caller's context is current) */
    bool pushed = drv_enter(rt->dev);
    tc_status st = TC_OK;
    for (int i = 0; i < t->n && st == TC_OK; i++) {
        const rt_launch *l = &t->l[i];
        st = l->copy ? drv_memcpy_dtod_async(rt->dev, l->dst, l->src, l->bytes, stream, d)
                     : drv_launch_cluster(l->fn, l->grid, l->block, l->cluster, l->shmem, stream,
                                          t->argv + l->argv_at, d);
    }
    drv_leave(pushed);
    return st;
}

void rt_trace_free(rt_trace *t)
{
    free(t->l);
    free(t->vals);
    free(t->val_at);
    free(t->argv);
    free(t->patches);
    memset(t, 0, sizeof *t);
}
