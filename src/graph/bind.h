/* bind.h - binding run-time sizes to a function's symbolic dims.
 *
 * Shared by the reference interpreter, the CLI and the API (tc_run): given
 * the shapes of the tensors a caller passes and any explicit sizes
 * (--shape N=64), solve every symbol of the signature, check that each
 * argument's shape agrees, and check the graph's constraints (slice bounds).
 * Messages name the parameter and the dim: "parameter 'g' dim 0 is 64, but D
 * is 128 (bound by 'x' dim 1)".
 */
#ifndef TC_BIND_H
#define TC_BIND_H

#include "graph.h"

/* What the caller supplies for one parameter.  A tensor given as shape
 * (given = true); for a [*] parameter pass the element count as a rank-1
 * shape.  Scalars: given = false, rank 0. */
typedef struct bind_arg {
    bool given;
    int rank;
    int64_t shape[TC_MAX_RANK];
} bind_arg;

/* args has f->nparams entries (NULL: none given).  On success *out holds a
 * value for every symbol in f->syms (arena-allocated, *nout entries).  Errors
 * (TC_ERR_INVALID_ARG) are set in d with diag_set, not thrown; the location is
 * the parameter's. */
tc_status graph_bind(const gfn *f, const bind_arg *args, const tc_dimbind *extra, int nextra,
                     tc_arena *a, tc_diag *d, tc_dimbind **out, int *nout);

/* A dim's value under bindings (every symbol must be bound). */
int64_t bind_eval(const tc_dim *dim, const tc_dimbind *b, int nb);

#endif
