/* grad.c - `fn f_grad = grad(f, wrt=[x, w])`: reverse-mode differentiation
 * as a graph-to-graph transform.
 *
 * The derived function takes f's parameters, then one cotangent per
 * floating-point output of f (named "d" + the output's name: dout, dy), and
 * returns the gradient of each wrt parameter ("d" + its name), in wrt order.
 * It is the vector-Jacobian product of jax.vjp: sum over outputs of
 * cotangent * d(output)/d(input).
 *
 * How: f is built as an entry point (an ordinary gfn); its nodes are replayed
 * into the new gfn through the builder (so CSE and folding apply), then each
 * node is visited in reverse topological order and its rule (grad_rules.c)
 * adds its inputs' adjoints, made of ordinary nodes.  The result is an
 * ordinary graph: lowering, fusion, scheduling and codegen see nothing new.
 * The forward values the rules need are recomputed inside the derived
 * function.  `fn f_fwd, f_bwd = vjp(f, wrt=[...])` builds the same joint
 * graph with f's outputs too, and grad_remat.c splits it into a forward that
 * saves some values and a backward that reads them (no checkpointing inside
 * scans yet: see docs/internals.md).
 *
 * Refused with a located error: wrt a parameter that is not a floating-point
 * one, wrt a name that is not a parameter, functions with inout parameters,
 * and ops without a rule (grad_rules.c says which).
 */
#include "grad.h"

#include <string.h>

/* The function a derived one names, or NULL. */
static bfunc *target_of(builder *b, const ast_fn *fn)
{
    const ast_expr *e = fn->derive;
    if (e->kind != AST_CALL || e->u.call.nargs < 1 || e->u.call.args[0].name ||
        e->u.call.args[0].value->kind != AST_NAME)
        return NULL;
    return build_find_fn(b, e->u.call.args[0].value->u.name);
}

/* The forward function a derived one names, built as an entry point (a
 * derived one in turn: second derivatives).  A chain of derived functions
 * that comes back to fn would recurse forever: an error at the request. */
static gfn *forward_of(builder *b, const ast_fn *fn, bfunc *target, const ast_expr *call)
{
    int steps = 0;
    for (bfunc *t = target; t && t->fn->derive; t = target_of(b, t->fn))
        if (t->fn == fn || ++steps > 16)
            diag_error(b->d, TC_ERR_COMPILE, call->loc,
                       "'%s' is derived from itself (through '%s')", fn->name, target->fn->name);
    return build_entry(b, target);
}

typedef struct request {
    bfunc *target;
    const ast_expr *call;
    const ast_expr *const *wrt; /* AST_NAME items, or NULL for every float tensor param */
    int nwrt;
} request;

static void parse_request(builder *b, const ast_fn *fn, request *r)
{
    const ast_expr *e = fn->derive;
    memset(r, 0, sizeof *r);
    r->call = e;
    const char *what = fn->derive_part ? "vjp" : "grad";
    if (e->kind != AST_CALL || (strcmp(e->u.call.fn, "grad") != 0 && strcmp(e->u.call.fn, "vjp") != 0))
        diag_error(b->d, TC_ERR_COMPILE, e->loc,
                   "a derived function is 'fn %s = grad(f, wrt=[x, ...])' or 'fn f_fwd, f_bwd = "
                   "vjp(f, wrt=[x, ...])'; this is not a call of either", fn->name);
    if (strcmp(e->u.call.fn, what) != 0)
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc, fn->derive_part
                   ? "grad makes one function: 'fn %s = grad(f, wrt=[...])'; a forward and backward pair is 'fn f_fwd, f_bwd = vjp(f, wrt=[...])'"
                   : "vjp makes two functions, a forward that saves what the backward needs and the backward: 'fn f_fwd, f_bwd = vjp(f, wrt=[...])' (for '%s')",
                   fn->name);
    static const char *const names[] = {"f", "wrt"};
    const ast_arg *args[2];
    build_match_args(b, e, what, names, 2, args);
    if (!args[0])
        diag_error(b->d, TC_ERR_COMPILE, e->u.call.fn_loc, "%s needs the function to differentiate (%s(f, wrt=[x]))", what, what);
    const ast_expr *f = args[0]->value;
    if (f->kind != AST_NAME)
        diag_error(b->d, TC_ERR_COMPILE, f->loc, "%s's first argument is a function's name", what);
    r->target = build_find_fn(b, f->u.name);
    if (!r->target)
        diag_error(b->d, TC_ERR_COMPILE, f->loc, "no function named '%s'", f->u.name);
    if (r->target->fn == fn)
        diag_error(b->d, TC_ERR_COMPILE, f->loc, "'%s' cannot be the gradient of itself", fn->name);
    if (args[1]) {
        const ast_expr *w = args[1]->value;
        if (w->kind == AST_NAME) {
            r->wrt = (const ast_expr *const *)ARENA_ARRAY(b->a, const ast_expr *, 1);
            ((const ast_expr **)r->wrt)[0] = w;
            r->nwrt = 1;
        } else if (w->kind == AST_LIST || w->kind == AST_TUPLE) {
            r->wrt = (const ast_expr *const *)w->u.tuple.items;
            r->nwrt = w->u.tuple.nitems;
            if (!r->nwrt)
                diag_error(b->d, TC_ERR_COMPILE, w->loc, "wrt= names no parameter%s", "");
            for (int i = 0; i < r->nwrt; i++)
                if (r->wrt[i]->kind != AST_NAME)
                    diag_error(b->d, TC_ERR_COMPILE, r->wrt[i]->loc, "wrt= lists parameter names, as in wrt=[x, w]%s", "");
        } else {
            diag_error(b->d, TC_ERR_COMPILE, w->loc, "wrt= lists parameter names, as in wrt=[x, w]%s", "");
        }
    }
}

static int param_index(const gfn *f, const char *name)
{
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return i;
    return -1;
}

gnode *grad_leaf(builder *b, gfn *g, gparam *p, int index)
{
    gnode *n = graph_node_new(b->a, p->scalar ? OP_scalar : OP_input, p->dtype, p->rank,
                              p->shape, NULL, 0, p->loc);
    n->a.param = index;
    n->weak = p->scalar;
    n->name = p->name;
    graph_add(b->a, g, n);
    return n;
}

static void check_name_free(builder *b, const gfn *g, int upto, const char *name, tc_loc loc,
                            const char *output)
{
    for (int i = 0; i < upto; i++)
        if (strcmp(g->params[i].name, name) == 0)
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "the cotangent of output '%s' would be named '%s', the name of a parameter "
                       "of '%s'", output, name, g->name);
}

gfn *grad_build(builder *b, bfunc *bf)
{
    const ast_fn *fn = bf->fn;
    request r;
    parse_request(b, fn, &r);
    gfn *fw = forward_of(b, fn, r.target, r.call);
    for (int i = 0; i < fw->nparams; i++)
        if (fw->params[i].inout)
            diag_error(b->d, TC_ERR_COMPILE, r.call->loc,
                       "grad of '%s': its parameter '%s' is inout (at %d:%d); differentiate a "
                       "function that returns the new value instead",
                       fw->name, fw->params[i].name, fw->params[i].loc.line, fw->params[i].loc.col);

    /* which parameters */
    int *wrt = ARENA_ARRAY(b->a, int, fw->nparams + 1);
    tc_loc *wrt_loc = ARENA_ARRAY(b->a, tc_loc, fw->nparams + 1);
    int nwrt = 0;
    if (r.wrt) {
        for (int i = 0; i < r.nwrt; i++) {
            const char *name = r.wrt[i]->u.name;
            int k = param_index(fw, name);
            if (k < 0)
                diag_error(b->d, TC_ERR_COMPILE, r.wrt[i]->loc, "'%s' is not a parameter of '%s'",
                           name, fw->name);
            if (!dtype_is_float(fw->params[k].dtype))
                diag_error(b->d, TC_ERR_COMPILE, r.wrt[i]->loc,
                           "'%s' is %s: only floating-point parameters have gradients", name,
                           dtype_name(fw->params[k].dtype));
            for (int j = 0; j < nwrt; j++)
                if (wrt[j] == k)
                    diag_error(b->d, TC_ERR_COMPILE, r.wrt[i]->loc, "'%s' is listed twice in wrt=",
                               name);
            wrt_loc[nwrt] = r.wrt[i]->loc;
            wrt[nwrt++] = k;
        }
    } else {
        for (int k = 0; k < fw->nparams; k++)
            if (!fw->params[k].scalar && dtype_is_float(fw->params[k].dtype)) {
                wrt_loc[nwrt] = fw->params[k].loc;
                wrt[nwrt++] = k;
            }
        if (!nwrt)
            diag_error(b->d, TC_ERR_COMPILE, r.call->loc, "'%s' has no floating-point tensor parameter to differentiate",
                        fw->name);
    }

    /* the new function: f's parameters, then the cotangents */
    gfn *g = graph_fn_new(b->a, fn->name);
    g->loc = fn->loc;
    g->dims = b->dc;
    g->syms = fw->syms;
    g->nsyms = fw->nsyms;
    g->cons = fw->cons;
    g->ncons = fw->ncons;
    g->capcons = fw->ncons;
    b->f = g;
    hset_init(&b->cse, b->a, 0); /* the derived function's own nodes */
    b->work = b->calls = 0;
    b->nest = 0;
    int ncot = 0;
    for (int i = 0; i < fw->noutputs; i++)
        ncot += dtype_is_float(fw->outputs[i].node->dtype);
    if (!ncot)
        diag_error(b->d, TC_ERR_COMPILE, r.call->loc, "'%s' has no floating-point output to differentiate", fw->name);
    g->nparams = fw->nparams + ncot;
    g->params = ARENA_ARRAY(b->a, gparam, g->nparams);
    gnode **map = ARENA_ARRAY(b->a, gnode *, fw->nnodes ? fw->nnodes : 1);
    for (int i = 0; i < fw->nparams; i++) {
        g->params[i] = fw->params[i];
        g->params[i].node = grad_leaf(b, g, &g->params[i], i);
        map[fw->params[i].node->id] = g->params[i].node;
    }
    gnode **cot = ARENA_ARRAY(b->a, gnode *, fw->noutputs ? fw->noutputs : 1);
    for (int i = 0, k = fw->nparams; i < fw->noutputs; i++) {
        const goutput *o = &fw->outputs[i];
        if (!dtype_is_float(o->node->dtype))
            continue;
        gparam *p = &g->params[k];
        memset(p, 0, sizeof *p);
        p->name = arena_printf(b->a, "d%s", o->name);
        check_name_free(b, g, k, p->name, r.call->loc, o->name);
        p->loc = o->loc;
        p->scalar = o->node->rank == 0;
        p->dtype = o->node->dtype;
        p->rank = o->node->rank;
        p->shape = o->node->shape;
        p->node = grad_leaf(b, g, p, k);
        cot[i] = p->node;
        k++;
    }

    /* replay the forward */
    for (int i = 0; i < fw->nnodes; i++) {
        gnode *n = fw->nodes[i];
        if (n->op == OP_input || n->op == OP_scalar)
            continue;
        gnode t = *n;
        gnode *in[n->nin > 0 ? n->nin : 1];
        for (int k = 0; k < n->nin; k++)
            in[k] = map[n->in[k]->id];
        t.in = in;
        map[i] = node_emit(b, &t);
    }

    /* backward */
    grad_ctx c;
    c.b = b;
    c.fw = fw;
    c.map = map;
    c.adj = ARENA_ARRAY(b->a, gnode *, fw->nnodes ? fw->nnodes : 1);
    for (int i = 0; i < fw->noutputs; i++)
        if (cot[i])
            grad_accum(&c, fw->outputs[i].node, cot[i]);
    for (int i = fw->nnodes - 1; i >= 0; i--)
        if (c.adj[i])
            grad_rule(&c, fw->nodes[i], c.adj[i]);

    /* a vjp pair's joint function returns f's outputs first (grad_remat.c
     * splits it); a grad function only the gradients */
    int nfo = fn->derive_part ? fw->noutputs : 0;
    g->noutputs = nfo + nwrt;
    g->outputs = ARENA_ARRAY(b->a, goutput, nfo + nwrt);
    for (int i = 0; i < nfo; i++) {
        g->outputs[i] = fw->outputs[i];
        g->outputs[i].node = map[fw->outputs[i].node->id];
    }
    for (int i = 0; i < nwrt; i++) {
        const gparam *p = &fw->params[wrt[i]];
        goutput *o = &g->outputs[nfo + i];
        o->name = arena_printf(b->a, "d%s", p->name);
        for (int j = 0; j < g->nparams; j++)
            if (strcmp(g->params[j].name, o->name) == 0)
                diag_error(b->d, TC_ERR_COMPILE, wrt_loc[i],
                           "the gradient of '%s' would be named '%s', the name of a parameter of '%s'",
                           p->name, o->name, g->name);
        o->loc = wrt_loc[i];
        o->inout_param = -1;
        gnode *a = c.adj[p->node->id];
        if (!a)
            a = grad_zeros(&c, p->node, p->loc);
        o->node = node_concrete(b, node_cast(b, a, p->dtype, false, p->loc), p->loc);
        if (o->node->weak || o->node->op == OP_const || o->node->op == OP_input)
            o->node = grad_materialize(&c, o->node, p->loc);
    }
    build_drop_dead(b);
    if (fn->derive_part) {
        /* the pair's names: the two functions the parser made of one call */
        const char *names[3] = {fw->name, fn->name, fn->name};
        for (int i = 0; i < bf->prog->nfns; i++)
            if (bf->prog->fns[i].derive == fn->derive)
                names[bf->prog->fns[i].derive_part] = bf->prog->fns[i].name;
        return grad_remat(b, g, fw->nparams, nfo, fn->derive_part, names, r.call->loc);
    }
    build_canonical_order(b); /* the rules' nested calls: the same numbering with any compiler */
    g->elementwise = false;
    graph_verify(g, b->d);
    return g;
}
