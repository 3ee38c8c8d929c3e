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
    cg_block vbody = {0};
    if (vec > 1) {
        /* VEC elements per step, from vector loads where contiguous and aligned */
        cg_vector_begin(g, vec, rank - 1);
        for (int e = 0; e < vec; e++) {
            g->v.k = e;
            cg_accumulate_at(g, 0, NULL, 0, "base", e, true);
        }
        vbody = g->body;
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

    cg_put(o, 4, &g->kpre);
    buf_printf(o, "    const idx_t len = %s;\n", cg_index(g, ks->rowlen));
    cg_put(o, 0, &decl);
    cg_grid_stride(g, o, "len", ks->rowlen, vec > 1 ? vec : 1, &vbody, &body, true, NULL);
    /* each block's partial, then the last block to arrive combines them */
    buf_puts(o, "    unsigned *ticket = (unsigned *)ws;\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        int rn = cg_rno(g, r);
        const char *at = cg_acc_type(g, r);
        buf_printf(o, "    acc%d = %s(acc%d, %s(), (%s *)tc_smem);\n", rn,
                   ks->compact ? "tc_block_reduce_ni" : "tc_block_reduce", rn, cg_red_op(r), at);
        buf_printf(o, "    %s *part%d = (%s *)((char *)ws + 16 + %d * %lld);\n", at, rn, at, j,
                   (long long)ks->grid_cap * 16);
        buf_printf(o, "    if (threadIdx.x == 0)\n        part%d[blockIdx.x] = acc%d;\n", rn, rn);
    }
    buf_puts(o, "    __shared__ bool last_block;\n"
                "    __threadfence();\n"
                "    if (threadIdx.x == 0)\n"
                "        last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;\n"
                "    __syncthreads();\n"
                "    if (!last_block)\n"
                "        return;\n"
                "    __threadfence();\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        int rn = cg_rno(g, r);
        buf_printf(o, "    acc%d = tc_partials(part%d, gridDim.x, %s, %s(), (%s *)tc_smem);\n", rn,
                   rn, cg_acc_init(g, r), cg_red_op(r), cg_acc_type(g, r));
    }
    buf_puts(o, buf_str(&post));
    cg_put(o, 4, &g->rpre);
    buf_puts(o, "    if (threadIdx.x == 0) {\n");
    cg_put(o, 8, &g->body);
    buf_puts(o, "        *ticket = 0; /* ready for the next launch */\n    }\n");
}
