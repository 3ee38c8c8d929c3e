/* grad_views.c - the adjoint of a VIEW: the cotangent of a strided view
 * scattered back over its (contiguous) base.
 *
 * A view is one of, or a composition of (build_views.c): a reshape (row-major
 * strides of its own shape, offset 0, as many elements), a broadcast
 * (stride 0), a permutation, slices with positive steps and integer
 * indices.  Backwards:
 *   reshape      the cotangent reshaped to the base's shape;
 *   otherwise    broadcast dims summed; each remaining dim matched to the
 *                base dim whose row-major stride, times a constant step,
 *                is its stride; the offset split into a start per base dim
 *                (dim_split); the cotangent permuted into base order, steps
 *                interleaved with zeros, and padded with zeros (concat)
 *                before and after each slice.
 * A view that fits neither is a located error.
 */
#include "grad.h"

#include <string.h>

static const tc_dim *dc(grad_ctx *c, int64_t v) { return dim_const(c->b->dc, v); }

static bool is_const(const tc_dim *d, int64_t want)
{
    int64_t v;
    return dim_is_const(d, &v) && v == want;
}

static void row_major(grad_ctx *c, int rank, const tc_dim *const *shape, const tc_dim **stride)
{
    const tc_dim *acc = dc(c, 1);
    for (int i = rank - 1; i >= 0; i--) {
        stride[i] = acc;
        acc = dim_mul(c->b->dc, acc, shape[i]);
    }
}

static const tc_dim *numel(grad_ctx *c, int rank, const tc_dim *const *shape)
{
    const tc_dim *n = dc(c, 1);
    for (int i = 0; i < rank; i++)
        n = dim_mul(c->b->dc, n, shape[i]);
    return n;
}

static _Noreturn void no_rule(grad_ctx *c, const gnode *v)
{
    diag_error(c->b->d, TC_ERR_COMPILE, v->loc,
               "no gradient rule for this view (differentiating '%s'); materialize it first", c->fw->name);
}

/* zeros of t's shape with dim j of size len */
static gnode *zeros_like_dim(grad_ctx *c, gnode *t, int j, const tc_dim *len, tc_loc loc)
{
    const tc_dim *shape[TC_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
        shape[i] = i == j ? len : t->shape[i];
    gnode *z = node_const(c->b, t->dtype, 0.0, false, loc);
    return view_broadcast(c->b, z, t->rank, shape, loc);
}

/* t's first len elements along dim j */
static gnode *prefix(grad_ctx *c, gnode *t, int j, const tc_dim *len, tc_loc loc)
{
    blayout l;
    layout_of(c->b, t, &l, loc);
    l.shape[j] = len;
    return layout_emit(c->b, &l, loc);
}

gnode *grad_view(grad_ctx *c, const gnode *v, gnode *g)
{
    builder *b = c->b;
    tc_loc loc = v->loc;
    const gnode *x = v->in[0];
    int r = v->rank;
    const tc_dim *const *vs = v->a.view.strides;
    g = node_concrete(b, g, loc);

    /* a reshape */
    const tc_dim *rm[TC_MAX_RANK];
    row_major(c, r, v->shape, rm);
    bool reshape = is_const(v->a.view.offset, 0) &&
                   dim_eq(numel(c, r, v->shape), numel(c, x->rank, x->shape));
    for (int i = 0; reshape && i < r; i++)
        reshape = is_const(v->shape[i], 1) || dim_eq(vs[i], rm[i]);
    if (reshape)
        return view_reshape(b, g, x->rank, x->shape, loc);

    /* broadcast dims summed (kept as size 1) */
    bool axes[TC_MAX_RANK] = {false}, any = false;
    for (int i = 0; i < r; i++)
        if (is_const(vs[i], 0) && !is_const(v->shape[i], 1))
            axes[i] = any = true;
    if (any)
        g = node_reduce(b, OP_sum, g, axes, true, 0, loc);

    /* match each stepping dim to a base dim */
    const tc_dim *cs[TC_MAX_RANK];
    row_major(c, x->rank, x->shape, cs);
    int of[TC_MAX_RANK], owner[TC_MAX_RANK];
    int64_t step[TC_MAX_RANK];
    for (int j = 0; j < x->rank; j++)
        owner[j] = -1;
    int nk = 0, kept[TC_MAX_RANK];
    for (int i = 0; i < r; i++) {
        of[i] = -1;
        if (is_const(v->shape[i], 1) || axes[i])
            continue;
        for (int pass = 0; pass < 2 && of[i] < 0; pass++)
            for (int j = 0; j < x->rank && of[i] < 0; j++) {
                if (owner[j] >= 0 || is_const(x->shape[j], 1))
                    continue;
                const tc_dim *q = dim_exactdiv(b->dc, vs[i], cs[j]);
                int64_t m;
                if (q && dim_is_const(q, &m) && (pass == 0 ? m == 1 : m > 1)) {
                    of[i] = j;
                    owner[j] = i;
                    step[i] = m;
                }
            }
        if (of[i] < 0)
            no_rule(c, v);
        kept[nk++] = i;
    }

    /* the offset as a start per base dim */
    const tc_dim *start[TC_MAX_RANK];
    const tc_dim *off = v->a.view.offset;
    for (int j = 0; j < x->rank; j++) {
        const tc_dim *q, *rest;
        dim_split(b->dc, off, cs[j], &q, &rest);
        start[j] = q;
        off = rest;
    }
    if (!is_const(off, 0))
        no_rule(c, v);
    /* a negative index counts from the end: D - 1 splits as 1*D + (-1),
     * which is 0*D + (D - 1) */
    for (int j = x->rank - 1; j > 0; j--) {
        int64_t s;
        if (dim_is_const(start[j], &s) && s < 0) {
            start[j] = dim_add(b->dc, start[j], x->shape[j]);
            start[j - 1] = dim_sub(b->dc, start[j - 1], dc(c, 1));
        }
    }

    /* the kept dims only, in base order, then the base's rank */
    const tc_dim *shape[TC_MAX_RANK];
    for (int i = 0; i < nk; i++)
        shape[i] = v->shape[kept[i]];
    gnode *t = view_reshape(b, g, nk, shape, loc);
    int perm[TC_MAX_RANK], np = 0;
    for (int j = 0; j < x->rank; j++)
        if (owner[j] >= 0)
            for (int i = 0; i < nk; i++)
                if (kept[i] == owner[j])
                    perm[np++] = i;
    t = view_permute(b, t, perm, loc);
    for (int j = 0; j < x->rank; j++)
        shape[j] = owner[j] >= 0 ? v->shape[owner[j]] : dc(c, 1);
    t = view_reshape(b, t, x->rank, shape, loc);

    for (int j = 0; j < x->rank; j++) {
        const tc_dim *len = t->shape[j];
        if (owner[j] >= 0 && step[owner[j]] > 1) {
            int64_t m = step[owner[j]];
            const tc_dim *n = len;
            /* [.., n, ..] -> [.., n, 1, ..] ++ zeros [.., n, m-1, ..] -> [.., n*m, ..] */
            gnode *u = view_unsqueeze(b, t, j + 1, loc);
            gnode *pieces[2] = {u, zeros_like_dim(c, u, j + 1, dc(c, m - 1), loc)};
            u = node_concat(b, pieces, 2, j + 1, loc);
            for (int i = 0; i < t->rank; i++)
                shape[i] = i == j ? dim_mul(b->dc, n, dc(c, m)) : t->shape[i];
            u = view_reshape(b, u, t->rank, shape, loc);
            len = dim_add(b->dc, dim_mul(b->dc, dim_sub(b->dc, n, dc(c, 1)), dc(c, m)), dc(c, 1));
            t = prefix(c, u, j, len, loc);
        }
        const tc_dim *after = dim_sub(b->dc, dim_sub(b->dc, x->shape[j], start[j]), len);
        gnode *pieces[3];
        int npieces = 0;
        if (!is_const(start[j], 0))
            pieces[npieces++] = zeros_like_dim(c, t, j, start[j], loc);
        pieces[npieces++] = t;
        if (!is_const(after, 0))
            pieces[npieces++] = zeros_like_dim(c, t, j, after, loc);
        if (npieces > 1)
            t = node_concat(b, pieces, npieces, j, loc);
    }
    return t;
}
