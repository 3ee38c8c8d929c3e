/* scan.c - SCH_SCAN: scans along one axis, walked per lane.
 *
 * Lanes are the indices of every other axis.  Each scan of the kernel
 * (k->reds, topological order) keeps its carry in a register (f32 for
 * f16/bf16, as reductions accumulate); at each element the body computes
 * the prologue, updates every carry in order (a scan that reads an earlier
 * one reads the value just made), then writes the kernel's element stores:
 * the epilogue.  A scan's value as its readers see it is the carry rounded
 * to the scan's dtype.  Two paths, chosen at run time by the axis' length:
 *
 *   short (len <= SCAN_SEQ): a thread per lane, consecutive threads on
 *   consecutive lanes of the innermost other axis (coalesced wherever the
 *   axis is not the last), walking its lane element by element, its loads
 *   made a chunk of steps ahead into its own shared-memory column:
 *
 *     for (lane ...) {                      i0, i2 from lane
 *         for (c_ = 0; c_ < len; c_ += 16) {
 *             for (tt_ ...) st0[tt_][tid] = x[... c_ + tt_ ...];
 *             for (tt_ ...) {
 *                 const idx_t i1 = c_ + tt_;    (len - 1 - ... in reverse)
 *                 c0 = s_ == 0 ? st0[tt_][tid] : c0 + st0[tt_][tid];
 *                 ... stores at [i0, i1, i2]
 *             }
 *         }
 *         ... stores of the last elements ([i0, 0, i2] of h[:, -1:])
 *
 *   long: a block per lane, walking it in chunks of blockDim.x elements:
 *   each thread computes its element, tc_block_scan (helpers.cuh: warp
 *   shuffles, then the warps' totals) scans the chunk, the carry (every
 *   thread holds it) is combined in front and takes the chunk's total.
 *   Threads past the end load the last element (in bounds) and store
 *   nothing; only threads after them see their values.
 *
 * A scan's value is read only at the element the walk is at, or after the
 * walk at the last element (fusion checks both), where it is the carry.
 * A sum, prod, max or min over the scanned axis (a backward's dstate) is one
 * more carry, from its identity, read only after the walk.
 */
#include "codegen/cg.h"

#include <string.h>

/* The longest axis walked a thread per lane; longer ones are block-parallel.
 * The lane path's loads are staged STAGE_STEPS steps ahead in shared memory
 * (at most STAGE_BYTES a block; SCAN_THREADS is sched.c's block). */
enum { SCAN_SEQ = 256, STAGE_STEPS = 16, STAGE_BYTES = 24576, SCAN_THREADS = 128 };
/* A checkpointed pair's staging: K rows of each load of its walks (the
 * minGRU gradient: 4 loads, K = 4, 8 KB a block) */
enum { PAIR_STAGE_BYTES = 32768 };

/* The carry's dtype: f32 for 16-bit floats, int for bool (shuffles), else
 * the scan's own (sched.h's, which sizes a checkpointed pair's buffers). */
static tc_dtype carry_dtype(const lnode *n)
{
    return sched_carry_dtype(n);
}

static const char *op_functor(const lnode *n)
{
    if (n->kind == LK_REDUCE) /* sum, prod, max or min (fusion checks) */
        return cg_red_op(n);
    switch (n->op) {
    case OP_cumsum: return "tc_op_sum";
    case OP_cumprod: return "tc_op_prod";
    case OP_cummax: return "tc_op_cummax"; /* tc_max: helpers.cuh */
    case OP_cummin: return "tc_op_cummin";
    default: return "tc_op_logaddexp";
    }
}

static const char *red_name(const lnode *n)
{
    static const char *const names[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
    return names[n->a.red.kind];
}

/* Readers see the scan's dtype: 16-bit floats rounded, the carry not. */
static const char *reader_value(cg *g, const lnode *n, cg_target t, const char *v)
{
    if (n->dtype != TC_F16 && n->dtype != TC_BF16)
        return v;
    const char *r = cg_temp(g, "t");
    cg_line(g, t, n, "const float %s = tc_round_%s(%s);", r, dtype_name(n->dtype), v);
    return r;
}

/* TENSORC_SCAN_LSE (knobs.h; unset: on): an f32 logcumsumexp walked a
 * thread per lane carries (max, scaled sum of the terms but the max's), tc_ms (scan.cuh), not its log:
 * a step is one exp (tc_online_add), where tc_logaddexp's was an exp and a
 * log1p series, and its readers take the log (tc_lse_value), or none where
 * they take exp(v + y) (logform.c's cg_expform: exp(v + m) (1 + s)).  Not in the
 * block path (its scan combines values) nor in a checkpointed pair's first
 * walk (its checkpoints are values; the reversed walk's own carries are
 * never stored, so they may).  And the walk starts from the identity there
 * (the pair's (-inf, 0), an f32 sum's -0, which x + -0 is x for every x),
 * not a select on the first step: the minGRU forward's step 126.25 -> 111
 * SASS instructions (sm_90, unrolled 4: the pair with expf, the exp fold
 * and no select 119.75; ex2 for its exp 112.75; the max's NaN test by the
 * step's own compares 111). */
/* TENSORC_SCAN_PAIR_LSE=1: in a checkpointed pair's walks of F too (the
 * first and its replays, not R's): a checkpoint stores the value, m + log1p s,
 * once a segment, and a replay restores it as (value, 0), exact, or starts
 * from the identity in the first segment (pair_path).  Not bit-identical to
 * 0: the replayed values round as the forward kernel's do. */
static bool lse_pair(const cg *g, const lnode *n, bool block)
{
    bool pair = g->ks->ckpt && !g->ck.cpre && g->f->knobs.scan_pair_lse == 1;
    return !block && (!g->ks->ckpt || pair) && g->f->knobs.scan_lse != 0 && n->kind == LK_SCAN &&
           n->op == OP_logcumsumexp && n->dtype == TC_F32 && carry_dtype(n) == TC_F32;
}

static bool sum_fresh(const cg *g, const lnode *n, bool block)
{
    return !block && !g->ks->ckpt && g->f->knobs.scan_lse != 0 && n->kind == LK_SCAN &&
           n->op == OP_cumsum && carry_dtype(n) == TC_F32;
}

/* One element's work: every carry updated in order, then the element
 * stores.  block: the chunk path (the scan across the block, stores by
 * active threads only).  Carry declarations go to decl. */
static cg_block walk_body(cg *g, cg_block *decl, int ind, bool block)
{
    const fkernel *k = g->k;
    const tc_dim **id = (const tc_dim **)g->l->vars;
    cg_reset_bufs(g);
    const char *cpre = g->ck.cpre ? g->ck.cpre : "c";
    for (int j = 0; j < k->nreds; j++) {
        const lnode *n = k->reds[j];
        tc_dtype cdt = carry_dtype(n);
        const char *c = arena_printf(g->a, "%s%d", cpre, j), *f = op_functor(n);
        /* a reduction's carry starts at its identity: an empty axis reads it */
        bool red = n->kind == LK_REDUCE;
        if (red && g->ck.recompute) /* complete after the first walk; nothing reads it here */
            continue;
        g->lse[n->id] = NULL;
        if (lse_pair(g, n, block)) {
            cg_block_add(decl, g->a, ind, arena_printf(g->a, "tc_ms %s = tc_ms_init(); /* %%%d logcumsumexp: "
                                                       "(max, sum of exp(x - max)) */", c, n->id));
            const tc_dim *ci[TC_MAX_RANK];
            lir_compose(g->l, &n->in[0], id, n->rank, ci);
            const char *x = cg_convert(g, cg_value(g, n->in[0].src, ci), n->in[0].src->dtype, cdt);
            cg_line(g, T_ELEM, n, "%s = tc_lse_add<%s>(%s, %s);", c, cg_lse_value_read(g, n) ? "true" : "false", c, x);
            g->lse[n->id] = c;
            g->acc[n->id] = arena_printf(g->a, "tc_lse_value(%s)", c);
            continue;
        }
        const char *init = "0", *ct = cg_type(cdt);
        bool fresh = sum_fresh(g, n, block);
        if (fresh)
            init = "-0.0f";
        if (red && n->a.red.kind != RK_SUM)
            init = n->a.red.kind == RK_PROD  ? "1"
                   : n->a.red.kind == RK_MAX ? arena_printf(g->a, "tc_lowest<%s>()", ct)
                                             : arena_printf(g->a, "tc_highest<%s>()", ct);
        cg_block_add(decl, g->a, ind, arena_printf(g->a, "%s %s = %s; /* %%%d %s */", ct, c, init,
                                                   n->id, red ? red_name(n) : op_table[n->op].name));
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[0], id, red ? n->a.red.rin : n->rank, ci);
        const char *x = cg_convert(g, cg_value(g, n->in[0].src, ci), n->in[0].src->dtype, cdt);
        if (fresh) {
            cg_line(g, T_ELEM, n, "%s += %s;", c, x);
            g->acc[n->id] = reader_value(g, n, T_ELEM, c);
            continue;
        }
        if (!block) {
            cg_line(g, T_ELEM, n, "%s = s_ == 0 ? %s : %s()(%s, %s);", c, x, f, c, x);
            if (!red) /* a reduction is read after the walk only (end_stores) */
                g->acc[n->id] = reader_value(g, n, T_ELEM, c);
            continue;
        }
        const char *v = cg_temp(g, "v"), *tot = cg_temp(g, "tot");
        cg_line(g, T_ELEM, n, "%s %s;", cg_type(cdt), tot);
        cg_line(g, T_ELEM, n, "%s %s = tc_block_scan(%s, %s(), last_, &%s);", cg_type(cdt), v, x, f, tot);
        if (!red)
            cg_line(g, T_ELEM, n, "if (c_ > 0) %s = %s()(%s, %s);", v, f, c, v);
        cg_line(g, T_ELEM, n, "%s = c_ == 0 ? %s : %s()(%s, %s);", c, tot, f, c, tot);
        if (!red)
            g->acc[n->id] = reader_value(g, n, T_ELEM, v);
    }
    for (int i = 0; i < k->nstores; i++) {
        const lnode *st = k->stores[i];
        int q, e, sv = g->bufs->sv_of[st->id];
        if (g->ck.recompute) { /* only the values the reversed walk reads, into its arrays */
            if (sv)
                cg_line(g, T_ELEM, st, "sv%d_[tt_] = %s;", sv - 1,
                        cg_store_conv(g, st, cg_value(g, st, (const tc_dim *const *)id)));
            continue;
        }
        if (fuse_is_element(k, st)) {
            cg_store(g, T_ELEM, st, block ? "act_" : NULL);
        } else if (fuse_plane(k, st, &q, &e)) { /* each plane at this element */
            for (int c = 0; c < e; c++) {
                const tc_dim *pi[TC_MAX_RANK];
                for (int a = 0, v = 0; a < st->rank; a++)
                    pi[a] = a == q ? dim_const(g->c, c) : id[v++];
                cg_store_at(g, T_ELEM, st, pi, block ? "act_" : NULL);
            }
        }
    }
    cg_block body = g->body;
    cg_forget(g, T_ELEM);
    return body;
}

/* Stores of the final elements (the axis 1 long): after the walk, from the
 * carries; what they compute goes after the loop, not before it.  guard:
 * one thread of the block writes them. */
static cg_block end_stores(cg *g, const char *guard)
{
    const fkernel *k = g->k;
    cg_block pre = g->rpre;
    g->rpre = (cg_block){0};
    g->rpre.ind = pre.ind;
    unsigned ev = g->elemvars;
    g->elemvars = 0;
    g->phase = 1; /* after the walk: a reduction's carry is complete */
    bool any = false;
    int q, e;
    for (int i = 0; i < k->nstores; i++)
        any |= !fuse_is_element(k, k->stores[i]) && !fuse_plane(k, k->stores[i], &q, &e);
    for (int j = 0; j < k->nreds && any; j++) {
        const lnode *n = k->reds[j];
        const char *c = arena_printf(g->a, "%s%d", g->ck.cpre ? g->ck.cpre : "c", j);
        g->lse[n->id] = lse_pair(g, n, guard != NULL) ? c : NULL;
        g->acc[n->id] = g->lse[n->id] ? arena_printf(g->a, "tc_lse_value(%s)", c) : reader_value(g, n, T_ROW, c);
    }
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]) && !fuse_plane(k, k->stores[i], &q, &e))
            cg_store(g, T_ROW, k->stores[i], guard);
    cg_block after = g->rpre;
    g->rpre = pre;
    g->elemvars = ev;
    g->phase = 0;
    return after;
}

/* TENSORC_SCAN_UNROLL (knobs.h): the walk's steps unrolled U at a time (the
 * chunk's count n_ is a run-time value; nvcc adds the remainder loop).
 * Unrolled, a step's carry-free work (its loads' math) overlaps the last
 * step's carry chain, and the staged loads take constant offsets: the
 * minGRU forward's step 139 -> 132 SASS instructions at 4, 129 at 16
 * (sm_90).  Timed (H200, 2026-11-27, bench/tune.sh, checked; us, 1 / 4):
 * minGRU forward B512 34.95 / 31.44, B2048 388.2 / 366.7, gradient B512
 * 110.4 / 107.9, B1024 367.2 / 367.4: 4 is the default. */
static int unroll_of(const cg *g)
{
    return g->f->knobs.scan_unroll > 0 ? g->f->knobs.scan_unroll : 4;
}

static void walk_unroll(cg *g, tc_buf *o)
{
    if (unroll_of(g) > 1)
        buf_printf(o, "                #pragma unroll %d\n", unroll_of(g));
}

/* short axes: a thread per lane.  Its loads along the axis are made
 * `steps` steps ahead into the thread's own shared-memory column (no sync:
 * only the thread reads it), a chunk at a time, so a warp has a chunk's
 * loads in flight, not one step's: the walk's body has library math with
 * branches, past which the compiler hoists no load (minGRU B512 on an H100:
 * 0.7 TB/s one step at a time, and 86 us of 100 with --use_fast_math). */
static void lane_path(cg *g, tc_buf *o)
{
    cg_block decl = {0};
    cg_reset_bufs(g);
    bool ring = g->f->knobs.scan_async == 1;
    g->st = (struct cg_staged){.on = true, .ring = ring};
    cg_block body = walk_body(g, &decl, 12, false);
    g->st.on = false;
    int bytes = 0;
    for (int i = 0; i < g->st.nload; i++)
        bytes += dtype_size(g->st.load[i].n->dtype);
    int steps = bytes ? STAGE_BYTES / (SCAN_THREADS * bytes) : 0;
    if (steps > STAGE_STEPS)
        steps = STAGE_STEPS;
    bool redo = steps < 2 || (ring && (steps < 4 || !cg_scan_async_ok(g)));
    if (redo) { /* too wide to stage, or to stage twice: loads where they are used, or staged once */
        cg_forget(g, T_ROW);
        cg_forget(g, T_ELEM);
        ring = false;
        g->st = (struct cg_staged){.on = steps >= 2};
        decl = (cg_block){0};
        cg_reset_bufs(g);
        body = walk_body(g, &decl, 12, false);
        g->st.on = false;
    }
    if (ring) /* two chunks in the same bytes */
        steps /= 2;
    cg_block after = end_stores(g, NULL);
    for (int i = 0; i < g->st.nload && steps >= 2; i++)
        buf_printf(o, "        __shared__ %s %s%s[%d][%d];\n", cg_store_type(g->st.load[i].n->dtype),
                   g->st.load[i].name, ring ? "[2]" : "", steps, SCAN_THREADS);
    buf_puts(o, "        const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x, lanes);\n"
                "        for (idx_t lane = tc_upto((long long)blockIdx.x * blockDim.x + threadIdx.x, lanes); lane < lanes;\n"
                "             lane = lanes - lane > step_ ? lane + step_ : lanes) {\n");
    cg_decompose(g, o, 12, "lane", g->rowvars);
    cg_put(o, 12, &g->rpre);
    cg_put(o, 0, &decl);
    if (steps < 2) {
        buf_puts(o, "            for (idx_t s_ = 0; s_ < len; s_++) {\n");
        cg_scan_axis_index(g, o, 16);
        cg_put(o, 16, &body);
        buf_puts(o, "            }\n");
    } else if (ring) {
        cg_scan_async_chunks(g, o, steps, &body, unroll_of(g));
    } else {
        buf_printf(o, "            for (idx_t c_ = 0; c_ < len; c_ += %d) {\n", steps);
        cg_scan_stage(g, o, steps);
        buf_printf(o, "                const int n_ = len - c_ < %d ? (int)(len - c_) : %d;\n", steps, steps);
        walk_unroll(g, o);
        buf_puts(o, "                for (int tt_ = 0; tt_ < n_; tt_++) {\n"
                    "                    const idx_t s_ = c_ + tt_;\n");
        cg_scan_axis_index(g, o, 20);
        cg_put(o, 20, &body);
        buf_puts(o, "                }\n"
                    "            }\n");
    }
    cg_put(o, 12, &after);
    buf_puts(o, "        }\n");
}

/* Whether R's value n at idx is free of R's carries: a node that depends on
 * none, or a concat at a constant index whose piece there is (a plane
 * store of a gradient's concat, some planes carry-free), or an op of such
 * values. */
static bool carry_free(cg *g, const lnode *n, const tc_dim *const *idx, int depth)
{
    if (!g->redep[n->id])
        return true;
    if (depth > 8 || (n->kind != LK_POINTWISE && n->kind != LK_CONCAT))
        return false;
    int64_t at, lo, hi;
    if (n->kind == LK_CONCAT && !dim_is_const(idx[n->a.cat.axis], &at))
        return false;
    for (int j = 0; j < n->nin; j++) {
        if (n->kind == LK_CONCAT && !(dim_is_const(n->a.cat.offsets[j], &lo) &&
                                      dim_is_const(n->a.cat.offsets[j + 1], &hi) && lo <= at && at < hi))
            continue;
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[j], idx, n->rank, ci);
        if (!carry_free(g, n->in[j].src, ci, depth + 1))
            return false;
    }
    return true;
}

/* Whether R's value n, read at the element (idx NULL) by a carry-dependent
 * reader, or stored at idx (a plane of the element), is made in the replay: computed there (not a load, a
 * constant or a row value) and free of R's carries. */
static bool hoistable(cg *g, const lnode *n, const tc_dim *const *idx)
{
    bool own = g->f->kernel_of[n->id] == g->k->id;
    if ((n->kind != LK_POINTWISE && n->kind != LK_CONCAT) || (g->f->stored[n->id] && !own) ||
        (n->kind == LK_POINTWISE && n->op == OP_iota))
        return false;
    if (!idx)
        return n->rank == g->k->rank && !g->redep[n->id];
    return cg_uses_vars(g, idx, n->rank, g->elemvars) && carry_free(g, n, idx, 0);
}

struct hoisted { const lnode *n; const tc_dim **idx; };

static void hoist_add(cg *g, struct hoisted *h, int *nh, int cap, const lnode *n, const tc_dim *const *idx)
{
    for (int i = 0; i < *nh; i++) {
        bool eq = h[i].n == n;
        for (int a = 0; a < n->rank && eq; a++)
            eq = h[i].idx[a] == idx[a];
        if (eq)
            return;
    }
    if (*nh == cap)
        return;
    const tc_dim **c = ARENA_ARRAY(g->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
    for (int a = 0; a < n->rank; a++)
        c[a] = idx[a];
    h[(*nh)++] = (struct hoisted){n, c};
}

/* TENSORC_SCAN_HOIST (knobs.h; unset: on, 0: off): R's values that do not depend on
 * R's carries and that a carry-dependent value or a store of R reads at the
 * element (or a plane of it), computed in the replay of F's steps (after
 * F's step, so F's values are there: the same nodes, inlined in both, and
 * the math they share, such as sigmoid's and softplus's exp of one
 * argument, are made once) into register arrays e0_[K], ...; the walk back
 * reads those.  Past the end the replay makes them for the last element
 * again, unread.  Returns the replay's part (R's context); the arrays'
 * declarations go to decl, row values to *pre. */
enum { HOIST_MAX = 32 };
static cg_block hoist_early(cg *g, cg_block *decl, cg_block *pre, int K)
{
    const fkernel *k = g->k;
    const tc_dim **id = (const tc_dim **)g->l->vars;
    cg_reset_bufs(g);
    *pre = (cg_block){0};
    if (g->f->knobs.scan_hoist == 0)
        return (cg_block){0};
    struct hoisted h[HOIST_MAX];
    int nh = 0;
    const tc_dim *ci[TC_MAX_RANK];
    for (int i = 0; i < k->ninl; i++) {
        const lnode *n = k->inl[i];
        if (!g->redep[n->id] || n->rank != k->rank)
            continue;
        for (int j = 0; j < n->nin; j++) {
            lir_compose(g->l, &n->in[j], id, n->rank, ci);
            if (lir_is_identity(g->l, ci, n->in[j].src->rank) && hoistable(g, n->in[j].src, NULL))
                hoist_add(g, h, &nh, HOIST_MAX, n->in[j].src, id);
        }
    }
    for (int j = 0; j < k->nreds; j++) {
        const lnode *n = k->reds[j];
        if (n->kind != LK_SCAN)
            continue;
        lir_compose(g->l, &n->in[0], id, n->rank, ci);
        if (lir_is_identity(g->l, ci, n->in[0].src->rank) && hoistable(g, n->in[0].src, NULL))
            hoist_add(g, h, &nh, HOIST_MAX, n->in[0].src, id);
    }
    for (int i = 0; i < k->nstores; i++) {
        const lnode *st = k->stores[i];
        int q, e;
        if (fuse_is_element(k, st) && hoistable(g, st, NULL))
            hoist_add(g, h, &nh, HOIST_MAX, st, id);
        else if (!fuse_is_element(k, st) && fuse_plane(k, st, &q, &e))
            for (int c = 0; c < e; c++) {
                const tc_dim *pi[TC_MAX_RANK];
                for (int a = 0, v = 0; a < st->rank; a++)
                    pi[a] = a == q ? dim_const(g->c, c) : id[v++];
                if (hoistable(g, st, pi))
                    hoist_add(g, h, &nh, HOIST_MAX, st, pi);
            }
    }
    const char **names = ARENA_ARRAY(g->a, const char *, nh > 0 ? nh : 1);
    for (int i = 0; i < nh; i++) {
        const char *v = cg_value(g, h[i].n, h[i].idx), *e = cg_temp(g, "e");
        cg_block_add(decl, g->a, 16, arena_printf(g->a, "%s %s_[%d];", cg_type(h[i].n->dtype), e, K));
        cg_line(g, T_ELEM, h[i].n, "%s_[tt_] = %s;", e, v);
        names[i] = arena_printf(g->a, "%s_[tt_]", e);
    }
    cg_block early = g->body;
    *pre = g->rpre;
    cg_forget(g, T_ELEM);
    for (int i = 0; i < nh; i++)
        cg_known(g, h[i].n, h[i].idx, names[i]);
    return early;
}

/* A checkpointed pair (sched_ckpt.c): a thread per lane at every length
 * walks this kernel (F) in chunks of K steps, storing its scan carries at
 * each chunk's start but the first ([ceil(T/K) - 1, lanes] a carry, a
 * warp's stores coalesced; none for a constant T of one segment), then the reversed walk (R, the next kernel) segment by
 * segment from the end: the segment's carries restored, its K steps of F
 * recomputed into register arrays (sv0_[K], ...: unrolled, so registers;
 * steps past the end recompute the last one again, unread), then walked
 * back with R's body, which reads them there instead of from memory.
 * Loads of all three walks are staged a segment at a time in shared
 * memory (K rows a load, at most PAIR_STAGE_BYTES a block; the walks read
 * the same elements, so F's and R's common loads share their arrays);
 * past that, loads where they are used. */
static void pair_path(cg *g, tc_buf *o)
{
    const ksched *kf = g->ks;
    const fkernel *F = g->k;
    int fi = (int)(kf - g->s->k), ri = kf->ckpt_with - 1, K = kf->ckpt, ax = cg_scan_axis(F);
    cg_block d0, body, after, pre0, d1, rec, pre1, d2, rb, rafter, pre2, dh, early, preh;
    int nf = 0;
    bool stage = K >= 2;
    for (;;) {
        cg_switch_kernel(g, fi);
        g->st = (struct cg_staged){.on = stage};
        d0 = (cg_block){0};
        body = walk_body(g, &d0, 12, false);
        nf = g->st.nload;
        after = end_stores(g, NULL);
        pre0 = g->rpre;
        cg_switch_kernel(g, fi);
        g->ck.recompute = true;
        d1 = (cg_block){0};
        rec = walk_body(g, &d1, 20, false);
        pre1 = g->rpre;
        g->ck.recompute = false;
        cg_switch_kernel(g, ri);
        g->ck.cpre = "r";
        dh = (cg_block){0};
        early = hoist_early(g, &dh, &preh, K);
        d2 = (cg_block){0};
        rb = walk_body(g, &d2, 12, false);
        rafter = end_stores(g, NULL);
        pre2 = g->rpre;
        g->ck.cpre = NULL;
        g->st.on = false;
        int bytes = 0;
        for (int i = 0; i < g->st.nload; i++)
            bytes += dtype_size(g->st.load[i].n->dtype);
        if (!stage || bytes * K * SCAN_THREADS <= PAIR_STAGE_BYTES)
            break;
        stage = false; /* too wide to stage: again, loads where they are used */
    }
    cg_switch_kernel(g, fi);
    int nst = stage ? g->st.nload : 0;
    const char *fstep = F->reverse ? "len - 1 - s_" : "s_", *rstep = F->reverse ? "s_" : "len - 1 - s_";
    for (int i = 0; i < nst; i++)
        buf_printf(o, "        __shared__ %s %s[%d][%d];\n", cg_store_type(g->st.load[i].n->dtype),
                   g->st.load[i].name, K, SCAN_THREADS);
    buf_puts(o, "        const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x, lanes);\n"
                "        for (idx_t lane = tc_upto((long long)blockIdx.x * blockDim.x + threadIdx.x, lanes); lane < lanes;\n"
                "             lane = lanes - lane > step_ ? lane + step_ : lanes) {\n");
    cg_decompose(g, o, 12, "lane", g->rowvars);
    cg_put(o, 12, &pre0);
    cg_put(o, 0, &d0);
    /* the first walk, a checkpoint at each chunk's start */
    buf_printf(o, "            for (idx_t c_ = 0; c_ < len; c_ += %d) {\n", K);
    int ck = g->bufs->ck_first[fi]; /* none: one segment */
    if (ck >= 0)
        buf_puts(o, "                if (c_ > 0) { /* the checkpoint (the first segment starts from nothing) */\n");
    for (int j = 0, b = ck; j < F->nreds && ck >= 0; j++)
        if (F->reds[j]->kind == LK_SCAN) {
            cg_use_buf(g, b);
            buf_printf(o, "                    %s[(c_ / %d - 1) * lanes + lane] = %sc%d%s;\n", cg_buf_name(g, b++), K,
                       lse_pair(g, F->reds[j], false) ? "tc_lse_value(" : "", j,
                       lse_pair(g, F->reds[j], false) ? ")" : "");
        }
    if (ck >= 0)
        buf_puts(o, "                }\n");
    if (nf && stage) {
        int sv = g->st.nload;
        g->st.nload = nf; /* F's own loads */
        cg_scan_stage(g, o, K);
        g->st.nload = sv;
    }
    buf_printf(o, "                const int n_ = len - c_ < %d ? (int)(len - c_) : %d;\n", K, K);
    walk_unroll(g, o);
    buf_printf(o, "                for (int tt_ = 0; tt_ < n_; tt_++) {\n"
                  "                    const idx_t s_ = c_ + tt_;\n"
                  "                    const idx_t i%d = %s;\n", ax, fstep);
    cg_put(o, 20, &body);
    buf_puts(o, "                }\n"
                "            }\n");
    cg_put(o, 12, &after);
    /* the reversed walk */
    cg_put(o, 12, &pre1);
    cg_put(o, 12, &preh);
    cg_put(o, 12, &pre2);
    cg_put(o, 0, &d2);
    buf_printf(o, "            for (idx_t g_ = (len + %d) / %d - 1; g_ >= 0; g_--) { /* segments, the last first */\n"
                  "                const idx_t b_ = g_ * %d;\n"
                  "                const int n_ = len - b_ < %d ? (int)(len - b_) : %d;\n",
               K - 1, K, K, K, K);
    if (ck >= 0)
        buf_puts(o, "                if (g_ > 0) { /* the segment's carries (the first's are its first step's) */\n");
    for (int j = 0, b = ck; j < F->nreds && ck >= 0; j++)
        if (F->reds[j]->kind == LK_SCAN)
            buf_printf(o, lse_pair(g, F->reds[j], false) ? "                    c%d = tc_ms{%s[(g_ - 1) * lanes + lane], 0.0f};\n"
                                                        : "                    c%d = %s[(g_ - 1) * lanes + lane];\n",
                       j, cg_buf_name(g, b++));
    if (ck >= 0)
        buf_puts(o, "                }\n");
    for (int j = 0; j < F->nreds; j++) /* no first-step select: the identity */
        if (lse_pair(g, F->reds[j], false))
            buf_printf(o, "                if (g_ == 0) c%d = tc_ms_init();\n", j);
    for (int q = 0; q < kf->nckpt; q++)
        buf_printf(o, "                %s sv%d_[%d];\n", cg_store_type(kf->ckpt_vals[q]->dtype), q, K);
    cg_put(o, 0, &dh);
    if (nst) {
        buf_puts(o, "                const idx_t c_ = b_;\n");
        cg_scan_stage(g, o, K);
    }
    buf_printf(o, "                #pragma unroll\n"
                  "                for (int tt_ = 0; tt_ < %d; tt_++) { /* the segment again, into registers */\n"
                  "                    const idx_t s_ = len - b_ > tt_ ? b_ + tt_ : len - 1;\n"
                  "                    const idx_t i%d = %s;\n", K, ax, fstep);
    cg_put(o, 20, &rec);
    cg_put(o, 20, &early);
    buf_printf(o, "                }\n"
                  "                #pragma unroll\n"
                  "                for (int tt_ = %d; tt_ >= 0; tt_--) { /* walked back */\n"
                  "                    if (tt_ < n_) {\n"
                  "                        const idx_t s_ = len - 1 - (b_ + tt_);\n"
                  "                        const idx_t i%d = %s;\n", K - 1, ax, rstep);
    cg_put(o, 24, &rb);
    buf_puts(o, "                    }\n"
                "                }\n"
                "            }\n");
    cg_put(o, 12, &rafter);
    buf_puts(o, "        }\n");
    (void)d1;
}

/* long axes: a block per lane, chunks of blockDim.x elements */
static void block_path(cg *g, tc_buf *o)
{
    cg_block decl = {0};
    cg_reset_bufs(g);
    cg_block body = walk_body(g, &decl, 12, true);
    cg_block after = end_stores(g, "threadIdx.x == 0");
    buf_puts(o, "        for (idx_t lane = tc_upto((long long)blockIdx.x, lanes); lane < lanes;\n"
                "             lane = lanes - lane > (idx_t)gridDim.x ? lane + gridDim.x : lanes) {\n");
    cg_decompose(g, o, 12, "lane", g->rowvars);
    cg_put(o, 12, &g->rpre);
    cg_put(o, 0, &decl);
    buf_puts(o, "            for (idx_t c_ = 0; c_ < len; c_ += blockDim.x) {\n"
                "                const bool act_ = threadIdx.x < len - c_;\n"
                "                const int last_ = (len - c_ < blockDim.x ? (int)(len - c_) : (int)blockDim.x) - 1;\n"
                "                /* past the end: the last element, in bounds, stored by no one */\n"
                "                const idx_t s_ = act_ ? c_ + threadIdx.x : len - 1;\n");
    cg_scan_axis_index(g, o, 16);
    cg_put(o, 16, &body);
    buf_puts(o, "            }\n");
    cg_put(o, 12, &after);
    buf_puts(o, "        }\n");
}

void cg_scan(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    g->elemvars = k->mask;
    g->rowvars = cg_all_axes(k) & ~k->mask;
    g->phase = 0;
    g->v.n = 1;
    tc_buf lp, bp;
    buf_init(&lp, g->a);
    buf_init(&bp, g->a);
    if (ks->ckpt)
        pair_path(g, &lp);
    else
        lane_path(g, &lp);
    cg_forget(g, T_ROW); /* the other branch cannot see these */
    if (!ks->ckpt)
        block_path(g, &bp);

    /* lanes saturate at their count (plan_verify); s_ reaches len, c_
     * len - 1 + a block's threads (at most 1024) */
    const tc_dim *c1024 = dim_const(g->c, 1024);
    cg_loop(g, "lane", ks->rows, NULL);
    cg_loop(g, "s_", ks->rowlen, dim_const(g->c, 1));
    cg_loop(g, "c_", ks->rowlen, c1024);
    cg_limit(g, ks->rows);
    cg_limit(g, dim_add(g->c, ks->rowlen, c1024));
    cg_put(o, 4, &g->kpre);
    /* one at a time: the size parameters' order is their first use's */
    const char *lanes = cg_index(g, ks->rows);
    const char *len = cg_index(g, ks->rowlen);
    buf_printf(o, "    const idx_t lanes = %s, len = %s;\n", lanes, len);
    if (ks->ckpt) {
        buf_printf(o, "    { /* a thread per lane walks it, then kernel %d's reversed walk (checkpoints "
                      "every %d steps) */\n", ks->ckpt_with - 1, ks->ckpt);
        buf_puts(o, buf_str(&lp));
        buf_puts(o, "    }\n");
        return;
    }
    buf_printf(o, "    if (len <= %d) { /* a thread per lane walks it */\n", SCAN_SEQ);
    buf_puts(o, buf_str(&lp));
    buf_puts(o, "    } else { /* a block per lane, a chunk of blockDim.x elements at a time */\n");
    buf_puts(o, buf_str(&bp));
    buf_puts(o, "    }\n");
}
