/* pipeline.c - lowering and fusion of one entry function, cached per program. */
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

static const char *const built[] = {"ast", "graph", "lowered", "fused", "explain"};
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

void pipe_print(tc_buf *b, const pipe_fn *pf, const char *stage)
{
    if (strcmp(stage, "lowered") == 0)
        lir_print(b, pf->l);
    else if (strcmp(stage, "fused") == 0)
        fuse_print(b, pf->fu);
    else if (strcmp(stage, "explain") == 0)
        fuse_explain(b, pf->fu);
}
