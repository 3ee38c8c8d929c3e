/* full.c - SCH_FULL: a whole-tensor reduction, a grid-stride loop into
 * each block's partial, then the last block to arrive combines them.
 */
#include "codegen/cg.h"

#include <string.h>

void cg_full(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int vec = ks->vec, rank = k->rank;
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    cg_reset_bufs(g);
    g->phase = 0;
    cg_block decl = {0};
    cg_accumulate(g, 0, &decl, 4, "r");
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]) && k->stores[i]->kind != LK_REDUCE)
            cg_store(g, T_ELEM, k->stores[i], NULL);
    cg_block body = g->body;
    cg_forget(g, T_ELEM);
    cg_vbody vbody = {0};
    if (vec > 1) {
        /* VEC elements per step, from vector loads where contiguous and
         * aligned; unrolled, the loads of every vector of a step first */
        if (ks->unroll > 1)
            cg_vbody_begin(g, vec, rank - 1);
        else
            cg_vector_begin(g, vec, rank - 1);
        for (int e = 0; e < vec; e++) {
            g->v.k = e;
            cg_accumulate_at(g, 0, NULL, 0, "base", e, true);
        }
        vbody = ks->unroll > 1 ? cg_vbody_end(g) : (cg_vbody){g->body, g->body};
        g->v.n = 1;
        cg_forget(g, T_ELEM);
    }

    /* the results, then the row-level stores, generated before any text so
     * kernel-level statements they need land in kpre in time */
    tc_buf post;
    buf_init(&post, g->a);
    cg_finish_pass(g, 0, &post, 4, NULL);
    g->phase = 1;
    cg_reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]) || k->stores[i]->kind == LK_REDUCE)
            cg_store(g, T_ELEM, k->stores[i], NULL);

    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    cg_wl(&w, "const idx_t len = %s;", cg_index(g, ks->rowlen));
    cg_put(o, 0, &decl); /* declarations made at their own depth */
    cg_grid_stride(g, o, "len", ks->rowlen, vec > 1 ? vec : 1, &vbody, &body, true, NULL);
    /* each block's partial, then the last block to arrive combines them */
    cg_wl(&w, "unsigned *ticket = (unsigned *)ws;");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        int rn = cg_rno(g, r);
        const char *at = cg_acc_type(g, r);
        cg_wl(&w, "acc%d = %s(acc%d, %s(), (%s *)tc_smem);", rn,
              ks->compact ? "tc_block_reduce_ni" : "tc_block_reduce", rn, cg_red_op(r), at);
        cg_wl(&w, "%s *part%d = (%s *)((char *)ws + 16 + %d * %lld);", at, rn, at, j,
              (long long)ks->grid_cap * 16);
        cg_wl(&w, "if (threadIdx.x == 0)");
        cg_wbody(&w, "part%d[blockIdx.x] = acc%d;", rn, rn);
    }
    cg_wl(&w, "__shared__ bool last_block;");
    cg_wl(&w, "__threadfence();");
    cg_wl(&w, "if (threadIdx.x == 0)");
    cg_wbody(&w, "last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;");
    cg_wl(&w, "__syncthreads();");
    cg_wl(&w, "if (!last_block)");
    cg_wbody(&w, "return;");
    cg_wl(&w, "__threadfence();");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        int rn = cg_rno(g, r);
        cg_wl(&w, "acc%d = tc_partials(part%d, gridDim.x, %s, %s(), (%s *)tc_smem);", rn, rn,
              cg_acc_init(g, r), cg_red_op(r), cg_acc_type(g, r));
    }
    buf_puts(o, buf_str(&post));
    cg_wput(&w, &g->rpre);
    cg_wopen(&w, "if (threadIdx.x == 0) {");
    cg_wput(&w, &g->body);
    cg_wl(&w, "*ticket = 0; /* ready for the next launch */");
    cg_wclose(&w, "}");
}
