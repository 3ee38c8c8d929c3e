/* pipeline.c - lowering and fusion of one entry function, cached per program. */
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

static const char *const built[] = {"ast", "graph", "lowered", "fused", "sched", "cuda", "explain"};
static const char *const all[] = {"ast", "graph", "lowered", "fused", "sched", "cuda", "ptx", "cubin", "explain"};

bool pipe_stage_known(const char *stage)
{
    for (size_t i = 0; i < sizeof built / sizeof *built; i++)
        if (strcmp(stage, built[i]) == 0)
            return true;
    return false;
}

bool pipe_stage_valid(const char *stage)
{
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(stage, all[i]) == 0)
            return true;
    return false;
}

pipe_fn *pipe_get(tc_program *p, const gfn *g, const void *opts)
{
    (void)opts;
    for (pipe_fn *pf = p->pipes; pf; pf = pf->next)
        if (pf->g == g)
            return pf;
    tc_diag *d = &p->ctx->diag;
    pipe_fn *pf = ARENA_NEW(p->arena, pipe_fn);
    pf->g = g;
    pf->l = lower_fn(g, g->dims, p->arena, d);
    lir_verify(pf->l, d);
    pf->fu = fuse_fn(pf->l, p->arena, d);
    fuse_verify(pf->fu, d);
    pf->next = p->pipes;
    p->pipes = pf;
    return pf;
}

static sfn *pipe_sched(tc_program *p, pipe_fn *pf, bool idx64)
{
    if (!pf->s[idx64])
        pf->s[idx64] = sched_fn(pf->fu, idx64, p->arena, &p->ctx->diag);
    return pf->s[idx64];
}

cg_unit *pipe_own_unit(tc_program *p, pipe_fn *pf, bool idx64)
{
    if (!pf->own[idx64]) {
        const sfn *s = pipe_sched(p, pf, idx64);
        pf->own[idx64] = codegen_unit(&s, 1, idx64, p->arena, &p->ctx->diag);
    }
    return pf->own[idx64];
}

cg_unit *pipe_wide_unit(tc_program *p, pipe_fn *pf, bool idx64)
{
    if (!pf->wide[idx64]) {
        const sfn *s = pipe_sched(p, pf, idx64);
        pf->wide[idx64] = codegen_unit_ex(&s, 1, idx64, CG_FE_PARAM_BYTES_WIDE, p->arena,
                                          &p->ctx->diag);
    }
    return pf->wide[idx64];
}

cg_unit *pipe_file_unit(tc_program *p, bool idx64)
{
    if (!p->file_unit[idx64]) {
        int n = p->graph->nfns;
        const sfn **s = ARENA_ARRAY(p->arena, const sfn *, n > 0 ? n : 1);
        for (int i = 0; i < n; i++)
            s[i] = pipe_sched(p, pipe_get(p, p->graph->fns[i], NULL), idx64);
        p->file_unit[idx64] = codegen_unit(s, n, idx64, p->arena, &p->ctx->diag);
    }
    return p->file_unit[idx64];
}

const struct cg_unit *pipe_unit(tc_program *p, const gfn *g, bool idx64, const struct tc_plan **plan)
{
    for (int i = 0; i < p->graph->nfns; i++)
        if (p->graph->fns[i] == g) {
            cg_unit *u = pipe_file_unit(p, idx64);
            *plan = u->plans[i];
            return u;
        }
    cg_unit *u = pipe_own_unit(p, pipe_get(p, g, NULL), idx64);
    *plan = u->plans[0];
    return u;
}

void pipe_print_unit(tc_buf *b, const cg_unit *u, const gfn *const *fns, int n)
{
    buf_puts(b, u->source);
    buf_puts(b, "\n/*\n");
    for (int i = 0; i < n && i < u->nplans; i++)
        plan_print(b, u->plans[i], fns[i]);
    buf_puts(b, " */\n");
}

void pipe_print(tc_buf *b, tc_program *p, pipe_fn *pf, const char *stage)
{
    if (strcmp(stage, "lowered") == 0)
        lir_print(b, pf->l);
    else if (strcmp(stage, "fused") == 0)
        fuse_print(b, pf->fu);
    else if (strcmp(stage, "explain") == 0)
        fuse_explain(b, pf->fu);
    else if (strcmp(stage, "sched") == 0)
        sched_print(b, pipe_sched(p, pf, false));
    else if (strcmp(stage, "cuda") == 0)
        pipe_print_unit(b, pipe_own_unit(p, pf, false), &pf->g, 1);
}

