/* accum.c - reductions' accumulators: their types, identities and names,
 * the accumulate statements of a pass, and the results after it.
 */
#include "codegen/cg.h"

#include <string.h>

static tc_dtype acc_dtype(const lnode *r)
{
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return r->in[0].src->dtype;
    return r->dtype;
}

const char *cg_acc_type(cg *g, const lnode *r)
{
    tc_dtype t = acc_dtype(r);
    const char *base = t == TC_BOOL ? "int" : cg_type(t);
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return arena_printf(g->a, "tc_argv<%s>", base);
    return base;
}

const char *cg_red_op(const lnode *r)
{
    static const char *const names[] = {"tc_op_sum", "tc_op_prod", "tc_op_max", "tc_op_min",
                                        "tc_op_argmax", "tc_op_argmin"};
    return names[r->a.red.kind];
}

/* The number in r's accumulator's and result's names: its node id, or
 * with positional names its place among the kernel's reductions. */
int cg_rno(const cg *g, const lnode *r)
{
    if (g->positional)
        for (int j = 0; j < g->k->nreds; j++)
            if (g->k->reds[j] == r)
                return j;
    return r->id;
}

/* The identity of r's operator, as an expression of its accumulator type. */
const char *cg_acc_init(cg *g, const lnode *r)
{
    const char *t = cg_acc_type(g, r);
    const char *vt = acc_dtype(r) == TC_BOOL ? "int" : cg_type(acc_dtype(r));
    switch (r->a.red.kind) {
    case RK_SUM: return arena_printf(g->a, "(%s)0", t);
    case RK_PROD: return arena_printf(g->a, "(%s)1", t);
    case RK_MAX: return arena_printf(g->a, "tc_lowest<%s>()", t);
    case RK_MIN: return arena_printf(g->a, "tc_highest<%s>()", t);
    case RK_ARGMAX: return arena_printf(g->a, "%s{tc_lowest<%s>(), -1}", t, vt);
    default: return arena_printf(g->a, "%s{tc_highest<%s>(), -1}", t, vt);
    }
}

/* All-zero bits of r's accumulator type (the workspace's resting state):
 * T{} is not C++ when T is two words (long long{}) */
const char *cg_acc_zero(cg *g, const lnode *r)
{
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return arena_printf(g->a, "%s{}", cg_acc_type(g, r));
    return arena_printf(g->a, "(%s)0", cg_acc_type(g, r));
}

/* r's accumulator: accN, or accN[sub] when a thread has several columns */
static const char *acc_name(cg *g, const lnode *r)
{
    if (g->acc_at)
        return arena_printf(g->a, "acc%d[%s]", cg_rno(g, r), g->acc_at);
    return arena_printf(g->a, "acc%d", cg_rno(g, r));
}

/* Declarations of this pass's accumulators, and accumulate statements into
 * the body (the value read at the reduction's input index; pos names the
 * flat position in the reduced axes, for arg reductions).  shift: element
 * `shift` of a vector along the last axis; when that axis is reduced (rows,
 * full: pos_shift) the element's position is pos + shift, but when it is
 * kept (a thread's columns) every element of the vector is at pos. */
void cg_accumulate_at(cg *g, int phase, cg_block *decl, int ind, const char *pos, int shift,
                          bool pos_shift)
{
    for (int j = 0; j < g->k->nreds; j++) {
        const lnode *r = g->k->reds[j];
        if (g->ks->phase[j] != phase || j + 1 == g->ks->online_max)
            continue; /* the online pair's max is its sum's accumulator's m */
        bool online = j + 1 == g->ks->online_sum;
        const char *at = online ? "tc_ms" : cg_acc_type(g, r);
        const char *a = acc_name(g, r);
        if (decl)
            cg_block_add(decl, g->a, ind,
                         arena_printf(g->a, "%s %s = %s;", at, a, online ? "tc_ms_init()" : cg_acc_init(g, r)));
        if (online) /* the pair reads the max's x (sched_online.c: the sum's is exp(x - shift)) */
            r = g->k->reds[g->ks->online_max - 1];
        if (g->k->partials) {
            /* column partials (fuse.h): the sums of blocks of rows, one
             * row of partials each, at position pos (a block) and column
             * row of the split or plain columns loop */
            int pb = g->bufs->part_of[r->id];
            cg_use_buf(g, pb);
            cg_line(g, T_ELEM, r, "%s = %s()(%s, %s[(idx_t)%s * rows + row]);", a, cg_red_op(r), a,
                    cg_buf_name(g, pb), pos);
            continue;
        }
        const tc_dim *const *idx = r->in[0].idx;
        const tc_dim *sh[TC_MAX_RANK];
        if (shift) { /* element `shift` of a vector along the last axis */
            const char *vn = g->l->varnames[g->v.last];
            const tc_dim *v = dim_add(g->c, g->l->vars[g->v.last], dim_const(g->c, shift));
            for (int k = 0; k < r->in[0].src->rank; k++)
                sh[k] = dim_subst(g->c, idx[k], 1, &vn, &v);
            idx = sh;
        }
        const char *v = cg_value(g, r->in[0].src, idx);
        /* a predicated element (g->eguard): acc = in ? op(acc, v) : acc.  A
         * f32 max or min of a row in registers takes it unpredicated: past
         * the row's end an item reads the row's first element (rows.c, the
         * pipe's copies too), which the row's max holds already (ptxas
         * branched around each pair of FMNMX, three instructions more a
         * pair; TENSORC_MAX_NAN=0 keeps the guard) */
        const char *eg = g->eguard;
        if (eg && g->pr.items && g->f->knobs.max_nan != 0 && r->dtype == TC_F32 && !g->k->partials &&
            (r->a.red.kind == RK_MAX || r->a.red.kind == RK_MIN))
            eg = NULL;
        const char *guard = eg ? eg : "", *guard_q = eg ? " ? " : "";
        const char *guard_else = eg ? arena_printf(g->a, " : %s", a) : "";
        if (online && g->v.onvec && g->eguard && g->v.n <= CG_ONVEC_MAX) {
            /* a whole vector, all in the row or all past its end (the
             * length is a multiple of it): one update of the pair for the
             * thread's vector once its last element is here (helpers.cuh) */
            g->v.onx[shift] = v;
            if (shift + 1 == g->v.n) {
                tc_buf x;
                buf_init(&x, g->a);
                for (int e = 0; e < g->v.n; e++)
                    buf_printf(&x, "%s%s", e ? ", " : "", g->v.onx[e]);
                const char *xs = arena_printf(g->a, "tc_x%d", cg_rno(g, r));
                cg_line(g, T_ELEM, r, "const float %s[%d] = {%s};", xs, g->v.n, buf_str(&x));
                cg_line(g, T_ELEM, r, "%s = tc_online_addv(%s, %s, %s);", a, a, xs, g->eguard);
            }
        } else if (online) {
            /* past the row's end the element is -inf, which leaves the pair as
             * it is: no select around the exp (ptxas branched around it, and
             * the chunk's loads were no longer in flight together) */
            if (g->eguard)
                cg_line(g, T_ELEM, r, "%s = tc_online_add(%s, %s ? %s : tc_lowest<float>());", a, a, g->eguard, v);
            else
                cg_line(g, T_ELEM, r, "%s = tc_online_add(%s, %s);", a, a, v);
        } else if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN) {
            const char *vt = acc_dtype(r) == TC_BOOL ? "int" : cg_type(acc_dtype(r));
            cg_line(g, T_ELEM, r, "%s = %s%s%s()(%s, %s{(%s)%s, (long long)(%s)})%s;", a, guard, guard_q,
                    cg_red_op(r), a, at, vt, v,
                    shift && pos_shift ? arena_printf(g->a, "%s + %d", pos, shift) : pos, guard_else);
        } else {
            cg_line(g, T_ELEM, r, "%s = %s%s%s()(%s, %s)%s;", a, guard, guard_q, cg_red_op(r), a,
                    cg_convert(g, v, r->in[0].src->dtype, acc_dtype(r) == TC_BOOL ? TC_I32 : r->dtype),
                    guard_else);
        }
    }
}

/* Declarations of this pass's accumulators, and accumulate statements into
 * the body (the value read at the reduction's input index; pos names the
 * flat position in the reduced axes, for arg reductions). */
void cg_accumulate(cg *g, int phase, cg_block *decl, int ind, const char *pos)
{
    cg_accumulate_at(g, phase, decl, ind, pos, 0, false);
}

/* r's result after its combine, named for the rest of the kernel */
static void result(cg *g, const lnode *r, tc_buf *o, int ind)
{
    const char *a = acc_name(g, r);
    const char *res = arena_printf(g->a, "r%d", cg_rno(g, r));
    bool arg = r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN;
    bool lowp = (r->dtype == TC_F16 || r->dtype == TC_BF16) && !arg && r->a.red.kind != RK_MAX &&
                r->a.red.kind != RK_MIN; /* a max of bf16 values is one already */
    if (lowp)
        buf_printf(o, "%*sconst float %s = tc_round_%s(%s);\n", ind, "", res, dtype_name(r->dtype), a);
    else
        buf_printf(o, "%*sconst %s %s = %s%s;\n", ind, "", cg_type(r->dtype), res, a, arg ? ".i" : "");
    g->acc[r->id] = res;
}

/* a = combine(a, op(), (at *)tc_smem[, g->combine_args]): one value's
 * combine across the block (and cluster) */
static void combine_one(cg *g, tc_buf *o, int ind, const char *combine, const char *a, const char *op,
                        const char *at)
{
    buf_printf(o, "%*s%s = %s(%s, %s(), (%s *)tc_smem%s%s);\n", ind, "", a, combine, a, op, at,
               g->combine_args ? ", " : "", g->combine_args ? g->combine_args : "");
}

/* The online pair's results (sched_online.c): the max is the pair's m, the
 * sum the pair's s, or the two passes' value where m is not finite; a names
 * the pair, c the shift the sum subtracts */
static void pair_result(cg *g, const lnode *M, const lnode *S, const lnode *c, const char *a, tc_buf *o, int ind)
{
    const char *rm = arena_printf(g->a, "r%d", cg_rno(g, M)), *rs = arena_printf(g->a, "r%d", cg_rno(g, S));
    const char *shift = c == M ? rm : arena_printf(g->a, "(float)%.17g", c->in[1].src->a.cnst.f);
    buf_printf(o, "%*sconst float %s = %s.m;\n", ind, "", rm, a);
    buf_printf(o, "%*sconst float %s = tc_online_sum(%s, %s, (long long)len);\n", ind, "", rs, a, shift);
    g->acc[M->id] = rm;
    g->acc[S->id] = rs;
}

static void online_result(cg *g, const lnode *r, tc_buf *o, int ind)
{
    pair_result(g, g->k->reds[g->ks->online_max - 1], r, g->ks->online_shift, acc_name(g, r), o, ind);
}

/* TENSORC_ROWS_PAIR (sched_online.c, sched_rpair): after the max's pass
 * over a thread's registers, no combine: the thread's own max, 0 where it
 * is not finite (an -inf thread's terms are then 0, and a +inf or NaN one
 * makes the row's max so, whose sum tc_online_sum replaces), is the shift
 * the sum's pass subtracts, so that pass's sum is the thread's pair's s */
void cg_pair_shift(cg *g, tc_buf *o, int ind)
{
    const lnode *M = g->k->reds[g->ks->rpair_max - 1];
    const char *a = acc_name(g, M), *c = arena_printf(g->a, "tcm%d", cg_rno(g, M));
    buf_printf(o, "%*sconst float %s = fabsf(%s) <= 3.402823466e38f ? %s : 0.0f; /* this thread's max: "
                  "its sum's shift */\n", ind, "", c, a, a);
    g->acc[M->id] = c;
}

/* ... and after the sum's pass: the thread's (max, sum) combined once over
 * the block (and cluster) by tc_op_online, the row's max and sum named */
void cg_finish_pair(cg *g, tc_buf *o, int ind, const char *combine)
{
    const lnode *M = g->k->reds[g->ks->rpair_max - 1], *S = g->k->reds[g->ks->rpair_sum - 1];
    const char *a = arena_printf(g->a, "tcp%d", cg_rno(g, S));
    buf_printf(o, "%*stc_ms %s = tc_ms{%s, %s}; /* the thread's max and sum of exp(x - max) */\n", ind, "", a,
               acc_name(g, M), acc_name(g, S));
    combine_one(g, o, ind, combine, a, "tc_op_online", "tc_ms");
    pair_result(g, M, S, g->ks->rpair_shift, a, o, ind);
    if (!g->pr.nkeep)
        return;
    /* the kept exp(x - m) (keep.c) times exp(m - c), c the row's shift: an
     * -inf thread's 0s stay 0, a row whose max is not finite is NaN (its
     * sum is) */
    const lnode *c = g->ks->rpair_shift;
    const char *rm = g->acc[M->id];
    const char *rc = c == M ? rm : arena_printf(g->a, "(isinf(%s) ? (float)%.17g : %s)", rm, c->in[1].src->a.cnst.f, rm);
    g->pr.kscale = arena_printf(g->a, "tcf%d", cg_rno(g, S));
    buf_printf(o, "%*sconst float %s = expf(%s - %s); /* the kept exps' rescale to the row's max */\n", ind, "",
               g->pr.kscale, acc_name(g, M), rc);
}

/* r's combine operator and its result's name: the online pair's own for
 * `on`, the sum of the pair (NULL: none) */
static const char *pass_op(const lnode *r, const lnode *on)
{
    return r == on ? "tc_op_online" : cg_red_op(r);
}

static void pass_result(cg *g, const lnode *r, const lnode *on, tc_buf *o, int ind)
{
    if (r == on)
        online_result(g, r, o, ind);
    else
        result(g, r, o, ind);
}

/* After the pass's loop: combine across threads (how: `combine`, a helper
 * name; g->combine2, when set, combines two reductions at once, one set of
 * barriers for both) and name each result for the rest of the kernel. */
void cg_finish_pass(cg *g, int phase, tc_buf *o, int ind, const char *combine)
{
    const lnode **mine = ARENA_ARRAY(g->a, const lnode *, g->k->nreds > 0 ? g->k->nreds : 1);
    int n = 0;
    for (int j = 0; j < g->k->nreds; j++)
        if (g->ks->phase[j] == phase && j + 1 != g->ks->online_max)
            mine[n++] = g->k->reds[j];
    const char *extra = g->combine_args ? g->combine_args : "";
    const char *comma = g->combine_args ? ", " : "";
    const lnode *on = g->ks->online_sum ? g->k->reds[g->ks->online_sum - 1] : NULL;
    for (int i = 0; i < n; i++) {
        const lnode *r = mine[i];
        const char *at = r == on ? "tc_ms" : cg_acc_type(g, r);
        const char *a = acc_name(g, r);
        const char *op = pass_op(r, on);
        if (combine && g->combine2 && i + 1 < n) {
            const lnode *r2 = mine[i + 1];
            buf_printf(o, "%*s%s(%s, %s(), %s, %s(), (void *)tc_smem%s%s);\n", ind, "", g->combine2, a,
                       op, acc_name(g, r2), pass_op(r2, on), comma, extra);
            pass_result(g, r, on, o, ind);
            pass_result(g, r2, on, o, ind);
            i++;
            continue;
        }
        if (combine)
            combine_one(g, o, ind, combine, a, op, at);
        pass_result(g, r, on, o, ind);
    }
}
