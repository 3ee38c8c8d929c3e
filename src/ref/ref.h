/* ref.h - the reference interpreter: the oracle for every correctness test.
 *
 * Evaluates a gfn on the CPU, node by node in topological order, each value
 * fully materialized.  Float arithmetic is in f64 and every stored value is
 * rounded to the node's dtype (dtype_round: f16/bf16 round-to-nearest-even),
 * which is what a correct kernel computing in f32 (f16/bf16 math in f32) must
 * approximate.  Integers and bools are carried exactly as int64 and computed
 * in int64 with two's-complement wrap, as the kernels compute them.  Float
 * reductions accumulate in f64; var/std use two passes; logsumexp subtracts
 * the max; argmax/argmin return the first index (i64).  It is written to be
 * obviously right, not fast.
 */
#ifndef TC_REF_H
#define TC_REF_H

#include "graph/graph.h"

/* A host tensor: contiguous row-major, each value already representable in
 * dtype; rank 0 has one element.  One lane is used, by dtype class, and the
 * other is NULL (so a reader of the wrong lane crashes rather than misreads):
 *   data   floats (f16 bf16 f32 f64), one double per element
 *   idata  integers and bool (i32 i64 bool; bool is 0 or 1), one int64 per
 *          element: exact, where a double would lose i64 beyond 2^53
 * Both malloc'd by ref_alloc; ref_free frees them. */
typedef struct ref_tensor {
    tc_dtype dtype;
    int rank;
    int64_t shape[TC_MAX_RANK];
    double *data;
    int64_t *idata;
} ref_tensor;

/* Whether dtype t is carried in idata (i32, i64, bool). */
bool ref_is_int(tc_dtype t);
/* Element i as a double: floats exactly, integers rounded to the nearest
 * double (for printing and float math; integer paths use ref_geti). */
double ref_getf(const ref_tensor *t, int64_t i);
/* Element i of an integer or bool tensor; of a float tensor, cast as
 * dtype_f2i(TC_I64) does. */
int64_t ref_geti(const ref_tensor *t, int64_t i);
/* Store v into element i, converted to t's dtype as a cast converts it
 * (docs/semantics.md, "Edges"): ref_setf a float value (floats round,
 * integers truncate and saturate, NaN 0), ref_seti an integer value (i32
 * wraps, bool is v != 0, floats round once to nearest even). */
void ref_setf(ref_tensor *t, int64_t i, double v);
void ref_seti(ref_tensor *t, int64_t i, int64_t v);
/* dst[i] = src[j] converted to dst's dtype as a cast converts it. */
void ref_convert(ref_tensor *dst, int64_t i, const ref_tensor *src, int64_t j);
int64_t ref_numel(const ref_tensor *t);
/* How far a computed element is from the reference's: |got - want|, 0 when
 * both are the same NaN-ness or the same infinity, infinite when only one is
 * NaN or infinite.  --check and the benchmarks judge float results by it;
 * integer results must be equal (ref_geti). */
double ref_elem_err(double got, double want);
/* Largest value ref_run will materialize, in elements (8 GiB of doubles or
 * int64s): beyond it a value is an argument error, located, not a failed
 * malloc that a sanitizer may turn into an abort.  Callers that hold larger
 * tensors (`tensorc run --device=cuda` keeps its inputs and outputs as
 * ref_tensors) check it before they ask for the interpreter. */
#define REF_MAX_ELEMS ((int64_t)1 << 30)

/* Allocate (zeroed), of any size (REF_MAX_ELEMS bounds the interpreter's
 * values, not this).  Returns false on overflow or out of memory. */
bool ref_alloc(ref_tensor *t, tc_dtype dt, int rank, const int64_t *shape);
void ref_free(ref_tensor *t);

/* Run f.  args: f->nparams tensors in parameter order (scalars rank 0),
 * with shapes agreeing with the bindings b (see bind.h: call graph_bind
 * first).  outs: f->noutputs tensors, allocated here; the caller frees them
 * with ref_free.  Returns TC_OK, or an error set in d (diag_set). */
tc_status ref_run(const gfn *f, const tc_dimbind *b, int nb, const ref_tensor *args,
                  ref_tensor *outs, tc_diag *d);

#endif
