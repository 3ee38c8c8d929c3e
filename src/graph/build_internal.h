/* build_internal.h - what the files of the graph builder share.
 *
 *   build.c         graph_build: the function table, entry functions, their
 *                   parameters and outputs, dead-node removal, verification
 *   build_call.c    statements, returns and inlined calls (argument binding,
 *                   parameter matching, dtype variables, inout write-back)
 *   build_expr.c    expressions: literals, names, operators, dispatch of calls
 *   build_builtin.c builtin functions: pointwise, casts, reductions, concat
 *   build_views.c   layouts (strides and offsets) and every view: broadcast,
 *                   .T, permute, transpose, reshape, (un)squeeze, indexing
 *   build_node.c    making nodes: hash-consing (CSE), constant folding,
 *                   promotion, broadcasting of pointwise inputs, limits
 *   build_const.c   compile-time values (axes, bounds, dims, keepdim)
 *   build_util.c    a string map, type spelling for messages, suggestions
 *
 * The builder walks the syntax tree of an entry function once, inlining
 * each call as it meets it (a call is a new scope whose names are bound to
 * the caller's nodes), and emits nodes straight into the gfn in topological
 * order.  Every error unwinds through the diagnostics at the user's token.
 */
#ifndef TC_BUILD_INTERNAL_H
#define TC_BUILD_INTERNAL_H

#include "graph.h"
#include "hset.h"

/* ---- a string -> pointer map in the arena (an hset of entries) ---- */
typedef struct smap {
    tc_hset set;
} smap;

void *smap_get(const smap *m, const char *key);
void smap_put(tc_arena *a, smap *m, const char *key, void *val);
/* m's keys appended to out[n..] (in the table's order); the new count. */
int smap_keys(const smap *m, const char **out, int n);

/* ---- functions and scopes ---- */

/* A function that calls can reach: the user's or the prelude's. */
typedef struct bfunc {
    const ast_fn *fn;
    const ast_program *prog;
    bool prelude;
    bool checked;           /* its signature has been checked */
} bfunc;

/* A name bound in a scope. */
typedef struct bvar {
    const char *name;
    gnode *node;
    gnode *orig;    /* an inout parameter's first value: its type stays */
    tc_loc loc;     /* where it was first bound */
    int param;      /* the parameter it is, or -1 for a local */
    bool inout;
} bvar;

/* One activation: the entry function, or an inlined call. */
typedef struct bscope {
    struct bscope *caller;
    const ast_fn *fn;
    const ast_program *prog;
    int depth;              /* 0 for the entry function */
    tc_arena *sa;           /* scratch: this activation's names and temporaries,
                               freed when the call returns (the entry's is b->a) */
    tc_loc call_loc;        /* the call site in the caller (depth > 0) */
    smap vars;              /* name -> bvar */
    smap dims;              /* symbolic dim name -> const tc_dim * */
    tc_dtype tvar[26];      /* dtype variables A..Z (TC_DT_NONE: unbound) */
    const char *tvar_from[26]; /* the parameter that bound each, for messages */
    gnode **results;        /* set by `return` */
    tc_loc *result_locs;    /* the returned expressions */
    int nresults;
    bool returned;
} bscope;

typedef struct builder {
    tc_arena *a;
    tc_diag *d;
    tc_dimctx *dc;
    smap fns;               /* name -> bfunc: user functions shadow the prelude's */
    tc_dtype tvar_bound[26];  /* an entry's dtype variables bound by graph_build_ex
                                 (TC_DT_NONE: not bound, f32) */
    gfn *f;                 /* the entry function being built */
    bscope *sc;             /* the innermost scope */
    tc_hset cse;            /* hash-consing of the nodes of f (hset.h) */
    int64_t work;           /* expressions evaluated and calls inlined, for BUILD_MAX_WORK */
    int64_t calls;          /* calls inlined, for BUILD_MAX_CALLS */
    int nest;               /* build_expr calls under way, for BUILD_MAX_NEST */
    /* The scratch arenas of the calls under way, by depth, so that an error
     * unwinding through graph_build can free them. */
    tc_arena *live[GRAPH_MAX_INLINE_DEPTH + 2];
} builder;

/* ---- build.c ---- */
/* The graph of bf as an entry point (a derived one through grad_build);
 * resets b->f and the CSE table. */
gfn *build_entry(builder *b, bfunc *bf);
/* Drop nodes that no output needs, keeping parameter leaves; renumber. */
void build_drop_dead(builder *b);
/* Renumber the nodes in a canonical order (build.c; after build_drop_dead). */
void build_canonical_order(builder *b);
bool build_elementwise(const gfn *f);

/* ---- grad.c ---- */
/* `fn g = grad(f, wrt=[x, ...])`: f's graph replayed, then its reverse-mode
 * derivative (grad.c, rules in grad_rules.c). */
gfn *grad_build(builder *b, bfunc *bf);
/* The function that a call of name reaches (user, then prelude), or NULL. */
bfunc *build_find_fn(builder *b, const char *name);
/* Check a signature once: parameter names, defaults, dtype variables, ranks. */
void build_check_signature(builder *b, bfunc *f);
/* Bind a name in scope s: a new local, or a new value of an inout parameter
 * (or of a name passed to an inout argument: via_inout). */
void build_set_var(builder *b, bscope *s, const char *name, gnode *n, tc_loc loc, bool via_inout);

/* ---- build_call.c ---- */
/* Run the statements of s->fn in scope s (which has its parameters bound). */
void build_body(builder *b, bscope *s);
/* Check the values of `return` against the declared results of s->fn,
 * adopting weak values to the declared dtype; fills s->results. */
void build_check_results(builder *b, bscope *s);
/* Inline a call of fn; returns the number of results and sets *res. */
int build_call_fn(builder *b, const ast_expr *call, bfunc *fn, gnode ***res);
/* Look up a variable in the current scope (NULL if none). */
bvar *build_var(builder *b, const char *name);

/* ---- build_expr.c ---- */
gnode *build_expr(builder *b, const ast_expr *e);
/* A call in statement position, which may give several results. */
int build_call_multi(builder *b, const ast_expr *call, gnode ***res);

/* ---- build_builtin.c ---- */
/* true if name is a builtin function (pointwise, cast, reduction, view, concat). */
bool builtin_is(const char *name);
/* Evaluate a call of the builtin e->u.call.fn; NULL if it is not one. */
gnode *builtin_call(builder *b, const ast_expr *e);
/* A cast call f16(x), or T(x) for a dtype variable T bound to dt. */
gnode *builtin_cast(builder *b, const ast_expr *e, tc_dtype dt);
/* Names of builtins, for suggestions; NULL-terminated, in the arena. */
const char **builtin_names(builder *b);

/* Match a call's arguments to parameter names (positional, then keyword).
 * out[i] is the argument for parameter i, or NULL.  Errors: too many,
 * unknown keyword, repeated, positional after keyword. */
void build_match_args(builder *b, const ast_expr *call, const char *fname,
                      const char *const *pnames, int np, const ast_arg **out);

/* ---- build_views.c ---- */
/* A strided view over a materialized node, in elements of base. */
typedef struct blayout {
    gnode *base;
    int rank;
    const tc_dim *shape[TC_MAX_RANK];
    const tc_dim *stride[TC_MAX_RANK];
    const tc_dim *offset;
} blayout;

void layout_of(builder *b, gnode *x, blayout *l, tc_loc loc);
gnode *layout_emit(builder *b, const blayout *l, tc_loc loc);
/* x broadcast (stride 0) to rank/shape; the caller has checked compatibility. */
gnode *view_broadcast(builder *b, gnode *x, int rank, const tc_dim *const *shape, tc_loc loc);
gnode *view_transpose(builder *b, gnode *x, int i, int j, tc_loc loc);
gnode *view_permute(builder *b, gnode *x, const int *perm, tc_loc loc);
gnode *view_reshape(builder *b, gnode *x, int rank, const tc_dim *const *shape, tc_loc loc);
gnode *view_unsqueeze(builder *b, gnode *x, int axis, tc_loc loc);
gnode *view_squeeze(builder *b, gnode *x, int axis, tc_loc loc);
/* x[...] */
gnode *build_index(builder *b, const ast_expr *e);
/* The view builtins by name (permute, transpose, reshape, unsqueeze,
 * squeeze, broadcast_to); NULL if name is not one. */
gnode *view_builtin(builder *b, const ast_expr *e);
bool view_builtin_is(const char *name);

/* ---- build_gather.c ---- */
/* iota and gather (NULL-free: errors unwind through b->d). */
bool gather_builtin_is(const char *name);
gnode *gather_builtin(builder *b, const ast_expr *e);

/* ---- build_node.c ---- */
/* Inlining can blow up without making nodes (CSE absorbs repeats), so the
 * work and the calls of one entry are bounded too: they cost time and
 * arena memory (about a kilobyte per call). */
enum {
    BUILD_MAX_WORK = 16 * GRAPH_MAX_NODES, /* expressions evaluated */
    BUILD_MAX_CALLS = 1 << 18,             /* calls inlined */
    /* Expressions nested through inlined calls: 64 calls deep, each inside
     * a 200-deep expression, would take ~10 MB of C stack (with ASan). */
    BUILD_MAX_NEST = 4096,
};
/* Hash-cons n (a template whose arrays may live on the stack): return the
 * equal node already in f, or a copy of n appended to f. */
/* A node on the caller's stack to intern (build_node.c): op, dtype, shape
 * and inputs set, everything else zero. */
gnode build_tmpl(op_id op, tc_dtype dt, int rank, const tc_dim **shape, gnode **in, int nin,
                 tc_loc loc);
gnode *node_emit(builder *b, const gnode *n);
gnode *node_const(builder *b, tc_dtype dt, double v, bool weak, tc_loc loc);
gnode *node_const_int(builder *b, tc_dtype dt, int64_t v, bool weak, tc_loc loc);
gnode *node_dimval(builder *b, const tc_dim *dim, tc_loc loc);
/* A pointwise op (unary, binary, ternary) with NumPy broadcasting, promotion
 * by the op's type rule, folding of constants and dim arithmetic. */
gnode *node_pointwise(builder *b, op_id op, gnode *const *in, int nin, tc_loc loc);
/* x converted to dt (x itself when it already is); weak marks the result
 * literal-like, as a scalar parameter bound to it is. */
gnode *node_cast(builder *b, gnode *x, tc_dtype dt, bool weak, tc_loc loc);
/* A weak value made an ordinary one: float literals become f32 (PyTorch's
 * default dtype), others keep their dtype. */
gnode *node_concrete(builder *b, gnode *x, tc_loc loc);
tc_dtype dtype_concrete(const gnode *x);
/* A scan (cumsum, ...) of x along axis (in range), reverse from the end. */
gnode *node_scan(builder *b, op_id op, gnode *x, int axis, bool reverse, tc_loc loc);
gnode *node_reduce(builder *b, op_id op, gnode *x, const bool *axes, bool keepdim, int correction,
                   tc_loc loc);
gnode *node_matmul(builder *b, gnode *x, gnode *y, tc_loc loc);
gnode *node_concat(builder *b, gnode *const *in, int nin, int axis, tc_loc loc);
gnode *node_copy(builder *b, gnode *x, tc_loc loc);
/* The dtype the TR_ rule of op gives over inputs in (promoted), and whether
 * the result is weak. */
tc_dtype node_rule_dtype(op_id op, gnode *const *in, int nin, bool *weak);
/* Error out if the graph has grown past its limits. */
void node_check_limits(builder *b, tc_loc loc);
/* The location to blame for a limit: the outermost call being inlined. */
tc_loc build_limit_loc(builder *b, tc_loc loc);

/* ---- build_const.c ---- */
/* The value of n if it is known at compile time (constants, and scalar
 * parameters of the entry function through their defaults). */
bool const_value(builder *b, const gnode *n, double *v, tc_dtype *dt);
/* e as a compile-time integer; what names it in messages ("axis"). */
int64_t const_int(builder *b, const ast_expr *e, const char *what);
bool const_bool(builder *b, const ast_expr *e, const char *what);
/* e as a dim: an integer or a symbolic size ("N * D"). */
const tc_dim *const_dim(builder *b, const ast_expr *e, const char *what);
/* An axis in [-rank, rank) made non-negative; errors name x's type. */
int const_axis(builder *b, const ast_expr *e, const gnode *x, int rank);
/* Record the requirement dim >= min: checked now when dim is a constant
 * (msg is the error), else kept as a gconstraint described by what. */
void require_dim(builder *b, const tc_dim *dim, int64_t min, tc_loc loc, const char *msg,
                 const char *what);

/* ---- build_util.c ---- */
/* "f32[N, D]", or "f32" for rank 0. */
const char *type_str(builder *b, const gnode *n);
const char *shape_str(builder *b, int rank, const tc_dim *const *shape);
/* An ast_type as written: "T[N, *]". */
const char *ast_type_str(builder *b, const ast_type *t);
const char *dimstr(builder *b, const tc_dim *d);
/* "; did you mean 'x'?" for the closest of names (NULL-terminated), or "". */
const char *suggest(builder *b, const char *name, const char *const *names, int n);
/* The hint line for a name that is a Python or PyTorch habit (True, False,
 * None; dim= where the callee has axis among names[0..n)), or NULL. */
const char *habit_hint(const char *name, const char *const *names, int n);
/* "1 value", "2 values". */
const char *plural(builder *b, int n, const char *one, const char *many);

#endif
