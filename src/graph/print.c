/* print.c - the --emit=graph dump of one function.
 *
 * The dump is read by people and compared by golden tests, so it is
 * deterministic (no pointers, no hash order) and says everything a node
 * means: its op and inputs, the attributes that change its result, its
 * dtype and shape, and where in the user's source it came from.
 *
 *     fn rmsnorm(x: f32[N, D], g: f32[D], eps: f32 = 1e-06) -> (out: f32[N, D])
 *       %0 = input x : f32[N, D]                          # rmsnorm.tc:1:12  x
 *       %2 = scalar eps : weak f32                        # rmsnorm.tc:1:37  eps
 *       %3 = mul(%0, %0) : f32[N, D]                      # rmsnorm.tc:2:17
 *       %4 = mean(%3, axes=[1], keepdim) : f32[N, 1]      # rmsnorm.tc:2:10  ms
 *       %7 = view(%6, strides=[1, 0], offset=0) : f32[N, D]  # rmsnorm.tc:4:14
 *       %9 = const 2 : weak i64                           # rmsnorm.tc:4:20
 *       out = %10
 *       requires D >= 128                                 # rmsnorm.tc:3:14  slice end 128 of dim 1
 *
 * A line is "%id = op operands : type", where
 *   - leaves show what they are: `input x`, `scalar eps`, `const 2.5`,
 *     `dimval N`; other ops are calls, `name(%a, %b, attr=...)`;
 *   - attributes: reductions `axes=[..]`, `keepdim`, `correction=c` (var,
 *     std); views `strides=[..], offset=o` in elements of the input; concat
 *     `axis=a`.  A cast's target is its type;
 *   - the type is "dtype[dims]" ("dtype" alone for rank 0), prefixed with
 *     "weak " for literal-like values that only pick a promotion category.
 * The comment column (aligned at COMMENT_COL) holds file:line:col of the
 * user's token and then the variable the node was first bound to, if any.
 * Outputs follow as `name = %id`, an inout one marked "(inout)", then the
 * run-time size constraints the builder could not prove.  Floats print in
 * the shortest "%g" form that reads back to the same value in their dtype
 * (an f32 default of 1e-5 prints "1e-05", not 9.999999747378752e-06).
 */
#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COMMENT_COL = 52 };

/* The shortest %.Ng spelling of v that reads back to v once stored as dt:
 * a default or literal held as the f32 0.1f prints "0.1", not the double
 * 0.10000000149011612.  Values dt cannot hold print exactly as doubles. */
void graph_print_value(tc_buf *b, double v, tc_dtype dt)
{
    if (isnan(v)) {
        buf_puts(b, "nan");
        return;
    }
    if (isinf(v)) {
        buf_puts(b, v < 0 ? "-inf" : "inf");
        return;
    }
    bool narrow = (dt == TC_F32 || dt == TC_F16 || dt == TC_BF16) && dtype_round(dt, v) == v;
    char s[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*g", p, v);
        double r = strtod(s, NULL);
        if (narrow ? dtype_round(dt, r) == v : r == v)
            break;
    }
    buf_puts(b, s);
}

static void print_shape(tc_buf *b, int rank, const tc_dim *const *shape)
{
    buf_putc(b, '[');
    for (int i = 0; i < rank; i++) {
        if (i)
            buf_puts(b, ", ");
        dim_print(b, shape ? shape[i] : NULL);
    }
    buf_putc(b, ']');
}

void graph_print_type(tc_buf *b, tc_dtype dt, int rank, const tc_dim *const *shape)
{
    buf_puts(b, dtype_name(dt));
    if (rank > 0)
        print_shape(b, rank, shape);
}

static void print_param(tc_buf *b, const gparam *p)
{
    buf_printf(b, "%s: %s", p->name ? p->name : "?", p->inout ? "inout " : "");
    if (p->star) {
        buf_printf(b, "%s[*]", dtype_name(p->dtype));
    } else {
        graph_print_type(b, p->dtype, p->rank, p->shape);
        if (!p->scalar && p->rank == 0)
            buf_puts(b, "[]");
    }
    if (p->scalar && p->has_default) {
        buf_puts(b, " = ");
        graph_print_value(b, p->def, p->dtype);
    }
}

static void print_ref(tc_buf *b, const gnode *n)
{
    if (n)
        buf_printf(b, "%%%d", n->id);
    else
        buf_puts(b, "%?");
}

void graph_print_const(tc_buf *b, tc_dtype dt, double f, int64_t i)
{
    if (dtype_is_float(dt))
        graph_print_value(b, f, dt);
    else if (dt == TC_BOOL)
        buf_puts(b, i ? "true" : "false");
    else
        buf_printf(b, "%lld", (long long)i);
}

static const char *param_name(const gfn *f, int i)
{
    return (i >= 0 && i < f->nparams && f->params[i].name) ? f->params[i].name : "?";
}

static void print_op(tc_buf *b, const gfn *f, const gnode *n)
{
    const char *name = (unsigned)n->op < OP_COUNT ? op_table[n->op].name : "?op";
    switch (n->op) {
    case OP_input:
    case OP_scalar:
        buf_printf(b, "%s %s", name, param_name(f, n->a.param));
        return;
    case OP_const:
        buf_puts(b, "const ");
        graph_print_const(b, n->dtype, n->a.cnst.f, n->a.cnst.i);
        return;
    case OP_dimval:
        buf_puts(b, "dimval ");
        dim_print(b, n->a.dim);
        return;
    default:
        break;
    }
    buf_printf(b, "%s(", name);
    for (int i = 0; i < n->nin; i++) {
        if (i)
            buf_puts(b, ", ");
        print_ref(b, n->in[i]);
    }
    op_kind kind = (unsigned)n->op < OP_COUNT ? op_table[n->op].kind : OPK_LEAF;
    if (kind == OPK_REDUCE) {
        buf_puts(b, ", axes=[");
        for (int i = 0; i < n->a.red.naxes && i < TC_MAX_RANK; i++)
            buf_printf(b, "%s%d", i ? ", " : "", n->a.red.axes[i]);
        buf_putc(b, ']');
        if (n->a.red.keepdim)
            buf_puts(b, ", keepdim");
        if (n->op == OP_var || n->op == OP_std)
            buf_printf(b, ", correction=%d", n->a.red.correction);
    } else if (kind == OPK_VIEW) {
        buf_puts(b, ", strides=");
        print_shape(b, n->a.view.strides ? n->rank : 0, n->a.view.strides);
        buf_puts(b, ", offset=");
        dim_print(b, n->a.view.offset);
    } else if (kind == OPK_CONCAT) {
        buf_printf(b, ", axis=%d", n->a.axis);
    } else if (kind == OPK_SCAN) {
        buf_printf(b, ", axis=%d%s", n->a.scan.axis, n->a.scan.reverse ? ", reverse" : "");
    }
    buf_putc(b, ')');
}

/* Pad the current line to the comment column (at least two spaces) and
 * write "# file:line:col" and extra, if there is anything to say. */
void graph_print_comment(tc_buf *b, size_t line_start, tc_loc loc, const char *extra)
{
    bool has_loc = loc.src != NULL;
    if (!has_loc && !extra)
        return;
    size_t col = b->len - line_start;
    int pad = col + 2 <= COMMENT_COL ? COMMENT_COL - (int)col : 2;
    buf_printf(b, "%*s# ", pad, "");
    if (has_loc) {
        char where[512];
        buf_puts(b, loc_str(loc, where, sizeof where));
    }
    if (extra)
        buf_printf(b, "%s%s", has_loc ? "  " : "", extra);
}

void graph_print_signature(tc_buf *b, const gfn *f)
{
    buf_printf(b, "fn %s(", f->name ? f->name : "?");
    for (int i = 0; i < f->nparams; i++) {
        if (i)
            buf_puts(b, ", ");
        print_param(b, &f->params[i]);
    }
    buf_puts(b, ") -> (");
    for (int i = 0; i < f->noutputs; i++) {
        const goutput *o = &f->outputs[i];
        buf_printf(b, "%s%s: ", i ? ", " : "", o->name ? o->name : "?");
        if (o->node)
            graph_print_type(b, o->node->dtype, o->node->rank, o->node->shape);
        else
            buf_puts(b, "?");
    }
    buf_puts(b, ")\n");
}

void graph_print(tc_buf *b, const gfn *f)
{
    graph_print_signature(b, f);
    if (f->elementwise)
        buf_puts(b, "  # elementwise\n");

    for (int i = 0; i < f->nnodes; i++) {
        const gnode *n = f->nodes[i];
        size_t start = b->len;
        if (!n) {
            buf_printf(b, "  %%%d = ?\n", i);
            continue;
        }
        buf_printf(b, "  %%%d = ", n->id);
        print_op(b, f, n);
        buf_printf(b, " : %s", n->weak ? "weak " : "");
        graph_print_type(b, n->dtype, n->rank, n->shape);
        graph_print_comment(b, start, n->loc, n->name);
        buf_putc(b, '\n');
    }

    for (int i = 0; i < f->noutputs; i++) {
        const goutput *o = &f->outputs[i];
        buf_printf(b, "  %s = ", o->name ? o->name : "?");
        print_ref(b, o->node);
        if (o->inout_param >= 0)
            buf_puts(b, " (inout)");
        buf_putc(b, '\n');
    }

    for (int i = 0; i < f->ncons; i++) {
        const gconstraint *c = &f->cons[i];
        size_t start = b->len;
        buf_puts(b, "  requires ");
        dim_print(b, c->dim);
        buf_printf(b, " >= %lld", (long long)c->min);
        graph_print_comment(b, start, c->loc, c->what);
        buf_putc(b, '\n');
    }
}
