/* build.c - graph_build: from syntax trees to one op graph per entry function.
 *
 *   graph_build
 *     function table     user functions shadow prelude functions; a user
 *                        function may not take a builtin's name or repeat one
 *     for each entry     parameters become OP_input / OP_scalar leaves with
 *                        declared dims (symbols), [*] as rank 1 of dim "*",
 *                        dtype variables as bound by graph_build_ex (else
 *                        f32); the body runs (build_call.c)
 *                        with every call inlined; results and inout
 *                        parameters become the outputs; nodes no output
 *                        needs are dropped; graph_verify checks the rest.
 *
 * The walk is a single pass over the entry's syntax tree that emits nodes in
 * topological order as it goes (no separate type-checking pass): the types,
 * shapes and values of everything are known when a node is made, because
 * calls are inlined with concrete argument types.  This is what makes shape
 * polymorphism (`[*]`, dtype variables) and compile-time arguments
 * (softmax's axis) simple: each call site is checked with what it passes.
 * The price is that an unused function is only checked when it is an entry;
 * graph_build with fn = NULL builds every user function that is not
 * generic, so tc_compile checks them all; a generic one ([*] or a dtype
 * variable in its signature) is checked where it is called, and as an entry
 * point when it is asked for by name, with the bindings given (build_all).
 *
 * Decisions other stages rely on (details in the files named):
 *  - dtypes (build_node.c): pointwise inputs keep their dtypes, no casts are
 *    inserted; a node's dtype is its TR_ rule over the inputs promoted left
 *    to right with dtype_promote, weak flags included (what graph_verify
 *    checks).  Only MATMUL operands are cast to a common dtype.  Literals
 *    are weak (ints i64, floats f64, bools), as are scalar parameters and
 *    dims used as numbers; a weak value that becomes a tensor on its own
 *    (a view, a reduction, a result) takes f32 for a float literal.
 *  - MATMUL nodes are always (..., M, K) @ (..., K, N) with rank >= 2; a
 *    rank-1 operand is viewed as [1, K] / [K, 1] and the extra dim squeezed
 *    from the result by a view (NumPy's rules on the outside).
 *  - common subexpressions are shared (hash-consing, build_node.c) and
 *    scalar constants are folded, so `axis=-1`, `1 - 0.9` and defaults are
 *    plain constants; nodes no output needs are dropped at the end.
 *  - views are composed (one VIEW over a materialized node); slice bounds
 *    that cannot be checked become gconstraints (build_views.c).
 *  - builtins cannot be redefined by the user's program; prelude functions
 *    can be shadowed; at an entry point dtype variables are f32 unless bound
 *    (graph_build_ex, the CLI's --dtype) and [*] is rank 1 of the dim "*";
 *    elementwise needs at least one [*] tensor.
 *
 * Other files: build_expr.c (expressions), build_builtin.c (builtin calls),
 * build_views.c (strides/offsets), build_node.c (CSE, folding, promotion,
 * broadcasting), build_const.c (compile-time values); see build_internal.h.
 */
#include "build_internal.h"

#include <string.h>

bfunc *build_find_fn(builder *b, const char *name) { return smap_get(&b->fns, name); }

static tc_loc fn_loc(const ast_fn *fn) { return fn->loc; }

void build_check_signature(builder *b, bfunc *bf)
{
    if (bf->checked)
        return;
    const ast_fn *fn = bf->fn;
    for (int i = 0; i < fn->nparams; i++) {
        const ast_param *p = &fn->params[i];
        for (int j = 0; j < i; j++)
            if (strcmp(fn->params[j].name, p->name) == 0)
                diag_error(b->d, TC_ERR_COMPILE, p->loc, "parameter '%s' is declared twice in '%s'",
                           p->name, fn->name);
        if (p->def && p->type.is_tensor)
            diag_error(b->d, TC_ERR_COMPILE, p->def->loc,
                       "only scalar parameters can have a default, but '%s' is %s", p->name,
                       ast_type_str(b, &p->type));
        if (p->inout && !p->type.is_tensor)
            diag_error(b->d, TC_ERR_COMPILE, p->loc,
                       "inout parameter '%s' must be a tensor, but it is the scalar %s", p->name,
                       ast_type_str(b, &p->type));
        if (p->type.is_tensor && !p->type.star && p->type.ndims > TC_MAX_RANK)
            diag_error(b->d, TC_ERR_COMPILE, p->type.loc,
                       "parameter '%s' has rank %d, more than the maximum %d", p->name,
                       p->type.ndims, (int)TC_MAX_RANK);
        for (int k = 0; !p->type.star && k < p->type.ndims; k++)
            if (!p->type.dims[k].name && p->type.dims[k].value <= 0)
                diag_error(b->d, TC_ERR_COMPILE, p->type.dims[k].loc,
                           "dims must be positive, but dim %d of '%s' is %lld", k, p->name,
                           (long long)p->type.dims[k].value);
    }
    for (int i = 0; i < fn->nresults; i++) {
        const ast_result *r = &fn->results[i];
        if (r->type.is_tensor && !r->type.star && r->type.ndims > TC_MAX_RANK)
            diag_error(b->d, TC_ERR_COMPILE, r->type.loc, "result of rank %d is more than the maximum %d",
                       r->type.ndims, (int)TC_MAX_RANK);
        const char *name = r->name ? r->name : fn->nresults == 1 ? "out" : NULL;
        if (!name)
            continue;
        for (int j = 0; j < i; j++)
            if (r->name && fn->results[j].name && strcmp(fn->results[j].name, r->name) == 0)
                diag_error(b->d, TC_ERR_COMPILE, r->loc, "result '%s' is declared twice in '%s'",
                           r->name, fn->name);
        for (int j = 0; j < fn->nparams; j++)
            if (fn->params[j].inout && strcmp(fn->params[j].name, name) == 0)
                diag_error(b->d, TC_ERR_COMPILE, fn->params[j].loc,
                           "inout parameter '%s' has the name of an output of '%s'", name,
                           fn->name);
    }
    bf->checked = true;
}

/* ---- the function table ---- */

static void add_fns(builder *b, const ast_program *prog, bool prelude)
{
    if (!prog)
        return;
    for (int i = 0; i < prog->nfns; i++) {
        const ast_fn *fn = &prog->fns[i];
        bfunc *old = smap_get(&b->fns, fn->name);
        if (!prelude) {
            if (builtin_is(fn->name))
                diag_error(b->d, TC_ERR_COMPILE, fn_loc(fn),
                           "'%s' is a builtin function and cannot be redefined", fn->name);
            if (old && !old->prelude)
                diag_error(b->d, TC_ERR_COMPILE, fn_loc(fn), "function '%s' is already defined at %d:%d",
                           fn->name, old->fn->loc.line, old->fn->loc.col);
        } else if (old) {
            continue; /* the first prelude definition wins */
        }
        bfunc *f = ARENA_NEW(b->a, bfunc);
        f->fn = fn;
        f->prog = prog;
        f->prelude = prelude;
        smap_put(b->a, &b->fns, fn->name, f);
    }
}

/* ---- entry functions ---- */

static void add_sym(builder *b, const char *name)
{
    gfn *f = b->f;
    for (int i = 0; i < f->nsyms; i++)
        if (strcmp(f->syms[i], name) == 0)
            return;
    const char **syms = ARENA_ARRAY(b->a, const char *, f->nsyms + 1);
    if (f->nsyms)
        memcpy(syms, f->syms, sizeof *syms * (size_t)f->nsyms);
    syms[f->nsyms++] = arena_strdup(b->a, name);
    f->syms = syms;
}

/* Whether letter k (0 for 'A') is a dtype variable of fn's signature. */
static bool fn_uses_tvar(const ast_fn *fn, int k)
{
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i].type.dtype_var && fn->params[i].type.dtype_var[0] - 'A' == k)
            return true;
    for (int i = 0; i < fn->nresults; i++)
        if (fn->results[i].type.dtype_var && fn->results[i].type.dtype_var[0] - 'A' == k)
            return true;
    return false;
}

static void entry_params(builder *b, bscope *s)
{
    const ast_fn *fn = s->fn;
    gfn *f = b->f;
    f->nparams = fn->nparams;
    f->params = ARENA_ARRAY(b->a, gparam, fn->nparams ? fn->nparams : 1);
    /* At an entry point a dtype variable is what graph_build_ex bound it
     * to, else f32.  One used only in results and not bound stays free: the
     * returned value binds it (build_check_results). */
    for (int k = 0; k < 26; k++)
        if (b->tvar_bound[k] && fn_uses_tvar(fn, k)) {
            s->tvar[k] = b->tvar_bound[k];
            s->tvar_from[k] = "the binding";
        }
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i].type.dtype_var) {
            int k = fn->params[i].type.dtype_var[0] - 'A';
            if (!s->tvar[k]) {
                s->tvar[k] = TC_F32;
                s->tvar_from[k] = "the default";
            }
        }
    for (int i = 0; i < fn->nparams; i++) {
        const ast_param *p = &fn->params[i];
        const ast_type *t = &p->type;
        gparam *g = &f->params[i];
        g->name = p->name;
        g->loc = p->loc;
        g->scalar = !t->is_tensor;
        g->inout = p->inout;
        g->star = t->star;
        g->dtype = t->dtype_var ? s->tvar[t->dtype_var[0] - 'A'] : t->dtype;
        const tc_dim *shape[TC_MAX_RANK];
        int rank = 0;
        if (t->star) {
            shape[rank++] = dim_sym(b->dc, "*");
            add_sym(b, "*");
        } else if (t->is_tensor) {
            for (int k = 0; k < t->ndims; k++) {
                const ast_dim *ad = &t->dims[k];
                if (!ad->name) {
                    shape[rank++] = dim_const(b->dc, ad->value);
                    continue;
                }
                const tc_dim *d = smap_get(&s->dims, ad->name);
                if (!d) {
                    d = dim_sym(b->dc, ad->name);
                    smap_put(b->a, &s->dims, ad->name, (void *)d);
                    add_sym(b, ad->name);
                }
                shape[rank++] = d;
            }
        }
        g->rank = rank;
        g->shape = ARENA_ARRAY(b->a, const tc_dim *, rank ? rank : 1);
        memcpy(g->shape, shape, sizeof *shape * (size_t)rank);
        gnode *n = graph_node_new(b->a, g->scalar ? OP_scalar : OP_input, g->dtype, rank, shape,
                                  NULL, 0, p->loc);
        n->a.param = i;
        n->weak = g->scalar;
        n->name = p->name;
        node_check_limits(b, p->loc);
        graph_add(b->a, f, n);
        g->node = n;
        bvar *v = ARENA_NEW(b->a, bvar);
        v->name = p->name;
        v->node = v->orig = n;
        v->loc = p->loc;
        v->param = i;
        v->inout = p->inout;
        smap_put(b->a, &s->vars, p->name, v);
    }
    /* Defaults, once every dim is bound: compile-time constants. */
    for (int i = 0; i < fn->nparams; i++) {
        const ast_param *p = &fn->params[i];
        if (!p->def)
            continue;
        gnode *v = build_expr(b, p->def);
        double val;
        tc_dtype dt;
        if (!const_value(b, v, &val, &dt))
            diag_error(b->d, TC_ERR_COMPILE, p->def->loc,
                       "the default of '%s' must be a compile-time constant", p->name);
        f->params[i].has_default = true;
        f->params[i].def = dtype_round(f->params[i].dtype, val);
    }
}

static void entry_outputs(builder *b, bscope *s)
{
    const ast_fn *fn = s->fn;
    gfn *f = b->f;
    int n = s->nresults;
    for (int i = 0; i < fn->nparams; i++)
        n += fn->params[i].inout;
    f->outputs = ARENA_ARRAY(b->a, goutput, n ? n : 1);
    f->noutputs = n;
    int k = 0;
    for (int i = 0; i < s->nresults; i++, k++) {
        const ast_result *r = &fn->results[i];
        goutput *o = &f->outputs[k];
        o->name = r->name ? r->name
                  : s->nresults == 1 ? "out"
                                     : arena_printf(b->a, "out%d", i);
        o->loc = s->result_locs[i];
        o->node = s->results[i];
        o->inout_param = -1;
    }
    for (int i = 0; i < fn->nparams; i++) {
        if (!fn->params[i].inout)
            continue;
        goutput *o = &f->outputs[k++];
        bvar *v = smap_get(&s->vars, fn->params[i].name);
        o->name = fn->params[i].name;
        o->loc = fn->params[i].loc;
        o->node = v->node;
        o->inout_param = i;
    }
}

/* Drop nodes that no output needs (constants made while working out an
 * axis, values computed and never used), keeping parameter leaves, and
 * renumber.  Reverse topological order sees every user before its inputs. */
void build_drop_dead(builder *b)
{
    gfn *f = b->f;
    bool *live = ARENA_ARRAY(b->a, bool, f->nnodes ? f->nnodes : 1);
    for (int i = 0; i < f->nparams; i++)
        live[f->params[i].node->id] = true;
    for (int i = 0; i < f->noutputs; i++)
        live[f->outputs[i].node->id] = true;
    for (int i = f->nnodes - 1; i >= 0; i--)
        if (live[i])
            for (int k = 0; k < f->nodes[i]->nin; k++)
                live[f->nodes[i]->in[k]->id] = true;
    int n = 0;
    for (int i = 0; i < f->nnodes; i++)
        if (live[i]) {
            f->nodes[n] = f->nodes[i];
            f->nodes[n]->id = n;
            n++;
        }
    f->nnodes = n;
}

/* Renumber f's nodes in a canonical order: the parameters' leaves in
 * parameter order, then a depth-first post-order from each output in turn,
 * inputs in operand order.  A derived function's rules build their nodes
 * in nested calls, whose argument order C leaves unspecified (gcc and clang
 * differ); the nodes themselves are the same (hash-consed), so this order
 * makes its dumps and kernels the same whatever the compiler.  Expects
 * build_drop_dead first (every node reachable). */
void build_canonical_order(builder *b)
{
    gfn *f = b->f;
    int n = f->nnodes, at = 0, sp = 0;
    gnode **order = ARENA_ARRAY(b->a, gnode *, n ? n : 1);
    bool *done = ARENA_ARRAY(b->a, bool, n ? n : 1);
    gnode **stack = ARENA_ARRAY(b->a, gnode *, n ? n : 1);
    int *next = ARENA_ARRAY(b->a, int, n ? n : 1); /* the next operand to visit */
    for (int i = 0; i < f->nparams; i++) {
        gnode *p = f->params[i].node;
        if (!done[p->id]) {
            done[p->id] = true;
            order[at++] = p;
        }
    }
    for (int o = 0; o < f->noutputs; o++) {
        gnode *r = f->outputs[o].node;
        if (done[r->id])
            continue;
        stack[sp++] = r;
        next[r->id] = 0;
        while (sp > 0) {
            gnode *v = stack[sp - 1];
            if (next[v->id] < v->nin) {
                gnode *in = v->in[next[v->id]++];
                if (!done[in->id]) { /* in a DAG never on the stack already */
                    next[in->id] = 0;
                    stack[sp++] = in;
                }
                continue;
            }
            sp--;
            if (!done[v->id]) {
                done[v->id] = true;
                order[at++] = v;
            }
        }
    }
    for (int i = 0; i < n; i++) /* none after build_drop_dead; kept in place if any */
        if (!done[i])
            order[at++] = f->nodes[i];
    for (int i = 0; i < n; i++) {
        f->nodes[i] = order[i];
        f->nodes[i]->id = i;
    }
}

bool build_elementwise(const gfn *f)
{
    int tensors = 0;
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].scalar)
            continue;
        if (!f->params[i].star)
            return false;
        tensors++;
    }
    if (!tensors)
        return false;
    for (int i = 0; i < f->nnodes; i++)
        if (!op_elementwise(f->nodes[i]->op))
            return false;
    return true;
}

gfn *build_entry(builder *b, bfunc *bf)
{
    const ast_fn *fn = bf->fn;
    if (fn->derive)
        return grad_build(b, bf);
    build_check_signature(b, bf);
    gfn *f = graph_fn_new(b->a, fn->name);
    f->loc = fn->loc;
    f->dims = b->dc;
    b->f = f;
    hset_init(&b->cse, b->a, 0);
    b->work = b->calls = 0;
    b->nest = 0;
    bscope *s = ARENA_NEW(b->a, bscope);
    s->fn = fn;
    s->prog = bf->prog;
    s->sa = b->a;
    b->sc = s;
    entry_params(b, s);
    build_body(b, s);
    entry_outputs(b, s);
    build_drop_dead(b);
    f->elementwise = build_elementwise(f);
    b->sc = NULL;
    graph_verify(f, b->d);
    return f;
}

/* Free the scratch arenas of calls an error left under way. */
static void free_live(builder *b)
{
    for (int i = 0; i < GRAPH_MAX_INLINE_DEPTH + 2; i++)
        if (b->live[i]) {
            arena_free(b->live[i]);
            b->live[i] = NULL;
        }
}

/* Kept out of graph_build: a compound literal beside its setjmp could be
 * clobbered by the longjmp. */
static _Noreturn void no_such_fn(builder *b, const ast_program *prog, const char *fn)
{
    const char **names = ARENA_ARRAY(b->a, const char *, b->fns.set.n + 1);
    int n = smap_keys(&b->fns, names, 0);
    tc_loc loc = {prog ? prog->src : NULL, 0, 0};
    diag_error(b->d, TC_ERR_NOT_FOUND, loc, "no function named '%s'%s", fn, suggest(b, fn, names, n));
}

/* Check the bindings of graph_build_ex and record them in b->tvar_bound. */
static void bind_dtypes(builder *b, const ast_program *prog, const tc_dtypebind *dts, int ndts)
{
    tc_loc whole = {prog ? prog->src : NULL, 0, 0}; /* not a token of the program */
    for (int i = 0; i < ndts; i++) {
        const char *n = dts[i].name;
        if (!n || !(n[0] >= 'A' && n[0] <= 'Z' && n[1] == 0))
            diag_error(b->d, TC_ERR_INVALID_ARG, whole,
                       "a dtype variable is one capital letter, not '%s'", n ? n : "(null)");
        if (dts[i].dtype <= TC_DT_NONE || dts[i].dtype >= TC_DT_COUNT)
            diag_error(b->d, TC_ERR_INVALID_ARG, whole, "dtype variable '%s' is bound to no dtype",
                       n);
        if (b->tvar_bound[n[0] - 'A'])
            diag_error(b->d, TC_ERR_INVALID_ARG, whole, "dtype variable '%s' is bound twice", n);
        b->tvar_bound[n[0] - 'A'] = dts[i].dtype;
    }
}

/* A binding for a letter the entry does not use is a mistake (a typo, or
 * the wrong function), not something to ignore. */
static void check_bound_used(builder *b, const ast_program *prog, const ast_fn *fn)
{
    for (int k = 0; k < 26; k++) {
        if (!b->tvar_bound[k] || fn_uses_tvar(fn, k))
            continue;
        tc_buf has;
        buf_init(&has, b->a);
        for (int j = 0; j < 26; j++)
            if (fn_uses_tvar(fn, j))
                buf_printf(&has, "%s%c", has.len ? ", " : "", 'A' + j);
        tc_loc whole = {prog ? prog->src : NULL, 0, 0};
        diag_error(b->d, TC_ERR_INVALID_ARG, whole, "function '%s' has no dtype variable '%c' (%s%s)",
                   fn->name, 'A' + k, has.len ? "it has " : "it has none", buf_str(&has));
    }
}

bool graph_fn_generic(const ast_fn *fn)
{
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i].type.star || fn->params[i].type.dtype_var)
            return true;
    for (int i = 0; i < fn->nresults; i++)
        if (fn->results[i].type.star || fn->results[i].type.dtype_var)
            return true;
    return false;
}

/* Append to *out each function of prog that e calls (by index; repeats
 * are harmless).  The parser bounds the depth of expressions, so the
 * recursion is bounded too. */
typedef struct { int *v; int n, cap; } int_list;

static void push_callee(builder *b, int_list *l, int k)
{
    ARENA_GROW(b->a, l->v, l->n, l->cap, 8);
    l->v[l->n++] = k;
}

static void find_calls(builder *b, const ast_program *prog, const ast_expr *e, int_list *out)
{
    if (!e)
        return;
    switch (e->kind) {
    case AST_UNARY:
        find_calls(b, prog, e->u.unary.a, out);
        break;
    case AST_BINARY:
        find_calls(b, prog, e->u.binary.a, out);
        find_calls(b, prog, e->u.binary.b, out);
        break;
    case AST_CALL: {
        bfunc *f = build_find_fn(b, e->u.call.fn);
        if (f && f->prog == prog)
            push_callee(b, out, (int)(f->fn - prog->fns));
        for (int i = 0; i < e->u.call.nargs; i++)
            find_calls(b, prog, e->u.call.args[i].value, out);
        break;
    }
    case AST_ATTR:
        find_calls(b, prog, e->u.attr.obj, out);
        break;
    case AST_INDEX:
        find_calls(b, prog, e->u.index.obj, out);
        for (int i = 0; i < e->u.index.nitems; i++)
            find_calls(b, prog, e->u.index.items[i], out);
        break;
    case AST_TUPLE:
    case AST_LIST:
        for (int i = 0; i < e->u.tuple.nitems; i++)
            find_calls(b, prog, e->u.tuple.items[i], out);
        break;
    case AST_SLICE:
        find_calls(b, prog, e->u.slice.start, out);
        find_calls(b, prog, e->u.slice.stop, out);
        find_calls(b, prog, e->u.slice.step, out);
        break;
    default:
        break;
    }
}

/* Every function of prog as an entry point, except generic ones (see
 * graph_fn_generic) that are helpers: called, directly or through other
 * helpers, from a function that is built (a non-generic one, or a generic
 * one nothing else calls).  A helper is checked where it is called, with
 * its caller's shapes and dtypes.  A generic function that is built and
 * fails with the entry's bindings ([*] rank 1, dtype variables f32) is left
 * out (listed in g->unbuilt) rather than failing the file: asked for by
 * name it is built again, and its error reported then.  Generic functions
 * that only call each other (a cycle: recursion) are built, so the
 * recursion is reported. */
static void build_all(builder *b, const ast_program *prog, tc_graph *g, jmp_buf *outer)
{
    int n = prog ? prog->nfns : 0;
    g->fns = ARENA_ARRAY(b->a, gfn *, n ? n : 1);
    g->unbuilt = ARENA_ARRAY(b->a, const char *, n ? n : 1);
    int_list *callees = ARENA_ARRAY(b->a, int_list, n ? n : 1);
    bool *generic = ARENA_ARRAY(b->a, bool, n ? n : 1);
    bool *called = ARENA_ARRAY(b->a, bool, n ? n : 1);  /* by another function */
    bool *helper = ARENA_ARRAY(b->a, bool, n ? n : 1);
    int *stack = ARENA_ARRAY(b->a, int, n ? n : 1);
    for (int i = 0; i < n; i++) {
        const ast_fn *fn = &prog->fns[i];
        generic[i] = graph_fn_generic(fn);
        for (int k = 0; k < fn->nparams; k++)
            find_calls(b, prog, fn->params[k].def, &callees[i]);
        for (int k = 0; k < fn->nstmts; k++) {
            find_calls(b, prog, fn->stmts[k].value, &callees[i]);
            for (int v = 0; v < fn->stmts[k].nvalues; v++)
                find_calls(b, prog, fn->stmts[k].values[v], &callees[i]);
        }
        for (int k = 0; k < callees[i].n; k++)
            if (callees[i].v[k] != i)
                called[callees[i].v[k]] = true;
    }
    /* helpers: generic functions reached from a root over other edges */
    int top = 0;
    for (int i = 0; i < n; i++)
        if (!generic[i] || !called[i])
            stack[top++] = i;
    while (top > 0) {
        int i = stack[--top];
        for (int k = 0; k < callees[i].n; k++) {
            int j = callees[i].v[k];
            if (j != i && generic[j] && called[j] && !helper[j]) {
                helper[j] = true;
                stack[top++] = j;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        bfunc *f = build_find_fn(b, prog->fns[i].name);
        if (!generic[i]) {
            g->fns[g->nfns++] = build_entry(b, f);
            continue;
        }
        if (helper[i])
            continue;
        jmp_buf jb;
        b->d->jb = &jb;
        if (setjmp(jb) == 0) {
            gfn *e = build_entry(b, f); /* counted only once it is built */
            g->fns[g->nfns++] = e;
        } else {
            free_live(b);
            diag_clear(b->d);
            g->unbuilt[g->nunbuilt++] = f->fn->name;
        }
        b->d->jb = outer;
    }
}

tc_graph *graph_build(const ast_program *prog, const ast_program *const *prelude, int nprelude,
                      const char *fn, tc_arena *a, tc_diag *d)
{
    return graph_build_ex(prog, prelude, nprelude, fn, NULL, 0, a, d);
}

tc_graph *graph_build_ex(const ast_program *prog, const ast_program *const *prelude, int nprelude,
                         const char *fn, const tc_dtypebind *dts, int ndts, tc_arena *a,
                         tc_diag *d)
{
    /* The builder lives in the arena so that it is intact after an error
     * unwinds to the setjmp below (locals changed after setjmp are not). */
    builder *b = ARENA_NEW(a, builder);
    b->a = a;
    b->d = d;
    b->dc = dimctx_new(a);
    jmp_buf jb, *outer = d->jb;
    if (setjmp(jb)) {
        free_live(b);
        d->jb = outer;
        longjmp(*outer, 1);
    }
    d->jb = &jb;
    bind_dtypes(b, prog, dts, ndts);
    for (int i = 0; i < nprelude; i++)
        add_fns(b, prelude[i], true);
    add_fns(b, prog, false);

    tc_graph *g = ARENA_NEW(a, tc_graph);
    g->dims = b->dc;
    g->arena = a;
    if (fn) {
        bfunc *f = build_find_fn(b, fn);
        if (!f)
            no_such_fn(b, prog, fn);
        /* a derived function's dtype variables are its forward's */
        const ast_fn *root = f->fn;
        for (int i = 0; i < 16 && root->derive; i++) {
            const char *t = ast_derive_target(root);
            bfunc *tf = t ? build_find_fn(b, t) : NULL;
            if (!tf)
                break;
            root = tf->fn;
        }
        check_bound_used(b, prog, root);
        g->fns = ARENA_ARRAY(a, gfn *, 1);
        g->fns[g->nfns++] = build_entry(b, f);
    } else {
        build_all(b, prog, g, &jb);
    }
    d->jb = outer;
    return g;
}
