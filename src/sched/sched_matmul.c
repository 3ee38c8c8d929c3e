/* sched_matmul.c - the cost model of matrix products: cuBLAS or the
 * generated kernel (sched.h's SCH_EXTERN; codegen/matmul.c generates it).
 *
 * A skinny product (M, the output's rows, small: a decoder's projections at
 * small batch) is bound by streaming the weight once.  The generated kernel
 * splits N into 64-wide tiles and K into slices of MM_KSLICE, one block
 * each, streams the weight in 16-byte cp.async copies, multiplies on tensor
 * cores (f16/bf16) or with FMAs (f32), and sums the slices in a fixed order
 * in the same kernel.  It is chosen where it was measured at par with
 * cuBLAS: f16/bf16 with M <= 16 (H200, W 4096 x 4096: 17.6 us against
 * cuBLAS's 17.4 at M = 1, 19.2 against 18.9 at M = 16; at M = 64 it took
 * 38.7 against 17.7, so larger M stays on cuBLAS), and a weight the L2
 * can keep (MM_L2_BYTES below: past it cuBLAS streams faster).  f32 was not measured
 * against cuBLAS: cuBLAS, as f64 (no generated f64 kernel).  A constant M
 * decides at compile time; a symbolic M puts both in the plan, the
 * generated kernel guarded by M <= the limit and cuBLAS by M above it
 * (plan.h's guards), so one compiled program serves every M.  Being
 * generated, it is where fusion across the matmul will go (issue 13).
 *
 * TENSORC_MATMUL=cublas or =generated overrides the model for every matmul
 * of f32, f16 or bf16 (benchmarks against cuBLAS; tests of the generated
 * kernel at any M); the sched dump says so.  TENSORC_MATMUL_KSLICE=N (a
 * multiple of 64) sets the K slice (tuning: 512 and 2048 were slower than
 * 1024 at M = 1 and 16 on the H200).  TENSORC_MATMUL_STAGES (2 to 8),
 * TENSORC_MATMUL_BK (32, 64, 128) and TENSORC_MATMUL_RESIDENT (0, 1, or a
 * grid) are streaming variants for A/B timing (matmul.c, README), not yet
 * measured; unset, the kernel is as it was.  128-column 16-row tiles (the
 * removed TENSORC_MATMUL_BN=128) lost on the H200 (tc-bench us, BN 128 vs
 * 64): rmsnorm_matmul 19.42 vs 16.79, rmsnorm_matmul_m1 16.69 vs 13.93,
 * gated_mlp 90.51 vs 78.13, lora 52.85 vs 38.36 (KSLICE=512: worse still).
 * TENSORC_MATMUL_BN=128|256 is back (session 13) for bench/micro/mmstream.cu's
 * 16 x 256 tiles of 32-row steps (3.91 TB/s at K 65536 where the 64-wide
 * geometry took 3.38): K steps of 32, four stages in dynamic shared memory,
 * each warp 64 columns at 256, and K slices the kernel picks at launch so
 * few wide tiles still fill the grid (wide_tiles below).  Timed (H200,
 * 2026-11-27, 64 / 128 / 256): rmsnorm_matmul 16.7 / 43.5 / 72.5 us,
 * gated_mlp 78.2 / 82.6 / 131.0, lora 38.4 / 62.7 / 106.6: a knob, off.
 *
 * The critical path at rmsnorm_matmul's decode shape (M = 16, K = N = 4096,
 * f16, H200: 132 SMs), read from the SASS of sm_90 (2026-11-27, no GPU at
 * hand; L2 hit ~0.3 us, DRAM ~0.7, launch ~2.5): 64 tiles x 4 K slices =
 * 256 blocks of 128 threads, 128 registers (the cap of 4 blocks a SM), 45
 * KB of shared memory: one wave of ~2 blocks a SM, 2 warps a scheduler.  A
 * block: its first 3 stages' copies (~0.7 us), then 16 K steps of 64, each
 * a wait, a barrier, the x tile's squares and scaling, the next stage's
 * copies, a barrier and 8 mma.sync: ~330 instructions a warp a step,
 * ~0.35 us of issue a step with 2 warps a scheduler, ~5.5 us a block.
 * Until 2026-11-27 each step's scaling also loaded its 64 elements of g
 * from global memory after the wait and before the next copies (one
 * dependent L2 round trip a step: ~16 x 0.3-0.5 = 5-8 us).  Then the
 * partial tile's stores, every thread's __threadfence (MEMBAR.SC.GPU and
 * an L1 invalidation in each warp, ~0.5-1 us), the ticket's atomic
 * (~0.5), and in each tile's last block another fence, the slices' sums of
 * squares (4 loads at once, ~0.3) and the partial tiles (4 x 8 loads at
 * once, ~0.3).  Sum: ~2.5 + 0.7 + 16 x (0.35 + 0.3-0.5) + ~2.5 = 17-19 us
 * of the 23.8 measured; more slices (KSLICE=512: 36 us) add blocks whose
 * steps share the same schedulers and more fences, consistent with issue
 * and fences, not the stream's depth, bounding it.  Now g rides the
 * stage's copies, a whole-tile test replaces the per-chunk ones, the
 * scaling uses 16-byte shared loads (~258 instructions a step: ~0.27 us),
 * and one thread fences: ~6-9 us less by the same estimate, not yet
 * measured (bench/README.md's A/B: TENSORC_MATMUL_FENCE=0 is the old
 * fence, TENSORC_MATMUL_NORM=off the rows kernel and matmul apart,
 * TENSORC_MATMUL=cublas the norm kernel and cuBLAS).  The cost model keeps
 * the row-scale rule on: if that A/B has it slower than the norm kernel
 * and cuBLAS by more than 5% at M = 16 (issue 13), its default should
 * become off (knobs.c's matmul_norm, as TENSORC_MATMUL_LORA is) until it
 * is not.
 *
 * The H200's profile then (ncu, same shape: 20.1 us, 1.75 TB/s, 5.05 M warp
 * instructions, ~77 a 512 bytes of W, stalls on fixed-latency dependencies
 * and issue) made it instruction-bound.  The sm_90 SASS of one K step of
 * 64 (a warp's instructions along the whole-tile path, bench/sass_path.py;
 * a block's step reads 8 KB of W, 16 x 512 bytes): the row-scale rule with
 * g 263 before, 113 after (~66 then ~28 a 512 bytes of W), a plain product
 * (gated_mlp's pair kernel) 197 before, 65 after (~49 then ~16).  What
 * changed (mmtile.cuh): ldmatrix for every fragment (A's m16k16 and two of
 * B's n8k16 an instruction each, where scalar shared loads and packing
 * took ~16), x's squares and scaling by g in the fragments (no prologue in
 * shared memory, one barrier a step), a plan a work item for the copies
 * (an add a chunk), the lanes' fragment addresses kept in registers.  M = 1
 * has the same schedule as M = 16 (grid 256, 16 x 64 tiles, K steps of 64,
 * four stages): it was slower because x's tile (1 row of 16) was never
 * whole, so every stage took the per-element edge path for its 15 zero rows
 * (394 instructions a warp a step with g, 256 for the pair); the plan now
 * stores those rows' zeros, the same count as at M = 16.  Not yet timed on
 * a GPU.
 *
 * Where the time goes now (session 11, H200, `tensorc run --bench`, M 16,
 * N 4096, f16, the row-scale rule; us, the generated kernel / the norm
 * kernel + cuBLAS): K 1024 (8.5 MB of W) 14.5 / 22.5, 4096 22.2 / 28.1,
 * 16384 77.6 / 54.0, 65536 277.0 / 141.1 (cuBLAS's product alone 130.0:
 * 4.15 TB/s).  So past the L2 the generated kernel streams W at ~1.95 TB/s,
 * half of cuBLAS's rate: a steady-state limit, not the launch, fill or
 * combine (those favour it at small K).  ncu (gated_mlp's pair, 1376
 * blocks, 4 a SM by registers): 53 % of DRAM, long-scoreboard stalls 40 %,
 * SM active 77 % of the time.  At K 65536 eight stages (TENSORC_MATMUL_STAGES)
 * took 251.2 (-9 %: more bytes in flight helps a little), slices outer
 * (_ORDER=1) 289.7; gated_mlp: STAGES=8 76.3 against 78.0, RESIDENT=1 110.2,
 * ORDER=1 83.4, BK=128 78.2.  Next: far more bytes in flight per SM than
 * 3 x 8 KB stages of 128-byte row pieces (TMA bulk copies of whole tiles, or
 * wider contiguous pieces with the grid kept full); until then the gated
 * pair (180 MB of W) loses to two cuBLAS calls (78.1 against 57.6).
 *
 * bench/micro/mmstream.cu (session 12, H200, L2 flushed, y checked; TB/s of
 * W, the streaming kernel without its split-K sum): a plain read of W 4.44
 * at K 65536 (3.83 for gated_mlp's 180 MB, 2.85 for 33.6 MB); this kernel's
 * tile and pipeline alone (16 x 64, 3 stages of 64 rows, 128 threads, 80
 * registers: 6 blocks a SM) 3.38, 3.30 held to 4 blocks a SM, 3.12 with a
 * tile's slices on consecutive blocks, 2.73 with 8 stages (3 blocks a SM);
 * 256- and 512-byte row pieces (16 x 128 and 16 x 256 tiles, 32 or 16 rows
 * a stage) 3.72 and 3.91 at K 65536, 3.53 and 3.77 for gated_mlp, but 1.46
 * and 1.41 at K = N = 4096 (64 and 16 tiles: too few blocks); 1D bulk
 * copies of 128-byte pieces 2.05-2.32, TMA 2D tiles 2.68-3.69, registers
 * without shared memory 1.87-2.78, the L2's 256-byte prefetch 3.35.  So the
 * pattern streams at 3.4 where this kernel took 1.95: the gap is what the
 * kernel does beyond it (registers, x's tiles, the combine), and wider row
 * pieces with enough blocks add ~10-15 %.  TENSORC_MATMUL_STREAM's occ5 and
 * occ6 (96 and 80 registers, 3 stages; ptxas spills 0 and 96-168 bytes
 * for gated_mlp's pair, 12-16 and 8 for the row-scale kernel, 340-764 for
 * lora's) and l2pf are the A/B of that (bench/README.md).
 */
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

/* elements of K a block takes (K = 4096 makes 4 slices) */
enum { MM_KSLICE = 1024 };

/* A weight past this many bytes cannot stay in the L2 between calls (40
 * MB: an A100's; an H100's or H200's is 50), so the generated kernel
 * streams it from DRAM, where cuBLAS streams about 1.7 times faster
 * (H200, tc-bench, 2026-11-27: gated_mlp's two 90 MB weights 75.8 us
 * generated, 58.3 on cuBLAS; the rmsnorm -> matmul K sweep: 134.9 MB 77.6
 * us generated against 54.0 for the norm kernel and cuBLAS, 539 MB 277
 * against 141), while a 33.5 MB weight that stays in the L2 is faster
 * generated (rmsnorm_matmul 16.7 against 28.2).  With M symbolic the
 * launch guard adds mm_max_rows + 1 to M when the weight is larger, so
 * such a launch takes cuBLAS (and its epilogue kernels); a constant M
 * decides at compile time as before. */
#define MM_L2_BYTES (40ll << 20)

void sched_matmul(const tc_knobs *kn, tc_dimctx *c, const fkernel *k, ksched *ks, tc_arena *a)
{
    const lnode *m = k->ext;
    ks->mm_rows = m->shape[m->rank - 2];
    ks->mm_kslice = MM_KSLICE;
    ks->mm_ks_auto = kn->matmul_kslice <= 0;
    /* 2 unless the knob says: LoRA 37.96 -> 32.4-32.5 us (x @ A, one tile
     * over K = 4096: 32 work items of 128, not 4 of 1024), rmsnorm_matmul
     * and gated_mlp the same (H200, 2026-11-28, two calls each, alternating) */
    ks->mm_kauto = kn->matmul_kauto >= 0 ? kn->matmul_kauto : 2;
    if (kn->matmul_kslice > 0)
        ks->mm_kslice = kn->matmul_kslice;
    /* wide tiles (f16/bf16 on tensor cores; sched_matmul_rules drops them
     * for the adapter rule and picks their K slices) */
    ks->mm_bn = kn->matmul_bn > MM_TILE_N && (m->dtype == TC_F16 || m->dtype == TC_BF16) ? kn->matmul_bn : 0;
    /* streaming variants for A/B timing (matmul.cuh): unset, its own rules */
    ks->mm_stages = kn->matmul_stages > 0 ? kn->matmul_stages : 0;
    ks->mm_bk = kn->matmul_bk > 0 ? kn->matmul_bk : 0;
    ks->mm_resident = kn->matmul_resident > 0 ? kn->matmul_resident : 0;
    ks->mm_fence = kn->matmul_fence >= 0 ? kn->matmul_fence : 1;
    ks->mm_slices_outer = kn->matmul_order == 1;
    ks->mm_stream = kn->matmul_stream > 0 ? kn->matmul_stream : 0;
    ks->mm_copy = ks->mm_stream == KNOB_MM_STREAM_L2PF;
    ks->mm_occ = ks->mm_stream == KNOB_MM_STREAM_OCC5 ? 5 : ks->mm_stream == KNOB_MM_STREAM_OCC6 ? 6 : 4;
    ks->mm_max_rows = FUSE_MM_MAX_ROWS;
    ks->block[0] = MM_THREADS;
    if (m->dtype != TC_F32 && m->dtype != TC_F16 && m->dtype != TC_BF16) {
        ks->mm = MM_CUBLAS;
        ks->why = arena_printf(a, "matmul: cuBLAS (no generated kernel for %s)", dtype_name(m->dtype));
        return;
    }
    if (kn->matmul == KNOB_MM_CUBLAS) {
        ks->mm = MM_CUBLAS;
        ks->why = "matmul: cuBLAS (TENSORC_MATMUL=cublas)";
        return;
    }
    if (kn->matmul == KNOB_MM_GENERATED) {
        ks->mm = MM_GENERATED;
        ks->why = "matmul: generated at every M (TENSORC_MATMUL=generated)";
        return;
    }
    if (m->dtype == TC_F32) {
        ks->mm = MM_CUBLAS;
        ks->why = "matmul: cuBLAS (f32: the generated FMA kernel is not measured faster; "
                  "TENSORC_MATMUL=generated runs it)";
        return;
    }
    int64_t rows;
    bool known = dim_is_const(ks->mm_rows, &rows);
    if (known && rows > ks->mm_max_rows) {
        ks->mm = MM_CUBLAS;
        ks->why = arena_printf(a, "matmul: cuBLAS (M = %lld > %lld: cuBLAS's tuned kernels are "
                               "faster there)", (long long)rows, (long long)ks->mm_max_rows);
        return;
    }
    ks->mm = known ? MM_GENERATED : MM_BY_ROWS;
    if (ks->mm == MM_BY_ROWS) { /* M + (max + 1) * (bytes / (MM_L2_BYTES + 1)) <= max */
        const lnode *w = m->in[1].src;
        const tc_dim *wb = dim_const(c, dtype_size(w->dtype));
        for (int i = 0; i < w->rank; i++)
            wb = dim_mul(c, wb, w->shape[i]);
        int64_t bytes;
        bool wk = dim_is_const(wb, &bytes);
        if (wk && bytes > MM_L2_BYTES) {
            ks->mm = MM_CUBLAS;
            ks->why = arena_printf(a, "matmul: cuBLAS (the weight, %lld bytes, passes the L2's %lld: "
                                   "streamed from DRAM, cuBLAS is faster)", (long long)bytes,
                                   MM_L2_BYTES);
            return;
        }
        ks->mm_wbytes = wk ? NULL : wb; /* (a known weight that fits: M alone) */
        if (!wk)
            ks->mm_rows = dim_add(c, ks->mm_rows,
                              dim_mul(c, dim_const(c, ks->mm_max_rows + 1),
                                      dim_floordiv(c, wb, dim_const(c, MM_L2_BYTES + 1))));
    }

    ks->why = arena_printf(a, "matmul: generated%s (skinny M is bound by streaming the weight "
                           "once: a block per 16 x %d output tile and %d-element slice of K, on %s; "
                           "the last slice of a tile to finish sums the slices in order)%s",
                           known ? "" : arena_printf(a, " when M <= %lld and the weight fits the L2 "
                                                     "(%lld MB) at launch", (long long)ks->mm_max_rows,
                                                     MM_L2_BYTES >> 20),
                           ks->mm_bn ? ks->mm_bn : MM_TILE_N, ks->mm_kslice,
                           m->dtype == TC_F32 ? "FMAs" : "tensor cores (mma.sync m16n8k16, sm_80+)",
                           known ? "" : "; cuBLAS above it");
}

void sched_print_matmul(tc_buf *b, const ksched *ks)
{
    static const char *const eng[] = {"cuBLAS", "generated", "generated or cuBLAS by M"};
    buf_printf(b, "    engine %s", eng[ks->mm]);
    if (ks->mm != MM_CUBLAS) {
        buf_printf(b, ": block [%d, 1, 1], tiles %d x %d, K slices of %d", MM_THREADS, MM_TILE_M,
                   ks->mm_bn ? ks->mm_bn : MM_TILE_N, ks->mm_kslice);
        /* the launch-time K slices (codegen/matmul.c's ksauto): the wide
         * tiles', or the 64-wide ones' under TENSORC_MATMUL_KAUTO (2 the default; not the
         * adapter rule's: codegen/matmul.c) */
        const char *rule = !ks->mm_ks_auto ? ""
                           : ks->mm_bn     ? ", or 256 to 1024 where the wide tiles x slices of 1024 are under 264 "
                                             "(matmul.cuh's tc_mm_kslice, at launch)"
                           : ks->lora          ? ""
                           : ks->mm_kauto == 1 ? ", or 256 to 1024 where the tiles x slices of 1024 are under 264 "
                                                 "(TENSORC_MATMUL_KAUTO=1: matmul.cuh's tc_mm_kslice, at launch)"
                           : ks->mm_kauto == 2 ? ", or 128 to 1024 where the tiles x slices of 1024 are under 64 "
                                                 "(matmul.cuh's tc_mm_kslice, at launch)"
                                               : "";
        if (ks->mm_bn) /* the grid counts these tiles (codegen/matmul.c) */
            buf_printf(b, " (TENSORC_MATMUL_BN=%d; 64-row tiles stay 64 wide)%s%s", ks->mm_bn, rule,
                       ks->mm_bk ? "" : ", K steps of 32");
        else
            buf_puts(b, rule);
        if (ks->mm_stages)
            buf_printf(b, ", %d stages (TENSORC_MATMUL_STAGES)", ks->mm_stages);
        if (ks->mm_bk)
            buf_printf(b, ", K steps of %d (TENSORC_MATMUL_BK)", ks->mm_bk);
        if (ks->mm_resident)
            buf_printf(b, ", resident blocks looping over the work items (TENSORC_MATMUL_RESIDENT=%d)",
                       ks->mm_resident);
        if (ks->mm_fence != 1)
            buf_printf(b, ", %s around the K slices' ticket (TENSORC_MATMUL_FENCE=%d)",
                       ks->mm_fence ? "one thread's fence.acq_rel" : "every thread fencing", ks->mm_fence);
        if (ks->mm_slices_outer)
            buf_puts(b, ", work items slice by slice over every tile (TENSORC_MATMUL_ORDER=1)");
        if (ks->mm_copy)
            buf_printf(b, ", the weight's copies with the L2's 256-byte prefetch (TENSORC_MATMUL_STREAM=%s)",
                       knob_mm_streams[ks->mm_stream]);
        if (ks->mm_occ > 4)
            buf_printf(b, ", registers for %d blocks a SM%s (TENSORC_MATMUL_STREAM=%s)", ks->mm_occ,
                       ks->mm_stages ? "" : " and 3 stages", knob_mm_streams[ks->mm_stream]);
        if (ks->mm == MM_BY_ROWS) {
            const lnode *m = ks->k->ext;
            buf_puts(b, "; generated when ");
            dim_print(b, m->shape[m->rank - 2]);
            buf_printf(b, " <= %lld", (long long)ks->mm_max_rows);
            if (ks->mm_wbytes) {
                buf_puts(b, " and the weight's ");
                dim_print(b, ks->mm_wbytes);
                buf_printf(b, " bytes <= %lld (the L2: MM_L2_BYTES)", MM_L2_BYTES);
            }
            buf_puts(b, ", else cuBLAS");
        }
    }
    buf_printf(b, "\n    why: %s\n", ks->why);
}

/* A kernel launched only beside cuBLAS takes that guard (codegen/unit.c),
 * and a step has one: a rows kernel split by its row's length (wide_split)
 * becomes one kernel for every length, the 16-a-thread one with its
 * cluster; a 16-bit one (pipe_split) without the pipe, as before the
 * split (its rows here are a matmul's K: one block's, mostly). */
static void one_variant(ksched *ks)
{
    if (ks->kind != SCH_ROWS || !ks->wide_split)
        return;
    if (ks->pipe_split)
        ks->pipe = ks->resident = ks->ticket = false;
    ks->wide_split = ks->pipe_split = false;
}

/* TENSORC_MATMUL_BN's wide tiles, once the rules have paired the
 * products: none for the adapter rule (its t and Bd tiles are 64 wide:
 * the 64-column kernel, as documented).  Their K slices, unless
 * TENSORC_MATMUL_KSLICE says: matmul.cuh's tc_mm_kslice at launch (N and
 * K may be symbolic), 1024 where the tiles' slices of 1024 make 264 work
 * items (two a SM), else fewer elements, 256 at least (a 4096 x 4096
 * product at 256 columns: 16 tiles, slices of 256, 256 items; gated_mlp's
 * pair of 4096 x 11008: 43 tiles x 4 x 2 = 344, 1024 stays). */
static void wide_tiles(ksched *ks, tc_arena *a)
{
    if (ks->kind != SCH_EXTERN || ks->mm == MM_CUBLAS || !ks->mm_bn || ks->pair_into || !ks->lora)
        return;
    ks->mm_bn = 0;
    ks->why = arena_printf(a, "%s; TENSORC_MATMUL_BN: 64-column tiles (the adapter rule has no wide tiles)",
                           ks->why);
}

/* The epilogue rule as the rules above were applied: each product E
 * reads from memory is written before kernel mk (a pair's or adapter's
 * product by the kernel it was paired into), or mk computes it. */
static bool epi_agrees(const sfn *s, int mk, const fkernel *e)
{
    const ksched *km = &s->k[mk];
    for (int i = 0; i < e->nreads; i++) {
        const lnode *n = e->reads[i];
        int j = s->f->kernel_of[n->id];
        if (j < 0 || j == mk || s->f->k[j]->ext != n || (km->pair && km->pair->ext == n))
            continue;
        if ((s->k[j].pair_into ? s->k[j].pair_into - 1 : j) >= mk)
            return false;
    }
    return true;
}

void sched_matmul_rules(sfn *s, tc_arena *a)
{
    for (int i = 0; i < s->nk; i++) {
        ksched *kq = &s->k[i];
        fmmlora lo;
        if (kq->kind != SCH_EXTERN || kq->mm == MM_CUBLAS || !fuse_mm_lora(s->f, kq->k, &lo, a))
            continue;
        ksched *kt = &s->k[lo.t->id], *kp = &s->k[lo.p->id];
        if (kt->mm != kq->mm || kp->mm != kq->mm || kt->mm_kslice != kq->mm_kslice ||
            kp->mm_kslice != kq->mm_kslice)
            continue;
        kq->pair = lo.p;
        kq->lora = lo.t;
        kq->mm_rows = kt->mm_rows = kp->mm_rows; /* one guard for the three: x @ W's weight */
        kt->pair_into = kp->pair_into = i + 1;
        kq->why = arena_printf(a, "%s; adapter: it computes %%%d = x @ W (kernel %d) too, and its own "
                               "operand %%%d = x @ A (kernel %d) per K slice, each slice's (x @ A) @ B "
                               "summed with the slices in order; kernels %d and %d %s",
                               kq->why, lo.p->ext->id, lo.p->id, lo.t->ext->id, lo.t->id, lo.p->id,
                               lo.t->id, kq->mm == MM_GENERATED ? "are not launched"
                                                                : "run only when cuBLAS does");
    }
    int *with = fuse_mm_pairs(s->f, a);
    for (int i = 0; i < s->nk; i++) {
        ksched *kb = &s->k[i], *ka = with[i] >= 0 ? &s->k[with[i]] : NULL;
        if (!ka || with[i] > i || kb->mm == MM_CUBLAS || ka->mm != kb->mm ||
            ka->mm_kslice != kb->mm_kslice)
            continue;
        kb->pair = ka->k;
        ka->pair_into = i + 1;
        kb->why = arena_printf(a, "%s; pair: it computes %%%d (kernel %d) too, a work item per tile, "
                               "slice and product, the last of a tile's summing both; kernel %d %s",
                               kb->why, ka->k->ext->id, with[i], with[i],
                               kb->mm == MM_GENERATED ? "is not launched" : "runs only when cuBLAS does");
    }
    for (int i = 0; i < s->nk; i++)
        wide_tiles(&s->k[i], a);
    for (int i = 0; i < s->nk; i++) {
        ksched *ks = &s->k[i];
        if (ks->kind != SCH_EXTERN || ks->mm == MM_CUBLAS || !fuse_mm_norm(s->f, ks->k, &ks->norm))
            continue;
        s->k[ks->norm.rows->id].norm_into = i + 1;
        ks->why = arena_printf(a, "%s; row scale: (r * x) @ W = r * (x @ W), so it loads x%s, sums "
                               "x^2 of each row beside the product (the slices' sums in order) and "
                               "multiplies the row's %%%d into the product as it stores; kernel %d %s",
                               ks->why, ks->norm.g ? arena_printf(a, " scaled by %%%d as each tile "
                                                                  "arrives", ks->norm.g->id) : "",
                               ks->norm.r->id, ks->norm.rows->id,
                               ks->mm == MM_GENERATED ? "is not launched"
                                                      : "runs only when cuBLAS does");
    }
    int *into = fuse_mm_epilogues(s->f, a);
    for (int e = 0; e < s->nk; e++) {
        ksched *km = into[e] >= 0 ? &s->k[into[e]] : NULL;
        if (!km || km->kind != SCH_EXTERN || km->mm != MM_BY_ROWS || !epi_agrees(s, into[e], s->f->k[e]))
            continue;
        km->epi = s->f->k[e];
        s->k[e].epi_into = into[e] + 1;
        km->why = arena_printf(a, "%s; epilogue: it computes kernel %d's stores too, on each element "
                               "of the product as it stores it; kernel %d runs only when cuBLAS does",
                               km->why, e, e);
    }
    for (int i = 0; i < s->nk; i++)
        if (s->k[i].norm_into || s->k[i].epi_into)
            one_variant(&s->k[i]);
}
