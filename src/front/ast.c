/* ast.c - the front end's driver (ast_parse) and the --emit=ast printer.
 *
 * ast_parse runs the flex scanner (src/front/lexer.l) and the bison parser
 * (src/front/parser.y), which build the tree in the arena as they go.  Errors
 * unwind from inside them through diag_error to the caller's protected call;
 * that leaks nothing because the scanner, its input buffer and the parser
 * stacks are all arena memory (see the header comments of both grammar files).
 *
 * ast_print writes a dump meant for people and golden tests alike: one line
 * per function, parameter, result and statement, each with its line:col;
 * binary expressions fully parenthesized so the parse is visible; floats in
 * the shortest text that reads back to the same double.  Example:
 *
 *     fn rmsnorm @1:4
 *       param x: f32[N, D] @1:12
 *       param eps: f32 = 1e-06 @1:35
 *       result f32[N, D] @1:59
 *       2:5 ms = mean((x * x), axis=-1, keepdim=true)
 *       3:5 return ((x * rsqrt((ms + eps))) * g)
 */
#include "ast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"
#include "lexer.h"

ast_program *ast_parse(const tc_source *src, tc_arena *a, tc_diag *d)
{
    if (src->len > (size_t)AST_MAX_SOURCE)
        diag_error(d, TC_ERR_LIMIT, (tc_loc){src, 0, 0},
                   "source is too large (%zu bytes; the limit is %d MiB)", src->len,
                   AST_MAX_SOURCE >> 20);
    tc_parse *P = ARENA_NEW(a, tc_parse);
    P->src = src;
    P->arena = a;
    P->diag = d;
    P->line = P->col = 1;
    P->end = (tc_loc){src, 1, 1};

    yyscan_t scanner;
    if (tc_yylex_init_extra(P, &scanner) != 0)
        diag_fatal(d, "out of memory (creating the lexer)");
    tc_yy_scan_bytes(src->text, (int)src->len, scanner);
    int rc = tc_parse_run(scanner, P);
    tc_yylex_destroy(scanner);
    if (rc != 0) /* every error unwinds from inside; a plain failure is a bug */
        diag_error(d, TC_ERR_INTERNAL, (tc_loc){src, 0, 0}, "parser failed without a message");

    ast_program *prog = ARENA_NEW(a, ast_program);
    prog->src = src;
    prog->nfns = P->fns.n;
    prog->fns = ARENA_ARRAY(a, ast_fn, P->fns.n);
    for (int i = 0; i < P->fns.n; i++)
        prog->fns[i] = *(ast_fn *)P->fns.v[i];
    return prog;
}

const char *ast_op_str(ast_op op)
{
    switch (op) {
    case AST_OP_ADD: return "+";
    case AST_OP_SUB: return "-";
    case AST_OP_MUL: return "*";
    case AST_OP_DIV: return "/";
    case AST_OP_MOD: return "%";
    case AST_OP_POW: return "**";
    case AST_OP_MATMUL: return "@";
    case AST_OP_EQ: return "==";
    case AST_OP_NE: return "!=";
    case AST_OP_LT: return "<";
    case AST_OP_LE: return "<=";
    case AST_OP_GT: return ">";
    case AST_OP_GE: return ">=";
    case AST_OP_AND: return "&&";
    case AST_OP_OR: return "||";
    case AST_OP_NEG: return "-";
    case AST_OP_NOT: return "!";
    case AST_OP_PLUS: return "+";
    }
    return "?";
}

/* --- printing ---------------------------------------------------------------- */

/* The shortest %g text that reads back as v, with ".0" added when it would
 * otherwise look like an integer. */
static void print_float(tc_buf *b, double v)
{
    if (isinf(v)) {
        buf_puts(b, v > 0 ? "inf" : "-inf");
        return;
    }
    if (isnan(v)) {
        buf_puts(b, "nan");
        return;
    }
    char s[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    buf_puts(b, s);
    if (!strpbrk(s, ".e"))
        buf_puts(b, ".0");
}

static void print_expr(tc_buf *b, const ast_expr *e);

static void print_list(tc_buf *b, ast_expr *const *items, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            buf_puts(b, ", ");
        print_expr(b, items[i]);
    }
}

static void print_expr(tc_buf *b, const ast_expr *e)
{
    if (!e)
        return; /* an omitted slice bound */
    switch (e->kind) {
    case AST_INT:
        buf_printf(b, "%lld", (long long)e->u.ival);
        break;
    case AST_FLOAT:
        print_float(b, e->u.fval);
        break;
    case AST_BOOL:
        buf_puts(b, e->u.bval ? "true" : "false");
        break;
    case AST_NAME:
        buf_puts(b, e->u.name);
        break;
    case AST_UNARY: /* the operand parenthesizes itself if it is binary */
        buf_puts(b, ast_op_str(e->u.unary.op));
        print_expr(b, e->u.unary.a);
        break;
    case AST_BINARY:
        buf_putc(b, '(');
        print_expr(b, e->u.binary.a);
        buf_printf(b, " %s ", ast_op_str(e->u.binary.op));
        print_expr(b, e->u.binary.b);
        buf_putc(b, ')');
        break;
    case AST_CALL:
        buf_printf(b, "%s(", e->u.call.fn);
        for (int i = 0; i < e->u.call.nargs; i++) {
            if (i)
                buf_puts(b, ", ");
            if (e->u.call.args[i].name)
                buf_printf(b, "%s=", e->u.call.args[i].name);
            print_expr(b, e->u.call.args[i].value);
        }
        buf_putc(b, ')');
        break;
    case AST_ATTR:
        print_expr(b, e->u.attr.obj);
        buf_printf(b, ".%s", e->u.attr.attr);
        break;
    case AST_INDEX:
        print_expr(b, e->u.index.obj);
        buf_putc(b, '[');
        print_list(b, e->u.index.items, e->u.index.nitems);
        buf_putc(b, ']');
        break;
    case AST_TUPLE:
        buf_putc(b, '(');
        print_list(b, e->u.tuple.items, e->u.tuple.nitems);
        buf_puts(b, e->u.tuple.nitems == 1 ? ",)" : ")");
        break;
    case AST_LIST:
        buf_putc(b, '[');
        print_list(b, e->u.tuple.items, e->u.tuple.nitems);
        buf_putc(b, ']');
        break;
    case AST_SLICE:
        print_expr(b, e->u.slice.start);
        buf_putc(b, ':');
        print_expr(b, e->u.slice.stop);
        if (e->u.slice.step) {
            buf_putc(b, ':');
            print_expr(b, e->u.slice.step);
        }
        break;
    }
}

static void print_type(tc_buf *b, const ast_type *t)
{
    buf_puts(b, t->dtype_var ? t->dtype_var : dtype_name(t->dtype));
    if (!t->is_tensor)
        return;
    if (t->star) {
        buf_puts(b, "[*]");
        return;
    }
    buf_putc(b, '[');
    for (int i = 0; i < t->ndims; i++) {
        if (i)
            buf_puts(b, ", ");
        if (t->dims[i].name)
            buf_puts(b, t->dims[i].name);
        else
            buf_printf(b, "%lld", (long long)t->dims[i].value);
    }
    buf_putc(b, ']');
}

static void print_loc(tc_buf *b, tc_loc loc) { buf_printf(b, " @%d:%d\n", loc.line, loc.col); }

const char *ast_derive_target(const ast_fn *fn)
{
    const ast_expr *e = fn->derive;
    if (!e || e->kind != AST_CALL || e->u.call.nargs < 1 || e->u.call.args[0].name ||
        e->u.call.args[0].value->kind != AST_NAME)
        return NULL;
    return e->u.call.args[0].value->u.name;
}

static void print_fn(tc_buf *b, const ast_fn *f)
{
    buf_printf(b, "fn %s", f->name);
    print_loc(b, f->loc);
    if (f->derive) {
        buf_puts(b, "  = ");
        print_expr(b, f->derive);
        if (f->derive_part)
            buf_puts(b, f->derive_part == 1 ? " (its forward)" : " (its backward)");
        print_loc(b, f->derive->loc);
    }
    for (int i = 0; i < f->nparams; i++) {
        const ast_param *p = &f->params[i];
        buf_printf(b, "  param %s: %s", p->name, p->inout ? "inout " : "");
        print_type(b, &p->type);
        if (p->def) {
            buf_puts(b, " = ");
            print_expr(b, p->def);
        }
        print_loc(b, p->loc);
    }
    for (int i = 0; i < f->nresults; i++) {
        const ast_result *r = &f->results[i];
        buf_puts(b, "  result ");
        if (r->name)
            buf_printf(b, "%s: ", r->name);
        print_type(b, &r->type);
        print_loc(b, r->loc);
    }
    for (int i = 0; i < f->nstmts; i++) {
        const ast_stmt *s = &f->stmts[i];
        buf_printf(b, "  %d:%d ", s->loc.line, s->loc.col);
        if (s->kind == AST_ASSIGN) {
            for (int t = 0; t < s->ntargets; t++)
                buf_printf(b, "%s%s", t ? ", " : "", s->targets[t]);
            if (s->ntargets)
                buf_puts(b, " = ");
            print_expr(b, s->value);
        } else {
            buf_puts(b, "return");
            if (s->nvalues)
                buf_putc(b, ' ');
            print_list(b, s->values, s->nvalues);
        }
        buf_putc(b, '\n');
    }
}

void ast_print(tc_buf *b, const ast_program *p)
{
    for (int i = 0; i < p->nfns; i++) {
        if (i)
            buf_putc(b, '\n');
        print_fn(b, &p->fns[i]);
    }
}
