/* sched_online.c - the online pair in rows kernels (sched.h): a max over
 * the row and a sum of exp(x - max) over the same x in one pass.
 *
 * Logsumexp (as lowering expands it: m = max(x), c = where(isinf(m), 0, m),
 * sum(exp(x - c))), cross-entropy (the same beside a plain sum) and the
 * hand-written max-then-sum(exp(x - max)) take two passes over the row: the
 * sum needs the max.  Where the kernel writes nothing row-sized, nothing
 * needs the row kept between them, so each thread keeps a running max m and
 * s = sum(exp(x - m)) rescaled whenever m grows, and pairs combine in the
 * block's fixed tree (helpers.cuh, tc_ms): one read of the row at any
 * length, no cluster, and the same bits for a row wherever it sits.  m is
 * the max exactly (the same operator); s differs from the two-pass sum by
 * f32 rounding only, and where m is not finite (a NaN, a +inf, a row all
 * -inf) the result is what the two passes give: exp(m - c) (NaN, +inf or 0
 * as c is m or the guard), or 0 for an empty row (codegen/accum.c).
 */
#include "sched/sched.h"

#include <stdio.h>

static bool same_idx(const tc_dim *const *a, const tc_dim *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!dim_eq(a[i], b[i]))
            return false;
    return true;
}

/* r reads its input at the identity of its n index vars */
static bool identity(const lfn *l, const lref *r, int n)
{
    return same_idx(r->idx, l->vars, n);
}

static bool is_pw(const lnode *n, op_id op)
{
    return n->kind == LK_POINTWISE && n->op == op && n->dtype == (op == OP_isinf ? TC_BOOL : TC_F32) &&
           n->opdt == TC_F32;
}

/* c is the shift of a sum over m's row: m itself, or where(isinf(m), K, m)
 * with K a finite constant (logsumexp's guard), read at m's row */
static bool shift_of(const lfn *l, const lnode *c, const lnode *m)
{
    if (c == m)
        return true;
    if (!is_pw(c, OP_where) || c->nin != 3 || c->rank != m->rank)
        return false;
    const lnode *inf = c->in[0].src, *kc = c->in[1].src;
    return is_pw(inf, OP_isinf) && inf->in[0].src == m && identity(l, &inf->in[0], m->rank) &&
           identity(l, &c->in[0], c->rank) && kc->kind == LK_CONST && kc->rank == 0 &&
           kc->a.cnst.f - kc->a.cnst.f == 0 && c->in[2].src == m && identity(l, &c->in[2], c->rank);
}

/* Is reds[s] of k a sum of exp(x - shift) over the row of reds[mx], a max
 * of the same x?  (f32 throughout: the prelude casts first.) */
static bool pair(const lfn *l, const fkernel *k, int mx, int s, const lnode **shift)
{
    const lnode *M = k->reds[mx], *S = k->reds[s];
    if (M->a.red.kind != RK_MAX || S->a.red.kind != RK_SUM || M->dtype != TC_F32 ||
        S->dtype != TC_F32 || M->a.red.mask != S->a.red.mask || M->a.red.rin != S->a.red.rin)
        return false;
    int rin = S->a.red.rin;
    const lnode *E = S->in[0].src;
    if (!is_pw(E, OP_exp) || E->rank != rin || !identity(l, &S->in[0], rin))
        return false;
    const lnode *D = E->in[0].src;
    if (!is_pw(D, OP_sub) || D->rank != rin || !identity(l, &E->in[0], rin))
        return false;
    if (D->in[0].src != M->in[0].src || !same_idx(D->in[0].idx, M->in[0].idx, D->in[0].src->rank))
        return false;
    const tc_dim *row[TC_MAX_RANK];
    red_row_index(l, M, row);
    const lnode *C = D->in[1].src;
    if (C->rank != M->rank || !same_idx(D->in[1].idx, row, M->rank) || !shift_of(l, C, M))
        return false;
    *shift = C;
    return true;
}

/* The pair where the row is kept for a row-sized output (softmax): in the
 * register paths (rows.c) each thread takes its own max m over its
 * registers, then s = sum(exp(x - m)) over them (m guarded to 0 where it is
 * not finite), and the block (and cluster) combine the pairs once, where the
 * two passes combined the max, then the sum: one exchange a row instead of
 * two (a cluster's exchange waits for every block of it).  The
 * sum's pass keeps exp(x - m) (keep.c) and the epilogue multiplies it by
 * exp(m - max) a thread (codegen/accum.c's cg_finish_pair).
 * TENSORC_ROWS_PAIR: 0 none (the default), 1 rows shared by a cluster, 2
 * every register row.  Off: no gain where timed (H100, 2026-11-28, one
 * call, p0 / p1 / p2 in us: softmax 1024 x 65536 208.4 / 209.1 / 208.9,
 * 512 x 131072 209.3 / 211.0 / 211.1, 256 x 262144 218.0 / 221.4 / 220.5;
 * 16384 x 4096 180.6 / 180.6 / 180.8): the grid's other resident clusters
 * already hide a combine's wait (1024 x 65536 moves 2.58 TB/s there).
 * Nor on an H200 (2026-11-28, one call, p0 / p2: 150.5 / 152.9, 158.7 /
 * 159.0, 171.4 / 175.4; bench/results/2026-11-28-h200-session17.md). */
static void sched_rpair(const ffn *f, const fkernel *k, ksched *ks, int mx, int s, const lnode *shift)
{
    int kn = f->knobs.rows_pair >= 0 ? f->knobs.rows_pair : 0;
    if (kn == 0 || !ks->items || (kn == 1 && !ks->cluster))
        return;
    for (int j = 0; j < k->nreds; j++)
        if (j != mx && j != s)
            return; /* the pair alone in its two passes */
    ks->rpair = kn;
    ks->rpair_max = mx + 1;
    ks->rpair_sum = s + 1;
    ks->rpair_shift = shift;
}

void sched_online(const ffn *f, const fkernel *k, ksched *ks)
{
    if (ks->kind != SCH_ROWS || ks->nphases != 2 || k->ncols || k->partials || ks->compact)
        return;
    bool rowsized = false;
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]))
            rowsized = true; /* a row-sized output: the row is kept for it (softmax) */
    int s = -1;
    for (int j = 0; j < k->nreds; j++)
        if (ks->phase[j] == 1) {
            if (s >= 0)
                return; /* one reduction in the second pass: the pair's sum */
            s = j;
        }
    if (s < 0)
        return;
    for (int j = 0; j < k->nreds; j++) {
        const lnode *shift;
        if (ks->phase[j] != 0 || !pair(f->l, k, j, s, &shift))
            continue;
        if (rowsized) {
            sched_rpair(f, k, ks, j, s, shift);
            return;
        }
        if (f->knobs.rows_online == 0)
            return;
        ks->online_max = j + 1;
        ks->online_sum = s + 1;
        ks->online_shift = shift;
        ks->online_vec = f->knobs.online_vec != 0;
        ks->phase[s] = 0;
        ks->nphases = 1;
        /* looped, no cluster: the row is read once at any length, so
         * blocks are sized for occupancy (512 threads at the 40-register
         * cap: three a SM) rather than to hold a row (not yet timed;
         * TENSORC_ONLINE_BLOCK for the A/B) */
        ks->cluster = 0;
        ks->block[0] = f->knobs.online_block > 0 ? f->knobs.online_block : ONLINE_BLOCK;
        ks->why = "reduction over trailing axes: a block per row; the max and the sum of "
                  "exp(x - max) in one online pass (nothing row-sized is written, so the row "
                  "need not be kept): loads and blocks sized for occupancy instead of a "
                  "cluster holding the row";
        if (!ks->items) /* rows past a cluster's registers looped scalar */
            ks->items = ks->block_per / ks->vec;
        return;
    }
}

void sched_print_online(tc_buf *b, const ksched *ks)
{
    if (ks->rpair) {
        const lnode *M = ks->k->reds[ks->rpair_max - 1], *S = ks->k->reds[ks->rpair_sum - 1];
        buf_printf(b, "    max and sum in one combine: %%%d max and %%%d sum of exp(x - %s) over a thread's "
                      "registers first (its own max), the pairs combined once %s (the row is read once "
                      "and kept; the looped path keeps two passes; TENSORC_ROWS_PAIR=0: two combines)\n",
                   M->id, S->id, ks->rpair_shift == M ? "max" : "where(isinf(max), K, max)",
                   ks->rpair == 1 ? "where a cluster shares the row" : "in every register path");
    }
    if (!ks->online_sum)
        return;
    const lnode *M = ks->k->reds[ks->online_max - 1], *S = ks->k->reds[ks->online_sum - 1];
    char step[128];
    if (ks->vec > 1)
        snprintf(step, sizeof step, "%d elements a thread a step (its 16-byte loads before its math%s)",
                 ks->items * ks->vec, ks->online_vec ? ", an update of the pair a vector" : "");
    else
        snprintf(step, sizeof step, "scalar (no vectors: rows past the registers' items loop)");
    buf_printf(b, "    online pair: %%%d max and %%%d sum of exp(x - %s) in one pass (a running max and "
                  "the sum rescaled to it a thread, pairs combined in a fixed tree): the kernel writes "
                  "nothing row-sized, so the row is read once at any length; blocks of up to %d "
                  "threads loop over it, %s, no cluster (TENSORC_ROWS_ONLINE=0: two passes)\n",
               M->id, S->id, ks->online_shift == M ? "max" : "where(isinf(max), K, max)",
               ks->block[0], step);
}
