/* test_diag.c - the format of located errors, notes for inlined calls, and
 * unwinding to the protected call. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "diag.h"

static tc_source mksrc(const char *name, const char *text)
{
    return (tc_source){name, text, strlen(text)};
}

/* A pass deep in the compiler that finds an error. */
static int depth_reached;
static void deep(tc_diag *d, tc_loc loc, int n)
{
    if (n < 0)
        return; /* never taken; keeps the compiler from calling this infinite recursion */
    depth_reached = n;
    if (n > 0)
        deep(d, loc, n - 1);
    else
        diag_error(d, TC_ERR_COMPILE, loc, "bad thing %d", 7);
    depth_reached = -1; /* never: the error unwinds past this frame */
}

/* The protected call at the API boundary: the status it returns. */
static tc_status protected_call(tc_diag *d, tc_loc loc)
{
    jmp_buf jb;
    d->jb = &jb;
    if (setjmp(jb)) {
        d->jb = NULL;
        return d->status;
    }
    deep(d, loc, 5);
    d->jb = NULL;
    return TC_OK;
}

static void test_error_format_and_unwind(void **state)
{
    (void)state;
    tc_source s = mksrc("f.tc", "fn f(x: f32) {\n    y = x + z\n}\n");
    tc_diag d;
    diag_init(&d);
    assert_int_equal(protected_call(&d, (tc_loc){&s, 2, 13}), TC_ERR_COMPILE);
    assert_int_equal(depth_reached, 0);
    assert_string_equal(d.msg, "f.tc:2:13: error: bad thing 7\n"
                               "        y = x + z\n"
                               "                ^\n");
    assert_string_equal(d.brief, "bad thing 7");
    assert_int_equal(d.status, TC_ERR_COMPILE);
    assert_ptr_equal(d.loc.src, &s);
    assert_int_equal(d.loc.line, 2);
    assert_int_equal(d.loc.col, 13);
    diag_clear(&d);
    assert_null(d.msg);
    assert_null(d.brief);
    assert_int_equal(d.status, TC_OK);
    assert_int_equal(d.loc.line, 0);
    diag_release(&d);
}

static void test_exact_brief_example(void **state)
{
    (void)state;
    tc_source s = mksrc("f.tc", "a\nbcdefg\n");
    tc_diag d;
    diag_init(&d);
    assert_int_equal(diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&s, 2, 5}, "msg"), TC_ERR_SYNTAX);
    assert_string_equal(d.msg, "f.tc:2:5: error: msg\n    bcdefg\n        ^\n");
    /* column 1 puts the caret right under the first character */
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&s, 1, 1}, "first");
    assert_string_equal(d.msg, "f.tc:1:1: error: first\n    a\n    ^\n");
    diag_release(&d);
}

static void test_tabs_copied(void **state)
{
    (void)state;
    tc_source s = mksrc("t.tc", "fn f() {\n\t\tx = 1 +\n}");
    tc_diag d;
    diag_init(&d);
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&s, 2, 9}, "expected an expression after '+'");
    assert_string_equal(d.msg, "t.tc:2:9: error: expected an expression after '+'\n"
                               "    \t\tx = 1 +\n"
                               "    \t\t      ^\n");
    diag_release(&d);
}

static void test_line_endings_and_ends(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    /* CRLF: the \r is not part of the shown line */
    tc_source crlf = mksrc("w.tc", "ab\r\ncd\r\n");
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&crlf, 2, 2}, "m");
    assert_string_equal(d.msg, "w.tc:2:2: error: m\n    cd\n     ^\n");
    /* the last line without a newline */
    tc_source last = mksrc("l.tc", "x\ny = (");
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&last, 2, 7}, "unexpected end of file");
    assert_string_equal(d.msg, "l.tc:2:7: error: unexpected end of file\n    y = (\n          ^\n");
    /* a line past the end shows no source */
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&last, 9, 1}, "m");
    assert_string_equal(d.msg, "l.tc:9:1: error: m\n");
    /* a column past the end of the line still gets its caret */
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&last, 1, 3}, "m");
    assert_string_equal(d.msg, "l.tc:1:3: error: m\n    x\n      ^\n");
    /* no location at all, and a source without a line */
    diag_set(&d, TC_ERR_IO, (tc_loc){0}, "cannot read '%s'", "x.tc");
    assert_string_equal(d.msg, "error: cannot read 'x.tc'\n");
    assert_string_equal(d.brief, "cannot read 'x.tc'");
    diag_set(&d, TC_ERR_IO, (tc_loc){&last, 0, 0}, "empty");
    assert_string_equal(d.msg, "l.tc: error: empty\n");
    diag_release(&d);
}

static void test_long_line_truncated(void **state)
{
    (void)state;
    size_t n = 1000;
    char *text = malloc(n + 1);
    memset(text, 'a', n);
    text[n] = 0;
    tc_source s = {"big.tc", text, n};
    tc_diag d;
    diag_init(&d);
    diag_set(&d, TC_ERR_SYNTAX, (tc_loc){&s, 1, 3}, "m");
    const char *l = strchr(d.msg, '\n') + 1;
    assert_memory_equal(l, "    aaa", 7);
    assert_int_equal(strchr(l, '\n') - l, 4 + 400);
    assert_string_equal(strchr(l, '\n') + 1, "      ^\n");
    diag_release(&d);
    free(text);
}

static void test_call_notes(void **state)
{
    (void)state;
    tc_source user = mksrc("main.tc", "fn main(x: f32[N]) {\n    return mid(x)\n}\n");
    tc_source lib = mksrc("<prelude>/lib.tc", "fn mid(x: f32[*]) {\n    return leaf(x)\n}\n"
                                              "fn leaf(y: f32[*]) {\n    return y @ y\n}\n");
    tc_diag d;
    diag_init(&d);
    diag_push_call(&d, (tc_loc){&user, 2, 12}, "mid");
    diag_push_call(&d, (tc_loc){&lib, 2, 12}, "leaf");
    diag_set(&d, TC_ERR_COMPILE, (tc_loc){&lib, 5, 14}, "matmul needs rank 2");
    assert_string_equal(d.msg, "<prelude>/lib.tc:5:14: error: matmul needs rank 2\n"
                               "        return y @ y\n"
                               "                 ^\n"
                               "<prelude>/lib.tc:2:12: note: in call to 'leaf' from here\n"
                               "        return leaf(x)\n"
                               "               ^\n"
                               "main.tc:2:12: note: in call to 'mid' from here\n"
                               "        return mid(x)\n"
                               "               ^\n");
    assert_string_equal(d.brief, "matmul needs rank 2");
    diag_pop_call(&d);
    diag_set(&d, TC_ERR_COMPILE, (tc_loc){&lib, 2, 12}, "x");
    assert_string_equal(d.msg, "<prelude>/lib.tc:2:12: error: x\n"
                               "        return leaf(x)\n"
                               "               ^\n"
                               "main.tc:2:12: note: in call to 'mid' from here\n"
                               "        return mid(x)\n"
                               "               ^\n");
    diag_pop_call(&d);
    diag_pop_call(&d); /* popping an empty stack is harmless */
    assert_int_equal(d.ncalls, 0);
    diag_set(&d, TC_ERR_COMPILE, (tc_loc){0}, "y");
    assert_string_equal(d.msg, "error: y\n");
    diag_release(&d);
}

static void test_call_stack_overflow(void **state)
{
    (void)state;
    tc_source s = mksrc("r.tc", "f()\n");
    tc_diag d;
    diag_init(&d);
    for (int i = 0; i < DIAG_MAX_CALLS + 10; i++)
        diag_push_call(&d, (tc_loc){&s, 1, 1}, "f");
    diag_set(&d, TC_ERR_LIMIT, (tc_loc){&s, 1, 1}, "too deep");
    int notes = 0;
    for (const char *p = d.msg; (p = strstr(p, "note: in call to 'f'")); p++)
        notes++;
    assert_int_equal(notes, DIAG_MAX_CALLS);
    for (int i = 0; i < DIAG_MAX_CALLS + 10; i++)
        diag_pop_call(&d);
    assert_int_equal(d.ncalls, 0);
    diag_release(&d);
}

static void test_fatal(void **state)
{
    (void)state;
    tc_diag d;
    diag_init(&d);
    jmp_buf jb;
    d.jb = &jb;
    volatile int reached = 0;
    if (!setjmp(jb)) {
        diag_fatal(&d, "out of memory (%d bytes)", 12);
        reached = 1;
    }
    assert_int_equal(reached, 0);
    assert_int_equal(d.status, TC_ERR_NOMEM);
    assert_string_equal(d.msg, "error: out of memory (12 bytes)\n");
    diag_release(&d);
}

static void test_loc_str(void **state)
{
    (void)state;
    tc_source s = mksrc("a/b.tc", "");
    char buf[64];
    assert_string_equal(loc_str((tc_loc){&s, 3, 9}, buf, sizeof buf), "a/b.tc:3:9");
    assert_string_equal(loc_str((tc_loc){&s, 0, 0}, buf, sizeof buf), "a/b.tc");
    assert_string_equal(loc_str((tc_loc){0}, buf, sizeof buf), "<unknown>");
    char small[6];
    assert_string_equal(loc_str((tc_loc){&s, 3, 9}, small, sizeof small), "a/b.t");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_format_and_unwind),
        cmocka_unit_test(test_exact_brief_example),
        cmocka_unit_test(test_tabs_copied),
        cmocka_unit_test(test_line_endings_and_ends),
        cmocka_unit_test(test_long_line_truncated),
        cmocka_unit_test(test_call_notes),
        cmocka_unit_test(test_call_stack_overflow),
        cmocka_unit_test(test_fatal),
        cmocka_unit_test(test_loc_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
