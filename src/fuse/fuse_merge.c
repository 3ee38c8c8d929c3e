/* fuse_merge.c - the merge passes and their record: vertical (each anchor
 * with the kernels of what it reads, in topological order), horizontal
 * (kernels of one domain that read a common buffer), and an elementwise
 * function made one kernel.  Every pair considered is recorded once per
 * outcome, with its reason, for `tensorc explain`. */
#include "fuse/fuse_internal.h"


#include <stdlib.h>

_Static_assert(sizeof(void *) >= sizeof(uint64_t), "a decision's key travels as a pointer");

static bool same_key(const void *elem, const void *key)
{
    return elem == key;
}

/* Has (p, c, fused) been recorded?  If not, remember it.  A hash set, so
 * the pass stays linear in the decisions it makes; the key travels as a
 * pointer (never NULL: 1 is added). */
static bool decided(fctx *x, const lnode *p, const lnode *c, bool fused)
{
    uint64_t key = ((uint64_t)(unsigned)p->id << 33) | ((uint64_t)(unsigned)c->id << 1) | fused;
    void *elem = (void *)(uintptr_t)(key + 1);
    uint64_t h = ((key + 1) * 0x9E3779B97F4A7C15ull) >> 20;
    if (hset_find(&x->decset, h, same_key, elem))
        return true;
    hset_add(&x->decset, x->a, h, elem);
    return false;
}

static void decide(fctx *x, const lnode *p, const lnode *c, bool fused, const char *why)
{
    ffn *o = x->out;
    if (decided(x, p, c, fused)) /* one line per pair and outcome */
        return;
    ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
    o->dec[o->ndec++] = (fdecision){p, c, fused, why, fused ? NULL : x->limit, false};
}

static const char *fused_why(kdesc p, kdesc c, const lnode *prod, const lnode *cons)
{
    if (p.kind == KK_EXTERN || c.kind == KK_EXTERN)
        return "pointwise epilogue of the matmul: run on each element of its output tile as the "
               "generated kernel stores it (that kernel is certain at compile time)";
    if (p.kind == KK_POINTWISE && c.kind == KK_POINTWISE)
        return "pointwise chain over one domain";
    if (p.kind == KK_SCAN && c.kind == KK_SCAN)
        return "scans along one axis: one walk, each carry in a register";
    if (p.kind == KK_SCAN || c.kind == KK_SCAN)
        return prod->kind == LK_SCAN ? "pointwise epilogue of the scan, at the element its walk is at"
                                     : "pointwise prologue: computed in the scan's walk";
    if (p.kind == KK_REDUCE && c.kind == KK_REDUCE)
        return "reductions over the same rows: one kernel, one pass each";
    if (prod->kind == LK_REDUCE && cons->kind != LK_REDUCE)
        return "pointwise epilogue of the reduction";
    if (cons->kind == LK_REDUCE)
        return "pointwise prologue: fused into the reduction's loads";
    return "same domain";
}

/* vertical: each anchor, in topological order, with the kernels of what it
 * reads */
void fuse_vertical(fctx *x)
{
    const lfn *f = x->f;
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i])
            continue;
        x->horizon = i;
        lnode *c = f->nodes[i];
        for (int j = x->deps[i].n - 1; j >= 0; j--) {
            lnode *p = x->deps[i].v[j];
            kdesc dp = x->desc[find(x, p->id)], dc = x->desc[find(x, i)];
            if (find(x, p->id) == find(x, i)) {
                decide(x, p, c, true, "already in one kernel");
                continue;
            }
            x->why = NULL;
            bool ok = fuse_try_merge(x, p->id, i);
            decide(x, p, c, ok, ok ? fused_why(dp, dc, p, c) : x->why);
        }
    }
}

/* Horizontal candidates of root i: earlier kernels that read one of its
 * loads (readers[r] lists, per parameter or anchor, the kernels that read
 * it, as roots when recorded).  At most HCAND are tried, lowest first, so
 * a buffer read by thousands of kernels costs no quadratic time. */
enum { HCAND = 8 };

static int load_of(const fctx *x, int m, int j)
{
    return j < x->params[m].n ? x->params[m].v[j]->id : x->deps[m].v[j - x->params[m].n]->id;
}

void fuse_horizontal(fctx *x, ilist *readers)
{
    const lfn *f = x->f;
    int cand[HCAND];
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i] || find(x, i) != i || x->desc[i].kind == KK_EXTERN)
            continue;
        int nc = 0;
        int ep = ++x->epoch;
        FOR_MEMBERS(x, i, -1, m)
            for (int j = 0; j < x->params[m].n + x->deps[m].n; j++) {
                ilist *rl = &readers[load_of(x, m, j)];
                for (int q = 0; q < rl->n && nc < HCAND; q++) {
                    int c = find(x, rl->v[q]);
                    if (c < i && x->vis[c] != ep && x->desc[c].kind != KK_EXTERN) {
                        x->vis[c] = ep;
                        cand[nc++] = c;
                    }
                }
            }
        qsort(cand, (size_t)nc, sizeof *cand, cmp_int);
        for (int q = 0; q < nc; q++) {
            int j = find(x, cand[q]);
            if (j == find(x, i))
                continue;
            x->why = NULL;
            bool ok = fuse_try_merge(x, j, i);
            decide(x, f->nodes[j], f->nodes[i], ok,
                   ok ? "horizontal: one domain, a common input read once" : x->why);
            if (ok)
                break;
        }
        /* record i's loads for the kernels after it */
        int root = find(x, i);
        FOR_MEMBERS(x, i, -1, m)
            for (int j = 0; j < x->params[m].n + x->deps[m].n; j++) {
                ilist *rl = &readers[load_of(x, m, j)];
                if (rl->n == 0 || find(x, rl->v[rl->n - 1]) != root)
                    ipush(x->a, rl, root);
            }
    }
}

/* An elementwise function is one pointwise kernel (foreach runs exactly
 * one): its independent updates are merged even without a common input. */
void fuse_elementwise_one(fctx *x)
{
    int base = -1;
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i] || find(x, i) != i || x->desc[i].kind != KK_POINTWISE)
            continue;
        if (base < 0) {
            base = i;
            continue;
        }
        x->why = NULL;
        bool ok = fuse_try_merge(x, base, i);
        decide(x, x->f->nodes[base], x->f->nodes[i], ok,
               ok ? "horizontal: an elementwise function is one kernel (foreach)" : x->why);
        base = find(x, base);
    }
}

