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

/* The fused epilogue (fuse.h): the kernel's stores (with the epilogue
 * rule, fuse_mm_epilogues, pointwise kernel e's, its values taken as this
 * kernel's) for one element (i0, i1) of the product, whose value (rounded
 * to its dtype) is mm_v, as the body of a lambda `ep` tc_mm calls as it
 * stores each element of C; and with the row-scale rule (fuse_mm_norm) the row scale R of row i0 from
 * its sum of squares mm_ss, as the body of a lambda `rs` (R is computed by
 * the expression emitter as the rows kernel would, its reduction standing
 * for this kernel's own, so sizes, scalars and constants come the usual
 * way).  Their buffers, sizes and scalars are added to the signature (sig)
 * and the step's arguments after the matmul's own. */
static const char *epilogue(cg *g, pstep *st, tc_buf *sig, const fmmnorm *nm, const lnode *m2,
                            const fkernel *e)
{
    const fkernel *k = g->k;
    if (nm->rows || m2 || e) { /* the reduction, the other product, E's values: this kernel's own */
        ffn *f2 = ARENA_NEW(g->a, ffn);
        *f2 = *g->f;
        int n = g->l->nnodes;
        int *ko = ARENA_ARRAY(g->a, int, n > 0 ? n : 1);
        memcpy(ko, g->f->kernel_of, sizeof *ko * (size_t)n);
        if (nm->rows)
            ko[nm->ss->id] = k->id;
        if (m2)
            ko[m2->id] = k->id;
        for (int i = 0; e && i < n; i++)
            if (ko[i] == e->id)
                ko[i] = k->id;
        f2->kernel_of = ko;
        g->f = f2;
    }
    if (e) { /* the epilogue rule: E's stores are this kernel's (written here) */
        fkernel *kk = ARENA_NEW(g->a, fkernel);
        *kk = *k;
        kk->stores = e->stores;
        kk->nstores = e->nstores;
        g->k = k = kk;
    }
    cg_kernel_init(g);
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    g->phase = nm->rows ? 1 : 0;
    g->v.n = 1;
    cg_reset_bufs(g);
    cg_loop(g, "i0", k->dom[0], NULL);
    cg_loop(g, "i1", k->dom[1], NULL);
    cg_limit(g, k->dom[0]);
    cg_limit(g, k->dom[1]);
    tc_buf o;
    buf_init(&o, g->a);
    tc_buf rs;
    buf_init(&rs, g->a);
    if (nm->rows) {
        g->acc[nm->ss->id] = "mm_ss";
        g->phase_of[nm->ss->id] = 0;
        const tc_dim *idx[2] = {g->l->vars[0], dim_const(g->c, 0)};
        const char *v = cg_value(g, nm->r, idx);
        buf_puts(&rs, "    auto rs = [&](const long long r_, const float mm_ss) -> float {\n"
                      "        const idx_t i0 = (idx_t)r_;\n"
                      "        (void)i0;\n");
        cg_put(&rs, 8, &g->rpre);
        cg_put(&rs, 8, &g->body);
        buf_printf(&rs, "        return (float)(%s);\n    };\n", cg_convert(g, v, nm->r->dtype, TC_F32));
        cg_reset_bufs(g);
        g->ncache = 0;
    }
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);
    tc_plan *p = g->bufs->plan;
    int nb = p->nbufs;
    int *order = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    int nused = cg_kernel_bufs(g, order);
    for (int j = 0; j < nused; j++) {
        int i = order[j];
        buf_printf(sig, ",\n    %s%s *__restrict__ %s", cg_is_written(g, i) ? "" : "const ",
                   cg_store_type(p->bufs[i].dtype), cg_buf_name(g, i));
        cg_plan_arg(st, g->a, (parg){PARG_BUF, i, NULL, -1, TC_DT_NONE});
    }
    for (int i = 0; i < g->nsyms; i++) {
        buf_printf(sig, ",\n    const %s sz_%s", g->wide ? "long long" : "idx_t", g->syms[i]);
        cg_plan_arg(st, g->a, (parg){PARG_DIM, -1, dim_sym(g->c, g->syms[i]), -1, TC_DT_NONE});
    }
    for (int i = 0; i < g->l->g->nparams; i++) {
        if (!g->used_param[i])
            continue;
        const gparam *gp = &g->l->g->params[i];
        tc_dtype t = gp->dtype;
        buf_printf(sig, ",\n    const %s s_%s", (t == TC_F16 || t == TC_BF16) ? "float" : cg_type(t),
                   gp->name);
        cg_plan_arg(st, g->a, (parg){PARG_SCALAR, -1, NULL, i, (t == TC_F16 || t == TC_BF16) ? TC_F32 : t});
    }
    st->loops = g->loops;
    st->nloops = g->nloops;
    st->idx64 = st->idx64 || g->wide;
    if (g->wide && !g->idx64)
        buf_puts(&o, "    typedef long long idx_t; /* an index divides and multiplies back */\n");
    cg_put(&o, 4, &g->kpre);
    buf_puts(&o, buf_str(&rs));
    if (k->nstores > 0) {
        buf_puts(&o, "    auto ep = [&](const long long r_, const long long c_, const float mm_v,\n"
                     "                  const float mm_v2) {\n"
                     "        const idx_t i0 = (idx_t)r_, i1 = (idx_t)c_;\n"
                     "        (void)mm_v2;\n");
        cg_put(&o, 8, &g->rpre);
        cg_put(&o, 8, &g->body);
        buf_puts(&o, "    };\n");
    }
    return buf_str(&o);
}

/* matmul.cuh's tc_mm_cfg: the bytes of one stage (an A and a B tile,
 * each row padded by 16 bytes, and with the row-scale rule a padded row
 * of bk elements of its column scale) of a bm x bn tile, K steps of bk (0:
 * its rule: 64 for 16-row tiles of 16-bit types, 32 for wide ones and
 * the rest), and the stages (0: its rule: four, three where four pass 47
 * KB, wide tiles four whatever they take). */
static int64_t stages_bytes(int dt, bool ta, bool tb, bool norm, int bm, int bn, int bk, int stages)
{
    int sz = dt == 0 ? 4 : 2, v = 16 / sz;
    if (!bk)
        bk = bm == 16 && sz == 2 ? (bn > MM_TILE_N ? 32 : 64) : 32;
    int ar = ta ? bk : bm, ac = ta ? bm : bk, br = tb ? bn : bk, bc = tb ? bk : bn;
    int64_t stage = (int64_t)(ar * (ac + v) + br * (bc + v) + (norm ? bk + v : 0)) * sz;
    return stage * (stages ? stages : bn > MM_TILE_N || stage * 4 <= 47 * 1024 ? 4 : 3);
}

const char *cg_matmul(cg *g, cg_bufs *b, const ksched *ks, const char *name, tc_dimctx *c, tc_arena *a)
{
    const lnode *m = ks->k->ext;
    bool fused = ks->k->nstores > 0;
    if (fused && ks->mm != MM_GENERATED)
        diag_error(g->d, TC_ERR_INTERNAL, m->loc,
                   "codegen: matmul %%%d has a fused epilogue but not the generated kernel", m->id);
    int si = cg_plan_matmul(b, m, c, a);
    if (ks->mm == MM_CUBLAS)
        return NULL;
    tc_plan *p = b->plan;
    if (ks->pair_into) { /* the pair rule: the other kernel computes it, or cuBLAS here */
        const ksched *into = &g->s->k[ks->pair_into - 1];
        if (into->mm == MM_GENERATED) {
            p->nsteps--;
        } else {
            p->steps[si].guard = ks->mm_rows;
            p->steps[si].guard_max = ks->mm_max_rows;
            p->steps[si].guard_above = true;
        }
        return NULL;
    }
    pstep mm = p->steps[si];
    const lnode *m2 = ks->pair ? ks->pair->ext : NULL;
    pstep mm2 = mm;
    const lnode *mt = ks->lora ? ks->lora->ext : NULL;
    if (m2) { /* the other product's buffers (its cuBLAS step, dropped) */
        int s2 = cg_plan_matmul(b, m2, c, a); /* steps move as the plan grows */
        mm2 = p->steps[s2];
        p->nsteps--;
        if (!mt && (mm2.mm.ta != mm.mm.ta || mm2.mm.tb != mm.mm.tb || mm2.mm.a != mm.mm.a ||
                    !dim_eq(mm2.mm.m, mm.mm.m) || !dim_eq(mm2.mm.n, mm.mm.n) ||
                    !dim_eq(mm2.mm.k, mm.mm.k) || !dim_eq(mm2.mm.batch, mm.mm.batch)))
            diag_error(g->d, TC_ERR_INTERNAL, m->loc, "codegen: matmuls %%%d and %%%d are not a pair",
                       m2->id, m->id);
    }
    /* the kernel's operands and sizes: this matmul's, but with the adapter
     * rule x (x @ W's), A (x @ A's right operand) and K (x's); B, the
     * adapter's second factor, and its rank R are extra arguments */
    pstep kd = mm;
    if (mt) {
        int s3 = cg_plan_matmul(b, mt, c, a);
        pstep mmt = p->steps[s3];
        p->nsteps--;
        if (mmt.mm.a != mm2.mm.a || mmt.mm.ta != mm2.mm.ta || mmt.mm.tb != mm.mm.tb ||
            mm2.mm.tb != mm.mm.tb || mm.mm.ta || !dim_eq(mmt.mm.m, mm2.mm.m) ||
            !dim_eq(mmt.mm.k, mm2.mm.k) || !dim_eq(mm.mm.n, mm2.mm.n) || !dim_eq(mm.mm.k, mmt.mm.n))
            diag_error(g->d, TC_ERR_INTERNAL, m->loc, "codegen: matmuls %%%d, %%%d and %%%d are not an "
                       "adapter", mt->id, m2->id, m->id);
        kd.mm.a = mm2.mm.a;
        kd.mm.ta = mm2.mm.ta;
        kd.mm.b = mmt.mm.b;
        kd.mm.k = mm2.mm.k;
        kd.mm.stride_a = mm2.mm.stride_a;
        kd.mm.stride_b = mmt.mm.stride_b;
    }
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
    const fmmnorm *nm = &ks->norm;
    if (nm->rows && (kd.mm.ta || b->buf_of[nm->x->id] < 0 || (nm->g && b->buf_of[nm->g->id] < 0)))
        diag_error(g->d, TC_ERR_INTERNAL, m->loc, "codegen: matmul %%%d's row-scale operand is not "
                   "a row-major buffer", m->id);
    /* the row-scale rule: the kernel reads x where cuBLAS reads A */
    int bufs[3] = {nm->rows ? b->buf_of[nm->x->id] : kd.mm.a, kd.mm.b, kd.mm.c};
    for (int i = 0; i < 3; i++)
        cg_plan_arg(st, a, (parg){PARG_BUF, bufs[i], NULL, -1, TC_DT_NONE});
    const tc_dim *dims[] = {kd.mm.m, kd.mm.n, kd.mm.k, kd.mm.batch, kd.mm.stride_a, kd.mm.stride_b,
                            kd.mm.stride_c};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        cg_plan_arg(st, a, (parg){PARG_DIM, -1, dims[i], -1, TC_DT_NONE});
    cg_plan_arg(st, a, (parg){PARG_WORKSPACE, -1, NULL, -1, TC_DT_NONE});
    /* tiles of 16 rows, or of 64 on tensor cores for M > 16 (tc_mm); the
     * grid is the tiles of the wider kind for f16/bf16 (where the wider
     * ones run at every M > 16), the kernel strides over whatever it gets */
    const tc_dim *nt = dim_mul(c, kd.mm.batch, dim_ceildiv(c, kd.mm.n, dim_const(c, MM_TILE_N)));
    const tc_dim *t16 = dim_mul(c, nt, dim_ceildiv(c, kd.mm.m, dim_const(c, MM_TILE_M)));
    const tc_dim *t64 = dim_mul(c, nt, dim_ceildiv(c, kd.mm.m, dim_const(c, 64)));
    int dt = m->dtype == TC_F32 ? 0 : m->dtype == TC_F16 ? 1 : 2;
    /* M <= 16 at every launch (a constant, or the guard of MM_BY_ROWS):
     * only the 16-row tiles are instantiated */
    int64_t mc;
    bool skinny = ks->mm == MM_BY_ROWS ? ks->mm_max_rows <= MM_TILE_M
                                       : dim_is_const(kd.mm.m, &mc) && mc <= MM_TILE_M;
    /* TENSORC_MATMUL_BN: the 16-row f16/bf16 tiles are bn wide (the
     * 64-row ones stay MM_TILE_N; so do all before sm_80, whose FMA path
     * the kernel keeps 64 wide: this grid and workspace hold either); ntw,
     * wt: their column and whole tiles (rows rounded up to 64, as t64's:
     * the workspace's partial tiles) */
    int bn = dt && ks->mm_bn ? ks->mm_bn : MM_TILE_N;
    const tc_dim *ntw = bn == MM_TILE_N ? nt : dim_mul(c, kd.mm.batch, dim_ceildiv(c, kd.mm.n, dim_const(c, bn)));
    const tc_dim *wt = bn == MM_TILE_N ? t64 : dim_mul(c, ntw, dim_ceildiv(c, kd.mm.m, dim_const(c, 64)));
    /* (skinny: M <= 16, one row of wide tiles) */
    const tc_dim *tg = m->dtype == TC_F32 ? t16 : skinny ? wt : t64;
    /* the K slices: TENSORC_MATMUL_KSLICE's or 1024; wide tiles without
     * it (and 64-wide ones under TENSORC_MATMUL_KAUTO=1: the kernel's KS
     * -1), matmul.cuh's tc_mm_kslice (the kernel's KS 0): 1024, or fewer
     * where the tiles are few; S0 x f slices at most (S0 those of 1024, f
     * = ceil(264 / (T S0 + 1)), T the work items a slice), the grid's */
    /* not the adapter rule's (TENSORC_MATMUL_LORA): it rounds each slice's
     * x @ A to T before @ B, so more slices, more rounding (lora_t bf16 at
     * M 64, K 4097: 0.0101 of max against 0.005 at slices of 1024) */
    bool ksauto = (bn != MM_TILE_N || (ks->mm_kauto && !ks->lora)) && ks->mm_ks_auto;
    /* the work items the rule aims at: KAUTO=2 only spreads products of
     * fewer than 64 (a LoRA's x @ A), leaving those of 64-263 at 1024 */
    int target = bn == MM_TILE_N && ks->mm_kauto == 2 ? 64 : 264;
    const tc_dim *slices = dim_ceildiv(c, kd.mm.k, dim_const(c, ksauto ? 1024 : ks->mm_kslice));
    if (ksauto) {
        const tc_dim *x = dim_mul(c, dim_mul(c, wt, slices), dim_const(c, m2 ? 2 : 1));
        slices = dim_mul(c, slices, dim_ceildiv(c, dim_const(c, target), dim_add(c, x, dim_const(c, 1))));
    }
    st->grid[0] = dim_mul(c, dim_mul(c, tg, slices), dim_const(c, m2 ? 2 : 1));
    st->grid[1] = st->grid[2] = dim_const(c, 1);
    st->grid_cap = 2147483647;
    /* the knobs' variants: the stages' shared memory (dynamic past 47 KB,
     * whatever the 16- and 64-row tiles need), and a resident grid */
    bool norm = nm->rows != NULL;
    /* TENSORC_MATMUL_STREAM=occ5/occ6: 3 stages (unless TENSORC_MATMUL_STAGES
     * says), so 5 or 6 blocks' stages fit a SM's 228 KB */
    /* blocks a SM by registers; wide tiles 3 (168 registers: 16 or 32
     * accumulators, and at 256 the stages' 72 KB allow 3) */
    int occ = bn != MM_TILE_N ? 3 : ks->mm_occ > 4 ? ks->mm_occ : 4;
    int stg = ks->mm_stages ? ks->mm_stages : occ > 4 ? 3 : 0;
    int64_t smb = stages_bytes(dt, kd.mm.ta, kd.mm.tb, norm, 16, bn, ks->mm_bk, stg);
    int64_t smb64 = dt && !skinny ? stages_bytes(dt, kd.mm.ta, kd.mm.tb, norm, 64, MM_TILE_N, ks->mm_bk, stg)
                                  : 0;
    smb = smb > smb64 ? smb : smb64;
    if (smb > 227 * 1024) /* only under the knobs: an sm_90 block's most */
        diag_error(g->d, TC_ERR_LIMIT, m->loc, "matmul %%%d: TENSORC_MATMUL_STAGES, _BK and _BN "
                   "ask for %lld bytes of shared memory a block (at most %d)", m->id, (long long)smb,
                   227 * 1024);
    if ((stg || ks->mm_bk || bn != MM_TILE_N) && smb > 47 * 1024)
        st->shmem = (int)smb;
    st->resident = ks->mm_resident > 0;
    if (ks->mm_resident == 1) /* SMs x blocks a SM (228 KB of shared memory, occ by registers) */
        st->grid_cap = MM_SMS * (228 * 1024 / (smb + 2048) < occ ? 228 * 1024 / (smb + 2048) : occ);
    else if (ks->mm_resident > 1)
        st->grid_cap = ks->mm_resident;
    st->block[0] = MM_THREADS;
    st->block[1] = st->block[2] = 1;
    /* a 16-byte ticket per 16-row tile, then an f32 partial tile per tile
     * and slice, rows rounded up to 64: room for either tiling (at bn > 64
     * the wide tiles' room, at least the 64-wide ones') */
    st->ws_bytes = dim_add(c, dim_mul(c, t16, dim_const(c, 16)),
                           dim_mul(c, dim_mul(c, wt, slices),
                                   dim_const(c, (int64_t)64 * bn * 4 * (m2 ? 2 : 1))));
    if (nm->rows) /* and each slice's sums of squares, 64 rows a tile */
        st->ws_bytes = dim_add(c, st->ws_bytes,
                               dim_mul(c, dim_mul(c, t64, slices), dim_const(c, (int64_t)64 * 4)));
    st->idx64 = p->idx64;
    const char *t = cg_store_type(m->dtype);
    tc_buf sig;
    buf_init(&sig, a);
    int c2 = -1;
    if (m2) {
        buf_printf(&sig, ",\n    const %s *__restrict__ b2, %s *__restrict__ c2", t, t);
        cg_plan_arg(st, a, (parg){PARG_BUF, mm2.mm.b, NULL, -1, TC_DT_NONE});
        c2 = st->nargs;
        cg_plan_arg(st, a, (parg){PARG_BUF, mm2.mm.c, NULL, -1, TC_DT_NONE});
    }
    if (mt) {
        buf_printf(&sig, ",\n    const %s *__restrict__ bd, const idx_t r", t);
        cg_plan_arg(st, a, (parg){PARG_BUF, mm.mm.b, NULL, -1, TC_DT_NONE});
        cg_plan_arg(st, a, (parg){PARG_DIM, -1, mm.mm.k, -1, TC_DT_NONE});
    }
    if (nm->g) {
        buf_printf(&sig, ",\n    const %s *__restrict__ mm_g", cg_store_type(m->dtype));
        cg_plan_arg(st, a, (parg){PARG_BUF, b->buf_of[nm->g->id], NULL, -1, TC_DT_NONE});
    }
    const fkernel *ek = ks->epi; /* the epilogue rule: E's stores as if fused */
    const char *ep = fused || ek || nm->rows ? epilogue(g, st, &sig, nm, m2, ek) : "";
    fused = fused || ek;
    pkernel *k = cg_plan_table(b, a, st, name);
    k->params[2].written = true;
    if (c2 >= 0)
        k->params[c2].written = true;
    for (int i = 0; i < st->nargs; i++)
        if (i > 2 && st->args[i].kind == PARG_BUF && cg_is_written(g, st->args[i].buf))
            k->params[i].written = true;
    /* tc_mm's template arguments and call arguments past the workspace */
    const char *targs = arena_printf(a, "%d, %s, %s, %s, %d, %s, %s", dt, kd.mm.ta ? "true" : "false",
                                     kd.mm.tb ? "true" : "false", nm->rows ? "true" : "false", m2 ? 2 : 1,
                                     mt ? "true" : "false", skinny ? "true" : "false");
    bool wide = bn != MM_TILE_N, g1 = stg || ks->mm_bk || ks->mm_resident || wide;
    if (g1) /* stages, K step, dynamic shared memory, the next item's stages issued early */
        targs = arena_printf(a, "%s, %d, %d, %d, %s", targs, stg, ks->mm_bk, st->shmem,
                             ks->mm_resident ? "true" : "false");
    if (ks->mm_fence != 1 || ks->mm_slices_outer || ks->mm_copy || wide) /* who fences around the
                                                                          * ticket and how; the work
                                                                          * items slice by slice; the
                                                                          * weight's copies; the
                                                                          * 16-row tiles' columns */
        targs = arena_printf(a, "%s%s, %d%s%s%s", targs, g1 ? "" : ", 0, 0, 0, false", ks->mm_fence,
                             ks->mm_slices_outer ? ", true" : ks->mm_copy || wide ? ", false" : "",
                             ks->mm_copy || wide ? arena_printf(a, ", %d", ks->mm_copy) : "",
                             wide ? arena_printf(a, ", %d", bn) : "");
    const char *cargs = !nm->rows && !m2 ? (fused ? ", ep" : "")
                        : arena_printf(a, ", %s, %s, %s%s", fused ? "ep" : "tc_mm_noep()",
                                       nm->rows ? "rs" : "tc_mm_nors()", nm->g ? "mm_g" : "nullptr",
                                       m2 ? (mt ? ", b2, c2, bd, r" : ", b2, c2") : "");
    const char *what = "";
    if (nm->rows)
        what = arena_printf(a, "; a is %%%d's x: the row-scale rule (%%%d's rows scaled by rs as they are "
                            "stored%s)", nm->rows->stores[0]->id, m->id,
                            nm->g ? ", x's columns by mm_g as loaded" : "");
    if (m2)
        what = arena_printf(a, "; c2 = a%s @ b2%s (%%%d) too: the pair rule", kd.mm.ta ? ".T" : "",
                            kd.mm.tb ? ".T" : "", m2->id);
    if (mt)
        what = arena_printf(a, "; with the adapter rule c = (a @ b%s) @ bd%s summed over K slices (%%%d = "
                            "a @ b not stored), c2 = a @ b2%s (%%%d)", kd.mm.tb ? ".T" : "",
                            kd.mm.tb ? ".T" : "", mt->id, kd.mm.tb ? ".T" : "", m2->id);
    if (ek)
        what = arena_printf(a, "%s; the epilogue stores kernel %d's values too (the epilogue rule: that "
                            "kernel runs only beside cuBLAS)", what, ek->id);
    return arena_printf(a,
                        "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(\n"
                        "    const %s *__restrict__ a, const %s *__restrict__ b, %s *__restrict__ c,\n"
                        "    const idx_t m, const idx_t n, const idx_t k, const idx_t batch,\n"
                        "    const idx_t stride_a, const idx_t stride_b, const idx_t stride_c,\n"
                        "    void *__restrict__ ws%s)\n"
                        "{\n"
                        "    /* c[%s, %s] = a%s @ b%s, %s%s%s */\n"
                        "%s"
                        "    tc_mm<%s>(a, b, c, m, n, k, batch, stride_a, stride_b, stride_c,\n"
                        "                     (unsigned char *)ws, %d%s);\n"
                        "}\n",
                        MM_THREADS, occ, name, t, t, t, buf_str(&sig), dim_str(a, kd.mm.m), dim_str(a, kd.mm.n),
                        kd.mm.ta ? ".T" : "", kd.mm.tb ? ".T" : "", dtype_name(m->dtype), what,
                        fused ? "; the epilogue on each element as it is stored" : "", ep, targs,
                        ksauto ? (bn != MM_TILE_N ? 0 : -ks->mm_kauto) : ks->mm_kslice, cargs);
}
