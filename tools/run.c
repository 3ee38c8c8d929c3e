/* run.c - `tensorc run`: evaluate one function on given or random inputs.
 *
 * The steps, in order (each failure returns the exit status interfaces.md
 * gives it: 2 usage, 1 the program or its inputs, 3 the environment):
 *
 *   1. options: --fn --shape --input --output --device --seed --dtype
 *      --groups --check --bench --verbose
 *   2. the device: cuda when --device=cuda, or when --device is not given
 *      and a GPU is there (the driver opens); otherwise the CPU reference
 *      interpreter, with a one-line note when --device was not given.
 *      --device=cuda, --check or --bench without a GPU exit 3.
 *   3. compile FILE, pick the entry function (--fn, or the only one) and
 *      build it with its dtype variables bound by --dtype (else f32)
 *   4. read each --input: a .npy for a tensor, a number or a 0-d .npy for a
 *      scalar; check its dtype against the parameter
 *   5. bind symbolic dims (graph_bind) from the inputs' shapes and --shape
 *   6. make up every input not given: seeded random tensors (fill.c),
 *      scalars from their default or seeded random
 *   7. cpu: run the reference interpreter.  cuda: upload the inputs,
 *      allocate the outputs (poisoned with 0xff bytes, so an element no
 *      kernel writes shows up), run the generated kernels through api_run
 *      (what tc_run does), download; --check also runs the interpreter on
 *      the same inputs and compares; --bench then times each step
 *   8. write each --output as .npy; print the rest as summaries (show.c)
 *
 * The inputs are made on the host in both cases, from the same seeds, so a
 * cuda run and a cpu run of one command line see the same numbers, and
 * --check compares like with like.
 *
 * --groups (or --input lists) runs an elementwise function over tensor
 * groups in one launch: options are parsed here, then run_program hands
 * over to run_groups.c, which drives the helpers below once per group.
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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api_internal.h"
#include "api_run.h"
#include "codegen/plan.h"
#include "npy.h"
#include "rt.h"

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

/* --groups 1000,0,4097,3: one element count per group. */
static int parse_groups(run_opts *o, const char *arg)
{
    if (o->group_sizes)
        return usage_error("--groups is given twice");
    size_t n = 1;
    for (const char *c = arg; *c; c++)
        n += *c == ',';
    if (n > TC_MAX_GROUPS)
        return usage_error("--groups lists %zu groups; one run takes at most %d", n, TC_MAX_GROUPS);
    if (!(o->group_sizes = calloc(n, sizeof *o->group_sizes)))
        return fail(EXIT_ERROR, "out of memory");
    const char *item = arg;
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(item, ",");
        char num[32];
        int64_t v;
        bool ok = len > 0 && len < sizeof num;
        if (ok) {
            memcpy(num, item, len);
            num[len] = 0;
            ok = parse_i64(num, &v) && v >= 0;
        }
        if (!ok)
            return usage_error("--groups %s: '%.*s' is not a size (one element count per group, "
                               "each a non-negative integer: --groups 1000,0,4097)", arg, (int)len,
                               item);
        o->group_sizes[i] = v;
        item += len + 1;
    }
    o->ngroups = (int)n;
    return EXIT_OK;
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
    free(o->group_sizes);
    free((char *)o->no_gpu);
}

/* Returns EXIT_OK, or EXIT_USAGE with the error printed. */
static int parse_opts(int argc, char **argv, run_opts *o)
{
    o->device = NULL; /* not given: cuda when there is a GPU */
    o->inputs = calloc((size_t)argc, sizeof(kv));
    o->outputs = calloc((size_t)argc, sizeof(kv));
    o->dtypes = calloc((size_t)argc + 1, sizeof *o->dtypes);
    if (!o->inputs || !o->outputs || !o->dtypes)
        return fail(EXIT_ERROR, "out of memory");
    bool bad = false, dashdash = false;
    int rc;
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
        } else if (opt_value("--groups", argc, argv, &i, &v, &bad)) {
            if (!bad && (rc = parse_groups(o, v)) != EXIT_OK)
                return rc;
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
        } else if (opt_flag("--random", argc, argv, &i, &bad)) {
            o->random = true;
        } else if (opt_flag("--check", argc, argv, &i, &bad)) {
            o->check = true;
        } else if (opt_flag("--bench", argc, argv, &i, &bad)) {
            o->bench = true;
        } else if (opt_flag("--json", argc, argv, &i, &bad)) {
            o->json = true;
        } else if (opt_flag("--verbose", argc, argv, &i, &bad)) {
            o->verbose = true;
        } else if (opt_flag("--fast-math", argc, argv, &i, &bad)) {
            o->fast_math = true;
        } else if (opt_flag("--lineinfo", argc, argv, &i, &bad)) {
            o->line_info = true;
        } else if (!bad) {
            return unknown_option(a);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (!o->file)
        return usage_error("'tensorc run' needs a FILE");
    if (o->json && !o->bench)
        return usage_error("--json goes with --bench (its timings as JSON, docs/json.md)");
    /* a comma makes an --input or --output a list, one file per group (run_groups.c) */
    bool in_list = false;
    for (int i = 0; i < o->ninputs; i++)
        in_list |= strchr(o->inputs[i].value, ',') != NULL;
    for (int i = 0; i < o->noutputs && !o->group_sizes && !in_list; i++)
        if (strchr(o->outputs[i].value, ','))
            return usage_error("--output %s lists files for groups, but neither --groups nor an "
                               "--input list says how many groups there are", o->outputs[i].name);
    o->grouped = o->group_sizes || in_list;
    if (o->grouped && o->nshapes)
        return usage_error("--shape does not go with %s: each group's size comes from --groups or "
                           "its --input files", o->group_sizes ? "--groups" : "--input lists");
    return EXIT_OK;
}

/* --- helpers ------------------------------------------------------------------- */

const char *param_type(tc_program *p, const gparam *g)
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
/* s as a value of t's dtype into t's element 0: integers exactly (an i64
 * beyond 2^53 has no double), floats rounded. */
static bool parse_scalar(const char *s, ref_tensor *t)
{
    tc_dtype dt = t->dtype;
    if (dt == TC_BOOL) {
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1"))
            return t->idata[0] = 1, true;
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0"))
            return t->idata[0] = 0, true;
        return false;
    }
    if (dtype_is_int(dt)) {
        int64_t x;
        if (!parse_i64(s, &x))
            return false;
        if (dt == TC_I32 && (x < INT32_MIN || x > INT32_MAX))
            return false;
        t->idata[0] = x;
        return true;
    }
    if (!*s || *s == ' ')
        return false;
    char *end;
    double x = strtod(s, &end);
    if (*end)
        return false;
    t->data[0] = dtype_round(dt, x);
    return true;
}

void print_diag(tc_program *p)
{
    fputs(tc_errmsg(p->ctx), stderr);
}

int output_slots(const run_opts *o, tc_program *p, const gfn *f, int *out_of)
{
    for (int k = 0; k < f->noutputs; k++)
        out_of[k] = -1;
    for (int i = 0; i < o->noutputs; i++) {
        int k = -1;
        for (int j = 0; j < f->noutputs && k < 0; j++)
            if (strcmp(f->outputs[j].name, o->outputs[i].name) == 0)
                k = j;
        if (k < 0)
            return fail(EXIT_ERROR, "--output %s: function '%s' has no output '%s' (outputs: %s)",
                        o->outputs[i].name, f->name, o->outputs[i].name, output_list(p, f));
        out_of[k] = i;
    }
    return EXIT_OK;
}

/* --- steps 4-8 ------------------------------------------------------------------ */

int load_input(run_state *s, const kv *in)
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
        if (!ref_alloc(t, g->dtype, 0, NULL))
            return fail(EXIT_ERROR, "out of memory");
        if (!ends_with(in->value, ".npy")) {
            if (!parse_scalar(in->value, t))
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
            /* a 0-d array of any numeric type will do: np.save('lr.npy', 1e-3) is
             * f64; converted as a cast would (a float to an integer saturates) */
            if (n == 1)
                ref_convert(t, 0, &r, 0);
            ref_free(&r);
            if (n != 1)
                return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a scalar (%s), but the "
                            "file holds %lld values", in->name, in->value, in->name,
                            param_type(p, g), (long long)n);
        }
        return EXIT_OK;
    }

    struct stat st;
    double num;
    ref_tensor as_num = {.dtype = TC_F64, .data = &num};
    if (stat(in->value, &st) != 0 && parse_scalar(in->value, &as_num))
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
                t->data[i] = dtype_round(TC_BF16, t->data[i]); /* f32: the double lane */
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

int bind_inputs(run_state *s, const tc_dimbind *shapes, int nshapes, tc_dimbind **binds, int *nb)
{
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
    tc_status st = api_bind(p, f, ba, shapes, nshapes, binds, nb);
    free(ba);
    if (st != TC_OK) {
        print_diag(p);
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

int check_missing(run_state *s, bool note)
{
    const gfn *f = s->f;
    tc_buf b;
    buf_init(&b, s->p->arena);
    int n = 0;
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (s->given[i] || (g->scalar && g->has_default))
            continue;
        buf_printf(&b, "%s%s", n++ ? ", " : "", g->name);
    }
    if (n == 0)
        return EXIT_OK;
    if (!s->o->random)
        return fail(EXIT_ERROR, "function '%s': no --input for %s %s (give each with --input "
                    "NAME=FILE.npy or NAME=VALUE, or --random for seeded random inputs)",
                    f->name, n == 1 ? "parameter" : "parameters", buf_str(&b));
    if (note)
        fprintf(stderr, "note: random inputs (--seed %llu): %s\n", (unsigned long long)s->o->seed,
                buf_str(&b));
    return EXIT_OK;
}

int fill_inputs(run_state *s, uint64_t seed, const tc_dimbind *binds, int nb)
{
    const gfn *f = s->f;
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (s->given[i])
            continue;
        rng r = rng_for(g->scalar ? s->o->seed : seed, g->name);
        if (g->scalar) {
            if (!ref_alloc(&s->args[i], g->dtype, 0, NULL))
                return fail(EXIT_ERROR, "out of memory");
            /* a default is a cast of the literal, as the language writes it */
            ref_setf(&s->args[i], 0, g->has_default ? g->def : random_scalar(&r, g->dtype));
            continue;
        }
        int64_t shape[TC_MAX_RANK];
        for (int k = 0; k < g->rank; k++)
            shape[k] = bind_eval(g->shape[k], binds, nb);
        if (!ref_alloc(&s->args[i], g->dtype, g->rank, shape))
            return fail(EXIT_ERROR, "parameter '%s': cannot allocate a tensor of that size", g->name);
        fill_tensor(&r, &s->args[i]);
    }
    return EXIT_OK;
}

int alloc_output(run_state *s, int k, const tc_dimbind *binds, int nb)
{
    const goutput *out = &s->f->outputs[k];
    int64_t shape[TC_MAX_RANK];
    for (int r = 0; r < out->node->rank; r++)
        shape[r] = bind_eval(out->node->shape[r], binds, nb);
    if (!ref_alloc(&s->outs[k], out->node->dtype, out->node->rank, shape))
        return fail(EXIT_ERROR, "output '%s': out of memory", out->name);
    return EXIT_OK;
}

void unflatten(run_state *s, int k)
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

/* --- step 7 on the GPU ------------------------------------------------------------ */


/* No GPU, NVRTC or cuBLAS is the environment (3); anything else is an error (1). */
int gpu_fail(tc_status st, const char *msg)
{
    fprintf(stderr, "%s%s", msg, *msg && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
    return st == TC_ERR_NO_DEVICE ? EXIT_ENV : EXIT_ERROR;
}

static int alloc_tensor(gpu_run *g, dev_tensor *t, tc_dtype dt, int rank, const int64_t *shape,
                        const char *what)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k];
    t->bytes = (size_t)n * (size_t)dtype_size(dt);
    if (drv_alloc(g->dev, t->bytes ? t->bytes : 1, &t->ptr, g->d) != TC_OK)
        return fail(EXIT_ERROR, "%s: %s", what, g->d->brief ? g->d->brief : "cannot allocate");
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    memset(&t->dl, 0, sizeof t->dl);
    t->dl.data = (void *)(uintptr_t)t->ptr;
    t->dl.device.device_type = kDLCUDA;
    t->dl.device.device_id = g->s->o->rt->ordinal;
    t->dl.ndim = rank;
    t->dl.shape = t->shape;
    t->dl.dtype = api_dl_dtype(dt);
    return EXIT_OK;
}

static int upload(gpu_run *g, dev_tensor *t, const ref_tensor *r, const char *what)
{
    int rc = alloc_tensor(g, t, r->dtype, r->rank, r->shape, what);
    if (rc != EXIT_OK || !t->bytes)
        return rc;
    unsigned char *host = malloc(t->bytes);
    if (!host)
        return fail(EXIT_ERROR, "out of memory");
    int64_t n = ref_numel(r), sz = dtype_size(r->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (r->idata)
            dtype_encode_int(r->dtype, r->idata[i], host + i * sz);
        else
            dtype_encode(r->dtype, r->data[i], host + i * sz);
    }
    tc_status st = drv_htod(g->dev, t->ptr, host, t->bytes, g->d);
    free(host);
    return st == TC_OK ? EXIT_OK : gpu_fail(st, g->d->msg);
}

static int download(gpu_run *g, drv_ptr ptr, ref_tensor *r)
{
    int64_t n = ref_numel(r), sz = dtype_size(r->dtype);
    unsigned char *host = malloc((size_t)(n * sz) + 1);
    if (!host)
        return fail(EXIT_ERROR, "out of memory");
    tc_status st = n ? drv_dtoh(g->dev, host, ptr, (size_t)(n * sz), g->d) : TC_OK;
    for (int64_t i = 0; st == TC_OK && i < n; i++) {
        if (r->idata)
            r->idata[i] = dtype_decode_int(r->dtype, host + i * sz);
        else
            r->data[i] = dtype_decode(r->dtype, host + i * sz);
    }
    free(host);
    return st == TC_OK ? EXIT_OK : gpu_fail(st, g->d->msg);
}

int gpu_init(gpu_run *g, run_state *s, drv_device *dev, tc_diag *d)
{
    size_t np = (size_t)s->f->nparams + 1, no = (size_t)s->f->noutputs + 1;
    *g = (gpu_run){s, dev, d, calloc(np, sizeof(dev_tensor)), calloc(no, sizeof(dev_tensor)),
                   calloc(np + no, sizeof(tc_arg)), 0};
    return g->params && g->outs && g->args ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
}

int gpu_prepare(gpu_run *g, const tc_dimbind *binds, int nb)
{
    run_state *s = g->s;
    const gfn *f = s->f;
    for (int i = 0; i < f->nparams; i++) {
        const gparam *pa = &f->params[i];
        if (pa->scalar) {
            const ref_tensor *v = &s->args[i];
            g->args[g->nargs++] = dtype_is_float(pa->dtype) ? tc_arg_float(pa->name, v->data[0])
                                  : dtype_is_int(pa->dtype) ? tc_arg_int(pa->name, v->idata[0])
                                                            : tc_arg_bool(pa->name, v->idata[0] != 0);
            continue;
        }
        int rc = upload(g, &g->params[i], &s->args[i], pa->name);
        if (rc != EXIT_OK)
            return rc;
        if (!s->o->check) /* only --check reads the host copy again: a large run keeps one */
            ref_free(&s->args[i]);
        g->args[g->nargs++] = tc_arg_tensor(pa->name, &g->params[i].dl);
    }
    for (int k = 0; k < f->noutputs; k++) {
        const goutput *out = &f->outputs[k];
        if (out->inout_param >= 0)
            continue; /* written back into its parameter's buffer */
        int64_t shape[TC_MAX_RANK];
        for (int r = 0; r < out->node->rank; r++)
            shape[r] = bind_eval(out->node->shape[r], binds, nb);
        int rc = alloc_tensor(g, &g->outs[k], out->node->dtype, out->node->rank, shape, out->name);
        if (rc != EXIT_OK)
            return rc;
        /* poison: an element no kernel writes is NaN (floats) or -1 (ints) */
        tc_status st = drv_memset_async(g->dev, g->outs[k].ptr, 0xff, g->outs[k].bytes, NULL, g->d);
        if (st != TC_OK)
            return gpu_fail(st, g->d->msg);
        g->args[g->nargs++] = tc_arg_tensor(out->name, &g->outs[k].dl);
    }
    return EXIT_OK;
}

int gpu_outputs(gpu_run *g, const tc_dimbind *binds, int nb)
{
    run_state *s = g->s;
    int rc = EXIT_OK;
    for (int k = 0; k < s->f->noutputs && rc == EXIT_OK; k++) {
        int ip = s->f->outputs[k].inout_param;
        if ((rc = alloc_output(s, k, binds, nb)) == EXIT_OK)
            rc = download(g, ip >= 0 ? g->params[ip].ptr : g->outs[k].ptr, &s->outs[k]);
    }
    return rc;
}

void gpu_release(gpu_run *g)
{
    const gfn *f = g->s->f;
    for (int i = 0; g->params && i < f->nparams; i++)
        drv_free(g->dev, g->params[i].ptr);
    for (int k = 0; g->outs && k < f->noutputs; k++)
        drv_free(g->dev, g->outs[k].ptr);
    free(g->params);
    free(g->outs);
    free(g->args);
}

/* --check: the tolerance for a dtype, relative to max(1, max |want|). */
static double dtype_tol(tc_dtype dt)
{
    switch (dt) {
    case TC_F32: return 2e-5;
    case TC_F64: return 1e-5;
    case TC_F16: case TC_BF16: return 1e-2;
    default: return 0; /* integers and bools: exact */
    }
}

/* An output's tolerance: its dtype's, or the loosest of the float dtypes
 * the function computes with when that is looser.  The reference rounds
 * every value to its node's dtype from f64, the kernels from f32, so a value
 * near an f16/bf16 rounding boundary may round the other way, and that one
 * ulp of bf16 (2^-8) carries into an f32 result. */
static double check_tol(const gfn *f, tc_dtype out)
{
    double tol = dtype_tol(out);
    if (tol == 0)
        return 0;
    for (int i = 0; i < f->nnodes; i++)
        if (dtype_is_float(f->nodes[i]->dtype) && dtype_tol(f->nodes[i]->dtype) > tol)
            tol = dtype_tol(f->nodes[i]->dtype);
    return tol;
}

/* "[2, 5]": the multi-index of flat element i of t. */
static void index_text(const ref_tensor *t, int64_t i, char *buf, size_t n)
{
    int64_t idx[TC_MAX_RANK];
    for (int k = t->rank - 1; k >= 0; k--) {
        idx[k] = t->shape[k] ? i % t->shape[k] : 0;
        i = t->shape[k] ? i / t->shape[k] : 0;
    }
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < t->rank && at < n; k++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", k ? ", " : "", (long long)idx[k]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

/* Compare every output with the reference; *worst is the largest relative
 * error seen.  EXIT_ERROR with a message naming the first output that
 * differs (after `where`: "group 3: "). */
static int check_outputs(run_state *s, const ref_tensor *want, const char *where, double *worst)
{
    const gfn *f = s->f;
    *worst = 0;
    for (int k = 0; k < f->noutputs; k++) {
        const ref_tensor *got = &s->outs[k], *w = &want[k];
        int64_t n = ref_numel(w);
        if (ref_numel(got) != n)
            return fail(EXIT_ERROR, "--check: %soutput '%s' has %lld elements, the reference %lld",
                        where, f->outputs[k].name, (long long)ref_numel(got), (long long)n);
        if (w->idata) { /* integers and bools: exactly, whatever the tolerance */
            for (int64_t i = 0; i < n; i++) {
                if (ref_geti(got, i) == w->idata[i])
                    continue;
                char idx[256];
                index_text(w, i, idx, sizeof idx);
                return fail(EXIT_ERROR, "--check: %soutput '%s' differs from the reference "
                            "interpreter at %s: got %lld, want %lld (integers must be equal)",
                            where, f->outputs[k].name, idx, (long long)ref_geti(got, i),
                            (long long)w->idata[i]);
            }
            continue;
        }
        double scale = 1, maxerr = 0;
        int64_t at = -1;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(w->data[i]) && fabs(w->data[i]) > scale)
                scale = fabs(w->data[i]);
        for (int64_t i = 0; i < n; i++) {
            double e = ref_elem_err(ref_getf(got, i), w->data[i]);
            if (e > maxerr || (at < 0 && e > 0)) {
                maxerr = e;
                at = i;
            }
        }
        double rel = maxerr / scale, tol = check_tol(f, w->dtype);
        if (rel > *worst)
            *worst = rel;
        if (rel > tol) {
            char idx[256];
            index_text(w, at, idx, sizeof idx);
            return fail(EXIT_ERROR, "--check: %soutput '%s' differs from the reference interpreter "
                        "at %s: got %.9g, want %.9g (max |got - want| = %.3g, %.3g of max(1, max "
                        "|want|) = %.6g; tolerance %g)", where, f->outputs[k].name, idx,
                        ref_getf(got, at), w->data[at], maxerr, rel, scale, tol);
        }
    }
    return EXIT_OK;
}

int check_run(run_state *s, const tc_dimbind *binds, int nb, const char *where, double *worst)
{
    const gfn *f = s->f;
    ref_tensor *want = calloc((size_t)f->noutputs + 1, sizeof *want);
    int rc;
    *worst = 0;
    if (!want)
        rc = fail(EXIT_ERROR, "out of memory");
    else if (api_ref_run(s->p, f, binds, nb, s->args, want) != TC_OK)
        rc = (print_diag(s->p), EXIT_ERROR);
    else
        rc = check_outputs(s, want, where, worst);
    for (int k = 0; want && k < f->noutputs; k++)
        ref_free(&want[k]);
    free(want);
    return rc;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* --bench: warm up, then time every step with events over BENCH_RUNS
 * runs and print the median of each. */
enum { BENCH_WARMUP = 3, BENCH_RUNS = 20 };

int bench(gpu_run *g, const char *what, const tc_plan *plan, const int64_t *step_bytes,
          bench_call call, void *arg)
{
    int ne = plan->nsteps + 1;
    void **ev = calloc((size_t)ne, sizeof *ev);
    float *ms = calloc((size_t)(plan->nsteps + 1) * BENCH_RUNS, sizeof *ms);
    int rc = ev && ms ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    tc_status st = TC_OK;
    for (int i = 0; i < ne && rc == EXIT_OK && st == TC_OK; i++)
        st = drv_event_create(g->dev, &ev[i], g->d);
    for (int r = 0; r < BENCH_WARMUP + BENCH_RUNS && rc == EXIT_OK && st == TC_OK; r++) {
        api_run_info info = {.events = ev, .nevents = ne};
        st = call(arg, &info);
        if (st != TC_OK) {
            rc = gpu_fail(st, tc_errmsg(g->s->p->ctx));
            break;
        }
        if (r < BENCH_WARMUP)
            continue;
        float *row = ms + (size_t)(r - BENCH_WARMUP) * (size_t)(plan->nsteps + 1);
        for (int i = 0; i < plan->nsteps && st == TC_OK; i++)
            st = drv_event_elapsed(g->dev, ev[i], ev[i + 1], &row[i], g->d);
        if (st == TC_OK)
            st = drv_event_elapsed(g->dev, ev[0], ev[plan->nsteps], &row[plan->nsteps], g->d);
    }
    if (st != TC_OK && rc == EXIT_OK)
        rc = gpu_fail(st, g->d->msg);
    if (rc == EXIT_OK && g->s->o->json) {
        char *doc = api_bench_json(what, drv_name(g->dev), plan, step_bytes, ms, BENCH_RUNS, BENCH_WARMUP);
        rc = doc && fputs(doc, stdout) >= 0 && fflush(stdout) == 0 ? EXIT_OK
                                                                   : fail(EXIT_ERROR, "cannot write the JSON");
        free(doc);
    } else if (rc == EXIT_OK) {
        printf("bench: %s on %s, %s indices, median of %d runs after %d warm-up runs\n",
               what, drv_name(g->dev), plan->idx64 ? "64-bit" : "32-bit", BENCH_RUNS,
               BENCH_WARMUP);
        printf("  %-4s %12s %14s %10s  %s\n", "step", "time (us)", "bytes", "GB/s", "kernel");
        float col[BENCH_RUNS];
        int64_t total_bytes = 0;
        for (int i = 0; i <= plan->nsteps; i++) {
            for (int r = 0; r < BENCH_RUNS; r++)
                col[r] = ms[(size_t)r * (size_t)(plan->nsteps + 1) + (size_t)i];
            qsort(col, BENCH_RUNS, sizeof *col, cmp_float);
            double us = 1e3 * (col[BENCH_RUNS / 2 - 1] + col[BENCH_RUNS / 2]) / 2;
            int64_t bytes = i < plan->nsteps ? step_bytes[i] : total_bytes;
            if (i < plan->nsteps && bytes > 0)
                total_bytes += bytes;
            char step[16];
            snprintf(step, sizeof step, "%d", i);
            printf("  %-4s %12.2f %14lld %10.1f  %s\n", i < plan->nsteps ? step : "all", us,
                   (long long)bytes, bytes > 0 && us > 0 ? (double)bytes / (us * 1e3) : 0.0,
                   i < plan->nsteps ? rt_step_name(&plan->steps[i]) : "(first step start to last step end)");
        }
    }
    for (int i = 0; ev && i < ne; i++)
        drv_event_destroy(g->dev, ev[i]);
    free(ev);
    free(ms);
    return rc;
}

void report_jit(const run_opts *o, const gfn *f, tc_status st, const api_run_info *info)
{
    if (jit_warning(o->rt->jit)) /* an unusable cache: every run compiles again */
        fprintf(stderr, "tensorc: warning: %s\n", jit_warning(o->rt->jit));
    if (st == TC_OK && o->verbose)
        fprintf(stderr, "tensorc: %s: kernels for %s_%d%s: cache: %s (%s, %.1f ms)\n", f->name,
                info->ptx ? "compute" : "sm", info->arch,
                info->ptx ? " (PTX: the device is newer than NVRTC)" : "",
                info->origin == JIT_COMPILED ? "miss" : "hit",
                info->origin == JIT_COMPILED ? "compiled by NVRTC" : jit_origin_str(info->origin),
                info->jit_ms);
}

/* bench()'s call for a plain run. */
static tc_status bench_one(void *arg, api_run_info *info)
{
    gpu_run *g = arg;
    return api_run(g->s->p, g->s->f, g->args, (size_t)g->nargs, NULL, info);
}

/* Step 7 with --device=cuda: s->outs are filled on success. */
static int run_cuda(run_state *s, const tc_dimbind *binds, int nb)
{
    const run_opts *o = s->o;
    const gfn *f = s->f;
    tc_program *p = s->p;
    gpu_run g;
    int rc = gpu_init(&g, s, o->rt->dev, &p->ctx->diag);
    if (rc == EXIT_OK)
        rc = gpu_prepare(&g, binds, nb);

    api_run_info info = {0};
    if (rc == EXIT_OK) {
        tc_status st = api_run(p, f, g.args, (size_t)g.nargs, NULL, &info);
        report_jit(o, f, st, &info);
        if (st == TC_OK)
            st = drv_sync(g.dev, NULL, g.d);
        if (st != TC_OK)
            rc = gpu_fail(st, tc_errmsg(p->ctx)[0] ? tc_errmsg(p->ctx) : g.d->msg ? g.d->msg : "");
    }
    /* Step 7's results: each output from its buffer, an inout one from its parameter's. */
    if (rc == EXIT_OK)
        rc = gpu_outputs(&g, binds, nb);
    double worst;
    if (rc == EXIT_OK && o->check && (rc = check_run(s, binds, nb, "", &worst)) == EXIT_OK)
        fprintf(o->json ? stderr : stdout, "check: OK (max rel err %.3g)\n", worst);
    if (rc == EXIT_OK && o->bench) {
        int64_t *bytes = calloc((size_t)info.plan->nsteps + 1, sizeof *bytes);
        for (int i = 0; bytes && i < info.plan->nsteps; i++)
            bytes[i] = rt_step_bytes(info.plan, i, binds, nb);
        rc = bytes ? bench(&g, f->name, info.plan, bytes, bench_one, &g)
                   : fail(EXIT_ERROR, "out of memory");
        free(bytes);
    }
    gpu_release(&g);
    return rc;
}

/* Every --output path checked before any work, in a set (outfile.h) whose
 * index i is --output number i: nothing is replaced until all are written. */
int check_output_files(const run_opts *o, tc_outset **set)
{
    tc_diag d;
    diag_init(&d);
    *set = outset_new();
    int rc = *set ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    for (int i = 0; i < o->noutputs && rc == EXIT_OK; i++) {
        char what[256];
        snprintf(what, sizeof what, "--output %s", o->outputs[i].name);
        if (outset_add(*set, o->outputs[i].value, what, NULL, &d) != TC_OK) {
            fputs(d.msg, stderr);
            rc = EXIT_ERROR;
        }
    }
    diag_release(&d);
    return rc;
}

/* Before the interpreter runs (a CPU run, or --check): every tensor within
 * its limit, said before anything is allocated.  A GPU run alone has no
 * such limit. */
static int interp_fits(run_state *s, const tc_dimbind *binds, int nb)
{
    const gfn *f = s->f;
    for (int i = 0; i < f->nparams + f->noutputs; i++) {
        bool param = i < f->nparams;
        const gparam *g = param ? &f->params[i] : NULL;
        const goutput *out = param ? NULL : &f->outputs[i - f->nparams];
        if (param ? g->scalar : out->inout_param >= 0)
            continue;
        int rank = param ? g->rank : out->node->rank;
        const tc_dim **shape = param ? g->shape : out->node->shape;
        double n = 1; /* a double: a product of bound sizes cannot overflow it */
        for (int k = 0; k < rank; k++)
            n *= (double)bind_eval(shape[k], binds, nb);
        if (n > (double)REF_MAX_ELEMS)
            return fail(EXIT_ERROR, "%s '%s' has %.0f elements, more than the CPU reference "
                        "interpreter holds (%lld)%s", param ? "parameter" : "output",
                        param ? g->name : out->name, n, (long long)REF_MAX_ELEMS,
                        s->o->cuda ? ": run without --check"
                                   : ": run it on the GPU (--device=cuda)");
    }
    return EXIT_OK;
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
    int rc = output_slots(o, p, f, out_of);
    tc_outset *outs = NULL;
    if (rc == EXIT_OK)
        rc = check_output_files(o, &outs);
    for (int i = 0; i < o->ninputs && rc == EXIT_OK; i++)
        rc = load_input(s, &o->inputs[i]);
    tc_dimbind *binds = NULL;
    int nb = 0;
    if (rc == EXIT_OK)
        rc = check_missing(s, false);
    if (rc == EXIT_OK)
        rc = bind_inputs(s, o->shapes, o->nshapes, &binds, &nb);
    if (rc == EXIT_OK)
        rc = check_missing(s, true);
    if (rc == EXIT_OK && (!o->cuda || o->check))
        rc = interp_fits(s, binds, nb);
    if (rc == EXIT_OK)
        rc = fill_inputs(s, o->seed, binds, nb);
    if (rc == EXIT_OK && o->cuda) {
        rc = run_cuda(s, binds, nb);
    } else if (rc == EXIT_OK) {
        if (o->no_gpu) /* --device not given and no GPU: say so, once we are about to run */
            fprintf(stderr, "note: running on the CPU reference interpreter: %s\n", o->no_gpu);
        if (api_ref_run(p, f, binds, nb, s->args, s->outs) != TC_OK) {
            print_diag(p);
            rc = EXIT_ERROR;
        }
    }
    for (int k = 0; k < f->noutputs && rc == EXIT_OK; k++) {
        unflatten(s, k);
        if (out_of[k] >= 0) {
            if (npy_write_to(outs, out_of[k], o->outputs[out_of[k]].value, &s->outs[k], d) != TC_OK) {
                fputs(d->msg, stderr);
                rc = EXIT_ERROR;
            }
        } else {
            show_tensor(o->json ? stderr : stdout, f->outputs[k].name, &s->outs[k]); /* --json: stdout is JSON */
        }
    }
    /* every --output file replaced only now that all are written */
    if (rc == EXIT_OK && outs && outset_commit(outs, d) != TC_OK) {
        fputs(d->msg, stderr);
        rc = EXIT_ERROR;
    }
    outset_free(outs);
    free(out_of);
    return rc;
}

/* Steps 3-8, given a compiled program. */
static int run_program(const run_opts *o, tc_program *p)
{
    if (!o->fn && p->ast->nfns != 1) {
        if (p->ast->nfns == 0)
            return fail(EXIT_ERROR, "%s: the file defines no functions: nothing to run", o->file);
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
    if (o->grouped)
        return run_groups(o, p, f);

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

/* Step 2: which device.  Opening the GPU is the test that there is one. */
static int choose_device(run_opts *o, tc_ctx *ctx)
{
    bool want_cpu = o->device && strcmp(o->device, "cpu") == 0;
    if (want_cpu) {
        if (o->check || o->bench)
            return usage_error("%s compares or times the CUDA kernels: it needs --device=cuda (the "
                               "default when there is a GPU)", o->check ? "--check" : "--bench");
        return EXIT_OK;
    }
    if (api_gpu(ctx, 0, &o->rt) == TC_OK) {
        o->cuda = true;
        return EXIT_OK;
    }
    const char *why = ctx->diag.brief ? ctx->diag.brief : "the CUDA driver did not open";
    if (o->device || o->check || o->bench)
        return fail(EXIT_ENV, "%s: %s", o->device ? "--device=cuda" : o->check ? "--check" : "--bench",
                    why);
    o->no_gpu = strdup(why);
    return EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
    run_opts o = {0};
    int rc = parse_opts(argc, argv, &o);
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    tc_options copts = TC_OPTIONS_INIT;
    copts.fast_math = o.fast_math;
    copts.line_info = o.line_info;
    if (rc == EXIT_OK && tc_ctx_create_ex(&ctx, &copts) != TC_OK)
        rc = fail(EXIT_ERROR, "out of memory");
    if (rc == EXIT_OK)
        rc = choose_device(&o, ctx);
    if (rc == EXIT_OK && tc_compile_file(ctx, o.file, &p) != TC_OK) {
        fputs(tc_errmsg(ctx), stderr);
        rc = EXIT_ERROR;
    }
    if (rc == EXIT_OK)
        rc = run_program(&o, p);
    tc_program_free(p);
    if (ctx) { /* until tc_ctx_free releases the GPU state itself */
        rt_free(ctx->rt);
        ctx->rt = NULL;
    }
    tc_ctx_free(ctx);
    free_opts(&o);
    return rc;
}
