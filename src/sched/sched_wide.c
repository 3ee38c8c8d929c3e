/* sched_wide.c - the rows kernels' wide variant (sched.h's wide,
 * wide_split): twice the row a thread in blocks of at most 512 at 64
 * registers, two blocks a SM, so one row's blocks load while another's
 * reduce and store.  sched.c's sched_rows_wide decides where (f32 rows a
 * cluster may take: alone for a known long length, beside the 16-a-thread
 * kernel, each plan step guarded by the row's length, where the length is
 * known only at launch: codegen/unit.c emits both); what `tensorc explain`
 * says of it is here too.
 */
#include "sched/sched.h"

/* Twice the row a thread, in blocks of at most 512 at 64 registers (two a
 * SM: one row's blocks load while another's reduce and store), for rows a
 * cluster takes.  Measured on an H200 (tc-bench us, one call, f32; the
 * 16-a-thread kernel / this one): softmax 1024 x 65536 209.7 / 181.4, 512 x
 * 131072 340.8 / 205.4, 256 x 262144 453.8 / 242.2 (a 16 x 512 cluster,
 * against 16 x 1024 at one block a SM); but rows one block holds lost
 * (softmax 16384 x 4096 132.4 / 134.2, 32768 x 1024 66.6 / 69.1: 64
 * registers leave fewer warps), and so did bf16 1024 x 65536 (94.1 /
 * 122.3: 64 a thread spill), hence f32 rows past one block only. */
void sched_rows_widen(ksched *ks)
{
    ks->block_per *= 2;
    ks->items *= 2;
    ks->block[0] = 512;
    ks->wide = true;
    ks->wide_split = false;
}

void sched_explain(tc_buf *b, const sfn *s)
{
    for (int i = 0; i < s->nk; i++) {
        const ksched *ks = &s->k[i];
        if (ks->kind != SCH_ROWS)
            continue;
        if (ks->pipe_split)
            buf_printf(b, "  rows: kernel %d has a variant (suffix _w) for rows past %lld elements, chosen "
                          "at launch by the row's length: a persistent grid of clusters, each row kept in "
                          "shared memory while the next one lands (sched)\n",
                       i, (long long)SCHED_WIDE_FROM(ks));
        else if (ks->wide_split)
            buf_printf(b, "  rows: kernel %d has a wide variant (suffix _w) for rows past %lld elements, "
                          "chosen at launch by the row's length: %d elements a thread in blocks of up "
                          "to 512, two a SM, so one row's blocks load while another's reduce (sched)\n",
                       i, (long long)SCHED_WIDE_FROM(ks), 2 * ks->block_per);
        else if (ks->wide)
            buf_printf(b, "  rows: kernel %d keeps %d elements a thread in blocks of up to 512, two a SM "
                          "(its rows are long, or TENSORC_ROWS_REGS=32) (sched)\n", i, ks->block_per);
    }
    sched_explain_ckpt(b, s);
}

/* TENSORC_ROWS_PIPE (issue 14; on for f32 and 16-bit rows unless set): rows kernels that may hold a row in a
 * cluster's registers run a persistent grid (runtime/exec.c: as many
 * clusters as are resident), and each thread copies its slice of the
 * cluster's next row into its own shared-memory slots (cp.async) as soon as
 * this row is in its registers, so the row's loads overlap the previous
 * row's reductions and stores (codegen/rows.c).  The same elements a
 * thread in the same order: the same bits.  Not for the online pair's
 * chunks (no register path) or compact kernels.  The default: 1 for 4-byte
 * rows (H200, 2026-11-27: f32 softmax 1024 x 65536 178.3 -> 171.5 us, 256 x
 * 262144 237.2 -> 217.8; bf16 rmsnorm 256 x 262144 121.2 -> 124.6,
 * spilling at its 40-register cap), 2 for 16-bit rows (below).  Column partials take the same pipe
 * under TENSORC_COLPART_PREFETCH=1 instead, in their own grid (a block per
 * block of rows, each block prefetching its own next row). */
void sched_rows_pipe(const tc_knobs *kn, const fkernel *k, ksched *ks)
{
    if (k->ncols) { /* column partials: TENSORC_COLPART_PREFETCH (sched_colpart.c) */
        ks->pipe = kn->colpart_prefetch == 1 && ks->kind == SCH_ROWS && ks->rblock && ks->items &&
                   ks->vec > 1 && !ks->online_sum && !ks->compact;
        return;
    }
    bool on = kn->rows_pipe >= 0 ? kn->rows_pipe >= 1 : ks->vec == 4 || ks->packed;
    ks->pipe = on && ks->kind == SCH_ROWS && ks->cluster && ks->items && ks->vec > 1 &&
               !ks->online_sum && !ks->compact;
    /* TENSORC_ROWS_PIPE=2 (the default for 16-bit rows): the row stays in
     * its slots, two stages of them (the next row lands in one while every
     * pass reads this row from the other), so no register holds it and
     * the 40-register cap keeps six blocks of 256 a SM, each with a row in
     * flight.  With the row in registers the pipe spilled there and lost
     * (bf16 rmsnorm 1024 x 65536 150.3 us against 86.0 without a pipe; 96.8
     * at 64 registers).  A hand-written kernel of each structure
     * (bench/micro/rowrms.cu, H200, 2026-11-28, one call): one row a
     * cluster 86.9 us, the pipe in registers (64) 77.3, the row in its slots
     * 75.8; 256 x 262144: 115.4 (64 registers; tensorc's 94.9 at 40), 90.0,
     * 83.0.  This one, in another call: 73.9 against 85.8 without the
     * pipe, 256 x 262144 82.6 / 95.1 (bench/results/2026-11-28-h200-session18.md,
     * call 6).  f32 keeps 1: two stages of the wide kernel's 8 items are
     * 128 KB a 512-thread block (softmax 256 x 262144 167.8 against 147.3). */
    ks->resident = ks->pipe && (kn->rows_pipe == 2 || (kn->rows_pipe < 0 && ks->packed));
    /* Rows one block holds take no cluster, so no pipe: a 16-bit kernel
     * keeps one (wide_split's second kernel, suffix _w, past one block's
     * length; codegen/unit.c) and the short rows' kernel none.  In one
     * kernel the short rows' path lost to the pipe's registers (bf16
     * rmsnorm 16384 x 4096: 80.4 us against 73.5 without the pipe, H200,
     * 2026-11-28, one call; ptxas moved 24 bytes of spills into it). */
    int64_t len;
    if (ks->resident && !ks->wide && !ks->wide_split) {
        if (!dim_is_const(ks->rowlen, &len))
            ks->wide_split = ks->pipe_split = true;
        else if (len <= SCHED_WIDE_FROM(ks)) /* one block's row: never a cluster */
            ks->pipe = ks->resident = false;
        else
            ks->long_only = true;
    }
    /* TENSORC_ROWS_TICKET (default on): the persistent clusters take rows
     * in the order they ask for them, not each its every step-th row, so
     * the rows in flight stay a compact span of the input and the output.
     * H200, 2026-11-28 (scratch harness of the _w kernel, f32 softmax):
     * 1024 x 65536 155.6 -> 148.2 us, 512 x 131072 161.3 -> 153.0; a plain
     * persistent copy 141.8 -> 137.2 against a copy of a block a chunk at
     * 132 (the static rows drift apart, the DRAM pages open multiply). */
    ks->ticket = ks->pipe && kn->rows_ticket != 0;
}

void sched_print_wide(tc_buf *b, const ksched *ks)
{
    if (ks->pipe_split)
        buf_printf(b, "    rows past %lld elements: a second kernel (suffix _w) with the cluster and the "
                      "pipe, chosen at launch by the row's length (this one: no cluster, no pipe)\n",
                   (long long)SCHED_WIDE_FROM(ks));
    else if (ks->wide_split)
        buf_printf(b, "    rows past %lld elements: a second kernel (suffix _w) with %d elements a "
                      "thread in blocks of up to 512, two a SM, chosen at launch by the row's "
                      "length\n", (long long)SCHED_WIDE_FROM(ks), 2 * ks->block_per);
    else if (ks->wide)
        buf_puts(b, "    twice the row a thread in blocks of up to 512 at 64 registers, two a SM\n");
}

void sched_print_pipe(tc_buf *b, const ksched *ks)
{
    if (ks->pipe && ks->rblock)
        buf_puts(b, "    each row's slice copied into shared memory while the block's previous row "
                    "reduces and stores (its next row, or its next block of rows' first): "
                    "TENSORC_COLPART_PREFETCH=1\n");
    else if (ks->pipe)
        buf_printf(b, "    rows a cluster takes (the _w kernel's, where there is one): a persistent grid "
                      "(the resident clusters), each cluster prefetching its next row's slice into "
                      "shared memory while this row reduces (TENSORC_ROWS_PIPE: f32 and 16-bit rows by default)%s%s\n",
                   ks->resident ? "; the row kept there, not in registers, every pass reading it from "
                                  "its slots (two stages: TENSORC_ROWS_PIPE=2, 16-bit rows by default)" : "",
                   ks->ticket ? "; after each cluster's first two, rows in the order the clusters ask "
                                "(an atomic ticket: TENSORC_ROWS_TICKET)" : "");
}
