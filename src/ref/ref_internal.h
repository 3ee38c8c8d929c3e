/* ref_internal.h - what the files of the reference interpreter share.
 *
 *   ref.c            ref_run: the node loop, leaves, outputs, tensor memory
 *   ref_pointwise.c  unary/binary/ternary ops (the ops.def `ref` column), cast
 *   ref_reduce.c     sum mean max min prod argmax argmin var std logsumexp
 *   ref_layout.c     view, copy, concat
 *   ref_matmul.c     matmul (2-D, batched, NumPy rank-1 rules)
 *   ref_scan.c       cumsum cumprod cummax cummin logcumsumexp along an axis
 *
 * The driver evaluates each node's shape, allocates its value (zeroed,
 * contiguous row-major) and hands it to one of the ref_eval_* functions below
 * together with the already computed values of the node's inputs.  An eval
 * function fills every element through ref_setf/ref_seti/ref_convert (which
 * round or wrap to the node's dtype) and returns TC_OK or an error it has set
 * in ctx->d with diag_set.  Each has one path for integer values (int64,
 * exact) and one for floats (f64), chosen by the dtype the op computes in.
 */
#ifndef TC_REF_INTERNAL_H
#define TC_REF_INTERNAL_H

#include "ref.h"

typedef struct ref_ctx {
    const tc_dimbind *b;
    int nb;
    tc_diag *d;
} ref_ctx;

/* A dim's value under the bindings; on failure (unbound symbol) sets the error
 * at loc and returns false. */
bool ref_dim(ref_ctx *c, const tc_dim *dim, tc_loc loc, int64_t *out);

/* Multi-index stepping: idx is a row-major index into shape; advance it by one
 * element.  Returns false after the last element (idx is back at zero).
 * Every loop of the interpreter is "for each output multi-index", so the
 * correspondence with the math is direct. */
bool ref_next_index(int rank, const int64_t *shape, int64_t *idx);
/* Row-major flat offset of idx in shape. */
int64_t ref_flat(int rank, const int64_t *shape, const int64_t *idx);

tc_status ref_eval_pointwise(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_cast(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_reduce(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_view(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_copy(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_concat(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_scan(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);
tc_status ref_eval_matmul(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out);

/* in[k] of each is the value of n->in[k]. */

/* The op's spelling in ops.def ("max" for rmax), for messages. */
const char *ref_op_name(op_id op);

/* "[3, 4]" into buf, for messages. */
const char *ref_shape_str(int rank, const int64_t *shape, char *buf, size_t n);

#endif
