/* grad_rules.c - the backward rule of each op family (reverse mode).
 *
 * Each rule gets the forward node n, its adjoint g (n's shape and dtype)
 * and the replayed forward values (P(x)), and adds each input's share with
 * grad_accum, which sums away broadcasting and casts to the input's dtype.
 * Conventions follow PyTorch's derivatives.yaml where there is a choice:
 *   relu, abs, sign at 0: gradient 0 (abs: sign(0) = 0); floor, ceil,
 *   round, sign: 0 everywhere; clamp: the gradient passes where
 *   lo <= x <= hi (both ends included); max(a, b) / min(a, b) with a == b:
 *   half to each; max/min reductions (amax/amin): split evenly among tied
 *   elements; pow: no exponent gradient where the base is 0 and the
 *   exponent >= 0; comparisons, logic, isnan, isinf, argmax/argmin and
 *   integer values: no gradient.
 *   prod and cumprod: exact where inputs are 0 (the products of the
 *   others, not y / x), as PyTorch.
 *   cummax/cummin: to the element holding the running value, the latest
 *   one on ties (PyTorch's index); linear in the axis length (a scan of
 *   the marks' indices and a gather).
 */
#include "grad.h"

#include <math.h>
#include <string.h>

/* not every libc's math.h has PI and friends in strict C11 */
#define LN2 0.69314718055994530942
#define TWO_OVER_SQRTPI 1.12837916709551257390
#define SQRT1_2 0.70710678118654752440
#define PI 3.14159265358979323846

#define P(x) (c->map[(x)->id])

static gnode *k(grad_ctx *c, double v, tc_loc loc) { return node_const(c->b, TC_F64, v, true, loc); }

static gnode *un(grad_ctx *c, op_id op, gnode *a, tc_loc loc)
{
    gnode *in[1] = {a};
    return node_pointwise(c->b, op, in, 1, loc);
}

static gnode *bin(grad_ctx *c, op_id op, gnode *a, gnode *b, tc_loc loc)
{
    gnode *in[2] = {a, b};
    return node_pointwise(c->b, op, in, 2, loc);
}

static gnode *where(grad_ctx *c, gnode *cond, gnode *a, gnode *b, tc_loc loc)
{
    gnode *in[3] = {cond, a, b};
    return node_pointwise(c->b, OP_where, in, 3, loc);
}

static bool is_one(const tc_dim *d)
{
    int64_t v;
    return dim_is_const(d, &v) && v == 1;
}

/* v summed down to shape (rank, shape): leading extra dims and dims
 * stretched from 1 (NumPy broadcasting, backwards). */
static gnode *sum_to(grad_ctx *c, gnode *v, int rank, const tc_dim *const *shape, tc_loc loc)
{
    if (v->rank == rank) {
        bool same = true;
        for (int i = 0; i < rank; i++)
            same = same && dim_eq(v->shape[i], shape[i]);
        if (same)
            return v;
    }
    bool axes[TC_MAX_RANK] = {false};
    bool any = false;
    int lead = v->rank - rank;
    for (int i = 0; i < v->rank; i++) {
        int q = i - lead;
        if (q < 0 || (is_one(shape[q]) && !is_one(v->shape[i]))) {
            axes[i] = true;
            any = true;
        }
    }
    if (any)
        v = node_reduce(c->b, OP_sum, v, axes, true, 0, loc);
    return view_reshape(c->b, v, rank, shape, loc);
}

void grad_accum(grad_ctx *c, const gnode *n, gnode *v)
{
    if (!dtype_is_float(n->dtype) || n->op == OP_const || n->op == OP_dimval)
        return;
    v = sum_to(c, v, n->rank, n->shape, n->loc);
    v = node_cast(c->b, v, n->dtype, false, n->loc);
    gnode **a = &c->adj[n->id];
    *a = *a ? bin(c, OP_add, *a, v, n->loc) : v;
}

gnode *grad_zeros(grad_ctx *c, const gnode *n, tc_loc loc)
{
    gnode *z = node_const(c->b, n->dtype, 0.0, false, loc);
    return n->rank ? view_broadcast(c->b, z, n->rank, n->shape, loc) : z;
}

gnode *grad_materialize(grad_ctx *c, gnode *n, tc_loc loc)
{
    if (n->op == OP_const && n->rank == 0)
        return n;
    return node_copy(c->b, node_concrete(c->b, n, loc), loc);
}

/* ---- pointwise ---- */

static void unary(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    gnode *x = P(n->in[0]), *y = P(n);
    gnode *d; /* dy/dx, or the whole share when set below */
    switch (n->op) {
    case OP_neg: grad_accum(c, n->in[0], un(c, OP_neg, g, l)); return;
    case OP_abs: d = un(c, OP_sign, x, l); break;
    case OP_exp: d = y; break;
    case OP_exp2: d = bin(c, OP_mul, y, k(c, LN2, l), l); break;
    case OP_log: grad_accum(c, n->in[0], bin(c, OP_div, g, x, l)); return;
    case OP_log2:
        grad_accum(c, n->in[0], bin(c, OP_div, g, bin(c, OP_mul, x, k(c, LN2, l), l), l));
        return;
    case OP_log1p:
        grad_accum(c, n->in[0], bin(c, OP_div, g, bin(c, OP_add, x, k(c, 1, l), l), l));
        return;
    case OP_sqrt:
        grad_accum(c, n->in[0], bin(c, OP_div, bin(c, OP_mul, g, k(c, 0.5, l), l), y, l));
        return;
    case OP_rsqrt: /* -0.5 * x^-1.5 = -0.5 * y^3 */
        d = bin(c, OP_mul, k(c, -0.5, l), bin(c, OP_mul, y, bin(c, OP_mul, y, y, l), l), l);
        break;
    case OP_sin: d = un(c, OP_cos, x, l); break;
    case OP_cos: d = un(c, OP_neg, un(c, OP_sin, x, l), l); break;
    case OP_tanh: d = bin(c, OP_sub, k(c, 1, l), bin(c, OP_mul, y, y, l), l); break;
    case OP_erf: /* 2/sqrt(pi) exp(-x^2) */
        d = bin(c, OP_mul, k(c, TWO_OVER_SQRTPI, l),
                un(c, OP_exp, un(c, OP_neg, bin(c, OP_mul, x, x, l), l), l), l);
        break;
    case OP_sigmoid: d = bin(c, OP_mul, y, bin(c, OP_sub, k(c, 1, l), y, l), l); break;
    case OP_relu:
        grad_accum(c, n->in[0], where(c, bin(c, OP_gt, x, k(c, 0, l), l), g, k(c, 0, l), l));
        return;
    case OP_gelu: { /* Phi(x) + x phi(x) */
        gnode *cdf = bin(c, OP_mul, k(c, 0.5, l),
                         bin(c, OP_add, k(c, 1, l),
                             un(c, OP_erf, bin(c, OP_mul, x, k(c, SQRT1_2, l), l), l), l), l);
        gnode *pdf = bin(c, OP_mul, k(c, 0.5 * TWO_OVER_SQRTPI * SQRT1_2, l),
                         un(c, OP_exp, bin(c, OP_mul, k(c, -0.5, l), bin(c, OP_mul, x, x, l), l), l),
                         l);
        d = bin(c, OP_add, cdf, bin(c, OP_mul, x, pdf, l), l);
        break;
    }
    case OP_gelu_tanh: { /* 0.5(1+t) + 0.5 x (1-t^2) s (1 + 3 a x^2), t = tanh(s(x + a x^3)) */
        double s = sqrt(2.0 / PI), a = 0.044715;
        gnode *x2 = bin(c, OP_mul, x, x, l);
        gnode *inner = bin(c, OP_mul, k(c, s, l),
                           bin(c, OP_add, x, bin(c, OP_mul, k(c, a, l), bin(c, OP_mul, x2, x, l), l), l),
                           l);
        gnode *t = un(c, OP_tanh, inner, l);
        gnode *dt = bin(c, OP_mul, bin(c, OP_sub, k(c, 1, l), bin(c, OP_mul, t, t, l), l),
                        bin(c, OP_mul, k(c, s, l),
                            bin(c, OP_add, k(c, 1, l), bin(c, OP_mul, k(c, 3 * a, l), x2, l), l), l),
                        l);
        d = bin(c, OP_add, bin(c, OP_mul, k(c, 0.5, l), bin(c, OP_add, k(c, 1, l), t, l), l),
                bin(c, OP_mul, bin(c, OP_mul, k(c, 0.5, l), x, l), dt, l), l);
        break;
    }
    case OP_silu: { /* s (1 + x (1 - s)) */
        gnode *s = un(c, OP_sigmoid, x, l);
        d = bin(c, OP_mul, s,
                bin(c, OP_add, k(c, 1, l), bin(c, OP_mul, x, bin(c, OP_sub, k(c, 1, l), s, l), l), l),
                l);
        break;
    }
    case OP_softplus: /* linear above the threshold 20, as the forward */
        d = where(c, bin(c, OP_gt, x, k(c, 20, l), l), k(c, 1, l), un(c, OP_sigmoid, x, l), l);
        break;
    case OP_floor: case OP_ceil: case OP_round: case OP_sign:
        return;
    case OP_reciprocal: d = un(c, OP_neg, bin(c, OP_mul, y, y, l), l); break;
    default:
        return; /* isnan, isinf, not: bool results never get an adjoint */
    }
    grad_accum(c, n->in[0], bin(c, OP_mul, g, d, l));
}

static void binary(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    gnode *a = P(n->in[0]), *b = P(n->in[1]), *y = P(n);
    const gnode *na = n->in[0], *nb = n->in[1];
    switch (n->op) {
    case OP_add:
        grad_accum(c, na, g);
        grad_accum(c, nb, g);
        return;
    case OP_sub:
        grad_accum(c, na, g);
        grad_accum(c, nb, un(c, OP_neg, g, l));
        return;
    case OP_mul:
        grad_accum(c, na, bin(c, OP_mul, g, b, l));
        grad_accum(c, nb, bin(c, OP_mul, g, a, l));
        return;
    case OP_div:
        grad_accum(c, na, bin(c, OP_div, g, b, l));
        grad_accum(c, nb, un(c, OP_neg, bin(c, OP_div, bin(c, OP_mul, g, y, l), b, l), l));
        return;
    case OP_mod: /* a - floor(a / b) * b */
        grad_accum(c, na, g);
        grad_accum(c, nb, bin(c, OP_mul, un(c, OP_neg, g, l),
                              un(c, OP_floor, bin(c, OP_div, a, b, l), l), l));
        return;
    case OP_pow: {
        gnode *bm1 = bin(c, OP_sub, b, k(c, 1, l), l);
        grad_accum(c, na, bin(c, OP_mul, g, bin(c, OP_mul, b, bin(c, OP_pow, a, bm1, l), l), l));
        if (dtype_is_float(nb->dtype) && nb->op != OP_const) {
            gnode *zero_base = bin(c, OP_and, bin(c, OP_eq, a, k(c, 0, l), l),
                                   bin(c, OP_ge, b, k(c, 0, l), l), l);
            gnode *d = where(c, zero_base, k(c, 0, l), bin(c, OP_mul, y, un(c, OP_log, a, l), l), l);
            grad_accum(c, nb, bin(c, OP_mul, g, d, l));
        }
        return;
    }
    case OP_max:
    case OP_min: {
        gnode *half = bin(c, OP_mul, g, k(c, 0.5, l), l);
        gnode *zero = k(c, 0, l);
        op_id win = n->op == OP_max ? OP_gt : OP_lt;
        gnode *eq = bin(c, OP_eq, a, b, l);
        grad_accum(c, na, where(c, eq, half, where(c, bin(c, win, a, b, l), g, zero, l), l));
        grad_accum(c, nb, where(c, eq, half, where(c, bin(c, win, b, a, l), g, zero, l), l));
        return;
    }
    case OP_atan2: { /* d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2) */
        gnode *r2 = bin(c, OP_add, bin(c, OP_mul, a, a, l), bin(c, OP_mul, b, b, l), l);
        gnode *gr = bin(c, OP_div, g, r2, l);
        grad_accum(c, na, bin(c, OP_mul, gr, b, l));
        grad_accum(c, nb, un(c, OP_neg, bin(c, OP_mul, gr, a, l), l));
        return;
    }
    default:
        return; /* comparisons and logic: bool */
    }
}

static void ternary(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    gnode *zero = k(c, 0, l);
    if (n->op == OP_where) {
        gnode *cond = P(n->in[0]);
        grad_accum(c, n->in[1], where(c, cond, g, zero, l));
        grad_accum(c, n->in[2], where(c, cond, zero, g, l));
        return;
    }
    /* clamp(x, lo, hi) */
    gnode *x = P(n->in[0]), *lo = P(n->in[1]), *hi = P(n->in[2]);
    gnode *below = bin(c, OP_lt, x, lo, l), *above = bin(c, OP_gt, x, hi, l);
    gnode *inside = bin(c, OP_and, un(c, OP_not, below, l), un(c, OP_not, above, l), l);
    grad_accum(c, n->in[0], where(c, inside, g, zero, l));
    grad_accum(c, n->in[1], where(c, below, g, zero, l));
    grad_accum(c, n->in[2], where(c, bin(c, OP_and, above, un(c, OP_not, below, l), l), g, zero, l));
}

/* ---- reductions ---- */

/* v (the reduction r's shape) viewed back over r's input shape. */
static gnode *expand(grad_ctx *c, const gnode *r, gnode *v)
{
    const gnode *x = r->in[0];
    tc_loc l = r->loc;
    if (!r->a.red.keepdim) {
        const tc_dim *shape[TC_MAX_RANK];
        for (int i = 0, j = 0; i < x->rank; i++)
            shape[i] = r->a.red.naxes && j < r->a.red.naxes && r->a.red.axes[j] == i
                           ? (j++, dim_const(c->b->dc, 1))
                           : x->shape[i];
        v = view_reshape(c->b, node_concrete(c->b, v, l), x->rank, shape, l);
    }
    return view_broadcast(c->b, v, x->rank, x->shape, l);
}

static const tc_dim *count(grad_ctx *c, const gnode *r)
{
    const tc_dim *n = dim_const(c->b->dc, 1);
    for (int i = 0; i < r->a.red.naxes; i++)
        n = dim_mul(c->b->dc, n, r->in[0]->shape[r->a.red.axes[i]]);
    return n;
}

static void reduce(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    const gnode *nx = n->in[0];
    gnode *x = P(nx), *y = P(n);
    switch (n->op) {
    case OP_sum: grad_accum(c, nx, expand(c, n, g)); return;
    case OP_mean:
        grad_accum(c, nx, expand(c, n, bin(c, OP_div, g, node_dimval(c->b, count(c, n), l), l)));
        return;
    case OP_rmax:
    case OP_rmin: {
        gnode *hit = bin(c, OP_eq, x, expand(c, n, y), l);
        gnode *m = node_cast(c->b, hit, n->dtype, false, l);
        bool axes[TC_MAX_RANK] = {false};
        for (int i = 0; i < n->a.red.naxes; i++)
            axes[n->a.red.axes[i]] = true;
        gnode *cnt = node_reduce(c->b, OP_sum, m, axes, n->a.red.keepdim, 0, l);
        grad_accum(c, nx, bin(c, OP_mul, m, expand(c, n, bin(c, OP_div, g, cnt, l)), l));
        return;
    }
    case OP_prod: {
        /* prod of the others, exact with zeros (PyTorch's rule): with no
         * zero it is y / x; with one zero, the product of the nonzeros at
         * the zero and 0 elsewhere; with more, 0. */
        bool axes[TC_MAX_RANK] = {false};
        for (int i = 0; i < n->a.red.naxes; i++)
            axes[n->a.red.axes[i]] = true;
        gnode *zero = k(c, 0, l), *one = k(c, 1, l);
        gnode *z = bin(c, OP_eq, x, zero, l);
        gnode *cnt = expand(c, n, node_reduce(c->b, OP_sum, z, axes, n->a.red.keepdim, 0, l));
        gnode *nz = expand(c, n, node_reduce(c->b, OP_prod, where(c, z, one, x, l), axes,
                                             n->a.red.keepdim, 0, l));
        gnode *safe = where(c, z, one, x, l);
        gnode *others = where(c, bin(c, OP_eq, cnt, zero, l), bin(c, OP_div, nz, safe, l),
                              where(c, bin(c, OP_and, z, bin(c, OP_eq, cnt, one, l), l), nz, zero, l),
                              l);
        grad_accum(c, nx, bin(c, OP_mul, expand(c, n, g), others, l));
        return;
    }
    case OP_var:
    case OP_std: {
        bool axes[TC_MAX_RANK] = {false};
        for (int i = 0; i < n->a.red.naxes; i++)
            axes[n->a.red.axes[i]] = true;
        gnode *mu = node_reduce(c->b, OP_mean, x, axes, true, 0, l);
        gnode *dev = bin(c, OP_sub, x, view_broadcast(c->b, mu, x->rank, x->shape, l), l);
        const tc_dim *dof = dim_sub(c->b->dc, count(c, n), dim_const(c->b->dc, n->a.red.correction));
        gnode *s = bin(c, OP_div, g, node_dimval(c->b, dof, l), l);
        if (n->op == OP_var)
            s = bin(c, OP_mul, s, k(c, 2, l), l);
        else
            s = bin(c, OP_div, s, y, l);
        grad_accum(c, nx, bin(c, OP_mul, expand(c, n, s), dev, l));
        return;
    }
    case OP_logsumexp:
        grad_accum(c, nx, bin(c, OP_mul, expand(c, n, g),
                              un(c, OP_exp, bin(c, OP_sub, x, expand(c, n, y), l), l), l));
        return;
    default:
        return; /* argmax, argmin: integer */
    }
}

/* ---- scans ---- */

/* x read along axis at index's values (index has x's shape). */
static gnode *gather(grad_ctx *c, gnode *x, gnode *index, int axis, tc_loc loc)
{
    gnode *in[2] = {node_concrete(c->b, x, loc), index};
    gnode t = build_tmpl(OP_gather, x->dtype, x->rank, x->shape, in, 2, loc);
    t.a.axis = axis;
    return node_emit(c->b, &t);
}

static gnode *scan(grad_ctx *c, op_id op, gnode *x, const gnode *n, bool reverse)
{
    return node_scan(c->b, op, x, n->a.scan.axis, reverse, n->loc);
}

static void scan_rule(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    const gnode *nx = n->in[0];
    gnode *x = P(nx), *y = P(n);
    bool back = !n->a.scan.reverse;
    switch (n->op) {
    case OP_cumsum: grad_accum(c, nx, scan(c, OP_cumsum, g, n, back)); return;
    case OP_cumprod: {
        /* dx_j = sum_{i >= j} g_i prod_{k <= i, k != j} x_k: for x_j != 0
         * that is sum_{i >= j} g_i y_i / x_j; for the first zero, the
         * products of the nonzeros (pnz) up to each i before the next
         * zero; for a later zero, 0.  Exact with zeros, as PyTorch. */
        bool fwd = n->a.scan.reverse;
        gnode *zero = k(c, 0, l), *one = k(c, 1, l);
        gnode *z = bin(c, OP_eq, x, zero, l);
        gnode *cz = scan(c, OP_cumsum, z, n, fwd);
        gnode *pnz = scan(c, OP_cumprod, where(c, z, one, x, l), n, fwd);
        gnode *first = bin(c, OP_eq, cz, one, l);
        gnode *at_zero = scan(c, OP_cumsum, where(c, first, bin(c, OP_mul, g, pnz, l), zero, l), n, back);
        gnode *elsewhere = bin(c, OP_div, scan(c, OP_cumsum, bin(c, OP_mul, g, y, l), n, back),
                               where(c, z, one, x, l), l);
        grad_accum(c, nx, where(c, z, where(c, first, at_zero, zero, l), elsewhere, l));
        return;
    }
    case OP_logcumsumexp: {
        /* dx_j = sum_{i >= j} g_i exp(x_j - y_i), in log space for the
         * positive and the negative parts of g so that nothing overflows.
         * Where the running value y_i is -inf, every x_k up to i is -inf
         * and its terms are exp(-inf) = 0: the term is left out (-inf),
         * not log(g) - (-inf), which made inf - inf = NaN at x_j = -inf.
         * One log for both parts: log(max(g, 0)) is log|g| where g > 0 and
         * log(0) = -inf elsewhere (NaN included), the same bits; likewise
         * log(max(-g, 0)) (the minGRU gradient's walk: 20 of 428 SASS
         * instructions a step). */
        gnode *zero = k(c, 0, l), *ninf = k(c, -INFINITY, l);
        gnode *la = un(c, OP_log, un(c, OP_abs, g, l), l);
        gnode *lp = where(c, bin(c, OP_gt, g, zero, l), la, ninf, l);
        gnode *ln = where(c, bin(c, OP_lt, g, zero, l), la, ninf, l);
        gnode *empty = bin(c, OP_eq, y, ninf, l);
        gnode *ap = scan(c, OP_logcumsumexp, where(c, empty, ninf, bin(c, OP_sub, lp, y, l), l), n, back);
        gnode *an = scan(c, OP_logcumsumexp, where(c, empty, ninf, bin(c, OP_sub, ln, y, l), l), n, back);
        grad_accum(c, nx, bin(c, OP_sub, un(c, OP_exp, bin(c, OP_add, x, ap, l), l),
                              un(c, OP_exp, bin(c, OP_add, x, an, l), l), l));
        return;
    }
    case OP_cummax:
    case OP_cummin: {
        /* Each element's gradient goes to the element whose value it holds,
         * the latest one on ties (PyTorch's cummax index).  The positions
         * where x equals the running value (marks) start segments along the
         * scan, and a mark gets the sum of g over its segment: with S the
         * sums of g from each element to the end of the scan, S at the mark
         * minus S at the next mark.  The next mark is a scan of the marks'
         * indices the other way (the nearest one ahead), read one step on;
         * S is summed in f64 so that a short segment's sum keeps its digits
         * beside a long axis' total.  Linear in the axis' length (it was a
         * comparison of every pair). */
        int ax = n->a.scan.axis;
        bool rev = n->a.scan.reverse;
        builder *b = c->b;
        gnode *mark = bin(c, OP_eq, x, y, l);
        gnode t = build_tmpl(OP_iota, TC_I64, n->rank, n->shape, NULL, 0, l);
        t.a.axis = ax;
        gnode *idx = node_emit(b, &t);
        gnode *one = node_const_int(b, TC_I64, 1, true, l);
        gnode *len = node_dimval(b, n->shape[ax], l);
        /* the last index in scan order, and "no mark ahead" */
        gnode *last = rev ? node_const_int(b, TC_I64, 0, true, l) : bin(c, OP_sub, len, one, l);
        gnode *none = rev ? node_const_int(b, TC_I64, -1, true, l) : len;
        gnode *ahead = node_scan(b, rev ? OP_cummax : OP_cummin, where(c, mark, idx, none, l), ax,
                                 !rev, l);
        gnode *at_end = bin(c, OP_eq, idx, last, l);
        gnode *step = where(c, at_end, idx, bin(c, rev ? OP_sub : OP_add, idx, one, l), l);
        gnode *next = where(c, at_end, none, gather(c, ahead, step, ax, l), l);
        gnode *sums = node_scan(b, OP_cumsum, node_cast(b, g, TC_F64, false, l), ax, !rev, l);
        gnode *found = bin(c, OP_ne, next, none, l);
        gnode *then = where(c, found, gather(c, sums, where(c, found, next, idx, l), ax, l),
                            k(c, 0, l), l);
        grad_accum(c, nx, where(c, mark, bin(c, OP_sub, sums, then, l), k(c, 0, l), l));
        return;
    }
    default:
        diag_error(c->b->d, TC_ERR_COMPILE, l, "no gradient rule for %s yet (differentiating '%s')",
                   op_table[n->op].name, c->fw->name);
    }
}

/* ---- layout, matmul ---- */

static void concat_rule(grad_ctx *c, const gnode *n, gnode *g)
{
    int ax = n->a.axis;
    const tc_dim *start = dim_const(c->b->dc, 0);
    g = node_concrete(c->b, g, n->loc);
    for (int i = 0; i < n->nin; i++) {
        blayout lg;
        layout_of(c->b, g, &lg, n->loc);
        lg.offset = dim_add(c->b->dc, lg.offset, dim_mul(c->b->dc, start, lg.stride[ax]));
        lg.shape[ax] = n->in[i]->shape[ax];
        grad_accum(c, n->in[i], layout_emit(c->b, &lg, n->loc));
        start = dim_add(c->b->dc, start, n->in[i]->shape[ax]);
    }
}

/* The base of v when v is its base with the last two dims swapped (w.T),
 * else NULL. */
static const gnode *transposed(grad_ctx *c, const gnode *v)
{
    if (v->op != OP_view || v->rank < 2 || v->in[0]->rank != v->rank)
        return NULL;
    const gnode *x = v->in[0];
    int r = v->rank;
    int64_t off;
    if (!dim_is_const(v->a.view.offset, &off) || off != 0)
        return NULL;
    for (int i = 0; i < r - 2; i++)
        if (!dim_eq(v->shape[i], x->shape[i]))
            return NULL;
    if (!dim_eq(v->shape[r - 2], x->shape[r - 1]) || !dim_eq(v->shape[r - 1], x->shape[r - 2]))
        return NULL;
    /* x's row-major strides, the last two swapped */
    const tc_dim *const *vs = v->a.view.strides;
    int64_t one;
    if (!dim_is_const(vs[r - 2], &one) || one != 1 || !dim_eq(vs[r - 1], x->shape[r - 1]))
        return NULL;
    const tc_dim *acc = dim_mul(c->b->dc, x->shape[r - 1], x->shape[r - 2]);
    for (int i = r - 3; i >= 0; i--) {
        if (!dim_eq(vs[i], acc))
            return NULL;
        acc = dim_mul(c->b->dc, acc, x->shape[i]);
    }
    return x;
}

/* gather(x, index, axis) with one index along the axis (as the prelude's
 * losses pick each row's target): its adjoint, a scatter-add, is then a
 * one-hot, g where iota == index along the axis, 0 elsewhere.  More than one
 * index along the axis would need a sum over them (a true scatter-add). */
static void gather_rule(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    const gnode *nx = n->in[0];
    int axis = n->a.axis;
    if (!is_one(n->shape[axis]))
        diag_error(c->b->d, TC_ERR_UNSUPPORTED, l,
                   "grad: 'gather' has a gradient rule only for one index along the axis "
                   "(size 1 there, as gather(x, unsqueeze(t, 1)) has); more would need a scatter-add");
    gnode t = build_tmpl(OP_iota, TC_I64, nx->rank, nx->shape, NULL, 0, l);
    t.a.axis = axis;
    gnode *hit = bin(c, OP_eq, node_emit(c->b, &t), P(n->in[1]), l);
    grad_accum(c, nx, where(c, hit, g, k(c, 0, l), l));
}

/* d(a @ b) = g @ b^T, a^T @ g.  An operand that is a transposed parameter
 * (x @ w.T) gets its gradient in its own layout (dw = g^T @ x), so that no
 * copy transposes it back. */
static void matmul_rule(grad_ctx *c, const gnode *n, gnode *g)
{
    tc_loc l = n->loc;
    gnode *a = P(n->in[0]), *b = P(n->in[1]);
    int ra = a->rank, rb = b->rank, rg = g->rank;
    const gnode *ta = transposed(c, n->in[0]), *tb = transposed(c, n->in[1]);
    gnode *gt = ta || tb ? view_transpose(c->b, node_concrete(c->b, g, l), rg - 2, rg - 1, l) : NULL;
    if (ta && ra == rg)
        grad_accum(c, ta, node_matmul(c->b, b, gt, l));
    else
        grad_accum(c, n->in[0], node_matmul(c->b, g, view_transpose(c->b, b, rb - 2, rb - 1, l), l));
    if (tb && rb == rg)
        grad_accum(c, tb, node_matmul(c->b, gt, a, l));
    else
        grad_accum(c, n->in[1], node_matmul(c->b, view_transpose(c->b, a, ra - 2, ra - 1, l), g, l));
}

void grad_rule(grad_ctx *c, const gnode *n, gnode *g)
{
    switch (op_table[n->op].kind) {
    case OPK_LEAF: return;
    case OPK_UNARY: unary(c, n, g); return;
    case OPK_BINARY: binary(c, n, g); return;
    case OPK_TERNARY: ternary(c, n, g); return;
    case OPK_CAST: grad_accum(c, n->in[0], g); return;
    case OPK_REDUCE: reduce(c, n, g); return;
    case OPK_SCAN: scan_rule(c, n, g); return;
    case OPK_VIEW: grad_accum(c, n->in[0], grad_view(c, n, g)); return;
    case OPK_COPY: grad_accum(c, n->in[0], g); return;
    case OPK_CONCAT: concat_rule(c, n, g); return;
    case OPK_MATMUL: matmul_rule(c, n, g); return;
    case OPK_GATHER: gather_rule(c, n, g); return;
    }
}
