/* rows.c - SCH_ROWS and unsplit SCH_COLUMNS: a loop over rows (kept
 * elements) and the passes over each, looped or kept in registers.
 *
 * A rows kernel with a cluster (sched.h, "Clusters") shares each row
 * among the cluster's ncl blocks: block `crank` takes every ncl-th run of
 * blockDim.x vectors, starting at its rank (runs of 16 KB of f32: DRAM
 * reads stay long and contiguous, and the index costs no more registers
 * than one block's: a start and a stride; contiguous slices [lo, hi) cost
 * two registers more and spilled under the 40-register cap).  Each pass's
 * combine also exchanges partials across the cluster (tc_cluster_reduce,
 * helpers.cuh).  With one block a cluster (no cluster launch, or before
 * sm_90) this is the plain row. *
 * Column partials (fuse.h; ks->rblock): the block takes rblock rows at a
 * time (col_rows), each row as above; the epilogue pass adds each column
 * sum's input at the element to the thread's sum for it, in registers
 * (cpN[item * vec + e]) where the row is kept in them, else straight into
 * the block's partial row (cpartN[grp * len + r]; the first looped row of
 * the block zeroes it), and after its rows the block writes (or, if a row
 * looped, adds) the registers' sums into its partial row.  A thread owns
 * the same elements in every row (blockDim.x is fixed by the row length),
 * so the sums need no exchange, and their order is the rows' order.
 */
#include "codegen/cg.h"

#include <string.h>

/* Column partials (fuse.h): in the epilogue, each column sum's input at
 * this element added to the thread's sum for it: in registers (cpN, a slot
 * per item and vector element) where the row is kept in them, else in the
 * block's partial row (the thread owns element r in every row). */
static void col_accumulate(cg *g, int items, int vec)
{
    const fkernel *k = g->k;
    int rank = k->rank;
    for (int e = 0; e < vec; e++) {
        g->v.k = e;
        const tc_dim *idx[TC_MAX_RANK];
        for (int i = 0; i < rank; i++)
            idx[i] = g->l->vars[i];
        if (e) /* element e of the vector along the last axis */
            idx[rank - 1] = dim_add(g->c, g->l->vars[rank - 1], dim_const(g->c, e));
        for (int j = 0; j < k->ncols; j++) {
            const lnode *c = k->cols[j];
            const char *v = cg_convert(g, cg_value(g, c->in[0].src, idx), c->in[0].src->dtype, c->dtype);
            if (items) {
                const char *slot = arena_printf(g->a, "cp%d[j * %d + %d]", c->id, vec, e);
                if (g->eguard)
                    cg_line(g, T_ELEM, c, "%s = %s ? %s + %s : %s;", slot, g->eguard, slot, v, slot);
                else
                    cg_line(g, T_ELEM, c, "%s += %s;", slot, v);
            } else {
                int pb = g->bufs->part_of[c->id];
                cg_use_buf(g, pb);
                cg_line(g, T_ELEM, c, "%s[tc_pb + r] += %s;", cg_buf_name(g, pb), v);
            }
        }
    }
}

/* TENSORC_ROWS_PIPE (sched_rows_pipe): the first pass reads the row from
 * this thread's own slots of tc_pipe (16 bytes an item a load: the first
 * pass's vector loads, g->v.pl), filled by cp.async copies of exactly those
 * vectors (an item past the row's end: its first vector, as the loads
 * read it without the pipe).  A row's copies are made once the previous
 * row of the cluster is in registers (pipe_prefetch), so they land while
 * that row reduces and stores; the cluster's first row, or one after a
 * looped row, makes its own first (pipe_enter).  A thread reads only what
 * it copied, after its own wait: no barrier.  The same elements a thread,
 * the same order: the same bits as without the pipe. */
static void pipe_copies(cg *g, cg_w *w, int items, int vec, const char *stage)
{
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int j = 0; j < %d; j++) {", items);
    cg_wl(w, "const idx_t rj_ = ((j * ncl + crank) * blockDim.x + threadIdx.x) * %d;", vec);
    /* an item past the row's end copies the row's first vector, as the
     * loads without the pipe read it (accum.c: a max takes it unguarded) */
    cg_wl(w, "const idx_t r = rj_ < len ? rj_ : 0;");
    cg_decompose(g, w->o, w->ind, "r", g->k->mask);
    for (int q = 0; q < g->v.npl; q++)
        cg_wl(w, "tc_cp_async<%d>(tc_pipe + ((%s%d + j) * blockDim.x + threadIdx.x) * 16, %s);", g->v.pl[q].bytes,
              stage, q * items, g->v.pl[q].addr);
    cg_wclose(w, "}");
    cg_wl(w, "tc_cp_commit();");
}

/* Resident (ks->resident): two stages of stage_slots slots, tc_stg the
 * first slot of this row's; the next row's copies go to the other stage,
 * and every pass reads this row from its slots (load.c), not registers.
 * The stage flips where the row was prefetched. */
static int stage_slots(const cg *g, int items) { return g->v.npl * items; }

static const char *pipe_stage(cg *g, bool next, int items)
{
    if (!g->ks->resident)
        return "";
    return next ? arena_printf(g->a, "(%d - tc_stg) + ", stage_slots(g, items)) : "tc_stg + ";
}

/* before the first pass: this row's slice in the slots */
static void pipe_enter(cg *g, tc_buf *row, int ind, int items, int vec)
{
    cg_w w = {row, ind};
    cg_wopen(&w, "if (tc_pre != row) { /* not prefetched (the cluster's first row, or after a looped one) */");
    cg_wl(&w, "if (tc_pre < rows) /* a looped row's copies: landed before these overwrite them */");
    cg_wbody(&w, "tc_cp_wait();");
    pipe_copies(g, &w, items, vec, pipe_stage(g, false, items));
    if (g->ks->resident) {
        cg_wclose(&w, "} else {");
        w.ind += 4;
        cg_wl(&w, "tc_stg = %d - tc_stg; /* the prefetch's stage */", stage_slots(g, items));
    }
    cg_wclose(&w, "}");
    cg_wl(&w, "tc_cp_wait(); /* this thread's copies of the row have landed */");
}

/* after the first pass: the cluster's next row's slice on its way, if that
 * row's vectors are aligned (tc_pre: that row, else rows).  Column
 * partials (TENSORC_COLPART_PREFETCH, no cluster: ncl 1): the block's next
 * row, or its next block of rows' first (col_rows' grid stride). */
static void pipe_prefetch(cg *g, tc_buf *row, int ind, int items, int vec)
{
    const fkernel *k = g->k;
    cg_w w = {row, ind};
    if (g->ks->rblock) {
        cg_wopen(&w, "{ /* the block's next row: this thread's slice into its slots while this row reduces */");
        cg_wl(&w, "const idx_t tc_nx = rhi - row > 1 ? row + 1 : tc_nb - grp > (idx_t)gridDim.x ? "
                  "(grp + gridDim.x) * %d : rows;", g->ks->rblock);
    } else {
        cg_wopen(&w, "{ /* the cluster's next row: this thread's slice into its slots while this row reduces */");
        if (!g->ticket) /* else the loop's tc_nx, known a row ahead (cg_rows) */
            cg_wl(&w, "const idx_t tc_nx = rows - row > (idx_t)(gridDim.x / ncl) ? row + gridDim.x / ncl : rows;");
    }
    cg_wl(&w, "const idx_t row = tc_nx;");
    cg_decompose(g, row, w.ind, "row", cg_all_axes(k) & ~k->mask);
    buf_printf(row, "%*stc_pre = row < rows", w.ind, "");
    for (int q = 0; q < g->v.npl; q++)
        buf_printf(row, " && tc_aligned(%s, %d)", g->v.pl[q].start, g->v.pl[q].bytes);
    buf_puts(row, " ? row : rows;\n");
    cg_wopen(&w, "if (tc_pre < rows) {");
    pipe_copies(g, &w, items, vec, pipe_stage(g, true, items));
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
}

/* The passes over one row, appended to row at indentation ind.  Looped:
 * each pass strides the row.  Persistent (items > 0): each thread takes
 * `items` elements of the row, fully unrolled, and what it loads in one
 * pass stays in registers (pc arrays) for the next, so the row is read
 * from memory once. */
static void passes(cg *g, tc_buf *row, int ind, bool columns, int items, int vec, bool sliced)
{
    /* the runs of the row this block takes: every ncl-th, from crank */
    const char *jrun = sliced ? "(j * ncl + crank)" : "j";
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    const char *combine = columns ? "tc_col_reduce"
                          : g->ks->compact ? "tc_block_reduce_ni"
                          : sliced ? "tc_cluster_reduce" : "tc_block_reduce";
    g->combine_args = sliced && g->ticket ? "tc_cl, tc_turn, ncl, tc_push, &tc_tkon, &tc_tk"
                      : sliced            ? "tc_cl, tc_turn, ncl, tc_push"
                                          : NULL;
    /* a pass's reductions two at a time: half the barriers (cross-entropy's
     * first pass: the target's logit and the max) */
    g->combine2 = columns || g->ks->compact ? NULL : sliced ? "tc_cluster_reduce2" : "tc_block_reduce2";
    const char *tid = columns ? "threadIdx.y" : "threadIdx.x";
    const char *nth = columns ? "blockDim.y" : "blockDim.x";
    g->pr.items = items;
    g->pr.ncache = 0;
    g->pr.nkeep = 0;
    /* the max and sum of exp pair in one combine (sched_rpair): rows in
     * registers, shared by a cluster or (TENSORC_ROWS_PAIR=2) any */
    bool rpair = items && !columns && ks->rpair && (ks->rpair == 2 || sliced);
    g->pr.rpair = rpair;
    g->pr.kscale = NULL;
    if (items && !columns) /* values the epilogue takes from the last pass (keep.c) */
        cg_keep_plan(g, vec);
    g->v.row = vec > 1;
    g->v.last = k->rank - 1;
    g->v.nalign = 0;
    /* TENSORC_ROWS_PIPE: the first pass goes to p0, after pipe_enter's
     * copies, which only its loads name */
    bool pipe = (sliced || ks->rblock) && items && ks->pipe && vec > 1; /* sched_rows_pipe: no online pair */
    tc_buf *out = row, p0;
    if (pipe) {
        buf_init(&p0, g->a);
        row = &p0;
    }
    g->v.npl = 0;
    for (int p = 0; p <= ks->nphases; p++) {
        cg_reset_bufs(g);
        /* the first pass reads the row: its loads all in flight at once;
         * later passes read registers, and their loads (a weight) under the
         * branch keep registers for the row (layernorm f32 spilled 212
         * bytes at the 40-register cap with every pass unbranched) */
        /* the pass that keeps values for the epilogue (keep.c) runs
         * unbranched too: under the branch ptxas spilled them (softmax's
         * _w kernel, 100 bytes at the 64-register cap; none unbranched) */
        bool unbranched = items && (p == 0 || (g->pr.nkeep && p == g->pr.keep_phase));
        g->eguard = unbranched ? "tc_in" : NULL;
        g->phase = p;
        g->v.n = vec;
        g->v.nload = 0; /* vector temporaries live in one pass's loop */
        for (int q = 0; q < g->v.npl; q++) /* so do the resident slots' copies */
            g->v.pl[q].sv = NULL;
        cg_block decl = {0};
        bool last = p == ks->nphases;
        /* the online pair (sched_online.c): nothing is kept for a later
         * pass, so the registers' chunk steps over the row, every vector
         * load of a step first (g->v.hl), then the math on each */
        bool chunks = items && ks->online_sum && !last && vec > 1;
        g->v.onvec = chunks && ks->online_vec;
        if (chunks) {
            g->v.hoist = true;
            g->v.nhl = 0;
            g->v.loads = (cg_block){0};
        }
        g->v.pipe = pipe && p == 0;
        if (!last) {
            for (int e = 0; e < vec; e++) {
                g->v.k = e;
                cg_accumulate_at(g, p, e == 0 ? &decl : NULL, ind, "r", e, true);
            }
        }
        g->v.pipe = false;
        g->v.hoist = false;
        g->v.onvec = false;
        /* element-level stores: in the epilogue pass of a rows kernel, in
         * the first pass of a columns kernel (they need no reduction there) */
        bool elem_here = columns ? p == 0 : last;
        bool any_elem = false;
        for (int i = 0; i < k->nstores; i++)
            if (fuse_is_element(k, k->stores[i]) && elem_here) {
                if (vec > 1)
                    cg_vector_store(g, k->stores[i], vec);
                else
                    cg_store(g, T_ELEM, k->stores[i], columns ? "active" : NULL);
                any_elem = true;
            }
        if (last && !columns && k->ncols) {
            col_accumulate(g, items, vec);
            any_elem = true;
        }
        g->v.n = 1;
        g->eguard = NULL;
        cg_block body = g->body;
        cg_forget(g, T_ELEM);
        /* row-level stores after the last pass */
        cg_block rstores = {0};
        if (last) {
            cg_block saved = g->body;
            g->body = (cg_block){0};
            for (int i = 0; i < k->nstores; i++)
                if (!fuse_is_element(k, k->stores[i]))
                    cg_store(g, T_ELEM, k->stores[i], NULL);
            rstores = g->body;
            g->body = saved;
        }
        cg_forget(g, T_ELEM);
        cg_put(row, ind, &g->rpre);
        cg_put(row, 0, &decl);
        if (!last || any_elem) {
            if (chunks) {
                const tc_dim *step = dim_const(g->c, (int64_t)items * 1024 * vec);
                cg_loop(g, "r", ks->rowlen, step);
                cg_limit(g, dim_add(g->c, ks->rowlen, step));
                buf_printf(row, "%*sfor (idx_t tc_c = 0; tc_c < len; tc_c += %d * blockDim.x) {\n", ind, "",
                           items * vec);
                ind += 4;
                const struct cg_hload *hl = g->v.hl;
                for (int i = 0; i < g->v.nhl; i++)
                    buf_printf(row, "%*stc_vec<%s, %d> %s_u[%d];\n", ind, "", hl[i].type, hl[i].n, hl[i].name, items);
                buf_printf(row, "%*s#pragma unroll\n", ind, "");
                buf_printf(row, "%*sfor (int j = 0; j < %d; j++) { /* the loads of every item first */\n", ind, "",
                           items);
                buf_printf(row, "%*sconst idx_t rj_ = tc_c + (j * blockDim.x + %s) * %d;\n", ind + 4, "", tid, vec);
                buf_printf(row, "%*sconst idx_t r = rj_ < len ? rj_ : 0;\n", ind + 4, "");
                cg_decompose(g, row, ind + 4, "r", k->mask);
                for (int i = 0; i < g->v.nhl; i++)
                    buf_printf(row, "%*s%s_u[j] = tc_vload<%s, %d>(%s);\n", ind + 4, "", hl[i].name, hl[i].type,
                               hl[i].n, hl[i].addr);
                buf_printf(row, "%*s}\n", ind, "");
            } else if (items) {
                const tc_dim *span = dim_const(g->c, (int64_t)items * 1024 * vec);
                if (sliced) /* ncl blocks' runs, at most ks->cluster */
                    span = dim_const(g->c, (int64_t)items * 1024 * vec * ks->cluster);
                cg_loop(g, "r", span, NULL);
            }
            if (items) {
                buf_printf(row, "%*s#pragma unroll\n", ind, "");
                buf_printf(row, "%*sfor (int j = 0; j < %d; j++) {\n", ind, "", items);
                const char *c0 = chunks ? "tc_c + " : "";
                if (vec > 1) /* len is a multiple of vec here: a vector is all in or all out */
                    buf_printf(row, "%*sconst idx_t rj_ = %s(%s * blockDim.x + %s) * %d;\n", ind + 4, "", c0,
                               jrun, tid, vec);
                else
                    buf_printf(row, "%*sconst idx_t rj_ = %s%s * blockDim.x + %s;\n", ind + 4, "", c0, jrun, tid);
                /* no branch around the loads (g->eguard): past the row's
                 * end an item reads the row's first element (len > 0) and
                 * its accumulations and stores are predicated off */
                if (unbranched) {
                    buf_printf(row, "%*sconst bool tc_in = rj_ < len;\n", ind + 4, "");
                    buf_printf(row, "%*sconst idx_t r = tc_in ? rj_ : 0;\n", ind + 4, "");
                    cg_decompose(g, row, ind + 4, "r", k->mask);
                    for (int i = 0; chunks && i < g->v.nhl; i++)
                        buf_printf(row, "%*sconst tc_vec<%s, %d> %s = %s_u[j];\n", ind + 4, "", g->v.hl[i].type,
                                   g->v.hl[i].n, g->v.hl[i].name, g->v.hl[i].name);
                    cg_put(row, ind + 4, &body);
                } else {
                    buf_printf(row, "%*sif (rj_ < len) {\n", ind + 4, "");
                    buf_printf(row, "%*sconst idx_t r = rj_;\n", ind + 8, "");
                    cg_decompose(g, row, ind + 8, "r", k->mask);
                    cg_put(row, ind + 8, &body);
                    buf_printf(row, "%*s}\n", ind + 4, "");
                }
            } else {
                /* r reaches len - 1 + a block's threads (at most 1024): a
                 * limit of its own, so the hot loop keeps its plain step */
                const tc_dim *c1024 = dim_const(g->c, 1024);
                if (sliced) /* runs of the cluster's blocks: steps of up to 1024 * cluster */
                    c1024 = dim_const(g->c, (int64_t)1024 * ks->cluster);
                cg_loop(g, "r", ks->rowlen, c1024);
                cg_limit(g, dim_add(g->c, ks->rowlen, c1024));
                if (sliced)
                    buf_printf(row, "%*sfor (idx_t r = crank * blockDim.x + %s; r < len; r += ncl * blockDim.x) {\n",
                               ind, "", tid);
                else
                    buf_printf(row, "%*sfor (idx_t r = %s; r < len; r += %s) {\n", ind, "", tid, nth);
                cg_decompose(g, row, ind + 4, "r", k->mask);
                cg_put(row, ind + 4, &body);
            }
            buf_printf(row, "%*s}\n", ind, "");
            if (chunks) {
                ind -= 4;
                buf_printf(row, "%*s}\n", ind, "");
            }
        }
        if (pipe && p == 0) {
            pipe_prefetch(g, row, ind, items, vec);
            g->pipe_bytes = stage_slots(g, items) * 16 * (ks->resident ? 2 : 1);
            pipe_enter(g, out, ind, items, vec);
            buf_puts(out, buf_str(&p0));
            row = out;
        }
        if (rpair && p == 0)
            cg_pair_shift(g, row, ind);
        else if (rpair && p == 1) {
            cg_finish_pair(g, row, ind, combine);
            cg_forget(g, T_ROW); /* values of the thread's shift: the epilogue's are the row's */
        } else if (!last)
            cg_finish_pass(g, p, row, ind, combine);
        if (rstores.n) {
            buf_printf(row, "%*sif (%s == 0%s) {\n", ind, "", tid, columns ? " && active" : "");
            cg_put(row, ind + 4, &rstores);
            buf_printf(row, "%*s}\n", ind, "");
        }
    }
    g->pr.items = 0;
    g->pr.nkeep = 0;
    g->pr.rpair = false;
    g->pr.kscale = NULL;
    g->v.row = false;
    g->combine_args = NULL;
    g->combine2 = NULL;
}

/* One row's code (at indentation 8) into row: registers when the row fits
 * them, else the loop; `sliced`: the row is shared by the cluster. */
/* Column partials: the first row of a block's rows that loops zeroes the
 * block's partial row (the elements its threads own in the loop), and
 * marks that the loop's sums are there. */
static void col_zero(cg *g, tc_buf *row, int ind)
{
    const fkernel *k = g->k;
    if (!k->ncols)
        return;
    cg_w w = {row, ind};
    cg_wopen(&w, "if (!tc_looped) { /* this block's first looped row */");
    cg_wopen(&w, "for (idx_t r = threadIdx.x; r < len; r += blockDim.x) {");
    for (int j = 0; j < k->ncols; j++) {
        int pb = g->bufs->part_of[k->cols[j]->id];
        cg_use_buf(g, pb);
        cg_wl(&w, "%s[tc_pb + r] = 0;", cg_buf_name(g, pb));
    }
    cg_wclose(&w, "}");
    cg_wl(&w, "tc_looped = true;");
    cg_wclose(&w, "}");
}

static void row_body(cg *g, tc_buf *row, bool columns, bool fits, bool sliced, int ind)
{
    const ksched *ks = g->ks;
    /* long_only: a block without a cluster never holds such a row */
    int items = columns || (ks->long_only && !sliced) ? 0 : ks->items, vec = columns ? 1 : ks->vec;
    if (items && !fits) {
        /* both: registers when the row fits (with vector loads: when the
         * row is a whole number of aligned vectors), a loop otherwise */
        tc_buf pers, loop;
        buf_init(&pers, g->a);
        buf_init(&loop, g->a);
        passes(g, &pers, ind + 4, columns, items, vec, sliced);
        int nalign = g->v.nalign;
        const char **align = g->v.align;
        g->v.align = NULL;
        g->v.nalign = g->v.capalign = 0;
        cg_forget(g, T_ROW); /* the other branch cannot see these */
        col_zero(g, &loop, ind + 4);
        passes(g, &loop, ind + 4, columns, 0, 1, sliced);
        if (ks->online_sum && vec > 1) /* any length: the registers' chunk steps over the row */
            buf_printf(row, "%*sif (0 < len", ind, "");
        else
            buf_printf(row, "%*sif (0 < len && len <= %d * blockDim.x%s", ind, "", items * vec,
                       sliced ? " * ncl" : "");
        if (vec > 1)
            buf_printf(row, " && len %% %d == 0", vec);
        for (int i = 0; i < nalign; i++)
            buf_printf(row, " &&\n%*s%s", ind + 4, "", align[i]);
        buf_puts(row, ks->online_sum && vec > 1 ? ") { /* whole aligned vectors */\n"
                                     : ") { /* the row fits in registers: read it once */\n");
        buf_puts(row, buf_str(&pers));
        buf_printf(row, "%*s} else {\n", ind, "");
        buf_puts(row, buf_str(&loop));
        buf_printf(row, "%*s}\n", ind, "");
    } else {
        if (!fits)
            col_zero(g, row, ind);
        passes(g, row, ind, columns, fits ? items : 0, 1, false);
    }
}

/* Column partials (fuse.h, sched.h): the block takes ks->rblock rows at a
 * time (grid-stride over such blocks of rows), each row as any rows
 * kernel's, and after them writes its partial row: the registers' sums
 * (plus the loop's, when a row looped: those are in the partial row
 * already, zeroed by the first looped row). */
static void col_rows(cg *g, cg_w *w, tc_buf *row, int items, int vec)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int R = ks->rblock;
    const tc_dim *nb = dim_ceildiv(g->c, ks->rows, dim_const(g->c, R));
    const tc_dim *parts = dim_mul(g->c, nb, ks->rowlen);
    cg_loop(g, "grp", nb, NULL);
    cg_loop(g, "row", ks->rows, NULL);
    cg_limit(g, ks->rows);
    cg_loop(g, "tc_pb + r", parts, NULL);
    cg_limit(g, parts);
    cg_wl(w, "const idx_t tc_nb = (rows + %d) / %d; /* blocks of %d rows */", R - 1, R, R);
    if (ks->pipe) { /* TENSORC_COLPART_PREFETCH: rows.c's pipe, a block of one (ncl, crank) */
        cg_wl(w, "extern __shared__ __align__(16) unsigned char tc_pipe[]; /* the next row's slices */");
        cg_wl(w, "idx_t tc_pre = rows; /* the row whose slice is in tc_pipe or on its way (rows: none) */");
        cg_wl(w, "const idx_t ncl = 1, crank = 0;");
    }
    cg_wopen(w, "for (idx_t grp = blockIdx.x; grp < tc_nb; grp = tc_nb - grp > (idx_t)gridDim.x ? grp + gridDim.x : tc_nb) {");
    cg_wl(w, "const idx_t rlo = grp * %d, rhi = rows - rlo > %d ? rlo + %d : rows;", R, R, R);
    cg_wl(w, "const idx_t tc_pb = grp * len; /* this block's partial row */");
    cg_wl(w, "bool tc_looped = false; /* a row looped: its sums are in the partial row */");
    for (int j = 0; items && j < k->ncols; j++)
        cg_wl(w, "%s cp%d[%d] = {}; /* a sum per element the thread holds */", cg_type(k->cols[j]->dtype),
              k->cols[j]->id, items * vec);
    cg_wopen(w, "for (idx_t row = rlo; row < rhi; row++) {");
    cg_decompose(g, w->o, w->ind, "row", cg_all_axes(k) & ~k->mask);
    buf_puts(w->o, buf_str(row));
    cg_wclose(w, "}");
    if (items) {
        cg_wl(w, "if (tc_looped) /* the loop's sums: other threads' elements of the partial row */");
        cg_wbody(w, "__syncthreads();");
        cg_wl(w, "#pragma unroll");
        cg_wopen(w, "for (int j = 0; j < %d; j++) {", items);
        cg_wl(w, "#pragma unroll");
        cg_wopen(w, "for (int e = 0; e < %d; e++) {", vec);
        cg_wl(w, "const idx_t c_ = (j * blockDim.x + threadIdx.x) * %d + e;", vec);
        cg_wopen(w, "if (c_ < len) {");
        for (int j = 0; j < k->ncols; j++) {
            int pb = g->bufs->part_of[k->cols[j]->id];
            cg_use_buf(g, pb);
            const char *p = cg_buf_name(g, pb);
            int id = k->cols[j]->id;
            cg_wl(w, "%s[tc_pb + c_] = tc_looped ? %s[tc_pb + c_] + cp%d[j * %d + e] : cp%d[j * %d + e];", p,
                  p, id, vec, id, vec);
        }
        cg_wclose(w, "}");
        cg_wclose(w, "}");
        cg_wclose(w, "}");
    }
    cg_wclose(w, "}");
    if (ks->pipe) { /* a prefetched row that looped: no copy outlives the kernel */
        cg_wl(w, "if (tc_pre < rows)");
        cg_wbody(w, "tc_cp_wait();");
    }
}

/* TENSORC_ROWS_TICKET (sched_rows_pipe): the cluster loop's rows.  Each
 * cluster takes its index's row and the one a step on (step: the clusters),
 * then rows from 2 * step on in the order the clusters ask: before a row's
 * first combine, rank 0's thread 0 takes a ticket (an atomicAdd on the
 * workspace's counter) for the row after next, and the combine carries it
 * to every block (tc_cl_ticket, helpers.cuh), so the pipe still knows its
 * next row a row ahead.  Each cluster asks once past the last row, so the
 * asks are rows - step in all, and the last of them zeroes the counter for
 * the next launch.  Which cluster takes a row changes nothing in it: the
 * same bits. */
static void ticket_loop(cg *g, cg_w *w, tc_buf *crow)
{
    cg_wl(w, "/* a row shared by the cluster's blocks: the cluster's index's row, the one a step on, then");
    cg_wl(w, " * the rows from 2 * step on in the order the clusters ask (TENSORC_ROWS_TICKET) */");
    cg_wl(w, "const idx_t tc_step = (idx_t)(gridDim.x / ncl);");
    cg_wl(w, "unsigned *tc_tkc = (unsigned *)ws; /* the next ticket: zero between launches */");
    cg_wl(w, "idx_t tc_nx = rows, tc_nn = rows; /* the cluster's next row, and its row after that */");
    cg_wl(w, "if (ncl > 1 && (idx_t)(blockIdx.x / ncl) < rows && rows - (idx_t)(blockIdx.x / ncl) > tc_step)");
    cg_wbody(w, "tc_nx = (idx_t)(blockIdx.x / ncl) + tc_step;");
    cg_wopen(w, "for (idx_t row = ncl > 1 ? blockIdx.x / ncl : rows; row < rows; row = tc_nx, tc_nx = tc_nn) {");
    cg_wl(w, "bool tc_tkon = tc_nx < rows && rows - tc_step > tc_step; /* the row after next by ticket */");
    cg_wl(w, "int tc_tk = -1; /* ... which the row's first combine brings */");
    cg_wopen(w, "if (tc_tkon && crank == 0 && threadIdx.x == 0) {");
    cg_wl(w, "const unsigned t = atomicAdd(tc_tkc, 1u);");
    cg_wl(w, "if (t == (unsigned)(rows - tc_step) - 1u) /* the launch's last ask */");
    cg_wbody(w, "*tc_tkc = 0u;");
    cg_wl(w, "tc_cl_ticket(tc_cl, tc_turn, (unsigned)ncl, tc_push, (int)t);");
    cg_wclose(w, "}");
    cg_decompose(g, w->o, w->ind, "row", cg_all_axes(g->k) & ~g->k->mask);
    buf_puts(w->o, buf_str(crow));
    cg_wl(w, "tc_nn = tc_tk >= 0 && rows - 2 * tc_step > (idx_t)tc_tk ? 2 * tc_step + (idx_t)tc_tk : rows;");
    cg_wclose(w, "}");
}

/* ROWS and COLUMNS: a loop over rows (kept elements), passes over each.
 * A kernel with a cluster has two: the plain one runs when the launch has
 * no cluster (ncl == 1), the other when it has; one loop with the
 * cluster's index arithmetic for both slowed short rows (the 40-register
 * cap: rmsnorm bf16 16384 x 4096 on an H200, 79 us to 90). */
void cg_rows(cg *g, tc_buf *o, bool columns)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    g->elemvars = k->mask;
    g->rowvars = cg_all_axes(k) & ~k->mask;
    const char *nrows = cg_index(g, ks->rows), *len = cg_index(g, ks->rowlen);
    int items = columns ? 0 : ks->items, vec = columns ? 1 : ks->vec;
    int64_t clen;
    bool fits = items && vec == 1 && dim_is_const(ks->rowlen, &clen) && clen > 0 &&
                clen <= (int64_t)items * ks->block[0];
    bool sliced = !columns && ks->cluster && items && !fits;
    g->ticket = false;
    tc_buf row, crow;
    buf_init(&row, g->a);
    buf_init(&crow, g->a);
    int rind = ks->rblock ? 12 : 8; /* column partials: inside a block's rows */
    row_body(g, &row, columns, fits, false, rind);
    if (sliced) {
        cg_forget(g, T_ROW);
        g->ticket = ks->ticket; /* sched_rows_pipe: the pipe's rows (the workspace's ticket) */
        row_body(g, &crow, columns, fits, true, 8);
    }
    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    cg_wl(&w, "const idx_t rows = %s, len = %s;", nrows, len);
    if (sliced) {
        cg_wl(&w, "__shared__ __align__(16) unsigned char tc_cl[TC_CL_BYTES]; /* the cluster's partials */");
        cg_wl(&w, "unsigned tc_turn = 0;");
        cg_wl(&w, "const idx_t ncl = (idx_t)tc_cluster_size(), crank = (idx_t)tc_cluster_rank();");
        /* the cluster's exchange (helpers.cuh): partials pushed onto each
         * block's mbarrier, unless TENSORC_CLUSTER_PUSH=0 (a cluster barrier
         * a combine, whose arrive waited for the previous row's stores in a
         * persistent grid).  H200, 2026-11-27, pushed against the barrier:
         * softmax 1024 x 65536 155.8 / 175.8 us, 256 x 262144 183.8 /
         * 219.6; bf16 rmsnorm 1024 x 65536 85.8 / 93.5, 256 x 262144 95.1
         * / 120.8 (README's row has the rest). */
        cg_wl(&w, "const bool tc_push = %s;", g->f->knobs.cluster_push == 0 ? "false" : "true");
        cg_wl(&w, "tc_cluster_init(tc_cl, ncl, tc_push); /* its mbarriers, before any block pushes */");
        if (ks->pipe) {
            cg_wl(&w, "extern __shared__ __align__(16) unsigned char tc_pipe[]; /* the next row's slices "
                      "(TENSORC_ROWS_PIPE) */");
            cg_wl(&w, "idx_t tc_pre = rows; /* the row whose slice is in tc_pipe or on its way (rows: none) */");
            if (ks->resident)
                cg_wl(&w, "int tc_stg = 0; /* this row's stage of slots: the row is read there (resident) */");
        }
    }
    if (!columns && ks->rblock) {
        col_rows(g, &w, &row, fits ? items : ks->items, vec);
        return;
    }
    /* the row loops saturate at rows (plan_verify): row += gridDim.x
     * would wrap past 2^31 once rows > 2^30 */
    if (columns) {
        const tc_dim *r64 = dim_add(g->c, ks->rows, dim_const(g->c, 64));
        cg_loop(g, "cb", ks->rows, NULL);
        cg_loop(g, "cb + threadIdx.x", ks->rows, dim_const(g->c, 32));
        cg_limit(g, r64);
        cg_wl(&w, "const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x, rows);");
        cg_wl(&w, "for (idx_t cb = tc_upto((long long)blockIdx.x * blockDim.x, rows); cb < rows;");
        w.ind += 5; /* the header's second line, under its first clause */
        cg_wl(&w, "cb = rows - cb > step_ ? cb + step_ : rows) {");
        w.ind -= 5;
        cg_win(&w);
        cg_wl(&w, "const bool active = threadIdx.x < rows - cb;");
        cg_wl(&w, "/* idle threads work on the last column so every load stays in bounds */");
        cg_wl(&w, "const idx_t row = active ? cb + threadIdx.x : rows - 1;");
    } else {
        cg_loop(g, "row", ks->rows, NULL);
        cg_limit(g, ks->rows); /* at most the domain's size, which dim_nonneg cannot see */
        cg_wopen(&w, "for (idx_t row = %s; row < rows; row = rows - row > (idx_t)gridDim.x ? row + gridDim.x : rows) {",
                 sliced ? "ncl == 1 ? blockIdx.x : rows" : "blockIdx.x");
    }
    cg_decompose(g, o, w.ind, "row", cg_all_axes(k) & ~k->mask);
    buf_puts(o, buf_str(&row));
    cg_wclose(&w, "}");
    if (sliced) {
        if (g->ticket)
            ticket_loop(g, &w, &crow);
        else {
            cg_wl(&w, "/* a row shared by the cluster's blocks */");
            cg_wl(&w, "for (idx_t row = ncl > 1 ? blockIdx.x / ncl : rows; row < rows;");
            cg_wl(&w, "     row = rows - row > (idx_t)(gridDim.x / ncl) ? row + gridDim.x / ncl : rows) {");
            cg_win(&w);
            cg_decompose(g, o, w.ind, "row", cg_all_axes(k) & ~k->mask);
            buf_puts(o, buf_str(&crow));
            cg_wclose(&w, "}");
        }
        if (ks->pipe) { /* a loop path's row after a prefetch: no copy outlives the kernel */
            cg_wl(&w, "if (tc_pre < rows)");
            cg_wbody(&w, "tc_cp_wait();");
        }
        /* no block leaves while another may read its partials */
        cg_wl(&w, "tc_cluster_end(ncl, tc_push);");
    }
}
