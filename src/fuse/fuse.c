/* fuse.c - anchors, merging by the rules of fuse.h, the budget, launch order.
 *
 * Union-find over anchor nodes; a set's root carries the kernel's domain,
 * its member list and its cost.  A merge is checked first (domains, cycles,
 * row consistency, passes, budget) against the two kernels as they are, and
 * only then made: nothing is undone, so no check can see a half-made merge.
 * Every check walks the two kernels' members or their inlined expressions,
 * which the budget bounds, so the pass is near-linear in program size.
 */
#include "fuse/fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const fuse_budget fuse_default_budget = {
    .max_passes = 8,
    .max_work = 768,
    .max_inline = 96,
    .max_regs = 200,
};

typedef struct deplist {
    lnode **v;
    int n, cap;
} deplist;

typedef struct kdesc {
    kernel_kind kind;
    int rank;
    const tc_dim **dom;
    unsigned mask;
} kdesc;

typedef struct visit {
    struct visit *next;
    const tc_dim **idx;
} visit;

typedef struct kcost {
    int passes, work, regs;
} kcost;

typedef struct fctx {
    const lfn *f;
    tc_arena *a;
    tc_diag *d;
    const fuse_budget *bud;
    int n;                  /* nodes */
    bool *anchor;
    bool *cut;              /* anchors made by the inline limit (mark_anchors) */
    int *parent;            /* union-find over node ids (anchors only) */
    int *next;              /* circular list of a kernel's anchors */
    kdesc *desc;            /* valid at roots */
    deplist *deps;          /* anchor -> anchors its inlined expression reads */
    deplist *params;        /* anchor -> leaf inputs it reads */
    deplist *users;         /* anchor -> anchors whose inlined expression reads it */
    int horizon;            /* anchors above it are untouched singletons (cycle check) */
    ffn *out;
    int capdec, capcut;
    visit **seen;           /* row check memo, per node */
    int epoch;
    int *seen_epoch;
    int *vis;               /* cycle check: kernel root -> epoch visited */
    int *stack;
    int *memo_ep, *memo;    /* passes: the latest own pass a node needs */
    int64_t *wkey;          /* work: (epoch, pass) a node was counted in */
    int *rstamp;            /* registers: epoch a buffer read was counted in */
    const char *why;        /* the reason a check failed */
    const char *limit;      /* the budget limit it hit, or NULL */
    uint64_t *decset;       /* decisions recorded (decided()) */
    int ndecset, capdecset;
} fctx;

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

static int find(fctx *x, int i)
{
    while (x->parent[i] != i)
        i = x->parent[i] = x->parent[x->parent[i]];
    return i;
}

/* Is node i an anchor of kernel a or kernel b (roots; b may be -1)? */
static bool in_k(fctx *x, int i, int a, int b)
{
    if (!x->anchor[i])
        return false;
    int r = find(x, i);
    return r == a || r == b;
}

static bool is_leaf(const lnode *n)
{
    return n->kind == LK_INPUT || n->kind == LK_SCALAR || n->kind == LK_CONST || n->kind == LK_DIMVAL;
}

static bool same_shape(int ra, const tc_dim *const *a, int rb, const tc_dim *const *b)
{
    if (ra != rb)
        return false;
    for (int k = 0; k < ra; k++)
        if (!dim_eq(a[k], b[k]))
            return false;
    return true;
}

/* Has (p, c, fused) been recorded?  If not, remember it.  A hash set, so
 * the pass stays linear in the decisions it makes. */
static bool decided(fctx *x, const lnode *p, const lnode *c, bool fused)
{
    uint64_t key = ((uint64_t)(unsigned)p->id << 33) | ((uint64_t)(unsigned)c->id << 1) | fused;
    if (2 * (x->ndecset + 1) > x->capdecset) {
        int cap = x->capdecset ? 2 * x->capdecset : 64;
        uint64_t *t = ARENA_ARRAY(x->a, uint64_t, cap);
        for (int i = 0; i < x->capdecset; i++)
            if (x->decset[i]) {
                uint64_t h = (x->decset[i] * 0x9E3779B97F4A7C15ull) >> 20;
                while (t[h & (uint64_t)(cap - 1)])
                    h++;
                t[h & (uint64_t)(cap - 1)] = x->decset[i];
            }
        x->decset = t;
        x->capdecset = cap;
    }
    key++; /* 0 marks an empty slot */
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> 20, m = (uint64_t)(x->capdecset - 1);
    for (; x->decset[h & m]; h++)
        if (x->decset[h & m] == key)
            return true;
    x->decset[h & m] = key;
    x->ndecset++;
    return false;
}

static void decide(fctx *x, const lnode *p, const lnode *c, bool fused, const char *why)
{
    ffn *o = x->out;
    if (decided(x, p, c, fused)) /* one line per pair and outcome */
        return;
    ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
    o->dec[o->ndec++] = (fdecision){p, c, fused, why, fused ? NULL : x->limit};
}

typedef struct ilist {
    int *v;
    int n, cap;
} ilist;

static void ipush(tc_arena *a, ilist *l, int v)
{
    ARENA_GROW(a, l->v, l->n, l->cap, 16);
    l->v[l->n++] = v;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
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
        return (kdesc){KK_REDUCE, n->a.red.rin, n->a.red.shape_in, n->a.red.mask};
    if (n->kind == LK_MATMUL)
        return (kdesc){KK_EXTERN, n->rank, n->shape, 0};
    return (kdesc){KK_POINTWISE, n->rank, n->shape, 0};
}

static bool inner_reduction(int rank, unsigned mask)
{
    unsigned all = rank >= 32 ? ~0u : (1u << rank) - 1;
    if (mask == 0 || mask == all)
        return false;
    /* trailing: mask + lowest bit of the kept prefix ... mask is a suffix of bits */
    int low = 0;
    while (!(mask & (1u << low)))
        low++;
    return ((mask >> low) & ((mask >> low) + 1)) == 0 && (mask >> low) == (all >> low);
}

bool fuse_is_element(const fkernel *k, const lnode *n)
{
    return n->kind != LK_REDUCE && same_shape(n->rank, n->shape, k->rank, k->dom);
}

/* Row-level shape of (rank, dom, mask): the kept dims, or with keepdim 1s. */
static bool row_index(const lfn *f, int rank, const tc_dim *const *dom, unsigned mask,
                      const lnode *n, const tc_dim **out)
{
    if (mask == 0)
        return false;
    int kept = 0;
    for (int k = 0; k < rank; k++)
        kept += !(mask & (1u << k));
    int64_t one;
    if (n->rank == rank) {
        for (int k = 0; k < rank; k++) {
            if (mask & (1u << k)) {
                if (!dim_is_const(n->shape[k], &one) || one != 1)
                    return false;
                out[k] = dim_const(f->dims, 0);
            } else {
                if (!dim_eq(n->shape[k], dom[k]))
                    return false;
                out[k] = f->vars[k];
            }
        }
        return true;
    }
    if (n->rank != kept)
        return false;
    int j = 0;
    for (int k = 0; k < rank; k++)
        if (!(mask & (1u << k))) {
            if (!dim_eq(n->shape[j], dom[k]))
                return false;
            out[j++] = f->vars[k];
        }
    return true;
}

static bool node_index(const lfn *f, kdesc kd, const lnode *n, const tc_dim **out)
{
    if (n->kind == LK_REDUCE) {
        if (!same_shape(n->a.red.rin, n->a.red.shape_in, kd.rank, kd.dom) || n->a.red.mask != kd.mask)
            return false;
        red_row_index(f, n, out);
        return true;
    }
    if (same_shape(n->rank, n->shape, kd.rank, kd.dom)) {
        for (int k = 0; k < n->rank; k++)
            out[k] = f->vars[k];
        return true;
    }
    return row_index(f, kd.rank, kd.dom, kd.mask, n, out);
}

bool fuse_node_index(const ffn *f, const fkernel *k, const lnode *n, const tc_dim **out)
{
    kdesc kd = {k->kind, k->rank, k->dom, k->mask};
    return node_index(f->l, kd, n, out);
}

/* ---- row consistency -------------------------------------------------------- */

static bool seen_before(fctx *x, const lnode *n, const tc_dim **idx)
{
    if (x->seen_epoch[n->id] != x->epoch) {
        x->seen_epoch[n->id] = x->epoch;
        x->seen[n->id] = NULL;
    }
    for (visit *v = x->seen[n->id]; v; v = v->next) {
        bool eq = true;
        for (int k = 0; k < n->rank && eq; k++)
            eq = v->idx[k] == idx[k];
        if (eq)
            return true;
    }
    visit *v = ARENA_NEW(x->a, visit);
    v->idx = idx;
    v->next = x->seen[n->id];
    x->seen[n->id] = v;
    return false;
}

/* Walk what the kernel of roots (ka, kb) computes for n at idx (over the
 * kernel's variables): a reduction of this kernel must be read at its own
 * row. */
static bool rows_ok(fctx *x, int ka, int kb, kdesc kd, lnode *n, const tc_dim **idx)
{
    if (is_leaf(n) || seen_before(x, n, idx))
        return true;
    if (x->anchor[n->id] && !in_k(x, n->id, ka, kb))
        return true; /* loaded from another kernel's buffer */
    if (n->kind == LK_REDUCE) {
        const tc_dim *want[TC_MAX_RANK];
        if (!node_index(x->f, kd, n, want)) {
            x->why = "the reduction's domain or axes differ";
            return false;
        }
        for (int k = 0; k < n->rank; k++)
            if (want[k] != idx[k]) {
                x->why = "a reduction would be read at another row than the one computing it";
                return false;
            }
        return true;
    }
    if (n->kind == LK_MATMUL)
        return true;
    for (int i = 0; i < n->nin; i++) {
        const lref *r = &n->in[i];
        const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
        lir_compose(x->f, r, idx, n->rank, ci);
        if (!rows_ok(x, ka, kb, kd, r->src, ci))
            return false;
    }
    return true;
}

/* The anchors of kernels ka and kb (b may be -1), through their lists. */
#define FOR_MEMBERS(x, ka, kb, i)                                                               \
    for (int k_ = 0, r_ = (ka), i = r_; k_ < 2; k_++, r_ = (kb), i = r_)                        \
        if (r_ >= 0)                                                                            \
            for (bool m_ = true; m_; i = (x)->next[i], m_ = i != r_)

static bool kernel_rows_ok(fctx *x, int ka, int kb, kdesc kd)
{
    x->epoch++;
    FOR_MEMBERS(x, ka, kb, i) {
        lnode *n = x->f->nodes[i];
        if (n->kind == LK_REDUCE) {
            /* its input is read over the domain itself */
            const lref *r = &n->in[0];
            if (!rows_ok(x, ka, kb, kd, r->src, r->idx))
                return false;
            continue;
        }
        const tc_dim **idx = ARENA_ARRAY(x->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
        if (!node_index(x->f, kd, n, idx)) {
            x->why = "a store's shape is neither the domain nor its rows";
            return false;
        }
        for (int j = 0; j < n->nin; j++) {
            const lref *r = &n->in[j];
            const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
            lir_compose(x->f, r, idx, n->rank, ci);
            if (!rows_ok(x, ka, kb, kd, r->src, ci))
                return false;
        }
    }
    return true;
}

/* ---- cycles ----------------------------------------------------------------- */

/* Is there a path from kernel a to kernel b that passes through a third
 * kernel?  (Merging a and b would then put a kernel both before and after
 * the merged one.)  A depth-first walk over kernels, each visited once:
 * linear in the kernels it reaches.  Anchors above the horizon are
 * singletons no merge has touched yet; every anchor they reach is above
 * them too, so no path from a to b runs through them. */
static bool path_via_other(fctx *x, int a, int b)
{
    int ep = ++x->epoch;
    int sp = 0;
    x->vis[a] = ep;
    x->stack[sp++] = a;
    while (sp > 0) {
        int k = x->stack[--sp];
        for (int i = k, m = 1; m; i = x->next[i], m = i != k)
            for (int j = 0; j < x->users[i].n; j++) {
                int u = x->users[i].v[j]->id;
                if (u > x->horizon)
                    continue;
                int ru = find(x, u);
                if (ru == b) {
                    if (k != a)
                        return true;
                    continue; /* the direct edge a -> b */
                }
                if (x->vis[ru] != ep) {
                    x->vis[ru] = ep;
                    x->stack[sp++] = ru;
                }
            }
    }
    return false;
}

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
static bool kernel_cost(fctx *x, int ka, int kb, kdesc kd, kcost *c)
{
    *c = (kcost){0, 0, 0};
    x->epoch++;
    unsigned all = kd.rank >= 32 ? ~0u : (1u << kd.rank) - 1;
    bool inner = kd.kind == KK_REDUCE && inner_reduction(kd.rank, kd.mask);
    int nred = 0, nread = 0, nelem = 0;
    FOR_MEMBERS(x, ka, kb, i) {
        const lnode *v = x->f->nodes[i];
        int q = need(x, ka, kb, v);
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
    c->regs = 24 + 2 * nred + 2 * nread + (inner ? 16 * nelem : 0);
    if (enforce && c->regs > x->bud->max_regs) {
        x->limit = "registers";
        x->why = arena_printf(x->a, "budget: about %d registers a thread (at most %d)", c->regs,
                              x->bud->max_regs);
        return false;
    }
    return true;
}

/* ---- merging ------------------------------------------------------------- */

/* Does anchor s (of kernel ks) read, through its inlined expression, any
 * anchor of kernel kr? */
static bool reads_kernel(fctx *x, const lnode *s, int kr)
{
    for (int j = 0; j < x->deps[s->id].n; j++)
        if (find(x, x->deps[s->id].v[j]->id) == kr)
            return true;
    return false;
}

/* The domain of kernels a and b together, or why there is none. */
static bool merged_desc(fctx *x, int a, int b, kdesc *out)
{
    kdesc da = x->desc[a], db = x->desc[b];
    if (da.kind == KK_EXTERN || db.kind == KK_EXTERN) {
        x->why = "an extern op (matmul) is a fusion barrier";
        return false;
    }
    if (da.kind == KK_POINTWISE && db.kind == KK_POINTWISE) {
        if (!same_shape(da.rank, da.dom, db.rank, db.dom)) {
            x->why = "different iteration domains";
            return false;
        }
        *out = da;
        return true;
    }
    if (da.kind == KK_REDUCE && db.kind == KK_REDUCE) {
        if (!same_shape(da.rank, da.dom, db.rank, db.dom) || da.mask != db.mask) {
            x->why = "reductions over different domains or axes";
            return false;
        }
        *out = da; /* the passes are checked by kernel_cost */
        return true;
    }
    int r = da.kind == KK_REDUCE ? a : b, p = r == a ? b : a;
    kdesc dr = x->desc[r];
    bool inner = inner_reduction(dr.rank, dr.mask);
    FOR_MEMBERS(x, p, -1, i) {
        lnode *s = x->f->nodes[i];
        const tc_dim *idx[TC_MAX_RANK];
        if (same_shape(s->rank, s->shape, dr.rank, dr.dom)) {
            if (!inner && reads_kernel(x, s, r)) {
                x->why = (dr.mask == ((1u << dr.rank) - 1))
                             ? "an epilogue over a whole-tensor reduction needs a grid-wide sync"
                             : "an outer-axis reduction takes no pointwise epilogue (its rows are "
                               "columns)";
                return false;
            }
        } else if (!row_index(x->f, dr.rank, dr.dom, dr.mask, s, idx)) {
            x->why = "the pointwise domain is neither the reduction's input nor its rows";
            return false;
        }
    }
    *out = dr;
    return true;
}

/* Merge the kernels of anchors a and b if every rule and the budget allow;
 * the union-find is changed only then. */
static bool try_merge(fctx *x, int a, int b)
{
    a = find(x, a);
    b = find(x, b);
    x->limit = NULL;
    if (a == b)
        return true;
    kdesc m;
    if (!merged_desc(x, a, b, &m))
        return false;
    if (path_via_other(x, a, b) || path_via_other(x, b, a)) {
        x->why = "fusing would create a cycle through another kernel";
        return false;
    }
    if (!kernel_rows_ok(x, a, b, m))
        return false;
    kcost c;
    if (!kernel_cost(x, a, b, m, &c))
        return false;
    int keep = a < b ? a : b, gone = keep == a ? b : a;
    x->parent[gone] = keep;
    int t = x->next[keep]; /* splice the circular member lists */
    x->next[keep] = x->next[gone];
    x->next[gone] = t;
    x->desc[keep] = m;
    return true;
}

static const char *fused_why(kdesc p, kdesc c, const lnode *prod, const lnode *cons)
{
    if (p.kind == KK_POINTWISE && c.kind == KK_POINTWISE)
        return "pointwise chain over one domain";
    if (p.kind == KK_REDUCE && c.kind == KK_REDUCE)
        return "reductions over the same rows: one kernel, one pass each";
    if (prod->kind == LK_REDUCE && cons->kind != LK_REDUCE)
        return "pointwise epilogue of the reduction";
    if (cons->kind == LK_REDUCE)
        return "pointwise prologue: fused into the reduction's loads";
    return "same domain";
}

/* ---- the pass ------------------------------------------------------------ */

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
        if (n->kind == LK_REDUCE || n->kind == LK_MATMUL || (n->output >= 0 && !is_leaf(n)))
            x->anchor[i] = true;
        if (n->kind == LK_MATMUL)
            for (int j = 0; j < 2; j++)
                if (!is_leaf(n->in[j].src))
                    x->anchor[n->in[j].src->id] = true;
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

/* Walk the inline closure of kernel k from node n: inlined nodes into
 * inl, loads (parameters, other kernels' anchors) into rd, each once
 * (stamp k->id + 1). */
static void gather(fctx *x, fkernel *k, lnode *n, int *st, ilist *inl, ilist *rd)
{
    for (int i = 0; i < n->nin; i++) {
        lnode *s = n->in[i].src;
        if (st[s->id] == k->id + 1)
            continue;
        if (is_leaf(s)) {
            if (s->kind == LK_INPUT) {
                st[s->id] = k->id + 1;
                ipush(x->a, rd, s->id);
            }
        } else if (x->anchor[s->id]) {
            if (x->out->kernel_of[s->id] != k->id) {
                st[s->id] = k->id + 1;
                ipush(x->a, rd, s->id); /* else a member of this kernel, gathered on its own */
            }
        } else {
            st[s->id] = k->id + 1;
            ipush(x->a, inl, s->id);
            gather(x, k, s, st, inl, rd);
        }
    }
}

/* The name: the first six distinct op names among members and inlined
 * nodes (ids ascending, both lists sorted). */
static const char *kernel_name(fctx *x, fkernel *k, const int *mem, int nmem, const int *inl, int ninl)
{
    tc_buf b;
    buf_init(&b, x->a);
    if (k->kind == KK_EXTERN) {
        buf_printf(&b, "matmul_%d", k->id);
        return buf_str(&b);
    }
    buf_puts(&b, k->kind == KK_REDUCE ? "tc_red_fused" : "tc_poi_fused");
    const char *seen[8];
    int nseen = 0;
    for (int i = 0, j = 0; (i < nmem || j < ninl) && nseen < 6;) {
        int id = j >= ninl || (i < nmem && mem[i] < inl[j]) ? mem[i++] : inl[j++];
        const lnode *n = x->f->nodes[id];
        if (n->kind == LK_MATMUL)
            continue;
        const char *nm = n->kind == LK_REDUCE ? red_kind_name(n->a.red.kind) : op_table[n->op].name;
        bool dup = false;
        for (int q = 0; q < nseen; q++)
            dup |= strcmp(seen[q], nm) == 0;
        if (!dup) {
            seen[nseen++] = nm;
            buf_printf(&b, "_%s", nm);
        }
    }
    buf_printf(&b, "_%d", k->id);
    return buf_str(&b);
}

/* A binary min-heap of root ids: Kahn's order takes the lowest anchor
 * first among the kernels ready to launch. */
static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
    return top;
}

static void build_kernels(fctx *x)
{
    ffn *o = x->out;
    int n = x->n, nn = n > 0 ? n : 1;
    /* roots in launch order: Kahn over kernel dependencies, lowest anchor first */
    int *indeg = ARENA_ARRAY(x->a, int, nn);
    int *st = ARENA_ARRAY(x->a, int, nn);
    ilist *succ = ARENA_ARRAY(x->a, ilist, nn);
    int nroots = 0;
    for (int r = 0; r < n; r++) {
        if (!x->anchor[r] || find(x, r) != r)
            continue;
        nroots++;
        FOR_MEMBERS(x, r, -1, i)
            for (int j = 0; j < x->deps[i].n; j++) {
                int rd = find(x, x->deps[i].v[j]->id);
                if (rd != r && st[rd] != r + 1) {
                    st[rd] = r + 1;
                    ipush(x->a, &succ[rd], r);
                    indeg[r]++;
                }
            }
    }
    o->k = ARENA_ARRAY(x->a, fkernel *, nroots > 0 ? nroots : 1);
    int *kid = ARENA_ARRAY(x->a, int, nn);
    int *heap = ARENA_ARRAY(x->a, int, nroots > 0 ? nroots : 1);
    int nheap = 0;
    for (int r = 0; r < n; r++)
        if (x->anchor[r] && find(x, r) == r && indeg[r] == 0)
            heap_push(heap, &nheap, r);
    for (int step = 0; step < nroots; step++) {
        if (nheap == 0)
            diag_error(x->d, TC_ERR_INTERNAL, x->f->g->loc, "fusion: the kernels form a cycle");
        int pick = heap_pop(heap, &nheap);
        for (int j = 0; j < succ[pick].n; j++)
            if (--indeg[succ[pick].v[j]] == 0)
                heap_push(heap, &nheap, succ[pick].v[j]);
        fkernel *k = ARENA_NEW(x->a, fkernel);
        k->id = o->nk;
        kid[pick] = k->id;
        kdesc d = x->desc[pick];
        k->kind = d.kind;
        k->rank = d.rank;
        k->dom = (const tc_dim **)d.dom;
        k->mask = d.mask;
        k->inner = d.kind == KK_REDUCE && inner_reduction(d.rank, d.mask);
        if (d.kind != KK_EXTERN) {
            kcost c;
            x->limit = NULL;
            kernel_cost(x, pick, -1, d, &c);
            k->passes = c.passes;
            k->work = c.work;
            k->regs = c.regs;
        }
        o->k[o->nk++] = k;
    }
    for (int i = 0; i < n; i++)
        o->kernel_of[i] = x->anchor[i] ? kid[find(x, i)] : -1;

    /* stored: parameters, outputs, operands of externs, anchors read elsewhere */
    for (int i = 0; i < n; i++) {
        lnode *v = x->f->nodes[i];
        if (v->kind == LK_INPUT)
            o->stored[i] = true;
        if (!x->anchor[i])
            continue;
        /* a value cut by the inline limit is stored only where another
         * kernel reads it; in its readers' kernel it is computed inline */
        if ((v->kind != LK_REDUCE && !x->cut[i]) || v->output >= 0)
            o->stored[i] = true;
        for (int j = 0; j < x->deps[i].n; j++) {
            lnode *dpd = x->deps[i].v[j];
            if (o->kernel_of[dpd->id] != o->kernel_of[i])
                o->stored[dpd->id] = true;
        }
    }
    for (int i = 0; i < n; i++) {
        lnode *v = x->f->nodes[i];
        if (v->kind == LK_MATMUL)
            for (int j = 0; j < 2; j++)
                o->stored[v->in[j].src->id] = true;
    }

    /* each kernel's lists, in node order, from its members alone */
    for (int i = 0; i < n; i++)
        st[i] = 0;
    int *root_of_k = ARENA_ARRAY(x->a, int, nroots > 0 ? nroots : 1);
    for (int r = 0; r < n; r++)
        if (x->anchor[r] && find(x, r) == r)
            root_of_k[kid[r]] = r;
    for (int kk = 0; kk < o->nk; kk++) {
        fkernel *k = o->k[kk];
        int r = root_of_k[kk];
        ilist mem = {0}, inl = {0}, rd = {0};
        FOR_MEMBERS(x, r, -1, i)
            ipush(x->a, &mem, i);
        qsort(mem.v, (size_t)mem.n, sizeof *mem.v, cmp_int);
        int nred = 0, nst = 0;
        for (int q = 0; q < mem.n; q++) {
            int i = mem.v[q];
            lnode *v = x->f->nodes[i];
            if (v->kind != LK_REDUCE && !o->stored[i] && st[i] != k->id + 1) {
                st[i] = k->id + 1; /* a cut value that stayed in one kernel */
                ipush(x->a, &inl, i);
            }
            nred += v->kind == LK_REDUCE;
            nst += o->stored[i] && v->kind != LK_MATMUL;
            if (v->kind == LK_MATMUL) {
                k->ext = v;
                for (int j = 0; j < 2; j++)
                    if (st[v->in[j].src->id] != k->id + 1) {
                        st[v->in[j].src->id] = k->id + 1;
                        ipush(x->a, &rd, v->in[j].src->id);
                    }
            } else {
                gather(x, k, v, st, &inl, &rd);
            }
        }
        if (inl.n)
            qsort(inl.v, (size_t)inl.n, sizeof *inl.v, cmp_int);
        if (rd.n)
            qsort(rd.v, (size_t)rd.n, sizeof *rd.v, cmp_int);
        k->reds = ARENA_ARRAY(x->a, lnode *, nred > 0 ? nred : 1);
        k->stores = ARENA_ARRAY(x->a, lnode *, nst > 0 ? nst : 1);
        k->inl = ARENA_ARRAY(x->a, lnode *, inl.n > 0 ? inl.n : 1);
        k->reads = ARENA_ARRAY(x->a, lnode *, rd.n > 0 ? rd.n : 1);
        for (int q = 0; q < mem.n; q++) {
            lnode *v = x->f->nodes[mem.v[q]];
            if (v->kind == LK_REDUCE)
                k->reds[k->nreds++] = v;
            if (o->stored[v->id] && v->kind != LK_MATMUL)
                k->stores[k->nstores++] = v;
        }
        for (int q = 0; q < inl.n; q++)
            k->inl[k->ninl++] = x->f->nodes[inl.v[q]];
        for (int q = 0; q < rd.n; q++)
            k->reads[k->nreads++] = x->f->nodes[rd.v[q]];
        k->name = kernel_name(x, k, mem.v, mem.n, inl.v, inl.n);
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

static void horizontal(fctx *x, ilist *readers)
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
            bool ok = try_merge(x, j, i);
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
static void elementwise_one(fctx *x)
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
        bool ok = try_merge(x, base, i);
        decide(x, x->f->nodes[base], x->f->nodes[i], ok,
               ok ? "horizontal: an elementwise function is one kernel (foreach)" : x->why);
        base = find(x, base);
    }
}

ffn *fuse_fn(const lfn *f, tc_arena *a, tc_diag *d)
{
    return fuse_fn_budget(f, &fuse_default_budget, a, d);
}

ffn *fuse_fn_budget(const lfn *f, const fuse_budget *bud, tc_arena *a, tc_diag *d)
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

    /* vertical: each anchor with the kernels of what it reads */
    for (int i = 0; i < x.n; i++) {
        if (!x.anchor[i])
            continue;
        x.horizon = i;
        lnode *c = f->nodes[i];
        for (int j = x.deps[i].n - 1; j >= 0; j--) {
            lnode *p = x.deps[i].v[j];
            kdesc dp = x.desc[find(&x, p->id)], dc = x.desc[find(&x, i)];
            if (find(&x, p->id) == find(&x, i)) {
                decide(&x, p, c, true, "already in one kernel");
                continue;
            }
            x.why = NULL;
            bool ok = try_merge(&x, p->id, i);
            decide(&x, p, c, ok, ok ? fused_why(dp, dc, p, c) : x.why);
        }
    }
    /* horizontal: kernels with one domain that read a common buffer */
    x.horizon = x.n;
    horizontal(&x, ARENA_ARRAY(a, ilist, n));
    if (f->g->elementwise)
        elementwise_one(&x);
    build_kernels(&x);
    return o;
}

/* ---- printing -------------------------------------------------------------- */

static void print_dom(tc_buf *b, const fkernel *k)
{
    buf_putc(b, '[');
    for (int i = 0; i < k->rank; i++) {
        if (i)
            buf_puts(b, ", ");
        dim_print(b, k->dom[i]);
    }
    buf_putc(b, ']');
}

static const char *node_label(const lnode *n)
{
    if (n->kind == LK_REDUCE)
        return red_kind_name(n->a.red.kind);
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR)
        return "param";
    return op_table[n->op].name;
}

static void print_where(tc_buf *b, const ffn *f, const lnode *n)
{
    if (n->kind == LK_INPUT) {
        buf_puts(b, f->l->g->params[n->a.param].name);
        return;
    }
    buf_printf(b, "%%%d", n->id);
    for (int i = 0; i < f->l->noutputs; i++)
        if (f->l->outputs[i].node == n) {
            buf_printf(b, " -> %s", f->l->outputs[i].name);
            break;
        }
}

void fuse_print(tc_buf *b, const ffn *f)
{
    graph_print_signature(b, f->l->g);
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        buf_printf(b, "  kernel %d %s: ", k->id, k->name);
        if (k->kind == KK_EXTERN) {
            buf_printf(b, "extern matmul %%%d", k->ext->id);
        } else if (k->kind == KK_POINTWISE) {
            buf_puts(b, "pointwise over ");
            print_dom(b, k);
        } else {
            buf_puts(b, "reduce over ");
            print_dom(b, k);
            buf_puts(b, " axes [");
            int m = 0;
            for (int a = 0; a < k->rank; a++)
                if (k->mask & (1u << a))
                    buf_printf(b, "%s%d", m++ ? ", " : "", a);
            buf_printf(b, "]%s", k->inner ? " (rows)" : "");
        }
        buf_putc(b, '\n');
        if (k->nreds) {
            buf_puts(b, "    reduces");
            for (int j = 0; j < k->nreds; j++)
                buf_printf(b, "%s %%%d %s", j ? "," : "", k->reds[j]->id, red_kind_name(k->reds[j]->a.red.kind));
            buf_putc(b, '\n');
        }
        if (k->nstores) {
            buf_puts(b, "    stores ");
            for (int j = 0; j < k->nstores; j++) {
                buf_puts(b, j ? ", " : " ");
                print_where(b, f, k->stores[j]);
            }
            buf_putc(b, '\n');
        }
        if (k->ninl) {
            buf_puts(b, "    inlines");
            for (int j = 0; j < k->ninl; j++)
                buf_printf(b, "%s %%%d %s", j ? "," : "", k->inl[j]->id, node_label(k->inl[j]));
            buf_putc(b, '\n');
        }
        if (k->nreads) {
            buf_puts(b, "    reads  ");
            for (int j = 0; j < k->nreads; j++) {
                buf_puts(b, j ? ", " : " ");
                if (k->reads[j]->kind == LK_INPUT)
                    buf_puts(b, f->l->g->params[k->reads[j]->a.param].name);
                else
                    buf_printf(b, "%%%d (kernel %d)", k->reads[j]->id, f->kernel_of[k->reads[j]->id]);
            }
            buf_putc(b, '\n');
        }
    }
}

void fuse_explain(tc_buf *b, const ffn *f)
{
    const fuse_budget *bu = &f->budget;
    buf_printf(b, "fn %s: %d kernel%s\n", f->l->g->name, f->nk, f->nk == 1 ? "" : "s");
    buf_printf(b, "  budget: %d passes, %d nodes of work, %d inlined nodes or %d reductions per value, "
                  "%d registers%s\n",
               bu->max_passes, bu->max_work, bu->max_inline, bu->max_passes, bu->max_regs,
               f->l->g->elementwise ? " (not applied: an elementwise function is one kernel)" : "");
    for (int i = 0; i < f->ncut; i++) {
        const fcut *c = &f->cut[i];
        buf_printf(b, "  split   %%%d %s: budget (inline): its expression would inline %d nodes and read %d "
                      "reductions (at most %d and %d); computed once%s\n",
                   c->n->id, node_label(c->n), c->size, c->reds, bu->max_inline, bu->max_passes,
                   f->stored[c->n->id] ? " and stored for the kernels after" : ", inline in its readers' kernel");
    }
    for (int i = 0; i < f->ndec; i++) {
        const fdecision *d = &f->dec[i];
        buf_printf(b, "  %s %%%d %s -> %%%d %s: %s\n", d->fused ? "fused  " : d->limit ? "split  " : "refused",
                   d->producer->id, node_label(d->producer), d->consumer->id,
                   node_label(d->consumer), d->why ? d->why : "?");
    }
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        if (k->kind != KK_EXTERN)
            buf_printf(b, "  kernel %d (%s): cost %d pass%s, %d nodes of work, about %d registers\n", k->id,
                       k->name, k->passes, k->passes == 1 ? "" : "es", k->work, k->regs);
        for (int j = 0; j < k->ninl; j++)
            buf_printf(b, "  inlined %%%d %s into kernel %d (%s): pointwise, recomputed where "
                       "read instead of stored\n",
                       k->inl[j]->id, node_label(k->inl[j]), k->id, k->name);
    }
}

void fuse_verify(const ffn *f, tc_diag *d)
{
    const lfn *l = f->l;
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        if (k->id != i)
            diag_error(d, TC_ERR_INTERNAL, l->g->loc, "fusion: kernel %d out of place", k->id);
        for (int j = 0; j < k->nreads; j++) {
            const lnode *r = k->reads[j];
            if (r->kind != LK_INPUT && (f->kernel_of[r->id] < 0 || f->kernel_of[r->id] >= i))
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d reads %%%d before it is written", i, r->id);
            if (!f->stored[r->id])
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d reads %%%d, which is not stored", i, r->id);
        }
        for (int j = 0; j < k->nstores; j++) {
            const tc_dim *idx[TC_MAX_RANK];
            if (k->kind != KK_EXTERN && !fuse_node_index(f, k, k->stores[j], idx))
                diag_error(d, TC_ERR_INTERNAL, l->g->loc,
                           "fusion: kernel %d stores %%%d outside its domain", i, k->stores[j]->id);
        }
    }
    for (int i = 0; i < l->noutputs; i++)
        if (!f->stored[l->outputs[i].node->id])
            diag_error(d, TC_ERR_INTERNAL, l->g->loc, "fusion: output %s is not stored",
                       l->outputs[i].name);
}
