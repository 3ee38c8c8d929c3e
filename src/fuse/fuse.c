/* fuse.c - the fusion pass's driver (fuse_fn_budget): which nodes are
 * anchors (the inline limit of the budget included), what each anchor's
 * inlined expression reads, then the merge passes (fuse_merge.c) and the
 * kernels (fuse_kernels.c).  The rules are in fuse.h; how the files of the
 * pass divide the work, in fuse_internal.h.
 *
 * Union-find over anchor nodes; a set's root carries the kernel's domain,
 * its member list and its cost.  A merge is checked first (domains, cycles,
 * row consistency, passes, budget) against the two kernels as they are, and
 * only then made: nothing is undone, so no check can see a half-made merge.
 * Every check walks the two kernels' members or their inlined expressions,
 * which the budget bounds, so the pass is near-linear in program size.
 */
#include "fuse/fuse_internal.h"

const fuse_budget fuse_default_budget = {
    .max_passes = 8,
    .max_work = 768,
    .max_inline = 96,
    .max_regs = 200,
};

static void push_new(tc_arena *a, deplist *l, lnode *n);

static void push(tc_arena *a, deplist *l, lnode *n)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == n)
            return;
    push_new(a, l, n);
}

static void push_new(tc_arena *a, deplist *l, lnode *n)
{
    ARENA_GROW(a, l->v, l->n, l->cap, 4);
    l->v[l->n++] = n;
}

/* ---- anchors and what they read ----------------------------------------- */

static void collect(fctx *x, lnode *n, deplist *deps, deplist *params, int *mark, int stamp)
{
    for (int i = 0; i < n->nin; i++) {
        lnode *s = n->in[i].src;
        if (x->anchor[s->id]) {
            push(x->a, deps, s);
        } else if (is_leaf(s)) {
            if (s->kind == LK_INPUT)
                push(x->a, params, s);
        } else if (mark[s->id] != stamp) {
            mark[s->id] = stamp;
            collect(x, s, deps, params, mark, stamp);
        }
    }
}

static kdesc own_desc(const lnode *n)
{
    if (n->kind == LK_REDUCE)
        return (kdesc){KK_REDUCE, n->a.red.rin, n->a.red.shape_in, n->a.red.mask, false};
    if (n->kind == LK_MATMUL)
        return (kdesc){KK_EXTERN, n->rank, n->shape, 0, false};
    if (n->kind == LK_SCAN)
        return (kdesc){KK_SCAN, n->rank, n->shape, 1u << n->a.scan.axis, n->a.scan.reverse};
    return (kdesc){KK_POINTWISE, n->rank, n->shape, 0, false};
}

static void add_cut(fctx *x, const lnode *n, int size, int reds)
{
    ffn *o = x->out;
    ARENA_GROW(x->a, o->cut, o->ncut, x->capcut, 8);
    o->cut[o->ncut++] = (fcut){n, size, reds};
}

static void mark_anchors(fctx *x)
{
    const lfn *f = x->f;
    for (int i = 0; i < x->n; i++) {
        lnode *n = f->nodes[i];
        if (n->kind == LK_REDUCE || n->kind == LK_MATMUL || n->kind == LK_SCAN ||
            (n->output >= 0 && !is_leaf(n)))
            x->anchor[i] = true;
        if (n->kind == LK_MATMUL)
            for (int j = 0; j < 2; j++)
                if (!is_leaf(n->in[j].src))
                    x->anchor[n->in[j].src->id] = true;
        /* a gather reads its source at positions known only at run time:
         * from a buffer an earlier kernel stored (fuse_rules.c) */
        if (n->kind == LK_GATHER && !is_leaf(n->in[0].src))
            x->anchor[n->in[0].src->id] = true;
    }
    /* The budget's inline limit: a pointwise value whose inlined expression
     * would hold more than max_inline nodes, or read more than max_passes
     * reductions, is stored instead (an anchor), so no kernel recomputes an
     * unbounded chain (every kernel after a reduction chain's first would
     * otherwise recompute it from the start).  Counts take shared
     * subexpressions once per reader (an over-estimate, saturating), which
     * only stores a little earlier.  Nodes are in topological order. */
    int *sz = ARENA_ARRAY(x->a, int, x->n > 0 ? x->n : 1);
    int *nr = ARENA_ARRAY(x->a, int, x->n > 0 ? x->n : 1);
    for (int i = 0; i < x->n; i++) {
        lnode *n = f->nodes[i];
        if (is_leaf(n) || x->anchor[i] || n->kind == LK_REDUCE || n->kind == LK_MATMUL)
            continue;
        int64_t s = 1, r = 0;
        for (int j = 0; j < n->nin; j++) {
            const lnode *in = n->in[j].src;
            if (in->kind == LK_REDUCE) {
                r++;
            } else if (!x->anchor[in->id] && !is_leaf(in)) {
                s += sz[in->id];
                r += nr[in->id];
            }
        }
        if ((s > x->bud->max_inline || r > x->bud->max_passes) && !f->g->elementwise) {
            x->anchor[i] = x->cut[i] = true;
            add_cut(x, n, (int)(s > 1 << 30 ? 1 << 30 : s), (int)(r > 1 << 30 ? 1 << 30 : r));
            continue;
        }
        sz[i] = (int)(s > 1 << 30 ? 1 << 30 : s);
        nr[i] = (int)(r > 1 << 30 ? 1 << 30 : r);
    }
}

static ffn *fuse_all(const lfn *f, const fuse_budget *bud, const tc_knobs *k, tc_arena *a,
                     tc_diag *d);

ffn *fuse_fn(const lfn *f, const tc_knobs *k, tc_arena *a, tc_diag *d)
{
    return fuse_all(f, &fuse_default_budget, k ? k : &knobs_default, a, d);
}

ffn *fuse_fn_budget(const lfn *f, const fuse_budget *bud, tc_arena *a, tc_diag *d)
{
    return fuse_all(f, bud, &knobs_default, a, d);
}

static ffn *fuse_all(const lfn *f, const fuse_budget *bud, const tc_knobs *k, tc_arena *a,
                     tc_diag *d)
{
    fctx x = {0};
    x.f = f;
    x.a = a;
    x.d = d;
    x.bud = bud;
    x.n = f->nnodes;
    int n = x.n > 0 ? x.n : 1;
    x.anchor = ARENA_ARRAY(a, bool, n);
    x.cut = ARENA_ARRAY(a, bool, n);
    x.parent = ARENA_ARRAY(a, int, n);
    x.next = ARENA_ARRAY(a, int, n);
    x.desc = ARENA_ARRAY(a, kdesc, n);
    x.deps = ARENA_ARRAY(a, deplist, n);
    x.params = ARENA_ARRAY(a, deplist, n);
    x.users = ARENA_ARRAY(a, deplist, n);
    x.seen = ARENA_ARRAY(a, visit *, n);
    x.seen_epoch = ARENA_ARRAY(a, int, n);
    x.vis = ARENA_ARRAY(a, int, n);
    x.stack = ARENA_ARRAY(a, int, n + 1);
    x.memo_ep = ARENA_ARRAY(a, int, n);
    x.memo = ARENA_ARRAY(a, int, n);
    x.wkey = ARENA_ARRAY(a, int64_t, n);
    x.rstamp = ARENA_ARRAY(a, int, n);
    ffn *o = ARENA_NEW(a, ffn);
    o->l = f;
    o->budget = *bud;
    o->knobs = *k;
    o->kernel_of = ARENA_ARRAY(a, int, n);
    o->stored = ARENA_ARRAY(a, bool, n);
    x.out = o;

    mark_anchors(&x);
    int *mark = ARENA_ARRAY(a, int, n);
    for (int i = 0; i < x.n; i++) {
        x.parent[i] = x.next[i] = i;
        if (!x.anchor[i])
            continue;
        x.desc[i] = own_desc(f->nodes[i]);
        collect(&x, f->nodes[i], &x.deps[i], &x.params[i], mark, i + 1);
        for (int j = 0; j < x.deps[i].n; j++)
            push_new(a, &x.users[x.deps[i].v[j]->id], f->nodes[i]); /* (i, dep) pairs are unique */
    }

    fuse_vertical(&x);
    /* horizontal: kernels with one domain that read a common buffer */
    x.horizon = x.n;
    fuse_horizontal(&x, ARENA_ARRAY(a, ilist, n));
    if (f->g->elementwise)
        fuse_elementwise_one(&x);
    fuse_build_kernels(&x);
    /* attention first: its matmuls become one kernel, which the matmul rules leave alone */
    fuse_attention(o, a);
    fuse_col_partials(&x);
    fuse_mm_prologues(&x);
    return o;
}

