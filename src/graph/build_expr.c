/* build_expr.c - expressions to nodes.
 *
 * One recursive walk over the expression: literals become weak constants,
 * names are looked up in the current scope (variables, then the symbolic
 * dims of the signature as weak i64 sizes), operators become pointwise
 * nodes (node_pointwise does broadcasting, promotion and folding), `@`
 * a matmul, `.T` and `x[...]` views, and calls go to a dtype cast, a user
 * function, a builtin or a prelude function, in that order.
 *
 * The recursion nests through inlined calls (an argument's expression can
 * contain a call whose body nests again), so besides the parser's limit per
 * expression the total is capped at BUILD_MAX_NEST, a located limit error
 * rather than a stack overflow.
 */
#include "build_internal.h"

#include <string.h>

_Noreturn static void undefined_name(builder *b, const ast_expr *e)
{
    const bscope *s = b->sc;
    const char **names = ARENA_ARRAY(b->a, const char *, s->vars.set.n + s->dims.set.n + 1);
    int n = smap_keys(&s->vars, names, 0);
    n = smap_keys(&s->dims, names, n);
    if (habit_hint(e->u.name, names, n))
        diag_error_hint(b->d, TC_ERR_COMPILE, e->loc, habit_hint(e->u.name, names, n),
                        "undefined name '%s'", e->u.name);
    diag_error(b->d, TC_ERR_COMPILE, e->loc, "undefined name '%s'%s", e->u.name,
               suggest(b, e->u.name, names, n));
}

static gnode *name_value(builder *b, const ast_expr *e)
{
    const char *name = e->u.name;
    bvar *v = build_var(b, name);
    if (v)
        return v->node;
    const tc_dim *d = smap_get(&b->sc->dims, name);
    if (d)
        return node_dimval(b, d, e->loc);
    if (build_find_fn(b, name) || builtin_is(name))
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "'%s' is a function; call it with arguments", name);
    if (name[0] >= 'A' && name[0] <= 'Z' && !name[1] && b->sc->tvar[name[0] - 'A'])
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "'%s' is a dtype variable, not a value", name);
    undefined_name(b, e);
}

static op_id binary_op(ast_op op)
{
    switch (op) {
    case AST_OP_ADD: return OP_add;
    case AST_OP_SUB: return OP_sub;
    case AST_OP_MUL: return OP_mul;
    case AST_OP_DIV: return OP_div;
    case AST_OP_MOD: return OP_mod;
    case AST_OP_POW: return OP_pow;
    case AST_OP_EQ: return OP_eq;
    case AST_OP_NE: return OP_ne;
    case AST_OP_LT: return OP_lt;
    case AST_OP_LE: return OP_le;
    case AST_OP_GT: return OP_gt;
    case AST_OP_GE: return OP_ge;
    case AST_OP_AND: return OP_and;
    case AST_OP_OR: return OP_or;
    default: return OP_COUNT;
    }
}

static gnode *binary(builder *b, const ast_expr *e)
{
    gnode *in[2];
    in[0] = build_expr(b, e->u.binary.a);
    in[1] = build_expr(b, e->u.binary.b);
    if (e->u.binary.op == AST_OP_MATMUL)
        return node_matmul(b, in[0], in[1], e->loc);
    op_id op = binary_op(e->u.binary.op);
    if (op == OP_COUNT)
        diag_error(b->d, TC_ERR_INTERNAL, e->loc, "unknown binary operator '%s'",
                   ast_op_str(e->u.binary.op));
    return node_pointwise(b, op, in, 2, e->loc);
}

static gnode *unary(builder *b, const ast_expr *e)
{
    gnode *x = build_expr(b, e->u.unary.a);
    switch (e->u.unary.op) {
    case AST_OP_NEG: return node_pointwise(b, OP_neg, &x, 1, e->loc);
    case AST_OP_NOT: return node_pointwise(b, OP_not, &x, 1, e->loc);
    case AST_OP_PLUS: return x;
    default:
        diag_error(b->d, TC_ERR_INTERNAL, e->loc, "unknown unary operator '%s'",
                   ast_op_str(e->u.unary.op));
    }
}

static gnode *attr(builder *b, const ast_expr *e)
{
    gnode *x = build_expr(b, e->u.attr.obj);
    if (strcmp(e->u.attr.attr, "T") != 0)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "unknown attribute '.%s' (the only one is .T)",
                   e->u.attr.attr);
    if (x->rank < 2)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, ".T needs a tensor of rank 2 or more, but this is %s",
                   type_str(b, x));
    return view_transpose(b, x, x->rank - 2, x->rank - 1, e->loc);
}

int build_call_multi(builder *b, const ast_expr *e, gnode ***res)
{
    const char *name = e->u.call.fn;
    tc_loc loc = e->u.call.fn_loc;
    gnode **one = ARENA_ARRAY(b->sc->sa, gnode *, 1);
    *res = one;
    /* T(x): a cast to the dtype bound to a dtype variable */
    if (name[0] >= 'A' && name[0] <= 'Z' && !name[1]) {
        tc_dtype dt = b->sc->tvar[name[0] - 'A'];
        if (dt == TC_DT_NONE)
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "dtype variable '%s' does not appear in the signature of '%s'", name,
                       b->sc->fn->name);
        one[0] = builtin_cast(b, e, dt);
        return 1;
    }
    bfunc *f = build_find_fn(b, name);
    if (f && !f->prelude)
        return build_call_fn(b, e, f, res);
    if (builtin_is(name)) {
        one[0] = builtin_call(b, e);
        return 1;
    }
    if (f)
        return build_call_fn(b, e, f, res);
    if (build_var(b, name) || smap_get(&b->sc->dims, name))
        diag_error(b->d, TC_ERR_COMPILE, loc, "'%s' is not a function", name);
    /* Suggest among functions: the user's, the prelude's and the builtins. */
    const char **bn = builtin_names(b);
    int nb = 0;
    while (bn[nb])
        nb++;
    const char **names = ARENA_ARRAY(b->a, const char *, nb + b->fns.set.n + 1);
    memcpy(names, bn, sizeof *names * (size_t)nb);
    int n = smap_keys(&b->fns, names, nb);
    diag_error(b->d, TC_ERR_COMPILE, loc, "undefined function '%s'%s", name,
               suggest(b, name, names, n));
}

static gnode *call_value(builder *b, const ast_expr *e)
{
    gnode **res;
    int n = build_call_multi(b, e, &res);
    if (n != 1)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc,
                   n == 0 ? "'%s' returns no value, so it cannot be used in an expression"
                          : "'%s' returns %d values, so it cannot be used in an expression",
                   e->u.call.fn, n);
    return res[0];
}

static gnode *expr(builder *b, const ast_expr *e)
{
    switch (e->kind) {
    case AST_INT:
        return node_const_int(b, TC_I64, e->u.ival, true, e->loc);
    case AST_FLOAT:
        return node_const(b, TC_F64, e->u.fval, true, e->loc);
    case AST_BOOL:
        return node_const(b, TC_BOOL, e->u.bval ? 1 : 0, true, e->loc);
    case AST_NAME:
        return name_value(b, e);
    case AST_UNARY:
        return unary(b, e);
    case AST_BINARY:
        return binary(b, e);
    case AST_CALL:
        return call_value(b, e);
    case AST_ATTR:
        return attr(b, e);
    case AST_INDEX:
        return build_index(b, e);
    case AST_TUPLE:
    case AST_LIST:
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "a %s is only allowed as axes, a shape or the tensors of concat",
                   e->kind == AST_TUPLE ? "tuple" : "list");
    case AST_SLICE:
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "a slice is only allowed inside [ ]");
    }
    diag_error(b->d, TC_ERR_INTERNAL, e->loc, "unknown expression kind %d", (int)e->kind);
}

gnode *build_expr(builder *b, const ast_expr *e)
{
    b->work++;
    if (b->work > BUILD_MAX_WORK)
        node_check_limits(b, e->loc);
    if (++b->nest > BUILD_MAX_NEST)
        diag_error(b->d, TC_ERR_LIMIT, build_limit_loc(b, e->loc),
                   "expressions nested too deeply through calls (more than %d levels)",
                   (int)BUILD_MAX_NEST);
    gnode *n = expr(b, e);
    b->nest--;
    return n;
}
