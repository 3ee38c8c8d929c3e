/* matmul.c - a generated matrix product: the kernel (a call of matmul.cuh's
 * tc_mm with the operands' dtype and layouts) and its launch steps.
 *
 * The cuBLAS step is made first (plan.c's cg_plan_matmul: buffers, sizes,
 * transposes, batch strides); the generated kernel takes the same facts as
 * arguments.  MM_GENERATED replaces the cuBLAS step by the kernel's;
 * MM_BY_ROWS keeps both, each guarded by M against the limit (plan.h), so
 * exactly one writes the output at any size.  The grid is every (batch,
 * output tile, K slice); the workspace holds a ticket per tile and a
 * partial tile per K slice (tc_mm leaves it zero). */
#include "codegen/cg.h"

#include <string.h>

const char *cg_matmul(cg_bufs *b, const ksched *ks, const char *name, tc_dimctx *c, tc_arena *a)
{
    const lnode *m = ks->k->ext;
    int si = cg_plan_matmul(b, m, c, a);
    if (ks->mm == MM_CUBLAS)
        return NULL;
    tc_plan *p = b->plan;
    pstep mm = p->steps[si];
    if (ks->mm == MM_GENERATED) {
        p->nsteps--; /* the kernel takes the cuBLAS step's place */
    } else {
        pstep *cb = &p->steps[si];
        cb->guard = ks->mm_rows;
        cb->guard_max = ks->mm_max_rows;
        cb->guard_above = true;
    }
    pstep *st = cg_plan_step(p, a);
    st->kind = PSTEP_KERNEL;
    st->kernel = name;
    if (ks->mm == MM_BY_ROWS) {
        st->guard = ks->mm_rows;
        st->guard_max = ks->mm_max_rows;
    }
    int bufs[3] = {mm.mm.a, mm.mm.b, mm.mm.c};
    for (int i = 0; i < 3; i++)
        cg_plan_arg(st, a, (parg){PARG_BUF, bufs[i], NULL, -1, TC_DT_NONE});
    const tc_dim *dims[] = {mm.mm.m, mm.mm.n, mm.mm.k, mm.mm.batch, mm.mm.stride_a, mm.mm.stride_b,
                            mm.mm.stride_c};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        cg_plan_arg(st, a, (parg){PARG_DIM, -1, dims[i], -1, TC_DT_NONE});
    cg_plan_arg(st, a, (parg){PARG_WORKSPACE, -1, NULL, -1, TC_DT_NONE});
    /* tiles of 16 rows, or of 64 on tensor cores for M > 16 (tc_mm); the
     * grid is the tiles of the wider kind for f16/bf16 (where the wider
     * ones run at every M > 16), the kernel strides over whatever it gets */
    const tc_dim *nt = dim_mul(c, mm.mm.batch, dim_ceildiv(c, mm.mm.n, dim_const(c, MM_TILE_N)));
    const tc_dim *t16 = dim_mul(c, nt, dim_ceildiv(c, mm.mm.m, dim_const(c, MM_TILE_M)));
    const tc_dim *t64 = dim_mul(c, nt, dim_ceildiv(c, mm.mm.m, dim_const(c, 64)));
    const tc_dim *slices = dim_ceildiv(c, mm.mm.k, dim_const(c, ks->mm_kslice));
    st->grid[0] = dim_mul(c, m->dtype == TC_F32 ? t16 : t64, slices);
    st->grid[1] = st->grid[2] = dim_const(c, 1);
    st->grid_cap = 2147483647;
    st->block[0] = MM_THREADS;
    st->block[1] = st->block[2] = 1;
    /* a 16-byte ticket per 16-row tile, then an f32 partial tile per tile
     * and slice, rows rounded up to 64: room for either tiling */
    st->ws_bytes = dim_add(c, dim_mul(c, t16, dim_const(c, 16)),
                           dim_mul(c, dim_mul(c, t64, slices),
                                   dim_const(c, (int64_t)64 * MM_TILE_N * 4)));
    st->idx64 = p->idx64;
    pkernel *k = cg_plan_table(b, a, st, name);
    k->params[2].written = true;
    int dt = m->dtype == TC_F32 ? 0 : m->dtype == TC_F16 ? 1 : 2;
    const char *t = cg_store_type(m->dtype);
    return arena_printf(a,
                        "extern \"C\" __global__ void __launch_bounds__(%d, 4) %s(\n"
                        "    const %s *__restrict__ a, const %s *__restrict__ b, %s *__restrict__ c,\n"
                        "    const idx_t m, const idx_t n, const idx_t k, const idx_t batch,\n"
                        "    const idx_t stride_a, const idx_t stride_b, const idx_t stride_c,\n"
                        "    void *__restrict__ ws)\n"
                        "{\n"
                        "    /* c[%s, %s] = a%s @ b%s, %s */\n"
                        "    tc_mm<%d, %s, %s>(a, b, c, m, n, k, batch, stride_a, stride_b, stride_c,\n"
                        "                     (unsigned char *)ws, %d);\n"
                        "}\n",
                        MM_THREADS, name, t, t, t, dim_str(a, mm.mm.m), dim_str(a, mm.mm.n),
                        mm.mm.ta ? ".T" : "", mm.mm.tb ? ".T" : "", dtype_name(m->dtype), dt,
                        mm.mm.ta ? "true" : "false", mm.mm.tb ? "true" : "false", ks->mm_kslice);
}
