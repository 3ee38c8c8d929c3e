/* fuse_cost.c - what a kernel would cost (fuse.h's budget): the reduction
 * passes it needs (a reduction runs one pass after the latest one its input
 * needs), the nodes it computes counted once per pass that recomputes them,
 * and the registers a thread; and whether its passes can be scheduled at
 * all (columns and whole-tensor kernels write element-level stores in
 * their first pass).  A refusal says why and which limit it hit. */
#include "fuse/fuse_internal.h"

/* ---- passes and the budget ----------------------------------------------- */

/* The latest pass among kernel (ka, kb)'s own reductions that n's value
 * needs, or -1; a reduction's own pass is one after what its input needs. */
static int need(fctx *x, int ka, int kb, const lnode *n)
{
    if (is_leaf(n) || n->kind == LK_MATMUL || (x->anchor[n->id] && !in_k(x, n->id, ka, kb)))
        return -1;
    if (x->memo_ep[n->id] == x->epoch)
        return x->memo[n->id];
    int r = -1;
    for (int i = 0; i < n->nin; i++) {
        int q = need(x, ka, kb, n->in[i].src);
        if (q > r)
            r = q;
    }
    if (n->kind == LK_REDUCE)
        r++;
    x->memo_ep[n->id] = x->epoch;
    x->memo[n->id] = r;
    return r;
}

/* Count the nodes computed in pass p for n's value (each once a pass);
 * false once the count passes the budget. */
static bool count_work(fctx *x, int ka, int kb, const lnode *n, int p, int *work)
{
    if (is_leaf(n) || n->kind == LK_MATMUL || (x->anchor[n->id] && !in_k(x, n->id, ka, kb)))
        return true;
    int64_t key = ((int64_t)x->epoch << 20) | p;
    if (x->wkey[n->id] == key)
        return true;
    x->wkey[n->id] = key;
    if (n->kind == LK_REDUCE)
        return true; /* its value, from its own pass */
    if (++*work > x->bud->max_work && !x->f->g->elementwise)
        return false; /* (elementwise: counted in full, never refused) */
    for (int i = 0; i < n->nin; i++)
        if (!count_work(x, ka, kb, n->in[i].src, p, work))
            return false;
    return true;
}

/* The cost of kernels ka and kb as one kernel of domain kd, and whether
 * its passes can be scheduled (sched.h) and it fits the budget; if not,
 * x->why says why and x->limit which limit, when it is the budget. */
bool fuse_kernel_cost(fctx *x, int ka, int kb, kdesc kd, kcost *c)
{
    *c = (kcost){0, 0, 0};
    x->epoch++;
    unsigned all = kd.rank >= 32 ? ~0u : (1u << kd.rank) - 1;
    bool inner = kd.kind == KK_REDUCE && inner_reduction(kd.rank, kd.mask);
    int nred = 0, nread = 0, nelem = 0, nscan = 0;
    FOR_MEMBERS(x, ka, kb, i) {
        const lnode *v = x->f->nodes[i];
        int q = need(x, ka, kb, v);
        nscan += v->kind == LK_SCAN;
        if (v->kind == LK_REDUCE) {
            nred++;
            if (q + 1 > c->passes)
                c->passes = q + 1;
            if (kd.mask == all && q > 0) {
                x->why = "a whole-tensor reduction that needs another's result would need a "
                         "grid-wide sync";
                return false;
            }
        } else if (kd.kind == KK_REDUCE && !inner && q >= 0 &&
                   same_shape(v->rank, v->shape, kd.rank, kd.dom)) {
            /* element-level stores of a columns or whole-tensor kernel run
             * in its first pass, before any of its reductions is known */
            x->why = kd.mask == all ? "an epilogue over a whole-tensor reduction needs a grid-wide sync"
                                    : "an outer-axis reduction takes no pointwise epilogue (its rows "
                                      "are columns)";
            return false;
        }
        for (int j = 0; j < x->params[i].n + x->deps[i].n; j++) {
            const lnode *r = j < x->params[i].n ? x->params[i].v[j] : x->deps[i].v[j - x->params[i].n];
            if (x->rstamp[r->id] != x->epoch && !in_k(x, r->id, ka, kb)) {
                x->rstamp[r->id] = x->epoch;
                nread++;
                nelem += same_shape(r->rank, r->shape, kd.rank, kd.dom);
            }
        }
    }
    /* an elementwise function is one kernel whatever its size: foreach
     * needs it (sched.h); its cost is still measured */
    bool enforce = !x->f->g->elementwise;
    if (enforce && c->passes > x->bud->max_passes) {
        x->limit = "passes";
        x->why = arena_printf(x->a, "budget: %d reduction passes in one kernel (at most %d); the next "
                                    "kernel reads the results from memory",
                              c->passes, x->bud->max_passes);
        return false;
    }
    /* work: what each pass recomputes, the epilogue included */
    x->epoch++;
    bool ok = true;
    FOR_MEMBERS(x, ka, kb, i) {
        const lnode *v = x->f->nodes[i];
        if (ok && v->kind == LK_REDUCE)
            ok = count_work(x, ka, kb, v->in[0].src, x->memo[i], &c->work);
        else if (ok)
            ok = count_work(x, ka, kb, v, c->passes, &c->work);
    }
    if (!ok && enforce) {
        x->limit = "work";
        x->why = arena_printf(x->a, "budget: more than %d nodes computed in one kernel, counted once "
                                    "per pass that recomputes them; the next kernel reads stored values",
                              x->bud->max_work);
        return false;
    }
    /* registers: a rows kernel keeps 16 elements a thread of each buffer
     * it reads over the whole domain, plus an accumulator per reduction */
    c->regs = 24 + 2 * nred + 2 * nscan + 2 * nread + (inner ? 16 * nelem : 0);
    if (enforce && c->regs > x->bud->max_regs) {
        x->limit = "registers";
        x->why = arena_printf(x->a, "budget: about %d registers a thread (at most %d)", c->regs,
                              x->bud->max_regs);
        return false;
    }
    return true;
}

