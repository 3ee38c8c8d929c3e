/* knobs.h - the tuning knobs: the environment variables that change what is
 * compiled or how it is launched (README.md, "Tuning knobs", has the table).
 *
 * Stage: read once, when a context is made (tc_ctx_create: knobs_from_env),
 * and kept in the context; compilation gets them from there (fusion's rules
 * through the ffn, scheduling through the ffn it schedules) and so does the
 * runtime (cluster sizes, the wide foreach table).  Nothing else reads
 * these variables, so a context compiles and launches with one set of
 * knobs however the environment changes meanwhile.  knobs_text names the
 * knobs that are set, and is part of the kernel cache key (runtime/jit.h):
 * an image built under other knobs is never taken for this one, even where
 * the source would be the same.
 *
 * An integer knob is -1 when unset or given a value outside its range (the
 * stage that uses it then takes its own default, which lives beside the
 * measurements behind it); an empty value is unset. */
#ifndef TC_KNOBS_H
#define TC_KNOBS_H

#include <stdbool.h>
#include <stddef.h>

enum { KNOB_MM_AUTO, KNOB_MM_CUBLAS, KNOB_MM_GENERATED };

/* TENSORC_MATMUL_STREAM's names, in the order of KNOB_MM_STREAM_* (sched_matmul.c) */
enum { KNOB_MM_STREAM_CPASYNC, KNOB_MM_STREAM_L2PF, KNOB_MM_STREAM_OCC5, KNOB_MM_STREAM_OCC6, KNOB_MM_STREAM_N };
extern const char *const knob_mm_streams[KNOB_MM_STREAM_N];

typedef struct tc_knobs {
    /* fusion (src/fuse) */
    int matmul;             /* TENSORC_MATMUL: cublas, generated, else KNOB_MM_AUTO */
    bool matmul_epilogue;   /* TENSORC_MATMUL_EPILOGUE: false when "off" */
    bool matmul_lora;       /* TENSORC_MATMUL_LORA: true when "on" */
    bool matmul_norm;       /* TENSORC_MATMUL_NORM: false when "off" (the row-scale rule) */
    bool matmul_dual;       /* TENSORC_MATMUL_DUAL: false when "off" (the epilogue rule, M symbolic) */
    bool attention;         /* TENSORC_ATTENTION: false when "off" */
    /* scheduling (src/sched): -1 unset */
    int matmul_kslice;      /* TENSORC_MATMUL_KSLICE: a multiple of 64 */
    int matmul_stages;      /* TENSORC_MATMUL_STAGES: 2 to 8 */
    int matmul_bk;          /* TENSORC_MATMUL_BK: 32, 64 or 128 */
    int matmul_resident;    /* TENSORC_MATMUL_RESIDENT: 0 to 65536 */
    int matmul_fence;       /* TENSORC_MATMUL_FENCE: 0 every thread, 1 one, 2 one with acq_rel */
    int matmul_order;       /* TENSORC_MATMUL_ORDER: 0 tile by tile, 1 slice by slice */
    int matmul_stream;      /* TENSORC_MATMUL_STREAM: an index of knob_mm_streams (0 "cpasync",
                             * as before), -1 unset */
    int pw_unroll;          /* TENSORC_PW_UNROLL: 1, 2, 4 or 8 */
    int full_unroll;        /* TENSORC_FULL_UNROLL: 1, 2, 4 or 8 */
    int col_unroll;         /* TENSORC_COL_UNROLL: 1 to 16 */
    int tile_whole;         /* TENSORC_TILE_WHOLE: 0 or 1 */
    int tile_vec;           /* TENSORC_TILE_VEC: 0 (4-byte accesses, as before), 1 or 2 (64 x 64 tiles) */
    int fe_steps;           /* TENSORC_FE_STEPS: 1 to 64 */
    int pw_block;           /* TENSORC_PW_BLOCK: 32 to 1024, a power of two */
    int pw_once;            /* TENSORC_PW_ONCE: 0 (the vector test inside if (vok_), as before) or 1 */
    int fe_param;           /* TENSORC_FE_PARAM: 0 (the group through a generic pointer, as before) or 1 */
    int full_grid;          /* TENSORC_FULL_GRID: 1 to 65536 */
    int col_split;          /* TENSORC_COL_SPLIT: 2 to 1024 */
    int col_y;              /* TENSORC_COL_Y: 1 to 256, a power of two (COL_X * COL_Y <= 256) */
    int col_x;              /* TENSORC_COL_X: 16 to 256, a multiple of 16 */
    int scan_checkpoint;    /* TENSORC_SCAN_CHECKPOINT: 0 ("off" or 0), else K from 1 to 64 */
    int attn_chunk;         /* TENSORC_ATTN_CHUNK: keys a split, 64, 128, 256 or 512 */
    int attn_warps;         /* TENSORC_ATTN_WARPS: 4 or 8 */
    int attn_prefetch;      /* TENSORC_ATTN_PREFETCH: 1 or 2 */
    int attn_ring;          /* TENSORC_ATTN_RING: 0 (k and v through registers) or stages, 1 to 8 */
    int attn_split;         /* TENSORC_ATTN_SPLIT: warps a block each on its own keys, 4, 8 or 16 */
    int rows_online;        /* TENSORC_ROWS_ONLINE: 0 (two passes, as before) or 1 */
    int online_block;       /* TENSORC_ONLINE_BLOCK: 32 to 1024, a power of two */
    int online_vec;         /* TENSORC_ONLINE_VEC: 0 (an update an element, as before) or 1 */
    /* launches (src/runtime, src/api): -1 unset */
    int cluster_max;        /* TENSORC_CLUSTER_MAX: 1 to 16, a power of two */
    int cluster_block;      /* TENSORC_CLUSTER_BLOCK: 32 to 1024, a power of two */
    int blas_early;         /* TENSORC_BLAS_EARLY: 0 (cuBLAS loaded at the first matmul, as before) or 1:
                             * on a thread while the kernels compile (runtime/rt.h) */
    int foreach_wide;       /* TENSORC_FOREACH_WIDE: 0 or 1 (another value is warned about) */
    int foreach_small;      /* TENSORC_FOREACH_SMALL: 0 (the 4 KB table's unit, its table unread, as
                             * before) or 1: past its groups, a unit with a table of one group */
    int rows_regs;          /* TENSORC_ROWS_REGS: 8, 16 (as before) or 32 registers of a row a thread */
    int rows_block;         /* TENSORC_ROWS_BLOCK: 64 to 1024, a power of two: a rows kernel's largest block */
    int cluster_push;       /* TENSORC_CLUSTER_PUSH: 0 (a cluster barrier a combine, as before) or 1 */
    int rows_keep;          /* TENSORC_ROWS_KEEP: 0 (every pass computes its values again, as before) or 1 */
    int rows_pair;          /* TENSORC_ROWS_PAIR: 0 (two combines, as before), 1 (rows in clusters) or 2
                             * (every row in registers): max and sum of exp in one combine */
    int rows_pipe;          /* TENSORC_ROWS_PIPE: 0 (as before), 1: rows a cluster takes in a
                             * persistent grid, the next row's slice prefetched (codegen/rows.c),
                             * 2: so, the row kept in its slots (two stages) instead of registers */
    int rows_maxreg;        /* TENSORC_ROWS_MAXREG: 32 to 128: a rows kernel's register cap (40 unset) */
    int rows_ticket;        /* TENSORC_ROWS_TICKET: 0 (each cluster every step-th row, as before) or 1:
                             * the pipe's clusters take rows in the order they ask (an atomic ticket) */
    /* code generation (src/codegen): -1 unset */
    int load_ef;            /* TENSORC_LOAD_EF: 0 or 1 (16-byte loads with the evict-first hint) */
    int fast_math;          /* TENSORC_FAST_MATH: 0 (libm's accurate f32 functions) or 1 */
    int max_nan;            /* TENSORC_MAX_NAN: 0 (reductions' f32 max/min by tc_max's tests) or 1 */
    int scan_unroll;        /* TENSORC_SCAN_UNROLL: 1 to 16, a power of two: a lane walk's steps unrolled */
    int scan_hoist;         /* TENSORC_SCAN_HOIST: 0 or 1: a checkpointed pair's reversed walk's
                             * carry-free work in the replay (scan.c) */
    /* column partials (fuse.h, sched_colpart.c): -1 unset */
    int col_rows;           /* TENSORC_COL_ROWS: 1 to 1024: rows a block of a rows kernel carrying
                             * column sums takes (FUSE_COL_ROWS = 64 unset) */
    int colpart_prefetch;   /* TENSORC_COLPART_PREFETCH: 0 (as before) or 1: such a block copies
                             * its next row into shared memory while this one reduces */
    int matmul_bn;          /* TENSORC_MATMUL_BN: 64, 128 or 256 (16-row tensor-core tiles' columns) */
    int matmul_kauto;       /* TENSORC_MATMUL_KAUTO: 0 (as before session 23), 1: 64-wide tiles take
                             * the wide tiles' launch-time K slices too (few tiles: more slices),
                             * 2 (the default): only under 64 work items, slices >= 128 */
    int scan_lse;           /* TENSORC_SCAN_LSE: 0 or 1: a lane walk's f32 logcumsumexp carried as
                             * (max, scaled sum), the log only where read (scan.c) */
    int col_occ;            /* TENSORC_COL_OCC: 1 to 32: a column kernel's blocks a SM asked of
                             * ptxas (__launch_bounds__'s second argument), -1 none */
    int pw_occ;             /* TENSORC_PW_OCC: likewise for pointwise kernels (foreach too) */
    int col_order;          /* TENSORC_COL_ORDER: 0 or 1: a split column kernel's blocks group-major
                             * (0) or slice-major (1: columns.c) */
    int scan_async;         /* TENSORC_SCAN_ASYNC: 0 (as before) or 1: a lane walk's staged loads
                             * copied by cp.async a chunk ahead, two chunks of shared memory
                             * (scan_stage.c) */
    int scan_minblocks;     /* TENSORC_SCAN_MINBLOCKS: 1 to 16: a scan kernel's blocks a SM in its
                             * __launch_bounds__ (a register cap; unset: none, as before) */
    int scan_pair_lse;      /* TENSORC_SCAN_PAIR_LSE: 0 (as before) or 1: a checkpointed pair's
                             * forward walks carry logcumsumexp as (max, scaled sum) too (scan.c) */
} tc_knobs;

/* Every knob unset: what compilation uses without a context's knobs (unit
 * tests that call fuse_fn directly). */
extern const tc_knobs knobs_default;

/*! knobs_from_env(): the knobs the environment sets, into *k. */
void knobs_from_env(tc_knobs *k);

/*! knobs_text(): the knobs set in k as "NAME=VALUE" words separated by
 *  spaces, in a fixed order ("" when none), into buf (cap bytes, cut
 *  short only past 512). */
void knobs_text(const tc_knobs *k, char *buf, size_t cap);

#endif
