/* build_views.c - views as strides and an offset over a materialized node.
 *
 * Every view is computed on a layout (base node, shape, strides, offset, all
 * symbolic dims, in elements of the base):
 *
 *     element [i0, i1, ...] of the view = base.flat[offset + i0*s0 + i1*s1 + ...]
 *
 * layout_of() gives the layout of any value: a VIEW node's own, or the
 * canonical row-major strides of a materialized node.  Each view operation
 * rewrites the layout and layout_emit() makes one VIEW node over the base,
 * so views of views compose and never chain (graph.h).  A layout that is
 * exactly the base (same shape, row-major, offset 0) gives the base itself,
 * so unsqueeze-then-squeeze or a full slice x[:, :] costs nothing.
 *
 *   x.T / transpose / permute   permute shape and strides
 *   unsqueeze(x, k)             a size-1 dim (stride 0: it is never stepped)
 *   squeeze(x, k)               drop a dim that is 1 (an error otherwise)
 *   broadcast_to, pointwise     stride 0 on stretched and new leading dims
 *   x[a:b:c]                    offset += a*s, stride *= c, size ceil((b-a)/c)
 *   x[i]                        offset += i*s, the dim is dropped
 *   reshape                     contiguous layouts (row-major apart from
 *                               size-1 dims, any offset) take new row-major
 *                               strides; others are materialized by an
 *                               OP_copy first, then viewed
 *
 * Slice bounds are compile-time integers; negative ones count from the end;
 * steps are positive.  Out-of-range bounds are errors (not clamped as in
 * Python) so that a constant dim and a symbolic one mean the same thing: for
 * a symbolic dim a bound that cannot be checked becomes a gconstraint
 * (x[:, 0:128] requires D >= 128) checked when sizes are bound.  Empty slices
 * are errors too.
 */
#include "build_internal.h"

#include <string.h>

static const tc_dim *dc(builder *b, int64_t v) { return dim_const(b->dc, v); }

static bool is_one(const tc_dim *d)
{
    int64_t v;
    return dim_is_const(d, &v) && v == 1;
}

/* Row-major strides of shape. */
static void row_major(builder *b, int rank, const tc_dim *const *shape, const tc_dim **stride)
{
    const tc_dim *acc = dc(b, 1);
    for (int i = rank - 1; i >= 0; i--) {
        stride[i] = acc;
        acc = dim_mul(b->dc, acc, shape[i]);
    }
}

void layout_of(builder *b, gnode *x, blayout *l, tc_loc loc)
{
    x = node_concrete(b, x, loc);
    memset(l, 0, sizeof *l);
    l->rank = x->rank;
    for (int i = 0; i < x->rank; i++)
        l->shape[i] = x->shape[i];
    if (x->op == OP_view) {
        l->base = x->in[0];
        for (int i = 0; i < x->rank; i++)
            l->stride[i] = x->a.view.strides[i];
        l->offset = x->a.view.offset;
    } else {
        l->base = x;
        row_major(b, x->rank, x->shape, l->stride);
        l->offset = dc(b, 0);
    }
}

/* Whether l's strides are row-major for its shape; size-1 dims never step,
 * so their strides do not matter. */
static bool contiguous(builder *b, const blayout *l)
{
    const tc_dim *acc = dc(b, 1);
    for (int i = l->rank - 1; i >= 0; i--) {
        if (is_one(l->shape[i]))
            continue;
        if (!dim_eq(l->stride[i], acc))
            return false;
        acc = dim_mul(b->dc, acc, l->shape[i]);
    }
    return true;
}

gnode *layout_emit(builder *b, const blayout *l, tc_loc loc)
{
    gnode *base = l->base;
    int64_t off;
    bool same = l->rank == base->rank && dim_is_const(l->offset, &off) && off == 0 &&
                contiguous(b, l);
    for (int i = 0; same && i < l->rank; i++)
        same = dim_eq(l->shape[i], base->shape[i]);
    if (same)
        return base;
    gnode *in[1] = {base};
    gnode t;
    memset(&t, 0, sizeof t);
    t.op = OP_view;
    t.dtype = base->dtype;
    t.rank = l->rank;
    t.shape = (const tc_dim **)l->shape;
    t.in = in;
    t.nin = 1;
    t.loc = loc;
    t.a.view.strides = (const tc_dim **)l->stride;
    t.a.view.offset = l->offset;
    return node_emit(b, &t);
}

gnode *view_broadcast(builder *b, gnode *x, int rank, const tc_dim *const *shape, tc_loc loc)
{
    blayout l, r;
    layout_of(b, x, &l, loc);
    r = l;
    r.rank = rank;
    for (int p = 0; p < rank; p++) {
        int q = l.rank - (rank - p);
        r.shape[p] = shape[p];
        if (q < 0 || (is_one(l.shape[q]) && !is_one(shape[p])))
            r.stride[p] = dc(b, 0);
        else
            r.stride[p] = l.stride[q];
    }
    return layout_emit(b, &r, loc);
}

gnode *view_permute(builder *b, gnode *x, const int *perm, tc_loc loc)
{
    blayout l, r;
    layout_of(b, x, &l, loc);
    r = l;
    for (int i = 0; i < l.rank; i++) {
        r.shape[i] = l.shape[perm[i]];
        r.stride[i] = l.stride[perm[i]];
    }
    return layout_emit(b, &r, loc);
}

gnode *view_transpose(builder *b, gnode *x, int i, int j, tc_loc loc)
{
    int perm[TC_MAX_RANK];
    for (int k = 0; k < x->rank; k++)
        perm[k] = k;
    perm[i] = j;
    perm[j] = i;
    return view_permute(b, x, perm, loc);
}

gnode *view_unsqueeze(builder *b, gnode *x, int axis, tc_loc loc)
{
    if (x->rank >= TC_MAX_RANK)
        diag_error(b->d, TC_ERR_COMPILE, loc, "unsqueeze of %s would exceed the maximum rank %d",
                   type_str(b, x), (int)TC_MAX_RANK);
    blayout l, r;
    layout_of(b, x, &l, loc);
    r = l;
    r.rank = l.rank + 1;
    for (int i = 0, k = 0; i < r.rank; i++) {
        if (i == axis) {
            r.shape[i] = dc(b, 1);
            r.stride[i] = dc(b, 0);
        } else {
            r.shape[i] = l.shape[k];
            r.stride[i] = l.stride[k];
            k++;
        }
    }
    return layout_emit(b, &r, loc);
}

gnode *view_squeeze(builder *b, gnode *x, int axis, tc_loc loc)
{
    if (!is_one(x->shape[axis]))
        diag_error(b->d, TC_ERR_COMPILE, loc, "squeeze of dim %d of %s, which is %s, not 1", axis,
                   type_str(b, x), dimstr(b, x->shape[axis]));
    blayout l, r;
    layout_of(b, x, &l, loc);
    r = l;
    r.rank = 0;
    for (int i = 0; i < l.rank; i++) {
        if (i == axis)
            continue;
        r.shape[r.rank] = l.shape[i];
        r.stride[r.rank] = l.stride[i];
        r.rank++;
    }
    return layout_emit(b, &r, loc);
}

gnode *view_reshape(builder *b, gnode *x, int rank, const tc_dim *const *shape, tc_loc loc)
{
    blayout l, r;
    layout_of(b, x, &l, loc);
    if (!contiguous(b, &l)) {
        /* The layout forbids a view (a transpose, a step, a broadcast):
         * materialize it row-major, then view that. */
        gnode *c = node_copy(b, layout_emit(b, &l, loc), loc);
        layout_of(b, c, &l, loc);
    }
    r = l;
    r.rank = rank;
    for (int i = 0; i < rank; i++)
        r.shape[i] = shape[i];
    row_major(b, rank, shape, r.stride);
    return layout_emit(b, &r, loc);
}

/* ---- indexing: x[i, a:b:c, ...] ---- */

static const char *bound_str(builder *b, const ast_expr *e, int64_t v)
{
    return e ? arena_printf(b->a, "%lld", (long long)v) : "";
}

/* Bounds and indices beyond this are out of range for any tensor; keeping
 * them small keeps -v and v + 1 from overflowing. */
#define BOUND_MAX ((int64_t)1 << 62)

static int64_t bound(builder *b, const ast_expr *e, const char *what)
{
    int64_t v = const_int(b, e, what);
    if (v < -BOUND_MAX || v > BOUND_MAX)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s %lld is out of range", what, (long long)v);
    return v;
}

/* One slice a:b:c of dim k (size n, stride s) into r at position p. */
static void slice_dim(builder *b, const ast_expr *sl, int k, const tc_dim *n, const tc_dim *s,
                      blayout *r, int p)
{
    const ast_expr *es = sl->u.slice.start, *ee = sl->u.slice.stop, *ep = sl->u.slice.step;
    int64_t step = ep ? bound(b, ep, "slice step") : 1;
    if (step <= 0)
        diag_error(b->d, TC_ERR_COMPILE, ep->loc, "slice step must be positive, but it is %lld",
                   (long long)step);
    int64_t sv = es ? bound(b, es, "slice start") : 0;
    int64_t ev = ee ? bound(b, ee, "slice end") : 0;
    const char *size = dimstr(b, n);
    /* Bounds as dims; negative ones count from the end.  Each needs n >= |v|. */
    const tc_dim *start = dc(b, sv), *stop = n;
    if (es) {
        int64_t need = sv < 0 ? -sv : sv;
        if (sv < 0)
            start = dim_sub(b->dc, n, dc(b, need));
        require_dim(b, n, need, es->loc,
                    arena_printf(b->a, "slice start %lld is out of range for dim %d of size %s",
                                 (long long)sv, k, size),
                    arena_printf(b->a, "slice start %lld of dim %d", (long long)sv, k));
    }
    if (ee) {
        int64_t need = ev < 0 ? -ev : ev;
        stop = ev < 0 ? dim_sub(b->dc, n, dc(b, need)) : dc(b, ev);
        require_dim(b, n, need, ee->loc,
                    arena_printf(b->a, "slice end %lld is out of range for dim %d of size %s",
                                 (long long)ev, k, size),
                    arena_printf(b->a, "slice end %lld of dim %d", (long long)ev, k));
    }
    const tc_dim *len = dim_sub(b->dc, stop, start);
    const char *text = arena_printf(b->a, "%s:%s", bound_str(b, es, sv), bound_str(b, ee, ev));
    require_dim(b, len, 1, sl->loc,
                arena_printf(b->a, "slice %s of dim %d (size %s) is empty", text, k, size),
                arena_printf(b->a, "slice %s of dim %d is not empty", text, k));
    r->shape[p] = step == 1 ? len : dim_ceildiv(b->dc, len, dc(b, step));
    r->stride[p] = dim_mul(b->dc, s, dc(b, step));
    r->offset = dim_add(b->dc, r->offset, dim_mul(b->dc, start, s));
}

gnode *build_index(builder *b, const ast_expr *e)
{
    gnode *x = build_expr(b, e->u.index.obj);
    int nitems = e->u.index.nitems;
    if (nitems > x->rank)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "too many indices for %s: %d given, but its rank is %d",
                   type_str(b, x), nitems, x->rank);
    blayout l, r;
    layout_of(b, x, &l, e->loc);
    r = l;
    r.rank = 0;
    for (int k = 0; k < l.rank; k++) {
        const ast_expr *it = k < nitems ? e->u.index.items[k] : NULL;
        if (!it) {
            r.shape[r.rank] = l.shape[k];
            r.stride[r.rank] = l.stride[k];
            r.rank++;
        } else if (it->kind == AST_SLICE) {
            slice_dim(b, it, k, l.shape[k], l.stride[k], &r, r.rank);
            r.rank++;
        } else {
            int64_t i = bound(b, it, "index");
            const tc_dim *n = l.shape[k];
            int64_t need = i < 0 ? -i : i + 1;
            require_dim(b, n, need, it->loc,
                        arena_printf(b->a, "index %lld is out of range for dim %d of size %s",
                                     (long long)i, k, dimstr(b, n)),
                        arena_printf(b->a, "index %lld of dim %d", (long long)i, k));
            const tc_dim *pos = i < 0 ? dim_sub(b->dc, n, dc(b, -i)) : dc(b, i);
            r.offset = dim_add(b->dc, r.offset, dim_mul(b->dc, pos, l.stride[k]));
        }
    }
    return layout_emit(b, &r, e->loc);
}

/* ---- the view builtins ---- */

static const char *const view_names[] = {"permute",   "transpose", "reshape",      "unsqueeze",
                                         "squeeze",   "broadcast_to", NULL};

bool view_builtin_is(const char *name)
{
    for (int i = 0; view_names[i]; i++)
        if (strcmp(view_names[i], name) == 0)
            return true;
    return false;
}

/* The list arguments of permute/reshape/broadcast_to: either the positional
 * arguments after x, or a single list or tuple.  No keywords. */
static int list_args(builder *b, const ast_expr *e, const ast_expr ***items)
{
    const char *fn = e->u.call.fn;
    int nargs = e->u.call.nargs;
    for (int i = 0; i < nargs; i++)
        if (e->u.call.args[i].name)
            diag_error(b->d, TC_ERR_COMPILE, e->u.call.args[i].loc,
                       "'%s' has no parameter named '%s'", fn, e->u.call.args[i].name);
    if (nargs < 1)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc, "missing argument 'x' in call to '%s'",
                   fn);
    if (nargs == 2) {
        const ast_expr *v = e->u.call.args[1].value;
        if (v->kind == AST_LIST || v->kind == AST_TUPLE) {
            *items = (const ast_expr **)v->u.tuple.items;
            return v->u.tuple.nitems;
        }
    }
    const ast_expr **it = ARENA_ARRAY(b->sc->sa, const ast_expr *, nargs > 1 ? nargs - 1 : 1);
    for (int i = 1; i < nargs; i++)
        it[i - 1] = e->u.call.args[i].value;
    *items = it;
    return nargs - 1;
}

static gnode *do_permute(builder *b, const ast_expr *e)
{
    const ast_expr **items;
    int n = list_args(b, e, &items);
    gnode *x = build_expr(b, e->u.call.args[0].value);
    if (n != x->rank)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc,
                   "permute of %s needs %d axes, but %d were given", type_str(b, x), x->rank, n);
    int perm[TC_MAX_RANK];
    bool seen[TC_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        perm[i] = const_axis(b, items[i], x, x->rank);
        if (seen[perm[i]])
            diag_error(b->d, TC_ERR_COMPILE, items[i]->loc,
                       "permute axes are not a permutation: axis %d appears twice", perm[i]);
        seen[perm[i]] = true;
    }
    return view_permute(b, x, perm, e->u.call.fn_loc);
}

static const tc_dim *numel(builder *b, int rank, const tc_dim *const *shape)
{
    const tc_dim *n = dc(b, 1);
    for (int i = 0; i < rank; i++)
        n = dim_mul(b->dc, n, shape[i]);
    return n;
}

static gnode *do_reshape(builder *b, const ast_expr *e)
{
    const ast_expr **items;
    int n = list_args(b, e, &items);
    gnode *x = build_expr(b, e->u.call.args[0].value);
    tc_loc loc = e->u.call.fn_loc;
    if (n > TC_MAX_RANK)
        diag_error(b->d, TC_ERR_COMPILE, loc, "reshape to rank %d exceeds the maximum rank %d", n,
                   (int)TC_MAX_RANK);
    const tc_dim *shape[TC_MAX_RANK];
    int infer = -1;
    for (int i = 0; i < n; i++) {
        const tc_dim *d = const_dim(b, items[i], "reshape dim");
        int64_t v;
        if (dim_is_const(d, &v) && v == -1) {
            if (infer >= 0)
                diag_error(b->d, TC_ERR_COMPILE, items[i]->loc,
                           "reshape can infer only one dim, but -1 appears twice");
            infer = i;
            shape[i] = d;
            continue;
        }
        if (dim_is_const(d, &v) && v <= 0)
            diag_error(b->d, TC_ERR_COMPILE, items[i]->loc,
                       "reshape dims must be positive (or -1), but got %lld", (long long)v);
        shape[i] = d;
    }
    const tc_dim *total = numel(b, x->rank, x->shape);
    if (infer >= 0) {
        const tc_dim *rest = dc(b, 1);
        for (int i = 0; i < n; i++)
            if (i != infer)
                rest = dim_mul(b->dc, rest, shape[i]);
        const tc_dim *q = dim_exactdiv(b->dc, total, rest);
        if (!q)
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "cannot reshape %s to %s: %s elements do not divide into rows of %s",
                       type_str(b, x), shape_str(b, n, shape), dimstr(b, total), dimstr(b, rest));
        shape[infer] = q;
    } else if (!dim_eq(total, numel(b, n, shape))) {
        diag_error(b->d, TC_ERR_COMPILE, loc, "cannot reshape %s (%s elements) to %s (%s elements)",
                   type_str(b, x), dimstr(b, total), shape_str(b, n, shape),
                   dimstr(b, numel(b, n, shape)));
    }
    return view_reshape(b, x, n, shape, loc);
}

static gnode *do_broadcast_to(builder *b, const ast_expr *e)
{
    const ast_expr **items;
    int n = list_args(b, e, &items);
    gnode *x = build_expr(b, e->u.call.args[0].value);
    tc_loc loc = e->u.call.fn_loc;
    if (n > TC_MAX_RANK)
        diag_error(b->d, TC_ERR_COMPILE, loc, "broadcast_to rank %d exceeds the maximum rank %d", n,
                   (int)TC_MAX_RANK);
    const tc_dim *shape[TC_MAX_RANK];
    for (int i = 0; i < n; i++)
        shape[i] = const_dim(b, items[i], "broadcast_to dim");
    if (n < x->rank)
        diag_error(b->d, TC_ERR_COMPILE, loc, "cannot broadcast %s to the lower rank %s",
                   type_str(b, x), shape_str(b, n, shape));
    for (int t = 1; t <= x->rank; t++) {
        const tc_dim *dx = x->shape[x->rank - t], *dt = shape[n - t];
        if (!dim_eq(dx, dt) && !is_one(dx))
            diag_error(b->d, TC_ERR_COMPILE, loc, "cannot broadcast %s to %s (dim -%d: %s vs %s)",
                       type_str(b, x), shape_str(b, n, shape), t, dimstr(b, dx), dimstr(b, dt));
    }
    return view_broadcast(b, x, n, shape, loc);
}

/* transpose/unsqueeze/squeeze take named arguments. */
static gnode *do_axes(builder *b, const ast_expr *e)
{
    const char *fn = e->u.call.fn;
    tc_loc loc = e->u.call.fn_loc;
    const ast_arg *args[3] = {NULL, NULL, NULL};
    static const char *const tnames[] = {"x", "axis0", "axis1"};
    static const char *const unames[] = {"x", "axis"};
    bool tr = strcmp(fn, "transpose") == 0;
    build_match_args(b, e, fn, tr ? tnames : unames, tr ? 3 : 2, args);
    if (!args[0])
        diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument 'x' in call to '%s'", fn);
    gnode *x = build_expr(b, args[0]->value);
    if (tr) {
        for (int i = 1; i < 3; i++)
            if (!args[i])
                diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument '%s' in call to '%s'",
                           tnames[i], fn);
        int i = const_axis(b, args[1]->value, x, x->rank);
        int j = const_axis(b, args[2]->value, x, x->rank);
        return view_transpose(b, x, i, j, loc);
    }
    if (strcmp(fn, "unsqueeze") == 0) {
        if (!args[1])
            diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument 'axis' in call to '%s'", fn);
        /* The new dim may go anywhere from before the first to after the last. */
        int axis = const_axis(b, args[1]->value, x, x->rank + 1);
        return view_unsqueeze(b, x, axis, loc);
    }
    /* squeeze: one axis, or every dim that is 1 */
    if (args[1])
        return view_squeeze(b, x, const_axis(b, args[1]->value, x, x->rank), loc);
    for (int i = x->rank - 1; i >= 0; i--) {
        int64_t v;
        if (dim_is_const(x->shape[i], &v) && v == 1)
            x = view_squeeze(b, x, i, loc);
    }
    return x;
}

gnode *view_builtin(builder *b, const ast_expr *e)
{
    const char *fn = e->u.call.fn;
    if (strcmp(fn, "permute") == 0)
        return do_permute(b, e);
    if (strcmp(fn, "reshape") == 0)
        return do_reshape(b, e);
    if (strcmp(fn, "broadcast_to") == 0)
        return do_broadcast_to(b, e);
    if (strcmp(fn, "transpose") == 0 || strcmp(fn, "unsqueeze") == 0 || strcmp(fn, "squeeze") == 0)
        return do_axes(b, e);
    return NULL;
}
