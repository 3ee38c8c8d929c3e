/* ref_reduce.c - reductions over a set of axes, with or without keepdim.
 *
 * For each output element the values being reduced are first gathered into a
 * plain list, in row-major order of the reduced axes, and then one small
 * function turns the list into a number.  Gathering makes argmax's index (a
 * position in the flattened reduced axes) and the two passes of var literally
 * what they are on paper.
 *
 *     output index (keepdim layout)  k = [i, 0, j]      axes = (1)
 *     list = x[i, 0, j], x[i, 1, j], ..., x[i, R-1, j]
 *
 * Semantics follow PyTorch: sum/prod of int/bool accumulate in int64 with
 * wrap, and max/min/argmax/argmin of them compare int64 values (all exact;
 * f64 would drop low bits past 2^53); everything else accumulates in f64.
 * max/min propagate NaN; argmax/argmin give the first index of the extreme
 * value, and a NaN counts as the extreme (the first NaN wins).  var/std are two-pass (mean, then squared deviations) divided by
 * max(n - correction, 0), so 0/0 is NaN and x/0 is inf as in torch.
 * logsumexp shifts by the max; all -inf (or empty) gives -inf, a +inf gives
 * +inf.  Over an empty set: sum 0, prod 1, mean NaN, var NaN, logsumexp
 * -inf; max/min/argmax/argmin are errors, as torch raises.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_internal.h"

static double sum_f64(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static double mean_f64(const double *v, int64_t n)
{
    return n == 0 ? NAN : sum_f64(v, n) / (double)n;
}

static double var_f64(const double *v, int64_t n, int correction)
{
    double mu = mean_f64(v, n);
    double ss = 0;
    for (int64_t i = 0; i < n; i++)
        ss += (v[i] - mu) * (v[i] - mu);
    double denom = (double)n - (double)correction;
    if (denom < 0)
        denom = 0;
    if (denom == 0)
        return ss == 0 || isnan(ss) ? NAN : INFINITY; /* 0/0 and x/0 without a UB-sanitizer trap */
    return ss / denom;
}

/* Index of the max (sign = 1) or min (sign = -1); first NaN, else first extreme. */
static int64_t arg_extreme(const double *v, int64_t n, int sign)
{
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            return i;
        if (sign > 0 ? v[i] > v[best] : v[i] < v[best])
            best = i;
    }
    return best;
}

static double logsumexp_f64(const double *v, int64_t n)
{
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            return NAN;
        if (v[i] > m)
            m = v[i];
    }
    if (isinf(m))
        return m; /* all -inf (or empty): -inf; any +inf: +inf */
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += exp(v[i] - m);
    return m + log(s);
}

static tc_status empty_error(ref_ctx *c, const gnode *n)
{
    return diag_set(c->d, TC_ERR_INVALID_ARG, n->loc, "%s of an empty dimension", ref_op_name(n->op));
}

/* One output value from a gathered list of integers, for the ops with an
 * integer meaning (int_list_op); wrapping through uint64, which C defines. */
static tc_status reduce_list_int(ref_ctx *c, const gnode *n, const int64_t *v, int64_t cnt,
                                 int64_t *res)
{
    switch (n->op) {
    case OP_sum: {
        uint64_t s = 0;
        for (int64_t i = 0; i < cnt; i++)
            s += (uint64_t)v[i];
        *res = (int64_t)s;
        return TC_OK;
    }
    case OP_prod: {
        uint64_t p = 1;
        for (int64_t i = 0; i < cnt; i++)
            p *= (uint64_t)v[i];
        *res = (int64_t)p;
        return TC_OK;
    }
    default: { /* max min argmax argmin: the first extreme */
        if (cnt == 0)
            return empty_error(c, n);
        bool hi = n->op == OP_rmax || n->op == OP_argmax;
        int64_t best = 0;
        for (int64_t i = 1; i < cnt; i++)
            if (hi ? v[i] > v[best] : v[i] < v[best])
                best = i;
        *res = (n->op == OP_argmax || n->op == OP_argmin) ? best : v[best];
        return TC_OK;
    }
    }
}

static bool int_list_op(op_id op)
{
    return op == OP_sum || op == OP_prod || op == OP_rmax || op == OP_rmin || op == OP_argmax ||
           op == OP_argmin;
}

/* One output value from the gathered list of floats. */
static tc_status reduce_list(ref_ctx *c, const gnode *n, const double *v, int64_t cnt, double *res)
{
    switch (n->op) {
    case OP_sum: *res = sum_f64(v, cnt); return TC_OK;
    case OP_prod: {
        double p = 1;
        for (int64_t i = 0; i < cnt; i++)
            p *= v[i];
        *res = p;
        return TC_OK;
    }
    case OP_mean: *res = mean_f64(v, cnt); return TC_OK;
    case OP_var: *res = var_f64(v, cnt, n->a.red.correction); return TC_OK;
    case OP_std: *res = sqrt(var_f64(v, cnt, n->a.red.correction)); return TC_OK;
    case OP_logsumexp: *res = logsumexp_f64(v, cnt); return TC_OK;
    case OP_rmax:
    case OP_rmin:
    case OP_argmax:
    case OP_argmin: {
        if (cnt == 0)
            return empty_error(c, n);
        int sign = (n->op == OP_rmax || n->op == OP_argmax) ? 1 : -1;
        int64_t k = arg_extreme(v, cnt, sign);
        *res = (n->op == OP_argmax || n->op == OP_argmin) ? (double)k : v[k];
        return TC_OK;
    }
    default:
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: %s is not a reduction", ref_op_name(n->op));
    }
}

tc_status ref_eval_reduce(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    const ref_tensor *x = in[0];
    int rank = x->rank;
    bool red[TC_MAX_RANK] = {false};
    int naxes = n->a.red.naxes;
    if (naxes < 0 || naxes > rank)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc, "reference interpreter: %d axes of a rank-%d value",
                        naxes, rank);
    for (int j = 0; j < naxes; j++) {
        int ax = n->a.red.axes[j];
        if (ax < 0 || ax >= rank || (j > 0 && ax <= n->a.red.axes[j - 1]))
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: reduction axes are not sorted, distinct and "
                            "in [0, %d)", rank);
        red[ax] = true;
    }

    /* kshape: the input shape with reduced axes set to 1 (the keepdim
     * layout, same element order as the output either way).  rshape: the
     * reduced axes alone. */
    int64_t kshape[TC_MAX_RANK], rshape[TC_MAX_RANK], want[TC_MAX_RANK];
    int nwant = 0;
    int64_t nred = 1, nkept = 1;
    for (int k = 0, j = 0; k < rank; k++) {
        kshape[k] = red[k] ? 1 : x->shape[k];
        if (red[k]) {
            rshape[j++] = x->shape[k];
            if (x->shape[k] != 0 && nred > INT64_MAX / x->shape[k])
                nred = INT64_MAX; /* only reachable when the output is empty */
            else
                nred *= x->shape[k];
        }
        if (!red[k] || n->a.red.keepdim)
            want[nwant++] = kshape[k];
        nkept *= kshape[k];
    }
    bool same = nwant == out->rank;
    for (int k = 0; same && k < nwant; k++)
        same = want[k] == out->shape[k];
    if (!same) {
        char a[256], b[256], e[256];
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: %s of %s gives %s, but the node's shape is %s",
                        ref_op_name(n->op), ref_shape_str(rank, x->shape, a, sizeof a),
                        ref_shape_str(nwant, want, b, sizeof b),
                        ref_shape_str(out->rank, out->shape, e, sizeof e));
    }
    if (nkept == 0)
        return TC_OK;

    /* nkept > 0 here, so nred <= numel(x), which the driver bounded.  An
     * integer input reduced by an op with an integer meaning gathers int64s;
     * anything else (mean, var, ..., and all floats) doubles. */
    bool int_acc = ref_is_int(x->dtype) && int_list_op(n->op);
    size_t cnt = (size_t)(nred > 0 ? nred : 1);
    double *list = int_acc ? NULL : malloc(sizeof(double) * cnt);
    int64_t *ilist = int_acc ? malloc(sizeof(int64_t) * cnt) : NULL;
    if (!list && !ilist)
        return diag_set(c->d, TC_ERR_NOMEM, n->loc, "out of memory in the reference interpreter");

    int64_t kidx[TC_MAX_RANK] = {0};
    tc_status st = TC_OK;
    for (int64_t o = 0; o < nkept; o++) {
        int64_t ridx[TC_MAX_RANK] = {0}, full[TC_MAX_RANK];
        for (int64_t r = 0; r < nred; r++) {
            for (int k = 0, j = 0; k < rank; k++)
                full[k] = red[k] ? ridx[j++] : kidx[k];
            int64_t at = ref_flat(rank, x->shape, full);
            if (int_acc)
                ilist[r] = x->idata[at];
            else
                list[r] = ref_getf(x, at);
            ref_next_index(naxes, rshape, ridx);
        }
        if (int_acc) {
            int64_t v = 0;
            if ((st = reduce_list_int(c, n, ilist, nred, &v)) != TC_OK)
                break;
            ref_seti(out, o, v);
        } else if (n->op == OP_argmax || n->op == OP_argmin) {
            double v = 0; /* an index: exact as an integer */
            if ((st = reduce_list(c, n, list, nred, &v)) != TC_OK)
                break;
            ref_seti(out, o, (int64_t)v);
        } else {
            double v = 0;
            if ((st = reduce_list(c, n, list, nred, &v)) != TC_OK)
                break;
            ref_setf(out, o, v);
        }
        ref_next_index(rank, kshape, kidx);
    }
    free(list);
    free(ilist);
    return st;
}
