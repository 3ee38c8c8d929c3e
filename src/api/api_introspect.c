/* api_introspect.c - what a program's functions take and give (tensorc.h):
 * tc_program_functions, tc_program_function, tc_output_shapes; and the dtype
 * bindings a call passes as arguments (tc_arg_dtype), which every call of
 * the API that takes tc_arg lists checks and strips here (api_call_entry).
 *
 * Descriptions are built from the entry function's op graph (api_entry:
 * what tc_run would run), with the dtype variables of the signature taken
 * from the AST, since the graph has them bound; they are made once per
 * function and kept in the program (p->descs).
 */
#define TC_UNSTABLE_API /* tc_program_function_ex */
#include <stdlib.h>
#include <string.h>

#include "api_interp.h"
#include "api_run.h"
#include "dim.h"

/* One function's description, kept in the program's arena. */
typedef struct api_desc {
    struct api_desc *next;
    const gfn *f;
    bool bound;             /* tc_program_function_ex: dtypes named, not as the signature's letters */
    tc_function_info info;
} api_desc;

/* The AST of function `name`, in the user's file or the prelude. */
static const ast_fn *ast_fn_named(const tc_program *p, const char *name)
{
    for (int i = 0; i < p->ast->nfns; i++)
        if (strcmp(p->ast->fns[i].name, name) == 0)
            return &p->ast->fns[i];
    for (int k = 0; k < p->nprelude; k++)
        for (int i = 0; i < p->prelude[k]->nfns; i++)
            if (strcmp(p->prelude[k]->fns[i].name, name) == 0)
                return &p->prelude[k]->fns[i];
    return NULL;
}

tc_status tc_program_functions(tc_program *p, size_t *n, const char *const **names)
{
    if (!p || !n || !names)
        return TC_ERR_INVALID_ARG;
    api_begin(p->ctx);
    if (!p->fn_names) {
        const char **v = ARENA_ARRAY(p->arena, const char *, p->ast->nfns + 1);
        for (int i = 0; i < p->ast->nfns; i++)
            v[i] = p->ast->fns[i].name;
        p->fn_names = v;
    }
    *n = (size_t)p->ast->nfns;
    *names = p->fn_names;
    return TC_OK;
}

/* The text of a dim: "N", "4", "N*2", "*". */
static const char *const *dims_text(tc_arena *a, int rank, const tc_dim *const *shape)
{
    const char **v = ARENA_ARRAY(a, const char *, rank + 1);
    for (int k = 0; k < rank; k++)
        v[k] = dim_str(a, shape[k]);
    return v;
}

static void describe_type(tc_value_info *v, tc_dtype dt, const ast_type *t)
{
    if (t && t->dtype_var) {
        v->dtype = t->dtype_var;
        v->dtype_var = 1;
    } else {
        v->dtype = dtype_name(dt);
    }
}

typedef struct {
    tc_program *p;
    api_desc *d;
} describe_job;


static void describe_body(void *arg)
{
    describe_job *j = arg;
    tc_program *p = j->p;
    api_desc *d = j->d;
    const gfn *f = d->f;
    tc_arena *a = p->arena;
    /* the signature's dtype variables, unless the caller bound them (a
     * derived function's are its forward's) */
    const ast_fn *named = ast_fn_named(p, f->name);
    const ast_fn *af = d->bound ? NULL : api_params_fn(p, named);
    bool derived = named && named->derive;
    tc_function_info *info = &d->info;
    info->name = f->name;
    info->elementwise = f->elementwise;
    tc_value_info *ps = ARENA_ARRAY(a, tc_value_info, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        tc_value_info *v = &ps[i];
        v->name = g->name;
        describe_type(v, g->dtype, af && i < af->nparams ? &af->params[i].type : NULL);
        v->scalar = g->scalar;
        v->star = g->star;
        v->rank = g->rank;
        v->dims = dims_text(a, g->rank, g->shape);
        v->inout = g->inout;
        v->has_default = g->has_default;
        v->default_value = g->has_default ? g->def : 0;
    }
    tc_value_info *os = ARENA_ARRAY(a, tc_value_info, f->noutputs + 1);
    int result = 0; /* the next declared result: outputs that are not inout come in their order */
    for (int k = 0; k < f->noutputs; k++) {
        const goutput *o = &f->outputs[k];
        const gnode *n = o->node;
        tc_value_info *v = &os[k];
        const ast_type *t = NULL;
        if (o->inout_param >= 0) {
            if (af && o->inout_param < af->nparams)
                t = &af->params[o->inout_param].type;
            v->inout = 1;
        } else if (af && !derived && result < af->nresults) {
            t = &af->results[result++].type;
        }
        v->name = o->name;
        describe_type(v, n->dtype, t);
        v->rank = n->rank;
        v->dims = dims_text(a, n->rank, n->shape);
        v->star = n->rank == 1 && strcmp(v->dims[0], "*") == 0;
    }
    info->nparams = (size_t)f->nparams;
    info->params = ps;
    info->noutputs = (size_t)f->noutputs;
    info->outputs = os;
}

/* The description of f, made once and kept in p. */
static tc_status describe(tc_program *p, const gfn *f, bool bound, const tc_function_info **out)
{
    for (api_desc *d = p->descs; d; d = d->next)
        if (d->f == f && d->bound == bound) {
            *out = &d->info;
            return TC_OK;
        }
    api_desc *d = ARENA_NEW(p->arena, api_desc);
    d->f = f;
    d->bound = bound;
    describe_job j = {p, d};
    tc_status st = diag_protect(&p->ctx->diag, describe_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    d->next = p->descs;
    p->descs = d;
    *out = &d->info;
    return TC_OK;
}

tc_status tc_program_function(tc_program *p, const char *fn, const tc_function_info **info)
{
    if (!p || !info)
        return TC_ERR_INVALID_ARG;
    *info = NULL;
    const gfn *f;
    tc_status st = api_entry(p, fn, &f);
    return st == TC_OK ? describe(p, f, false, info) : st;
}

tc_status api_entry_dtypes(tc_program *p, const char *who, const char *fn, const tc_arg *dtypes,
                           size_t ndtypes, const gfn **f)
{
    *f = NULL;
    api_begin(p->ctx);
    tc_dtypebind *b = ARENA_ARRAY(p->arena, tc_dtypebind, ndtypes + 1);
    for (size_t i = 0; i < ndtypes; i++) {
        const tc_arg *a = &dtypes[i];
        tc_dtype dt = a->kind == TC_ARG_DTYPE && a->v.dtype ? dtype_parse(a->v.dtype) : TC_DT_NONE;
        if (a->kind != TC_ARG_DTYPE || !a->name)
            return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                             "%s: dtypes[%zu] is not a tc_arg_dtype binding", who,
                                             i));
        if (dt == TC_DT_NONE)
            return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                             "%s: dtype variable '%s' bound to '%s', which is "
                                             "not a dtype (bool, i32, i64, f16, bf16, f32, f64)",
                                             who, a->name, a->v.dtype ? a->v.dtype : "(null)"));
        b[i] = (tc_dtypebind){a->name, dt};
    }
    return api_entry_ex(p, fn, b, (int)ndtypes, f);
}

tc_status tc_program_function_ex(tc_program *p, const char *fn, const tc_arg *dtypes,
                                 size_t ndtypes, const tc_function_info **info)
{
    if (!p || !info || (ndtypes && !dtypes))
        return TC_ERR_INVALID_ARG;
    *info = NULL;
    const gfn *f;
    tc_status st = api_entry_dtypes(p, "tc_program_function_ex", fn, dtypes, ndtypes, &f);
    return st == TC_OK ? describe(p, f, true, info) : st;
}

/* --- dtype bindings given as arguments ------------------------------------------------------ */

tc_status api_call_entry(tc_program *p, const char *who, const char *fn, const tc_arg *args,
                         size_t nargs, bool dtypes_only, const gfn **f, api_call_args *rest)
{
    tc_diag *d = &p->ctx->diag;
    tc_loc none = {0};
    *f = NULL;
    rest->args = args;
    rest->nargs = nargs;
    rest->owned = NULL;
    api_begin(p->ctx);
    size_t ndt = 0;
    for (size_t i = 0; args && i < nargs; i++)
        ndt += args[i].kind == TC_ARG_DTYPE;
    if (ndt) {
        /* fn's dtype variables, to check each binding against */
        const char *name = fn ? fn : p->ast->nfns == 1 ? p->ast->fns[0].name : NULL;
        const ast_fn *af = name ? api_params_fn(p, ast_fn_named(p, name)) : NULL;
        for (size_t i = 0; af && i < nargs; i++) {
            const tc_arg *a = &args[i];
            if (a->kind != TC_ARG_DTYPE)
                continue;
            bool known = false;
            for (int k = 0; k < af->nparams && !known && a->name; k++)
                known = af->params[k].type.dtype_var &&
                        strcmp(af->params[k].type.dtype_var, a->name) == 0;
            if (!a->name || !known)
                return api_fail(p->ctx, diag_set(d, TC_ERR_INVALID_ARG, none,
                                                 "%s: argument %zu binds dtype variable '%s', but "
                                                 "function '%s' has no parameter of that dtype",
                                                 who, i, a->name ? a->name : "(null)", af->name));
            for (size_t k = 0; k < i; k++)
                if (args[k].kind == TC_ARG_DTYPE && strcmp(args[k].name, a->name) == 0)
                    return api_fail(p->ctx, diag_set(d, TC_ERR_INVALID_ARG, none,
                                                     "%s: dtype variable '%s' is bound twice "
                                                     "(arguments %zu and %zu)", who, a->name, k, i));
            if (!a->v.dtype || dtype_parse(a->v.dtype) == TC_DT_NONE)
                return api_fail(p->ctx, diag_set(d, TC_ERR_INVALID_ARG, none,
                                                 "%s: dtype variable '%s' bound to '%s', which is "
                                                 "not a dtype (bool, i32, i64, f16, bf16, f32, f64)",
                                                 who, a->name, a->v.dtype ? a->v.dtype : "(null)"));
        }
    }
    if (!ndt)
        return dtypes_only ? api_entry(p, fn, f) : api_entry_args(p, fn, args, nargs, f);
    /* the bindings, then the rest: api_entry_args reads the ones it needs */
    tc_arg *v = malloc((nargs + 1) * sizeof *v);
    if (!v)
        return api_fail(p->ctx, diag_set(d, TC_ERR_NOMEM, none, "out of memory"));
    size_t n = 0;
    for (size_t i = 0; i < nargs; i++)
        if (args[i].kind == TC_ARG_DTYPE)
            v[n++] = args[i];
    for (size_t i = 0; i < nargs; i++)
        if (args[i].kind != TC_ARG_DTYPE)
            v[n++] = args[i];
    tc_status st = api_entry_args(p, fn, v, dtypes_only ? ndt : nargs, f);
    if (st != TC_OK) {
        free(v);
        return st;
    }
    rest->args = v + ndt;
    rest->nargs = nargs - ndt;
    rest->owned = v;
    return TC_OK;
}

void api_call_args_free(api_call_args *rest)
{
    free(rest->owned);
    rest->owned = NULL;
}

/* --- shapes ---------------------------------------------------------------------------------- */

static tc_status room(tc_program *p, const gfn *f, const char *what, int n, size_t cap)
{
    return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                     "tc_shapes: function '%s' has %d %s%s, but there is room "
                                     "for %zu", f->name, n, what, n == 1 ? "" : "s", cap));
}

tc_status tc_shapes(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                    tc_shape *params, size_t nparams, tc_shape *outs, size_t nouts)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    const gfn *f;
    api_call_args rest;
    tc_status st = api_call_entry(p, "tc_shapes", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    /* the sizes given by name (tc_arg_size) apart: they bind, they are no slot */
    size_t nsize = 0;
    for (size_t i = 0; i < rest.nargs; i++)
        nsize += rest.args[i].kind == TC_ARG_SIZE;
    tc_dimbind *extra = calloc(nsize + 1, sizeof *extra);
    tc_arg *slots = calloc(rest.nargs + 1, sizeof *slots);
    size_t ne = 0, ns = 0;
    if (!extra || !slots)
        st = api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    for (size_t i = 0; st == TC_OK && i < rest.nargs; i++) {
        const tc_arg *a = &rest.args[i];
        if (a->kind != TC_ARG_SIZE) {
            slots[ns++] = *a;
            continue;
        }
        if (!a->name || a->v.i < 0)
            st = api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                           "tc_shapes: argument %zu gives %s the size %lld", i,
                                           a->name ? a->name : "(no name)", a->v.i));
        for (size_t k = 0; st == TC_OK && k < ne; k++)
            if (strcmp(extra[k].name, a->name) == 0)
                st = api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                               "tc_shapes: the size %s is given twice", a->name));
        if (st == TC_OK)
            extra[ne++] = (tc_dimbind){a->name, a->v.i};
    }
    if (st == TC_OK && params && nparams < (size_t)f->nparams)
        st = room(p, f, "parameter", f->nparams, nparams);
    if (st == TC_OK && outs && nouts < (size_t)f->noutputs)
        st = room(p, f, "output", f->noutputs, nouts);
    api_host_call c = {0};
    if (st == TC_OK)
        st = api_host_begin(&c, p, f, "tc_shapes", slots, ns, false, extra, (int)ne);
    for (int i = 0; st == TC_OK && params && i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        tc_shape *s = &params[i];
        memset(s, 0, sizeof *s);
        s->dtype = api_dl_dtype(g->dtype);
        const DLTensor *t = c.params[i];
        if (g->scalar) {
            continue;
        } else if (t) { /* as given: a [*] tensor keeps its shape */
            s->ndim = t->ndim;
            memcpy(s->shape, t->shape, (size_t)t->ndim * sizeof *s->shape);
        } else {
            s->ndim = g->rank;
            for (int k = 0; k < g->rank; k++)
                s->shape[k] = bind_eval(g->shape[k], c.binds, c.nbinds);
        }
    }
    for (int k = 0; st == TC_OK && outs && k < f->noutputs; k++) {
        const gnode *n = f->outputs[k].node;
        tc_shape *s = &outs[k];
        memset(s, 0, sizeof *s);
        s->dtype = api_dl_dtype(n->dtype);
        s->ndim = n->rank;
        for (int i = 0; i < n->rank; i++)
            s->shape[i] = bind_eval(n->shape[i], c.binds, c.nbinds);
    }
    api_host_end(&c);
    free(extra);
    free(slots);
    api_call_args_free(&rest);
    return st;
}

tc_status tc_output_shapes(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                           tc_shape *outs, size_t nouts)
{
    if (p && !outs) {
        api_begin(p->ctx);
        return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                         "tc_output_shapes: outs is NULL"));
    }
    return tc_shapes(p, fn, args, nargs, NULL, 0, outs, nouts);
}
