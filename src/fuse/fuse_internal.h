/* fuse_internal.h - what the files of the fusion pass share (not for
 * other modules; the pass's interface is fuse.h).
 *
 * The pass is split by what each part does:
 *   fuse.c         the driver (fuse_fn_budget): anchors, what each anchor
 *                  reads, the inline limit; the default budget
 *   fuse_rules.c   legality of one merge: domains, rows read at their own
 *                  row, cycles through a third kernel; the merge itself
 *   fuse_cost.c    a kernel's passes, work and registers against the budget
 *   fuse_merge.c   the merge passes: vertical, horizontal, elementwise, and
 *                  the record of every decision for `explain`
 *   fuse_mmrules.c  the rules of a generated matmul: row scale, pair,
 *                  adapter and epilogue (fuse_mm_norm, _pairs, _lora,
 *                  _epilogues)
 *   fuse_kernels.c the fkernels: launch order (Kahn), stored values, each
 *                  kernel's lists and name
 *   fuse_colpart.c column reductions carried by a rows kernel as partials
 *   fuse_print.c   --emit=fused and `tensorc explain`
 *   fuse_dot.c     --emit=dot (graphviz)
 *   fuse_json.c    `tensorc explain --json`
 *   fuse_verify.c  the fused function's invariants
 * They share one context, fctx: union-find over anchor node ids whose
 * roots carry the kernel's domain (kdesc) and a circular member list.
 */
#ifndef TC_FUSE_INTERNAL_H
#define TC_FUSE_INTERNAL_H

#include "fuse/fuse.h"
#include "hset.h"

#include <string.h>

typedef struct deplist {
    lnode **v;
    int n, cap;
} deplist;

typedef struct kdesc {
    kernel_kind kind;
    int rank;
    const tc_dim **dom;
    unsigned mask;
    bool reverse;           /* KK_SCAN */
} kdesc;

typedef struct visit {
    struct visit *next;
    const tc_dim **idx;
    bool scan_end;          /* visited for a store of a scan's final elements, where a
                               reduction of the walk may be read; not in the walk */
} visit;

typedef struct kcost {
    int passes, work, regs;
} kcost;

typedef struct fctx {
    const lfn *f;
    tc_arena *a;
    tc_diag *d;
    const fuse_budget *bud;
    int n;                  /* nodes */
    bool *anchor;
    bool *cut;              /* anchors made by the inline limit (mark_anchors) */
    int *parent;            /* union-find over node ids (anchors only) */
    int *next;              /* circular list of a kernel's anchors */
    kdesc *desc;            /* valid at roots */
    deplist *deps;          /* anchor -> anchors its inlined expression reads */
    deplist *params;        /* anchor -> leaf inputs it reads */
    deplist *users;         /* anchor -> anchors whose inlined expression reads it */
    int horizon;            /* anchors above it are untouched singletons (cycle check) */
    ffn *out;
    int capdec, capcut;
    visit **seen;           /* row check memo, per node */
    int epoch;
    int *seen_epoch;
    int *vis;               /* cycle check: kernel root -> epoch visited */
    int *stack;
    int *memo_ep, *memo;    /* passes: the latest own pass a node needs */
    int64_t *wkey;          /* work: (epoch, pass) a node was counted in */
    int *rstamp;            /* registers: epoch a buffer read was counted in */
    bool scan_end;          /* rows_ok: checking a scan kernel's store of its final elements */
    const char *why;        /* the reason a check failed */
    const char *limit;      /* the budget limit it hit, or NULL */
    tc_hset decset;         /* decisions recorded (decided()) */
} fctx;

static inline int find(fctx *x, int i)
{
    while (x->parent[i] != i)
        i = x->parent[i] = x->parent[x->parent[i]];
    return i;
}

/* Is node i an anchor of kernel a or kernel b (roots; b may be -1)? */
static inline bool in_k(fctx *x, int i, int a, int b)
{
    if (!x->anchor[i])
        return false;
    int r = find(x, i);
    return r == a || r == b;
}

static inline bool is_leaf(const lnode *n)
{
    return n->kind == LK_INPUT || n->kind == LK_SCALAR || n->kind == LK_CONST || n->kind == LK_DIMVAL;
}

static inline bool same_shape(int ra, const tc_dim *const *a, int rb, const tc_dim *const *b)
{
    if (ra != rb)
        return false;
    for (int k = 0; k < ra; k++)
        if (!dim_eq(a[k], b[k]))
            return false;
    return true;
}

typedef struct ilist {
    int *v;
    int n, cap;
} ilist;

static inline void ipush(tc_arena *a, ilist *l, int v)
{
    ARENA_GROW(a, l->v, l->n, l->cap, 16);
    l->v[l->n++] = v;
}

static inline int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static inline bool inner_reduction(int rank, unsigned mask)
{
    unsigned all = rank >= 32 ? ~0u : (1u << rank) - 1;
    if (mask == 0 || mask == all)
        return false;
    /* trailing: mask + lowest bit of the kept prefix ... mask is a suffix of bits */
    int low = 0;
    while (!(mask & (1u << low)))
        low++;
    return ((mask >> low) & ((mask >> low) + 1)) == 0 && (mask >> low) == (all >> low);
}

/* The anchors of kernels ka and kb (b may be -1), through their lists. */
#define FOR_MEMBERS(x, ka, kb, i)                                                               \
    for (int k_ = 0, r_ = (ka), i = r_; k_ < 2; k_++, r_ = (kb), i = r_)                        \
        if (r_ >= 0)                                                                            \
            for (bool m_ = true; m_; i = (x)->next[i], m_ = i != r_)

/* fuse_rules.c: merge the kernels of anchors a and b if every rule and the
 * budget allow (x->why, x->limit say why not); the union-find changes only then. */
bool fuse_try_merge(fctx *x, int a, int b);
/* fuse_cost.c: the cost of kernels ka and kb (kb may be -1) as one kernel
 * of domain kd, and whether it can be scheduled and fits the budget. */
bool fuse_kernel_cost(fctx *x, int ka, int kb, kdesc kd, kcost *c);
/* fuse_merge.c: the merge passes, in the order fuse_fn_budget runs them. */
void fuse_vertical(fctx *x);
void fuse_horizontal(fctx *x, ilist *readers);
void fuse_elementwise_one(fctx *x);
/* fuse_kernels.c: the fkernels of the final sets, in launch order. */
void fuse_build_kernels(fctx *x);
/* fuse_colpart.c: column partials (fuse.h), after the kernels are built */
void fuse_col_partials(fctx *x);
/* fuse_mmrules.c: record the generated matmul's rules (fuse.h) for explain */
void fuse_mm_prologues(fctx *x);

#endif
