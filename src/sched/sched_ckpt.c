/* sched_ckpt.c - checkpointed scan pairs: a forward walk and the reversed
 * walk that reads it, as one kernel.
 *
 * A gradient of a scan (grad(mingru)) fuses into two walks over the same
 * lanes: kernel F walks the axis one way (the forward scans, a reduction
 * over the axis) and stores its running values at every step; kernel R,
 * the next one, walks the other way and is their only reader, at the
 * element it is at.  Those stores are 2 x T x lanes x 4 bytes written and
 * read for the minGRU.  Here the pair becomes one kernel (codegen/scan.c):
 * a thread per lane runs F's walk keeping its scan carries every K steps
 * in a scratch buffer (ceil(T/K) - 1 x lanes per carry, T symbolic: the
 * first segment starts from nothing; none for a constant T of one segment
 * (the plan allocates ceil(T/K) rows for a symbolic T: no negative size
 * at T = 0)), then
 * walks the segments from the last: restores the segment's carries,
 * recomputes its K forward steps into a register array (fully unrolled, K
 * a constant) and walks them back with R's body.  F's other stores (its
 * outputs, a reduction's after the walk) are made by the first walk.
 *
 * Applies when: both kernels are scans over the same domain and axis in
 * opposite directions, neither compact, R is F's next kernel; every value
 * R reads from F is an element store of F that no other kernel reads and
 * no output is, read by R only at its own element; at most 8 such values;
 * the function writes no parameter in place (the recompute reads F's
 * inputs again); a constant T is at most 256 (longer ones keep the two
 * block-parallel kernels; a symbolic T runs the lane path at every length).
 *
 * K: the largest power of 2 from 2 to 8 whose register arrays take at
 * most CKPT_REGS = 32 registers (K values of each value a step, an f64 two)
 * and whose unrolled segment, K steps of both walks, computes at most
 * CKPT_WORK = 512 nodes (K x the two kernels' work, fusion's cost model).
 * Registers and NVRTC's time grow with the unrolled code: the minGRU
 * gradient (a and s; 27 + 76 = 103 nodes a step) used 56, 80, 136 and 222
 * registers at K = 2, 4, 8, 16 (ptxas -v, sm_90; the two kernels 64
 * each), and NVRTC took 0.22 and 0.41 s of CPU at K = 4 and 8 against
 * 0.40 for the two kernels (sm_90 CUBIN, user time, 2 runs each on a loaded
 * 2-core machine, 2026-11-26; K = 16, before loads were staged, 1.4-1.7 s
 * against 0.45-0.50).  So it takes K = 4: at T = 64, 15 checkpoint rows
 * (the first segment needs none) written and read against 64 rows of a
 * and s stored, 4.3x fewer bytes.  pair_fwd's five values: K = 4 by the
 * registers (48 of them; the two kernels 56 and 48).  A constant T
 * under K takes K = T (one segment).  TENSORC_SCAN_CHECKPOINT=off keeps
 * the two kernels (the A/B), =K with K in 1..64 sets the interval (read
 * once a context, base/knobs.h).  The
 * price is F's math twice (the first walk and the segments'): the minGRU
 * walks are issue-bound at T = 64 (docs/internals.md, Scans), so this is
 * memory saved first, time to be measured on a GPU.
 */
#include "sched/sched.h"

enum { CKPT_REGS = 32, CKPT_WORK = 512, CKPT_MIN = 2, CKPT_MAX = 8, CKPT_VALS = 8, CKPT_SEQ = 256 };

tc_dtype sched_carry_dtype(const lnode *n)
{
    if (n->dtype == TC_F16 || n->dtype == TC_BF16)
        return TC_F32;
    return n->dtype == TC_BOOL ? TC_I32 : n->dtype;
}

/* R reads the candidates only at its own element (identity index). */
typedef struct rwalk {
    const ffn *f;
    const fkernel *k;
    const bool *cand;
    bool ok;
    int budget;
} rwalk;

static void rwalk_reads(rwalk *w, const lnode *n, const tc_dim *const *idx)
{
    if (!w->ok || --w->budget < 0) {
        w->ok = false;
        return;
    }
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR || n->kind == LK_CONST || n->kind == LK_DIMVAL)
        return;
    bool own = w->f->kernel_of[n->id] == w->k->id;
    if (w->f->stored[n->id] && !own) {
        if (w->cand[n->id] && !lir_is_identity(w->f->l, idx, n->rank))
            w->ok = false;
        return;
    }
    if (n->kind == LK_GATHER && w->cand[n->in[0].src->id]) {
        w->ok = false;
        return;
    }
    if (n->kind == LK_REDUCE) {
        rwalk_reads(w, n->in[0].src, n->in[0].idx);
        return;
    }
    int64_t at, lo, hi;
    if (n->kind == LK_CONCAT && dim_is_const(idx[n->a.cat.axis], &at)) /* a plane: one piece (emit.c) */
        for (int i = 0; i < n->nin; i++)
            if (dim_is_const(n->a.cat.offsets[i], &lo) && dim_is_const(n->a.cat.offsets[i + 1], &hi) &&
                lo <= at && at < hi) {
                const tc_dim *ci[TC_MAX_RANK];
                lir_compose(w->f->l, &n->in[i], idx, n->rank, ci);
                rwalk_reads(w, n->in[i].src, ci);
                return;
            }
    for (int i = 0; i < n->nin; i++) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(w->f->l, &n->in[i], idx, n->rank, ci);
        rwalk_reads(w, n->in[i].src, ci);
    }
}

static bool reads_at_own_element(const ffn *f, const fkernel *r, const bool *cand)
{
    rwalk w = {f, r, cand, true, 200000};
    const tc_dim **id = (const tc_dim **)f->l->vars;
    for (int i = 0; i < r->nstores && w.ok; i++) {
        const lnode *st = r->stores[i];
        const tc_dim *idx[TC_MAX_RANK];
        int q, e;
        if (fuse_plane(r, st, &q, &e)) {
            for (int c = 0; c < e; c++) {
                for (int a = 0, v = 0; a < st->rank; a++)
                    idx[a] = a == q ? dim_const(f->l->dims, c) : id[v++];
                rwalk_reads(&w, st, idx);
            }
            continue;
        }
        if (!fuse_node_index(f, r, st, idx))
            return false;
        rwalk_reads(&w, st, idx);
    }
    for (int i = 0; i < r->nreds && w.ok; i++)
        rwalk_reads(&w, r->reds[i], id);
    return w.ok;
}

static bool same_domain(const fkernel *a, const fkernel *b)
{
    if (a->rank != b->rank || a->mask != b->mask)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (!dim_eq(a->dom[i], b->dom[i]))
            return false;
    return true;
}

static bool in_list(lnode *const *v, int n, const lnode *x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* The context's TENSORC_SCAN_CHECKPOINT (base/knobs.h): -1 off, 0 the
 * rule, K forced. */
static int knob_interval(const sfn *s)
{
    int v = s->f->knobs.scan_checkpoint;
    return v < 0 ? 0 : v == 0 ? -1 : v;
}

/* Kernel i (F) and i + 1 (R) as a pair, or false. */
static bool pair(sfn *s, int i, tc_arena *a)
{
    const ffn *f = s->f;
    const lfn *l = f->l;
    ksched *kf = &s->k[i], *kr = &s->k[i + 1];
    const fkernel *F = f->k[i], *R = f->k[i + 1];
    if (kf->kind != SCH_SCAN || kr->kind != SCH_SCAN || kf->compact || kr->compact || kf->ckpt_into ||
        F->reverse == R->reverse || !same_domain(F, R))
        return false;
    int64_t T;
    if (dim_is_const(kf->rowlen, &T) && T > CKPT_SEQ)
        return false;
    for (int o = 0; o < l->noutputs; o++)
        if (l->outputs[o].inout_param >= 0)
            return false;
    bool *cand = ARENA_ARRAY(a, bool, l->nnodes > 0 ? l->nnodes : 1);
    const lnode **vals = ARENA_ARRAY(a, const lnode *, CKPT_VALS);
    int nv = 0;
    for (int j = 0; j < R->nreads; j++) {
        const lnode *n = R->reads[j];
        if (!in_list(F->stores, F->nstores, n))
            continue; /* a parameter, or an earlier kernel's */
        if (!fuse_is_element(F, n) || nv == CKPT_VALS)
            return false;
        for (int o = 0; o < l->noutputs; o++)
            if (l->outputs[o].node == n)
                return false;
        for (int m = i + 2; m < f->nk; m++)
            if (in_list(f->k[m]->reads, f->k[m]->nreads, n))
                return false;
        cand[n->id] = true;
        vals[nv++] = n;
    }
    if (nv == 0 || !reads_at_own_element(f, R, cand))
        return false;
    int regs = 0;
    for (int j = 0; j < nv; j++)
        regs += dtype_size(vals[j]->dtype) > 4 ? 2 : 1;
    int K = CKPT_MAX, work = F->work + R->work;
    while (K > CKPT_MIN && (K * regs > CKPT_REGS || K * work > CKPT_WORK))
        K /= 2;
    bool fromT = dim_is_const(kf->rowlen, &T) && T >= 1 && T < K;
    if (fromT)
        K = (int)T;
    int forced = knob_interval(s);
    if (forced > 0)
        K = forced;
    kf->ckpt = K;
    kf->ckpt_with = i + 2;
    kr->ckpt_into = i + 1;
    kf->ckpt_vals = vals;
    kf->nckpt = nv;
    /* the bytes: checkpoints against the stored walk, each written and read */
    tc_dimctx *c = l->dims;
    int cbytes = 0, vbytes = 0;
    for (int j = 0; j < F->nreds; j++)
        if (F->reds[j]->kind == LK_SCAN)
            cbytes += dtype_size(sched_carry_dtype(F->reds[j]));
    for (int j = 0; j < nv; j++)
        vbytes += dtype_size(vals[j]->dtype);
    /* the first segment needs no checkpoint (a scan's first step starts it) */
    const tc_dim *segs = dim_sub(c, dim_ceildiv(c, kf->rowlen, dim_const(c, K)), dim_const(c, 1));
    if (dim_is_const(kf->rowlen, &T) && T <= K)
        segs = dim_const(c, 0);
    const tc_dim *with = dim_mul(c, dim_mul(c, segs, kf->rows), dim_const(c, 2 * (int64_t)cbytes));
    const tc_dim *without = dim_mul(c, dim_mul(c, kf->rowlen, kf->rows), dim_const(c, 2 * (int64_t)vbytes));
    tc_buf b;
    buf_init(&b, a);
    buf_printf(&b, "checkpoint every %d steps: %s bytes against %s (", K, dim_str(a, with), dim_str(a, without));
    for (int j = 0; j < nv; j++)
        buf_printf(&b, "%s%%%d", j ? ", " : "", vals[j]->id);
    buf_printf(&b, " stored at every step; each written and read); K %s", forced > 0
                   ? "from TENSORC_SCAN_CHECKPOINT"
                   : arena_printf(a, "%s: %d register%s and %d nodes of work a step, arrays of at most "
                                     "%d registers, segments of at most %d nodes",
                                  fromT ? "from T" : "from the registers and the work", regs,
                                  regs == 1 ? "" : "s", work, CKPT_REGS, CKPT_WORK));
    kf->ckpt_why = buf_str(&b);
    kf->why = "scan pair: a thread per lane walks the axis at every length, this kernel's walk (its "
              "scan carries kept every K steps) then the next kernel's reversed walk, segment by "
              "segment from the end, each segment's forward steps recomputed into registers";
    return true;
}

void sched_ckpt(sfn *s, tc_arena *a)
{
    if (knob_interval(s) < 0)
        return;
    for (int i = 0; i + 1 < s->nk; i++)
        if (pair(s, i, a))
            i++;
}

void sched_print_ckpt(tc_buf *b, const sfn *s, int i)
{
    const ksched *ks = &s->k[i];
    if (ks->ckpt)
        buf_printf(b, "    with kernel %d's reversed walk in this kernel (a thread per lane at every "
                      "length); %s\n", ks->ckpt_with - 1, ks->ckpt_why);
    if (ks->ckpt_into)
        buf_printf(b, "    not launched: kernel %d runs this walk after its own, recomputing its "
                      "values from checkpoints\n", ks->ckpt_into - 1);
}

void sched_explain_ckpt(tc_buf *b, const sfn *s)
{
    for (int i = 0; i < s->nk; i++)
        if (s->k[i].ckpt)
            buf_printf(b, "  scan pair: kernel %d runs kernel %d's reversed walk too (sched); %s\n", i,
                       s->k[i].ckpt_with - 1, s->k[i].ckpt_why);
}
