/* print.c - the --emit=lowered dump and the lowered IR's verifier.
 *
 * A line per node, like the graph dump, but every operand shows the index
 * it is read at, over the reader's variables $0, $1, ...:
 *
 *     %2 = sub(%0[$0, $1], %1[$0, 0]) : f32[N, D]             # softmax.tc:7:15
 *     %1 = max(%0[$0, $1], axes=[1], keepdim) : f32[N, 1]
 *     %9 = matmul(%4[$0, $2], %2[$1, $2]) : f32[N, H]         (contraction $2)
 *
 * A pointwise node whose operands are converted to another dtype first says
 * so ("lt(...) as f64 : bool[N]").
 */
#include "lower/lir.h"

static void print_ref(tc_buf *b, const lref *r)
{
    buf_printf(b, "%%%d", r->src->id);
    if (r->src->rank == 0)
        return;
    buf_putc(b, '[');
    for (int k = 0; k < r->src->rank; k++) {
        if (k)
            buf_puts(b, ", ");
        dim_print(b, r->idx[k]);
    }
    buf_putc(b, ']');
}

static void print_node(tc_buf *b, const lfn *f, const lnode *n)
{
    const gfn *g = f->g;
    switch (n->kind) {
    case LK_INPUT:
    case LK_SCALAR:
        buf_printf(b, "%s %s", n->kind == LK_INPUT ? "input" : "scalar", g->params[n->a.param].name);
        return;
    case LK_CONST:
        buf_puts(b, "const ");
        graph_print_const(b, n->dtype, n->a.cnst.f, n->a.cnst.i);
        return;
    case LK_DIMVAL:
        buf_puts(b, "dimval ");
        dim_print(b, n->a.dim);
        return;
    case LK_REDUCE:
        buf_printf(b, "%s(", red_kind_name(n->a.red.kind));
        break;
    default:
        buf_printf(b, "%s(", op_table[n->op].name);
        break;
    }
    for (int i = 0; i < n->nin; i++) {
        if (i)
            buf_puts(b, ", ");
        print_ref(b, &n->in[i]);
    }
    if (n->kind == LK_REDUCE) {
        buf_puts(b, ", axes=[");
        int m = 0;
        for (int k = 0; k < n->a.red.rin; k++)
            if (n->a.red.mask & (1u << k))
                buf_printf(b, "%s%d", m++ ? ", " : "", k);
        buf_putc(b, ']');
        if (n->a.red.keepdim)
            buf_puts(b, ", keepdim");
    } else if (n->kind == LK_CONCAT) {
        buf_printf(b, ", axis=%d, at=[", n->a.cat.axis);
        for (int i = 0; i <= n->nin; i++) {
            if (i)
                buf_puts(b, ", ");
            dim_print(b, n->a.cat.offsets[i]);
        }
        buf_putc(b, ']');
    } else if (n->kind == LK_SCAN) {
        buf_printf(b, ", axis=%d%s", n->a.scan.axis, n->a.scan.reverse ? ", reverse" : "");
    }
    buf_putc(b, ')');
    if (n->kind == LK_POINTWISE && n->opdt != n->dtype && n->op != OP_cast && n->op != OP_copy)
        buf_printf(b, " as %s", dtype_name(n->opdt));
}

void lir_print(tc_buf *b, const lfn *f)
{
    graph_print_signature(b, f->g);
    for (int i = 0; i < f->nnodes; i++) {
        const lnode *n = f->nodes[i];
        size_t start = b->len;
        buf_printf(b, "  %%%d = ", n->id);
        print_node(b, f, n);
        buf_puts(b, " : ");
        graph_print_type(b, n->dtype, n->rank, n->shape);
        if (n->kind == LK_MATMUL)
            buf_printf(b, "  (contraction $%d)", n->rank);
        graph_print_comment(b, start, n->loc, n->name);
        buf_putc(b, '\n');
    }
    for (int i = 0; i < f->noutputs; i++) {
        const loutput *o = &f->outputs[i];
        buf_printf(b, "  %s = %%%d%s\n", o->name, o->node->id, o->inout_param >= 0 ? " (inout)" : "");
    }
}

/* ---- verifier ------------------------------------------------------------ */

static void fail(tc_diag *d, const lnode *n, const char *what)
{
    diag_error(d, TC_ERR_INTERNAL, n->loc, "lowered IR: %%%d: %s", n->id, what);
}

/* How many index variables n's refs may use. */
static int nvars(const lnode *n)
{
    switch (n->kind) {
    case LK_REDUCE: return n->a.red.rin;
    case LK_MATMUL: return n->rank + 1;
    default: return n->rank;
    }
}

void lir_verify(const lfn *f, tc_diag *d)
{
    for (int i = 0; i < f->nnodes; i++) {
        const lnode *n = f->nodes[i];
        if (n->id != i)
            fail(d, n, "id does not match its position");
        int nv = nvars(n);
        for (int j = 0; j < n->nin; j++) {
            const lref *r = &n->in[j];
            if (!r->src || r->src->id >= n->id || f->nodes[r->src->id] != r->src)
                fail(d, n, "reads a node that is not before it");
            for (int k = 0; k < r->src->rank; k++) {
                if (!r->idx || !r->idx[k])
                    fail(d, n, "ref without an index");
                for (int v = nv; v <= TC_MAX_RANK; v++)
                    if (dim_uses(r->idx[k], f->varnames[v]))
                        fail(d, n, "index uses a variable the node does not have");
            }
        }
        switch (n->kind) {
        case LK_POINTWISE:
            if (op_table[n->op].kind == OPK_REDUCE || n->nin != op_table[n->op].arity)
                fail(d, n, "pointwise node with a wrong op or operand count");
            break;
        case LK_REDUCE:
            if (n->nin != 1 || n->a.red.rin > TC_MAX_RANK || n->a.red.mask == 0 ||
                (n->a.red.mask >> n->a.red.rin) != 0)
                fail(d, n, "bad reduction axes");
            break;
        case LK_MATMUL:
            if (n->nin != 2 || n->rank < 2)
                fail(d, n, "bad matmul");
            break;
        case LK_CONCAT:
            if (n->nin < 1 || n->a.cat.axis < 0 || n->a.cat.axis >= n->rank)
                fail(d, n, "bad concat");
            break;
        case LK_SCAN:
            if (n->nin != 1 || op_table[n->op].kind != OPK_SCAN || n->a.scan.axis < 0 ||
                n->a.scan.axis >= n->rank)
                fail(d, n, "bad scan");
            break;
        default:
            if (n->nin != 0)
                fail(d, n, "leaf with operands");
        }
    }
    for (int i = 0; i < f->noutputs; i++)
        if (!f->outputs[i].node || f->nodes[f->outputs[i].node->id] != f->outputs[i].node)
            diag_error(d, TC_ERR_INTERNAL, f->g->loc, "lowered IR: output %s is not a node",
                       f->outputs[i].name);
}
