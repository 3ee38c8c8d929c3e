/* build_builtin.c - the builtin functions of the language.
 *
 *   pointwise  the unary ops of ops.def by their spelling (exp, gelu, ...),
 *              binary max/min/pow/atan2, where(c, a, b), clamp(x, lo, hi)
 *   casts      a dtype name called like a function: f16(x)
 *   reduce     sum mean max min prod argmax argmin var std logsumexp:
 *              (x, axis, keepdim) plus correction for var/std
 *   views      see build_views.c
 *   concat     concat(a, b, ..., axis=0) or concat([a, b], axis=0)
 *   scans      cumsum cumprod cummax cummin logcumsumexp: (x, axis, reverse);
 *              axis may be left out for rank 1
 *   index      iota and gather: see build_gather.c
 *
 * max and min are the binary pointwise op when called with exactly two
 * positional arguments and no keyword (max(a, b)), and the reduction
 * otherwise (max(x), max(x, axis=-1)).  Builtins cannot be redefined by the
 * user's program (build.c); prelude functions can be.
 */
#include "build_internal.h"

#include <string.h>

static const char *const binary_names[] = {"max", "min", "pow", "atan2", NULL};

static const struct {
    const char *name;
    op_id op;
} reductions[] = {
    {"sum", OP_sum},       {"mean", OP_mean},     {"max", OP_rmax}, {"min", OP_rmin},
    {"prod", OP_prod},     {"argmax", OP_argmax}, {"argmin", OP_argmin},
    {"var", OP_var},       {"std", OP_std},       {"logsumexp", OP_logsumexp},
};
enum { NREDUCTIONS = sizeof reductions / sizeof reductions[0] };

/* Unary pointwise builtins: every OPK_UNARY row of ops.def but `not`,
 * which the language spells `!`. */
static bool unary_op(const char *name, op_id *op)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (op_table[i].kind == OPK_UNARY && i != OP_not && strcmp(op_table[i].name, name) == 0) {
            *op = (op_id)i;
            return true;
        }
    return false;
}

static bool binary_op(const char *name, op_id *op)
{
    for (int i = 0; binary_names[i]; i++)
        if (strcmp(binary_names[i], name) == 0) {
            *op = !strcmp(name, "max") ? OP_max : !strcmp(name, "min") ? OP_min
                : !strcmp(name, "pow") ? OP_pow : OP_atan2;
            return true;
        }
    return false;
}

static bool scan_op(const char *name, op_id *op)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (op_table[i].kind == OPK_SCAN && strcmp(op_table[i].name, name) == 0) {
            *op = (op_id)i;
            return true;
        }
    return false;
}

static bool reduce_op(const char *name, op_id *op)
{
    for (int i = 0; i < NREDUCTIONS; i++)
        if (strcmp(reductions[i].name, name) == 0) {
            *op = reductions[i].op;
            return true;
        }
    return false;
}

bool builtin_is(const char *name)
{
    op_id op;
    return unary_op(name, &op) || binary_op(name, &op) || reduce_op(name, &op) || scan_op(name, &op) ||
           !strcmp(name, "where") || !strcmp(name, "clamp") || !strcmp(name, "concat") ||
           view_builtin_is(name) || gather_builtin_is(name) || dtype_parse(name) != TC_DT_NONE;
}

const char **builtin_names(builder *b)
{
    static const char *const more[] = {"pow",       "atan2",     "where",   "clamp",  "concat",
                                       "sum",       "mean",      "max",     "min",    "prod",
                                       "argmax",    "argmin",    "var",     "std",    "logsumexp",
                                       "permute",   "transpose", "reshape", "unsqueeze",
                                       "squeeze",   "broadcast_to", "iota",  "gather", NULL};
    const char **names = ARENA_ARRAY(b->a, const char *, OP_COUNT + 32);
    int n = 0;
    for (int i = 0; i < OP_COUNT; i++)
        if ((op_table[i].kind == OPK_UNARY && i != OP_not) || op_table[i].kind == OPK_SCAN)
            names[n++] = op_table[i].name;
    for (int i = 0; more[i]; i++)
        names[n++] = more[i];
    names[n] = NULL;
    return names;
}

void build_match_args(builder *b, const ast_expr *call, const char *fname,
                      const char *const *pnames, int np, const ast_arg **out)
{
    for (int i = 0; i < np; i++)
        out[i] = NULL;
    bool kw = false;
    int pos = 0;
    for (int i = 0; i < call->u.call.nargs; i++) {
        const ast_arg *a = &call->u.call.args[i];
        if (!a->name) {
            if (kw)
                diag_error(b->d, TC_ERR_COMPILE, a->loc,
                           "positional argument after a keyword argument");
            if (pos >= np)
                diag_error(b->d, TC_ERR_COMPILE, a->loc, "'%s' takes %s, but %d were given",
                           fname, plural(b, np, "argument", "arguments"), call->u.call.nargs);
            out[pos++] = a;
            continue;
        }
        kw = true;
        int j = 0;
        while (j < np && strcmp(pnames[j], a->name) != 0)
            j++;
        if (j == np && habit_hint(a->name, pnames, np))
            diag_error_hint(b->d, TC_ERR_COMPILE, a->loc, habit_hint(a->name, pnames, np),
                            "'%s' has no parameter named '%s'", fname, a->name);
        if (j == np)
            diag_error(b->d, TC_ERR_COMPILE, a->loc, "'%s' has no parameter named '%s'%s", fname,
                       a->name, suggest(b, a->name, pnames, np));
        if (out[j])
            diag_error(b->d, TC_ERR_COMPILE, a->loc, "argument '%s' of '%s' is given twice",
                       a->name, fname);
        out[j] = a;
    }
}

static void need(builder *b, const ast_expr *e, const ast_arg *a, const char *pname)
{
    if (!a)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc, "missing argument '%s' in call to '%s'",
                   pname, e->u.call.fn);
}

/* The axes argument of a reduction: an integer, a tuple/list of them, or
 * absent (all axes).  Sets sel[i] for each reduced axis of x. */
static void reduce_axes(builder *b, const ast_arg *arg, const gnode *x, bool *sel)
{
    for (int i = 0; i < TC_MAX_RANK; i++)
        sel[i] = arg == NULL && i < x->rank;
    if (!arg)
        return;
    const ast_expr *v = arg->value;
    const ast_expr *const *items = (const ast_expr *const *)&v;
    int n = 1;
    if (v->kind == AST_TUPLE || v->kind == AST_LIST) {
        items = (const ast_expr *const *)v->u.tuple.items;
        n = v->u.tuple.nitems;
    }
    /* NumPy reduces nothing over axis=(), PyTorch everything over dim=[]:
     * refuse the case rather than pick one. */
    if (n == 0)
        diag_error(b->d, TC_ERR_COMPILE, v->loc,
                   "an empty axis list is ambiguous: leave 'axis' out to reduce every axis");
    for (int i = 0; i < n; i++) {
        int ax = const_axis(b, items[i], x, x->rank);
        if (sel[ax])
            diag_error(b->d, TC_ERR_COMPILE, items[i]->loc, "axis %d is given twice", ax);
        sel[ax] = true;
    }
}

static gnode *reduction(builder *b, const ast_expr *e, op_id op)
{
    static const char *const names[] = {"x", "axis", "keepdim", "correction"};
    const char *fn = e->u.call.fn;
    bool varstd = op == OP_var || op == OP_std;
    const ast_arg *args[4];
    build_match_args(b, e, fn, names, varstd ? 4 : 3, args);
    need(b, e, args[0], "x");
    gnode *x = build_expr(b, args[0]->value);
    bool sel[TC_MAX_RANK];
    reduce_axes(b, args[1], x, sel);
    if ((op == OP_argmax || op == OP_argmin) && args[1]) {
        int n = 0;
        for (int i = 0; i < x->rank; i++)
            n += sel[i];
        if (n > 1)
            diag_error(b->d, TC_ERR_COMPILE, args[1]->loc, "'%s' takes one axis, but %d were given",
                       fn, n);
    }
    bool keepdim = args[2] ? const_bool(b, args[2]->value, "keepdim") : false;
    int64_t corr = 1;
    if (varstd && args[3]) {
        corr = const_int(b, args[3]->value, "correction");
        if (corr < 0 || corr > 1000000)
            diag_error(b->d, TC_ERR_COMPILE, args[3]->loc,
                       "correction must be a small non-negative integer, but it is %lld",
                       (long long)corr);
    }
    return node_reduce(b, op, x, sel, keepdim, (int)corr, e->u.call.fn_loc);
}

/* A scan along one axis: the axis is needed unless x has rank 1 (a
 * default would hide which axis a rank-2 scan runs along). */
static gnode *scan(builder *b, const ast_expr *e, op_id op)
{
    static const char *const names[] = {"x", "axis", "reverse"};
    const char *fn = e->u.call.fn;
    const ast_arg *args[3];
    build_match_args(b, e, fn, names, 3, args);
    need(b, e, args[0], "x");
    gnode *x = build_expr(b, args[0]->value);
    if (x->rank == 0)
        diag_error(b->d, TC_ERR_COMPILE, args[0]->loc,
                   "'%s' needs a tensor of rank 1 or more, but this is %s", fn, type_str(b, x));
    if (!args[1] && x->rank > 1)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc,
                   "'%s' of %s needs 'axis': the axis to scan along", fn, type_str(b, x));
    int axis = args[1] ? const_axis(b, args[1]->value, x, x->rank) : 0;
    bool reverse = args[2] ? const_bool(b, args[2]->value, "reverse") : false;
    if (op == OP_logcumsumexp && !dtype_is_float(x->dtype))
        diag_error(b->d, TC_ERR_COMPILE, args[0]->loc,
                   "'logcumsumexp' needs a floating-point tensor, but this is %s (cast it first, "
                   "e.g. f32(x))", type_str(b, x));
    return node_scan(b, op, x, axis, reverse, e->u.call.fn_loc);
}

static gnode *pointwise(builder *b, const ast_expr *e, op_id op, int arity)
{
    static const char *const n1[] = {"x"};
    static const char *const n2[] = {"a", "b"};
    static const char *const nwhere[] = {"cond", "a", "b"};
    static const char *const nclamp[] = {"x", "lo", "hi"};
    const char *const *names = arity == 1 ? n1 : arity == 2 ? n2 : op == OP_where ? nwhere : nclamp;
    const ast_arg *args[3];
    build_match_args(b, e, e->u.call.fn, names, arity, args);
    gnode *in[3];
    for (int i = 0; i < arity; i++) {
        need(b, e, args[i], names[i]);
        in[i] = build_expr(b, args[i]->value);
    }
    return node_pointwise(b, op, in, arity, e->u.call.fn_loc);
}

static gnode *cast(builder *b, const ast_expr *e, tc_dtype dt)
{
    static const char *const names[] = {"x"};
    const ast_arg *args[1];
    build_match_args(b, e, e->u.call.fn, names, 1, args);
    need(b, e, args[0], "x");
    gnode *x = build_expr(b, args[0]->value);
    return node_cast(b, x, dt, false, e->u.call.fn_loc);
}

static gnode *concat(builder *b, const ast_expr *e)
{
    tc_loc loc = e->u.call.fn_loc;
    int nargs = e->u.call.nargs;
    const ast_expr *axis_e = NULL;
    int n = 0;
    const ast_expr **items = ARENA_ARRAY(b->sc->sa, const ast_expr *, nargs ? nargs : 1);
    for (int i = 0; i < nargs; i++) {
        const ast_arg *a = &e->u.call.args[i];
        if (a->name) {
            if (strcmp(a->name, "axis") != 0)
                diag_error(b->d, TC_ERR_COMPILE, a->loc, "'concat' has no parameter named '%s'",
                           a->name);
            if (axis_e)
                diag_error(b->d, TC_ERR_COMPILE, a->loc, "argument 'axis' of 'concat' is given twice");
            axis_e = a->value;
        } else {
            if (axis_e)
                diag_error(b->d, TC_ERR_COMPILE, a->loc,
                           "positional argument after a keyword argument");
            items[n++] = a->value;
        }
    }
    /* concat([a, b], axis=0): one list of tensors */
    if (n == 1 && (items[0]->kind == AST_LIST || items[0]->kind == AST_TUPLE)) {
        const ast_expr *l = items[0];
        items = (const ast_expr **)l->u.tuple.items;
        n = l->u.tuple.nitems;
    }
    if (n < 1)
        diag_error(b->d, TC_ERR_COMPILE, loc, "'concat' needs at least one tensor");
    gnode **in = ARENA_ARRAY(b->sc->sa, gnode *, n);
    for (int i = 0; i < n; i++) {
        in[i] = build_expr(b, items[i]);
        if (in[i]->rank == 0)
            diag_error(b->d, TC_ERR_COMPILE, items[i]->loc,
                       "'concat' needs tensors of rank 1 or more, but this is %s",
                       type_str(b, in[i]));
    }
    int axis = axis_e ? const_axis(b, axis_e, in[0], in[0]->rank) : 0;
    return node_concat(b, in, n, axis, loc);
}

gnode *builtin_call(builder *b, const ast_expr *e)
{
    const char *fn = e->u.call.fn;
    op_id op;
    tc_dtype dt = dtype_parse(fn);
    if (dt != TC_DT_NONE)
        return cast(b, e, dt);
    if (!strcmp(fn, "max") || !strcmp(fn, "min")) {
        int npos = 0;
        bool kw = false;
        for (int i = 0; i < e->u.call.nargs; i++) {
            if (e->u.call.args[i].name)
                kw = true;
            else
                npos++;
        }
        if (npos == 2 && !kw)
            return pointwise(b, e, fn[1] == 'a' ? OP_max : OP_min, 2);
        return reduction(b, e, fn[1] == 'a' ? OP_rmax : OP_rmin);
    }
    if (unary_op(fn, &op))
        return pointwise(b, e, op, 1);
    if (binary_op(fn, &op))
        return pointwise(b, e, op, 2);
    if (!strcmp(fn, "where"))
        return pointwise(b, e, OP_where, 3);
    if (!strcmp(fn, "clamp"))
        return pointwise(b, e, OP_clamp, 3);
    if (reduce_op(fn, &op))
        return reduction(b, e, op);
    if (scan_op(fn, &op))
        return scan(b, e, op);
    if (!strcmp(fn, "concat"))
        return concat(b, e);
    if (gather_builtin_is(fn))
        return gather_builtin(b, e);
    return view_builtin(b, e);
}

gnode *builtin_cast(builder *b, const ast_expr *e, tc_dtype dt) { return cast(b, e, dt); }
