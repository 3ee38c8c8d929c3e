/* logform.c - a `where` between two logarithms, one series for both.
 *
 * With TENSORC_FAST_MATH on, f32 log, log1p and softplus end in the same
 * series, tc_log1p_mid (helpers.cuh, "Math" in docs/internals.md).  A
 * `where` computes both of its sides at every element (a select, not a
 * branch), so where(c, log(x), -softplus(-x)) ran the series twice.  When
 * each side is one of those functions, possibly negated, and read by this
 * `where` alone, the sides are made in split form (tc_lform: a + s
 * log1p_mid(t), negated or not), the parts selected, and the series run
 * once on the selected argument: the same bits at every element, special
 * values included (helpers.cuh says why).  The minGRU forward's step: 159
 * -> 144 SASS instructions (sm_90); its gradient makes the same `where`
 * in each of its two forward walks.
 *
 * And a log whose argument is at least 2^-126 or NaN by construction
 * (relu(h) + 0.5: normal_pos) takes lg2.approx.ftz, which needs no
 * rescaling for subnormal inputs (tc_logf_n, tc_log_lf_n: 3 instructions
 * fewer, the same bits).
 *
 * And the other way round: exp of a logcumsumexp carried as its pair
 * (cg_expform, no log at all), and whether any reader takes the pair's
 * value instead (cg_lse_value_read: then its step keeps far-below terms
 * precise, scan.cuh's tc_lse_add).
 */
#include "codegen/cg.h"

/* n is log, log1p or softplus of an f32, or a negation of one, read only by
 * its one reader (nuses counts readers in every kernel and outputs) */
static bool splits(const lnode *n, int depth)
{
    if (n->kind != LK_POINTWISE || n->nuses != 1 || n->output >= 0 || n->dtype != TC_F32 ||
        n->opdt != TC_F32 || depth > 4)
        return false;
    switch (n->op) {
    case OP_log:
    case OP_log1p:
    case OP_softplus: return true;
    case OP_neg: return splits(n->in[0].src, depth + 1);
    default: return false;
    }
}

/* n is never below 0 at any element (NaN aside): relu, abs, exp,
 * sigmoid, softplus, x * x, sums, products and selects of such values, a
 * constant at least 0 */
static bool nonneg(const lnode *n, int depth)
{
    if (n->kind == LK_CONST)
        return n->a.cnst.f >= 0 && !(n->dtype == TC_I32 || n->dtype == TC_I64 || n->dtype == TC_BOOL);
    if (n->kind != LK_POINTWISE || n->dtype != TC_F32 || depth > 8)
        return false;
    switch (n->op) {
    case OP_relu:
    case OP_abs:
    case OP_exp:
    case OP_sigmoid:
    case OP_softplus: return true;
    case OP_add: return nonneg(n->in[0].src, depth + 1) && nonneg(n->in[1].src, depth + 1);
    case OP_mul:
        return n->in[0].src == n->in[1].src ||
               (nonneg(n->in[0].src, depth + 1) && nonneg(n->in[1].src, depth + 1));
    case OP_where: return nonneg(n->in[1].src, depth + 1) && nonneg(n->in[2].src, depth + 1);
    default: return false;
    }
}

/* n is at least 2^-126 (the smallest normal f32) at every element, or NaN:
 * a sum of a value never below 0 and such a constant (rounding to nearest
 * never goes below the constant), or a select of two such */
static bool normal_pos(const lnode *n, int depth)
{
    if (n->kind == LK_CONST)
        return (float)n->a.cnst.f >= 0x1p-126f;
    if (n->kind != LK_POINTWISE || n->dtype != TC_F32 || depth > 8)
        return false;
    const lnode *a = n->in[0].src, *b = n->nin > 1 ? n->in[1].src : NULL;
    switch (n->op) {
    case OP_add:
        return (normal_pos(a, depth + 1) && nonneg(b, depth + 1)) ||
               (nonneg(a, depth + 1) && normal_pos(b, depth + 1));
    case OP_where: return normal_pos(b, depth + 1) && normal_pos(n->in[2].src, depth + 1);
    default: return false;
    }
}

static const char *split(cg *g, const lnode *n, const tc_dim *const *idx)
{
    const tc_dim *ci[TC_MAX_RANK];
    lir_compose(g->l, &n->in[0], idx, n->rank, ci);
    const lnode *x = n->in[0].src;
    if (n->op == OP_neg)
        return arena_printf(g->a, "tc_neg_lf(%s)", split(g, x, ci));
    const char *v = cg_convert(g, cg_value(g, x, ci), x->dtype, TC_F32);
    const char *f = n->op == OP_log1p ? "tc_log1p_lf" : n->op == OP_softplus ? "tc_softplus_lf"
                    : normal_pos(x, 0)     ? "tc_log_lf_n"
                                           : "tc_log_lf";
    return arena_printf(g->a, "%s(%s)", f, v);
}

const char *cg_logform(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if (n->kind != LK_POINTWISE || n->opdt != TC_F32 || n->dtype != TC_F32 || g->f->knobs.fast_math == 0 ||
        (g->ks && g->ks->compact && g->libcalls))
        return NULL;
    if (n->op == OP_log && normal_pos(n->in[0].src, 0)) { /* no subnormal argument: lg2.approx.ftz */
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[0], idx, n->rank, ci);
        const lnode *x = n->in[0].src;
        return arena_printf(g->a, "tc_logf_n(%s)", cg_convert(g, cg_value(g, x, ci), x->dtype, TC_F32));
    }
    if (n->op != OP_where || !splits(n->in[1].src, 0) || !splits(n->in[2].src, 0))
        return NULL;
    const tc_dim *ci[3][TC_MAX_RANK];
    for (int i = 0; i < 3; i++)
        lir_compose(g->l, &n->in[i], idx, n->rank, ci[i]);
    const char *c = cg_convert(g, cg_value(g, n->in[0].src, ci[0]), n->in[0].src->dtype, TC_BOOL);
    const char *a = split(g, n->in[1].src, ci[1]), *b = split(g, n->in[2].src, ci[2]);
    return arena_printf(g->a, "tc_lf_value(tc_where_lf(%s, %s, %s))", c, a, b);
}

/* y, read at ci, is a logcumsumexp of this kernel carried as its pair
 * (scan.c's lse_pair): the carry's name, else NULL */
static const char *lse_at(cg *g, const lnode *y, const tc_dim *const *ci)
{
    if (y->kind != LK_SCAN || !g->lse[y->id] || g->f->kernel_of[y->id] != g->k->id ||
        (g->elemvars && !lir_is_identity(g->l, ci, y->rank)))
        return NULL;
    return g->lse[y->id];
}

/* exp(v + y), exp(y + v), exp(y - v) or exp(y) of such a y: tc_lse_exp,
 * exp(v + m) (1 + s) (scan.cuh; -v for y - v, the same sum), so that the walk
 * takes no log where its value is read only in linear space (the minGRU's
 * h = exp(a + s) + ...) */
const char *cg_expform(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if (n->kind != LK_POINTWISE || n->op != OP_exp || n->dtype != TC_F32 || n->opdt != TC_F32)
        return NULL;
    const tc_dim *ci[TC_MAX_RANK];
    lir_compose(g->l, &n->in[0], idx, n->rank, ci);
    const lnode *x = n->in[0].src;
    const char *c = lse_at(g, x, ci);
    if (c)
        return arena_printf(g->a, "tc_lse_exp(%s, -0.0f)", c); /* -0 + m is m */
    if (x->kind != LK_POINTWISE || (x->op != OP_add && x->op != OP_sub) || x->dtype != TC_F32 ||
        x->opdt != TC_F32)
        return NULL;
    const tc_dim *ai[2][TC_MAX_RANK];
    for (int i = 0; i < 2; i++)
        lir_compose(g->l, &x->in[i], ci, x->rank, ai[i]);
    for (int i = 0; i < (x->op == OP_sub ? 1 : 2); i++) {
        const lnode *y = x->in[i].src, *v = x->in[1 - i].src;
        if (!(c = lse_at(g, y, ai[i])))
            continue;
        const char *vs = cg_convert(g, cg_value(g, v, ai[1 - i]), v->dtype, TC_F32);
        return arena_printf(g->a, x->op == OP_sub ? "tc_lse_exp(%s, -(%s))" : "tc_lse_exp(%s, %s)", c, vs);
    }
    return NULL;
}

/* Whether an LSE carry's value may be read (tc_lse_value; scan.c), which then
 * takes tc_lse_add's compensated exp (scan.cuh: a term far below the max
 * keeps its precision where the value is near 0); false only where every
 * reader in the kernel is an f32 exp of it, or of it plus or minus another
 * value (logform.c's cg_expform: exp(v + m) (1 + s), against the max's own
 * 1), none of them stored.  Conservative: a pair's first walk stores its
 * value at the checkpoints. */
static bool exp32(const lnode *u)
{
    return u->kind == LK_POINTWISE && u->op == OP_exp && u->dtype == TC_F32 && u->opdt == TC_F32;
}

static bool stored(const fkernel *k, const lnode *n)
{
    for (int i = 0; i < k->nstores; i++)
        if (k->stores[i] == n)
            return true;
    return false;
}

/* every reader of n among the kernel's nodes passes ok(reader, n) */
static bool readers_ok(const fkernel *k, const lnode *n, bool (*ok)(const fkernel *, const lnode *, const lnode *))
{
    lnode *const *arr[3] = {k->inl, k->stores, k->reds};
    int cnt[3] = {k->ninl, k->nstores, k->nreds};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < cnt[a]; i++)
            for (int j = 0; j < arr[a][i]->nin; j++)
                if (arr[a][i]->in[j].src == n && !ok(k, arr[a][i], n))
                    return false;
    return true;
}

static bool exp_of(const fkernel *k, const lnode *u, const lnode *n)
{
    (void)k, (void)n;
    return exp32(u);
}

static bool exp_reader(const fkernel *k, const lnode *u, const lnode *n)
{
    if (exp32(u))
        return true;
    if (u->kind != LK_POINTWISE || u->dtype != TC_F32 || u->opdt != TC_F32 || u->nin != 2 ||
        u->in[0].src == u->in[1].src || stored(k, u))
        return false;
    if (u->op != OP_add && !(u->op == OP_sub && u->in[0].src == n))
        return false;
    return readers_ok(k, u, exp_of);
}

bool cg_lse_value_read(const cg *g, const lnode *n)
{
    if (g->ks->ckpt && !g->ck.cpre)
        return true;
    return stored(g->k, n) || !readers_ok(g->k, n, exp_reader);
}
