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
 *   5. bind symbolic dims (tc_shapes) from the inputs' shapes and --shape
 *   6. make up every input not given: seeded random tensors (fill.c),
 *      scalars from their default or seeded random
 *   7. cpu: run the reference interpreter.  cuda: upload the inputs,
 *      allocate the outputs (poisoned with 0xff bytes, so an element no
 *      kernel writes shows up), run the generated kernels (tc_run_ex),
 *      download; --check also runs the interpreter (tc_run_cpu) on
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

#include "npy.h"

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
        tc_arg *s = realloc(o->shapes, (size_t)cap * sizeof *s);
        if (!s)
            return fail(EXIT_USAGE, "out of memory"), false;
        o->shapes = s;
        o->capshapes = cap;
    }
    char *name = strdup(item);
    if (!name)
        return fail(EXIT_USAGE, "out of memory"), false;
    o->shapes[o->nshapes++] = tc_arg_size(name, v);
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

const char *param_type(const tc_value_info *v)
{
    static char bufs[4][512]; /* a few per message */
    static int next;
    char *b = bufs[next++ % 4];
    size_t n = sizeof bufs[0];
    size_t at = (size_t)snprintf(b, n, "%s", v->dtype);
    if (v->star) {
        snprintf(b + at, n - at, "[*]");
    } else if (!v->scalar && v->rank > 0) {
        for (int i = 0; i < v->rank && at < n; i++)
            at += (size_t)snprintf(b + at, n - at, "%s%s", i ? ", " : "[", v->dims[i]);
        if (at < n)
            snprintf(b + at, n - at, "]");
    }
    return b;
}

/* "a, b, c" of the names of v[0..n), or "none" (static buffer). */
static const char *names_of(const tc_value_info *v, size_t n)
{
    static char buf[4096];
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && at < sizeof buf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? ", " : "", v[i].name);
    return n ? buf : "none";
}

int find_param(const tc_function_info *f, const char *name)
{
    for (size_t i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

int inout_param(const tc_function_info *f, int k)
{
    if (!f->outputs[k].inout)
        return -1;
    int i = find_param(f, f->outputs[k].name);
    return i >= 0 && f->params[i].inout ? i : -1;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* s as a value of t's dtype into t's element 0: integers exactly (an i64
 * beyond 2^53 has no double), floats rounded. */
static bool parse_scalar(const char *s, htensor *t)
{
    DLDataType dt = t->dtype;
    if (dt_is_bool(dt)) {
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1"))
            return ht_seti(t, 0, 1), true;
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0"))
            return ht_seti(t, 0, 0), true;
        return false;
    }
    if (dt_is_int(dt)) {
        int64_t x;
        if (!parse_i64(s, &x))
            return false;
        if (dt.bits == 32 && (x < INT32_MIN || x > INT32_MAX))
            return false;
        ht_seti(t, 0, x);
        return true;
    }
    if (!*s || *s == ' ')
        return false;
    char *end;
    double x = strtod(s, &end);
    if (*end)
        return false;
    ht_setf(t, 0, x);
    return true;
}

void print_diag(tc_ctx *ctx)
{
    fputs(tc_errmsg(ctx), stderr);
}

int output_slots(const run_opts *o, const tc_function_info *f, int *out_of)
{
    for (size_t k = 0; k < f->noutputs; k++)
        out_of[k] = -1;
    for (int i = 0; i < o->noutputs; i++) {
        int k = -1;
        for (size_t j = 0; j < f->noutputs && k < 0; j++)
            if (strcmp(f->outputs[j].name, o->outputs[i].name) == 0)
                k = (int)j;
        if (k < 0)
            return fail(EXIT_ERROR, "--output %s: function '%s' has no output '%s' (outputs: %s)",
                        o->outputs[i].name, f->name, o->outputs[i].name,
                        names_of(f->outputs, f->noutputs));
        out_of[k] = i;
    }
    return EXIT_OK;
}

bool run_state_init(run_state *s, const run_opts *o, tc_program *p, const tc_function_info *f)
{
    size_t np = f->nparams + 1, no = f->noutputs + 1;
    *s = (run_state){o, p, f, calloc(np, sizeof(htensor)), calloc(np, sizeof(bool)),
                     calloc(np, sizeof *s->orig), calloc(no, sizeof(htensor)),
                     calloc(np, sizeof(tc_shape)), calloc(no, sizeof(tc_shape))};
    return s->args && s->given && s->orig && s->outs && s->pshape && s->oshape;
}

void run_state_free(run_state *s)
{
    for (size_t i = 0; s->args && i < s->f->nparams; i++)
        ht_free(&s->args[i]);
    for (size_t k = 0; s->outs && k < s->f->noutputs; k++)
        ht_free(&s->outs[k]);
    free(s->args);
    free(s->given);
    free(s->orig);
    free(s->outs);
    free(s->pshape);
    free(s->oshape);
}

/* --- steps 4-8 ------------------------------------------------------------------ */

/* Print a tools message (npy.h's, malloc'd) and free it; EXIT_ERROR. */
static int print_msg(char **msg)
{
    fputs(*msg ? *msg : "error: out of memory\n", stderr);
    free(*msg);
    *msg = NULL;
    return EXIT_ERROR;
}

int load_input(run_state *s, const kv *in)
{
    const tc_function_info *f = s->f;
    int k = find_param(f, in->name);
    if (k < 0)
        return fail(EXIT_ERROR, "--input %s: function '%s' has no parameter '%s' (parameters: %s)",
                    in->name, f->name, in->name, names_of(f->params, f->nparams));
    const tc_value_info *g = &f->params[k];
    DLDataType gdt = dt_parse(g->dtype);
    htensor *t = &s->args[k];
    char *msg = NULL;
    s->given[k] = true;

    if (g->scalar) {
        if (!ht_alloc(t, gdt, 0, NULL))
            return fail(EXIT_ERROR, "out of memory");
        if (!ends_with(in->value, ".npy")) {
            if (!parse_scalar(in->value, t))
                return fail(EXIT_ERROR, "--input %s=%s: '%s' is not %s %s value (parameter '%s' "
                            "is %s)", in->name, in->value, in->value,
                            !strcmp(g->dtype, "bool") || !strcmp(g->dtype, "bf16") ? "a" : "an",
                            g->dtype, in->name, param_type(g));
        } else {
            htensor r;
            if (npy_read(in->value, &r, &msg) != TC_OK)
                return print_msg(&msg);
            int64_t n = ht_numel(&r);
            /* a 0-d array of any numeric type will do: np.save('lr.npy', 1e-3) is
             * f64; converted as a cast would (a float to an integer saturates) */
            if (n == 1)
                ht_cast(t, 0, &r, 0);
            ht_free(&r);
            if (n != 1)
                return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a scalar (%s), but the "
                            "file holds %lld values", in->name, in->value, in->name,
                            param_type(g), (long long)n);
        }
        return EXIT_OK;
    }

    struct stat st;
    double num;
    htensor as_num = {.dtype = dt_parse("f64"), .data = (unsigned char *)&num};
    if (stat(in->value, &st) != 0 && parse_scalar(in->value, &as_num))
        return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a tensor (%s): pass a .npy file",
                    in->name, in->value, in->name, param_type(g));
    if (npy_read(in->value, t, &msg) != TC_OK)
        return print_msg(&msg);
    if (!dt_same(t->dtype, gdt)) {
        if (!strcmp(g->dtype, "bf16") && !strcmp(dt_name(t->dtype), "f32")) {
            /* bf16 travels as f32 (README): round each value to bf16 */
            htensor b;
            if (!ht_alloc(&b, gdt, t->rank, t->shape))
                return fail(EXIT_ERROR, "out of memory");
            int64_t n = ht_numel(t);
            for (int64_t i = 0; i < n; i++)
                ht_cast(&b, i, t, i);
            ht_free(t);
            *t = b;
        } else {
            static const struct { const char *dt, *np; } np_names[] = {
                {"f32", "float32"}, {"f64", "float64"}, {"f16", "float16"}, {"bf16", "float32"},
                {"i32", "int32"}, {"i64", "int64"}, {"bool", "bool_"}};
            const char *np = "?";
            for (size_t i = 0; i < sizeof np_names / sizeof np_names[0]; i++)
                if (!strcmp(np_names[i].dt, g->dtype))
                    np = np_names[i].np;
            return fail(EXIT_ERROR, "--input %s: '%s' holds %s values, but parameter '%s' is %s "
                        "(convert with a.astype(np.%s))", in->name, in->value,
                        dt_name(t->dtype), in->name, param_type(g), np);
        }
    }
    if (g->star) {
        /* remember the shape, then flatten: an entry's [*] is rank 1 */
        s->orig[k][0] = t->rank;
        for (int i = 0; i < t->rank; i++)
            s->orig[k][i + 1] = t->shape[i];
        int64_t n = ht_numel(t);
        t->rank = 1;
        t->shape[0] = n;
    }
    return EXIT_OK;
}

int bind_inputs(run_state *s, const tc_arg *shapes, int nshapes)
{
    const tc_function_info *f = s->f;
    const run_opts *o = s->o;
    size_t np = f->nparams;
    DLTensor *dl = calloc(np + 1, sizeof *dl);
    tc_arg *args = calloc(np + (size_t)nshapes + (size_t)o->ndtypes + 1, sizeof *args);
    if (!dl || !args) {
        free(dl);
        free(args);
        return fail(EXIT_ERROR, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < np; i++) {
        if (f->params[i].scalar || !s->given[i])
            continue;
        dl[i] = ht_dl(&s->args[i]);
        args[n++] = tc_arg_tensor(f->params[i].name, &dl[i]);
    }
    for (int i = 0; i < nshapes; i++)
        args[n++] = shapes[i];
    for (int i = 0; i < o->ndtypes; i++)
        args[n++] = o->dtypes[i];
    tc_status st = tc_shapes(s->p, f->name, args, n, s->pshape, np, s->oshape, f->noutputs);
    free(dl);
    free(args);
    if (st != TC_OK) {
        print_diag(o->ctx);
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

int check_missing(run_state *s, bool note)
{
    const tc_function_info *f = s->f;
    char list[4096];
    size_t at = 0;
    int n = 0;
    list[0] = 0;
    for (size_t i = 0; i < f->nparams; i++) {
        const tc_value_info *g = &f->params[i];
        if (s->given[i] || (g->scalar && g->has_default))
            continue;
        if (at < sizeof list)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", n ? ", " : "", g->name);
        n++;
    }
    if (n == 0)
        return EXIT_OK;
    if (!s->o->random)
        return fail(EXIT_ERROR, "function '%s': no --input for %s %s (give each with --input "
                    "NAME=FILE.npy or NAME=VALUE, or --random for seeded random inputs)",
                    f->name, n == 1 ? "parameter" : "parameters", list);
    if (note)
        fprintf(stderr, "note: random inputs (--seed %llu): %s\n", (unsigned long long)s->o->seed,
                list);
    return EXIT_OK;
}

int fill_inputs(run_state *s, uint64_t seed)
{
    const tc_function_info *f = s->f;
    for (size_t i = 0; i < f->nparams; i++) {
        const tc_value_info *g = &f->params[i];
        if (s->given[i])
            continue;
        rng r = rng_for(g->scalar ? s->o->seed : seed, g->name);
        const tc_shape *sh = &s->pshape[i];
        if (g->scalar) {
            if (!ht_alloc(&s->args[i], sh->dtype, 0, NULL))
                return fail(EXIT_ERROR, "out of memory");
            /* a default is a cast of the literal, as the language writes it */
            if (g->has_default)
                ht_cast_value(&s->args[i], 0, g->default_value);
            else
                ht_setf(&s->args[i], 0, random_scalar(&r, sh->dtype));
            continue;
        }
        if (!ht_alloc(&s->args[i], sh->dtype, sh->ndim, sh->shape))
            return fail(EXIT_ERROR, "parameter '%s': cannot allocate a tensor of that size", g->name);
        fill_tensor(&r, &s->args[i]);
    }
    return EXIT_OK;
}

int alloc_output(run_state *s, int k)
{
    const tc_shape *sh = &s->oshape[k];
    if (!ht_alloc(&s->outs[k], sh->dtype, sh->ndim, sh->shape))
        return fail(EXIT_ERROR, "output '%s': out of memory", s->f->outputs[k].name);
    return EXIT_OK;
}

void unflatten(run_state *s, int k)
{
    const tc_function_info *f = s->f;
    htensor *t = &s->outs[k];
    if (t->rank != 1)
        return;
    int from = -1;
    int ip = inout_param(f, k);
    if (ip >= 0 && f->params[ip].star && s->given[ip])
        from = ip;
    for (size_t i = 0; i < f->nparams && from < 0; i++)
        if (f->params[i].star && s->given[i])
            from = (int)i;
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

/* A scalar parameter's value as tc_run takes it. */
static tc_arg scalar_arg(const tc_value_info *g, const htensor *v)
{
    if (dt_is_float(v->dtype))
        return tc_arg_float(g->name, ht_getf(v, 0));
    if (dt_is_int(v->dtype))
        return tc_arg_int(g->name, ht_geti(v, 0));
    return tc_arg_bool(g->name, ht_geti(v, 0) != 0);
}

int cpu_run(run_state *s, htensor *outs, const char *where)
{
    const run_opts *o = s->o;
    const tc_function_info *f = s->f;
    size_t np = f->nparams, no = f->noutputs;
    DLTensor *dl = calloc(np + no + 1, sizeof *dl);
    tc_arg *args = calloc(np + no + (size_t)o->ndtypes + 1, sizeof *args);
    int rc = dl && args ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    size_t n = 0;
    for (size_t k = 0; k < no && rc == EXIT_OK; k++) {
        int ip = inout_param(f, (int)k);
        if (ip < 0) {
            const tc_shape *sh = &s->oshape[k];
            if (!ht_alloc(&outs[k], sh->dtype, sh->ndim, sh->shape)) {
                rc = fail(EXIT_ERROR, "output '%s': out of memory", f->outputs[k].name);
            } else {
                dl[np + k] = ht_dl(&outs[k]);
                args[n++] = tc_arg_tensor(f->outputs[k].name, &dl[np + k]);
            }
            continue;
        }
        /* an inout parameter is written back in place: run it on a copy */
        const htensor *in = &s->args[ip];
        if (!ht_alloc(&outs[k], in->dtype, in->rank, in->shape))
            rc = fail(EXIT_ERROR, "output '%s': out of memory", f->outputs[k].name);
        else
            memcpy(outs[k].data, in->data, (size_t)ht_numel(in) * (size_t)dt_size(in->dtype));
    }
    for (size_t i = 0; i < np && rc == EXIT_OK; i++) {
        const tc_value_info *g = &f->params[i];
        if (g->scalar) {
            args[n++] = scalar_arg(g, &s->args[i]);
            continue;
        }
        const htensor *t = &s->args[i];
        for (size_t k = 0; k < no; k++)
            if (inout_param(f, (int)k) == (int)i)
                t = &outs[k];
        dl[i] = ht_dl(t);
        args[n++] = tc_arg_tensor(g->name, &dl[i]);
    }
    for (int i = 0; i < o->ndtypes && rc == EXIT_OK; i++)
        args[n++] = o->dtypes[i];
    if (rc == EXIT_OK && tc_run_cpu(s->p, f->name, args, n) != TC_OK) {
        fputs(where, stderr);
        print_diag(o->ctx);
        rc = EXIT_ERROR;
    }
    free(dl);
    free(args);
    return rc;
}

/* --- step 7 on the GPU ------------------------------------------------------------ */

/* The context's last error as one line ("no CUDA driver"), for "what: why". */
static const char *ctx_brief(tc_ctx *ctx, const char *otherwise)
{
    static char buf[1024];
    const char *msg = tc_errmsg(ctx);
    return *msg ? msg_brief(msg, buf, sizeof buf) : otherwise;
}

/* No GPU, NVRTC or cuBLAS is the environment (3); anything else is an error (1). */
int gpu_fail(tc_status st, const char *msg)
{
    fprintf(stderr, "%s%s", msg, *msg && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
    return st == TC_ERR_NO_DEVICE ? EXIT_ENV : EXIT_ERROR;
}

static int alloc_tensor(gpu_run *g, dev_tensor *t, DLDataType dt, int rank, const int64_t *shape,
                        const char *what)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k];
    t->bytes = (size_t)n * (size_t)dt_size(dt);
    if (tc_device_alloc(g->ctx, t->bytes ? t->bytes : 1, &t->ptr) != TC_OK)
        return fail(EXIT_ERROR, "%s: %s", what, ctx_brief(g->ctx, "cannot allocate"));
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    memset(&t->dl, 0, sizeof t->dl);
    t->dl.data = t->ptr;
    t->dl.device.device_type = kDLCUDA;
    t->dl.device.device_id = g->s->o->dev.ordinal;
    t->dl.ndim = rank;
    t->dl.shape = t->shape;
    t->dl.dtype = dt;
    return EXIT_OK;
}

/* The host tensor's bytes are the device's: copied as they are. */
static int upload(gpu_run *g, dev_tensor *t, const htensor *r, const char *what)
{
    int rc = alloc_tensor(g, t, r->dtype, r->rank, r->shape, what);
    if (rc != EXIT_OK || !t->bytes)
        return rc;
    tc_status st = tc_device_copy(g->ctx, t->ptr, r->data, t->bytes, TC_COPY_TO_DEVICE, NULL);
    return st == TC_OK ? EXIT_OK : gpu_fail(st, tc_errmsg(g->ctx));
}

static int download(gpu_run *g, void *ptr, htensor *r)
{
    size_t bytes = (size_t)ht_numel(r) * (size_t)dt_size(r->dtype);
    tc_status st = bytes ? tc_device_copy(g->ctx, r->data, ptr, bytes, TC_COPY_TO_HOST, NULL) : TC_OK;
    return st == TC_OK ? EXIT_OK : gpu_fail(st, tc_errmsg(g->ctx));
}

int gpu_init(gpu_run *g, run_state *s)
{
    size_t np = s->f->nparams + 1, no = s->f->noutputs + 1;
    *g = (gpu_run){s, s->o->ctx, calloc(np, sizeof(dev_tensor)), calloc(no, sizeof(dev_tensor)),
                   calloc(np + no + (size_t)s->o->ndtypes, sizeof(tc_arg)), 0};
    return g->params && g->outs && g->args ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
}

int gpu_prepare(gpu_run *g)
{
    run_state *s = g->s;
    const tc_function_info *f = s->f;
    for (size_t i = 0; i < f->nparams; i++) {
        const tc_value_info *pa = &f->params[i];
        if (pa->scalar) {
            g->args[g->nargs++] = scalar_arg(pa, &s->args[i]);
            continue;
        }
        int rc = upload(g, &g->params[i], &s->args[i], pa->name);
        if (rc != EXIT_OK)
            return rc;
        if (!s->o->check) /* only --check reads the host copy again: a large run keeps one */
            ht_free(&s->args[i]);
        g->args[g->nargs++] = tc_arg_tensor(pa->name, &g->params[i].dl);
    }
    for (size_t k = 0; k < f->noutputs; k++) {
        if (inout_param(f, (int)k) >= 0)
            continue; /* written back into its parameter's buffer */
        const tc_shape *sh = &s->oshape[k];
        int rc = alloc_tensor(g, &g->outs[k], sh->dtype, sh->ndim, sh->shape, f->outputs[k].name);
        if (rc != EXIT_OK)
            return rc;
        /* poison: an element no kernel writes is NaN (floats) or -1 (ints) */
        tc_status st = tc_device_memset(g->ctx, g->outs[k].ptr, 0xff, g->outs[k].bytes, NULL);
        if (st != TC_OK)
            return gpu_fail(st, tc_errmsg(g->ctx));
        g->args[g->nargs++] = tc_arg_tensor(f->outputs[k].name, &g->outs[k].dl);
    }
    for (int i = 0; i < s->o->ndtypes; i++)
        g->args[g->nargs++] = s->o->dtypes[i];
    return EXIT_OK;
}

int gpu_outputs(gpu_run *g)
{
    run_state *s = g->s;
    int rc = EXIT_OK;
    for (size_t k = 0; k < s->f->noutputs && rc == EXIT_OK; k++) {
        int ip = inout_param(s->f, (int)k);
        if ((rc = alloc_output(s, (int)k)) == EXIT_OK)
            rc = download(g, ip >= 0 ? g->params[ip].ptr : g->outs[k].ptr, &s->outs[k]);
    }
    return rc;
}

void gpu_release(gpu_run *g)
{
    const tc_function_info *f = g->s->f;
    for (size_t i = 0; g->params && i < f->nparams; i++)
        if (g->params[i].ptr)
            tc_device_free(g->ctx, g->params[i].ptr);
    for (size_t k = 0; g->outs && k < f->noutputs; k++)
        if (g->outs[k].ptr)
            tc_device_free(g->ctx, g->outs[k].ptr);
    free(g->params);
    free(g->outs);
    free(g->args);
}

/* --check: the tolerance for a dtype, relative to max(1, max |want|). */
static double dtype_tol(const char *dt)
{
    if (!strcmp(dt, "f32"))
        return 2e-5;
    if (!strcmp(dt, "f64"))
        return 1e-5;
    if (!strcmp(dt, "f16") || !strcmp(dt, "bf16"))
        return 1e-2;
    return 0; /* integers and bools: exact */
}

/* An output's tolerance: its dtype's, or the loosest of the float dtypes
 * the function computes with when that is looser.  The reference rounds
 * every value to its node's dtype from f64, the kernels from f32, so a value
 * near an f16/bf16 rounding boundary may round the other way, and that one
 * ulp of bf16 (2^-8) carries into an f32 result. */
static double check_tol(run_state *s, DLDataType out)
{
    static const char *const floats[] = {"f16", "bf16", "f32", "f64"};
    double tol = dtype_tol(dt_name(out));
    if (tol == 0)
        return 0;
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        int yes = 0;
        if (dtype_tol(floats[i]) > tol &&
            tc_function_computes_in_ex(s->p, s->f->name, s->o->dtypes, (size_t)s->o->ndtypes,
                                       dt_parse(floats[i]), &yes) == TC_OK && yes)
            tol = dtype_tol(floats[i]);
    }
    return tol;
}

/* "[2, 5]": the multi-index of flat element i of t. */
static void index_text(const htensor *t, int64_t i, char *buf, size_t n)
{
    int64_t idx[TC_MAX_DIMS];
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
static int check_outputs(run_state *s, const htensor *want, const char *where, double *worst)
{
    const tc_function_info *f = s->f;
    *worst = 0;
    for (size_t k = 0; k < f->noutputs; k++) {
        const htensor *got = &s->outs[k], *w = &want[k];
        int64_t n = ht_numel(w);
        if (ht_numel(got) != n)
            return fail(EXIT_ERROR, "--check: %soutput '%s' has %lld elements, the reference %lld",
                        where, f->outputs[k].name, (long long)ht_numel(got), (long long)n);
        if (!dt_is_float(w->dtype)) { /* integers and bools: exactly, whatever the tolerance */
            for (int64_t i = 0; i < n; i++) {
                if (ht_geti(got, i) == ht_geti(w, i))
                    continue;
                char idx[256];
                index_text(w, i, idx, sizeof idx);
                return fail(EXIT_ERROR, "--check: %soutput '%s' differs from the reference "
                            "interpreter at %s: got %lld, want %lld (integers must be equal)",
                            where, f->outputs[k].name, idx, ht_geti(got, i), ht_geti(w, i));
            }
            continue;
        }
        double scale = 1, maxerr = 0;
        int64_t at = -1;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(ht_getf(w, i)) && fabs(ht_getf(w, i)) > scale)
                scale = fabs(ht_getf(w, i));
        for (int64_t i = 0; i < n; i++) {
            double e = tc_value_diff(ht_getf(got, i), ht_getf(w, i));
            if (e > maxerr || (at < 0 && e > 0)) {
                maxerr = e;
                at = i;
            }
        }
        double rel = maxerr / scale, tol = check_tol(s, w->dtype);
        if (rel > *worst)
            *worst = rel;
        if (rel > tol) {
            char idx[256];
            index_text(w, at, idx, sizeof idx);
            return fail(EXIT_ERROR, "--check: %soutput '%s' differs from the reference interpreter "
                        "at %s: got %.9g, want %.9g (max |got - want| = %.3g, %.3g of max(1, max "
                        "|want|) = %.6g; tolerance %g)", where, f->outputs[k].name, idx,
                        ht_getf(got, at), ht_getf(w, at), maxerr, rel, scale, tol);
        }
    }
    return EXIT_OK;
}

int check_run(run_state *s, const char *where, double *worst)
{
    const tc_function_info *f = s->f;
    htensor *want = calloc(f->noutputs + 1, sizeof *want);
    int rc;
    *worst = 0;
    if (!want)
        rc = fail(EXIT_ERROR, "out of memory");
    else if ((rc = cpu_run(s, want, "")) == EXIT_OK)
        rc = check_outputs(s, want, where, worst);
    for (size_t k = 0; want && k < f->noutputs; k++)
        ht_free(&want[k]);
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

int bench(gpu_run *g, const char *what, int nsteps, bench_call call, void *arg)
{
    int ne = nsteps + 1;
    void **ev = calloc((size_t)ne, sizeof *ev);
    float *ms = calloc((size_t)(nsteps + 1) * BENCH_RUNS, sizeof *ms);
    const char **names = calloc((size_t)ne, sizeof *names);
    int64_t *bytes = calloc((size_t)ne, sizeof *bytes);
    int rc = ev && ms && names && bytes ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    tc_status st = TC_OK;
    int index64 = 0;
    for (int i = 0; i < ne && rc == EXIT_OK && st == TC_OK; i++)
        st = tc_event_create(g->ctx, &ev[i]);
    for (int r = 0; r < BENCH_WARMUP + BENCH_RUNS && rc == EXIT_OK && st == TC_OK; r++) {
        tc_run_info info = {.events = ev, .nevents = ne, .step_names = names, .step_bytes = bytes,
                            .cap_steps = nsteps};
        st = call(arg, &info);
        if (st != TC_OK) {
            rc = gpu_fail(st, tc_errmsg(g->ctx));
            break;
        }
        index64 = info.index64;
        if (r < BENCH_WARMUP)
            continue;
        float *row = ms + (size_t)(r - BENCH_WARMUP) * (size_t)(nsteps + 1);
        for (int i = 0; i < nsteps && st == TC_OK; i++)
            st = tc_event_elapsed(g->ctx, ev[i], ev[i + 1], &row[i]);
        if (st == TC_OK)
            st = tc_event_elapsed(g->ctx, ev[0], ev[nsteps], &row[nsteps]);
    }
    if (st != TC_OK && rc == EXIT_OK)
        rc = gpu_fail(st, tc_errmsg(g->ctx));
    if (rc == EXIT_OK && g->s->o->json) {
        char *doc = tc_bench_json(what, g->s->o->dev.name, index64, nsteps, names, bytes, ms,
                                  BENCH_RUNS, BENCH_WARMUP);
        rc = doc && fputs(doc, stdout) >= 0 && fflush(stdout) == 0
                 ? EXIT_OK
                 : fail(EXIT_ERROR, "cannot write the JSON");
        free(doc);
    } else if (rc == EXIT_OK) {
        printf("bench: %s on %s, %s indices, median of %d runs after %d warm-up runs\n",
               what, g->s->o->dev.name, index64 ? "64-bit" : "32-bit", BENCH_RUNS,
               BENCH_WARMUP);
        printf("  %-4s %12s %14s %10s  %s\n", "step", "time (us)", "bytes", "GB/s", "kernel");
        float col[BENCH_RUNS];
        int64_t total_bytes = 0;
        for (int i = 0; i <= nsteps; i++) {
            for (int r = 0; r < BENCH_RUNS; r++)
                col[r] = ms[(size_t)r * (size_t)(nsteps + 1) + (size_t)i];
            qsort(col, BENCH_RUNS, sizeof *col, cmp_float);
            double us = 1e3 * (col[BENCH_RUNS / 2 - 1] + col[BENCH_RUNS / 2]) / 2;
            int64_t b = i < nsteps ? bytes[i] : total_bytes;
            if (i < nsteps && b > 0)
                total_bytes += b;
            char step[16];
            snprintf(step, sizeof step, "%d", i);
            printf("  %-4s %12.2f %14lld %10.1f  %s\n", i < nsteps ? step : "all", us,
                   (long long)b, b > 0 && us > 0 ? (double)b / (us * 1e3) : 0.0,
                   i < nsteps ? names[i] : "(first step start to last step end)");
        }
    }
    for (int i = 0; ev && i < ne; i++)
        if (ev[i])
            tc_event_destroy(g->ctx, ev[i]);
    free(ev);
    free(ms);
    free(names);
    free(bytes);
    return rc;
}

void report_jit(const run_opts *o, const tc_function_info *f, tc_status st,
                const tc_run_info *info)
{
    const char *warning = NULL;
    if (tc_ctx_cache_warning(o->ctx, &warning) == TC_OK && warning)
        fprintf(stderr, "tensorc: warning: %s\n", warning); /* every run compiles again */
    if (st == TC_OK && o->verbose)
        fprintf(stderr, "tensorc: %s: kernels for %s_%d%s: cache: %s (%s, %.1f ms)\n", f->name,
                info->ptx ? "compute" : "sm", info->arch,
                info->ptx ? " (PTX: the device is newer than NVRTC)" : "",
                info->jit_origin == 2 ? "miss" : "hit",
                info->jit_origin == 2 ? "compiled by NVRTC" : info->jit_origin == 1 ? "disk" : "memory",
                info->jit_ms);
}

/* bench()'s call for a plain run. */
static tc_status bench_one(void *arg, tc_run_info *info)
{
    gpu_run *g = arg;
    return tc_run_ex(g->s->p, g->s->f->name, g->args, (size_t)g->nargs, NULL, info);
}

/* Step 7 with --device=cuda: s->outs are filled on success. */
static int run_cuda(run_state *s)
{
    const run_opts *o = s->o;
    const tc_function_info *f = s->f;
    gpu_run g;
    int rc = gpu_init(&g, s);
    if (rc == EXIT_OK)
        rc = gpu_prepare(&g);

    tc_run_info info = {0};
    if (rc == EXIT_OK) {
        tc_status st = tc_run_ex(s->p, f->name, g.args, (size_t)g.nargs, NULL, &info);
        report_jit(o, f, st, &info);
        if (st == TC_OK)
            st = tc_device_sync(o->ctx, NULL);
        if (st != TC_OK)
            rc = gpu_fail(st, tc_errmsg(o->ctx));
    }
    /* Step 7's results: each output from its buffer, an inout one from its parameter's. */
    if (rc == EXIT_OK)
        rc = gpu_outputs(&g);
    double worst;
    if (rc == EXIT_OK && o->check && (rc = check_run(s, "", &worst)) == EXIT_OK)
        fprintf(o->json ? stderr : stdout, "check: OK (max rel err %.3g)\n", worst);
    if (rc == EXIT_OK && o->bench)
        rc = bench(&g, f->name, info.nsteps, bench_one, &g);
    gpu_release(&g);
    return rc;
}

/* Every --output path checked before any work, in a set (tc_outset) whose
 * index i is --output number i: nothing is replaced until all are written. */
int check_output_files(const run_opts *o, tc_outset **set)
{
    *set = tc_outset_new();
    int rc = *set ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    for (int i = 0; i < o->noutputs && rc == EXIT_OK; i++) {
        char what[256];
        snprintf(what, sizeof what, "--output %s", o->outputs[i].name);
        if (tc_outset_add(*set, o->outputs[i].value, what, NULL) != TC_OK) {
            fputs(tc_outset_errmsg(*set), stderr);
            rc = EXIT_ERROR;
        }
    }
    return rc;
}

/* Before the interpreter runs (a CPU run, or --check): every tensor within
 * its limit, said before anything is allocated.  A GPU run alone has no
 * such limit. */
static int interp_fits(run_state *s)
{
    const tc_function_info *f = s->f;
    for (size_t i = 0; i < f->nparams + f->noutputs; i++) {
        bool param = i < f->nparams;
        const tc_value_info *v = param ? &f->params[i] : &f->outputs[i - f->nparams];
        if (param ? v->scalar : inout_param(f, (int)(i - f->nparams)) >= 0)
            continue;
        const tc_shape *sh = param ? &s->pshape[i] : &s->oshape[i - f->nparams];
        double n = 1; /* a double: a product of bound sizes cannot overflow it */
        for (int k = 0; k < sh->ndim; k++)
            n *= (double)sh->shape[k];
        if (n > (double)TC_CPU_MAX_ELEMS)
            return fail(EXIT_ERROR, "%s '%s' has %.0f elements, more than the CPU reference "
                        "interpreter holds (%lld)%s", param ? "parameter" : "output", v->name, n,
                        (long long)TC_CPU_MAX_ELEMS,
                        s->o->cuda ? ": run without --check"
                                   : ": run it on the GPU (--device=cuda)");
    }
    return EXIT_OK;
}

static int run_fn(run_state *s)
{
    const run_opts *o = s->o;
    const tc_function_info *f = s->f;

    /* --output names must be outputs; check before doing any work */
    int *out_of = calloc(f->noutputs ? f->noutputs : 1, sizeof(int));
    if (!out_of)
        return fail(EXIT_ERROR, "out of memory");
    int rc = output_slots(o, f, out_of);
    tc_outset *outs = NULL;
    if (rc == EXIT_OK)
        rc = check_output_files(o, &outs);
    for (int i = 0; i < o->ninputs && rc == EXIT_OK; i++)
        rc = load_input(s, &o->inputs[i]);
    if (rc == EXIT_OK)
        rc = check_missing(s, false);
    if (rc == EXIT_OK)
        rc = bind_inputs(s, o->shapes, o->nshapes);
    if (rc == EXIT_OK)
        rc = check_missing(s, true);
    if (rc == EXIT_OK && (!o->cuda || o->check))
        rc = interp_fits(s);
    if (rc == EXIT_OK)
        rc = fill_inputs(s, o->seed);
    if (rc == EXIT_OK && o->cuda) {
        rc = run_cuda(s);
    } else if (rc == EXIT_OK) {
        if (o->no_gpu) /* --device not given and no GPU: say so, once we are about to run */
            fprintf(stderr, "note: running on the CPU reference interpreter: %s\n", o->no_gpu);
        rc = cpu_run(s, s->outs, "");
    }
    for (size_t k = 0; k < f->noutputs && rc == EXIT_OK; k++) {
        unflatten(s, (int)k);
        if (out_of[k] >= 0) {
            char *msg = NULL;
            if (npy_write_to(outs, out_of[k], o->outputs[out_of[k]].value, &s->outs[k], &msg) !=
                TC_OK)
                rc = print_msg(&msg);
        } else {
            show_tensor(o->json ? stderr : stdout, f->outputs[k].name, &s->outs[k]); /* --json: stdout is JSON */
        }
    }
    /* every --output file replaced only now that all are written */
    if (rc == EXIT_OK && outs && tc_outset_commit(outs) != TC_OK) {
        fputs(tc_outset_errmsg(outs), stderr);
        rc = EXIT_ERROR;
    }
    tc_outset_free(outs);
    free(out_of);
    return rc;
}

/* Steps 3-8, given a compiled program. */
static int run_program(const run_opts *o, tc_program *p)
{
    size_t nfns;
    const char *const *fns;
    if (tc_program_functions(p, &nfns, &fns) != TC_OK)
        return fail(EXIT_ERROR, "out of memory");
    if (!o->fn && nfns != 1) {
        if (nfns == 0)
            return fail(EXIT_ERROR, "%s: the file defines no functions: nothing to run", o->file);
        char list[4096];
        size_t at = 0;
        for (size_t i = 0; i < nfns && at < sizeof list; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", fns[i]);
        return usage_error("%s defines %zu functions (%s): choose one with --fn", o->file, nfns,
                           list);
    }
    const tc_function_info *f;
    if (tc_program_function_ex(p, o->fn, o->dtypes, (size_t)o->ndtypes, &f) != TC_OK) {
        print_diag(o->ctx);
        return EXIT_ERROR;
    }
    if (o->grouped)
        return run_groups(o, p, f);

    run_state s;
    int rc = run_state_init(&s, o, p, f) ? run_fn(&s) : fail(EXIT_ERROR, "out of memory");
    run_state_free(&s);
    return rc;
}

/* Step 2: which device.  Opening the GPU is the test that there is one. */
static int choose_device(run_opts *o)
{
    bool want_cpu = o->device && strcmp(o->device, "cpu") == 0;
    if (want_cpu) {
        if (o->check || o->bench)
            return usage_error("%s compares or times the CUDA kernels: it needs --device=cuda (the "
                               "default when there is a GPU)", o->check ? "--check" : "--bench");
        return EXIT_OK;
    }
    if (tc_device_open(o->ctx, 0, &o->dev) == TC_OK) {
        o->cuda = true;
        return EXIT_OK;
    }
    const char *why = ctx_brief(o->ctx, "the CUDA driver did not open");
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
    tc_program *p = NULL;
    tc_options copts = TC_OPTIONS_INIT;
    copts.fast_math = o.fast_math;
    copts.line_info = o.line_info;
    if (rc == EXIT_OK && tc_ctx_create_ex(&o.ctx, &copts) != TC_OK)
        rc = fail(EXIT_ERROR, "out of memory");
    if (rc == EXIT_OK)
        rc = choose_device(&o);
    if (rc == EXIT_OK && tc_compile_file(o.ctx, o.file, &p) != TC_OK) {
        fputs(tc_errmsg(o.ctx), stderr);
        rc = EXIT_ERROR;
    }
    if (rc == EXIT_OK)
        rc = run_program(&o, p);
    tc_program_free(p);
    tc_ctx_free(o.ctx);
    free_opts(&o);
    return rc;
}
