/* ref_scan.c - scans along one axis: cumsum, cumprod, cummax, cummin,
 * logcumsumexp, forwards or (reverse) from the last element.
 *
 * Each lane (every index with the scanned axis at 0) is walked in order with
 * one carry; element i of the output is the carry after input element i.
 * Semantics follow PyTorch: cumsum/cumprod of int/bool accumulate in int64
 * with wrap; floats accumulate in f64 and each output element is rounded to
 * the node's dtype (the carry itself is not rounded, as a kernel keeps it in
 * f32 for f16/bf16).  cummax/cummin propagate NaN: from the first NaN on, the
 * lane's results are NaN (torch.cummax).  logcumsumexp adds in log space
 * with the larger term factored out, log(e^a + e^b) = m + log1p(e^(min - m)):
 * NaN propagates, -inf is the empty sum, and +inf stays +inf.
 */
#include <math.h>

#include "ref_internal.h"

/* log(e^a + e^b), stable; NaN if either is NaN. */
static double logaddexp(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    double m = a > b ? a : b, lo = a > b ? b : a;
    if (isinf(m))
        return m; /* -inf + -inf, or anything + inf */
    return m + log1p(exp(lo - m));
}

static double step_f64(op_id op, double acc, double x, bool first)
{
    if (first)
        return x;
    switch (op) {
    case OP_cumsum: return acc + x;
    case OP_cumprod: return acc * x;
    case OP_cummax: return isnan(acc) || isnan(x) ? NAN : (x > acc ? x : acc);
    case OP_cummin: return isnan(acc) || isnan(x) ? NAN : (x < acc ? x : acc);
    default: return logaddexp(acc, x);
    }
}

static int64_t step_i64(op_id op, int64_t acc, int64_t x, bool first)
{
    if (first)
        return x;
    switch (op) {
    case OP_cumsum: return (int64_t)((uint64_t)acc + (uint64_t)x);
    case OP_cumprod: return (int64_t)((uint64_t)acc * (uint64_t)x);
    case OP_cummax: return x > acc ? x : acc;
    default: return x < acc ? x : acc;
    }
}

tc_status ref_eval_scan(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    const ref_tensor *x = in[0];
    int rank = x->rank, axis = n->a.scan.axis;
    bool same = rank == out->rank && axis >= 0 && axis < rank;
    for (int k = 0; same && k < rank; k++)
        same = x->shape[k] == out->shape[k];
    if (!same) {
        char a[256], b[256];
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: %s along axis %d of %s gives %s", ref_op_name(n->op),
                        axis, ref_shape_str(rank, x->shape, a, sizeof a),
                        ref_shape_str(out->rank, out->shape, b, sizeof b));
    }
    if (n->op == OP_logcumsumexp && ref_is_int(x->dtype))
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: logcumsumexp of an integer tensor");
    if (ref_numel(out) == 0)
        return TC_OK;
    /* lanes: the shape with the axis at 1; stride: of the axis, in elements */
    int64_t lshape[TC_MAX_RANK], lidx[TC_MAX_RANK] = {0};
    int64_t len = x->shape[axis], stride = 1;
    for (int k = 0; k < rank; k++)
        lshape[k] = k == axis ? 1 : x->shape[k];
    for (int k = rank - 1; k > axis; k--)
        stride *= x->shape[k];
    bool int_acc = ref_is_int(x->dtype) && ref_is_int(out->dtype);
    do {
        int64_t base = ref_flat(rank, x->shape, lidx);
        double acc = 0;
        int64_t iacc = 0;
        for (int64_t s = 0; s < len; s++) {
            int64_t at = base + (n->a.scan.reverse ? len - 1 - s : s) * stride;
            if (int_acc) {
                iacc = step_i64(n->op, iacc, x->idata[at], s == 0);
                ref_seti(out, at, iacc);
            } else {
                acc = step_f64(n->op, acc, ref_getf(x, at), s == 0);
                ref_setf(out, at, acc);
            }
        }
    } while (ref_next_index(rank, lshape, lidx));
    return TC_OK;
}
