/* graph.h - the op graph: the first IR after the syntax tree.
 *
 * One gfn per entry function, with every call inlined and the prelude
 * available.  Nodes are in topological order (inputs before users) and carry
 * a dtype, a shape of symbolic dims and the location of the user's token.
 *
 * Invariants (checked by graph_verify):
 *  - Pointwise inputs (OPK_UNARY/BINARY/TERNARY) have the node's exact shape
 *    or rank 0 (a scalar that broadcasts).  Other broadcasting is explicit:
 *    a VIEW with stride 0.
 *  - A VIEW reads a non-VIEW input, which is stored contiguous row-major;
 *    the view's strides and offset are in elements of that input.  Views of
 *    views are composed when built, so a chain never forms.
 *  - REDUCE axes are sorted, distinct, in [0, rank of input).  With keepdim
 *    they stay as size-1 dims.
 *  - SCAN (cumsum, cumprod, cummax, cummin, logcumsumexp) has its input's
 *    shape; a.scan.axis is in [0, rank); element i along the axis combines
 *    input elements 0..i (reverse: i..end).
 *  - Dtypes follow the TR_ rule of ops.def over the promoted inputs; CAST
 *    changes dtype only; MATMUL inputs share a dtype.
 *  - IOTA is i64 of rank >= 1, a.axis in range.  GATHER has in[0]'s dtype
 *    and in[1]'s shape; in[1] is i32 or i64 of the same rank, and in[0]
 *    has the node's dims except along a.axis.
 *
 * graph_print() gives the --emit=graph dump, e.g.
 *     %3 = exp(%2) : f32[N, D]                        # softmax.tc:2:9
 */
#ifndef TC_GRAPH_H
#define TC_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "dim.h"
#include "dtype.h"

enum { TC_MAX_RANK = 8 };

typedef enum {
    OPK_LEAF, OPK_UNARY, OPK_BINARY, OPK_TERNARY, OPK_CAST,
    OPK_REDUCE, OPK_VIEW, OPK_COPY, OPK_CONCAT, OPK_MATMUL, OPK_SCAN,
    OPK_GATHER  /* reads in[0] at positions that in[1]'s values give */
} op_kind;

/* How a node's dtype follows from its (promoted) inputs. */
typedef enum {
    TR_NONE,   /* set explicitly (leaves, cast, view, copy) */
    TR_SAME,   /* the promoted input dtype */
    TR_FLOAT,  /* promoted, but bool/int become f32 */
    TR_BOOL,   /* bool */
    TR_WHERE,  /* promotion of inputs 1 and 2 */
    TR_SUMI,   /* bool/int become i64, floats keep */
    TR_I64,    /* i64 */
} type_rule;

typedef enum {
#define OP(id, spelling, kind, arity, rule, ref, cuda) OP_##id,
#include "ops.def"
#undef OP
    OP_COUNT
} op_id;

typedef struct op_info {
    const char *name;
    op_kind kind;
    int arity;
    type_rule rule;
} op_info;

extern const op_info op_table[OP_COUNT];

/* Whether an elementwise function (gfn.elementwise) may hold op: a leaf or
 * a pointwise operation (unary, binary, ternary, cast).  Not iota: its
 * values are positions, which a foreach group's flat chunks do not keep. */
static inline bool op_elementwise(op_id op)
{
    op_kind k = op_table[op].kind;
    return (k == OPK_LEAF && op != OP_iota) || k == OPK_UNARY || k == OPK_BINARY ||
           k == OPK_TERNARY || k == OPK_CAST;
}

typedef struct gnode gnode;
struct gnode {
    int id;                 /* position in gfn.nodes; printed as %id */
    op_id op;
    tc_dtype dtype;
    int rank;
    const tc_dim **shape;   /* rank dims */
    gnode **in;
    int nin;
    tc_loc loc;             /* the user's token this node came from */
    const char *name;       /* the variable first bound to it, for dumps; may be NULL */
    bool weak;              /* literal-like in promotion (const, scalar param, dimval) */
    union {
        struct { double f; int64_t i; } cnst;  /* OP_const: f for floats, i for int/bool */
        int param;                              /* OP_input, OP_scalar: index in gfn.params */
        const tc_dim *dim;                      /* OP_dimval */
        struct {
            int naxes;
            int axes[TC_MAX_RANK];
            bool keepdim;
            int correction;                     /* var, std */
        } red;
        struct {
            const tc_dim **strides;             /* rank entries, elements of in[0] */
            const tc_dim *offset;
        } view;
        int axis;                               /* OP_concat, OP_iota, OP_gather */
        struct {
            int axis;                           /* the scanned axis */
            bool reverse;                       /* from the last element to the first */
        } scan;                                 /* OPK_SCAN */
    } a;
};

typedef struct gparam {
    const char *name;
    tc_loc loc;
    bool scalar;            /* a bare dtype: a run-time scalar */
    bool inout;
    bool star;              /* [*]: at an entry point, rank 1 of dim "*" */
    tc_dtype dtype;
    int rank;
    const tc_dim **shape;
    gnode *node;            /* its OP_input or OP_scalar node */
    bool has_default;       /* scalars only */
    double def;             /* the default, as a double */
} gparam;

typedef struct goutput {
    const char *name;       /* result name, "out" for a single unnamed result, or the inout param's name */
    tc_loc loc;             /* the returned expression (or the inout param) */
    gnode *node;
    int inout_param;        /* index of the inout parameter it writes back, or -1 */
} goutput;

/* A condition on run-time sizes that the compiler could not prove, checked
 * when sizes are bound: dim >= min (e.g. a slice x[:, 0:128] needs D >= 128). */
typedef struct gconstraint {
    const tc_dim *dim;
    int64_t min;
    tc_loc loc;
    const char *what;       /* "slice end 128 of dim 1" */
} gconstraint;

typedef struct gfn {
    const char *name;
    tc_loc loc;
    gparam *params;
    int nparams;
    goutput *outputs;
    int noutputs;
    gnode **nodes;          /* topological order */
    int nnodes, capnodes;
    const char **syms;      /* symbolic dims of the signature, first appearance first */
    int nsyms;
    gconstraint *cons;
    int ncons, capcons;
    bool elementwise;       /* every tensor param is [*] and every node pointwise: foreach-able */
    tc_dimctx *dims;        /* the context its dims live in (its tc_graph's) */
    const char *remat;      /* a vjp pair's half: what its forward saves and why (grad_remat.c),
                               lines for explain and --emit=sched; NULL otherwise */
} gfn;

typedef struct tc_graph {
    gfn **fns;
    int nfns;
    /* graph_build of every function: the generic functions left out because
     * they do not build as stand-alone entries ([*] as rank 1, dtype
     * variables f32).  Asked for by name, they are built (and their error
     * reported) then, with the bindings given. */
    const char **unbuilt;
    int nunbuilt;
    tc_dimctx *dims;
    tc_arena *arena;
} tc_graph;

/* Limits against programs that explode when inlined. */
enum {
    GRAPH_MAX_NODES = 1 << 20,
    GRAPH_MAX_INLINE_DEPTH = 64,
};

/* Build the graph of every function of prog (prelude functions are callable
 * but not entry points unless fn names one).  fn: build only that function
 * (TC_ERR_NOT_FOUND if absent) or NULL for all of prog's functions, except
 * generic ones (graph_fn_generic) that another function calls (checked at
 * the call) or that fail as stand-alone entries (listed in unbuilt).
 * Errors unwind through d, located at the user's token. */
tc_graph *graph_build(const ast_program *prog, const ast_program *const *prelude, int nprelude,
                      const char *fn, tc_arena *a, tc_diag *d);

/* A dtype variable of an entry point bound to a dtype (`--dtype T=bf16`):
 * name is one capital letter. */
typedef struct tc_dtypebind {
    const char *name;
    tc_dtype dtype;
} tc_dtypebind;

/* Whether fn is generic: a [*] or a dtype variable in its signature, so
 * that building it as an entry point picks bindings (rank 1, f32) that its
 * callers need not share. */
bool graph_fn_generic(const ast_fn *fn);

/* graph_build with the dtype variables of the entry points bound by dts
 * (letters not bound stay f32; graph_build is this with none).  With fn,
 * a letter that fn's signature does not use is TC_ERR_INVALID_ARG
 * ("function 'f' has no dtype variable 'Q'"); with fn NULL a binding
 * applies to every function that uses its letter.  A malformed name, a
 * letter bound twice or an invalid dtype is TC_ERR_INVALID_ARG too. */
tc_graph *graph_build_ex(const ast_program *prog, const ast_program *const *prelude, int nprelude,
                         const char *fn, const tc_dtypebind *dts, int ndts, tc_arena *a,
                         tc_diag *d);

/* Low-level construction, for the builder and for tests that build graphs by
 * hand.  graph_add appends a node whose fields the caller has filled (id is
 * assigned here). */
gfn *graph_fn_new(tc_arena *a, const char *name);
gnode *graph_node_new(tc_arena *a, op_id op, tc_dtype dt, int rank, const tc_dim *const *shape,
                      gnode *const *in, int nin, tc_loc loc);
void graph_add(tc_arena *a, gfn *f, gnode *n);

void graph_print(tc_buf *b, const gfn *f);
/* Pieces of the dump that later stages' dumps share: the "fn f(...) ->
 * (...)" line with its newline, a value as graph_print shows constants, a
 * type "f32[N, D]", and the "# file:line:col  extra" comment column for the
 * line that started at offset line_start. */
void graph_print_signature(tc_buf *b, const gfn *f);
void graph_print_value(tc_buf *b, double v, tc_dtype dt);
/* A constant of dtype dt: f for floats, i for integers and bool ("true"). */
void graph_print_const(tc_buf *b, tc_dtype dt, double f, int64_t i);
void graph_print_type(tc_buf *b, tc_dtype dt, int rank, const tc_dim *const *shape);
void graph_print_comment(tc_buf *b, size_t line_start, tc_loc loc, const char *extra);
/* The dtype n's inputs [from, to) promote to, weak flags included: what a
 * pointwise op converts its operands to before computing. */
tc_dtype graph_promote_inputs(const gnode *n, int from, int to);
/* Check the invariants above; a failure is TC_ERR_INTERNAL through d. */
void graph_verify(const gfn *f, tc_diag *d);

gfn *graph_find(const tc_graph *g, const char *name);

#endif
