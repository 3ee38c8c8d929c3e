/* fuse.c - anchors, merging by the rules of fuse.h, launch order.
 *
 * Union-find over anchor nodes; a set's root carries the kernel's domain.
 * A merge is tried, checked (domains, row consistency, cycles) and undone
 * when a check fails, so every rule lives in one predicate: can_merge().
 */
#include "fuse/fuse.h"

#include <stdio.h>
#include <string.h>

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

typedef struct fctx {
    const lfn *f;
    tc_arena *a;
    tc_diag *d;
    int n;                  /* nodes */
    bool *anchor;
    int *parent;            /* union-find over node ids (anchors only) */
    kdesc *desc;            /* valid at roots */
    deplist *deps;          /* anchor -> anchors its inlined expression reads */
    deplist *params;        /* anchor -> leaf inputs it reads */
    ffn *out;
    int capdec;
    visit **seen;           /* row check memo, per node */
    int epoch;
    int *seen_epoch;
    const char *why;        /* the reason a check failed */
} fctx;

static void push(tc_arena *a, deplist *l, lnode *n)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == n)
            return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        lnode **v = ARENA_ARRAY(a, lnode *, cap);
        if (l->n)
            memcpy(v, l->v, sizeof *v * (size_t)l->n);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
}

static int find(fctx *x, int i)
{
    while (x->parent[i] != i)
        i = x->parent[i] = x->parent[x->parent[i]];
    return i;
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

static void decide(fctx *x, const lnode *p, const lnode *c, bool fused, const char *why)
{
    ffn *o = x->out;
    for (int i = 0; i < o->ndec; i++) /* one line per pair and outcome */
        if (o->dec[i].producer == p && o->dec[i].consumer == c && o->dec[i].fused == fused)
            return;
    if (o->ndec == x->capdec) {
        int cap = x->capdec ? 2 * x->capdec : 32;
        fdecision *v = ARENA_ARRAY(x->a, fdecision, cap);
        if (o->ndec)
            memcpy(v, o->dec, sizeof *v * (size_t)o->ndec);
        o->dec = v;
        x->capdec = cap;
    }
    o->dec[o->ndec++] = (fdecision){p, c, fused, why};
}

/* ---- anchors and what they read ----------------------------------------- */

static void collect(fctx *x, lnode *n, deplist *deps, deplist *params, bool *mark)
{
    for (int i = 0; i < n->nin; i++) {
        lnode *s = n->in[i].src;
        if (x->anchor[s->id]) {
            push(x->a, deps, s);
        } else if (is_leaf(s)) {
            if (s->kind == LK_INPUT)
                push(x->a, params, s);
        } else if (!mark[s->id]) {
            mark[s->id] = true;
            collect(x, s, deps, params, mark);
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

/* Walk what kernel `root` computes for n at idx (over the kernel's
 * variables): a reduction of this kernel must be read at its own row. */
static bool rows_ok(fctx *x, int root, lnode *n, const tc_dim **idx)
{
    if (is_leaf(n) || seen_before(x, n, idx))
        return true;
    if (x->anchor[n->id] && find(x, n->id) != root)
        return true; /* loaded from another kernel's buffer */
    if (n->kind == LK_REDUCE) {
        const tc_dim *want[TC_MAX_RANK];
        if (!node_index(x->f, x->desc[root], n, want)) {
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
        if (!rows_ok(x, root, r->src, ci))
            return false;
    }
    return true;
}

static bool kernel_rows_ok(fctx *x, int root)
{
    x->epoch++;
    for (int i = 0; i < x->n; i++) {
        lnode *n = x->f->nodes[i];
        if (!x->anchor[i] || find(x, i) != root)
            continue;
        if (n->kind == LK_REDUCE) {
            /* its input is read over the domain itself */
            const lref *r = &n->in[0];
            if (!rows_ok(x, root, r->src, r->idx))
                return false;
            continue;
        }
        const tc_dim **idx = ARENA_ARRAY(x->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
        if (!node_index(x->f, x->desc[root], n, idx)) {
            x->why = "a store's shape is neither the domain nor its rows";
            return false;
        }
        for (int j = 0; j < n->nin; j++) {
            const lref *r = &n->in[j];
            const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
            lir_compose(x->f, r, idx, n->rank, ci);
            if (!rows_ok(x, root, r->src, ci))
                return false;
        }
    }
    return true;
}

/* ---- cycles ----------------------------------------------------------------- */

/* Is there a path from kernel a to kernel b that passes through a third
 * kernel?  (Merging a and b would then put a kernel both before and after
 * the merged one.) */
static bool path_via_other(fctx *x, int a, int b)
{
    char *reach = ARENA_ARRAY(x->a, char, x->n);
    int *stack = ARENA_ARRAY(x->a, int, x->n + 1);
    int sp = 0;
    /* successors of a, other than b */
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i])
            continue;
        int ri = find(x, i);
        if (ri == a || ri == b || reach[ri])
            continue;
        for (int j = 0; j < x->deps[i].n; j++)
            if (find(x, x->deps[i].v[j]->id) == a) {
                reach[ri] = 1;
                stack[sp++] = ri;
                break;
            }
    }
    while (sp > 0) {
        int k = stack[--sp];
        for (int i = 0; i < x->n; i++) {
            if (!x->anchor[i])
                continue;
            int ri = find(x, i);
            if (reach[ri] == 1 && ri != b)
                continue;
            for (int j = 0; j < x->deps[i].n; j++)
                if (find(x, x->deps[i].v[j]->id) == k) {
                    if (ri == b)
                        return true;
                    if (!reach[ri]) {
                        reach[ri] = 1;
                        stack[sp++] = ri;
                    }
                    break;
                }
        }
    }
    return false;
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
        unsigned all = da.rank >= 32 ? ~0u : (1u << da.rank) - 1;
        if (da.mask == all) {
            for (int i = 0; i < x->n; i++) {
                int ri = x->anchor[i] ? find(x, i) : -1;
                if ((ri == a && reads_kernel(x, x->f->nodes[i], b)) ||
                    (ri == b && reads_kernel(x, x->f->nodes[i], a))) {
                    x->why = "a whole-tensor reduction that needs another's result would need a "
                             "grid-wide sync";
                    return false;
                }
            }
        }
        *out = da;
        return true;
    }
    int r = da.kind == KK_REDUCE ? a : b, p = r == a ? b : a;
    kdesc dr = x->desc[r];
    bool inner = inner_reduction(dr.rank, dr.mask);
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i] || find(x, i) != p)
            continue;
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

static bool try_merge(fctx *x, int a, int b)
{
    a = find(x, a);
    b = find(x, b);
    if (a == b)
        return true;
    kdesc m;
    if (!merged_desc(x, a, b, &m))
        return false;
    if (path_via_other(x, a, b) || path_via_other(x, b, a)) {
        x->why = "fusing would create a cycle through another kernel";
        return false;
    }
    int keep = a < b ? a : b, gone = keep == a ? b : a;
    int saved = x->parent[gone];
    kdesc sk = x->desc[keep];
    x->parent[gone] = keep;
    x->desc[keep] = m;
    if (!kernel_rows_ok(x, keep)) {
        x->parent[gone] = saved;
        x->desc[keep] = sk;
        return false;
    }
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
}

static bool shares_read(fctx *x, int a, int b)
{
    for (int i = 0; i < x->n; i++) {
        if (!x->anchor[i] || find(x, i) != a)
            continue;
        for (int j = 0; j < x->n; j++) {
            if (!x->anchor[j] || find(x, j) != b)
                continue;
            for (int p = 0; p < x->params[i].n; p++)
                for (int q = 0; q < x->params[j].n; q++)
                    if (x->params[i].v[p] == x->params[j].v[q])
                        return true;
            for (int p = 0; p < x->deps[i].n; p++)
                for (int q = 0; q < x->deps[j].n; q++)
                    if (x->deps[i].v[p] == x->deps[j].v[q])
                        return true;
        }
    }
    return false;
}

/* Walk the inline closure of kernel k from node n. */
static void gather(fctx *x, fkernel *k, lnode *n, bool *inl, bool *rd)
{
    for (int i = 0; i < n->nin; i++) {
        lnode *s = n->in[i].src;
        if (is_leaf(s)) {
            if (s->kind == LK_INPUT)
                rd[s->id] = true;
        } else if (x->anchor[s->id]) {
            if (x->out->kernel_of[s->id] != k->id)
                rd[s->id] = true; /* else a member of this kernel, gathered on its own */
        } else if (!inl[s->id]) {
            inl[s->id] = true;
            gather(x, k, s, inl, rd);
        }
    }
}

static const char *kernel_name(fctx *x, fkernel *k, const bool *member)
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
    for (int i = 0; i < x->n && nseen < 6; i++) {
        if (!member[i])
            continue;
        const lnode *n = x->f->nodes[i];
        const char *nm = n->kind == LK_REDUCE ? red_kind_name(n->a.red.kind) : op_table[n->op].name;
        bool dup = false;
        for (int j = 0; j < nseen; j++)
            dup |= strcmp(seen[j], nm) == 0;
        if (!dup) {
            seen[nseen++] = nm;
            buf_printf(&b, "_%s", nm);
        }
    }
    buf_printf(&b, "_%d", k->id);
    return buf_str(&b);
}

static void build_kernels(fctx *x)
{
    ffn *o = x->out;
    int n = x->n;
    /* roots in launch order: Kahn over kernel dependencies, lowest anchor first */
    int *indeg = ARENA_ARRAY(x->a, int, n);
    bool *isroot = ARENA_ARRAY(x->a, bool, n);
    for (int i = 0; i < n; i++)
        if (x->anchor[i])
            isroot[find(x, i)] = true;
    bool **edge = ARENA_ARRAY(x->a, bool *, n);
    for (int i = 0; i < n; i++)
        if (isroot[i])
            edge[i] = ARENA_ARRAY(x->a, bool, n);
    for (int i = 0; i < n; i++) {
        if (!x->anchor[i])
            continue;
        int ri = find(x, i);
        for (int j = 0; j < x->deps[i].n; j++) {
            int rd = find(x, x->deps[i].v[j]->id);
            if (rd != ri && !edge[rd][ri]) {
                edge[rd][ri] = true;
                indeg[ri]++;
            }
        }
    }
    int nroots = 0;
    for (int i = 0; i < n; i++)
        nroots += isroot[i];
    o->k = ARENA_ARRAY(x->a, fkernel *, nroots > 0 ? nroots : 1);
    bool *done = ARENA_ARRAY(x->a, bool, n);
    int *kid = ARENA_ARRAY(x->a, int, n);
    for (int step = 0; step < nroots; step++) {
        int pick = -1;
        for (int i = 0; i < n && pick < 0; i++)
            if (isroot[i] && !done[i] && indeg[i] == 0)
                pick = i;
        if (pick < 0)
            diag_error(x->d, TC_ERR_INTERNAL, x->f->g->loc, "fusion: the kernels form a cycle");
        done[pick] = true;
        for (int j = 0; j < n; j++)
            if (isroot[j] && edge[pick][j])
                indeg[j]--;
        fkernel *k = ARENA_NEW(x->a, fkernel);
        k->id = o->nk;
        kid[pick] = k->id;
        kdesc d = x->desc[pick];
        k->kind = d.kind;
        k->rank = d.rank;
        k->dom = (const tc_dim **)d.dom;
        k->mask = d.mask;
        k->inner = d.kind == KK_REDUCE && inner_reduction(d.rank, d.mask);
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
        if (v->kind != LK_REDUCE || v->output >= 0)
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

    bool *inl = ARENA_ARRAY(x->a, bool, n);
    bool *rd = ARENA_ARRAY(x->a, bool, n);
    bool *member = ARENA_ARRAY(x->a, bool, n);
    for (int kk = 0; kk < o->nk; kk++) {
        fkernel *k = o->k[kk];
        memset(inl, 0, (size_t)n);
        memset(rd, 0, (size_t)n);
        int nred = 0, nst = 0;
        for (int i = 0; i < n; i++) {
            if (o->kernel_of[i] != k->id)
                continue;
            lnode *v = x->f->nodes[i];
            nred += v->kind == LK_REDUCE;
            nst += o->stored[i] && v->kind != LK_MATMUL;
            if (v->kind == LK_MATMUL) {
                k->ext = v;
                for (int j = 0; j < 2; j++)
                    rd[v->in[j].src->id] = true;
            } else {
                gather(x, k, v, inl, rd);
            }
        }
        k->reds = ARENA_ARRAY(x->a, lnode *, nred > 0 ? nred : 1);
        k->stores = ARENA_ARRAY(x->a, lnode *, nst > 0 ? nst : 1);
        int ni = 0, nr = 0;
        for (int i = 0; i < n; i++) {
            ni += inl[i];
            nr += rd[i];
        }
        k->inl = ARENA_ARRAY(x->a, lnode *, ni > 0 ? ni : 1);
        k->reads = ARENA_ARRAY(x->a, lnode *, nr > 0 ? nr : 1);
        for (int i = 0; i < n; i++) {
            lnode *v = x->f->nodes[i];
            member[i] = inl[i];
            if (o->kernel_of[i] == k->id) {
                member[i] = v->kind != LK_MATMUL;
                if (v->kind == LK_REDUCE)
                    k->reds[k->nreds++] = v;
                if (o->stored[i] && v->kind != LK_MATMUL)
                    k->stores[k->nstores++] = v;
            }
            if (inl[i])
                k->inl[k->ninl++] = v;
            if (rd[i])
                k->reads[k->nreads++] = v;
        }
        k->name = kernel_name(x, k, member);
    }
}

ffn *fuse_fn(const lfn *f, tc_arena *a, tc_diag *d)
{
    fctx x = {0};
    x.f = f;
    x.a = a;
    x.d = d;
    x.n = f->nnodes;
    int n = x.n > 0 ? x.n : 1;
    x.anchor = ARENA_ARRAY(a, bool, n);
    x.parent = ARENA_ARRAY(a, int, n);
    x.desc = ARENA_ARRAY(a, kdesc, n);
    x.deps = ARENA_ARRAY(a, deplist, n);
    x.params = ARENA_ARRAY(a, deplist, n);
    x.seen = ARENA_ARRAY(a, visit *, n);
    x.seen_epoch = ARENA_ARRAY(a, int, n);
    ffn *o = ARENA_NEW(a, ffn);
    o->l = f;
    o->kernel_of = ARENA_ARRAY(a, int, n);
    o->stored = ARENA_ARRAY(a, bool, n);
    x.out = o;

    mark_anchors(&x);
    bool *mark = ARENA_ARRAY(a, bool, n);
    for (int i = 0; i < x.n; i++) {
        x.parent[i] = i;
        if (!x.anchor[i])
            continue;
        x.desc[i] = own_desc(f->nodes[i]);
        memset(mark, 0, (size_t)n);
        collect(&x, f->nodes[i], &x.deps[i], &x.params[i], mark);
    }

    /* vertical: each anchor with the kernels of what it reads */
    for (int i = 0; i < x.n; i++) {
        if (!x.anchor[i])
            continue;
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
    for (int i = 0; i < x.n; i++) {
        if (!x.anchor[i] || find(&x, i) != i || x.desc[i].kind == KK_EXTERN)
            continue;
        for (int j = 0; j < i; j++) {
            if (!x.anchor[j] || find(&x, j) != j || x.desc[j].kind == KK_EXTERN)
                continue;
            if (!shares_read(&x, i, j))
                continue;
            x.why = NULL;
            bool ok = try_merge(&x, j, i);
            decide(&x, f->nodes[j], f->nodes[i], ok,
                   ok ? "horizontal: one domain, a common input read once" : x.why);
            if (ok)
                break;
        }
    }
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
    buf_printf(b, "fn %s: %d kernel%s\n", f->l->g->name, f->nk, f->nk == 1 ? "" : "s");
    for (int i = 0; i < f->ndec; i++) {
        const fdecision *d = &f->dec[i];
        buf_printf(b, "  %s %%%d %s -> %%%d %s: %s\n", d->fused ? "fused  " : "refused",
                   d->producer->id, node_label(d->producer), d->consumer->id,
                   node_label(d->consumer), d->why ? d->why : "?");
    }
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
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
