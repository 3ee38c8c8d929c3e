/* build_const.c - values that must be known when the graph is built.
 *
 * Axes, keepdim, correction, view arguments and slice bounds
 * (docs/semantics.md, "Compile-time values").  The expression is built as
 * usual: literals and constant arithmetic have already been folded into
 * OP_const, a scalar parameter of a called function is the caller's node, and
 * a symbolic dim is an OP_dimval.  What is left is a scalar parameter of the
 * entry function: it stands for its default here (without one, the use is an
 * error), so const_value evaluates small pointwise trees over OP_scalar
 * leaves with the same folding as node_pointwise.
 */
#include "build_internal.h"

#include <math.h>
#include <string.h>

/* Deep enough for `axis - 1` and friends; a compile-time value is never a
 * long computation, and the cap keeps hostile graphs off the C stack. */
enum { CONST_MAX_DEPTH = 64 };

/* The entry scalar behind n without a default, if that is why n is not
 * constant (for the message). */
static const gparam *missing_default(builder *b, const gnode *n, int depth)
{
    if (depth > CONST_MAX_DEPTH)
        return NULL;
    if (n->op == OP_scalar) {
        const gparam *p = &b->f->params[n->a.param];
        return p->has_default ? NULL : p;
    }
    for (int k = 0; k < n->nin; k++) {
        const gparam *p = missing_default(b, n->in[k], depth + 1);
        if (p)
            return p;
    }
    return NULL;
}

static bool eval(builder *b, const gnode *n, double *v, tc_dtype *dt, int depth)
{
    if (depth > CONST_MAX_DEPTH || n->rank != 0)
        return false;
    switch (n->op) {
    case OP_const:
        *v = n->a.cnst.f;
        *dt = n->dtype;
        return true;
    case OP_scalar: {
        const gparam *p = &b->f->params[n->a.param];
        if (!p->has_default)
            return false;
        *v = dtype_round(n->dtype, p->def);
        *dt = n->dtype;
        return true;
    }
    default:
        break;
    }
    op_kind k = op_table[n->op].kind;
    if (k != OPK_UNARY && k != OPK_BINARY && k != OPK_TERNARY && k != OPK_CAST)
        return false;
    /* Rebuild the node over constant inputs: node_pointwise folds it. */
    gnode *in[3];
    for (int i = 0; i < n->nin; i++) {
        double iv;
        tc_dtype it;
        if (!eval(b, n->in[i], &iv, &it, depth + 1))
            return false;
        in[i] = node_const(b, it, iv, n->in[i]->weak, n->loc);
    }
    gnode *r = k == OPK_CAST ? node_cast(b, in[0], n->dtype, n->weak, n->loc)
                             : node_pointwise(b, n->op, in, n->nin, n->loc);
    if (r->op != OP_const)
        return false;
    *v = r->a.cnst.f;
    *dt = r->dtype;
    return true;
}

bool const_value(builder *b, const gnode *n, double *v, tc_dtype *dt)
{
    return eval(b, n, v, dt, 0);
}

/* Why e is not a compile-time value, as an error. */
_Noreturn static void not_const(builder *b, const ast_expr *e, const gnode *n, const char *what,
                                const char *kind)
{
    const gparam *p = missing_default(b, n, 0);
    if (p)
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "%s must be known at compile time, but '%s' is a run-time scalar parameter of "
                   "'%s' without a default",
                   what, p->name, b->f->name);
    if (n->op == OP_dimval)
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "%s must be a compile-time %s, but %s is a size known only at run time", what,
                   kind, dimstr(b, n->a.dim));
    if (n->rank > 0)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s must be a compile-time %s, not a tensor (%s)",
                   what, kind, type_str(b, n));
    diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s must be a compile-time %s", what, kind);
}

int64_t const_int(builder *b, const ast_expr *e, const char *what)
{
    gnode *n = build_expr(b, e);
    double v;
    tc_dtype dt;
    if (!const_value(b, n, &v, &dt))
        not_const(b, e, n, what, "integer");
    if (!dtype_is_int(dt))
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s must be an integer, but it is %s %s", what,
                   dtype_is_float(dt) ? "the float" : "the bool",
                   dtype_is_float(dt) ? arena_printf(b->a, "%g", v) : (v != 0 ? "true" : "false"));
    if (n->op == OP_const)
        return n->a.cnst.i; /* exact, even beyond 2^53 */
    /* An integer value in a double: in range unless it is 2^63 itself. */
    return v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v;
}

bool const_bool(builder *b, const ast_expr *e, const char *what)
{
    gnode *n = build_expr(b, e);
    double v;
    tc_dtype dt;
    if (!const_value(b, n, &v, &dt))
        not_const(b, e, n, what, "bool");
    if (dt != TC_BOOL)
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s must be true or false, but it is %s %s", what,
                   dtype_name(dt), arena_printf(b->a, "%g", v));
    return v != 0;
}

const tc_dim *const_dim(builder *b, const ast_expr *e, const char *what)
{
    gnode *n = build_expr(b, e);
    if (n->op == OP_dimval)
        return n->a.dim;
    double v;
    tc_dtype dt;
    if (!const_value(b, n, &v, &dt)) {
        const gparam *p = missing_default(b, n, 0);
        if (p)
            not_const(b, e, n, what, "integer");
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "%s must be an integer or a size known at compile time", what);
    }
    if (!dtype_is_int(dt))
        diag_error(b->d, TC_ERR_COMPILE, e->loc, "%s must be an integer, but it is %s", what,
                   dtype_is_float(dt) ? arena_printf(b->a, "the float %g", v)
                                      : (v != 0 ? "true" : "false"));
    if (n->op == OP_const)
        return dim_const(b->dc, n->a.cnst.i);
    return dim_const(b->dc, v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v);
}

int const_axis(builder *b, const ast_expr *e, const gnode *x, int rank)
{
    int64_t v = const_int(b, e, "axis");
    if (v < -rank || v >= rank)
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "axis %lld is out of range for a tensor of rank %d (%s)", (long long)v, x->rank,
                   type_str(b, x));
    return (int)(v < 0 ? v + rank : v);
}

/* Whether d is a single symbol (a size, at least 1 when bound). */
static bool is_symbol(builder *b, const tc_dim *d)
{
    const char *names[2];
    int n = 0;
    dim_symbols(d, names, &n, 2);
    return n == 1 && dim_eq(d, dim_sym(b->dc, names[0]));
}

void require_dim(builder *b, const tc_dim *dim, int64_t min, tc_loc loc, const char *msg,
                 const char *what)
{
    int64_t v;
    if (dim_is_const(dim, &v)) {
        if (v < min)
            diag_error(b->d, TC_ERR_COMPILE, loc, "%s", msg);
        return;
    }
    if (min <= 0 || (min == 1 && is_symbol(b, dim)))
        return; /* sizes are at least 1 */
    gfn *f = b->f;
    for (int i = 0; i < f->ncons; i++)
        if (f->cons[i].min >= min && dim_eq(f->cons[i].dim, dim))
            return;
    ARENA_GROW(b->a, f->cons, f->ncons, f->capcons, 8);
    f->cons[f->ncons++] = (gconstraint){dim, min, loc, what};
}
