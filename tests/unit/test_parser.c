/* test_parser.c - ast_parse and ast_print: precedence, every form of
 * language.md (its examples verbatim), node locations, syntax errors with
 * exact line:col and text, the nesting and size limits, and speed on a big
 * program.  It also replays tests/bad/syn_*.tc against the parser, so those
 * files' "# expect:" lines are checked before the CLI exists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ast.h"

/* --- harness ------------------------------------------------------------------- */

typedef struct {
    tc_arena *a;
    tc_diag d;
    tc_source src;
    ast_program *prog;
    tc_status status;
} parsed;

static void parse_named(parsed *r, const char *name, const char *text, size_t len)
{
    memset(r, 0, sizeof *r);
    diag_init(&r->d);
    jmp_buf jb;
    r->d.jb = &jb;
    r->a = arena_new(&r->d);
    r->src = (tc_source){name, text, len};
    if (setjmp(jb) != 0) {
        r->status = r->d.status;
        r->prog = NULL;
        return;
    }
    r->prog = ast_parse(&r->src, r->a, &r->d);
    r->status = TC_OK;
}

static void parse(parsed *r, const char *text) { parse_named(r, "t.tc", text, strlen(text)); }

static void done(parsed *r)
{
    arena_free(r->a);
    diag_release(&r->d);
}

/* Parse text that must be valid and return its dump (malloc'd). */
static char *dump(const char *text)
{
    parsed r;
    parse(&r, text);
    if (r.status != TC_OK)
        print_error("unexpected error: %s\n", r.d.msg);
    assert_int_equal(r.status, TC_OK);
    tc_buf b;
    buf_init(&b, r.a);
    ast_print(&b, r.prog);
    char *s = strdup(buf_str(&b));
    done(&r);
    return s;
}

static void expect_dump(const char *text, const char *want)
{
    char *got = dump(text);
    if (strcmp(got, want) != 0)
        print_error("source:\n%s\nwant:\n%s\ngot:\n%s\n", text, want, got);
    assert_string_equal(got, want);
    free(got);
}

/* `y = EXPR` parsed as the only statement; its printed right-hand side. */
static void expect_expr(const char *expr, const char *want)
{
    char src[4096];
    snprintf(src, sizeof src, "fn f() {\n    y = %s\n}\n", expr);
    char *got = dump(src);
    const char *rhs = strstr(got, "2:5 y = ");
    assert_non_null(rhs);
    rhs += strlen("2:5 y = ");
    size_t n = strcspn(rhs, "\n");
    if (strlen(want) != n || strncmp(rhs, want, n) != 0)
        print_error("expr %s: want %s, got %.*s\n", expr, want, (int)n, rhs);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(rhs, want, n);
    free(got);
}

static void expect_error_n(const char *text, size_t len, tc_status st, int line, int col,
                           const char *msg)
{
    parsed r;
    parse_named(&r, "t.tc", text, len);
    if (r.status != st || r.d.loc.line != line || r.d.loc.col != col ||
        strcmp(r.d.brief ? r.d.brief : "", msg) != 0)
        print_error("source:\n%.300s\n  want %d %d:%d %s\n  got  %d %d:%d %s\n", text, st, line,
                    col, msg, r.status, r.d.loc.line, r.d.loc.col,
                    r.d.brief ? r.d.brief : "(none)");
    assert_int_equal(r.status, st);
    assert_ptr_equal(r.d.loc.src, &r.src);
    assert_int_equal(r.d.loc.line, line);
    assert_int_equal(r.d.loc.col, col);
    assert_string_equal(r.d.brief, msg);
    done(&r);
}

static void expect_error(const char *text, int line, int col, const char *msg)
{
    expect_error_n(text, strlen(text), TC_ERR_SYNTAX, line, col, msg);
}

/* The first statement's value in `fn f() { y = EXPR }`, in r's arena. */
static const ast_expr *parse_expr(parsed *r, const char *text)
{
    parse(r, text);
    if (r->status != TC_OK)
        print_error("unexpected error: %s\n", r->d.msg);
    assert_int_equal(r->status, TC_OK);
    assert_int_equal(r->prog->nfns, 1);
    assert_true(r->prog->fns[0].nstmts >= 1);
    return r->prog->fns[0].stmts[0].value;
}

static void assert_loc(tc_loc l, int line, int col)
{
    if (l.line != line || l.col != col)
        print_error("loc: want %d:%d, got %d:%d\n", line, col, l.line, l.col);
    assert_int_equal(l.line, line);
    assert_int_equal(l.col, col);
}

/* --- expressions ------------------------------------------------------------ */

static void test_precedence(void **state)
{
    (void)state;
    expect_expr("a || b && c", "(a || (b && c))");
    expect_expr("a && b || c", "((a && b) || c)");
    expect_expr("a == b && c != d", "((a == b) && (c != d))");
    expect_expr("a + b < c * d", "((a + b) < (c * d))");
    expect_expr("a <= b || a >= b", "((a <= b) || (a >= b))");
    expect_expr("a > b - 1", "(a > (b - 1))");
    expect_expr("a + b * c", "(a + (b * c))");
    expect_expr("a * b + c", "((a * b) + c)");
    expect_expr("a @ b + c", "((a @ b) + c)");
    expect_expr("a + b @ c", "(a + (b @ c))");
    expect_expr("a % b @ c / d", "(((a % b) @ c) / d)");
    expect_expr("-a * b", "(-a * b)");
    expect_expr("-x ** 2", "-(x ** 2)");
    expect_expr("2 ** -1", "(2 ** -1)");
    expect_expr("x ** -y ** 2", "(x ** -(y ** 2))");
    expect_expr("!a && b", "(!a && b)");
    expect_expr("!(a && b)", "!(a && b)");
    expect_expr("- -a", "--a");
    expect_expr("+a - -b", "(+a - -b)");
    expect_expr("x.T @ y", "(x.T @ y)");
    expect_expr("x[0] ** 2", "(x[0] ** 2)");
    expect_expr("-x[0].T ** 2", "-(x[0].T ** 2)");
    expect_expr("f(x)[1].T", "f(x)[1].T");
    expect_expr("(a + b) * c", "((a + b) * c)");
    expect_expr("((a))", "a");
    expect_expr("(a < b) < c", "((a < b) < c)"); /* parenthesized, it is not a chain */
    expect_expr("a < b && b < c", "((a < b) && (b < c))");
}

static void test_associativity(void **state)
{
    (void)state;
    expect_expr("a - b - c", "((a - b) - c)");
    expect_expr("a / b * c", "((a / b) * c)");
    expect_expr("a @ b @ c", "((a @ b) @ c)");
    expect_expr("a || b || c", "((a || b) || c)");
    expect_expr("a && b && c", "((a && b) && c)");
    expect_expr("a ** b ** c", "(a ** (b ** c))");
    expect_expr("x.T.T", "x.T.T");
    expect_expr("x[0][1]", "x[0][1]");
}

static void test_literals(void **state)
{
    (void)state;
    expect_expr("1", "1");
    expect_expr("9223372036854775807", "9223372036854775807");
    expect_expr("2.5", "2.5");
    expect_expr("1e-6", "1e-06");
    expect_expr("1.0", "1.0");
    expect_expr("2.", "2.0");
    expect_expr(".5", "0.5");
    expect_expr("0.1", "0.1");
    expect_expr("0.3333333333333333", "0.3333333333333333");
    expect_expr("1e300", "1e+300");
    expect_expr("2.5e10", "2.5e+10");
    expect_expr("1e20", "1e+20");
    expect_expr("123456789.0", "123456789.0");
    expect_expr("inf", "inf");
    expect_expr("-inf", "-inf");
    expect_expr("true", "true");
    expect_expr("false", "false");

    parsed r;
    const ast_expr *e = parse_expr(&r, "fn f() { y = [1, 2.5, true, inf, -inf] }");
    assert_int_equal(e->kind, AST_LIST);
    assert_int_equal(e->u.tuple.nitems, 5);
    assert_int_equal(e->u.tuple.items[0]->kind, AST_INT);
    assert_int_equal(e->u.tuple.items[0]->u.ival, 1);
    assert_int_equal(e->u.tuple.items[1]->kind, AST_FLOAT);
    assert_true(e->u.tuple.items[1]->u.fval == 2.5);
    assert_int_equal(e->u.tuple.items[2]->kind, AST_BOOL);
    assert_true(e->u.tuple.items[2]->u.bval);
    assert_int_equal(e->u.tuple.items[3]->kind, AST_FLOAT);
    assert_true(isinf(e->u.tuple.items[3]->u.fval) && e->u.tuple.items[3]->u.fval > 0);
    /* -inf is unary minus applied to inf (docs/semantics.md) */
    assert_int_equal(e->u.tuple.items[4]->kind, AST_UNARY);
    assert_int_equal(e->u.tuple.items[4]->u.unary.op, AST_OP_NEG);
    assert_int_equal(e->u.tuple.items[4]->u.unary.a->kind, AST_FLOAT);
    done(&r);
}

static void test_tuples_and_lists(void **state)
{
    (void)state;
    expect_expr("(0, 2)", "(0, 2)");
    expect_expr("(0,)", "(0,)");
    expect_expr("(0, 2,)", "(0, 2)");
    expect_expr("(a, (b, c))", "(a, (b, c))");
    expect_expr("[N, D]", "[N, D]");
    expect_expr("[N, D,]", "[N, D]");
    expect_expr("[]", "[]");
    expect_expr("[N * D]", "[(N * D)]");

    parsed r;
    const ast_expr *e = parse_expr(&r, "fn f() {\n  y = (7,)\n}");
    assert_int_equal(e->kind, AST_TUPLE);
    assert_int_equal(e->u.tuple.nitems, 1);
    assert_int_equal(e->u.tuple.items[0]->u.ival, 7);
    assert_loc(e->loc, 2, 7); /* the '(' */
    done(&r);
}

static void test_calls(void **state)
{
    (void)state;
    expect_expr("mean(x * x, axis=-1, keepdim=true)", "mean((x * x), axis=-1, keepdim=true)");
    expect_expr("sum(x, axis=(0, 2))", "sum(x, axis=(0, 2))");
    expect_expr("f()", "f()");
    expect_expr("f(a, b,)", "f(a, b)");
    expect_expr("f16(x)", "f16(x)");
    expect_expr("T(x)", "T(x)");
    expect_expr("where(c, a, b)", "where(c, a, b)");
    expect_expr("permute(x, 2, 0, 1)", "permute(x, 2, 0, 1)");
    expect_expr("broadcast_to(x, [N, D])", "broadcast_to(x, [N, D])");
    expect_expr("reshape(x, N * D)", "reshape(x, (N * D))");
    expect_expr("f(g(h(x)))", "f(g(h(x)))");

    parsed r;
    const ast_expr *e = parse_expr(&r, "fn f() {\n  y = var(x, axis=-1,\n    correction=0)\n}");
    assert_int_equal(e->kind, AST_CALL);
    assert_string_equal(e->u.call.fn, "var");
    assert_loc(e->loc, 2, 7);
    assert_loc(e->u.call.fn_loc, 2, 7);
    assert_int_equal(e->u.call.nargs, 3);
    assert_null(e->u.call.args[0].name);
    assert_loc(e->u.call.args[0].loc, 2, 11); /* a positional argument: its value */
    assert_string_equal(e->u.call.args[1].name, "axis");
    assert_loc(e->u.call.args[1].loc, 2, 14); /* a keyword argument: the keyword */
    assert_int_equal(e->u.call.args[1].value->kind, AST_UNARY);
    assert_string_equal(e->u.call.args[2].name, "correction");
    assert_loc(e->u.call.args[2].loc, 3, 5);
    assert_int_equal(e->u.call.args[2].value->u.ival, 0);
    done(&r);
}

static void test_indexing(void **state)
{
    (void)state;
    expect_expr("x[:, 0:128]", "x[:, 0:128]");
    expect_expr("x[1:, ::2]", "x[1:, ::2]");
    expect_expr("x[-1]", "x[-1]");
    expect_expr("x[:-1, 1:N-1:2]", "x[:-1, 1:(N - 1):2]");
    expect_expr("x[a:b]", "x[a:b]");

    parsed r;
    const ast_expr *e = parse_expr(&r, "fn f() {\n  y = x[:, 0:128]\n  z = x[1:, ::2]\n}");
    assert_int_equal(e->kind, AST_INDEX);
    assert_loc(e->loc, 2, 8); /* the '[' */
    assert_int_equal(e->u.index.obj->kind, AST_NAME);
    assert_int_equal(e->u.index.nitems, 2);
    const ast_expr *s0 = e->u.index.items[0], *s1 = e->u.index.items[1];
    assert_int_equal(s0->kind, AST_SLICE);
    assert_loc(s0->loc, 2, 9); /* the ':' */
    assert_null(s0->u.slice.start);
    assert_null(s0->u.slice.stop);
    assert_null(s0->u.slice.step);
    assert_int_equal(s1->kind, AST_SLICE);
    assert_int_equal(s1->u.slice.start->u.ival, 0);
    assert_int_equal(s1->u.slice.stop->u.ival, 128);
    assert_null(s1->u.slice.step);

    e = r.prog->fns[0].stmts[1].value;
    s0 = e->u.index.items[0];
    s1 = e->u.index.items[1];
    assert_int_equal(s0->u.slice.start->u.ival, 1);
    assert_null(s0->u.slice.stop);
    assert_null(s0->u.slice.step);
    assert_null(s1->u.slice.start);
    assert_null(s1->u.slice.stop);
    assert_int_equal(s1->u.slice.step->u.ival, 2);
    done(&r);

    e = parse_expr(&r, "fn f() { y = x[-1] }");
    assert_int_equal(e->u.index.nitems, 1);
    assert_int_equal(e->u.index.items[0]->kind, AST_UNARY);
    done(&r);
}

static void test_locations(void **state)
{
    (void)state;
    parsed r;
    /*                                       1         2         3
     *                              1234567890123456789012345678901234567 */
    const ast_expr *e = parse_expr(&r, "fn f() {\n"
                                       "    y = -a.T + g(b)[0] * 2.5 ** !c\n"
                                       "}");
    /* (-(a.T)) + ((g(b)[0]) * (2.5 ** !c)) */
    assert_int_equal(e->kind, AST_BINARY);
    assert_int_equal(e->u.binary.op, AST_OP_ADD);
    assert_loc(e->loc, 2, 14);
    const ast_expr *neg = e->u.binary.a;
    assert_int_equal(neg->kind, AST_UNARY);
    assert_loc(neg->loc, 2, 9);
    assert_int_equal(neg->u.unary.a->kind, AST_ATTR);
    assert_string_equal(neg->u.unary.a->u.attr.attr, "T");
    assert_loc(neg->u.unary.a->loc, 2, 12);
    assert_loc(neg->u.unary.a->u.attr.obj->loc, 2, 10);
    const ast_expr *mul = e->u.binary.b;
    assert_int_equal(mul->u.binary.op, AST_OP_MUL);
    assert_loc(mul->loc, 2, 24);
    const ast_expr *idx = mul->u.binary.a;
    assert_int_equal(idx->kind, AST_INDEX);
    assert_loc(idx->loc, 2, 20);
    assert_int_equal(idx->u.index.obj->kind, AST_CALL);
    assert_loc(idx->u.index.obj->loc, 2, 16);
    assert_loc(idx->u.index.items[0]->loc, 2, 21);
    const ast_expr *pw = mul->u.binary.b;
    assert_int_equal(pw->u.binary.op, AST_OP_POW);
    assert_loc(pw->loc, 2, 30);
    assert_int_equal(pw->u.binary.a->kind, AST_FLOAT);
    assert_loc(pw->u.binary.a->loc, 2, 26);
    assert_int_equal(pw->u.binary.b->u.unary.op, AST_OP_NOT);
    assert_loc(pw->u.binary.b->loc, 2, 33);
    assert_loc(pw->u.binary.b->u.unary.a->loc, 2, 34);
    /* depth: + -> * -> ** -> ! -> c is 5 levels */
    assert_int_equal(e->depth, 5);
    assert_int_equal(pw->u.binary.b->u.unary.a->depth, 1);
    /* a parenthesized expression keeps its own location */
    done(&r);
    e = parse_expr(&r, "fn f() { y = (a\n + b) }");
    assert_loc(e->loc, 2, 2);
    done(&r);
}

/* --- functions, parameters, types, statements --------------------------------- */

static void test_signature(void **state)
{
    (void)state;
    parsed r;
    parse(&r, "fn f(x: T[N, 4], p: inout f16[*], s: bf16, k: i64 = 3, m: bool[B],\n"
              "      d: f64[1], i: i32 = -1) -> (y: T[N, D], rstd: f32[N]) {\n"
              "    return x, x\n"
              "}\n");
    assert_int_equal(r.status, TC_OK);
    const ast_fn *f = &r.prog->fns[0];
    assert_string_equal(f->name, "f");
    assert_loc(f->loc, 1, 4);
    assert_int_equal(f->nparams, 7);

    const ast_param *x = &f->params[0];
    assert_string_equal(x->name, "x");
    assert_loc(x->loc, 1, 6);
    assert_false(x->inout);
    assert_int_equal(x->type.dtype, TC_DT_NONE);
    assert_string_equal(x->type.dtype_var, "T");
    assert_loc(x->type.loc, 1, 9);
    assert_true(x->type.is_tensor);
    assert_false(x->type.star);
    assert_int_equal(x->type.ndims, 2);
    assert_string_equal(x->type.dims[0].name, "N");
    assert_loc(x->type.dims[0].loc, 1, 11);
    assert_null(x->type.dims[1].name);
    assert_int_equal(x->type.dims[1].value, 4);
    assert_loc(x->type.dims[1].loc, 1, 14);
    assert_null(x->def);

    const ast_param *p = &f->params[1];
    assert_true(p->inout);
    assert_int_equal(p->type.dtype, TC_F16);
    assert_null(p->type.dtype_var);
    assert_true(p->type.is_tensor);
    assert_true(p->type.star);
    assert_int_equal(p->type.ndims, 0);

    const ast_param *s = &f->params[2];
    assert_int_equal(s->type.dtype, TC_BF16);
    assert_false(s->type.is_tensor);

    const ast_param *k = &f->params[3];
    assert_int_equal(k->type.dtype, TC_I64);
    assert_non_null(k->def);
    assert_int_equal(k->def->kind, AST_INT);
    assert_int_equal(k->def->u.ival, 3);

    assert_int_equal(f->params[4].type.dtype, TC_BOOL);
    assert_int_equal(f->params[5].type.dtype, TC_F64);
    assert_loc(f->params[5].loc, 2, 7);
    assert_int_equal(f->params[6].type.dtype, TC_I32);
    assert_int_equal(f->params[6].def->kind, AST_UNARY);

    assert_true(f->named_results);
    assert_int_equal(f->nresults, 2);
    assert_string_equal(f->results[0].name, "y");
    assert_loc(f->results[0].loc, 2, 35);
    assert_string_equal(f->results[0].type.dtype_var, "T");
    assert_string_equal(f->results[1].name, "rstd");
    assert_int_equal(f->results[1].type.dtype, TC_F32);
    assert_int_equal(f->results[1].type.ndims, 1);
    assert_loc(f->end_loc, 4, 1);
    done(&r);

    expect_dump("fn f(x: T[N, 4], p: inout f16[*], k: i64 = 3) -> (y: T[N, D], r: f32[N]) {\n}\n",
                "fn f @1:4\n"
                "  param x: T[N, 4] @1:6\n"
                "  param p: inout f16[*] @1:18\n"
                "  param k: i64 = 3 @1:35\n"
                "  result y: T[N, D] @1:51\n"
                "  result r: f32[N] @1:63\n");
}

static void test_results(void **state)
{
    (void)state;
    parsed r;
    parse(&r, "fn a() {\n}\nfn b() -> f32[N] {\n}\nfn c() -> (y: f32,) {\n}\n");
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->nfns, 3);
    assert_int_equal(r.prog->fns[0].nresults, 0);
    assert_false(r.prog->fns[0].named_results);
    assert_int_equal(r.prog->fns[1].nresults, 1);
    assert_false(r.prog->fns[1].named_results);
    assert_null(r.prog->fns[1].results[0].name);
    assert_loc(r.prog->fns[1].results[0].loc, 3, 11); /* the type's dtype name */
    assert_int_equal(r.prog->fns[2].nresults, 1);
    assert_true(r.prog->fns[2].named_results);
    assert_string_equal(r.prog->fns[2].results[0].name, "y");
    done(&r);
}

static void test_statements(void **state)
{
    (void)state;
    parsed r;
    parse(&r, "fn f(x: f32[N]) -> (a: f32[N], b: f32[N]) {\n"
              "    a, b = g(x)  # two results\n"
              "\n"
              "    # a comment line\n"
              "    c = a; d = b;;\n"
              "    return\n"
              "    return a, b\n"
              "}\n");
    assert_int_equal(r.status, TC_OK);
    const ast_fn *f = &r.prog->fns[0];
    assert_int_equal(f->nstmts, 5);
    const ast_stmt *s = &f->stmts[0];
    assert_int_equal(s->kind, AST_ASSIGN);
    assert_int_equal(s->ntargets, 2);
    assert_string_equal(s->targets[0], "a");
    assert_string_equal(s->targets[1], "b");
    assert_loc(s->loc, 2, 5);
    assert_loc(s->target_locs[0], 2, 5);
    assert_loc(s->target_locs[1], 2, 8);
    assert_int_equal(s->value->kind, AST_CALL);
    assert_loc(f->stmts[1].loc, 5, 5);
    assert_loc(f->stmts[2].loc, 5, 12);
    s = &f->stmts[3];
    assert_int_equal(s->kind, AST_RETURN);
    assert_loc(s->loc, 6, 5);
    assert_int_equal(s->nvalues, 0);
    s = &f->stmts[4];
    assert_int_equal(s->nvalues, 2);
    assert_int_equal(s->values[1]->kind, AST_NAME);
    assert_string_equal(s->values[1]->u.name, "b");
    done(&r);

    expect_dump("fn f() { a, b = g(x); return }\n",
                "fn f @1:4\n"
                "  1:10 a, b = g(x)\n"
                "  1:23 return\n");
}

static void test_layout(void **state)
{
    (void)state;
    /* wrapped signatures and calls, brace on its own line, trailing commas,
     * comments and blank lines anywhere, CRLF, no final newline */
    expect_dump("\n# leading comment\n\n"
                "fn f(\n"
                "    x: f32[N,\n"
                "           D],   # dims wrap too\n"
                "    y: f32,\n"
                ")\n"
                "{\n"
                "\n"
                "    z = g(x,\n"
                "          y,\n"
                "    )\r\n"
                "    return z\r\n"
                "}  # trailing comment\n"
                "\n\n"
                "fn h() -> i32 { return 1 }",
                "fn f @4:4\n"
                "  param x: f32[N, D] @5:5\n"
                "  param y: f32 @7:5\n"
                "  11:5 z = g(x, y)\n"
                "  14:5 return z\n"
                "\n"
                "fn h @18:4\n"
                "  result i32 @18:11\n"
                "  18:17 return 1\n");
}

static void test_results_on_next_line(void **state)
{
    (void)state;
    /* a long signature may put '->' and '{' on lines of their own */
    expect_dump("fn f(x: f32[N])\n"
                "    -> (y: f32[N], s: f32)\n"
                "{\n"
                "    return x, sum(x)\n"
                "}\n"
                "fn g(x: f32[N])\n"
                "    -> f32[N] {\n"
                "    return x\n"
                "}\n",
                "fn f @1:4\n"
                "  param x: f32[N] @1:6\n"
                "  result y: f32[N] @2:9\n"
                "  result s: f32 @2:20\n"
                "  4:5 return x, sum(x)\n"
                "\n"
                "fn g @6:4\n"
                "  param x: f32[N] @6:6\n"
                "  result f32[N] @7:8\n"
                "  8:5 return x\n");
}

static void test_empty_program(void **state)
{
    (void)state;
    parsed r;
    parse(&r, "");
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->nfns, 0);
    assert_ptr_equal(r.prog->src, &r.src);
    done(&r);
    parse(&r, "\n  # nothing but comments\n\n");
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->nfns, 0);
    done(&r);
}

/* --- the examples of language.md, verbatim ------------------------------------ */

static const char rmsnorm_src[] =
    "# rmsnorm.tc\n"
    "fn rmsnorm(x: f32[N, D], g: f32[D], eps: f32 = 1e-6) -> f32[N, D] {\n"
    "    ms = mean(x * x, axis=-1, keepdim=true)\n"
    "    return x * rsqrt(ms + eps) * g\n"
    "}\n";

static const char sgd_src[] =
    "fn sgd_momentum(p: inout f32[*], g: f32[*], buf: inout f32[*], lr: f32, mu: f32 = 0.9) {\n"
    "    buf = mu * buf + g\n"
    "    p = p - lr * buf\n"
    "}\n";

static const char prelude_src[] =
    "fn softmax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "\n"
    "fn layernorm(x: f32[N, D], w: f32[D], b: f32[D], eps: f32 = 1e-5) -> f32[N, D] {\n"
    "    mu = mean(x, axis=-1, keepdim=true)\n"
    "    return (x - mu) * rsqrt(var(x, axis=-1, keepdim=true, correction=0) + eps) * w + b\n"
    "}\n";

static const char adamw_src[] =
    "fn adamw(p: inout f32[*], g: f32[*], m: inout f32[*], v: inout f32[*],\n"
    "         lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, step: i32) {\n"
    "    p = p * (1 - lr * wd)\n"
    "    m = beta1 * m + (1 - beta1) * g\n"
    "    v = beta2 * v + (1 - beta2) * g * g\n"
    "    mhat = m / (1 - beta1 ** step)\n"
    "    vhat = v / (1 - beta2 ** step)\n"
    "    p = p - lr * mhat / (sqrt(vhat) + eps)\n"
    "}\n";

static void test_example_rmsnorm(void **state)
{
    (void)state;
    expect_dump(rmsnorm_src,
                "fn rmsnorm @2:4\n"
                "  param x: f32[N, D] @2:12\n"
                "  param g: f32[D] @2:26\n"
                "  param eps: f32 = 1e-06 @2:37\n"
                "  result f32[N, D] @2:57\n"
                "  3:5 ms = mean((x * x), axis=-1, keepdim=true)\n"
                "  4:5 return ((x * rsqrt((ms + eps))) * g)\n");
}

static void test_example_sgd_momentum(void **state)
{
    (void)state;
    expect_dump(sgd_src,
                "fn sgd_momentum @1:4\n"
                "  param p: inout f32[*] @1:17\n"
                "  param g: f32[*] @1:34\n"
                "  param buf: inout f32[*] @1:45\n"
                "  param lr: f32 @1:64\n"
                "  param mu: f32 = 0.9 @1:73\n"
                "  2:5 buf = ((mu * buf) + g)\n"
                "  3:5 p = (p - (lr * buf))\n");
}

static void test_example_prelude(void **state)
{
    (void)state;
    expect_dump(prelude_src,
                "fn softmax @1:4\n"
                "  param x: f32[N, D] @1:12\n"
                "  result f32[N, D] @1:29\n"
                "  2:5 e = exp((x - max(x, axis=-1, keepdim=true)))\n"
                "  3:5 return (e / sum(e, axis=-1, keepdim=true))\n"
                "\n"
                "fn layernorm @6:4\n"
                "  param x: f32[N, D] @6:14\n"
                "  param w: f32[D] @6:28\n"
                "  param b: f32[D] @6:39\n"
                "  param eps: f32 = 1e-05 @6:50\n"
                "  result f32[N, D] @6:70\n"
                "  7:5 mu = mean(x, axis=-1, keepdim=true)\n"
                "  8:5 return ((((x - mu) * rsqrt((var(x, axis=-1, keepdim=true, correction=0) + eps))) * w) + b)\n");
}

static void test_example_adamw(void **state)
{
    (void)state;
    expect_dump(adamw_src,
                "fn adamw @1:4\n"
                "  param p: inout f32[*] @1:10\n"
                "  param g: f32[*] @1:27\n"
                "  param m: inout f32[*] @1:38\n"
                "  param v: inout f32[*] @1:55\n"
                "  param lr: f32 @2:10\n"
                "  param beta1: f32 @2:19\n"
                "  param beta2: f32 @2:31\n"
                "  param eps: f32 @2:43\n"
                "  param wd: f32 @2:53\n"
                "  param step: i32 @2:62\n"
                "  3:5 p = (p * (1 - (lr * wd)))\n"
                "  4:5 m = ((beta1 * m) + ((1 - beta1) * g))\n"
                "  5:5 v = ((beta2 * v) + (((1 - beta2) * g) * g))\n"
                "  6:5 mhat = (m / (1 - (beta1 ** step)))\n"
                "  7:5 vhat = (v / (1 - (beta2 ** step)))\n"
                "  8:5 p = (p - ((lr * mhat) / (sqrt(vhat) + eps)))\n");
}

static void test_language_forms(void **state)
{
    (void)state;
    /* every expression form language.md lists, in one function */
    expect_dump("fn forms(x: f32[N, D], a: f32[N, D], b: f32[N, D], c: bool[N, D]) {\n"
                "    t = x.T\n"
                "    u = permute(x, 1, 0); v = transpose(x, 0, 1); w = unsqueeze(squeeze(x, 1), 0)\n"
                "    s = x[:, 0:128]; s2 = x[1:, ::2]; s3 = x[-1]\n"
                "    k = concat(a, b, axis=0)\n"
                "    m = a @ b; p = a ** 2 % 3 / 4\n"
                "    l = !c || a == b && a != b || a < b || a <= b || a > b || a >= b\n"
                "    r = argmax(x, axis=-1); q = std(x, axis=(0, 1), correction=1)\n"
                "    z = clamp(x, -1, 1) + f16(x) + bf16(x) + i32(x)\n"
                "}\n",
                "fn forms @1:4\n"
                "  param x: f32[N, D] @1:10\n"
                "  param a: f32[N, D] @1:24\n"
                "  param b: f32[N, D] @1:38\n"
                "  param c: bool[N, D] @1:52\n"
                "  2:5 t = x.T\n"
                "  3:5 u = permute(x, 1, 0)\n"
                "  3:27 v = transpose(x, 0, 1)\n"
                "  3:51 w = unsqueeze(squeeze(x, 1), 0)\n"
                "  4:5 s = x[:, 0:128]\n"
                "  4:22 s2 = x[1:, ::2]\n"
                "  4:39 s3 = x[-1]\n"
                "  5:5 k = concat(a, b, axis=0)\n"
                "  6:5 m = (a @ b)\n"
                "  6:16 p = (((a ** 2) % 3) / 4)\n"
                "  7:5 l = (((((!c || ((a == b) && (a != b))) || (a < b)) || (a <= b)) || (a > b)) || (a >= b))\n"
                "  8:5 r = argmax(x, axis=-1)\n"
                "  8:29 q = std(x, axis=(0, 1), correction=1)\n"
                "  9:5 z = (((clamp(x, -1, 1) + f16(x)) + bf16(x)) + i32(x))\n");
}

static void test_print_is_stable(void **state)
{
    (void)state;
    char *a = dump(adamw_src);
    char *b = dump(adamw_src);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void test_op_str(void **state)
{
    (void)state;
    const struct { ast_op op; const char *s; } ops[] = {
        {AST_OP_ADD, "+"}, {AST_OP_SUB, "-"}, {AST_OP_MUL, "*"}, {AST_OP_DIV, "/"},
        {AST_OP_MOD, "%"}, {AST_OP_POW, "**"}, {AST_OP_MATMUL, "@"}, {AST_OP_EQ, "=="},
        {AST_OP_NE, "!="}, {AST_OP_LT, "<"}, {AST_OP_LE, "<="}, {AST_OP_GT, ">"},
        {AST_OP_GE, ">="}, {AST_OP_AND, "&&"}, {AST_OP_OR, "||"}, {AST_OP_NEG, "-"},
        {AST_OP_NOT, "!"}, {AST_OP_PLUS, "+"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        assert_string_equal(ast_op_str(ops[i].op), ops[i].s);
}

/* --- syntax errors ---------------------------------------------------------------- */

static void test_syntax_errors(void **state)
{
    (void)state;
    const char *H = "fn f(x: f32[N]) -> f32[N] {\n"; /* line 1 of most cases */
    char src[512];
#define BODY(s) (snprintf(src, sizeof src, "%s%s", H, s), src)
    expect_error(BODY("    return g(x y)\n}\n"), 2, 16, "expected ')' after arguments, found 'y'");
    expect_error(BODY("    return g(x\n"), 2, 15, "unexpected end of file, expected ')' after arguments");
    expect_error(BODY("    return x\n"), 2, 13, "unexpected end of file, expected '}'");
    expect_error(BODY(""), 1, 28, "unexpected end of file, expected '}'");
    expect_error(BODY("    y = g(x,\n"), 2, 13, "unexpected end of file, expected expression after ','");
    expect_error(BODY("    y = x +\n}\n"), 2, 12, "expected expression after '+', found end of line");
    expect_error(BODY("    y = (x +\n}\n"), 3, 1, "expected expression after '+', found '}'");
    expect_error(BODY("    y = (1, 2\n}\n"), 3, 1, "expected ')', found '}'");
    expect_error(BODY("    y = ()\n}\n"), 2, 10, "expected expression after '(', found ')'");
    expect_error(BODY("    y = x +* 2\n}\n"), 2, 12, "expected expression after '+', found '*'");
    expect_error(BODY("    y = x..T\n}\n"), 2, 11, "expected attribute name after '.', found '.'");
    expect_error(BODY("    y = x.1\n}\n"), 2, 10, "expected end of line or ';' after statement, found '.1'");
    expect_error(BODY("    y = [1, 2\n    z = 3\n}\n"), 3, 5, "expected ']' after list, found 'z'");
    expect_error(BODY("    y = x[1\n}\n"), 3, 1, "expected ']' after index, found '}'");
    expect_error(BODY("    y = x[,]\n}\n"), 2, 11, "expected index or slice after '[', found ','");
    expect_error(BODY("    y = x[1:2:3:4]\n}\n"), 2, 16, "too many ':' in slice (a slice is start:stop:step)");
    expect_error(BODY("    return a < b < c\n}\n"), 2, 18,
                 "comparison operators cannot be chained; write 'a < b && b < c'");
    expect_error(BODY("    y = a == f(b)[0] + 1 != c\n}\n"), 2, 26,
                 "comparison operators cannot be chained; write 'a < b && b < c'");
    expect_error(BODY("    y = f(a=1, 2)\n}\n"), 2, 16, "positional argument after keyword argument 'a'");
    expect_error(BODY("    y = x a\n}\n"), 2, 11, "expected end of line or ';' after statement, found 'a'");
    expect_error(BODY("    y = x)\n}\n"), 2, 10, "expected end of line or ';' after statement, found ')'");
    expect_error(BODY("    x + 1\n}\n"), 2, 7, "expected '=' after 'x', found '+'");
    expect_error(BODY("    a, b + 1\n}\n"), 2, 10, "expected '=' after 'b', found '+'");
    expect_error(BODY("    g(x) + 1\n}\n"), 2, 10, "expected end of line or ';' after statement, found '+'");
    expect_error(BODY("    1 = x\n}\n"), 2, 5, "expected a statement (an assignment, a call or 'return'), found '1'");
    expect_error(BODY("    a, 1 = x\n}\n"), 2, 8, "expected a name after ',', found '1'");
    expect_error(BODY("    return x,\n}\n"), 2, 14, "expected expression after ',', found end of line");
    expect_error(BODY("    y = x\n}}\n"), 3, 2, "expected 'fn' to start a function, found '}'");
#undef BODY
    /* signatures */
    expect_error("fn (x: f32) {\n}\n", 1, 4, "expected function name after 'fn', found '('");
    expect_error("fn f x\n", 1, 6, "expected '(' after function name, found 'x'");
    expect_error("fn f(x: f32) -> f32\n", 1, 20, "unexpected end of file, expected '{' to start the function body");
    expect_error("fn f(x: f32) -> f32 {\n    return x\n} fn", 3, 5,
                 "unexpected end of file, expected function name after 'fn'");
    expect_error("fn f(x: f32) y {\n}\n", 1, 14, "expected '->' or '{' after parameters, found 'y'");
    expect_error("fn f(x: f32) -> {\n}\n", 1, 17, "expected result type after '->', found '{'");
    expect_error("x = 1\n", 1, 1, "expected 'fn' to start a function, found 'x'");
    expect_error("fn f(1) {\n}\n", 1, 6, "expected parameter name or ')', found '1'");
    expect_error("fn f(x: f32, 1) {\n}\n", 1, 14, "expected parameter name or ')', found '1'");
    expect_error("fn f(x, y: f32) {\n}\n", 1, 7, "expected ':' and a type after parameter 'x', found ','");
    expect_error("fn f(x: ) {\n}\n", 1, 9, "expected a type after ':', found ')'");
    expect_error("fn f(x: inout) {\n}\n", 1, 14, "expected a type after 'inout', found ')'");
    expect_error("fn f(x: f32 = ) {\n}\n", 1, 15, "expected expression after '=', found ')'");
    expect_error("fn f(eps: f32 1e-6) {\n}\n", 1, 15,
                 "expected '=', ',' or ')' after parameter type, found '1e-6'");
    expect_error("fn f(eps: f32 = 1 2) {\n}\n", 1, 19, "expected ',' or ')' after parameter, found '2'");
    expect_error("fn f(x: f32 {\n}\n", 1, 13, "expected '=', ',' or ')' after parameter type, found '{'");
    expect_error("fn f(x: f23[N]) {\n}\n", 1, 9,
                 "unknown dtype 'f23' (expected f32, f16, bf16, f64, i32, i64, bool, or a capital "
                 "letter for a dtype variable)");
    expect_error("fn f(x: TT[N]) {\n}\n", 1, 9,
                 "unknown dtype 'TT' (expected f32, f16, bf16, f64, i32, i64, bool, or a capital "
                 "letter for a dtype variable)");
    expect_error("fn f() -> float {\n}\n", 1, 11,
                 "unknown dtype 'float' (expected f32, f16, bf16, f64, i32, i64, bool, or a capital "
                 "letter for a dtype variable)");
    expect_error("fn f(x: f32[]) {\n}\n", 1, 13, "expected a dimension (an integer, a name or '*'), found ']'");
    expect_error("fn f(x: f32[N,]) {\n}\n", 1, 15, "expected a dimension (an integer or a name), found ']'");
    expect_error("fn f(x: f32[N D]) {\n}\n", 1, 15, "expected ',' or ']' after dimension, found 'D'");
    expect_error("fn f(x: f32[N, *]) {\n}\n", 1, 16, "'*' must be the only dimension, as in f32[*]");
    expect_error("fn f(x: f32[*, N]) {\n}\n", 1, 14, "expected ']', found ','"); /* the generic phrasing */
    expect_error("fn f(x: f32[-1]) {\n}\n", 1, 13, "expected a dimension (an integer, a name or '*'), found '-'");
    expect_error("fn f(x: f32) -> (f32, f32) {\n}\n", 1, 21,
                 "expected ':' after result name 'f32' (several results are named: -> (y: f32[N], "
                 "z: f32[N])), found ','");
    expect_error("fn f(x: f32) -> (y f32) {\n}\n", 1, 20,
                 "expected ':' after result name 'y' (several results are named: -> (y: f32[N], "
                 "z: f32[N])), found 'f32'");
    expect_error("fn f(x: f32) -> (y: ) {\n}\n", 1, 21, "expected a type after ':', found ')'");
    expect_error("fn f(x: f32) -> (y: f32 z: f32) {\n}\n", 1, 25, "expected ',' or ')' after result, found 'z'");
    /* lexical errors reach the caller the same way */
    expect_error("fn f() {\n    y = x $ 2\n}\n", 2, 11, "unexpected character '$'");
    expect_error("fn f() {\n    return 1.2.3\n}\n", 2, 12, "malformed number '1.2.3'");
    /* a long token is cut short in the message */
    expect_error("fn f() {\n    y = x abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij\n}\n", 2, 11,
                 "expected end of line or ';' after statement, found "
                 "'abcdefghijabcdefghijabcdefghijabcdefg...'");
}

/* The full message: location, source line, caret (tabs copied). */
static void test_error_text(void **state)
{
    (void)state;
    parsed r;
    parse(&r, "fn f() {\n\ty = g(x\ty)\n}\n");
    assert_int_equal(r.status, TC_ERR_SYNTAX);
    assert_string_equal(r.d.msg, "t.tc:2:10: error: expected ')' after arguments, found 'y'\n"
                                 "    \ty = g(x\ty)\n"
                                 "    \t       \t^\n");
    done(&r);
}

/* Every tests/bad/syn_*.tc: the parser gives exactly its "# expect:" line, and
 * the caret sits under the column, as tests/bad/run.sh will check via the CLI. */
static void test_bad_files(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    assert_non_null(slash);
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../bad");
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    int nfiles = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        const char *name = de->d_name;
        size_t nl = strlen(name);
        if (strncmp(name, "syn_", 4) != 0 || nl < 4 || strcmp(name + nl - 3, ".tc") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *text = malloc((size_t)len + 1);
        assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
        text[len] = 0;
        fclose(f);

        const char *tag = "# expect: ";
        assert_memory_equal(text, tag, strlen(tag));
        const char *want = text + strlen(tag);
        size_t wl = strcspn(want, "\n");
        int line = 0, col = 0;
        assert_int_equal(sscanf(want, "%d:%d:", &line, &col), 2);

        parsed r;
        parse_named(&r, name, text, (size_t)len);
        char first[4096];
        snprintf(first, sizeof first, "%s:%.*s", name, (int)wl, want);
        const char *msg = r.d.msg ? r.d.msg : "(no error)\n";
        size_t ml = strcspn(msg, "\n");
        if (r.status == TC_OK || ml != strlen(first) || strncmp(msg, first, ml) != 0)
            print_error("%s\n  want: %s\n  got:  %.*s\n", name, first, (int)ml, msg);
        assert_int_not_equal(r.status, TC_OK);
        assert_int_equal(ml, strlen(first));
        assert_memory_equal(msg, first, ml);
        /* line 3 of the message: 4 spaces, col-1 blanks (spaces or tabs), '^' */
        const char *l3 = strchr(msg, '\n');
        assert_non_null(l3);
        l3 = strchr(l3 + 1, '\n');
        assert_non_null(l3);
        l3++;
        size_t cl = strcspn(l3, "\n");
        assert_int_equal(cl, (size_t)col + 4);
        for (size_t i = 0; i + 1 < cl; i++)
            assert_true(l3[i] == ' ' || l3[i] == '\t');
        assert_int_equal(l3[cl - 1], '^');
        done(&r);
        free(text);
        nfiles++;
    }
    closedir(dp);
    assert_true(nfiles >= 12);
}

/* --- limits --------------------------------------------------------------------- */

/* "fn f() {\n    y = " + n copies of pre + mid + n copies of post + "\n}\n" */
static char *nested(int n, const char *pre, const char *mid, const char *post)
{
    size_t lp = strlen(pre), lq = strlen(post);
    size_t len = 32 + (size_t)n * (lp + lq) + strlen(mid);
    char *s = malloc(len), *p = s;
    p += sprintf(p, "fn f() {\n    y = ");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s", pre);
    p += sprintf(p, "%s", mid);
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s", post);
    sprintf(p, "\n}\n");
    return s;
}

static void expect_ok(char *src)
{
    parsed r;
    parse(&r, src);
    if (r.status != TC_OK)
        print_error("%s\n", r.d.msg);
    assert_int_equal(r.status, TC_OK);
    done(&r);
    free(src);
}

static void expect_limit(char *src, size_t len, int line, int col)
{
    expect_error_n(src, len, TC_ERR_LIMIT, line, col,
                   "expression nested too deeply (more than 200 levels)");
    free(src);
}

static void test_depth_limit(void **state)
{
    (void)state;
    char *s;
    /* 199 unary minuses + a name is 200 levels: fine; one more is too deep,
     * reported at the outermost operator (the node that went over) */
    expect_ok(nested(AST_MAX_DEPTH - 1, "-", "x", ""));
    s = nested(AST_MAX_DEPTH, "-", "x", "");
    expect_limit(s, strlen(s), 2, 9);
    /* left-nested binary: the 200th '+' makes the 201st level */
    expect_ok(nested(AST_MAX_DEPTH - 1, "", "x", " + x"));
    s = nested(AST_MAX_DEPTH, "", "x", " + x");
    expect_limit(s, strlen(s), 2, 9 + 4 * AST_MAX_DEPTH - 2);
    /* right-nested **: x ** (x ** (...)); the node over the limit is the first '**' */
    s = nested(AST_MAX_DEPTH, "x ** ", "x", "");
    expect_limit(s, strlen(s), 2, 11);
    /* nested calls: 199 calls around a name is 200 levels */
    expect_ok(nested(AST_MAX_DEPTH - 1, "f(", "x", ")"));
    /* brackets add no nodes but are limited too: at the 201st '(' */
    expect_ok(nested(AST_MAX_DEPTH, "(", "x", ")"));
    s = nested(AST_MAX_DEPTH + 1, "(", "x", ")");
    expect_limit(s, strlen(s), 2, 9 + AST_MAX_DEPTH);
    s = nested(AST_MAX_DEPTH + 1, "[", "x", "]");
    expect_limit(s, strlen(s), 2, 9 + AST_MAX_DEPTH);
    /* 100000 deep fails cleanly, with no stack overflow and no leak */
    s = nested(100000, "(", "x", ")");
    expect_limit(s, strlen(s), 2, 9 + AST_MAX_DEPTH);
    s = nested(100000, "f(", "x", ")");
    expect_limit(s, strlen(s), 2, 9 + 2 * AST_MAX_DEPTH + 1);
    /* 100000 prefix operators overflow the parser's stack before any node is
     * built; that is reported as the same limit, at the token it reached */
    s = nested(100000, "-", "x", "");
    parsed r;
    parse(&r, s);
    assert_int_equal(r.status, TC_ERR_LIMIT);
    assert_string_equal(r.d.brief, "expression nested too deeply (more than 200 levels)");
    assert_int_equal(r.d.loc.line, 2);
    assert_true(r.d.loc.col > 9 + AST_MAX_DEPTH && r.d.loc.col < 9 + 100000);
    done(&r);
    free(s);
    s = nested(100000, "!x ** ", "x", "");
    parse(&r, s);
    assert_int_equal(r.status, TC_ERR_LIMIT);
    done(&r);
    free(s);
}

static void test_source_limit(void **state)
{
    (void)state;
    size_t n = (size_t)AST_MAX_SOURCE + 1;
    char *s = malloc(n + 1);
    memset(s, ' ', n);
    s[n] = 0;
    parsed r;
    parse_named(&r, "big.tc", s, n);
    assert_int_equal(r.status, TC_ERR_LIMIT);
    assert_string_equal(r.d.brief, "source is too large (16777217 bytes; the limit is 16 MiB)");
    assert_int_equal(r.d.loc.line, 0);
    done(&r);
    /* exactly at the limit is accepted */
    parse_named(&r, "big.tc", s, n - 1);
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->nfns, 0);
    done(&r);
    free(s);
}

static double seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void test_big_program(void **state)
{
    (void)state;
    /* a megabyte of functions: linear time (well under a second unsanitized;
     * the bound leaves room for ASan on a busy machine) */
#define FN "fn layernorm_%d(x: f32[N, D], w: f32[D], b: f32[D], eps: f32 = 1e-5) -> f32[N, D] {\n" \
           "    mu = mean(x, axis=-1, keepdim=true)  # the mean\n" \
           "    return (x - mu) * rsqrt(var(x, axis=-1, keepdim=true, correction=0) + eps) * w + b\n" \
           "}\n\n"
    size_t cap = (1 << 20) + 4096, len = 0;
    char *s = malloc(cap);
    int nfns = 0;
    while (len < (1 << 20))
        len += (size_t)sprintf(s + len, FN, nfns++);
#undef FN
    parsed r;
    double t0 = seconds();
    parse_named(&r, "big.tc", s, len);
    double t = seconds() - t0;
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->nfns, nfns);
    const ast_fn *last = &r.prog->fns[nfns - 1];
    char name[64];
    snprintf(name, sizeof name, "layernorm_%d", nfns - 1);
    assert_string_equal(last->name, name);
    assert_int_equal(last->nstmts, 2);
    assert_loc(last->loc, 5 * (nfns - 1) + 1, 4);
    print_message("1 MiB, %d functions: %.3f s\n", nfns, t);
    assert_true(t < 5.0);
    done(&r);
    free(s);

    /* one function with 100000 statements, and a call with 100000 arguments */
    cap = 100000 * 24 + 64;
    s = malloc(cap);
    len = (size_t)sprintf(s, "fn f(x: f32) {\n");
    for (int i = 0; i < 100000; i++)
        len += (size_t)sprintf(s + len, "    y%d = x\n", i);
    len += (size_t)sprintf(s + len, "    return g(");
    for (int i = 0; i < 100000; i++)
        len += (size_t)sprintf(s + len, "x, ");
    len += (size_t)sprintf(s + len, ")\n}\n");
    t0 = seconds();
    parse_named(&r, "long.tc", s, len);
    t = seconds() - t0;
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.prog->fns[0].nstmts, 100001);
    assert_int_equal(r.prog->fns[0].stmts[100000].values[0]->u.call.nargs, 100000);
    assert_true(t < 5.0);
    done(&r);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_associativity),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_tuples_and_lists),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_indexing),
        cmocka_unit_test(test_locations),
        cmocka_unit_test(test_signature),
        cmocka_unit_test(test_results),
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_results_on_next_line),
        cmocka_unit_test(test_empty_program),
        cmocka_unit_test(test_example_rmsnorm),
        cmocka_unit_test(test_example_sgd_momentum),
        cmocka_unit_test(test_example_prelude),
        cmocka_unit_test(test_example_adamw),
        cmocka_unit_test(test_language_forms),
        cmocka_unit_test(test_print_is_stable),
        cmocka_unit_test(test_op_str),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_source_limit),
        cmocka_unit_test(test_big_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
