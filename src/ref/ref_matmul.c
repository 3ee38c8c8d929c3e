/* ref_matmul.c - matrix product with NumPy/PyTorch shape rules.
 *
 *   a: [..., M, K] or [K]      b: [..., K, N] or [K]
 *   out: [batch..., M, N], with M dropped when a is rank 1 and N dropped
 *   when b is rank 1 (so [K] @ [K] is rank 0).
 *
 * The leading (batch) dims of a and b broadcast against the node's batch
 * dims: aligned at the right, a dim of 1 or a missing dim stretches.  The
 * node's shape says what the builder decided; this file checks that a and b
 * agree with it and then computes each output element as a dot product
 * accumulated in f64 (int64 with wrap for integer dtypes), rounded on store.
 */
#include "ref_internal.h"

/* Dims of t's batch part: all but the last two (none for rank 1 or 2). */
static int batch_rank(const ref_tensor *t) { return t->rank >= 2 ? t->rank - 2 : 0; }

tc_status ref_eval_matmul(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    const ref_tensor *a = in[0], *b = in[1];
    char sa[256], sb[256], so[256];
#define BAD_SHAPES                                                                               \
    diag_set(c->d, TC_ERR_INTERNAL, n->loc,                                                      \
             "reference interpreter: matmul of %s and %s cannot give %s",                         \
             ref_shape_str(a->rank, a->shape, sa, sizeof sa),                                     \
             ref_shape_str(b->rank, b->shape, sb, sizeof sb),                                     \
             ref_shape_str(out->rank, out->shape, so, sizeof so))

    if (a->rank < 1 || b->rank < 1)
        return BAD_SHAPES;
    bool has_m = a->rank >= 2, has_n = b->rank >= 2;
    int64_t K = a->shape[a->rank - 1];
    int64_t Kb = has_n ? b->shape[b->rank - 2] : b->shape[0];
    int64_t M = has_m ? a->shape[a->rank - 2] : 1;
    int64_t N = has_n ? b->shape[b->rank - 1] : 1;
    int nba = batch_rank(a), nbb = batch_rank(b);
    int nbo = out->rank - has_m - has_n;
    if (K != Kb || nbo < nba || nbo < nbb)
        return BAD_SHAPES;
    if (has_m && out->shape[nbo] != M)
        return BAD_SHAPES;
    if (has_n && out->shape[out->rank - 1] != N)
        return BAD_SHAPES;
    /* Each batch dim of a or b is 1 or the output's (right-aligned). */
    for (int j = 0; j < nba; j++) {
        int64_t d = a->shape[j], o = out->shape[j + nbo - nba];
        if (d != 1 && d != o)
            return BAD_SHAPES;
    }
    for (int j = 0; j < nbb; j++) {
        int64_t d = b->shape[j], o = out->shape[j + nbo - nbb];
        if (d != 1 && d != o)
            return BAD_SHAPES;
    }
#undef BAD_SHAPES

    /* The inputs share the node's dtype (graph.h): both lanes int64 or both
     * double. */
    bool int_acc = ref_is_int(n->dtype) && a->idata && b->idata;
    int64_t numel = ref_numel(out);
    int64_t idx[TC_MAX_RANK] = {0};
    for (int64_t o = 0; o < numel; o++) {
        /* Split the output index into batch, m and n. */
        int64_t m = has_m ? idx[nbo] : 0;
        int64_t nn = has_n ? idx[out->rank - 1] : 0;
        int64_t ia[TC_MAX_RANK], ib[TC_MAX_RANK];
        for (int j = 0; j < nba; j++)
            ia[j] = a->shape[j] == 1 ? 0 : idx[j + nbo - nba];
        for (int j = 0; j < nbb; j++)
            ib[j] = b->shape[j] == 1 ? 0 : idx[j + nbo - nbb];
        if (has_m)
            ia[nba] = m;
        if (has_n)
            ib[nbb + 1] = nn;

        /* The dot product runs along a's last dim (contiguous, step 1) and
         * b's contracted dim (step N, or 1 for a vector): find where each
         * starts, then walk. */
        ia[a->rank - 1] = 0;
        ib[has_n ? nbb : 0] = 0;
        int64_t start_a = ref_flat(a->rank, a->shape, ia), start_b = ref_flat(b->rank, b->shape, ib);
        int64_t step_b = has_n ? N : 1;
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t k = 0; k < K; k++) {
            if (int_acc)
                iacc += (uint64_t)a->idata[start_a + k] * (uint64_t)b->idata[start_b + k * step_b];
            else
                acc += ref_getf(a, start_a + k) * ref_getf(b, start_b + k * step_b);
        }
        if (int_acc)
            ref_seti(out, o, (int64_t)iacc);
        else
            ref_setf(out, o, acc);
        ref_next_index(out->rank, out->shape, idx);
    }
    return TC_OK;
}
