/* sched.h - launch shapes and strategies, one per kernel.
 *
 * For each fused kernel the scheduler picks how threads cover its domain:
 *
 *   SCH_POINTWISE  one thread per `vec` consecutive elements, grid-stride;
 *                  16-byte vector loads and stores where a buffer is read
 *                  contiguously along the last dim and aligned (checked at
 *                  run time per vector), scalar code for the rest and tails.
 *                  When a read is contiguous along another axis (x.T + y),
 *                  64 x 64 tiles (32 x 32 for 8-byte types, TENSORC_TILE_VEC)
 *                  staged through shared memory instead.
 *   SCH_ROWS       reduction over trailing axes: a block per row (grid-stride
 *                  over rows), the block's threads stride the row; one pass
 *                  per phase (reductions that need an earlier one's result
 *                  come a phase later), block-wide tree reduction with warp
 *                  shuffles, then the epilogue pass writes the row.  Rows of
 *                  up to block*items elements keep their loads in registers
 *                  and read memory once ("persistent"); longer rows loop and
 *                  re-read (L2 usually has them).
 *   SCH_COLUMNS    reduction over leading (or interior) axes: threads own
 *                  kept elements along x, so loads are coalesced across a
 *                  warp, and block.y threads split the reduced range; the y
 *                  partials combine in shared memory.  Split across blocks
 *                  with the last axis kept and no per-element stores, a
 *                  thread owns `vec` consecutive kept elements, read as one
 *                  16-byte vector where contiguous and aligned.
 *   SCH_FULL       reduction over every axis: blocks take slices, write
 *                  partials to a workspace, and the last block to finish
 *                  (an atomic ticket) combines them in a fixed order, so
 *                  results are deterministic; one kernel.
 *   SCH_EXTERN     a matmul: cuBLAS, or a generated kernel (sched_matmul.c
 *                  decides, codegen/matmul.c and matmul.cuh generate): a
 *                  block per 16 x 64 tile of the output and slice of K,
 *                  tensor cores for f16/bf16, for skinny products (M at most
 *                  mm_max_rows, decode) that stream the weight once; larger
 *                  ones stay on cuBLAS.  With M symbolic both are in the
 *                  plan and the launch picks one by M.
 *                  An attention kernel (fuse.h's fattn: softmax(q @ k^T ...)
 *                  @ v) is SCH_EXTERN too (sched_attn.c): flash-decoding,
 *                  a block per group of ATTN_ROWS query rows that share k
 *                  and v and per ATTN_CHUNK keys; each keeps a running max,
 *                  sum and output (tensor cores for f16/bf16 where the head
 *                  dim is a multiple of 32 up to 128, FMAs otherwise), and
 *                  the splits combine up a fixed tree, 16 a node, the last
 *                  block of each node combining it (deterministic; the split depends on the
 *                  context length alone, so results do not depend on the
 *                  batch).
 *   SCH_SCAN       scans along one axis (KK_SCAN): one thread per lane (an
 *                  index of the other axes; `rows` lanes, consecutive lanes
 *                  along the innermost other axis, so a warp's loads are
 *                  coalesced wherever the axis is not the last), walking the
 *                  `rowlen` elements of its lane in order with every scan's
 *                  carry in a register; the prologue and epilogue are
 *                  computed at each step.  Grid-stride over lanes.  An axis
 *                  longer than 256 (known at run time) is block-parallel
 *                  instead: a block per lane scans chunks of blockDim.x
 *                  elements (warp shuffles, then the warps' totals) and
 *                  combines the carry in front (src/codegen/scan.c).
 *                  A scan kernel whose stored values only the next one, a
 *                  scan the other way, reads runs that one too, keeping its
 *                  carries every K steps (sched_ckpt.c: checkpointed pairs).
 *
 * Clusters (long rows, SCH_ROWS with registers): a row longer than one
 * block's registers hold (block * items * vec elements) is split across a
 * thread-block cluster of up to `cluster` blocks on sm_90 (codegen/rows.c:
 * block `rank` takes every ncl-th run of blockDim.x vectors).  Each pass
 * reduces the block's part, then the blocks exchange partials through
 * distributed shared memory and every block combines them in one fixed
 * tree, so the row is read from memory once and kept in registers across
 * the exchange, and the result has the same bits in every block and every
 * run.  The runtime sizes the cluster and its blocks from the row length
 * alone (runtime/exec.c: blocks of 256 threads or more, the fewest of them
 * whose registers hold the row: 8, then 16, of up to 512 threads, then 8
 * or 16 of the largest), so a
 * row's result does not depend on the number of rows.  The kernel keeps
 * its plain row loop for launches without a cluster: before sm_90, on a
 * driver without cuLaunchKernelEx, and for rows one block holds.  Rows
 * past the cluster's registers (past 16 x 1024 x 16 elements, 32 for
 * 16-bit floats, or 8 x 1024 x 16 where 8 blocks are the most) loop and
 * re-read each pass (L2 usually holds them); without a cluster, rows past
 * one block's registers do so too: that is the documented fallback (no
 * second kernel over partials: not built).  A kernel whose row is not
 * needed after its max and sum of exp(x - max) (logsumexp, cross-entropy:
 * nothing row-sized written) takes neither: the online pair below reads the
 * row once at any length without a cluster.
 *
 * Registers (codegen/rows.c, load.c): the first pass issues every load of
 * a thread's items at once (no branch around them: an item past the row's
 * end reads the row's element 0 and its accumulations and stores are
 * predicated off), 16-bit float vectors stay as loaded (`packed`, two
 * elements a register, so 32 a thread), and two reductions of one pass
 * share one set of barriers (tc_block_reduce2, tc_cluster_reduce2).
 *
 * Column partials (fuse.h): a rows kernel that carries column sums takes
 * rblock = FUSE_COL_ROWS (TENSORC_COL_ROWS: fuse_col_rows) consecutive rows a block (grid-stride over
 * blocks of rows, so a clamped grid is still right), keeps no cluster, and
 * writes one partial row a block per column sum; the column kernel is an
 * ordinary SCH_COLUMNS kernel (scalar, no vectors) over those partials,
 * rowlen = ceil(rows / rblock), summing them in block order.  The rows'
 * own results do not depend on rblock or on where a row sits.
 *
 * Foreach: the one pointwise kernel of an elementwise function (every tensor
 * [*], graph.h) is scheduled over tensor groups, as multi_tensor_apply does:
 * each block takes `chunk` elements of one group (group i's blocks follow
 * group i-1's), so groups of any size, empty ones included, share one
 * launch; within a chunk the vector and scalar paths are the pointwise ones,
 * so a misaligned group simply runs scalar.  tc_run is the same kernel over
 * one group.  Codegen gives the kernel the group table (codegen.h).
 *
 * Compact kernels: a kernel past the unrolled budget (sched.c: its work
 * unrolled past UNROLLED nodes, or the function past FN_UNROLLED) is not
 * only scalar and looped but compact: library math (expf, tanhf, ...; the
 * ops of cg_is_libcall, codegen) and block reductions are called through
 * __noinline__ wrappers instead of being inlined at every use, so NVRTC's
 * time grows with the statements by a small constant (a 1,000-statement
 * softmax-like chain: about 20x less NVRTC time).  Such kernels are long
 * chains where a call is cheap beside the work; ordinary kernels (every
 * example) are far below the budget and unchanged.  --emit=sched shows
 * "compact" and its reason.
 *
 * Index arithmetic is 32-bit unless idx64 (the plan records which sizes
 * must fit).  sched_print() gives --emit=sched, one block per kernel with
 * each choice and its reason.
 */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include "fuse/fuse.h"

typedef enum { SCH_POINTWISE, SCH_ROWS, SCH_COLUMNS, SCH_FULL, SCH_EXTERN, SCH_SCAN } sched_kind;

/* SCH_EXTERN: who computes the matmul. */
typedef enum {
    MM_CUBLAS,              /* cuBLAS at every size */
    MM_GENERATED,           /* the generated kernel at every size (M is a constant <= mm_max_rows) */
    MM_BY_ROWS,             /* the generated kernel when M <= mm_max_rows at launch, else cuBLAS */
} mm_engine;

typedef struct ksched {
    const fkernel *k;
    sched_kind kind;
    int block[3];
    int vec;                /* elements per thread step along the last dim (1: scalar);
                             * SCH_COLUMNS: kept elements a thread */
    int items;              /* SCH_ROWS: row chunks per thread kept in registers (0: looped only) */
    int block_per;          /* SCH_ROWS: the launch sizes block[0] to rowlen / block_per */
    bool packed;            /* SCH_ROWS: 16-bit float vectors kept as loaded, two
                             * elements a register (codegen/load.c), 32 a thread */
    bool wide;              /* SCH_ROWS: twice the registers of a row a thread
                             * (sched_rows_widen): blocks of up to 512 threads at 64
                             * registers, two a SM (codegen/kernel.c's bounds) */
    bool long_only;         /* SCH_ROWS: every row is past one block's registers (the wide
                             * variant's rows): a block with no cluster loops, no register
                             * path (codegen/rows.c) */
    bool wide_split;        /* SCH_ROWS: the row's length is known only at launch: codegen
                             * emits this kernel for rows one block holds and a widened
                             * copy (suffix _w) for longer ones, each step guarded */
    bool pipe_split;        /* SCH_ROWS, with wide_split: the long rows' variant keeps the
                             * items (no widening), the row in its slots (resident); the short
                             * rows' kernel has no cluster and no pipe (sched_rows_pipe) */
    bool pipe;              /* SCH_ROWS with a cluster (TENSORC_ROWS_PIPE=1 or 2, sched_rows_pipe):
                             * a persistent grid of clusters, each prefetching its next
                             * row's slice into shared memory while this one reduces;
                             * with column partials (rblock, TENSORC_COLPART_PREFETCH=1):
                             * the block prefetches its own next row so, no cluster */
    bool resident;          /* the pipe's rows in a cluster, kept in their slots (TENSORC_ROWS_PIPE=2,
                             * the default for 16-bit rows): two stages, the next row copied into
                             * one while every pass reads this row from the other (rows.c) */
    bool ticket;            /* the pipe's rows in a cluster (not rblock's): each cluster's next row
                             * but one from an atomic ticket in the workspace, in the order
                             * the clusters ask (TENSORC_ROWS_TICKET, sched_rows_pipe) */
    int cluster;            /* SCH_ROWS: the most blocks a row may be split across, one
                             * slice each, in a thread-block cluster (0: none; see
                             * "Clusters" above) */
    int online_max;         /* SCH_ROWS online pair (sched_online.c): the max's index in
                             * k->reds + 1, else 0 */
    int online_sum;         /* ... and the sum of exp(x - shift)'s index + 1 */
    const lnode *online_shift; /* the shift that sum subtracts: the max itself, or
                             * where(isinf(max), K, max) (logsumexp's guard) */
    bool online_vec;        /* the online pair's update takes a thread's whole vector at
                             * once (codegen/accum.c; TENSORC_ONLINE_VEC=0: an element
                             * at a time) */
    int rpair;              /* SCH_ROWS, the same pair in a kernel that keeps its row in
                             * registers for a row-sized output (softmax: sched_online.c):
                             * 1 where a cluster shares the row, 2 in every register
                             * path, 0 none; rpair_max/_sum/_shift as online_* */
    int rpair_max, rpair_sum;
    const lnode *rpair_shift;
    int rblock;             /* SCH_ROWS carrying column partials (fuse.h): rows a block takes
                             * (fuse_col_rows; the grid is a block per rblock rows), else 0 */
    int tile;               /* SCH_POINTWISE: the axis a transposed read is contiguous
                             * along (tw x tw shared-memory tiles), or -1 */
    int tvec;               /* tiled: TENSORC_TILE_VEC's value (0, 1 or 2, the default) */
    int tw;                 /* tiled: the tiles' side, 32, or 64 under TENSORC_TILE_VEC=2
                             * (codegen/tiled.c); the grid counts tiles of it */
    int split;              /* SCH_COLUMNS: slices of the reduced range, one block each (0: none) */
    bool foreach;           /* SCH_POINTWISE of an elementwise function: runs over tensor groups */
    int chunk;              /* foreach: elements a block takes of one group */
    int unroll;             /* POINTWISE, FULL with vectors: vectors a thread loads before
                             * computing any (blockDim.x vectors apart), 1: one at a time;
                             * COLUMNS split with vectors: rows a thread loads so; tiled
                             * POINTWISE: > 1 runs whole tiles without bounds tests */
    bool compact;           /* past the unrolled budget: code size linear in the work with a
                             * small constant (see "Compact kernels" above) */
    const tc_dim *numel;    /* elements of the domain */
    const tc_dim *rows;     /* ROWS/COLUMNS/FULL: kept elements (1 for FULL) */
    const tc_dim *rowlen;   /* ROWS/COLUMNS/FULL: reduced elements per row */
    const tc_dim *grid;
    int64_t grid_cap;
    int nphases;
    int *phase;             /* per k->reds[i]: its pass, 0-based */
    const char *why;        /* the reasons, for the dump */
    /* SCH_EXTERN (sched_matmul.c) */
    mm_engine mm;
    int64_t mm_max_rows;    /* MM_BY_ROWS: the largest M the generated kernel takes */
    const tc_dim *mm_rows;  /* the launch guard's value: M, the output's rows, plus (MM_BY_ROWS)
                             * mm_max_rows + 1 when the weight passes MM_L2_BYTES */
    const tc_dim *mm_wbytes; /* MM_BY_ROWS: the weight's bytes in that guard (sched_matmul.c), else NULL */
    int mm_kslice;          /* elements of K a block takes (slices combine in order) */
    int mm_stages;          /* TENSORC_MATMUL_STAGES: cp.async stages, 0: matmul.cuh's rule */
    int mm_bk;              /* TENSORC_MATMUL_BK: elements of K a stage, 0: matmul.cuh's rule */
    int mm_resident;        /* TENSORC_MATMUL_RESIDENT: 0 a block a work item, else the grid's cap
                             * (1: MM_SMS x the blocks a SM holds) */
    int mm_fence;           /* TENSORC_MATMUL_FENCE: around the K slices' ticket 0 every
                             * thread fences, 1 (unset) one thread, 2 one thread with
                             * fence.acq_rel (matmul.cuh's FEN) */
    bool mm_slices_outer;   /* TENSORC_MATMUL_ORDER=1: work items slice by slice over
                             * every tile (matmul.cuh's SO), else tile by tile */
    int mm_stream;          /* TENSORC_MATMUL_STREAM (knobs.h's KNOB_MM_STREAM_*), 0 as before */
    int mm_copy;            /* the weight's copies (matmul.cuh's STR): 1 with the L2's
                             * 256-byte prefetch (l2pf), 0 plain cp.async */
    int mm_occ;             /* blocks a SM the kernel's registers allow (__launch_bounds__'s
                             * second argument): 4, or 5 and 6 (occ5, occ6; codegen's
                             * matmul.c then makes 3 stages unless TENSORC_MATMUL_STAGES
                             * sets them) */
    int mm_bn;              /* TENSORC_MATMUL_BN: the 16-row tensor-core tiles' columns, 128
                             * or 256 (matmul.cuh's BN; sched_matmul_rules: 0 for the
                             * adapter rule), 0: 64 */
    bool mm_ks_auto;        /* the K slice is the cost model's (no TENSORC_MATMUL_KSLICE) */
    int mm_kauto;           /* TENSORC_MATMUL_KAUTO 1 or 2: 64-wide tiles pick K slices at launch too
                             * (1: as the wide tiles, for 264 work items; 2: for 64, slices >= 128) */
    fmmnorm norm;           /* the row-scale rule (fuse.h), norm.rows NULL without: the
                             * generated kernel computes the left operand's rows kernel */
    /* a rows kernel that a generated matmul computes (the row-scale rule):
     * that kernel's index + 1, else 0; it runs only where cuBLAS does */
    int norm_into;
    const fkernel *pair;    /* SCH_EXTERN: the matmul whose product this generated kernel
                             * computes too (the pair rule, fuse.h), else NULL */
    int pair_into;          /* a matmul that kernel pair_into - 1 computes (else 0): it
                             * runs only where cuBLAS does */
    const fkernel *lora;    /* SCH_EXTERN: with pair, the adapter rule (fuse.h): the x @ A
                             * kernel whose product this one's operand is, else NULL */
    const fkernel *epi;     /* SCH_EXTERN: the pointwise kernel whose stores this generated
                             * kernel computes too (the epilogue rule, fuse.h), else NULL */
    int epi_into;           /* that kernel: the matmul kernel's index + 1 (else 0); it runs
                             * only where cuBLAS does */
    /* SCH_EXTERN attention (sched_attn.c) */
    const tc_dim *at_groups;  /* groups of query rows sharing k and v, ATTN_ROWS at most each */
    const tc_dim *at_rows;    /* query rows that share k and v */
    const tc_dim *at_kv;      /* distinct k and v (batch) */
    const tc_dim *at_splits;  /* key chunks, a block each per group */
    bool at_mma;              /* tensor cores (else FMAs) */
    int at_chunk;             /* keys a split (TENSORC_ATTN_CHUNK, ATTN_CHUNK) */
    int at_warps;             /* warps a block (TENSORC_ATTN_WARPS, ATTN_THREADS / 32) */
    int at_prefetch;          /* 16-key steps in flight a warp (TENSORC_ATTN_PREFETCH, 1) */
    int at_ring;              /* tensor cores: stages of k and v a warp streams through shared
                               * memory (TENSORC_ATTN_RING, ATTN_RING; 0: registers, at_prefetch) */
    int at_shmem;             /* its dynamic shared memory a block, bytes (0: none) */
    bool at_split;            /* each warp its own keys of the chunk (TENSORC_ATTN_SPLIT) */
    bool at_knobs;            /* one of those set: printed, and the template's arguments */
    /* SCH_SCAN checkpointed pair (sched_ckpt.c): this forward walk also runs
     * the reversed walk of kernel ckpt_with - 1, which reads the values
     * ckpt_vals[0..nckpt) of this walk at its own element; the carries are
     * kept every ckpt steps and each segment recomputed into registers */
    int ckpt;                 /* K, the checkpoint interval (0: no pair) */
    int ckpt_with;            /* the reversed walk's kernel index + 1 */
    int ckpt_into;            /* on the reversed walk: the kernel index + 1 that runs it */
    const lnode **ckpt_vals;
    int nckpt;
    const char *ckpt_why;     /* the rule and the bytes, for the dump */
} ksched;

typedef struct sfn {
    const ffn *f;
    ksched *k;              /* per kernel, same order */
    int nk;
    bool idx64;
    bool big;               /* past the function's unrolled budget: every kernel scalar and looped */
} sfn;

/* One function per strategy (sched.c): pointwise, tiles, rows, columns,
 * full; extern for matmuls. */
sfn *sched_fn(const ffn *f, bool idx64, tc_arena *a, tc_diag *d);
void sched_print(tc_buf *b, const sfn *s);
/*! sched_rows_widen(): a rows kernel's schedule with twice the row a thread
 *  in blocks of at most 512 (the wide variant; sched.c says when) */
void sched_rows_widen(ksched *ks);
/*! sched_rows_pipe(): ks->pipe where TENSORC_ROWS_PIPE=1 and the rows kernel
 *  may take a row in a cluster's registers; sched_print_pipe says so */
void sched_rows_pipe(const tc_knobs *kn, const fkernel *k, ksched *ks);
/* k's work for the unrolled-code budget: fuse.h's, heavy library calls weighed (sched_budget.c) */
int sched_work(const fkernel *k);
void sched_print_pipe(tc_buf *b, const ksched *ks);
/*! sched_print_wide(): the wide or split variant's line of `--emit=sched` */
void sched_print_wide(tc_buf *b, const ksched *ks);
/* Rows one block of the narrow variant holds: longer rows take the wide one */
#define SCHED_WIDE_FROM(ks) ((int64_t)(ks)->block[0] * (ks)->block_per)
/* The matmul kernel k's engine, tile and launch (sched_matmul.c). */
void sched_matmul(const tc_knobs *kn, tc_dimctx *c, const fkernel *k, ksched *ks, tc_arena *a);
void sched_print_matmul(tc_buf *b, const ksched *ks);
/* The row-scale, pair, adapter and epilogue rules (fuse_mm_norm,
 * fuse_mm_pairs, fuse_mm_lora, fuse_mm_epilogues) for every generated
 * matmul of s. */
void sched_matmul_rules(sfn *s, tc_arena *a);
/* Checkpointed scan pairs (sched_ckpt.c): a forward walk and the reversed
 * walk that is the only reader of its stored values become one kernel (the
 * first's ksched carries ckpt, the second's ckpt_into).  TENSORC_SCAN_CHECKPOINT
 * = off keeps them apart, = K (1..64) sets the interval. */
void sched_ckpt(sfn *s, tc_arena *a);
void sched_print_ckpt(tc_buf *b, const sfn *s, int i);
void sched_explain_ckpt(tc_buf *b, const sfn *s); /* the same for `tensorc explain` */
/*! sched_explain(): what `tensorc explain` adds from the schedules: the rows
 *  kernels' wide variants and the checkpointed scan pairs */
void sched_explain(tc_buf *b, const sfn *s);
/* The carry dtype of scan or reduction n in a scan's walk (f32 for 16-bit
 * floats, i32 for bool: codegen/scan.c's). */
tc_dtype sched_carry_dtype(const lnode *n);
/* An attention kernel's launch (sched_attn.c; codegen/attn.c generates it). */
void sched_attn(const tc_knobs *kn, tc_dimctx *c, const fkernel *k, ksched *ks, tc_arena *a);
void sched_print_attn(tc_buf *b, const ksched *ks);
/* The online pair (sched_online.c): in a rows kernel that stores nothing
 * row-sized, a max over the row and, a pass later, a sum of exp(x - max)
 * over the same x become one pair reduction in the max's pass (a running
 * max and a sum rescaled to it, codegen/accum.c, helpers.cuh tc_ms), so the
 * row is read once at any length; the kernel loops over its row in blocks
 * of ONLINE_BLOCK threads (TENSORC_ONLINE_BLOCK) with no cluster.
 * TENSORC_ROWS_ONLINE=0 keeps the two passes.  sched_print_online prints the pair and why. */
void sched_online(const ffn *f, const fkernel *k, ksched *ks);
void sched_print_online(tc_buf *b, const ksched *ks);
enum { ONLINE_BLOCK = 512 };
/* Column partials (fuse.h): the rows kernel's blocks of rows and the
 * combining kernel's reduced range (sched_colpart.c), and their dump. */
void sched_colpart(tc_dimctx *c, const tc_knobs *kn, const fkernel *k, ksched *ks);
/* a rows kernel carrying column sums: elements a thread (block[0] may shrink) */
int sched_colpart_per(const tc_knobs *kn, ksched *ks);
void sched_print_colpart(tc_buf *b, const tc_knobs *kn, const ksched *ks);
/* Query rows a block takes, keys a block takes, threads, the ring's
 * stages (attn.cuh's), and the most shared memory a block has (sm_90). */
enum { ATTN_ROWS = 8, ATTN_CHUNK = 512, ATTN_THREADS = 128, ATTN_RING = 0, ATTN_SMEM_MAX = 227 * 1024 };
/* attn.cuh's static shared memory (tc_at_smem) at head dim d, w warps,
 * with a ring or without */
int sched_attn_static(int d, int w, bool ring);
/* The matmul tile and block of the generated kernel (matmul.cuh's). */
enum { MM_TILE_M = 16, MM_TILE_N = 64, MM_THREADS = 128 };
/* SMs assumed by TENSORC_MATMUL_RESIDENT=1 (H100 and H200 SXM) */
enum { MM_SMS = 132 };
/* The invariants above (sched/verify.c lists them): launch limits, vector
 * widths, passes in dependency order, non-negative grids.  A broken one is
 * TC_ERR_INTERNAL through d. */
void sched_verify(const sfn *s, tc_arena *a, tc_diag *d);
/* Whether x >= 0 wherever every dim of dom[0..ndom) is (a kernel's domain,
 * a plan's shapes: a slice's N - 1 is non-negative once sizes bind): a
 * proof when dim_nonneg says so, else checked at sample sizes. */
bool sched_nonneg_where(const tc_dim *x, const tc_dim *const *dom, int ndom);
/* The widest element k reads or stores, in bytes (at least 1): vector
 * widths are 16 bytes over it, in the scheduler and its verifier alike. */
int sched_widest(const fkernel *k);

#endif
