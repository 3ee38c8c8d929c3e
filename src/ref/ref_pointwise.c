/* ref_pointwise.c - unary, binary and ternary ops, and cast.
 *
 * The math is the `ref` column of ops.def, expanded once in graph/opeval.c,
 * so the interpreter, the builder's constant folding and the op table cannot
 * disagree about what an op means.
 * Inputs have the node's shape or are rank 0 (graph.h): a rank-0 input is
 * read at element 0 for every output element.  Values are computed in f64 and
 * rounded to the node's dtype on store, each operand first rounded to the op's compute type
 * as the kernels convert it: f16/bf16 inputs are already rounded
 * values, so this is "f32 opmath rounded on store" carried out exactly.
 *
 * Integer nodes whose inputs are all integer or bool take the int64 path
 * of graph/opeval.h (wrapping + - * neg abs, Python %, integer **), shared
 * with the builder's constant folding; the store wraps to i32.  Casts of
 * floats to integers saturate (dtype_cast).  docs/semantics.md, "Edges",
 * has every edge, the same here as in the kernels.
 */
#include <math.h>

#include "ref_internal.h"
#include "graph/opeval.h"

static bool is_int_dtype(tc_dtype t) { return dtype_is_int(t) || t == TC_BOOL; }

/* An int64 result stored to an integer dtype: wrap to 32 bits for i32. */
static double int_store(tc_dtype t, int64_t v)
{
    if (t == TC_I32)
        return (double)(int32_t)(uint32_t)(uint64_t)v;
    return dtype_round(t, (double)v);
}

tc_status ref_eval_pointwise(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    /* Each input is either the node's shape (step 1) or rank 0 (step 0). */
    int64_t step[3] = {0, 0, 0};
    bool int_math = dtype_is_int(n->dtype) && opeval_has_int(n->op);
    for (int k = 0; k < n->nin; k++) {
        const ref_tensor *t = in[k];
        if (!is_int_dtype(t->dtype))
            int_math = false;
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

    /* The kernels convert every operand to the op's compute type first
     * (lower.c's opdt, f16/bf16 as f32): a weak f64 literal meeting f32
     * is f32(1e12), an i64 operand of an f32 op is rounded to f32 */
    tc_dtype cdt = op_table[n->op].rule == TR_BOOL ? graph_promote_inputs(n, 0, n->nin) : n->dtype;
    if (cdt == TC_F16 || cdt == TC_BF16)
        cdt = TC_F32;
    bool round_in = cdt == TC_F32;
    for (int64_t i = 0; i < numel; i++) {
        double v[3] = {0, 0, 0};
        for (int k = 0; k < n->nin; k++)
            v[k] = round_in ? dtype_round(cdt, in[k]->data[i * step[k]]) : in[k]->data[i * step[k]];
        if (!int_math) {
            out->data[i] = dtype_round(n->dtype, opeval_f64(n->op, v[0], v[1], v[2]));
            continue;
        }
        int64_t a = ref_as_i64(v[0]), b = ref_as_i64(v[1]), r = 0;
        /* % 0 and 0 ** negative are 0, as in the kernels (opeval.h) */
        (void)opeval_i64(n->op, a, b, &r);
        out->data[i] = int_store(n->dtype, r);
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
        out->data[i] = dtype_cast(in[0]->dtype, n->dtype, in[0]->data[i]);
    return TC_OK;
}
