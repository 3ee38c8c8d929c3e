/* test_api.c - the public API (include/tensorc.h) and the driver's internal
 * entry points (src/api/api_internal.h): compiling, errors and their locations,
 * dumps, unsupported stages, the prelude, TENSORC_DUMP_DIR, and that a
 * failed compilation frees everything (LeakSanitizer checks at exit). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"
#include "codegen/plan_check.h"
#include "compile.h"
#include "tensorc.h"

static const char ADD1[] =
    "# add one\n"
    "fn add1(x: f32[N]) -> f32[N] {\n"
    "    return x + 1\n"
    "}\n";

static const char TWO_FNS[] =
    "fn a(x: f32[N]) -> f32[N] {\n"
    "    return x * 2\n"
    "}\n"
    "fn b(x: f32[N], y: f32[N]) -> f32[N] {\n"
    "    return a(x) + y\n"
    "}\n";

static tc_program *compile_ok(tc_ctx *ctx, const char *src, const char *name)
{
    tc_program *p = NULL;
    tc_status st = tc_compile(ctx, src, strlen(src), name, &p);
    if (st != TC_OK)
        fail_msg("%s: %s", tc_status_str(st), tc_errmsg(ctx));
    assert_non_null(p);
    assert_string_equal(tc_errmsg(ctx), "");
    return p;
}

static void test_version(void **state)
{
    assert_int_equal(tc_version_number(), TC_VERSION_NUMBER);
    assert_int_equal(TC_VERSION_NUMBER, 100);
    assert_string_equal(tc_version_string(), "0.1.0");
    assert_string_equal(tc_version_string(), TC_VERSION_STRING);
}

static void test_status_str(void **state)
{
    assert_string_equal(tc_status_str(TC_OK), "TC_OK");
    assert_string_equal(tc_status_str(TC_ERR_SYNTAX), "TC_ERR_SYNTAX");
    assert_string_equal(tc_status_str(TC_ERR_COMPILE), "TC_ERR_COMPILE");
    assert_string_equal(tc_status_str(TC_ERR_LIMIT), "TC_ERR_LIMIT");
    assert_string_equal(tc_status_str(TC_ERR_INVALID_ARG), "TC_ERR_INVALID_ARG");
    assert_string_equal(tc_status_str(TC_ERR_NOT_FOUND), "TC_ERR_NOT_FOUND");
    assert_string_equal(tc_status_str(TC_ERR_UNSUPPORTED), "TC_ERR_UNSUPPORTED");
    assert_string_equal(tc_status_str(TC_ERR_IO), "TC_ERR_IO");
    assert_string_equal(tc_status_str(TC_ERR_NOMEM), "TC_ERR_NOMEM");
    assert_string_equal(tc_status_str(TC_ERR_NO_DEVICE), "TC_ERR_NO_DEVICE");
    assert_string_equal(tc_status_str(TC_ERR_INTERNAL), "TC_ERR_INTERNAL");
    assert_string_equal(tc_status_str(TC_STATUS_COUNT), "TC_ERR_UNKNOWN_STATUS");
    assert_string_equal(tc_status_str((tc_status)-1), "TC_ERR_UNKNOWN_STATUS");
}

static void test_ctx(void **state)
{
    tc_ctx *ctx = NULL;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    assert_non_null(ctx);
    assert_string_equal(tc_errmsg(ctx), "");
    const char *file = "x";
    int line = 7, col = 7;
    assert_int_equal(tc_error_loc(ctx, &file, &line, &col), 0);
    assert_null(file);
    assert_int_equal(line, 0);
    tc_ctx_free(ctx);
    tc_ctx_free(NULL);
    tc_program_free(NULL);
    assert_int_equal(tc_ctx_create(NULL), TC_ERR_INVALID_ARG);
    assert_string_equal(tc_errmsg(NULL), "");
}

static void test_compile_and_dump(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = compile_ok(ctx, TWO_FNS, "two.tc");
    const char *ast = NULL, *graph = NULL, *one = NULL;
    assert_int_equal(tc_program_dump(p, "ast", NULL, &ast), TC_OK);
    assert_non_null(strstr(ast, "a"));
    assert_non_null(strstr(ast, "b"));
    assert_int_equal(tc_program_dump(p, "graph", NULL, &graph), TC_OK);
    /* both functions, b with a inlined: a multiply and an add */
    assert_non_null(strstr(graph, "mul"));
    assert_non_null(strstr(graph, "add"));
    assert_int_equal(tc_program_dump(p, "graph", "a", &one), TC_OK);
    assert_non_null(strstr(one, "mul"));
    assert_null(strstr(one, "add("));
    assert_true(strlen(one) < strlen(graph));
    assert_int_equal(tc_program_dump(p, "ast", "b", &one), TC_OK);
    assert_true(strlen(one) < strlen(ast));

    /* no such function: an error in ctx, nothing returned */
    const char *none = "x";
    assert_int_equal(tc_program_dump(p, "graph", "nope", &none), TC_ERR_NOT_FOUND);
    assert_null(none);
    assert_non_null(strstr(tc_errmsg(ctx), "no function 'nope'"));
    assert_non_null(strstr(tc_errmsg(ctx), "a, b"));
    assert_int_equal(tc_program_dump(p, "ast", "nope", &none), TC_ERR_NOT_FOUND);
    /* a later success clears the error */
    assert_int_equal(tc_program_dump(p, "ast", NULL, &ast), TC_OK);
    assert_string_equal(tc_errmsg(ctx), "");

    assert_int_equal(tc_program_dump(p, NULL, NULL, &ast), TC_ERR_INVALID_ARG);
    assert_int_equal(tc_program_dump(p, "graph", NULL, NULL), TC_ERR_INVALID_ARG);
    assert_int_equal(tc_program_dump(NULL, "graph", NULL, &ast), TC_ERR_INVALID_ARG);
    tc_program_free(p);
    tc_ctx_free(ctx);
}

static void test_unsupported_stages(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = compile_ok(ctx, ADD1, "add1.tc");
    /* every text stage exists now, each with a recognizable dump */
    static const struct { const char *stage, *has; } stages[] = {
        {"ast", "add1"},
        {"graph", "add"},
        {"lowered", "add("},
        {"fused", "kernel 0 "},
        {"sched", "block ["},
        {"cuda", "__global__"},
        {"explain", "fn add1: 1 kernel"},
        {"plan", "step 0"},
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        const char *out = NULL;
        tc_status st = tc_program_dump(p, stages[i].stage, NULL, &out);
        if (st != TC_OK)
            fail_msg("stage %s: %s: %s", stages[i].stage, tc_status_str(st), tc_errmsg(ctx));
        assert_non_null(out);
        if (!strstr(out, stages[i].has))
            fail_msg("stage %s lacks '%s':\n%s", stages[i].stage, stages[i].has, out);
        assert_string_equal(tc_errmsg(ctx), "");
        /* and for one function by name */
        out = NULL;
        assert_int_equal(tc_program_dump(p, stages[i].stage, "add1", &out), TC_OK);
        assert_non_null(strstr(out, stages[i].has));
    }
    /* ptx and cubin are binary images made by NVRTC (the CLI's --emit=ptx|cubin),
     * not text dumps of the library */
    static const char *binary[] = {"ptx", "cubin"};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        const char *out = "x";
        assert_int_equal(tc_program_dump(p, binary[i], NULL, &out), TC_ERR_UNSUPPORTED);
        assert_null(out);
        assert_non_null(strstr(tc_errmsg(ctx), binary[i]));
    }
    /* an unknown stage is a bad argument, naming it and the stages there are */
    static const char *unknown[] = {"llvm", "", "CUDA", "fused "};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *out = "x";
        assert_int_equal(tc_program_dump(p, unknown[i], NULL, &out), TC_ERR_INVALID_ARG);
        assert_null(out);
        char want[64];
        snprintf(want, sizeof want, "unknown stage '%s'", unknown[i]);
        assert_non_null(strstr(tc_errmsg(ctx), want));
        assert_non_null(strstr(tc_errmsg(ctx), "lowered, fused, sched, cuda"));
    }
    tc_program_free(p);
    tc_ctx_free(ctx);
}

static void test_compile_errors(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = (tc_program *)&p; /* must be reset to NULL */

    /* an unknown name, located at its token, with the line and a caret */
    static const char undefined[] = "fn f(x: f32[N]) -> f32[N] {\n    return y\n}\n";
    /* the file name lives on the heap and dies before we ask for it back */
    char *name = strdup("undef.tc");
    tc_status st = tc_compile(ctx, undefined, strlen(undefined), name, &p);
    free(name);
    assert_int_equal(st, TC_ERR_COMPILE);
    assert_null(p);
    const char *msg = tc_errmsg(ctx);
    assert_true(strncmp(msg, "undef.tc:2:12: error: ", 22) == 0);
    assert_non_null(strstr(msg, "\n        return y\n               ^\n"));
    const char *file;
    int line, col;
    assert_int_equal(tc_error_loc(ctx, &file, &line, &col), 1);
    assert_string_equal(file, "undef.tc");
    assert_int_equal(line, 2);
    assert_int_equal(col, 12);
    assert_int_equal(tc_error_loc(ctx, NULL, NULL, NULL), 1);

    /* a syntax error */
    static const char syntax[] = "fn f(x: f32[N]) -> f32[N] {\n    return x +* 2\n}\n";
    assert_int_equal(tc_compile(ctx, syntax, strlen(syntax), "syn.tc", &p), TC_ERR_SYNTAX);
    assert_null(p);
    assert_int_equal(tc_error_loc(ctx, &file, &line, &col), 1);
    assert_string_equal(file, "syn.tc");
    assert_int_equal(line, 2);
    assert_true(strncmp(tc_errmsg(ctx), "syn.tc:2:", 9) == 0);

    /* shapes that do not broadcast */
    static const char shapes[] = "fn f(x: f32[N, D], g: f32[N]) -> f32[N, D] {\n    return x * g\n}\n";
    assert_int_equal(tc_compile(ctx, shapes, strlen(shapes), "shp.tc", &p), TC_ERR_COMPILE);
    assert_int_equal(tc_error_loc(ctx, NULL, &line, NULL), 1);
    assert_int_equal(line, 2);

    /* many failures in a row leak nothing (LeakSanitizer checks at exit) */
    for (int i = 0; i < 50; i++)
        assert_int_equal(tc_compile(ctx, undefined, strlen(undefined), "u.tc", &p), TC_ERR_COMPILE);

    /* success clears the last error */
    p = compile_ok(ctx, ADD1, "ok.tc");
    assert_int_equal(tc_error_loc(ctx, &file, &line, &col), 0);
    assert_null(file);
    tc_program_free(p);

    /* bad arguments */
    assert_int_equal(tc_compile(ctx, NULL, 5, "x.tc", &p), TC_ERR_INVALID_ARG);
    assert_int_equal(tc_compile(ctx, ADD1, strlen(ADD1), "x.tc", NULL), TC_ERR_INVALID_ARG);
    assert_int_equal(tc_compile(NULL, ADD1, strlen(ADD1), "x.tc", &p), TC_ERR_INVALID_ARG);
    tc_ctx_free(ctx);
}

/* The source need not be NUL-terminated (ASan would catch a read past it),
 * and an empty program is fine. */
static void test_source_buffers(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    size_t n = strlen(ADD1);
    char *exact = malloc(n);
    memcpy(exact, ADD1, n);
    tc_program *p = NULL;
    assert_int_equal(tc_compile(ctx, exact, n, NULL, &p), TC_OK);
    free(exact);
    const char *ast;
    assert_int_equal(tc_program_dump(p, "ast", NULL, &ast), TC_OK);
    assert_non_null(strstr(ast, "add1"));
    tc_program_free(p);

    assert_int_equal(tc_compile(ctx, "", 0, "empty.tc", &p), TC_OK);
    assert_int_equal(tc_program_dump(p, "graph", NULL, &ast), TC_OK);
    assert_string_equal(ast, "");
    tc_program_free(p);
    tc_ctx_free(ctx);
}

static void test_limit(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    size_t n = (size_t)AST_MAX_SOURCE + 1;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, ' ', n);
    tc_program *p;
    assert_int_equal(tc_compile(ctx, big, n, "big.tc", &p), TC_ERR_LIMIT);
    assert_null(p);
    assert_non_null(strstr(tc_errmsg(ctx), "big.tc: error: "));
    assert_non_null(strstr(tc_errmsg(ctx), "at most 16 MiB"));
    free(big);
    tc_ctx_free(ctx);
}

static void test_compile_file(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p;
    assert_int_equal(tc_compile_file(ctx, "/nonexistent/x.tc", &p), TC_ERR_IO);
    assert_null(p);
    assert_string_equal(tc_errmsg(ctx),
                        "error: cannot read '/nonexistent/x.tc': No such file or directory\n");
    assert_int_equal(tc_compile_file(ctx, "/tmp", &p), TC_ERR_IO);
    assert_non_null(strstr(tc_errmsg(ctx), "cannot read '/tmp': Is a directory"));

    char path[] = "/tmp/tc_test_api_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, ADD1, strlen(ADD1)), (ssize_t)strlen(ADD1));
    close(fd);
    assert_int_equal(tc_compile_file(ctx, path, &p), TC_OK);
    const char *g;
    assert_int_equal(tc_program_dump(p, "graph", "add1", &g), TC_OK);
    assert_non_null(strstr(g, "add"));
    tc_program_free(p);
    unlink(path);
    tc_ctx_free(ctx);
}

/* Prelude functions are callable, and are entry points when named. */
static void test_prelude(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    static const char uses[] = "fn f(x: f32[N, D]) -> f32[N, D] {\n    return softmax(x)\n}\n";
    tc_program *p = compile_ok(ctx, uses, "uses.tc");
    const gfn *f = NULL;
    assert_int_equal(api_entry(p, "softmax", &f), TC_OK);
    assert_non_null(f);
    assert_string_equal(f->name, "softmax");
    const gfn *again = NULL;
    assert_int_equal(api_entry(p, "softmax", &again), TC_OK);
    assert_ptr_equal(f, again); /* built once */
    const char *g;
    assert_int_equal(tc_program_dump(p, "graph", "softmax", &g), TC_OK);
    assert_non_null(strstr(g, "exp"));
    assert_int_equal(tc_program_dump(p, "ast", "softmax", &g), TC_OK);
    assert_non_null(strstr(g, "softmax"));
    assert_int_equal(api_entry(p, NULL, &f), TC_OK);
    assert_string_equal(f->name, "f");
    assert_int_equal(api_entry(p, "nope", &f), TC_ERR_NOT_FOUND);
    assert_null(f);
    assert_non_null(strstr(tc_errmsg(ctx), "no function 'nope' here or in the prelude"));
    tc_program_free(p);

    p = compile_ok(ctx, TWO_FNS, "two.tc");
    assert_int_equal(api_entry(p, NULL, &f), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(ctx), "2 functions (a, b)"));
    tc_program_free(p);
    tc_ctx_free(ctx);
}

/* Bind sizes and run the reference interpreter through the internal API. */
static void test_bind_and_run(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = compile_ok(ctx, TWO_FNS, "two.tc");
    const gfn *f;
    assert_int_equal(api_entry(p, "b", &f), TC_OK);
    assert_int_equal(f->nparams, 2);
    assert_int_equal(f->noutputs, 1);
    assert_string_equal(f->outputs[0].name, "out");

    bind_arg args[2] = {{true, 1, {3}}, {true, 1, {3}}};
    tc_dimbind *b = NULL;
    int nb = 0;
    assert_int_equal(api_bind(p, f, args, NULL, 0, &b, &nb), TC_OK);
    assert_int_equal(nb, 1);
    assert_string_equal(b[0].name, "N");
    assert_int_equal(b[0].value, 3);

    ref_tensor in[2], out[1];
    int64_t shape[] = {3};
    assert_true(ref_alloc(&in[0], TC_F32, 1, shape));
    assert_true(ref_alloc(&in[1], TC_F32, 1, shape));
    for (int i = 0; i < 3; i++) {
        in[0].data[i] = i;
        in[1].data[i] = 0.5;
    }
    assert_int_equal(api_ref_run(p, f, b, nb, in, out), TC_OK);
    assert_int_equal(out[0].rank, 1);
    assert_int_equal(out[0].shape[0], 3);
    for (int i = 0; i < 3; i++)
        assert_true(out[0].data[i] == 2 * i + 0.5);
    ref_free(&out[0]);

    /* a size that disagrees names the parameter */
    args[1].shape[0] = 4;
    assert_int_not_equal(api_bind(p, f, args, NULL, 0, &b, &nb), TC_OK);
    assert_non_null(strstr(tc_errmsg(ctx), "'y'"));
    ref_free(&in[0]);
    ref_free(&in[1]);
    tc_program_free(p);
    tc_ctx_free(ctx);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = fread(s, 1, (1 << 20) - 1, f);
    s[n] = 0;
    fclose(f);
    return s;
}

static void test_dump_dir(void **state)
{
    char dir[] = "/tmp/tc_test_dump_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64];
    snprintf(sub, sizeof sub, "%s/a/b", dir); /* created as needed */
    setenv("TENSORC_DUMP_DIR", sub, 1);
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = compile_ok(ctx, TWO_FNS, "examples/two fns.tc");
    unsetenv("TENSORC_DUMP_DIR");
    const char *ast, *graph;
    assert_int_equal(tc_program_dump(p, "ast", NULL, &ast), TC_OK);
    assert_int_equal(tc_program_dump(p, "graph", NULL, &graph), TC_OK);
    char path[128];
    snprintf(path, sizeof path, "%s/two_fns.ast", sub);
    char *got = slurp(path);
    assert_non_null(got);
    assert_string_equal(got, ast);
    free(got);
    snprintf(path, sizeof path, "%s/two_fns.graph", sub);
    got = slurp(path);
    assert_non_null(got);
    assert_string_equal(got, graph);
    free(got);
    /* every text stage of stages.def, as tc_program_dump gives it: the whole
     * pipeline runs in tc_compile (before, only ast and graph were written) */
    int n = 0;
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (!(tc_stages[s].flags & SF_TEXT))
            continue;
        const char *text;
        assert_int_equal(tc_program_dump(p, tc_stages[s].name, NULL, &text), TC_OK);
        snprintf(path, sizeof path, "%s/two_fns.%s", sub, tc_stages[s].ext);
        got = slurp(path);
        if (!got)
            fail_msg("no dump %s", path);
        assert_string_equal(got, text);
        free(got);
        n++;
    }
    assert_int_equal(n, 9); /* ast graph lowered fused sched cuda plan explain dot */
    tc_program_free(p);
    tc_ctx_free(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* --- the driver: every stage in tc_compile ------------------------------------------- */

typedef struct {
    unsigned ran;           /* 1u << stage, for the stages traced */
    int fail_at;            /* a stage to fail with a located user error, or -1 */
} trace_log;

/* A trace hook that records the stages and, at fail_at, fails the compile
 * with a located error at the function's first output, as a lowering or
 * fusion error of a user's program would (every such error is caught by the
 * checker today, so the test makes one through the hook). */
static void record(void *user, tc_program *p, int stage, const gfn *const *fns, int n,
                   unsigned variant, double ms)
{
    (void)variant;
    trace_log *t = user;
    t->ran |= 1u << stage;
    assert_true(ms >= 0);
    if (stage == t->fail_at && n > 0)
        diag_error(&p->ctx->diag, TC_ERR_COMPILE, fns[0]->outputs[0].node->loc,
                   "%s failed here (a test hook)", tc_stages[stage].name);
}

static void test_compile_runs_every_stage(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    trace_log t = {0, -1};
    tc_drv_set_trace(ctx, record, &t);
    tc_program *p = compile_ok(ctx, TWO_FNS, "two.tc");
    for (int s = 0; s < STAGE_COUNT; s++)
        if (!(tc_stages[s].flags & (SF_RUN | SF_BINARY)))
            if (!(t.ran >> s & 1u))
                fail_msg("stage %s did not run in tc_compile", tc_stages[s].name);
    /* the file's unit is kept: asking for it again runs nothing */
    t.ran = 0;
    const char *cuda;
    assert_int_equal(tc_program_dump(p, "cuda", NULL, &cuda), TC_OK);
    assert_int_equal(t.ran, 0);
    /* 64-bit indices: the functions are scheduled again, not lowered or fused */
    const gfn *b;
    const struct cg_unit *u;
    const tc_plan *plan;
    assert_int_equal(api_entry(p, "b", &b), TC_OK);
    assert_int_equal(api_unit(p, b, true, &u, &plan), TC_OK);
    assert_true(plan->idx64);
    assert_int_equal(t.ran, 1u << STAGE_SCHED | 1u << STAGE_CUDA | 1u << STAGE_PLAN);
    tc_program_free(p);

    /* a stage's error comes from tc_compile, located */
    static const int stages[] = {STAGE_LOWERED, STAGE_FUSED, STAGE_SCHED, STAGE_CUDA, STAGE_PLAN};
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
        t = (trace_log){0, stages[i]};
        p = (tc_program *)1;
        assert_int_equal(tc_compile(ctx, ADD1, strlen(ADD1), "add1.tc", &p), TC_ERR_COMPILE);
        assert_null(p);
        char want[128];
        snprintf(want, sizeof want, "add1.tc:3:14: error: %s failed here (a test hook)",
                 tc_stages[stages[i]].name);
        if (strncmp(tc_errmsg(ctx), want, strlen(want)) != 0)
            fail_msg("got '%s', want '%s'", tc_errmsg(ctx), want);
        const char *file;
        int line, col;
        assert_int_equal(tc_error_loc(ctx, &file, &line, &col), 1);
        assert_string_equal(file, "add1.tc");
        assert_int_equal(line, 3);
        assert_int_equal(col, 14);
    }
    tc_ctx_free(ctx);
}

/* TENSORC_DEBUG: levels and stage names (stages.def), one warning for junk. */
static void test_debug_env(void **state)
{
    setenv("TENSORC_DEBUG", "sched,cuda", 1);
    tc_debug g = tc_debug_get();
    assert_true(g.timing);
    assert_int_equal(g.print, 1u << STAGE_SCHED | 1u << STAGE_CUDA);
    setenv("TENSORC_DEBUG", "5", 1);
    g = tc_debug_get();
    assert_true(g.timing);
    assert_int_equal(g.print, 1u << STAGE_AST | 1u << STAGE_GRAPH);
    setenv("TENSORC_DEBUG", "0", 1);
    g = tc_debug_get();
    assert_false(g.timing);
    setenv("TENSORC_DEBUG", "sched,nope", 1);
    g = tc_debug_get();
    assert_false(g.timing);
    assert_int_equal(g.print, 0);
    setenv("TENSORC_DEBUG", "ptx", 1); /* not a text stage */
    assert_int_equal(tc_debug_get().print, 0);
    unsetenv("TENSORC_DEBUG");
}

/* The verifiers of sched and of the plan catch a broken result. */
static void break_sched(void *arg)
{
    tc_program *p = arg;
    sfn *s = p->fncs->s[0];
    s->k[0].block[0] = 2048; /* past CUDA's 1024 threads (the verifier unwinds: the test restores) */
    sched_verify(s, p->arena, &p->ctx->diag);
}

static void break_plan(void *arg)
{
    tc_program *p = arg;
    const tc_plan *plan = p->units->u->plans[0];
    pbuf *b = &plan->bufs[plan->nbufs - 1];
    b->kind = PBUF_TEMP; /* an output turned temporary: no slot, no life */
    b->first = 5;
    b->last = 1;
    plan_check(plan, p->units->u, p->graph->fns[0], p->arena, &p->ctx->diag);
}

/* The kernel's signature (codegen's record) says its output parameter is
 * only read: then no step writes the output. */
static void break_signature(void *arg)
{
    tc_program *p = arg;
    const tc_plan *plan = p->units->u->plans[0];
    pparam *pp = NULL;
    for (int i = 0; i < plan->kernels[0].nparams; i++)
        if (plan->kernels[0].params[i].written)
            pp = &plan->kernels[0].params[i];
    assert_non_null(pp);
    pp->written = false;
    plan_check(plan, p->units->u, p->graph->fns[0], p->arena, &p->ctx->diag);
}

static void test_verifiers(void **state)
{
    tc_ctx *ctx;
    assert_int_equal(tc_ctx_create(&ctx), TC_OK);
    tc_program *p = compile_ok(ctx, ADD1, "add1.tc");
    /* each break unwinds from inside the verifier: restored here */
    ksched k0 = p->fncs->s[0]->k[0];
    assert_int_equal(diag_protect(&ctx->diag, break_sched, p), TC_ERR_INTERNAL);
    p->fncs->s[0]->k[0] = k0;
    assert_non_null(strstr(tc_errmsg(ctx), "sched: kernel 0"));
    assert_non_null(strstr(tc_errmsg(ctx), "block"));
    diag_clear(&ctx->diag);
    const tc_plan *plan = p->units->u->plans[0];
    pbuf b0 = plan->bufs[plan->nbufs - 1];
    assert_int_equal(diag_protect(&ctx->diag, break_plan, p), TC_ERR_INTERNAL);
    plan->bufs[plan->nbufs - 1] = b0;
    assert_non_null(strstr(tc_errmsg(ctx), "plan of add1"));
    diag_clear(&ctx->diag);
    assert_int_equal(diag_protect(&ctx->diag, break_signature, p), TC_ERR_INTERNAL);
    if (!strstr(tc_errmsg(ctx), "an output no step writes"))
        fail_msg("%s", tc_errmsg(ctx));
    tc_program_free(p);
    tc_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_status_str),
        cmocka_unit_test(test_ctx),
        cmocka_unit_test(test_compile_and_dump),
        cmocka_unit_test(test_unsupported_stages),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_source_buffers),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_compile_file),
        cmocka_unit_test(test_prelude),
        cmocka_unit_test(test_bind_and_run),
        cmocka_unit_test(test_dump_dir),
        cmocka_unit_test(test_compile_runs_every_stage),
        cmocka_unit_test(test_debug_env),
        cmocka_unit_test(test_verifiers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
