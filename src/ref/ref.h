/* ref.h - the reference interpreter: the oracle for every correctness test.
 *
 * Evaluates a gfn on the CPU, node by node in topological order, each value
 * fully materialized.  All arithmetic is in f64 and every stored value is
 * rounded to the node's dtype (dtype_round: f16/bf16 round-to-nearest-even),
 * which is what a correct kernel computing in f32 (f16/bf16 math in f32) must
 * approximate.  Reductions accumulate in f64; var/std use two passes;
 * logsumexp subtracts the max; argmax/argmin return the first index (i64).
 * It is written to be obviously right, not fast.
 */
#ifndef TC_REF_H
#define TC_REF_H

#include "graph/graph.h"

/* A host tensor: contiguous row-major, one double per element, each value
 * already representable in dtype.  data is malloc'd; rank 0 has one element. */
typedef struct ref_tensor {
    tc_dtype dtype;
    int rank;
    int64_t shape[TC_MAX_RANK];
    double *data;
} ref_tensor;

int64_t ref_numel(const ref_tensor *t);
/* How far a computed element is from the reference's: |got - want|, 0 when
 * both are the same NaN-ness or the same infinity, infinite when only one is
 * NaN or infinite.  --check and the benchmarks judge results by it. */
double ref_elem_err(double got, double want);
/* Allocate (zeroed).  Returns false on overflow or out of memory. */
bool ref_alloc(ref_tensor *t, tc_dtype dt, int rank, const int64_t *shape);
void ref_free(ref_tensor *t);

/* Run f.  args: f->nparams tensors in parameter order (scalars rank 0),
 * with shapes agreeing with the bindings b (see bind.h: call graph_bind
 * first).  outs: f->noutputs tensors, allocated here; the caller frees them
 * with ref_free.  Returns TC_OK, or an error set in d (diag_set). */
tc_status ref_run(const gfn *f, const tc_dimbind *b, int nb, const ref_tensor *args,
                  ref_tensor *outs, tc_diag *d);

#endif
