/* ref_pointwise.c - unary, binary and ternary ops, and cast.
 *
 * The math is the `ref` column of ops.def, expanded once in graph/opeval.c,
 * so the interpreter, the builder's constant folding and the op table cannot
 * disagree about what an op means.
 * Inputs have the node's shape or are rank 0 (graph.h): a rank-0 input is
 * read at element 0 for every output element.  Values are computed in f64 and
 * rounded to the node's dtype on store: f16/bf16 inputs are already rounded
 * values, so this is "f32 opmath rounded on store" carried out exactly.
 *
 * The dtype an op computes in (opdt) is the node's dtype, or for a
 * comparison (bool result) its inputs' promotion, as lowering decides it for
 * the kernels; each operand is converted to opdt first, as the kernels do.
 * An integer or bool opdt takes the int64 path: values exact, + - * neg abs
 * % ** of graph/opeval.h (wrapping, shared with the builder's constant
 * folding), comparisons, max/min/clamp/where and the integer meanings of
 * relu/sign/floor/ceil/round/isnan/isinf.  Everything else computes in f64
 * from the ref column.  Casts of floats to integers saturate (dtype_f2i).
 * docs/semantics.md, "Edges", has every edge, the same here as in the
 * kernels.
 */
#include <math.h>

#include "ref_internal.h"
#include "graph/opeval.h"

/* The dtype n's operands are converted to (lower.c's opdt): a weak f64
 * literal meeting f32 is f32(1e12), an i64 operand of an f32 op is
 * rounded to f32 (once, from the integer), an f32 scalar meeting f16 is
 * rounded to f16 (the kernels' tc_round_f16). */
static tc_dtype op_dtype(const gnode *n)
{
    if (op_table[n->op].rule == TR_BOOL)
        return graph_promote_inputs(n, 0, n->nin);
    return n->dtype;
}

static int64_t max_i(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min_i(int64_t a, int64_t b) { return a < b ? a : b; }

/* op on operands already in opdt; the result before the store's wrap. */
static int64_t int_op(op_id op, const int64_t *v)
{
    int64_t a = v[0], b = v[1], c = v[2], r = 0;
    switch (op) {
    case OP_relu: return max_i(a, 0);
    case OP_sign: return (a > 0) - (a < 0);
    case OP_floor: case OP_ceil: case OP_round: return a;
    case OP_isnan: case OP_isinf: return 0;
    case OP_not: return a == 0;
    case OP_eq: return a == b;
    case OP_ne: return a != b;
    case OP_lt: return a < b;
    case OP_le: return a <= b;
    case OP_gt: return a > b;
    case OP_ge: return a >= b;
    case OP_and: return a != 0 && b != 0;
    case OP_or: return a != 0 || b != 0;
    case OP_max: return max_i(a, b);
    case OP_min: return min_i(a, b);
    case OP_clamp: return min_i(max_i(a, b), c);
    case OP_where: return a != 0 ? b : c;
    default:
        /* + - * neg abs % **; % 0 and 0 ** negative are 0, as in the kernels */
        (void)opeval_i64(op, a, b, &r);
        return r;
    }
}

tc_status ref_eval_pointwise(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    /* Each input is either the node's shape (step 1) or rank 0 (step 0). */
    int64_t step[3] = {0, 0, 0};
    tc_dtype opdt = op_dtype(n);
    bool int_math = ref_is_int(opdt);
    for (int k = 0; k < n->nin; k++) {
        const ref_tensor *t = in[k];
        if (t->rank == 0)
            continue;
        bool same = t->rank == out->rank;
        for (int i = 0; same && i < out->rank; i++)
            same = t->shape[i] == out->shape[i];
        if (!same) {
            char a[256], b[256];
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: input %d of %s has shape %s, node has %s", k,
                            ref_op_name(n->op), ref_shape_str(t->rank, t->shape, a, sizeof a),
                            ref_shape_str(out->rank, out->shape, b, sizeof b));
        }
        step[k] = 1;
    }

    /* Operands converted to opdt through a one-element tensor of it, so the
     * conversion is ref_convert's, the cast's. */
    ref_tensor cv = {.dtype = opdt, .rank = 0};
    int64_t ival;
    double fval;
    if (int_math)
        cv.idata = &ival;
    else
        cv.data = &fval;
    for (int64_t i = 0; i < numel; i++) {
        if (int_math) {
            int64_t v[3] = {0, 0, 0};
            for (int k = 0; k < n->nin; k++) {
                if (n->op == OP_where && k == 0) { /* the condition is only tested */
                    v[0] = ref_getf(in[0], i * step[0]) != 0;
                    continue;
                }
                ref_convert(&cv, 0, in[k], i * step[k]);
                v[k] = ival;
            }
            ref_seti(out, i, int_op(n->op, v));
        } else {
            double v[3] = {0, 0, 0};
            for (int k = 0; k < n->nin; k++) {
                if (n->op == OP_where && k == 0) {
                    v[0] = ref_getf(in[0], i * step[0]) != 0;
                    continue;
                }
                ref_convert(&cv, 0, in[k], i * step[k]);
                v[k] = fval;
            }
            ref_setf(out, i, opeval_f64(n->op, v[0], v[1], v[2]));
        }
    }
    return TC_OK;
}

tc_status ref_eval_cast(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    if (ref_numel(in[0]) != numel || in[0]->rank != out->rank)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: cast changes the shape of its input");
    /* Floats to integers saturate (NaN 0), as the kernels' cvt.rzi does. */
    for (int64_t i = 0; i < numel; i++)
        ref_convert(out, i, in[0], i);
    return TC_OK;
}
