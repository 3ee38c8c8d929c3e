/* fuse.h - grouping lowered nodes into kernels.
 *
 * Anchors are the nodes a kernel must produce: reductions (never computed
 * twice), externs (matmul), and stores (outputs, and values an extern reads).
 * Every other pointwise or concat node is inlined: recomputed, from buffers,
 * wherever it is read, which costs arithmetic but no memory traffic.
 *
 * Each anchor starts in a kernel of its own; then, in topological order, an
 * anchor is merged with the kernels of the anchors its inlined expression
 * reads when these rules allow it:
 *
 *   - pointwise + pointwise: the same iteration domain (shape);
 *   - a pointwise store over a reduction's input domain: its prologue (the
 *     values are produced in the reduction's first pass) or, when the
 *     reduction is over trailing axes with rows left over, its epilogue
 *     (a last pass over the row after the reductions; softmax, layernorm);
 *   - a pointwise store over the reduction's rows (mean = sum / n): always;
 *   - two reductions over the same domain and axes (layernorm's mean and
 *     var, the normalized residual's two norms): one kernel, one pass each;
 *   - scans (KK_SCAN) over one domain, axis and direction: one kernel
 *     (minGRU's cumsum and the logcumsumexp that reads it), with the
 *     pointwise stores over that domain that read a scan of the kernel (its
 *     epilogue) or that a scan of it reads (prologue); a scan of the kernel
 *     is read only at its own element, which the sequential walk along the
 *     axis has just computed;
 *   - a matmul (extern) with a pointwise kernel that reads its product
 *     (its epilogue: bias, activation, residual add, cast, a product with
 *     another tensor), run on each element of the output tile inside the
 *     generated matmul kernel as the tile is stored: only where that kernel
 *     is certain at compile time (fuse_matmul_generated: f16/bf16 with M a
 *     constant <= FUSE_MM_MAX_ROWS, or TENSORC_MATMUL=generated), for a
 *     2-d product, over the product's own shape, reading the product only
 *     at the element being stored (it is the accumulator) and feeding
 *     neither operand; the product itself is still stored.  Never two
 *     matmuls; TENSORC_MATMUL_EPILOGUE=off keeps every matmul apart;
 *   - an RMSNorm-like rows kernel whose only store is a matmul's left
 *     operand: its work moves into the generated matmul ((r * x) @ W =
 *     r * (x @ W); fuse_mm_norm below), the kernels staying two for the
 *     launches cuBLAS takes;
 *   - two matmuls of one left operand (a gated MLP): the later's generated
 *     kernel computes both (fuse_mm_pairs below), likewise; and LoRA's
 *     three (fuse_mm_lora);
 *   - where M is symbolic, a matmul's pointwise epilogue kernel: the
 *     generated kernel computes its stores too (fuse_mm_epilogues below),
 *     the kernel staying for the launches cuBLAS takes;
 *   - after the merges, a column-sum kernel whose input is pointwise in a
 *     rows kernel's values over the same domain, or reads the same
 *     buffers at its own element, is carried by the rows kernel as partial
 *     sums per block of rows, and only combines them (column partials,
 *     below: layernorm's backward reads x and dout once);
 *   - never another extern; never when the merged kernel would both feed and
 *     read another kernel (a cycle); never when a reduction would be read at
 *     another row than the one computing it (it would need a grid-wide sync).
 *
 * Then pointwise stores with the same domain that read a common buffer are
 * merged horizontally (AdamW's three updated buffers come from one kernel);
 * in an elementwise function every pointwise kernel is merged, common
 * input or not, so it is always one kernel (foreach runs exactly one).
 * Every decision is recorded with its reason for `tensorc explain`.
 *
 * Each merge is checked before it is made, against the two kernels as they
 * are: the domain rules above, no cycle through a third kernel (a walk over
 * kernels), reductions read at their own row, and the passes: a reduction
 * runs one pass after the latest one its input needs; a rows kernel writes
 * element-level stores in its epilogue, but a columns or whole-tensor
 * kernel writes them in its first pass, so there they may read none of the
 * kernel's own reductions, and a whole-tensor kernel has one pass.
 *
 * The budget (fuse_budget, defaults in fuse_default_budget) bounds what one
 * kernel costs to compile and run, so programs that grow without bound
 * (stacked normalizations, long chains) give kernels of bounded size:
 *
 *   max_passes  8    reduction passes in one kernel: a merge that would
 *                    need more is refused, and the next kernel reads the
 *                    earlier results from memory (each pass recomputes the
 *                    inlined chain before it, so a kernel of P passes does
 *                    O(P^2) work).
 *   max_work    768  nodes computed by one kernel, each counted once per
 *                    pass that recomputes it, the epilogue included.
 *   max_inline  96   a pointwise value whose inlined expression would hold
 *                    more nodes than this, or read more than max_passes
 *                    reductions, is stored instead (an anchor: fcut), so no
 *                    kernel recomputes an unbounded chain from its start;
 *                    in its readers' kernel it is still computed inline.
 *   max_regs    200  estimated registers a thread: 24, 2 per reduction and
 *                    per buffer read, and 16 per buffer a rows kernel reads
 *                    over the whole domain (its persistent path keeps 16
 *                    elements a thread of each).
 *
 * The scheduler adds its share (src/sched): kernels whose work would be
 * unrolled past 1,024 nodes (vector lanes, a rows kernel's registers) and
 * functions past 8,192 in all are scalar and looped.  An elementwise
 * function is exempt from the fusion limits (one kernel whatever its size);
 * its cost is still measured.  Each refusal names the limit it hit
 * (fdecision.limit) and `tensorc explain` prints the budget, each split
 * and each kernel's cost.  Fusion itself is near-linear in program size:
 * every check walks only the two kernels' members or inlined expressions,
 * which the budget bounds, and the launch order is Kahn's over kernel
 * edges with a heap.
 *
 * The pass is in src/fuse: the driver (fuse.c), the rules (fuse_rules.c),
 * the cost (fuse_cost.c), the merge passes (fuse_merge.c), the kernels
 * (fuse_kernels.c), printing (fuse_print.c, fuse_dot.c, fuse_json.c) and the verifier
 * (fuse_verify.c); fuse_internal.h says what they share.
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

#include "knobs.h"
#include "lower/lir.h"

typedef enum { KK_POINTWISE, KK_REDUCE, KK_EXTERN, KK_SCAN } kernel_kind;

/* An attention kernel (fuse_attn.c): softmax(s) @ v where s is a pointwise
 * function of a product q @ k^T over the same key axis, as one kernel. */
typedef struct fattn {
    const lnode *qk;        /* the scores' product, [batch.., M, L] */
    const lnode *score;     /* softmax's f32 input, a pointwise function of qk */
    lref q, k, v;           /* the operands as buffers (through copies): q and k over
                             * qk's variables ($rank: the head dim), v over the output
                             * product's ($rank: the key) */
    unsigned kvaxes;        /* batch axes of qk that k and v vary along */
    int64_t d;              /* the head dim (a constant) */
    int64_t kstride, vstride; /* elements from one key to the next in k and v */
} fattn;

typedef struct fkernel {
    int id;                 /* launch order */
    kernel_kind kind;
    int rank;
    const tc_dim **dom;     /* the element domain: a store's shape, a reduction's input shape */
    unsigned mask;          /* KK_REDUCE: reduced axes of dom; KK_SCAN: the scanned axis */
    bool reverse;           /* KK_SCAN: scans from the last element */
    bool inner;             /* KK_REDUCE: the reduced axes are the trailing ones and some axis is kept */
    lnode **reds;           /* KK_REDUCE: reductions computed here, topological order;
                             * KK_SCAN: its scans (stored or not: in stores too if stored) */
    int nreds;
    lnode **stores;         /* values written to buffers, topological order */
    int nstores;
    lnode *ext;             /* KK_EXTERN: the matmul (attention: the output product) */
    const fattn *attn;      /* KK_EXTERN: an attention kernel (fuse_attn.c), else NULL */
    lnode **inl;            /* pointwise and concat nodes computed inline, topological order */
    int ninl;
    lnode **reads;          /* stored nodes (parameters, other kernels' stores) it loads */
    int nreads;
    const char *name;       /* tc_red_fused_exp_max_sub_sum_div_0; matmul_3 for an extern */
    const char *stem;       /* the name without "_" and id, for names built from parts */
    /* column partials (fuse_colpart.c): a rows kernel carries the column
     * reductions `cols` (another kernel's reds) as partial sums over blocks
     * of FUSE_COL_ROWS rows, and that kernel (`partials`: this rows kernel)
     * only combines them, reading no input of its own */
    lnode **cols;
    int ncols;
    const struct fkernel *partials;
    int passes;             /* the cost model (fuse_budget): reduction passes, */
    int work;               /* nodes computed, once per pass that needs them, */
    int regs;               /* and estimated registers a thread */
} fkernel;

typedef struct fdecision {
    const lnode *producer, *consumer;  /* anchors */
    bool fused;
    const char *why;
    const char *limit;      /* refused by the budget: "passes", "work" or "registers"; else NULL */
    bool superseded;        /* both anchors went into one kernel by a later rule (the attention
                             * rule): explain prints a count, --json marks it */
} fdecision;

/* A pointwise value stored because its inlined expression passed
 * max_inline nodes (it became an anchor). */
typedef struct fcut {
    const lnode *n;
    int size;               /* the nodes its expression would have inlined */
    int reds;               /* the reductions it would have read */
} fcut;

/* The budget: see the top of this file. */
typedef struct fuse_budget {
    int max_passes;         /* reduction passes a kernel */
    int max_work;           /* nodes computed a kernel, once per pass that needs them */
    int max_inline;         /* nodes of one value's inlined expression */
    int max_regs;           /* estimated registers a thread */
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
    int nbeside;            /* kernels the matmul rules launch only beside cuBLAS (M past the
                             * generated kernel's rows at run time): fuse_mm_prologues */
    fcut *cut;
    int ncut;
    fuse_budget budget;     /* the budget it was fused under */
    tc_knobs knobs;         /* the context's tuning knobs (knobs.h): fusion's and scheduling's */
} ffn;

/* Group f's nodes into kernels under the tuning knobs k (NULL: none set,
 * knobs_default).  Errors unwind through d (TC_ERR_INTERNAL). */
ffn *fuse_fn(const lfn *f, const tc_knobs *k, tc_arena *a, tc_diag *d);
/* The same under another budget, no knobs (tests). */
ffn *fuse_fn_budget(const lfn *f, const fuse_budget *b, tc_arena *a, tc_diag *d);

void fuse_print(tc_buf *b, const ffn *f);
/* The `tensorc explain` text: the budget; every value stored by the inline
 * limit; every pair of anchors considered, fused, refused or split by the
 * budget, and why; each kernel's cost; every inlined node and where. */
void fuse_explain(tc_buf *b, const ffn *f);
/* --emit=dot: fns[0..n) as one graphviz digraph, a cluster per function
 * and inside it one per kernel holding the nodes the kernel computes
 * (fuse_dot.c). */
void fuse_dot(tc_buf *b, const ffn *const *fns, int n);
struct tc_json;
/* `tensorc explain --json`: f as one object of docs/schema/explain.json's
 * "functions" (fuse_json.c). */
void fuse_explain_json(struct tc_json *j, const ffn *f);
/* Check: every anchor in exactly one kernel, launch order respects reads,
 * reductions read only by their own row or from a buffer. */
void fuse_verify(const ffn *f, tc_diag *d);

/* Column partials (fuse_colpart.c, after the merges): a column reduction
 * kernel C (sums over the leading axes of [rows.., cols..]) whose inputs
 * are pointwise in the values of a rows kernel K over the same domain (its
 * stores at their element, its reductions at their own row: the row
 * statistics), in x and in buffers written before K, is carried by K: each
 * of K's blocks takes FUSE_COL_ROWS consecutive rows (a constant, so the
 * sums' order does not depend on the launch), its threads keep each
 * column's sum across those rows (registers where the row is, else the
 * partials buffer), and writes partials[block][cols]; C then only sums the
 * partials over blocks in block order.  A C that reads none of K's values
 * but one of K's buffers at its own element (the vjp pair's backward: x
 * and dout, the statistics saved) is carried by the latest such K.  K's
 * stores that only C read are no longer stored.  So K's inputs are read once
 * (layernorm's backward: x and dout once, dx, dw, db in 2 kernels).
 * Only float sums; C must store nothing per element and have one pass.
 * 64 rows a block: 16384 rows are 256 blocks, about 2 an SM of an H100 or
 * H200, and the partials cost 2 x 4 bytes per column per 64 rows (1.5 % of
 * layernorm's backward traffic at 16384 x 4096, two sums).  Measured on an
 * H200 (2026-11-27, one call each, checked): layernorm's backward at
 * 16384 x 4096 f32 235.1 us at 32 rows, 227.8 at 64 (227.7 the session
 * before; 254.1 at 16); rmsnorm's 219.9 and 218.6. */
#define FUSE_COL_ROWS 64
/* The rows a block under the knobs k: TENSORC_COL_ROWS (an A/B: 1 to
 * 1024), else FUSE_COL_ROWS.  The same for the rows kernel and the kernel
 * combining its partials (both of one ffn, so of one set of knobs). */
int fuse_col_rows(const tc_knobs *k);

/* The attention rule (fuse_attn.c, after the merges): a matmul whose
 * left operand is a softmax over the key axis of a pointwise function of
 * another matmul (q @ k^T) becomes one kernel with it, the softmax and
 * q @ k^T, when the kernels between them compute nothing else, their
 * values are read nowhere else, the head dim is a constant of at most
 * FUSE_ATTN_MAX_D and both operands read their head dim contiguously.
 * TENSORC_ATTENTION=off keeps the matmuls and softmax apart. */
#define FUSE_ATTN_MAX_D 256
void fuse_attention(ffn *o, tc_arena *a);

/* The most rows (M) of a product the generated matmul kernel takes by
 * default (sched_matmul.c's cost model). */
#define FUSE_MM_MAX_ROWS 16
/* Whether matmul m runs on the generated kernel whatever M is at launch,
 * as sched_matmul.c decides it (so an epilogue may be fused into it). */
bool fuse_matmul_generated(const tc_knobs *k, const lnode *m);

/* The row-scale rule (fuse_mmrules.c says when and why): matmul kernel mk's
 * left operand A[i, k] = P[i, k] * R[i] (* G[k]) is the only store of an
 * RMSNorm-like rows kernel whose one reduction is S[i] = sum_k P[i, k]^2,
 * P being x or a float cast of x.  Wherever the generated kernel runs it
 * computes the product from x instead (G scaling each loaded tile, S
 * accumulated beside the product, R(S) multiplied into each row), and the
 * rows kernel runs only for the launches cuBLAS takes.  The kernels stay
 * two in the fused function (the cuBLAS launches need both); `explain`
 * records the rule as a decision.  TENSORC_MATMUL_NORM=off turns it off
 * (the A/B of the fused kernel against the rows kernel and the matmul). */
typedef struct fmmnorm {
    const fkernel *rows;    /* the kernel that stores A */
    const lnode *x;         /* [M, K], the matmul's dtype, in a buffer */
    const lnode *p;         /* x, or the cast of x that is squared */
    const lnode *g;         /* [K], the matmul's dtype, in a buffer; NULL without */
    const lnode *r;         /* [M, 1], the row scale */
    const lnode *ss;        /* the reduction S */
} fmmnorm;
bool fuse_mm_norm(const ffn *f, const fkernel *mk, fmmnorm *out);
/* The pair rule (fuse_mmrules.c): two matmul kernels of one left operand
 * (a gated MLP's x @ W1 and x @ W3), same dtype, shapes and layouts, the
 * earlier with no epilogue, read by no kernel before the later and by the
 * later's epilogue only at the element it stores: the later's generated
 * kernel computes both, the earlier runs only for the launches cuBLAS
 * takes.  Returns, per kernel, the kernel it pairs with or
 * -1 (the lower id is the one computed by the other). */
int *fuse_mm_pairs(const ffn *f, tc_arena *a);
/* The adapter rule (fuse_mmrules.c): LoRA's x @ W + (x @ A) @ B.  Matmul
 * kernel kq computes q = t @ B where t = x @ A (kernel t, read by q alone)
 * and another kernel p computes x @ W of q's shape, all three right
 * operands laid out alike, no epilogue on t's or p's kernel, p read by no
 * kernel before kq and by kq's epilogue only at the element it stores: q's generated kernel computes p too and q as the sum
 * over K slices of (x_s @ A_s) @ B (t rounded per slice, not whole); t's
 * and p's kernels run only for the launches cuBLAS takes.  Pairs
 * (fuse_mm_pairs) leave these kernels alone.  Opt-in for now:
 * TENSORC_MATMUL_LORA=on (its kernel has not run on a GPU yet). */
typedef struct fmmlora {
    const fkernel *t;       /* x @ A */
    const fkernel *p;       /* x @ W */
} fmmlora;
bool fuse_mm_lora(const ffn *f, const fkernel *kq, fmmlora *out, tc_arena *a);
/* The epilogue rule (fuse_mmrules.c): where a matmul's generated kernel is
 * possible but not certain (M symbolic), a later pointwise kernel E over
 * the product's own 2-d shape, reading the product (and the other product
 * the generated kernel computes by the pair or adapter rule) only at the
 * element being stored, everything else it reads written before the
 * matmul's kernel under either engine, and writing no output in place: the
 * generated kernel computes E's stores in its epilogue too, E runs only
 * for the launches cuBLAS takes (TENSORC_MATMUL_DUAL=off: never).
 * Returns, per kernel, the matmul kernel that computes it (E's id to the
 * matmul kernel's), else -1. */
int *fuse_mm_epilogues(const ffn *f, tc_arena *a);

/* For codegen and sched: the natural index of a store or reduction node n
 * of kernel k over k's element variables: identity for an element-level
 * node, the row's variables (0 for keepdim dims) for a row-level one.
 * Returns false if n's shape fits neither (not a valid member). */
bool fuse_node_index(const ffn *f, const fkernel *k, const lnode *n, const tc_dim **out);
/* Whether node n of kernel k is element-level (shape = the domain). */
bool fuse_is_element(const fkernel *k, const lnode *n);
/* A scan kernel's store over its domain with one more dim of FUSE_PLANES or
 * fewer elements (a gradient's concat of [B, T, H] planes into [B, T, 3, H]):
 * each element the walk is at stores *count values, the extra dim at *axis
 * taking each constant in turn (its index is not fuse_node_index's). */
enum { FUSE_PLANES = 4 };
bool fuse_plane(const fkernel *k, const lnode *n, int *axis, int *count);

#endif
