/* verify.c - graph_verify: check the invariants of graph.h.
 *
 * The builder is the only producer of graphs today, but every later pass
 * (fusion, scheduling) rewrites them, and a malformed graph shows up far
 * away as a wrong number or a crash in codegen.  So the verifier runs after
 * each pass in tests and debug builds, checks everything a consumer relies
 * on, and reports the first violation as TC_ERR_INTERNAL located at the
 * offending node's source token ("graph verifier: %5 add: ...").
 *
 * Checked, node by node in order:
 *  - structure: nodes non-NULL, id == position, a known op, inputs that are
 *    earlier nodes of this function (topological order), arity per ops.def,
 *    a dtype, rank in [0, TC_MAX_RANK] with every dim present;
 *  - leaves: input/scalar refer to the parameter that refers back to them,
 *    scalars and dimvals are rank 0, a dimval is i64 with a dim;
 *  - pointwise: each input has the node's exact shape or rank 0;
 *  - dtypes follow the op's TR_ rule over the promoted inputs (weak flags
 *    included), casts keep the shape, views and copies keep the dtype,
 *    matmul operands share a dtype;
 *  - reductions: axes sorted, distinct, in range; the shape is the input's
 *    with those axes removed (or 1 with keepdim);
 *  - views: the input is not a view, one stride per dim, an offset;
 *  - concat: same rank, equal dims off the axis (the axis dim being the
 *    sum is not checked: that needs a dim context the gfn does not hold);
 *  - matmul: (..., M, K) @ (..., K, N) -> (..., M, N), batch dims equal or
 *    broadcast from 1 or absent;
 * then the parameters, outputs and constraints of the function, and that a
 * function marked elementwise has only [*] tensors and pointwise nodes.
 */
#include "graph.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct vctx {
    const gfn *f;
    tc_diag *d;
} vctx;

static _Noreturn __attribute__((format(printf, 3, 4))) void fail(vctx *v, const gnode *n,
                                                                  const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = (unsigned)n->op < OP_COUNT ? op_table[n->op].name : "?";
    diag_error(v->d, TC_ERR_INTERNAL, n->loc, "graph verifier: in '%s', %%%d %s: %s",
               v->f->name ? v->f->name : "?", n->id, name, msg);
}

static _Noreturn __attribute__((format(printf, 3, 4))) void fail_at(vctx *v, tc_loc loc,
                                                                     const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(v->d, TC_ERR_INTERNAL, loc, "graph verifier: in '%s', %s",
               v->f->name ? v->f->name : "?", msg);
}

static bool same_shape(const gnode *a, const gnode *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (!dim_eq(a->shape[i], b->shape[i]))
            return false;
    return true;
}

static bool is_dim_one(const tc_dim *d)
{
    int64_t v;
    return dim_is_const(d, &v) && v == 1;
}

/* The dtype n must have by its op's TR_ rule, or TC_DT_NONE when the rule
 * does not fix it (leaves, casts, views, copies). */
static tc_dtype rule_dtype(const gnode *n)
{
    tc_dtype t;
    switch (op_table[n->op].rule) {
    case TR_NONE:
        return TC_DT_NONE;
    case TR_SAME:
        return graph_promote_inputs(n, 0, n->nin);
    case TR_FLOAT:
        t = graph_promote_inputs(n, 0, n->nin);
        return dtype_is_float(t) ? t : TC_F32;
    case TR_BOOL:
        return TC_BOOL;
    case TR_WHERE:
        /* literal branches of a strong-masked where give f32, not f64 */
        t = graph_promote_inputs(n, 1, 3);
        if (n->in[1]->weak && n->in[2]->weak && !n->weak && t == TC_F64)
            t = TC_F32;
        return t;
    case TR_SUMI:
        t = graph_promote_inputs(n, 0, n->nin);
        return dtype_is_float(t) ? t : TC_I64;
    case TR_I64:
        return TC_I64;
    }
    return TC_DT_NONE;
}

static void check_structure(vctx *v, int i, const gnode *n)
{
    const gfn *f = v->f;
    if (n->id != i)
        fail(v, n, "id %d at position %d", n->id, i);
    if ((unsigned)n->op >= OP_COUNT)
        diag_error(v->d, TC_ERR_INTERNAL, n->loc, "graph verifier: in '%s', %%%d has unknown op %d",
                   f->name ? f->name : "?", i, (int)n->op);
    const op_info *op = &op_table[n->op];
    if (op->arity >= 0 ? n->nin != op->arity : n->nin < 1)
        fail(v, n, "%d inputs, expected %s%d", n->nin, op->arity < 0 ? "at least " : "",
             op->arity < 0 ? 1 : op->arity);
    if (n->nin > 0 && !n->in)
        fail(v, n, "no input array");
    for (int k = 0; k < n->nin; k++) {
        const gnode *x = n->in[k];
        if (!x)
            fail(v, n, "input %d is NULL", k);
        if (x->id < 0 || x->id >= i || f->nodes[x->id] != x)
            fail(v, n, "input %d (%%%d) is not an earlier node of this function", k, x->id);
    }
    if (n->dtype <= TC_DT_NONE || n->dtype >= TC_DT_COUNT)
        fail(v, n, "no dtype");
    if (n->rank < 0 || n->rank > TC_MAX_RANK)
        fail(v, n, "rank %d out of range", n->rank);
    for (int k = 0; k < n->rank; k++)
        if (!n->shape || !n->shape[k])
            fail(v, n, "dim %d of its shape is missing", k);
}

static void check_leaf(vctx *v, const gnode *n)
{
    const gfn *f = v->f;
    if (n->op == OP_input || n->op == OP_scalar) {
        int p = n->a.param;
        if (p < 0 || p >= f->nparams)
            fail(v, n, "parameter index %d out of range (%d parameters)", p, f->nparams);
        if (f->params[p].node != n)
            fail(v, n, "parameter %d ('%s') does not refer back to this node", p,
                 f->params[p].name ? f->params[p].name : "?");
        if ((n->op == OP_scalar) != f->params[p].scalar)
            fail(v, n, "parameter '%s' is %sa scalar", f->params[p].name ? f->params[p].name : "?",
                 f->params[p].scalar ? "" : "not ");
    }
    if ((n->op == OP_scalar || n->op == OP_dimval) && n->rank != 0)
        fail(v, n, "rank %d, expected 0", n->rank);
    if (n->op == OP_dimval) {
        if (!n->a.dim)
            fail(v, n, "no dim");
        if (n->dtype != TC_I64)
            fail(v, n, "dtype %s, expected i64", dtype_name(n->dtype));
    }
}

static void check_pointwise(vctx *v, const gnode *n)
{
    for (int k = 0; k < n->nin; k++) {
        const gnode *x = n->in[k];
        if (x->rank != 0 && !same_shape(x, n))
            fail(v, n, "input %d (%%%d) has a shape that is neither the node's nor rank 0", k,
                 x->id);
    }
}

static void check_reduce(vctx *v, const gnode *n)
{
    const gnode *x = n->in[0];
    int na = n->a.red.naxes;
    if (na < 0 || na > x->rank)
        fail(v, n, "%d axes for an input of rank %d", na, x->rank);
    bool red[TC_MAX_RANK] = {false};
    for (int k = 0; k < na; k++) {
        int ax = n->a.red.axes[k];
        if (ax < 0 || ax >= x->rank)
            fail(v, n, "axis %d out of range for rank %d", ax, x->rank);
        if (k > 0 && ax <= n->a.red.axes[k - 1])
            fail(v, n, "axes are not sorted and distinct");
        red[ax] = true;
    }
    int want = n->a.red.keepdim ? x->rank : x->rank - na;
    if (n->rank != want)
        fail(v, n, "rank %d, expected %d", n->rank, want);
    for (int k = 0, o = 0; k < x->rank; k++) {
        if (red[k] && !n->a.red.keepdim)
            continue;
        if (red[k] ? !is_dim_one(n->shape[o]) : !dim_eq(n->shape[o], x->shape[k]))
            fail(v, n, "dim %d does not follow from input dim %d", o, k);
        o++;
    }
}

static void check_view(vctx *v, const gnode *n)
{
    const gnode *x = n->in[0];
    if ((unsigned)x->op < OP_COUNT && op_table[x->op].kind == OPK_VIEW)
        fail(v, n, "a view of a view (%%%d)", x->id);
    if (n->dtype != x->dtype)
        fail(v, n, "dtype %s differs from its input's %s", dtype_name(n->dtype),
             dtype_name(x->dtype));
    if (n->rank > 0 && !n->a.view.strides)
        fail(v, n, "no strides");
    for (int k = 0; k < n->rank; k++)
        if (!n->a.view.strides[k])
            fail(v, n, "stride %d is missing", k);
    if (!n->a.view.offset)
        fail(v, n, "no offset");
}

static void check_concat(vctx *v, const gnode *n)
{
    int ax = n->a.axis;
    if (ax < 0 || ax >= n->rank)
        fail(v, n, "axis %d out of range for rank %d", ax, n->rank);
    for (int k = 0; k < n->nin; k++) {
        const gnode *x = n->in[k];
        if (x->rank != n->rank)
            fail(v, n, "input %d (%%%d) has rank %d, expected %d", k, x->id, x->rank, n->rank);
        for (int j = 0; j < n->rank; j++)
            if (j != ax && !dim_eq(x->shape[j], n->shape[j]))
                fail(v, n, "input %d (%%%d) differs in dim %d", k, x->id, j);
    }
}

static void check_scan(vctx *v, const gnode *n)
{
    if (n->a.scan.axis < 0 || n->a.scan.axis >= n->rank)
        fail(v, n, "scan axis %d out of range for rank %d", n->a.scan.axis, n->rank);
    if (!same_shape(n, n->in[0]))
        fail(v, n, "a scan changes the shape");
}

static void check_matmul(vctx *v, const gnode *n)
{
    const gnode *x = n->in[0], *y = n->in[1];
    if (x->dtype != y->dtype || n->dtype != x->dtype)
        fail(v, n, "operand dtypes %s and %s and result %s differ", dtype_name(x->dtype),
             dtype_name(y->dtype), dtype_name(n->dtype));
    if (x->rank < 2 || y->rank < 2)
        fail(v, n, "operands of rank %d and %d, expected at least 2", x->rank, y->rank);
    int r = x->rank > y->rank ? x->rank : y->rank;
    if (n->rank != r)
        fail(v, n, "rank %d, expected %d", n->rank, r);
    if (!dim_eq(x->shape[x->rank - 1], y->shape[y->rank - 2]))
        fail(v, n, "inner dims differ");
    if (!dim_eq(n->shape[r - 2], x->shape[x->rank - 2]) ||
        !dim_eq(n->shape[r - 1], y->shape[y->rank - 1]))
        fail(v, n, "result dims are not (M, N) of its operands");
    for (int k = 0; k < r - 2; k++) {
        const gnode *ops[2] = {x, y};
        for (int o = 0; o < 2; o++) {
            int j = k - (r - ops[o]->rank);
            if (j >= 0 && !dim_eq(ops[o]->shape[j], n->shape[k]) && !is_dim_one(ops[o]->shape[j]))
                fail(v, n, "batch dim %d of operand %d does not broadcast", k, o);
        }
    }
}

static void check_node(vctx *v, int i, const gnode *n)
{
    check_structure(v, i, n);
    op_kind kind = op_table[n->op].kind;
    switch (kind) {
    case OPK_LEAF:
        check_leaf(v, n);
        break;
    case OPK_UNARY:
    case OPK_BINARY:
    case OPK_TERNARY:
        check_pointwise(v, n);
        break;
    case OPK_CAST:
        if (!same_shape(n, n->in[0]))
            fail(v, n, "a cast changes the shape");
        break;
    case OPK_REDUCE:
        check_reduce(v, n);
        break;
    case OPK_VIEW:
        check_view(v, n);
        break;
    case OPK_COPY:
        if (n->dtype != n->in[0]->dtype || !same_shape(n, n->in[0]))
            fail(v, n, "a copy changes the dtype or shape");
        break;
    case OPK_CONCAT:
        check_concat(v, n);
        break;
    case OPK_MATMUL:
        check_matmul(v, n);
        break;
    case OPK_SCAN:
        check_scan(v, n);
        break;
    }
    tc_dtype want = rule_dtype(n);
    if (want != TC_DT_NONE && n->dtype != want)
        fail(v, n, "dtype %s, but its inputs give %s", dtype_name(n->dtype), dtype_name(want));
}

static bool owns(const gfn *f, const gnode *n)
{
    return n && n->id >= 0 && n->id < f->nnodes && f->nodes[n->id] == n;
}

static void check_fn(vctx *v)
{
    const gfn *f = v->f;
    if (f->nnodes < 0 || (f->nnodes > 0 && !f->nodes))
        fail_at(v, f->loc, "no node array");
    for (int i = 0; i < f->nnodes; i++) {
        if (!f->nodes[i])
            fail_at(v, f->loc, "node %d is NULL", i);
        check_node(v, i, f->nodes[i]);
    }
    for (int i = 0; i < f->nparams; i++) {
        const gparam *p = &f->params[i];
        const char *pn = p->name ? p->name : "?";
        if (!owns(f, p->node))
            fail_at(v, p->loc, "parameter '%s' has no node in the function", pn);
        const gnode *n = p->node;
        if (n->op != (p->scalar ? OP_scalar : OP_input) || n->a.param != i)
            fail(v, n, "is not the %s of parameter %d ('%s')", p->scalar ? "scalar" : "input", i,
                 pn);
        if (n->dtype != p->dtype || n->rank != p->rank)
            fail(v, n, "type differs from parameter '%s'", pn);
        for (int k = 0; k < p->rank; k++)
            if (!p->shape || !dim_eq(p->shape[k], n->shape[k]))
                fail(v, n, "dim %d differs from parameter '%s'", k, pn);
    }
    for (int i = 0; i < f->noutputs; i++) {
        const goutput *o = &f->outputs[i];
        const char *on = o->name ? o->name : "?";
        if (!owns(f, o->node))
            fail_at(v, o->loc, "output '%s' has no node in the function", on);
        int p = o->inout_param;
        if (p != -1 && (p < 0 || p >= f->nparams || !f->params[p].inout))
            fail_at(v, o->loc, "output '%s' writes back to parameter %d, which is not inout", on, p);
    }
    if (f->elementwise) {
        for (int i = 0; i < f->nparams; i++)
            if (!f->params[i].scalar && !f->params[i].star)
                fail_at(v, f->params[i].loc, "marked elementwise, but parameter '%s' is not [*]",
                        f->params[i].name ? f->params[i].name : "?");
        for (int i = 0; i < f->nnodes; i++)
            if (!op_elementwise(f->nodes[i]->op))
                fail(v, f->nodes[i], "not pointwise, in a function marked elementwise");
    }
    for (int i = 0; i < f->ncons; i++)
        if (!f->cons[i].dim)
            fail_at(v, f->cons[i].loc, "constraint %d has no dim", i);
}

void graph_verify(const gfn *f, tc_diag *d)
{
    vctx v = {f, d};
    check_fn(&v);
}
