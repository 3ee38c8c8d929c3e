/* build_harness.h - the harness shared by test_graph.c, test_shape.c and
 * test_views.c: parse a program (with the real prelude, none, or a given
 * one), build it inside a protected call, and state an error as
 * "LINE:COL: message" so each test asserts both.  Include after cmocka.h. */
#ifndef TC_BUILD_HARNESS_H
#define TC_BUILD_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "graph/graph.h"
#include "prelude.h"


typedef struct harness {
    tc_arena *a;
    tc_diag d;
    tc_graph *g;
    tc_source src, psrc[32];
    const ast_program *pre[32];
    int npre;
} harness;

static harness H;

static inline int setup(void **state)
{
    (void)state;
    memset(&H, 0, sizeof H);
    diag_init(&H.d);
    H.a = arena_new(&H.d);
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    arena_free(H.a);
    diag_release(&H.d);
    return 0;
}

/* Parse text (and the prelude: the real one when prelude is NULL, none when
 * it is "", else that text) and build fn (NULL: all). */
static inline tc_status try_build(const char *text, const char *prelude, const char *fn)
{
    jmp_buf jb;
    H.d.jb = &jb;
    H.d.ncalls = 0;
    H.g = NULL;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        return H.d.status;
    }
    H.npre = 0;
    if (!prelude) {
        for (int i = 0; i < tc_prelude_count && i < 32; i++) {
            H.psrc[i] = (tc_source){tc_prelude_files[i].name, tc_prelude_files[i].text,
                                    strlen(tc_prelude_files[i].text)};
            H.pre[H.npre++] = ast_parse(&H.psrc[i], H.a, &H.d);
        }
    } else if (*prelude) {
        H.psrc[0] = (tc_source){"prelude.tc", prelude, strlen(prelude)};
        H.pre[H.npre++] = ast_parse(&H.psrc[0], H.a, &H.d);
    }
    H.src = (tc_source){"t.tc", text, strlen(text)};
    ast_program *p = ast_parse(&H.src, H.a, &H.d);
    H.g = graph_build(p, H.pre, H.npre, fn, H.a, &H.d);
    /* As a whole-file dump does (api.c): a generic function that does not
     * build as an entry point is built again by name for its error. */
    if (!fn && H.g->nunbuilt > 0)
        graph_build(p, H.pre, H.npre, H.g->unbuilt[0], H.a, &H.d);
    H.d.jb = NULL;
    return TC_OK;
}

static inline const char *errtext(void)
{
    return arena_printf(H.a, "%d:%d: %s", H.d.loc.line, H.d.loc.col, H.d.brief ? H.d.brief : "");
}

/* Build and return the function fn (or the first one). */
static inline gfn *ok_fn(const char *text, const char *fn)
{
    tc_status st = try_build(text, NULL, NULL);
    if (st != TC_OK)
        fail_msg("build failed: %s", H.d.msg);
    gfn *f = fn ? graph_find(H.g, fn) : H.g->fns[0];
    assert_non_null(f);
    return f;
}
static inline gfn *ok(const char *text) { return ok_fn(text, NULL); }

/* Build, expect TC_ERR_COMPILE, return "LINE:COL: message". */
static inline const char *err(const char *text)
{
    tc_status st = try_build(text, NULL, NULL);
    if (st == TC_OK)
        fail_msg("expected an error building:\n%s", text);
    assert_int_equal(st, TC_ERR_COMPILE);
    return errtext();
}

static inline const char *type_of(const gnode *n)
{
    tc_buf b;
    buf_init(&b, H.a);
    buf_puts(&b, dtype_name(n->dtype));
    if (n->rank > 0) {
        buf_putc(&b, '[');
        for (int i = 0; i < n->rank; i++) {
            if (i)
                buf_puts(&b, ", ");
            dim_print(&b, n->shape[i]);
        }
        buf_putc(&b, ']');
    }
    return buf_str(&b);
}

static inline gnode *out(const gfn *f, const char *name)
{
    for (int i = 0; i < f->noutputs; i++)
        if (strcmp(f->outputs[i].name, name) == 0)
            return f->outputs[i].node;
    fail_msg("no output '%s'", name);
    return NULL;
}

static inline int count_op(const gfn *f, op_id op)
{
    int n = 0;
    for (int i = 0; i < f->nnodes; i++)
        n += f->nodes[i]->op == op;
    return n;
}

static inline const char *strides_of(const gnode *v)
{
    tc_buf b;
    buf_init(&b, H.a);
    buf_putc(&b, '[');
    for (int i = 0; i < v->rank; i++) {
        if (i)
            buf_puts(&b, ", ");
        dim_print(&b, v->a.view.strides[i]);
    }
    buf_printf(&b, "] +%s", dim_str(H.a, v->a.view.offset));
    return buf_str(&b);
}

/* The value of one expression over the given parameters: the function
 * returns R[*], which takes whatever dtype and shape the value has. */
static inline const char *program(const char *params, const char *expr)
{
    return arena_printf(H.a, "fn f(%s) -> R[*] {\n    return %s\n}\n", params, expr);
}

static inline gnode *res(const char *params, const char *expr)
{
    return out(ok(program(params, expr)), "out");
}

static inline const char *rt(const char *params, const char *expr) { return type_of(res(params, expr)); }

static inline const char *rerr(const char *params, const char *expr) { return err(program(params, expr)); }

#endif
