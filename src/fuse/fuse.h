/* fuse.h - grouping lowered nodes into kernels.
 *
 * Anchors are the nodes a kernel must produce: reductions (never computed
 * twice), externs (matmul), and stores (outputs, and values an extern reads).
 * Every other pointwise or concat node is inlined: recomputed, from buffers,
 * wherever it is read, which costs arithmetic but no memory traffic.
 *
 * Each anchor starts in a kernel of its own; then, in topological order, an
 * anchor is merged with the kernels of the anchors its inlined expression
 * reads when the rules of architecture.md allow it:
 *
 *   - pointwise + pointwise: the same iteration domain (shape);
 *   - a pointwise store over a reduction's input domain: its prologue (the
 *     values are produced in the reduction's first pass) or, when the
 *     reduction is over trailing axes with rows left over, its epilogue
 *     (a last pass over the row after the reductions; softmax, layernorm);
 *   - a pointwise store over the reduction's rows (mean = sum / n): always;
 *   - two reductions over the same domain and axes (layernorm's mean and
 *     var, the normalized residual's two norms): one kernel, one pass each;
 *   - never an extern; never when the merged kernel would both feed and
 *     read another kernel (a cycle); never when a reduction would be read at
 *     another row than the one computing it (it would need a grid-wide sync).
 *
 * Then pointwise stores with the same domain that read a common buffer are
 * merged horizontally (AdamW's three updated buffers come from one kernel).
 * Every decision is recorded with its reason for `tensorc explain`.
 *
 * fuse_print() gives --emit=fused:
 *     kernel 0 tc_red_fused_max_sub_exp_sum_div_0: reduce over [N, D] axes [1]
 *       reduces %1 max, %5 sum
 *       stores  %7 -> out
 *       inlines %3 sub, %4 exp
 *       reads   x
 */
#ifndef TC_FUSE_H
#define TC_FUSE_H

#include "lower/lir.h"

typedef enum { KK_POINTWISE, KK_REDUCE, KK_EXTERN } kernel_kind;

typedef struct fkernel {
    int id;                 /* launch order */
    kernel_kind kind;
    int rank;
    const tc_dim **dom;     /* the element domain: a store's shape, a reduction's input shape */
    unsigned mask;          /* KK_REDUCE: reduced axes of dom */
    bool inner;             /* KK_REDUCE: the reduced axes are the trailing ones and some axis is kept */
    lnode **reds;           /* KK_REDUCE: reductions computed here, topological order */
    int nreds;
    lnode **stores;         /* values written to buffers, topological order */
    int nstores;
    lnode *ext;             /* KK_EXTERN: the matmul */
    lnode **inl;            /* pointwise and concat nodes computed inline, topological order */
    int ninl;
    lnode **reads;          /* stored nodes (parameters, other kernels' stores) it loads */
    int nreads;
    const char *name;       /* tc_red_fused_exp_max_sub_sum_div_0; the op for an extern */
    int passes;             /* the cost model (fuse_budget): reduction passes, */
    int work;               /* nodes computed, once per pass that needs them, */
    int regs;               /* and estimated registers a thread */
} fkernel;

typedef struct fdecision {
    const lnode *producer, *consumer;  /* anchors */
    bool fused;
    const char *why;
    const char *limit;      /* refused by the budget: "passes", "work" or "registers"; else NULL */
} fdecision;

/* A pointwise value stored because its inlined expression passed
 * max_inline nodes (it became an anchor). */
typedef struct fcut {
    const lnode *n;
    int size;               /* the nodes its expression would have inlined */
    int reds;               /* the reductions it would have read */
} fcut;

typedef struct fuse_budget {
    int max_passes;
    int max_work;
    int max_inline;
    int max_regs;
} fuse_budget;

extern const fuse_budget fuse_default_budget;

typedef struct ffn {
    const lfn *l;
    fkernel **k;            /* launch order */
    int nk;
    int *kernel_of;         /* lnode id -> kernel id of an anchor, -1 for others */
    bool *stored;           /* lnode id -> lives in a buffer (parameter or written by a kernel) */
    fdecision *dec;
    int ndec;
    fcut *cut;
    int ncut;
    fuse_budget budget;     /* the budget it was fused under */
} ffn;

/* Group f's nodes into kernels.  Errors unwind through d (TC_ERR_INTERNAL). */
ffn *fuse_fn(const lfn *f, tc_arena *a, tc_diag *d);
/* The same under another budget (tests). */
ffn *fuse_fn_budget(const lfn *f, const fuse_budget *b, tc_arena *a, tc_diag *d);

void fuse_print(tc_buf *b, const ffn *f);
/* The `tensorc explain` text: every pair of anchors considered, fused or
 * not, and why; every inlined node and where. */
void fuse_explain(tc_buf *b, const ffn *f);
/* Check: every anchor in exactly one kernel, launch order respects reads,
 * reductions read only by their own row or from a buffer. */
void fuse_verify(const ffn *f, tc_diag *d);

/* For codegen and sched: the natural index of a store or reduction node n
 * of kernel k over k's element variables: identity for an element-level
 * node, the row's variables (0 for keepdim dims) for a row-level one.
 * Returns false if n's shape fits neither (not a valid member). */
bool fuse_node_index(const ffn *f, const fkernel *k, const lnode *n, const tc_dim **out);
/* Whether node n of kernel k is element-level (shape = the domain). */
bool fuse_is_element(const fkernel *k, const lnode *n);

#endif
