/* fuse_attn.c - the attention rule (fuse.h): softmax(s) @ v, where s is a
 * pointwise function of q @ k^T along the same key axis, as one kernel.
 *
 * It runs after the merges, on the kernels they built, and rewrites them:
 * the kernels that compute the copies of k^T and v, q @ k^T, the softmax
 * and the output product become one extern kernel whose fattn records
 * where the operands are.  The pattern is the prelude's softmax exactly
 * (max, exp(x - max), sum, divide, the cast back to the product's dtype),
 * so a program that writes softmax differently keeps the general path: a
 * missed match costs speed, never an answer.  Nothing of the pattern but
 * the output may be read elsewhere, the kernels it replaces may compute
 * nothing else, and the layouts must suit the kernel (the head dim read
 * contiguously, keys a constant stride apart, k and v varying along the
 * same batch axes, q and the output not depending on the key).  Each
 * refusal is silent; each fusion is a decision `explain` prints.
 */
#include "fuse/fuse_internal.h"

#include <stdlib.h>

typedef struct actx {
    ffn *o;
    const lfn *f;
    tc_arena *a;
    bool *pat;              /* lnode id -> a node of the pattern */
} actx;

static const tc_dim *flat_at(const lfn *f, const lnode *src, const tc_dim *const *idx)
{
    return lir_flat(f, src, idx);
}

/* Whether ref r reads the element of its source that idx names (the
 * same flat offset: lowering may write a size-1 axis' 0 elsewhere). */
static bool reads_at(const lfn *f, const lref *r, const tc_dim *const *idx)
{
    return r->src->rank > 0 && dim_eq(flat_at(f, r->src, r->idx), flat_at(f, r->src, idx));
}

static bool is_op(const lnode *n, op_id op)
{
    return n->kind == LK_POINTWISE && n->op == op;
}

static bool same_dims(const tc_dim *const *a, const tc_dim *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!dim_eq(a[i], b[i]))
            return false;
    return true;
}

/* A keepdim reduction over the last axis of x's domain (rank r). */
static bool last_axis_red(const lnode *n, red_kind kind, const lnode *x, int r)
{
    return n->kind == LK_REDUCE && n->a.red.kind == kind && n->a.red.keepdim && n->a.red.rin == r &&
           n->a.red.mask == 1u << (r - 1) && n->in[0].src == x;
}

/* A buffer the kernel may read: a parameter or a value another kernel stores. */
static bool is_buffer(const actx *x, const lnode *n)
{
    return n->kind == LK_INPUT || (x->o->stored[n->id] && !x->pat[n->id]);
}

/* The operand of matmul m through a copy that only m reads, as a buffer
 * ref over m's variables; false if it is no buffer. */
static bool operand(actx *x, const lnode *m, int i, lref *out)
{
    const lref *r = &m->in[i];
    const lnode *s = r->src;
    if (is_op(s, OP_copy) && s->nuses == 1 && s->output < 0 && s->dtype == s->in[0].src->dtype &&
        is_buffer(x, s->in[0].src) && x->o->kernel_of[s->id] >= 0) {
        const tc_dim **idx = ARENA_ARRAY(x->a, const tc_dim *, s->in[0].src->rank + 1);
        lir_compose(x->f, &s->in[0], r->idx, s->rank, idx);
        x->pat[s->id] = true;
        *out = (lref){s->in[0].src, idx};
        return true;
    }
    *out = *r;
    return is_buffer(x, s);
}

/* The score's expression: pointwise nodes over buffers that read the
 * product qk only at their own element; qk found into *qk. */
static bool score_expr(actx *x, const lnode *n, const tc_dim *const *vars, const lnode **qk)
{
    if (n->kind == LK_MATMUL) {
        if (*qk && *qk != n)
            return false;
        *qk = n;
        return true;
    }
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR || n->kind == LK_CONST || n->kind == LK_DIMVAL)
        return true;
    if (x->o->kernel_of[n->id] >= 0 && !x->pat[n->id]) {
        /* an anchor: a buffer of another kernel (a mask), or a pattern cut */
        if (!x->o->stored[n->id])
            return false;
        return true;
    }
    if (n->kind != LK_POINTWISE || n->op == OP_iota)
        return false;
    x->pat[n->id] = true;
    for (int i = 0; i < n->nin; i++) {
        const lnode *s = n->in[i].src;
        if (s->kind == LK_MATMUL && !reads_at(x->f, &n->in[i], vars))
            return false;
        if (!score_expr(x, s, vars, qk))
            return false;
    }
    return true;
}

static bool uses_var(const lfn *f, const tc_dim *e, int v)
{
    return dim_uses(e, f->varnames[v]);
}

/* Match the pattern ending at matmul m2; fill at and x->pat. */
static bool match(actx *x, lnode *m2, fattn *at)
{
    const lfn *f = x->f;
    tc_dimctx *c = f->dims;
    int r = m2->rank;
    if (r < 2 || r > TC_MAX_RANK - 1 ||
        (m2->dtype != TC_F16 && m2->dtype != TC_BF16 && m2->dtype != TC_F32))
        return false;
    const tc_dim *const *vars = (const tc_dim *const *)f->vars;
    const lnode *p = m2->in[0].src;
    /* P read at (batch.., m, key): the key is m2's contraction $r */
    const tc_dim *pidx[TC_MAX_RANK];
    for (int i = 0; i < r - 1; i++)
        pidx[i] = vars[i];
    pidx[r - 1] = vars[r];
    if (p->rank != r || !reads_at(f, &m2->in[0], pidx) || p->output >= 0 || p->nuses != 1)
        return false;
    const lnode *dv = p;
    if (is_op(p, OP_cast)) {
        if (p->dtype != m2->dtype || p->in[0].src->dtype != TC_F32 || !reads_at(f, &p->in[0], vars))
            return false;
        dv = p->in[0].src;
    }
    if (!is_op(dv, OP_div) || dv->dtype != TC_F32 || dv->rank != r || !reads_at(f, &dv->in[0], vars))
        return false;
    const lnode *e = dv->in[0].src, *sm = dv->in[1].src;
    if (!is_op(e, OP_exp) || e->dtype != TC_F32 || !reads_at(f, &e->in[0], vars))
        return false;
    const lnode *sub = e->in[0].src;
    if (!is_op(sub, OP_sub) || sub->dtype != TC_F32 || !reads_at(f, &sub->in[0], vars))
        return false;
    const lnode *xs = sub->in[0].src, *mx = sub->in[1].src;
    if (xs->dtype != TC_F32 || xs->rank != r || !last_axis_red(mx, RK_MAX, xs, r) ||
        !reads_at(f, &mx->in[0], vars) || !last_axis_red(sm, RK_SUM, e, r) ||
        !reads_at(f, &sm->in[0], vars))
        return false;
    const tc_dim *row[TC_MAX_RANK];
    for (int i = 0; i < r - 1; i++)
        row[i] = vars[i];
    row[r - 1] = dim_const(c, 0);
    if (!reads_at(f, &sub->in[1], row) || !reads_at(f, &dv->in[1], row))
        return false;
    const lnode *mid[] = {p, dv, e, sub, mx, sm};
    for (size_t i = 0; i < sizeof mid / sizeof *mid; i++) {
        if (mid[i]->output >= 0)
            return false;
        x->pat[mid[i]->id] = true;
    }
    /* the score: a pointwise function of one product qk */
    const lnode *qk = NULL;
    if (xs->kind != LK_POINTWISE || !score_expr(x, xs, vars, &qk) || !qk)
        return false;
    if (qk->rank != r || qk->dtype != m2->dtype || qk->output >= 0 || !same_dims(qk->shape, xs->shape, r) ||
        !same_dims(qk->shape, m2->shape, r - 1))
        return false;
    x->pat[qk->id] = true;
    x->pat[m2->id] = true;
    at->qk = qk;
    at->score = xs;
    if (!operand(x, qk, 0, &at->q) || !operand(x, qk, 1, &at->k) || !operand(x, m2, 1, &at->v))
        return false;
    /* the head dim: a constant, the same for q @ k^T and the output */
    const tc_dim *hd = m2->shape[r - 1];
    if (!dim_is_const(hd, &at->d) || at->d < 1 || at->d > FUSE_ATTN_MAX_D)
        return false;
    /* the contraction of q @ k^T runs over the head dim: the dim of k that
     * qk's contraction variable indexes */
    const lnode *kop = qk->in[1].src;
    bool hd_ok = false;
    for (int j = 0; j < kop->rank; j++)
        if (uses_var(f, qk->in[1].idx[j], r))
            hd_ok = dim_eq(kop->shape[j], hd);
    if (!hd_ok)
        return false;
    /* layouts: the head dim contiguous; keys a constant stride apart; q
     * and the output free of the key, k and v of the query rows */
    const tc_dim *fq = flat_at(f, at->q.src, at->q.idx);
    const tc_dim *fk = flat_at(f, at->k.src, at->k.idx);
    const tc_dim *fv = flat_at(f, at->v.src, at->v.idx);
    if (lir_coeff(f, fq, r) != 1 || uses_var(f, fq, r - 1) || lir_coeff(f, fk, r) != 1 ||
        lir_coeff(f, fv, r - 1) != 1 || uses_var(f, fk, r - 2) || uses_var(f, fv, r - 2))
        return false;
    at->kstride = lir_coeff(f, fk, r - 1);
    at->vstride = lir_coeff(f, fv, r);
    if (at->kstride < 1 || at->vstride < 1)
        return false;
    at->kvaxes = 0;
    for (int i = 0; i < r - 2; i++) {
        bool ku = uses_var(f, fk, i), vu = uses_var(f, fv, i);
        if (ku != vu)
            return false;
        if (ku)
            at->kvaxes |= 1u << i;
    }
    return true;
}

/* Replace the kernels of the pattern at m2 by one attention kernel. */
static bool rewrite(actx *x, lnode *m2, const fattn *at)
{
    ffn *o = x->o;
    const lfn *f = x->f;
    int nk = o->nk;
    bool *gone = ARENA_ARRAY(x->a, bool, nk > 0 ? nk : 1);
    for (int i = 0; i < f->nnodes; i++)
        if (x->pat[i] && o->kernel_of[i] >= 0)
            gone[o->kernel_of[i]] = true;
    int home = o->kernel_of[m2->id];
    /* the kernels replaced compute only the pattern; nothing else reads it */
    for (int i = 0; i < nk; i++) {
        const fkernel *k = o->k[i];
        if (gone[i]) {
            for (int j = 0; j < k->nreds; j++)
                if (!x->pat[k->reds[j]->id])
                    return false;
            for (int j = 0; j < k->nstores; j++)
                if (!x->pat[k->stores[j]->id])
                    return false;
            if (k->ext && !x->pat[k->ext->id])
                return false;
            if (k->attn || i > home)
                return false;
        } else {
            for (int j = 0; j < k->nreads; j++)
                if (x->pat[k->reads[j]->id])
                    return false;
        }
    }
    fkernel *ak = ARENA_NEW(x->a, fkernel);
    *ak = *o->k[home];
    fattn *copy = ARENA_NEW(x->a, fattn);
    *copy = *at;
    ak->attn = copy;
    ak->rank = at->qk->rank;
    ak->dom = at->qk->shape;
    ak->nstores = 0;
    ak->nreds = 0;
    /* reads: the replaced kernels' reads of buffers outside the pattern */
    int cap = 0;
    ak->reads = NULL;
    ak->nreads = 0;
    for (int i = 0; i < nk; i++) {
        if (!gone[i])
            continue;
        for (int j = 0; j < o->k[i]->nreads; j++) {
            lnode *rd = o->k[i]->reads[j];
            bool dup = x->pat[rd->id];
            for (int q = 0; q < ak->nreads && !dup; q++)
                dup = ak->reads[q] == rd;
            if (!dup) {
                ARENA_GROW(x->a, ak->reads, ak->nreads, cap, 8);
                ak->reads[ak->nreads++] = rd;
            }
        }
    }
    /* inlined: the pointwise nodes of the pattern, in node order */
    int icap = 0;
    ak->inl = NULL;
    ak->ninl = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (x->pat[i] && f->nodes[i]->kind == LK_POINTWISE) {
            ARENA_GROW(x->a, ak->inl, ak->ninl, icap, 8);
            ak->inl[ak->ninl++] = f->nodes[i];
        }
    /* the new launch order: the kernels kept, the attention kernel where
     * the output product was (every kernel it reads comes before) */
    int *newid = ARENA_ARRAY(x->a, int, nk > 0 ? nk : 1);
    fkernel **ks = ARENA_ARRAY(x->a, fkernel *, nk > 0 ? nk : 1);
    int n = 0;
    for (int i = 0; i < nk; i++) {
        if (i == home) {
            newid[i] = n;
            ak->id = n;
            ks[n++] = ak;
        } else if (!gone[i]) {
            newid[i] = n;
            o->k[i]->id = n;
            ks[n++] = o->k[i];
        } else {
            newid[i] = -2;
        }
    }
    for (int i = 0; i < f->nnodes; i++) {
        int kk = o->kernel_of[i];
        if (kk < 0)
            continue;
        o->kernel_of[i] = newid[kk] == -2 ? ak->id : newid[kk];
        if (x->pat[i] && f->nodes[i] != m2)
            o->stored[i] = false;
    }
    ak->name = arena_printf(x->a, "attention_%d", ak->id);
    ak->stem = "attention";
    o->k = ks;
    o->nk = n;
    fdecision *dec = ARENA_ARRAY(x->a, fdecision, o->ndec + 1);
    if (o->ndec)
        memcpy(dec, o->dec, sizeof *dec * (size_t)o->ndec);
    /* the merges' refusals between the pattern's nodes did not happen in
     * the end: the attention kernel holds both */
    for (int i = 0; i < o->ndec; i++)
        dec[i].superseded |= x->pat[dec[i].producer->id] && x->pat[dec[i].consumer->id];
    dec[o->ndec++] = (fdecision){
        at->qk, m2, true,
        arena_printf(x->a,
                     "attention rule: softmax over the key axis of a function of %%%d = q @ k^T, "
                     "then @ v, as one flash-decoding kernel (head dim %lld; k and v read once "
                     "per group of query rows that share them, the keys split across blocks, "
                     "per-split max and sum combined in a fixed order)",
                     at->qk->id, (long long)at->d),
        NULL, false};
    o->dec = dec;
    return true;
}

void fuse_attention(ffn *o, tc_arena *a)
{
    if (!o->knobs.attention)
        return;
    const lfn *f = o->l;
    if (f->g->elementwise)
        return;
    actx x = {o, f, a, NULL};
    int nn = f->nnodes > 0 ? f->nnodes : 1;
    for (int i = 0; i < f->nnodes; i++) {
        lnode *m2 = f->nodes[i];
        if (m2->kind != LK_MATMUL || o->kernel_of[m2->id] < 0)
            continue;
        const fkernel *mk = o->k[o->kernel_of[m2->id]];
        if (mk->attn || mk->ext != m2 || mk->nstores > 0)
            continue;
        x.pat = ARENA_ARRAY(a, bool, nn);
        fattn at;
        memset(&at, 0, sizeof at);
        if (match(&x, m2, &at))
            rewrite(&x, m2, &at);
    }
}
