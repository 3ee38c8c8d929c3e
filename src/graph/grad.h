/* grad.h - what grad.c (the transform) and grad_rules.c (one rule per op
 * family) share.  Stage: after graph_build of the forward function, inside
 * the builder, so every node a rule makes is hash-consed and folded like the
 * user's own. */
#ifndef TC_GRAD_H
#define TC_GRAD_H

#include "build_internal.h"

typedef struct grad_ctx {
    builder *b;
    const gfn *fw;  /* the forward function */
    gnode **map;    /* forward node id -> its replay in the new function */
    gnode **adj;    /* forward node id -> its adjoint so far (NULL: zero) */
} grad_ctx;

/* Add v (n's shape, or one that broadcasts to it) to the adjoint of the
 * forward node n; nothing for nodes without gradients (integer, bool,
 * constants). */
void grad_accum(grad_ctx *c, const gnode *n, gnode *v);
/* Propagate the adjoint g of forward node n to its inputs.  An op without a
 * rule is a located error. */
void grad_rule(grad_ctx *c, const gnode *n, gnode *g);
/* Zeros of n's dtype and shape. */
gnode *grad_zeros(grad_ctx *c, const gnode *n, tc_loc loc);
/* A parameter leaf or constant made a node of its own (an output must be). */
gnode *grad_materialize(grad_ctx *c, gnode *n, tc_loc loc);
/* The adjoint of a VIEW: g (the view's shape) scattered back to its base's
 * shape (grad_views.c). */
gnode *grad_view(grad_ctx *c, const gnode *v, gnode *g);

/* A leaf of g for its parameter p, the index-th (grad.c). */
gnode *grad_leaf(builder *b, gfn *g, gparam *p, int index);

/* `fn f_fwd, f_bwd = vjp(f)`: split the joint function j (f's nparams
 * parameters then the cotangents -> f's nfo outputs then the gradients;
 * dead nodes dropped) into part 1, the forward (f's parameters -> f's
 * outputs, then the values it saves), or part 2, the backward (f's
 * parameters, the saved values, the cotangents -> the gradients), choosing
 * what is saved from a model of bytes moved (grad_remat.c).  b->f is j;
 * names: f's, the forward's and the backward's, for the text. */
gfn *grad_remat(builder *b, gfn *j, int nparams, int nfo, int part, const char *const names[3],
                tc_loc loc);

#endif
