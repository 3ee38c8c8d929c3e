/* exec.c - rt_exec: one launch plan, step by step, on the caller's stream.
 *
 * The order of work (see exec.h for the contract):
 *
 *   1. every dim the plan needs is evaluated with the caller's bindings;
 *   2. each buffer gets an address: parameters and outputs from the caller
 *      (an in-place inout output takes its parameter's), scratch outputs and
 *      temporaries an offset in the pool's block (memplan.h);
 *   3. the pool grows if this run needs more (waiting for the device
 *      first), and waits for the device when the stream changed;
 *   4. each step is enqueued: kernels with their arguments packed into
 *      typed slots, matmuls through ops->matmul, copies through ops->copy.
 *
 * A malformed plan (a buffer id out of range, an unbound symbol, a dim that
 * does not fit the 32-bit plan) is TC_ERR_INTERNAL with a message naming
 * the step, never a crash: the plan comes from codegen, and a bug there
 * should read as one.
 */
#include "exec.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

/* The pool grows to at least this much, and by half again, so a run with
 * slightly larger sizes does not free and reallocate every time. */
#define POOL_MIN_BYTES ((uint64_t)1 << 20)

/* A foreach kernel's buffers (its table's addresses per group), at most. */
#define TC_FE_MAX_BUFS 64

static tc_status eval(const tc_plan *plan, const tc_dim *dim, const rt_args *a, const char *what,
                      int step, int64_t *v, tc_diag *d)
{
    const char *unbound = NULL;
    if (!dim)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: %s is missing", plan->fn, step, what);
    if (!dim_eval(dim, a->dims, a->ndims, v, &unbound))
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: %s uses '%s', which has no value",
                   plan->fn, step, what, unbound ? unbound : "?");
    return TC_OK;
}

/* Whether step s runs at these sizes (plan.h's guards). */
tc_status rt_step_runs(const tc_plan *plan, int s, const rt_args *a, bool *runs, tc_diag *d)
{
    const pstep *S = &plan->steps[s];
    int64_t v;
    *runs = true;
    if (!S->guard)
        return TC_OK;
    tc_status st = eval(plan, S->guard, a, "the step's guard", s, &v, d);
    *runs = rt_guard_passes(S, v);
    return st;
}

/* --- host scratch ------------------------------------------------------------- */

static bool grow_bufs(rt_pool *p, int n)
{
    if (n <= p->cap_bufs)
        return true;
    int cap = n < 16 ? 16 : n;
    uint64_t *addr = realloc(p->addr, (size_t)cap * sizeof *addr);
    if (addr)
        p->addr = addr;
    int *item_buf = realloc(p->item_buf, (size_t)cap * sizeof *item_buf);
    if (item_buf)
        p->item_buf = item_buf;
    mp_item *items = realloc(p->items, (size_t)cap * sizeof *items);
    if (items)
        p->items = items;
    uint64_t *offsets = realloc(p->offsets, (size_t)cap * sizeof *offsets);
    if (offsets)
        p->offsets = offsets;
    if (!addr || !item_buf || !items || !offsets)
        return false;
    p->cap_bufs = cap;
    return true;
}

static bool grow_args(rt_pool *p, int n)
{
    if (n <= p->cap_args)
        return true;
    int cap = n < 16 ? 16 : n;
    rt_argval *vals = realloc(p->vals, (size_t)cap * sizeof *vals);
    if (vals)
        p->vals = vals;
    void **argv = realloc(p->argv, (size_t)cap * sizeof *argv);
    if (argv)
        p->argv = argv;
    size_t *sizes = realloc(p->sizes, (size_t)cap * sizeof *sizes);
    if (sizes)
        p->sizes = sizes;
    if (!vals || !argv || !sizes)
        return false;
    p->cap_args = cap;
    return true;
}

/* --- device memory ------------------------------------------------------------- */

/* Make sure *ptr holds at least need bytes: wait for the device, free and
 * allocate more.  *fresh says whether it was (re)allocated. */
static tc_status ensure(const rt_ops *ops, void *dev, uint64_t *ptr, uint64_t *have, uint64_t need,
                        bool *fresh, tc_diag *d)
{
    *fresh = false;
    if (need <= *have)
        return TC_OK;
    if (*ptr) {
        tc_status st = ops->sync(dev, d); /* earlier runs may still be using it */
        if (st != TC_OK)
            return st;
        ops->release(dev, *ptr);
        *ptr = 0;
        *have = 0;
    }
    uint64_t want = need < POOL_MIN_BYTES ? POOL_MIN_BYTES : need + need / 2;
    tc_status st = ops->alloc(dev, want, ptr, NULL);
    if (st != TC_OK) { /* the slack is optional */
        *ptr = 0;
        want = need;
        st = ops->alloc(dev, want, ptr, d);
    }
    if (st != TC_OK) {
        *ptr = 0;
        return st;
    }
    *have = want;
    *fresh = true;
    return TC_OK;
}

void rt_pool_release(rt_pool *p, const rt_ops *ops, void *dev)
{
    if (p->block || p->ws || p->fe_dev)
        (void)ops->sync(dev, NULL);
    if (p->block)
        ops->release(dev, p->block);
    if (p->ws)
        ops->release(dev, p->ws);
    if (p->fe_dev)
        ops->release(dev, p->fe_dev);
    free(p->fe_words);
    free(p->addr);
    free(p->item_buf);
    free(p->items);
    free(p->offsets);
    free(p->vals);
    free(p->argv);
    free(p->sizes);
    unsigned gen = p->gen;
    memset(p, 0, sizeof *p);
    p->gen = gen + 1; /* what a trace recorded against is gone */
}

/* --- steps 1-3: addresses -------------------------------------------------------- */

static tc_status resolve(rt_pool *p, const rt_ops *ops, void *dev, const tc_plan *plan,
                         const rt_args *a, void *stream, tc_diag *d)
{
    if (!grow_bufs(p, plan->nbufs))
        return SET(d, TC_ERR_NOMEM, "out of memory");
    int nitems = 0;
    /* parameters first: in-place outputs refer to them */
    for (int b = 0; b < plan->nbufs; b++) {
        const pbuf *B = &plan->bufs[b];
        p->addr[b] = 0;
        if (B->kind != PBUF_PARAM)
            continue;
        if (B->index < 0 || B->index >= a->nparams)
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': buffer %d is parameter %d of %d",
                       plan->fn, b, B->index, a->nparams);
        p->addr[b] = a->params[B->index];
        if (!p->addr[b])
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': buffer %s (parameter %d) has no memory",
                       plan->fn, B->name ? B->name : "?", B->index);
    }
    for (int b = 0; b < plan->nbufs; b++) {
        const pbuf *B = &plan->bufs[b];
        if (B->kind == PBUF_PARAM)
            continue;
        if (B->kind == PBUF_OUTPUT && (B->index < 0 || B->index >= a->noutputs))
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': buffer %d is output %d of %d", plan->fn,
                       b, B->index, a->noutputs);
        if (B->kind == PBUF_OUTPUT && B->alias >= 0) {
            if (B->alias >= plan->nbufs || plan->bufs[B->alias].kind != PBUF_PARAM)
                return SET(d, TC_ERR_INTERNAL, "plan of '%s': output buffer %d aliases buffer %d, "
                           "which is not a parameter", plan->fn, b, B->alias);
            p->addr[b] = p->addr[B->alias];
            continue;
        }
        if (B->kind == PBUF_OUTPUT && a->outputs[B->index]) {
            p->addr[b] = a->outputs[B->index];
            continue;
        }
        /* a temporary, or an output the caller has no memory for: scratch */
        int64_t bytes = rt_buf_bytes(plan, b, a->dims, a->ndims);
        if (bytes < 0)
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': the size of buffer %s cannot be "
                       "evaluated", plan->fn, B->name ? B->name : "?");
        int first = 0, last = plan->nsteps;
        if (B->kind == PBUF_TEMP) {
            if (B->first < 0 || B->last < B->first || B->last >= plan->nsteps)
                return SET(d, TC_ERR_INTERNAL, "plan of '%s': buffer %s lives from step %d to %d "
                           "of %d", plan->fn, B->name ? B->name : "?", B->first, B->last,
                           plan->nsteps);
            first = B->first;
            last = B->last;
        }
        p->items[nitems] = (mp_item){(uint64_t)bytes, first, last};
        p->item_buf[nitems++] = b;
    }

    uint64_t total = 0;
    if (!memplan(p->items, nitems, p->offsets, &total))
        return SET(d, TC_ERR_NOMEM, "out of memory");
    uint64_t ws = 0;
    for (int s = 0; s < plan->nsteps; s++) {
        const pstep *S = &plan->steps[s];
        int64_t v;
        bool runs;
        if (S->kind != PSTEP_KERNEL || !S->ws_bytes)
            continue;
        tc_status st = rt_step_runs(plan, s, a, &runs, d);
        if (st == TC_OK && !runs)
            continue;
        if (st == TC_OK)
            st = eval(plan, S->ws_bytes, a, "the workspace size", s, &v, d);
        if (st != TC_OK)
            return st;
        if (v > 0 && (uint64_t)v > ws)
            ws = (uint64_t)v;
    }

    /* Another stream may still be using the pool: wait for the device. */
    if (p->used && (total || ws) && stream != p->stream) {
        tc_status st = ops->sync(dev, d);
        if (st != TC_OK)
            return st;
    }
    bool fresh, fresh_ws = false;
    tc_status st = ensure(ops, dev, &p->block, &p->block_bytes, total, &fresh, d);
    p->gen += fresh;
    if (st == TC_OK)
        st = ensure(ops, dev, &p->ws, &p->ws_bytes, ws, &fresh_ws, d);
    p->gen += fresh_ws;
    if (st == TC_OK && fresh_ws)
        st = ops->zero(dev, p->ws, p->ws_bytes, stream, d); /* kernels keep it zero afterwards */
    if (st != TC_OK)
        return st;
    if (total || ws) {
        p->used = true;
        p->stream = stream;
    }
    p->last_used = total || ws;
    for (int i = 0; i < nitems; i++)
        p->addr[p->item_buf[i]] = p->block + p->offsets[i];
    return TC_OK;
}

/* --- step 4 ---------------------------------------------------------------------- */

static tc_status buf_addr(const rt_pool *p, const tc_plan *plan, int b, int step, uint64_t *out,
                          tc_diag *d)
{
    if (b < 0 || b >= plan->nbufs)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d names buffer %d of %d", plan->fn,
                   step, b, plan->nbufs);
    *out = p->addr[b];
    return TC_OK;
}

static tc_status pack_arg(rt_pool *p, const tc_plan *plan, const parg *g, const rt_args *a,
                          int step, rt_argval *v, size_t *size, tc_diag *d)
{
    /* sizes are long long in a 64-bit plan, and in a kernel that asks for
     * them (its index arithmetic can pass 2^31 even when every size fits) */
    bool wide = plan->idx64 || plan->steps[step].idx64;
    int64_t x;
    tc_status st;
    memset(v, 0, sizeof *v);
    *size = sizeof(void *);
    switch (g->kind) {
    case PARG_BUF:
        return buf_addr(p, plan, g->buf, step, &v->ptr, d);
    case PARG_WORKSPACE:
        v->ptr = p->ws;
        return TC_OK;
    case PARG_GROUPS: /* packed by pack_groups */
        return TC_OK;
    case PARG_DIM:
        if ((st = eval(plan, g->dim, a, "a size argument", step, &x, d)) != TC_OK)
            return st;
        *size = wide ? sizeof(long long) : sizeof(int32_t);
        if (wide) {
            v->i64 = (long long)x;
        } else if (x < INT32_MIN || x > INT32_MAX) {
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: a size argument is %lld, which "
                       "does not fit the 32-bit plan (its limits should have asked for idx64)",
                       plan->fn, step, (long long)x);
        } else {
            v->i32 = (int32_t)x;
        }
        return TC_OK;
    case PARG_SCALAR: {
        if (g->param < 0 || g->param >= a->nparams)
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: scalar parameter %d of %d",
                       plan->fn, step, g->param, a->nparams);
        const rt_scalar *s = &a->scalars[g->param];
        switch (g->dtype) {
        case TC_F32: case TC_F16: case TC_BF16:
            v->f32 = (float)s->f;
            *size = sizeof(float);
            return TC_OK;
        case TC_F64: v->f64 = s->f; *size = sizeof(double); return TC_OK;
        case TC_I32: v->i32 = (int32_t)s->i; *size = sizeof(int32_t); return TC_OK;
        case TC_I64: v->i64 = (long long)s->i; *size = sizeof(long long); return TC_OK;
        case TC_BOOL: v->b = s->i != 0; *size = 1; return TC_OK;
        default: break;
        }
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: a scalar passed as %s",
                   plan->fn, step, dtype_name(g->dtype));
    }
    }
    return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: an argument of unknown kind", plan->fn,
               step);
}

/* Where buffer b's address in group g is: src[g * *stride]; NULL when b is
 * not a parameter or an output. */
static const uint64_t *group_src(const rt_pool *p, const tc_plan *plan, const rt_args *a, int b,
                                 size_t *stride)
{
    const rt_groups *G = a->groups;
    *stride = 0;
    if (b < 0 || b >= plan->nbufs)
        return NULL;
    if (!G)
        return &p->addr[b];
    const pbuf *B = &plan->bufs[b];
    if (B->kind == PBUF_OUTPUT && B->alias >= 0 && B->alias < plan->nbufs)
        B = &plan->bufs[B->alias];
    if (B->kind == PBUF_PARAM && B->index >= 0 && B->index < a->nparams) {
        *stride = (size_t)a->nparams;
        return G->params + B->index;
    }
    if (B->kind == PBUF_OUTPUT && B->index >= 0 && B->index < a->noutputs) {
        *stride = (size_t)a->noutputs;
        return G->outputs + B->index;
    }
    return NULL;
}

/* A foreach kernel's group table (plan.h, PARG_GROUPS) into p->fe_words,
 * uploading the groups when the parameter cannot hold them; *blocks is the
 * grid.  The parameter is always its full size: the kernel's is fixed. */
static tc_status pack_groups(rt_pool *p, const rt_ops *ops, void *dev, const tc_plan *plan,
                             const rt_args *a, int step, void *stream, size_t *bytes,
                             int64_t *blocks, tc_diag *d)
{
    const pstep *S = &plan->steps[step];
    int ng = a->groups ? a->groups->n : 1;
    if (S->fe_n < 1 || S->fe_cap < 1 || S->fe_chunk < 1 || !S->fe_bufs)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d has a malformed group table",
                   plan->fn, step);
    size_t per = (size_t)S->fe_n + 2;
    size_t param_words = 2 + (size_t)S->fe_cap * per;
    size_t need = param_words > 2 + (size_t)ng * per ? param_words : 2 + (size_t)ng * per;
    if (need > p->cap_fe_words) {
        uint64_t *w = calloc(need, sizeof *w); /* never-sent slots stay defined */
        if (!w)
            return SET(d, TC_ERR_NOMEM, "out of memory");
        free(p->fe_words);
        p->fe_words = w;
        p->cap_fe_words = need;
    }
    uint64_t *row = p->fe_words + 2;
    int64_t count = 0, total = 0;
    /* where each table buffer's address comes from, found once: this loop
     * runs for every tensor of every call (thousands, for an optimizer) */
    const uint64_t *src[TC_FE_MAX_BUFS];
    size_t stride[TC_FE_MAX_BUFS];
    if (S->fe_n > TC_FE_MAX_BUFS)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d has %d group buffers", plan->fn, step,
                   S->fe_n);
    for (int k = 0; k < S->fe_n; k++)
        if (!(src[k] = group_src(p, plan, a, S->fe_bufs[k], &stride[k])))
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d: group buffer %d is neither a "
                       "parameter nor an output", plan->fn, step, S->fe_bufs[k]);
    /* chunks are a power of two: no division per group */
    int shift = (S->fe_chunk & (S->fe_chunk - 1)) == 0
                    ? __builtin_ctzll((unsigned long long)S->fe_chunk) : -1;
    for (int g = 0; g < ng; g++) {
        int64_t n;
        if (a->groups) {
            n = a->groups->numel[g];
        } else {
            tc_status st = eval(plan, S->fe_numel, a, "the element count", step, &n, d);
            if (st != TC_OK)
                return st;
        }
        if (n <= 0)
            continue; /* an empty group has no blocks, and is not in the table */
        for (int k = 0; k < S->fe_n; k++)
            if (!(row[k] = src[k][(size_t)g * stride[k]]))
                return SET(d, TC_ERR_INTERNAL, "plan of '%s': foreach buffer %s has no memory in "
                           "group %d", plan->fn, plan->bufs[S->fe_bufs[k]].name
                                                    ? plan->bufs[S->fe_bufs[k]].name : "?", g);
        row[S->fe_n] = (uint64_t)n;
        row[S->fe_n + 1] = (uint64_t)total;
        total += shift >= 0 ? (n + S->fe_chunk - 1) >> shift : (n + S->fe_chunk - 1) / S->fe_chunk;
        if (total > INT32_MAX)
            return SET(d, TC_ERR_LIMIT, "kernel %s: the groups need %lld blocks (CUDA allows "
                       "2^31 - 1)", S->kernel, (long long)total);
        row += per;
        count++;
    }
    p->fe_words[0] = 0;
    p->fe_words[1] = (uint64_t)count;
    *bytes = param_words * sizeof(uint64_t);
    *blocks = total;
    if (count <= S->fe_cap || total == 0)
        return TC_OK;
    /* too many for the parameter: the groups go to device memory first */
    uint64_t up = (uint64_t)count * per * sizeof(uint64_t);
    tc_status st;
    if (p->used && stream != p->stream && (st = ops->sync(dev, d)) != TC_OK)
        return st;
    bool fresh;
    p->gen++; /* the table's contents change (a trace holding the old one must not reuse it) */
    if ((st = ensure(ops, dev, &p->fe_dev, &p->fe_dev_bytes, up, &fresh, d)) != TC_OK ||
        (st = ops->upload(dev, p->fe_dev, p->fe_words + 2, (size_t)up, stream, d)) != TC_OK)
        return st;
    p->used = true;
    p->last_used = true;
    p->stream = stream;
    p->fe_words[0] = p->fe_dev;
    return TC_OK;
}

/* TENSORC_ROWS_PIPE (plan.h's pipe): a rows kernel launched in clusters
 * takes its rows in turn, each cluster prefetching its next row into
 * pipe bytes a thread of dynamic shared memory (codegen/rows.c): as many
 * clusters as the device holds at once (more would wait for a whole
 * cluster's rows), at most one a row.  Each row is still one cluster's,
 * its elements a thread the same: the bits do not depend on the grid. */
static void persistent(const rt_ops *ops, void *dev, void *fn, const pstep *S, unsigned rows, unsigned grid[3],
                       const unsigned block[3], unsigned cluster, unsigned *shmem)
{
    *shmem = (unsigned)S->pipe * block[0];
    unsigned res = ops->resident ? ops->resident(dev, fn, block, cluster, *shmem) : 0;
    if (res > 0 && res < rows)
        grid[0] = res * cluster;
}

static tc_status run_kernel(rt_pool *p, const rt_ops *ops, void *dev, void *module,
                            const tc_plan *plan, const rt_args *a, int step, void *stream,
                            tc_diag *d)
{
    const pstep *S = &plan->steps[step];
    if (!S->kernel)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d is a kernel with no name", plan->fn,
                   step);
    if (S->nargs < 0 || (S->nargs && !S->args) || !grow_args(p, S->nargs))
        return SET(d, S->nargs < 0 || (S->nargs && !S->args) ? TC_ERR_INTERNAL : TC_ERR_NOMEM,
                   "%s", S->nargs < 0 || (S->nargs && !S->args) ? "malformed kernel arguments"
                                                                 : "out of memory");
    int64_t fe_blocks = -1;
    for (int i = 0; i < S->nargs; i++) {
        tc_status st = pack_arg(p, plan, &S->args[i], a, step, &p->vals[i], &p->sizes[i], d);
        if (st != TC_OK)
            return st;
        p->argv[i] = &p->vals[i];
        if (S->args[i].kind == PARG_GROUPS) {
            if ((st = pack_groups(p, ops, dev, plan, a, step, stream, &p->sizes[i], &fe_blocks, d)) != TC_OK)
                return st;
            p->argv[i] = p->fe_words;
        }
    }
    if (a->groups && fe_blocks < 0)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': a run over groups, but kernel %s takes no "
                   "group table", plan->fn, S->kernel);
    if (fe_blocks == 0)
        return TC_OK; /* every group is empty */
    unsigned grid[3], block[3];
    for (int k = 0; k < 3; k++) {
        int64_t g = 1;
        if (S->grid[k]) {
            tc_status st = eval(plan, S->grid[k], a, "the grid", step, &g, d);
            if (st != TC_OK)
                return st;
        }
        if (k == 0 && fe_blocks > 0) {
            g = fe_blocks; /* a foreach grid: every chunk of every group */
        } else if (k == 0) {
            /* kernels loop over their work: a clamped grid is still right */
            int64_t cap = S->grid_cap > 0 && S->grid_cap < INT32_MAX ? S->grid_cap : INT32_MAX;
            g = g < 1 ? 1 : g > cap ? cap : g;
        } else if (g < 1 || g > 65535) {
            return SET(d, TC_ERR_LIMIT, "kernel %s: grid dimension %d is %lld (CUDA allows 1 to "
                       "65535)", S->kernel, k, (long long)g);
        }
        grid[k] = (unsigned)g;
        if (S->block[k] < 1 || S->block[k] > 1024)
            return SET(d, TC_ERR_INTERNAL, "plan of '%s': kernel %s has block dimension %d = %d",
                       plan->fn, S->kernel, k, S->block[k]);
        block[k] = (unsigned)S->block[k];
    }
    unsigned cluster = 1;
    if (S->block_len && S->block_per > 0) {
        /* a row kernel: the block fits the row, so short rows keep most threads busy */
        int64_t len;
        tc_status st = eval(plan, S->block_len, a, "the block's row length", step, &len, d);
        if (st != TC_OK)
            return st;
        /* a row past one block's registers: split across a cluster
         * (sched.h, "Clusters").  Blocks of min_block threads first (several
         * a SM, so one block's loads overlap another's exchange), the
         * fewest (a power of two) whose registers hold the row; if more
         * than the cluster allows, larger blocks; past 1024-thread blocks,
         * the most, whose runs loop.  From the length alone: batch-invariant. */
        unsigned minb = 1024;
        unsigned most = S->cluster > 1 && ops->clusters ? ops->clusters(dev, &minb) : 1;
        if ((int64_t)most > S->cluster)
            most = (unsigned)S->cluster;
        if (most > 1 && len > (int64_t)block[0] * S->block_per) {
            /* the portable 8 blocks first, then 16 (a 16-block cluster takes
             * 16 SMs of one GPC at once: fewer fit the GPU), each with blocks
             * of up to 512 threads (two or three a SM: one's loads overlap
             * another's exchange), then the same with the largest blocks.
             * H200, rmsnorm bf16 256 x 262144: 16 x 512 121.3 us, 8 x 1024
             * 144.0 (tc-bench, TENSORC_ROWS_BLOCK A/B) */
            unsigned portable = most < 8 ? most : 8;
            unsigned b0 = minb < 32 || minb > block[0] ? block[0] : minb, b;
            for (int tries = 0; tries < 4; tries++) {
                unsigned cap = tries % 2 == 0 ? portable : most;
                unsigned bmax = tries < 2 && block[0] > 512 ? 512 : block[0];
                if (b0 > bmax)
                    continue;
                for (b = b0;; b *= 2) {
                    cluster = 1;
                    while (cluster < cap && len > (int64_t)b * S->block_per * cluster)
                        cluster *= 2;
                    if (len <= (int64_t)b * S->block_per * cluster || b >= bmax)
                        break;
                }
                if (len <= (int64_t)b * S->block_per * cluster)
                    break;
            }
            int64_t rows = grid[0] > INT32_MAX / cluster ? INT32_MAX / cluster : grid[0];
            grid[0] = (unsigned)(rows * cluster);
            len = (len + cluster - 1) / cluster;
        }
        int64_t want = (len + S->block_per - 1) / S->block_per;
        unsigned b = 32;
        while (b < block[0] && (int64_t)b < want)
            b *= 2;
        block[0] = b < block[0] ? b : block[0];
    }
    void *fn = NULL;
    tc_status st = ops->kernel(dev, module, S->kernel, &fn, d);
    if (st != TC_OK)
        return st;
    unsigned rows = grid[0] / cluster, shmem = (unsigned)S->shmem;
    if (S->pipe > 0 && cluster > 1)
        persistent(ops, dev, fn, S, rows, grid, block, cluster, &shmem);
    else if (S->pipe > 0 && !S->cluster) /* column partials' prefetch: the grid as planned */
        shmem = (unsigned)S->pipe * block[0];
    st = ops->launch(dev, fn, grid, block, cluster, shmem, p->argv, p->sizes, S->nargs, stream, d);
    if (st != TC_OK && cluster > 8) {
        /* past the portable 8 a device may not place the cluster (its GPCs
         * too small, a MIG slice): the portable 8 of the largest blocks,
         * whose slices loop (correct, slower; the same on every call) */
        diag_clear(d);
        grid[0] = rows * 8;
        block[0] = (unsigned)S->block[0];
        shmem = (unsigned)S->shmem;
        if (S->pipe > 0)
            persistent(ops, dev, fn, S, rows, grid, block, 8, &shmem);
        st = ops->launch(dev, fn, grid, block, 8, shmem, p->argv, p->sizes, S->nargs, stream, d);
    }
    return st;
}

static tc_status run_matmul(rt_pool *p, const rt_ops *ops, void *dev, const tc_plan *plan,
                            const rt_args *a, int step, void *stream, tc_diag *d)
{
    const pstep *S = &plan->steps[step];
    blas_mm mm = {.dtype = S->mm.dtype, .ta = S->mm.ta, .tb = S->mm.tb};
    struct { const tc_dim *dim; int64_t *out; const char *what; } dims[] = {
        {S->mm.m, &mm.m, "matmul m"}, {S->mm.n, &mm.n, "matmul n"}, {S->mm.k, &mm.k, "matmul k"},
        {S->mm.batch, &mm.batch, "matmul batch"}, {S->mm.stride_a, &mm.stride_a, "stride_a"},
        {S->mm.stride_b, &mm.stride_b, "stride_b"}, {S->mm.stride_c, &mm.stride_c, "stride_c"},
    };
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
        tc_status st = eval(plan, dims[i].dim, a, dims[i].what, step, dims[i].out, d);
        if (st != TC_OK)
            return st;
    }
    tc_status st;
    if ((st = buf_addr(p, plan, S->mm.a, step, &mm.a, d)) != TC_OK ||
        (st = buf_addr(p, plan, S->mm.b, step, &mm.b, d)) != TC_OK ||
        (st = buf_addr(p, plan, S->mm.c, step, &mm.c, d)) != TC_OK)
        return st;
    return ops->matmul(dev, &mm, stream, d);
}

static tc_status run_copy(rt_pool *p, const rt_ops *ops, void *dev, const tc_plan *plan,
                          const rt_args *a, int step, void *stream, tc_diag *d)
{
    const pstep *S = &plan->steps[step];
    int64_t bytes = 0;
    uint64_t src = 0, dst = 0;
    tc_status st;
    if ((st = eval(plan, S->copy_bytes, a, "the bytes to copy", step, &bytes, d)) != TC_OK ||
        (st = buf_addr(p, plan, S->src, step, &src, d)) != TC_OK ||
        (st = buf_addr(p, plan, S->dst, step, &dst, d)) != TC_OK)
        return st;
    if (bytes < 0)
        return SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d copies %lld bytes", plan->fn, step,
                   (long long)bytes);
    if (bytes == 0 || src == dst)
        return TC_OK;
    return ops->copy(dev, dst, src, (size_t)bytes, stream, d);
}

tc_status rt_exec(rt_pool *p, const rt_ops *ops, void *dev, void *module, const tc_plan *plan,
                  const rt_args *a, void *stream, void *const *events, tc_diag *d)
{
    if (plan->nbufs < 0 || plan->nsteps < 0 || (plan->nbufs && !plan->bufs) ||
        (plan->nsteps && !plan->steps))
        return SET(d, TC_ERR_INTERNAL, "malformed plan of '%s'", plan->fn ? plan->fn : "?");
    tc_status st = resolve(p, ops, dev, plan, a, stream, d);
    for (int s = 0; s < plan->nsteps && st == TC_OK; s++) {
        bool runs;
        if (events)
            st = ops->record(dev, events[s], stream, d);
        if (st == TC_OK)
            st = rt_step_runs(plan, s, a, &runs, d);
        if (st != TC_OK)
            break;
        if (!runs)
            continue; /* the other engine of a matmul runs at these sizes */
        switch (plan->steps[s].kind) {
        case PSTEP_KERNEL: st = run_kernel(p, ops, dev, module, plan, a, s, stream, d); break;
        case PSTEP_MATMUL: st = run_matmul(p, ops, dev, plan, a, s, stream, d); break;
        case PSTEP_COPY: st = run_copy(p, ops, dev, plan, a, s, stream, d); break;
        default:
            st = SET(d, TC_ERR_INTERNAL, "plan of '%s': step %d has unknown kind %d", plan->fn, s,
                     (int)plan->steps[s].kind);
        }
    }
    if (st == TC_OK && events)
        st = ops->record(dev, events[plan->nsteps], stream, d);
    return st;
}
