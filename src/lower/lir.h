/* lir.h - the lowered IR: loops without loops.
 *
 * Lowering (lower.c) turns one function's op graph into nodes of three kinds,
 * each defined by what it computes at one index of its output:
 *
 *   Pointwise   op(in[0] at idx0, in[1] at idx1, ...)   (also casts, copies)
 *   Reduction   kind over the reduced axes of its input domain
 *   Extern      matmul (cuBLAS at run time; a fusion barrier)
 *   Scan        op (cumsum cumprod cummax cummin logcumsumexp) along one
 *               axis: the value at index i combines in[0] at the indices
 *               before it along the axis (after it with reverse), i included
 *
 * plus leaves (tensor parameters, run-time scalars, constants, sizes).
 *
 * Views are gone: a node reads another through an lref, the source node and
 * one index expression per source dim, written over the reader's index
 * variables.  Index variables are the symbols "$0", "$1", ... of the
 * function's dim context (names no user dim can have); index expressions
 * are canonical tc_dims, so two reads of the same element are the same
 * pointers.  A broadcast reads with a constant 0, a slice adds its start,
 * a step multiplies, a permutation reorders, x.T swaps.  A reshape that no
 * per-dim map describes reads through flat-offset arithmetic: floor
 * divisions and remainders of the flat index.
 *
 * iota is a Pointwise node without operands (op OP_iota): its value at an
 * index is that index's a.axis entry.  A Gather node's in[1] (the index,
 * i32 or i64) is read at the node's own index; in[0] (the source) is a
 * whole buffer of the node's rank, read with $axis standing for the
 * position the index gives: in[0].idx is exactly $0..$rank-1 (lowering
 * copies a view first), so codegen addresses it as a row-major buffer.
 *
 * Index variables of a node: Pointwise, Concat and Scan nodes are evaluated over
 * their own shape ($k is output dim k).  A Reduction's input ref is over its
 * input domain (rin dims, $k = input dim k); its output dim j reads input
 * dim red_out_axis(n, j).
 *
 * A Scan's opdt is its input's dtype; it carries in f32 for f16/bf16 (f64
 * for f64, i64 for integer cumsum/cumprod, the dtype for integer
 * cummax/cummin), as the reference does in f64 and int64.
 *
 * Composite reductions are expanded here: mean = sum / n; var = two-pass
 * sum((x - mean)^2) / max(n - correction, 0) (stable, as the reference
 * interpreter does it); std = sqrt(var); logsumexp = m + log(sum(exp(x - m)))
 * with m = max (guarded for infinite m).  Primitive kinds: sum, prod, max,
 * min, argmax, argmin.  f16/bf16 values are computed in f32; reductions
 * accumulate in f32 (f64 for f64, i64 for integer sums).
 *
 * Nodes are hash-consed: the same op over the same refs is one node, so
 * layernorm's mean and the mean inside its var are computed once.
 *
 * Files: lower.c lowers; lir.c answers queries on the IR for the later
 * stages (strides, composition, flat offsets, coefficients, reduction rows);
 * print.c prints (--emit=lowered) and verifies (lir_verify).
 *
 * lir_print() gives --emit=lowered, e.g.
 *     %4 = exp(%3[$0, $1]) : f32[N, D]                       # softmax.tc:7:9
 *     %5 = sum(%4[$0, $1], axes=[1]) : f32[N, 1]
 *     %7 = div(%4[$0, $1], %5[$0, 0]) : f32[N, D]
 */
#ifndef TC_LIR_H
#define TC_LIR_H

#include "graph/graph.h"

typedef enum {
    LK_INPUT,    /* tensor parameter: a.param */
    LK_SCALAR,   /* run-time scalar parameter: a.param */
    LK_CONST,    /* a.cnst */
    LK_DIMVAL,   /* a size used as a value: a.dim (i64) */
    LK_POINTWISE,/* op (unary, binary, ternary, cast, copy) over in[] */
    LK_REDUCE,   /* a.red over in[0] */
    LK_CONCAT,   /* in[k] where offset[k] <= $axis < offset[k+1] */
    LK_MATMUL,   /* in[0] @ in[1], batched; extern */
    LK_SCAN,     /* op (cumsum, ...) of in[0] along a.scan.axis */
    LK_GATHER,   /* in[0] at in[1]'s value along a.axis (torch.gather) */
} lkind;

typedef enum { RK_SUM, RK_PROD, RK_MAX, RK_MIN, RK_ARGMAX, RK_ARGMIN } red_kind;

typedef struct lnode lnode;

typedef struct lref {
    lnode *src;
    const tc_dim **idx;     /* src->rank expressions over the reader's index vars */
} lref;

struct lnode {
    int id;                 /* position in lfn.nodes, printed %id */
    lkind kind;
    op_id op;               /* LK_POINTWISE: the ops.def op (OP_copy for a copy) */
    tc_dtype dtype;         /* the value's dtype (its storage type when stored) */
    tc_dtype opdt;          /* LK_POINTWISE: the dtype operands are converted to first */
    int rank;
    const tc_dim **shape;
    lref *in;
    int nin;
    tc_loc loc;
    const char *name;       /* user variable, for dumps and kernel names; may be NULL */
    int nuses;              /* readers among lfn.nodes, plus one per output */
    int output;             /* index in lfn.outputs of the first output it is, or -1 */
    union {
        int param;
        struct { double f; int64_t i; } cnst;
        const tc_dim *dim;
        struct {
            red_kind kind;
            int rin;                    /* rank of the input domain */
            const tc_dim **shape_in;    /* the input domain */
            unsigned mask;              /* reduced axes of the input domain, bit k = axis k */
            bool keepdim;
        } red;
        struct {
            int axis;
            const tc_dim **offsets; /* nin + 1 entries: start of each input, then the total */
        } cat;
        struct {
            int batch;              /* leading batch dims of the output (rank - 2) */
        } mm;
        int axis;                   /* iota (LK_POINTWISE), LK_GATHER */
        struct {
            int axis;               /* the scanned axis; in[0] has the node's shape */
            bool reverse;           /* from the last element to the first */
        } scan;
    } a;
};

typedef struct loutput {
    const char *name;
    lnode *node;
    int inout_param;        /* as goutput */
} loutput;

typedef struct lfn {
    const gfn *g;           /* the op graph it came from (params, syms, constraints) */
    tc_dimctx *dims;
    lnode **nodes;          /* topological order */
    int nnodes, cap;
    loutput *outputs;
    int noutputs;
    const tc_dim *vars[TC_MAX_RANK + 1];  /* the index variables $0..$8 ($8: a contraction) */
    const char *varnames[TC_MAX_RANK + 1];
} lfn;

/* Lower f (already verified).  Errors (TC_ERR_UNSUPPORTED for a form not
 * lowered yet, TC_ERR_INTERNAL) unwind through d at the node's location. */
lfn *lower_fn(const gfn *f, tc_dimctx *dims, tc_arena *a, tc_diag *d);

void lir_print(tc_buf *b, const lfn *f);
/* Check ref ranks, index variables in range, topological order, shapes of
 * reductions; a failure is TC_ERR_INTERNAL through d. */
void lir_verify(const lfn *f, tc_diag *d);

/* Output dim j of reduction n reads input-domain dim red_out_axis(n, j); a
 * keepdim output's reduced dims give the reduced axis itself. */
int red_out_axis(const lnode *n, int j);
/* The index expressions, over the input domain's variables, at which an
 * element of the input domain finds its reduction result (kept axes are
 * their variable, keepdim's reduced dims 0).  out has n->rank entries. */
void red_row_index(const lfn *f, const lnode *n, const tc_dim **out);

/* Contiguous row-major strides of shape (rank entries) into out. */
void lir_strides(tc_dimctx *c, int rank, const tc_dim *const *shape, const tc_dim **out);
/* Compose: the expressions of r.idx with the reader's variables replaced by
 * at[0..nat) (what the reader is evaluated at).  out has r.src->rank entries. */
void lir_compose(const lfn *f, const lref *r, const tc_dim *const *at, int nat,
                 const tc_dim **out);
/* The element offset in n's contiguous row-major buffer of index idx
 * (n->rank expressions): what a load or store of n at idx addresses. */
const tc_dim *lir_flat(const lfn *f, const lnode *n, const tc_dim *const *idx);
/* The coefficient of index variable $v in e when e changes by a constant
 * as $v steps by one (linear in it), else 0. */
int64_t lir_coeff(const lfn *f, const tc_dim *e, int v);
/* True when idx (rank entries) is exactly $0..$rank-1. */
bool lir_is_identity(const lfn *f, const tc_dim *const *idx, int rank);
/* n is a float x ** 2 with the exponent the constant 2: codegen writes x * x
 * (the correctly rounded square), which the unrolled budget counts as cheap */
bool lir_pow_square(const lnode *n);

const char *red_kind_name(red_kind k);

#endif
