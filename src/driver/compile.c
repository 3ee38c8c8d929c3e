/* compile.c - the compiler driver (compile.h): source -> CUDA and launch plans.
 *
 * Read tc_drv_program, then build_unit: each stage in turn for every
 * function, then its verifier, then trace() (TENSORC_DEBUG, TENSORC_DUMP_DIR
 * and the caller's hook, compile_trace.c).  The per-function results are
 * kept (tc_fnc) so a later variant (64-bit indices, the wide foreach table,
 * one function alone) runs only the stages it does not share.
 */
#include "compile.h"

#include <string.h>

#include "codegen/plan_check.h"
#include "compile_trace.h"
#include "prelude.h"

const tc_stage_info tc_stages[STAGE_COUNT] = {
#define STAGE(id, name, ext, flags, what) [STAGE_##id] = {name, ext, flags, what},
#include "stages.def"
#undef STAGE
};

int tc_stage_find(const char *name)
{
    for (int s = 0; s < STAGE_COUNT && name; s++)
        if (strcmp(tc_stages[s].name, name) == 0)
            return s;
    return -1;
}

const char *tc_stage_names(tc_arena *a, unsigned flags)
{
    tc_buf b;
    buf_init(&b, a);
    int n = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if ((tc_stages[s].flags & flags) == flags)
            buf_printf(&b, "%s%s", n++ ? ", " : "", tc_stages[s].name);
    return buf_str(&b);
}

/* --- parsing ------------------------------------------------------------------------- */

static tc_source *make_source(tc_arena *a, const char *name, const char *text, size_t len)
{
    tc_source *s = ARENA_NEW(a, tc_source);
    s->name = arena_strdup(a, name);
    s->text = arena_strndup(a, text, len);
    s->len = len;
    return s;
}

/* The standard library, parsed afresh for each compilation (it is small, and
 * this keeps programs independent of one another). */
static const ast_program **parse_prelude(tc_arena *a, tc_diag *d, int *n)
{
    const ast_program **asts = ARENA_ARRAY(a, const ast_program *, tc_prelude_count + 1);
    for (int i = 0; i < tc_prelude_count; i++) {
        const tc_prelude_file *pf = &tc_prelude_files[i];
        const char *name = arena_printf(a, "<prelude>/%s", pf->name);
        asts[i] = ast_parse(make_source(a, name, pf->text, strlen(pf->text)), a, d);
    }
    *n = tc_prelude_count;
    return asts;
}

/* --- per function ---------------------------------------------------------------------- */

/* g's record, made empty on first use. */
static tc_fnc *fnc_of(tc_program *p, const gfn *g)
{
    tc_fnc *fc = p->fncs;
    while (fc && fc->g != g)
        fc = fc->next;
    if (!fc) {
        fc = ARENA_NEW(p->arena, tc_fnc);
        fc->g = g;
        fc->next = p->fncs;
        p->fncs = fc;
    }
    return fc;
}

/* --- a unit: lower, fuse, schedule, codegen ---------------------------------------------- */

static tc_unitc *find_unit(tc_program *p, const gfn *const *fns, int n, unsigned v)
{
    for (tc_unitc *u = p->units; u; u = u->next) {
        if (u->nfns != n || u->variant != v)
            continue;
        int i = 0;
        while (i < n && u->fns[i] == fns[i])
            i++;
        if (i == n)
            return u;
    }
    return NULL;
}

/* Whether stage s still has to run for some function of fns (it is kept
 * per function: a variant shares what it can). */
static bool pending(tc_fnc **fc, int n, tc_stage s, bool idx64)
{
    for (int i = 0; i < n; i++)
        if ((s == STAGE_LOWERED && !fc[i]->l) || (s == STAGE_FUSED && !fc[i]->fu) ||
            (s == STAGE_SCHED && !fc[i]->s[idx64]))
            return true;
    return false;
}

static cg_unit *build_unit(tc_program *p, tc_trace *t, const gfn *const *fns, int n, unsigned v)
{
    tc_arena *a = p->arena;
    tc_diag *d = &p->ctx->diag;
    bool idx64 = v & TC_VAR_IDX64;
    tc_fnc **fc = ARENA_ARRAY(a, tc_fnc *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
        fc[i] = fnc_of(p, fns[i]);
    tc_trace_unit(t, fns, n, v);

    /* lower: views become index arithmetic */
    if (pending(fc, n, STAGE_LOWERED, idx64)) {
        double t0 = tc_now_ms();
        for (int i = 0; i < n; i++)
            if (!fc[i]->l) { /* kept only once verified: a later variant builds on it */
                lfn *l = lower_fn(fns[i], fns[i]->dims, a, d);
                lir_verify(l, d);
                fc[i]->l = l;
            }
        tc_trace_stage(t, STAGE_LOWERED, t0);
    }

    /* fuse: anchors into kernels */
    if (pending(fc, n, STAGE_FUSED, idx64)) {
        double t0 = tc_now_ms();
        for (int i = 0; i < n; i++)
            if (!fc[i]->fu) {
                ffn *fu = fuse_fn(fc[i]->l, &p->ctx->knobs, a, d);
                fuse_verify(fu, d);
                fc[i]->fu = fu;
            }
        tc_trace_stage(t, STAGE_FUSED, t0);
        tc_trace_stage(t, STAGE_EXPLAIN, tc_now_ms());
        tc_trace_stage(t, STAGE_DOT, tc_now_ms());
    }

    /* schedule: a strategy and launch shape per kernel */
    if (pending(fc, n, STAGE_SCHED, idx64)) {
        double t0 = tc_now_ms();
        for (int i = 0; i < n; i++)
            if (!fc[i]->s[idx64]) {
                sfn *sf = sched_fn(fc[i]->fu, idx64, a, d);
                sched_verify(sf, a, d);
                fc[i]->s[idx64] = sf;
            }
        tc_trace_stage(t, STAGE_SCHED, t0);
    }

    /* codegen: CUDA text and launch plans (plan_verify proves the index bounds) */
    double t0 = tc_now_ms();
    const sfn **s = ARENA_ARRAY(a, const sfn *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
        s[i] = fc[i]->s[idx64];
    int fe_bytes = v & TC_VAR_WIDE    ? CG_FE_PARAM_BYTES_WIDE
                   : v & TC_VAR_SMALL ? CG_FE_PARAM_BYTES_SMALL
                                      : CG_FE_PARAM_BYTES;
    cg_unit *u = codegen_unit_ex(s, n, idx64, fe_bytes, a, d);
    t->unit = u;
    tc_trace_stage(t, STAGE_CUDA, t0);

    /* the launch plans: buffers, lives, slots, arguments */
    t0 = tc_now_ms();
    for (int i = 0; i < n && i < u->nplans; i++)
        plan_check(u->plans[i], u, fns[i], a, d);
    tc_trace_stage(t, STAGE_PLAN, t0);

    /* kept only once verified, as each function's stages are */
    const gfn **key = ARENA_ARRAY(a, const gfn *, n > 0 ? n : 1); /* the caller's may be on its stack */
    for (int i = 0; i < n; i++)
        key[i] = fns[i];
    tc_unitc *uc = ARENA_NEW(a, tc_unitc);
    *uc = (tc_unitc){p->units, key, n, v, u};
    p->units = uc;
    return u;
}

const cg_unit *tc_drv_unit(tc_program *p, const gfn *const *fns, int n, unsigned variant)
{
    tc_unitc *uc = find_unit(p, fns, n, variant);
    if (uc)
        return uc->u;
    tc_trace t;
    tc_trace_begin(&t, p, false);
    cg_unit *u = build_unit(p, &t, fns, n, variant);
    tc_trace_end(&t);
    return u;
}

const cg_unit *tc_drv_entry(tc_program *p, const gfn *g, unsigned variant, const tc_plan **plan)
{
    if (!(variant & (TC_VAR_WIDE | TC_VAR_SMALL)))
        for (int i = 0; i < p->graph->nfns; i++)
            if (p->graph->fns[i] == g) {
                const cg_unit *u = tc_drv_unit(p, (const gfn *const *)p->graph->fns,
                                               p->graph->nfns, variant);
                *plan = u->plans[i];
                return u;
            }
    const gfn *one[1] = {g}; /* no allocation: tc_run asks on every call */
    const cg_unit *u = tc_drv_unit(p, one, 1, variant);
    *plan = u->plans[0];
    return u;
}

/* --- the program: tc_compile ------------------------------------------------------------ */

void tc_drv_program(tc_program *p)
{
    tc_diag *d = &p->ctx->diag;
    tc_trace t;
    tc_trace_begin(&t, p, true);

    /* parse: the user's source, then the prelude */
    double t0 = tc_now_ms();
    p->ast = ast_parse(p->src, p->arena, d);
    tc_trace_stage(&t, STAGE_AST, t0);
    t0 = tc_now_ms();
    p->prelude = parse_prelude(p->arena, d, &p->nprelude);
    tc_trace_stage(&t, STAGE_PRELUDE, t0);

    /* graph: names, dtypes, shapes; calls inlined */
    t0 = tc_now_ms();
    p->graph = graph_build(p->ast, p->prelude, p->nprelude, NULL, p->arena, d);
    for (int i = 0; i < p->graph->nfns; i++)
        graph_verify(p->graph->fns[i], d);
    const gfn *const *fns = (const gfn *const *)p->graph->fns;
    tc_trace_unit(&t, fns, p->graph->nfns, 0);
    tc_trace_stage(&t, STAGE_GRAPH, t0);

    /* lower, fuse, schedule, codegen: every function of the file, one unit */
    build_unit(p, &t, fns, p->graph->nfns, 0);
    tc_trace_end(&t);
}

/* --- printing a stage ------------------------------------------------------------------- */

void tc_drv_print(tc_buf *b, tc_program *p, tc_stage stage, const gfn *const *fns, int n,
                  unsigned variant)
{
    const cg_unit *u = NULL;
    if (stage != STAGE_AST && stage != STAGE_GRAPH)
        u = tc_drv_unit(p, fns, n, variant); /* every stage run (and traced) as a compile runs them */
    tc_drv_print_built(b, p, stage, fns, n, variant, u);
}

void tc_drv_print_built(tc_buf *b, tc_program *p, tc_stage stage, const gfn *const *fns, int n,
                        unsigned variant, const cg_unit *u)
{
    bool idx64 = variant & TC_VAR_IDX64;
    if (stage == STAGE_AST) {
        ast_print(b, p->ast);
        return;
    }
    if (stage == STAGE_CUDA || stage == STAGE_PLAN) {
        if (stage == STAGE_CUDA) {
            buf_puts(b, u->source);
            buf_puts(b, "\n/*\n");
        }
        for (int i = 0; i < n && i < u->nplans; i++)
            plan_print(b, u->plans[i], fns[i]);
        if (stage == STAGE_CUDA)
            buf_puts(b, " */\n");
        return;
    }
    if (stage == STAGE_DOT) { /* one graph of every function */
        const ffn **fu = ARENA_ARRAY(p->arena, const ffn *, n > 0 ? n : 1);
        for (int i = 0; i < n; i++)
            fu[i] = fnc_of(p, fns[i])->fu;
        fuse_dot(b, fu, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i)
            buf_putc(b, '\n');
        if (stage == STAGE_GRAPH) {
            graph_print(b, fns[i]);
            continue;
        }
        const tc_fnc *fc = fnc_of(p, fns[i]);
        if (stage == STAGE_LOWERED)
            lir_print(b, fc->l);
        else if (stage == STAGE_FUSED)
            fuse_print(b, fc->fu);
        else if (stage == STAGE_EXPLAIN) {
            fuse_explain(b, fc->fu);
            if (fc->s[idx64]) /* not yet when traced right after fusion */
                sched_explain(b, fc->s[idx64]);
        }
        else if (stage == STAGE_SCHED)
            sched_print(b, fc->s[idx64]);
    }
}
