/* test_lexer.c - the flex scanner on its own: tokens, values, positions,
 * newline handling, and every lexical error with its exact location.
 *
 * The scanner is driven directly (tc_yylex), set up the way ast_parse sets
 * it up, inside a protected call so errors come back as a status.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "parser.h"
#include "lexer.h"

enum { MAX_TOKS = 512 };

typedef struct {
    int kind;
    int line, col;
    int64_t ival;
    double fval;
    const char *str;
} tok;

typedef struct {
    tc_arena *a;
    tc_diag d;
    tc_source src;
    tok t[MAX_TOKS];
    int n;            /* tokens before END */
    tc_loc end;       /* location of END */
    tc_status status; /* TC_OK, or the error */
} lexrun;

static void lex_n(lexrun *r, const char *text, size_t len)
{
    memset(r, 0, sizeof *r);
    diag_init(&r->d);
    jmp_buf jb;
    r->d.jb = &jb;
    r->a = arena_new(&r->d);
    r->src = (tc_source){"t.tc", text, len};
    if (setjmp(jb) != 0) {
        r->status = r->d.status;
        return;
    }
    tc_parse *P = ARENA_NEW(r->a, tc_parse);
    P->src = &r->src;
    P->arena = r->a;
    P->diag = &r->d;
    P->line = P->col = 1;
    P->end = (tc_loc){&r->src, 1, 1};
    yyscan_t sc;
    assert_int_equal(tc_yylex_init_extra(P, &sc), 0);
    tc_yy_scan_bytes(text, (int)len, sc);
    for (;;) {
        TC_YYSTYPE v;
        tc_loc l;
        memset(&v, 0, sizeof v);
        int k = tc_yylex(&v, &l, sc);
        if (k == END) {
            r->end = l;
            break;
        }
        if (r->n++ >= MAX_TOKS)
            continue; /* counted, not kept */
        tok *t = &r->t[r->n - 1];
        t->kind = k;
        t->line = l.line;
        t->col = l.col;
        assert_ptr_equal(l.src, &r->src);
        if (k == INT)
            t->ival = v.ival;
        else if (k == FLOAT)
            t->fval = v.fval;
        else if (k == NAME)
            t->str = v.str;
    }
    tc_yylex_destroy(sc);
    r->status = TC_OK;
}

static void lex(lexrun *r, const char *text) { lex_n(r, text, strlen(text)); }

static void done(lexrun *r)
{
    arena_free(r->a);
    diag_release(&r->d);
}

/* Assert that lexing fails with this status, location and message. */
static void expect_error(const char *text, size_t len, tc_status st, int line, int col,
                         const char *msg)
{
    lexrun r;
    lex_n(&r, text, len);
    if (r.status != st || r.d.loc.line != line || r.d.loc.col != col ||
        strcmp(r.d.brief ? r.d.brief : "", msg) != 0)
        print_error("for %s\n  want %d %d:%d %s\n  got  %d %d:%d %s\n", text, st, line, col, msg,
                    r.status, r.d.loc.line, r.d.loc.col, r.d.brief ? r.d.brief : "(none)");
    assert_int_equal(r.status, st);
    assert_int_equal(r.d.loc.line, line);
    assert_int_equal(r.d.loc.col, col);
    assert_string_equal(r.d.brief, msg);
    done(&r);
}

static void expect_err(const char *text, int line, int col, const char *msg)
{
    expect_error(text, strlen(text), TC_ERR_SYNTAX, line, col, msg);
}

/* --- tokens ------------------------------------------------------------------- */

static void test_operators(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "+ - * / % ** @ == != < <= > >= && || ! = , : ; . -> ( ) [ ] { }");
    const int want[] = {PLUS, MINUS, STAR, SLASH, PERCENT, POW, AT, EQ, NE, LT, LE, GT, GE,
                        ANDAND, OROR, NOT, ASSIGN, COMMA, COLON, SEMI, DOT, ARROW,
                        LPAREN, RPAREN, LBRACKET, RBRACKET, LBRACE, RBRACE};
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.n, n);
    int col = 1;
    for (int i = 0; i < n; i++) {
        assert_int_equal(r.t[i].kind, want[i]);
        assert_int_equal(r.t[i].line, 1);
        assert_int_equal(r.t[i].col, col);
        col += (want[i] == POW || want[i] == EQ || want[i] == NE || want[i] == LE ||
                want[i] == GE || want[i] == ANDAND || want[i] == OROR || want[i] == ARROW) ? 3 : 2;
    }
    done(&r);
}

static void test_longest_match(void **state)
{
    (void)state;
    lexrun r;
    /* `**-` is power then minus; `<-1` is less-than then minus; `!==` is != then = */
    lex(&r, "a**-b<-1!==c");
    const int want[] = {NAME, POW, MINUS, NAME, LT, MINUS, INT, NE, ASSIGN, NAME};
    assert_int_equal(r.n, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(r.t[i].kind, want[i]);
    done(&r);
}

static void test_keywords_and_names(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "fn return inout true false inf fnx info _x9 T f32 returns");
    const int want[] = {KW_FN, KW_RETURN, KW_INOUT, KW_TRUE, KW_FALSE, KW_INF,
                        NAME, NAME, NAME, NAME, NAME, NAME};
    assert_int_equal(r.n, 12);
    for (int i = 0; i < 12; i++)
        assert_int_equal(r.t[i].kind, want[i]);
    assert_string_equal(r.t[6].str, "fnx");
    assert_string_equal(r.t[7].str, "info");
    assert_string_equal(r.t[8].str, "_x9");
    assert_string_equal(r.t[9].str, "T");
    assert_string_equal(r.t[10].str, "f32"); /* dtypes are names: f32(x) is a call */
    assert_string_equal(r.t[11].str, "returns");
    done(&r);
}

static void test_columns_and_lines(void **state)
{
    (void)state;
    lexrun r;
    /* tabs are one column each; lines count from 1 */
    lex(&r, "fn f(x: f32) {\n\ty\t= x\n}");
    struct { int kind, line, col; } want[] = {
        {KW_FN, 1, 1}, {NAME, 1, 4}, {LPAREN, 1, 5}, {NAME, 1, 6}, {COLON, 1, 7},
        {NAME, 1, 9}, {RPAREN, 1, 12}, {LBRACE, 1, 14}, {NEWLINE, 1, 15},
        {NAME, 2, 2}, {ASSIGN, 2, 4}, {NAME, 2, 6}, {NEWLINE, 2, 7}, {RBRACE, 3, 1},
    };
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(r.n, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r.t[i].kind, want[i].kind);
        assert_int_equal(r.t[i].line, want[i].line);
        assert_int_equal(r.t[i].col, want[i].col);
    }
    /* end of file points just past the last token */
    assert_int_equal(r.end.line, 3);
    assert_int_equal(r.end.col, 2);
    done(&r);
}

static void test_crlf(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "a\r\n  b\r\n");
    assert_int_equal(r.n, 4);
    assert_int_equal(r.t[0].kind, NAME);
    assert_int_equal(r.t[1].kind, NEWLINE);
    assert_int_equal(r.t[2].kind, NAME);
    assert_int_equal(r.t[2].line, 2);
    assert_int_equal(r.t[2].col, 3);
    assert_int_equal(r.t[3].kind, NEWLINE);
    done(&r);
}

/* --- newlines ------------------------------------------------------------------- */

static void test_newlines_collapse(void **state)
{
    (void)state;
    lexrun r;
    /* none before the first token; blank lines and comment lines make one */
    lex(&r, "\n\n# header\n  a   # trailing\n\n   # more\n\nb\n");
    assert_int_equal(r.n, 4);
    assert_int_equal(r.t[0].kind, NAME);
    assert_int_equal(r.t[0].line, 4);
    assert_int_equal(r.t[0].col, 3);
    assert_int_equal(r.t[1].kind, NEWLINE);
    /* located just past the token before it, not after the comment */
    assert_int_equal(r.t[1].line, 4);
    assert_int_equal(r.t[1].col, 4);
    assert_int_equal(r.t[2].kind, NAME);
    assert_int_equal(r.t[2].line, 8);
    assert_int_equal(r.t[3].kind, NEWLINE);
    done(&r);
}

static void test_newlines_inside_brackets(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "f(a,\n  b[1,\n 2]\n)\nc");
    const int want[] = {NAME, LPAREN, NAME, COMMA, NAME, LBRACKET, INT, COMMA, INT, RBRACKET,
                        RPAREN, NEWLINE, NAME};
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(r.n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(r.t[i].kind, want[i]);
    assert_int_equal(r.t[10].line, 4);
    done(&r);

    /* braces do not hide newlines; a stray closer does not go below zero */
    lex(&r, "{\n}\n)\n]\na");
    const int want2[] = {LBRACE, NEWLINE, RBRACE, NEWLINE, RPAREN, NEWLINE, RBRACKET, NEWLINE, NAME};
    assert_int_equal(r.n, 9);
    for (int i = 0; i < 9; i++)
        assert_int_equal(r.t[i].kind, want2[i]);
    done(&r);
}

/* --- numbers -------------------------------------------------------------------- */

static void test_integers(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "0 1 128 007 9223372036854775807");
    assert_int_equal(r.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(r.t[i].kind, INT);
    assert_int_equal(r.t[0].ival, 0);
    assert_int_equal(r.t[1].ival, 1);
    assert_int_equal(r.t[2].ival, 128);
    assert_int_equal(r.t[3].ival, 7);
    assert_true(r.t[4].ival == INT64_MAX);
    done(&r);
}

static void test_floats(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "2.5 1e-6 .5 2. 1E+3 3e2 0.1 1.5e-3 1e-400");
    const double want[] = {2.5, 1e-6, 0.5, 2.0, 1000.0, 300.0, 0.1, 1.5e-3, 0.0};
    assert_int_equal(r.n, 9);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(r.t[i].kind, FLOAT);
        assert_true(r.t[i].fval == want[i]); /* exactly strtod's value */
    }
    assert_int_equal(r.t[2].col, 10);
    done(&r);
}

static void test_number_then_operator(void **state)
{
    (void)state;
    lexrun r;
    /* a sign belongs to a number only right after an exponent letter */
    lex(&r, "1-2 1e-2-3 x[1:-1]");
    const int want[] = {INT, MINUS, INT, FLOAT, MINUS, INT, NAME, LBRACKET, INT, COLON, MINUS, INT,
                        RBRACKET};
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(r.n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(r.t[i].kind, want[i]);
    assert_true(r.t[3].fval == 1e-2);
    done(&r);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    expect_err("x = 1e", 1, 5, "malformed number '1e': expected digits after the exponent");
    expect_err("x = 1e+ 2", 1, 5, "malformed number '1e+': expected digits after the exponent");
    expect_err("x = 1.2.3", 1, 5, "malformed number '1.2.3'");
    expect_err("x =  2x", 1, 6, "malformed number '2x'");
    expect_err("x = 1.T", 1, 5, "malformed number '1.T'");
    expect_err("a\n  99999999999999999999", 2, 3,
               "integer literal '99999999999999999999' is too large (the largest is 9223372036854775807)");
    expect_err("9223372036854775808", 1, 1,
               "integer literal '9223372036854775808' is too large (the largest is 9223372036854775807)");
    expect_err("y = 1e999", 1, 5, "number '1e999' is out of range (the largest is about 1.8e308)");
    /* a long number is cut short in the message */
    expect_err("1.2.3456789012345678901234567890123456789012345678901234567890", 1, 1,
               "malformed number '1.2.345678901234567890123456789012345...'");
}

/* --- bad bytes ------------------------------------------------------------------ */

static void test_bad_characters(void **state)
{
    (void)state;
    expect_err("y = x $ 2", 1, 7, "unexpected character '$'");
    expect_err("fn f() {\n\ty = x\t$\n}", 2, 8, "unexpected character '$'");
    expect_err("a & b", 1, 3, "unexpected character '&' (did you mean '&&'?)");
    expect_err("a | b", 1, 3, "unexpected character '|' (did you mean '||'?)");
    expect_err("a ? b", 1, 3, "unexpected character '?'");
    expect_err("s = \"x\"", 1, 5, "unexpected character '\"'");
    expect_err("a\x01", 1, 2, "unexpected control character 0x01");
    expect_err("y = x \xc3\x97 2", 1, 7, "unexpected character '\xc3\x97' (U+00D7)");
    expect_err("y = \xe2\x88\x9a(x)", 1, 5, "unexpected character '\xe2\x88\x9a' (U+221A)");
    expect_err("y = x \xff", 1, 7, "invalid UTF-8 byte 0xff");
    expect_err("y = \xc0\x80", 1, 5, "invalid UTF-8 byte 0xc0");     /* overlong NUL */
    expect_err("y = \xed\xa0\x80", 1, 5, "invalid UTF-8 byte 0xed"); /* a surrogate */
    expect_err("y = \xe2\x88", 1, 5, "invalid UTF-8 byte 0xe2");     /* cut short at EOF */
}

static void test_nul_bytes(void **state)
{
    (void)state;
    static const char s1[] = "a = b\0c";
    expect_error(s1, sizeof s1 - 1, TC_ERR_SYNTAX, 1, 6, "unexpected NUL byte");
    static const char s2[] = "a\n# c\0mment\n";
    expect_error(s2, sizeof s2 - 1, TC_ERR_SYNTAX, 2, 4, "unexpected NUL byte");
}

static void test_comments(void **state)
{
    (void)state;
    lexrun r;
    /* UTF-8 is fine in a comment; '#' anywhere starts one */
    lex(&r, "a # \xc3\xbc" "n\xc3\xaf" "c\xc3\xb8" "de \xe2\x88\x9a x = $ 1e\nb#c");
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.t[2].kind, NAME);
    assert_string_equal(r.t[2].str, "b");
    done(&r);
    expect_err("a # ok\n  # bad \xc3\x28 here", 2, 9, "invalid UTF-8 byte 0xc3");
}

/* --- limits ------------------------------------------------------------------- */

static void test_bracket_depth(void **state)
{
    (void)state;
    char buf[AST_MAX_DEPTH + 8];
    memset(buf, '(', AST_MAX_DEPTH); /* exactly at the limit is fine */
    buf[AST_MAX_DEPTH] = 0;
    lexrun r;
    lex(&r, buf);
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.n, AST_MAX_DEPTH);
    done(&r);

    memset(buf, '[', AST_MAX_DEPTH + 1);
    buf[AST_MAX_DEPTH + 1] = 0;
    buf[3] = '(';
    expect_error(buf, strlen(buf), TC_ERR_LIMIT, 1, AST_MAX_DEPTH + 1,
                 "expression nested too deeply (more than 200 levels)");

    /* closing brackets give the depth back */
    size_t n = 100000;
    char *big = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        big[2 * i] = '(';
        big[2 * i + 1] = ')';
    }
    big[2 * n] = 0;
    lex(&r, big);
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.n, 2 * (int)n);
    done(&r);
    free(big);
}

static void test_empty(void **state)
{
    (void)state;
    lexrun r;
    lex(&r, "");
    assert_int_equal(r.status, TC_OK);
    assert_int_equal(r.n, 0);
    assert_int_equal(r.end.line, 1);
    assert_int_equal(r.end.col, 1);
    done(&r);
    lex(&r, "  \n\n # only a comment\n");
    assert_int_equal(r.n, 0);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_longest_match),
        cmocka_unit_test(test_keywords_and_names),
        cmocka_unit_test(test_columns_and_lines),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_newlines_collapse),
        cmocka_unit_test(test_newlines_inside_brackets),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_number_then_operator),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_bad_characters),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_bracket_depth),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
