/* ast.h - the syntax tree of a .tc program, as the parser builds it.
 *
 * The AST is faithful to the source: names are unresolved, calls are not yet
 * inlined, literals keep their spelling.  Every node has the location of the
 * token a user would want an error to point at (an operator for a binary
 * expression, the callee's name for a call, the name of a parameter).
 * ast_print() gives the --emit=ast dump; it is stable text used by golden tests.
 */
#ifndef TC_AST_H
#define TC_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "dtype.h"

/* Binary and unary operators of the surface syntax. */
typedef enum {
    AST_OP_ADD, AST_OP_SUB, AST_OP_MUL, AST_OP_DIV, AST_OP_MOD, AST_OP_POW, AST_OP_MATMUL,
    AST_OP_EQ, AST_OP_NE, AST_OP_LT, AST_OP_LE, AST_OP_GT, AST_OP_GE,
    AST_OP_AND, AST_OP_OR,
    AST_OP_NEG, AST_OP_NOT, AST_OP_PLUS /* unary + */
} ast_op;

const char *ast_op_str(ast_op op); /* "+", "@", "&&", ... */

typedef enum {
    AST_INT,    /* 1, 128 */
    AST_FLOAT,  /* 2.5, 1e-6, inf */
    AST_BOOL,   /* true, false */
    AST_NAME,   /* x, N */
    AST_UNARY,  /* -x, !c */
    AST_BINARY, /* a + b */
    AST_CALL,   /* f(x, axis=1) */
    AST_ATTR,   /* x.T */
    AST_INDEX,  /* x[1:, ::2] */
    AST_TUPLE,  /* (0, 2) */
    AST_LIST,   /* [N, D] */
    AST_SLICE,  /* start:stop:step inside an index; any part may be NULL */
} ast_kind;

typedef struct ast_expr ast_expr;

typedef struct ast_arg {
    const char *name; /* keyword, or NULL for a positional argument */
    tc_loc loc;       /* of the keyword, or of the value */
    ast_expr *value;
} ast_arg;

struct ast_expr {
    ast_kind kind;
    tc_loc loc;
    int depth; /* nesting depth of this subtree; the parser rejects very deep trees */
    union {
        int64_t ival;                     /* AST_INT */
        double fval;                      /* AST_FLOAT */
        bool bval;                        /* AST_BOOL */
        const char *name;                 /* AST_NAME */
        struct { ast_op op; ast_expr *a; } unary;
        struct { ast_op op; ast_expr *a, *b; } binary;
        struct { const char *fn; tc_loc fn_loc; ast_arg *args; int nargs; } call;
        struct { ast_expr *obj; const char *attr; } attr;
        struct { ast_expr *obj; ast_expr **items; int nitems; } index;
        struct { ast_expr **items; int nitems; } tuple; /* AST_TUPLE, AST_LIST */
        struct { ast_expr *start, *stop, *step; } slice;
    } u;
};

/* A dimension in a type: a literal, a symbolic name, or "*" (any shape). */
typedef struct ast_dim {
    const char *name; /* NULL for a literal */
    int64_t value;
    tc_loc loc;
} ast_dim;

/* A type: `f32` (scalar), `f32[N, 4]`, `f32[*]`, `T[N]` (dtype variable). */
typedef struct ast_type {
    tc_loc loc;          /* of the dtype name */
    tc_dtype dtype;      /* TC_DT_NONE when dtype_var is set */
    const char *dtype_var; /* a single capital letter: T, U, W */
    bool is_tensor;      /* has brackets */
    bool star;           /* [*] */
    ast_dim *dims;
    int ndims;
} ast_type;

typedef struct ast_param {
    const char *name;
    tc_loc loc;           /* of the name */
    bool inout;
    ast_type type;
    ast_expr *def;        /* default value, or NULL */
} ast_param;

typedef struct ast_result {
    const char *name;     /* NULL for an unnamed single result */
    tc_loc loc;
    ast_type type;
} ast_result;

typedef enum { AST_ASSIGN, AST_RETURN } ast_stmt_kind;

typedef struct ast_stmt {
    ast_stmt_kind kind;
    tc_loc loc;           /* of the first target name, or of `return` */
    /* AST_ASSIGN: targets = value (several targets for a multi-result call) */
    const char **targets;
    tc_loc *target_locs;
    int ntargets;
    ast_expr *value;
    /* AST_RETURN: the returned expressions */
    ast_expr **values;
    int nvalues;
} ast_stmt;

typedef struct ast_fn {
    const char *name;
    tc_loc loc;           /* of the name */
    ast_param *params;
    int nparams;
    ast_result *results;  /* declared results: none, one unnamed, or a named list */
    int nresults;
    bool named_results;   /* -> (y: T, z: U) */
    ast_stmt *stmts;
    int nstmts;
    tc_loc end_loc;       /* of the closing brace */
    /* `fn f_grad = grad(f, wrt=[x, w])`: a function derived from another by
     * a transform (the call, unchecked); no params, results or body. */
    ast_expr *derive;
    /* `fn f_fwd, f_bwd = vjp(f, wrt=[x])` makes two functions of one call:
     * 1 the forward (f's outputs, then what it saves), 2 the backward; 0 for
     * every other function. */
    int derive_part;
} ast_fn;

typedef struct ast_program {
    const tc_source *src;
    ast_fn *fns;
    int nfns;
} ast_program;

/* Limits that keep hostile input from exhausting the stack or the machine. */
enum {
    AST_MAX_DEPTH = 200,          /* expression nesting */
    AST_MAX_SOURCE = 16 << 20,    /* bytes of source */
};

/* The function a derived function names (`fn g = grad(f, ...)`: "f"), or
 * NULL when fn is not derived or its call names none. */
const char *ast_derive_target(const ast_fn *fn);

/* Parse src into *out.  Lexical and syntax errors unwind through d with
 * TC_ERR_SYNTAX (too deep or too large: TC_ERR_LIMIT), located at the token. */
ast_program *ast_parse(const tc_source *src, tc_arena *a, tc_diag *d);

/* The --emit=ast dump: one line per function, parameter and statement,
 * expressions fully parenthesized, with line:col of each statement. */
void ast_print(tc_buf *b, const ast_program *p);

#endif
