/* sched.c - strategy, launch shape and passes for each kernel (see sched.h).
 *
 * Heuristics, not search: the shapes are symbolic, so choices that depend on
 * sizes are made at run time inside the kernel (vector or scalar per chunk,
 * grid-stride loops over rows) and the grid is an expression.
 */
#include "sched/sched.h"
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 256, PW_BLOCK = 128, FULL_GRID_CAP = 1024, COL_X = 16, COL_Y = 8, ROW_ITEMS = 8, SCAN_BLOCK = 128 };

/* Loads in flight (issue 14, bench/causes.json): a thread of a pointwise,
 * whole-tensor or split-column kernel loads ksched.unroll vectors (rows of
 * vectors) before it computes with any of them; tiles run whole without
 * bounds tests (TILE_WHOLE).  One vector at a time was the suspected cause
 * of gelu_chain, bias_gelu, col_sum and full_sum at 79-92 % of the
 * ceiling, behind Inductor (H200, 2026-11-26): the SASS (sm_90) showed
 * one LDG.128 in flight per thread (the column loop's `#pragma unroll 4`
 * kept an exit test between its loads, and stores through pointers NVRTC
 * cannot prove distinct, a foreach kernel's, pin each step's loads).  With
 * 4: col_sum and full_sum issue 4 before the first add, fma4 8 before its
 * first store, gelu_chain 2 and then 2 more (ptxas interleaves them with
 * the math at 32 registers), bias_gelu 2 vectors of x and b at a time.
 * bench/tune.sh compares the knobs below in one call, 1 against 4.
 * At most LOADS_IN_FLIGHT vectors a step (AdamW reads 4 buffers: 2 vectors
 * a step, 64 registers; at 4, 122), and the unrolled work within the budget.  COL_SPLIT:
 * the split column kernels' slices of a reduced range of unknown length. */
/* Defaults from bench/tune.sh A/Bs on the H200 (each set beside the
 * others in one call): pointwise 2 vectors a step (gelu_chain 133.2 against
 * 138.1 at 1; 4 slower: bias_gelu 150.6).  Pointwise blocks of 128 threads
 * and foreach chunks of 2 steps (Inductor's launch; 2026-11-27, session 13:
 * gelu_chain 133.0 -> 129.4 us, fma4 313.7 -> 305.1, AdamW 240 tensors
 * 2069 -> 2011, small_chain 3.38 -> 2.38).  Columns: blocks of 16 x 8
 * threads, 8 vectors a step, 32 slices (same call: col_sum 78.0 -> 73.2;
 * session 12: 77.0 -> 72.2; with 32 x 8 threads COL_UNROLL 4 lost: 84.7).
 * Whole-tensor reductions 4 vectors a step (2026-11-28, session 21, two
 * calls: full_sum 66.8 -> 64.5 us, 2: 65.1, 8: 64.4; grid caps of 528 to
 * 2112 no better; 64M f32). */
enum { PW_UNROLL = 2, FULL_UNROLL = 4, COL_SPLIT = 32, COL_UNROLL = 8, TILE_WHOLE = 0, TILE_VEC = 2,
       LOADS_IN_FLIGHT = 8 };

/* Tuning knobs for measuring launch shapes (bench/README.md): the
 * context's value (base/knobs.h: read from the environment once, checked
 * against its range there; -1 unset) or this file's default. */
static int knob(int v, int dflt)
{
    return v >= 0 ? v : dflt;
}
/* Long rows: the most blocks of a cluster a row is split across (sched.h,
 * "Clusters").  16 is past the portable 8: the runtime takes 8 wherever 8
 * blocks of up to 512 threads hold the row, then 16 of up to 512, then 8
 * or 16 of the largest (runtime/exec.c, TENSORC_CLUSTER_MAX caps it; until
 * session 11, 8 of any size first).  Measured on an H200, tc-bench, us, one
 * call (i14rows2's first), the tree before (dc26e33) and this one (loads
 * in flight at once, 16-bit rows 32 a thread two a register; the paired
 * combines came later, unmeasured):
 *                            before   after   [Inductor, another run]
 *   softmax 1024x65536        241.8   210.1   [203]
 *   softmax 512x131072        393.0   341.7   [209]
 *   softmax 256x262144        636.4   626.3 (8 blocks, looping);
 *                                     455.0 (16 blocks, 16 x 1024)  [324]
 *   rmsnorm bf16 1024x65536   142.2    94.0   [103]
 *   rmsnorm bf16 256x262144   452.9   143.6   [126]  (8 x 1024 x 32: held)
 *   cross_entropy 4096x128256 2842.7 1084.9   [692]  (8 x 512 x 32)
 * Still 47-75 % of the ceiling: a block's phases (load, block reduction,
 * cluster barrier, exchange) do not overlap its own loads, and the blocks
 * of one SM start in step, so they reduce together with no loads in
 * flight; registers allow at most 3 blocks of 512 a SM.  Session 11: the
 * wide f32 kernel (sched_wide.c) and 512-first clusters (runtime/exec.c):
 * softmax 179.3 / 201.2 / 237.7 (69 / 61 / 52 %), rmsnorm bf16 262144
 * 120.8.  Next: stage the next row's slice in shared memory (cp.async or
 * TMA) while the current one reduces, resident blocks looping over rows. */
enum { ROW_CLUSTER = 16 };
static const int64_t GRID_MAX = 2147483647;

/* The compile budget's share here (fuse.h): a kernel's work (nodes
 * computed, per pass) is written once per vector lane of a pointwise
 * kernel, and once per register-kept element of a rows kernel's persistent
 * path (fully unrolled) plus once for its looped path.  Past UNROLLED
 * nodes, NVRTC's time and the registers grow faster than the code is
 * worth (a 400-statement pointwise chain: 5.6 s to CUBIN with 4-wide
 * vectors, 0.17 s scalar), and such kernels are compute-bound anyway:
 * scalar code, looped rows. */
enum { UNROLLED = 1024 };

/* And per function: past FN_UNROLLED unrolled nodes in all, every kernel
 * is scalar and looped.  A persistent rows kernel costs NVRTC some 100 ms
 * (CPU time, this machine), a looped one about 40: a 32-step layernorm
 * stack took 4.3 s with persistent kernels, 1.3 s looped.  Programs of a
 * few normalizations (every example) stay far below it. */
enum { FN_UNROLLED = 8192 };

static bool over_fn_budget(const ffn *f)
{
    int64_t total = 0;
    for (int i = 0; i < f->nk; i++) {
        const fkernel *k = f->k[i];
        if (k->kind == KK_POINTWISE)
            total += (int64_t)sched_work(k) * 4;
        else if (k->kind == KK_REDUCE && k->inner)
            total += (int64_t)sched_work(k) * 2 * ROW_ITEMS;
    }
    return total > FN_UNROLLED;
}

/* Foreach: grid-stride steps a thread makes in its block's chunk.  Two
 * steps of 16 bytes with 128-thread blocks (4 KB a chunk, Inductor's size):
 * AdamW's 302M elements are ~300k blocks, each finding its group once.
 * Measured on the H200 with 256 threads (64M elements, us): 1 step:
 * gelu_chain 151, fma4 311, AdamW 565 (generic loads then); 4: 144, 317,
 * 508; 8: 144, 321, 502; 16: 148, 325, 525; then 128 threads x 2 steps beat
 * 256 x 8 (above).  -DTC_FE_STEPS=N at build time, to measure again. */
#ifndef TC_FE_STEPS
#define TC_FE_STEPS 2
#endif
enum { FE_STEPS = TC_FE_STEPS };

/* u, halved until its loads in flight and its unrolled work fit */
static int cap_unroll(const fkernel *k, const ksched *ks, int u)
{
    while (u > 1 && ((int64_t)sched_work(k) * ks->vec * u > UNROLLED || u * k->nreads > LOADS_IN_FLIGHT))
        u /= 2;
    return u;
}

/* The pointwise unroll (a power of two up to 8) for a kernel with vectors;
 * 1 without them or past the budget (the work is written once per lane of
 * every vector). */
static int pw_unroll(const fkernel *k, const ksched *ks, int u)
{
    if (ks->vec < 2 || ks->compact)
        return 1;
    return cap_unroll(k, ks, u);
}

static const tc_dim *prod(tc_dimctx *c, const fkernel *k, bool reduced)
{
    const tc_dim *p = dim_const(c, 1);
    for (int i = 0; i < k->rank; i++)
        if (((k->mask >> i) & 1u) == (unsigned)reduced)
            p = dim_mul(c, p, k->dom[i]);
    return p;
}

/* The latest pass among this kernel's reductions that n's value needs, or
 * -1 (memo: -2 unknown). */
static int needs(const ffn *f, const fkernel *k, const lnode *n, const int *phase_of, int *memo)
{
    if (memo[n->id] != -2)
        return memo[n->id];
    int r = -1;
    if (n->kind == LK_REDUCE && f->kernel_of[n->id] == k->id) {
        r = phase_of[n->id];
    } else if (n->kind == LK_INPUT || n->kind == LK_MATMUL ||
               (f->stored[n->id] && f->kernel_of[n->id] != k->id)) {
        r = -1;
    } else {
        for (int i = 0; i < n->nin; i++) {
            int q = needs(f, k, n->in[i].src, phase_of, memo);
            if (q > r)
                r = q;
        }
    }
    memo[n->id] = r;
    return r;
}

/* ---- transposed reads --------------------------------------------------- */

typedef struct twalk {
    const ffn *f;
    const fkernel *k;
    int votes[TC_MAX_RANK + 1];
    int budget;
} twalk;

/* Walk what the kernel computes; each buffer load whose contiguous
 * variable (coefficient 1) is not the domain's last votes for its own. */
static void tvisit(twalk *w, const lnode *n, const tc_dim *const *idx)
{
    if (--w->budget < 0)
        return;
    const lfn *l = w->f->l;
    bool own = w->f->kernel_of[n->id] == w->k->id;
    if (n->kind == LK_INPUT || (w->f->stored[n->id] && !own)) {
        if (n->rank < 2)
            return;
        const tc_dim *flat = lir_flat(l, n, idx);
        int last = w->k->rank - 1;
        if (lir_coeff(l, flat, last) == 1)
            return;
        for (int v = 0; v < last; v++)
            if (lir_coeff(l, flat, v) == 1)
                w->votes[v]++;
        return;
    }
    if (n->kind != LK_POINTWISE && n->kind != LK_CONCAT && n->kind != LK_GATHER)
        return;
    for (int i = n->kind == LK_GATHER; i < n->nin; i++) { /* not a gather's source */
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(l, &n->in[i], idx, n->rank, ci);
        tvisit(w, n->in[i].src, ci);
    }
}

/* A variable other than the last along which some load is contiguous: the
 * kernel then works in 32 x 32 tiles staged in shared memory, so both the
 * transposed reads and the writes are coalesced.  -1 if none. */
static int transposed_var(const ffn *f, const fkernel *k)
{
    if (k->rank < 2)
        return -1;
    twalk w = {f, k, {0}, 10000};
    for (int i = 0; i < k->nstores; i++) {
        const tc_dim *idx[TC_MAX_RANK];
        if (fuse_node_index(f, k, k->stores[i], idx))
            tvisit(&w, k->stores[i], idx);
    }
    int best = -1;
    for (int v = 0; v < k->rank - 1; v++)
        if (w.votes[v] && (best < 0 || w.votes[v] > w.votes[best]))
            best = v;
    return w.budget < 0 ? -1 : best;
}

/* In a kernel over trailing-axis rows, a buffer with none of the reduced
 * dims is read or written once a row (a class index, the row's statistics),
 * never in the vector loop: it does not narrow the vectors.  An i64 target
 * beside bf16 logits made cross-entropy's loads 4 bytes wide. */
static bool once_a_row(const fkernel *k, const lnode *n)
{
    if (k->kind != KK_REDUCE || !k->inner)
        return false;
    for (int j = 0; j < n->rank; j++)
        for (int a = 0; a < k->rank; a++)
            if (((k->mask >> a) & 1u) && dim_eq(n->shape[j], k->dom[a]))
                return false; /* (a reduced dim that is also a kept one counts too) */
    return true;
}

int sched_widest(const fkernel *k)
{
    int m = 1;
    for (int i = 0; i < k->nreads; i++)
        if (dtype_size(k->reads[i]->dtype) > m && !once_a_row(k, k->reads[i]))
            m = dtype_size(k->reads[i]->dtype);
    for (int i = 0; i < k->nstores; i++)
        if (dtype_size(k->stores[i]->dtype) > m &&
            (fuse_is_element(k, k->stores[i]) || !k->inner))
            m = dtype_size(k->stores[i]->dtype);
    return m;
}

/* ---- one function per strategy ---------------------------------------- */

/* What every strategy reads: the function, its dims, the budget verdict. */
typedef struct sctx {
    const ffn *f;
    const sfn *s;
    tc_dimctx *c;
    tc_diag *d;
} sctx;

/* Passes: a reduction runs one pass after the latest one it needs. */
static void passes(const sctx *x, const fkernel *k, ksched *ks, int *phase_of, int *memo,
                   tc_arena *a)
{
    int n = x->f->l->nnodes > 0 ? x->f->l->nnodes : 1;
    ks->phase = ARENA_ARRAY(a, int, k->nreds > 0 ? k->nreds : 1);
    for (int j = 0; j < n; j++)
        memo[j] = -2;
    for (int j = 0; j < k->nreds; j++) {
        int q = needs(x->f, k, k->reds[j]->in[0].src, phase_of, memo);
        phase_of[k->reds[j]->id] = q + 1;
        ks->phase[j] = q + 1;
        if (q + 2 > ks->nphases)
            ks->nphases = q + 2;
        memo[k->reds[j]->id] = q + 1;
    }
}

/* SCH_POINTWISE with a read contiguous along axis ks->tile: 64 x 64 tiles
 * (TENSORC_TILE_VEC=2, the default since session 22: transpose_add 8192^2
 * f32 191.4 us against 194.4 for 32 x 32 and 207.8 for 32 x 32 with
 * vectors, H200, one call) where every access is 4 bytes or narrower,
 * else 32 x 32 (codegen/tiled.c; 8-byte types keep 32). */
static void sched_tiles(const sctx *x, const fkernel *k, ksched *ks)
{
    tc_dimctx *c = x->c;
    ks->kind = SCH_POINTWISE;
    ks->block[0] = 32;
    ks->block[1] = 8;
    ks->tvec = knob(x->f->knobs.tile_vec, TILE_VEC);
    ks->tw = ks->tvec == 2 && sched_widest(k) <= 4 ? 64 : 32;
    const tc_dim *da = k->dom[k->rank - 1], *db = k->dom[ks->tile];
    /* one statement each: a dim's atoms are ordered by creation, and the
     * order two arguments are evaluated in is the compiler's (gcc and
     * clang printed different grids) */
    const tc_dim *tb = dim_ceildiv(c, db, dim_const(c, ks->tw));
    const tc_dim *ta = dim_ceildiv(c, da, dim_const(c, ks->tw));
    const tc_dim *tiles = dim_mul(c, ta, tb);
    const tc_dim *batch = dim_const(c, 1);
    for (int v = 0; v < k->rank - 1; v++)
        if (v != ks->tile)
            batch = dim_mul(c, batch, k->dom[v]);
    ks->grid = dim_mul(c, tiles, batch);
    ks->unroll = knob(x->f->knobs.tile_whole, TILE_WHOLE) ? 2 : 1;
    ks->why = ks->tw == 64 ? "a read is contiguous along another axis than the output's: 64 x 64 tiles "
                             "through shared memory, so reads and writes are both coalesced "
                             "(16-byte accesses in whole tiles of at most two transposed operands: "
                             "TENSORC_TILE_VEC)"
                           : "a read is contiguous along another axis than the output's: 32 x 32 tiles "
                             "through shared memory, so reads and writes are both coalesced";
}

/* SCH_POINTWISE: grid-stride vectors; foreach for an elementwise function. */
static void sched_pointwise(const sctx *x, const fkernel *k, ksched *ks)
{
    tc_dimctx *c = x->c;
    ks->kind = SCH_POINTWISE;
    ks->block[0] = knob(x->f->knobs.pw_block, PW_BLOCK);
    ks->vec = k->rank > 0 ? 16 / sched_widest(k) : 1;
    if (ks->vec < 1)
        ks->vec = 1;
    bool big = ks->vec > 1 && (sched_work(k) * ks->vec > UNROLLED || x->s->big);
    if (big)
        ks->vec = 1;
    /* as if 4 lanes wide whatever the dtype: the same rule for f64 */
    ks->compact = sched_work(k) * 4 > UNROLLED || x->s->big;
    ks->unroll = pw_unroll(k, ks, knob(x->f->knobs.pw_unroll, PW_UNROLL));
    ks->grid = dim_ceildiv(c, ks->numel, dim_const(c, (int64_t)ks->block[0] * ks->vec * ks->unroll));
    ks->why = ks->vec > 1 ? "one thread per vector of elements, grid-stride; 16-byte "
                            "accesses where contiguous and aligned"
              : big ? "one thread per element, grid-stride; scalar: the budget (the work "
                      "written once per vector lane would pass the unrolled limit)"
                    : "one thread per element, grid-stride";
    if (x->f->l->g->elementwise && x->f->nk == 1) {
        ks->foreach = true;
        int steps = knob(x->f->knobs.fe_steps, FE_STEPS);
        if (steps % ks->unroll)
            steps = ks->unroll;
        ks->chunk = ks->block[0] * ks->vec * steps;
        ks->grid = dim_ceildiv(c, ks->numel, dim_const(c, ks->chunk));
        ks->why = "elementwise function: blocks take chunks of one tensor group each (any "
                  "number of groups in one launch); 16-byte accesses where aligned";
    }
}

/* SCH_FULL: slices into a workspace, the last block combines them. */
static void sched_full(const sctx *x, const fkernel *k, ksched *ks)
{
    tc_dimctx *c = x->c;
    ks->kind = SCH_FULL;
    ks->compact = x->s->big;
    ks->block[0] = BLOCK;
    /* vector loads when the kernel only reduces (stores need the scalar path) */
    bool elem_store = false;
    for (int j = 0; j < k->nstores; j++)
        elem_store |= fuse_is_element(k, k->stores[j]) && k->stores[j]->kind != LK_REDUCE;
    ks->vec = elem_store ? 1 : 16 / sched_widest(k);
    ks->unroll = pw_unroll(k, ks, knob(x->f->knobs.full_unroll, FULL_UNROLL));
    ks->grid = dim_ceildiv(c, ks->rowlen, dim_const(c, BLOCK * 4 * ks->vec));
    ks->grid_cap = knob(x->f->knobs.full_grid, FULL_GRID_CAP);
    ks->why = "whole-tensor reduction: blocks reduce slices into a workspace, the last "
              "block combines them in order";
    if (ks->nphases > 1)
        diag_error(x->d, TC_ERR_INTERNAL, x->f->l->g->loc,
                   "scheduling: a whole-tensor kernel with dependent reductions");
}

/* After sched_rows and sched_online: f32 rows a cluster may take get twice the row a
 * thread (sched_rows_widen) where the row is known to be long, and both variants where its
 * length is known only at launch (codegen emits the wide one too, each step guarded by the
 * length); TENSORC_ROWS_REGS=16 or 32 keeps one of them for every length (32 also for
 * 16-bit rows and the online pair); sched_rows_pipe follows (sched_wide.c). */
static void sched_rows_wide(const sctx *x, const fkernel *k, ksched *ks)
{
    int64_t len;
    int rr = x->f->knobs.rows_regs;
    bool can = ks->vec > 1 && !k->ncols && ks->items && !ks->compact &&
               sched_work(k) * 2 * 2 * ROW_ITEMS <= UNROLLED; /* the budget of sched_rows, twice */
    if (!can || !(rr == 32 || (rr < 0 && ks->vec == 4 && !ks->packed && ks->cluster)))
        return;
    if (rr == 32 || dim_is_const(ks->rowlen, &len)) {
        sched_rows_widen(ks);
        /* known to be past one block of the wide kernel too */
        ks->long_only = rr != 32 && len > (int64_t)ks->block[0] * ks->block_per;
    } else
        ks->wide_split = true;
}

/* SCH_ROWS: a block per row, registers for short rows. */
static void sched_rows(const sctx *x, const fkernel *k, ksched *ks)
{
    ks->kind = SCH_ROWS;
    int64_t len;
    /* Registers for up to ROW_ITEMS elements per thread, so a row of
     * up to block * ROW_ITEMS is read once; the runtime sizes the
     * block to the row (a power of two, 32 to 1024), so short rows
     * do not leave most threads idle.  More items would hold longer
     * rows but NVRTC time grows with the unrolled passes (softmax:
     * 8 items 250 ms, 16 items 330 ms on the CI machine). */
    ks->block[0] = 1024;
    /* one reduced axis, the last: vector loads along it, ROW_ITEMS
     * elements per thread in all */
    ks->vec = k->mask == 1u << (k->rank - 1) ? 16 / sched_widest(k) : 1;
    if (ks->vec > ROW_ITEMS)
        ks->vec = ROW_ITEMS;
    /* with vectors, 16 elements a thread: smaller blocks, more rows in
     * flight per SM (measured on an H200: bf16 rmsnorm 8 elements a
     * thread reached 2.2 TB/s, the block's syncs dominating) */
    int per = ks->vec > 1 ? 2 * ROW_ITEMS : ROW_ITEMS;
    /* the compile budget below counts 16 a thread whatever the dtype */
    int budget_per = per;
    /* 16-bit floats are kept as loaded, two a register (codegen/load.c,
     * packed): 32 a thread in the registers of 16 f32, twice the bytes in
     * flight per thread */
    ks->packed = ks->vec == 8 && sched_widest(k) == 2;
    if (ks->packed)
        per = 4 * ROW_ITEMS;
    /* TENSORC_ROWS_BLOCK: the largest block (A/B; not for column partials) */
    if (x->f->knobs.rows_block > 0 && !k->ncols)
        ks->block[0] = x->f->knobs.rows_block;
    /* column partials keep a sum per element a thread has (fuse.h): 8 a thread (sched_colpart_per),
     * so the sums fit beside the row; TENSORC_ROWS_REGS=8 too (Inductor's rmsnorm: 512 x 8, A/B) */
    if (k->ncols || (x->f->knobs.rows_regs == 8 && !ks->packed))
        per = budget_per = k->ncols ? sched_colpart_per(&x->f->knobs, ks) : ROW_ITEMS;
    ks->items = per / ks->vec;
    ks->block_per = per;
    /* Exps kept in registers for the epilogue (the removed TENSORC_ROWS_REUSE=1)
     * lost or tied on the H200: softmax 134.81 / 132.84 us, 214.89 / 210.04,
     * 468.53 / 454.29 (16384x4096, 1024x65536, 256x262144; kept / base) */
    /* rows past a block's registers: split across a cluster (sm_90), or
     * loop where none forms; past the cluster's registers, loop only */
    ks->cluster = ROW_CLUSTER;
    bool clen = dim_is_const(ks->rowlen, &len);
    if (clen && len <= (int64_t)ks->block[0] * per)
        ks->cluster = 0;
    if (clen && len > (int64_t)ks->block[0] * per * ROW_CLUSTER)
        ks->items = 0;
    bool big = sched_work(k) * budget_per > UNROLLED || x->s->big;
    if (big)
        ks->items = 0;
    if (!ks->items)
        ks->cluster = 0;
    ks->compact = big;
    ks->grid = ks->rows;
    ks->why = big ? "reduction over trailing axes: a block per row, one pass per phase, "
                    "epilogue pass writes the row; rows loop: the budget (the work unrolled "
                    "for rows kept in registers would pass the unrolled limit)"
              : ks->cluster ? "reduction over trailing axes: a block per row, one pass per phase, "
                              "epilogue pass writes the row; a row past one block's registers is "
                              "split across a cluster (read once, partials exchanged through "
                              "distributed shared memory in a fixed order)"
                  : "reduction over trailing axes: a block per row, one pass per phase, "
                    "epilogue pass writes the row";
    if (k->ncols)
        sched_colpart(x->c, &x->f->knobs, k, ks);
}

/* SCH_COLUMNS: threads own kept elements; the reduced range split. */
static void sched_columns(const sctx *x, const fkernel *k, ksched *ks)
{
    tc_dimctx *c = x->c;
    ks->kind = SCH_COLUMNS;
    ks->compact = x->s->big;
    /* 256 threads in all (tc_col_reduce's shared memory), at most (TENSORC_COL_Y) */
    int cx = knob(x->f->knobs.col_x, COL_X), cy = knob(x->f->knobs.col_y, x->f->knobs.col_x < 0 ? COL_Y : 256 / cx);
    ks->block[0] = cx;
    ks->block[1] = cx * cy <= 256 ? cy : 256 / cx;
    ks->grid = dim_ceildiv(c, ks->rows, dim_const(c, cx));
    ks->why = "reduction over leading axes: threads own kept elements (coalesced), "
              "block.y splits the reduced range";
    /* One pass: split the reduced range across blocks too, or a
     * few hundred columns would leave most of the GPU idle. */
    /* Several columns a thread, read as one 16-byte vector, when the
     * last axis is kept and nothing is stored per element: loads of
     * 4 bytes each left the memory system idle (col_sum 16384 x 4096
     * on an H200: 120 us, 81 with 16-byte loads). */
    bool elem_store = false;
    for (int j = 0; j < k->nstores; j++)
        elem_store |= fuse_is_element(k, k->stores[j]);
    int vec = 1;
    if (!elem_store && !k->partials && !(k->mask >> (k->rank - 1) & 1u)) {
        vec = 16 / sched_widest(k);
        if (vec > ROW_ITEMS)
            vec = ROW_ITEMS;
    }
    int64_t len;
    ks->split = knob(x->f->knobs.col_split, COL_SPLIT);
    if (dim_is_const(ks->rowlen, &len))
        ks->split = len >= 32 * 256 ? 32 : len >= 2 * 256 ? (int)(len / 256) : 1;
    if (ks->nphases != 1 || ks->split < 2) {
        ks->split = 0;
        return;
    }
    /* a column group is COL_X * vec columns wide: each warp
     * reads COL_X * 16 contiguous bytes a row.  Measured on an
     * H200 (f32, split 32): 16384 x 4096 120 us to 83, 4096 x
     * 16384 146 to 94, but 65536 x 1024 116 to 128 (8 groups,
     * 256 blocks: too few); groups COL_X columns wide ([8, 32]
     * blocks) gave 99, 156 and 81.  A split sized at launch to
     * the column count is the fix for both. */
    if (vec > 1) {
        ks->vec = vec;
        ks->unroll = ks->compact ? 1 : cap_unroll(k, ks, knob(x->f->knobs.col_unroll, COL_UNROLL));
        ks->grid = dim_ceildiv(c, ks->rows, dim_const(c, (int64_t)cx * vec));
    }
    ks->grid = dim_mul(c, ks->grid, dim_const(c, ks->split));
    ks->why = "reduction over leading axes: threads own kept elements (coalesced), "
              "block.y and slices of the reduced range across blocks; the last slice "
              "to finish combines the partials in order";
}

/* SCH_SCAN: a thread per lane walks the scanned axis. */
static void sched_scan(const sctx *x, const fkernel *k, ksched *ks)
{
    tc_dimctx *c = x->c;
    ks->kind = SCH_SCAN;
    ks->compact = x->s->big;
    /* 128 threads: B512 x H128 lanes are 512 blocks, about 4 an SM */
    ks->block[0] = SCAN_BLOCK;
    ks->nphases = 0;
    ks->phase = NULL;
    ks->grid = dim_ceildiv(c, ks->rows, dim_const(c, SCAN_BLOCK));
    ks->why = "scan: up to 256 elements, a thread per lane walks the axis in order, each carry "
              "in a register, lanes consecutive along the innermost other axis (coalesced); longer, "
              "a block per lane scans chunks of 128 (warp shuffles) after the carry";
}

/* The strategy of one kernel: the shape of its domain decides. */
static void sched_kernel(const sctx *x, const fkernel *k, ksched *ks, int *phase_of, int *memo,
                         tc_arena *a)
{
    tc_dimctx *c = x->c;
    ks->k = k;
    ks->numel = prod(c, k, false);
    ks->numel = dim_mul(c, ks->numel, prod(c, k, true));
    ks->block[0] = ks->block[1] = ks->block[2] = 1;
    ks->grid_cap = GRID_MAX;
    ks->vec = 1;
    ks->unroll = 1;
    if (k->kind == KK_EXTERN) {
        ks->kind = SCH_EXTERN;
        if (k->attn)
            sched_attn(&x->f->knobs, c, k, ks, a);
        else
            sched_matmul(&x->f->knobs, c, k, ks, a);
        return;
    }
    if (k->kind == KK_SCAN) {
        ks->tile = -1;
        ks->rows = prod(c, k, false);
        ks->rowlen = prod(c, k, true);
        sched_scan(x, k, ks);
        return;
    }
    passes(x, k, ks, phase_of, memo, a);
    if (k->kind == KK_POINTWISE && (ks->tile = transposed_var(x->f, k)) >= 0) {
        sched_tiles(x, k, ks);
        return;
    }
    ks->tile = -1;
    if (k->kind == KK_POINTWISE) {
        sched_pointwise(x, k, ks);
        return;
    }
    ks->rows = prod(c, k, false);
    ks->rowlen = prod(c, k, true);
    unsigned all = k->rank >= 32 ? ~0u : (1u << k->rank) - 1;
    if (k->partials)
        sched_colpart(c, &x->f->knobs, k, ks); /* the combining kernel's range: the partials */
    if (k->mask == all)
        sched_full(x, k, ks);
    else if (k->inner) {
        sched_rows(x, k, ks);
        sched_online(x->f, k, ks);
        sched_rows_wide(x, k, ks);
        sched_rows_pipe(&x->f->knobs, k, ks);
    } else
        sched_columns(x, k, ks);
}

sfn *sched_fn(const ffn *f, bool idx64, tc_arena *a, tc_diag *d)
{
    sfn *s = ARENA_NEW(a, sfn);
    s->f = f;
    s->nk = f->nk;
    s->idx64 = idx64;
    s->big = over_fn_budget(f);
    s->k = ARENA_ARRAY(a, ksched, f->nk > 0 ? f->nk : 1);
    int n = f->l->nnodes > 0 ? f->l->nnodes : 1;
    int *phase_of = ARENA_ARRAY(a, int, n);
    int *memo = ARENA_ARRAY(a, int, n);
    sctx x = {f, s, f->l->dims, d};
    for (int i = 0; i < f->nk; i++)
        sched_kernel(&x, f->k[i], &s->k[i], phase_of, memo, a);
    sched_matmul_rules(s, a);
    sched_ckpt(s, a);
    return s;
}

static const char *kind_name(sched_kind k)
{
    static const char *const names[] = {"pointwise", "rows", "columns", "full", "extern", "scan"};
    return names[k];
}

void sched_print(tc_buf *b, const sfn *s)
{
    graph_print_signature(b, s->f->l->g);
    buf_printf(b, "  index arithmetic: %s\n", s->idx64 ? "64-bit" : "32-bit (sizes checked at launch)");
    if (s->f->l->g->remat) /* a vjp pair's half: what the forward saves (graph/grad_remat.c) */
        buf_puts(b, s->f->l->g->remat);
    for (int i = 0; i < s->nk; i++) {
        const ksched *ks = &s->k[i];
        buf_printf(b, "  kernel %d %s: %s\n", i, ks->k->name, kind_name(ks->kind));
        if (ks->norm_into || ks->pair_into || ks->epi_into)
            buf_printf(b, "    launched only when kernel %d's matmul runs on cuBLAS (its generated "
                          "kernel computes this one's work: the %s rule)\n",
                       (ks->norm_into ? ks->norm_into : ks->pair_into ? ks->pair_into : ks->epi_into) - 1,
                       ks->norm_into ? "row-scale" : ks->pair_into ? "pair" : "epilogue");
        sched_print_ckpt(b, s, i);
        if (ks->kind == SCH_EXTERN && ks->k->attn) {
            sched_print_attn(b, ks);
            continue;
        }
        if (ks->kind == SCH_EXTERN) {
            sched_print_matmul(b, ks);
            continue;
        }
        buf_printf(b, "    block [%d, %d, %d], grid ", ks->block[0], ks->block[1], ks->block[2]);
        dim_print(b, ks->grid);
        if (ks->grid_cap != GRID_MAX)
            buf_printf(b, " (at most %lld)", (long long)ks->grid_cap);
        buf_putc(b, '\n');
        buf_puts(b, "    elements ");
        dim_print(b, ks->numel);
        if (ks->kind != SCH_POINTWISE) {
            buf_puts(b, ", rows ");
            dim_print(b, ks->rows);
            buf_puts(b, " of ");
            dim_print(b, ks->rowlen);
        }
        buf_putc(b, '\n');
        if (ks->kind == SCH_POINTWISE && ks->tile >= 0)
            buf_printf(b, "    tiles of %d x %d over axes %d (rows of a tile) and %d\n", ks->tw, ks->tw,
                       ks->tile, ks->k->rank - 1);
        else if (ks->kind == SCH_POINTWISE || (ks->kind == SCH_FULL && ks->vec > 1))
            buf_printf(b, "    vector width %d\n", ks->vec);
        if (ks->unroll > 1 && ks->tile >= 0)
            buf_puts(b, "    whole tiles without bounds tests (their loads in flight together)\n");
        else if (ks->unroll > 1 && ks->kind == SCH_COLUMNS)
            buf_printf(b, "    %d rows a thread a step, all loaded before any is added (the same order)\n",
                       ks->unroll);
        else if (ks->unroll > 1)
            buf_printf(b, "    %d vectors a thread a step, all loaded before any is used\n", ks->unroll);
        if (ks->foreach)
            buf_printf(b, "    foreach: a block per chunk of %d elements of one tensor group%s\n", ks->chunk,
                       s->f->knobs.fe_param == 1 ? " (its table read as constants: TENSORC_FE_PARAM=1)" : "");
        if (ks->kind == SCH_COLUMNS && ks->split)
            buf_printf(b, "    reduced range split in %d slices per column group\n", ks->split);
        if (ks->kind == SCH_COLUMNS && ks->vec > 1)
            buf_printf(b, "    %d columns a thread (one vector where contiguous and aligned)\n", ks->vec);
        sched_print_online(b, ks);
        sched_print_pipe(b, ks);
        if (ks->kind == SCH_ROWS && ks->items && !ks->online_sum)
            buf_printf(b, "    block sized to the row at launch (32..%d threads, %d elements each%s, "
                          "the first pass's loads all in flight at once); rows of up to %d elements "
                          "stay in registers, longer rows loop\n",
                       ks->block[0], ks->items * ks->vec, ks->packed ? ", two a register" : "",
                       ks->items * ks->vec * ks->block[0]);
        if (ks->kind == SCH_ROWS && ks->cluster)
            buf_printf(b, "    long rows: split across a cluster on sm_90 (the fewest blocks whose registers hold the "
                          "row, sized at launch: 8, then %d, of up to 512 threads, then of up to %d; partials pushed onto "
                          "each block's mbarrier, or with TENSORC_CLUSTER_PUSH=0 a cluster barrier a "
                          "combine); elsewhere they loop\n", ks->cluster, ks->block[0]);
        if (ks->kind == SCH_ROWS)
            sched_print_wide(b, ks);
        if (ks->kind == SCH_ROWS && ks->vec > 1)
            buf_printf(b, "    vector width %d along the row (rows that are a whole number of aligned "
                          "vectors)\n", ks->vec);
        else if (ks->kind == SCH_ROWS)
            buf_puts(b, "    rows loop, re-read in each pass (too long for registers)\n");
        if (ks->kind == SCH_SCAN) {
            buf_puts(b, "    lanes walk their axis in order:");
            for (int j = 0; j < ks->k->nreds; j++)
                buf_printf(b, " %%%d %s%s", ks->k->reds[j]->id, op_table[ks->k->reds[j]->op].name,
                           j + 1 < ks->k->nreds ? "," : "");
            buf_putc(b, '\n');
        }
        if (ks->nphases) {
            buf_printf(b, "    reduction passes %d, then the epilogue:", ks->nphases);
            for (int j = 0; j < ks->k->nreds; j++)
                buf_printf(b, " %%%d %s in pass %d%s", ks->k->reds[j]->id,
                           red_kind_name(ks->k->reds[j]->a.red.kind), ks->phase[j],
                           j + 1 < ks->k->nreds ? "," : "");
            buf_putc(b, '\n');
        }
        if (ks->compact)
            buf_printf(b, "    compact: library math and block reductions called, not inlined (the "
                          "budget: %s)\n",
                       s->big ? "the function's unrolled work passes its limit"
                              : "the kernel's unrolled work passes its limit");
        sched_print_colpart(b, &s->f->knobs, ks);
        buf_printf(b, "    why: %s\n", ks->why);
    }
}
