/* bind.c - solve a function's symbolic sizes from its arguments (see bind.h).
 *
 * The solver is deliberately simple, because signatures are: every dim of a
 * parameter's type is an integer literal or a single symbol (docs/language.md),
 * so an argument's dims either bind a symbol, check a symbol bound earlier,
 * or check a literal.  In order:
 *
 *   1. explicit sizes (--shape N=64, or the API's) are applied first, so a
 *      tensor that disagrees is blamed, not the explicit size;
 *   2. each given tensor's rank is checked and its dims bind or check the
 *      symbols, left to right, parameter by parameter, remembering who bound
 *      each symbol for the messages;
 *   3. every symbol of the signature must have a value;
 *   4. dims that are expressions (not produced by today's parser, but legal
 *      in a gfn) are evaluated and checked;
 *   5. the graph's constraints (slice bounds on symbolic dims) are checked.
 *
 * Sizes are checked for sanity: a symbol is at least 1 (the builder proves
 * slices and indices in range assuming that), no dim is larger than
 * BIND_MAX_SIZE, and no tensor has more than BIND_MAX_SIZE elements, so
 * later byte-count arithmetic cannot overflow.
 *
 * Errors are recorded with diag_set (no unwinding: the callers are the CLI
 * and the run-time API, which return a status), located at the parameter,
 * the constraint, or the function for an explicit size.
 */
#include "bind.h"

#include <string.h>

#define BIND_MAX_SIZE ((int64_t)1 << 48)

/* What we know of one symbol. */
typedef struct symval {
    bool bound;
    int64_t value;
    int param, dim;         /* who bound it; param -1 = an explicit size */
} symval;

typedef struct bctx {
    const gfn *f;
    tc_arena *a;
    tc_diag *d;
    symval *vals;           /* parallel to f->syms */
} bctx;

static int sym_index(const gfn *f, const char *name)
{
    for (int i = 0; i < f->nsyms; i++)
        if (f->syms[i] && strcmp(f->syms[i], name) == 0)
            return i;
    return -1;
}

/* The symbol a dim consists of, or NULL if it is anything else.  The
 * canonical text of a dim is the symbol's name exactly when it is one. */
static const char *single_symbol(tc_arena *a, const tc_dim *d)
{
    const char *names[2];
    int n = 0;
    dim_symbols(d, names, &n, 2);
    if (n != 1 || strcmp(dim_str(a, d), names[0]) != 0)
        return NULL;
    return names[0];
}

static const char *shape_text(tc_arena *a, int rank, const int64_t *shape)
{
    tc_buf b;
    buf_init(&b, a);
    buf_putc(&b, '[');
    for (int i = 0; i < rank; i++)
        buf_printf(&b, "%s%lld", i ? ", " : "", (long long)shape[i]);
    buf_putc(&b, ']');
    return buf_str(&b);
}

/* The parameter's declared type, "f32[N, D]" or "f32[*]". */
static const char *param_type(tc_arena *a, const gparam *p)
{
    tc_buf b;
    buf_init(&b, a);
    buf_puts(&b, dtype_name(p->dtype));
    if (p->star) {
        buf_puts(&b, "[*]");
        return buf_str(&b);
    }
    if (p->scalar)
        return buf_str(&b);
    buf_putc(&b, '[');
    for (int i = 0; i < p->rank; i++) {
        if (i)
            buf_puts(&b, ", ");
        dim_print(&b, p->shape[i]);
    }
    buf_putc(&b, ']');
    return buf_str(&b);
}

/* "bound by parameter 'x' dim 1" / "given as N=64" */
static const char *origin(bctx *c, int s)
{
    const symval *v = &c->vals[s];
    if (v->param < 0)
        return arena_printf(c->a, "given as %s=%lld", c->f->syms[s], (long long)v->value);
    return arena_printf(c->a, "bound by parameter '%s' dim %d", c->f->params[v->param].name,
                        v->dim);
}

/* The bindings so far, as tc_dimbind entries for dim_eval. */
static tc_dimbind *current(bctx *c, int *n)
{
    tc_dimbind *b = ARENA_ARRAY(c->a, tc_dimbind, c->f->nsyms > 0 ? c->f->nsyms : 1);
    *n = 0;
    for (int i = 0; i < c->f->nsyms; i++)
        if (c->vals[i].bound)
            b[(*n)++] = (tc_dimbind){c->f->syms[i], c->vals[i].value};
    return b;
}

static tc_status apply_extra(bctx *c, const tc_dimbind *extra, int nextra)
{
    const gfn *f = c->f;
    for (int i = 0; i < nextra; i++) {
        const char *name = extra[i].name ? extra[i].name : "";
        int64_t v = extra[i].value;
        int s = sym_index(f, name);
        if (s < 0) {
            tc_buf b;
            buf_init(&b, c->a);
            for (int k = 0; k < f->nsyms; k++)
                buf_printf(&b, "%s%s", k ? ", " : "", f->syms[k]);
            if (f->nsyms == 0)
                return diag_set(c->d, TC_ERR_INVALID_ARG, f->loc,
                                "'%s' is not a size of function '%s', which has no symbolic sizes",
                                name, f->name);
            return diag_set(c->d, TC_ERR_INVALID_ARG, f->loc,
                            "'%s' is not a size of function '%s' (its sizes are %s)", name, f->name,
                            buf_str(&b));
        }
        if (v < 1 || v > BIND_MAX_SIZE)
            return diag_set(c->d, TC_ERR_INVALID_ARG, f->loc,
                            "size %s=%lld is out of range: sizes must be between 1 and 2^48",
                            name, (long long)v);
        if (c->vals[s].bound && c->vals[s].value != v)
            return diag_set(c->d, TC_ERR_INVALID_ARG, f->loc, "size %s is given twice: %lld and %lld",
                            name, (long long)c->vals[s].value, (long long)v);
        c->vals[s] = (symval){true, v, -1, -1};
    }
    return TC_OK;
}

static tc_status bind_param(bctx *c, int pi, const bind_arg *arg)
{
    const gparam *p = &c->f->params[pi];
    if (arg->rank != p->rank) {
        if (p->star)
            return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                            "parameter '%s' has rank %d, expected 1 (a %s parameter is passed "
                            "flattened)", p->name, arg->rank, param_type(c->a, p));
        return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc, "parameter '%s' has rank %d, expected %d (%s)",
                        p->name, arg->rank, p->rank, param_type(c->a, p));
    }
    const char *shape = shape_text(c->a, arg->rank, arg->shape);
    int64_t count = 1;
    for (int k = 0; k < p->rank; k++) {
        int64_t v = arg->shape[k];
        if (v < 0 || v > BIND_MAX_SIZE)
            return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                            "parameter '%s' has shape %s: dim %d is out of range", p->name, shape, k);
        if (v != 0 && count > BIND_MAX_SIZE / v)
            return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                            "parameter '%s' has shape %s: more than 2^48 elements", p->name, shape);
        count *= v;
        const tc_dim *dim = p->shape[k];
        int64_t want;
        if (dim_is_const(dim, &want)) {
            if (v != want)
                return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                                "parameter '%s' has shape %s, but its dim %d must be %lld (%s)",
                                p->name, shape, k, (long long)want, param_type(c->a, p));
            continue;
        }
        const char *sym = single_symbol(c->a, dim);
        int s = sym ? sym_index(c->f, sym) : -1;
        if (s < 0)
            continue; /* an expression: checked once every symbol is known */
        if (!c->vals[s].bound) {
            if (v < 1)
                return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                                "parameter '%s' has shape %s, but its dim %d (%s) must be at least 1",
                                p->name, shape, k, sym);
            c->vals[s] = (symval){true, v, pi, k};
        } else if (c->vals[s].value != v) {
            return diag_set(c->d, TC_ERR_INVALID_ARG, p->loc,
                            "parameter '%s' has shape %s, but its dim %d is %s = %lld (%s)", p->name,
                            shape, k, sym, (long long)c->vals[s].value, origin(c, s));
        }
    }
    return TC_OK;
}

/* The first parameter whose type mentions symbol s, or -1. */
static int param_using(const gfn *f, const char *s)
{
    for (int i = 0; i < f->nparams; i++)
        for (int k = 0; k < f->params[i].rank; k++) {
            const char *names[TC_MAX_RANK * 2];
            int n = 0;
            dim_symbols(f->params[i].shape[k], names, &n, TC_MAX_RANK * 2);
            for (int j = 0; j < n; j++)
                if (strcmp(names[j], s) == 0)
                    return i;
        }
    return -1;
}

/* " (N = 4, D = 8)": the values of the symbols in d, for messages about a
 * dim that is not a single symbol; "" for one that is. */
static const char *symbol_values(bctx *c, const tc_dim *d)
{
    if (single_symbol(c->a, d))
        return "";
    const char *names[16];
    int n = 0;
    dim_symbols(d, names, &n, 16);
    if (n == 0)
        return "";
    tc_buf b;
    buf_init(&b, c->a);
    buf_puts(&b, " (");
    for (int i = 0; i < n; i++) {
        int s = sym_index(c->f, names[i]);
        buf_printf(&b, "%s%s = %lld", i ? ", " : "", names[i],
                   s >= 0 ? (long long)c->vals[s].value : 0LL);
    }
    buf_putc(&b, ')');
    return buf_str(&b);
}

tc_status graph_bind(const gfn *f, const bind_arg *args, const tc_dimbind *extra, int nextra,
                     tc_arena *a, tc_diag *d, tc_dimbind **out, int *nout)
{
    bctx c = {f, a, d, ARENA_ARRAY(a, symval, f->nsyms > 0 ? f->nsyms : 1)};
    if (out)
        *out = NULL;
    if (nout)
        *nout = 0;
    tc_status st = apply_extra(&c, extra, nextra);
    if (st != TC_OK)
        return st;

    for (int i = 0; args && i < f->nparams; i++)
        if (!f->params[i].scalar && args[i].given && (st = bind_param(&c, i, &args[i])) != TC_OK)
            return st;

    for (int s = 0; s < f->nsyms; s++) {
        if (c.vals[s].bound)
            continue;
        int p = param_using(f, f->syms[s]);
        if (p < 0)
            return diag_set(d, TC_ERR_INVALID_ARG, f->loc, "size of %s is not known: pass --shape %s=...",
                            f->syms[s], f->syms[s]);
        return diag_set(d, TC_ERR_INVALID_ARG, f->params[p].loc,
                        "size of %s is not known: pass a tensor for parameter '%s' or --shape %s=...",
                        f->syms[s], f->params[p].name, f->syms[s]);
    }

    int nb;
    tc_dimbind *b = current(&c, &nb);

    /* Dims that are expressions of the symbols. */
    for (int i = 0; args && i < f->nparams; i++) {
        const gparam *p = &f->params[i];
        if (p->scalar || !args[i].given)
            continue;
        for (int k = 0; k < p->rank; k++) {
            if (dim_is_const(p->shape[k], NULL) || single_symbol(a, p->shape[k]))
                continue;
            int64_t v;
            const char *unb = NULL;
            if (!dim_eval(p->shape[k], b, nb, &v, &unb))
                return diag_set(d, TC_ERR_INVALID_ARG, p->loc,
                                "parameter '%s' dim %d uses %s, which is not a size of '%s'",
                                p->name, k, unb ? unb : "?", f->name);
            if (v != args[i].shape[k])
                return diag_set(d, TC_ERR_INVALID_ARG, p->loc,
                                "parameter '%s' has shape %s, but its dim %d is %s = %lld%s", p->name,
                                shape_text(a, args[i].rank, args[i].shape), k,
                                dim_str(a, p->shape[k]), (long long)v, symbol_values(&c, p->shape[k]));
        }
    }

    for (int i = 0; i < f->ncons; i++) {
        const gconstraint *k = &f->cons[i];
        int64_t v;
        const char *unb = NULL;
        if (!dim_eval(k->dim, b, nb, &v, &unb))
            return diag_set(d, TC_ERR_INVALID_ARG, k->loc,
                            "a size here depends on %s, which is not a size of '%s'",
                            unb ? unb : "?", f->name);
        if (v < k->min) {
            const char *ds = dim_str(a, k->dim);
            if (k->what)
                return diag_set(d, TC_ERR_INVALID_ARG, k->loc,
                                "%s is %lld%s, but it must be at least %lld here (%s)", ds,
                                (long long)v, symbol_values(&c, k->dim), (long long)k->min, k->what);
            return diag_set(d, TC_ERR_INVALID_ARG, k->loc, "%s is %lld%s, but it must be at least %lld here",
                            ds, (long long)v, symbol_values(&c, k->dim), (long long)k->min);
        }
    }

    if (out)
        *out = b;
    if (nout)
        *nout = nb;
    return TC_OK;
}

int64_t bind_eval(const tc_dim *dim, const tc_dimbind *b, int nb)
{
    int64_t v;
    if (!dim_eval(dim, b, nb, &v, NULL))
        return -1; /* a symbol without a value: the caller broke the contract */
    return v;
}
