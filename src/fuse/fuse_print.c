/* fuse_print.c - the fused function as text: --emit=fused (fuse_print) and
 * `tensorc explain` (fuse_explain: the budget, every split, every decision
 * and why, each kernel's cost, every inlined node). */
#include "fuse/fuse.h"

static void print_dom(tc_buf *b, const fkernel *k)
{
    buf_putc(b, '[');
    for (int i = 0; i < k->rank; i++) {
        if (i)
            buf_puts(b, ", ");
        dim_print(b, k->dom[i]);
    }
    buf_putc(b, ']');
}

static const char *node_label(const lnode *n)
{
    if (n->kind == LK_REDUCE)
        return red_kind_name(n->a.red.kind);
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR)
        return "param";
    return op_table[n->op].name;
}

static void print_where(tc_buf *b, const ffn *f, const lnode *n)
{
    if (n->kind == LK_INPUT) {
        buf_puts(b, f->l->g->params[n->a.param].name);
        return;
    }
    buf_printf(b, "%%%d", n->id);
    for (int i = 0; i < f->l->noutputs; i++)
        if (f->l->outputs[i].node == n) {
            buf_printf(b, " -> %s", f->l->outputs[i].name);
            break;
        }
}

void fuse_print(tc_buf *b, const ffn *f)
{
    graph_print_signature(b, f->l->g);
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        buf_printf(b, "  kernel %d %s: ", k->id, k->name);
        if (k->kind == KK_EXTERN && k->attn) {
            buf_printf(b, "attention: softmax(%%%d) @ v -> %%%d, %%%d = q @ k^T over ", k->attn->score->id,
                       k->ext->id, k->attn->qk->id);
            print_dom(b, k);
        } else if (k->kind == KK_EXTERN) {
            buf_printf(b, "extern matmul %%%d", k->ext->id);
        } else if (k->kind == KK_POINTWISE) {
            buf_puts(b, "pointwise over ");
            print_dom(b, k);
        } else if (k->kind == KK_SCAN) {
            buf_puts(b, "scan over ");
            print_dom(b, k);
            int ax = 0;
            while (ax < k->rank && !(k->mask & (1u << ax)))
                ax++;
            buf_printf(b, " axis %d%s", ax, k->reverse ? " (reverse)" : "");
        } else {
            buf_puts(b, "reduce over ");
            print_dom(b, k);
            buf_puts(b, " axes [");
            int m = 0;
            for (int a = 0; a < k->rank; a++)
                if (k->mask & (1u << a))
                    buf_printf(b, "%s%d", m++ ? ", " : "", a);
            buf_printf(b, "]%s", k->inner ? " (rows)" : "");
        }
        buf_putc(b, '\n');
        if (k->nreds) {
            buf_puts(b, k->kind == KK_SCAN ? "    scans  " : "    reduces");
            for (int j = 0; j < k->nreds; j++)
                buf_printf(b, "%s %%%d %s", j ? "," : "", k->reds[j]->id, node_label(k->reds[j]));
            buf_putc(b, '\n');
        }
        if (k->nstores) {
            buf_puts(b, "    stores ");
            for (int j = 0; j < k->nstores; j++) {
                buf_puts(b, j ? ", " : " ");
                print_where(b, f, k->stores[j]);
            }
            buf_putc(b, '\n');
        }
        if (k->ncols) {
            buf_puts(b, "    column partials");
            for (int j = 0; j < k->ncols; j++)
                buf_printf(b, "%s %%%d %s", j ? "," : "", k->cols[j]->id, node_label(k->cols[j]));
            buf_printf(b, " (a partial row per block of %d rows)\n", fuse_col_rows(&f->knobs));
        }
        if (k->partials)
            buf_printf(b, "    combines the partials of kernel %d in block order\n", k->partials->id);
        if (k->ninl) {
            buf_puts(b, "    inlines");
            for (int j = 0; j < k->ninl; j++)
                buf_printf(b, "%s %%%d %s", j ? "," : "", k->inl[j]->id, node_label(k->inl[j]));
            buf_putc(b, '\n');
        }
        if (k->nreads) {
            buf_puts(b, "    reads  ");
            for (int j = 0; j < k->nreads; j++) {
                buf_puts(b, j ? ", " : " ");
                if (k->reads[j]->kind == LK_INPUT)
                    buf_puts(b, f->l->g->params[k->reads[j]->a.param].name);
                else
                    buf_printf(b, "%%%d (kernel %d)", k->reads[j]->id, f->kernel_of[k->reads[j]->id]);
            }
            buf_putc(b, '\n');
        }
    }
}

void fuse_explain(tc_buf *b, const ffn *f)
{
    const fuse_budget *bu = &f->budget;
    buf_printf(b, "fn %s: %d kernel%s", f->l->g->name, f->nk, f->nk == 1 ? "" : "s");
    if (f->nbeside) /* the matmul rules' kernels (below): launched only beside cuBLAS */
        buf_printf(b, ", %d launch%s where the generated matmul runs (%d %s only beside cuBLAS: "
                      "--emit=sched says when)", f->nk - f->nbeside, f->nk - f->nbeside == 1 ? "" : "es",
                   f->nbeside, f->nbeside == 1 ? "kernel runs" : "kernels run");
    buf_putc(b, '\n');
    buf_printf(b, "  budget: %d passes, %d nodes of work, %d inlined nodes or %d reductions per value, "
                  "%d registers%s\n",
               bu->max_passes, bu->max_work, bu->max_inline, bu->max_passes, bu->max_regs,
               f->l->g->elementwise ? " (not applied: an elementwise function is one kernel)" : "");
    if (f->l->g->remat) /* a vjp pair's half: what the forward saves (graph/grad_remat.c) */
        buf_puts(b, f->l->g->remat);
    for (int i = 0; i < f->ncut; i++) {
        const fcut *c = &f->cut[i];
        buf_printf(b, "  split   %%%d %s: budget (inline): its expression would inline %d nodes and read %d "
                      "reductions (at most %d and %d); computed once%s\n",
                   c->n->id, node_label(c->n), c->size, c->reds, bu->max_inline, bu->max_passes,
                   f->stored[c->n->id] ? " and stored for the kernels after" : ", inline in its readers' kernel");
    }
    int superseded = 0;
    for (int i = 0; i < f->ndec; i++) {
        const fdecision *d = &f->dec[i];
        if (d->superseded) { /* what happened is the rule that took both */
            superseded++;
            continue;
        }
        buf_printf(b, "  %s %%%d %s -> %%%d %s: %s\n", d->fused ? "fused  " : d->limit ? "split  " : "refused",
                   d->producer->id, node_label(d->producer), d->consumer->id,
                   node_label(d->consumer), d->why ? d->why : "?");
    }
    if (superseded)
        buf_printf(b, "  (%d earlier decision%s between nodes the attention rule then took into one "
                      "kernel not shown: explain --json lists them, \"superseded\": true)\n",
                   superseded, superseded == 1 ? "" : "s");
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        if (k->kind != KK_EXTERN)
            buf_printf(b, "  kernel %d (%s): cost %d pass%s, %d nodes of work, about %d registers\n", k->id,
                       k->name, k->passes, k->passes == 1 ? "" : "es", k->work, k->regs);
        for (int j = 0; j < k->ninl; j++)
            buf_printf(b, "  inlined %%%d %s into kernel %d (%s): pointwise, recomputed where "
                       "read instead of stored\n",
                       k->inl[j]->id, node_label(k->inl[j]), k->id, k->name);
    }
}

