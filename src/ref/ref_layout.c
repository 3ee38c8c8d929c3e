/* ref_layout.c - view, copy, concat and gather: ops that move elements, not change them.
 *
 * A view is graph.h's strided window over its materialized input:
 *
 *     out[i0, ..., ir] = in.flat[offset + i0*stride0 + ... + ir*strider]
 *
 * with strides and offset evaluated from their dims.  Transpose, slicing,
 * unsqueeze, reshape and broadcast (stride 0) are all this one formula, so
 * the interpreter checks the builder's arithmetic rather than repeating it.
 * Every address is bounds-checked against the input: a wrong stride is an
 * internal error with the offending element, never a wild read.
 *
 * copy materializes its input, which the interpreter has already done, so it
 * is an element-for-element copy.  concat walks the output and finds, for the
 * coordinate along the axis, the input that holds it.  gather reads x where
 * the index says along its axis; an index outside the axis is the user's
 * error, located at the call, naming the index, the axis and its size (the
 * GPU gives NaN or 0 there instead: docs/language.md).  Elements move with
 * ref_convert: exact within a dtype, a cast's conversion across dtypes.
 */
#include <string.h>

#include "ref_internal.h"

tc_status ref_eval_view(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    const ref_tensor *x = in[0];
    int rank = out->rank;
    int64_t stride[TC_MAX_RANK], offset;
    if (!ref_dim(c, n->a.view.offset, n->loc, &offset))
        return c->d->status;
    for (int k = 0; k < rank; k++)
        if (!ref_dim(c, n->a.view.strides[k], n->loc, &stride[k]))
            return c->d->status;

    int64_t numel = ref_numel(out), size = ref_numel(x);
    int64_t idx[TC_MAX_RANK] = {0};
    for (int64_t i = 0; i < numel; i++) {
        int64_t src = offset;
        bool ovf = false;
        for (int k = 0; k < rank; k++) {
            int64_t t;
            ovf |= __builtin_mul_overflow(idx[k], stride[k], &t);
            ovf |= __builtin_add_overflow(src, t, &src);
        }
        if (ovf || src < 0 || src >= size) {
            char a[256], b[256];
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: view element %s reads element %lld of an input "
                            "of %lld elements (shape %s)",
                            ref_shape_str(rank, idx, a, sizeof a), ovf ? -1LL : (long long)src,
                            (long long)size, ref_shape_str(x->rank, x->shape, b, sizeof b));
        }
        ref_convert(out, i, x, src);
        ref_next_index(rank, out->shape, idx);
    }
    return TC_OK;
}

tc_status ref_eval_copy(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    if (ref_numel(in[0]) != numel) {
        char a[256], b[256];
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: copy of %s has shape %s",
                        ref_shape_str(in[0]->rank, in[0]->shape, a, sizeof a),
                        ref_shape_str(out->rank, out->shape, b, sizeof b));
    }
    for (int64_t i = 0; i < numel; i++)
        ref_convert(out, i, in[0], i);
    return TC_OK;
}

tc_status ref_eval_concat(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    int rank = out->rank, axis = n->a.axis;
    if (axis < 0 || axis >= rank)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: concat axis %d of a rank-%d value", axis, rank);
    /* Each input must match the output except along the axis, where the
     * sizes add up. */
    int64_t total = 0;
    for (int j = 0; j < n->nin; j++) {
        bool ok = in[j]->rank == rank;
        for (int k = 0; ok && k < rank; k++)
            ok = k == axis || in[j]->shape[k] == out->shape[k];
        if (!ok) {
            char a[256], b[256];
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: concat input %d has shape %s, output %s", j,
                            ref_shape_str(in[j]->rank, in[j]->shape, a, sizeof a),
                            ref_shape_str(rank, out->shape, b, sizeof b));
        }
        total += in[j]->shape[axis];
    }
    if (total != out->shape[axis])
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: concat inputs give %lld along axis %d, output has %lld",
                        (long long)total, axis, (long long)out->shape[axis]);

    int64_t numel = ref_numel(out);
    int64_t idx[TC_MAX_RANK] = {0}, src[TC_MAX_RANK];
    for (int64_t i = 0; i < numel; i++) {
        /* Find the input holding coordinate idx[axis]. */
        int j = 0;
        int64_t start = 0;
        while (idx[axis] >= start + in[j]->shape[axis]) {
            start += in[j]->shape[axis];
            j++;
        }
        memcpy(src, idx, sizeof(int64_t) * (size_t)rank);
        src[axis] -= start;
        ref_convert(out, i, in[j], ref_flat(rank, in[j]->shape, src));
        ref_next_index(rank, out->shape, idx);
    }
    return TC_OK;
}

tc_status ref_eval_gather(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    int rank = out->rank, axis = n->a.axis;
    const ref_tensor *x = in[0], *ix = in[1];
    bool ok = axis >= 0 && axis < rank && x->rank == rank && ix->rank == rank;
    for (int k = 0; ok && k < rank; k++)
        ok = ix->shape[k] == out->shape[k] && (k == axis || x->shape[k] == out->shape[k]);
    if (!ok) {
        char a[256], b[256];
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: gather of %s into %s along axis %d",
                        ref_shape_str(x->rank, x->shape, a, sizeof a),
                        ref_shape_str(rank, out->shape, b, sizeof b), axis);
    }
    int64_t numel = ref_numel(out);
    int64_t idx[TC_MAX_RANK] = {0}, src[TC_MAX_RANK];
    for (int64_t i = 0; i < numel; i++) {
        int64_t j = ref_geti(ix, i);
        if (j < 0 || j >= x->shape[axis]) {
            char at[256];
            return diag_set(c->d, TC_ERR_INVALID_ARG, n->loc,
                            "gather: index %lld is out of range for axis %d of size %lld (at "
                            "element %s of the index)",
                            (long long)j, axis, (long long)x->shape[axis],
                            ref_shape_str(rank, idx, at, sizeof at));
        }
        memcpy(src, idx, sizeof(int64_t) * (size_t)rank);
        src[axis] = j;
        ref_convert(out, i, x, ref_flat(rank, x->shape, src));
        ref_next_index(rank, out->shape, idx);
    }
    return TC_OK;
}
