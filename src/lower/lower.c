/* lower.c - op graph to lowered IR (see lir.h).
 *
 * One pass over the graph in topological order.  Each non-view node becomes
 * a lowered node whose inputs are lrefs: the view chain between a node and
 * what it reads (at most one VIEW, the graph composes them) turns into index
 * expressions by ref_at().  Composite reductions expand into primitive
 * ones plus pointwise nodes.  Every node goes through intern(), which
 * returns an existing identical node instead of a new one.  The queries on
 * the lowered IR that later stages use are in lir.c.
 */
#include "hset.h"
#include "lower/lir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct lctx {
    lfn *f;
    tc_arena *a;
    tc_diag *d;
    tc_dimctx *c;
    lnode **of;             /* graph node id -> lowered node (NULL for views) */
    tc_hset tab;            /* every node made, once (intern) */
} lctx;

/* e with every size symbol S replaced by S + 1: sizes are at least 1, so
 * a dim that is non-negative for symbols >= 0 after this is >= 0 for every
 * valid binding (N - 1 becomes N). */
static const tc_dim *sizes_from_one(lctx *x, const tc_dim *e)
{
    const gfn *g = x->f->g;
    const tc_dim *v[64];
    int n = g->nsyms < 64 ? g->nsyms : 64;
    for (int i = 0; i < n; i++)
        v[i] = dim_add(x->c, dim_sym(x->c, g->syms[i]), dim_const(x->c, 1));
    return dim_subst(x->c, e, n, g->syms, v);
}

static bool nonneg(lctx *x, const tc_dim *e)
{
    return dim_nonneg(e) || dim_nonneg(sizes_from_one(x, e));
}

/* The multi-index of base (shape bs, contiguous) that the flat element
 * offset flat names, for a reader whose variable k ranges over [lo[k],
 * size[k]) (lo NULL: from 0).  First try the per-dim split (term by term,
 * outermost stride first, over variables shifted to start at 0) and prove
 * each part lies in [0, bs[k]); otherwise divide and take remainders. */
static void unflatten(lctx *x, const tc_dim *flat, int rb, const tc_dim *const *bs, int rank,
                      const tc_dim *const *lo, const tc_dim *const *size, const tc_dim **out)
{
    tc_dimctx *c = x->c;
    const tc_dim *st[TC_MAX_RANK];
    lir_strides(c, rb, bs, st);
    const tc_dim *fwd[TC_MAX_RANK + 1], *back[TC_MAX_RANK + 1], *top[TC_MAX_RANK + 1];
    for (int k = 0; k < rank; k++) {
        const tc_dim *l = lo ? lo[k] : dim_const(c, 0);
        fwd[k] = dim_add(c, x->f->vars[k], l);
        back[k] = dim_sub(c, x->f->vars[k], l);
        top[k] = dim_sub(c, dim_sub(c, size[k], l), dim_const(c, 1));
    }
    const tc_dim *rem = dim_subst(c, flat, rank, x->f->varnames, fwd);
    bool ok = nonneg(x, rem);
    for (int k = 0; k < rb && ok; k++) {
        const tc_dim *q = rem;
        if (k < rb - 1) {
            dim_split(c, rem, st[k], &q, &rem);
            /* x[:, -1:] of [B, T, H]: offset T*H - H splits as 1 and -H;
             * borrow one stride, T - 1 and T*H - H, which the checks prove */
            const tc_dim *up = dim_add(c, rem, st[k]);
            if (!nonneg(x, rem) && nonneg(x, up)) {
                q = dim_sub(c, q, dim_const(c, 1));
                rem = up;
            }
        } else
            rem = dim_const(c, 0);
        const tc_dim *max = dim_subst(c, q, rank, x->f->varnames, top);
        ok = nonneg(x, q) && nonneg(x, dim_sub(c, dim_sub(c, bs[k], dim_const(c, 1)), max));
        out[k] = dim_subst(c, q, rank, x->f->varnames, back);
    }
    if (ok)
        return;
    for (int k = 0; k < rb; k++) {
        const tc_dim *q = dim_floordiv(c, flat, st[k]);
        if (k > 0) /* (flat / st) mod bs = q - bs * (flat / (st * bs)) */
            q = dim_sub(c, q, dim_mul(c, bs[k], dim_floordiv(c, flat, dim_mul(c, st[k], bs[k]))));
        out[k] = q;
    }
}

/* How a reader whose variable k ranges over [lo[k], size[k]) (lo NULL:
 * from 0) reads graph node g at the index at[0..g->rank). */
static lref ref_at(lctx *x, const gnode *g, const tc_dim *const *at, int rank,
                   const tc_dim *const *lo, const tc_dim *const *size)
{
    lref r;
    if (g->op == OP_view) {
        const gnode *base = g->in[0];
        const tc_dim *flat = g->a.view.offset;
        for (int k = 0; k < g->rank; k++)
            flat = dim_add(x->c, flat, dim_mul(x->c, g->a.view.strides[k], at[k]));
        r.src = x->of[base->id];
        r.idx = ARENA_ARRAY(x->a, const tc_dim *, base->rank > 0 ? base->rank : 1);
        unflatten(x, flat, base->rank, base->shape, rank, lo, size, r.idx);
    } else {
        r.src = x->of[g->id];
        r.idx = ARENA_ARRAY(x->a, const tc_dim *, g->rank > 0 ? g->rank : 1);
        for (int k = 0; k < g->rank; k++)
            r.idx[k] = at[k];
    }
    if (!r.src)
        diag_error(x->d, TC_ERR_INTERNAL, g->loc, "lowering: %%%d read before it was lowered", g->id);
    return r;
}

/* A reader of shape (rank, shape) reading g element for element (g has the
 * reader's shape, or is rank 0). */
static lref ref_same(lctx *x, const gnode *g, int rank, const tc_dim *const *shape)
{
    return ref_at(x, g, x->f->vars, g->rank == 0 ? 0 : rank, NULL, shape);
}

/* ---- interning -------------------------------------------------------------- */

static uint64_t hmix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

/* The bits of a constant, for hashing: a double cast to an integer is
 * undefined when negative, infinite or NaN.  node_same treats -0.0 as 0.0
 * and every NaN as one value, so those hash alike. */
static uint64_t const_bits(double f)
{
    if (f == 0)
        return 0;
    if (f != f)
        f = NAN;
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    /* fold the exponent and high mantissa into the low bits the table
     * indexes by: 1.0, 2.0 and 0.5 differ only in their high bits */
    u ^= u >> 32;
    u *= 0x9e3779b97f4a7c15ull;
    return u ^ (u >> 29);
}

static uint64_t node_hash(const lnode *n)
{
    uint64_t h = hmix((uint64_t)n->kind, (uint64_t)n->op);
    h = hmix(h, (uint64_t)n->dtype);
    for (int i = 0; i < n->nin; i++) {
        h = hmix(h, (uint64_t)(uintptr_t)n->in[i].src);
        for (int k = 0; k < n->in[i].src->rank; k++)
            h = hmix(h, (uint64_t)(uintptr_t)n->in[i].idx[k]);
    }
    if (n->kind == LK_REDUCE)
        h = hmix(hmix(h, n->a.red.mask), (uint64_t)n->a.red.kind * 2 + n->a.red.keepdim);
    if (n->kind == LK_SCAN)
        h = hmix(h, (uint64_t)n->a.scan.axis * 2 + n->a.scan.reverse);
    if (n->kind == LK_CONST)
        h = hmix(h, (uint64_t)n->a.cnst.i ^ const_bits(n->a.cnst.f));
    if (n->kind == LK_DIMVAL)
        h = hmix(h, (uint64_t)(uintptr_t)n->a.dim);
    if (n->kind == LK_GATHER || n->op == OP_iota)
        h = hmix(h, (uint64_t)n->a.axis);
    return h;
}

static bool node_same(const lnode *a, const lnode *b)
{
    if (a->kind != b->kind || a->op != b->op || a->dtype != b->dtype || a->opdt != b->opdt ||
        a->nin != b->nin || a->rank != b->rank)
        return false;
    for (int k = 0; k < a->rank; k++)
        if (!dim_eq(a->shape[k], b->shape[k]))
            return false;
    for (int i = 0; i < a->nin; i++) {
        if (a->in[i].src != b->in[i].src)
            return false;
        for (int k = 0; k < a->in[i].src->rank; k++)
            if (a->in[i].idx[k] != b->in[i].idx[k])
                return false;
    }
    switch (a->kind) {
    case LK_INPUT:
    case LK_SCALAR:
        return a->a.param == b->a.param;
    case LK_CONST:
        return a->a.cnst.i == b->a.cnst.i &&
               (a->a.cnst.f == b->a.cnst.f || (a->a.cnst.f != a->a.cnst.f && b->a.cnst.f != b->a.cnst.f));
    case LK_DIMVAL:
        return a->a.dim == b->a.dim;
    case LK_REDUCE:
        return a->a.red.kind == b->a.red.kind && a->a.red.mask == b->a.red.mask &&
               a->a.red.keepdim == b->a.red.keepdim;
    case LK_CONCAT:
        return a->a.cat.axis == b->a.cat.axis;
    case LK_SCAN:
        return a->a.scan.axis == b->a.scan.axis && a->a.scan.reverse == b->a.scan.reverse;
    case LK_GATHER:
        return a->a.axis == b->a.axis;
    case LK_POINTWISE:
        return a->op != OP_iota || a->a.axis == b->a.axis;
    case LK_MATMUL:
        return true;
    }
    return false;
}

static bool node_same_eq(const void *elem, const void *key)
{
    return node_same(elem, key);
}

/* Add n to the function, or return the node already equal to it. */
static lnode *intern(lctx *x, lnode *n)
{
    uint64_t h = node_hash(n);
    if (n->kind != LK_MATMUL) {
        lnode *o = hset_find(&x->tab, h, node_same_eq, n);
        if (o) {
            if (!o->name && n->name)
                o->name = n->name;
            return o;
        }
    }
    hset_add(&x->tab, x->a, h, n);
    lfn *f = x->f;
    ARENA_GROW(x->a, f->nodes, f->nnodes, f->cap, 64);
    n->id = f->nnodes;
    f->nodes[f->nnodes++] = n;
    for (int i = 0; i < n->nin; i++)
        n->in[i].src->nuses++;
    return n;
}

static lnode *mk(lctx *x, lkind kind, op_id op, tc_dtype dt, int rank, const tc_dim *const *shape,
                 int nin, tc_loc loc)
{
    lnode *n = ARENA_NEW(x->a, lnode);
    n->kind = kind;
    n->op = op;
    n->dtype = dt;
    n->opdt = dt;
    n->rank = rank;
    n->shape = ARENA_ARRAY(x->a, const tc_dim *, rank > 0 ? rank : 1);
    for (int k = 0; k < rank; k++)
        n->shape[k] = shape[k];
    n->nin = nin;
    n->in = ARENA_ARRAY(x->a, lref, nin > 0 ? nin : 1);
    n->loc = loc;
    n->output = -1;
    return n;
}

/* A pointwise op over refs already made; operands converted to opdt. */
static lnode *pw(lctx *x, op_id op, tc_dtype dt, tc_dtype opdt, int rank,
                 const tc_dim *const *shape, const lref *in, int nin, tc_loc loc)
{
    lnode *n = mk(x, LK_POINTWISE, op, dt, rank, shape, nin, loc);
    n->opdt = opdt;
    for (int i = 0; i < nin; i++)
        n->in[i] = in[i];
    return intern(x, n);
}

/* A reader of shape (rank, shape) reading node src element for element
 * (or src rank 0). */
static lref same(lctx *x, lnode *src, int rank)
{
    lref r = {src, ARENA_ARRAY(x->a, const tc_dim *, src->rank > 0 ? src->rank : 1)};
    (void)rank;
    for (int k = 0; k < src->rank; k++)
        r.idx[k] = x->f->vars[k];
    return r;
}

static lref scalar_ref(lnode *src)
{
    return (lref){src, NULL};
}

static lnode *cnst(lctx *x, tc_dtype dt, double f, int64_t i, tc_loc loc)
{
    lnode *n = mk(x, LK_CONST, OP_const, dt, 0, NULL, 0, loc);
    n->a.cnst.f = f;
    n->a.cnst.i = i;
    return intern(x, n);
}

/* ---- reductions ---------------------------------------------------------- */

/* A primitive reduction of `in` (a ref over the input domain). */
static lnode *reduce(lctx *x, red_kind kind, tc_dtype dt, lref in, int rin,
                     const tc_dim *const *shape_in, unsigned mask, bool keepdim, tc_loc loc)
{
    const tc_dim *shape[TC_MAX_RANK] = {0};
    int rank = 0;
    for (int k = 0; k < rin; k++) {
        if (!(mask & (1u << k)))
            shape[rank++] = shape_in[k];
        else if (keepdim)
            shape[rank++] = dim_const(x->c, 1);
    }
    lnode *n = mk(x, LK_REDUCE, OP_sum, dt, rank, shape, 1, loc);
    n->a.red.kind = kind;
    n->a.red.rin = rin;
    n->a.red.shape_in = ARENA_ARRAY(x->a, const tc_dim *, rin > 0 ? rin : 1);
    for (int k = 0; k < rin; k++)
        n->a.red.shape_in[k] = shape_in[k];
    n->a.red.mask = mask;
    n->a.red.keepdim = keepdim;
    n->in[0] = in;
    return intern(x, n);
}

/* The ref by which the input domain of reduction r reads src, a value of
 * r's shape (r itself, or pointwise work on its result). */
static lref row_ref(lctx *x, const lnode *r, lnode *src)
{
    lref ref = {src, ARENA_ARRAY(x->a, const tc_dim *, r->rank > 0 ? r->rank : 1)};
    red_row_index(x->f, r, ref.idx);
    return ref;
}

static void lower_reduce(lctx *x, const gnode *g)
{
    const gnode *in = g->in[0];
    int rin = in->rank;
    unsigned mask = 0;
    for (int i = 0; i < g->a.red.naxes; i++)
        mask |= 1u << g->a.red.axes[i];
    bool kd = g->a.red.keepdim;
    lref src = ref_same(x, in, rin, in->shape);
    tc_dtype dt = g->dtype, fdt = dtype_is_float(dt) ? dt : TC_F32;
    int rank = g->rank;
    const tc_dim *const *shape = g->shape;
    const tc_dim *count = dim_const(x->c, 1);
    for (int k = 0; k < rin; k++)
        if (mask & (1u << k))
            count = dim_mul(x->c, count, in->shape[k]);
    lnode *cnt = mk(x, LK_DIMVAL, OP_dimval, TC_I64, 0, NULL, 0, g->loc);
    cnt->a.dim = count;
    tc_loc loc = g->loc;
    lnode *r = NULL;

    switch (g->op) {
    case OP_sum: r = reduce(x, RK_SUM, dt, src, rin, in->shape, mask, kd, loc); break;
    case OP_prod: r = reduce(x, RK_PROD, dt, src, rin, in->shape, mask, kd, loc); break;
    case OP_rmax: r = reduce(x, RK_MAX, dt, src, rin, in->shape, mask, kd, loc); break;
    case OP_rmin: r = reduce(x, RK_MIN, dt, src, rin, in->shape, mask, kd, loc); break;
    case OP_argmax: r = reduce(x, RK_ARGMAX, TC_I64, src, rin, in->shape, mask, kd, loc); break;
    case OP_argmin: r = reduce(x, RK_ARGMIN, TC_I64, src, rin, in->shape, mask, kd, loc); break;
    case OP_mean:
    case OP_var:
    case OP_std: {
        lnode *s = reduce(x, RK_SUM, fdt, src, rin, in->shape, mask, kd, loc);
        cnt = intern(x, cnt);
        lref ops[2] = {same(x, s, rank), scalar_ref(cnt)};
        lnode *mean = pw(x, OP_div, fdt, fdt, rank, shape, ops, 2, loc);
        if (g->op == OP_mean) {
            r = mean;
            break;
        }
        /* two passes: squared deviations from the mean, like the interpreter */
        lref dv[2] = {src, row_ref(x, s, mean)};
        lnode *dev = pw(x, OP_sub, fdt, fdt, rin, in->shape, dv, 2, loc);
        lref sq[2] = {same(x, dev, rin), same(x, dev, rin)};
        lnode *dev2 = pw(x, OP_mul, fdt, fdt, rin, in->shape, sq, 2, loc);
        lnode *ss = reduce(x, RK_SUM, fdt, same(x, dev2, rin), rin, in->shape, mask, kd, loc);
        /* max(n - correction, 0): a size when n >= correction is provable */
        const tc_dim *dd = dim_sub(x->c, count, dim_const(x->c, g->a.red.correction));
        lnode *den;
        if (nonneg(x, dd)) {
            den = mk(x, LK_DIMVAL, OP_dimval, TC_I64, 0, NULL, 0, loc);
            den->a.dim = dd;
            den = intern(x, den);
        } else {
            lref dn[2] = {scalar_ref(cnt),
                          scalar_ref(cnst(x, TC_I64, g->a.red.correction, g->a.red.correction, loc))};
            lnode *d0 = pw(x, OP_sub, TC_I64, TC_I64, 0, NULL, dn, 2, loc);
            lref dz[2] = {scalar_ref(d0), scalar_ref(cnst(x, TC_I64, 0, 0, loc))};
            den = pw(x, OP_max, TC_I64, TC_I64, 0, NULL, dz, 2, loc);
        }
        lref q[2] = {same(x, ss, rank), scalar_ref(den)};
        r = pw(x, OP_div, fdt, fdt, rank, shape, q, 2, loc);
        if (g->op == OP_std) {
            lref sr = same(x, r, rank);
            r = pw(x, OP_sqrt, fdt, fdt, rank, shape, &sr, 1, loc);
        }
        break;
    }
    case OP_logsumexp: {
        /* m + log(sum(exp(x - m))) with m = max, taken as 0 when infinite so
         * that all -inf gives -inf and any +inf gives +inf */
        lnode *m = reduce(x, RK_MAX, fdt, src, rin, in->shape, mask, kd, loc);
        lref mr = same(x, m, rank);
        lnode *inf = pw(x, OP_isinf, TC_BOOL, fdt, rank, shape, &mr, 1, loc);
        lref w[3] = {same(x, inf, rank), scalar_ref(cnst(x, fdt, 0, 0, loc)), mr};
        lnode *ms = pw(x, OP_where, fdt, fdt, rank, shape, w, 3, loc);
        lref sub[2] = {src, row_ref(x, m, ms)};
        lnode *sh = pw(x, OP_sub, fdt, fdt, rin, in->shape, sub, 2, loc);
        lref er = same(x, sh, rin);
        lnode *e = pw(x, OP_exp, fdt, fdt, rin, in->shape, &er, 1, loc);
        lnode *s = reduce(x, RK_SUM, fdt, same(x, e, rin), rin, in->shape, mask, kd, loc);
        lref lr = same(x, s, rank);
        lnode *l = pw(x, OP_log, fdt, fdt, rank, shape, &lr, 1, loc);
        lref ad[2] = {same(x, l, rank), same(x, ms, rank)};
        r = pw(x, OP_add, fdt, fdt, rank, shape, ad, 2, loc);
        break;
    }
    default:
        diag_error(x->d, TC_ERR_INTERNAL, g->loc, "lowering: unknown reduction %s",
                   op_table[g->op].name);
    }
    if (r->dtype != dt) { /* mean/var/std of an f16 input: computed in f32 */
        lref cr = same(x, r, rank);
        r = pw(x, OP_cast, dt, r->dtype, rank, shape, &cr, 1, loc);
    }
    x->of[g->id] = r;
}

/* ---- matmul ------------------------------------------------------------- */

/* Operand o of a matmul whose output has rank R reads the contraction index
 * as variable $R.  The runtime's GEMM needs each operand to be a stored node
 * read whole (or transposed in its last two dims), with all of the output's
 * batch dims or none; anything else is copied into that form first. */
static lref mm_operand(lctx *x, const gnode *g, int o)
{
    const gnode *in = g->in[o];
    int R = g->rank, nb = R - 2, ri = in->rank;
    const tc_dim *const *v = x->f->vars;
    const tc_dim *size[TC_MAX_RANK + 1];
    for (int k = 0; k < R; k++)
        size[k] = g->shape[k];
    size[R] = in->shape[ri - (o == 0 ? 1 : 2)];
    const tc_dim *at[TC_MAX_RANK];
    for (int k = 0; k < ri - 2; k++)
        at[k] = v[nb - (ri - 2) + k];
    at[ri - 2] = o == 0 ? v[R - 2] : v[R];
    at[ri - 1] = o == 0 ? v[R] : v[R - 1];
    lref r = ref_at(x, in, at, R + 1, NULL, size);
    int rs = r.src->rank;
    bool plain = r.src->kind != LK_CONST && r.src->kind != LK_SCALAR && r.src->kind != LK_DIMVAL &&
                 rs >= 2 && (rs == 2 || rs == R);
    /* batch dims: the output's, or all of size 1 (one matrix for every
     * batch, stride 0 in the plan); a mix ([B, 1, N, K] @ [B, H, K, M])
     * has no single batch stride, so it is copied below */
    bool ones = true;
    for (int k = 0; k < rs - 2; k++)
        ones = ones && dim_eq(r.src->shape[k], dim_const(x->c, 1));
    for (int k = 0; plain && k < rs - 2; k++)
        plain = r.idx[k] == v[k] && (ones || dim_eq(r.src->shape[k], g->shape[k]));
    if (plain) {
        bool straight = r.idx[rs - 2] == at[ri - 2] && r.idx[rs - 1] == at[ri - 1];
        bool swapped = r.idx[rs - 2] == at[ri - 1] && r.idx[rs - 1] == at[ri - 2];
        plain = straight || swapped;
    }
    if (plain)
        return r;
    /* materialize in[o] with the output's batch dims */
    const tc_dim *cs[TC_MAX_RANK];
    int cr = R;
    for (int k = 0; k < nb; k++)
        cs[k] = g->shape[k];
    cs[R - 2] = in->shape[ri - 2];
    cs[R - 1] = in->shape[ri - 1];
    const tc_dim *cat[TC_MAX_RANK];
    for (int k = 0; k < ri; k++)
        cat[k] = v[R - ri + k];
    for (int k = 0; k < ri - 2; k++) /* a size-1 batch dim broadcasts */
        if (!dim_eq(in->shape[k], g->shape[nb - (ri - 2) + k]))
            cat[k] = dim_const(x->c, 0);
    lref cin = ref_at(x, in, cat, cr, NULL, cs);
    lnode *cp = pw(x, OP_copy, in->dtype, in->dtype, cr, cs, &cin, 1, in->loc);
    lref out = {cp, ARENA_ARRAY(x->a, const tc_dim *, cr)};
    for (int k = 0; k < nb; k++)
        out.idx[k] = v[k];
    out.idx[R - 2] = o == 0 ? v[R - 2] : v[R];
    out.idx[R - 1] = o == 0 ? v[R] : v[R - 1];
    return out;
}

/* in[0] of a gather: g->in[0] read as a whole row-major buffer of the
 * gather's rank, $axis the gathered position; a view (or a constant) is
 * copied into that form first, as mm_operand does. */
static lref gather_source(lctx *x, const gnode *g)
{
    const gnode *in = g->in[0];
    int R = g->rank;
    const tc_dim *const *v = x->f->vars;
    lref r = ref_at(x, in, v, R, NULL, in->shape);
    bool plain = r.src->kind != LK_CONST && r.src->kind != LK_SCALAR &&
                 r.src->kind != LK_DIMVAL && r.src->rank == R;
    for (int k = 0; plain && k < R; k++)
        plain = r.idx[k] == v[k] && dim_eq(r.src->shape[k], in->shape[k]);
    if (plain)
        return r;
    lnode *cp = pw(x, OP_copy, in->dtype, in->dtype, R, in->shape, &r, 1, in->loc);
    lref out = {cp, ARENA_ARRAY(x->a, const tc_dim *, R)};
    for (int k = 0; k < R; k++)
        out.idx[k] = v[k];
    return out;
}

/* ---- the pass ------------------------------------------------------------ */

static void lower_node(lctx *x, const gnode *g)
{
    const gfn *gf = x->f->g;
    lnode *n;
    switch (op_table[g->op].kind) {
    case OPK_LEAF:
        if (g->op == OP_iota) {
            n = mk(x, LK_POINTWISE, g->op, g->dtype, g->rank, g->shape, 0, g->loc);
            n->opdt = g->dtype;
            n->a.axis = g->a.axis;
        } else if (g->op == OP_input || g->op == OP_scalar) {
            n = mk(x, g->op == OP_input ? LK_INPUT : LK_SCALAR, g->op, g->dtype, g->rank, g->shape, 0, g->loc);
            n->a.param = g->a.param;
        } else if (g->op == OP_const) {
            n = mk(x, LK_CONST, g->op, g->dtype, 0, NULL, 0, g->loc);
            n->a.cnst.f = g->a.cnst.f;
            n->a.cnst.i = g->a.cnst.i;
        } else {
            n = mk(x, LK_DIMVAL, g->op, g->dtype, 0, NULL, 0, g->loc);
            n->a.dim = g->a.dim;
        }
        n->name = g->name;
        x->of[g->id] = intern(x, n);
        return;
    case OPK_VIEW:
        return; /* read through by its users */
    case OPK_UNARY:
    case OPK_BINARY:
    case OPK_TERNARY:
    case OPK_CAST:
    case OPK_COPY: {
        lref in[3];
        for (int i = 0; i < g->nin; i++)
            in[i] = ref_same(x, g->in[i], g->rank, g->shape);
        tc_dtype opdt = g->dtype;
        if (op_table[g->op].rule == TR_BOOL)
            opdt = graph_promote_inputs(g, 0, g->nin);
        else if (g->op == OP_cast || g->op == OP_copy)
            opdt = g->in[0]->dtype;
        n = mk(x, LK_POINTWISE, g->op, g->dtype, g->rank, g->shape, g->nin, g->loc);
        n->opdt = opdt;
        for (int i = 0; i < g->nin; i++)
            n->in[i] = in[i];
        break;
    }
    case OPK_REDUCE:
        lower_reduce(x, g);
        if (!x->of[g->id]->name)
            x->of[g->id]->name = g->name;
        return;
    case OPK_CONCAT: {
        n = mk(x, LK_CONCAT, g->op, g->dtype, g->rank, g->shape, g->nin, g->loc);
        int ax = g->a.axis;
        n->a.cat.axis = ax;
        n->a.cat.offsets = ARENA_ARRAY(x->a, const tc_dim *, g->nin + 1);
        const tc_dim *off = dim_const(x->c, 0);
        for (int i = 0; i < g->nin; i++) {
            const tc_dim *at[TC_MAX_RANK], *lo[TC_MAX_RANK], *size[TC_MAX_RANK];
            for (int k = 0; k < g->rank; k++) {
                at[k] = x->f->vars[k];
                lo[k] = dim_const(x->c, 0);
                size[k] = g->shape[k];
            }
            /* input i is read where off <= $ax < off + its length */
            at[ax] = dim_sub(x->c, at[ax], off);
            lo[ax] = off;
            size[ax] = dim_add(x->c, off, g->in[i]->shape[ax]);
            n->a.cat.offsets[i] = off;
            n->in[i] = ref_at(x, g->in[i], at, g->rank, lo, size);
            off = dim_add(x->c, off, g->in[i]->shape[ax]);
        }
        n->a.cat.offsets[g->nin] = off;
        break;
    }
    case OPK_SCAN:
        n = mk(x, LK_SCAN, g->op, g->dtype, g->rank, g->shape, 1, g->loc);
        n->opdt = g->in[0]->dtype;
        n->a.scan.axis = g->a.scan.axis;
        n->a.scan.reverse = g->a.scan.reverse;
        n->in[0] = ref_same(x, g->in[0], g->rank, g->shape);
        break;
    case OPK_GATHER:
        n = mk(x, LK_GATHER, g->op, g->dtype, g->rank, g->shape, 2, g->loc);
        n->a.axis = g->a.axis;
        n->in[0] = gather_source(x, g);
        n->in[1] = ref_same(x, g->in[1], g->rank, g->shape);
        break;
    case OPK_MATMUL:
        n = mk(x, LK_MATMUL, g->op, g->dtype, g->rank, g->shape, 2, g->loc);
        n->a.mm.batch = g->rank - 2;
        n->in[0] = mm_operand(x, g, 0);
        n->in[1] = mm_operand(x, g, 1);
        break;
    default:
        diag_error(x->d, TC_ERR_INTERNAL, g->loc, "lowering: unknown op %s", op_table[g->op].name);
    }
    n->name = g->name;
    x->of[g->id] = intern(x, n);
    (void)gf;
}

lfn *lower_fn(const gfn *g, tc_dimctx *dims, tc_arena *a, tc_diag *d)
{
    lctx x = {0};
    x.a = a;
    x.d = d;
    x.c = dims;
    lfn *f = ARENA_NEW(a, lfn);
    f->g = g;
    f->dims = dims;
    for (int k = 0; k <= TC_MAX_RANK; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "$%d", k);
        f->varnames[k] = arena_strdup(a, nm);
        f->vars[k] = dim_sym(dims, f->varnames[k]);
    }
    x.f = f;
    x.of = ARENA_ARRAY(a, lnode *, g->nnodes > 0 ? g->nnodes : 1);
    hset_init(&x.tab, a, 256);
    for (int i = 0; i < g->nnodes; i++)
        lower_node(&x, g->nodes[i]);
    f->noutputs = g->noutputs;
    f->outputs = ARENA_ARRAY(a, loutput, g->noutputs > 0 ? g->noutputs : 1);
    for (int i = 0; i < g->noutputs; i++) {
        const goutput *o = &g->outputs[i];
        loutput *lo = &f->outputs[i];
        lo->name = o->name;
        lo->inout_param = o->inout_param;
        if (o->node->op == OP_view || op_table[o->node->op].kind == OPK_LEAF) {
            /* an output that is a view or a parameter: a copy kernel writes it */
            lref in = ref_same(&x, o->node, o->node->rank, o->node->shape);
            lo->node = pw(&x, OP_copy, o->node->dtype, o->node->dtype, o->node->rank,
                          o->node->shape, &in, 1, o->node->loc);
        } else {
            lo->node = x.of[o->node->id];
        }
        lo->node->nuses++;
        if (lo->node->output < 0)
            lo->node->output = i;
    }
    return f;
}
