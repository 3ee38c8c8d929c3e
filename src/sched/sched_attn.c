/* sched_attn.c - the launch of an attention kernel (fuse.h's fattn;
 * codegen/attn.c and attn.cuh generate it).
 *
 * Decode attention reads every key and value once per step and does
 * little arithmetic per byte, so it is bound by streaming k and v, and at
 * batch 1 a block per (batch, head) would leave most of the GPU idle.
 * Flash-decoding: the query rows that share k and v (a group of query
 * heads over one KV head, GQA; rows of M) go ATTN_ROWS to a block, and
 * the keys are split in chunks of ATTN_CHUNK (512), a block each, so a
 * context of 8192 gives 16 blocks per group (32 at batch 1 with 2 KV
 * heads, 256 at batch 8).  Each block
 * keeps the running max, sum and unnormalized output of its rows over its
 * keys; the partials combine up a fixed tree over the split index (16
 * children a node; the last child block to finish, an atomic ticket,
 * combines a node), so the result is the same bits on every run and, the
 * split depending on the context length alone, at every batch size.  The
 * splits are a chunk of keys, not a count sized to the GPU, so one plan
 * serves every length (symbolic L).
 *
 * Knobs for timing variants (base/knobs.h, bench/README.md): the chunk
 * (TENSORC_ATTN_CHUNK), the warps a block (TENSORC_ATTN_WARPS) and the
 * 16-key steps of k and v a warp has in flight (TENSORC_ATTN_PREFETCH,
 * the tensor-core path).  The H200 A/B of 2026-11-27 (GQA decode, 16
 * query heads over 2 KV heads, d 128, context 8192; us at batch 1 / batch
 * 8) had chunk 512 best: 256 25.2 / 51.6, 512 23.1 / 35.7, 128 32.9 /
 * 80.8; 8 warps 21.5 / 60.3, 512 with 8 warps 19.1 / 40.6.  Then the last
 * block combined every split alone, its loads a serial chain of one L2
 * round trip a split, and zeroed every partial; q's staging cost 64-bit
 * divisions per element before the first k/v load.  Since the tree, the
 * per-row staging and the loads issued first, a split costs little past
 * its keys.  Timed with the tree (H200, 2026-11-27, bench/tune.sh, one
 * call, checked): chunk 128 14.05 / 42.72 us, 64 16.99 / 58.24, 256 15.25
 * / 34.70, 512 15.56 / 28.61; 128 with 8 warps 13.59 / 62.54.  Small chunks
 * win a little at batch 1 and lose much at batch 8 (more blocks, each
 * paying its q, partial and ticket), so the default stays 512: the split
 * may depend on the context length alone, not on the batch.  8 warps
 * only up to head dim 128: their partials in shared memory pass 48 KiB
 * past it.
 *
 * TENSORC_ATTN_RING (at_ring, tensor cores only): each warp streams its
 * k and v through a ring of stages in dynamic shared memory (attn.cuh),
 * all but one in flight.  ncu at batch 1 (H200, 2026-11-27) had the
 * register path (TENSORC_ATTN_RING=0) at one warp a scheduler waiting on
 * a DRAM round trip each 16-key step (~12 us a block, 32 blocks).  The
 * ring depth changes neither the split nor a warp's keys, so neither the
 * bits.  Timed (H200, 2026-11-27, bench/tune.sh, one call, checked; us at
 * batch 1 / 8): the register path 15.78 / 28.27, ring 4 18.39 / 35.56, 2
 * 17.86 / 30.43, 3 18.38 / 30.62, 6 19.04 / 38.21; 8 warps with ring 3
 * 17.06 / 34.45.  The ring lost at every depth, so the default is the
 * register path (ATTN_RING 0); the knob asks for a ring of its depth
 * (codegen/attn.c refuses one past ATTN_SMEM_MAX).  Not yet known why:
 * 214 registers still (the combine's loads), one block a SM at depth 4.
 *
 * TENSORC_ATTN_SPLIT (at_split): W warps (4, 8, 16), each walking its own
 * CH / W keys with PF register buffers, the outputs combined 8 warps at a
 * time in warp order (attn.cuh's fin).  Timed (H200, 2026-11-27, one
 * call, checked; us at batch 1 / 8): unset 15.65 / 28.63, split 8 14.61 /
 * 34.40, 8 with prefetch 1 14.44 / 33.40, 4 17.32 / 29.51, 16 25.74 /
 * 54.65 (128 registers: spills), TENSORC_ATTN_WARPS=8 14.31 / 32.91.  ncu
 * (batch 1) says why neither reaches issue 13's 6 us: a block is bound by
 * its warps' instruction latency, not by k and v in flight (stalls: wait
 * 32-35%, selected 24%, long scoreboard 11-13%; ~518 instructions a
 * 16-key step, 24 HMMA, 32 MOVM, ~100 moves), and 512 keys take ~20K
 * cycles a block at any context (2 blocks at L = 512: 16.7 us), the
 * combine tree ~15-20K more at L = 8192 (sm__cycles_active.max 35-43K).
 */
#include "sched/sched.h"

static const tc_dim *prod_axes(tc_dimctx *c, const fkernel *k, unsigned axes)
{
    const tc_dim *p = dim_const(c, 1);
    for (int i = 0; i < k->rank; i++)
        if (axes & (1u << i))
            p = dim_mul(c, p, k->dom[i]);
    return p;
}

void sched_attn(const tc_knobs *kn, tc_dimctx *c, const fkernel *k, ksched *ks, tc_arena *a)
{
    const fattn *at = k->attn;
    int r = k->rank;
    unsigned batch = (1u << (r - 2)) - 1;
    unsigned rows = (batch & ~at->kvaxes) | 1u << (r - 2);
    ks->at_knobs = kn->attn_chunk >= 0 || kn->attn_warps >= 0 || kn->attn_prefetch >= 0 || kn->attn_ring >= 0 ||
                   kn->attn_split >= 0;
    ks->at_chunk = kn->attn_chunk >= 0 ? kn->attn_chunk : ATTN_CHUNK;
    ks->at_warps = kn->attn_warps >= 0 && at->d <= 128 ? kn->attn_warps : ATTN_THREADS / 32;
    ks->at_prefetch = kn->attn_prefetch >= 0 ? kn->attn_prefetch : 1;
    /* the split (TENSORC_ATTN_SPLIT): its warps each on its own keys, up to
     * head dim 128 (the warps' outputs in shared memory, 8 at a time), no
     * ring; 2 steps' buffers a warp unless 16 warps (128 registers) */
    ks->at_split = kn->attn_split >= 0 && at->d <= 128;
    if (ks->at_split) {
        ks->at_warps = kn->attn_split;
        ks->at_prefetch = kn->attn_prefetch >= 0 ? kn->attn_prefetch : kn->attn_split == 16 ? 1 : 2;
    }
    ks->block[0] = 32 * ks->at_warps;
    ks->block[1] = ks->block[2] = 1;
    ks->at_kv = prod_axes(c, k, at->kvaxes);
    ks->at_rows = prod_axes(c, k, rows);
    ks->at_groups = dim_mul(c, ks->at_kv, dim_ceildiv(c, ks->at_rows, dim_const(c, ATTN_ROWS)));
    ks->at_splits = dim_ceildiv(c, k->dom[r - 1], dim_const(c, ks->at_chunk));
    ks->grid = dim_mul(c, ks->at_groups, ks->at_splits);
    ks->rows = ks->at_rows;
    ks->rowlen = k->dom[r - 1];
    ks->at_mma = k->ext->dtype != TC_F32 && at->d % 32 == 0 && at->d <= 128;
    /* the ring: a knob's depth as it is (codegen/attn.c refuses one past
     * the shared memory), else ATTN_RING stages or as many as fit */
    int d = (int)at->d, stage = 64 * d * ks->at_warps; /* a stage of k and v, every warp's */
    ks->at_ring = !ks->at_mma || ks->at_split ? 0 : kn->attn_ring >= 0 ? kn->attn_ring : ATTN_RING;
    if (kn->attn_ring < 0)
        while (ks->at_ring > 1 && sched_attn_static(d, ks->at_warps, true) + ks->at_ring * stage > ATTN_SMEM_MAX)
            ks->at_ring--;
    ks->at_shmem = ks->at_ring * stage;
    ks->why = arena_printf(a,
                           "attention (flash-decoding): a block per %d query rows sharing k and v and "
                           "per %d keys, running max, sum and output in registers (%s%s); the splits "
                           "combine up a fixed tree, 16 a node, by the last block of each node",
                           ATTN_ROWS, ks->at_chunk,
                           ks->at_mma ? "q @ k^T and p @ v on tensor cores, mma.sync m16n8k16, where "
                                        "k and v are 16-byte aligned; FMAs elsewhere"
                                      : "FMAs",
                           ks->at_ring ? "; k and v stream through a ring of stages in shared memory a "
                                         "warp (cp.async), all but one in flight"
                                       : ks->at_mma ? "; k and v loaded into registers a step or two ahead" : "");
}

/* sizeof(tc_at_smem<d, w, min(w, 8), !ring>): floats m, l, o (8 warps' at
 * most; with a ring 8 floats: its stages hold it), q, bm, bl, wt, cm, cl, cw; then 8 long longs and an
 * int, padded to 8 bytes; and 16 bytes to spare (ptxas counts 8 more
 * beside the ring's extern array) */
int sched_attn_static(int d, int w, bool ring)
{
    return 4 * (2 * w * 8 + (ring ? 8 : (w > 8 ? 8 : w) * 8 * d) + 8 * d + 16 + w * 8 + 3 * 16 * 8) + 8 * 8 + 8 + 16;
}

void sched_print_attn(tc_buf *b, const ksched *ks)
{
    buf_printf(b, "    attention: block [%d, 1, 1], grid ", ks->block[0]);
    dim_print(b, ks->grid);
    buf_puts(b, "\n    groups ");
    dim_print(b, ks->at_groups);
    buf_puts(b, " (");
    dim_print(b, ks->at_kv);
    buf_puts(b, " distinct k and v, ");
    dim_print(b, ks->at_rows);
    buf_printf(b, " query rows each), splits ");
    dim_print(b, ks->at_splits);
    buf_printf(b, " of %d keys, head dim %lld, %s", ks->at_chunk, (long long)ks->k->attn->d,
               ks->at_mma ? "tensor cores" : "FMAs");
    if (ks->at_knobs) /* the TENSORC_ATTN_* knobs' values */
        buf_printf(b, ", %d warps, prefetch %d%s", ks->at_warps, ks->at_prefetch,
                   ks->at_split ? ", each warp its own keys (TENSORC_ATTN_SPLIT)" : "");
    if (ks->at_ring) /* TENSORC_ATTN_RING */
        buf_printf(b, ", ring of %d stages a warp (%d bytes of dynamic shared memory a block)", ks->at_ring,
                   ks->at_shmem);
    else if (ks->at_mma)
        buf_puts(b, ", k and v through registers (TENSORC_ATTN_RING=N: a ring of N stages)");
    buf_puts(b, "\n");
    buf_printf(b, "    why: %s\n", ks->why);
}
