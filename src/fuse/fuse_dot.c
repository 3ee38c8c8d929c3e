/* fuse_dot.c - the fused functions as one graphviz graph: --emit=dot.
 *
 *     digraph tensorc {
 *       subgraph cluster_f0 {            one cluster per function
 *         f0_p0 [label="x\nf32[N, D]"]   parameters and outputs, outside kernels
 *         subgraph cluster_f0_k0 {       one cluster per kernel, its nodes inside
 *           f0_k0_n1 [label="%1 max axes [1]\nf32[N, 1]"]
 *         }
 *         f0_p0 -> f0_k0_n1 [style=dashed]   a load from a buffer
 *       }
 *     }
 *
 * A node can sit in one cluster only, and a pointwise value inlined into
 * two kernels is computed by both: each kernel gets its own copy (ids
 * f<fn>_k<kernel>_n<node>), which is what runs.  Inside a kernel an edge
 * is solid (a value in registers); an edge from a parameter or from another
 * kernel's store is dashed (a load from memory).  Constants and sizes used
 * as values are drawn inside each kernel that uses them.
 *
 * Every node is declared before any edge, and the edges are written at the
 * function's level: graphviz places a node at its first mention, so an
 * edge written inside a kernel's cluster could pull another kernel's node
 * into it.  Only fixed ids and escaped labels are written, so any name or
 * size prints as valid graphviz.
 */
#include "fuse/fuse.h"

/* s as a graphviz string: quoted, with " and \ escaped; a '\n' in s
 * becomes graphviz's centered line break. */
static void put_str(tc_buf *b, const char *s)
{
    buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '\n')
            buf_puts(b, "\\n");
        else if (*s == '"' || *s == '\\')
            buf_printf(b, "\\%c", *s);
        else
            buf_putc(b, *s);
    }
    buf_putc(b, '"');
}

/* n's label: "%3 exp (name)", then its type. */
static const char *node_label(const lfn *l, const lnode *n, tc_arena *a)
{
    tc_buf t;
    buf_init(&t, a);
    switch (n->kind) {
    case LK_INPUT:
    case LK_SCALAR:
        buf_puts(&t, l->g->params[n->a.param].name);
        break;
    case LK_CONST:
        graph_print_const(&t, n->dtype, n->a.cnst.f, n->a.cnst.i);
        break;
    case LK_DIMVAL:
        dim_print(&t, n->a.dim);
        break;
    case LK_REDUCE:
        buf_printf(&t, "%%%d %s axes [", n->id, red_kind_name(n->a.red.kind));
        for (int k = 0, m = 0; k < n->a.red.rin; k++)
            if (n->a.red.mask & (1u << k))
                buf_printf(&t, "%s%d", m++ ? ", " : "", k);
        buf_putc(&t, ']');
        break;
    default:
        buf_printf(&t, "%%%d %s", n->id, op_table[n->op].name);
        break;
    }
    if (n->name && n->kind != LK_INPUT && n->kind != LK_SCALAR)
        buf_printf(&t, " (%s)", n->name);
    buf_putc(&t, '\n');
    graph_print_type(&t, n->dtype, n->rank, n->shape);
    return buf_str(&t);
}

static void kernel_label(tc_buf *t, const fkernel *k)
{
    buf_printf(t, "kernel %d %s\n", k->id, k->name);
    if (k->kind == KK_EXTERN) {
        buf_puts(t, k->attn ? "attention (extern)" : "extern matmul");
        return;
    }
    buf_puts(t, k->kind == KK_POINTWISE ? "pointwise over [" : "reduce over [");
    for (int i = 0; i < k->rank; i++) {
        if (i)
            buf_puts(t, ", ");
        dim_print(t, k->dom[i]);
    }
    buf_putc(t, ']');
    if (k->kind == KK_REDUCE) {
        buf_puts(t, " axes [");
        for (int a = 0, m = 0; a < k->rank; a++)
            if (k->mask & (1u << a))
                buf_printf(t, "%s%d", m++ ? ", " : "", a);
        buf_printf(t, "]%s", k->inner ? " (rows)" : "");
    }
}

static bool is_param(const lnode *n)
{
    return n->kind == LK_INPUT || n->kind == LK_SCALAR;
}

/* The id of stored node n where it lives: its parameter, its kernel's
 * store, or (neither: an output that is a constant) a node of its own. */
static void put_home(tc_buf *b, int fi, const ffn *f, const lnode *n)
{
    if (is_param(n))
        buf_printf(b, "f%d_p%d", fi, n->a.param);
    else if (f->kernel_of[n->id] >= 0)
        buf_printf(b, "f%d_k%d_n%d", fi, f->kernel_of[n->id], n->id);
    else
        buf_printf(b, "f%d_n%d", fi, n->id);
}

/* Mark in `in` (per node id) what kernel k draws: its reductions, stores,
 * extern and inlined nodes, then whatever they read that lives in no
 * buffer (constants, sizes), transitively: nodes are in topological order,
 * so one pass from the last node down reaches every such input. */
static void kernel_nodes(const ffn *f, const fkernel *k, bool *in)
{
    const lfn *l = f->l;
    for (int i = 0; i < l->nnodes; i++)
        in[i] = false;
    for (int j = 0; j < k->nreds; j++)
        in[k->reds[j]->id] = true;
    for (int j = 0; j < k->nstores; j++)
        in[k->stores[j]->id] = true;
    for (int j = 0; j < k->ninl; j++)
        in[k->inl[j]->id] = true;
    if (k->ext)
        in[k->ext->id] = true;
    for (int i = l->nnodes - 1; i >= 0; i--) {
        const lnode *n = l->nodes[i];
        if (!in[n->id])
            continue;
        for (int j = 0; j < n->nin; j++) {
            const lnode *s = n->in[j].src;
            if (!is_param(s) && !f->stored[s->id])
                in[s->id] = true;
        }
    }
}

static bool is_store(const fkernel *k, const lnode *n)
{
    for (int j = 0; j < k->nstores; j++)
        if (k->stores[j] == n)
            return true;
    return false;
}

static void dot_fn(tc_buf *b, int fi, const ffn *f)
{
    const lfn *l = f->l;
    tc_arena *a = b->a;
    tc_buf t;
    buf_init(&t, a);
    graph_print_signature(&t, l->g);
    while (t.len && t.data[t.len - 1] == '\n') /* its line's end */
        t.data[--t.len] = 0;
    const char *sig = buf_str(&t);
    buf_printf(b, "  subgraph cluster_f%d {\n    label=", fi);
    put_str(b, sig);
    buf_puts(b, ";\n    style=solid; color=gray40; labeljust=l;\n");

    /* parameters read by some node, and outputs */
    bool *used = ARENA_ARRAY(a, bool, l->g->nparams > 0 ? l->g->nparams : 1);
    for (int i = 0; i < l->g->nparams; i++)
        used[i] = false;
    for (int i = 0; i < l->nnodes; i++)
        if (is_param(l->nodes[i]))
            used[l->nodes[i]->a.param] = true;
    for (int i = 0; i < l->nnodes; i++) {
        const lnode *n = l->nodes[i];
        if (!is_param(n) || !used[n->a.param])
            continue;
        used[n->a.param] = false; /* one node per parameter */
        buf_printf(b, "    f%d_p%d [shape=ellipse, style=filled, fillcolor=lightblue, label=", fi,
                   n->a.param);
        put_str(b, node_label(l, n, a));
        buf_puts(b, "];\n");
    }
    for (int i = 0; i < l->noutputs; i++) {
        const lnode *n = l->outputs[i].node;
        if (!is_param(n) && f->kernel_of[n->id] < 0) {
            buf_printf(b, "    f%d_n%d [label=", fi, n->id);
            put_str(b, node_label(l, n, a));
            buf_puts(b, "];\n");
        }
        buf_printf(b, "    f%d_o%d [shape=ellipse, style=filled, fillcolor=palegreen, label=", fi, i);
        buf_init(&t, a);
        buf_printf(&t, "%s%s", l->outputs[i].name, l->outputs[i].inout_param >= 0 ? " (inout)" : "");
        put_str(b, buf_str(&t));
        buf_puts(b, "];\n");
    }

    /* one cluster per kernel, its nodes declared inside */
    bool **in = ARENA_ARRAY(a, bool *, f->nk > 0 ? f->nk : 1);
    for (int ki = 0; ki < f->nk; ki++) {
        const fkernel *k = f->k[ki];
        in[ki] = ARENA_ARRAY(a, bool, l->nnodes > 0 ? l->nnodes : 1);
        kernel_nodes(f, k, in[ki]);
        buf_printf(b, "    subgraph cluster_f%d_k%d {\n      label=", fi, k->id);
        buf_init(&t, a);
        kernel_label(&t, k);
        put_str(b, buf_str(&t));
        buf_puts(b, ";\n      style=\"rounded,filled\"; fillcolor=gray96; color=gray60;\n");
        for (int i = 0; i < l->nnodes; i++) {
            const lnode *n = l->nodes[i];
            if (!in[ki][n->id])
                continue;
            const char *look = n->kind == LK_REDUCE ? ", style=filled, fillcolor=lightyellow"
                               : n->kind == LK_MATMUL ? ", style=filled, fillcolor=pink"
                               : n->kind == LK_CONST || n->kind == LK_DIMVAL ? ", shape=plaintext"
                               : ", style=filled, fillcolor=white";
            buf_printf(b, "      f%d_k%d_n%d [label=", fi, k->id, n->id);
            put_str(b, node_label(l, n, a));
            buf_printf(b, "%s%s];\n", look, is_store(k, n) ? ", penwidth=2" : "");
        }
        buf_puts(b, "    }\n");
    }

    /* edges: within a kernel solid, from a buffer dashed; then the outputs */
    for (int ki = 0; ki < f->nk; ki++) {
        const fkernel *k = f->k[ki];
        for (int i = 0; i < l->nnodes; i++) {
            const lnode *n = l->nodes[i];
            if (!in[ki][n->id])
                continue;
            for (int j = 0; j < n->nin; j++) {
                const lnode *s = n->in[j].src;
                bool local = in[ki][s->id];
                buf_puts(b, "    ");
                if (local)
                    buf_printf(b, "f%d_k%d_n%d", fi, k->id, s->id);
                else
                    put_home(b, fi, f, s);
                buf_printf(b, " -> f%d_k%d_n%d%s;\n", fi, k->id, n->id, local ? "" : " [style=dashed]");
            }
        }
    }
    for (int i = 0; i < l->noutputs; i++) {
        buf_puts(b, "    ");
        put_home(b, fi, f, l->outputs[i].node);
        buf_printf(b, " -> f%d_o%d;\n", fi, i);
    }
    buf_puts(b, "  }\n");
}

void fuse_dot(tc_buf *b, const ffn *const *fns, int n)
{
    buf_puts(b, "digraph tensorc {\n"
                "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                "  edge [arrowsize=0.6];\n"
                "  graph [fontname=\"monospace\", fontsize=11];\n");
    for (int i = 0; i < n; i++)
        dot_fn(b, i, fns[i]);
    buf_puts(b, "}\n");
}
