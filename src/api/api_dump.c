/* api_dump.c - the stages as text (tc_program_dump, and api_dump for the
 * CLI), and the driver's other internal entry points for the CLI and tests:
 * a function's unit and plan, the CUDA source, binding sizes, the reference
 * interpreter.  Each runs in a protected call, as tc_compile does. */
#include "api_internal.h"

#include <string.h>

#include "compile.h"

/* --- tc_program_dump ---------------------------------------------------------------- */

static void print_ast_fn(tc_buf *b, const ast_program *prog, const ast_fn *fn)
{
    ast_program one = *prog;
    one.fns = (ast_fn *)fn;
    one.nfns = 1;
    ast_print(b, &one);
}

typedef struct {
    tc_program *p;
    tc_stage stage;
    const char *fn;
    const char *out;
    bool json;              /* tc_drv_json's form (api_dump_json) */
} dump_job;

/* --fn NAME's AST: a function of the file or of the prelude. */
static void print_ast_of(tc_buf *b, tc_program *p, const char *fn)
{
    const ast_fn *f = api_find_ast_fn(p->ast, fn);
    const ast_program *owner = p->ast;
    for (int i = 0; i < p->nprelude && !f; i++)
        if ((f = api_find_ast_fn(p->prelude[i], fn)))
            owner = p->prelude[i];
    if (!f)
        diag_error(&p->ctx->diag, TC_ERR_NOT_FOUND, (tc_loc){p->src, 0, 0},
                   "no function '%s' here or in the prelude (functions: %s)", fn, api_fn_list(p));
    print_ast_fn(b, owner, f);
}

static void dump_body(void *arg)
{
    dump_job *j = arg;
    tc_program *p = j->p;
    tc_buf b;
    buf_init(&b, p->arena);
    if (j->stage == STAGE_AST && j->fn) {
        print_ast_of(&b, p, j->fn);
    } else if (j->fn) {
        entry_job e = {p, j->fn, NULL, 0, NULL};
        api_entry_body(&e);
        const gfn *one[1] = {e.out};
        (j->json ? tc_drv_json : tc_drv_print)(&b, p, j->stage, one, 1, 0);
    } else {
        if (j->stage != STAGE_AST)
            api_report_unbuilt(p);
        (j->json ? tc_drv_json : tc_drv_print)(&b, p, j->stage, (const gfn *const *)p->graph->fns,
                                               p->graph->nfns, 0);
    }
    j->out = buf_str(&b);
}

tc_status tc_program_dump(tc_program *prog, const char *stage, const char *fn, const char **out)
{
    if (out)
        *out = NULL;
    if (!prog)
        return TC_ERR_INVALID_ARG;
    tc_ctx *ctx = prog->ctx;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!stage || !out)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_program_dump: %s is NULL", stage ? "out" : "stage"));
    int s = tc_stage_find(stage);
    if (s < 0 || !(tc_stages[s].flags & SF_TEXT)) {
        if (s >= 0 && (tc_stages[s].flags & SF_BINARY))
            return api_fail(ctx, diag_set(d, TC_ERR_UNSUPPORTED, (tc_loc){0},
                                          "stage '%s' is binary: tensorc compile --emit=%s "
                                          "gives it (tc_program_dump gives the text stages)",
                                          stage, stage));
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "unknown stage '%s' (stages: %s)", stage,
                                      tc_stage_names(prog->arena, SF_TEXT)));
    }
    dump_job j = {prog, (tc_stage)s, fn, NULL, false};
    tc_status st = diag_protect(d, dump_body, &j);
    if (st != TC_OK)
        return api_fail(ctx, st);
    *out = j.out;
    return TC_OK;
}

typedef struct {
    tc_program *p;
    const gfn *f;
    tc_stage stage;
    const char *out;
    bool json;
} fdump_job;

static void fdump_body(void *arg)
{
    fdump_job *j = arg;
    tc_buf b;
    buf_init(&b, j->p->arena);
    const gfn *one[1] = {j->f};
    (j->json ? tc_drv_json : tc_drv_print)(&b, j->p, j->stage, one, 1, 0);
    j->out = buf_str(&b);
}

tc_status api_dump_json(tc_program *p, const gfn *f, const char *stage, const char *fn,
                        const char **out)
{
    api_begin(p->ctx);
    int s = tc_stage_find(stage);
    if (s != STAGE_EXPLAIN && s != STAGE_PLAN)
        return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                         "--json is for --emit=plan and explain, not '%s'", stage));
    tc_status st;
    if (f) {
        fdump_job j = {p, f, (tc_stage)s, NULL, true};
        st = diag_protect(&p->ctx->diag, fdump_body, &j);
        *out = j.out;
    } else {
        dump_job j = {p, (tc_stage)s, fn, NULL, true};
        st = diag_protect(&p->ctx->diag, dump_body, &j);
        *out = j.out;
    }
    return st == TC_OK ? TC_OK : api_fail(p->ctx, st);
}

tc_status api_dump(tc_program *p, const gfn *f, const char *stage, const char **out)
{
    api_begin(p->ctx);
    int s = tc_stage_find(stage);
    if (s < 0 || !(tc_stages[s].flags & SF_TEXT) || s == STAGE_AST)
        return api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                                         "api_dump: no stage '%s' of one function", stage));
    fdump_job j = {p, f, (tc_stage)s, NULL, false};
    tc_status st = diag_protect(&p->ctx->diag, fdump_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *out = j.out;
    return TC_OK;
}

/* --- units ----------------------------------------------------------------------------- */

typedef struct {
    tc_program *p;
    const gfn *f;
    unsigned variant;
    const struct cg_unit *unit;
    const struct tc_plan *plan;
} unit_job;

static void unit_body(void *arg)
{
    unit_job *j = arg;
    j->unit = tc_drv_entry(j->p, j->f, j->variant, &j->plan);
}

tc_status api_unit_variant(tc_program *p, const gfn *f, unsigned variant,
                           const struct cg_unit **unit, const struct tc_plan **plan)
{
    api_begin(p->ctx);
    unit_job j = {p, f, variant, NULL, NULL};
    tc_status st = diag_protect(&p->ctx->diag, unit_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *unit = j.unit;
    *plan = j.plan;
    return TC_OK;
}

tc_status api_unit(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
                   const struct tc_plan **plan)
{
    return api_unit_variant(p, f, idx64 ? TC_VAR_IDX64 : 0, unit, plan);
}

typedef struct {
    tc_program *p;
    const gfn *f;
    const char *out;
} src_job;

static void src_body(void *arg)
{
    src_job *j = arg;
    tc_program *p = j->p;
    if (j->f) { /* the function's own unit, as --emit=cuda --fn shows it */
        j->out = tc_drv_unit(p, &j->f, 1, 0)->source;
    } else {
        api_report_unbuilt(p);
        j->out = tc_drv_unit(p, (const gfn *const *)p->graph->fns, p->graph->nfns, 0)->source;
    }
}

tc_status api_cuda_source(tc_program *p, const gfn *f, const char **src)
{
    api_begin(p->ctx);
    src_job j = {p, f, NULL};
    tc_status st = diag_protect(&p->ctx->diag, src_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *src = j.out;
    return TC_OK;
}

/* --- binding and the reference interpreter, for the CLI and tests -------------------- */

typedef struct {
    tc_program *p;
    const gfn *f;
    const bind_arg *args;
    const tc_dimbind *extra;
    int nextra;
    tc_dimbind **out;
    int *nout;
    tc_status st;
} bind_job;

static void bind_body(void *arg)
{
    bind_job *j = arg;
    j->st = graph_bind(j->f, j->args, j->extra, j->nextra, j->p->arena, &j->p->ctx->diag,
                       j->out, j->nout);
}

tc_status api_bind(tc_program *p, const gfn *f, const bind_arg *args, const tc_dimbind *extra,
                   int nextra, tc_dimbind **out, int *nout)
{
    api_begin(p->ctx);
    bind_job j = {p, f, args, extra, nextra, out, nout, TC_OK};
    tc_status st = diag_protect(&p->ctx->diag, bind_body, &j);
    if (st == TC_OK)
        st = j.st;
    return st == TC_OK ? TC_OK : api_fail(p->ctx, st);
}

typedef struct {
    tc_program *p;
    const gfn *f;
    const tc_dimbind *b;
    int nb;
    const ref_tensor *args;
    ref_tensor *outs;
    tc_status st;
} ref_job;

static void run_body(void *arg)
{
    ref_job *j = arg;
    j->st = ref_run(j->f, j->b, j->nb, j->args, j->outs, &j->p->ctx->diag);
}

tc_status api_ref_run(tc_program *p, const gfn *f, const tc_dimbind *b, int nb,
                      const ref_tensor *args, ref_tensor *outs)
{
    api_begin(p->ctx);
    ref_job j = {p, f, b, nb, args, outs, TC_OK};
    tc_status st = diag_protect(&p->ctx->diag, run_body, &j);
    if (st == TC_OK)
        st = j.st;
    return st == TC_OK ? TC_OK : api_fail(p->ctx, st);
}
