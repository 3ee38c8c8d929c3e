/* fuse_mmrules.c - the rules that move work into a generated matmul
 * kernel (fuse.h): the row scale (fuse_mm_norm), pairs (fuse_mm_pairs),
 * the adapter (fuse_mm_lora) and, with M symbolic, a pointwise epilogue
 * kernel (fuse_mm_epilogues).  The row-scale rule: an RMSNorm-like rows
 * kernel whose only store is the matmul's left operand runs inside the
 * matmul instead.
 *
 * The operand is A[i, k] = P[i, k] * R[i] (* G[k]), with casts between
 * the factors, where P is x or a float cast of x (x stored, [M, K], the
 * matmul's dtype), R is a row-level value computed only from the rows
 * kernel's one reduction S[i] = sum_k P[i, k]^2 and scalars, constants and
 * sizes, and G a stored [K] vector.  Since (r * x) @ W = r * (x @ W), the
 * generated kernel loads x (scaled by G as each tile arrives: a prologue
 * on the loaded operand), accumulates S beside the product over its slice
 * of K, sums the slices' S with their partial products in slice order, and
 * multiplies the row's R into the product before rounding it.  The rows
 * kernel stays in the plan only for the launches cuBLAS takes (M above the
 * generated kernel's limit), so at decode the pair is one kernel.
 *
 * Rounding differs from the program's: A's casts (f16(x * r) * g rounds
 * twice) become one rounding of x * G, and R is applied in f32.  x * G can
 * overflow f16 where x * r * G would not (|x * g| > 65504): documented in
 * docs/language.md; TENSORC_MATMUL_EPILOGUE=off keeps the two apart.
 */
#include "fuse/fuse_internal.h"

#include <limits.h>
#include <stdlib.h>

typedef struct mctx {
    const ffn *f;
    const lfn *l;
    int rk;                 /* the rows kernel's id */
    const tc_dim **dom;     /* [M, K] */
    fmmnorm *o;
} mctx;

static bool is_var(const mctx *x, const tc_dim *d, int v)
{
    return d == x->l->vars[v];
}

static bool identity2(const mctx *x, const lref *r)
{
    return r->src->rank == 2 && lir_is_identity(x->l, r->idx, 2);
}

static bool float_dt(tc_dtype t)
{
    return t == TC_F16 || t == TC_BF16 || t == TC_F32 || t == TC_F64;
}

static bool same_dom(const mctx *x, const lnode *n)
{
    return n->rank == 2 && n->shape[0] == x->dom[0] && n->shape[1] == x->dom[1];
}

/* a value in a buffer that the rows kernel does not write */
static bool outside(const mctx *x, const lnode *n)
{
    return x->f->stored[n->id] && x->f->kernel_of[n->id] != x->rk;
}

/* P: x itself, or a float cast of it */
static bool match_p(mctx *x, const lnode *n, tc_dtype mdt)
{
    const lnode *v = n;
    if (v->kind == LK_POINTWISE && v->op == OP_cast && v->nin == 1 && float_dt(v->dtype) &&
        identity2(x, &v->in[0]) && !x->f->stored[v->id])
        v = v->in[0].src;
    if (!outside(x, v) || !same_dom(x, v) || v->dtype != mdt)
        return false;
    if (x->o->p && x->o->p != n)
        return false;
    x->o->p = n;
    x->o->x = v;
    return true;
}

/* A's chain of casts and products down to P, R and G */
static bool match_a(mctx *x, const lnode *n, tc_dtype mdt, int depth)
{
    if (depth > 16 || !same_dom(x, n) || n->kind != LK_POINTWISE)
        return match_p(x, n, mdt);
    if (n->op == OP_cast && n->nin == 1 && float_dt(n->dtype) && identity2(x, &n->in[0]) &&
        !outside(x, n->in[0].src))
        return match_a(x, n->in[0].src, mdt, depth + 1);
    if (n->op != OP_mul || n->nin != 2)
        return match_p(x, n, mdt);
    for (int i = 0; i < 2; i++) {
        const lref *r = &n->in[i];
        const lnode *s = r->src;
        int64_t one;
        if (s->rank == 2 && s->shape[0] == x->dom[0] && dim_is_const(s->shape[1], &one) && one == 1 &&
            is_var(x, r->idx[0], 0) && dim_is_const(r->idx[1], &one) && one == 0) {
            if (x->o->r)
                return false;
            x->o->r = s;
        } else if (s->rank == 1 && s->shape[0] == x->dom[1] && is_var(x, r->idx[0], 1)) {
            if (x->o->g || !outside(x, s) || s->dtype != mdt)
                return false;
            x->o->g = s;
        } else if (identity2(x, r) && same_dom(x, s) && !outside(x, s)) {
            if (!match_a(x, s, mdt, depth + 1))
                return false;
        } else if (!match_p(x, s, mdt) || !identity2(x, r)) {
            return false;
        }
    }
    return true;
}

/* R: row-level pointwise nodes over the reduction, scalars, constants and
 * sizes only, none stored */
static bool match_r(mctx *x, const lnode *n, int depth)
{
    if (depth > 64)
        return false;
    switch (n->kind) {
    case LK_SCALAR:
    case LK_CONST:
    case LK_DIMVAL:
        return true;
    case LK_REDUCE:
        if (x->o->ss && x->o->ss != n)
            return false;
        x->o->ss = n;
        return !x->f->stored[n->id];
    case LK_POINTWISE:
        if (x->f->stored[n->id] || n->op == OP_iota || n->rank != 2 || n->shape[0] != x->dom[0])
            return false;
        for (int i = 0; i < n->nin; i++)
            if (!match_r(x, n->in[i].src, depth + 1))
                return false;
        return true;
    default:
        return false;
    }
}

/* whether the generated kernel may run matmul m (sched_matmul.c's model):
 * f16/bf16 (f32 under TENSORC_MATMUL=generated) unless M is a constant
 * past its limit; TENSORC_MATMUL_EPILOGUE=off keeps matmuls apart */
static bool may_generate(const tc_knobs *kn, const lnode *m)
{
    if (!kn->matmul_epilogue || m->rank != 2 || m->nin != 2)
        return false;
    bool forced = kn->matmul == KNOB_MM_GENERATED;
    int64_t rows;
    return kn->matmul != KNOB_MM_CUBLAS &&
           (m->dtype == TC_F16 || m->dtype == TC_BF16 || (forced && m->dtype == TC_F32)) &&
           (forced || !dim_is_const(m->shape[0], &rows) || rows <= FUSE_MM_MAX_ROWS);
}

/* k's matmul when the rules may move work into its generated kernel, else
 * NULL (an attention kernel, fuse_attn.c, keeps ext but is no matmul) */
static const lnode *generated(const ffn *f, const fkernel *k)
{
    return k->kind == KK_EXTERN && !k->attn && k->ext && may_generate(&f->knobs, k->ext) ? k->ext
                                                                                          : NULL;
}

bool fuse_mm_norm(const ffn *f, const fkernel *mk, fmmnorm *out)
{
    *out = (fmmnorm){0};
    /* TENSORC_MATMUL_NORM=off: the rows kernel and the matmul apart (the
     * A/B against the fused kernel: sched_matmul.c) */
    if (!f->knobs.matmul_norm)
        return false;
    const lnode *m = generated(f, mk);
    if (!m)
        return false;
    const lref *ra = &m->in[0];
    const lnode *a = ra->src;
    if (a->rank != 2 || a->output >= 0 || a->nuses != 1 || !f->stored[a->id] || a->dtype != m->dtype ||
        a->kind != LK_POINTWISE || ra->idx[0] != f->l->vars[0] || ra->idx[1] != f->l->vars[2])
        return false;
    int rk = f->kernel_of[a->id];
    if (rk < 0)
        return false;
    const fkernel *k = f->k[rk];
    if (k->kind != KK_REDUCE || !k->inner || k->rank != 2 || k->mask != 2u || k->nstores != 1 ||
        k->stores[0] != a || k->nreds != 1 || k->reds[0]->a.red.kind != RK_SUM || k->ncols)
        return false;
    mctx x = {f, f->l, rk, k->dom, out};
    if (a->shape[0] != k->dom[0] || a->shape[1] != k->dom[1])
        return false;
    if (!match_a(&x, a, m->dtype, 0) || !out->r || !out->p || !match_r(&x, out->r, 0) ||
        out->ss != k->reds[0])
        return false;
    /* S = sum_k P^2, P read at its own element */
    const lnode *sq = out->ss->in[0].src;
    if (out->ss->a.red.rin != 2 || out->ss->a.red.mask != 2u || !identity2(&x, &out->ss->in[0]) ||
        sq->kind != LK_POINTWISE || sq->op != OP_mul || sq->nin != 2 || f->stored[sq->id])
        return false;
    for (int i = 0; i < 2; i++)
        if (sq->in[i].src != out->p || !identity2(&x, &sq->in[i]))
            return false;
    out->rows = k;
    return true;
}

/* Whether kernel k's epilogue reads product m (which k's generated kernel
 * is to compute too, handing it over as mm_v2) only at the element being
 * stored: every path from k's stores through what it computes inline. */
typedef struct rseen {
    struct rseen *next;
    const lnode *n;
    const tc_dim **idx;
} rseen;

static bool own_element(const ffn *f, const lnode *m, const lnode *n, const tc_dim **idx, rseen **seen,
                        tc_arena *a, int depth)
{
    if (n == m) {
        for (int k = 0; k < n->rank; k++)
            if (idx[k] != f->l->vars[k])
                return false;
        return true;
    }
    if (n->nin == 0 || (f->stored[n->id] && depth > 0))
        return true; /* a leaf, or loaded from a buffer */
    if (depth > 200 || n->kind == LK_GATHER)
        return false; /* (a gather reads at run-time positions: refused) */
    for (rseen *v = seen[n->id]; v; v = v->next) {
        bool eq = true;
        for (int k = 0; k < n->rank && eq; k++)
            eq = v->idx[k] == idx[k];
        if (eq)
            return true;
    }
    rseen *v = ARENA_NEW(a, rseen);
    *v = (rseen){seen[n->id], n, idx};
    seen[n->id] = v;
    for (int i = 0; i < n->nin; i++) {
        const lref *r = &n->in[i];
        const tc_dim **ci = ARENA_ARRAY(a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
        lir_compose(f->l, r, idx, n->rank, ci);
        if (!own_element(f, m, r->src, ci, seen, a, depth + 1))
            return false;
    }
    return true;
}

static bool read_at_own_element(const ffn *f, const fkernel *k, const lnode *m, tc_arena *a)
{
    rseen **seen = ARENA_ARRAY(a, rseen *, f->l->nnodes > 0 ? f->l->nnodes : 1);
    for (int i = 0; i < k->nstores; i++) {
        const lnode *s = k->stores[i];
        if (s->rank != m->rank)
            return false;
        const tc_dim **idx = ARENA_ARRAY(a, const tc_dim *, s->rank > 0 ? s->rank : 1);
        for (int j = 0; j < s->rank; j++)
            idx[j] = f->l->vars[j];
        if (!own_element(f, m, s, idx, seen, a, 0))
            return false;
    }
    return true;
}

/* whether operand o of matmul m (rank 2) is read plainly (false) or
 * transposed (true); -1 if neither */
static int layout(const ffn *f, const lnode *m, int o)
{
    const lref *r = &m->in[o];
    const tc_dim *k = f->l->vars[2], *other = f->l->vars[o == 0 ? 0 : 1];
    if (r->src->rank != 2)
        return -1;
    if (r->idx[o == 0 ? 1 : 0] == k && r->idx[o == 0 ? 0 : 1] == other)
        return 0;
    if (r->idx[o == 0 ? 0 : 1] == k && r->idx[o == 0 ? 1 : 0] == other)
        return 1;
    return -1;
}

/* no kernel launched before kernel `before` reads n */
static bool unread_before(const ffn *f, const lnode *n, int before)
{
    for (int q = 0; q < f->nk && q < before; q++)
        for (int j = 0; j < f->k[q]->nreads; j++)
            if (f->k[q]->reads[j] == n)
                return false;
    return true;
}

bool fuse_mm_lora(const ffn *f, const fkernel *kq, fmmlora *out, tc_arena *a)
{
    *out = (fmmlora){0};
    /* opt-in until its kernel has run on a GPU (issue 13: written when the
     * session's device time was spent; tests/gpu/matmul.sh turns it on) */
    if (!f->knobs.matmul_lora)
        return false;
    const lnode *q = generated(f, kq);
    if (!q || layout(f, q, 0) != 0)
        return false;
    const lnode *t = q->in[0].src;
    if (t->kind != LK_MATMUL || t->rank != 2 || t->nuses != 1 || t->output >= 0 || t->dtype != q->dtype ||
        f->kernel_of[t->id] < 0 || !may_generate(&f->knobs, t))
        return false;
    const fkernel *kt = f->k[f->kernel_of[t->id]];
    int tb = layout(f, q, 1);
    if (kt->nstores > 0 || tb < 0 || layout(f, t, 1) != tb || layout(f, t, 0) < 0)
        return false;
    for (int i = 0; i < f->nk; i++) {
        const fkernel *kp = f->k[i];
        const lnode *p = kp->ext;
        if (kp->kind != KK_EXTERN || kp == kt || kp == kq || kp->nstores > 0 || p->rank != 2 ||
            p->in[0].src != t->in[0].src || p->in[0].idx[0] != t->in[0].idx[0] ||
            p->in[0].idx[1] != t->in[0].idx[1] || p->dtype != q->dtype || p->shape[0] != q->shape[0] ||
            p->shape[1] != q->shape[1] || layout(f, p, 1) != tb || !may_generate(&f->knobs, p) ||
            !unread_before(f, p, kq->id) || !read_at_own_element(f, kq, p, a) ||
            (f->kernel_of[p->in[1].src->id] >= 0 && f->kernel_of[p->in[1].src->id] >= kq->id))
            continue; /* (W must be there when kq runs) */
        out->t = kt;
        out->p = kp;
        return true;
    }
    return false;
}

/* The pair rule: matmuls a (earlier) and b of one left operand, read the
 * same way, of one dtype and shape, their right operands laid out alike,
 * a with no epilogue of its own and read by no kernel launched before b's:
 * b's generated kernel computes both (fuse.h). */
static bool pairable(const ffn *f, const fkernel *ka, const fkernel *kb, tc_arena *ar)
{
    const lnode *a = ka->ext, *b = kb->ext;
    if (a->in[0].src != b->in[0].src || a->dtype != b->dtype || a->shape[0] != b->shape[0] ||
        a->shape[1] != b->shape[1] || a->in[1].src->rank != 2 || b->in[1].src->rank != 2 ||
        ka->nstores > 0)
        return false;
    for (int j = 0; j < 2; j++)
        if (a->in[0].idx[j] != b->in[0].idx[j] || a->in[1].idx[j] != b->in[1].idx[j] ||
            a->in[1].src->shape[j] != b->in[1].src->shape[j])
            return false;
    for (int q = 0; q < f->nk; q++) {
        const fkernel *k = f->k[q];
        for (int j = 0; j < k->nreads && k->id < kb->id; j++)
            if (k->reads[j] == a)
                return false;
    }
    return read_at_own_element(f, kb, a, ar);
}

int *fuse_mm_pairs(const ffn *f, tc_arena *a)
{
    int *with = ARENA_ARRAY(a, int, f->nk > 0 ? f->nk : 1);
    fmmnorm nm;
    fmmlora lo;
    for (int i = 0; i < f->nk; i++)
        with[i] = -1;
    for (int i = 0; i < f->nk; i++) /* the adapter rule's kernels are taken */
        if (f->k[i]->kind == KK_EXTERN && fuse_mm_lora(f, f->k[i], &lo, a))
            with[i] = with[lo.t->id] = with[lo.p->id] = f->nk;
    for (int i = 0; i < f->nk; i++) {
        const fkernel *kb = f->k[i];
        if (with[i] >= 0 || !generated(f, kb) || fuse_mm_norm(f, kb, &nm))
            continue;
        for (int j = 0; j < i; j++) {
            const fkernel *ka = f->k[j];
            if (with[j] >= 0 || !generated(f, ka) ||
                fuse_mm_norm(f, ka, &nm) || !pairable(f, ka, kb, a))
                continue;
            with[i] = j;
            with[j] = i;
            break;
        }
    }
    for (int i = 0; i < f->nk; i++)
        if (with[i] == f->nk)
            with[i] = -1;
    return with;
}

/* The epilogue rule (fuse.h): whether pointwise kernel e may run in matmul
 * kernel mk's generated kernel, which computes the products own[] (mk's,
 * and the pair's or adapter's other, or NULL).  at[j]: the later of kernel
 * j's place and where the generated kernels write its stores (the kernel
 * the pair or adapter rule moves it into), INT_MAX for a row-scale rows
 * kernel (its operand never written there). */
static bool epi_ok(const ffn *f, const fkernel *e, const lnode *const own[2], const int *at, int mk,
                   tc_arena *a)
{
    if (!dim_eq(e->dom[0], own[0]->shape[0]) || !dim_eq(e->dom[1], own[0]->shape[1]))
        return false;
    for (int i = 0; i < e->nreads; i++) {
        const lnode *n = e->reads[i];
        int j = f->kernel_of[n->id];
        if (n == own[0] || n == own[1]) {
            if (!read_at_own_element(f, e, n, a))
                return false;
        } else if (j >= 0 && at[j] >= mk) { /* (the adapter's x @ A: never stored) */
            return false;
        }
    }
    for (int i = 0; i < e->nstores; i++) {
        if (!fuse_is_element(e, e->stores[i]))
            return false;
        for (int o = 0; o < f->l->noutputs; o++) /* written in place: read before, maybe by mk */
            if (f->l->outputs[o].node == e->stores[i] && f->l->outputs[o].inout_param >= 0)
                return false;
    }
    return true;
}

int *fuse_mm_epilogues(const ffn *f, tc_arena *a)
{
    int nk = f->nk > 0 ? f->nk : 1;
    int *into = ARENA_ARRAY(a, int, nk), *at = ARENA_ARRAY(a, int, nk), *lp = ARENA_ARRAY(a, int, nk);
    bool *taken = ARENA_ARRAY(a, bool, nk);
    for (int i = 0; i < f->nk; i++)
        into[i] = lp[i] = -1, at[i] = i;
    bool any = false; /* (TENSORC_MATMUL_DUAL=off: none, the A/B) */
    for (int i = 0; i < f->nk && !any && f->knobs.matmul_dual; i++)
        any = generated(f, f->k[i]) != NULL;
    if (!any)
        return into;
    int *with = fuse_mm_pairs(f, a);
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        fmmlora lo;
        fmmnorm nm;
        if (with[i] > i)
            at[i] = with[i];
        if (k->kind == KK_EXTERN && fuse_mm_lora(f, k, &lo, a)) {
            at[lo.t->id] = at[lo.p->id] = i;
            lp[i] = lo.p->id;
        }
        if (k->kind == KK_EXTERN && fuse_mm_norm(f, k, &nm))
            at[nm.rows->id] = INT_MAX;
    }
    for (int e = 0; e < f->nk; e++) {
        const fkernel *k = f->k[e];
        if (k->kind != KK_POINTWISE || k->rank != 2 || k->nreds || k->ncols || !k->nstores)
            continue;
        int mk = -1; /* the last matmul kernel whose product it reads */
        for (int i = 0; i < k->nreads; i++) {
            int j = f->kernel_of[k->reads[i]->id];
            if (j >= 0 && f->k[j]->kind == KK_EXTERN && f->k[j]->ext == k->reads[i] && at[j] < e &&
                at[j] > mk)
                mk = at[j];
        }
        const lnode *m = mk >= 0 && !taken[mk] && at[mk] == mk ? generated(f, f->k[mk]) : NULL;
        if (!m || f->k[mk]->nstores || fuse_matmul_generated(&f->knobs, m))
            continue;
        const lnode *own[2] = {m, lp[mk] >= 0       ? f->k[lp[mk]]->ext
                                  : with[mk] >= 0 && with[mk] < mk ? f->k[with[mk]]->ext
                                                                    : NULL};
        if (!epi_ok(f, k, own, at, mk, a))
            continue;
        into[e] = mk;
        taken[mk] = true;
    }
    return into;
}

void fuse_mm_prologues(fctx *x)
{
    ffn *o = x->out;
    /* the kernels each rule folds into a generated matmul: launched only
     * when that product goes to cuBLAS (explain's count of launches) */
    bool *beside = ARENA_ARRAY(x->a, bool, o->nk > 0 ? o->nk : 1);
    for (int i = 0; i < o->nk; i++) {
        fmmnorm nm;
        if (o->k[i]->kind != KK_EXTERN || !fuse_mm_norm(o, o->k[i], &nm))
            continue;
        beside[nm.rows->id] = true;
        ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
        o->dec[o->ndec++] = (fdecision){
            nm.rows->stores[0], o->k[i]->ext, true,
            arena_printf(x->a,
                         "row scale into the matmul: (r * x) @ W = r * (x @ W), so the generated "
                         "kernel loads x%s, accumulates sum(x^2) of each row beside the product and "
                         "multiplies the row's scale into it as it stores (kernel %d runs only when "
                         "cuBLAS does: M above %d)",
                         nm.g ? " scaled by the column weight as each tile arrives" : "", nm.rows->id,
                         FUSE_MM_MAX_ROWS),
            NULL, false};
    }
    for (int i = 0; i < o->nk; i++) {
        fmmlora lo;
        if (o->k[i]->kind != KK_EXTERN || !fuse_mm_lora(o, o->k[i], &lo, x->a))
            continue;
        beside[lo.p->id] = beside[lo.t->id] = true;
        ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
        o->dec[o->ndec++] = (fdecision){
            lo.t->ext, o->k[i]->ext, true,
            arena_printf(x->a,
                         "a low-rank adapter beside its weight: the generated kernel of %%%d computes "
                         "%%%d = x @ W too and %%%d = x @ A per K slice, (x @ A) @ B summed over the "
                         "slices with x @ W's (linear in the slices); kernels %d and %d run only when "
                         "cuBLAS does (M above %d)",
                         o->k[i]->ext->id, lo.p->ext->id, lo.t->ext->id, lo.p->id, lo.t->id,
                         FUSE_MM_MAX_ROWS),
            NULL, false};
    }
    int *with = fuse_mm_pairs(o, x->a);
    for (int i = 0; i < o->nk; i++) {
        if (with[i] < 0 || with[i] >= i)
            continue;
        const lnode *ma = o->k[with[i]]->ext, *mb = o->k[i]->ext;
        beside[with[i]] = true;
        ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
        o->dec[o->ndec++] = (fdecision){
            ma, mb, true,
            arena_printf(x->a,
                         "two products of one left operand: the generated kernel of %%%d computes "
                         "%%%d too (a work item per tile, slice and product; the last of a tile's "
                         "sums both, and its epilogue gets both); kernel %d runs only when cuBLAS "
                         "does (M above %d)",
                         mb->id, ma->id, with[i], FUSE_MM_MAX_ROWS),
            NULL, false};
    }
    int *into = fuse_mm_epilogues(o, x->a);
    for (int i = 0; i < o->nk; i++) {
        if (into[i] < 0)
            continue;
        const lnode *m = o->k[into[i]]->ext;
        beside[i] = true;
        ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 32);
        o->dec[o->ndec++] = (fdecision){
            m, o->k[i]->stores[0], true,
            arena_printf(x->a,
                         "the epilogue rule: the generated kernel of %%%d computes kernel %d's stores "
                         "too, on each element of the product as it is stored (which reads the product "
                         "only there, and the rest written before it); kernel %d runs only when "
                         "cuBLAS does (M above %d)",
                         m->id, i, i, FUSE_MM_MAX_ROWS),
            NULL, false};
    }
    o->nbeside = 0;
    for (int i = 0; i < o->nk; i++)
        o->nbeside += beside[i];
}
