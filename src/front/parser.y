/* parser.y - the grammar of .tc programs (bison: pure, LALR(1) with LAC).
 *
 * The parser builds the AST of src/front/ast.h directly in its actions; every node
 * is allocated in the compilation's arena.  Errors do not return through
 * bison: they call diag_error(), which longjmps to the caller's protected
 * call.  That is safe only because nothing here owns heap memory: the parser
 * stacks (YYSTACK_ALLOC below) and the scanner's buffers (lexer.l's yyalloc)
 * live in the arena too, so an unwind from any action leaks nothing.
 *
 * Precedence is spelled out as one nonterminal per level rather than with
 * %left/%right, so the table in docs/semantics.md can be read off the rules:
 *
 *     expr    -> or
 *     or      -> or '||' and | and
 *     and     -> and '&&' cmp | cmp
 *     cmp     -> add CMPOP add | add              (non-associative)
 *     add     -> add ('+'|'-') mul | mul
 *     mul     -> mul ('*'|'/'|'%'|'@') unary | unary
 *     unary   -> ('-'|'+'|'!') unary | power
 *     power   -> postfix '**' unary | postfix     (right-assoc; -x**2 = -(x**2))
 *     postfix -> postfix '.' NAME | postfix '[' index ']' | primary
 *
 * Syntax errors: %define parse.error custom hands yyreport_syntax_error the
 * unexpected token and (thanks to LAC, exactly) the tokens that could have
 * come instead.  To say *what* was expected in the user's words ("')' after
 * arguments", "a type after ':'") it also looks at the parser's state stack:
 * the innermost unclosed bracket and what precedes it tell a call from a
 * parameter list, an index from a list, a type's dims from either.
 */

%require "3.8"
%define api.pure full
%define api.prefix {tc_yy}
%define api.location.type {tc_loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {yyscan_t scanner}
%parse-param {tc_parse *P}

%code requires {
#include <stdbool.h>
#include <stdint.h>

#include "ast.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t; /* flex's handle, spelled as flex spells it */
#endif

/* A growable array of pointers in the arena: the grammar's lists, turned into
 * the AST's arrays of structs when the enclosing node is built. */
typedef struct tc_pvec {
    void **v;
    int n, cap;
} tc_pvec;

/* Declared results of a function: `-> T` or `-> (a: T, b: U)`. */
typedef struct tc_results {
    ast_result *v;
    int n;
    bool named;
} tc_results;

/* A token's spelling, for messages ("found 'x'", "after '+'"). */
typedef struct tc_tokspell {
    const char *text; /* into the source text; "" for end of line / file */
    int len;
    int kind;         /* the token kind; 0 before the first token */
} tc_tokspell;

/* Everything one parse needs: shared by the lexer (as flex's extra data)
 * and the parser (as its parse-param). */
typedef struct tc_parse {
    const tc_source *src;
    tc_arena *arena;
    tc_diag *diag;
    tc_pvec fns;          /* the functions parsed so far (ast_fn *) */
    /* lexer state */
    int line, col;        /* position of the next byte */
    size_t off;           /* offset of the next byte in src->text */
    int depth;            /* open '(' and '[': newlines inside them are ignored */
    tc_loc end;           /* just past the last token: where end of line/file point */
    tc_tokspell prev, cur; /* the last two tokens returned */
} tc_parse;
}

%code provides {
#ifndef YYSTYPE
#define YYSTYPE TC_YYSTYPE
#endif
#ifndef YYLTYPE
#define YYLTYPE TC_YYLTYPE
#endif
int tc_yylex(TC_YYSTYPE *lval, TC_YYLTYPE *lloc, yyscan_t scanner);
int tc_yyparse(yyscan_t scanner, tc_parse *P);
/* Run the parser over the scanner's input: use this, not tc_yyparse. */
int tc_parse_run(yyscan_t scanner, tc_parse *P);
/* Append to a pointer list in the parse's arena. */
void tc_pvec_push(tc_parse *P, tc_pvec *v, void *item);
}

%code {
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hints.h"

/* The parser's stacks live in the arena, so a longjmp out of an action or the
 * lexer frees them with everything else (YYSTACK_FREE becomes a no-op).  The
 * LAC stack grows in a helper that sees no parse-param, hence the parse in
 * progress on this thread; it is read only while tc_parse_run runs. */
static _Thread_local tc_parse *parse_running;
static void *stack_alloc(size_t n) { return arena_alloc(parse_running->arena, n); }
#define YYSTACK_ALLOC(n) stack_alloc(n)

/* A node's location is its first symbol's unless an action says otherwise. */
#define YYLLOC_DEFAULT(Cur, Rhs, N) \
    do { (Cur) = (N) ? YYRHSLOC(Rhs, 1) : YYRHSLOC(Rhs, 0); } while (0)

static void tc_yyerror(tc_loc *loc, yyscan_t scanner, tc_parse *P, const char *msg);

static tc_pvec *vec_new(tc_parse *P, void *first);
static ast_expr *mk_leaf(tc_parse *P, ast_kind k, tc_loc loc);
static ast_expr *mk_unary(tc_parse *P, ast_op op, tc_loc loc, ast_expr *a);
static ast_expr *mk_binary(tc_parse *P, ast_op op, tc_loc loc, ast_expr *a, ast_expr *b);
static ast_expr *mk_call(tc_parse *P, const char *fn, tc_loc loc, tc_pvec *args);
static ast_expr *mk_attr(tc_parse *P, ast_expr *obj, const char *attr, tc_loc loc);
static ast_expr *mk_index(tc_parse *P, ast_expr *obj, tc_loc loc, tc_pvec *items);
static ast_expr *mk_seq(tc_parse *P, ast_kind k, tc_loc loc, tc_pvec *items);
static ast_expr *mk_slice(tc_parse *P, tc_loc loc, ast_expr *start, ast_expr *stop, ast_expr *step);
static ast_arg *mk_arg(tc_parse *P, const char *name, tc_loc loc, ast_expr *value);
static ast_type *mk_type(tc_parse *P, const char *dtype, tc_loc loc);
static ast_dim *mk_dim(tc_parse *P, const char *name, int64_t value, tc_loc loc);
static ast_param *mk_param(tc_parse *P, const char *name, tc_loc loc, bool inout,
                           ast_type *t, ast_expr *def);
static tc_results *mk_results(tc_parse *P, tc_pvec *named, ast_type *single);
static ast_stmt *mk_assign(tc_parse *P, tc_pvec *targets, ast_expr *value);
static ast_stmt *mk_return(tc_parse *P, tc_loc loc, tc_pvec *values);
static ast_fn *mk_fn(tc_parse *P, const char *name, tc_loc loc, tc_pvec *params,
                     tc_results *res, tc_pvec *body, tc_loc end);
}

%union {
    const char *str;
    int64_t ival;
    double fval;
    bool flag;
    ast_expr *expr;
    ast_arg *arg;
    ast_type *type;
    ast_dim *dim;
    ast_param *param;
    ast_stmt *stmt;
    ast_fn *fn;
    tc_pvec *vec;
    tc_results *res;
}

%token END 0 "end of file"
%token <str> NAME "name"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token NEWLINE "end of line"
%token KW_FN "'fn'" KW_RETURN "'return'" KW_INOUT "'inout'"
%token KW_TRUE "'true'" KW_FALSE "'false'" KW_INF "'inf'"
%token LPAREN "'('" RPAREN "')'" LBRACKET "'['" RBRACKET "']'" LBRACE "'{'" RBRACE "'}'"
%token COMMA "','" COLON "':'" SEMI "';'" DOT "'.'" ASSIGN "'='" ARROW "'->'"
%token PLUS "'+'" MINUS "'-'" STAR "'*'" SLASH "'/'" PERCENT "'%'" POW "'**'" AT "'@'"
%token EQ "'=='" NE "'!='" LT "'<'" LE "'<='" GT "'>'" GE "'>='"
%token ANDAND "'&&'" OROR "'||'" NOT "'!'"

%type <fn> fn_def
%type <vec> params_opt params dims named_results body targets expr_list args_opt args
%type <vec> list_opt tuple_items index_items
%type <param> param
%type <flag> inout_opt
%type <type> type dtype_name
%type <dim> dim
%type <expr> default_opt expr or_expr and_expr cmp_expr add_expr mul_expr unary power
%type <expr> postfix primary index_item slice expr_opt
%type <res> results
%type <stmt> stmt stmt_opt
%type <arg> arg

%%

/* program -> { fn_def | NEWLINE } */
program
    : %empty
    | program fn_def        { tc_pvec_push(P, &P->fns, $2); }
    | program fn_pair
    | program NEWLINE
    ;

/* fn_pair -> 'fn' NAME ',' NAME '=' expr   (vjp(f, wrt=[x]): a forward that
 * saves what the backward reads, and that backward; both keep the call) */
fn_pair
    : KW_FN NAME COMMA NAME ASSIGN expr
        {
            for (int part = 1; part <= 2; part++) {
                ast_fn *f = mk_fn(P, part == 1 ? $2 : $4, part == 1 ? @2 : @4, vec_new(P, NULL),
                                  mk_results(P, NULL, NULL), vec_new(P, NULL), @5);
                f->derive = $6;
                f->derive_part = part;
                tc_pvec_push(P, &P->fns, f);
            }
        }
    ;

/* fn_def -> 'fn' NAME '(' [params] ')' [NEWLINE] ['->' results [NEWLINE]] '{' body '}'
 *         | 'fn' NAME '=' expr        (a derived function: grad(f, wrt=[x]))
 * so a long signature may put its results on the next line. */
fn_def
    : KW_FN NAME LPAREN params_opt RPAREN nl_opt results nl_opt LBRACE body RBRACE
        { $$ = mk_fn(P, $2, @2, $4, $7, $10, @11); }
    | KW_FN NAME LPAREN params_opt RPAREN nl_opt LBRACE body RBRACE
        { $$ = mk_fn(P, $2, @2, $4, mk_results(P, NULL, NULL), $8, @9); }
    | KW_FN NAME ASSIGN expr
        {
            $$ = mk_fn(P, $2, @2, vec_new(P, NULL), mk_results(P, NULL, NULL), vec_new(P, NULL), @4);
            $$->derive = $4;
        }
    ;

nl_opt: %empty | NEWLINE ;
comma_opt: %empty | COMMA ;

/* params -> param {',' param} [','] */
params_opt
    : %empty                { $$ = vec_new(P, NULL); }
    | params comma_opt      { $$ = $1; }
    ;
params
    : param                 { $$ = vec_new(P, $1); }
    | params COMMA param    { tc_pvec_push(P, $1, $3); $$ = $1; }
    ;

/* param -> NAME ':' ['inout'] type ['=' expr] */
param
    : NAME COLON inout_opt type default_opt { $$ = mk_param(P, $1, @1, $3, $4, $5); }
    ;
inout_opt: %empty { $$ = false; } | KW_INOUT { $$ = true; } ;
default_opt: %empty { $$ = NULL; } | ASSIGN expr { $$ = $2; } ;

/* type -> dtype | dtype '[' dim {',' dim} ']' | dtype '[' '*' ']' */
type
    : dtype_name                            { $$ = $1; }
    | dtype_name LBRACKET dims RBRACKET
        {
            $$ = $1;
            $$->is_tensor = true;
            $$->ndims = $3->n;
            $$->dims = ARENA_ARRAY(P->arena, ast_dim, $3->n);
            for (int i = 0; i < $3->n; i++)
                $$->dims[i] = *(ast_dim *)$3->v[i];
        }
    | dtype_name LBRACKET STAR RBRACKET     { $$ = $1; $$->is_tensor = true; $$->star = true; }
    ;
dtype_name: NAME                            { $$ = mk_type(P, $1, @1); } ;
dims
    : dim                   { $$ = vec_new(P, $1); }
    | dims COMMA dim        { tc_pvec_push(P, $1, $3); $$ = $1; }
    ;
dim
    : INT                   { $$ = mk_dim(P, NULL, $1, @1); }
    | NAME                  { $$ = mk_dim(P, $1, 0, @1); }
    ;

/* results -> '->' type | '->' '(' NAME ':' type {',' NAME ':' type} [','] ')' */
results
    : ARROW type                                    { $$ = mk_results(P, NULL, $2); }
    | ARROW LPAREN named_results comma_opt RPAREN   { $$ = mk_results(P, $3, NULL); }
    ;
named_results
    : NAME COLON type
        { $$ = vec_new(P, mk_param(P, $1, @1, false, $3, NULL)); }
    | named_results COMMA NAME COLON type
        { tc_pvec_push(P, $1, mk_param(P, $3, @3, false, $5, NULL)); $$ = $1; }
    ;

/* body -> [stmt] {sep [stmt]}, sep -> NEWLINE | ';' */
body
    : stmt_opt              { $$ = vec_new(P, $1); }
    | body sep stmt_opt     { if ($3) tc_pvec_push(P, $1, $3); $$ = $1; }
    ;
sep: NEWLINE | SEMI ;
stmt_opt: %empty { $$ = NULL; } | stmt { $$ = $1; } ;

/* stmt -> NAME {',' NAME} '=' expr | NAME '(' args ')' | 'return' [expr {',' expr}]
 * A bare call is useful for a callee whose outputs are inout parameters. */
stmt
    : targets ASSIGN expr   { $$ = mk_assign(P, $1, $3); }
    | NAME LPAREN args_opt RPAREN
        { $$ = mk_assign(P, NULL, mk_call(P, $1, @1, $3)); }
    | KW_RETURN             { $$ = mk_return(P, @1, NULL); }
    | KW_RETURN expr_list   { $$ = mk_return(P, @1, $2); }
    ;
targets
    : NAME
        {
            ast_expr *e = mk_leaf(P, AST_NAME, @1); /* a name and its location */
            e->u.name = $1;
            $$ = vec_new(P, e);
        }
    | targets COMMA NAME
        {
            ast_expr *e = mk_leaf(P, AST_NAME, @3);
            e->u.name = $3;
            tc_pvec_push(P, $1, e);
            $$ = $1;
        }
    ;
expr_list
    : expr                  { $$ = vec_new(P, $1); }
    | expr_list COMMA expr  { tc_pvec_push(P, $1, $3); $$ = $1; }
    ;

/* --- expressions, loosest first ------------------------------------------- */

expr: or_expr ;

or_expr
    : and_expr
    | or_expr OROR and_expr     { $$ = mk_binary(P, AST_OP_OR, @2, $1, $3); }
    ;
and_expr
    : cmp_expr
    | and_expr ANDAND cmp_expr  { $$ = mk_binary(P, AST_OP_AND, @2, $1, $3); }
    ;
/* Non-associative: `a < b < c` has no parse (see chained_comparison()). */
cmp_expr
    : add_expr
    | add_expr EQ add_expr      { $$ = mk_binary(P, AST_OP_EQ, @2, $1, $3); }
    | add_expr NE add_expr      { $$ = mk_binary(P, AST_OP_NE, @2, $1, $3); }
    | add_expr LT add_expr      { $$ = mk_binary(P, AST_OP_LT, @2, $1, $3); }
    | add_expr LE add_expr      { $$ = mk_binary(P, AST_OP_LE, @2, $1, $3); }
    | add_expr GT add_expr      { $$ = mk_binary(P, AST_OP_GT, @2, $1, $3); }
    | add_expr GE add_expr      { $$ = mk_binary(P, AST_OP_GE, @2, $1, $3); }
    ;
add_expr
    : mul_expr
    | add_expr PLUS mul_expr    { $$ = mk_binary(P, AST_OP_ADD, @2, $1, $3); }
    | add_expr MINUS mul_expr   { $$ = mk_binary(P, AST_OP_SUB, @2, $1, $3); }
    ;
mul_expr
    : unary
    | mul_expr STAR unary       { $$ = mk_binary(P, AST_OP_MUL, @2, $1, $3); }
    | mul_expr SLASH unary      { $$ = mk_binary(P, AST_OP_DIV, @2, $1, $3); }
    | mul_expr PERCENT unary    { $$ = mk_binary(P, AST_OP_MOD, @2, $1, $3); }
    | mul_expr AT unary         { $$ = mk_binary(P, AST_OP_MATMUL, @2, $1, $3); }
    ;
unary
    : power
    | MINUS unary               { $$ = mk_unary(P, AST_OP_NEG, @1, $2); }
    | PLUS unary                { $$ = mk_unary(P, AST_OP_PLUS, @1, $2); }
    | NOT unary                 { $$ = mk_unary(P, AST_OP_NOT, @1, $2); }
    ;
/* The right operand is a unary so that `2 ** -1` parses and `a ** b ** c`
 * groups to the right; the left is a postfix so `-x ** 2` is -(x ** 2). */
power
    : postfix
    | postfix POW unary         { $$ = mk_binary(P, AST_OP_POW, @2, $1, $3); }
    ;
postfix
    : primary
    | postfix DOT NAME                      { $$ = mk_attr(P, $1, $3, @3); }
    | postfix LBRACKET index_items RBRACKET { $$ = mk_index(P, $1, @2, $3); }
    ;
primary
    : NAME                      { $$ = mk_leaf(P, AST_NAME, @1); $$->u.name = $1; }
    | INT                       { $$ = mk_leaf(P, AST_INT, @1); $$->u.ival = $1; }
    | FLOAT                     { $$ = mk_leaf(P, AST_FLOAT, @1); $$->u.fval = $1; }
    | KW_INF                    { $$ = mk_leaf(P, AST_FLOAT, @1); $$->u.fval = (double)INFINITY; }
    | KW_TRUE                   { $$ = mk_leaf(P, AST_BOOL, @1); $$->u.bval = true; }
    | KW_FALSE                  { $$ = mk_leaf(P, AST_BOOL, @1); $$->u.bval = false; }
    | NAME LPAREN args_opt RPAREN           { $$ = mk_call(P, $1, @1, $3); }
    | LPAREN expr RPAREN                    { $$ = $2; }
    | LPAREN expr COMMA RPAREN              { $$ = mk_seq(P, AST_TUPLE, @1, vec_new(P, $2)); }
    | LPAREN tuple_items comma_opt RPAREN   { $$ = mk_seq(P, AST_TUPLE, @1, $2); }
    | LBRACKET list_opt RBRACKET            { $$ = mk_seq(P, AST_LIST, @1, $2); }
    ;
/* tuple -> '(' expr ',' ')' | '(' expr ',' expr {',' expr} [','] ')' */
tuple_items
    : expr COMMA expr           { $$ = vec_new(P, $1); tc_pvec_push(P, $$, $3); }
    | tuple_items COMMA expr    { tc_pvec_push(P, $1, $3); $$ = $1; }
    ;
list_opt
    : %empty                    { $$ = vec_new(P, NULL); }
    | expr_list comma_opt       { $$ = $1; }
    ;

/* args -> arg {',' arg} [','], arg -> expr | NAME '=' expr */
args_opt
    : %empty                    { $$ = vec_new(P, NULL); }
    | args comma_opt            { $$ = $1; }
    ;
args
    : arg                       { $$ = vec_new(P, $1); }
    | args COMMA arg
        {
            ast_arg *last = $1->v[$1->n - 1];
            if (last->name && !$3->name)
                diag_error(P->diag, TC_ERR_SYNTAX, $3->loc,
                           "positional argument after keyword argument '%s'", last->name);
            tc_pvec_push(P, $1, $3);
            $$ = $1;
        }
    ;
arg
    : expr                      { $$ = mk_arg(P, NULL, $1->loc, $1); }
    | NAME ASSIGN expr          { $$ = mk_arg(P, $1, @1, $3); }
    ;

/* index -> item {',' item}, item -> expr | [expr] ':' [expr] [':' [expr]] */
index_items
    : index_item                    { $$ = vec_new(P, $1); }
    | index_items COMMA index_item  { tc_pvec_push(P, $1, $3); $$ = $1; }
    ;
index_item: expr | slice ;
slice
    : expr_opt COLON expr_opt                   { $$ = mk_slice(P, @2, $1, $3, NULL); }
    | expr_opt COLON expr_opt COLON expr_opt    { $$ = mk_slice(P, @2, $1, $3, $5); }
    ;
expr_opt: %empty { $$ = NULL; } | expr { $$ = $1; } ;

%%

int tc_parse_run(yyscan_t scanner, tc_parse *P)
{
    tc_parse *outer = parse_running;
    parse_running = P;
    int rc = tc_yyparse(scanner, P);
    parse_running = outer;
    return rc;
}

/* --- building the tree ------------------------------------------------------ */

void tc_pvec_push(tc_parse *P, tc_pvec *v, void *item)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        void **nv = ARENA_ARRAY(P->arena, void *, cap);
        if (v->n)
            memcpy(nv, v->v, sizeof(void *) * (size_t)v->n);
        v->v = nv; /* the old array is abandoned in the arena: O(n) in all */
        v->cap = cap;
    }
    v->v[v->n++] = item;
}

static tc_pvec *vec_new(tc_parse *P, void *first)
{
    tc_pvec *v = ARENA_NEW(P->arena, tc_pvec);
    if (first)
        tc_pvec_push(P, v, first);
    return v;
}

/* Every expression node goes through here: the depth limit keeps hostile
 * input from exhausting the C stack of the recursive passes after us. */
static ast_expr *mk_expr(tc_parse *P, ast_kind k, tc_loc loc, int depth)
{
    if (depth > AST_MAX_DEPTH)
        diag_error(P->diag, TC_ERR_LIMIT, loc, "expression nested too deeply (more than %d levels)",
                   AST_MAX_DEPTH);
    ast_expr *e = ARENA_NEW(P->arena, ast_expr);
    e->kind = k;
    e->loc = loc;
    e->depth = depth;
    return e;
}

static int depth_of(const ast_expr *e) { return e ? e->depth : 0; }
static int max_int(int a, int b) { return a > b ? a : b; }

static ast_expr *mk_leaf(tc_parse *P, ast_kind k, tc_loc loc) { return mk_expr(P, k, loc, 1); }

static ast_expr *mk_unary(tc_parse *P, ast_op op, tc_loc loc, ast_expr *a)
{
    ast_expr *e = mk_expr(P, AST_UNARY, loc, a->depth + 1);
    e->u.unary.op = op;
    e->u.unary.a = a;
    return e;
}

static ast_expr *mk_binary(tc_parse *P, ast_op op, tc_loc loc, ast_expr *a, ast_expr *b)
{
    ast_expr *e = mk_expr(P, AST_BINARY, loc, max_int(a->depth, b->depth) + 1);
    e->u.binary.op = op;
    e->u.binary.a = a;
    e->u.binary.b = b;
    return e;
}

static ast_expr *mk_call(tc_parse *P, const char *fn, tc_loc loc, tc_pvec *args)
{
    int d = 0;
    for (int i = 0; i < args->n; i++)
        d = max_int(d, ((ast_arg *)args->v[i])->value->depth);
    ast_expr *e = mk_expr(P, AST_CALL, loc, d + 1);
    e->u.call.fn = fn;
    e->u.call.fn_loc = loc;
    e->u.call.nargs = args->n;
    e->u.call.args = ARENA_ARRAY(P->arena, ast_arg, args->n);
    for (int i = 0; i < args->n; i++)
        e->u.call.args[i] = *(ast_arg *)args->v[i];
    return e;
}

static ast_expr *mk_attr(tc_parse *P, ast_expr *obj, const char *attr, tc_loc loc)
{
    ast_expr *e = mk_expr(P, AST_ATTR, loc, obj->depth + 1);
    e->u.attr.obj = obj;
    e->u.attr.attr = attr;
    return e;
}

static ast_expr **expr_array(tc_parse *P, tc_pvec *items, int *depth)
{
    ast_expr **a = ARENA_ARRAY(P->arena, ast_expr *, items->n);
    for (int i = 0; i < items->n; i++) {
        a[i] = items->v[i];
        *depth = max_int(*depth, a[i]->depth);
    }
    return a;
}

static ast_expr *mk_index(tc_parse *P, ast_expr *obj, tc_loc loc, tc_pvec *items)
{
    int d = obj->depth;
    ast_expr **a = expr_array(P, items, &d);
    ast_expr *e = mk_expr(P, AST_INDEX, loc, d + 1);
    e->u.index.obj = obj;
    e->u.index.items = a;
    e->u.index.nitems = items->n;
    return e;
}

static ast_expr *mk_seq(tc_parse *P, ast_kind k, tc_loc loc, tc_pvec *items)
{
    int d = 0;
    ast_expr **a = expr_array(P, items, &d);
    ast_expr *e = mk_expr(P, k, loc, d + 1);
    e->u.tuple.items = a;
    e->u.tuple.nitems = items->n;
    return e;
}

static ast_expr *mk_slice(tc_parse *P, tc_loc loc, ast_expr *start, ast_expr *stop, ast_expr *step)
{
    int d = max_int(depth_of(start), max_int(depth_of(stop), depth_of(step)));
    ast_expr *e = mk_expr(P, AST_SLICE, loc, d + 1);
    e->u.slice.start = start;
    e->u.slice.stop = stop;
    e->u.slice.step = step;
    return e;
}

static ast_arg *mk_arg(tc_parse *P, const char *name, tc_loc loc, ast_expr *value)
{
    ast_arg *a = ARENA_NEW(P->arena, ast_arg);
    a->name = name;
    a->loc = loc;
    a->value = value;
    return a;
}

/* A dtype name, or a single capital letter: a dtype variable. */
static ast_type *mk_type(tc_parse *P, const char *dtype, tc_loc loc)
{
    ast_type *t = ARENA_NEW(P->arena, ast_type);
    t->loc = loc;
    if (dtype[0] >= 'A' && dtype[0] <= 'Z' && dtype[1] == 0)
        t->dtype_var = dtype;
    else if ((t->dtype = dtype_parse(dtype)) == TC_DT_NONE)
        diag_error(P->diag, TC_ERR_SYNTAX, loc,
                   "unknown dtype '%s' (expected f32, f16, bf16, f64, i32, i64, bool, "
                   "or a capital letter for a dtype variable)", dtype);
    return t;
}

static ast_dim *mk_dim(tc_parse *P, const char *name, int64_t value, tc_loc loc)
{
    ast_dim *d = ARENA_NEW(P->arena, ast_dim);
    d->name = name;
    d->value = value;
    d->loc = loc;
    return d;
}

static ast_param *mk_param(tc_parse *P, const char *name, tc_loc loc, bool inout,
                           ast_type *t, ast_expr *def)
{
    ast_param *p = ARENA_NEW(P->arena, ast_param);
    p->name = name;
    p->loc = loc;
    p->inout = inout;
    p->type = *t;
    p->def = def;
    return p;
}

/* named: a list of ast_param (name + type) from `-> (y: T, ...)`; single: `-> T`. */
static tc_results *mk_results(tc_parse *P, tc_pvec *named, ast_type *single)
{
    tc_results *r = ARENA_NEW(P->arena, tc_results);
    if (single) {
        r->n = 1;
        r->v = ARENA_NEW(P->arena, ast_result);
        r->v[0].loc = single->loc;
        r->v[0].type = *single;
    } else if (named) {
        r->named = true;
        r->n = named->n;
        r->v = ARENA_ARRAY(P->arena, ast_result, named->n);
        for (int i = 0; i < named->n; i++) {
            const ast_param *p = named->v[i];
            r->v[i].name = p->name;
            r->v[i].loc = p->loc;
            r->v[i].type = p->type;
        }
    }
    return r;
}

static ast_stmt *mk_assign(tc_parse *P, tc_pvec *targets, ast_expr *value)
{
    ast_stmt *s = ARENA_NEW(P->arena, ast_stmt);
    s->kind = AST_ASSIGN;
    if (!targets) { /* a bare call: no targets, located at the callee */
        s->loc = value->loc;
        s->value = value;
        return s;
    }
    s->ntargets = targets->n;
    s->targets = ARENA_ARRAY(P->arena, const char *, targets->n);
    s->target_locs = ARENA_ARRAY(P->arena, tc_loc, targets->n);
    for (int i = 0; i < targets->n; i++) {
        const ast_expr *t = targets->v[i];
        s->targets[i] = t->u.name;
        s->target_locs[i] = t->loc;
    }
    s->loc = s->target_locs[0];
    s->value = value;
    return s;
}

static ast_stmt *mk_return(tc_parse *P, tc_loc loc, tc_pvec *values)
{
    ast_stmt *s = ARENA_NEW(P->arena, ast_stmt);
    s->kind = AST_RETURN;
    s->loc = loc;
    if (values) {
        int d = 0;
        s->values = expr_array(P, values, &d);
        s->nvalues = values->n;
    }
    return s;
}

static ast_fn *mk_fn(tc_parse *P, const char *name, tc_loc loc, tc_pvec *params,
                     tc_results *res, tc_pvec *body, tc_loc end)
{
    ast_fn *f = ARENA_NEW(P->arena, ast_fn);
    f->name = name;
    f->loc = loc;
    f->nparams = params->n;
    f->params = ARENA_ARRAY(P->arena, ast_param, params->n);
    for (int i = 0; i < params->n; i++)
        f->params[i] = *(ast_param *)params->v[i];
    f->results = res->v;
    f->nresults = res->n;
    f->named_results = res->named;
    f->nstmts = body->n;
    f->stmts = ARENA_ARRAY(P->arena, ast_stmt, body->n);
    for (int i = 0; i < body->n; i++)
        f->stmts[i] = *(ast_stmt *)body->v[i];
    f->end_loc = end;
    return f;
}

/* --- syntax errors ---------------------------------------------------------- */

/* Where the parser is, judged by the innermost bracket still open. */
typedef enum {
    CTX_TOP,     /* outside any bracket: a function header, or between functions */
    CTX_BODY,    /* inside { } */
    CTX_PARAMS,  /* fn f( ... ) */
    CTX_RESULTS, /* -> ( ... ) */
    CTX_CALL,    /* f( ... ) */
    CTX_GROUP,   /* ( ... ): parentheses or a tuple */
    CTX_INDEX,   /* x[ ... ] */
    CTX_LIST,    /* [ ... ] */
    CTX_DIMS,    /* f32[ ... ] */
} err_ctx;

/* The symbols on the parser's stack, top first.  The bottom of the stack is
 * state 0, which no transition enters, so it ends the walk. */
typedef struct {
    yysymbol_kind_t sym[4]; /* the top four symbols (YYSYMBOL_YYEMPTY past the bottom) */
    err_ctx ctx;
} err_where;

static err_where where_am_i(const yypcontext_t *c)
{
    err_where w;
    int n = 0, closed = 0;
    for (int i = 0; i < 4; i++)
        w.sym[i] = YYSYMBOL_YYEMPTY;
    w.ctx = CTX_TOP;
    for (const yy_state_t *s = c->yyssp; *s != 0; s--) {
        yysymbol_kind_t k = YY_ACCESSING_SYMBOL(*s);
        if (n < 4)
            w.sym[n++] = k;
        if (k == YYSYMBOL_RPAREN || k == YYSYMBOL_RBRACKET || k == YYSYMBOL_RBRACE) {
            closed++;
            continue;
        }
        if (k != YYSYMBOL_LPAREN && k != YYSYMBOL_LBRACKET && k != YYSYMBOL_LBRACE)
            continue;
        if (closed > 0) {
            closed--;
            continue;
        }
        yysymbol_kind_t below = s[-1] ? YY_ACCESSING_SYMBOL(s[-1]) : YYSYMBOL_YYEMPTY;
        yysymbol_kind_t below2 = (s[-1] && s[-2]) ? YY_ACCESSING_SYMBOL(s[-2]) : YYSYMBOL_YYEMPTY;
        if (k == YYSYMBOL_LBRACE)
            w.ctx = CTX_BODY;
        else if (k == YYSYMBOL_LPAREN)
            w.ctx = below == YYSYMBOL_NAME ? (below2 == YYSYMBOL_KW_FN ? CTX_PARAMS : CTX_CALL)
                  : below == YYSYMBOL_ARROW ? CTX_RESULTS : CTX_GROUP;
        else
            w.ctx = below == YYSYMBOL_dtype_name ? CTX_DIMS
                  : below == YYSYMBOL_postfix ? CTX_INDEX : CTX_LIST;
        /* finish filling sym[] for the callers that look at it */
        for (const yy_state_t *t = s - 1; n < 4 && *t != 0; t--)
            w.sym[n++] = YY_ACCESSING_SYMBOL(*t);
        break;
    }
    return w;
}

static bool is_comparison(yysymbol_kind_t k)
{
    return k == YYSYMBOL_EQ || k == YYSYMBOL_NE || k == YYSYMBOL_LT || k == YYSYMBOL_LE ||
           k == YYSYMBOL_GT || k == YYSYMBOL_GE;
}

/* Symbols that can sit between a comparison operator and the top of the
 * stack while its right operand is being parsed. */
static bool inside_operand(yysymbol_kind_t k)
{
    switch (k) {
    case YYSYMBOL_add_expr: case YYSYMBOL_mul_expr: case YYSYMBOL_unary:
    case YYSYMBOL_power: case YYSYMBOL_postfix: case YYSYMBOL_primary:
    case YYSYMBOL_NAME: case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_KW_INF:
    case YYSYMBOL_KW_TRUE: case YYSYMBOL_KW_FALSE: case YYSYMBOL_DOT:
    case YYSYMBOL_PLUS: case YYSYMBOL_MINUS: case YYSYMBOL_STAR: case YYSYMBOL_SLASH:
    case YYSYMBOL_PERCENT: case YYSYMBOL_AT: case YYSYMBOL_POW: case YYSYMBOL_NOT:
        return true;
    default:
        return false;
    }
}

/* Is the parser in the right operand of a comparison (so that another
 * comparison operator would chain)?  Bracketed groups are skipped whole. */
static bool chained_comparison(const yypcontext_t *c)
{
    int closed = 0;
    for (const yy_state_t *s = c->yyssp; *s != 0; s--) {
        yysymbol_kind_t k = YY_ACCESSING_SYMBOL(*s);
        if (k == YYSYMBOL_RPAREN || k == YYSYMBOL_RBRACKET) {
            closed++;
        } else if (k == YYSYMBOL_LPAREN || k == YYSYMBOL_LBRACKET) {
            if (closed == 0)
                return false;
            closed--;
        } else if (closed == 0) {
            if (is_comparison(k))
                return true;
            if (!inside_operand(k))
                return false;
        }
    }
    return false;
}

/* A token as a message shows it: 'x' (cut short if long) or end of line. */
static const char *spell(tc_parse *P, const tc_tokspell *t)
{
    if (t->kind == NEWLINE) /* t->kind is a token kind, not a symbol kind */
        return "end of line";
    if (t->kind == END)
        return "end of file";
    if (t->len > 40)
        return arena_printf(P->arena, "'%.37s...'", t->text);
    return arena_printf(P->arena, "'%.*s'", t->len, t->text);
}

static bool is_operator(yysymbol_kind_t k)
{
    switch (k) {
    case YYSYMBOL_PLUS: case YYSYMBOL_MINUS: case YYSYMBOL_STAR: case YYSYMBOL_SLASH:
    case YYSYMBOL_PERCENT: case YYSYMBOL_POW: case YYSYMBOL_AT: case YYSYMBOL_EQ:
    case YYSYMBOL_NE: case YYSYMBOL_LT: case YYSYMBOL_LE: case YYSYMBOL_GT: case YYSYMBOL_GE:
    case YYSYMBOL_ANDAND: case YYSYMBOL_OROR: case YYSYMBOL_DOT: case YYSYMBOL_LBRACKET:
    case YYSYMBOL_LPAREN:
        return true;
    default:
        return false;
    }
}

/* The fallback: "X, Y or Z" from the expected tokens, operators left out when
 * anything else could come (after an operand every operator could). */
static const char *list_expected(tc_parse *P, const bool *want)
{
    yysymbol_kind_t ks[YYNTOKENS];
    int n = 0, nonop = 0;
    for (int k = 0; k < YYNTOKENS; k++)
        if (want[k] && !is_operator((yysymbol_kind_t)k))
            nonop++;
    for (int k = 0; k < YYNTOKENS; k++)
        if (want[k] && (!nonop || !is_operator((yysymbol_kind_t)k)))
            ks[n++] = (yysymbol_kind_t)k;
    tc_buf b;
    buf_init(&b, P->arena);
    for (int i = 0; i < n && i < 6; i++) {
        if (i)
            buf_puts(&b, i == n - 1 ? " or " : ", ");
        buf_puts(&b, yysymbol_name(ks[i])); /* the %token aliases: "')'" */
    }
    if (n > 6)
        buf_puts(&b, ", ...");
    return buf_str(&b);
}

/* What the parser wanted, in words, from where it is and what it could
 * shift.  Returns a phrase for "expected %s", or sets *whole to a complete
 * message for the few errors better said another way. */
static const char *expected(tc_parse *P, const yypcontext_t *c, yysymbol_kind_t tok,
                            const bool *want, const char **whole)
{
    err_where w = where_am_i(c);
    yysymbol_kind_t s0 = w.sym[0], s1 = w.sym[1];
    const char *prev = spell(P, &P->prev);
    *whole = NULL;

    if (is_comparison(tok) && !want[tok] && chained_comparison(c)) {
        *whole = "comparison operators cannot be chained; write 'a < b && b < c'";
        return NULL;
    }
    if (tok == YYSYMBOL_YYEOF && w.ctx == CTX_BODY && want[YYSYMBOL_RBRACE])
        return "'}'";
    if (w.ctx == CTX_DIMS) {
        if (tok == YYSYMBOL_STAR && s0 == YYSYMBOL_COMMA) {
            *whole = "'*' must be the only dimension, as in f32[*]";
            return NULL;
        }
        if (want[YYSYMBOL_INT])
            return want[YYSYMBOL_STAR] ? "a dimension (an integer, a name or '*')"
                                       : "a dimension (an integer or a name)";
        if (want[YYSYMBOL_COMMA])
            return "',' or ']' after dimension";
        return list_expected(P, want);
    }
    if (s0 == YYSYMBOL_DOT)
        return "attribute name after '.'";
    if (want[YYSYMBOL_INT]) /* an operand: INT starts nothing but expressions */
        return arena_printf(P->arena, "%s after %s",
                            w.ctx == CTX_INDEX && want[YYSYMBOL_COLON] ? "index or slice" : "expression",
                            prev);
    switch (w.ctx) {
    case CTX_PARAMS:
        if (s0 == YYSYMBOL_LPAREN || s0 == YYSYMBOL_COMMA)
            return want[YYSYMBOL_RPAREN] ? "parameter name or ')'" : "parameter name";
        if (s0 == YYSYMBOL_NAME && want[YYSYMBOL_COLON])
            return arena_printf(P->arena, "':' and a type after parameter %s", prev);
        if (s0 == YYSYMBOL_COLON || s0 == YYSYMBOL_KW_INOUT || s0 == YYSYMBOL_inout_opt)
            return arena_printf(P->arena, "a type after %s", prev);
        if (want[YYSYMBOL_ASSIGN])
            return "'=', ',' or ')' after parameter type";
        if (want[YYSYMBOL_RPAREN])
            return "',' or ')' after parameter";
        break;
    case CTX_RESULTS: {
        const char *hint = " (several results are named: -> (y: f32[N], z: f32[N]))";
        if (s0 == YYSYMBOL_LPAREN || s0 == YYSYMBOL_COMMA)
            return arena_printf(P->arena, "result name%s", hint);
        if (s0 == YYSYMBOL_NAME && want[YYSYMBOL_COLON])
            return arena_printf(P->arena, "':' after result name %s%s", prev,
                                s1 == YYSYMBOL_COLON ? "" : hint);
        if (s0 == YYSYMBOL_COLON)
            return arena_printf(P->arena, "a type after %s", prev);
        if (want[YYSYMBOL_RPAREN])
            return "',' or ')' after result";
        break;
    }
    case CTX_CALL:
        if (want[YYSYMBOL_RPAREN])
            return "')' after arguments";
        break;
    case CTX_GROUP:
        if (want[YYSYMBOL_RPAREN])
            return "')'";
        break;
    case CTX_INDEX:
        if (tok == YYSYMBOL_COLON) {
            *whole = "too many ':' in slice (a slice is start:stop:step)";
            return NULL;
        }
        if (want[YYSYMBOL_RBRACKET])
            return "']' after index";
        break;
    case CTX_LIST:
        if (want[YYSYMBOL_RBRACKET])
            return "']' after list";
        break;
    case CTX_BODY:
        if (want[YYSYMBOL_KW_RETURN])
            return "a statement (an assignment, a call or 'return')";
        if ((s0 == YYSYMBOL_NAME || s0 == YYSYMBOL_targets) && want[YYSYMBOL_ASSIGN])
            return arena_printf(P->arena, "'=' after %s", prev);
        if (s0 == YYSYMBOL_COMMA && want[YYSYMBOL_NAME])
            return "a name after ','";
        if (want[YYSYMBOL_NEWLINE])
            return "end of line or ';' after statement";
        break;
    case CTX_TOP:
        if (s0 == YYSYMBOL_KW_FN)
            return "function name after 'fn'";
        if (s0 == YYSYMBOL_NAME && s1 == YYSYMBOL_KW_FN)
            return "'(' after function name";
        if (want[YYSYMBOL_ARROW])
            return "'->' or '{' after parameters";
        if (s0 == YYSYMBOL_ARROW)
            return "result type after '->'";
        if (want[YYSYMBOL_LBRACE])
            return "'{' to start the function body";
        if (want[YYSYMBOL_KW_FN])
            return "'fn' to start a function";
        break;
    case CTX_DIMS: /* answered above, before the switch */
        break;
    }
    return list_expected(P, want);
}

static int yyreport_syntax_error(const yypcontext_t *c, yyscan_t scanner, tc_parse *P)
{
    (void)scanner;
    yysymbol_kind_t tok = yypcontext_token(c);
    tc_loc loc = *yypcontext_location(c);
    yysymbol_kind_t exp[YYNTOKENS];
    bool want[YYNTOKENS] = {false};
    int n = yypcontext_expected_tokens(c, exp, YYNTOKENS);
    for (int i = 0; i < n; i++)
        want[exp[i]] = true;
    const char *whole;
    const char *what = expected(P, c, tok, want, &whole);
    if (whole)
        diag_error(P->diag, TC_ERR_SYNTAX, loc, "%s", whole);
    if (tok == YYSYMBOL_YYEOF)
        diag_error(P->diag, TC_ERR_SYNTAX, loc, "unexpected end of file, expected %s", what);
    /* a Python or PyTorch habit (x.sum(1), 'and', 'def'): say the tensorc spelling (hints.c) */
    hint_tok hp = {P->prev.text, P->prev.len, P->prev.kind == NAME, P->prev.kind == LPAREN};
    hint_tok hc = {P->cur.text, P->cur.len, P->cur.kind == NAME, P->cur.kind == LPAREN};
    const char *hint = front_hint(P->arena, P->src, hp, hc);
    if (hint)
        diag_error_hint(P->diag, TC_ERR_SYNTAX, loc, hint, "expected %s, found %s", what,
                        spell(P, &P->cur));
    diag_error(P->diag, TC_ERR_SYNTAX, loc, "expected %s, found %s", what, spell(P, &P->cur));
}

/* Only "memory exhausted" comes here: the parser stack passed YYMAXDEPTH,
 * which takes thousands of unclosed prefix operators or `**`s. */
static void tc_yyerror(tc_loc *loc, yyscan_t scanner, tc_parse *P, const char *msg)
{
    (void)scanner;
    (void)msg;
    diag_error(P->diag, TC_ERR_LIMIT, *loc, "expression nested too deeply (more than %d levels)",
               AST_MAX_DEPTH);
}
