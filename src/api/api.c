/* api.c - the public API (tensorc.h): contexts, errors, compiling, entry
 * functions.
 *
 * tc_compile() runs the whole compiler (src/driver/compile.c: parse, graph, lower,
 * fuse, schedule, codegen, each verified) inside diag_protect(), a protected
 * call that catches the unwind of diag_error and returns the status (Lua's
 * luaD_rawrunprotected).  Everything a compilation makes lives in the
 * program's arena, so an error anywhere frees it all at once and nothing
 * leaks.  The error text itself lives in the context, which outlives the
 * program.  Entry functions other than the file's own (prelude functions,
 * dtype specializations) are built here on first use and kept.  The dumps
 * and the internal entry points for the CLI are in api_dump.c, tc_run in
 * api_run.c.
 */
#include "api_internal.h"
#include "api_run_memo.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "compile.h"
#include "rt.h"

unsigned tc_version_number(void) { return TC_VERSION_NUMBER; }
const char *tc_version_string(void) { return TC_VERSION_STRING; }

const char *tc_status_str(tc_status s)
{
    static const char *const names[TC_STATUS_COUNT] = {
        [TC_OK] = "TC_OK",
        [TC_ERR_SYNTAX] = "TC_ERR_SYNTAX",
        [TC_ERR_COMPILE] = "TC_ERR_COMPILE",
        [TC_ERR_LIMIT] = "TC_ERR_LIMIT",
        [TC_ERR_INVALID_ARG] = "TC_ERR_INVALID_ARG",
        [TC_ERR_NOT_FOUND] = "TC_ERR_NOT_FOUND",
        [TC_ERR_UNSUPPORTED] = "TC_ERR_UNSUPPORTED",
        [TC_ERR_IO] = "TC_ERR_IO",
        [TC_ERR_NOMEM] = "TC_ERR_NOMEM",
        [TC_ERR_NO_DEVICE] = "TC_ERR_NO_DEVICE",
        [TC_ERR_INTERNAL] = "TC_ERR_INTERNAL",
    };
    return ((unsigned)s < TC_STATUS_COUNT) ? names[s] : "TC_ERR_UNKNOWN_STATUS";
}

/* --- contexts and errors ---------------------------------------------------- */

tc_status tc_ctx_create(tc_ctx **ctx)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    *ctx = calloc(1, sizeof **ctx);
    if (!*ctx)
        return TC_ERR_NOMEM;
    diag_init(&(*ctx)->diag);
    knobs_from_env(&(*ctx)->knobs); /* once: every compilation and launch of the context */
    return TC_OK;
}

void tc_ctx_free(tc_ctx *ctx)
{
    if (!ctx)
        return;
    rt_free(ctx->rt);   /* the GPU side, if a tc_run opened it */
    diag_release(&ctx->diag);
    free(ctx->err_file);
    free(ctx);
}

void api_begin(tc_ctx *ctx)
{
    diag_clear(&ctx->diag);
    ctx->diag.ncalls = 0;
    free(ctx->err_file);
    ctx->err_file = NULL;
    ctx->err_line = ctx->err_col = 0;
}

tc_status api_fail(tc_ctx *ctx, tc_status st)
{
    tc_diag *d = &ctx->diag;
    if (!d->msg) /* a failure with no message would leave the user guessing */
        diag_set(d, st, (tc_loc){0}, "%s", tc_status_str(st));
    d->status = st;
    free(ctx->err_file);
    ctx->err_file = NULL;
    if (d->loc.src && d->loc.src->name)
        ctx->err_file = strdup(d->loc.src->name);
    ctx->err_line = d->loc.src ? d->loc.line : 0;
    ctx->err_col = d->loc.src ? d->loc.col : 0;
    d->loc.src = NULL; /* it may point into an arena about to be freed */
    d->ncalls = 0;
    return st;
}

const char *tc_errmsg(const tc_ctx *ctx)
{
    return (ctx && ctx->diag.msg) ? ctx->diag.msg : "";
}

int tc_error_loc(const tc_ctx *ctx, const char **file, int *line, int *col)
{
    bool have = ctx && ctx->err_file;
    if (file)
        *file = have ? ctx->err_file : NULL;
    if (line)
        *line = have ? ctx->err_line : 0;
    if (col)
        *col = have ? ctx->err_col : 0;
    return have && ctx->err_line > 0;
}


/* --- compiling ------------------------------------------------------------------ */

typedef struct {
    tc_program *p;
    const char *text;
    size_t len;
    const char *filename;
} compile_job;

static void compile_body(void *arg)
{
    compile_job *j = arg;
    tc_program *p = j->p;
    tc_source *s = ARENA_NEW(p->arena, tc_source);
    s->name = arena_strdup(p->arena, j->filename);
    s->text = arena_strndup(p->arena, j->text, j->len);
    s->len = j->len;
    p->src = s;
    tc_drv_program(p); /* compile.c: parse through codegen */
}

tc_status tc_compile(tc_ctx *ctx, const char *src, size_t len, const char *filename,
                     tc_program **prog)
{
    if (prog)
        *prog = NULL;
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!prog || (!src && len))
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_compile: %s is NULL", prog ? "src" : "prog"));
    if (!filename)
        filename = "<string>";
    if (len > AST_MAX_SOURCE) {
        tc_source whole = {filename, NULL, 0};
        return api_fail(ctx, diag_set(d, TC_ERR_LIMIT, (tc_loc){&whole, 0, 0},
                                      "the program is %zu bytes; tensorc accepts at most %d MiB",
                                      len, AST_MAX_SOURCE >> 20));
    }

    tc_program *p = calloc(1, sizeof *p);
    if (p)
        p->arena = arena_new(d);
    if (!p || !p->arena) {
        free(p);
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    }
    p->ctx = ctx;
    compile_job job = {p, src ? src : "", len, filename};
    tc_status st = diag_protect(d, compile_body, &job);
    if (st != TC_OK) {
        api_fail(ctx, st);
        tc_program_free(p);
        return st;
    }
    *prog = p;
    return TC_OK;
}

tc_status tc_compile_file(tc_ctx *ctx, const char *path, tc_program **prog)
{
    if (prog)
        *prog = NULL;
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!path || !prog)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_compile_file: %s is NULL", path ? "prog" : "path"));
    FILE *f = fopen(path, "rb");
    if (!f)
        return api_fail(ctx, diag_set(d, TC_ERR_IO, (tc_loc){0}, "cannot read '%s': %s", path,
                                      strerror(errno)));
    /* Read at most one byte past the limit: enough to know it is too big. */
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    int err = 0;
    while (text) {
        if (len == cap) {
            if (cap > AST_MAX_SOURCE)
                break;
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (!text)
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory reading '%s'", path));
    if (err) {
        free(text);
        return api_fail(ctx, diag_set(d, TC_ERR_IO, (tc_loc){0}, "cannot read '%s': %s", path,
                                      strerror(err)));
    }
    tc_status st = tc_compile(ctx, text, len, path, prog);
    free(text);
    return st;
}

void tc_program_free(tc_program *prog)
{
    if (!prog)
        return;
    arena_free(prog->arena);
    api_memo_free(prog);
    arena_free(prog->run_scratch);
    free(prog);
}

/* --- entry functions -------------------------------------------------------------- */

const ast_fn *api_find_ast_fn(const ast_program *prog, const char *name)
{
    for (int i = 0; i < prog->nfns; i++)
        if (strcmp(prog->fns[i].name, name) == 0)
            return &prog->fns[i];
    return NULL;
}

const ast_fn *api_params_fn(const tc_program *p, const ast_fn *af)
{
    for (int depth = 0; af && af->derive && depth < 16; depth++) {
        const char *t = ast_derive_target(af);
        const ast_fn *n = t ? api_find_ast_fn(p->ast, t) : NULL;
        for (int i = 0; i < p->nprelude && t && !n; i++)
            n = api_find_ast_fn(p->prelude[i], t);
        if (!n)
            break;
        af = n;
    }
    return af;
}

/* "a, b, c": the user's functions, for messages. */
const char *api_fn_list(tc_program *p)
{
    tc_buf b;
    buf_init(&b, p->arena);
    for (int i = 0; i < p->ast->nfns; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", p->ast->fns[i].name);
    return buf_str(&b);
}


/* Whether specialization e is fn with bindings dts (in any order). */
static bool same_bindings(const tc_extra_graph *e, const char *fn, const tc_dtypebind *dts, int n)
{
    if (!e->fn || e->ndts != n || strcmp(e->fn, fn) != 0)
        return false;
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (int k = 0; k < n && !found; k++)
            found = dts[i].name && e->dts[k].name && strcmp(dts[i].name, e->dts[k].name) == 0 &&
                    dts[i].dtype == e->dts[k].dtype;
        if (!found)
            return false;
    }
    return true;
}

/* Builds are kept: plain ones (p->graph, then p->extra by name) and
 * specializations with dtype bindings (p->extra, by name and bindings), so a
 * tc_run that binds T = bf16 on every call builds once. */
void api_entry_body(void *arg)
{
    entry_job *j = arg;
    tc_program *p = j->p;
    tc_diag *d = &p->ctx->diag;
    if (!j->ndts) {
        if ((j->out = graph_find(p->graph, j->fn)))
            return;
        for (tc_extra_graph *e = p->extra; e; e = e->next)
            if (!e->ndts && (j->out = graph_find(e->graph, j->fn)))
                return;
    } else if (j->ndts <= 26) {
        for (tc_extra_graph *e = p->extra; e; e = e->next)
            if (same_bindings(e, j->fn, j->dts, j->ndts) && (j->out = graph_find(e->graph, j->fn)))
                return;
    }
    bool known = api_find_ast_fn(p->ast, j->fn) != NULL;
    for (int i = 0; i < p->nprelude && !known; i++)
        known = api_find_ast_fn(p->prelude[i], j->fn) != NULL;
    if (!known) {
        tc_loc whole = {p->src, 0, 0}; /* the file, no line */
        if (p->ast->nfns == 0)
            diag_error(d, TC_ERR_NOT_FOUND, whole,
                       "no function '%s' here or in the prelude (the file defines no functions)",
                       j->fn);
        diag_error(d, TC_ERR_NOT_FOUND, whole,
                   "no function '%s' here or in the prelude (functions: %s)", j->fn, api_fn_list(p));
    }
    tc_extra_graph *e = ARENA_NEW(p->arena, tc_extra_graph);
    e->graph = graph_build_ex(p->ast, p->prelude, p->nprelude, j->fn, j->dts, j->ndts, p->arena, d);
    for (int i = 0; i < e->graph->nfns; i++)
        graph_verify(e->graph->fns[i], d);
    if (j->ndts <= 26) {
        e->fn = arena_strdup(p->arena, j->fn);
        for (int i = 0; i < j->ndts; i++)
            e->dts[i] = (tc_dtypebind){arena_strdup(p->arena, j->dts[i].name), j->dts[i].dtype};
        e->ndts = j->ndts;
        e->next = p->extra;
        p->extra = e;
    }
    j->out = graph_find(e->graph, j->fn);
    if (!j->out)
        diag_error(d, TC_ERR_INTERNAL, (tc_loc){0}, "graph_build did not build '%s'", j->fn);
}

/* A whole-file stage compiles every function as an entry point: a generic
 * one that did not build as one (tc_graph.unbuilt) is built again here for
 * its located error. */
void api_report_unbuilt(tc_program *p)
{
    if (p->graph->nunbuilt == 0)
        return;
    entry_job e = {p, p->graph->unbuilt[0], NULL, 0, NULL};
    api_entry_body(&e);
    diag_error(&p->ctx->diag, TC_ERR_INTERNAL, (tc_loc){0},
               "'%s' did not build as an entry point with the whole file, but did alone",
               p->graph->unbuilt[0]);
}

tc_status api_entry_args(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                         const gfn **out)
{
    const ast_fn *af = fn ? api_find_ast_fn(p->ast, fn) : NULL;
    for (int i = 0; i < p->nprelude && fn && !af; i++)
        af = api_find_ast_fn(p->prelude[i], fn);
    af = api_params_fn(p, af);
    tc_dtypebind dts[26];
    int n = 0;
    for (int i = 0; af && i < af->nparams; i++) {
        const char *v = af->params[i].type.dtype_var;
        if (!v || !af->params[i].type.is_tensor)
            continue;
        bool bound = false;
        for (int k = 0; k < n && !bound; k++)
            bound = strcmp(dts[k].name, v) == 0;
        /* a tc_arg_dtype binding first (api_call_entry has checked it) */
        for (size_t k = 0; k < nargs && !bound && args && n < 26; k++)
            if (args[k].kind == TC_ARG_DTYPE && args[k].name && strcmp(args[k].name, v) == 0) {
                dts[n++] = (tc_dtypebind){v, dtype_parse(args[k].v.dtype)};
                bound = true;
            }
        for (size_t k = 0; k < nargs && !bound && args; k++) {
            const tc_arg *a = &args[k];
            if (!a->name || strcmp(a->name, af->params[i].name) != 0)
                continue;
            const DLTensor *t = a->kind == TC_ARG_TENSOR ? a->v.tensor
                                : a->kind == TC_ARG_TENSORS && a->v.tensors ? a->v.tensors[0]
                                                                             : NULL;
            tc_dtype dt = t ? api_from_dl(t->dtype) : TC_DT_NONE;
            /* a dtype tensorc has no name for is left to the argument checks */
            if (dt != TC_DT_NONE && n < 26) {
                dts[n++] = (tc_dtypebind){v, dt};
                bound = true;
            }
        }
    }
    /* all f32: the plain build (the one whole-file runs share) */
    bool plain = true;
    for (int k = 0; k < n; k++)
        plain = plain && dts[k].dtype == TC_F32;
    return api_entry_ex(p, fn, dts, plain ? 0 : n, out);
}

tc_status api_entry(tc_program *p, const char *fn, const gfn **out)
{
    return api_entry_ex(p, fn, NULL, 0, out);
}

tc_status api_entry_ex(tc_program *p, const char *fn, const tc_dtypebind *dts, int ndts,
                       const gfn **out)
{
    *out = NULL;
    api_begin(p->ctx);
    tc_diag *d = &p->ctx->diag;
    tc_loc whole = {p->src, 0, 0};
    if (!fn && p->ast->nfns == 0)
        return api_fail(p->ctx, diag_set(d, TC_ERR_NOT_FOUND, whole, "the file defines no functions"));
    if (!fn && p->ast->nfns > 1)
        return api_fail(p->ctx, diag_set(d, TC_ERR_INVALID_ARG, whole,
                                         "the file defines %d functions (%s): choose one",
                                         p->ast->nfns, api_fn_list(p)));
    entry_job j = {p, fn ? fn : p->ast->fns[0].name, dts, ndts, NULL};
    tc_status st = diag_protect(d, api_entry_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *out = j.out;
    return TC_OK;
}

