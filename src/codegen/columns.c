/* columns.c - split SCH_COLUMNS: each block reduces a slice of the reduced
 * range into partials in the workspace; the last block of a column group
 * combines them.  Scalar, or CV columns a thread by vector loads.
 */
#include "codegen/cg.h"

#include <string.h>

/* Split column reductions: after writing its partials, a block takes a
 * ticket; only the last of the S slices of its column group goes on (to
 * combine them), after a fence so it sees every other slice's partials. */
static void last_block_only(cg_w *w, int S)
{
    cg_wl(w, "__shared__ bool last_block;");
    cg_wl(w, "__threadfence();");
    cg_wl(w, "__syncthreads();");
    cg_wl(w, "if (threadIdx.x == 0 && threadIdx.y == 0)");
    cg_wbody(w, "last_block = atomicAdd(ticket, 1u) == %du;", S - 1);
    cg_wl(w, "__syncthreads();");
    cg_wl(w, "if (!last_block)");
    cg_wbody(w, "return;");
    cg_wl(w, "__threadfence();");
}

/* COLUMNS with the reduced range split in ks->split slices: block b takes
 * column group b / split and slice b % split, writes one partial per
 * column, and the last block of a column group to finish combines them in
 * slice order and stores (a ticket per group in the workspace, reset by
 * that block).  Workspace: 16 bytes of ticket per group, then per
 * reduction split * rows partials of 16 bytes (a region per reduction, addressed in bytes: a
 * 4-byte partial indexed as its own type would overlap the previous reduction's region). */
/* The index variables of a split column kernel (CV columns a thread) and
 * the limits that bound them: a slice's end (lo + chunk, at most len + S),
 * the reduced loop (r += blockDim.y), a thread's columns (c0 + e, up to a
 * column group past rows) and the partials (reduction j, slice, column). */
static void split_loops(cg *g, int CV)
{
    const ksched *ks = g->ks;
    tc_dimctx *c = g->c;
    cg_loop(g, "lo + chunk", ks->rowlen, dim_const(c, ks->split));
    cg_loop(g, "r", ks->rowlen, dim_const(c, ks->block[1]));
    cg_limit(g, dim_add(c, ks->rowlen, dim_const(c, 1024)));
    const tc_dim *cols = dim_const(c, (int64_t)2 * ks->block[0] * CV);
    cg_loop(g, CV > 1 ? "c0 + e" : "cb + threadIdx.x", ks->rows, cols);
    cg_limit(g, dim_add(c, ks->rows, cols));
    const tc_dim *parts = dim_mul(c, ks->rows, dim_const(c, (int64_t)ks->split * g->k->nreds));
    cg_loop(g, "partial", parts, NULL);
    cg_limit(g, parts);
}

/* The text both split kernels share, written once: the prologue (sizes,
 * this block's column group and slice [lo, hi) of the reduced range),
 * reduction j's partials in the workspace, the block-level reduce of an
 * accumulator, the last block's combine of the S partials and its reset of
 * them, and the ticket's reset.  The scalar kernel's accumulators are
 * acc<n>, the vector kernel's acc<n>[e] (sfx "[e]"), at the writer's depth. */
static void split_head(cg *g, cg_w *w, int S, int CV)
{
    const ksched *ks = g->ks;
    /* one at a time: cg_index names a size parameter at its first use, so the
     * signature's order must not hang on the order arguments are evaluated */
    const char *rows = cg_index(g, ks->rows);
    const char *len = cg_index(g, ks->rowlen);
    cg_wl(w, "const idx_t rows = %s, len = %s;", rows, len);
    if (CV > 1)
        cg_wl(w, "const idx_t groups = (rows + blockDim.x * %d - 1) / (blockDim.x * %d);", CV, CV);
    else
        cg_wl(w, "const idx_t groups = (rows + blockDim.x - 1) / blockDim.x;");
    /* TENSORC_COL_ORDER=1: slice-major, so the blocks resident at once read
     * whole rows of the input (every column group of a few slices) rather
     * than one column group's 256 bytes in each of S distant rows; the same
     * work per (group, slice), so the same bits */
    if (g->f->knobs.col_order == 1)
        cg_wl(w, "const idx_t group = blockIdx.x %% groups, slice = blockIdx.x / groups;");
    else
        cg_wl(w, "const idx_t group = blockIdx.x / %d, slice = blockIdx.x %% %d;", S, S);
    cg_wl(w, "const idx_t chunk = (len + %d - 1) / %d, lo = slice * chunk;", S, S);
    cg_wl(w, "const idx_t hi = lo + chunk < len ? lo + chunk : len;");
}

static void split_parts_decl(cg *g, cg_w *w, int j, int S)
{
    const lnode *r = g->k->reds[j];
    const char *at = cg_acc_type(g, r);
    cg_wl(w, "%s *part%d = (%s *)((char *)ws + 16 * groups + (idx_t)%d * %d * 16 * rows);", at,
          cg_rno(g, r), at, j, S);
}

static void split_block_reduce(cg *g, cg_w *w, const lnode *r, const char *sfx)
{
    int rn = cg_rno(g, r);
    cg_wl(w, "acc%d%s = tc_col_reduce(acc%d%s, %s(), (%s *)tc_smem);", rn, sfx, rn, sfx,
          cg_red_op(r), cg_acc_type(g, r));
}

static void split_combine(cg *g, cg_w *w, const lnode *r, int S, const char *sfx)
{
    int rn = cg_rno(g, r);
    cg_wl(w, "acc%d%s = %s;", rn, sfx, cg_acc_init(g, r));
    cg_wl(w, "for (int s = 0; s < %d; s++)", S);
    cg_wbody(w, "acc%d%s = %s()(acc%d%s, tc_ldcg(part%d + s * rows + row));", rn, sfx, cg_red_op(r),
             rn, sfx, rn);
}

/* every partial of the block's columns back to zero, as the launch plan promises */
static void split_zero_parts(cg *g, cg_w *w, const char *col)
{
    for (int j = 0; j < g->k->nreds; j++)
        cg_wl(w, "part%d[s * rows + %s] = %s;", cg_rno(g, g->k->reds[j]), col,
              cg_acc_zero(g, g->k->reds[j]));
}

static void split_tail(cg_w *w)
{
    cg_wl(w, "if (threadIdx.x == 0 && threadIdx.y == 0)");
    cg_wbody(w, "*ticket = 0; /* ready for the next launch */");
}

void cg_columns_split(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int S = ks->split;
    split_loops(g, 1);
    g->elemvars = k->mask;
    g->rowvars = cg_all_axes(k) & ~k->mask;
    cg_reset_bufs(g);
    g->phase = 0;
    cg_block decl = {0};
    cg_accumulate(g, 0, &decl, 4, "r");
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]))
            cg_store(g, T_ELEM, k->stores[i], "active");
    cg_block body = g->body, pass_rpre = g->rpre;
    cg_forget(g, T_ELEM);
    tc_buf post;
    buf_init(&post, g->a);
    cg_finish_pass(g, 0, &post, 4, NULL);
    g->phase = 1;
    cg_reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]))
            cg_store(g, T_ELEM, k->stores[i], NULL);

    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    split_head(g, &w, S, 1);
    cg_wl(&w, "const idx_t cb = group * blockDim.x;");
    cg_wl(&w, "const bool active = cb + threadIdx.x < rows;");
    cg_wl(&w, "/* idle threads work on the last column so every load stays in bounds */");
    cg_wl(&w, "const idx_t row = active ? cb + threadIdx.x : rows - 1;");
    cg_decompose(g, o, w.ind, "row", cg_all_axes(k) & ~k->mask);
    cg_wput(&w, &pass_rpre);
    cg_put(o, 0, &decl); /* declarations made at their own depth */
    cg_wopen(&w, "for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {");
    cg_decompose(g, o, w.ind, "r", k->mask);
    cg_wput(&w, &body);
    cg_wclose(&w, "}");
    cg_wl(&w, "unsigned *ticket = (unsigned *)ws + 4 * group;");
    for (int j = 0; j < k->nreds; j++) {
        int rn = cg_rno(g, k->reds[j]);
        split_block_reduce(g, &w, k->reds[j], "");
        split_parts_decl(g, &w, j, S);
        cg_wl(&w, "if (threadIdx.y == 0 && active)");
        cg_wbody(&w, "part%d[slice * rows + row] = acc%d;", rn, rn);
    }
    last_block_only(&w, S);
    for (int j = 0; j < k->nreds; j++)
        split_combine(g, &w, k->reds[j], S, "");
    cg_wl(&w, "__syncthreads();");
    cg_wl(&w, "if (threadIdx.y == 0 && active)");
    cg_win(&w);
    cg_wopen(&w, "for (int s = 0; s < %d; s++) {", S);
    split_zero_parts(g, &w, "row");
    cg_wclose(&w, "}");
    w.ind -= 4;
    buf_puts(o, buf_str(&post));
    cg_wput(&w, &g->rpre);
    cg_wopen(&w, "if (threadIdx.y == 0 && active) {");
    cg_wput(&w, &g->body);
    cg_wclose(&w, "}");
    split_tail(&w);
}

/* COLUMNS split, CV = ks->vec consecutive kept elements (columns) a thread:
 * one 16-byte load covers them where the reads are contiguous along the
 * last (kept) axis and aligned, tested once per thread; else each column
 * by scalar loads.  Accumulators are arrays, one slot per column; the rest
 * is columns_split's, per column.  Only kernels without element-level
 * stores (sched.c). */
void cg_columns_split_vec(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int S = ks->split, CV = ks->vec, rank = k->rank;
    unsigned kept = cg_all_axes(k) & ~k->mask;
    split_loops(g, CV);
    g->phase = 0;
    /* the vector body: reduced variables vary, kept ones fixed per thread */
    g->elemvars = k->mask;
    g->rowvars = kept;
    int U = ks->unroll;
    if (U > 1) /* loads recorded for the unrolled loop (cg_vbody) */
        cg_vbody_begin(g, CV, rank - 1);
    else
        cg_vector_begin(g, CV, rank - 1);
    g->v.cols = true;
    for (int e = 0; e < CV; e++) {
        g->v.k = e;
        g->acc_at = arena_printf(g->a, "%d", e);
        cg_accumulate_at(g, 0, NULL, 0, "r", e, false); /* e: a column, not a position */
    }
    g->v.cols = false;
    g->v.n = 1;
    cg_vbody vb = U > 1 ? cg_vbody_end(g) : (cg_vbody){g->body, g->body};
    cg_block vbody = vb.all, vrpre = g->rpre;
    int nhl = g->v.nhl;
    const struct cg_hload *hl = g->v.hl;
    int nalign = g->v.nalign;
    const char **align = g->v.align;
    g->v.align = NULL;
    g->v.nalign = g->v.capalign = 0;
    cg_forget(g, T_ROW);
    /* the scalar body: one column (e) at a time, everything inside the loop */
    cg_reset_bufs(g);
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    g->acc_at = "e";
    cg_accumulate(g, 0, NULL, 0, "r");
    cg_block sbody = g->body, srpre = g->rpre;
    cg_forget(g, T_ROW);
    /* the results and the final stores, per column */
    g->elemvars = k->mask;
    g->rowvars = kept;
    tc_buf post;
    buf_init(&post, g->a);
    cg_finish_pass(g, 0, &post, 8, NULL);
    g->acc_at = NULL;
    g->phase = 1;
    cg_reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);

    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    split_head(g, &w, S, CV);
    cg_wl(&w, "const idx_t c0 = (group * blockDim.x + threadIdx.x) * %d; /* this thread's first column */",
          CV);
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        int rn = cg_rno(g, r);
        cg_wl(&w, "%s acc%d[%d];", cg_acc_type(g, r), rn, CV);
        cg_wl(&w, "#pragma unroll");
        cg_wl(&w, "for (int e = 0; e < %d; e++)", CV);
        cg_wbody(&w, "acc%d[e] = %s;", rn, cg_acc_init(g, r));
    }
    cg_wopen(&w, "{");
    cg_wl(&w, "const idx_t row = c0;");
    cg_decompose(g, o, w.ind, "row", kept);
    /* the vector path's test: one line, its alignment conditions continued below it */
    buf_printf(o, "%*sif (c0 + %d <= rows", w.ind, "", CV);
    if (__builtin_popcount(kept) > 1) /* the vector stays in one row of the last dim */
        buf_printf(o, " && i%d + %d <= %s", rank - 1, CV, cg_index(g, k->dom[rank - 1]));
    for (int i = 0; i < nalign; i++)
        buf_printf(o, " &&\n%*s%s", w.ind + 4, "", align[i]);
    buf_puts(o, ") {\n");
    cg_win(&w);
    cg_wput(&w, &vrpre);
    if (U > 1) {
        /* U rows a step, every load into an array before the first add
         * (one row at a time, and even a loop unrolled without exits,
         * kept one or two 16-byte loads in flight a thread); then the rest
         * one by one.  The same rows in the same order as the plain loop:
         * the same bits. */
        cg_wl(&w, "idx_t r0 = lo + threadIdx.y;");
        cg_wopen(&w, "for (; hi - r0 > (idx_t)blockDim.y * %d; r0 += (idx_t)blockDim.y * %d) {", U - 1, U);
        for (int i = 0; i < nhl; i++)
            cg_wl(&w, "tc_vec<%s, %d> %s_u[%d];", hl[i].type, hl[i].n, hl[i].name, U);
        cg_wl(&w, "#pragma unroll");
        cg_wopen(&w, "for (int u_ = 0; u_ < %d; u_++) {", U);
        cg_wl(&w, "const idx_t r = r0 + u_ * (idx_t)blockDim.y;");
        cg_decompose(g, o, w.ind, "r", k->mask);
        for (int i = 0; i < nhl; i++)
            cg_wl(&w, "%s_u[u_] = tc_vload<%s, %d>(%s);", hl[i].name, hl[i].type, hl[i].n, hl[i].addr);
        cg_wclose(&w, "}");
        cg_wl(&w, "#pragma unroll");
        cg_wopen(&w, "for (int u_ = 0; u_ < %d; u_++) {", U);
        cg_wl(&w, "const idx_t r = r0 + u_ * (idx_t)blockDim.y;");
        cg_decompose(g, o, w.ind, "r", k->mask);
        for (int i = 0; i < nhl; i++)
            cg_wl(&w, "const tc_vec<%s, %d> %s = %s_u[u_];", hl[i].type, hl[i].n, hl[i].name, hl[i].name);
        cg_wput(&w, &vb.rest);
        cg_wclose(&w, "}");
        cg_wclose(&w, "}");
        cg_wopen(&w, "for (idx_t r = r0; r < hi; r += blockDim.y) {");
    } else {
        cg_wl(&w, "#pragma unroll 4");
        cg_wopen(&w, "for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {");
    }
    cg_decompose(g, o, w.ind, "r", k->mask);
    cg_wput(&w, &vbody);
    cg_wclose(&w, "}");
    cg_wclose(&w, "} else {");
    cg_win(&w);
    cg_wopen(&w, "for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {");
    cg_decompose(g, o, w.ind, "r", k->mask);
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int e = 0; e < %d; e++) {", CV);
    cg_wl(&w, "/* columns past the end read the last one, so loads stay in bounds */");
    cg_wl(&w, "const idx_t row = c0 + e < rows ? c0 + e : rows - 1;");
    cg_decompose(g, o, w.ind, "row", kept);
    cg_wput(&w, &srpre);
    cg_wput(&w, &sbody);
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wl(&w, "unsigned *ticket = (unsigned *)ws + 4 * group;");
    for (int j = 0; j < k->nreds; j++)
        split_parts_decl(g, &w, j, S);
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int e = 0; e < %d; e++) {", CV);
    for (int j = 0; j < k->nreds; j++) {
        int rn = cg_rno(g, k->reds[j]);
        split_block_reduce(g, &w, k->reds[j], "[e]");
        cg_wl(&w, "if (threadIdx.y == 0 && c0 + e < rows)");
        cg_wbody(&w, "part%d[slice * rows + c0 + e] = acc%d[e];", rn, rn);
    }
    cg_wclose(&w, "}");
    last_block_only(&w, S);
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int e = 0; e < %d; e++) {", CV);
    cg_wl(&w, "const idx_t row = c0 + e < rows ? c0 + e : rows - 1;");
    for (int j = 0; j < k->nreds; j++)
        split_combine(g, &w, k->reds[j], S, "[e]");
    cg_wclose(&w, "}");
    cg_wl(&w, "__syncthreads();");
    cg_wl(&w, "if (threadIdx.y == 0)");
    cg_win(&w);
    cg_wl(&w, "for (int e = 0; e < %d && c0 + e < rows; e++)", CV);
    cg_win(&w);
    cg_wopen(&w, "for (int s = 0; s < %d; s++) {", S);
    split_zero_parts(g, &w, "c0 + e");
    cg_wclose(&w, "}");
    w.ind -= 8;
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int e = 0; e < %d; e++) {", CV);
    cg_wl(&w, "const bool active = c0 + e < rows;");
    cg_wl(&w, "const idx_t row = active ? c0 + e : rows - 1;");
    cg_decompose(g, o, w.ind, "row", kept);
    buf_puts(o, buf_str(&post));
    cg_wput(&w, &g->rpre);
    cg_wopen(&w, "if (threadIdx.y == 0 && active) {");
    cg_wput(&w, &g->body);
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    split_tail(&w);
}
