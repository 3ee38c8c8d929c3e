/* run.c - `tensorc run`: evaluate one function on given or random inputs.
 *
 * The steps, in order (each failure returns the exit status interfaces.md
 * gives it: 2 usage, 1 the program or its inputs, 3 the environment):
 *
 *   1. options: --fn --shape --input --output --device --seed --dtype
 *   2. the device: only the CPU reference interpreter is built yet
 *   3. compile FILE, pick the entry function (--fn, or the only one) and
 *      build it with its dtype variables bound by --dtype (else f32)
 *   4. read each --input: a .npy for a tensor, a number or a 0-d .npy for a
 *      scalar; check its dtype against the parameter
 *   5. bind symbolic dims (graph_bind) from the inputs' shapes and --shape
 *   6. make up every input not given: seeded random tensors (fill.c),
 *      scalars from their default or seeded random
 *   7. run the reference interpreter
 *   8. write each --output as .npy; print the rest as summaries (show.c)
 *
 * [*] parameters: at an entry point every [*] tensor is rank 1 with the
 * element count "*" (docs/semantics.md), so a given .npy is flattened, and an
 * output with that element count is given back the shape of the input it
 * came from (an inout parameter's own, else the first [*] input's), so
 * `run adamw.tc --input p=p.npy` with p of shape (3, 4) writes p back as
 * (3, 4).
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api_internal.h"
#include "npy.h"

typedef struct {
    const char *name, *value;
} kv;

typedef struct {
    const char *file, *fn, *device;
    kv *inputs, *outputs;
    int ninputs, noutputs;
    tc_dtypebind *dtypes;   /* --dtype: the entry's dtype variables */
    int ndtypes;
    tc_dimbind *shapes;
    int nshapes, capshapes;
    uint64_t seed;
    bool check, bench;
} run_opts;

/* --- step 1: options -------------------------------------------------------- */

static bool split_kv(const char *opt, const char *arg, kv *out)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        usage_error("%s expects NAME=VALUE, got '%s'", opt, arg);
        return false;
    }
    out->name = strndup(arg, (size_t)(eq - arg));
    out->value = eq + 1;
    return out->name != NULL;
}

static bool valid_sym(const char *s)
{
    if (strcmp(s, "*") == 0)
        return true;
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static bool parse_i64(const char *s, int64_t *v)
{
    if (!*s || *s == ' ')
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*end || errno)
        return false;
    *v = x;
    return true;
}

/* One NAME=SIZE of --shape into o->shapes; false after a usage error. */
static bool add_shape(run_opts *o, const char *arg, char *item)
{
    char *eq = strchr(item, '=');
    int64_t v;
    if (!eq)
        return usage_error("--shape expects NAME=SIZE[,NAME=SIZE...], got '%s'", arg), false;
    *eq = 0;
    if (!valid_sym(item))
        return usage_error("--shape: '%s' is not a dim name", item), false;
    if (!parse_i64(eq + 1, &v) || v < 0)
        return usage_error("--shape %s=%s: the size must be a non-negative integer", item, eq + 1),
               false;
    for (int i = 0; i < o->nshapes; i++)
        if (strcmp(o->shapes[i].name, item) == 0)
            return usage_error("--shape: %s is given twice", item), false;
    if (o->nshapes == o->capshapes) {
        int cap = o->capshapes ? 2 * o->capshapes : 8;
        tc_dimbind *s = realloc(o->shapes, (size_t)cap * sizeof *s);
        if (!s)
            return fail(EXIT_USAGE, "out of memory"), false;
        o->shapes = s;
        o->capshapes = cap;
    }
    if (!(o->shapes[o->nshapes].name = strdup(item)))
        return fail(EXIT_USAGE, "out of memory"), false;
    o->shapes[o->nshapes++].value = v;
    return true;
}

/* --shape N=64,D=128 (may be given several times). */
static bool parse_shapes(run_opts *o, const char *arg)
{
    char *copy = strdup(arg);
    if (!copy)
        return false;
    bool ok = true;
    int n = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save), n++)
        ok = add_shape(o, arg, item);
    if (ok && n == 0)
        ok = (usage_error("--shape expects NAME=SIZE[,NAME=SIZE...], got '%s'", arg), false);
    free(copy);
    return ok;
}

static bool add_kv(const char *opt, const char *arg, kv *list, int *n)
{
    kv e;
    if (!split_kv(opt, arg, &e))
        return false;
    for (int i = 0; i < *n; i++)
        if (strcmp(list[i].name, e.name) == 0) {
            usage_error("%s %s is given twice", opt, e.name);
            free((char *)e.name);
            return false;
        }
    list[(*n)++] = e;
    return true;
}

static void free_opts(run_opts *o)
{
    for (int i = 0; i < o->ninputs; i++)
        free((char *)o->inputs[i].name);
    for (int i = 0; i < o->noutputs; i++)
        free((char *)o->outputs[i].name);
    for (int i = 0; i < o->nshapes; i++)
        free((char *)o->shapes[i].name);
    free(o->inputs);
    free(o->outputs);
    free(o->dtypes);
    free(o->shapes);
}

/* Returns EXIT_OK, or EXIT_USAGE with the error printed. */
static int parse_opts(int argc, char **argv, run_opts *o)
{
    o->device = "cpu";
    o->inputs = calloc((size_t)argc, sizeof(kv));
    o->outputs = calloc((size_t)argc, sizeof(kv));
    o->dtypes = calloc((size_t)argc + 1, sizeof *o->dtypes);
    if (!o->inputs || !o->outputs || !o->dtypes)
        return fail(EXIT_ERROR, "out of memory");
    bool bad = false, dashdash = false;
    for (int i = 0; i < argc && !bad; i++) {
        const char *a = argv[i], *v;
        if (dashdash || a[0] != '-' || a[1] == 0) {
            if (o->file)
                return usage_error("unexpected argument '%s' (FILE is '%s')", a, o->file);
            o->file = a;
        } else if (strcmp(a, "--") == 0) {
            dashdash = true;
        } else if (opt_value("--fn", argc, argv, &i, &v, &bad)) {
            o->fn = v;
        } else if (opt_value("--shape", argc, argv, &i, &v, &bad)) {
            if (!bad && !parse_shapes(o, v))
                return EXIT_USAGE;
        } else if (opt_value("--input", argc, argv, &i, &v, &bad)) {
            if (!bad && !add_kv("--input", v, o->inputs, &o->ninputs))
                return EXIT_USAGE;
        } else if (opt_value("--output", argc, argv, &i, &v, &bad)) {
            if (!bad && !add_kv("--output", v, o->outputs, &o->noutputs))
                return EXIT_USAGE;
        } else if (opt_value("--dtype", argc, argv, &i, &v, &bad)) {
            if (!bad && !opt_dtype(v, o->dtypes, &o->ndtypes))
                return EXIT_USAGE;
        } else if (opt_value("--device", argc, argv, &i, &v, &bad)) {
            if (!bad && strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0)
                return usage_error("--device must be cpu or cuda, not '%s'", v);
            o->device = v;
        } else if (opt_value("--seed", argc, argv, &i, &v, &bad)) {
            char *end;
            errno = 0;
            if (!bad && (!*v || *v == '-' || *v == ' ' ||
                         (o->seed = strtoull(v, &end, 10), *end || errno)))
                return usage_error("--seed must be a non-negative integer, not '%s'", v);
        } else if (opt_flag("--check", argc, argv, &i, &bad)) {
            o->check = true;
        } else if (opt_flag("--bench", argc, argv, &i, &bad)) {
            o->bench = true;
        } else if (!bad) {
            return usage_error("unknown option '%s' for 'tensorc run'", a);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (!o->file)
        return usage_error("'tensorc run' needs a FILE");
    return EXIT_OK;
}

/* --- helpers ------------------------------------------------------------------- */

/* "f32[N, D]", "f32[*]" or "f32" for messages. */
static const char *param_type(tc_program *p, const gparam *g)
{
    tc_buf b;
    buf_init(&b, p->arena);
    buf_puts(&b, dtype_name(g->dtype));
    if (g->star) {
        buf_puts(&b, "[*]");
    } else if (!g->scalar) {
        buf_putc(&b, '[');
        for (int i = 0; i < g->rank; i++) {
            if (i)
                buf_puts(&b, ", ");
            dim_print(&b, g->shape[i]);
        }
        buf_putc(&b, ']');
    }
    return buf_str(&b);
}

static const char *param_list(tc_program *p, const gfn *f)
{
    tc_buf b;
    buf_init(&b, p->arena);
    for (int i = 0; i < f->nparams; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", f->params[i].name);
    return f->nparams ? buf_str(&b) : "none";
}

static const char *output_list(tc_program *p, const gfn *f)
{
    tc_buf b;
    buf_init(&b, p->arena);
    for (int i = 0; i < f->noutputs; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", f->outputs[i].name);
    return f->noutputs ? buf_str(&b) : "none";
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The value of a scalar written on the command line, for dtype dt. */
static bool parse_scalar(const char *s, tc_dtype dt, double *v)
{
    if (dt == TC_BOOL) {
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1"))
            return *v = 1, true;
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0"))
            return *v = 0, true;
        return false;
    }
    if (dtype_is_int(dt)) {
        int64_t x;
        if (!parse_i64(s, &x))
            return false;
        if (dt == TC_I32 && (x < INT32_MIN || x > INT32_MAX))
            return false;
        *v = (double)x;
        return true;
    }
    if (!*s || *s == ' ')
        return false;
    char *end;
    double x = strtod(s, &end);
    if (*end)
        return false;
    *v = dtype_round(dt, x);
    return true;
}

static void print_diag(tc_program *p)
{
    fputs(tc_errmsg(p->ctx), stderr);
}

/* --- steps 4-8 ------------------------------------------------------------------ */

typedef struct {
    const run_opts *o;
    tc_program *p;
    const gfn *f;
    ref_tensor *args;         /* f->nparams */
    bool *given;              /* f->nparams: from --input */
    int64_t (*orig)[TC_MAX_RANK + 1]; /* [*] inputs: original rank, then shape */
    ref_tensor *outs;         /* f->noutputs */
} run_state;

/* Step 4 for one --input. */
static int load_input(run_state *s, const kv *in)
{
    tc_program *p = s->p;
    const gfn *f = s->f;
    tc_diag *d = &p->ctx->diag;
    int k = -1;
    for (int i = 0; i < f->nparams && k < 0; i++)
        if (strcmp(f->params[i].name, in->name) == 0)
            k = i;
    if (k < 0)
        return fail(EXIT_ERROR, "--input %s: function '%s' has no parameter '%s' (parameters: %s)",
                    in->name, f->name, in->name, param_list(p, f));
    const gparam *g = &f->params[k];
    ref_tensor *t = &s->args[k];
    s->given[k] = true;

    if (g->scalar) {
        double v;
        if (!ends_with(in->value, ".npy")) {
            if (!parse_scalar(in->value, g->dtype, &v))
                return fail(EXIT_ERROR, "--input %s=%s: '%s' is not %s %s value (parameter '%s' "
                            "is %s)", in->name, in->value, in->value,
                            g->dtype == TC_BOOL || g->dtype == TC_BF16 ? "a" : "an",
                            dtype_name(g->dtype), in->name, param_type(p, g));
        } else {
            ref_tensor r;
            if (npy_read(in->value, &r, d) != TC_OK) {
                fputs(d->msg, stderr);
                return EXIT_ERROR;
            }
            int64_t n = ref_numel(&r);
            v = n == 1 ? r.data[0] : 0;
            ref_free(&r);
            if (n != 1)
                return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a scalar (%s), but the "
                            "file holds %lld values", in->name, in->value, in->name,
                            param_type(p, g), (long long)n);
            /* a 0-d array of any numeric type will do: np.save('lr.npy', 1e-3) is f64 */
            v = dtype_round(g->dtype, v);
        }
        if (!ref_alloc(t, g->dtype, 0, NULL))
            return fail(EXIT_ERROR, "out of memory");
        t->data[0] = v;
        return EXIT_OK;
    }

    struct stat st;
    double num;
    if (stat(in->value, &st) != 0 && parse_scalar(in->value, TC_F64, &num))
        return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a tensor (%s): pass a .npy file",
                    in->name, in->value, in->name, param_type(p, g));
    if (npy_read(in->value, t, d) != TC_OK) {
        fputs(d->msg, stderr);
        return EXIT_ERROR;
    }
    if (t->dtype != g->dtype) {
        if (g->dtype == TC_BF16 && t->dtype == TC_F32) {
            /* bf16 travels as f32 (README): round each value to bf16 */
            int64_t n = ref_numel(t);
            for (int64_t i = 0; i < n; i++)
                t->data[i] = dtype_round(TC_BF16, t->data[i]);
            t->dtype = TC_BF16;
        } else {
            static const char *np_names[TC_DT_COUNT] = {
                [TC_F32] = "float32", [TC_F64] = "float64", [TC_F16] = "float16",
                [TC_BF16] = "float32", [TC_I32] = "int32", [TC_I64] = "int64", [TC_BOOL] = "bool_"};
            return fail(EXIT_ERROR, "--input %s: '%s' holds %s values, but parameter '%s' is %s "
                        "(convert with a.astype(np.%s))", in->name, in->value,
                        dtype_name(t->dtype), in->name, param_type(p, g), np_names[g->dtype]);
        }
    }
    if (g->star) {
        /* remember the shape, then flatten: an entry's [*] is rank 1 */
        s->orig[k][0] = t->rank;
        for (int i = 0; i < t->rank; i++)
            s->orig[k][i + 1] = t->shape[i];
        int64_t n = ref_numel(t);
        t->rank = 1;
        t->shape[0] = n;
    }
    return EXIT_OK;
}

/* Steps 5 and 6: bind dims, then make up what was not given. */
static int bind_and_fill(run_state *s, tc_dimbind **binds, int *nb)
{
    const run_opts *o = s->o;
    const gfn *f = s->f;
    tc_program *p = s->p;
    bind_arg *ba = calloc((size_t)(f->nparams ? f->nparams : 1), sizeof *ba);
    if (!ba)
        return fail(EXIT_ERROR, "out of memory");
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].scalar || !s->given[i])
            continue;
        ba[i].given = true;
        ba[i].rank = s->args[i].rank;
        memcpy(ba[i].shape, s->args[i].shape, sizeof ba[i].shape);
    }
    tc_status st = api_bind(p, f, ba, o->shapes, o->nshapes, binds, nb);
    free(ba);
    if (st != TC_OK) {
        print_diag(p);
        return EXIT_ERROR;
    }
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (s->given[i])
            continue;
        rng r = rng_for(o->seed, g->name);
        if (g->scalar) {
            if (!ref_alloc(&s->args[i], g->dtype, 0, NULL))
                return fail(EXIT_ERROR, "out of memory");
            s->args[i].data[0] = g->has_default ? dtype_round(g->dtype, g->def)
                                                : random_scalar(&r, g->dtype);
            continue;
        }
        int64_t shape[TC_MAX_RANK];
        for (int k = 0; k < g->rank; k++)
            shape[k] = bind_eval(g->shape[k], *binds, *nb);
        if (!ref_alloc(&s->args[i], g->dtype, g->rank, shape))
            return fail(EXIT_ERROR, "parameter '%s': cannot allocate a tensor of that size", g->name);
        fill_tensor(&r, &s->args[i]);
    }
    return EXIT_OK;
}

/* Step 8's reshape of [*] outputs back to their input's shape. */
static void unflatten(run_state *s, int k)
{
    const gfn *f = s->f;
    ref_tensor *t = &s->outs[k];
    if (t->rank != 1)
        return;
    int from = -1;
    int ip = f->outputs[k].inout_param;
    if (ip >= 0 && f->params[ip].star && s->given[ip])
        from = ip;
    for (int i = 0; i < f->nparams && from < 0; i++)
        if (f->params[i].star && s->given[i])
            from = i;
    if (from < 0)
        return;
    int rank = (int)s->orig[from][0];
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= s->orig[from][i + 1];
    if (n != t->shape[0])
        return;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->shape[i] = s->orig[from][i + 1];
}

static int run_fn(run_state *s)
{
    const run_opts *o = s->o;
    const gfn *f = s->f;
    tc_program *p = s->p;
    tc_diag *d = &p->ctx->diag;

    /* --output names must be outputs; check before doing any work */
    int *out_of = calloc((size_t)(f->noutputs ? f->noutputs : 1), sizeof(int));
    if (!out_of)
        return fail(EXIT_ERROR, "out of memory");
    for (int k = 0; k < f->noutputs; k++)
        out_of[k] = -1;
    for (int i = 0; i < o->noutputs; i++) {
        int k = -1;
        for (int j = 0; j < f->noutputs && k < 0; j++)
            if (strcmp(f->outputs[j].name, o->outputs[i].name) == 0)
                k = j;
        if (k < 0) {
            free(out_of);
            return fail(EXIT_ERROR, "--output %s: function '%s' has no output '%s' (outputs: %s)",
                        o->outputs[i].name, f->name, o->outputs[i].name, output_list(p, f));
        }
        out_of[k] = i;
    }

    int rc = EXIT_OK;
    for (int i = 0; i < o->ninputs && rc == EXIT_OK; i++)
        rc = load_input(s, &o->inputs[i]);
    tc_dimbind *binds = NULL;
    int nb = 0;
    if (rc == EXIT_OK)
        rc = bind_and_fill(s, &binds, &nb);
    if (rc == EXIT_OK) {
        if (api_ref_run(p, f, binds, nb, s->args, s->outs) != TC_OK) {
            print_diag(p);
            rc = EXIT_ERROR;
        }
    }
    for (int k = 0; k < f->noutputs && rc == EXIT_OK; k++) {
        unflatten(s, k);
        if (out_of[k] >= 0) {
            if (npy_write(o->outputs[out_of[k]].value, &s->outs[k], d) != TC_OK) {
                fputs(d->msg, stderr);
                rc = EXIT_ERROR;
            }
        } else {
            show_tensor(stdout, f->outputs[k].name, &s->outs[k]);
        }
    }
    free(out_of);
    return rc;
}

/* Steps 3-8, given a compiled program. */
static int run_program(const run_opts *o, tc_program *p)
{
    if (!o->fn && p->ast->nfns != 1) {
        if (p->ast->nfns == 0)
            return fail(EXIT_ERROR, "%s defines no functions", o->file);
        tc_buf b;
        buf_init(&b, p->arena);
        for (int i = 0; i < p->ast->nfns; i++)
            buf_printf(&b, "%s%s", i ? ", " : "", p->ast->fns[i].name);
        return usage_error("%s defines %d functions (%s): choose one with --fn", o->file,
                           p->ast->nfns, buf_str(&b));
    }
    const gfn *f;
    if (api_entry_ex(p, o->fn, o->dtypes, o->ndtypes, &f) != TC_OK) {
        print_diag(p);
        return EXIT_ERROR;
    }

    int rc;
    run_state s = {o, p, f, NULL, NULL, NULL, NULL};
    size_t np = (size_t)(f->nparams ? f->nparams : 1), no = (size_t)(f->noutputs ? f->noutputs : 1);
    s.args = calloc(np, sizeof *s.args);
    s.given = calloc(np, sizeof *s.given);
    s.orig = calloc(np, sizeof *s.orig);
    s.outs = calloc(no, sizeof *s.outs);
    if (!s.args || !s.given || !s.orig || !s.outs)
        rc = fail(EXIT_ERROR, "out of memory");
    else
        rc = run_fn(&s);
    for (int i = 0; s.args && i < f->nparams; i++)
        ref_free(&s.args[i]);
    for (int k = 0; s.outs && k < f->noutputs; k++)
        ref_free(&s.outs[k]);
    free(s.args);
    free(s.given);
    free(s.orig);
    free(s.outs);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_opts o = {0};
    int rc = parse_opts(argc, argv, &o);
    if (rc == EXIT_OK && (strcmp(o.device, "cuda") == 0 || o.check || o.bench))
        rc = fail(EXIT_ENV, "%s: the CUDA runtime is not built yet (use --device=cpu%s)",
                  o.check ? "--check" : o.bench ? "--bench" : "--device=cuda",
                  o.check || o.bench ? " without --check or --bench" : "");
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    if (rc == EXIT_OK && tc_ctx_create(&ctx) != TC_OK)
        rc = fail(EXIT_ERROR, "out of memory");
    if (rc == EXIT_OK && tc_compile_file(ctx, o.file, &p) != TC_OK) {
        fputs(tc_errmsg(ctx), stderr);
        rc = EXIT_ERROR;
    }
    if (rc == EXIT_OK)
        rc = run_program(&o, p);
    tc_program_free(p);
    tc_ctx_free(ctx);
    free_opts(&o);
    return rc;
}
