/* sched_colpart.c - column partials (fuse.h, sched.h): the rows kernel
 * that carries column sums takes FUSE_COL_ROWS rows a block (TENSORC_COL_ROWS:
 * another count, an A/B); the column
 * kernel reduces the partials, one row of them per such block.
 *
 * Why a constant number of rows a block: the partial sums, and so dw and
 * db, are then the same bits at every launch (no dependence on the grid
 * the runtime clamps or on the GPU), and a row's own results (dx) are
 * computed exactly as without partials.  64 rows (fuse.h has the
 * figures): a 16384-row batch gives 256 blocks (about 2 an SM on 132 SMs),
 * and the partials cost 4 bytes per column and sum per 64 rows written and
 * read again (layernorm's backward at 16384 x 4096: 2 x 4 MB beside 805 MB).
 */
#include "sched/sched.h"

/* 8 elements a thread (sched.c's ROW_ITEMS), so the sums fit beside the
 * row at 64 registers; TENSORC_ROWS_REGS=16 (A/B, issue 15: Inductor's
 * layernorm backward, 8 warps x 16 a thread): 16 in blocks of at most 512,
 * so up to 128 registers (codegen/kernel.c's bounds) hold the row and its
 * sums (126 for layernorm's backward at sm_90) */
int sched_colpart_per(const tc_knobs *kn, ksched *ks)
{
    if (kn->rows_regs == 16 && ks->vec > 1) {
        ks->block[0] = 512;
        return 16;
    }
    return 8;
}

void sched_colpart(tc_dimctx *c, const tc_knobs *kn, const fkernel *k, ksched *ks)
{
    int rb = fuse_col_rows(kn);
    const tc_dim *R = dim_const(c, rb);
    if (k->ncols) {
        ks->rblock = rb;
        ks->cluster = 0; /* a cluster's blocks share a row, not a block of rows */
        ks->grid = dim_ceildiv(c, ks->rows, R);
        /* (the number is the column partials' line of the dump) */
        bool dflt = rb == FUSE_COL_ROWS;
        ks->why = ks->compact ? (dflt ? "reduction over trailing axes with column partials: a block per 64 rows, "
                                        "one pass per phase, epilogue pass writes the row and adds it to the "
                                        "block's column sums; rows loop: the budget"
                                      : "reduction over trailing axes with column partials: a block per "
                                        "TENSORC_COL_ROWS rows, one pass per phase, epilogue pass writes the "
                                        "row and adds it to the block's column sums; rows loop: the budget")
                  : dflt ? "reduction over trailing axes with column partials: a block per 64 rows, "
                           "one pass per phase, epilogue pass writes the row and adds it to the "
                           "block's column sums (registers where the row is)"
                         : "reduction over trailing axes with column partials: a block per TENSORC_COL_ROWS "
                           "rows, one pass per phase, epilogue pass writes the row and adds it to the "
                           "block's column sums (registers where the row is)";
    } else if (k->partials) {
        ks->rowlen = dim_ceildiv(c, ks->rowlen, R);
        ks->numel = dim_mul(c, ks->rows, ks->rowlen);
    }
}

void sched_print_colpart(tc_buf *b, const tc_knobs *kn, const ksched *ks)
{
    const fkernel *k = ks->k;
    if (k->ncols) {
        buf_puts(b, "    column partials:");
        for (int j = 0; j < k->ncols; j++)
            buf_printf(b, " %%%d %s%s", k->cols[j]->id, red_kind_name(k->cols[j]->a.red.kind),
                       j + 1 < k->ncols ? "," : "");
        buf_printf(b, " summed over each block's %d rows (a thread's columns, the same in every row: "
                      "registers, or the partials where the row loops), one partial row a block\n",
                   ks->rblock);
    } else if (k->partials) {
        buf_printf(b, "    sums kernel %d's partials (one row per block of %d rows) in block order; "
                      "reads no input of its own\n",
                   k->partials->id, fuse_col_rows(kn));
    }
}
