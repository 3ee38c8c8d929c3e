/* build_gather.c - the index builtins: iota and gather.
 *
 *   iota(shape, axis=-1)      i64 of the given shape (a dim, or a list of
 *                             dims), each element its index along axis:
 *                             iota(C) is 0, 1, ..., C-1, and
 *                             iota(C) == unsqueeze(t, 1) a one-hot mask
 *   gather(x, index, axis=-1) torch.gather(x, axis, index): out[..., j, ...]
 *                             = x[..., index[..., j, ...], ...] along axis;
 *                             index is i32 or i64 of x's rank, and off the
 *                             axis each of its dims is x's or 1 (a 1
 *                             broadcasts, as np.take_along_axis does); the
 *                             result has x's dtype, x's dims off the axis
 *                             and index's along it
 *
 * Both are ordinary nodes: iota an i64 leaf (OP_iota, its axis in a.axis),
 * gather an OPK_GATHER node over (x, index broadcast to the result's shape).
 * An index outside [0, size of x's axis) is the interpreter's located error
 * and, on the GPU, a NaN (floats) or 0 (integers, bool) with no read outside
 * x (docs/language.md); neither can be checked at compile time.
 */
#include "build_internal.h"

#include <string.h>

static gnode *do_iota(builder *b, const ast_expr *e)
{
    static const char *const names[] = {"shape", "axis"};
    const ast_arg *args[2];
    tc_loc loc = e->u.call.fn_loc;
    build_match_args(b, e, "iota", names, 2, args);
    if (!args[0])
        diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument 'shape' in call to 'iota'");
    const ast_expr *v = args[0]->value;
    const ast_expr *const *items = (const ast_expr *const *)&v;
    int n = 1;
    if (v->kind == AST_LIST || v->kind == AST_TUPLE) {
        items = (const ast_expr *const *)v->u.tuple.items;
        n = v->u.tuple.nitems;
    }
    if (n < 1 || n > TC_MAX_RANK)
        diag_error(b->d, TC_ERR_COMPILE, v->loc, "'iota' needs a shape of rank 1 to %d, but this has %d",
                   (int)TC_MAX_RANK, n);
    const tc_dim **shape = ARENA_ARRAY(b->sc->sa, const tc_dim *, n);
    for (int i = 0; i < n; i++) {
        shape[i] = const_dim(b, items[i], "iota dim");
        int64_t c;
        if (dim_is_const(shape[i], &c) && c <= 0)
            diag_error(b->d, TC_ERR_COMPILE, items[i]->loc,
                       "iota dims must be positive, but got %lld", (long long)c);
    }
    gnode t = build_tmpl(OP_iota, TC_I64, n, shape, NULL, 0, loc);
    t.a.axis = args[1] ? const_axis(b, args[1]->value, &t, n) : n - 1;
    return node_emit(b, &t);
}

static gnode *do_gather(builder *b, const ast_expr *e)
{
    static const char *const names[] = {"x", "index", "axis"};
    const ast_arg *args[3];
    tc_loc loc = e->u.call.fn_loc;
    build_match_args(b, e, "gather", names, 3, args);
    for (int i = 0; i < 2; i++)
        if (!args[i])
            diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument '%s' in call to 'gather'",
                       names[i]);
    gnode *x = build_expr(b, args[0]->value);
    gnode *idx = build_expr(b, args[1]->value);
    if (x->rank == 0)
        diag_error(b->d, TC_ERR_COMPILE, args[0]->loc,
                   "'gather' needs a tensor of rank 1 or more, but x is %s", type_str(b, x));
    int axis = args[2] ? const_axis(b, args[2]->value, x, x->rank) : x->rank - 1;
    if (idx->dtype != TC_I32 && idx->dtype != TC_I64)
        diag_error(b->d, TC_ERR_COMPILE, args[1]->loc,
                   "'gather' needs an i32 or i64 index, but it is %s", type_str(b, idx));
    if (idx->rank != x->rank)
        diag_error(b->d, TC_ERR_COMPILE, args[1]->loc,
                   "'gather' needs an index of x's rank %d, but it is %s", x->rank,
                   type_str(b, idx));
    const tc_dim **shape = ARENA_ARRAY(b->sc->sa, const tc_dim *, x->rank);
    for (int k = 0; k < x->rank; k++) {
        int64_t one;
        bool is1 = dim_is_const(idx->shape[k], &one) && one == 1;
        if (k != axis && !dim_eq(idx->shape[k], x->shape[k]) && !is1)
            diag_error(b->d, TC_ERR_COMPILE, args[1]->loc,
                       "'gather' along axis %d needs the index's other dims to be x's or 1, but "
                       "x is %s and the index %s (dim %d: %s vs %s)",
                       axis, type_str(b, x), type_str(b, idx), k, dimstr(b, x->shape[k]),
                       dimstr(b, idx->shape[k]));
        shape[k] = k == axis ? idx->shape[k] : x->shape[k];
    }
    idx = view_broadcast(b, idx, x->rank, shape, args[1]->loc);
    gnode *in[2] = {x, idx};
    gnode t = build_tmpl(OP_gather, x->dtype, x->rank, shape, in, 2, loc);
    t.a.axis = axis;
    return node_emit(b, &t);
}

bool gather_builtin_is(const char *name)
{
    return strcmp(name, "iota") == 0 || strcmp(name, "gather") == 0;
}

gnode *gather_builtin(builder *b, const ast_expr *e)
{
    return strcmp(e->u.call.fn, "iota") == 0 ? do_iota(b, e) : do_gather(b, e);
}
