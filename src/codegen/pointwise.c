/* pointwise.c - SCH_POINTWISE: the grid-stride loop over every element
 * (vector and scalar bodies) and foreach kernels over tensor groups (the
 * tiled transpose path is tiled.c's).
 */
#include "codegen/cg.h"

#include <string.h>

int cg_fe_count(const cg *g)
{
    int nt = 0;
    for (int i = 0; i < g->bufs->plan->nbufs; i++)
        nt += g->used_buf[i];
    return nt;
}

/* Foreach (sched.h): the block finds its group in the table (a binary
 * search over the groups' first blocks: log2(groups) loads, from the kernel
 * parameters or L2), takes the group's addresses as the buffers' names, and
 * runs the pointwise loop over its chunk.  Each field is read from one
 * table or the other by the group's index: a reference to either (fe.dev ?
 * fe.dev : fe.g) is a generic pointer, so a parameter's table was read with
 * generic loads (LD.E, two dependent round trips before a block's first
 * LDG), where this reads it as constants (ULDC; NVCC 13, sm_90).  A copy of
 * the whole group chosen by a branch also reads ULDC, but its addresses
 * lost __isGlobal: the data accesses became generic LD.E/ST.E.  That form
 * is TENSORC_FE_PARAM=1; the default keeps the reference: timed (H200,
 * 2026-11-27, bench/tune.sh, checked) gelu_chain 139.6 us with the
 * constants against 133.5 with the reference, fma4 309.1 / 310.1 (with 128
 * threads and two vectors a step, TENSORC_PW_BLOCK=128 TENSORC_FE_STEPS=2,
 * the constants gave 129.2 and 302.5; the reference, now the defaults'
 * launch, 129.4 and 305.1 in another call). */
static void foreach_chunk(cg *g, tc_buf *o, int vec, const cg_vbody *vbody, const cg_block *body)
{
    tc_plan *p = g->bufs->plan;
    int nt = cg_fe_count(g), chunk = g->ks->chunk;
    cg_w w = {o, 4};
    if (g->f->knobs.fe_param != 1) {
        cg_wl(&w, "const tc_fe_group<%d> &grp = tc_fe_find<%d>(fe.dev ? fe.dev : fe.g, fe.ngroups);", nt, nt);
    } else {
        cg_wl(&w, "const long long gi_ = fe.dev ? tc_fe_index<%d>(fe.dev, fe.ngroups) : tc_fe_index<%d>(fe.g, fe.ngroups);",
              nt, nt);
        cg_wl(&w, "tc_fe_group<%d> grp; /* field by field: the parameter's table read as constants */", nt);
        cg_wl(&w, "#pragma unroll");
        cg_wl(&w, "for (int q_ = 0; q_ < %d; q_++)", nt);
        cg_wl(&w, "    grp.ptr[q_] = fe.dev ? fe.dev[gi_].ptr[q_] : fe.g[gi_].ptr[q_];");
        cg_wl(&w, "grp.n = fe.dev ? fe.dev[gi_].n : fe.g[gi_].n;");
        cg_wl(&w, "grp.first = fe.dev ? fe.dev[gi_].first : fe.g[gi_].first;");
    }
    for (int i = 0, k = 0; i < p->nbufs; i++) {
        if (!g->used_buf[i])
            continue;
        const char *c = cg_is_written(g, i) ? "" : "const ";
        const char *t = cg_store_type(p->bufs[i].dtype);
        cg_wl(&w, "%s%s *__restrict__ %s = (%s%s *)grp.ptr[%d];", c, t, p->bufs[i].name, c, t, k++);
        /* the table's addresses are plain integers: without this the
         * accesses would be generic ones, not ld.global (.nc for inputs) */
        cg_wl(&w, "__builtin_assume(__isGlobal(%s));", p->bufs[i].name);
    }
    cg_wl(&w, "const idx_t n = (idx_t)grp.n;");
    for (int i = 0; i < g->nsyms; i++) /* the bodies used the size of [*] */
        if (strcmp(g->syms[i], "*") == 0)
            cg_wl(&w, "const idx_t sz_n = n;");
    cg_wl(&w, "const idx_t lo = (idx_t)(blockIdx.x - grp.first) * %d;", chunk);
    cg_wl(&w, "const idx_t hi = n - lo < %d ? n : lo + %d;", chunk, chunk);
    const char *range[3] = {arena_printf(g->a, "(long long)lo + (long long)threadIdx.x * %d", vec), "hi",
                            arena_printf(g->a, "(idx_t)blockDim.x * %d", vec)};
    cg_loop(g, "lo", g->ks->numel, NULL);
    cg_grid_stride(g, o, "n", g->ks->numel, vec, vbody, body, false, range);
}

/* Groups a foreach kernel's parameter holds: its table and the scalars stay
 * within fe_param_bytes (codegen.h: 4 KB, which every driver and GPU allow,
 * so launching it costs what launching any kernel does; or 32 KB in a wide
 * unit; or one group in a small unit); more groups than that go through
 * device memory. */
int cg_fe_cap(const cg *g, int nt)
{
    int scalars = 0;
    for (int i = 0; i < g->l->g->nparams; i++)
        scalars += g->used_param[i];
    int cap = (g->fe.param_bytes - 16 - 8 * scalars) / (8 * (nt + 2));
    return cap > 1 ? cap : 1;
}

void cg_pointwise(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    int vec = g->ks->vec, r = k->rank;
    /* a foreach kernel's element count is its group's, not a size */
    const char *n = g->ks->foreach ? NULL : cg_index(g, g->ks->numel);
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    g->phase = 0;

    /* the scalar body: one element */
    cg_reset_bufs(g);
    g->v.n = 1;
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);
    cg_block scalar_body = g->body;
    cg_forget(g, T_ELEM);

    cg_vbody vec_body = {0};
    if (vec > 1) {
        cg_vbody_begin(g, vec, r - 1);
        for (int i = 0; i < k->nstores; i++)
            cg_vector_store(g, k->stores[i], vec);
        vec_body = cg_vbody_end(g);
        g->v.n = 1;
        cg_forget(g, T_ELEM);
    }

    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    if (g->ks->foreach) {
        foreach_chunk(g, o, vec, &vec_body, &scalar_body);
        return;
    }
    cg_wl(&w, "const idx_t n = %s;", n);
    cg_grid_stride(g, o, "n", g->ks->numel, vec, &vec_body, &scalar_body, false, NULL);
}
