/* run_groups.c - `tensorc run --groups`: an elementwise function over tensor
 * groups, in ONE kernel launch on the GPU (tc_run_foreach_ex) or group by
 * group in the reference interpreter (tc_run_cpu).
 *
 *   tensorc run adamw.tc --groups 1000,0,4097,3 [--input lr=1e-3]
 *   tensorc run adamw.tc --input p=p0.npy,p1.npy --output p=q0.npy,q1.npy
 *
 * Each group is a run_state of its own, so run.c's steps serve a group as
 * they serve a plain run: load_input reads the group's file of a list,
 * bind_inputs and fill_inputs bind "*" and make up what was not given,
 * gpu_prepare uploads, gpu_outputs downloads, check_run compares with the
 * interpreter.  What is only here: the lists, the group sizes, the one
 * launch over all groups, and printing.
 *
 * Random tensors: group i draws from seed S + i (mod 2^64), so it holds
 * exactly what a plain run with --seed S+i draws, and group 0 is the plain
 * run's.  Scalars are shared by every group: given, or made up from seed S,
 * once, in group 0, and copied to the others.
 *
 * Empty groups: tc_shapes binds sizes of at least 1 (a symbol is >= 1), so
 * a group of 0 elements is neither bound nor interpreted: "*" is 0 for it,
 * its inputs and outputs are empty tensors, and that is all there is to
 * compute.  tc_run_foreach takes empty groups as they are (it launches
 * nothing for them).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "npy.h"

/* Groups printed in full before "... N more groups" (--output writes all). */
enum { SHOW_GROUPS = 4 };

typedef struct {
    const run_opts *o;
    tc_program *p;
    const tc_function_info *f;
    int n;                  /* groups */
    int64_t *numel;         /* per group */
    run_state *S;           /* per group (its shapes bound: "*" is the group's size) */
    char ***in_files;       /* per --input: its list (NULL: a scalar, shared) */
    char ***out_files;      /* per --output: its list */
    tc_outset *outs;        /* every output file, in write_outputs' order, checked up front */
    int *out_of;            /* per output: its --output, or -1 */
} groups;

/* --- the lists ------------------------------------------------------------------ */

/* The items of a comma list: (*items)[0..*count) point into one copy of
 * e->value, which (*items)[0] owns.  An empty item is a usage error. */
static int split_list(const char *opt, const kv *e, char ***items, int *count)
{
    int n = 1;
    for (const char *c = e->value; *c; c++)
        n += *c == ',';
    char *copy = strdup(e->value);
    char **v = calloc((size_t)n, sizeof *v);
    if (!copy || !v) {
        free(copy);
        free(v);
        return fail(EXIT_ERROR, "out of memory");
    }
    char *at = copy;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(at, ",");
        v[i] = at;
        if (len == 0) {
            free(copy);
            free(v);
            return usage_error("%s %s: an empty file name in '%s' (one .npy per group, "
                               "separated by commas)", opt, e->name, e->value);
        }
        at[len] = 0;
        at += len + 1;
    }
    *items = v;
    *count = n;
    return EXIT_OK;
}

static const char *files_word(int n)
{
    return n == 1 ? "file" : "files";
}

/* The --input and --output lists split, and the number of groups: from
 * --groups, else the first tensor's --input list. */
static int read_lists(groups *G)
{
    const run_opts *o = G->o;
    const tc_function_info *f = G->f;
    const kv *first = NULL; /* the first tensor --input: its list sets the count */
    G->n = o->group_sizes ? o->ngroups : -1;
    for (int i = 0; i < o->ninputs; i++) {
        const kv *in = &o->inputs[i];
        int k = find_param(f, in->name);
        if (k < 0) {
            /* load_input names the parameters; it fails before touching the state */
            run_state none = {.o = o, .p = G->p, .f = f};
            return load_input(&none, in);
        }
        if (f->params[k].scalar) {
            if (strchr(in->value, ','))
                return fail(EXIT_ERROR, "--input %s=%s: parameter '%s' is a scalar (%s), shared by "
                            "every group: give one value", in->name, in->value, in->name,
                            param_type(&f->params[k]));
            continue;
        }
        int c, rc = split_list("--input", in, &G->in_files[i], &c);
        if (rc != EXIT_OK)
            return rc;
        if (o->group_sizes && c != G->n)
            return usage_error("--input %s lists %d %s, but --groups gives %d groups", in->name, c,
                               files_word(c), G->n);
        if (first && c != G->n)
            return usage_error("--input %s lists %d %s, but --input %s lists %d (one file per group)",
                               in->name, c, files_word(c), first->name, G->n);
        if (!first && !o->group_sizes) {
            first = in;
            G->n = c;
        }
    }
    if (G->n < 0) /* a list of a scalar or of an unknown name, reported above */
        return usage_error("neither --groups nor an --input list of files says how many groups "
                           "there are");
    for (size_t k = 0; k < f->noutputs; k++) {
        int i = G->out_of[k];
        if (i < 0)
            continue;
        const kv *out = &o->outputs[i];
        int c, rc = split_list("--output", out, &G->out_files[i], &c);
        if (rc != EXIT_OK)
            return rc;
        if (c != G->n)
            return usage_error("--output %s lists %d %s, but the run has %d groups", out->name, c,
                               files_word(c), G->n);
        for (int g = 0; g < c; g++) {
            char what[256];
            snprintf(what, sizeof what, "--output %s (group %d)", out->name, g);
            if (tc_outset_add(G->outs, G->out_files[i][g], what, NULL) != TC_OK) {
                fputs(tc_outset_errmsg(G->outs), stderr);
                return EXIT_ERROR;
            }
        }
    }
    return EXIT_OK;
}

/* --- steps 4-6 per group ----------------------------------------------------------- */

static int alloc_groups(groups *G)
{
    size_t n = (size_t)G->n + 1;
    G->numel = calloc(n, sizeof *G->numel);
    G->S = calloc(n, sizeof *G->S);
    if (!G->numel || !G->S)
        return fail(EXIT_ERROR, "out of memory");
    for (int g = 0; g < G->n; g++) {
        if (!run_state_init(&G->S[g], G->o, G->p, G->f))
            return fail(EXIT_ERROR, "out of memory");
        G->numel[g] = -1;
    }
    return EXIT_OK;
}

/* Step 4: scalars into group 0, each list's files into their groups, and
 * the element count of every group checked (or learned from its files). */
static int load_groups(groups *G)
{
    const run_opts *o = G->o;
    const tc_function_info *f = G->f;
    /* who set each group's count, for messages */
    const char **by_file = calloc((size_t)G->n + 1, sizeof *by_file);
    const char **by_name = calloc((size_t)G->n + 1, sizeof *by_name);
    int rc = by_file && by_name ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    for (int g = 0; g < G->n && o->group_sizes; g++)
        G->numel[g] = o->group_sizes[g];
    for (int i = 0; i < o->ninputs && rc == EXIT_OK; i++) {
        const kv *in = &o->inputs[i];
        if (!G->in_files[i]) {
            rc = load_input(&G->S[0], in);
            continue;
        }
        int k = find_param(f, in->name);
        for (int g = 0; g < G->n && rc == EXIT_OK; g++) {
            const char *file = G->in_files[i][g];
            if ((rc = load_input(&G->S[g], &(kv){in->name, file})) != EXIT_OK)
                break;
            int64_t m = ht_numel(&G->S[g].args[k]);
            if (G->numel[g] < 0) {
                G->numel[g] = m;
                by_file[g] = file;
                by_name[g] = in->name;
            } else if (m != G->numel[g] && !by_file[g]) {
                rc = fail(EXIT_ERROR, "--input %s: group %d: '%s' has %lld elements, but --groups "
                          "gives it %lld", in->name, g, file, (long long)m, (long long)G->numel[g]);
            } else if (m != G->numel[g]) {
                rc = fail(EXIT_ERROR, "--input %s: group %d: '%s' has %lld elements, but '%s' "
                          "(--input %s) has %lld (the tensors of a group have one element count)",
                          in->name, g, file, (long long)m, by_file[g], by_name[g],
                          (long long)G->numel[g]);
            }
        }
    }
    free(by_file);
    free(by_name);
    return rc;
}

/* An empty group's shapes: every tensor of "*" = 0 elements, so every
 * tensor parameter and every output dim "*" is 0 (a fixed dim keeps its
 * size). */
static void empty_shapes(run_state *s)
{
    const tc_function_info *f = s->f;
    for (size_t i = 0; i < f->nparams + f->noutputs; i++) {
        bool param = i < f->nparams;
        const tc_value_info *v = param ? &f->params[i] : &f->outputs[i - f->nparams];
        tc_shape *sh = param ? &s->pshape[i] : &s->oshape[i - f->nparams];
        sh->dtype = dt_parse(v->dtype);
        sh->ndim = v->scalar ? 0 : v->rank;
        for (int k = 0; k < sh->ndim; k++)
            sh->shape[k] = strcmp(v->dims[k], "*") == 0 ? 0 : strtoll(v->dims[k], NULL, 10);
    }
}

/* Steps 5 and 6 for group g: "*" bound to its size, the rest made up. */
static int fill_group(groups *G, int g)
{
    run_state *s = &G->S[g];
    const tc_function_info *f = G->f;
    if (g > 0) /* group 0's scalars, given or made up, are everyone's */
        for (size_t i = 0; i < f->nparams; i++) {
            if (!f->params[i].scalar)
                continue;
            if (!ht_alloc(&s->args[i], G->S[0].args[i].dtype, 0, NULL))
                return fail(EXIT_ERROR, "out of memory");
            ht_cast(&s->args[i], 0, &G->S[0].args[i], 0);
            s->given[i] = true;
        }
    int missing = check_missing(s, false);
    if (missing != EXIT_OK)
        return missing;
    if (G->numel[g] == 0) {
        empty_shapes(s);
    } else {
        tc_arg star = tc_arg_size("*", G->numel[g]);
        int rc = bind_inputs(s, &star, 1);
        if (rc != EXIT_OK)
            return rc;
    }
    if (g == 0)
        check_missing(s, true);
    return fill_inputs(s, G->o->seed + (uint64_t)g);
}

/* --- step 7 --------------------------------------------------------------------- */

static int run_cpu(groups *G)
{
    if (G->o->no_gpu) /* --device not given and no GPU: say so, once we are about to run */
        fprintf(stderr, "note: running on the CPU reference interpreter: %s\n", G->o->no_gpu);
    int rc = EXIT_OK;
    for (int g = 0; g < G->n && rc == EXIT_OK; g++) {
        run_state *s = &G->S[g];
        char where[32];
        snprintf(where, sizeof where, "group %d: ", g);
        if (G->numel[g] == 0) { /* nothing to compute: empty outputs */
            for (size_t k = 0; k < G->f->noutputs && rc == EXIT_OK; k++)
                rc = alloc_output(s, (int)k);
        } else {
            rc = cpu_run(s, s->outs, where);
        }
    }
    return rc;
}

/* The one launch, as bench() calls it. */
typedef struct {
    groups *G;
    const tc_arg *args;
    size_t nargs;
} fe_call;

static tc_status call_foreach(void *arg, tc_run_info *info)
{
    fe_call *c = arg;
    return tc_run_foreach_ex(c->G->p, c->G->f->name, (size_t)c->G->n, c->args, c->nargs, NULL,
                             info);
}

/* --check over every group: the first group that differs fails; else the
 * worst error and its group. */
static int check_groups(groups *G)
{
    double worst = 0, e;
    int at = -1, rc = EXIT_OK;
    for (int g = 0; g < G->n && rc == EXIT_OK; g++) {
        if (G->numel[g] == 0)
            continue; /* nothing to compare: gpu_outputs gave it empty outputs */
        char where[32];
        snprintf(where, sizeof where, "group %d: ", g);
        if ((rc = check_run(&G->S[g], where, &e)) == EXIT_OK && (at < 0 || e > worst)) {
            worst = e;
            at = g;
        }
    }
    if (rc == EXIT_OK && at < 0)
        fprintf(G->o->json ? stderr : stdout, "check: OK (%d groups, all empty: nothing to compare)\n", G->n);
    else if (rc == EXIT_OK)
        fprintf(G->o->json ? stderr : stdout, "check: OK (%d groups, max rel err %.3g in group %d)\n",
                G->n, worst, at);
    return rc;
}

/* --bench of the one launch: its bytes are every group's (tc_run_foreach_ex
 * sums them). */
static int bench_groups(groups *G, gpu_run *gr, const tc_run_info *info, fe_call *call)
{
    bool any = false;
    for (int g = 0; g < G->n; g++)
        any |= G->numel[g] > 0;
    if (!any) {
        fprintf(G->o->json ? stderr : stdout, "bench: nothing to time: every group is empty (no launch)\n");
        return EXIT_OK;
    }
    char what[512];
    snprintf(what, sizeof what, "%s over %d groups", G->f->name, G->n);
    return bench(&gr[0], what, info->nsteps, call_foreach, call);
}

static int run_gpu(groups *G)
{
    const run_opts *o = G->o;
    gpu_run *gr = calloc((size_t)G->n, sizeof *gr);
    int rc = gr ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    int ready = 0; /* groups whose gpu_run holds memory */
    for (int g = 0; g < G->n && rc == EXIT_OK; g++, ready++)
        if ((rc = gpu_init(&gr[g], &G->S[g])) == EXIT_OK)
            rc = gpu_prepare(&gr[g]);

    /* tc_run_foreach's arguments: every group's gpu_prepare made the same
     * list of tc_args (the function's), so argument j of group 0 says what
     * argument j is, and a tensor's list gathers argument j of each group. */
    int na = rc == EXIT_OK ? gr[0].nargs : 0;
    tc_arg *args = calloc((size_t)na + 1, sizeof *args);
    const DLTensor **lists = calloc((size_t)na * (size_t)G->n + 1, sizeof *lists);
    if (rc == EXIT_OK && (!args || !lists))
        rc = fail(EXIT_ERROR, "out of memory");
    for (int j = 0; j < na && rc == EXIT_OK; j++) {
        args[j] = gr[0].args[j];
        if (args[j].kind != TC_ARG_TENSOR)
            continue; /* a scalar or a dtype binding: the same in every group */
        const DLTensor **list = lists + (size_t)j * (size_t)G->n;
        for (int g = 0; g < G->n; g++)
            list[g] = gr[g].args[j].v.tensor;
        args[j] = tc_arg_tensors(args[j].name, list);
    }

    tc_run_info info = {0};
    fe_call call = {G, args, (size_t)na};
    if (rc == EXIT_OK) {
        tc_status st = call_foreach(&call, &info);
        bool launched = false; /* all groups empty: nothing was compiled or launched */
        for (int g = 0; g < G->n && !launched; g++)
            launched = G->numel[g] > 0;
        if (launched)
            report_jit(o, G->f, st, &info);
        if (st == TC_OK)
            st = tc_device_sync(o->ctx, NULL);
        if (st != TC_OK)
            rc = gpu_fail(st, tc_errmsg(o->ctx));
    }
    for (int g = 0; g < G->n && rc == EXIT_OK; g++)
        rc = gpu_outputs(&gr[g]);
    if (rc == EXIT_OK && o->check)
        rc = check_groups(G);
    if (rc == EXIT_OK && o->bench)
        rc = bench_groups(G, gr, &info, &call);
    for (int g = 0; g < ready; g++)
        gpu_release(&gr[g]);
    free(gr);
    free(args);
    free(lists);
    return rc;
}

/* --- step 8 --------------------------------------------------------------------- */

static int write_outputs(groups *G)
{
    const tc_function_info *f = G->f;
    int rc = EXIT_OK;
    for (int g = 0; g < G->n; g++)
        for (size_t k = 0; k < f->noutputs; k++)
            unflatten(&G->S[g], (int)k);
    int index = 0; /* read_lists added the files in this order */
    for (size_t k = 0; k < f->noutputs && rc == EXIT_OK; k++) {
        int i = G->out_of[k];
        for (int g = 0; i >= 0 && g < G->n && rc == EXIT_OK; g++) {
            char *msg = NULL;
            if (npy_write_to(G->outs, index++, G->out_files[i][g], &G->S[g].outs[k], &msg) !=
                TC_OK) {
                fputs(msg ? msg : "error: out of memory\n", stderr);
                free(msg);
                rc = EXIT_ERROR;
            }
        }
    }
    /* all replaced only once every one is written */
    if (rc == EXIT_OK && tc_outset_commit(G->outs) != TC_OK) {
        fputs(tc_outset_errmsg(G->outs), stderr);
        rc = EXIT_ERROR;
    }
    /* the rest printed, group by group: all of a few groups, else the first ones */
    int shown = G->n <= SHOW_GROUPS + 1 ? G->n : SHOW_GROUPS, printed = 0;
    for (int g = 0; g < shown && rc == EXIT_OK; g++)
        for (size_t k = 0; k < f->noutputs; k++) {
            if (G->out_of[k] >= 0)
                continue;
            char label[256];
            snprintf(label, sizeof label, "%s (group %d)", f->outputs[k].name, g);
            show_tensor(G->o->json ? stderr : stdout, label, &G->S[g].outs[k]);
            printed++;
        }
    if (rc == EXIT_OK && printed && shown < G->n)
        fprintf(G->o->json ? stderr : stdout,
                "... %d more groups not shown (--output NAME=FILE,FILE,... writes every group)\n",
                G->n - shown);
    return rc;
}

/* --- the steps in order ------------------------------------------------------------ */

static void free_groups(groups *G)
{
    for (int g = 0; G->S && g < G->n; g++)
        if (G->S[g].args)
            run_state_free(&G->S[g]);
    for (int i = 0; i < G->o->ninputs; i++)
        if (G->in_files[i]) {
            free(G->in_files[i][0]);
            free(G->in_files[i]);
        }
    for (int i = 0; i < G->o->noutputs; i++)
        if (G->out_files[i]) {
            free(G->out_files[i][0]);
            free(G->out_files[i]);
        }
    free(G->in_files);
    free(G->out_files);
    tc_outset_free(G->outs);
    free(G->out_of);
    free(G->numel);
    free(G->S);
}

int run_groups(const run_opts *o, tc_program *p, const tc_function_info *f)
{
    const char *why;
    if (tc_function_not_elementwise(p, f->name, o->dtypes, (size_t)o->ndtypes, &why) != TC_OK) {
        print_diag(o->ctx);
        return EXIT_ERROR;
    }
    if (why)
        return fail(EXIT_ERROR, "function '%s' cannot run over tensor groups: %s (--groups needs "
                    "every tensor parameter [*] and every operation pointwise)", f->name, why);
    groups G = {.o = o, .p = p, .f = f};
    G.in_files = calloc((size_t)o->ninputs + 1, sizeof *G.in_files);
    G.out_files = calloc((size_t)o->noutputs + 1, sizeof *G.out_files);
    G.out_of = calloc(f->noutputs + 1, sizeof *G.out_of);
    G.outs = tc_outset_new();
    int rc = G.in_files && G.out_files && G.out_of && G.outs ? EXIT_OK : fail(EXIT_ERROR, "out of memory");
    if (rc == EXIT_OK)
        rc = output_slots(o, f, G.out_of);
    if (rc == EXIT_OK)
        rc = read_lists(&G);
    if (rc == EXIT_OK && G.n > TC_MAX_GROUPS)
        rc = usage_error("%d groups; one run takes at most %d", G.n, TC_MAX_GROUPS);
    if (rc == EXIT_OK)
        rc = alloc_groups(&G);
    if (rc == EXIT_OK)
        rc = load_groups(&G);
    for (int g = 0; g < G.n && rc == EXIT_OK; g++)
        rc = fill_group(&G, g);
    if (rc == EXIT_OK)
        rc = o->cuda ? run_gpu(&G) : run_cpu(&G);
    if (rc == EXIT_OK)
        rc = write_outputs(&G);
    free_groups(&G);
    return rc;
}
