/* build_call.c - statements, returns and inlined calls.
 *
 * A function body runs in a scope (bscope) mapping names to nodes.  A call
 * of a user or prelude function is inlined on the spot: its arguments are
 * built in the caller's scope, matched to the parameters (position, then
 * keyword, then defaults), checked against the parameter types, and bound in
 * a fresh scope, together with the callee's symbolic dims (bound to the
 * argument's dims: `x: f32[N, D]` makes N and D names for the caller's
 * sizes) and dtype variables.  Then the callee's statements run in that
 * scope and its returned nodes are the call's value.  Nothing of a call
 * survives in the graph but the nodes it made.
 *
 * Rules (docs/semantics.md): names are assigned once, except inout
 * parameters and names passed to an inout argument, which take the callee's
 * final value; recursion is an error at the call; a call nested deeper than
 * GRAPH_MAX_INLINE_DEPTH is a limit error.  Arguments of a concrete dtype
 * must have it exactly, except literals (weak values), which adopt it;
 * scalar parameters convert any rank-0 value.  While a callee's body runs
 * its call site is pushed on the diagnostics, so an error inside it ends
 * with "note: in call to 'f' from here".
 */
#include "build_internal.h"

#include <string.h>

bvar *build_var(builder *b, const char *name) { return smap_get(&b->sc->vars, name); }

static const char *where(builder *b, tc_loc loc)
{
    return arena_printf(b->a, "%d:%d", loc.line, loc.col);
}

/* A new value of an inout parameter keeps the parameter's dtype and shape,
 * since it is written back into the caller's buffer: literals adopt the
 * dtype, and values that broadcast to the shape are broadcast (p = 0). */
static gnode *coerce_inout(builder *b, const bvar *v, gnode *n, tc_loc loc)
{
    const gnode *o = v->orig;
    bool ok = n->rank <= o->rank;
    for (int t = 1; ok && t <= n->rank; t++) {
        const tc_dim *dn = n->shape[n->rank - t];
        int64_t one;
        ok = dim_eq(dn, o->shape[o->rank - t]) || (dim_is_const(dn, &one) && one == 1);
    }
    if (ok && n->dtype != o->dtype) {
        if (n->weak)
            n = node_cast(b, n, o->dtype, false, loc);
        else
            ok = false;
    }
    if (!ok)
        diag_error(b->d, TC_ERR_COMPILE, loc, "cannot assign %s to inout parameter '%s', which is %s",
                   type_str(b, n), v->name, type_str(b, o));
    bool same = n->rank == o->rank;
    for (int i = 0; same && i < n->rank; i++)
        same = dim_eq(n->shape[i], o->shape[i]);
    if (!same)
        n = view_broadcast(b, n, o->rank, (const tc_dim *const *)o->shape, loc);
    return n;
}

void build_set_var(builder *b, bscope *s, const char *name, gnode *n, tc_loc loc, bool via_inout)
{
    bvar *v = smap_get(&s->vars, name);
    if (v) {
        if (v->inout && !via_inout)
            n = coerce_inout(b, v, n, loc);
        if (v->inout || via_inout) {
            v->node = n;
            if (!n->name)
                n->name = name;
            return;
        }
        if (v->param >= 0)
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "cannot assign to parameter '%s': only inout parameters can be reassigned",
                       name);
        diag_error(b->d, TC_ERR_COMPILE, loc,
                   "'%s' is already assigned (at %s); a name is assigned only once", name,
                   where(b, v->loc));
    }
    if (smap_get(&s->dims, name))
        diag_error(b->d, TC_ERR_COMPILE, loc, "cannot assign to '%s': it is a dim of the signature",
                   name);
    v = ARENA_NEW(s->sa, bvar);
    v->name = name;
    v->node = n;
    v->loc = loc;
    v->param = -1;
    smap_put(s->sa, &s->vars, name, v);
    if (!n->name)
        n->name = name;
}

/* ---- statements ---- */

static void assign(builder *b, bscope *s, const ast_stmt *st)
{
    gnode **res;
    int n;
    const ast_expr *e = st->value;
    if (st->ntargets == 0) {
        /* A call standing alone (f(p) updating an inout p): results, if
         * any, are dropped. */
        if (e->kind != AST_CALL)
            diag_error(b->d, TC_ERR_COMPILE, e->loc,
                       "this expression does nothing: only a call can stand alone");
        build_call_multi(b, e, &res);
        return;
    }
    if (e->kind == AST_CALL) {
        n = build_call_multi(b, e, &res);
        if (n != st->ntargets)
            diag_error(b->d, TC_ERR_COMPILE, st->loc, "'%s' returns %s, but %s assigned",
                       e->u.call.fn, plural(b, n, "value", "values"),
                       st->ntargets == 1 ? "1 name is" : arena_printf(b->a, "%d names are", st->ntargets));
    } else {
        if (st->ntargets != 1)
            diag_error(b->d, TC_ERR_COMPILE, st->loc, "cannot assign one value to %d names",
                       st->ntargets);
        res = ARENA_ARRAY(s->sa, gnode *, 1);
        res[0] = build_expr(b, e);
        n = 1;
    }
    for (int i = 0; i < n; i++)
        build_set_var(b, s, st->targets[i], res[i], st->target_locs[i], false);
}

static void ret(builder *b, bscope *s, const ast_stmt *st)
{
    gnode **res;
    tc_loc *locs;
    int n = st->nvalues;
    /* The results outlive this activation: they go to the caller's scratch. */
    tc_arena *ra = s->caller ? s->caller->sa : b->a;
    if (n == 1 && st->values[0]->kind == AST_CALL) {
        /* return f(x) forwards every result of f */
        n = build_call_multi(b, st->values[0], &res);
        gnode **r = ARENA_ARRAY(ra, gnode *, n ? n : 1);
        for (int i = 0; i < n; i++)
            r[i] = res[i];
        res = r;
        locs = ARENA_ARRAY(ra, tc_loc, n ? n : 1);
        for (int i = 0; i < n; i++)
            locs[i] = st->values[0]->loc;
    } else {
        res = ARENA_ARRAY(ra, gnode *, n ? n : 1);
        locs = ARENA_ARRAY(ra, tc_loc, n ? n : 1);
        for (int i = 0; i < n; i++) {
            res[i] = build_expr(b, st->values[i]);
            locs[i] = st->values[i]->loc;
        }
    }
    const ast_fn *fn = s->fn;
    if (n != fn->nresults)
        diag_error(b->d, TC_ERR_COMPILE, st->loc,
                   "function '%s' returns %s, but its signature declares %d", fn->name,
                   plural(b, n, "value", "values"), fn->nresults);
    s->results = res;
    s->result_locs = locs;
    s->nresults = n;
    s->returned = true;
    build_check_results(b, s);
}

void build_body(builder *b, bscope *s)
{
    const ast_fn *fn = s->fn;
    for (int i = 0; i < fn->nstmts; i++) {
        const ast_stmt *st = &fn->stmts[i];
        if (s->returned)
            diag_error(b->d, TC_ERR_COMPILE, st->loc, "statement after 'return' is never run");
        if (st->kind == AST_ASSIGN)
            assign(b, s, st);
        else
            ret(b, s, st);
    }
    if (!s->returned && fn->nresults > 0)
        diag_error(b->d, TC_ERR_COMPILE, fn->end_loc, "missing return in '%s', which declares %s",
                   fn->name, plural(b, fn->nresults, "result", "results"));
    if (!s->returned) {
        s->results = NULL;
        s->nresults = 0;
    }
}

/* ---- types ---- */

static int tvar_index(const ast_type *t) { return t->dtype_var[0] - 'A'; }

static const char *result_name(builder *b, const ast_fn *fn, int i)
{
    if (fn->results[i].name)
        return arena_printf(b->a, "result '%s'", fn->results[i].name);
    if (fn->nresults == 1)
        return "the result";
    return arena_printf(b->a, "result %d", i + 1);
}

void build_check_results(builder *b, bscope *s)
{
    const ast_fn *fn = s->fn;
    for (int i = 0; i < s->nresults; i++) {
        const ast_type *t = &fn->results[i].type;
        gnode *v = s->results[i];
        tc_loc loc = s->result_locs[i];
        tc_dtype want = t->dtype;
        if (t->dtype_var) {
            int k = tvar_index(t);
            if (!s->tvar[k]) {
                s->tvar[k] = dtype_concrete(v);
                s->tvar_from[k] = fn->results[i].name ? fn->results[i].name : "result";
            }
            want = s->tvar[k];
        }
        bool ok = true;
        if (!t->is_tensor) {
            ok = v->rank == 0;
        } else if (!t->star) {
            ok = v->rank == t->ndims;
            for (int k = 0; ok && k < t->ndims; k++) {
                const ast_dim *ad = &t->dims[k];
                if (!ad->name) {
                    ok = dim_eq(v->shape[k], dim_const(b->dc, ad->value));
                    continue;
                }
                const tc_dim *d = smap_get(&s->dims, ad->name);
                if (!d)
                    smap_put(s->sa, &s->dims, ad->name, (void *)v->shape[k]);
                else
                    ok = dim_eq(d, v->shape[k]);
            }
        }
        if (ok && v->dtype != want) {
            if (v->weak)
                v = node_cast(b, v, want, false, loc);
            else
                ok = false;
        }
        if (!ok)
            diag_error(b->d, TC_ERR_COMPILE, loc, "%s of '%s' is %s, but the signature declares %s",
                       result_name(b, fn, i), fn->name, type_str(b, v), ast_type_str(b, t));
        s->results[i] = v;
    }
}

/* ---- calls ---- */

_Noreturn static void arg_mismatch(builder *b, tc_loc loc, const ast_fn *fn, const ast_param *p,
                                   const gnode *v, const char *extra)
{
    diag_error(b->d, TC_ERR_COMPILE, loc, "argument '%s' of '%s' is %s, but the parameter is %s%s",
               p->name, fn->name, type_str(b, v), ast_type_str(b, &p->type), extra);
}

/* First pass over the arguments: strong (non-literal) values bind the dtype
 * variables, so a literal met earlier can adopt the dtype of a tensor met
 * later (rmsnorm(x, g, eps) with eps: T). */
static void bind_tvars(builder *b, bscope *s, const ast_fn *fn, gnode *const *vals,
                       const tc_loc *locs)
{
    for (int i = 0; i < fn->nparams; i++) {
        const ast_param *p = &fn->params[i];
        gnode *v = vals[i];
        if (!p->type.dtype_var || !v || v->weak)
            continue;
        int k = tvar_index(&p->type);
        if (!s->tvar[k]) {
            s->tvar[k] = v->dtype;
            s->tvar_from[k] = p->name;
        } else if (s->tvar[k] != v->dtype) {
            diag_error(b->d, TC_ERR_COMPILE, locs[i],
                       "argument '%s' of '%s' is %s, but %s is %s (from argument '%s')", p->name,
                       fn->name, type_str(b, v), p->type.dtype_var, dtype_name(s->tvar[k]),
                       s->tvar_from[k]);
        }
    }
}

/* Check v against parameter i and return the value the callee sees. */
static gnode *match_param(builder *b, bscope *s, const ast_fn *fn, int i, gnode *v, tc_loc loc)
{
    const ast_param *p = &fn->params[i];
    const ast_type *t = &p->type;
    int k = t->dtype_var ? tvar_index(t) : -1;
    if (k >= 0 && !s->tvar[k]) {
        s->tvar[k] = dtype_concrete(v);
        s->tvar_from[k] = p->name;
    }
    tc_dtype want = k >= 0 ? s->tvar[k] : t->dtype;
    if (!t->is_tensor) {
        /* A scalar parameter: any rank-0 value, converted; it is weak in
         * the callee when the argument was. */
        if (v->rank != 0)
            arg_mismatch(b, loc, fn, p, v, "");
        if (k >= 0 && !v->weak && v->dtype != want)
            arg_mismatch(b, loc, fn, p, v,
                         arena_printf(b->a, " with %s = %s (from argument '%s')", t->dtype_var,
                                      dtype_name(want), s->tvar_from[k]));
        return node_cast(b, v, want, v->weak, loc);
    }
    if (!t->star) {
        if (v->rank != t->ndims)
            arg_mismatch(b, loc, fn, p, v, "");
        for (int j = 0; j < t->ndims; j++) {
            const ast_dim *ad = &t->dims[j];
            if (!ad->name) {
                if (!dim_eq(v->shape[j], dim_const(b->dc, ad->value)))
                    arg_mismatch(b, loc, fn, p, v, "");
                continue;
            }
            const tc_dim *d = smap_get(&s->dims, ad->name);
            if (!d)
                smap_put(s->sa, &s->dims, ad->name, (void *)v->shape[j]);
            else if (!dim_eq(d, v->shape[j]))
                arg_mismatch(b, loc, fn, p, v,
                             arena_printf(b->a, " with %s = %s", ad->name, dimstr(b, d)));
        }
    }
    if (v->dtype != want) {
        if (!v->weak)
            arg_mismatch(b, loc, fn, p, v,
                         k >= 0 ? arena_printf(b->a, " with %s = %s (from argument '%s')",
                                               t->dtype_var, dtype_name(want), s->tvar_from[k])
                                : "");
        v = node_cast(b, v, want, true, loc);
    }
    return v;
}

static void bind_param(builder *b, bscope *s, int i, gnode *v)
{
    const ast_param *p = &s->fn->params[i];
    bvar *var = ARENA_NEW(s->sa, bvar);
    var->name = p->name;
    var->node = v;
    var->orig = v;
    var->loc = p->loc;
    var->param = i;
    var->inout = p->inout;
    smap_put(s->sa, &s->vars, p->name, var);
    if (!v->name)
        v->name = p->name;
}

int build_call_fn(builder *b, const ast_expr *call, bfunc *bf, gnode ***res)
{
    const ast_fn *fn = bf->fn;
    tc_loc loc = call->u.call.fn_loc;
    bscope *caller = b->sc;
    for (const bscope *t = caller; t; t = t->caller)
        if (t->fn == fn)
            diag_error(b->d, TC_ERR_COMPILE, loc, "recursive call to '%s'", fn->name);
    if (caller->depth + 1 > GRAPH_MAX_INLINE_DEPTH)
        diag_error(b->d, TC_ERR_LIMIT, loc, "calls nested more than %d deep",
                   (int)GRAPH_MAX_INLINE_DEPTH);
    if (fn->derive)
        diag_error(b->d, TC_ERR_COMPILE, loc,
                   "'%s' is a derived function (fn %s = ...); it can be an entry point but "
                   "not called", fn->name, fn->name);
    build_check_signature(b, bf);
    b->work++;
    b->calls++;
    node_check_limits(b, loc);

    int depth = caller->depth + 1;
    tc_arena *ca = caller->sa;
    int np = fn->nparams;
    const char **pnames = ARENA_ARRAY(ca, const char *, np ? np : 1);
    for (int i = 0; i < np; i++)
        pnames[i] = fn->params[i].name;
    const ast_arg **args = ARENA_ARRAY(ca, const ast_arg *, np ? np : 1);
    build_match_args(b, call, fn->name, pnames, np, args);

    /* Arguments, in the order they are written, in the caller's scope. */
    gnode **vals = ARENA_ARRAY(ca, gnode *, np ? np : 1);
    tc_loc *locs = ARENA_ARRAY(ca, tc_loc, np ? np : 1);
    for (int k = 0; k < call->u.call.nargs; k++) {
        const ast_arg *a = &call->u.call.args[k];
        int i = 0;
        while (args[i] != a)
            i++;
        const ast_param *p = &fn->params[i];
        locs[i] = a->loc;
        if (p->inout) {
            const ast_expr *v = a->value;
            bvar *var = v->kind == AST_NAME ? build_var(b, v->u.name) : NULL;
            if (!var)
                diag_error(b->d, TC_ERR_COMPILE, a->loc,
                           "inout argument '%s' of '%s' must be the name of a variable", p->name,
                           fn->name);
            if (var->param >= 0 && !var->inout)
                diag_error(b->d, TC_ERR_COMPILE, a->loc,
                           "cannot pass parameter '%s' to inout parameter '%s' of '%s': it is "
                           "not inout itself",
                           var->name, p->name, fn->name);
            for (int j = 0; j < i; j++)
                if (fn->params[j].inout && args[j] && args[j]->value->kind == AST_NAME &&
                    strcmp(args[j]->value->u.name, v->u.name) == 0)
                    diag_error(b->d, TC_ERR_COMPILE, a->loc,
                               "'%s' is passed to two inout parameters of '%s'", v->u.name,
                               fn->name);
        }
        vals[i] = build_expr(b, a->value);
    }
    for (int i = 0; i < np; i++)
        if (!args[i] && !fn->params[i].def)
            diag_error(b->d, TC_ERR_COMPILE, loc, "missing argument '%s' in call to '%s'",
                       fn->params[i].name, fn->name);

    /* Everything of the callee's activation but its results and nodes lives
     * in a scratch arena freed on return, so memory stays proportional to
     * the call depth however many calls are inlined.  (Made after the
     * arguments, whose own calls are at this depth too.) */
    tc_arena *sa = arena_new(b->d);
    b->live[depth] = sa;
    bscope *s = ARENA_NEW(sa, bscope);
    s->caller = caller;
    s->fn = fn;
    s->prog = bf->prog;
    s->depth = depth;
    s->sa = sa;
    s->call_loc = loc;
    bind_tvars(b, s, fn, vals, locs);
    for (int i = 0; i < np; i++)
        if (vals[i])
            bind_param(b, s, i, match_param(b, s, fn, i, vals[i], locs[i]));

    diag_push_call(b->d, loc, fn->name);
    b->sc = s;
    /* Defaults are written in the callee, so they run in its scope. */
    for (int i = 0; i < np; i++)
        if (!vals[i]) {
            const ast_expr *def = fn->params[i].def;
            bind_param(b, s, i, match_param(b, s, fn, i, build_expr(b, def), def->loc));
        }
    build_body(b, s);
    b->sc = caller;
    diag_pop_call(b->d);

    /* inout: the caller's name now holds the callee's final value */
    for (int i = 0; i < np; i++)
        if (fn->params[i].inout && args[i]) {
            bvar *pv = smap_get(&s->vars, fn->params[i].name);
            build_set_var(b, caller, args[i]->value->u.name, pv->node, args[i]->loc, true);
        }
    *res = s->results;
    int n = s->nresults;
    b->live[depth] = NULL;
    arena_free(sa);
    return n;
}
