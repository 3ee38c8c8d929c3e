/* fuse_json.c - `tensorc explain --json`: what fuse_explain prints, as one
 * JSON object per function (docs/json.md, docs/schema/explain.json), plus
 * the kernels' members as --emit=fused lists them. */
#include "fuse/fuse.h"
#include "json.h"

static const char *op_label(const lnode *n)
{
    if (n->kind == LK_REDUCE)
        return red_kind_name(n->a.red.kind);
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR)
        return "param";
    if (n->kind == LK_CONST)
        return "const";
    if (n->kind == LK_DIMVAL)
        return "dimval";
    return op_table[n->op].name;
}

/* {"id": 3, "op": "exp", "name": "e"} (name null when the user gave none) */
static void node(tc_json *j, const lnode *n)
{
    jw_obj(j);
    jw_key(j, "id");
    jw_int(j, n->id);
    jw_key(j, "op");
    jw_str(j, op_label(n));
    jw_key(j, "name");
    jw_str(j, n->name);
    jw_end(j);
}

static void nodes(tc_json *j, const char *key, lnode *const *v, int n)
{
    jw_key(j, key);
    jw_arr(j);
    for (int i = 0; i < n; i++)
        node(j, v[i]);
    jw_end(j);
}

static void dims(tc_json *j, const tc_dim *const *d, int rank, tc_arena *a)
{
    jw_arr(j);
    for (int i = 0; i < rank; i++) {
        tc_buf t;
        buf_init(&t, a);
        dim_print(&t, d[i]);
        jw_str(j, buf_str(&t));
    }
    jw_end(j);
}

static void kernel(tc_json *j, const ffn *f, const fkernel *k, tc_arena *a)
{
    static const char *const kinds[] = {
        [KK_POINTWISE] = "pointwise", [KK_REDUCE] = "reduce", [KK_EXTERN] = "extern", [KK_SCAN] = "scan",
    };
    jw_obj(j);
    jw_key(j, "id");
    jw_int(j, k->id);
    jw_key(j, "name");
    jw_str(j, k->name);
    jw_key(j, "kind"); /* an attention kernel is an extern of its own kind */
    jw_str(j, k->kind == KK_EXTERN && k->attn ? "attention" : kinds[k->kind]);
    jw_key(j, "domain");
    if (k->kind == KK_EXTERN)
        jw_null(j);
    else
        dims(j, k->dom, k->rank, a);
    jw_key(j, "axes");
    jw_arr(j);
    for (int i = 0; (k->kind == KK_REDUCE || k->kind == KK_SCAN) && i < k->rank; i++)
        if (k->mask & (1u << i))
            jw_int(j, i);
    jw_end(j);
    jw_key(j, "rows");
    jw_bool(j, k->kind == KK_REDUCE && k->inner);
    jw_key(j, "cost");
    if (k->kind == KK_EXTERN) {
        jw_null(j);
    } else {
        jw_obj(j);
        jw_key(j, "passes");
        jw_int(j, k->passes);
        jw_key(j, "work");
        jw_int(j, k->work);
        jw_key(j, "registers");
        jw_int(j, k->regs);
        jw_end(j);
    }
    nodes(j, "reduces", k->reds, k->nreds);
    jw_key(j, "stores");
    jw_arr(j);
    for (int i = 0; i < k->nstores; i++) {
        const lnode *n = k->stores[i];
        jw_obj(j);
        jw_key(j, "id");
        jw_int(j, n->id);
        jw_key(j, "op");
        jw_str(j, op_label(n));
        jw_key(j, "name");
        jw_str(j, n->name);
        jw_key(j, "outputs"); /* the outputs it is (none: a value for a later kernel) */
        jw_arr(j);
        for (int o = 0; o < f->l->noutputs; o++)
            if (f->l->outputs[o].node == n)
                jw_str(j, f->l->outputs[o].name);
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
    nodes(j, "inlines", k->inl, k->ninl);
    jw_key(j, "reads");
    jw_arr(j);
    for (int i = 0; i < k->nreads; i++) {
        const lnode *n = k->reads[i];
        jw_obj(j);
        if (n->kind == LK_INPUT) {
            jw_key(j, "param");
            jw_str(j, f->l->g->params[n->a.param].name);
        } else {
            jw_key(j, "id");
            jw_int(j, n->id);
            jw_key(j, "kernel");
            jw_int(j, f->kernel_of[n->id]);
        }
        jw_end(j);
    }
    jw_end(j);
    jw_end(j);
}

void fuse_explain_json(tc_json *j, const ffn *f)
{
    tc_arena *a = j->b->a;
    const fuse_budget *bu = &f->budget;
    jw_obj(j);
    jw_key(j, "name");
    jw_str(j, f->l->g->name);
    jw_key(j, "elementwise");
    jw_bool(j, f->l->g->elementwise);
    jw_key(j, "budget");
    jw_obj(j);
    jw_key(j, "max_passes");
    jw_int(j, bu->max_passes);
    jw_key(j, "max_work");
    jw_int(j, bu->max_work);
    jw_key(j, "max_inline");
    jw_int(j, bu->max_inline);
    jw_key(j, "max_registers");
    jw_int(j, bu->max_regs);
    jw_key(j, "applied");
    jw_bool(j, !f->l->g->elementwise);
    jw_end(j);
    jw_key(j, "splits");
    jw_arr(j);
    for (int i = 0; i < f->ncut; i++) {
        const fcut *c = &f->cut[i];
        jw_obj(j);
        jw_key(j, "node");
        node(j, c->n);
        jw_key(j, "inline_nodes");
        jw_int(j, c->size);
        jw_key(j, "reductions");
        jw_int(j, c->reds);
        jw_key(j, "stored");
        jw_bool(j, f->stored[c->n->id]);
        jw_end(j);
    }
    jw_end(j);
    jw_key(j, "decisions");
    jw_arr(j);
    for (int i = 0; i < f->ndec; i++) {
        const fdecision *d = &f->dec[i];
        jw_obj(j);
        jw_key(j, "outcome");
        jw_str(j, d->fused ? "fused" : d->limit ? "split" : "refused");
        jw_key(j, "producer");
        node(j, d->producer);
        jw_key(j, "consumer");
        node(j, d->consumer);
        jw_key(j, "limit");
        jw_str(j, d->limit);
        jw_key(j, "why");
        jw_str(j, d->why ? d->why : "?");
        jw_key(j, "superseded");
        jw_bool(j, d->superseded);
        jw_end(j);
    }
    jw_end(j);
    jw_key(j, "kernels");
    jw_arr(j);
    for (int i = 0; i < f->nk; i++)
        kernel(j, f, f->k[i], a);
    jw_end(j);
    jw_end(j);
}
