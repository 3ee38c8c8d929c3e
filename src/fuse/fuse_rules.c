/* fuse_rules.c - whether two kernels may become one (fuse.h's rules), and
 * the merge itself: the merged domain (pointwise with pointwise over one
 * shape, a reduction with its prologue, epilogue or row-level stores, two
 * reductions over one domain and axes), every reduction read at the row
 * computing it, no cycle through a third kernel, then the cost
 * (fuse_cost.c).  Also the natural index of a member (fuse_node_index),
 * which codegen and sched use.  Each check walks only the two kernels. */
#include "fuse/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

bool fuse_is_element(const fkernel *k, const lnode *n)
{
    return n->kind != LK_REDUCE && same_shape(n->rank, n->shape, k->rank, k->dom);
}

/* n's shape is (rank, dom) with one more dim of 2..FUSE_PLANES at *axis. */
static bool plane_shape(int rank, const tc_dim *const *dom, const lnode *n, int *axis, int *count)
{
    if (n->kind == LK_REDUCE || n->rank != rank + 1)
        return false;
    for (int q = 0; q <= rank; q++) {
        int64_t e;
        if (!dim_is_const(n->shape[q], &e) || e < 2 || e > FUSE_PLANES)
            continue;
        bool ok = true;
        for (int k = 0, j = 0; k < n->rank && ok; k++)
            if (k != q)
                ok = dim_eq(n->shape[k], dom[j++]);
        if (ok) {
            *axis = q;
            *count = (int)e;
            return true;
        }
    }
    return false;
}

bool fuse_plane(const fkernel *k, const lnode *n, int *axis, int *count)
{
    return k->kind == KK_SCAN && plane_shape(k->rank, k->dom, n, axis, count);
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
    kdesc kd = {k->kind, k->rank, k->dom, k->mask, k->reverse};
    return node_index(f->l, kd, n, out);
}

/* ---- row consistency -------------------------------------------------------- */

/* Has n been checked at idx already, in the same situation (the walk of a
 * scan kernel, or its final store: a reduction of the walk is readable in
 * the second only, so a visit from one is no answer for the other)? */
static bool seen_before(fctx *x, const lnode *n, const tc_dim **idx)
{
    if (x->seen_epoch[n->id] != x->epoch) {
        x->seen_epoch[n->id] = x->epoch;
        x->seen[n->id] = NULL;
    }
    for (visit *v = x->seen[n->id]; v; v = v->next) {
        bool eq = v->scan_end == x->scan_end;
        for (int k = 0; k < n->rank && eq; k++)
            eq = v->idx[k] == idx[k];
        if (eq)
            return true;
    }
    visit *v = ARENA_NEW(x->a, visit);
    v->idx = idx;
    v->scan_end = x->scan_end;
    v->next = x->seen[n->id];
    x->seen[n->id] = v;
    return false;
}

/* A gather's source is read at positions its index gives at run time, so
 * it must come from another (earlier) kernel's buffer, never this one. */
static bool gather_ok(fctx *x, int ka, int kb, const lnode *n)
{
    if (n->kind == LK_GATHER && in_k(x, n->in[0].src->id, ka, kb)) {
        x->why = "a gather's source must be stored by an earlier kernel (it is read at run-time "
                 "positions)";
        return false;
    }
    return true;
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
        if (kd.kind == KK_SCAN && !x->scan_end) { /* its carry is complete after the walk only */
            x->why = "a scan's walk would read a reduction of its kernel before the walk ends";
            return false;
        }
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
    if (n->kind == LK_SCAN) {
        /* its own element is the one the walk has just computed (the
         * scan's input is checked as the member it is); a store of the
         * final elements reads the carries after the walk */
        bool ok = same_shape(n->rank, n->shape, kd.rank, kd.dom);
        for (int k = 0; ok && k < n->rank; k++) {
            const tc_dim *want = x->f->vars[k];
            if ((kd.mask & (1u << k)) && x->scan_end)
                want = kd.reverse ? dim_const(x->f->dims, 0)
                                  : dim_sub(x->f->dims, kd.dom[k], dim_const(x->f->dims, 1));
            ok = dim_eq(idx[k], want);
        }
        if (!ok)
            x->why = x->scan_end ? "a store of a scan's last elements reads another element"
                                 : "a scan would be read at another element than the one its walk is at";
        return ok;
    }
    if (n->kind == LK_MATMUL) {
        /* a matmul of this kernel (its epilogue) is its accumulator: only
         * the element the epilogue is at */
        for (int k = 0; k < n->rank; k++)
            if (k >= kd.rank || !dim_eq(idx[k], x->f->vars[k])) {
                x->why = "the matmul's epilogue would read another element of its product";
                return false;
            }
        return true;
    }
    if (!gather_ok(x, ka, kb, n))
        return false;
    int64_t at, lo, hi;
    if (n->kind == LK_CONCAT && dim_is_const(idx[n->a.cat.axis], &at)) {
        /* a plane store's constant index: codegen reads the one piece */
        for (int i = 0; i < n->nin; i++)
            if (dim_is_const(n->a.cat.offsets[i], &lo) && dim_is_const(n->a.cat.offsets[i + 1], &hi) &&
                lo <= at && at < hi) {
                const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, n->in[i].src->rank > 0 ? n->in[i].src->rank : 1);
                lir_compose(x->f, &n->in[i], idx, n->rank, ci);
                return rows_ok(x, ka, kb, kd, n->in[i].src, ci);
            }
    }
    for (int i = n->kind == LK_GATHER; i < n->nin; i++) { /* a gather's source: a load */
        const lref *r = &n->in[i];
        const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
        lir_compose(x->f, r, idx, n->rank, ci);
        if (!rows_ok(x, ka, kb, kd, r->src, ci))
            return false;
    }
    return true;
}

static bool kernel_rows_ok(fctx *x, int ka, int kb, kdesc kd)
{
    x->epoch++;
    FOR_MEMBERS(x, ka, kb, i) {
        lnode *n = x->f->nodes[i];
        if (n->kind == LK_REDUCE) {
            /* its input is read over the domain itself */
            const lref *r = &n->in[0];
            x->scan_end = false;
            if (!rows_ok(x, ka, kb, kd, r->src, r->idx))
                return false;
            continue;
        }
        const tc_dim **idx = ARENA_ARRAY(x->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
        int pq, pe;
        if (kd.kind == KK_SCAN && plane_shape(kd.rank, kd.dom, n, &pq, &pe)) {
            /* each plane at the element the walk is at */
            x->scan_end = false;
            for (int c = 0; c < pe; c++) {
                for (int k = 0, j = 0; k < n->rank; k++)
                    idx[k] = k == pq ? dim_const(x->f->dims, c) : x->f->vars[j++];
                x->epoch++;
                for (int j = 0; j < n->nin; j++) {
                    const lref *r = &n->in[j];
                    const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
                    lir_compose(x->f, r, idx, n->rank, ci);
                    if (!rows_ok(x, ka, kb, kd, r->src, ci))
                        return false;
                }
                if (!gather_ok(x, ka, kb, n))
                    return false;
            }
            continue;
        }
        x->scan_end = kd.kind == KK_SCAN && !same_shape(n->rank, n->shape, kd.rank, kd.dom);
        if (!node_index(x->f, kd, n, idx)) {
            x->why = "a store's shape is neither the domain nor its rows";
            return false;
        }
        if (!gather_ok(x, ka, kb, n))
            return false;
        for (int j = n->kind == LK_GATHER; j < n->nin; j++) {
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

/* Does a member of kernel ka read kernel kb? */
static bool kernel_reads(fctx *x, int ka, int kb)
{
    FOR_MEMBERS(x, ka, -1, i)
        if (reads_kernel(x, x->f->nodes[i], kb))
            return true;
    return false;
}

/* A scan kernel with another: scans of one domain, axis and direction, or
 * pointwise stores over its domain that it feeds or that feed it (a
 * pointwise kernel that only shares an input stays parallel over every
 * element, not one thread a lane). */
static bool scan_desc(fctx *x, int a, int b, kdesc *out)
{
    kdesc da = x->desc[a], db = x->desc[b];
    if (da.kind == KK_REDUCE || db.kind == KK_REDUCE) {
        /* a sum/prod/max/min over the scanned axis of the scan's domain is
         * one more carry of the walk, read after it (a backward's dstate:
         * no second pass over the inputs); a read inside the walk is
         * refused by rows_ok */
        int r = da.kind == KK_REDUCE ? a : b;
        kdesc ds = r == a ? db : da, dr = x->desc[r];
        bool ok = same_shape(ds.rank, ds.dom, dr.rank, dr.dom) && ds.mask == dr.mask;
        FOR_MEMBERS(x, r, -1, i) {
            const lnode *v = x->f->nodes[i];
            ok &= v->kind != LK_REDUCE || v->a.red.kind == RK_SUM || v->a.red.kind == RK_PROD ||
                  v->a.red.kind == RK_MAX || v->a.red.kind == RK_MIN;
        }
        if (!ok) {
            x->why = "a scan takes a reduction only over its own domain and axis (sum, prod, max or "
                     "min: a carry of the walk)";
            return false;
        }
        *out = ds;
        return true;
    }
    if (da.kind == KK_SCAN && db.kind == KK_SCAN) {
        if (!same_shape(da.rank, da.dom, db.rank, db.dom)) {
            x->why = "scans over different domains";
            return false;
        }
        if (da.mask != db.mask || da.reverse != db.reverse) {
            x->why = "scans along different axes or directions";
            return false;
        }
        *out = da;
        return true;
    }
    int s = da.kind == KK_SCAN ? a : b, p = s == a ? b : a;
    kdesc ds = x->desc[s];
    /* the pointwise stores: over the scan's domain, or its final elements
     * (the scanned axis 1 long: minGRU's next state), computed after the walk */
    FOR_MEMBERS(x, p, -1, i) {
        const lnode *v = x->f->nodes[i];
        const tc_dim *idx[TC_MAX_RANK];
        int pq, pe;
        if (!same_shape(v->rank, v->shape, ds.rank, ds.dom) && !plane_shape(ds.rank, ds.dom, v, &pq, &pe) &&
            (v->rank != ds.rank || !row_index(x->f, ds.rank, ds.dom, ds.mask, v, idx) ||
             !reads_kernel(x, v, s))) {
            x->why = "a scan takes pointwise work over its own domain (or with one more dim of up to 4 "
                     "planes), or stores of its last elements";
            return false;
        }
    }
    if (!kernel_reads(x, p, s) && !kernel_reads(x, s, p)) {
        x->why = "a pointwise kernel that only shares an input with a scan stays parallel";
        return false;
    }
    *out = x->desc[s];
    return true;
}

bool fuse_matmul_generated(const tc_knobs *k, const lnode *m)
{
    if (m->dtype != TC_F32 && m->dtype != TC_F16 && m->dtype != TC_BF16)
        return false;
    if (k->matmul == KNOB_MM_CUBLAS)
        return false;
    if (k->matmul == KNOB_MM_GENERATED)
        return true;
    int64_t rows;
    return m->dtype != TC_F32 && dim_is_const(m->shape[m->rank - 2], &rows) &&
           rows <= FUSE_MM_MAX_ROWS;
}

/* A matmul's kernel with a pointwise kernel that reads it (fuse.h): the
 * epilogue runs on the output tile in the generated kernel, so only where
 * that kernel is certain at compile time. */
static bool epilogue_desc(fctx *x, int a, int b, kdesc *out)
{
    kdesc da = x->desc[a], db = x->desc[b];
    if (da.kind == KK_EXTERN && db.kind == KK_EXTERN) {
        x->why = "a matmul is a fusion barrier to another matmul (two kernels)";
        return false;
    }
    int e = da.kind == KK_EXTERN ? a : b, p = e == a ? b : a;
    kdesc de = x->desc[e], dp = x->desc[p];
    const lnode *m = NULL;
    FOR_MEMBERS(x, e, -1, i)
        if (x->f->nodes[i]->kind == LK_MATMUL)
            m = x->f->nodes[i];
    if (!x->out->knobs.matmul_epilogue) {
        x->why = "a matmul is a fusion barrier (TENSORC_MATMUL_EPILOGUE=off)";
        return false;
    }
    if (dp.kind != KK_POINTWISE) {
        x->why = "a matmul is a fusion barrier but for a pointwise epilogue";
        return false;
    }
    if (!m || !fuse_matmul_generated(&x->out->knobs, m)) {
        x->why = "a matmul is a fusion barrier unless the generated kernel is certain at compile "
                 "time (f16/bf16, M a constant <= 16; cuBLAS takes no epilogue); with M symbolic "
                 "the epilogue rule may still run this kernel in the generated one (below)";
        return false;
    }
    if (de.rank != 2 || !same_shape(dp.rank, dp.dom, de.rank, de.dom)) {
        x->why = "a matmul's epilogue is pointwise over its 2-d product's own shape";
        return false;
    }
    bool feeds = kernel_reads(x, e, p);
    for (int j = 0; j < 2; j++)
        feeds |= find(x, m->in[j].src->id) == p;
    if (!kernel_reads(x, p, e) || feeds) {
        x->why = "a matmul's epilogue reads its product and feeds none of its operands";
        return false;
    }
    *out = de;
    return true;
}

/* The domain of kernels a and b together, or why there is none. */
static bool merged_desc(fctx *x, int a, int b, kdesc *out)
{
    kdesc da = x->desc[a], db = x->desc[b];
    if (da.kind == KK_EXTERN || db.kind == KK_EXTERN)
        return epilogue_desc(x, a, b, out);
    if (da.kind == KK_POINTWISE && db.kind == KK_POINTWISE) {
        if (!same_shape(da.rank, da.dom, db.rank, db.dom)) {
            x->why = "different iteration domains";
            return false;
        }
        *out = da;
        return true;
    }
    if (da.kind == KK_SCAN || db.kind == KK_SCAN)
        return scan_desc(x, a, b, out);
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
bool fuse_try_merge(fctx *x, int a, int b)
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
    if (!fuse_kernel_cost(x, a, b, m, &c))
        return false;
    int keep = a < b ? a : b, gone = keep == a ? b : a;
    x->parent[gone] = keep;
    int t = x->next[keep]; /* splice the circular member lists */
    x->next[keep] = x->next[gone];
    x->next[gone] = t;
    x->desc[keep] = m;
    return true;
}

